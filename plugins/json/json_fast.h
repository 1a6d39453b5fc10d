/*
 * A hand-written tokenizer for the common case of the JSON reader: one
 * object element of an array (a traceEvents entry) followed by its comma,
 * found whole in one buffer. It drives the very yajl_callbacks the reader
 * gives yajl, in the order yajl would call them, with the same bytes
 * (strings decoded exactly as yajl 2.1 decodes them), so what the reader
 * builds cannot depend on which of the two tokenized an event.
 *
 * It handles only what it can prove valid without looking further: the
 * element, whitespace (space, tab, CR, LF), then a ',' and the next
 * significant byte, which must be neither ']' nor '}' — all inside the buffer,
 * nesting at most JSON_FAST_MAX_DEPTH. Anything else (a syntax
 * error, a rare escape, an element cut by the buffer's end, the array's
 * last element) is declined, and the caller hands the same bytes to yajl,
 * which then reports errors with yajl's own words and offsets.
 *
 * Invariant: every callback but the element's final end_map runs before
 * the element is known to be valid, so a caller may use this only where
 * those callbacks have no effect outside state it restores on a decline;
 * the final end_map runs only after the element and its comma were
 * checked, and nothing runs after it.
 *
 * Why skipping yajl leaves yajl consistent: the caller calls this only
 * when yajl has just consumed the array's '[' or a ',' between its
 * elements (array_start or array_need_val). Having skipped an element and
 * its comma, yajl should be in array_need_val; it may be in array_start
 * instead, and the two differ only on a ']' (accepted by array_start,
 * an error after a comma), which is why the byte after the comma is
 * checked. (The segmenter blanks a comma before a closer, but of ",,]"
 * it keeps the first.)
 */
#ifndef TM_JSON_FAST_H
#define TM_JSON_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_parse.h>

#include "json_text.h"

/* Containers open at once, the element included; deeper ones go to yajl. */
#define JSON_FAST_MAX_DEPTH 32

typedef enum json_fast_status {
  JSON_FAST_DECLINED = 0, /* nothing consumed; yajl must read these bytes */
  JSON_FAST_DONE,         /* `*consumed` bytes read: element and comma */
  JSON_FAST_STOPPED,      /* the final end_map returned 0; `*consumed` ends
                           * just after the element's closing brace, where
                           * yajl would have stopped */
} json_fast_status;

/* What the tokenizer read of a number, for a caller that would otherwise
 * read its digits again: set (`valid`) only while the fast path's number
 * callback runs, and only for the form -?digits(.digits)? (no exponent).
 * Never set while yajl calls the same callback. */
typedef struct json_fast_number {
  bool valid;
  bool negative;
  uint8_t int_digits;  /* integer digits, at most 255 counted (saturated) */
  uint8_t frac_digits; /* fraction digits, idem; 0: no point */
  uint16_t frac_value; /* with 1 to 3 fraction digits, their value as
                        * thousandths (".5" -> 500); else 0 */
  uint64_t int_value;  /* the integer digits' value; exact up to 19
                        * digits, wrapped beyond (callers check) */
} json_fast_number;

/* Callbacks for the keys and values directly inside the element object
 * come from `members`, all others (the element's own start and end, and
 * everything nested deeper) from `cb`: a caller whose state at that level
 * is known saves its dispatch there. Every callback of both must be set;
 * they may be the same table. `decoded` holds a string with escapes while
 * its callback runs. */
json_fast_status json_fast_element(const yajl_callbacks *cb,
                                   const yajl_callbacks *members, void *ctx,
                                   json_text *decoded, const uint8_t *data,
                                   size_t len, size_t *consumed);

/* The same, filling `*number` (not NULL) for each number callback. */
json_fast_status json_fast_element_numbers(const yajl_callbacks *cb,
                                           const yajl_callbacks *members,
                                           void *ctx, json_text *decoded,
                                           json_fast_number *number,
                                           const uint8_t *data, size_t len,
                                           size_t *consumed);

#endif /* TM_JSON_FAST_H */
