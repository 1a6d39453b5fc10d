#include "model/thread_times.h"

#include <string.h>

/* The two marks of the 32-bit thread_dur column. NULL is TM_NULL_INT64
 * (model.h), INT64_MIN; a duration equal to either mark's value is wide. */
#define DUR_NULL INT32_MIN
#define DUR_WIDE (INT32_MIN + 1)

static int32_t narrow_dur(int64_t thread_dur) {
  if (thread_dur == INT64_MIN)
    return DUR_NULL;
  if (thread_dur > DUR_WIDE && thread_dur <= INT32_MAX)
    return (int32_t)thread_dur;
  return DUR_WIDE;
}

/* The entry index of slice `slice_id`: the entries before it. */
static size_t rank_of(const tm_thread_times *times, uint32_t slice_id) {
  size_t word = slice_id / 64;
  uint64_t below = times->has.data[word] & ((UINT64_C(1) << (slice_id % 64)) - 1);
  return times->rank.data[word] + (size_t)__builtin_popcountll(below);
}

static bool has_entry(const tm_thread_times *times, uint32_t slice_id) {
  size_t word = slice_id / 64;
  return word < times->has.len && (times->has.data[word] >> (slice_id % 64)) & 1;
}

bool thread_times_get(const tm_thread_times *times, uint32_t slice_id,
                      int64_t *thread_ts, int64_t *thread_dur) {
  if (!has_entry(times, slice_id))
    return false;
  size_t at = rank_of(times, slice_id);
  *thread_ts = times->ts.data[at];
  int32_t dur = times->dur.data[at];
  if (dur == DUR_NULL)
    *thread_dur = INT64_MIN;
  else if (dur == DUR_WIDE)
    *thread_dur = *(const int64_t *)g_hash_table_lookup(times->wide_dur,
                                                        GUINT_TO_POINTER(slice_id));
  else
    *thread_dur = dur;
  return true;
}

static void store_dur(tm_thread_times *times, size_t at, uint32_t slice_id,
                      int64_t thread_dur) {
  int32_t dur = narrow_dur(thread_dur);
  if (dur == DUR_WIDE) {
    if (!times->wide_dur)
      times->wide_dur = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    g_hash_table_replace(times->wide_dur, GUINT_TO_POINTER(slice_id),
                         g_memdup2(&thread_dur, sizeof thread_dur));
  } else if (times->dur.data[at] == DUR_WIDE) {
    /* Replaced by a duration that fits: the wide one goes. */
    g_hash_table_remove(times->wide_dur, GUINT_TO_POINTER(slice_id));
  }
  times->dur.data[at] = dur;
}

void thread_times_set(tm_thread_times *times, uint32_t slice_id,
                      int64_t thread_ts, int64_t thread_dur) {
  size_t word = slice_id / 64;
  unsigned bit = slice_id % 64;
  size_t count = thread_times_count(times);
  /* Words up to the slice's: the new ones have every entry before them. */
  if (word >= times->has.len) {
    tm_vec_reserve(&times->has, word + 1);
    tm_vec_reserve(&times->rank, word + 1);
    while (times->has.len <= word) {
      times->has.data[times->has.len++] = 0;
      times->rank.data[times->rank.len++] = (uint32_t)count;
    }
  }
  size_t at;
  if (word + 1 == times->has.len && (times->has.data[word] >> bit) == 0) {
    /* The model builder's case: no entry at or after this slice, so it
     * goes last (no count of the bits below). */
    at = count;
  } else if ((times->has.data[word] >> bit) & 1) {
    at = rank_of(times, slice_id);
    times->ts.data[at] = thread_ts;
    store_dur(times, at, slice_id, thread_dur);
    return;
  } else {
    at = rank_of(times, slice_id);
  }
  if (count == times->ts.cap || count == times->dur.cap) {
    tm_vec_reserve(&times->ts, count + 1);
    tm_vec_reserve(&times->dur, count + 1);
  }
  if (at < count) {
    /* An older slice: the later entries move up one, and the words after
     * this one count one more entry before them. */
    memmove(&times->ts.data[at + 1], &times->ts.data[at],
            (count - at) * sizeof *times->ts.data);
    memmove(&times->dur.data[at + 1], &times->dur.data[at],
            (count - at) * sizeof *times->dur.data);
    for (size_t w = word + 1; w < times->has.len; w++)
      times->rank.data[w]++;
  }
  times->has.data[word] |= UINT64_C(1) << bit;
  times->ts.len = times->dur.len = count + 1;
  times->ts.data[at] = thread_ts;
  times->dur.data[at] = DUR_NULL; /* not a wide one to remove */
  store_dur(times, at, slice_id, thread_dur);
}

size_t thread_times_memory(const tm_thread_times *times) {
  return times->has.cap * sizeof *times->has.data +
         times->rank.cap * sizeof *times->rank.data +
         times->ts.cap * sizeof *times->ts.data +
         times->dur.cap * sizeof *times->dur.data;
}

void thread_times_free(tm_thread_times *times) {
  tm_vec_free(&times->has);
  tm_vec_free(&times->rank);
  tm_vec_free(&times->ts);
  tm_vec_free(&times->dur);
  if (times->wide_dur)
    g_hash_table_destroy(times->wide_dur);
  times->wide_dur = NULL;
}
