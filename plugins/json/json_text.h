/*
 * Text the JSON reader builds (arg paths, metadata names, re-serialised
 * metadata, an event's strings), kept NUL-terminated for the host's C
 * strings: the project's one vector type, TM_VEC(char) (core/base/vec.h),
 * with appends that keep the terminator.
 *
 * Invariant: the text only grows; the reader resets `len` to reuse it, so
 * after warm-up no event allocates. Out of memory aborts, as for every
 * TM_VEC. Released with tm_vec_free.
 */
#ifndef TM_JSON_TEXT_H
#define TM_JSON_TEXT_H

#include <stddef.h>
#include <string.h>

#include "base/vec.h"

typedef TM_VEC(char) json_text;

static inline void json_text_append(json_text *t, const void *bytes,
                                    size_t n) {
  /* cap > len always holds once anything was appended (the terminator);
   * `n` is the length of bytes in memory, so len + n + 1 cannot wrap. */
  if (n >= t->cap - t->len)
    tm_vec_reserve(t, t->len + n + 1);
  if (n)
    memcpy(t->data + t->len, bytes, n);
  t->len += n;
  t->data[t->len] = '\0';
}

static inline void json_text_append_char(json_text *t, char c) {
  json_text_append(t, &c, 1);
}

static inline void json_text_append_str(json_text *t, const char *s) {
  json_text_append(t, s, strlen(s));
}

static inline void json_text_truncate(json_text *t, size_t len) {
  if (len < t->len) {
    t->len = len;
    t->data[len] = '\0';
  }
}

#endif /* TM_JSON_TEXT_H */
