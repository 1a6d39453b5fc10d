/*
 * A raw DEFLATE stream (RFC 1951) inflated piecewise with ISA-L's igzip
 * (Debian libisal-dev), with the CRC-32 (ZIP and gzip's) of what it
 * yields.
 *
 * Why ISA-L and not zlib: on the bench's mixed ZIP it inflates and checks
 * 2.5x faster than zlib, in bounded memory (docs/performance.md,
 * "Libraries measured, and what was chosen").
 *
 * The caller owns the compressed bytes and the output buffer; the stream
 * owns only ISA-L's state (about 85 KiB, its 32 KiB window included).
 * Nothing is held whole: any output buffer size works, and the output
 * never depends on how the input or the output is cut.
 */
#ifndef TM_DEFLATE_STREAM_H
#define TM_DEFLATE_STREAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct deflate_stream deflate_stream;

typedef enum deflate_stream_status {
  /* Everything given was used or the output is full: call again with
   * more input (if the input is used up) or more room. */
  DEFLATE_STREAM_MORE = 0,
  /* The final block ended: nothing more comes. Input after it is not
   * decoded, but ISA-L may have taken some of it (it reads ahead): a
   * caller that needs what follows must know where that starts (a ZIP
   * member's size is in its directory). */
  DEFLATE_STREAM_END,
  /* The data is not DEFLATE: deflate_stream_error() says why. What was
   * written to the output before is valid. */
  DEFLATE_STREAM_ERROR,
} deflate_stream_status;

deflate_stream *deflate_stream_new(void);
void deflate_stream_free(deflate_stream *s);

/* Inflates from `*in` (`*in_len` bytes, both advanced past what was
 * used) into `out` (room for `out_len` bytes); `*produced` tells how many
 * were written. An error sticks. */
deflate_stream_status deflate_stream_inflate(deflate_stream *s,
                                             const uint8_t **in, size_t *in_len,
                                             uint8_t *out, size_t out_len,
                                             size_t *produced);

/* The CRC-32 of every byte produced so far. */
uint32_t deflate_stream_crc32(const deflate_stream *s);

/* Every byte produced so far. */
uint64_t deflate_stream_total_out(const deflate_stream *s);

/* Why the stream failed (static text), or NULL. */
const char *deflate_stream_error(const deflate_stream *s);

#endif /* TM_DEFLATE_STREAM_H */
