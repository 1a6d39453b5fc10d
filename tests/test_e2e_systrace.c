/*
 * End-to-end: the CLI on systrace / ftrace text. Small fixtures are the C
 * strings below, with the expected rows worked out by hand in comments;
 * the real files of tests/data/real/systrace are checked against
 * counts taken from their text with grep (commands in the comments).
 */
#include <glib.h>
#include <string.h>

#include "corpus.h"
#include "e2e_support.h"

/* --- wrappers ------------------------------------------------------------ */

/* Every wrapper holds the same two lines: app (tid 100) begins "work" at
 * 1.000000 s and ends it at 1.000500 s: one slice at 1e9 ns, 500 us long,
 * on MONOTONIC, which is trace time when nothing else claims it. */
static const char slice_sql[] =
    "SELECT s.ts, s.dur, s.name, t.tid, t.name AS thread FROM slice s "
    "JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid)";
static const char slice_expected[] =
    "\"ts\",\"dur\",\"name\",\"tid\",\"thread\"\n"
    "1000000000,500000,\"work\",100,\"app\"\n";

static void check_wrapper(const char *name, const char *content) {
  g_autofree char *out = e2e_query_text(name, content, slice_sql);
  e2e_assert_text(out, slice_expected);
}

static void test_wrapper_plain_with_tgid(void) {
  check_wrapper("a.systrace",
      "# tracer: nop\n"
      "#\n"
      "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
      "             app-100   (  100) [000] ...1     1.000000: tracing_mark_write: B|100|work\n"
      "             app-100   (-----) [000] ...1     1.000500: tracing_mark_write: E|100\n");
}

static void test_wrapper_plain_without_tgid_or_header(void) {
  check_wrapper("a.systrace",
      " app-100 [000] ...1 1.000000: tracing_mark_write: B|100|work\n"
      " app-100 [000] ...1 1.000500: tracing_mark_write: E\n");
}

static void test_wrapper_atrace_prefix(void) {
  check_wrapper("a.systrace",
      "capturing trace... done\nTRACE:\n"
      "# tracer: nop\n"
      "app-100 [000] d..2 1.000000: tracing_mark_write: B|100|work\n"
      "app-100 [000] d..2 1.000500: tracing_mark_write: E|100\n");
}

static void test_wrapper_trace_cmd_report(void) {
  /* No flags column; "print" events carry the writer's address first. */
  check_wrapper("a.txt",
      "version = 6\n"
      "cpus=2\n"
      "           app-100   [001]     1.000000: print:                0xffff00000819ff24s: B|100|work\n"
      "           app-100   [001]     1.000500: print:                0xffff00000819ff24s: E|100\n");
}

/* A PROCESS DUMP block and a JSON block before the ftrace block are
 * skipped; the ftrace block after the first one is read too (issue 11:
 * trace_processor stops at the first block's </script>, which loses data):
 * "work" from the first block, "later" from the second. */
static void test_wrapper_html_reads_every_ftrace_block(void) {
  g_autofree char *out = e2e_query_text("a.html",
      "<!DOCTYPE html>\n<html>\n<head><script>var x = '.trace-data';</script></head>\n"
      "<body>\n"
      "  <script class=\"trace-data\" type=\"application/text\">\n"
      "PROCESS DUMP\nUSER PID PPID VSZ RSS WCHAN PC NAME\nroot 1 0 0 0 0 0 init\n"
      "  </script>\n"
      "  <script class=\"trace-data\" type=\"application/text\">\n"
      "{\"traceEvents\": []}  </script>\n"
      "  <script class=\"trace-data\" type=\"application/text\">\n"
      "# tracer: nop\n"
      "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
      "             app-100   (  100) [000] ...1     1.000000: tracing_mark_write: B|100|work\n"
      "             app-100   (  100) [000] ...1     1.000500: tracing_mark_write: E|100\n"
      "  </script>\n"
      "  <script class=\"trace-data\" type=\"application/text\">\n"
      "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
      "             app-100   (  100) [000] ...1     2.000000: tracing_mark_write: B|100|later\n"
      "             app-100   (  100) [000] ...1     2.000100: tracing_mark_write: E|100\n"
      "  </script>\n</body>\n</html>\n", slice_sql);
  e2e_assert_text(out, "\"ts\",\"dur\",\"name\",\"tid\",\"thread\"\n"
                       "1000000000,500000,\"work\",100,\"app\"\n"
                       "2000000000,100000,\"later\",100,\"app\"\n");
}

/* Issue 11: a trace-data block of ftrace text without the "# TASK-PID"
 * legend is read (its first line matches the grammar); one whose lines do
 * not parse after '#' header lines is damage, named with the offset of its
 * first line (16 + 7 + 52 + 14 bytes of the lines before), not an import
 * of nothing. */
static void test_wrapper_html_block_without_task_pid_legend(void) {
  check_wrapper("a.html",
      "<!DOCTYPE html>\n<html>\n"
      "<script class=\"trace-data\" type=\"application/text\">\n"
      "             app-100   (  100) [000] ...1     1.000000: tracing_mark_write: B|100|work\n"
      "             app-100   (  100) [000] ...1     1.000500: tracing_mark_write: E|100\n"
      "</script>\n</html>\n");
  check_wrapper("b.html",
      "<!DOCTYPE html>\n<html>\n"
      "<script class=\"trace-data\" type=\"application/text\">\n"
      "# tracer: nop\n"
      "             app-100   (  100) [000] ...1     1.000000: tracing_mark_write: B|100|work\n"
      "             app-100   (  100) [000] ...1     1.000500: tracing_mark_write: E|100\n"
      "</script>\n</html>\n");
  g_autofree char *dir = e2e_tmpdir();
  static const char garbage[] =
      "<!DOCTYPE html>\n<html>\n"
      "<script class=\"trace-data\" type=\"application/text\">\n"
      "# tracer: nop\n"
      "this is not ftrace\n"
      "</script>\n</html>\n";
  g_autofree char *f = e2e_write_file(dir, "c.html", garbage, 0);
  e2e_assert_query_fails(dir, "c.html",
                         "at byte 89: not ftrace text: no line matches the line grammar");
  e2e_cleanup(dir);
}

