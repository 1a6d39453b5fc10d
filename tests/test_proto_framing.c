/*
 * Streaming framing of proto traces: packets found across any chunking,
 * unknown top-level fields skipped, and every kind of damage reported with
 * the byte offset of the field that carries it, keeping the packets before.
 */
#include <glib.h>
#include <string.h>

#include "proto_framing.h"

typedef struct framed {
  GString *packets; /* "offset+len:hexbytes\n" per packet */
  bool ok;
  bool failed;
  uint64_t error_offset;
  char *error;
  size_t stop_after; /* 0: never ask to stop */
} framed;

static bool record(void *ctx, const uint8_t *data, size_t len, uint64_t offset) {
  framed *f = ctx;
  g_string_append_printf(f->packets, "%" G_GUINT64_FORMAT "+%zu:", offset, len);
  for (size_t i = 0; i < len; i++)
    g_string_append_printf(f->packets, "%02x", data[i]);
  g_string_append_c(f->packets, '\n');
  return f->stop_after == 0 || --f->stop_after > 0;
}

static framed frame(const uint8_t *data, size_t len, size_t chunk, size_t max_packet) {
  framed f = {.packets = g_string_new(NULL)};
  proto_framer framer;
  proto_framer_init(&framer, max_packet, record, &f);
  f.ok = true;
  for (size_t at = 0; at < len && f.ok; at += chunk)
    f.ok = proto_framer_feed(&framer, data + at, MIN(chunk, len - at));
  if (f.ok)
    f.ok = proto_framer_finish(&framer);
  f.failed = framer.failed;
  f.error_offset = framer.error_offset;
  f.error = g_strdup(framer.error);
  proto_framer_clear(&framer);
  return f;
}

static void framed_clear(framed *f) {
  g_string_free(f->packets, TRUE);
  g_free(f->error);
}

/* Frames `data` whole and in chunks of 1, 2, 3 and 7 bytes; asserts every
 * chunking gives the same packets and outcome; returns the whole run. */
static framed frame_every_way(const uint8_t *data, size_t len, size_t max_packet) {
  framed whole = frame(data, len, len ? len : 1, max_packet);
  const size_t chunks[] = {1, 2, 3, 7};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    framed cut = frame(data, len, chunks[i], max_packet);
    g_assert_cmpstr(cut.packets->str, ==, whole.packets->str);
    g_assert_cmpint(cut.ok, ==, whole.ok);
    g_assert_cmpint(cut.failed, ==, whole.failed);
    g_assert_cmpuint(cut.error_offset, ==, whole.error_offset);
    g_assert_cmpstr(cut.error, ==, whole.error);
    framed_clear(&cut);
  }
  return whole;
}

static void test_packets_are_found_across_any_chunking(void) {
  /* Two packets; the second's length needs a two-byte varint (130). */
  GByteArray *bytes = g_byte_array_new();
  const uint8_t first[] = {0x0a, 0x03, 0x08, 0x96, 0x01};
  g_byte_array_append(bytes, first, sizeof first);
  const uint8_t second_head[] = {0x0a, 0x82, 0x01};
  g_byte_array_append(bytes, second_head, sizeof second_head);
  for (int i = 0; i < 130; i++) {
    uint8_t b = (uint8_t)(i & 0x7f);
    g_byte_array_append(bytes, &b, 1);
  }
  framed f = frame_every_way(bytes->data, bytes->len, PROTO_DEFAULT_MAX_PACKET);
  g_assert_true(f.ok);
  g_auto(GStrv) lines = g_strsplit(f.packets->str, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), ==, 3); /* two packets and "" */
  g_assert_cmpstr(lines[0], ==, "2+3:089601");
  g_assert_true(g_str_has_prefix(lines[1], "8+130:00010203"));
  framed_clear(&f);
  g_byte_array_free(bytes, TRUE);
}

