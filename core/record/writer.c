/*
 * The writer: one thread's trusted packet sequence, and the TrackEvent API
 * that writes to it.
 *
 * Every event is encoded by hand into the writer's scratch (packet, then
 * its new interned entries appended as InternedData) and copied, framed,
 * into the writer's private chunk; a full chunk is committed to the
 * instance's buffer. The common event (no extras, everything it names
 * already emitted in this generation, room in the chunk) skips all that:
 * fast_event() writes its bytes straight into the chunk, inlined into
 * each exported event function. Invariants:
 * - A sequence's first packet, and the first after any loss or reset,
 *   starts a new incremental-state generation: SEQ_INCREMENTAL_STATE_CLEARED,
 *   the TracePacketDefaults (clock, the thread's track), the thread and
 *   process descriptors and the custom clocks' snapshots. Every TrackEvent
 *   packet carries SEQ_NEEDS_INCREMENTAL_STATE.
 * - A packet on a sequence-scoped clock (a custom one, or the TSC clock
 *   127) comes after a snapshot of that clock in its generation: the
 *   custom clocks' snapshots close the generation's first packets, the
 *   TSC clock's comes before its first packet in the generation, and the
 *   packets the writer adds for an event (the generation's first ones,
 *   track descriptors) are stamped on BOOTTIME (service_stamp()).
 * - An interned entry, a track descriptor or a callstack is emitted at most
 *   once per generation, before (or in) the first packet that uses it;
 *   marks made for a packet that is not written are taken back.
 * - With a RING_BUFFER every committed chunk starts a new generation, so
 *   any chunk that survives the ring decodes on its own.
 * - Nothing here allocates once the writer's tables and scratch have grown
 *   to what the program uses.
 */
#include <inttypes.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "record/encoder.h"
#include "record/registry.h"
#include "record/session_internal.h"
#include "record/tsc_clock.h"

#define FRAME_ROOM 8u /* tag + 5-byte length in front of a packet */
#define INITIAL_SCRATCH 4096u
#define MAX_ANNOTATION_DEPTH 32
#define SEQ_INCREMENTAL_STATE_CLEARED 1u
#define SEQ_NEEDS_INCREMENTAL_STATE 2u
#define BUILTIN_BOOTTIME 6u /* perfetto's BuiltinClock */
#define EVENT_COUNTER 4

#if defined(__GNUC__)
#define TMR_ALWAYS_INLINE __attribute__((always_inline))
#else
#define TMR_ALWAYS_INLINE
#endif

typedef enum emit_result { EMIT_OK, EMIT_RESTART, EMIT_DROPPED } emit_result;

static inline int64_t boottime_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_BOOTTIME, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t tmr_boottime_ns(void) {
  return boottime_now();
}

/* --- emission marks ----------------------------------------------------------- */

static void undo_push(tmr_writer *w, tmr_gen_array *array, uint32_t index, uint32_t *entry_slot,
                      uint32_t old) {
  if (w->n_undo == w->undo_cap) {
    w->undo_cap = w->undo_cap ? w->undo_cap * 2 : 16;
    w->undo = g_renew(tmr_undo, w->undo, w->undo_cap);
  }
  w->undo[w->n_undo++] = (tmr_undo){array, index, entry_slot, old};
}

static void undo_all(tmr_writer *w) {
  while (w->n_undo) {
    tmr_undo *u = &w->undo[--w->n_undo];
    if (u->array)
      u->array->gen[u->index] = u->old;
    else
      *u->entry_slot = u->old;
  }
}

static void ensure_cap(tmr_gen_array *a, uint32_t index) {
  if (index < a->cap)
    return;
  uint32_t cap = a->cap ? a->cap : 64;
  while (cap <= index)
    cap *= 2;
  a->gen = g_renew(uint32_t, a->gen, cap);
  memset(a->gen + a->cap, 0, (cap - a->cap) * sizeof *a->gen);
  a->cap = cap;
}

/* True if `index` is not yet emitted in this generation; marks it. */
static inline bool mark_array(tmr_writer *w, tmr_gen_array *a, uint32_t index) {
  if (G_LIKELY(index < a->cap && a->gen[index] == w->generation))
    return false;
  ensure_cap(a, index);
  if (a->gen[index] == w->generation)
    return false;
  undo_push(w, a, index, NULL, a->gen[index]);
  a->gen[index] = w->generation;
  return true;
}

static inline bool mark_entry(tmr_writer *w, tmr_intern_entry *e) {
  if (e->emitted_generation == w->generation)
    return false;
  undo_push(w, NULL, 0, &e->emitted_generation, e->emitted_generation);
  e->emitted_generation = w->generation;
  return true;
}

/* --- chunks --------------------------------------------------------------------- */

/* Commits the chunk (what a flush has not taken already). False if the
 * buffer discarded it. */
static bool commit_chunk(tmr_writer *w) {
  tmr_trace_buffer *b = w->instance->buffer;
  bool ok = true;
  pthread_mutex_lock(&b->lock);
  if (w->used > w->scraped)
    ok = tmr_trace_buffer_commit_locked(b, w->sequence_id, w->chunk + w->scraped,
                                        w->used - w->scraped);
  w->used = 0;
  w->scraped = 0;
  atomic_store_explicit(&w->committed, 0, memory_order_release);
  pthread_mutex_unlock(&b->lock);
  w->chunk_epoch++;
  return ok;
}

static void note_loss(tmr_writer *w) {
  w->dropped = true;
  w->needs_clear = true;
}