/* Plain ftrace text needs no legend either: a '#' line without TASK-PID
 * and data lines are read. */
static void test_wrapper_plain_text_without_task_pid_legend(void) {
  check_wrapper("a.txt",
      "# tracer: nop\n"
      " app-100 [000] ...1 1.000000: tracing_mark_write: B|100|work\n"
      " app-100 [000] ...1 1.000500: tracing_mark_write: E|100\n");
}

static void test_wrapper_html_long_viewer_lines_are_not_damage(void) {
  /* Minified viewer code makes lines longer than the reader's 64 KiB line
   * limit, the first one included: outside trace data they are skipped
   * without a stat. */
  GString *html = g_string_new("<!DOCTYPE html><html><head><script>var v='");
  for (int i = 0; i < 100000; i++)
    g_string_append_c(html, 'v');
  g_string_append(html, "';</script>\n<script>");
  for (int i = 0; i < 100000; i++)
    g_string_append_c(html, 'w');
  g_string_append(html,
      "</script>\n"
      "  <script class=\"trace-data\" type=\"application/text\">\n"
      "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
      "             app-100   (  100) [000] ...1     1.000000: tracing_mark_write: B|100|work\n"
      "             app-100   (  100) [000] ...1     1.000500: tracing_mark_write: E|100\n"
      "  </script>\n</html>\n");
  check_wrapper("long.html", html->str);
  g_autofree char *stats = e2e_query_text("long.html", html->str,
      "SELECT value FROM stats WHERE name = 'systrace_line_too_long'");
  e2e_assert_text(stats, "\"value\"\n0\n");
  g_string_free(html, TRUE);
}

static void test_html_process_dump_names_processes_and_threads(void) {
  /* The ps tables before the ftrace block: process 100 is
   * "com.example.app" (parent 1, "init"), thread 101 of it "RenderThread".
   * The ftrace lines' task field ("app") names thread 100 but leaves the
   * process its full name. A row whose PID is not a number is counted. */
  const char *html =
      "<!DOCTYPE html>\n<html>\n"
      "  <script class=\"trace-data\" type=\"application/text\">\n"
      "PROCESS DUMP\n"
      "USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME\n"
      "root             1     0   10000   1000 SyS_epoll_wait      0 S init\n"
      "u0_a1          100     1   20000   2000 SyS_epoll_wait      0 S com.example.app\n"
      "u0_a1          zzz     1   20000   2000 SyS_epoll_wait      0 S broken\n"
      "USER           PID   TID CMD\n"
      "u0_a1          100   101 RenderThread\n"
      "  </script>\n"
      "  <script class=\"trace-data\" type=\"application/text\">\n"
      "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
      "             app-100   (  100) [000] ...1     1.000000: tracing_mark_write: B|100|work\n"
      "             app-100   (  100) [000] ...1     1.000500: tracing_mark_write: E|100\n"
      "  </script>\n</html>\n";
  g_autofree char *procs = e2e_query_text("dump.html", html,
      "SELECT p.pid, p.name, pp.pid AS parent FROM process p "
      "LEFT JOIN process pp ON p.parent_upid = pp.upid WHERE p.pid != 0 ORDER BY p.pid");
  e2e_assert_text(procs,
      "\"pid\",\"name\",\"parent\"\n"
      "1,\"init\",\"[NULL]\"\n"
      "100,\"com.example.app\",1\n");
  g_autofree char *threads = e2e_query_text("dump.html", html,
      "SELECT t.tid, t.name, p.pid FROM thread t JOIN process p USING (upid) "
      "WHERE t.tid != 0 ORDER BY t.tid");
  e2e_assert_text(threads,
      "\"tid\",\"name\",\"pid\"\n1,\"[NULL]\",1\n100,\"app\",100\n"
      "101,\"RenderThread\",100\n");
  g_autofree char *failures = e2e_query_text("dump.html", html,
      "SELECT value FROM stats WHERE name = 'systrace_parse_failure'");
  e2e_assert_text(failures, "\"value\"\n1\n");
}

static void test_wrapper_legacy_html_javascript_string(void) {
  /* Lines end in `\n\`; the old marker event is named "0". */
  check_wrapper("a.html",
      "<!DOCTYPE html>\n<html>\n<body>\n<script>\n"
      "  var linuxPerfData = \"\\\n"
      "# tracer: nop\\n\\\n"
      "#           TASK-PID    CPU#    TIMESTAMP  FUNCTION\\n\\\n"
      "             app-100   [000]     1.000000: 0: B|100|work\\n\\\n"
      "             app-100   [000]     1.000500: 0: E\\n\";\n"
      "</script>\n</body>\n</html>\n");
}

/* --- payloads -------------------------------------------------------------- */

static void test_mark_write_counters_async_and_instants(void) {
  /* C -> atrace_counter on process 100; S/F with cookie 7 -> one async
   * slice 1.0 .. 1.5 s with arg cookie = 7; I -> zero-length slice;
   * trace_event_clock_sync is ignored; a fractional counter value fails
   * the line (int64 only), as does an unknown payload. */
  const char *trace =
      "# tracer: nop\n"
      "app-101 (100) [000] ...1 1.000000: tracing_mark_write: C|100|queue|3\n"
      "app-101 (100) [000] ...1 1.000000: tracing_mark_write: S|100|load|7\n"
      "app-101 (100) [000] ...1 1.200000: tracing_mark_write: I|100|tick\n"
      "app-101 (100) [000] ...1 1.300000: tracing_mark_write: trace_event_clock_sync: parent_ts=1.3\n"
      "app-101 (100) [000] ...1 1.400000: tracing_mark_write: C|100|queue|2.5\n"
      "app-101 (100) [000] ...1 1.450000: tracing_mark_write: Q|100|what\n"
      "app-101 (100) [000] ...1 1.500000: tracing_mark_write: F|100|load|7\n";
  g_autofree char *counters = e2e_query_text("a.systrace", trace,
      "SELECT c.ts, c.value, t.name, t.type, p.pid FROM counter c "
      "JOIN process_counter_track t ON c.track_id = t.id JOIN process p USING (upid)");
  e2e_assert_text(counters,
      "\"ts\",\"value\",\"name\",\"type\",\"pid\"\n"
      "1000000000,3.000000,\"queue\",\"atrace_counter\",100\n");
  g_autofree char *slices = e2e_query_text("a.systrace", trace,
      "SELECT s.ts, s.dur, s.name, t.type, "
      "(SELECT display_value FROM args a WHERE a.arg_set_id = s.arg_set_id "
      "AND a.key = 'cookie') AS cookie FROM slice s JOIN track t ON s.track_id = t.id "
      "ORDER BY s.ts");
  e2e_assert_text(slices,
      "\"ts\",\"dur\",\"name\",\"type\",\"cookie\"\n"
      "1000000000,500000000,\"load\",\"atrace_async_slice\",\"7\"\n"
      "1200000000,0,\"tick\",\"thread_execution\",\"[NULL]\"\n");
  g_autofree char *stats = e2e_query_text("a.systrace", trace,
      "SELECT value FROM stats WHERE name = 'systrace_parse_failure'");
  e2e_assert_text(stats, "\"value\"\n2\n");
  /* Thread 101 belongs to process 100 (its tgid column). */
  g_autofree char *threads = e2e_query_text("a.systrace", trace,
      "SELECT t.tid, t.name, p.pid FROM thread t JOIN process p USING (upid) "
      "WHERE t.tid = 101");
  e2e_assert_text(threads, "\"tid\",\"name\",\"pid\"\n101,\"app\",100\n");
}

