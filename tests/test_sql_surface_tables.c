/* Unit tests of the SQL surface's tables and views over the hand-built
 * model of tests/support/sql_surface_fixture.h: computed columns
 * (label_index, display_value, key_type), the views trace_processor has,
 * and index lookups agreeing with scans. Beside it:
 * test_sql_surface_output.c and test_sql_surface_save.c. */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_surface_fixture.h"


/* ---- tables and views ---- */

static void test_machine_label_index_ranks_non_host_rows(fixture *f,
                                                         gconstpointer data) {
  (void)data;
  assert_query(f,
               "SELECT id, raw_id, name, sysname, num_cpus, label_index "
               "FROM machine",
               TM_FORMAT_CSV,
               "\"id\",\"raw_id\",\"name\",\"sysname\",\"num_cpus\","
               "\"label_index\"\n"
               "0,4294967296,\"phone\",\"[NULL]\",\"[NULL]\",1\n"
               "1,0,\"[NULL]\",\"[NULL]\",\"[NULL]\",0\n"
               "2,7,\"[NULL]\",\"Linux\",8,2\n");
  /* The rank does not depend on a filter applied outside the view. */
  assert_query(f, "SELECT label_index FROM machine WHERE raw_id = 7",
               TM_FORMAT_CSV, "\"label_index\"\n2\n");
}

static void test_trace_file_has_both_names(fixture *f, gconstpointer data) {
  (void)data;
  const char *expected =
      "\"id\",\"parent_id\",\"name\",\"size\",\"trace_type\","
      "\"processing_order\",\"is_container\"\n"
      "0,\"[NULL]\",\"[NULL]\",1000,\"zip\",0,1\n"
      "1,0,\"app.json\",700,\"json\",1,0\n";
  assert_query(f, "SELECT * FROM trace_file", TM_FORMAT_CSV, expected);
  assert_query(f, "SELECT * FROM __intrinsic_trace_file", TM_FORMAT_CSV,
               expected);
}

static void test_metadata_stats_and_clock_snapshot(fixture *f,
                                                   gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT * FROM metadata", TM_FORMAT_CSV,
               "\"id\",\"name\",\"key_type\",\"int_value\",\"str_value\","
               "\"machine_id\",\"trace_id\"\n"
               "0,\"trace_time_clock_id\",\"single\",6,\"[NULL]\","
               "\"[NULL]\",\"[NULL]\"\n"
               "1,\"trace_type\",\"single\",\"[NULL]\",\"json\",\"[NULL]\",1\n"
               "2,\"all_data_source_flushed_ns\",\"multi\",1234,\"[NULL]\","
               "1,1\n");
  assert_query(f, "SELECT * FROM stats", TM_FORMAT_CSV,
               "\"id\",\"name\",\"key\",\"idx\",\"severity\",\"source\","
               "\"value\",\"description\",\"machine_id\",\"trace_id\"\n"
               "0,\"json_parser_failure\",\"[NULL]\",\"[NULL]\",\"error\","
               "\"trace\",2,\"bad event\",1,1\n");
  assert_query(f, "SELECT * FROM _trace_import_logs", TM_FORMAT_CSV,
               "\"id\",\"trace_id\",\"ts\",\"byte_offset\",\"severity\",\"name\","
               "\"arg_set_id\"\n"
               "0,1,\"[NULL]\",12,\"error\",\"json_parser_failure\",\"[NULL]\"\n");
  assert_query(f, "SELECT * FROM clock_snapshot", TM_FORMAT_CSV,
               "\"id\",\"ts\",\"clock_id\",\"clock_name\",\"clock_value\","
               "\"snapshot_id\",\"machine_id\"\n"
               "0,1000,6,\"BOOTTIME\",5000,0,1\n");
}

static void test_thread_and_process_expose_utid_and_upid(fixture *f,
                                                         gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT * FROM thread", TM_FORMAT_CSV,
               "\"utid\",\"id\",\"tid\",\"name\",\"start_ts\",\"end_ts\","
               "\"upid\",\"is_main_thread\",\"is_idle\",\"machine_id\","
               "\"arg_set_id\"\n"
               "0,0,0,\"[NULL]\",\"[NULL]\",\"[NULL]\",0,1,1,1,\"[NULL]\"\n"
               "1,1,101,\"main\",\"[NULL]\",\"[NULL]\",1,\"[NULL]\",0,1,"
               "\"[NULL]\"\n");
  assert_query(f, "SELECT upid, id, pid, name, parent_upid, machine_id "
               "FROM process WHERE upid = 1",
               TM_FORMAT_CSV,
               "\"upid\",\"id\",\"pid\",\"name\",\"parent_upid\","
               "\"machine_id\"\n1,1,100,\"app\",\"[NULL]\",1\n");
}

