/*
 * The event buffer; see json_event_buf.h.
 */
#include "json_event_buf.h"

#include <string.h>

void json_event_buf_reset(json_event_buf *buf) {
  memset(&buf->ev, 0, sizeof(buf->ev));
  buf->args.len = 0;
  buf->text.len = 0;
}

void json_event_buf_free(json_event_buf *buf) {
  tm_vec_free(&buf->text);
  tm_vec_free(&buf->args);
}

bool json_event_buf_store(json_event_buf *buf, const void *bytes, size_t len,
                          json_span *out) {
  if (len > UINT32_MAX || buf->text.len > UINT32_MAX - len)
    return false;
  out->off = (uint32_t)buf->text.len;
  out->len = (uint32_t)len;
  json_text_append(&buf->text, bytes, len);
  return true;
}

json_arg *json_event_buf_add_arg(json_event_buf *buf) {
  return tm_vec_push_zero(&buf->args);
}
