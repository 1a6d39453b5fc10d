/*
 * `tracemerge export`: a merge written as one Perfetto trace or one Chrome
 * JSON trace, read back, answers as the merge did.
 *
 * The round trips import the merge and the export with `tracemerge import
 * -o` and run every query of tests/data/export/ (perfetto_roundtrip.sql,
 * json_roundtrip.sql) on both
 * saved databases, comparing all rows. The expected answers are the
 * merge's own: nothing is written down here, so a query can only pass if
 * the export carried what it asks. Two merges, each of two machines:
 * - a system trace and a Chrome JSON: systing-trace.pb (ftrace scheduling,
 *   thread states, irq slices, perf samples) on machine "server" and
 *   catapult-webview.json (slices, instants, flows, args) on "phone",
 *   related by a manifest (the JSON pinned to the system trace's BOOTTIME,
 *   1 µs later);
 * - the demo's example (tests/data/example): phone and backend;
 * and perfetto_roundtrip.sql also on the proto reader's Android fixture,
 * the one input with logcat events, packages and cpu times.
 * Each round trip also checks that the merge has what the queries are
 * about (slices, flows, args, scheduling, samples), so an empty answer on
 * both sides cannot pass for a carried one.
 *
 * The Perfetto file is also checked as protobuf: protoc decodes it raw
 * and against proto/trace.proto without a field the schema lacks, and a
 * walk of its packets checks one trusted sequence per source with its
 * state set before use (the first packet clears incremental state and sets
 * defaults; every interned id and track uuid an event names was defined
 * before on its sequence, or machine for tracks; one machine per sequence).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "corpus.h"
#include "e2e_support.h"

/* --- inputs ------------------------------------------------------------------- */

