/*
 * Protobuf wire format, read in place: varints and one field at a time.
 *
 * The reader decodes its hot messages (TracePacket, TrackEvent,
 * InternedData, DebugAnnotation) with these helpers instead of unpacking
 * them, so a packet costs no allocation. Invariant: a pw_cursor never
 * reads outside [p, end); every failure leaves the cursor's `error` set
 * and makes pw_next() return false from then on.
 */
#ifndef TM_PROTO_WIRE_DECODE_H
#define TM_PROTO_WIRE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum pw_wire_type {
  PW_VARINT = 0,
  PW_FIXED64 = 1,
  PW_LENGTH_DELIMITED = 2,
  PW_START_GROUP = 3,
  PW_END_GROUP = 4,
  PW_FIXED32 = 5,
};

typedef enum pw_error {
  PW_OK = 0,
  PW_BAD_VARINT,      /* longer than 10 bytes, or cut by the end */
  PW_BAD_WIRE_TYPE,   /* groups (3, 4) and 6, 7 */
  PW_TRUNCATED,       /* a value or length reaches past the end */
  PW_BAD_FIELD_NUMBER /* field number 0 */
} pw_error;

/* One decoded field. For varint/fixed fields `value` holds the bits; for
 * length-delimited ones `data`/`len` point into the buffer. */
typedef struct pw_field {
  uint32_t number;
  uint8_t wire_type;
  uint64_t value;
  const uint8_t *data;
  size_t len;
} pw_field;

typedef struct pw_cursor {
  const uint8_t *p;
  const uint8_t *end;
  const uint8_t *start; /* for error offsets */
  pw_error error;
} pw_cursor;

static inline pw_cursor pw_cursor_of(const uint8_t *data, size_t len) {
  pw_cursor c = {data, data + len, data, PW_OK};
  return c;
}

/* pw_read_varint byte by byte, testing the bound at each: for the last
 * nine bytes of a buffer, and the reference the fast form is tested
 * against. */
static inline size_t pw_read_varint_bounded(const uint8_t *p, const uint8_t *end,
                                            uint64_t *out) {
  uint64_t v = 0;
  for (size_t i = 0; i < 10; i++) {
    if (p + i >= end)
      return 0;
    uint8_t b = p[i];
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *out = v;
      return i + 1;
    }
  }
  return 0;
}

/* Reads a varint at *p (< end). Returns the number of bytes used, 0 if
 * malformed or cut short. Where ten bytes (the longest varint) are left
 * it reads without a bound test per byte: an ftrace event's timestamp is
 * a five-byte varint, and the per-byte loop was 7% of an ftrace
 * import's instructions. */
static inline size_t pw_read_varint(const uint8_t *p, const uint8_t *end,
                                    uint64_t *out) {
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
  return pw_read_varint_bounded(p, end, out);
}

/* pw_read_varint for a varint of up to eight bytes with eight bytes left:
 * one load, its bytes' continuation bits found at once and their 7-bit
 * groups packed by three shifts and masks, not a test, a shift and an add
 * per byte (an ftrace event's timestamp is a five-byte varint, a pid
 * two; the ftrace reader reads those with it). The same length and value
 * as pw_read_varint; longer varints, the last bytes of a buffer and
 * big-endian hosts take pw_read_varint. */
static inline size_t pw_read_varint_word(const uint8_t *p, const uint8_t *end, uint64_t *out) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (end - p >= 8) {
    uint64_t x;
    memcpy(&x, p, sizeof x);
    uint64_t stops = ~x & 0x8080808080808080u; /* bytes without continuation */
    if (stops) {
      /* The bytes up to the first stop, 7 bits each, packed pairwise. */
      x &= (stops ^ (stops - 1)) & 0x7f7f7f7f7f7f7f7fu;
      x = (x & 0x007f007f007f007fu) | ((x >> 1) & 0x3f803f803f803f80u);
      x = (x & 0x00003fff00003fffu) | ((x >> 2) & 0x0fffc0000fffc000u);
      x = (x & 0x000000000fffffffu) | ((x >> 4) & 0x00fffffff0000000u);
      *out = x;
      return ((size_t)__builtin_ctzll(stops) >> 3) + 1;
    }
  }
#endif
  return pw_read_varint(p, end, out);
}

static inline const char *pw_error_message(pw_error error) {
  switch (error) {
  case PW_OK:
    return "no error";
  case PW_BAD_VARINT:
    return "malformed varint";
  case PW_BAD_WIRE_TYPE:
    return "unsupported wire type";
  case PW_TRUNCATED:
    return "field reaches past the end of its message";
  case PW_BAD_FIELD_NUMBER:
    return "field number 0";
  }
  return "malformed protobuf";
}

