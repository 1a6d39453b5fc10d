/*
 * Protobuf text format → binary, driven by protobuf-c descriptors (see
 * textproto.h for the grammar and the guarantees).
 *
 * One pass: a lexer hands tokens to a recursive-descent parser that
 * encodes each field as it reads it; a nested message is encoded into its
 * own byte array and appended with its length when its block closes.
 * Every failure goes through fail(), which records the first error with
 * its line and column and makes every caller return false.
 */
#include "config/textproto.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config/protowire.h"

G_DEFINE_QUARK(tm-config-error-quark, tm_config_error)

typedef enum tok_kind { T_EOF, T_IDENT, T_NUMBER, T_STRING, T_PUNCT } tok_kind;

typedef struct token {
  tok_kind kind;
  size_t start, end; /* source range */
  uint32_t line, column;
  char punct;
} token;

typedef struct parser {
  const char *text;
  size_t len, pos;
  uint32_t line;
  size_t line_start;
  const tm_textproto_options *options;
  tm_textproto_result *out;
  GError **error;
  bool failed;
  bool has_peek;
  token peeked;
  GString *path;
  int depth;
  int skipping; /* > 0 while skipping an unknown field's value */
} parser;

/* --- errors ---------------------------------------------------------------- */

static bool fail(parser *p, uint32_t line, uint32_t column, int code, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);

static bool fail(parser *p, uint32_t line, uint32_t column, int code, const char *fmt, ...) {
  if (p->failed)
    return false;
  p->failed = true;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  const char *source = p->options && p->options->source_name ? p->options->source_name
                                                              : "(text)";
  g_set_error(p->error, TM_CONFIG_ERROR, code, "%s:%u:%u: %s", source, line, column, what);
  return false;
}

