/*
 * core/base/json_string.h: the JSON string literal of any bytes.
 *
 * The expected literals are RFC 8259's: '"' and '\' escaped, the short
 * escapes for backspace, form feed, newline, return and tab, \u00XX for
 * the other bytes below 0x20; plus what json_string.h adds: U+2028 and
 * U+2029 escaped (JavaScript before ES2019 ends a string there), and a
 * byte that does not start valid UTF-8 (RFC 3629) written as the code
 * point of its value. Besides the cases, random bytes are checked with
 * yajl (which rejects invalid UTF-8 and bad escapes): every literal
 * parses, and decodes to the input when the input was valid UTF-8.
 */
#include <glib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "base/json_string.h"

static char *literal(const char *s, size_t len) {
  GString *out = g_string_new(NULL);
  tm_json_append_string(out, s, len);
  return g_string_free(out, FALSE);
}

static void assert_literal(const char *s, size_t len, const char *expected) {
  g_autofree char *got = literal(s, len);
  g_assert_cmpstr(got, ==, expected);
}

#define ASSERT_LITERAL(bytes, expected) assert_literal(bytes, sizeof bytes - 1, expected)

static void test_plain_text_is_written_as_it_is(void) {
  ASSERT_LITERAL("", "\"\"");
  ASSERT_LITERAL("fetch /index", "\"fetch /index\"");
  /* DEL (0x7f) is not a control character to JSON. */
  ASSERT_LITERAL("a\x7f" "b", "\"a\x7f" "b\"");
}

static void test_quotes_and_backslashes_are_escaped(void) {
  ASSERT_LITERAL("say \"hi\"", "\"say \\\"hi\\\"\"");
  ASSERT_LITERAL("C:\\dir\\", "\"C:\\\\dir\\\\\"");
  ASSERT_LITERAL("/", "\"/\""); /* a slash may stay as it is */
}

