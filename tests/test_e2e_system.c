/*
 * End-to-end: system traces (Perfetto protobuf written by traced) through
 * the CLI: every ftrace event kind the proto reader models, in the
 * expanded and compact encodings (tests/data/proto/ftrace_kinds), the
 * bundles' clocks and a remote machine's ftrace (ftrace_clocks), the
 * Android and service payloads (tests/data/proto/android_system), damaged
 * bundles, and a phone's system trace merged with a server's Chrome JSON.
 * Expected rows are worked out beside each query from the fixture's
 * events and trace_processor's rules (restated in
 * plugins/proto/proto_ftrace_kinds.h and proto_android.h).
 */
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "e2e_support.h"
#include "proto_wire_encode.h"

/* The CSV text of `sql` on the built fixture tests/data/proto/NAME. */
static char *query(const char *name, const char *sql) {
  return e2e_query_proto_fixture(name, sql);
}

/* --- every ftrace kind ------------------------------------------------------ */

/* cpu 0 (expanded): app (10) runs 1000-2000 and leaves sleeping, the
 * swapper after it. cpu 1 (compact): its first switch (1000, to the
 * swapper) only says who runs; worker (11) runs 1500-1800 and leaves
 * sleeping (prev_state 1). Rows: sched has one per switch but cpu 1's
 * first, ordered by ts. */
static void test_sched_from_both_encodings(void) {
  g_autofree char *sched = query("ftrace_kinds",
      "SELECT s.ts, s.dur, s.cpu, t.tid, s.end_state, s.priority FROM sched s "
      "JOIN thread t USING (utid) ORDER BY s.ts, s.cpu");
  e2e_assert_text(sched, "\"ts\",\"dur\",\"cpu\",\"tid\",\"end_state\",\"priority\"\n"
                         "1000,1000,0,10,\"S\",120\n"
                         "1500,300,1,11,\"S\",120\n"
                         "1800,-1,1,0,\"[NULL]\",120\n"
                         "2000,-1,0,0,\"[NULL]\",120\n");
}

/* thread_state, as trace_processor's ThreadStateTracker: app Running on
 * cpu 0 from 1000, then S from 2000 with io_wait 1 and blocked_function
 * "do_sys_poll" (the sched_blocked_reason at 2100 marks its latest sleep;
 * its caller is kernel_symbols iid 1); worker Runnable
 * from 1100 (expanded sched_waking by app), its compact waking at 1200
 * ignored (already Runnable) and the one at 900 dropped (before cpu 1's
 * first switch), Running on cpu 1 1500-1800, then S; the new task 12
 * Runnable from its task_newtask at 1900, woken by app. The swapper has
 * no states. */
static void test_thread_state_from_both_encodings(void) {
  g_autofree char *states = query("ftrace_kinds",
      "SELECT s.ts, s.dur, t.tid, s.state, s.io_wait, s.blocked_function, s.cpu, "
      "w.tid AS waker FROM thread_state s JOIN thread t USING (utid) "
      "LEFT JOIN thread w ON w.utid = s.waker_utid ORDER BY s.ts, t.tid");
  e2e_assert_text(states,
      "\"ts\",\"dur\",\"tid\",\"state\",\"io_wait\",\"blocked_function\",\"cpu\",\"waker\"\n"
      "1000,1000,10,\"Running\",\"[NULL]\",\"[NULL]\",0,\"[NULL]\"\n"
      "1100,400,11,\"R\",\"[NULL]\",\"[NULL]\",\"[NULL]\",10\n"
      "1500,300,11,\"Running\",\"[NULL]\",\"[NULL]\",1,\"[NULL]\"\n"
      "1800,-1,11,\"S\",\"[NULL]\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "1900,-1,12,\"R\",\"[NULL]\",\"[NULL]\",\"[NULL]\",10\n"
      "2000,-1,10,\"S\",1,\"do_sys_poll\",\"[NULL]\",\"[NULL]\"\n");
  g_autofree char *stats = query("ftrace_kinds",
      "SELECT name, value FROM stats WHERE value > 0 ORDER BY name");
  /* The compact switch and waking before cpu 1 knows who runs, and the
   * print "not atrace". */
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         "\"compact_sched_switch_skipped\",1\n"
                         "\"compact_sched_waking_skipped\",1\n"
                         "\"systrace_parse_failure\",1\n");
}

/* Slices: atrace B/E (work 1200-1500) with an I instant inside it (depth
 * 1), the S/F async slice 1250-1800 on its own track, the softirq TIMER
 * (vector 1) 1600-1700 and the irq "IRQ (eth0)" 1610-1650 on cpu 0's
 * SoftIrq / Irq tracks (category irq, the exit's ret as an arg),
 * suspend_enter(3) 3000-3100, and atrace's named-track forms on the
 * process's track "net": the N instant "ping" at 4500 and the G/H slice
 * "fetch" 4600-4700 (as the systrace reader reads the same lines,
 * test_e2e_systrace.c). */
static void test_slices_from_print_irq_and_suspend(void) {
  g_autofree char *slices = query("ftrace_kinds",
      "SELECT s.ts, s.dur, s.depth, s.name, s.category, t.name AS track, t.type "
      "FROM slice s JOIN track t ON t.id = s.track_id ORDER BY s.ts");
  e2e_assert_text(slices,
      "\"ts\",\"dur\",\"depth\",\"name\",\"category\",\"track\",\"type\"\n"
      "1200,300,0,\"work\",\"[NULL]\",\"[NULL]\",\"thread_execution\"\n"
      "1250,550,0,\"async\",\"[NULL]\",\"async\",\"atrace_async_slice\"\n"
      "1400,0,1,\"mark\",\"[NULL]\",\"[NULL]\",\"thread_execution\"\n"
      "1600,100,0,\"TIMER\",\"irq\",\"SoftIrq Cpu 0\",\"cpu_softirq\"\n"
      "1610,40,0,\"IRQ (eth0)\",\"irq\",\"Irq Cpu 0\",\"cpu_irq\"\n"
      "3000,100,0,\"suspend_enter(3)\",\"[NULL]\",\"Suspend/Resume Latency\","
      "\"suspend_resume\"\n"
      "4500,0,0,\"ping\",\"[NULL]\",\"net\",\"atrace_async_slice_for_track\"\n"
      "4600,100,0,\"fetch\",\"[NULL]\",\"net\",\"atrace_async_slice_for_track\"\n");
  g_autofree char *ret = query("ftrace_kinds",
      "SELECT a.key, a.display_value FROM slice s JOIN args a USING (arg_set_id) "
      "WHERE s.name = 'IRQ (eth0)'");
  e2e_assert_text(ret, "\"key\",\"display_value\"\n\"ret\",\"handled\"\n");
}

/* Counters, one per event value: cpufreq and cpuidle on cpu 0's tracks,
 * the atrace C counter, clock_set_rate / enable / disable of gpu_clk,
 * gpufreq, mm_event type 1 (maj_flt) count, max_lat and avg_lat, rss_stat
 * member 1 (anon), and the ion / dma heap totals and changes. */
