/*
 * Cuts the file's bytes into the segments yajl parses.
 *
 * Two jobs, done in the one pass that tracks whether a byte is inside a
 * string:
 *
 * - Trailing commas. Chrome JSON writers leave a comma before a closing
 *   bracket (`[{...},{...},]`); trace_processor tolerates it, yajl does
 *   not. Every comma outside a string followed, after optional
 *   whitespace, by `]` or `}` is replaced by a space, so the text keeps
 *   its length and every byte its file offset.
 *
 * - Token alignment. yajl reports a parse error's offset relative to the
 *   buffer it was given, clamped at that buffer's start, so a token that
 *   straddles two buffers would move the reported offset with the
 *   host's chunk size. Segments are therefore cut only where no token can
 *   straddle: right after a comma or a string's closing quote outside
 *   strings. A comma that ends a chunk (but for whitespace) is not passed
 *   until the next significant byte tells whether it is a trailing one.
 *   The bytes after the last cut wait in `carry` for the next chunk (or
 *   flush()).
 *
 * Invariants: every byte is scanned once and passed on exactly once, in
 * order, with its file offset (whitespace after a pending comma may be
 * passed on as spaces); `carry` holds only bytes after the last cut point
 * (typically less than one event; at most the longest stretch without a
 * comma or string end, e.g. one long string, which yajl would buffer
 * whole anyway: the reader bounds it by its record budget), or the
 * pending comma alone while `pending_spaces` count the whitespace after
 * it. Chunks that need no blanking are passed on without copying.
 */
#ifndef TM_JSON_SEGMENTER_H
#define TM_JSON_SEGMENTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_text.h"

/* Receives one segment; returns false to stop. */
typedef bool (*json_segment_fn)(void *ctx, const uint8_t *data, size_t len,
                                int64_t file_offset);

typedef struct json_segmenter {
  bool in_string;
  bool after_backslash;
  bool comma_pending;   /* a comma whose next significant byte is unseen */
  int64_t comma_offset; /* its file offset (it waits in `carry`) */
  json_text carry;       /* scanned, not yet passed on */
  int64_t carry_offset; /* file offset of carry.data[0] */
  /* Whitespace after the pending comma that is counted, not carried: once
   * more than 64 KiB would be carried, a chunk of nothing but whitespace
   * after a pending comma leaves the carry as the comma alone, and these
   * bytes are passed on (as spaces) right after it once it is resolved;
   * without a pending comma, such a chunk is cut before. So a run of
   * whitespace costs no memory, however long (the offset of an error
   * after such a run may then depend on the chunking). */
  uint64_t pending_spaces;
  json_text scratch;     /* a copy of a chunk region with a comma blanked */
  TM_VEC(int64_t) blanks; /* file offsets of commas to blank, this chunk */
} json_segmenter;

/* Scans `len` bytes found at `file_offset` and passes on every complete
 * segment. False if the sink stopped. */
bool json_segmenter_feed(json_segmenter *s, const uint8_t *data, size_t len,
                         int64_t file_offset, json_segment_fn sink, void *ctx);

/* Nothing is carried or pending and the last byte scanned ended outside
 * strings (or nothing was scanned): the bytes that come next may be read
 * by someone else, who hands the segmenter whatever they leave unread.
 * The reader's fast path reads whole events from the host's chunks this
 * way, without the segmenter scanning them (json_reader.c): an event it
 * takes ends with a comma whose next significant byte is in the chunk and
 * is neither ']' nor '}', so it holds no comma to blank, and the
 * segmenter, had it scanned those bytes, would be idle after them too. */
static inline bool json_segmenter_idle(const json_segmenter *s) {
  return s->carry.len == 0 && !s->comma_pending && !s->in_string &&
         !s->after_backslash && s->pending_spaces == 0;
}

/* As json_segmenter_feed, but only up to the first comma outside strings
 * whose next significant byte is in `data` and is neither ']' nor '}':
 * what is carried and the bytes up to that comma are passed on (one
 * segment), and the segmenter is idle. Returns the bytes of `data` it
 * took: all of them (as json_segmenter_feed) when there is no such comma,
 * or when a pending comma or a long run of whitespace is being resolved.
 * `*ok` is false if the sink stopped. */
size_t json_segmenter_feed_head(json_segmenter *s, const uint8_t *data,
                                size_t len, int64_t file_offset,
                                json_segment_fn sink, void *ctx, bool *ok);

/* End of input: passes on what is still carried. */
bool json_segmenter_flush(json_segmenter *s, json_segment_fn sink, void *ctx);

void json_segmenter_free(json_segmenter *s);

#endif /* TM_JSON_SEGMENTER_H */
