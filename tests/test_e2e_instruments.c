/*
 * End-to-end: the CLI on Instruments `xctrace export` XML.
 *
 * Expected values are worked out in the comments from the fixtures: times
 * are ns since the start of recording, on the file's private clock (the
 * format is clockless, so a file alone keeps them unchanged); a backtrace
 * lists frames leaf first, callsites go outermost first; a frame's rel_pc
 * is addr - load-addr, minus 1 unless it is the leaf.
 */
#include <glib.h>
#include <string.h>

#include "e2e_support.h"

#define HEAD "<?xml version=\"1.0\"?>\n<trace-query-result>\n"

/* Row 1 defines everything: thread 77 of process 50, core 3, a
 * tagged-backtrace 8 wrapping backtrace 9 = [leaf @0x1010, main @0x1100]
 * in /bin/app loaded at 0x1000. Callsites: main (frame 0, rel_pc 0x100-1 =
 * 255) = 0, leaf (frame 1, rel_pc 0x10 = 16) = 1. Row 2 refs the tagged
 * backtrace: same callsite 1. Row 3 has main alone, now the leaf: frame 2
 * (rel_pc 256), callsite 2 at depth 0, on core 1. */
static const char modern_xml[] =
    HEAD
    "<node xpath='//trace-toc[1]/run[1]/data[1]/table[1]'><schema name=\"time-profile\"/>\n"
    "<row><sample-time id=\"1\" fmt=\"00:00.000.001\">1000</sample-time>"
    "<thread id=\"2\" fmt=\"Main Thread\"><tid id=\"3\" fmt=\"0x4d\">77</tid>"
    "<process id=\"4\" fmt=\"app (50)\"><pid id=\"5\" fmt=\"50\">50</pid></process></thread>"
    "<process ref=\"4\"/><core id=\"6\" fmt=\"CPU 3\">3</core><weight id=\"7\" fmt=\"1 ms\">1000000</weight>"
    "<tagged-backtrace id=\"8\" fmt=\"leaf\"><backtrace id=\"9\">"
    "<frame id=\"10\" name=\"leaf\" addr=\"0x1010\"><binary id=\"11\" name=\"app\" UUID=\"U-1\" "
    "arch=\"arm64e\" load-addr=\"0x1000\" path=\"/bin/app\"/></frame>"
    "<frame id=\"12\" name=\"main\" addr=\"0x1100\"><binary ref=\"11\"/></frame>"
    "</backtrace></tagged-backtrace></row>\n"
    "<row><sample-time id=\"13\">2000</sample-time><thread ref=\"2\"/><process ref=\"4\"/>"
    "<core ref=\"6\"/><weight ref=\"7\"/><tagged-backtrace ref=\"8\"/></row>\n"
    "<row><sample-time id=\"14\">3000</sample-time><thread ref=\"2\"/><process ref=\"4\"/>"
    "<core id=\"15\">1</core><backtrace id=\"16\"><frame ref=\"12\"/></backtrace></row>\n"
    "</node></trace-query-result>\n";

/* Xcode 12.5 style: text-addresses only, interleaved with process refs;
 * 0 ends a fragment. Row 1: leaf first 0x1000, 0x2000, 0x3000 -> callsites
 * 0x3000 (0), 0x2000 (1), 0x1000 (2). Row 2 refs fragment 8 = [0x3000]:
 * callsite 0. Frames have no mapping and rel_pc = addr. */
static const char old_xml[] =
    HEAD
    "    <node xpath='//trace-toc[1]/run[1]/data[1]/table[2]'><schema name=\"time-profile\"/>\n"
    "        <row><sample-time id=\"1\">500</sample-time><thread id=\"2\" fmt=\"find\">"
    "<tid id=\"3\">9</tid><process id=\"4\" fmt=\"find (8)\"><pid id=\"5\">8</pid></process>"
    "</thread><process ref=\"4\"/><backtrace id=\"6\"><process ref=\"4\"/>"
    "<text-addresses id=\"7\" fmt=\"frag 1\">4096 8192</text-addresses><process ref=\"4\"/>"
    "<text-addresses id=\"8\" fmt=\"frag 2\">12288 0</text-addresses></backtrace></row>\n"
    "        <row><sample-time id=\"9\">600</sample-time><thread ref=\"2\"/>"
    "<backtrace id=\"10\"><text-addresses ref=\"8\"/></backtrace></row>\n"
    "    </node>\n</trace-query-result>\n";

