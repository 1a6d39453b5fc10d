/*
 * End-to-end: the CLI on Perfetto protobuf traces: TrackEvents, interning,
 * clocks and machines, process trees, system info, stack profiles, system
 * traces, compressed packets and the real traces. Fixtures are the text
 * protobuf files of tests/data/proto/, encoded at build time; expected
 * values are worked out in the fixtures' comments and below. Beside it:
 * test_e2e_proto_legacy.c (legacy TrackEvents and their flows) and
 * test_e2e_proto_tracks.c (how descriptor tracks merge and are named).
 */
#include <glib.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

#include "corpus.h"
#include "e2e_support.h"

/* The CSV text of `sql` on the built fixture tests/data/proto/NAME. */
static char *query(const char *name, const char *sql) {
  return e2e_query_proto_fixture(name, sql);
}

/* Point 6: every TrackEvent feature shows up in a query result. No clock
 * snapshot: raw times are trace time. */
static void test_track_events_reach_every_table(void) {
  g_autofree char *slices = query("track_events",
      "SELECT s.id, s.ts, s.dur, s.depth, s.category, s.name, t.type, t.name AS track, "
      "s.thread_ts FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.id");
  e2e_assert_text(slices,
      "\"id\",\"ts\",\"dur\",\"depth\",\"category\",\"name\",\"type\",\"track\",\"thread_ts\"\n"
      "0,1000,1000,0,\"net,io\",\"load\",\"thread_execution\",\"[NULL]\",\"[NULL]\"\n"
      "1,1500,0,0,\"[NULL]\",\"send\",\"process_merged_track_event\",\"Socket 1\",\"[NULL]\"\n"
      "2,2300,0,0,\"[NULL]\",\"tick\",\"thread_track_event\",\"main (own track)\",\"[NULL]\"\n"
      "3,2400,0,0,\"[NULL]\",\"tock\",\"thread_track_event\",\"main (own track)\",\"[NULL]\"\n"
      "4,2500,0,0,\"[NULL]\",\"global\",\"global_merged_track_event\",\"Default Track\",\"[NULL]\"\n"
      "5,2600,0,0,\"[NULL]\",\"on the default thread\",\"thread_execution\",\"[NULL]\",\"[NULL]\"\n"
      "6,2700,0,0,\"[NULL]\",\"explicit uuid 0\",\"global_merged_track_event\",\"Default Track\",\"[NULL]\"\n"
      "7,2800,0,0,\"[NULL]\",\"via defaults\",\"process_merged_track_event\",\"Network\",\"[NULL]\"\n"
      "8,2900,0,0,\"[NULL]\",\"early\",\"global_merged_track_event\",\"Late\",\"[NULL]\"\n"
      "9,3100,0,0,\"[NULL]\",\"corr\",\"thread_execution\",\"[NULL]\",7000\n"
      "10,3500,0,0,\"[NULL]\",\"orphan\",\"global_merged_track_event\",\"orphan\",\"[NULL]\"\n");

  g_autofree char *flows = query("track_events",
      "SELECT f.trace_id, o.name, i.name FROM flow f JOIN slice o ON o.id = f.slice_out "
      "JOIN slice i ON i.id = f.slice_in");
  e2e_assert_text(flows, "\"trace_id\",\"name\",\"name\"\n77,\"load\",\"send\"\n");

  /* Begin and end args merge; nested dicts and arrays flatten. */
  g_autofree char *args = query("track_events",
      "SELECT key, flat_key, display_value, value_type FROM args WHERE arg_set_id = "
      "(SELECT arg_set_id FROM slice WHERE name = 'load') ORDER BY id");
  e2e_assert_text(args,
      "\"key\",\"flat_key\",\"display_value\",\"value_type\"\n"
      "\"debug.url\",\"debug.url\",\"https://example.org\",\"string\"\n"
      "\"debug.req.method\",\"debug.req.method\",\"GET\",\"string\"\n"
      "\"debug.req.headers[0]\",\"debug.req.headers\",\"a\",\"string\"\n"
      "\"debug.req.headers[1]\",\"debug.req.headers\",\"2\",\"int\"\n"
      "\"debug.ok\",\"debug.ok\",\"true\",\"bool\"\n"
      "\"debug.ratio\",\"debug.ratio\",\"0.5\",\"real\"\n"
      "\"debug.ptr\",\"debug.ptr\",\"0x1000\",\"pointer\"\n"
      "\"debug.big\",\"debug.big\",\"18446744073709551615\",\"uint\"\n"
      "\"debug.legacy\",\"debug.legacy\",\"{\"\"a\"\":1}\",\"json\"\n"
      "\"correlation_id\",\"correlation_id\",\"tp:#5\",\"string\"\n"
      "\"debug.bytes\",\"debug.bytes\",\"512\",\"int\"\n");
  g_autofree char *correlations = query("track_events",
      "SELECT s.name, a.display_value FROM slice s JOIN args a ON a.arg_set_id = s.arg_set_id "
      "WHERE a.key = 'correlation_id' ORDER BY s.id");
  e2e_assert_text(correlations, "\"name\",\"display_value\"\n\"load\",\"tp:#5\"\n"
                                "\"send\",\"req-1\"\n\"corr\",\"interned-corr\"\n");

  /* Descriptor hierarchy and hints: Socket 1 is a child of Network. */
  g_autofree char *tracks = query("track_events",
      "SELECT t.id, t.name, t.type, t.parent_id, t.track_group_id, (SELECT group_concat(key "
      "|| '=' || display_value, ';') FROM args a WHERE a.arg_set_id = t.source_arg_set_id) "
      "AS source FROM track t ORDER BY t.id");
  /* Track 0 is the browser's process track (uuid 100): no event is on it,
   * but trace_processor makes it with its first child, the thread's.
   * Tracks 0-4 are made as the file is read (roots and counters, which
   * never merge); the merged ones (docs/formats.md §1.9) after, in the
   * order of the events that need them: at 1500 "send" needs Socket 1,
   * whose parent Network's first track is made before it (Network's own
   * slice at 2800 then takes that free track), then the Default Track
   * (2500), Late (2900) and the undescribed uuid 500 (3500), named after
   * its first event. Group ids follow the same order; Socket 1 merges by
   * key, so its descriptor's merge fields are not args. */
  e2e_assert_text(tracks,
      "\"id\",\"name\",\"type\",\"parent_id\",\"track_group_id\",\"source\"\n"
      "0,\"[NULL]\",\"process_track_event\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "1,\"[NULL]\",\"thread_execution\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "2,\"Memory\",\"global_counter_track_event\",\"[NULL]\",\"[NULL]\","
      "\"y_axis_share_key=mem\"\n"
      "3,\"main (own track)\",\"thread_track_event\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "4,\"Allocated\",\"thread_counter_track_event\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "5,\"Network\",\"process_merged_track_event\",\"[NULL]\",0,"
      "\"description=requests in flight;child_ordering=explicit\"\n"
      "6,\"Socket 1\",\"process_merged_track_event\",5,1,\"sibling_order_rank=2\"\n"
      "7,\"Default Track\",\"global_merged_track_event\",\"[NULL]\",2,\"[NULL]\"\n"
      "8,\"Late\",\"global_merged_track_event\",\"[NULL]\",3,\"[NULL]\"\n"
      "9,\"orphan\",\"global_merged_track_event\",\"[NULL]\",4,\"[NULL]\"\n");

  /* Counters: int and double values; Allocated is incremental in KiB. */
  g_autofree char *counters = query("track_events",
      "SELECT c.ts, c.value, t.name, t.unit FROM counter c JOIN counter_track t "
      "ON c.track_id = t.id ORDER BY c.id");
  e2e_assert_text(counters,
      "\"ts\",\"value\",\"name\",\"unit\"\n"
      "2100,4096.000000,\"Memory\",\"bytes\"\n"
      "2200,2.500000,\"Memory\",\"bytes\"\n"
      "2300,2048.000000,\"Allocated\",\"KiB\"\n"
      "2300,100.000000,\"Memory\",\"bytes\"\n"
      "2400,5120.000000,\"Allocated\",\"KiB\"\n");

  g_autofree char *owners = query("track_events",
      "SELECT p.pid, p.name, p.cmdline, t.tid, t.name FROM thread t JOIN process p "
      "USING (upid) WHERE t.tid != 0");
  e2e_assert_text(owners, "\"pid\",\"name\",\"cmdline\",\"tid\",\"name\"\n"
                          "10,\"browser\",\"/bin/browser --flag\",10,\"[NULL]\"\n"
                          "10,\"browser\",\"/bin/browser --flag\",11,\"main\"\n");

  g_autofree char *stats = query("track_events",
      "SELECT name, value FROM stats WHERE value > 0 AND name LIKE 'track_%' ORDER BY name");
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         "\"track_descriptor_conflicting_reservation\",1\n"
                         "\"track_descriptor_missing_uuid\",1\n"
                         "\"track_event_counter_missing_value\",1\n"
                         "\"track_event_extra_counter_values_without_track\",1\n"
                         "\"track_event_parser_errors\",2\n");
}

