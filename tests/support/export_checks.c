/* Helpers of the export round trips; see export_checks.h. */
#include "export_checks.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "corpus.h"
#include "e2e_support.h"

/* --- inputs ------------------------------------------------------------------- */

/* A corpus file, gunzipped when its name ends in .gz. */
char *corpus_read_plain(const char *subdir, const char *file, gsize *len) {
  gsize raw_len = 0;
  char *raw = corpus_real_read(subdir, file, &raw_len);
  if (!g_str_has_suffix(file, ".gz")) {
    *len = raw_len;
    return raw;
  }
  z_stream z = {0};
  g_assert_cmpint(inflateInit2(&z, 16 + MAX_WBITS), ==, Z_OK);
  GByteArray *out = g_byte_array_new();
  uint8_t chunk[1 << 16];
  z.next_in = (Bytef *)raw;
  z.avail_in = (uInt)raw_len;
  int rc;
  do {
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    g_assert_true(rc == Z_OK || rc == Z_STREAM_END);
    g_byte_array_append(out, chunk, (guint)(sizeof chunk - z.avail_out));
  } while (rc != Z_STREAM_END);
  inflateEnd(&z);
  g_free(raw);
  *len = out->len;
  return (char *)g_byte_array_free(out, FALSE);
}

/* The system trace and the Chrome JSON on two machines; returns the ZIP. */
char *write_system_and_chrome_zip(const char *dir) {
  gsize pb_len = 0, json_len = 0;
  g_autofree char *pb = corpus_read_plain("proto", "systing-trace.pb", &pb_len);
  g_autofree char *json = corpus_read_plain("json", "catapult-webview.json.gz", &json_len);
  const char *manifest =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": ["
      "{\"path\": \"systing-trace.pb\", \"machine\": {\"name\": \"server\"}},"
      "{\"path\": \"webview.json\", \"machine\": {\"name\": \"phone\"},"
      " \"clocks\": {\"sync_to\": {\"file\": \"systing-trace.pb\", \"clock\": \"BOOTTIME\"},"
      " \"offset_ns\": 1000}}]}}";
  const e2e_member members[] = {{"perfetto_manifest.json", manifest, 0},
                                {"systing-trace.pb", pb, pb_len},
                                {"webview.json", json, json_len}};
  return e2e_write_archive(dir, "system_and_chrome.zip", E2E_ZIP, members, 3);
}

char *data_file(const char *name) {
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "export", name, NULL);
  char *text = NULL;
  GError *error = NULL;
  g_file_get_contents(path, &text, NULL, &error);
  g_assert_no_error(error);
  return text;
}

/* --- running the CLI ----------------------------------------------------------- */

void run_ok(const char *dir, const char *const *args) {
  e2e_result r = e2e_run_in(dir, args);
  if (r.exit_code != 0)
    g_test_message("stderr: %s", r.err);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_result_clear(&r);
}

/* `tracemerge export INPUT -o OUT --format FORMAT`; returns OUT's path. */
char *export_to(const char *dir, const char *input, const char *out,
                       const char *format) {
  const char *args[] = {"export", input, "-o", out, "--format", format, NULL};
  run_ok(dir, args);
  return g_build_filename(dir, out, NULL);
}

/* `tracemerge import INPUT -o OUT.sqlite`; returns the database's path. */
char *save(const char *dir, const char *input, const char *db) {
  const char *args[] = {"import", input, "-o", db, NULL};
  run_ok(dir, args);
  return g_build_filename(dir, db, NULL);
}

/* --- comparing answers ----------------------------------------------------------- */

sqlite3 *open_db(const char *path, const char *prelude) {
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  if (prelude) {
    char *message = NULL;
    int rc = sqlite3_exec(db, prelude, NULL, NULL, &message);
    if (rc != SQLITE_OK)
      g_error("prelude failed: %s", message);
  }
  return db;
}

/* Every row of `stmt`, each value with its type, one line per row. */
char *answer(sqlite3 *db, sqlite3_stmt *stmt, const char *sql) {
  GString *out = g_string_new(NULL);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    for (int c = 0; c < sqlite3_column_count(stmt); c++) {
      int type = sqlite3_column_type(stmt, c);
      const char *text = (const char *)sqlite3_column_text(stmt, c);
      g_string_append_printf(out, "%s%d:%s", c ? "|" : "", type, text ? text : "NULL");
    }
    g_string_append_c(out, '\n');
  }
  if (rc != SQLITE_DONE)
    g_error("query failed (%s): %s", sqlite3_errmsg(db), sql);
  return g_string_free(out, FALSE);
}

/* Runs every statement of `suite` on both databases and asserts equal
 * answers; returns the number of statements. */
guint compare_suite(sqlite3 *merged, sqlite3 *exported, const char *suite) {
  guint n = 0;
  const char *tail = suite;
  while (tail && *tail) {
    sqlite3_stmt *a = NULL, *b = NULL;
    const char *next = NULL;
    int rc = sqlite3_prepare_v2(merged, tail, -1, &a, &next);
    if (rc != SQLITE_OK)
      g_error("cannot prepare (%s): %.200s", sqlite3_errmsg(merged), tail);
    if (!a) { /* comments and blanks to the end */
      tail = next;
      continue;
    }
    g_autofree char *sql = g_strndup(tail, (gsize)(next - tail));
    g_assert_cmpint(sqlite3_prepare_v2(exported, sql, -1, &b, NULL), ==, SQLITE_OK);
    g_autofree char *expected = answer(merged, a, sql);
    g_autofree char *actual = answer(exported, b, sql);
    if (strcmp(expected, actual) != 0)
      g_test_message("query: %s", g_strstrip(sql));
    g_assert_cmpstr(actual, ==, expected);
    sqlite3_finalize(a);
    sqlite3_finalize(b);
    n++;
    tail = next;
  }
  return n;
}

int64_t scalar(sqlite3 *db, const char *sql) {
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
  int64_t v = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return v;
}
