/* Text format of a wire message by descriptor (see proto_pbtxt.h). */
#include "proto_pbtxt.h"

#include <inttypes.h>
#include <string.h>

#include "proto_wire_decode.h"

static void indent(GString *out, int depth) {
  for (int i = 0; i < depth; i++)
    g_string_append(out, "  ");
}

static void quoted(GString *out, const uint8_t *data, size_t len) {
  g_string_append_c(out, '"');
  for (size_t i = 0; i < len; i++) {
    uint8_t c = data[i];
    switch (c) {
    case '"':
      g_string_append(out, "\\\"");
      break;
    case '\\':
      g_string_append(out, "\\\\");
      break;
    case '\n':
      g_string_append(out, "\\n");
      break;
    case '\r':
      g_string_append(out, "\\r");
      break;
    case '\t':
      g_string_append(out, "\\t");
      break;
    default:
      if (c < 0x20 || c >= 0x7f)
        g_string_append_printf(out, "\\%03o", c);
      else
        g_string_append_c(out, (char)c);
    }
  }
  g_string_append_c(out, '"');
}

/* True if `data` parses as protobuf fields to its end. */
static bool parses(const uint8_t *data, size_t len) {
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
  }
  return c.error == PW_OK;
}

static void print_message(GString *out, const ProtobufCMessageDescriptor *d,
                          const uint8_t *data, size_t len, int depth);

static void scalar(GString *out, const ProtobufCFieldDescriptor *fd, uint64_t bits) {
  switch (fd->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SFIXED32:
    g_string_append_printf(out, "%" PRId32, (int32_t)(uint32_t)bits);
    break;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SFIXED64:
    g_string_append_printf(out, "%" PRId64, (int64_t)bits);
    break;
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SINT64:
    g_string_append_printf(out, "%" PRId64, (int64_t)(bits >> 1) ^ -(int64_t)(bits & 1));
    break;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
    g_string_append_printf(out, "%" PRIu32, (uint32_t)bits);
    break;
  case PROTOBUF_C_TYPE_BOOL:
    g_string_append(out, bits ? "true" : "false");
    break;
  case PROTOBUF_C_TYPE_DOUBLE: {
    double v;
    memcpy(&v, &bits, sizeof v);
    g_string_append_printf(out, "%g", v);
    break;
  }
  case PROTOBUF_C_TYPE_FLOAT: {
    uint32_t b32 = (uint32_t)bits;
    float v;
    memcpy(&v, &b32, sizeof v);
    g_string_append_printf(out, "%g", (double)v);
    break;
  }
  case PROTOBUF_C_TYPE_ENUM: {
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(fd->descriptor, (int)(int32_t)(uint32_t)bits);
    if (v)
      g_string_append(out, v->name);
    else
      g_string_append_printf(out, "%" PRId32, (int32_t)(uint32_t)bits);
    break;
  }
  default:
    g_string_append_printf(out, "%" PRIu64, bits);
    break;
  }
}

static void print_field(GString *out, const ProtobufCFieldDescriptor *fd, const pw_field *f,
                        int depth) {
  if (!fd) {
    indent(out, depth);
    g_string_append_printf(out, "%" PRIu32 ": ", f->number);
    if (f->wire_type == PW_LENGTH_DELIMITED)
      quoted(out, f->data, f->len);
    else
      g_string_append_printf(out, "%" PRIu64, f->value);
    g_string_append_c(out, '\n');
    return;
  }
  if (fd->type == PROTOBUF_C_TYPE_MESSAGE && f->wire_type == PW_LENGTH_DELIMITED &&
      depth < PROTO_PBTXT_MAX_DEPTH && parses(f->data, f->len)) {
    indent(out, depth);
    g_string_append_printf(out, "%s {\n", fd->name);
    print_message(out, fd->descriptor, f->data, f->len, depth + 1);
    indent(out, depth);
    g_string_append(out, "}\n");
    return;
  }
  bool text = fd->type == PROTOBUF_C_TYPE_STRING || fd->type == PROTOBUF_C_TYPE_BYTES ||
              fd->type == PROTOBUF_C_TYPE_MESSAGE;
  if (f->wire_type == PW_LENGTH_DELIMITED && !text) {
    /* A packed run of scalars: one line per value. */
    bool fixed64 = fd->type == PROTOBUF_C_TYPE_DOUBLE || fd->type == PROTOBUF_C_TYPE_FIXED64 ||
                   fd->type == PROTOBUF_C_TYPE_SFIXED64;
    pw_repeated r = pw_repeated_of(f, fixed64);
    uint64_t v;
    while (pw_repeated_next(&r, &v)) {
      indent(out, depth);
      g_string_append_printf(out, "%s: ", fd->name);
      scalar(out, fd, v);
      g_string_append_c(out, '\n');
    }
    return;
  }
  indent(out, depth);
  g_string_append_printf(out, "%s: ", fd->name);
  if (f->wire_type == PW_LENGTH_DELIMITED)
    quoted(out, f->data, f->len);
  else
    scalar(out, fd, f->value);
  g_string_append_c(out, '\n');
}

static void print_message(GString *out, const ProtobufCMessageDescriptor *d,
                          const uint8_t *data, size_t len, int depth) {
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f))
    print_field(out, d ? protobuf_c_message_descriptor_get_field(d, f.number) : NULL, &f,
                depth);
}

char *proto_pbtxt(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len) {
  GString *out = g_string_new(NULL);
  print_message(out, d, data, len, 0);
  return g_string_free(out, FALSE);
}
