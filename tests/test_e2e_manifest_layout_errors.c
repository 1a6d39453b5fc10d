/*
 * End-to-end manifest errors whose archive layout is the point
 * (docs/clock-model.md §10): a second manifest, a manifest that is not
 * first (loose, in a TAR, gzip-wrapped), overrides on archive members,
 * unknown members, remote clock syncs in overridden files, units that never
 * reach an override edge, a file synced to itself, when a TAR resolves its
 * members, the import command, and a manifest error after earlier damage.
 * Each asserts exit status 1, the exact stderr line and that nothing was
 * imported, as the table cases of test_e2e_manifest_errors.c do; its
 * header comment describes the fixtures.
 */
#include <glib.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>

#include "e2e_manifest_messages.h"
#include "e2e_support.h"

/* ---- Cases whose archive layout is the point ------------------------- */

/* #26: a second manifest. A ZIP delivers both manifests before any trace,
 * so only the second one's check can fire. In a TAR read in order, a
 * second manifest after a trace breaks two rules; "multiple" is checked
 * first (session_manifest_begin), so it wins over "must be the first". */
static void test_second_manifest_in_a_zip(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  g_autofree char *m = manifest_text(M("'attributes': {'k': 'v'}"));
  const e2e_member members[] = {
      {"a.json", a, 0}, {"m1.json", m, 0}, {"m2.json", m, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 3);
  assert_archive_fails(dir, "run.zip", "multiple perfetto_manifest files in archive");
  e2e_cleanup(dir);
}

static void test_second_manifest_in_a_tar(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  g_autofree char *m = manifest_text(M("'attributes': {'k': 'v'}"));
  const e2e_member adjacent[] = {
      {"m1.json", m, 0}, {"m2.json", m, 0}, {"a.json", a, 0}};
  g_autofree char *tar1 = e2e_write_archive(dir, "adjacent.tar", E2E_TAR, adjacent, 3);
  assert_archive_fails(dir, "adjacent.tar", "multiple perfetto_manifest files in archive");
  const e2e_member after_a_trace[] = {
      {"m1.json", m, 0}, {"a.json", a, 0}, {"m2.json", m, 0}};
  g_autofree char *tar2 = e2e_write_archive(dir, "late.tar", E2E_TAR, after_a_trace, 3);
  assert_archive_fails(dir, "late.tar", "multiple perfetto_manifest files in archive");
  e2e_cleanup(dir);
}

/* #27, the unreachable variants: a JSON array holding a perfetto_manifest
 * object, and an object whose first key is another one, are not manifests
 * (detection looks for {"perfetto_manifest" at the start) but JSON traces;
 * the archive imports and the version 2 inside configures nothing. */
static void test_not_a_manifest_unless_it_starts_with_the_key(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  const e2e_member members[] = {
      {"array.json", "[{\"perfetto_manifest\": {\"version\": 2}}]", 0},
      {"second_key.json", "{\"version\": 2, \"perfetto_manifest\": {\"version\": 2}}", 0},
      {"a.json", a, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 3);
  const char *inputs[] = {"run.zip", NULL};
  g_autofree char *types = e2e_query_in(dir, inputs,
      "SELECT name, trace_type FROM trace_file WHERE id > 0 ORDER BY id");
  e2e_assert_text(types, "\"name\",\"trace_type\"\n\"array.json\",\"json\"\n"
                         "\"second_key.json\",\"json\"\n\"a.json\",\"json\"\n");
  e2e_cleanup(dir);
}

/* §10.2 "must be the first trace file": in a TAR and among loose inputs
 * the manifest after a trace; in a ZIP a manifest wrapped in gzip is a
 * container member, delivered in archive order, here after a proto. */
static void test_manifest_after_a_trace(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  g_autofree char *m = manifest_text(M("'files': [{'path': 'a.json', 'machine': {'name': 'x'}}]"));
  static const char message[] =
      "perfetto_manifest file must be the first trace file in the input";
  const e2e_member late[] = {{"a.json", a, 0}, {"manifest.json", m, 0}};
  g_autofree char *tar = e2e_write_archive(dir, "run.tar", E2E_TAR, late, 2);
  assert_archive_fails(dir, "run.tar", message);
  g_autofree char *pa = e2e_write_file(dir, "a.json", a, 0);
  g_autofree char *pm = e2e_write_file(dir, "m.json", m, 0);
  const char *loose[] = {"a.json", "m.json", NULL};
  e2e_assert_import_fails_with(dir, loose, message);
  const e2e_member inner[] = {{"manifest.json", m, 0}};
  g_autofree char *gz = e2e_write_archive(dir, "manifest.json.gz", E2E_GZIP, inner, 1);
  gchar *gz_data = NULL;
  gsize gz_len = 0;
  g_assert_true(g_file_get_contents(gz, &gz_data, &gz_len, NULL));
  e2e_bytes phone = e2e_proto_fixture("systrace_spine");
  const e2e_member wrapped[] = {{"phone.pb", phone.data, phone.len},
                                {"manifest.json.gz", gz_data, gz_len}};
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, wrapped, 2);
  assert_archive_fails(dir, "run.zip", message);
  g_free(phone.data);
  g_free(gz_data);
  e2e_cleanup(dir);
}

/* Issue 10 §2, docs/clock-model.md §9.5: a gzip-wrapped manifest (meta.json.gz)
 * is a container member, and containers sort after proto members
 * (docs/formats.md §6.2: priority proto 0, gzip 1), so next to phone.pb the
 * reference parses the proto first and the manifest is not the first
 * trace file, whatever the archive order: listed before or after the
 * proto, in a ZIP and in a TAR, the import fails with §10.2's message,
 * exit 1, nothing imported. Next to a JSON member only (priority 2) the
 * gzip sorts first, and listed first (we read a wrapped manifest where it
 * is listed, so it must also come first in archive order) the manifest
 * applies: a.json is on machine x. */
static void test_gzip_manifest_sorting_after_a_proto(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  g_autofree char *m = manifest_text(M("'files': [{'path': 'a.json', 'machine': {'name': 'x'}}]"));
  const e2e_member inner[] = {{"meta.json", m, 0}};
  g_autofree char *gz = e2e_write_archive(dir, "meta.json.gz", E2E_GZIP, inner, 1);
  gchar *gz_data = NULL;
  gsize gz_len = 0;
  g_assert_true(g_file_get_contents(gz, &gz_data, &gz_len, NULL));
  e2e_bytes phone = e2e_proto_fixture("systrace_spine");
  const e2e_member manifest_listed_first[] = {{"meta.json.gz", gz_data, gz_len},
                                              {"phone.pb", phone.data, phone.len},
                                              {"a.json", a, 0}};
  const e2e_member proto_listed_first[] = {{"phone.pb", phone.data, phone.len},
                                           {"meta.json.gz", gz_data, gz_len},
                                           {"a.json", a, 0}};
  static const char message[] =
      "perfetto_manifest file must be the first trace file in the input";
  static const struct {
    const char *name;
    e2e_archive_format format;
    bool manifest_first;
  } archives[] = {
      {"gz-first.zip", E2E_ZIP, true},
      {"gz-second.zip", E2E_ZIP, false},
      {"gz-first.tar", E2E_TAR, true},
      {"gz-second.tar", E2E_TAR, false},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(archives); i++) {
    g_autofree char *path = e2e_write_archive(
        dir, archives[i].name, archives[i].format,
        archives[i].manifest_first ? manifest_listed_first : proto_listed_first, 3);
    assert_archive_fails(dir, archives[i].name, message);
  }
  const e2e_member without_proto[] = {{"meta.json.gz", gz_data, gz_len}, {"a.json", a, 0}};
  for (e2e_archive_format f = E2E_ZIP; f <= E2E_TAR; f++) {
    g_autofree char *out = e2e_query_archive(dir, f, without_proto, 2,
        "SELECT s.name, m.name AS machine FROM slice s JOIN thread_track tt ON "
        "s.track_id = tt.id JOIN thread USING (utid) JOIN machine m ON m.id = "
        "thread.machine_id");
    e2e_assert_text(out, "\"name\",\"machine\"\n\"a\",\"x\"\n");
  }
  g_free(phone.data);
  g_free(gz_data);
  e2e_cleanup(dir);
}

/* §10.2: an override on a member that is itself an archive: a gzip stream
 * and a nested ZIP, with `machine` and with `clocks`, in a ZIP (the rows
 * exist when the manifest applies) and in a TAR (the container's row comes
 * after). a.json is on machine x where a RELATE names its BOOTTIME, so the
 * edge itself is valid. */
static void test_override_on_an_archive_member(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  const e2e_member inner[] = {{"inner.json", a, 0}};
  g_autofree char *gz = e2e_write_archive(dir, "inner.json.gz", E2E_GZIP, inner, 1);
  g_autofree char *nested = e2e_write_archive(dir, "nested.zip", E2E_ZIP, inner, 1);
  gchar *gz_data = NULL, *zip_data = NULL;
  gsize gz_len = 0, zip_len = 0;
  g_assert_true(g_file_get_contents(gz, &gz_data, &gz_len, NULL));
  g_assert_true(g_file_get_contents(nested, &zip_data, &zip_len, NULL));
  static const struct {
    const char *manifest;
    const char *message;
  } overrides[] = {
      {M("'files': [{'path': 'inner.json.gz', 'machine': {'name': 'x'}}]"),
       MSG_CONTAINER("inner.json.gz")},
      {M("'files': [{'path': 'inner.json.gz', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
         "{'path': 'a.json'}]"),
       MSG_CONTAINER("inner.json.gz")},
      {M("'files': [{'path': 'nested.zip', 'clocks': {'clock': 'BOOTTIME', 'sync_to': "
         "{'file': 'a.json', 'clock': 'BOOTTIME'}}}, {'path': 'a.json', 'machine': "
         "{'name': 'x'}}]"),
       MSG_CONTAINER("nested.zip")},
      /* Order: the override's edge is added when the manifest applies
       * (§9.1), the container rule is checked as the member begins (§9.5):
       * a RELATE from the host's BOOTTIME to the host's BOOTTIME (a.json
       * left on the host) fails as one clock named twice first. */
      {M("'files': [{'path': 'nested.zip', 'clocks': {'clock': 'BOOTTIME', 'sync_to': "
         "{'file': 'a.json', 'clock': 'BOOTTIME'}}}, {'path': 'a.json'}]"),
       "Clock sync error: duplicate clock domain with id=6 at snapshot 0."},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(overrides); i++) {
    g_autofree char *m = manifest_text(overrides[i].manifest);
    const e2e_member members[] = {{"manifest.json", m, 0},
                                  {"a.json", a, 0},
                                  {"inner.json.gz", gz_data, gz_len},
                                  {"nested.zip", zip_data, zip_len}};
    g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 4);
    assert_archive_fails(dir, "run.zip", overrides[i].message);
    g_autofree char *tar = e2e_write_archive(dir, "run.tar", E2E_TAR, members, 4);
    assert_archive_fails(dir, "run.tar", overrides[i].message);
  }
  g_free(gz_data);
  g_free(zip_data);
  e2e_cleanup(dir);
}

