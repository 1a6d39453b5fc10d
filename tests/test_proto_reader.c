/*
 * The proto reader, driven through its descriptor with a fake host that
 * writes what the reader told it as a transcript (tests/support/fake_host.h):
 * what well-formed packets become (clocks, interning, track and legacy
 * events, processes and machines, stack profiles), the probe, and the real
 * traces. Fixtures are text protobuf under tests/data/proto/, encoded at
 * build time; each test names the fixture and states the lines it must
 * produce. Damaged, compressed and dropped packets: test_proto_damage.c.
 */
#include <glib.h>
#include <stddef.h>
#include <string.h>

#include "corpus.h"
#include "fake_host.h"
#include "proto_map.h"
#include "proto_packet.h"
#include "proto_run.h"
#include "proto_track_event.h"
#include "proto_wire_encode.h"

/* --- clocks ----------------------------------------------------------------- */

static void test_clocks(void) {
  fake_host *fake = run_fixture("clocks");
  fake_host_assert_lines(fake,
      "slice_complete T1 private ts=500 name=before any snapshot dur=0\n"
      "claim BOOTTIME@host\n"
      "snapshot BOOTTIME@host=1000 MONOTONIC@host=400\n"
      "slice_complete T1 BOOTTIME@host ts=2000 name=on the default clock dur=0\n"
      "slice_complete T1 MONOTONIC@host ts=700 name=on monotonic dur=0\n"
      "claim BOOTTIME@host\n"
      "snapshot clock64/seq2@host=3000 BOOTTIME@host=5000\n"
      "slice_complete T1 clock64/seq2@host ts=5000 name=delta 2 us dur=0\n"
      "slice_complete T1 clock64/seq2@host ts=10000 name=delta 5 us dur=0\n"
      "snapshot clock64/seq3@host=100 BOOTTIME@host=6000\n"
      "slice_complete T1 clock64/seq3@host ts=150 name=on sequence 3's clock 64 dur=0\n"
      "claim MONOTONIC@host\n"
      "snapshot BOOTTIME@host=10000 MONOTONIC@host=9400\n"
      "slice_complete T1 MONOTONIC@host ts=9500 name=on the new default dur=0\n");
  /* The two rejected snapshots never reached the host. */
  g_assert_cmpuint(fake_host_count_lines(fake, "snapshot"), ==, 4);
  g_assert_cmpint(fake_host_stat(fake, "invalid_clock_snapshots"), ==, 2);
  g_assert_cmpint(fake_host_stat(fake, "clock_sync_failure_unknown_source_clock"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "track_event_invalid_timestamp"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "track_event_missing_timestamp"), ==, 1);
  g_assert_cmpuint(fake_host_count_lines(fake, "slice_complete"), ==, 7);
  fake_host_free(fake);
}

/* Fixture clocks_before_snapshot.textproto (packet numbers from its text).
 * Expected values: the snapshot (packet 3) reads BOOTTIME 1000 ns and clock
 * 64 at 10 units of unit_multiplier_ns 1000, i.e. 10 * 1000 = 10000 ns;
 * packets 4 and 6 carry 12 and 20 units, 12000 and 20000 ns on clock 64.
 * Packets 1 (clock 64 by the sequence default) and 2 (its own clock 65)
 * precede any snapshot of their clock, and 5 is on sequence 2, whose clock
 * 64 no snapshot relates: three drops, no slice, nothing read as 1 ns units
 * (before the check, all five instants reached the host: 5 slice lines). */
static void test_sequence_clock_before_its_snapshot_is_not_placed(void) {
  fake_host *fake = run_fixture("clocks_before_snapshot");
  fake_host_assert_lines(fake,
      "claim BOOTTIME@host\n"
      "snapshot BOOTTIME@host=1000 clock64/seq1@host=10000\n"
      "slice_complete T1 clock64/seq1@host ts=12000 name=12 us on clock 64 dur=0\n"
      "slice_complete T1 clock64/seq1@host ts=20000 name=20 us on clock 64 dur=0\n");
  g_assert_cmpuint(fake_host_count_lines(fake, "slice"), ==, 2);
  g_assert_cmpint(fake_host_stat(fake, "clock_sync_failure_unknown_source_clock"), ==, 3);
  fake_host_free(fake);
}

/* --- interning ---------------------------------------------------------------- */

static void test_interning_two_sequences_one_loses_state(void) {
  fake_host *fake = run_fixture("interning");
  fake_host_assert_lines(fake,
      "slice_begin T1 private ts=100 cat=cat1,cat2 name=alpha args={debug.size=\"big\"}\n"
      "slice_complete T1 private ts=110 cat=unknown(9) name=beta dur=0\n"
      "slice_complete T1 private ts=125 name=inline while invalid dur=0\n"
      "slice_end T1 private ts=130\n"
      "slice_complete T1 private ts=140 name=gamma dur=0\n"
      "slice_complete T1 private ts=145 name=delta dur=0\n"
      "slice_complete T1 private ts=146 name=delta dur=0\n"
      "slice_complete T1 private ts=150 name=sequence 0 dur=0\n");
  g_assert_cmpuint(fake_host_count_lines(fake, "slice_"), ==, 8);
  g_assert_cmpint(fake_host_stat(fake, "packet_skipped_seq_needs_incremental_state_invalid"), ==, 2);
  g_assert_cmpint(fake_host_stat(fake, "interned_data_skipped_incremental_state_invalid"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "interned_data_missing_sequence_id"), ==, 1);
  fake_host_free(fake);
}

/* An interned annotation name's arg key is interned once per entry: a
 * clear or a replacing entry for the same iid must give the new key. */
static void test_interned_annotation_keys_follow_the_entry(void) {
  fake_host *fake = run_fixture("annotation_keys");
  fake_host_assert_lines(fake,
      "slice_complete T1 private ts=100 name=first dur=0 args={debug.size=1}\n"
      "slice_complete T1 private ts=110 name=same name again dur=0 args={debug.size=2}\n"
      "slice_complete T1 private ts=120 name=after clear dur=0 args={debug.count=3}\n"
      "slice_complete T1 private ts=130 name=replaced dur=0 args={debug.weight=4}\n"
      "slice_complete T1 private ts=140 name=nested dur=0 "
      "args={debug.weight.x=5, debug.weight=6}\n"
      "slice_complete T1 private ts=150 name=array dur=0 "
      "args={debug.weight[0]=7, debug.weight[1].y=8, debug.weight=9}\n");
  fake_host_free(fake);
}

/* Appends field `number` as a length-delimited `bytes` to `out`. */
static void wire_put_bytes(GByteArray *out, uint32_t number, const void *data, size_t len) {
  wire_put_varint(out, (uint64_t)number << 3 | 2);
  wire_put_varint(out, len);
  g_byte_array_append(out, data, (guint)len);
}

static void wire_put_uint(GByteArray *out, uint32_t number, uint64_t value) {
  wire_put_varint(out, (uint64_t)number << 3);
  wire_put_varint(out, value);
}

