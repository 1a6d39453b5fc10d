/*
 * The proto reader on input that is not a clean run of packets, driven
 * through its descriptor with the transcript-writing fake host
 * (tests/support/fake_host.h): damage inside packets and in the framing
 * (the error names the offset, the events before it are kept), packets
 * wrapped in zlib and zstd compression (read like the plain ones; damage
 * names the wrapper), the import logs of dropped packets, and random
 * damage. The compressed wrappers are here because their damage and
 * their import logs are built with the same wrapping helpers. Well-formed
 * packets: test_proto_reader.c.
 */
#include <glib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "fake_host.h"
#include "proto_framing.h"
#include "proto_run.h"
#include "proto_wire_encode.h"

/* --- damage ------------------------------------------------------------------ */

/* A packet {timestamp: 5, track_event {type: INSTANT, track_uuid: 9,
 * name: "a"}}, framed: 14 bytes. uuid 9 is never described, so the event
 * waits for a descriptor until the file ends or breaks. */
static const uint8_t good_packet[] = {0x0a, 0x0c, 0x40, 0x05, 0x5a, 0x08, 0x48, 0x03,
                                      0x58, 0x09, 0xba, 0x01, 0x01, 'a'};

/* Runs good_packet followed by `bad` (a framed packet), in every chunking,
 * and asserts the error, its offset, and that the good event was kept. */
static void assert_damage(const uint8_t *bad, size_t bad_len, int64_t offset,
                          const char *message) {
  GByteArray *bytes = g_byte_array_new();
  g_byte_array_append(bytes, good_packet, sizeof good_packet);
  g_byte_array_append(bytes, bad, (guint)bad_len);
  const size_t chunks[] = {bytes->len, 1, 5};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    fake_host *fake = run_bytes(bytes->data, bytes->len, chunks[i], TM_ERROR);
    int64_t at;
    const char *error = fake_host_borrow_error(fake, &at);
    g_assert_cmpstr(error, ==, message);
    g_assert_cmpint(at, ==, offset);
    fake_host_assert_lines(fake,
                           "slot T1 = global_merged_track_event name=\"a\" on host cookie=9\n"
                           "slice_complete T1 private ts=5 name=a dur=0\n");
    fake_host_free(fake);
  }
  g_byte_array_free(bytes, TRUE);
}

static void test_damage_inside_packets(void) {
  /* The second packet's payload starts at byte 16. */
  const uint8_t truncated_field[] = {0x0a, 0x03, 0x5a, 0x05, 0x48};
  assert_damage(truncated_field, sizeof truncated_field, 16,
                "packet 2: field reaches past the end of its message");
  const uint8_t bad_varint[] = {0x0a, 0x0b, 0x40, 0xff, 0xff, 0xff, 0xff, 0xff,
                                0xff, 0xff, 0xff, 0xff, 0xff};
  assert_damage(bad_varint, sizeof bad_varint, 16, "packet 2: malformed varint");
  /* {chrome_events {metadata {name: (5 bytes, none there)}}}: the bundle
   * decodes, its metadata entry does not. */
  const uint8_t chrome_metadata[] = {0x0a, 0x06, 0x2a, 0x04, 0x12, 0x02, 0x0a, 0x05};
  assert_damage(chrome_metadata, sizeof chrome_metadata, 16,
                "packet 2: malformed chrome_events");
  const uint8_t group[] = {0x0a, 0x01, 0x0b};
  assert_damage(group, sizeof group, 16, "packet 2: unsupported wire type");
  const uint8_t bad_event[] = {0x0a, 0x05, 0x5a, 0x03, 0x48, 0xff, 0xff};
  assert_damage(bad_event, sizeof bad_event, 16, "packet 2: malformed track_event");
  /* A legacy event whose phase is a fixed32: {timestamp: 5, track_event
   * {legacy_event {phase (fixed32)}}}. */
  const uint8_t bad_legacy[] = {0x0a, 0x0b, 0x40, 0x05, 0x5a, 0x07, 0x32,
                                0x05, 0x15, 0x42, 0x00, 0x00, 0x00};
  assert_damage(bad_legacy, sizeof bad_legacy, 16, "packet 2: malformed track_event");
  /* A clock snapshot whose clock entry is cut short. */
  const uint8_t bad_snapshot[] = {0x0a, 0x04, 0x32, 0x02, 0x0a, 0x05};
  assert_damage(bad_snapshot, sizeof bad_snapshot, 16, "packet 2: malformed clock_snapshot");
  /* Sequence 1 cleared, interned frames (6) as a varint. */
  const uint8_t frame_as_varint[] = {0x0a, 0x08, 0x50, 0x01, 0x68, 0x01,
                                     0x62, 0x02, 0x30, 0x05};
  assert_damage(frame_as_varint, sizeof frame_as_varint, 16, "packet 2: malformed interned_data");
  /* A callstack (7) whose packed frame_ids end inside a varint. */
  const uint8_t cut_frame_ids[] = {0x0a, 0x0d, 0x50, 0x01, 0x68, 0x01, 0x62, 0x07,
                                   0x3a, 0x05, 0x08, 0x01, 0x12, 0x01, 0xff};
  assert_damage(cut_frame_ids, sizeof cut_frame_ids, 16, "packet 2: malformed interned_data");
  /* A mapping (19) whose path_string_ids (7) is a fixed64. */
  const uint8_t bad_mapping[] = {0x0a, 0x14, 0x50, 0x01, 0x68, 0x01, 0x62, 0x0e, 0x9a, 0x01,
                                 0x0b, 0x08, 0x01, 0x39, 1, 2, 3, 4, 5, 6, 7, 8};
  assert_damage(bad_mapping, sizeof bad_mapping, 16, "packet 2: malformed interned_data");
  /* A perf_sample (66) whose cpu is length-delimited. */
  const uint8_t bad_sample[] = {0x0a, 0x07, 0x40, 0x05, 0x92, 0x04, 0x02, 0x0a, 0x00};
  assert_damage(bad_sample, sizeof bad_sample, 16, "packet 2: malformed perf_sample");
  /* A TrackEvent whose inline callstack (55) has a frame cut short. */
  const uint8_t bad_inline_stack[] = {0x0a, 0x0d, 0x40, 0x05, 0x5a, 0x09, 0x48, 0x03, 0x58,
                                      0x09, 0xba, 0x03, 0x02, 0x0a, 0x05};
  assert_damage(bad_inline_stack, sizeof bad_inline_stack, 16, "packet 2: malformed track_event");
  const uint8_t needs_state_without_sequence[] = {0x0a, 0x02, 0x68, 0x02};
  assert_damage(needs_state_without_sequence, sizeof needs_state_without_sequence, 16,
                "packet 2 needs incremental state but has no sequence id");
}

