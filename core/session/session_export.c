/*
 * tm_session_export: the filters of an export resolved against the
 * imported session (machine names, the time window, the slices an SQL
 * query selects), then the exporter of the chosen format writing to a
 * FILE as it reads the model (core/export).
 */
#include <errno.h>
#include <sqlite3.h>
#include <string.h>

#include "export/export_selection.h"
#include "export/json_export.h"
#include "export/pack.h"
#include "export/perfetto_export.h"
#include "input/container.h"
#include "session/session_error.h"
#include "session/session_internal.h"

bool tm_parse_time_range(const char *text, int64_t *start_ns, int64_t *end_ns,
                         GError **error) {
  return session_error_publish(export_selection_parse_time(text, start_ns, end_ns, error),
                               error);
}

bool tm_parse_duration(const char *what, const char *text, int64_t *ns, GError **error) {
  return session_error_publish(export_parse_duration(what, text, ns, error), error);
}

/* The slice ids `sql` returns: one statement, one integer column. */
static bool select_slices(tm_session *session, const char *sql, GArray *ids,
                          GError **error) {
  if (!session_ensure_sql(session, error))
    return false;
  sqlite3 *db = sql_surface_borrow_db(session->sql);
  sqlite3_stmt *stmt = NULL;
  const char *tail = NULL;
  bool ok = false;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, &tail);
  if (rc != SQLITE_OK || !stmt) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_QUERY, "--sql: %s",
                stmt || rc != SQLITE_OK ? sqlite3_errmsg(db) : "no statement");
    goto out;
  }
  while (tail && g_ascii_isspace(*tail))
    tail++;
  if (tail && *tail && strcmp(tail, ";") != 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_QUERY,
                "--sql: give one SELECT statement returning slice ids");
    goto out;
  }
  if (sqlite3_column_count(stmt) != 1) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_QUERY,
                "--sql: the query must return one column of slice ids (it returns %d)",
                sqlite3_column_count(stmt));
    goto out;
  }
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    if (sqlite3_column_type(stmt, 0) != SQLITE_INTEGER) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_QUERY,
                  "--sql: a row's value is not an integer slice id");
      goto out;
    }
    int64_t id = sqlite3_column_int64(stmt, 0);
    g_array_append_val(ids, id);
  }
  if (rc != SQLITE_DONE) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_QUERY, "--sql: %s", sqlite3_errmsg(db));
    goto out;
  }
  ok = true;
out:
  sqlite3_finalize(stmt);
  return ok;
}

static bool write_file(void *user, const void *data, size_t len) {
  return fwrite(data, 1, len, (FILE *)user) == len;
}

static bool session_export(tm_session *session, const tm_export_options *options,
                           FILE *out, GError **error) {
  tm_model *model = session->import.model;
  export_selection sel;
  export_selection_init(&sel, model);
  bool ok = false;
  GArray *ids = NULL;
  if (options->machines && options->n_machines &&
      !export_selection_set_machines(&sel, options->machines, options->n_machines, error))
    goto out;
  if (options->has_time_range) {
    if (options->start_ns > options->end_ns) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "the time range ends before it starts");
      goto out;
    }
    sel.start = options->start_ns;
    sel.end = options->end_ns;
  }
  if (options->slice_sql) {
    ids = g_array_new(FALSE, FALSE, sizeof(int64_t));
    if (!select_slices(session, options->slice_sql, ids, error) ||
        !export_selection_set_slices(&sel, (const int64_t *)ids->data, ids->len, error))
      goto out;
  }
  switch (options->format) {
  case TM_EXPORT_PERFETTO:
    ok = perfetto_export(model, &sel, write_file, out, error);
    break;
  case TM_EXPORT_JSON:
    ok = json_export(model, &sel, write_file, out, error);
    break;
  default:
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "unknown export format %d", (int)options->format);
    goto out;
  }
  if (ok && fflush(out) != 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT,
                "writing the export failed: %s", g_strerror(errno));
    ok = false;
  }
out:
  if (ids)
    g_array_unref(ids);
  export_selection_clear(&sel);
  return ok;
}

bool tm_session_export(tm_session *session, const tm_export_options *options,
                       FILE *out, GError **error) {
  return session_error_publish(session_export(session, options, out, error), error);
}

/* --- pack: internal errors (the manifest parser's) are published -------- */

char *tm_pack_manifest(const tm_pack_options *options, GError **error) {
  char *text = pack_manifest(options, error);
  session_error_publish(text != NULL, error);
  return text;
}

bool tm_pack_write(const tm_pack_options *options, const char *manifest, const char *path,
                   GError **error) {
  return session_error_publish(pack_write(options, manifest, path, error), error);
}
