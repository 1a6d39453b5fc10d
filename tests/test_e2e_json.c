/*
 * End-to-end: the CLI on Chrome JSON inputs, loose and in archives.
 *
 * Expected values are worked out in the comments: JSON timestamps are µs,
 * stored as ns (×1000, fractions kept exactly). JSON is clockless: the first
 * JSON file in processing order (member name order within an archive) owns
 * trace time with its private clock, and every other JSON file's private
 * clock is tied to it at zero offset, so values land unchanged.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "corpus.h"
#include "e2e_support.h"

/* client: fetch [1000, 1500) µs containing send [1100, 1300.5); render B at
 * 1600, E at 1750.25 -> dur 150.25 µs. */
static const char client_json[] =
    "{\"traceEvents\": [\n"
    "{\"ph\":\"M\",\"pid\":10,\"name\":\"process_name\",\"args\":{\"name\":\"client\"}},\n"
    "{\"ph\":\"M\",\"pid\":10,\"tid\":11,\"name\":\"thread_name\",\"args\":{\"name\":\"main\"}},\n"
    "{\"ph\":\"X\",\"pid\":10,\"tid\":11,\"ts\":1000,\"dur\":500,\"cat\":\"net\",\"name\":\"fetch\"},\n"
    "{\"ph\":\"X\",\"pid\":10,\"tid\":11,\"ts\":1100,\"dur\":200.5,\"cat\":\"net\",\"name\":\"send\"},\n"
    "{\"ph\":\"B\",\"pid\":10,\"tid\":11,\"ts\":1600,\"name\":\"render\"},\n"
    "{\"ph\":\"E\",\"pid\":10,\"tid\":11,\"ts\":1750.25}\n"
    "]}\n";

/* server: handle [1150.125, 1450.125) containing query [1200, 1300); an
 * instant at 1460 after handle ended -> depth 0. */
static const char server_json[] =
    "[\n"
    "{\"ph\":\"M\",\"pid\":20,\"tid\":21,\"name\":\"thread_name\",\"args\":{\"name\":\"worker\"}},\n"
    "{\"ph\":\"X\",\"pid\":20,\"tid\":21,\"ts\":1150.125,\"dur\":300,\"name\":\"handle\"},\n"
    "{\"ph\":\"X\",\"pid\":20,\"tid\":21,\"ts\":1200,\"dur\":100,\"name\":\"query\"},\n"
    "{\"ph\":\"i\",\"pid\":20,\"tid\":21,\"ts\":1460,\"s\":\"t\",\"name\":\"sent\"}\n"
    "]\n";

static const char merged_slices_csv[] =
    "\"id\",\"ts\",\"dur\",\"depth\",\"name\"\n"
    "0,1000000,500000,0,\"fetch\"\n"
    "1,1100000,200500,1,\"send\"\n"
    "2,1150125,300000,0,\"handle\"\n"
    "3,1200000,100000,1,\"query\"\n"
    "4,1460000,0,0,\"sent\"\n"
    "5,1600000,150250,0,\"render\"\n";

static void test_zip_of_two_json_files_merges_slices(void) {
  g_autofree char *dir = e2e_tmpdir();
  const e2e_member members[] = {
      {"server.json", server_json, 0},
      {"client.json", client_json, 0},
  };
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 2);
  const char *inputs[] = {"run.zip", NULL};
  /* No ORDER BY: ids follow the merged timeline. */
  g_autofree char *slices =
      e2e_query_in(dir, inputs, "SELECT id, ts, dur, depth, name FROM slice");
  e2e_assert_text(slices, merged_slices_csv);

  /* The zip is row 0 (processing order 0); members keep archive order for
   * ids and are processed in name order: client.json before server.json. */
  g_autofree char *files = e2e_query_in(
      dir, inputs,
      "SELECT id, parent_id, name, size, trace_type, processing_order, "
      "is_container FROM trace_file ORDER BY id");
  /* The zip's own size is the input size: read it from the file. */
  GStatBuf st;
  g_assert_cmpint(g_stat(zip, &st), ==, 0);
  g_autofree char *expected_files = g_strdup_printf(
      "\"id\",\"parent_id\",\"name\",\"size\",\"trace_type\","
      "\"processing_order\",\"is_container\"\n"
      "0,\"[NULL]\",\"run.zip\",%" G_GINT64_FORMAT ",\"zip\",0,1\n"
      "1,0,\"server.json\",%zu,\"json\",2,0\n"
      "2,0,\"client.json\",%zu,\"json\",1,0\n",
      (gint64)st.st_size, strlen(server_json), strlen(client_json));
  e2e_assert_text(files, expected_files);

  /* The first JSON file in processing order owns trace time: TRACE_FILE. */
  g_autofree char *clock = e2e_query_in(
      dir, inputs, "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n11\n");
  e2e_cleanup(dir);
}

static void test_loose_files_merge_like_archive_members(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_write_file(dir, "server.json", server_json, 0);
  g_autofree char *b = e2e_write_file(dir, "client.json", client_json, 0);
  const char *inputs[] = {"server.json", "client.json", NULL};
  g_autofree char *slices =
      e2e_query_in(dir, inputs, "SELECT id, ts, dur, depth, name FROM slice");
  e2e_assert_text(slices, merged_slices_csv);
  g_autofree char *files = e2e_query_in(
      dir, inputs, "SELECT id, parent_id, name, trace_type FROM trace_file");
  e2e_assert_text(files, "\"id\",\"parent_id\",\"name\",\"trace_type\"\n"
                         "0,\"[NULL]\",\"server.json\",\"json\"\n"
                         "1,\"[NULL]\",\"client.json\",\"json\"\n");
  e2e_cleanup(dir);
}

