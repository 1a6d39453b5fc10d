/*
 * From one collected Trace Event Format event to host calls.
 *
 * The phase table follows docs/formats.md §2.3: B/E/X and thread
 * instants on the thread's track, async b/e/n on legacy async tracks keyed
 * by cookie, C on per-process counter tracks, s/t/f flow v1 and bind_id
 * flow v2, M names and sort hints, P V8 CPU profiles to the sample tables
 * (json_v8_profile.h); every other phase is ignored silently.
 * A malformed event (no "ph", bad time, bad "id2") is a
 * json_tokenizer_failure, a semantically incomplete one (X without dur,
 * async without pid or id, C without args, ...) a json_parser_failure;
 * both go to the reader's failure callback, which counts or logs them.
 *
 * Invariants: every event is placed on the file's private clock; the host
 * refs cached here (threads, processes, tracks) are valid for the whole
 * session, so a cache slot may be evicted and looked up again at any
 * time; at most one arg set is under construction, and it is committed
 * before the event that uses it is emitted.
 */
#include "json_event.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "json_cookie_map.h"
#include "json_number.h"
#include "json_v8_profile.h"

/* A string pid/tid (an upstream "quick-and-dirty" convention) becomes a
 * synthetic id outside the numeric range [0, 2^32) real pids are coerced
 * into, derived from the interned name, so equal names share a row. */
#define SYNTHETIC_ID_BASE ((int64_t)1 << 32)

#define THREAD_CACHE_SIZE 256u
#define PROCESS_CACHE_SIZE 64u

/* Interned strings, cached: events repeat a few names, categories and arg
 * keys, and a lookup here (a hash of at most 16 bytes, one memcmp) costs
 * a fraction of the host's hash and probe of the whole string. Exact: a
 * hit compares every byte; ids never change within a session.
 *
 * Two ways a set, the one used last first: realistic args carry many
 * values seen once (URLs, frame ids), and with one way each of them
 * evicted the name or key in its slot. With that and a better set hash
 * (intern_slot_of), the host's pool is asked 0.76M times instead of 1.50M
 * on the 1M-event realistic JSON file (320k of them new strings). */
#define INTERN_CACHE_SET_BITS 9
#define INTERN_CACHE_SETS (1u << INTERN_CACHE_SET_BITS)
#define INTERN_CACHE_MAX_LEN 88u

typedef struct intern_slot {
  uint32_t len; /* 0: empty slot ("" is never cached) */
  tm_str_id id;
  char bytes[INTERN_CACHE_MAX_LEN];
} intern_slot;

typedef struct thread_slot {
  int64_t pid, tid;
  tm_thread_ref thread; /* 0: empty slot */
  tm_track_ref track;   /* its thread_execution track, 0 until needed */
} thread_slot;

typedef struct process_slot {
  int64_t pid;
  tm_process_ref process; /* 0: empty slot */
  tm_track_ref instant_track; /* chrome_process_instant, 0 until needed */
} process_slot;

struct json_emitter {
  const tm_host_services *svc;
  tm_host *host;
  tm_clock_ref clock;     /* 0 until the first event */
  tm_machine_ref machine; /* 0 until the first event */
  bool have_machine;
  tm_track_ref global_instant_track;
  tm_str_id key_name, key_cat; /* flow v1 arg keys, interned once */
  thread_slot threads[THREAD_CACHE_SIZE];
  process_slot processes[PROCESS_CACHE_SIZE];
  json_cookie_map async_tracks; /* cookie (and upid) -> track */
  json_text scratch;             /* counter track names */
  json_v8_profiles *v8_profiles; /* NULL until the first P event */
  json_failure_fn on_failure;
  void *failure_ctx;
  intern_slot interned[INTERN_CACHE_SETS][2];
  /* The host takes string arg values as bytes (args_add_string): most
   * occur once (URLs, frame ids, long text), so they are not interned. */
  bool add_string;
};

/* --- hashing -------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

static uint64_t hash_bytes(uint64_t seed, const char *s, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull ^ mix64(seed);
  for (size_t i = 0; i < len; i++) {
    h ^= (uint8_t)s[i];
    h *= 0x100000001b3ull;
  }
  return mix64(h);
}

static uint64_t hash_combine(uint64_t a, uint64_t b) {
  return mix64(a ^ (mix64(b) + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2)));
}

/* --- lifecycle ------------------------------------------------------------ */

