/*
 * The floor of the proto reader's benchmark: the same bytes framed into
 * packets and every field of every packet decoded (TracePacket, and the
 * messages nested in TrackEvent, InternedData, TrackDescriptor and
 * ClockSnapshot), with no model behind it.
 */
#ifndef TM_PROTO_FLOOR_H
#define TM_PROTO_FLOOR_H

#include <stdbool.h>
#include <stdint.h>

/* Walks the trace at `path`; counts packets and fields. */
bool proto_floor_walk_file(const char *path, uint64_t *packets,
                           uint64_t *fields);

#endif /* TM_PROTO_FLOOR_H */
