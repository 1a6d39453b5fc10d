/*
 * pw_read_varint for the hot loops of the ftrace reader: the same result
 * for every input, but without a bounds test per byte when ten bytes (the
 * longest varint) are there. An ftrace event's timestamp is a five-byte
 * varint, its pids two bytes; pw_read_varint's loop was 7% of an ftrace
 * import's instructions.
 */
#ifndef TM_PROTO_WIRE_FAST_H
#define TM_PROTO_WIRE_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "proto_wire_decode.h"

/* Reads a varint at p (before end) into *out; returns its length, 0 if it
 * is malformed or cut by `end` (as pw_read_varint). */
static inline size_t pw_read_varint_fast(const uint8_t *p, const uint8_t *end, uint64_t *out) {
  if (p < end && *p < 0x80) {
    *out = *p;
    return 1;
  }
  if (end - p >= 10) {
    /* No bound to test, and no mask: each byte is added whole, less the
     * continuation bit of the byte before it (1 << 7i), which the byte's
     * own value carries one place up: (b - 1) << 7i. Sums wrap as the
     * masked ors do for a tenth byte. */
    uint64_t v = p[0];
    for (unsigned i = 1; i < 10; i++) {
      uint64_t b = p[i];
      v += (b - 1) << (7 * i);
      if (b < 0x80) {
        *out = v;
        return i + 1;
      }
    }
    return 0;
  }
  return pw_read_varint(p, end, out);
}

#endif /* TM_PROTO_WIRE_FAST_H */