json_emitter *json_emitter_new(const tm_host_services *services,
                               tm_host *host, json_failure_fn on_failure,
                               void *failure_ctx) {
  json_emitter *em = g_new0(json_emitter, 1);
  em->svc = services;
  em->host = host;
  em->on_failure = on_failure;
  em->failure_ctx = failure_ctx;
  em->add_string =
      TM_HOST_HAS(services, args_add_string) && services->args_add_string;
  return em;
}

void json_emitter_free(json_emitter *em) {
  if (!em)
    return;
  json_cookie_map_clear(&em->async_tracks);
  tm_vec_free(&em->scratch);
  json_v8_profiles_free(em->v8_profiles);
  g_free(em);
}

/* --- host lookups, cached -------------------------------------------------- */

static tm_clock_ref event_clock(json_emitter *em) {
  if (!em->clock)
    em->clock = em->svc->clock_private(em->host);
  return em->clock;
}

static tm_machine_ref machine(json_emitter *em) {
  if (!em->have_machine) {
    em->machine = em->svc->machine_default(em->host);
    em->have_machine = true;
  }
  return em->machine;
}

/* The set of a string of at most INTERN_CACHE_MAX_LEN bytes, from its
 * first, middle and last eight bytes. Keys share long heads and tails
 * (args.data.stackTrace[0].scriptId .. [2].scriptId), so the middle
 * counts too; and the set comes from the top bits of a product, which
 * depend on all of the factor's bits (bits 40-48, taken before, left out
 * the last two bytes: clip[0] .. clip[7] shared one slot). Either way such
 * keys fell in one slot and evicted each other at every event. */
static unsigned intern_slot_of(const char *s, size_t len) {
  uint64_t head = 0, middle = 0, tail = 0;
  if (len >= 8) {
    memcpy(&head, s, 8);
    memcpy(&middle, s + len / 2 - 4, 8);
    memcpy(&tail, s + len - 8, 8);
  } else {
    for (size_t i = 0; i < len; i++)
      head = head << 8 | (uint8_t)s[i];
  }
  uint64_t h = (head * 0x9e3779b97f4a7c15ull) ^ (middle * 0xc2b2ae3d27d4eb4full) ^
               (tail * 0x94d049bb133111ebull) ^ (uint64_t)len;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return (unsigned)(h >> (64 - INTERN_CACHE_SET_BITS));
}

static tm_str_id intern(json_emitter *em, const char *s, size_t len) {
  if (len == 0 || len > INTERN_CACHE_MAX_LEN)
    return em->svc->intern_string(em->host, s, len);
  intern_slot *set = em->interned[intern_slot_of(s, len)];
  if (set[0].len == len && memcmp(set[0].bytes, s, len) == 0)
    return set[0].id;
  if (set[1].len == len && memcmp(set[1].bytes, s, len) == 0) {
    intern_slot seen_again = set[1];
    set[1] = set[0];
    set[0] = seen_again;
    return seen_again.id;
  }
  tm_str_id id = em->svc->intern_string(em->host, s, len);
  /* A new string takes the second way and is promoted only when seen
   * again: about one arg value an event is seen once (frame ids, URLs),
   * and putting each first would push out the names and keys that repeat. */
  intern_slot *slot = set[0].len == 0 ? &set[0] : &set[1];
  slot->len = (uint32_t)len;
  slot->id = id;
  memcpy(slot->bytes, s, len);
  return id;
}

static tm_str_id intern_span(json_emitter *em, const json_event_buf *buf,
                             json_span span) {
  if (span.len == 0)
    return 0;
  return intern(em, json_event_buf_text(buf, span), span.len);
}

/* A key part made of a span's bytes, not of its string id: ids are
 * numbered by the whole import (so they depend on the files before) and,
 * with the reader on a worker thread, are the file's own private ids
 * (core/input/reader_worker.h); a flow id or cookie made from them would
 * differ between two imports of the same file. 0: no span. */
static uint64_t span_key(const json_event_buf *buf, json_span span) {
  return span.len ? hash_bytes(1, json_event_buf_text(buf, span), span.len) : 0;
}

