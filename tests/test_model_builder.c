/*
 * Unit tests of the model builder: events pushed in merged order become
 * slices with depth/parent, counters and flows; what cannot be placed is
 * counted in stats.
 */
#include <glib.h>
#include <string.h>

#include "input/host_services.h"
#include "model/model_builder.h"
#include "base/string_pool.h"
#include "model/async_tracks.h"

/* The builder gets its inputs as the session gives them: parts of an
 * import state (input/import_state.h), whose overflow tracks the host
 * services make. */
typedef struct fixture {
  tm_import_state state;
  tm_model_builder *builder;
  uint32_t track;
} fixture;

static uint32_t overflow_track(void *state, uint32_t track_id) {
  return import_overflow_track(state, track_id);
}

/* A builder over the state as it is now (its extras are final). */
static void start_builder(fixture *f) {
  model_builder_free(f->builder);
  tm_model_builder_inputs inputs = {
      .model = f->state.model,
      .stats = f->state.stats,
      .async_tracks = f->state.async_tracks,
      .extras = f->state.extras.data,
      .n_extras = f->state.extras.len,
      .events_placed = &f->state.events_placed,
      .overflow_track = overflow_track,
      .overflow_ctx = &f->state,
  };
  f->builder = model_builder_new(&inputs);
}

static void fixture_set_up(fixture *f, gconstpointer data) {
  (void)data;
  memset(f, 0, sizeof *f);
  f->state.model = model_new();
  f->state.stats = stats_new(f->state.model);
  f->state.async_tracks = async_tracks_new();
  f->state.tracks = g_hash_table_new_full(import_track_hash, import_track_equal,
                                          g_free, NULL);
  start_builder(f);
  tm_track_row row = {
      .type = string_pool_intern_cstr(f->state.model->strings, "thread_execution"),
      .parent_id = TM_NULL_ID,
      .track_group_id = TM_NULL_ID,
      .utid = 1,
      .upid = TM_NULL_ID,
  };
  tm_vec_push(&f->state.model->tracks, row);
  f->track = 0;
}

static void fixture_tear_down(fixture *f, gconstpointer data) {
  (void)data;
  model_builder_free(f->builder);
  g_hash_table_destroy(f->state.tracks);
  async_tracks_free(f->state.async_tracks);
  tm_vec_free(&f->state.extras);
  stats_free(f->state.stats);
  model_free(f->state.model);
}

static tm_str_id str(fixture *f, const char *s) {
  return string_pool_intern_cstr(f->state.model->strings, s);
}

static void push(fixture *f, tm_event_kind kind, int64_t ts, int64_t dur,
                 const char *name) {
  tm_event ev = {
      .ts = ts,
      .u.dur_ns = dur,
      .track_id = f->track,
      .name_id = name ? str(f, name) : 0,
      .kind = (uint8_t)kind,
  };
  model_builder_push(f->builder, &ev, 0, 0);
}

static void push_flow(fixture *f, int64_t ts, uint64_t id,
                      tm_flow_direction direction, bool next_begin) {
  tm_event ev = {
      .ts = ts,
      .u.flow_id = id,
      .track_id = f->track,
      .kind = TM_EVENT_FLOW,
      .flags = (uint8_t)(direction | (next_begin ? TM_EVENT_FLOW_BIND_NEXT : 0)),
  };
  model_builder_push(f->builder, &ev, 0, 0);
}

static const tm_slice_row *slice(fixture *f, size_t id) {
  g_assert_cmpuint(id, <, f->state.model->slices.len);
  return &f->state.model->slices.data[id];
}

static int64_t slice_dur(fixture *f, size_t id) {
  return model_slice_dur(f->state.model, slice(f, id));
}

static int64_t stat(fixture *f, const char *name) {
  return stats_get(f->state.stats, name, TM_NULL_INT64, 0, 0);
}

static void test_begin_end_nest_and_unended_slices_keep_minus_one(fixture *f,
                                                                  gconstpointer d) {
  (void)d;
  push(f, TM_EVENT_SLICE_BEGIN, 10, 0, "outer");
  push(f, TM_EVENT_SLICE_BEGIN, 20, 0, "inner");
  push(f, TM_EVENT_SLICE_END, 30, 0, NULL);
  push(f, TM_EVENT_SLICE_BEGIN, 40, 0, "never ended");
  g_assert_cmpuint(f->state.model->slices.len, ==, 3);
  g_assert_cmpint(slice_dur(f, 0), ==, -1);
  g_assert_cmpint(slice_dur(f, 1), ==, 10);
  g_assert_cmpuint(slice(f, 1)->depth, ==, 1);
  g_assert_cmpuint(slice(f, 1)->parent_id, ==, 0);
  g_assert_cmpuint(slice(f, 2)->depth, ==, 1);
  g_assert_cmpint(slice_dur(f, 2), ==, -1);
  g_assert_cmpuint(slice(f, 0)->parent_id, ==, TM_NULL_ID);
}

