/*
 * The session's private state, shared by session.c (the import pipeline),
 * host_services.c (the reader ABI) and machine/thread/track identity.
 *
 * Invariants: a tm_host exists per leaf trace file; its reader emits only
 * while the container streams that file; the host's refs handed to readers
 * are row ids + 1 so that 0 is never valid (tm_args_ref: set id, 0 = none).
 */
#ifndef TM_SESSION_INTERNAL_H
#define TM_SESSION_INTERNAL_H

#include <glib.h>
#include <tracemerge/plugin.h>
#include <tracemerge/tracemerge.h>

#include "clock/clock_graph.h"
#include "sort/event.h"
#include "input/budget.h"
#include "input/manifest.h"
#include "model/model.h"
#include "input/plugin_loader.h"
#include "sort/sorter.h"
#include "sql/sql_surface.h"
#include "base/stats.h"

typedef struct tm_host_pending_arg {
  tm_str_id key;
  tm_arg_value value;
} tm_host_pending_arg;

/* How one clock carrying a file's events reached trace time, for
 * `tracemerge info`: the fallback that tied it (docs/clock-model.md §6.2; for a
 * builtin clock, the one that tied its machine's BOOTTIME when the clock
 * itself then had a real path), the events read on it and those placed
 * (converted to a trace time >= 0). Filled in pass 2. */
typedef struct tm_host_placement {
  tm_clock_node clock;
  int bridge; /* tm_clock_bridge */
  bool via_boottime; /* `bridge` tied the machine's BOOTTIME, not the clock */
  uint64_t read;
  uint64_t placed;
} tm_host_placement;

struct tm_host {
  tm_session *session;
  uint32_t file_id;
  uint32_t machine_id;
  const tm_reader *reader;
  void *reader_state;
  bool open;
  bool failed;            /* the reader reported damage: no more bytes */
  uint64_t bytes_fed;
  tm_clock_node private_clock;
  tm_clock_node claimed_clock; /* TM_NO_CLOCK_NODE if no claim */
  int bridge;                  /* worst tm_clock_bridge of its clocks, -1 */
  TM_VEC(tm_host_placement) placements; /* one per clock with events */
  /* Fast path: the run of the last clock used. */
  tm_clock_ref last_clock;
  tm_event_run *last_run;
  TM_VEC(tm_host_pending_arg) pending_args; /* set under construction */
  GHashTable *embedded_machines; /* raw id -> machine ref, or NULL */
  /* The file attributed data to its base machine (see adopt_base_machine
   * in host_services.c): after that, an embedded machine gets its own row. */
  bool base_machine_has_data;
  /* Machine row + 1 -> 1 + the events the file had emitted through the
   * machine's canonical builtin clocks when it isolated there: present
   * when this file's builtin clocks on that machine are its own (isolated,
   * docs/clock-model.md §2) from its first snapshot there; NULL until then.
   * Clock refs always name canonical nodes; the host routes a canonical
   * ref to the isolated node (snapshots, events) once the file is isolated
   * on that machine. The machine's primary file is removed from here (and
   * its nodes merged into the canonical ones) once every input is read. */
  GHashTable *isolated_on;
  const tm_manifest_file *manifest_entry; /* the manifest's entry, borrowed */
  /* The merge config's buffer of the file's events, or -1: they go
   * straight to the sorter's runs (session_config.h). */
  int32_t buffer;
  char *error_message;      /* first damage report, owned */
  int64_t error_offset;
};

/* The trace_file_id of a file's isolated builtin clocks (docs/clock-model.md
 * §2): its file id, except for trace file 0 (the first root input), whose
 * id is the canonical nodes' 0 and would not isolate anything: UINT32_MAX,
 * which no file has, stands for it. */
static inline uint32_t session_isolation_tag(uint32_t file_id) {
  return file_id ? file_id : UINT32_MAX;
}

