/* Unit tests of the sorter: run bookkeeping, stable order at equal
 * timestamps (within a run and across runs), stable sorting of unsorted
 * runs, conversion to trace time (constant offsets, multi-snapshot edges,
 * failures and negative results dropped and counted), the empty sorter,
 * large random inputs checked against a reference ordering, and runs
 * packed while pushed giving back every byte of their events. */
#include <glib.h>
#include <string.h>

#include "clock/clock_graph.h"
#include "model/model.h"
#include "sort/sorter.h"
#include "model/stats.h"

enum { MONOTONIC = 3, BOOTTIME = 6 };

/* What the emit callback saw. name_id tags each event with its identity. */
typedef struct seen_event {
  int64_t ts;
  uint32_t tag;
  uint8_t kind;
  uint32_t machine_id;
  uint32_t trace_id;
} seen_event;

static void collect(void *ctx, const tm_event *ev, uint32_t machine_id, uint32_t trace_id) {
  GArray *out = ctx;
  seen_event s = {ev->ts, ev->name_id, ev->kind, machine_id, trace_id};
  g_array_append_val(out, s);
}

static void push(tm_event_run *run, int64_t ts, uint32_t tag, uint8_t kind) {
  tm_event ev = {.ts = ts, .name_id = tag, .kind = kind, .track_id = 1};
  event_run_push(run, &ev);
}

static tm_clock_node clock_node(tm_clock_graph *g, uint32_t clock_id, uint32_t machine) {
  tm_clock_key key = {clock_id, 0, 0, machine};
  return clock_graph_node(g, &key);
}

static void relate(tm_clock_graph *g, tm_clock_node a, int64_t a_value, tm_clock_node b,
                   int64_t b_value) {
  tm_clock_reading r[2] = {{.node = a, .value = a_value, .unit_ns = 1},
                           {.node = b, .value = b_value, .unit_ns = 1}};
  GError *error = NULL;
  g_assert_cmpint(clock_graph_add_snapshot(g, r, 2, &error), >=, 0);
  g_assert_no_error(error);
}

static GArray *merge_all(tm_sorter *sorter) {
  GArray *out = g_array_new(FALSE, FALSE, sizeof(seen_event));
  sorter_merge(sorter, collect, out);
  return out;
}

static const seen_event *at(GArray *a, guint i) {
  return &g_array_index(a, seen_event, i);
}

/* --- runs ------------------------------------------------------------------ */

static void test_runs_are_found_again_by_their_key(void) {
  tm_sorter *sorter = sorter_new();
  tm_event_run *a = sorter_run(sorter, 3, 0, 1);
  tm_event_run *b = sorter_run(sorter, 3, 0, 2);
  tm_event_run *c = sorter_run(sorter, 4, 0, 1);
  tm_event_run *d = sorter_run(sorter, 3, 1, 1);
  g_assert_true(a != b && a != c && a != d && b != c && b != d && c != d);
  g_assert_true(sorter_run(sorter, 3, 0, 1) == a);
  g_assert_true(sorter_run(sorter, 3, 0, 2) == b);
  g_assert_true(sorter_run(sorter, 3, 1, 1) == d);
  g_assert_cmpuint(a->clock, ==, 3);
  g_assert_cmpuint(d->machine_id, ==, 1);
  g_assert_cmpuint(b->trace_id, ==, 2);
  g_assert_true(a->sorted);
  g_assert_cmpuint(a->len, ==, 0);
  /* Many runs: the table grows and every run stays reachable. */
  tm_event_run *many[3000];
  for (uint32_t i = 0; i < 3000; i++) {
    many[i] = sorter_run(sorter, i % 13, i % 7, i);
    push(many[i], i, i, TM_EVENT_SLICE_COMPLETE);
  }
  for (uint32_t i = 0; i < 3000; i++) {
    g_assert_true(sorter_run(sorter, i % 13, i % 7, i) == many[i]);
    g_assert_cmpint(many[i]->events[0].ts, ==, i);
  }
  g_assert_cmpuint(sorter_event_count(sorter), ==, 3000);
  sorter_free(sorter);
}

static void test_push_tracks_order_and_grows(void) {
  tm_sorter *sorter = sorter_new();
  tm_event_run *run = sorter_run(sorter, 3, 0, 0);
  for (uint32_t i = 0; i < 100000; i++)
    push(run, i / 3, i, TM_EVENT_SLICE_COMPLETE); /* equal neighbours stay sorted */
  g_assert_true(run->sorted);
  g_assert_cmpint(run->last_ts, ==, 33333);
  g_assert_cmpuint(run->len, ==, 100000);
  g_assert_cmpuint(run->cap, >=, run->len);
  for (uint32_t i = 0; i < 100000; i++)
    g_assert_cmpuint(run->events[i].name_id, ==, i);
  push(run, 5, 100000, TM_EVENT_SLICE_COMPLETE);
  g_assert_false(run->sorted);
  g_assert_cmpint(run->last_ts, ==, 33333);
  g_assert_cmpuint(sorter_event_count(sorter), ==, 100001);
  sorter_free(sorter);
}

/* --- merge order ------------------------------------------------------------ */

static void test_equal_ts_keeps_begin_before_end_and_file_order(void) {
  tm_sorter *sorter = sorter_new();
  tm_event_run *first = sorter_run(sorter, 3, 0, 0);
  tm_event_run *second = sorter_run(sorter, 4, 0, 1);
  /* A zero-length slice: begin then end at the same ts, in both runs. The
   * second run's events come first in memory order of pushes. */
  push(second, 100, 20, TM_EVENT_SLICE_BEGIN);
  push(second, 100, 21, TM_EVENT_SLICE_END);
  push(first, 100, 10, TM_EVENT_SLICE_BEGIN);
  push(first, 100, 11, TM_EVENT_SLICE_END);
  push(first, 50, 9, TM_EVENT_SLICE_COMPLETE); /* makes `first` unsorted */
  push(second, 100, 22, TM_EVENT_COUNTER);
  GArray *out = merge_all(sorter);
  uint32_t expected[] = {9, 10, 11, 20, 21, 22};
  g_assert_cmpuint(out->len, ==, G_N_ELEMENTS(expected));
  for (guint i = 0; i < out->len; i++)
    g_assert_cmpuint(at(out, i)->tag, ==, expected[i]);
  g_assert_cmpuint(at(out, 1)->kind, ==, TM_EVENT_SLICE_BEGIN);
  g_assert_cmpuint(at(out, 2)->kind, ==, TM_EVENT_SLICE_END);
  g_assert_cmpuint(at(out, 3)->trace_id, ==, 1);
  g_assert_cmpuint(at(out, 0)->trace_id, ==, 0);
  g_array_free(out, TRUE);
  /* Merging released everything. */
  g_assert_cmpuint(sorter_event_count(sorter), ==, 0);
  sorter_free(sorter);
}

static void test_unsorted_runs_are_sorted_stably(void) {
  tm_sorter *sorter = sorter_new();
  tm_event_run *run = sorter_run(sorter, 3, 0, 0);
  /* Descending blocks with repeated ts: stability shows in the tags. */
  int64_t ts[] = {50, 40, 50, 10, 40, 10, 30, 50, 10, 20, 20, 0};
  for (uint32_t i = 0; i < G_N_ELEMENTS(ts); i++)
    push(run, ts[i], i, TM_EVENT_SLICE_COMPLETE);
  g_assert_false(run->sorted);
  GArray *out = merge_all(sorter);
  uint32_t expected[] = {11, 3, 5, 8, 9, 10, 6, 1, 4, 0, 2, 7};
  g_assert_cmpuint(out->len, ==, G_N_ELEMENTS(expected));
  for (guint i = 0; i < out->len; i++)
    g_assert_cmpuint(at(out, i)->tag, ==, expected[i]);
  g_array_free(out, TRUE);
  sorter_free(sorter);
}

