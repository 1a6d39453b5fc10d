/*
 * Android payloads of a system trace: logcat (TracePacket.android_log,
 * 39) into android_logs, the package list (packages_list, 47) into
 * package_list, and SurfaceFlinger's frame timeline (frame_timeline_event,
 * 76) into expected/actual_frame_timeline_slice, as trace_processor reads
 * them.
 *
 * Frame timeline: each start message begins a slice named by its token on
 * the "Expected Timeline" or "Actual Timeline" track set of its process
 * (pid), whose FrameEnd with the same cookie ends it; an expected surface
 * frame repeating a (process, token) already seen is skipped; the jank,
 * present and prediction columns and the args are spelled as
 * trace_processor spells them; the host joins each actual surface frame
 * to the actual display frame of its display token by a flow. Logs are
 * on REALTIME (their timestamps), placed through the clock graph.
 *
 * Invariant: the reader remembers, per frame cookie, only which track set
 * its start went to, until its end.
 */
#ifndef TM_PROTO_ANDROID_H
#define TM_PROTO_ANDROID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_clock.h"

struct proto_context;
struct proto_machine;

typedef struct proto_android proto_android;

proto_android *proto_android_new(struct proto_context *ctx);
void proto_android_free(proto_android *a);

/* Each returns false if the message does not decode. */
bool proto_android_read_log(proto_android *a, struct proto_machine *machine,
                            const uint8_t *data, size_t len);
bool proto_android_read_packages(proto_android *a, struct proto_machine *machine,
                                 const uint8_t *data, size_t len);
/* `ts` is the packet's timestamp, NULL if it had none. */
bool proto_android_read_frame(proto_android *a, struct proto_machine *machine,
                              const proto_timestamp *ts, const uint8_t *data, size_t len);

#endif /* TM_PROTO_ANDROID_H */