/* Appends the packet at `packet` (FRAME_ROOM bytes free in front of it). */
static emit_result append_packet(tmr_writer *w, uint8_t *packet, size_t len) {
  size_t header = 1 + tmr_varint_size(len);
  size_t framed = header + len;
  uint8_t *frame = packet - header;
  frame[0] = 0x0a; /* Trace.packet, length-delimited */
  uint8_t *q = frame + 1;
  uint64_t v = len;
  while (v >= 0x80) {
    *q++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *q = (uint8_t)v;

  if (framed > w->chunk_cap) {
    /* Larger than a chunk: committed alone, after what came before. */
    bool ok = w->used > w->scraped ? commit_chunk(w) : true;
    if (ok)
      ok = tmr_trace_buffer_commit(w->instance->buffer, w->sequence_id, frame, framed);
    if (!ok) {
      note_loss(w);
      return EMIT_DROPPED;
    }
    if (w->instance->ring)
      w->needs_clear = true;
    return EMIT_OK;
  }
  if (w->used + framed > w->chunk_cap) {
    bool ok = commit_chunk(w);
    if (!ok)
      note_loss(w);
    if (!ok || w->instance->ring) {
      w->needs_clear = true;
      return EMIT_RESTART;
    }
  }
  memcpy(w->chunk + w->used, frame, framed);
  w->used += framed;
  atomic_store_explicit(&w->committed, w->used, memory_order_release);
  return EMIT_OK;
}

/* --- scratch ---------------------------------------------------------------------- */

static tmr_enc packet_enc(tmr_writer *w) {
  tmr_enc e = {w->scratch + FRAME_ROOM, w->scratch + w->scratch_cap, false};
  return e;
}

static tmr_enc interned_enc(tmr_writer *w) {
  tmr_enc e = {w->interned, w->interned + w->interned_cap, false};
  return e;
}

/* Doubles both scratch areas; false past TMR_MAX_PACKET. */
static bool grow_scratch(tmr_writer *w) {
  if (w->scratch_cap >= TMR_MAX_PACKET + FRAME_ROOM)
    return false;
  w->scratch_cap = MIN(w->scratch_cap * 2, (size_t)TMR_MAX_PACKET + FRAME_ROOM);
  w->scratch = g_realloc(w->scratch, w->scratch_cap);
  w->interned_cap = MIN(w->interned_cap * 2, (size_t)TMR_MAX_PACKET);
  w->interned = g_realloc(w->interned, w->interned_cap);
  return true;
}

static void put_header(tmr_enc *e, tmr_writer *w, int64_t ts, uint32_t clock, bool explicit_clock,
                       uint32_t flags) {
  tmr_enc_uint(e, 8, (uint64_t)ts);
  if (explicit_clock)
    tmr_enc_uint(e, 58, clock);
  tmr_enc_uint(e, 10, w->sequence_id);
  if (flags)
    tmr_enc_uint(e, 13, flags);
}

/* Encodes one packet with `build` until it fits the scratch, then appends it. */
typedef void (*packet_builder)(tmr_writer *w, tmr_enc *e, const void *ctx);

static emit_result emit_built(tmr_writer *w, packet_builder build, const void *ctx) {
  for (;;) {
    tmr_enc e = packet_enc(w);
    build(w, &e, ctx);
    if (!e.overflow)
      return append_packet(w, w->scratch + FRAME_ROOM, (size_t)(e.p - (w->scratch + FRAME_ROOM)));
    if (!grow_scratch(w)) {
      tmr_trace_buffer_count_packet_loss(w->instance->buffer);
      note_loss(w);
      return EMIT_DROPPED;
    }
  }
}

/* --- generations --------------------------------------------------------------------- */

typedef struct stamp {
  int64_t ts;
  uint32_t clock;
} stamp;

static const tmr_blob *track_descriptor(uint32_t index, uint32_t *version) {
  const tmr_track_entry *entry = tmr_reg_track(index);
  if (!entry)
    return NULL;
  *version = atomic_load_explicit(&entry->version, memory_order_acquire);
  return atomic_load_explicit(&entry->descriptor, memory_order_acquire);
}

static void build_generation_start(tmr_writer *w, tmr_enc *e, const void *ctx) {
  const stamp *s = ctx;
  /* The packet sets the defaults: its own clock is always named unless
   * everything is BOOTTIME, whichever way a reader applies them. */
  put_header(e, w, s->ts, s->clock,
             s->clock != BUILTIN_BOOTTIME || w->default_clock != BUILTIN_BOOTTIME,
             SEQ_INCREMENTAL_STATE_CLEARED);
  if (w->first_packet)
    tmr_enc_uint(e, 87, 1);
  if (w->dropped)
    tmr_enc_uint(e, 42, 1);
  uint8_t *defaults = tmr_enc_nest_begin(e, 59);
  tmr_enc_uint(e, 58, w->default_clock);
  uint8_t *te = tmr_enc_nest_begin(e, 11);
  tmr_enc_uint(e, 11, w->thread_uuid);
  tmr_enc_nest_end(e, te);
  tmr_enc_nest_end(e, defaults);
  uint32_t version = 0;
  const tmr_blob *d = track_descriptor(w->thread_track, &version);
  if (d)
    tmr_enc_bytes(e, 60, d->data, d->len);
}

static void build_descriptor(tmr_writer *w, tmr_enc *e, const void *ctx) {
  const void *const *args = ctx;
  const stamp *s = args[0];
  const tmr_blob *d = args[1];
  put_header(e, w, s->ts, s->clock, s->clock != w->default_clock, 0);
  tmr_enc_bytes(e, 60, d->data, d->len);
}

static void build_clock_snapshot(tmr_writer *w, tmr_enc *e, const void *ctx) {
  const tmr_custom_clock *c = ctx;
  put_header(e, w, c->boottime_ns, BUILTIN_BOOTTIME, true, 0);
  uint8_t *snap = tmr_enc_nest_begin(e, 6);
  uint8_t *boot = tmr_enc_nest_begin(e, 1);
  tmr_enc_uint(e, 1, BUILTIN_BOOTTIME);
  tmr_enc_uint(e, 2, (uint64_t)c->boottime_ns);
  tmr_enc_nest_end(e, boot);
  uint8_t *custom = tmr_enc_nest_begin(e, 1);
  tmr_enc_uint(e, 1, c->id);
  tmr_enc_uint(e, 2, (uint64_t)c->value);
  if (c->unit_ns != 1)
    tmr_enc_uint(e, 4, c->unit_ns);
  tmr_enc_nest_end(e, custom);
  tmr_enc_nest_end(e, snap);
}

/* The stamp of the packets an event brings along (a generation's start,
 * track descriptors): the event's own, but on BOOTTIME when the event is
 * on a sequence-scoped clock. They may come before that clock's snapshot
 * in the generation (a generation's first packets always do), and a
 * reader converts a timestamp with the snapshots it has read so far on
 * the sequence (trace_processor may drop a packet it cannot place). A
 * TSC-clock event's are at the writer's last anchor (no later than the
 * event); a custom clock's at the event's own time, converted through the
 * clock's snapshot pair as a reader converts it (wrapping, like the
 * reader's arithmetic). */
static inline stamp service_stamp(const tmr_writer *w, const stamp *s) {
  if (s->clock == TMR_TSC_CLOCK_ID)
    return (stamp){w->anchor.boottime_ns, BUILTIN_BOOTTIME};
  if (s->clock != BUILTIN_BOOTTIME) {
    for (uint32_t i = 0; i < w->n_clocks; i++) {
      const tmr_custom_clock *c = &w->clocks[i];
      if (c->id == s->clock) {
        uint64_t since = ((uint64_t)s->ts - (uint64_t)c->value) * c->unit_ns;
        return (stamp){(int64_t)((uint64_t)c->boottime_ns + since), BUILTIN_BOOTTIME};
      }
    }
  }
  return *s;
}

/* Starts a new generation if one is due: the clear packet (with the
 * defaults and the thread's descriptor), the process descriptor, the
 * custom clocks' snapshots. `event` is the stamp of the event that starts
 * it; the first two are on BOOTTIME at its service_stamp(), since they
 * come before the snapshots. */
static emit_result start_generation(tmr_writer *w, const stamp *event) {
  if (!w->needs_clear)
    return EMIT_OK;
  w->generation = w->generation + 1 ? w->generation + 1 : 1;
  w->needs_clear = false;
  w->default_clock = w->explicit_clock != BUILTIN_BOOTTIME ? w->explicit_clock : event->clock;
  stamp service = service_stamp(w, event);
  const stamp *s = &service;
  emit_result r = emit_built(w, build_generation_start, s);
  if (r != EMIT_OK)
    return r;
  w->first_packet = false;
  w->dropped = false;
  uint32_t version = 0;
  track_descriptor(w->thread_track, &version);
  ensure_cap(&w->tracks, w->thread_track);
  ensure_cap(&w->track_versions, w->thread_track);
  w->tracks.gen[w->thread_track] = w->generation;
  w->track_versions.gen[w->thread_track] = version;
  w->thread_track_version = version;

  uint32_t process = tmr_reg_process_track();
  const tmr_blob *d = track_descriptor(process, &version);
  if (d) {
    const void *args[2] = {s, d};
    r = emit_built(w, build_descriptor, args);
    if (r != EMIT_OK)
      return r;
    ensure_cap(&w->tracks, process);
    ensure_cap(&w->track_versions, process);
    w->tracks.gen[process] = w->generation;
    w->track_versions.gen[process] = version;
  }
  for (uint32_t i = 0; i < w->n_clocks; i++) {
    r = emit_built(w, build_clock_snapshot, &w->clocks[i]);
    if (r != EMIT_OK)
      return r;
  }
  return EMIT_OK;
}

/* Emits the TSC clock's snapshot (the current anchor's pair) unless this
 * generation has it: before the first packet timestamped on that clock
 * in the generation, so every chunk that holds such a packet, or the
 * generation before it, relates the clock to BOOTTIME. */
static emit_result ensure_tsc_snapshot(tmr_writer *w) {
  if (w->tsc_snapshot_generation == w->generation)
    return EMIT_OK;
  tmr_custom_clock c = {TMR_TSC_CLOCK_ID, 1, w->anchor.boottime_ns, w->anchor.value};
  emit_result r = emit_built(w, build_clock_snapshot, &c);
  if (r == EMIT_OK)
    w->tsc_snapshot_generation = w->generation;
  return r;
}

/* What an event needs written before it: a new generation if one is due,
 * the TSC clock's snapshot if the event is on that clock. */
static emit_result prepare_sequence(tmr_writer *w, const stamp *s) {
  emit_result r = G_UNLIKELY(w->needs_clear) ? start_generation(w, s) : EMIT_OK;
  if (r == EMIT_OK && s->clock == TMR_TSC_CLOCK_ID)
    r = ensure_tsc_snapshot(w);
  return r;
}

/* Emits the descriptor of track `index` (and its parents) unless done in
 * this generation. */
static emit_result ensure_track(tmr_writer *w, uint32_t index, const stamp *s, int depth) {
  if (!index)
    return EMIT_OK;
  uint32_t version = 0;
  const tmr_blob *d = track_descriptor(index, &version);
  if (!d)
    return EMIT_OK;
  ensure_cap(&w->tracks, index);
  ensure_cap(&w->track_versions, index);
  if (w->tracks.gen[index] == w->generation && w->track_versions.gen[index] == version)
    return EMIT_OK;
  const tmr_track_entry *entry = tmr_reg_track(index);
  if (entry->parent && depth < 64) {
    emit_result r = ensure_track(w, entry->parent, s, depth + 1);
    if (r != EMIT_OK)
      return r;
  }
  const void *args[2] = {s, d};
  emit_result r = emit_built(w, build_descriptor, args);
  if (r == EMIT_OK) {
    w->tracks.gen[index] = w->generation;
    w->track_versions.gen[index] = version;
  }
  return r;
}

/* --- events ---------------------------------------------------------------------------- */

typedef struct event_args {
  int type; /* tmr_event_type, or EVENT_COUNTER */
  tmr_track track;
  tmr_category *category;
  const char *name;
  const tmr_event_extras *extras;
  bool counter_is_double;
  int64_t counter_int;
  double counter_double;
} event_args;

static inline void put_interned_string(tmr_writer *w, tmr_enc *in, uint32_t field,
                                       tmr_intern_entry *e) {
  if (!mark_entry(w, e))
    return;
  uint8_t *body = tmr_enc_nest_begin(in, field);
  tmr_enc_uint(in, 1, e->iid);
  tmr_enc_bytes(in, 2, e->str, e->len);
  tmr_enc_nest_end(in, body);
}

/* A string's entry. Most call sites pass the same literal every time, so
 * a small cache keyed by address comes first; it is checked against the
 * entry's text (strncmp stops at the NUL of `s`, so a shorter or reused
 * buffer never matches wrongly), which costs less than hashing. */
static inline tmr_intern_entry *intern_cstr(tmr_writer *w, tmr_intern_kind kind, const char *s) {
  tmr_name_cache *c = &w->name_cache[(((uintptr_t)s >> 3) ^ kind) % TMR_NAME_CACHE];
  if (c->text == s && c->entry->kind == kind && strncmp(c->entry->str, s, c->entry->len) == 0 &&
      s[c->entry->len] == '\0')
    return c->entry;
  tmr_intern_entry *e = tmr_intern(&w->strings, kind, s, strlen(s));
  if (e) {
    c->text = s;
    c->entry = e;
  }
  return e;
}

static void put_annotation(tmr_writer *w, tmr_enc *e, tmr_enc *in, uint32_t field,
                           const tmr_arg *a, bool named, int depth) {
  uint8_t *body = tmr_enc_nest_begin(e, field);
  if (named) {
    const char *name = a->name ? a->name : "";
    tmr_intern_entry *entry = intern_cstr(w, TMR_INTERN_DEBUG_NAME, name);
    if (entry) {
      put_interned_string(w, in, 3, entry);
      tmr_enc_uint(e, 1, entry->iid);
    } else {
      tmr_enc_string(e, 10, name);
    }
  }
  switch (a->type) {
  case TMR_ARG_BOOL:
    tmr_enc_uint(e, 2, a->value.b ? 1 : 0);
    break;
  case TMR_ARG_UINT:
    tmr_enc_uint(e, 3, a->value.u);
    break;
  case TMR_ARG_INT:
    tmr_enc_int(e, 4, a->value.i);
    break;
  case TMR_ARG_DOUBLE:
    tmr_enc_double(e, 5, a->value.d);
    break;
  case TMR_ARG_POINTER:
    tmr_enc_uint(e, 7, (uint64_t)(uintptr_t)a->value.pointer);
    break;
  case TMR_ARG_STRING:
    tmr_enc_string(e, 6, a->value.string ? a->value.string : "");
    break;
  case TMR_ARG_JSON:
    tmr_enc_string(e, 9, a->value.string ? a->value.string : "null");
    break;
  case TMR_ARG_DICT:
  case TMR_ARG_ARRAY:
    if (depth < MAX_ANNOTATION_DEPTH && a->value.nested.items)
      for (size_t i = 0; i < a->value.nested.count; i++)
        put_annotation(w, e, in, a->type == TMR_ARG_DICT ? 11 : 12, &a->value.nested.items[i],
                       a->type == TMR_ARG_DICT, depth + 1);
    break;
  }
  tmr_enc_nest_end(e, body);
}

static void put_mapping(tmr_writer *w, tmr_enc *in, uint32_t mapping) {
  const tmr_mapping_entry *m = tmr_reg_mapping(mapping);
  if (!m || !mark_array(w, &w->mappings, mapping))
    return;
  tmr_intern_entry *build_id = m->build_id ? intern_cstr(w, TMR_INTERN_BUILD_ID, m->build_id) : NULL;
  tmr_intern_entry *path = m->path ? intern_cstr(w, TMR_INTERN_MAPPING_PATH, m->path) : NULL;
  if (build_id)
    put_interned_string(w, in, 16, build_id);
  if (path)
    put_interned_string(w, in, 17, path);
  uint8_t *body = tmr_enc_nest_begin(in, 19);
  tmr_enc_uint(in, 1, mapping);
  if (build_id)
    tmr_enc_uint(in, 2, build_id->iid);
  tmr_enc_uint(in, 4, m->start);
  tmr_enc_uint(in, 5, m->end);
  if (m->load_bias)
    tmr_enc_uint(in, 6, m->load_bias);
  if (path)
    tmr_enc_uint(in, 7, path->iid);
  if (m->exact_offset)
    tmr_enc_uint(in, 8, m->exact_offset);
  tmr_enc_nest_end(in, body);
}

static void put_callstack(tmr_writer *w, tmr_enc *in, uint32_t callstack) {
  const tmr_callstack_entry *c = tmr_reg_callstack(callstack);
  if (!c || !mark_array(w, &w->callstacks, callstack))
    return;
  for (uint32_t i = 0; i < c->n_frames; i++) {
    uint32_t id = c->frames[i];
    const tmr_frame_entry *f = tmr_reg_frame(id);
    if (!f || !mark_array(w, &w->frames, id))
      continue;
    tmr_intern_entry *fn = intern_cstr(w, TMR_INTERN_FUNCTION_NAME, f->function_name);
    if (fn)
      put_interned_string(w, in, 5, fn);
    if (f->mapping)
      put_mapping(w, in, f->mapping);
    uint8_t *body = tmr_enc_nest_begin(in, 6);
    tmr_enc_uint(in, 1, id);
    if (fn)
      tmr_enc_uint(in, 2, fn->iid);
    if (f->mapping)
      tmr_enc_uint(in, 3, f->mapping);
    tmr_enc_uint(in, 4, f->rel_pc);
    tmr_enc_nest_end(in, body);
  }
  uint8_t *body = tmr_enc_nest_begin(in, 7);
  tmr_enc_uint(in, 1, callstack);
  for (uint32_t i = 0; i < c->n_frames; i++)
    tmr_enc_uint(in, 2, c->frames[i]);
  tmr_enc_nest_end(in, body);
}

static void put_extras(tmr_writer *w, tmr_enc *e, tmr_enc *in, const tmr_event_extras *x) {
  for (size_t i = 0; i < x->n_args && x->args; i++)
    put_annotation(w, e, in, 4, &x->args[i], true, 0);
  for (size_t i = 0; i < x->n_flow_ids && x->flow_ids; i++)
    tmr_enc_fixed64(e, 47, x->flow_ids[i]);
  for (size_t i = 0; i < x->n_terminating_flow_ids && x->terminating_flow_ids; i++)
    tmr_enc_fixed64(e, 48, x->terminating_flow_ids[i]);
  if (x->correlation_id) {
    tmr_enc_uint(e, 52, x->correlation_id);
  } else if (x->correlation_id_str) {
    tmr_intern_entry *c = intern_cstr(w, TMR_INTERN_CORRELATION, x->correlation_id_str);
    if (c) {
      put_interned_string(w, in, 43, c);
      tmr_enc_uint(e, 54, c->iid);
    } else {
      tmr_enc_string(e, 53, x->correlation_id_str);
    }
  }
  if (x->extra_counters) {
    for (int pass = 0; pass < 2; pass++) {
      bool doubles = pass == 1;
      for (size_t i = 0; i < x->n_extra_counters; i++)
        if (x->extra_counters[i].is_double == doubles && x->extra_counters[i].track.uuid)
          tmr_enc_uint(e, doubles ? 45 : 31, x->extra_counters[i].track.uuid);
      for (size_t i = 0; i < x->n_extra_counters; i++) {
        const tmr_counter_value *v = &x->extra_counters[i];
        if (v->is_double != doubles || !v->track.uuid)
          continue;
        if (doubles)
          tmr_enc_double(e, 46, v->double_value);
        else
          tmr_enc_int(e, 12, v->int_value);
      }
    }
  }
  if (x->inline_frames && x->n_inline_frames) {
    uint8_t *stack = tmr_enc_nest_begin(e, 55);
    for (size_t i = 0; i < x->n_inline_frames; i++) {
      const tmr_frame *f = &x->inline_frames[i];
      uint8_t *frame = tmr_enc_nest_begin(e, 1);
      if (f->function_name)
        tmr_enc_string(e, 1, f->function_name);
      if (f->source_file)
        tmr_enc_string(e, 2, f->source_file);
      if (f->line)
        tmr_enc_uint(e, 3, f->line);
      tmr_enc_nest_end(e, frame);
    }
    tmr_enc_nest_end(e, stack);
  } else if (x->callstack && tmr_reg_callstack(x->callstack)) {
    put_callstack(w, in, x->callstack);
    tmr_enc_uint(e, 56, x->callstack);
  }
  if (x->source_location) {
    uint32_t id = tmr_reg_srcloc_index(x->source_location);
    const tmr_srcloc_entry *loc = tmr_reg_srcloc(id);
    if (loc) {
      if (mark_array(w, &w->srclocs, id)) {
        uint8_t *body = tmr_enc_nest_begin(in, 4);
        tmr_enc_uint(in, 1, id);
        if (loc->file_name)
          tmr_enc_string(in, 2, loc->file_name);
        if (loc->function_name)
          tmr_enc_string(in, 3, loc->function_name);
        tmr_enc_uint(in, 4, loc->line_number);
        tmr_enc_nest_end(in, body);
      }
      tmr_enc_uint(e, 34, id);
    }
  }
}

/* The whole event packet: header, TrackEvent, new interned entries. */
static void encode_event(tmr_writer *w, tmr_enc *e, tmr_enc *in, const event_args *a,
                         const stamp *s) {
  put_header(e, w, s->ts, s->clock, s->clock != w->default_clock, SEQ_NEEDS_INCREMENTAL_STATE);
  uint8_t *te = tmr_enc_nest_begin(e, 11);
  tmr_enc_uint(e, 9, (uint64_t)a->type);
  if (a->track.uuid && a->track.index_ != w->thread_track)
    tmr_enc_uint(e, 11, a->track.uuid);
  if (a->category && a->category->index_) {
    uint32_t index = a->category->index_;
    if (mark_array(w, &w->categories, index)) {
      uint8_t *body = tmr_enc_nest_begin(in, 1);
      tmr_enc_uint(in, 1, index);
      tmr_enc_string(in, 2, a->category->name ? a->category->name : "");
      tmr_enc_nest_end(in, body);
    }
    tmr_enc_uint(e, 3, index);
  }
  if (a->name) {
    tmr_intern_entry *n = intern_cstr(w, TMR_INTERN_EVENT_NAME, a->name);
    if (n) {
      put_interned_string(w, in, 2, n);
      tmr_enc_uint(e, 10, n->iid);
    } else {
      tmr_enc_string(e, 23, a->name);
    }
  }
  if (a->type == EVENT_COUNTER) {
    if (a->counter_is_double)
      tmr_enc_double(e, 44, a->counter_double);
    else
      tmr_enc_int(e, 30, a->counter_int);
  }
  if (a->extras)
    put_extras(w, e, in, a->extras);
  tmr_enc_nest_end(e, te);
  if (in->p != w->interned && !in->overflow)
    tmr_enc_bytes(e, 12, w->interned, (size_t)(in->p - w->interned));
}

static emit_result emit_event(tmr_writer *w, const event_args *a, const stamp *s) {
  /* Fast path: encode straight into the chunk after a two-byte frame
   * header (0x0a and a one-byte length, moved up if the packet is 128
   * bytes or more). Anything that does not fit goes the scratch way. */
  if (w->chunk_cap - w->used >= 64) {
    uint8_t *frame = w->chunk + w->used;
    tmr_enc e = {frame + 2, w->chunk + w->chunk_cap, false};
    tmr_enc in = interned_enc(w);
    encode_event(w, &e, &in, a, s);
    if (!e.overflow && !in.overflow) {
      size_t len = (size_t)(e.p - (frame + 2));
      size_t extra = tmr_varint_size(len) - 1;
      if (extra == 0 || (size_t)(w->chunk + w->chunk_cap - e.p) >= extra) {
        if (extra)
          memmove(frame + 2 + extra, frame + 2, len);
        frame[0] = 0x0a;
        uint8_t *q = frame + 1;
        uint64_t v = len;
        while (v >= 0x80) {
          *q++ = (uint8_t)(v | 0x80);
          v >>= 7;
        }
        *q = (uint8_t)v;
        w->used += 2 + extra + len;
        atomic_store_explicit(&w->committed, w->used, memory_order_release);
        w->n_undo = 0;
        return EMIT_OK;
      }
    }
    undo_all(w);
  }
  for (;;) {
    tmr_enc e = packet_enc(w);
    tmr_enc in = interned_enc(w);
    uint8_t *packet = e.p;
    encode_event(w, &e, &in, a, s);
    if (e.overflow || in.overflow) {
      undo_all(w);
      if (!grow_scratch(w)) {
        tmr_trace_buffer_count_packet_loss(w->instance->buffer);
        note_loss(w);
        return EMIT_DROPPED;
      }
      continue;
    }
    emit_result r = append_packet(w, packet, (size_t)(e.p - packet));
    if (r == EMIT_OK)
      w->n_undo = 0;
    else
      undo_all(w);
    return r;
  }
}

/* --- strict nesting (debug builds) ---------------------------------------------------- */

#ifndef NDEBUG
typedef struct slice_stack {
  GArray *ts; /* stamp of each open slice, innermost last */
  bool ever_begun;
} slice_stack;

static void slice_stack_free(gpointer data) {
  slice_stack *st = data;
  g_array_unref(st->ts);
  g_free(st);
}

static slice_stack *stack_of(tmr_writer *w, uint64_t uuid) {
  if (!w->open_slices)
    w->open_slices = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, slice_stack_free);
  slice_stack *st = g_hash_table_lookup(w->open_slices, &uuid);
  if (!st) {
    st = g_new0(slice_stack, 1);
    st->ts = g_array_new(FALSE, FALSE, sizeof(stamp));
    g_hash_table_insert(w->open_slices, g_memdup2(&uuid, sizeof uuid), st);
  }
  return st;
}

