/*
 * The wrapper state machine; see systrace_wrapper.h.
 */
#include "systrace_wrapper.h"

#include <string.h>

#include "systrace_line.h"

static const char *find(const char *s, size_t len, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0 || len < n)
    return NULL;
  for (size_t i = 0; i + n <= len; i++)
    if (s[i] == needle[0] && memcmp(s + i, needle, n) == 0)
      return s + i;
  return NULL;
}

static bool starts_with(const char *s, size_t len, const char *prefix) {
  size_t n = strlen(prefix);
  return len >= n && memcmp(s, prefix, n) == 0;
}

static bool only_digits(const char *s, size_t len) {
  if (len == 0)
    return false;
  for (size_t i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

static size_t trim_right(const char *s, size_t len) {
  while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
    len--;
  return len;
}

static bool is_blank(const char *s, size_t len) {
  return trim_right(s, len) == 0;
}

/* Header lines of the plain forms, skipped before the first data line. */
static bool is_plain_header(const char *s, size_t len) {
  len = trim_right(s, len);
  if (len == 6 && memcmp(s, "TRACE:", 6) == 0)
    return true;
  if (starts_with(s, len, "cpus=") && only_digits(s + 5, len - 5))
    return true;
  return starts_with(s, len, "version = ") && only_digits(s + 10, len - 10);
}

static systrace_line_kind plain_line(systrace_wrapper *w, const char *s,
                                     size_t len) {
  if (is_blank(s, len) || s[0] == '#')
    return LINE_SKIP;
  if (!w->data_seen && is_plain_header(s, len))
    return LINE_SKIP;
  w->data_seen = true;
  return LINE_DATA;
}

/* Removes the JavaScript escapes a string literal line may hold. */
static size_t js_unescape(char *s, size_t len) {
  size_t out = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '\\' && i + 1 < len &&
        (s[i + 1] == '\\' || s[i + 1] == '"' || s[i + 1] == '\''))
      i++;
    s[out++] = s[i];
  }
  return out;
}

static systrace_line_kind legacy_line(systrace_wrapper *w, char *s,
                                      size_t *len) {
  size_t n = trim_right(s, *len);
  if (n >= 3 && memcmp(s + n - 3, "\\n\\", 3) == 0) {
    n -= 3;
  } else {
    /* The string's last line: `...\n";` (or a bare `";`). */
    const char *end = find(s, n, "\";");
    w->state = WRAP_DONE;
    if (!end)
      return LINE_SKIP;
    n = (size_t)(end - s);
    if (n >= 2 && memcmp(s + n - 2, "\\n", 2) == 0)
      n -= 2;
  }
  *len = js_unescape(s, n);
  return plain_line(w, s, *len);
}

static systrace_line_kind html_line(systrace_wrapper *w, char *s,
                                    size_t *len) {
  switch (w->state) {
  case WRAP_HTML_OUTSIDE:
    if (find(s, *len, "<script class=\"trace-data\"")) {
      w->state = WRAP_HTML_HEADER;
      w->block_start = true;
      w->block_header = false;
    }
    else if (find(s, *len, "var linuxPerfData = \"\\"))
      w->state = WRAP_LEGACY;
    return LINE_SKIP;
  case WRAP_HTML_HEADER: {
    bool first = w->block_start;
    w->block_start = false;
    systrace_line parsed;
    if (first && trim_right(s, *len) == 12 && memcmp(s, "PROCESS DUMP", 12) == 0) {
      w->state = WRAP_HTML_DUMP;
    } else if (find(s, *len, "</script>")) {
      w->state = WRAP_HTML_OUTSIDE;
    } else if (is_blank(s, *len)) {
      /* nothing decided yet */
    } else if (s[0] == '#') {
      if (find(s, *len, "TASK-PID"))
        w->state = WRAP_HTML_DATA;
      else
        w->block_header = true;
    } else if (w->block_header || systrace_line_parse(s, *len, &parsed)) {
      /* ftrace text without the TASK-PID legend: its lines are data (and
       * counted as failures if they do not parse), never dropped
       * silently. */
      w->state = WRAP_HTML_DATA;
      return plain_line(w, s, *len);
    } else {
      w->state = WRAP_HTML_OTHER;
    }
    return LINE_SKIP;
  }
  case WRAP_HTML_OTHER:
    if (find(s, *len, "</script>"))
      w->state = WRAP_HTML_OUTSIDE;
    return LINE_SKIP;
  case WRAP_HTML_DUMP: {
    const char *end = find(s, *len, "</script>");
    if (end) {
      w->state = WRAP_HTML_OUTSIDE;
      *len = (size_t)(end - s);
    }
    return is_blank(s, *len) ? LINE_SKIP : LINE_PROCESS_DUMP;
  }
  default: { /* WRAP_HTML_DATA */
    const char *end = find(s, *len, "</script>");
    if (end) {
      w->state = WRAP_HTML_OUTSIDE; /* another ftrace block may follow */
      *len = (size_t)(end - s);
    }
    if (*len == 0)
      return LINE_SKIP;
    return plain_line(w, s, *len);
  }
  }
}

systrace_line_kind systrace_wrapper_line(systrace_wrapper *w, char *line,
                                         size_t *len) {
  if (w->state == WRAP_DETECT) {
    if (is_blank(line, *len))
      return LINE_SKIP;
    size_t i = 0;
    while (i < *len && (line[i] == ' ' || line[i] == '\t'))
      i++;
    w->state = line[i] == '<' ? WRAP_HTML_OUTSIDE : WRAP_PLAIN;
  }
  switch (w->state) {
  case WRAP_PLAIN:
    return plain_line(w, line, *len);
  case WRAP_LEGACY:
    return legacy_line(w, line, len);
  case WRAP_DONE:
    return LINE_SKIP;
  default:
    return html_line(w, line, len);
  }
}

bool systrace_wrapper_is_plain(const systrace_wrapper *w) {
  return w->state == WRAP_PLAIN;
}

systrace_line_kind systrace_wrapper_plain_line(systrace_wrapper *w, const char *line,
                                               size_t len) {
  return plain_line(w, line, len);
}

bool systrace_wrapper_in_data(const systrace_wrapper *w) {
  return w->state == WRAP_PLAIN || w->state == WRAP_HTML_DATA ||
         w->state == WRAP_LEGACY;
}
