/*
 * compressed_packets (packet field 50): a zlib/deflate stream whose
 * inflated bytes are again a sequence of `packet` fields, read in place of
 * the wrapper (reference/formats.md §1.1).
 *
 * Invariants: the inflated stream is framed as it is produced, in bounded
 * pieces, so a small wrapper that inflates to gigabytes costs time, never
 * memory beyond one packet; wrappers do not nest; damage inside is
 * reported at the wrapper's byte offset.
 */
#ifndef TM_PROTO_COMPRESSED_H
#define TM_PROTO_COMPRESSED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_framing.h"

struct proto_reader;

/* Inflates `data` and hands each packet inside to `on_packet` (with the
 * reader as its context). Returns false after reporting damage. */
bool proto_compressed_read(struct proto_reader *reader, const uint8_t *data,
                           size_t len, proto_packet_fn on_packet);

#endif /* TM_PROTO_COMPRESSED_H */
