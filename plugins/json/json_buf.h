/*
 * Growable byte buffers and arrays for the JSON reader (plain C, no glib:
 * a reader depends only on plugin.h and its parser).
 *
 * Invariant: buffers only grow; the readers reset `len` to reuse them, so
 * after warm-up no event allocates. Every append reports failure instead
 * of aborting, so the reader can turn out-of-memory into a file error.
 *
 * Still to do (issue 12, "one vector type"): this is the last growable
 * array besides TM_VEC (core/base/vec.h), which the host and the proto
 * reader use and whose growth aborts on out of memory. Moving the JSON
 * reader onto it means taking that policy and removing the reader's
 * out-of-memory error paths, checked against the JSON benchmark.
 */
#ifndef TM_JSON_BUF_H
#define TM_JSON_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct json_buf {
  char *data;
  size_t len;
  size_t cap;
} json_buf;

/* Makes room for `*cap` >= `need` elements of `elem_size` bytes. */
static inline bool json_grow(void **data, size_t *cap, size_t need,
                             size_t elem_size) {
  if (need <= *cap)
    return true;
  size_t new_cap = *cap ? *cap : 16;
  while (new_cap < need) {
    if (new_cap > SIZE_MAX / 2 / elem_size)
      return false;
    new_cap *= 2;
  }
  void *grown = realloc(*data, new_cap * elem_size);
  if (!grown)
    return false;
  *data = grown;
  *cap = new_cap;
  return true;
}

static inline bool json_buf_append(json_buf *b, const void *bytes, size_t n) {
  if (n > SIZE_MAX - b->len - 1 ||
      !json_grow((void **)&b->data, &b->cap, b->len + n + 1, 1))
    return false;
  if (n)
    memcpy(b->data + b->len, bytes, n);
  b->len += n;
  b->data[b->len] = '\0'; /* always terminated, for the host's C strings */
  return true;
}

static inline bool json_buf_append_char(json_buf *b, char c) {
  return json_buf_append(b, &c, 1);
}

static inline bool json_buf_append_str(json_buf *b, const char *s) {
  return json_buf_append(b, s, strlen(s));
}

static inline void json_buf_truncate(json_buf *b, size_t len) {
  if (len < b->len) {
    b->len = len;
    b->data[len] = '\0';
  }
}

static inline void json_buf_free(json_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

#endif /* TM_JSON_BUF_H */
