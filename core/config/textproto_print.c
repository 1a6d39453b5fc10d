/*
 * Binary → protobuf text format, driven by protobuf-c descriptors: the
 * normalised form of a config (`config-check`), and the text that shows
 * how a trace was made. Invariant: for fields the schema knows, printing
 * then parsing gives back the same encoding (packed runs come back
 * unpacked, which decodes the same); fields it does not know print by
 * number — varints and length-delimited values parse back byte for byte,
 * fixed-width ones are marked with a comment.
 */
#include <math.h>
#include <string.h>

#include "config/protowire.h"
#include "config/textproto.h"

static void indent(GString *out, int depth) {
  for (int i = 0; i < depth; i++)
    g_string_append(out, "  ");
}

static void print_quoted(GString *out, const uint8_t *data, size_t len, bool utf8_ok) {
  g_string_append_c(out, '"');
  bool verbatim_utf8 = utf8_ok && g_utf8_validate((const char *)data, (gssize)len, NULL);
  for (size_t i = 0; i < len; i++) {
    uint8_t c = data[i];
    switch (c) {
    case '"': g_string_append(out, "\\\""); break;
    case '\\': g_string_append(out, "\\\\"); break;
    case '\n': g_string_append(out, "\\n"); break;
    case '\r': g_string_append(out, "\\r"); break;
    case '\t': g_string_append(out, "\\t"); break;
    default:
      if ((c >= 0x20 && c < 0x7f) || (c >= 0x80 && verbatim_utf8))
        g_string_append_c(out, (char)c);
      else
        g_string_append_printf(out, "\\%03o", c);
    }
  }
  g_string_append_c(out, '"');
}

/* The shortest decimal that reads back as the same value (as protoc
 * prints): the fewest significant digits that round-trip. */
static void print_double(GString *out, double v, bool is_float) {
  if (isnan(v)) {
    g_string_append(out, "nan");
    return;
  }
  if (isinf(v)) {
    g_string_append(out, v < 0 ? "-inf" : "inf");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int digits = is_float ? 6 : 15; digits <= 17; digits++) {
    char format[8];
    g_snprintf(format, sizeof format, "%%.%dg", digits);
    g_ascii_formatd(buf, sizeof buf, format, v);
    double back = g_ascii_strtod(buf, NULL);
    if (is_float ? (float)back == (float)v : back == v)
      break;
  }
  g_string_append(out, buf);
}

static void print_scalar(GString *out, const ProtobufCFieldDescriptor *fd, uint64_t v) {
  switch (fd->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SFIXED32:
    g_string_append_printf(out, "%d", (int32_t)(uint32_t)v);
    break;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SFIXED64:
    g_string_append_printf(out, "%" G_GINT64_FORMAT, (int64_t)v);
    break;
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SINT64:
    g_string_append_printf(out, "%" G_GINT64_FORMAT, (int64_t)(v >> 1) ^ -(int64_t)(v & 1));
    break;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
    g_string_append_printf(out, "%u", (uint32_t)v);
    break;
  case PROTOBUF_C_TYPE_FLOAT: {
    uint32_t bits = (uint32_t)v;
    float f;
    memcpy(&f, &bits, 4);
    print_double(out, f, true);
    break;
  }
  case PROTOBUF_C_TYPE_DOUBLE: {
    double d;
    memcpy(&d, &v, 8);
    print_double(out, d, false);
    break;
  }
  case PROTOBUF_C_TYPE_BOOL:
    g_string_append(out, v ? "true" : "false");
    break;
  case PROTOBUF_C_TYPE_ENUM: {
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value(fd->descriptor, (int)(int32_t)(uint32_t)v);
    if (ev)
      g_string_append(out, ev->name);
    else
      g_string_append_printf(out, "%d", (int32_t)(uint32_t)v);
    break;
  }
  default:
    g_string_append_printf(out, "%" G_GUINT64_FORMAT, v);
    break;
  }
}

