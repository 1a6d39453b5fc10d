/*
 * The sorter: per-source runs of events, converted to trace time and
 * merged into one ordered stream.
 *
 * A run holds the events of one (file, machine, clock) source in emission
 * order. Invariants: runs are numbered in creation order; the merged stream
 * is ordered by (trace ts, run number, position in run), so events with
 * equal timestamps keep file order and emission order (a begin before its
 * end at the same ts). Runs that were emitted in ts order are merged as
 * they are; runs far out of order are merged by track or by their
 * ascending stretches without being sorted or copied; the others are
 * stable-sorted in place first.
 */
#ifndef TM_SORTER_H
#define TM_SORTER_H

#include <stdbool.h>
#include <stdint.h>

#include "clock/clock_graph.h"
#include "model/event.h"
#include "model/stats.h"

typedef struct tm_run_block tm_run_block;

typedef struct tm_event_run {
  tm_clock_node clock;
  uint32_t machine_id;
  uint32_t trace_id;
  /* Events [0, packed) are in `blocks` (a run that interleaves few tracks
   * packs each 2^16 events it is given, about 8 bytes an event instead of
   * 36, sorter.c "Packed blocks"); `events` holds [packed, len), room for
   * `cap`. Only the sorter reads a run's events (sorter_unpack first). */
  tm_event *events;
  size_t len;
  size_t cap;
  tm_run_block *blocks;
  size_t n_blocks;
  size_t packed;
  int64_t last_ts;
  int64_t min_ts; /* the smallest ts pushed, while len > 0 */
  size_t aside;   /* events below last_ts when they came (0 if sorted) */
  uint32_t max_track; /* at least the largest track_id held */
  uint32_t last_track; /* of the event pushed last */
  size_t track_changes; /* events pushed on another track than the one before */
  bool sorted; /* true while every ts >= the previous one */
  /* Events of this run a merge config's buffer held instead (pass 1):
   * with `len`, what the reader emitted on the run so far. */
  size_t buffered;
} tm_event_run;

typedef struct tm_sorter tm_sorter;

tm_sorter *sorter_new(void);
void sorter_free(tm_sorter *sorter);

/* Threads sorter_merge() may use to sort the runs it sorts before merging
 * them (1, the default: the calling thread alone; 2 or more: a second
 * thread sorts part of them). The merged stream is the same either way. */
void sorter_set_threads(tm_sorter *sorter, unsigned threads);

/* The run for (clock, machine, trace), created on first use. The pointer is
 * valid until sorter_merge() or sorter_free(). */
tm_event_run *sorter_run(tm_sorter *sorter, tm_clock_node clock,
                         uint32_t machine_id, uint32_t trace_id);

void event_run_grow_(tm_event_run *run);

static inline void event_run_push(tm_event_run *run, const tm_event *ev) {
  if (run->len - run->packed == run->cap)
    event_run_grow_(run);
  if (ev->track_id > run->max_track)
    run->max_track = ev->track_id;
  run->track_changes += ev->track_id != run->last_track;
  run->last_track = ev->track_id;
  if (ev->ts < run->last_ts) {
    run->sorted = false;
    run->aside++;
    if (ev->ts < run->min_ts)
      run->min_ts = ev->ts;
  } else {
    if (run->len == 0)
      run->min_ts = ev->ts; /* later ones at or above last_ts cannot be smaller */
    run->last_ts = ev->ts;
  }
  size_t at = run->len++ - run->packed; /* in `events`, after the packed ones */
  run->events[at] = *ev;
  tm_memory_populate_ahead(run->events, run->cap * sizeof *ev, (at + 1) * sizeof *ev,
                           sizeof *ev);
}

/* The runs in creation order, before sorter_merge(): the session walks them
 * to find which clocks each file's events use. */
size_t sorter_run_count(const tm_sorter *sorter);
const tm_event_run *sorter_borrow_run(const tm_sorter *sorter, size_t index);

/* Moves every run on a clock `c` < n_nodes with retarget[c] !=
 * TM_NO_CLOCK_NODE to clock retarget[c] (before sorter_convert()): for
 * nodes the clock graph merged into others. One pass over the runs however
 * many nodes moved. Two runs may then share a key; each is still converted
 * and merged on its own. */
void sorter_retarget_clocks(tm_sorter *sorter, const tm_clock_node *retarget,
                            size_t n_nodes);

/* Unpacks every packed run: each run's events are then `events[0, len)`,
 * for a caller that reads them (a merge config's window and triggers). */
void sorter_unpack(tm_sorter *sorter);

/* Total events held (for the benchmark and info). */
size_t sorter_event_count(const tm_sorter *sorter);

/* Converts every run to trace time through `graph`. Events that cannot be
 * converted are dropped and counted (clock_sync_failure_unknown_source_clock
 * / _no_path / _unknown_target_clock, per run's machine and trace; the
 * first ones with their clocks and raw time in the import log); events
 * at a negative trace time are dropped and counted
 * (trace_sorter_negative_timestamp_dropped). A run on TM_NO_CLOCK_NODE
 * holds raw values taken as trace time (docs/clock-model.md §7). Call once. */
void sorter_convert(tm_sorter *sorter, tm_clock_graph *graph, tm_stats *stats);

/* Sorts, in place, the runs sorter_merge() would sort before merging them
 * (it merges the others as they are), then renumbers the `n_extras`
 * entries of `extras` that the runs' events name (TM_EVENT_HAS_EXTRA) in
 * the order the runs will be read: run by run, each in its order, calling
 * `named` (if not NULL) with each such event once renumbered. The merge
 * then reads each run's extras front to back, so the model builder can
 * give them back as it passes them. Optional (sorter_merge() sorts what
 * is left); call after sorter_convert(). */
typedef void (*tm_sorter_named_fn)(void *ctx, const tm_event *ev);
void sorter_sort(tm_sorter *sorter, tm_event_extra *extras, size_t n_extras,
                 tm_sorter_named_fn named, void *ctx);

/* Sorts and k-way merges every run, calling `emit` once per event in merged
 * order, then releases the runs. */
typedef void (*tm_sorter_emit)(void *ctx, const tm_event *ev,
                               uint32_t machine_id, uint32_t trace_id);
void sorter_merge(tm_sorter *sorter, tm_sorter_emit emit, void *ctx);

/* How many windows the last sorter_merge() cut long runs merged by track
 * into (0: every run merged whole; see WINDOW_EVENTS in sorter.c). For
 * tests and the benchmark: the merged stream is the same either way. */
size_t sorter_merged_windows(const tm_sorter *sorter);

#endif /* TM_SORTER_H */
