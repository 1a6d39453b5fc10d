/*
 * The perfetto_manifest validation order (docs/clock-model.md §10.1):
 * which of two errors in one manifest is reported.
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include "manifest_checks.h"

/* ---- Validation order ---------------------------------------------------- */

static void test_order_version_first_wherever_written(void) {
  /* The order is the reference's, not the text's. */
  assert_parse_error("{'perfetto_manifest': {'files': 5, 'trace_time': 1, "
                     "'attributes': 2, 'version': 2}}",
                     "perfetto_manifest: unsupported version: 2. Only version "
                     "1 is supported; set \"version\": 1.");
  assert_parse_error("{'perfetto_manifest': {'files': 5, 'trace_time': 1}}",
                     "perfetto_manifest: missing required field: version");
}

static void test_order_trace_time_before_files(void) {
  assert_parse_error("{'perfetto_manifest': {'files': 5, 'version': 1, "
                     "'trace_time': {'clock': 'UPTIME'}}}",
                     "perfetto_manifest: unknown clock name: UPTIME. Use one "
                     "of REALTIME, REALTIME_COARSE, MONOTONIC, "
                     "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME.");
  /* Within trace_time: clock, then file, then machine. */
  assert_parse_error(M(", 'trace_time': {'machine': 1, 'file': 1, 'clock': 1}"),
                     "perfetto_manifest: clock name must be a string");
  assert_parse_error(
      M(", 'trace_time': {'machine': 1, 'file': 1, 'clock': 'BOOTTIME'}"),
      "perfetto_manifest: trace_time: file must be a string");
}

static void test_order_files_before_attributes(void) {
  assert_parse_error(M(", 'attributes': [], 'files': [{'path': 'a.pb', "
                       "'machines': 5}]"),
                     "perfetto_manifest: machines must be an array");
}

static void test_order_files_in_array_order(void) {
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'clocks': 1}, {}]"),
                     "perfetto_manifest: clocks must be an object");
  assert_parse_error(M(", 'files': [{}, {'path': 'a.pb', 'clocks': 1}]"),
                     "perfetto_manifest: files entries must be objects with a "
                     "string path");
}

static void test_order_within_an_entry(void) {
  /* path, then exported-table rules, then clocks, then machine/machines. */
  assert_parse_error(M(", 'files': [{'clocks': 1, 'machine': 1, "
                       "'__exported_table_schema': 1}]"),
                     "perfetto_manifest: files entries must be objects with a "
                     "string path");
  assert_parse_error(M(", 'files': [{'path': 't.arrow', 'clocks': 1, "
                       "'__exported_table_schema': 1}]"),
                     "perfetto_manifest: 't.arrow': an exported table is not a "
                     "trace, so __exported_table_schema cannot be combined "
                     "with clocks/machine/machines");
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'machine': {}, "
                       "'machines': 1, 'clocks': 1}]"),
                     "perfetto_manifest: clocks must be an object");
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'machine': {}, "
                       "'machines': 1}]"),
                     "perfetto_manifest: machine and machines are mutually "
                     "exclusive. Use `machine` for a single-machine file, or "
                     "`machines` to remap a multi-machine proto's embedded "
                     "ids; not both.");
}

