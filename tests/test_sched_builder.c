/*
 * The scheduling builder on hand-made events: cpu rows, sched slices and
 * thread states, and the events it must ignore.
 */
#include <glib.h>

#include "model/sched_builder.h"

typedef struct fixture {
  tm_model *model;
  tm_sched_builder *builder;
  uint32_t idle, a, b; /* utids */
} fixture;

static void fixture_init(fixture *f) {
  f->model = model_new();
  f->idle = model_add_thread(f->model, 0, 0, TM_NULL_ID);
  f->model->threads.data[f->idle].is_idle = 1;
  f->a = model_add_thread(f->model, 0, 10, TM_NULL_ID);
  f->b = model_add_thread(f->model, 0, 20, TM_NULL_ID);
  f->builder = sched_builder_new(f->model);
}

static void fixture_clear(fixture *f) {
  sched_builder_free(f->builder);
  model_free(f->model);
}

static void push_switch(fixture *f, int64_t ts, uint32_t ucpu, uint32_t prev,
                        const char *state, uint32_t next, int32_t prio) {
  tm_event ev = {
      .ts = ts,
      .u.dur_ns = prio,
      .track_id = ucpu,
      .name_id = state ? string_pool_intern_cstr(f->model->strings, state) : 0,
      .category_id = prev,
      .arg_set_id = next,
      .kind = TM_EVENT_SCHED_SWITCH,
  };
  sched_builder_push(f->builder, &ev);
}

static void push_waking(fixture *f, int64_t ts, uint32_t ucpu, uint32_t utid,
                        uint32_t waker) {
  tm_event ev = {
      .ts = ts,
      .track_id = ucpu,
      .category_id = utid,
      .arg_set_id = waker,
      .kind = TM_EVENT_SCHED_WAKING,
  };
  sched_builder_push(f->builder, &ev);
}

static const char *str(fixture *f, tm_str_id id) {
  return string_pool_borrow(f->model->strings, id);
}

static void test_cpu_rows_are_dense_per_machine(void) {
  tm_model *model = model_new();
  g_assert_cmpuint(sched_cpu_intern(model, 0, 2), ==, 2);
  g_assert_cmpuint(model->cpus.len, ==, 3);
  g_assert_cmpuint(sched_cpu_intern(model, 0, 1), ==, 1);
  /* Machine 1's cpu 1 comes after machine 0's rows, with its cpu 0. */
  g_assert_cmpuint(sched_cpu_intern(model, 1, 1), ==, 4);
  g_assert_cmpuint(model->cpus.data[3].cpu, ==, 0);
  g_assert_cmpuint(model->cpus.data[3].machine_id, ==, 1);
  g_assert_cmpuint(model->cpus.data[4].cpu, ==, 1);
  g_assert_cmpuint(model->cpus.len, ==, 5);
  model_free(model);
}

static void test_cpu_beyond_the_limit_is_refused(void) {
  tm_model *model = model_new();
  g_assert_cmpuint(sched_cpu_intern(model, 0, TM_SCHED_MAX_CPU + 1), ==, TM_NULL_ID);
  g_assert_cmpuint(model->cpus.len, ==, 0);
  g_assert_cmpuint(sched_cpu_intern(model, 0, TM_SCHED_MAX_CPU), ==, TM_SCHED_MAX_CPU);
  model_free(model);
}

static void test_events_naming_unknown_rows_are_ignored(void) {
  fixture f;
  fixture_init(&f);
  sched_cpu_intern(f.model, 0, 0);
  push_switch(&f, 10, 5 /* no such cpu */, f.a, "S", f.b, 120);
  push_switch(&f, 10, 0, f.a, "S", 99 /* no such thread */, 120);
  push_waking(&f, 10, 0, 99, TM_NULL_ID);
  g_assert_cmpuint(f.model->sched_slices.len, ==, 0);
  g_assert_cmpuint(f.model->thread_states.len, ==, 0);
  fixture_clear(&f);
}

