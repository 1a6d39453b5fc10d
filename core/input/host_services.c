/*
 * The host side of the reader ABI: what a reader's calls do.
 *
 * Readers speak in refs (row id + 1) and raw times; this file turns their
 * calls into identity rows (processes, threads, tracks, args, metadata,
 * stats) immediately and into compact events in per-clock runs, which the
 * sorter places on the timeline after every file is read.
 *
 * Invariants: processes and threads are shared per machine across files;
 * tracks are interned per (file, machine, type, dimensions); a reader's
 * damage report never removes what it emitted before.
 */
#include "input/host_services.h"

#include <string.h>

#include "buffer/event_buffer.h"
#include "model/sched_builder.h"
#include "model/profile_builder.h"
#include "model/async_tracks.h"
#include "base/string_pool.h"

#define REF(id) ((uint32_t)(id) + 1u)
#define UNREF(ref) ((uint32_t)(ref) - 1u)

typedef struct identity_key {
  uint32_t machine_id;
  uint32_t pad;
  int64_t id;
} identity_key;

typedef struct track_key {
  uint32_t trace_id;
  uint32_t machine_id;
  tm_str_id type;
  tm_str_id name;
  uint32_t utid;
  uint32_t upid;
  tm_str_id scope;
  uint32_t is_counter;
  uint64_t key;
  uint32_t cpu_dimension; /* ucpu + 1, 0 if none */
  uint32_t pad2;
} track_key;

static guint bytes_hash(const void *p, size_t n) {
  const uint8_t *b = p;
  guint h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 16777619u;
  return h;
}

guint import_identity_hash(gconstpointer p) {
  return bytes_hash(p, sizeof(identity_key));
}
gboolean import_identity_equal(gconstpointer a, gconstpointer b) {
  return memcmp(a, b, sizeof(identity_key)) == 0;
}
guint import_track_hash(gconstpointer p) {
  return bytes_hash(p, sizeof(track_key));
}
gboolean import_track_equal(gconstpointer a, gconstpointer b) {
  return memcmp(a, b, sizeof(track_key)) == 0;
}

static tm_model *model_of(tm_host *host) { return host->state->model; }

/* --- refusals ------------------------------------------------------------ */

/* Counts a call the host refuses (reader_call_refused, one per call) and
 * logs which call and why, at no byte offset (the host does not know
 * where in the file the reader was): the call did nothing (an event
 * dropped, a row left unchanged, 0 or false answered), and a reader's
 * mistake must not be silent. Every service refuses through here. */
void host_refuse_call(tm_host *host, const char *call, const char *reason) {
  tm_import_log_arg args[] = {
      {TM_IMPORT_LOG_ARG_INIT, .key = "call", .type = TM_ARG_STRING, .string = call,
       .string_len = strlen(call)},
      {TM_IMPORT_LOG_ARG_INIT, .key = "reason", .type = TM_ARG_STRING, .string = reason,
       .string_len = strlen(reason)},
  };
  stats_log(host->state->stats, "reader_call_refused", host->machine_id, host->file_id,
            TM_NULL_INT64, -1, args, G_N_ELEMENTS(args));
}

/* The ref track_intern answers for a track of a cpu above
 * TM_SCHED_MAX_CPU. It names no row, and every call on it does nothing
 * and is counted in sched_cpu_out_of_range alone: its one cause is the
 * cpu the trace names, not a reader's mistake, so it is not refused too
 * (reader_call_refused), and track_intern itself counts nothing. So an
 * event on such a cpu counts once, whether a counter on its track or a
 * switch on the cpu. Far from any track or slot ref (below 2^31). */
#define CPU_OUT_OF_RANGE_TRACK ((tm_track_ref)0xfffffffeu)

static const char NO_SUCH_TRACK[] = "no such track";
static const char NO_SUCH_PARENT_TRACK[] = "no such parent track";

/* Refuses `call` for `reason`, except when the reason is `track` (a
 * track or parent track that names no row) and it is
 * CPU_OUT_OF_RANGE_TRACK: then counted in sched_cpu_out_of_range. */
static void refuse_track_call(tm_host *host, const char *call, const char *reason,
                              tm_track_ref track) {
  if ((reason == NO_SUCH_TRACK || reason == NO_SUCH_PARENT_TRACK) &&
      track == CPU_OUT_OF_RANGE_TRACK)
    stats_add(host->state->stats, "sched_cpu_out_of_range", TM_NULL_INT64, host->machine_id,
              host->file_id, 1);
  else
    host_refuse_call(host, call, reason);
}

/* The row a ref names, or false (the refs a reader holds are row id + 1). */
static bool thread_ref_valid(tm_host *host, tm_thread_ref thread) {
  return thread != 0 && UNREF(thread) < model_of(host)->threads.len;
}

static bool process_ref_valid(tm_host *host, tm_process_ref process) {
  return process != 0 && UNREF(process) < model_of(host)->processes.len;
}

/* TM_NO_ARGS or a set args_commit answered: a set of the model (ids from
 * 1 below next_arg_set_id; arg sets are ids, not refs), or for a buffered
 * file a staged set (a staged set used after its release is counted in
 * merge_buf_args_lost by the buffer, core/buffer/event_buffer.h). */
static inline bool args_ref_valid(tm_host *host, tm_args_ref args) {
  if (G_LIKELY(args == TM_NO_ARGS))
    return true;
  if (host->buffer >= 0)
    return (args & EVENT_BUFFER_STAGED_ARGS) != 0;
  return args < model_of(host)->next_arg_set_id;
}

/* --- strings ------------------------------------------------------------ */

/* The pool holds NUL-terminated strings, so a NUL byte in a reader's
 * string (JSON "\u0000", a proto string field) would cut it there: each
 * becomes U+FFFD, the replacement character, and the rest is kept. */
static tm_str_id intern_without_nul(tm_string_pool *pool, const char *s,
                                    size_t len) {
  GString *text = g_string_sized_new(len + 8);
  for (size_t i = 0; i < len; i++) {
    if (s[i])
      g_string_append_c(text, s[i]);
    else
      g_string_append(text, "\xEF\xBF\xBD");
  }
  tm_str_id id = string_pool_intern(pool, text->str, text->len);
  g_string_free(text, TRUE);
  return id;
}

static tm_str_id svc_intern_string(tm_host *host, const char *s, size_t len) {
  if (!s)
    return string_pool_intern(model_of(host)->strings, "", 0);
  if (memchr(s, 0, len))
    return intern_without_nul(model_of(host)->strings, s, len);
  return string_pool_intern(model_of(host)->strings, s, len);
}

/* --- clocks ------------------------------------------------------------- */

static tm_clock_ref clock_ref_for(tm_host *host, uint32_t clock_id,
                                  uint32_t sequence_id, uint32_t file_id,
                                  uint32_t machine_id) {
  tm_clock_key key = {clock_id, sequence_id, file_id, machine_id};
  return REF(clock_graph_node(host->state->clocks, &key));
}

/* Resolving a machine is attributing data to it (a clock, process,
 * thread, track or machine info), so resolving the base machine here marks
 * it as having data; machine_default() alone does not (adopt_base_machine). */
static uint32_t machine_of_ref(tm_host *host, tm_machine_ref machine) {
  if (machine == 0 || UNREF(machine) >= model_of(host)->machines.len ||
      UNREF(machine) == host->machine_id) {
    host->base_machine_has_data = true;
    return host->machine_id;
  }
  return UNREF(machine);
}

static tm_clock_ref svc_clock_private(tm_host *host) {
  host->base_machine_has_data = true;
  return REF(host->private_clock);
}

static tm_clock_ref svc_clock_builtin(tm_host *host, tm_machine_ref machine,
                                      uint32_t clock_id) {
  return clock_ref_for(host, clock_id, 0, 0, machine_of_ref(host, machine));
}

/* --- primary and isolated files (docs/clock-model.md §2) -------------- */

/* The private clock of trace file 0 has its tf = 0 too, but belongs to
 * that file alone. */
static bool is_canonical_builtin(const tm_clock_key *key) {
  return key->clock_id < 64 && key->clock_id != TM_CLOCK_TRACE_FILE &&
         key->sequence_id == 0 && key->trace_file_id == 0;
}

/* Events `host` already emitted through canonical builtin clocks of
 * `machine_id`. */
static size_t events_on_canonical_clocks(tm_host *host, uint32_t machine_id) {
  tm_import_state *state = host->state;
  size_t events = 0;
  for (size_t r = 0; r < sorter_run_count(state->sorter); r++) {
    const tm_event_run *run = sorter_borrow_run(state->sorter, r);
    if (run->trace_id != host->file_id || run->machine_id != machine_id)
      continue;
    if (is_canonical_builtin(clock_graph_node_key(state->clocks, run->clock)))
      events += run->len + run->buffered;
  }
  return events;
}

