/*
 * Chrome JSON (Trace Event Format) reader: docs/formats.md §2.
 *
 * Bytes flow: feed() → segmenter (trailing commas, token-aligned cuts) →
 * yajl_parse() → the callbacks below, which walk the document's structure
 * and collect one event at a time → json_emitter (json_event.c) → host
 * services.
 *
 * The fast path: where yajl has just read the event array's '[' or a
 * ',' between its elements, the next element and its comma, when whole
 * in the segment and of the common shape, are tokenized by the element
 * tokenizer instead (json_fast.h, inlined from json_fast_impl.h), which
 * calls the same callbacks below and leaves yajl in an equivalent state.
 * It reads the host's chunk itself while the segmenter is idle (nothing
 * carried, outside strings: feed_chunk), so the bytes of the events it
 * takes are scanned once, not also by the segmenter; from an element it
 * declines, the segmenter takes over up to the next comma after which it
 * is idle again (json_segmenter_feed_head).
 * Everything else — and every element it declines — goes to yajl, cut after
 * each ',' or '[' outside strings (the segmenter's kind of cut: no token
 * straddles it, so yajl's error offsets do not move) so that the fast path can
 * resume at the next element. Inside an element the callbacks only fill the
 * event buffer and the args frames; the host hears of it at its closing brace.
 * That is what lets a declined element be replayed by yajl from its first byte.
 *
 * Shapes: an object with "traceEvents" (plus "metadata",
 * "displayTimeUnit", "systemTraceEvents" and unknown keys, in any order),
 * which must be complete; or a bare array of events, which may stop
 * anywhere (an unclosed array is legal, its trailing partial event is
 * ignored).
 *
 * systemTraceEvents: a string is a systrace text body; each line that is
 * neither empty nor a '#' comment goes through the systrace reader's line
 * grammar and emitter (../systrace/systrace_emitter.h), on this file's
 * machine and, unlike a systrace file, on this file's private clock, so
 * that its seconds×1e9 stay aligned with traceEvents' µs×1000 (as in
 * trace_processor). The string arrives whole from yajl: the segmenter and
 * yajl each hold it while it is read (about twice its size in memory); it
 * is cut into lines in place, not copied again.
 * The object form Fuchsia's trace2json writes ({"type":"fuchsia",
 * "events":[...]}), where upstream fails the whole file: its thread and
 * process records ({"ph":"t","pid","tid","name"}, {"ph":"p","pid",
 * "name"}) name threads and processes of this file's machine, so the
 * threads the traceEvents use have their names; its other records
 * (kernel-object and context-switch "k") are skipped, counted once (stat
 * json_system_trace_events_skipped). An object of another type is skipped
 * too (stat json_system_trace_events_invalid). traceEvents are kept.
 *
 * Dropped events: every json_tokenizer_failure and json_parser_failure
 * goes through event_failure(), which logs it through the host's
 * import_log service (with the element's byte offset and, for the
 * tokenizer kind, its text, bounded) or, on an older host, only counts
 * it. To find that text without cost to valid events, the hot path only
 * notes where each element starts (one pointer store per fast element;
 * yajl's start_map callback, not the fast path's, tests for an element
 * start). The bytes are gathered on failure from the current segment,
 * which holds the whole element when the fast path read it, plus `kept`:
 * the first RAW_EVENT_MAX bytes of an element that was still open when
 * an earlier segment ended (copied at a segment's end, so at most once
 * per host chunk). Quoting only what the current segment still holds
 * would be cheaper by that copy, but the text would then depend on where
 * the host cut its chunks.
 *
 * Invariants: the file is never held in memory, only the current event
 * (and, inside "metadata", the current value's text; a systemTraceEvents
 * string, see above); `where` mirrors the containers yajl (or the fast
 * path) has open down to the event level, `frames` the ones inside "args"
 * or a metadata value, and `skip_depth` counts containers being skipped;
 * inside an event no callback reaches the host before the event's closing
 * brace; an error is reported once, with its file offset, and every later
 * call returns TM_ERROR.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <tracemerge/plugin.h>
#include <yajl/yajl_parse.h>

#include "base/json_string.h"
#include "json_text.h"
#include "json_event.h"
#include "json_fast.h"
#include "json_fast_impl.h"
#include "json_number.h"
#include "json_segmenter.h"
#include "systrace_emitter.h"

/* What the innermost open container (down to event level) is. */
typedef enum json_where {
  WHERE_TOP = 0,    /* outside the top-level value */
  WHERE_ROOT,       /* the top-level object */
  WHERE_EVENTS,     /* the event array (traceEvents, or the bare array) */
  WHERE_EVENT,      /* one event object */
  WHERE_ID2,        /* an event's "id2" object */
  WHERE_ARGS,       /* inside an event's "args" (see frames) */
  WHERE_METADATA,   /* the top-level "metadata" object */
  WHERE_RAW,        /* inside a metadata value kept as JSON text */
  WHERE_SYSTEM_OBJECT, /* an object as systemTraceEvents (Fuchsia's form) */
  WHERE_SYSTEM_EVENTS, /* its "events" array */
  WHERE_SYSTEM_RECORD, /* one record of that array */
} json_where;

/* TOP, ROOT, EVENTS, EVENT, then ID2 or ARGS: never deeper (ROOT's other
 * branches, METADATA then RAW, or SYSTEM_OBJECT, are shallower). */
#define WHERE_MAX 8

typedef enum root_key {
  ROOT_OTHER = 0,
  ROOT_TRACE_EVENTS,
  ROOT_METADATA,
  ROOT_DISPLAY_TIME_UNIT,
  ROOT_SYSTEM_TRACE_EVENTS,
} root_key;

typedef enum event_key {
  KEY_OTHER = 0,
  KEY_PH,
  KEY_TS,
  KEY_DUR,
  KEY_TTS,
  KEY_TDUR,
  KEY_PID,
  KEY_TID,
  KEY_NAME,
  KEY_CAT,
  KEY_ARGS,
  KEY_ID,
  KEY_ID2,
  KEY_BIND_ID,
  KEY_FLOW_IN,
  KEY_FLOW_OUT,
  KEY_BP,
  KEY_SCOPE,
  KEY_ID2_LOCAL,
  KEY_ID2_GLOBAL,
} event_key;

/* A container open inside "args" (for key paths) or inside a metadata
 * value (for re-serialising it). */
typedef struct json_frame {
  uint32_t base_len; /* path length when the container opened */
  uint32_t count;    /* elements (array) or members (object) seen */
  bool is_array;
} json_frame;

typedef enum value_type {
  VALUE_NULL,
  VALUE_BOOL,
  VALUE_NUMBER,
  VALUE_STRING,
  VALUE_MAP,   /* start of an object */
  VALUE_ARRAY, /* start of an array */
} value_type;

typedef struct json_value {
  value_type type;
  bool boolean;
  const char *text; /* NUMBER: its text; STRING: unescaped bytes */
  size_t len;
  /* NUMBER read by the fast path: its digits' value (json_fast.h), so
   * that they are not read again; NULL from yajl. */
  const json_fast_number *number;
} json_value;