/* A known TracePacket field of another wire type than the schema's does
 * not decode: the packet is dropped, counted and logged at its offset, and
 * the packets around it are read. Neither a length-delimited timestamp
 * (which would read as its length) nor a varint track_event is taken. */
static void test_wrong_wire_type_drops_the_packet(void) {
  /* {timestamp: "xy" (length-delimited), track_event {INSTANT, uuid 9,
   * name "c"}}, then {track_event: 1 (a varint)}, then good_packet named
   * "b". */
  const uint8_t ld_timestamp[] = {0x0a, 0x0e, 0x42, 0x02, 'x',  'y',  0x5a, 0x08,
                                  0x48, 0x03, 0x58, 0x09, 0xba, 0x01, 0x01, 'c'};
  const uint8_t varint_event[] = {0x0a, 0x02, 0x58, 0x01};
  uint8_t good_b[sizeof good_packet];
  memcpy(good_b, good_packet, sizeof good_packet);
  good_b[sizeof good_b - 1] = 'b';
  GByteArray *bytes = g_byte_array_new();
  g_byte_array_append(bytes, good_packet, sizeof good_packet);
  g_byte_array_append(bytes, ld_timestamp, sizeof ld_timestamp);
  g_byte_array_append(bytes, varint_event, sizeof varint_event);
  g_byte_array_append(bytes, good_b, sizeof good_b);
  fake_host *fake = run_bytes(bytes->data, bytes->len, bytes->len, TM_OK);
  g_assert_cmpint(fake_host_stat(fake, "proto_packet_wrong_wire_type"), ==, 2);
  /* Logged at each packet's bytes: good_packet is 14 bytes and each
   * packet's header 2, so 14 + 2 and 14 + 16 + 2. */
  g_assert_cmpstr(fake_host_borrow_import_logs(fake), ==,
                  "proto_packet_wrong_wire_type at=16 message proto_message field "
                  "wire_type expected_wire_type\n"
                  "proto_packet_wrong_wire_type at=32 message proto_message field "
                  "wire_type expected_wire_type\n");
  fake_host_assert_lines(fake, "slot T1 = global_merged_track_event name=\"a\" on host cookie=9\n"
                               "slice_complete T1 private ts=5 name=a dur=0\n"
                               "slice_complete T1 private ts=5 name=b dur=0\n");
  fake_host_free(fake);
  g_byte_array_free(bytes, TRUE);
}

/* Every TracePacket field the reader reads, with its type in Perfetto's
 * trace_packet.proto (protos/perfetto/trace/trace_packet.proto): each one
 * of the other wire type drops its packet, counted once, whatever field
 * it is, and the packet after them all is read. The reader checks each
 * field's type where it reads the field, so every field is tried. */