static bool fail_tok(parser *p, const token *t, int code, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

static bool fail_tok(parser *p, const token *t, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  return fail(p, t->line, t->column, code, "%s", what);
}

/* "'{'", "identifier 'foo'", "end of input"... for messages. */
static char *describe(const parser *p, const token *t) {
  size_t n = t->end - t->start;
  if (n > 40)
    n = 40;
  switch (t->kind) {
  case T_EOF:
    return g_strdup("end of input");
  case T_PUNCT:
    return g_strdup_printf("'%c'", t->punct);
  case T_IDENT:
    return g_strdup_printf("'%.*s'", (int)n, p->text + t->start);
  case T_NUMBER:
    return g_strdup_printf("number %.*s", (int)n, p->text + t->start);
  case T_STRING:
    return g_strdup("a string");
  }
  return g_strdup("?");
}

/* --- lexer ----------------------------------------------------------------- */

static bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

static void skip_space(parser *p) {
  while (p->pos < p->len) {
    char c = p->text[p->pos];
    if (c == '\n') {
      p->pos++;
      p->line++;
      p->line_start = p->pos;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      p->pos++;
    } else if (c == '#') {
      while (p->pos < p->len && p->text[p->pos] != '\n')
        p->pos++;
    } else {
      break;
    }
  }
}

static bool lex(parser *p, token *t) {
  skip_space(p);
  memset(t, 0, sizeof *t);
  t->start = p->pos;
  t->line = p->line;
  t->column = (uint32_t)(p->pos - p->line_start + 1);
  if (p->pos >= p->len) {
    t->kind = T_EOF;
    t->end = p->pos;
    return true;
  }
  char c = p->text[p->pos];
  char next = p->pos + 1 < p->len ? p->text[p->pos + 1] : '\0';
  if (is_ident_start(c) || (c == '-' && is_ident_start(next))) {
    p->pos++;
    while (p->pos < p->len && is_ident_char(p->text[p->pos]))
      p->pos++;
    t->kind = T_IDENT;
  } else if (is_digit(c) || (c == '.' && is_digit(next)) ||
             (c == '-' && (is_digit(next) || next == '.'))) {
    p->pos++;
    bool hex = c == '0' && (next == 'x' || next == 'X');
    while (p->pos < p->len) {
      char d = p->text[p->pos];
      char prev = p->text[p->pos - 1];
      if (is_ident_char(d) || d == '.' ||
          (!hex && (d == '+' || d == '-') && (prev == 'e' || prev == 'E')))
        p->pos++;
      else
        break;
    }
    t->kind = T_NUMBER;
  } else if (c == '"' || c == '\'') {
    p->pos++;
    for (;;) {
      if (p->pos >= p->len || p->text[p->pos] == '\n')
        return fail(p, t->line, t->column, TM_CONFIG_ERROR_SYNTAX,
                    "a string is not closed on its line");
      char d = p->text[p->pos];
      if (d == '\\') {
        p->pos += 2;
        if (p->pos > p->len)
          p->pos = p->len;
        continue;
      }
      p->pos++;
      if (d == c)
        break;
    }
    t->kind = T_STRING;
  } else if (strchr("{}<>[]:,;", c) && c != '\0') {
    p->pos++;
    t->kind = T_PUNCT;
    t->punct = c;
  } else {
    if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
      return fail(p, t->line, t->column, TM_CONFIG_ERROR_SYNTAX,
                  "unexpected byte 0x%02x", (unsigned char)c);
    return fail(p, t->line, t->column, TM_CONFIG_ERROR_SYNTAX, "unexpected character '%c'", c);
  }
  t->end = p->pos;
  return true;
}

static bool next(parser *p, token *t) {
  if (p->has_peek) {
    *t = p->peeked;
    p->has_peek = false;
    return true;
  }
  return lex(p, t);
}

static bool peek(parser *p, token *t) {
  if (!p->has_peek) {
    if (!lex(p, &p->peeked))
      return false;
    p->has_peek = true;
  }
  *t = p->peeked;
  return true;
}

static bool is_punct(const token *t, char c) {
  return t->kind == T_PUNCT && t->punct == c;
}

static bool token_is(const parser *p, const token *t, const char *word) {
  size_t n = strlen(word);
  return t->kind == T_IDENT && t->end - t->start == n && memcmp(p->text + t->start, word, n) == 0;
}

/* --- values ---------------------------------------------------------------- */

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static void put_utf8(GByteArray *out, uint32_t cp) {
  uint8_t b[4];
  guint n;
  if (cp < 0x80) {
    b[0] = (uint8_t)cp;
    n = 1;
  } else if (cp < 0x800) {
    b[0] = (uint8_t)(0xc0 | (cp >> 6));
    b[1] = (uint8_t)(0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    b[0] = (uint8_t)(0xe0 | (cp >> 12));
    b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    b[2] = (uint8_t)(0x80 | (cp & 0x3f));
    n = 3;
  } else {
    b[0] = (uint8_t)(0xf0 | (cp >> 18));
    b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
    b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    b[3] = (uint8_t)(0x80 | (cp & 0x3f));
    n = 4;
  }
  g_byte_array_append(out, b, n);
}

/* Appends the bytes of one string literal (quotes and escapes removed). */
static bool decode_string(parser *p, const token *t, GByteArray *out) {
  const char *s = p->text + t->start;
  size_t n = t->end - t->start;
  /* The lexer made sure the literal ends with its (unescaped) quote. */
  size_t i = 1;
  while (i < n - 1) {
    char c = s[i];
    if (c != '\\') {
      g_byte_array_append(out, (const guint8 *)&c, 1);
      i++;
      continue;
    }
    uint32_t column = t->column + (uint32_t)i;
    if (i + 1 >= n)
      return fail(p, t->line, column, TM_CONFIG_ERROR_SYNTAX, "a string ends with '\\'");
    char e = s[i + 1];
    i += 2;
    uint8_t byte;
    switch (e) {
    case 'a': byte = '\a'; break;
    case 'b': byte = '\b'; break;
    case 'f': byte = '\f'; break;
    case 'n': byte = '\n'; break;
    case 'r': byte = '\r'; break;
    case 't': byte = '\t'; break;
    case 'v': byte = '\v'; break;
    case '\\': byte = '\\'; break;
    case '\'': byte = '\''; break;
    case '"': byte = '"'; break;
    case '?': byte = '?'; break;
    case 'x':
    case 'X': {
      unsigned v = 0;
      int digits = 0;
      while (digits < 2 && i < n - 1 && hex_value(s[i]) >= 0) {
        v = v * 16 + (unsigned)hex_value(s[i]);
        i++;
        digits++;
      }
      if (!digits)
        return fail(p, t->line, column, TM_CONFIG_ERROR_SYNTAX, "'\\x' without hex digits");
      byte = (uint8_t)v;
      break;
    }
    case 'u':
    case 'U': {
      int want = e == 'u' ? 4 : 8;
      uint32_t v = 0;
      for (int k = 0; k < want; k++, i++) {
        if (i >= n - 1 || hex_value(s[i]) < 0)
          return fail(p, t->line, column, TM_CONFIG_ERROR_SYNTAX,
                      "'\\%c' needs %d hex digits", e, want);
        v = v * 16 + (uint32_t)hex_value(s[i]);
      }
      if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return fail(p, t->line, column, TM_CONFIG_ERROR_SYNTAX,
                    "'\\%c' names no Unicode character", e);
      put_utf8(out, v);
      continue;
    }
    default:
      if (e >= '0' && e <= '7') {
        unsigned v = (unsigned)(e - '0');
        for (int k = 0; k < 2 && i < n - 1 && s[i] >= '0' && s[i] <= '7'; k++, i++)
          v = v * 8 + (unsigned)(s[i] - '0');
        if (v > 255)
          return fail(p, t->line, column, TM_CONFIG_ERROR_SYNTAX,
                      "octal escape larger than \\377");
        byte = (uint8_t)v;
        break;
      }
      return fail(p, t->line, column, TM_CONFIG_ERROR_SYNTAX, "unknown escape '\\%c'", e);
    }
    g_byte_array_append(out, &byte, 1);
  }
  return true;
}

/* Reads one or more adjacent string literals. */
static bool read_strings(parser *p, const token *first, GByteArray *out) {
  if (!decode_string(p, first, out))
    return false;
  token t;
  while (peek(p, &t) && t.kind == T_STRING) {
    next(p, &t);
    if (!decode_string(p, &t, out))
      return false;
  }
  return !p->failed;
}

/* An integer literal: sign and magnitude. */
typedef enum int_parse { INT_NOT = 0, INT_OK = 1, INT_OVERFLOW = 2 } int_parse;

static int_parse parse_integer_ex(const char *s, size_t n, bool *negative, uint64_t *magnitude) {
  size_t i = 0;
  *negative = false;
  if (i < n && s[i] == '-') {
    *negative = true;
    i++;
  }
  if (i >= n)
    return INT_NOT;
  unsigned base = 10;
  if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    base = 16;
    i += 2;
  } else if (n - i > 1 && s[i] == '0') {
    base = 8;
    i++;
  }
  uint64_t v = 0;
  bool overflow = false;
  for (; i < n; i++) {
    int d = hex_value(s[i]);
    if (d < 0 || (unsigned)d >= base)
      return INT_NOT;
    if (v > (UINT64_MAX - (uint64_t)d) / base)
      overflow = true;
    v = v * base + (uint64_t)d;
  }
  *magnitude = v;
  return overflow ? INT_OVERFLOW : INT_OK;
}

static bool parse_integer(const char *s, size_t n, bool *negative, uint64_t *magnitude) {
  return parse_integer_ex(s, n, negative, magnitude) == INT_OK;
}

static bool parse_double(const parser *p, const token *t, double *out) {
  size_t n = t->end - t->start;
  const char *s = p->text + t->start;
  if (t->kind == T_IDENT) {
    bool neg = s[0] == '-';
    g_autofree char *word = g_ascii_strdown(s + neg, (gssize)(n - neg));
    if (!strcmp(word, "inf") || !strcmp(word, "infinity")) {
      *out = neg ? -INFINITY : INFINITY;
      return true;
    }
    if (!strcmp(word, "nan")) {
      *out = NAN;
      return true;
    }
    return false;
  }
  if (t->kind != T_NUMBER)
    return false;
  if (n > 1 && (s[n - 1] == 'f' || s[n - 1] == 'F') && !(n > 2 && (s[1] == 'x' || s[1] == 'X')))
    n--;
  g_autofree char *copy = g_strndup(s, n);
  bool negative;
  uint64_t magnitude;
  if (parse_integer(copy, n, &negative, &magnitude)) {
    *out = negative ? -(double)magnitude : (double)magnitude;
    return true;
  }
  char *end = NULL;
  errno = 0;
  double v = g_ascii_strtod(copy, &end);
  if (end != copy + n || copy[0] == '\0')
    return false;
  /* Hexadecimal floats and "infinity" spelled as a number are not text format. */
  if (strpbrk(copy, "xXnN"))
    return false;
  *out = v;
  return true;
}

static const char *type_name(ProtobufCType type) {
  static const char *const names[] = {"int32",  "sint32", "sfixed32", "int64",  "sint64",
                                      "sfixed64", "uint32", "fixed32", "uint64", "fixed64",
                                      "float",  "double", "bool",     "enum",   "string",
                                      "bytes",  "message"};
  return (unsigned)type < G_N_ELEMENTS(names) ? names[type] : "?";
}

/* The values of an enum, for "expected one of" messages. */
static char *enum_names(const ProtobufCEnumDescriptor *ed) {
  GString *s = g_string_new(NULL);
  for (unsigned i = 0; i < ed->n_values; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", ed->values[i].name);
  return g_string_free(s, FALSE);
}

/* Encodes one scalar value of field `fd`. */
static bool parse_scalar(parser *p, const ProtobufCFieldDescriptor *fd, GByteArray *out) {
  token t;
  if (!next(p, &t))
    return false;
  const char *s = p->text + t.start;
  size_t n = t.end - t.start;
  g_autofree char *found = describe(p, &t);
  switch (fd->type) {
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_BYTES: {
    if (t.kind != T_STRING)
      return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE, "%s wants a string, found %s", fd->name,
                      found);
    g_autoptr(GByteArray) bytes = g_byte_array_new();
    if (!read_strings(p, &t, bytes))
      return false;
    if (fd->type == PROTOBUF_C_TYPE_STRING &&
        !g_utf8_validate((const char *)bytes->data, bytes->len, NULL))
      return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE, "%s wants UTF-8 text", fd->name);
    tm_wire_put_bytes(out, fd->id, bytes->data, bytes->len);
    return true;
  }
  case PROTOBUF_C_TYPE_BOOL: {
    int v = -1;
    if (token_is(p, &t, "true") || token_is(p, &t, "True") || token_is(p, &t, "t") ||
        (t.kind == T_NUMBER && n == 1 && s[0] == '1'))
      v = 1;
    else if (token_is(p, &t, "false") || token_is(p, &t, "False") || token_is(p, &t, "f") ||
             (t.kind == T_NUMBER && n == 1 && s[0] == '0'))
      v = 0;
    if (v < 0)
      return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE, "%s wants true or false, found %s",
                      fd->name, found);
    tm_wire_put_tag(out, fd->id, TM_WIRE_VARINT);
    tm_wire_put_varint(out, (uint64_t)v);
    return true;
  }
  case PROTOBUF_C_TYPE_FLOAT:
  case PROTOBUF_C_TYPE_DOUBLE: {
    double v;
    if (!parse_double(p, &t, &v))
      return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE, "%s wants a number, found %s", fd->name,
                      found);
    if (fd->type == PROTOBUF_C_TYPE_FLOAT) {
      float f = (float)v;
      uint32_t bits;
      memcpy(&bits, &f, 4);
      tm_wire_put_tag(out, fd->id, TM_WIRE_FIXED32);
      tm_wire_put_fixed32(out, bits);
    } else {
      uint64_t bits;
      memcpy(&bits, &v, 8);
      tm_wire_put_tag(out, fd->id, TM_WIRE_FIXED64);
      tm_wire_put_fixed64(out, bits);
    }
    return true;
  }
  case PROTOBUF_C_TYPE_ENUM: {
    const ProtobufCEnumDescriptor *ed = fd->descriptor;
    const ProtobufCEnumValue *ev = NULL;
    g_autofree char *expected = enum_names(ed);
    if (t.kind == T_IDENT) {
      g_autofree char *word = g_strndup(s, n);
      ev = protobuf_c_enum_descriptor_get_value_by_name(ed, word);
      if (!ev)
        return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE,
                        "unknown value '%s' for %s (enum %s; expected one of %s)", word,
                        fd->name, ed->name, expected);
    } else if (t.kind == T_NUMBER) {
      bool negative;
      uint64_t magnitude;
      if (!parse_integer(s, n, &negative, &magnitude) ||
          magnitude > (negative ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX))
        return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE, "%s wants an enum value, found %s",
                        fd->name, found);
      int value = negative ? (int)(-(int64_t)magnitude) : (int)magnitude;
      ev = protobuf_c_enum_descriptor_get_value(ed, value);
      if (!ev)
        return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE,
                        "unknown value %d for %s (enum %s; expected one of %s)", value,
                        fd->name, ed->name, expected);
    } else {
      return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE, "%s wants an enum value, found %s",
                      fd->name, found);
    }
    tm_wire_put_tag(out, fd->id, TM_WIRE_VARINT);
    tm_wire_put_varint(out, (uint64_t)(int64_t)ev->value);
    return true;
  }
  case PROTOBUF_C_TYPE_MESSAGE:
    return fail_tok(p, &t, TM_CONFIG_ERROR_SYNTAX, "%s is a message: write %s { ... }",
                    fd->name, fd->name);
  default:
    break;
  }

  /* Integers. */
  bool negative;
  uint64_t magnitude;
  int_parse parsed = t.kind == T_NUMBER ? parse_integer_ex(s, n, &negative, &magnitude) : INT_NOT;
  if (parsed != INT_OK) {
    if (parsed == INT_OVERFLOW)
      return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE, "%.*s is out of range for %s (%s)", (int)n,
                      s, fd->name, type_name(fd->type));
    return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE, "%s wants an integer, found %s", fd->name,
                    found);
  }
  bool is_signed = fd->type == PROTOBUF_C_TYPE_INT32 || fd->type == PROTOBUF_C_TYPE_SINT32 ||
                   fd->type == PROTOBUF_C_TYPE_SFIXED32 || fd->type == PROTOBUF_C_TYPE_INT64 ||
                   fd->type == PROTOBUF_C_TYPE_SINT64 || fd->type == PROTOBUF_C_TYPE_SFIXED64;
  bool is_32 = fd->type == PROTOBUF_C_TYPE_INT32 || fd->type == PROTOBUF_C_TYPE_SINT32 ||
               fd->type == PROTOBUF_C_TYPE_SFIXED32 || fd->type == PROTOBUF_C_TYPE_UINT32 ||
               fd->type == PROTOBUF_C_TYPE_FIXED32;
  uint64_t limit;
  if (is_signed)
    limit = is_32 ? (negative ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX)
                  : (negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX);
  else
    limit = negative ? 0 : (is_32 ? UINT32_MAX : UINT64_MAX);
  if (magnitude > limit)
    return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE, "%.*s is out of range for %s (%s)", (int)n, s,
                    fd->name, type_name(fd->type));
  uint64_t bits = negative ? (uint64_t)0 - magnitude : magnitude; /* two's complement */
  switch (fd->type) {
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SINT64: {
    int64_t v = (int64_t)bits;
    tm_wire_put_tag(out, fd->id, TM_WIRE_VARINT);
    tm_wire_put_varint(out, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
    break;
  }
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_SFIXED32:
    tm_wire_put_tag(out, fd->id, TM_WIRE_FIXED32);
    tm_wire_put_fixed32(out, (uint32_t)bits);
    break;
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_SFIXED64:
    tm_wire_put_tag(out, fd->id, TM_WIRE_FIXED64);
    tm_wire_put_fixed64(out, bits);
    break;
  default: /* int32 (sign-extended to 64 bits), int64, uint32, uint64 */
    tm_wire_put_tag(out, fd->id, TM_WIRE_VARINT);
    tm_wire_put_varint(out, bits);
    break;
  }
  return true;
}

