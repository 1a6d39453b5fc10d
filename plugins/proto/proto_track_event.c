/* TrackEvent decoding and emission (see proto_track_event.h). */
#include "proto_track_event.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "proto_clock.h"
#include "proto_context.h"
#include "proto_debug_annotation.h"
#include "proto_legacy_event.h"
#include "proto_sequence_state.h"
#include "proto_stack_profile.h"
#include "proto_tracks.h"
#include "proto_wire_decode.h"

enum track_event_type {
  TYPE_UNSPECIFIED = 0,
  TYPE_SLICE_BEGIN = 1,
  TYPE_SLICE_END = 2,
  TYPE_INSTANT = 3,
  TYPE_COUNTER = 4,
};
_Static_assert(PROTO_EVENT_COMPLETE > TYPE_COUNTER, "a legacy X is no TrackEvent.Type");

void proto_track_events_init(proto_track_events *te, proto_context *ctx) {
  memset(te, 0, sizeof *te);
  te->ctx = ctx;
}

void proto_track_events_free(proto_track_events *state) {
  tm_vec_free(&state->category_iids);
  tm_vec_free(&state->categories);
  tm_vec_free(&state->annotations);
  tm_vec_free(&state->extra_uuids);
  tm_vec_free(&state->extra_double_uuids);
  tm_vec_free(&state->extra_values);
  tm_vec_free(&state->extra_double_values);
  tm_vec_free(&state->flows);
  tm_vec_free(&state->extras);
  tm_vec_free(&state->pending);
  tm_vec_free(&state->pending_offsets);
  tm_vec_free(&state->pending_flows);
  tm_vec_free(&state->pending_extras);
  proto_map_free(&state->pending_filter);
  proto_map_free(&state->legacy_async_tracks);
}

/* --- text scratch ------------------------------------------------------- */

static void text_append(proto_text *text, const void *data, size_t len) {
  tm_vec_reserve(text, text->len + len);
  if (len)
    memcpy(text->data + text->len, data, len);
  text->len += len;
}

/* --- categories and names ---------------------------------------------- */

static tm_str_id resolve_category(proto_track_events *te, proto_sequence *seq) {
  if (te->category_iids.len == 1 && te->categories.len == 0) {
    uint64_t iid = te->category_iids.data[0];
    tm_str_id str;
    if (proto_sequence_lookup_str(seq, PROTO_INTERN_CATEGORY, iid, &str))
      return str;
    char unknown[40];
    int n = snprintf(unknown, sizeof unknown, "unknown(%" PRIu64 ")", iid);
    return proto_intern(te->ctx, unknown, (size_t)n);
  }
  if (te->category_iids.len == 0 && te->categories.len == 1)
    return proto_intern(te->ctx, (const char *)te->categories.data[0].data,
                        te->categories.data[0].len);
  if (te->category_iids.len == 0 && te->categories.len == 0)
    return 0;
  /* Several categories: joined with ",", interned ones first. */
  te->ctx->text.len = 0;
  size_t parts = 0;
  for (size_t i = 0; i < te->category_iids.len; i++) {
    const proto_interned *e =
        proto_sequence_lookup(seq, PROTO_INTERN_CATEGORY, te->category_iids.data[i]);
    if (!e)
      continue;
    if (parts++)
      text_append(&te->ctx->text, ",", 1);
    text_append(&te->ctx->text, proto_sequence_borrow_text(seq, e), e->len);
  }
  for (size_t i = 0; i < te->categories.len; i++) {
    if (parts++)
      text_append(&te->ctx->text, ",", 1);
    text_append(&te->ctx->text, te->categories.data[i].data, te->categories.data[i].len);
  }
  return parts ? proto_intern(te->ctx, te->ctx->text.data, te->ctx->text.len) : 0;
}

static void add_correlation_id(proto_track_events *te, tm_str_id value) {
  if (!te->key_correlation_id)
    te->key_correlation_id = proto_intern_cstr(te->ctx, "correlation_id");
  te->ctx->s->args_add(te->ctx->host, te->key_correlation_id,
                       (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = value});
}

/* --- emission ------------------------------------------------------------ */

/* The value a counter track records for a raw sample (multiplier, then
 * the sequence's running sum for incremental tracks). */
static double counter_value(proto_track_events *te, const proto_track *track,
                            uint32_t sequence_id, double raw) {
  double value = raw * (double)track->unit_multiplier;
  if (track->incremental) {
    proto_sequence *seq = proto_sequence_get(&te->ctx->sequences, sequence_id);
    double *slot = proto_sequence_counter_slot(seq, track->uuid);
    *slot += value;
    value = *slot;
  }
  return value;
}

static proto_track *counter_track(proto_track_events *te, proto_machine *machine,
                                  uint64_t uuid) {
  proto_track *track = proto_tracks_find(machine, uuid);
  if (!track)
    track = proto_tracks_undescribed(te->ctx, machine, uuid, true);
  return track;
}

static void emit_flows(proto_track_events *te, tm_track_ref track, const proto_event *ev,
                       const proto_flow *flows) {
  for (uint32_t i = 0; i < ev->flows_len; i++)
    te->ctx->s->flow(te->ctx->host, track, ev->clock, ev->ts, flows[i].id,
                     (tm_flow_direction)flows[i].direction, TM_FLOW_BIND_ENCLOSING,
                     TM_NO_ARGS);
}

/* Emits `ev` on `track` (or on `ref` when `track` is NULL: the Default
 * Track or a thread's main track). Inline in each caller: its seven
 * arguments and register saves were a fifth of its instructions. */
