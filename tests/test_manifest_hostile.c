/*
 * Hostile perfetto_manifests: repeated paths, sync_to cycles, deep
 * nesting, size limits, huge arrays and skipped values fail clearly or stay
 * bounded.
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include "manifest_checks.h"

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