static void test_threads_processes_and_tracks_are_attributed(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_write_file(dir, "client.json", client_json, 0);
  g_autofree char *b = e2e_write_file(dir, "server.json", server_json, 0);
  const char *inputs[] = {"client.json", "server.json", NULL};
  /* Both files sit on the host machine (no manifest); each thread has its
   * own thread_execution track. utid 0 is the machine's idle thread. As in
   * trace_processor, every JSON event resolves (pid, tid) to a thread, tid
   * defaulting to pid: the process_name event makes thread 10, and a new
   * process gets its main thread (tid == pid) at once, so process 20 has
   * thread 20 although no event names it (docs/sql-surface.md §10,
   * GetOrCreateProcess). */
  g_autofree char *threads = e2e_query_in(
      dir, inputs,
      "SELECT t.tid, t.name, p.pid, p.name AS process, t.machine_id "
      "FROM thread t LEFT JOIN process p USING (upid) ORDER BY utid");
  e2e_assert_text(threads, "\"tid\",\"name\",\"pid\",\"process\",\"machine_id\"\n"
                           "0,\"swapper\",0,\"[NULL]\",0\n"
                           "10,\"[NULL]\",10,\"client\",0\n"
                           "11,\"main\",10,\"client\",0\n"
                           "20,\"[NULL]\",20,\"[NULL]\",0\n"
                           "21,\"worker\",20,\"[NULL]\",0\n");
  g_autofree char *tracks = e2e_query_in(
      dir, inputs,
      "SELECT tt.type, t.tid, count(s.id) AS slices FROM thread_track tt "
      "JOIN thread t USING (utid) JOIN slice s ON s.track_id = tt.id "
      "GROUP BY tt.id ORDER BY t.tid");
  e2e_assert_text(tracks, "\"type\",\"tid\",\"slices\"\n"
                          "\"thread_execution\",11,3\n"
                          "\"thread_execution\",21,3\n");
  g_autofree char *machines =
      e2e_query_in(dir, inputs, "SELECT id, raw_id, name, label_index FROM machine");
  e2e_assert_text(machines, "\"id\",\"raw_id\",\"name\",\"label_index\"\n"
                            "0,0,\"[NULL]\",0\n");
  g_autofree char *bounds =
      e2e_query_in(dir, inputs, "SELECT start_ts, end_ts FROM trace_bounds");
  /* From fetch's start to render's end: 1600000 + 150250. */
  e2e_assert_text(bounds, "\"start_ts\",\"end_ts\"\n1000000,1750250\n");
  e2e_cleanup(dir);
}

static void test_gzip_and_tar_gz_inputs(void) {
  g_autofree char *dir = e2e_tmpdir();
  const e2e_member gz_member[] = {{"client.json", client_json, 0}};
  g_autofree char *gz = e2e_write_archive(dir, "client.json.gz", E2E_GZIP, gz_member, 1);
  const e2e_member tar_members[] = {{"traces/server.json", server_json, 0}};
  g_autofree char *tgz = e2e_write_archive(dir, "server.tar.gz", E2E_TAR_GZ, tar_members, 1);
  const char *inputs[] = {"client.json.gz", "server.tar.gz", NULL};
  g_autofree char *slices =
      e2e_query_in(dir, inputs, "SELECT id, ts, dur, depth, name FROM slice");
  e2e_assert_text(slices, merged_slices_csv);
  g_autofree char *names = e2e_query_in(
      dir, inputs,
      "SELECT name, trace_type FROM trace_file WHERE trace_type = 'json' ORDER BY id");
  /* A gzip payload has the empty name; tar members keep their full path. */
  e2e_assert_text(names, "\"name\",\"trace_type\"\n"
                         "\"\",\"json\"\n"
                         "\"traces/server.json\",\"json\"\n");
  e2e_cleanup(dir);
}

