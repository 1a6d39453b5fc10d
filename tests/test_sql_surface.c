/* Unit tests of the SQL surface and its printers: exact CSV/TSV/JSON
 * output over a hand-built model, NULL rendering, computed columns
 * (label_index, display_value, key_type), index lookups agreeing with
 * scans, multi-statement queries, SQL errors, and saving to a file that
 * plain SQLite reads back. */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "sql/sql_output.h"
#include "sql/sql_surface.h"

#define N_BULK_SLICES 300

typedef struct fixture {
  tm_model *model;
  tm_sql_surface *surface;
} fixture;

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
  tm_slice_row s = {
      .ts = ts,
      .dur = dur,
      .track_id = track,
      .category = category ? S(m, category) : 0,
      .name = S(m, name),
      .depth = depth,
      .parent_id = parent,
      .arg_set_id = arg_set,
  };
  tm_vec_push(&m->slices, s);
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

static void fixture_set_up(fixture *f, gconstpointer data) {
  (void)data;
  GError *error = NULL;
  f->model = build_model();
  f->surface = sql_surface_new(f->model, NULL, &error);
  g_assert_no_error(error);
  g_assert_nonnull(f->surface);
}

static void fixture_tear_down(fixture *f, gconstpointer data) {
  (void)data;
  sql_surface_free(f->surface);
  model_free(f->model);
}

/* Runs `sql` and returns what it printed; the query must succeed. */
static char *query(fixture *f, const char *sql, tm_format format) {
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

static void assert_query(fixture *f, const char *sql, tm_format format,
                         const char *expected) {
  char *text = query(f, sql, format);
  g_assert_cmpstr(text, ==, expected);
  free(text);
}

/* Runs `sql`, which must fail; returns the error. */
static GError *query_error(fixture *f, const char *sql, char **printed) {
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

/* ---- printers ---- */

static void test_csv_quotes_strings_and_header_and_prints_null(
    fixture *f, gconstpointer data) {
  (void)data;
  assert_query(f,
               "SELECT id, ts, dur, track_id, category, name, parent_id, "
               "thread_ts FROM slice WHERE id < 2",
               TM_FORMAT_CSV,
               "\"id\",\"ts\",\"dur\",\"track_id\",\"category\",\"name\","
               "\"parent_id\",\"thread_ts\"\n"
               "0,1000,500,0,\"cat\",\"outer\",\"[NULL]\",10\n"
               "1,1100,0,0,\"[NULL]\",\"tick\",0,\"[NULL]\"\n");
}

static void test_csv_prints_reals_with_six_decimals(fixture *f,
                                                    gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT value FROM counter", TM_FORMAT_CSV,
               "\"value\"\n1.500000\n-2.250000\n3.000000\n");
  assert_query(f, "SELECT 0.1 AS a, 1e20 AS b, -0.0000004 AS c",
               TM_FORMAT_CSV,
               "\"a\",\"b\",\"c\"\n0.100000,100000000000000000000.000000,"
               "-0.000000\n");
}

static void test_csv_doubles_quotes_inside_strings_per_rfc_4180(
    fixture *f, gconstpointer data) {
  (void)data;
  /* Only '"' changes (RFC 4180 2.7); newlines, tabs and other bytes stay
   * inside the quoted field (2.6). trace_processor_shell prints the '"'
   * bare, which lets a name end its field. */
  assert_query(f, "SELECT name FROM slice WHERE id = 2", TM_FORMAT_CSV,
               "\"name\"\n\"q\"\"b\\c\nd\te\001f\xff\"\n");
  assert_query(f, "SELECT 1 AS \"a\"\"b,c\"", TM_FORMAT_CSV,
               "\"a\"\"b,c\"\n1\n");
}

static void test_csv_prints_header_for_an_empty_result(fixture *f,
                                                       gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT id, name FROM slice WHERE id > 100000",
               TM_FORMAT_CSV, "\"id\",\"name\"\n");
}

static void test_tsv_escapes_and_prints_null_as_empty(fixture *f,
                                                      gconstpointer data) {
  (void)data;
  assert_query(f,
               "SELECT id, category, name, parent_id FROM slice "
               "WHERE id <= 2",
               TM_FORMAT_TSV,
               "id\tcategory\tname\tparent_id\n"
               "0\tcat\touter\t\n"
               "1\t\ttick\t0\n"
               "2\ta,b\tq\"b\\\\c\\nd\\te\001f\xff\t\n");
  assert_query(f, "SELECT value FROM counter", TM_FORMAT_TSV,
               "value\n1.5\n-2.25\n3.0\n");
  assert_query(f, "SELECT 0.1 AS a, 1e300 AS b", TM_FORMAT_TSV,
               "a\tb\n0.1\t1e+300\n");
}