/* --- fields and messages ------------------------------------------------------ */

static bool parse_fields(parser *p, const ProtobufCMessageDescriptor *desc, GByteArray *out,
                         const token *open);

static void add_position(parser *p, const token *t) {
  if (p->skipping)
    return;
  tm_textproto_position *pos = g_new0(tm_textproto_position, 1);
  pos->path = g_strdup(p->path->str);
  pos->line = t->line;
  pos->column = t->column;
  g_ptr_array_add(p->out->positions, pos);
}

static size_t path_push(parser *p, const char *name, bool repeated, unsigned index) {
  size_t old = p->path->len;
  if (old)
    g_string_append_c(p->path, '.');
  g_string_append(p->path, name);
  if (repeated)
    g_string_append_printf(p->path, "[%u]", index);
  return old;
}

/* Reads `{ ... }` or `< ... >` after its opening token as message `desc`
 * (NULL: fields by number only) and appends it as field `number`. */
static bool parse_block(parser *p, const ProtobufCMessageDescriptor *desc, uint32_t number,
                        const token *open, GByteArray *out) {
  if (p->depth >= TM_TEXTPROTO_MAX_DEPTH)
    return fail_tok(p, open, TM_CONFIG_ERROR_SYNTAX, "blocks nest deeper than %d",
                    TM_TEXTPROTO_MAX_DEPTH);
  g_autoptr(GByteArray) inner = g_byte_array_new();
  p->depth++;
  bool ok = parse_fields(p, desc, inner, open);
  p->depth--;
  if (ok)
    tm_wire_put_bytes(out, number, inner->data, inner->len);
  return ok;
}