static inline __attribute__((always_inline)) void emit(proto_track_events *te, proto_machine *machine, const proto_event *ev,
                 proto_track *track, tm_track_ref ref, const proto_flow *flows,
                 const proto_extra_counter *extras) {
  const tm_host_services *s = te->ctx->s;
  tm_host *host = te->ctx->host;
  if (track)
    ref = proto_tracks_resolve(te->ctx, machine, track, ev->name);
  /* A slice needs a slice track; a counter value, a counter track (the
   * Default Track and a thread's main track are slice tracks). */
  bool is_counter_track = track && track->is_counter;
  if (!ref || is_counter_track != (ev->type == TYPE_COUNTER)) {
    proto_count(te->ctx, "track_event_parser_errors");
    return;
  }
  double value = ev->type == TYPE_COUNTER
                     ? counter_value(te, track, ev->sequence_id, ev->counter_value)
                     : 0;
  /* Extra samples first (finding an undescribed one adds a track, so
   * `track` is not used past here): a thread-time counter among them is
   * also the slice's thread time. */
  tm_track_ref extra_refs[PROTO_MAX_EXTRA_COUNTERS];
  double extra_values[PROTO_MAX_EXTRA_COUNTERS];
  uint32_t n_extras = 0;
  int64_t thread_ts = ev->thread_ts;
  for (uint32_t i = 0; i < ev->extras_len && i < PROTO_MAX_EXTRA_COUNTERS; i++) {
    proto_track *extra = counter_track(te, machine, extras[i].uuid);
    tm_track_ref extra_ref = proto_tracks_resolve(te->ctx, machine, extra, 0);
    if (!extra_ref || !extra->is_counter) {
      proto_count(te->ctx, "track_event_parser_errors");
      continue;
    }
    extra_refs[n_extras] = extra_ref;
    extra_values[n_extras] = counter_value(te, extra, ev->sequence_id, extras[i].value);
    if (extra->is_thread_time)
      thread_ts = (int64_t)extra_values[n_extras];
    n_extras++;
  }
  tm_slice_fields f = {
      .struct_size = sizeof(tm_slice_fields),
      .track = ref,
      .clock = ev->clock,
      .ts = ev->ts,
      .name = ev->name,
      .category = ev->category,
      .args = ev->args,
      .thread_ts = thread_ts,
      .thread_dur = TM_UNKNOWN_TIME,
  };
  switch (ev->type) {
  case TYPE_SLICE_BEGIN:
    s->slice_begin(host, &f);
    emit_flows(te, ref, ev, flows); /* bound to the slice just begun */
    break;
  case TYPE_SLICE_END:
    /* Flows first: before the end, the ending slice encloses them. A typed
     * end closes the innermost slice whatever its name. */
    emit_flows(te, ref, ev, flows);
    f.name = 0;
    f.category = 0;
    s->slice_end(host, &f);
    break;
  case PROTO_EVENT_LEGACY_END:
    /* Closes the innermost slice of its name and category (JSON "E"). */
    emit_flows(te, ref, ev, flows);
    s->slice_end(host, &f);
    break;
  case TYPE_INSTANT:
    s->slice_complete(host, &f, 0);
    emit_flows(te, ref, ev, flows);
    break;
  case PROTO_EVENT_COMPLETE:
    f.thread_dur = ev->thread_dur;
    s->slice_complete(host, &f, ev->dur);
    emit_flows(te, ref, ev, flows);
    break;
  case TYPE_COUNTER:
    s->counter(host, ref, ev->clock, ev->ts, value, ev->args);
    break;
  case PROTO_EVENT_LEGACY_FLOW:
    /* No slice: the flow binds to one of the track's (its own binding). */
    for (uint32_t i = 0; i < ev->flows_len; i++)
      s->flow(host, ref, ev->clock, ev->ts, flows[i].id, (tm_flow_direction)flows[i].direction,
              (tm_flow_binding)flows[i].binding, ev->args);
    break;
  default:
    break;
  }
  for (uint32_t i = 0; i < n_extras; i++)
    s->counter(host, extra_refs[i], ev->clock, ev->ts, extra_values[i], TM_NO_ARGS);
}

static uint64_t pending_key(uint64_t uuid, uint32_t machine_index) {
  return uuid ^ ((uint64_t)machine_index * 0x9E3779B97F4A7C15ull);
}

static void defer(proto_track_events *te, const proto_event *ev) {
  if (te->pending.len >= PROTO_MAX_PENDING_EVENTS)
    proto_track_event_flush_all(te); /* bounded: give up waiting */
  proto_event copy = *ev;
  copy.flows_start = (uint32_t)te->pending_flows.len;
  for (uint32_t i = 0; i < ev->flows_len; i++)
    tm_vec_push(&te->pending_flows, te->flows.data[i]);
  copy.extras_start = (uint32_t)te->pending_extras.len;
  for (uint32_t i = 0; i < ev->extras_len; i++)
    tm_vec_push(&te->pending_extras, te->extras.data[i]);
  tm_vec_push(&te->pending, copy);
  tm_vec_push(&te->pending_offsets, te->ctx->packet_offset);
  uint64_t key = pending_key(ev->uuid, ev->machine_index);
  uint32_t waiting = 0;
  proto_map_get(&te->pending_filter, key, &waiting);
  proto_map_put(&te->pending_filter, key, waiting + 1);
}

/* Emits (and removes) the waiting events `match` selects, keeping the
 * others in order. */