static void test_every_known_field_checks_its_wire_type(void) {
  static const struct {
    uint32_t number;
    bool varint; /* else length-delimited */
  } fields[] = {
      {8, true},   /* timestamp */
      {58, true},  /* timestamp_clock_id */
      {10, true},  /* trusted_packet_sequence_id */
      {13, true},  /* sequence_flags */
      {41, true},  /* incremental_state_cleared */
      {42, true},  /* previous_packet_dropped */
      {87, true},  /* first_packet_on_sequence */
      {98, true},  /* machine_id */
      {59, false}, /* trace_packet_defaults */
      {12, false}, /* interned_data */
      {1, false},  {2, false},  {5, false},  {6, false},  {7, false},  {9, false},
      {11, false}, {33, false}, {34, false}, {35, false}, {39, false}, {43, false},
      {44, false}, {45, false}, {46, false}, {47, false}, {50, false}, {60, false},
      {66, false}, {69, false}, {76, false}, {89, false}, {107, false}, {133, false},
  };
  const size_t n = sizeof fields / sizeof fields[0];
  GByteArray *file = g_byte_array_new();
  for (size_t i = 0; i < n; i++) {
    GByteArray *packet = g_byte_array_new();
    if (fields[i].varint) { /* as a one-byte string */
      wire_put_varint(packet, (uint64_t)fields[i].number << 3 | 2);
      wire_put_varint(packet, 1);
      g_byte_array_append(packet, (const uint8_t *)"x", 1);
    } else { /* as the varint 1 */
      wire_put_varint(packet, (uint64_t)fields[i].number << 3 | 0);
      wire_put_varint(packet, 1);
    }
    wire_put_varint(file, 0x0a);
    wire_put_varint(file, packet->len);
    g_byte_array_append(file, packet->data, packet->len);
    g_byte_array_free(packet, TRUE);
  }
  g_byte_array_append(file, good_packet, sizeof good_packet);
  fake_host *fake = run_bytes(file->data, file->len, file->len, TM_OK);
  g_assert_cmpint(fake_host_stat(fake, "proto_packet_wrong_wire_type"), ==, (int64_t)n);
  fake_host_assert_lines(fake, "slot T1 = global_merged_track_event name=\"a\" on host cookie=9\n"
                               "slice_complete T1 private ts=5 name=a dur=0\n");
  fake_host_free(fake);
  g_byte_array_free(file, TRUE);
}

static void test_damage_in_framing(void) {
  const uint8_t oversized[] = {0x0a, 0x80, 0x80, 0x80, 0x80, 0x10};
  assert_damage(oversized, sizeof oversized, 14,
                "after packet 1: packet claims 4294967296 bytes, more than the limit of 67108864");
  const uint8_t truncated[] = {0x0a, 0x09, 0x40};
  assert_damage(truncated, sizeof truncated, 14,
                "after packet 1: truncated packet: it claims 9 bytes, the file ends after 1");
  const uint8_t wrong_wire_type[] = {0x08, 0x01};
  assert_damage(wrong_wire_type, sizeof wrong_wire_type, 14,
                "after packet 1: packet field has wire type 0, expected length-delimited (2)");
  const uint8_t bad_varint[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                0xff, 0xff, 0x01};
  assert_damage(bad_varint, sizeof bad_varint, 14,
                "after packet 1: malformed varint in field length");
}

/* Events wait for their track's descriptor only up to a bound: beyond it
 * they are placed on the uuid's global track (named after the first event,
 * "a", as an undescribed track is), and so are the later ones, descriptor
 * or not. Nothing is dropped. */
static void test_waiting_events_are_bounded(void) {
  const size_t n = 70000;
  GByteArray *file = g_byte_array_new();
  for (size_t i = 0; i < n; i++)
    g_byte_array_append(file, good_packet, sizeof good_packet);
  /* packet {track_descriptor {uuid: 9, name: "Lat"}} */
  const uint8_t descriptor[] = {0x0a, 0x0a, 0xe2, 0x03, 0x07, 0x08, 0x09,
                                0x12, 0x03, 'L', 'a', 't'};
  g_byte_array_append(file, descriptor, sizeof descriptor);
  g_byte_array_append(file, good_packet, sizeof good_packet);
  fake_host *fake = run_bytes(file->data, file->len, file->len, TM_OK);
  g_assert_cmpuint(fake_host_count_lines(fake, "slice_complete T1 private ts=5 name=a dur=0"),
                   ==, n + 1);
  g_assert_cmpuint(fake_host_count_lines(fake, "slot "), ==, 1);
  fake_host_assert_lines(fake, "slot T1 = global_merged_track_event name=\"a\" on host cookie=9\n");
  fake_host_free(fake);
  g_byte_array_free(file, TRUE);
}

/* --- compressed packets ---------------------------------------------------- */

typedef enum { ZLIB, ZSTD } codec;

/* `inner` compressed by `codec` (zstd: as `frames` concatenated frames,
 * the inner bytes split between them), halved when `cut`. */
static GByteArray *compress_with(codec c, const uint8_t *inner, size_t len, int frames,
                                 bool cut) {
  GByteArray *out = g_byte_array_new();
  if (c == ZLIB) {
    uLongf zlen = compressBound(len);
    g_byte_array_set_size(out, (guint)zlen);
    g_assert_cmpint(compress2(out->data, &zlen, inner, len, 6), ==, Z_OK);
    g_byte_array_set_size(out, (guint)zlen);
  } else {
    for (int i = 0; i < frames; i++) {
      size_t from = len * (size_t)i / (size_t)frames;
      size_t to = len * (size_t)(i + 1) / (size_t)frames;
      size_t at = out->len, bound = ZSTD_compressBound(to - from);
      g_byte_array_set_size(out, (guint)(at + bound));
      size_t n = ZSTD_compress(out->data + at, bound, inner + from, to - from, 3);
      g_assert_false(ZSTD_isError(n));
      g_byte_array_set_size(out, (guint)(at + n));
    }
  }
  if (cut)
    g_byte_array_set_size(out, out->len / 2);
  return out;
}

