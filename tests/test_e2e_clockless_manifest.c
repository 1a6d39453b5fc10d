/*
 * End-to-end: the clockless readers (Chrome JSON, Gecko, Instruments) under
 * a perfetto_manifest — attributed to named machines, and PINned to another
 * file's timeline with an offset — through the host's generic rules, with
 * no reader-specific code in the host.
 *
 * Worked values: every file is clockless, so each sits on its private
 * timeline. anchor.json is not pinned and sorts first by name among the
 * unpinned files, so it owns trace time (clock 11). A PIN with offset_ns N
 * means the pinned file reads T when anchor.json reads T + N: its events
 * land N ns later than their raw value.
 */
#include <glib.h>
#include <string.h>

#include "e2e_support.h"

/* One X slice at 5 µs = 5000 ns. */
static const char anchor_json[] =
    "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1,\"name\":\"anchor\"}]\n";

/* Raw Gecko profile: one thread (pid 10, tid 11), samples at 1.5 ms and
 * 2 ms (1 500 000 and 2 000 000 ns) on stack main>paint. */
static const char gecko_profile[] =
    "{\"meta\":{\"version\":12,\"categories\":[{\"name\":\"Other\"}]},\n"
    " \"threads\":[{\"name\":\"GeckoMain\",\"tid\":11,\"pid\":10,\n"
    "   \"stringTable\":[\"main\",\"paint\"],\n"
    "   \"frameTable\":{\"schema\":{\"location\":0},\"data\":[[0],[1]]},\n"
    "   \"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[[null,0],[0,1]]},\n"
    "   \"samples\":{\"schema\":{\"stack\":0,\"time\":1},\"data\":[[1,1.5],[1,2.0]]}}]}\n";

/* Instruments export: thread 77 of process 50, samples at 1000 and 3000 ns
 * on backtrace [leaf, main]. */
static const char instruments_xml[] =
    "<?xml version=\"1.0\"?>\n<trace-query-result>\n"
    "<node xpath='//trace-toc[1]/run[1]/data[1]/table[1]'><schema name=\"time-profile\"/>\n"
    "<row><sample-time id=\"1\">1000</sample-time>"
    "<thread id=\"2\" fmt=\"Main Thread\"><tid id=\"3\">77</tid>"
    "<process id=\"4\" fmt=\"app (50)\"><pid id=\"5\">50</pid></process></thread>"
    "<process ref=\"4\"/><backtrace id=\"6\">"
    "<frame id=\"7\" name=\"leaf\" addr=\"0x1010\"/><frame id=\"8\" name=\"main\" addr=\"0x1100\"/>"
    "</backtrace></row>\n"
    "<row><sample-time id=\"9\">3000</sample-time><thread ref=\"2\"/><process ref=\"4\"/>"
    "<backtrace ref=\"6\"/></row>\n"
    "</node></trace-query-result>\n";

static char *run_zip(const char *dir, const char *manifest, const char *sql) {
  const e2e_member members[] = {
      {"anchor.json", anchor_json, 0},
      {"browser.json.gecko", gecko_profile, 0},
      {"app.xml", instruments_xml, 0},
      {"perfetto_manifest.json", manifest, 0},
  };
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 4);
  const char *inputs[] = {"run.zip", NULL};
  return e2e_query_in(dir, inputs, sql);
}

#define SAMPLES_SQL                                                          \
  "SELECT s.ts, t.tid, m.name AS machine, m.raw_id FROM ("                    \
  "  SELECT ts, utid FROM cpu_profile_stack_sample"                          \
  "  UNION ALL SELECT ts, utid FROM instruments_sample) s "                  \
  "JOIN thread t USING (utid) JOIN machine m ON t.machine_id = m.id "        \
  "ORDER BY s.ts"

/* Attribution: the Gecko profile on "laptop", the Instruments export on
 * "phone"; machines named by the manifest get raw ids 2^32 (laptop, first
 * in the files array) and 2^32 + 1 (phone). No clocks: every private
 * timeline is tied to trace time at zero offset, so times stay raw. */
static void test_clockless_files_land_on_their_named_machines(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *manifest =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      " {\"path\": \"browser.json.gecko\", \"machine\": {\"name\": \"laptop\"}},\n"
      " {\"path\": \"app.xml\", \"machine\": {\"name\": \"phone\"}}]}}\n";
  g_autofree char *samples = run_zip(dir, manifest, SAMPLES_SQL);
  e2e_assert_text(samples, "\"ts\",\"tid\",\"machine\",\"raw_id\"\n"
                           "1000,77,\"phone\",4294967297\n"
                           "3000,77,\"phone\",4294967297\n"
                           "1500000,11,\"laptop\",4294967296\n"
                           "2000000,11,\"laptop\",4294967296\n");
  /* anchor.json has no entry: it stays on the host machine. */
  g_autofree char *anchor = run_zip(
      dir, manifest,
      "SELECT m.raw_id FROM slice s JOIN thread_track tt ON s.track_id = tt.id "
      "JOIN thread t USING (utid) JOIN machine m ON t.machine_id = m.id");
  e2e_assert_text(anchor, "\"raw_id\"\n0\n");
  e2e_cleanup(dir);
}

/* PIN: the Gecko profile pinned +1000 ns and the Instruments export pinned
 * -500 ns to anchor.json's timeline: Gecko samples at 1 501 000 and
 * 2 001 000, Instruments samples at 500 and 2500; anchor's slice stays at
 * 5000. */
static void test_each_clockless_reader_can_be_pinned_with_an_offset(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *manifest =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      " {\"path\": \"browser.json.gecko\", \"clocks\": {\"sync_to\": {\"file\": \"anchor.json\"},"
      "  \"offset_ns\": 1000}},\n"
      " {\"path\": \"app.xml\", \"clocks\": {\"sync_to\": {\"file\": \"anchor.json\"},"
      "  \"offset_ns\": -500}},\n"
      " {\"path\": \"anchor.json\"}]}}\n";
  g_autofree char *samples = run_zip(dir, manifest, SAMPLES_SQL);
  e2e_assert_text(samples, "\"ts\",\"tid\",\"machine\",\"raw_id\"\n"
                           "500,77,\"[NULL]\",0\n"
                           "2500,77,\"[NULL]\",0\n"
                           "1501000,11,\"[NULL]\",0\n"
                           "2001000,11,\"[NULL]\",0\n");
  g_autofree char *slice = run_zip(dir, manifest, "SELECT ts FROM slice");
  e2e_assert_text(slice, "\"ts\"\n5000\n");
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/clockless-manifest/files-land-on-their-named-machines",
                  test_clockless_files_land_on_their_named_machines);
  g_test_add_func("/e2e/clockless-manifest/each-reader-can-be-pinned-with-an-offset",
                  test_each_clockless_reader_can_be_pinned_with_an_offset);
  return g_test_run();
}