/* What the merge saw of each event's extra: its tag and the thread_ts of
 * the extra it named (-1: none). */
typedef struct extra_seen {
  const tm_event_extra *extras;
  GArray *out; /* int64_t pairs */
} extra_seen;

static void collect_extra(void *ctx, const tm_event *ev, uint32_t machine_id,
                          uint32_t trace_id) {
  (void)machine_id;
  (void)trace_id;
  extra_seen *seen = ctx;
  int64_t pair[2] = {ev->name_id,
                     ev->flags & TM_EVENT_HAS_EXTRA ? seen->extras[ev->u.x.extra].thread_ts : -1};
  g_array_append_vals(seen->out, pair, 2);
}

static void note_named(void *ctx, const tm_event *ev) {
  g_array_append_val((GArray *)ctx, ev->u.x.extra);
}

/* sorter_sort() sorts the unsorted run and renumbers the extras in the
 * order the runs are read (run by run): each event still names the extra
 * it named, the merge is the same, an extra no event names goes last and
 * one named twice keeps one place. */
static void test_extras_renumbered_in_read_order(void) {
  tm_event_extra extras[8];
  for (int i = 0; i < 8; i++)
    extras[i] = (tm_event_extra){.thread_ts = 100 + i, .thread_dur = 200 + i};
  GArray *merged[2];
  for (int with_sort = 0; with_sort < 2; with_sort++) {
    tm_event_extra copy[8];
    memcpy(copy, extras, sizeof copy);
    tm_sorter *sorter = sorter_new();
    tm_event_run *unsorted = sorter_run(sorter, 3, 0, 0);
    tm_event_run *sorted = sorter_run(sorter, 3, 0, 1);
    /* Unsorted run: tags 0..4 at ts 50 40 30 20 10, extras 6 4 - 2 6. */
    const uint32_t unsorted_extra[] = {6, 4, UINT32_MAX, 2, 6};
    for (uint32_t i = 0; i < 5; i++) {
      tm_event ev = {.ts = 50 - 10 * i, .name_id = i, .kind = TM_EVENT_SLICE_COMPLETE,
                     .track_id = 1};
      if (unsorted_extra[i] != UINT32_MAX) {
        ev.flags = TM_EVENT_HAS_EXTRA;
        ev.u.x.extra = unsorted_extra[i];
      }
      event_run_push(unsorted, &ev);
    }
    /* Sorted run: tags 10..12 at ts 15 25 35, extras 0 and 1 (a pair:
     * its duration in the second), none, 5; a frame index is not an
     * extra. */
    tm_event a = {.ts = 15, .name_id = 10, .kind = TM_EVENT_SLICE_COMPLETE, .track_id = 2,
                  .flags = TM_EVENT_HAS_EXTRA | TM_EVENT_DUR_IN_EXTRA, .u.x.extra = 0};
    tm_event b = {.ts = 25, .name_id = 11, .kind = TM_EVENT_SLICE_COMPLETE, .track_id = 2,
                  .flags = TM_EVENT_HAS_FRAME, .u.x.extra = 3};
    tm_event c = {.ts = 35, .name_id = 12, .kind = TM_EVENT_SLICE_COMPLETE, .track_id = 2,
                  .flags = TM_EVENT_HAS_EXTRA, .u.x.extra = 5};
    event_run_push(sorted, &a);
    event_run_push(sorted, &b);
    event_run_push(sorted, &c);
    if (with_sort) {
      GArray *named = g_array_new(FALSE, FALSE, sizeof(uint32_t));
      sorter_sort(sorter, copy, 8, note_named, named);
      /* Each event naming an extra, once renumbered, in read order. */
      const uint32_t named_extras[] = {0, 1, 2, 0, 3, 5};
      g_assert_cmpmem(named->data, named->len * sizeof(uint32_t), named_extras,
                      sizeof named_extras);
      g_array_free(named, TRUE);
      g_assert_true(unsorted->sorted);
      /* Read order: 6 (tag 4, ts 10), 2, 4, 6 again; then 0 with 1, and 5. */
      const uint32_t renumbered[] = {0, 1, 2, 0};
      size_t k = 0;
      for (size_t i = 0; i < unsorted->len; i++)
        if (unsorted->events[i].flags & TM_EVENT_HAS_EXTRA)
          g_assert_cmpuint(unsorted->events[i].u.x.extra, ==, renumbered[k++]);
      g_assert_cmpuint(sorted->events[0].u.x.extra, ==, 3);
      g_assert_cmpuint(sorted->events[1].u.x.extra, ==, 3); /* the frame index, kept */
      g_assert_cmpuint(sorted->events[2].u.x.extra, ==, 5);
      const int64_t order[] = {106, 102, 104, 100, 101, 105, 103, 107};
      for (int i = 0; i < 8; i++) {
        g_assert_cmpint(copy[i].thread_ts, ==, order[i]);
        g_assert_cmpint(copy[i].thread_dur, ==, order[i] + 100);
      }
    }
    extra_seen seen = {copy, g_array_new(FALSE, FALSE, sizeof(int64_t))};
    sorter_merge(sorter, collect_extra, &seen);
    merged[with_sort] = seen.out;
    sorter_free(sorter);
  }
  g_assert_cmpuint(merged[0]->len, ==, 16);
  g_assert_cmpmem(merged[0]->data, merged[0]->len * sizeof(int64_t), merged[1]->data,
                  merged[1]->len * sizeof(int64_t));
  g_array_free(merged[0], TRUE);
  g_array_free(merged[1], TRUE);
}

static void test_empty_sorter_emits_nothing(void) {
  tm_sorter *sorter = sorter_new();
  tm_clock_graph *g = clock_graph_new();
  g_assert_cmpuint(sorter_event_count(sorter), ==, 0);
  sorter_convert(sorter, g, NULL);
  GArray *out = merge_all(sorter);
  g_assert_cmpuint(out->len, ==, 0);
  /* Runs without events too, and the sorter is reusable after a merge. */
  sorter_run(sorter, 3, 0, 0);
  sorter_run(sorter, 4, 0, 0);
  sorter_convert(sorter, g, NULL);
  sorter_merge(sorter, collect, out);
  g_assert_cmpuint(out->len, ==, 0);
  tm_event_run *run = sorter_run(sorter, 3, 0, 0);
  g_assert_cmpuint(run->len, ==, 0);
  push(run, 7, 1, TM_EVENT_SLICE_COMPLETE);
  sorter_merge(sorter, collect, out);
  g_assert_cmpuint(out->len, ==, 1);
  g_assert_cmpint(at(out, 0)->ts, ==, 7);
  g_array_free(out, TRUE);
  clock_graph_free(g);
  sorter_free(sorter);
}

/* --- conversion -------------------------------------------------------------- */

