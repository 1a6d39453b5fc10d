/*
 * `tracemerge export --format json`: a merge written as one Chrome JSON
 * trace, read back, answers as the merge did (tests/data/export/
 * json_roundtrip.sql on the system trace and Chrome JSON merge and on the
 * demo's example, both saved databases compared query by query by
 * tests/support/export_checks.h), the file is valid JSON (checked with
 * yajl) and keeps machines apart. Beside it: test_e2e_export_perfetto.c
 * and test_e2e_export_cli.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "corpus.h"
#include "e2e_support.h"
#include "export_checks.h"


/* --- JSON round trips ------------------------------------------------------------ */

/* The stride the export wrote in its metadata ("pid_stride": S). */
static char *stride_of(const char *json_path) {
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(json_path, &text, NULL, NULL));
  const char *at = strstr(text, "\"pid_stride\":");
  g_assert_nonnull(at);
  at += strlen("\"pid_stride\":");
  return g_strndup(at, strspn(at, "0123456789"));
}

/* Parsing with callbacks, not yajl_tree: the tree grows every array by one
 * realloc per element, which under AddressSanitizer (each realloc a fresh
 * block, the old one quarantined) costs seconds and a gigabyte here. */
typedef struct json_shape {
  int depth;            /* containers open */
  bool key_is_events;   /* the last top-level key was "traceEvents" */
  int events_depth;     /* depth of the traceEvents array once open, else 0 */
  size_t events;        /* objects directly in it */
} json_shape;

static int shape_map_key(void *ctx, const unsigned char *key, size_t len) {
  json_shape *shape = ctx;
  if (shape->depth == 1)
    shape->key_is_events = len == strlen("traceEvents") && memcmp(key, "traceEvents", len) == 0;
  return 1;
}

static int shape_start_map(void *ctx) {
  json_shape *shape = ctx;
  if (shape->events_depth > 0 && shape->depth == shape->events_depth)
    shape->events++;
  shape->depth++;
  return 1;
}

static int shape_start_array(void *ctx) {
  json_shape *shape = ctx;
  shape->depth++;
  if (shape->depth == 2 && shape->key_is_events)
    shape->events_depth = shape->depth;
  return 1;
}

static int shape_end(void *ctx) {
  json_shape *shape = ctx;
  shape->depth--;
  return 1;
}

/* The file is JSON whose top-level traceEvents is an array of objects. */
static void assert_valid_json(const char *path) {
  g_autofree char *text = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &text, &len, NULL));
  static const yajl_callbacks callbacks = {.yajl_map_key = shape_map_key,
                                           .yajl_start_map = shape_start_map,
                                           .yajl_end_map = shape_end,
                                           .yajl_start_array = shape_start_array,
                                           .yajl_end_array = shape_end};
  json_shape shape = {0};
  yajl_handle yajl = yajl_alloc(&callbacks, NULL, &shape);
  yajl_status status = yajl_parse(yajl, (const unsigned char *)text, len);
  if (status == yajl_status_ok)
    status = yajl_complete_parse(yajl);
  if (status != yajl_status_ok) {
    unsigned char *message = yajl_get_error(yajl, 1, (const unsigned char *)text, len);
    g_error("not JSON: %s", message);
  }
  yajl_free(yajl);
  g_assert_cmpint(shape.events_depth, ==, 2);
  g_assert_cmpuint(shape.events, >, 0);
}

/* A Chrome JSON's own metadata object, per machine: the merge's rows
 * json_metadata.<key> (machine name, key, typed value), and in the
 * export's import the rows of each machine's "metadata" object inside the
 * one row the export's top-level "tracemerge" object became (the reader
 * keeps a nested metadata value as its JSON text). */
static const char json_metadata_merged_sql[] =
    "SELECT m.name, substr(d.name, length('json_metadata.') + 1), "
    "CASE WHEN d.int_value IS NOT NULL THEN d.int_value ELSE d.str_value END "
    "FROM metadata d JOIN machine m ON m.id = d.machine_id "
    "WHERE d.name LIKE 'json\\_metadata.%' ESCAPE '\\' ORDER BY 1, 2";
static const char json_metadata_exported_sql[] =
    "SELECT json_extract(m.value, '$.name'), e.key, e.value FROM metadata d, "
    "json_each(d.str_value, '$.machines') m, json_each(m.value, '$.metadata') e "
    "WHERE d.name = 'json_metadata.tracemerge' ORDER BY 1, 2";