static void check_nesting(tmr_writer *w, int type, uint64_t uuid, const stamp *s,
                          const char *name) {
  if (type != TMR_SLICE_BEGIN && type != TMR_SLICE_END)
    return;
  slice_stack *st = stack_of(w, uuid);
  if (type == TMR_SLICE_BEGIN) {
    g_array_append_val(st->ts, *s);
    st->ever_begun = true;
    return;
  }
  if (st->ts->len == 0) {
    /* The end of a slice begun before recording started is fine; one more
     * end than this writer's begins is a nesting bug. */
    if (st->ever_begun)
      g_error("tracemerge record: slice end at %" PRId64 " on track %" PRIu64
              " (sequence %u) has no open slice: ends outnumber begins on this track",
              s->ts, uuid, w->sequence_id);
    return;
  }
  stamp open = g_array_index(st->ts, stamp, st->ts->len - 1);
  if (open.clock == s->clock && s->ts < open.ts)
    g_error("tracemerge record: slice end at %" PRId64 " on track %" PRIu64
            " (sequence %u) is before its begin at %" PRId64,
            s->ts, uuid, w->sequence_id, open.ts);
  g_array_set_size(st->ts, st->ts->len - 1);
  (void)name;
}
#endif

/* --- the calls ----------------------------------------------------------------------------- */

