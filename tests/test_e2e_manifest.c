/*
 * End-to-end: the perfetto_manifest applied by the session
 * (docs/clock-model.md §9, §10; docs/sql-surface.md §1, §3).
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
 * Hostile manifests are in test_e2e_manifest_hostile.c.
 */
#include <glib.h>
#include <string.h>

#include "e2e_support.h"

/* The whole import of INPUT (in `dir`) fails with exactly `message`, and
 * nothing is imported (e2e_assert_import_fails_with). */
static void assert_import_fails(const char *dir, const char *input,
                                const char *message) {
  const char *inputs[] = {input, NULL};
  e2e_assert_import_fails_with(dir, inputs, message);
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
  g_autofree char *a = e2e_json_slice("a", 1, 1, 2000);
  g_autofree char *b = e2e_json_slice("b", 2, 2, 2000);
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
  g_autofree char *slices = e2e_query_archive(dir, E2E_ZIP, members, 3, SLICES_BY_NAME);
  e2e_assert_text(slices, "\"name\",\"ts\"\n\"a\",2000000\n\"b\",2000500\n");
  g_autofree char *snapshot = e2e_query_archive(dir, E2E_ZIP, members, 3,
      "SELECT clock_id, clock_value, ts FROM clock_snapshot ORDER BY clock_value");
  e2e_assert_text(snapshot, "\"clock_id\",\"clock_value\",\"ts\"\n11,0,500\n11,500,500\n");
  g_autofree char *clock = e2e_query_archive(dir, E2E_ZIP, members, 3,
      "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n11\n");
  g_autofree char *types = e2e_query_archive(dir, E2E_ZIP, members, 3,
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
  e2e_bytes phone = e2e_proto_fixture("systrace_spine");
  g_autofree char *app = e2e_json_slice("app", 5, 6, 2000);
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
  g_autofree char *slices = e2e_query_archive(dir, E2E_ZIP, members, 3,
      "SELECT s.name, s.ts, m.name AS machine FROM slice s JOIN track t ON "
      "s.track_id = t.id JOIN machine m ON t.machine_id = m.id ORDER BY s.ts");
  e2e_assert_text(slices, "\"name\",\"ts\",\"machine\"\n"
                          "\"app\",2000500,\"server\"\n"
                          "\"proto marker\",1200000000,\"[NULL]\"\n");
  g_autofree char *machines = e2e_query_archive(dir, E2E_ZIP, members, 3,
      "SELECT id, raw_id, name, label_index FROM machine ORDER BY id");
  e2e_assert_text(machines, "\"id\",\"raw_id\",\"name\",\"label_index\"\n"
                            "0,4294967296,\"server\",1\n"
                            "1,0,\"[NULL]\",0\n");
  g_autofree char *threads = e2e_query_archive(dir, E2E_ZIP, members, 3,
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
  e2e_bytes spine = e2e_proto_fixture("systrace_spine");
  const char *sql = "SELECT m.name AS machine, s.ts FROM slice s JOIN track t ON "
                    "s.track_id = t.id JOIN machine m ON t.machine_id = m.id "
                    "ORDER BY m.name";
  e2e_member members[] = {
      {"manifest.json", relate_manifest_phone_owns, 0},
      {"phone.pb", spine.data, spine.len},
      {"server.pb", spine.data, spine.len},
  };
  g_autofree char *phone_owns = e2e_query_archive(dir, E2E_ZIP, members, 3, sql);
  e2e_assert_text(phone_owns, "\"machine\",\"ts\"\n"
                              "\"phone\",1200000000\n\"server\",1200000500\n");
  members[0].content = relate_manifest_server_owns;
  g_autofree char *server_owns = e2e_query_archive(dir, E2E_ZIP, members, 3, sql);
  e2e_assert_text(server_owns, "\"machine\",\"ts\"\n"
                               "\"phone\",1199999500\n\"server\",1200000000\n");
  g_autofree char *clock = e2e_query_archive(dir, E2E_ZIP, members, 3,
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
  e2e_bytes spine = e2e_proto_fixture("systrace_spine");
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
  g_autofree char *slices = e2e_query_archive(dir, E2E_ZIP, members, 3,
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
  e2e_bytes spine = e2e_proto_fixture("systrace_spine");
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
  g_autofree char *slices = e2e_query_archive(dir, E2E_TAR, members, 4,
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
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1000);
  g_autofree char *b = e2e_json_slice("b", 2, 2, 1000);
  g_autofree char *c = e2e_json_slice("c", 3, 3, 1000);
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
  g_autofree char *slices = e2e_query_archive(dir, E2E_TAR, members, 4, SLICES_BY_NAME);
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
  e2e_bytes relay = e2e_proto_fixture("machines");
  g_autofree char *vm = e2e_json_slice("json on vm", 70, 72, 1);
  g_autofree char *phone = e2e_json_slice("json on phone", 70, 72, 2);
  const e2e_member members[] = {
      {"relay.pb", relay.data, relay.len},
      {"vm.json", vm, 0},
      {"phone.json", phone, 0},
      {"manifest.json", relay_manifest, 0},
  };
  g_autofree char *machines = e2e_query_archive(dir, E2E_ZIP, members, 4,
      "SELECT id, raw_id, name, label_index FROM machine ORDER BY id");
  e2e_assert_text(machines, "\"id\",\"raw_id\",\"name\",\"label_index\"\n"
                            "0,4294967296,\"relay\",1\n"
                            "1,4294967297,\"vm\",2\n"
                            "2,4294967298,\"phone\",3\n");
  g_autofree char *slices = e2e_query_archive(dir, E2E_ZIP, members, 4,
      "SELECT s.ts, s.name, m.name AS machine FROM slice s JOIN track t ON "
      "s.track_id = t.id JOIN machine m ON t.machine_id = m.id ORDER BY s.ts");
  e2e_assert_text(slices, "\"ts\",\"name\",\"machine\"\n"
                          "1000,\"json on vm\",\"vm\"\n"
                          "2000,\"json on phone\",\"phone\"\n"
                          "1000200,\"host work\",\"relay\"\n"
                          "1000925,\"vm work\",\"vm\"\n"
                          "1001025,\"vm thread work\",\"vm\"\n");
  g_autofree char *threads = e2e_query_archive(dir, E2E_ZIP, members, 4,
      "SELECT machine, count(DISTINCT upid) AS processes, group_concat(tid) AS tids "
      "FROM (SELECT m.name AS machine, t.upid, t.tid FROM thread t JOIN process p "
      "USING (upid) JOIN machine m ON t.machine_id = m.id WHERE p.pid = 70 "
      "ORDER BY m.name, t.tid) GROUP BY machine ORDER BY machine");
  e2e_assert_text(threads, "\"machine\",\"processes\",\"tids\"\n"
                           "\"phone\",1,\"70,72\"\n"
                           "\"vm\",1,\"70,71,72\"\n");
  g_autofree char *attributes = e2e_query_archive(dir, E2E_ZIP, members, 4,
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
  e2e_bytes spine = e2e_proto_fixture("systrace_spine");
  const e2e_member members[] = {
      {"phone.pb", spine.data, spine.len},
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": "
       "\"MONOTONIC\", \"file\": \"phone.pb\"}, \"files\": [{\"path\": \"phone.pb\"}]}}",
       0},
  };
  g_autofree char *result = e2e_query_archive(dir, E2E_ZIP, members, 2,
      "SELECT (SELECT ts FROM slice) AS ts, (SELECT int_value FROM metadata WHERE "
      "name = 'trace_time_clock_id') AS clock");
  e2e_assert_text(result, "\"ts\",\"clock\"\n700000000,3\n");
  g_free(spine.data);
  e2e_cleanup(dir);
}

/* Loose root inputs behave as members of one archive: the manifest (first
 * input) PINs b.json to a.json as in the ZIP case. */
static void test_loose_inputs(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 2000);
  g_autofree char *b = e2e_json_slice("b", 2, 2, 2000);
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
  e2e_cleanup(dir);
}

/* A manifest given alone (the only input, in no archive) is applied as in
 * an archive (issue 10 §2; the reference sets trace_time_clock_id from a
 * standalone manifest): trace_time REALTIME gives trace_time_clock_id 1
 * (docs/clock-model.md §9.4); the named machines "phone" and "vm" get rows in
 * allocation order with raw ids 2^32 and 2^32 + 1 (§9.2), so row 0 is
 * "phone" (§9.4: named rows come first); the attribute becomes metadata.
 * A RELATE (clocks.clock given) needs no member and adds its edge; a PIN
 * names a member that never comes, so it fails with #43 as in an archive
 * without that member. Validation errors fail as anywhere. */
static void test_standalone_manifest_is_applied(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *pm = e2e_write_file(dir, "m.json",
      "{\"perfetto_manifest\": {\"version\": 1,\n"
      " \"trace_time\": {\"clock\": \"REALTIME\"},\n"
      " \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}},\n"
      "  {\"path\": \"b.pb\", \"machine\": {\"name\": \"vm\"}}],\n"
      " \"attributes\": {\"run\": 7}}}\n", 0);
  const char *alone[] = {"m.json", NULL};
  g_autofree char *machines =
      e2e_query_in(dir, alone, "SELECT id, raw_id, name FROM machine ORDER BY id");
  e2e_assert_text(machines, "\"id\",\"raw_id\",\"name\"\n"
                            "0,4294967296,\"phone\"\n1,4294967297,\"vm\"\n");
  g_autofree char *metadata = e2e_query_in(dir, alone,
      "SELECT name, int_value, str_value FROM metadata ORDER BY name");
  e2e_assert_text(metadata, "\"name\",\"int_value\",\"str_value\"\n"
                            "\"manifest_attribute.run\",7,\"[NULL]\"\n"
                            "\"trace_time_clock_id\",1,\"[NULL]\"\n"
                            "\"trace_type\",\"[NULL]\",\"perfetto_manifest\"\n");
  g_autofree char *files = e2e_query_in(dir, alone,
      "SELECT id, name, trace_type, processing_order FROM trace_file");
  e2e_assert_text(files, "\"id\",\"name\",\"trace_type\",\"processing_order\"\n"
                         "0,\"m.json\",\"perfetto_manifest\",0\n");

  g_autofree char *relate = e2e_write_file(dir, "relate.json",
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      " {\"path\": \"b.pb\", \"machine\": {\"name\": \"vm\"}, \"clocks\": {\"clock\": \"BOOTTIME\","
      " \"sync_to\": {\"file\": \"a.pb\", \"clock\": \"BOOTTIME\"}, \"offset_ns\": 5}},\n"
      " {\"path\": \"a.pb\"}]}}\n", 0);
  const char *relate_alone[] = {"relate.json", NULL};
  /* Its reference is a.pb's base machine, raw id 0 as a.pb declares none
   * (§9.3): the edge gives it a row after the named one. */
  g_autofree char *vm =
      e2e_query_in(dir, relate_alone, "SELECT id, raw_id, name FROM machine ORDER BY id");
  e2e_assert_text(vm, "\"id\",\"raw_id\",\"name\"\n"
                      "0,4294967296,\"vm\"\n1,0,\"[NULL]\"\n");

  g_autofree char *pin = e2e_write_file(dir, "pin.json",
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      " {\"path\": \"b.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"}}},\n"
      " {\"path\": \"a.json\"}]}}\n", 0);
  assert_import_fails(dir, "pin.json",
                      "perfetto_manifest: clocks: could not resolve file 'b.json'. It must "
                      "match the `path` of an entry in the `files` array.");
  g_autofree char *bad = e2e_write_file(dir, "bad.json",
                                        "{\"perfetto_manifest\": {\"version\": 2}}", 0);
  assert_import_fails(dir, "bad.json",
                      "perfetto_manifest: unsupported version: 2. Only version 1 is "
                      "supported; set \"version\": 1.");
  e2e_cleanup(dir);
}