/* At the file's first snapshot on `machine_id`, its builtin clocks there
 * become its own (isolated) from then on. The machine's primary file, whose
 * clocks are the canonical ones, is the first processed for the machine:
 * processing order is only known once every input is read, so every file
 * isolates here and session.c gives the primary's nodes back to the
 * machine (session_adopt_primary_files). The events the file had emitted
 * through the canonical nodes stay there (refs handed out stay valid);
 * their number is kept for clock_sync_mixed_clock_sources. */
static void decide_isolation(tm_host *host, uint32_t machine_id) {
  gpointer key = GUINT_TO_POINTER(machine_id + 1);
  if (!host->isolated_on)
    host->isolated_on = g_hash_table_new(g_direct_hash, g_direct_equal);
  if (g_hash_table_contains(host->isolated_on, key))
    return;
  size_t events = events_on_canonical_clocks(host, machine_id);
  g_hash_table_insert(host->isolated_on, key, GSIZE_TO_POINTER(events + 1));
  host->last_clock = 0;
  host->last_run = NULL;
}

/* The node events and snapshots of `host` use for `node`: the file's
 * isolated twin of a machine-canonical builtin clock once the file is
 * isolated on that machine, else `node` itself. */
static tm_clock_node host_clock_node(tm_host *host, tm_clock_node node) {
  if (!host->isolated_on)
    return node;
  tm_clock_graph *graph = host->state->clocks;
  const tm_clock_key *key = clock_graph_node_key(graph, node);
  if (!is_canonical_builtin(key) ||
      !g_hash_table_contains(host->isolated_on, GUINT_TO_POINTER(key->machine_id + 1)))
    return node;
  tm_clock_key isolated = *key;
  isolated.trace_file_id = import_isolation_tag(host->file_id);
  return clock_graph_node(graph, &isolated);
}

static tm_clock_ref svc_clock_sequence(tm_host *host, tm_machine_ref machine,
                                       uint32_t sequence_id, uint32_t clock_id) {
  return clock_ref_for(host, clock_id, sequence_id, host->file_id,
                       machine_of_ref(host, machine));
}

static bool svc_claim_trace_time(tm_host *host, tm_clock_ref clock) {
  /* Claims are recorded per file and decided after every file is read, in
   * processing order (the first claimer wins), so the answer here is only
   * whether this file's claim stands. */
  if (clock == 0 || UNREF(clock) >= clock_graph_node_count(host->state->clocks)) {
    host_refuse_call(host, "claim_trace_time", "no such clock");
    return false;
  }
  if (host->claimed_clock == TM_NO_CLOCK_NODE)
    host->claimed_clock = UNREF(clock);
  return host->claimed_clock == UNREF(clock);
}

/* Keeps an accepted snapshot that has a REALTIME / REALTIME_COARSE reading
 * on an isolated node, for the twins of docs/clock-model.md §6.3 (the session
 * adds them once the trace-time machine is known). */
static void keep_for_realtime_twins(tm_host *host, const tm_clock_reading *readings,
                                    size_t count) {
  tm_import_state *state = host->state;
  for (size_t i = 0; i < count; i++) {
    if (readings[i].node >= clock_graph_node_count(state->clocks))
      continue;
    const tm_clock_key *key = clock_graph_node_key(state->clocks, readings[i].node);
    if ((key->clock_id != TM_CLOCK_REALTIME && key->clock_id != TM_CLOCK_REALTIME_COARSE) ||
        key->sequence_id != 0 || key->trace_file_id != import_isolation_tag(host->file_id))
      continue;
    tm_realtime_twin *twin = g_new0(tm_realtime_twin, 1);
    twin->machine_id = key->machine_id;
    twin->file_id = host->file_id;
    twin->count = count;
    twin->readings = g_memdup2(readings, count * sizeof(*readings));
    g_ptr_array_add(state->realtime_twins, twin);
    return;
  }
}

static bool svc_add_clock_snapshot(tm_host *host, const tm_clock_ref *clocks,
                                   const int64_t *values_ns, size_t count) {
  tm_import_state *state = host->state;
  if (count == 0 || !clocks || !values_ns) {
    host_refuse_call(host, "add_clock_snapshot", "no readings");
    return false;
  }
  if (host->failed || !host->state->hooks->snapshot_allowed(host))
    return false;
  size_t n_nodes = clock_graph_node_count(state->clocks);
  for (size_t i = 0; i < count; i++) {
    if (clocks[i] == 0 || UNREF(clocks[i]) >= n_nodes)
      continue;
    const tm_clock_key *key = clock_graph_node_key(state->clocks, UNREF(clocks[i]));
    if (is_canonical_builtin(key))
      decide_isolation(host, key->machine_id);
  }
  tm_clock_reading *readings = g_new0(tm_clock_reading, count);
  for (size_t i = 0; i < count; i++) {
    readings[i].node = clocks[i] && UNREF(clocks[i]) < n_nodes
                           ? host_clock_node(host, UNREF(clocks[i]))
                           : TM_NO_CLOCK_NODE;
    readings[i].value = values_ns[i];
    readings[i].unit_ns = 1;
  }
  GError *error = NULL;
  bool ok = clock_graph_add_snapshot(state->clocks, readings, count, &error) >= 0;
  if (!ok) {
    stats_add(state->stats, "invalid_clock_snapshots", TM_NULL_INT64,
              host->machine_id, host->file_id, 1);
    g_clear_error(&error);
  } else {
    keep_for_realtime_twins(host, readings, count);
  }
  g_free(readings);
  return ok;
}

/* --- machines, processes, threads ------------------------------------ */

static tm_machine_ref svc_machine_default(tm_host *host) {
  return REF(host->machine_id);
}

/* Adoption (docs/formats.md §1.12, docs/sql-surface.md §1): a file whose
 * first data comes from an embedded machine, with no data on its base machine before,
 * relabels the base row with that raw id instead of leaving it empty beside
 * a second row. The base machine has data once any file on it resolved it
 * for a clock, process, thread, track, machine info or event (the flag
 * base_machine_has_data, set by machine_of_ref, svc_clock_private,
 * svc_track_intern and run_for); machine_default(), stats and metadata do
 * not count. The base row is shared by every file without a manifest
 * machine, so every such file must be free of base data, and a row already
 * relabelled is never adopted again. A manifest remap decides before this
 * (session_manifest_embedded_machine), so a remapped file is never adopted.
 * Later packets of the adopting file without machine_id stay on the
 * adopted row: it is the file's base machine, and the references do not
 * split it again. */
static bool adopt_base_machine(tm_host *host, uint32_t raw_id) {
  tm_import_state *state = host->state;
  tm_machine_row *row = &model_of(host)->machines.data[host->machine_id];
  if (row->raw_id != 0)
    return false;
  for (guint i = 0; i < state->hosts->len; i++) {
    const tm_host *other = g_ptr_array_index(state->hosts, i);
    if (other->machine_id == host->machine_id && other->base_machine_has_data)
      return false;
  }
  row->raw_id = raw_id;
  return true;
}

static tm_machine_ref svc_machine_embedded(tm_host *host, uint32_t raw_id) {
  if (raw_id == 0)
    return REF(host->machine_id);
  uint32_t named;
  if (host->state->hooks->embedded_machine(host, raw_id, &named))
    return REF(named);
  /* Embedded ids are scoped to their file: two files that both say
   * machine_id 7 describe two machines unless a manifest names them. */
  if (!host->embedded_machines)
    host->embedded_machines = g_hash_table_new(g_direct_hash, g_direct_equal);
  gpointer found =
      g_hash_table_lookup(host->embedded_machines, GUINT_TO_POINTER(raw_id));
  if (found)
    return GPOINTER_TO_UINT(found);
  if (adopt_base_machine(host, raw_id)) {
    g_hash_table_insert(host->embedded_machines, GUINT_TO_POINTER(raw_id),
                        GUINT_TO_POINTER(REF(host->machine_id)));
    return REF(host->machine_id);
  }
  uint32_t id = model_add_machine(model_of(host), raw_id);
  import_open_machine(host->state, id);
  g_hash_table_insert(host->embedded_machines, GUINT_TO_POINTER(raw_id),
                      GUINT_TO_POINTER(REF(id)));
  return REF(id);
}

void import_open_machine(tm_import_state *state, uint32_t machine_id) {
  tm_model *model = state->model;
  if (machine_id < state->machine_idle_upid.len &&
      state->machine_idle_upid.data[machine_id] != TM_NULL_ID)
    return;
  while (state->machine_idle_upid.len <= machine_id) {
    tm_vec_push(&state->machine_idle_upid, TM_NULL_ID);
    tm_vec_push(&state->machine_idle_utid, TM_NULL_ID);
  }
  /* As trace_processor does: every machine starts with a pid 0 process and
   * an idle tid 0 thread. */
  uint32_t upid = model_add_process(model, machine_id, 0);
  uint32_t utid = model_add_thread(model, machine_id, 0, upid);
  model->threads.data[utid].is_idle = 1;
  model->threads.data[utid].is_main_thread = 1;
  model->threads.data[utid].name = string_pool_intern_cstr(model->strings, "swapper");
  state->machine_idle_upid.data[machine_id] = upid;
  state->machine_idle_utid.data[machine_id] = utid;
}