#define SAMPLES_SQL                                                          \
  "SELECT s.ts, s.callsite_id, s.cpu, t.tid, t.name, p.pid, p.name AS process " \
  "FROM instruments_sample s JOIN thread t USING (utid) JOIN process p USING (upid) " \
  "ORDER BY s.id"
#define CALLSITES_SQL                                                        \
  "SELECT c.id, c.depth, c.parent_id, f.name, f.rel_pc, m.name AS mapping, "  \
  "m.build_id, m.start FROM stack_profile_callsite c "                       \
  "JOIN stack_profile_frame f ON c.frame_id = f.id "                         \
  "LEFT JOIN stack_profile_mapping m ON f.mapping = m.id ORDER BY c.id"

static void test_modern_export_with_tagged_backtraces(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(dir, "tp.xml", modern_xml, 0);
  const char *inputs[] = {"tp.xml", NULL};
  g_autofree char *samples = e2e_query_in(dir, inputs, SAMPLES_SQL);
  e2e_assert_text(samples,
                  "\"ts\",\"callsite_id\",\"cpu\",\"tid\",\"name\",\"pid\",\"process\"\n"
                  "1000,1,3,77,\"Main Thread\",50,\"app (50)\"\n"
                  "2000,1,3,77,\"Main Thread\",50,\"app (50)\"\n"
                  "3000,2,1,77,\"Main Thread\",50,\"app (50)\"\n");
  g_autofree char *callsites = e2e_query_in(dir, inputs, CALLSITES_SQL);
  e2e_assert_text(callsites,
                  "\"id\",\"depth\",\"parent_id\",\"name\",\"rel_pc\",\"mapping\",\"build_id\",\"start\"\n"
                  "0,0,\"[NULL]\",\"main\",255,\"/bin/app\",\"U-1\",4096\n"
                  "1,1,0,\"leaf\",16,\"/bin/app\",\"U-1\",4096\n"
                  "2,0,\"[NULL]\",\"main\",256,\"/bin/app\",\"U-1\",4096\n");
  g_autofree char *none = e2e_query_in(
      dir, inputs,
      "SELECT (SELECT count(*) FROM cpu_profile_stack_sample), "
      "(SELECT count(*) FROM stats WHERE value > 0 AND name LIKE 'instruments%'), "
      "(SELECT trace_type FROM trace_file), (SELECT max(cpu) FROM cpu)");
  /* Cores 3 and 1 are cpu rows of the machine (rows go up to the highest
   * core, so ucpu equals cpu). */
  e2e_assert_text(e2e_csv_rows(none), "0,0,\"instruments_xml\",3\n");
  e2e_cleanup(dir);
}

static void test_old_export_with_text_addresses(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(dir, "old.xml", old_xml, 0);
  const char *inputs[] = {"old.xml", NULL};
  g_autofree char *samples = e2e_query_in(dir, inputs, SAMPLES_SQL);
  e2e_assert_text(samples,
                  "\"ts\",\"callsite_id\",\"cpu\",\"tid\",\"name\",\"pid\",\"process\"\n"
                  "500,2,\"[NULL]\",9,\"find\",8,\"find (8)\"\n"
                  "600,0,\"[NULL]\",9,\"find\",8,\"find (8)\"\n");
  g_autofree char *callsites = e2e_query_in(dir, inputs, CALLSITES_SQL);
  e2e_assert_text(callsites,
                  "\"id\",\"depth\",\"parent_id\",\"name\",\"rel_pc\",\"mapping\",\"build_id\",\"start\"\n"
                  "0,0,\"[NULL]\",\"0x3000\",12288,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "1,1,0,\"0x2000\",8192,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "2,2,1,\"0x1000\",4096,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n");
  e2e_cleanup(dir);
}

/* Unknown refs and incomplete rows are counted and skipped; the good row
 * (ts 10) stays. */