/* trace_processor's ThreadStateTracker: a waking of a thread Running or
 * Runnable ("R") changes nothing; every other state is a sleep the waking
 * ends, "R+" (preempted, still on the run queue) included. */
static void test_waking_a_running_or_runnable_thread_changes_nothing(void) {
  fixture f;
  fixture_init(&f);
  sched_cpu_intern(f.model, 0, 0);
  push_switch(&f, 10, 0, f.idle, "R", f.a, 120); /* a Running */
  push_waking(&f, 20, 0, f.a, f.b);              /* ignored: running */
  push_switch(&f, 30, 0, f.a, "R", f.idle, 120); /* a R */
  push_waking(&f, 40, 0, f.a, f.b);              /* ignored: runnable */
  g_assert_cmpuint(f.model->thread_states.len, ==, 2);
  g_assert_cmpstr(str(&f, f.model->thread_states.data[0].state), ==, "Running");
  g_assert_cmpint(f.model->thread_states.data[0].dur, ==, 20);
  g_assert_cmpstr(str(&f, f.model->thread_states.data[1].state), ==, "R");
  g_assert_cmpint(f.model->thread_states.data[1].dur, ==, -1);
  /* The idle thread has sched slices but no states. */
  g_assert_cmpuint(f.model->sched_slices.len, ==, 2);
  g_assert_cmpuint(f.model->sched_slices.data[1].utid, ==, f.idle);
  fixture_clear(&f);
}

static void test_waking_a_preempted_thread_makes_it_runnable(void) {
  fixture f;
  fixture_init(&f);
  sched_cpu_intern(f.model, 0, 0);
  push_switch(&f, 10, 0, f.idle, "R", f.a, 120);  /* a Running */
  push_switch(&f, 30, 0, f.a, "R+", f.idle, 120); /* a R+ */
  push_waking(&f, 40, 0, f.a, f.b);               /* a R from 40 */
  g_assert_cmpuint(f.model->thread_states.len, ==, 3);
  g_assert_cmpstr(str(&f, f.model->thread_states.data[1].state), ==, "R+");
  g_assert_cmpint(f.model->thread_states.data[1].dur, ==, 10);
  g_assert_cmpstr(str(&f, f.model->thread_states.data[2].state), ==, "R");
  g_assert_cmpuint(f.model->thread_states.data[2].waker_utid, ==, f.b);
  fixture_clear(&f);
}

/* A switch whose prev_state the trace does not say still ends the thread's
 * Running state and opens one with a NULL state, as trace_processor does
 * (its ThreadStateTracker adds the row whatever the state). */
static void test_switch_with_unknown_prev_state_leaves_a_null_state(void) {
  fixture f;
  fixture_init(&f);
  sched_cpu_intern(f.model, 0, 0);
  push_switch(&f, 10, 0, f.idle, NULL, f.a, 100);
  push_switch(&f, 15, 0, f.a, NULL, f.b, -5);
  /* a: Running 10-15, then NULL from 15; b Running from 15. */
  g_assert_cmpuint(f.model->thread_states.len, ==, 3);
  g_assert_cmpuint(f.model->thread_states.data[0].utid, ==, f.a);
  g_assert_cmpint(f.model->thread_states.data[0].dur, ==, 5);
  g_assert_cmpuint(f.model->thread_states.data[1].utid, ==, f.a);
  g_assert_cmpuint(f.model->thread_states.data[1].state, ==, 0);
  g_assert_cmpint(f.model->thread_states.data[1].dur, ==, -1);
  g_assert_cmpuint(f.model->thread_states.data[2].utid, ==, f.b);
  g_assert_cmpuint(f.model->sched_slices.data[0].end_state, ==, 0);
  g_assert_cmpint(f.model->sched_slices.data[1].priority, ==, -5);
  fixture_clear(&f);
}