/* Appends a packet at `ts` holding an instant TrackEvent named `name`
 * with the DebugAnnotation `annotation` (encoded). */
static void put_instant_with_annotation(GByteArray *trace, uint64_t ts, const char *name,
                                        const GByteArray *annotation) {
  g_autoptr(GByteArray) event = g_byte_array_new();
  wire_put_uint(event, 9, 3); /* TYPE_INSTANT */
  wire_put_bytes(event, 23, name, strlen(name));
  wire_put_bytes(event, 4, annotation->data, annotation->len);
  g_autoptr(GByteArray) packet = g_byte_array_new();
  wire_put_uint(packet, 8, ts);
  wire_put_uint(packet, 10, 1);
  wire_put_bytes(packet, 11, event->data, event->len);
  wire_put_bytes(trace, 1, packet->data, packet->len);
}

/* Keys built from parts (array elements, dict entries) go through a cache
 * of 512 slots by their text (proto_debug_annotation.c): an array of
 * more elements than slots, read twice, must give every element its own
 * key both times, whichever slots they shared; index 10 and up print
 * every digit; a key longer than the cache holds goes to the pool. The
 * expected args are written from the same loop that encodes them. */
static void test_built_annotation_keys_survive_the_key_cache(void) {
  enum { ELEMENTS = 700 };
  static const char long_name[] = "a_member_name_long_enough_for_the_key_to_skip_the_cache";
  g_autoptr(GByteArray) trace = g_byte_array_new();
  g_autoptr(GByteArray) list = g_byte_array_new();
  wire_put_bytes(list, 10, "list", 4);
  GString *list_args = g_string_new("args={");
  for (uint32_t i = 0; i < ELEMENTS; i++) {
    g_autoptr(GByteArray) element = g_byte_array_new();
    wire_put_uint(element, 4, i * 3);
    wire_put_bytes(list, 12, element->data, element->len);
    g_string_append_printf(list_args, "%sdebug.list[%u]=%u", i ? ", " : "", i, i * 3);
  }
  g_string_append(list_args, "}");
  g_autoptr(GByteArray) dict = g_byte_array_new();
  wire_put_bytes(dict, 10, "outer", 5);
  g_autoptr(GByteArray) entry = g_byte_array_new();
  wire_put_bytes(entry, 10, long_name, strlen(long_name));
  wire_put_uint(entry, 4, 7);
  wire_put_bytes(dict, 11, entry->data, entry->len);
  for (uint64_t round = 0; round < 2; round++) {
    put_instant_with_annotation(trace, 100 + 20 * round, "list", list);
    put_instant_with_annotation(trace, 110 + 20 * round, "dict", dict);
  }
  fake_host *fake = run_bytes(trace->data, trace->len, trace->len, TM_OK);
  g_autofree char *dict_line =
      g_strdup_printf("name=dict dur=0 args={debug.outer.%s=7}\n", long_name);
  g_autofree char *expected = g_strdup_printf(
      "slice_complete T1 private ts=100 name=list dur=0 %s\n"
      "slice_complete T1 private ts=110 %s"
      "slice_complete T1 private ts=120 name=list dur=0 %s\n"
      "slice_complete T1 private ts=130 %s",
      list_args->str, dict_line, list_args->str, dict_line);
  fake_host_assert_lines(fake, expected);
  g_string_free(list_args, TRUE);
  fake_host_free(fake);
}

/* Small iids (a direct array) and large ones (a map) alike: resolved,
 * replaced by a later entry, forgotten by a clear. */
static void test_interning_small_and_large_iids(void) {
  fake_host *fake = run_fixture("interning_iids");
  fake_host_assert_lines(fake,
      "slice_complete T1 private ts=100 name=small dur=0\n"
      "slice_complete T1 private ts=110 name=last direct dur=0\n"
      "slice_complete T1 private ts=120 name=first mapped dur=0\n"
      "slice_complete T1 private ts=130 name=huge dur=0\n"
      "slice_complete T1 private ts=140 name=small again dur=0\n"
      "slice_complete T1 private ts=150 name=mapped after clear dur=0\n"
      "slice_complete T1 private ts=160 dur=0\n"
      "slice_complete T1 private ts=170 dur=0\n"
      "slice_complete T1 private ts=180 dur=0\n");
  fake_host_free(fake);
}

/* The reader's map: replace, clear (a generation bump), growth. */
static void test_map_clear_and_growth(void) {
  proto_map map = {0};
  uint32_t value = 0;
  g_assert_false(proto_map_get(&map, 7, &value));
  proto_map_put(&map, 7, 70);
  proto_map_put(&map, 7, 71);
  g_assert_true(proto_map_get(&map, 7, &value));
  g_assert_cmpuint(value, ==, 71);
  g_assert_cmpuint(map.len, ==, 1);
  proto_map_clear(&map);
  g_assert_false(proto_map_get(&map, 7, &value));
  g_assert_cmpuint(map.len, ==, 0);
  /* Many generations and growths: only the current generation's keys. */
  for (uint64_t round = 0; round < 50; round++) {
    for (uint64_t k = 0; k < round * 10; k++)
      proto_map_put(&map, k * 0x100000001ull + round, (uint32_t)(k + round));
    for (uint64_t k = 0; k < round * 10; k++) {
      g_assert_true(proto_map_get(&map, k * 0x100000001ull + round, &value));
      g_assert_cmpuint(value, ==, k + round);
    }
    /* The previous generation's keys are gone (they never equal this
     * round's: keys differ by less than the stride). */
    for (uint64_t k = 0; round > 0 && k < (round - 1) * 10; k++)
      g_assert_false(proto_map_get(&map, k * 0x100000001ull + round - 1, &value));
    g_assert_cmpuint(map.len, ==, round * 10);
    proto_map_clear(&map);
  }
  proto_map_free(&map);
}

/* --- tracks and events ---------------------------------------------------------- */

