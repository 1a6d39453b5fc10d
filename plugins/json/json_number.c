/*
 * Exact conversions of number texts. See json_number.h for the grammar and
 * the rounding rule; the invariant is that no timestamp digit goes through
 * a double unless the text itself is not an exact decimal we can shift.
 */
#include "json_number.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

/* Where the parts of a decimal text are. */
typedef struct decimal_parts {
  bool negative;
  size_t int_begin, int_len;
  size_t frac_begin, frac_len;
  int64_t exponent; /* saturated to +-EXPONENT_LIMIT */
  bool is_integer_literal; /* no point, no exponent */
} decimal_parts;

/* Far beyond any exponent that could still give an int64 of ns from a
 * text of plausible length; saturating keeps the arithmetic in range. */
#define EXPONENT_LIMIT 1000000000

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JSON_NUMBER_SWAR 1
/* Whether the 8 bytes at p are all digits, and if so their value: a
 * timestamp's 12-odd integer digits then take two steps, not twelve
 * (the multiplications are the well-known SWAR digit reduction). */
static bool eight_digits(const char *p, uint64_t *value) {
  uint64_t v;
  memcpy(&v, p, 8);
  uint64_t x = v ^ 0x3030303030303030ull; /* digits become 0..9 */
  if ((x & 0xf0f0f0f0f0f0f0f0ull) ||
      ((x + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull))
    return false;
  x = (x * 10u + (x >> 8)) & 0x00ff00ff00ff00ffull;
  x = (x * 100u + (x >> 16)) & 0x0000ffff0000ffffull;
  *value = (x * 10000u + (x >> 32)) & 0xffffffffull;
  return true;
}
#endif

static bool scan_decimal(const char *text, size_t len, decimal_parts *p) {
  size_t i = 0;
  memset(p, 0, sizeof(*p));
  if (i < len && text[i] == '-') {
    p->negative = true;
    i++;
  }
  p->int_begin = i;
  while (i < len && is_digit(text[i]))
    i++;
  p->int_len = i - p->int_begin;
  p->frac_begin = i;
  bool has_point = false;
  if (i < len && text[i] == '.') {
    has_point = true;
    i++;
    p->frac_begin = i;
    while (i < len && is_digit(text[i]))
      i++;
    p->frac_len = i - p->frac_begin;
  }
  if (p->int_len + p->frac_len == 0)
    return false;
  bool has_exponent = false;
  if (i < len && (text[i] == 'e' || text[i] == 'E')) {
    has_exponent = true;
    i++;
    bool exp_negative = false;
    if (i < len && (text[i] == '+' || text[i] == '-')) {
      exp_negative = text[i] == '-';
      i++;
    }
    size_t exp_begin = i;
    int64_t e = 0;
    while (i < len && is_digit(text[i])) {
      if (e < EXPONENT_LIMIT)
        e = e * 10 + (text[i] - '0');
      i++;
    }
    if (i == exp_begin)
      return false;
    if (e > EXPONENT_LIMIT)
      e = EXPONENT_LIMIT;
    p->exponent = exp_negative ? -e : e;
  }
  p->is_integer_literal = !has_point && !has_exponent;
  return i == len;
}

/* The k-th mantissa digit, integer digits then fraction digits. */
static unsigned mantissa_digit(const char *text, const decimal_parts *p,
                               size_t k) {
  char c = k < p->int_len ? text[p->int_begin + k]
                          : text[p->frac_begin + (k - p->int_len)];
  return (unsigned)(c - '0');
}

/* The common shapes, "123" and "123.456789", with at most 15 integer
 * digits (so nothing can overflow); false sends the text to the general
 * path. Same results as the general path, by construction. */
static bool us_text_to_ns_fast(const char *text, size_t len, int64_t *ns_out) {
  size_t i = 0;
  bool negative = len > 0 && text[0] == '-';
  if (negative)
    i = 1;
  size_t int_begin = i;
  uint64_t ns = 0;
#ifdef JSON_NUMBER_SWAR
  uint64_t eight;
  /* Wraps harmlessly past 15 digits, which are rejected below. */
  while (len - i >= 8 && eight_digits(text + i, &eight)) {
    ns = ns * 100000000u + eight;
    i += 8;
  }
#endif
  while (i < len && is_digit(text[i]))
    ns = ns * 10u + (uint64_t)(text[i++] - '0');
  if (i == int_begin || i - int_begin > 15)
    return false;
  ns *= 1000u;
  if (i < len) {
    if (text[i] != '.')
      return false;
    i++;
    /* Up to three fraction digits (the ns of a µs time) are the rule:
     * added at their scale without a loop. */
    size_t frac_len = len - i;
    if (frac_len >= 1 && frac_len <= 3) {
      unsigned d0 = (unsigned)(uint8_t)text[i] - '0';
      unsigned d1 = frac_len > 1 ? (unsigned)(uint8_t)text[i + 1] - '0' : 0u;
      unsigned d2 = frac_len > 2 ? (unsigned)(uint8_t)text[i + 2] - '0' : 0u;
      if (d0 > 9u || d1 > 9u || d2 > 9u)
        return false;
      ns += d0 * 100u + d1 * 10u + d2;
      *ns_out = negative ? -(int64_t)ns : (int64_t)ns;
      return true;
    }
    uint64_t scale = 100u;
    size_t frac_begin = i;
    while (i < len && is_digit(text[i]) && scale > 0) {
      ns += (uint64_t)(text[i++] - '0') * scale;
      scale /= 10u;
    }
    if (i == frac_begin)
      return false;
    if (i < len) {
      if (!is_digit(text[i]))
        return false;
      if (text[i] >= '5')
        ns++;
      while (i < len && is_digit(text[i]))
        i++;
      if (i < len)
        return false;
    }
  }
  *ns_out = negative ? -(int64_t)ns : (int64_t)ns;
  return true;
}

bool json_us_text_to_ns(const char *text, size_t len, int64_t *ns_out) {
  if (us_text_to_ns_fast(text, len, ns_out))
    return true;
  decimal_parts p;
  if (!scan_decimal(text, len, &p))
    return false;
  const uint64_t limit =
      p.negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
  const size_t n_digits = p.int_len + p.frac_len;
  /* Position of the decimal point among the mantissa digits once the
   * value is scaled by 10^exponent (the text) and 10^3 (us -> ns). */
  const int64_t point = (int64_t)p.int_len + p.exponent + 3;

  uint64_t acc = 0;
  for (int64_t k = 0; k < point; k++) {
    if ((uint64_t)k >= n_digits && acc == 0)
      break; /* a zero mantissa padded by a huge exponent stays 0: no
              * loop of up to EXPONENT_LIMIT steps (found by fuzz_json) */
    unsigned d = (uint64_t)k < n_digits ? mantissa_digit(text, &p, (size_t)k)
                                        : 0u;
    if (acc == 0 && d == 0)
      continue; /* leading zeros */
    if (acc > (limit - d) / 10u)
      return false;
    acc = acc * 10u + d;
  }
  if (point >= 0 && (uint64_t)point < n_digits &&
      mantissa_digit(text, &p, (size_t)point) >= 5u) {
    if (acc == limit)
      return false;
    acc++;
  }
  if (p.negative)
    *ns_out = acc == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)acc;
  else
    *ns_out = (int64_t)acc;
  return true;
}