/* Due at every event: is the instance running, did a flush or a loss ask
 * for a new generation. */
static inline bool writer_ready(tmr_writer *w) {
  if (!atomic_load_explicit(&w->instance->running, memory_order_relaxed))
    return false;
  if (atomic_load_explicit(&w->pending, memory_order_relaxed)) {
    uint32_t p = atomic_exchange_explicit(&w->pending, 0, memory_order_acquire);
    if (p & TMR_PENDING_LOST)
      w->dropped = true;
    if (p & (TMR_PENDING_LOST | TMR_PENDING_RESET))
      w->needs_clear = true;
    if (p & TMR_PENDING_ANCHOR)
      w->anchor.limit = 0;
  }
  return true;
}

/* A new anchor for the writer's TSC clock, and the clock's reading now.
 * The clock continues from where the last segment got to (so it is
 * continuous and monotonic on the writer), at a multiplier re-measured
 * over the last period when that was long enough and plausible. If the
 * TSC went backwards (reset by a suspend), the clock advances by what
 * BOOTTIME did instead. The new pair is written as a snapshot before the
 * next packet on the clock. */
static G_GNUC_NO_INLINE stamp tsc_reanchor(tmr_writer *w) {
  tmr_tsc_anchor *a = &w->anchor;
  tmr_tsc_pair now = tmr_tsc_read_pair();
  int64_t value;
  uint64_t mult = a->mult;
  if (!a->mult) {
    value = now.boottime_ns;
    mult = tmr_tsc_mult();
  } else if (now.tsc >= a->tsc_at) {
    uint64_t ticks = now.tsc - a->tsc_at;
    value = a->value + tmr_tsc_ticks_to_ns(ticks, a->mult);
    int64_t boot_ns = now.boottime_ns - a->boottime_ns;
    if (ticks >= tmr_tsc_recalibrate_ticks() && boot_ns > 0) {
      double measured = (double)boot_ns * 4294967296.0 / (double)ticks;
      double base = (double)tmr_tsc_mult();
      if (measured > base * (1.0 - TMR_TSC_MAX_RATE_CHANGE_PPM * 1e-6) &&
          measured < base * (1.0 + TMR_TSC_MAX_RATE_CHANGE_PPM * 1e-6))
        mult = (uint64_t)(measured + 0.5);
    }
  } else {
    value = a->value + MAX(now.boottime_ns - a->boottime_ns, (int64_t)0);
  }
  *a = (tmr_tsc_anchor){.tsc_at = now.tsc, .limit = tmr_tsc_period_ticks(), .mult = mult,
                        .value = value, .boottime_ns = now.boottime_ns};
  w->tsc_snapshot_generation = 0;
  return (stamp){value, TMR_TSC_CLOCK_ID};
}

