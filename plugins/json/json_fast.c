/*
 * The element tokenizer with its callback tables given at run time: the
 * entry point of json_fast.h, compiled from the same code the reader
 * inlines (json_fast_impl.h), so that the tests exercise that code.
 */
#include "json_fast.h"

#include "json_fast_impl.h"

json_fast_status json_fast_element(const yajl_callbacks *cb,
                                   const yajl_callbacks *members, void *ctx,
                                   json_text *decoded, const uint8_t *data,
                                   size_t len, size_t *consumed) {
  return json_fast_element_inline(cb, members, ctx, decoded, NULL, data, len,
                                  consumed);
}

json_fast_status json_fast_element_numbers(const yajl_callbacks *cb,
                                           const yajl_callbacks *members,
                                           void *ctx, json_text *decoded,
                                           json_fast_number *number,
                                           const uint8_t *data, size_t len,
                                           size_t *consumed) {
  return json_fast_element_inline(cb, members, ctx, decoded, number, data,
                                  len, consumed);
}
