/*
 * End-to-end: hostile perfetto_manifests through the CLI (issue 4,
 * acceptance: no input crashes or hangs the host): deep nesting, a huge
 * files array, sync_to cycles, duplicate paths, a file synced to itself,
 * non-UTF-8 names and a huge attribute. Each runs under ASan/UBSan in the
 * sanitized build. The well-formed manifests are in test_e2e_manifest.c.
 */
#include <glib.h>
#include <string.h>

#include "e2e_support.h"

/* The whole import of INPUT (in `dir`) fails with exactly `message`, and
 * nothing is imported. */
static void assert_import_fails(const char *dir, const char *input,
                                const char *message) {
  const char *inputs[] = {input, NULL};
  e2e_assert_import_fails_with(dir, inputs, message);
}

/* --- Hostile manifests (issue 4, acceptance: no input crashes or hangs
 * the host). Each runs the CLI end to end, under ASan/UBSan in the
 * sanitized build. */

/* Runs `query INPUT --sql SQL` in `dir`; returns the result and the wall
 * time in seconds in `seconds`. */
static e2e_result run_query_timed(const char *dir, const char *input,
                                  const char *sql, double *seconds) {
  const char *args[] = {"query", input, "--sql", sql, NULL};
  gint64 start = g_get_monotonic_time();
  e2e_result r = e2e_run_in(dir, args);
  *seconds = (double)(g_get_monotonic_time() - start) / G_USEC_PER_SEC;
  return r;
}

/* 100 000 nested arrays under an unknown key. The parser never recurses on
 * nesting and refuses the container that would open level 1001 (the two
 * enclosing objects count), so it stops about 1 000 bytes in: the error is
 * the JSON parser's (no prefix, §10.1 "propagated unchanged"), names a
 * byte offset near the 1 000th '[' and not the end of the 200 000-byte
 * input, and comes back in well under the time bound. */
