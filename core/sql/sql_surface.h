/*
 * The SQL surface: an SQLite database whose tables are virtual tables over
 * the model's rows (no copy), plus the views trace_processor users expect
 * (reference/sql-surface.md).
 *
 * Invariants: the model is borrowed and must not change while the surface
 * exists (build the surface after model_finalize()); every public name of
 * sql-surface.md that the model can fill exists, empty or not.
 */
#ifndef TM_SQL_SURFACE_H
#define TM_SQL_SURFACE_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#include <tracemerge/tracemerge.h>

#include "model/model.h"

typedef struct sqlite3 sqlite3;
typedef struct tm_sql_surface tm_sql_surface;

/* Output formats are tm_format of <tracemerge/tracemerge.h>: CSV as
 * trace_processor prints it (quoted header and strings, bare numbers, NULL
 * as [NULL]), TSV, and JSON (one array of objects). */

tm_sql_surface *sql_surface_new(const tm_model *model, GError **error);
void sql_surface_free(tm_sql_surface *surface);

/* Borrowed: valid until sql_surface_free(). */
sqlite3 *sql_surface_borrow_db(tm_sql_surface *surface);

/* Runs every statement of `sql` in order and writes the last one's result
 * rows to `out` in `format`. */
bool sql_surface_query(tm_sql_surface *surface, const char *sql,
                       tm_format format, FILE *out, GError **error);

/* Adds the PerfettoSQL modules under `dir` as package `package` (NULL:
 * the directory's base name), for INCLUDE PERFETTO MODULE. */
bool sql_surface_add_sql_package(tm_sql_surface *surface, const char *dir,
                                 const char *package, GError **error);

/* Writes every public table and view as a real table into a new SQLite file
 * at `path` (replaced if it exists), so `sqlite3 path` works without us. */
bool sql_surface_save(tm_sql_surface *surface, const char *path,
                      GError **error);

#endif /* TM_SQL_SURFACE_H */