static void test_counters_from_every_kind(void) {
  g_autofree char *counters = query("ftrace_kinds",
      "SELECT c.ts, CAST(c.value AS INT), t.name, t.type FROM counter c "
      "JOIN track t ON t.id = c.track_id ORDER BY c.ts, c.id");
  e2e_assert_text(counters,
      "\"ts\",\"CAST(c.value AS INT)\",\"name\",\"type\"\n"
      "1000,1500000,\"cpufreq\",\"cpu_frequency\"\n"
      "1050,1,\"cpuidle\",\"cpu_idle\"\n"
      "1300,42,\"queue\",\"atrace_counter\"\n"
      "3200,500,\"gpu_clk\",\"clock_frequency\"\n"
      "3210,1,\"gpu_clk\",\"clock_state\"\n"
      "3220,0,\"gpu_clk\",\"clock_state\"\n"
      "3300,300,\"gpufreq\",\"gpu_frequency\"\n"
      "3400,3,\"mem.mm.maj_flt.count\",\"thread_counter\"\n"
      "3400,7,\"mem.mm.maj_flt.max_lat\",\"thread_counter\"\n"
      "3400,5,\"mem.mm.maj_flt.avg_lat\",\"thread_counter\"\n"
      "3500,4096,\"mem.rss.anon\",\"thread_counter\"\n"
      "3600,1000,\"mem.ion.system\",\"android_ion\"\n"
      "3600,100,\"mem.ion_change.system\",\"thread_counter\"\n"
      "3610,1200,\"mem.ion\",\"android_ion\"\n"
      "3610,200,\"mem.ion_change\",\"thread_counter\"\n"
      "3620,1500,\"mem.dma_heap\",\"android_ion\"\n"
      "3620,300,\"mem.dma_heap_change\",\"thread_counter\"\n");
  g_autofree char *cpu = query("ftrace_kinds",
      "SELECT t.name, t.cpu FROM cpu_counter_track t ORDER BY t.name");
  e2e_assert_text(cpu, "\"name\",\"cpu\"\n\"cpufreq\",0\n\"cpuidle\",0\n");
}

/* Threads: names from the switches' comms (app, and worker's "Jit thread
 * pool", blanks kept, from the compact intern table and the expanded
 * sched_waking alike) and task_rename (child -> renamed); thread 12 starts at its task_newtask (1900) and ends
 * at sched_process_free (2500); app joins process 10 by its atrace "B|10". */
static void test_thread_names_and_lifetimes(void) {
  g_autofree char *threads = query("ftrace_kinds",
      "SELECT t.tid, t.name, t.start_ts, t.end_ts, p.pid FROM thread t "
      "LEFT JOIN process p USING (upid) ORDER BY t.tid");
  e2e_assert_text(threads, "\"tid\",\"name\",\"start_ts\",\"end_ts\",\"pid\"\n"
                           "0,\"swapper\",\"[NULL]\",\"[NULL]\",0\n"
                           "10,\"app\",\"[NULL]\",\"[NULL]\",10\n"
                           "11,\"Jit thread pool\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
                           "12,\"renamed\",1900,2500,12\n");
}

/* Events the reader does not model are ftrace_event (raw) rows with their
 * fields as args, named as proto/ftrace.proto names them; a workqueue
 * event's function is its kernel_symbols name (iid 2, "flush_to_ldisc"),
 * or the number when the iid (9) is not interned. */
static void test_other_events_are_raw_rows(void) {
  g_autofree char *raw = query("ftrace_kinds",
      "SELECT e.ts, e.name, e.cpu, t.tid, "
      "(SELECT group_concat(key || '=' || display_value, ' ') FROM "
      "(SELECT key, display_value FROM args a WHERE a.arg_set_id = e.arg_set_id ORDER BY key)) "
      "FROM ftrace_event e JOIN thread t USING (utid) ORDER BY e.ts");
  e2e_assert_text(raw,
      "\"ts\",\"name\",\"cpu\",\"tid\",\"(SELECT group_concat(key || '=' || display_value, "
      "' ') FROM (SELECT key, display_value FROM args a WHERE a.arg_set_id = e.arg_set_id "
      "ORDER BY key))\"\n"
      "2400,\"sched_process_exit\",0,12,\"comm=renamed pid=12 prio=120 tgid=12\"\n"
      "3700,\"kmalloc\",0,10,\"bytes_alloc=64 bytes_req=60 call_site=4096 gfp_flags=0 "
      "ptr=8192\"\n"
      "3800,\"workqueue_execute_start\",0,10,\"function=flush_to_ldisc work=16\"\n"
      "3900,\"workqueue_queue_work\",0,10,\"function=9 work=16\"\n"
      /* Events named in the schema for this alone (field names and
       * values as the fixture writes them; temp_prev -1 is an int32). */
      "4000,\"binder_transaction\",0,10,\"code=1 debug_id=7 flags=16 reply=0 "
      "target_node=3 to_proc=20 to_thread=21\"\n"
      "4100,\"block_rq_issue\",0,10,\"bytes=4096 comm=app dev=8 nr_sector=8 rwbs=R "
      "sector=100\"\n"
      "4200,\"tracing_mark_write\",0,10,\"pid=10 trace_begin=1 trace_name=kickoff\"\n"
      "4300,\"thermal_temperature\",0,0,\"id=1 temp=45000 temp_prev=-1 "
      "thermal_zone=cpu\"\n"
      "4400,\"wakeup_source_activate\",0,0,\"name=alarm state=0\"\n"
      /* A generic event: named by its event_name, args by its fields'
       * names (the one without a value is none). */
      "4450,\"sugov_set_iowait_boost\",0,10,\"boost=-1 cpu=2 reason=io\"\n");
  /* 4 events of the first kinds, the 5 above and the generic one. */
  g_autofree char *same = query("ftrace_kinds", "SELECT count(*) FROM raw");
  e2e_assert_text(same, "\"count(*)\"\n10\n");
}

/* --- clocks and machines --------------------------------------------------- */

/* ftrace_clocks (its comments give the clocks): cpu 0's MONO_RAW
 * timestamps land 1000 later on trace time (switch 3000, sched_wakeup
 * 3100, sched_wakeup_new 3200, slice "raw" 3300-3500); cpu 1's GLOBAL
 * ones by the bundle's pair (150 -> 20050); cpu 2's LOCAL bundle is
 * dropped, a stat and a log. The vm's (machine 7) switches at its 6000
 * and 6100 land at 10925 and 11025 on its own cpu row: cpu 0 of machine
 * 7, ucpu 1 (sched.cpu holds the ucpu, as in trace_processor), and its
 * threads are the vm's. */
