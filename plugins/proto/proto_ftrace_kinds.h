/*
 * What each kind of expanded ftrace event becomes in the host, and the
 * per-machine state the ftrace modules share (proto_ftrace.c frames the
 * bundles and calls in here for each event).
 *
 * Modelled, as trace_processor models them:
 *   sched_switch                      sched, thread_state (sched builder)
 *   sched_waking / _wakeup / _new     thread_state Runnable, waker
 *   sched_blocked_reason              thread_state io_wait, and
 *                                     blocked_function when the caller
 *                                     is a kernel_symbols iid
 *   task_newtask, task_rename         thread start, name
 *   sched_process_free                thread end
 *   print                             atrace slices, counters, async
 *                                     slices (plugins/common's systrace
 *                                     emitter, shared with the systrace
 *                                     reader)
 *   cpu_frequency, cpu_idle           cpu counter tracks cpufreq, cpuidle
 *   irq_handler_entry/exit,           slices on the cpu tracks
 *   softirq_entry/exit                "Irq Cpu N", "SoftIrq Cpu N"
 *   suspend_resume                    slices on "Suspend/Resume Latency"
 *   clock_set_rate, clock_enable/     counters clock_frequency, clock_state
 *   clock_disable                     (one track per clock name)
 *   gpu_frequency                     counter gpufreq (per gpu id)
 *   mm_event_record                   counters mem.mm.<type>.{count,
 *                                     max_lat,avg_lat} of the thread
 *   rss_stat                          counters mem.rss.file/anon, mem.swap,
 *                                     mem.rss.shmem of the thread
 *   ion_heap_grow/shrink, ion_stat,   counters mem.ion[.<heap>],
 *   dma_heap_stat                     mem.ion_change.<heap>, mem.dma_heap,
 *                                     mem.dma_heap_change
 *   generic (legacy encoding of an     ftrace_event row named event_name,
 *   event without a message)          args named by its fields
 * Every other event this reader's schema (proto/ftrace.proto) names is an
 * ftrace_event row with its fields as args, named as the schema names
 * them (a workqueue event's function by its kernel_symbols name when the
 * sequence interned one). An event id the schema does not name is an
 * ftrace_event row too: if a bundle of its machine described the id
 * (FtraceEventBundle.generic_event_descriptors, field 11: how recorders
 * since Perfetto v50 write events that have no message, with ids from
 * 65536), named and with args as the description says; else
 * "unknown_ftrace_event_<id>" with its fields as args "field_<n>"
 * holding their wire values (counted as proto_ftrace_unknown_event). So
 * nothing in the file is invisible. A description is looked for in the
 * bundle of the first event of an id not yet described, so it may come
 * after its events in that bundle, not in a later one. Like
 * trace_processor, every event but sched_switch makes the thread of its
 * pid known.
 *
 * Deviations, all because the reader does not see the host's thread to
 * process map: counters trace_processor puts on a process (mm_event,
 * rss_stat, *_change) are on the thread; a task_newtask thread's process
 * is not named.
 */
#ifndef TM_PROTO_FTRACE_KINDS_H
#define TM_PROTO_FTRACE_KINDS_H

#include <stdbool.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "proto_context.h"
#include "proto_map.h"
#include "proto_vec.h"
#include "systrace_emitter.h"

/* What the reader remembers of one cpu of one machine. */
typedef struct ftrace_cpu {
  /* compact_sched: the thread the last switch put on the cpu (0: no
   * switch seen yet), its pid and priority. */
  tm_thread_ref running;
  int32_t running_pid;
  int32_t running_prio;
  tm_track_ref irq, softirq, cpufreq, cpuidle; /* 0 until used */
} ftrace_cpu;

/* Linux comms are at most 15 bytes: a name that long or shorter is kept
 * as bytes too. */
#define FTRACE_NAME_BYTES 16

/* A thread named by ftrace, and the name last given to it. */
typedef struct ftrace_thread {
  tm_thread_ref ref;
  tm_str_id name;
  /* The bytes of `name` (when name_len > 0), so that a comm repeated on
   * every switch costs a comparison, not an intern. */
  uint8_t name_len;
  char name_bytes[FTRACE_NAME_BYTES];
} ftrace_thread;

/* Tids read through a direct table (256 KiB at most per machine):
 * Android's and many Linux systems' pid_max is 32768. */
#define FTRACE_DIRECT_TIDS 65536u

typedef struct ftrace_machine {
  proto_machine *machine;
  uint32_t num_cpus; /* 0: unknown */
  TM_VEC(ftrace_cpu) cpus;
  /* tid -> threads index: tids below FTRACE_DIRECT_TIDS in `direct`
   * (index + 1, 0: not seen; grown to the largest such tid seen), the
   * others in thread_index. */
  uint32_t *direct;
  size_t direct_len;
  proto_map thread_index;
  TM_VEC(ftrace_thread) threads;
  systrace_emitter *emitter; /* print events; NULL until the first */
  /* The clock and line offset the emitter was last told. */
  tm_clock_ref emitter_clock;
  int64_t emitter_offset;
} ftrace_machine;

/* The event being read. */
typedef struct ftrace_event {
  ftrace_machine *m;
  const struct proto_sequence *seq; /* the bundle's packet sequence */
  const uint8_t *bundle;            /* the bundle's bytes (its descriptions) */
  size_t bundle_len;
  uint32_t cpu;
  tm_clock_ref clock;
  int64_t ts;
  uint32_t pid;
  uint32_t id; /* FtraceEvent field number of the payload */
  const uint8_t *data;
  size_t len;
} ftrace_event;

/* What the reader needs of one payload's schema, looked up once per event
 * id (protobuf-c's lookups are binary searches). */