/* A corpus file, gunzipped when its name ends in .gz. */
static char *corpus_read_plain(const char *subdir, const char *file, gsize *len) {
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
static char *write_system_and_chrome_zip(const char *dir) {
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

static char *data_file(const char *name) {
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "export", name, NULL);
  char *text = NULL;
  GError *error = NULL;
  g_file_get_contents(path, &text, NULL, &error);
  g_assert_no_error(error);
  return text;
}

/* --- running the CLI ----------------------------------------------------------- */

static void run_ok(const char *dir, const char *const *args) {
  e2e_result r = e2e_run_in(dir, args);
  if (r.exit_code != 0)
    g_test_message("stderr: %s", r.err);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_result_clear(&r);
}

/* `tracemerge export INPUT -o OUT --format FORMAT`; returns OUT's path. */
static char *export_to(const char *dir, const char *input, const char *out,
                       const char *format) {
  const char *args[] = {"export", input, "-o", out, "--format", format, NULL};
  run_ok(dir, args);
  return g_build_filename(dir, out, NULL);
}

/* `tracemerge import INPUT -o OUT.sqlite`; returns the database's path. */
static char *save(const char *dir, const char *input, const char *db) {
  const char *args[] = {"import", input, "-o", db, NULL};
  run_ok(dir, args);
  return g_build_filename(dir, db, NULL);
}

/* The system trace and Chrome JSON merge exported as Perfetto, written once
 * and shared by the tests that read it (each export costs a second under
 * AddressSanitizer); main removes it after the run. */
static char *shared_dir;

static const char *system_and_chrome_pftrace(void) {
  static char *pftrace;
  if (!pftrace) {
    shared_dir = e2e_tmpdir();
    g_autofree char *zip = write_system_and_chrome_zip(shared_dir);
    pftrace = export_to(shared_dir, "system_and_chrome.zip", "merged.pftrace", "perfetto");
  }
  return pftrace;
}

/* --- comparing answers ----------------------------------------------------------- */

static sqlite3 *open_db(const char *path, const char *prelude) {
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
static char *answer(sqlite3 *db, sqlite3_stmt *stmt, const char *sql) {
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
static guint compare_suite(sqlite3 *merged, sqlite3 *exported, const char *suite) {
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

static int64_t scalar(sqlite3 *db, const char *sql) {
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
  int64_t v = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return v;
}

/* --- Perfetto round trips ----------------------------------------------------- */

/* Compares the merge `zip` and its Perfetto export `pftrace`, both in `dir`. */
/* --- stats, metadata and import logs -------------------------------------------- */

/* Each row of `sql` as one line of its values ("|" between them). */
static GPtrArray *rows_of(sqlite3 *db, const char *sql) {
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error("cannot prepare (%s): %s", sqlite3_errmsg(db), sql);
  GPtrArray *rows = g_ptr_array_new_with_free_func(g_free);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    GString *line = g_string_new(NULL);
    for (int c = 0; c < sqlite3_column_count(stmt); c++) {
      const char *text = (const char *)sqlite3_column_text(stmt, c);
      g_string_append_printf(line, "%s%s", c ? "|" : "", text ? text : "NULL");
    }
    g_ptr_array_add(rows, g_string_free(line, FALSE));
  }
  sqlite3_finalize(stmt);
  return rows;
}

static bool has_row(const GPtrArray *rows, const char *row) {
  for (guint i = 0; i < rows->len; i++)
    if (strcmp(rows->pdata[i], row) == 0)
      return true;
  return false;
}

/* The rows of `rows` for which `keep` holds, one per line, in order. */
static char *joined(const GPtrArray *rows, bool (*keep)(const char *row, void *user), void *user) {
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < rows->len; i++)
    if (!keep || keep(rows->pdata[i], user))
      g_string_append_printf(out, "%s\n", (const char *)rows->pdata[i]);
  return g_string_free(out, FALSE);
}

/* A stat row "machine|name|idx|severity|source|value" of a stat the trace
 * reported about itself in a service packet: TraceStats (traced_*),
 * FtraceStats (ftrace_cpu_*), logcat's Stats (android_log_num_*). */
static bool is_reported_stat(const char *row, void *user) {
  (void)user;
  const char *name = strchr(row, '|') + 1;
  return g_str_has_prefix(name, "traced_") || g_str_has_prefix(name, "ftrace_cpu_") ||
         g_str_has_prefix(name, "android_log_num_");
}

/* The metadata keys the reader takes from SystemInfo (proto_system_info.c),
 * which it keeps as metadata for a trace's own machine only (as
 * trace_processor does); other machines have them in their machine row. */
static const char *const system_info_keys[] = {
    "system_name", "system_release", "system_version", "system_machine",
    "android_build_fingerprint", "android_device_manufacturer", "tracing_service_version",
    "android_sdk_version", "timezone_off_mins", "system_ram_bytes", "system_ram_gb"};

/* A metadata row "machine|name|type|int|str" the export carries
 * (docs/exports.md): every machine's, except the SystemInfo keys of
 * machines other than the first (`user`: its name). A Chrome JSON's own
 * metadata object (json_metadata.<key>) is carried as ChromeMetadata,
 * which the reader names cr-<key>: merged_metadata_sql names it so. */
static bool is_carried_metadata(const char *row, void *user) {
  const char *first = user;
  g_auto(GStrv) f = g_strsplit(row, "|", 3);
  if (strcmp(f[0], first) == 0)
    return true;
  for (size_t i = 0; i < G_N_ELEMENTS(system_info_keys); i++)
    if (strcmp(f[1], system_info_keys[i]) == 0)
      return false;
  return true;
}

static const char stats_sql[] =
    "SELECT m.name, s.name, s.idx, s.severity, s.source, s.value FROM stats s "
    "LEFT JOIN machine m ON m.id = s.machine_id WHERE s.value <> 0 ORDER BY 1, 2, 3, 6";
/* Machine-scoped rows, by machine name. The others describe the inputs,
 * not their data, and cannot survive (docs/exports.md): a file's own rows
 * (trace_type, trace_size_bytes), the manifest's attributes, the merge's
 * trace clock (the export's is BOOTTIME). */
static const char metadata_sql[] =
    "SELECT m.name, d.name, d.key_type, d.int_value, d.str_value FROM metadata d "
    "JOIN machine m ON m.id = d.machine_id ORDER BY 1, 2, 4, 5";
static const char merged_metadata_sql[] =
    "SELECT m.name, CASE WHEN d.name LIKE 'json\\_metadata.%' ESCAPE '\\' "
    "THEN 'cr-' || substr(d.name, length('json_metadata.') + 1) ELSE d.name END, "
    "d.key_type, d.int_value, d.str_value FROM metadata d "
    "JOIN machine m ON m.id = d.machine_id ORDER BY 1, 2, 4, 5";
/* Import logs without their file and byte offset (which point into the
 * inputs): stat, severity, timestamp and args. */
static const char import_logs_sql[] =
    "SELECT l.name, l.severity, l.ts, (SELECT group_concat(a.key || '=' || "
    "coalesce(a.int_value, a.string_value, a.real_value), ',') FROM args a "
    "WHERE a.arg_set_id = l.arg_set_id) FROM _trace_import_logs l ORDER BY 1, 2, 3, 4";

typedef struct stat_filter {
  const GPtrArray *merged, *exported; /* stats rows */
} stat_filter;

/* An import-log row of a stat whose rows came back whole: the stat's rows
 * (by name) are the same on both sides. */
static bool is_log_of_surviving_stat(const char *row, void *user) {
  const stat_filter *f = user;
  g_autofree char *name = g_strndup(row, strcspn(row, "|"));
  guint n = 0;
  for (guint i = 0; i < f->merged->len; i++) {
    g_auto(GStrv) cols = g_strsplit(f->merged->pdata[i], "|", 3);
    if (strcmp(cols[1], name) != 0)
      continue;
    if (!has_row(f->exported, f->merged->pdata[i]))
      return false;
    n++;
  }
  for (guint i = 0; i < f->exported->len; i++) {
    g_auto(GStrv) cols = g_strsplit(f->exported->pdata[i], "|", 3);
    if (strcmp(cols[1], name) == 0)
      n--;
  }
  return n == 0;
}

/* The stats, metadata and import logs of the export's import against the
 * merge's: what docs/exports.md says survives is equal, and nothing comes
 * back that the merge did not have. Returns the number of stats rows the
 * traces reported (carried), so a caller can check there were some. */
static guint assert_service_rows_survive(sqlite3 *merged, sqlite3 *exported) {
  g_autoptr(GPtrArray) stats_a = rows_of(merged, stats_sql);
  g_autoptr(GPtrArray) stats_b = rows_of(exported, stats_sql);
  g_autofree char *reported_a = joined(stats_a, is_reported_stat, NULL);
  g_autofree char *reported_b = joined(stats_b, is_reported_stat, NULL);
  g_assert_cmpstr(reported_b, ==, reported_a);
  for (guint i = 0; i < stats_b->len; i++)
    if (!has_row(stats_a, stats_b->pdata[i]))
      g_error("a stat the merge did not have: %s", (const char *)stats_b->pdata[i]);

  g_autoptr(GPtrArray) first = rows_of(merged, "SELECT name FROM machine WHERE id = 0");
  g_assert_cmpuint(first->len, ==, 1);
  g_autoptr(GPtrArray) meta_a = rows_of(merged, merged_metadata_sql);
  g_autoptr(GPtrArray) meta_b = rows_of(exported, metadata_sql);
  g_autofree char *carried_a = joined(meta_a, is_carried_metadata, first->pdata[0]);
  g_autofree char *carried_b = joined(meta_b, NULL, NULL);
  g_assert_cmpstr(carried_b, ==, carried_a);

  g_autoptr(GPtrArray) logs_a = rows_of(merged, import_logs_sql);
  g_autoptr(GPtrArray) logs_b = rows_of(exported, import_logs_sql);
  stat_filter filter = {stats_a, stats_b};
  g_autofree char *surviving_a = joined(logs_a, is_log_of_surviving_stat, &filter);
  g_autofree char *surviving_b = joined(logs_b, is_log_of_surviving_stat, &filter);
  g_assert_cmpstr(surviving_b, ==, surviving_a);
  for (guint i = 0; i < logs_b->len; i++)
    if (!has_row(logs_a, logs_b->pdata[i]))
      g_error("an import log the merge did not have: %s", (const char *)logs_b->pdata[i]);

  guint reported = 0;
  for (guint i = 0; i < stats_a->len; i++)
    reported += is_reported_stat(stats_a->pdata[i], NULL);
  return reported;
}

static void perfetto_round_trip(const char *dir, const char *zip, const char *pftrace,
                                guint *queries, sqlite3 **merged_out) {
  g_autofree char *merged_db = save(dir, zip, "merged.sqlite");
  g_autofree char *export_db = save(dir, pftrace, "exported.sqlite");
  g_autofree char *suite = data_file("perfetto_roundtrip.sql");
  sqlite3 *merged = open_db(merged_db, NULL);
  sqlite3 *exported = open_db(export_db, NULL);
  *queries = compare_suite(merged, exported, suite);
  assert_service_rows_survive(merged, exported);
  sqlite3_close(exported);
  *merged_out = merged;
}

/* Two Android system traces on two machines, each with the stats and
 * metadata traced writes (TraceStats of two and three buffers, FtraceStats,
 * TraceConfig, service events; the first also a TraceUuid): every one
 * comes back on its machine, the second's on packets naming its
 * machine_id. */
static void test_perfetto_stats_and_metadata_survive_per_machine(void) {
  g_autofree char *dir = e2e_tmpdir();
  gsize tablet_len = 0, phone_len = 0;
  g_autofree char *tablet =
      corpus_read_plain("proto", "winscope-no_winscope_traces.perfetto-trace", &tablet_len);
  g_autofree char *phone =
      corpus_read_plain("proto", "nowinandroid-trace.perfetto-trace", &phone_len);
  const char *manifest =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": ["
      "{\"path\": \"tablet.pftrace\", \"machine\": {\"name\": \"tablet\"}},"
      "{\"path\": \"phone.pftrace\", \"machine\": {\"name\": \"phone\"}}]}}";
  const e2e_member members[] = {{"perfetto_manifest.json", manifest, 0},
                                {"tablet.pftrace", tablet, tablet_len},
                                {"phone.pftrace", phone, phone_len}};
  g_autofree char *zip = e2e_write_archive(dir, "two_phones.zip", E2E_ZIP, members, 3);
  g_autofree char *pftrace = export_to(dir, "two_phones.zip", "merged.pftrace", "perfetto");
  g_autofree char *merged_db = save(dir, "two_phones.zip", "merged.sqlite");
  g_autofree char *export_db = save(dir, "merged.pftrace", "exported.sqlite");
  sqlite3 *merged = open_db(merged_db, NULL);
  sqlite3 *exported = open_db(export_db, NULL);
  guint reported = assert_service_rows_survive(merged, exported);
  /* What the comparison is about is there, on both machines. */
  g_assert_cmpuint(reported, >, 50);
  g_assert_cmpint(scalar(merged, "SELECT count(DISTINCT machine_id) FROM stats "
                                 "WHERE name LIKE 'traced%' AND value <> 0"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM stats "
                                 "WHERE name LIKE 'ftrace_cpu%' AND value <> 0"), >, 8);
  g_assert_cmpint(scalar(merged, "SELECT count(DISTINCT machine_id) FROM metadata "
                                 "WHERE name IN ('trace_config_pbtxt', 'tracing_started_ns')"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM metadata WHERE name = 'trace_uuid'"), ==, 1);
  g_assert_cmpint(scalar(exported, "SELECT count(*) FROM metadata WHERE machine_id = 1"), >, 5);
  sqlite3_close(merged);
  sqlite3_close(exported);
  e2e_cleanup(dir);
}

static void test_perfetto_system_and_chrome_answer_the_same(void) {
  const char *pftrace = system_and_chrome_pftrace();
  guint queries = 0;
  sqlite3 *merged = NULL;
  perfetto_round_trip(shared_dir, "system_and_chrome.zip", pftrace, &queries, &merged);
  g_assert_cmpuint(queries, >=, 30);
  /* What the answers are about is there to carry. */
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM machine WHERE name IS NOT NULL"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM slice"), >, 10000);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM flow"), >, 100);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM args"), >, 1000);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM sched"), >, 1000);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM thread_state WHERE waker_utid IS NOT NULL"), >, 100);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM perf_sample"), >, 100);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM slice WHERE dur = 0"), >, 10);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM clock_snapshot WHERE clock_name = 'REALTIME'"), >, 0);
  /* The Chrome JSON's metadata object, compared as cr-<key> rows. */
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM metadata WHERE name LIKE 'json_metadata.%'"), >, 10);
  sqlite3_close(merged);
}

