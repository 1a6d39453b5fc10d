/* The SQL surface tests' fixture; see sql_surface_fixture.h. */
#include "sql_surface_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slices of the bulk track: enough rows for the index lookups to matter. */
#define N_BULK_SLICES 300


static tm_str_id S(tm_model *m, const char *s) {
  return string_pool_intern_cstr(m->strings, s);
}

static uint32_t add_track(tm_model *m, const char *name, const char *type,
                          tm_track_event_type event_type, uint32_t utid,
                          uint32_t upid) {
  tm_track_row t = {
      .name = name ? S(m, name) : 0,
      .type = S(m, type),
      .parent_id = TM_NULL_ID,
      .machine_id = 1,
      .track_group_id = TM_NULL_ID,
      .event_type = (uint8_t)event_type,
      .utid = utid,
      .upid = upid,
      .trace_id = 1,
  };
  tm_vec_push(&m->tracks, t);
  return (uint32_t)(m->tracks.len - 1);
}

static void add_slice(tm_model *m, int64_t ts, int64_t dur, uint32_t track,
                      const char *category, const char *name, uint32_t depth,
                      uint32_t parent, uint32_t arg_set) {
  model_add_slice(m, ts, dur, track, category ? S(m, category) : 0, S(m, name),
                  depth, parent, arg_set);
}

static void add_counter(tm_model *m, int64_t ts, uint32_t track,
                        double value) {
  tm_counter_row c = {.ts = ts, .value = value, .track_id = track};
  tm_vec_push(&m->counters, c);
}

static uint32_t add_arg(tm_model *m, uint32_t set, const char *key,
                        tm_arg_type type, int64_t i, double r,
                        const char *s) {
  tm_arg_value v = {.type = type};
  if (type == TM_ARG_REAL)
    v.u.real_value = r;
  else if (type == TM_ARG_STRING || type == TM_ARG_JSON)
    v.u.str_id = S(m, s);
  else
    v.u.int_value = i;
  return model_add_arg(m, set, S(m, key), v);
}