static void test_named_end_closes_the_matching_slice(fixture *f, gconstpointer d) {
  (void)d;
  push(f, TM_EVENT_SLICE_BEGIN, 10, 0, "a");
  push(f, TM_EVENT_SLICE_BEGIN, 20, 0, "b");
  /* Ends "a": "b", opened inside it and still open, is never ended. */
  push(f, TM_EVENT_SLICE_END, 30, 0, "a");
  g_assert_cmpint(slice_dur(f, 0), ==, 20);
  g_assert_cmpint(slice_dur(f, 1), ==, -1);
  /* Nothing open named "zzz": counted, nothing changes. */
  push(f, TM_EVENT_SLICE_END, 40, 0, "zzz");
  g_assert_cmpint(stat(f, "misplaced_end_event"), ==, 1);
  /* A new slice starts at depth 0 again. */
  push(f, TM_EVENT_SLICE_BEGIN, 50, 0, "c");
  g_assert_cmpuint(slice(f, 2)->depth, ==, 0);
}

static void test_complete_slices_nest_by_containment(fixture *f, gconstpointer d) {
  (void)d;
  push(f, TM_EVENT_SLICE_COMPLETE, 100, 50, "parent");  /* [100, 150) */
  push(f, TM_EVENT_SLICE_COMPLETE, 110, 10, "child");   /* [110, 120) */
  push(f, TM_EVENT_SLICE_COMPLETE, 120, 0, "instant");  /* at child's end */
  push(f, TM_EVENT_SLICE_COMPLETE, 150, 5, "sibling");  /* after parent */
  g_assert_cmpuint(slice(f, 1)->depth, ==, 1);
  g_assert_cmpuint(slice(f, 1)->parent_id, ==, 0);
  /* child ended at 120, so the instant at 120 is inside parent only. */
  g_assert_cmpuint(slice(f, 2)->depth, ==, 1);
  g_assert_cmpuint(slice(f, 2)->parent_id, ==, 0);
  g_assert_cmpuint(slice(f, 3)->depth, ==, 0);
}

static void test_partially_overlapping_complete_slice_spills(fixture *f,
                                                             gconstpointer d) {
  (void)d;
  push(f, TM_EVENT_SLICE_COMPLETE, 100, 50, "a");  /* [100, 150) */
  push(f, TM_EVENT_SLICE_COMPLETE, 120, 50, "b");  /* [120, 170): overlaps */
  g_assert_cmpuint(f->state.model->slices.len, ==, 2);
  g_assert_cmpint(stat(f, "slice_spill_overlapping_complete_event"), ==, 1);
  const tm_slice_row *b = slice(f, 1);
  g_assert_cmpuint(b->track_id, !=, f->track);
  g_assert_cmpuint(b->depth, ==, 0);
  const tm_track_row *overflow = &f->state.model->tracks.data[b->track_id];
  g_assert_cmpstr(string_pool_borrow(f->state.model->strings, overflow->type), ==,
                  "thread_overlapping_slice");
  g_assert_cmpuint(overflow->utid, ==, 1);
}

static void test_negative_duration_is_dropped(fixture *f, gconstpointer d) {
  (void)d;
  push(f, TM_EVENT_SLICE_COMPLETE, 100, -5, "bad");
  g_assert_cmpuint(f->state.model->slices.len, ==, 0);
  g_assert_cmpint(stat(f, "slice_negative_duration"), ==, 1);
}

static void test_slice_whose_end_overflows_is_dropped_and_counted(fixture *f,
                                                                gconstpointer d) {
  (void)d;
  push(f, TM_EVENT_SLICE_COMPLETE, 10, 5, "fits");
  /* INT64_MAX - 10 + 11 is one past INT64_MAX. */
  push(f, TM_EVENT_SLICE_COMPLETE, INT64_MAX - 10, 11, "overflows");
  push(f, TM_EVENT_SLICE_COMPLETE, INT64_MAX - 10, 10, "ends-at-max");
  tm_model *m = f->state.model;
  g_assert_cmpuint(m->slices.len, ==, 2);
  g_assert_cmpint(slice_dur(f, 1), ==, 10);
  g_assert_cmpint(stat(f, "slice_timestamp_overflow"), ==, 1);
  /* The bounds saturate at INT64_MAX instead of wrapping negative. */
  model_finalize(m);
  g_assert_cmpint(m->bounds_start, ==, 10);
  g_assert_cmpint(m->bounds_end, ==, INT64_MAX);
}

static void test_depth_beyond_512_is_dropped(fixture *f, gconstpointer d) {
  (void)d;
  for (int i = 0; i < 520; i++)
    push(f, TM_EVENT_SLICE_BEGIN, i, 0, "deep");
  g_assert_cmpuint(f->state.model->slices.len, ==, 512);
  g_assert_cmpint(stat(f, "slice_max_depth_exceeded"), ==, 8);
}