/* S/F slices of one (process, name) share tracks when they do not overlap
 * (trace_processor's TrackCompressor, unnestable: docs/formats.md §3.3): the
 * set of "anim" has cookies 1 (1.0..1.5 s) and 2 (1.2..1.3 s), which
 * overlap, then 3 (2.0..2.1 s), which takes the first free track; a
 * repeated S of cookie 1 is ignored. "load" is its own set (group). */
static void test_async_slices_share_tracks_when_they_do_not_overlap(void) {
  const char *trace =
      "# tracer: nop\n"
      "app-101 (100) [000] ...1 1.000000: tracing_mark_write: S|100|anim|1\n"
      "app-101 (100) [000] ...1 1.100000: tracing_mark_write: S|100|anim|1\n"
      "app-101 (100) [000] ...1 1.200000: tracing_mark_write: S|100|anim|2\n"
      "app-101 (100) [000] ...1 1.250000: tracing_mark_write: S|100|load|2\n"
      "app-101 (100) [000] ...1 1.300000: tracing_mark_write: F|100|anim|2\n"
      "app-101 (100) [000] ...1 1.350000: tracing_mark_write: F|100|load|2\n"
      "app-101 (100) [000] ...1 1.500000: tracing_mark_write: F|100|anim|1\n"
      "app-101 (100) [000] ...1 2.000000: tracing_mark_write: S|100|anim|3\n"
      "app-101 (100) [000] ...1 2.100000: tracing_mark_write: F|100|anim|3\n";
  g_autofree char *out = e2e_query_text("a.systrace", trace,
      "SELECT s.ts, s.dur, s.name, "
      "dense_rank() OVER (ORDER BY s.track_id) AS track_no, "
      "dense_rank() OVER (ORDER BY t.track_group_id) AS group_no "
      "FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts");
  e2e_assert_text(out,
      "\"ts\",\"dur\",\"name\",\"track_no\",\"group_no\"\n"
      "1000000000,500000000,\"anim\",1,1\n"
      "1200000000,100000000,\"anim\",2,1\n"
      "1250000000,100000000,\"load\",3,2\n"
      "2000000000,100000000,\"anim\",1,1\n");
  /* The decompressed atrace file: 17 S and 9 F lines of 17 cookies in 5
   * (tgid, name) sets; the same rule over its lines sorted by time
   * (python3 re) gives 13 tracks (one per cookie made 17). */
  e2e_assert_real_file_row(
      "systrace", "catapult-decompressed_atrace_data.txt",
      "SELECT count(*), count(DISTINCT track_group_id) FROM track "
      "WHERE type = 'atrace_async_slice'",
      "13,5");
}

static void test_mark_write_named_track_slices(void) {
  /* N -> instant on the process's track "net"; G/H with cookie 3 -> one
   * slice 2.0 .. 2.25 s on track "net" (H in its 4-field form); the second
   * G/H pair uses the 5-field H: 2.5 .. 2.75 s. */
  const char *trace =
      "# tracer: nop\n"
      "app-101 (100) [000] ...1 2.000000: tracing_mark_write: N|100|net|ping\n"
      "app-101 (100) [000] ...1 2.000000: tracing_mark_write: G|100|net|fetch|3\n"
      "app-101 (100) [000] ...1 2.250000: tracing_mark_write: H|100|net|3\n"
      "app-101 (100) [000] ...1 2.500000: tracing_mark_write: G|100|net|store|4\n"
      "app-101 (100) [000] ...1 2.750000: tracing_mark_write: H|100|net|store|4\n";
  g_autofree char *out = e2e_query_text("a.systrace", trace,
      "SELECT s.ts, s.dur, s.name, t.type, t.name AS track FROM slice s "
      "JOIN track t ON s.track_id = t.id ORDER BY s.ts, s.dur");
  e2e_assert_text(out,
      "\"ts\",\"dur\",\"name\",\"type\",\"track\"\n"
      "2000000000,0,\"ping\",\"atrace_async_slice_for_track\",\"net\"\n"
      "2000000000,250000000,\"fetch\",\"atrace_async_slice_for_track\",\"net\"\n"
      "2500000000,250000000,\"store\",\"atrace_async_slice_for_track\",\"net\"\n");
}

