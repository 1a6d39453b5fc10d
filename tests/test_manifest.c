/*
 * The perfetto_manifest module on its own: detection, every error of
 * reference/clock-model.md §10.1 with its exact text, the validation order
 * that decides which of two errors wins, the worked example of §9 parsed
 * into its full structure, and hostile inputs.
 *
 * JSON in this file is written with single quotes (turned into double
 * quotes before parsing) so that the manifests stay readable.
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include "input/manifest.h"

#define RAW0 TM_MANIFEST_FIRST_RAW_MACHINE_ID
#define NO_MACHINE TM_MANIFEST_NO_MACHINE
#define NO_MEMBER TM_MANIFEST_NO_MEMBER

/* A manifest with version 1 and `body` (more members, or empty). */
#define M(body) "{'perfetto_manifest': {'version': 1" body "}}"

static char *unquote(const char *json) {
  char *s = g_strdup(json);
  for (char *c = s; *c; c++)
    if (*c == '\'')
      *c = '"';
  return s;
}

static tm_manifest *parse(const char *json, GError **error) {
  char *s = unquote(json);
  tm_manifest *m = manifest_parse((const uint8_t *)s, strlen(s), error);
  g_free(s);
  return m;
}

static tm_manifest *parse_ok(const char *json) {
  GError *error = NULL;
  tm_manifest *m = parse(json, &error);
  g_assert_no_error(error);
  g_assert_nonnull(m);
  return m;
}

static void assert_parse_error(const char *json, const char *expected) {
  GError *error = NULL;
  tm_manifest *m = parse(json, &error);
  g_assert_null(m);
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==, expected);
  g_error_free(error);
}

static tm_manifest *resolve_ok(const char *json, const char *const *paths,
                               size_t n_paths) {
  tm_manifest *m = parse_ok(json);
  GError *error = NULL;
  g_assert_true(manifest_resolve(m, paths, n_paths, &error));
  g_assert_no_error(error);
  g_assert_true(m->resolved);
  return m;
}

static void assert_resolve_error(const char *json, const char *const *paths,
                                 size_t n_paths, const char *expected) {
  tm_manifest *m = parse_ok(json);
  GError *error = NULL;
  g_assert_false(manifest_resolve(m, paths, n_paths, &error));
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_UNRESOLVED);
  g_assert_cmpstr(error->message, ==, expected);
  g_assert_false(m->resolved);
  g_error_free(error);
  manifest_free(m);
}

static void assert_str(tm_manifest_string s, const char *expected) {
  if (expected == NULL) {
    g_assert_null(s.str);
    return;
  }
  g_assert_nonnull(s.str);
  g_assert_cmpuint(s.len, ==, strlen(expected));
  g_assert_cmpstr(s.str, ==, expected);
}

/* Paths every resolve test may use. */
static const char *const members[] = {NULL,     "a.pb",   "b.pb",
                                      "a.json", "b.json", "t.arrow"};
#define N_MEMBERS G_N_ELEMENTS(members)

/* ---- Detection ----------------------------------------------------------- */

static bool detect(const char *s) {
  return manifest_detect((const uint8_t *)s, strlen(s));
}

static void test_detect_key_after_whitespace(void) {
  g_assert_true(detect("{\"perfetto_manifest\": {}}"));
  g_assert_true(detect(" \r\n\t\v\f{ \"perfetto_manifest\" : {}}"));
  /* Every whitespace byte is removed, even inside the key. */
  g_assert_true(detect("{\"perfetto_ manifest\": {}}"));
  /* The prefix is all that is looked at. */
  g_assert_true(detect("{\"perfetto_manifest\""));
}

static void test_detect_rejects_other_json(void) {
  g_assert_false(detect("{\"traceEvents\": []}"));
  g_assert_false(detect("{\"meta\": {}, \"perfetto_manifest\": {}}"));
  g_assert_false(detect("[{\"perfetto_manifest\": {}}]"));
  g_assert_false(detect("{\"perfetto_manifes"));
  g_assert_false(detect("{\"Perfetto_manifest\": {}}"));
  g_assert_false(detect(""));
}

static void test_detect_first_128_bytes(void) {
  const char *key = "{\"perfetto_manifest\": {}}"; /* prefix: 20 bytes */
  char *fits = g_strconcat("                                                  "
                           "                                                  "
                           "        ", /* 108 spaces: prefix ends at 128 */
                           key, NULL);
  g_assert_true(detect(fits));
  char *beyond = g_strconcat(" ", fits, NULL);
  g_assert_false(detect(beyond));
  g_free(fits);
  g_free(beyond);
}

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
#define COLUMN                                                                 \
  "{'name': 'id', 'type': 'int64', 'nullability': 'non_null', "                \
  "'sort': 'sorted', 'duplicates': 'no'}"

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

/* ---- The worked example of §9 ------------------------------------------ */

static tm_manifest *parse_worked_example_in_chunks(size_t chunk) {
  char *path = g_test_build_filename(G_TEST_DIST, "data", "manifest",
                                     "worked_example.json", NULL);
  char *text;
  size_t len;
  GError *error = NULL;
  g_assert_true(g_file_get_contents(path, &text, &len, &error));
  g_assert_no_error(error);
  tm_manifest_parser *parser = manifest_parser_new();
  for (size_t off = 0; off < len; off += chunk) {
    size_t n = MIN(chunk, len - off);
    g_assert_true(
        manifest_parser_feed(parser, (const uint8_t *)text + off, n, &error));
    g_assert_no_error(error);
  }
  tm_manifest *m = manifest_parser_finish(parser, &error);
  g_assert_no_error(error);
  g_assert_nonnull(m);
  manifest_parser_free(parser);
  g_free(text);
  g_free(path);
  return m;
}

