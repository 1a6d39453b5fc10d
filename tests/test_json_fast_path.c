/*
 * The JSON reader's fast path (plugins/json/json_fast.c) is unobservable:
 * the tokenizer calls yajl's callbacks exactly as yajl does, and the
 * reader logs the same host calls, errors and offsets whether an element
 * went through it or through yajl, on hand-picked and random traces; and
 * the import logs of dropped events (element offset, first 1 KiB quoted)
 * are the same whichever of the two read the element. The reference is a
 * test build of the same reader ($TM_JSON_TEST_PLUGIN, TM_JSON_TEST_KNOBS)
 * with the fast path off (config "yajl-only"). Built twice: with the SSE2
 * scan and with the portable one.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include <yajl/yajl_parse.h>

#include "json_fast.h"
#include "json_number.h"
#include "json_segmenter.h"

#include "json_run.h"

/* --- fast path ------------------------------------------------------------------
 *
 * The fast path (json_fast.c) must be unobservable: the tokenizer must
 * call yajl's callbacks exactly as yajl does, and the reader must log the
 * same host calls, errors and offsets whether an element went through it
 * or through yajl. The reference is a test build of the same reader with
 * the fast path off (config "yajl-only").
 */

/* One line per callback; strings with their length, bytes as they are.
 * A line is marked "m " when the callback is one for a member of the
 * element: yajl's by depth (directly inside the array's object), the
 * tokenizer's by the table it came from (json_fast_element's `members`),
 * so that the logs agree only if the tokenizer picks its tables right. */
typedef struct recording {
  GString *log;
  int depth; /* containers open */
  bool by_depth;
} recording;

static GString *rec_line(void *ctx, bool member_table, int depth_change) {
  recording *r = ctx;
  if (depth_change < 0)
    r->depth--;
  bool member = r->by_depth ? depth_change >= 0 && r->depth == 2
                            : member_table;
  if (depth_change > 0)
    r->depth++;
  if (member)
    g_string_append(r->log, "m ");
  return r->log;
}

#define RECORDERS(prefix, member_table)                                        \
  static int prefix##null(void *ctx) {                                        \
    g_string_append(rec_line(ctx, member_table, 0), "null\n");                \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##boolean(void *ctx, int b) {                              \
    g_string_append_printf(rec_line(ctx, member_table, 0), "bool %d\n", b);   \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##number(void *ctx, const char *s, size_t len) {           \
    g_string_append_printf(rec_line(ctx, member_table, 0), "number %.*s\n",   \
                           (int)len, s);                                       \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##string(void *ctx, const unsigned char *s, size_t len) {  \
    GString *log = rec_line(ctx, member_table, 0);                             \
    g_string_append_printf(log, "string %zu:", len);                           \
    g_string_append_len(log, (const char *)s, (gssize)len);                    \
    g_string_append_c(log, '\n');                                             \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##key(void *ctx, const unsigned char *s, size_t len) {     \
    GString *log = rec_line(ctx, member_table, 0);                             \
    g_string_append_printf(log, "key %zu:", len);                              \
    g_string_append_len(log, (const char *)s, (gssize)len);                    \
    g_string_append_c(log, '\n');                                             \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##start_map(void *ctx) {                                   \
    g_string_append(rec_line(ctx, member_table, 1), "{\n");                   \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##end_map(void *ctx) {                                     \
    g_string_append(rec_line(ctx, member_table, -1), "}\n");                  \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##start_array(void *ctx) {                                 \
    g_string_append(rec_line(ctx, member_table, 1), "[\n");                   \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##end_array(void *ctx) {                                   \
    g_string_append(rec_line(ctx, member_table, -1), "]\n");                  \
    return 1;                                                                  \
  }                                                                            \
  static const yajl_callbacks prefix##table = {                                \
      prefix##null,      prefix##boolean,   NULL,                              \
      NULL,              prefix##number,    prefix##string,                    \
      prefix##start_map, prefix##key,       prefix##end_map,                   \
      prefix##start_array, prefix##end_array};

RECORDERS(rec_, false)
RECORDERS(member_rec_, true)
#define recorder rec_table
#define member_recorder member_rec_table

/* yajl's callbacks over `text` (configured as the reader configures it);
 * NULL if yajl rejects it. */
static char *yajl_log(const char *text, size_t len) {
  GString *log = g_string_new(NULL);
  recording rec = {log, 0, true};
  yajl_handle yajl = yajl_alloc(&recorder, NULL, &rec);
  yajl_config(yajl, yajl_dont_validate_strings, 1);
  bool ok = yajl_parse(yajl, (const unsigned char *)text, len) ==
                yajl_status_ok &&
            yajl_complete_parse(yajl) == yajl_status_ok;
  yajl_free(yajl);
  return g_string_free(log, !ok);
}

/* Runs the tokenizer on `data`; when it takes an element, yajl must
 * accept "[" + the bytes it took + "0]" and call the same callbacks for
 * them. Returns the status; `*consumed` as the tokenizer set it. */
static json_fast_status check_fast_element(const char *data, size_t len,
                                           size_t *consumed) {
  GString *fast = g_string_new("[\n");
  recording rec = {fast, 1, false};
  json_text decoded = {0};
  *consumed = 0;
  json_fast_status status =
      json_fast_element(&recorder, &member_recorder, &rec, &decoded,
                        (const uint8_t *)data, len, consumed);
  if (status == JSON_FAST_DONE) {
    g_assert_cmpuint(*consumed, <=, len);
    g_assert_cmpint(data[*consumed - 1], ==, ',');
    GString *array = g_string_new("[");
    g_string_append_len(array, data, (gssize)*consumed);
    g_string_append(array, "0]");
    g_autofree char *expected = yajl_log(array->str, array->len);
    g_string_append(fast, "number 0\n]\n");
    if (!expected)
      g_error("yajl rejects what the fast path took: %s", array->str);
    g_assert_cmpstr(fast->str, ==, expected);
    g_string_free(array, TRUE);
  }
  tm_vec_free(&decoded);
  g_string_free(fast, TRUE);
  return status;
}

