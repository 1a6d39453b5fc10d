/*
 * The ftrace line grammar. Every scan is bounded by the line length; the
 * search for the "-PID" anchor is linear in the number of dashes, each
 * candidate checked in time proportional to the text up to the event name.
 */
#include "systrace_line.h"

#include <string.h>

/* Seconds beyond this would overflow int64 nanoseconds. */
#define MAX_SECONDS 9000000000LL

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_space(char c) { return c == ' ' || c == '\t'; }

static size_t skip_spaces(const char *s, size_t i, size_t len) {
  while (i < len && is_space(s[i]))
    i++;
  return i;
}

/* Reads digits at s[i]; returns the index after them, or i if none. */
static size_t read_uint(const char *s, size_t i, size_t len, int64_t *value) {
  int64_t v = 0;
  size_t start = i;
  /* Eighteen digits cannot overflow: no check for them (the numbers of
   * an atrace mark or a timestamp are all shorter). */
  size_t unchecked = len - i > 18 ? i + 18 : len;
  while (i < unchecked && is_digit(s[i])) {
    v = v * 10 + (s[i] - '0');
    i++;
  }
  while (i < len && is_digit(s[i])) {
    if (v > (INT64_MAX - 9) / 10)
      return start;
    v = v * 10 + (s[i] - '0');
    i++;
  }
  *value = v;
  return i;
}

bool systrace_parse_int64(systrace_text t, int64_t *out) {
  size_t i = 0;
  bool negative = false;
  if (i < t.len && (t.p[i] == '-' || t.p[i] == '+'))
    negative = t.p[i++] == '-';
  int64_t v = 0;
  size_t end = read_uint(t.p, i, t.len, &v);
  if (end == i || end != t.len)
    return false;
  *out = negative ? -v : v;
  return true;
}

static bool is_flag_head(char c) {
  return c == '.' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
static bool is_flag_tail(char c) {
  return c == '.' || is_digit(c) || (c >= 'a' && c <= 'f');
}

/* FLAGS: 3 chars of [A-Za-z.] then 1-2 of [0-9a-f.], then a space. */
static size_t skip_flags(const char *s, size_t i, size_t len) {
  size_t j = i;
  while (j < len && !is_space(s[j]))
    j++;
  size_t n = j - i;
  if (n < 4 || n > 5)
    return i;
  for (size_t k = 0; k < 3; k++)
    if (!is_flag_head(s[i + k]))
      return i;
  for (size_t k = 3; k < n; k++)
    if (!is_flag_tail(s[i + k]))
      return i;
  return j;
}

/* SECS '.' FRAC ':' at s[i]; returns the index after ':' or 0. */
static size_t read_timestamp(const char *s, size_t i, size_t len,
                             int64_t *ts_ns) {
  int64_t secs = 0;
  size_t j = read_uint(s, i, len, &secs);
  if (j == i || j >= len || s[j] != '.' || secs > MAX_SECONDS)
    return 0;
  j++;
  int64_t frac = 0, scale = 1000000000;
  size_t digits = 0;
  while (j < len && is_digit(s[j])) {
    if (scale > 1) {
      scale /= 10;
      frac += (s[j] - '0') * scale;
    }
    digits++;
    j++;
  }
  if (digits == 0 || j >= len || s[j] != ':')
    return 0;
  *ts_ns = secs * 1000000000 + frac;
  return j + 1;
}

/* Matches the grammar from the '-' at `dash`. */
static bool parse_from(const char *s, size_t len, size_t dash,
                       systrace_line *out) {
  size_t i = dash + 1;
  size_t j = read_uint(s, i, len, &out->pid);
  if (j == i)
    return false;
  i = skip_spaces(s, j, len);
  if (i == j && i < len && s[i] != '(' && s[i] != '[')
    return false;
  out->tgid = SYSTRACE_NO_TGID;
  if (i < len && s[i] == '(') {
    i = skip_spaces(s, i + 1, len);
    int64_t tgid = 0;
    j = read_uint(s, i, len, &tgid);
    if (j > i) {
      out->tgid = tgid;
    } else {
      while (j < len && s[j] == '-')
        j++;
    }
    i = skip_spaces(s, j, len);
    if (i >= len || s[i] != ')')
      return false;
    i = skip_spaces(s, i + 1, len);
  }
  if (i >= len || s[i] != '[')
    return false;
  int64_t cpu = 0;
  j = read_uint(s, i + 1, len, &cpu);
  if (j == i + 1 || j >= len || s[j] != ']' || cpu > UINT32_MAX)
    return false;
  out->cpu = (uint32_t)cpu;
  i = skip_spaces(s, j + 1, len);
  if (i < len && !is_digit(s[i]))
    i = skip_spaces(s, skip_flags(s, i, len), len);
  i = read_timestamp(s, i, len, &out->ts_ns);
  if (i == 0)
    return false;
  j = skip_spaces(s, i, len);
  if (j == i)
    return false;
  i = j;
  while (j < len && !is_space(s[j]) && s[j] != ':')
    j++;
  if (j == i || j >= len || s[j] != ':')
    return false;
  out->event = (systrace_text){s + i, j - i};
  i = skip_spaces(s, j + 1, len);
  size_t end = len;
  while (end > i && (is_space(s[end - 1]) || s[end - 1] == '\r'))
    end--;
  out->payload = (systrace_text){s + i, end - i};
  size_t task_start = skip_spaces(s, 0, dash);
  size_t task_end = dash;
  while (task_end > task_start && is_space(s[task_end - 1]))
    task_end--;
  out->task = (systrace_text){s + task_start, task_end - task_start};
  return true;
}

bool systrace_line_parse(const char *line, size_t len, systrace_line *out) {
  const char *end = line + len;
  for (const char *dash = line; (dash = memchr(dash, '-', (size_t)(end - dash))) != NULL;
       dash++)
    if (parse_from(line, len, (size_t)(dash - line), out))
      return true;
  return false;
}
