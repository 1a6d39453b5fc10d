/*
 * Every error of the perfetto_manifest module, with its exact text: one
 * test per row of docs/clock-model.md §10.1, then the §10.2 messages
 * raised outside the manifest.
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include "manifest_checks.h"

/* ---- §10.1, one test per row ------------------------------------------- */

static void test_error_01_clock_name_not_string(void) {
  const char *expected = "perfetto_manifest: clock name must be a string";
  assert_parse_error(M(", 'trace_time': {'clock': 6}"), expected);
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'clocks': {'clock': null, "
                       "'sync_to': {'file': 'b.pb'}}}]"),
                     expected);
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'clocks': {"
                       "'sync_to': {'file': 'b.pb', 'clock': ['BOOTTIME']}}}]"),
                     expected);
}

static void test_error_02_unknown_clock_name(void) {
  assert_parse_error(M(", 'trace_time': {'clock': 'boottime'}"),
                     "perfetto_manifest: unknown clock name: boottime. Use one "
                     "of REALTIME, REALTIME_COARSE, MONOTONIC, "
                     "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME.");
  assert_parse_error(
      M(", 'files': [{'path': 'a.pb', 'clocks': {"
        "'sync_to': {'file': 'b.pb', 'clock': 'TRACE_FILE'}}}]"),
      "perfetto_manifest: unknown clock name: TRACE_FILE. Use one of "
      "REALTIME, REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW, "
      "BOOTTIME.");
}

static void test_error_03_clocks_machine_not_string(void) {
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'clocks': {'machine': 1, "
                       "'sync_to': {'file': 'b.pb'}}}]"),
                     "perfetto_manifest: clocks: machine must be a string");
}

static void test_error_04_clocks_without_sync_to(void) {
  assert_parse_error(
      M(", 'files': [{'path': 'a.pb', 'clocks': {'clock': 'BOOTTIME'}}]"),
      "perfetto_manifest: clocks: a sync_to block is required. Manual clock "
      "handling relates this file to a clock in another trace, e.g. "
      "\"sync_to\": {\"file\": \"other.pb\"}.");
}

static void test_error_05_sync_to_not_object(void) {
  assert_parse_error(
      M(", 'files': [{'path': 'a.pb', 'clocks': {'sync_to': 'b.pb'}}]"),
      "perfetto_manifest: clocks: sync_to must be an object");
}

static void test_error_06_sync_to_file(void) {
  const char *expected =
      "perfetto_manifest: clocks: sync_to.file is required and must be a "
      "string";
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'clocks': {'sync_to': "
                       "{'clock': 'BOOTTIME'}}}]"),
                     expected);
  assert_parse_error(
      M(", 'files': [{'path': 'a.pb', 'clocks': {'sync_to': {'file': 2}}}]"),
      expected);
}

static void test_error_07_sync_to_machine_not_string(void) {
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'clocks': {'sync_to': "
                       "{'file': 'b.pb', 'machine': {}}}}]"),
                     "perfetto_manifest: clocks: sync_to.machine must be a "
                     "string");
}

static void test_error_08_offset_not_integer(void) {
  /* Not an integral JSON number: a string, null, a fraction, and (our
   * documented choice) any number written with a fraction or an exponent,
   * even when its value is whole. */
  const char *offsets[] = {"'5'", "null", "1.5", "1.0", "1e3", "-2E1", "true"};
  for (size_t i = 0; i < G_N_ELEMENTS(offsets); i++) {
    char *json = g_strdup_printf(
        M(", 'files': [{'path': 'a.pb', 'clocks': {'sync_to': {'file': "
          "'b.pb'}, 'offset_ns': %s}}]"),
        offsets[i]);
    assert_parse_error(json, "perfetto_manifest: clocks: offset_ns must be an "
                             "integer");
    g_free(json);
  }
}

static void test_error_09_offset_out_of_range(void) {
  const char *offsets[] = {"-9223372036854775808", "9223372036854775808",
                           "-9223372036854775809", "100000000000000000000"};
  for (size_t i = 0; i < G_N_ELEMENTS(offsets); i++) {
    char *json = g_strdup_printf(
        M(", 'files': [{'path': 'a.pb', 'clocks': {'sync_to': {'file': "
          "'b.pb'}, 'offset_ns': %s}}]"),
        offsets[i]);
    assert_parse_error(json, "perfetto_manifest: clocks: offset_ns is out of "
                             "range");
    g_free(json);
  }
}

