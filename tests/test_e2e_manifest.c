/*
 * End-to-end: the perfetto_manifest applied by the session
 * (reference/clock-model.md §9, §10; sql-surface.md §1, §3).
 *
 * Fixtures: JSON traces written here; proto traces are the encoded text
 * protobufs of tests/data/proto/:
 *  - systrace_spine.pb: one snapshot BOOTTIME 1 000 000 000 = MONOTONIC
 *    500 000 000 on the file's base machine (it claims BOOTTIME) and an
 *    instant "proto marker" at BOOTTIME 1 200 000 000;
 *  - machines.pb: the host (embedded id 0) with an instant "host work" at
 *    BOOTTIME 1 000 200, and a vm (embedded id 7) tied to it by a
 *    remote_clock_sync (vm BOOTTIME 5375 = host 1 000 300) with "vm work"
 *    at vm 6000 -> 1 000 925 and "vm thread work" at 6100 -> 1 001 025 on
 *    thread 71 of process 70.
 * JSON timestamps are µs (×1000 to ns) on the file's private clock.
 */
#include <glib.h>
#include <string.h>

#include "e2e_support.h"

typedef struct fixture_bytes {
  char *data;
  gsize len;
} fixture_bytes;

static fixture_bytes proto_fixture(const char *name) {
  g_autofree char *file = g_strdup_printf("%s.pb", name);
  g_autofree char *path =
      g_test_build_filename(G_TEST_BUILT, "data", "proto", file, NULL);
  fixture_bytes bytes = {0};
  GError *error = NULL;
  g_file_get_contents(path, &bytes.data, &bytes.len, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(bytes.len, >, 0);
  return bytes;
}

/* One complete slice of 1 µs at `ts_us` on thread (pid, tid). */
static char *json_slice(const char *name, int pid, int tid, int ts_us) {
  return g_strdup_printf("{\"traceEvents\": [{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                         "\"ts\":%d,\"dur\":1,\"name\":\"%s\"}]}\n",
                         pid, tid, ts_us, name);
}

/* Runs `query INPUT --sql SQL` in `dir`, expecting the import to fail with
 * exactly `message`. */
static void assert_import_fails(const char *dir, const char *input,
                                const char *message) {
  const char *args[] = {"query", input, "--sql", "SELECT 1", NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_autofree char *expected = g_strdup_printf("tracemerge: %s\n", message);
  e2e_assert_text(r.err, expected);
  e2e_result_clear(&r);
}

static char *query_zip(const char *dir, const e2e_member *members, size_t n,
                       e2e_archive_format format, const char *sql) {
  g_autofree char *archive = e2e_write_archive(
      dir, format == E2E_ZIP ? "run.zip" : "run.tar", format, members, n);
  const char *inputs[] = {archive, NULL};
  return e2e_query_in(dir, inputs, sql);
}

#define SLICES_BY_NAME "SELECT name, ts FROM slice ORDER BY name"

/* §9.3, third example: b.json PINned to a.json's private clock with
 * offset 500. Both slices at 2000 µs. a.json is the first JSON file in
 * processing order, so it owns trace time (its private clock, id 11):
 * a = 2 000 000; b's private 2 000 000 is a's 2 000 500. The edge is the
 * snapshot {b: max(0, -500) = 0, a: max(0, 500) = 500}; both readings
 * convert to trace time 500 (a's reading 500 is trace time 500; b's 0 is
 * a's 500). The manifest sits last in the ZIP and still applies first. */
static void test_pin_json_to_json_private_clock(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = json_slice("a", 1, 1, 2000);
  g_autofree char *b = json_slice("b", 2, 2, 2000);
  const e2e_member members[] = {
      {"b.json", b, 0},
      {"a.json", a, 0},
      {"perfetto_manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"b.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"},"
       " \"offset_ns\": 500}},\n"
       " {\"path\": \"a.json\"}]}}\n",
       0},
  };
  g_autofree char *slices = query_zip(dir, members, 3, E2E_ZIP, SLICES_BY_NAME);
  e2e_assert_text(slices, "\"name\",\"ts\"\n\"a\",2000000\n\"b\",2000500\n");
  g_autofree char *snapshot = query_zip(dir, members, 3, E2E_ZIP,
      "SELECT clock_id, clock_value, ts FROM clock_snapshot ORDER BY clock_value");
  e2e_assert_text(snapshot, "\"clock_id\",\"clock_value\",\"ts\"\n11,0,500\n11,500,500\n");
  g_autofree char *clock = query_zip(dir, members, 3, E2E_ZIP,
      "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n11\n");
  g_autofree char *types = query_zip(dir, members, 3, E2E_ZIP,
      "SELECT name, trace_type, processing_order FROM trace_file WHERE id > 0 "
      "ORDER BY processing_order");
  e2e_assert_text(types, "\"name\",\"trace_type\",\"processing_order\"\n"
                         "\"perfetto_manifest.json\",\"perfetto_manifest\",1\n"
                         "\"a.json\",\"json\",2\n\"b.json\",\"json\",3\n");
  e2e_cleanup(dir);
}

/* §9.3, second example: app.json (machine `server`) PINned onto
 * phone.pb's BOOTTIME with offset 500. phone.pb (a proto, processed before
 * the JSON file) claims its BOOTTIME, on the host machine, as trace time.
 * app's 2000 µs = private 2 000 000 -> phone BOOTTIME 2 000 500 = trace
 * time. The marker stays at 1 200 000 000. Machine rows: the manifest
 * allocates `server` (raw_id 2^32) before any trace, so it is row 0; the
 * host row comes when phone.pb begins (row 1). label_index: host 0, the
 * others 1-based. */
static void test_pin_json_to_proto_boottime(void) {
  g_autofree char *dir = e2e_tmpdir();
  fixture_bytes phone = proto_fixture("systrace_spine");
  g_autofree char *app = json_slice("app", 5, 6, 2000);
  const e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"phone.pb\"},\n"
       " {\"path\": \"app.json\", \"machine\": {\"name\": \"server\"},\n"
       "  \"clocks\": {\"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"},"
       " \"offset_ns\": 500}}]}}\n",
       0},
      {"app.json", app, 0},
      {"phone.pb", phone.data, phone.len},
  };
  g_autofree char *slices = query_zip(dir, members, 3, E2E_ZIP,
      "SELECT s.name, s.ts, m.name AS machine FROM slice s JOIN track t ON "
      "s.track_id = t.id JOIN machine m ON t.machine_id = m.id ORDER BY s.ts");
  e2e_assert_text(slices, "\"name\",\"ts\",\"machine\"\n"
                          "\"app\",2000500,\"server\"\n"
                          "\"proto marker\",1200000000,\"[NULL]\"\n");
  g_autofree char *machines = query_zip(dir, members, 3, E2E_ZIP,
      "SELECT id, raw_id, name, label_index FROM machine ORDER BY id");
  e2e_assert_text(machines, "\"id\",\"raw_id\",\"name\",\"label_index\"\n"
                            "0,4294967296,\"server\",1\n"
                            "1,0,\"[NULL]\",0\n");
  g_autofree char *threads = query_zip(dir, members, 3, E2E_ZIP,
      "SELECT t.tid, t.machine_id FROM thread t WHERE t.tid = 6");
  e2e_assert_text(threads, "\"tid\",\"machine_id\"\n6,0\n");
  g_free(phone.data);
  e2e_cleanup(dir);
}