static void test_flows_link_enclosing_slices(fixture *f, gconstpointer d) {
  (void)d;
  push(f, TM_EVENT_SLICE_COMPLETE, 10, 10, "s0");
  push_flow(f, 12, 7, TM_FLOW_OUT, false);  /* inside s0 */
  push(f, TM_EVENT_SLICE_COMPLETE, 30, 10, "s1");
  push_flow(f, 30, 7, TM_FLOW_STEP, false); /* s1 began at 30 */
  push(f, TM_EVENT_SLICE_COMPLETE, 50, 0, "s2");
  push_flow(f, 50, 7, TM_FLOW_IN, false);   /* s2 is an instant at 50 */
  tm_model *m = f->state.model;
  g_assert_cmpuint(m->flows.len, ==, 2);
  g_assert_cmpuint(m->flows.data[0].slice_out, ==, 0);
  g_assert_cmpuint(m->flows.data[0].slice_in, ==, 1);
  g_assert_cmpuint(m->flows.data[1].slice_out, ==, 1);
  g_assert_cmpuint(m->flows.data[1].slice_in, ==, 2);
  g_assert_cmpint(m->flows.data[1].trace_id, ==, 7);
  /* The flow ended: a further end has no start. */
  push_flow(f, 50, 7, TM_FLOW_IN, false);
  g_assert_cmpint(stat(f, "flow_end_without_start"), ==, 1);
  /* Nothing encloses ts 100. */
  push_flow(f, 100, 8, TM_FLOW_OUT, false);
  g_assert_cmpint(stat(f, "flow_no_enclosing_slice"), ==, 1);
}

static void test_flow_bound_to_next_begin(fixture *f, gconstpointer d) {
  (void)d;
  push(f, TM_EVENT_SLICE_BEGIN, 10, 0, "from");
  push_flow(f, 11, 3, TM_FLOW_OUT, false);
  push_flow(f, 15, 3, TM_FLOW_IN, true); /* binds to the next slice begun */
  push(f, TM_EVENT_SLICE_END, 20, 0, NULL);
  push(f, TM_EVENT_SLICE_BEGIN, 40, 0, "to");
  tm_model *m = f->state.model;
  g_assert_cmpuint(m->flows.len, ==, 1);
  g_assert_cmpuint(m->flows.data[0].slice_out, ==, 0);
  g_assert_cmpuint(m->flows.data[0].slice_in, ==, 1);
}

static void test_end_args_merge_into_the_slice(fixture *f, gconstpointer d) {
  (void)d;
  tm_model *m = f->state.model;
  uint32_t begin_set = model_add_arg(m, 0, str(f, "args.a"),
                                     (tm_arg_value){.type = TM_ARG_INT, .u.int_value = 1});
  uint32_t end_set = model_add_arg(m, 0, str(f, "args.b"),
                                   (tm_arg_value){.type = TM_ARG_INT, .u.int_value = 2});
  tm_event begin = {.ts = 1, .track_id = f->track, .arg_set_id = begin_set,
                    .kind = TM_EVENT_SLICE_BEGIN};
  tm_event end = {.ts = 2, .track_id = f->track, .arg_set_id = end_set,
                  .kind = TM_EVENT_SLICE_END};
  model_builder_push(f->builder, &begin, 0, 0);
  model_builder_push(f->builder, &end, 0, 0);
  g_assert_cmpuint(slice(f, 0)->arg_set_id, ==, begin_set);
  size_t in_set = 0;
  int64_t sum = 0;
  for (size_t i = 0; i < m->args.len; i++)
    if (model_arg_set_id(m, i) == begin_set) {
      in_set++;
      sum += model_arg_int(m, &m->args.data[i]);
    }
  g_assert_cmpuint(in_set, ==, 2);
  g_assert_cmpint(sum, ==, 3);
}

static void test_counters_become_rows(fixture *f, gconstpointer d) {
  (void)d;
  tm_event ev = {.ts = 5, .u.value = 2.5, .track_id = f->track, .kind = TM_EVENT_COUNTER};
  model_builder_push(f->builder, &ev, 0, 0);
  g_assert_cmpuint(f->state.model->counters.len, ==, 1);
  g_assert_cmpfloat(f->state.model->counters.data[0].value, ==, 2.5);
  g_assert_cmpint(f->state.model->counters.data[0].ts, ==, 5);
}

/* Thread time lives beside the slice rows: begin/end pairs get a duration
 * from the end's thread time, complete slices keep theirs, slices without
 * any have no entry; entries set out of order stay sorted by slice id. */