/* A file of one packet {compressed_packets (field 50) or
 * zstd_compressed_packets (field 133): `payload`}. */
static GByteArray *wrap_payload(codec c, const uint8_t *payload, size_t len) {
  GByteArray *packet = g_byte_array_new();
  const uint8_t zlib_tag[] = {0x92, 0x03}, zstd_tag[] = {0xaa, 0x08};
  g_byte_array_append(packet, c == ZLIB ? zlib_tag : zstd_tag, 2);
  wire_put_varint(packet, len);
  g_byte_array_append(packet, payload, (guint)len);
  GByteArray *file = g_byte_array_new();
  const uint8_t packet_tag = 0x0a;
  g_byte_array_append(file, &packet_tag, 1);
  wire_put_varint(file, packet->len);
  g_byte_array_append(file, packet->data, packet->len);
  g_byte_array_free(packet, TRUE);
  return file;
}

static GByteArray *wrap_compressed_as(codec c, const uint8_t *inner, size_t len, int frames,
                                      bool cut) {
  GByteArray *z = compress_with(c, inner, len, frames, cut);
  GByteArray *file = wrap_payload(c, z->data, z->len);
  g_byte_array_free(z, TRUE);
  return file;
}

/* A file of one packet {compressed_packets: zlib(inner)} (field 50). */
static GByteArray *wrap_compressed(const uint8_t *inner, size_t len, bool cut) {
  return wrap_compressed_as(ZLIB, inner, len, 1, cut);
}

/* `file`, whole and byte by byte, gives the transcript of the plain
 * track_events fixture (whose lines test_proto_reader.c states). */
static void assert_reads_like_track_events(GByteArray *file) {
  fake_host *plain = run_fixture("track_events");
  const size_t chunks[] = {file->len, 1};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    fake_host *fake = run_bytes(file->data, file->len, chunks[i], TM_OK);
    g_assert_cmpstr(fake_host_borrow_transcript(fake), ==, fake_host_borrow_transcript(plain));
    fake_host_free(fake);
  }
  fake_host_free(plain);
}

static void test_compressed_packets_read_like_plain_ones(void) {
  g_autoptr(GBytes) bytes = read_fixture("track_events");
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  GByteArray *file = wrap_compressed(data, len, false);
  assert_reads_like_track_events(file);
  g_byte_array_free(file, TRUE);
}

/* One frame, and three frames that cut packets apart: the frames are one
 * stream, framed across their boundaries. */
static void test_zstd_compressed_packets_read_like_plain_ones(void) {
  g_autoptr(GBytes) bytes = read_fixture("track_events");
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  const int frames[] = {1, 3};
  for (size_t i = 0; i < G_N_ELEMENTS(frames); i++) {
    GByteArray *file = wrap_compressed_as(ZSTD, data, len, frames[i], false);
    assert_reads_like_track_events(file);
    g_byte_array_free(file, TRUE);
  }
}

/* good_packet, then `wrapped`: the error names the wrapper's packet and
 * payload offset, and good_packet's event is kept. */
static void assert_wrapper_damage(GByteArray *wrapped, const char *message) {
  GByteArray *file = g_byte_array_new();
  g_byte_array_append(file, good_packet, sizeof good_packet);
  g_byte_array_append(file, wrapped->data, wrapped->len);
  const size_t chunks[] = {file->len, 1};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    fake_host *fake = run_bytes(file->data, file->len, chunks[i], TM_ERROR);
    int64_t at;
    g_assert_cmpstr(fake_host_borrow_error(fake, &at), ==, message);
    /* The wrapper's payload starts after good_packet, its tag and length. */
    g_assert_cmpint(at, ==,
                    (int64_t)(sizeof good_packet + 1 + (wrapped->data[1] & 0x80 ? 2 : 1)));
    fake_host_assert_lines(fake, "slice_complete T1 private ts=5 name=a dur=0\n");
    fake_host_free(fake);
  }
  g_byte_array_free(file, TRUE);
}

static void assert_compressed_damage_as(codec c, const uint8_t *inner, size_t len, bool cut,
                                        const char *message) {
  GByteArray *wrapped = wrap_compressed_as(c, inner, len, 1, cut);
  assert_wrapper_damage(wrapped, message);
  g_byte_array_free(wrapped, TRUE);
}

static void assert_compressed_damage(const uint8_t *inner, size_t len, bool cut,
                                     const char *message) {
  assert_compressed_damage_as(ZLIB, inner, len, cut, message);
}

