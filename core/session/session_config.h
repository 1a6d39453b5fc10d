/*
 * The session's merge config (tm_session_options.config_*): what it
 * changes in the import pipeline, stage by stage.
 *
 * - A file begins: the data sources decide whether it is read, with which
 *   reader config bytes and into which buffer (session_config_plan_file).
 * - Pass 1: a buffered file's events and arg sets go to the event buffers
 *   (core/buffer) instead of the sorter's runs; a STOP trigger event cuts
 *   its run there, when no start offset can move the window.
 * - End of pass 1: what the buffers hold joins the runs
 *   (session_config_drain), and their counts become stats rows.
 * - Pass 2, once every event is on trace time: the window (start offset,
 *   duration, trigger) is found over all runs, and the merged stream is
 *   filtered to it on its way to the model builder.
 *
 * Invariant: a session without a config behaves exactly as before: every
 * function here is a no-op (or answers "read it, unbuffered").
 */
#ifndef TM_SESSION_CONFIG_H
#define TM_SESSION_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <tracemerge/tracemerge.h>

#include "sort/sorter.h"

typedef struct tm_session_config tm_session_config;
struct tm_host;

/* Loads the config of `options` for `session` (its plugins loaded): NULL
 * without one; on an error, NULL and `error` set (the import then fails
 * with it). Notes go to `warnings`. */
tm_session_config *session_config_load(tm_session *session, const tm_session_options *options,
                                       FILE *warnings, GError **error);
void session_config_free(tm_session_config *config);

/* How a file is read. */
typedef struct session_file_plan {
  bool read;                     /* false: no data source selects it */
  int32_t buffer;                /* its buffer, or -1: unbounded */
  const uint8_t *reader_config;  /* the data source's reader block, or NULL */
  size_t reader_config_len;
  bool has_reader_config;
} session_file_plan;

/* The plan for file `file_id` (its trace_file row exists) of reader
 * `reader` on machine row `machine_id`. */
session_file_plan session_config_plan_file(tm_session_config *config, tm_session *session,
                                           uint32_t file_id, uint32_t machine_id,
                                           const char *reader);

/* Pass 1, for a host whose file is buffered: an event of `run` (its
 * arg_set_id a staged ref or 0), and an arg set (returns its staged ref). */
void session_config_push(struct tm_host *host, tm_event_run *run, const tm_event *ev,
                         int64_t thread_ts, int64_t thread_dur);
uint32_t session_config_stage_args(struct tm_host *host);
/* After each callback into a buffered host's reader (`file_done` after
 * its last). */
void session_config_reader_returned(struct tm_host *host, bool file_done);

/* End of pass 1: the buffers' events join the sorter's runs; stats rows. */
void session_config_drain(tm_session *session);

/* Pass 2, after sorter_convert: finds the window to keep. Returns the
 * emit function for sorter_merge (and its context in `*ctx`): a filter in
 * front of model_builder_push when there is a window, else
 * model_builder_push itself with `builder`. */
tm_sorter_emit session_config_window(tm_session *session, void *builder, void **ctx);
/* After the merge: counts, metadata rows. */
void session_config_finish(tm_session *session);

/* `tracemerge info`'s config section (nothing without a config). */
void session_config_print_info(tm_session *session, FILE *out);

/* The normalised text of the config, or NULL without one. */
char *session_config_to_text(const tm_session_config *config);

#endif /* TM_SESSION_CONFIG_H */