static void check_worked_example(size_t chunk) {
  tm_manifest *m = parse_worked_example_in_chunks(chunk);
  g_assert_cmpint(m->version, ==, 1);
  g_assert_false(m->resolved);

  /* Names in first-appearance order: phone (phone.pb's machine), host and
   * vm (relay.pb's machines); app.json's phone is the same machine. */
  g_assert_cmpuint(m->n_machines, ==, 3);
  assert_str(m->machines[0].name, "phone");
  assert_str(m->machines[1].name, "host");
  assert_str(m->machines[2].name, "vm");
  g_assert_cmpint(m->machines[0].raw_id, ==, INT64_C(4294967296));
  g_assert_cmpint(m->machines[1].raw_id, ==, INT64_C(4294967297));
  g_assert_cmpint(m->machines[2].raw_id, ==, INT64_C(4294967298));

  g_assert_true(m->trace_time.present);
  g_assert_cmpuint(m->trace_time.clock, ==, 6);
  assert_str(m->trace_time.file, "relay.pb");
  assert_str(m->trace_time.machine, "host");

  g_assert_cmpuint(m->n_files, ==, 3);
  const tm_manifest_file *phone = &m->files[0];
  assert_str(phone->path, "phone.pb");
  g_assert_false(phone->shadowed);
  g_assert_true(phone->has_machine);
  g_assert_false(phone->is_multi_machine);
  g_assert_false(phone->is_exported_table);
  g_assert_cmpuint(phone->machine, ==, 0);
  g_assert_cmpuint(phone->n_remap, ==, 0);
  g_assert_null(phone->clocks);
  g_assert_cmpuint(phone->n_declared, ==, 1);
  g_assert_cmpuint(phone->declared[0], ==, 0);

  const tm_manifest_file *relay = &m->files[1];
  assert_str(relay->path, "relay.pb");
  g_assert_false(relay->has_machine);
  g_assert_true(relay->is_multi_machine);
  g_assert_cmpuint(relay->machine, ==, 1); /* the id 0 entry: host */
  g_assert_cmpuint(relay->n_remap, ==, 2);
  g_assert_cmpuint(relay->remap[0].embedded_id, ==, 0);
  g_assert_cmpuint(relay->remap[0].machine, ==, 1);
  g_assert_cmpuint(relay->remap[1].embedded_id, ==, 7);
  g_assert_cmpuint(relay->remap[1].machine, ==, 2);
  g_assert_cmpuint(relay->n_declared, ==, 2);
  const tm_manifest_clocks *rc = relay->clocks;
  g_assert_nonnull(rc);
  assert_str(rc->machine_name, "vm");
  g_assert_cmpuint(rc->clock, ==, 6);
  assert_str(rc->sync_file, "phone.pb");
  assert_str(rc->sync_machine_name, NULL);
  g_assert_cmpuint(rc->sync_clock, ==, 6);
  g_assert_cmpint(rc->offset_ns, ==, 500);
  g_assert_cmpint(rc->source_reading_ns, ==, 0);
  g_assert_cmpint(rc->sync_reading_ns, ==, 500);
  g_assert_false(manifest_file_is_pinned(relay));
  g_assert_true(manifest_file_has_override(relay));

  const tm_manifest_file *app = &m->files[2];
  assert_str(app->path, "app.json");
  g_assert_true(app->has_machine);
  g_assert_cmpuint(app->machine, ==, 0); /* phone, shared with phone.pb */
  const tm_manifest_clocks *ac = app->clocks;
  g_assert_nonnull(ac);
  assert_str(ac->machine_name, NULL);
  g_assert_cmpuint(ac->clock, ==, 0); /* PIN */
  assert_str(ac->sync_file, "phone.pb");
  g_assert_cmpuint(ac->sync_clock, ==, 6);
  g_assert_cmpint(ac->offset_ns, ==, 250000000);
  g_assert_cmpint(ac->source_reading_ns, ==, 0);
  g_assert_cmpint(ac->sync_reading_ns, ==, 250000000);
  g_assert_true(manifest_file_is_pinned(app));

  g_assert_cmpuint(m->n_attributes, ==, 2);
  assert_str(m->attributes[0].key, "benchmark");
  g_assert_false(m->attributes[0].is_int);
  assert_str(m->attributes[0].str_value, "startup");
  assert_str(m->attributes[1].key, "run");
  g_assert_true(m->attributes[1].is_int);
  g_assert_cmpint(m->attributes[1].int_value, ==, 42);

  /* The archive: the root (no name), the manifest, then the traces in
   * archive order. */
  const char *const paths[] = {NULL, "manifest.json", "app.json", "phone.pb",
                               "relay.pb"};
  GError *error = NULL;
  g_assert_true(manifest_resolve(m, paths, G_N_ELEMENTS(paths), &error));
  g_assert_no_error(error);
  g_assert_true(m->resolved);
  /* Trace time: relay.pb's host. */
  g_assert_cmpuint(m->trace_time.machine_index, ==, 1);
  g_assert_false(m->trace_time.implicit_row_zero);
  /* relay.pb's vm BOOTTIME RELATEd to phone.pb's (phone's) BOOTTIME. */
  g_assert_cmpuint(rc->source_machine, ==, 2);
  g_assert_cmpuint(rc->sync_machine, ==, 0);
  g_assert_cmpuint(rc->sync_entry, ==, 0);
  g_assert_cmpuint(rc->source_member, ==, NO_MEMBER);
  g_assert_cmpuint(rc->sync_member, ==, NO_MEMBER);
  /* app.json's private clock PINned onto the phone's BOOTTIME. */
  g_assert_cmpuint(ac->source_machine, ==, 0);
  g_assert_cmpuint(ac->source_member, ==, 2);
  g_assert_cmpuint(ac->sync_machine, ==, 0);
  g_assert_cmpuint(ac->sync_entry, ==, 0);
  g_assert_cmpuint(ac->sync_member, ==, NO_MEMBER);

  g_assert_true(manifest_borrow_file(m, "relay.pb") == relay);
  g_assert_true(manifest_borrow_file(m, "app.json") == app);
  g_assert_null(manifest_borrow_file(m, "manifest.json"));
  uint32_t machine = NO_MACHINE;
  g_assert_true(manifest_file_remap(relay, 7, &machine));
  g_assert_cmpuint(machine, ==, 2);
  g_assert_true(manifest_file_remap(relay, 0, &machine));
  g_assert_cmpuint(machine, ==, 1);
  g_assert_false(manifest_file_remap(relay, 3, &machine));
  g_assert_false(manifest_file_remap(phone, 0, &machine));
  manifest_free(m);
}