static void test_track_views_select_by_event_type_and_dimension(
    fixture *f, gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT * FROM track WHERE id <= 2", TM_FORMAT_CSV,
               "\"id\",\"name\",\"type\",\"dimension_arg_set_id\","
               "\"parent_id\",\"source_arg_set_id\",\"machine_id\","
               "\"track_group_id\"\n"
               "0,\"[NULL]\",\"thread_execution\",\"[NULL]\",\"[NULL]\","
               "\"[NULL]\",1,\"[NULL]\"\n"
               "1,\"async\",\"legacy_async_process_slice\",\"[NULL]\","
               "\"[NULL]\",\"[NULL]\",1,\"[NULL]\"\n"
               "2,\"mem\",\"json_counter\",\"[NULL]\",\"[NULL]\",2,1,"
               "\"[NULL]\"\n");
  assert_query(f, "SELECT id, utid FROM thread_track", TM_FORMAT_CSV,
               "\"id\",\"utid\"\n0,1\n3,0\n");
  assert_query(f, "SELECT id, upid FROM process_track", TM_FORMAT_CSV,
               "\"id\",\"upid\"\n1,1\n");
  assert_query(f, "SELECT * FROM counter_track", TM_FORMAT_CSV,
               "\"id\",\"name\",\"parent_id\",\"type\","
               "\"dimension_arg_set_id\",\"source_arg_set_id\","
               "\"machine_id\",\"unit\",\"description\"\n"
               "2,\"mem\",\"[NULL]\",\"json_counter\",\"[NULL]\",2,1,"
               "\"bytes\",\"Memory\"\n"
               "5,\"cpu\",\"[NULL]\",\"json_counter_thread_fallback\","
               "\"[NULL]\",\"[NULL]\",1,\"[NULL]\",\"[NULL]\"\n");
  assert_query(f, "SELECT id, unit, upid FROM process_counter_track",
               TM_FORMAT_CSV, "\"id\",\"unit\",\"upid\"\n2,\"bytes\",1\n");
  assert_query(f, "SELECT id, utid FROM thread_counter_track",
               TM_FORMAT_CSV, "\"id\",\"utid\"\n5,1\n");
  assert_query(f,
               "SELECT event_type, counter_unit, utid, upid, trace_id "
               "FROM __intrinsic_track WHERE id = 2",
               TM_FORMAT_CSV,
               "\"event_type\",\"counter_unit\",\"utid\",\"upid\","
               "\"trace_id\"\n\"counter\",\"bytes\",\"[NULL]\",1,1\n");
}

static void test_slice_aliases_and_views(fixture *f, gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT * FROM slice WHERE id = 0", TM_FORMAT_CSV,
               "\"id\",\"ts\",\"dur\",\"track_id\",\"category\",\"name\","
               "\"depth\",\"parent_id\",\"arg_set_id\",\"thread_ts\","
               "\"thread_dur\",\"thread_instruction_count\","
               "\"thread_instruction_delta\",\"cat\",\"slice_id\"\n"
               "0,1000,500,0,\"cat\",\"outer\",0,\"[NULL]\",1,10,5,"
               "\"[NULL]\",\"[NULL]\",\"cat\",0\n");
  char *a = query(f, "SELECT * FROM slice", TM_FORMAT_CSV);
  char *b = query(f, "SELECT * FROM slices", TM_FORMAT_CSV);
  g_assert_cmpstr(a, ==, b);
  free(a);
  free(b);
  assert_query(f, "SELECT * FROM instant WHERE ts < 2000", TM_FORMAT_CSV,
               "\"ts\",\"track_id\",\"name\",\"arg_set_id\"\n"
               "1100,0,\"tick\",\"[NULL]\"\n");
  /* instant is exactly the zero-duration slices. */
  char *instants = query(f, "SELECT ts, track_id, name FROM instant",
                         TM_FORMAT_CSV);
  char *zero = query(f, "SELECT ts, track_id, name FROM slice "
                        "WHERE dur + 0 = 0 ORDER BY id",
                     TM_FORMAT_CSV);
  g_assert_cmpstr(instants, ==, zero);
  free(instants);
  free(zero);
}