static void test_json_is_an_array_of_objects(fixture *f, gconstpointer data) {
  (void)data;
  assert_query(f,
               "SELECT id, category, name, parent_id FROM slice "
               "WHERE id <= 2",
               TM_FORMAT_JSON,
               "[\n"
               "{\"id\":0,\"category\":\"cat\",\"name\":\"outer\","
               "\"parent_id\":null},\n"
               "{\"id\":1,\"category\":null,\"name\":\"tick\","
               "\"parent_id\":0},\n"
               "{\"id\":2,\"category\":\"a,b\","
               "\"name\":\"q\\\"b\\\\c\\nd\\te\\u0001f\xef\xbf\xbd\","
               "\"parent_id\":null}\n"
               "]\n");
  assert_query(f, "SELECT ts, value FROM counter WHERE id = 1",
               TM_FORMAT_JSON, "[\n{\"ts\":1500,\"value\":-2.25}\n]\n");
  assert_query(f, "SELECT 9e999 AS inf, 3.0 AS three", TM_FORMAT_JSON,
               "[\n{\"inf\":null,\"three\":3.0}\n]\n");
}

static void test_json_prints_empty_array_for_no_rows(fixture *f,
                                                     gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT * FROM slice WHERE id < 0", TM_FORMAT_JSON,
               "[]\n");
}

static void test_real_formatting_round_trips(void) {
  const double values[] = {0.1, 1.0 / 3.0, 1e-300, 123456789.125, -2.5e17,
                           5e-324};
  for (size_t i = 0; i < G_N_ELEMENTS(values); i++) {
    char buf[64];
    sql_output_format_real(values[i], buf, sizeof buf);
    g_assert_cmpfloat(g_ascii_strtod(buf, NULL), ==, values[i]);
  }
  char buf[64];
  sql_output_format_real(0.1, buf, sizeof buf);
  g_assert_cmpstr(buf, ==, "0.1");
}

static void test_write_failure_is_an_output_error(fixture *f,
                                                  gconstpointer data) {
  (void)data;
  FILE *full = fopen("/dev/full", "w");
  g_assert_nonnull(full);
  GError *error = NULL;
  g_assert_false(sql_surface_query(f->surface, "SELECT * FROM slice",
                                   TM_FORMAT_CSV, full, &error));
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_OUTPUT);
  g_error_free(error);
  fclose(full);
}

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

/* ---- statements and errors ---- */

/* A script prints what trace_processor_shell -q prints: in CSV one empty
 * line per statement before the last, then the last one's rows (a header
 * even with no row; nothing for a statement without columns). */
static void test_multi_statement_prints_the_last(fixture *f,
                                                 gconstpointer data) {
  (void)data;
  assert_query(f,
               "CREATE TEMP VIEW big AS SELECT id FROM slice WHERE dur > 100;"
               "\n-- a comment\n"
               "SELECT * FROM big; /* trailing */ ;\n",
               TM_FORMAT_CSV, "\n\"id\"\n0\n");
  assert_query(f, "CREATE TEMP TABLE t(x)", TM_FORMAT_CSV, "");
  assert_query(f, "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",
               TM_FORMAT_CSV, "\n");
  assert_query(f, "DELETE FROM t WHERE x > 5; SELECT x FROM t WHERE x > 5",
               TM_FORMAT_CSV, "\n\"x\"\n");
  /* Our own formats stay parseable: no empty lines. */
  assert_query(f, "DROP VIEW big; SELECT 3 AS c", TM_FORMAT_JSON,
               "[\n{\"c\":3}\n]\n");
  assert_query(f, "INSERT INTO t VALUES (3); SELECT x FROM t", TM_FORMAT_TSV,
               "x\n1\n2\n3\n");
  assert_query(f, "  -- nothing\n", TM_FORMAT_CSV, "");
  /* An earlier statement whose only column is suppress_query_output may
   * return rows. */
  assert_query(f, "SELECT 1 AS suppress_query_output; SELECT 2 AS b",
               TM_FORMAT_CSV, "\n\"b\"\n2\n");
}