static void test_worked_example(void) { check_worked_example(1 << 20); }

static void test_worked_example_byte_by_byte(void) { check_worked_example(1); }

/* ---- JSON semantics --------------------------------------------------------
 */

static void test_json_repeated_key_keeps_last_value(void) {
  tm_manifest *m = parse_ok(
      "{'perfetto_manifest': {'version': 2, 'version': 1, 'files': 5, "
      "'files': [{'path': 'a', 'path': 'b', 'clocks': 1, 'clocks': "
      "{'offset_ns': 1.5, 'offset_ns': 7, 'sync_to': {'file': 'x', 'file': "
      "'c'}}}], 'trace_time': 1, 'trace_time': {'clock': 'REALTIME'}}}");
  g_assert_cmpuint(m->n_files, ==, 1);
  assert_str(m->files[0].path, "b");
  g_assert_cmpint(m->files[0].clocks->offset_ns, ==, 7);
  assert_str(m->files[0].clocks->sync_file, "c");
  g_assert_cmpuint(m->trace_time.clock, ==, 1);
  manifest_free(m);
  assert_parse_error(M(", 'files': [], 'files': {}"),
                     "perfetto_manifest: files must be an array");
}

static void test_json_unknown_keys_ignored(void) {
  tm_manifest *m = parse_ok(
      "{'x': [1, {'y': [[[]]]}], 'perfetto_manifest': {'future': {'files': "
      "5, 'version': 'no'}, 'version': 1, 'trace_time': {'clock': "
      "'MONOTONIC_RAW', 'skew': [1, 2]}, 'files': [{'path': 'a.json', "
      "'format': 'json', 'machine': {'name': 'm', 'color': 'red'}, 'clocks': "
      "{'note': null, 'sync_to': {'file': 'a.json', 'extra': {}}}}, "
      "{'path': 'b.pb', 'machines': [{'id': 3, 'name': 'n', 'role': 'vm'}]}],"
      " 'attributes': {}}, 'z': 'tail'}");
  g_assert_cmpuint(m->trace_time.clock, ==, 5);
  g_assert_cmpuint(m->n_files, ==, 2);
  g_assert_cmpuint(m->n_machines, ==, 2);
  assert_str(m->machines[0].name, "m");
  assert_str(m->machines[1].name, "n");
  g_assert_cmpuint(m->files[1].n_remap, ==, 1);
  g_assert_cmpuint(m->files[1].machine, ==, NO_MACHINE);
  g_assert_cmpuint(m->n_attributes, ==, 0);
  manifest_free(m);
}

static void test_json_minimal_manifest_configures_nothing(void) {
  tm_manifest *m =
      resolve_ok("{'perfetto_manifest': {'version': 1}}", members, N_MEMBERS);
  g_assert_false(m->trace_time.present);
  g_assert_cmpuint(m->n_files, ==, 0);
  g_assert_cmpuint(m->n_machines, ==, 0);
  g_assert_cmpuint(m->n_attributes, ==, 0);
  g_assert_null(manifest_borrow_file(m, "a.pb"));
  manifest_free(m);
}

static void test_json_content_after_root_ignored(void) {
  tm_manifest *m = parse_ok(M("") " trailing {garbage");
  g_assert_cmpint(m->version, ==, 1);
  manifest_free(m);
}

static void assert_json_error(const char *text, size_t len, const char *prefix,
                              size_t offset) {
  GError *error = NULL;
  tm_manifest *m = manifest_parse((const uint8_t *)text, len, &error);
  g_assert_null(m);
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON);
  g_assert_true(g_str_has_prefix(error->message, prefix));
  char *suffix = g_strdup_printf(", near byte %zu", offset);
  g_assert_true(g_str_has_suffix(error->message, suffix));
  g_free(suffix);
  g_error_free(error);
}

static void test_json_syntax_errors(void) {
  GError *error = NULL;
  g_assert_null(manifest_parse((const uint8_t *)"", 0, &error));
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON);
  g_assert_cmpstr(error->message, ==, "Empty JSON input");
  g_clear_error(&error);

  const char *cut = "{\"perfetto_manifest\": {\"version\": 1";
  assert_json_error(cut, strlen(cut), "Failed to parse object: ", strlen(cut));
  const char *in_array = "{\"perfetto_manifest\": {\"files\": [1, }";
  assert_json_error(in_array, strlen(in_array),
                    "Failed to parse array: ", strlen(in_array));
  const char *start = "x{}";
  assert_json_error(start, strlen(start), "Failed to start parsing: ", 1);
  const char *comment = "{\"perfetto_manifest\": /* no */ {}}";
  assert_json_error(comment, strlen(comment), "Failed to parse object: ", 22);
}

