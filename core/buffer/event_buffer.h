/*
 * Event buffers: the memory budgets of a merge config's `buffers`, applied
 * while the readers emit (pass 1), so that an import of any size holds at
 * most the budget of each buffer in events.
 *
 * The events of a buffered file are held here instead of in the sorter's
 * runs, each with its own copy of its args and thread times, grouped by
 * the run (clock, machine, file) they belong to. Within a run, events are
 * ranked by (raw ts, emission order): a RING_BUFFER keeps the newest, a
 * DISCARD buffer the oldest. When holding another event would exceed the
 * budget, the buffer gives up the event that ranks last, its own or the
 * incoming one: for RING_BUFFER the oldest, for DISCARD the newest.
 * Raw times of different runs are on different clocks and cannot be
 * compared before pass 2, so between runs the buffer compares how far an
 * event lies from its own run's end (RING_BUFFER: newest ts seen minus
 * its ts) or start (DISCARD: its ts minus the oldest ts seen), and gives
 * up the one farthest away: sources that end (or start) together keep
 * the same span of time.
 *
 * Invariants:
 * - the bytes charged to a buffer (record arrays by capacity, payloads by
 *   allocation) never exceed its size after a push returns;
 * - within a run, what a RING_BUFFER holds is exactly the events ranked
 *   above every event it gave up (an event ranking at or below the newest
 *   one given up is refused when it comes), and symmetrically for
 *   DISCARD; so the kept events are the newest (oldest) of the run, with
 *   no gap;
 * - every event pushed is either held, given up (counted in `dropped`) or
 *   cut (after a cutoff, counted in `cut`).
 *
 * Arg sets of buffered files are staged here (event_buffers_stage_args)
 * rather than written to the model, and copied into the events that use
 * them, so that an event given up takes its args with it.
 */
#ifndef TM_EVENT_BUFFER_H
#define TM_EVENT_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

#include "model/event.h"

/* A staged arg set's ref has this bit set; model arg set ids never do. */
#define EVENT_BUFFER_STAGED_ARGS 0x80000000u

typedef struct tm_buffer_arg {
  tm_str_id key;
  tm_arg_value value;
} tm_buffer_arg;

typedef struct tm_buffer_spec {
  uint64_t size_bytes;
  bool discard; /* DISCARD; else RING_BUFFER */
} tm_buffer_spec;

typedef struct tm_buffer_stats {
  uint64_t size_bytes;
  bool discard;
  uint64_t written;    /* events pushed */
  uint64_t dropped;    /* given up for the budget */
  uint64_t cut;        /* refused after their run's cutoff */
  uint64_t held;       /* held now */
  uint64_t peak_bytes; /* the most bytes charged at once */
} tm_buffer_stats;

typedef struct tm_event_buffers tm_event_buffers;

tm_event_buffers *event_buffers_new(const tm_buffer_spec *specs, size_t n);
void event_buffers_free(tm_event_buffers *buffers);

/* Stages one arg set for events of `owner` (a file id); returns its ref
 * (EVENT_BUFFER_STAGED_ARGS set). The pairs are copied. */
uint32_t event_buffers_stage_args(tm_event_buffers *buffers, uint32_t owner,
                                  const tm_buffer_arg *args, size_t n);
/* After each reader callback of `owner`: frees the staged sets some event
 * used (a reader uses a set for the events of the callback that committed
 * it); with `all` (the file ended), every set of `owner`. */
void event_buffers_release_staged(tm_event_buffers *buffers, uint32_t owner, bool all);

/* Offers `ev` to buffer `buffer` as an event of run `run` (an opaque key:
 * the sorter run it will join). Its arg_set_id, for the kinds that carry
 * args (slices, counters, flows, ftrace events, logs), is 0 or a staged ref; the thread times
 * are TM_UNKNOWN_TIME when unknown. Returns true if it is held. */
bool event_buffers_push(tm_event_buffers *buffers, uint32_t buffer, void *run,
                        const tm_event *ev, int64_t thread_ts, int64_t thread_dur);

/* From now on, events of `run` with ts > `ts` are refused (counted in
 * `cut`); a later call can only lower the cutoff. */
void event_buffers_set_cutoff(tm_event_buffers *buffers, void *run, int64_t ts);

/* Hands every held event to `fn`, run by run in the order runs were first
 * pushed to, each run's in emission order, with its args (NULL if none)
 * and thread times; then holds nothing. ev->arg_set_id is 0 when `args`
 * carry the event's args. */
typedef void (*tm_buffer_drain_fn)(void *ctx, void *run, const tm_event *ev, int64_t thread_ts,
                                   int64_t thread_dur, const tm_buffer_arg *args, size_t n_args);
void event_buffers_drain(tm_event_buffers *buffers, tm_buffer_drain_fn fn, void *ctx);

/* Calls `fn` for every run ever pushed to (also after the drain) with
 * the smallest and largest ts it was offered (cut events aside), whether
 * held, given up or not: where the run's events were before any was
 * given up. */
typedef void (*tm_buffer_run_fn)(void *ctx, void *run, int64_t min_ts, int64_t max_ts);
void event_buffers_foreach_run(const tm_event_buffers *buffers, tm_buffer_run_fn fn, void *ctx);

size_t event_buffers_count(const tm_event_buffers *buffers);
void event_buffers_stats(const tm_event_buffers *buffers, size_t index, tm_buffer_stats *out);
/* Events whose staged args a reader used after their release (the reader
 * kept an args ref past the callback that used it): held without args. */
uint64_t event_buffers_args_lost(const tm_event_buffers *buffers);

/* The bytes one held event costs without args or thread times, for tests
 * and documentation. */
size_t event_buffers_record_bytes(void);

#endif /* TM_EVENT_BUFFER_H */
