/*
 * The JSON reader's segmenter (plugins/json/json_segmenter.c): it cuts the
 * input between top-level events where a naive byte-by-byte model does,
 * whatever the chunking, and carries little across big chunks. Built
 * twice, like the reader's tests: with SSE2 and with the portable scan.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "json_segmenter.h"

/* --- segmenter ---------------------------------------------------------------- */

typedef struct segment_log {
  GString *bytes;   /* segments concatenated */
  GArray *cuts;     /* file offsets where a segment started */
} segment_log;

static bool collect_segment(void *ctx, const uint8_t *data, size_t len,
                            int64_t file_offset) {
  segment_log *log = ctx;
  g_assert_cmpint(file_offset, ==, (int64_t)log->bytes->len);
  g_assert_cmpuint(len, >, 0);
  g_array_append_val(log->cuts, file_offset);
  g_string_append_len(log->bytes, (const char *)data, (gssize)len);
  return true;
}

/* The naive model: which bytes are inside strings (an opening quote
 * counts as inside, a closing one as outside), and the text with every
 * trailing comma blanked. */
static void reference_segmentation(const char *text, size_t len,
                                   bool *inside, char *blanked) {
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    }
    inside[i] = in_string;
  }
  memcpy(blanked, text, len);
  for (size_t i = 0; i < len; i++) {
    if (text[i] != ',' || inside[i])
      continue;
    size_t j = i + 1;
    while (j < len && strchr(" \t\r\n", text[j]) && text[j])
      j++;
    if (j < len && (text[j] == ']' || text[j] == '}'))
      blanked[i] = ' ';
  }
}

/* A cut before byte `p` is safe if no token can straddle it: outside
 * strings, right after a comma or a closing quote (whitespace between
 * allowed). */
static bool cut_is_safe(const char *text, const bool *inside, size_t p) {
  if (p == 0)
    return true;
  if (inside[p - 1])
    return false;
  size_t j = p;
  while (j > 0 && strchr(" \t\r\n", text[j - 1]) && text[j - 1])
    j--;
  return j > 0 && (text[j - 1] == ',' || text[j - 1] == '"');
}

/* A random text of the characters that matter to the segmenter, with
 * the naive model's reading of it. */
typedef struct random_case {
  char *text;
  size_t len;
  bool *inside;  /* per byte, from reference_segmentation */
  char *blanked; /* the model's text, trailing commas blanked */
} random_case;

static random_case random_case_new(void) {
  static const char alphabet[] = "\"\"\"\",,,,]]}}{[ \n\\aaaaa11:";
  random_case c;
  c.len = (size_t)g_test_rand_int_range(0, 400);
  c.text = g_malloc(c.len + 1);
  for (size_t i = 0; i < c.len; i++)
    c.text[i] = alphabet[g_test_rand_int_range(0, sizeof(alphabet) - 1)];
  c.text[c.len] = '\0';
  c.inside = g_new0(bool, c.len + 1);
  c.blanked = g_malloc(c.len + 1);
  reference_segmentation(c.text, c.len, c.inside, c.blanked);
  return c;
}

/* Flushes the segmenter, checks that what it gave (with whatever a
 * reader took) is the model's text cut only where it is safe, and frees
 * the case, the segmenter and the log. */
static void check_segments_and_free(random_case *c, json_segmenter *segmenter,
                                    segment_log *log) {
  g_assert_true(json_segmenter_flush(segmenter, collect_segment, log));
  g_assert_cmpuint(log->bytes->len, ==, c->len);
  g_assert_true(memcmp(log->bytes->str, c->blanked, c->len) == 0);
  for (guint i = 0; i < log->cuts->len; i++)
    g_assert_true(cut_is_safe(c->text, c->inside,
                              (size_t)g_array_index(log->cuts, int64_t, i)));
  json_segmenter_free(segmenter);
  g_string_free(log->bytes, TRUE);
  g_array_free(log->cuts, TRUE);
  g_free(c->blanked);
  g_free(c->inside);
  g_free(c->text);
}