static void test_conversion_applies_path_offsets(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node phone = clock_node(g, BOOTTIME, 1);
  tm_clock_node server = clock_node(g, BOOTTIME, 2);
  tm_clock_node mono = clock_node(g, MONOTONIC, 1);
  relate(g, server, 0, phone, 500);      /* server T = phone T + 500 */
  relate(g, mono, 1000, phone, 3000);    /* mono T = phone T + 2000 */
  clock_graph_set_trace_time(g, phone);
  tm_sorter *sorter = sorter_new();
  tm_event_run *on_phone = sorter_run(sorter, phone, 1, 0);
  tm_event_run *on_server = sorter_run(sorter, server, 2, 1);
  tm_event_run *on_mono = sorter_run(sorter, mono, 1, 2);
  tm_event_run *raw = sorter_run(sorter, TM_NO_CLOCK_NODE, 0, 3);
  push(on_phone, 1000, 1, TM_EVENT_SLICE_COMPLETE);
  push(on_phone, 3000, 2, TM_EVENT_SLICE_COMPLETE);
  push(on_server, 800, 3, TM_EVENT_SLICE_COMPLETE);  /* -> 1300 */
  push(on_server, 2600, 4, TM_EVENT_SLICE_COMPLETE); /* -> 3100 */
  push(on_mono, 0, 5, TM_EVENT_SLICE_COMPLETE);      /* -> 2000 */
  push(raw, 2500, 6, TM_EVENT_SLICE_COMPLETE);       /* no clock: as is */
  sorter_convert(sorter, g, NULL);
  g_assert_cmpint(on_server->events[0].ts, ==, 1300);
  g_assert_cmpint(on_server->last_ts, ==, 3100);
  GArray *out = merge_all(sorter);
  int64_t expected_ts[] = {1000, 1300, 2000, 2500, 3000, 3100};
  uint32_t expected_tag[] = {1, 3, 5, 6, 2, 4};
  g_assert_cmpuint(out->len, ==, 6);
  for (guint i = 0; i < out->len; i++) {
    g_assert_cmpint(at(out, i)->ts, ==, expected_ts[i]);
    g_assert_cmpuint(at(out, i)->tag, ==, expected_tag[i]);
  }
  g_array_free(out, TRUE);
  sorter_free(sorter);
  clock_graph_free(g);
}

static void test_multi_snapshot_edge_matches_the_graph(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = clock_node(g, BOOTTIME, 0);
  tm_clock_node mono = clock_node(g, MONOTONIC, 0);
  /* Offsets +1000, then +40 from MONO 1000, then +500 from MONO 2000: a
   * sorted MONO run becomes unsorted on trace time around 1000. */
  relate(g, mono, 0, boot, 1000);
  relate(g, mono, 1000, boot, 1040);
  relate(g, mono, 2000, boot, 2500);
  clock_graph_set_trace_time(g, boot);
  tm_sorter *sorter = sorter_new();
  tm_event_run *run = sorter_run(sorter, mono, 0, 0);
  GArray *expected = g_array_new(FALSE, FALSE, sizeof(int64_t));
  for (uint32_t i = 0; i < 3000; i += 3) {
    push(run, i, i, TM_EVENT_SLICE_COMPLETE);
    int64_t converted;
    g_assert_cmpint(clock_graph_to_trace_time(g, mono, i, &converted), ==, TM_CLOCK_OK);
    g_array_append_val(expected, converted);
  }
  g_assert_true(run->sorted);
  sorter_convert(sorter, g, NULL);
  g_assert_false(run->sorted);
  for (guint i = 0; i < expected->len; i++)
    g_assert_cmpint(run->events[i].ts, ==, g_array_index(expected, int64_t, i));
  g_assert_cmpint(run->events[0].ts, ==, 1000);      /* MONO 0 */
  g_assert_cmpint(run->events[333].ts, ==, 1999);    /* MONO 999 */
  g_assert_cmpint(run->events[334].ts, ==, 1042);    /* MONO 1002 */
  GArray *out = merge_all(sorter);
  g_assert_cmpuint(out->len, ==, expected->len);
  for (guint i = 1; i < out->len; i++) {
    g_assert_cmpint(at(out, i - 1)->ts, <=, at(out, i)->ts);
    if (at(out, i - 1)->ts == at(out, i)->ts)
      g_assert_cmpuint(at(out, i - 1)->tag, <, at(out, i)->tag);
  }
  g_array_free(out, TRUE);
  g_array_free(expected, TRUE);
  sorter_free(sorter);
  clock_graph_free(g);
}

static void test_failed_conversions_are_dropped_and_counted(void) {
  tm_model *model = model_new();
  tm_stats *stats = stats_new(model);
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = clock_node(g, BOOTTIME, 0);
  tm_clock_node mono = clock_node(g, MONOTONIC, 0);
  tm_clock_node lonely = clock_node(g, 140, 2);
  tm_clock_node x = clock_node(g, 141, 4), y = clock_node(g, 142, 4);
  relate(g, mono, 0, boot, 10);
  relate(g, x, 0, y, 10);
  clock_graph_set_trace_time(g, boot);
  tm_sorter *sorter = sorter_new();
  push(sorter_run(sorter, mono, 0, 1), 5, 1, TM_EVENT_SLICE_COMPLETE);
  for (uint32_t i = 0; i < 3; i++)
    push(sorter_run(sorter, lonely, 2, 3), 5 + i, 10 + i, TM_EVENT_SLICE_COMPLETE);
  for (uint32_t i = 0; i < 2; i++)
    push(sorter_run(sorter, x, 4, 5), 5 + i, 20 + i, TM_EVENT_SLICE_COMPLETE);
  sorter_convert(sorter, g, stats);
  g_assert_cmpint(stats_get(stats, "clock_sync_failure_unknown_source_clock", TM_NULL_INT64, 2, 3),
                  ==, 3);
  g_assert_cmpint(stats_get(stats, "clock_sync_failure_no_path", TM_NULL_INT64, 4, 5), ==, 2);
  g_assert_cmpint(stats_get(stats, "clock_sync_failure_no_path", TM_NULL_INT64, 2, 3), ==, 0);
  g_assert_cmpint(stats_get(stats, "clock_sync_failure_unknown_target_clock", TM_NULL_INT64, 0, 1),
                  ==, 0);
  g_assert_cmpuint(sorter_event_count(sorter), ==, 1);
  GArray *out = merge_all(sorter);
  g_assert_cmpuint(out->len, ==, 1);
  g_assert_cmpint(at(out, 0)->ts, ==, 15);
  g_array_free(out, TRUE);
  sorter_free(sorter);
  clock_graph_free(g);

  /* Trace time that no snapshot ever read: unknown target. */
  g = clock_graph_new();
  mono = clock_node(g, MONOTONIC, 0);
  relate(g, mono, 0, clock_node(g, BOOTTIME, 0), 10);
  clock_graph_set_trace_time(g, clock_node(g, BOOTTIME, 7));
  sorter = sorter_new();
  for (uint32_t i = 0; i < 4; i++)
    push(sorter_run(sorter, mono, 0, 8), 5, i, TM_EVENT_SLICE_COMPLETE);
  sorter_convert(sorter, g, stats);
  g_assert_cmpint(stats_get(stats, "clock_sync_failure_unknown_target_clock", TM_NULL_INT64, 0, 8),
                  ==, 4);
  g_assert_cmpuint(sorter_event_count(sorter), ==, 0);
  out = merge_all(sorter);
  g_assert_cmpuint(out->len, ==, 0);
  g_array_free(out, TRUE);
  sorter_free(sorter);
  clock_graph_free(g);
  stats_free(stats);
  model_free(model);
}

/* The int args of import-log row `id` as "key=value ...", in order. */
static char *log_args(const tm_model *model, size_t id) {
  GString *text = g_string_new(NULL);
  uint32_t set = model->import_logs.data[id].arg_set_id;
  for (size_t i = 0; i < model->args.len; i++) {
    const tm_arg_row *a = &model->args.data[i];
    if (model_arg_set_id(model, i) == set)
      g_string_append_printf(text, "%s%s=%" G_GINT64_FORMAT, text->len ? " " : "",
                             string_pool_borrow(model->strings, model_arg_key(model, a)->key),
                             model_arg_int(model, a));
  }
  return g_string_free(text, FALSE);
}

