/*
 * Protobuf wire encoding for tests that build Perfetto traces byte by byte
 * (damage, bombs, limits the text fixtures cannot express).
 */
#ifndef TM_TEST_PROTO_WIRE_ENCODE_H
#define TM_TEST_PROTO_WIRE_ENCODE_H

#include <glib.h>
#include <stdint.h>

/* Appends `v` as a protobuf varint. */
static inline void wire_put_varint(GByteArray *out, uint64_t v) {
  do {
    uint8_t b = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v)
      b |= 0x80;
    g_byte_array_append(out, &b, 1);
  } while (v);
}

#endif /* TM_TEST_PROTO_WIRE_ENCODE_H */
