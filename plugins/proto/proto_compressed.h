/*
 * compressed_packets (packet field 50, zlib/deflate) and
 * zstd_compressed_packets (field 133, zstd): a compressed stream whose
 * decompressed bytes are again a sequence of `packet` fields, read in
 * place of the wrapper (docs/formats.md §1.1).
 *
 * Invariants: the decompressed stream is framed as it is produced, in
 * bounded pieces, so a small wrapper that decompresses to gigabytes costs
 * time, never memory beyond one packet (each inner packet is bounded like
 * an outer one); wrappers do not nest, whatever their codecs; damage
 * inside is reported at the wrapper's byte offset, and what the wrapper
 * emitted before it stays emitted.
 */
#ifndef TM_PROTO_COMPRESSED_H
#define TM_PROTO_COMPRESSED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_framing.h"

struct proto_context;

typedef enum proto_codec {
  PROTO_CODEC_ZLIB, /* compressed_packets: zlib or gzip header */
  PROTO_CODEC_ZSTD, /* zstd_compressed_packets: one or more zstd frames */
} proto_codec;

/* Decompresses `data` and hands each packet inside to `on_packet` (with
 * `on_packet_arg`). Returns false after reporting damage. */
bool proto_compressed_read(struct proto_context *ctx, proto_codec codec,
                           const uint8_t *data, size_t len, proto_packet_fn on_packet,
                           void *on_packet_arg);

#endif /* TM_PROTO_COMPRESSED_H */