static void test_cpu_frequency_and_idle_become_cpu_counters(void) {
  const char *trace =
      "# tracer: nop\n"
      "<idle>-0 [001] d..2 5.000000: cpu_frequency: state=1200000 cpu_id=1\n"
      "<idle>-0 [001] d..2 5.000001: cpu_idle: state=2 cpu_id=1\n"
      "<idle>-0 [001] d..2 5.000002: cpu_idle: state=4294967295 cpu_id=1\n";
  g_autofree char *out = e2e_query_text("a.systrace", trace,
      "SELECT c.ts, c.value, t.name, t.type, t.cpu FROM counter c "
      "JOIN cpu_counter_track t ON c.track_id = t.id ORDER BY c.ts");
  e2e_assert_text(out,
      "\"ts\",\"value\",\"name\",\"type\",\"cpu\"\n"
      "5000000000,1200000.000000,\"cpufreq\",\"cpu_frequency\",1\n"
      "5000001000,2.000000,\"cpuidle\",\"cpu_idle\",1\n"
      "5000002000,4294967295.000000,\"cpuidle\",\"cpu_idle\",1\n");
  /* clock_* events: one counter track per clock name (the bare token). */
  g_autofree char *clocks = e2e_query_text("a.systrace",
      "# tracer: nop\n"
      "a-1 [000] ...1 5.000000: clock_set_rate: pwrcl_clk state=518400000 cpu_id=0\n"
      "a-1 [000] ...1 5.000001: clock_enable: gpu_clk state=1 cpu_id=0\n"
      "a-1 [000] ...1 5.000002: clock_disable: gpu_clk state=0 cpu_id=0\n"
      "a-1 [000] ...1 5.000003: clock_disable: state=0 cpu_id=0\n",
      "SELECT c.ts, c.value, t.name, t.type, "
      "(SELECT value FROM stats WHERE name = 'systrace_parse_failure') AS failures "
      "FROM counter c JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts");
  e2e_assert_text(clocks,
      "\"ts\",\"value\",\"name\",\"type\",\"failures\"\n"
      "5000000000,518400000.000000,\"pwrcl_clk\",\"clock_frequency\",1\n"
      "5000001000,1.000000,\"gpu_clk\",\"clock_state\",1\n"
      "5000002000,0.000000,\"gpu_clk\",\"clock_state\",1\n");
  /* cpu rows are dense: cpu 1 brings cpu 0 along, so ucpu = cpu. */
  g_autofree char *cpus = e2e_query_text("a.systrace", trace,
      "SELECT ucpu, cpu, machine_id FROM cpu ORDER BY ucpu");
  e2e_assert_text(cpus, "\"ucpu\",\"cpu\",\"machine_id\"\n0,0,0\n1,1,0\n");
}

/* --- scheduling --------------------------------------------------------------- */

/* Two cpus. Lines (ts in us after 10 s):
 *   0   cpu0 idle -> app(100)            prio 120
 *   100 app wakes worker(200) on cpu1
 *   150 cpu1 idle -> worker              prio 110
 *   300 cpu0 app (S) -> idle
 *   400 cpu1 worker (R+) -> idle
 *   500 idle wakes app
 * utids: 0 idle (placeholder), 1 app (first seen in line 1), 2 worker. */
static const char sched_trace[] =
    "# tracer: nop\n"
    "<idle>-0 [000] d..2 10.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n"
    "app-100 [000] d..2 10.000100: sched_waking: comm=worker pid=200 prio=110 target_cpu=001\n"
    "<idle>-0 [001] d..2 10.000150: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=worker next_pid=200 next_prio=110\n"
    "app-100 [000] d..2 10.000300: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
    "worker-200 [001] d..2 10.000400: sched_switch: prev_comm=worker prev_pid=200 prev_prio=110 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120\n"
    "<idle>-0 [000] d..2 10.000500: sched_wakeup: comm=app pid=100 prio=120 target_cpu=000\n";

static void test_switches_become_sched_slices(void) {
  /* Each switch ends the cpu's slice (end_state = prev_state) and opens
   * one for the next thread; the last slice of each cpu stays open. */
  g_autofree char *out = e2e_query_text("a.systrace", sched_trace,
      "SELECT id, ts, dur, cpu, utid, end_state, priority, ucpu FROM sched ORDER BY id");
  e2e_assert_text(out,
      "\"id\",\"ts\",\"dur\",\"cpu\",\"utid\",\"end_state\",\"priority\",\"ucpu\"\n"
      "0,10000000000,300000,0,1,\"S\",120,0\n"
      "1,10000150000,250000,1,2,\"R+\",110,1\n"
      "2,10000300000,-1,0,0,\"[NULL]\",120,0\n"
      "3,10000400000,-1,1,0,\"[NULL]\",120,1\n");
  g_autofree char *names = e2e_query_text("a.systrace", sched_trace,
      "SELECT utid, tid, name, is_idle FROM thread ORDER BY utid");
  e2e_assert_text(names,
      "\"utid\",\"tid\",\"name\",\"is_idle\"\n"
      "0,0,\"swapper\",1\n1,100,\"app\",0\n2,200,\"worker\",0\n");
  /* Only scheduling rows here: the bounds are theirs, from the first
   * switch to the last row's start (open rows count as zero length). */
  g_autofree char *bounds = e2e_query_text("a.systrace", sched_trace,
      "SELECT start_ts, end_ts FROM trace_bounds");
  e2e_assert_text(bounds, "\"start_ts\",\"end_ts\"\n10000000000,10000500000\n");
}

static void test_switches_and_wakeups_become_thread_states(void) {
  /* app: Running 0-300 on cpu0, S 300-500, R (woken by idle) from 500.
   * worker: R 100-150 (woken by app, whose Running row is 0), Running
   * 150-400 on cpu1, R+ from 400. The idle thread has no states. */
  g_autofree char *out = e2e_query_text("a.systrace", sched_trace,
      "SELECT id, ts, dur, cpu, utid, state, waker_utid, waker_id FROM thread_state ORDER BY id");
  e2e_assert_text(out,
      "\"id\",\"ts\",\"dur\",\"cpu\",\"utid\",\"state\",\"waker_utid\",\"waker_id\"\n"
      "0,10000000000,300000,0,1,\"Running\",\"[NULL]\",\"[NULL]\"\n"
      "1,10000100000,50000,\"[NULL]\",2,\"R\",1,0\n"
      "2,10000150000,250000,1,2,\"Running\",\"[NULL]\",\"[NULL]\"\n"
      "3,10000300000,200000,\"[NULL]\",1,\"S\",\"[NULL]\",\"[NULL]\"\n"
      "4,10000400000,-1,\"[NULL]\",2,\"R+\",\"[NULL]\",\"[NULL]\"\n"
      "5,10000500000,-1,\"[NULL]\",1,\"R\",0,\"[NULL]\"\n");
}

