/*
 * Synthetic Chrome JSON traces for the benchmark, in two shapes:
 *
 * - realistic (gen_chrome_json_write_realistic, gen_chrome_json_realistic.c):
 *   what Chrome, DevTools and Perfetto's JSON exporter write, complete
 *   events recorded at their end (out of ts order per thread), hundreds of
 *   threads interleaved in chunks, fractional µs, args on about half the
 *   events, async, flows v1 and v2, counters, scoped instants, metadata
 *   at the end, the object form with systemTraceEvents and metadata.
 * - friendly (gen_chrome_json_write): an object with "traceEvents" (one
 *   event per line) and "metadata", every thread's events in ts order.
 *
 * Invariants of the friendly output: exactly `events` entries in traceEvents; on
 * every thread, slices nest properly (children inside their parent, B/E
 * balanced) and timestamps never go back, while threads interleave in the
 * file, so the importer sees many sorted runs, as with Chrome's per-thread
 * buffers. The same options always give the same bytes.
 */
#ifndef TM_GEN_CHROME_JSON_H
#define TM_GEN_CHROME_JSON_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct gen_chrome_json_options {
  uint64_t events; /* traceEvents entries, metadata included */
  uint64_t seed;
  uint32_t processes;           /* >= 1 */
  uint32_t threads_per_process; /* >= 1 */
} gen_chrome_json_options;

/* 2,000,000 events, seed 1, 8 processes x 16 threads. */
void gen_chrome_json_options_init(gen_chrome_json_options *options);

/* Writes the trace to `out`. False (with `error` set) on a write error or
 * invalid options. */
bool gen_chrome_json_write(FILE *out, const gen_chrome_json_options *options,
                           GError **error);

/* Writes the realistic trace (see gen_chrome_json_realistic.c) of
 * `options->events` events (traceEvents entries and systemTraceEvents
 * lines); `processes` and `threads_per_process` are not used (its ~36
 * processes have 4-17 threads each). */
bool gen_chrome_json_write_realistic(FILE *out, const gen_chrome_json_options *options,
                                     GError **error);

#endif /* TM_GEN_CHROME_JSON_H */
