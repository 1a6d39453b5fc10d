/*
 * Synthetic ftrace-heavy system trace for the benchmark, shaped like what
 * traced writes: a ClockSnapshot (BOOTTIME), SystemInfo, then rounds of
 * one FtraceEventBundle per cpu. Every cpu runs a sequence of steps, each
 * four events: a sched_switch to another thread, a sched_waking of a
 * random thread onto a random cpu, and an atrace "B|tgid|name" / "E|tgid"
 * print pair written by the thread now running. Even rounds encode the
 * switches and wakings as compact_sched arrays (interned comms, delta
 * timestamps) and the prints as expanded events in the same bundle; odd
 * rounds encode everything as expanded FtraceEvents. Timestamps increase
 * per cpu; bundles of one round cover the same time window on every cpu,
 * so the merge interleaves them. Every ftrace event is one counted event.
 */
#include "gen_ftrace_trace.h"

#include "proto_wire_append.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

enum { STEPS_PER_BUNDLE = 256, EVENTS_PER_STEP = 4, NAMES = 64, STEP_NS = 4000 };

typedef struct cpu_state {
  uint32_t running; /* thread index */
  uint64_t ts;
} cpu_state;

/* Thread i: tid 1000 + i, in process tgid = tid rounded down to 8. */
static uint32_t tid_of(uint32_t i) { return 1000 + i; }
static uint32_t tgid_of(uint32_t i) { return tid_of(i) & ~7u; }

/* The compact arrays of one bundle. */
typedef struct compact {
  GByteArray *switch_ts, *switch_state, *switch_pid, *switch_prio, *switch_comm;
  GByteArray *waking_ts, *waking_pid, *waking_cpu, *waking_prio, *waking_comm, *waking_flags;
  uint64_t last_switch, last_waking;
} compact;

static void expanded_event(GByteArray *bundle, GByteArray *event, GByteArray *payload,
                           uint64_t ts, uint32_t pid, uint32_t field) {
  g_byte_array_set_size(event, 0);
  wire_append_uint(event, 1, ts);
  wire_append_uint(event, 2, pid);
  wire_append_message(event, field, payload);
  wire_append_message(bundle, 2, event);
  g_byte_array_set_size(payload, 0);
}