/* A snapshot of an isolated file that holds REALTIME or REALTIME_COARSE
 * readings: re-added with their canonical twins (docs/clock-model.md §6.3) once
 * the trace-time machine is known. */
typedef struct tm_realtime_twin {
  uint32_t machine_id;
  uint32_t file_id;
  size_t count;
  tm_clock_reading *readings; /* owned */
} tm_realtime_twin;

struct tm_session {
  tm_plugin_set *plugins;
  GHashTable *reader_configs; /* reader name (owned) -> GBytes of its config */
  tm_budgets budgets; /* every field set (input/budget.h) */
  /* The merge config (session_config.h), or NULL; config_error is why a
   * config given could not be used (every import fails with it). */
  struct tm_session_config *config;
  GError *config_error;
  tm_model *model;
  tm_stats *stats;
  tm_clock_graph *clocks;
  tm_sorter *sorter;
  tm_sql_surface *sql;
  char **sql_packages; /* tm_session_options.sql_packages, owned */
  sql_connection_options sql_options; /* from tm_session_options */
  double query_timeout_seconds;
  TM_VEC(tm_event_extra) extras;
  uint32_t host_machine; /* TM_NULL_ID until the first trace file */
  /* Per machine placeholder rows (pid 0 / idle tid 0), by machine id. */
  TM_VEC(uint32_t) machine_idle_upid;
  TM_VEC(uint32_t) machine_idle_utid;
  GHashTable *processes; /* (machine, pid) -> upid + 1 */
  GHashTable *threads;   /* (machine, tid) -> newest utid + 1 */
  /* By utid: the previous thread with the same (machine, tid), or
   * TM_NULL_ID; with `threads`, every thread a tid ever named. */
  TM_VEC(uint32_t) thread_prev_same_tid;
  GHashTable *tracks;    /* track_key -> track id + 1 */
  struct tm_async_tracks *async_tracks; /* async slots, resolved in pass 2 */
  /* Machine row + 1 -> tm_host* of its primary file (docs/clock-model.md §2):
   * the first file in processing order to have data or clocks on that
   * machine. Decided once every input is read. */
  GHashTable *primary_file;
  GPtrArray *realtime_twins; /* tm_realtime_twin*, owned */
  GPtrArray *hosts;      /* tm_host*, by order of first byte */
  GError *first_error;   /* first file damage, reported after import */
  /* A failure of the whole import (a manifest error): reported before any
   * other, and every sink callback refuses once it is set. */
  GError *fatal_error;
  struct tm_session_manifest *manifest; /* NULL until a file begins */
  size_t n_inputs;                      /* root paths of the import */
  bool imported;
  uint64_t events_placed;
  /* Emitted so far, to size the event tables once before the merge. */
  size_t slice_events;
  size_t counter_events;
};

/* Hash/equality of the identity and track keys of host_services.c. */
guint session_identity_hash(gconstpointer p);
gboolean session_identity_equal(gconstpointer a, gconstpointer b);
guint session_track_hash(gconstpointer p);
gboolean session_track_equal(gconstpointer a, gconstpointer b);

/* Writes each track's dimension arg set (utid, upid, scope, name, key). */
void session_finish_tracks(tm_session *session);

/* Machine state (placeholders) for a machine row, created once. */
void session_open_machine(tm_session *session, uint32_t machine_id);

/* The host machine row, created with its placeholders on first use. */
uint32_t session_host_machine(tm_session *session);

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

/* The track id of the overflow twin of a thread track (JSON X spill). */
uint32_t session_overflow_track(tm_session *session, uint32_t track_id);


/* Builds slice/counter/flow rows from the merged stream. */
typedef struct tm_model_builder tm_model_builder;
tm_model_builder *model_builder_new(tm_session *session);
void model_builder_push(void *builder, const tm_event *ev, uint32_t machine_id,
                        uint32_t trace_id);
void model_builder_free(tm_model_builder *builder);

#endif /* TM_SESSION_INTERNAL_H */
