/*
 * Streaming framing of a Perfetto trace: the file is a sequence of
 * top-level fields, of which field 1 (`packet`, length-delimited) carries
 * one TracePacket each.
 *
 * Invariants: a packet that lies whole inside a chunk is handed out in
 * place; only a packet cut by a chunk boundary is copied, into one buffer
 * holding that packet alone, never larger than `max_packet` bytes (a packet
 * claiming more is an error, not an allocation). Other top-level fields are
 * skipped by wire type without being buffered. After the first error the
 * framer accepts no more bytes; every packet before the damage has been
 * delivered.
 */
#ifndef TM_PROTO_FRAMING_H
#define TM_PROTO_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_DEFAULT_MAX_PACKET ((size_t)64 << 20)

/* Receives one packet (`data` borrowed for the call) that starts at file
 * offset `offset` (the offset of its payload's first byte). Returns false to
 * stop framing; the callback has then reported why. */
typedef bool (*proto_packet_fn)(void *ctx, const uint8_t *data, size_t len,
                                uint64_t offset);

typedef enum proto_framer_state {
  FRAMER_TAG = 0,
  FRAMER_LENGTH,
  FRAMER_PACKET,      /* copying a cut packet into buf */
  FRAMER_SKIP_VARINT, /* an unknown varint field */
  FRAMER_SKIP_BYTES,  /* an unknown fixed or length-delimited field */
  FRAMER_STOPPED,     /* error, or the callback asked to stop */
} proto_framer_state;

typedef struct proto_framer {
  proto_packet_fn on_packet;
  void *ctx;
  size_t max_packet;
  proto_framer_state state;
  uint64_t offset;       /* file offset of the next byte fed */
  uint64_t field_offset; /* file offset of the current field's tag */
  uint32_t field_number;
  uint8_t wire_type;
  uint8_t varint[10]; /* a varint cut by a chunk boundary */
  size_t varint_len;
  uint64_t remaining; /* bytes still to copy or skip */
  uint8_t *buf;       /* owned: the cut packet */
  size_t buf_len;
  size_t buf_cap;
  uint64_t packets; /* delivered so far */
  /* Set on a framing error: where and what. */
  bool failed;
  uint64_t error_offset;
  char error[160];
} proto_framer;

void proto_framer_init(proto_framer *framer, size_t max_packet,
                       proto_packet_fn on_packet, void *ctx);
/* Releases the packet buffer (the struct itself is the caller's). */
void proto_framer_clear(proto_framer *framer);

/* Feeds the next chunk. Returns false once framing stopped: on a framing
 * error (framer->failed, error, error_offset set) or because the callback
 * returned false. */
bool proto_framer_feed(proto_framer *framer, const uint8_t *data, size_t len);
/* End of file: a field cut by the end is an error. */
bool proto_framer_finish(proto_framer *framer);

#endif /* TM_PROTO_FRAMING_H */