static void test_counter_and_counters(fixture *f, gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT * FROM counter", TM_FORMAT_CSV,
               "\"id\",\"ts\",\"track_id\",\"value\",\"arg_set_id\"\n"
               "0,1000,2,1.500000,\"[NULL]\"\n"
               "1,1500,2,-2.250000,\"[NULL]\"\n"
               "2,1200,5,3.000000,\"[NULL]\"\n");
  assert_query(f, "SELECT * FROM counters", TM_FORMAT_CSV,
               "\"id\",\"ts\",\"track_id\",\"value\",\"arg_set_id\","
               "\"name\",\"unit\"\n"
               "0,1000,2,1.500000,\"[NULL]\",\"mem\",\"bytes\"\n"
               "2,1200,5,3.000000,\"[NULL]\",\"cpu\",\"[NULL]\"\n"
               "1,1500,2,-2.250000,\"[NULL]\",\"mem\",\"bytes\"\n");
}

static void test_flow_and_trace_bounds(fixture *f, gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT * FROM flow", TM_FORMAT_CSV,
               "\"id\",\"slice_out\",\"slice_in\",\"trace_id\","
               "\"arg_set_id\"\n0,0,1,42,\"[NULL]\"\n"
               "1,1,2,\"[NULL]\",\"[NULL]\"\n");
  assert_query(f, "SELECT * FROM trace_bounds", TM_FORMAT_CSV,
               "\"start_ts\",\"end_ts\"\n1000,99999\n");
}

static void test_args_value_columns_and_display_value(fixture *f,
                                                      gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT * FROM args WHERE arg_set_id = 1", TM_FORMAT_CSV,
               "\"id\",\"arg_set_id\",\"flat_key\",\"key\",\"int_value\","
               "\"string_value\",\"real_value\",\"value_type\","
               "\"display_value\"\n"
               "0,1,\"args.count\",\"args.count\",-3,\"[NULL]\",\"[NULL]\","
               "\"int\",\"-3\"\n"
               "1,1,\"args.big\",\"args.big\",-1,\"[NULL]\",\"[NULL]\","
               "\"uint\",\"18446744073709551615\"\n"
               "2,1,\"args.name\",\"args.name\",\"[NULL]\",\"x\",\"[NULL]\","
               "\"string\",\"x\"\n"
               "3,1,\"args.ratio\",\"args.ratio\",\"[NULL]\",\"[NULL]\","
               "0.500000,\"real\",\"0.5\"\n"
               "4,1,\"args.ptr\",\"args.ptr\",255,\"[NULL]\",\"[NULL]\","
               "\"pointer\",\"0xff\"\n"
               "5,1,\"args.ok\",\"args.ok\",1,\"[NULL]\",\"[NULL]\","
               "\"bool\",\"true\"\n"
               "6,1,\"args.obj\",\"args.obj\",\"[NULL]\",\"{\"\"a\"\":1}\","
               "\"[NULL]\",\"json\",\"{\"\"a\"\":1}\"\n"
               "7,1,\"args.list.x\",\"args.list[2].x\",\"[NULL]\",\"[NULL]\","
               "2.000000,\"real\",\"2.0\"\n");
}

static void test_empty_model_has_every_table(void) {
  tm_model *m = model_new();
  GError *error = NULL;
  tm_sql_surface *surface = sql_surface_new(m, NULL, &error);
  g_assert_no_error(error);
  fixture f = {m, surface};
  static const char *const names[] = {
      "machine", "trace_file", "__intrinsic_trace_file", "metadata",
      "stats", "clock_snapshot", "track", "thread_track", "process_track",
      "counter_track", "process_counter_track", "thread_counter_track",
      "slice", "slices", "instant", "counter", "counters", "thread",
      "process", "flow", "args", "__intrinsic_trace_import_logs",
      "_trace_import_logs", "cpu_track", "perf_sample",
      "__intrinsic_track_event_callstacks", "cpu_profile_stack_sample",
      "instruments_sample", "stack_profile_callsite"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *sql = g_strdup_printf("SELECT count(*) AS n FROM %s", names[i]);
    assert_query(&f, sql, TM_FORMAT_CSV, "\"n\"\n0\n");
    g_free(sql);
  }
  assert_query(&f, "SELECT * FROM trace_bounds", TM_FORMAT_CSV,
               "\"start_ts\",\"end_ts\"\n0,0\n");
  sql_surface_free(surface);
  model_free(m);
}