static void test_perfetto_demo_example_answers_the_same(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  guint queries = 0;
  sqlite3 *merged = NULL;
  g_autofree char *pftrace = export_to(dir, "example.zip", "merged.pftrace", "perfetto");
  perfetto_round_trip(dir, "example.zip", pftrace, &queries, &merged);
  g_assert_cmpuint(queries, >=, 30);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM counter"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(DISTINCT thread.machine_id) FROM thread_track "
                                 "JOIN thread USING (utid)"), ==, 2);
  sqlite3_close(merged);
  e2e_cleanup(dir);
}

/* The proto reader's Android fixture (tests/data/proto/android_system),
 * which holds every kind of service packet, logcat stats too: all of them
 * come back. */
static void test_perfetto_service_packets_of_an_android_trace_survive(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *fixture = PROTO_FIXTURE_DIR "/android_system.pb";
  g_autofree char *pftrace = export_to(dir, fixture, "merged.pftrace", "perfetto");
  g_autofree char *merged_db = save(dir, fixture, "merged.sqlite");
  g_autofree char *export_db = save(dir, "merged.pftrace", "exported.sqlite");
  sqlite3 *merged = open_db(merged_db, NULL);
  sqlite3 *exported = open_db(export_db, NULL);
  g_assert_cmpuint(assert_service_rows_survive(merged, exported), >, 10);
  /* The whole suite too: of the round trips it is the one with logcat
   * events and a package list (two of each in the fixture). */
  g_autofree char *suite = data_file("perfetto_roundtrip.sql");
  g_assert_cmpuint(compare_suite(merged, exported, suite), >=, 30);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM android_logs"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM package_list"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM stats "
                                 "WHERE name LIKE 'android_log_num%' AND value <> 0"), ==, 3);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM metadata WHERE name IN "
                                 "('trace_uuid', 'trace_config_pbtxt', 'tracing_started_ns')"), ==, 3);
  sqlite3_close(merged);
  sqlite3_close(exported);
  e2e_cleanup(dir);
}

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

