/*
 * Synthetic ftrace-heavy Perfetto system trace for the benchmark
 * (tools/bench.c --format ftrace) and the gen_ftrace_trace tool.
 */
#ifndef TM_GEN_FTRACE_TRACE_H
#define TM_GEN_FTRACE_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Writes a system trace of about `events` scheduling and print events
 * (at least that many) over `cpus` cpus and `threads` threads to `out`;
 * the same seed gives the same bytes. */
bool gen_ftrace_trace_write(FILE *out, uint64_t events, uint32_t cpus, uint32_t threads,
                            uint32_t seed, uint64_t *bytes_written);

#endif /* TM_GEN_FTRACE_TRACE_H */
