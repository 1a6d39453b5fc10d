/*
 * PerfSample (packet field 66): one sample of a perf-event profiler
 * (traced_perf, systing): cpu, pid, tid and an interned callstack.
 *
 * They become perf_sample rows (the proto reader's descriptor names that
 * sample table), as in trace_processor. Records that carry no sample are
 * counted, not stored: kernel_records_lost adds its value to
 * perf_samples_skipped_dataloss, sample_skipped_reason counts
 * perf_samples_skipped, a bare producer_event is ignored.
 */
#ifndef TM_PROTO_PERF_SAMPLE_H
#define TM_PROTO_PERF_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proto_context;
struct proto_machine;
struct proto_sequence;
struct proto_timestamp;

/* Reads one PerfSample at the packet's resolved time `ts`. Returns false
 * if it does not decode. */
bool proto_perf_sample_read(struct proto_context *ctx, struct proto_machine *machine,
                            struct proto_sequence *seq, const struct proto_timestamp *ts,
                            const uint8_t *data, size_t len);

#endif /* TM_PROTO_PERF_SAMPLE_H */