/* §10.2 "Unknown trace type provided (ERR:fmt)": a member no reader
 * recognises, next to a valid manifest. The reference's message is not
 * wrapped; ours is prefixed with the member's path, as every input error
 * names its file (container.c). A listed ZIP sniffs every member before
 * delivering any, so nothing is read. This is the container's rule, not a
 * manifest error: in a stream what was read before the unknown member
 * stays (container.h), so the TAR puts it before any trace to show the
 * same message and an empty import. */
static void test_unknown_member_type(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  g_autofree char *m = manifest_text(M("'files': [{'path': 'a.json', 'machine': {'name': 'x'}}]"));
  const e2e_member members[] = {{"manifest.json", m, 0},
                                {"a.json", a, 0},
                                {"garbage.bin", "\x01\x02\x03 not a trace", 0}};
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 3);
  assert_archive_fails(dir, "run.zip",
                       "run.zip/garbage.bin: Unknown trace type provided (ERR:fmt)");
  const e2e_member unknown_first[] = {members[0], members[2], members[1]};
  g_autofree char *tar = e2e_write_archive(dir, "run.tar", E2E_TAR, unknown_first, 3);
  assert_archive_fails(dir, "run.tar",
                       "run.tar/garbage.bin: Unknown trace type provided (ERR:fmt)");
  e2e_cleanup(dir);
}