static void test_bundles_on_every_clock_and_machine(void) {
  g_autofree char *sched = query("ftrace_clocks",
      "SELECT s.ts, s.dur, s.cpu, c.cpu AS machine_cpu, m.raw_id, t.tid, s.end_state "
      "FROM sched s JOIN thread t USING (utid) JOIN cpu c ON c.id = s.ucpu "
      "JOIN machine m ON m.id = c.machine_id ORDER BY s.ts");
  e2e_assert_text(sched, "\"ts\",\"dur\",\"cpu\",\"machine_cpu\",\"raw_id\",\"tid\",\"end_state\"\n"
                         "3000,-1,0,0,0,20,\"[NULL]\"\n"
                         "10925,100,1,0,7,71,\"S\"\n"
                         "11025,-1,1,0,7,0,\"[NULL]\"\n");
  /* sched_wakeup and sched_wakeup_new make Runnable states woken by app,
   * and name the woken threads from their comm. */
  g_autofree char *states = query("ftrace_clocks",
      "SELECT s.ts, s.dur, t.tid, t.name, s.state, w.tid AS waker, m.raw_id "
      "FROM thread_state s JOIN thread t USING (utid) LEFT JOIN thread w "
      "ON w.utid = s.waker_utid JOIN machine m ON m.id = t.machine_id ORDER BY s.ts, t.tid");
  e2e_assert_text(states, "\"ts\",\"dur\",\"tid\",\"name\",\"state\",\"waker\",\"raw_id\"\n"
                          "3000,-1,20,\"app\",\"Running\",\"[NULL]\",0\n"
                          "3100,-1,21,\"waited\",\"R\",20,0\n"
                          "3200,-1,22,\"born\",\"R\",20,0\n"
                          "10925,100,71,\"vcpu\",\"Running\",\"[NULL]\",7\n"
                          "11025,-1,71,\"vcpu\",\"S\",\"[NULL]\",7\n");
  g_autofree char *slices = query("ftrace_clocks",
      "SELECT ts, dur, name FROM slice ORDER BY ts");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"name\"\n3300,200,\"raw\"\n20050,100,\"global\"\n");
  g_autofree char *dropped = query("ftrace_clocks",
      "SELECT l.name, a.display_value FROM _trace_import_logs l JOIN args a USING (arg_set_id) "
      "WHERE a.key = 'ftrace_clock'");
  /* FTRACE_CLOCK_LOCAL is 3. */
  e2e_assert_text(dropped, "\"name\",\"display_value\"\n\"ftrace_bundle_unsupported_clock\",\"3\"\n");
}

/* --- damage ------------------------------------------------------------------- */

/* Field `number` (length-delimited) holding `len` bytes of `data`. */
static void put_bytes(GByteArray *out, uint32_t number, const uint8_t *data, size_t len) {
  wire_put_varint(out, (uint64_t)number << 3 | 2);
  wire_put_varint(out, len);
  g_byte_array_append(out, data, (guint)len);
}

/* A packet {ftrace_events {cpu 0, <body>}}. */
static void put_bundle(GByteArray *file, const uint8_t *body, size_t len) {
  GByteArray *bundle = g_byte_array_new();
  const uint8_t cpu0[] = {0x08, 0x00};
  g_byte_array_append(bundle, cpu0, sizeof cpu0);
  g_byte_array_append(bundle, body, (guint)len);
  GByteArray *packet = g_byte_array_new();
  put_bytes(packet, 1, bundle->data, bundle->len);
  put_bytes(file, 1, packet->data, packet->len);
  g_byte_array_free(packet, TRUE);
  g_byte_array_free(bundle, TRUE);
}

/* The fixture ftrace_damage as a growable byte array, for tests that
 * append bundles to it. */
static GByteArray *ftrace_damage_file(void) {
  e2e_bytes base = e2e_proto_fixture("ftrace_damage");
  GByteArray *file = g_byte_array_new();
  g_byte_array_append(file, (const uint8_t *)base.data, (guint)base.len);
  g_free(base.data);
  return file;
}

/* ftrace_damage (its comments say what each bundle holds) and, appended,
 * an event whose id (999) the schema does not name and a compact_sched
 * whose packed switch_timestamp ends inside a varint. Each is a stat with
 * an import log row saying what happened, nothing else of it is read, and
 * what comes before and after is: the slice "before" (1000-2000) spans
 * the damage, the 10 -> 11 switch at 1100 is the one sched row. */
static GByteArray *damaged_trace(void) {
  GByteArray *file = ftrace_damage_file();
  /* event {timestamp 1600, pid 10, 999: "x"} */
  GByteArray *event = g_byte_array_new();
  const uint8_t header[] = {0x08, 0xc0, 0x0c, 0x10, 0x0a};
  g_byte_array_append(event, header, sizeof header);
  put_bytes(event, 999, (const uint8_t *)"x", 1);
  GByteArray *body = g_byte_array_new();
  put_bytes(body, 2, event->data, event->len);
  put_bundle(file, body->data, body->len);
  /* compact_sched {switch_timestamp (packed): 10000, then a cut varint} */
  const uint8_t cut[] = {0x90, 0x4e, 0x80};
  GByteArray *compact = g_byte_array_new();
  put_bytes(compact, 1, cut, sizeof cut);
  g_byte_array_set_size(body, 0);
  put_bytes(body, 4, compact->data, compact->len);
  put_bundle(file, body->data, body->len);
  g_byte_array_free(compact, TRUE);
  g_byte_array_free(body, TRUE);
  g_byte_array_free(event, TRUE);
  return file;
}

static void test_damaged_bundles_are_counted_and_logged(void) {
  g_autofree char *dir = e2e_tmpdir();
  GByteArray *file = damaged_trace();
  g_autofree char *path = e2e_write_file(dir, "damaged.pftrace", (const char *)file->data,
                                         file->len);
  const char *inputs[] = {"damaged.pftrace", NULL};
  g_autofree char *kept = e2e_query_in(dir, inputs,
      "SELECT (SELECT group_concat(name || ' ' || ts || ' ' || dur) FROM slice), "
      "(SELECT group_concat(ts || ' ' || cpu) FROM sched)");
  e2e_assert_text(kept, "\"(SELECT group_concat(name || ' ' || ts || ' ' || dur) FROM "
                        "slice)\",\"(SELECT group_concat(ts || ' ' || cpu) FROM sched)\"\n"
                        "\"before 1000 1000\",\"1100 0\"\n");
  g_autofree char *logs = e2e_query_in(dir, inputs,
      "SELECT l.name, a.key, a.display_value FROM _trace_import_logs l "
      "JOIN args a USING (arg_set_id) WHERE a.key IN ('message', 'event_id', 'cpu') "
      "ORDER BY l.id, a.key");
  e2e_assert_text(logs,
      "\"name\",\"key\",\"display_value\"\n"
      "\"compact_sched_has_parse_errors\",\"message\",\"compact sched_switch arrays of "
      "unequal length; the events every array covers kept\"\n"
      "\"compact_sched_has_parse_errors\",\"message\",\"a comm index past the intern "
      "table; the events from it on dropped\"\n"
      "\"ftrace_cpu_out_of_range\",\"cpu\",\"7\"\n"
      "\"ftrace_cpu_out_of_range\",\"message\",\"ftrace data of cpu 7 beyond the "
      "machine's cpus; dropped\"\n"
      "\"proto_ftrace_unknown_event\",\"event_id\",\"999\"\n"
      "\"proto_ftrace_unknown_event\",\"message\",\"ftrace event id 999 is not in the "
      "schema; kept as ftrace_event unknown_ftrace_event_999, its fields by number\"\n"
      "\"compact_sched_has_parse_errors\",\"message\",\"a compact_sched array is cut "
      "short; the values before the cut kept\"\n"
      /* ...which leaves switch_timestamp one value and the others none. */
      "\"compact_sched_has_parse_errors\",\"message\",\"compact sched_switch arrays of "
      "unequal length; the events every array covers kept\"\n");
  g_byte_array_free(file, TRUE);
  e2e_cleanup(dir);
}

/* Field `number` as a varint. */
static void put_varint_field(GByteArray *out, uint32_t number, uint64_t v) {
  wire_put_varint(out, (uint64_t)number << 3);
  wire_put_varint(out, v);
}

