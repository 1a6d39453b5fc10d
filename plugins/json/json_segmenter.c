/*
 * Segmenter; see json_segmenter.h. The scan classifies 64 bytes at a time
 * into bit masks (quotes, commas, closers), derives which bytes are inside
 * strings with a prefix XOR, and only then looks at individual positions:
 * the closers (for trailing commas) and the last cut candidates.
 */
#include "json_segmenter.h"

#include <stdlib.h>
#include <string.h>

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

static bool is_json_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_closer(uint8_t c) { return c == ']' || c == '}'; }

#define NO_CUT SIZE_MAX

/* --- 64 bytes at a time ---------------------------------------------------
 *
 * A block of 64 bytes is classified into bit masks (bit k = byte k):
 * quotes, commas, closers, backslashes, then `state` (inside a string
 * after this byte; an opening quote counts as inside) by a prefix XOR of
 * the quote bits. Blocks with a backslash, or right after one, and the
 * last partial block take the byte-wise path, which yields the same
 * masks with escaped quotes left out. SSE2 does the comparisons where
 * the compiler offers it; elsewhere 8-byte words do (SWAR). */

#define BLOCK 64u

typedef struct block_bits {
  uint64_t state;
  uint64_t quote;  /* unescaped quotes */
  uint64_t comma;  /* ',' (outside strings once masked with ~state) */
  uint64_t closer; /* ']' or '}' (idem) */
} block_bits;

#if defined(__SSE2__) && !defined(TM_JSON_NO_SIMD)
#include <emmintrin.h>

static inline uint64_t match16(__m128i v, __m128i c, unsigned shift) {
  return (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, c)) << shift;
}

/* Returns the backslash mask; fills quote, comma and closer. */
static inline uint64_t match_block(const uint8_t *p, block_bits *b) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i comma = _mm_set1_epi8(',');
  const __m128i brace = _mm_set1_epi8('}');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i case_bit = _mm_set1_epi8(0x20);
  uint64_t q = 0, c = 0, k = 0, bs = 0;
  for (unsigned i = 0; i < BLOCK / 16; i++) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
    q |= match16(v, quote, 16 * i);
    c |= match16(v, comma, 16 * i);
    /* ']' and '}' differ only in bit 0x20. */
    k |= match16(_mm_or_si128(v, case_bit), brace, 16 * i);
    bs |= match16(v, backslash, 16 * i);
  }
  b->quote = q;
  b->comma = c;
  b->closer = k;
  return bs;
}
#else
#define ONES 0x0101010101010101ull
#define LOWS 0x7f7f7f7f7f7f7f7full

/* High bit of each byte of `v` that equals `c`, exactly. */
static inline uint64_t bytes_equal(uint64_t v, uint8_t c) {
  uint64_t t = v ^ (ONES * c);
  return ~(((t & LOWS) + LOWS) | t | LOWS);
}

/* The high bits of the 8 bytes, as an 8-bit mask (bit k = byte k). */
static inline uint64_t gather(uint64_t highs) {
  return ((highs >> 7) * 0x0102040810204080ull) >> 56;
}

static inline uint64_t match_block(const uint8_t *p, block_bits *b) {
  uint64_t q = 0, c = 0, k = 0, bs = 0;
  for (unsigned i = 0; i < BLOCK / 8; i++) {
    uint64_t v;
    memcpy(&v, p + 8 * i, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v); /* byte k of the text at bits 8k.. */
#endif
    q |= gather(bytes_equal(v, '"')) << (8 * i);
    c |= gather(bytes_equal(v, ',')) << (8 * i);
    k |= gather(bytes_equal(v | (ONES * 0x20u), '}')) << (8 * i);
    bs |= gather(bytes_equal(v, '\\')) << (8 * i);
  }
  b->quote = q;
  b->comma = c;
  b->closer = k;
  return bs;
}
#endif

/* Bit k = XOR of bits 0..k: the quote parity after each byte. */
static inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

static inline unsigned lowest_bit(uint64_t m) {
#if defined(__GNUC__)
  return (unsigned)__builtin_ctzll(m);
#else
  unsigned k = 0;
  while (!(m & 1u)) {
    m >>= 1;
    k++;
  }
  return k;
#endif
}

static inline unsigned highest_bit(uint64_t m) {
#if defined(__GNUC__)
  return 63u - (unsigned)__builtin_clzll(m);
#else
  unsigned k = 0;
  while (m >>= 1)
    k++;
  return k;
#endif
}