static bool expect_block_open(parser *p, const char *name, token *t) {
  if (!next(p, t))
    return false;
  if (is_punct(t, '{') || is_punct(t, '<'))
    return true;
  g_autofree char *found = describe(p, t);
  return fail_tok(p, t, TM_CONFIG_ERROR_SYNTAX, "expected '{' after %s, found %s", name, found);
}

/* One occurrence (or one list element) of a known field. */
static bool parse_known_value(parser *p, const ProtobufCFieldDescriptor *fd, unsigned *count,
                              const token *at, GByteArray *out) {
  bool repeated = fd->label == PROTOBUF_C_LABEL_REPEATED;
  size_t old = path_push(p, fd->name, repeated, *count);
  (*count)++;
  add_position(p, at);
  bool ok;
  token first;
  if (fd->type == PROTOBUF_C_TYPE_MESSAGE && !fd->descriptor && peek(p, &first) &&
      first.kind == T_STRING) {
    /* An opaque block (a resolved field without a schema) given as the
     * string of its bytes. */
    next(p, &first);
    g_autoptr(GByteArray) bytes = g_byte_array_new();
    ok = read_strings(p, &first, bytes);
    if (ok)
      tm_wire_put_bytes(out, fd->id, bytes->data, bytes->len);
  } else if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
    token open;
    ok = expect_block_open(p, fd->name, &open) && parse_block(p, fd->descriptor, fd->id, &open, out);
  } else {
    ok = parse_scalar(p, fd, out);
  }
  g_string_truncate(p->path, old);
  return ok;
}

