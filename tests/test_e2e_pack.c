/*
 * `tracemerge pack`: trace files and their machines and clock relations
 * written as one archive with a generated perfetto_manifest.
 *
 * What a pack must do is import as the hand-written manifest of the same
 * relations does: the example's client.json (phone) and server.json
 * (backend, 100 µs behind) packed with `--offset backend=+100us` give the
 * timeline the bundled manifest gives (tests/data/example, the demo); a
 * system trace and a gzipped Chrome JSON packed with --sync give the
 * machines and events the export test's hand-made archive gives.
 */
#include <archive.h>
#include <archive_entry.h>
#include <glib/gstdio.h>
#include <string.h>
#include <zlib.h>

#include "corpus.h"
#include "e2e_support.h"

static char *example_path(const char *name) {
  return g_test_build_filename(G_TEST_DIST, "data", "example", name, NULL);
}

static e2e_result run_in(const char *dir, const char *const *args) {
  return e2e_run_in(dir, args);
}

static void assert_ok(e2e_result *r) {
  if (r->exit_code != 0)
    g_test_message("stderr: %s", r->err);
  g_assert_cmpint(r->exit_code, ==, 0);
  e2e_assert_text(r->err, "");
}

/* The example's timeline (timeline.sql) on `archive`. */
static char *timeline(const char *dir, const char *archive) {
  g_autofree char *sql = example_path("timeline.sql");
  const char *args[] = {"query", archive, "-q", sql, NULL};
  e2e_result r = run_in(dir, args);
  assert_ok(&r);
  char *out = g_steal_pointer(&r.out);
  e2e_result_clear(&r);
  return out;
}

/* The bundled example as the demo packs it: its own manifest. */
static char *bundled_timeline(const char *dir) {
  const char *names[] = {"perfetto_manifest.json", "client.json", "server.json"};
  char *contents[3];
  e2e_member members[3];
  for (int i = 0; i < 3; i++) {
    g_autofree char *path = example_path(names[i]);
    g_assert_true(g_file_get_contents(path, &contents[i], NULL, NULL));
    members[i] = (e2e_member){names[i], contents[i], 0};
  }
  g_autofree char *zip = e2e_write_archive(dir, "bundled.zip", E2E_ZIP, members, 3);
  for (int i = 0; i < 3; i++)
    g_free(contents[i]);
  return timeline(dir, "bundled.zip");
}

static void test_packed_example_imports_as_its_manifest(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *client = example_path("client.json");
  g_autofree char *server = example_path("server.json");
  g_autofree char *expected = bundled_timeline(dir);
  const char *outputs[] = {"run.zip", "run.tar.gz", "run.tar"};
  for (int i = 0; i < 3; i++) {
    const char *args[] = {"pack", "-o", outputs[i], "--machine", "phone", client,
                          "--machine", "backend", server, "--offset", "backend=+100us",
                          NULL};
    e2e_result r = run_in(dir, args);
    assert_ok(&r);
    e2e_assert_text(r.out, "");
    e2e_result_clear(&r);
    g_autofree char *actual = timeline(dir, outputs[i]);
    g_assert_cmpstr(actual, ==, expected);
  }
  e2e_cleanup(dir);
}

