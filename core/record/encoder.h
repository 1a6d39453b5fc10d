/*
 * Hand-encoding of protobuf on the recording hot path: a bounded cursor
 * into a writer-owned scratch buffer, no allocation, no protobuf-c.
 *
 * Invariant: a put never writes past `end`; when a value does not fit the
 * cursor sets `overflow` and writes nothing more, and the caller grows the
 * scratch and encodes the packet again (only ever during warm-up, or for a
 * packet larger than any before).
 *
 * Nested messages keep one byte for their length and move their body up
 * only when it is 128 bytes or more, so the output is the canonical
 * (minimal) encoding.
 */
#ifndef TMR_ENCODER_H
#define TMR_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
  TMR_WT_VARINT = 0,
  TMR_WT_FIXED64 = 1,
  TMR_WT_LEN = 2,
};

typedef struct tmr_enc {
  uint8_t *p;
  uint8_t *end;
  bool overflow;
} tmr_enc;

static inline bool tmr_enc_room(tmr_enc *e, size_t n) {
  if (e->overflow || (size_t)(e->end - e->p) < n) {
    e->overflow = true;
    return false;
  }
  return true;
}

static inline void tmr_enc_varint(tmr_enc *e, uint64_t v) {
  if (!tmr_enc_room(e, 10))
    return;
  uint8_t *p = e->p;
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  e->p = p;
}

/* A tag of a field number below 2^11 in one or two bytes, with a varint. */
static inline void tmr_enc_tag(tmr_enc *e, uint32_t field, uint32_t wire_type) {
  tmr_enc_varint(e, ((uint64_t)field << 3) | wire_type);
}

static inline void tmr_enc_uint(tmr_enc *e, uint32_t field, uint64_t v) {
  tmr_enc_tag(e, field, TMR_WT_VARINT);
  tmr_enc_varint(e, v);
}

static inline void tmr_enc_int(tmr_enc *e, uint32_t field, int64_t v) {
  tmr_enc_uint(e, field, (uint64_t)v);
}

static inline void tmr_enc_fixed64(tmr_enc *e, uint32_t field, uint64_t v) {
  tmr_enc_tag(e, field, TMR_WT_FIXED64);
  if (!tmr_enc_room(e, 8))
    return;
  for (int i = 0; i < 8; i++)
    e->p[i] = (uint8_t)(v >> (8 * i));
  e->p += 8;
}

static inline void tmr_enc_double(tmr_enc *e, uint32_t field, double d) {
  uint64_t bits;
  memcpy(&bits, &d, 8);
  tmr_enc_fixed64(e, field, bits);
}

static inline void tmr_enc_bytes(tmr_enc *e, uint32_t field, const void *data, size_t len) {
  tmr_enc_tag(e, field, TMR_WT_LEN);
  tmr_enc_varint(e, len);
  if (!tmr_enc_room(e, len))
    return;
  if (len)
    memcpy(e->p, data, len);
  e->p += len;
}

static inline void tmr_enc_string(tmr_enc *e, uint32_t field, const char *s) {
  tmr_enc_bytes(e, field, s, strlen(s));
}

/* Raw bytes (an already encoded field or message body). */
static inline void tmr_enc_raw(tmr_enc *e, const void *data, size_t len) {
  if (!tmr_enc_room(e, len))
    return;
  if (len)
    memcpy(e->p, data, len);
  e->p += len;
}

/* Opens nested message `field`; returns where its body starts. One byte
 * is kept for the length: bodies under 128 bytes (almost all) need no
 * moving when they close. */
static inline uint8_t *tmr_enc_nest_begin(tmr_enc *e, uint32_t field) {
  tmr_enc_tag(e, field, TMR_WT_LEN);
  if (!tmr_enc_room(e, 1))
    return e->p;
  e->p += 1;
  return e->p;
}

static inline void tmr_enc_nest_end(tmr_enc *e, uint8_t *body) {
  if (e->overflow)
    return;
  size_t len = (size_t)(e->p - body);
  if (len < 0x80) {
    body[-1] = (uint8_t)len;
    return;
  }
  /* A longer body moves up to make room for its length's other bytes. */
  size_t extra = 0;
  for (uint64_t v = len >> 7; v; v >>= 7)
    extra++;
  if (!tmr_enc_room(e, extra))
    return;
  memmove(body + extra, body, len);
  uint8_t *q = body - 1;
  uint64_t v = len;
  while (v >= 0x80) {
    *q++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *q = (uint8_t)v;
  e->p += extra;
}

static inline size_t tmr_varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

#endif /* TMR_ENCODER_H */