bool gen_ftrace_trace_write(FILE *out, uint64_t events, uint32_t cpus, uint32_t threads,
                            uint32_t seed, uint64_t *bytes_written) {
  g_autoptr(GByteArray) packet = g_byte_array_new();
  g_autoptr(GByteArray) frame = g_byte_array_new();
  g_autoptr(GByteArray) sub = g_byte_array_new();
  g_autoptr(GByteArray) bundle = g_byte_array_new();
  g_autoptr(GByteArray) event = g_byte_array_new();
  g_autoptr(GByteArray) payload = g_byte_array_new();
  g_autoptr(GByteArray) arrays = g_byte_array_new();
  GRand *rand = g_rand_new_with_seed(seed);
  cpu_state *cpu = g_new0(cpu_state, cpus);
  char comm[32], buf[64];
  bool ok = true;
  long start = ftell(out);

  /* ClockSnapshot (6): BOOTTIME (6) is trace time. */
  g_autoptr(GByteArray) clock = g_byte_array_new();
  wire_append_uint(clock, 1, 6);
  wire_append_uint(clock, 2, 1000000000);
  wire_append_message(sub, 1, clock);
  wire_append_uint(sub, 2, 6);
  wire_append_message(packet, 6, sub);
  wire_append_uint(packet, 10, 1);
  ok = ok && wire_write_trace_packet(out, frame, packet);
  /* SystemInfo (45): the cpus. */
  g_byte_array_set_size(sub, 0);
  wire_append_uint(sub, 8, cpus);
  wire_append_message(packet, 45, sub);
  ok = ok && wire_write_trace_packet(out, frame, packet);

  for (uint32_t c = 0; c < cpus; c++) {
    cpu[c].running = c % threads;
    cpu[c].ts = 1000000000 + c;
  }
  uint64_t written = 0;
  const uint64_t per_bundle = (uint64_t)STEPS_PER_BUNDLE * EVENTS_PER_STEP;
  for (uint64_t round = 0; ok && written < events; round++) {
    bool use_compact = round % 2 == 0;
    for (uint32_t c = 0; ok && c < cpus && written < events; c++) {
      g_byte_array_set_size(bundle, 0);
      wire_append_uint(bundle, 1, c);
      compact cs = {0};
      GByteArray **all[] = {&cs.switch_ts,  &cs.switch_state, &cs.switch_pid, &cs.switch_prio,
                            &cs.switch_comm, &cs.waking_ts,  &cs.waking_pid, &cs.waking_cpu,
                            &cs.waking_prio, &cs.waking_comm, &cs.waking_flags};
      for (size_t a = 0; a < G_N_ELEMENTS(all); a++)
        *all[a] = g_byte_array_new();
      GPtrArray *interned = g_ptr_array_new_with_free_func(g_free);
      GHashTable *intern_index = g_hash_table_new(g_str_hash, g_str_equal);
      for (uint32_t step = 0; step < STEPS_PER_BUNDLE; step++) {
        uint32_t prev = cpu[c].running;
        uint32_t next = (uint32_t)g_rand_int_range(rand, 0, (gint32)threads);
        uint32_t woken = (uint32_t)g_rand_int_range(rand, 0, (gint32)threads);
        uint32_t target = (uint32_t)g_rand_int_range(rand, 0, (gint32)cpus);
        uint64_t t_switch = cpu[c].ts;
        uint64_t t_waking = t_switch + 500;
        uint64_t t_begin = t_switch + 1000;
        uint64_t t_end = t_switch + 3000;
        cpu[c].ts += STEP_NS;
        cpu[c].running = next;
        g_snprintf(comm, sizeof comm, "thread-%u", next % 512);
        if (use_compact) {
          /* The comm table: one entry per distinct comm in the bundle. */
          gpointer found = g_hash_table_lookup(intern_index, comm);
          uint32_t index = GPOINTER_TO_UINT(found);
          if (!found) {
            char *copy = g_strdup(comm);
            g_ptr_array_add(interned, copy);
            index = interned->len;
            g_hash_table_insert(intern_index, copy, GUINT_TO_POINTER(index));
          }
          wire_append_varint(cs.switch_ts, t_switch - cs.last_switch);
          cs.last_switch = t_switch;
          wire_append_varint(cs.switch_state, step % 3 == 0 ? 0 : 1);
          wire_append_varint(cs.switch_pid, tid_of(next));
          wire_append_varint(cs.switch_prio, 120);
          wire_append_varint(cs.switch_comm, index - 1);
          wire_append_varint(cs.waking_ts, t_waking - cs.last_waking);
          cs.last_waking = t_waking;
          wire_append_varint(cs.waking_pid, tid_of(woken));
          wire_append_varint(cs.waking_cpu, target);
          wire_append_varint(cs.waking_prio, 120);
          wire_append_varint(cs.waking_comm, index - 1);
          wire_append_varint(cs.waking_flags, 1);
        } else {
          g_snprintf(buf, sizeof buf, "thread-%u", prev % 512);
          wire_append_string(payload, 1, buf);
          wire_append_uint(payload, 2, tid_of(prev));
          wire_append_uint(payload, 3, 120);
          wire_append_uint(payload, 4, step % 3 == 0 ? 0 : 1);
          wire_append_string(payload, 5, comm);
          wire_append_uint(payload, 6, tid_of(next));
          wire_append_uint(payload, 7, 120);
          expanded_event(bundle, event, payload, t_switch, tid_of(prev), 4);
          g_snprintf(buf, sizeof buf, "thread-%u", woken % 512);
          wire_append_string(payload, 1, buf);
          wire_append_uint(payload, 2, tid_of(woken));
          wire_append_uint(payload, 3, 120);
          wire_append_uint(payload, 4, 1);
          wire_append_uint(payload, 5, target);
          expanded_event(bundle, event, payload, t_waking, tid_of(next), 20);
        }
        g_snprintf(buf, sizeof buf, "B|%u|work %u\n", tgid_of(next),
                   (uint32_t)g_rand_int_range(rand, 0, NAMES));
        wire_append_uint(payload, 1, 0);
        wire_append_string(payload, 2, buf);
        expanded_event(bundle, event, payload, t_begin, tid_of(next), 3);
        g_snprintf(buf, sizeof buf, "E|%u\n", tgid_of(next));
        wire_append_uint(payload, 1, 0);
        wire_append_string(payload, 2, buf);
        expanded_event(bundle, event, payload, t_end, tid_of(next), 3);
      }
      if (use_compact) {
        g_byte_array_set_size(arrays, 0);
        for (guint i = 0; i < interned->len; i++)
          wire_append_string(arrays, 5, g_ptr_array_index(interned, i));
        static const uint32_t numbers[] = {1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12};
        for (size_t a = 0; a < G_N_ELEMENTS(all); a++)
          wire_append_message(arrays, numbers[a], *all[a]);
        wire_append_message(bundle, 4, arrays);
      }
      for (size_t a = 0; a < G_N_ELEMENTS(all); a++)
        g_byte_array_free(*all[a], TRUE);
      g_hash_table_destroy(intern_index);
      g_ptr_array_free(interned, TRUE);
      wire_append_message(packet, 1, bundle);
      wire_append_uint(packet, 10, 2 + c);
      ok = wire_write_trace_packet(out, frame, packet);
      written += per_bundle;
    }
  }
  g_free(cpu);
  g_rand_free(rand);
  if (bytes_written)
    *bytes_written = (uint64_t)(ftell(out) - start);
  return ok && !ferror(out);
}

#ifdef GEN_FTRACE_TRACE_MAIN
int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gen_ftrace_trace EVENTS OUT.pftrace\n");
    return 2;
  }
  FILE *out = fopen(argv[2], "wb");
  if (!out) {
    perror(argv[2]);
    return 1;
  }
  bool ok = gen_ftrace_trace_write(out, g_ascii_strtoull(argv[1], NULL, 10), 32, 4096, 1,
                                   NULL);
  return fclose(out) == 0 && ok ? 0 : 1;
}
#endif