/* Runs `check` on a surface over `m` (which it frees). */
static void with_surface(tm_model *m, void (*check)(fixture *f)) {
  GError *error = NULL;
  tm_sql_surface *surface = sql_surface_new(m, NULL, &error);
  g_assert_no_error(error);
  fixture f = {m, surface};
  check(&f);
  sql_surface_free(surface);
  model_free(m);
}

static void check_sched_priority(fixture *f) {
  assert_query(f, "SELECT ts, priority FROM sched", TM_FORMAT_CSV,
               "\"ts\",\"priority\"\n1,-5\n3,-2147483648\n4,2147483647\n");
}

/* sched.priority is an int32 in the model (the kernel's next_prio): the
 * column reads it back with its sign. */
static void test_sched_priority_is_an_int32(void) {
  tm_model *m = model_new();
  uint32_t utid = model_add_thread(m, 0, 10, TM_NULL_ID);
  tm_str_id s = string_pool_intern_cstr(m->strings, "S");
  tm_sched_row sched[] = {
      {.ts = 1, .dur = 2, .ucpu = 0, .utid = utid, .end_state = s, .priority = -5},
      {.ts = 3, .dur = -1, .ucpu = 0, .utid = utid, .priority = INT32_MIN},
      {.ts = 4, .dur = -1, .ucpu = 1, .utid = utid, .priority = INT32_MAX},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(sched); i++)
    tm_vec_push(&m->sched_slices, sched[i]);
  with_surface(m, check_sched_priority);
}

static void check_thread_state_blocked(fixture *f) {
  assert_query(f, "SELECT ts, io_wait, blocked_function FROM thread_state",
               TM_FORMAT_CSV,
               "\"ts\",\"io_wait\",\"blocked_function\"\n"
               "0,\"[NULL]\",\"[NULL]\"\n"
               "10,1,\"[NULL]\"\n"
               "20,\"[NULL]\",\"do_sys_poll\"\n"
               "30,0,\"do_sys_poll\"\n");
  assert_query(f, "SELECT count(*) AS n FROM thread_state WHERE io_wait = 0",
               TM_FORMAT_CSV, "\"n\"\n1\n");
}

/* thread_state's io_wait and blocked_function live beside the table (row
 * `blocked` - 1 of thread_state_blocked, 0 for none): the columns read
 * them, NULLs included. */
static void test_thread_state_blocked_columns(void) {
  tm_model *m = model_new();
  uint32_t utid = model_add_thread(m, 0, 10, TM_NULL_ID);
  tm_str_id s = string_pool_intern_cstr(m->strings, "S");
  tm_str_id poll = string_pool_intern_cstr(m->strings, "do_sys_poll");
  tm_thread_state_blocked blocked[] = {{.function = 0, .io_wait = 1},
                                       {.function = poll, .io_wait = -1},
                                       {.function = poll, .io_wait = 0}};
  for (size_t i = 0; i < G_N_ELEMENTS(blocked); i++)
    tm_vec_push(&m->thread_state_blocked, blocked[i]);
  for (uint32_t i = 0; i < 4; i++) {
    tm_thread_state_row row = {.ts = 10 * i, .dur = 5, .ucpu = TM_NULL_ID,
                               .utid = utid, .state = s, .waker_utid = TM_NULL_ID,
                               .waker_id = TM_NULL_ID, .blocked = i};
    tm_vec_push(&m->thread_states, row);
  }
  with_surface(m, check_thread_state_blocked);
}

/* ---- index lookups ---- */

/* `column = k` (index or id lookup) and `column + 0 = k` (scan) return the
 * same rows, for values present, absent and out of range. */
