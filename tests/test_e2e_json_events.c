/*
 * End-to-end: what Chrome JSON events become through the CLI: strings with
 * NUL escapes, async slices packed onto tracks, threads and processes,
 * flows (v1 and v2) and legacy V8 CPU profiles, on small inputs worked
 * out here and on the real traces of tests/data/real/json. Beside it:
 * test_e2e_json.c and test_e2e_json_system_trace.c.
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
  return g_test_run();
}