static void test_thread_time_beside_the_rows(fixture *f, gconstpointer d) {
  (void)d;
  tm_model *m = f->state.model;
  tm_vec_push(&f->state.extras, ((tm_event_extra){100, TM_NULL_INT64}));
  tm_vec_push(&f->state.extras, ((tm_event_extra){130, TM_NULL_INT64}));
  tm_vec_push(&f->state.extras, ((tm_event_extra){110, 7}));
  start_builder(f);
  tm_event begin = {.ts = 1, .track_id = f->track, .kind = TM_EVENT_SLICE_BEGIN,
                    .flags = TM_EVENT_HAS_EXTRA, .u.x.extra = 0};
  tm_event plain = {.ts = 2, .u.dur_ns = 1, .track_id = f->track,
                    .kind = TM_EVENT_SLICE_COMPLETE};
  /* A complete slice's duration is kept beside its extra's index. */
  tm_event complete = {.ts = 4, .u.x = {2, 2}, .track_id = f->track,
                       .kind = TM_EVENT_SLICE_COMPLETE, .flags = TM_EVENT_HAS_EXTRA};
  tm_event end = {.ts = 9, .track_id = f->track, .kind = TM_EVENT_SLICE_END,
                  .flags = TM_EVENT_HAS_EXTRA, .u.x.extra = 1};
  model_builder_push(f->builder, &begin, 0, 0);
  model_builder_push(f->builder, &plain, 0, 0);
  model_builder_push(f->builder, &complete, 0, 0);
  model_builder_push(f->builder, &end, 0, 0);
  g_assert_cmpuint(m->slices.len, ==, 3);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[1]), ==, 1);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[2]), ==, 2); /* from u.x.dur_ns */
  int64_t thread_ts, thread_dur;
  g_assert_true(model_slice_thread_time(m, 0, &thread_ts, &thread_dur));
  g_assert_cmpint(thread_ts, ==, 100);
  g_assert_cmpint(thread_dur, ==, 30); /* 130 - 100, from the end's extra */
  g_assert_false(model_slice_thread_time(m, 1, &thread_ts, &thread_dur));
  g_assert_true(model_slice_thread_time(m, 2, &thread_ts, &thread_dur));
  g_assert_cmpint(thread_ts, ==, 110);
  g_assert_cmpint(thread_dur, ==, 7);
  g_assert_false(model_slice_thread_time(m, 3, &thread_ts, &thread_dur));
  /* Out of order: inserted in place, an existing entry replaced. */
  model_slice_set_thread_time(m, 1, 5, TM_NULL_INT64);
  model_slice_set_thread_time(m, 2, 6, 1);
  g_assert_cmpuint(thread_times_count(&m->slice_thread_times), ==, 3);
  g_assert_true(model_slice_thread_time(m, 1, &thread_ts, &thread_dur));
  g_assert_cmpint(thread_ts, ==, 5);
  g_assert_cmpint(thread_dur, ==, TM_NULL_INT64);
  g_assert_true(model_slice_thread_time(m, 2, &thread_ts, &thread_dur));
  g_assert_cmpint(thread_dur, ==, 1);
  g_assert_true(model_slice_thread_time(m, 0, &thread_ts, &thread_dur));
  g_assert_cmpint(thread_dur, ==, 30);
}

/* The extras go back to the kernel region by region (64 KiB, 4096
 * extras) once every announced event naming one has been pushed. 20,000
 * complete slices, each with its own extra (thread_ts 1000 + i, thread_dur
 * i + 1: never zero, which a released page reads as), are announced and
 * pushed in ts order while their extras were written in another order
 * (the i-th slice in ts order names extra perm[i], regions interleaved),
 * as a JSON file's complete events come. One announced event is never
 * pushed (dropped): its region keeps its pages. Every slice must read the
 * thread time of its own extra (none released early), the dropped event's
 * extra must still read as written, and a region fully pushed must read
 * as zero pages (released). */
static void test_extras_released_once_every_announced_event_is_pushed(fixture *f,
                                                                       gconstpointer d) {
  (void)d;
  enum { N = 20000, DROPPED = 12345 };
  uint32_t *perm = g_new(uint32_t, N);
  for (uint32_t i = 0; i < N; i++) /* a permutation: 7919 is prime to N */
    perm[i] = (uint32_t)(((uint64_t)i * 7919) % N);
  for (uint32_t e = 0; e < N; e++)
    tm_vec_push(&f->state.extras, ((tm_event_extra){1000 + (int64_t)e, (int64_t)e + 1}));
  start_builder(f);
  tm_event *events = g_new(tm_event, N);
  for (uint32_t i = 0; i < N; i++) {
    events[i] = (tm_event){.ts = 10 * (int64_t)i, .u.x = {perm[i], 1}, .track_id = f->track,
                           .kind = TM_EVENT_SLICE_COMPLETE, .flags = TM_EVENT_HAS_EXTRA};
    model_builder_expect(f->builder, &events[i]);
  }
  uint32_t dropped_extra = perm[DROPPED];
  for (uint32_t i = 0; i < N; i++)
    if (i != DROPPED)
      model_builder_push(f->builder, &events[i], 0, 0);
  tm_model *m = f->state.model;
  g_assert_cmpuint(m->slices.len, ==, N - 1);
  for (uint32_t id = 0; id < N - 1; id++) {
    uint32_t i = id < DROPPED ? id : id + 1; /* the event this slice came from */
    int64_t thread_ts, thread_dur;
    g_assert_true(model_slice_thread_time(m, id, &thread_ts, &thread_dur));
    g_assert_cmpint(thread_ts, ==, 1000 + (int64_t)perm[i]);
    g_assert_cmpint(thread_dur, ==, (int64_t)perm[i] + 1);
    g_assert_cmpint(model_slice_dur(m, &m->slices.data[id]), ==, 1);
  }
  g_assert_cmpint(f->state.extras.data[dropped_extra].thread_ts, ==, 1000 + (int64_t)dropped_extra);
  /* A page-aligned extra of the third region (counted from the page of
   * extras[0]), which the dropped extra (perm[12345] = 55) is not in: all
   * of that region's events were pushed, and its pages lie wholly inside
   * the block. */
  size_t region_start = ((uintptr_t)&f->state.extras.data[0] & ~(uintptr_t)4095);
  size_t probe = 0;
  for (size_t e = 0; e < N; e++) {
    uintptr_t at = (uintptr_t)&f->state.extras.data[e];
    size_t region = (at - region_start) / (64 << 10);
    size_t dropped_region = ((uintptr_t)&f->state.extras.data[dropped_extra] - region_start) / (64 << 10);
    if (region == 2 && region != dropped_region && at % 4096 == 0) {
      probe = e;
      break;
    }
  }
  g_assert_cmpuint(probe, >, 0);
  g_assert_cmpint(f->state.extras.data[probe].thread_ts, ==, 0);
  g_assert_cmpint(f->state.extras.data[probe].thread_dur, ==, 0);
  g_free(events);
  g_free(perm);
}

