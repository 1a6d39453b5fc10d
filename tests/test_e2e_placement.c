/*
 * End-to-end: how every file reaches trace time (docs/clock-model.md
 * §6.2 fallbacks, §7 negative timestamps and trace bounds, §11 stats;
 * docs/sql-surface.md §4, §13), in mixed archives (proto + JSON + systrace +
 * a perfetto_manifest, in ZIP and TAR), and what `tracemerge info` says
 * about each placement.
 *
 * Fixtures: proto traces are the encoded text protobufs of
 * tests/data/proto/ (their comments give the readings):
 *  - rendezvous_phone.pb: {BOOTTIME 1e9, REALTIME 1 700 000 001e9}, claims
 *    BOOTTIME, instant "phone slice" at BOOTTIME 1.1e9;
 *  - rendezvous_server.pb: {BOOTTIME 1e9, REALTIME 1 700 000 002e9},
 *    instant "server slice" at BOOTTIME 1.1e9;
 *  - boot_mono_only.pb: {BOOTTIME 1e9, MONOTONIC 5e8}, no wall clock;
 *    instants at BOOTTIME 1.1e9 and 1.3e9 and at MONOTONIC 7e8;
 *  - systrace_spine.pb: {BOOTTIME 1e9, MONOTONIC 5e8}, instant "proto
 *    marker" at BOOTTIME 1.2e9;
 *  - machines.pb: host (embedded id 0) "host work" at BOOTTIME 1 000 200;
 *    vm (id 7) tied to it by remote_clock_sync: "vm work" 1 000 925, "vm
 *    thread work" 1 001 025.
 * JSON timestamps are µs (×1000 to ns) on the file's private clock.
 * Processing order in an archive: the manifest, then protos, then the
 * other formats, each group by member name (docs/formats.md §6.2); the first
 * claim in that order owns trace time unless the manifest claims it.
 */
#include <glib.h>
#include <string.h>

#include "e2e_support.h"
#include "e2e_unrelatable_scenario.h"

#define BOUNDS_SQL "SELECT start_ts, end_ts FROM trace_bounds"

/* The placement section of `tracemerge info` (from "placement:" up to the
 * event count line), which explains how each file reached trace time. */
