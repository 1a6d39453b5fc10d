/* What the host keeps per trace file, checked where it would grow back: an
 * archive of many tiny members (issue 11: 100k one-event members cost
 * 11.5 KB each, 19.5 KB each by the time it was measured again) pays it
 * once per member.
 *
 * Measured with `/usr/bin/time -f %M` (peak RSS) on `tracemerge query -Q
 * "select count(*) from stats"` over ZIPs of 10,000 and 20,000 one-event
 * JSON members, divided by the 10,000 members between them: 19.4 KB per
 * member before, 7.5 KB after. massif placed the cost: ~150 zero stats
 * rows per (file, machine) with a hash entry and a key each (~125 bytes a
 * row, now 40), a 64-event first block per event run (2.5 KB, now 4
 * events), a 16-element first block per vector (a file's clock
 * placements: 512 bytes, now 4 elements).
 *
 * The checks are on what is kept, not on bytes or time: counts that do
 * not depend on the allocator, the machine or its load. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include <stdio.h>
#include <stdlib.h>

#include <tracemerge/tracemerge.h>

#include "base/vec.h"
#include "container_fixture.h"
#include "model/model.h"
#include "model/stats.h"
#include "session_query.h"
#include "sort/sorter.h"

/* --- stats ------------------------------------------------------------------ */

/* A stat every file has a zero row of (core/base/stats.c, scope MT). */
#define CONTEXT_STAT "clock_sync_failure_no_path"

typedef struct stats_fixture {
  tm_model *model;
  tm_stats *stats;
} stats_fixture;

static void stats_set_up(stats_fixture *f, gconstpointer data) {
  (void)data;
  f->model = model_new();
  f->stats = stats_new(f->model);
}

static void stats_tear_down(stats_fixture *f, gconstpointer data) {
  (void)data;
  stats_free(f->stats);
  model_free(f->model);
}

/* The rows of (name, machine, trace), counted in the model. */
static size_t rows_of(const stats_fixture *f, const char *name, uint32_t machine_id,
                      uint32_t trace_id) {
  size_t n = 0;
  for (size_t i = 0; i < f->model->stats.len; i++) {
    const tm_stats_row *row = &f->model->stats.data[i];
    if (row->machine_id == machine_id && row->trace_id == trace_id &&
        strcmp(string_pool_borrow(f->model->strings, row->name), name) == 0)
      n++;
  }
  return n;
}

/* Opening 1000 contexts adds their zero rows (as many per context as the
 * first one added) and not one entry to the index; counting on a
 * context's row finds that row, and only it. */
static void test_zero_rows_of_a_context_take_no_index_entry(stats_fixture *f,
                                                            gconstpointer data) {
  (void)data;
  size_t rows_before = f->model->stats.len;
  size_t index_before = stats_index_rows(f->stats);
  stats_open_context(f->stats, 0, 0);
  size_t per_context = f->model->stats.len - rows_before;
  g_assert_cmpuint(per_context, >, 0);
  for (uint32_t trace = 1; trace < 1000; trace++)
    stats_open_context(f->stats, trace % 3, trace);
  g_assert_cmpuint(f->model->stats.len, ==, rows_before + 1000 * per_context);
  g_assert_cmpuint(stats_index_rows(f->stats), ==, index_before);

  stats_add(f->stats, CONTEXT_STAT, TM_NULL_INT64, 2, 500, 7);
  g_assert_cmpint(stats_get(f->stats, CONTEXT_STAT, TM_NULL_INT64, 2, 500), ==, 7);
  g_assert_cmpint(stats_get(f->stats, CONTEXT_STAT, TM_NULL_INT64, 1, 499), ==, 0);
  g_assert_cmpuint(rows_of(f, CONTEXT_STAT, 2, 500), ==, 1);
  int64_t total = 0;
  for (size_t i = 0; i < f->model->stats.len; i++)
    total += f->model->stats.data[i].value;
  g_assert_cmpint(total, ==, 7);
  /* Opening a context again adds nothing. */
  stats_open_context(f->stats, 2, 500);
  g_assert_cmpuint(f->model->stats.len, ==, rows_before + 1000 * per_context);
  g_assert_cmpint(stats_get(f->stats, CONTEXT_STAT, TM_NULL_INT64, 2, 500), ==, 7);
}