static process_slot *get_process(json_emitter *em, int64_t pid,
                                 tm_str_id name_if_new) {
  process_slot *slot =
      &em->processes[mix64((uint64_t)pid) & (PROCESS_CACHE_SIZE - 1)];
  if (slot->process && slot->pid == pid)
    return slot;
  slot->pid = pid;
  slot->process = em->svc->process(em->host, machine(em), pid);
  slot->instant_track = 0;
  if (name_if_new)
    em->svc->process_set_name(em->host, slot->process, name_if_new);
  return slot;
}

static thread_slot *get_thread(json_emitter *em, int64_t pid, int64_t tid,
                               tm_str_id name_if_new) {
  uint64_t h = mix64((uint64_t)pid * 0x9e3779b97f4a7c15ull ^ (uint64_t)tid);
  thread_slot *slot = &em->threads[h & (THREAD_CACHE_SIZE - 1)];
  if (slot->thread && slot->pid == pid && slot->tid == tid)
    return slot;
  slot->pid = pid;
  slot->tid = tid;
  slot->thread = em->svc->thread(em->host, machine(em), pid, tid);
  slot->track = 0;
  if (name_if_new)
    em->svc->thread_set_name(em->host, slot->thread, name_if_new);
  return slot;
}

static tm_track_ref thread_track(json_emitter *em, thread_slot *slot) {
  if (!slot->track)
    slot->track = em->svc->track_thread(em->host, slot->thread);
  return slot->track;
}

static void stat(json_emitter *em, const char *name) {
  em->svc->stat_add(em->host, name, 1);
}

/* The event is dropped as malformed; `error` says why, in a few words. */
static void tokenizer_failure(json_emitter *em, const json_event_buf *buf,
                              const char *error) {
  em->on_failure(em->failure_ctx, buf, "json_tokenizer_failure", error);
}

/* The event is well formed but cannot be imported as it stands. */
static void parser_failure(json_emitter *em, const json_event_buf *buf) {
  em->on_failure(em->failure_ctx, buf, "json_parser_failure", NULL);
}

/* --- args ------------------------------------------------------------------- */

/* Adds the flattened "args" to the host's arg set and commits it. */
static tm_args_ref emit_args(json_emitter *em, const json_event_buf *buf) {
  bool any = false;
  for (size_t i = 0; i < buf->args.len; i++) {
    const json_arg *arg = &buf->args.data[i];
    tm_arg_value value;
    switch (arg->kind) {
    case JSON_ARG_KIND_INT:
      value.type = TM_ARG_INT;
      value.u.int_value = arg->u.int_value;
      break;
    case JSON_ARG_KIND_BOOL:
      value.type = TM_ARG_BOOL;
      value.u.int_value = arg->u.int_value;
      break;
    case JSON_ARG_KIND_REAL:
      value.type = TM_ARG_REAL;
      value.u.real_value = arg->u.real_value;
      break;
    case JSON_ARG_KIND_STRING:
      if (em->add_string) {
        em->svc->args_add_string(em->host, intern_span(em, buf, arg->key),
                                 TM_ARG_STRING,
                                 json_event_buf_text(buf, arg->u.text),
                                 arg->u.text.len);
        any = true;
        continue;
      }
      value.type = TM_ARG_STRING;
      value.u.str_id =
          intern(em, json_event_buf_text(buf, arg->u.text), arg->u.text.len);
      break;
    default:
      continue; /* null and container markers carry no value */
    }
    tm_str_id key = intern_span(em, buf, arg->key);
    em->svc->args_add(em->host, key, value);
    any = true;
  }
  return any ? em->svc->args_commit(em->host) : TM_NO_ARGS;
}

/* The top-level member "args.<member>" of kind `kind`, or NULL. */
static const json_arg *find_top_arg(const json_event_buf *buf,
                                    const char *member, uint8_t kind) {
  size_t member_len = strlen(member);
  for (size_t i = 0; i < buf->args.len; i++) {
    const json_arg *arg = &buf->args.data[i];
    if (!arg->top_level || arg->kind != kind ||
        arg->key.len != 5 + member_len)
      continue;
    if (memcmp(json_event_buf_text(buf, arg->key) + 5, member, member_len) ==
        0)
      return arg;
  }
  return NULL;
}

/* --- flows -------------------------------------------------------------------- */

