/*
 * What a trace says about its own recording, and the periodic counters of
 * the system data sources:
 *
 *   trace_config (33)     metadata trace_config_pbtxt (its text format)
 *   trace_stats (35)      stats traced_buf_<field>[buffer] and traced_*
 *   ftrace_stats (34)     stats ftrace_cpu_<field>_begin/_end[cpu],
 *                         ftrace_setup_errors
 *   service_event (69)    metadata tracing_started_ns,
 *                         all_data_source_started_ns, ...
 *   trace_uuid (89)       metadata trace_uuid
 *   chrome_events (5)     metadata cr-<name> of each ChromeMetadata of
 *                         the bundle (cr-<n>-<name> in the machine's
 *                         n-th bundle with metadata, n > 1), as
 *                         trace_processor names them; a bundle's legacy
 *                         events are not read (proto_unmodelled_payload)
 *   process_stats (9)     process counters mem.virt, mem.rss, mem.rss.anon,
 *                         mem.rss.file, mem.rss.shmem, mem.swap,
 *                         mem.locked, mem.rss.watermark, oom_score_adj
 *   sys_stats (7)         counters of /proc/meminfo (by their kernel names),
 *                         cpu times per cpu, num_forks, num_irq_total,
 *                         num_softirq_total
 *
 * Counters are on the packet's timestamp. The service events' metadata
 * holds the raw timestamp, which is trace time when the trace clock is
 * the packet clock (BOOTTIME, as traced writes them): metadata is written
 * while reading, before clocks are resolved. Stats the trace reports are
 * totals: the last packet's value is kept. All are the packet's
 * machine's (its machine_id; none: the file's own machine).
 */
#ifndef TM_PROTO_SERVICE_H
#define TM_PROTO_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_clock.h"

struct proto_context;
struct proto_machine;

/* Each returns false if the message does not decode. */
/* The metadata and stats are `machine`'s (proto_machine_stat_set). */
bool proto_service_read_config(struct proto_context *ctx, const struct proto_machine *machine,
                               const uint8_t *data, size_t len);
bool proto_service_read_trace_stats(struct proto_context *ctx,
                                    const struct proto_machine *machine, const uint8_t *data,
                                    size_t len);
bool proto_service_read_ftrace_stats(struct proto_context *ctx,
                                     const struct proto_machine *machine, const uint8_t *data,
                                     size_t len);
bool proto_service_read_event(struct proto_context *ctx, const struct proto_machine *machine,
                              const proto_timestamp *ts, const uint8_t *data, size_t len);
bool proto_service_read_uuid(struct proto_context *ctx, const struct proto_machine *machine,
                             const uint8_t *data, size_t len);
/* *has_events is set when the bundle holds more than metadata (legacy
 * events, string tables), which this reader does not model. */
bool proto_service_read_chrome_events(struct proto_context *ctx, struct proto_machine *machine,
                                      const uint8_t *data, size_t len, bool *has_events);
bool proto_service_read_process_stats(struct proto_context *ctx, struct proto_machine *machine,
                                      const proto_timestamp *ts, const uint8_t *data,
                                      size_t len);
bool proto_service_read_sys_stats(struct proto_context *ctx, struct proto_machine *machine,
                                  const proto_timestamp *ts, const uint8_t *data, size_t len);

#endif /* TM_PROTO_SERVICE_H */
