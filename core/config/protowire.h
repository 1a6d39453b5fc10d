/*
 * Binary protobuf, walked with protobuf-c descriptors: the wire primitives
 * the config modules share (writing varints and tags into a GByteArray,
 * reading one field at a time). The descriptor-driven check that a binary
 * config must pass before anything unpacks it is protowire_check.h, which
 * builds on these and on textproto.h's record of unknown fields.
 *
 * Invariant: readers never look outside [data, data + len); a malformed
 * encoding is reported with its byte offset, never read past.
 */
#ifndef TM_PROTOWIRE_H
#define TM_PROTOWIRE_H

#include <glib.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
  TM_WIRE_VARINT = 0,
  TM_WIRE_FIXED64 = 1,
  TM_WIRE_LEN = 2,
  TM_WIRE_FIXED32 = 5,
};

/* One field read from the wire. `data`/`len` for length-delimited values,
 * `value` for the others (fixed values as their bits). `offset` is where
 * the field's tag starts. */
typedef struct tm_wire_field {
  uint32_t number;
  uint8_t wire_type;
  uint64_t value;
  const uint8_t *data;
  size_t len;
  size_t offset;
} tm_wire_field;

typedef struct tm_wire_reader {
  const uint8_t *data;
  size_t len, pos;
  const char *error; /* static text once a read failed */
} tm_wire_reader;

static inline tm_wire_reader tm_wire_reader_of(const uint8_t *data, size_t len) {
  tm_wire_reader r = {data, len, 0, NULL};
  return r;
}

/* Reads the next field. False at the end, or on damage (then `error`). */
bool tm_wire_next(tm_wire_reader *r, tm_wire_field *f);

void tm_wire_put_varint(GByteArray *out, uint64_t value);
void tm_wire_put_tag(GByteArray *out, uint32_t number, uint32_t wire_type);
void tm_wire_put_fixed32(GByteArray *out, uint32_t value);
void tm_wire_put_fixed64(GByteArray *out, uint64_t value);
void tm_wire_put_bytes(GByteArray *out, uint32_t number, const void *data, size_t len);

/* The wire type a field of `type` is written with (packed repeated fields
 * arrive as TM_WIRE_LEN too). */
uint8_t tm_wire_type_of(ProtobufCType type);

#endif /* TM_PROTOWIRE_H */