static void flush_pending(proto_track_events *te, bool all, uint32_t machine_index,
                          uint64_t uuid) {
  size_t kept = 0;
  for (size_t i = 0; i < te->pending.len; i++) {
    proto_event ev = te->pending.data[i];
    if (!all && (ev.uuid != uuid || ev.machine_index != machine_index)) {
      te->pending_offsets.data[kept] = te->pending_offsets.data[i];
      te->pending.data[kept++] = ev;
      continue;
    }
    te->ctx->waiting_event_offset = (int64_t)te->pending_offsets.data[i];
    proto_machine *machine = te->ctx->machines.data[ev.machine_index];
    proto_track *track = proto_tracks_find(machine, ev.uuid);
    if (!track)
      track = proto_tracks_undescribed(te->ctx, machine, ev.uuid, ev.type == TYPE_COUNTER);
    /* An event without flows or extras may wait while nothing was ever
     * pushed to those arrays: their data is then NULL, and NULL + 0 is
     * undefined behaviour (found by fuzz_proto). */
    const proto_flow *flows =
        ev.flows_len ? te->pending_flows.data + ev.flows_start : NULL;
    const proto_extra_counter *extras =
        ev.extras_len ? te->pending_extras.data + ev.extras_start : NULL;
    emit(te, machine, &ev, track, 0, flows, extras);
  }
  te->ctx->waiting_event_offset = -1;
  te->pending.len = kept;
  te->pending_offsets.len = kept;
  if (kept == 0) {
    te->pending_flows.len = 0;
    te->pending_extras.len = 0;
    proto_map_clear(&te->pending_filter);
  }
}

void proto_track_event_flush_uuid(proto_track_events *te, proto_machine *machine,
                                  uint64_t uuid) {
  uint32_t waiting = 0;
  uint64_t key = pending_key(uuid, machine->index);
  if (!proto_map_get(&te->pending_filter, key, &waiting) || waiting == 0)
    return;
  proto_map_put(&te->pending_filter, key, 0);
  flush_pending(te, false, machine->index, uuid);
}

void proto_track_event_flush_all(proto_track_events *te) {
  if (te->pending.len)
    flush_pending(te, true, 0, 0);
}

/* --- decoding ------------------------------------------------------------- */

/* One TrackEvent's fields as decoded. Only the fields before `uuid` are
 * cleared per event (decode): every field from `uuid` on is read only when
 * a flag or pointer before it says it was present. Clearing the whole
 * struct was a `rep stos` that took a tenth of proto_track_event_read's
 * time (perf, realistic 1M-packet file). */
typedef struct decoded {
  uint8_t type;
  bool has_uuid;
  bool has_name_iid;
  bool has_name;
  bool has_counter;
  bool counter_is_double;
  bool has_ts_delta_us, has_ts_absolute_us;
  bool has_tt_delta_us, has_tt_absolute_us;
  bool extra_uuids_set, extra_double_uuids_set;
  int correlation; /* 0 none, 1 integer, 2 string, 3 interned */
  const uint8_t *source_location; /* inline SourceLocation, or NULL */
  uint64_t source_location_iid;   /* interned SourceLocation, 0: none */
  const uint8_t *callstack;       /* InlineCallstack, or NULL */
  uint64_t callstack_iid;         /* 0: none */
  const uint8_t *legacy;          /* LegacyEvent, or NULL */
  /* Read only when a field above says so. */
  uint64_t uuid;                  /* has_uuid */
  uint64_t name_iid;              /* has_name_iid */
  const uint8_t *name;            /* has_name */
  size_t name_len;
  int64_t counter_int;            /* has_counter && !counter_is_double */
  double counter_double;          /* has_counter && counter_is_double */
  uint64_t correlation_value;     /* correlation 1 or 3 */
  const uint8_t *correlation_str; /* correlation 2 */
  size_t correlation_len;
  int64_t ts_us;                  /* has_ts_delta_us || has_ts_absolute_us */
  int64_t tt_us;                  /* has_tt_delta_us || has_tt_absolute_us */
  size_t source_location_len;     /* source_location */
  size_t callstack_len;           /* callstack */
  size_t legacy_len;              /* legacy */
} decoded;

/* An event's callstack (inline or interned) becomes its innermost
 * callsite, recorded as the int arg "callsite_id" holding the
 * stack_profile_callsite.id (args_add_callsite; a host without it gives
 * refs that are that id + 1).
 * Returns false if an inline callstack is malformed. */
static bool add_callsite(proto_track_events *te, proto_sequence *seq, const decoded *d) {
  tm_callsite_ref callsite = 0;
  if (d->callstack) {
    if (!proto_stack_inline_callsite(te->ctx, d->callstack, d->callstack_len, &callsite))
      return false;
  } else {
    callsite = proto_stack_callsite(te->ctx, seq, d->callstack_iid);
  }
  if (!callsite)
    return true;
  if (!te->key_callsite_id)
    te->key_callsite_id = proto_intern_cstr(te->ctx, "callsite_id");
  if (TM_HOST_HAS(te->ctx->s, args_add_callsite))
    te->ctx->s->args_add_callsite(te->ctx->host, te->key_callsite_id, callsite);
  else
    te->ctx->s->args_add(
        te->ctx->host, te->key_callsite_id,
        (tm_arg_value){.type = TM_ARG_INT, .u.int_value = (int64_t)callsite - 1});
  return true;
}