typedef struct json_reader {
  const tm_host_services *svc;
  tm_host *host;
  yajl_handle yajl;
  json_segmenter segmenter;
  int64_t bytes_received;
  /* The record budget (tm_budget): the most bytes held for one token, or
   * one event, at a time. */
  uint64_t max_record;
  bool started;           /* the first significant byte was seen */
  bool object_form;
  bool root_done;         /* the top-level value is closed */
  bool failed;
  const char *cancel_message; /* why a callback stopped the parser */
  /* yajl's last byte was the event array's '[' or a ',' between its
   * elements, with nothing skipped or pending: the fast path may run. */
  bool at_element;
  json_text decoded; /* the fast path's string with escapes */
  json_fast_number number; /* the fast path's number being called back */
#ifdef TM_JSON_TEST_KNOBS
  /* Words of the config, for the tests only. */
  bool yajl_only;  /* "yajl-only": yajl reads whole segments, as before
                    * the fast path; the reference it is compared with */
  bool count_fast; /* "count-fast": stat json_test_fast_elements */
  bool cancel_third_event; /* "cancel-third-event": the third event's end
                            * stops the parser, as a failing callback
                            * would */
  int events_ended;
#endif

  uint8_t where[WHERE_MAX];
  unsigned depth; /* entries of `where` in use; where[0] = WHERE_TOP */
  uint32_t skip_depth;
  uint8_t root_key;
  uint8_t event_key;

  TM_VEC(json_frame) frames;
  json_text path;          /* "args.a.b[2]" under construction */
  json_text metadata_name; /* "json_metadata.<key>" */
  json_text raw;           /* a metadata object/array as JSON text */

  json_event_buf event;
  json_emitter *emitter;

  /* Where the current array element is, for the import logs of a dropped
   * one (see the top of the file). */
  const uint8_t *seg_data; /* the segment being parsed; NULL between */
  size_t seg_len;
  int64_t seg_offset;
  const uint8_t *yajl_data; /* what yajl_parse is reading now */
  int64_t yajl_offset;
  /* The current element's start: `fast_element` when the fast path is
   * reading it (in seg_data, maybe at whitespace before it), else
   * `element_offset` (its first byte, noted in yajl's callbacks; -1
   * before any). A failure or a segment's end always concerns the
   * element noted last, so fast_element is never used stale. */
  const uint8_t *fast_element;
  int64_t element_offset;
  json_text kept;          /* its first bytes from earlier segments */
  int64_t kept_from;      /* file offset of kept.data[0]; -1: none */
  json_text failure_text;  /* scratch for raw_event */
  bool skipping_element;  /* a non-object element is being skipped */

  /* systemTraceEvents: created with the first string body. */
  systrace_emitter *system_trace;
  bool system_key_is_type;  /* the object form's current key is "type" */
  bool system_key_is_events; /* ... is "events" */
  bool system_is_fuchsia;   /* the object form said "type":"fuchsia" */
  bool system_records_skipped; /* a record was neither "t" nor "p" */
  /* The object form's record being read (Fuchsia "t" and "p" records). */
  char record_ph;
  int record_key; /* 0 other, 1 ph, 2 pid, 3 tid, 4 name */
  bool record_has_pid, record_has_tid;
  int64_t record_pid, record_tid;
  json_text record_name;
} json_reader;

/* --- errors ---------------------------------------------------------------- */

static void fail(json_reader *r, int64_t offset, const char *message) {
  if (r->failed)
    return;
  r->failed = true;
  r->svc->report_error(r->host, offset, message);
}

#define DEFAULT_MAX_RECORD ((uint64_t)512 << 20)

/* The record budget tripped at `offset`: counted, then the file's error. */
static void fail_budget(json_reader *r, int64_t offset, const char *what) {
  if (r->failed)
    return;
  r->svc->stat_add(r->host, "reader_record_size_exceeded", 1);
  char message[160];
  snprintf(message, sizeof message,
           "%s longer than %llu bytes (budget --max-record-size)", what,
           (unsigned long long)r->max_record);
  fail(r, offset, message);
}

/* True inside one event of the event array (at any depth of its args). */
static bool in_event(const json_reader *r) {
  for (unsigned k = 0; k < r->depth; k++)
    if (r->where[k] == WHERE_EVENT)
      return true;
  return false;
}

/* Stops yajl from a callback; parse_segment() reports `message`. */
static int cancel(json_reader *r, const char *message) {
  r->cancel_message = message;
  return 0;
}

/* json_event_buf_store's one failure: spans address 2 GiB of an event's
 * text (a record budget above that lets an event reach it). */
static int event_too_long(json_reader *r) {
  return cancel(r, "a JSON event's strings are longer than 2 GiB");
}

/* --- structure helpers ------------------------------------------------------ */

static bool is_container(const json_value *v) {
  return v->type == VALUE_MAP || v->type == VALUE_ARRAY;
}

static void push_where(json_reader *r, json_where w) {
  /* Depth is bounded by construction (see WHERE_MAX). */
  if (r->depth < WHERE_MAX)
    r->where[r->depth++] = (uint8_t)w;
}

/* Ignores a value; a container is skipped with everything inside it. */
static int skip_value(json_reader *r, const json_value *v) {
  if (is_container(v))
    r->skip_depth = 1;
  return 1;
}

static void push_frame(json_reader *r, bool is_array, size_t base_len) {
  tm_vec_push(&r->frames,
              ((json_frame){.base_len = (uint32_t)base_len, .is_array = is_array}));
}

/* --- event fields ------------------------------------------------------------ */

/* Every event has a dozen keys: compare bytes, not strings. */
static inline uint8_t classify_event_key(const char *s, size_t len) {
#define KEY2(a, b) (s[0] == (a) && s[1] == (b))
#define KEY3(a, b, c) (KEY2(a, b) && s[2] == (c))
  switch (len) {
  case 1:
    return s[0] == 's' ? KEY_SCOPE : KEY_OTHER;
  case 2:
    return KEY2('p', 'h')   ? KEY_PH
           : KEY2('t', 's') ? KEY_TS
           : KEY2('i', 'd') ? KEY_ID
           : KEY2('b', 'p') ? KEY_BP
                            : KEY_OTHER;
  case 3:
    return KEY3('p', 'i', 'd')   ? KEY_PID
           : KEY3('t', 'i', 'd') ? KEY_TID
           : KEY3('d', 'u', 'r') ? KEY_DUR
           : KEY3('c', 'a', 't') ? KEY_CAT
           : KEY3('t', 't', 's') ? KEY_TTS
           : KEY3('i', 'd', '2') ? KEY_ID2
                                 : KEY_OTHER;
  case 4:
    return KEY3('n', 'a', 'm') && s[3] == 'e'   ? KEY_NAME
           : KEY3('a', 'r', 'g') && s[3] == 's' ? KEY_ARGS
           : KEY3('t', 'd', 'u') && s[3] == 'r' ? KEY_TDUR
                                                : KEY_OTHER;
  case 7:
    return memcmp(s, "bind_id", 7) == 0   ? KEY_BIND_ID
           : memcmp(s, "flow_in", 7) == 0 ? KEY_FLOW_IN
                                          : KEY_OTHER;
  case 8:
    return memcmp(s, "flow_out", 8) == 0 ? KEY_FLOW_OUT : KEY_OTHER;
  default:
    return KEY_OTHER;
  }
#undef KEY2
#undef KEY3
}

/* A number's value as json_number_parse gives it: from the fast path's
 * reading of an integer literal of at most 18 digits (json_number_parse's
 * own shortcut, which the same digits give) or of a short decimal
 * fraction (below), else from the text. */
static bool number_value(const json_value *v, json_number *n) {
  const json_fast_number *f = v->number;
  if (f && f->frac_digits == 0 && f->int_digits <= 18) {
    n->kind = JSON_NUMBER_INT;
    n->int_value = f->negative ? -(int64_t)f->int_value : (int64_t)f->int_value;
    n->real_value = (double)n->int_value;
    return true;
  }
  if (f && f->frac_digits > 0 && f->frac_digits <= 3 && f->int_digits <= 12) {
    /* A fraction of 1 to 3 digits: the value is exactly m / 1000 with
     * m < 10^15 < 2^53, and both m and 1000 are exact doubles, so the
     * division rounds the exact decimal value to nearest, as strtod does
     * (json_number_parse's result, without copying the text for it). */
    double q = (double)(f->int_value * 1000u + f->frac_value) / 1000.0;
    n->kind = JSON_NUMBER_REAL;
    n->int_value = 0;
    n->real_value = f->negative ? -q : q;
    return true;
  }
  return json_number_parse(v->text, v->len, n);
}

/* A time in µs as json_us_text_to_ns gives it: from the fast path's
 * reading when the integer part has at most 15 digits and the fraction
 * at most 3 (its own shortcut, by the same arithmetic), else from the
 * text. */
static bool number_us_to_ns(const json_value *v, int64_t *ns) {
  const json_fast_number *f = v->number;
  if (f && f->int_digits <= 15 && f->frac_digits <= 3) {
    uint64_t x = f->int_value * 1000u + f->frac_value;
    *ns = f->negative ? -(int64_t)x : (int64_t)x;
    return true;
  }
  return json_us_text_to_ns(v->text, v->len, ns);
}

