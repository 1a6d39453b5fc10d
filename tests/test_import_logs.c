/* Unit tests of import logs (docs/sql-surface.md §5): stats_log() counts every
 * occurrence in its stat and writes a row for the first
 * TM_IMPORT_LOG_ROWS_PER_STAT of each (stat, file, machine), with its
 * args; the storage table and the _trace_import_logs view read them, and
 * the args join on arg_set_id. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "sql/sql_surface.h"
#include "model/stats.h"

typedef struct fixture {
  tm_model *model;
  tm_stats *stats;
} fixture;

static void fixture_set_up(fixture *f, gconstpointer data) {
  (void)data;
  f->model = model_new();
  f->stats = stats_new(f->model);
}

static void fixture_tear_down(fixture *f, gconstpointer data) {
  (void)data;
  stats_free(f->stats);
  model_free(f->model);
}

static char *query(fixture *f, const char *sql) {
  GError *error = NULL;
  tm_sql_surface *surface = sql_surface_new(f->model, NULL, &error);
  g_assert_no_error(error);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  g_assert_true(sql_surface_query(surface, sql, TM_FORMAT_CSV, out, &error));
  g_assert_no_error(error);
  fclose(out);
  sql_surface_free(surface);
  return text;
}

static void assert_query(fixture *f, const char *sql, const char *expected) {
  char *text = query(f, sql);
  g_assert_cmpstr(text, ==, expected);
  free(text);
}

/* Each row's storage columns, and its args in key order. */
static void test_rows_and_args(fixture *f, gconstpointer data) {
  (void)data;
  static const char line[] = "bad line\nnot this";
  /* The global stats stats_new() pre-creates take stats rows 0..3. */
  tm_import_log_arg args[] = {
      {.key = "source_clock_id", .type = TM_ARG_INT, .int_value = 6},
      {.key = "line", .type = TM_ARG_STRING, .string = line, .string_len = 8},
      {.key = "ratio", .type = TM_ARG_REAL, .real_value = 0.5},
      {.key = "flag", .type = TM_ARG_BOOL, .int_value = 1},
  };
  g_assert_true(stats_log(f->stats, "systrace_parse_failure", 1, 2, TM_NULL_INT64, 42,
                          args, G_N_ELEMENTS(args)));
  /* Trace time given, offset unknown (any negative), no args. */
  g_assert_true(stats_log(f->stats, "clock_sync_failure_no_path", 0, 3, 1000, -1, NULL, 0));
  g_assert_cmpint(stats_get(f->stats, "systrace_parse_failure", TM_NULL_INT64, 1, 2), ==, 1);
  g_assert_cmpint(stats_get(f->stats, "clock_sync_failure_no_path", TM_NULL_INT64, 0, 3), ==, 1);
  assert_query(f, "SELECT * FROM __intrinsic_trace_import_logs ORDER BY id",
               "\"id\",\"trace_id\",\"ts\",\"byte_offset\",\"stat_key\",\"stat_id\","
               "\"arg_set_id\"\n"
               "0,2,\"[NULL]\",42,\"[NULL]\",4,1\n"
               "1,3,1000,\"[NULL]\",\"[NULL]\",5,\"[NULL]\"\n");
  assert_query(f, "SELECT * FROM _trace_import_logs ORDER BY id",
               "\"id\",\"trace_id\",\"ts\",\"byte_offset\",\"severity\",\"name\","
               "\"arg_set_id\"\n"
               "0,2,\"[NULL]\",42,\"error\",\"systrace_parse_failure\",1\n"
               "1,3,1000,\"[NULL]\",\"error\",\"clock_sync_failure_no_path\",\"[NULL]\"\n");
  assert_query(f,
               "SELECT l.name, a.key, a.value_type, a.display_value FROM _trace_import_logs l "
               "JOIN args a USING (arg_set_id) ORDER BY l.id, a.key",
               "\"name\",\"key\",\"value_type\",\"display_value\"\n"
               "\"systrace_parse_failure\",\"flag\",\"bool\",\"true\"\n"
               "\"systrace_parse_failure\",\"line\",\"string\",\"bad line\"\n"
               "\"systrace_parse_failure\",\"ratio\",\"real\",\"0.5\"\n"
               "\"systrace_parse_failure\",\"source_clock_id\",\"int\",\"6\"\n");
}

/* The stat counts every occurrence; rows stop at the bound, per stats row:
 * another file, another machine or another stat logs afresh. */