/* A stat counted before its context opened (readers may count before the
 * session opens a file's context, e.g. a machine found late) keeps its
 * one row and its count; the context still gets every other zero row. */
static void test_a_stat_counted_before_its_context_opened_keeps_one_row(
    stats_fixture *f, gconstpointer data) {
  (void)data;
  stats_open_context(f->stats, 0, 0); /* fixes the context stats */
  size_t rows_before = f->model->stats.len;
  stats_open_context(f->stats, 0, 1);
  size_t per_context = f->model->stats.len - rows_before;

  stats_add(f->stats, CONTEXT_STAT, TM_NULL_INT64, 4, 9, 3);
  rows_before = f->model->stats.len;
  stats_open_context(f->stats, 4, 9);
  g_assert_cmpuint(f->model->stats.len - rows_before, ==, per_context - 1);
  g_assert_cmpuint(rows_of(f, CONTEXT_STAT, 4, 9), ==, 1);
  g_assert_cmpint(stats_get(f->stats, CONTEXT_STAT, TM_NULL_INT64, 4, 9), ==, 3);
  stats_add(f->stats, CONTEXT_STAT, TM_NULL_INT64, 4, 9, 1);
  g_assert_cmpint(stats_get(f->stats, CONTEXT_STAT, TM_NULL_INT64, 4, 9), ==, 4);
  g_assert_cmpuint(rows_of(f, CONTEXT_STAT, 4, 9), ==, 1);
}

/* The same before any context opened at all (nothing fixed yet). */
static void test_a_stat_counted_before_any_context_keeps_one_row(stats_fixture *f,
                                                                 gconstpointer data) {
  (void)data;
  stats_add(f->stats, CONTEXT_STAT, TM_NULL_INT64, 1, 2, 5);
  stats_open_context(f->stats, 1, 2);
  g_assert_cmpuint(rows_of(f, CONTEXT_STAT, 1, 2), ==, 1);
  g_assert_cmpint(stats_get(f->stats, CONTEXT_STAT, TM_NULL_INT64, 1, 2), ==, 5);
}

static const tm_stat_info late_stat = {
    "late_reader_stat", "error", "trace", TM_STAT_MACHINE_AND_TRACE,
    "A stat a reader declared after the first file opened."};

/* A stat declared once contexts exist is not in their blocks: later
 * contexts get its zero row all the same, each once. */
static void test_a_stat_declared_late_gets_a_row_in_later_contexts(stats_fixture *f,
                                                                   gconstpointer data) {
  (void)data;
  stats_open_context(f->stats, 0, 0);
  stats_declare(f->stats, &late_stat);
  stats_open_context(f->stats, 0, 1);
  stats_open_context(f->stats, 0, 1);
  g_assert_cmpuint(rows_of(f, late_stat.name, 0, 0), ==, 0);
  g_assert_cmpuint(rows_of(f, late_stat.name, 0, 1), ==, 1);
  stats_add(f->stats, late_stat.name, TM_NULL_INT64, 0, 1, 2);
  g_assert_cmpint(stats_get(f->stats, late_stat.name, TM_NULL_INT64, 0, 1), ==, 2);
  g_assert_cmpuint(rows_of(f, late_stat.name, 0, 1), ==, 1);
}

/* --- sorter and vectors ------------------------------------------------------ */

/* A file of one event keeps its run until the merge: the run's block holds
 * 4 events (160 bytes), not 64 (2.5 KB). */
static void test_a_run_of_one_event_holds_at_most_four(void) {
  tm_sorter *sorter = sorter_new();
  tm_event_run *run = sorter_run(sorter, 1, 0, 0);
  tm_event ev = {.ts = 1, .kind = TM_EVENT_SLICE_COMPLETE};
  event_run_push(run, &ev);
  g_assert_cmpuint(run->len, ==, 1);
  g_assert_cmpuint(run->cap, <=, 4);
  sorter_free(sorter);
}

static void test_a_vector_of_one_element_holds_at_most_four(void) {
  TM_VEC(uint64_t) v = {0};
  tm_vec_push(&v, 1);
  g_assert_cmpuint(v.cap, <=, 4);
  tm_vec_free(&v);
}

/* --- a whole import ---------------------------------------------------------- */