#define TABLE_ENTRY(schema)                                                    \
  ", 'files': [{'path': 't.arrow', '__exported_table_schema': " schema "}]"

static void test_error_10_exported_table_shape(void) {
  const char *expected =
      "perfetto_manifest: __exported_table_schema needs an integer format, a "
      "string name, an integer row_count and a columns array";
  assert_parse_error(M(TABLE_ENTRY("[]")), expected);
  assert_parse_error(M(TABLE_ENTRY("{'name': 't', 'row_count': 1, "
                                   "'columns': []}")),
                     expected);
  assert_parse_error(M(TABLE_ENTRY("{'format': 1.5, 'name': 't', "
                                   "'row_count': 1, 'columns': []}")),
                     expected);
  assert_parse_error(M(TABLE_ENTRY("{'format': 1, 'name': 3, "
                                   "'row_count': 1, 'columns': []}")),
                     expected);
  assert_parse_error(M(TABLE_ENTRY("{'format': 1, 'name': 't', "
                                   "'row_count': '1', 'columns': []}")),
                     expected);
  assert_parse_error(M(TABLE_ENTRY("{'format': 1, 'name': 't', "
                                   "'row_count': 1, 'columns': {}}")),
                     expected);
}

static void test_error_11_exported_table_row_count(void) {
  assert_parse_error(M(TABLE_ENTRY("{'format': 1, 'name': 'slices', "
                                   "'row_count': -1, 'columns': []}")),
                     "perfetto_manifest: table 'slices': invalid row_count");
  assert_parse_error(M(TABLE_ENTRY("{'format': 1, 'name': 'slices', "
                                   "'row_count': 4294967296, 'columns': []}")),
                     "perfetto_manifest: table 'slices': invalid row_count");
}

static void test_error_12_exported_table_column(void) {
  const char *expected = "perfetto_manifest: table 'slices': malformed column "
                         "entry";
  assert_parse_error(
      M(TABLE_ENTRY("{'format': 1, 'name': 'slices', "
                    "'row_count': 1, 'columns': [" COLUMN ", 'id']}")),
      expected);
  assert_parse_error(M(TABLE_ENTRY("{'format': 1, 'name': 'slices', "
                                   "'row_count': 1, 'columns': [{'name': 'id', "
                                   "'type': 'int64', 'nullability': 'x', "
                                   "'duplicates': 'no'}]}")),
                     expected);
}

static void test_error_13_attributes_not_object(void) {
  const char *expected =
      "perfetto_manifest: attributes must be an object of string or integer "
      "values, e.g. \"attributes\": {\"benchmark\": \"startup\"}.";
  assert_parse_error(M(", 'attributes': [['benchmark', 'startup']]"), expected);
  assert_parse_error(M(", 'attributes': 'benchmark=startup'"), expected);
}

static void test_error_14_attributes_empty_key(void) {
  assert_parse_error(M(", 'attributes': {'ok': 1, '': 'x'}"),
                     "perfetto_manifest: attributes: keys must be non-empty");
}

static void test_error_15_attributes_value_type(void) {
  const char *values[] = {
      "true", "1.5", "null", "[1]", "{'a': 1}", "1e2", "9223372036854775808"};
  for (size_t i = 0; i < G_N_ELEMENTS(values); i++) {
    char *json =
        g_strdup_printf(M(", 'attributes': {'run': 1, 'seed': %s}"), values[i]);
    assert_parse_error(json, "perfetto_manifest: attributes: 'seed' must be a "
                             "string or an integer");
    g_free(json);
  }
}

static void test_error_16_files_entry(void) {
  const char *expected =
      "perfetto_manifest: files entries must be objects with a string path";
  assert_parse_error(M(", 'files': ['a.pb']"), expected);
  assert_parse_error(M(", 'files': [{}]"), expected);
  assert_parse_error(M(", 'files': [{'path': 7}]"), expected);
  assert_parse_error(M(", 'files': [{'path': 'a.pb'}, null]"), expected);
}