static void maybe_flow_v2(json_emitter *em, const json_event_buf *buf,
                          tm_track_ref track, int64_t ts) {
  const json_event *ev = &buf->ev;
  uint64_t flow_id;
  if (ev->bind_id.kind == JSON_ID_NONE)
    return;
  if (ev->bind_id.kind == JSON_ID_NUMBER) {
    flow_id = ev->bind_id.number;
  } else if (!json_hex_id_parse(json_event_buf_text(buf, ev->bind_id.text),
                                ev->bind_id.text.len, &flow_id)) {
    stat(em, "flow_invalid_id");
    return;
  }
  tm_flow_direction direction;
  if (ev->flow_in && ev->flow_out)
    direction = TM_FLOW_STEP;
  else if (ev->flow_out)
    direction = TM_FLOW_OUT;
  else if (ev->flow_in)
    direction = TM_FLOW_IN_KEEP; /* upstream never closes a JSON flow */
  else {
    stat(em, "flow_without_direction");
    return;
  }
  em->svc->flow(em->host, track, event_clock(em), ts, flow_id, direction,
                TM_FLOW_BIND_ENCLOSING, TM_NO_ARGS);
}

static void emit_flow_v1(json_emitter *em, const json_event_buf *buf,
                         thread_slot *thread) {
  const json_event *ev = &buf->ev;
  uint64_t raw_id;
  if (ev->id.kind == JSON_ID_NUMBER) {
    raw_id = ev->id.number;
  } else if (ev->id.kind != JSON_ID_STRING ||
             !json_hex_id_parse(json_event_buf_text(buf, ev->id.text),
                                ev->id.text.len, &raw_id)) {
    stat(em, "flow_invalid_id");
    return;
  }
  tm_str_id name = intern_span(em, buf, ev->name);
  tm_str_id cat = intern_span(em, buf, ev->cat);
  /* v1 flows are keyed by (id, cat, name); ids are file-scoped by the host. */
  uint64_t flow_id = hash_combine(hash_combine(mix64(raw_id), span_key(buf, ev->cat)),
                                  span_key(buf, ev->name));

  if (name || cat) {
    if (!em->key_name) {
      em->key_name = em->svc->intern_string(em->host, "name", 4);
      em->key_cat = em->svc->intern_string(em->host, "cat", 3);
    }
    if (name)
      em->svc->args_add(em->host, em->key_name,
                        (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = name});
    if (cat)
      em->svc->args_add(em->host, em->key_cat,
                        (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = cat});
  }
  tm_args_ref args = (name || cat) ? em->svc->args_commit(em->host)
                                   : TM_NO_ARGS;
  tm_flow_direction direction = ev->phase == 's'   ? TM_FLOW_OUT
                                : ev->phase == 't' ? TM_FLOW_STEP
                                                   : TM_FLOW_IN_KEEP;
  tm_flow_binding binding = ev->phase == 'f' && !ev->bind_enclosing
                                ? TM_FLOW_BIND_NEXT_BEGIN
                                : TM_FLOW_BIND_ENCLOSING;
  em->svc->flow(em->host, thread_track(em, thread), event_clock(em),
                ev->ts.ns, flow_id, direction, binding, args);
}

/* --- phases ------------------------------------------------------------------- */

static tm_slice_fields slice_fields(json_emitter *em, const json_event_buf *buf,
                                    tm_track_ref track) {
  const json_event *ev = &buf->ev;
  tm_slice_fields f = {
      TM_SLICE_FIELDS_INIT,
      .track = track,
      .clock = event_clock(em),
      .ts = ev->ts.ns,
      .name = intern_span(em, buf, ev->name),
      .category = intern_span(em, buf, ev->cat),
      .args = TM_NO_ARGS,
  };
  return f;
}

static void emit_thread_slice(json_emitter *em, const json_event_buf *buf,
                              thread_slot *thread) {
  const json_event *ev = &buf->ev;
  if (ev->phase == 'X' && ev->dur.state != JSON_FIELD_OK) {
    parser_failure(em, buf);
    return;
  }
  tm_track_ref track = thread_track(em, thread);
  tm_slice_fields f = slice_fields(em, buf, track);
  if (ev->tts.state == JSON_FIELD_OK)
    f.thread_ts = ev->tts.ns;
  f.args = emit_args(em, buf);
  switch (ev->phase) {
  case 'B':
    em->svc->slice_begin(em->host, &f);
    maybe_flow_v2(em, buf, track, f.ts);
    break;
  case 'E':
    em->svc->slice_end(em->host, &f);
    break;
  default: /* 'X' */
    if (ev->tdur.state == JSON_FIELD_OK)
      f.thread_dur = ev->tdur.ns;
    em->svc->slice_complete(em->host, &f, ev->dur.ns);
    maybe_flow_v2(em, buf, track, f.ts);
    break;
  }
}