static void test_hostile_deep_nesting(void) {
  g_autofree char *dir = e2e_tmpdir();
  enum { DEPTH = 100000 };
  GString *manifest = g_string_new("{\"perfetto_manifest\": {\"version\": 1, \"x\": ");
  for (int i = 0; i < DEPTH; i++)
    g_string_append_c(manifest, '[');
  for (int i = 0; i < DEPTH; i++)
    g_string_append_c(manifest, ']');
  g_string_append(manifest, "}}\n");
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  const e2e_member members[] = {{"manifest.json", manifest->str, manifest->len},
                                {"a.json", a, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "deep.zip", E2E_ZIP, members, 2);
  double seconds = 0;
  e2e_result r = run_query_timed(dir, "deep.zip", "SELECT 1", &seconds);
  g_assert_cmpint(r.exit_code, ==, 1);
  static const char prefix[] =
      "tracemerge: Failed to parse array: nesting deeper than 1000 levels, near byte ";
  g_assert_true(g_str_has_prefix(r.err, prefix));
  char *end = NULL;
  guint64 offset = g_ascii_strtoull(r.err + strlen(prefix), &end, 10);
  g_assert_cmpstr(end, ==, "\n");
  /* The 999th '[' (depth 1 000 with the two objects) sits at byte
   * 42 + 998 (the text before the first '[' is 42 bytes); the parser
   * reports where it stopped, just after it. */
  g_assert_cmpuint(offset, >=, 42 + 998);
  g_assert_cmpuint(offset, <, 42 + 1100);
  g_assert_cmpfloat(seconds, <, 20.0);
  e2e_result_clear(&r);
  g_string_free(manifest, TRUE);
  e2e_cleanup(dir);
}

/* 200 000 `files` entries, each naming its own machine; only the last one
 * (a.json, machine "phone") is in the archive. Entries for absent members
 * without clock overrides are not errors (§10.1 #43 concerns PIN sources
 * and private-clock references only). Each distinct name gets a named
 * machine row with raw_id 2^32 + its order of first appearance (§9.2), so
 * "phone", the 200 000th name, has raw_id 4294967296 + 199 999 =
 * 4295167295, and a's slice (1 µs -> 1000 ns, a owns trace time) sits on
 * it. The manifest is ~11 MB, under the 16 MiB cap. Lookups are O(1), so
 * this finishes within seconds; the bound is generous for ASan. */
static void test_hostile_huge_files_array(void) {
  g_autofree char *dir = e2e_tmpdir();
  enum { ENTRIES = 200000 };
  GString *manifest =
      g_string_new("{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n");
  for (int i = 0; i < ENTRIES - 1; i++)
    g_string_append_printf(manifest,
        "{\"path\": \"f%d.json\", \"machine\": {\"name\": \"m%d\"}},\n", i, i);
  g_string_append(manifest,
      "{\"path\": \"a.json\", \"machine\": {\"name\": \"phone\"}}]}}\n");
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  const e2e_member members[] = {{"manifest.json", manifest->str, manifest->len},
                                {"a.json", a, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "huge.zip", E2E_ZIP, members, 2);
  double seconds = 0;
  e2e_result r = run_query_timed(dir, "huge.zip",
      "SELECT (SELECT count(*) FROM machine WHERE raw_id >= 4294967296) AS named, "
      "s.ts, m.name, m.raw_id FROM slice s JOIN thread_track t ON s.track_id = t.id "
      "JOIN thread USING (utid) JOIN machine m ON thread.machine_id = m.id",
      &seconds);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  e2e_assert_text(r.out, "\"named\",\"ts\",\"name\",\"raw_id\"\n"
                         "200000,1000,\"phone\",4295167295\n");
  g_assert_cmpfloat(seconds, <, 20.0);
  e2e_result_clear(&r);
  g_string_free(manifest, TRUE);
  e2e_cleanup(dir);
}

/* A sync_to cycle of three files, all PINs with offsets: a -> b (+100),
 * b -> c (+200), c -> a (+400). The reference would take it as three edges
 * (700 ns of contradiction around the loop, resolved by whichever path is
 * shortest); here it fails the import, naming the files around it, and
 * nothing of any trace is imported (a manifest error, §9.1). */
static void test_hostile_sync_cycle_of_three(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 2000);
  g_autofree char *b = e2e_json_slice("b", 2, 2, 2000);
  g_autofree char *c = e2e_json_slice("c", 3, 3, 2000);
  const e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"a.json\", \"clocks\": {\"sync_to\": {\"file\": \"b.json\"},"
       " \"offset_ns\": 100}},\n"
       " {\"path\": \"b.json\", \"clocks\": {\"sync_to\": {\"file\": \"c.json\"},"
       " \"offset_ns\": 200}},\n"
       " {\"path\": \"c.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"},"
       " \"offset_ns\": 400}}]}}\n",
       0},
      {"a.json", a, 0},
      {"b.json", b, 0},
      {"c.json", c, 0},
  };
  g_autofree char *zip = e2e_write_archive(dir, "ring.zip", E2E_ZIP, members, 4);
  assert_import_fails(dir, "ring.zip",
                      "perfetto_manifest: clocks: sync_to forms a cycle: 'a.json' -> "
                      "'b.json' -> 'c.json' -> 'a.json'. Each file must lead, through "
                      "sync_to, to one that has no sync_to of its own.");
  e2e_cleanup(dir);
}

/* Duplicate paths: the first entry wins (§9 "a repeated `path` uses the
 * first entry") when they agree on machines, for clocks too: the third
 * entry's self-PIN is ignored with it (no edge, ts 1 µs). Listed as
 * machine "phone" and then as "server", the import fails instead (not the
 * reference's rule, which would silently keep "phone"). */