static void classify_bytes(const uint8_t *p, size_t n, bool *in_string,
                           bool *after_backslash, block_bits *b) {
  *b = (block_bits){0, 0, 0, 0};
  for (size_t k = 0; k < n; k++) {
    uint8_t c = p[k];
    uint64_t bit = 1ull << k;
    if (*in_string) {
      if (*after_backslash)
        *after_backslash = false;
      else if (c == '\\')
        *after_backslash = true;
      else if (c == '"') {
        *in_string = false;
        b->quote |= bit;
        continue;
      }
      b->state |= bit;
    } else if (c == '"') {
      *in_string = true;
      b->quote |= bit;
      b->state |= bit;
    } else if (c == ',') {
      b->comma |= bit;
    } else if (is_closer(c)) {
      b->closer |= bit;
    }
  }
}

/* Classifies the next block of `avail` bytes at p (at most BLOCK of them):
 * eight at a time when the block is whole, outside an escape and free of
 * backslashes (match_block), byte by byte otherwise. */
static inline void classify_block(const uint8_t *p, size_t avail, bool *in_string,
                                  bool *after_backslash, block_bits *b) {
  size_t n = avail < BLOCK ? avail : BLOCK;
  if (n < BLOCK || *after_backslash || match_block(p, b)) {
    classify_bytes(p, n, in_string, after_backslash, b);
  } else {
    b->state = prefix_xor(b->quote) ^ (*in_string ? ~0ull : 0ull);
    *in_string = b->state >> 63;
  }
}

typedef struct cuts {
  size_t first;  /* first cut point (cut before this index) */
  size_t last;   /* last one */
  size_t second; /* the one before `last` */
} cuts;

/* Folds the candidates of the last two blocks that had any into `c`. */
static void settle_cuts(cuts *c, const size_t base[2],
                        const uint64_t mask[2]) {
  if (!mask[0])
    return;
  unsigned top = highest_bit(mask[0]);
  uint64_t rest = mask[0] & ~(1ull << top);
  if (rest)
    c->second = base[0] + highest_bit(rest) + 1;
  else if (mask[1])
    c->second = base[1] + highest_bit(mask[1]) + 1;
  else
    c->second = c->last;
  c->last = base[0] + top + 1;
}


/* Blanks the commas of this chunk that lie in [begin, begin + len) of a
 * buffer we own. */
static void apply_blanks(const json_segmenter *s, char *bytes, size_t len,
                         int64_t begin) {
  for (size_t i = 0; i < s->blanks.len; i++) {
    int64_t at = s->blanks.data[i];
    if (at >= begin && at < begin + (int64_t)len)
      bytes[at - begin] = ' ';
  }
}

static bool has_blank_in(const json_segmenter *s, int64_t begin, size_t len) {
  for (size_t i = 0; i < s->blanks.len; i++)
    if (s->blanks.data[i] >= begin && s->blanks.data[i] < begin + (int64_t)len)
      return true;
  return false;
}

static void carry_append(json_segmenter *s, const uint8_t *data, size_t len,
                         int64_t file_offset) {
  if (s->carry.len == 0)
    s->carry_offset = file_offset;
  size_t before = s->carry.len;
  json_text_append(&s->carry, data, len);
  apply_blanks(s, s->carry.data + before, len, file_offset);
}

/* Closers outside strings whose previous significant byte, in this chunk,
 * is a comma: that comma is a trailing one. (A previous significant byte
 * before the chunk is the pending comma, resolved by the caller.) */
static void note_trailing_commas(json_segmenter *s, const uint8_t *data,
                                 size_t base, uint64_t closers,
                                 int64_t file_offset) {
  while (closers) {
    unsigned k = lowest_bit(closers);
    closers &= closers - 1u;
    size_t j = base + k;
    while (j > 0 && is_json_space(data[j - 1]))
      j--;
    if (j > 0 && data[j - 1] == ',')
      tm_vec_push(&s->blanks, file_offset + (int64_t)(j - 1));
  }
}

/* Scans the chunk, updating the string state, and finds its cut points
 * and the commas to blank. This loop sees every byte of the file. */