/* A complete slice whose duration does not fit in 32 bits keeps it in a
 * second extra (import_state_add_extra); one that fits, beside the index.
 * Both read back, with their thread times, through the builder. */
static void test_long_duration_kept_in_a_second_extra(fixture *f, gconstpointer d) {
  (void)d;
  int64_t long_dur = (int64_t)INT32_MAX + 5;
  tm_event slices[] = {
      {.ts = 10, .u.dur_ns = long_dur, .track_id = f->track, .kind = TM_EVENT_SLICE_COMPLETE},
      {.ts = 20, .u.dur_ns = INT32_MAX, .track_id = f->track,
       .kind = TM_EVENT_SLICE_COMPLETE},
      {.ts = 30, .u.dur_ns = -1, .track_id = f->track, .kind = TM_EVENT_SLICE_COMPLETE},
  };
  import_state_add_extra(&f->state, &slices[0], 100, 70);
  import_state_add_extra(&f->state, &slices[1], 200, TM_UNKNOWN_TIME);
  import_state_add_extra(&f->state, &slices[2], 300, 1);
  g_assert_cmpuint(f->state.extras.len, ==, 4); /* the long one took two */
  g_assert_true(slices[0].flags & TM_EVENT_DUR_IN_EXTRA);
  g_assert_false(slices[1].flags & TM_EVENT_DUR_IN_EXTRA);
  start_builder(f);
  for (size_t i = 0; i < G_N_ELEMENTS(slices); i++) {
    model_builder_expect(f->builder, &slices[i]);
    model_builder_push(f->builder, &slices[i], 0, 0);
  }
  tm_model *m = f->state.model;
  /* The negative duration is refused as before (slice_negative_duration). */
  g_assert_cmpuint(m->slices.len, ==, 2);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[0]), ==, long_dur);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[1]), ==, INT32_MAX);
  int64_t thread_ts, thread_dur;
  g_assert_true(model_slice_thread_time(m, 0, &thread_ts, &thread_dur));
  g_assert_cmpint(thread_ts, ==, 100);
  g_assert_cmpint(thread_dur, ==, 70);
  g_assert_true(model_slice_thread_time(m, 1, &thread_ts, &thread_dur));
  g_assert_cmpint(thread_ts, ==, 200);
  g_assert_cmpint(thread_dur, ==, TM_NULL_INT64);
}

/* An event's two extras (a long duration) can straddle two 64 KiB regions:
 * they count in both, so the second region's pages stay until the event
 * is pushed even when every other event of that region came first. The
 * straddling event is pushed last; its duration (in the extra that lies
 * in the region released before) and thread times must read as written. */
static void test_extras_straddling_two_regions_kept_until_pushed(fixture *f, gconstpointer d) {
  (void)d;
  enum { N = 6000 };
  /* extras[j] = {base + j, j + 1}: an event naming j reads thread_ts
   * base + j, thread_dur j + 1 and its duration base + j + 1. */
  int64_t base = (int64_t)INT32_MAX + 1;
  for (uint32_t j = 0; j < 2 * N + 1; j++)
    tm_vec_push(&f->state.extras, ((tm_event_extra){base + j, (int64_t)j + 1}));
  start_builder(f);
  /* The events' pairs start at an even or an odd index, whichever puts
   * one across a region boundary (the block's offset in its page, which
   * the allocator decides, fixes which). */
  uintptr_t origin = (uintptr_t)&f->state.extras.data[0] & ~(uintptr_t)4095;
  uint32_t parity = 0, straddler = N;
  for (parity = 0; parity < 2 && straddler == N; parity++)
    for (uint32_t e = 0; e < N && straddler == N; e++) {
      uintptr_t first = (uintptr_t)&f->state.extras.data[parity + 2 * e];
      uintptr_t last = (uintptr_t)(&f->state.extras.data[parity + 2 * e] + 2) - 1;
      if ((first - origin) >> 16 != (last - origin) >> 16)
        straddler = e;
    }
  parity--;
  g_assert_cmpuint(straddler, <, N);
  /* Every event after the straddler first (their extras fill the region
   * its second extra lies in), then the ones before it, then it. */
  tm_event *events = g_new(tm_event, N);
  for (uint32_t k = 0; k < N; k++) {
    uint32_t e = k < N - 1 - straddler ? straddler + 1 + k
                 : k < N - 1           ? k - (N - 1 - straddler)
                                       : straddler;
    events[k] = (tm_event){.ts = base * 4 * (int64_t)k, .u.x = {parity + 2 * e, 0},
                           .track_id = f->track, .kind = TM_EVENT_SLICE_COMPLETE,
                           .flags = TM_EVENT_HAS_EXTRA | TM_EVENT_DUR_IN_EXTRA};
    model_builder_expect(f->builder, &events[k]);
  }
  for (uint32_t k = 0; k < N; k++)
    model_builder_push(f->builder, &events[k], 0, 0);
  tm_model *m = f->state.model;
  g_assert_cmpuint(m->slices.len, ==, N);
  uint32_t j = parity + 2 * straddler;
  int64_t thread_ts, thread_dur;
  g_assert_true(model_slice_thread_time(m, N - 1, &thread_ts, &thread_dur));
  g_assert_cmpint(thread_ts, ==, base + j);
  g_assert_cmpint(thread_dur, ==, (int64_t)j + 1);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[N - 1]), ==, base + j + 1);
  g_free(events);
}