/* Both answers are equal, typed; returns how many rows. */
static guint compare_json_metadata(sqlite3 *merged, sqlite3 *exported) {
  sqlite3_stmt *a = NULL, *b = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(merged, json_metadata_merged_sql, -1, &a, NULL), ==,
                  SQLITE_OK);
  g_assert_cmpint(sqlite3_prepare_v2(exported, json_metadata_exported_sql, -1, &b, NULL), ==,
                  SQLITE_OK);
  g_autofree char *expected = answer(merged, a, json_metadata_merged_sql);
  g_autofree char *actual = answer(exported, b, json_metadata_exported_sql);
  sqlite3_finalize(a);
  sqlite3_finalize(b);
  g_assert_cmpstr(actual, ==, expected);
  guint rows = 0;
  for (const char *p = expected; *p; p++)
    rows += *p == '\n';
  return rows;
}

static void json_round_trip(const char *dir, const char *zip, guint *queries,
                            guint *metadata_rows) {
  g_autofree char *json = export_to(dir, zip, "merged.json", "json");
  assert_valid_json(json);
  g_autofree char *merged_db = save(dir, zip, "merged.sqlite");
  g_autofree char *export_db = save(dir, "merged.json", "exported.sqlite");
  g_autofree char *stride = stride_of(json);
  g_autofree char *prelude_merged = data_file("json_prelude_merged.sql");
  g_autofree char *prelude_template = data_file("json_prelude_export.sql");
  g_auto(GStrv) parts = g_strsplit(prelude_template, "@STRIDE@", -1);
  g_autofree char *prelude_export = g_strjoinv(stride, parts);
  g_autofree char *suite = data_file("json_roundtrip.sql");
  sqlite3 *merged = open_db(merged_db, prelude_merged);
  sqlite3 *exported = open_db(export_db, prelude_export);
  *queries = compare_suite(merged, exported, suite);
  *metadata_rows = compare_json_metadata(merged, exported);
  sqlite3_close(merged);
  sqlite3_close(exported);
}

static void test_json_system_and_chrome_answer_the_same(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = write_system_and_chrome_zip(dir);
  guint queries = 0, metadata_rows = 0;
  json_round_trip(dir, "system_and_chrome.zip", &queries, &metadata_rows);
  g_assert_cmpuint(queries, >=, 30);
  /* catapult-webview.json's metadata object has 20-odd keys. */
  g_assert_cmpuint(metadata_rows, >, 10);
  e2e_cleanup(dir);
}

static void test_json_demo_example_answers_the_same(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  guint queries = 0, metadata_rows = 0;
  json_round_trip(dir, "example.zip", &queries, &metadata_rows);
  g_assert_cmpuint(queries, >=, 30);
  e2e_cleanup(dir);
}

/* The example's JSON, as written: each machine's ids apart, names saying
 * the machine, X/i/C events, ns kept as decimals of µs. Derived from
 * client.json and server.json: the backend is machine 1, so its pid 20
 * and tid 21 become 10 000 020 and 10 000 021; the server's events are
 * 100 µs later (the manifest's offset). */
static void test_json_of_the_example_keeps_machines_apart(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  const char *args[] = {"export", "example.zip", "-o", "-", "--format", "json", NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  g_assert_nonnull(strstr(r.out, "{\"ph\":\"M\",\"pid\":10000020,\"name\":\"process_name\","
                                 "\"args\":{\"name\":\"backend: server\"}}"));
  g_assert_nonnull(strstr(r.out, "{\"ph\":\"M\",\"pid\":10,\"name\":\"process_name\","
                                 "\"args\":{\"name\":\"phone: client\"}}"));
  g_assert_nonnull(strstr(r.out, "{\"ph\":\"X\",\"pid\":10000020,\"tid\":10000021,"
                                 "\"ts\":1150.125,\"dur\":300,\"cat\":\"http\","
                                 "\"name\":\"handle /index\"}"));
  g_assert_nonnull(strstr(r.out, "{\"ph\":\"X\",\"pid\":10,\"tid\":11,\"ts\":1600,"
                                 "\"dur\":150.25,\"cat\":\"ui\",\"name\":\"render\"}"));
  g_assert_nonnull(strstr(r.out, "{\"ph\":\"i\",\"pid\":10000020,\"tid\":10000021,"
                                 "\"ts\":1460,\"s\":\"t\",\"name\":\"response sent\"}"));
  g_assert_nonnull(strstr(r.out, "{\"ph\":\"C\",\"pid\":10,\"ts\":1000,\"name\":\"inflight\","
                                 "\"args\":{\"requests\":1.0}}"));
  g_assert_nonnull(strstr(r.out, "{\"name\":\"backend\",\"index\":1,\"pid_offset\":10000000}"));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/export/json/system-trace-and-chrome-json-answer-the-same",
                  test_json_system_and_chrome_answer_the_same);
  g_test_add_func("/export/json/demo-example-answers-the-same",
                  test_json_demo_example_answers_the_same);
  g_test_add_func("/export/json/example-keeps-machines-apart",
                  test_json_of_the_example_keeps_machines_apart);
  return g_test_run();
}