static void test_numeric_prev_state_is_spelled_as_letters(void) {
  /* trace-cmd report prints the state bits: 0 R, 1 S, 2|128 DK,
   * 4096 preempted R+ (Linux 4.x values). The first switch's prev_state
   * ends no recorded slice, so four states show. */
  const char *trace =
      "version = 6\ncpus=1\n"
      " a-1 [000] 1.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=0 next_comm=b next_pid=2 next_prio=120\n"
      " b-2 [000] 1.000001: sched_switch: prev_comm=b prev_pid=2 prev_prio=120 prev_state=1 next_comm=a next_pid=1 next_prio=120\n"
      " a-1 [000] 1.000002: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=130 next_comm=b next_pid=2 next_prio=120\n"
      " b-2 [000] 1.000003: sched_switch: prev_comm=b prev_pid=2 prev_prio=120 prev_state=4096 next_comm=a next_pid=1 next_prio=120\n"
      " a-1 [000] 1.000004: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=0 next_comm=b next_pid=2 next_prio=120\n";
  g_autofree char *out = e2e_query_text("a.txt", trace,
      "SELECT end_state FROM sched WHERE end_state IS NOT NULL ORDER BY id");
  e2e_assert_text(out, "\"end_state\"\n\"S\"\n\"DK\"\n\"R+\"\n\"R\"\n");
}

/* Task names may hold blanks (Android's "Signal Catcher" and "Jit thread
 * pool"), and the kernel prints sched_switch's and sched_waking's comms as
 * they are. Threads 300 and 301 never write a line themselves, so their
 * names come only from these comm values: whole, not cut at the blank.
 * The switches: 300 runs on cpu 0 from 20.0001 s to 20.0003 s and leaves
 * sleeping (prev_state=S, read up to "==>"), so one closed sched row. */
static void test_comms_with_blanks_name_threads_whole(void) {
  const char *trace =
      "# tracer: nop\n"
      "<idle>-0 [000] d..2 20.000000: sched_waking: comm=Signal Catcher pid=300 prio=120 target_cpu=000\n"
      "<idle>-0 [000] d..2 20.000100: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=Signal Catcher next_pid=300 next_prio=120\n"
      "<idle>-0 [000] d..2 20.000300: sched_switch: prev_comm=Signal Catcher prev_pid=300 prev_prio=120 prev_state=S ==> next_comm=Jit thread pool next_pid=301 next_prio=120\n";
  g_autofree char *names = e2e_query_text("a.systrace", trace,
      "SELECT tid, name FROM thread WHERE tid > 0 ORDER BY tid");
  e2e_assert_text(names, "\"tid\",\"name\"\n300,\"Signal Catcher\"\n301,\"Jit thread pool\"\n");
  g_autofree char *sched = e2e_query_text("a.systrace", trace,
      "SELECT s.ts, s.dur, t.tid, s.end_state, "
      "(SELECT value FROM stats WHERE name = 'systrace_parse_failure') AS failures "
      "FROM sched s JOIN thread t USING (utid) WHERE s.dur > 0");
  e2e_assert_text(sched, "\"ts\",\"dur\",\"tid\",\"end_state\",\"failures\"\n"
                         "20000100000,200000,300,\"S\",0\n");
}

/* --- clocks ------------------------------------------------------------------- */

static void test_alone_it_claims_monotonic_trace_time(void) {
  g_autofree char *out = e2e_query_text("a.systrace", sched_trace,
      "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(out, "\"int_value\"\n3\n");
}

static void test_next_to_a_proto_snapshot_lands_on_boottime(void) {
  /* tests/data/proto/systrace_spine.textproto: BOOTTIME 1e9 = MONOTONIC
   * 5e8, so MONOTONIC 1.000000 s is BOOTTIME 1.5e9 (docs/clock-model.md §6.4);
   * the proto's own marker stays at 1.2e9. */
  g_autofree char *spine_path =
      g_test_build_filename(G_TEST_BUILT, "data", "proto", "systrace_spine.pb", NULL);
  g_autofree char *spine = NULL;
  gsize spine_len = 0;
  g_assert_true(g_file_get_contents(spine_path, &spine, &spine_len, NULL));
  g_autofree char *dir = e2e_tmpdir();
  e2e_member members[] = {
      {"phone.systrace",
       "# tracer: nop\n"
       "app-100 (100) [000] ...1 1.000000: tracing_mark_write: B|100|work\n"
       "app-100 (100) [000] ...1 1.000500: tracing_mark_write: E|100\n"
       "<idle>-0 [000] d..2 1.000600: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120\n",
       0},
      {"phone.pftrace", spine, spine_len},
  };
  g_autofree char *zip = e2e_write_archive(dir, "both.zip", E2E_ZIP, members, 2);
  const char *inputs[] = {zip, NULL};
  g_autofree char *out = e2e_query(inputs,
      "SELECT ts, dur, name FROM slice ORDER BY ts");
  e2e_assert_text(out,
      "\"ts\",\"dur\",\"name\"\n"
      "1200000000,0,\"proto marker\"\n"
      "1500000000,500000,\"work\"\n");
  g_autofree char *sched = e2e_query(inputs, "SELECT ts FROM sched");
  e2e_assert_text(sched, "\"ts\"\n1500600000\n");
  g_autofree char *clock = e2e_query(inputs,
      "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n6\n");
  e2e_cleanup(dir);
}

/* --- damage ------------------------------------------------------------------- */

static const char two_good_lines[] =
    "# tracer: nop\n"
    "app-100 [000] ...1 1.000000: tracing_mark_write: B|100|work\n"
    "app-100 [000] ...1 1.000500: tracing_mark_write: E|100\n";

static void test_damage_cut_mid_line_is_counted(void) {
  g_autofree char *trace = g_strconcat(two_good_lines, "app-100 [000] ...1 1.0009", NULL);
  g_autofree char *out = e2e_query_text("cut.systrace", trace,
      "SELECT (SELECT count(*) FROM slice) AS slices, "
      "(SELECT value FROM stats WHERE name = 'systrace_parse_failure') AS failures");
  e2e_assert_text(out, "\"slices\",\"failures\"\n1,1\n");
}