static inline stamp resolve_time(tmr_writer *w, int64_t ts) {
  stamp s;
  if (ts != TMR_NOW) {
    s.ts = ts;
    s.clock = w->explicit_clock;
  } else if (w->use_tsc) {
    uint64_t ticks = tmr_tsc_read() - w->anchor.tsc_at;
    if (G_UNLIKELY(ticks >= w->anchor.limit))
      return tsc_reanchor(w);
    s.ts = w->anchor.value + tmr_tsc_ticks_to_ns(ticks, w->anchor.mult);
    s.clock = TMR_TSC_CLOCK_ID;
  } else {
    s.ts = boottime_now();
    s.clock = BUILTIN_BOOTTIME;
  }
  return s;
}

static inline void put_varint_raw(uint8_t **q, uint64_t v) {
  uint8_t *p = *q;
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  *q = p;
}

/* The common case, written without the general machinery: no extras,
 * not a counter, the category, name and track already emitted in this
 * generation, room in the chunk. Produces exactly the bytes
 * encode_event() would. Takes its arguments one by one, not as an
 * event_args, so that nothing is built in memory on this path. */
static inline TMR_ALWAYS_INLINE bool fast_event(tmr_writer *w, int type, tmr_track track,
                                                tmr_category *cat, const char *name,
                                                const stamp *s) {
  if (w->needs_clear || w->chunk_cap - w->used < 64)
    return false;
  if (s->clock == TMR_TSC_CLOCK_ID && w->tsc_snapshot_generation != w->generation)
    return false; /* the TSC clock's snapshot comes first */
  uint32_t category = 0;
  if (cat) {
    category = cat->index_;
    if (!category || category >= w->categories.cap ||
        w->categories.gen[category] != w->generation)
      return false;
  }
  uint32_t name_iid = 0;
  if (name) {
    tmr_name_cache *c =
        &w->name_cache[(((uintptr_t)name >> 3) ^ TMR_INTERN_EVENT_NAME) % TMR_NAME_CACHE];
    const tmr_intern_entry *e = c->entry;
    if (c->text != name || e->kind != TMR_INTERN_EVENT_NAME ||
        e->emitted_generation != w->generation || strncmp(e->str, name, e->len) != 0 ||
        name[e->len] != '\0')
      return false;
    name_iid = e->iid;
  }
  bool own_track = !track.uuid || track.index_ == w->thread_track;
  if (!own_track) {
    uint32_t index = track.index_;
    const tmr_track_entry *entry = tmr_reg_track(index);
    if (!entry || index >= w->tracks.cap || w->tracks.gen[index] != w->generation ||
        w->track_versions.gen[index] != atomic_load_explicit(&entry->version, memory_order_relaxed))
      return false;
  }
  /* At most 2 + 11 + 3 + 6 + 2 + 2 + 2 + 11 + 6 + 6 = 51 bytes < 64, and
   * the sequence header's 8-byte store ends before byte 64 too. */
  uint8_t *frame = w->chunk + w->used;
  uint8_t *q = frame + 2;
  *q++ = 0x40; /* 8: timestamp */
  put_varint_raw(&q, (uint64_t)s->ts);
  if (s->clock != w->default_clock) {
    *q++ = 0xd0; /* 58: timestamp_clock_id */
    *q++ = 0x03;
    put_varint_raw(&q, s->clock);
  }
  /* 10: trusted_packet_sequence_id, 13: sequence_flags, 11: track_event
   * and its length's byte, encoded once per writer. */
  memcpy(q, w->event_header, sizeof w->event_header);
  q += w->event_header_len;
  uint8_t *te = q;
  *q++ = 0x48; /* 9: type */
  *q++ = (uint8_t)type;
  if (!own_track) {
    *q++ = 0x58; /* 11: track_uuid */
    put_varint_raw(&q, track.uuid);
  }
  if (category) {
    *q++ = 0x18; /* 3: category_iids */
    put_varint_raw(&q, category);
  }
  if (name_iid) {
    *q++ = 0x50; /* 10: name_iid */
    put_varint_raw(&q, name_iid);
  }
  te[-1] = (uint8_t)(q - te);
  size_t len = (size_t)(q - (frame + 2));
  frame[0] = 0x0a;
  frame[1] = (uint8_t)len;
  w->used += 2 + len;
  atomic_store_explicit(&w->committed, w->used, memory_order_release);
  return true;
}

