/*
 * The fixture of the SQL surface tests (test_sql_surface_output.c,
 * test_sql_surface_tables.c, test_sql_surface_save.c): a hand-built model
 * (three machines, tracks of every kind, slices, counters, args, flows)
 * under a surface, and helpers that run a query and return or compare what
 * it printed.
 */
#ifndef TM_TEST_SQL_SURFACE_FIXTURE_H
#define TM_TEST_SQL_SURFACE_FIXTURE_H

#include <glib.h>

#include "model/model.h"
#include "sql/sql_output.h"
#include "sql/sql_surface.h"

typedef struct fixture {
  tm_model *model;
  tm_sql_surface *surface;
} fixture;

void fixture_set_up(fixture *f, gconstpointer data);
void fixture_tear_down(fixture *f, gconstpointer data);

/* Runs `sql` and returns what it printed (free()); the query must succeed. */
char *query(fixture *f, const char *sql, tm_format format);
/* Runs `sql` and asserts that it printed `expected`. */
void assert_query(fixture *f, const char *sql, tm_format format,
                  const char *expected);
/* Runs `sql`, which must fail; returns the error (and what it printed, in
 * `*printed` unless NULL, free()). */
GError *query_error(fixture *f, const char *sql, char **printed);

#define ADD(path, fn)                                                       \
  g_test_add(path, fixture, NULL, fixture_set_up, fn, fixture_tear_down)

#endif /* TM_TEST_SQL_SURFACE_FIXTURE_H */
