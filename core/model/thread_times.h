/*
 * The thread time (thread_ts, thread_dur) of the slices that have one.
 *
 * Few slices carry thread time, but a realistic Chrome JSON trace has it on
 * ~44% of them, so its storage is a share of the import's peak memory. An
 * entry costs 12 bytes, in columns: a bit per slice says whether the slice
 * has an entry, a count per 64 slices locates the entry (rank: the entries
 * before that word plus the bits below the slice's in it), thread_ts is
 * stored whole (it counts from its own origin, not the slice's ts), and
 * thread_dur in 32 bits: a duration that does not fit (above ~2.1 s, or
 * negative below -2.1 s) goes to a side table of wide durations by slice id.
 * Looking an entry up is O(1); appending one for the newest slice, as the
 * model builder does, is O(1) amortised; setting one for an older slice
 * that has none moves the later entries (tests and rare callers only).
 *
 * Ownership: a tm_thread_times is a value inside the model (zeroed = empty),
 * its blocks owned by it and released by thread_times_free().
 */
#ifndef TM_THREAD_TIMES_H
#define TM_THREAD_TIMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "base/vec.h"

typedef struct tm_thread_times {
  TM_VEC(uint64_t) has;  /* bit (id % 64) of word id / 64: slice id has one */
  TM_VEC(uint32_t) rank; /* per word of `has`: entries of the words before */
  TM_VEC(int64_t) ts;    /* per entry, in slice id order; TM_NULL_INT64 */
  TM_VEC(int32_t) dur;   /* per entry: the value, or one of the two marks */
  GHashTable *wide_dur;  /* slice id -> int64_t* thread_dur, owned; NULL if none */
} tm_thread_times;

/* The entries held: the length of each per-entry column. */
static inline size_t thread_times_count(const tm_thread_times *times) { return times->ts.len; }

/* Whether slice `slice_id` has an entry; if so, its thread_ts and
 * thread_dur (either may be TM_NULL_INT64) are stored through the
 * pointers. */
bool thread_times_get(const tm_thread_times *times, uint32_t slice_id,
                      int64_t *thread_ts, int64_t *thread_dur);

/* Sets (adds or replaces) the entry of slice `slice_id`. */
void thread_times_set(tm_thread_times *times, uint32_t slice_id,
                      int64_t thread_ts, int64_t thread_dur);

/* Bytes held (capacities), for the performance notes and tests. */
size_t thread_times_memory(const tm_thread_times *times);

void thread_times_free(tm_thread_times *times);

#endif /* TM_THREAD_TIMES_H */