/* Everything fast_event() does not take: a new generation, track
 * descriptors, extras, a full chunk. Out of line, so the fast path that
 * inlines its callers stays small (no spills, no large frame). */
static G_GNUC_NO_INLINE void write_event_slow(tmr_writer *w, const event_args *a, const stamp *s) {
  for (int attempt = 0; attempt < 4; attempt++) {
    emit_result r = prepare_sequence(w, s);
    stamp service = service_stamp(w, s);
    if (r == EMIT_OK && a->track.uuid && a->track.index_ != w->thread_track)
      r = ensure_track(w, a->track.index_, &service, 0);
    if (r == EMIT_OK && a->extras && a->extras->extra_counters)
      for (size_t i = 0; r == EMIT_OK && i < a->extras->n_extra_counters; i++)
        r = ensure_track(w, a->extras->extra_counters[i].track.index_, &service, 0);
    if (r == EMIT_OK)
      r = emit_event(w, a, s);
    if (r != EMIT_RESTART)
      return;
  }
}

/* A slice, instant or event with extras whose arguments the slow path
 * takes one by one (so the caller builds nothing in memory for it). */
static G_GNUC_NO_INLINE void event_slow(tmr_writer *w, int type, tmr_track track,
                                        tmr_category *category, const char *name,
                                        const tmr_event_extras *extras, stamp s) {
  event_args a = {.type = type, .track = track, .category = category, .name = name,
                  .extras = extras};
  write_event_slow(w, &a, &s);
}