static void test_compressed_packets_damage(void) {
  g_autoptr(GBytes) bytes = read_fixture("track_events");
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  assert_compressed_damage(data, len, true,
                           "packet 2: compressed_packets: the zlib stream is cut short");
  /* Inflated bytes that frame badly: a packet claiming 5 bytes, 1 there. */
  const uint8_t bad_inner[] = {0x0a, 0x05, 0x00};
  assert_compressed_damage(bad_inner, sizeof bad_inner, false,
                           "packet 2: compressed_packets: at decompressed byte 0: truncated "
                           "packet: it claims 5 bytes, the file ends after 1");
  /* A wrapper inside a wrapper. */
  const uint8_t nested[] = {0x0a, 0x03, 0x92, 0x03, 0x00};
  assert_compressed_damage(nested, sizeof nested, false,
                           "packet 2: compressed_packets: nested inside another "
                           "compressed packet wrapper");
  /* Bytes that are no zlib stream at all. */
  GByteArray *file = g_byte_array_new();
  g_byte_array_append(file, good_packet, sizeof good_packet);
  const uint8_t not_zlib[] = {0x0a, 0x05, 0x92, 0x03, 0x02, 0x41, 0x42};
  g_byte_array_append(file, not_zlib, sizeof not_zlib);
  fake_host *fake = run_bytes(file->data, file->len, file->len, TM_ERROR);
  int64_t at;
  g_assert_cmpstr(fake_host_borrow_error(fake, &at), ==,
                  "packet 2: compressed_packets: incorrect header check");
  g_assert_cmpint(at, ==, 16);
  fake_host_free(fake);
  g_byte_array_free(file, TRUE);
}

static void test_zstd_compressed_packets_damage(void) {
  g_autoptr(GBytes) bytes = read_fixture("track_events");
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  assert_compressed_damage_as(ZSTD, data, len, true,
                              "packet 2: zstd_compressed_packets: the zstd stream is cut short");
  const uint8_t bad_inner[] = {0x0a, 0x05, 0x00};
  assert_compressed_damage_as(ZSTD, bad_inner, sizeof bad_inner, false,
                              "packet 2: zstd_compressed_packets: at decompressed byte 0: "
                              "truncated packet: it claims 5 bytes, the file ends after 1");
  /* Decompressed packets are bounded like the file's: one that claims
   * more than the limit fails before any of it is buffered. */
  GByteArray *huge = g_byte_array_new();
  const uint8_t packet_tag = 0x0a;
  g_byte_array_append(huge, &packet_tag, 1);
  wire_put_varint(huge, PROTO_DEFAULT_MAX_PACKET + 1);
  g_autofree char *too_large = g_strdup_printf(
      "packet 2: zstd_compressed_packets: at decompressed byte 0: packet claims %zu bytes, "
      "more than the limit of %zu", PROTO_DEFAULT_MAX_PACKET + 1, PROTO_DEFAULT_MAX_PACKET);
  assert_compressed_damage_as(ZSTD, huge->data, huge->len, false, too_large);
  g_byte_array_free(huge, TRUE);
  /* zstd inside zlib and zlib inside zstd. */
  const uint8_t zstd_wrapper[] = {0x0a, 0x03, 0xaa, 0x08, 0x00};
  assert_compressed_damage(zstd_wrapper, sizeof zstd_wrapper, false,
                           "packet 2: zstd_compressed_packets: nested inside another "
                           "compressed packet wrapper");
  const uint8_t zlib_wrapper[] = {0x0a, 0x03, 0x92, 0x03, 0x00};
  assert_compressed_damage_as(ZSTD, zlib_wrapper, sizeof zlib_wrapper, false,
                              "packet 2: compressed_packets: nested inside another "
                              "compressed packet wrapper");
  /* Bytes that are no zstd frame; an empty payload; a frame whose
   * checksum does not match its content. */
  const uint8_t not_zstd[] = {0x41, 0x42};
  GByteArray *wrapped = wrap_payload(ZSTD, not_zstd, sizeof not_zstd);
  assert_wrapper_damage(wrapped, "packet 2: zstd_compressed_packets: Unknown frame descriptor");
  g_byte_array_free(wrapped, TRUE);
  wrapped = wrap_payload(ZSTD, not_zstd, 0);
  assert_wrapper_damage(wrapped, "packet 2: zstd_compressed_packets: the zstd stream is cut short");
  g_byte_array_free(wrapped, TRUE);
  /* A frame with a content checksum (its last 4 bytes), the last flipped. */
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  g_assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)));
  size_t bound = ZSTD_compressBound(len);
  uint8_t *z = g_malloc(bound);
  size_t zlen = ZSTD_compress2(cctx, z, bound, data, len);
  g_assert_false(ZSTD_isError(zlen));
  ZSTD_freeCCtx(cctx);
  z[zlen - 1] ^= 0xff;
  wrapped = wrap_payload(ZSTD, z, zlen);
  g_free(z);
  GByteArray *file = g_byte_array_new();
  g_byte_array_append(file, good_packet, sizeof good_packet);
  g_byte_array_append(file, wrapped->data, wrapped->len);
  fake_host *fake = run_bytes(file->data, file->len, file->len, TM_ERROR);
  g_assert_cmpstr(fake_host_borrow_error(fake, NULL), ==,
                  "packet 2: zstd_compressed_packets: Restored data doesn't match checksum");
  fake_host_free(fake);
  g_byte_array_free(file, TRUE);
  g_byte_array_free(wrapped, TRUE);
}

