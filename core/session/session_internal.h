/*
 * The session's private state, shared by the files of core/session only
 * (session.c, the import pipeline; session_config.c; session_manifest.c;
 * session_export.c; session_info.c). What the rest of core needs of the
 * session's state it receives as a parameter: the import state
 * (input/import_state.h) for the host services, its parts for the model
 * builder (model/model_builder.h), session.h's accessors for the sinks.
 * tests/test_core_layout.c checks that no other folder includes this file.
 */
#ifndef TM_SESSION_INTERNAL_H
#define TM_SESSION_INTERNAL_H

#include <glib.h>
#include <tracemerge/plugin.h>
#include <tracemerge/tracemerge.h>

#include "input/import_state.h"
#include "sql/sql_surface.h"

struct tm_session {
  /* What the import fills, lent to the host services and the model
   * builder (input/import_state.h). */
  tm_import_state import;
  tm_plugin_set *plugins;
  GHashTable *reader_configs; /* reader name (owned) -> GBytes of its config */
  unsigned import_threads; /* >= 1: tm_session_options.threads, 0 resolved */
  /* The thread readers parse on while files are read (import_threads > 2;
   * NULL if none could be made): input/reader_worker.h. */
  struct reader_worker *reader_worker;
  /* The thread that parses archive members ahead of their turn
   * (import_threads > 1; NULL if none could be made): the prefetch
   * worker of input/reader_worker.h. */
  struct reader_worker *prefetch_worker;
  /* The merge config (session_config.h), or NULL; config_error is why a
   * config given could not be used (every import fails with it). */
  struct tm_session_config *config;
  GError *config_error;
  tm_sql_surface *sql;
  char **sql_packages; /* tm_session_options.sql_packages, owned */
  sql_connection_options sql_options; /* from tm_session_options */
  double query_timeout_seconds;
  uint32_t host_machine; /* TM_NULL_ID until a manifest file without a
                          * machine needs it (session_manifest.c) */
  /* Machine row + 1 -> tm_host* of its primary file (docs/clock-model.md §2):
   * the first file in processing order to have data or clocks on that
   * machine. Decided once every input is read. */
  GHashTable *primary_file;
  GError *first_error;   /* first file damage, reported after import */
  /* A failure of the whole import (a manifest error): reported before any
   * other, and every sink callback refuses once it is set. */
  GError *fatal_error;
  struct tm_session_manifest *manifest; /* NULL until a file begins */
  size_t n_inputs;                      /* root paths of the import */
  bool imported;
};

/* The session that owns `host` (the owner of its import state). */
static inline tm_session *host_session(const tm_host *host) {
  return host->state->owner;
}

/* GCompareDataFunc over tm_host* elements (data: the tm_model): the order
 * files are bridged in, trace_file.processing_order. */
gint session_host_by_processing_order(gconstpointer a, gconstpointer b, gpointer model);

/* --- the perfetto_manifest (session_manifest.c) --------------------- */

typedef struct tm_session_manifest tm_session_manifest;
/* The trace_type sink_detect names a manifest with. */
extern const char session_manifest_type[];
void session_manifest_free(tm_session_manifest *manifest);
/* Records `take` as the import's fatal error (the first one wins; later
 * ones are freed) and stops feeding `host` (may be NULL). */
void session_fail_import(tm_session *session, tm_host *host, GError *take);
/* False, with a copy of the fatal error in `error`, once the import failed. */
bool session_refuse_if_failed(tm_session *session, GError **error);
/* The sink's calls for a manifest file; each false stops the import. */
bool session_manifest_begin(tm_session *session, uint32_t file_id,
                            GError **error);
bool session_manifest_is(tm_session *session, uint32_t file_id);
bool session_manifest_feed(tm_session *session, const uint8_t *data,
                           size_t len, GError **error);
bool session_manifest_end(tm_session *session, bool truncated,
                          const char *damage, GError **error);
/* A trace file begins: its manifest entry (or NULL) and base machine row. */
bool session_manifest_file_begins(tm_session *session, uint32_t file_id,
                                  uint32_t *machine_id,
                                  const tm_manifest_file **entry,
                                  GError **error);
/* The base machine row session_manifest_file_begins() will give
 * `file_id`, if that is known now and asking it changes nothing (the
 * manifest names the file's machine, or the host's row exists): for a
 * file parsed ahead of its turn. */
bool session_manifest_peek_machine(tm_session *session, uint32_t file_id,
                                   uint32_t *machine_id);
/* Once every input is read: overrides on late containers, members that
 * never came. */
bool session_manifest_finish_reading(tm_session *session, GError **error);
/* The manifest's trace-time claim, or TM_NO_CLOCK_NODE. */
tm_clock_node session_manifest_trace_time(const tm_session *session);
/* Embedded machine `raw_id` (not 0) of the host's file as the manifest
 * maps it: false if the manifest has no say (no entry, or an entry
 * without `machine`, `machines` or a PIN); true with the machine row, or
 * with the base machine after recording the import's fatal error. */
bool session_manifest_embedded_machine(tm_host *host, uint32_t raw_id,
                                       uint32_t *machine_id);
/* False (after recording the fatal error) if the host's file is pinned:
 * a pinned file must not sync machines with a remote_clock_sync, whatever
 * machine the sync carries (docs/clock-model.md §9.3, §10.2). */
bool session_manifest_remote_sync_allowed(tm_host *host);
/* False (after recording the fatal error) if the host's file is pinned:
 * a pinned file must not add clock snapshots. */
bool session_manifest_snapshot_allowed(tm_host *host);

/* Opens the session's SQL surface on first use (the queries' and the
 * export filter's). */
bool session_ensure_sql(tm_session *session, GError **error);


#endif /* TM_SESSION_INTERNAL_H */