static const char relate_manifest_phone_owns[] =
    "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
    " {\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}},\n"
    " {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"},\n"
    "  \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500,\n"
    "   \"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"}}}]}}\n";

static const char relate_manifest_server_owns[] =
    "{\"perfetto_manifest\": {\"version\": 1,\n"
    " \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"server.pb\"},\n"
    " \"files\": [\n"
    " {\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}},\n"
    " {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"},\n"
    "  \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500,\n"
    "   \"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"}}}]}}\n";

/* §9.3, first example: server.pb's BOOTTIME RELATEd to phone.pb's with
 * offset 500, both markers at raw BOOTTIME 1 200 000 000. Without
 * `trace_time`, phone.pb (first proto by name) owns trace time: phone
 * 1 200 000 000, server 1 200 000 500. With `trace_time` on server.pb the
 * manifest's claim wins over phone.pb's: server 1 200 000 000, phone
 * 1 200 000 000 - 500 = 1 199 999 500. Either way trace time is BOOTTIME. */
static void test_relate_boottime_and_trace_time_claim(void) {
  g_autofree char *dir = e2e_tmpdir();
  fixture_bytes spine = proto_fixture("systrace_spine");
  const char *sql = "SELECT m.name AS machine, s.ts FROM slice s JOIN track t ON "
                    "s.track_id = t.id JOIN machine m ON t.machine_id = m.id "
                    "ORDER BY m.name";
  e2e_member members[] = {
      {"manifest.json", relate_manifest_phone_owns, 0},
      {"phone.pb", spine.data, spine.len},
      {"server.pb", spine.data, spine.len},
  };
  g_autofree char *phone_owns = query_zip(dir, members, 3, E2E_ZIP, sql);
  e2e_assert_text(phone_owns, "\"machine\",\"ts\"\n"
                              "\"phone\",1200000000\n\"server\",1200000500\n");
  members[0].content = relate_manifest_server_owns;
  g_autofree char *server_owns = query_zip(dir, members, 3, E2E_ZIP, sql);
  e2e_assert_text(server_owns, "\"machine\",\"ts\"\n"
                               "\"phone\",1199999500\n\"server\",1200000000\n");
  g_autofree char *clock = query_zip(dir, members, 3, E2E_ZIP,
      "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n6\n");
  g_free(spine.data);
  e2e_cleanup(dir);
}

