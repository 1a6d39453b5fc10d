/* Two inline reads of short texts that the line parsers of more than one
 * reader do on every event (the systrace emitter's marks and kernel
 * lines, the proto ftrace reader's comms): a call to memcmp or strtoll
 * there cost more than the work. Both read only the bytes they are
 * given the bounds of. */
#ifndef TM_PLUGIN_SHORT_TEXT_H
#define TM_PLUGIN_SHORT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The run of decimal digits starting at `p`, at most 18 of them (so the
 * value cannot overflow) and never past `end`: returns where the run
 * stopped (`p` itself if there is no digit) and its value in `*value`.
 * The caller decides what may follow the run. */
static inline __attribute__((always_inline)) const char *
short_digits_read(const char *p, const char *end, int64_t *value) {
  const char *bound = end - p > 18 ? p + 18 : end;
  int64_t v = 0;
  for (; p < bound; p++) {
    unsigned digit = (unsigned char)*p - (unsigned)'0';
    if (digit > 9)
      break;
    v = v * 10 + (int64_t)digit;
  }
  *value = v;
  return p;
}

/* memcmp(a, b, n) == 0 for n <= 24, without the call: up to three
 * overlapping words. Reads a[0, n) and b[0, n) only. */
static inline bool short_bytes_equal(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  if (n >= 8) {
    uint64_t u, v, diff;
    memcpy(&u, x, 8);
    memcpy(&v, y, 8);
    diff = u ^ v;
    memcpy(&u, x + n - 8, 8);
    memcpy(&v, y + n - 8, 8);
    diff |= u ^ v;
    if (n > 16) {
      memcpy(&u, x + 8, 8);
      memcpy(&v, y + 8, 8);
      diff |= u ^ v;
    }
    return diff == 0;
  }
  if (n >= 4) {
    uint32_t u, v, diff;
    memcpy(&u, x, 4);
    memcpy(&v, y, 4);
    diff = u ^ v;
    memcpy(&u, x + n - 4, 4);
    memcpy(&v, y + n - 4, 4);
    return (diff | (u ^ v)) == 0;
  }
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i])
      return false;
  return true;
}

#endif /* TM_PLUGIN_SHORT_TEXT_H */