/* --- async track sets with a parent or a merge key (model/async_tracks.h) --- */

/* A slot of a process-merged set: `name` the slot's name, `key` a merge
 * key (0: merged by name). */
static uint32_t merged_slot(fixture *f, const char *name, const char *key, uint64_t cookie) {
  tm_track_row row = {
      .name = str(f, name),
      .type = str(f, "process_merged_track_event"),
      .utid = TM_NULL_ID,
      .upid = 1,
  };
  tm_async_merge merge = {.parent = TM_NULL_ID, .set_key = 7,
                          .merge_key = key ? str(f, key) : 0};
  return async_tracks_slot(f->state.async_tracks, &row, &merge, false, cookie);
}

static uint32_t resolve(fixture *f, uint32_t slot, tm_async_use use) {
  return async_tracks_resolve(f->state.async_tracks, f->state.model, slot, use);
}

static const tm_track_row *track_row(fixture *f, uint32_t id) {
  g_assert_cmpuint(id, <, f->state.model->tracks.len);
  return &f->state.model->tracks.data[id];
}

/* Slots of one merge key share a set whatever their names; a track is
 * named after the slot whose event made it, and keeps that name when
 * another slot takes it over. The fixture's track 0 is id 0, so new
 * tracks are 1, 2, ... */
static void test_merge_key_sets_name_tracks_after_their_maker(fixture *f, gconstpointer d) {
  (void)d;
  uint32_t get = merged_slot(f, "GET", "conn", 1);
  uint32_t post = merged_slot(f, "POST", "conn", 2);
  uint32_t other = merged_slot(f, "GET", NULL, 3); /* by name: another set */
  uint32_t get_track = resolve(f, get, TM_ASYNC_BEGIN);
  uint32_t post_track = resolve(f, post, TM_ASYNC_BEGIN); /* GET's is busy */
  g_assert_cmpuint(get_track, ==, 1);
  g_assert_cmpuint(post_track, ==, 2);
  g_assert_cmpstr(string_pool_borrow(f->state.model->strings, track_row(f, 1)->name), ==,
                  "GET");
  g_assert_cmpstr(string_pool_borrow(f->state.model->strings, track_row(f, 2)->name), ==,
                  "POST");
  g_assert_cmpuint(track_row(f, 1)->track_group_id, ==, track_row(f, 2)->track_group_id);
  g_assert_cmpuint(resolve(f, get, TM_ASYNC_END), ==, 1);
  g_assert_cmpuint(resolve(f, other, TM_ASYNC_BEGIN), ==, 3);
  g_assert_cmpuint(track_row(f, 3)->track_group_id, !=, track_row(f, 1)->track_group_id);
}

/* A nameless slot is in the set its name says, but the tracks its events
 * make have no name; a named slot of that set names its own (the rule for
 * unnamed TrackDescriptor children, docs/formats.md §1.9). */
static void test_nameless_slots_share_the_set_and_make_unnamed_tracks(fixture *f,
                                                                     gconstpointer d) {
  (void)d;
  tm_track_row row = {.name = str(f, "job"),
                      .type = str(f, "process_merged_track_event"),
                      .utid = TM_NULL_ID,
                      .upid = 1};
  tm_async_merge merge = {.parent = TM_NULL_ID, .set_key = 7, .nameless = true};
  uint32_t unnamed = async_tracks_slot(f->state.async_tracks, &row, &merge, false, 1);
  uint32_t named = merged_slot(f, "job", NULL, 2);
  g_assert_cmpuint(resolve(f, unnamed, TM_ASYNC_BEGIN), ==, 1);
  g_assert_cmpuint(resolve(f, named, TM_ASYNC_BEGIN), ==, 2); /* 1 is busy */
  g_assert_cmpuint(track_row(f, 1)->name, ==, 0);
  g_assert_cmpstr(string_pool_borrow(f->state.model->strings, track_row(f, 2)->name), ==,
                  "job");
  g_assert_cmpuint(track_row(f, 1)->track_group_id, ==, track_row(f, 2)->track_group_id);
}

/* A set whose parent is another set's slot gets that set's first track as
 * parent_id, made before its own; sets whose parents loop end without a
 * parent instead of recursing; a plain track parented to a slot gets the
 * slot's first track after pass 2. */