/* `trace_time` without `file` claims machine row 0, which is the first
 * named machine when the manifest names any (§9.4, the upstream quirk
 * reproduced): `server` is named first, so trace time is server's BOOTTIME
 * although phone.pb sorts first: server 1 200 000 000, phone
 * 1 200 000 000 - 500. */
static void test_trace_time_without_file_is_machine_row_zero(void) {
  g_autofree char *dir = e2e_tmpdir();
  fixture_bytes spine = proto_fixture("systrace_spine");
  const e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"BOOTTIME\"},\n"
       " \"files\": [\n"
       " {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"},\n"
       "  \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500,\n"
       "   \"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"}}},\n"
       " {\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}}]}}\n",
       0},
      {"phone.pb", spine.data, spine.len},
      {"server.pb", spine.data, spine.len},
  };
  g_autofree char *slices = query_zip(dir, members, 3, E2E_ZIP,
      "SELECT m.id, m.name AS machine, s.ts FROM slice s JOIN track t ON "
      "s.track_id = t.id JOIN machine m ON t.machine_id = m.id ORDER BY m.id");
  e2e_assert_text(slices, "\"id\",\"machine\",\"ts\"\n"
                          "0,\"server\",1200000000\n1,\"phone\",1199999500\n");
  g_free(spine.data);
  e2e_cleanup(dir);
}

/* A chain of RELATE overrides in a TAR (manifest first): p2 = p1 + 300,
 * p3 = p2 + 200, so p3 reading T is p1 reading T + 500. p1 owns trace
 * time (first proto by name). Markers: p1 1 200 000 000, p2 +300, p3 +500. */