static void test_segmenter_matches_the_naive_model(void) {
  for (int round = 0; round < 3000; round++) {
    random_case c = random_case_new();
    const char *text = c.text;
    size_t len = c.len;
    json_segmenter segmenter = {0};
    segment_log log = {g_string_new(NULL),
                       g_array_new(FALSE, FALSE, sizeof(int64_t))};
    for (size_t off = 0; off < len;) {
      size_t want = (size_t)g_test_rand_int_range(1, 150);
      size_t n = MIN(want, len - off);
      g_assert_true(json_segmenter_feed(&segmenter, (const uint8_t *)text + off,
                                        n, (int64_t)off, collect_segment, &log));
      off += n;
    }
    check_segments_and_free(&c, &segmenter, &log);
  }
}

/* The reader's way (json_reader.c, feed_chunk): while the segmenter is
 * idle, a reader may take bytes itself, up to a comma outside strings
 * whose next significant byte is in the chunk and no closer, with no
 * trailing comma among them (the fast path declines those); the rest
 * goes through json_segmenter_feed_head, or json_segmenter_feed. The
 * bytes taken plus the segments must still be the naive model's text,
 * cut only where it is safe. Here the reader takes a random number of
 * such commas' worth of bytes whenever it may. */
static size_t bytes_a_reader_may_take(const char *text, const bool *inside,
                                      const char *blanked, size_t from,
                                      size_t end) {
  size_t taken = 0;
  int commas = g_test_rand_int_range(0, 4);
  for (size_t i = from; i < end && commas > 0; i++) {
    if (blanked[i] != text[i])
      break; /* a trailing comma: the fast path would decline */
    if (text[i] != ',' || inside[i])
      continue;
    size_t q = i + 1;
    while (q < end && strchr(" \t\r\n", text[q]) && text[q])
      q++;
    if (q == end || text[q] == ']' || text[q] == '}')
      break;
    taken = i + 1 - from;
    commas--;
  }
  return taken;
}

static void test_segmenter_head_feeds_leave_it_idle_for_a_reader(void) {
  for (int round = 0; round < 3000; round++) {
    random_case c = random_case_new();
    const char *text = c.text, *blanked = c.blanked;
    const bool *inside = c.inside;
    size_t len = c.len;
    json_segmenter segmenter = {0};
    segment_log log = {g_string_new(NULL),
                       g_array_new(FALSE, FALSE, sizeof(int64_t))};
    for (size_t off = 0; off < len;) {
      size_t want = (size_t)g_test_rand_int_range(1, 150);
      size_t n = MIN(want, len - off);
      size_t pos = 0;
      while (pos < n) {
        if (json_segmenter_idle(&segmenter)) {
          size_t taken = bytes_a_reader_may_take(text, inside, blanked,
                                                 off + pos, off + n);
          g_string_append_len(log.bytes, text + off + pos, (gssize)taken);
          pos += taken;
          if (pos == n)
            break;
        }
        bool ok = false;
        size_t used = json_segmenter_feed_head(
            &segmenter, (const uint8_t *)text + off + pos, n - pos,
            (int64_t)(off + pos), collect_segment, &log, &ok);
        g_assert_true(ok);
        g_assert_cmpuint(used, >, 0);
        /* Short of the chunk's end only at a comma, and idle there. */
        if (used < n - pos) {
          g_assert_cmpint(text[off + pos + used - 1], ==, ',');
          g_assert_true(json_segmenter_idle(&segmenter));
        }
        pos += used;
      }
      off += n;
    }
    check_segments_and_free(&c, &segmenter, &log);
  }
}

