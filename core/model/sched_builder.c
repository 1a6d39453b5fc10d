/*
 * Scheduling rows from ordered context switches and wakeups: see
 * sched_builder.h for the event payload and the invariants.
 */
#include "model/sched_builder.h"

#include <glib.h>
#include <string.h>

#define CPU_SLOTS ((size_t)TM_SCHED_MAX_CPU + 1)

/* What the builder keeps of a thread: its open thread_state row with that
 * row's ts and state (so that closing it or testing it on a wakeup does
 * not load the row, a cache miss in a long trace), its latest sleeping
 * row, and whether it is an idle thread (a copy of its model row's
 * is_idle, set when the thread is made, before any merge: testing the
 * model's 48-byte thread rows was two cache misses a switch, ~40% of the
 * builder's time on a 5M-event ftrace trace). 24 bytes. */
typedef struct sched_thread {
  int64_t open_ts;
  uint32_t open;         /* thread_state row id or TM_NULL_ID */
  tm_str_id open_state;  /* the open row's state */
  uint32_t last_blocked; /* latest sleeping row or TM_NULL_ID */
  bool idle;             /* the model row's is_idle > 0 */
} sched_thread;

/* A cpu's open sched row and its ts. */
typedef struct sched_cpu {
  int64_t open_ts;
  uint32_t open; /* sched row id or TM_NULL_ID */
} sched_cpu;

struct tm_sched_builder {
  tm_model *model;
  TM_VEC(sched_cpu) cpus;       /* by ucpu */
  TM_VEC(sched_thread) threads; /* by utid, as many as the model's threads */
  tm_str_id running;            /* "Running" */
  tm_str_id runnable;           /* "R" */
};

uint32_t sched_cpu_intern_new(tm_model *model, uint32_t machine_id, uint32_t cpu) {
  if (cpu > TM_SCHED_MAX_CPU || machine_id == TM_NULL_ID)
    return TM_NULL_ID;
  size_t base = (size_t)machine_id * CPU_SLOTS;
  if (model->cpu_lookup.len < base + CPU_SLOTS) {
    size_t old = model->cpu_lookup.len;
    tm_vec_reserve(&model->cpu_lookup, base + CPU_SLOTS);
    memset(model->cpu_lookup.data + old, 0,
           (base + CPU_SLOTS - old) * sizeof(uint32_t));
    model->cpu_lookup.len = base + CPU_SLOTS;
  }
  uint32_t *slots = model->cpu_lookup.data + base;
  if (slots[cpu])
    return slots[cpu] - 1;
  for (uint32_t c = 0; c <= cpu; c++) {
    if (slots[c])
      continue;
    tm_cpu_row row = {.cpu = c, .machine_id = machine_id};
    tm_vec_push(&model->cpus, row);
    slots[c] = (uint32_t)model->cpus.len; /* ucpu + 1 */
  }
  return slots[cpu] - 1;
}

tm_sched_builder *sched_builder_new(tm_model *model) {
  tm_sched_builder *builder = g_new0(tm_sched_builder, 1);
  builder->model = model;
  builder->running = string_pool_intern_cstr(model->strings, "Running");
  builder->runnable = string_pool_intern_cstr(model->strings, "R");
  return builder;
}

void sched_builder_free(tm_sched_builder *builder) {
  if (!builder)
    return;
  tm_vec_free(&builder->cpus);
  tm_vec_free(&builder->threads);
  g_free(builder);
}

/* Grows the per-thread state to cover every thread of the model: after
 * this, any utid that thread_known() accepts has its slot. */
static void threads_cover(tm_sched_builder *builder) {
  size_t n = builder->model->threads.len;
  if (builder->threads.len >= n)
    return;
  tm_vec_reserve(&builder->threads, n);
  const tm_thread_row *rows = builder->model->threads.data;
  for (size_t i = builder->threads.len; i < n; i++)
    builder->threads.data[i] =
        (sched_thread){0, TM_NULL_ID, 0, TM_NULL_ID, rows[i].is_idle > 0};
  builder->threads.len = n;
}

static sched_cpu *cpu_slot(tm_sched_builder *builder, uint32_t ucpu) {
  if (ucpu >= builder->cpus.len) {
    size_t old = builder->cpus.len;
    tm_vec_reserve(&builder->cpus, (size_t)ucpu + 1);
    for (size_t i = old; i <= ucpu; i++)
      builder->cpus.data[i] = (sched_cpu){0, TM_NULL_ID};
    builder->cpus.len = (size_t)ucpu + 1;
  }
  return &builder->cpus.data[ucpu];
}

static bool thread_known(const tm_model *model, uint32_t utid) {
  return utid < model->threads.len;
}

/* After threads_cover(). */
static bool thread_is_idle(const tm_sched_builder *builder, uint32_t utid) {
  return builder->threads.data[utid].idle;
}

/* Ends the thread's open state at ts and opens `state` (0: a state the
 * trace did not say, NULL in thread_state, as trace_processor keeps it).
 * Inline in its three callers: a switch makes two of these, a wakeup
 * one, and the call's register saves were a fifth of its cost. */
