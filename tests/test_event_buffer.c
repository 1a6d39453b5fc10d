/*
 * Event buffers (core/buffer/event_buffer.c): what a RING_BUFFER and a
 * DISCARD buffer keep of the events offered to them, checked against a
 * reference computed here from every event offered: a ring must hold
 * exactly the K newest of a run by (ts, order offered), a discard buffer
 * the K oldest, where K is whatever it holds (so the test does not depend
 * on how many bytes an event costs); the bytes it charges never exceed
 * its size; every event is held, given up or cut.
 */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "buffer/event_buffer.h"

typedef struct offered {
  int64_t ts;
  uint64_t order;
  uint32_t name; /* the event's identity: its order + 1 */
  const void *run;
} offered;

typedef struct drained {
  GArray *events; /* offered, with args counted */
  size_t with_args;
  size_t total_args;
  uint64_t last_order_per_call; /* emission order check */
  bool in_order;
} drained;

static tm_event instant(int64_t ts, uint32_t name) {
  tm_event ev = {.ts = ts, .name_id = name, .kind = TM_EVENT_SLICE_COMPLETE};
  return ev;
}

static void collect(void *ctx, void *run, const tm_event *ev, int64_t thread_ts,
                    int64_t thread_dur, const tm_buffer_arg *args, size_t n_args) {
  (void)thread_ts;
  (void)thread_dur;
  drained *d = ctx;
  offered o = {ev->ts, ev->name_id - 1, ev->name_id, run};
  const offered *last =
      d->events->len ? &g_array_index(d->events, offered, d->events->len - 1) : NULL;
  if (last && last->run == run && last->order >= o.order)
    d->in_order = false;
  g_array_append_val(d->events, o);
  if (args) {
    d->with_args++;
    d->total_args += n_args;
  }
}

static int newest_first(const void *a, const void *b) {
  const offered *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts > y->ts ? -1 : 1;
  return x->order > y->order ? -1 : x->order < y->order;
}

static int oldest_first(const void *a, const void *b) {
  return -newest_first(a, b);
}

