/*
 * TrackDescriptors (packet field 60) and the deprecated standalone
 * Thread/ProcessDescriptor packets (44, 43): uuids, the processes and
 * threads they name, and the host tracks events land on
 * (docs/formats.md §1.7, §1.9; docs/sql-surface.md §8.1 for track types).
 *
 * Invariants: uuids are scoped to one machine of one file; the first
 * descriptor of a uuid fixes its kind (process, thread, custom; counter or
 * not): a later one of another kind is dropped and counted
 * (track_descriptor_conflicting_reservation). A host track is created when
 * a track is first used (by an event, or as the parent of a used track,
 * thread and process parents included, as in trace_processor), so
 * descriptors that arrive after their first event in the file still shape
 * it. A thread's track merges into the thread's main track unless
 * disallow_merging_with_system_tracks; a custom track whose parent is a
 * thread or process track is scoped to that thread or process (a sibling of
 * its track, not a child); one under another custom track is its child.
 * Custom slice tracks and the Default Track are slots of merged track sets
 * (siblings of one name or merge key share tracks, sibling_merge_behavior
 * NONE opts out; docs/formats.md §1.9).
 */
#ifndef TM_PROTO_TRACKS_H
#define TM_PROTO_TRACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "proto_machine.h"

struct proto_context;
struct proto_machine;
struct proto_sequence;

/* The described (or undescribed, once used) track `uuid`, or NULL.
 * Inline, as the resolved track's check below: one of each per event, and
 * the calls were most of their cost (callgrind). */
static inline proto_track *proto_tracks_find(struct proto_machine *machine, uint64_t uuid) {
  uint32_t index;
  if (!proto_map_get(&machine->tracks.index, uuid, &index))
    return NULL;
  return &machine->tracks.items.data[index];
}

/* A TrackDescriptor of `machine`, read on `seq` (may be the sequence 0).
 * Returns false if it does not decode; the uuid is stored in *uuid (0 if
 * the descriptor described none). */
bool proto_tracks_read_descriptor(struct proto_context *ctx, struct proto_machine *machine,
                                  struct proto_sequence *seq, const uint8_t *data,
                                  size_t len, uint64_t *uuid);
/* Packet fields 44 and 43. */
bool proto_tracks_read_thread_descriptor(struct proto_context *ctx,
                                         struct proto_machine *machine,
                                         struct proto_sequence *seq, const uint8_t *data,
                                         size_t len);
bool proto_tracks_read_process_descriptor(struct proto_context *ctx,
                                          struct proto_machine *machine,
                                          const uint8_t *data, size_t len);

/* The host track of `track` (a slot of merged tracks for a slice track
 * below the root of its scope), created on first use; an unnamed track
 * takes `event_name`, the name of the event that first uses it (0 when a
 * child uses it as parent). 0 if the parent chain loops. */
tm_track_ref proto_tracks_resolve_slow_(struct proto_context *ctx,
                                        struct proto_machine *machine, proto_track *track,
                                        tm_str_id event_name);
static inline tm_track_ref proto_tracks_resolve(struct proto_context *ctx,
                                                struct proto_machine *machine,
                                                proto_track *track, tm_str_id event_name) {
  if (track->ref)
    return track->ref;
  return proto_tracks_resolve_slow_(ctx, machine, track, event_name);
}

/* The track of a uuid events use but no descriptor describes: a global
 * (counter) track, remembered as PROTO_TRACK_UNDESCRIBED; resolved by the
 * event that uses it. */
proto_track *proto_tracks_undescribed(struct proto_context *ctx,
                                      struct proto_machine *machine, uint64_t uuid,
                                      bool is_counter);
/* A host track by description, on `machine`. */
tm_track_ref proto_tracks_intern(struct proto_context *ctx, struct proto_machine *machine,
                                 const tm_track_desc *desc);
/* The implicit uuid-0 track, "Default Track": a slot of merged global
 * tracks, as trace_processor makes it. */
tm_track_ref proto_tracks_default_track(struct proto_context *ctx,
                                        struct proto_machine *machine);

#endif /* TM_PROTO_TRACKS_H */