/* An element the fast path must take whole with its comma (it must see
 * the next element start), and no prefix of it. */
static void assert_fast_takes(const char *element) {
  g_autofree char *data = g_strconcat(element, ", {", NULL);
  size_t len = strlen(data), consumed;
  if (check_fast_element(data, len, &consumed) != JSON_FAST_DONE)
    g_error("the fast path declines %s", element);
  g_assert_cmpuint(consumed, ==, strlen(element) + 1);
  for (size_t k = 0; k < len; k++)
    g_assert_cmpint(check_fast_element(data, k, &consumed), ==,
                    JSON_FAST_DECLINED);
}

/* An element the fast path must leave to yajl, though the next element
 * is in sight. */
static void assert_fast_declines(const char *data) {
  g_autofree char *more = g_strconcat(data, "{", NULL);
  size_t consumed;
  g_assert_cmpint(check_fast_element(more, strlen(more), &consumed), ==,
                  JSON_FAST_DECLINED);
}

static void test_fast_tokenizer_takes_common_events(void) {
  assert_fast_takes("{\"args\":{\"name\":\"Browser\"},\"cat\":\"__metadata\","
                    "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":41000,"
                    "\"tid\":41000,\"ts\":0}");
  assert_fast_takes("{\"cat\":\"viz\",\"dur\":94.054,\"name\":\"Scroll\","
                    "\"ph\":\"X\",\"pid\":41655,\"tdur\":65.837,\"tid\":41655,"
                    "\"ts\":372811992840.374,\"tts\":13968.399}");
  assert_fast_takes("{\"args\":{\"data\":{\"stackTrace\":[{\"functionName\":"
                    "\"f191\",\"lineNumber\":1757},{\"functionName\":\"g\","
                    "\"lineNumber\":828}],\"priority\":3}},\"ph\":\"X\"}");
  assert_fast_takes("{}");
  assert_fast_takes(" \n\t{ \"a\" : [ ] , \"b\" : { } ,\"c\":[1,[2,[3]]]}\r\n ");
  assert_fast_takes("{\"t\":true,\"f\":false,\"n\":null,\"a\":[true,false,null]}");
  /* Numbers: every form of the grammar. */
  assert_fast_takes("{\"a\":0,\"b\":-0,\"c\":12,\"d\":-7.25,\"e\":1e3,"
                    "\"f\":1.5E-2,\"g\":2e+2,\"h\":-0.0e0,\"i\":"
                    "123456789012345678901234567890.5}");
  /* Escapes, in keys and values, decoded as yajl does. */
  assert_fast_takes("{\"p\\u0068\":\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\","
                    "\"\\u00e9\\u00E9\\u2028\\uFFFF\":\"\\ud83d\\ude00\","
                    "\"nul\":\"a\\u0000b\",\"low\":\"\\udc00\","
                    "\"max\":\"\\udbff\\udfff\",\"raw\":\"caf\xc3\xa9\"}");
  /* Deep, but within the limit. */
  GString *deep = g_string_new("{\"a\":");
  for (int i = 0; i < JSON_FAST_MAX_DEPTH - 1; i++)
    g_string_append(deep, "[");
  for (int i = 0; i < JSON_FAST_MAX_DEPTH - 1; i++)
    g_string_append(deep, "]");
  g_string_append(deep, "}");
  assert_fast_takes(deep->str);
  g_string_free(deep, TRUE);
}

static void test_fast_tokenizer_leaves_the_rest_to_yajl(void) {
  /* The byte after the comma must be seen, and not be ']': yajl may be
   * in array_start, where "]" would be accepted; nor '}': on bytes the
   * segmenter has not scanned, it would blank that comma. */
  size_t consumed;
  g_assert_cmpint(check_fast_element("{},", 3, &consumed), ==,
                  JSON_FAST_DECLINED);
  g_assert_cmpint(check_fast_element("{}, \n", 5, &consumed), ==,
                  JSON_FAST_DECLINED);
  g_assert_cmpint(check_fast_element("{}, ]", 5, &consumed), ==,
                  JSON_FAST_DECLINED);
  g_assert_cmpint(check_fast_element("{},}", 4, &consumed), ==,
                  JSON_FAST_DECLINED);
  g_assert_cmpint(check_fast_element("{}, \n}", 6, &consumed), ==,
                  JSON_FAST_DECLINED);
  g_assert_cmpint(check_fast_element("{},,", 4, &consumed), ==,
                  JSON_FAST_DONE);
  /* Not an object, or not followed by a comma. */
  assert_fast_declines("[1],");
  assert_fast_declines("1,");
  assert_fast_declines("{}]");
  assert_fast_declines("{} x,");
  assert_fast_declines("{}");
  /* Syntax errors, which yajl must report. */
  assert_fast_declines("{\"a\":01},");
  assert_fast_declines("{\"a\":1.},");
  assert_fast_declines("{\"a\":-},");
  assert_fast_declines("{\"a\":1e},");
  assert_fast_declines("{\"a\":.5},");
  assert_fast_declines("{\"a\":+1},");
  assert_fast_declines("{\"a\":tru},");
  assert_fast_declines("{\"a\":truex},");
  assert_fast_declines("{\"a\":1x},");
  assert_fast_declines("{\"a\":1,},");
  assert_fast_declines("{\"a\" 1},");
  assert_fast_declines("{\"a\":1 \"b\":2},");
  assert_fast_declines("{a:1},");
  assert_fast_declines("{\"a\":[1,]},");
  assert_fast_declines("{\"a\":[1}},");
  assert_fast_declines("{\"a\":{\"b\":1]},");
  assert_fast_declines("{\"a\":\"x\ty\"},");
  assert_fast_declines("{\"a\":\"\\x\"},");
  assert_fast_declines("{\"a\":\"\\u12g4\"},");
  assert_fast_declines("{\"a\":\"\\u12\"},");
  /* Whitespace yajl accepts but the fast path does not know. */
  assert_fast_declines("{\"a\":1\v},");
  assert_fast_declines("{\"a\":1\f},");
  /* Surrogates yajl decodes in its own way. */
  assert_fast_declines("{\"a\":\"\\ud800\"},");
  assert_fast_declines("{\"a\":\"\\ud800x\"},");
  assert_fast_declines("{\"a\":\"\\ud800\\n\"},");
  assert_fast_declines("{\"a\":\"\\ud800\\u0041\"},");
  assert_fast_declines("{\"a\":\"\\udbff\\ud800\"},");
  /* Too deep. */
  GString *deep = g_string_new("{\"a\":");
  for (int i = 0; i < JSON_FAST_MAX_DEPTH; i++)
    g_string_append(deep, "[");
  for (int i = 0; i < JSON_FAST_MAX_DEPTH; i++)
    g_string_append(deep, "]");
  g_string_append(deep, "},");
  assert_fast_declines(deep->str);
  g_string_free(deep, TRUE);
}