/* The whole transcript: tracks are created on first use, in event order. */
static const char track_events_transcript[] =
    "process p10\n"
    "process_name p10 = browser\n"
    "process_cmdline p10 = /bin/browser --flag\n"
    "thread t11 of p10\n"
    "thread_name t11 = main\n"
    /* uuid 110 is t11's track: merged into its main track, after its
     * parent 100, the process's own track, which trace_processor makes
     * with its first child though no event is on it. */
    "track T1 = process_track_event p10 key=100\n"
    "track T2 = thread_execution t11\n"
    "slice_begin T2 private ts=1000 cat=net,io name=load args={debug.url=\"https://example.org\", "
    "debug.req.method=\"GET\", debug.req.headers[0]=\"a\", debug.req.headers[1]=2, debug.ok=true, "
    "debug.ratio=0.5, debug.ptr=0x1000, debug.big=18446744073709551615u, "
    "debug.legacy=json:{\"a\":1}, correlation_id=\"tp:#5\"}\n"
    "flow T2 private ts=1000 id=77 CONTINUE enclosing\n"
    /* 201's parent 200 is resolved first; 200 is scoped to the process,
     * below its root track: a slot of the process's merged tracks named
     * "Network" under uuid 100 (set_key), with no parent track (a process
     * parent scopes, it is not a parent). 201 merges by its key "sockets"
     * among the children of 200, whose tracks are its parent. */
    "slot T3 = process_merged_track_event name=\"Network\" p10 set_key=100 cookie=200\n"
    "track_arg T3 description=\"requests in flight\"\n"
    "track_arg T3 child_ordering=\"explicit\"\n"
    "slot T4 = process_merged_track_event name=\"Socket 1\" p10 parent=T3 set_key=200 "
    "merge_key=\"sockets\" cookie=201\n"
    "track_arg T4 sibling_order_rank=2\n"
    "slice_complete T4 private ts=1500 name=send dur=0 args={correlation_id=\"req-1\", "
    "source_location.file_name=\"net.cc\", source_location.function_name=\"Send\", "
    "source_location.line_number=42}\n"
    "flow T4 private ts=1500 id=77 IN enclosing\n"
    "slice_end T2 private ts=2000 args={debug.bytes=512}\n"
    "track T5 = global_counter_track_event counter name=\"Memory\" key=300 unit=bytes on host\n"
    "track_arg T5 y_axis_share_key=\"mem\"\n"
    "counter T5 private ts=2100 value=4096\n"
    "counter T5 private ts=2200 value=2.5\n"
    "track T6 = thread_track_event name=\"main (own track)\" t11 key=120\n"
    /* Extra counter tracks are resolved before the event is emitted. */
    "track T7 = thread_counter_track_event counter name=\"Allocated\" t11 key=301 unit=KiB\n"
    "slice_complete T6 private ts=2300 name=tick dur=0\n"
    "counter T7 private ts=2300 value=2048\n"
    "counter T5 private ts=2300 value=100\n"
    "slice_complete T6 private ts=2400 name=tock dur=0\n"
    "counter T7 private ts=2400 value=5120\n"
    /* uuid 0: merged global tracks named "Default Track", cookie 0. */
    "slot T8 = global_merged_track_event name=\"Default Track\" on host cookie=0\n"
    "slice_complete T8 private ts=2500 name=global dur=0\n"
    "slice_complete T2 private ts=2600 name=on the default thread dur=0\n"
    "slice_complete T8 private ts=2700 name=explicit uuid 0 dur=0\n"
    "slice_complete T3 private ts=2800 name=via defaults dur=0\n"
    /* "early" waited for its descriptor. */
    "slot T9 = global_merged_track_event name=\"Late\" on host cookie=400\n"
    "slice_complete T9 private ts=2900 name=early dur=0\n"
    "slice_complete T2 private ts=3100 name=corr thread_ts=7000 dur=0 "
    "args={correlation_id=\"interned-corr\"}\n"
    /* uuid 500 was never described: placed at the end of the file, a
     * global track named after its first event. */
    "slot T10 = global_merged_track_event name=\"orphan\" on host cookie=500\n"
    "slice_complete T10 private ts=3500 name=orphan dur=0\n";

static void test_track_events(void) {
  fake_host *fake = run_fixture("track_events");
  g_assert_cmpstr(fake_host_borrow_transcript(fake), ==, track_events_transcript);
  g_assert_cmpint(fake_host_stat(fake, "track_event_counter_missing_value"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "track_event_parser_errors"), ==, 2);
  g_assert_cmpint(fake_host_stat(fake, "track_event_extra_counter_values_without_track"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "track_descriptor_conflicting_reservation"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "track_descriptor_missing_uuid"), ==, 1);
  fake_host_free(fake);
}

/* Legacy events (fixture legacy_events.textproto, where each expected value
 * is worked out). */
static void test_legacy_events(void) {
  fake_host *fake = run_fixture("legacy_events");
  g_assert_cmpstr(fake_host_borrow_transcript(fake), ==,
      "claim BOOTTIME@host\n"
      "snapshot BOOTTIME@host=1000 MONOTONIC@host=1000\n"
      "process p10\n"
      "thread t11 of p10\n"
      "thread_name t11 = main\n"
      "track T1 = thread_execution t11\n"
      "slice_begin T1 BOOTTIME@host ts=1000 cat=cat name=outer\n"
      "flow T1 BOOTTIME@host ts=1000 id=5 OUT enclosing\n"
      /* thread_duration_us 2: thread_dur 2000 ns. */
      "slice_complete T1 BOOTTIME@host ts=1100 name=inner thread_ts=3000 thread_dur=2000 "
      "dur=1000\n"
      "slice_complete T1 BOOTTIME@host ts=1200 name=mark dur=0\n"
      "slice_end T1 BOOTTIME@host ts=2900 name=other\n"
      "slice_end T1 BOOTTIME@host ts=3000 cat=cat name=outer\n"
      "track T2 = legacy_chrome_global_instants key=0 on host\n"
      "slice_complete T2 BOOTTIME@host ts=3100 name=global mark dur=0\n"
      "track T3 = chrome_process_instant p10 key=0\n"
      "slice_complete T3 BOOTTIME@host ts=3200 name=process mark dur=0\n"
      "track T4 = legacy_async_global_slice name=\"req\" key=7 on host\n"
      "slice_begin T4 BOOTTIME@host ts=4000 cat=net name=req\n"
      "flow T4 BOOTTIME@host ts=4000 id=5 IN_KEEP enclosing\n"
      "slice_complete T4 BOOTTIME@host ts=4500 name=req step dur=0\n"
      "slice_end T4 BOOTTIME@host ts=5000 cat=net name=req\n"
      "track T5 = legacy_async_process_slice name=\"local\" p10 key=7\n"
      "slice_begin T5 BOOTTIME@host ts=5100 name=local thread_ts=60000\n"
      "slice_end T5 BOOTTIME@host ts=5300 name=local thread_ts=61000\n"
      "track T6 = legacy_async_global_slice name=\"scoped\" scope=scopeA key=7 on host\n"
      "slice_begin T6 BOOTTIME@host ts=5400 name=scoped\n"
      "slice_end T6 BOOTTIME@host ts=5500 name=scoped\n"
      "process p20\n"
      "thread t21 of p20\n"
      "track T7 = thread_execution t21\n"
      "slice_complete T7 BOOTTIME@host ts=6000 name=elsewhere dur=1000\n"
      "thread t12 of p10\n"
      "track T8 = thread_execution t12\n"
      "slice_complete T8 BOOTTIME@host ts=6100 name=sibling dur=1000\n"
      "slice_complete T1 MONOTONIC@host ts=9000 name=interned legacy dur=0\n"
      "slice_complete T1 BOOTTIME@host ts=9500 name=undirected dur=0\n"
      "slot T9 = global_merged_track_event name=\"Later\" on host cookie=50\n"
      "slice_complete T9 BOOTTIME@host ts=9600 name=waits dur=2000\n");
  /* C, S and an event without legacy_event; b without an id; a bind_id
   * without a direction. */
  g_assert_cmpint(fake_host_stat(fake, "proto_track_event_unsupported_type"), ==, 3);
  g_assert_cmpint(fake_host_stat(fake, "track_event_parser_errors"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "flow_without_direction"), ==, 1);
  fake_host_free(fake);
}

