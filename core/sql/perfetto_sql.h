/*
 * PerfettoSQL on an SQLite connection: a preprocessor that runs, between
 * plain SQLite statements, the statements Perfetto adds (docs: "PerfettoSQL
 * syntax"):
 *
 *   INCLUDE PERFETTO MODULE a.b.c;            (also a.* and *)
 *   CREATE [OR REPLACE] PERFETTO TABLE name[(col TYPE, ...)] AS SELECT ...;
 *   CREATE [OR REPLACE] PERFETTO VIEW name[(col TYPE, ...)] AS SELECT ...;
 *   CREATE [OR REPLACE] PERFETTO FUNCTION f(a TYPE, ...) RETURNS TYPE AS SELECT ...;
 *   CREATE [OR REPLACE] PERFETTO FUNCTION f(...) RETURNS TABLE(col TYPE, ...) AS SELECT ...;
 *   CREATE [OR REPLACE] PERFETTO MACRO m(a Expr, ...) RETURNS Expr AS ...;
 *   CREATE PERFETTO INDEX name ON table(col, ...);
 *
 * and expands macro invocations `m!(...)` in every other statement before
 * SQLite sees it. Function bodies read their arguments as `$name`.
 *
 * Modules are SQL texts by dotted name: the standard library compiled into
 * the library (core/sql/stdlib/, see sql_stdlib.h) and packages added from
 * directories. The module `prelude` is included when the engine is made.
 *
 * Errors name the source ("query" or the module's name), the line and
 * the column: "query:3:8: no such column: foo".
 *
 * Ownership: the engine borrows `db`, which must outlive it; functions and
 * table functions it registers keep a pointer to the engine, so free the
 * engine only after closing the connection (perfetto_sql_free says so by
 * taking both in order: close, then free).
 */
#ifndef TM_PERFETTO_SQL_H
#define TM_PERFETTO_SQL_H

#include <glib.h>
#include <stdbool.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef struct tm_perfetto_sql tm_perfetto_sql;

/* Makes an engine on `db` with the standard library's modules and runs the
 * prelude. */
tm_perfetto_sql *perfetto_sql_new(sqlite3 *db, GError **error);
void perfetto_sql_free(tm_perfetto_sql *engine);

/* Adds every `*.sql` under `dir` as module `<package>.<path with / as .,
 * without .sql>`; `package` NULL means the directory's base name. A
 * package of the same name (the standard library's too) is replaced. */
bool perfetto_sql_add_package(tm_perfetto_sql *engine, const char *dir,
                              const char *package, GError **error);

/* A script being run: statements are taken one at a time. */
typedef struct perfetto_sql_script {
  const char *text;   /* borrowed, NUL-terminated */
  const char *pos;    /* start of what is not run yet */
  const char *source; /* borrowed: "query" or a module name */
  /* PerfettoSQL statements perfetto_sql_next() has run so far (a script's
   * statement count, as trace_processor_shell counts them, is these plus
   * the plain statements returned). */
  unsigned perfetto_statements;
} perfetto_sql_script;

void perfetto_sql_script_init(perfetto_sql_script *script, const char *text,
                              const char *source);

/* Runs the PerfettoSQL statements before the next plain statement, then
 * prepares that one (macros expanded) into `*stmt`, which the caller steps
 * and finalizes. `*stmt` NULL: the script is done. */
bool perfetto_sql_next(tm_perfetto_sql *engine, perfetto_sql_script *script,
                       sqlite3_stmt **stmt, GError **error);

/* True if only whitespace, comments and ';' are left. */
bool perfetto_sql_script_at_end(const perfetto_sql_script *script);

/* Runs every statement of `text`, discarding rows. */
bool perfetto_sql_exec(tm_perfetto_sql *engine, const char *text,
                       const char *source, GError **error);

#endif /* TM_PERFETTO_SQL_H */