/* --- random traces ----------------------------------------------------------- */

static const char *const number_texts[] = {
    "0",      "-0",        "1",         "12",        "-7",
    "1.5",    "0.001",     "123456.789", "1.0005",   "-2.5",
    "1e3",    "1.5E-2",    "2e+2",      "-1e-7",     "4294967296",
    "9007199254740993",    "123456789012345678901", "1.23456789e5",
    "372811992840.374",    "0.0000001", "-0.0",      "1E400"};

static const char *const string_texts[] = {
    "plain", "", "with \\\"quote\\\"", "tab\\there", "slash\\/x",
    "\\u00e9t\\u00E9", "emoji \\ud83d\\ude00", "nul\\u0000byte",
    "back\\\\slash", "ctl \\b\\f\\n\\r", "caf\xc3\xa9",
    "comma, [bracket] {brace}", "\\u2028", "lone \\ud800x",
    "0x1F", "12.5", "renderer", "e", "g", "p", "t"};

static const char *const phases[] = {"X", "B", "E", "i", "I", "C", "b",
                                     "e", "n", "s", "t", "f", "M", "P",
                                     "R", "Z", ""};

static void random_space(GString *out) {
  static const char *const spaces[] = {"", "", "", "", " ", "\n", "\t",
                                       "\r\n", "  "};
  g_string_append(out, spaces[g_test_rand_int_range(0, G_N_ELEMENTS(spaces))]);
}

#define PICK(array) (array)[g_test_rand_int_range(0, G_N_ELEMENTS(array))]

static void random_string(GString *out) {
  g_string_append_printf(out, "\"%s\"", PICK(string_texts));
}

static void random_value(GString *out, int depth) {
  int kind = g_test_rand_int_range(0, depth > 3 ? 6 : 8);
  switch (kind) {
  case 0:
  case 1:
    g_string_append(out, PICK(number_texts));
    break;
  case 2:
  case 3:
    random_string(out);
    break;
  case 4:
    g_string_append(out, g_test_rand_bit() ? "true" : "false");
    break;
  case 5:
    g_string_append(out, "null");
    break;
  default: {
    bool object = kind == 6;
    int n = g_test_rand_int_range(0, 4);
    g_string_append_c(out, object ? '{' : '[');
    for (int i = 0; i < n; i++) {
      if (i)
        g_string_append_c(out, ',');
      random_space(out);
      if (object) {
        random_string(out);
        random_space(out);
        g_string_append_c(out, ':');
        random_space(out);
      }
      random_value(out, depth + 1);
      random_space(out);
    }
    g_string_append_c(out, object ? '}' : ']');
  }
  }
}

/* One event: the keys the reader knows, in random order, with values of
 * the right type or not, and unknown keys. */
static void random_event(GString *out) {
  static const char *const keys[] = {
      "ph", "ph",  "ts",   "ts",   "dur",     "tts",      "tdur",
      "pid", "tid", "name", "cat",  "args",    "args",     "id",
      "id2", "s",   "bp",   "bind_id", "flow_in", "flow_out", "other",
      "p\\u0068", "t\\u0073"};
  int n = g_test_rand_int_range(0, 9);
  g_string_append_c(out, '{');
  for (int i = 0; i < n; i++) {
    if (i)
      g_string_append_c(out, ',');
    random_space(out);
    const char *key = PICK(keys);
    g_string_append_printf(out, "\"%s\":", key);
    random_space(out);
    bool typed = g_test_rand_int_range(0, 5) > 0;
    if (typed && (strcmp(key, "ph") == 0 || strcmp(key, "p\\u0068") == 0))
      g_string_append_printf(out, "\"%s\"", PICK(phases));
    else if (typed && (key[0] == 't' || strcmp(key, "dur") == 0 ||
                       strcmp(key, "pid") == 0))
      g_string_append(out, PICK(number_texts));
    else if (typed && strcmp(key, "args") == 0)
      random_value(out, 2); /* often an object, nested */
    else if (typed && strcmp(key, "id2") == 0)
      g_string_append_printf(out, "{\"%s\":\"0x%x\"}",
                             g_test_rand_bit() ? "local" : "global",
                             g_test_rand_int_range(0, 4));
    else
      random_value(out, 1);
    random_space(out);
  }
  g_string_append_c(out, '}');
}