static void assert_lookup_key_matches_scan(fixture *f, const char *table,
                                           const char *column, int64_t k) {
  {
    char *fast_sql = g_strdup_printf(
        "SELECT * FROM %s WHERE %s = %" G_GINT64_FORMAT, table, column,
        (gint64)k);
    char *slow_sql = g_strdup_printf(
        "SELECT * FROM %s WHERE %s + 0 = %" G_GINT64_FORMAT " ORDER BY id",
        table, column, (gint64)k);
    char *fast = query(f, fast_sql, TM_FORMAT_CSV);
    char *slow = query(f, slow_sql, TM_FORMAT_CSV);
    g_assert_cmpstr(fast, ==, slow);
    free(fast);
    free(slow);

    /* The plans really differ: a lookup, then a scan (idxNum 0). */
    char *plan_sql = g_strdup_printf("EXPLAIN QUERY PLAN %s", fast_sql);
    char *plan = query(f, plan_sql, TM_FORMAT_TSV);
    g_assert_null(strstr(plan, "VIRTUAL TABLE INDEX 0:"));
    free(plan);
    g_free(plan_sql);
    plan_sql = g_strdup_printf("EXPLAIN QUERY PLAN %s", slow_sql);
    plan = query(f, plan_sql, TM_FORMAT_TSV);
    g_assert_nonnull(strstr(plan, "VIRTUAL TABLE INDEX 0:"));
    free(plan);
    g_free(plan_sql);
    g_free(fast_sql);
    g_free(slow_sql);
  }
}

static void assert_lookup_matches_scan(fixture *f, const char *table,
                                       const char *column, int64_t max_key) {
  for (int64_t k = -1; k <= max_key + 1; k++)
    assert_lookup_key_matches_scan(f, table, column, k);
}

static void assert_lookup_query_count(fixture *f, const char *table,
                                      const char *where, unsigned expected) {
  char *sql = g_strdup_printf("SELECT count(*) AS n FROM %s WHERE %s", table,
                              where);
  char *want = g_strdup_printf("n\n%u\n", expected);
  assert_query(f, sql, TM_FORMAT_TSV, want);
  g_free(want);
  g_free(sql);
}

static void test_index_lookups_match_scans(fixture *f, gconstpointer data) {
  (void)data;
  uint32_t n_slices = (uint32_t)f->model->slices.len;
  assert_lookup_matches_scan(f, "slice", "track_id", 6);
  assert_lookup_matches_scan(f, "slice", "parent_id", n_slices);
  assert_lookup_matches_scan(f, "slice", "arg_set_id", 3);
  assert_lookup_matches_scan(f, "slice", "id", n_slices);
  assert_lookup_matches_scan(f, "args", "arg_set_id", 3);
  assert_lookup_matches_scan(f, "counter", "track_id", 6);
  assert_lookup_matches_scan(f, "thread", "upid", 2);
  assert_lookup_matches_scan(f, "thread", "utid", 2);
  assert_lookup_matches_scan(f, "thread", "tid", 102);
  assert_lookup_matches_scan(f, "process", "pid", 101);
  /* pids too sparse for a counting sort take the comparison sort. */
  assert_lookup_key_matches_scan(f, "process", "pid", INT64_C(1) << 40);
  assert_lookup_query_count(f, "process", "pid = 100", 2);
  assert_lookup_query_count(f, "process", "pid = 1099511627776", 1);
  assert_lookup_matches_scan(f, "__intrinsic_track", "utid", 2);
  assert_lookup_matches_scan(f, "__intrinsic_track", "upid", 2);
  assert_lookup_matches_scan(f, "flow", "slice_out", 3);
  assert_lookup_matches_scan(f, "flow", "slice_in", 3);

  /* The bulk slices really are spread over several tracks. */
  for (uint32_t t = 0; t <= 4; t++) {
    char *sql = g_strdup_printf(
        "SELECT count(*) > 10 FROM slice WHERE track_id = %u", t);
    assert_query(f, sql, TM_FORMAT_TSV,
                 t == 2 ? "count(*) > 10\n0\n" : "count(*) > 10\n1\n");
    g_free(sql);
  }
}