/* `[a, b, ...]` after the opening '[': each element through `one`. */
typedef bool (*element_fn)(parser *p, void *ctx, const token *at);

static bool parse_list(parser *p, const token *open, element_fn one, void *ctx) {
  token t;
  if (!peek(p, &t))
    return false;
  if (is_punct(&t, ']')) {
    next(p, &t);
    return true;
  }
  for (;;) {
    if (!peek(p, &t))
      return false;
    if (t.kind == T_EOF)
      return fail_tok(p, open, TM_CONFIG_ERROR_SYNTAX, "this list is not closed with ']'");
    if (!one(p, ctx, &t))
      return false;
    if (!next(p, &t))
      return false;
    if (is_punct(&t, ']'))
      return true;
    if (!is_punct(&t, ',')) {
      g_autofree char *found = describe(p, &t);
      if (t.kind == T_EOF)
        return fail_tok(p, open, TM_CONFIG_ERROR_SYNTAX, "this list is not closed with ']'");
      return fail_tok(p, &t, TM_CONFIG_ERROR_SYNTAX, "expected ',' or ']' in a list, found %s",
                      found);
    }
  }
}

typedef struct known_ctx {
  const ProtobufCFieldDescriptor *fd;
  unsigned *count;
  GByteArray *out;
} known_ctx;