static void test_rows_are_bounded_per_stat_file_and_machine(fixture *f, gconstpointer data) {
  (void)data;
  const size_t n = TM_IMPORT_LOG_ROWS_PER_STAT + 5;
  for (size_t i = 0; i < n; i++) {
    tm_import_log_arg arg = {.key = "i", .type = TM_ARG_INT, .int_value = (int64_t)i};
    g_assert_true(stats_log(f->stats, "systrace_parse_failure", 0, 1, TM_NULL_INT64,
                            (int64_t)i, &arg, 1) == (i < TM_IMPORT_LOG_ROWS_PER_STAT));
  }
  g_assert_true(stats_log(f->stats, "systrace_parse_failure", 0, 2, TM_NULL_INT64, -1, NULL, 0));
  g_assert_true(stats_log(f->stats, "systrace_parse_failure", 1, 1, TM_NULL_INT64, -1, NULL, 0));
  g_assert_true(stats_log(f->stats, "clock_sync_failure_no_path", 0, 1, TM_NULL_INT64, -1,
                          NULL, 0));
  g_assert_cmpint(stats_get(f->stats, "systrace_parse_failure", TM_NULL_INT64, 0, 1), ==,
                  (int64_t)n);
  g_assert_cmpint(stats_get(f->stats, "systrace_parse_failure", TM_NULL_INT64, 0, 2), ==, 1);
  g_assert_cmpint(stats_get(f->stats, "systrace_parse_failure", TM_NULL_INT64, 1, 1), ==, 1);
  g_autofree char *expected = g_strdup_printf(
      "\"trace_id\",\"machine_id\",\"name\",\"rows\",\"first\",\"last\",\"value\"\n"
      "1,0,\"clock_sync_failure_no_path\",1,\"[NULL]\",\"[NULL]\",1\n"
      "1,0,\"systrace_parse_failure\",%d,0,%d,%zu\n"
      "1,1,\"systrace_parse_failure\",1,\"[NULL]\",\"[NULL]\",1\n"
      "2,0,\"systrace_parse_failure\",1,\"[NULL]\",\"[NULL]\",1\n",
      TM_IMPORT_LOG_ROWS_PER_STAT, TM_IMPORT_LOG_ROWS_PER_STAT - 1, n);
  /* The row's offsets are the first occurrences' (0..N-1), in order. */
  assert_query(f,
               "SELECT l.trace_id, s.machine_id, s.name, count(*) AS rows, "
               "min(l.byte_offset) AS first, max(l.byte_offset) AS last, s.value "
               "FROM __intrinsic_trace_import_logs l JOIN stats s ON s.id = l.stat_id "
               "GROUP BY l.stat_id ORDER BY l.trace_id, s.machine_id, s.name",
               expected);
  g_autofree char *matching = g_strdup_printf("\"n\"\n%d\n", TM_IMPORT_LOG_ROWS_PER_STAT);
  assert_query(f,
               "SELECT count(*) AS n FROM _trace_import_logs l JOIN args a USING "
               "(arg_set_id) WHERE a.key = 'i' AND a.int_value = l.byte_offset",
               matching);
}

/* A name outside the catalog logs like stat_add creates it: severity
 * "error". An empty model has the table and the view, empty. */
static void test_unknown_stat_and_empty_tables(fixture *f, gconstpointer data) {
  (void)data;
  assert_query(f, "SELECT count(*) AS n FROM _trace_import_logs", "\"n\"\n0\n");
  assert_query(f, "SELECT count(*) AS n FROM __intrinsic_trace_import_logs", "\"n\"\n0\n");
  g_assert_true(stats_log(f->stats, "reader_private_problem", 0, 0, TM_NULL_INT64, 7, NULL, 0));
  assert_query(f, "SELECT severity, name, byte_offset FROM _trace_import_logs",
               "\"severity\",\"name\",\"byte_offset\"\n"
               "\"error\",\"reader_private_problem\",7\n");
}

#define ADD(path, fn) g_test_add(path, fixture, NULL, fixture_set_up, fn, fixture_tear_down)

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  ADD("/import-logs/rows/storage-view-and-args", test_rows_and_args);
  ADD("/import-logs/bound/first-rows-per-stat-file-and-machine-while-the-stat-counts-all",
      test_rows_are_bounded_per_stat_file_and_machine);
  ADD("/import-logs/rows/unknown-stat-and-empty-tables", test_unknown_stat_and_empty_tables);
  return g_test_run();
}
