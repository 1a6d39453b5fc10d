/*
 * Kernel events: TracePacket.ftrace_events (1), one FtraceEventBundle per
 * cpu and flush, in either of its two encodings — expanded FtraceEvent
 * messages, and compact_sched (sched_switch and sched_waking as parallel
 * packed arrays with delta-encoded timestamps and interned comms).
 *
 * Timestamps are on the bundle's ftrace_clock: BOOTTIME by default,
 * MONOTONIC_RAW, or for FTRACE_CLOCK_GLOBAL a clock of the packet's
 * sequence tied to BOOTTIME by the bundle's (ftrace_timestamp,
 * boot_timestamp) pair, through the host's clock graph like every other
 * clock. Events land on the packet's machine and its cpu rows.
 *
 * What each event kind becomes is proto_ftrace_kinds.h's business; this
 * module frames bundles, decodes compact_sched and keeps, per machine and
 * cpu, what the compact form leaves out (the thread a switch takes off
 * the cpu is the one the previous switch put on it).
 *
 * Damage: bytes that do not parse make the packet malformed (the file
 * stops there, as for any packet). Parseable nonsense is counted and
 * logged at the packet, and the rest of the bundle read: compact arrays of
 * unequal length or a comm index past the table
 * (compact_sched_has_parse_errors: the events every array covers are
 * kept), an event id this reader's schema does not know
 * (proto_ftrace_unknown_event: still an ftrace_event row, its fields by
 * number), a cpu beyond the machine's cpus
 * (ftrace_cpu_out_of_range: the bundle is dropped), an event without pid
 * or timestamp, and a clock trace_processor cannot read either
 * (ftrace_bundle_unsupported_clock: the bundle is dropped).
 */
#ifndef TM_PROTO_FTRACE_H
#define TM_PROTO_FTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proto_context;
struct proto_machine;

typedef struct proto_ftrace proto_ftrace;

proto_ftrace *proto_ftrace_new(struct proto_context *ctx);
void proto_ftrace_free(proto_ftrace *ft);

/* Reads one FtraceEventBundle of `machine` from packet sequence
 * `sequence_id`, whose interned data (`seq`, borrowed; kernel symbols)
 * its events may name. Returns false if its bytes do not parse. */
struct proto_sequence;
bool proto_ftrace_read_bundle(proto_ftrace *ft, struct proto_machine *machine,
                              uint32_t sequence_id, const struct proto_sequence *seq,
                              const uint8_t *data, size_t len);

/* The number of cpus of `machine` (SystemInfo.num_cpus), when the trace
 * says: a bundle of a cpu at or beyond it is dropped. */
void proto_ftrace_set_num_cpus(proto_ftrace *ft, struct proto_machine *machine,
                               uint32_t num_cpus);

#endif /* TM_PROTO_FTRACE_H */
