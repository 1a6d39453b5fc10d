/*
 * The ftrace line grammar. Every scan is bounded by the line length; the
 * search for the "-PID" anchor is linear in the number of dashes, each
 * candidate checked in time proportional to the text up to the event name.
 *
 * Speed: this is a third of a systrace import's instructions, so the scans
 * walk pointers, the runs of blanks that pad the task and the tgid column
 * and the event name are crossed eight bytes at a time on little-endian
 * machines (after a test for none or one blank, the usual case), the
 * kernel's three-digit cpu is read without a scan, and the fraction of
 * the timestamp is scaled once, not per digit. Through a memo
 * (systrace_line_parse_memo) a line whose head, the bytes through the
 * cpu's ']', equals the head of the line read before, at whose first dash
 * the grammar matched, takes pid, tgid, cpu and task from it and reads only
 * the rest (two lines in three of a phone's trace; the head reads only its
 * own bytes, so the same head reads the same). The grammar is the one
 * systrace_line.h states; a line either
 * parses to the same fields as by the byte-by-byte reading or fails as it
 * did (tests/test_systrace_reader.c, "/systrace/line/...").
 */
#include "systrace_line.h"

#include <string.h>

/* Seconds beyond this would overflow int64 nanoseconds. */
#define MAX_SECONDS 9000000000LL

static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }
static inline bool is_space(char c) { return c == ' ' || c == '\t'; }

/* A run of blanks from p (which is not end) on: the padding of the task
 * and pid columns. */
static inline const char *skip_space_run(const char *p, const char *end) {
#if SYSTRACE_WORD_SCANS
  /* Columns are padded with runs of spaces: eight bytes at a time, up to
   * the first byte that is not a space (a tab is then taken below). */
  while (end - p >= 8) {
    uint64_t other = systrace_load_word(p) ^ (SYSTRACE_ONES * ' ');
    if (other) {
      p += __builtin_ctzll(other) >> 3;
      break;
    }
    p += 8;
  }
#endif
  while (p < end && is_space(*p))
    p++;
  return p;
}

/* Most fields are followed by no blank or by one: those two cases are
 * tested first, without entering the scan (which cost ~30 instructions
 * a call, nine calls a line). */
static inline const char *skip_spaces(const char *p, const char *end) {
  if (p >= end || !is_space(*p))
    return p;
  p++;
  if (p >= end || !is_space(*p))
    return p;
  return skip_space_run(p + 1, end);
}

/* The first blank or ':' at or after p, or end. */
static inline const char *find_name_end(const char *p, const char *end) {
#if SYSTRACE_WORD_SCANS
  while (end - p >= 8) {
    uint64_t w = systrace_load_word(p);
    uint64_t hit = systrace_bytes_equal(w, ' ') | systrace_bytes_equal(w, '\t') | systrace_bytes_equal(w, ':');
    if (hit)
      return p + (__builtin_ctzll(hit) >> 3);
    p += 8;
  }
#endif
  while (p < end && !is_space(*p) && *p != ':')
    p++;
  return p;
}

#if SYSTRACE_WORD_SCANS
/* The number of leading decimal digits in the eight bytes of `w` (8 if
 * all are), and in *value the number they spell. */
static inline unsigned word_digits(uint64_t w, uint64_t *value) {
  uint64_t d = w - SYSTRACE_ONES * '0';
  /* A byte is not a digit if it went below '0' (its high bit is set) or
   * is 10 or more (adding 0x76 sets its high bit). A borrow or carry only
   * moves upward, past the first non-digit, so the lowest flag is exact. */
  uint64_t other = (d | (d + SYSTRACE_ONES * 0x76)) & SYSTRACE_HIGHS;
  unsigned n = other ? (unsigned)__builtin_ctzll(other) >> 3 : 8;
  if (n == 0) {
    *value = 0;
    return 0;
  }
  /* The digits moved to the top bytes, zeros below them; then pairs,
   * quads and the halves are combined. */
  d <<= 8 * (8 - n);
  d = (d * 10 + (d >> 8)) & 0x00FF00FF00FF00FFull;
  d = (d * 100 + (d >> 16)) & 0x0000FFFF0000FFFFull;
  d = (d * 10000 + (d >> 32)) & 0xFFFFFFFFull;
  *value = d;
  return n;
}
#endif

/* Reads digits at p; returns the pointer after them, or p if there are
 * none or the number overflows int64. */
static inline const char *read_uint(const char *p, const char *end, int64_t *value) {
  int64_t v = 0;
  const char *start = p;
#if SYSTRACE_WORD_SCANS
  if (end - p >= 8) {
    uint64_t first;
    unsigned n = word_digits(systrace_load_word(p), &first);
    if (n < 8) {
      *value = (int64_t)first;
      return p + n;
    }
    v = (int64_t)first;
    p += 8;
  }
#endif
  /* Eighteen digits cannot overflow: no check for them (the numbers of
   * an atrace mark or a timestamp are all shorter). */
  const char *unchecked = end - start > 18 ? start + 18 : end;
  while (p < unchecked && is_digit(*p)) {
    v = v * 10 + (*p - '0');
    p++;
  }
  while (p < end && is_digit(*p)) {
    if (v > (INT64_MAX - 9) / 10)
      return start;
    v = v * 10 + (*p - '0');
    p++;
  }
  *value = v;
  return p;
}