/* docs/clock-model.md §11: each dropped event counts; the first 16 of a (stat,
 * file, machine) are logged with the source clock (and its sequence),
 * their raw time and trace time's clock, in run order; a second run of
 * the same file and machine adds to the stat only. */
static void test_failed_conversions_log_the_first_events(void) {
  tm_model *model = model_new();
  tm_stats *stats = stats_new(model);
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = clock_node(g, BOOTTIME, 0);
  relate(g, clock_node(g, MONOTONIC, 0), 0, boot, 10);
  clock_graph_set_trace_time(g, boot);
  tm_clock_key scoped_key = {70, 3, 0, 1};
  tm_clock_node scoped = clock_graph_node(g, &scoped_key);
  tm_sorter *sorter = sorter_new();
  for (uint32_t i = 0; i < 20; i++)
    push(sorter_run(sorter, scoped, 1, 2), 100 + i, i, TM_EVENT_SLICE_COMPLETE);
  for (uint32_t i = 0; i < 3; i++)
    push(sorter_run(sorter, clock_node(g, 141, 1), 1, 2), 500 + i, i,
         TM_EVENT_SLICE_COMPLETE);
  sorter_convert(sorter, g, stats);
  g_assert_cmpint(stats_get(stats, "clock_sync_failure_unknown_source_clock", TM_NULL_INT64, 1, 2),
                  ==, 23);
  g_assert_cmpuint(model->import_logs.len, ==, TM_IMPORT_LOG_ROWS_PER_STAT);
  for (size_t i = 0; i < model->import_logs.len; i++) {
    const tm_import_log_row *row = &model->import_logs.data[i];
    g_assert_cmpuint(row->trace_id, ==, 2);
    g_assert_cmpint(row->ts, ==, TM_NULL_INT64);
    g_assert_cmpint(row->byte_offset, ==, TM_NULL_INT64);
    const tm_stats_row *stat = &model->stats.data[row->stat_id];
    g_assert_cmpstr(string_pool_borrow(model->strings, stat->name), ==,
                    "clock_sync_failure_unknown_source_clock");
    g_assert_cmpuint(stat->machine_id, ==, 1);
    g_autofree char *args = log_args(model, i);
    g_autofree char *expected = g_strdup_printf(
        "source_clock_id=70 source_timestamp=%zu target_clock_id=6 source_sequence_id=3",
        100 + i);
    g_assert_cmpstr(args, ==, expected);
  }
  sorter_free(sorter);
  clock_graph_free(g);
  stats_free(stats);
  model_free(model);
}

static void test_conversions_that_overflow_are_dropped_and_counted(void) {
  tm_model *model = model_new();
  tm_stats *stats = stats_new(model);
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node phone = clock_node(g, BOOTTIME, 1);
  tm_clock_node server = clock_node(g, BOOTTIME, 2);
  relate(g, server, 0, phone, 1000); /* server T = phone T + 1000 */
  clock_graph_set_trace_time(g, phone);
  tm_sorter *sorter = sorter_new();
  tm_event_run *on_server = sorter_run(sorter, server, 2, 1);
  /* The first event already overflows: the run is kept and each event
   * converted on its own; INT64_MAX - 1000 is the last value that fits. */
  push(on_server, INT64_MAX, 0, TM_EVENT_SLICE_COMPLETE);
  push(on_server, 5, 1, TM_EVENT_SLICE_COMPLETE);
  push(on_server, INT64_MAX - 999, 2, TM_EVENT_SLICE_COMPLETE);
  push(on_server, INT64_MAX - 1000, 3, TM_EVENT_SLICE_COMPLETE);
  sorter_convert(sorter, g, stats);
  g_assert_cmpint(stats_get(stats, "clock_sync_failure_overflow", TM_NULL_INT64, 2, 1),
                  ==, 2);
  GArray *out = merge_all(sorter);
  g_assert_cmpuint(out->len, ==, 2);
  g_assert_cmpint(at(out, 0)->ts, ==, 1005);
  g_assert_cmpuint(at(out, 0)->tag, ==, 1);
  g_assert_cmpint(at(out, 1)->ts, ==, INT64_MAX);
  g_assert_cmpuint(at(out, 1)->tag, ==, 3);
  g_array_free(out, TRUE);
  sorter_free(sorter);
  clock_graph_free(g);
  stats_free(stats);
  model_free(model);
}

static void test_negative_timestamps_are_dropped_and_counted(void) {
  tm_model *model = model_new();
  tm_stats *stats = stats_new(model);
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node phone = clock_node(g, BOOTTIME, 1);
  tm_clock_node server = clock_node(g, BOOTTIME, 2);
  relate(g, server, 1000, phone, 0); /* server T = phone T - 1000 */
  clock_graph_set_trace_time(g, phone);
  tm_sorter *sorter = sorter_new();
  tm_event_run *on_server = sorter_run(sorter, server, 2, 1);
  tm_event_run *on_phone = sorter_run(sorter, phone, 1, 0);
  int64_t server_ts[] = {500, 999, 1000, 400, 1500};
  for (uint32_t i = 0; i < G_N_ELEMENTS(server_ts); i++)
    push(on_server, server_ts[i], i, TM_EVENT_SLICE_COMPLETE);
  push(on_phone, -5, 100, TM_EVENT_SLICE_COMPLETE); /* raw trace time < 0 */
  push(on_phone, 0, 101, TM_EVENT_SLICE_COMPLETE);
  sorter_convert(sorter, g, stats);
  g_assert_cmpint(stats_get(stats, "trace_sorter_negative_timestamp_dropped", TM_NULL_INT64,
                            TM_NULL_ID, TM_NULL_ID), ==, 4);
  /* What is left is compacted and sorted again. */
  g_assert_cmpuint(on_server->len, ==, 2);
  g_assert_true(on_server->sorted);
  GArray *out = merge_all(sorter);
  int64_t expected_ts[] = {0, 0, 500};
  uint32_t expected_tag[] = {2, 101, 4};
  g_assert_cmpuint(out->len, ==, 3);
  for (guint i = 0; i < out->len; i++) {
    g_assert_cmpint(at(out, i)->ts, ==, expected_ts[i]);
    g_assert_cmpuint(at(out, i)->tag, ==, expected_tag[i]);
  }
  g_array_free(out, TRUE);
  sorter_free(sorter);
  clock_graph_free(g);
  stats_free(stats);
  model_free(model);
}

/* --- large inputs against a reference ---------------------------------------- */

typedef struct reference_event {
  int64_t ts;
  uint32_t run;
  uint32_t pos;
  uint32_t tag;
} reference_event;

static gint reference_order(gconstpointer pa, gconstpointer pb) {
  const reference_event *a = pa, *b = pb;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  if (a->run != b->run)
    return a->run < b->run ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Merges everything in `sorter` and checks that it comes out in the
 * reference order (ts, run, position): each event's ts, tag and run (every
 * test creates run r with trace id r). Frees `reference`. */
static void assert_merges_like_the_reference(tm_sorter *sorter, GArray *reference) {
  g_array_sort(reference, reference_order);
  GArray *out = merge_all(sorter);
  g_assert_cmpuint(out->len, ==, reference->len);
  for (guint i = 0; i < out->len; i++) {
    const reference_event *want = &g_array_index(reference, reference_event, i);
    g_assert_cmpint(at(out, i)->ts, ==, want->ts);
    g_assert_cmpuint(at(out, i)->tag, ==, want->tag);
    g_assert_cmpuint(at(out, i)->trace_id, ==, want->run);
  }
  g_array_free(out, TRUE);
  g_array_free(reference, TRUE);
}