static void test_relate_chain_offsets_add_up_in_tar(void) {
  g_autofree char *dir = e2e_tmpdir();
  fixture_bytes spine = proto_fixture("systrace_spine");
  const e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"p1.pb\", \"machine\": {\"name\": \"m1\"}},\n"
       " {\"path\": \"p2.pb\", \"machine\": {\"name\": \"m2\"}, \"clocks\": {\"clock\":"
       " \"BOOTTIME\", \"offset_ns\": 300, \"sync_to\": {\"file\": \"p1.pb\", \"clock\":"
       " \"BOOTTIME\"}}},\n"
       " {\"path\": \"p3.pb\", \"machine\": {\"name\": \"m3\"}, \"clocks\": {\"clock\":"
       " \"BOOTTIME\", \"offset_ns\": 200, \"sync_to\": {\"file\": \"p2.pb\", \"clock\":"
       " \"BOOTTIME\"}}}]}}\n",
       0},
      {"p3.pb", spine.data, spine.len},
      {"p2.pb", spine.data, spine.len},
      {"p1.pb", spine.data, spine.len},
  };
  g_autofree char *slices = query_zip(dir, members, 4, E2E_TAR,
      "SELECT m.name AS machine, m.raw_id, s.ts FROM slice s JOIN track t ON "
      "s.track_id = t.id JOIN machine m ON t.machine_id = m.id ORDER BY m.name");
  e2e_assert_text(slices, "\"machine\",\"raw_id\",\"ts\"\n"
                          "\"m1\",4294967296,1200000000\n"
                          "\"m2\",4294967297,1200000300\n"
                          "\"m3\",4294967298,1200000500\n");
  g_free(spine.data);
  e2e_cleanup(dir);
}

/* PINs in a TAR whose referenced members come after the manifest (no rows
 * yet when it is applied): c = b + 200, b = a + 300; a.json owns trace
 * time. All slices at 1000 µs: a 1 000 000, b 1 000 300, c 1 000 500. */
static void test_pin_chain_to_later_members_in_tar(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = json_slice("a", 1, 1, 1000);
  g_autofree char *b = json_slice("b", 2, 2, 1000);
  g_autofree char *c = json_slice("c", 3, 3, 1000);
  const e2e_member members[] = {
      {"perfetto_manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"c.json\", \"clocks\": {\"sync_to\": {\"file\": \"b.json\"},"
       " \"offset_ns\": 200}},\n"
       " {\"path\": \"b.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"},"
       " \"offset_ns\": 300}},\n"
       " {\"path\": \"a.json\"}]}}\n",
       0},
      {"c.json", c, 0},
      {"b.json", b, 0},
      {"a.json", a, 0},
  };
  g_autofree char *slices = query_zip(dir, members, 4, E2E_TAR, SLICES_BY_NAME);
  e2e_assert_text(slices, "\"name\",\"ts\"\n\"a\",1000000\n\"b\",1000300\n"
                          "\"c\",1000500\n");
  e2e_cleanup(dir);
}

static const char relay_manifest[] =
    "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
    " {\"path\": \"relay.pb\", \"machines\": [{\"id\": 0, \"name\": \"relay\"},"
    " {\"id\": 7, \"name\": \"vm\"}]},\n"
    " {\"path\": \"vm.json\", \"machine\": {\"name\": \"vm\"}},\n"
    " {\"path\": \"phone.json\", \"machine\": {\"name\": \"phone\"}}],\n"
    " \"attributes\": {\"benchmark\": \"startup\", \"run\": 42}}}\n";

/* A multi-machine proto remapped with `machines` next to JSON files
 * attributed with `machine`. Names are allocated walking `files`: relay
 * 2^32, vm 2^32 + 1, phone 2^32 + 2; no file is left on the host, so
 * there is no host row. vm.json's thread 72 of process 70 joins the
 * proto's thread 71 of process 70 on `vm`: one process row. relay.pb
 * claims its BOOTTIME (on `relay`) as trace time; the JSON files' private
 * clocks are tied to it at zero offset (1 µs -> 1000, 2 µs -> 2000). */