/* --- import logs -------------------------------------------------------------- */

/* The byte offset of packet `index` (0-based)'s payload in a framed file:
 * the test's own walk over tag 0x0a and a varint length. */
static int64_t packet_payload_offset(const uint8_t *data, size_t len, size_t index) {
  size_t at = 0;
  for (size_t i = 0;; i++) {
    g_assert_cmpuint(at, <, len);
    g_assert_cmpuint(data[at], ==, 0x0a);
    at++;
    uint64_t packet_len = 0;
    for (int shift = 0;; shift += 7) {
      g_assert_cmpuint(at, <, len);
      packet_len |= (uint64_t)(data[at] & 0x7f) << shift;
      if (!(data[at++] & 0x80))
        break;
    }
    if (i == index)
      return (int64_t)at;
    at += packet_len;
  }
}

/* Runs fixture `name` and asserts its import logs: `drops` lists (stat,
 * packet index) pairs in order. */
typedef struct logged_drop {
  const char *stat;
  size_t packet;
} logged_drop;

static void assert_fixture_logs(const char *name, const logged_drop *drops, size_t n) {
  g_autoptr(GBytes) bytes = read_fixture(name);
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  g_autoptr(GString) expected = g_string_new(NULL);
  for (size_t i = 0; i < n; i++)
    g_string_append_printf(expected, "%s at=%" G_GINT64_FORMAT "\n", drops[i].stat,
                           packet_payload_offset(data, len, drops[i].packet));
  fake_host *logging = run_bytes(data, len, len, TM_OK);
  g_assert_cmpstr(fake_host_borrow_import_logs(logging), ==, expected->str);
  fake_host_free(logging);
}

/* Packet numbers from the fixtures' text (0-based, in file order). */
static void test_import_logs_name_the_dropping_packet(void) {
  /* interning: 2 needs state after a loss; 3 carries interned data while
   * the state is invalid; 4 needs state; 9 interns on sequence 0. */
  const logged_drop interning[] = {
      {"packet_skipped_seq_needs_incremental_state_invalid", 2},
      {"interned_data_skipped_incremental_state_invalid", 3},
      {"packet_skipped_seq_needs_incremental_state_invalid", 4},
      {"interned_data_missing_sequence_id", 9},
  };
  assert_fixture_logs("interning", interning, G_N_ELEMENTS(interning));
  /* legacy_events: 19 C, 20 S, 21 no legacy_event; 22 b without an id;
   * 23 a bind_id without a direction. */
  const logged_drop legacy[] = {
      {"proto_track_event_unsupported_type", 19},
      {"proto_track_event_unsupported_type", 20},
      {"proto_track_event_unsupported_type", 21},
      {"track_event_parser_errors", 22},
      {"flow_without_direction", 23},
  };
  assert_fixture_logs("legacy_events", legacy, G_N_ELEMENTS(legacy));
  /* legacy_flows: 19-21 flow v1 events without an unscoped id; 22 and 23
   * a pid and a tid override of 0; 30 a tid 0 default thread. */
  const logged_drop flows[] = {
      {"flow_invalid_id", 19},           {"flow_invalid_id", 20},
      {"flow_invalid_id", 21},           {"track_event_parser_errors", 22},
      {"track_event_parser_errors", 23}, {"track_event_parser_errors", 30},
  };
  assert_fixture_logs("legacy_flows", flows, G_N_ELEMENTS(flows));
}

/* A packet on a sequence-scoped clock no snapshot has related yet is logged
 * at its own packet with the clock, the sequence and a sentence. Fixture
 * clocks_before_snapshot: packets 1 (clock 64 of sequence 1), 2 (clock 65
 * of sequence 1) and 5 (clock 64 of sequence 2), as its text says. */
static void test_import_logs_of_packets_before_their_clock_snapshot(void) {
  g_autoptr(GBytes) bytes = read_fixture("clocks_before_snapshot");
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  const struct {
    size_t packet;
    unsigned clock, sequence;
  } drops[] = {{1, 64, 1}, {2, 65, 1}, {5, 64, 2}};
  g_autoptr(GString) expected = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(drops); i++)
    g_string_append_printf(
        expected,
        "clock_sync_failure_unknown_source_clock at=%" G_GINT64_FORMAT
        " clock_id=%u sequence_id=%u message=packet on sequence-scoped clock %u of"
        " sequence %u before any clock snapshot of it on that sequence; not placed\n",
        packet_payload_offset(data, len, drops[i].packet), drops[i].clock, drops[i].sequence,
        drops[i].clock, drops[i].sequence);
  fake_host *fake = run_bytes(data, len, len, TM_OK);
  g_assert_cmpstr(fake_host_borrow_import_log_values(fake), ==, expected->str);
  fake_host_free(fake);
}