static void test_unknown_refs_and_incomplete_rows_are_counted(void) {
  const char *xml =
      HEAD
      "<node><row><sample-time id=\"1\">10</sample-time><thread id=\"2\" fmt=\"t\">"
      "<tid id=\"3\">5</tid><process id=\"4\" fmt=\"p\"><pid id=\"5\">4</pid></process></thread>"
      "<backtrace id=\"6\"><frame id=\"7\" name=\"f\" addr=\"0x10\"/></backtrace></row>\n"
      /* thread ref 99 was never defined */
      "<row><sample-time id=\"8\">20</sample-time><thread ref=\"99\"/><backtrace ref=\"6\"/></row>\n"
      /* tagged-backtrace ref 98 was never defined */
      "<row><sample-time id=\"9\">30</sample-time><thread ref=\"2\"/><tagged-backtrace ref=\"98\"/></row>\n"
      /* a thread without a process */
      "<row><sample-time id=\"10\">40</sample-time><thread id=\"11\"><tid id=\"12\">6</tid></thread>"
      "<backtrace ref=\"6\"/></row>\n"
      /* no time */
      "<row><thread ref=\"2\"/><backtrace ref=\"6\"/></row>\n"
      /* an interval row without backtrace: nothing, no stat */
      "<row><start-time id=\"13\">50</start-time><duration id=\"14\">5</duration><thread ref=\"2\"/></row>\n"
      "</node></trace-query-result>\n";
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(dir, "bad.xml", xml, 0);
  const char *inputs[] = {"bad.xml", NULL};
  g_autofree char *samples =
      e2e_query_in(dir, inputs, "SELECT ts FROM instruments_sample");
  e2e_assert_text(samples, "\"ts\"\n10\n");
  g_autofree char *stats = e2e_query_in(
      dir, inputs,
      "SELECT name, value FROM stats WHERE name LIKE 'instruments%' AND value > 0 ORDER BY name");
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         "\"instruments_row_missing_backtrace\",1\n"
                         "\"instruments_row_missing_process\",1\n"
                         "\"instruments_row_missing_thread\",1\n"
                         "\"instruments_row_missing_time\",1\n"
                         "\"instruments_unknown_ref\",2\n");
  e2e_cleanup(dir);
}

/* Signposts of subsystem dev.perfetto.clock_sync relate the file's clock
 * (11) to BOOTTIME (6): row time 1000 <-> 5000000 is one snapshot; the
 * second (2000 <-> 4000000) goes backwards and is skipped and counted; a
 * signpost of another subsystem adds nothing. Alone, the file still owns
 * trace time with its own clock, so the sample stays at 1500. */
static void test_clock_sync_signposts_add_snapshots(void) {
  const char *xml =
      HEAD
      "<node><schema name=\"os-signpost\"/>\n"
      "<row><event-time id=\"1\">1000</event-time><subsystem id=\"2\">dev.perfetto.clock_sync</subsystem>"
      "<os-log-metadata id=\"3\"><uint64 id=\"4\">5000000</uint64></os-log-metadata></row>\n"
      "<row><event-time id=\"5\">2000</event-time><subsystem ref=\"2\"/>"
      "<os-log-metadata id=\"6\"><uint64 id=\"7\">4000000</uint64></os-log-metadata></row>\n"
      "<row><event-time id=\"8\">3000</event-time><subsystem id=\"9\">com.example</subsystem>"
      "<os-log-metadata ref=\"3\"/></row>\n"
      "<row><sample-time id=\"10\">1500</sample-time><thread id=\"11\" fmt=\"t\"><tid id=\"12\">5</tid>"
      "<process id=\"13\" fmt=\"p\"><pid id=\"14\">4</pid></process></thread>"
      "<backtrace id=\"15\"><frame id=\"16\" name=\"f\" addr=\"0x10\"/></backtrace></row>\n"
      "</node></trace-query-result>\n";
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(dir, "sp.xml", xml, 0);
  const char *inputs[] = {"sp.xml", NULL};
  g_autofree char *snapshots = e2e_query_in(
      dir, inputs, "SELECT clock_id, clock_value, snapshot_id FROM clock_snapshot ORDER BY id");
  e2e_assert_text(snapshots, "\"clock_id\",\"clock_value\",\"snapshot_id\"\n"
                             "11,1000,0\n6,5000000,0\n");
  g_autofree char *rest = e2e_query_in(
      dir, inputs,
      "SELECT (SELECT ts FROM instruments_sample), (SELECT value FROM stats "
      "WHERE name = 'instruments_invalid_clock_sync')");
  e2e_assert_text(e2e_csv_rows(rest), "1500,1\n");
  e2e_cleanup(dir);
}