/* Legacy flow v1 and pid/tid 0 on the default thread (fixture
 * legacy_flows.textproto, where each expected value is worked out). */
/* `transcript` with each flow id replaced by #1, #2, ... in order of first
 * appearance: flow v1 ids are hashes of (id, category, name), and what a
 * test must pin is which events share a flow, not the hash. */
static char *number_flow_ids(const char *transcript) {
  GString *out = g_string_new(NULL);
  GPtrArray *seen = g_ptr_array_new_with_free_func(g_free);
  const char *p = transcript;
  const char *id;
  while ((id = strstr(p, " id=")) != NULL) {
    id += 4;
    size_t len = strspn(id, "0123456789");
    g_string_append_len(out, p, id - p);
    g_autofree char *digits = g_strndup(id, len);
    guint index;
    if (!g_ptr_array_find_with_equal_func(seen, digits, g_str_equal, &index)) {
      index = seen->len;
      g_ptr_array_add(seen, g_steal_pointer(&digits));
    }
    g_string_append_printf(out, "#%u", index + 1);
    p = id + len;
  }
  g_string_append(out, p);
  g_ptr_array_free(seen, TRUE);
  return g_string_free(out, FALSE);
}

static void test_legacy_flows(void) {
  fake_host *fake = run_fixture("legacy_flows");
  g_autofree char *transcript = number_flow_ids(fake_host_borrow_transcript(fake));
  g_assert_cmpstr(transcript, ==,
      "claim BOOTTIME@host\n"
      "snapshot BOOTTIME@host=1000 MONOTONIC@host=1000\n"
      "process p10\n"
      "thread t11 of p10\n"
      "thread_name t11 = main\n"
      "track T1 = thread_execution t11\n"
      "slice_begin T1 BOOTTIME@host ts=1000 name=A\n"
      "flow T1 BOOTTIME@host ts=1100 id=#1 OUT enclosing{name=\"io\", cat=\"c\"}\n"
      "slice_end T1 BOOTTIME@host ts=1500 name=A\n"
      "slice_begin T1 BOOTTIME@host ts=2000 name=B\n"
      "flow T1 BOOTTIME@host ts=2100 id=#1 STEP enclosing{name=\"io\", cat=\"c\"}\n"
      "slice_end T1 BOOTTIME@host ts=2500 name=B\n"
      "flow T1 BOOTTIME@host ts=2600 id=#1 IN_KEEP next{name=\"io\", cat=\"c\"}\n"
      "slice_complete T1 BOOTTIME@host ts=3000 name=C dur=1000\n"
      "slice_begin T1 BOOTTIME@host ts=5000 name=D\n"
      "flow T1 BOOTTIME@host ts=5100 id=#2 OUT enclosing{name=\"ipc\"}\n"
      "flow T1 BOOTTIME@host ts=5150 id=#3 OUT enclosing{name=\"other\"}\n"
      "slice_end T1 BOOTTIME@host ts=5200 name=D\n"
      "slice_begin T1 BOOTTIME@host ts=6000 name=E\n"
      "flow T1 BOOTTIME@host ts=6100 id=#2 IN_KEEP enclosing{name=\"ipc\"}\n"
      "flow T1 BOOTTIME@host ts=6150 id=#3 IN_KEEP enclosing{name=\"other\"}\n"
      "slice_end T1 BOOTTIME@host ts=6200 name=E\n"
      "slice_complete T1 BOOTTIME@host ts=7000 name=F dur=1000\n"
      "slot T2 = global_merged_track_event name=\"Later\" on host cookie=60\n"
      "slice_complete T2 BOOTTIME@host ts=9000 name=G1 dur=1000\n"
      "flow T2 BOOTTIME@host ts=9100 id=#4 OUT enclosing{name=\"late\"}\n"
      "flow T2 BOOTTIME@host ts=9500 id=#4 IN_KEEP next{name=\"late\"}\n"
      "slice_complete T2 BOOTTIME@host ts=10000 name=G2 dur=1000\n"
      "process p30\n"
      "thread t0 of p30\n");
  g_assert_cmpint(fake_host_stat(fake, "flow_invalid_id"), ==, 3);
  g_assert_cmpint(fake_host_stat(fake, "track_event_parser_errors"), ==, 3);
  fake_host_free(fake);
}

/* Every fixture gives the same transcript fed whole or one byte at a time. */
static void test_one_byte_chunks_give_the_same_transcript(void) {
  const char *const names[] = {"clocks", "interning", "machines", "process_tree",
                               "system_info", "thread_time", "track_events",
                               "legacy_events", "legacy_flows"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autoptr(GBytes) bytes = read_fixture(names[i]);
    gsize len;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    fake_host *whole = run_bytes(data, len, len, TM_OK);
    fake_host *bytewise = run_bytes(data, len, 1, TM_OK);
    g_assert_cmpstr(fake_host_borrow_transcript(bytewise), ==,
                    fake_host_borrow_transcript(whole));
    g_assert_cmpuint(strlen(fake_host_borrow_transcript(whole)), >, 0);
    fake_host_free(whole);
    fake_host_free(bytewise);
  }
}

static void test_thread_time_counter_gives_slice_thread_time(void) {
  fake_host *fake = run_fixture("thread_time");
  fake_host_assert_lines(fake,
                         "track T1 = thread_execution t2\n"
                         "track T2 = thread_counter_track_event counter name=\"thread_time\" t2 "
                         "key=11 unit=ns\n"
                         "slice_begin T1 private ts=100 name=work thread_ts=5000\n"
                         "counter T2 private ts=100 value=5000\n"
                         "slice_end T1 private ts=300 thread_ts=9000\n"
                         "counter T2 private ts=300 value=9000\n");
  fake_host_free(fake);
}

/* --- processes, machines ---------------------------------------------------- */

static void test_process_tree(void) {
  fake_host *fake = run_fixture("process_tree");
  g_assert_cmpstr(fake_host_borrow_transcript(fake), ==,
                  "process p1\n"
                  "process_name p1 = /sbin/init\n"
                  "process_cmdline p1 = /sbin/init\n"
                  "process p0\n"
                  "process_parent p1 = p0\n"
                  "process_uid p1 = 0\n"
                  "process p42\n"
                  "process_name p42 = /usr/bin/app\n"
                  "process_cmdline p42 = /usr/bin/app --serve 8080\n"
                  "process_parent p42 = p1\n"
                  "process_uid p42 = 1010123\n"
                  /* A lone element is a whole command line: the name ends
                   * at the first space... */
                  "process p43\n"
                  "process_name p43 = worker\n"
                  "process_cmdline p43 = worker pool\n"
                  "process_parent p43 = p1\n"
                  /* ...unless it is the comm. pid 45 has no cmdline: skipped. */
                  "process p44\n"
                  "process_name p44 = kworker/0:1\n"
                  "process_cmdline p44 = kworker/0:1\n"
                  "process_parent p44 = p1\n"
                  "process_arg p44 is_kthread=true\n"
                  "thread t420 of p42\n"
                  "thread_name t420 = io\n"
                  "thread t421 of p42\n");
  fake_host_free(fake);
}

