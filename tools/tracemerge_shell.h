/*
 * The interactive prompt of `tracemerge query` (trace_processor_shell -i's
 * habits): one line is one query, run on the session and printed in the
 * current mode (a table by default) with its row count and time; lines
 * starting with '.' are commands (.help lists them). Line editing and
 * history come from libedit; the history is kept in
 * $XDG_CONFIG_HOME/tracemerge/history when the input is a terminal.
 * Ctrl-C stops the running query and returns to the prompt; Ctrl-D or
 * .quit leaves.
 */
#ifndef TM_TRACEMERGE_SHELL_H
#define TM_TRACEMERGE_SHELL_H

#include <stdbool.h>

#include <tracemerge/tracemerge.h>

typedef struct shell_options {
  tm_format format;      /* the starting .mode (TM_FORMAT_TABLE normally) */
  unsigned column_width; /* the starting .width (0: 20; -W: 40) */
} shell_options;

/* Runs the prompt on standard input until end of input or .quit. Returns
 * the exit status: 0, or 1 if reading the input or writing the output
 * failed. Query errors are printed and the prompt goes on. */
int shell_run(tm_session *session, const shell_options *options);

#endif /* TM_TRACEMERGE_SHELL_H */