static char *info_placement(const char *dir, e2e_archive_format format,
                            const e2e_member *members, size_t n) {
  g_autofree char *archive = e2e_write_archive(
      dir, format == E2E_ZIP ? "run.zip" : "run.tar", format, members, n);
  const char *args[] = {"info", archive, NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  const char *start = strstr(r.out, "placement:\n");
  const char *end = start ? strstr(start, "events on the timeline:") : NULL;
  if (!start || !end)
    g_error("info has no placement section:\n%s", r.out);
  char *section = g_strndup(start, (gsize)(end - start));
  e2e_result_clear(&r);
  return section;
}

#define SLICES_WITH_MACHINE_SQL                                               \
  "SELECT s.ts, s.name, m.name AS machine FROM slice s JOIN track t ON "      \
  "s.track_id = t.id LEFT JOIN machine m ON t.machine_id = m.id "             \
  "ORDER BY s.ts, s.name"

#define CLOCK_STATS_SQL                                                       \
  "SELECT s.name, s.value, m.name AS machine, f.name AS file FROM stats s "   \
  "LEFT JOIN machine m ON s.machine_id = m.id LEFT JOIN trace_file f ON "     \
  "s.trace_id = f.id WHERE s.value > 0 AND (s.name LIKE 'clock_sync%' OR "    \
  "s.name LIKE 'trace_sorter%') ORDER BY s.name, file, machine"

static const char rendezvous_manifest[] =
    "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
    " {\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}},\n"
    " {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}},\n"
    " {\"path\": \"server.json\", \"machine\": {\"name\": \"server\"}}]}}\n";

/* One X slice at 1 µs lasting 3 µs: [1000, 4000] on its private clock. */
static const char server_json[] =
    "{\"traceEvents\": [{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":3,"
    "\"name\":\"server json\"}]}\n";

/* §6.2 step 2 and §6.4, fourth row: phone.pb and server.pb on machines
 * phone (row 0) and server (row 1), the same boot instant, wall clocks one
 * second apart. phone.pb sorts first and claims its BOOTTIME. server.pb's
 * BOOTTIME has no path to it; both machines relate BOOTTIME to REALTIME, so
 * the rendezvous adds {server REALTIME: 0, phone REALTIME: 0} (snapshot 2,
 * after the two files' own) and server's BOOTTIME 1.1e9 is server REALTIME
 * 1 700 000 002.1e9 = phone REALTIME, i.e. phone BOOTTIME
 * 1e9 + (1 700 000 002.1e9 - 1 700 000 001e9) = 2 100 000 000.
 * The rendezvous edge's rows: each reading 0, converted through phone's
 * only snapshot (extrapolated backwards): 1e9 + (0 - 1 700 000 001e9) =
 * -1 700 000 000 000 000 000, on machines 1 and 0.
 * server.json (also on server) is clockless: its private clock has no
 * REALTIME to meet, so it is tied to trace time at zero offset (§6.2 step
 * 3): 1 µs -> 1000.
 * Trace bounds (§7, docs/sql-surface.md §13): the union of the three files'
 * windows, from server.json's 1000 to server.pb's 2.1e9 (instants last 0). */
static void test_realtime_rendezvous_between_machines_of_different_files(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes phone = e2e_proto_fixture("rendezvous_phone");
  e2e_bytes server = e2e_proto_fixture("rendezvous_server");
  const e2e_member members[] = {
      {"server.pb", server.data, server.len},
      {"server.json", server_json, 0},
      {"phone.pb", phone.data, phone.len},
      {"manifest.json", rendezvous_manifest, 0},
  };
  g_autofree char *slices = e2e_query_archive(dir, E2E_ZIP, members, 4, SLICES_WITH_MACHINE_SQL);
  e2e_assert_text(slices, "\"ts\",\"name\",\"machine\"\n"
                          "1000,\"server json\",\"server\"\n"
                          "1100000000,\"phone slice\",\"phone\"\n"
                          "2100000000,\"server slice\",\"server\"\n");
  g_autofree char *edge = e2e_query_archive(dir, E2E_ZIP, members, 4,
      "SELECT clock_id, clock_value, machine_id, ts FROM clock_snapshot "
      "WHERE snapshot_id = 2 ORDER BY machine_id");
  e2e_assert_text(edge, "\"clock_id\",\"clock_value\",\"machine_id\",\"ts\"\n"
                        "1,0,0,-1700000000000000000\n"
                        "1,0,1,-1700000000000000000\n");
  g_autofree char *bounds = e2e_query_archive(dir, E2E_ZIP, members, 4, BOUNDS_SQL);
  e2e_assert_text(bounds, "\"start_ts\",\"end_ts\"\n1000,2100000000\n");
  g_autofree char *stats = e2e_query_archive(dir, E2E_ZIP, members, 4, CLOCK_STATS_SQL);
  e2e_assert_text(stats, "\"name\",\"value\",\"machine\",\"file\"\n");
  /* `info`, in processing order (files are numbered in archive order:
   * server.pb 1, server.json 2, phone.pb 3). The rendezvous path's offsets:
   * server BOOTTIME -> server REALTIME 1 700 000 002e9 - 1e9 =
   * +1 700 000 001e9; the rendezvous edge +0; phone REALTIME -> phone
   * BOOTTIME 1e9 - 1 700 000 001e9 = -1 700 000 000e9. */
  g_autofree char *info = info_placement(dir, E2E_ZIP, members, 4);
  e2e_assert_text(info,
      "placement:\n"
      "  file [3] machine 0 (proto): owns trace time\n"
      "    6: trace time itself; 1 event, 1 placed\n"
      "      path: 6 is the target clock itself\n"
      "  file [1] machine 1 (proto): REALTIME rendezvous\n"
      "    6(seq=0,tf=0,m=1): REALTIME rendezvous; 1 event, 1 placed\n"
      "      path: 6(seq=0,tf=0,m=1) -[1 snapshot, +1700000001000000000 ns]-> "
      "1(seq=0,tf=0,m=1) -[1 snapshot, +0 ns]-> 1 -[1 snapshot, -1700000000000000000 ns]-> 6\n"
      "  file [2] machine 1 (json): private timeline tied to trace time at zero offset\n"
      "    11(seq=0,tf=2,m=1): private timeline tied to trace time at zero offset; "
      "1 event, 1 placed\n"
      "      path: 11(seq=0,tf=2,m=1) -[1 snapshot, +0 ns]-> 6\n");
  g_free(phone.data);
  g_free(server.data);
  e2e_cleanup(dir);
}

/* §6.2 step 3 with two BOOTTIMEs (§6.4, fifth and sixth rows): when the
 * rendezvous is impossible the machines' BOOTTIMEs are overlaid ("same boot
 * instant" guess, zero offset).
 *  - Peer without a wall clock: phone.pb = rendezvous_phone (owns trace
 *    time), server.pb = boot_mono_only. server has no REALTIME: its
 *    BOOTTIME is tied to phone's at zero offset, so its instants keep their
 *    BOOTTIME: 1.1e9, 1.3e9, and MONOTONIC 7e8 = BOOTTIME 1.2e9.
 *  - Trace-time machine without a wall clock: phone.pb = systrace_spine
 *    (owns trace time), server.pb = rendezvous_server: phone has no REALTIME
 *    to meet, so the same overlay: "server slice" at 1.1e9, "proto marker"
 *    at 1.2e9.
 * No stat in either case: an assumption, not a failure. */
static void test_same_domain_overlays_two_boottimes(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes with_wall = e2e_proto_fixture("rendezvous_phone");
  e2e_bytes no_wall = e2e_proto_fixture("boot_mono_only");
  e2e_member members[] = {
      {"manifest.json", rendezvous_manifest, 0},
      {"phone.pb", with_wall.data, with_wall.len},
      {"server.pb", no_wall.data, no_wall.len},
  };
  g_autofree char *peer = e2e_query_archive(dir, E2E_ZIP, members, 3, SLICES_WITH_MACHINE_SQL);
  e2e_assert_text(peer, "\"ts\",\"name\",\"machine\"\n"
                        "1100000000,\"boot 1.1 s\",\"server\"\n"
                        "1100000000,\"phone slice\",\"phone\"\n"
                        "1200000000,\"mono 0.7 s\",\"server\"\n"
                        "1300000000,\"boot 1.3 s\",\"server\"\n");
  g_autofree char *peer_stats = e2e_query_archive(dir, E2E_ZIP, members, 3, CLOCK_STATS_SQL);
  e2e_assert_text(peer_stats, "\"name\",\"value\",\"machine\",\"file\"\n");
  /* `info`: server's BOOTTIME is the assumption; its MONOTONIC reaches
   * trace time through it (MONOTONIC -> BOOTTIME +5e8 by its snapshot). */
  g_autofree char *info = info_placement(dir, E2E_ZIP, members, 3);
  e2e_assert_text(info,
      "placement:\n"
      "  file [2] machine 0 (proto): owns trace time\n"
      "    6: trace time itself; 1 event, 1 placed\n"
      "      path: 6 is the target clock itself\n"
      "  file [3] machine 1 (proto): same clock domain as trace time, assumed at zero offset\n"
      "    6(seq=0,tf=0,m=1): same clock domain as trace time, assumed at zero offset; "
      "2 events, 2 placed\n"
      "      path: 6(seq=0,tf=0,m=1) -[1 snapshot, +0 ns]-> 6\n"
      "    3(seq=0,tf=0,m=1): through its machine's BOOTTIME, same clock domain as trace "
      "time, assumed at zero offset; 1 event, 1 placed\n"
      "      path: 3(seq=0,tf=0,m=1) -[1 snapshot, +500000000 ns]-> 6(seq=0,tf=0,m=1) "
      "-[1 snapshot, +0 ns]-> 6\n");

  e2e_bytes spine = e2e_proto_fixture("systrace_spine");
  e2e_bytes server = e2e_proto_fixture("rendezvous_server");
  members[1] = (e2e_member){"phone.pb", spine.data, spine.len};
  members[2] = (e2e_member){"server.pb", server.data, server.len};
  g_autofree char *owner = e2e_query_archive(dir, E2E_ZIP, members, 3, SLICES_WITH_MACHINE_SQL);
  e2e_assert_text(owner, "\"ts\",\"name\",\"machine\"\n"
                         "1100000000,\"server slice\",\"server\"\n"
                         "1200000000,\"proto marker\",\"phone\"\n");
  g_free(with_wall.data);
  g_free(no_wall.data);
  g_free(spine.data);
  g_free(server.data);
  e2e_cleanup(dir);
}

/* §6.2 step 4, §6.4 last row, §11: trace time is phone's REALTIME (the
 * manifest's claim, trace_time_clock_id 1). phone.pb's instant: BOOTTIME
 * 1.1e9 -> REALTIME 1 700 000 001e9 + 0.1e9 = 1 700 000 001 100 000 000.
 *  - server.pb (boot_mono_only) knows BOOTTIME and MONOTONIC only: no path
 *    to phone's REALTIME, no REALTIME of its own for a rendezvous, and
 *    BOOTTIME (6) is not REALTIME (1): unrelatable. Counted once for
 *    (server.pb, server) although two of its clocks (BOOTTIME, MONOTONIC)
 *    carry events; its three instants are dropped, each counted as
 *    clock_sync_failure_no_path (both clocks are in a snapshot, so known).
 *  - edge.systrace (MONOTONIC of machine edge, which no snapshot names):
 *    unrelatable too (3 is not 1), counted once for (edge.systrace, edge);
 *    its two events are dropped as clock_sync_failure_unknown_source_clock.
 * Only phone's instant is left in `slice`; the trace bounds are that one
 * instant, and an empty window [t, t] is reported as [t, t + 1]
 * (docs/sql-surface.md §13). */
static void test_unrelatable_domains_drop_and_count(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes phone = e2e_proto_fixture("rendezvous_phone");
  e2e_bytes server = e2e_proto_fixture("boot_mono_only");
  const e2e_member members[] = {
      {"manifest.json", unrelatable_manifest, 0},
      {"edge.systrace", edge_systrace, 0},
      {"server.pb", server.data, server.len},
      {"phone.pb", phone.data, phone.len},
  };
  g_autofree char *slices = e2e_query_archive(dir, E2E_TAR, members, 4, SLICES_WITH_MACHINE_SQL);
  e2e_assert_text(slices, "\"ts\",\"name\",\"machine\"\n"
                          "1700000001100000000,\"phone slice\",\"phone\"\n");
  g_autofree char *stats = e2e_query_archive(dir, E2E_TAR, members, 4, CLOCK_STATS_SQL);
  e2e_assert_text(stats, "\"name\",\"value\",\"machine\",\"file\"\n"
                         "\"clock_sync_failure_no_path\",3,\"server\",\"server.pb\"\n"
                         "\"clock_sync_failure_unknown_source_clock\",2,\"edge\",\"edge.systrace\"\n"
                         "\"clock_sync_unrelatable_clock_domains\",1,\"edge\",\"edge.systrace\"\n"
                         "\"clock_sync_unrelatable_clock_domains\",1,\"server\",\"server.pb\"\n");
  g_autofree char *clock = e2e_query_archive(dir, E2E_TAR, members, 4,
      "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n1\n");
  g_autofree char *bounds = e2e_query_archive(dir, E2E_TAR, members, 4, BOUNDS_SQL);
  e2e_assert_text(bounds, "\"start_ts\",\"end_ts\"\n"
                          "1700000001100000000,1700000001100000001\n");
  /* `info` (files in archive order: edge.systrace 2, server.pb 3,
   * phone.pb 4): each dropped clock with its count and the stat that
   * counted it. phone's BOOTTIME reaches REALTIME by its snapshot:
   * 1 700 000 001e9 - 1e9 = +1 700 000 000e9. */
  g_autofree char *info = info_placement(dir, E2E_TAR, members, 4);
  e2e_assert_text(info,
      "placement:\n"
      "  file [4] machine 0 (proto): trace time itself, or a real clock path to it\n"
      "    6: a real clock path to trace time; 1 event, 1 placed\n"
      "      path: 6 -[1 snapshot, +1700000000000000000 ns]-> 1\n"
      "  file [3] machine 1 (proto): unrelatable: its events were dropped\n"
      "    6(seq=0,tf=0,m=1): unrelatable: its events were dropped; 2 events, 0 placed, "
      "2 dropped (clock_sync_failure_no_path)\n"
      "      path: 6(seq=0,tf=0,m=1) -> 1: no path of at most 4 edges\n"
      "    3(seq=0,tf=0,m=1): unrelatable: its events were dropped; 1 event, 0 placed, "
      "1 dropped (clock_sync_failure_no_path)\n"
      "      path: 3(seq=0,tf=0,m=1) -> 1: no path of at most 4 edges\n"
      "  file [2] machine 2 (systrace): unrelatable: its events were dropped\n"
      "    3(seq=0,tf=0,m=2): unrelatable: its events were dropped; 2 events, 0 placed, "
      "2 dropped (clock_sync_failure_unknown_source_clock)\n"
      "      path: 3(seq=0,tf=0,m=2) -> 1: unknown source clock\n");
  g_free(phone.data);
  g_free(server.data);
  e2e_cleanup(dir);
}

/* §11: clock_sync_unrelatable_clock_domains is counted once per (file,
 * machine). relay.pb (two_machines_unsynced, remapped: embedded 0 ->
 * relay, 7 -> vm) has two machines, each with BOOTTIME and MONOTONIC only;
 * trace time is phone's REALTIME (manifest). Each machine's BOOTTIME is
 * unrelatable (no path, no wall clock, 6 is not 1): one count for (relay.pb,
 * relay) and one for (relay.pb, vm), and each machine's instant is dropped
 * as clock_sync_failure_no_path. Only phone's instant stays (BOOTTIME 1.1e9
 * -> REALTIME 1 700 000 001 100 000 000). */
static void test_unrelatable_counted_per_machine_of_one_file(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes phone = e2e_proto_fixture("rendezvous_phone");
  e2e_bytes relay = e2e_proto_fixture("two_machines_unsynced");
  const e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1,\n"
       " \"trace_time\": {\"clock\": \"REALTIME\", \"file\": \"phone.pb\"},\n"
       " \"files\": [\n"
       " {\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}},\n"
       " {\"path\": \"relay.pb\", \"machines\": [{\"id\": 0, \"name\": \"relay\"},"
       " {\"id\": 7, \"name\": \"vm\"}]}]}}\n",
       0},
      {"relay.pb", relay.data, relay.len},
      {"phone.pb", phone.data, phone.len},
  };
  g_autofree char *slices = e2e_query_archive(dir, E2E_TAR, members, 3, SLICES_WITH_MACHINE_SQL);
  e2e_assert_text(slices, "\"ts\",\"name\",\"machine\"\n"
                          "1700000001100000000,\"phone slice\",\"phone\"\n");
  g_autofree char *stats = e2e_query_archive(dir, E2E_TAR, members, 3, CLOCK_STATS_SQL);
  e2e_assert_text(stats, "\"name\",\"value\",\"machine\",\"file\"\n"
                         "\"clock_sync_failure_no_path\",1,\"relay\",\"relay.pb\"\n"
                         "\"clock_sync_failure_no_path\",1,\"vm\",\"relay.pb\"\n"
                         "\"clock_sync_unrelatable_clock_domains\",1,\"relay\",\"relay.pb\"\n"
                         "\"clock_sync_unrelatable_clock_domains\",1,\"vm\",\"relay.pb\"\n");
  g_free(phone.data);
  g_free(relay.data);
  e2e_cleanup(dir);
}

