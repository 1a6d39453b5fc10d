/*
 * The perfetto_manifest module on its own: detection, the worked example
 * of docs/clock-model.md §9 parsed into its full structure, JSON
 * semantics, values and machines. Its errors are in
 * test_manifest_errors.c, the order that decides between two errors in
 * test_manifest_validation_order.c, hostile inputs in
 * test_manifest_hostile.c; helpers in tests/support/manifest_checks.h.
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include "manifest_checks.h"

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

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/manifest/detect/key-after-whitespace",
                  test_detect_key_after_whitespace);
  g_test_add_func("/manifest/detect/rejects-other-json",
                  test_detect_rejects_other_json);
  g_test_add_func("/manifest/detect/looks-at-the-first-128-bytes",
                  test_detect_first_128_bytes);
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
  return g_test_run();
}
