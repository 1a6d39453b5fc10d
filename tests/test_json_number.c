/*
 * The JSON reader's number conversions (plugins/json/json_number.c):
 * microsecond texts to exact nanoseconds, integral literals, hex ids.
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include "json_number.h"

/* --- number conversions -------------------------------------------------------- */

static void assert_us_to_ns(const char *text, int64_t expected) {
  int64_t ns = 0;
  g_assert_true(json_us_text_to_ns(text, strlen(text), &ns));
  g_assert_cmpint(ns, ==, expected);
}

static void assert_us_rejected(const char *text) {
  int64_t ns = 0;
  g_assert_false(json_us_text_to_ns(text, strlen(text), &ns));
}

static void test_microseconds_convert_to_nanoseconds_exactly(void) {
  assert_us_to_ns("0", 0);
  assert_us_to_ns("-0", 0);
  assert_us_to_ns("1", 1000);
  assert_us_to_ns("123456.789", 123456789);
  assert_us_to_ns("1.0005", 1001);   /* 1000.5 ns, half away from zero */
  assert_us_to_ns("1.00049", 1000);
  assert_us_to_ns("-1.0005", -1001);
  assert_us_to_ns("-0.0004", 0);
  assert_us_to_ns("0.001", 1);
  assert_us_to_ns("433087829325", 433087829325000);
  assert_us_to_ns("0.1", 100); /* no 99.999... as through a double */
  assert_us_to_ns("2.675", 2675);
  assert_us_to_ns("1e3", 1000000);
  assert_us_to_ns("1.5E+3", 1500000);
  assert_us_to_ns("25e-4", 3); /* 2.5 ns */
  assert_us_to_ns("0e999999999999", 0);
  /* fuzz_json: a zero with a fraction and an exponent past the saturation
   * limit once looped a billion times (a timeout under the fuzzer; its
   * input is tests/fuzz/crashes/json/timeout-zero-with-huge-exponent). */
  assert_us_to_ns("0.00000e11134567890", 0);
  assert_us_to_ns("-0.0e1000000000", 0);
  assert_us_to_ns("1e-999999999999", 0);
  assert_us_to_ns("00012.5", 12500);
  assert_us_to_ns(".5", 500);
  assert_us_to_ns("5.", 5000);
  assert_us_to_ns("9223372036854775.807", INT64_MAX);
  assert_us_to_ns("-9223372036854775.808", INT64_MIN);
  assert_us_to_ns("0.00000000000000000000000000000000000000000000000000001",
                  0);
  /* Integer parts read eight digits at a time, and the rest one by one. */
  assert_us_to_ns("12345678", 12345678000);
  assert_us_to_ns("1234567.8", 1234567800);
  assert_us_to_ns("98765432.1", 98765432100);
  assert_us_to_ns("123456789", 123456789000);
  assert_us_to_ns("90807060504030.201", 90807060504030201);
  assert_us_to_ns("372811992840.3745", 372811992840375);
  assert_us_to_ns("-1234567890123.5", -1234567890123500);
  assert_us_to_ns("100000000", 100000000000);
  /* One to three fraction digits take a shortcut; four or more round. */
  assert_us_to_ns("7.5", 7500);
  assert_us_to_ns("7.05", 7050);
  assert_us_to_ns("7.005", 7005);
  assert_us_to_ns("-7.005", -7005);
  assert_us_to_ns("7.0055", 7006);
  assert_us_to_ns("7.0054", 7005);
}

static void test_bad_or_huge_times_are_rejected(void) {
  assert_us_rejected("");
  assert_us_rejected("-");
  assert_us_rejected(".");
  assert_us_rejected("1e");
  assert_us_rejected("1e+");
  assert_us_rejected("+1");
  assert_us_rejected(" 1");
  assert_us_rejected("1 ");
  assert_us_rejected("0x10");
  assert_us_rejected("inf");
  assert_us_rejected("nan");
  assert_us_rejected("1.2.3");
  assert_us_rejected("9223372036854775.8075"); /* rounds past INT64_MAX */
  assert_us_rejected("9223372036854776");
  assert_us_rejected("-9223372036854775.809");
  assert_us_rejected("1e999999999999");
  assert_us_rejected("1234567:");
  assert_us_rejected("12345678/");
  assert_us_rejected("1234567\xb8");
  assert_us_rejected("1234567890123456789012345");
  assert_us_rejected("7.a");
  assert_us_rejected("7.0a");
  assert_us_rejected("7.00a");
  assert_us_rejected("7.-1");
  assert_us_rejected("7.1.");
}

static void test_numbers_are_ints_when_integral_literals(void) {
  json_number n;
  g_assert_true(json_number_parse("-42", 3, &n));
  g_assert_cmpint(n.kind, ==, JSON_NUMBER_INT);
  g_assert_cmpint(n.int_value, ==, -42);
  g_assert_true(json_number_parse("9223372036854775807", 19, &n));
  g_assert_cmpint(n.kind, ==, JSON_NUMBER_INT);
  g_assert_cmpint(n.int_value, ==, INT64_MAX);
  g_assert_true(json_number_parse("9223372036854775808", 19, &n));
  g_assert_cmpint(n.kind, ==, JSON_NUMBER_REAL);
  g_assert_cmpfloat(n.real_value, ==, 9223372036854775808.0);
  g_assert_true(json_number_parse("3.0", 3, &n));
  g_assert_cmpint(n.kind, ==, JSON_NUMBER_REAL);
  g_assert_cmpfloat(n.real_value, ==, 3.0);
  g_assert_true(json_number_parse("2.5e-1", 6, &n));
  g_assert_cmpfloat(n.real_value, ==, 0.25);
  g_autofree char *long_text = g_strnfill(300, '1');
  g_assert_true(json_number_parse(long_text, 300, &n));
  g_assert_cmpint(n.kind, ==, JSON_NUMBER_REAL);
  g_assert_cmpfloat(n.real_value, >, 1e299);
  g_assert_false(json_number_parse("abc", 3, &n));
  g_assert_false(json_number_parse("", 0, &n));
}

static void test_hex_ids_parse_like_trace_processor(void) {
  uint64_t id = 0;
  g_assert_true(json_hex_id_parse("0x10", 4, &id));
  g_assert_cmpuint(id, ==, 16);
  g_assert_true(json_hex_id_parse("10", 2, &id));
  g_assert_cmpuint(id, ==, 16);
  g_assert_true(json_hex_id_parse("0XfFfFfFfFfFfFfFfF", 18, &id));
  g_assert_cmpuint(id, ==, UINT64_MAX);
  g_assert_false(json_hex_id_parse("0x", 2, &id));
  g_assert_false(json_hex_id_parse("", 0, &id));
  g_assert_false(json_hex_id_parse("zz", 2, &id));
  g_assert_false(json_hex_id_parse("0x1ffffffffffffffff", 19, &id));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/json-reader/numbers/microseconds-convert-to-ns-exactly",
                  test_microseconds_convert_to_nanoseconds_exactly);
  g_test_add_func("/json-reader/numbers/bad-or-huge-times-are-rejected",
                  test_bad_or_huge_times_are_rejected);
  g_test_add_func("/json-reader/numbers/ints-when-integral-literals",
                  test_numbers_are_ints_when_integral_literals);
  g_test_add_func("/json-reader/numbers/hex-ids-parse-like-trace-processor",
                  test_hex_ids_parse_like_trace_processor);
  return g_test_run();
}