/* §10.3 through a PIN of a file to itself: the override's snapshot names
 * the file's private clock twice. Its id names the file: a.json is
 * trace_file 1 in the ZIP (rows for every member in archive order, a.json
 * listed first) and 2 in the TAR (after the TAR and the manifest); the
 * host machine row, created for it, is 0. The RELATE form names the
 * host's canonical BOOTTIME, printed bare. */
static void test_file_synced_to_itself(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  g_autofree char *pin = manifest_text(
      M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'a.json'}, "
        "'offset_ns': 5}}]"));
  g_autofree char *relate = manifest_text(
      M("'files': [{'path': 'a.json', 'clocks': {'clock': 'BOOTTIME', 'sync_to': {'file': "
        "'a.json', 'clock': 'BOOTTIME'}}}]"));
  const e2e_member zip_members[] = {{"a.json", a, 0}, {"manifest.json", pin, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "pin.zip", E2E_ZIP, zip_members, 2);
  assert_archive_fails(dir, "pin.zip",
      "Clock sync error: duplicate clock domain with id=11(seq=0,tf=1,m=0) at snapshot 0.");
  const e2e_member tar_members[] = {{"manifest.json", pin, 0}, {"a.json", a, 0}};
  g_autofree char *tar = e2e_write_archive(dir, "pin.tar", E2E_TAR, tar_members, 2);
  assert_archive_fails(dir, "pin.tar",
      "Clock sync error: duplicate clock domain with id=11(seq=0,tf=2,m=0) at snapshot 0.");
  const e2e_member relate_members[] = {{"manifest.json", relate, 0}, {"a.json", a, 0}};
  g_autofree char *rzip = e2e_write_archive(dir, "relate.zip", E2E_ZIP, relate_members, 2);
  assert_archive_fails(dir, "relate.zip",
      "Clock sync error: duplicate clock domain with id=6 at snapshot 0.");
  g_autofree char *rtar = e2e_write_archive(dir, "relate.tar", E2E_TAR, relate_members, 2);
  assert_archive_fails(dir, "relate.tar",
      "Clock sync error: duplicate clock domain with id=6 at snapshot 0.");
  e2e_cleanup(dir);
}