/* The numbers the tokenizer reads for the reader (json_fast_number): for
 * every shape of number_texts, in the reader's callback, what it says
 * must agree with the text's own conversions (json_number_parse and
 * json_us_text_to_ns) wherever the reader uses it (an integer literal of
 * at most 18 digits; at most 15 integer and 3 fraction digits), and it
 * must not be set outside the number callback. */
typedef struct number_seen {
  const json_fast_number *number;
  json_fast_number copy;
  int calls;
} number_seen;

static int seen_number(void *ctx, const char *s, size_t len) {
  (void)s;
  (void)len;
  number_seen *seen = ctx;
  seen->copy = *seen->number;
  seen->calls++;
  return 1;
}

static int seen_other(void *ctx) {
  (void)ctx;
  return 1;
}

static int seen_key(void *ctx, const unsigned char *s, size_t len) {
  (void)ctx;
  (void)s;
  (void)len;
  return 1;
}

static void test_fast_tokenizer_reads_numbers_as_their_texts_convert(void) {
  static const yajl_callbacks seen = {
      .yajl_null = seen_other,  .yajl_number = seen_number,
      .yajl_start_map = seen_other, .yajl_map_key = seen_key,
      .yajl_end_map = seen_other, .yajl_start_array = seen_other,
      .yajl_end_array = seen_other};
  for (size_t i = 0; i < G_N_ELEMENTS(number_texts); i++) {
    const char *text = number_texts[i];
    for (int nested = 0; nested < 2; nested++) {
      g_autofree char *element = g_strdup_printf(
          nested ? "{\"a\":[%s]},{" : "{\"a\":%s},{", text);
      json_fast_number number = {0};
      number_seen record = {&number, {0}, 0};
      json_text decoded = {0};
      size_t consumed = 0;
      g_assert_cmpint(json_fast_element_numbers(&seen, &seen, &record,
                                                &decoded, &number,
                                                (const uint8_t *)element,
                                                strlen(element), &consumed),
                      ==, JSON_FAST_DONE);
      tm_vec_free(&decoded);
      g_assert_cmpint(record.calls, ==, 1);
      g_assert_false(number.valid); /* only while the callback ran */
      const json_fast_number *f = &record.copy;
      bool exponent = strpbrk(text, "eE") != NULL;
      g_assert_cmpint(f->valid, ==, !exponent);
      if (!f->valid)
        continue;
      const char *point = strchr(text, '.');
      size_t int_digits =
          (point ? (size_t)(point - text) : strlen(text)) - (text[0] == '-');
      g_assert_cmpuint(f->int_digits, ==, int_digits);
      g_assert_cmpuint(f->frac_digits, ==, point ? strlen(point + 1) : 0);
      g_assert_cmpint(f->negative, ==, text[0] == '-');
      json_number n;
      g_assert_true(json_number_parse(text, strlen(text), &n));
      if (f->frac_digits == 0 && f->int_digits <= 18) {
        g_assert_cmpint(n.kind, ==, JSON_NUMBER_INT);
        g_assert_cmpint(f->negative ? -(int64_t)f->int_value
                                    : (int64_t)f->int_value,
                        ==, n.int_value);
      }
      if (f->frac_digits > 0 && f->frac_digits <= 3 && f->int_digits <= 12) {
        /* The reader's real from the digits (json_reader.c, number_value). */
        double q = (double)(f->int_value * 1000u + f->frac_value) / 1000.0;
        g_assert_cmpint(n.kind, ==, JSON_NUMBER_REAL);
        g_assert_true(memcmp(&n.real_value, &(double){f->negative ? -q : q},
                             sizeof q) == 0);
      }
      if (f->int_digits <= 15 && f->frac_digits <= 3) {
        int64_t ns;
        g_assert_true(json_us_text_to_ns(text, strlen(text), &ns));
        uint64_t x = f->int_value * 1000u + f->frac_value;
        g_assert_cmpint(f->negative ? -(int64_t)x : (int64_t)x, ==, ns);
      }
    }
  }
}

/* The reader takes a number of at most 12 integer and 1 to 3 fraction
 * digits as m / 1000 (json_reader.c, number_value): that must be the very
 * double json_number_parse (strtod) gives, for any such digits. */
static void test_short_fractions_divide_to_strtod_values(void) {
  for (int i = 0; i < 200000; i++) {
    uint64_t int_part = (uint64_t)g_test_rand_int_range(0, 1000000) *
                            1000000u +
                        (uint64_t)g_test_rand_int_range(0, 1000000);
    if (i % 4 == 0)
      int_part %= 1000u; /* small values too */
    int frac_digits = g_test_rand_int_range(1, 4);
    int frac = g_test_rand_int_range(0, frac_digits == 1   ? 10
                                        : frac_digits == 2 ? 100
                                                           : 1000);
    bool negative = g_test_rand_bit();
    char text[48];
    snprintf(text, sizeof text, "%s%" PRIu64 ".%0*d", negative ? "-" : "",
             int_part, frac_digits, frac);
    uint64_t thousandths = (uint64_t)frac * (frac_digits == 1   ? 100u
                                             : frac_digits == 2 ? 10u
                                                                : 1u);
    double q = (double)(int_part * 1000u + thousandths) / 1000.0;
    if (negative)
      q = -q;
    json_number n;
    g_assert_true(json_number_parse(text, strlen(text), &n));
    g_assert_cmpint(n.kind, ==, JSON_NUMBER_REAL);
    if (memcmp(&n.real_value, &q, sizeof q) != 0)
      g_error("%s: strtod %.17g, divided %.17g", text, n.real_value, q);
  }
}

/* A trace of `n` events: a bare array or an object with metadata, with or
 * without trailing commas and a closing bracket. */