static void test_output_formats(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_write_file(dir, "client.json", client_json, 0);
  const char *tsv_args[] = {"query", "client.json", "--format", "tsv", "--sql",
                            "SELECT name, dur, category FROM slice WHERE depth = 1", NULL};
  e2e_result r = e2e_run_in(dir, tsv_args);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "name\tdur\tcategory\nsend\t200500\tnet\n");
  e2e_result_clear(&r);
  const char *json_args[] = {"query", "client.json", "--format", "json", "--sql",
                             "SELECT name, dur, parent_id, 0.5 AS half FROM slice WHERE depth = 1",
                             NULL};
  r = e2e_run_in(dir, json_args);
  g_assert_cmpint(r.exit_code, ==, 0);
  g_assert_nonnull(strstr(r.out, "\"name\""));
  g_assert_nonnull(strstr(r.out, "\"send\""));
  g_assert_nonnull(strstr(r.out, "200500"));
  g_assert_nonnull(strstr(r.out, "0.5"));
  e2e_result_clear(&r);
  /* -q reads statements from a file; the last statement's rows print. */
  g_autofree char *sql = e2e_write_file(
      dir, "q.sql",
      "CREATE TEMP TABLE d AS SELECT name FROM slice WHERE depth = 0;\n"
      "SELECT count(*) AS n FROM d;\n", 0);
  const char *file_args[] = {"query", "client.json", "-q", "q.sql", NULL};
  r = e2e_run_in(dir, file_args);
  g_assert_cmpint(r.exit_code, ==, 0);
  /* An empty line for the earlier statement, as trace_processor_shell. */
  e2e_assert_text(r.out, "\n\"n\"\n2\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_import_writes_a_standalone_sqlite_file(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_write_file(dir, "client.json", client_json, 0);
  const char *args[] = {"import", "client.json", "-o", "out.sqlite", NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_result_clear(&r);
  g_autofree char *db = g_build_filename(dir, "out.sqlite", NULL);
  /* Read back with plain SQLite: no tracemerge code involved. */
  sqlite3 *conn = NULL;
  g_assert_cmpint(sqlite3_open_v2(db, &conn, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(conn,
                                     "SELECT count(*), sum(dur), max(depth) FROM slice",
                                     -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
  g_assert_cmpint(sqlite3_column_int64(stmt, 0), ==, 3);
  g_assert_cmpint(sqlite3_column_int64(stmt, 1), ==, 500000 + 200500 + 150250);
  g_assert_cmpint(sqlite3_column_int64(stmt, 2), ==, 1);
  sqlite3_finalize(stmt);
  g_assert_cmpint(sqlite3_prepare_v2(conn, "SELECT name, trace_type FROM trace_file",
                                     -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
  g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 0), ==, "client.json");
  g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 1), ==, "json");
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_DONE);
  sqlite3_finalize(stmt);
  sqlite3_close(conn);
  e2e_cleanup(dir);
}

static void test_info_shows_files_machines_clocks_and_stats(void) {
  g_autofree char *dir = e2e_tmpdir();
  const e2e_member members[] = {
      {"server.json", server_json, 0},
      {"client.json", "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[]}", 0},
  };
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 2);
  const char *args[] = {"info", "run.zip", NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 0);
  const char *expected[] = {
      "files:", "run.zip", "server.json", "client.json", "json", "zip",
      "machines:", "raw_id 0  (host)",
      /* client.json sorts first by name: it owns trace time. */
      "trace time: clock 11 of machine 0 (private timeline of file 2)",
      "file [2] machine 0 (json): owns trace time",
      "file [1] machine 0 (json): private timeline tied to trace time at zero offset",
      "events on the timeline: 3 (3 slices, 0 counters, 0 flows)",
      "json_display_time_unit", "file [2]",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(expected); i++)
    if (!strstr(r.out, expected[i]))
      g_error("info lacks '%s':\n%s", expected[i], r.out);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_info_prints_the_clock_graph_as_dot(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_write_file(dir, "client.json", client_json, 0);
  g_autofree char *b = e2e_write_file(dir, "server.json", server_json, 0);
  const char *args[] = {"info", "--clock-graph=dot", "client.json", "server.json", NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 0);
  /* client.json owns trace time (drawn doubled); server.json's private
   * timeline is tied to it by the zero-offset bridge, an edge each way. */
  const char *expected[] = {
      "digraph clocks {",
      "[label=\"TRACE_FILE of client.json, machine 0\" shape=doublecircle]",
      "[label=\"TRACE_FILE of server.json, machine 0\"]",
      "n0 -> n1", "n1 -> n0",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(expected); i++)
    if (!strstr(r.out, expected[i]))
      g_error("dot output lacks '%s':\n%s", expected[i], r.out);
  e2e_result_clear(&r);
  const char *bad[] = {"info", "--clock-graph=png", "client.json", NULL};
  r = e2e_run_in(dir, bad);
  g_assert_cmpint(r.exit_code, ==, 2);
  g_assert_nonnull(strstr(r.err, "--clock-graph"));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_plugins_lists_the_json_reader(void) {
  const char *args[] = {"plugins", NULL};
  e2e_result r = e2e_run(args);
  g_assert_cmpint(r.exit_code, ==, 0);
  g_autofree char *line = NULL;
  for (char *p = r.out; p && *p;) {
    char *nl = strchr(p, '\n');
    g_autofree char *l = nl ? g_strndup(p, (gsize)(nl - p)) : g_strdup(p);
    if (g_str_has_prefix(l, "json ")) {
      line = g_steal_pointer(&l);
      break;
    }
    p = nl ? nl + 1 : NULL;
  }
  if (!line)
    g_error("no json reader listed:\n%s", r.out);
  g_assert_nonnull(strstr(line, "abi 2"));
  g_assert_nonnull(strstr(line, "clockless yes"));
  g_assert_nonnull(strstr(line, "tm-json.so"));
  e2e_result_clear(&r);
}

/* --- bad inputs ---------------------------------------------------------- */

static e2e_result run_query_on(const char *dir, const char *input) {
  const char *args[] = {"query", input, "--sql", "SELECT count(*) AS n FROM slice", NULL};
  return e2e_run_in(dir, args);
}

static void test_truncated_json_keeps_events_before_the_damage(void) {
  g_autofree char *dir = e2e_tmpdir();
  /* An object-form trace cut inside the third event: the two complete
   * events stay, the error names the file, the damage is a stat. */
  const char *cut = "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"a\"},"
                    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1,\"name\":\"b\"},"
                    "{\"ph\":\"X\",\"pid\":1,\"ti";
  g_autofree char *f = e2e_write_file(dir, "cut.json", cut, 0);
  e2e_result r = run_query_on(dir, "cut.json");
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, "cut.json"));
  e2e_assert_text(r.out, "\"n\"\n2\n");
  e2e_result_clear(&r);
  const char *stat_args[] = {"query", "cut.json", "--sql",
                             "SELECT name, value FROM stats WHERE value > 0 ORDER BY name", NULL};
  r = e2e_run_in(dir, stat_args);
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "\"name\",\"value\"\n\"file_parse_error\",1\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_unterminated_array_is_legal(void) {
  g_autofree char *dir = e2e_tmpdir();
  /* Chrome writes a bare array never closed when a trace is cut. */
  const char *open_array = "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"a\"},\n"
                           "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1,\"name\":\"b\"},\n";
  g_autofree char *f = e2e_write_file(dir, "open.json", open_array, 0);
  e2e_result r = run_query_on(dir, "open.json");
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  e2e_assert_text(r.out, "\"n\"\n2\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_not_json_and_empty_and_unknown_fail_clearly(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_write_file(dir, "garbage.bin", "\x01\x02\x03 not a trace", 0);
  g_autofree char *b = e2e_write_file(dir, "empty.json", "", 0);
  g_autofree char *c = e2e_write_file(dir, "brace.json", "{\"traceEvents\": [{\"ph\": \"X\",]]]}", 0);
  const char *cases[][2] = {
      {"garbage.bin", "Unknown trace type"},
      {"empty.json", "empty.json"},
      {"brace.json", "brace.json"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    e2e_assert_query_fails(dir, cases[i][0], cases[i][1]);
  e2e_cleanup(dir);
}

static void test_zip_with_corrupt_member_keeps_the_others(void) {
  g_autofree char *dir = e2e_tmpdir();
  const e2e_member members[] = {
      {"a.json", client_json, 0},
      {"b.json", server_json, 0},
  };
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 2);
  /* Corrupt b.json's compressed bytes: find its local header and overwrite
   * the data after it. */
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(zip, &bytes, &len, NULL));
  char *second = NULL;
  for (gsize i = 1; i + 4 < len; i++)
    if (memcmp(bytes + i, "PK\x03\x04", 4) == 0) {
      second = bytes + i;
      break;
    }
  g_assert_nonnull(second);
  /* Local header: 30 fixed bytes, then the name and the extra field whose
   * lengths are at offsets 26 and 28 (little endian). */
  size_t name_len = (uint8_t)second[26] | (size_t)(uint8_t)second[27] << 8;
  size_t extra_len = (uint8_t)second[28] | (size_t)(uint8_t)second[29] << 8;
  char *data = second + 30 + name_len + extra_len;
  g_assert_true(data + 40 < bytes + len);
  for (int i = 0; i < 40; i++)
    data[i] = (char)0xA5;
  g_assert_true(g_file_set_contents(zip, bytes, (gssize)len, NULL));
  const char *args[] = {"query", "run.zip", "--sql",
                        "SELECT count(*) AS n FROM slice JOIN thread_track tt ON "
                        "slice.track_id = tt.id JOIN thread USING (utid) WHERE tid = 11",
                        NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 1);
  if (!strstr(r.err, "run.zip/b.json"))
    g_error("the error does not name the member: %s", r.err);
  /* a.json's three slices survive. */
  e2e_assert_text(r.out, "\"n\"\n3\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_missing_input_is_named(void) {
  const char *args[] = {"query", "/nonexistent/trace.json", "--sql", "SELECT 1", NULL};
  e2e_result r = e2e_run(args);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, "/nonexistent/trace.json"));
  e2e_result_clear(&r);
}

/* --- systemTraceEvents ------------------------------------------------------ */

/* traceEvents: json_frame on thread 8 of process 7 at 1000000 µs = 1e9 ns
 * for 500 µs. systemTraceEvents (systrace text, seconds): draw B at
 * 1.000100 s, E at 1.000200 s on the same thread -> 1000100000 ns for
 * 100000 ns, depth 1 inside json_frame only if both sit on one timeline;
 * a switch on cpu 0 at 1.000300 s from app (8) to render (9, prio 110);
 * the header lines are comments. */