static void test_dry_run_prints_the_manifest_and_writes_nothing(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *client = example_path("client.json");
  g_autofree char *server = example_path("server.json");
  const char *args[] = {"pack", "--dry-run", "-o", "run.zip", "--machine", "phone", client,
                        "--sync", "phone:BOOTTIME", "--machine", "backend", server,
                        "--offset", "backend=-1.5ms", "--trace-time", "backend:REALTIME",
                        "--attribute", "scenario=page load", "--attribute", "run=7", NULL};
  e2e_result r = run_in(dir, args);
  assert_ok(&r);
  /* The options, one manifest field each (docs/clock-model.md §9): backend's
   * file relates to phone's first file, on phone's BOOTTIME, -1 500 000 ns
   * (backend reads T when the phone reads T - 1.5 ms); trace time is
   * backend's first file's REALTIME; "7" is an integer attribute. */
  e2e_assert_text(r.out,
                  "{\"perfetto_manifest\": {\n"
                  "  \"version\": 1,\n"
                  "  \"trace_time\": {\"clock\": \"REALTIME\", \"file\": \"server.json\"},\n"
                  "  \"files\": [\n"
                  "    {\"path\": \"client.json\", \"machine\": {\"name\": \"phone\"}},\n"
                  "    {\"path\": \"server.json\", \"machine\": {\"name\": \"backend\"},\n"
                  "     \"clocks\": {\"sync_to\": {\"file\": \"client.json\", \"clock\": "
                  "\"BOOTTIME\"}, \"offset_ns\": -1500000}}\n"
                  "  ],\n"
                  "  \"attributes\": {\"scenario\":\"page load\", \"run\":7}\n"
                  "}}\n");
  e2e_result_clear(&r);
  g_autofree char *zip = g_build_filename(dir, "run.zip", NULL);
  g_assert_false(g_file_test(zip, G_FILE_TEST_EXISTS));
  e2e_cleanup(dir);
}

/* A gzipped Chrome JSON is stored decompressed (an override on an archive
 * would fail the import), so its relation applies: the pack imports with
 * the machines and events of the same relation written by hand. */
static void test_gzipped_trace_is_stored_as_a_trace(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *pb = corpus_real_path("proto", "systing-trace.pb");
  g_autofree char *json = corpus_real_path("json", "catapult-webview.json.gz");
  const char *args[] = {"pack", "-o", "run.tar.gz", "--machine", "server", pb, "--sync",
                        "server:BOOTTIME", "--machine", "phone", json, "--offset", "phone=1us",
                        NULL};
  e2e_result r = run_in(dir, args);
  assert_ok(&r);
  e2e_result_clear(&r);
  const char *sql = "SELECT m.name, count(*), min(s.ts), sum(s.dur) FROM slice s JOIN track t ON "
                    "s.track_id = t.id JOIN machine m ON t.machine_id = m.id GROUP BY 1 ORDER BY 1";
  const char *packed[] = {"run.tar.gz", NULL};
  g_autofree char *actual = e2e_query_in(dir, packed, sql);
  /* The same relation by hand: webview.json PINned 1 µs after the system
   * trace's BOOTTIME. */
  gsize pb_len = 0, gz_len = 0;
  g_autofree char *pb_bytes = corpus_real_read("proto", "systing-trace.pb", &pb_len);
  g_autofree char *gz_bytes = corpus_real_read("json", "catapult-webview.json.gz", &gz_len);
  g_autofree char *json_bytes = NULL;
  {
    g_autofree char *gz_path = g_build_filename(dir, "webview.json.gz", NULL);
    g_assert_true(g_file_set_contents(gz_path, gz_bytes, (gssize)gz_len, NULL));
    const char *argv[] = {"/bin/sh", "-c", "gzip -dc webview.json.gz", NULL};
    int status = 0;
    GError *error = NULL;
    g_spawn_sync(dir, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &json_bytes, NULL,
                 &status, &error);
    g_assert_no_error(error);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
  }
  const char *manifest =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": ["
      "{\"path\": \"systing-trace.pb\", \"machine\": {\"name\": \"server\"}},"
      "{\"path\": \"catapult-webview.json\", \"machine\": {\"name\": \"phone\"},"
      " \"clocks\": {\"sync_to\": {\"file\": \"systing-trace.pb\", \"clock\": \"BOOTTIME\"},"
      " \"offset_ns\": 1000}}]}}";
  const e2e_member members[] = {{"perfetto_manifest.json", manifest, 0},
                                {"systing-trace.pb", pb_bytes, pb_len},
                                {"catapult-webview.json", json_bytes, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "hand.zip", E2E_ZIP, members, 3);
  const char *hand[] = {"hand.zip", NULL};
  g_autofree char *expected = e2e_query_in(dir, hand, sql);
  g_assert_cmpstr(actual, ==, expected);
  g_assert_nonnull(strstr(actual, "\"phone\","));
  g_assert_nonnull(strstr(actual, "\"server\","));
  e2e_cleanup(dir);
}

static void expect_error(const char *const *args, int status, const char *message) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_result r = run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, status);
  if (!strstr(r.err, message))
    g_error("stderr '%s' lacks '%s'", r.err, message);
  /* Nothing written, not even a temporary file. */
  GDir *d = g_dir_open(dir, 0, NULL);
  g_assert_null(g_dir_read_name(d));
  g_dir_close(d);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_errors_say_what_to_fix(void) {
  g_autofree char *client = example_path("client.json");
  g_autofree char *server = example_path("server.json");
  const char *clock[] = {"pack", "-o", "run.zip", "--machine", "phone", client, "--sync",
                         "phone:BOOTIME", NULL};
  expect_error(clock, 1, "tracemerge: pack: unknown clock name: BOOTIME. Use one of REALTIME,");
  const char *twice[] = {"pack", "-o", "run.zip", "--machine", "a", client, "--machine", "b",
                         client, NULL};
  expect_error(twice, 1, "would both be member client.json; rename one");
  const char *reference[] = {"pack", "-o", "run.zip", "--machine", "phone", client,
                             "--offset", "phone=1ms", NULL};
  expect_error(reference, 1, "'phone' is the reference machine (the first one)");
  const char *extension[] = {"pack", "-o", "run.rar", "--machine", "phone", client, NULL};
  expect_error(extension, 1, "the archive's name must end in .zip, .tar.gz, .tgz or .tar");
  const char *missing[] = {"pack", "-o", "run.zip", "--machine", "phone", "/nonexistent.json",
                           NULL};
  expect_error(missing, 1, "pack: cannot read /nonexistent.json");
  const char *offset[] = {"pack", "-o", "run.zip", "--machine", "phone", client, "--machine",
                          "backend", server, "--offset", "backend=soon", NULL};
  expect_error(offset, 2, "--offset: 'soon' is not a time");
  const char *no_output[] = {"pack", client, NULL};
  expect_error(no_output, 2, "missing -o ARCHIVE (or --dry-run)");
  const char *no_files[] = {"pack", "-o", "run.zip", NULL};
  expect_error(no_files, 2, "no files to pack");
  const char *unknown[] = {"pack", "-o", "run.zip", "--frobnicate", client, NULL};
  expect_error(unknown, 2, "unknown option --frobnicate");
  const char *empty_machine[] = {"pack", "-o", "run.zip", "--machine", "phone", client,
                                 "--machine", "backend", NULL};
  expect_error(empty_machine, 1, "pack: machine 'backend' has no file");
}