/* Fills `runs` runs with `total` events of assorted shapes (sorted, random,
 * nearly sorted, rarely late, descending, constant), merges them, and compares with the
 * reference order (ts, run, position). With `alternate_tracks` every event
 * is on another track than the one before, so unsorted runs are sorted by
 * merging their ascending stretches rather than by track. `threads` is the
 * sorter's (sorter_set_threads). */
G_GNUC_NO_INLINE static void check_against_reference_on(unsigned threads, guint32 seed,
                                                        uint32_t runs, uint32_t total,
                                                        int64_t ts_range,
                                                        bool alternate_tracks) {
  GRand *rand = g_rand_new_with_seed(seed);
  tm_sorter *sorter = sorter_new();
  sorter_set_threads(sorter, threads);
  GArray *reference = g_array_new(FALSE, FALSE, sizeof(reference_event));
  /* At least one entry per shape (r % 6): with runs == 1 propagated into
   * a copy of this function, GCC would see the other shapes' branches
   * index past a one-entry array (-Warray-bounds), though r < runs. */
  uint32_t *pos = g_new0(uint32_t, MAX(runs, 6));
  int64_t *cursor = g_new0(int64_t, MAX(runs, 6));
  /* Run numbers are creation order: create run r as number r. */
  for (uint32_t r = 0; r < runs; r++)
    sorter_run(sorter, r, 0, r);
  for (uint32_t tag = 0; tag < total; tag++) {
    uint32_t r = (uint32_t)g_rand_int_range(rand, 0, (gint32)runs);
    int64_t ts;
    switch (r % 6) {
    case 0: /* sorted, with many repeats */
      cursor[r] += g_rand_int_range(rand, 0, 3);
      ts = cursor[r];
      break;
    case 1: /* random */
      ts = g_rand_int_range(rand, 0, (gint32)ts_range);
      break;
    case 2: /* nearly sorted: complete events emitted at their end */
      cursor[r] += g_rand_int_range(rand, 0, 5);
      ts = MAX(0, cursor[r] - g_rand_int_range(rand, 0, 40));
      break;
    case 3: /* descending */
      ts = ts_range - (int64_t)pos[r];
      break;
    case 4: /* sorted with rare late events (the set-aside path) */
      cursor[r] += g_rand_int_range(rand, 0, 3);
      ts = cursor[r];
      if (g_rand_int_range(rand, 0, 100) < 4)
        ts = MAX(0, ts - g_rand_int_range(rand, 0, 2000));
      break;
    default: /* constant */
      ts = ts_range / 2;
      break;
    }
    tm_event_run *run = sorter_run(sorter, r, 0, r);
    tm_event ev = {.ts = ts, .name_id = tag, .kind = TM_EVENT_SLICE_COMPLETE,
                   .track_id = alternate_tracks ? 1 + pos[r] % 2 : 1};
    event_run_push(run, &ev);
    reference_event ref = {ts, r, pos[r]++, tag};
    g_array_append_val(reference, ref);
  }
  g_assert_cmpuint(sorter_event_count(sorter), ==, total);
  assert_merges_like_the_reference(sorter, reference);
  g_free(pos);
  g_free(cursor);
  sorter_free(sorter);
  g_rand_free(rand);
}

static void check_against_reference(guint32 seed, uint32_t runs, uint32_t total,
                                    int64_t ts_range, bool alternate_tracks) {
  check_against_reference_on(1, seed, runs, total, ts_range, alternate_tracks);
}

/* With two threads the runs are sorted half on a helper thread (above
 * 65536 events to sort and with two runs or more: each case here); the
 * merged stream must still be the reference's. */
static void test_random_runs_sorted_on_two_threads_match_the_reference(void) {
  check_against_reference_on(2, 1, 20, 100000, 5000, false);
  check_against_reference_on(2, 2, 20, 100000, 1000000, false);
  check_against_reference_on(2, 6, 6, 200000, 100000, false);
  check_against_reference_on(2, 10, 12, 100000, 5000, true);
}

static void test_random_runs_match_the_reference(void) {
  check_against_reference(1, 20, 100000, 5000, false);
  check_against_reference(2, 20, 100000, 1000000, false);
  check_against_reference(3, 1, 50000, 100, false);
  check_against_reference(4, 3, 70, 10, false);
  check_against_reference(6, 6, 200000, 100000, false);
  /* The same shapes sorted by the natural merge sort (in place, through a
   * buffer the size of the smaller half of each merge). */
  check_against_reference(7, 12, 40000, 5000, true);
  check_against_reference(8, 6, 30000, 1000000, true);
  check_against_reference(9, 1, 20000, 100, true);
}

/* Runs that interleave many tracks in blocks, as a JSON file written
 * thread by thread does: each track ascending on its own (with equal
 * timestamps), some tracks in random order (counters written by several
 * threads), track ids dense or sparse. This is the by-track merge of the
 * sorter (one run streamed straight out, or several split into the spare
 * buffer) and its fallback; the order must be the reference's. */
static void check_interleaved_tracks(guint32 seed, uint32_t runs, uint32_t tracks,
                                     uint32_t total, uint32_t track_stride,
                                     bool some_tracks_random) {
  GRand *rand = g_rand_new_with_seed(seed);
  tm_sorter *sorter = sorter_new();
  GArray *reference = g_array_new(FALSE, FALSE, sizeof(reference_event));
  uint32_t *pos = g_new0(uint32_t, runs);
  int64_t *track_ts = g_new0(int64_t, tracks);
  for (uint32_t r = 0; r < runs; r++)
    sorter_run(sorter, r, 0, r);
  uint32_t tag = 0;
  while (tag < total) {
    uint32_t r = (uint32_t)g_rand_int_range(rand, 0, (gint32)runs);
    uint32_t t = (uint32_t)g_rand_int_range(rand, 0, (gint32)tracks);
    uint32_t block = (uint32_t)g_rand_int_range(rand, 1, 40);
    bool random_track = some_tracks_random && t % 7 == 0;
    for (uint32_t k = 0; k < block && tag < total; k++, tag++) {
      int64_t ts;
      if (random_track) {
        ts = g_rand_int_range(rand, 0, 200000);
      } else {
        track_ts[t] += g_rand_int_range(rand, 0, 3); /* repeats: ties */
        ts = track_ts[t];
      }
      tm_event ev = {.ts = ts, .name_id = tag, .kind = TM_EVENT_SLICE_COMPLETE,
                     .track_id = t * track_stride};
      event_run_push(sorter_run(sorter, r, 0, r), &ev);
      reference_event ref = {ts, r, pos[r]++, tag};
      g_array_append_val(reference, ref);
    }
  }
  assert_merges_like_the_reference(sorter, reference);
  g_free(pos);
  g_free(track_ts);
  sorter_free(sorter);
  g_rand_free(rand);
}

static void test_interleaved_tracks_merge_like_the_reference(void) {
  check_interleaved_tracks(11, 1, 176, 200000, 1, false);      /* one run, ordered tracks */
  check_interleaved_tracks(12, 1, 176, 200000, 1, true);       /* with random tracks */
  check_interleaved_tracks(13, 3, 50, 150000, 1, true);        /* several runs */
  check_interleaved_tracks(14, 1, 64, 100000, 1000003, true);  /* sparse track ids */
  check_interleaved_tracks(15, 2, 2, 5000, 1, false);          /* few tracks */
}