static bool known_element(parser *p, void *ctx, const token *at) {
  known_ctx *k = ctx;
  return parse_known_value(p, k->fd, k->count, at, k->out);
}

/* A field number used as a name: the value is encoded by its shape. */
static bool parse_numbered_value(parser *p, uint32_t number, GByteArray *out) {
  token t;
  if (!next(p, &t))
    return false;
  if (is_punct(&t, '{') || is_punct(&t, '<'))
    return parse_block(p, NULL, number, &t, out);
  if (t.kind == T_STRING) {
    g_autoptr(GByteArray) bytes = g_byte_array_new();
    if (!read_strings(p, &t, bytes))
      return false;
    tm_wire_put_bytes(out, number, bytes->data, bytes->len);
    return true;
  }
  bool negative;
  uint64_t magnitude;
  if (t.kind == T_NUMBER &&
      parse_integer(p->text + t.start, t.end - t.start, &negative, &magnitude)) {
    tm_wire_put_tag(out, number, TM_WIRE_VARINT);
    tm_wire_put_varint(out, negative ? (uint64_t)0 - magnitude : magnitude);
    return true;
  }
  if (token_is(p, &t, "true") || token_is(p, &t, "false")) {
    tm_wire_put_tag(out, number, TM_WIRE_VARINT);
    tm_wire_put_varint(out, token_is(p, &t, "true") ? 1 : 0);
    return true;
  }
  g_autofree char *found = describe(p, &t);
  return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE,
                  "field %u is not in the schema: its value must be an integer, a string "
                  "or a block, found %s",
                  number, found);
}

typedef struct numbered_ctx {
  uint32_t number;
  GByteArray *out;
} numbered_ctx;

static bool numbered_element(parser *p, void *ctx, const token *at) {
  (void)at;
  numbered_ctx *k = ctx;
  return parse_numbered_value(p, k->number, k->out);
}

/* Skips an unknown field's value (any shape), so parsing goes on. */
static bool skip_value(parser *p);

static bool skip_element(parser *p, void *ctx, const token *at) {
  (void)ctx;
  (void)at;
  return skip_value(p);
}

static bool skip_value(parser *p) {
  token t;
  if (!next(p, &t))
    return false;
  if (is_punct(&t, '{') || is_punct(&t, '<')) {
    g_autoptr(GByteArray) sink = g_byte_array_new();
    return parse_block(p, NULL, 1, &t, sink);
  }
  if (is_punct(&t, '[')) {
    if (p->depth >= TM_TEXTPROTO_MAX_DEPTH)
      return fail_tok(p, &t, TM_CONFIG_ERROR_SYNTAX, "lists nest deeper than %d",
                      TM_TEXTPROTO_MAX_DEPTH);
    p->depth++;
    bool ok = parse_list(p, &t, skip_element, NULL);
    p->depth--;
    return ok;
  }
  if (t.kind == T_STRING) {
    g_autoptr(GByteArray) sink = g_byte_array_new();
    return read_strings(p, &t, sink);
  }
  if (t.kind == T_NUMBER || t.kind == T_IDENT)
    return true;
  g_autofree char *found = describe(p, &t);
  return fail_tok(p, &t, TM_CONFIG_ERROR_SYNTAX, "expected a value, found %s", found);
}

static bool skip_unknown(parser *p, const token *name_tok, const char *name) {
  token t;
  if (!peek(p, &t))
    return false;
  if (is_punct(&t, ':'))
    next(p, &t);
  p->skipping++;
  bool ok = skip_value(p);
  p->skipping--;
  if (!ok)
    return false;
  if (p->skipping)
    return true;
  tm_textproto_unknown *u = g_new0(tm_textproto_unknown, 1);
  u->path = g_strdup(p->path->str);
  u->name = g_strdup(name);
  u->line = name_tok->line;
  u->column = name_tok->column;
  /* The source text of the field; the lexer stopped right after its value. */
  size_t end = p->has_peek ? p->peeked.start : p->pos;
  while (end > name_tok->start && g_ascii_isspace(p->text[end - 1]))
    end--;
  u->text = g_strndup(p->text + name_tok->start, end - name_tok->start);
  g_ptr_array_add(p->out->unknown, u);
  return true;
}

