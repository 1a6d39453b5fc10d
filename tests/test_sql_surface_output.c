/* Unit tests of the SQL surface's printers and statements: exact
 * CSV/TSV/JSON/table output over the hand-built model of
 * tests/support/sql_surface_fixture.h, NULL rendering, write failures,
 * multi-statement queries and SQL errors. Beside it:
 * test_sql_surface_tables.c (tables, views, index lookups) and
 * test_sql_surface_save.c (saving to a file). */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_surface_fixture.h"


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
  ADD("/sql-surface/query/multi-statement-prints-the-last",
      test_multi_statement_prints_the_last);
  ADD("/sql-surface/query/rows-from-an-earlier-statement-fail-a-script",
      test_rows_from_an_earlier_statement_fail_a_script);
  ADD("/sql-surface/table/format-is-trace-processor-shells",
      test_table_format_is_trace_processor_shells);
  ADD("/sql-surface/query/sql-errors-carry-the-sqlite-message",
      test_sql_errors_carry_the_sqlite_message);
  return g_test_run();
}