static void time_value(json_time_field *field, const json_value *v) {
  if (v->type == VALUE_NULL) {
    field->state = JSON_FIELD_ABSENT;
  } else if ((v->type == VALUE_NUMBER && number_us_to_ns(v, &field->ns)) ||
             (v->type == VALUE_STRING &&
              json_us_text_to_ns(v->text, v->len, &field->ns))) {
    field->state = JSON_FIELD_OK;
  } else {
    field->state = JSON_FIELD_BAD;
  }
}

/* pid/tid: numbers outside [0, 2^32) become 0, doubles are truncated. */
static uint64_t coerce_to_u32(const json_number *n) {
  if (n->kind == JSON_NUMBER_INT)
    return n->int_value < 0 || n->int_value > (int64_t)UINT32_MAX
               ? 0
               : (uint64_t)n->int_value;
  double d = n->real_value;
  return d >= 0 && d < 4294967296.0 ? (uint64_t)d : 0;
}

static bool process_or_thread_value(json_reader *r, json_id_field *field,
                                    bool *present, const json_value *v) {
  json_number n;
  field->kind = JSON_ID_NONE;
  *present = false;
  if (v->type == VALUE_NUMBER && number_value(v, &n)) {
    field->kind = JSON_ID_NUMBER;
    field->number = coerce_to_u32(&n);
    *present = true;
  } else if (v->type == VALUE_STRING) {
    if (!json_event_buf_store(&r->event, v->text, v->len, &field->text))
      return false;
    field->kind = JSON_ID_STRING;
    *present = true;
  }
  return true;
}

/* id / bind_id: integers and strings; doubles are ignored. */
static bool id_value(json_reader *r, json_id_field *field,
                     const json_value *v) {
  json_number n;
  field->kind = JSON_ID_NONE;
  if (v->type == VALUE_NUMBER && number_value(v, &n) &&
      n.kind == JSON_NUMBER_INT) {
    field->kind = JSON_ID_NUMBER;
    field->number = (uint64_t)n.int_value;
  } else if (v->type == VALUE_STRING) {
    if (!json_event_buf_store(&r->event, v->text, v->len, &field->text))
      return false;
    field->kind = JSON_ID_STRING;
  }
  return true;
}

/* name / cat: an empty or non-string value means NULL. */
static bool string_value(json_reader *r, json_span *span,
                         const json_value *v) {
  *span = (json_span){0, 0};
  if (v->type != VALUE_STRING || v->len == 0)
    return true;
  return json_event_buf_store(&r->event, v->text, v->len, span);
}

static int event_value(json_reader *r, const json_value *v) {
  json_event *ev = &r->event.ev;
  bool ok = true;
  switch (r->event_key) {
  case KEY_PH:
    ev->phase = v->type == VALUE_STRING && v->len > 0 ? v->text[0] : 0;
    break;
  case KEY_TS:
    time_value(&ev->ts, v);
    break;
  case KEY_DUR:
    time_value(&ev->dur, v);
    break;
  case KEY_TTS:
    time_value(&ev->tts, v);
    break;
  case KEY_TDUR:
    time_value(&ev->tdur, v);
    break;
  case KEY_PID:
    ok = process_or_thread_value(r, &ev->pid, &ev->has_pid, v);
    break;
  case KEY_TID:
    ok = process_or_thread_value(r, &ev->tid, &ev->has_tid, v);
    break;
  case KEY_NAME:
    ok = string_value(r, &ev->name, v);
    break;
  case KEY_CAT:
    ok = string_value(r, &ev->cat, v);
    break;
  case KEY_ID:
    ok = id_value(r, &ev->id, v);
    break;
  case KEY_BIND_ID:
    ok = id_value(r, &ev->bind_id, v);
    break;
  case KEY_FLOW_IN:
    ev->flow_in = v->type == VALUE_BOOL && v->boolean;
    break;
  case KEY_FLOW_OUT:
    ev->flow_out = v->type == VALUE_BOOL && v->boolean;
    break;
  case KEY_BP:
    ev->bind_enclosing = v->type == VALUE_STRING && v->len == 1 &&
                         v->text[0] == 'e';
    break;
  case KEY_SCOPE:
    ev->scope = v->type == VALUE_STRING && v->len == 1 &&
                        (v->text[0] == 'g' || v->text[0] == 'p' ||
                         v->text[0] == 't')
                    ? v->text[0]
                    : 0;
    break;
  case KEY_ARGS:
    if (v->type != VALUE_MAP)
      return skip_value(r, v);
    ev->has_args = true;
    r->path.len = 0;
    json_text_append(&r->path, "args", 4);
    push_frame(r, false, 4);
    push_where(r, WHERE_ARGS);
    return 1;
  case KEY_ID2:
    if (v->type == VALUE_MAP) {
      ev->has_id2_local = ev->has_id2_global = false;
      push_where(r, WHERE_ID2);
      return 1;
    }
    if (v->type != VALUE_NULL)
      ev->id2_bad = true;
    return skip_value(r, v);
  default:
    break;
  }
  if (!ok)
    return event_too_long(r);
  return skip_value(r, v);
}

static int id2_value(json_reader *r, const json_value *v) {
  json_event *ev = &r->event.ev;
  if ((r->event_key == KEY_ID2_LOCAL || r->event_key == KEY_ID2_GLOBAL) &&
      (v->type == VALUE_STRING || v->type == VALUE_NUMBER)) {
    bool local = r->event_key == KEY_ID2_LOCAL;
    json_span *span = local ? &ev->id2_local : &ev->id2_global;
    if (!json_event_buf_store(&r->event, v->text, v->len, span))
      return event_too_long(r);
    if (local)
      ev->has_id2_local = true;
    else
      ev->has_id2_global = true;
    return 1;
  }
  return skip_value(r, v);
}

/* One value inside "args": flattened to its full key path. */
static int args_value(json_reader *r, const json_value *v) {
  json_frame *top = &r->frames.data[r->frames.len - 1];
  if (top->is_array) {
    /* "[<count>]", written backwards: snprintf was a tenth of the args. */
    char index[16];
    char *p = index + sizeof(index);
    uint32_t k = top->count++;
    *--p = ']';
    do
      *--p = (char)('0' + k % 10u);
    while ((k /= 10u) != 0);
    *--p = '[';
    json_text_truncate(&r->path, top->base_len);
    json_text_append(&r->path, p, (size_t)(index + sizeof(index) - p));
  }
  bool top_level = r->frames.len == 1;
  if (is_container(v) && !top_level) {
    push_frame(r, v->type == VALUE_ARRAY, r->path.len);
    return 1;
  }

  json_arg *arg = json_event_buf_add_arg(&r->event);
  if (!json_event_buf_store(&r->event, r->path.data, r->path.len, &arg->key))
    return event_too_long(r);
  arg->top_level = top_level;
  json_number n;
  switch (v->type) {
  case VALUE_NULL:
    arg->kind = JSON_ARG_KIND_NULL;
    break;
  case VALUE_BOOL:
    arg->kind = JSON_ARG_KIND_BOOL;
    arg->u.int_value = v->boolean;
    break;
  case VALUE_NUMBER:
    if (!number_value(v, &n))
      return cancel(r, "invalid number in args");
    if (n.kind == JSON_NUMBER_INT) {
      arg->kind = JSON_ARG_KIND_INT;
      arg->u.int_value = n.int_value;
    } else {
      arg->kind = JSON_ARG_KIND_REAL;
      arg->u.real_value = n.real_value;
    }
    break;
  case VALUE_STRING:
    arg->kind = JSON_ARG_KIND_STRING;
    if (!json_event_buf_store(&r->event, v->text, v->len, &arg->u.text))
      return event_too_long(r);
    break;
  default: /* a container directly under "args": marked for counters */
    arg->kind = JSON_ARG_KIND_CONTAINER;
    push_frame(r, v->type == VALUE_ARRAY, r->path.len);
    break;
  }
  return 1;
}

/* --- metadata ---------------------------------------------------------------- */

/* The JSON text of a nested metadata value: its strings as the one JSON
 * string escaper writes them (core/base/json_string.h). */
static void raw_append_string(json_text *b, const char *s, size_t len) {
  json_text_append_char(b, '"');
  while (len) {
    char escape[TM_JSON_ESCAPE_MAX];
    size_t consumed = 0;
    size_t plain = tm_json_plain_prefix(s, len, escape, &consumed);
    json_text_append(b, s, plain);
    if (plain == len)
      break;
    json_text_append_str(b, escape);
    s += plain + consumed;
    len -= plain + consumed;
  }
  json_text_append_char(b, '"');
}