/* An event {timestamp `ts`, pid 10, <id>: `payload`} (length-delimited). */
static void put_event(GByteArray *body, uint64_t ts, uint32_t id, const uint8_t *payload,
                      size_t len) {
  GByteArray *event = g_byte_array_new();
  put_varint_field(event, 1, ts);
  put_varint_field(event, 2, 10);
  put_bytes(event, id, payload, len);
  put_bytes(body, 2, event->data, event->len);
  g_byte_array_free(event, TRUE);
}

/* Events whose ids (999, 1000, 1001) the schema does not name are still
 * ftrace_event rows, "unknown_ftrace_event_<id>", each field an arg
 * "field_<n>" with its wire value, counted as proto_ftrace_unknown_event:
 * 999 holds a varint 5 and again 6 (field 1, repeated), -3 as a 10-byte
 * varint (read as the int64 it encodes), a fixed64 0x0102030405060708
 * (72623859790382856), a fixed32 7, the text "text", and bytes 00 ff that
 * are no text (hex); 1000's payload (ff) does not parse as fields, so it
 * is one arg "payload" in hex, and the bundle read on; 1001 is a varint,
 * so it has no fields: a row without args. The base file (ftrace_damage)
 * knows every id it holds. */
static void test_unknown_event_ids_are_rows_with_fields_by_number(void) {
  g_autofree char *dir = e2e_tmpdir();
  GByteArray *file = ftrace_damage_file();
  GByteArray *payload = g_byte_array_new();
  put_varint_field(payload, 1, 5);
  put_varint_field(payload, 2, (uint64_t)-3);
  wire_put_varint(payload, 3 << 3 | 1);
  const uint8_t fixed64[] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
  g_byte_array_append(payload, fixed64, sizeof fixed64);
  wire_put_varint(payload, 4 << 3 | 5);
  const uint8_t fixed32[] = {0x07, 0x00, 0x00, 0x00};
  g_byte_array_append(payload, fixed32, sizeof fixed32);
  put_bytes(payload, 5, (const uint8_t *)"text", 4);
  const uint8_t binary[] = {0x00, 0xff};
  put_bytes(payload, 6, binary, sizeof binary);
  put_varint_field(payload, 1, 6);
  GByteArray *body = g_byte_array_new();
  put_event(body, 1200, 999, payload->data, payload->len);
  const uint8_t cut[] = {0xff};
  put_event(body, 1300, 1000, cut, sizeof cut);
  GByteArray *event = g_byte_array_new();
  put_varint_field(event, 1, 1400);
  put_varint_field(event, 2, 10);
  put_varint_field(event, 1001, 3);
  put_bytes(body, 2, event->data, event->len);
  put_bundle(file, body->data, body->len);
  g_autofree char *path = e2e_write_file(dir, "unknown.pftrace", (const char *)file->data,
                                         file->len);
  const char *inputs[] = {"unknown.pftrace", NULL};
  g_autofree char *rows = e2e_query_in(dir, inputs,
      "SELECT e.ts, e.name, e.cpu, t.tid, (SELECT group_concat(key || '=' || display_value, ' ') "
      "FROM (SELECT key, display_value FROM args a WHERE a.arg_set_id = e.arg_set_id "
      "ORDER BY a.id)) AS args FROM ftrace_event e JOIN thread t USING (utid) ORDER BY e.ts");
  e2e_assert_text(rows,
      "\"ts\",\"name\",\"cpu\",\"tid\",\"args\"\n"
      "1200,\"unknown_ftrace_event_999\",0,10,\"field_1=5 field_2=-3 "
      "field_3=72623859790382856 field_4=7 field_5=text field_6=0x00ff field_1=6\"\n"
      "1300,\"unknown_ftrace_event_1000\",0,10,\"payload=0xff\"\n"
      "1400,\"unknown_ftrace_event_1001\",0,10,\"[NULL]\"\n");
  g_autofree char *stats = e2e_query_in(dir, inputs,
      "SELECT name, severity, value FROM stats WHERE name = 'proto_ftrace_unknown_event'");
  e2e_assert_text(stats, "\"name\",\"severity\",\"value\"\n"
                         "\"proto_ftrace_unknown_event\",\"info\",3\n");
  g_byte_array_free(event, TRUE);
  g_byte_array_free(body, TRUE);
  g_byte_array_free(payload, TRUE);
  g_byte_array_free(file, TRUE);
  e2e_cleanup(dir);
}

/* A modelled event whose known field comes with another wire type than
 * the schema's is dropped and counted (proto_packet_wrong_wire_type), and
 * the next event is read: a print at 1200 whose buf (field 2, a string)
 * is a varint, then a print at 1300 "B|10|ok", which opens the slice "ok"
 * on thread 10 inside the base file's "before" (1000); the base's "E|10"
 * at 2000 closes the deepest open slice, "ok": dur 700. The reader's fast
 * path for common fields must leave such a field to the checked path. The
 * base file (ftrace_damage) has no other slice at or after 1200 and no
 * field of a wrong wire type. */
static void test_a_field_of_the_wrong_wire_type_drops_its_event(void) {
  g_autofree char *dir = e2e_tmpdir();
  GByteArray *file = ftrace_damage_file();
  GByteArray *payload = g_byte_array_new();
  put_varint_field(payload, 2, 5);
  GByteArray *body = g_byte_array_new();
  put_event(body, 1200, 3, payload->data, payload->len);
  g_byte_array_set_size(payload, 0);
  put_bytes(payload, 2, (const uint8_t *)"B|10|ok", 7);
  put_event(body, 1300, 3, payload->data, payload->len);
  put_bundle(file, body->data, body->len);
  g_autofree char *path = e2e_write_file(dir, "wrong_wire.pftrace", (const char *)file->data,
                                         file->len);
  const char *inputs[] = {"wrong_wire.pftrace", NULL};
  g_autofree char *rows = e2e_query_in(dir, inputs,
      "SELECT (SELECT group_concat(name || ' ' || ts || ' ' || dur) FROM slice WHERE ts >= 1200), "
      "(SELECT value FROM stats WHERE name = 'proto_packet_wrong_wire_type')");
  e2e_assert_text(rows,
      "\"(SELECT group_concat(name || ' ' || ts || ' ' || dur) FROM slice WHERE ts >= 1200)\","
      "\"(SELECT value FROM stats WHERE name = 'proto_packet_wrong_wire_type')\"\n"
      "\"ok 1300 700\",1\n");
  g_byte_array_free(body, TRUE);
  g_byte_array_free(payload, TRUE);
  g_byte_array_free(file, TRUE);
  e2e_cleanup(dir);
}

/* A print is read the same whatever the order of its fields: the reader
 * takes {ip 1, buf 2} by a shortcut and any other shape through the
 * general decode. Here "B|10|late" comes as {buf, ip} (general), its end
 * as {ip, buf} (shortcut), "B|10|bare" as {buf} alone (shortcut) and its
 * end as {buf, buf} (general: the last one counts, as in protobuf):
 * slices "late" 1200-1300 and "bare" 1400-1500. */