/* The one integer a query answers. */
static int64_t query_int(tm_session *session, const char *sql) {
  char *text = session_query_csv(session, sql);
  /* CSV: the header line, then the value. */
  const char *value = strchr(text, '\n');
  g_assert_nonnull(value);
  int64_t n = g_ascii_strtoll(value + 1, NULL, 10);
  free(text);
  return n;
}

/* Imports a ZIP of `n` members, each one complete event of Chrome JSON,
 * and returns how many stats rows the session keeps. */
static int64_t stats_rows_of_tiny_members(const char *dir, size_t n) {
  fixture_member *members = g_new0(fixture_member, n);
  GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
  for (size_t i = 0; i < n; i++) {
    char *name = g_strdup_printf("m%04zu.json", i);
    char *json = g_strdup_printf(
        "[{\"name\":\"e\",\"ph\":\"X\",\"ts\":%zu,\"dur\":1,\"pid\":1,\"tid\":1}]", i);
    g_ptr_array_add(owned, name);
    members[i].name = name;
    members[i].data = g_bytes_new_take(json, strlen(json));
  }
  GBytes *zip = zip_of(members, n);
  char *path = g_strdup_printf("%s/tiny%zu.zip", dir, n);
  g_assert_true(g_file_set_contents(path, g_bytes_get_data(zip, NULL),
                                    (gssize)g_bytes_get_size(zip), NULL));

  tm_session *session = tm_session_new(NULL);
  GError *error = NULL;
  const char *paths[] = {path};
  g_assert_true(tm_session_import(session, paths, 1, &error));
  g_assert_no_error(error);
  g_assert_cmpint(query_int(session, "SELECT count(*) FROM slice"), ==, (int64_t)n);
  int64_t rows = query_int(session, "SELECT count(*) FROM stats");
  tm_session_free(session);

  g_unlink(path);
  g_free(path);
  g_bytes_unref(zip);
  for (size_t i = 0; i < n; i++)
    g_bytes_unref(members[i].data);
  g_free(members);
  g_ptr_array_free(owned, TRUE);
  return rows;
}

/* 1, 2 and 64 members: each member adds the same number of stats rows
 * (its zero rows: the second member's count), so what a member keeps in
 * the model does not grow with the archive. The memory of those rows is
 * checked above (no index entry per context). */
static void test_tiny_archive_members_keep_a_fixed_number_of_stats_rows(void) {
  char *dir = g_dir_make_tmp("tm-member-state-XXXXXX", NULL);
  g_assert_nonnull(dir);
  int64_t one = stats_rows_of_tiny_members(dir, 1);
  int64_t two = stats_rows_of_tiny_members(dir, 2);
  int64_t many = stats_rows_of_tiny_members(dir, 64);
  int64_t per_member = two - one;
  g_assert_cmpint(per_member, >, 0);
  g_assert_cmpint(many, ==, one + 63 * per_member);
  g_rmdir(dir);
  g_free(dir);
}

#define ADD_STATS(path, fn)                                                    \
  g_test_add(path, stats_fixture, NULL, stats_set_up, fn, stats_tear_down)

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  ADD_STATS("/member-state/stats/zero-rows-of-a-context-take-no-index-entry",
            test_zero_rows_of_a_context_take_no_index_entry);
  ADD_STATS("/member-state/stats/a-stat-counted-before-its-context-opened-keeps-one-row",
            test_a_stat_counted_before_its_context_opened_keeps_one_row);
  ADD_STATS("/member-state/stats/a-stat-counted-before-any-context-keeps-one-row",
            test_a_stat_counted_before_any_context_keeps_one_row);
  ADD_STATS("/member-state/stats/a-stat-declared-late-gets-a-row-in-later-contexts",
            test_a_stat_declared_late_gets_a_row_in_later_contexts);
  g_test_add_func("/member-state/sorter/a-run-of-one-event-holds-at-most-four",
                  test_a_run_of_one_event_holds_at_most_four);
  g_test_add_func("/member-state/vec/a-vector-of-one-element-holds-at-most-four",
                  test_a_vector_of_one_element_holds_at_most_four);
  g_test_add_func("/member-state/archive/tiny-members-keep-a-fixed-number-of-stats-rows",
                  test_tiny_archive_members_keep_a_fixed_number_of_stats_rows);
  return g_test_run();
}