static char *random_trace(int n, size_t *len) {
  GString *out = g_string_new(NULL);
  bool object = g_test_rand_bit();
  if (object)
    g_string_append(out, "{\"metadata\":{\"a\":[1,{\"b\":\"c\"}]},"
                         "\"traceEvents\":");
  g_string_append_c(out, '[');
  random_space(out);
  for (int i = 0; i < n; i++) {
    if (g_test_rand_int_range(0, 12) == 0)
      random_value(out, 1); /* not an event: counted and skipped */
    else
      random_event(out);
    random_space(out);
    if (i + 1 < n || g_test_rand_bit())
      g_string_append_c(out, ',');
    random_space(out);
  }
  g_string_append_c(out, ']');
  if (object)
    g_string_append(out, ",\"displayTimeUnit\":\"ns\"}");
  *len = out->len;
  return g_string_free(out, FALSE);
}

/* The fast path's log, in each chunking, must be the test build's with
 * yajl alone reading the input whole. The comparisons of random, damaged
 * and truncated traces are made with import logs in the transcript
 * (import_log lines with offsets and quotes, not "stat NAME +1" lines):
 * the reader makes the same calls either way, and a transcript without
 * them is a function of one with them, so one comparison with them
 * checks what two, with and without, would. */
static void assert_same_with_config(const char *config, const char *bytes,
                                    size_t len, const size_t *chunks,
                                    size_t n_chunks) {
  g_autofree char *reference_config =
      g_strjoin(" ", "yajl-only", config, NULL);
  json_run *reference = read_bytes_with(test_reader, reference_config, bytes,
                                         len, MAX(len, 1));
  for (size_t i = 0; i < n_chunks; i++) {
    json_run *h =
        config ? read_bytes_with(test_reader, config, bytes, len, chunks[i])
               : read_bytes_with(reader, NULL, bytes, len, chunks[i]);
    if (strcmp(h->log->str, reference->log->str) != 0) {
      g_printerr("input (%zu bytes, chunks of %zu):\n%.*s\n", len, chunks[i],
                 (int)len, bytes);
      g_assert_cmpstr(h->log->str, ==, reference->log->str);
    }
    json_run_free(h);
  }
  json_run_free(reference);
}

static void assert_same_as_yajl_alone(const char *bytes, size_t len,
                                      const size_t *chunks, size_t n_chunks) {
  assert_same_with_config(NULL, bytes, len, chunks, n_chunks);
}

static void assert_same_in_every_chunking(const char *bytes, size_t len) {
  size_t *chunks = g_new(size_t, len + 1);
  for (size_t i = 0; i <= len; i++)
    chunks[i] = i + 1;
  assert_same_as_yajl_alone(bytes, len, chunks, len + 1);
  g_free(chunks);
}

static int64_t fast_elements(const char *bytes, size_t len) {
  json_run *h = read_bytes_with(test_reader, "count-fast", bytes, len,
                                 MAX(len, 1));
  int64_t n = stat_total(h, "json_test_fast_elements");
  json_run_free(h);
  return n;
}

/* Random traces and the fixtures, in every chunking, with import logs:
 * the fast path and yajl alone agree on every call, offset and quote. */
static void test_fast_reader_agrees_with_yajl_in_every_chunking(void) {
  import_logs_in_transcript = true;
  int64_t taken = 0;
  int logged = 0;
  for (int round = 0; round < 40; round++) {
    size_t len;
    g_autofree char *trace = random_trace(g_test_rand_int_range(1, 8), &len);
    assert_same_in_every_chunking(trace, len);
    taken += fast_elements(trace, len);
    json_run *h = read_bytes_with(reader, NULL, trace, len, len);
    logged += strstr(h->log->str, "\nimport_log json_") != NULL ||
              g_str_has_prefix(h->log->str, "import_log json_");
    json_run_free(h);
  }
  /* The comparison means something only if the fast path ran, and if
   * failures were logged. */
  g_assert_cmpint(taken, >, 40);
  g_assert_cmpint(logged, >, 0);
  const char *fixtures[] = {"slices.json", "async.json", "counters.json",
                            "flows.json", "pid_tid.json", "strings.json",
                            "times.json", "bad_events.json",
                            "object_form.json", "malformed.json",
                            "incomplete_object.json", "unterminated.json",
                            "unterminated_after_comma.json"};
  for (size_t i = 0; i < G_N_ELEMENTS(fixtures); i++) {
    g_autofree char *path = fixture_path(fixtures[i]);
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    assert_same_in_every_chunking(bytes, len);
  }
  import_logs_in_transcript = false;
}

/* Every prefix of random traces, in several chunkings, with import logs. */
static void test_fast_reader_agrees_with_yajl_on_truncated_traces(void) {
  import_logs_in_transcript = true;
  static const size_t chunks[] = {1, 2, 3, 5, 8, 13, 64, 4096};
  for (int round = 0; round < 12; round++) {
    size_t len;
    g_autofree char *trace = random_trace(g_test_rand_int_range(2, 6), &len);
    for (size_t cut = 0; cut <= len; cut++)
      assert_same_as_yajl_alone(trace, cut, chunks, G_N_ELEMENTS(chunks));
  }
  import_logs_in_transcript = false;
}

/* When an event's end stops the parser (a callback failing; the test
 * knob "cancel-third-event" makes the third one do so), the fast path
 * reports it where yajl would: just after the event's closing brace. */
