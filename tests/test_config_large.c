/*
 * A RING_BUFFER of 1 MiB over a 200 MiB input, end to end: the import
 * keeps exactly the newest events, counts every other one in stats, and
 * its peak memory does not grow with the input.
 *
 * The input is written at test time into the build directory by
 * tools/gen_proto_trace (TrackEvent begin/end packets round-robin over 64
 * sequences, each packet one event, BOOTTIME being trace time, so raw
 * timestamps are the tables' ts). It is in the suite "large", which
 * every `meson test` runs; `--no-suite large` leaves it out.
 *
 * How the expectations are derived:
 * - K, the events kept, is written minus overwritten (stats); the test
 *   does not assume what an event costs in the buffer.
 * - The K newest events are found here by walking the file: the K largest
 *   (timestamp, position in the file), the order the buffer ranks events
 *   of one run by. Of those, the begins are the slices (count and sum of
 *   ts must match), and each end either closes a kept begin (a slice with
 *   dur >= 0) or finds none (misplaced_end_event).
 * - Peak RSS (the child's ru_maxrss) is compared with that of the same
 *   command over a 5 MB input generated the same way, which fills the
 *   buffer too: everything but the input's size is the same, so the
 *   difference must stay within a fixed allowance. ASan's quarantine of
 *   freed memory would grow with the input, so the children run with a
 *   small one.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "proto_wire_decode.h"

extern char **environ;

enum {
  BIG_EVENTS = 8450000,  /* ~24.9 bytes each: > 200 MiB */
  SMALL_EVENTS = 200000, /* ~5 MB, still many times what 1 MiB holds */
};

/* What the large input may add to peak RSS beyond the small one's: the
 * buffer is the same, so only fixed-size things (read chunks, allocator
 * slack) can differ. */
#define RSS_ALLOWANCE_KB (8 * 1024)

static const char ring_config[] = "buffers { size_kb: 1024 fill_policy: RING_BUFFER }\n";

static const char query_sql[] =
    "SELECT (SELECT value FROM stats WHERE name = 'merge_buf_events_written' AND idx = 0),"
    " (SELECT value FROM stats WHERE name = 'merge_buf_events_overwritten' AND idx = 0),"
    " (SELECT value FROM stats WHERE name = 'merge_buf_bytes_peak' AND idx = 0),"
    " count(*), coalesce(sum(ts), 0), (SELECT count(*) FROM slice WHERE dur >= 0),"
    " (SELECT coalesce(sum(value), 0) FROM stats WHERE name = 'misplaced_end_event')"
    " FROM slice";

typedef struct run_result {
  long max_rss_kb;
  char *out;
} run_result;

/* Runs argv with stdout and stderr into files beside `out_path`, and an
 * ASan quarantine small enough not to grow with what the import frees. */
static run_result run_child(char *const *argv, const char *out_path) {
  g_autofree char *err_path = g_strconcat(out_path, ".err", NULL);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  g_auto(GStrv) env = g_get_environ();
  const char *asan = g_environ_getenv(env, "ASAN_OPTIONS");
  g_autofree char *small_quarantine = g_strdup_printf(
      "%s%squarantine_size_mb=1:thread_local_quarantine_size_kb=64", asan ? asan : "",
      asan ? ":" : "");
  env = g_environ_setenv(env, "ASAN_OPTIONS", small_quarantine, TRUE);
  pid_t pid;
  int spawned = posix_spawn(&pid, argv[0], &actions, NULL, argv, env);
  posix_spawn_file_actions_destroy(&actions);
  g_assert_cmpint(spawned, ==, 0);
  int status = 0;
  struct rusage usage;
  g_assert_cmpint(wait4(pid, &status, 0, &usage), ==, pid);
  run_result result = {usage.ru_maxrss, NULL};
  g_autofree char *err = NULL;
  g_file_get_contents(err_path, &err, NULL, NULL);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || (err && *err))
    g_error("%s failed (status %d): %s", argv[0], status, err ? err : "");
  g_assert_true(g_file_get_contents(out_path, &result.out, NULL, NULL));
  g_unlink(err_path);
  return result;
}

