/*
 * One ftrace text line, split into its fields (docs/formats.md §3.2):
 *
 *   TASK-PID [(TGID)] [CPU] [FLAGS] SECS.FRAC: EVENT: PAYLOAD
 *
 * Pure parsing, no host: the fields borrow the line's bytes. The task is
 * everything before the first "-PID" from which the rest of the grammar
 * matches, so task names may contain spaces, dashes and brackets.
 */
#ifndef TM_SYSTRACE_LINE_H
#define TM_SYSTRACE_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct systrace_text {
  const char *p; /* borrowed, not NUL-terminated */
  size_t len;
} systrace_text;

#define SYSTRACE_NO_TGID INT64_MIN

typedef struct systrace_line {
  systrace_text task;  /* trimmed */
  int64_t pid;         /* the thread id */
  int64_t tgid;        /* SYSTRACE_NO_TGID when absent or "-----" */
  uint32_t cpu;
  int64_t ts_ns;       /* SECS.FRAC as ns, extra digits truncated */
  systrace_text event;
  systrace_text payload; /* trimmed */
} systrace_line;

/* Parses `line` (without its newline). Returns false if it does not match
 * the grammar. */
bool systrace_line_parse(const char *line, size_t len, systrace_line *out);

/* The head of the line read last (through the cpu's ']') and its
 * fields, so that a line of the same head (lines come in runs of one
 * task on one cpu) reads only its rest. Zeroed: nothing kept. */
#define SYSTRACE_MEMO_HEAD 64
typedef struct systrace_line_memo {
  uint32_t head_len; /* 0: nothing kept */
  uint32_t dash_offset;
  uint32_t task_offset;
  uint32_t task_len;
  int64_t pid;
  int64_t tgid;
  uint32_t cpu;
  char head[SYSTRACE_MEMO_HEAD];
} systrace_line_memo;

/* systrace_line_parse, with the same result, through `memo` (one per
 * stream of lines), which it updates. */
bool systrace_line_parse_memo(const char *line, size_t len, systrace_line *out,
                              systrace_line_memo *memo);

/* systrace_parse_int64 for what its inline part does not read: a sign,
 * no digit, more than 18 digits, or a byte that is not a digit. */
bool systrace_parse_int64_slow(systrace_text t, int64_t *out);

/* Parses a decimal int64 filling the whole text (optional sign). The
 * values of marks and kernel events (pids, counters: up to 18 plain
 * digits, which cannot overflow) are read here, without a call; anything
 * else goes to systrace_parse_int64_slow, whose result is the result. */
static inline bool systrace_parse_int64(systrace_text t, int64_t *out) {
  if (t.len == 0 || t.len > 18)
    return systrace_parse_int64_slow(t, out);
  int64_t v = 0;
  for (size_t i = 0; i < t.len; i++) {
    unsigned digit = (unsigned char)t.p[i] - (unsigned)'0';
    if (digit > 9)
      return systrace_parse_int64_slow(t, out);
    v = v * 10 + (int64_t)digit;
  }
  *out = v;
  return true;
}

/* memcmp, not a byte loop: with the literal's length known (the macro
 * below) the compiler compares whole words. */
static inline bool systrace_text_is(systrace_text t, const char *s, size_t n) {
  return t.len == n && memcmp(t.p, s, n) == 0;
}
#define SYSTRACE_TEXT_IS(t, lit) systrace_text_is((t), (lit), sizeof(lit) - 1)

/* Scans eight bytes at a time where the byte order allows it: the fields
 * of a line are short, so a call to memchr costs more than the search. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    defined(__GNUC__)
#define SYSTRACE_WORD_SCANS 1
#define SYSTRACE_ONES 0x0101010101010101ull
#define SYSTRACE_HIGHS 0x8080808080808080ull

static inline uint64_t systrace_load_word(const char *p) {
  uint64_t w;
  memcpy(&w, p, sizeof w);
  return w;
}

/* The high bit of each byte of `w` that equals `c` (exact for the lowest
 * such byte, which is all the scans use: a borrow only moves upward). */
static inline uint64_t systrace_bytes_equal(uint64_t w, char c) {
  uint64_t x = w ^ (SYSTRACE_ONES * (unsigned char)c);
  return (x - SYSTRACE_ONES) & ~x & SYSTRACE_HIGHS;
}
#else
#define SYSTRACE_WORD_SCANS 0
#endif

/* The first byte at or after p that is `a` or `b`, or end. */
static inline const char *systrace_find_either(const char *p, const char *end, char a,
                                               char b) {
#if SYSTRACE_WORD_SCANS
  while (end - p >= 8) {
    uint64_t w = systrace_load_word(p);
    uint64_t hit = systrace_bytes_equal(w, a) | systrace_bytes_equal(w, b);
    if (hit)
      return p + (__builtin_ctzll(hit) >> 3);
    p += 8;
  }
#endif
  while (p < end && *p != a && *p != b)
    p++;
  return p;
}

#endif /* TM_SYSTRACE_LINE_H */
