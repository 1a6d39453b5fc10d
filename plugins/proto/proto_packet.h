/*
 * The control fields of one TracePacket, as proto_reader.c reads them
 * before its payload, and their clearing per packet.
 *
 * A header of its own so that tests/test_proto_reader.c can check that
 * proto_packet_clear() sets every field (a field added here and not
 * there would start each packet with the last packet's value).
 */
#ifndef TM_PROTO_PACKET_H
#define TM_PROTO_PACKET_H

#include <stdbool.h>
#include <stdint.h>

#include "proto_wire_decode.h"

typedef struct proto_packet {
  bool has_timestamp;
  /* Apart from `flags`: with the two side by side GCC tested both with one
   * 8-byte load of the two stores just made, a store-forwarding stall that
   * took a fifth of on_packet's time (perf). */
  bool cleared;
  uint64_t timestamp;
  uint32_t clock_id;
  uint32_t sequence_id;
  uint32_t flags;
  uint32_t dropped;
  bool first_on_sequence;
  uint32_t machine_id;
  pw_field defaults; /* number 0 if absent */
  pw_field interned;
  pw_field payload;
  uint32_t unmodelled; /* field number of a payload not read, 0 if none */
} proto_packet;

/* Every field set, one by one: a memset of the whole struct was a
 * `rep stos`, slow for its size. A field added above must be set here:
 * test_proto_reader's "/proto/reader/clearing/packet-clear-sets-every-field"
 * fails until it is. */
static inline void proto_packet_clear(proto_packet *p) {
  p->has_timestamp = false;
  p->timestamp = 0;
  p->clock_id = 0;
  p->sequence_id = 0;
  p->flags = 0;
  p->cleared = false;
  p->dropped = 0;
  p->first_on_sequence = false;
  p->machine_id = 0;
  p->defaults = p->interned = p->payload = (pw_field){0};
  p->unmodelled = 0;
}

#endif