static void test_prints_of_any_field_order_read_alike(void) {
  g_autofree char *dir = e2e_tmpdir();
  GByteArray *file = ftrace_damage_file();
  GByteArray *payload = g_byte_array_new();
  GByteArray *body = g_byte_array_new();
  put_bytes(payload, 2, (const uint8_t *)"B|10|late", 9);
  put_varint_field(payload, 1, 77);
  put_event(body, 1200, 3, payload->data, payload->len);
  g_byte_array_set_size(payload, 0);
  put_varint_field(payload, 1, 77);
  put_bytes(payload, 2, (const uint8_t *)"E|10", 4);
  put_event(body, 1300, 3, payload->data, payload->len);
  g_byte_array_set_size(payload, 0);
  put_bytes(payload, 2, (const uint8_t *)"B|10|bare", 9);
  put_event(body, 1400, 3, payload->data, payload->len);
  g_byte_array_set_size(payload, 0);
  put_bytes(payload, 2, (const uint8_t *)"X|no", 4);
  put_bytes(payload, 2, (const uint8_t *)"E|10", 4);
  put_event(body, 1500, 3, payload->data, payload->len);
  put_bundle(file, body->data, body->len);
  g_autofree char *path = e2e_write_file(dir, "prints.pftrace", (const char *)file->data,
                                         file->len);
  const char *inputs[] = {"prints.pftrace", NULL};
  g_autofree char *rows = e2e_query_in(dir, inputs,
      "SELECT group_concat(name || ' ' || ts || ' ' || dur) FROM slice WHERE ts >= 1200");
  e2e_assert_text(rows,
      "\"group_concat(name || ' ' || ts || ' ' || dur)\"\n"
      "\"late 1200 100,bare 1400 100\"\n");
  g_byte_array_free(body, TRUE);
  g_byte_array_free(payload, TRUE);
  g_byte_array_free(file, TRUE);
  e2e_cleanup(dir);
}

/* A sched_switch {prev_comm 1, prev_pid 2, prev_prio 3, prev_state 4,
 * next_comm 5, next_pid 6, next_prio 7}, its fields in that order or
 * (reversed) from the last to the first. */
static void put_switch(GByteArray *payload, bool reversed, const char *prev_comm,
                       uint64_t prev_pid, uint64_t prev_state, const char *next_comm,
                       uint64_t next_pid, uint64_t next_prio) {
  for (int i = 0; i < 7; i++) {
    switch (reversed ? 7 - i : i + 1) {
    case 1: put_bytes(payload, 1, (const uint8_t *)prev_comm, strlen(prev_comm)); break;
    case 2: put_varint_field(payload, 2, prev_pid); break;
    case 3: put_varint_field(payload, 3, 120); break;
    case 4: put_varint_field(payload, 4, prev_state); break;
    case 5: put_bytes(payload, 5, (const uint8_t *)next_comm, strlen(next_comm)); break;
    case 6: put_varint_field(payload, 6, next_pid); break;
    default: put_varint_field(payload, 7, next_prio); break;
    }
  }
}

/* A sched_waking {comm 1, pid 2, prio 3, success 4 (if given),
 * target_cpu 5 (if >= 0)}, in field order or reversed. */
static void put_waking(GByteArray *payload, bool reversed, const char *comm, uint64_t pid,
                       bool success, int target_cpu) {
  for (int i = 0; i < 5; i++) {
    switch (reversed ? 5 - i : i + 1) {
    case 1: put_bytes(payload, 1, (const uint8_t *)comm, strlen(comm)); break;
    case 2: put_varint_field(payload, 2, pid); break;
    case 3: put_varint_field(payload, 3, 120); break;
    case 4: if (success) put_varint_field(payload, 4, 1); break;
    default: if (target_cpu >= 0) put_varint_field(payload, 5, (uint64_t)target_cpu); break;
    }
  }
}

/* Switches and wakeups read the same whatever the order of their fields:
 * the reader takes them in field order (success and target_cpu may be
 * absent) by a shortcut, any other shape through the general decode. On
 * cpu 0 after ftrace_damage (11 runs from 1100), every event by pid 10:
 * at 3000 11 (left sleeping) -> 20 "c" (shortcut), at 3100 21 "d" woken
 * onto cpu 1 without success (shortcut), at 3200 22 "e" woken onto cpu 0
 * (reversed: general), at 3300 20 (left runnable) -> 21 "d" with
 * priority 99 (reversed: general), at 3400 23 "f" woken without a
 * target (shortcut: the event's cpu), at 3500 24 "g" woken onto cpu 7
 * of 2 (shortcut: no state, named, a second ftrace_cpu_out_of_range
 * after the fixture's). */
static void test_switches_and_wakeups_of_any_field_order_read_alike(void) {
  g_autofree char *dir = e2e_tmpdir();
  GByteArray *file = ftrace_damage_file();
  GByteArray *payload = g_byte_array_new();
  GByteArray *body = g_byte_array_new();
  put_switch(payload, false, "b", 11, 1, "c", 20, 120);
  put_event(body, 3000, 4, payload->data, payload->len);
  g_byte_array_set_size(payload, 0);
  put_waking(payload, false, "d", 21, false, 1);
  put_event(body, 3100, 20, payload->data, payload->len);
  g_byte_array_set_size(payload, 0);
  put_waking(payload, true, "e", 22, true, 0);
  put_event(body, 3200, 20, payload->data, payload->len);
  g_byte_array_set_size(payload, 0);
  put_switch(payload, true, "c", 20, 0, "d", 21, 99);
  put_event(body, 3300, 4, payload->data, payload->len);
  g_byte_array_set_size(payload, 0);
  put_waking(payload, false, "f", 23, true, -1);
  put_event(body, 3400, 20, payload->data, payload->len);
  g_byte_array_set_size(payload, 0);
  put_waking(payload, false, "g", 24, true, 7);
  put_event(body, 3500, 20, payload->data, payload->len);
  put_bundle(file, body->data, body->len);
  g_autofree char *path = e2e_write_file(dir, "sched.pftrace", (const char *)file->data,
                                         file->len);
  const char *inputs[] = {"sched.pftrace", NULL};
  g_autofree char *sched = e2e_query_in(dir, inputs,
      "SELECT s.ts, s.dur, s.cpu, t.tid, s.end_state, s.priority FROM sched s "
      "JOIN thread t USING (utid) WHERE s.ts >= 3000 ORDER BY s.ts");
  e2e_assert_text(sched, "\"ts\",\"dur\",\"cpu\",\"tid\",\"end_state\",\"priority\"\n"
                         "3000,300,0,20,\"R\",120\n"
                         "3300,-1,0,21,\"[NULL]\",99\n");
  g_autofree char *states = e2e_query_in(dir, inputs,
      "SELECT s.ts, s.dur, t.tid, s.state, s.cpu, w.tid AS waker FROM thread_state s "
      "JOIN thread t USING (utid) LEFT JOIN thread w ON w.utid = s.waker_utid "
      "WHERE s.ts >= 3000 ORDER BY s.ts, t.tid");
  e2e_assert_text(states, "\"ts\",\"dur\",\"tid\",\"state\",\"cpu\",\"waker\"\n"
                          "3000,-1,11,\"S\",\"[NULL]\",\"[NULL]\"\n"
                          "3000,300,20,\"Running\",0,\"[NULL]\"\n"
                          "3100,200,21,\"R\",\"[NULL]\",10\n"
                          "3200,-1,22,\"R\",\"[NULL]\",10\n"
                          "3300,-1,20,\"R\",\"[NULL]\",\"[NULL]\"\n"
                          "3300,-1,21,\"Running\",0,\"[NULL]\"\n"
                          "3400,-1,23,\"R\",\"[NULL]\",10\n");
  g_autofree char *names = e2e_query_in(dir, inputs,
      "SELECT (SELECT group_concat(tid || ' ' || name, ', ') FROM (SELECT tid, name FROM "
      "thread WHERE tid >= 20 ORDER BY tid)) AS names, "
      "(SELECT value FROM stats WHERE name = 'ftrace_cpu_out_of_range') AS cpu_out_of_range");
  e2e_assert_text(names, "\"names\",\"cpu_out_of_range\"\n"
                         "\"20 c, 21 d, 22 e, 23 f, 24 g\",2\n");
  g_byte_array_free(body, TRUE);
  g_byte_array_free(payload, TRUE);
  g_byte_array_free(file, TRUE);
  e2e_cleanup(dir);
}