static void push_blocked(fixture *f, int64_t ts, uint32_t utid, int io_wait,
                         const char *function) {
  tm_event ev = {
      .ts = ts,
      .u.dur_ns = io_wait,
      .name_id = function ? string_pool_intern_cstr(f->model->strings, function) : 0,
      .category_id = utid,
      .kind = TM_EVENT_SCHED_BLOCKED,
  };
  sched_builder_push(f->builder, &ev);
}

/* sched_blocked_reason sets io_wait and blocked_function on the thread's
 * latest sleep, each only when it says it; a thread that never slept
 * gets nothing, and a later sleep its own values. */
static void test_blocked_reason_marks_the_latest_sleep(void) {
  fixture f;
  fixture_init(&f);
  sched_cpu_intern(f.model, 0, 0);
  push_switch(&f, 10, 0, f.idle, "R", f.a, 120); /* a Running */
  push_blocked(&f, 12, f.a, 1, NULL);            /* a never slept: nothing */
  push_switch(&f, 20, 0, f.a, "D", f.b, 120);    /* a D (row 1), b Running */
  push_blocked(&f, 21, f.a, 1, NULL);
  push_blocked(&f, 22, f.a, -1, "io_schedule");  /* keeps io_wait 1 */
  push_blocked(&f, 23, f.b, 0, "nothing");       /* b is running: nothing */
  push_waking(&f, 30, 0, f.a, f.b);              /* a R (row 3) */
  push_switch(&f, 40, 0, f.b, "S", f.a, 120);    /* b S (row 4), a Running */
  push_blocked(&f, 41, f.b, 0, NULL);
  const tm_model *m = f.model;
  g_assert_cmpuint(m->thread_states.len, ==, 6);
  g_assert_cmpstr(str(&f, m->thread_states.data[1].state), ==, "D");
  g_assert_cmpint(tm_thread_state_io_wait(m, &m->thread_states.data[1]), ==, 1);
  g_assert_cmpstr(str(&f, tm_thread_state_blocked_function(m, &m->thread_states.data[1])),
                  ==, "io_schedule");
  g_assert_cmpstr(str(&f, m->thread_states.data[4].state), ==, "S");
  g_assert_cmpint(tm_thread_state_io_wait(m, &m->thread_states.data[4]), ==, 0);
  g_assert_cmpuint(tm_thread_state_blocked_function(m, &m->thread_states.data[4]), ==, 0);
  for (size_t i = 0; i < m->thread_states.len; i++) {
    if (i == 1 || i == 4)
      continue;
    g_assert_cmpint(tm_thread_state_io_wait(m, &m->thread_states.data[i]), ==, -1);
    g_assert_cmpuint(tm_thread_state_blocked_function(m, &m->thread_states.data[i]), ==, 0);
  }
  /* One side row per marked sleep, not per event. */
  g_assert_cmpuint(m->thread_state_blocked.len, ==, 2);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sched-builder/cpu/rows-are-dense-per-machine",
                  test_cpu_rows_are_dense_per_machine);
  g_test_add_func("/sched-builder/cpu/beyond-the-limit-is-refused",
                  test_cpu_beyond_the_limit_is_refused);
  g_test_add_func("/sched-builder/events-naming-unknown-rows-are-ignored",
                  test_events_naming_unknown_rows_are_ignored);
  g_test_add_func("/sched-builder/waking-a-running-or-runnable-thread-changes-nothing",
                  test_waking_a_running_or_runnable_thread_changes_nothing);
  g_test_add_func("/sched-builder/waking-a-preempted-thread-makes-it-runnable",
                  test_waking_a_preempted_thread_makes_it_runnable);
  g_test_add_func("/sched-builder/switch-with-unknown-prev-state-leaves-a-null-state",
                  test_switch_with_unknown_prev_state_leaves_a_null_state);
  g_test_add_func("/sched-builder/blocked-reason-marks-the-latest-sleep",
                  test_blocked_reason_marks_the_latest_sleep);
  return g_test_run();
}
