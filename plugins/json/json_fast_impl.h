/*
 * The element tokenizer's implementation, in a header so that the reader
 * can inline it with its callback tables known: every callback then is a
 * direct call (json_fast.c compiles the same code once, with tables given
 * at run time, for the tests). See json_fast.h for what it accepts and
 * why declining is always safe. The grammar is yajl 2.1's as the reader
 * configures it (no comments, strings not UTF-8 checked):
 *
 *   number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
 *   string: bytes >= 0x20 but '"' and '\'; escapes \" \\ \/ \b \f \n \r \t
 *           and \uXXXX (a high surrogate only when a low one follows:
 *           yajl's decoding of the other cases is its own, left to it)
 *
 * A literal or number must be followed by a delimiter this tokenizer
 * knows (whitespace, ',', '}' or ']'); otherwise it declines, because
 * yajl would lex the next token and report an error there.
 */
#ifndef TM_JSON_FAST_IMPL_H
#define TM_JSON_FAST_IMPL_H

#include "json_fast.h"

#include <string.h>

#if defined(__SSE2__) && !defined(TM_JSON_NO_SIMD)
#include <emmintrin.h>
#define JSON_FAST_SSE2 1
#endif

#if defined(__GNUC__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define JSON_FAST_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define LIKELY(x) (x)
#define JSON_FAST_ALWAYS_INLINE inline
#endif

static inline bool is_space(uint8_t c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* The first byte at or after p that is not a digit; `end` if none. Eight
 * bytes at a time where words can be read in text order: numbers are a
 * third of an event's bytes. */
static inline const uint8_t *skip_digits(const uint8_t *p,
                                         const uint8_t *end) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                           \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  while (end - p >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    /* A digit becomes 0..9: no high nibble, and none after adding 6.
     * A carry out of a byte only follows a non-digit, which comes
     * first anyway. */
    uint64_t x = v ^ 0x3030303030303030ull;
    uint64_t bad = (x | (x + 0x0606060606060606ull)) & 0xf0f0f0f0f0f0f0f0ull;
    if (bad)
      return p + (__builtin_ctzll(bad) >> 3);
    p += 8;
  }
#endif
  while (p < end && is_digit(*p))
    p++;
  return p;
}

/* Most producers write no whitespace inside events: one test then. */
static inline const uint8_t *skip_space(const uint8_t *p, const uint8_t *end) {
  if (LIKELY(p < end && *p > ' '))
    return p;
  while (p < end && is_space(*p))
    p++;
  return p;
}

/* The first byte in [p, end) that ends a run of plain string bytes: '"',
 * '\\' or a control byte; `end` if none. */
static inline const uint8_t *plain_run_end(const uint8_t *p,
                                           const uint8_t *end) {
#ifdef JSON_FAST_SSE2
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control_max = _mm_set1_epi8(0x1f);
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
        _mm_cmpeq_epi8(_mm_min_epu8(v, control_max), v));
    unsigned mask = (unsigned)_mm_movemask_epi8(hit);
    if (mask)
      return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < end && *p != '"' && *p != '\\' && *p >= 0x20)
    p++;
  return p;
}

