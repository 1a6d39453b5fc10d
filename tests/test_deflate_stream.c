/* Unit tests of core/input/deflate_stream: raw DEFLATE inflated by ISA-L.
 * Expected bytes and CRC-32s are zlib's: the input is zlib's raw deflate
 * of known bytes and the CRC is zlib's crc32() of those bytes. */
#include <glib.h>
#include <string.h>

#include "container_fixture.h"
#include "input/deflate_stream.h"

/* Bytes that compress but not to nothing: printable noise with repeats. */
static GBytes *noise(size_t len, guint32 seed) {
  uint8_t *data = g_malloc(len);
  GRand *rand = g_rand_new_with_seed(seed);
  for (size_t i = 0; i < len; i++)
    data[i] = i >= 64 && g_rand_int_range(rand, 0, 3) == 0
                  ? data[i - 64]
                  : (uint8_t)g_rand_int_range(rand, 32, 127);
  g_rand_free(rand);
  return g_bytes_new_take(data, len);
}

/* Inflates `compressed` giving `in_piece` input bytes and `out_piece` bytes
 * of room per call; the status of the last call in *last. */
static GByteArray *inflate_in_pieces(deflate_stream *s, GBytes *compressed,
                                     size_t in_piece, size_t out_piece,
                                     deflate_stream_status *last,
                                     size_t *left_over) {
  size_t len;
  const uint8_t *data = g_bytes_get_data(compressed, &len);
  GByteArray *out = g_byte_array_new();
  uint8_t *room = g_malloc(out_piece);
  size_t given = 0;
  const uint8_t *in = data;
  size_t in_len = 0;
  deflate_stream_status status = DEFLATE_STREAM_MORE;
  /* Bounded: every call either uses input, makes output or ends. */
  for (size_t calls = 0; calls < 10 * (len + 1) + 1000000; calls++) {
    if (in_len == 0 && given < len) {
      in = data + given;
      in_len = MIN(in_piece, len - given);
      given += in_len;
    }
    size_t made = 0, in_before = in_len;
    status = deflate_stream_inflate(s, &in, &in_len, room, out_piece, &made);
    g_byte_array_append(out, room, (guint)made);
    if (status != DEFLATE_STREAM_MORE)
      break;
    if (made == 0 && in_before == 0 && given == len)
      break; /* no input left and nothing more comes out */
  }
  g_free(room);
  *last = status;
  *left_over = in_len + (len - given);
  return out;
}

static void test_inflates_to_zlibs_bytes_and_crc_however_it_is_cut(void) {
  /* Whole buffers, then 1-byte input pieces into 7-byte rooms (a smaller
   * input: that is a call per byte), then pieces that straddle ISA-L's
   * internal blocks. {input piece, room, bytes}. */
  const size_t cuts[][3] = {
      {1 << 20, 1 << 20, 300000}, {1, 7, 40000}, {4093, 65521, 300000}};
  for (size_t k = 0; k < G_N_ELEMENTS(cuts); k++) {
    GBytes *plain = noise(cuts[k][2], 1);
    GBytes *compressed = raw_deflate(plain);
    deflate_stream *s = deflate_stream_new();
    deflate_stream_status last;
    size_t left_over;
    GByteArray *out =
        inflate_in_pieces(s, compressed, cuts[k][0], cuts[k][1], &last, &left_over);
    g_assert_cmpint(last, ==, DEFLATE_STREAM_END);
    g_assert_cmpmem(out->data, out->len, g_bytes_get_data(plain, NULL),
                    g_bytes_get_size(plain));
    g_assert_cmpuint(deflate_stream_crc32(s), ==, zlib_crc32_of(plain));
    g_assert_cmpuint(deflate_stream_total_out(s), ==, g_bytes_get_size(plain));
    g_assert_null(deflate_stream_error(s));
    g_assert_cmpuint(left_over, ==, 0);
    g_byte_array_unref(out);
    deflate_stream_free(s);
    g_bytes_unref(plain);
    g_bytes_unref(compressed);
  }
}

static void test_an_empty_stream_ends_with_nothing_and_crc_zero(void) {
  GBytes *plain = g_bytes_new(NULL, 0);
  GBytes *compressed = raw_deflate(plain);
  deflate_stream *s = deflate_stream_new();
  deflate_stream_status last;
  size_t left_over;
  GByteArray *out = inflate_in_pieces(s, compressed, 64, 64, &last, &left_over);
  g_assert_cmpint(last, ==, DEFLATE_STREAM_END);
  g_assert_cmpuint(out->len, ==, 0);
  g_assert_cmpuint(deflate_stream_crc32(s), ==, 0);
  /* Ended: another call makes nothing and says so again. */
  uint8_t room[8];
  const uint8_t *in = room;
  size_t in_len = 0, made = 1;
  g_assert_cmpint(deflate_stream_inflate(s, &in, &in_len, room, sizeof room, &made),
                  ==, DEFLATE_STREAM_END);
  g_assert_cmpuint(made, ==, 0);
  g_byte_array_unref(out);
  deflate_stream_free(s);
  g_bytes_unref(plain);
  g_bytes_unref(compressed);
}