/* --- the Perfetto file as protobuf ----------------------------------------------- */

static void test_perfetto_decodes_with_protoc(void) {
  const char *pftrace = system_and_chrome_pftrace();
  g_autofree char *quoted = g_shell_quote(pftrace);
  g_autofree char *proto_dir = g_shell_quote(TM_PROTO_DIR);
  g_autofree char *raw_cmd = g_strdup_printf("%s --decode_raw < %s", TM_PROTOC, quoted);
  g_autofree char *schema_cmd =
      g_strdup_printf("%s -I %s --decode=perfetto.protos.Trace trace.proto < %s", TM_PROTOC,
                      proto_dir, quoted);
  const char *commands[] = {raw_cmd, schema_cmd};
  for (int i = 0; i < 2; i++) {
    const char *argv[] = {"/bin/sh", "-c", commands[i], NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    GError *error = NULL;
    g_spawn_sync(TM_PROTO_DIR, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                 &status, &error);
    g_assert_no_error(error);
    if (!g_spawn_check_wait_status(status, NULL))
      g_error("%s failed: %s", commands[i], err);
    g_assert_cmpstr(err, ==, "");
    g_assert_nonnull(strstr(out, i == 0 ? "98: 1" : "machine_id: 1"));
    if (i == 1) {
      /* A field the schema does not name prints as its bare number. */
      GRegex *unknown = g_regex_new("^\\s*[0-9]+[ :{]", G_REGEX_MULTILINE, 0, NULL);
      g_assert_false(g_regex_match(unknown, out, 0, NULL));
      g_regex_unref(unknown);
      g_assert_nonnull(strstr(out, "sched_switch {"));
      g_assert_nonnull(strstr(out, "perf_sample {"));
      g_assert_nonnull(strstr(out, "remote_clock_sync {"));
      g_assert_nonnull(strstr(out, "machine_name: \"phone\""));
    }
  }
}

/* A protobuf field, as the packet walk reads it. */
typedef struct field {
  uint32_t number, wire_type;
  uint64_t value;
  const uint8_t *data;
  size_t len;
} field;

static bool next_field(const uint8_t **p, const uint8_t *end, field *f) {
  if (*p >= end)
    return false;
  uint64_t key = 0;
  for (int shift = 0; *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    key |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      break;
  }
  f->number = (uint32_t)(key >> 3);
  f->wire_type = (uint32_t)(key & 7);
  f->value = 0;
  f->data = NULL;
  f->len = 0;
  if (f->wire_type == 0 || f->wire_type == 2) {
    for (int shift = 0; *p < end; shift += 7) {
      uint8_t b = *(*p)++;
      f->value |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80))
        break;
    }
    if (f->wire_type == 2) {
      g_assert_cmpuint(f->value, <=, (uint64_t)(end - *p));
      f->data = *p;
      f->len = (size_t)f->value;
      *p += f->len;
    }
  } else if (f->wire_type == 1) {
    g_assert_cmpuint((size_t)(end - *p), >=, 8);
    memcpy(&f->value, *p, 8);
    *p += 8;
  } else {
    g_assert_cmpuint(f->wire_type, ==, 5);
    *p += 4;
  }
  return true;
}