/* Complete slices and counters. */
static void write_event(tmr_writer *w, const event_args *a, const stamp *s) {
#ifndef NDEBUG
  check_nesting(w, a->type, a->track.uuid ? a->track.uuid : w->thread_uuid, s, a->name);
#endif
  if (!a->extras && a->type != EVENT_COUNTER &&
      fast_event(w, a->type, a->track, a->category, a->name, s))
    return;
  write_event_slow(w, a, s);
}

static inline bool category_on(tmr_category *category) {
  return !category || tmr_category_enabled(category);
}

/* Every event function's body, inlined into each so that an event is one
 * call from the program: the exported functions are interposable, so one
 * calling another would go through the PLT and could not be inlined. */
static inline TMR_ALWAYS_INLINE void event_inline(tmr_writer *w, int type, tmr_track track,
                                                   tmr_category *category, const char *name,
                                                   int64_t ts, const tmr_event_extras *extras) {
  if (!w || !category_on(category) || !writer_ready(w))
    return;
  stamp s = resolve_time(w, ts);
  if (type == TMR_SLICE_END)
    name = NULL;
#ifndef NDEBUG
  check_nesting(w, type, track.uuid ? track.uuid : w->thread_uuid, &s, name);
#endif
  if (!extras && G_LIKELY(fast_event(w, type, track, category, name, &s)))
    return;
  event_slow(w, type, track, category, name, extras, s);
}

void tmr_event(tmr_writer *w, tmr_event_type type, tmr_track track, tmr_category *category,
               const char *name, int64_t ts, const tmr_event_extras *extras) {
  event_inline(w, (int)type, track, category, name, ts, extras);
}

void tmr_slice_begin(tmr_writer *w, tmr_track track, tmr_category *category, const char *name,
                     int64_t ts) {
  event_inline(w, TMR_SLICE_BEGIN, track, category, name, ts, NULL);
}

void tmr_slice_end(tmr_writer *w, tmr_track track, tmr_category *category, int64_t ts) {
  event_inline(w, TMR_SLICE_END, track, category, NULL, ts, NULL);
}

void tmr_instant(tmr_writer *w, tmr_track track, tmr_category *category, const char *name,
                 int64_t ts) {
  event_inline(w, TMR_INSTANT, track, category, name, ts, NULL);
}

void tmr_complete(tmr_writer *w, tmr_track track, tmr_category *category, const char *name,
                  int64_t ts, int64_t dur_ns, const tmr_event_extras *extras) {
  if (!w || !category_on(category) || !writer_ready(w))
    return;
#ifndef NDEBUG
  if (dur_ns < 0)
    g_error("tracemerge record: complete slice '%s' has a negative duration %" PRId64,
            name ? name : "", dur_ns);
#endif
  if (dur_ns < 0)
    dur_ns = 0;
  stamp s = resolve_time(w, ts);
  event_args begin = {.type = TMR_SLICE_BEGIN, .track = track, .category = category,
                      .name = name, .extras = extras};
  write_event(w, &begin, &s);
  stamp end_stamp = {s.ts + dur_ns, s.clock};
  event_args end = {.type = TMR_SLICE_END, .track = track, .category = category};
  write_event(w, &end, &end_stamp);
}

static void counter(tmr_writer *w, tmr_track track, tmr_category *category, int64_t ts,
                    bool is_double, int64_t int_value, double double_value) {
  if (!w || !track.uuid || !category_on(category) || !writer_ready(w))
    return;
  stamp s = resolve_time(w, ts);
  event_args a = {.type = EVENT_COUNTER, .track = track, .category = category,
                  .counter_is_double = is_double, .counter_int = int_value,
                  .counter_double = double_value};
  write_event(w, &a, &s);
}

