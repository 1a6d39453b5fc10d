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
  e2e_assert_text(strchr(none, '\n') + 1, "0,0,\"instruments_xml\",3\n");
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
  e2e_assert_text(strchr(rest, '\n') + 1, "1500,1\n");
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
  g_test_add_func("/e2e/instruments/real-potential-hangs-export-makes-no-samples",
                  test_potential_hangs_export_makes_no_samples);
  return g_test_run();
}
