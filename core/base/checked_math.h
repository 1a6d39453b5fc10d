/*
 * Checked and saturating 64-bit arithmetic for timestamps, durations and
 * offsets.
 *
 * Every ts/dur/offset sum that hostile input can drive (a reader's raw
 * values, a manifest's offset_ns, a conversion's result) goes through
 * these: a checked sum tells the caller it overflowed (the event is then
 * dropped and counted), a saturating one clamps to INT64_MIN / INT64_MAX
 * where a bound is all that is needed (e.g. trace_bounds). Signed overflow
 * is undefined behaviour in C, so no plain `+` on such values.
 */
#ifndef TM_CHECKED_MATH_H
#define TM_CHECKED_MATH_H

#include <stdbool.h>
#include <stdint.h>

/* *out = a + b; false (and *out unspecified) if it does not fit. */
static inline bool tm_checked_add(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}

/* *out = a - b; false (and *out unspecified) if it does not fit. */
static inline bool tm_checked_sub(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_sub_overflow(a, b, out);
}

/* a + b clamped to [INT64_MIN, INT64_MAX]. */
static inline int64_t tm_saturating_add(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out))
    return b > 0 ? INT64_MAX : INT64_MIN;
  return out;
}

/* a - b clamped to [INT64_MIN, INT64_MAX]. */
static inline int64_t tm_saturating_sub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out))
    return b < 0 ? INT64_MAX : INT64_MIN;
  return out;
}

#endif /* TM_CHECKED_MATH_H */