static void test_damage_garbage_after_good_lines_is_counted(void) {
  static const char garbage[] = "\x01\x02\xff\xfe\n\x80\x81-12 [x]\n\x00\x00zz\n";
  GString *trace = g_string_new(two_good_lines);
  g_string_append_len(trace, garbage, sizeof garbage - 1);
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = e2e_write_file(dir, "g.systrace", trace->str, trace->len);
  const char *inputs[] = {path, NULL};
  g_autofree char *out = e2e_query(inputs,
      "SELECT (SELECT count(*) FROM slice) AS slices, "
      "(SELECT value FROM stats WHERE name = 'systrace_parse_failure') AS failures");
  /* Three garbage lines, each failing the grammar. */
  e2e_assert_text(out, "\"slices\",\"failures\"\n1,3\n");
  g_string_free(trace, TRUE);
  e2e_cleanup(dir);
}

static void test_damage_binary_file_is_an_error_naming_the_file(void) {
  static const char binary[] = "# tracer: nop\n\x7f" "ELF\x02\x01\x01\x00\x00\x00\n\xde\xad\xbe\xef\n";
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = e2e_write_file(dir, "bin.systrace", binary, sizeof binary - 1);
  const char *args[] = {"query", path, "--sql", "SELECT 1", NULL};
  e2e_result r = e2e_run(args);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, "bin.systrace"));
  g_assert_nonnull(strstr(r.err, "not ftrace text"));
  /* The first bad line starts after "# tracer: nop\n", at byte 14. */
  g_assert_nonnull(strstr(r.err, "14"));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_damage_overlong_line_is_skipped_and_counted(void) {
  GString *trace = g_string_new("# tracer: nop\n");
  g_string_append(trace, "app-100 [000] ...1 1.000000: tracing_mark_write: B|100|work\n");
  g_string_append(trace, "app-100 [000] ...1 1.000200: tracing_mark_write: I|100|");
  for (int i = 0; i < 70000; i++)
    g_string_append_c(trace, 'x');
  g_string_append(trace, "\napp-100 [000] ...1 1.000500: tracing_mark_write: E|100\n");
  g_autofree char *out = e2e_query_text("long.systrace", trace->str,
      "SELECT (SELECT group_concat(name) FROM slice) AS slices, "
      "(SELECT value FROM stats WHERE name = 'systrace_line_too_long') AS too_long");
  e2e_assert_text(out, "\"slices\",\"too_long\"\n\"work\",1\n");
  g_string_free(trace, TRUE);
}

/* --- identity ------------------------------------------------------------------ */

/* Without a tgid column a line's thread has no process: is_main_thread is
 * NULL until a payload names the process. Then process 200 adopts thread
 * 200 as its main thread instead of making another one, and 201 joins it
 * as a thread that is not the main one (docs/sql-surface.md §10: is_main_thread
 * is tid == pid once the process is known). */
static void test_main_thread_is_known_once_the_process_is(void) {
  g_autofree char *out = e2e_query_text("a.systrace",
      "# tracer: nop\n"
      "app-200 [000] ...1 1.000000: cpu_idle: state=1 cpu_id=0\n"
      "other-300 [000] ...1 1.100000: cpu_idle: state=1 cpu_id=0\n"
      "app-200 [000] ...1 1.200000: tracing_mark_write: B|200|work\n"
      "rt-201 [000] ...1 1.300000: tracing_mark_write: B|200|render\n",
      "SELECT t.tid, p.pid, t.is_main_thread FROM thread t "
      "LEFT JOIN process p USING (upid) WHERE t.tid != 0 ORDER BY t.tid");
  e2e_assert_text(out, "\"tid\",\"pid\",\"is_main_thread\"\n"
                       "200,200,1\n201,200,0\n300,\"[NULL]\",\"[NULL]\"\n");
}

/* The emitter finds a thread by tid through a direct table below 65536
 * and a hash table above: marks of a small tid (7) and of large ones
 * (70000, 4194303) interleaved, each thread coming back after the others,
 * must each land on their own thread's track, named by its own task.
 * Expected: one slice per B/E pair, on the thread that wrote it. */
static void test_small_and_large_tids_keep_their_own_threads(void) {
  g_autofree char *out = e2e_query_text("a.systrace",
      "# tracer: nop\n"
      "small-7 [000] ...1 1.000000: tracing_mark_write: B|7|s1\n"
      "big-70000 [001] ...1 1.000001: tracing_mark_write: B|70000|b1\n"
      "max-4194303 [002] ...1 1.000002: tracing_mark_write: B|4194303|m1\n"
      "small-7 [000] ...1 1.000003: tracing_mark_write: E|7\n"
      "big-70000 [001] ...1 1.000004: tracing_mark_write: E|70000\n"
      "small-7 [000] ...1 1.000005: tracing_mark_write: B|7|s2\n"
      "max-4194303 [002] ...1 1.000006: tracing_mark_write: E|4194303\n"
      "big-70000 [001] ...1 1.000007: tracing_mark_write: B|70000|b2\n"
      "small-7 [000] ...1 1.000008: tracing_mark_write: E|7\n"
      "big-70000 [001] ...1 1.000009: tracing_mark_write: E|70000\n",
      "SELECT s.name, s.dur, t.tid, t.name AS thread FROM slice s "
      "JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid) "
      "ORDER BY s.ts");
  e2e_assert_text(out, "\"name\",\"dur\",\"tid\",\"thread\"\n"
                       "\"s1\",3000,7,\"small\"\n"
                       "\"b1\",3000,70000,\"big\"\n"
                       "\"m1\",4000,4194303,\"max\"\n"
                       "\"s2\",3000,7,\"small\"\n"
                       "\"b2\",2000,70000,\"big\"\n");
}

/* A mark's pid field is read as plain digits on a fast path and as
 * systrace_parse_int64 reads it otherwise: "+300" and "0300" are pid 300
 * (a sign and leading zeros are allowed), a 19-digit pid is a number too
 * (it still fits int64), "30x" and "" are no pid (the B mark is a parse
 * failure, counted). Expected: four slices, all in processes 300 and
 * 1000000000000000000, and one failure. */
