/* Unit tests of the slices' thread-time storage (core/model/thread_times.h):
 * every value set reads back as it was given, whatever its width, the
 * slice ids' words, or the order the entries were set in. Each check
 * compares with a plain array of what was set (the reference). */
#include <glib.h>

#include "model/thread_times.h"

#define NULL_INT64 INT64_MIN /* TM_NULL_INT64 of model.h */

typedef struct reference_entry {
  bool set;
  int64_t ts, dur;
} reference_entry;

/* Every slice id below `n` reads back as `ref` says: no entry, or the
 * values set last. */
static void assert_matches(const tm_thread_times *times, const reference_entry *ref,
                           uint32_t n) {
  size_t count = 0;
  for (uint32_t id = 0; id < n; id++) {
    int64_t ts = 1, dur = 1;
    bool found = thread_times_get(times, id, &ts, &dur);
    g_assert_cmpint(found, ==, ref[id].set);
    if (!found)
      continue;
    count++;
    g_assert_cmpint(ts, ==, ref[id].ts);
    g_assert_cmpint(dur, ==, ref[id].dur);
  }
  g_assert_cmpuint(thread_times_count(times), ==, count);
}

/* Durations at and around the 32-bit column's edges and its two marks
 * (INT32_MIN, INT32_MIN + 1) read back whole; so do a missing thread_ts
 * or thread_dur (NULL) and the widest values. */
static void test_durations_that_do_not_fit_32_bits_read_back_whole(void) {
  const int64_t durs[] = {0, 1, -1, INT32_MAX, (int64_t)INT32_MAX + 1,
                          INT32_MIN, (int64_t)INT32_MIN + 1, (int64_t)INT32_MIN + 2,
                          (int64_t)INT32_MIN - 1, 5000000000, INT64_MAX,
                          INT64_MIN + 1, NULL_INT64};
  const size_t n_durs = G_N_ELEMENTS(durs);
  tm_thread_times times = {0};
  reference_entry ref[64] = {{0}};
  for (uint32_t i = 0; i < n_durs; i++) {
    uint32_t id = i * 3; /* gaps: ids without an entry between them */
    int64_t ts = i % 4 == 3 ? NULL_INT64 : (int64_t)i * 1000000007 - 5;
    thread_times_set(&times, id, ts, durs[i]);
    ref[id] = (reference_entry){true, ts, durs[i]};
  }
  assert_matches(&times, ref, 64);
  g_assert_nonnull(times.wide_dur);
  /* INT32_MAX + 1, INT32_MIN, INT32_MIN + 1, INT32_MIN - 1, 5e9,
   * INT64_MAX, INT64_MIN + 1: the ones outside (INT32_MIN + 1, INT32_MAX]. */
  g_assert_cmpuint(g_hash_table_size(times.wide_dur), ==, 7);
  thread_times_free(&times);
}

/* Replacing an entry moves its duration between the column and the side
 * table both ways; the side table keeps only what is still wide. */
static void test_replacing_a_wide_duration_with_a_narrow_one_and_back(void) {
  tm_thread_times times = {0};
  reference_entry ref[4] = {{0}};
  thread_times_set(&times, 2, 10, 6000000000);
  ref[2] = (reference_entry){true, 10, 6000000000};
  assert_matches(&times, ref, 4);
  g_assert_cmpuint(g_hash_table_size(times.wide_dur), ==, 1);
  thread_times_set(&times, 2, 11, 42);
  ref[2] = (reference_entry){true, 11, 42};
  assert_matches(&times, ref, 4);
  g_assert_cmpuint(g_hash_table_size(times.wide_dur), ==, 0);
  thread_times_set(&times, 2, 12, -7000000000);
  ref[2] = (reference_entry){true, 12, -7000000000};
  thread_times_set(&times, 1, NULL_INT64, NULL_INT64); /* older slice, both NULL */
  ref[1] = (reference_entry){true, NULL_INT64, NULL_INT64};
  assert_matches(&times, ref, 4);
  g_assert_cmpuint(g_hash_table_size(times.wide_dur), ==, 1);
  thread_times_free(&times);
}

/* Entries set in random slice order over many 64-slice words (older slices
 * after newer ones: the later entries move and the words after count one
 * more), with replacements and wide durations among them, read back as a
 * plain array of the last values set says. */
static void test_entries_set_in_any_order_across_words_read_back(void) {
  enum { N = 3000 };
  GRand *rand = g_rand_new_with_seed(7);
  tm_thread_times times = {0};
  reference_entry *ref = g_new0(reference_entry, N);
  for (int step = 0; step < 2000; step++) {
    uint32_t id = (uint32_t)g_rand_int_range(rand, 0, N);
    int64_t ts = g_rand_int_range(rand, 0, 4) == 0 ? NULL_INT64
                                                   : (int64_t)g_rand_int(rand) << 20;
    int64_t dur;
    switch (g_rand_int_range(rand, 0, 4)) {
    case 0: dur = NULL_INT64; break;
    case 1: dur = (int64_t)g_rand_int(rand) * 8; break; /* up to 2^35: often wide */
    default: dur = g_rand_int_range(rand, -1000, 1000000); break;
    }
    thread_times_set(&times, id, ts, dur);
    ref[id] = (reference_entry){true, ts, dur};
  }
  assert_matches(&times, ref, N);
  /* Ids past the last word have no entry. */
  int64_t ts, dur;
  g_assert_false(thread_times_get(&times, N + 64, &ts, &dur));
  g_assert_false(thread_times_get(&times, UINT32_MAX, &ts, &dur));
  thread_times_free(&times);
  g_free(ref);
  g_rand_free(rand);
}

/* The model builder's pattern: entries for ascending slice ids, some
 * slices without; an empty store has no entry and frees cleanly. */
static void test_appending_for_the_newest_slice_keeps_every_entry(void) {
  enum { N = 1000 };
  tm_thread_times times = {0};
  int64_t ts, dur;
  g_assert_false(thread_times_get(&times, 0, &ts, &dur));
  reference_entry ref[N] = {{0}};
  for (uint32_t id = 0; id < N; id++) {
    if (id % 5 == 1 || (id >= 128 && id < 320)) /* whole words without */
      continue;
    thread_times_set(&times, id, (int64_t)id * 10, (int64_t)id * 3);
    ref[id] = (reference_entry){true, (int64_t)id * 10, (int64_t)id * 3};
  }
  assert_matches(&times, ref, N);
  g_assert_null(times.wide_dur);
  g_assert_cmpuint(thread_times_memory(&times), >, 0);
  thread_times_free(&times);
  thread_times_free(&times); /* freeing twice is harmless: it is empty */
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/thread-times/durations-that-do-not-fit-32-bits-read-back-whole",
                  test_durations_that_do_not_fit_32_bits_read_back_whole);
  g_test_add_func("/thread-times/replacing-a-wide-duration-with-a-narrow-one-and-back",
                  test_replacing_a_wide_duration_with_a_narrow_one_and_back);
  g_test_add_func("/thread-times/entries-set-in-any-order-across-words-read-back",
                  test_entries_set_in_any_order_across_words_read_back);
  g_test_add_func("/thread-times/appending-for-the-newest-slice-keeps-every-entry",
                  test_appending_for_the_newest_slice_keeps_every_entry);
  return g_test_run();
}
