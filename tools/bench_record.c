/*
 * bench_record: what a TrackEvent costs the program that writes it.
 *
 * Measures, on one thread, the cost of an interned slice begin/end pair
 * (category enabled, name seen before, thread track) with TMR_NOW
 * timestamps and with explicit ones, of an instant with two debug
 * annotations, and of an event in a disabled category; beside them the
 * floor measured in the same run: the two clock_gettime(CLOCK_BOOTTIME)
 * calls a TMR_NOW pair would make on BOOTTIME, and two TSC reads (what
 * it makes when the session reads the TSC, tmr_session_now_clock: the
 * line "TMR_NOW reads" says which). Each figure is the median of
 * --rounds rounds of --pairs iterations, in the thread's CPU time (so a
 * busy machine's other processes do not count). Heap allocations made during the
 * measured loops are counted by wrapping malloc (not under ASan, whose
 * allocator cannot be wrapped this way).
 *
 * The session writes to /dev/null through a RING_BUFFER of 8 MiB that the
 * warm-up fills and wraps (so no first touch of its pages is measured):
 * chunk commits (one per 16 KiB) are part of the cost, draining to the
 * file is not (it happens on the service thread at stop).
 *
 *   build-release/tools/bench_record [--pairs N] [--rounds R] [--case K | --clocks]
 *   build-release/tools/bench_record --clock-error SECONDS OUT.pftrace
 *
 * TRACEMERGE_RECORD_CLOCK=boottime in the environment measures the
 * clock_gettime path of TMR_NOW instead of the TSC.
 *
 * --clocks prints instead what one read of each clock costs here (the
 * median of --rounds rounds of --pairs reads) and its resolution: why
 * TMR_NOW costs what it costs, and what a cheaper clock would give up.
 *
 * --clock-error records, for SECONDS, an instant every ~millisecond with
 * TMR_NOW between two clock_gettime(CLOCK_BOOTTIME) reads (kept as its
 * debug annotations "before" and "after"), reads the trace back through
 * tracemerge's proto reader and prints how far the timestamps it places
 * on BOOTTIME fall outside [before, after]: the error of TMR_NOW's clock.
 *
 * --case K measures only case K (0 floor, 1 TMR_NOW pair, 2 explicit
 * pair, 3 instant with annotations, 4 disabled pair, 5 TSC floor) after the same
 * warm-up, for instruction counts of one case under
 * `valgrind --tool=callgrind` (which is steady on a loaded machine,
 * unlike time; under valgrind clock_gettime is a system call, so count
 * the library's functions, not the program's total).
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tracemerge/record.h>
#include <tracemerge/tracemerge.h>

/* The one internal header the tool reads: its TSC floor must be the very
 * read the writers make (tmr_tsc_read, inline there). The tool still
 * links only the public library, as a program that records does, so
 * what it measures includes that library's calls; functions the library
 * keeps hidden (tmr_boottime_ns) are not reachable from here. */
#include "record/tsc_clock.h"

/* --- counting allocations ----------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__)
#define COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef COUNTS_ALLOCATIONS
#define COUNTS_ALLOCATIONS 1
#endif

static _Atomic long allocations;

#if COUNTS_ALLOCATIONS
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

void *malloc(size_t n) {
  allocations++;
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t size) {
  allocations++;
  return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n) {
  allocations++;
  return __libc_realloc(p, n);
}
#endif

/* --- timing ------------------------------------------------------------------------ */

/* The thread's CPU time: on a shared machine, time spent descheduled is
 * not the code's cost. */
static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_double);
  return v[n / 2];
}

static tmr_category cat_bench = TMR_CATEGORY("bench", NULL);
static tmr_category cat_off = TMR_CATEGORY("off", NULL);

typedef enum workload { FLOOR, PAIR_NOW, PAIR_EXPLICIT, INSTANT_ARGS, DISABLED, TSC_FLOOR } workload;

static volatile int64_t sink;