static const char system_trace_json[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"M\",\"pid\":7,\"name\":\"process_name\",\"args\":{\"name\":\"app\"}},\n"
    "{\"ph\":\"X\",\"pid\":7,\"tid\":8,\"ts\":1000000,\"dur\":500,\"name\":\"json_frame\"}\n"
    "],\n"
    "\"systemTraceEvents\":\"# tracer: nop\\n#\\n"
    "  app-8  ( 7) [000] ...1  1.000100: tracing_mark_write: B|7|draw\\n"
    "  app-8  ( 7) [000] ...1  1.000200: tracing_mark_write: E|7\\n"
    "  app-8  ( 7) [000] d..2  1.000300: sched_switch: prev_comm=app prev_pid=8 "
    "prev_prio=120 prev_state=S ==> next_comm=render next_pid=9 next_prio=110\\n\"}\n";

static const char system_trace_slices_csv[] =
    "\"ts\",\"dur\",\"depth\",\"name\",\"tid\",\"thread\",\"pid\"\n"
    "1000000000,500000,0,\"json_frame\",8,\"app\",7\n"
    "1000100000,100000,1,\"draw\",8,\"app\",7\n";

static const char system_trace_slices_sql[] =
    "SELECT s.ts, s.dur, s.depth, s.name, t.tid, t.name AS thread, p.pid "
    "FROM slice s JOIN thread_track tt ON s.track_id = tt.id "
    "JOIN thread t USING (utid) JOIN process p USING (upid) ORDER BY s.ts";

/* The switch opens render's slice on cpu 0 (the last of its cpu: open). */
static const char system_trace_sched_sql[] =
    "SELECT s.ts, s.dur, s.cpu, t.tid, t.name, s.priority FROM sched s "
    "JOIN thread t USING (utid) ORDER BY s.id";
static const char system_trace_sched_csv[] =
    "\"ts\",\"dur\",\"cpu\",\"tid\",\"name\",\"priority\"\n"
    "1000300000,-1,0,9,\"render\",110\n";

static void test_system_trace_string_shares_the_files_timeline(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(dir, "sys.json", system_trace_json, 0);
  const char *inputs[] = {"sys.json", NULL};
  g_autofree char *slices = e2e_query_in(dir, inputs, system_trace_slices_sql);
  e2e_assert_text(slices, system_trace_slices_csv);
  g_autofree char *sched = e2e_query_in(dir, inputs, system_trace_sched_sql);
  e2e_assert_text(sched, system_trace_sched_csv);
  /* The lines did not bring MONOTONIC: the file's private clock (11) is
   * trace time, and no line was rejected. */
  g_autofree char *clock = e2e_query_in(
      dir, inputs, "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n11\n");
  g_autofree char *stats = e2e_query_in(
      dir, inputs, "SELECT name, value FROM stats WHERE value > 0");
  e2e_assert_text(stats, "\"name\",\"value\"\n");
  e2e_cleanup(dir);
}

static void test_system_trace_stays_aligned_next_to_another_json_file(void) {
  /* other.json goes first and owns trace time; sys.json's private clock is
   * tied to it at zero offset, traceEvents and lines alike: other at 2e9. */
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_write_file(
      dir, "other.json",
      "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2000000,\"dur\":1,\"name\":\"other\"}]", 0);
  g_autofree char *b = e2e_write_file(dir, "sys.json", system_trace_json, 0);
  const char *inputs[] = {"other.json", "sys.json", NULL};
  g_autofree char *slices = e2e_query_in(
      dir, inputs, "SELECT ts, dur, depth, name FROM slice ORDER BY ts");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"depth\",\"name\"\n"
                          "1000000000,500000,0,\"json_frame\"\n"
                          "1000100000,100000,1,\"draw\"\n"
                          "2000000000,1000,0,\"other\"\n");
  g_autofree char *sched = e2e_query_in(dir, inputs, system_trace_sched_sql);
  e2e_assert_text(sched, system_trace_sched_csv);
  e2e_cleanup(dir);
}

static void test_system_trace_is_not_moved_by_a_monotonic_snapshot(void) {
  /* tests/data/proto/systrace_spine.textproto: BOOTTIME 1e9 = MONOTONIC
   * 5e8 on the host machine, and a marker at BOOTTIME 1.2e9. A systrace
   * file's lines would land +5e8; the JSON file's lines are on its private
   * clock, tied to BOOTTIME trace time at zero offset with its
   * traceEvents: draw stays at 1000100000 inside json_frame. */
  g_autofree char *spine_path =
      g_test_build_filename(G_TEST_BUILT, "data", "proto", "systrace_spine.pb", NULL);
  g_autofree char *spine = NULL;
  gsize spine_len = 0;
  g_assert_true(g_file_get_contents(spine_path, &spine, &spine_len, NULL));
  g_autofree char *dir = e2e_tmpdir();
  const e2e_member members[] = {
      {"a.pftrace", spine, spine_len},
      {"b.json", system_trace_json, 0},
  };
  g_autofree char *zip = e2e_write_archive(dir, "both.zip", E2E_ZIP, members, 2);
  const char *inputs[] = {zip, NULL};
  g_autofree char *slices =
      e2e_query(inputs, "SELECT ts, dur, depth, name FROM slice ORDER BY ts");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"depth\",\"name\"\n"
                          "1000000000,500000,0,\"json_frame\"\n"
                          "1000100000,100000,1,\"draw\"\n"
                          "1200000000,0,0,\"proto marker\"\n");
  g_autofree char *sched = e2e_query(inputs, "SELECT ts FROM sched");
  e2e_assert_text(sched, "\"ts\"\n1000300000\n");
  g_autofree char *clock = e2e_query(
      inputs, "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n6\n");
  e2e_cleanup(dir);
}

static void test_fuchsia_system_trace_object_names_threads(void) {
  /* Fuchsia's trace2json form: upstream fails the file; we keep the
   * traceEvents (a at 1 µs), take its thread ("t") and process ("p")
   * records as names (thread 7 of process 1 exists by its record alone,
   * thread 1 is named "main"), and skip the others ("k") with one info
   * stat. Process 1's main thread is thread 1 (docs/sql-surface.md §10). */
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(
      dir, "fuchsia.json",
      "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"a\"}],"
      "\"systemTraceEvents\":{\"type\":\"fuchsia\",\"events\":["
      "{\"ph\":\"p\",\"pid\":1,\"name\":\"proc\"},{\"ph\":\"k\",\"id\":2},"
      "{\"ph\":\"t\",\"pid\":1,\"tid\":7,\"name\":\"worker\"},"
      "{\"ph\":\"t\",\"pid\":1,\"tid\":1,\"name\":\"main\",\"extra\":{\"x\":[1]}}]},"
      "\"other\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,\"name\":\"not an event\"}]}",
      0);
  const char *inputs[] = {"fuchsia.json", NULL};
  g_autofree char *slices =
      e2e_query_in(dir, inputs, "SELECT ts, dur, name FROM slice ORDER BY ts");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"name\"\n1000,1000,\"a\"\n");
  g_autofree char *stats = e2e_query_in(
      dir, inputs, "SELECT name, value, severity FROM stats WHERE value > 0");
  e2e_assert_text(stats, "\"name\",\"value\",\"severity\"\n"
                         "\"json_system_trace_events_skipped\",1,\"info\"\n");
  g_autofree char *threads = e2e_query_in(
      dir, inputs,
      "SELECT t.tid, t.name, p.pid, p.name FROM thread t JOIN process p "
      "USING (upid) WHERE t.tid != 0 ORDER BY t.tid");
  e2e_assert_text(threads, "\"tid\",\"name\",\"pid\",\"name\"\n"
                           "1,\"main\",1,\"proc\"\n7,\"worker\",1,\"proc\"\n");
  e2e_cleanup(dir);
}