static void set_metadata_number(json_reader *r, const json_number *n) {
  if (n->kind == JSON_NUMBER_INT) {
    r->svc->metadata_set_int(r->host, r->metadata_name.data, n->int_value);
    return;
  }
  double d = n->real_value;
  /* An integral double within int64 is an int; anything else is text. */
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
      d == floor(d)) {
    r->svc->metadata_set_int(r->host, r->metadata_name.data, (int64_t)d);
    return;
  }
  char text[32];
  int len = snprintf(text, sizeof(text), "%g", d);
  r->svc->metadata_set_string(
      r->host, r->metadata_name.data,
      r->svc->intern_string(r->host, text, (size_t)len));
}

static int metadata_value(json_reader *r, const json_value *v) {
  json_number n;
  switch (v->type) {
  case VALUE_NULL:
    return 1; /* dropped */
  case VALUE_BOOL:
    r->svc->metadata_set_int(r->host, r->metadata_name.data, v->boolean);
    return 1;
  case VALUE_NUMBER:
    if (json_number_parse(v->text, v->len, &n))
      set_metadata_number(r, &n);
    return 1;
  case VALUE_STRING:
    r->svc->metadata_set_string(
        r->host, r->metadata_name.data,
        r->svc->intern_string(r->host, v->text, v->len));
    return 1;
  default:
    r->raw.len = 0;
    json_text_append_char(&r->raw, v->type == VALUE_MAP ? '{' : '[');
    push_frame(r, v->type == VALUE_ARRAY, 0);
    push_where(r, WHERE_RAW);
    return 1;
  }
}

/* One value inside a metadata object/array, re-serialised compactly. */
static int raw_value(json_reader *r, const json_value *v) {
  json_frame *top = &r->frames.data[r->frames.len - 1];
  if (top->is_array && top->count++ > 0)
    json_text_append_char(&r->raw, ',');
  switch (v->type) {
  case VALUE_NULL:
    json_text_append_str(&r->raw, "null");
    break;
  case VALUE_BOOL:
    json_text_append_str(&r->raw, v->boolean ? "true" : "false");
    break;
  case VALUE_NUMBER:
    json_text_append(&r->raw, v->text, v->len);
    break;
  case VALUE_STRING:
    raw_append_string(&r->raw, v->text, v->len);
    break;
  default:
    json_text_append_char(&r->raw, v->type == VALUE_MAP ? '{' : '[');
    push_frame(r, v->type == VALUE_ARRAY, 0);
    break;
  }
  return 1;
}

/* --- systemTraceEvents ----------------------------------------------------------- */

/* A systrace text body: '\n'-separated lines (a '\r' before the '\n' is
 * dropped); empty lines and '#' lines are skipped. Lines off the grammar
 * are counted by the emitter (systrace_parse_failure). */
static void system_trace_text(json_reader *r, const char *text, size_t len) {
  if (!r->system_trace) {
    r->system_trace = systrace_emitter_new(
        r->svc, r->host, r->svc->machine_default(r->host),
        r->svc->clock_private(r->host));
  }
  size_t start = 0;
  while (start < len) {
    const char *nl = memchr(text + start, '\n', len - start);
    size_t end = nl ? (size_t)(nl - text) : len;
    size_t line_len = end - start;
    if (line_len > 0 && text[start + line_len - 1] == '\r')
      line_len--;
    if (line_len > 0 && text[start] != '#')
      systrace_emitter_data_line(r->system_trace, text + start, line_len);
    start = end + 1;
  }
}

static int system_trace_events_value(json_reader *r, const json_value *v) {
  if (v->type == VALUE_STRING) {
    system_trace_text(r, v->text, v->len);
    return 1;
  }
  if (v->type == VALUE_MAP) {
    r->system_key_is_type = false;
    r->system_key_is_events = false;
    r->system_is_fuchsia = false;
    push_where(r, WHERE_SYSTEM_OBJECT);
    return 1;
  }
  r->svc->stat_add(r->host, "json_system_trace_events_invalid", 1);
  return skip_value(r, v);
}

/* A member of the object form: "type" and the "events" array. */
static int system_object_value(json_reader *r, const json_value *v) {
  if (r->system_key_is_type && v->type == VALUE_STRING)
    r->system_is_fuchsia = v->len == 7 && memcmp(v->text, "fuchsia", 7) == 0;
  if (r->system_key_is_events && v->type == VALUE_ARRAY) {
    push_where(r, WHERE_SYSTEM_EVENTS);
    return 1;
  }
  return skip_value(r, v);
}

static int system_events_value(json_reader *r, const json_value *v) {
  if (v->type != VALUE_MAP)
    return skip_value(r, v);
  r->record_ph = 0;
  r->record_key = 0;
  r->record_has_pid = r->record_has_tid = false;
  r->record_name.len = 0;
  push_where(r, WHERE_SYSTEM_RECORD);
  return 1;
}

/* A non-negative integer id of a record (Fuchsia koids fit int64). */
static bool record_id(const json_value *v, int64_t *out) {
  json_number n;
  if (v->type != VALUE_NUMBER || !json_number_parse(v->text, v->len, &n) ||
      n.kind != JSON_NUMBER_INT || n.int_value < 0)
    return false;
  *out = n.int_value;
  return true;
}

static int system_record_value(json_reader *r, const json_value *v) {
  switch (r->record_key) {
  case 1:
    if (v->type == VALUE_STRING && v->len > 0)
      r->record_ph = v->text[0];
    break;
  case 2:
    r->record_has_pid = record_id(v, &r->record_pid);
    break;
  case 3:
    r->record_has_tid = record_id(v, &r->record_tid);
    break;
  case 4:
    if (v->type == VALUE_STRING) {
      r->record_name.len = 0;
      json_text_append(&r->record_name, v->text, v->len);
    }
    break;
  default:
    break;
  }
  return skip_value(r, v);
}

/* The record ended: a thread ("t") or process ("p") record names its row;
 * a record of another kind, or one missing its ids, is skipped. */
static void system_record_end(json_reader *r) {
  tm_machine_ref machine = r->svc->machine_default(r->host);
  tm_str_id name = r->record_name.len
                       ? r->svc->intern_string(r->host, r->record_name.data,
                                               r->record_name.len)
                       : 0;
  if (r->record_ph == 't' && r->record_has_pid && r->record_has_tid) {
    tm_thread_ref thread =
        r->svc->thread(r->host, machine, r->record_pid, r->record_tid);
    if (name)
      r->svc->thread_set_name(r->host, thread, name);
  } else if (r->record_ph == 'p' && r->record_has_pid) {
    tm_process_ref process = r->svc->process(r->host, machine, r->record_pid);
    if (name)
      r->svc->process_set_name(r->host, process, name);
  } else {
    r->system_records_skipped = true;
  }
}

/* --- dropped events ----------------------------------------------------------- */

/* How much of a malformed element an import log quotes (raw_event): its
 * first 1 KiB. One bad event of megabytes must not be copied whole into
 * the trace's strings; the start says which event it was. */
#define RAW_EVENT_MAX 1024u

static bool is_json_space(uint8_t c);

/* The element being read is still open (an event object, or a
 * non-object element being skipped): its bytes may be needed later. */
static bool element_open(const json_reader *r) {
  if (r->skipping_element)
    return true;
  for (unsigned i = 1; i < r->depth; i++)
    if (r->where[i] == WHERE_EVENT)
      return true;
  return false;
}

/* At a segment's end: if an element is open, keeps what the segment holds
 * of its first RAW_EVENT_MAX bytes, since the segment's bytes go away.
 * Runs once per segment; copies only for an element cut by the segment's
 * end (or by yajl reading one after a decline), at most RAW_EVENT_MAX
 * bytes in all per element. */
