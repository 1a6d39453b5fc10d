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
  return g_test_run();
}