static void emit_instant(json_emitter *em, const json_event_buf *buf,
                         thread_slot *thread, int64_t pid) {
  const json_event *ev = &buf->ev;
  tm_track_ref track;
  bool on_thread = false;
  if (ev->scope == 'g') {
    if (!em->global_instant_track) {
      tm_track_desc desc = {TM_TRACK_DESC_INIT,
                            .type = "legacy_chrome_global_instants"};
      em->global_instant_track = em->svc->track_intern(em->host, &desc);
    }
    track = em->global_instant_track;
  } else if (ev->scope == 'p') {
    if (!ev->has_pid) {
      parser_failure(em, buf);
      return;
    }
    process_slot *process = get_process(em, pid, 0);
    if (!process->instant_track) {
      tm_track_desc desc = {TM_TRACK_DESC_INIT,
                            .type = "chrome_process_instant",
                            .process = process->process};
      process->instant_track = em->svc->track_intern(em->host, &desc);
    }
    track = process->instant_track;
  } else {
    if (!ev->has_tid) {
      parser_failure(em, buf);
      return;
    }
    track = thread_track(em, thread);
    on_thread = true;
  }
  tm_slice_fields f = slice_fields(em, buf, track);
  if (on_thread && ev->tts.state == JSON_FIELD_OK)
    f.thread_ts = ev->tts.ns;
  f.args = emit_args(em, buf);
  em->svc->slice_complete(em->host, &f, 0);
}

static void emit_counter(json_emitter *em, const json_event_buf *buf,
                         int64_t pid) {
  const json_event *ev = &buf->ev;
  if (!ev->has_args) {
    parser_failure(em, buf);
    return;
  }
  process_slot *process = get_process(em, pid, 0);
  json_text *name = &em->scratch;
  name->len = 0;
  json_text_append(name, json_event_buf_text(buf, ev->name), ev->name.len);
  if (ev->id.kind == JSON_ID_STRING) {
    json_text_append_str(name, " id: ");
    json_text_append(name, json_event_buf_text(buf, ev->id.text),
                     ev->id.text.len);
  }
  json_text_append_char(name, ' ');
  size_t prefix_len = name->len;
  for (size_t i = 0; i < buf->args.len; i++) {
    const json_arg *arg = &buf->args.data[i];
    if (!arg->top_level)
      continue;
    double value;
    json_number number;
    if (arg->kind == JSON_ARG_KIND_INT) {
      value = (double)arg->u.int_value;
    } else if (arg->kind == JSON_ARG_KIND_REAL) {
      value = arg->u.real_value;
    } else if (arg->kind == JSON_ARG_KIND_STRING &&
               json_number_parse(json_event_buf_text(buf, arg->u.text),
                                 arg->u.text.len, &number)) {
      value = number.real_value;
    } else {
      parser_failure(em, buf);
      continue;
    }
    json_text_truncate(name, prefix_len);
    /* Skip "args." : the counter is named after the member itself. */
    json_text_append(name, json_event_buf_text(buf, arg->key) + 5,
                     arg->key.len - 5);
    tm_track_desc desc = {
        TM_TRACK_DESC_INIT,
        .type = "json_counter",
        .is_counter = 1,
        .name = em->svc->intern_string(em->host, name->data, name->len),
        .process = process->process,
    };
    tm_track_ref track = em->svc->track_intern(em->host, &desc);
    em->svc->counter(em->host, track, event_clock(em), ev->ts.ns, value,
                     TM_NO_ARGS);
  }
}

