/* compressed_packets (see proto_compressed.h). */
#include "proto_compressed.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "proto_reader.h"

#define INFLATE_PIECE (64u << 10)

static bool damaged(proto_reader *reader, const char *what) {
  char message[256];
  snprintf(message, sizeof message, "packet %" PRIu64 ": compressed_packets: %s",
           reader->packet_index, what);
  reader->s->report_error(reader->host, (int64_t)reader->wrapper_offset, message);
  return false;
}

static bool inner_framing_failed(proto_reader *reader, const proto_framer *inner) {
  char what[224];
  snprintf(what, sizeof what, "at inflated byte %" PRIu64 ": %s", inner->error_offset,
           inner->error);
  return damaged(reader, what);
}

bool proto_compressed_read(proto_reader *reader, const uint8_t *data, size_t len,
                           proto_packet_fn on_packet) {
  if (reader->inner_framer)
    return damaged(reader, "nested inside another compressed_packets");
  bool ok = false;
  z_stream z = {0};
  /* 15 + 32: a zlib or gzip header, detected. */
  if (inflateInit2(&z, 15 + 32) != Z_OK)
    return damaged(reader, "cannot start zlib");
  proto_framer inner;
  proto_framer_init(&inner, PROTO_DEFAULT_MAX_PACKET, on_packet, reader);
  reader->inner_framer = &inner;
  reader->wrapper_offset = reader->packet_offset;
  uint8_t *piece = proto_xrealloc(NULL, INFLATE_PIECE);
  z.next_in = (Bytef *)data;
  z.avail_in = (uInt)len;
  if ((size_t)z.avail_in != len) {
    damaged(reader, "wrapper too large");
    goto out;
  }
  for (;;) {
    z.next_out = piece;
    z.avail_out = INFLATE_PIECE;
    int zr = inflate(&z, Z_NO_FLUSH);
    size_t produced = INFLATE_PIECE - z.avail_out;
    if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
      damaged(reader, z.msg ? z.msg : "corrupt zlib stream");
      goto out;
    }
    if (produced > 0 && !proto_framer_feed(&inner, piece, produced)) {
      if (inner.failed)
        inner_framing_failed(reader, &inner);
      goto out;
    }
    if (zr == Z_STREAM_END)
      break;
    if (produced == 0 && z.avail_in == 0) {
      damaged(reader, "the zlib stream is cut short");
      goto out;
    }
  }
  if (!proto_framer_finish(&inner)) {
    inner_framing_failed(reader, &inner);
    goto out;
  }
  ok = true;
out:
  free(piece);
  inflateEnd(&z);
  proto_framer_clear(&inner);
  reader->inner_framer = NULL;
  return ok;
}