/* A machine or clock relation on a file that is itself an archive would
 * fail the import (docs/clock-model.md §10.2): pack says so first. */
static void test_archive_with_a_machine_is_refused(void) {
  g_autofree char *dir = e2e_tmpdir();
  const e2e_member members[] = {{"client.json", "{\"traceEvents\": []}", 0}};
  g_autofree char *zip = e2e_write_archive(dir, "inner.zip", E2E_ZIP, members, 1);
  const char *args[] = {"pack", "-o", "run.zip", "--machine", "phone", zip, NULL};
  e2e_result r = run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_autofree char *expected = g_strdup_printf(
      "tracemerge: pack: %s is an archive, not a trace: perfetto_manifest: overrides are not "
      "supported for trace files which are themselves archives or perfetto_manifest files: "
      "inner.zip (unpack it and pack its traces)\n",
      zip);
  e2e_assert_text(r.err, expected);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* ---- budgets ------------------------------------------------------------------ */

/* Writes dir/name: gzip of `head`, `fill_len` spaces, then `tail`,
 * compressed as it is written (a bomb costs only its compressed size). */
static char *write_gzip_bomb(const char *dir, const char *name, const char *head,
                             uint64_t fill_len, const char *tail) {
  char *path = g_build_filename(dir, name, NULL);
  gzFile gz = gzopen(path, "wb6");
  g_assert_nonnull(gz);
  g_assert_cmpint(gzputs(gz, head), ==, (int)strlen(head));
  static char block[64 * 1024];
  memset(block, ' ', sizeof block);
  for (uint64_t done = 0; done < fill_len;) {
    unsigned k = (unsigned)MIN(fill_len - done, sizeof block);
    g_assert_cmpint(gzwrite(gz, block, k), ==, (int)k);
    done += k;
  }
  g_assert_cmpint(gzputs(gz, tail), ==, (int)strlen(tail));
  g_assert_cmpint(gzclose(gz), ==, Z_OK);
  return path;
}

/* "NAME SIZE" of every member of `archive`, one a line, as stored. */
static char *member_sizes(const char *archive_path) {
  struct archive *a = archive_read_new();
  archive_read_support_format_all(a);
  archive_read_support_filter_all(a);
  g_assert_cmpint(archive_read_open_filename(a, archive_path, 64 * 1024), ==, ARCHIVE_OK);
  GString *out = g_string_new(NULL);
  struct archive_entry *entry;
  while (archive_read_next_header(a, &entry) == ARCHIVE_OK)
    g_string_append_printf(out, "%s %" G_GINT64_FORMAT "\n", archive_entry_pathname(entry),
                           (gint64)archive_entry_size(entry));
  archive_read_free(a);
  return g_string_free(out, FALSE);
}

static gint64 file_size(const char *dir, const char *name) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  GStatBuf st;
  g_assert_cmpint(g_stat(path, &st), ==, 0);
  return (gint64)st.st_size;
}