static inline int hex_digit(uint8_t c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Four hex digits at p (p + 4 <= end checked by the caller); -1 if not. */
static inline int32_t hex4(const uint8_t *p) {
  int32_t v = 0;
  for (int i = 0; i < 4; i++) {
    int d = hex_digit(p[i]);
    if (d < 0)
      return -1;
    v = v << 4 | d;
  }
  return v;
}

/* UTF-8 of a code point below 0x200000, as yajl writes it. */
static void append_utf8(json_text *out, uint32_t cp) {
  char b[4];
  size_t n;
  if (cp < 0x80) {
    b[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    b[0] = (char)(cp >> 6 | 0xc0);
    b[1] = (char)((cp & 0x3f) | 0x80);
    n = 2;
  } else if (cp < 0x10000) {
    b[0] = (char)(cp >> 12 | 0xe0);
    b[1] = (char)((cp >> 6 & 0x3f) | 0x80);
    b[2] = (char)((cp & 0x3f) | 0x80);
    n = 3;
  } else {
    b[0] = (char)(cp >> 18 | 0xf0);
    b[1] = (char)((cp >> 12 & 0x3f) | 0x80);
    b[2] = (char)((cp >> 6 & 0x3f) | 0x80);
    b[3] = (char)((cp & 0x3f) | 0x80);
    n = 4;
  }
  json_text_append(out, b, n);
}

/* Decodes the escape at p ('\\'); returns the byte after it, NULL to
 * decline (an escape yajl rejects or decodes its own way, the buffer's
 * end). */
static const uint8_t *decode_escape(const uint8_t *p, const uint8_t *end,
                                    json_text *out) {
  if (end - p < 2)
    return NULL;
  char c;
  switch (p[1]) {
  case '"':
  case '\\':
  case '/':
    c = (char)p[1];
    break;
  case 'b':
    c = '\b';
    break;
  case 'f':
    c = '\f';
    break;
  case 'n':
    c = '\n';
    break;
  case 'r':
    c = '\r';
    break;
  case 't':
    c = '\t';
    break;
  case 'u': {
    if (end - p < 6)
      return NULL;
    int32_t cp = hex4(p + 2);
    if (cp < 0)
      return NULL;
    p += 6;
    if ((cp & 0xfc00) == 0xd800) {
      /* A pair: yajl's formula, which is the standard one for a low
       * surrogate second; anything else yajl mangles in ways of its own. */
      if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
        return NULL;
      int32_t low = hex4(p + 2);
      if (low < 0 || (low & 0xfc00) != 0xdc00)
        return NULL;
      cp = ((cp & 0x3f) << 10) | ((((cp >> 6) & 0xf) + 1) << 16) |
           (low & 0x3ff);
      p += 6;
    }
    append_utf8(out, (uint32_t)cp);
    return p;
  }
  default:
    return NULL;
  }
  json_text_append_char(out, c);
  return p + 2;
}

/* The rest of a string whose plain run ended at p on something else than
 * its closing quote: decoded into `decoded`. Returns the byte after the
 * closing quote; NULL to decline. */
static const uint8_t *scan_string_slow(const uint8_t *start, const uint8_t *p,
                                       const uint8_t *end, json_text *decoded,
                                       const uint8_t **text,
                                       size_t *text_len) {
  decoded->len = 0;
  for (;;) {
    if (p == end || *p < 0x20)
      return NULL;
    json_text_append(decoded, start, (size_t)(p - start));
    if (*p == '"')
      break;
    p = decode_escape(p, end, decoded);
    if (!p)
      return NULL;
    start = p;
    p = plain_run_end(p, end);
  }
  *text = (const uint8_t *)decoded->data;
  *text_len = decoded->len;
  return p + 1;
}

/* A string at p ('"'). Sets its bytes (in the input, or decoded into
 * `decoded`) and returns the byte after the closing quote; NULL to
 * decline. Inlined: most strings are plain. With SSE2 the quotes get a
 * mask of their own, so that a closing quote is known without reading
 * its byte again (that load sat on the critical path). */
static inline const uint8_t *scan_string(const uint8_t *p, const uint8_t *end,
                                         json_text *decoded,
                                         const uint8_t **text,
                                         size_t *text_len) {
  const uint8_t *start = ++p;
#ifdef JSON_FAST_SSE2
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control_max = _mm_set1_epi8(0x1f);
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    unsigned quotes = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote));
    unsigned others = (unsigned)_mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(v, backslash),
                     _mm_cmpeq_epi8(_mm_min_epu8(v, control_max), v)));
    unsigned hits = quotes | others;
    if (hits) {
      unsigned at = (unsigned)__builtin_ctz(hits);
      if (LIKELY(quotes & (1u << at))) {
        *text = start;
        *text_len = (size_t)(p + at - start);
        return p + at + 1;
      }
      return scan_string_slow(start, p + at, end, decoded, text, text_len);
    }
    p += 16;
  }
#endif
  p = plain_run_end(p, end);
  if (LIKELY(p < end && *p == '"')) {
    *text = start;
    *text_len = (size_t)(p - start);
    return p + 1;
  }
  return scan_string_slow(start, p, end, decoded, text, text_len);
}

/* A number's exponent at p ([eE][+-]?digits): the byte after it, p itself
 * if there is none, NULL if it is malformed. */
static JSON_FAST_ALWAYS_INLINE const uint8_t *skip_exponent(const uint8_t *p, const uint8_t *end) {
  if (p == end || (*p != 'e' && *p != 'E'))
    return p;
  p++;
  if (p < end && (*p == '+' || *p == '-'))
    p++;
  const uint8_t *digits = p;
  p = skip_digits(p, end);
  return p == digits ? NULL : p;
}

/* A number at p ('-' or a digit); returns the byte after it, NULL to
 * decline. */