/* A stream cut short asks for more input forever: the caller, who knows
 * where the data ends, calls that truncation. */
static void test_a_cut_stream_wants_more_and_keeps_what_it_made(void) {
  GBytes *plain = noise(200000, 2);
  GBytes *compressed = raw_deflate(plain);
  GBytes *cut = g_bytes_new_from_bytes(compressed, 0, g_bytes_get_size(compressed) / 2);
  deflate_stream *s = deflate_stream_new();
  deflate_stream_status last;
  size_t left_over;
  GByteArray *out = inflate_in_pieces(s, cut, 1000, 4096, &last, &left_over);
  g_assert_cmpint(last, ==, DEFLATE_STREAM_MORE);
  g_assert_cmpuint(out->len, >, 0);
  g_assert_cmpuint(out->len, <, g_bytes_get_size(plain));
  g_assert_cmpmem(out->data, out->len, g_bytes_get_data(plain, NULL), out->len);
  g_assert_null(deflate_stream_error(s));
  g_byte_array_unref(out);
  deflate_stream_free(s);
  g_bytes_unref(cut);
  g_bytes_unref(plain);
  g_bytes_unref(compressed);
}

/* The first byte's low bits 0b111: final block of the reserved type 3. */
static void test_bad_data_is_an_error_that_sticks(void) {
  static const uint8_t bad[] = {0x07, 0x00, 0x00, 0x00};
  deflate_stream *s = deflate_stream_new();
  uint8_t room[64];
  const uint8_t *in = bad;
  size_t in_len = sizeof bad, made = 0;
  g_assert_cmpint(deflate_stream_inflate(s, &in, &in_len, room, sizeof room, &made),
                  ==, DEFLATE_STREAM_ERROR);
  g_assert_cmpuint(made, ==, 0);
  g_assert_cmpstr(deflate_stream_error(s), ==, "invalid deflate block");
  in = bad;
  in_len = sizeof bad;
  g_assert_cmpint(deflate_stream_inflate(s, &in, &in_len, room, sizeof room, &made),
                  ==, DEFLATE_STREAM_ERROR);
  deflate_stream_free(s);
}

/* What follows the final block (a ZIP's data descriptor) is not decoded:
 * the stream ends with the same bytes and CRC, without an error. */
static void test_bytes_after_the_end_are_not_decoded(void) {
  GBytes *plain = noise(5000, 3);
  GBytes *compressed = raw_deflate(plain);
  GBytes *tail = g_bytes_new("TRAILER!", 8);
  GByteArray *both = g_byte_array_new();
  g_byte_array_append(both, g_bytes_get_data(compressed, NULL),
                      (guint)g_bytes_get_size(compressed));
  g_byte_array_append(both, g_bytes_get_data(tail, NULL), 8);
  GBytes *input = g_byte_array_free_to_bytes(both);
  deflate_stream *s = deflate_stream_new();
  deflate_stream_status last;
  size_t left_over;
  GByteArray *out = inflate_in_pieces(s, input, 1 << 20, 1 << 20, &last, &left_over);
  g_assert_cmpint(last, ==, DEFLATE_STREAM_END);
  g_assert_cmpmem(out->data, out->len, g_bytes_get_data(plain, NULL),
                  g_bytes_get_size(plain));
  g_assert_cmpuint(deflate_stream_crc32(s), ==, zlib_crc32_of(plain));
  g_assert_null(deflate_stream_error(s));
  g_assert_cmpuint(left_over, <=, 8);
  g_byte_array_unref(out);
  deflate_stream_free(s);
  g_bytes_unref(input);
  g_bytes_unref(tail);
  g_bytes_unref(plain);
  g_bytes_unref(compressed);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/deflate-stream/inflates-to-zlibs-bytes-and-crc-however-it-is-cut",
                  test_inflates_to_zlibs_bytes_and_crc_however_it_is_cut);
  g_test_add_func("/deflate-stream/an-empty-stream-ends-with-nothing-and-crc-zero",
                  test_an_empty_stream_ends_with_nothing_and_crc_zero);
  g_test_add_func("/deflate-stream/a-cut-stream-wants-more-and-keeps-what-it-made",
                  test_a_cut_stream_wants_more_and_keeps_what_it_made);
  g_test_add_func("/deflate-stream/bad-data-is-an-error-that-sticks",
                  test_bad_data_is_an_error_that_sticks);
  g_test_add_func("/deflate-stream/bytes-after-the-end-are-not-decoded",
                  test_bytes_after_the_end_are_not_decoded);
  return g_test_run();
}