/* Overrides are resolved in `files` order (§10.1), each fully: in a ZIP
 * (listed: every member has its row when the manifest applies) entry 0's
 * absent reference (#43) wins over entry 1's unknown one (#38).
 * #43 in a TAR: members after the manifest have no row when it is
 * applied, so resolution takes every listed path as a member still to
 * come and only the end of the input shows one never came. The member
 * check therefore runs after every reference check of every entry: with
 * entry 0's reference absent (#43) and entry 1's reference unknown (#38),
 * a ZIP reports #43 (the reference's order, files order) but a TAR #38.
 * A stream is never read twice (docs/architecture.md), so this is the price of
 * streaming. A member that never comes is #43 at the end, after every
 * trace was read, and still nothing is imported. */
static void test_tar_defers_member_resolution(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  g_autofree char *b = e2e_json_slice("b", 2, 2, 2);
  g_autofree char *both = manifest_text(
      M("'files': [{'path': 'b.json', 'clocks': {'sync_to': {'file': 'absent.json'}}}, "
        "{'path': 'a.json', 'clocks': {'sync_to': {'file': 'ghost.json'}}}, "
        "{'path': 'absent.json'}]"));
  const e2e_member members[] = {{"manifest.json", both, 0}, {"a.json", a, 0}, {"b.json", b, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "both.zip", E2E_ZIP, members, 3);
  assert_archive_fails(dir, "both.zip", NOT_RESOLVED("absent.json"));
  g_autofree char *tar = e2e_write_archive(dir, "both.tar", E2E_TAR, members, 3);
  assert_archive_fails(dir, "both.tar", UNKNOWN_FILE("clocks: sync_to.file", "ghost.json"));
  g_autofree char *never = manifest_text(
      M("'files': [{'path': 'b.json', 'clocks': {'sync_to': {'file': 'absent.json'}}}, "
        "{'path': 'absent.json'}]"));
  const e2e_member never_members[] = {
      {"manifest.json", never, 0}, {"a.json", a, 0}, {"b.json", b, 0}};
  g_autofree char *tar2 = e2e_write_archive(dir, "never.tar", E2E_TAR, never_members, 3);
  assert_archive_fails(dir, "never.tar", NOT_RESOLVED("absent.json"));
  e2e_cleanup(dir);
}

/* `import` fails the same way: exit 1, the message, and the saved
 * database holds no event (a lazily detected error, after a.json and
 * b.json were read). */
static void test_import_command_fails_whole(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  e2e_bytes phone = e2e_proto_fixture("systrace_spine");
  g_autofree char *m = manifest_text(
      M("'files': [{'path': 'phone.pb', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
        "{'path': 'a.json'}]"));
  const e2e_member members[] = {{"a.json", a, 0},
                                {"phone.pb", phone.data, phone.len},
                                {"manifest.json", m, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 3);
  const char *args[] = {"import", "run.zip", "-o", "out.sqlite", NULL};
  e2e_result r = e2e_run_in(dir, args);
  e2e_assert_text(r.err, "tracemerge: " MSG_SINGLE_CLOCK "\n");
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_result_clear(&r);
  g_autofree char *db_path = g_build_filename(dir, "out.sqlite", NULL);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(db, "SELECT count(*) FROM slice", -1, &stmt, NULL), ==,
                  SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
  g_assert_cmpint(sqlite3_column_int(stmt, 0), ==, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  g_free(phone.data);
  e2e_cleanup(dir);
}

/* A manifest error found while reading wins over an earlier file's damage
 * (architecture.md: the fatal error is reported before any other):
 * broken.json is damaged and read before phone.pb, whose PIN fails. */
static void test_manifest_error_before_earlier_damage(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes phone = e2e_proto_fixture("systrace_spine");
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  g_autofree char *m = manifest_text(
      M("'files': [{'path': 'phone.pb', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
        "{'path': 'a.json'}]"));
  const e2e_member members[] = {{"manifest.json", m, 0},
                                {"a.json", a, 0},
                                {"broken.json", "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": ]}", 0},
                                {"phone.pb", phone.data, phone.len}};
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 4);
  assert_archive_fails(dir, "run.zip", MSG_SINGLE_CLOCK);
  g_autofree char *tar = e2e_write_archive(dir, "run.tar", E2E_TAR, members, 4);
  assert_archive_fails(dir, "run.tar", MSG_SINGLE_CLOCK);
  g_free(phone.data);
  e2e_cleanup(dir);
}

/* A remote_clock_sync without a machine_id syncs the host machine with
 * itself (remote_sync_on_host.pb). In a PINned file it still fails with
 * the `clocks` single-machine message: §10.2 raises it for the "first
 * remote packet or `remote_clock_sync`" and §9.3 fails a PINned file on
 * any remote_clock_sync, whichever machine it carries; the snapshot of its
 * client readings must not turn it into the single-clock message. Under a
 * `machine` override the packet is no remote packet (§10.2 names only
 * those): the file imports, its instant on the named machine at its raw
 * BOOTTIME (the proto's claim; a.json's private clock meets it at 0). */
static void test_remote_clock_sync_on_the_host_machine(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  e2e_bytes sync = e2e_proto_fixture("remote_sync_on_host");
  g_autofree char *pin = manifest_text(
      M("'files': [{'path': 'sync.pb', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
        "{'path': 'a.json'}]"));
  const e2e_member pinned[] = {
      {"manifest.json", pin, 0}, {"a.json", a, 0}, {"sync.pb", sync.data, sync.len}};
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, pinned, 3);
  assert_archive_fails(dir, "run.zip", MSG_CLOCKS_ON_MULTI);
  g_autofree char *tar = e2e_write_archive(dir, "run.tar", E2E_TAR, pinned, 3);
  assert_archive_fails(dir, "run.tar", MSG_CLOCKS_ON_MULTI);

  g_autofree char *named = manifest_text(
      M("'files': [{'path': 'sync.pb', 'machine': {'name': 'relay'}}]"));
  const e2e_member attributed[] = {
      {"manifest.json", named, 0}, {"a.json", a, 0}, {"sync.pb", sync.data, sync.len}};
  g_autofree char *ok = e2e_write_archive(dir, "ok.tar", E2E_TAR, attributed, 3);
  const char *inputs[] = {"ok.tar", NULL};
  g_autofree char *out = e2e_query_in(dir, inputs,
      "SELECT s.ts, s.name, m.name AS machine FROM slice s JOIN track t ON "
      "s.track_id = t.id LEFT JOIN machine m ON t.machine_id = m.id ORDER BY s.ts");
  e2e_assert_text(out, "\"ts\",\"name\",\"machine\"\n"
                       "1000,\"a\",\"[NULL]\"\n"
                       "6000,\"host work\",\"relay\"\n");
  g_free(sync.data);
  e2e_cleanup(dir);
}