/* A bundle whose bytes do not parse (an event cut inside a varint) is
 * damage of the file: the error names it and its byte offset, and every
 * packet before it is kept. */
/* A FieldDescriptorProto {name 1, number 3, type 5}. */
static void put_field_descriptor(GByteArray *out, const char *name, uint32_t number,
                                 uint32_t type) {
  GByteArray *field = g_byte_array_new();
  put_bytes(field, 1, (const uint8_t *)name, strlen(name));
  put_varint_field(field, 3, number);
  put_varint_field(field, 5, type);
  put_bytes(out, 2, field->data, field->len);
  g_byte_array_free(field, TRUE);
}

/* Events without a message as recorders since Perfetto v50 write them:
 * FtraceEvent field 65536, described by the bundle's
 * generic_event_descriptors (field 11: {field_id 1, event_descriptor 2, a
 * DescriptorProto {name 1, field 2}}), here after the event in the same
 * bundle. The event {1: 7, 2: "hi", 3: 3, 4: 5} reads as the description
 * says: "my_event" with count 7 (uint64, type 4), label "hi" (string, 9),
 * delta -2 (sint64, 18: zigzag 3), and field 4, which it does not
 * describe, by number. An event of id 65537, which nothing describes, is
 * an unknown row (the one proto_ftrace_unknown_event). A second bundle's
 * description that does not parse is counted; its event 65538 stays
 * unknown. */
static void test_bundle_described_events_are_named_rows(void) {
  g_autofree char *dir = e2e_tmpdir();
  GByteArray *file = ftrace_damage_file();
  GByteArray *payload = g_byte_array_new();
  put_varint_field(payload, 1, 7);
  put_bytes(payload, 2, (const uint8_t *)"hi", 2);
  put_varint_field(payload, 3, 3);
  put_varint_field(payload, 4, 5);
  GByteArray *descriptor = g_byte_array_new();
  put_bytes(descriptor, 1, (const uint8_t *)"my_event", 8);
  put_field_descriptor(descriptor, "count", 1, 4);
  put_field_descriptor(descriptor, "label", 2, 9);
  put_field_descriptor(descriptor, "delta", 3, 18);
  GByteArray *description = g_byte_array_new();
  put_varint_field(description, 1, 65536);
  put_bytes(description, 2, descriptor->data, descriptor->len);
  GByteArray *body = g_byte_array_new();
  put_event(body, 1200, 65536, payload->data, payload->len);
  put_event(body, 1300, 65537, payload->data, payload->len);
  put_bytes(body, 11, description->data, description->len);
  put_bundle(file, body->data, body->len);
  /* {field_id 65538, event_descriptor: a field cut inside} */
  const uint8_t cut[] = {0x12, 0x02, 0x0a, 0x05};
  g_byte_array_set_size(description, 0);
  put_varint_field(description, 1, 65538);
  put_bytes(description, 2, cut, sizeof cut);
  g_byte_array_set_size(body, 0);
  put_event(body, 1400, 65538, payload->data, 2);
  put_bytes(body, 11, description->data, description->len);
  put_bundle(file, body->data, body->len);
  g_autofree char *path = e2e_write_file(dir, "described.pftrace", (const char *)file->data,
                                         file->len);
  const char *inputs[] = {"described.pftrace", NULL};
  g_autofree char *rows = e2e_query_in(dir, inputs,
      "SELECT e.ts, e.name, (SELECT group_concat(key || '=' || display_value, ' ') "
      "FROM (SELECT key, display_value FROM args a WHERE a.arg_set_id = e.arg_set_id "
      "ORDER BY a.id)) AS args FROM ftrace_event e ORDER BY e.ts");
  e2e_assert_text(rows,
      "\"ts\",\"name\",\"args\"\n"
      "1200,\"my_event\",\"count=7 label=hi delta=-2 field_4=5\"\n"
      "1300,\"unknown_ftrace_event_65537\",\"field_1=7 field_2=hi field_3=3 field_4=5\"\n"
      "1400,\"unknown_ftrace_event_65538\",\"field_1=7\"\n");
  g_autofree char *stats = e2e_query_in(dir, inputs,
      "SELECT name, value FROM stats WHERE name IN ('proto_ftrace_unknown_event', "
      "'ftrace_generic_descriptor_invalid') AND value > 0 ORDER BY name");
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         "\"ftrace_generic_descriptor_invalid\",1\n"
                         "\"proto_ftrace_unknown_event\",2\n");
  g_byte_array_free(body, TRUE);
  g_byte_array_free(description, TRUE);
  g_byte_array_free(descriptor, TRUE);
  g_byte_array_free(payload, TRUE);
  g_byte_array_free(file, TRUE);
  e2e_cleanup(dir);
}

/* damaged_trace() and then a bundle of `body`, which does not parse: the
 * import fails naming the file and that packet's offset, and keeps the
 * slice before it. */
static void assert_bundle_stops_the_file(const uint8_t *body, size_t len) {
  g_autofree char *dir = e2e_tmpdir();
  GByteArray *file = damaged_trace();
  size_t at = file->len;
  put_bundle(file, body, len);
  g_autofree char *path = e2e_write_file(dir, "cut.pftrace", (const char *)file->data,
                                         file->len);
  const char *args[] = {"query", "cut.pftrace", "--sql",
                        "SELECT count(*) AS slices FROM slice", NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 1);
  /* The packet's bytes begin after its tag and its length (one byte for
   * bundles under 128 bytes). */
  g_autofree char *message = g_strdup_printf("at byte %zu: packet", at + 2);
  if (!strstr(r.err, "cut.pftrace") || !strstr(r.err, message) ||
      !strstr(r.err, "malformed ftrace_events"))
    g_error("stderr does not name the file and the packet (%s): %s", message, r.err);
  e2e_assert_text(r.out, "\"slices\"\n1\n");
  e2e_result_clear(&r);
  g_byte_array_free(file, TRUE);
  e2e_cleanup(dir);
}

static void test_unparseable_bundle_stops_the_file_there(void) {
  const uint8_t cut_event[] = {0x12, 0x02, 0x08, 0x80};
  assert_bundle_stops_the_file(cut_event, sizeof cut_event);
}

/* A generic event whose field is cut inside (field {name: 5 bytes
 * announced, none there}) is damage like any known event's bad payload. */