static bool pid0_is_idle(tm_host *host) {
  return (host->reader->descriptor.flags & TM_READER_PID0_IS_IDLE) != 0;
}

/* Identity follows trace_processor's process tracker (reference
 * docs/sql-surface.md §10): a process is created with its main thread (tid ==
 * pid), a thread is looked up among every thread its tid ever named, and
 * a thread's is_main_thread is known once its process is. */

static uint32_t thread_in_process(tm_import_state *state, uint32_t machine_id,
                                  int64_t tid, uint32_t upid, int64_t pid);

static uint32_t process_id(tm_host *host, uint32_t machine_id, int64_t pid) {
  tm_import_state *state = host->state;
  if (pid == 0 && pid0_is_idle(host))
    return state->machine_idle_upid.data[machine_id];
  identity_key key = {.machine_id = machine_id, .id = pid};
  gpointer found = g_hash_table_lookup(state->processes, &key);
  if (found)
    return GPOINTER_TO_UINT(found) - 1;
  uint32_t upid = model_add_process(state->model, machine_id, pid);
  g_hash_table_insert(state->processes, g_memdup2(&key, sizeof key),
                      GUINT_TO_POINTER(upid + 1));
  /* A new process gets its main thread at once, or adopts the thread of
   * that tid seen before without a process (GetOrCreateProcess). */
  thread_in_process(state, machine_id, pid, upid, pid);
  return upid;
}

static uint32_t prev_same_tid(const tm_import_state *state, uint32_t utid) {
  return utid < state->thread_prev_same_tid.len
             ? state->thread_prev_same_tid.data[utid]
             : TM_NULL_ID;
}

static void associate(tm_import_state *state, uint32_t utid, uint32_t upid,
                      int64_t pid) {
  tm_thread_row *row = &state->model->threads.data[utid];
  row->upid = upid;
  row->is_main_thread = row->tid == pid;
}

/* Thread `tid` of process `upid` (pid `pid`), or of an unknown process when
 * upid is TM_NULL_ID: the newest thread of that tid whose process is
 * unknown or is `upid` (any thread of that tid when the process is
 * unknown), else a new one (the tid was reused). */
static uint32_t thread_in_process(tm_import_state *state, uint32_t machine_id,
                                  int64_t tid, uint32_t upid, int64_t pid) {
  tm_model *model = state->model;
  identity_key key = {.machine_id = machine_id, .id = tid};
  gpointer found = g_hash_table_lookup(state->threads, &key);
  uint32_t newest = found ? GPOINTER_TO_UINT(found) - 1 : TM_NULL_ID;
  for (uint32_t utid = newest; utid != TM_NULL_ID;
       utid = prev_same_tid(state, utid)) {
    const tm_thread_row *row = &model->threads.data[utid];
    if (upid == TM_NULL_ID || row->upid == upid)
      return utid;
    if (row->upid == TM_NULL_ID) {
      associate(state, utid, upid, pid);
      return utid;
    }
  }
  uint32_t utid = model_add_thread(model, machine_id, tid, TM_NULL_ID);
  if (upid != TM_NULL_ID)
    associate(state, utid, upid, pid);
  while (state->thread_prev_same_tid.len <= utid)
    tm_vec_push(&state->thread_prev_same_tid, TM_NULL_ID);
  state->thread_prev_same_tid.data[utid] = newest;
  g_hash_table_replace(state->threads, g_memdup2(&key, sizeof key),
                       GUINT_TO_POINTER(utid + 1));
  return utid;
}

static tm_process_ref svc_process(tm_host *host, tm_machine_ref machine,
                                  int64_t pid) {
  return REF(process_id(host, machine_of_ref(host, machine), pid));
}

static tm_thread_ref svc_thread(tm_host *host, tm_machine_ref machine,
                                int64_t pid, int64_t tid) {
  tm_import_state *state = host->state;
  uint32_t machine_id = machine_of_ref(host, machine);
  if (tid == 0 && pid0_is_idle(host))
    return REF(state->machine_idle_utid.data[machine_id]);
  /* pid < 0: the process is unknown (ftrace lines without a tgid). */
  uint32_t upid = pid < 0 ? TM_NULL_ID : process_id(host, machine_id, pid);
  return REF(thread_in_process(state, machine_id, tid, upid, pid));
}

/* The row of `process`, or NULL with the call refused. */
static tm_process_row *process_row(tm_host *host, const char *call,
                                   tm_process_ref process) {
  if (!process_ref_valid(host, process)) {
    host_refuse_call(host, call, "no such process");
    return NULL;
  }
  return &model_of(host)->processes.data[UNREF(process)];
}

static tm_thread_row *thread_row(tm_host *host, const char *call,
                                 tm_thread_ref thread) {
  if (!thread_ref_valid(host, thread)) {
    host_refuse_call(host, call, "no such thread");
    return NULL;
  }
  return &model_of(host)->threads.data[UNREF(thread)];
}

static void svc_process_set_name(tm_host *host, tm_process_ref process,
                                 tm_str_id name) {
  tm_process_row *row = process_row(host, "process_set_name", process);
  if (row)
    row->name = name;
}

static void svc_thread_set_name(tm_host *host, tm_thread_ref thread,
                                tm_str_id name) {
  tm_thread_row *row = thread_row(host, "thread_set_name", thread);
  if (row)
    row->name = name;
}

/* An arg needs a key, as args_add's do. */
static void svc_process_add_arg(tm_host *host, tm_process_ref process,
                                tm_str_id key, tm_arg_value value) {
  tm_process_row *row = process_row(host, "process_add_arg", process);
  if (!row)
    return;
  if (!key) {
    host_refuse_call(host, "process_add_arg", "no key");
    return;
  }
  row->arg_set_id = model_add_arg(model_of(host), row->arg_set_id, key, value);
}

static void svc_thread_add_arg(tm_host *host, tm_thread_ref thread,
                               tm_str_id key, tm_arg_value value) {
  tm_thread_row *row = thread_row(host, "thread_add_arg", thread);
  if (!row)
    return;
  if (!key) {
    host_refuse_call(host, "thread_add_arg", "no key");
    return;
  }
  row->arg_set_id = model_add_arg(model_of(host), row->arg_set_id, key, value);
}

/* --- tracks -------------------------------------------------------------- */

static void svc_stat_add(tm_host *host, const char *name, int64_t delta);

static uint32_t track_intern(tm_import_state *state, const track_key *key) {
  gpointer found = g_hash_table_lookup(state->tracks, key);
  if (found)
    return GPOINTER_TO_UINT(found) - 1;
  tm_model *model = state->model;
  tm_track_row row = {
      .name = key->name,
      .type = key->type,
      /* Dimension arg sets are written by import_finish_tracks(), after
       * import, so that they never interleave with a reader's args. */
      .dimension_arg_set_id = 0,
      .parent_id = TM_NULL_ID,
      .machine_id = key->machine_id,
      .track_group_id = TM_NULL_ID,
      .event_type = key->is_counter ? TM_TRACK_COUNTER : TM_TRACK_SLICE,
      .utid = key->utid,
      .upid = key->upid,
      .trace_id = key->trace_id,
      .dimension_scope = key->scope,
      .cpu_dimension = key->cpu_dimension,
  };
  tm_vec_push(&model->tracks, row);
  uint32_t id = (uint32_t)(model->tracks.len - 1);
  g_hash_table_insert(state->tracks, g_memdup2(key, sizeof *key),
                      GUINT_TO_POINTER(id + 1));
  return id;
}

static tm_track_ref svc_track_thread(tm_host *host, tm_thread_ref thread) {
  tm_model *model = model_of(host);
  if (!thread_row(host, "track_thread", thread))
    return 0;
  track_key key;
  memset(&key, 0, sizeof key);
  key.trace_id = host->file_id;
  key.machine_id = model->threads.data[UNREF(thread)].machine_id;
  key.type = string_pool_intern_cstr(model->strings, "thread_execution");
  key.utid = UNREF(thread);
  key.upid = TM_NULL_ID;
  return REF(track_intern(host->state, &key));
}

/* Interns a described track on `machine_id`. A cpu track (cpu_dimension =
 * ucpu + 1) is machine-wide; otherwise a thread or process dimension puts
 * the track on that thread's or process's machine instead. */