static void test_damaged_inputs_fail_with_a_clear_error(void) {
  static const struct {
    const char *name;
    const char *content;
    size_t len;
  } cases[] = {
      {"cut-tag.xml", HEAD "<node><row><sample-time id=\"1\">10</sample-time><thr", 0},
      {"cut-attr.xml", HEAD "<node><row><thread id=\"2\" fmt=\"Main Th", 0},
      {"nesting.xml", HEAD "<node><row><thread id=\"2\"></row></node></trace-query-result>", 0},
      {"garbage.xml", HEAD "\x01\xff\xfe\x00garbage", sizeof(HEAD) - 1 + 11},
  };
  g_autofree char *dir = e2e_tmpdir();
  /* 300 nested elements: refused at the reader's depth limit. */
  GString *deep = g_string_new(HEAD);
  for (int i = 0; i < 300; i++)
    g_string_append(deep, "<n>");
  g_autofree char *deep_file = e2e_write_file(dir, "deep.xml", deep->str, 0);
  g_string_free(deep, TRUE);
  e2e_assert_query_fails(dir, "deep.xml", "nested deeper than 256 levels");
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *f =
        e2e_write_file(dir, cases[i].name, cases[i].content, cases[i].len);
    e2e_assert_query_fails(dir, cases[i].name, "Error parsing Instruments XML");
  }
  e2e_cleanup(dir);
}

/* --- the hand-written exports of tests/data/instruments ------------------- */

#define THREADS_SQL                                                          \
  "SELECT t.tid, t.name, p.pid, t.is_main_thread FROM thread t "             \
  "JOIN process p USING (upid) WHERE t.tid != 0 ORDER BY t.utid"
#define COUNTS_SQL                                                           \
  "SELECT (SELECT count(*) FROM stack_profile_frame), "                      \
  "(SELECT count(*) FROM stack_profile_mapping), "                           \
  "(SELECT count(*) FROM stats WHERE value > 0 AND name LIKE 'instruments%')"

static char *query_fixture(const char *name, const char *sql) {
  const char *path = g_test_get_filename(G_TEST_DIST, "data", "instruments", name, NULL);
  const char *inputs[] = {path, NULL};
  return e2e_query(inputs, sql);
}

/* time-profile-symbolicated.xml. Row 1 defines thread 700001 of process
 * 4242 (pid 4242), core 2, and tagged-backtrace 10 = [compute @0x100003f10,
 * main @0x100003e84 (both in /Users/dev/demo at 0x100000000), start
 * @0x180012345 (/usr/lib/dyld at 0x180000000)]. Callsites outermost first:
 * start rel_pc 0x12345 - 1 = 74564 (0), main 0x3e84 - 1 = 16003 (1),
 * compute leaf 0x3f10 = 16144 (2). Row 2 refs everything: callsite 2 again.
 * Row 3: thread 700002 (its process a ref), core 5, backtrace 23 =
 * [0x1800a1b2c (no binary: rel_pc = addr = 6443113260), frame ref main,
 * frame ref start]: start and main are callsites 0 and 1 again, the leaf
 * is callsite 3. Row 4: frame ref main alone, now the leaf: rel_pc 0x3e84 =
 * 16004, a new frame and callsite 4 at depth 0. Row 5: a new tagged
 * backtrace around backtrace ref 23: callsite 3, back on thread 700001 and
 * core 2. Frames: start, main (16003), compute, 0x1800a1b2c, main (16004) =
 * 5; mappings: demo and dyld = 2. Threads: the process's main thread (tid
 * == pid, made with the process), then 700001 and 700002. */