static void test_machines_remap_and_shared_names(void) {
  g_autofree char *dir = e2e_tmpdir();
  fixture_bytes relay = proto_fixture("machines");
  g_autofree char *vm = json_slice("json on vm", 70, 72, 1);
  g_autofree char *phone = json_slice("json on phone", 70, 72, 2);
  const e2e_member members[] = {
      {"relay.pb", relay.data, relay.len},
      {"vm.json", vm, 0},
      {"phone.json", phone, 0},
      {"manifest.json", relay_manifest, 0},
  };
  g_autofree char *machines = query_zip(dir, members, 4, E2E_ZIP,
      "SELECT id, raw_id, name, label_index FROM machine ORDER BY id");
  e2e_assert_text(machines, "\"id\",\"raw_id\",\"name\",\"label_index\"\n"
                            "0,4294967296,\"relay\",1\n"
                            "1,4294967297,\"vm\",2\n"
                            "2,4294967298,\"phone\",3\n");
  g_autofree char *slices = query_zip(dir, members, 4, E2E_ZIP,
      "SELECT s.ts, s.name, m.name AS machine FROM slice s JOIN track t ON "
      "s.track_id = t.id JOIN machine m ON t.machine_id = m.id ORDER BY s.ts");
  e2e_assert_text(slices, "\"ts\",\"name\",\"machine\"\n"
                          "1000,\"json on vm\",\"vm\"\n"
                          "2000,\"json on phone\",\"phone\"\n"
                          "1000200,\"host work\",\"relay\"\n"
                          "1000925,\"vm work\",\"vm\"\n"
                          "1001025,\"vm thread work\",\"vm\"\n");
  g_autofree char *threads = query_zip(dir, members, 4, E2E_ZIP,
      "SELECT machine, count(DISTINCT upid) AS processes, group_concat(tid) AS tids "
      "FROM (SELECT m.name AS machine, t.upid, t.tid FROM thread t JOIN process p "
      "USING (upid) JOIN machine m ON t.machine_id = m.id WHERE p.pid = 70 "
      "ORDER BY m.name, t.tid) GROUP BY machine ORDER BY machine");
  e2e_assert_text(threads, "\"machine\",\"processes\",\"tids\"\n"
                           "\"phone\",1,\"72\"\n"
                           "\"vm\",1,\"71,72\"\n");
  g_autofree char *attributes = query_zip(dir, members, 4, E2E_ZIP,
      "SELECT name, key_type, str_value, int_value, machine_id, trace_id FROM "
      "metadata WHERE name LIKE 'manifest_attribute.%' ORDER BY name");
  e2e_assert_text(attributes,
      "\"name\",\"key_type\",\"str_value\",\"int_value\",\"machine_id\",\"trace_id\"\n"
      "\"manifest_attribute.benchmark\",\"single\",\"startup\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "\"manifest_attribute.run\",\"single\",\"[NULL]\",42,\"[NULL]\",\"[NULL]\"\n");
  g_free(relay.data);
  e2e_cleanup(dir);
}

/* `trace_time` names MONOTONIC of phone.pb: the snapshot says BOOTTIME
 * 1 000 000 000 = MONOTONIC 500 000 000, so the marker at BOOTTIME
 * 1 200 000 000 is MONOTONIC 700 000 000; trace_time_clock_id = 3. */
static void test_trace_time_clock_from_manifest(void) {
  g_autofree char *dir = e2e_tmpdir();
  fixture_bytes spine = proto_fixture("systrace_spine");
  const e2e_member members[] = {
      {"phone.pb", spine.data, spine.len},
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": "
       "\"MONOTONIC\", \"file\": \"phone.pb\"}, \"files\": [{\"path\": \"phone.pb\"}]}}",
       0},
  };
  g_autofree char *result = query_zip(dir, members, 2, E2E_ZIP,
      "SELECT (SELECT ts FROM slice) AS ts, (SELECT int_value FROM metadata WHERE "
      "name = 'trace_time_clock_id') AS clock");
  e2e_assert_text(result, "\"ts\",\"clock\"\n700000000,3\n");
  g_free(spine.data);
  e2e_cleanup(dir);
}

/* Loose root inputs behave as members of one archive: the manifest (first
 * input) PINs b.json to a.json as in the ZIP case. A manifest given alone
 * is validated and configures nothing: no machine row, no metadata. */
