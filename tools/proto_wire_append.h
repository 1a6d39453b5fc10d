/*
 * Protobuf wire encoding into a growing GByteArray, for the benchmark's
 * trace generators. Speed does not matter here (the generators run once per
 * file); the producer library's bounded encoder is core/record/encoder.h.
 */
#ifndef TM_TOOLS_PROTO_WIRE_APPEND_H
#define TM_TOOLS_PROTO_WIRE_APPEND_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static inline void wire_append_varint(GByteArray *b, uint64_t v) {
  uint8_t buf[10];
  guint n = 0;
  do {
    buf[n] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v)
      buf[n] |= 0x80;
    n++;
  } while (v);
  g_byte_array_append(b, buf, n);
}

static inline void wire_append_uint(GByteArray *b, uint32_t field, uint64_t v) {
  wire_append_varint(b, (uint64_t)field << 3);
  wire_append_varint(b, v);
}

static inline void wire_append_fixed64(GByteArray *b, uint32_t field, uint64_t v) {
  wire_append_varint(b, (uint64_t)field << 3 | 1);
  uint8_t le[8];
  for (int i = 0; i < 8; i++)
    le[i] = (uint8_t)(v >> (8 * i));
  g_byte_array_append(b, le, 8);
}

static inline void wire_append_double(GByteArray *b, uint32_t field, double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  wire_append_fixed64(b, field, v);
}

static inline void wire_append_bytes(GByteArray *b, uint32_t field, const void *data, size_t len) {
  wire_append_varint(b, (uint64_t)field << 3 | 2);
  wire_append_varint(b, len);
  g_byte_array_append(b, data, (guint)len);
}

static inline void wire_append_string(GByteArray *b, uint32_t field, const char *s) {
  wire_append_bytes(b, field, s, strlen(s));
}

static inline void wire_append_message(GByteArray *b, uint32_t field, const GByteArray *m) {
  wire_append_bytes(b, field, m->data, m->len);
}

/* An InternedString / EventName / EventCategory entry: iid = 1, name = 2. */
static inline void wire_append_interned(GByteArray *b, uint32_t field, uint64_t iid,
                                        const char *name) {
  g_autoptr(GByteArray) entry = g_byte_array_new();
  wire_append_uint(entry, 1, iid);
  wire_append_string(entry, 2, name);
  wire_append_message(b, field, entry);
}

/* Writes `packet` as one `packet` field (1) of Trace through `frame`, and
 * empties both for the next packet. False when the write failed. */
static inline bool wire_write_trace_packet(FILE *out, GByteArray *frame, GByteArray *packet) {
  g_byte_array_set_size(frame, 0);
  wire_append_message(frame, 1, packet);
  g_byte_array_set_size(packet, 0);
  return fwrite(frame->data, 1, frame->len, out) == frame->len;
}

#endif /* TM_TOOLS_PROTO_WIRE_APPEND_H */