/* An earlier statement that returns rows fails the script, as in
 * trace_processor_shell, once every statement before the last has run;
 * a line typed at the prompt (interactive) just prints the last. */
static void test_rows_from_an_earlier_statement_fail_a_script(
    fixture *f, gconstpointer data) {
  (void)data;
  char *printed = NULL;
  GError *error = query_error(
      f,
      "CREATE TEMP TABLE seen(x); SELECT 1 AS a; INSERT INTO seen VALUES (1);"
      "SELECT 2 AS b",
      &printed);
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY);
  g_assert_cmpstr(error->message, ==,
                  "statement 2 returned rows, but only the last statement of "
                  "a script may (name an earlier SELECT's only column "
                  "suppress_query_output to run it for its effects)");
  g_assert_cmpstr(printed, ==, "");
  free(printed);
  g_clear_error(&error);
  assert_query(f, "SELECT count(*) AS n FROM seen", TM_FORMAT_CSV,
               "\"n\"\n1\n");

  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  tm_query_options interactive = {.format = TM_FORMAT_CSV,
                                  .interactive = true};
  uint64_t rows = 99;
  g_assert_true(sql_surface_run(f->surface, "SELECT 1 AS a; SELECT 2 AS b",
                                &interactive, out, &rows, &error));
  g_assert_no_error(error);
  fclose(out);
  g_assert_cmpstr(text, ==, "\"b\"\n2\n");
  g_assert_cmpuint(rows, ==, 1);
  free(text);
}

/* The prompt's table: 20 characters a column (or the width asked), text
 * and NULL left, numbers right, text cut, control characters as '?',
 * the header again every 32 rows and not at all for no row. */
static void test_table_format_is_trace_processor_shells(fixture *f,
                                                        gconstpointer data) {
  (void)data;
  tm_query_options table = {.format = TM_FORMAT_TABLE, .interactive = true};
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  GError *error = NULL;
  g_assert_true(sql_surface_run(
      f->surface,
      "SELECT 42 AS n, 2.5 AS r, NULL AS z, 'a\tb' AS s, "
      "'abcdefghijklmnopqrstuvwxyz' AS long_text, x'00' AS b, "
      "'ééé' AS u",
      &table, out, NULL, &error));
  g_assert_no_error(error);
  fclose(out);
  g_assert_cmpstr(text, ==,
                  "n                    r                    z              "
                  "      s                    long_text            b      "
                  "              u                    \n"
                  "-------------------- -------------------- -------------"
                  "------- -------------------- -------------------- -----"
                  "--------------- -------------------- \n"
                  "                  42             2.500000 [NULL]         "
                  "      a?b                  abcdefghijklmnopqrst <raw by"
                  "tes>          ééé                  \n");
  free(text);

  table.column_width = 3;
  out = open_memstream(&text, &len);
  g_assert_true(sql_surface_run(
      f->surface,
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
      "WHERE x < 33) SELECT x FROM c",
      &table, out, NULL, &error));
  fclose(out);
  /* 33 rows: header, 32 rows, header, 1 row. */
  GString *expected = g_string_new("x   \n--- \n");
  for (int i = 1; i <= 33; i++) {
    if (i == 33)
      g_string_append(expected, "x   \n--- \n");
    g_string_append_printf(expected, "%3d \n", i);
  }
  g_assert_cmpstr(text, ==, expected->str);
  g_string_free(expected, TRUE);
  free(text);

  out = open_memstream(&text, &len);
  g_assert_true(sql_surface_run(f->surface, "SELECT 1 AS x WHERE 0", &table,
                                out, NULL, &error));
  fclose(out);
  g_assert_cmpstr(text, ==, "");
  free(text);
}

