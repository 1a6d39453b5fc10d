/*
 * The runtime of CREATE PERFETTO FUNCTION: a scalar function (SQLite
 * function) or a table function (an eponymous virtual table whose hidden
 * columns are the arguments) whose body is a SELECT reading its arguments
 * as `$name` parameters.
 *
 * A body is prepared on first call and the statement kept for the next
 * one; a call made while that statement is busy (recursion, or a table
 * function used twice in one query) prepares another. Objects live in
 * `registry` (owned by the PerfettoSQL engine, freed after the connection
 * closes).
 */
#ifndef TM_PERFETTO_SQL_FUNCTION_H
#define TM_PERFETTO_SQL_FUNCTION_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct sqlite3 sqlite3;

typedef struct psql_column {
  char *name;
  char *type; /* as written: INT, LONG, STRING, JOINID(slice.id), ... */
} psql_column;

/* A registry of the functions made on one connection. */
GHashTable *perfetto_sql_function_registry_new(void);

/* Creates (or with `replace`, redefines) function `name`. Scalar if
 * `columns` is NULL, else a table function returning those columns.
 * Everything is copied. */
bool perfetto_sql_function_create(sqlite3 *db, GHashTable *registry,
                                  const char *name, const psql_column *args,
                                  size_t n_args, const char *return_type,
                                  const psql_column *columns,
                                  size_t n_columns, const char *body,
                                  bool replace, GError **error);

/* True if `type` names a PerfettoSQL column or argument type. */
bool perfetto_sql_type_is_known(const char *type);

#endif /* TM_PERFETTO_SQL_FUNCTION_H */