static void keep_element_bytes(json_reader *r) {
  /* An element still open was declined by the fast path: yajl noted it. */
  if (r->element_offset < 0 || !element_open(r))
    return;
  if (r->kept_from != r->element_offset) {
    r->kept.len = 0;
    r->kept_from = r->element_offset;
  }
  int64_t from = r->kept_from + (int64_t)r->kept.len;
  int64_t seg_end = r->seg_offset + (int64_t)r->seg_len;
  int64_t to = r->kept_from + (int64_t)RAW_EVENT_MAX;
  if (to > seg_end)
    to = seg_end;
  if (from < r->seg_offset || to <= from)
    return;
  json_text_append(&r->kept, r->seg_data + (from - r->seg_offset),
                   (size_t)(to - from));
}

/* Appends `len` bytes to `out`, dropping leading whitespace until the
 * first significant byte (`*started`), up to RAW_EVENT_MAX in all.
 * Returns how many whitespace bytes it dropped. */
static size_t append_element_bytes(json_text *out, const uint8_t *bytes,
                                   size_t len, bool *started) {
  size_t i = 0;
  if (!*started) {
    while (i < len && is_json_space(bytes[i]))
      i++;
    *started = i < len;
  }
  size_t n = len - i;
  if (n > RAW_EVENT_MAX - out->len)
    n = RAW_EVENT_MAX - out->len;
  json_text_append(out, bytes + i, n);
  return i;
}

/* Where the JSON value starting at s[0] ends: after its closing brace,
 * bracket or quote, or after the token of a literal or number (as yajl
 * lexed it, whatever garbage follows); `len` if not within the bytes.
 * The bytes were accepted by yajl or the fast path up to the element's
 * end, so a plain scan is enough. */
static size_t element_end(const char *s, size_t len) {
  if (len == 0)
    return 0;
  size_t literal = s[0] == 't' || s[0] == 'n' ? 4 : s[0] == 'f' ? 5 : 0;
  if (literal)
    return literal < len ? literal : len;
  if (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
    size_t i = 1;
    while (i < len && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
                       s[i] == 'e' || s[i] == 'E' || s[i] == '+' ||
                       s[i] == '-'))
      i++;
    return i;
  }
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"') {
        in_string = false;
        if (depth == 0)
          return i + 1;
      }
      continue;
    }
    switch (c) {
    case '"':
      in_string = true;
      break;
    case '{':
    case '[':
      depth++;
      break;
    case '}':
    case ']':
      if (depth <= 1)
        return i + 1;
      depth--;
      break;
    default:
      break;
    }
  }
  return len;
}

/* Gathers the current element's text (kept bytes, then the segment's)
 * into failure_text, from its first significant byte to its end or
 * RAW_EVENT_MAX bytes. It is the text as the parser saw it: a trailing
 * comma the segmenter blanked reads as a space. Returns the file offset
 * of that first byte, -1 if unknown. */
static int64_t element_text(json_reader *r) {
  json_text *out = &r->failure_text;
  out->len = 0;
  int64_t start = r->element_offset;
  if (r->fast_element) /* in seg_data: failures happen while it is parsed */
    start = r->seg_data ? r->seg_offset +
                              (int64_t)(r->fast_element - r->seg_data)
                        : -1;
  if (start < 0)
    return -1;
  int64_t at = start;
  size_t skipped = 0;
  bool started = false;
  if (r->kept_from == at && r->kept.len > 0) {
    skipped += append_element_bytes(out, (const uint8_t *)r->kept.data,
                                    r->kept.len, &started);
    at += (int64_t)r->kept.len;
  }
  if (r->seg_data && at >= r->seg_offset &&
      at < r->seg_offset + (int64_t)r->seg_len) {
    size_t from = (size_t)(at - r->seg_offset);
    skipped += append_element_bytes(out, r->seg_data + from,
                                    r->seg_len - from, &started);
  }
  if (out->data)
    json_text_truncate(out, element_end(out->data, out->len));
  return start + (int64_t)skipped;
}

/* The one path of json_tokenizer_failure and json_parser_failure (the
 * emitter's json_failure_fn; `buf` NULL for an element that is not an
 * object): a log row at the element's offset, with raw_event and error for
 * the tokenizer kind, event_name (when the event has one) and event_phase
 * for the parser kind. */
static void event_failure(void *ctx, const json_event_buf *buf,
                          const char *stat, const char *error) {
  json_reader *r = ctx;
  int64_t offset = element_text(r);
  tm_import_log_arg args[2];
  size_t n = 0;
  char phase = buf ? buf->ev.phase : 0;
  if (error) {
    args[n++] = (tm_import_log_arg){TM_IMPORT_LOG_ARG_INIT,
                                    .key = "raw_event",
                                    .type = TM_ARG_STRING,
                                    .string = r->failure_text.data
                                                  ? r->failure_text.data
                                                  : "",
                                    .string_len = r->failure_text.len};
    args[n++] = (tm_import_log_arg){TM_IMPORT_LOG_ARG_INIT,
                                    .key = "error",
                                    .type = TM_ARG_STRING,
                                    .string = error,
                                    .string_len = strlen(error)};
  } else {
    if (buf && buf->ev.name.len > 0)
      args[n++] = (tm_import_log_arg){
          TM_IMPORT_LOG_ARG_INIT,
          .key = "event_name",
          .type = TM_ARG_STRING,
          .string = json_event_buf_text(buf, buf->ev.name),
          .string_len = buf->ev.name.len};
    /* Only the phase's first byte is kept: it is all that selects. */
    args[n++] = (tm_import_log_arg){TM_IMPORT_LOG_ARG_INIT,
                                    .key = "event_phase",
                                    .type = TM_ARG_STRING,
                                    .string = &phase,
                                    .string_len = phase ? 1 : 0};
  }
  r->svc->import_log(r->host, stat, offset, args, n);
}

/* In yajl's callback for an element of the event array (not one the fast
 * path is reading, which noted its start already): where the element's
 * token began. Its token lies whole in yajl's current buffer (segments
 * and stretches are cut only between tokens), which ends just after it. */
static void note_yajl_element(json_reader *r, const json_value *v) {
  const uint8_t *d = r->yajl_data;
  size_t start = yajl_get_bytes_consumed(r->yajl);
  if (is_container(v)) {
    start--; /* the '{' or '[' */
  } else if (v->type == VALUE_STRING) {
    /* Back from the closing quote to the first quote not escaped. */
    start--;
    while (start > 0) {
      start--;
      if (d[start] != '"')
        continue;
      size_t k = start;
      while (k > 0 && d[k - 1] == '\\')
        k--;
      if ((start - k) % 2 == 0)
        break;
    }
  } else {
    while (start > 0 && !is_json_space(d[start - 1]) && d[start - 1] != ',' &&
           d[start - 1] != '[')
      start--;
  }
  r->element_offset = r->yajl_offset + (int64_t)start;
  r->fast_element = NULL;
}

/* An element of the event array that is not an object: a scalar is
 * logged now, a container once skipped whole (so its text is known).
 * Only yajl reads such an element (the fast path takes objects only). */
static int bad_element(json_reader *r, const json_value *v) {
  note_yajl_element(r, v);
  if (is_container(v)) {
    r->skipping_element = true;
    return skip_value(r, v);
  }
  event_failure(r, NULL, "json_tokenizer_failure", "event is not an object");
  return 1;
}

/* --- yajl callbacks ------------------------------------------------------------ */

static int on_value(json_reader *r, const json_value *v) {
  if (r->skip_depth) {
    if (is_container(v))
      r->skip_depth++;
    return 1;
  }
  switch ((json_where)r->where[r->depth - 1]) {
  case WHERE_TOP:
    if (v->type == VALUE_MAP)
      push_where(r, WHERE_ROOT);
    else if (v->type == VALUE_ARRAY)
      push_where(r, WHERE_EVENTS);
    else
      return cancel(r, "not a JSON trace: the top-level value is neither an "
                       "object nor an array");
    return 1;
  case WHERE_ROOT:
    switch (r->root_key) {
    case ROOT_TRACE_EVENTS:
      if (v->type != VALUE_ARRAY)
        return cancel(r, "Failed to parse JSON: traceEvents is not an array");
      push_where(r, WHERE_EVENTS);
      return 1;
    case ROOT_METADATA:
      if (v->type != VALUE_MAP)
        return skip_value(r, v);
      push_where(r, WHERE_METADATA);
      return 1;
    case ROOT_DISPLAY_TIME_UNIT:
      r->svc->stat_add(r->host, "json_display_time_unit", 1);
      return skip_value(r, v);
    case ROOT_SYSTEM_TRACE_EVENTS:
      return system_trace_events_value(r, v);
    default:
      /* Unknown keys, whatever their type. */
      return skip_value(r, v);
    }
  case WHERE_EVENTS:
    if (v->type != VALUE_MAP)
      return bad_element(r, v);
    json_event_buf_reset(&r->event);
    push_where(r, WHERE_EVENT);
    return 1;
  case WHERE_EVENT:
    return event_value(r, v);
  case WHERE_ID2:
    return id2_value(r, v);
  case WHERE_ARGS:
    return args_value(r, v);
  case WHERE_METADATA:
    return metadata_value(r, v);
  case WHERE_RAW:
    return raw_value(r, v);
  case WHERE_SYSTEM_OBJECT:
    return system_object_value(r, v);
  case WHERE_SYSTEM_EVENTS:
    return system_events_value(r, v);
  case WHERE_SYSTEM_RECORD:
    return system_record_value(r, v);
  }
  return 1;
}