static void test_generic_event_with_a_cut_field_stops_the_file_there(void) {
  const uint8_t field[] = {0x0a, 0x05};
  GByteArray *generic = g_byte_array_new();
  put_bytes(generic, 2, field, sizeof field);
  GByteArray *body = g_byte_array_new();
  put_event(body, 1500, 327, generic->data, generic->len);
  assert_bundle_stops_the_file(body->data, body->len);
  g_byte_array_free(body, TRUE);
  g_byte_array_free(generic, TRUE);
}

/* --- Android and service payloads ------------------------------------------ */

/* Logcat is on REALTIME, 1e12 ns ahead of trace time; an event log's
 * message is its args. */
static void test_android_logs_and_packages(void) {
  g_autofree char *logs = query("android_system",
      "SELECT l.ts, t.tid, l.prio, l.tag, l.msg FROM android_logs l "
      "JOIN thread t USING (utid) ORDER BY l.ts");
  e2e_assert_text(logs, "\"ts\",\"tid\",\"prio\",\"tag\",\"msg\"\n"
                        "500,21,5,\"Tag\",\"hello\"\n"
                        "600,20,0,\"am_proc\",\"pid=20 name=\"\"app\"\"\"\n");
  g_autofree char *packages = query("android_system",
      "SELECT package_name, uid, debuggable, profileable_from_shell, version_code "
      "FROM package_list ORDER BY id");
  e2e_assert_text(packages, "\"package_name\",\"uid\",\"debuggable\","
                            "\"profileable_from_shell\",\"version_code\"\n"
                            "\"com.example.app\",10100,1,0,42\n"
                            "\"com.android.systemui\",10050,\"[NULL]\",\"[NULL]\",\"[NULL]\"\n");
}

/* The frame timeline: the app's (pid 20) expected frame 100 (1000-2000;
 * its repeat with cookie 9 skipped, so that cookie's end is unpaired),
 * actual frame 100 (1100-2100, App Deadline Missed: Self Jank),
 * SurfaceFlinger's (pid 5) expected and actual display frame 200, and one
 * flow from the app's actual frame to the display frame of its token. */
static void test_frame_timeline(void) {
  g_autofree char *expected = query("android_system",
      "SELECT f.ts, f.dur, f.name, f.display_frame_token, f.surface_frame_token, p.pid, "
      "f.layer_name FROM expected_frame_timeline_slice f JOIN process p USING (upid) "
      "ORDER BY f.ts");
  e2e_assert_text(expected, "\"ts\",\"dur\",\"name\",\"display_frame_token\","
                            "\"surface_frame_token\",\"pid\",\"layer_name\"\n"
                            "1000,1000,\"100\",200,100,20,\"app#0\"\n"
                            "1500,700,\"200\",200,\"[NULL]\",5,\"[NULL]\"\n");
  g_autofree char *actual = query("android_system",
      "SELECT f.ts, f.dur, f.name, p.pid, f.present_type, f.on_time_finish, "
      "f.gpu_composition, f.jank_type, f.jank_severity_type, f.prediction_type, f.jank_tag "
      "FROM actual_frame_timeline_slice f JOIN process p USING (upid) ORDER BY f.ts");
  e2e_assert_text(actual,
      "\"ts\",\"dur\",\"name\",\"pid\",\"present_type\",\"on_time_finish\","
      "\"gpu_composition\",\"jank_type\",\"jank_severity_type\",\"prediction_type\","
      "\"jank_tag\"\n"
      "1100,1000,\"100\",20,\"Late Present\",0,0,\"App Deadline Missed\",\"Unknown\","
      "\"Valid Prediction\",\"Self Jank\"\n"
      "1600,700,\"200\",5,\"On-time Present\",1,1,\"None\",\"None\",\"Valid Prediction\","
      "\"No Jank\"\n");
  g_autofree char *flows = query("android_system",
      "SELECT o.name, o.ts, i.name, i.ts FROM flow f JOIN slice o ON o.id = f.slice_out "
      "JOIN slice i ON i.id = f.slice_in");
  e2e_assert_text(flows, "\"name\",\"ts\",\"name\",\"ts\"\n\"100\",1100,\"200\",1600\n");
  g_autofree char *tracks = query("android_system",
      "SELECT t.name, p.pid FROM process_track t JOIN process p USING (upid) ORDER BY p.pid, t.name");
  e2e_assert_text(tracks, "\"name\",\"pid\"\n\"Actual Timeline\",5\n\"Expected Timeline\",5\n"
                          "\"Actual Timeline\",20\n\"Expected Timeline\",20\n");
}

/* The trace config as text format, the uuid, the service's start; its
 * stats; process and system counters at 3000; the two packets of a
 * payload the reader does not model (profile_packet, field 37) counted. */
static void test_metadata_stats_and_counters(void) {
  g_autofree char *metadata = query("android_system",
      "SELECT name, coalesce(str_value, int_value) FROM metadata WHERE name IN "
      "('trace_config_pbtxt', 'trace_uuid', 'tracing_started_ns') ORDER BY name");
  e2e_assert_text(metadata, "\"name\",\"coalesce(str_value, int_value)\"\n"
                            "\"trace_config_pbtxt\",\"buffers {\n  size_kb: 1024\n"
                            "  fill_policy: DISCARD\n}\nduration_ms: 5000\n\"\n"
                            "\"trace_uuid\",\"01234567-89ab-cdef-0011-223344556677\"\n"
                            "\"tracing_started_ns\",10\n");
  g_autofree char *stats = query("android_system",
      "SELECT name, idx, value FROM stats WHERE value > 0 ORDER BY name, idx");
  e2e_assert_text(stats, "\"name\",\"idx\",\"value\"\n"
                         "\"android_log_num_failed\",\"[NULL]\",1\n"
                         "\"android_log_num_skipped\",\"[NULL]\",2\n"
                         "\"android_log_num_total\",\"[NULL]\",5\n"
                         "\"frame_timeline_unpaired_end_event\",\"[NULL]\",1\n"
                         "\"ftrace_cpu_bytes_end\",0,96\n"
                         "\"ftrace_cpu_entries_end\",0,3\n"
                         "\"ftrace_cpu_now_ts_end\",0,1500000000\n"
                         "\"ftrace_cpu_oldest_event_ts_end\",0,500000000\n"
                         "\"ftrace_cpu_overrun_end\",0,2\n"
                         "\"ftrace_cpu_read_events_end\",0,10\n"
                         "\"proto_unmodelled_payload\",37,2\n"
                         "\"traced_buf_buffer_size\",0,4096\n"
                         "\"traced_buf_bytes_written\",0,1000\n"
                         "\"traced_buf_chunks_discarded\",0,1\n"
                         "\"traced_producers_connected\",\"[NULL]\",2\n");
  /* The loss the kernel buffer declares (cpu 0 overran 2 events) is a
   * data_loss stat, as in trace_processor; the logcat failure an error. */
  g_autofree char *losses = query("android_system",
      "SELECT name, idx, severity, source FROM stats WHERE value > 0 AND severity != 'info' "
      "ORDER BY name");
  e2e_assert_text(losses, "\"name\",\"idx\",\"severity\",\"source\"\n"
                          "\"android_log_num_failed\",\"[NULL]\",\"error\",\"trace\"\n"
                          "\"ftrace_cpu_overrun_end\",0,\"data_loss\",\"trace\"\n");
  g_autofree char *counters = query("android_system",
      "SELECT c.ts, CAST(c.value AS INT), t.name FROM counter c JOIN track t "
      "ON t.id = c.track_id ORDER BY t.name");
  /* process_stats in kB (x 1024) and oom_score_adj; meminfo key 3
   * (MemAvailable) in kB; cpu 0's times; num_forks. */
  e2e_assert_text(counters, "\"ts\",\"CAST(c.value AS INT)\",\"name\"\n"
                            "3000,2097152,\"MemAvailable\"\n"
                            "3000,700,\"cpu.times.idle_ns\"\n"
                            "3000,500,\"cpu.times.user_ns\"\n"
                            "3000,51200,\"mem.rss\"\n"
                            "3000,102400,\"mem.virt\"\n"
                            "3000,77,\"num_forks\"\n"
                            "3000,-100,\"oom_score_adj\"\n");
}