static void emit_async(json_emitter *em, const json_event_buf *buf,
                       int64_t pid) {
  const json_event *ev = &buf->ev;
  if (!ev->has_pid) {
    parser_failure(em, buf);
    return;
  }
  /* Cookie sources in upstream order: id, else id2.global, else
   * id2.local; only id2.local is process-scoped. */
  tm_slice_fields f = slice_fields(em, buf, 0);
  uint64_t cat = span_key(buf, ev->cat);
  uint64_t cookie;
  bool process_scoped = false;
  if (ev->id.kind == JSON_ID_NUMBER) {
    cookie = hash_combine(hash_combine(1, cat), ev->id.number);
  } else if (ev->id.kind == JSON_ID_STRING) {
    cookie = hash_bytes(hash_combine(2, cat),
                        json_event_buf_text(buf, ev->id.text), ev->id.text.len);
  } else if (ev->has_id2_global) {
    cookie = hash_bytes(hash_combine(3, cat),
                        json_event_buf_text(buf, ev->id2_global),
                        ev->id2_global.len);
  } else if (ev->has_id2_local) {
    cookie = hash_bytes(hash_combine(4, cat),
                        json_event_buf_text(buf, ev->id2_local),
                        ev->id2_local.len);
    process_scoped = true;
  } else {
    parser_failure(em, buf);
    return;
  }

  tm_process_ref process = 0;
  uint64_t map_key = cookie;
  if (process_scoped) {
    process = get_process(em, pid, 0)->process;
    map_key = hash_combine(cookie, process);
  }
  tm_track_ref track = json_cookie_map_get(&em->async_tracks, map_key);
  if (!track) {
    /* The cookie's slices go to the set of tracks named after the first
     * event seen with the cookie (per process for id2.local, across
     * processes otherwise), packed by the host as trace_processor packs
     * legacy async tracks; a host without track_async gets one track per
     * cookie. */
    tm_track_desc desc = {
        TM_TRACK_DESC_INIT,
        .type = process_scoped ? "legacy_async_process_slice"
                               : "legacy_async_global_slice",
        .name = f.name,
        .process = process,
        .key = cookie,
    };
    if (TM_HOST_HAS(em->svc, track_async) && em->svc->track_async)
      track = em->svc->track_async(em->host, &desc, cookie, 0);
    else
      track = em->svc->track_intern(em->host, &desc);
    json_cookie_map_put(&em->async_tracks, map_key, track);
  }
  f.track = track;
  f.args = emit_args(em, buf);
  if (ev->phase == 'b') {
    em->svc->slice_begin(em->host, &f);
    maybe_flow_v2(em, buf, track, f.ts);
  } else if (ev->phase == 'e') {
    em->svc->slice_end(em->host, &f);
  } else {
    em->svc->slice_complete(em->host, &f, 0);
    maybe_flow_v2(em, buf, track, f.ts);
  }
}

static bool span_equals(const json_event_buf *buf, json_span span,
                        const char *literal) {
  size_t len = strlen(literal);
  return span.len == len &&
         memcmp(json_event_buf_text(buf, span), literal, len) == 0;
}

static void emit_metadata_event(json_emitter *em, const json_event_buf *buf,
                                thread_slot *thread, int64_t pid) {
  const json_event *ev = &buf->ev;
  bool process_name = span_equals(buf, ev->name, "process_name");
  bool thread_name = !process_name && span_equals(buf, ev->name, "thread_name");
  bool process_sort = !process_name && !thread_name &&
                      span_equals(buf, ev->name, "process_sort_index");
  bool thread_sort = !process_name && !thread_name && !process_sort &&
                     span_equals(buf, ev->name, "thread_sort_index");
  if (!(process_name || thread_name || process_sort || thread_sort) ||
      !ev->has_args)
    return; /* other metadata events carry nothing we import */

  if (process_name || thread_name) {
    const json_arg *arg = find_top_arg(buf, "name", JSON_ARG_KIND_STRING);
    if (!arg || arg->u.text.len == 0) {
      parser_failure(em, buf);
      return;
    }
    tm_str_id name = em->svc->intern_string(
        em->host, json_event_buf_text(buf, arg->u.text), arg->u.text.len);
    if (process_name)
      em->svc->process_set_name(em->host, get_process(em, pid, 0)->process,
                                name);
    else
      em->svc->thread_set_name(em->host, thread->thread, name);
    return;
  }
  const json_arg *arg = find_top_arg(buf, "sort_index", JSON_ARG_KIND_INT);
  if (!arg) {
    parser_failure(em, buf);
    return;
  }
  tm_arg_value value = {.type = TM_ARG_INT, .u.int_value = arg->u.int_value};
  if (process_sort) {
    tm_str_id key =
        em->svc->intern_string(em->host, "process_sort_index_hint", 23);
    em->svc->process_add_arg(em->host, get_process(em, pid, 0)->process, key,
                             value);
  } else {
    tm_str_id key =
        em->svc->intern_string(em->host, "thread_sort_index_hint", 22);
    em->svc->thread_add_arg(em->host, thread->thread, key, value);
  }
}