static void test_json_non_utf8_string(void) {
  const char *latin1 = "{\"perfetto_manifest\": {\"version\": 1, \"files\": "
                       "[{\"path\": \"caf\xe9.json\"}]}}";
  GError *error = NULL;
  g_assert_null(
      manifest_parse((const uint8_t *)latin1, strlen(latin1), &error));
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON);
  g_assert_true(g_str_has_prefix(error->message, "Failed to parse object: "));
  g_assert_nonnull(strstr(error->message, "UTF8"));
  g_error_free(error);
}

static void test_json_nul_inside_strings(void) {
  /* Names differ after the NUL: two files, two machines; neither is the
   * member "a.json" nor matches it. */
  const char *paths[] = {"a.json"};
  tm_manifest *m = resolve_ok(
      M(", 'files': [{'path': 'a.json\\u0000x', 'machine': {'name': "
        "'m\\u00001'}}, {'path': 'a.json\\u0000y', 'machine': {'name': "
        "'m\\u00002'}}, {'path': 'b', 'clocks': {'clock': 'BOOTTIME', "
        "'sync_to': {'file': 'a.json\\u0000x', 'clock': 'BOOTTIME'}}}]"),
      paths, 1);
  g_assert_cmpuint(m->files[0].path.len, ==, 8);
  g_assert_false(m->files[1].shadowed);
  g_assert_cmpuint(m->n_machines, ==, 2);
  g_assert_cmpuint(m->files[2].clocks->sync_entry, ==, 0);
  g_assert_null(manifest_borrow_file(m, "a.json"));
  manifest_free(m);

  assert_resolve_error(
      M(", 'files': [{'path': 'a.json\\u0000x', 'clocks': {'sync_to': "
        "{'file': 'a.json\\u0000x', 'clock': 'BOOTTIME'}}}]"),
      paths, 1,
      "perfetto_manifest: clocks: could not resolve file 'a.json'. It must "
      "match the `path` of an entry in the `files` array.");
}

/* ---- Values ---------------------------------------------------------------
 */

static void test_values_clock_names(void) {
  const char *names[] = {"REALTIME",         "REALTIME_COARSE", "MONOTONIC",
                         "MONOTONIC_COARSE", "MONOTONIC_RAW",   "BOOTTIME"};
  for (uint32_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *json =
        g_strdup_printf(M(", 'trace_time': {'clock': '%s'}"), names[i]);
    tm_manifest *m = parse_ok(json);
    g_assert_cmpuint(m->trace_time.clock, ==, i + 1);
    g_assert_cmpstr(manifest_clock_name(i + 1), ==, names[i]);
    manifest_free(m);
    g_free(json);
  }
  g_assert_null(manifest_clock_name(0));
  g_assert_null(manifest_clock_name(7));
}

static void check_offset(const char *offset, int64_t value, int64_t source,
                         int64_t sync) {
  char *json = g_strdup_printf(
      M(", 'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': "
        "'b.json'}, 'offset_ns': %s}}, {'path': 'b.json'}]"),
      offset);
  tm_manifest *m = resolve_ok(json, members, N_MEMBERS);
  const tm_manifest_clocks *c = m->files[0].clocks;
  g_assert_cmpint(c->offset_ns, ==, value);
  g_assert_cmpint(c->source_reading_ns, ==, source);
  g_assert_cmpint(c->sync_reading_ns, ==, sync);
  /* Both private clocks: PIN onto b.json's own timeline. */
  g_assert_cmpuint(c->source_member, ==, 3);
  g_assert_cmpuint(c->sync_member, ==, 4);
  g_assert_cmpuint(c->sync_entry, ==, 1);
  g_assert_cmpuint(c->source_machine, ==, NO_MACHINE);
  g_assert_cmpuint(c->sync_machine, ==, NO_MACHINE);
  manifest_free(m);
  g_free(json);
}

static void test_values_offsets(void) {
  check_offset("500", 500, 0, 500);
  check_offset("-300", -300, 300, 0);
  check_offset("0", 0, 0, 0);
  check_offset("-0", 0, 0, 0);
  /* The largest magnitude accepted is 2^62 = 4611686018427387904. */
  check_offset("4611686018427387904", INT64_C(1) << 62, 0, INT64_C(1) << 62);
  check_offset("-4611686018427387904", -(INT64_C(1) << 62), INT64_C(1) << 62, 0);
  static const char range[] =
      "perfetto_manifest: clocks: offset_ns is out of range: it must be within "
      "-4611686018427387904 and 4611686018427387904 (2^62 ns, about 146 years)";
  static const char *const too_far[] = {"4611686018427387905", "9223372036854775807",
                                        "-4611686018427387905", "-9223372036854775807"};
  for (size_t i = 0; i < G_N_ELEMENTS(too_far); i++) {
    g_autofree char *json = g_strdup_printf(
        M(", 'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': "
          "'b.json'}, 'offset_ns': %s}}, {'path': 'b.json'}]"),
        too_far[i]);
    assert_parse_error(json, range);
  }
  /* Absent: zero offset. */
  tm_manifest *m = parse_ok(M(", 'files': [{'path': 'a', 'clocks': "
                              "{'sync_to': {'file': 'a'}}}]"));
  g_assert_cmpint(m->files[0].clocks->offset_ns, ==, 0);
  manifest_free(m);
}