/* Thread time sampled through a thread_time counter track: the slice
 * gets thread_ts 5000 and thread_dur 9000 - 5000. */
static void test_thread_time_counter(void) {
  g_autofree char *slices = query("thread_time", "SELECT ts, dur, name, thread_ts, thread_dur FROM slice");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"name\",\"thread_ts\",\"thread_dur\"\n"
                          "100,200,\"work\",5000,4000\n");
}

/* Point 5: two sequences, sequence 2 loses its state. */
static void test_interning_with_lost_state(void) {
  g_autofree char *slices = query("interning", "SELECT ts, dur, category, name FROM slice ORDER BY id");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"category\",\"name\"\n"
                          "100,30,\"cat1,cat2\",\"alpha\"\n"
                          "110,0,\"unknown(9)\",\"beta\"\n"
                          "125,0,\"[NULL]\",\"inline while invalid\"\n"
                          "140,0,\"[NULL]\",\"gamma\"\n"
                          "145,0,\"[NULL]\",\"delta\"\n"
                          "146,0,\"[NULL]\",\"delta\"\n"
                          "150,0,\"[NULL]\",\"sequence 0\"\n");
  g_autofree char *stats = query("interning",
      "SELECT name, value FROM stats WHERE value > 0 ORDER BY name");
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         "\"interned_data_missing_sequence_id\",1\n"
                         "\"interned_data_skipped_incremental_state_invalid\",1\n"
                         "\"packet_skipped_seq_needs_incremental_state_invalid\",2\n");
}

