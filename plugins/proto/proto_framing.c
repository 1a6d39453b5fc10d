/*
 * Streaming framing (see proto_framing.h). The state machine reads one
 * top-level field at a time: tag, then (for length-delimited fields) the
 * length, then the payload, which is delivered in place, copied (packets
 * cut by a chunk boundary) or skipped (unknown fields). Varints cut by a
 * boundary are gathered in a 10-byte buffer.
 */
#include "proto_framing.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_wire_decode.h"

void proto_framer_init(proto_framer *framer, size_t max_packet,
                       proto_packet_fn on_packet, void *ctx) {
  memset(framer, 0, sizeof *framer);
  framer->max_packet = max_packet;
  framer->on_packet = on_packet;
  framer->ctx = ctx;
  framer->state = FRAMER_TAG;
}

void proto_framer_clear(proto_framer *framer) {
  free(framer->buf);
  framer->buf = NULL;
  framer->buf_len = framer->buf_cap = 0;
}

static bool fail(proto_framer *framer, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(proto_framer *framer, uint64_t offset, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(framer->error, sizeof framer->error, fmt, ap);
  va_end(ap);
  framer->failed = true;
  framer->error_offset = offset;
  framer->state = FRAMER_STOPPED;
  return false;
}

typedef enum varint_result {
  VARINT_DONE,
  VARINT_MORE, /* the chunk ended inside it */
  VARINT_BAD,
} varint_result;

/* Takes one varint from the chunk, continuing one cut by the previous
 * chunk. Advances *pos past the bytes used. */
static varint_result take_varint(proto_framer *framer, const uint8_t *data,
                                 size_t len, size_t *pos, uint64_t *out) {
  if (framer->varint_len == 0) {
    size_t n = pw_read_varint(data + *pos, data + len, out);
    if (n > 0) {
      *pos += n;
      return VARINT_DONE;
    }
    if (len - *pos >= 10)
      return VARINT_BAD;
  }
  while (*pos < len) {
    if (framer->varint_len == sizeof framer->varint)
      return VARINT_BAD;
    uint8_t b = data[(*pos)++];
    framer->varint[framer->varint_len++] = b;
    if (!(b & 0x80)) {
      size_t n = pw_read_varint(framer->varint, framer->varint + framer->varint_len, out);
      framer->varint_len = 0;
      return n > 0 ? VARINT_DONE : VARINT_BAD;
    }
  }
  return framer->varint_len == sizeof framer->varint ? VARINT_BAD : VARINT_MORE;
}

static bool deliver(proto_framer *framer, const uint8_t *packet, size_t len,
                    uint64_t offset) {
  framer->packets++;
  if (!framer->on_packet(framer->ctx, packet, len, offset)) {
    framer->state = FRAMER_STOPPED;
    return false;
  }
  return true;
}

/* Makes room for a cut packet of `len` bytes (len <= max_packet). */
static bool reserve(proto_framer *framer, size_t len) {
  if (framer->buf_cap >= len)
    return true;
  uint8_t *grown = realloc(framer->buf, len);
  if (!grown)
    return fail(framer, framer->field_offset,
                "out of memory buffering a packet of %zu bytes", len);
  framer->buf = grown;
  framer->buf_cap = len;
  return true;
}

static bool on_tag(proto_framer *framer, uint64_t tag) {
  uint64_t number = tag >> 3;
  framer->wire_type = (uint8_t)(tag & 7);
  if (number == 0 || number > UINT32_MAX)
    return fail(framer, framer->field_offset,
                "invalid top-level field number %" PRIu64, number);
  framer->field_number = (uint32_t)number;
  if (number == 1 && framer->wire_type != PW_LENGTH_DELIMITED)
    return fail(framer, framer->field_offset,
                "packet field has wire type %u, expected length-delimited (2)",
                framer->wire_type);
  switch (framer->wire_type) {
  case PW_VARINT:
    framer->state = FRAMER_SKIP_VARINT;
    return true;
  case PW_FIXED64:
    framer->remaining = 8;
    framer->state = FRAMER_SKIP_BYTES;
    return true;
  case PW_FIXED32:
    framer->remaining = 4;
    framer->state = FRAMER_SKIP_BYTES;
    return true;
  case PW_LENGTH_DELIMITED:
    framer->state = FRAMER_LENGTH;
    return true;
  default:
    return fail(framer, framer->field_offset,
                "top-level field %" PRIu64 " has unsupported wire type %u",
                number, framer->wire_type);
  }
}

bool proto_framer_feed(proto_framer *framer, const uint8_t *data, size_t len) {
  size_t pos = 0;
  bool ok = true;
  while (ok && pos < len) {
    uint64_t value;
    switch (framer->state) {
    case FRAMER_TAG: {
      if (framer->varint_len == 0)
        framer->field_offset = framer->offset + pos;
      varint_result r = take_varint(framer, data, len, &pos, &value);
      if (r == VARINT_BAD)
        ok = fail(framer, framer->field_offset, "malformed varint in field tag");
      else if (r == VARINT_DONE)
        ok = on_tag(framer, value);
      break;
    }
    case FRAMER_LENGTH: {
      varint_result r = take_varint(framer, data, len, &pos, &value);
      if (r == VARINT_BAD) {
        ok = fail(framer, framer->field_offset, "malformed varint in field length");
        break;
      }
      if (r == VARINT_MORE)
        break;
      if (framer->field_number != 1) {
        framer->remaining = value;
        framer->state = FRAMER_SKIP_BYTES;
        break;
      }
      if (value > framer->max_packet) {
        ok = fail(framer, framer->field_offset,
                  "packet claims %" PRIu64 " bytes, more than the limit of %zu",
                  value, framer->max_packet);
        break;
      }
      framer->state = FRAMER_TAG;
      if (value == 0)
        break; /* zero-length packets carry nothing */
      uint64_t payload_offset = framer->offset + pos;
      if (value <= len - pos) {
        ok = deliver(framer, data + pos, (size_t)value, payload_offset);
        pos += (size_t)value;
        break;
      }
      if (!reserve(framer, (size_t)value)) {
        ok = false;
        break;
      }
      framer->remaining = value;
      framer->buf_len = 0;
      framer->state = FRAMER_PACKET;
      break;
    }
    case FRAMER_PACKET: {
      size_t n = len - pos < framer->remaining ? len - pos : (size_t)framer->remaining;
      memcpy(framer->buf + framer->buf_len, data + pos, n);
      framer->buf_len += n;
      framer->remaining -= n;
      pos += n;
      if (framer->remaining == 0) {
        framer->state = FRAMER_TAG;
        ok = deliver(framer, framer->buf, framer->buf_len,
                     framer->offset + pos - framer->buf_len);
      }
      break;
    }
    case FRAMER_SKIP_VARINT: {
      varint_result r = take_varint(framer, data, len, &pos, &value);
      if (r == VARINT_BAD)
        ok = fail(framer, framer->field_offset, "malformed varint in field %u",
                  framer->field_number);
      else if (r == VARINT_DONE)
        framer->state = FRAMER_TAG;
      break;
    }
    case FRAMER_SKIP_BYTES: {
      size_t n = len - pos < framer->remaining ? len - pos : (size_t)framer->remaining;
      framer->remaining -= n;
      pos += n;
      if (framer->remaining == 0)
        framer->state = FRAMER_TAG;
      break;
    }
    case FRAMER_STOPPED:
      return false;
    }
  }
  framer->offset += pos;
  return ok && framer->state != FRAMER_STOPPED;
}

bool proto_framer_finish(proto_framer *framer) {
  switch (framer->state) {
  case FRAMER_STOPPED:
    return false;
  case FRAMER_TAG:
    if (framer->varint_len == 0)
      return true;
    return fail(framer, framer->field_offset, "file ends inside a field tag");
  case FRAMER_LENGTH:
  case FRAMER_SKIP_VARINT:
    return fail(framer, framer->field_offset,
                "file ends inside a varint of field %u", framer->field_number);
  case FRAMER_PACKET:
    return fail(framer, framer->field_offset,
                "truncated packet: it claims %zu bytes, the file ends after %zu",
                framer->buf_len + (size_t)framer->remaining, framer->buf_len);
  case FRAMER_SKIP_BYTES:
    return fail(framer, framer->field_offset,
                "truncated field %u: %" PRIu64 " bytes missing at the end of the file",
                framer->field_number, framer->remaining);
  }
  return true;
}