/* §10.2's `clocks` and `machine` rules on a file whose first packet is a
 * remote_clock_sync of embedded machine 7 (remote_sync_first.pb): that
 * packet alone fails the import, before the sync adds any edge. */
static void test_remote_clock_sync_in_an_overridden_file(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  e2e_bytes sync = e2e_proto_fixture("remote_sync_first");
  static const struct {
    const char *manifest;
    const char *message;
  } overrides[] = {
      {M("'files': [{'path': 'sync.pb', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
         "{'path': 'a.json'}]"),
       MSG_CLOCKS_ON_MULTI},
      {M("'files': [{'path': 'sync.pb', 'machine': {'name': 'relay'}}]"), MSG_MACHINE_ON_MULTI},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(overrides); i++) {
    g_autofree char *m = manifest_text(overrides[i].manifest);
    const e2e_member members[] = {
        {"manifest.json", m, 0}, {"a.json", a, 0}, {"sync.pb", sync.data, sync.len}};
    g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 3);
    assert_archive_fails(dir, "run.zip", overrides[i].message);
    g_autofree char *tar = e2e_write_archive(dir, "run.tar", E2E_TAR, members, 3);
    assert_archive_fails(dir, "run.tar", overrides[i].message);
  }
  g_free(sync.data);
  e2e_cleanup(dir);
}