static void test_unknown_top_level_fields_are_skipped(void) {
  const uint8_t data[] = {
      0x10, 0xff, 0x01,                                     /* field 2, varint */
      0x19, 1, 2, 3, 4, 5, 6, 7, 8,                         /* field 3, fixed64 */
      0x22, 0x02, 0x0a, 0x01,                               /* field 4, bytes that look like a packet */
      0x2d, 1, 2, 3, 4,                                     /* field 5, fixed32 */
      0x0a, 0x00,                                           /* empty packet: nothing */
      0x0a, 0x02, 0x50, 0x07,                               /* the one packet */
  };
  framed f = frame_every_way(data, sizeof data, PROTO_DEFAULT_MAX_PACKET);
  g_assert_true(f.ok);
  g_assert_cmpstr(f.packets->str, ==, "25+2:5007\n");
  framed_clear(&f);
}

static void test_bad_varint_is_an_error_at_its_field(void) {
  /* A good packet, then a tag varint of 11 continuation bytes. */
  uint8_t data[4 + 11] = {0x0a, 0x02, 0x08, 0x01};
  memset(data + 4, 0xff, 11);
  framed f = frame_every_way(data, sizeof data, PROTO_DEFAULT_MAX_PACKET);
  g_assert_false(f.ok);
  g_assert_true(f.failed);
  g_assert_cmpuint(f.error_offset, ==, 4);
  g_assert_cmpstr(f.error, ==, "malformed varint in field tag");
  g_assert_cmpstr(f.packets->str, ==, "2+2:0801\n");
  framed_clear(&f);

  /* A packet length varint of 10 continuation bytes. */
  uint8_t length[1 + 11] = {0x0a};
  memset(length + 1, 0x80, 11);
  f = frame_every_way(length, sizeof length, PROTO_DEFAULT_MAX_PACKET);
  g_assert_true(f.failed);
  g_assert_cmpuint(f.error_offset, ==, 0);
  g_assert_cmpstr(f.error, ==, "malformed varint in field length");
  framed_clear(&f);
}

static void test_oversized_length_is_an_error_not_an_allocation(void) {
  /* Claims 2^40 bytes: refused before any buffering. */
  const uint8_t huge[] = {0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x00};
  framed f = frame_every_way(huge, sizeof huge, PROTO_DEFAULT_MAX_PACKET);
  g_assert_true(f.failed);
  g_assert_cmpuint(f.error_offset, ==, 0);
  g_assert_cmpstr(f.error, ==,
                  "packet claims 1099511627776 bytes, more than the limit of 67108864");
  framed_clear(&f);

  /* The limit is the framer's: a 5-byte packet against a limit of 4. */
  const uint8_t small[] = {0x0a, 0x01, 0x00, 0x0a, 0x05, 1, 2, 3, 4, 5};
  f = frame_every_way(small, sizeof small, 4);
  g_assert_true(f.failed);
  g_assert_cmpuint(f.error_offset, ==, 3);
  g_assert_cmpstr(f.packets->str, ==, "2+1:00\n");
  framed_clear(&f);
}

static void test_truncated_packet_is_an_error_at_the_end(void) {
  const uint8_t data[] = {0x0a, 0x01, 0x00, 0x0a, 0x09, 1, 2, 3};
  framed f = frame_every_way(data, sizeof data, PROTO_DEFAULT_MAX_PACKET);
  g_assert_false(f.ok);
  g_assert_cmpuint(f.error_offset, ==, 3);
  g_assert_cmpstr(f.error, ==, "truncated packet: it claims 9 bytes, the file ends after 3");
  g_assert_cmpstr(f.packets->str, ==, "2+1:00\n");
  framed_clear(&f);

  /* Cut inside the length varint, and inside an unknown field. */
  const uint8_t in_length[] = {0x0a, 0x81};
  f = frame_every_way(in_length, sizeof in_length, PROTO_DEFAULT_MAX_PACKET);
  g_assert_cmpstr(f.error, ==, "file ends inside a varint of field 1");
  g_assert_cmpuint(f.error_offset, ==, 0);
  framed_clear(&f);
  const uint8_t in_skip[] = {0x0a, 0x01, 0x00, 0x22, 0x04, 0x00};
  f = frame_every_way(in_skip, sizeof in_skip, PROTO_DEFAULT_MAX_PACKET);
  g_assert_cmpstr(f.error, ==, "truncated field 4: 3 bytes missing at the end of the file");
  g_assert_cmpuint(f.error_offset, ==, 3);
  framed_clear(&f);
  const uint8_t in_tag[] = {0x0a, 0x01, 0x00, 0x80};
  f = frame_every_way(in_tag, sizeof in_tag, PROTO_DEFAULT_MAX_PACKET);
  g_assert_cmpstr(f.error, ==, "file ends inside a field tag");
  g_assert_cmpuint(f.error_offset, ==, 3);
  framed_clear(&f);
}

