/*
 * TrackEvent.legacy_event (field 6): the JSON-era phase, ids and flow
 * binding of a TYPE_UNSPECIFIED TrackEvent (docs/formats.md §1.8,
 * §1.9 rule 5; the phases mean what they mean in Chrome JSON, §2.3-2.4).
 *
 * Invariant: decoding reads the wire only; what an event becomes (which
 * track, which slice call) is decided by proto_track_event.c.
 */
#ifndef TM_PROTO_LEGACY_EVENT_H
#define TM_PROTO_LEGACY_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum proto_legacy_id_kind {
  PROTO_LEGACY_ID_NONE = 0,
  PROTO_LEGACY_ID_UNSCOPED, /* global, like JSON "id" */
  PROTO_LEGACY_ID_LOCAL,    /* process-scoped, like JSON id2.local */
  PROTO_LEGACY_ID_GLOBAL,   /* global, like JSON id2.global */
};

enum proto_legacy_flow_direction {
  PROTO_LEGACY_FLOW_UNSPECIFIED = 0,
  PROTO_LEGACY_FLOW_IN = 1,
  PROTO_LEGACY_FLOW_OUT = 2,
  PROTO_LEGACY_FLOW_INOUT = 3,
};

enum proto_legacy_instant_scope {
  PROTO_LEGACY_SCOPE_UNSPECIFIED = 0, /* thread, as JSON without "s" */
  PROTO_LEGACY_SCOPE_GLOBAL = 1,
  PROTO_LEGACY_SCOPE_PROCESS = 2,
  PROTO_LEGACY_SCOPE_THREAD = 3,
};

typedef struct proto_legacy_event {
  int32_t phase; /* the JSON "ph" character; 0 if absent */
  bool has_name_iid;
  uint64_t name_iid; /* deprecated spelling of TrackEvent.name_iid */
  int64_t duration_us;
  bool has_thread_duration;
  int64_t thread_duration_us;
  uint8_t id_kind; /* proto_legacy_id_kind */
  uint64_t id;
  const uint8_t *id_scope; /* NULL: none */
  size_t id_scope_len;
  bool use_async_tts; /* async slices keep their thread time */
  bool has_bind_id;
  uint64_t bind_id;
  uint32_t flow_direction; /* proto_legacy_flow_direction */
  /* A flow v1 end ("f") binds to the slice enclosing it rather than the
   * next one to begin (JSON's "bp": "e"). */
  bool bind_to_enclosing;
  uint32_t instant_scope;  /* proto_legacy_instant_scope */
  bool has_pid_override, has_tid_override;
  int32_t pid_override, tid_override;
} proto_legacy_event;

/* Decodes `data` into `out`; false if the message is malformed. */
bool proto_legacy_event_decode(const uint8_t *data, size_t len, proto_legacy_event *out);

#endif /* TM_PROTO_LEGACY_EVENT_H */