static bool push_repeated_slow(const pw_field *f, bool fixed64, proto_u64_vec *out) {
  pw_repeated r = pw_repeated_of(f, fixed64);
  uint64_t v;
  while (pw_repeated_next(&r, &v))
    tm_vec_push(out, v);
  return !r.error;
}

/* Appends the values of repeated field `f`. One unpacked varint (an
 * event's one category iid) is pushed inline: the call was most of it. */
static inline bool push_repeated(const pw_field *f, bool fixed64, proto_u64_vec *out) {
  if (!fixed64 && f->wire_type == PW_VARINT && out->len < out->cap) {
    out->data[out->len++] = f->value;
    return true;
  }
  return push_repeated_slow(f, fixed64, out);
}

static void add_flows(proto_track_events *te, const pw_field *f, bool fixed64,
                      uint8_t direction, bool *ok) {
  pw_repeated r = pw_repeated_of(f, fixed64);
  uint64_t v;
  while (pw_repeated_next(&r, &v)) {
    proto_flow flow = {v, direction, TM_FLOW_BIND_ENCLOSING};
    tm_vec_push(&te->flows, flow);
  }
  if (r.error)
    *ok = false;
}

static bool decode(proto_track_events *te, const proto_sequence *seq, const uint8_t *data,
                   size_t len, decoded *d) {
  memset(d, 0, offsetof(decoded, uuid));
  te->category_iids.len = 0;
  te->categories.len = 0;
  te->annotations.len = 0;
  te->extra_uuids.len = 0;
  te->extra_double_uuids.len = 0;
  te->extra_values.len = 0;
  te->extra_double_values.len = 0;
  te->flows.len = 0;
  te->extras.len = 0;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  bool ok = true;
  while (ok && pw_next(&c, &f)) {
    bool is_varint = f.wire_type == PW_VARINT;
    bool is_bytes = f.wire_type == PW_LENGTH_DELIMITED;
    switch (f.number) {
    case 9:
      ok = is_varint;
      d->type = (uint8_t)(f.value > 255 ? 255 : f.value);
      break;
    case 11:
      ok = is_varint;
      d->uuid = f.value;
      d->has_uuid = true;
      break;
    case 10:
      ok = is_varint;
      d->name_iid = f.value;
      d->has_name_iid = true;
      d->has_name = false;
      proto_sequence_prefetch(seq, PROTO_INTERN_EVENT_NAME, f.value);
      break;
    case 23:
      ok = is_bytes;
      d->name = f.data;
      d->name_len = f.len;
      d->has_name = true;
      d->has_name_iid = false;
      break;
    case 3:
      ok = push_repeated(&f, false, &te->category_iids);
      if (ok && te->category_iids.len)
        proto_sequence_prefetch(seq, PROTO_INTERN_CATEGORY,
                                te->category_iids.data[te->category_iids.len - 1]);
      break;
    case 22: {
      ok = is_bytes;
      proto_bytes text = {f.data, f.len};
      tm_vec_push(&te->categories, text);
      break;
    }
    case 30:
      ok = is_varint;
      d->has_counter = true;
      d->counter_is_double = false;
      d->counter_int = pw_as_int64(&f);
      break;
    case 44:
      ok = f.wire_type == PW_FIXED64;
      d->has_counter = true;
      d->counter_is_double = true;
      d->counter_double = pw_as_double(&f);
      break;
    case 31:
      d->extra_uuids_set = true;
      ok = push_repeated(&f, false, &te->extra_uuids);
      break;
    case 12:
      ok = push_repeated(&f, false, &te->extra_values);
      break;
    case 45:
      d->extra_double_uuids_set = true;
      ok = push_repeated(&f, false, &te->extra_double_uuids);
      break;
    case 46:
      ok = push_repeated(&f, true, &te->extra_double_values);
      break;
    case 47:
      add_flows(te, &f, true, TM_FLOW_CONTINUE, &ok);
      break;
    case 36:
      add_flows(te, &f, false, TM_FLOW_CONTINUE, &ok);
      break;
    case 48:
      add_flows(te, &f, true, TM_FLOW_IN, &ok);
      break;
    case 42:
      add_flows(te, &f, false, TM_FLOW_IN, &ok);
      break;
    case 52:
      ok = is_varint;
      d->correlation = 1;
      d->correlation_value = f.value;
      break;
    case 53:
      ok = is_bytes;
      d->correlation = 2;
      d->correlation_str = f.data;
      d->correlation_len = f.len;
      break;
    case 54:
      ok = is_varint;
      d->correlation = 3;
      d->correlation_value = f.value;
      break;
    case 4: {
      ok = is_bytes;
      proto_bytes text = {f.data, f.len};
      tm_vec_push(&te->annotations, text);
      break;
    }
    case 1:
    case 16:
      ok = is_varint;
      d->has_ts_delta_us = f.number == 1;
      d->has_ts_absolute_us = f.number == 16;
      d->ts_us = pw_as_int64(&f);
      break;
    case 2:
    case 17:
      ok = is_varint;
      d->has_tt_delta_us = f.number == 2;
      d->has_tt_absolute_us = f.number == 17;
      d->tt_us = pw_as_int64(&f);
      break;
    case 33: /* source_location and source_location_iid are a oneof: the last wins */
      ok = is_bytes;
      d->source_location = f.data;
      d->source_location_len = f.len;
      d->source_location_iid = 0;
      break;
    case 34:
      ok = is_varint;
      d->source_location_iid = f.value;
      d->source_location = NULL;
      break;
    case 55: /* callstack and callstack_iid are a oneof: the last wins */
      ok = is_bytes;
      d->callstack = f.data;
      d->callstack_len = f.len;
      d->callstack_iid = 0;
      break;
    case 56:
      ok = is_varint;
      d->callstack_iid = f.value;
      d->callstack = NULL;
      break;
    case 6:
      ok = is_bytes;
      d->legacy = f.data;
      d->legacy_len = f.len;
      break;
    default:
      break;
    }
  }
  return ok && c.error == PW_OK;
}