/* Per message instance: where each singular field was first set. */
typedef struct seen_field {
  uint32_t line, column; /* 0: not seen */
} seen_field;

static bool parse_fields(parser *p, const ProtobufCMessageDescriptor *desc, GByteArray *out,
                         const token *open) {
  char close = !open ? '\0' : is_punct(open, '<') ? '>' : '}';
  unsigned n_fields = desc ? desc->n_fields : 0;
  g_autofree seen_field *seen = g_new0(seen_field, n_fields ? n_fields : 1);
  g_autofree unsigned *counts = g_new0(unsigned, n_fields ? n_fields : 1);
  for (;;) {
    token t;
    if (!next(p, &t))
      return false;
    if (t.kind == T_EOF) {
      if (!close)
        return true;
      return fail_tok(p, open, TM_CONFIG_ERROR_SYNTAX,
                      "this block is not closed: expected '%c' before the end of the input",
                      close);
    }
    if (close && is_punct(&t, close))
      return true;

    /* The field's name: an identifier, a number, or [an.extension]. */
    g_autofree char *name = NULL;
    uint32_t number = 0;
    if (t.kind == T_IDENT && p->text[t.start] != '-') {
      name = g_strndup(p->text + t.start, t.end - t.start);
    } else if (t.kind == T_NUMBER) {
      bool negative;
      uint64_t magnitude;
      if (!parse_integer(p->text + t.start, t.end - t.start, &negative, &magnitude) ||
          negative || magnitude == 0 || magnitude > 0x1fffffff || p->text[t.start] == '0')
        return fail_tok(p, &t, TM_CONFIG_ERROR_SYNTAX,
                        "a field number must be a decimal integer from 1 to 536870911");
      number = (uint32_t)magnitude;
    } else if (is_punct(&t, '[')) {
      /* [an.extension] or [type.url/of.Any]: scanned as raw characters
       * (the lexer has no '.' or '/' tokens); no token is pending here. */
      skip_space(p);
      size_t start = p->pos;
      while (p->pos < p->len && (is_ident_char(p->text[p->pos]) || p->text[p->pos] == '.' ||
                                 p->text[p->pos] == '/'))
        p->pos++;
      size_t end = p->pos;
      skip_space(p);
      if (end == start || p->pos >= p->len || p->text[p->pos] != ']')
        return fail(p, p->line, (uint32_t)(p->pos - p->line_start + 1), TM_CONFIG_ERROR_SYNTAX,
                    "expected an extension name and ']'");
      p->pos++;
      name = g_strdup_printf("[%.*s]", (int)(end - start), p->text + start);
    } else {
      g_autofree char *found = describe(p, &t);
      if (close && t.kind == T_PUNCT && (t.punct == '}' || t.punct == '>'))
        return fail_tok(p, &t, TM_CONFIG_ERROR_SYNTAX, "expected '%c' to close the block, found %s",
                        close, found);
      return fail_tok(p, &t, TM_CONFIG_ERROR_SYNTAX, "expected a field name, found %s", found);
    }

    const ProtobufCFieldDescriptor *fd = NULL;
    if (desc && name && name[0] != '[')
      fd = protobuf_c_message_descriptor_get_field_by_name(desc, name);
    else if (desc && number)
      fd = protobuf_c_message_descriptor_get_field(desc, number);
    if (!fd && desc && name && name[0] != '[' && p->options && p->options->resolve)
      fd = p->options->resolve(p->options->resolve_user, desc, name);

    if (!fd && !number) {
      if (!skip_unknown(p, &t, name))
        return false;
    } else if (!fd) {
      char digits[16];
      g_snprintf(digits, sizeof digits, "%u", number);
      size_t old = path_push(p, digits, false, 0);
      add_position(p, &t);
      g_string_truncate(p->path, old);
      token sep;
      if (!peek(p, &sep))
        return false;
      if (is_punct(&sep, ':'))
        next(p, &sep);
      if (!peek(p, &sep))
        return false;
      numbered_ctx k = {number, out};
      if (is_punct(&sep, '[')) {
        next(p, &sep);
        if (!parse_list(p, &sep, numbered_element, &k))
          return false;
      } else if (!parse_numbered_value(p, number, out)) {
        return false;
      }
    } else {
      /* Fields resolved by the callback are not in `desc->fields`. */
      ptrdiff_t index = desc && fd >= desc->fields && fd < desc->fields + desc->n_fields
                            ? fd - desc->fields
                            : -1;
      unsigned spare_count = 0;
      unsigned *count = index >= 0 ? &counts[index] : &spare_count;
      bool repeated = fd->label == PROTOBUF_C_LABEL_REPEATED;
      if (!repeated && index >= 0) {
        if (seen[index].line)
          return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE,
                          "%s is set twice (first at line %u, column %u); it is not repeated",
                          fd->name, seen[index].line, seen[index].column);
        if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
          for (unsigned i = 0; i < n_fields; i++) {
            const ProtobufCFieldDescriptor *other = &desc->fields[i];
            if ((ptrdiff_t)i != index && seen[i].line && (other->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                other->quantifier_offset == fd->quantifier_offset)
              return fail_tok(p, &t, TM_CONFIG_ERROR_VALUE,
                              "%s and %s (line %u) are alternatives (a oneof): set only one",
                              fd->name, other->name, seen[i].line);
          }
        }
        seen[index].line = t.line;
        seen[index].column = t.column;
      }
      token sep;
      if (!peek(p, &sep))
        return false;
      bool colon = is_punct(&sep, ':');
      if (colon) {
        next(p, &sep);
        if (!peek(p, &sep))
          return false;
      } else if (fd->type != PROTOBUF_C_TYPE_MESSAGE) {
        g_autofree char *found = describe(p, &sep);
        return fail_tok(p, &sep, TM_CONFIG_ERROR_SYNTAX, "expected ':' after %s, found %s",
                        fd->name, found);
      }
      if (is_punct(&sep, '[')) {
        if (!repeated)
          return fail_tok(p, &sep, TM_CONFIG_ERROR_VALUE,
                          "%s is not repeated: it takes one value, not a list", fd->name);
        next(p, &sep);
        known_ctx k = {fd, count, out};
        if (!parse_list(p, &sep, known_element, &k))
          return false;
      } else if (!parse_known_value(p, fd, count, &t, out)) {
        return false;
      }
    }

    token sep;
    if (!peek(p, &sep))
      return false;
    if (is_punct(&sep, ',') || is_punct(&sep, ';'))
      next(p, &sep);
  }
}

