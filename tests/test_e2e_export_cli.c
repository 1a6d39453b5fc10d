/*
 * `tracemerge export` as a command: standard output gets the bytes a file
 * would, the filters (machine, time range, slice SQL) keep what they say,
 * and bad options fail with a message that says why. Beside it:
 * test_e2e_export_perfetto.c and test_e2e_export_json.c (the round
 * trips).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "corpus.h"
#include "e2e_support.h"
#include "export_checks.h"


/* --- streaming to standard output ----------------------------------------------------- */

static void test_standard_output_gets_the_same_bytes_as_a_file(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  g_autofree char *cli = g_shell_quote(g_getenv("TRACEMERGE_CLI"));
  const char *formats[] = {"perfetto", "json"};
  for (int i = 0; i < 2; i++) {
    g_autofree char *file = export_to(dir, "example.zip", "out.bin", formats[i]);
    g_autofree char *command = g_strdup_printf(
        "%s export example.zip -o - --format %s > piped.bin", cli, formats[i]);
    const char *argv[] = {"/bin/sh", "-c", command, NULL};
    int status = 0;
    GError *error = NULL;
    g_spawn_sync(dir, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                 &error);
    g_assert_no_error(error);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_autofree char *piped_path = g_build_filename(dir, "piped.bin", NULL);
    g_autofree char *a = NULL, *b = NULL;
    gsize a_len = 0, b_len = 0;
    g_assert_true(g_file_get_contents(file, &a, &a_len, NULL));
    g_assert_true(g_file_get_contents(piped_path, &b, &b_len, NULL));
    g_assert_cmpuint(a_len, >, 0);
    g_assert_cmpmem(a, a_len, b, b_len);
  }
  e2e_cleanup(dir);
}

/* --- filters -------------------------------------------------------------------------- */

/* Exports the example with the filter options, imports the export and
 * returns the answer to `sql` on it, and `expected_sql` on the merge. */
static void filtered(const char *const *options, const char *sql, const char *expected_sql,
                     char **actual, char **expected) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  GPtrArray *args = g_ptr_array_new();
  g_ptr_array_add(args, "export");
  g_ptr_array_add(args, "example.zip");
  g_ptr_array_add(args, "-o");
  g_ptr_array_add(args, "cut.pftrace");
  for (size_t i = 0; options[i]; i++)
    g_ptr_array_add(args, (char *)options[i]);
  g_ptr_array_add(args, NULL);
  run_ok(dir, (const char *const *)args->pdata);
  g_ptr_array_free(args, TRUE);
  const char *cut[] = {"cut.pftrace", NULL};
  const char *merge[] = {"example.zip", NULL};
  *actual = e2e_query_in(dir, cut, sql);
  *expected = e2e_query_in(dir, merge, expected_sql);
  e2e_cleanup(dir);
}

static void test_filter_by_machine_keeps_that_machine(void) {
  const char *options[] = {"--machine", "backend", NULL};
  g_autofree char *actual = NULL, *expected = NULL;
  filtered(options,
           "SELECT m.name, s.name, s.ts, s.dur FROM slice s JOIN track t ON s.track_id = t.id "
           "JOIN machine m ON t.machine_id = m.id ORDER BY s.ts",
           "SELECT m.name, s.name, s.ts, s.dur FROM slice s JOIN track t ON s.track_id = t.id "
           "JOIN machine m ON t.machine_id = m.id WHERE m.name = 'backend' ORDER BY s.ts",
           &actual, &expected);
  g_assert_cmpstr(actual, ==, expected);
  g_assert_nonnull(strstr(actual, "handle /index"));
  g_assert_null(strstr(actual, "render"));
}

static void test_filter_by_time_keeps_what_overlaps(void) {
  /* 1.3 ms .. 1.5 ms: fetch /index (1.0-1.5), handle /index (1.150125-
   * 1.450125), response sent (1.46); the counter value at 1.5 ms. */
  const char *options[] = {"--time", "1.3ms,1500us", NULL};
  g_autofree char *actual = NULL, *expected = NULL;
  filtered(options,
           "SELECT name, ts, dur FROM slice UNION ALL SELECT 'counter', ts, value FROM counter "
           "ORDER BY 2, 1",
           "SELECT name, ts, dur FROM slice WHERE ts <= 1500000 AND ts + dur >= 1300000 "
           "UNION ALL SELECT 'counter', ts, value FROM counter WHERE ts BETWEEN 1300000 AND "
           "1500000 ORDER BY 2, 1",
           &actual, &expected);
  g_assert_cmpstr(actual, ==, expected);
  g_assert_nonnull(strstr(actual, "response sent"));
  g_assert_null(strstr(actual, "render"));
}

