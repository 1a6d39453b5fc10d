/*
 * Async track sets: the tracks a reader's async slices (JSON b/e/n,
 * systrace S/F and G/H) land on, packed as trace_processor's
 * TrackCompressor packs them (docs/architecture.md, "Async tracks").
 *
 * A reader names a set (a track description: type, name, process, scope,
 * machine, file) and a cookie inside it, and gets a slot. The slot is not
 * a track: events carry its id (TM_ASYNC_TRACK_BIT set) until the model
 * builder, which sees them in trace-time order, resolves each to a track
 * of the set: the track that holds the cookie, else the first track with
 * no slice open (it is adopted by the cookie), else a new one. So slices
 * that never overlap share one track, and a set has as many tracks as its
 * most slices open at once, not one per cookie.
 *
 * TrackDescriptor tracks merged as trace_processor merges siblings
 * (docs/formats.md §1.9) are sets too: one per (scope, parent uuid, name or
 * merge key), the uuid being the cookie; the set may have a parent (a
 * track, or another set standing for its first track).
 *
 * Invariants: a slot id and its (set, cookie) never change; tracks of a set
 * are made in pass 2 only (or by async_tracks_default/finish_parents after
 * it), in resolution order, after their parent, and share the set's
 * track_group_id (numbered in the order sets are first resolved, over the
 * whole session); a set's state is one entry per track it has.
 */
#ifndef TM_ASYNC_TRACKS_H
#define TM_ASYNC_TRACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

/* Set in a tm_event's track_id (and in the track ref handed to a reader,
 * minus one) when it names a slot, not a track. Track ids stay below. */
#define TM_ASYNC_TRACK_BIT 0x40000000u

typedef struct tm_async_tracks tm_async_tracks;

tm_async_tracks *async_tracks_new(void);
void async_tracks_free(tm_async_tracks *tracks);

/* What a TrackDescriptor adds to a set (all 0/TM_NULL_ID: nothing). */
typedef struct tm_async_merge {
  /* The set's tracks' parent_id: a track id, a slot id (its set's first
   * track, async_tracks_default) or TM_NULL_ID; decided by the set's first
   * slot. */
  uint32_t parent;
  /* One more dimension of the set (the parent's uuid). */
  uint64_t set_key;
  /* Non-zero: the set is told apart by this key instead of its name. */
  tm_str_id merge_key;
  /* The tracks the slot's events make have no name (the set is still the
   * one its name or key says); decided by the slot's first call. */
  bool nameless;
} tm_async_merge;

/* The slot of `cookie` in the set described by `set_row` (its name, type,
 * machine, trace_id, upid, utid, scope and event_type; the other fields are
 * ignored) and `merge` (NULL: none). The slot keeps `set_row`'s name: a
 * track the slot's events make is named so (the set's name unless it
 * merges by key; no name when `merge` says nameless). `unnestable`: a begin on a cookie already open does not
 * nest (Android's legacy async slices saturate); decided by the set's
 * first slot. Returns the slot id, TM_ASYNC_TRACK_BIT included. */
uint32_t async_tracks_slot(tm_async_tracks *tracks, const tm_track_row *set_row,
                           const tm_async_merge *merge, bool unnestable,
                           uint64_t cookie);

/* Sets the parent of the tracks of `slot_id`'s set (as tm_async_merge's
 * `parent`), for tracks made after the call. */
void async_tracks_set_parent(tm_async_tracks *tracks, uint32_t slot_id,
                             uint32_t parent);

/* The source arg set id every track made by `slot_id`'s events gets (0:
 * none); the caller adds to it with model_add_arg before pass 2. */
uint32_t *async_tracks_source_args(tm_async_tracks *tracks, uint32_t slot_id);

/* The first track of `slot_id`'s set, made now (for cookie 0, nothing
 * open, so the next cookie adopts it) if the set has none: what a child
 * track's parent_id names when its parent is a set. */
uint32_t async_tracks_default(tm_async_tracks *tracks, tm_model *model,
                              uint32_t slot_id);

/* Replaces every track's parent_id that names a slot by that set's first
 * track (async_tracks_default). Call once, after pass 2. */
void async_tracks_finish_parents(tm_async_tracks *tracks, tm_model *model);

/* True if `id` is a slot id handed out by async_tracks_slot(). */
bool async_tracks_is_slot(const tm_async_tracks *tracks, uint32_t id);

/* The trace_id (file) of the set of slot `id`, which must be a slot. */
uint32_t async_tracks_trace_id(const tm_async_tracks *tracks, uint32_t id);

typedef enum tm_async_use {
  TM_ASYNC_BEGIN,   /* a slice opens on the cookie */
  TM_ASYNC_END,     /* the cookie's innermost slice ends */
  TM_ASYNC_INSTANT, /* a slice begins and ends at once */
  TM_ASYNC_BIND,    /* a flow binds to the cookie's track; nothing opens */
} tm_async_use;

/* The track (a model row, made on first need) that `slot_id`'s event lands
 * on; updates the set's open counts as `use` says. Call in trace-time
 * order. */
uint32_t async_tracks_resolve(tm_async_tracks *tracks, tm_model *model,
                              uint32_t slot_id, tm_async_use use);

#endif /* TM_ASYNC_TRACKS_H */
