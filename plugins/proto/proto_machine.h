/*
 * What the proto reader knows per machine of a file (packet machine_id; 0
 * is the file's default machine): its identity on the host, its clocks and
 * its track uuids. These are plain tables: proto_clock.c and
 * proto_tracks.c give them their meaning, the context (proto_context.h)
 * owns the machines.
 *
 * Invariants: a clock is keyed by (sequence_id, clock_id), sequence_id 0
 * unless the clock is sequence-scoped (64..127); a track by its uuid; both
 * tables belong to one machine of one file.
 */
#ifndef TM_PROTO_MACHINE_H
#define TM_PROTO_MACHINE_H

#include <stdbool.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "proto_map.h"
#include "proto_vec.h"

typedef struct proto_clock {
  uint32_t clock_id;
  uint32_t sequence_id; /* 0 unless 64..127 */
  tm_clock_ref ref;
  int64_t unit_ns; /* 1 until a snapshot says otherwise */
  bool registered; /* unit and incremental fixed by a snapshot */
  bool incremental;
  int64_t running_ns; /* incremental clocks: the last absolute value */
} proto_clock;

typedef struct proto_clock_table {
  proto_map index; /* sequence_id << 32 | clock_id -> items index */
  TM_VEC(proto_clock) items;
  /* The last clock found, by key: packets keep using the same clock. */
  uint64_t last_key;
  uint32_t last_index_plus_one; /* 0: none */
} proto_clock_table;

typedef enum proto_track_kind {
  PROTO_TRACK_CUSTOM = 0,
  PROTO_TRACK_PROCESS,
  PROTO_TRACK_THREAD,
  PROTO_TRACK_UNDESCRIBED, /* used by events, never described */
} proto_track_kind;

typedef struct proto_track {
  uint64_t uuid;
  uint64_t parent_uuid; /* 0: none */
  uint8_t kind;         /* proto_track_kind */
  bool is_counter;
  bool disallow_merging;
  tm_str_id name;
  tm_str_id description;
  tm_process_ref process; /* PROCESS: the process; THREAD: its process */
  tm_thread_ref thread;   /* THREAD */
  /* Counter tracks. */
  tm_str_id unit;
  tm_str_id categories;
  int64_t unit_multiplier; /* 1 unless the descriptor says otherwise */
  bool incremental;
  bool is_thread_time; /* COUNTER_THREAD_TIME_NS: also slices' thread_ts */
  tm_str_id y_axis_share_key;
  /* UI hints, kept as the track's source args. */
  int32_t child_ordering;
  bool has_sibling_order_rank;
  int32_t sibling_order_rank;
  /* How the track merges with its siblings (docs/formats.md §1.9):
   * 0 by name, else NONE or BY_SIBLING_MERGE_KEY (the proto's values);
   * the key only with BY_SIBLING_MERGE_KEY. */
  int32_t sibling_merge_behavior;
  tm_str_id sibling_merge_key;
  /* Resolution. */
  tm_track_ref ref;           /* host track, 0 until first used */
  tm_thread_ref scope_thread; /* thread/process the track is scoped to */
  tm_process_ref scope_process;
  bool resolving; /* cycle guard for parent chains */
} proto_track;

typedef struct proto_track_table {
  proto_map index; /* uuid -> items index */
  TM_VEC(proto_track) items;
} proto_track_table;

typedef struct proto_machine {
  uint32_t raw_id; /* 0: the file's default machine */
  uint32_t index;  /* in the context's machine table */
  tm_machine_ref ref;
  proto_clock_table clocks;
  proto_track_table tracks;
  tm_track_ref default_track; /* "Default Track", 0 until used */
  /* ChromeEventBundles with metadata read so far (proto_service.c names
   * the second one's keys cr-2-<name>, ...). */
  uint32_t chrome_metadata_bundles;
} proto_machine;

/* Frees the machine's tables and the machine. */
void proto_machine_free(proto_machine *machine);

#endif /* TM_PROTO_MACHINE_H */
