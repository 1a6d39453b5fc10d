/*
 * Support for the recording library's tests: run a session over a text
 * config into a file, decode what it wrote with protoc against
 * proto/recorded_trace.proto, and query it with the tracemerge CLI (its
 * own proto reader) through e2e_support.
 */
#ifndef TM_RECORD_SUPPORT_H
#define TM_RECORD_SUPPORT_H

#include <glib.h>
#include <tracemerge/record.h>

/* Writes events into the running session `s`. */
typedef void (*record_body)(tmr_session *s, void *user);

/* Records dir/name under the text config `config_text`: start, `body`,
 * stop. Asserts every step works; returns the trace's path (g_free). */
char *record_trace(const char *dir, const char *name, const char *config_text, record_body body,
                   void *user);

/* record_trace with tmr_session_options.now_clock `now_clock`. */
char *record_trace_on_clock(const char *dir, const char *name, const char *config_text,
                            tmr_now_clock now_clock, record_body body, void *user);

/* `protoc --decode=tracemerge.record.Trace` of the file (asserts success). */
char *record_decode(const char *path);

/* Number of times `needle` occurs in `haystack`. */
guint record_count(const char *haystack, const char *needle);

/* Runs `tracemerge query PATH --sql SQL` (exit 0, empty stderr). */
char *record_query(const char *path, const char *sql);

/* BOOTTIME now, in ns. */
int64_t record_boottime(void);

#endif /* TM_RECORD_SUPPORT_H */