static void test_filter_by_sql_keeps_slices_with_their_ancestors(void) {
  const char *options[] = {"--sql", "SELECT id FROM slice WHERE name = 'query users'", NULL};
  g_autofree char *actual = NULL, *expected = NULL;
  filtered(options, "SELECT name, depth, ts FROM slice ORDER BY ts",
           "SELECT name, depth, ts FROM slice WHERE name = 'query users' OR id IN (SELECT id "
           "FROM ancestor_slice((SELECT id FROM slice WHERE name = 'query users'))) ORDER BY ts",
           &actual, &expected);
  g_assert_cmpstr(actual, ==, expected);
  g_assert_nonnull(strstr(actual, "\"handle /index\",0"));
}

/* --- errors ------------------------------------------------------------------------------ */

static void expect_failure(const char *const *args, int status, const char *message) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, status);
  if (!strstr(r.err, message))
    g_error("stderr '%s' lacks '%s'", r.err, message);
  /* A failed export leaves no file behind. */
  g_autofree char *out = g_build_filename(dir, "out.pftrace", NULL);
  g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name(d)))
    g_assert_false(g_str_has_prefix(name, ".out.pftrace"));
  g_dir_close(d);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_unknown_machine_names_the_machines(void) {
  const char *args[] = {"export", "example.zip", "-o", "out.pftrace", "--machine", "tablet", NULL};
  expect_failure(args, 1,
                 "tracemerge: --machine 'tablet': no machine has that name (the machines are "
                 "'phone', 'backend')");
}

static void test_bad_time_range_is_a_usage_error(void) {
  const char *args[] = {"export", "example.zip", "-o", "out.pftrace", "--time", "1ms", NULL};
  expect_failure(args, 2, "--time wants START,END");
  const char *unit[] = {"export", "example.zip", "-o", "out.pftrace", "--time", "1h,2h", NULL};
  expect_failure(unit, 2, "--time: '1h' is not a time");
  const char *order[] = {"export", "example.zip", "-o", "out.pftrace", "--time", "2s,1s", NULL};
  expect_failure(order, 2, "--time: START is after END");
}

static void test_bad_slice_sql_says_why(void) {
  const char *syntax[] = {"export", "example.zip", "-o", "out.pftrace", "--sql", "SELEKT 1", NULL};
  expect_failure(syntax, 1, "tracemerge: --sql: near \"SELEKT\": syntax error");
  const char *columns[] = {"export", "example.zip", "-o", "out.pftrace", "--sql",
                           "SELECT id, name FROM slice", NULL};
  expect_failure(columns, 1, "--sql: the query must return one column of slice ids (it returns 2)");
  const char *ids[] = {"export", "example.zip", "-o", "out.pftrace", "--sql", "SELECT 99", NULL};
  expect_failure(ids, 1, "--sql: 99 is not the id of a slice");
}

static void test_missing_output_and_bad_format_are_usage_errors(void) {
  const char *no_output[] = {"export", "example.zip", NULL};
  expect_failure(no_output, 2, "missing -o OUT");
  const char *format[] = {"export", "example.zip", "-o", "out.pftrace", "--format", "xml", NULL};
  expect_failure(format, 2, "--format must be perfetto or json");
  const char *no_input[] = {"export", "-o", "out.pftrace", NULL};
  expect_failure(no_input, 2, "no input files");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/export/standard-output-gets-the-same-bytes-as-a-file",
                  test_standard_output_gets_the_same_bytes_as_a_file);
  g_test_add_func("/export/filter/machine-keeps-that-machine",
                  test_filter_by_machine_keeps_that_machine);
  g_test_add_func("/export/filter/time-keeps-what-overlaps",
                  test_filter_by_time_keeps_what_overlaps);
  g_test_add_func("/export/filter/sql-keeps-slices-with-their-ancestors",
                  test_filter_by_sql_keeps_slices_with_their_ancestors);
  g_test_add_func("/export/errors/unknown-machine-names-the-machines",
                  test_unknown_machine_names_the_machines);
  g_test_add_func("/export/errors/bad-time-range-is-a-usage-error",
                  test_bad_time_range_is_a_usage_error);
  g_test_add_func("/export/errors/bad-slice-sql-says-why", test_bad_slice_sql_says_why);
  g_test_add_func("/export/errors/missing-output-and-bad-format-are-usage-errors",
                  test_missing_output_and_bad_format_are_usage_errors);
  return g_test_run();
}