/* An event that waited for its descriptor is logged at its own packet,
 * not the descriptor's: an instant on uuid 9 (good_packet, payload at 2),
 * then uuid 9 described as a counter track (payload at 16), where a slice
 * cannot go. Inside a compressed wrapper, a drop is logged at the
 * wrapper's payload. */
static void test_import_logs_of_waiting_and_compressed_packets(void) {
  GByteArray *file = g_byte_array_new();
  g_byte_array_append(file, good_packet, sizeof good_packet);
  /* packet {track_descriptor {uuid: 9, counter {}}} */
  const uint8_t counter_descriptor[] = {0x0a, 0x07, 0xe2, 0x03, 0x04, 0x08, 0x09, 0x42, 0x00};
  g_byte_array_append(file, counter_descriptor, sizeof counter_descriptor);
  fake_host *fake = run_bytes(file->data, file->len, file->len, TM_OK);
  g_assert_cmpstr(fake_host_borrow_import_logs(fake), ==, "track_event_parser_errors at=2\n");
  fake_host_free(fake);

  /* good_packet, then zstd{packet {timestamp: 5, track_event {name: "x"}}}
   * (no type, no legacy_event). */
  const uint8_t untyped[] = {0x0a, 0x08, 0x40, 0x05, 0x5a, 0x04, 0xba, 0x01, 0x01, 0x78};
  GByteArray *wrapped = wrap_compressed_as(ZSTD, untyped, sizeof untyped, 1, false);
  g_byte_array_set_size(file, 0);
  g_byte_array_append(file, good_packet, sizeof good_packet);
  g_byte_array_append(file, wrapped->data, wrapped->len);
  fake = run_bytes(file->data, file->len, file->len, TM_OK);
  g_autofree char *expected = g_strdup_printf(
      "proto_track_event_unsupported_type at=%zu\n",
      sizeof good_packet + 1 + (wrapped->data[1] & 0x80 ? 2 : 1));
  g_assert_cmpstr(fake_host_borrow_import_logs(fake), ==, expected);
  fake_host_free(fake);
  g_byte_array_free(wrapped, TRUE);
  g_byte_array_free(file, TRUE);
}

/* A packet {timestamp: 5, track_event {type: INSTANT, name: "n",
 * debug_annotations: `annotation`}} (framed). */
static GByteArray *event_with_annotation(const GByteArray *annotation) {
  GByteArray *event = g_byte_array_new();
  const uint8_t head[] = {0x48, 0x03, 0xba, 0x01, 0x01, 'n', 0x22};
  g_byte_array_append(event, head, sizeof head);
  wire_put_varint(event, annotation->len);
  g_byte_array_append(event, annotation->data, annotation->len);
  GByteArray *packet = g_byte_array_new();
  const uint8_t ts[] = {0x40, 0x05, 0x5a};
  g_byte_array_append(packet, ts, sizeof ts);
  wire_put_varint(packet, event->len);
  g_byte_array_append(packet, event->data, event->len);
  GByteArray *file = g_byte_array_new();
  const uint8_t tag = 0x0a;
  g_byte_array_append(file, &tag, 1);
  wire_put_varint(file, packet->len);
  g_byte_array_append(file, packet->data, packet->len);
  g_byte_array_free(event, TRUE);
  g_byte_array_free(packet, TRUE);
  return file;
}

/* 40 nested dicts {name: "d", int_value: 1, dict_entries: {...}}: args
 * down to the depth limit, the rest skipped and counted. */
static void test_deep_annotations_are_cut_and_counted(void) {
  GByteArray *annotation = g_byte_array_new();
  for (int level = 0; level < 40; level++) {
    GByteArray *outer = g_byte_array_new();
    const uint8_t named[] = {0x52, 0x01, 'd', 0x20, 0x01}; /* name "d", int 1 */
    g_byte_array_append(outer, named, sizeof named);
    if (annotation->len) {
      const uint8_t dict = 0x5a; /* field 11 */
      g_byte_array_append(outer, &dict, 1);
      wire_put_varint(outer, annotation->len);
      g_byte_array_append(outer, annotation->data, annotation->len);
    }
    g_byte_array_free(annotation, TRUE);
    annotation = outer;
  }
  GByteArray *file = event_with_annotation(annotation);
  fake_host *fake = run_bytes(file->data, file->len, file->len, TM_OK);
  g_assert_cmpint(fake_host_stat(fake, "proto_debug_annotation_too_deep"), ==, 1);
  /* Levels 0..32 have an arg each: debug.d, debug.d.d, ... */
  const char *transcript = fake_host_borrow_transcript(fake);
  GString *deepest = g_string_new("debug.d");
  for (int level = 1; level <= 32; level++)
    g_string_append(deepest, ".d");
  g_string_append(deepest, "=1}");
  g_assert_nonnull(strstr(transcript, deepest->str));
  g_string_free(deepest, TRUE);
  fake_host_free(fake);
  g_byte_array_free(file, TRUE);
  g_byte_array_free(annotation, TRUE);
}