/* TraceUuid and TraceStats are their packet's machine's: the default
 * machine's through the file's own services, machine 3's through the
 * per-machine ones. The uuids are printed as the reader prints any (msb's
 * 16 hex digits, then lsb's); buffer 0's size is its traced_buf_ stat. */
static void test_service_packets_belong_to_their_machine(void) {
  fake_host *fake = run_fixture("machine_service");
  const char *transcript = fake_host_borrow_transcript(fake);
  g_assert_nonnull(strstr(transcript,
                          "metadata trace_uuid = \"00000000-0000-0001-0000-000000000002\"\n"));
  g_assert_nonnull(strstr(transcript,
                          "metadata raw3:trace_uuid = \"00000000-0000-0003-0000-000000000004\"\n"));
  g_assert_cmpuint(fake_host_count_lines(fake, "metadata"), ==, 2);
  g_assert_cmpint(fake_host_stat(fake, "traced_producers_connected"), ==, 2);
  g_assert_cmpint(fake_host_stat(fake, "raw3:traced_producers_connected"), ==, 5);
  g_assert_cmpint(fake_host_stat(fake, "raw3:traced_buf_buffer_size[0]"), ==, 4096);
  g_assert_cmpint(fake_host_stat(fake, "traced_buf_buffer_size[0]"), ==, 0);
  fake_host_free(fake);
}

/* On a host built before the per-machine services (its table ends where
 * machine_stat_set_indexed begins), what machine 3's packets say goes to
 * the file's own machine, as it did before those services: both uuids are
 * the file's (the later one kept by the host), and so are both
 * TraceStats (the default machine's packet comes last: 2 producers;
 * buffer 0 only machine 3's says). */
static void test_service_packets_without_per_machine_services_are_the_files(void) {
  g_autoptr(GBytes) bytes = read_fixture("machine_service");
  fake_host *fake = fake_host_new();
  fake_host_set_services_size(fake, offsetof(tm_host_services, machine_stat_set_indexed));
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  g_assert_cmpint(fake_host_run(fake, tracemerge_reader_entry(), data, len, len), ==, TM_OK);
  g_assert_null(fake_host_borrow_error(fake, NULL));
  fake_host_assert_lines(fake,
                         "metadata trace_uuid = \"00000000-0000-0001-0000-000000000002\"\n"
                         "metadata trace_uuid = \"00000000-0000-0003-0000-000000000004\"\n");
  g_assert_cmpuint(fake_host_count_lines(fake, "metadata"), ==, 2);
  g_assert_cmpint(fake_host_stat(fake, "traced_producers_connected"), ==, 2);
  g_assert_cmpint(fake_host_stat(fake, "traced_buf_buffer_size[0]"), ==, 4096);
  g_assert_cmpint(fake_host_stat(fake, "raw3:traced_producers_connected"), ==, 0);
  fake_host_free(fake);
}

/* On a host without the system services either (a table ending before
 * frame_timeline_begin): the stats traces report are not set (they are
 * what system traces report, proto_context.h), the metadata still is, on
 * the file's machine; nothing is called past the table's end. */
static void test_service_packets_without_system_services_keep_their_metadata(void) {
  g_autoptr(GBytes) bytes = read_fixture("machine_service");
  fake_host *fake = fake_host_new();
  fake_host_set_services_size(fake, offsetof(tm_host_services, frame_timeline_begin));
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  g_assert_cmpint(fake_host_run(fake, tracemerge_reader_entry(), data, len, len), ==, TM_OK);
  g_assert_null(fake_host_borrow_error(fake, NULL));
  g_assert_cmpuint(fake_host_count_lines(fake, "metadata trace_uuid = "), ==, 2);
  g_assert_cmpint(fake_host_stat(fake, "traced_producers_connected"), ==, 0);
  g_assert_cmpint(fake_host_stat(fake, "traced_buf_buffer_size[0]"), ==, 0);
  fake_host_free(fake);
}

/* ChromeEventBundle metadata: cr-<name> rows of the packet's machine, a
 * bool as an int and a JSON value as its text (as trace_processor keeps
 * them); the default machine's second bundle names its keys cr-2-<name>,
 * machine 3's first bundle is its own first; the entry without a value
 * is counted, not written. */
static void test_chrome_metadata_belongs_to_its_machine(void) {
  fake_host *fake = run_fixture("chrome_metadata");
  fake_host_assert_lines(fake, "metadata cr-product-version = \"Chrome/57.0\"\n"
                               "metadata cr-num-cpus = 6\n"
                               "metadata cr-highres-ticks = 1\n"
                               "metadata cr-trace-config = \"{\"record_mode\":\"continuous\"}\"\n"
                               "metadata cr-2-num-cpus = 8\n"
                               "metadata raw3:cr-num-cpus = 4\n");
  g_assert_cmpuint(fake_host_count_lines(fake, "metadata"), ==, 6);
  g_assert_cmpint(fake_host_stat(fake, "empty_chrome_metadata"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "proto_unmodelled_payload[5]"), ==, 0);
  fake_host_free(fake);
}

static void test_machines_remote_clock_sync(void) {
  fake_host *fake = run_fixture("machines");
  g_assert_cmpstr(fake_host_borrow_transcript(fake), ==,
                  "claim BOOTTIME@host\n"
                  "snapshot BOOTTIME@host=1000000 MONOTONIC@host=500000\n"
                  "machine raw7\n"
                  /* The sync is announced before any of its readings... */
                  "remote_clock_sync\n"
                  /* ...the client readings, each a snapshot of the vm... */
                  "snapshot BOOTTIME@raw7=5000\n"
                  "snapshot BOOTTIME@raw7=5300\n"
                  /* ...and the edge at the round-trip offset. */
                  "snapshot BOOTTIME@host=1000300 BOOTTIME@raw7=5375\n"
                  "slot T1 = global_merged_track_event name=\"Default Track\" on host cookie=0\n"
                  "slice_complete T1 BOOTTIME@host ts=1000200 name=host work dur=0\n"
                  "slot T2 = global_merged_track_event name=\"Default Track\" on raw7 cookie=0\n"
                  "slice_complete T2 BOOTTIME@raw7 ts=6000 name=vm work dur=0\n"
                  "process p70@raw7\n"
                  "thread t71@raw7 of p70@raw7\n"
                  "thread_name t71@raw7 = vcpu\n"
                  "track T3 = thread_execution t71@raw7\n"
                  "slice_complete T3 BOOTTIME@raw7 ts=6100 name=vm thread work dur=0\n");
  fake_host_free(fake);
}