bool tm_textproto_parse(const ProtobufCMessageDescriptor *root, const char *text, size_t len,
                        const tm_textproto_options *options, tm_textproto_result *out,
                        GError **error) {
  memset(out, 0, sizeof *out);
  out->bytes = g_byte_array_new();
  out->positions = g_ptr_array_new();
  out->unknown = g_ptr_array_new_with_free_func(tm_textproto_unknown_free);
  parser p = {0};
  p.text = text ? text : "";
  p.len = text ? len : 0;
  p.line = 1;
  p.options = options;
  p.out = out;
  p.error = error;
  p.path = g_string_new(NULL);
  bool ok = parse_fields(&p, root, out->bytes, NULL);
  g_string_free(p.path, TRUE);
  if (!ok) {
    if (!p.failed) /* every false return sets the error; keep the promise */
      g_set_error(error, TM_CONFIG_ERROR, TM_CONFIG_ERROR_SYNTAX, "text format parse failed");
    tm_textproto_result_clear(out);
  }
  return ok;
}

static void position_free(gpointer data) {
  tm_textproto_position *pos = data;
  g_free(pos->path);
  g_free(pos);
}

void tm_textproto_unknown_free(gpointer data) {
  tm_textproto_unknown *u = data;
  if (!u)
    return;
  g_free(u->path);
  g_free(u->name);
  g_free(u->text);
  g_free(u);
}

void tm_textproto_result_clear(tm_textproto_result *result) {
  if (result->bytes)
    g_byte_array_unref(result->bytes);
  if (result->positions) {
    g_ptr_array_set_free_func(result->positions, position_free);
    g_ptr_array_unref(result->positions);
  }
  if (result->unknown)
    g_ptr_array_unref(result->unknown);
  memset(result, 0, sizeof *result);
}

const tm_textproto_position *tm_textproto_find_position(const tm_textproto_result *result,
                                                        const char *path) {
  if (!result || !result->positions || !path)
    return NULL;
  g_autofree char *probe = g_strdup(path);
  for (;;) {
    for (guint i = 0; i < result->positions->len; i++) {
      const tm_textproto_position *pos = result->positions->pdata[i];
      if (!strcmp(pos->path, probe))
        return pos;
    }
    char *cut = strrchr(probe, '.');
    char *bracket = strrchr(probe, '[');
    if (bracket && (!cut || bracket > cut)) {
      /* "a.b[2]" → "a.b" is not a recorded path; go to "a". */
      *bracket = '\0';
      cut = strrchr(probe, '.');
    }
    if (!cut)
      return NULL;
    *cut = '\0';
  }
}