/* --clocks: ns per clock_gettime() of each clock, and its resolution. */
static int print_clock_costs(long reads, int rounds) {
  static const struct {
    clockid_t id;
    const char *name;
  } clocks[] = {{CLOCK_BOOTTIME, "CLOCK_BOOTTIME (TMR_NOW)"},
                {CLOCK_MONOTONIC, "CLOCK_MONOTONIC"},
                {CLOCK_REALTIME, "CLOCK_REALTIME"},
                {CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW"},
                {CLOCK_MONOTONIC_COARSE, "CLOCK_MONOTONIC_COARSE"}};
  printf("bench_record --clocks: %ld reads x %d rounds, median ns per read\n", reads, rounds);
  for (size_t c = 0; c < G_N_ELEMENTS(clocks); c++) {
    double samples[99];
    for (int r = 0; r < rounds; r++) {
      int64_t start = now_ns();
      for (long i = 0; i < reads; i++) {
        struct timespec t;
        clock_gettime(clocks[c].id, &t);
        sink += t.tv_nsec;
      }
      samples[r] = (double)(now_ns() - start) / (double)reads;
    }
    struct timespec res = {0, 0};
    clock_getres(clocks[c].id, &res);
    printf("  %-26s %6.1f ns  resolution %ld ns\n", clocks[c].name, median(samples, rounds),
           (long)res.tv_sec * 1000000000L + res.tv_nsec);
  }
  return 0;
}

/* ns per iteration of `what`, `pairs` iterations. */
static double run(tmr_writer *w, workload what, long pairs) {
  int64_t start = now_ns();
  int64_t ts = 1000;
  for (long i = 0; i < pairs; i++) {
    switch (what) {
    case FLOOR: {
      struct timespec a, b;
      clock_gettime(CLOCK_BOOTTIME, &a);
      clock_gettime(CLOCK_BOOTTIME, &b);
      sink += a.tv_nsec + b.tv_nsec;
      break;
    }
    case PAIR_NOW:
      tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_bench, "interned slice", TMR_NOW);
      tmr_slice_end(w, TMR_THREAD_TRACK, &cat_bench, TMR_NOW);
      break;
    case PAIR_EXPLICIT:
      tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_bench, "interned slice", ts);
      tmr_slice_end(w, TMR_THREAD_TRACK, &cat_bench, ts + 5);
      ts += 10;
      break;
    case INSTANT_ARGS: {
      tmr_arg args[2] = {TMR_ARG_INT("bytes", i), TMR_ARG_STRING("state", "ok")};
      tmr_event_extras x = {.args = args, .n_args = 2};
      tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_bench, "instant", TMR_NOW, &x);
      break;
    }
    case DISABLED:
      tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_off, "never", TMR_NOW);
      tmr_slice_end(w, TMR_THREAD_TRACK, &cat_off, TMR_NOW);
      break;
    case TSC_FLOOR:
      sink += (int64_t)tmr_tsc_read();
      sink += (int64_t)tmr_tsc_read();
      break;
    }
  }
  return (double)(now_ns() - start) / (double)pairs;
}

/* CLOCK_BOOTTIME in ns, as the library's tmr_boottime_ns() reads it: a
 * copy, because that function is hidden in libtracemerge (see the
 * includes), and --clock-error's reference must be read outside the
 * library anyway. */