/* Point 3: default clock, units, sequence-scoped and incremental clocks.
 * Trace time is BOOTTIME (the first claim). MONOTONIC 700 -> 1000 + 300;
 * seq 2's clock 64 is 3000 ns at BOOTTIME 5000, deltas of 2 and 5 µs ->
 * 7000, 12000; seq 3's clock 64 at 100 = BOOTTIME 6000 -> 150 is 6050;
 * MONOTONIC 9500 uses the later snapshot (9400 = 10000) -> 10100. The
 * packet at 500 came before any clock was known: it sits on the file's
 * private timeline, which is tied to trace time at zero offset, so its raw
 * value is its trace time, as in trace_processor. */
static void test_clocks_land_on_boottime(void) {
  g_autofree char *slices = query("clocks", "SELECT ts, name FROM slice ORDER BY ts");
  e2e_assert_text(slices, "\"ts\",\"name\"\n"
                          "500,\"before any snapshot\"\n"
                          "1300,\"on monotonic\"\n"
                          "2000,\"on the default clock\"\n"
                          "6050,\"on sequence 3's clock 64\"\n"
                          "7000,\"delta 2 us\"\n"
                          "10100,\"on the new default\"\n"
                          "12000,\"delta 5 us\"\n");
  g_autofree char *clock = query("clocks",
      "SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'");
  e2e_assert_text(clock, "\"int_value\"\n6\n");
  g_autofree char *stats = query("clocks",
      "SELECT name, value FROM stats WHERE name IN ('invalid_clock_snapshots', "
      "'track_event_invalid_timestamp', 'track_event_missing_timestamp', "
      "'clock_sync_failure_unknown_source_clock') ORDER BY name");
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         /* only "no sequence": clock 64 of no sequence */
                         "\"clock_sync_failure_unknown_source_clock\",1\n"
                         "\"invalid_clock_snapshots\",2\n"
                         "\"track_event_invalid_timestamp\",1\n"
                         "\"track_event_missing_timestamp\",1\n");
}

/* Point 4: machines 0 and 7; the vm's BOOTTIME 5375 is the host's 1000300
 * (remote_clock_sync offset -994925), so vm 6000 lands at 1000925. */
static void test_remote_clock_sync_places_vm_events(void) {
  g_autofree char *slices = query("machines",
      "SELECT s.ts, s.name, m.raw_id FROM slice s JOIN track t ON s.track_id = t.id "
      "JOIN machine m ON t.machine_id = m.id ORDER BY s.ts");
  e2e_assert_text(slices, "\"ts\",\"name\",\"raw_id\"\n"
                          "1000200,\"host work\",0\n"
                          "1000925,\"vm work\",7\n"
                          "1001025,\"vm thread work\",7\n");
  g_autofree char *threads = query("machines",
      "SELECT t.tid, t.name, m.raw_id FROM thread t JOIN machine m ON t.machine_id = m.id "
      "WHERE t.tid != 0");
  /* Thread 70 is process 70's main thread, made with the process
   * (docs/sql-surface.md §10). */
  e2e_assert_text(threads,
                  "\"tid\",\"name\",\"raw_id\"\n70,\"[NULL]\",7\n71,\"vcpu\",7\n");
}

/* Point 4, adoption: every packet of adopted_machine carries machine 7
 * and none is the host's, so the one machine row is relabelled raw_id 7
 * and holds the slice's track and thread; its remote_clock_sync, now with
 * itself, adds no edge. machines.pb has host data before
 * machine 7: two rows. */
static void test_remote_only_file_adopts_host_row(void) {
  g_autofree char *machines = query("adopted_machine", "SELECT id, raw_id FROM machine");
  e2e_assert_text(machines, "\"id\",\"raw_id\"\n0,7\n");
  g_autofree char *slices = query("adopted_machine",
      "SELECT s.ts, s.name, tm.raw_id, th.tid, th.name, hm.raw_id FROM slice s "
      "JOIN thread_track tt ON s.track_id = tt.id JOIN machine tm ON tt.machine_id = tm.id "
      "JOIN thread th ON th.utid = tt.utid JOIN machine hm ON th.machine_id = hm.id");
  e2e_assert_text(slices, "\"ts\",\"name\",\"raw_id\",\"tid\",\"name\",\"raw_id\"\n"
                          "1200,\"remote work\",7,71,\"vcpu\",7\n");
  g_autofree char *stats = query("adopted_machine",
      "SELECT name, value FROM stats WHERE value > 0 AND name LIKE '%clock%'");
  e2e_assert_text(stats, "\"name\",\"value\"\n");
  g_autofree char *both = query("machines", "SELECT id, raw_id FROM machine ORDER BY id");
  e2e_assert_text(both, "\"id\",\"raw_id\"\n0,0\n1,7\n");
}

/* The host row is shared by the files without a manifest machine: once an
 * earlier file put data on it, a later remote-only file gets its own row. */
static void test_host_data_of_another_file_prevents_adoption(void) {
  g_autofree char *host = e2e_proto_fixture_path("track_events");
  g_autofree char *remote = e2e_proto_fixture_path("adopted_machine");
  const char *inputs[] = {host, remote, NULL};
  g_autofree char *machines = e2e_query(inputs, "SELECT id, raw_id FROM machine ORDER BY id");
  e2e_assert_text(machines, "\"id\",\"raw_id\"\n0,0\n1,7\n");
  g_autofree char *slices = e2e_query(inputs,
      "SELECT m.raw_id FROM slice s JOIN track t ON s.track_id = t.id "
      "JOIN machine m ON t.machine_id = m.id WHERE s.name = 'remote work'");
  e2e_assert_text(slices, "\"raw_id\"\n7\n");
}