static void test_system_info(void) {
  fake_host *fake = run_fixture("system_info");
  g_assert_cmpstr(fake_host_borrow_transcript(fake), ==,
                  "machine_info host sysname=\"Linux\"\n"
                  "metadata system_name = \"Linux\"\n"
                  "machine_info host release=\"6.1.0\"\n"
                  "metadata system_release = \"6.1.0\"\n"
                  "machine_info host version=\"#1 SMP\"\n"
                  "metadata system_version = \"#1 SMP\"\n"
                  "machine_info host arch=\"x86_64\"\n"
                  "metadata system_machine = \"x86_64\"\n"
                  "machine_info host android_build_fingerprint=\"acme/phone:14/AB12:user/release-keys\"\n"
                  "metadata android_build_fingerprint = \"acme/phone:14/AB12:user/release-keys\"\n"
                  "machine_info host android_device_manufacturer=\"Acme\"\n"
                  "metadata android_device_manufacturer = \"Acme\"\n"
                  "metadata tracing_service_version = \"Perfetto v45.0\"\n"
                  "machine_info host name=\"phone\"\n"
                  "machine_info host android_sdk_version=34\n"
                  "metadata android_sdk_version = 34\n"
                  "machine_info host num_cpus=8\n"
                  "metadata timezone_off_mins = -240\n"
                  "machine_info host system_ram_bytes=7600000000\n"
                  "metadata system_ram_bytes = 7600000000\n"
                  "metadata system_ram_gb = 8\n"
                  /* The embedded machine: its row only. */
                  "machine raw7\n"
                  "machine_info raw7 sysname=\"Linux\"\n"
                  "machine_info raw7 release=\"5.15.0\"\n"
                  "machine_info raw7 arch=\"aarch64\"\n"
                  "machine_info raw7 num_cpus=2\n");
  fake_host_free(fake);
}

/* --- stack profiles ----------------------------------------------------------- */

/* Callstack iids in the direct slots (below 65536) and in the map (above),
 * replaced after being resolved, forgotten by a clear; category and debug
 * string iids small and huge (see the fixture). Callsites are created on
 * first use and the fake host gives one ref per (parent, frame): main's
 * is S2, work's S4, main > work's S5. */
static void test_stacks_and_strings_by_iid_small_and_huge(void) {
  fake_host *fake = run_fixture("stacks_iids");
  fake_host_assert_lines(fake,
      "frame S1 name=main mapping=S0 rel_pc=0\n"
      "callsite S2 parent=S0 frame=S1\n"
      "sample t11 private ts=100 callsite=S2 cpu=0\n"
      "sample t11 private ts=110 callsite=S2 cpu=0\n"
      "frame S3 name=work mapping=S0 rel_pc=0\n"
      "callsite S4 parent=S0 frame=S3\n"
      "sample t11 private ts=120 callsite=S4 cpu=0\n"
      "callsite S5 parent=S2 frame=S3\n"
      "sample t11 private ts=130 callsite=S5 cpu=0\n"
      "sample t11 private ts=140 callsite=S5 cpu=0\n"
      "sample t11 private ts=150 callsite=S4 cpu=0\n"
      "slice_complete T1 private ts=160 cat=huge category name=huge category dur=0 "
      "args={debug.state=\"mapped string\"}\n"
      "slice_complete T1 private ts=170 cat=small category name=small category dur=0 "
      "args={debug.state=\"direct string\"}\n"
      "sample t11 private ts=180 callsite=S0 cpu=0\n");
  g_assert_cmpuint(fake_host_count_lines(fake, "callsite "), ==, 3);
  g_assert_cmpint(fake_host_stat(fake, "stackprofile_invalid_callstack_id"), ==, 1);
  fake_host_free(fake);
}

/* Stack rows are created when a sample or event first uses them, each once
 * per generation (callstack 2 and the event's callstack 1 reuse them), and
 * frames that arrived before their strings still resolve. Sequence 2's
 * sample after its loss is skipped; after the next clear its callstack iid
 * names nothing, so the sample has no stack (S0). */
static void test_stacks_resolve_when_first_used(void) {
  fake_host *fake = run_fixture("stacks");
  fake_host_assert_lines(fake,
      "mapping S1 name=/usr/bin/app build_id=01ab start=4096 end=8192 exact_offset=256 "
      "load_bias=64\n"
      "frame S2 name=main mapping=S1 rel_pc=16\n"
      "callsite S3 parent=S0 frame=S2\n"
      "frame S4 name=work mapping=S1 rel_pc=32\n"
      "callsite S5 parent=S3 frame=S4\n"
      "frame S6 name=leaf mapping=S1 rel_pc=48\n"
      "callsite S7 parent=S5 frame=S6\n"
      "sample t11 private ts=1000 callsite=S7 cpu=2\n"
      "sample t12 private ts=2000 callsite=S5 cpu=3\n"
      "slice_complete T1 private ts=2500 name=interned stack dur=0 args={callsite_id=6}\n"
      "frame S8 name=outer mapping=S0 rel_pc=0\n"
      "callsite S9 parent=S0 frame=S8\n"
      "frame S10 name=inner mapping=S0 rel_pc=0\n"
      "callsite S11 parent=S9 frame=S10\n"
      "slice_complete T1 private ts=2600 name=inline stack dur=0 args={callsite_id=10}\n"
      "mapping S12 name=/system/lib build_id=- start=0 end=0 exact_offset=0 load_bias=0\n"
      "frame S13 name=other mapping=S12 rel_pc=0\n"
      "callsite S14 parent=S0 frame=S13\n"
      "sample t21 private ts=3050 callsite=S14 cpu=0\n"
      "sample t21 private ts=3300 callsite=S0 cpu=0\n");
  g_assert_cmpuint(fake_host_count_lines(fake, "sample "), ==, 4);
  g_assert_cmpuint(fake_host_count_lines(fake, "mapping "), ==, 2);
  g_assert_cmpuint(fake_host_count_lines(fake, "frame "), ==, 6);
  g_assert_cmpuint(fake_host_count_lines(fake, "callsite "), ==, 6);
  g_assert_cmpint(fake_host_stat(fake, "packet_skipped_seq_needs_incremental_state_invalid"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "stackprofile_invalid_callstack_id"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "perf_samples_skipped_dataloss"), ==, 5);
  g_assert_cmpint(fake_host_stat(fake, "perf_samples_skipped"), ==, 1);
  g_assert_cmpint(fake_host_stat(fake, "perf_sample_missing_timestamp"), ==, 1);
  fake_host_free(fake);
}

/* --- probe ------------------------------------------------------------------- */

static int probe(const char *text, size_t len, const char *name) {
  return tracemerge_reader_entry()->probe((const uint8_t *)text, len, name);
}