static void test_hostile_duplicate_paths_first_wins(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"a.json\", \"machine\": {\"name\": \"phone\"}},\n"
       " {\"path\": \"a.json\", \"machine\": {\"name\": \"phone\"}},\n"
       " {\"path\": \"a.json\", \"machine\": {\"name\": \"phone\"}, \"clocks\":"
       " {\"sync_to\": {\"file\": \"a.json\"}, \"offset_ns\": 5}}]}}\n",
       0},
      {"a.json", a, 0},
  };
  g_autofree char *slices = e2e_query_archive(dir, E2E_ZIP, members, 2,
      "SELECT s.ts, m.name FROM slice s JOIN thread_track t ON s.track_id = t.id "
      "JOIN thread USING (utid) JOIN machine m ON thread.machine_id = m.id");
  e2e_assert_text(slices, "\"ts\",\"name\"\n1000,\"phone\"\n");
  members[0].content =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      " {\"path\": \"a.json\", \"machine\": {\"name\": \"phone\"}},\n"
      " {\"path\": \"a.json\", \"machine\": {\"name\": \"server\"}}]}}\n";
  g_autofree char *zip = e2e_write_archive(dir, "twice.zip", E2E_ZIP, members, 2);
  assert_import_fails(dir, "twice.zip",
                      "perfetto_manifest: files: 'a.json' is listed twice with different "
                      "machines. A file's data is on one set of machines: list it once, "
                      "with `machine` or `machines`.");
  e2e_cleanup(dir);
}

/* The shortest cycle: a file synced to itself. The override's edge is one
 * snapshot naming the same clock twice, which the graph rejects (§3.1
 * step 2); the rejection of an override edge fails the import with the
 * graph's message (§10.1, "propagated unchanged"). PIN: a.json's private
 * clock, trace_file 2 (the ZIP is 0, the manifest 1) on machine row 0 (the
 * host, created when a.json begins). RELATE: the host's canonical
 * BOOTTIME, printed bare. */
static void test_hostile_file_synced_to_itself(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json\","
       " \"clocks\": {\"sync_to\": {\"file\": \"a.json\"}, \"offset_ns\": 5}}]}}",
       0},
      {"a.json", a, 0}};
  g_autofree char *pin = e2e_write_archive(dir, "pin.zip", E2E_ZIP, members, 2);
  assert_import_fails(dir, "pin.zip",
      "Clock sync error: duplicate clock domain with id=11(seq=0,tf=2,m=0) at snapshot 0.");
  members[0].content =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json\","
      " \"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": \"a.json\","
      " \"clock\": \"BOOTTIME\"}, \"offset_ns\": 5}}]}}";
  g_autofree char *relate = e2e_write_archive(dir, "relate.zip", E2E_ZIP, members, 2);
  assert_import_fails(dir, "relate.zip",
      "Clock sync error: duplicate clock domain with id=6 at snapshot 0.");
  e2e_cleanup(dir);
}

/* Non-UTF-8 bytes. In the manifest they are a JSON error (strings must be
 * UTF-8, manifest.h) naming the offset: in `"path": "a\xff.json"` the 0xff
 * is byte 58 and the parser reports the 59 bytes it consumed; in a machine
 * name likewise. In an archive member's name they are just bytes: the
 * member is detected by content and imported (its slice is there). */