/* android_appid is the uid's app part, uid % 100000 (Android's
 * UserHandle.PER_USER_RANGE), as trace_processor sets it with the uid:
 * 1010123 is app 10123 of user 10; no uid, no app id. */
static void test_process_tree_fills_processes(void) {
  g_autofree char *processes = query("process_tree",
      "SELECT p.pid, p.name, p.cmdline, parent.pid AS ppid, p.uid, p.android_appid "
      "FROM process p "
      "LEFT JOIN process parent ON parent.upid = p.parent_upid WHERE p.pid != 0 ORDER BY p.pid");
  e2e_assert_text(processes,
                  "\"pid\",\"name\",\"cmdline\",\"ppid\",\"uid\",\"android_appid\"\n"
                  "1,\"/sbin/init\",\"/sbin/init\",0,0,0\n"
                  "42,\"/usr/bin/app\",\"/usr/bin/app --serve 8080\",1,1010123,10123\n"
                  "43,\"worker\",\"worker pool\",1,\"[NULL]\",\"[NULL]\"\n"
                  "44,\"kworker/0:1\",\"kworker/0:1\",1,\"[NULL]\",\"[NULL]\"\n");
}

/* SystemInfo fills the machine rows of the host and of machine 7;
 * 7.6e9 bytes of RAM round to 8 GB. */
static void test_system_info_fills_machine_rows(void) {
  g_autofree char *machines = query("system_info",
      "SELECT raw_id, name, sysname, release, arch, num_cpus, android_sdk_version, "
      "system_ram_gb FROM machine ORDER BY raw_id");
  e2e_assert_text(machines,
      "\"raw_id\",\"name\",\"sysname\",\"release\",\"arch\",\"num_cpus\","
      "\"android_sdk_version\",\"system_ram_gb\"\n"
      "0,\"phone\",\"Linux\",\"6.1.0\",\"x86_64\",8,34,8\n"
      "7,\"[NULL]\",\"Linux\",\"5.15.0\",\"aarch64\",2,\"[NULL]\",\"[NULL]\"\n");
  g_autofree char *metadata = query("system_info",
      "SELECT name, coalesce(str_value, int_value) FROM metadata WHERE name LIKE 'system_%' "
      "ORDER BY name");
  e2e_assert_text(metadata, "\"name\",\"coalesce(str_value, int_value)\"\n"
                            "\"system_machine\",\"x86_64\"\n"
                            "\"system_name\",\"Linux\"\n"
                            "\"system_ram_bytes\",7600000000\n"
                            "\"system_ram_gb\",8\n"
                            "\"system_release\",\"6.1.0\"\n"
                            "\"system_version\",\"#1 SMP\"\n");
}

/* The real traces import without errors. tokio's counts come from its
 * README (227 begin/end pairs, 8 instants; 9 thread descriptors of one
 * process); the clock snapshot packets per file too (4, 1, 2, 2). */
/* Point 5 (stack profiles) and point 6 (callstacks): interned mappings,
 * frames and callstacks become stack_profile_* rows, PerfSamples become
 * perf_sample rows (as in trace_processor; none in cpu_profile_stack_sample),
 * TrackEvent callstacks a "callsite_id" slice arg, which
 * __intrinsic_track_event_callstacks reads. Expected ids are worked out in
 * stacks.textproto. */