static void test_probe(void) {
  g_autoptr(GBytes) bytes = read_fixture("track_events");
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  const tm_reader_descriptor *reader = tracemerge_reader_entry();
  g_assert_cmpint(reader->probe(data, MIN(len, 512), NULL), ==, 80);
  g_assert_cmpint(reader->probe(data, MIN(len, 512), "x.pftrace"), ==, 100);
  /* A head that ends inside the first packet still parses. */
  g_assert_cmpint(reader->probe(data, 9, NULL), ==, 80);
  /* A first packet that is one large field, cut by the head: a zstd
   * wrapper of 600 bytes (tag, 2-byte lengths) is a packet; a cut fixed64
   * field is not. */
  uint8_t wrapper[512] = {0x0a, 0xdb, 0x04, 0xaa, 0x08, 0xd8, 0x04, 0x28, 0xb5, 0x2f, 0xfd};
  g_assert_cmpint(reader->probe(wrapper, sizeof wrapper, NULL), ==, 80);
  g_assert_cmpint(probe("\x0a\x20\x09\x01\x02", 5, NULL), ==, 0);
  g_assert_cmpint(probe("\x0a\x20\x12\x05\x01", 5, NULL), ==, 80);
  g_assert_cmpint(probe("{\"traceEvents\":[]}", 18, "x.pftrace"), ==, 0);
  /* Text that starts with a newline is not a packet. */
  const char systrace[] = "\n# tracer: nop\n#\n# entries-in-buffer/entries-written: 1/1\n";
  g_assert_cmpint(probe(systrace, sizeof systrace - 1, NULL), ==, 0);
  g_assert_cmpint(probe("\n", 1, NULL), ==, 0);
  g_assert_cmpint(probe("", 0, NULL), ==, 0);
}

/* --- real traces -------------------------------------------------------------- */

/* Every real trace of tests/data/real/proto, fed in 64 KiB chunks
 * (run_bytes), reaches the host without an error and with these counts of
 * host calls. Derived by walking each file's TracePackets field by field
 * (python, wire format only; tests/derive/system_trace_counts.py has the
 * walker): snapshots = clock_snapshot packets (field 6); tokio's tracks =
 * the distinct track_uuid of its track_events (11.11), its 9 thread
 * descriptors, plus the process descriptor all 9 name as parent_uuid
 * (trace_processor makes a parent's track with its first child's), and
 * its slices from its README: 227 SLICE_BEGIN / 227 SLICE_END and 8
 * INSTANT.
 *
 * nowinandroid: 6246 ftrace print events: 3122 "B|" and 1 "S|" begin
 * (slice_begin), 3122 "E|" and 1 "F|" end; 7475 frame_timeline_events:
 * 801 + 801 display frame starts, 1068 actual and 1068 expected surface
 * frame starts of which 117 repeat a (pid, token) already seen (skipped,
 * so 3621 frame_begin, each with a cookie of its own), 3737 FrameEnds of
 * which the 117 skipped cookies' end nothing (3620 more slice_end, 6743 in
 * all). Threads: its 5 distinct print pids;
 * processes: the pid -1 the fake gives threads whose process ftrace does
 * not say, the atrace tgid 9305 and the 4 other frame timeline pids.
 * Tracks: the thread tracks of the 4 print pids that write "B|"; async
 * slots (track_async, a (set, cookie) each): the "Sync" slot of 9305 and
 * one per frame start (3622).
 *
 * systing: 44 ftrace bundles: 4284 softirq_entry/exit and 3
 * irq_handler_entry/exit (begins and ends), 22 compact_sched bundles with
 * 5053 switches and 3678 wakings: the first switch of each of 22 cpus
 * only names who runs next (5031 sched_switch) and the 22 wakings that
 * come before their cpu's first switch have no waker (3656 sched_waking).
 * Threads: the 218 distinct tids of process_tree threads, thread
 * descriptors, perf samples, ftrace event pids and compact next/waking
 * pids; processes: its 127 process pids and the fake's pid -1. */