static void test_values_attributes(void) {
  tm_manifest *m = parse_ok(M(", 'attributes': {'benchmark': 'startup', "
                              "'run': -9223372036854775808, 'benchmark': 7, "
                              "'device': '', 'big': 9223372036854775807}"));
  g_assert_cmpuint(m->n_attributes, ==, 4);
  assert_str(m->attributes[0].key, "benchmark");
  g_assert_true(m->attributes[0].is_int);
  g_assert_cmpint(m->attributes[0].int_value, ==, 7);
  assert_str(m->attributes[1].key, "run");
  g_assert_cmpint(m->attributes[1].int_value, ==, INT64_MIN);
  assert_str(m->attributes[2].key, "device");
  g_assert_false(m->attributes[2].is_int);
  assert_str(m->attributes[2].str_value, "");
  assert_str(m->attributes[3].key, "big");
  g_assert_cmpint(m->attributes[3].int_value, ==, INT64_MAX);
  manifest_free(m);
}

static void test_values_exported_table(void) {
  tm_manifest *m = resolve_ok(
      M(", 'files': [{'path': 't.arrow', '__exported_table_schema': {"
        "'format': 1, 'name': 'slices', 'row_count': 4294967295, 'columns': "
        "[" COLUMN ", " COLUMN "]}}]"),
      members, N_MEMBERS);
  const tm_manifest_file *f = &m->files[0];
  g_assert_true(f->is_exported_table);
  g_assert_cmpint(f->table->format, ==, 1);
  assert_str(f->table->name, "slices");
  g_assert_cmpuint(f->table->row_count, ==, UINT32_MAX);
  g_assert_cmpuint(f->table->n_columns, ==, 2);
  g_assert_false(manifest_file_has_override(f));
  manifest_free(m);
}

/* ---- Machines ---------------------------------------------------------------
 */

static void test_machines_first_appearance_order(void) {
  tm_manifest *m = parse_ok(
      M(", 'files': [{'path': 'a', 'machines': [{'id': 9, 'name': 'z'}, "
        "{'id': 0, 'name': 'y'}]}, {'path': 'b', 'machine': {'name': 'x'}}, "
        "{'path': 'c', 'machines': [{'id': 1, 'name': 'x'}, {'id': 2, 'name': "
        "'w'}]}, {'path': 'd', 'machine': {'name': 'z'}}]"));
  g_assert_cmpuint(m->n_machines, ==, 4);
  const char *order[] = {"z", "y", "x", "w"};
  for (uint32_t i = 0; i < 4; i++) {
    assert_str(m->machines[i].name, order[i]);
    g_assert_cmpint(m->machines[i].raw_id, ==, RAW0 + i);
  }
  g_assert_cmpuint(m->files[0].machine, ==, 1);              /* id 0 -> y */
  g_assert_cmpuint(m->files[0].remap[0].embedded_id, ==, 0); /* sorted */
  g_assert_cmpuint(m->files[1].machine, ==, 2);
  g_assert_cmpuint(m->files[2].machine, ==, NO_MACHINE); /* no id 0 */
  g_assert_true(m->files[2].is_multi_machine);
  g_assert_cmpuint(m->files[3].machine, ==, 0);
  manifest_free(m);
}

static void test_machines_repeated_id_first_wins(void) {
  tm_manifest *m = parse_ok(
      M(", 'files': [{'path': 'a', 'machines': [{'id': 0, 'name': 'p'}, "
        "{'id': 5, 'name': 'q'}, {'id': 0, 'name': 'r'}, {'id': 5, 'name': "
        "'p'}, {'id': 4294967295, 'name': 's'}]}]"));
  const tm_manifest_file *f = &m->files[0];
  g_assert_cmpuint(m->n_machines, ==, 4); /* p q r s: every name counts */
  g_assert_cmpuint(f->n_remap, ==, 3);
  g_assert_cmpuint(f->machine, ==, 0); /* p */
  uint32_t machine;
  g_assert_true(manifest_file_remap(f, 0, &machine));
  g_assert_cmpuint(machine, ==, 0);
  g_assert_true(manifest_file_remap(f, 5, &machine));
  g_assert_cmpuint(machine, ==, 1);
  g_assert_true(manifest_file_remap(f, UINT32_MAX, &machine));
  g_assert_cmpuint(machine, ==, 3);
  g_assert_false(manifest_file_remap(f, 1, &machine));
  /* All four names are declared by the file. */
  g_assert_cmpuint(f->n_declared, ==, 4);
  manifest_free(m);
}

static void test_machines_empty_array_is_single_machine(void) {
  tm_manifest *m = resolve_ok(
      M(", 'trace_time': {'clock': 'BOOTTIME', 'file': 'a.pb'}, 'files': "
        "[{'path': 'a.pb', 'machines': []}]"),
      members, N_MEMBERS);
  g_assert_false(m->files[0].is_multi_machine);
  g_assert_cmpuint(m->trace_time.machine_index, ==, NO_MACHINE);
  manifest_free(m);
}

static void test_machines_references_resolve(void) {
  tm_manifest *m = resolve_ok(
      M(", 'trace_time': {'clock': 'BOOTTIME', 'file': 'relay.pb', "
        "'machine': 'vm'}, 'files': [{'path': 'relay.pb', 'machines': [{'id': "
        "0, 'name': 'host'}, {'id': 7, 'name': 'vm'}]}, {'path': 'a.pb', "
        "'machine': {'name': 'vm'}, 'clocks': {'machine': 'vm', 'clock': "
        "'MONOTONIC', 'sync_to': {'file': 'relay.pb', 'machine': 'host', "
        "'clock': 'REALTIME'}}}]"),
      members, N_MEMBERS);
  g_assert_cmpuint(m->trace_time.machine_index, ==, 1);
  const tm_manifest_clocks *c = m->files[1].clocks;
  g_assert_cmpuint(c->source_machine, ==, 1); /* vm, declared by a.pb */
  g_assert_cmpuint(c->sync_machine, ==, 0);   /* host of relay.pb */
  g_assert_cmpuint(c->clock, ==, 3);
  g_assert_cmpuint(c->sync_clock, ==, 1);
  manifest_free(m);
}

