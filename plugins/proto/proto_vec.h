/*
 * The proto reader's buffers: its instances of the project's one growable
 * array (TM_VEC, core/base/vec.h, whose growth aborts on out of memory as
 * GLib's allocations do), the allocation helper for its other blocks, and
 * bytes borrowed from a packet.
 *
 * Out of memory is fatal here as in the host: growth aborts rather than
 * returning an error every caller would have to pass up.
 */
#ifndef TM_PROTO_VEC_H
#define TM_PROTO_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/vec.h"

/* realloc() that aborts on failure (blocks that are no vector). */
static inline void *proto_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q)
    abort();
  return q;
}

typedef TM_VEC(uint64_t) proto_u64_vec;
typedef TM_VEC(char) proto_text;

/* Bytes borrowed from a packet. */
typedef struct proto_bytes {
  const uint8_t *data;
  size_t len;
} proto_bytes;

#endif /* TM_PROTO_VEC_H */