/* Pairs extra counter uuids (the event's, else the sequence defaults') with
 * values. Returns false, counting why, if the event must be dropped. */
static bool pair_extra_counters(proto_track_events *te, proto_sequence *seq,
                                const decoded *d) {
  const uint64_t *uuids = te->extra_uuids.data;
  size_t n_uuids = te->extra_uuids.len;
  if (!d->extra_uuids_set) {
    uuids = seq->default_extra_counter_uuids.data;
    n_uuids = seq->default_extra_counter_uuids.len;
  }
  const uint64_t *double_uuids = te->extra_double_uuids.data;
  size_t n_double_uuids = te->extra_double_uuids.len;
  if (!d->extra_double_uuids_set) {
    double_uuids = seq->default_extra_double_counter_uuids.data;
    n_double_uuids = seq->default_extra_double_counter_uuids.len;
  }
  if (te->extra_values.len > n_uuids || te->extra_double_values.len > n_double_uuids) {
    proto_count(te->ctx, "track_event_extra_counter_values_without_track");
    return false;
  }
  if (te->extra_values.len + te->extra_double_values.len > PROTO_MAX_EXTRA_COUNTERS) {
    proto_count(te->ctx, "track_event_extra_counter_too_many_values");
    return false;
  }
  for (size_t i = 0; i < te->extra_values.len; i++) {
    proto_extra_counter extra = {uuids[i], (double)(int64_t)te->extra_values.data[i]};
    tm_vec_push(&te->extras, extra);
  }
  for (size_t i = 0; i < te->extra_double_values.len; i++) {
    double value;
    memcpy(&value, &te->extra_double_values.data[i], sizeof value);
    proto_extra_counter extra = {double_uuids[i], value};
    tm_vec_push(&te->extras, extra);
  }
  return true;
}

static inline tm_str_id event_name(proto_track_events *te, proto_sequence *seq,
                                   const decoded *d) {
  if (d->has_name_iid) {
    tm_str_id str;
    return proto_sequence_lookup_str(seq, PROTO_INTERN_EVENT_NAME, d->name_iid, &str) ? str
                                                                                   : 0;
  }
  if (d->has_name)
    return proto_intern(te->ctx, (const char *)d->name, d->name_len);
  return 0;
}

/* --- legacy events --------------------------------------------------------- */

/* The event type a legacy phase is read as, or 0 for phases not imported
 * (counted by the caller). */
static uint8_t legacy_type(int32_t phase) {
  switch (phase) {
  case 'B':
  case 'b':
    return TYPE_SLICE_BEGIN;
  case 'E':
  case 'e':
    return PROTO_EVENT_LEGACY_END;
  case 'X':
    return PROTO_EVENT_COMPLETE;
  case 'I':
  case 'i':
  case 'n':
    return TYPE_INSTANT;
  case 's':
  case 't':
  case 'f':
    return PROTO_EVENT_LEGACY_FLOW;
  default:
    return 0;
  }
}

/* The pid a legacy event belongs to: its pid_override, else its
 * sequence's default thread's. */
static bool legacy_pid(const proto_sequence *seq, const proto_legacy_event *legacy,
                       int64_t *pid) {
  if (legacy->has_pid_override)
    *pid = legacy->pid_override;
  else if (seq->thread)
    *pid = seq->thread_pid;
  else
    return false;
  return true;
}

/* The default thread's main track, or with pid_override/tid_override the
 * thread they name instead (on the default thread's machine). */
static __attribute__((noinline, cold)) tm_track_ref
legacy_thread_track(proto_track_events *te, const proto_sequence *seq,
                    const proto_legacy_event *legacy) {
  tm_thread_ref thread = seq->thread;
  if (legacy->has_pid_override || legacy->has_tid_override) {
    int64_t pid = legacy->has_pid_override ? legacy->pid_override : seq->thread_pid;
    int64_t tid = legacy->has_tid_override ? legacy->tid_override : seq->thread_tid;
    tm_machine_ref machine = te->ctx->machines.data[seq->thread_machine]->ref;
    thread = te->ctx->s->thread(te->ctx->host, machine, pid, tid);
  }
  return te->ctx->s->track_thread(te->ctx->host, thread);
}

static uint64_t mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

/* The legacy async track of an event with an id (§2.4, as the JSON
 * reader's): local ids are scoped to the process, unscoped and global
 * ids share one global space; id_scope separates ids of one space. The
 * track is named after the first event of its id. Keys are a hash of
 * those parts, as the JSON reader's cookies are. */