static void test_error_17_exported_table_with_override(void) {
  const char *overrides[] = {
      "'clocks': {'sync_to': {'file': 'a.pb'}}",
      "'machine': {'name': 'phone'}",
      "'machines': []",
      "'clocks': null",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(overrides); i++) {
    char *json = g_strdup_printf(
        M(", 'files': [{'path': 't.arrow', %s, '__exported_table_schema': "
          "{'format': 1, 'name': 't', 'row_count': 0, 'columns': []}}]"),
        overrides[i]);
    assert_parse_error(json, "perfetto_manifest: 't.arrow': an exported table "
                             "is not a trace, so __exported_table_schema "
                             "cannot be combined with clocks/machine/machines");
    g_free(json);
  }
}

static void test_error_18_clocks_not_object(void) {
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'clocks': 'BOOTTIME'}]"),
                     "perfetto_manifest: clocks must be an object");
}

static void test_error_19_machine_and_machines(void) {
  assert_parse_error(
      M(", 'files': [{'path': 'a.pb', 'machine': {'name': 'phone'}, "
        "'machines': [{'id': 0, 'name': 'phone'}]}]"),
      "perfetto_manifest: machine and machines are mutually exclusive. Use "
      "`machine` for a single-machine file, or `machines` to remap a "
      "multi-machine proto's embedded ids; not both.");
}

static void test_error_20_machine_shape(void) {
  const char *expected =
      "perfetto_manifest: machine must be an object with a string name, e.g. "
      "\"machine\": {\"name\": \"phone\"}.";
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'machine': 'phone'}]"),
                     expected);
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'machine': {}}]"),
                     expected);
  assert_parse_error(M(", 'files': [{'path': 'a.pb', 'machine': {'name': 1}}]"),
                     expected);
}

static void test_error_21_machine_name_empty(void) {
  assert_parse_error(
      M(", 'files': [{'path': 'a.pb', 'machine': {'name': ''}}]"),
      "perfetto_manifest: machine: name must be non-empty");
}

static void test_error_22_machines_not_array(void) {
  assert_parse_error(
      M(", 'files': [{'path': 'a.pb', 'machines': {'0': 'phone'}}]"),
      "perfetto_manifest: machines must be an array");
}

static void test_error_23_machines_entry(void) {
  const char *entries[] = {
      "7",
      "{'name': 'vm'}",
      "{'id': '7', 'name': 'vm'}",
      "{'id': 7}",
      "{'id': 7, 'name': 7}",
      "{'id': null, 'name': 'vm'}",
      /* Our choice: a fraction or exponent is not an integer id. */
      "{'id': 1.5, 'name': 'vm'}",
      "{'id': 7.0, 'name': 'vm'}",
      "{'id': 1e30, 'name': 'vm'}",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(entries); i++) {
    char *json = g_strdup_printf(
        M(", 'files': [{'path': 'a.pb', 'machines': [{'id': 0, 'name': "
          "'host'}, %s]}]"),
        entries[i]);
    assert_parse_error(json, "perfetto_manifest: machines entries need an "
                             "integer id and a string name, e.g. "
                             "\"machines\": [{\"id\": 0, \"name\": "
                             "\"phone\"}].");
    g_free(json);
  }
}

static void test_error_24_machines_id_range(void) {
  const char *ids[] = {"-1", "4294967296", "-9223372036854775809",
                       "18446744073709551616"};
  for (size_t i = 0; i < G_N_ELEMENTS(ids); i++) {
    char *json = g_strdup_printf(
        M(", 'files': [{'path': 'a.pb', 'machines': [{'id': %s, 'name': "
          "'vm'}]}]"),
        ids[i]);
    assert_parse_error(json, "perfetto_manifest: machines: id must be in [0, "
                             "4294967295]");
    g_free(json);
  }
}

static void test_error_25_machines_name_empty(void) {
  assert_parse_error(
      M(", 'files': [{'path': 'a.pb', 'machines': [{'id': 0, 'name': ''}]}]"),
      "perfetto_manifest: machines: name must be non-empty");
}

