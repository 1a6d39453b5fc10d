/*
 * The standard library's modules, compiled in from core/sql/stdlib/ by
 * core/sql/embed_stdlib.py: module `a.b.c` is the file stdlib/a/b/c.sql.
 * The SQL is this project's own, written from the public documentation of
 * trace_processor's standard library (same module, table, column and
 * function names).
 */
#ifndef TM_SQL_STDLIB_H
#define TM_SQL_STDLIB_H

#include <stddef.h>

typedef struct tm_stdlib_module {
  const char *name;
  const char *sql;
} tm_stdlib_module;

extern const tm_stdlib_module tm_stdlib_modules[];
extern const size_t tm_stdlib_module_count;

#endif /* TM_SQL_STDLIB_H */