static void scan(json_segmenter *s, const uint8_t *data, size_t len,
                 int64_t file_offset, cuts *c) {
  if (s->comma_pending) {
    size_t i = 0;
    while (i < len && is_json_space(data[i]))
      i++;
    if (i == len)
      return; /* still undecided */
    s->comma_pending = false;
    /* The pending comma was carried, so it is blanked there. */
    if (is_closer(data[i]) && s->comma_offset >= s->carry_offset &&
        s->comma_offset < s->carry_offset + (int64_t)s->carry.len)
      s->carry.data[s->comma_offset - s->carry_offset] = ' ';
    /* Cutting before the first significant byte is safe: the comma
     * (or its blank) ended whatever came before. */
    c->first = c->last = i;
    c->second = NO_CUT;
  }

  bool in_string = s->in_string;
  bool after_backslash = s->after_backslash;
  /* The last two blocks with cut candidates; bits folded in at the end. */
  size_t cut_base[2] = {0, 0};
  uint64_t cut_mask[2] = {0, 0};
  for (size_t base = 0; base < len; base += BLOCK) {
    block_bits b;
    classify_block(data + base, len - base, &in_string, &after_backslash, &b);
    uint64_t outside = ~b.state;
    /* Cut after a closing quote or a comma outside strings. */
    uint64_t candidates = (b.quote | b.comma) & outside;
    if (candidates) {
      if (c->first == NO_CUT)
        c->first = base + lowest_bit(candidates) + 1;
      cut_base[1] = cut_base[0];
      cut_mask[1] = cut_mask[0];
      cut_base[0] = base;
      cut_mask[0] = candidates;
    }
    uint64_t closers = b.closer & outside;
    if (closers)
      note_trailing_commas(s, data, base, closers, file_offset);
  }
  s->in_string = in_string;
  s->after_backslash = after_backslash;
  settle_cuts(c, cut_base, cut_mask);

  /* A comma as the last significant byte waits for the next chunk to
   * know whether it is a trailing one: no cut may pass it. */
  size_t end = len;
  while (end > 0 && is_json_space(data[end - 1]))
    end--;
  if (end > 0 && !in_string && data[end - 1] == ',') {
    s->comma_pending = true;
    s->comma_offset = file_offset + (int64_t)(end - 1);
    if (c->last == end) {
      if (c->first == end)
        c->first = c->last = NO_CUT;
      else
        c->last = c->second;
    }
  }
}

/* Whitespace carried past this is cut before or squeezed. */
#define SQUEEZE_AFTER ((size_t)64 * 1024)

static const uint8_t spaces[64 * 1024] = {[0 ... 64 * 1024 - 1] = ' '};

/* Passes on the carry (the pending comma, or its blank, alone) and the
 * whitespace counted after it, as spaces at their own offsets. */
static bool pass_pending_spaces(json_segmenter *s, json_segment_fn sink,
                                void *ctx) {
  if (s->carry.len > 0 &&
      !sink(ctx, (const uint8_t *)s->carry.data, s->carry.len, s->carry_offset))
    return false;
  int64_t at = s->carry_offset + (int64_t)s->carry.len;
  s->carry.len = 0;
  while (s->pending_spaces > 0) {
    size_t n = (size_t)MIN(s->pending_spaces, (uint64_t)sizeof spaces);
    if (!sink(ctx, spaces, n, at))
      return false;
    at += (int64_t)n;
    s->pending_spaces -= n;
  }
  return true;
}

/* A chunk of nothing but whitespace after the pending comma: everything
 * carried before the comma is passed on (a cut before a comma splits no
 * token), and the comma alone stays, the whitespace after it counted. */
static bool squeeze_spaces(json_segmenter *s, size_t len, json_segment_fn sink,
                           void *ctx) {
  size_t comma = (size_t)(s->comma_offset - s->carry_offset);
  if (comma > 0) {
    if (!sink(ctx, (const uint8_t *)s->carry.data, comma, s->carry_offset))
      return false;
    memmove(s->carry.data, s->carry.data + comma, s->carry.len - comma);
    s->carry.len -= comma;
    s->carry_offset = s->comma_offset;
  }
  s->pending_spaces += (s->carry.len - 1) + len;
  s->carry.len = 1;
  return true;
}

static bool all_space(const uint8_t *data, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!is_json_space(data[i]))
      return false;
  return true;
}

/* Passes the `n` bytes at file offset `begin` to `sink`, as a scratch copy
 * with the noted trailing commas blanked when one falls among them. */
static bool sink_blanked(json_segmenter *s, const uint8_t *bytes, size_t n, int64_t begin,
                         json_segment_fn sink, void *ctx) {
  if (has_blank_in(s, begin, n)) {
    s->scratch.len = 0;
    json_text_append(&s->scratch, bytes, n);
    apply_blanks(s, s->scratch.data, n, begin);
    bytes = (const uint8_t *)s->scratch.data;
  }
  return sink(ctx, bytes, n, begin);
}