static void test_system_trace_of_another_type_is_counted(void) {
  /* A number: not read (upstream fails the file), counted as an error
   * stat; the import itself succeeds with the traceEvents. */
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(
      dir, "odd.json",
      "{\"systemTraceEvents\":12,"
      "\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"a\"}]}",
      0);
  const char *inputs[] = {"odd.json", NULL};
  g_autofree char *out = e2e_query_in(
      dir, inputs,
      "SELECT (SELECT count(*) FROM slice) AS slices, name, value, severity "
      "FROM stats WHERE value > 0");
  e2e_assert_text(out, "\"slices\",\"name\",\"value\",\"severity\"\n"
                       "1,\"json_system_trace_events_invalid\",1,\"error\"\n");
  e2e_cleanup(dir);
}

/* Issue 11: "\u0000" in a name, a category, an arg key and an arg value
 * decodes to a NUL byte, which the string pool cannot hold; it is kept as
 * U+FFFD (EF BF BD) and the rest of the string is not lost. */
static void test_nul_escape_does_not_cut_a_string(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(
      dir, "nul.json",
      "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,"
      "\"name\":\"a\\u0000b\",\"cat\":\"c\\u0000d\","
      "\"args\":{\"k\\u0000\":\"v\\u0000w\"}}]",
      0);
  const char *inputs[] = {"nul.json", NULL};
  g_autofree char *out = e2e_query_in(
      dir, inputs,
      "SELECT hex(s.name), hex(s.category), hex(a.key), hex(a.string_value) "
      "FROM slice s JOIN args a USING (arg_set_id)");
  e2e_assert_text(out, "\"hex(s.name)\",\"hex(s.category)\",\"hex(a.key)\","
                       "\"hex(a.string_value)\"\n"
                       "\"61EFBFBD62\",\"63EFBFBD64\",\"617267732E6BEFBFBD\","
                       "\"76EFBFBD77\"\n");
  e2e_cleanup(dir);
}

/* Async slices are packed as trace_processor's TrackCompressor packs them
 * (docs/formats.md §2.4; upstream track_compressor): in trace-time order, a
 * cookie's slices go to the track that holds the cookie, else to the first
 * track of its set (same name, and process for id2.local) with nothing
 * open, else to a new track; a set's tracks share a track_group_id.
 * "req" cookies 1 (1..5 µs) and 2 (2..3 µs) overlap: two tracks; cookie 3
 * (6..7 µs) comes when both are free and takes the first; "other" is its
 * own set. The b events come out of order in the file: packing follows
 * time, not file order. */
static void test_async_slices_share_tracks_when_they_do_not_overlap(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(
      dir, "async.json",
      "[{\"ph\":\"b\",\"pid\":1,\"tid\":1,\"ts\":6,\"id\":3,\"cat\":\"c\",\"name\":\"req\"},"
      "{\"ph\":\"e\",\"pid\":1,\"tid\":1,\"ts\":7,\"id\":3,\"cat\":\"c\",\"name\":\"req\"},"
      "{\"ph\":\"b\",\"pid\":1,\"tid\":1,\"ts\":1,\"id\":1,\"cat\":\"c\",\"name\":\"req\"},"
      "{\"ph\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,\"id\":2,\"cat\":\"c\",\"name\":\"req\"},"
      "{\"ph\":\"e\",\"pid\":1,\"tid\":1,\"ts\":3,\"id\":2,\"cat\":\"c\",\"name\":\"req\"},"
      "{\"ph\":\"e\",\"pid\":1,\"tid\":1,\"ts\":5,\"id\":1,\"cat\":\"c\",\"name\":\"req\"},"
      "{\"ph\":\"n\",\"pid\":1,\"tid\":1,\"ts\":4,\"id\":9,\"cat\":\"c\",\"name\":\"other\"}]",
      0);
  const char *inputs[] = {"async.json", NULL};
  g_autofree char *out = e2e_query_in(
      dir, inputs,
      "SELECT s.ts, s.dur, s.name, t.name AS track, t.type, "
      "dense_rank() OVER (ORDER BY s.track_id) AS track_no, "
      "dense_rank() OVER (ORDER BY t.track_group_id) AS group_no "
      "FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts");
  e2e_assert_text(out,
      "\"ts\",\"dur\",\"name\",\"track\",\"type\",\"track_no\",\"group_no\"\n"
      "1000,4000,\"req\",\"req\",\"legacy_async_global_slice\",1,1\n"
      "2000,1000,\"req\",\"req\",\"legacy_async_global_slice\",2,1\n"
      "4000,0,\"other\",\"other\",\"legacy_async_global_slice\",3,2\n"
      "6000,1000,\"req\",\"req\",\"legacy_async_global_slice\",1,1\n");
  e2e_cleanup(dir);
}

/* Tracks of the real Chrome traces: all tracks, and the async ones with
 * their groups, by the packing rule above applied to the b/e/n events
 * sorted by ts (python3 json; ties in file order). chrome116: 21 cookies
 * of PipelineReporter (process-scoped) and more, 5 tracks in 2 groups
 * (it had 21 + 1 tracks, one per cookie: about twice the reference's
 * tracks); fuchsia: 302 cookies, 2 tracks in 2 groups. */