/* Three X slices of 1 µs on one thread, at 1000, 1500 and 2000 µs. */
static const char early_json[] =
    "{\"traceEvents\": [\n"
    " {\"ph\":\"X\",\"pid\":2,\"tid\":2,\"ts\":1000,\"dur\":1,\"name\":\"at 1000 us\"},\n"
    " {\"ph\":\"X\",\"pid\":2,\"tid\":2,\"ts\":1500,\"dur\":1,\"name\":\"at 1500 us\"},\n"
    " {\"ph\":\"X\",\"pid\":2,\"tid\":2,\"ts\":2000,\"dur\":1,\"name\":\"at 2000 us\"}]}\n";

/* §7 negative timestamps: app.json PINned onto phone.pb's BOOTTIME with
 * offset_ns -1 500 000 (app reads T when phone reads T - 1.5 ms); phone.pb
 * (systrace_spine) owns trace time, its BOOTTIME. The edge is
 * {app: max(0, 1 500 000) = 1 500 000, phone BOOTTIME: max(0, -1 500 000)
 * = 0}, a constant offset of -1 500 000 ns:
 *  - 1000 µs = 1 000 000 -> -500 000 < 0: dropped by the sorter, counted
 *    once in the global trace_sorter_negative_timestamp_dropped (no machine,
 *    no file);
 *  - 1500 µs -> 0: kept (only < 0 is dropped);
 *  - 2000 µs -> 500 000.
 * Trace bounds: from 0 to the proto marker at 1.2e9. */