/* The natural merge sort (a run whose track ids are too sparse for the
 * merge by track) touches at most an eighth of the run's events as scratch
 * (never under 4096): the largest merges of these runs do not fit that
 * buffer and are cut, rotated and merged in pieces. Each track ascends
 * with repeated timestamps, so ties cross the cuts (the reference keeps
 * them in run position order); the second case adds tracks in random
 * order, the third has few tracks and so long ascending stretches. */
static void test_long_stretches_merged_through_a_small_buffer_match_the_reference(void) {
  check_interleaved_tracks(16, 1, 64, 100000, 1000003, true);
  check_interleaved_tracks(17, 1, 64, 150000, 1000003, true);
  check_interleaved_tracks(18, 1, 16, 100000, 1000003, true);
}

/* Packet sequences as a proto file writes them: `tracks` sequences taking
 * turns in blocks of `block` events, all advancing together so their
 * events interleave one by one on the timeline, with ties across
 * sequences (every sequence steps through the same few timestamps) and,
 * when `backwards` is set, one sequence that jumps back in time half-way
 * and one in random order. Split over `runs` runs (one clock each) so both
 * the lone-run merge by track and the k-way merge are exercised; the
 * order must be the reference's (ts, run, position). Returns how many
 * windows the merge cut the runs into (sorter_merged_windows). */
static size_t check_sequences(guint32 seed, uint32_t runs, uint32_t tracks, uint32_t block,
                            uint32_t total, int64_t max_step, bool backwards) {
  GRand *rand = g_rand_new_with_seed(seed);
  tm_sorter *sorter = sorter_new();
  GArray *reference = g_array_new(FALSE, FALSE, sizeof(reference_event));
  uint32_t *pos = g_new0(uint32_t, runs);
  int64_t *track_ts = g_new0(int64_t, tracks);
  for (uint32_t r = 0; r < runs; r++)
    sorter_run(sorter, r, 0, r);
  uint32_t tag = 0;
  while (tag < total) {
    for (uint32_t t = 0; t < tracks && tag < total; t++) {
      uint32_t r = t % runs;
      for (uint32_t k = 0; k < block && tag < total; k++, tag++) {
        track_ts[t] += g_rand_int_range(rand, 0, (gint32)max_step + 1);
        int64_t ts = track_ts[t];
        if (backwards && t == 1 && tag > total / 2 && tag - block < total / 2 + block)
          track_ts[t] = ts = MAX(0, ts - 10000); /* back in time, then on */
        if (backwards && t == 2)
          ts = g_rand_int_range(rand, 0, (gint32)(track_ts[0] + 1));
        tm_event ev = {.ts = ts, .name_id = tag, .kind = TM_EVENT_SLICE_COMPLETE,
                       .track_id = t};
        event_run_push(sorter_run(sorter, r, 0, r), &ev);
        reference_event ref = {ts, r, pos[r]++, tag};
        g_array_append_val(reference, ref);
      }
    }
  }
  assert_merges_like_the_reference(sorter, reference);
  size_t windows = sorter_merged_windows(sorter);
  g_free(pos);
  g_free(track_ts);
  sorter_free(sorter);
  g_rand_free(rand);
  return windows;
}

static void test_sequences_merge_like_the_reference(void) {
  check_sequences(21, 1, 64, 64, 200000, 3, false);   /* one run, ties across sequences */
  check_sequences(22, 1, 64, 64, 200000, 400, true);  /* backwards and random sequences */
  check_sequences(23, 1, 64, 1, 50000, 1, true);      /* one event per turn, many ties */
  check_sequences(24, 4, 64, 64, 200000, 3, true);    /* several runs: the k-way merge */
  check_sequences(25, 64, 64, 16, 100000, 2, false);  /* a run per sequence */
  check_sequences(26, 1, 3, 5, 300, 0, true);         /* few sequences, all ts equal */
}

/* A long run of sequences advancing together is merged in windows of
 * 2^16 events (WINDOW_EVENTS in sorter.c), each opened when its first
 * event is due and closed when its last is merged: the sequences' ties
 * straddle the windows' edges, and with two such runs the windows of both
 * take turns in the k-way merge. The order must be the reference's, in as
 * many windows as 2^16 goes into each run (rounded up: 300000 events make
 * 5; two runs of 200000, 4 each). A run with a sequence in random order
 * spans the whole trace in every window: it is merged whole. */
static void test_long_sequence_runs_merge_in_windows_like_the_reference(void) {
  g_assert_cmpuint(check_sequences(27, 1, 64, 64, 300000, 3, false), ==, 5);
  g_assert_cmpuint(check_sequences(28, 2, 64, 64, 400000, 3, false), ==, 8);
  g_assert_cmpuint(check_sequences(29, 1, 64, 64, 300000, 400, true), ==, 0);
}

/* A system trace as ftrace bundles write it: each CPU's bundle ascends in
 * ts and covers the same stretch of time as the other CPUs' bundles, and
 * inside a bundle nearly every event is on another track than the one
 * before (the CPU's track, then the thread it switched to, ...). Such a
 * run is sorted by merging its ascending stretches, not by track (see
 * TRACK_BLOCK_MIN in sorter.c); the order must be the reference's. */
static void test_cpu_bundles_interleaving_tracks_merge_like_the_reference(void) {
  GRand *rand = g_rand_new_with_seed(31);
  tm_sorter *sorter = sorter_new();
  GArray *reference = g_array_new(FALSE, FALSE, sizeof(reference_event));
  enum { CPUS = 32, THREADS = 2000, TOTAL = 150000 };
  int64_t cpu_ts[CPUS] = {0};
  uint32_t tag = 0;
  while (tag < TOTAL) {
    uint32_t cpu = (uint32_t)g_rand_int_range(rand, 0, CPUS);
    uint32_t bundle = (uint32_t)g_rand_int_range(rand, 50, 300);
    for (uint32_t k = 0; k < bundle && tag < TOTAL; k++, tag++) {
      cpu_ts[cpu] += g_rand_int_range(rand, 0, 40); /* 0: ties */
      uint32_t track = k % 2 ? cpu : CPUS + (uint32_t)g_rand_int_range(rand, 0, THREADS);
      tm_event ev = {.ts = cpu_ts[cpu], .name_id = tag, .kind = TM_EVENT_SLICE_COMPLETE,
                     .track_id = track};
      event_run_push(sorter_run(sorter, 0, 0, 0), &ev);
      reference_event ref = {cpu_ts[cpu], 0, tag, tag};
      g_array_append_val(reference, ref);
    }
  }
  assert_merges_like_the_reference(sorter, reference);
  sorter_free(sorter);
  g_rand_free(rand);
}

static void test_stretches_that_begin_in_any_order_merge_stably(void) {
  /* One run of ascending stretches (each 1-80 events, so some are
   * extended by insertion) whose first timestamps go up and down: the
   * stretches join the merge in the order of their first event, not of
   * the run. Timestamps come from a small range, so many tie across
   * stretches; the reference is the stable sort by ts. */
  GRand *rand = g_rand_new_with_seed(47);
  tm_sorter *sorter = sorter_new();
  GArray *reference = g_array_new(FALSE, FALSE, sizeof(reference_event));
  enum { TOTAL = 60000 };
  uint32_t tag = 0;
  while (tag < TOTAL) {
    int64_t ts = g_rand_int_range(rand, 0, 5000);
    uint32_t stretch = (uint32_t)g_rand_int_range(rand, 1, 81);
    for (uint32_t k = 0; k < stretch && tag < TOTAL; k++, tag++) {
      ts += g_rand_int_range(rand, 0, 3); /* 0: ties within the stretch */
      tm_event ev = {.ts = ts, .name_id = tag, .kind = TM_EVENT_SLICE_COMPLETE,
                     .track_id = (uint32_t)g_rand_int_range(rand, 0, 100)};
      event_run_push(sorter_run(sorter, 0, 0, 0), &ev);
      reference_event ref = {ts, 0, tag, tag};
      g_array_append_val(reference, ref);
    }
  }
  assert_merges_like_the_reference(sorter, reference);
  sorter_free(sorter);
  g_rand_free(rand);
}