bool systrace_parse_int64_slow(systrace_text t, int64_t *out) {
  const char *p = t.p, *end = t.p + t.len;
  bool negative = false;
  if (p < end && (*p == '-' || *p == '+'))
    negative = *p++ == '-';
  int64_t v = 0;
  if (p < end && end - p <= 18) {
    /* The values of marks and kernel events: short, and nothing may
     * follow the digits, so one loop checks and reads them. */
    for (const char *q = p; q < end; q++) {
      unsigned digit = (unsigned char)(*q - '0');
      if (digit > 9)
        return false;
      v = v * 10 + digit;
    }
  } else {
    const char *digits_end = read_uint(p, end, &v);
    if (digits_end == p || digits_end != end)
      return false;
  }
  *out = negative ? -v : v;
  return true;
}

static inline bool is_flag_head(char c) {
  return c == '.' || (unsigned char)((c | 0x20) - 'a') < 26;
}
static inline bool is_flag_tail(char c) {
  return c == '.' || is_digit(c) || (unsigned char)(c - 'a') < 6;
}

/* FLAGS: 3 chars of [A-Za-z.] then 1-2 of [0-9a-f.], then a blank.
 * Returns the pointer after them, or p if they are not there. */
static inline __attribute__((always_inline)) const char *skip_flags(const char *p,
                                                                  const char *end) {
  /* The classes below hold no blank, so a blank among the first four
   * bytes fails them: only the fifth and sixth bytes decide the length. */
  size_t avail = (size_t)(end - p), n;
  if (avail < 4)
    return p;
  if (avail == 4 || is_space(p[4]))
    n = 4;
  else if (avail == 5 || is_space(p[5]))
    n = 5;
  else
    return p;
  for (size_t k = 0; k < 3; k++)
    if (!is_flag_head(p[k]))
      return p;
  for (size_t k = 3; k < n; k++)
    if (!is_flag_tail(p[k]))
      return p;
  return p + n;
}

/* SECS '.' FRAC ':' at p; returns the pointer after ':' or NULL. */
static inline const char *read_timestamp(const char *p, const char *end, int64_t *ts_ns) {
  static const int64_t scale[10] = {1000000000, 100000000, 10000000, 1000000, 100000,
                                    10000,      1000,      100,      10,      1};
  int64_t secs = 0;
  const char *q = read_uint(p, end, &secs);
  if (q == p || q >= end || *q != '.' || secs > MAX_SECONDS)
    return NULL;
  q++;
  /* The first nine digits are the nanoseconds; more are truncated. */
  const char *frac_start = q;
  const char *nine = end - q > 9 ? q + 9 : end;
  int64_t frac = 0;
#if SYSTRACE_WORD_SCANS
  if (end - q >= 8) {
    uint64_t first;
    unsigned n = word_digits(systrace_load_word(q), &first);
    frac = (int64_t)first;
    q += n;
    if (n < 8)
      nine = q;
  }
#endif
  while (q < nine && is_digit(*q)) {
    frac = frac * 10 + (*q - '0');
    q++;
  }
  size_t digits = (size_t)(q - frac_start);
  while (q < end && is_digit(*q))
    q++;
  if (digits == 0 || q >= end || *q != ':')
    return NULL;
  *ts_ns = secs * 1000000000 + frac * scale[digits];
  return q + 1;
}

/* The head of the grammar from the '-' at `dash` through the cpu's ']':
 * pid, tgid and cpu. Returns the byte after the ']', or NULL. What it
 * reads and returns depends on the bytes from `dash` to that ']' alone. */