static void test_trace_time_row_zero(void) {
  tm_manifest *m = resolve_ok(M(", 'trace_time': {'clock': 'REALTIME'}"),
                              members, N_MEMBERS);
  g_assert_true(m->trace_time.implicit_row_zero);
  g_assert_cmpuint(m->trace_time.machine_index, ==, NO_MACHINE);
  manifest_free(m);
  /* With named machines, row 0 is the first of them. */
  m = resolve_ok(M(", 'trace_time': {'clock': 'REALTIME'}, 'files': [{"
                   "'path': 'a.pb', 'machine': {'name': 'first'}}]"),
                 members, N_MEMBERS);
  g_assert_true(m->trace_time.implicit_row_zero);
  g_assert_cmpuint(m->trace_time.machine_index, ==, 0);
  manifest_free(m);
}

/* ---- Hostile inputs ---------------------------------------------------------
 */

static void test_hostile_duplicate_paths(void) {
  tm_manifest *m = resolve_ok(
      M(", 'files': [{'path': 'a.json', 'machine': {'name': 'one'}}, "
        "{'path': 'a.json', 'machine': {'name': 'one'}, 'clocks': {'sync_to': "
        "{'file': 'b.json'}, 'offset_ns': 9}}, {'path': 'b.json', 'clocks': "
        "{'sync_to': {'file': 'a.json', 'machine': 'one'}}}]"),
      members, N_MEMBERS);
  g_assert_false(m->files[0].shadowed);
  g_assert_true(m->files[1].shadowed);
  g_assert_true(manifest_borrow_file(m, "a.json") == &m->files[0]);
  /* The shadowed entry's override is validated; the session skips it (so
   * its sync_to back to b.json is no cycle). */
  g_assert_cmpuint(m->n_machines, ==, 1);
  g_assert_cmpuint(m->files[2].clocks->sync_entry, ==, 0);
  g_assert_cmpuint(m->files[2].clocks->sync_machine, ==, 0);
  manifest_free(m);
  /* The same path on different machines is an error, whichever way they
   * differ: another name, a name and none, `machine` and `machines`. */
  static const char *const second[] = {
      "'machine': {'name': 'two'}",
      "'clocks': {'sync_to': {'file': 'b.json'}}",
      "'machines': [{'id': 0, 'name': 'one'}]",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(second); i++) {
    g_autofree char *json = g_strdup_printf(
        M(", 'files': [{'path': 'a.json', 'machine': {'name': 'one'}}, "
          "{'path': 'b.json'}, {'path': 'a.json', %s}]"),
        second[i]);
    assert_parse_error(json, "perfetto_manifest: files: 'a.json' is listed twice with "
                             "different machines. A file's data is on one set of "
                             "machines: list it once, with `machine` or `machines`.");
  }
  /* A shadowed entry's errors are still raised. */
  assert_parse_error(M(", 'files': [{'path': 'a.json'}, {'path': 'a.json', "
                       "'machine': {'name': ''}}]"),
                     "perfetto_manifest: machine: name must be non-empty");
}