static void test_negative_offset_drops_events_before_time_zero(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes phone = e2e_proto_fixture("systrace_spine");
  const e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"phone.pb\"},\n"
       " {\"path\": \"app.json\", \"clocks\": {\"sync_to\": {\"file\": \"phone.pb\","
       " \"clock\": \"BOOTTIME\"}, \"offset_ns\": -1500000}}]}}\n",
       0},
      {"app.json", early_json, 0},
      {"phone.pb", phone.data, phone.len},
  };
  g_autofree char *slices = e2e_query_archive(dir, E2E_ZIP, members, 3,
      "SELECT ts, dur, name FROM slice ORDER BY ts");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"name\"\n"
                          "0,1000,\"at 1500 us\"\n"
                          "500000,1000,\"at 2000 us\"\n"
                          "1200000000,0,\"proto marker\"\n");
  g_autofree char *stats = e2e_query_archive(dir, E2E_ZIP, members, 3,
      "SELECT name, value, machine_id, trace_id FROM stats WHERE value > 0 AND "
      "(name LIKE 'clock_sync%' OR name LIKE 'trace_sorter%')");
  e2e_assert_text(stats, "\"name\",\"value\",\"machine_id\",\"trace_id\"\n"
                         "\"trace_sorter_negative_timestamp_dropped\",1,\"[NULL]\",\"[NULL]\"\n");
  g_autofree char *bounds = e2e_query_archive(dir, E2E_ZIP, members, 3, BOUNDS_SQL);
  e2e_assert_text(bounds, "\"start_ts\",\"end_ts\"\n0,1200000000\n");
  /* `info` (manifest 1, app.json 2, phone.pb 3): app.json's private clock
   * reaches trace time by the PIN edge, -1 500 000 ns; one of its three
   * events is dropped before time 0. */
  g_autofree char *info = info_placement(dir, E2E_ZIP, members, 3);
  e2e_assert_text(info,
      "placement:\n"
      "  file [3] machine 0 (proto): owns trace time\n"
      "    6: trace time itself; 1 event, 1 placed\n"
      "      path: 6 is the target clock itself\n"
      "  file [2] machine 0 (json): trace time itself, or a real clock path to it\n"
      "    11(seq=0,tf=2,m=0): a real clock path to trace time; 3 events, 2 placed, "
      "1 dropped (trace_sorter_negative_timestamp_dropped)\n"
      "      path: 11(seq=0,tf=2,m=0) -[1 snapshot, -1500000 ns]-> 6\n");
  g_free(phone.data);
  e2e_cleanup(dir);
}