static void test_symbolicated_time_profile(void) {
  g_autofree char *samples = query_fixture("time-profile-symbolicated.xml", SAMPLES_SQL);
  e2e_assert_text(samples,
                  "\"ts\",\"callsite_id\",\"cpu\",\"tid\",\"name\",\"pid\",\"process\"\n"
                  "1000000,2,2,700001,\"Main Thread 0xaae61 (demo, pid: 4242)\",4242,\"demo (4242)\"\n"
                  "2000000,2,2,700001,\"Main Thread 0xaae61 (demo, pid: 4242)\",4242,\"demo (4242)\"\n"
                  "3000000,3,5,700002,\"worker 0xaae62 (demo, pid: 4242)\",4242,\"demo (4242)\"\n"
                  "4000000,4,5,700002,\"worker 0xaae62 (demo, pid: 4242)\",4242,\"demo (4242)\"\n"
                  "5000000,3,2,700001,\"Main Thread 0xaae61 (demo, pid: 4242)\",4242,\"demo (4242)\"\n");
  g_autofree char *callsites = query_fixture("time-profile-symbolicated.xml", CALLSITES_SQL);
  e2e_assert_text(callsites,
                  "\"id\",\"depth\",\"parent_id\",\"name\",\"rel_pc\",\"mapping\",\"build_id\",\"start\"\n"
                  "0,0,\"[NULL]\",\"start\",74564,\"/usr/lib/dyld\","
                  "\"D71D0000-AAAA-BBBB-CCCC-DDDDEEEEFFFF\",6442450944\n"
                  "1,1,0,\"main\",16003,\"/Users/dev/demo\","
                  "\"0C0FFEE0-1111-2222-3333-444455556666\",4294967296\n"
                  "2,2,1,\"compute\",16144,\"/Users/dev/demo\","
                  "\"0C0FFEE0-1111-2222-3333-444455556666\",4294967296\n"
                  "3,2,1,\"0x1800a1b2c\",6443113260,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "4,0,\"[NULL]\",\"main\",16004,\"/Users/dev/demo\","
                  "\"0C0FFEE0-1111-2222-3333-444455556666\",4294967296\n");
  g_autofree char *threads = query_fixture("time-profile-symbolicated.xml", THREADS_SQL);
  e2e_assert_text(threads, "\"tid\",\"name\",\"pid\",\"is_main_thread\"\n"
                           "4242,\"[NULL]\",4242,1\n"
                           "700001,\"Main Thread 0xaae61 (demo, pid: 4242)\",4242,0\n"
                           "700002,\"worker 0xaae62 (demo, pid: 4242)\",4242,0\n");
  g_autofree char *counts = query_fixture("time-profile-symbolicated.xml", COUNTS_SQL);
  e2e_assert_text(e2e_csv_rows(counts), "5,2,0\n");
}

/* time-profile-unsymbolicated.xml (Xcode 12.5 layout). Row 1's backtrace
 * is two fragments, leaf first: 4294983680 4294983936 (0x100004000,
 * 0x100004100) and 6442450944 6442451200 0 (0x180000000, 0x180000100; 0
 * ends the fragment). Callsites outermost first: 0x180000100 (0),
 * 0x180000000 (1), 0x100004100 (2), 0x100004000 (3); no binaries, so
 * rel_pc = addr and no mapping. Row 2: 4294984192 (0x100004200) then
 * fragment ref 12: callsites 0 and 1 again, then 0x100004200 = 4 at depth
 * 2. Row 3 refs backtrace 10: callsite 3. Cores 1, 3, 1. */
static void test_unsymbolicated_time_profile(void) {
  g_autofree char *samples = query_fixture("time-profile-unsymbolicated.xml", SAMPLES_SQL);
  e2e_assert_text(samples,
                  "\"ts\",\"callsite_id\",\"cpu\",\"tid\",\"name\",\"pid\",\"process\"\n"
                  "100000,3,1,144010,\"scan  0x2328a (scan, pid: 9001)\",9001,\"scan (9001)\"\n"
                  "200000,4,3,144010,\"scan  0x2328a (scan, pid: 9001)\",9001,\"scan (9001)\"\n"
                  "300000,3,1,144010,\"scan  0x2328a (scan, pid: 9001)\",9001,\"scan (9001)\"\n");
  g_autofree char *callsites = query_fixture("time-profile-unsymbolicated.xml", CALLSITES_SQL);
  e2e_assert_text(callsites,
                  "\"id\",\"depth\",\"parent_id\",\"name\",\"rel_pc\",\"mapping\",\"build_id\",\"start\"\n"
                  "0,0,\"[NULL]\",\"0x180000100\",6442451200,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "1,1,0,\"0x180000000\",6442450944,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "2,2,1,\"0x100004100\",4294983936,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "3,3,2,\"0x100004000\",4294983680,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "4,2,1,\"0x100004200\",4294984192,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n");
  g_autofree char *threads = query_fixture("time-profile-unsymbolicated.xml", THREADS_SQL);
  e2e_assert_text(threads, "\"tid\",\"name\",\"pid\",\"is_main_thread\"\n"
                           "9001,\"[NULL]\",9001,1\n"
                           "144010,\"scan  0x2328a (scan, pid: 9001)\",9001,0\n");
  g_autofree char *counts = query_fixture("time-profile-unsymbolicated.xml", COUNTS_SQL);
  e2e_assert_text(e2e_csv_rows(counts), "5,0,0\n");
}