static void test_mark_pid_spellings_read_like_the_number_parser(void) {
  static const char trace[] =
      "# tracer: nop\n"
      "app-301 [000] ...1 1.000000: tracing_mark_write: B|+300|a\n"
      "app-301 [000] ...1 1.000001: tracing_mark_write: E|0300\n"
      "app-301 [000] ...1 1.000002: tracing_mark_write: B|0300|b\n"
      "app-301 [000] ...1 1.000003: tracing_mark_write: E|300\n"
      "app-301 [000] ...1 1.000004: tracing_mark_write: B|30x|bad\n"
      "app-301 [000] ...1 1.000005: tracing_mark_write: B||empty\n"
      "big-302 [000] ...1 1.000006: tracing_mark_write: B|1000000000000000000|c\n"
      "big-302 [000] ...1 1.000007: tracing_mark_write: E|1000000000000000000\n"
      "app-301 [000] ...1 1.000008: tracing_mark_write: B|300|d\n"
      "app-301 [000] ...1 1.000009: tracing_mark_write: E\n";
  g_autofree char *slices = e2e_query_text("a.systrace", trace,
      "SELECT s.name, s.dur, p.pid FROM slice s JOIN thread_track tt ON s.track_id = tt.id "
      "JOIN thread t USING (utid) JOIN process p USING (upid) ORDER BY s.ts");
  e2e_assert_text(slices, "\"name\",\"dur\",\"pid\"\n"
                          "\"a\",1000,300\n"
                          "\"b\",1000,300\n"
                          "\"c\",1000,1000000000000000000\n"
                          "\"d\",1000,300\n");
  g_autofree char *stats = e2e_query_text("a.systrace", trace,
      "SELECT value FROM stats WHERE name = 'systrace_parse_failure'");
  e2e_assert_text(stats, "\"value\"\n2\n");
}

/* --- the real files ------------------------------------------------------------- */

typedef struct real_file {
  const char *name;
  const char *expected;
} real_file;

/* How each count was taken from the file's text (D = the systrace dir):
 *  slices   = B lines + S lines + I lines:
 *             grep -c 'tracing_mark_write: B|' / 'S|' (I: none in any file)
 *  counters = C lines + cpu_idle + cpu_frequency + clock_* lines:
 *             grep -c 'tracing_mark_write: C|' (': 0: C|' in the legacy
 *             file), grep -c ' cpu_idle: ', grep -c ' cpu_frequency: ',
 *             grep -c ' clock_\(set_rate\|enable\|disable\): '
 *  sched    = grep -c ' sched_switch: '
 *  threads  = distinct tids among the task fields and the prev_pid /
 *             next_pid / pid fields of sched events, plus the machine's idle
 *             thread (tid 0) when no line names it, plus the main thread
 *             (tid == pid) of each process no line names as a tid, which
 *             trace_processor creates with the process
 *             (docs/sql-surface.md §10)
 *  processes = distinct numeric tgids and PIDs of B/C/S/F/E payloads, plus
 *             the placeholder process pid 0
 *  failures  = lines no rule reads: lisa's 14 `print` lines
 *             (grep -c ' print: '), whose text is not an atrace payload.
 * catapult-atrace_data: 72 sched_switch, 23 tids (tid 0 among them), no
 *   tgid column: 1 process. counter_tracks: 1611 C lines, 10 tids + idle
 *   + main thread 124, pids 124 and 360 + placeholder. decompressed: B 463 + S 17 slices,
 *   C 88, 6 tids + idle, pids 13580 and 18926 (+ placeholder); the tgid
 *   column reads "(-----)" for the others. lisa: 1856 sched_switch,
 *   51 tids. trappy: B 70, C 18 + cpu_idle 621 + cpu_frequency 104 +
 *   clock_set_rate 88 = 831,
 *   715 sched_switch, 83 tids, 50 tgids + placeholder. */
static const real_file real_files[] = {
    {"catapult-atrace_data.txt", "0,0,72,23,1,0"},
    {"catapult-counter_tracks.html", "0,1611,0,12,3,0"},
    {"catapult-decompressed_atrace_data.txt", "480,88,0,7,3,0"},
    {"lisa-trace-cmd-report.txt", "0,0,1856,51,1,14"},
    {"trappy-trace_surfaceflinger.html", "70,831,715,87,51,0"},
};

static void test_real_file(gconstpointer data) {
  const real_file *file = data;
  g_autofree char *path = corpus_real_path("systrace", file->name);
  const char *inputs[] = {path, NULL};
  g_autofree char *out = e2e_query(inputs,
      "SELECT (SELECT count(*) FROM slice) AS slices, "
      "(SELECT count(*) FROM counter) AS counters, "
      "(SELECT count(*) FROM sched) AS sched, "
      "(SELECT count(*) FROM thread) AS threads, "
      "(SELECT count(*) FROM process) AS processes, "
      "(SELECT value FROM stats WHERE name = 'systrace_parse_failure') AS failures");
  g_autofree char *expected = g_strdup_printf(
      "\"slices\",\"counters\",\"sched\",\"threads\",\"processes\",\"failures\"\n%s\n",
      file->expected);
  e2e_assert_text(out, expected);
}

/* ftrace text names threads, never processes: trace_processor's systrace
 * importer names a thread after the task field and leaves its process's
 * name NULL (docs/formats.md §3.2: "the thread PID is named TASK";
 * only a PROCESS DUMP names processes, §3.1), even for a main thread
 * (tid == tgid) such as surfaceflinger-594. The trappy file has no PROCESS
 * DUMP block (grep -c 'PROCESS DUMP' is 0), so none of its 51 processes
 * (test_real_file) has a name, while its threads keep theirs: the 83
 * distinct tids of the ftrace block's task fields and sched_switch
 * prev_pid/next_pid (each comes with a name there; tid 0 is "swapper") are
 * named, the 4 main threads made only for tgids 566, 712, 1118 and 1806
 * (87 threads in test_real_file) are not. Before this change, the 46
 * processes whose main thread wrote a line were named after it. */