static void generate(const char *path, long events) {
  g_autofree char *n = g_strdup_printf("%ld", events);
  g_autofree char *out = g_strconcat(path, ".gen", NULL);
  char *argv[] = {(char *)g_getenv("TM_GEN_PROTO_TRACE"), "-n", n, "-o", (char *)path, NULL};
  g_assert_nonnull(argv[0]);
  run_result r = run_child(argv, out);
  g_free(r.out);
  g_unlink(out);
}

static run_result import_with_ring(const char *input, const char *config, const char *out) {
  char *argv[] = {(char *)g_getenv("TRACEMERGE_CLI"), "query", (char *)input, "--config",
                  (char *)config, "--sql", (char *)query_sql, NULL};
  g_assert_nonnull(argv[0]);
  return run_child(argv, out);
}

/* --- the K newest events of the file ---------------------------------- */

typedef struct key {
  uint64_t ts;
  uint64_t position;
  bool begin;
} key;

static bool key_less(const key *a, const key *b) {
  return a->ts < b->ts || (a->ts == b->ts && a->position < b->position);
}

/* A min-heap of the K largest keys seen. */
typedef struct top_k {
  key *heap;
  size_t len, k;
} top_k;

static void top_k_offer(top_k *t, key v) {
  size_t i;
  if (t->len < t->k) {
    i = t->len++;
    while (i > 0 && key_less(&v, &t->heap[(i - 1) / 2])) {
      t->heap[i] = t->heap[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    t->heap[i] = v;
    return;
  }
  if (!key_less(&t->heap[0], &v))
    return;
  i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= t->len)
      break;
    if (c + 1 < t->len && key_less(&t->heap[c + 1], &t->heap[c]))
      c++;
    if (!key_less(&t->heap[c], &v))
      break;
    t->heap[i] = t->heap[c];
    i = c;
  }
  t->heap[i] = v;
}

/* The walk reads fields with the proto reader's own cursor
 * (plugins/proto/proto_wire_decode.h), as the record tests do; the
 * generated trace must be well-formed protobuf throughout. */
static void assert_walked_whole(const pw_cursor *c, const char *msg) {
  if (c->error != PW_OK)
    g_error("%s at byte %zu: %s", msg, (size_t)(c->p - c->start), pw_error_message(c->error));
}

typedef struct trace_walk {
  top_k *top;
  uint64_t events;
} trace_walk;

/* Offers the event of one TracePacket (if it holds one) to the top K. */
static void walk_packet(trace_walk *w, const uint8_t *data, size_t len) {
  bool has_ts = false, is_event = false, begin = false;
  uint64_t ts = 0;
  pw_cursor packet = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&packet, &f)) {
    if (f.number == 8 && f.wire_type == PW_VARINT) {
      has_ts = true;
      ts = f.value;
    } else if (f.number == 11 && f.wire_type == PW_LENGTH_DELIMITED) {
      is_event = true;
      pw_cursor event = pw_cursor_of(f.data, f.len);
      pw_field e;
      while (pw_next(&event, &e))
        if (e.number == 9 && e.wire_type == PW_VARINT) /* TrackEvent.type: 1 begin, 2 end */
          begin = e.value == 1;
      assert_walked_whole(&event, "TrackEvent");
    }
  }
  assert_walked_whole(&packet, "TracePacket");
  if (!is_event)
    return;
  g_assert_true(has_ts);
  key k = {ts, w->events++, begin};
  top_k_offer(w->top, k);
}

static void walk_trace(trace_walk *w, const uint8_t *data, size_t len) {
  pw_cursor trace = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&trace, &f))
    if (f.number == 1 && f.wire_type == PW_LENGTH_DELIMITED)
      walk_packet(w, f.data, f.len);
  assert_walked_whole(&trace, "Trace");
}

