/*
 * Growable arrays for the proto reader. The reader depends on no library
 * but protobuf-c, so it carries its own. Like the host (GLib), it treats
 * running out of memory as fatal: growth aborts rather than returning an
 * error every caller would have to pass up.
 */
#ifndef TM_PROTO_VEC_H
#define TM_PROTO_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define PROTO_VEC(T) \
  struct {           \
    T *data;         \
    size_t len;      \
    size_t cap;      \
  }

static inline void *proto_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q)
    abort();
  return q;
}

/* Returns `data` grown to hold at least `need` elements of `size` bytes. */
static inline void *proto_vec_grow_(void *data, size_t *cap, size_t need,
                                    size_t size) {
  if (need <= *cap)
    return data;
  size_t grown = *cap ? *cap * 2 : 8;
  while (grown < need)
    grown *= 2;
  *cap = grown;
  return proto_xrealloc(data, grown * size);
}

#define proto_vec_reserve(v, need) \
  ((v)->data = proto_vec_grow_((v)->data, &(v)->cap, (need), sizeof *(v)->data))

#define proto_vec_push(v, x)            \
  do {                                  \
    proto_vec_reserve((v), (v)->len + 1); \
    (v)->data[(v)->len++] = (x);        \
  } while (0)

#define proto_vec_free(v)   \
  do {                      \
    free((v)->data);        \
    (v)->data = NULL;       \
    (v)->len = (v)->cap = 0; \
  } while (0)

typedef PROTO_VEC(uint64_t) proto_u64_vec;
typedef PROTO_VEC(char) proto_text;

/* Bytes borrowed from a packet. */
typedef struct proto_bytes {
  const uint8_t *data;
  size_t len;
} proto_bytes;

#endif /* TM_PROTO_VEC_H */