static int64_t boottime_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_BOOTTIME, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* --clock-error: see the top. */
static int measure_clock_error(double seconds, const char *path) {
  static const char config_text[] =
      "buffers { size_kb: 65536 fill_policy: DISCARD }\n"
      "data_sources { config { name: \"track_event\" } }\n";
  GError *error = NULL;
  tmr_config *config = tmr_config_parse_text(config_text, sizeof config_text - 1, "bench", &error);
  tmr_session_options options = {.output_path = path};
  tmr_session *session = config ? tmr_session_new(config, &options, &error) : NULL;
  if (!session || !tmr_session_start(session, &error)) {
    fprintf(stderr, "bench_record: %s\n", error->message);
    return 1;
  }
  tmr_writer *w = tmr_this_thread();
  int64_t end = boottime_ns() + (int64_t)(seconds * 1e9);
  long events = 0;
  for (;;) {
    /* Warm the path (after the sleep) so that the bracket is tight. */
    tmr_instant(w, TMR_THREAD_TRACK, &cat_bench, "warm", TMR_NOW);
    int64_t before = boottime_ns();
    if (before >= end)
      break;
    tmr_instant(w, TMR_THREAD_TRACK, &cat_bench, "at", TMR_NOW);
    int64_t after = boottime_ns();
    /* The readings go in an instant of explicit ts (BOOTTIME), right after. */
    tmr_arg args[2] = {TMR_ARG_INT("before", before), TMR_ARG_INT("after", after)};
    tmr_event_extras x = {.args = args, .n_args = 2};
    tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_bench, "bracket", after, &x);
    events++;
    g_usleep(1000);
  }
  bool tsc = tmr_session_now_clock(session) == TMR_NOW_CLOCK_TSC;
  if (!tmr_session_stop(session, &error)) {
    fprintf(stderr, "bench_record: %s\n", error->message);
    return 1;
  }
  tmr_session_free(session);
  tmr_config_free(config);
  printf("bench_record --clock-error: TMR_NOW reads %s; %ld instants over %.1f s\n",
         tsc ? "the TSC" : "clock_gettime(CLOCK_BOOTTIME)", events, seconds);
  tm_session *tm = tm_session_new(NULL);
  const char *paths[] = {path};
  /* The k-th "at" instant with the k-th "bracket" (1 ms apart, so their
   * orders are the recording's); error = how far "at" lies outside
   * [before, after]. */
  static const char sql[] =
      "WITH b AS (SELECT row_number() OVER (ORDER BY s.ts) AS k, "
      "  (SELECT int_value FROM args a WHERE a.arg_set_id = s.arg_set_id AND a.key = 'debug.before') AS before, "
      "  (SELECT int_value FROM args a WHERE a.arg_set_id = s.arg_set_id AND a.key = 'debug.after') AS after "
      "  FROM slice s WHERE s.name = 'bracket'), "
      "t AS (SELECT row_number() OVER (ORDER BY ts) AS k, ts FROM slice WHERE name = 'at'), "
      "p AS (SELECT t.ts, b.before, b.after FROM t JOIN b USING (k)) "
      "SELECT count(*) AS instants, sum(ts < before OR ts > after) AS outside, "
      "max(max(before - ts, ts - after, 0)) AS max_error_ns, "
      "min(ts - before) AS min_after_before_ns, min(after - ts) AS min_before_after_ns, "
      "max(after - before) AS max_bracket_ns, "
      "CAST(avg(after - before) AS INT) AS mean_bracket_ns FROM p";
  /* The TSC clock's own error, segment by segment: between two anchors
   * a reader converts with the first one's offset, so at the second one
   * it is off by (Δ clock − Δ BOOTTIME), the most it is off in that
   * segment (the error grows linearly in it); each anchor pair's own
   * reading error (~15 ns) included. */
  static const char drift_sql[] =
      "WITH s AS (SELECT t.snapshot_id AS id, b.clock_value AS b, t.clock_value AS c "
      "  FROM clock_snapshot t JOIN clock_snapshot b USING (snapshot_id) "
      "  WHERE t.clock_id = 127 AND b.clock_id = 6), "
      "d AS (SELECT (c - lag(c) OVER w) - (b - lag(b) OVER w) AS err, b - lag(b) OVER w AS span "
      "  FROM s WINDOW w AS (ORDER BY id)) "
      "SELECT count(*) AS segments, min(err) AS min_segment_error_ns, "
      "max(err) AS max_segment_error_ns, CAST(avg(abs(err)) AS INT) AS mean_abs_error_ns, "
      "min(span) AS min_segment_ns, max(span) AS max_segment_ns FROM d WHERE err IS NOT NULL";
  bool ok = tm_session_import(tm, paths, 1, &error) &&
            tm_session_query(tm, sql, TM_FORMAT_CSV, stdout, &error) &&
            (!tsc || tm_session_query(tm, drift_sql, TM_FORMAT_CSV, stdout, &error));
  if (!ok)
    fprintf(stderr, "bench_record: %s\n", error->message);
  tm_session_free(tm);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  long pairs = 1000000;
  int rounds = 5;
  int only = -1;
  bool clocks = false;
  if (argc == 4 && !strcmp(argv[1], "--clock-error"))
    return measure_clock_error(atof(argv[2]), argv[3]);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
      pairs = atol(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--clocks"))
      clocks = true;
    else if (!strcmp(argv[i], "--case") && i + 1 < argc)
      only = atoi(argv[++i]);
    else {
      fprintf(stderr,
              "usage: %s [--pairs N] [--rounds R] [--case K | --clocks]\n"
              "       %s --clock-error SECONDS OUT.pftrace\n",
              argv[0], argv[0]);
      return 2;
    }
  }
  if (pairs < 1 || rounds < 1 || rounds > 99 || only < -1 || only > TSC_FLOOR)
    return 2;
  if (clocks)
    return print_clock_costs(pairs, rounds);
  static const char config_text[] =
      "buffers { size_kb: 8192 fill_policy: RING_BUFFER }\n"
      "data_sources { config { name: \"track_event\"\n"
      "  track_event_config { disabled_categories: \"off\" } } }\n";
  GError *error = NULL;
  tmr_config *config = tmr_config_parse_text(config_text, sizeof config_text - 1, "bench", &error);
  tmr_session_options options = {.output_path = "/dev/null"};
  tmr_session *session = config ? tmr_session_new(config, &options, &error) : NULL;
  if (!session || !tmr_session_start(session, &error)) {
    fprintf(stderr, "bench_record: %s\n", error->message);
    return 1;
  }
  tmr_writer *w = tmr_this_thread();
  /* Warm-up: names, categories, scratch and chunk all seen once, and the
   * ring written all round. */
  run(w, PAIR_NOW, 300000);
  run(w, PAIR_EXPLICIT, 10000);
  run(w, INSTANT_ARGS, 10000);
  run(w, DISABLED, 10000);

  static const struct {
    workload what;
    const char *label;
  } cases[] = {{FLOOR, "floor: two clock_gettime(BOOTTIME)"},
               {PAIR_NOW, "slice begin/end pair, TMR_NOW"},
               {PAIR_EXPLICIT, "slice begin/end pair, explicit ts"},
               {INSTANT_ARGS, "instant with 2 debug annotations"},
               {DISABLED, "pair in a disabled category"},
               {TSC_FLOOR, "two TSC reads (rdtsc)"}};
  double result[G_N_ELEMENTS(cases)];
  long allocated[G_N_ELEMENTS(cases)];
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    result[c] = 0;
    allocated[c] = 0;
    if (only >= 0 && (int)cases[c].what != only && cases[c].what != FLOOR)
      continue;
    double samples[99];
    long before = allocations;
    for (int r = 0; r < rounds; r++)
      samples[r] = run(w, cases[c].what, pairs);
    allocated[c] = allocations - before;
    result[c] = median(samples, rounds);
  }
  if (!tmr_session_stop(session, &error)) {
    fprintf(stderr, "bench_record: %s\n", error->message);
    return 1;
  }
  tmr_buffer_stats stats;
  tmr_session_buffer_stats(session, 0, &stats);
  printf("bench_record: %ld iterations x %d rounds, median ns per iteration; TMR_NOW reads %s\n",
         pairs, rounds,
         tmr_session_now_clock(session) == TMR_NOW_CLOCK_TSC ? "the TSC"
                                                             : "clock_gettime(CLOCK_BOOTTIME)");
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    if (only >= 0 && (int)cases[c].what != only && cases[c].what != FLOOR)
      continue;
    printf("  %-38s %7.1f ns  (%.2fx floor)", cases[c].label, result[c], result[c] / result[0]);
    if (COUNTS_ALLOCATIONS)
      printf("  heap allocations: %ld", allocated[c]);
    printf("\n");
  }
  printf("  chunks committed: %" G_GUINT64_FORMAT ", overwritten: %" G_GUINT64_FORMAT "\n",
         stats.chunks_written, stats.chunks_overwritten);
  tmr_session_free(session);
  tmr_config_free(config);
  return 0;
}