static const char mixed_manifest[] =
    "{\"perfetto_manifest\": {\"version\": 1,\n"
    " \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"relay.pb\", \"machine\": \"relay\"},\n"
    " \"files\": [\n"
    " {\"path\": \"relay.pb\", \"machines\": [{\"id\": 0, \"name\": \"relay\"},"
    " {\"id\": 7, \"name\": \"vm\"}]},\n"
    " {\"path\": \"vm.json\", \"machine\": {\"name\": \"vm\"}},\n"
    " {\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"},\n"
    "  \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 300,\n"
    "   \"sync_to\": {\"file\": \"relay.pb\", \"machine\": \"relay\", \"clock\": \"BOOTTIME\"}}},\n"
    " {\"path\": \"app.json\", \"machine\": {\"name\": \"phone\"},\n"
    "  \"clocks\": {\"offset_ns\": 200,\n"
    "   \"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"}}}]}}\n";

/* Issue 4's mixed archive, as a ZIP (manifest last, still applied first)
 * and as a TAR (manifest first, as a stream needs): a multi-machine proto
 * remapped with `machines` (relay.pb = machines.pb: embedded 0 -> relay,
 * 7 -> vm) next to JSON files attributed with `machine`, and a chain of
 * `sync_to` offsets across formats: phone.pb (systrace_spine) RELATEd to
 * relay's BOOTTIME +300, app.json PINned to phone's BOOTTIME +200.
 * Trace time: the manifest's claim, relay's BOOTTIME (relay.pb would sort
 * after phone.pb). Machine rows in `files` order: relay 2^32, vm 2^32 + 1,
 * phone 2^32 + 2.
 *  - relay.pb: "host work" 1 000 200 (relay); vm (remote_clock_sync):
 *    "vm work" 1 000 925, "vm thread work" 1 001 025;
 *  - vm.json: clockless, tied at zero offset: 1 µs -> 1000 (vm);
 *  - phone.pb: marker at phone BOOTTIME 1.2e9 -> 1 200 000 300 (phone);
 *  - app.json: 2000 µs -> phone BOOTTIME 2 000 200 -> 2 000 500: the
 *    offsets add up, 300 + 200 (phone). */
