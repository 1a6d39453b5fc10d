/*
 * The descriptor-driven check of a binary config (see protowire_check.h).
 */
#include "config/protowire_check.h"

#include <string.h>

#include "config/protowire.h"
#include "config/textproto.h"

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