static void test_real_traces_tracks(void) {
  static const struct {
    const char *file, *expected;
  } cases[] = {
      {"speedscope-chrome70-worker.json", "20,0,0"},
      {"speedscope-chrome116-devtools-trace.json", "18,5,2"},
      {"catapult-webview.json.gz", "40,0,0"},
      {"catapult-fuchsia_trace.json.gz", "25,2,2"},
      {"ffprofiler-rspack-issue-5429.json.gz", "1,1,1"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    e2e_assert_real_file_row(
        "json", cases[i].file,
        "SELECT (SELECT count(*) FROM track), "
        "(SELECT count(*) FROM track WHERE type LIKE 'legacy_async%'), "
        "(SELECT count(DISTINCT track_group_id) FROM track "
        " WHERE type LIKE 'legacy_async%')",
        cases[i].expected);
}

/* Threads and processes of the real Chrome traces, by the reference's rules
 * (docs/sql-surface.md §10, docs/formats.md §2.2-2.3), counted with python3's
 * json module: every event but P with a ts (or M) resolves (pid, tid), tid 0
 * meaning pid; every process has its main thread (tid == pid); a P event
 * makes only the thread of a sample it keeps (chrome70: 29018/7955, not
 * 29018/35083 whose chunks precede their Profile; chrome116: 6543/5143;
 * rspack: 44554/44554); plus the machine's placeholder pid 0 / tid 0. */
static void test_real_traces_threads_and_processes(void) {
  static const struct {
    const char *file, *expected;
  } cases[] = {
      {"speedscope-chrome70-worker.json", "62,4"},
      {"speedscope-chrome116-devtools-trace.json", "20,5"},
      {"catapult-webview.json.gz", "39,2"},
      {"ffprofiler-rspack-issue-5429.json.gz", "4,3"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    e2e_assert_real_file_row("json", cases[i].file,
                               "SELECT (SELECT count(*) FROM thread), "
                               "(SELECT count(*) FROM process)",
                               cases[i].expected);
}

/* thread.is_main_thread on the real Chrome traces (E2E_MAIN_THREAD_SQL):
 * every JSON event names its pid, so every thread has a process (no
 * NULL) and each process has exactly one main thread, tid == pid, the
 * placeholder pid 0 / tid 0 among them: main = processes, not main =
 * threads - processes, with the counts of the test above (fuchsia's from
 * test_real_fuchsia_trace_still_imports: 411 threads, 71 processes). */
static void test_real_traces_main_threads(void) {
  static const struct {
    const char *file, *expected;
  } cases[] = {
      {"speedscope-chrome70-worker.json", "4,58,0,0"},
      {"speedscope-chrome116-devtools-trace.json", "5,15,0,0"},
      {"catapult-webview.json.gz", "2,37,0,0"},
      {"ffprofiler-rspack-issue-5429.json.gz", "3,1,0,0"},
      {"catapult-fuchsia_trace.json.gz", "71,340,0,0"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    e2e_assert_real_file_row("json", cases[i].file, E2E_MAIN_THREAD_SQL, cases[i].expected);
}

static void test_real_fuchsia_trace_still_imports(void) {
  /* tests/data/real/json/catapult-fuchsia_trace.json.gz: its
   * README counts B/E 66373/66373, n 327, b/e 302/302, i 45 among the
   * traceEvents: 66373 + 327 + 302 + 45 = 67047 slices. Its
   * systemTraceEvents is the Fuchsia object: its 340 thread records and 70
   * process records name threads and processes (python3 json over the
   * file: 340 (pid, tid) of the records and the traceEvents, plus the
   * main thread of each of the 70 pids, plus tid 0: 411 threads, 341
   * named; 70 processes + pid 0), its kernel records one skipped stat, and
   * displayTimeUnit "ns" its own info stat. Its flow v1 ids are reused:
   * 511 of the 540 "s" events (in ts order) start a (id, cat, name) already
   * in flight, which trace_processor never closes for JSON: each is a
   * flow_duplicate_id and the flow goes on from where it was. */
  g_autofree char *path = corpus_real_path("json", "catapult-fuchsia_trace.json.gz");
  const char *inputs[] = {path, NULL};
  g_autofree char *slices = e2e_query(inputs, "SELECT count(*) AS n FROM slice");
  e2e_assert_text(slices, "\"n\"\n67047\n");
  g_autofree char *identity = e2e_query(
      inputs, "SELECT (SELECT count(*) FROM thread), (SELECT count(name) FROM thread), "
              "(SELECT count(*) FROM process), (SELECT count(name) FROM process)");
  g_assert_true(g_str_has_suffix(identity, "\n411,341,71,70\n"));
  g_autofree char *stats = e2e_query(
      inputs, "SELECT name, value FROM stats WHERE value > 0 ORDER BY name");
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         "\"flow_duplicate_id\",511\n"
                         "\"json_display_time_unit\",1\n"
                         "\"json_system_trace_events_skipped\",1\n");
}

/* Flow v2 as trace_processor's FlowTracker links it (docs/formats.md §2.4):
 * flow_out starts, flow_in ends without closing (a JSON flow is never
 * closed), both together step. Flow 1 goes out of "a" and into "b" and
 * "c": two flows from "a"; a second flow_out of 1 on "d" is a
 * flow_duplicate_id and changes nothing; flow 2 steps from "a" to "b" to
 * "c". */
static void test_flow_v2_in_does_not_close_the_flow(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(
      dir, "flows.json",
      "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"a\","
      "\"bind_id\":\"0x1\",\"flow_out\":true},"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"a\","
      "\"bind_id\":\"0x2\",\"flow_out\":true},"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":3,\"dur\":1,\"name\":\"b\","
      "\"bind_id\":\"0x1\",\"flow_in\":true},"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":3,\"dur\":1,\"name\":\"b\","
      "\"bind_id\":\"0x2\",\"flow_in\":true,\"flow_out\":true},"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":5,\"dur\":1,\"name\":\"d\","
      "\"bind_id\":\"0x1\",\"flow_out\":true},"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":4,\"ts\":7,\"dur\":1,\"name\":\"c\","
      "\"bind_id\":\"0x1\",\"flow_in\":true},"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":4,\"ts\":7,\"dur\":1,\"name\":\"c\","
      "\"bind_id\":\"0x2\",\"flow_in\":true}]",
      0);
  const char *inputs[] = {"flows.json", NULL};
  g_autofree char *out = e2e_query_in(
      dir, inputs,
      "SELECT o.name, o.ts, i.name, i.ts, f.trace_id FROM flow f "
      "JOIN slice o ON o.id = f.slice_out JOIN slice i ON i.id = f.slice_in "
      "ORDER BY f.trace_id, i.ts, i.id");
  e2e_assert_text(out, "\"name\",\"ts\",\"name\",\"ts\",\"trace_id\"\n"
                       "\"a\",1000,\"b\",3000,1\n"
                       "\"a\",1000,\"c\",7000,1\n"
                       "\"a\",1000,\"b\",3000,2\n"
                       "\"b\",3000,\"c\",7000,2\n");
  g_autofree char *stats = e2e_query_in(
      dir, inputs, "SELECT name, value FROM stats WHERE value > 0");
  e2e_assert_text(stats, "\"name\",\"value\"\n\"flow_duplicate_id\",1\n");
  e2e_cleanup(dir);
}

/* Flows of the real traces, by that rule over the events sorted by ts
 * (python3 json): webview has 754 flow v2 X events, 130 out, 494 in+out,
 * 130 in, all after their out: 494 + 130 = 624 flows (closing the flow
 * at its first in lost 34 of them, counted as flow_end_without_start);
 * 12 of the out-only events reuse an id still in flight: 12
 * flow_duplicate_id. chrome116: 13 v1 pairs, 13 flows. */
static void test_real_traces_flows(void) {
  static const struct {
    const char *file, *expected;
  } cases[] = {
      {"catapult-webview.json.gz", "624,12"},
      {"speedscope-chrome116-devtools-trace.json", "13,0"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    e2e_assert_real_file_row(
        "json", cases[i].file,
        "SELECT (SELECT count(*) FROM flow), "
        "(SELECT ifnull(sum(value), 0) FROM stats WHERE name LIKE 'flow%')",
        cases[i].expected);
}

/* sys.json PINned to a.json's private clock with offset 500
 * (docs/clock-model.md §9.3): a.json owns trace time; everything of sys.json,
 * its traceEvents and its systemTraceEvents lines alike, lands 500 ns later:
 * json_frame 1000000500, draw 1000100500, the switch 1000300500. */
static void test_system_trace_moves_with_its_pinned_file(void) {
  g_autofree char *dir = e2e_tmpdir();
  const e2e_member members[] = {
      {"a.json",
       "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2000000,\"dur\":1,\"name\":\"other\"}]", 0},
      {"sys.json", system_trace_json, 0},
      {"perfetto_manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"sys.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"},"
       " \"offset_ns\": 500}},\n"
       " {\"path\": \"a.json\"}]}}\n",
       0},
  };
  g_autofree char *zip = e2e_write_archive(dir, "pin.zip", E2E_ZIP, members, 3);
  const char *inputs[] = {"pin.zip", NULL};
  g_autofree char *slices = e2e_query_in(
      dir, inputs, "SELECT ts, dur, depth, name FROM slice ORDER BY ts");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"depth\",\"name\"\n"
                          "1000000500,500000,0,\"json_frame\"\n"
                          "1000100500,100000,1,\"draw\"\n"
                          "2000000000,1000,0,\"other\"\n");
  g_autofree char *sched = e2e_query_in(dir, inputs, "SELECT ts FROM sched");
  e2e_assert_text(sched, "\"ts\"\n1000300500\n");
  e2e_cleanup(dir);
}
/* Many small files: 40 000 one-slice JSON files in a TAR. Per-file work
 * in the host (bridging each file, finding each machine's primary file,
 * setting each file's metadata) once took a pass over every file or run
 * for each file: 20 s for 20 000 files under ASan, so minutes for these.
 * Linear, they take a few seconds. No wall-clock bound here (on the
 * shared CI machine a fixed one failed at 33-43 s when the machine was
 * loaded, and timing is tools/bench's job): a quadratic host would run
 * past this program's 120 s meson timeout. Each slice keeps its own
 * thread (pid = tid = i). */
static void test_forty_thousand_small_files_import_in_linear_time(void) {
  enum { FILES = 40000 };
  g_autofree char *dir = e2e_tmpdir();
  e2e_member *members = g_new0(e2e_member, FILES);
  for (int i = 0; i < FILES; i++) {
    members[i].name = g_strdup_printf("f/t%05d.json", i);
    members[i].content = e2e_json_slice("e", i + 1, i + 1, i + 1);
  }
  g_autofree char *tar = e2e_write_archive(dir, "many.tar", E2E_TAR, members, FILES);
  for (int i = 0; i < FILES; i++) {
    g_free((char *)members[i].name);
    g_free((char *)members[i].content);
  }
  g_free(members);
  const char *inputs[] = {"many.tar", NULL};
  g_autofree char *out = e2e_query_in(dir, inputs,
      "SELECT count(*), count(DISTINCT utid), max(ts) FROM slice "
      "JOIN thread_track tt ON slice.track_id = tt.id");
  e2e_assert_text(out, "\"count(*)\",\"count(DISTINCT utid)\",\"max(ts)\"\n"
                       "40000,40000,40000000\n");
  e2e_cleanup(dir);
}

/* --- V8 CPU profiles (ph P) ------------------------------------------------ */

/* A profile whose second chunk uses a node of the first and lists a child
 * before its parent, on a thread whose name comes from an M event: samples
 * at startTime 2000 µs + 10, + 10 + 5 (×1000 ns), each with the stack from
 * (root) to its node, on that thread. */
static const char v8_profile_json[] =
    "{\"traceEvents\": [\n"
    "{\"ph\":\"M\",\"pid\":3,\"tid\":4,\"name\":\"thread_name\","
    "\"args\":{\"name\":\"v8\"}},\n"
    "{\"ph\":\"P\",\"pid\":3,\"tid\":4,\"ts\":1,\"name\":\"Profile\",\"id\":\"0x1\","
    "\"args\":{\"data\":{\"startTime\":2000}}},\n"
    "{\"ph\":\"P\",\"pid\":3,\"tid\":4,\"ts\":2,\"name\":\"ProfileChunk\",\"id\":\"0x1\","
    "\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[{\"id\":1,\"callFrame\":"
    "{\"functionName\":\"(root)\",\"url\":\"\"}}],\"samples\":[1]},"
    "\"timeDeltas\":[10]}}},\n"
    "{\"ph\":\"P\",\"pid\":3,\"tid\":4,\"ts\":3,\"name\":\"ProfileChunk\",\"id\":\"0x1\","
    "\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
    "{\"id\":3,\"parent\":2,\"callFrame\":{\"functionName\":\"inner\",\"url\":\"b.js\"}},"
    "{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":\"outer\",\"url\":\"a.js\"}}],"
    "\"samples\":[3]},\"timeDeltas\":[5]}}}\n"
    "]}\n";

static void test_v8_profile_samples_have_their_stacks(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = e2e_write_file(dir, "v8.json", v8_profile_json, 0);
  const char *inputs[] = {path, NULL};
  g_autofree char *rows = e2e_query(
      inputs,
      "SELECT s.ts, t.tid, t.name, "
      "(WITH RECURSIVE up(id, depth, frame_id, parent_id) AS ("
      "   SELECT id, depth, frame_id, parent_id FROM stack_profile_callsite"
      "   WHERE id = s.callsite_id"
      " UNION ALL SELECT c.id, c.depth, c.frame_id, c.parent_id"
      "   FROM stack_profile_callsite c JOIN up ON c.id = up.parent_id)"
      " SELECT group_concat(f.name || '@' || ifnull(m.name, ''), '>')"
      " FROM (SELECT * FROM up ORDER BY depth) u"
      " JOIN stack_profile_frame f ON f.id = u.frame_id"
      " LEFT JOIN stack_profile_mapping m ON m.id = f.mapping) AS stack "
      "FROM cpu_profile_stack_sample s JOIN thread t USING (utid) ORDER BY s.ts");
  e2e_assert_text(rows, "\"ts\",\"tid\",\"name\",\"stack\"\n"
                        "2010000,4,\"v8\",\"(root)@\"\n"
                        "2015000,4,\"v8\",\"(root)@>outer@a.js>inner@b.js\"\n");
  e2e_cleanup(dir);
}

/* The real DevTools traces, against counts computed independently with
 * python3's json module (gzip for .gz): for each P event in file order, a
 * Profile opens (pid, id) at args.data.startTime; a ProfileChunk of a
 * (pid, id) is applied to it if it is open, else dropped and counted (as
 * upstream's tokenizer does, reading P events in file order: docs/formats.md
 * §2.3); nodes join their profile by id (first
 * wins), a node's parent is its "parent", else the node whose "children"
 * lists it; a node's frame is (functionName or "(anonymous)", url or none)
 * and its callsite its parent's plus its frame; each sample adds its delta
 * to the running time and takes its node's callsite. Columns: samples,
 * distinct frames, distinct callsites, distinct urls (mappings), sum of
 * the samples' callsite depths (root = 0), samples whose leaf is (idle),
 * sampled threads, first and last sample ts (µs × 1000), json_v8_profile_*
 * stats. chrome70-worker: the Profile of id 0xa (tid 7443) comes after
 * its 14 chunks (tid 35083) in the file, so those are dropped: 1980
 * samples of one thread, not 3380 of two, and thread 35083, which writes
 * nothing else, does not exist (62 threads, thread count below). */
static void test_v8_profiles_of_real_traces(void) {
  static const struct {
    const char *file, *expected;
  } cases[] = {
      {"speedscope-chrome116-devtools-trace.json",
       "1600,8,9,2,2052,1376,1,9632407418000,9632672557000,0"},
      {"ffprofiler-rspack-issue-5429.json.gz",
       "206,104,229,24,2173,106,1,13291000,267666000,0"},
      {"speedscope-chrome70-worker.json",
       "1980,51,117,15,3074,1294,1,433087565247000,433087830221000,14"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    e2e_assert_real_file_row(
        "json", cases[i].file,
        "SELECT (SELECT count(*) FROM cpu_profile_stack_sample), "
        "(SELECT count(*) FROM stack_profile_frame), "
        "(SELECT count(*) FROM stack_profile_callsite), "
        "(SELECT count(*) FROM stack_profile_mapping), "
        "(SELECT sum(c.depth) FROM cpu_profile_stack_sample s "
        " JOIN stack_profile_callsite c ON c.id = s.callsite_id), "
        "(SELECT count(*) FROM cpu_profile_stack_sample s "
        " JOIN stack_profile_callsite c ON c.id = s.callsite_id "
        " JOIN stack_profile_frame f ON f.id = c.frame_id WHERE f.name = '(idle)'), "
        "(SELECT count(DISTINCT utid) FROM cpu_profile_stack_sample), "
        "(SELECT min(ts) FROM cpu_profile_stack_sample), "
        "(SELECT max(ts) FROM cpu_profile_stack_sample), "
        "(SELECT ifnull(sum(value), 0) FROM stats WHERE name LIKE 'json_v8_profile_%')",
        cases[i].expected);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/json/zip-of-two-json-files-merges-slices",
                  test_zip_of_two_json_files_merges_slices);
  g_test_add_func("/e2e/json/loose-files-merge-like-archive-members",
                  test_loose_files_merge_like_archive_members);
  g_test_add_func("/e2e/json/threads-processes-and-tracks-are-attributed",
                  test_threads_processes_and_tracks_are_attributed);
  g_test_add_func("/e2e/json/gzip-and-tar-gz-inputs", test_gzip_and_tar_gz_inputs);
  g_test_add_func("/e2e/cli/output-formats", test_output_formats);
  g_test_add_func("/e2e/cli/import-writes-a-standalone-sqlite-file",
                  test_import_writes_a_standalone_sqlite_file);
  g_test_add_func("/e2e/cli/info-shows-files-machines-clocks-and-stats",
                  test_info_shows_files_machines_clocks_and_stats);
  g_test_add_func("/e2e/cli/plugins-lists-the-json-reader", test_plugins_lists_the_json_reader);
  g_test_add_func("/e2e/json/system-trace/moves-with-its-pinned-file",
                  test_system_trace_moves_with_its_pinned_file);
  g_test_add_func("/e2e/cli/info-prints-the-clock-graph-as-dot",
                  test_info_prints_the_clock_graph_as_dot);
  g_test_add_func("/e2e/errors/truncated-json-keeps-events-before-the-damage",
                  test_truncated_json_keeps_events_before_the_damage);
  g_test_add_func("/e2e/errors/unterminated-array-is-legal",
                  test_unterminated_array_is_legal);
  g_test_add_func("/e2e/errors/not-json-empty-and-unknown-fail-clearly",
                  test_not_json_and_empty_and_unknown_fail_clearly);
  g_test_add_func("/e2e/errors/zip-with-corrupt-member-keeps-the-others",
                  test_zip_with_corrupt_member_keeps_the_others);
  g_test_add_func("/e2e/errors/missing-input-is-named", test_missing_input_is_named);
  g_test_add_func("/e2e/json/v8-profile/samples-have-their-stacks",
                  test_v8_profile_samples_have_their_stacks);
  g_test_add_func("/e2e/json/strings/nul-escape-does-not-cut-a-string",
                  test_nul_escape_does_not_cut_a_string);
  g_test_add_func("/e2e/json/async/slices-share-tracks-when-they-do-not-overlap",
                  test_async_slices_share_tracks_when_they_do_not_overlap);
  g_test_add_func("/e2e/json/async/real-traces-tracks", test_real_traces_tracks);
  g_test_add_func("/e2e/json/flows/v2-in-does-not-close-the-flow",
                  test_flow_v2_in_does_not_close_the_flow);
  g_test_add_func("/e2e/json/flows/real-traces", test_real_traces_flows);
  g_test_add_func("/e2e/json/identity/real-traces-threads-and-processes",
                  test_real_traces_threads_and_processes);
  g_test_add_func("/e2e/json/identity/real-traces-main-threads-are-tid-equal-pid",
                  test_real_traces_main_threads);
  g_test_add_func("/e2e/json/v8-profile/real-traces-match-independent-counts",
                  test_v8_profiles_of_real_traces);
  g_test_add_func("/e2e/json/system-trace/string-shares-the-files-timeline",
                  test_system_trace_string_shares_the_files_timeline);
  g_test_add_func("/e2e/json/system-trace/stays-aligned-next-to-another-json-file",
                  test_system_trace_stays_aligned_next_to_another_json_file);
  g_test_add_func("/e2e/json/system-trace/is-not-moved-by-a-monotonic-snapshot",
                  test_system_trace_is_not_moved_by_a_monotonic_snapshot);
  g_test_add_func("/e2e/json/system-trace/fuchsia-object-names-threads",
                  test_fuchsia_system_trace_object_names_threads);
  g_test_add_func("/e2e/json/system-trace/another-type-is-counted",
                  test_system_trace_of_another_type_is_counted);
  g_test_add_func("/e2e/json/inputs/forty-thousand-small-files-import-in-linear-time",
                  test_forty_thousand_small_files_import_in_linear_time);
  g_test_add_func("/e2e/json/system-trace/real-fuchsia-trace-still-imports",
                  test_real_fuchsia_trace_still_imports);
  return g_test_run();
}
