/*
 * Synthetic Perfetto protobuf traces for the benchmark (tools/bench.c) and
 * the gen_proto_trace tool.
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

#endif /* TM_GEN_PROTO_TRACE_H */