/* The thread of a P event, made only when the event has a sample. */
typedef struct v8_thread_ctx {
  json_emitter *em;
  int64_t pid, tid;
  tm_str_id tid_name;
} v8_thread_ctx;

static tm_thread_ref v8_thread(void *ctx) {
  v8_thread_ctx *c = ctx;
  return get_thread(c->em, c->pid, c->tid, c->tid_name)->thread;
}

/* Legacy V8 CPU profiles (json_v8_profile.h): the state is made on the
 * first P event so that traces without them pay nothing. */
static void emit_v8_profile(json_emitter *em, const json_event_buf *buf,
                            int64_t pid, int64_t tid, tm_str_id tid_name) {
  if (!em->v8_profiles)
    em->v8_profiles = json_v8_profiles_new(em->svc, em->host);
  v8_thread_ctx ctx = {.em = em, .pid = pid, .tid = tid, .tid_name = tid_name};
  json_v8_thread thread = {.resolve = v8_thread, .ctx = &ctx};
  json_v8_profiles_event(em->v8_profiles, buf, pid, &thread, event_clock(em));
}

void json_emitter_emit(json_emitter *em, const json_event_buf *buf) {
  const json_event *ev = &buf->ev;
  if (ev->n_keys == 0)
    return; /* `{}` */
  if (!ev->phase || ev->id2_bad || ev->ts.state == JSON_FIELD_BAD ||
      ev->dur.state == JSON_FIELD_BAD || ev->tts.state == JSON_FIELD_BAD ||
      ev->tdur.state == JSON_FIELD_BAD ||
      (ev->ts.state != JSON_FIELD_OK && ev->phase != 'M')) {
    /* One test on the valid path; which field it was only on failure. */
    tokenizer_failure(em, buf,
                      !ev->phase                        ? "bad or missing ph"
                      : ev->id2_bad                     ? "id2 is not an object"
                      : ev->ts.state == JSON_FIELD_BAD  ? "bad ts"
                      : ev->dur.state == JSON_FIELD_BAD ? "bad dur"
                      : ev->tts.state == JSON_FIELD_BAD ? "bad tts"
                      : ev->tdur.state == JSON_FIELD_BAD ? "bad tdur"
                                                         : "missing ts");
    return;
  }
  int64_t pid = 0, tid = 0;
  tm_str_id pid_name = 0, tid_name = 0;
  if (ev->pid.kind == JSON_ID_NUMBER) {
    pid = (int64_t)ev->pid.number;
  } else if (ev->pid.kind == JSON_ID_STRING) {
    pid_name = intern_span(em, buf, ev->pid.text);
    pid = SYNTHETIC_ID_BASE + pid_name;
  }
  if (ev->tid.kind == JSON_ID_NUMBER) {
    tid = (int64_t)ev->tid.number;
  } else if (ev->tid.kind == JSON_ID_STRING) {
    tid_name = intern_span(em, buf, ev->tid.text);
    tid = SYNTHETIC_ID_BASE + tid_name;
  }
  if (tid == 0 && pid != 0 && ev->tid.kind != JSON_ID_STRING)
    tid = pid;

  /* P events never reach upstream's event parser: their samples resolve
   * the thread when they are added (json_v8_profile.h). */
  if (ev->phase == 'P') {
    emit_v8_profile(em, buf, pid, tid, tid_name);
    return;
  }

  /* Every other accepted event resolves its thread (creating the process
   * and thread rows), as upstream does before looking at the phase. */
  if (pid_name)
    get_process(em, pid, pid_name);
  thread_slot *thread = get_thread(em, pid, tid, tid_name);

  switch (ev->phase) {
  case 'B':
  case 'E':
  case 'X':
    emit_thread_slice(em, buf, thread);
    break;
  case 'i':
  case 'I':
  case 'R':
    emit_instant(em, buf, thread, pid);
    break;
  case 'C':
    emit_counter(em, buf, pid);
    break;
  case 'b':
  case 'e':
  case 'n':
    emit_async(em, buf, pid);
    break;
  case 's':
  case 't':
  case 'f':
    emit_flow_v1(em, buf, thread);
    break;
  case 'M':
    emit_metadata_event(em, buf, thread, pid);
    break;
  default:
    break; /* S T F p O N D c ( ) V v and unknown phases: ignored */
  }
}