static void test_loose_inputs_and_standalone_manifest(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = json_slice("a", 1, 1, 2000);
  g_autofree char *b = json_slice("b", 2, 2, 2000);
  g_autofree char *pa = e2e_write_file(dir, "a.json", a, 0);
  g_autofree char *pb = e2e_write_file(dir, "b.json", b, 0);
  g_autofree char *pm = e2e_write_file(dir, "m.json",
      "  {\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      " {\"path\": \"b.json\", \"machine\": {\"name\": \"x\"}, \"clocks\": {\"sync_to\":"
      " {\"file\": \"a.json\"}, \"offset_ns\": 500}},\n"
      " {\"path\": \"a.json\"}], \"attributes\": {\"k\": \"v\"}}}\n", 0);
  const char *inputs[] = {"m.json", "a.json", "b.json", NULL};
  g_autofree char *slices = e2e_query_in(dir, inputs, SLICES_BY_NAME);
  e2e_assert_text(slices, "\"name\",\"ts\"\n\"a\",2000000\n\"b\",2000500\n");
  const char *alone[] = {"m.json", NULL};
  g_autofree char *nothing = e2e_query_in(dir, alone,
      "SELECT (SELECT count(*) FROM machine), (SELECT count(*) FROM metadata WHERE "
      "name LIKE 'manifest_attribute.%'), (SELECT trace_type FROM trace_file)");
  e2e_assert_text(nothing, "\"(SELECT count(*) FROM machine)\",\"(SELECT count(*) FROM "
                           "metadata WHERE name LIKE 'manifest_attribute.%')\",\"(SELECT "
                           "trace_type FROM trace_file)\"\n0,0,\"perfetto_manifest\"\n");
  g_autofree char *bad = e2e_write_file(dir, "bad.json",
                                        "{\"perfetto_manifest\": {\"version\": 2}}", 0);
  assert_import_fails(dir, "bad.json",
                      "perfetto_manifest: unsupported version: 2. Only version 1 is "
                      "supported; set \"version\": 1.");
  e2e_cleanup(dir);
}

/* A repeated `path` uses the first entry (b = a + 500, not + 900); a
 * cycle of `sync_to` is no error, only two edges (both slices place). */
static void test_repeated_paths_and_sync_cycles(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = json_slice("a", 1, 1, 2000);
  g_autofree char *b = json_slice("b", 2, 2, 2000);
  e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"b.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"},"
       " \"offset_ns\": 500}},\n"
       " {\"path\": \"b.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"},"
       " \"offset_ns\": 900}},\n"
       " {\"path\": \"a.json\"}]}}\n",
       0},
      {"a.json", a, 0},
      {"b.json", b, 0},
  };
  g_autofree char *first = query_zip(dir, members, 3, E2E_ZIP, SLICES_BY_NAME);
  e2e_assert_text(first, "\"name\",\"ts\"\n\"a\",2000000\n\"b\",2000500\n");
  members[0].content =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      " {\"path\": \"b.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"},"
      " \"offset_ns\": 100}},\n"
      " {\"path\": \"a.json\", \"clocks\": {\"sync_to\": {\"file\": \"b.json\"},"
      " \"offset_ns\": 100}}]}}\n";
  g_autofree char *cycle = query_zip(dir, members, 3, E2E_ZIP,
      "SELECT count(*) AS slices, (SELECT count(DISTINCT snapshot_id) FROM "
      "clock_snapshot) AS edges FROM slice");
  e2e_assert_text(cycle, "\"slices\",\"edges\"\n2,2\n");
  e2e_cleanup(dir);
}