static void test_error_26_multiple_manifests(void) {
  GError *error = manifest_error_multiple_manifests();
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_APPLY);
  g_assert_cmpstr(error->message, ==,
                  "multiple perfetto_manifest files in archive");
  g_error_free(error);
}

static void test_error_27_no_manifest_object(void) {
  const char *expected = "perfetto_manifest: expected a JSON object with a "
                         "top-level perfetto_manifest key";
  assert_parse_error("[{'perfetto_manifest': {'version': 1}}]", expected);
  assert_parse_error("{'perfetto-manifest': {'version': 1}}", expected);
  assert_parse_error("{'perfetto_manifest': [{'version': 1}]}", expected);
  assert_parse_error("{'perfetto_manifest': null}", expected);
  assert_parse_error("5", expected);
  /* A repeated key keeps its last value. */
  assert_parse_error("{'perfetto_manifest': {'version': 1}, "
                     "'perfetto_manifest': 1}",
                     expected);
}

static void test_error_28_version_missing(void) {
  assert_parse_error("{'perfetto_manifest': {'files': []}}",
                     "perfetto_manifest: missing required field: version");
}

static void test_error_29_version_not_integer(void) {
  const char *versions[] = {
      "1.5", "'1'", "1.0", "true", "null", "1e0", "99999999999999999999"};
  for (size_t i = 0; i < G_N_ELEMENTS(versions); i++) {
    char *json =
        g_strdup_printf("{'perfetto_manifest': {'version': %s}}", versions[i]);
    assert_parse_error(json, "perfetto_manifest: version must be an integer");
    g_free(json);
  }
}

static void test_error_30_version_unsupported(void) {
  assert_parse_error("{'perfetto_manifest': {'version': 2}}",
                     "perfetto_manifest: unsupported version: 2. Only version "
                     "1 is supported; set \"version\": 1.");
  assert_parse_error("{'perfetto_manifest': {'version': -9223372036854775808}}",
                     "perfetto_manifest: unsupported version: "
                     "-9223372036854775808. Only version 1 is supported; set "
                     "\"version\": 1.");
  assert_parse_error("{'perfetto_manifest': {'version': 0}}",
                     "perfetto_manifest: unsupported version: 0. Only version "
                     "1 is supported; set \"version\": 1.");
}

static void test_error_31_trace_time_not_object(void) {
  assert_parse_error(M(", 'trace_time': 'BOOTTIME'"),
                     "perfetto_manifest: trace_time must be an object");
  assert_parse_error(M(", 'trace_time': null"),
                     "perfetto_manifest: trace_time must be an object");
}

static void test_error_32_trace_time_without_clock(void) {
  assert_parse_error(M(", 'trace_time': {'file': 'a.pb'}"),
                     "perfetto_manifest: trace_time needs a clock");
}

static void test_error_33_trace_time_file_not_string(void) {
  assert_parse_error(M(", 'trace_time': {'clock': 'BOOTTIME', 'file': null}"),
                     "perfetto_manifest: trace_time: file must be a string");
}

static void test_error_34_trace_time_machine_not_string(void) {
  assert_parse_error(M(", 'trace_time': {'clock': 'BOOTTIME', 'file': 'a.pb', "
                       "'machine': 0}"),
                     "perfetto_manifest: trace_time: machine must be a string");
}

static void test_error_35_files_not_array(void) {
  assert_parse_error(M(", 'files': {'path': 'a.pb'}"),
                     "perfetto_manifest: files must be an array");
}

static void test_error_36_table_member_missing(void) {
  assert_resolve_error(M(", 'files': [{'path': 'gone.arrow', "
                         "'__exported_table_schema': {'format': 1, 'name': "
                         "'slices', 'row_count': 1, 'columns': [" COLUMN
                         "]}}]"),
                       members, N_MEMBERS,
                       "perfetto_manifest: table member 'gone.arrow' is "
                       "declared but not present in the archive");
}

static void test_error_37_machine_without_file(void) {
  assert_resolve_error(
      M(", 'trace_time': {'clock': 'BOOTTIME', 'machine': 'vm'}, 'files': "
        "[{'path': 'a.pb', 'machines': [{'id': 7, 'name': 'vm'}]}]"),
      members, N_MEMBERS,
      "perfetto_manifest: trace_time: machine 'vm' needs trace_time: file "
      "too: a machine name alone is ambiguous because embedded machine ids "
      "are scoped to their trace.");
}