/* --- the test ------------------------------------------------------------- */

static void test_a_ring_buffer_of_1_mib_over_200_mib_keeps_the_newest_events(void) {
  const char *build_dir = g_getenv("G_TEST_BUILDDIR");
  g_assert_nonnull(build_dir);
  g_autofree char *big = g_build_filename(build_dir, "config_large_200mib.pftrace", NULL);
  g_autofree char *small = g_build_filename(build_dir, "config_large_5mb.pftrace", NULL);
  g_autofree char *config = g_build_filename(build_dir, "config_large_ring.pbtx", NULL);
  g_autofree char *out = g_build_filename(build_dir, "config_large.out", NULL);
  g_assert_true(g_file_set_contents(config, ring_config, -1, NULL));
  generate(big, BIG_EVENTS);
  generate(small, SMALL_EVENTS);
  GStatBuf st;
  g_assert_cmpint(g_stat(big, &st), ==, 0);
  g_assert_cmpint(st.st_size, >=, 200 * 1024 * 1024);

  run_result floor = import_with_ring(small, config, out);
  run_result r = import_with_ring(big, config, out);
  g_test_message("input %lld bytes; peak RSS %ld KiB (the 5 MB input: %ld KiB)",
                 (long long)st.st_size, r.max_rss_kb, floor.max_rss_kb);
  const char *row = strchr(r.out, '\n');
  g_assert_nonnull(row);
  long long written, overwritten, peak, slices, sum_ts, ended, misplaced;
  g_assert_cmpint(sscanf(row + 1, "%lld,%lld,%lld,%lld,%lld,%lld,%lld", &written, &overwritten,
                         &peak, &slices, &sum_ts, &ended, &misplaced),
                  ==, 7);
  g_assert_cmpint(written, ==, BIG_EVENTS);
  long long kept = written - overwritten;
  g_test_message("kept %lld events, %lld overwritten; buffer peak %lld bytes", kept, overwritten,
                 peak);
  g_assert_cmpint(peak, <=, 1024 * 1024);
  /* The buffer is used: an event costs at most a record, a payload of
   * one arg and allocator overhead, under 160 bytes. */
  g_assert_cmpint(kept, >=, 1024 * 1024 / 160);

  top_k top = {g_new(key, (size_t)kept), 0, (size_t)kept};
  trace_walk w = {&top, 0};
  GError *error = NULL;
  GMappedFile *mapped = g_mapped_file_new(big, FALSE, &error);
  g_assert_no_error(error);
  const uint8_t *data = (const uint8_t *)g_mapped_file_get_contents(mapped);
  walk_trace(&w, data, g_mapped_file_get_length(mapped));
  g_mapped_file_unref(mapped);
  g_assert_cmpuint(w.events, ==, BIG_EVENTS);
  long long begins = 0, begin_ts = 0;
  for (size_t i = 0; i < top.len; i++)
    if (top.heap[i].begin) {
      begins++;
      begin_ts += (long long)top.heap[i].ts;
    }
  g_assert_cmpint(slices, ==, begins);
  g_assert_cmpint(sum_ts, ==, begin_ts);
  g_assert_cmpint(ended + misplaced, ==, kept - begins);

  g_assert_cmpint(r.max_rss_kb, <=, floor.max_rss_kb + RSS_ALLOWANCE_KB);

  g_free(top.heap);
  g_free(r.out);
  g_free(floor.out);
  g_unlink(big);
  g_unlink(small);
  g_unlink(config);
  g_unlink(out);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/config-large/a-ring-buffer-of-1-mib-over-200-mib-keeps-the-newest-events",
                  test_a_ring_buffer_of_1_mib_over_200_mib_keeps_the_newest_events);
  return g_test_run();
}
