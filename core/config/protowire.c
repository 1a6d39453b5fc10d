/*
 * Binary protobuf walked with protobuf-c descriptors (see protowire.h).
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

/* --- the check ------------------------------------------------------------ */

typedef struct check_ctx {
  const char *source;
  GPtrArray *unknown;
  GError **error;
} check_ctx;

static bool check_fail(check_ctx *c, size_t offset, const GString *path, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

static bool check_fail(check_ctx *c, size_t offset, const GString *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(c->error, TM_CONFIG_ERROR, TM_CONFIG_ERROR_WIRE, "%s: byte %zu: %s%s%s",
              c->source ? c->source : "(binary)", offset, path->len ? path->str : "",
              path->len ? ": " : "", what);
  return false;
}

static bool check_enum_value(check_ctx *c, const ProtobufCFieldDescriptor *fd, uint64_t raw,
                             size_t offset, const GString *path) {
  const ProtobufCEnumDescriptor *ed = fd->descriptor;
  int value = (int)(int32_t)(uint32_t)raw;
  if (protobuf_c_enum_descriptor_get_value(ed, value))
    return true;
  return check_fail(c, offset, path, "unknown value %d for enum %s", value, ed->name);
}

static bool check_message(check_ctx *c, const ProtobufCMessageDescriptor *desc,
                          const uint8_t *data, size_t len, size_t base, GString *path,
                          int depth);

/* Appends ".name" or ".name[i]" to `path`; returns the old length. */
static size_t path_push(GString *path, const char *name, bool repeated, unsigned index) {
  size_t old = path->len;
  if (path->len)
    g_string_append_c(path, '.');
  g_string_append(path, name);
  if (repeated)
    g_string_append_printf(path, "[%u]", index);
  return old;
}

static bool check_field(check_ctx *c, const ProtobufCFieldDescriptor *fd, const tm_wire_field *f,
                        size_t base, GString *path, unsigned index) {
  bool repeated = fd->label == PROTOBUF_C_LABEL_REPEATED;
  size_t old = path_push(path, fd->name, repeated, index);
  size_t offset = base + f->offset;
  uint8_t expected = tm_wire_type_of(fd->type);
  bool ok = true;
  if (f->wire_type == expected) {
    /* Nested messages are walked by the caller, which knows their offset. */
    if (fd->type == PROTOBUF_C_TYPE_ENUM)
      ok = check_enum_value(c, fd, f->value, offset, path);
  } else if (f->wire_type == TM_WIRE_LEN && repeated && expected != TM_WIRE_LEN) {
    /* A packed run of scalars. */
    tm_wire_reader r = tm_wire_reader_of(f->data, f->len);
    while (ok && r.pos < r.len) {
      uint64_t v = 0;
      if (expected == TM_WIRE_VARINT) {
        int shift = 0;
        for (;;) {
          if (r.pos >= r.len || shift > 63) {
            ok = check_fail(c, offset, path, "a packed varint is cut short");
            break;
          }
          uint8_t b = r.data[r.pos++];
          v |= (uint64_t)(b & 0x7f) << shift;
          shift += 7;
          if (!(b & 0x80))
            break;
        }
        if (ok && fd->type == PROTOBUF_C_TYPE_ENUM)
          ok = check_enum_value(c, fd, v, offset, path);
      } else {
        size_t n = expected == TM_WIRE_FIXED64 ? 8 : 4;
        if (r.len - r.pos < n)
          ok = check_fail(c, offset, path, "a packed run's length is not a multiple of %zu", n);
        r.pos += n;
      }
    }
  } else {
    ok = check_fail(c, offset, path, "wire type %u where a %s field has wire type %u",
                    f->wire_type, fd->type == PROTOBUF_C_TYPE_MESSAGE ? "message" : "scalar",
                    expected);
  }
  g_string_truncate(path, old);
  return ok;
}

static bool check_message(check_ctx *c, const ProtobufCMessageDescriptor *desc,
                          const uint8_t *data, size_t len, size_t base, GString *path,
                          int depth) {
  if (depth > TM_TEXTPROTO_MAX_DEPTH)
    return check_fail(c, base, path, "messages nest deeper than %d", TM_TEXTPROTO_MAX_DEPTH);
  unsigned *counts = g_new0(unsigned, desc->n_fields ? desc->n_fields : 1);
  tm_wire_reader r = tm_wire_reader_of(data, len);
  tm_wire_field f;
  bool ok = true;
  while (ok && tm_wire_next(&r, &f)) {
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(desc, f.number);
    if (!fd) {
      if (c->unknown) {
        tm_textproto_unknown *u = g_new0(tm_textproto_unknown, 1);
        u->path = g_strdup(path->str);
        u->name = g_strdup_printf("%u", f.number);
        g_ptr_array_add(c->unknown, u);
      }
      continue;
    }
    unsigned index = counts[fd - desc->fields]++;
    ok = check_field(c, fd, &f, base, path, index);
    if (ok && fd->type == PROTOBUF_C_TYPE_MESSAGE && f.wire_type == TM_WIRE_LEN) {
      size_t old = path_push(path, fd->name, fd->label == PROTOBUF_C_LABEL_REPEATED, index);
      ok = check_message(c, fd->descriptor, f.data, f.len, base + (size_t)(f.data - data), path,
                         depth + 1);
      g_string_truncate(path, old);
    }
  }
  if (ok && r.error)
    ok = check_fail(c, base + r.pos, path, "%s", r.error);
  g_free(counts);
  return ok;
}

bool tm_protowire_check(const ProtobufCMessageDescriptor *root, const uint8_t *data,
                        size_t len, const char *source_name, GPtrArray *unknown,
                        GError **error) {
  check_ctx c = {source_name, unknown, error};
  g_autoptr(GString) path = g_string_new(NULL);
  return check_message(&c, root, data, len, 0, path, 0);
}