static void test_set_parents_resolve_to_first_tracks_and_loops_end(fixture *f, gconstpointer d) {
  (void)d;
  tm_async_tracks *t = f->state.async_tracks;
  uint32_t a = merged_slot(f, "A", NULL, 1);
  uint32_t b = merged_slot(f, "B", NULL, 2);
  uint32_t c = merged_slot(f, "C", NULL, 3);
  async_tracks_set_parent(t, a, b);
  async_tracks_set_parent(t, b, a); /* a loop A -> B -> A */
  async_tracks_set_parent(t, c, c); /* itself: ignored */
  uint32_t a_track = resolve(f, a, TM_ASYNC_BEGIN);
  /* B's first track (1) is made first; its parent, A, is being made. */
  g_assert_cmpuint(a_track, ==, 2);
  g_assert_cmpuint(track_row(f, 2)->parent_id, ==, 1);
  g_assert_cmpuint(track_row(f, 1)->parent_id, ==, TM_NULL_ID);
  g_assert_cmpstr(string_pool_borrow(f->state.model->strings, track_row(f, 1)->name), ==,
                  "B");
  /* B's own event takes its first track (nothing open on it). */
  g_assert_cmpuint(resolve(f, b, TM_ASYNC_INSTANT), ==, 1);
  g_assert_cmpuint(resolve(f, c, TM_ASYNC_INSTANT), ==, 3);
  g_assert_cmpuint(track_row(f, 3)->parent_id, ==, TM_NULL_ID);
  /* The fixture's track parented to C's slot: C's first track. */
  f->state.model->tracks.data[0].parent_id = c;
  async_tracks_finish_parents(t, f->state.model);
  g_assert_cmpuint(track_row(f, 0)->parent_id, ==, 3);
  g_assert_cmpuint(f->state.model->tracks.len, ==, 4);
}

/* The session sizes the slice table to the counted slice events, exactly:
 * the rows asked for, no power of two; a smaller request keeps what is
 * there; pushing past it grows as usual and keeps every row. */
static void test_slice_table_reserved_exactly_grows_past_its_size(void) {
  TM_VEC(tm_slice_row) slices = {0};
  tm_vec_reserve_exact(&slices, 1000);
  g_assert_cmpuint(slices.cap, ==, 1000);
  for (uint32_t i = 0; i < 1000; i++)
    tm_vec_push(&slices, ((tm_slice_row){.ts_code = i, .name = i}));
  tm_vec_reserve_exact(&slices, 10);
  g_assert_cmpuint(slices.cap, ==, 1000);
  tm_vec_push(&slices, ((tm_slice_row){.ts_code = 1000, .name = 1000}));
  g_assert_cmpuint(slices.cap, >, 1000);
  g_assert_cmpuint(slices.len, ==, 1001);
  for (uint32_t i = 0; i <= 1000; i++) {
    g_assert_cmpint(slices.data[i].ts_code, ==, i);
    g_assert_cmpuint(slices.data[i].name, ==, i);
  }
  tm_vec_free(&slices);
}

/* A slice row keeps ts as a 31-bit distance from its block's first row
 * and dur in 31 bits; the rest goes to model->slice_wide. Rows out of ts
 * order, a block spanning more than 2^31 ns, negative and long durations,
 * the extremes of int64, and durations set later all read back. */
static void test_slice_row_wide_ts_and_dur_read_back(void) {
  tm_model *m = model_new();
  const int64_t ts[] = {1000, 999, 1000 + (int64_t)INT32_MAX, 1000 + (int64_t)INT32_MAX + 1,
                        INT64_MIN, INT64_MAX, -5, 1001};
  const int64_t dur[] = {-1, 0, INT32_MAX, (int64_t)INT32_MAX + 1, -5, INT64_MAX,
                         INT64_MIN, 7};
  for (uint32_t block = 0; block < 3; block++)
    for (size_t i = 0; i < G_N_ELEMENTS(ts); i++) {
      /* The third block's first row is far from the second's. */
      int64_t shift = block == 2 ? (int64_t)1 << 40 : 0;
      int64_t t = ts[i] == INT64_MIN || ts[i] == INT64_MAX ? ts[i] : ts[i] + shift;
      uint32_t id = model_add_slice(m, t, dur[i], 0, 0, 0, 0, TM_NULL_ID, 0);
      g_assert_cmpint(model_slice_ts(m, id), ==, t);
      g_assert_cmpint(model_slice_dur(m, &m->slices.data[id]), ==, dur[i]);
      /* Fill the block, so that the next one begins with ts[0]. */
      if (i + 1 == G_N_ELEMENTS(ts))
        while (m->slices.len % TM_SLICE_TS_BLOCK)
          model_add_slice(m, t, 1, 0, 0, 0, 0, TM_NULL_ID, 0);
    }
  g_assert_cmpuint(m->slice_ts_base.len, ==, 3);
  g_assert_cmpint(m->slice_ts_base.data[2], ==, 1000 + ((int64_t)1 << 40));
  /* Rows within 2^31 of their block's first row keep ts in the row. */
  g_assert_cmpuint(m->slices.data[2].ts_code, ==, INT32_MAX);
  g_assert_true(m->slices.data[1].ts_code & TM_SLICE_WIDE);
  g_assert_true(m->slices.data[3].ts_code & TM_SLICE_WIDE);

  /* A duration set later: direct, wide, another wide value (the same
   * side entry), back to open, direct again. */
  size_t wide = m->slice_wide.len;
  model_slice_set_dur(m, 0, 5);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[0]), ==, 5);
  model_slice_set_dur(m, 0, (int64_t)1 << 35);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[0]), ==, (int64_t)1 << 35);
  g_assert_cmpuint(m->slice_wide.len, ==, wide + 1);
  model_slice_set_dur(m, 0, -3);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[0]), ==, -3);
  g_assert_cmpuint(m->slice_wide.len, ==, wide + 1);
  model_slice_set_dur(m, 0, -1);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[0]), ==, -1);
  model_slice_set_dur(m, 0, 0);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[0]), ==, 0);
  /* Every other row still reads back. */
  g_assert_cmpint(model_slice_ts(m, 3), ==, 1000 + (int64_t)INT32_MAX + 1);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[3]), ==, (int64_t)INT32_MAX + 1);
  g_assert_cmpint(model_slice_ts(m, 4), ==, INT64_MIN);
  g_assert_cmpint(model_slice_dur(m, &m->slices.data[6]), ==, INT64_MIN);
  model_free(m);
}