/* A repeated `path` (on the same machines) uses the first entry (b = a +
 * 500, not + 900); a cycle of `sync_to` fails the import (not the
 * reference's rule: it would take the cycle as two edges). */
static void test_repeated_paths_and_sync_cycles(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 2000);
  g_autofree char *b = e2e_json_slice("b", 2, 2, 2000);
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
  g_autofree char *first = e2e_query_archive(dir, E2E_ZIP, members, 3, SLICES_BY_NAME);
  e2e_assert_text(first, "\"name\",\"ts\"\n\"a\",2000000\n\"b\",2000500\n");
  members[0].content =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      " {\"path\": \"b.json\", \"clocks\": {\"sync_to\": {\"file\": \"a.json\"},"
      " \"offset_ns\": 100}},\n"
      " {\"path\": \"a.json\", \"clocks\": {\"sync_to\": {\"file\": \"b.json\"},"
      " \"offset_ns\": 100}}]}}\n";
  g_autofree char *cycle = e2e_write_archive(dir, "cycle.zip", E2E_ZIP, members, 3);
  assert_import_fails(dir, "cycle.zip",
                      "perfetto_manifest: clocks: sync_to forms a cycle: 'b.json' -> "
                      "'a.json' -> 'b.json'. Each file must lead, through sync_to, to "
                      "one that has no sync_to of its own.");
  e2e_cleanup(dir);
}