static tm_track_ref legacy_async_track(proto_track_events *te, proto_machine *machine,
                                       const proto_legacy_event *legacy, tm_str_id name,
                                       tm_process_ref process) {
  tm_str_id scope = legacy->id_scope ? proto_intern(te->ctx, (const char *)legacy->id_scope,
                                                    legacy->id_scope_len)
                                     : 0;
  bool local = legacy->id_kind == PROTO_LEGACY_ID_LOCAL;
  uint64_t key = mix64(machine->index + 1);
  key = mix64(key ^ (local ? 2u : 1u));
  key = mix64(key ^ legacy->id);
  key = mix64(key ^ scope);
  key = mix64(key ^ process);
  uint32_t track;
  if (proto_map_get(&te->legacy_async_tracks, key, &track))
    return track;
  tm_track_desc desc = {
      TM_TRACK_DESC_INIT,
      .type = local ? "legacy_async_process_slice" : "legacy_async_global_slice",
      .name = name,
      .process = process,
      .scope = scope,
      .key = legacy->id,
  };
  track = proto_tracks_intern(te->ctx, machine, &desc);
  if (track)
    proto_map_put(&te->legacy_async_tracks, key, track);
  return track;
}

/* The track a legacy event's phase or scope names (§1.9 rule 5): async
 * tracks for b/e/n, Chrome's instant tracks for global and process
 * instants. Sets *ref and returns true; *ref stays 0 when the usual rules
 * apply. False: the event cannot be placed (counted). */
static __attribute__((noinline, cold)) bool
legacy_phase_track(proto_track_events *te, proto_machine *machine,
                   const proto_sequence *seq, const proto_legacy_event *legacy,
                   tm_str_id name, tm_track_ref *ref) {
  int32_t phase = legacy->phase;
  int64_t pid;
  *ref = 0;
  if (phase == 'b' || phase == 'e' || phase == 'n') {
    tm_process_ref process = 0;
    if (legacy->id_kind == PROTO_LEGACY_ID_NONE)
      goto unplaceable;
    if (legacy->id_kind == PROTO_LEGACY_ID_LOCAL) {
      if (!legacy_pid(seq, legacy, &pid))
        goto unplaceable;
      process = te->ctx->s->process(te->ctx->host, machine->ref, pid);
    }
    *ref = legacy_async_track(te, machine, legacy, name, process);
  } else if ((phase == 'I' || phase == 'i') &&
             legacy->instant_scope == PROTO_LEGACY_SCOPE_GLOBAL) {
    tm_track_desc desc = {TM_TRACK_DESC_INIT, .type = "legacy_chrome_global_instants"};
    *ref = proto_tracks_intern(te->ctx, machine, &desc);
  } else if ((phase == 'I' || phase == 'i') &&
             legacy->instant_scope == PROTO_LEGACY_SCOPE_PROCESS) {
    if (!legacy_pid(seq, legacy, &pid))
      goto unplaceable;
    tm_track_desc desc = {TM_TRACK_DESC_INIT, .type = "chrome_process_instant",
                          .process = te->ctx->s->process(te->ctx->host, machine->ref, pid)};
    *ref = proto_tracks_intern(te->ctx, machine, &desc);
  }
  return true;
unplaceable:
  proto_count(te->ctx, "track_event_parser_errors");
  return false;
}

/* Reads the legacy fields of `d` into `ev` (type, duration) and the
 * deprecated legacy name_iid into `d`. False: the event is dropped
 * (counted) or, with *malformed, damaged. */
static __attribute__((noinline, cold)) bool read_legacy(proto_track_events *te, decoded *d,
                                                        proto_legacy_event *legacy,
                                                        proto_event *ev, bool *malformed) {
  if (!d->legacy) {
    proto_count(te->ctx, "proto_track_event_unsupported_type");
    return false;
  }
  if (!proto_legacy_event_decode(d->legacy, d->legacy_len, legacy)) {
    *malformed = true;
    return false;
  }
  ev->type = legacy_type(legacy->phase);
  if (!ev->type) {
    proto_count(te->ctx, "proto_track_event_unsupported_type");
    return false;
  }
  /* Only unscoped_id is a flow v1 id, as only JSON's "id" is (local and
   * global ids are JSON's id2, which flow v1 does not read; trace_processor
   * agrees): any other id, or none, drops the event before its track is
   * looked for. */
  if (ev->type == PROTO_EVENT_LEGACY_FLOW && legacy->id_kind != PROTO_LEGACY_ID_UNSCOPED) {
    proto_count(te->ctx, "flow_invalid_id");
    return false;
  }
  if (!d->has_name && !d->has_name_iid && legacy->has_name_iid) {
    d->has_name_iid = true;
    d->name_iid = legacy->name_iid;
  }
  if (ev->type == PROTO_EVENT_COMPLETE) {
    /* An absent duration is 0, as trace_processor reads it. */
    if (legacy->duration_us < 0 || legacy->duration_us > INT64_MAX / 1000 ||
        legacy->thread_duration_us < 0 || legacy->thread_duration_us > INT64_MAX / 1000) {
      proto_count(te->ctx, "track_event_parser_errors");
      return false;
    }
    ev->dur = legacy->duration_us * 1000;
    ev->thread_dur =
        legacy->has_thread_duration ? legacy->thread_duration_us * 1000 : TM_UNKNOWN_TIME;
  }
  return true;
}

/* The track of a legacy event: the one its phase names, else the usual
 * rules (§1.9), where a legacy event with no uuid, even an explicit 0,
 * goes to the default thread (with its overrides); also adds its bind_id
 * flow, and drops an async slice's thread time unless use_async_tts asks
 * to keep it (as Chrome and trace_processor do). Sets *uuid (0 unless a
 * described track), *ref or *track, *wait. False: the event cannot be
 * placed (counted). */