static void test_hostile_sync_to_cycles(void) {
  /* Two files synced to each other; three in a ring (a -> b -> c -> a),
   * named from the first file the walk finds on it. */
  assert_resolve_error(
      M(", 'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': "
        "'b.json'}, 'offset_ns': 100}}, {'path': 'b.json', 'clocks': "
        "{'sync_to': {'file': 'a.json'}, 'offset_ns': 200}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: sync_to forms a cycle: 'a.json' -> 'b.json' -> "
      "'a.json'. Each file must lead, through sync_to, to one that has no sync_to "
      "of its own.");
  assert_resolve_error(
      M(", 'files': [{'path': 'b.pb'}, {'path': 'a.json', 'clocks': {'sync_to': "
        "{'file': 'b.json'}}}, {'path': 'b.json', 'clocks': {'sync_to': {'file': "
        "'a.pb', 'clock': 'BOOTTIME'}}}, {'path': 'a.pb', 'clocks': {'clock': "
        "'BOOTTIME', 'sync_to': {'file': 'a.json'}}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: sync_to forms a cycle: 'a.json' -> 'b.json' -> "
      "'a.pb' -> 'a.json'. Each file must lead, through sync_to, to one that has "
      "no sync_to of its own.");
  /* A chain that ends (c -> b -> a) is fine, and so is a file related to
   * itself (two of its clocks: the graph judges that edge). */
  tm_manifest *m = resolve_ok(
      M(", 'files': [{'path': 'a.json'}, {'path': 'b.json', 'clocks': "
        "{'sync_to': {'file': 'a.json'}}}, {'path': 'a.pb', 'clocks': {'sync_to': "
        "{'file': 'b.json'}}}, {'path': 'b.pb', 'clocks': {'clock': 'BOOTTIME', "
        "'sync_to': {'file': 'b.pb', 'clock': 'MONOTONIC'}}}]"),
      members, N_MEMBERS);
  g_assert_cmpuint(m->files[1].clocks->sync_entry, ==, 0);
  g_assert_cmpuint(m->files[2].clocks->sync_entry, ==, 1);
  g_assert_cmpuint(m->files[3].clocks->sync_entry, ==, 3);
  manifest_free(m);
  /* Machines of a multi-machine file are apart: relay's vm synced to the
   * phone, the phone synced to relay's host, is a chain, not a cycle. */
  m = resolve_ok(
      M(", 'files': [{'path': 'a.pb', 'machines': [{'id': 0, 'name': 'host'}, "
        "{'id': 7, 'name': 'vm'}], 'clocks': {'machine': 'vm', 'clock': "
        "'BOOTTIME', 'sync_to': {'file': 'b.pb', 'clock': 'BOOTTIME'}}}, "
        "{'path': 'b.pb', 'clocks': {'clock': 'BOOTTIME', 'sync_to': {'file': "
        "'a.pb', 'machine': 'host', 'clock': 'BOOTTIME'}}}]"),
      members, N_MEMBERS);
  manifest_free(m);
  /* ... but the vm synced to the phone and the phone to the vm is one. */
  assert_resolve_error(
      M(", 'files': [{'path': 'a.pb', 'machines': [{'id': 0, 'name': 'host'}, "
        "{'id': 7, 'name': 'vm'}], 'clocks': {'machine': 'vm', 'clock': "
        "'BOOTTIME', 'sync_to': {'file': 'b.pb', 'clock': 'BOOTTIME'}}}, "
        "{'path': 'b.pb', 'clocks': {'clock': 'BOOTTIME', 'sync_to': {'file': "
        "'a.pb', 'machine': 'vm', 'clock': 'BOOTTIME'}}}]"),
      members, N_MEMBERS,
      "perfetto_manifest: clocks: sync_to forms a cycle: 'a.pb' -> 'b.pb' -> "
      "'a.pb'. Each file must lead, through sync_to, to one that has no sync_to "
      "of its own.");
}

static GString *nested(size_t depth) {
  GString *s = g_string_new("{\"perfetto_manifest\": {\"version\": 1, \"x\": ");
  /* Two levels are open already. */
  for (size_t i = 0; i < depth - 2; i++)
    g_string_append_c(s, '[');
  for (size_t i = 0; i < depth - 2; i++)
    g_string_append_c(s, ']');
  g_string_append(s, "}}");
  return s;
}

static void test_hostile_deep_nesting(void) {
  GError *error = NULL;
  GString *ok = nested(TM_MANIFEST_MAX_DEPTH);
  tm_manifest *m = manifest_parse((const uint8_t *)ok->str, ok->len, &error);
  g_assert_no_error(error);
  g_assert_nonnull(m);
  manifest_free(m);
  g_string_free(ok, TRUE);

  GString *deep = nested(TM_MANIFEST_MAX_DEPTH + 1);
  size_t last_open =
      strlen("{\"perfetto_manifest\": {\"version\": 1, \"x\": ") +
      TM_MANIFEST_MAX_DEPTH - 2;
  char *suffix = g_strdup_printf(", near byte %zu", last_open + 1);
  g_assert_null(manifest_parse((const uint8_t *)deep->str, deep->len, &error));
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON);
  g_assert_true(g_str_has_prefix(error->message,
                                 "Failed to parse array: nesting deeper than "
                                 "1000 levels"));
  g_assert_true(g_str_has_suffix(error->message, suffix));
  g_clear_error(&error);
  g_free(suffix);
  g_string_free(deep, TRUE);

  /* Ten million brackets, fed in chunks: stops at the limit, no deeper. */
  tm_manifest_parser *parser = manifest_parser_new();
  char chunk[65536];
  memset(chunk, '[', sizeof chunk);
  bool fed = true;
  for (int i = 0; i < 160 && fed; i++)
    fed = manifest_parser_feed(parser, (const uint8_t *)chunk, sizeof chunk,
                               &error);
  g_assert_false(fed);
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON);
  g_assert_true(g_str_has_suffix(error->message, ", near byte 1001"));
  g_clear_error(&error);
  g_assert_false(manifest_parser_feed(parser, (const uint8_t *)"]", 1, &error));
  g_clear_error(&error);
  g_assert_null(manifest_parser_finish(parser, &error));
  g_clear_error(&error);
  manifest_parser_free(parser);
}

static void test_hostile_size_limit(void) {
  const char *head = "{\"perfetto_manifest\": {\"version\": 1}}";
  size_t size = TM_MANIFEST_MAX_BYTES;
  char *text = g_malloc(size + 1);
  memset(text, ' ', size + 1);
  memcpy(text, head, strlen(head));
  GError *error = NULL;
  /* Exactly the limit: accepted (the padding follows the root value). */
  tm_manifest *m = manifest_parse((const uint8_t *)text, size, &error);
  g_assert_no_error(error);
  manifest_free(m);
  /* One more byte, even in a later chunk: refused. */
  tm_manifest_parser *parser = manifest_parser_new();
  g_assert_true(
      manifest_parser_feed(parser, (const uint8_t *)text, size, &error));
  g_assert_false(
      manifest_parser_feed(parser, (const uint8_t *)text + size, 1, &error));
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_TOO_LARGE);
  g_assert_cmpstr(error->message, ==,
                  "perfetto_manifest: the manifest is larger than 16777216 "
                  "bytes (16 MiB); a manifest only lists files, machines and "
                  "attributes");
  g_clear_error(&error);
  manifest_parser_free(parser);
  g_free(text);
}