static int on_end(void *ctx) {
  json_reader *r = ctx;
  if (r->skip_depth) {
    if (--r->skip_depth == 0 && r->skipping_element) {
      r->skipping_element = false;
      event_failure(r, NULL, "json_tokenizer_failure",
                    "event is not an object");
    }
    return 1;
  }
  switch ((json_where)r->where[r->depth - 1]) {
  case WHERE_ARGS:
    if (--r->frames.len == 0)
      r->depth--;
    return 1;
  case WHERE_RAW: {
    bool was_array = r->frames.data[--r->frames.len].is_array;
    json_text_append_char(&r->raw, was_array ? ']' : '}');
    if (r->frames.len == 0) {
      r->svc->metadata_set_string(
          r->host, r->metadata_name.data,
          r->svc->intern_string(r->host, r->raw.data, r->raw.len));
      r->depth--;
    }
    return 1;
  }
  case WHERE_EVENT:
    r->depth--;
#ifdef TM_JSON_TEST_KNOBS
    if (r->cancel_third_event && ++r->events_ended == 3)
      return cancel(r, "test knob: the third event's end stops the parser");
#endif
    json_emitter_emit(r->emitter, &r->event);
    return 1;
  case WHERE_EVENTS:
  case WHERE_ROOT:
    r->depth--;
    if (r->depth == 1)
      r->root_done = true;
    return 1;
  case WHERE_SYSTEM_OBJECT:
    if (!r->system_is_fuchsia)
      r->svc->stat_add(r->host, "json_system_trace_events_invalid", 1);
    else if (r->system_records_skipped)
      r->svc->stat_add(r->host, "json_system_trace_events_skipped", 1);
    r->depth--;
    return 1;
  case WHERE_SYSTEM_RECORD:
    system_record_end(r);
    r->depth--;
    return 1;
  default:
    r->depth--;
    return 1;
  }
}

static int on_map_key(void *ctx, const unsigned char *key, size_t len) {
  json_reader *r = ctx;
  const char *s = (const char *)key;
  if (r->skip_depth)
    return 1;
  switch ((json_where)r->where[r->depth - 1]) {
  case WHERE_ROOT:
    if (len == 11 && memcmp(s, "traceEvents", 11) == 0)
      r->root_key = ROOT_TRACE_EVENTS;
    else if (len == 8 && memcmp(s, "metadata", 8) == 0)
      r->root_key = ROOT_METADATA;
    else if (len == 15 && memcmp(s, "displayTimeUnit", 15) == 0)
      r->root_key = ROOT_DISPLAY_TIME_UNIT;
    else if (len == 17 && memcmp(s, "systemTraceEvents", 17) == 0)
      r->root_key = ROOT_SYSTEM_TRACE_EVENTS;
    else
      r->root_key = ROOT_OTHER;
    return 1;
  case WHERE_EVENT:
    r->event.ev.n_keys++;
    r->event_key = classify_event_key(s, len);
    return 1;
  case WHERE_ID2:
    r->event_key = len == 5 && memcmp(s, "local", 5) == 0    ? KEY_ID2_LOCAL
                   : len == 6 && memcmp(s, "global", 6) == 0 ? KEY_ID2_GLOBAL
                                                             : KEY_OTHER;
    return 1;
  case WHERE_ARGS: {
    json_frame *top = &r->frames.data[r->frames.len - 1];
    top->count++;
    json_text_truncate(&r->path, top->base_len);
    json_text_append_char(&r->path, '.');
    json_text_append(&r->path, s, len);
    return 1;
  }
  case WHERE_METADATA:
    r->metadata_name.len = 0;
    json_text_append_str(&r->metadata_name, "json_metadata.");
    json_text_append(&r->metadata_name, s, len);
    return 1;
  case WHERE_SYSTEM_OBJECT:
    r->system_key_is_type = len == 4 && memcmp(s, "type", 4) == 0;
    r->system_key_is_events = len == 6 && memcmp(s, "events", 6) == 0;
    return 1;
  case WHERE_SYSTEM_RECORD:
    r->record_key = len == 2 && memcmp(s, "ph", 2) == 0     ? 1
                    : len == 3 && memcmp(s, "pid", 3) == 0  ? 2
                    : len == 3 && memcmp(s, "tid", 3) == 0  ? 3
                    : len == 4 && memcmp(s, "name", 4) == 0 ? 4
                                                            : 0;
    return 1;
  case WHERE_RAW: {
    json_frame *top = &r->frames.data[r->frames.len - 1];
    if (top->count++ > 0)
      json_text_append_char(&r->raw, ',');
    raw_append_string(&r->raw, s, len);
    json_text_append_char(&r->raw, ':');
    return 1;
  }
  default:
    return 1;
  }
}

static int on_null(void *ctx) {
  json_value v = {.type = VALUE_NULL};
  return on_value(ctx, &v);
}

static int on_boolean(void *ctx, int boolean) {
  json_value v = {.type = VALUE_BOOL, .boolean = boolean != 0};
  return on_value(ctx, &v);
}

static int on_number(void *ctx, const char *text, size_t len) {
  json_reader *r = ctx;
  json_value v = {.type = VALUE_NUMBER, .text = text, .len = len,
                  .number = r->number.valid ? &r->number : NULL};
  return on_value(r, &v);
}

static int on_string(void *ctx, const unsigned char *text, size_t len) {
  json_value v = {.type = VALUE_STRING, .text = (const char *)text, .len = len};
  return on_value(ctx, &v);
}

static int on_start_map(void *ctx) {
  json_value v = {.type = VALUE_MAP};
  return on_value(ctx, &v);
}

/* yajl's start_map: an event object yajl reads is noted here, so that
 * the fast path (which calls on_start_map) pays nothing for it. */
static int on_yajl_start_map(void *ctx) {
  json_reader *r = ctx;
  json_value v = {.type = VALUE_MAP};
  if (!r->skip_depth && r->where[r->depth - 1] == WHERE_EVENTS)
    note_yajl_element(r, &v);
  return on_value(r, &v);
}

