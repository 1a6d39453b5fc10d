/*
 * The SQL surface: an SQLite database whose tables are virtual tables over
 * the model's rows (no copy), plus the views trace_processor users expect
 * (docs/sql-surface.md).
 *
 * Invariants: the model is borrowed and must not change while the surface
 * exists (build the surface after model_finalize()); every public name of
 * docs/sql-surface.md that the model can fill exists, empty or not.
 */
#ifndef TM_SQL_SURFACE_H
#define TM_SQL_SURFACE_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#include <tracemerge/tracemerge.h>

#include "model/model.h"
#include "sql/sql_connection.h"

typedef struct sqlite3 sqlite3;
typedef struct tm_sql_surface tm_sql_surface;

/* Output formats are tm_format of <tracemerge/tracemerge.h>: CSV as
 * trace_processor prints it (quoted header and strings, bare numbers, NULL
 * as [NULL]), TSV, and JSON (one array of objects). */

/* The surface's connection is opened by sql_connection_open() with
 * `options` (may be NULL) and sealed once the model's tables and views
 * exist. */
tm_sql_surface *sql_surface_new(const tm_model *model,
                                const sql_connection_options *options,
                                GError **error);
void sql_surface_free(tm_sql_surface *surface);

/* Borrowed: valid until sql_surface_free(). */
sqlite3 *sql_surface_borrow_db(tm_sql_surface *surface);

/* Stops each later sql_surface_query() once it has run `seconds` (0: no
 * limit). */
void sql_surface_set_timeout(tm_sql_surface *surface, double seconds);

/* Stops the running query: async-signal-safe (sql_connection_interrupt). */
void sql_surface_interrupt(tm_sql_surface *surface);

/* Runs every statement of `sql` in order and writes the last one's result
 * rows to `out` in `format`, as a script (tm_session_query says what
 * that means). A statement stopped by the timeout or an interrupt fails
 * with TM_SQL_ERROR_INTERRUPTED. */
bool sql_surface_query(tm_sql_surface *surface, const char *sql,
                       tm_format format, FILE *out, GError **error);

/* sql_surface_query with every option of tm_query_options; `*rows` (may
 * be NULL) gets the number of rows printed. */
bool sql_surface_run(tm_sql_surface *surface, const char *sql,
                     const tm_query_options *options, FILE *out,
                     uint64_t *rows, GError **error);

/* Adds the PerfettoSQL modules under `dir` as package `package` (NULL:
 * the directory's base name), for INCLUDE PERFETTO MODULE. */
bool sql_surface_add_sql_package(tm_sql_surface *surface, const char *dir,
                                 const char *package, GError **error);

/* Writes the model into a new SQLite file at `path`, so `sqlite3 path`
 * works without us: each model table as a table (id INTEGER PRIMARY KEY,
 * indexes for the common joins), each public view as the same view. The
 * file is written beside `path` under a temporary name and renamed to
 * `path` only once complete; an existing `path` is replaced only when
 * `replace` (else the save fails and leaves it). "", ":memory:" and
 * "file:" URIs are refused. On failure nothing is left behind. */
bool sql_surface_save(tm_sql_surface *surface, const char *path,
                      bool replace, GError **error);

/* What sql_surface_save() would refuse about `path` alone (its name, or
 * its existence without `replace`), checked before any work. */
bool sql_surface_check_save_path(const char *path, bool replace,
                                 GError **error);

#endif /* TM_SQL_SURFACE_H */