static void add_legacy_flow(proto_track_events *te, const proto_legacy_event *legacy);
static __attribute__((noinline, cold)) bool
legacy_track(proto_track_events *te, proto_machine *machine, const proto_sequence *seq,
             const proto_legacy_event *legacy, tm_str_id name, uint64_t *uuid,
             proto_track **track, tm_track_ref *ref, bool *wait, int64_t *thread_ts) {
  /* On the default thread (whatever track the phase then names), pid or
   * tid 0 after the overrides is an error (§1.9 rule 3): 0 is the idle
   * (swapper) thread, never a Chrome thread. A pid_override alone makes
   * trace_processor synthesize the tid, so only that pid is checked. */
  if (*uuid == 0 && seq->thread) {
    int64_t pid = legacy->has_pid_override ? legacy->pid_override : seq->thread_pid;
    int64_t tid = legacy->has_tid_override   ? legacy->tid_override
                  : legacy->has_pid_override ? 1
                                             : seq->thread_tid;
    if (pid == 0 || tid == 0) {
      proto_count(te->ctx, "track_event_parser_errors");
      return false;
    }
  }
  if (!legacy_phase_track(te, machine, seq, legacy, name, ref))
    return false;
  int32_t phase = legacy->phase;
  if ((phase == 'b' || phase == 'e' || phase == 'n') && !legacy->use_async_tts)
    *thread_ts = TM_UNKNOWN_TIME;
  if (*ref) {
    *uuid = 0;
  } else if (*uuid != 0) {
    *track = proto_tracks_find(machine, *uuid);
    *wait = *track == NULL;
  } else if (seq->thread) {
    *ref = legacy_thread_track(te, seq, legacy);
  } else {
    *ref = proto_tracks_default_track(te->ctx, machine);
  }
  add_legacy_flow(te, legacy);
  return true;
}

/* A legacy bind_id is a flow of the slice the event begins (B, X, b, n,
 * as in JSON); its direction says where the flow goes (§2.4 flow v2). An
 * in-flow ends at the slice but stays in flight, as trace_processor's
 * FlowTracker::End with close_flow false leaves it: a later in-flow of the
 * id links from the same out-slice again. */
static void add_legacy_flow(proto_track_events *te, const proto_legacy_event *legacy) {
  int32_t phase = legacy->phase;
  if (!legacy->has_bind_id || !(phase == 'B' || phase == 'X' || phase == 'b' || phase == 'n'))
    return;
  static const int8_t directions[] = {
      [PROTO_LEGACY_FLOW_UNSPECIFIED] = -1,
      [PROTO_LEGACY_FLOW_IN] = TM_FLOW_IN_KEEP,
      [PROTO_LEGACY_FLOW_OUT] = TM_FLOW_OUT,
      [PROTO_LEGACY_FLOW_INOUT] = TM_FLOW_STEP,
  };
  int8_t direction = directions[legacy->flow_direction];
  if (direction < 0) {
    proto_count(te->ctx, "flow_without_direction");
    return;
  }
  proto_flow flow = {legacy->bind_id, (uint8_t)direction, TM_FLOW_BIND_ENCLOSING};
  tm_vec_push(&te->flows, flow);
}

/* Flow v1 (s/t/f, §2.4, as the JSON reader reads them): the flow is keyed
 * by (id, category, name), so one id names a different flow per name; its
 * rows carry the args name and cat. s starts it at the slice enclosing
 * the event on its track, t steps through that slice, f ends it at the
 * next slice to begin there, or with bind_to_enclosing at the enclosing
 * one (its unscoped_id was checked by read_legacy); like a JSON f, it does
 * not close the flow (trace_processor ends it with close_flow false). The event's typed
 * flow ids and annotations are dropped with the slice it does not have.
 * Sets ev->args and the flow scratch (its one flow). */
static __attribute__((noinline, cold)) void
legacy_flow_v1(proto_track_events *te, const proto_legacy_event *legacy, proto_event *ev) {
  te->flows.len = 0;
  if (ev->name || ev->category) {
    if (!te->key_flow_name) {
      te->key_flow_name = proto_intern_cstr(te->ctx, "name");
      te->key_flow_cat = proto_intern_cstr(te->ctx, "cat");
    }
    if (ev->name)
      te->ctx->s->args_add(te->ctx->host, te->key_flow_name,
                           (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = ev->name});
    if (ev->category)
      te->ctx->s->args_add(te->ctx->host, te->key_flow_cat,
                           (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = ev->category});
    ev->args = te->ctx->s->args_commit(te->ctx->host);
  } else {
    ev->args = TM_NO_ARGS;
  }
  /* Flow ids are scoped to the file by the host, and typed flow_ids and
   * bind_ids share that space: the key is hashed apart from them. */
  uint64_t key = mix64(mix64(mix64(legacy->id) ^ ev->category) + ev->name);
  int32_t phase = legacy->phase;
  proto_flow flow = {
      .id = key,
      .direction = phase == 's' ? TM_FLOW_OUT : phase == 't' ? TM_FLOW_STEP : TM_FLOW_IN_KEEP,
      .binding = phase == 'f' && !legacy->bind_to_enclosing ? TM_FLOW_BIND_NEXT_BEGIN
                                                           : TM_FLOW_BIND_ENCLOSING,
  };
  tm_vec_push(&te->flows, flow);
}

/* --- one event ---------------------------------------------------------------- */