static void test_mixed_archive_in_zip_and_tar(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes relay = e2e_proto_fixture("machines");
  e2e_bytes phone = e2e_proto_fixture("systrace_spine");
  g_autofree char *vm = e2e_json_slice("json on vm", 70, 72, 1);
  g_autofree char *app = e2e_json_slice("app", 5, 6, 2000);
  const e2e_member zip_members[] = {
      {"app.json", app, 0},
      {"phone.pb", phone.data, phone.len},
      {"vm.json", vm, 0},
      {"relay.pb", relay.data, relay.len},
      {"manifest.json", mixed_manifest, 0},
  };
  e2e_member tar_members[5];
  tar_members[0] = zip_members[4];
  memcpy(&tar_members[1], zip_members, 4 * sizeof *zip_members);
  static const char expected[] =
      "\"ts\",\"name\",\"machine\"\n"
      "1000,\"json on vm\",\"vm\"\n"
      "1000200,\"host work\",\"relay\"\n"
      "1000925,\"vm work\",\"vm\"\n"
      "1001025,\"vm thread work\",\"vm\"\n"
      "2000500,\"app\",\"phone\"\n"
      "1200000300,\"proto marker\",\"phone\"\n";
  g_autofree char *in_zip = e2e_query_archive(dir, E2E_ZIP, zip_members, 5, SLICES_WITH_MACHINE_SQL);
  e2e_assert_text(in_zip, expected);
  g_autofree char *in_tar = e2e_query_archive(dir, E2E_TAR, tar_members, 5, SLICES_WITH_MACHINE_SQL);
  e2e_assert_text(in_tar, expected);
  g_autofree char *machines = e2e_query_archive(dir, E2E_TAR, tar_members, 5,
      "SELECT id, raw_id, name FROM machine ORDER BY id");
  e2e_assert_text(machines, "\"id\",\"raw_id\",\"name\"\n"
                            "0,4294967296,\"relay\"\n"
                            "1,4294967297,\"vm\"\n"
                            "2,4294967298,\"phone\"\n");
  g_autofree char *stats = e2e_query_archive(dir, E2E_TAR, tar_members, 5, CLOCK_STATS_SQL);
  e2e_assert_text(stats, "\"name\",\"value\",\"machine\",\"file\"\n");
  g_free(relay.data);
  g_free(phone.data);
  e2e_cleanup(dir);
}