static tm_track_ref intern_described_track(tm_host *host, uint32_t machine_id,
                                           const tm_track_desc *desc,
                                           uint32_t cpu_dimension) {
  tm_model *model = model_of(host);
  track_key key;
  memset(&key, 0, sizeof key);
  key.trace_id = host->file_id;
  key.machine_id = machine_id;
  key.type = string_pool_intern_cstr(model->strings, desc->type);
  key.name = desc->name;
  key.utid = TM_NULL_ID;
  key.upid = TM_NULL_ID;
  if (!cpu_dimension && desc->thread && UNREF(desc->thread) < model->threads.len) {
    key.utid = UNREF(desc->thread);
    key.machine_id = model->threads.data[key.utid].machine_id;
  }
  if (!cpu_dimension && desc->process && UNREF(desc->process) < model->processes.len) {
    key.upid = UNREF(desc->process);
    key.machine_id = model->processes.data[key.upid].machine_id;
  }
  key.scope = desc->scope;
  key.is_counter = desc->is_counter ? 1 : 0;
  key.key = desc->key;
  key.cpu_dimension = cpu_dimension;
  uint32_t id = track_intern(host->state, &key);
  if (desc->unit)
    model->tracks.data[id].counter_unit = desc->unit;
  return REF(id);
}

/* The smallest tm_track_desc of version 2: every field up to cpu. */
#define TRACK_DESC_V2_SIZE (offsetof(tm_track_desc, cpu) + sizeof(uint32_t))

/* Why a description is refused (it is, by the caller). */
static const char *track_desc_refusal(const tm_track_desc *desc) {
  if (!desc)
    return "no tm_track_desc";
  if (desc->struct_size < TRACK_DESC_V2_SIZE)
    return "tm_track_desc shorter than version 2's";
  return "a tm_track_desc without a type";
}

/* Resolving the machine first: a description with no machine attributes
 * data to the file's base machine even when it is refused. */
static tm_track_ref svc_track_intern(tm_host *host, const tm_track_desc *desc) {
  bool valid = desc && desc->struct_size >= TRACK_DESC_V2_SIZE;
  uint32_t machine_id = machine_of_ref(host, valid ? desc->machine : 0);
  if (!valid || !desc->type) {
    host_refuse_call(host, "track_intern", track_desc_refusal(desc));
    return 0;
  }
  if (!desc->has_cpu)
    return intern_described_track(host, machine_id, desc, 0);
  uint32_t ucpu = sched_cpu_intern(model_of(host), machine_id, desc->cpu);
  if (ucpu == TM_NULL_ID)
    return CPU_OUT_OF_RANGE_TRACK; /* counted where it is used */
  return intern_described_track(host, machine_id, desc, ucpu + 1);
}

static bool track_valid(tm_host *host, tm_track_ref track);
static bool track_of_file(tm_host *host, uint32_t id);

/* The set is described like any track; its tracks are made in pass 2
 * (core/model/async_tracks.h). */
static tm_track_ref svc_track_async(tm_host *host, const tm_track_desc *set,
                                    uint64_t cookie, uint32_t flags) {
  bool valid = set && set->struct_size >= TRACK_DESC_V2_SIZE;
  uint32_t machine_id = machine_of_ref(host, valid ? set->machine : 0);
  if (!valid || !set->type) {
    host_refuse_call(host, "track_async", track_desc_refusal(set));
    return 0;
  }
  tm_model *model = model_of(host);
  tm_track_row row = {
      .type = string_pool_intern_cstr(model->strings, set->type),
      .name = set->name,
      .machine_id = machine_id,
      .event_type = set->is_counter ? TM_TRACK_COUNTER : TM_TRACK_SLICE,
      .utid = TM_NULL_ID,
      .upid = TM_NULL_ID,
      .trace_id = host->file_id,
      .dimension_scope = set->scope,
  };
  if (set->thread && UNREF(set->thread) < model->threads.len) {
    row.utid = UNREF(set->thread);
    row.machine_id = model->threads.data[row.utid].machine_id;
  }
  if (set->process && UNREF(set->process) < model->processes.len) {
    row.upid = UNREF(set->process);
    row.machine_id = model->processes.data[row.upid].machine_id;
  }
  /* The merge fields, when the reader's description is that long. */
  tm_async_merge merge = {.parent = TM_NULL_ID};
  if (set->struct_size >= offsetof(tm_track_desc, merge_key) + sizeof(tm_str_id)) {
    if (set->parent && track_valid(host, set->parent) &&
        track_of_file(host, UNREF(set->parent)))
      merge.parent = UNREF(set->parent);
    merge.set_key = set->set_key;
    merge.merge_key = set->merge_key;
  }
  if (set->struct_size >= offsetof(tm_track_desc, nameless) + sizeof(uint32_t))
    merge.nameless = set->nameless != 0;
  return REF(async_tracks_slot(host->state->async_tracks, &row, &merge,
                               (flags & TM_ASYNC_UNNESTABLE) != 0, cookie));
}

uint32_t import_overflow_track(tm_import_state *state, uint32_t track_id) {
  tm_track_row *base = &state->model->tracks.data[track_id];
  track_key key;
  memset(&key, 0, sizeof key);
  key.trace_id = base->trace_id;
  key.machine_id = base->machine_id;
  key.type =
      string_pool_intern_cstr(state->model->strings, "thread_overlapping_slice");
  key.utid = base->utid;
  key.upid = base->upid;
  /* Each spill level is its own track: the key is the base track id plus
   * one, so overflow tracks of different base tracks never merge. */
  key.key = (uint64_t)track_id + 1;
  return track_intern(state, &key);
}

/* --- args ------------------------------------------------------------------ */

/* Pairs are buffered in the host and written at commit, so every committed
 * set occupies consecutive rows of model->args even when the reader creates
 * tracks or threads (which may add rows) while building it. */
static void svc_args_add(tm_host *host, tm_str_id key, tm_arg_value value) {
  if (!key) {
    host_refuse_call(host, "args_add", "no key");
    return;
  }
  tm_host_pending_arg pending = {key, value};
  tm_vec_push(&host->pending_args, pending);
}

/* The value goes to the model's arg text (model/arg_text.h), not the
 * string pool: a pending pair carries the stored copy's handle, flagged
 * TM_ARG_IN_TEXT, to model_add_arg at commit (or through a buffered
 * file's staging, which copies pairs as they are). */
static void svc_args_add_string(tm_host *host, tm_str_id key, tm_arg_type type,
                                const char *s, size_t len) {
  if (!key) {
    host_refuse_call(host, "args_add_string", "no key");
    return;
  }
  if (type != TM_ARG_JSON)
    type = TM_ARG_STRING;
  if (!s) {
    s = "";
    len = 0;
  }
  tm_model *model = model_of(host);
  tm_arg_value value = {.type = type};
  if (memchr(s, 0, len))
    value.u.str_id = intern_without_nul(model->strings, s, len);
  else
    value = model_arg_text_value(model, type, s, len);
  tm_host_pending_arg pending = {key, value};
  tm_vec_push(&host->pending_args, pending);
}

/* The callsite's row id as an int arg (plugin.h). */
static void svc_args_add_callsite(tm_host *host, tm_str_id key, tm_callsite_ref callsite) {
  if (!callsite)
    return;
  const char *refusal = !key ? "no key"
                        : UNREF(callsite) >= model_of(host)->stack_profile_callsites.len
                            ? "no such callsite"
                            : NULL;
  if (refusal) {
    host_refuse_call(host, "args_add_callsite", refusal);
    return;
  }
  svc_args_add(host, key, (tm_arg_value){.type = TM_ARG_INT,
                                         .u.int_value = (int64_t)UNREF(callsite)});
}

static tm_args_ref svc_args_commit(tm_host *host) {
  if (host->pending_args.len == 0)
    return TM_NO_ARGS;
  /* A buffered file's sets wait with its events, which may be given up. */
  if (host->buffer >= 0)
    return host->state->hooks->buffer_args(host);
  tm_model *model = model_of(host);
  uint32_t set = 0;
  for (size_t i = 0; i < host->pending_args.len; i++)
    set = model_add_arg(model, set, host->pending_args.data[i].key,
                        host->pending_args.data[i].value);
  host->pending_args.len = 0;
  return set;
}

/* --- events -------------------------------------------------------------- */

static tm_event_run *run_for_slow(tm_host *host, tm_clock_ref clock) {
  tm_import_state *state = host->state;
  tm_clock_node node = clock ? UNREF(clock) : host->private_clock;
  if (node >= clock_graph_node_count(state->clocks))
    node = host->private_clock;
  node = host_clock_node(host, node);
  const tm_clock_key *key = clock_graph_node_key(state->clocks, node);
  if (key->machine_id == host->machine_id)
    host->base_machine_has_data = true;
  host->last_run = sorter_run(state->sorter, node, key->machine_id, host->file_id);
  host->last_clock = clock;
  return host->last_run;
}

/* The run for events on `clock`: a reader emits on one clock for long
 * stretches, so the last one is checked inline, once per event. */
static inline tm_event_run *run_for(tm_host *host, tm_clock_ref clock) {
  if (G_LIKELY(clock == host->last_clock && host->last_run))
    return host->last_run;
  return run_for_slow(host, clock);
}

