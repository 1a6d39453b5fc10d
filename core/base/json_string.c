/* JSON string literals (see json_string.h). */
#include "base/json_string.h"

#include <stdint.h>
#include <string.h>

/* 1 for the bytes written as they are with nothing to check: ASCII from
 * the space up, but '"' (0x22) and '\\' (0x5c). One load per byte in the
 * loop every literal spends its time in. */
static const unsigned char plain_ascii[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* The length of the valid UTF-8 sequence at s[0, len) whose first byte is
 * >= 0x80, or 0 if it is not one (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s, size_t len) {
  unsigned char c = s[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0)
      lo = 0xa0; /* overlong below U+0800 */
    else if (c == 0xed)
      hi = 0x9f; /* surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0)
      lo = 0x90; /* overlong below U+10000 */
    else if (c == 0xf4)
      hi = 0x8f; /* above U+10FFFF */
  } else {
    return 0;
  }
  if (len < n || s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xbf)
      return 0;
  return n;
}

static void hex4(char out[TM_JSON_ESCAPE_MAX], unsigned v) {
  static const char digits[] = "0123456789abcdef";
  out[0] = '\\';
  out[1] = 'u';
  out[2] = digits[(v >> 12) & 0xf];
  out[3] = digits[(v >> 8) & 0xf];
  out[4] = digits[(v >> 4) & 0xf];
  out[5] = digits[v & 0xf];
  out[6] = '\0';
}

size_t tm_json_plain_prefix(const char *text, size_t len, char escape[TM_JSON_ESCAPE_MAX],
                            size_t *consumed) {
  const unsigned char *s = (const unsigned char *)text;
  size_t i = 0;
  for (;;) {
    /* Plain ASCII, the bulk of every name and value. */
    while (i < len && plain_ascii[s[i]])
      i++;
    if (i == len)
      return i;
    unsigned char c = s[i];
    if (c < 0x80)
      break;
    size_t n = utf8_sequence(s + i, len - i);
    if (n == 0)
      break;
    /* U+2028, U+2029: E2 80 A8 / A9. */
    if (n == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
      hex4(escape, s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
      *consumed = 3;
      return i;
    }
    i += n;
  }
  unsigned char c = s[i];
  *consumed = 1;
  char short_form = c == '"'    ? '"'
                    : c == '\\' ? '\\'
                    : c == '\b' ? 'b'
                    : c == '\f' ? 'f'
                    : c == '\n' ? 'n'
                    : c == '\r' ? 'r'
                    : c == '\t' ? 't'
                                : 0;
  if (short_form) {
    escape[0] = '\\';
    escape[1] = short_form;
    escape[2] = '\0';
  } else {
    hex4(escape, c); /* a control byte, or a byte that is not UTF-8 */
  }
  return i;
}

void tm_json_append_string(GString *out, const char *s, size_t len) {
  g_string_append_c(out, '"');
  while (len) {
    char escape[TM_JSON_ESCAPE_MAX];
    size_t consumed = 0;
    size_t plain = tm_json_plain_prefix(s, len, escape, &consumed);
    g_string_append_len(out, s, (gssize)plain);
    if (plain == len)
      break;
    g_string_append(out, escape);
    s += plain + consumed;
    len -= plain + consumed;
  }
  g_string_append_c(out, '"');
}

void tm_json_append_cstring(GString *out, const char *s) {
  tm_json_append_string(out, s ? s : "", s ? strlen(s) : 0);
}