static int on_start_array(void *ctx) {
  json_value v = {.type = VALUE_ARRAY};
  return on_value(ctx, &v);
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number, /* the digits themselves, for exact times */
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

/* yajl's own: `callbacks` but for noting where event objects start. */
static const yajl_callbacks parser_callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_yajl_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

/* The fast path's callbacks for the keys and values directly inside an
 * event: there `where` is WHERE_EVENT and nothing is being skipped (what
 * a nested value pushes, its end pops), so on_map_key's and on_value's
 * dispatch is known, and skipped. Containers take the general path. */
static int on_event_key(void *ctx, const unsigned char *key, size_t len) {
  json_reader *r = ctx;
  r->event.ev.n_keys++;
  r->event_key = classify_event_key((const char *)key, len);
  return 1;
}

static int on_event_null(void *ctx) {
  json_value v = {.type = VALUE_NULL};
  return event_value(ctx, &v);
}

static int on_event_boolean(void *ctx, int boolean) {
  json_value v = {.type = VALUE_BOOL, .boolean = boolean != 0};
  return event_value(ctx, &v);
}

static int on_event_number(void *ctx, const char *text, size_t len) {
  json_reader *r = ctx;
  json_value v = {.type = VALUE_NUMBER, .text = text, .len = len,
                  .number = r->number.valid ? &r->number : NULL};
  return event_value(r, &v);
}

static int on_event_string(void *ctx, const unsigned char *text, size_t len) {
  json_value v = {.type = VALUE_STRING, .text = (const char *)text, .len = len};
  return event_value(ctx, &v);
}

static const yajl_callbacks event_member_callbacks = {
    .yajl_null = on_event_null,
    .yajl_boolean = on_event_boolean,
    .yajl_number = on_event_number,
    .yajl_string = on_event_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_event_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

/* --- feeding yajl -------------------------------------------------------------- */

static void report_yajl_error(json_reader *r, yajl_status status,
                              int64_t offset) {
  if (status == yajl_status_client_canceled) {
    fail(r, offset, r->cancel_message ? r->cancel_message : "parse stopped");
    return;
  }
  unsigned char *detail = yajl_get_error(r->yajl, 0, NULL, 0);
  char message[256];
  size_t len = detail ? strlen((const char *)detail) : 0;
  while (len > 0 && (detail[len - 1] == '\n' || detail[len - 1] == ' '))
    len--;
  snprintf(message, sizeof(message), "Failed to parse JSON: %.*s", (int)len,
           detail ? (const char *)detail : "unknown error");
  if (detail)
    yajl_free_error(r->yajl, detail);
  fail(r, offset, message);
}

/* The bytes up to and including the next ',' or '[' outside strings (all
 * of them if there is none). `data` starts outside any string: at a
 * segment's start, or right after such a cut. Sets `*at_delimiter` when
 * the stretch ends with one. */
static size_t yajl_stretch(const uint8_t *data, size_t len,
                           bool *at_delimiter) {
  bool in_string = false;
  for (size_t i = 0; i < len; i++) {
    uint8_t c = data[i];
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',' || c == '[') {
      *at_delimiter = true;
      return i + 1;
    }
  }
  *at_delimiter = false;
  return len;
}

static bool yajl_feed(json_reader *r, const uint8_t *data, size_t len,
                      int64_t file_offset) {
  r->yajl_data = data;
  r->yajl_offset = file_offset;
  yajl_status status = yajl_parse(r->yajl, data, len);
  if (status == yajl_status_ok)
    return true;
  report_yajl_error(r, status,
                    file_offset + (int64_t)yajl_get_bytes_consumed(r->yajl));
  return false;
}

/* One element by the fast path. On a decline the reader's structure is
 * put back as it was at the element's start (the event buffer is reset
 * by yajl's start_map anyway). */
static json_fast_status fast_element(json_reader *r, const uint8_t *data,
                                     size_t len, size_t *consumed) {
  unsigned depth = r->depth;
  size_t n_frames = r->frames.len;
  /* The element is whole in `data`: its strings are used in place. */
  json_event_buf_read_in_place(&r->event, data, len);
  json_fast_status status =
      json_fast_element_inline(&callbacks, &event_member_callbacks, r,
                               &r->decoded, &r->number, data, len, consumed);
  json_event_buf_read_in_place(&r->event, NULL, 0);
  if (status == JSON_FAST_DECLINED) {
    r->depth = depth;
    r->frames.len = n_frames;
    r->skip_depth = 0;
    r->cancel_message = NULL;
  }
  return status;
}

/* The element at `data` (at `file_offset` in the file) by the fast path,
 * for both callers: parse_segment_body (between events yajl left) and
 * direct_elements (straight from the host's chunk). A stop fails the
 * reader here, at the offset where the fast path stopped. */
static inline json_fast_status take_fast_element(json_reader *r, const uint8_t *data,
                                                 size_t len, int64_t file_offset,
                                                 size_t *used) {
  r->fast_element = data;
  json_fast_status status = fast_element(r, data, len, used);
#ifdef TM_JSON_TEST_KNOBS
  if (status == JSON_FAST_DONE && r->count_fast)
    r->svc->stat_add(r->host, "json_test_fast_elements", 1);
#endif
  if (status == JSON_FAST_STOPPED)
    fail(r, file_offset + (int64_t)*used,
         r->cancel_message ? r->cancel_message : "parse stopped");
  return status;
}

static bool parse_segment_body(json_reader *r, const uint8_t *data,
                               size_t len, int64_t file_offset) {
  size_t pos = 0;
  while (pos < len) {
    if (r->at_element) {
      /* Before its whitespace; the element is whole in `data` if the
       * fast path takes it, and noted anew by yajl if it declines. */
      size_t used = 0;
      json_fast_status status =
          take_fast_element(r, data + pos, len - pos, file_offset + (int64_t)pos, &used);
      if (status == JSON_FAST_DONE) {
        pos += used;
        continue;
      }
      if (status == JSON_FAST_STOPPED)
        return false;
      r->at_element = false; /* yajl reads this element */
    }
    bool at_delimiter;
    size_t n = yajl_stretch(data + pos, len - pos, &at_delimiter);
#ifdef TM_JSON_TEST_KNOBS
    if (r->yajl_only) {
      n = len - pos;
      at_delimiter = false;
    }
#endif
    if (!yajl_feed(r, data + pos, n, file_offset + (int64_t)pos))
      return false;
    pos += n;
    r->at_element = at_delimiter && r->skip_depth == 0 &&
                    r->where[r->depth - 1] == WHERE_EVENTS;
  }
  return true;
}

static bool parse_segment(void *ctx, const uint8_t *data, size_t len,
                          int64_t file_offset) {
  json_reader *r = ctx;
  r->seg_data = data;
  r->seg_len = len;
  r->seg_offset = file_offset;
  bool ok = parse_segment_body(r, data, len, file_offset);
  /* One event may span many segments: its buffers grow with it. */
  if (ok && r->element_offset >= 0 && in_event(r) &&
      (uint64_t)(file_offset + (int64_t)len - r->element_offset) > r->max_record) {
    fail_budget(r, r->element_offset, "a JSON event");
    ok = false;
  }
  if (ok)
    keep_element_bytes(r);
  r->seg_data = NULL; /* the bytes are the segmenter's again */
  return ok;
}

/* Whole events read by the fast path straight from the host's chunk,
 * while the segmenter is idle (json_segmenter_idle): it never scans them.
 * Returns the bytes taken; stops at the first element declined (left to
 * yajl, through the segmenter) or when the reader failed. */
static size_t direct_elements(json_reader *r, const uint8_t *data, size_t len,
                              int64_t file_offset) {
  r->seg_data = data; /* for the import logs of a dropped event */
  r->seg_len = len;
  r->seg_offset = file_offset;
  size_t pos = 0;
  while (pos < len) {
    size_t used = 0;
    json_fast_status status =
        take_fast_element(r, data + pos, len - pos, file_offset + (int64_t)pos, &used);
    if (status == JSON_FAST_DONE) {
      pos += used;
      continue;
    }
    if (status != JSON_FAST_STOPPED)
      r->at_element = false; /* yajl reads this element */
    break;
  }
  r->seg_data = NULL;
  return pos;
}

/* One host chunk: whole events by the fast path while the segmenter is
 * idle and yajl stands between events; the rest through the segmenter,
 * up to the next comma after which it is idle again. A chunk that starts
 * outside the event array (the file's head, metadata) goes to the
 * segmenter whole, as before this path existed. */
static bool feed_chunk(json_reader *r, const uint8_t *data, size_t len,
                       int64_t file_offset) {
  if (!r->at_element && json_segmenter_idle(&r->segmenter))
    return json_segmenter_feed(&r->segmenter, data, len, file_offset,
                               parse_segment, r);
  size_t pos = 0;
  while (pos < len) {
    bool direct = r->at_element && json_segmenter_idle(&r->segmenter);
#ifdef TM_JSON_TEST_KNOBS
    direct = direct && !r->yajl_only;
#endif
    if (direct) {
      pos += direct_elements(r, data + pos, len - pos,
                             file_offset + (int64_t)pos);
      if (r->failed)
        return false;
      if (pos == len)
        break;
    }
    bool ok = true;
    pos += json_segmenter_feed_head(&r->segmenter, data + pos, len - pos,
                                    file_offset + (int64_t)pos, parse_segment,
                                    r, &ok);
    if (!ok)
      return false;
  }
  return true;
}

static bool is_json_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* --- the reader's callbacks ------------------------------------------------------ */

/* Detection scores mirror trace_processor's sniffing order (lower
 * priority number sniffs first): score = 1000 - priority, so JSON (110)
 * scores 890, above systrace (200) which also accepts a leading space. */
#define JSON_PROBE_SCORE 890
#define PROBE_WINDOW 128

static bool has_prefix(const char *s, size_t len, const char *prefix) {
  size_t n = strlen(prefix);
  return len >= n && memcmp(s, prefix, n) == 0;
}

static int json_probe(const uint8_t *head, size_t len, const char *file_name) {
  (void)file_name;
  char stripped[24]; /* longest prefix compared: {"perfetto_manifest" */
  size_t n = 0;
  for (size_t i = 0; i < len && i < PROBE_WINDOW && n < sizeof(stripped);
       i++) {
    if (!is_json_space(head[i]) && head[i] != '\v' && head[i] != '\f')
      stripped[n++] = (char)head[i];
  }
  if (has_prefix(stripped, n, "[{\""))
    return JSON_PROBE_SCORE;
  if (!has_prefix(stripped, n, "{\""))
    return 0;
  /* Other formats that are JSON objects too, told apart by first key. */
  if (has_prefix(stripped, n, "{\"perfetto_manifest\"") ||
      has_prefix(stripped, n, "{\"meta\"") ||
      has_prefix(stripped, n, "{\"libs\""))
    return 0;
  return JSON_PROBE_SCORE;
}

static void json_close(void *state);

#ifdef TM_JSON_TEST_KNOBS
/* Whether `word` is one of the config's space-separated words. */
static bool config_has(const uint8_t *config, size_t len, const char *word) {
  size_t n = strlen(word);
  for (size_t i = 0; config && i + n <= len; i++)
    if ((i == 0 || config[i - 1] == ' ') && memcmp(config + i, word, n) == 0 &&
        (i + n == len || config[i + n] == ' '))
      return true;
  return false;
}
#endif

static void *json_open(const tm_host_services *services, tm_host *host,
                       const uint8_t *config, size_t config_len) {
  json_reader *r = g_new0(json_reader, 1);
  r->svc = services;
  r->host = host;
#ifdef TM_JSON_TEST_KNOBS
  r->yajl_only = config_has(config, config_len, "yajl-only");
  r->count_fast = config_has(config, config_len, "count-fast");
  r->cancel_third_event = config_has(config, config_len, "cancel-third-event");
#else
  (void)config;
  (void)config_len;
#endif
  r->where[0] = WHERE_TOP;
  r->depth = 1;
  r->max_record = DEFAULT_MAX_RECORD;
  if (TM_HOST_HAS(services, budget) && services->budget != NULL) {
    int64_t budget = services->budget(host, TM_BUDGET_RECORD_BYTES);
    if (budget > 0)
      r->max_record = (uint64_t)budget;
  }
  r->element_offset = -1;
  r->kept_from = -1;
  r->emitter = json_emitter_new(services, host, event_failure, r);
  r->yajl = yajl_alloc(&parser_callbacks, NULL, r);
  if (!r->yajl) { /* yajl's own allocator failed */
    services->report_error(host, -1, "out of memory opening the JSON reader");
    json_close(r);
    return NULL;
  }
  /* Names and args are bytes to us; UTF-8 checks would only turn odd
   * producers' traces into fatal errors. */
  yajl_config(r->yajl, yajl_dont_validate_strings, 1);
  return r;
}

static tm_status json_feed(void *state, const uint8_t *data, size_t len) {
  json_reader *r = state;
  if (r->failed)
    return TM_ERROR;
  size_t i = 0;
  if (!r->started) {
    while (i < len && is_json_space(data[i]))
      i++;
    if (i == len) {
      r->bytes_received += (int64_t)len;
      return TM_OK;
    }
    if (data[i] != '{' && data[i] != '[') {
      fail(r, r->bytes_received + (int64_t)i,
           "not a JSON trace: the first non-whitespace byte is neither '{' "
           "nor '['");
      return TM_ERROR;
    }
    r->started = true;
    r->object_form = data[i] == '{';
  }
  int64_t offset = r->bytes_received + (int64_t)i;
  r->bytes_received += (int64_t)len;
  if (!feed_chunk(r, data + i, len - i, offset))
    return TM_ERROR;
  /* A token (a string, a number) not yet whole is carried. */
  if (r->segmenter.carry.len > r->max_record) {
    fail_budget(r, r->segmenter.carry_offset, "a JSON token");
    return TM_ERROR;
  }
  return r->failed ? TM_ERROR : TM_OK;
}

static tm_status json_finish(void *state) {
  json_reader *r = state;
  if (r->failed)
    return TM_ERROR;
  if (!r->started) {
    fail(r, r->bytes_received, "JSON trace file is empty");
    return TM_ERROR;
  }
  if (!json_segmenter_flush(&r->segmenter, parse_segment, r))
    return TM_ERROR;
  if (!r->root_done) {
    if (!r->object_form)
      return TM_OK; /* an unclosed bare array is legal */
    fail(r, r->bytes_received, "JSON trace file is incomplete");
    return TM_ERROR;
  }
  yajl_status status = yajl_complete_parse(r->yajl);
  if (status != yajl_status_ok) {
    report_yajl_error(r, status, r->bytes_received);
    return TM_ERROR;
  }
  return TM_OK;
}

static void json_close(void *state) {
  json_reader *r = state;
  if (!r)
    return;
  if (r->yajl)
    yajl_free(r->yajl);
  json_emitter_free(r->emitter);
  systrace_emitter_free(r->system_trace);
  json_segmenter_free(&r->segmenter);
  json_event_buf_free(&r->event);
  tm_vec_free(&r->path);
  tm_vec_free(&r->metadata_name);
  tm_vec_free(&r->record_name);
  tm_vec_free(&r->raw);
  tm_vec_free(&r->decoded);
  tm_vec_free(&r->kept);
  tm_vec_free(&r->failure_text);
  tm_vec_free(&r->frames);
  g_free(r);
}

static const tm_reader_stat json_stats[] = {
    TM_READER_STAT("json_tokenizer_failure", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "JSON event malformed (no ph, bad ts/dur/tts/tdur); dropped."),
    TM_READER_STAT("json_parser_failure", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "JSON event semantically invalid (X without dur, async without id, "
        "counter without args); dropped."),
    TM_READER_STAT("json_display_time_unit", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        "displayTimeUnit present in a JSON trace (ignored)."),
    TM_READER_STAT("json_system_trace_events_skipped", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        "A JSON trace's systemTraceEvents in a form not read (Fuchsia's object "
        "form) was skipped; its traceEvents were imported."),
    TM_READER_STAT("json_system_trace_events_invalid", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A JSON trace's systemTraceEvents was neither a string nor Fuchsia's "
        "object form; skipped, its traceEvents were imported."),
    TM_READER_STAT("json_v8_profile_unknown_profile", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A JSON ProfileChunk (ph P) named a pid and id that no Profile event "
        "opened; its nodes and samples were dropped."),
    TM_READER_STAT("json_v8_profile_invalid_chunk", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A JSON ProfileChunk's samples and timeDeltas differed in length or "
        "held a non-integer; its samples were dropped, its nodes kept."),
    TM_READER_STAT("json_v8_profile_unknown_node", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A V8 CPU profile sample named a node, or had a parent on its chain, "
        "that its profile did not list (or the chain looped); dropped."),
    SYSTRACE_EMITTER_STATS,
    TM_READER_STAT("flow_invalid_id", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A flow event had no usable id."),
    TM_READER_STAT("flow_without_direction", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A flow binding had neither flow_in nor flow_out."),
};

static const tm_reader_descriptor json_descriptor = {
    TM_READER_DESCRIPTOR_INIT,
    /* No absolute clock; pid 0 is an ordinary process in JSON. */
    .flags = TM_READER_CLOCKLESS,
    .name = "json",
    .description = "Chrome JSON Trace Event Format (object or bare array)",
    .probe = json_probe,
    .open = json_open,
    .feed = json_feed,
    .finish = json_finish,
    .close = json_close,
    .stats = json_stats,
    .n_stats = sizeof json_stats / sizeof json_stats[0],
};

TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  return &json_descriptor;
}