static void test_control_characters_are_escaped(void) {
  ASSERT_LITERAL("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
  ASSERT_LITERAL("a\x01" "b\x1f" "c\x1b", "\"a\\u0001b\\u001fc\\u001b\"");
  /* An embedded NUL, within the length given. */
  assert_literal("a\0b", 3, "\"a\\u0000b\"");
  g_autoptr(GString) c = g_string_new(NULL);
  tm_json_append_cstring(c, NULL);
  g_assert_cmpstr(c->str, ==, "\"\"");
}

static void test_line_and_paragraph_separators_are_escaped(void) {
  /* U+2028 is E2 80 A8, U+2029 E2 80 A9; U+2027 (E2 80 A7) is not. */
  ASSERT_LITERAL("a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xe2\x80\xa7",
                 "\"a\\u2028b\\u2029c\xe2\x80\xa7\"");
}

static void test_valid_utf8_is_kept(void) {
  /* é (2 bytes), € (3), 😀 (4), U+10FFFF (F4 8F BF BF), U+D7FF (ED 9F BF). */
  ASSERT_LITERAL("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \xed\x9f\xbf",
                 "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \xed\x9f\xbf\"");
}

static void test_invalid_utf8_becomes_the_code_points_of_its_bytes(void) {
  /* A byte that cannot start a sequence. */
  ASSERT_LITERAL("a\xff" "b\x80", "\"a\\u00ffb\\u0080\"");
  /* A sequence cut by the end of the string: each byte alone. */
  ASSERT_LITERAL("\xe2\x82", "\"\\u00e2\\u0082\"");
  /* Overlong forms of '/' and of U+0000..U+07FF, U+0000..U+FFFF. */
  ASSERT_LITERAL("\xc0\xaf", "\"\\u00c0\\u00af\"");
  ASSERT_LITERAL("\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\"");
  ASSERT_LITERAL("\xf0\x80\x80\xaf", "\"\\u00f0\\u0080\\u0080\\u00af\"");
  /* A surrogate (U+D800) and a code point above U+10FFFF. */
  ASSERT_LITERAL("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");
  ASSERT_LITERAL("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"");
  /* A bad continuation byte ends the sequence; what follows is read
   * afresh ('a', then the valid é). */
  ASSERT_LITERAL("\xe2\x82" "a\xc3\xa9", "\"\\u00e2\\u0082a\xc3\xa9\"");
}

static void test_the_scanner_says_where_the_first_escape_is(void) {
  char escape[TM_JSON_ESCAPE_MAX];
  size_t consumed = 0;
  g_assert_cmpuint(tm_json_plain_prefix("abc", 3, escape, &consumed), ==, 3);
  g_assert_cmpuint(tm_json_plain_prefix("ab\"c", 4, escape, &consumed), ==, 2);
  g_assert_cmpstr(escape, ==, "\\\"");
  g_assert_cmpuint(consumed, ==, 1);
  g_assert_cmpuint(tm_json_plain_prefix("\xc3\xa9\xe2\x80\xa8", 5, escape, &consumed), ==, 2);
  g_assert_cmpstr(escape, ==, "\\u2028");
  g_assert_cmpuint(consumed, ==, 3);
}

/* --- random bytes, checked by yajl ----------------------------------------- */

typedef struct decoded {
  GString *text;
  int strings;
} decoded;

static int on_string(void *ctx, const unsigned char *s, size_t len) {
  decoded *d = ctx;
  g_string_append_len(d->text, (const char *)s, (gssize)len);
  d->strings++;
  return 1;
}

/* The literal parsed by yajl, or NULL if it is not JSON. */
static GString *parse(const char *json) {
  static const yajl_callbacks callbacks = {.yajl_string = on_string};
  decoded d = {g_string_new(NULL), 0};
  yajl_handle h = yajl_alloc(&callbacks, NULL, &d);
  yajl_status status = yajl_parse(h, (const unsigned char *)json, strlen(json));
  if (status == yajl_status_ok)
    status = yajl_complete_parse(h);
  yajl_free(h);
  if (status != yajl_status_ok || d.strings != 1) {
    g_string_free(d.text, TRUE);
    return NULL;
  }
  return d.text;
}

static void test_random_bytes_give_json_that_decodes_back(void) {
  /* Bytes drawn mostly from the interesting ranges: ASCII with controls
   * and quotes, continuation bytes, and lead bytes of every length. */
  static const guint8 pool[] = {'a', 'z', ' ', '"', '\\', '\n', 0x01, 0x1f, 0x7f, 0x80,
                                0x9f, 0xa8, 0xbf, 0xc0, 0xc3, 0xdf, 0xe0, 0xe2, 0xed,
                                0xef, 0xf0, 0xf4, 0xf5, 0xff};
  guint valid_seen = 0;
  for (int round = 0; round < 5000; round++) {
    char bytes[12];
    size_t len = (size_t)g_test_rand_int_range(0, sizeof bytes);
    for (size_t i = 0; i < len; i++)
      bytes[i] = (char)pool[g_test_rand_int_range(0, sizeof pool)];
    g_autofree char *json = literal(bytes, len);
    g_assert_true(g_utf8_validate(json, -1, NULL));
    GString *back = parse(json);
    if (!back)
      g_error("not JSON: %s", json);
    if (g_utf8_validate(bytes, (gssize)len, NULL)) {
      g_assert_cmpmem(back->str, back->len, bytes, len);
      valid_seen++;
    }
    g_string_free(back, TRUE);
  }
  /* The draw makes valid strings too, so the decoding check ran. */
  g_assert_cmpuint(valid_seen, >, 100);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/json-string/plain-text-is-written-as-it-is",
                  test_plain_text_is_written_as_it_is);
  g_test_add_func("/json-string/quotes-and-backslashes-are-escaped",
                  test_quotes_and_backslashes_are_escaped);
  g_test_add_func("/json-string/control-characters-are-escaped",
                  test_control_characters_are_escaped);
  g_test_add_func("/json-string/line-and-paragraph-separators-are-escaped",
                  test_line_and_paragraph_separators_are_escaped);
  g_test_add_func("/json-string/valid-utf8-is-kept", test_valid_utf8_is_kept);
  g_test_add_func("/json-string/invalid-utf8-becomes-the-code-points-of-its-bytes",
                  test_invalid_utf8_becomes_the_code_points_of_its_bytes);
  g_test_add_func("/json-string/the-scanner-says-where-the-first-escape-is",
                  test_the_scanner_says_where_the_first_escape_is);
  g_test_add_func("/json-string/random-bytes-give-json-that-decodes-back",
                  test_random_bytes_give_json_that_decodes_back);
  return g_test_run();
}