struct ProtobufCMessageDescriptor;
typedef struct ftrace_schema {
  bool looked_up;
  const struct ProtobufCMessageDescriptor *d; /* NULL: not a message field */
  const char *name;
  /* For fields 1..FTRACE_SCHEMA_FIELDS: the wire type a field has, -1 if
   * the schema has no such field; bit n of `repeated`: field n is
   * repeated (it may also come packed). */
  int8_t wire[16];
  uint16_t repeated;
  /* By a one-byte tag: FAST_VARINT or FAST_BYTES if the tag's field is in
   * 1..15 and has that wire type in the schema, else 0 (decode's general
   * path). One load instead of three tests per field. */
  uint8_t fast[128];
  bool modelled; /* the reader models the event (else a raw row) */
} ftrace_schema;
#define FTRACE_SCHEMA_FIELDS 15

/* Task states cached by their bits (prev_state values up to 2048). */
#define FTRACE_STATE_CACHE 2049

/* How a bundle described an event id that has no message: its name and
 * its fields (number, FieldDescriptorProto type, arg key). */
typedef struct ftrace_generic_field {
  uint32_t number;
  uint32_t type;
  tm_str_id key;
} ftrace_generic_field;

typedef struct ftrace_generic {
  tm_str_id name;
  TM_VEC(ftrace_generic_field) fields;
} ftrace_generic;

typedef struct ftrace_kinds {
  proto_context *ctx;
  TM_VEC(ftrace_schema) schemas; /* by event id */
  tm_str_id *states;                /* by prev_state bits; 0: not yet */
  /* Interned arg keys of raw events: (event id << 32 | field) -> str id. */
  proto_map raw_keys;
  TM_VEC(tm_str_id) raw_key_ids;
  tm_str_id irq_category;
  bool has_system; /* the host has the system trace services */
  /* Described ids: (machine ref << 32 | id) -> generics index; the last
   * bundle searched for descriptions. */
  proto_map generic_index;
  TM_VEC(ftrace_generic) generics;
  const uint8_t *described_bundle;
  size_t described_len;
  uint64_t described_offset;
} ftrace_kinds;

void ftrace_kinds_init(ftrace_kinds *k, proto_context *ctx);
void ftrace_kinds_free(ftrace_kinds *k);

/* The entry of `tid` if the direct table has it, else NULL. */
static inline ftrace_thread *ftrace_thread_direct(const ftrace_machine *m, int64_t tid) {
  uint64_t key = (uint64_t)tid;
  return key < m->direct_len && m->direct[key] ? &m->threads.data[m->direct[key] - 1] : NULL;
}

/* ftrace_thread_of for a tid not in the direct table. */
tm_thread_ref ftrace_thread_of_other(ftrace_kinds *k, ftrace_machine *m, int64_t tid);

/* The thread `tid` of the machine (pid unknown), created on first use;
 * with a name, named so when the name changed (ftrace's comm). Inline:
 * nearly every event asks, and nearly always for a known small tid. */
static inline tm_thread_ref ftrace_thread_of(ftrace_kinds *k, ftrace_machine *m, int64_t tid) {
  const ftrace_thread *t = ftrace_thread_direct(m, tid);
  return t ? t->ref : ftrace_thread_of_other(k, m, tid);
}
tm_thread_ref ftrace_thread_named(ftrace_kinds *k, ftrace_machine *m, int64_t tid,
                                  const uint8_t *name, size_t name_len);
/* The same with the name already interned (0: unnamed). */
tm_thread_ref ftrace_thread_named_id(ftrace_kinds *k, ftrace_machine *m, int64_t tid,
                                     tm_str_id name);
/* ftrace_cpu_of for a cpu not seen yet, or beyond the machine's. */
ftrace_cpu *ftrace_cpu_new(ftrace_kinds *k, ftrace_machine *m, uint32_t cpu);

/* The cpu's state; NULL (counted) for a cpu beyond the machine's. */
static inline ftrace_cpu *ftrace_cpu_of(ftrace_kinds *k, ftrace_machine *m, uint32_t cpu) {
  if (cpu < m->cpus.len && (m->num_cpus == 0 || cpu < m->num_cpus))
    return &m->cpus.data[cpu];
  return ftrace_cpu_new(k, m, cpu);
}

/* prev_state of a switch as trace_processor spells it ("R", "S", "D",
 * "DN", ..., "R+" when preempted); 0 for a value it does not read as a
 * state (counted as task_state_invalid). ftrace_task_state_new spells
 * and interns a state the cache does not hold yet. */
tm_str_id ftrace_task_state_new(ftrace_kinds *k, int64_t state);
/* Inline: every switch spells a state, nearly always one seen before. */
static inline tm_str_id ftrace_task_state(ftrace_kinds *k, int64_t state) {
  uint64_t bits = (uint64_t)state;
  if (bits < FTRACE_STATE_CACHE && k->states && k->states[bits])
    return k->states[bits];
  return ftrace_task_state_new(k, state);
}

/* A sched_switch on ev->cpu: `prev` leaves in `prev_state`, `next` runs. */
static inline void ftrace_switch(ftrace_kinds *k, const ftrace_event *ev, tm_thread_ref prev,
                                 int64_t prev_state, tm_thread_ref next, int32_t next_prio) {
  k->ctx->s->sched_switch(k->ctx->host, ev->clock, ev->ts, ev->m->machine->ref, ev->cpu,
                          prev, ftrace_task_state(k, prev_state), next, next_prio);
}

/* Reads one expanded event. Returns false if its payload does not parse
 * (the bundle is damaged). */
bool ftrace_kinds_read(ftrace_kinds *k, const ftrace_event *ev);

#endif /* TM_PROTO_FTRACE_KINDS_H */
