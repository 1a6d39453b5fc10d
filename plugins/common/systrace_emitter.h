/*
 * What ftrace text lines become in the host (docs/formats.md §3.3,
 * §3.4): threads named from the task field (processes stay unnamed),
 * tracing_mark_write payloads into slices, async slices and counters,
 * scheduling events into the scheduling services, cpu and clock events
 * into counters, PROCESS DUMP rows into process and thread names.
 *
 * Shared by the systrace reader (lines of a systrace file, MONOTONIC) and
 * the JSON reader (lines of a Chrome JSON file's systemTraceEvents string,
 * on that file's private clock): the caller picks the machine and the
 * clock every timestamp is given on, and the lines' seconds become ns of
 * that clock. The emitter keeps per-file state (known threads, open async
 * cookies, per-cpu tracks), so one emitter serves one file. A reader that
 * uses it declares SYSTRACE_EMITTER_STATS among its stats.
 */
#ifndef TM_SYSTRACE_EMITTER_H
#define TM_SYSTRACE_EMITTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

typedef struct systrace_emitter systrace_emitter;

typedef enum systrace_line_result {
  SYSTRACE_LINE_READ,        /* matched; its event was emitted or ignored */
  SYSTRACE_LINE_BAD_PAYLOAD, /* matched the grammar, payload malformed */
  SYSTRACE_LINE_NO_MATCH,    /* not an ftrace line */
} systrace_line_result;

/* The stats the emitter bumps, for the descriptor of a reader using it. */
#define SYSTRACE_EMITTER_STATS                                              \
  TM_READER_STAT("systrace_parse_failure", TM_STAT_ERROR,                   \
                 TM_STAT_SOURCE_ANALYSIS,                                   \
                 "A systrace/ftrace text line did not match the line "      \
                 "grammar or its payload was malformed; the line was "      \
                 "skipped.")

/* Every event goes to `machine` with timestamps on `clock`. */
systrace_emitter *systrace_emitter_new(const tm_host_services *services,
                                       tm_host *host, tm_machine_ref machine,
                                       tm_clock_ref clock);
void systrace_emitter_free(systrace_emitter *em);

/* The byte offset in the file of the lines that follow, until the next
 * call: from the first call on, a line that cannot be read is recorded
 * with that offset and its text (key "line") through the host's
 * import_log. Without a call (the JSON reader's
 * systemTraceEvents lines, which have no offset of their own in a file)
 * such lines are only counted. */
void systrace_emitter_set_line_offset(systrace_emitter *em, int64_t byte_offset);

/* One ftrace data line (without its newline). A line that is not
 * SYSTRACE_LINE_READ has been counted (systrace_parse_failure). */
systrace_line_result systrace_emitter_data_line(systrace_emitter *em,
                                                const char *text, size_t len);

/* The clock every later timestamp is on (a Perfetto ftrace bundle names
 * its own). */
void systrace_emitter_set_clock(systrace_emitter *em, tm_clock_ref clock);

/* One trace_marker payload ("B|pid|name", "E|pid", "C|pid|name|value",
 * S/F/I/N/G/H forms) that thread `tid` wrote at `ts_ns` on `cpu`: what a
 * Perfetto `print` ftrace event carries. Read as a tracing_mark_write
 * line's payload. Returns false, having counted systrace_parse_failure
 * (with the payload as "line" when the host keeps import logs and a line
 * offset was set), if it is malformed. */
bool systrace_emitter_print(systrace_emitter *em, int64_t ts_ns, uint32_t cpu,
                            int64_t tid, const char *payload, size_t len);

/* One line of a PROCESS DUMP block (a ps table header or row); a row that
 * cannot be read is counted (systrace_parse_failure). */
void systrace_emitter_dump_line(systrace_emitter *em, const char *text,
                                size_t len);

#endif /* TM_SYSTRACE_EMITTER_H */
