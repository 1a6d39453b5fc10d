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

/* Parses a decimal int64 filling the whole text (optional sign). */
bool systrace_parse_int64(systrace_text t, int64_t *out);

static inline bool systrace_text_is(systrace_text t, const char *s, size_t n) {
  if (t.len != n)
    return false;
  for (size_t i = 0; i < n; i++)
    if (t.p[i] != s[i])
      return false;
  return true;
}
#define SYSTRACE_TEXT_IS(t, lit) systrace_text_is((t), (lit), sizeof(lit) - 1)

#endif /* TM_SYSTRACE_LINE_H */