static void test_wrong_wire_types_are_errors(void) {
  /* Field 1 as a varint. */
  const uint8_t varint_packet[] = {0x0a, 0x01, 0x00, 0x08, 0x01};
  framed f = frame_every_way(varint_packet, sizeof varint_packet, PROTO_DEFAULT_MAX_PACKET);
  g_assert_true(f.failed);
  g_assert_cmpuint(f.error_offset, ==, 3);
  g_assert_cmpstr(f.error, ==, "packet field has wire type 0, expected length-delimited (2)");
  framed_clear(&f);
  /* A group (wire type 3) of field 2, and field number 0. */
  const uint8_t group[] = {0x13};
  f = frame_every_way(group, sizeof group, PROTO_DEFAULT_MAX_PACKET);
  g_assert_cmpstr(f.error, ==, "top-level field 2 has unsupported wire type 3");
  g_assert_cmpuint(f.error_offset, ==, 0);
  framed_clear(&f);
  const uint8_t zero[] = {0x02, 0x00};
  f = frame_every_way(zero, sizeof zero, PROTO_DEFAULT_MAX_PACKET);
  g_assert_cmpstr(f.error, ==, "invalid top-level field number 0");
  framed_clear(&f);
}

static void test_the_callback_can_stop_framing(void) {
  const uint8_t data[] = {0x0a, 0x01, 0x01, 0x0a, 0x01, 0x02, 0x0a, 0x01, 0x03};
  framed f = {.packets = g_string_new(NULL), .stop_after = 2};
  proto_framer framer;
  proto_framer_init(&framer, PROTO_DEFAULT_MAX_PACKET, record, &f);
  g_assert_false(proto_framer_feed(&framer, data, sizeof data));
  g_assert_false(framer.failed);
  g_assert_false(proto_framer_feed(&framer, data, sizeof data));
  g_assert_false(proto_framer_finish(&framer));
  g_assert_cmpstr(f.packets->str, ==, "2+1:01\n5+1:02\n");
  proto_framer_clear(&framer);
  framed_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/proto/framing/packets-are-found-across-any-chunking",
                  test_packets_are_found_across_any_chunking);
  g_test_add_func("/proto/framing/unknown-top-level-fields-are-skipped",
                  test_unknown_top_level_fields_are_skipped);
  g_test_add_func("/proto/framing/bad-varint-is-an-error-at-its-field",
                  test_bad_varint_is_an_error_at_its_field);
  g_test_add_func("/proto/framing/oversized-length-is-an-error-not-an-allocation",
                  test_oversized_length_is_an_error_not_an_allocation);
  g_test_add_func("/proto/framing/truncated-packet-is-an-error-at-the-end",
                  test_truncated_packet_is_an_error_at_the_end);
  g_test_add_func("/proto/framing/wrong-wire-types-are-errors",
                  test_wrong_wire_types_are_errors);
  g_test_add_func("/proto/framing/the-callback-can-stop-framing",
                  test_the_callback_can_stop_framing);
  return g_test_run();
}