/* Placement errors (§10.1 #26, §10.2). */
static void test_placement_errors(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
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
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
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

/* A `machines` remap decides before adoption: the remote-only
 * adopted_machine.pb maps machine 7 to the named row, and the host row the
 * file begins on stays raw_id 0 instead of being relabelled 7. */
static void test_remapped_file_is_never_adopted(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes remote = e2e_proto_fixture("adopted_machine");
  const char *manifest =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"remote.pb\","
      " \"machines\": [{\"id\": 7, \"name\": \"vm\"}]}]}}";
  const e2e_member members[] = {{"manifest.json", manifest, 0},
                                {"remote.pb", remote.data, remote.len}};
  g_autofree char *machines = e2e_query_archive(dir, E2E_ZIP, members, 2,
      "SELECT m.raw_id, m.name, count(s.id) FROM machine m LEFT JOIN track t "
      "ON t.machine_id = m.id LEFT JOIN slice s ON s.track_id = t.id "
      "GROUP BY m.id ORDER BY m.id");
  e2e_assert_text(machines, "\"raw_id\",\"name\",\"count(s.id)\"\n"
                            "4294967296,\"vm\",1\n0,\"[NULL]\",0\n");
  g_free(remote.data);
  e2e_cleanup(dir);
}

/* Errors detected while a file is read (§10.2). machines.pb has packets
 * of embedded machine 7 (after a snapshot of its host: PINning it fails on
 * that snapshot first); remote_machine.pb starts with a packet of machine
 * 7 and has no snapshot; systrace_spine.pb emits a clock snapshot. */
static void test_lazily_detected_errors_fail_the_import(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes relay = e2e_proto_fixture("machines");
  e2e_bytes spine = e2e_proto_fixture("systrace_spine");
  e2e_bytes remote = e2e_proto_fixture("remote_machine");
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
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
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  const e2e_member inner[] = {{"a.json", a, 0}};
  g_autofree char *gz = e2e_write_archive(dir, "a.json.gz", E2E_GZIP, inner, 1);
  e2e_bytes gz_bytes = {0};
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

/* Primary vs isolated files (docs/clock-model.md §2): two captures on one
 * device, no manifest, both on the host machine. capture_a.pb comes first
 * (in the ZIP and in processing order) and is the machine's primary file:
 * its snapshot {BOOTTIME 1e9, REALTIME R0} (R0 = 1.7e18) is on the
 * canonical nodes, and it claims BOOTTIME as trace time. capture_b.pb's
 * snapshot {BOOTTIME 5e9, REALTIME R0 + 10 s} isolates it: from then on
 * its builtin clocks are its own nodes, tied to the canonical BOOTTIME by
 * a zero-offset identity edge at bridging. So:
 *  - a early, R0 + 0.1 s: 1e9 + 0.1e9 = 1 100 000 000;
 *  - a late, R0 + 20 s: 1e9 + 20e9 = 21 000 000 000 (had b's snapshot
 *    been on the canonical nodes too, the last entry <= R0 + 20 s would be
 *    b's: 15 000 000 000);
 *  - b at R0 + 6 s, before b's only entry, takes its offset: 5e9 - 4e9 =
 *    1 000 000 000 (through a's snapshot it would be 7 000 000 000);
 *  - b at R0 + 10.2 s: 5e9 + 0.2e9 = 5 200 000 000;
 *  - b before its snapshot, R0 + 30 s, was emitted through the canonical
 *    REALTIME before b isolated and stays there: a's snapshot gives
 *    1e9 + 30e9 = 31 000 000 000; that mix is counted once for
 *    capture_b.pb in clock_sync_mixed_clock_sources. */
static void test_two_captures_on_one_machine_use_their_own_snapshots(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes a = e2e_proto_fixture("capture_a");
  e2e_bytes b = e2e_proto_fixture("capture_b");
  const e2e_member members[] = {{"capture_a.pb", a.data, a.len},
                                {"capture_b.pb", b.data, b.len}};
  g_autofree char *slices = e2e_query_archive(dir, E2E_ZIP, members, 2,
      "SELECT ts, name FROM slice ORDER BY ts");
  e2e_assert_text(slices, "\"ts\",\"name\"\n"
                          "1000000000,\"b at R0 + 6 s\"\n"
                          "1100000000,\"a early\"\n"
                          "5200000000,\"b at R0 + 10.2 s\"\n"
                          "21000000000,\"a late\"\n"
                          "31000000000,\"b before its snapshot\"\n");
  g_autofree char *stats = e2e_query_archive(dir, E2E_ZIP, members, 2,
      "SELECT s.name, s.value, t.name AS file FROM stats s JOIN trace_file t ON "
      "s.trace_id = t.id WHERE s.name LIKE 'clock_sync_%' AND s.value > 0 "
      "ORDER BY s.name");
  e2e_assert_text(stats, "\"name\",\"value\",\"file\"\n"
                         "\"clock_sync_mixed_clock_sources\",1,\"capture_b.pb\"\n");
  g_autofree char *clock = e2e_query_archive(dir, E2E_ZIP, members, 2,
      "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n6\n");
  g_free(a.data);
  g_free(b.data);
  e2e_cleanup(dir);
}

/* REALTIME twins (docs/clock-model.md §6.3). capture_a.pb twice, as
 * 1_phone.pb (machine phone) and 2_server.pb (machine server), each
 * {BOOTTIME 1e9, REALTIME R0}; capture_b.pb as 3_server.pb, also on
 * server, isolated there by its snapshot {BOOTTIME 5e9, REALTIME R0 + 10 s}
 * (R0 = 1.7e18). 1_phone.pb sorts first and claims trace time: phone's
 * BOOTTIME. Bridging 2_server.pb's BOOTTIME uses the REALTIME rendezvous
 * (server REALTIME = phone REALTIME). 3_server.pb is not on the trace-time
 * machine, so its REALTIME readings get twins on server's canonical
 * REALTIME: its wall clock is server's wall clock, and its events on
 * REALTIME reach trace time by REALTIME_q -> server REALTIME -> phone
 * REALTIME -> phone BOOTTIME:
 *  - b at R0 + 10.2 s -> 1e9 + 10.2e9 = 11 200 000 000;
 *  - b at R0 + 6 s -> 7 000 000 000 (without the twins both would be
 *    dropped: REALTIME_q -> BOOTTIME_q -> server BOOTTIME (identity) ->
 *    server REALTIME -> phone REALTIME -> phone BOOTTIME is 5 edges, over
 *    the limit of 4);
 *  - b before its snapshot (canonical server REALTIME) R0 + 30 s ->
 *    31 000 000 000.
 * With `trace_time` on 2_server.pb's BOOTTIME the server is the trace-time
 * machine: no twins, and 3_server.pb reaches trace time by its own
 * snapshot and the identity edge BOOTTIME_q = server BOOTTIME: R0 + 10.2 s
 * -> 5 200 000 000, R0 + 6 s -> 1 000 000 000; the event through the
 * canonical REALTIME uses 2_server's snapshot: 1e9 + 30e9. */
static void test_realtime_twins_link_isolated_wall_clocks(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes a = e2e_proto_fixture("capture_a");
  e2e_bytes b = e2e_proto_fixture("capture_b");
  e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"1_phone.pb\", \"machine\": {\"name\": \"phone\"}},\n"
       " {\"path\": \"2_server.pb\", \"machine\": {\"name\": \"server\"}},\n"
       " {\"path\": \"3_server.pb\", \"machine\": {\"name\": \"server\"}}]}}\n",
       0},
      {"1_phone.pb", a.data, a.len},
      {"2_server.pb", a.data, a.len},
      {"3_server.pb", b.data, b.len},
  };
  static const char sql[] =
      "SELECT ts, name FROM slice WHERE name LIKE 'b %' ORDER BY ts";
  g_autofree char *twinned = e2e_query_archive(dir, E2E_ZIP, members, 4, sql);
  e2e_assert_text(twinned, "\"ts\",\"name\"\n"
                           "7000000000,\"b at R0 + 6 s\"\n"
                           "11200000000,\"b at R0 + 10.2 s\"\n"
                           "31000000000,\"b before its snapshot\"\n");
  members[0].content =
      "{\"perfetto_manifest\": {\"version\": 1,\n"
      " \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"2_server.pb\"},\n"
      " \"files\": [\n"
      " {\"path\": \"1_phone.pb\", \"machine\": {\"name\": \"phone\"}},\n"
      " {\"path\": \"2_server.pb\", \"machine\": {\"name\": \"server\"}},\n"
      " {\"path\": \"3_server.pb\", \"machine\": {\"name\": \"server\"}}]}}\n";
  g_autofree char *excluded = e2e_query_archive(dir, E2E_ZIP, members, 4, sql);
  e2e_assert_text(excluded, "\"ts\",\"name\"\n"
                            "1000000000,\"b at R0 + 6 s\"\n"
                            "5200000000,\"b at R0 + 10.2 s\"\n"
                            "31000000000,\"b before its snapshot\"\n");
  g_free(a.data);
  g_free(b.data);
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
  g_test_add_func("/e2e/manifest/inputs/loose-files-are-members-of-one-archive",
                  test_loose_inputs);
  g_test_add_func("/e2e/manifest/inputs/standalone-manifest-is-applied",
                  test_standalone_manifest_is_applied);
  g_test_add_func("/e2e/manifest/files/repeated-path-uses-first-entry-and-cycles-fail",
                  test_repeated_paths_and_sync_cycles);
  g_test_add_func("/e2e/manifest/errors/placement", test_placement_errors);
  g_test_add_func("/e2e/manifest/errors/validation-fails-the-import",
                  test_validation_errors_fail_the_import);
  g_test_add_func("/e2e/manifest/errors/detected-while-reading-fail-the-import",
                  test_lazily_detected_errors_fail_the_import);
  g_test_add_func("/e2e/manifest/errors/override-on-a-container-member",
                  test_override_on_a_container_member);
  g_test_add_func("/e2e/manifest/machines/remapped-file-is-never-adopted",
                  test_remapped_file_is_never_adopted);
  g_test_add_func("/e2e/clocks/two-captures-on-one-machine-use-their-own-snapshots",
                  test_two_captures_on_one_machine_use_their_own_snapshots);
  g_test_add_func("/e2e/clocks/realtime-twins-link-isolated-wall-clocks-off-the-trace-time-machine",
                  test_realtime_twins_link_isolated_wall_clocks);
  return g_test_run();
}