/* Three runs of the three kinds the merge streams differently, merged
 * together: run 0 interleaves tracks in blocks, some tracks out of order
 * on their own (merged by track, its out-of-order tracks through sorted
 * keys); run 1 changes track at every event and comes in ascending
 * stretches (merged by its stretches); run 2 is sorted but for a few late
 * events (sorted in place, then read by a cursor). All draw ts from one
 * small range, so ties across runs are frequent: they must go to the
 * smaller run number, and ties within a run keep its order. Also with two
 * threads, where the sorted run is sorted beside the streams' setup. */
static void check_runs_of_every_kind(unsigned threads) {
  GRand *rand = g_rand_new_with_seed(53);
  tm_sorter *sorter = sorter_new();
  sorter_set_threads(sorter, threads);
  GArray *reference = g_array_new(FALSE, FALSE, sizeof(reference_event));
  enum { RUNS = 3, TOTAL = 90000, TRACKS = 40 };
  uint32_t pos[RUNS] = {0};
  int64_t track_ts[TRACKS] = {0}, stretch_ts = 0, sorted_ts = 0;
  for (uint32_t r = 0; r < RUNS; r++)
    sorter_run(sorter, r, 0, r);
  for (uint32_t tag = 0; tag < TOTAL;) {
    uint32_t r = (uint32_t)g_rand_int_range(rand, 0, RUNS);
    uint32_t block = (uint32_t)g_rand_int_range(rand, 1, 40);
    uint32_t t = (uint32_t)g_rand_int_range(rand, 0, TRACKS);
    if (r == 1 && g_rand_int_range(rand, 0, 4) == 0)
      stretch_ts = g_rand_int_range(rand, 0, 3000); /* a new stretch */
    for (uint32_t k = 0; k < block && tag < TOTAL; k++, tag++) {
      int64_t ts;
      uint32_t track;
      if (r == 0) {
        track = t;
        ts = t % 5 == 0 ? g_rand_int_range(rand, 0, 30000)
                        : (track_ts[t] += g_rand_int_range(rand, 0, 3));
      } else if (r == 1) {
        track = pos[r] % 2 ? 1 : 2 + (uint32_t)g_rand_int_range(rand, 0, 50);
        ts = stretch_ts += g_rand_int_range(rand, 0, 3);
      } else {
        track = 1;
        ts = sorted_ts += g_rand_int_range(rand, 0, 2);
        if (g_rand_int_range(rand, 0, 100) < 3)
          ts = MAX(0, ts - g_rand_int_range(rand, 0, 500));
      }
      tm_event ev = {.ts = ts, .name_id = tag, .kind = TM_EVENT_SLICE_COMPLETE,
                     .track_id = track};
      event_run_push(sorter_run(sorter, r, 0, r), &ev);
      reference_event ref = {ts, r, pos[r]++, tag};
      g_array_append_val(reference, ref);
    }
  }
  assert_merges_like_the_reference(sorter, reference);
  sorter_free(sorter);
  g_rand_free(rand);
}

static void test_runs_of_every_kind_merge_like_the_reference(void) {
  check_runs_of_every_kind(1);
  check_runs_of_every_kind(2);
}

static void test_long_runs_release_memory_while_merging(void) {
  /* Two interleaved runs of 300k events (12 MB each) cross the release
   * threshold several times; the order must not suffer. */
  check_against_reference(5, 2, 600000, 1000000, false);
}

/* --- packed runs --------------------------------------------------------------- */

static void collect_whole(void *ctx, const tm_event *ev, uint32_t machine_id,
                          uint32_t trace_id) {
  (void)machine_id;
  (void)trace_id;
  g_array_append_vals(ctx, ev, 1);
}

static gint by_ts_then_position(gconstpointer pa, gconstpointer pb) {
  const tm_event *a = pa, *b = pb;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  /* name_id holds the position */
  return a->name_id < b->name_id ? -1 : a->name_id > b->name_id;
}

enum { PACKED_MERGE, PACKED_CONVERT, PACKED_SORT_EXTRAS, PACKED_UNPACK };
#define PACKED_EXTRAS 1000u

/* A run of 64 sequences taking turns in blocks of 16 events, all
 * advancing together (a TrackEvent trace's shape): it packs every 2^16
 * events while pushed (sorter.c, "Packed blocks"). Every other field takes
 * values of every size and shape: kinds beyond the header's (200), flags
 * and the reserved field, the arg set zero, one above the last or
 * anything, u from zero to all 64 bits, a counter's double. Whatever
 * happens to the run (merged in windows as it is, converted with events
 * dropped, its extras renumbered, or unpacked for a caller), every byte of
 * every event must come out as the same run of plain events gives it. */
