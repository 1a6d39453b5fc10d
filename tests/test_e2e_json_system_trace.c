/*
 * End-to-end: a Chrome JSON trace's systemTraceEvents (systrace text in a
 * string, or Fuchsia's object form) on the JSON file's timeline, beside
 * other files and under clock snapshots and pins. Beside it:
 * test_e2e_json.c and test_e2e_json_events.c.
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
int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/json/system-trace/moves-with-its-pinned-file",
                  test_system_trace_moves_with_its_pinned_file);
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
  g_test_add_func("/e2e/json/system-trace/real-fuchsia-trace-still-imports",
                  test_real_fuchsia_trace_still_imports);
  return g_test_run();
}