/* Adds the iids InternedData defines (kind << 56 | iid). */
static void add_interned(GHashTable *defined, const field *interned) {
  const uint8_t *p = interned->data, *end = p + interned->len;
  field f;
  while (next_field(&p, end, &f)) {
    if (f.wire_type != 2)
      continue;
    const uint8_t *q = f.data, *qend = q + f.len;
    field g;
    while (next_field(&q, qend, &g))
      if (g.number == 1)
        g_hash_table_add(defined, g_memdup2(&(uint64_t){(uint64_t)f.number << 56 | g.value},
                                            sizeof(uint64_t)));
  }
}

static bool is_defined(GHashTable *defined, uint32_t kind, uint64_t iid) {
  uint64_t key = (uint64_t)kind << 56 | iid;
  return g_hash_table_contains(defined, &key);
}

typedef struct sequence_state {
  uint32_t machine;
  GHashTable *defined; /* interned (kind << 56 | iid) */
} sequence_state;

static void sequence_state_free(gpointer p) {
  sequence_state *s = p;
  g_hash_table_unref(s->defined);
  g_free(s);
}

static void test_perfetto_sequences_set_their_state_before_use(void) {
  const char *pftrace = system_and_chrome_pftrace();
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(pftrace, &bytes, &len, NULL));
  GHashTable *sequences =
      g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, sequence_state_free);
  /* Track uuids described, per machine: machine << 56 is not needed, the
   * exporter's uuids are unique across machines, but checked per machine. */
  GHashTable *tracks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  GHashTable *machines = g_hash_table_new(g_direct_hash, g_direct_equal);
  guint events = 0, uses = 0;
  const uint8_t *p = (const uint8_t *)bytes, *end = p + len;
  field packet;
  while (next_field(&p, end, &packet)) {
    g_assert_cmpuint(packet.number, ==, 1);
    uint32_t seq_id = 0, flags = 0, machine = 0;
    bool first = false, defaults = false;
    field interned = {0}, event = {0}, descriptor = {0};
    const uint8_t *q = packet.data, *qend = q + packet.len;
    field f;
    while (next_field(&q, qend, &f)) {
      switch (f.number) {
      case 10: seq_id = (uint32_t)f.value; break;
      case 13: flags = (uint32_t)f.value; break;
      case 87: first = f.value != 0; break;
      case 98: machine = (uint32_t)f.value; break;
      case 59: defaults = true; break;
      case 12: interned = f; break;
      case 11: event = f; break;
      case 60: descriptor = f; break;
      default: break;
      }
    }
    g_assert_cmpuint(seq_id, >, 0);
    g_hash_table_add(machines, GUINT_TO_POINTER(machine + 1));
    sequence_state *seq = g_hash_table_lookup(sequences, GUINT_TO_POINTER(seq_id));
    if (!seq) {
      /* The first packet of a sequence clears its state and sets it. */
      g_assert_true(first);
      g_assert_true(flags & 1);
      g_assert_true(defaults);
      seq = g_new0(sequence_state, 1);
      seq->machine = machine;
      seq->defined = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
      g_hash_table_insert(sequences, GUINT_TO_POINTER(seq_id), seq);
    } else {
      g_assert_false(first);
      g_assert_false(flags & 1);
      g_assert_cmpuint(seq->machine, ==, machine); /* one machine per sequence */
    }
    if (interned.data)
      add_interned(seq->defined, &interned);
    if (descriptor.data) {
      const uint8_t *d = descriptor.data, *dend = d + descriptor.len;
      while (next_field(&d, dend, &f))
        if (f.number == 1) {
          uint64_t key = f.value ^ ((uint64_t)machine << 60);
          g_hash_table_add(tracks, g_memdup2(&key, sizeof key));
        }
    }
    if (!event.data)
      continue;
    events++;
    g_assert_true(flags & 2); /* events name state: SEQ_NEEDS_INCREMENTAL_STATE */
    const uint8_t *e = event.data, *eend = e + event.len;
    while (next_field(&e, eend, &f)) {
      if (f.number == 3) /* category_iids: InternedData.event_categories (1) */
        g_assert_true(is_defined(seq->defined, 1, f.value));
      else if (f.number == 10) /* name_iid: event_names (2) */
        g_assert_true(is_defined(seq->defined, 2, f.value));
      else if (f.number == 11) { /* track_uuid: described on this machine */
        uint64_t key = f.value ^ ((uint64_t)machine << 60);
        g_assert_true(g_hash_table_contains(tracks, &key));
      } else if (f.number == 4) { /* debug annotation name_iid (3) */
        const uint8_t *a = f.data, *aend = a + f.len;
        field g;
        while (next_field(&a, aend, &g))
          if (g.number == 1) {
            g_assert_true(is_defined(seq->defined, 3, g.value));
            uses++;
          }
      } else {
        continue;
      }
      uses++;
    }
  }
  g_assert_true(p == end);
  g_assert_cmpuint(events, >, 10000);
  g_assert_cmpuint(uses, >, events);
  g_assert_cmpuint(g_hash_table_size(machines), ==, 2);
  /* A sequence per source: per machine for its system data, per machine
   * and trace file for its events. */
  g_assert_cmpuint(g_hash_table_size(sequences), >=, 4);
  g_hash_table_unref(sequences);
  g_hash_table_unref(tracks);
  g_hash_table_unref(machines);
}