static void test_malformed_annotation_is_damage(void) {
  /* double_value (field 5) sent as a varint. */
  GByteArray *annotation = g_byte_array_new();
  const uint8_t bad[] = {0x52, 0x01, 'x', 0x28, 0x01};
  g_byte_array_append(annotation, bad, sizeof bad);
  GByteArray *file = event_with_annotation(annotation);
  fake_host *fake = run_bytes(file->data, file->len, file->len, TM_ERROR);
  int64_t at;
  g_assert_cmpstr(fake_host_borrow_error(fake, &at), ==, "packet 1: malformed track_event");
  g_assert_cmpint(at, ==, 2);
  g_assert_cmpuint(fake_host_count_lines(fake, "slice_"), ==, 0);
  fake_host_free(fake);
  g_byte_array_free(file, TRUE);
  g_byte_array_free(annotation, TRUE);
}

/* Damaged copies of every fixture (bytes flipped, cut short) never crash
 * the reader (run under ASan/UBSan) and either import or report damage at
 * an offset inside the file. The seed is fixed so a failure reproduces. */
static void test_random_damage_is_reported_not_crashed_on(void) {
  const char *const names[] = {"clocks", "interning", "machines", "process_tree",
                               "system_info", "thread_time", "track_events",
                               "legacy_events", "legacy_flows"};
  GRand *rand = g_rand_new_with_seed(20261122);
  size_t damaged = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autoptr(GBytes) bytes = read_fixture(names[i]);
    gsize len;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    for (int round = 0; round < 400; round++) {
      uint8_t *copy = g_memdup2(data, len);
      size_t cut = len;
      int flips = g_rand_int_range(rand, 1, 4);
      for (int f = 0; f < flips; f++)
        copy[g_rand_int_range(rand, 0, (gint32)len)] ^= (uint8_t)g_rand_int_range(rand, 1, 256);
      if (g_rand_boolean(rand))
        cut = (size_t)g_rand_int_range(rand, 0, (gint32)len);
      fake_host *fake = fake_host_new();
      tm_status status = fake_host_run(fake, tracemerge_reader_entry(), copy, cut,
                                       (size_t)g_rand_int_range(rand, 1, 64));
      int64_t at;
      const char *error = fake_host_borrow_error(fake, &at);
      if (status == TM_ERROR) {
        damaged++;
        g_assert_nonnull(error);
        g_assert_cmpint(at, >=, 0);
        g_assert_cmpint(at, <=, (int64_t)cut);
      } else {
        g_assert_null(error);
      }
      fake_host_free(fake);
      g_free(copy);
    }
  }
  /* Most damage is caught: the rounds are not all silently accepted. */
  g_assert_cmpuint(damaged, >, 100);
  g_rand_free(rand);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/proto/reader/errors/damage-inside-packets-names-the-offset",
                  test_damage_inside_packets);
  g_test_add_func("/proto/reader/errors/a-known-field-of-the-wrong-wire-type-drops-its-packet",
                  test_wrong_wire_type_drops_the_packet);
  g_test_add_func("/proto/reader/errors/every-known-packet-field-of-the-wrong-wire-type-drops-its-packet",
                  test_every_known_field_checks_its_wire_type);
  g_test_add_func("/proto/reader/errors/damage-in-framing-names-the-offset",
                  test_damage_in_framing);
  g_test_add_func("/proto/reader/track-events/waiting-for-descriptors-is-bounded",
                  test_waiting_events_are_bounded);
  g_test_add_func("/proto/reader/compressed/packets-read-like-plain-ones",
                  test_compressed_packets_read_like_plain_ones);
  g_test_add_func("/proto/reader/compressed/damage-names-the-wrapper",
                  test_compressed_packets_damage);
  g_test_add_func("/proto/reader/import-logs/name-the-dropping-packet",
                  test_import_logs_name_the_dropping_packet);
  g_test_add_func("/proto/reader/import-logs/waiting-and-compressed-packets",
                  test_import_logs_of_waiting_and_compressed_packets);
  g_test_add_func("/proto/reader/import-logs/packets-before-their-clock-snapshot",
                  test_import_logs_of_packets_before_their_clock_snapshot);
  g_test_add_func("/proto/reader/zstd/packets-read-like-plain-ones",
                  test_zstd_compressed_packets_read_like_plain_ones);
  g_test_add_func("/proto/reader/zstd/damage-names-the-wrapper",
                  test_zstd_compressed_packets_damage);
  g_test_add_func("/proto/reader/debug-annotations/deep-nesting-is-cut-and-counted",
                  test_deep_annotations_are_cut_and_counted);
  g_test_add_func("/proto/reader/debug-annotations/malformed-value-is-damage",
                  test_malformed_annotation_is_damage);
  g_test_add_func("/proto/reader/errors/random-damage-is-reported-not-crashed-on",
                  test_random_damage_is_reported_not_crashed_on);
  return g_test_run();
}