/* The model every test reads; the comments give the ids. */
static tm_model *build_model(void) {
  tm_model *m = model_new();

  /* machines: 0 named by a manifest, 1 the host, 2 an embedded id */
  model_add_machine(m, 4294967296);
  m->machines.data[0].name = S(m, "phone");
  model_add_machine(m, 0);
  model_add_machine(m, 7);
  m->machines.data[2].sysname = S(m, "Linux");
  m->machines.data[2].num_cpus = 8;

  /* trace files: 0 the root zip, 1 a member */
  model_add_trace_file(m, TM_NULL_ID, NULL, true);
  m->trace_files.data[0].trace_type = S(m, "zip");
  m->trace_files.data[0].size = 1000;
  m->trace_files.data[0].processing_order = 0;
  model_add_trace_file(m, 0, "app.json", false);
  m->trace_files.data[1].trace_type = S(m, "json");
  m->trace_files.data[1].size = 700;
  m->trace_files.data[1].processing_order = 1;

  model_metadata_set_int(m, "trace_time_clock_id", TM_NULL_ID, TM_NULL_ID, 6);
  model_metadata_set_string(m, "trace_type", TM_NULL_ID, 1, S(m, "json"));
  tm_metadata_row multi = {.name = S(m, "all_data_source_flushed_ns"),
                           .key_type = TM_METADATA_MULTI,
                           .is_int = true,
                           .int_value = 1234,
                           .machine_id = 1,
                           .trace_id = 1};
  tm_vec_push(&m->metadata, multi);

  tm_stats_row stat = {.name = S(m, "json_parser_failure"),
                       .idx = TM_NULL_INT64,
                       .severity = S(m, "error"),
                       .source = S(m, "trace"),
                       .value = 2,
                       .description = S(m, "bad event"),
                       .machine_id = 1,
                       .trace_id = 1};
  tm_vec_push(&m->stats, stat);
  /* One occurrence of that stat logged at byte 12 (import logs). */
  uint32_t log = model_add_import_log(m, 0, 1);
  m->import_logs.data[log].byte_offset = 12;

  tm_clock_snapshot_row snap = {.ts = 1000,
                                .clock_id = 6,
                                .clock_name = S(m, "BOOTTIME"),
                                .clock_value = 5000,
                                .snapshot_id = 0,
                                .machine_id = 1};
  tm_vec_push(&m->clock_snapshots, snap);

  /* processes 0 (pid 0), 1 (pid 100); threads 0 (idle), 1 (tid 101) */
  model_add_process(m, 1, 0);
  uint32_t app = model_add_process(m, 1, 100);
  m->processes.data[app].name = S(m, "app");
  /* processes 2 and 3: a sparse pid, and pid 100 reused */
  model_add_process(m, 2, INT64_C(1) << 40);
  model_add_process(m, 2, 100);
  uint32_t idle = model_add_thread(m, 1, 0, 0);
  m->threads.data[idle].is_idle = 1;
  m->threads.data[idle].is_main_thread = 1;
  uint32_t main_thread = model_add_thread(m, 1, 101, app);
  m->threads.data[main_thread].name = S(m, "main");

  /* args: set 1 on slice 0, set 2 the source args of counter track 2 */
  uint32_t set = add_arg(m, 0, "args.count", TM_ARG_INT, -3, 0, NULL);
  add_arg(m, set, "args.big", TM_ARG_UINT, -1, 0, NULL);
  add_arg(m, set, "args.name", TM_ARG_STRING, 0, 0, "x");
  add_arg(m, set, "args.ratio", TM_ARG_REAL, 0, 0.5, NULL);
  add_arg(m, set, "args.ptr", TM_ARG_POINTER, 255, 0, NULL);
  add_arg(m, set, "args.ok", TM_ARG_BOOL, 1, 0, NULL);
  add_arg(m, set, "args.obj", TM_ARG_JSON, 0, 0, "{\"a\":1}");
  add_arg(m, set, "args.list[2].x", TM_ARG_REAL, 0, 2.0, NULL);
  uint32_t source = add_arg(m, 0, "description", TM_ARG_STRING, 0, 0,
                            "Memory");

  /* tracks */
  add_track(m, NULL, "thread_execution", TM_TRACK_SLICE, main_thread,
            TM_NULL_ID);                                            /* 0 */
  add_track(m, "async", "legacy_async_process_slice", TM_TRACK_SLICE,
            TM_NULL_ID, app);                                       /* 1 */
  add_track(m, "mem", "json_counter", TM_TRACK_COUNTER, TM_NULL_ID,
            app);                                                   /* 2 */
  m->tracks.data[2].counter_unit = S(m, "bytes");
  m->tracks.data[2].source_arg_set_id = source;
  add_track(m, NULL, "thread_execution", TM_TRACK_SLICE, idle,
            TM_NULL_ID);                                            /* 3 */
  add_track(m, "Default Track", "global_track_event", TM_TRACK_SLICE,
            TM_NULL_ID, TM_NULL_ID);                                /* 4 */
  add_track(m, "cpu", "json_counter_thread_fallback", TM_TRACK_COUNTER,
            main_thread, TM_NULL_ID);                               /* 5 */

  /* slices 0..2 by hand */
  add_slice(m, 1000, 500, 0, "cat", "outer", 0, TM_NULL_ID, set);
  model_slice_set_thread_time(m, 0, 10, 5);
  add_slice(m, 1100, 0, 0, NULL, "tick", 1, 0, 0);
  add_slice(m, 1200, -1, 3, "a,b", "q\"b\\c\nd\te\001f\xff", 0, TM_NULL_ID,
            0);
  /* slices 3.. in bulk, spread over the slice tracks */
  static const uint32_t slice_tracks[] = {0, 1, 3, 4};
  for (uint32_t i = 0; i < N_BULK_SLICES; i++) {
    uint32_t id = (uint32_t)m->slices.len;
    uint32_t parent = i % 3 == 1 ? id - 1 - (i % 5) : TM_NULL_ID;
    char name[16];
    g_snprintf(name, sizeof name, "bulk%u", i % 7);
    add_slice(m, 2000 + i * 10, i % 11 == 0 ? 0 : 7,
              slice_tracks[(i * 7 + i / 5) % 4], i % 2 ? "cat" : NULL, name,
              parent == TM_NULL_ID ? 0 : 1, parent, i % 9 == 0 ? set : 0);
  }

  add_counter(m, 1000, 2, 1.5);
  add_counter(m, 1500, 2, -2.25);
  add_counter(m, 1200, 5, 3);

  tm_flow_row f0 = {.slice_out = 0, .slice_in = 1, .trace_id = 42};
  tm_flow_row f1 = {.slice_out = 1, .slice_in = 2, .trace_id = TM_NULL_INT64};
  tm_vec_push(&m->flows, f0);
  tm_vec_push(&m->flows, f1);

  m->bounds_start = 1000;
  m->bounds_end = 99999;
  return m;
}

void fixture_set_up(fixture *f, gconstpointer data) {
  (void)data;
  GError *error = NULL;
  f->model = build_model();
  f->surface = sql_surface_new(f->model, NULL, &error);
  g_assert_no_error(error);
  g_assert_nonnull(f->surface);
}

void fixture_tear_down(fixture *f, gconstpointer data) {
  (void)data;
  sql_surface_free(f->surface);
  model_free(f->model);
}

/* Runs `sql` and returns what it printed; the query must succeed. */
char *query(fixture *f, const char *sql, tm_format format) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  GError *error = NULL;
  bool ok = sql_surface_query(f->surface, sql, format, out, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  fclose(out);
  return text;
}

void assert_query(fixture *f, const char *sql, tm_format format,
                         const char *expected) {
  char *text = query(f, sql, format);
  g_assert_cmpstr(text, ==, expected);
  free(text);
}

/* Runs `sql`, which must fail; returns the error. */
GError *query_error(fixture *f, const char *sql, char **printed) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  GError *error = NULL;
  bool ok = sql_surface_query(f->surface, sql, TM_FORMAT_CSV, out, &error);
  fclose(out);
  g_assert_false(ok);
  g_assert_nonnull(error);
  if (printed)
    *printed = text;
  else
    free(text);
  return error;
}