/* --- streaming to standard output ----------------------------------------------------- */

static void test_standard_output_gets_the_same_bytes_as_a_file(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  g_autofree char *cli = g_shell_quote(g_getenv("TRACEMERGE_CLI"));
  const char *formats[] = {"perfetto", "json"};
  for (int i = 0; i < 2; i++) {
    g_autofree char *file = export_to(dir, "example.zip", "out.bin", formats[i]);
    g_autofree char *command = g_strdup_printf(
        "%s export example.zip -o - --format %s > piped.bin", cli, formats[i]);
    const char *argv[] = {"/bin/sh", "-c", command, NULL};
    int status = 0;
    GError *error = NULL;
    g_spawn_sync(dir, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                 &error);
    g_assert_no_error(error);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_autofree char *piped_path = g_build_filename(dir, "piped.bin", NULL);
    g_autofree char *a = NULL, *b = NULL;
    gsize a_len = 0, b_len = 0;
    g_assert_true(g_file_get_contents(file, &a, &a_len, NULL));
    g_assert_true(g_file_get_contents(piped_path, &b, &b_len, NULL));
    g_assert_cmpuint(a_len, >, 0);
    g_assert_cmpmem(a, a_len, b, b_len);
  }
  e2e_cleanup(dir);
}

/* --- filters -------------------------------------------------------------------------- */