static void test_real_traces_import_without_errors(void) {
  static const struct {
    const char *name;
    size_t begins, ends, instants, processes, threads, snapshots, tracks;
    size_t frame_begins, slots, switches, wakings;
  } traces[] = {
      {"nowinandroid-trace.perfetto-trace", 3123, 6743, 0, 6, 5, 4, 4, 3621, 3622, 0, 0},
      {"systing-trace.pb", 4287, 4287, 0, 128, 218, 1, 23, 0, 0, 5031, 3656},
      {"tokio-flight-recorder.pftrace", 227, 227, 8, 1, 9, 0, 10, 0, 0, 0, 0},
      {"winscope-input-events.perfetto-trace", 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0},
      {"winscope-no_winscope_traces.perfetto-trace", 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(traces); i++) {
    gsize len;
    char *data = corpus_real_read("proto", traces[i].name, &len);
    g_assert_cmpint(tracemerge_reader_entry()->probe((uint8_t *)data, MIN(len, 512), NULL),
                    >, 0);
    fake_host *fake = run_bytes((uint8_t *)data, len, 65536, TM_OK);
    g_assert_null(fake_host_borrow_error(fake, NULL));
    g_test_message("%s", traces[i].name);
    g_assert_cmpuint(fake_host_count_lines(fake, "slice_begin"), ==, traces[i].begins);
    g_assert_cmpuint(fake_host_count_lines(fake, "slice_end"), ==, traces[i].ends);
    g_assert_cmpuint(fake_host_count_lines(fake, "slice_complete"), ==, traces[i].instants);
    g_assert_cmpuint(fake_host_count_lines(fake, "process "), ==, traces[i].processes);
    g_assert_cmpuint(fake_host_count_lines(fake, "thread "), ==, traces[i].threads);
    g_assert_cmpuint(fake_host_count_lines(fake, "snapshot"), ==, traces[i].snapshots);
    g_assert_cmpuint(fake_host_count_lines(fake, "track "), ==, traces[i].tracks);
    g_assert_cmpuint(fake_host_count_lines(fake, "frame_begin"), ==, traces[i].frame_begins);
    g_assert_cmpuint(fake_host_count_lines(fake, "slot "), ==, traces[i].slots);
    g_assert_cmpuint(fake_host_count_lines(fake, "sched_switch"), ==, traces[i].switches);
    g_assert_cmpuint(fake_host_count_lines(fake, "sched_waking"), ==, traces[i].wakings);
    fake_host_free(fake);
    g_free(data);
  }
}

/* pw_read_varint and pw_read_varint_word give pw_read_varint_bounded's
 * length and value for every varint length 1..10, an 11-byte run of
 * continuation bytes (malformed), and each of them cut at every length
 * (truncated): the bytes are placed at the end of a buffer so that a cut
 * leaves nothing after `end`. */
static void test_fast_varint_reads_as_the_general_one(void) {
  uint8_t buf[16];
  for (size_t len = 1; len <= 11; len++) {
    for (size_t cut = 0; cut <= len; cut++) {
      for (int pattern = 0; pattern < 3; pattern++) {
        uint8_t *p = buf + sizeof buf - cut;
        uint8_t bytes[11];
        for (size_t i = 0; i < len; i++) {
          uint8_t low = (uint8_t)(pattern == 0 ? 0x7f : pattern == 1 ? 0 : (i * 37 + 11) & 0x7f);
          bytes[i] = (uint8_t)(low | (i + 1 < len || len == 11 ? 0x80 : 0));
        }
        memcpy(p, bytes, cut);
        uint64_t slow = 1, fast = 2;
        size_t n_slow = pw_read_varint_bounded(p, p + cut, &slow);
        size_t n_fast = pw_read_varint(p, p + cut, &fast);
        g_assert_cmpuint(n_fast, ==, n_slow);
        if (n_slow)
          g_assert_cmpuint(fast, ==, slow);
        uint64_t word = 3;
        size_t n_word = pw_read_varint_word(p, p + cut, &word);
        g_assert_cmpuint(n_word, ==, n_slow);
        if (n_slow)
          g_assert_cmpuint(word, ==, slow);
        /* Room after it: the unrolled path, and the word's for up to
         * eight bytes (the bytes after the varint are set, which it
         * must not read into the value). */
        for (int fill = 0; fill < 2; fill++) {
          uint8_t room[24];
          memset(room, fill ? 0xff : 0, sizeof room);
          memcpy(room, bytes, len);
          n_slow = pw_read_varint_bounded(room, room + sizeof room, &slow);
          n_fast = pw_read_varint(room, room + sizeof room, &fast);
          g_assert_cmpuint(n_fast, ==, n_slow);
          g_assert_cmpuint(n_fast, ==, len == 11 ? 0 : len);
          if (n_slow)
            g_assert_cmpuint(fast, ==, slow);
          n_word = pw_read_varint_word(room, room + sizeof room, &word);
          g_assert_cmpuint(n_word, ==, n_slow);
          if (n_slow)
            g_assert_cmpuint(word, ==, slow);
        }
      }
    }
  }
}

/* The reader clears its per-packet and per-event structs field by field
 * (faster than a memset): a field added to one and not to its clearing
 * would start with the last packet's value. Each struct is cleared twice,
 * over two different poisons; with the padding bytes (which no field
 * owns) cleared, the two copies are equal only if the clearing wrote
 * every field. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
#define HAVE_CLEAR_PADDING 1
#endif
#endif
#ifdef HAVE_CLEAR_PADDING
static void test_packet_clear_sets_every_field(void) {
  proto_packet a, b;
  memset(&a, 0x5a, sizeof a);
  memset(&b, 0xa5, sizeof b);
  proto_packet_clear(&a);
  proto_packet_clear(&b);
  __builtin_clear_padding(&a);
  __builtin_clear_padding(&b);
  g_assert_cmpmem(&a, sizeof a, &b, sizeof b);
}

static void test_event_start_sets_every_field(void) {
  proto_event a, b;
  memset(&a, 0x5a, sizeof a);
  memset(&b, 0xa5, sizeof b);
  proto_event_start(&a, 3, 7, 1);
  proto_event_start(&b, 3, 7, 1);
  __builtin_clear_padding(&a);
  __builtin_clear_padding(&b);
  g_assert_cmpmem(&a, sizeof a, &b, sizeof b);
}
#endif

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/proto/reader/clocks/default-clock-sequence-clocks-and-units", test_clocks);
  g_test_add_func("/proto/reader/clocks/a-sequence-clock-before-its-snapshot-is-not-placed",
                  test_sequence_clock_before_its_snapshot_is_not_placed);
  g_test_add_func("/proto/reader/interning/annotation-keys-follow-the-entry",
                  test_interned_annotation_keys_follow_the_entry);
  g_test_add_func("/proto/reader/interning/built-annotation-keys-survive-the-key-cache",
                  test_built_annotation_keys_survive_the_key_cache);
  g_test_add_func("/proto/reader/map/clear-and-growth", test_map_clear_and_growth);
#ifdef HAVE_CLEAR_PADDING /* GCC 11 on; clang (the fuzz build) has none */
  g_test_add_func("/proto/reader/clearing/packet-clear-sets-every-field",
                  test_packet_clear_sets_every_field);
  g_test_add_func("/proto/reader/clearing/event-start-sets-every-field",
                  test_event_start_sets_every_field);
#endif
  g_test_add_func("/proto/reader/interning/small-and-large-iids",
                  test_interning_small_and_large_iids);
  g_test_add_func("/proto/reader/interning/two-sequences-one-loses-state",
                  test_interning_two_sequences_one_loses_state);
  g_test_add_func("/proto/reader/track-events/every-feature-reaches-the-host",
                  test_track_events);
  g_test_add_func("/proto/reader/track-events/thread-time-counter-gives-slice-thread-time",
                  test_thread_time_counter_gives_slice_thread_time);
  g_test_add_func("/proto/reader/framing/one-byte-chunks-give-the-same-transcript",
                  test_one_byte_chunks_give_the_same_transcript);
  g_test_add_func("/proto/reader/process-tree/names-cmdlines-parents-uids-threads",
                  test_process_tree);
  g_test_add_func("/proto/reader/machines/remote-clock-sync-relates-the-vm-to-the-host",
                  test_machines_remote_clock_sync);
  g_test_add_func("/proto/reader/machines/service-packets-belong-to-their-machine",
                  test_service_packets_belong_to_their_machine);
  g_test_add_func("/proto/reader/machines/service-packets-without-per-machine-services-are-the-files",
                  test_service_packets_without_per_machine_services_are_the_files);
  g_test_add_func("/proto/reader/machines/service-packets-without-system-services-keep-their-metadata",
                  test_service_packets_without_system_services_keep_their_metadata);
  g_test_add_func("/proto/reader/chrome-metadata/belongs-to-its-machine",
                  test_chrome_metadata_belongs_to_its_machine);
  g_test_add_func("/proto/reader/system-info/fills-machine-rows-and-host-metadata",
                  test_system_info);
  g_test_add_func("/proto/reader/stacks/resolve-when-first-used-once-per-generation",
                  test_stacks_resolve_when_first_used);
  g_test_add_func("/proto/reader/stacks/callstack-and-string-iids-small-huge-replaced-cleared",
                  test_stacks_and_strings_by_iid_small_and_huge);
  g_test_add_func("/proto/reader/legacy-events/phases-ids-scopes-flows-overrides",
                  test_legacy_events);
  g_test_add_func("/proto/reader/legacy-events/flow-v1-binds-and-zero-pid-tid-are-errors",
                  test_legacy_flows);
  g_test_add_func("/proto/reader/probe/recognises-packets-and-rejects-text", test_probe);
  g_test_add_func("/proto/reader/wire/fast-varint-reads-as-the-general-one",
                  test_fast_varint_reads_as_the_general_one);
  g_test_add_func("/proto/reader/real-traces/import-without-errors",
                  test_real_traces_import_without_errors);
  return g_test_run();
}