/* cpu-profile-cycle-weight.xml: the cpu-profile schema weighs samples in
 * cycles (cycle-weight, defined and reffed like weight) and puts a uint64
 * after the backtrace inside tagged-backtrace; neither changes a sample.
 * Row 1: [0x100008011 (addr 0x100008011), 0x100008200 (addr 0x100008201)],
 * no binaries: callsites 0x100008200 rel_pc 4295000577 (0), 0x100008011
 * rel_pc 4295000081 (1). Row 2: [hash_block @0x100008420 in /tmp/bench at
 * 0x100000000 (leaf: rel_pc 0x8420 = 33824), frame ref 0x100008200]:
 * callsite 0 again, hash_block = 2. Rows 3 and 4 ref rows 1 and 2's
 * tagged backtraces and weights on core 0: callsites 1 and 2. */
static void test_cpu_profile_with_cycle_weights(void) {
  g_autofree char *samples = query_fixture("cpu-profile-cycle-weight.xml", SAMPLES_SQL);
  e2e_assert_text(samples,
                  "\"ts\",\"callsite_id\",\"cpu\",\"tid\",\"name\",\"pid\",\"process\"\n"
                  "10000,1,4,1217,\"Main Thread (0x4c1) (bench, pid: 5150)\",5150,\"bench (5150)\"\n"
                  "20000,2,4,1217,\"Main Thread (0x4c1) (bench, pid: 5150)\",5150,\"bench (5150)\"\n"
                  "30000,1,0,1217,\"Main Thread (0x4c1) (bench, pid: 5150)\",5150,\"bench (5150)\"\n"
                  "40000,2,0,1217,\"Main Thread (0x4c1) (bench, pid: 5150)\",5150,\"bench (5150)\"\n");
  g_autofree char *callsites = query_fixture("cpu-profile-cycle-weight.xml", CALLSITES_SQL);
  e2e_assert_text(callsites,
                  "\"id\",\"depth\",\"parent_id\",\"name\",\"rel_pc\",\"mapping\",\"build_id\",\"start\"\n"
                  "0,0,\"[NULL]\",\"0x100008200\",4295000577,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "1,1,0,\"0x100008011\",4295000081,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "2,1,0,\"hash_block\",33824,\"/tmp/bench\","
                  "\"BE4C0000-0000-4000-8000-000000005150\",4294967296\n");
  g_autofree char *counts = query_fixture("cpu-profile-cycle-weight.xml", COUNTS_SQL);
  e2e_assert_text(e2e_csv_rows(counts), "3,1,0\n");
}

/* The repository's one permissively licensed xctrace export is an
 * interval table (schema potential-hangs: 23 rows of start-time and
 * duration, no backtrace), so it makes no sample, thread, process or stack
 * row. The copyleft jmh exports are checked in test_e2e_instruments_jmh.c. */
static void test_potential_hangs_export_makes_no_samples(void) {
  e2e_assert_real_file_row(
      "instruments", "xctrace-mcp-potential-hangs.xml",
      "SELECT (SELECT count(*) FROM instruments_sample), "
      "(SELECT count(*) FROM thread WHERE tid != 0), "
      "(SELECT count(*) FROM process WHERE pid != 0), "
      "(SELECT count(*) FROM stack_profile_callsite), "
      "(SELECT count(*) FROM stack_profile_frame), "
      "(SELECT count(*) FROM stack_profile_mapping), "
      "(SELECT count(*) FROM stats WHERE value > 0 AND severity IN ('error', 'data_loss'))",
      "0,0,0,0,0,0,0");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/instruments/modern-export-with-tagged-backtraces",
                  test_modern_export_with_tagged_backtraces);
  g_test_add_func("/e2e/instruments/old-export-with-text-addresses",
                  test_old_export_with_text_addresses);
  g_test_add_func("/e2e/instruments/unknown-refs-and-incomplete-rows-are-counted",
                  test_unknown_refs_and_incomplete_rows_are_counted);
  g_test_add_func("/e2e/instruments/clock-sync-signposts-add-snapshots",
                  test_clock_sync_signposts_add_snapshots);
  g_test_add_func("/e2e/instruments/damaged-inputs-fail-with-a-clear-error",
                  test_damaged_inputs_fail_with_a_clear_error);
  g_test_add_func("/e2e/instruments/fixtures/symbolicated-time-profile",
                  test_symbolicated_time_profile);
  g_test_add_func("/e2e/instruments/fixtures/unsymbolicated-time-profile",
                  test_unsymbolicated_time_profile);
  g_test_add_func("/e2e/instruments/fixtures/cpu-profile-with-cycle-weights",
                  test_cpu_profile_with_cycle_weights);
  g_test_add_func("/e2e/instruments/real-potential-hangs-export-makes-no-samples",
                  test_potential_hangs_export_makes_no_samples);
  return g_test_run();
}