#define EVENT(ts, name) "{\"ph\":\"X\",\"ts\":" #ts ",\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"" name "\"}"

/* The gzip bomb given to pack: a JSON whose two events are apart
 * by 80 MiB of spaces, gzipped to about 80 KiB, between two plain traces.
 * With --max-inflate-ratio 10 its budget is max(10 x its size, the 64 MiB
 * floor) = the floor, 67108864 bytes, as an import's: the member is
 * stored cut there (never inflated to disk in full), the files before and
 * after it are stored whole, the archive is written, and pack exits 1
 * with the import's message naming the file, the offset, the budget and
 * its stat. The packed archive imports what the bomb held before the cut
 * ("inner") with both other files' events (under a larger ratio: the ZIP
 * deflates the 64 MiB of spaces about 1000-fold again, so at the default
 * the import would cut it as a bomb too). */
static void test_gzip_bomb_is_stored_cut_at_the_inflate_budget(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_free(e2e_write_file(dir, "a.json", "[" EVENT(1, "before") "]\n", 0));
  g_free(write_gzip_bomb(dir, "bomb.json.gz", "[" EVENT(5, "inner") ",", (uint64_t)80 << 20,
                         EVENT(9, "cut off") "]"));
  g_free(e2e_write_file(dir, "c.json", "[" EVENT(20, "after") "]\n", 0));
  const char *args[] = {"pack", "-o", "run.zip", "--max-inflate-ratio", "10", "a.json",
                        "bomb.json.gz", "c.json", NULL};
  e2e_result r = run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "");
  gint64 bomb_size = file_size(dir, "bomb.json.gz");
  g_assert_cmpint(bomb_size * 10, <, (gint64)64 << 20); /* the floor is the budget */
  g_autofree char *message = g_strdup_printf(
      "tracemerge: pack: bomb.json.gz: cut after 67108864 bytes: bomb.json.gz yields more "
      "than 10 times its %" G_GINT64_FORMAT " bytes (budget --max-inflate-ratio; stat "
      "container_inflate_ratio_exceeded)\n",
      bomb_size);
  e2e_assert_text(r.err, message);
  e2e_result_clear(&r);
  g_autofree char *zip = g_build_filename(dir, "run.zip", NULL);
  g_autofree char *sizes = member_sizes(zip);
  g_autofree char *expected = g_strdup_printf(
      "perfetto_manifest.json %" G_GINT64_FORMAT "\na.json %" G_GINT64_FORMAT
      "\nbomb.json 67108864\nc.json %" G_GINT64_FORMAT "\n",
      (gint64)0, file_size(dir, "a.json"), file_size(dir, "c.json"));
  /* The manifest's size is pack's business: compare from the next line. */
  g_assert_cmpstr(strchr(sizes, '\n'), ==, strchr(expected, '\n'));
  const char *packed[] = {"run.zip", NULL};
  const char *ratio[] = {"--max-inflate-ratio", "100000", NULL};
  e2e_result q = e2e_run_query(dir, packed, ratio,
                               "SELECT group_concat(name) AS slices FROM "
                               "(SELECT name FROM slice ORDER BY ts)");
  /* The JSON reader takes an array cut in whitespace as trace_processor
   * takes an unterminated one: without damage. */
  g_assert_cmpint(q.exit_code, ==, 0);
  e2e_assert_text(q.out, "\"slices\"\n\"before,inner,after\"\n");
  e2e_result_clear(&q);
  e2e_cleanup(dir);
}