static bool track_valid(tm_host *host, tm_track_ref track) {
  return track != 0 && (UNREF(track) < model_of(host)->tracks.len ||
                        async_tracks_is_slot(host->state->async_tracks,
                                             UNREF(track)));
}

/* True if `id` (a track or a slot) was made for this file. */
static bool track_of_file(tm_host *host, uint32_t id) {
  tm_import_state *state = host->state;
  if (async_tracks_is_slot(state->async_tracks, id))
    return async_tracks_trace_id(state->async_tracks, id) == host->file_id;
  return state->model->tracks.data[id].trace_id == host->file_id;
}

/* The smallest tm_slice_fields of version 2: every field up to thread_dur.
 * A larger one comes from a later reader: its fields past ours are not
 * read. */
#define SLICE_FIELDS_V2_SIZE                                                \
  (offsetof(tm_slice_fields, thread_dur) + sizeof(int64_t))

/* Why the host cannot take `f`, or NULL if it can. */
static const char *slice_fields_refusal(tm_host *host, const tm_slice_fields *f) {
  if (!f)
    return "no tm_slice_fields";
  if (f->struct_size < SLICE_FIELDS_V2_SIZE)
    return "tm_slice_fields shorter than version 2's";
  if (!track_valid(host, f->track))
    return NO_SUCH_TRACK;
  if (!args_ref_valid(host, f->args))
    return "no such arg set";
  return NULL;
}

static const char *const SLICE_CALL_NAMES[] = {
    [TM_EVENT_SLICE_BEGIN] = "slice_begin",
    [TM_EVENT_SLICE_END] = "slice_end",
    [TM_EVENT_SLICE_COMPLETE] = "slice_complete",
};

/* The run of `clock` when events go straight to it and it has room for
 * one more, else NULL. A slice, switch or wakeup whose track, threads
 * or cpu row are known and whose run has room is pushed by its service
 * without a call (half a system trace's events are switches and
 * wakeups, most of the rest atrace slices); anything else takes the
 * full path, which pushes the same event. */
static inline tm_event_run *run_with_room(tm_host *host, tm_clock_ref clock) {
  tm_event_run *run = host->last_run;
  if (G_LIKELY(clock == host->last_clock && run && host->buffer < 0 && run->len < run->cap))
    return run;
  return NULL;
}

static __attribute__((noinline)) void push_slice_full(tm_host *host, const tm_slice_fields *f,
                                                      tm_event_kind kind, int64_t dur_ns) {
  if (__builtin_expect(!f || f->struct_size < SLICE_FIELDS_V2_SIZE ||
                           !track_valid(host, f->track) || !args_ref_valid(host, f->args),
                       0)) {
    const char *refusal = slice_fields_refusal(host, f);
    refuse_track_call(host, SLICE_CALL_NAMES[kind], refusal,
                      refusal == NO_SUCH_TRACK ? f->track : 0);
    return;
  }
  tm_event ev = {
      .ts = f->ts,
      .u.dur_ns = dur_ns,
      .track_id = UNREF(f->track),
      .name_id = f->name,
      .category_id = f->category,
      .arg_set_id = f->args,
      .kind = (uint8_t)kind,
  };
  tm_event_run *run = run_for(host, f->clock);
  if (host->buffer >= 0) {
    host->state->hooks->buffer_event(host, run, &ev, f->thread_ts, f->thread_dur);
    return;
  }
  import_state_add_extra(host->state, &ev, f->thread_ts, f->thread_dur);
  event_run_push(run, &ev);
  if (kind != TM_EVENT_SLICE_END)
    host->state->slice_events++;
}

static inline void push_slice(tm_host *host, const tm_slice_fields *f, tm_event_kind kind,
                              int64_t dur_ns) {
  tm_event_run *run;
  if (!f || f->struct_size < SLICE_FIELDS_V2_SIZE || f->track == 0 ||
      UNREF(f->track) >= model_of(host)->tracks.len || !args_ref_valid(host, f->args) ||
      f->thread_ts != TM_UNKNOWN_TIME || f->thread_dur != TM_UNKNOWN_TIME ||
      !(run = run_with_room(host, f->clock))) {
    push_slice_full(host, f, kind, dur_ns);
    return;
  }
  tm_event ev = {
      .ts = f->ts,
      .u.dur_ns = dur_ns,
      .track_id = UNREF(f->track),
      .name_id = f->name,
      .category_id = f->category,
      .arg_set_id = f->args,
      .kind = (uint8_t)kind,
  };
  event_run_push(run, &ev);
  if (kind != TM_EVENT_SLICE_END)
    host->state->slice_events++;
}

/* An event without thread times: to the file's buffer, or its run.
 * Inline in its callers: a switch or a wakeup, half a system trace's
 * events, then builds its event in place in the run. */
static inline __attribute__((always_inline)) void push_event(tm_host *host, tm_clock_ref clock,
                                                             const tm_event *ev) {
  tm_event_run *run = run_for(host, clock);
  if (host->buffer >= 0)
    host->state->hooks->buffer_event(host, run, ev, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME);
  else
    event_run_push(run, ev);
}

static void svc_slice_begin(tm_host *host, const tm_slice_fields *f) {
  push_slice(host, f, TM_EVENT_SLICE_BEGIN, 0);
}

static void svc_slice_end(tm_host *host, const tm_slice_fields *f) {
  push_slice(host, f, TM_EVENT_SLICE_END, 0);
}

static void svc_slice_complete(tm_host *host, const tm_slice_fields *f,
                               int64_t dur_ns) {
  push_slice(host, f, TM_EVENT_SLICE_COMPLETE, dur_ns);
}

static void svc_counter(tm_host *host, tm_track_ref track, tm_clock_ref clock,
                        int64_t ts, double value, tm_args_ref args) {
  const char *refusal = !track_valid(host, track)      ? NO_SUCH_TRACK
                        : !args_ref_valid(host, args) ? "no such arg set"
                                                      : NULL;
  if (refusal) {
    refuse_track_call(host, "counter", refusal, track);
    return;
  }
  tm_event ev = {
      .ts = ts,
      .u.value = value,
      .track_id = UNREF(track),
      .arg_set_id = args,
      .kind = TM_EVENT_COUNTER,
  };
  push_event(host, clock, &ev);
  if (host->buffer < 0)
    host->state->counter_events++;
}

static void svc_flow(tm_host *host, tm_track_ref track, tm_clock_ref clock,
                     int64_t ts, uint64_t flow_id, tm_flow_direction direction,
                     tm_flow_binding binding, tm_args_ref args) {
  const char *refusal = !track_valid(host, track) ? NO_SUCH_TRACK
                        : (uint32_t)direction > TM_FLOW_IN_KEEP ? "no such flow direction"
                        : (uint32_t)binding > TM_FLOW_BIND_NEXT_BEGIN ? "no such flow binding"
                        : !args_ref_valid(host, args)                 ? "no such arg set"
                                                                      : NULL;
  if (refusal) {
    refuse_track_call(host, "flow", refusal, track);
    return;
  }
  tm_event ev = {
      .ts = ts,
      .u.flow_id = flow_id,
      .track_id = UNREF(track),
      .arg_set_id = args,
      .kind = TM_EVENT_FLOW,
      .flags = (uint8_t)((direction & TM_EVENT_FLOW_DIRECTION_MASK) |
                         (binding == TM_FLOW_BIND_NEXT_BEGIN
                              ? TM_EVENT_FLOW_BIND_NEXT
                              : 0)),
  };
  push_event(host, clock, &ev);
}

/* --- metadata, stats, errors -------------------------------------------- */

/* False, with the call refused, for a NULL name: metadata and stats are
 * found by name. */
static bool has_name(tm_host *host, const char *call, const char *name) {
  if (!name)
    host_refuse_call(host, call, "no name");
  return name != NULL;
}

static void svc_metadata_set_int(tm_host *host, const char *name,
                                 int64_t value) {
  if (has_name(host, "metadata_set_int", name))
    model_metadata_set_int(model_of(host), name, host->machine_id,
                           host->file_id, value);
}

static void svc_metadata_set_string(tm_host *host, const char *name,
                                    tm_str_id value) {
  if (has_name(host, "metadata_set_string", name))
    model_metadata_set_string(model_of(host), name, host->machine_id,
                              host->file_id, value);
}

/* The host's own counts (sched_cpu_out_of_range) come here too, always
 * with a name. */
static void svc_stat_add(tm_host *host, const char *name, int64_t delta) {
  if (has_name(host, "stat_add", name))
    stats_add(host->state->stats, name, TM_NULL_INT64, host->machine_id,
              host->file_id, delta);
}

/* The smallest tm_import_log_arg of version 2. */
#define IMPORT_LOG_ARG_V2_SIZE                                              \
  (offsetof(tm_import_log_arg, string_len) + sizeof(size_t))

void host_import_log(tm_host *host, const char *name, int64_t byte_offset,
                     const tm_import_log_arg *args, size_t n_args) {
  if (has_name(host, "import_log", name))
    stats_log(host->state->stats, name, host->machine_id, host->file_id,
              TM_NULL_INT64, byte_offset, args, args ? n_args : 0);
}

