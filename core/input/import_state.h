/*
 * The import's shared state: what the session owns and lends, as one
 * struct, to the code that fills it while files are read (the reader ABI's
 * host services, core/input/host_services.c) and to what reads it after
 * (the model builder gets its parts, core/model/model_builder.h).
 *
 * Ownership: the session (core/session) creates, owns and frees every
 * field; nobody else keeps a pointer past the session's life. The few
 * decisions that belong to the session (its merge config's buffering, its
 * manifest's rules) reach the host services through `hooks`, so this
 * folder never includes the session's headers and no two core folders
 * import each other.
 *
 * Invariants: a tm_host exists per leaf trace file; its reader emits only
 * while the container streams that file; the host's refs handed to readers
 * are row ids + 1 so that 0 is never valid (tm_args_ref: set id, 0 = none).
 */
#ifndef TM_IMPORT_STATE_H
#define TM_IMPORT_STATE_H

#include <glib.h>
#include <tracemerge/plugin.h>
#include <tracemerge/tracemerge.h>

#include "model/stats.h"
#include "base/vec.h"
#include "clock/clock_graph.h"
#include "input/budget.h"
#include "input/manifest.h"
#include "input/plugin_loader.h"
#include "model/model.h"
#include "model/event.h"
#include "sort/sorter.h"

typedef struct tm_import_state tm_import_state;

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
  tm_import_state *state; /* the session's, borrowed */
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
  /* The reader runs on the import's reader worker (input/reader_worker.h)
   * and its calls are replayed here; NULL: it runs on the calling thread.
   * Owned. */
  struct reader_recording *recording;
  char *error_message;      /* first damage report, owned */
  int64_t error_offset;
};

/* The trace_file_id of a file's isolated builtin clocks (docs/clock-model.md
 * §2): its file id, except for trace file 0 (the first root input), whose
 * id is the canonical nodes' 0 and would not isolate anything: UINT32_MAX,
 * which no file has, stands for it. */
static inline uint32_t import_isolation_tag(uint32_t file_id) {
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

/* The session's answers to the host services (core/session implements
 * them; every field non-NULL). `owner` is passed back as the session. */
typedef struct tm_import_hooks {
  /* A buffered host's event of `run`, and its arg set (returns the staged
   * ref): session_config.h. */
  void (*buffer_event)(tm_host *host, tm_event_run *run, const tm_event *ev,
                       int64_t thread_ts, int64_t thread_dur);
  uint32_t (*buffer_args)(tm_host *host);
  /* The manifest's rules (core/session/session_internal.h): each false
   * (after recording the import's fatal error) refuses the call. */
  bool (*embedded_machine)(tm_host *host, uint32_t raw_id, uint32_t *machine_id);
  bool (*remote_sync_allowed)(tm_host *host);
  bool (*snapshot_allowed)(tm_host *host);
} tm_import_hooks;

struct tm_import_state {
  const tm_import_hooks *hooks;
  void *owner;        /* the tm_session, for the hooks */
  tm_budgets budgets; /* every field set (input/budget.h) */
  tm_model *model;
  tm_stats *stats;
  tm_clock_graph *clocks;
  tm_sorter *sorter;
  TM_VEC(tm_event_extra) extras;
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
  GPtrArray *realtime_twins; /* tm_realtime_twin*, owned */
  GPtrArray *hosts;      /* tm_host*, by order of first byte */
  /* Emitted so far, to size the event tables once before the merge. */
  size_t slice_events;
  size_t counter_events;
  uint64_t events_placed; /* by the model builder, pass 2 */
};

/* Gives slice `ev` its thread times (TM_UNKNOWN_TIME: unknown), if it has
 * any, as an extra named by ev->u.x.extra; a complete slice's duration
 * goes beside it in u.x.dur_ns, or to a second extra if it does not fit
 * in 32 bits (model/event.h). */
static inline void import_state_add_extra(struct tm_import_state *state, tm_event *ev,
                                          int64_t thread_ts, int64_t thread_dur) {
  if (thread_ts == TM_UNKNOWN_TIME && thread_dur == TM_UNKNOWN_TIME)
    return;
  int64_t dur = ev->kind == TM_EVENT_SLICE_COMPLETE ? ev->u.dur_ns : 0;
  tm_vec_push(&state->extras, ((tm_event_extra){thread_ts, thread_dur}));
  ev->u.x.extra = (uint32_t)(state->extras.len - 1);
  ev->u.x.dur_ns = 0;
  ev->flags |= TM_EVENT_HAS_EXTRA;
  if (dur >= INT32_MIN && dur <= INT32_MAX) {
    ev->u.x.dur_ns = (int32_t)dur;
  } else {
    tm_vec_push(&state->extras, ((tm_event_extra){dur, TM_UNKNOWN_TIME}));
    ev->flags |= TM_EVENT_DUR_IN_EXTRA;
  }
}

#endif /* TM_IMPORT_STATE_H */