/* --max-member-size cuts a trace file, compressed or not, after SIZE
 * bytes (1K: 1024), storing its first 1024 bytes; a smaller file is
 * stored whole, and the first cut file is the one the message names. */
static void test_member_size_budget_cuts_a_trace_file(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *big = g_strnfill(3000, ' ');
  big[0] = '[';
  g_free(e2e_write_file(dir, "big.json", big, 0));
  const e2e_member gz[] = {{"big2.json", big, 0}};
  g_free(e2e_write_archive(dir, "big2.json.gz", E2E_GZIP, gz, 1));
  g_free(e2e_write_file(dir, "small.json", "[" EVENT(1, "small") "]\n", 0));
  const char *args[] = {"pack", "-o", "run.tar", "--max-member-size", "1K", "small.json",
                        "big.json", "big2.json.gz", NULL};
  e2e_result r = run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.err, "tracemerge: pack: big.json: cut after 1024 bytes: larger than the "
                         "1024 bytes of budget --max-member-size (stat "
                         "container_member_size_exceeded)\n");
  e2e_result_clear(&r);
  g_autofree char *tar = g_build_filename(dir, "run.tar", NULL);
  g_autofree char *sizes = member_sizes(tar);
  g_autofree char *expected = g_strdup_printf("\nsmall.json %" G_GINT64_FORMAT
                                              "\nbig.json 1024\nbig2.json 1024\n",
                                              file_size(dir, "small.json"));
  g_assert_cmpstr(strchr(sizes, '\n'), ==, expected);
  e2e_cleanup(dir);
}

/* A bad budget value is a usage error, with the import's words. */
static void test_budget_options_are_checked(void) {
  g_autofree char *client = example_path("client.json");
  const char *zero[] = {"pack", "-o", "run.zip", "--max-inflate-ratio", "0", client, NULL};
  expect_error(zero, 2, "--max-inflate-ratio: '0' is not a positive integer");
  const char *size[] = {"pack", "-o", "run.zip", "--max-member-size", "1Q", client, NULL};
  expect_error(size, 2, "--max-member-size: '1Q' is not a positive size");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/pack/packed-example-imports-as-its-manifest",
                  test_packed_example_imports_as_its_manifest);
  g_test_add_func("/pack/dry-run-prints-the-manifest-and-writes-nothing",
                  test_dry_run_prints_the_manifest_and_writes_nothing);
  g_test_add_func("/pack/gzipped-trace-is-stored-as-a-trace",
                  test_gzipped_trace_is_stored_as_a_trace);
  g_test_add_func("/pack/errors-say-what-to-fix", test_errors_say_what_to_fix);
  g_test_add_func("/pack/archive-with-a-machine-is-refused",
                  test_archive_with_a_machine_is_refused);
  g_test_add_func("/pack/gzip-bomb-is-stored-cut-at-the-inflate-budget",
                  test_gzip_bomb_is_stored_cut_at_the_inflate_budget);
  g_test_add_func("/pack/member-size-budget-cuts-a-trace-file",
                  test_member_size_budget_cuts_a_trace_file);
  g_test_add_func("/pack/budget-options-are-checked", test_budget_options_are_checked);
  return g_test_run();
}
