/*
 * Number texts of the Trace Event Format, converted without losing digits.
 *
 * Timestamps are microseconds written in decimal ("ts": 123456.789). They
 * are converted to nanoseconds on the digits, never through a double: the
 * decimal point is moved three places and what falls beyond the
 * nanosecond is rounded half away from zero, so 123456.789 is exactly
 * 123456789 ns and 1.0005 is 1001 ns (1000.5 rounded away from zero).
 * Exponent forms (1.5e3) are handled the same way, on the digits.
 *
 * Accepted grammar (JSON numbers, and the same inside numeric strings):
 *   -? digits? ( . digits? )? ( [eE] [+-]? digits )?
 * with at least one mantissa digit; nothing else, no surrounding spaces.
 */
#ifndef TM_JSON_NUMBER_H
#define TM_JSON_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Microseconds text → nanoseconds. False if `text` is not a number or the
 * result does not fit in int64. */
bool json_us_text_to_ns(const char *text, size_t len, int64_t *ns_out);

typedef enum json_number_kind {
  JSON_NUMBER_INT = 0,  /* an integer literal that fits int64 */
  JSON_NUMBER_REAL = 1, /* anything else (fraction, exponent, too big) */
} json_number_kind;

typedef struct json_number {
  json_number_kind kind;
  int64_t int_value;  /* INT */
  double real_value;  /* REAL; also set (approximately) for INT */
} json_number;

/* Classifies and converts a number text. False if not a number. */
bool json_number_parse(const char *text, size_t len, json_number *out);

/* A flow id written as a hex string, as trace_processor reads them:
 * optional 0x/0X prefix, then 1 to 16 hex digits. */
bool json_hex_id_parse(const char *text, size_t len, uint64_t *out);

#endif /* TM_JSON_NUMBER_H */