static void test_sql_errors_carry_the_sqlite_message(fixture *f,
                                                     gconstpointer data) {
  (void)data;
  GError *error = query_error(f, "SELECT * FROM nope", NULL);
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY);
  /* PerfettoSQL errors name the source, line and column. */
  g_assert_cmpstr(error->message, ==, "query:1:1: no such table: nope");
  g_error_free(error);

  error = query_error(f, "SELEC 1", NULL);
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY);
  g_assert_nonnull(strstr(error->message, "syntax error"));
  g_error_free(error);

  /* An error in an earlier statement stops before the last one runs. */
  char *printed = NULL;
  error = query_error(f, "SELECT nope FROM slice; SELECT 1", &printed);
  g_assert_cmpstr(error->message, ==, "query:1:8: no such column: nope");
  g_assert_cmpstr(printed, ==, "");
  free(printed);
  g_error_free(error);

  /* A runtime error while stepping. */
  error = query_error(f, "SELECT abs(-9223372036854775807 - 1)", NULL);
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY);
  g_assert_cmpstr(error->message, ==, "integer overflow");
  g_error_free(error);

  /* The tables are read-only. */
  error = query_error(f, "DELETE FROM __intrinsic_slice", NULL);
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY);
  g_error_free(error);
}

/* ---- saving ---- */

static char *dump(sqlite3 *db, const char *sql) {
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==,
                  SQLITE_OK);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  GError *error = NULL;
  g_assert_true(sql_output_write_rows(stmt, TM_FORMAT_CSV, out, &error));
  g_assert_no_error(error);
  fclose(out);
  sqlite3_finalize(stmt);
  return text;
}

/* The names of `type` ('table', 'view', 'index') in a saved file. */
static char *saved_names_of_type(sqlite3 *db, const char *type) {
  char *sql = g_strdup_printf("SELECT group_concat(name, ' ') FROM "
                              "(SELECT name FROM sqlite_master "
                              "WHERE type = '%s' AND name NOT LIKE "
                              "'sqlite_%%' ORDER BY name)",
                              type);
  char *text = dump(db, sql);
  g_free(sql);
  return text;
}

/* Files left in `dir` (a save must leave no temporary behind). */
static guint count_files(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  guint n = 0;
  while (g_dir_read_name(d))
    n++;
  g_dir_close(d);
  return n;
}