/* Placement errors (§10.1 #26, §10.2). */
static void test_placement_errors(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = json_slice("a", 1, 1, 1);
  static const char manifest[] = "{\"perfetto_manifest\": {\"version\": 1}}";
  /* A TAR is read in archive order: a trace file came first. */
  const e2e_member late[] = {{"a.json", a, 0}, {"manifest.json", manifest, 0}};
  g_autofree char *tar = e2e_write_archive(dir, "late.tar", E2E_TAR, late, 2);
  assert_import_fails(dir, "late.tar",
                      "perfetto_manifest file must be the first trace file in the input");
  const e2e_member two[] = {
      {"a.json", a, 0}, {"m1.json", manifest, 0}, {"m2.json", manifest, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "two.zip", E2E_ZIP, two, 3);
  assert_import_fails(dir, "two.zip", "multiple perfetto_manifest files in archive");
  e2e_cleanup(dir);
}

/* Validation errors surface unchanged and fail the whole import. */
static void test_validation_errors_fail_the_import(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = json_slice("a", 1, 1, 1);
  static const struct {
    const char *manifest;
    const char *message;
  } cases[] = {
      {"{\"perfetto_manifest\": {\"version\": 2}}",
       "perfetto_manifest: unsupported version: 2. Only version 1 is supported; "
       "set \"version\": 1."},
      {"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json\","
       " \"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": \"ghost.pb\"}}}]}}",
       "perfetto_manifest: clocks: sync_to.file names unknown file 'ghost.pb'. It must "
       "match the `path` of an entry in the `files` array."},
      {"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json\","
       " \"clocks\": {\"sync_to\": {\"file\": \"gone.json\"}}}, {\"path\": \"gone.json\"}]}}",
       "perfetto_manifest: clocks: could not resolve file 'gone.json'. It must match "
       "the `path` of an entry in the `files` array."},
      {"{\"perfetto_manifest\": {\"version\": 1, \"attributes\": {\"x\": true}}}",
       "perfetto_manifest: attributes: 'x' must be a string or an integer"},
      {"{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"TAI\"}}}",
       "perfetto_manifest: unknown clock name: TAI. Use one of REALTIME, REALTIME_COARSE, "
       "MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME."},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const e2e_member members[] = {{"a.json", a, 0}, {"manifest.json", cases[i].manifest, 0}};
    g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 2);
    assert_import_fails(dir, "run.zip", cases[i].message);
  }
  e2e_cleanup(dir);
}

/* Errors detected while a file is read (§10.2). machines.pb has packets
 * of embedded machine 7 (after a snapshot of its host: PINning it fails on
 * that snapshot first); remote_machine.pb starts with a packet of machine
 * 7 and has no snapshot; systrace_spine.pb emits a clock snapshot. */
static void test_lazily_detected_errors_fail_the_import(void) {
  g_autofree char *dir = e2e_tmpdir();
  fixture_bytes relay = proto_fixture("machines");
  fixture_bytes spine = proto_fixture("systrace_spine");
  fixture_bytes remote = proto_fixture("remote_machine");
  g_autofree char *a = json_slice("a", 1, 1, 1);
  static const struct {
    const char *manifest;
    const char *message;
  } cases[] = {
      {"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"relay.pb\","
       " \"machines\": [{\"id\": 0, \"name\": \"relay\"}]}]}}",
       "perfetto_manifest: machines: trace has a packet from undeclared machine id 7"},
      {"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"relay.pb\","
       " \"machine\": {\"name\": \"relay\"}}]}}",
       "perfetto_manifest: a `machine` override attributes the file to one machine, but "
       "the file contains packets from multiple machines. Replace `machine` with a "
       "`machines` block that maps each embedded machine_id to a named machine, e.g. "
       "\"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}]."},
      {"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"remote.pb\","
       " \"clocks\": {\"sync_to\": {\"file\": \"a.json\"}}}, {\"path\": \"a.json\"}]}}",
       "perfetto_manifest: a `clocks` override applies only to a single-machine file, but "
       "the file contains packets from multiple machines. Remove the `clocks` override "
       "and let the trace's own remote clock snapshots align the machines; if you need "
       "to anchor a specific embedded machine, split it into its own file and override "
       "that."},
      {"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"phone.pb\","
       " \"clocks\": {\"sync_to\": {\"file\": \"a.json\"}}}, {\"path\": \"a.json\"}]}}",
       "perfetto_manifest: clock overrides require the trace to use a single clock"},
      {"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"relay.pb\","
       " \"clocks\": {\"sync_to\": {\"file\": \"a.json\"}}}, {\"path\": \"a.json\"}]}}",
       "perfetto_manifest: clock overrides require the trace to use a single clock"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const e2e_member members[] = {
        {"manifest.json", cases[i].manifest, 0},
        {"relay.pb", relay.data, relay.len},
        {"phone.pb", spine.data, spine.len},
        {"remote.pb", remote.data, remote.len},
        {"a.json", a, 0},
    };
    g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 5);
    assert_import_fails(dir, "run.zip", cases[i].message);
  }
  g_free(relay.data);
  g_free(spine.data);
  g_free(remote.data);
  e2e_cleanup(dir);
}

