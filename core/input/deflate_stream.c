/*
 * A raw DEFLATE stream inflated with ISA-L (deflate_stream.h).
 *
 * isal_inflate() is told nothing about wrappers (ISAL_DEFLATE): the
 * CRC-32 is taken here over each piece of output with ISA-L's
 * crc32_gzip_refl (the polynomial and conventions of zlib's crc32()), so
 * it is right at any point, not only once the stream ends.
 */
#include "input/deflate_stream.h"

#include <glib.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

struct deflate_stream {
  struct inflate_state state;
  uint32_t crc;
  uint64_t total_out;
  const char *error;
};

deflate_stream *deflate_stream_new(void) {
  deflate_stream *s = g_new0(deflate_stream, 1);
  isal_inflate_init(&s->state);
  s->state.crc_flag = ISAL_DEFLATE;
  return s;
}

void deflate_stream_free(deflate_stream *s) { g_free(s); }

static const char *isal_error_text(int code) {
  switch (code) {
  case ISAL_INVALID_BLOCK:
    return "invalid deflate block";
  case ISAL_INVALID_SYMBOL:
    return "invalid deflate symbol";
  case ISAL_INVALID_LOOKBACK:
    return "deflate distance too far back";
  case ISAL_NEED_DICT:
    return "deflate stream needs a preset dictionary";
  default:
    return "deflate data not understood";
  }
}

deflate_stream_status deflate_stream_inflate(deflate_stream *s,
                                             const uint8_t **in, size_t *in_len,
                                             uint8_t *out, size_t out_len,
                                             size_t *produced) {
  *produced = 0;
  if (s->error != NULL)
    return DEFLATE_STREAM_ERROR;
  if (s->state.block_state == ISAL_BLOCK_FINISH)
    return DEFLATE_STREAM_END;
  /* ISA-L counts in 32 bits: larger buffers are taken a piece at a time
   * by the caller's next call. */
  uint32_t give_in = *in_len > UINT32_MAX ? UINT32_MAX : (uint32_t)*in_len;
  uint32_t room = out_len > UINT32_MAX ? UINT32_MAX : (uint32_t)out_len;
  s->state.next_in = (uint8_t *)*in;
  s->state.avail_in = give_in;
  s->state.next_out = out;
  s->state.avail_out = room;
  int code = isal_inflate(&s->state);
  size_t used = give_in - s->state.avail_in;
  size_t made = room - s->state.avail_out;
  *in += used;
  *in_len -= used;
  *produced = made;
  if (made > 0)
    s->crc = crc32_gzip_refl(s->crc, out, made);
  s->total_out += made;
  /* NEED_DICT is positive but, for a raw stream, as fatal as the rest. */
  if (code < 0 || code == ISAL_NEED_DICT) {
    s->error = isal_error_text(code);
    return DEFLATE_STREAM_ERROR;
  }
  return s->state.block_state == ISAL_BLOCK_FINISH ? DEFLATE_STREAM_END
                                                   : DEFLATE_STREAM_MORE;
}

uint32_t deflate_stream_crc32(const deflate_stream *s) { return s->crc; }

uint64_t deflate_stream_total_out(const deflate_stream *s) {
  return s->total_out;
}

const char *deflate_stream_error(const deflate_stream *s) { return s->error; }