/* A slice row holds a 16-bit category code: the first 65534 distinct
 * categories get one, the rest are found by slice id beside the table. */
static void test_slice_categories_beyond_16_bits_read_back(void) {
  tm_model *m = model_new();
  const uint32_t n = TM_SLICE_CATEGORY_ESCAPE + 100;
  tm_str_id *cats = g_new(tm_str_id, n);
  for (uint32_t i = 0; i < n; i++) {
    char name[16];
    g_snprintf(name, sizeof name, "c%u", i);
    cats[i] = string_pool_intern_cstr(m->strings, name);
    model_add_slice(m, i, 1, 0, cats[i], 0, 0, TM_NULL_ID, 0);
    /* A category seen before keeps its code; none is NULL. */
    model_add_slice(m, i, 1, 0, cats[i / 2], 0, 0, TM_NULL_ID, 0);
    model_add_slice(m, i, 1, 0, 0, 0, 0, TM_NULL_ID, 0);
  }
  for (uint32_t i = 0; i < n; i++) {
    g_assert_cmpuint(model_slice_category(m, 3 * i), ==, cats[i]);
    g_assert_cmpuint(model_slice_category(m, 3 * i + 1), ==, cats[i / 2]);
    g_assert_cmpuint(model_slice_category(m, 3 * i + 2), ==, 0);
  }
  g_assert_cmpuint(m->slice_categories.len, ==, TM_SLICE_CATEGORY_ESCAPE);
  g_assert_cmpuint(m->slices.data[3 * (n - 1)].category_code, ==, TM_SLICE_CATEGORY_ESCAPE);
  g_assert_cmpuint(m->slice_category_escapes.len, >, 0);
  g_free(cats);
  model_free(m);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add(path, fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD("/model-builder/begin-end-nest-and-unended-slices-keep-minus-one",
      test_begin_end_nest_and_unended_slices_keep_minus_one);
  ADD("/model-builder/named-end-closes-the-matching-slice",
      test_named_end_closes_the_matching_slice);
  ADD("/model-builder/complete-slices-nest-by-containment",
      test_complete_slices_nest_by_containment);
  ADD("/model-builder/partially-overlapping-complete-slice-spills",
      test_partially_overlapping_complete_slice_spills);
  ADD("/model-builder/negative-duration-is-dropped", test_negative_duration_is_dropped);
  ADD("/model-builder/slice-whose-end-overflows-is-dropped-and-counted",
      test_slice_whose_end_overflows_is_dropped_and_counted);
  ADD("/model-builder/depth-beyond-512-is-dropped", test_depth_beyond_512_is_dropped);
  ADD("/model-builder/flows-link-enclosing-slices", test_flows_link_enclosing_slices);
  ADD("/model-builder/flow-bound-to-next-begin", test_flow_bound_to_next_begin);
  ADD("/model-builder/end-args-merge-into-the-slice", test_end_args_merge_into_the_slice);
  ADD("/model-builder/counters-become-rows", test_counters_become_rows);
  ADD("/model-builder/thread-time-beside-the-rows", test_thread_time_beside_the_rows);
  ADD("/model-builder/extras/released-once-every-announced-event-is-pushed",
      test_extras_released_once_every_announced_event_is_pushed);
  ADD("/model-builder/extras/long-duration-kept-in-a-second-extra",
      test_long_duration_kept_in_a_second_extra);
  ADD("/model-builder/extras/straddling-two-regions-kept-until-pushed",
      test_extras_straddling_two_regions_kept_until_pushed);
  ADD("/model-builder/async/merge-key-sets-name-tracks-after-their-maker",
      test_merge_key_sets_name_tracks_after_their_maker);
  ADD("/model-builder/async/nameless-slots-share-the-set-and-make-unnamed-tracks",
      test_nameless_slots_share_the_set_and_make_unnamed_tracks);
  ADD("/model-builder/async/set-parents-resolve-to-first-tracks-and-loops-end",
      test_set_parents_resolve_to_first_tracks_and_loops_end);
#undef ADD
  g_test_add_func("/model/slice-row/wide-ts-and-dur-read-back",
                  test_slice_row_wide_ts_and_dur_read_back);
  g_test_add_func("/model/slice-row/categories-beyond-16-bits-read-back",
                  test_slice_categories_beyond_16_bits_read_back);
  g_test_add_func("/model-builder/slice-table-reserved-exactly-grows-past-its-size",
                  test_slice_table_reserved_exactly_grows_past_its_size);
  return g_test_run();
}