typedef struct print_names {
  tm_textproto_name_fn name;
  void *user;
} print_names;

static void print_message(GString *out, const ProtobufCMessageDescriptor *desc,
                          const uint8_t *data, size_t len, int depth, const print_names *names) {
  tm_wire_reader r = tm_wire_reader_of(data, len);
  tm_wire_field f;
  while (tm_wire_next(&r, &f)) {
    const ProtobufCFieldDescriptor *fd =
        desc ? protobuf_c_message_descriptor_get_field(desc, f.number) : NULL;
    uint8_t expected = fd ? tm_wire_type_of(fd->type) : 0;
    if (fd && f.wire_type == expected) {
      indent(out, depth);
      if (fd->type == PROTOBUF_C_TYPE_MESSAGE && depth < TM_TEXTPROTO_MAX_DEPTH) {
        g_string_append_printf(out, "%s {\n", fd->name);
        print_message(out, fd->descriptor, f.data, f.len, depth + 1, names);
        indent(out, depth);
        g_string_append(out, "}\n");
        continue;
      }
      g_string_append_printf(out, "%s: ", fd->name);
      if (f.wire_type == TM_WIRE_LEN)
        print_quoted(out, f.data, f.len, fd->type == PROTOBUF_C_TYPE_STRING);
      else
        print_scalar(out, fd, f.value);
      g_string_append_c(out, '\n');
    } else if (fd && f.wire_type == TM_WIRE_LEN && fd->label == PROTOBUF_C_LABEL_REPEATED) {
      /* A packed run: one line per element. */
      tm_wire_reader run = tm_wire_reader_of(f.data, f.len);
      while (run.pos < run.len) {
        uint64_t v = 0;
        if (expected == TM_WIRE_VARINT) {
          int shift = 0;
          while (run.pos < run.len && shift < 64) {
            uint8_t b = run.data[run.pos++];
            v |= (uint64_t)(b & 0x7f) << shift;
            shift += 7;
            if (!(b & 0x80))
              break;
          }
        } else {
          size_t n = expected == TM_WIRE_FIXED64 ? 8 : 4;
          if (run.len - run.pos < n)
            break;
          for (size_t i = 0; i < n; i++)
            v |= (uint64_t)run.data[run.pos + i] << (8 * i);
          run.pos += n;
        }
        indent(out, depth);
        g_string_append_printf(out, "%s: ", fd->name);
        print_scalar(out, fd, v);
        g_string_append_c(out, '\n');
      }
    } else {
      indent(out, depth);
      switch (f.wire_type) {
      case TM_WIRE_VARINT:
        g_string_append_printf(out, "%u: %" G_GUINT64_FORMAT "\n", f.number, f.value);
        break;
      case TM_WIRE_LEN: {
        const char *name =
            names->name ? names->name(names->user, desc, data, len, f.number) : NULL;
        if (name)
          g_string_append_printf(out, "%s: ", name);
        else
          g_string_append_printf(out, "%u: ", f.number);
        print_quoted(out, f.data, f.len, false);
        g_string_append_c(out, '\n');
        break;
      }
      default:
        g_string_append_printf(out, "%u: %" G_GUINT64_FORMAT "  # fixed%d\n", f.number,
                               f.value, f.wire_type == TM_WIRE_FIXED64 ? 64 : 32);
        break;
      }
    }
  }
}

char *tm_textproto_print_named(const ProtobufCMessageDescriptor *root, const uint8_t *data,
                               size_t len, tm_textproto_name_fn name, void *user) {
  GString *out = g_string_new(NULL);
  print_names names = {name, user};
  print_message(out, root, data, len, 0, &names);
  return g_string_free(out, FALSE);
}

char *tm_textproto_print(const ProtobufCMessageDescriptor *root, const uint8_t *data,
                         size_t len) {
  return tm_textproto_print_named(root, data, len, NULL, NULL);
}