static void test_stack_profiles(void) {
  g_autofree char *mappings = query("stacks",
      "SELECT id, build_id, exact_offset, start, end, load_bias, name FROM stack_profile_mapping");
  e2e_assert_text(mappings,
      "\"id\",\"build_id\",\"exact_offset\",\"start\",\"end\",\"load_bias\",\"name\"\n"
      "0,\"01ab\",256,4096,8192,64,\"/usr/bin/app\"\n"
      "1,\"[NULL]\",0,0,0,0,\"/system/lib\"\n");
  g_autofree char *frames = query("stacks",
      "SELECT id, name, mapping, rel_pc FROM stack_profile_frame ORDER BY id");
  e2e_assert_text(frames, "\"id\",\"name\",\"mapping\",\"rel_pc\"\n"
                          "0,\"main\",0,16\n1,\"work\",0,32\n2,\"leaf\",0,48\n"
                          "3,\"outer\",\"[NULL]\",0\n4,\"inner\",\"[NULL]\",0\n"
                          "5,\"other\",1,0\n");
  g_autofree char *callsites = query("stacks",
      "SELECT c.id, c.depth, c.parent_id, f.name FROM stack_profile_callsite c "
      "JOIN stack_profile_frame f ON f.id = c.frame_id ORDER BY c.id");
  e2e_assert_text(callsites, "\"id\",\"depth\",\"parent_id\",\"name\"\n"
                             "0,0,\"[NULL]\",\"main\"\n1,1,0,\"work\"\n2,2,1,\"leaf\"\n"
                             "3,0,\"[NULL]\",\"outer\"\n4,1,3,\"inner\"\n"
                             "5,0,\"[NULL]\",\"other\"\n");
  /* Sequence 2's sample at 3100 needed the state its loss dropped; the one
   * at 3300 names a callstack of the previous generation. */
  g_autofree char *samples = query("stacks",
      "SELECT s.ts, s.cpu, s.callsite_id, t.tid, p.pid, s.cpu_mode, "
      "s.unwind_error, s.perf_session_id FROM perf_sample s "
      "JOIN thread t USING (utid) JOIN process p USING (upid) ORDER BY s.ts");
  e2e_assert_text(samples,
                  "\"ts\",\"cpu\",\"callsite_id\",\"tid\",\"pid\",\"cpu_mode\","
                  "\"unwind_error\",\"perf_session_id\"\n"
                  "1000,2,2,11,10,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "2000,3,1,12,10,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "3050,0,5,21,20,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                  "3300,0,\"[NULL]\",21,20,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n");
  g_autofree char *cpu_samples = query("stacks",
      "SELECT count(*) FROM cpu_profile_stack_sample");
  e2e_assert_text(cpu_samples, "\"count(*)\"\n0\n");
  g_autofree char *cpus = query("stacks", "SELECT group_concat(cpu) FROM (SELECT cpu FROM cpu "
                                          "WHERE cpu IN (0, 2, 3) ORDER BY cpu)");
  e2e_assert_text(cpus, "\"group_concat(cpu)\"\n\"0,2,3\"\n");
  g_autofree char *slices = query("stacks",
      "SELECT s.name, a.int_value, f.name FROM slice s JOIN args a ON a.arg_set_id = "
      "s.arg_set_id AND a.key = 'callsite_id' JOIN stack_profile_callsite c ON c.id = "
      "a.int_value JOIN stack_profile_frame f ON f.id = c.frame_id ORDER BY s.ts");
  e2e_assert_text(slices, "\"name\",\"int_value\",\"name\"\n"
                          "\"interned stack\",2,\"leaf\"\n\"inline stack\",4,\"inner\"\n");
  /* The same pairs through trace_processor's table, as its UI joins it. */
  g_autofree char *callstacks = query("stacks",
      "SELECT s.name, c.callsite_id, c.end_callsite_id FROM slice s "
      "JOIN __intrinsic_track_event_callstacks c ON c.slice_id = s.id "
      "ORDER BY s.ts");
  e2e_assert_text(callstacks, "\"name\",\"callsite_id\",\"end_callsite_id\"\n"
                              "\"interned stack\",2,\"[NULL]\"\n"
                              "\"inline stack\",4,\"[NULL]\"\n");
  g_autofree char *stats = query("stacks",
      "SELECT name, value FROM stats WHERE value > 0 ORDER BY name");
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         "\"packet_skipped_seq_needs_incremental_state_invalid\",1\n"
                         "\"perf_sample_missing_timestamp\",1\n"
                         "\"perf_samples_skipped\",1\n"
                         "\"perf_samples_skipped_dataloss\",5\n"
                         "\"stackprofile_invalid_callstack_id\",1\n");
}