static void test_error_38_unknown_file(void) {
  assert_resolve_error(M(", 'trace_time': {'clock': 'BOOTTIME', 'file': "
                         "'ghost.pb'}, 'files': [{'path': 'a.pb'}]"),
                       members, N_MEMBERS,
                       "perfetto_manifest: trace_time: file names unknown "
                       "file 'ghost.pb'. It must match the `path` of an entry "
                       "in the `files` array.");
  /* A member of the archive that the manifest does not list is unknown. */
  assert_resolve_error(M(", 'files': [{'path': 'a.json', 'clocks': "
                         "{'sync_to': {'file': 'b.json'}}}]"),
                       members, N_MEMBERS,
                       "perfetto_manifest: clocks: sync_to.file names unknown "
                       "file 'b.json'. It must match the `path` of an entry "
                       "in the `files` array.");
}

static void test_error_39_reference_is_multi_machine(void) {
  assert_resolve_error(
      M(", 'trace_time': {'clock': 'BOOTTIME', 'file': 'a.pb'}, 'files': "
        "[{'path': 'a.pb', 'machines': [{'id': 0, 'name': 'host'}]}]"),
      members, N_MEMBERS,
      "perfetto_manifest: trace_time: file 'a.pb' is a multi-machine trace; "
      "also name the machine with trace_time: machine.");
  assert_resolve_error(
      M(", 'files': [{'path': 'relay.pb', 'machines': [{'id': 0, 'name': "
        "'host'}, {'id': 7, 'name': 'vm'}]}, {'path': 'a.json', 'clocks': "
        "{'sync_to': {'file': 'relay.pb', 'clock': 'BOOTTIME'}}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: sync_to.file 'relay.pb' is a multi-machine "
      "trace; also name the machine with clocks: sync_to.machine.");
}

static void test_error_40_machine_not_declared_by_file(void) {
  /* `vm` exists, but phone.pb does not declare it. */
  assert_resolve_error(
      M(", 'files': [{'path': 'phone.pb', 'machine': {'name': 'phone'}}, "
        "{'path': 'relay.pb', 'machines': [{'id': 7, 'name': 'vm'}]}, "
        "{'path': 'a.json', 'clocks': {'sync_to': {'file': 'phone.pb', "
        "'machine': 'vm'}}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: sync_to.machine 'vm' is not a machine "
      "declared by file 'phone.pb'.");
  /* No machine of that name at all. */
  assert_resolve_error(
      M(", 'trace_time': {'clock': 'MONOTONIC', 'file': 'a.pb', 'machine': "
        "'host'}, 'files': [{'path': 'a.pb'}]"),
      members, N_MEMBERS,
      "perfetto_manifest: trace_time: machine 'host' is not a machine "
      "declared by file 'a.pb'.");
}

static void test_error_41_source_is_multi_machine(void) {
  assert_resolve_error(
      M(", 'files': [{'path': 'a.pb', 'machines': [{'id': 0, 'name': 'host'}, "
        "{'id': 7, 'name': 'vm'}], 'clocks': {'clock': 'BOOTTIME', "
        "'sync_to': {'file': 'b.pb', 'clock': 'BOOTTIME'}}}, "
        "{'path': 'b.pb'}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: file 'a.pb' is a multi-machine trace; name "
      "which machine the clock is on with clocks: machine.");
}

static void test_error_42_source_machine_not_declared(void) {
  assert_resolve_error(
      M(", 'files': [{'path': 'a.pb', 'machine': {'name': 'phone'}, "
        "'clocks': {'machine': 'vm', 'clock': 'BOOTTIME', 'sync_to': "
        "{'file': 'b.pb', 'clock': 'BOOTTIME'}}}, {'path': 'b.pb', "
        "'machines': [{'id': 7, 'name': 'vm'}]}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: machine 'vm' is not a machine declared by "
      "file 'a.pb'.");
}

static void test_error_43_member_not_in_input(void) {
  /* A PIN source that is not a member of the input. */
  assert_resolve_error(M(", 'files': [{'path': 'c.json', 'clocks': "
                         "{'sync_to': {'file': 'a.pb', 'clock': 'BOOTTIME'}}},"
                         " {'path': 'a.pb'}]"),
                       members, N_MEMBERS,
                       "perfetto_manifest: clocks: could not resolve file "
                       "'c.json'. It must match the `path` of an entry in the "
                       "`files` array.");
  /* A private-clock reference that is not a member. */
  assert_resolve_error(M(", 'files': [{'path': 'a.json', 'clocks': "
                         "{'sync_to': {'file': 'c.json'}}}, {'path': "
                         "'c.json'}]"),
                       members, N_MEMBERS,
                       "perfetto_manifest: clocks: could not resolve file "
                       "'c.json'. It must match the `path` of an entry in the "
                       "`files` array.");
  /* RELATE to a builtin needs neither file to be present. */
  tm_manifest *m = resolve_ok(
      M(", 'files': [{'path': 'c.pb', 'clocks': {'clock': 'BOOTTIME', "
        "'sync_to': {'file': 'd.pb', 'clock': 'BOOTTIME'}}}, {'path': "
        "'d.pb'}]"),
      members, N_MEMBERS);
  g_assert_cmpuint(m->files[0].clocks->source_member, ==, NO_MEMBER);
  g_assert_cmpuint(m->files[0].clocks->sync_member, ==, NO_MEMBER);
  manifest_free(m);
}

/* ---- §10.2 messages raised outside the manifest -------------------------- */

static void assert_apply_error(GError *error, const char *expected) {
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_APPLY);
  g_assert_cmpstr(error->message, ==, expected);
  g_error_free(error);
}

static void test_lazy_errors(void) {
  assert_apply_error(manifest_error_not_first(),
                     "perfetto_manifest file must be the first trace file in "
                     "the input");
  assert_apply_error(manifest_error_override_on_container("inner.zip"),
                     "perfetto_manifest: overrides are not supported for trace "
                     "files which are themselves archives or "
                     "perfetto_manifest files: inner.zip");
  assert_apply_error(manifest_error_pinned_clock_snapshot(),
                     "perfetto_manifest: clock overrides require the trace to "
                     "use a single clock");
  assert_apply_error(manifest_error_undeclared_machine(4294967295u),
                     "perfetto_manifest: machines: trace has a packet from "
                     "undeclared machine id 4294967295");
  assert_apply_error(
      manifest_error_machine_on_multi_machine_file(),
      "perfetto_manifest: a `machine` override attributes the file to one "
      "machine, but the file contains packets from multiple machines. Replace "
      "`machine` with a `machines` block that maps each embedded machine_id to "
      "a named machine, e.g. \"machines\": [{\"id\": 0, \"name\": \"phone\"}, "
      "{\"id\": 7, \"name\": \"vm\"}].");
  assert_apply_error(
      manifest_error_clocks_on_multi_machine_file(),
      "perfetto_manifest: a `clocks` override applies only to a "
      "single-machine file, but the file contains packets from multiple "
      "machines. Remove the `clocks` override and let the trace's own remote "
      "clock snapshots align the machines; if you need to anchor a specific "
      "embedded machine, split it into its own file and override that.");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/manifest/errors/01-clock-name-not-a-string",
                  test_error_01_clock_name_not_string);
  g_test_add_func("/manifest/errors/02-unknown-clock-name",
                  test_error_02_unknown_clock_name);
  g_test_add_func("/manifest/errors/03-clocks-machine-not-a-string",
                  test_error_03_clocks_machine_not_string);
  g_test_add_func("/manifest/errors/04-clocks-without-sync-to",
                  test_error_04_clocks_without_sync_to);
  g_test_add_func("/manifest/errors/05-sync-to-not-an-object",
                  test_error_05_sync_to_not_object);
  g_test_add_func("/manifest/errors/06-sync-to-file-missing-or-not-a-string",
                  test_error_06_sync_to_file);
  g_test_add_func("/manifest/errors/07-sync-to-machine-not-a-string",
                  test_error_07_sync_to_machine_not_string);
  g_test_add_func("/manifest/errors/08-offset-not-an-integer",
                  test_error_08_offset_not_integer);
  g_test_add_func("/manifest/errors/09-offset-out-of-range",
                  test_error_09_offset_out_of_range);
  g_test_add_func("/manifest/errors/10-exported-table-shape",
                  test_error_10_exported_table_shape);
  g_test_add_func("/manifest/errors/11-exported-table-row-count",
                  test_error_11_exported_table_row_count);
  g_test_add_func("/manifest/errors/12-exported-table-column",
                  test_error_12_exported_table_column);
  g_test_add_func("/manifest/errors/13-attributes-not-an-object",
                  test_error_13_attributes_not_object);
  g_test_add_func("/manifest/errors/14-attributes-empty-key",
                  test_error_14_attributes_empty_key);
  g_test_add_func("/manifest/errors/15-attributes-value-neither-string-nor-int",
                  test_error_15_attributes_value_type);
  g_test_add_func("/manifest/errors/16-files-entry-without-string-path",
                  test_error_16_files_entry);
  g_test_add_func("/manifest/errors/17-exported-table-with-override",
                  test_error_17_exported_table_with_override);
  g_test_add_func("/manifest/errors/18-clocks-not-an-object",
                  test_error_18_clocks_not_object);
  g_test_add_func("/manifest/errors/19-machine-and-machines",
                  test_error_19_machine_and_machines);
  g_test_add_func("/manifest/errors/20-machine-without-string-name",
                  test_error_20_machine_shape);
  g_test_add_func("/manifest/errors/21-machine-name-empty",
                  test_error_21_machine_name_empty);
  g_test_add_func("/manifest/errors/22-machines-not-an-array",
                  test_error_22_machines_not_array);
  g_test_add_func("/manifest/errors/23-machines-entry-shape",
                  test_error_23_machines_entry);
  g_test_add_func("/manifest/errors/24-machines-id-out-of-range",
                  test_error_24_machines_id_range);
  g_test_add_func("/manifest/errors/25-machines-name-empty",
                  test_error_25_machines_name_empty);
  g_test_add_func("/manifest/errors/26-multiple-manifests",
                  test_error_26_multiple_manifests);
  g_test_add_func("/manifest/errors/27-no-manifest-object",
                  test_error_27_no_manifest_object);
  g_test_add_func("/manifest/errors/28-version-missing",
                  test_error_28_version_missing);
  g_test_add_func("/manifest/errors/29-version-not-an-integer",
                  test_error_29_version_not_integer);
  g_test_add_func("/manifest/errors/30-version-unsupported",
                  test_error_30_version_unsupported);
  g_test_add_func("/manifest/errors/31-trace-time-not-an-object",
                  test_error_31_trace_time_not_object);
  g_test_add_func("/manifest/errors/32-trace-time-without-clock",
                  test_error_32_trace_time_without_clock);
  g_test_add_func("/manifest/errors/33-trace-time-file-not-a-string",
                  test_error_33_trace_time_file_not_string);
  g_test_add_func("/manifest/errors/34-trace-time-machine-not-a-string",
                  test_error_34_trace_time_machine_not_string);
  g_test_add_func("/manifest/errors/35-files-not-an-array",
                  test_error_35_files_not_array);
  g_test_add_func("/manifest/errors/36-table-member-not-in-archive",
                  test_error_36_table_member_missing);
  g_test_add_func("/manifest/errors/37-machine-without-file",
                  test_error_37_machine_without_file);
  g_test_add_func("/manifest/errors/38-unknown-file",
                  test_error_38_unknown_file);
  g_test_add_func("/manifest/errors/39-reference-is-multi-machine",
                  test_error_39_reference_is_multi_machine);
  g_test_add_func("/manifest/errors/40-machine-not-declared-by-file",
                  test_error_40_machine_not_declared_by_file);
  g_test_add_func("/manifest/errors/41-source-file-is-multi-machine",
                  test_error_41_source_is_multi_machine);
  g_test_add_func("/manifest/errors/42-source-machine-not-declared",
                  test_error_42_source_machine_not_declared);
  g_test_add_func("/manifest/errors/43-member-not-in-input",
                  test_error_43_member_not_in_input);
  g_test_add_func("/manifest/errors/raised-outside-the-manifest",
                  test_lazy_errors);
  return g_test_run();
}