/* One occurrence of a stat with its details (docs/sql-surface.md, import
 * logs), counted and logged by stats_log, which bounds the rows. The args
 * are read with the stride of their struct_size; args of another size than
 * ours are copied into our layout first, and invalid ones dropped. */
static void svc_import_log(tm_host *host, const char *name, int64_t byte_offset,
                           const tm_import_log_arg *args, size_t n_args) {
  if (!args || n_args == 0 || args[0].struct_size == sizeof(tm_import_log_arg)) {
    host_import_log(host, name, byte_offset, args, args ? n_args : 0);
    return;
  }
  uint32_t stride = args[0].struct_size;
  if (stride < IMPORT_LOG_ARG_V2_SIZE) {
    host_import_log(host, name, byte_offset, NULL, 0);
    return;
  }
  tm_import_log_arg *copies = g_new0(tm_import_log_arg, n_args);
  for (size_t i = 0; i < n_args; i++)
    memcpy(&copies[i], (const char *)args + i * stride,
           MIN((size_t)stride, sizeof *copies));
  host_import_log(host, name, byte_offset, copies, n_args);
  g_free(copies);
}

/* Checked before any reading of the sync is added, so a PINned file fails
 * with the single-machine message, not the single-clock one its client
 * snapshot would raise. */
static bool svc_remote_clock_sync(tm_host *host) {
  return host->state->hooks->remote_sync_allowed(host);
}

static void svc_report_error(tm_host *host, int64_t byte_offset,
                             const char *message) {
  if (host->error_message)
    return;
  host->error_message = g_strdup(message ? message : "unknown error");
  host->error_offset = byte_offset;
}

/* --- more track and process services ----------------------------------- */

static int64_t svc_budget(tm_host *host, uint32_t which) {
  return host_services_budget(&host->state->budgets, which);
}

int64_t host_services_budget(const tm_budgets *budgets, uint32_t which) {
  switch (which) {
  case TM_BUDGET_RECORD_BYTES:
    return budgets->max_record_bytes > INT64_MAX ? INT64_MAX
                                                 : (int64_t)budgets->max_record_bytes;
  case TM_BUDGET_INFLATE_RATIO:
    return budgets->max_inflate_ratio > INT64_MAX ? INT64_MAX
                                                  : (int64_t)budgets->max_inflate_ratio;
  default:
    return -1;
  }
}


/* A slot (async_tracks) stands for the tracks its set makes; a parent
 * slot is resolved to its set's first track after pass 2
 * (async_tracks_finish_parents). */
static void svc_track_set_parent(tm_host *host, tm_track_ref track,
                                 tm_track_ref parent) {
  tm_model *model = model_of(host);
  const char *refusal =
      !track_valid(host, track)                ? NO_SUCH_TRACK
      : !track_valid(host, parent)             ? NO_SUCH_PARENT_TRACK
      : track == parent                        ? "a track cannot be its own parent"
      : !track_of_file(host, UNREF(track))     ? "a track of another file"
      : !track_of_file(host, UNREF(parent))    ? "a parent track of another file"
                                               : NULL;
  if (refusal) {
    refuse_track_call(host, "track_set_parent", refusal,
                      refusal == NO_SUCH_PARENT_TRACK ? parent : track);
    return;
  }
  if (async_tracks_is_slot(host->state->async_tracks, UNREF(track))) {
    async_tracks_set_parent(host->state->async_tracks, UNREF(track), UNREF(parent));
    return;
  }
  model->tracks.data[UNREF(track)].parent_id = UNREF(parent);
}

static void svc_track_add_source_arg(tm_host *host, tm_track_ref track,
                                     tm_str_id key, tm_arg_value value) {
  tm_model *model = model_of(host);
  const char *refusal = !track_valid(host, track) ? NO_SUCH_TRACK : !key ? "no key" : NULL;
  if (refusal) {
    refuse_track_call(host, "track_add_source_arg", refusal, track);
    return;
  }
  uint32_t *set = async_tracks_source_args(host->state->async_tracks, UNREF(track));
  if (!set)
    set = &model->tracks.data[UNREF(track)].source_arg_set_id;
  *set = model_add_arg(model, *set, key, value);
}

static void svc_process_set_cmdline(tm_host *host, tm_process_ref process,
                                    tm_str_id cmdline) {
  tm_process_row *row = process_row(host, "process_set_cmdline", process);
  if (row)
    row->cmdline = cmdline;
}

static void svc_process_set_parent(tm_host *host, tm_process_ref process,
                                   tm_process_ref parent) {
  tm_process_row *row = process_row(host, "process_set_parent", process);
  if (!row)
    return;
  const char *refusal = !process_ref_valid(host, parent) ? "no such parent process"
                        : parent == process ? "a process cannot be its own parent"
                                            : NULL;
  if (refusal)
    host_refuse_call(host, "process_set_parent", refusal);
  else
    row->parent_upid = UNREF(parent);
}

static void svc_process_set_uid(tm_host *host, tm_process_ref process,
                                int64_t uid) {
  tm_process_row *row = process_row(host, "process_set_uid", process);
  if (!row)
    return;
  row->uid = uid;
  /* The app id is the uid within its Android user (UserHandle's
   * PER_USER_RANGE), as trace_processor derives it with the uid. */
  row->android_appid = uid >= 0 ? uid % 100000 : TM_NULL_INT64;
}

static void svc_machine_set_info(tm_host *host, tm_machine_ref machine,
                                 const char *column, tm_arg_value value) {
  tm_model *model = model_of(host);
  if (!column) {
    host_refuse_call(host, "machine_set_info", "no column");
    return;
  }
  tm_machine_row *row = &model->machines.data[machine_of_ref(host, machine)];
  static const struct {
    const char *column;
    size_t offset;
  } strings[] = {
      {"name", offsetof(tm_machine_row, name)},
      {"sysname", offsetof(tm_machine_row, sysname)},
      {"release", offsetof(tm_machine_row, release)},
      {"version", offsetof(tm_machine_row, version)},
      {"arch", offsetof(tm_machine_row, arch)},
      {"android_build_fingerprint", offsetof(tm_machine_row, android_build_fingerprint)},
      {"android_device_manufacturer", offsetof(tm_machine_row, android_device_manufacturer)},
  };
  if (value.type == TM_ARG_STRING) {
    for (size_t i = 0; i < G_N_ELEMENTS(strings); i++)
      if (strcmp(column, strings[i].column) == 0) {
        *(tm_str_id *)((char *)row + strings[i].offset) = value.u.str_id;
        return;
      }
  } else if (value.type == TM_ARG_INT) {
    if (strcmp(column, "num_cpus") == 0) {
      row->num_cpus = value.u.int_value;
      return;
    }
    if (strcmp(column, "android_sdk_version") == 0) {
      row->android_sdk_version = value.u.int_value;
      return;
    }
    if (strcmp(column, "system_ram_bytes") == 0) {
      row->system_ram_bytes = value.u.int_value;
      /* round(bytes / 1e9), as docs/sql-surface.md §1 */
      row->system_ram_gb = (value.u.int_value + 500000000) / 1000000000;
      return;
    }
  }
  host_refuse_call(host, "machine_set_info", "no such column of that type");
}

/* --- scheduling ------------------------------------------------------------ */

/* The cpu row of `cpu` on `machine` if it is made, else TM_NULL_ID (the
 * full path makes it, or says why it cannot). */
static inline uint32_t cpu_row_known(tm_host *host, tm_machine_ref machine, uint32_t cpu) {
  tm_model *model = model_of(host);
  uint32_t machine_id = machine_of_ref(host, machine);
  if (cpu > TM_SCHED_MAX_CPU || machine_id == TM_NULL_ID)
    return TM_NULL_ID;
  size_t slot = (size_t)machine_id * ((size_t)TM_SCHED_MAX_CPU + 1) + cpu;
  if (slot < model->cpu_lookup.len && model->cpu_lookup.data[slot])
    return model->cpu_lookup.data[slot] - 1;
  return TM_NULL_ID;
}

static __attribute__((noinline)) void sched_switch_full(tm_host *host, tm_clock_ref clock,
                                                        int64_t ts, tm_machine_ref machine,
                                                        uint32_t cpu, tm_thread_ref prev,
                                                        tm_str_id prev_state,
                                                        tm_thread_ref next, int32_t next_prio) {
  if (!thread_ref_valid(host, prev) || !thread_ref_valid(host, next)) {
    host_refuse_call(host, "sched_switch", "no such thread");
    return;
  }
  uint32_t ucpu = sched_cpu_intern(model_of(host), machine_of_ref(host, machine), cpu);
  if (ucpu == TM_NULL_ID) {
    svc_stat_add(host, "sched_cpu_out_of_range", 1);
    return;
  }
  tm_event ev = {
      .ts = ts,
      .u.dur_ns = next_prio,
      .track_id = ucpu,
      .name_id = prev_state,
      .category_id = UNREF(prev),
      .arg_set_id = UNREF(next),
      .kind = TM_EVENT_SCHED_SWITCH,
  };
  push_event(host, clock, &ev);
}