/* Advances to the next field. Returns false at the end of the message or on
 * malformed input (then c->error is set). */
static inline bool pw_next(pw_cursor *c, pw_field *f) {
  if (c->error != PW_OK || c->p >= c->end)
    return false;
  uint64_t tag;
  size_t n = pw_read_varint(c->p, c->end, &tag);
  if (n == 0) {
    c->error = PW_BAD_VARINT;
    return false;
  }
  const uint8_t *p = c->p + n;
  /* Every member is defined whatever the wire type: callers read `data`
   * and `len` only for length-delimited fields, but the compiler cannot
   * prove that and would warn at -O2. */
  f->data = NULL;
  f->len = 0;
  f->value = 0;
  f->number = (uint32_t)(tag >> 3);
  f->wire_type = (uint8_t)(tag & 7);
  if ((tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) {
    c->error = PW_BAD_FIELD_NUMBER;
    return false;
  }
  switch (f->wire_type) {
  case PW_VARINT:
    n = pw_read_varint(p, c->end, &f->value);
    if (n == 0) {
      c->error = PW_BAD_VARINT;
      return false;
    }
    p += n;
    break;
  case PW_FIXED64:
    if ((size_t)(c->end - p) < 8) {
      c->error = PW_TRUNCATED;
      return false;
    }
    f->value = 0;
    for (int i = 7; i >= 0; i--)
      f->value = (f->value << 8) | p[i];
    p += 8;
    break;
  case PW_FIXED32:
    if ((size_t)(c->end - p) < 4) {
      c->error = PW_TRUNCATED;
      return false;
    }
    f->value = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
               (uint64_t)p[3] << 24;
    p += 4;
    break;
  case PW_LENGTH_DELIMITED: {
    uint64_t len;
    n = pw_read_varint(p, c->end, &len);
    if (n == 0) {
      c->error = PW_BAD_VARINT;
      return false;
    }
    p += n;
    if (len > (uint64_t)(c->end - p)) {
      c->error = PW_TRUNCATED;
      return false;
    }
    f->data = p;
    f->len = (size_t)len;
    f->value = len;
    p += len;
    break;
  }
  default:
    c->error = PW_BAD_WIRE_TYPE;
    return false;
  }
  c->p = p;
  return true;
}

/* Field values reinterpreted. */
static inline int64_t pw_as_int64(const pw_field *f) { return (int64_t)f->value; }
static inline int32_t pw_as_int32(const pw_field *f) {
  return (int32_t)(uint32_t)f->value;
}
static inline double pw_as_double(const pw_field *f) {
  double d;
  uint64_t bits = f->value;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* Repeated numeric fields may arrive one per tag or packed into one
 * length-delimited field. pw_repeated walks either form: initialise it from
 * the field, then call pw_repeated_next until it returns false. `fixed64`
 * says the element type is fixed64/double (else varint). A malformed packed
 * run sets `error`. */
typedef struct pw_repeated {
  const uint8_t *p, *end;
  uint64_t single;
  bool packed;
  bool done;
  bool fixed64;
  bool error;
} pw_repeated;

static inline pw_repeated pw_repeated_of(const pw_field *f, bool fixed64) {
  pw_repeated r;
  memset(&r, 0, sizeof r);
  r.fixed64 = fixed64;
  if (f->wire_type == PW_LENGTH_DELIMITED) {
    r.packed = true;
    r.p = f->data;
    r.end = f->data + f->len;
  } else if (f->wire_type == (fixed64 ? PW_FIXED64 : PW_VARINT)) {
    r.single = f->value;
  } else {
    r.error = true;
    r.done = true;
  }
  return r;
}

static inline bool pw_repeated_next(pw_repeated *r, uint64_t *out) {
  if (r->done)
    return false;
  if (!r->packed) {
    r->done = true;
    *out = r->single;
    return true;
  }
  if (r->p >= r->end) {
    r->done = true;
    return false;
  }
  if (r->fixed64) {
    if (r->end - r->p < 8) {
      r->error = r->done = true;
      return false;
    }
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
      v = (v << 8) | r->p[i];
    r->p += 8;
    *out = v;
    return true;
  }
  size_t n = pw_read_varint(r->p, r->end, out);
  if (n == 0) {
    r->error = r->done = true;
    return false;
  }
  r->p += n;
  return true;
}

#endif /* TM_PROTO_WIRE_DECODE_H */
