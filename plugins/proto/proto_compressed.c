/* compressed_packets and zstd_compressed_packets (see proto_compressed.h). */
#include "proto_compressed.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

#include "proto_context.h"

#define PIECE (64u << 10)
/* The inflate budget is judged only past this many bytes, as the host's. */
#define INFLATE_FLOOR ((uint64_t)64 << 20)

static const char *field_name(proto_codec codec) {
  return codec == PROTO_CODEC_ZSTD ? "zstd_compressed_packets" : "compressed_packets";
}

static bool damaged(proto_context *ctx, proto_codec codec, const char *what) {
  char message[256];
  snprintf(message, sizeof message, "packet %" PRIu64 ": %s: %s", ctx->packet_index,
           field_name(codec), what);
  ctx->s->report_error(ctx->host, (int64_t)ctx->wrapper_offset, message);
  return false;
}

static bool inner_framing_failed(proto_context *ctx, proto_codec codec,
                                 const proto_framer *inner) {
  char what[200];
  snprintf(what, sizeof what, "at decompressed byte %" PRIu64 ": %s", inner->error_offset,
           inner->error);
  return damaged(ctx, codec, what);
}

/* Hands `produced` bytes to the inner framer; false after reporting. The
 * bytes inflated in the whole file are held to the inflate budget against
 * the file's bytes up to the end of this wrapper: a wrapper of a few KiB
 * must not become GiBs of packets. */
static bool frame_piece(proto_context *ctx, proto_codec codec, proto_framer *inner,
                        const uint8_t *piece, size_t produced) {
  ctx->inflated += produced;
  if (ctx->inflated > INFLATE_FLOOR) {
    uint64_t base = ctx->wrapper_end, limit;
    if (__builtin_mul_overflow(base, ctx->inflate_ratio, &limit))
      limit = UINT64_MAX;
    if (ctx->inflated > limit) {
      ctx->s->stat_add(ctx->host, "container_inflate_ratio_exceeded", 1);
      char what[160];
      snprintf(what, sizeof what,
               "inflates to more than %" PRIu64 " times the %" PRIu64
               " bytes of the file up to its end (budget --max-inflate-ratio)",
               ctx->inflate_ratio, base);
      return damaged(ctx, codec, what);
    }
  }
  if (produced == 0 || proto_framer_feed(inner, piece, produced))
    return true;
  if (inner->failed)
    inner_framing_failed(ctx, codec, inner);
  return false; /* else a packet's reader reported its own error */
}

static bool inflate_zlib(proto_context *ctx, proto_framer *inner, uint8_t *piece,
                         const uint8_t *data, size_t len) {
  const proto_codec codec = PROTO_CODEC_ZLIB;
  z_stream z = {0};
  /* 15 + 32: a zlib or gzip header, detected. */
  if (inflateInit2(&z, 15 + 32) != Z_OK)
    return damaged(ctx, codec, "cannot start zlib");
  bool ok = false;
  z.next_in = (Bytef *)data;
  z.avail_in = (uInt)len;
  if ((size_t)z.avail_in != len) {
    damaged(ctx, codec, "wrapper too large");
    goto out;
  }
  for (;;) {
    z.next_out = piece;
    z.avail_out = PIECE;
    int zr = inflate(&z, Z_NO_FLUSH);
    size_t produced = PIECE - z.avail_out;
    if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
      damaged(ctx, codec, z.msg ? z.msg : "corrupt zlib stream");
      goto out;
    }
    if (!frame_piece(ctx, codec, inner, piece, produced))
      goto out;
    if (zr == Z_STREAM_END)
      break;
    if (produced == 0 && z.avail_in == 0) {
      damaged(ctx, codec, "the zlib stream is cut short");
      goto out;
    }
  }
  ok = true;
out:
  inflateEnd(&z);
  return ok;
}

/* Frames follow each other until the input ends (as zstd's own tool
 * reads a file); the input must end at a frame's end. */
static bool decompress_zstd(proto_context *ctx, proto_framer *inner, uint8_t *piece,
                            const uint8_t *data, size_t len) {
  const proto_codec codec = PROTO_CODEC_ZSTD;
  ZSTD_DStream *z = ZSTD_createDStream();
  if (!z)
    return damaged(ctx, codec, "cannot start zstd");
  bool ok = false;
  ZSTD_inBuffer in = {data, len, 0};
  /* The frame header may ask for any window; a bounded one keeps a
   * hostile header from allocating without bound (2^27 is zstd's own
   * default limit, spelled out so a library default cannot change it). */
  if (ZSTD_isError(ZSTD_DCtx_setParameter(z, ZSTD_d_windowLogMax, 27))) {
    damaged(ctx, codec, "cannot start zstd");
    goto out;
  }
  size_t hint = 1; /* nonzero: inside a frame, or no frame read yet */
  for (;;) {
    ZSTD_outBuffer out = {piece, PIECE, 0};
    size_t before = in.pos;
    hint = ZSTD_decompressStream(z, &out, &in);
    if (ZSTD_isError(hint)) {
      damaged(ctx, codec, ZSTD_getErrorName(hint));
      goto out;
    }
    if (!frame_piece(ctx, codec, inner, piece, out.pos))
      goto out;
    if (in.pos == in.size && hint == 0)
      break;
    /* No progress with all input consumed and the frame not done: the
     * output buffer had room, so more input was needed. */
    if (in.pos == in.size && out.pos < out.size && in.pos == before) {
      damaged(ctx, codec, "the zstd stream is cut short");
      goto out;
    }
  }
  ok = true;
out:
  ZSTD_freeDStream(z);
  return ok;
}

bool proto_compressed_read(proto_context *ctx, proto_codec codec, const uint8_t *data,
                           size_t len, proto_packet_fn on_packet, void *on_packet_arg) {
  if (ctx->inner_framer)
    return damaged(ctx, codec, "nested inside another compressed packet wrapper");
  proto_framer inner;
  proto_framer_init(&inner, PROTO_DEFAULT_MAX_PACKET, on_packet, on_packet_arg);
  ctx->inner_framer = &inner;
  ctx->wrapper_offset = ctx->packet_offset;
  ctx->wrapper_end = ctx->packet_offset + len;
  uint8_t *piece = proto_xrealloc(NULL, PIECE);
  bool ok = codec == PROTO_CODEC_ZSTD ? decompress_zstd(ctx, &inner, piece, data, len)
                                      : inflate_zlib(ctx, &inner, piece, data, len);
  if (ok && !proto_framer_finish(&inner))
    ok = inner_framing_failed(ctx, codec, &inner);
  free(piece);
  proto_framer_clear(&inner);
  ctx->inner_framer = NULL;
  return ok;
}