static void test_real_processes_are_unnamed_without_a_process_dump(void) {
  g_autofree char *path = corpus_real_path("systrace", "trappy-trace_surfaceflinger.html");
  const char *inputs[] = {path, NULL};
  g_autofree char *out = e2e_query(inputs,
      "SELECT (SELECT count(*) FROM process WHERE name IS NOT NULL) AS named_processes, "
      "(SELECT count(*) FROM thread WHERE name IS NOT NULL) AS named_threads, "
      "(SELECT name FROM thread WHERE tid = 594) AS surfaceflinger");
  e2e_assert_text(out, "\"named_processes\",\"named_threads\",\"surfaceflinger\"\n"
                       "0,83,\"surfaceflinger\"\n");
}

/* thread.is_main_thread on the trappy file (E2E_MAIN_THREAD_SQL), by the
 * rule of test_main_thread_is_known_once_the_process_is over its lines
 * (python3 re): 78 threads get a process from a tgid column or a payload
 * pid (50 processes, each with its main thread), tid 0 is the
 * placeholder's main thread; 8 tids named only by sched_switch
 * prev_pid/next_pid or a wakeup's pid have no process (NULL). Main: 50 + 1,
 * not main: 79 - 51 = 28 (87 threads in test_real_file). */
static void test_real_main_threads_where_the_process_is_known(void) {
  e2e_assert_real_file_row("systrace", "trappy-trace_surfaceflinger.html",
                           E2E_MAIN_THREAD_SQL, "51,28,8,0");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e-systrace/wrapper/plain-text-with-tgid", test_wrapper_plain_with_tgid);
  g_test_add_func("/e2e-systrace/wrapper/plain-text-without-tgid-or-header",
                  test_wrapper_plain_without_tgid_or_header);
  g_test_add_func("/e2e-systrace/wrapper/atrace-output-after-TRACE-line",
                  test_wrapper_atrace_prefix);
  g_test_add_func("/e2e-systrace/wrapper/trace-cmd-report", test_wrapper_trace_cmd_report);
  g_test_add_func("/e2e-systrace/wrapper/html-reads-every-ftrace-block",
                  test_wrapper_html_reads_every_ftrace_block);
  g_test_add_func("/e2e-systrace/wrapper/html-block-without-task-pid-legend",
                  test_wrapper_html_block_without_task_pid_legend);
  g_test_add_func("/e2e-systrace/wrapper/plain-text-without-task-pid-legend",
                  test_wrapper_plain_text_without_task_pid_legend);
  g_test_add_func("/e2e-systrace/wrapper/html-long-viewer-lines-are-not-damage",
                  test_wrapper_html_long_viewer_lines_are_not_damage);
  g_test_add_func("/e2e-systrace/wrapper/html-process-dump-names-processes-and-threads",
                  test_html_process_dump_names_processes_and_threads);
  g_test_add_func("/e2e-systrace/real/processes-are-unnamed-without-a-process-dump",
                  test_real_processes_are_unnamed_without_a_process_dump);
  g_test_add_func("/e2e-systrace/real/main-threads-where-the-process-is-known",
                  test_real_main_threads_where_the_process_is_known);
  g_test_add_func("/e2e-systrace/wrapper/legacy-html-javascript-string",
                  test_wrapper_legacy_html_javascript_string);
  g_test_add_func("/e2e-systrace/mark-write/counters-async-slices-and-instants",
                  test_mark_write_counters_async_and_instants);
  g_test_add_func("/e2e-systrace/mark-write/async-slices-share-tracks-when-they-do-not-overlap",
                  test_async_slices_share_tracks_when_they_do_not_overlap);
  g_test_add_func("/e2e-systrace/mark-write/named-track-slices",
                  test_mark_write_named_track_slices);
  g_test_add_func("/e2e-systrace/kernel/cpu-frequency-and-idle-become-cpu-counters",
                  test_cpu_frequency_and_idle_become_cpu_counters);
  g_test_add_func("/e2e-systrace/sched/switches-become-sched-slices",
                  test_switches_become_sched_slices);
  g_test_add_func("/e2e-systrace/sched/switches-and-wakeups-become-thread-states",
                  test_switches_and_wakeups_become_thread_states);
  g_test_add_func("/e2e-systrace/sched/comms-with-blanks-name-threads-whole",
                  test_comms_with_blanks_name_threads_whole);
  g_test_add_func("/e2e-systrace/sched/numeric-prev-state-is-spelled-as-letters",
                  test_numeric_prev_state_is_spelled_as_letters);
  g_test_add_func("/e2e-systrace/clock/alone-it-claims-monotonic-trace-time",
                  test_alone_it_claims_monotonic_trace_time);
  g_test_add_func("/e2e-systrace/clock/next-to-a-proto-snapshot-lands-on-boottime",
                  test_next_to_a_proto_snapshot_lands_on_boottime);
  g_test_add_func("/e2e-systrace/damage/cut-mid-line-is-counted",
                  test_damage_cut_mid_line_is_counted);
  g_test_add_func("/e2e-systrace/damage/garbage-after-good-lines-is-counted",
                  test_damage_garbage_after_good_lines_is_counted);
  g_test_add_func("/e2e-systrace/damage/binary-file-is-an-error-naming-the-file",
                  test_damage_binary_file_is_an_error_naming_the_file);
  g_test_add_func("/e2e-systrace/damage/overlong-line-is-skipped-and-counted",
                  test_damage_overlong_line_is_skipped_and_counted);
  g_test_add_func("/e2e-systrace/identity/main-thread-is-known-once-the-process-is",
                  test_main_thread_is_known_once_the_process_is);
  g_test_add_func("/e2e-systrace/identity/small-and-large-tids-keep-their-own-threads",
                  test_small_and_large_tids_keep_their_own_threads);
  g_test_add_func("/e2e-systrace/mark-write/pid-spellings-read-like-the-number-parser",
                  test_mark_pid_spellings_read_like_the_number_parser);
  for (size_t i = 0; i < G_N_ELEMENTS(real_files); i++) {
    g_autofree char *name =
        g_strdup_printf("/e2e-systrace/real-files/%s", real_files[i].name);
    g_test_add_data_func(name, &real_files[i], test_real_file);
  }
  return g_test_run();
}