static void check_packed_run(guint32 seed, int mode) {
  GRand *rand = g_rand_new_with_seed(seed);
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node phone = clock_node(g, BOOTTIME, 1);
  tm_clock_node server = clock_node(g, BOOTTIME, 2);
  relate(g, server, 1000, phone, 0); /* server T = phone T - 1000 */
  clock_graph_set_trace_time(g, phone);
  tm_sorter *sorter = sorter_new();
  tm_event_run *run = sorter_run(sorter, mode == PACKED_CONVERT ? server : phone, 1, 0);
  GArray *expected = g_array_new(FALSE, FALSE, sizeof(tm_event));
  const uint32_t total = 230000, tracks = 64;
  int64_t track_ts[64] = {0};
  uint32_t args = 0;
  for (uint32_t pos = 0; pos < total;) {
    for (uint32_t t = 0; t < tracks && pos < total; t++) {
      for (uint32_t k = 0; k < 16 && pos < total; k++, pos++) {
        track_ts[t] += g_rand_int_range(rand, 0, 40);
        tm_event ev = {.ts = track_ts[t], .track_id = t, .name_id = pos};
        uint32_t shape = (uint32_t)g_rand_int_range(rand, 0, 8);
        ev.kind = shape == 7 ? 200 : (uint8_t)g_rand_int_range(rand, 0, 12);
        ev.category_id = shape < 2 ? 0 : g_rand_int(rand) >> (shape * 4);
        if (shape == 3)
          ev.flags = (uint8_t)g_rand_int(rand);
        if (shape == 4)
          ev.reserved = (uint16_t)g_rand_int(rand);
        ev.arg_set_id = shape < 3 ? 0 : shape < 6 ? ++args : g_rand_int(rand);
        if (ev.arg_set_id)
          args = ev.arg_set_id;
        if (ev.kind == TM_EVENT_COUNTER)
          ev.u.value = g_rand_double_range(rand, -1e9, 1e9);
        else if (shape > 1)
          ev.u.flow_id = ((uint64_t)g_rand_int(rand) << 32 | g_rand_int(rand)) >> (shape * 8);
        if (mode == PACKED_SORT_EXTRAS) {
          ev.flags &= (uint8_t)~(TM_EVENT_HAS_EXTRA | TM_EVENT_DUR_IN_EXTRA);
          if (shape == 5) {
            ev.flags |= TM_EVENT_HAS_EXTRA;
            ev.u.x.extra = (uint32_t)g_rand_int_range(rand, 0, PACKED_EXTRAS - 1);
          }
        }
        event_run_push(run, &ev);
        g_array_append_val(expected, ev);
      }
    }
  }
  /* Three blocks packed, the rest not yet. */
  g_assert_cmpuint(run->n_blocks, ==, 3);
  g_assert_cmpuint(run->packed, ==, 3 * 65536);
  g_assert_cmpuint(run->len, ==, total);

  tm_event_extra extras[PACKED_EXTRAS];
  for (uint32_t i = 0; i < PACKED_EXTRAS; i++)
    extras[i] = (tm_event_extra){.thread_ts = i, .thread_dur = 0};
  if (mode == PACKED_CONVERT) {
    /* ts - 1000, those below 1000 dropped and counted. */
    tm_model *model = model_new();
    tm_stats *stats = stats_new(model);
    sorter_convert(sorter, g, stats);
    guint kept = 0;
    for (guint i = 0; i < expected->len; i++) {
      tm_event ev = g_array_index(expected, tm_event, i);
      if (ev.ts < 1000)
        continue;
      ev.ts -= 1000;
      g_array_index(expected, tm_event, kept++) = ev;
    }
    g_assert_cmpint(stats_get(stats, "trace_sorter_negative_timestamp_dropped", TM_NULL_INT64,
                              TM_NULL_ID, TM_NULL_ID), ==, (int64_t)(expected->len - kept));
    g_assert_cmpuint(expected->len - kept, >, 1000);
    g_array_set_size(expected, kept);
    g_assert_cmpuint(run->len, ==, kept);
    stats_free(stats);
    model_free(model);
  } else if (mode == PACKED_SORT_EXTRAS) {
    sorter_sort(sorter, extras, PACKED_EXTRAS, NULL, NULL);
    /* Renumbered in position order (the run's read order), each event's
     * extra then holding its old number. */
    uint32_t new_of_old[PACKED_EXTRAS];
    memset(new_of_old, 0xff, sizeof new_of_old);
    uint32_t next = 0;
    for (guint i = 0; i < expected->len; i++) {
      tm_event *ev = &g_array_index(expected, tm_event, i);
      if (!(ev->flags & TM_EVENT_HAS_EXTRA))
        continue;
      if (new_of_old[ev->u.x.extra] == UINT32_MAX)
        new_of_old[ev->u.x.extra] = next++;
      ev->u.x.extra = new_of_old[ev->u.x.extra];
    }
    g_assert_cmpuint(next, >, PACKED_EXTRAS / 2);
    for (uint32_t old = 0; old < PACKED_EXTRAS; old++)
      if (new_of_old[old] != UINT32_MAX)
        g_assert_cmpint(extras[new_of_old[old]].thread_ts, ==, old);
  } else if (mode == PACKED_UNPACK) {
    sorter_unpack(sorter);
    g_assert_cmpuint(run->packed, ==, 0);
    g_assert_cmpmem(run->events, run->len * sizeof(tm_event), expected->data,
                    expected->len * sizeof(tm_event));
  }
  g_array_sort(expected, by_ts_then_position);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(tm_event));
  sorter_merge(sorter, collect_whole, out);
  g_assert_cmpmem(out->data, out->len * sizeof(tm_event), expected->data,
                  expected->len * sizeof(tm_event));
  /* A window per block (a run unpacked: per 2^16 events, as many). */
  g_assert_cmpuint(sorter_merged_windows(sorter), ==, 4);
  g_array_free(out, TRUE);
  g_array_free(expected, TRUE);
  sorter_free(sorter);
  clock_graph_free(g);
  g_rand_free(rand);
}

static void test_packed_runs_merge_every_byte(void) { check_packed_run(41, PACKED_MERGE); }
static void test_packed_runs_convert_every_byte(void) { check_packed_run(42, PACKED_CONVERT); }
static void test_packed_runs_renumber_extras(void) { check_packed_run(43, PACKED_SORT_EXTRAS); }
static void test_packed_runs_unpack_every_byte(void) { check_packed_run(44, PACKED_UNPACK); }

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sorter/runs/found-again-by-their-key", test_runs_are_found_again_by_their_key);
  g_test_add_func("/sorter/runs/push-tracks-order-and-grows", test_push_tracks_order_and_grows);
  g_test_add_func("/sorter/merge/equal-ts-keeps-begin-before-end-and-file-order",
                  test_equal_ts_keeps_begin_before_end_and_file_order);
  g_test_add_func("/sorter/merge/unsorted-runs-are-sorted-stably",
                  test_unsorted_runs_are_sorted_stably);
  g_test_add_func("/sorter/merge/empty-sorter-emits-nothing", test_empty_sorter_emits_nothing);
  g_test_add_func("/sorter/sort/extras-renumbered-in-read-order",
                  test_extras_renumbered_in_read_order);
  g_test_add_func("/sorter/merge/cpu-bundles-interleaving-tracks-merge-like-the-reference",
                  test_cpu_bundles_interleaving_tracks_merge_like_the_reference);
  g_test_add_func("/sorter/convert/applies-path-offsets", test_conversion_applies_path_offsets);
  g_test_add_func("/sorter/convert/multi-snapshot-edge-matches-the-graph",
                  test_multi_snapshot_edge_matches_the_graph);
  g_test_add_func("/sorter/convert/failures-are-dropped-and-counted",
                  test_failed_conversions_are_dropped_and_counted);
  g_test_add_func("/sorter/convert/conversions-that-overflow-are-dropped-and-counted",
                  test_conversions_that_overflow_are_dropped_and_counted);
  g_test_add_func("/sorter/convert/negative-timestamps-are-dropped-and-counted",
                  test_negative_timestamps_are_dropped_and_counted);
  g_test_add_func("/sorter/convert/failed-conversions-log-the-first-16-per-stat-file-and-machine",
                  test_failed_conversions_log_the_first_events);
  g_test_add_func("/sorter/merge/random-runs-match-the-reference", test_random_runs_match_the_reference);
  g_test_add_func("/sorter/merge/random-runs-sorted-on-two-threads-match-the-reference",
                  test_random_runs_sorted_on_two_threads_match_the_reference);
  g_test_add_func("/sorter/merge/long-stretches-merged-through-a-small-buffer-match-the-reference",
                  test_long_stretches_merged_through_a_small_buffer_match_the_reference);
  g_test_add_func("/sorter/merge/stretches-that-begin-in-any-order-merge-stably",
                  test_stretches_that_begin_in_any_order_merge_stably);
  g_test_add_func("/sorter/merge/interleaved-tracks-merge-like-the-reference",
                  test_interleaved_tracks_merge_like_the_reference);
  g_test_add_func("/sorter/merge/sequences-merge-like-the-reference",
                  test_sequences_merge_like_the_reference);
  g_test_add_func("/sorter/merge/long-sequence-runs-merge-in-windows-like-the-reference",
                  test_long_sequence_runs_merge_in_windows_like_the_reference);
  g_test_add_func("/sorter/merge/runs-of-every-kind-merge-like-the-reference",
                  test_runs_of_every_kind_merge_like_the_reference);
  g_test_add_func("/sorter/merge/long-runs-release-memory-while-merging",
                  test_long_runs_release_memory_while_merging);
  g_test_add_func("/sorter/pack/packed-runs-merge-every-byte", test_packed_runs_merge_every_byte);
  g_test_add_func("/sorter/pack/packed-runs-convert-every-byte",
                  test_packed_runs_convert_every_byte);
  g_test_add_func("/sorter/pack/packed-runs-renumber-extras", test_packed_runs_renumber_extras);
  g_test_add_func("/sorter/pack/packed-runs-unpack-every-byte",
                  test_packed_runs_unpack_every_byte);
  return g_test_run();
}