/* Exports the example with the filter options, imports the export and
 * returns the answer to `sql` on it, and `expected_sql` on the merge. */
static void filtered(const char *const *options, const char *sql, const char *expected_sql,
                     char **actual, char **expected) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  GPtrArray *args = g_ptr_array_new();
  g_ptr_array_add(args, "export");
  g_ptr_array_add(args, "example.zip");
  g_ptr_array_add(args, "-o");
  g_ptr_array_add(args, "cut.pftrace");
  for (size_t i = 0; options[i]; i++)
    g_ptr_array_add(args, (char *)options[i]);
  g_ptr_array_add(args, NULL);
  run_ok(dir, (const char *const *)args->pdata);
  g_ptr_array_free(args, TRUE);
  const char *cut[] = {"cut.pftrace", NULL};
  const char *merge[] = {"example.zip", NULL};
  *actual = e2e_query_in(dir, cut, sql);
  *expected = e2e_query_in(dir, merge, expected_sql);
  e2e_cleanup(dir);
}

static void test_filter_by_machine_keeps_that_machine(void) {
  const char *options[] = {"--machine", "backend", NULL};
  g_autofree char *actual = NULL, *expected = NULL;
  filtered(options,
           "SELECT m.name, s.name, s.ts, s.dur FROM slice s JOIN track t ON s.track_id = t.id "
           "JOIN machine m ON t.machine_id = m.id ORDER BY s.ts",
           "SELECT m.name, s.name, s.ts, s.dur FROM slice s JOIN track t ON s.track_id = t.id "
           "JOIN machine m ON t.machine_id = m.id WHERE m.name = 'backend' ORDER BY s.ts",
           &actual, &expected);
  g_assert_cmpstr(actual, ==, expected);
  g_assert_nonnull(strstr(actual, "handle /index"));
  g_assert_null(strstr(actual, "render"));
}

static void test_filter_by_time_keeps_what_overlaps(void) {
  /* 1.3 ms .. 1.5 ms: fetch /index (1.0-1.5), handle /index (1.150125-
   * 1.450125), response sent (1.46); the counter value at 1.5 ms. */
  const char *options[] = {"--time", "1.3ms,1500us", NULL};
  g_autofree char *actual = NULL, *expected = NULL;
  filtered(options,
           "SELECT name, ts, dur FROM slice UNION ALL SELECT 'counter', ts, value FROM counter "
           "ORDER BY 2, 1",
           "SELECT name, ts, dur FROM slice WHERE ts <= 1500000 AND ts + dur >= 1300000 "
           "UNION ALL SELECT 'counter', ts, value FROM counter WHERE ts BETWEEN 1300000 AND "
           "1500000 ORDER BY 2, 1",
           &actual, &expected);
  g_assert_cmpstr(actual, ==, expected);
  g_assert_nonnull(strstr(actual, "response sent"));
  g_assert_null(strstr(actual, "render"));
}

static void test_filter_by_sql_keeps_slices_with_their_ancestors(void) {
  const char *options[] = {"--sql", "SELECT id FROM slice WHERE name = 'query users'", NULL};
  g_autofree char *actual = NULL, *expected = NULL;
  filtered(options, "SELECT name, depth, ts FROM slice ORDER BY ts",
           "SELECT name, depth, ts FROM slice WHERE name = 'query users' OR id IN (SELECT id "
           "FROM ancestor_slice((SELECT id FROM slice WHERE name = 'query users'))) ORDER BY ts",
           &actual, &expected);
  g_assert_cmpstr(actual, ==, expected);
  g_assert_nonnull(strstr(actual, "\"handle /index\",0"));
}

/* --- errors ------------------------------------------------------------------------------ */