static const uint8_t *scan_number(const uint8_t *p, const uint8_t *end) {
  if (*p == '-')
    p++;
  if (p == end)
    return NULL;
  if (*p == '0') {
    p++;
  } else if (*p >= '1' && *p <= '9') {
    p = skip_digits(p + 1, end);
  } else {
    return NULL;
  }
  if (p < end && *p == '.') {
    const uint8_t *digits = ++p;
    p = skip_digits(p, end);
    if (p == digits)
      return NULL;
  }
  p = skip_exponent(p, end);
  if (!p)
    return NULL;
  /* yajl must see the byte after a number to know it ended. */
  return p < end ? p : NULL;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                           \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The value of 8 digits (bytes 0..9 after the XOR, byte 0 the most
 * significant): the usual SWAR reduction. */
static inline uint64_t swar8_value(uint64_t x) {
  x = (x * 10u + (x >> 8)) & 0x00ff00ff00ff00ffull;
  x = (x * 100u + (x >> 16)) & 0x0000ffff0000ffffull;
  return (x * 10000u + (x >> 32)) & 0xffffffffull;
}
#endif

/* skip_digits that also adds the digits to *value (v * 10^n + digits,
 * wrapping past 19 digits). Eight bytes at a time as skip_digits; a
 * word's k leading digits are shifted to its top, zeros first, so that
 * the same reduction yields their value. */
static inline const uint8_t *digits_value(const uint8_t *p, const uint8_t *end,
                                          uint64_t *value) {
  uint64_t v = *value;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                           \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(TM_JSON_NO_SIMD)
  static const uint32_t pow10[8] = {1,      10,      100,      1000,
                                    10000,  100000,  1000000,  10000000};
  while (end - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t x = w ^ 0x3030303030303030ull;
    uint64_t bad = (x | (x + 0x0606060606060606ull)) & 0xf0f0f0f0f0f0f0f0ull;
    if (!bad) {
      v = v * 100000000u + swar8_value(x);
      p += 8;
      continue;
    }
    unsigned k = (unsigned)__builtin_ctzll(bad) >> 3;
    if (k)
      v = v * pow10[k] + swar8_value(x << (64u - 8u * k));
    *value = v;
    return p + k;
  }
#endif
  while (p < end && is_digit(*p))
    v = v * 10u + (uint64_t)(*p++ - '0');
  *value = v;
  return p;
}

static inline uint8_t saturate_u8(size_t n) {
  return n > 255u ? 255u : (uint8_t)n;
}

/* scan_number, also reading the value of the form -?digits(.digits)?
 * into *num (valid false with an exponent). */
static inline const uint8_t *scan_number_value(const uint8_t *p,
                                               const uint8_t *end,
                                               json_fast_number *num) {
  bool negative = *p == '-';
  p += negative;
  if (p == end)
    return NULL;
  const uint8_t *int_begin = p;
  uint64_t int_value = 0;
  if (*p == '0')
    p++;
  else if (*p >= '1' && *p <= '9')
    p = digits_value(p, end, &int_value);
  else
    return NULL;
  size_t int_digits = (size_t)(p - int_begin);
  size_t frac_digits = 0;
  unsigned frac_value = 0;
  if (p < end && *p == '.') {
    const uint8_t *digits = ++p;
    p = skip_digits(p, end);
    frac_digits = (size_t)(p - digits);
    if (frac_digits == 0)
      return NULL;
    if (frac_digits <= 3) {
      unsigned d1 = frac_digits > 1 ? (unsigned)(digits[1] - '0') : 0u;
      unsigned d2 = frac_digits > 2 ? (unsigned)(digits[2] - '0') : 0u;
      frac_value = (unsigned)(digits[0] - '0') * 100u + d1 * 10u + d2;
    }
  }
  const uint8_t *before_exponent = p;
  p = skip_exponent(p, end);
  if (!p)
    return NULL;
  bool exponent = p != before_exponent;
  if (p == end)
    return NULL; /* yajl must see the byte after a number to know it ended */
  num->valid = !exponent;
  num->negative = negative;
  num->int_digits = saturate_u8(int_digits);
  num->frac_digits = saturate_u8(frac_digits);
  num->frac_value = (uint16_t)frac_value;
  num->int_value = int_value;
  return p;
}

static bool has_literal(const uint8_t *p, const uint8_t *end, const char *word,
                        size_t n) {
  return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

/* A callback for a token directly inside the element from `members`, any
 * other from `cb`; written as two calls so that, inlined into a caller
 * whose tables are constants, each is a direct call. */
#define CALL(name, args) (depth == 1 ? members->name args : cb->name args)

/* `number` NULL: numbers are only scanned (json_fast_element); else each
 * number callback runs with *number set (json_fast.h). */
static JSON_FAST_ALWAYS_INLINE json_fast_status
json_fast_element_inline(const yajl_callbacks *cb,
                         const yajl_callbacks *members, void *ctx,
                         json_text *decoded, json_fast_number *number,
                         const uint8_t *data, size_t len, size_t *consumed) {
  const uint8_t *p = data;
  const uint8_t *end = data + len;
  bool is_object[JSON_FAST_MAX_DEPTH];
  unsigned depth = 0;
  const uint8_t *text;
  size_t text_len;

  p = skip_space(p, end);
  if (p == end || *p != '{')
    return JSON_FAST_DECLINED;

value: /* p: the first byte of a value (not yet checked to exist) */
  if (p == end)
    return JSON_FAST_DECLINED;
  switch (*p) {
  case '{':
  case '[':
    if (depth == JSON_FAST_MAX_DEPTH)
      return JSON_FAST_DECLINED;
    is_object[depth] = *p == '{';
    if (!(is_object[depth] ? CALL(yajl_start_map, (ctx))
                           : CALL(yajl_start_array, (ctx))))
      return JSON_FAST_DECLINED;
    depth++;
    p = skip_space(p + 1, end);
    if (p == end)
      return JSON_FAST_DECLINED;
    if (*p == (is_object[depth - 1] ? '}' : ']')) {
      p++;
      goto close;
    }
    if (is_object[depth - 1])
      goto key;
    goto value;
  case '"':
    p = scan_string(p, end, decoded, &text, &text_len);
    if (!p || !CALL(yajl_string, (ctx, text, text_len)))
      return JSON_FAST_DECLINED;
    goto after_value;
  case 't':
    if (!has_literal(p, end, "true", 4) || !CALL(yajl_boolean, (ctx, 1)))
      return JSON_FAST_DECLINED;
    p += 4;
    goto after_value;
  case 'f':
    if (!has_literal(p, end, "false", 5) || !CALL(yajl_boolean, (ctx, 0)))
      return JSON_FAST_DECLINED;
    p += 5;
    goto after_value;
  case 'n':
    if (!has_literal(p, end, "null", 4) || !CALL(yajl_null, (ctx)))
      return JSON_FAST_DECLINED;
    p += 4;
    goto after_value;
  case ' ':
  case '\t':
  case '\n':
  case '\r':
    /* Whitespace before a value is skipped here, not by every caller:
     * most producers write none. */
    p = skip_space(p, end);
    goto value;
  default: {
    if (*p != '-' && !is_digit(*p))
      return JSON_FAST_DECLINED;
    const uint8_t *start = p;
    if (!number) {
      p = scan_number(p, end);
      if (!p || !CALL(yajl_number, (ctx, (const char *)start,
                                    (size_t)(p - start))))
        return JSON_FAST_DECLINED;
      goto after_value;
    }
    p = scan_number_value(p, end, number);
    if (!p)
      return JSON_FAST_DECLINED;
    int called = CALL(yajl_number, (ctx, (const char *)start,
                                    (size_t)(p - start)));
    number->valid = false;
    if (!called)
      return JSON_FAST_DECLINED;
    goto after_value;
  }
  }

key: /* p: a byte inside an object (p < end), where a key must be */
  if (*p != '"') {
    p = skip_space(p, end);
    if (p == end || *p != '"')
      return JSON_FAST_DECLINED;
  }
  p = scan_string(p, end, decoded, &text, &text_len);
  if (!p)
    return JSON_FAST_DECLINED;
  if (!LIKELY(p < end && *p == ':'))
    p = skip_space(p, end);
  if (p == end || *p != ':' || !CALL(yajl_map_key, (ctx, text, text_len)))
    return JSON_FAST_DECLINED;
  p++;
  goto value;

after_value: /* a value inside the container at depth - 1 just ended */
  if (!LIKELY(p < end && *p == ','))
    p = skip_space(p, end);
  if (p == end)
    return JSON_FAST_DECLINED;
  if (*p == ',') {
    p++;
    if (p == end)
      return JSON_FAST_DECLINED;
    if (is_object[depth - 1])
      goto key;
    goto value;
  }
  if (*p != (is_object[depth - 1] ? '}' : ']'))
    return JSON_FAST_DECLINED;
  p++;
  /* fall through */

close: /* the container at depth - 1 closed just before p */
  depth--;
  if (depth > 0) {
    if (!(is_object[depth] ? cb->yajl_end_map(ctx) : cb->yajl_end_array(ctx)))
      return JSON_FAST_DECLINED;
    goto after_value;
  }
  {
    const uint8_t *comma = skip_space(p, end);
    if (comma == end || *comma != ',')
      return JSON_FAST_DECLINED;
    /* yajl may still be in array_start, which unlike array_need_val
     * takes a ']' ("[{},,]" keeps its first comma): that byte must not
     * follow, and must be seen not to. Nor may a '}': on bytes the
     * segmenter has not seen (json_segmenter_idle), the comma before it
     * is one it would blank. */
    const uint8_t *next = skip_space(comma + 1, end);
    if (next == end || *next == ']' || *next == '}')
      return JSON_FAST_DECLINED;
    if (!cb->yajl_end_map(ctx)) {
      *consumed = (size_t)(p - data);
      return JSON_FAST_STOPPED;
    }
    *consumed = (size_t)(comma + 1 - data);
    return JSON_FAST_DONE;
  }
}

#undef CALL

#endif /* TM_JSON_FAST_IMPL_H */
