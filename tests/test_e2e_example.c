/*
 * The bundled example (tests/data/example), which the README's first
 * command (tools/demo.sh) packs into a ZIP and queries with timeline.sql:
 * the timeline it shows is checked here, so the README cannot drift from
 * what the tool does.
 *
 * The manifest puts client.json on machine "phone" and server.json on
 * "backend", and relates the server's private clock to the client's with
 * offset_ns 100 000: the server reads T when the client reads T + 100 µs
 * (docs/clock-model.md §9.3). client.json is the first clockless file in
 * processing order, so its private clock is trace time and its events stay
 * at their own times (µs -> ns, fractions kept: 1750.25 µs -> 1 750 250).
 * The server's events move by +100 000 ns: handle /index 1050.125 µs ->
 * 1 150 125, query users 1100 µs -> 1 200 000, response sent 1360 µs ->
 * 1 460 000. Named machines get raw ids from 2^32 in order of first
 * appearance in the manifest: phone 4294967296, backend 4294967297.
 */
#include <string.h>

#include "e2e_support.h"

static void test_timeline_is_merged_across_two_machines(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  g_autofree char *sql_path =
      g_test_build_filename(G_TEST_DIST, "data", "example", "timeline.sql", NULL);
  const char *args[] = {"query", "example.zip", "-q", sql_path, NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  e2e_assert_text(r.out,
                  "\"ts\",\"dur\",\"depth\",\"name\",\"thread\",\"process\",\"machine\"\n"
                  "1000000,500000,0,\"fetch /index\",\"main\",\"client\",\"phone\"\n"
                  "1100000,200500,1,\"send request\",\"main\",\"client\",\"phone\"\n"
                  "1150125,300000,0,\"handle /index\",\"worker\",\"server\",\"backend\"\n"
                  "1200000,100000,1,\"query users\",\"worker\",\"server\",\"backend\"\n"
                  "1460000,0,0,\"response sent\",\"worker\",\"server\",\"backend\"\n"
                  "1600000,150250,0,\"render\",\"main\",\"client\",\"phone\"\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* The manifest's other effects: machine rows, attributes as metadata, one
 * two-clock snapshot for the override, no error stat. */
static void test_machines_attributes_and_clock_edge(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  const char *inputs[] = {"example.zip", NULL};
  g_autofree char *machines =
      e2e_query_in(dir, inputs, "SELECT id, raw_id, name FROM machine ORDER BY id");
  e2e_assert_text(machines, "\"id\",\"raw_id\",\"name\"\n"
                            "0,4294967296,\"phone\"\n1,4294967297,\"backend\"\n");
  g_autofree char *attributes = e2e_query_in(
      dir, inputs,
      "SELECT name, str_value, int_value FROM metadata "
      "WHERE name LIKE 'manifest_attribute.%' ORDER BY name");
  e2e_assert_text(attributes, "\"name\",\"str_value\",\"int_value\"\n"
                              "\"manifest_attribute.run\",\"[NULL]\",7\n"
                              "\"manifest_attribute.scenario\",\"page-load\",\"[NULL]\"\n");
  g_autofree char *edge = e2e_query_in(
      dir, inputs,
      "SELECT count(DISTINCT snapshot_id) AS snapshots, "
      "(SELECT count(*) FROM stats WHERE value > 0 AND severity = 'error') AS errors "
      "FROM clock_snapshot");
  e2e_assert_text(edge, "\"snapshots\",\"errors\"\n1,0\n");
  e2e_cleanup(dir);
}

/* The demo ends by exporting the merge (tools/demo.sh): merged.pftrace
 * and merged.json, their formats chosen by the names as the demo runs
 * them. Each reads back as the same timeline: the Perfetto file with its
 * machines; the JSON with every process named "<machine>: <name>" and
 * backend's pid 20 / tid 21 at 10 000 020 / 10 000 021 (docs/exports.md:
 * machine 1 of stride 10 000 000), JSON having no machine rows. */
static void test_demo_exports_open_as_the_same_timeline(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  g_autofree char *sql_path =
      g_test_build_filename(G_TEST_DIST, "data", "example", "timeline.sql", NULL);
  const char *outputs[] = {"merged.pftrace", "merged.json"};
  for (int i = 0; i < 2; i++) {
    const char *export_args[] = {"export", "example.zip", "-o", outputs[i], NULL};
    e2e_result r = e2e_run_in(dir, export_args);
    g_assert_cmpint(r.exit_code, ==, 0);
    e2e_assert_text(r.err, "");
    e2e_assert_text(r.out, "");
    e2e_result_clear(&r);
  }
  const char *pftrace_args[] = {"query", "merged.pftrace", "-q", sql_path, NULL};
  e2e_result r = e2e_run_in(dir, pftrace_args);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out,
                  "\"ts\",\"dur\",\"depth\",\"name\",\"thread\",\"process\",\"machine\"\n"
                  "1000000,500000,0,\"fetch /index\",\"main\",\"client\",\"phone\"\n"
                  "1100000,200500,1,\"send request\",\"main\",\"client\",\"phone\"\n"
                  "1150125,300000,0,\"handle /index\",\"worker\",\"server\",\"backend\"\n"
                  "1200000,100000,1,\"query users\",\"worker\",\"server\",\"backend\"\n"
                  "1460000,0,0,\"response sent\",\"worker\",\"server\",\"backend\"\n"
                  "1600000,150250,0,\"render\",\"main\",\"client\",\"phone\"\n");
  e2e_result_clear(&r);
  const char *json_args[] = {"query", "merged.json", "-Q",
                             "SELECT s.ts, s.dur, s.depth, s.name, t.tid, p.pid, p.name "
                             "FROM slice s JOIN thread_track tt ON s.track_id = tt.id "
                             "JOIN thread t USING (utid) JOIN process p USING (upid) "
                             "ORDER BY s.ts",
                             NULL};
  r = e2e_run_in(dir, json_args);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out,
                  "\"ts\",\"dur\",\"depth\",\"name\",\"tid\",\"pid\",\"name\"\n"
                  "1000000,500000,0,\"fetch /index\",11,10,\"phone: client\"\n"
                  "1100000,200500,1,\"send request\",11,10,\"phone: client\"\n"
                  "1150125,300000,0,\"handle /index\",10000021,10000020,\"backend: server\"\n"
                  "1200000,100000,1,\"query users\",10000021,10000020,\"backend: server\"\n"
                  "1460000,0,0,\"response sent\",10000021,10000020,\"backend: server\"\n"
                  "1600000,150250,0,\"render\",11,10,\"phone: client\"\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/example/timeline-is-merged-across-two-machines",
                  test_timeline_is_merged_across_two_machines);
  g_test_add_func("/e2e/example/machines-attributes-and-clock-edge",
                  test_machines_attributes_and_clock_edge);
  g_test_add_func("/e2e/example/demo-exports-open-as-the-same-timeline",
                  test_demo_exports_open_as_the_same_timeline);
  return g_test_run();
}