void tmr_counter_int(tmr_writer *w, tmr_track track, tmr_category *category, int64_t ts,
                     int64_t value) {
  counter(w, track, category, ts, false, value, 0);
}

void tmr_counter_double(tmr_writer *w, tmr_track track, tmr_category *category, int64_t ts,
                        double value) {
  counter(w, track, category, ts, true, 0, value);
}

typedef struct raw_packet {
  const stamp *s;
  const uint8_t *fields;
  size_t len;
} raw_packet;

static void build_raw(tmr_writer *w, tmr_enc *e, const void *ctx) {
  const raw_packet *r = ctx;
  put_header(e, w, r->s->ts, r->s->clock, r->s->clock != w->default_clock, 0);
  tmr_enc_raw(e, r->fields, r->len);
}

void tmr_write_packet(tmr_writer *w, int64_t ts, const uint8_t *fields, size_t len) {
  if (!w || !writer_ready(w))
    return;
  stamp s = resolve_time(w, ts);
  raw_packet r = {&s, fields, len};
  for (int attempt = 0; attempt < 4; attempt++) {
    emit_result e = prepare_sequence(w, &s);
    if (e == EMIT_OK)
      e = emit_built(w, build_raw, &r);
    if (e != EMIT_RESTART)
      return;
  }
}

void tmr_writer_set_thread_name(tmr_writer *w, const char *name) {
  if (!w || !name)
    return;
  tmr_reg_rename_thread(name);
  w->needs_clear = true; /* the next generation carries the new descriptor */
}

bool tmr_writer_use_clock(tmr_writer *w, uint32_t clock_id, uint64_t unit_ns, int64_t now_value) {
  if (!w || clock_id < 64 || clock_id >= TMR_TSC_CLOCK_ID || unit_ns == 0)
    return false;
  tmr_custom_clock c = {clock_id, unit_ns, boottime_now(), now_value};
  uint32_t i = 0;
  while (i < w->n_clocks && w->clocks[i].id != clock_id)
    i++;
  if (i == w->n_clocks) {
    if (w->n_clocks == TMR_MAX_CUSTOM_CLOCKS)
      return false;
    w->n_clocks++;
  }
  w->clocks[i] = c;
  w->explicit_clock = clock_id;
  w->needs_clear = true;
  return true;
}

void tmr_writer_use_boottime(tmr_writer *w) {
  if (!w || w->explicit_clock == BUILTIN_BOOTTIME)
    return;
  w->explicit_clock = BUILTIN_BOOTTIME;
  w->needs_clear = true;
}

/* --- life cycle -------------------------------------------------------------------------------- */

tmr_writer *tmr_writer_new(tmr_data_source_instance *instance) {
  tmr_writer *w = g_new0(tmr_writer, 1);
  w->instance = instance;
  w->sequence_id = atomic_fetch_add(&instance->session->next_sequence_id, 1);
  uint8_t *q = w->event_header;
  *q++ = 0x50; /* 10: trusted_packet_sequence_id */
  put_varint_raw(&q, w->sequence_id);
  *q++ = 0x68; /* 13: sequence_flags */
  *q++ = SEQ_NEEDS_INCREMENTAL_STATE;
  *q++ = 0x5a; /* 11: track_event, its length byte next */
  *q++ = 0;
  w->event_header_len = (uint32_t)(q - w->event_header);
  w->thread_track = tmr_reg_thread_track();
  w->thread_uuid = tmr_reg_track(w->thread_track)->uuid;
  w->default_clock = BUILTIN_BOOTTIME;
  w->explicit_clock = BUILTIN_BOOTTIME;
  w->use_tsc = instance->session->use_tsc;
  w->anchor.limit = 0; /* anchored at its first TMR_NOW */
  w->needs_clear = true;
  w->first_packet = true;
  w->chunk_cap = instance->chunk_size;
  w->chunk = g_malloc(w->chunk_cap);
  w->scratch_cap = INITIAL_SCRATCH + FRAME_ROOM;
  w->scratch = g_malloc(w->scratch_cap);
  w->interned_cap = INITIAL_SCRATCH;
  w->interned = g_malloc(w->interned_cap);
  tmr_intern_table_init(&w->strings);
  return w;
}

static void gen_array_free(tmr_gen_array *a) {
  g_free(a->gen);
  a->gen = NULL;
  a->cap = 0;
}

void tmr_writer_free(tmr_writer *w) {
  if (!w)
    return;
  g_free(w->chunk);
  g_free(w->scratch);
  g_free(w->interned);
  g_free(w->undo);
  tmr_intern_table_clear(&w->strings);
  gen_array_free(&w->categories);
  gen_array_free(&w->tracks);
  gen_array_free(&w->track_versions);
  gen_array_free(&w->srclocs);
  gen_array_free(&w->callstacks);
  gen_array_free(&w->frames);
  gen_array_free(&w->mappings);
  if (w->open_slices)
    g_hash_table_unref(w->open_slices);
  g_free(w);
}

void tmr_writer_scrape(tmr_writer *w) {
  tmr_trace_buffer *b = w->instance->buffer;
  pthread_mutex_lock(&b->lock);
  size_t committed = atomic_load_explicit(&w->committed, memory_order_acquire);
  if (committed > w->scraped) {
    bool ok = tmr_trace_buffer_commit_locked(b, w->sequence_id, w->chunk + w->scraped,
                                             committed - w->scraped);
    w->scraped = committed;
    if (!ok)
      atomic_fetch_or(&w->pending, TMR_PENDING_LOST | TMR_PENDING_RESET);
    else if (w->instance->ring)
      atomic_fetch_or(&w->pending, TMR_PENDING_RESET);
  }
  pthread_mutex_unlock(&b->lock);
  /* Every flush re-anchors the TSC clock (at the writer's next TMR_NOW),
   * as every flush takes a snapshot of the session's clocks. */
  if (w->use_tsc)
    atomic_fetch_or(&w->pending, TMR_PENDING_ANCHOR);
}

void tmr_writer_request_reset(tmr_writer *w) {
  atomic_fetch_or(&w->pending, TMR_PENDING_RESET);
}

void tmr_writer_release(tmr_writer *w) {
  if (!commit_chunk(w))
    note_loss(w);
  pthread_mutex_lock(&w->instance->lock);
  w->retired = true;
  pthread_mutex_unlock(&w->instance->lock);
}