static void test_hostile_non_utf8_names(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  const e2e_member bad_path[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a\xff.json\"}]}}",
       0},
      {"a.json", a, 0}};
  g_autofree char *zip1 = e2e_write_archive(dir, "path.zip", E2E_ZIP, bad_path, 2);
  assert_import_fails(dir, "path.zip",
      "Failed to parse object: lexical error: invalid bytes in UTF8 string, near byte 59");
  const e2e_member bad_machine[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json\", "
       "\"machine\": {\"name\": \"ph\xc3o\"}}]}}",
       0},
      {"a.json", a, 0}};
  /* 0xc3 (byte 89) opens a two-byte sequence; the parser reads the next
   * byte, "o" (byte 90), finds no continuation byte and reports the 91
   * bytes consumed. */
  g_autofree char *zip2 = e2e_write_archive(dir, "machine.zip", E2E_ZIP, bad_machine, 2);
  assert_import_fails(dir, "machine.zip",
      "Failed to parse object: lexical error: invalid bytes in UTF8 string, near byte 91");
  const e2e_member bad_member[] = {
      {"manifest.json", "{\"perfetto_manifest\": {\"version\": 1}}", 0},
      {"\xff\xfe.json", a, 0}};
  g_autofree char *slices = e2e_query_archive(dir, E2E_ZIP, bad_member, 2,
      "SELECT name, ts FROM slice");
  e2e_assert_text(slices, "\"name\",\"ts\"\n\"a\",1000\n");
  e2e_cleanup(dir);
}

/* A huge attribute value: 8 MiB fits the 16 MiB cap and lands whole in
 * metadata; 17 MiB exceeds the cap and fails the import with the cap's
 * message before anything is buffered beyond it. */
static void test_hostile_huge_attribute(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  size_t sizes[] = {(size_t)8 << 20, (size_t)17 << 20};
  for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
    GString *manifest = g_string_new(
        "{\"perfetto_manifest\": {\"version\": 1, \"attributes\": {\"big\": \"");
    for (size_t n = 0; n < sizes[i]; n++)
      g_string_append_c(manifest, (char)('a' + n % 26));
    g_string_append(manifest, "\"}}}\n");
    const e2e_member members[] = {{"manifest.json", manifest->str, manifest->len},
                                  {"a.json", a, 0}};
    g_autofree char *zip = e2e_write_archive(dir, "big.zip", E2E_ZIP, members, 2);
    double seconds = 0;
    e2e_result r = run_query_timed(dir, "big.zip",
        "SELECT length(str_value) AS len, substr(str_value, 1, 3) AS head, "
        "substr(str_value, -2) AS tail FROM metadata "
        "WHERE name = 'manifest_attribute.big'", &seconds);
    if (i == 0) {
      g_assert_cmpint(r.exit_code, ==, 0);
      e2e_assert_text(r.err, "");
      /* 8 388 608 = 26 x 322 638 + 20: the last two letters are s, t. */
      e2e_assert_text(r.out, "\"len\",\"head\",\"tail\"\n8388608,\"abc\",\"st\"\n");
    } else {
      g_assert_cmpint(r.exit_code, ==, 1);
      e2e_assert_text(r.err,
          "tracemerge: perfetto_manifest: the manifest is larger than 16777216 "
          "bytes (16 MiB); a manifest only lists files, machines and attributes\n");
    }
    g_assert_cmpfloat(seconds, <, 20.0);
    e2e_result_clear(&r);
    g_string_free(manifest, TRUE);
  }
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/manifest/hostile/nesting-100000-deep-fails-early",
                  test_hostile_deep_nesting);
  g_test_add_func("/e2e/manifest/hostile/files-array-of-200000-entries-imports",
                  test_hostile_huge_files_array);
  g_test_add_func("/e2e/manifest/hostile/sync-to-cycle-of-three-fails-the-import",
                  test_hostile_sync_cycle_of_three);
  g_test_add_func("/e2e/manifest/hostile/duplicate-paths-on-one-machine-first-entry-wins-on-two-fail",
                  test_hostile_duplicate_paths_first_wins);
  g_test_add_func("/e2e/manifest/hostile/file-synced-to-itself-fails-with-the-graph-error",
                  test_hostile_file_synced_to_itself);
  g_test_add_func("/e2e/manifest/hostile/non-utf8-names-fail-clearly-or-import",
                  test_hostile_non_utf8_names);
  g_test_add_func("/e2e/manifest/hostile/huge-attribute-value-and-size-cap",
                  test_hostile_huge_attribute);
  return g_test_run();
}