static void expect_failure(const char *const *args, int status, const char *message) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, status);
  if (!strstr(r.err, message))
    g_error("stderr '%s' lacks '%s'", r.err, message);
  /* A failed export leaves no file behind. */
  g_autofree char *out = g_build_filename(dir, "out.pftrace", NULL);
  g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name(d)))
    g_assert_false(g_str_has_prefix(name, ".out.pftrace"));
  g_dir_close(d);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_unknown_machine_names_the_machines(void) {
  const char *args[] = {"export", "example.zip", "-o", "out.pftrace", "--machine", "tablet", NULL};
  expect_failure(args, 1,
                 "tracemerge: --machine 'tablet': no machine has that name (the machines are "
                 "'phone', 'backend')");
}

static void test_bad_time_range_is_a_usage_error(void) {
  const char *args[] = {"export", "example.zip", "-o", "out.pftrace", "--time", "1ms", NULL};
  expect_failure(args, 2, "--time wants START,END");
  const char *unit[] = {"export", "example.zip", "-o", "out.pftrace", "--time", "1h,2h", NULL};
  expect_failure(unit, 2, "--time: '1h' is not a time");
  const char *order[] = {"export", "example.zip", "-o", "out.pftrace", "--time", "2s,1s", NULL};
  expect_failure(order, 2, "--time: START is after END");
}

static void test_bad_slice_sql_says_why(void) {
  const char *syntax[] = {"export", "example.zip", "-o", "out.pftrace", "--sql", "SELEKT 1", NULL};
  expect_failure(syntax, 1, "tracemerge: --sql: near \"SELEKT\": syntax error");
  const char *columns[] = {"export", "example.zip", "-o", "out.pftrace", "--sql",
                           "SELECT id, name FROM slice", NULL};
  expect_failure(columns, 1, "--sql: the query must return one column of slice ids (it returns 2)");
  const char *ids[] = {"export", "example.zip", "-o", "out.pftrace", "--sql", "SELECT 99", NULL};
  expect_failure(ids, 1, "--sql: 99 is not the id of a slice");
}

static void test_missing_output_and_bad_format_are_usage_errors(void) {
  const char *no_output[] = {"export", "example.zip", NULL};
  expect_failure(no_output, 2, "missing -o OUT");
  const char *format[] = {"export", "example.zip", "-o", "out.pftrace", "--format", "xml", NULL};
  expect_failure(format, 2, "--format must be perfetto or json");
  const char *no_input[] = {"export", "-o", "out.pftrace", NULL};
  expect_failure(no_input, 2, "no input files");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/export/perfetto/system-trace-and-chrome-json-answer-the-same",
                  test_perfetto_system_and_chrome_answer_the_same);
  g_test_add_func("/export/perfetto/demo-example-answers-the-same",
                  test_perfetto_demo_example_answers_the_same);
  g_test_add_func("/export/perfetto/stats-and-metadata-survive-per-machine",
                  test_perfetto_stats_and_metadata_survive_per_machine);
  g_test_add_func("/export/perfetto/service-packets-of-an-android-trace-survive",
                  test_perfetto_service_packets_of_an_android_trace_survive);
  g_test_add_func("/export/perfetto/decodes-with-protoc", test_perfetto_decodes_with_protoc);
  g_test_add_func("/export/perfetto/sequences-set-their-state-before-use",
                  test_perfetto_sequences_set_their_state_before_use);
  g_test_add_func("/export/json/system-trace-and-chrome-json-answer-the-same",
                  test_json_system_and_chrome_answer_the_same);
  g_test_add_func("/export/json/demo-example-answers-the-same",
                  test_json_demo_example_answers_the_same);
  g_test_add_func("/export/json/example-keeps-machines-apart",
                  test_json_of_the_example_keeps_machines_apart);
  g_test_add_func("/export/standard-output-gets-the-same-bytes-as-a-file",
                  test_standard_output_gets_the_same_bytes_as_a_file);
  g_test_add_func("/export/filter/machine-keeps-that-machine",
                  test_filter_by_machine_keeps_that_machine);
  g_test_add_func("/export/filter/time-keeps-what-overlaps",
                  test_filter_by_time_keeps_what_overlaps);
  g_test_add_func("/export/filter/sql-keeps-slices-with-their-ancestors",
                  test_filter_by_sql_keeps_slices_with_their_ancestors);
  g_test_add_func("/export/errors/unknown-machine-names-the-machines",
                  test_unknown_machine_names_the_machines);
  g_test_add_func("/export/errors/bad-time-range-is-a-usage-error",
                  test_bad_time_range_is_a_usage_error);
  g_test_add_func("/export/errors/bad-slice-sql-says-why", test_bad_slice_sql_says_why);
  g_test_add_func("/export/errors/missing-output-and-bad-format-are-usage-errors",
                  test_missing_output_and_bad_format_are_usage_errors);
  int status = g_test_run();
  if (shared_dir)
    e2e_cleanup(shared_dir);
  g_free(shared_dir);
  return status;
}