static void test_hostile_huge_files_array(void) {
  /* 60 000 entries, each RELATEd to one of the 100 000 machines of a
   * relay: the "declared by" checks are linear overall, or this test
   * never ends. */
  const size_t n_files = 60000, n_relay = 100000;
  GString *s = g_string_new("{\"perfetto_manifest\": {\"version\": 1, "
                            "\"files\": [{\"path\": \"relay.pb\", "
                            "\"machines\": [");
  for (size_t i = 0; i < n_relay; i++)
    g_string_append_printf(s, "%s{\"id\": %zu, \"name\": \"m%zu\"}",
                           i ? ", " : "", n_relay - i, i);
  g_string_append(s, "]}");
  for (size_t i = 0; i < n_files; i++)
    g_string_append_printf(
        s,
        ", {\"path\": \"f%zu.pb\", \"machine\": {\"name\": \"m%zu\"}, "
        "\"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": "
        "\"relay.pb\", \"machine\": \"m%zu\", \"clock\": \"BOOTTIME\"}}}",
        i, i % n_relay, (i * 7919) % n_relay);
  g_string_append(s, "]}}");
  g_assert_cmpuint(s->len, <, TM_MANIFEST_MAX_BYTES);

  GError *error = NULL;
  tm_manifest *m = manifest_parse((const uint8_t *)s->str, s->len, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(m->n_files, ==, n_files + 1);
  g_assert_cmpuint(m->n_machines, ==, n_relay);
  g_assert_true(manifest_resolve(m, NULL, 0, &error));
  g_assert_no_error(error);
  const tm_manifest_file *last = &m->files[n_files];
  g_assert_cmpuint(last->machine, ==, (n_files - 1) % n_relay);
  g_assert_cmpuint(last->clocks->sync_machine, ==,
                   ((n_files - 1) * 7919) % n_relay);
  uint32_t machine;
  g_assert_true(manifest_file_remap(&m->files[0], 1, &machine));
  g_assert_cmpuint(machine, ==, n_relay - 1);
  g_assert_true(manifest_borrow_file(m, "f54321.pb") == &m->files[54322]);
  manifest_free(m);
  g_string_free(s, TRUE);
}

static void test_hostile_huge_skipped_values(void) {
  /* A megabyte of numbers under an unknown key, and in `attributes`. */
  GString *s = g_string_new("{\"perfetto_manifest\": {\"version\": 1, "
                            "\"blob\": [");
  for (int i = 0; i < 200000; i++)
    g_string_append(s, i ? ",1" : "1");
  g_string_append(s, "], \"attributes\": {");
  for (int i = 0; i < 100000; i++)
    g_string_append_printf(s, "%s\"k%d\": %d", i ? ", " : "", i % 1000, i);
  g_string_append(s, "}}}");
  GError *error = NULL;
  tm_manifest *m = manifest_parse((const uint8_t *)s->str, s->len, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(m->n_attributes, ==, 1000);
  g_assert_cmpint(m->attributes[999].int_value, ==, 99999);
  manifest_free(m);
  g_string_free(s, TRUE);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/manifest/detect/key-after-whitespace",
                  test_detect_key_after_whitespace);
  g_test_add_func("/manifest/detect/rejects-other-json",
                  test_detect_rejects_other_json);
  g_test_add_func("/manifest/detect/looks-at-the-first-128-bytes",
                  test_detect_first_128_bytes);

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

  g_test_add_func("/manifest/worked-example/parses-into-its-structure",
                  test_worked_example);
  g_test_add_func("/manifest/worked-example/fed-byte-by-byte",
                  test_worked_example_byte_by_byte);

  g_test_add_func("/manifest/json/repeated-key-keeps-last-value",
                  test_json_repeated_key_keeps_last_value);
  g_test_add_func("/manifest/json/unknown-keys-are-ignored",
                  test_json_unknown_keys_ignored);
  g_test_add_func("/manifest/json/minimal-manifest-configures-nothing",
                  test_json_minimal_manifest_configures_nothing);
  g_test_add_func("/manifest/json/content-after-the-root-is-ignored",
                  test_json_content_after_root_ignored);
  g_test_add_func("/manifest/json/syntax-errors-name-the-byte",
                  test_json_syntax_errors);
  g_test_add_func("/manifest/json/non-utf8-string-is-a-json-error",
                  test_json_non_utf8_string);
  g_test_add_func("/manifest/json/nul-inside-strings-compares-by-length",
                  test_json_nul_inside_strings);

  g_test_add_func("/manifest/values/clock-names", test_values_clock_names);
  g_test_add_func("/manifest/values/offsets-and-edge-readings",
                  test_values_offsets);
  g_test_add_func("/manifest/values/attributes-last-value-first-order",
                  test_values_attributes);
  g_test_add_func("/manifest/values/exported-table",
                  test_values_exported_table);

  g_test_add_func("/manifest/machines/first-appearance-order",
                  test_machines_first_appearance_order);
  g_test_add_func("/manifest/machines/repeated-embedded-id-first-wins",
                  test_machines_repeated_id_first_wins);
  g_test_add_func("/manifest/machines/empty-machines-is-single-machine",
                  test_machines_empty_array_is_single_machine);
  g_test_add_func("/manifest/machines/references-resolve-to-declared-names",
                  test_machines_references_resolve);
  g_test_add_func("/manifest/trace-time/without-file-uses-row-zero",
                  test_trace_time_row_zero);

  g_test_add_func("/manifest/hostile/duplicate-paths-first-entry-wins",
                  test_hostile_duplicate_paths);
  g_test_add_func("/manifest/hostile/sync-to-cycles-are-errors",
                  test_hostile_sync_to_cycles);
  g_test_add_func("/manifest/hostile/deep-nesting-is-bounded",
                  test_hostile_deep_nesting);
  g_test_add_func("/manifest/hostile/size-limit", test_hostile_size_limit);
  g_test_add_func("/manifest/hostile/huge-files-array-is-linear",
                  test_hostile_huge_files_array);
  g_test_add_func("/manifest/hostile/huge-skipped-values",
                  test_hostile_huge_skipped_values);
  return g_test_run();
}