bool json_segmenter_feed(json_segmenter *s, const uint8_t *data, size_t len,
                         int64_t file_offset, json_segment_fn sink, void *ctx) {
  cuts c = {NO_CUT, NO_CUT, NO_CUT};
  s->blanks.len = 0;
  bool was_pending = s->comma_pending;
  /* Only a long run of whitespace is cut or squeezed: a cut there could
   * move a later error's reported offset with the chunking, which no
   * ordinary file may see. */
  if (!s->in_string && s->carry.len + len > SQUEEZE_AFTER && all_space(data, len)) {
    if (was_pending && s->carry.len > 0 && s->comma_offset >= s->carry_offset)
      return squeeze_spaces(s, len, sink, ctx);
    /* Whitespace outside strings ends any token: cut before it, so a long
     * run of it is never carried. */
    if (!was_pending) {
      if (s->carry.len > 0 &&
          !sink(ctx, (const uint8_t *)s->carry.data, s->carry.len, s->carry_offset))
        return false;
      s->carry.len = 0;
      return sink(ctx, data, len, file_offset);
    }
  }
  scan(s, data, len, file_offset, &c);
  /* The pending comma resolved (a chunk of only whitespace was squeezed
   * above): it and the spaces counted after it go first, then this chunk
   * as if the carry were empty. */
  if (was_pending && s->pending_spaces > 0 && !pass_pending_spaces(s, sink, ctx))
    return false;
  if (c.last == NO_CUT) {
    carry_append(s, data, len, file_offset);
    return true;
  }

  size_t direct = 0; /* start of the bytes passed on from `data` itself */
  if (s->carry.len) {
    carry_append(s, data, c.first, file_offset);
    if (!sink(ctx, (const uint8_t *)s->carry.data, s->carry.len,
              s->carry_offset))
      return false;
    s->carry.len = 0;
    direct = c.first;
  }
  if (c.last > direct &&
      !sink_blanked(s, data + direct, c.last - direct, file_offset + (int64_t)direct, sink,
                    ctx))
    return false;
  if (c.last < len)
    carry_append(s, data + c.last, len - c.last, file_offset + (int64_t)c.last);
  return true;
}

/* The first comma outside strings at or after block position `base` (its
 * mask `commas`) whose next significant byte is in data and is not a
 * closer: the index after it; NO_CUT if none. */
static size_t clean_comma(const uint8_t *data, size_t len, size_t base,
                          uint64_t commas) {
  while (commas) {
    size_t j = base + lowest_bit(commas);
    commas &= commas - 1u;
    size_t q = j + 1;
    while (q < len && is_json_space(data[q]))
      q++;
    if (q == len)
      return NO_CUT; /* only whitespace follows: no later comma either */
    if (!is_closer(data[q]))
      return j + 1;
  }
  return NO_CUT;
}

size_t json_segmenter_feed_head(json_segmenter *s, const uint8_t *data,
                                size_t len, int64_t file_offset,
                                json_segment_fn sink, void *ctx, bool *ok) {
  /* A pending comma or counted whitespace: the general feed resolves them. */
  if (s->comma_pending || s->pending_spaces > 0 ||
      (!s->in_string && s->carry.len + len > SQUEEZE_AFTER &&
       all_space(data, len))) {
    *ok = json_segmenter_feed(s, data, len, file_offset, sink, ctx);
    return len;
  }
  s->blanks.len = 0;
  bool in_string = s->in_string;
  bool after_backslash = s->after_backslash;
  size_t cut = NO_CUT;
  for (size_t base = 0; base < len && cut == NO_CUT; base += BLOCK) {
    block_bits b;
    classify_block(data + base, len - base, &in_string, &after_backslash, &b);
    uint64_t outside = ~b.state;
    /* Trailing commas before the cut are blanked in the segment (those
     * noted after it are noted again by whoever scans them next). */
    uint64_t closers = b.closer & outside;
    if (closers)
      note_trailing_commas(s, data, base, closers, file_offset);
    uint64_t commas = b.comma & outside;
    if (commas)
      cut = clean_comma(data, len, base, commas);
  }
  if (cut == NO_CUT) {
    /* No such comma: the general feed (which scans the bytes again;
     * rare: a chunk inside one long token, or ending the array). */
    *ok = json_segmenter_feed(s, data, len, file_offset, sink, ctx);
    return len;
  }
  /* A comma ends no string and escapes nothing: idle after it. */
  s->in_string = false;
  s->after_backslash = false;
  if (s->carry.len) {
    carry_append(s, data, cut, file_offset);
    *ok = sink(ctx, (const uint8_t *)s->carry.data, s->carry.len,
               s->carry_offset);
    s->carry.len = 0;
    return cut;
  }
  *ok = sink_blanked(s, data, cut, file_offset, sink, ctx);
  return cut;
}

bool json_segmenter_flush(json_segmenter *s, json_segment_fn sink, void *ctx) {
  if (s->pending_spaces > 0)
    return pass_pending_spaces(s, sink, ctx);
  if (s->carry.len == 0)
    return true;
  bool ok = sink(ctx, (const uint8_t *)s->carry.data, s->carry.len,
                 s->carry_offset);
  s->carry.len = 0;
  return ok;
}

void json_segmenter_free(json_segmenter *s) {
  tm_vec_free(&s->carry);
  tm_vec_free(&s->scratch);
  tm_vec_free(&s->blanks);
}