/* --- a phone and a server on one timeline -------------------------------- */

/* A ZIP of the phone's system trace (ftrace_kinds: trace time is its
 * BOOTTIME) and the server's Chrome JSON (clockless: tied to trace time at
 * zero offset), each on its own machine by the manifest. The JSON holds a
 * 2 µs slice at 1 µs and a counter at 2 µs; the phone, 4 sched rows, 8
 * slices and 17 counters (test_sched_from_both_encodings and after). */
static void test_system_trace_and_chrome_json_merge(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes phone = e2e_proto_fixture("ftrace_kinds");
  static const char manifest[] =
      "{\"perfetto_manifest\": {\"version\": 1,\n"
      " \"files\": [\n"
      " {\"path\": \"phone.pftrace\", \"machine\": {\"name\": \"phone\"}},\n"
      " {\"path\": \"server.json\", \"machine\": {\"name\": \"server\"}}]}}\n";
  static const char server[] =
      "{\"traceEvents\":["
      "{\"ph\":\"X\",\"name\":\"request\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},"
      "{\"ph\":\"C\",\"name\":\"load\",\"ts\":2,\"pid\":1,\"args\":{\"v\":5}}]}";
  const e2e_member members[] = {
      {"manifest.json", manifest, 0},
      {"phone.pftrace", phone.data, phone.len},
      {"server.json", server, 0},
  };
  g_autofree char *by_machine = e2e_query_archive(dir, E2E_ZIP, members, 3,
      "SELECT m.name, "
      "(SELECT count(*) FROM sched s JOIN cpu c ON c.id = s.ucpu WHERE c.machine_id = m.id), "
      "(SELECT count(*) FROM slice s JOIN track t ON t.id = s.track_id "
      "WHERE t.machine_id = m.id), "
      "(SELECT count(*) FROM counter c JOIN track t ON t.id = c.track_id "
      "WHERE t.machine_id = m.id) FROM machine m WHERE m.name IS NOT NULL ORDER BY m.name");
  e2e_assert_text(by_machine,
      "\"name\",\"(SELECT count(*) FROM sched s JOIN cpu c ON c.id = s.ucpu WHERE "
      "c.machine_id = m.id)\",\"(SELECT count(*) FROM slice s JOIN track t ON t.id = "
      "s.track_id WHERE t.machine_id = m.id)\",\"(SELECT count(*) FROM counter c JOIN track "
      "t ON t.id = c.track_id WHERE t.machine_id = m.id)\"\n"
      "\"phone\",4,8,17\n\"server\",0,1,1\n");
  /* One timeline: the server's request (1000-3000) among the phone's. */
  g_autofree char *timeline = e2e_query_archive(dir, E2E_ZIP, members, 3,
      "SELECT s.ts, s.name, m.name FROM slice s JOIN track t ON t.id = s.track_id "
      "JOIN machine m ON m.id = t.machine_id WHERE s.ts < 1300 ORDER BY s.ts");
  e2e_assert_text(timeline, "\"ts\",\"name\",\"name\"\n"
                            "1000,\"request\",\"server\"\n"
                            "1200,\"work\",\"phone\"\n"
                            "1250,\"async\",\"phone\"\n");
  g_free(phone.data);
  e2e_cleanup(dir);
}

/* `tracemerge info` lists the payloads not modelled with their count. */
static void test_info_lists_unmodelled_payloads(void) {
  g_autofree char *path = e2e_proto_fixture_path("android_system");
  const char *args[] = {"info", path, NULL};
  e2e_result r = e2e_run(args);
  g_assert_cmpint(r.exit_code, ==, 0);
  g_assert_nonnull(strstr(r.out, "proto_unmodelled_payload[37]"));
  e2e_result_clear(&r);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/system/ftrace/sched-from-both-encodings", test_sched_from_both_encodings);
  g_test_add_func("/e2e/system/ftrace/thread-state-from-both-encodings",
                  test_thread_state_from_both_encodings);
  g_test_add_func("/e2e/system/ftrace/slices-from-print-irq-and-suspend",
                  test_slices_from_print_irq_and_suspend);
  g_test_add_func("/e2e/system/ftrace/counters-from-every-kind", test_counters_from_every_kind);
  g_test_add_func("/e2e/system/ftrace/thread-names-and-lifetimes",
                  test_thread_names_and_lifetimes);
  g_test_add_func("/e2e/system/ftrace/other-events-are-raw-rows", test_other_events_are_raw_rows);
  g_test_add_func("/e2e/system/ftrace/unknown-event-ids-are-rows-with-fields-by-number",
                  test_unknown_event_ids_are_rows_with_fields_by_number);
  g_test_add_func("/e2e/system/ftrace/bundle-described-events-are-named-rows",
                  test_bundle_described_events_are_named_rows);
  g_test_add_func("/e2e/system/ftrace/bundles-on-every-clock-and-machine",
                  test_bundles_on_every_clock_and_machine);
  g_test_add_func("/e2e/system/ftrace/a-field-of-the-wrong-wire-type-drops-its-event",
                  test_a_field_of_the_wrong_wire_type_drops_its_event);
  g_test_add_func("/e2e/system/ftrace/prints-of-any-field-order-read-alike",
                  test_prints_of_any_field_order_read_alike);
  g_test_add_func("/e2e/system/ftrace/switches-and-wakeups-of-any-field-order-read-alike",
                  test_switches_and_wakeups_of_any_field_order_read_alike);
  g_test_add_func("/e2e/system/ftrace/damaged-bundles-are-counted-and-logged",
                  test_damaged_bundles_are_counted_and_logged);
  g_test_add_func("/e2e/system/ftrace/an-unparseable-bundle-stops-the-file-there",
                  test_unparseable_bundle_stops_the_file_there);
  g_test_add_func("/e2e/system/ftrace/a-generic-event-with-a-cut-field-stops-the-file-there",
                  test_generic_event_with_a_cut_field_stops_the_file_there);
  g_test_add_func("/e2e/system/android/logs-and-packages", test_android_logs_and_packages);
  g_test_add_func("/e2e/system/android/frame-timeline", test_frame_timeline);
  g_test_add_func("/e2e/system/service/metadata-stats-and-counters",
                  test_metadata_stats_and_counters);
  g_test_add_func("/e2e/system/merge/system-trace-and-chrome-json-on-one-timeline",
                  test_system_trace_and_chrome_json_merge);
  g_test_add_func("/e2e/system/service/info-lists-unmodelled-payloads",
                  test_info_lists_unmodelled_payloads);
  return g_test_run();
}