static int by_order(const void *a, const void *b) {
  const offered *x = a, *y = b;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Asserts that `kept` (drained, in emission order) is exactly the first
 * `kept->len` of `all` sorted by `rank`. */
static void assert_kept_is_prefix_of_rank(const GArray *all, const GArray *kept,
                                          int (*rank)(const void *, const void *)) {
  offered *expected = g_memdup2(all->data, all->len * sizeof(offered));
  qsort(expected, all->len, sizeof(offered), rank);
  qsort(expected, kept->len, sizeof(offered), by_order);
  for (guint i = 0; i < kept->len; i++) {
    const offered *k = &g_array_index(kept, offered, i);
    g_assert_cmpuint(k->order, ==, expected[i].order);
    g_assert_cmpint(k->ts, ==, expected[i].ts);
  }
  g_free(expected);
}

/* Offers `n` events with shuffled timestamps (ties included) to one run
 * of a buffer of `size` bytes and checks what it keeps. */
static void check_one_run(bool discard, size_t n, uint64_t size, bool sorted) {
  tm_buffer_spec spec = {size, discard};
  tm_event_buffers *b = event_buffers_new(&spec, 1);
  GArray *all = g_array_new(FALSE, FALSE, sizeof(offered));
  GRand *rand = g_rand_new_with_seed(7);
  static int run_key;
  for (size_t i = 0; i < n; i++) {
    int64_t ts = sorted ? (int64_t)i * 10 : g_rand_int_range(rand, 0, (gint32)(n / 2 + 1)) * 10;
    offered o = {ts, i, (uint32_t)i + 1, &run_key};
    g_array_append_val(all, o);
    tm_event ev = instant(ts, o.name);
    event_buffers_push(b, 0, &run_key, &ev, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME);
    tm_buffer_stats s;
    event_buffers_stats(b, 0, &s);
    g_assert_cmpuint(s.peak_bytes, <=, size);
  }
  tm_buffer_stats s;
  event_buffers_stats(b, 0, &s);
  g_assert_cmpuint(s.written, ==, n);
  g_assert_cmpuint(s.held + s.dropped, ==, n);
  g_assert_cmpuint(s.cut, ==, 0);
  /* It holds as many events as the bytes allow: at least half of what
   * size / record bytes would fit (arrays grow in steps). */
  g_assert_cmpuint(s.held, >=, MIN(n, size / event_buffers_record_bytes() / 2));
  drained d = {.events = g_array_new(FALSE, FALSE, sizeof(offered)), .in_order = true};
  event_buffers_drain(b, collect, &d);
  g_assert_cmpuint(d.events->len, ==, s.held);
  g_assert_true(d.in_order);
  assert_kept_is_prefix_of_rank(all, d.events, discard ? oldest_first : newest_first);
  if (sorted && discard) /* it stops accepting once full */
    for (guint i = 0; i < d.events->len; i++)
      g_assert_cmpuint(g_array_index(d.events, offered, i).order, ==, i);
  g_array_free(d.events, TRUE);
  g_array_free(all, TRUE);
  g_rand_free(rand);
  event_buffers_free(b);
}

static void test_ring_keeps_the_newest_events_of_a_run(void) {
  check_one_run(false, 20000, 64 * 1024, false);
}

static void test_ring_keeps_the_tail_of_a_sorted_run(void) {
  check_one_run(false, 20000, 16 * 1024, true);
}

static void test_discard_keeps_the_oldest_events_of_a_run(void) {
  check_one_run(true, 20000, 64 * 1024, false);
}

static void test_discard_stops_accepting_once_full(void) {
  check_one_run(true, 20000, 16 * 1024, true);
}

static void test_a_buffer_of_one_kib_holds_a_few_events(void) {
  check_one_run(false, 100, 1024, false);
  check_one_run(true, 100, 1024, false);
}

static void test_a_buffer_smaller_than_one_event_holds_none(void) {
  tm_buffer_spec spec = {16, false};
  tm_event_buffers *b = event_buffers_new(&spec, 1);
  static int run_key;
  for (int i = 0; i < 10; i++) {
    tm_event ev = instant(i, (uint32_t)i + 1);
    g_assert_false(event_buffers_push(b, 0, &run_key, &ev, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME));
  }
  tm_buffer_stats s;
  event_buffers_stats(b, 0, &s);
  g_assert_cmpuint(s.held, ==, 0);
  g_assert_cmpuint(s.dropped, ==, 10);
  g_assert_cmpuint(s.peak_bytes, ==, 0);
  event_buffers_free(b);
}

/* The events of `all` that belong to `run`. */
static GArray *of_run(const GArray *all, const void *run) {
  GArray *out = g_array_new(FALSE, FALSE, sizeof(offered));
  for (guint i = 0; i < all->len; i++)
    if (g_array_index(all, offered, i).run == run)
      g_array_append_val(out, g_array_index(all, offered, i));
  return out;
}

/* Two runs on clocks 10^12 ns apart, each offering one event every 10 ns
 * for the same span, interleaved: a ring keeps the same trailing span of
 * each (so about half of what it holds each), each run's share being its
 * newest events. */
static void test_ring_keeps_the_same_span_of_two_runs(void) {
  tm_buffer_spec spec = {32 * 1024, false};
  tm_event_buffers *b = event_buffers_new(&spec, 1);
  static int run_a, run_b;
  GArray *all = g_array_new(FALSE, FALSE, sizeof(offered));
  uint64_t order = 0;
  for (int i = 0; i < 5000; i++) {
    for (int r = 0; r < 2; r++) {
      int64_t ts = (r ? INT64_C(1000000000000) : 0) + i * 10;
      offered o = {ts, order, (uint32_t)order + 1, r ? (void *)&run_b : (void *)&run_a};
      order++;
      g_array_append_val(all, o);
      tm_event ev = instant(ts, o.name);
      event_buffers_push(b, 0, (void *)o.run, &ev, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME);
    }
  }
  tm_buffer_stats s;
  event_buffers_stats(b, 0, &s);
  drained d = {.events = g_array_new(FALSE, FALSE, sizeof(offered)), .in_order = true};
  event_buffers_drain(b, collect, &d);
  g_assert_cmpuint(d.events->len, ==, s.held);
  g_assert_true(d.in_order);
  GArray *all_a = of_run(all, &run_a), *all_b = of_run(all, &run_b);
  GArray *kept_a = of_run(d.events, &run_a), *kept_b = of_run(d.events, &run_b);
  assert_kept_is_prefix_of_rank(all_a, kept_a, newest_first);
  assert_kept_is_prefix_of_rank(all_b, kept_b, newest_first);
  /* Equal spans: the two shares differ by at most the slack of one array
   * step (an eighth of what a run holds, 16 records at least). */
  guint a = kept_a->len, bb = kept_b->len;
  g_assert_cmpuint(a, >, 0);
  g_assert_cmpuint(bb, >, 0);
  g_assert_cmpuint(MAX(a, bb) - MIN(a, bb), <=, MAX(16u, MAX(a, bb) / 8 + 8));
  g_array_free(kept_a, TRUE);
  g_array_free(kept_b, TRUE);
  g_array_free(all_a, TRUE);
  g_array_free(all_b, TRUE);
  g_array_free(d.events, TRUE);
  g_array_free(all, TRUE);
  event_buffers_free(b);
}

/* Args staged for an event travel with it and come out at the drain; the
 * set is released after the reader's callback. */
static void test_args_travel_with_their_event(void) {
  tm_buffer_spec spec = {4096, false};
  tm_event_buffers *b = event_buffers_new(&spec, 1);
  static int run_key;
  tm_buffer_arg args[2] = {{.key = 5, .value = {.type = TM_ARG_INT, .u.int_value = 42}},
                           {.key = 6, .value = {.type = TM_ARG_INT, .u.int_value = 43}}};
  for (int i = 0; i < 200; i++) {
    tm_event ev = instant(i, (uint32_t)i + 1);
    if (i % 2 == 0)
      ev.arg_set_id = event_buffers_stage_args(b, 1, args, 2);
    event_buffers_push(b, 0, &run_key, &ev, i % 3 == 0 ? i : TM_UNKNOWN_TIME, TM_UNKNOWN_TIME);
    event_buffers_release_staged(b, 1, false);
  }
  event_buffers_release_staged(b, 1, true);
  tm_buffer_stats s;
  event_buffers_stats(b, 0, &s);
  g_assert_cmpuint(s.peak_bytes, <=, 4096);
  drained d = {.events = g_array_new(FALSE, FALSE, sizeof(offered)), .in_order = true};
  event_buffers_drain(b, collect, &d);
  /* The newest events are kept; every other one of them has its 2 args. */
  guint with = 0;
  for (guint i = 0; i < d.events->len; i++)
    with += g_array_index(d.events, offered, i).order % 2 == 0;
  g_assert_cmpuint(d.with_args, ==, with);
  g_assert_cmpuint(d.total_args, ==, 2 * with);
  g_assert_cmpuint(event_buffers_args_lost(b), ==, 0);
  g_array_free(d.events, TRUE);
  event_buffers_free(b);
}

static void test_args_used_after_their_release_are_lost(void) {
  tm_buffer_spec spec = {4096, false};
  tm_event_buffers *b = event_buffers_new(&spec, 1);
  static int run_key;
  tm_buffer_arg arg = {.key = 5, .value = {.type = TM_ARG_INT, .u.int_value = 1}};
  uint32_t ref = event_buffers_stage_args(b, 1, &arg, 1);
  tm_event ev = instant(1, 1);
  ev.arg_set_id = ref;
  g_assert_true(event_buffers_push(b, 0, &run_key, &ev, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME));
  event_buffers_release_staged(b, 1, false);
  tm_event again = instant(2, 2);
  again.arg_set_id = ref; /* the reader kept the ref past its callback */
  g_assert_true(event_buffers_push(b, 0, &run_key, &again, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME));
  g_assert_cmpuint(event_buffers_args_lost(b), ==, 1);
  drained d = {.events = g_array_new(FALSE, FALSE, sizeof(offered)), .in_order = true};
  event_buffers_drain(b, collect, &d);
  g_assert_cmpuint(d.events->len, ==, 2);
  g_assert_cmpuint(d.with_args, ==, 1);
  g_array_free(d.events, TRUE);
  event_buffers_free(b);
}

/* Sets a reader never used (an event waiting for its descriptor) stay
 * staged until the file ends. */
static void test_unused_args_stay_staged_until_the_file_ends(void) {
  tm_buffer_spec spec = {4096, false};
  tm_event_buffers *b = event_buffers_new(&spec, 1);
  static int run_key;
  tm_buffer_arg arg = {.key = 5, .value = {.type = TM_ARG_INT, .u.int_value = 1}};
  uint32_t ref = event_buffers_stage_args(b, 1, &arg, 1);
  event_buffers_release_staged(b, 1, false);
  tm_event ev = instant(1, 1);
  ev.arg_set_id = ref;
  event_buffers_push(b, 0, &run_key, &ev, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME);
  event_buffers_release_staged(b, 1, true);
  g_assert_cmpuint(event_buffers_args_lost(b), ==, 0);
  drained d = {.events = g_array_new(FALSE, FALSE, sizeof(offered)), .in_order = true};
  event_buffers_drain(b, collect, &d);
  g_assert_cmpuint(d.with_args, ==, 1);
  g_array_free(d.events, TRUE);
  event_buffers_free(b);
}

static void test_a_cutoff_refuses_later_events_of_its_run(void) {
  tm_buffer_spec spec = {64 * 1024, false};
  tm_event_buffers *b = event_buffers_new(&spec, 1);
  static int run_a, run_b;
  for (int i = 0; i < 100; i++) {
    tm_event ev = instant(i, (uint32_t)i + 1);
    event_buffers_push(b, 0, &run_a, &ev, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME);
    event_buffers_push(b, 0, &run_b, &ev, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME);
    if (i == 49)
      event_buffers_set_cutoff(b, &run_a, 59);
  }
  tm_buffer_stats s;
  event_buffers_stats(b, 0, &s);
  /* run a: 0..59 held, 60..99 cut; run b: all 100 held. */
  g_assert_cmpuint(s.cut, ==, 40);
  g_assert_cmpuint(s.held, ==, 160);
  g_assert_cmpuint(s.dropped, ==, 0);
  event_buffers_free(b);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/event-buffer/ring/keeps-the-newest-events-of-a-run",
                  test_ring_keeps_the_newest_events_of_a_run);
  g_test_add_func("/event-buffer/ring/keeps-the-tail-of-a-sorted-run",
                  test_ring_keeps_the_tail_of_a_sorted_run);
  g_test_add_func("/event-buffer/discard/keeps-the-oldest-events-of-a-run",
                  test_discard_keeps_the_oldest_events_of_a_run);
  g_test_add_func("/event-buffer/discard/stops-accepting-once-full",
                  test_discard_stops_accepting_once_full);
  g_test_add_func("/event-buffer/size/one-kib-holds-a-few-events",
                  test_a_buffer_of_one_kib_holds_a_few_events);
  g_test_add_func("/event-buffer/size/smaller-than-one-event-holds-none",
                  test_a_buffer_smaller_than_one_event_holds_none);
  g_test_add_func("/event-buffer/ring/keeps-the-same-span-of-two-runs",
                  test_ring_keeps_the_same_span_of_two_runs);
  g_test_add_func("/event-buffer/args/travel-with-their-event", test_args_travel_with_their_event);
  g_test_add_func("/event-buffer/args/used-after-their-release-are-lost",
                  test_args_used_after_their_release_are_lost);
  g_test_add_func("/event-buffer/args/unused-stay-staged-until-the-file-ends",
                  test_unused_args_stay_staged_until_the_file_ends);
  g_test_add_func("/event-buffer/cutoff/refuses-later-events-of-its-run",
                  test_a_cutoff_refuses_later_events_of_its_run);
  return g_test_run();
}
