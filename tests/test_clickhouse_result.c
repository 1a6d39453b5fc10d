/*
 * Reading ClickHouse answers (core/sink/clickhouse_result.h) without a
 * server: answers written here as a 18.16 server writes them
 * (TabSeparatedWithNamesAndTypes, captured from one), fed in pieces of
 * every size, printed by the local printers.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "sink/clickhouse_result.h"

typedef struct reading {
  bool ok;
  char *out;
  char *error;
} reading;

/* Feeds `answer` in pieces of `piece` bytes (0: at once). */
static reading read_answer(const char *answer, tm_format format,
                           size_t piece) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  ch_result_reader *reader = ch_result_reader_new(format, 0, out);
  GError *error = NULL;
  size_t total = strlen(answer);
  bool ok = true;
  for (size_t at = 0; ok && at < total; at += piece ? piece : total)
    ok = ch_result_reader_feed(reader, answer + at,
                               MIN(piece ? piece : total, total - at), &error);
  ok = ok && ch_result_reader_finish(reader, &error);
  ch_result_reader_free(reader);
  fclose(out);
  reading r = {ok, g_strdup(text), error ? g_strdup(error->message) : NULL};
  free(text);
  g_clear_error(&error);
  return r;
}

static void reading_clear(reading *r) {
  g_free(r->out);
  g_free(r->error);
}

/* Every piece size gives the same output. */
static void assert_reads(const char *answer, tm_format format,
                         const char *expected) {
  for (size_t piece = 0; piece <= strlen(answer); piece++) {
    reading r = read_answer(answer, format, piece);
    if (!r.ok || g_strcmp0(r.out, expected) != 0)
      g_error("piece %zu: %s\n--- expected\n%s--- actual\n%s", piece,
              r.error ? r.error : "ok", expected, r.out);
    reading_clear(&r);
  }
}

static void assert_fails(const char *answer, const char *message_part) {
  for (size_t piece = 0; piece <= strlen(answer); piece++) {
    reading r = read_answer(answer, TM_FORMAT_CSV, piece);
    g_assert_false(r.ok);
    if (!strstr(r.error, message_part))
      g_error("piece %zu: \"%s\" lacks \"%s\"", piece, r.error, message_part);
    reading_clear(&r);
  }
}

/* Types as SQLite would type the same values: integers bare, reals as
 * "%f" in CSV, NULL as [NULL], the rest text (a String holding the two
 * characters \N comes escaped as \\N). */
static void test_types_map_to_sqlite_types(void) {
  assert_reads(
      "i\tbig\tu\tf\td\tn\tnn\tlc\ts\ta\n"
      "Int64\tUInt64\tUInt64\tFloat32\tDecimal(9, 2)\tNullable(Nothing)\t"
      "Nullable(Int32)\tLowCardinality(Nullable(String))\tString\t"
      "Array(UInt8)\n"
      "-5\t18446744073709551615\t7\t0.1\t1.25\t\\N\t\\N\tx\t\\\\N\t[1,2]\n"
      "9223372036854775807\t9223372036854775807\t0\tinf\t-0.5\t\\N\t3\t\\N\t"
      "q\t[]\n",
      TM_FORMAT_CSV,
      "\"i\",\"big\",\"u\",\"f\",\"d\",\"n\",\"nn\",\"lc\",\"s\",\"a\"\n"
      "-5,18446744073709551616.000000,7,0.100000,1.250000,\"[NULL]\","
      "\"[NULL]\",\"x\",\"\\N\",\"[1,2]\"\n"
      "9223372036854775807,9223372036854775807,0,inf,-0.500000,\"[NULL]\",3,"
      "\"[NULL]\",\"q\",\"[]\"\n");
}

/* ClickHouse's escapes undone, then each printer's own applied. */
static void test_escapes_are_undone(void) {
  const char *answer = "t\\tab\tq\n" "String\tString\n"
                       "a\\tb\\nc\\\\d\\'e\\bf\tx\\x41\n";
  assert_reads(answer, TM_FORMAT_TSV,
               "t\\tab\tq\n" "a\\tb\\nc\\\\d'e\bf\txA\n");
  assert_reads(answer, TM_FORMAT_JSON,
               "[\n{\"t\\tab\":\"a\\tb\\nc\\\\d'e\\bf\",\"q\":\"xA\"}\n]\n");
}

static void test_empty_answers(void) {
  /* A statement without a result: nothing, "[]" in JSON. */
  assert_reads("", TM_FORMAT_CSV, "");
  assert_reads("", TM_FORMAT_JSON, "[]\n");
  /* A result without rows: the header. */
  assert_reads("a\n" "UInt8\n", TM_FORMAT_CSV, "\"a\"\n");
  assert_reads("a\n" "UInt8\n", TM_FORMAT_JSON, "[]\n");
}

/* After the first rows, an error is a last line "Code: ..." of a 200
 * answer: the rows before it are printed, the error reported. With one
 * String column it would read as a row but for being last. */
static void test_late_error_reports(void) {
  assert_fails("x\n" "String\n" "a\n" "b\n"
               "Code: 395, e.displayText() = DB::Exception: Value passed "
               "to 'throwIf' function is non zero, e.what() = DB::Exception\n",
               "failed after its first rows were sent: Code: 395, "
               "e.displayText() = DB::Exception: Value passed");
  reading r = read_answer("x\n" "String\n" "a\n" "Code: 1. DB::Exception: late\n",
                          TM_FORMAT_CSV, 0);
  g_assert_false(r.ok);
  g_assert_cmpstr(r.out, ==, "\"x\"\n\"a\"\n");
  reading_clear(&r);
  /* Several columns: the report has the wrong number of fields. */
  assert_fails("a\tb\n" "UInt8\tUInt8\n" "1\t2\n" "Code: 60, e.displayText() = x",
               "failed after its first rows were sent: Code: 60");
  /* A value that merely starts like one, not last, is a value. */
  assert_reads("x\n" "String\n" "Code: 5, e.displayText() = no\n" "b\n",
               TM_FORMAT_CSV,
               "\"x\"\n\"Code: 5, e.displayText() = no\"\n\"b\"\n");
  g_assert_false(ch_result_is_error_report("Code: x", 7));
  g_assert_false(ch_result_is_error_report("Code: 12", 8));
  g_assert_true(ch_result_is_error_report("Code: 12, y", 11));
}

/* An answer in another format (the SQL's own FORMAT clause) is refused. */
static void test_other_formats_are_refused(void) {
  assert_fails("{\"1\":1}\n", "not in TabSeparatedWithNamesAndTypes");
  assert_fails("1\n", "not in TabSeparatedWithNamesAndTypes");
  assert_fails("a\tb\n" "1\n", "not in TabSeparatedWithNamesAndTypes");
  assert_fails("a\n" "1\n", "not in TabSeparatedWithNamesAndTypes");
  assert_fails("a\tb\n" "UInt8\tUInt8\n" "1\n",
               "row 1 of the answer has 1 fields, expected 2");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/clickhouse-result/types-map-to-sqlite-types",
                  test_types_map_to_sqlite_types);
  g_test_add_func("/clickhouse-result/escapes-are-undone",
                  test_escapes_are_undone);
  g_test_add_func("/clickhouse-result/empty-answers", test_empty_answers);
  g_test_add_func("/clickhouse-result/late-error-reports-fail-after-the-rows",
                  test_late_error_reports);
  g_test_add_func("/clickhouse-result/other-formats-are-refused",
                  test_other_formats_are_refused);
  return g_test_run();
}
