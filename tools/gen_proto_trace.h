/*
 * Synthetic Perfetto protobuf traces for the benchmark (tools/bench.c) and
 * the gen_proto_trace tool, in two shapes: the realistic one
 * (gen_proto_trace_realistic.c: an SDK app with a profiler beside it) and
 * the friendly one (gen_proto_trace.c: everything interned up front, one
 * kind of event).
 */
#ifndef TM_GEN_PROTO_TRACE_H
#define TM_GEN_PROTO_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Writes a trace of `events` TrackEvent packets over `sequences` packet
 * sequences to `out`; the same seed gives the same bytes. */
bool gen_proto_trace_write(FILE *out, uint64_t events, uint32_t sequences,
                           uint32_t seed, uint64_t *bytes_written);

/* Writes the realistic trace (see gen_proto_trace_realistic.c): `events`
 * counted events (TrackEvent and PerfSample packets) from `sequences`
 * writer threads of 8 processes and one profiler sequence. */
bool gen_proto_trace_write_realistic(FILE *out, uint64_t events, uint32_t sequences,
                                     uint32_t seed, uint64_t *bytes_written);

#endif /* TM_GEN_PROTO_TRACE_H */
