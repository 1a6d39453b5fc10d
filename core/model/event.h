/*
 * The compact event record readers' emissions become, stored in per-source
 * runs until the sorter merges them into the model builder.
 *
 * Invariant: until sorter_convert() runs, `ts` is the raw time on the run's
 * clock; afterwards it is trace time. Durations never change: conversions
 * are offsets, so a duration measured on one clock is the same on trace
 * time. The record is 36 bytes, packed to 4-byte alignment (every pending
 * event of a run the sorter does not pack is resident at the end of
 * reading): keep it that way (docs/architecture.md, Storage). Rare fields live in the session's extras array: a slice with
 * TM_EVENT_HAS_EXTRA names its extra in `u.x.extra` (a complete slice's
 * duration then beside it in `u.x.dur_ns`, or, if it does not fit in 32
 * bits, in the next extra: TM_EVENT_DUR_IN_EXTRA), a begin with
 * TM_EVENT_HAS_FRAME its frame_timeline row.
 */
#ifndef TM_EVENT_H
#define TM_EVENT_H

#include <stddef.h>
#include <stdint.h>

typedef enum tm_event_kind {
  TM_EVENT_SLICE_BEGIN = 0,
  TM_EVENT_SLICE_END = 1,
  TM_EVENT_SLICE_COMPLETE = 2, /* u.dur_ns (tm_event_dur()); instants have dur 0 */
  TM_EVENT_COUNTER = 3,        /* u.value */
  TM_EVENT_FLOW = 4,           /* u.flow_id; flags: direction | binding */
  /* Reserved for the scheduling and profiling builders (core/model/sched_builder,
   * core/model/profile_builder), which define their payload layout. */
  TM_EVENT_SCHED_SWITCH = 5,
  TM_EVENT_SCHED_WAKING = 6,
  TM_EVENT_SAMPLE = 7,
  /* System traces (core/model/system_builder.h defines the payloads). */
  TM_EVENT_FTRACE_RAW = 8,
  TM_EVENT_ANDROID_LOG = 9,
  TM_EVENT_THREAD_LIFETIME = 10,
  TM_EVENT_SCHED_BLOCKED = 11,
} tm_event_kind;

/* Flag bits of tm_event.flags. */
#define TM_EVENT_FLOW_DIRECTION_MASK 0x07u /* tm_flow_direction */
#define TM_EVENT_FLOW_BIND_NEXT 0x08u      /* tm_flow_binding NEXT_BEGIN */
#define TM_EVENT_HAS_EXTRA 0x10u           /* slices: `u.x.extra` indexes extras */
#define TM_EVENT_HAS_FRAME 0x20u           /* begins: `u.x.extra` indexes frame_timeline */
/* A complete slice with TM_EVENT_HAS_EXTRA whose duration does not fit in
 * u.x.dur_ns: it is extras[u.x.extra + 1].thread_ts. */
#define TM_EVENT_DUR_IN_EXTRA 0x40u

typedef struct __attribute__((packed, aligned(4))) tm_event {
  int64_t ts;
  union {
    int64_t dur_ns;
    double value;
    uint64_t flow_id; /* already scoped to the file by the host */
    struct {
      uint32_t extra; /* with TM_EVENT_HAS_EXTRA or TM_EVENT_HAS_FRAME */
      int32_t dur_ns; /* a complete slice's, with TM_EVENT_HAS_EXTRA */
    } x;
  } u;
  uint32_t track_id;
  uint32_t name_id;     /* string pool id, 0 = none */
  uint32_t category_id; /* string pool id, 0 = none */
  uint32_t arg_set_id;  /* 0 = none */
  uint8_t kind;         /* tm_event_kind */
  uint8_t flags;
  uint16_t reserved;
} tm_event;

/* Fields few events carry. */
typedef struct tm_event_extra {
  int64_t thread_ts;  /* INT64_MIN if unknown */
  int64_t thread_dur; /* INT64_MIN if unknown */
} tm_event_extra;

_Static_assert(sizeof(tm_event) == 36, "tm_event must stay 36 bytes");
_Static_assert(_Alignof(tm_event) == 4, "tm_event is packed to 4-byte alignment");

/* How many extras, from u.x.extra on, an event with TM_EVENT_HAS_EXTRA
 * names. */
static inline uint32_t tm_event_extra_count(const tm_event *ev) {
  return (ev->flags & TM_EVENT_DUR_IN_EXTRA) ? 2 : 1;
}

/* A complete slice's duration, wherever it is kept. */
static inline int64_t tm_event_dur(const tm_event *ev, const tm_event_extra *extras) {
  if (!(ev->flags & TM_EVENT_HAS_EXTRA))
    return ev->u.dur_ns;
  if (ev->flags & TM_EVENT_DUR_IN_EXTRA)
    return extras[(size_t)ev->u.x.extra + 1].thread_ts;
  return ev->u.x.dur_ns;
}

#endif /* TM_EVENT_H */