/* Primary vs isolated files (docs/clock-model.md §2): the primary file of a
 * machine is the first trace file *processed* for it, whatever order a
 * stream delivers the files in. A TAR delivers 2_b.pb (capture_b) before
 * 1_a.pb (capture_a), both on the host machine; processing order is by
 * name, so 1_a.pb is the primary: its snapshot {BOOTTIME 1e9, REALTIME R0}
 * (R0 = 1.7e18) is on the canonical nodes and it claims BOOTTIME as trace
 * time; 2_b.pb isolates at its snapshot {BOOTTIME 5e9, REALTIME R0 + 10 s}.
 * The values are those of the same two captures in processing order
 * (test_e2e_manifest.c, two-captures-on-one-machine):
 *  - 1_a.pb: R0 + 0.1 s -> 1e9 + 0.1e9; R0 + 20 s -> 1e9 + 20e9;
 *  - 2_b.pb after its snapshot, on its own nodes: R0 + 6 s -> 5e9 - 4e9,
 *    R0 + 10.2 s -> 5e9 + 0.2e9;
 *  - 2_b.pb before its snapshot, through the canonical REALTIME, which
 *    only the primary's snapshot relates: R0 + 30 s -> 1e9 + 30e9 =
 *    31 000 000 000 (had the first *delivered* file been the primary, the
 *    canonical REALTIME would hold b's snapshot: 5e9 + 20e9);
 *  - that mix is counted once for 2_b.pb (clock_sync_mixed_clock_sources).
 * The same two files as root inputs, 2_b.pb first: it is trace file 0,
 * whose id is also the canonical nodes' trace_file_id, and must still
 * isolate (same values).
 * capture_b alone is its machine's primary: its event before the snapshot
 * and those after it are all on the canonical REALTIME, which its snapshot
 * relates to BOOTTIME (trace time, its claim): R0 + 30 s -> 5e9 + 20e9 =
 * 25 000 000 000, the others as above; no mix is counted. */