static void test_fast_reader_stops_where_yajl_would(void) {
  static const size_t chunks[] = {1, 2, 5, 16, 64, 4096};
  int stopped = 0;
  for (int round = 0; round < 30; round++) {
    size_t len;
    g_autofree char *trace = random_trace(g_test_rand_int_range(3, 8), &len);
    assert_same_with_config("cancel-third-event", trace, len, chunks,
                            G_N_ELEMENTS(chunks));
    json_run *h = read_bytes_with(test_reader, "cancel-third-event", trace,
                                   len, len);
    stopped += strstr(h->log->str, "the third event's end stops") != NULL;
    json_run_free(h);
  }
  g_assert_cmpint(stopped, >, 0);
  /* And by the fast path itself, in a trace it reads whole. */
  const char *events = "[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1},"
                       "{\"ph\":\"i\",\"ts\":2,\"pid\":1,\"tid\":1},"
                       "{\"ph\":\"i\",\"ts\":3,\"pid\":1,\"tid\":1},"
                       "{\"ph\":\"i\",\"ts\":4,\"pid\":1,\"tid\":1}]";
  size_t third_end = (size_t)(strstr(events, "\"ts\":3") - events) + 23;
  g_assert_cmpint(events[third_end - 1], ==, '}');
  json_run *h = read_bytes_with(test_reader, "cancel-third-event count-fast",
                                 events, strlen(events), strlen(events));
  g_autofree char *expected = g_strdup_printf(
      "error at %zu: test knob: the third event's end stops the parser\n",
      third_end);
  g_assert_nonnull(strstr(h->log->str, expected));
  g_assert_cmpint(stat_total(h, "json_test_fast_elements"), ==, 2);
  json_run_free(h);
}

/* Random traces with bytes replaced, deleted or inserted, with import
 * logs. */
static void test_fast_reader_agrees_with_yajl_on_damaged_traces(void) {
  import_logs_in_transcript = true;
  static const size_t chunks[] = {1, 3, 7, 16, 4096};
  static const char damage[] = "\"\\,:{}[]0-.eEtfnu \x01\v";
  for (int round = 0; round < 400; round++) {
    size_t len;
    char *trace = random_trace(g_test_rand_int_range(1, 5), &len);
    int edits = g_test_rand_int_range(1, 4);
    for (int e = 0; e < edits && len > 0; e++) {
      size_t at = (size_t)g_test_rand_int_range(0, (gint32)len);
      char c = damage[g_test_rand_int_range(0, sizeof(damage) - 1)];
      switch (g_test_rand_int_range(0, 3)) {
      case 0: /* replace */
        trace[at] = c;
        break;
      case 1: /* delete */
        memmove(trace + at, trace + at + 1, len - at - 1);
        len--;
        break;
      default: { /* insert */
        char *grown = g_malloc(len + 2);
        memcpy(grown, trace, at);
        grown[at] = c;
        memcpy(grown + at + 1, trace + at, len - at);
        g_free(trace);
        trace = grown;
        len++;
      }
      }
    }
    assert_same_as_yajl_alone(trace, len, chunks, G_N_ELEMENTS(chunks));
    g_free(trace);
  }
  import_logs_in_transcript = false;
}

static void test_fast_tokenizer_agrees_with_yajl_on_random_events(void) {
  static const char damage[] = "\"\\,:{}[]0-.eEtfnu \x01\v";
  for (int round = 0; round < 3000; round++) {
    GString *event = g_string_new(NULL);
    random_space(event);
    random_event(event);
    random_space(event);
    g_string_append(event, ",{");
    size_t consumed;
    json_fast_status status =
        check_fast_element(event->str, event->len, &consumed);
    if (!strstr(event->str, "\\ud800x")) {
      g_assert_cmpint(status, ==, JSON_FAST_DONE);
      g_assert_cmpuint(consumed, ==, event->len - 1);
    }
    /* Damaged: whatever the fast path takes, yajl takes the same way
     * (check_fast_element compares). */
    size_t at = (size_t)g_test_rand_int_range(0, (gint32)event->len);
    char c = damage[g_test_rand_int_range(0, sizeof(damage) - 1)];
    if (g_test_rand_bit())
      event->str[at] = c;
    else
      g_string_insert_c(event, (gssize)at, c);
    check_fast_element(event->str, event->len, &consumed);
    g_string_free(event, TRUE);
  }
}

/* --- import logs ------------------------------------------------------------------------ */

/* Every malformed kind once, in the shapes that move offsets: leading
 * whitespace, whitespace before a comma, non-object elements (a string
 * with escaped quotes and a bracket, an array holding an object), a
 * trailing comma inside an event, an event longer than the 1 KiB quoted.
 * LONG_TS marks where a long "ts" string goes. Most elements start a
 * line; one follows its comma directly. */
#define LONG_TS "@LONG@"
static const char import_log_template[] =
    "[\n"
    "{\"name\":\"no phase\",\"ts\":1,\"pid\":1,\"tid\":1},\n"
    "  {\"ph\":\"X\",\"name\":\"bad ts\",\"ts\":\"soon\",\"dur\":1,\"pid\":1,"
    "\"tid\":1} ,\n"
    "{\"ph\":\"X\",\"name\":\"no dur\",\"ts\":1,\"pid\":1,\"tid\":1},"
    "{\"ph\":\"X\",\"name\":\"dur null\",\"ts\":1,\"dur\":null,\"pid\":1,"
    "\"tid\":1},\n"
    "42,\n"
    "\"a \\\"quoted\\\" [string],\",\n"
    "[1,{\"ph\":\"X\"}],\n"
    "{\"ph\":\"C\",\"name\":\"no args\",\"ts\":1,\"pid\":1},\n"
    "{\"ph\":\"b\",\"cat\":\"c\",\"ts\":1,\"pid\":1,\"tid\":1},\n"
    "{\"ph\":\"C\",\"name\":\"mem\",\"ts\":1,\"pid\":1,"
    "\"args\":{\"a\":\"x\",\"b\":1}},\n"
    "{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"tdur\":\"x\",\"pid\":1,\"tid\":1,},\n"
    "{\"ph\":\"X\",\"name\":\"id2\",\"id2\":5,\"ts\":1,\"dur\":1,\"pid\":1,"
    "\"tid\":1},\n"
    "{\"ph\":\"I\",\"name\":\"long\",\"ts\":\"" LONG_TS "\",\"pid\":1},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"\"}},\n"
    "{\"ph\":\"X\",\"name\":\"ok\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":1}\n"
    "]\n";

