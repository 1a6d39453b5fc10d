/*
 * One Trace Event Format event, as collected from the parser's callbacks
 * (json_reader.c) for the emitter (json_event.h) and the legacy V8
 * profiles (json_v8_profile.h) to read.
 *
 * Keys of an event come in any order (Chrome writes "args" before "ph"),
 * so nothing is emitted until the event's closing brace: the walker fills
 * a json_event_buf, the emitter reads it whole. Strings the event refers
 * to are spans (offset, length): into the buffer's text arena, because
 * yajl's pointers die with each callback; or, while the fast path reads
 * an element whole from one buffer (`in_place`, set around that element
 * only), into that buffer, where the string's bytes stay until the
 * element's closing brace has emitted it: no copy.
 *
 * Invariants: a json_event_buf is reset, not freed, between events, so
 * steady-state parsing allocates nothing per event; a span with
 * JSON_SPAN_IN_PLACE in `off` is only made while `in_place` is set, and
 * only read before it is cleared (the emitter runs inside the element's
 * end); the arena stays below 2 GiB, so its offsets never carry that bit.
 */
#ifndef TM_JSON_EVENT_BUF_H
#define TM_JSON_EVENT_BUF_H

#include <stdbool.h>
#include <stdint.h>

#include "base/vec.h"
#include "json_text.h"

typedef struct json_span {
  uint32_t off; /* JSON_SPAN_IN_PLACE | offset in `in_place`, or arena offset */
  uint32_t len;
} json_span;

#define JSON_SPAN_IN_PLACE 0x80000000u

typedef enum json_field_state {
  JSON_FIELD_ABSENT = 0,
  JSON_FIELD_OK = 1,
  JSON_FIELD_BAD = 2, /* present but not usable: the event is dropped */
} json_field_state;

typedef struct json_time_field {
  uint8_t state; /* json_field_state */
  int64_t ns;
} json_time_field;

typedef enum json_id_kind {
  JSON_ID_NONE = 0,
  JSON_ID_NUMBER = 1, /* `number` holds it (pid/tid: already coerced) */
  JSON_ID_STRING = 2, /* `text` holds it */
} json_id_kind;

typedef struct json_id_field {
  uint8_t kind; /* json_id_kind */
  uint64_t number;
  json_span text;
} json_id_field;

typedef enum json_arg_kind {
  JSON_ARG_KIND_INT = 0,
  JSON_ARG_KIND_REAL = 1,
  JSON_ARG_KIND_STRING = 2,
  JSON_ARG_KIND_BOOL = 3,
  JSON_ARG_KIND_NULL = 4,      /* kept for counters, skipped in args */
  JSON_ARG_KIND_CONTAINER = 5, /* a nested object/array, for counters */
} json_arg_kind;

/* One flattened member of "args": key "args.a.b[2]" and its value. */
typedef struct json_arg {
  json_span key;
  uint8_t kind;      /* json_arg_kind */
  bool top_level;    /* a direct member of "args" (counter values) */
  union {
    int64_t int_value; /* INT, BOOL */
    double real_value;
    json_span text;    /* STRING */
  } u;
} json_arg;

typedef struct json_event {
  uint32_t n_keys;   /* 0 at the closing brace: `{}`, skipped silently */
  char phase;        /* first byte of "ph"; 0 if missing or not a string */
  json_time_field ts, dur, tts, tdur;
  json_id_field pid, tid, id, bind_id;
  bool has_pid, has_tid; /* the keys were present (with a usable type) */
  json_span name, cat;   /* len 0: absent or empty (both mean NULL) */
  json_span id2_local, id2_global;
  bool has_id2_local, has_id2_global;
  bool id2_bad;          /* "id2" present but not an object */
  bool flow_in, flow_out;
  bool bind_enclosing;   /* "bp": "e" */
  char scope;            /* "s": 'g', 'p', 't' or 0 */
  bool has_args;         /* "args" was an object */
} json_event;

typedef struct json_event_buf {
  json_event ev;
  json_text text; /* arena the spans point into */
  TM_VEC(json_arg) args;
  /* The buffer the fast path reads the current element from, whole;
   * NULL outside the fast path (json_event_buf_read_in_place). */
  const char *in_place;
  size_t in_place_len;
} json_event_buf;

void json_event_buf_reset(json_event_buf *buf);
void json_event_buf_free(json_event_buf *buf);

/* Strings inside `len` bytes at `data` are referred to in place from now
 * until json_event_buf_read_in_place(buf, NULL, 0); `len` below 2 GiB
 * (a longer buffer is ignored: strings are copied). */
static inline void json_event_buf_read_in_place(json_event_buf *buf,
                                                const void *data, size_t len) {
  bool fits = data && len < JSON_SPAN_IN_PLACE;
  buf->in_place = fits ? data : NULL;
  buf->in_place_len = fits ? len : 0;
}

/* Copies `len` bytes into the arena (json_event_buf_store's other half:
 * inline, as it runs for every arg key). */
static inline bool json_event_buf_copy(json_event_buf *buf, const void *bytes,
                                       size_t len, json_span *out) {
  if (len >= JSON_SPAN_IN_PLACE || buf->text.len >= JSON_SPAN_IN_PLACE - len)
    return false;
  out->off = (uint32_t)buf->text.len;
  out->len = (uint32_t)len;
  json_text_append(&buf->text, bytes, len);
  return true;
}

/* A span of `len` bytes at `bytes`: in place when they lie inside the
 * in-place buffer, else copied into the arena. False when the arena would
 * reach 2 GiB, which a span cannot address (out of memory aborts, as for
 * every TM_VEC). */
static inline bool json_event_buf_store(json_event_buf *buf, const void *bytes,
                                        size_t len, json_span *out) {
  uintptr_t at = (uintptr_t)bytes - (uintptr_t)buf->in_place;
  if (buf->in_place && at < buf->in_place_len &&
      len <= buf->in_place_len - at) {
    out->off = JSON_SPAN_IN_PLACE | (uint32_t)at;
    out->len = (uint32_t)len;
    return true;
  }
  return json_event_buf_copy(buf, bytes, len, out);
}

/* Appends an arg slot, zeroed (key and kind to be filled). */
static inline json_arg *json_event_buf_add_arg(json_event_buf *buf) {
  return tm_vec_push_zero(&buf->args);
}

/* The bytes of `span` (not terminated); "" for an empty arena. */
static inline const char *json_event_buf_text(const json_event_buf *buf,
                                              json_span span) {
  if (span.off & JSON_SPAN_IN_PLACE)
    return buf->in_place + (span.off & ~JSON_SPAN_IN_PLACE);
  return buf->text.data ? buf->text.data + span.off : "";
}

#endif /* TM_JSON_EVENT_BUF_H */