/* Why §10.3's unit message cannot come from an override: us.pb
 * (boottime_in_us.pb) writes BOOTTIME in µs, and in this TAR its snapshot
 * (snapshot 0) is in the graph before the PIN edge that waits for a.json
 * (snapshot 1) names the same host BOOTTIME. The reader hands the graph ns
 * (1000 µs -> 1 000 000), the edge is ns too: no "previously registered
 * with different properties", and the import succeeds. us.pb claims
 * BOOTTIME; a's 1 µs is BOOTTIME 1000 through the edge; the marker's raw
 * 1200 µs is 1 200 000. */
static void test_units_never_reach_an_override_edge(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  e2e_bytes us = e2e_proto_fixture("boottime_in_us");
  g_autofree char *m = manifest_text(
      M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'us.pb', 'clock': "
        "'BOOTTIME'}}}, {'path': 'us.pb'}]"));
  const e2e_member members[] = {
      {"manifest.json", m, 0}, {"us.pb", us.data, us.len}, {"a.json", a, 0}};
  g_autofree char *tar = e2e_write_archive(dir, "run.tar", E2E_TAR, members, 3);
  const char *inputs[] = {"run.tar", NULL};
  g_autofree char *out = e2e_query_in(dir, inputs,
      "SELECT (SELECT group_concat(name || '@' || ts) FROM (SELECT name, ts FROM slice "
      "ORDER BY ts)) AS slices, (SELECT group_concat(clock_id || '=' || clock_value) FROM "
      "(SELECT clock_id, clock_value FROM clock_snapshot WHERE snapshot_id = 1 ORDER BY "
      "clock_id)) AS edge");
  e2e_assert_text(out, "\"slices\",\"edge\"\n\"a@1000,us marker@1200000\",\"6=0,11=0\"\n");
  g_free(us.data);
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/manifest/errors/10.1-26/second-manifest-in-a-zip",
                  test_second_manifest_in_a_zip);
  g_test_add_func("/e2e/manifest/errors/10.1-26/second-manifest-in-a-tar-even-after-a-trace",
                  test_second_manifest_in_a_tar);
  g_test_add_func("/e2e/manifest/errors/10.1-27/not-a-manifest-unless-it-starts-with-the-key",
                  test_not_a_manifest_unless_it_starts_with_the_key);
  g_test_add_func("/e2e/manifest/errors/10.2/manifest-after-a-trace-in-a-tar-loose-or-gzipped",
                  test_manifest_after_a_trace);
  g_test_add_func("/e2e/manifest/errors/10.2/gzip-manifest-sorting-after-a-proto-is-not-first",
                  test_gzip_manifest_sorting_after_a_proto);
  g_test_add_func("/e2e/manifest/errors/10.2/override-on-a-gzip-or-nested-zip-member",
                  test_override_on_an_archive_member);
  g_test_add_func("/e2e/manifest/errors/10.2/unknown-member-type-next-to-a-manifest",
                  test_unknown_member_type);
  g_test_add_func("/e2e/manifest/errors/10.2/remote-clock-sync-in-a-pinned-or-attributed-file",
                  test_remote_clock_sync_in_an_overridden_file);
  g_test_add_func("/e2e/manifest/errors/10.2/remote-clock-sync-on-the-host-machine-in-a-pinned-file",
                  test_remote_clock_sync_on_the_host_machine);
  g_test_add_func("/e2e/manifest/errors/10.3/units-never-reach-an-override-edge",
                  test_units_never_reach_an_override_edge);
  g_test_add_func("/e2e/manifest/errors/10.3/file-synced-to-itself-pin-and-relate",
                  test_file_synced_to_itself);
  g_test_add_func(
      "/e2e/manifest/errors/order/overrides-in-files-order-but-a-tar-checks-members-at-the-end",
                  test_tar_defers_member_resolution);
  g_test_add_func("/e2e/manifest/errors/import-command-saves-no-event",
                  test_import_command_fails_whole);
  g_test_add_func("/e2e/manifest/errors/order/manifest-error-before-an-earlier-files-damage",
                  test_manifest_error_before_earlier_damage);
  return g_test_run();
}