static void test_order_within_clocks(void) {
  /* machine, clock, sync_to presence/shape, sync_to.file, sync_to.machine,
   * sync_to.clock, offset_ns: each wins over everything after it. */
  struct {
    const char *clocks;
    const char *expected;
  } cases[] = {
      {"{'offset_ns': 'x', 'sync_to': 1, 'clock': 1, 'machine': 1}",
       "perfetto_manifest: clocks: machine must be a string"},
      {"{'offset_ns': 'x', 'sync_to': 1, 'clock': 1}",
       "perfetto_manifest: clock name must be a string"},
      {"{'offset_ns': 'x', 'sync_to': 1}",
       "perfetto_manifest: clocks: sync_to must be an object"},
      {"{'offset_ns': 'x', 'sync_to': {'clock': 1, 'machine': 1}}",
       "perfetto_manifest: clocks: sync_to.file is required and must be a "
       "string"},
      {"{'offset_ns': 'x', 'sync_to': {'clock': 1, 'machine': 1, 'file': "
       "'b'}}",
       "perfetto_manifest: clocks: sync_to.machine must be a string"},
      {"{'offset_ns': 'x', 'sync_to': {'clock': 1, 'file': 'b'}}",
       "perfetto_manifest: clock name must be a string"},
      {"{'offset_ns': 'x', 'sync_to': {'file': 'b'}}",
       "perfetto_manifest: clocks: offset_ns must be an integer"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *json = g_strdup_printf(
        M(", 'files': [{'path': 'a', 'machines': 1, 'clocks': %s}]"),
        cases[i].clocks);
    assert_parse_error(json, cases[i].expected);
    g_free(json);
  }
}

static void test_order_within_machines(void) {
  /* Element by element; in one element the id range before the name. */
  assert_parse_error(M(", 'files': [{'path': 'a', 'machines': [{'id': -1, "
                       "'name': ''}, 5]}]"),
                     "perfetto_manifest: machines: id must be in [0, "
                     "4294967295]");
  assert_parse_error(M(", 'files': [{'path': 'a', 'machines': [{'id': 1, "
                       "'name': ''}, 5]}]"),
                     "perfetto_manifest: machines: name must be non-empty");
}

static void test_order_within_attributes(void) {
  /* Keys in first-appearance order, each with its last value. */
  assert_parse_error(M(", 'attributes': {'seed': true, '': 1}"),
                     "perfetto_manifest: attributes: 'seed' must be a string "
                     "or an integer");
  assert_parse_error(M(", 'attributes': {'': 1, 'seed': true}"),
                     "perfetto_manifest: attributes: keys must be non-empty");
  tm_manifest *m = parse_ok(M(", 'attributes': {'seed': true, 'seed': 3}"));
  g_assert_cmpuint(m->n_attributes, ==, 1);
  g_assert_true(m->attributes[0].is_int);
  g_assert_cmpint(m->attributes[0].int_value, ==, 3);
  manifest_free(m);
}

static void test_order_parse_before_resolution(void) {
  /* An attributes error is raised even though sync_to names a file that
   * the resolution would reject. */
  assert_parse_error(M(", 'files': [{'path': 'a.json', 'clocks': {'sync_to': "
                       "{'file': 'ghost'}}}], 'attributes': {'x': null}"),
                     "perfetto_manifest: attributes: 'x' must be a string or "
                     "an integer");
}

static void test_order_resolution_steps(void) {
  /* Exported-table presence before trace_time references. */
  assert_resolve_error(
      M(", 'trace_time': {'clock': 'BOOTTIME', 'file': 'ghost'}, 'files': [{"
        "'path': 'gone', '__exported_table_schema': {'format': 1, 'name': "
        "'t', 'row_count': 0, 'columns': []}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: table member 'gone' is declared but not present in "
      "the archive");
  /* trace_time references before any override. */
  assert_resolve_error(
      M(", 'trace_time': {'clock': 'BOOTTIME', 'file': 'ghost'}, 'files': [{"
        "'path': 'a.json', 'clocks': {'sync_to': {'file': 'phantom'}}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: trace_time: file names unknown file 'ghost'. It "
      "must match the `path` of an entry in the `files` array.");
  /* Overrides in files order. */
  assert_resolve_error(
      M(", 'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': "
        "'one'}}}, {'path': 'b.json', 'clocks': {'sync_to': {'file': "
        "'two'}}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: sync_to.file names unknown file 'one'. It "
      "must match the `path` of an entry in the `files` array.");
  /* In one override: source machine, reference, source member, reference
   * member. */
  assert_resolve_error(
      M(", 'files': [{'path': 'x.pb', 'machines': [{'id': 7, 'name': 'vm'}], "
        "'clocks': {'sync_to': {'file': 'ghost'}}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: file 'x.pb' is a multi-machine trace; name "
      "which machine the clock is on with clocks: machine.");
  assert_resolve_error(
      M(", 'files': [{'path': 'x.pb', 'clocks': {'sync_to': {'file': "
        "'ghost'}}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: sync_to.file names unknown file 'ghost'. It "
      "must match the `path` of an entry in the `files` array.");
  assert_resolve_error(
      M(", 'files': [{'path': 'x.json', 'clocks': {'sync_to': {'file': "
        "'y.json'}}}, {'path': 'y.json'}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: could not resolve file 'x.json'. It must "
      "match the `path` of an entry in the `files` array.");
  assert_resolve_error(
      M(", 'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': "
        "'y.json'}}}, {'path': 'y.json'}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: could not resolve file 'y.json'. It must "
      "match the `path` of an entry in the `files` array.");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/manifest/order/version-first-wherever-written",
                  test_order_version_first_wherever_written);
  g_test_add_func("/manifest/order/trace-time-before-files",
                  test_order_trace_time_before_files);
  g_test_add_func("/manifest/order/files-before-attributes",
                  test_order_files_before_attributes);
  g_test_add_func("/manifest/order/files-in-array-order",
                  test_order_files_in_array_order);
  g_test_add_func("/manifest/order/within-an-entry",
                  test_order_within_an_entry);
  g_test_add_func("/manifest/order/within-clocks", test_order_within_clocks);
  g_test_add_func("/manifest/order/within-machines",
                  test_order_within_machines);
  g_test_add_func("/manifest/order/within-attributes",
                  test_order_within_attributes);
  g_test_add_func("/manifest/order/parse-before-resolution",
                  test_order_parse_before_resolution);
  g_test_add_func("/manifest/order/resolution-steps",
                  test_order_resolution_steps);
  return g_test_run();
}