static void test_save_writes_a_standalone_database(fixture *f,
                                                   gconstpointer data) {
  (void)data;
  char *dir = g_dir_make_tmp("tm-sql-XXXXXX", NULL);
  char *path = g_build_filename(dir, "out.sqlite", NULL);
  /* An existing file is replaced (when asked), not appended to. */
  g_assert_true(g_file_set_contents(path, "not a database", -1, NULL));
  GError *error = NULL;
  g_assert_true(sql_surface_save(f->surface, path, true, &error));
  g_assert_no_error(error);
  /* Saving twice replaces the first copy. */
  g_assert_true(sql_surface_save(f->surface, path, true, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(count_files(dir), ==, 1);

  sqlite3 *saved = NULL;
  g_assert_cmpint(sqlite3_open_v2(path, &saved, SQLITE_OPEN_READONLY, NULL),
                  ==, SQLITE_OK);
  /* Every public name of the live surface reads the same in the file
   * (the list is the live schema itself, so a new table is covered). */
  sqlite3 *live = sql_surface_borrow_db(f->surface);
  sqlite3_stmt *names = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(live,
                                     "SELECT name, type FROM sqlite_master "
                                     "ORDER BY name",
                                     -1, &names, NULL), ==, SQLITE_OK);
  size_t n_names = 0;
  while (sqlite3_step(names) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(names, 0);
    const char *live_type = (const char *)sqlite3_column_text(names, 1);
    n_names++;
    char *sql = g_strdup_printf("SELECT * FROM \"%s\"", name);
    char *expected = dump(live, sql);
    char *actual = dump(saved, sql);
    g_assert_cmpstr(actual, ==, expected);
    free(expected);
    free(actual);
    g_free(sql);
    /* Views stay views (no copy of aliased data); the model's virtual
     * tables become real tables. */
    sql = g_strdup_printf("SELECT type FROM sqlite_master WHERE name = '%s'",
                          name);
    char *kind = dump(saved, sql);
    g_assert_cmpstr(kind, ==,
                    strcmp(live_type, "view") == 0 ? "\"type\"\n\"view\"\n"
                                                   : "\"type\"\n\"table\"\n");
    free(kind);
    g_free(sql);
  }
  sqlite3_finalize(names);
  g_assert_cmpuint(n_names, >, 30);

  /* Ids are the rowid: lookups by utid, upid, id need no index. */
  char *pk = dump(saved, "SELECT name, pk FROM pragma_table_info("
                         "'__intrinsic_slice') WHERE pk > 0");
  g_assert_cmpstr(pk, ==, "\"name\",\"pk\"\n\"id\",1\n");
  free(pk);
  char *indexes = saved_names_of_type(saved, "index");
  g_assert_cmpstr(indexes, ==,
                  "\"group_concat(name, ' ')\"\n"
                  "\"__intrinsic_args_arg_set_id __intrinsic_counter_track_id_ts "
                  "__intrinsic_flow_slice_in __intrinsic_flow_slice_out "
                  "__intrinsic_sched_slice_utid __intrinsic_slice_parent_id "
                  "__intrinsic_slice_track_id_ts __intrinsic_slice_ts "
                  "__intrinsic_thread_state_utid __intrinsic_thread_upid "
                  "__intrinsic_track_upid __intrinsic_track_utid "
                  "stack_profile_callsite_parent_id\"\n");
  free(indexes);
  /* The common joins use them, through the public views. */
  static const char *const plans[][2] = {
      {"SELECT * FROM slice WHERE ts > 5", "__intrinsic_slice_ts"},
      {"SELECT * FROM slice WHERE track_id = 2 ORDER BY ts",
       "__intrinsic_slice_track_id_ts"},
      {"SELECT * FROM slices WHERE parent_id = 0",
       "__intrinsic_slice_parent_id"},
      {"SELECT * FROM args WHERE arg_set_id = 1",
       "__intrinsic_args_arg_set_id"},
      {"SELECT * FROM thread WHERE utid = 1", "INTEGER PRIMARY KEY"},
      {"SELECT * FROM process WHERE upid = 1", "INTEGER PRIMARY KEY"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(plans); i++) {
    char *sql = g_strdup_printf("EXPLAIN QUERY PLAN %s", plans[i][0]);
    char *plan = dump(saved, sql);
    if (!strstr(plan, plans[i][1]))
      g_error("%s: plan does not use %s:\n%s", plans[i][0], plans[i][1],
              plan);
    free(plan);
    g_free(sql);
  }
  /* The planner has statistics for them (ANALYZE's sqlite_stat1). */
  char *stats = dump(saved, "SELECT count(*) FROM sqlite_stat1 WHERE idx = "
                            "'__intrinsic_slice_track_id_ts'");
  g_assert_cmpstr(stats, ==, "\"count(*)\"\n1\n");
  free(stats);
  sqlite3_close(saved);

  /* The live database is usable and unchanged after the save. */
  assert_query(f, "SELECT name FROM pragma_database_list ORDER BY seq",
               TM_FORMAT_TSV, "name\nmain\n");
  g_assert_cmpint(g_unlink(path), ==, 0);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(path);
  g_free(dir);
}

static void test_save_keeps_an_existing_file_unless_told(fixture *f,
                                                         gconstpointer data) {
  (void)data;
  char *dir = g_dir_make_tmp("tm-sql-XXXXXX", NULL);
  char *path = g_build_filename(dir, "out.sqlite", NULL);
  g_assert_true(g_file_set_contents(path, "precious", -1, NULL));
  GError *error = NULL;
  g_assert_false(sql_surface_save(f->surface, path, false, &error));
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE);
  char *expected = g_strdup_printf("%s exists (replace it with --force)", path);
  g_assert_cmpstr(error->message, ==, expected);
  g_free(expected);
  g_clear_error(&error);
  char *content = NULL;
  g_assert_true(g_file_get_contents(path, &content, NULL, NULL));
  g_assert_cmpstr(content, ==, "precious");
  g_free(content);
  g_assert_cmpuint(count_files(dir), ==, 1);
  /* A new name is written without replace. */
  g_assert_cmpint(g_unlink(path), ==, 0);
  g_assert_true(sql_surface_save(f->surface, path, false, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(count_files(dir), ==, 1);
  g_assert_cmpint(g_unlink(path), ==, 0);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(path);
  g_free(dir);
}

static void test_save_refuses_names_that_are_not_files(fixture *f,
                                                       gconstpointer data) {
  (void)data;
  static const char *const refused[][2] = {
      {"", "an empty name is an in-memory database"},
      {":memory:", "\":memory:\" is an in-memory database"},
      {"file:out.sqlite?mode=memory", "is an SQLite URI"},
      {"FILE:out.sqlite", "is an SQLite URI"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
    GError *error = NULL;
    g_assert_false(sql_surface_save(f->surface, refused[i][0], true, &error));
    g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE);
    if (!strstr(error->message, refused[i][1]))
      g_error("'%s': %s", refused[i][0], error->message);
    g_error_free(error);
  }
}

static void test_save_to_an_impossible_path_fails(fixture *f,
                                                  gconstpointer data) {
  (void)data;
  GError *error = NULL;
  g_assert_false(sql_surface_save(f->surface,
                                  "/nonexistent-dir/x/out.sqlite", true,
                                  &error));
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE);
  g_assert_nonnull(strstr(error->message, "/nonexistent-dir/x/out.sqlite"));
  g_clear_error(&error);

  /* A directory in the way cannot be replaced: the complete temporary
   * file is removed and the directory stays. */
  char *dir = g_dir_make_tmp("tm-sql-XXXXXX", NULL);
  char *sub = g_build_filename(dir, "busy", NULL);
  g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
  char *inner = g_build_filename(sub, "f", NULL);
  g_assert_true(g_file_set_contents(inner, "x", -1, NULL));
  g_assert_false(sql_surface_save(f->surface, sub, true, &error));
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE);
  g_assert_nonnull(strstr(error->message, "cannot replace"));
  g_clear_error(&error);
  g_assert_cmpuint(count_files(dir), ==, 1);
  g_assert_true(g_file_test(inner, G_FILE_TEST_IS_REGULAR));
  g_unlink(inner);
  g_rmdir(sub);
  g_rmdir(dir);
  g_free(inner);
  g_free(sub);
  g_free(dir);

  /* The surface still answers queries after a failed save. */
  assert_query(f, "SELECT count(*) AS n FROM machine", TM_FORMAT_CSV,
               "\"n\"\n3\n");
}

#define ADD(path, fn)                                                       \
  g_test_add(path, fixture, NULL, fixture_set_up, fn, fixture_tear_down)

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  ADD("/sql-surface/csv/quotes-strings-and-header-and-prints-null",
      test_csv_quotes_strings_and_header_and_prints_null);
  ADD("/sql-surface/csv/prints-reals-with-six-decimals",
      test_csv_prints_reals_with_six_decimals);
  ADD("/sql-surface/csv/doubles-quotes-inside-strings-per-rfc-4180",
      test_csv_doubles_quotes_inside_strings_per_rfc_4180);
  ADD("/sql-surface/csv/prints-header-for-an-empty-result",
      test_csv_prints_header_for_an_empty_result);
  ADD("/sql-surface/tsv/escapes-and-prints-null-as-empty",
      test_tsv_escapes_and_prints_null_as_empty);
  ADD("/sql-surface/json/is-an-array-of-objects",
      test_json_is_an_array_of_objects);
  ADD("/sql-surface/json/prints-empty-array-for-no-rows",
      test_json_prints_empty_array_for_no_rows);
  g_test_add_func("/sql-surface/output/real-formatting-round-trips",
                  test_real_formatting_round_trips);
  ADD("/sql-surface/output/write-failure-is-an-output-error",
      test_write_failure_is_an_output_error);
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
  ADD("/sql-surface/index/lookups-match-scans",
      test_index_lookups_match_scans);
  ADD("/sql-surface/index/lookup-values-follow-sql-comparison-rules",
      test_lookup_values_follow_sql_comparison_rules);
  ADD("/sql-surface/index/joins-use-lookups-and-agree-with-scans",
      test_joins_use_lookups_and_agree_with_scans);
  ADD("/sql-surface/query/multi-statement-prints-the-last",
      test_multi_statement_prints_the_last);
  ADD("/sql-surface/query/rows-from-an-earlier-statement-fail-a-script",
      test_rows_from_an_earlier_statement_fail_a_script);
  ADD("/sql-surface/table/format-is-trace-processor-shells",
      test_table_format_is_trace_processor_shells);
  ADD("/sql-surface/query/sql-errors-carry-the-sqlite-message",
      test_sql_errors_carry_the_sqlite_message);
  ADD("/sql-surface/save/writes-a-standalone-database",
      test_save_writes_a_standalone_database);
  ADD("/sql-surface/save/to-an-impossible-path-fails",
      test_save_to_an_impossible_path_fails);
  ADD("/sql-surface/save/keeps-an-existing-file-unless-told",
      test_save_keeps_an_existing_file_unless_told);
  ADD("/sql-surface/save/refuses-names-that-are-not-files",
      test_save_refuses_names_that_are_not_files);
  return g_test_run();
}