static void svc_sched_switch(tm_host *host, tm_clock_ref clock, int64_t ts,
                             tm_machine_ref machine, uint32_t cpu,
                             tm_thread_ref prev, tm_str_id prev_state,
                             tm_thread_ref next, int32_t next_prio) {
  tm_event_run *run = run_with_room(host, clock);
  uint32_t ucpu;
  if (!run || !thread_ref_valid(host, prev) || !thread_ref_valid(host, next) ||
      (ucpu = cpu_row_known(host, machine, cpu)) == TM_NULL_ID) {
    sched_switch_full(host, clock, ts, machine, cpu, prev, prev_state, next, next_prio);
    return;
  }
  tm_event ev = {
      .ts = ts,
      .u.dur_ns = next_prio,
      .track_id = ucpu,
      .name_id = prev_state,
      .category_id = UNREF(prev),
      .arg_set_id = UNREF(next),
      .kind = TM_EVENT_SCHED_SWITCH,
  };
  event_run_push(run, &ev);
}

static __attribute__((noinline)) void sched_waking_full(tm_host *host, tm_clock_ref clock,
                                                        int64_t ts, tm_machine_ref machine,
                                                        uint32_t target_cpu,
                                                        tm_thread_ref thread,
                                                        tm_thread_ref waker) {
  if (!thread_ref_valid(host, thread)) {
    host_refuse_call(host, "sched_waking", "no such thread");
    return;
  }
  uint32_t ucpu =
      sched_cpu_intern(model_of(host), machine_of_ref(host, machine), target_cpu);
  if (ucpu == TM_NULL_ID) {
    svc_stat_add(host, "sched_cpu_out_of_range", 1);
    return;
  }
  tm_event ev = {
      .ts = ts,
      .track_id = ucpu,
      .category_id = UNREF(thread),
      .arg_set_id = thread_ref_valid(host, waker) ? UNREF(waker) : TM_NULL_ID,
      .kind = TM_EVENT_SCHED_WAKING,
  };
  push_event(host, clock, &ev);
}

static void svc_sched_waking(tm_host *host, tm_clock_ref clock, int64_t ts,
                             tm_machine_ref machine, uint32_t target_cpu,
                             tm_thread_ref thread, tm_thread_ref waker) {
  tm_event_run *run = run_with_room(host, clock);
  uint32_t ucpu;
  if (!run || !thread_ref_valid(host, thread) ||
      (ucpu = cpu_row_known(host, machine, target_cpu)) == TM_NULL_ID) {
    sched_waking_full(host, clock, ts, machine, target_cpu, thread, waker);
    return;
  }
  tm_event ev = {
      .ts = ts,
      .track_id = ucpu,
      .category_id = UNREF(thread),
      .arg_set_id = thread_ref_valid(host, waker) ? UNREF(waker) : TM_NULL_ID,
      .kind = TM_EVENT_SCHED_WAKING,
  };
  event_run_push(run, &ev);
}

/* --- profiling -------------------------------------------------------- */

static tm_mapping_ref svc_mapping(tm_host *host, tm_str_id name,
                                  tm_str_id build_id, uint64_t start,
                                  uint64_t end, uint64_t exact_offset,
                                  uint64_t load_bias) {
  return REF(profile_intern_mapping(model_of(host), name, build_id, start, end,
                                    exact_offset, load_bias));
}

static tm_frame_ref svc_frame(tm_host *host, tm_str_id function_name,
                              tm_mapping_ref mapping, uint64_t rel_pc) {
  uint32_t mapping_id = mapping ? UNREF(mapping) : TM_NULL_ID;
  return REF(profile_intern_frame(model_of(host), function_name, mapping_id,
                                  rel_pc));
}

/* 0 for a frame or parent that names no row: the reader's stack is broken
 * there, and the sample falls back to no stack rather than a wrong one. */
static tm_callsite_ref svc_callsite(tm_host *host, tm_callsite_ref parent,
                                    tm_frame_ref frame) {
  tm_model *model = model_of(host);
  const char *refusal =
      !frame || UNREF(frame) >= model->stack_profile_frames.len ? "no such frame"
      : parent && UNREF(parent) >= model->stack_profile_callsites.len
          ? "no such parent callsite"
          : NULL;
  if (refusal) {
    host_refuse_call(host, "callsite", refusal);
    return 0;
  }
  return REF(profile_intern_callsite(model, parent ? UNREF(parent) : TM_NULL_ID,
                                     UNREF(frame)));
}

void host_sample(tm_host *host, int table, tm_clock_ref clock, int64_t ts,
                 tm_thread_ref thread, tm_callsite_ref callsite, int32_t cpu) {
  tm_model *model = model_of(host);
  if (!thread_ref_valid(host, thread)) {
    host_refuse_call(host, "sample", "no such thread");
    return;
  }
  if (callsite && UNREF(callsite) >= model->stack_profile_callsites.len)
    callsite = 0;
  /* The core a sample ran on is a cpu row of the thread's machine. */
  if (cpu >= 0 && sched_cpu_intern(model, model->threads.data[UNREF(thread)].machine_id,
                                   (uint32_t)cpu) == TM_NULL_ID) {
    svc_stat_add(host, "sched_cpu_out_of_range", 1);
    cpu = -1;
  }
  tm_event ev = {
      .ts = ts,
      .u.dur_ns = cpu < 0 ? -1 : cpu,
      .track_id = UNREF(thread),
      .name_id = callsite,
      .category_id = (uint32_t)table,
      .kind = TM_EVENT_SAMPLE,
  };
  push_event(host, clock, &ev);
}

/* The sample table is the one the reader's descriptor names. */
static void svc_sample(tm_host *host, tm_clock_ref clock, int64_t ts,
                       tm_thread_ref thread, tm_callsite_ref callsite,
                       int32_t cpu) {
  host_sample(host, host->reader->sample_table, clock, ts, thread, callsite, cpu);
}

/* --- system traces -------------------------------------------------------- */

/* A slice begin flagged with its frame timeline row, which the model
 * builder links to the slice it makes (core/model/system_builder.h). */
static void svc_frame_timeline_begin(tm_host *host, const tm_slice_fields *f,
                                     const tm_frame_timeline_fields *frame) {
  tm_model *model = model_of(host);
  const char *refusal = !frame || frame->struct_size < sizeof *frame
                            ? "no tm_frame_timeline_fields, or a short one"
                            : slice_fields_refusal(host, f);
  if (refusal) {
    refuse_track_call(host, "frame_timeline_begin", refusal,
                      refusal == NO_SUCH_TRACK ? f->track : 0);
    return;
  }
  tm_frame_timeline_row row = {
      .slice_id = TM_NULL_ID,
      .is_actual = frame->is_actual ? 1 : 0,
      .on_time_finish = (int8_t)(frame->on_time_finish < 0 ? -1 : frame->on_time_finish != 0),
      .gpu_composition = (int8_t)(frame->gpu_composition < 0 ? -1 : frame->gpu_composition != 0),
      .display_frame_token = frame->display_frame_token == INT64_MIN
                                 ? TM_NULL_INT64 : frame->display_frame_token,
      .surface_frame_token = frame->surface_frame_token == INT64_MIN
                                 ? TM_NULL_INT64 : frame->surface_frame_token,
      .upid = frame->process && UNREF(frame->process) < model->processes.len
                  ? UNREF(frame->process) : TM_NULL_ID,
      .layer_name = frame->layer_name,
      .present_type = frame->present_type,
      .jank_type = frame->jank_type,
      .jank_severity_type = frame->jank_severity_type,
      .prediction_type = frame->prediction_type,
      .jank_tag = frame->jank_tag,
  };
  tm_vec_push(&model->frame_timeline, row);
  tm_event ev = {
      .ts = f->ts,
      .track_id = UNREF(f->track),
      .name_id = f->name,
      .category_id = f->category,
      .arg_set_id = f->args,
      .u.x.extra = (uint32_t)(model->frame_timeline.len - 1),
      .kind = TM_EVENT_SLICE_BEGIN,
      .flags = TM_EVENT_HAS_FRAME,
  };
  event_run_push(run_for(host, f->clock), &ev);
  host->state->slice_events++;
}

