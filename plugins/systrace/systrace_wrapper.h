/*
 * Which lines of a systrace file are ftrace lines (docs/formats.md
 * §3.1): a line-by-line state machine over the wrappers —
 *
 *   plain text      '#' lines, empty lines, a "TRACE:" line and the
 *                   trace-cmd report header ("version = N", "cpus=N")
 *                   before the first data line are skipped;
 *   systrace HTML   only <script class="trace-data"> blocks count; in a
 *                   block, data starts after the '#' line naming TASK-PID,
 *                   or at the first other line when that line matches the
 *                   ftrace grammar or '#' header lines came before it
 *                   (a block without the TASK-PID legend), and ends at
 *                   </script>; every such block is read (trace_processor
 *                   stops at the first one's </script>; issue 11 wants
 *                   them all); a block starting "PROCESS DUMP" holds `ps`
 *                   tables (process and thread names); other blocks
 *                   (JSON, CGROUP DUMP) are skipped;
 *   legacy HTML     the trace is the JavaScript string
 *                   `var linuxPerfData = "\` whose lines end in `\n\`,
 *                   up to the closing `";`.
 *
 * Invariant: the decision for a line depends only on the lines before it,
 * so the reader can stream.
 */
#ifndef TM_SYSTRACE_WRAPPER_H
#define TM_SYSTRACE_WRAPPER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum systrace_wrap_state {
  WRAP_DETECT = 0,   /* nothing but blank lines seen yet */
  WRAP_PLAIN,
  WRAP_HTML_OUTSIDE, /* HTML, outside any trace data */
  WRAP_HTML_HEADER,  /* inside a trace-data block, before its data */
  WRAP_HTML_DATA,    /* inside an ftrace block */
  WRAP_HTML_OTHER,   /* inside a block that is not ftrace (JSON, ...) */
  WRAP_HTML_DUMP,    /* inside a PROCESS DUMP block */
  WRAP_LEGACY,       /* inside the linuxPerfData string */
  WRAP_DONE,         /* the trace data has ended */
} systrace_wrap_state;

typedef enum systrace_line_kind {
  LINE_SKIP = 0, /* not trace data */
  LINE_DATA,     /* an ftrace line to parse */
  LINE_PROCESS_DUMP, /* a line of a `ps` table (header or row) */
} systrace_line_kind;

typedef struct systrace_wrapper {
  systrace_wrap_state state;
  bool data_seen;   /* a data line was returned */
  bool block_start; /* the next line is the first of a trace-data block */
  bool block_header; /* '#' lines came first in this block */
} systrace_wrapper;

/* Classifies one line (without its '\n'); may shorten it in place
 * (`*len`) and unescape it (legacy JavaScript string). */
systrace_line_kind systrace_wrapper_line(systrace_wrapper *w, char *line,
                                         size_t *len);

/* True while the wrapper reads plain text (no HTML, no JavaScript
 * string): its lines are then classified without being changed, and the
 * caller may pass them where they lie to systrace_wrapper_plain_line(). */
bool systrace_wrapper_is_plain(const systrace_wrapper *w);

/* systrace_wrapper_line() for a wrapper that systrace_wrapper_is_plain(),
 * on bytes it does not write. */
systrace_line_kind systrace_wrapper_plain_line(systrace_wrapper *w, const char *line,
                                               size_t len);

/* True while the lines being read are trace data (so an overlong line is
 * damage, not viewer code). False before the first line decides the form:
 * the caller shows that line to systrace_wrapper_line() first. */
bool systrace_wrapper_in_data(const systrace_wrapper *w);

#endif /* TM_SYSTRACE_WRAPPER_H */