static inline __attribute__((always_inline)) void change_state(tm_sched_builder *builder, int64_t ts, uint32_t utid,
                         tm_str_id state, uint32_t ucpu, uint32_t waker_utid,
                         uint32_t waker_id) {
  tm_model *model = builder->model;
  sched_thread *t = &builder->threads.data[utid];
  if (t->open != TM_NULL_ID)
    model->thread_states.data[t->open].dur = ts - t->open_ts;
  tm_thread_state_row row = {
      .ts = ts,
      .dur = -1,
      .ucpu = ucpu,
      .utid = utid,
      .state = state,
      .waker_utid = waker_utid,
      .waker_id = waker_id,
  };
  tm_vec_push_populated(&model->thread_states, row);
  uint32_t id = (uint32_t)(model->thread_states.len - 1);
  t->open = id;
  t->open_ts = ts;
  t->open_state = state;
  if (state != builder->running && state != builder->runnable)
    t->last_blocked = id;
  else if (state == builder->running)
    t->last_blocked = TM_NULL_ID;
}

static void on_switch(tm_sched_builder *builder, const tm_event *ev) {
  tm_model *model = builder->model;
  uint32_t ucpu = ev->track_id;
  uint32_t prev = ev->category_id, next = ev->arg_set_id;
  if (ucpu >= model->cpus.len || !thread_known(model, prev) ||
      !thread_known(model, next))
    return;
  sched_cpu *cpu = cpu_slot(builder, ucpu);
  if (cpu->open != TM_NULL_ID) {
    tm_sched_row *row = &model->sched_slices.data[cpu->open];
    row->dur = ev->ts - cpu->open_ts;
    row->end_state = ev->name_id;
  }
  tm_sched_row row = {
      .ts = ev->ts,
      .dur = -1,
      .ucpu = ucpu,
      .utid = next,
      .priority = (int32_t)(uint32_t)ev->u.dur_ns,
  };
  tm_vec_push_populated(&model->sched_slices, row);
  cpu->open = (uint32_t)(model->sched_slices.len - 1);
  cpu->open_ts = ev->ts;

  threads_cover(builder);
  if (!thread_is_idle(builder, prev))
    change_state(builder, ev->ts, prev, ev->name_id, TM_NULL_ID, TM_NULL_ID,
                 TM_NULL_ID);
  if (!thread_is_idle(builder, next))
    change_state(builder, ev->ts, next, builder->running, ucpu, TM_NULL_ID,
                 TM_NULL_ID);
}

static void on_waking(tm_sched_builder *builder, const tm_event *ev) {
  tm_model *model = builder->model;
  uint32_t utid = ev->category_id, waker = ev->arg_set_id;
  if (!thread_known(model, utid))
    return;
  threads_cover(builder);
  if (thread_is_idle(builder, utid))
    return;
  if (waker != TM_NULL_ID && !thread_known(model, waker))
    waker = TM_NULL_ID;
  const sched_thread *t = &builder->threads.data[utid];
  /* A thread already running or runnable ("R") is not woken again; any
   * other state, "R+" (preempted) and unknown ones included, is a sleep
   * the wakeup ends (trace_processor's IsBlocked). */
  if (t->open != TM_NULL_ID &&
      (t->open_state == builder->running || t->open_state == builder->runnable))
    return;
  uint32_t waker_id = waker != TM_NULL_ID ? builder->threads.data[waker].open : TM_NULL_ID;
  change_state(builder, ev->ts, utid, builder->runnable, TM_NULL_ID, waker,
               waker_id);
}

/* sched_blocked_reason: on the thread's latest sleeping state, as
 * trace_processor sets it (a thread that never slept has none). */
static void on_blocked_reason(tm_sched_builder *builder, const tm_event *ev) {
  tm_model *model = builder->model;
  uint32_t utid = ev->category_id;
  if (!thread_known(model, utid))
    return;
  threads_cover(builder);
  uint32_t row = builder->threads.data[utid].last_blocked;
  if (row == TM_NULL_ID)
    return;
  tm_thread_state_row *state = &model->thread_states.data[row];
  if (!state->blocked) {
    tm_thread_state_blocked none = {.function = 0, .io_wait = -1};
    tm_vec_push(&model->thread_state_blocked, none);
    state->blocked = (uint32_t)model->thread_state_blocked.len;
  }
  tm_thread_state_blocked *blocked = &model->thread_state_blocked.data[state->blocked - 1];
  if (ev->u.dur_ns >= 0)
    blocked->io_wait = (int8_t)(ev->u.dur_ns != 0);
  if (ev->name_id)
    blocked->function = ev->name_id;
}

void sched_builder_push(tm_sched_builder *builder, const tm_event *ev) {
  if (ev->kind == TM_EVENT_SCHED_SWITCH)
    on_switch(builder, ev);
  else if (ev->kind == TM_EVENT_SCHED_WAKING)
    on_waking(builder, ev);
  else if (ev->kind == TM_EVENT_SCHED_BLOCKED)
    on_blocked_reason(builder, ev);
}
