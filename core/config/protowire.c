/*
 * Binary protobuf walked with protobuf-c descriptors (see protowire.h).
 *
 * Why this is a decoder of its own beside the proto reader's
 * plugins/proto/proto_wire_decode.h (pw_cursor): core cannot include a
 * plugin's header (plugins build on core, not the other way), and the
 * contracts differ: configs refuse field numbers above 2^29 - 1, report
 * a damaged field at its tag's offset with a message, and give that
 * offset for every field, none of which the reader's hot loop should pay
 * for. Sharing would mean moving the varint read (pw_read_varint) into a
 * core/base header that both include, the reader's code unchanged; not
 * done yet (it is a move of the proto reader's header, to be checked by
 * callgrind on a proto import, as any change there).
 */
#include "config/protowire.h"

#include <string.h>

bool tm_wire_next(tm_wire_reader *r, tm_wire_field *f) {
  if (r->error || r->pos >= r->len)
    return false;
  size_t start = r->pos;
  uint64_t key = 0;
  int shift = 0;
  for (;;) {
    if (r->pos >= r->len || shift > 63) {
      r->error = "a field tag is cut short or longer than 10 bytes";
      r->pos = start;
      return false;
    }
    uint8_t b = r->data[r->pos++];
    key |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80))
      break;
  }
  uint64_t number = key >> 3;
  if (number == 0 || number > 0x1fffffff) {
    r->error = "a field number is 0 or larger than 2^29 - 1";
    r->pos = start;
    return false;
  }
  memset(f, 0, sizeof *f);
  f->number = (uint32_t)number;
  f->wire_type = (uint8_t)(key & 7);
  f->offset = start;
  switch (f->wire_type) {
  case TM_WIRE_VARINT:
  case TM_WIRE_LEN: {
    uint64_t v = 0;
    shift = 0;
    for (;;) {
      if (r->pos >= r->len || shift > 63) {
        r->error = "a varint is cut short or longer than 10 bytes";
        r->pos = start;
        return false;
      }
      uint8_t b = r->data[r->pos++];
      v |= (uint64_t)(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80))
        break;
    }
    if (f->wire_type == TM_WIRE_VARINT) {
      f->value = v;
      return true;
    }
    if (v > r->len - r->pos) {
      r->error = "a length-delimited field reaches past the end of its message";
      r->pos = start;
      return false;
    }
    f->data = r->data + r->pos;
    f->len = (size_t)v;
    r->pos += (size_t)v;
    return true;
  }
  case TM_WIRE_FIXED64:
  case TM_WIRE_FIXED32: {
    size_t n = f->wire_type == TM_WIRE_FIXED64 ? 8 : 4;
    if (r->len - r->pos < n) {
      r->error = "a fixed-width field is cut short";
      r->pos = start;
      return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
      v |= (uint64_t)r->data[r->pos + i] << (8 * i);
    r->pos += n;
    f->value = v;
    return true;
  }
  default:
    r->error = "a field has wire type 3, 4, 6 or 7 (groups are not supported)";
    r->pos = start;
    return false;
  }
}

void tm_wire_put_varint(GByteArray *out, uint64_t value) {
  uint8_t buf[10];
  size_t n = 0;
  do {
    uint8_t b = value & 0x7f;
    value >>= 7;
    buf[n++] = value ? (uint8_t)(b | 0x80) : b;
  } while (value);
  g_byte_array_append(out, buf, (guint)n);
}

void tm_wire_put_tag(GByteArray *out, uint32_t number, uint32_t wire_type) {
  tm_wire_put_varint(out, ((uint64_t)number << 3) | wire_type);
}

void tm_wire_put_fixed32(GByteArray *out, uint32_t value) {
  uint8_t buf[4];
  for (int i = 0; i < 4; i++)
    buf[i] = (uint8_t)(value >> (8 * i));
  g_byte_array_append(out, buf, 4);
}

void tm_wire_put_fixed64(GByteArray *out, uint64_t value) {
  uint8_t buf[8];
  for (int i = 0; i < 8; i++)
    buf[i] = (uint8_t)(value >> (8 * i));
  g_byte_array_append(out, buf, 8);
}

void tm_wire_put_bytes(GByteArray *out, uint32_t number, const void *data, size_t len) {
  tm_wire_put_tag(out, number, TM_WIRE_LEN);
  tm_wire_put_varint(out, len);
  if (len)
    g_byte_array_append(out, data, (guint)len);
}

uint8_t tm_wire_type_of(ProtobufCType type) {
  switch (type) {
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_FLOAT:
    return TM_WIRE_FIXED32;
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE:
    return TM_WIRE_FIXED64;
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_BYTES:
  case PROTOBUF_C_TYPE_MESSAGE:
    return TM_WIRE_LEN;
  default:
    return TM_WIRE_VARINT;
  }
}