static void test_lookup_values_follow_sql_comparison_rules(
    fixture *f, gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT id FROM slice WHERE id = '2'", TM_FORMAT_CSV,
               "\"id\"\n2\n");
  assert_query(f, "SELECT id FROM slice WHERE id = 2.0", TM_FORMAT_CSV,
               "\"id\"\n2\n");
  assert_query(f, "SELECT id FROM slice WHERE id = 2.5", TM_FORMAT_CSV,
               "\"id\"\n");
  assert_query(f, "SELECT id FROM slice WHERE id = NULL", TM_FORMAT_CSV,
               "\"id\"\n");
  assert_query(f, "SELECT id FROM slice WHERE id IN (2, 0, 1e30)",
               TM_FORMAT_CSV, "\"id\"\n0\n2\n");
  assert_query(f, "SELECT id FROM __intrinsic_slice WHERE rowid = 1", TM_FORMAT_CSV,
               "\"id\"\n1\n");
  assert_query(f, "SELECT id FROM slice WHERE parent_id = '0'",
               TM_FORMAT_CSV, "\"id\"\n1\n");
  /* IN runs one lookup per value; the rows still come out in id order. */
  char *in_fast = query(f, "SELECT id FROM slice WHERE track_id IN (3, 1) "
                           "ORDER BY id",
                        TM_FORMAT_CSV);
  char *in_slow = query(f, "SELECT id FROM slice WHERE track_id + 0 IN (3, 1) "
                           "ORDER BY id",
                        TM_FORMAT_CSV);
  g_assert_cmpstr(in_fast, ==, in_slow);
  free(in_fast);
  free(in_slow);
  /* Several constraints: one drives the lookup, SQLite checks the rest. */
  char *fast = query(f, "SELECT id FROM slice WHERE track_id = 3 AND "
                        "name = 'bulk0' AND parent_id IS NULL",
                     TM_FORMAT_CSV);
  char *slow = query(f, "SELECT id FROM slice WHERE track_id + 0 = 3 AND "
                        "name = 'bulk0' AND parent_id IS NULL ORDER BY id",
                     TM_FORMAT_CSV);
  g_assert_cmpstr(fast, ==, slow);
  g_assert_cmpuint(strlen(fast), >, strlen("\"id\"\n0\n"));
  free(fast);
  free(slow);
}

static void test_joins_use_lookups_and_agree_with_scans(fixture *f,
                                                        gconstpointer data) {
  (void)data;
  char *fast = query(f,
                     "SELECT s.id, t.utid, a.key FROM slice s "
                     "JOIN thread_track t ON s.track_id = t.id "
                     "JOIN args a ON a.arg_set_id = s.arg_set_id "
                     "ORDER BY s.id, a.id",
                     TM_FORMAT_CSV);
  char *slow = query(f,
                     "SELECT s.id, t.utid, a.key FROM slice s "
                     "JOIN thread_track t ON s.track_id + 0 = t.id + 0 "
                     "JOIN args a ON a.arg_set_id + 0 = s.arg_set_id + 0 "
                     "ORDER BY s.id, a.id",
                     TM_FORMAT_CSV);
  g_assert_cmpstr(fast, ==, slow);
  g_assert_cmpuint(strlen(fast), >, 1000);
  free(fast);
  free(slow);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  ADD("/sql-surface/machine/label-index-ranks-non-host-rows",
      test_machine_label_index_ranks_non_host_rows);
  ADD("/sql-surface/trace-file/has-both-names",
      test_trace_file_has_both_names);
  ADD("/sql-surface/tables/metadata-stats-and-clock-snapshot",
      test_metadata_stats_and_clock_snapshot);
  ADD("/sql-surface/tables/thread-and-process-expose-utid-and-upid",
      test_thread_and_process_expose_utid_and_upid);
  ADD("/sql-surface/tables/track-views-select-by-event-type-and-dimension",
      test_track_views_select_by_event_type_and_dimension);
  ADD("/sql-surface/tables/slice-aliases-and-views",
      test_slice_aliases_and_views);
  ADD("/sql-surface/tables/counter-and-counters", test_counter_and_counters);
  ADD("/sql-surface/tables/flow-and-trace-bounds",
      test_flow_and_trace_bounds);
  ADD("/sql-surface/tables/args-value-columns-and-display-value",
      test_args_value_columns_and_display_value);
  g_test_add_func("/sql-surface/tables/empty-model-has-every-table",
                  test_empty_model_has_every_table);
  g_test_add_func("/sql-surface/tables/sched-priority-is-an-int32",
                  test_sched_priority_is_an_int32);
  g_test_add_func("/sql-surface/tables/thread-state-blocked-columns",
                  test_thread_state_blocked_columns);
  ADD("/sql-surface/index/lookups-match-scans",
      test_index_lookups_match_scans);
  ADD("/sql-surface/index/lookup-values-follow-sql-comparison-rules",
      test_lookup_values_follow_sql_comparison_rules);
  ADD("/sql-surface/index/joins-use-lookups-and-agree-with-scans",
      test_joins_use_lookups_and_agree_with_scans);
  return g_test_run();
}
