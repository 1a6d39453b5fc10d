/*
 * TracePacket.trigger (46): a trigger the tracing session received (traced,
 * or tracemerge's recording library, core/record), shown as
 * trace_processor shows it: an instant named by the trigger on the global
 * track "Trace Triggers" (type "triggers") of the packet's machine, with
 * args producer_name and trusted_producer_uid, at the packet's timestamp.
 * A trigger without a timestamp has no place on the timeline: it is
 * skipped.
 */
#ifndef TM_PROTO_TRIGGER_H
#define TM_PROTO_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_clock.h"

struct proto_context;
struct proto_machine;

/* Returns false if the message does not decode. */
bool proto_trigger_read(struct proto_context *ctx, struct proto_machine *machine,
                        const proto_timestamp *ts, const uint8_t *data, size_t len);

#endif /* TM_PROTO_TRIGGER_H */