bool json_number_parse(const char *text, size_t len, json_number *out) {
  /* Fast path: a short integer literal (at most 18 digits cannot overflow). */
  size_t start = len > 0 && text[0] == '-' ? 1 : 0;
  if (len > start && len - start <= 18) {
    uint64_t acc = 0;
    size_t i = start;
    while (i < len && is_digit(text[i]))
      acc = acc * 10u + (uint64_t)(text[i++] - '0');
    if (i == len) {
      out->kind = JSON_NUMBER_INT;
      out->int_value = start ? -(int64_t)acc : (int64_t)acc;
      out->real_value = (double)out->int_value;
      return true;
    }
  }
  decimal_parts p;
  if (!scan_decimal(text, len, &p))
    return false;
  if (p.is_integer_literal) {
    const uint64_t limit =
        p.negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    bool fits = true;
    for (size_t k = 0; k < p.int_len && fits; k++) {
      unsigned d = mantissa_digit(text, &p, k);
      if (acc > (limit - d) / 10u)
        fits = false;
      else
        acc = acc * 10u + d;
    }
    if (fits) {
      out->kind = JSON_NUMBER_INT;
      if (p.negative)
        out->int_value =
            acc == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)acc;
      else
        out->int_value = (int64_t)acc;
      out->real_value = (double)out->int_value;
      return true;
    }
  }
  /* strtod wants a terminated string; number texts are short, so the
   * stack copy is the rule and the heap copy the rare exception. */
  char local[128];
  char *copy = len < sizeof(local) ? local : g_malloc(len + 1);
  memcpy(copy, text, len);
  copy[len] = '\0';
  out->kind = JSON_NUMBER_REAL;
  out->real_value = strtod(copy, NULL);
  out->int_value = 0;
  if (copy != local)
    g_free(copy);
  return true;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool json_hex_id_parse(const char *text, size_t len, uint64_t *out) {
  size_t i = 0;
  if (len >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    i = 2;
  if (i == len || len - i > 16)
    return false;
  uint64_t value = 0;
  for (; i < len; i++) {
    int v = hex_value(text[i]);
    if (v < 0)
      return false;
    value = (value << 4) | (uint64_t)v;
  }
  *out = value;
  return true;
}
