/*
 * The scheduling builder: turns the merged stream of context switches and
 * wakeups into `sched` and `thread_state` rows (docs/sql-surface.md
 * §14), and interns the `cpu` rows they point at.
 *
 * Payload of the scheduling events in the 40-byte tm_event (event.h):
 *
 *   TM_EVENT_SCHED_SWITCH
 *     ts           switch time
 *     u.dur_ns     next_prio (int32, sign-extended)
 *     track_id     ucpu (cpu row id) the switch happened on
 *     name_id      prev_state as the kernel wrote it ("S", "R+"; 0 unknown)
 *     category_id  utid leaving the cpu
 *     arg_set_id   utid entering the cpu
 *
 *   TM_EVENT_SCHED_WAKING
 *     ts           wakeup time
 *     track_id     ucpu of the target cpu
 *     category_id  utid woken
 *     arg_set_id   waker utid, or TM_NULL_ID if unknown
 *
 * track_id holds a ucpu rather than a track: the sorter only uses it to
 * group events that are in time order among themselves, which a cpu's
 * switches are.
 *
 * Invariants: each cpu has at most one open sched row (dur -1) — the slice
 * of the thread running on it; each thread has at most one open
 * thread_state row. Rows still open at the end keep dur -1. Rows of both
 * tables are appended in ts order, and a row is only ended by a row of
 * the same cpu (sched) or thread (thread_state) begun at its end, so no
 * row ends after the last row begins (model_finalize's trace bounds rely
 * on it). The idle
 * thread gets sched rows but no thread_state (it runs on every cpu at
 * once).
 */
#ifndef TM_SCHED_BUILDER_H
#define TM_SCHED_BUILDER_H

#include <stdint.h>

#include "model/event.h"
#include "model/model.h"

/* Largest cpu number accepted; cpu rows are created densely up to it. */
#define TM_SCHED_MAX_CPU 4095u

/* sched_cpu_intern for a cpu row not made yet (or an invalid cpu). */
uint32_t sched_cpu_intern_new(tm_model *model, uint32_t machine_id, uint32_t cpu);

/* The cpu row (ucpu) of `cpu` on `machine_id`, creating the rows of every
 * lower cpu number of that machine first, so that on one machine ucpu
 * equals cpu. Returns TM_NULL_ID if cpu > TM_SCHED_MAX_CPU. Inline: every
 * switch and wakeup asks, and nearly always the row exists. */
static inline uint32_t sched_cpu_intern(tm_model *model, uint32_t machine_id, uint32_t cpu) {
  if (cpu <= TM_SCHED_MAX_CPU && machine_id != TM_NULL_ID) {
    size_t slot = (size_t)machine_id * ((size_t)TM_SCHED_MAX_CPU + 1) + cpu;
    if (slot < model->cpu_lookup.len && model->cpu_lookup.data[slot])
      return model->cpu_lookup.data[slot] - 1;
  }
  return sched_cpu_intern_new(model, machine_id, cpu);
}

typedef struct tm_sched_builder tm_sched_builder;

/* `model` is borrowed and must outlive the builder. */
tm_sched_builder *sched_builder_new(tm_model *model);
void sched_builder_free(tm_sched_builder *builder);

/* Applies one TM_EVENT_SCHED_SWITCH or TM_EVENT_SCHED_WAKING event; events
 * must come in trace-time order. Other kinds are ignored. */
void sched_builder_push(tm_sched_builder *builder, const tm_event *ev);

#endif /* TM_SCHED_BUILDER_H */