/* An override on a member that is itself an archive (a gzip stream). */
static void test_override_on_a_container_member(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = json_slice("a", 1, 1, 1);
  const e2e_member inner[] = {{"a.json", a, 0}};
  g_autofree char *gz = e2e_write_archive(dir, "a.json.gz", E2E_GZIP, inner, 1);
  fixture_bytes gz_bytes = {0};
  g_file_get_contents(gz, &gz_bytes.data, &gz_bytes.len, NULL);
  g_assert_nonnull(gz_bytes.data);
  const e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json.gz\","
       " \"machine\": {\"name\": \"x\"}}]}}",
       0},
      {"a.json.gz", gz_bytes.data, gz_bytes.len},
  };
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 2);
  assert_import_fails(dir, "run.zip",
                      "perfetto_manifest: overrides are not supported for trace files which "
                      "are themselves archives or perfetto_manifest files: a.json.gz");
  /* The same in a TAR, where the container's row appears after the
   * manifest was applied. */
  g_autofree char *tar = e2e_write_archive(dir, "run.tar", E2E_TAR, members, 2);
  assert_import_fails(dir, "run.tar",
                      "perfetto_manifest: overrides are not supported for trace files which "
                      "are themselves archives or perfetto_manifest files: a.json.gz");
  g_free(gz_bytes.data);
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/manifest/pin/json-to-json-private-clock-adds-offset",
                  test_pin_json_to_json_private_clock);
  g_test_add_func("/e2e/manifest/pin/json-onto-proto-boottime-on-a-named-machine",
                  test_pin_json_to_proto_boottime);
  g_test_add_func("/e2e/manifest/relate/boottime-offset-and-trace-time-claim",
                  test_relate_boottime_and_trace_time_claim);
  g_test_add_func("/e2e/manifest/trace-time/without-file-is-machine-row-zero",
                  test_trace_time_without_file_is_machine_row_zero);
  g_test_add_func("/e2e/manifest/relate/chain-of-offsets-adds-up-in-a-tar",
                  test_relate_chain_offsets_add_up_in_tar);
  g_test_add_func("/e2e/manifest/pin/chain-to-members-later-in-a-tar",
                  test_pin_chain_to_later_members_in_tar);
  g_test_add_func("/e2e/manifest/machines/remap-and-shared-names-with-attributes",
                  test_machines_remap_and_shared_names);
  g_test_add_func("/e2e/manifest/trace-time/clock-named-by-the-manifest",
                  test_trace_time_clock_from_manifest);
  g_test_add_func("/e2e/manifest/inputs/loose-files-and-standalone-manifest",
                  test_loose_inputs_and_standalone_manifest);
  g_test_add_func("/e2e/manifest/files/repeated-path-uses-first-entry-and-cycles-place",
                  test_repeated_paths_and_sync_cycles);
  g_test_add_func("/e2e/manifest/errors/placement", test_placement_errors);
  g_test_add_func("/e2e/manifest/errors/validation-fails-the-import",
                  test_validation_errors_fail_the_import);
  g_test_add_func("/e2e/manifest/errors/detected-while-reading-fail-the-import",
                  test_lazily_detected_errors_fail_the_import);
  g_test_add_func("/e2e/manifest/errors/override-on-a-container-member",
                  test_override_on_a_container_member);
  return g_test_run();
}