static void test_segmenter_passes_big_chunks_without_carrying_much(void) {
  /* 10000 small events: only the partial event at each chunk end waits. */
  GString *text = g_string_new("[");
  for (int i = 0; i < 10000; i++)
    g_string_append_printf(text, "{\"ph\":\"X\",\"ts\":%d,\"s\":\"a\\\"b\"},",
                           i);
  g_string_append(text, "]");
  json_segmenter segmenter = {0};
  segment_log log = {g_string_new(NULL),
                     g_array_new(FALSE, FALSE, sizeof(int64_t))};
  for (size_t off = 0; off < text->len; off += 65536) {
    size_t n = MIN(65536u, text->len - off);
    g_assert_true(json_segmenter_feed(&segmenter, (const uint8_t *)text->str + off,
                                      n, (int64_t)off, collect_segment, &log));
    g_assert_cmpuint(segmenter.carry.len, <, 64);
  }
  g_assert_true(json_segmenter_flush(&segmenter, collect_segment, &log));
  g_assert_cmpuint(log.bytes->len, ==, text->len);
  /* The one trailing comma, before the final ']', is blanked. */
  g_assert_cmpint(log.bytes->str[text->len - 2], ==, ' ');
  text->str[text->len - 2] = ' ';
  g_assert_cmpstr(log.bytes->str, ==, text->str);
  json_segmenter_free(&segmenter);
  g_string_free(log.bytes, TRUE);
  g_array_free(log.cuts, TRUE);
  g_string_free(text, TRUE);
}

/* 1 MiB of whitespace between two events, fed in 64 KiB chunks, once
 * after a comma and once after a value: every byte comes out in order at
 * its offset (whitespace as whitespace, newlines after a pending comma
 * possibly as spaces), a trailing comma still blanked, and the carry never
 * holds the run (the issue-11 case of 10 GiB of whitespace). */
static void test_segmenter_never_carries_a_long_run_of_whitespace(void) {
  static const char *const heads[] = {"[{\"a\":1},", "[{\"a\":1}"};
  static const char *const tails[] = {"{\"b\":2},]", "]"};
  for (size_t k = 0; k < G_N_ELEMENTS(heads); k++) {
    GString *text = g_string_new(heads[k]);
    size_t run = (size_t)1 << 20;
    for (size_t i = 0; i < run; i++)
      g_string_append_c(text, i % 61 == 0 ? '\n' : ' ');
    g_string_append(text, tails[k]);
    json_segmenter segmenter = {0};
    segment_log log = {g_string_new(NULL), g_array_new(FALSE, FALSE, sizeof(int64_t))};
    for (size_t off = 0; off < text->len;) {
      size_t n = MIN((size_t)64 * 1024, text->len - off);
      g_assert_true(json_segmenter_feed(&segmenter, (const uint8_t *)text->str + off, n,
                                        (int64_t)off, collect_segment, &log));
      g_assert_cmpuint(segmenter.carry.len, <=, (size_t)256 * 1024);
      off += n;
    }
    g_assert_true(json_segmenter_flush(&segmenter, collect_segment, &log));
    g_assert_cmpuint(log.bytes->len, ==, text->len);
    for (size_t i = 0; i < text->len; i++) {
      char want = text->str[i], got = log.bytes->str[i];
      if (want == '\n' || want == ' ')
        g_assert_true(got == ' ' || got == '\n');
      else if (k == 0 && i == text->len - 2) /* the trailing comma */
        g_assert_cmpint(got, ==, ' ');
      else
        g_assert_cmpint(got, ==, want);
    }
    json_segmenter_free(&segmenter);
    g_string_free(log.bytes, TRUE);
    g_array_free(log.cuts, TRUE);
    g_string_free(text, TRUE);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/json-reader/segmenter/never-carries-a-long-run-of-whitespace",
                  test_segmenter_never_carries_a_long_run_of_whitespace);
  g_test_add_func("/json-reader/segmenter/matches-the-naive-model",
                  test_segmenter_matches_the_naive_model);
  g_test_add_func("/json-reader/segmenter/head-feeds-leave-it-idle-for-a-reader",
                  test_segmenter_head_feeds_leave_it_idle_for_a_reader);
  g_test_add_func("/json-reader/segmenter/big-chunks-carry-little",
                  test_segmenter_passes_big_chunks_without_carrying_much);
  return g_test_run();
}
