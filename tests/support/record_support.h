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

/* What record_check_clock_order() saw in a trace, packet by packet. */
typedef struct record_clock_order {
  guint packets;      /* TracePackets read */
  guint events;       /* of them, TrackEvent packets */
  guint generations;  /* packets that clear a sequence's incremental state */
  guint scoped[64];   /* timestamps on sequence-scoped clock 64 + i, related */
  guint unrelated;    /* timestamps on a sequence-scoped clock not related yet */
  char first_unrelated[160]; /* the first of those, described */
} record_clock_order;

/* Walks the trace at `path` packet by packet as a reader converts
 * timestamps: a packet's clock is its timestamp_clock_id, else its
 * sequence's TracePacketDefaults (a packet's own defaults apply to it).
 * A timestamp on a sequence-scoped clock (64..127) counts as related when
 * a ClockSnapshot of the same sequence naming that clock came before it
 * *in the same generation*: clearing the incremental state forgets the
 * snapshots, as if the chunks before it had been overwritten in a ring
 * buffer, so every generation must relate its own clocks. Asserts the
 * file is well-formed protobuf. */
void record_check_clock_order(const char *path, record_clock_order *out);

/* BOOTTIME now, in ns. */
int64_t record_boottime(void);

#endif /* TM_RECORD_SUPPORT_H */