static void test_real_traces_import(void) {
  static const struct {
    const char *name;
    const char *expected;
  } traces[] = {
      {"nowinandroid-trace.perfetto-trace", "6744,4"},
      {"systing-trace.pb", "4287,1"},
      {"tokio-flight-recorder.pftrace", "235,0"},
      {"winscope-input-events.perfetto-trace", "0,2"},
      {"winscope-no_winscope_traces.perfetto-trace", "0,2"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(traces); i++) {
    g_autofree char *path = corpus_real_path("proto", traces[i].name);
    const char *inputs[] = {path, NULL};
    g_autofree char *counts = e2e_query(inputs,
        "SELECT (SELECT count(*) FROM slice), "
        "(SELECT count(DISTINCT snapshot_id) FROM clock_snapshot)");
    g_autofree char *expected = g_strdup_printf(
        "\"(SELECT count(*) FROM slice)\",\"(SELECT count(DISTINCT snapshot_id) FROM "
        "clock_snapshot)\"\n%s\n", traces[i].expected);
    e2e_assert_text(counts, expected);
    g_autofree char *errors = e2e_query(inputs,
        "SELECT name, value FROM stats WHERE value > 0 AND severity = 'error'");
    /* systing writes the kernel's raw task state as prev_state: 580 of
     * its compact switches say 8193, above TASK_STATE_MAX (2048), which
     * trace_processor reads as no state; one of them is a cpu's first
     * switch, which has no prev thread, so 579 are counted. */
    e2e_assert_text(errors, strcmp(traces[i].name, "systing-trace.pb") == 0
                                ? "\"name\",\"value\"\n\"task_state_invalid\",579\n"
                                : "\"name\",\"value\"\n");
  }
  /* systing: 355 perf_sample packets, each with a callstack_iid into 37
   * interned callstacks on one sequence (counted with protoc --decode_raw:
   * 33 distinct tids; the used callstacks have 98 distinct frame-id
   * prefixes, the longest 53 frames; 75 frames and 75 mappings collapse to
   * 71 and 56 distinct rows by their fields). */
  g_autofree char *systing = corpus_real_path("proto", "systing-trace.pb");
  const char *systing_inputs[] = {systing, NULL};
  g_autofree char *perf = e2e_query(systing_inputs,
      "SELECT count(*), count(callsite_id), count(DISTINCT utid), "
      "(SELECT count(*) FROM stack_profile_callsite), (SELECT max(depth) FROM stack_profile_callsite), "
      "(SELECT count(*) FROM stack_profile_frame), (SELECT count(*) FROM stack_profile_mapping) "
      "FROM perf_sample");
  g_assert_true(g_str_has_suffix(perf, "\n355,355,33,98,52,71,56\n"));

  g_autofree char *path = corpus_real_path("proto", "tokio-flight-recorder.pftrace");
  const char *inputs[] = {path, NULL};
  g_autofree char *tokio = e2e_query(inputs,
      "SELECT (SELECT count(*) FROM slice WHERE dur > 0), (SELECT count(*) FROM slice WHERE dur = 0), "
      "(SELECT count(*) FROM thread WHERE tid != 0), (SELECT count(*) FROM process WHERE pid != 0)");
  /* 10 threads: the 8 workers and "main" of the thread descriptors, plus
   * the process's main thread (tid == pid 1605085), made with the process
   * (docs/sql-surface.md §10). */
  g_assert_true(g_str_has_suffix(tokio, "\n227,8,10,1\n"));

  /* nowinandroid: Android 13 (SDK 33) on a Pixel 7 Pro ("cheetah"), kernel 5.10. */
  g_autofree char *android = corpus_real_path("proto", "nowinandroid-trace.perfetto-trace");
  const char *android_inputs[] = {android, NULL};
  g_autofree char *machine = e2e_query(android_inputs,
      "SELECT sysname, arch, android_sdk_version, substr(release, 1, 4), "
      "instr(android_build_fingerprint, 'cheetah') > 0 FROM machine");
  g_assert_true(g_str_has_suffix(machine, "\n\"Linux\",\"aarch64\",33,\"5.10\",1\n"));
}

/* --- system traces ---------------------------------------------------------- */

#define SYSTEM_COUNTS_SQL                                                       \
  "SELECT (SELECT count(*) FROM slice), (SELECT count(DISTINCT name) FROM slice), " \
  "(SELECT count(*) FROM thread), (SELECT count(*) FROM process), "           \
  "(SELECT count(*) FROM track), (SELECT count(*) FROM flow), "               \
  "(SELECT count(*) FROM sched), (SELECT count(*) FROM thread_state), "       \
  "(SELECT count(*) FROM counter), (SELECT count(*) FROM android_logs)"

/* The two real system traces give trace_processor's counts of slices,
 * distinct slice names, threads, processes, tracks, flows, sched rows,
 * thread_state rows, counters and android_logs. There is no reference
 * binary here: each value is what tests/derive/system_trace_counts.py
 * computes from the file's bytes with trace_processor's rules (restated
 * in its docstring), independently of this code:
 *
 * nowinandroid: slices 6744 = 3122 atrace "B|" + 1 "S|" + 801 expected
 * and 801 actual display frames + 951 expected surface frames (1068 less
 * 117 repeating a (pid, token)) + 1068 actual surface frames; 1768
 * distinct names (atrace names and frame tokens); threads 10 = the
 * swapper, 5 print pids, 4 more main threads of frame timeline pids;
 * processes 6 = pid 0, 9305 and 4 more frame timeline pids; tracks 30 =
 * 4 atrace thread tracks, 1 "Sync" async track, 25 frame timeline tracks
 * (each (pid, expected/actual) set has as many as its peak of frames in
 * flight); flows 1068 = actual surface frames whose display token's
 * actual display frame begins after them; no sched or thread_state (no
 * sched events); counters 0 (no "C|" print, and the script finds no
 * other counter payload, which it would refuse); android_logs 0 (its
 * one android_log packet holds only stats).
 *
 * systing: slices 4287 = 4284 softirq + 3 irq entries; 5 names (4
 * softirq actions, 1 irq handler); threads 227 and processes 127 from its
 * process tree, track descriptors, perf samples and ftrace pids (with
 * the swapper, pid 0 and main threads); tracks 23 = "SoftIrq Cpu N" and
 * "Irq Cpu N" tracks of the cpus that have them; sched 5031 = 5053
 * compact switches less each of 22 cpus' first; thread_state 9011 (2
 * states per switch but the swapper's, and each waking after its cpu's
 * first switch of a thread neither Running nor "R"); no flows; counters
 * and android_logs 0 as the script derives them (no print, no counter
 * payload, no android_log packet). */
static void test_real_system_traces_count_as_trace_processor(void) {
  static const struct {
    const char *name;
    const char *counts;
  } traces[] = {
      {"nowinandroid-trace.perfetto-trace", "6744,1768,10,6,30,1068,0,0,0,0"},
      {"systing-trace.pb", "4287,5,227,127,23,0,5031,9011,0,0"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(traces); i++) {
    g_autofree char *path = corpus_real_path("proto", traces[i].name);
    const char *inputs[] = {path, NULL};
    g_autofree char *counts = e2e_query(inputs, SYSTEM_COUNTS_SQL);
    g_autofree char *suffix = g_strdup_printf("\n%s\n", traces[i].counts);
    if (!g_str_has_suffix(counts, suffix))
      g_error("%s: %s, expected %s", traces[i].name, counts, traces[i].counts);
  }
}

/* No ftrace event of the real system traces is invisible: the
 * FtraceEvent payload field numbers of their bundles (listed from the
 * bytes, and in tests/data/real's README) are all in proto/ftrace.proto,
 * so none is an unknown_ftrace_event row, and every event that no other
 * table models is an ftrace_event row: nowinandroid's 6246 events are all
 * print (atrace: slices), so none; systing's are softirq_entry/exit
 * (4284 each) and irq_handler_entry/exit (3 each), which are slices, and
 * one sched_process_exit, the one row. */
static void test_real_system_traces_hide_no_ftrace_event(void) {
  static const struct {
    const char *name;
    const char *rows;
  } traces[] = {
      {"nowinandroid-trace.perfetto-trace", "0,\"[NULL]\",0"},
      {"systing-trace.pb", "1,\"sched_process_exit\",0"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(traces); i++) {
    g_autofree char *path = corpus_real_path("proto", traces[i].name);
    const char *inputs[] = {path, NULL};
    g_autofree char *rows = e2e_query(inputs,
        "SELECT count(*), group_concat(DISTINCT name), (SELECT coalesce(sum(value), 0) "
        "FROM stats WHERE name = 'proto_ftrace_unknown_event') FROM ftrace_event");
    g_autofree char *suffix = g_strdup_printf("\n%s\n", traces[i].rows);
    if (!g_str_has_suffix(rows, suffix))
      g_error("%s: %s, expected %s", traces[i].name, rows, traces[i].rows);
  }
}

/* --- zstd_compressed_packets ------------------------------------------------ */

static void append_varint(GByteArray *bytes, uint64_t v) {
  do {
    uint8_t b = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v)
      b |= 0x80;
    g_byte_array_append(bytes, &b, 1);
  } while (v);
}

/* Appends packet {zstd_compressed_packets (field 133): zstd(inner)} to
 * `file`, its compressed bytes cut to `keep_percent` %. */
static void append_zstd_wrapper(GByteArray *file, const char *inner, size_t len,
                                int keep_percent) {
  size_t bound = ZSTD_compressBound(len);
  uint8_t *z = g_malloc(bound);
  size_t zlen = ZSTD_compress(z, bound, inner, len, 3);
  g_assert_false(ZSTD_isError(zlen));
  zlen = zlen * (size_t)keep_percent / 100;
  GByteArray *packet = g_byte_array_new();
  const uint8_t tag[] = {0xaa, 0x08};
  g_byte_array_append(packet, tag, sizeof tag);
  append_varint(packet, zlen);
  g_byte_array_append(packet, z, (guint)zlen);
  const uint8_t packet_tag = 0x0a;
  g_byte_array_append(file, &packet_tag, 1);
  append_varint(file, packet->len);
  g_byte_array_append(file, packet->data, packet->len);
  g_byte_array_free(packet, TRUE);
  g_free(z);
}

static const char slice_sql[] =
    "SELECT s.ts, s.dur, s.name, t.name AS track FROM slice s "
    "JOIN track t ON s.track_id = t.id ORDER BY s.id";

/* track_events.pb inside one zstd wrapper reads as the plain file does. */
static void test_zstd_wrapper_reads_like_plain_packets(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes plain = e2e_proto_fixture("track_events");
  GByteArray *file = g_byte_array_new();
  append_zstd_wrapper(file, plain.data, plain.len, 100);
  g_autofree char *path =
      e2e_write_file(dir, "zstd.pftrace", (const char *)file->data, file->len);
  g_autofree char *expected = query("track_events", slice_sql);
  const char *inputs[] = {path, NULL};
  g_autofree char *slices = e2e_query(inputs, slice_sql);
  /* Not vacuous: the plain file's 11 slices (see the test above). */
  g_assert_true(g_str_has_prefix(expected, "\"ts\",\"dur\",\"name\",\"track\"\n"
                                           "1000,1000,\"load\",\"[NULL]\"\n"));
  g_assert_true(g_str_has_suffix(expected, "3500,0,\"orphan\",\"orphan\"\n"));
  e2e_assert_text(slices, expected);
  /* The same stats (the fixture's own three) and no damage. */
  static const char stats_sql[] = "SELECT name, value FROM stats WHERE value > 0 ORDER BY name";
  g_autofree char *expected_stats = query("track_events", stats_sql);
  g_autofree char *stats = e2e_query(inputs, stats_sql);
  g_assert_nonnull(strstr(expected_stats, "\"track_descriptor_missing_uuid\",1\n"));
  e2e_assert_text(stats, expected_stats);
  g_byte_array_free(file, TRUE);
  g_free(plain.data);
  e2e_cleanup(dir);
}

/* A whole wrapper, then one cut in half: the error names the file and the
 * second wrapper, the first wrapper's slices stay, and the damage is the
 * stat file_parse_error. */
static void test_damaged_zstd_wrapper_keeps_earlier_packets(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes plain = e2e_proto_fixture("track_events");
  GByteArray *file = g_byte_array_new();
  append_zstd_wrapper(file, plain.data, plain.len, 100);
  size_t second_payload = file->len + 1 + 2; /* packet tag + 2-byte length */
  append_zstd_wrapper(file, plain.data, plain.len, 50);
  g_assert_cmpuint(file->len - second_payload, >=, 128); /* the length took 2 bytes */
  g_autofree char *path =
      e2e_write_file(dir, "cut.pftrace", (const char *)file->data, file->len);
  const char *args[] = {"query", "cut.pftrace", "--sql",
                        "SELECT (SELECT count(*) FROM slice) AS slices, (SELECT value FROM "
                        "stats WHERE name = 'file_parse_error') AS damage",
                        NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_autofree char *message = g_strdup_printf(
      "at byte %zu: packet 2: zstd_compressed_packets: the zstd stream is cut short",
      second_payload);
  if (!strstr(r.err, "cut.pftrace") || !strstr(r.err, message))
    g_error("stderr does not name the file and the wrapper (%s): %s", message, r.err);
  e2e_assert_text(r.out, "\"slices\",\"damage\"\n11,1\n");
  e2e_result_clear(&r);
  g_byte_array_free(file, TRUE);
  g_free(plain.data);
  e2e_cleanup(dir);
}

/* thread.is_main_thread on tokio's trace (E2E_MAIN_THREAD_SQL): its 10
 * threads of pid 1605085 (test_real_traces_import: the 9 described
 * threads and the process's main thread) and the placeholder tid 0 all
 * have a process; the main threads are 1605085's and the placeholder's,
 * the 9 described threads are not (none has tid == pid). */
static void test_real_tokio_main_threads(void) {
  e2e_assert_real_file_row("proto", "tokio-flight-recorder.pftrace", E2E_MAIN_THREAD_SQL,
                           "2,9,0,0");
}

/* tokio's 10 track descriptors (protoc --decode: 1 with only a process,
 * pid 1605085 and no name; 9 with a thread, each naming it as
 * parent_uuid) make 10 tracks as in trace_processor, which interns a
 * parent's track with its first child's (TrackEventTracker): the 9
 * threads' own tracks (every thread has slices) and the process's, with no
 * name and no event. Before, the unused process track was never made (9). */
static void test_real_tokio_process_descriptor_has_its_track(void) {
  g_autofree char *path = corpus_real_path("proto", "tokio-flight-recorder.pftrace");
  const char *inputs[] = {path, NULL};
  g_autofree char *out = e2e_query(inputs,
      "SELECT (SELECT count(*) FROM track) AS tracks, "
      "(SELECT count(*) FROM thread_track) AS thread_tracks, "
      "(SELECT group_concat(coalesce(t.name, 'NULL') || ' ' || p.pid) FROM process_track t "
      "JOIN process p USING (upid)) AS process_tracks, "
      "(SELECT count(*) FROM slice s JOIN process_track t ON s.track_id = t.id) AS on_it");
  e2e_assert_text(out, "\"tracks\",\"thread_tracks\",\"process_tracks\",\"on_it\"\n"
                       "10,9,\"NULL 1605085\",0\n");
}

/* Mapping build ids are the lowercase hex of their bytes, as
 * trace_processor shows them; worked out in build_ids.textproto. Before,
 * bytes that were already lowercase hex text were kept as they were, the
 * 33-character module id was hex-encoded again and an empty id was "". */
static void test_build_ids_are_the_hex_of_their_bytes(void) {
  g_autofree char *mappings = query("build_ids",
      "SELECT build_id FROM stack_profile_mapping ORDER BY start");
  e2e_assert_text(mappings, "\"build_id\"\n\"01ab\"\n"
                            "\"61316232633364346535663637383930\"\n"
                            "\"0123456789ABCDEF0123456789ABCDEF0\"\n\"[NULL]\"\n");
}
int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/proto/system/real-traces-count-as-trace-processor",
                  test_real_system_traces_count_as_trace_processor);
  g_test_add_func("/e2e/proto/system/real-traces-hide-no-ftrace-event",
                  test_real_system_traces_hide_no_ftrace_event);
  g_test_add_func("/e2e/proto/track-events/every-feature-reaches-a-table",
                  test_track_events_reach_every_table);
  g_test_add_func("/e2e/proto/track-events/thread-time-counter-sets-thread-time",
                  test_thread_time_counter);
  g_test_add_func("/e2e/proto/interning/one-of-two-sequences-loses-state",
                  test_interning_with_lost_state);
  g_test_add_func("/e2e/proto/clocks/sequence-and-incremental-clocks-land-on-boottime",
                  test_clocks_land_on_boottime);
  g_test_add_func("/e2e/proto/machines/remote-clock-sync-places-vm-events",
                  test_remote_clock_sync_places_vm_events);
  g_test_add_func("/e2e/proto/machines/remote-only-file-adopts-the-host-row",
                  test_remote_only_file_adopts_host_row);
  g_test_add_func("/e2e/proto/machines/host-data-of-another-file-prevents-adoption",
                  test_host_data_of_another_file_prevents_adoption);
  g_test_add_func("/e2e/proto/process-tree/fills-processes", test_process_tree_fills_processes);
  g_test_add_func("/e2e/proto/system-info/fills-machine-rows", test_system_info_fills_machine_rows);
  g_test_add_func("/e2e/proto/stacks/interned-stacks-reach-samples-and-slices",
                  test_stack_profiles);
  g_test_add_func("/e2e/proto/zstd/wrapper-reads-like-plain-packets",
                  test_zstd_wrapper_reads_like_plain_packets);
  g_test_add_func("/e2e/proto/zstd/damaged-wrapper-keeps-earlier-packets",
                  test_damaged_zstd_wrapper_keeps_earlier_packets);
  g_test_add_func("/e2e/proto/stacks/build-ids-are-the-hex-of-their-bytes",
                  test_build_ids_are_the_hex_of_their_bytes);
  g_test_add_func("/e2e/proto/real-traces/import-without-errors", test_real_traces_import);
  g_test_add_func("/e2e/proto/real-traces/tokio-main-threads-are-tid-equal-pid",
                  test_real_tokio_main_threads);
  g_test_add_func("/e2e/proto/real-traces/tokio-process-descriptor-has-its-track",
                  test_real_tokio_process_descriptor_has_its_track);
  return g_test_run();
}