static char *import_log_input(void) {
  GString *x = g_string_new(NULL);
  for (int i = 0; i < 1100; i++)
    g_string_append_c(x, (char)('a' + i % 26));
  GString *out = g_string_new(import_log_template);
  g_string_replace(out, LONG_TS, x->str, 1);
  g_string_free(x, TRUE);
  return g_string_free(out, FALSE);
}

/* The offset of `needle` in `input`, which must hold it exactly once. */
static size_t offset_of(const char *input, const char *needle) {
  const char *at = strstr(input, needle);
  g_assert_nonnull(at);
  g_assert_null(strstr(at + 1, needle));
  return (size_t)(at - input);
}

/* "import_log json_tokenizer_failure at=<offset of raw> raw_event=<raw>;
 * error=..." */
static void expect_tokenizer_log(GString *expected, const char *input,
                                 const char *raw, const char *error) {
  g_string_append_printf(expected,
                         "import_log json_tokenizer_failure at=%zu raw_event=%s; "
                         "error=%s\n",
                         offset_of(input, raw), raw, error);
}

static void expect_parser_log(GString *expected, const char *input,
                              const char *event, const char *args) {
  g_string_append_printf(expected, "import_log json_parser_failure at=%zu %s\n",
                         offset_of(input, event), args);
}

/* Every chunk size from 1 byte to the whole input gives the same log. */
static json_run *read_in_every_chunk_size(const char *bytes, size_t len) {
  json_run *whole = read_bytes(bytes, len, len);
  for (size_t chunk = 1; chunk < len; chunk++) {
    json_run *other = read_bytes(bytes, len, chunk);
    if (strcmp(other->log->str, whole->log->str) != 0) {
      g_printerr("chunks of %zu:\n", chunk);
      g_assert_cmpstr(other->log->str, ==, whole->log->str);
    }
    json_run_free(other);
  }
  return whole;
}

static void test_import_logs_quote_each_dropped_event(void) {
  import_logs_in_transcript = true;
  g_autofree char *input = import_log_input();
  size_t len = strlen(input);

  const char *long_start = strstr(input, "{\"ph\":\"I\",\"name\":\"long\"");
  g_assert_nonnull(long_start);
  g_autofree char *long_raw = g_strndup(long_start, 1024);
  g_assert_cmpuint(strlen(long_raw), ==, 1024);

  g_autoptr(GString) expected = g_string_new(NULL);
  expect_tokenizer_log(expected, input,
                       "{\"name\":\"no phase\",\"ts\":1,\"pid\":1,\"tid\":1}",
                       "bad or missing ph");
  expect_tokenizer_log(expected, input,
                       "{\"ph\":\"X\",\"name\":\"bad ts\",\"ts\":\"soon\","
                       "\"dur\":1,\"pid\":1,\"tid\":1}",
                       "bad ts");
  g_string_append(expected, "thread t1 of p1\n");
  expect_parser_log(expected, input,
                    "{\"ph\":\"X\",\"name\":\"no dur\"",
                    "event_name=no dur; event_phase=X");
  /* Right after the previous comma, without whitespace. */
  expect_parser_log(expected, input,
                    "{\"ph\":\"X\",\"name\":\"dur null\"",
                    "event_name=dur null; event_phase=X");
  g_string_append_printf(expected,
                         "import_log json_tokenizer_failure at=%zu raw_event=42; "
                         "error=event is not an object\n",
                         offset_of(input, "42,"));
  expect_tokenizer_log(expected, input, "\"a \\\"quoted\\\" [string],\"",
                       "event is not an object");
  expect_tokenizer_log(expected, input, "[1,{\"ph\":\"X\"}]",
                       "event is not an object");
  expect_parser_log(expected, input, "{\"ph\":\"C\",\"name\":\"no args\"",
                    "event_name=no args; event_phase=C");
  /* No name: the arg is left out rather than given as "". */
  expect_parser_log(expected, input, "{\"ph\":\"b\",\"cat\":\"c\"",
                    "event_phase=b");
  g_string_append(expected, "process p1\n");
  /* A counter's non-numeric member: the rest still counts. */
  expect_parser_log(expected, input, "{\"ph\":\"C\",\"name\":\"mem\"",
                    "event_name=mem; event_phase=C");
  g_string_append(expected,
                  "track T1 = json_counter counter name=\"mem b\" p1 key=0\n"
                  "counter T1 private ts=1000 value=1\n");
  /* The trailing comma the reader tolerates is quoted as the space it
   * reads. */
  g_string_append_printf(
      expected,
      "import_log json_tokenizer_failure at=%zu raw_event={\"ph\":\"X\",\"ts\":1,"
      "\"dur\":1,\"tdur\":\"x\",\"pid\":1,\"tid\":1 }; error=bad tdur\n",
      offset_of(input, "{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"tdur\""));
  expect_tokenizer_log(expected, input,
                       "{\"ph\":\"X\",\"name\":\"id2\",\"id2\":5,\"ts\":1,"
                       "\"dur\":1,\"pid\":1,\"tid\":1}",
                       "id2 is not an object");
  g_string_append_printf(expected,
                         "import_log json_tokenizer_failure at=%zu raw_event=%s; "
                         "error=bad ts\n",
                         (size_t)(long_start - input), long_raw);
  expect_parser_log(expected, input, "{\"ph\":\"M\",\"name\":\"process_name\"",
                    "event_name=process_name; event_phase=M");
  g_string_append(expected,
                  "track T2 = thread_execution t1\n"
                  "slice_complete T2 private ts=2000 name=ok dur=1000\n"
                  "status=ok\n");

  json_run *h = read_in_every_chunk_size(input, len);
  g_assert_cmpstr(h->log->str, ==, expected->str);
  /* Logging counts too, as the host's stats_log does. */
  g_assert_cmpint(stat_total(h, "json_tokenizer_failure"), ==, 8);
  g_assert_cmpint(stat_total(h, "json_parser_failure"), ==, 6);
  json_run_free(h);
  import_logs_in_transcript = false;
}