static inline __attribute__((always_inline)) const char *parse_head(const char *dash, const char *end,
                                                                  systrace_line *out) {
  const char *p = dash + 1;
  const char *q = read_uint(p, end, &out->pid);
  if (q == p)
    return NULL;
  p = skip_spaces(q, end);
  if (p == q && p < end && *p != '(' && *p != '[')
    return NULL;
  out->tgid = SYSTRACE_NO_TGID;
  if (p < end && *p == '(') {
    p = skip_spaces(p + 1, end);
    int64_t tgid = 0;
    q = read_uint(p, end, &tgid);
    if (q > p) {
      out->tgid = tgid;
    } else {
      while (q < end && *q == '-')
        q++;
    }
    p = skip_spaces(q, end);
    if (p >= end || *p != ')')
      return NULL;
    p = skip_spaces(p + 1, end);
  }
  if (p >= end || *p != '[')
    return NULL;
  int64_t cpu = 0;
  if (end - p >= 5 && is_digit(p[1]) && is_digit(p[2]) && is_digit(p[3]) && p[4] == ']') {
    /* The kernel prints the cpu as three digits: read_uint's result
     * without its word of arithmetic. */
    cpu = (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0');
    q = p + 4;
  } else {
    q = read_uint(p + 1, end, &cpu);
  }
  if (q == p + 1 || q >= end || *q != ']' || cpu > UINT32_MAX)
    return NULL;
  out->cpu = (uint32_t)cpu;
  return q + 1;
}

/* The rest of the grammar from `p` (after the cpu's ']'): flags,
 * timestamp, event and payload. */
static inline __attribute__((always_inline)) bool parse_rest(const char *p, const char *end,
                                                            systrace_line *out) {
  p = skip_spaces(p, end);
  if (p < end && !is_digit(*p))
    p = skip_spaces(skip_flags(p, end), end);
  p = read_timestamp(p, end, &out->ts_ns);
  if (!p)
    return false;
  const char *q = skip_spaces(p, end);
  if (q == p)
    return false;
  p = q;
  q = find_name_end(p, end);
  if (q == p || q >= end || *q != ':')
    return false;
  out->event = (systrace_text){p, (size_t)(q - p)};
  p = skip_spaces(q + 1, end);
  const char *payload_end = end;
  while (payload_end > p && (is_space(payload_end[-1]) || payload_end[-1] == '\r'))
    payload_end--;
  out->payload = (systrace_text){p, (size_t)(payload_end - p)};
  return true;
}

/* The task: from the line's start `s` to `dash`, trimmed. */
static systrace_text task_before(const char *s, const char *dash) {
  const char *task_start = skip_spaces(s, dash);
  const char *task_end = dash;
  while (task_end > task_start && is_space(task_end[-1]))
    task_end--;
  return (systrace_text){task_start, (size_t)(task_end - task_start)};
}

/* Matches the grammar from the dashes at or after `from` in turn; the
 * first that matches is the line's. Returns the byte after its head
 * (parse_head), or NULL; `*first` says whether that dash (`*matched`) was
 * the first one tried. */
static const char *parse_dashes(const char *s, const char *end, const char *from,
                                systrace_line *out, const char **matched, bool *first) {
  *first = true;
  for (const char *dash = from; (dash = memchr(dash, '-', (size_t)(end - dash))) != NULL;
       dash++) {
    const char *rest = parse_head(dash, end, out);
    if (rest && parse_rest(rest, end, out)) {
      out->task = task_before(s, dash);
      *matched = dash;
      return rest;
    }
    *first = false;
  }
  return NULL;
}

bool systrace_line_parse(const char *line, size_t len, systrace_line *out) {
  const char *matched;
  bool first;
  return parse_dashes(line, line + len, line, out, &matched, &first) != NULL;
}

/* a[0, n) == b[0, n) for 8 <= n, a word at a time (the last one
 * overlapping). */
static inline bool head_equal(const char *a, const char *b, size_t n) {
  uint64_t diff = 0, u, v;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    memcpy(&u, a + i, 8);
    memcpy(&v, b + i, 8);
    diff |= u ^ v;
  }
  if (i < n) {
    memcpy(&u, a + n - 8, 8);
    memcpy(&v, b + n - 8, 8);
    diff |= u ^ v;
  }
  return diff == 0;
}

bool systrace_line_parse_memo(const char *line, size_t len, systrace_line *out,
                              systrace_line_memo *memo) {
  const char *end = line + len;
  const char *from = line;
  size_t k = memo->head_len;
  if (k && k <= len && head_equal(line, memo->head, k)) {
    /* The same head as the line memo was taken from, whose first dash
     * matched: the grammar reads the same pid, tgid, cpu and task. */
    out->pid = memo->pid;
    out->tgid = memo->tgid;
    out->cpu = memo->cpu;
    if (parse_rest(line + k, end, out)) {
      out->task = (systrace_text){line + memo->task_offset, memo->task_len};
      return true;
    }
    from = line + memo->dash_offset + 1; /* that dash fails here too */
  }
  const char *matched;
  bool first;
  const char *head_end = parse_dashes(line, end, from, out, &matched, &first);
  if (!head_end)
    return false;
  size_t head_len = (size_t)(head_end - line);
  /* Kept only when the line's first dash matched: a later one may match
   * in a line of the same head only because the rest differs. */
  if (first && from == line && head_len >= 8 && head_len <= SYSTRACE_MEMO_HEAD) {
    if (len >= SYSTRACE_MEMO_HEAD)
      memcpy(memo->head, line, SYSTRACE_MEMO_HEAD);
    else
      memcpy(memo->head, line, head_len);
    memo->head_len = (uint32_t)head_len;
    memo->dash_offset = (uint32_t)(matched - line);
    memo->task_offset = (uint32_t)(out->task.p - line);
    memo->task_len = (uint32_t)out->task.len;
    memo->pid = out->pid;
    memo->tgid = out->tgid;
    memo->cpu = out->cpu;
  }
  return true;
}