static void svc_ftrace_event(tm_host *host, tm_clock_ref clock, int64_t ts,
                             tm_machine_ref machine, uint32_t cpu,
                             tm_thread_ref thread, tm_str_id name, tm_args_ref args) {
  if (!args_ref_valid(host, args)) {
    host_refuse_call(host, "ftrace_event", "no such arg set");
    return;
  }
  uint32_t ucpu = sched_cpu_intern(model_of(host), machine_of_ref(host, machine), cpu);
  if (ucpu == TM_NULL_ID) {
    svc_stat_add(host, "sched_cpu_out_of_range", 1);
    return;
  }
  tm_event ev = {
      .ts = ts,
      .track_id = ucpu,
      .category_id = thread_ref_valid(host, thread) ? UNREF(thread) : TM_NULL_ID,
      .name_id = name,
      .arg_set_id = args,
      .kind = TM_EVENT_FTRACE_RAW,
  };
  /* To a buffered file's buffer too, which resolves its staged args. */
  push_event(host, clock, &ev);
}

static void svc_android_log(tm_host *host, tm_clock_ref clock, int64_t ts,
                            tm_thread_ref thread, uint32_t prio, tm_str_id tag,
                            tm_str_id msg, tm_args_ref args) {
  if (!args_ref_valid(host, args)) {
    host_refuse_call(host, "android_log", "no such arg set");
    return;
  }
  tm_event ev = {
      .ts = ts,
      .u.dur_ns = msg,
      .track_id = prio,
      .category_id = thread_ref_valid(host, thread) ? UNREF(thread) : TM_NULL_ID,
      .name_id = tag,
      .arg_set_id = args,
      .kind = TM_EVENT_ANDROID_LOG,
  };
  push_event(host, clock, &ev); /* as svc_ftrace_event */
}

static void svc_package(tm_host *host, tm_machine_ref machine, tm_str_id name,
                        int64_t uid, int32_t debuggable, int32_t profileable,
                        int64_t version_code) {
  tm_package_row row = {
      .package_name = name,
      .uid = uid,
      .debuggable = (int8_t)(debuggable < 0 ? -1 : debuggable != 0),
      .profileable_from_shell = (int8_t)(profileable < 0 ? -1 : profileable != 0),
      .version_code = version_code,
      .machine_id = machine_of_ref(host, machine),
  };
  tm_vec_push(&model_of(host)->packages, row);
}

static void svc_thread_lifetime(tm_host *host, tm_clock_ref clock, int64_t ts,
                                tm_thread_ref thread, uint32_t is_end) {
  if (!thread_ref_valid(host, thread)) {
    host_refuse_call(host, "thread_lifetime", "no such thread");
    return;
  }
  tm_event ev = {
      .ts = ts,
      .u.dur_ns = is_end ? 1 : 0,
      .track_id = UNREF(thread),
      .category_id = UNREF(thread),
      .kind = TM_EVENT_THREAD_LIFETIME,
  };
  event_run_push(run_for(host, clock), &ev);
}

static void svc_stat_set_indexed(tm_host *host, const char *name, int64_t idx,
                                 int64_t value) {
  if (has_name(host, "stat_set_indexed", name))
    stats_set(host->state->stats, name, idx < 0 ? TM_NULL_INT64 : idx,
              host->machine_id, host->file_id, value);
}

static void svc_machine_stat_set_indexed(tm_host *host, tm_machine_ref machine,
                                         const char *name, int64_t idx, int64_t value) {
  if (has_name(host, "machine_stat_set_indexed", name))
    stats_set(host->state->stats, name, idx < 0 ? TM_NULL_INT64 : idx,
              machine_of_ref(host, machine), host->file_id, value);
}

static void svc_machine_metadata_set_int(tm_host *host, tm_machine_ref machine,
                                         const char *name, int64_t value) {
  if (has_name(host, "machine_metadata_set_int", name))
    model_metadata_set_int(model_of(host), name, machine_of_ref(host, machine),
                           host->file_id, value);
}

static void svc_machine_metadata_set_string(tm_host *host, tm_machine_ref machine,
                                            const char *name, tm_str_id value) {
  if (has_name(host, "machine_metadata_set_string", name))
    model_metadata_set_string(model_of(host), name, machine_of_ref(host, machine),
                              host->file_id, value);
}

static void svc_sched_blocked_reason(tm_host *host, tm_clock_ref clock, int64_t ts,
                                     tm_thread_ref thread, int32_t io_wait,
                                     tm_str_id blocked_function) {
  if (!thread_ref_valid(host, thread)) {
    host_refuse_call(host, "sched_blocked_reason", "no such thread");
    return;
  }
  tm_event ev = {
      .ts = ts,
      .u.dur_ns = io_wait < 0 ? -1 : io_wait != 0,
      .track_id = UNREF(thread),
      .category_id = UNREF(thread),
      .name_id = blocked_function,
      .kind = TM_EVENT_SCHED_BLOCKED,
  };
  event_run_push(run_for(host, clock), &ev);
}


const tm_host_services host_services_v2 = {
    .struct_size = sizeof(tm_host_services),
    .abi_version = TM_READER_ABI_VERSION,
    .intern_string = svc_intern_string,
    .clock_private = svc_clock_private,
    .clock_builtin = svc_clock_builtin,
    .clock_sequence = svc_clock_sequence,
    .claim_trace_time = svc_claim_trace_time,
    .add_clock_snapshot = svc_add_clock_snapshot,
    .remote_clock_sync = svc_remote_clock_sync,
    .machine_default = svc_machine_default,
    .machine_embedded = svc_machine_embedded,
    .machine_set_info = svc_machine_set_info,
    .process = svc_process,
    .thread = svc_thread,
    .process_set_name = svc_process_set_name,
    .thread_set_name = svc_thread_set_name,
    .process_add_arg = svc_process_add_arg,
    .thread_add_arg = svc_thread_add_arg,
    .process_set_cmdline = svc_process_set_cmdline,
    .process_set_parent = svc_process_set_parent,
    .process_set_uid = svc_process_set_uid,
    .track_thread = svc_track_thread,
    .track_intern = svc_track_intern,
    .track_set_parent = svc_track_set_parent,
    .track_add_source_arg = svc_track_add_source_arg,
    .args_add = svc_args_add,
    .args_commit = svc_args_commit,
    .args_add_string = svc_args_add_string,
    .slice_begin = svc_slice_begin,
    .slice_end = svc_slice_end,
    .slice_complete = svc_slice_complete,
    .counter = svc_counter,
    .flow = svc_flow,
    .sched_switch = svc_sched_switch,
    .sched_waking = svc_sched_waking,
    .mapping = svc_mapping,
    .frame = svc_frame,
    .callsite = svc_callsite,
    .sample = svc_sample,
    .metadata_set_int = svc_metadata_set_int,
    .metadata_set_string = svc_metadata_set_string,
    .stat_add = svc_stat_add,
    .import_log = svc_import_log,
    .report_error = svc_report_error,
    .track_async = svc_track_async,
    .frame_timeline_begin = svc_frame_timeline_begin,
    .ftrace_event = svc_ftrace_event,
    .android_log = svc_android_log,
    .package = svc_package,
    .thread_lifetime = svc_thread_lifetime,
    .stat_set_indexed = svc_stat_set_indexed,
    .sched_blocked_reason = svc_sched_blocked_reason,
    .budget = svc_budget,
    .machine_stat_set_indexed = svc_machine_stat_set_indexed,
    .machine_metadata_set_int = svc_machine_metadata_set_int,
    .machine_metadata_set_string = svc_machine_metadata_set_string,
    .args_add_callsite = svc_args_add_callsite,
};

void import_finish_tracks(tm_import_state *state) {
  tm_model *model = state->model;
  async_tracks_finish_parents(state->async_tracks, model);
  tm_string_pool *strings = model->strings;
  tm_str_id utid_key = string_pool_intern_cstr(strings, "utid");
  tm_str_id upid_key = string_pool_intern_cstr(strings, "upid");
  tm_str_id scope_key = string_pool_intern_cstr(strings, "scope");
  tm_str_id name_key = string_pool_intern_cstr(strings, "name");
  tm_str_id cpu_key = string_pool_intern_cstr(strings, "cpu");
  for (size_t i = 0; i < model->tracks.len; i++) {
    /* Read the row anew after each model_add_arg: the args vector grows,
     * the tracks vector does not, so `row` stays valid. */
    tm_track_row *row = &model->tracks.data[i];
    uint32_t set = 0;
    if (row->utid != TM_NULL_ID)
      set = model_add_arg(model, set, utid_key,
                          (tm_arg_value){.type = TM_ARG_INT, .u.int_value = row->utid});
    if (row->upid != TM_NULL_ID)
      set = model_add_arg(model, set, upid_key,
                          (tm_arg_value){.type = TM_ARG_INT, .u.int_value = row->upid});
    if (row->dimension_scope)
      set = model_add_arg(model, set, scope_key,
                          (tm_arg_value){.type = TM_ARG_STRING,
                                         .u.str_id = row->dimension_scope});
    if (row->name)
      set = model_add_arg(model, set, name_key,
                          (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = row->name});
    if (row->cpu_dimension)
      set = model_add_arg(model, set, cpu_key,
                          (tm_arg_value){.type = TM_ARG_INT,
                                         .u.int_value = row->cpu_dimension - 1});
    row->dimension_arg_set_id = set;
  }
}