/* Offsets in an object form, where the first event follows the array's
 * '[' directly and events come after other keys. */
static void test_import_logs_offsets_in_the_object_form(void) {
  import_logs_in_transcript = true;
  const char *input =
      "{\"metadata\":{\"k\":[1,2]},\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,"
      "\"pid\":2,\"tid\":3},{\"ts\":5}],\"displayTimeUnit\":\"ns\"}";
  g_autoptr(GString) expected = g_string_new("metadata json_metadata.k = \"[1,2]\"\n"
                                             "thread t3 of p2\n");
  expect_parser_log(expected, input, "{\"ph\":\"X\",\"ts\":1",
                    "event_phase=X");
  expect_tokenizer_log(expected, input, "{\"ts\":5}", "bad or missing ph");
  g_string_append(expected, "stat json_display_time_unit +1\nstatus=ok\n");
  json_run *h = read_in_every_chunk_size(input, strlen(input));
  g_assert_cmpstr(h->log->str, ==, expected->str);
  json_run_free(h);
  import_logs_in_transcript = false;
}

/* A scalar element is quoted as yajl lexed it, even when garbage follows
 * it before the next comma (the parse error comes after the log). */
static void test_import_logs_quote_scalars_as_lexed(void) {
  import_logs_in_transcript = true;
  const char *input = "[3.5e2,\"s\\\\\",null{\"ts\":1,\"x\":[1]}]";
  g_autoptr(GString) expected = g_string_new(NULL);
  g_string_append_printf(expected,
                         "import_log json_tokenizer_failure at=1 raw_event=3.5e2; "
                         "error=event is not an object\n"
                         "import_log json_tokenizer_failure at=7 raw_event=\"s\\\\\"; "
                         "error=event is not an object\n"
                         "import_log json_tokenizer_failure at=13 raw_event=null; "
                         "error=event is not an object\n"
                         "error at 18: Failed to parse JSON: parse error: after "
                         "array element, I expect ',' or ']'\n"
                         "status=error\n");
  g_assert_cmpint(offset_of(input, "null"), ==, 13);
  json_run *h = read_in_every_chunk_size(input, strlen(input));
  g_assert_cmpstr(h->log->str, ==, expected->str);
  json_run_free(h);
  assert_same_in_every_chunking(input, strlen(input));
  import_logs_in_transcript = false;
}

/* With logging on, the fast path and yajl alone must still agree in every
 * chunking: the same offsets and quotes whichever read the element. Here
 * on the input with every malformed kind; random, damaged and truncated
 * traces and the fixtures (bad_events.json among them) are compared with
 * logging on by the fast-path tests above. */
static void test_import_logs_fast_path_agrees_with_yajl(void) {
  import_logs_in_transcript = true;
  g_autofree char *input = import_log_input();
  assert_same_in_every_chunking(input, strlen(input));
  import_logs_in_transcript = false;
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  if (!json_run_load_readers(true))
    return 1;

  g_test_add_func("/json-reader/fast-path/tokenizer-takes-common-events",
                  test_fast_tokenizer_takes_common_events);
  g_test_add_func("/json-reader/fast-path/tokenizer-leaves-the-rest-to-yajl",
                  test_fast_tokenizer_leaves_the_rest_to_yajl);
  g_test_add_func("/json-reader/fast-path/tokenizer-reads-numbers-as-their-texts-convert",
                  test_fast_tokenizer_reads_numbers_as_their_texts_convert);
  g_test_add_func("/json-reader/fast-path/short-fractions-divide-to-strtod-values",
                  test_short_fractions_divide_to_strtod_values);
  g_test_add_func("/json-reader/fast-path/tokenizer-agrees-with-yajl-on-random-events",
                  test_fast_tokenizer_agrees_with_yajl_on_random_events);
  g_test_add_func("/json-reader/fast-path/reader-agrees-with-yajl-in-every-chunking",
                  test_fast_reader_agrees_with_yajl_in_every_chunking);
  g_test_add_func("/json-reader/fast-path/reader-agrees-with-yajl-on-truncated-traces",
                  test_fast_reader_agrees_with_yajl_on_truncated_traces);
  g_test_add_func("/json-reader/fast-path/reader-stops-where-yajl-would",
                  test_fast_reader_stops_where_yajl_would);
  g_test_add_func("/json-reader/import-logs/each-dropped-event-is-quoted-at-its-offset",
                  test_import_logs_quote_each_dropped_event);
  g_test_add_func("/json-reader/import-logs/offsets-in-the-object-form",
                  test_import_logs_offsets_in_the_object_form);
  g_test_add_func("/json-reader/import-logs/scalars-are-quoted-as-lexed",
                  test_import_logs_quote_scalars_as_lexed);
  g_test_add_func("/json-reader/import-logs/fast-path-agrees-with-yajl",
                  test_import_logs_fast_path_agrees_with_yajl);
  g_test_add_func("/json-reader/fast-path/reader-agrees-with-yajl-on-damaged-traces",
                  test_fast_reader_agrees_with_yajl_on_damaged_traces);

  int result = g_test_run();
  json_run_unload_readers();
  return result;
}