bool proto_track_event_read(proto_track_events *te, proto_machine *machine,
                            proto_sequence *seq, const proto_timestamp *packet_ts,
                            const uint8_t *data, size_t len) {
  decoded d;
  if (!decode(te, seq, data, len, &d))
    return false;

  proto_event ev;
  proto_event_start(&ev, machine->index, seq->id, d.type);
  proto_legacy_event legacy;
  bool is_legacy = false;
  if (__builtin_expect(d.type == TYPE_UNSPECIFIED || d.type > TYPE_COUNTER, 0)) {
    if (d.type != TYPE_UNSPECIFIED) {
      /* State tracks are not read. */
      proto_count(te->ctx, "proto_track_event_unsupported_type");
      return true;
    }
    bool malformed = false;
    if (!read_legacy(te, &d, &legacy, &ev, &malformed))
      return !malformed;
    is_legacy = true;
  }
  /* Legacy µs fields override the packet time, on MONOTONIC (§1.6). */
  if (d.has_ts_absolute_us || d.has_ts_delta_us) {
    if (d.has_ts_delta_us && !seq->state_valid) {
      proto_count(te->ctx, "packet_skipped_seq_needs_incremental_state_invalid");
      return true;
    }
    int64_t us = d.has_ts_absolute_us ? d.ts_us : (seq->timestamp_us += d.ts_us);
    ev.clock = proto_clock_get(te->ctx, machine, 0, TM_CLOCK_MONOTONIC)->ref;
    ev.ts = (int64_t)((uint64_t)us * 1000u);
  } else if (packet_ts) {
    ev.clock = packet_ts->clock;
    ev.ts = packet_ts->ns;
  } else {
    proto_count(te->ctx, "track_event_missing_timestamp");
    return true;
  }
  if (ev.ts < 0) {
    proto_count(te->ctx, "track_event_invalid_timestamp");
    return true;
  }
  if (d.has_tt_absolute_us)
    ev.thread_ts = (int64_t)((uint64_t)d.tt_us * 1000u);
  else if (d.has_tt_delta_us)
    ev.thread_ts = (int64_t)((uint64_t)(seq->thread_time_us += d.tt_us) * 1000u);
  if (d.type == TYPE_COUNTER) {
    if (!d.has_counter) {
      proto_count(te->ctx, "track_event_counter_missing_value");
      return true;
    }
    ev.counter_value = d.counter_is_double ? d.counter_double : (double)d.counter_int;
  }
  if (!pair_extra_counters(te, seq, &d))
    return true;

  /* Track (§1.9). */
  uint64_t uuid = d.has_uuid ? d.uuid : seq->has_default_track_uuid ? seq->default_track_uuid : 0;
  proto_track *track = NULL;
  tm_track_ref ref = 0;
  bool wait = false;
  if (__builtin_expect(is_legacy, 0)) {
    /* A copy: taking the address of `ev` would keep it out of registers
     * on the typed path too. */
    int64_t thread_ts = ev.thread_ts;
    if (!legacy_track(te, machine, seq, &legacy, event_name(te, seq, &d), &uuid, &track,
                      &ref, &wait, &thread_ts))
      return true;
    ev.thread_ts = thread_ts;
  } else if (uuid != 0) {
    track = proto_tracks_find(machine, uuid);
    wait = track == NULL;
  } else if (seq->thread && !d.has_uuid) {
    ref = te->ctx->s->track_thread(te->ctx->host, seq->thread);
  } else {
    ref = proto_tracks_default_track(te->ctx, machine);
  }
  ev.uuid = uuid;
  ev.name = event_name(te, seq, &d);
  ev.category = resolve_category(te, seq);
  if (__builtin_expect(is_legacy, 0) && ev.type == PROTO_EVENT_LEGACY_FLOW) {
    legacy_flow_v1(te, &legacy, &ev); /* a flow has no slice args */
    goto ready;
  }

  /* A malformed annotation damages the file: its pairs are never
   * committed, and the host reads no more of this file. */
  if (!proto_debug_annotations_add(te->ctx, seq, te->annotations.data, te->annotations.len,
                                   &te->ctx->text))
    return false;
  if (d.correlation == 1) {
    char text[40];
    int n = snprintf(text, sizeof text, "tp:#%" PRIu64, d.correlation_value);
    add_correlation_id(te, proto_intern(te->ctx, text, (size_t)n));
  } else if (d.correlation == 2) {
    add_correlation_id(
        te, proto_intern(te->ctx, (const char *)d.correlation_str, d.correlation_len));
  } else if (d.correlation == 3) {
    const proto_interned *e =
        proto_sequence_lookup(seq, PROTO_INTERN_CORRELATION, d.correlation_value);
    if (e)
      add_correlation_id(te, e->str);
  }
  if (d.source_location_iid) {
    /* An iid the sequence lacks adds nothing, as for correlation ids. */
    const proto_interned *e =
        proto_sequence_lookup(seq, PROTO_INTERN_SOURCE_LOCATION, d.source_location_iid);
    if (e) {
      d.source_location = (const uint8_t *)proto_sequence_borrow_text(seq, e);
      d.source_location_len = e->len;
    }
  }
  if (d.source_location &&
      !proto_source_location_add(te->ctx, d.source_location, d.source_location_len))
    return false;
  if ((d.callstack || d.callstack_iid) && !add_callsite(te, seq, &d))
    return false;
  ev.args = te->ctx->s->args_commit(te->ctx->host);
ready:
  ev.flows_len = (uint32_t)te->flows.len;
  ev.extras_len = (uint32_t)te->extras.len;

  if (wait)
    defer(te, &ev);
  else
    emit(te, machine, &ev, track, ref, te->flows.data, te->extras.data);
  return true;
}
