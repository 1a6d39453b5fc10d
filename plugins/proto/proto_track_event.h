/*
 * TrackEvent (packet field 11): slices, instants, counters, extra counter
 * samples, flows, correlation ids, callstacks (arg "callsite_id") and debug
 * annotations
 * (docs/formats.md §1.8, §1.9), decoded straight from the wire.
 * Legacy (TYPE_UNSPECIFIED) events are read by their legacy_event phase:
 * B/E/X and thread-scoped I/i as the typed slice calls, global and process
 * instants on Chrome's instant tracks, b/e/n on legacy async tracks keyed
 * by their id (JSON's rules, §2.3-2.4), bind_id as a flow; other phases,
 * and TYPE_STATE, are counted (proto_track_event_unsupported_type).
 *
 * Invariants: decoding an event allocates nothing once the scratch arrays
 * have grown to the largest event seen; an event's args are committed as
 * one set just before it is emitted, and never for a dropped event; an
 * event whose track uuid has no descriptor yet waits (in file order, at
 * most PROTO_MAX_PENDING_EVENTS of them) until its descriptor arrives, as
 * trace_processor knows every descriptor before it parses events. At the
 * end of the file, events of uuids never described land on plain global
 * tracks.
 */
#ifndef TM_PROTO_TRACK_EVENT_H
#define TM_PROTO_TRACK_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "proto_map.h"
#include "proto_vec.h"

#define PROTO_MAX_PENDING_EVENTS 65536
/* TrackEvent allows at most this many extra counter values per event. */
#define PROTO_MAX_EXTRA_COUNTERS 8

struct proto_context;
struct proto_machine;
struct proto_sequence;
struct proto_timestamp;

typedef struct proto_flow {
  uint64_t id;
  uint8_t direction; /* tm_flow_direction */
  uint8_t binding;   /* tm_flow_binding: only a flow v1 end binds to the next slice */
} proto_flow;

typedef struct proto_extra_counter {
  uint64_t uuid;
  double value;
} proto_extra_counter;

/* Legacy phases with no TrackEvent.Type of their own: X, a slice of known
 * duration; E/e, an end that closes the innermost open slice with its name
 * and category (Chrome JSON "E"), where a typed end closes the innermost
 * one. */
#define PROTO_EVENT_COMPLETE 16
#define PROTO_EVENT_LEGACY_END 17
/* Legacy flow v1 s/t/f: no slice of its own, one flow (start, step or
 * end) bound to a slice of its track; its args are the flow's. */
#define PROTO_EVENT_LEGACY_FLOW 18

/* A decoded event, ready to emit once its track is known. */
typedef struct proto_event {
  uint64_t uuid;
  uint32_t machine_index;
  uint32_t sequence_id;
  uint8_t type; /* TrackEvent.Type, or PROTO_EVENT_COMPLETE / _LEGACY_END / _LEGACY_FLOW */
  tm_clock_ref clock;
  int64_t ts;
  int64_t thread_ts; /* TM_UNKNOWN_TIME */
  tm_str_id name;
  tm_str_id category;
  tm_args_ref args;
  double counter_value;
  int64_t dur;        /* PROTO_EVENT_COMPLETE */
  int64_t thread_dur; /* PROTO_EVENT_COMPLETE: TM_UNKNOWN_TIME if none */
  uint32_t flows_start, flows_len;     /* into the flow array */
  uint32_t extras_start, extras_len;   /* into the extra counter array */
} proto_event;

/* Starts `ev` with every field set, one by one: an initializer of the
 * whole struct was a `rep stos` that took a tenth of
 * proto_track_event_read's time (perf). The caller sets `clock` and `ts`
 * before any use; they are set here too (free: the compiler drops the
 * stores), so that test_proto_reader's
 * "/proto/reader/clearing/event-start-sets-every-field" can check that
 * every field is set: a field added above fails it until it is set here. */
static inline void proto_event_start(proto_event *ev, uint32_t machine_index,
                                     uint32_t sequence_id, uint8_t type) {
  ev->uuid = 0;
  ev->machine_index = machine_index;
  ev->sequence_id = sequence_id;
  ev->type = type;
  ev->clock = 0;
  ev->ts = 0;
  ev->thread_ts = TM_UNKNOWN_TIME;
  ev->name = 0;
  ev->category = 0;
  ev->args = TM_NO_ARGS;
  ev->counter_value = 0;
  ev->dur = 0;
  ev->thread_dur = TM_UNKNOWN_TIME;
  ev->flows_start = 0;
  ev->flows_len = 0;
  ev->extras_start = 0;
  ev->extras_len = 0;
}

/* The TrackEvent decoder of one file, bound to its context. */
typedef struct proto_track_events {
  struct proto_context *ctx;
  /* Scratch for the event being decoded. */
  proto_u64_vec category_iids;
  TM_VEC(proto_bytes) categories;
  TM_VEC(proto_bytes) annotations;
  proto_u64_vec extra_uuids;
  proto_u64_vec extra_double_uuids;
  proto_u64_vec extra_values;        /* int64 bits */
  proto_u64_vec extra_double_values; /* double bits */
  TM_VEC(proto_flow) flows;
  TM_VEC(proto_extra_counter) extras;
  /* Events waiting for their track's descriptor, in file order. */
  TM_VEC(proto_event) pending;
  proto_u64_vec pending_offsets; /* each one's packet offset, for logs */
  TM_VEC(proto_flow) pending_flows;
  TM_VEC(proto_extra_counter) pending_extras;
  proto_map pending_filter; /* uuid ^ machine hash -> waiting events (may over-count) */
  /* Legacy async tracks: hash of (machine, id kind, id, id_scope, process)
   * -> track, so a track keeps the name of the first event of its id. */
  proto_map legacy_async_tracks;
  /* Interned keys. */
  tm_str_id key_correlation_id;
  tm_str_id key_callsite_id;
  tm_str_id key_flow_name, key_flow_cat; /* flow v1 args */
} proto_track_events;

void proto_track_events_init(proto_track_events *te, struct proto_context *ctx);
void proto_track_events_free(proto_track_events *te);

/* Reads one TrackEvent of `machine` on `seq`; `packet_ts` is the packet's
 * resolved timestamp, or NULL if the packet had none. Returns false if the
 * event does not decode. */
bool proto_track_event_read(proto_track_events *te, struct proto_machine *machine,
                            struct proto_sequence *seq,
                            const struct proto_timestamp *packet_ts, const uint8_t *data,
                            size_t len);

/* Emits the events waiting for the descriptor of `uuid` on `machine`. */
void proto_track_event_flush_uuid(proto_track_events *te, struct proto_machine *machine,
                                  uint64_t uuid);
/* End of file: emits every waiting event on an undescribed track. */
void proto_track_event_flush_all(proto_track_events *te);

#endif /* TM_PROTO_TRACK_EVENT_H */