static void test_primary_file_is_first_in_processing_order(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes a = e2e_proto_fixture("capture_a");
  e2e_bytes b = e2e_proto_fixture("capture_b");
  const e2e_member members[] = {{"2_b.pb", b.data, b.len}, {"1_a.pb", a.data, a.len}};
  g_autofree char *slices = e2e_query_archive(dir, E2E_TAR, members, 2,
      "SELECT ts, name FROM slice ORDER BY ts");
  e2e_assert_text(slices, "\"ts\",\"name\"\n"
                          "1000000000,\"b at R0 + 6 s\"\n"
                          "1100000000,\"a early\"\n"
                          "5200000000,\"b at R0 + 10.2 s\"\n"
                          "21000000000,\"a late\"\n"
                          "31000000000,\"b before its snapshot\"\n");
  g_autofree char *stats = e2e_query_archive(dir, E2E_TAR, members, 2, CLOCK_STATS_SQL);
  e2e_assert_text(stats, "\"name\",\"value\",\"machine\",\"file\"\n"
                         "\"clock_sync_mixed_clock_sources\",1,\"[NULL]\",\"2_b.pb\"\n");
  g_autofree char *pb = e2e_write_file(dir, "2_b.pb", b.data, b.len);
  g_autofree char *pa = e2e_write_file(dir, "1_a.pb", a.data, a.len);
  const char *roots[] = {"2_b.pb", "1_a.pb", NULL};
  g_autofree char *root_slices = e2e_query_in(dir, roots, "SELECT ts, name FROM slice ORDER BY ts");
  e2e_assert_text(root_slices, slices);
  g_autofree char *root_stats = e2e_query_in(dir, roots, CLOCK_STATS_SQL);
  e2e_assert_text(root_stats, stats);
  const char *alone[] = {"2_b.pb", NULL};
  g_autofree char *alone_slices = e2e_query_in(dir, alone, "SELECT ts, name FROM slice ORDER BY ts");
  e2e_assert_text(alone_slices, "\"ts\",\"name\"\n"
                                "1000000000,\"b at R0 + 6 s\"\n"
                                "5200000000,\"b at R0 + 10.2 s\"\n"
                                "25000000000,\"b before its snapshot\"\n");
  g_autofree char *alone_stats = e2e_query_in(dir, alone, CLOCK_STATS_SQL);
  e2e_assert_text(alone_stats, "\"name\",\"value\",\"machine\",\"file\"\n");
  g_free(a.data);
  g_free(b.data);
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/placement/realtime-rendezvous/between-machines-of-different-files",
                  test_realtime_rendezvous_between_machines_of_different_files);
  g_test_add_func("/e2e/placement/same-domain/two-boottimes-overlay-without-a-rendezvous",
                  test_same_domain_overlays_two_boottimes);
  g_test_add_func("/e2e/placement/unrelatable/events-dropped-and-counted-once-per-file-and-machine",
                  test_unrelatable_domains_drop_and_count);
  g_test_add_func("/e2e/placement/unrelatable/counted-once-per-machine-of-a-multi-machine-file",
                  test_unrelatable_counted_per_machine_of_one_file);
  g_test_add_func("/e2e/placement/negative-offset/events-before-time-zero-are-dropped",
                  test_negative_offset_drops_events_before_time_zero);
  g_test_add_func("/e2e/placement/mixed-archive/proto-json-manifest-in-zip-and-tar",
                  test_mixed_archive_in_zip_and_tar);
  g_test_add_func("/e2e/placement/primary-file/first-in-processing-order-not-first-delivered",
                  test_primary_file_is_first_in_processing_order);
  return g_test_run();
}
