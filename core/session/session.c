/*
 * The session: the import pipeline and the public library API.
 *
 * Pipeline (docs/architecture.md, Data flow): containers stream every leaf file to its
 * reader (pass 1: readers tokenize into per-clock runs, clock edges go into
 * the graph; a perfetto_manifest is applied by session_manifest.c before
 * any trace file begins); then each machine's primary file (the first in
 * processing order) gets its clocks back from isolation, trace time is
 * chosen (the manifest's claim, else the first claim in processing
 * order), every file's clocks are bridged to it, the runs are converted
 * and merged (pass 2) into the model builder; then the model is finalized
 * and the SQL surface is built over it on first use.
 *
 * Invariants: no timestamp is converted before every file has been read;
 * a damaged file keeps what it emitted and is counted in stats; the first
 * error is reported after the whole import, naming the file; a manifest
 * error (session->fatal_error) stops the import and is reported first.
 */
#include <errno.h>
#include <string.h>

#include "input/container.h"
#include "input/host_services.h"
#include "input/reader_open.h"
#include "input/reader_worker.h"
#include "model/model_builder.h"
#include "model/async_tracks.h"
#include "session/session_config.h"
#include "session/session_error.h"
#include "session/session_internal.h"
#include "base/string_pool.h"

static const char *const builtin_clock_names[] = {
    NULL,        "REALTIME",         "REALTIME_COARSE", "MONOTONIC",
    "MONOTONIC_COARSE", "MONOTONIC_RAW", "BOOTTIME",
};

static void realtime_twin_free(gpointer p) {
  tm_realtime_twin *twin = p;
  g_free(twin->readings);
  g_free(twin);
}

/* What the host services ask of the session (input/import_state.h). */
static const tm_import_hooks session_import_hooks = {
    .buffer_event = session_config_push,
    .buffer_args = session_config_stage_args,
    .embedded_machine = session_manifest_embedded_machine,
    .remote_sync_allowed = session_manifest_remote_sync_allowed,
    .snapshot_allowed = session_manifest_snapshot_allowed,
};

static uint32_t overflow_track(void *state, uint32_t track_id) {
  return import_overflow_track(state, track_id);
}

tm_session *tm_session_new(const tm_session_options *options) {
  tm_session *session = g_new0(tm_session, 1);
  session->import.hooks = &session_import_hooks;
  session->import.owner = session;
  session->plugins = plugin_set_load(options ? options->plugin_dirs : NULL,
                                     options ? options->n_plugin_dirs : 0,
                                     options ? options->preferred_plugins : NULL,
                                     options ? options->n_preferred_plugins : 0,
                                     options && options->warnings ? options->warnings
                                                                  : stderr);
  if (options && options->n_sql_packages) {
    session->sql_packages = g_new0(char *, options->n_sql_packages + 1);
    for (size_t i = 0; i < options->n_sql_packages; i++)
      session->sql_packages[i] = g_strdup(options->sql_packages[i]);
  }
  session->reader_configs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                  (GDestroyNotify)g_bytes_unref);
  for (size_t i = 0; options && i < options->n_reader_configs; i++) {
    const tm_reader_config *config = &options->reader_configs[i];
    if (config->reader)
      g_hash_table_replace(session->reader_configs, g_strdup(config->reader),
                           g_bytes_new(config->bytes, config->bytes ? config->len : 0));
  }
  session->import.budgets = budgets_with_defaults(options ? &options->budgets : NULL);
  session->import_threads = options && options->threads ? options->threads
                                                        : (unsigned)MAX(1, g_get_num_processors());
  session->import.model = model_new();
  session->import.stats = stats_new(session->import.model);
  /* Every reader's stats, so each file shows the zero rows of all of them
   * (as trace_processor shows its whole catalog). */
  for (size_t i = 0; i < plugin_set_count(session->plugins); i++) {
    const tm_reader *reader = plugin_set_borrow(session->plugins, i, NULL);
    for (size_t k = 0; k < reader->n_stats; k++)
      stats_declare(session->import.stats, &reader->stats[k]);
  }
  session->import.clocks = clock_graph_new();
  session->import.sorter = sorter_new();
  sorter_set_threads(session->import.sorter, session->import_threads);
  session->host_machine = TM_NULL_ID;
  if (options) {
    session->sql_options.allow_attach = options->allow_attach;
    session->query_timeout_seconds = options->query_timeout_seconds;
  }
  session->import.processes = g_hash_table_new_full(import_identity_hash,
                                             import_identity_equal, g_free, NULL);
  session->import.threads = g_hash_table_new_full(import_identity_hash,
                                           import_identity_equal, g_free, NULL);
  session->primary_file = g_hash_table_new(g_direct_hash, g_direct_equal);
  session->import.realtime_twins = g_ptr_array_new_with_free_func(realtime_twin_free);
  session->import.async_tracks = async_tracks_new();
  session->import.tracks = g_hash_table_new_full(import_track_hash,
                                          import_track_equal, g_free, NULL);
  session->import.hosts = g_ptr_array_new();
  /* After the plugins (the config names readers) and the model (trigger
   * names are interned). */
  session->config = session_config_load(session, options,
                                        options && options->warnings ? options->warnings : stderr,
                                        &session->config_error);
  return session;
}

static void host_free(tm_host *host) {
  if (!host)
    return;
  if (host->open)
    host->reader->descriptor.close(host->reader_state);
  reader_recording_free(host->recording);
  tm_vec_free(&host->pending_args);
  tm_vec_free(&host->placements);
  if (host->embedded_machines)
    g_hash_table_destroy(host->embedded_machines);
  if (host->isolated_on)
    g_hash_table_destroy(host->isolated_on);
  g_free(host->error_message);
  g_free(host);
}

void tm_session_free(tm_session *session) {
  if (!session)
    return;
  for (guint i = 0; i < session->import.hosts->len; i++)
    host_free(g_ptr_array_index(session->import.hosts, i));
  g_ptr_array_free(session->import.hosts, TRUE);
  sql_surface_free(session->sql);
  g_strfreev(session->sql_packages);
  sorter_free(session->import.sorter);
  clock_graph_free(session->import.clocks);
  stats_free(session->import.stats);
  g_hash_table_destroy(session->import.processes);
  g_hash_table_destroy(session->import.threads);
  g_hash_table_destroy(session->import.tracks);
  async_tracks_free(session->import.async_tracks);
  g_hash_table_destroy(session->primary_file);
  g_ptr_array_free(session->import.realtime_twins, TRUE);
  tm_vec_free(&session->import.extras);
  tm_vec_free(&session->import.machine_idle_upid);
  tm_vec_free(&session->import.machine_idle_utid);
  tm_vec_free(&session->import.thread_prev_same_tid);
  model_free(session->import.model);
  plugin_set_free(session->plugins);
  g_hash_table_destroy(session->reader_configs);
  session_config_free(session->config);
  g_clear_error(&session->config_error);
  session_manifest_free(session->manifest);
  g_clear_error(&session->first_error);
  g_clear_error(&session->fatal_error);
  g_free(session);
}

/* --- container sink ----------------------------------------------------- */

typedef struct import_sink {
  tm_session *session;
  GHashTable *hosts_by_file; /* file id -> tm_host* (borrowed) */
  /* Files offered by the container and queued on the prefetch worker,
   * until their turn: file id -> reader_recording* (owned). */
  GHashTable *prepared;
  /* TRACEMERGE_TEST_PREFETCH_WAIT set: a queued file's turn waits for the
   * worker to start it rather than reading it here, so tests take the
   * prefetch path whatever the scheduler does. */
  bool prefetch_wait;
  /* TRACEMERGE_TEST_PREFETCH_AHEAD: the prefetch worker's bound in bytes
   * (0: its default), so tests make it wait for the replay. */
  size_t prefetch_ahead;
  /* TRACEMERGE_TEST_PREFETCH_FILES: how many queued files the worker
   * takes (0: all), so tests see the later ones read here. */
  unsigned prefetch_files;
} import_sink;

static const char *sink_detect(void *ctx, const uint8_t *head, size_t len,
                               const char *name) {
  import_sink *state = ctx;
  /* By content, whatever the name (docs/formats.md §6.1), before any reader. */
  if (manifest_detect(head, len))
    return session_manifest_type;
  const tm_reader *reader =
      plugin_set_detect(state->session->plugins, head, len, name);
  return reader ? reader->descriptor.name : NULL;
}

static int32_t sink_priority(void *ctx, const char *trace_type) {
  import_sink *state = ctx;
  const tm_reader *reader = plugin_set_find(state->session->plugins, trace_type);
  return reader ? reader->descriptor.processing_priority : 0;
}

static char *describe_file(tm_session *session, uint32_t file_id) {
  tm_model *model = session->import.model;
  const tm_trace_file_row *row = &model->trace_files.data[file_id];
  const char *name = string_pool_borrow(model->strings, row->name);
  if (row->parent_id == TM_NULL_ID)
    return g_strdup(name ? name : "(input)");
  g_autofree char *parent = describe_file(session, row->parent_id);
  return g_strdup_printf("%s: %s", parent,
                         name && *name ? name : "(decompressed stream)");
}

static void record_damage(tm_session *session, tm_host *host,
                          const char *message, int64_t offset) {
  stats_add(session->import.stats, "file_parse_error", TM_NULL_INT64, host->machine_id,
            host->file_id, 1);
  if (session->first_error)
    return;
  g_autofree char *where = describe_file(session, host->file_id);
  if (offset >= 0)
    session->first_error = g_error_new(TRACEMERGE_ERROR, TM_ERROR_DAMAGED,
                                       "%s: at byte %" G_GINT64_FORMAT ": %s",
                                       where, offset, message);
  else
    session->first_error = g_error_new(TRACEMERGE_ERROR, TM_ERROR_DAMAGED, "%s: %s",
                                       where, message);
}

static void reader_fed(void *ctx, tm_host *host, tm_status status, size_t len);

static bool sink_begin(void *ctx, uint32_t file_id, const char *trace_type,
                       GError **error) {
  import_sink *state = ctx;
  tm_session *session = state->session;
  if (!session_refuse_if_failed(session, error))
    return false;
  if (strcmp(trace_type, session_manifest_type) == 0)
    return session_manifest_begin(session, file_id, error);
  uint32_t machine_id;
  const tm_manifest_file *entry;
  if (!session_manifest_file_begins(session, file_id, &machine_id, &entry, error))
    return false;
  const tm_reader *reader = plugin_set_find(session->plugins, trace_type);
  if (!reader) {
    g_autofree char *where = describe_file(session, file_id);
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT,
                "%s: no reader for trace type '%s'", where, trace_type);
    return false;
  }
  session_file_plan plan =
      session_config_plan_file(session->config, session, file_id, machine_id, trace_type);
  if (!plan.read)
    return true; /* its chunks and end find no host and are skipped */
  tm_host *host = g_new0(tm_host, 1);
  host->state = &session->import;
  host->file_id = file_id;
  host->machine_id = machine_id;
  host->manifest_entry = entry;
  host->reader = reader;
  host->claimed_clock = TM_NO_CLOCK_NODE;
  host->bridge = -1;
  host->error_offset = -1;
  host->buffer = -1;
  tm_clock_key private_key = {TM_CLOCK_TRACE_FILE, 0, file_id, host->machine_id};
  host->private_clock = clock_graph_node(session->import.clocks, &private_key);
  if (reader->descriptor.flags & TM_READER_CLOCKLESS)
    host->claimed_clock = host->private_clock;
  g_ptr_array_add(session->import.hosts, host);
  g_hash_table_insert(state->hosts_by_file, GUINT_TO_POINTER(file_id), host);
  stats_open_context(session->import.stats, host->machine_id, file_id);

  host->buffer = plan.buffer;
  const GBytes *config = g_hash_table_lookup(session->reader_configs,
                                            reader->descriptor.name);
  gsize config_len = 0;
  const uint8_t *config_bytes =
      config ? g_bytes_get_data((GBytes *)config, &config_len) : NULL;
  if (plan.has_reader_config) {
    /* The data source's block, as sliced from the config: an empty block
     * is still a config (non-NULL, length 0). */
    config_bytes = plan.reader_config_len ? plan.reader_config : (const uint8_t *)"";
    config_len = plan.reader_config_len;
  }
  /* Parsed ahead on the prefetch worker: its log is replayed from here on,
   * when the machine it was given is the file's (else it is given up and
   * the file read here). */
  reader_recording *prepared =
      state->prepared ? g_hash_table_lookup(state->prepared, GUINT_TO_POINTER(file_id)) : NULL;
  if (prepared) {
    g_hash_table_steal(state->prepared, GUINT_TO_POINTER(file_id));
    void *reader_state = NULL;
    /* The machine predicted at the offer (sink_offer: its row + 1). */
    if (host->buffer < 0 && reader_recording_machine(prepared) == host->machine_id + 1 &&
        reader_recording_claim(prepared, host, state->prefetch_wait, &reader_state)) {
      host->recording = prepared;
      host->reader_state = reader_state;
    } else {
      reader_recording_free(prepared);
    }
  }
  /* With a second thread, the reader parses there (input/reader_worker.h);
   * a version-1 reader, or one whose events a merge config buffers,
   * stays here. */
  if (host->recording) {
    /* opened on the prefetch worker */
  } else if (session->reader_worker && reader->abi != TM_READER_ABI_V1 && host->buffer < 0) {
    host->recording = reader_recording_new(session->reader_worker, host, reader_fed, session);
    host->reader_state = reader_recording_open(host->recording, config_bytes, config_len);
  } else {
    host->reader_state = host_open_reader(host, config_bytes, config_len);
  }
  session_config_reader_returned(host, false);
  if (!host->reader_state) {
    host->failed = true;
    record_damage(session, host,
                  host->error_message ? host->error_message : "reader failed to open",
                  host->error_offset);
    return true;
  }
  host->open = true;
  return true;
}

static void fail_host(tm_session *session, tm_host *host) {
  host->failed = true;
  record_damage(session, host,
                host->error_message ? host->error_message : "damaged file",
                host->error_message ? host->error_offset : (int64_t)host->bytes_fed);
}

/* What follows a reader's return from feed(): on the calling thread after
 * feed() itself, or where the replay of a reader on the worker reaches
 * the feed's end (reader_worker.h). */
static void reader_fed(void *ctx, tm_host *host, tm_status status, size_t len) {
  tm_session *session = ctx;
  session_config_reader_returned(host, false);
  host->bytes_fed += len;
  if (status != TM_OK && !session->fatal_error)
    fail_host(session, host);
}

static bool sink_chunk(void *ctx, uint32_t file_id, const uint8_t *data,
                       size_t len, GError **error) {
  import_sink *state = ctx;
  tm_session *session = state->session;
  if (session_manifest_is(session, file_id))
    return session_manifest_feed(session, data, len, error);
  if (!session_refuse_if_failed(session, error))
    return false;
  tm_host *host = g_hash_table_lookup(state->hosts_by_file, GUINT_TO_POINTER(file_id));
  if (!host || host->failed || !host->open)
    return true;
  if (host->recording) {
    /* Its calls are replayed while the worker parses the next chunk; a
     * call that fails the import is asked of this thread at once. */
    reader_recording_feed(host->recording, data, len);
  } else {
    tm_status status = host->reader->descriptor.feed(host->reader_state, data, len);
    reader_fed(session, host, status, len);
  }
  /* A reader callback may have failed the import (manifest rules). */
  return session_refuse_if_failed(session, error);
}

static bool sink_end(void *ctx, uint32_t file_id, bool truncated,
                     const char *damage, GError **error) {
  import_sink *state = ctx;
  tm_session *session = state->session;
  if (session_manifest_is(session, file_id)) {
    tm_trace_file_row *row = &session->import.model->trace_files.data[file_id];
    model_metadata_set_string(session->import.model, "trace_type", TM_NULL_ID, file_id,
                              row->trace_type);
    return session_manifest_end(session, truncated, damage, error);
  }
  tm_host *host = g_hash_table_lookup(state->hosts_by_file, GUINT_TO_POINTER(file_id));
  if (!host)
    return session_refuse_if_failed(session, error);
  if (host->recording)
    reader_recording_drain(host->recording);
  if (truncated) {
    stats_add(session->import.stats, "container_member_truncated", TM_NULL_INT64,
              host->machine_id, file_id, 1);
    if (!session->first_error) {
      g_autofree char *where = describe_file(session, file_id);
      /* The container's message already names the member and offset. */
      session->first_error = damage
                                 ? g_error_new_literal(TRACEMERGE_ERROR, TM_ERROR_DAMAGED, damage)
                                 : g_error_new(TRACEMERGE_ERROR, TM_ERROR_DAMAGED, "%s: truncated", where);
    }
  }
  if (host->open && !host->failed) {
    tm_status status = host->recording
                           ? reader_recording_finish(host->recording)
                           : host->reader->descriptor.finish(host->reader_state);
    if (status != TM_OK && !session->fatal_error)
      fail_host(session, host);
  }
  if (host->open) {
    if (host->recording)
      reader_recording_close(host->recording);
    else
      host->reader->descriptor.close(host->reader_state);
    host->open = false;
  }
  session_config_reader_returned(host, true);
  tm_model *model = session->import.model;
  tm_trace_file_row *row = &model->trace_files.data[file_id];
  model_metadata_set_string(model, "trace_type", TM_NULL_ID, file_id, row->trace_type);
  model_metadata_set_int(model, "trace_size_bytes", TM_NULL_ID, file_id,
                         (int64_t)host->bytes_fed);
  return session_refuse_if_failed(session, error);
}

static bool sink_container_damaged(void *ctx, uint32_t file_id,
                                   const char *damage, GError **error) {
  (void)error;
  import_sink *state = ctx;
  tm_session *session = state->session;
  stats_add(session->import.stats, "container_member_truncated", TM_NULL_INT64,
            TM_NULL_ID, file_id, 1);
  if (!session->first_error) {
    g_autofree char *where = describe_file(session, file_id);
    session->first_error = g_error_new(TRACEMERGE_ERROR, TM_ERROR_DAMAGED, "%s",
                                       damage ? damage : where);
  }
  return true;
}

static void sink_budget_exceeded(void *ctx, uint32_t file_id, const char *stat) {
  import_sink *state = ctx;
  tm_session *session = state->session;
  tm_host *host = file_id == TM_NULL_ID
                      ? NULL
                      : g_hash_table_lookup(state->hosts_by_file, GUINT_TO_POINTER(file_id));
  stats_add(session->import.stats, stat, TM_NULL_INT64, host ? host->machine_id : TM_NULL_ID,
            file_id, 1);
}

/* --- members parsed ahead of their turn (the prefetch worker) ---------- */

static void stream_source(void *source, reader_chunk_fn chunk, reader_wants_more_fn wants_more,
                          void *ctx) {
  container_source_stream(source, chunk, wants_more, ctx);
}

/* sink_chunk()'s refusal after a feed. */
static bool import_failed(void *ctx) {
  tm_session *session = ctx;
  return session->fatal_error != NULL;
}

/* A member the container can read on its own: queued on the prefetch
 * worker when its reader and machine are known now and nothing would
 * make the session treat it differently (a merge config, a version-1
 * reader). What the worker does touches no state of the session's
 * (reader_worker.h): the machine is predicted here and checked when the
 * file begins. */
static void sink_offer(void *ctx, uint32_t file_id, const char *trace_type,
                       container_source *source) {
  import_sink *state = ctx;
  tm_session *session = state->session;
  const tm_reader *reader = plugin_set_find(session->plugins, trace_type);
  uint32_t machine_id;
  if (session->config || session->fatal_error || !reader || reader->abi == TM_READER_ABI_V1 ||
      session_manifest_is(session, file_id) ||
      !session_manifest_peek_machine(session, file_id, &machine_id))
    return;
  /* The worker starts with the first member it can take: an import with
   * none (one file, a merge config) never makes the thread. */
  if (!session->prefetch_worker &&
      !(session->prefetch_worker =
            reader_prefetch_new(state->prefetch_ahead, state->prefetch_files)))
    return;
  const GBytes *config = g_hash_table_lookup(session->reader_configs, reader->descriptor.name);
  gsize config_len = 0;
  const uint8_t *config_bytes = config ? g_bytes_get_data((GBytes *)config, &config_len) : NULL;
  if (!state->prepared)
    state->prepared = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                            (GDestroyNotify)reader_recording_free);
  reader_recording *rec = reader_recording_prepare(
      session->prefetch_worker, reader, machine_id + 1, &session->import.budgets, config_bytes,
      config_len, stream_source, source, reader_fed, import_failed, session);
  g_hash_table_insert(state->prepared, GUINT_TO_POINTER(file_id), rec);
}

/* The member's turn, after sink_begin(): its feeds replayed if it was
 * parsed ahead (1), else the container streams it (0). */
static int sink_take(void *ctx, uint32_t file_id, GError **error) {
  import_sink *state = ctx;
  tm_session *session = state->session;
  tm_host *host = g_hash_table_lookup(state->hosts_by_file, GUINT_TO_POINTER(file_id));
  if (!host || !host->recording || !reader_recording_is_prepared(host->recording))
    return 0;
  if (!reader_recording_replay_stream(host->recording)) {
    session_refuse_if_failed(session, error);
    return -1;
  }
  return 1;
}

/* Every offered member had its turn (or the walk stopped): the ones not
 * claimed are given up before their sources go. */
static void sink_offers_end(void *ctx) {
  import_sink *state = ctx;
  if (state->prepared)
    g_hash_table_remove_all(state->prepared);
}

/* A reader that failed (or a session that failed) needs no more bytes. */
static bool sink_wants_more(void *ctx, uint32_t file_id) {
  import_sink *state = ctx;
  tm_session *session = state->session;
  if (session_manifest_is(session, file_id))
    return true;
  tm_host *host = g_hash_table_lookup(state->hosts_by_file, GUINT_TO_POINTER(file_id));
  /* A reader on the worker: its failure is known from feed()'s status
   * before the replay reaches it (which then fails the host). */
  return host != NULL && host->open && !host->failed &&
         !(host->recording && reader_recording_failed(host->recording));
}

/* --- pass 2 ------------------------------------------------------------- */

gint session_host_by_processing_order(gconstpointer a, gconstpointer b, gpointer data) {
  const tm_model *model = data;
  const tm_host *x = *(tm_host *const *)a, *y = *(tm_host *const *)b;
  int64_t ox = model->trace_files.data[x->file_id].processing_order;
  int64_t oy = model->trace_files.data[y->file_id].processing_order;
  if (ox != oy)
    return ox < oy ? -1 : 1;
  return x->file_id < y->file_id ? -1 : x->file_id > y->file_id;
}

/* Notes `host`, `rank`th in processing order, as the primary file of
 * `machine_id` unless an earlier file is (`ranks`: machine -> rank + 1 of
 * its primary so far). */
static void note_primary(tm_session *session, GHashTable *ranks, tm_host *host,
                         guint rank, uint32_t machine_id) {
  gpointer key = GUINT_TO_POINTER(machine_id + 1);
  guint known = GPOINTER_TO_UINT(g_hash_table_lookup(ranks, key));
  if (known && known <= rank + 1)
    return;
  g_hash_table_insert(ranks, key, GUINT_TO_POINTER(rank + 1));
  g_hash_table_insert(session->primary_file, key, host);
}

/* The isolated builtin clocks of every file, by isolation tag ->
 * GArray of nodes: one pass over the graph for all the primaries. */
static GHashTable *isolated_nodes_by_tag_new(tm_clock_graph *graph) {
  GHashTable *by_tag = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                             (GDestroyNotify)g_array_unref);
  size_t n = clock_graph_node_count(graph);
  for (tm_clock_node node = 0; node < n; node++) {
    const tm_clock_key *key = clock_graph_node_key(graph, node);
    if (key->trace_file_id == 0 || key->sequence_id != 0 || key->clock_id >= 64 ||
        key->clock_id == TM_CLOCK_TRACE_FILE)
      continue;
    gpointer tag = GUINT_TO_POINTER(key->trace_file_id); /* never 0 here */
    GArray *nodes = g_hash_table_lookup(by_tag, tag);
    if (!nodes) {
      nodes = g_array_new(FALSE, FALSE, sizeof(tm_clock_node));
      g_hash_table_insert(by_tag, tag, nodes);
    }
    g_array_append_val(nodes, node);
  }
  return by_tag;
}

/* Gives `host`'s isolated builtin clocks on `machine_id` (among
 * `isolated`, its file's isolated nodes) back to the machine: each is
 * merged into its canonical node, and retarget[node] names that node so
 * the events follow. A clock the graph cannot merge
 * (clock_graph_merge_node) stays the file's own and is tied to the
 * canonical node at bridging, as for any isolated file. */
static void unisolate(tm_session *session, tm_host *host, uint32_t machine_id,
                      const GArray *isolated, GArray *retarget) {
  tm_clock_graph *graph = session->import.clocks;
  for (guint i = 0; isolated && i < isolated->len; i++) {
    tm_clock_node node = g_array_index(isolated, tm_clock_node, i);
    const tm_clock_key *key = clock_graph_node_key(graph, node);
    if (key->machine_id != machine_id)
      continue;
    tm_clock_key canonical_key = *key;
    canonical_key.trace_file_id = 0;
    tm_clock_node canonical = clock_graph_node(graph, &canonical_key);
    if (clock_graph_merge_node(graph, node, canonical))
      g_array_index(retarget, tm_clock_node, node) = canonical;
  }
  g_hash_table_remove(host->isolated_on, GUINT_TO_POINTER(machine_id + 1));
  /* Its snapshots are on the canonical nodes now: no REALTIME twins. */
  for (guint i = session->import.realtime_twins->len; i-- > 0;) {
    const tm_realtime_twin *twin = g_ptr_array_index(session->import.realtime_twins, i);
    if (twin->file_id == host->file_id && twin->machine_id == machine_id)
      g_ptr_array_remove_index(session->import.realtime_twins, i);
  }
}

/* docs/clock-model.md §2: the first trace file processed for a machine is its
 * primary file, whose builtin clocks are the machine-canonical nodes; a
 * later file uses them until its first snapshot there, and is isolated
 * from then on. Files read in a stream's order isolated at their first
 * snapshot (decide_isolation in host_services.c); here, with processing
 * order known, each machine's primary gets its nodes back, and every other
 * file that had emitted through the canonical nodes before isolating is
 * counted in clock_sync_mixed_clock_sources. A file is processed for its
 * base machine and for every machine it has events or snapshots on. */
static void adopt_primary_files(tm_session *session, GPtrArray *ordered) {
  /* One pass over the hosts and one over the runs: with many small files,
   * a pass over the runs per host would be quadratic. */
  GHashTable *ranks = g_hash_table_new(g_direct_hash, g_direct_equal);
  GHashTable *rank_of_file = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < ordered->len; i++) {
    tm_host *host = g_ptr_array_index(ordered, i);
    g_hash_table_insert(rank_of_file, GUINT_TO_POINTER(host->file_id + 1),
                        GUINT_TO_POINTER(i + 1));
    note_primary(session, ranks, host, i, host->machine_id);
    if (host->isolated_on) {
      GHashTableIter iter;
      gpointer key;
      g_hash_table_iter_init(&iter, host->isolated_on);
      while (g_hash_table_iter_next(&iter, &key, NULL))
        note_primary(session, ranks, host, i, GPOINTER_TO_UINT(key) - 1);
    }
  }
  for (size_t r = 0; r < sorter_run_count(session->import.sorter); r++) {
    const tm_event_run *run = sorter_borrow_run(session->import.sorter, r);
    guint rank = GPOINTER_TO_UINT(
        g_hash_table_lookup(rank_of_file, GUINT_TO_POINTER(run->trace_id + 1)));
    if (rank)
      note_primary(session, ranks, g_ptr_array_index(ordered, rank - 1), rank - 1,
                   run->machine_id);
  }
  g_hash_table_destroy(rank_of_file);
  g_hash_table_destroy(ranks);
  GHashTable *isolated_by_tag = isolated_nodes_by_tag_new(session->import.clocks);
  /* Node -> the canonical node its runs move to (TM_NO_CLOCK_NODE: stays);
   * sized before any merge, so nodes made by unisolate are never moved. */
  size_t n_nodes = clock_graph_node_count(session->import.clocks);
  GArray *retarget = g_array_sized_new(FALSE, FALSE, sizeof(tm_clock_node), (guint)n_nodes);
  g_array_set_size(retarget, (guint)n_nodes);
  for (size_t n = 0; n < n_nodes; n++)
    g_array_index(retarget, tm_clock_node, n) = TM_NO_CLOCK_NODE;
  for (guint i = 0; i < ordered->len; i++) {
    tm_host *host = g_ptr_array_index(ordered, i);
    if (!host->isolated_on)
      continue;
    GArray *machines = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, host->isolated_on);
    while (g_hash_table_iter_next(&iter, &key, NULL)) {
      uint32_t machine_id = GPOINTER_TO_UINT(key) - 1;
      g_array_append_val(machines, machine_id);
    }
    for (guint m = 0; m < machines->len; m++) {
      uint32_t machine_id = g_array_index(machines, uint32_t, m);
      key = GUINT_TO_POINTER(machine_id + 1);
      if (g_hash_table_lookup(session->primary_file, key) == host) {
        unisolate(session, host, machine_id,
                  g_hash_table_lookup(isolated_by_tag,
                                      GUINT_TO_POINTER(import_isolation_tag(host->file_id))),
                  retarget);
        continue;
      }
      value = g_hash_table_lookup(host->isolated_on, key);
      if (GPOINTER_TO_SIZE(value) > 1) {
        /* The events emitted through the shared clocks before isolating:
         * each is one conversion through the primary's clocks. */
        tm_import_log_arg arg = {.key = "num_conversions_using_primary",
                                 .type = TM_ARG_INT,
                                 .int_value = (int64_t)(GPOINTER_TO_SIZE(value) - 1)};
        stats_log(session->import.stats, "clock_sync_mixed_clock_sources", machine_id,
                  host->file_id, TM_NULL_INT64, -1, &arg, 1);
      }
    }
    g_array_free(machines, TRUE);
  }
  sorter_retarget_clocks(session->import.sorter, (const tm_clock_node *)retarget->data, n_nodes);
  g_array_free(retarget, TRUE);
  g_hash_table_destroy(isolated_by_tag);
}

/* The manifest's claim owns trace time (it is processed first and no
 * trace can take it over, docs/clock-model.md §9.4); else the first claimer in
 * processing order. */
static void choose_trace_time(tm_session *session, GPtrArray *ordered) {
  tm_clock_node chosen = session_manifest_trace_time(session);
  for (guint i = 0; i < ordered->len && chosen == TM_NO_CLOCK_NODE; i++) {
    tm_host *host = g_ptr_array_index(ordered, i);
    chosen = host->claimed_clock;
  }
  if (chosen == TM_NO_CLOCK_NODE)
    return;
  clock_graph_set_trace_time(session->import.clocks, chosen);
  const tm_clock_key *key = clock_graph_node_key(session->import.clocks, chosen);
  model_metadata_set_int(session->import.model, "trace_time_clock_id", TM_NULL_ID,
                         TM_NULL_ID, key->clock_id);
}

/* Ties one clock of `host` to trace time (docs/clock-model.md §6.2) and
 * counts a refusal once per (file, machine). */
static tm_clock_bridge bridge_clock(tm_session *session, tm_host *host,
                                    tm_clock_node node, GHashTable *refused) {
  tm_clock_bridge result = clock_graph_bridge(session->import.clocks, node);
  if (result == TM_BRIDGE_UNRELATABLE) {
    uint32_t machine_id = clock_graph_node_key(session->import.clocks, node)->machine_id;
    if (g_hash_table_add(refused, GUINT_TO_POINTER(machine_id + 1))) {
      /* The clock refused first names the decision
       * (docs/clock-model.md §11). */
      tm_clock_node trace_time = clock_graph_trace_time(session->import.clocks);
      tm_import_log_arg args[2] = {
          {.key = "source_clock_id", .type = TM_ARG_INT,
           .int_value = clock_graph_node_key(session->import.clocks, node)->clock_id},
          {.key = "target_clock_id", .type = TM_ARG_INT,
           .int_value = trace_time == TM_NO_CLOCK_NODE
                            ? 0
                            : clock_graph_node_key(session->import.clocks, trace_time)->clock_id},
      };
      stats_log(session->import.stats, "clock_sync_unrelatable_clock_domains", machine_id,
                host->file_id, TM_NULL_INT64, -1, args,
                trace_time == TM_NO_CLOCK_NODE ? 1 : 2);
    }
  }
  return result;
}

/* An isolated clock `node` of `host` (docs/clock-model.md §2) reaches its
 * machine-canonical node by the file's own snapshots, or else by the
 * deferred identity edge of §6.1: first for the file's BOOTTIME (the proto
 * format's clock), then for `node` itself, each only when no path exists. */
static void tie_isolated_clocks(tm_session *session, tm_host *host,
                                tm_clock_node node) {
  tm_clock_graph *graph = session->import.clocks;
  const tm_clock_key *key = clock_graph_node_key(graph, node);
  uint32_t machine_id = key->machine_id;
  tm_clock_key isolated_boot = {TM_CLOCK_BOOTTIME, 0, import_isolation_tag(host->file_id),
                                machine_id};
  tm_clock_node isolated[2] = {clock_graph_find_node(graph, &isolated_boot), node};
  for (size_t i = 0; i < 2; i++) {
    tm_clock_node q = isolated[i];
    if (q == TM_NO_CLOCK_NODE)
      continue;
    tm_clock_key canonical = *clock_graph_node_key(graph, q);
    canonical.trace_file_id = 0;
    tm_clock_node c = clock_graph_node(graph, &canonical);
    if (clock_graph_has_path(graph, q, c))
      continue;
    GError *error = NULL;
    if (clock_graph_add_zero_offset_edge(graph, q, c, &error) < 0) {
      stats_add(session->import.stats, "invalid_clock_snapshots", TM_NULL_INT64,
                machine_id, host->file_id, 1);
      g_clear_error(&error);
    }
  }
}

/* REALTIME twins (docs/clock-model.md §6.3): each recorded snapshot of an
 * isolated file on a machine other than the trace-time machine is added
 * again with every REALTIME / REALTIME_COARSE reading duplicated onto the
 * machine-canonical node (same value), which links the file's wall clock to
 * its machine's for the rendezvous of §6.2. Upstream puts the twin in the
 * original snapshot; here the trace-time machine is only known once every
 * file is read, so the snapshot is added a second time with the twins (its
 * own readings again give the same offsets), before any bridging. */
static void add_realtime_twins(tm_session *session) {
  tm_clock_graph *graph = session->import.clocks;
  tm_clock_node trace_time = clock_graph_trace_time(graph);
  if (trace_time == TM_NO_CLOCK_NODE)
    return;
  uint32_t trace_time_machine = clock_graph_node_key(graph, trace_time)->machine_id;
  for (guint i = 0; i < session->import.realtime_twins->len; i++) {
    const tm_realtime_twin *twin = g_ptr_array_index(session->import.realtime_twins, i);
    if (twin->machine_id == trace_time_machine)
      continue;
    TM_VEC(tm_clock_reading) readings = {0};
    for (size_t r = 0; r < twin->count; r++)
      tm_vec_push(&readings, twin->readings[r]);
    for (size_t r = 0; r < twin->count; r++) {
      tm_clock_key key = *clock_graph_node_key(graph, twin->readings[r].node);
      if (key.clock_id != TM_CLOCK_REALTIME && key.clock_id != TM_CLOCK_REALTIME_COARSE)
        continue;
      if (key.trace_file_id == 0 || key.sequence_id != 0)
        continue;
      key.trace_file_id = 0;
      tm_clock_reading canonical = twin->readings[r];
      canonical.node = clock_graph_node(graph, &key);
      tm_vec_push(&readings, canonical);
    }
    GError *error = NULL;
    if (clock_graph_add_snapshot(graph, readings.data, readings.len, &error) < 0) {
      stats_add(session->import.stats, "invalid_clock_snapshots", TM_NULL_INT64,
                twin->machine_id, twin->file_id, 1);
      g_clear_error(&error);
    }
    tm_vec_free(&readings);
  }
}

/* The placement record of `host` for `clock`, created on first use. */
static tm_host_placement *host_placement(tm_host *host, tm_clock_node clock) {
  for (size_t i = 0; i < host->placements.len; i++)
    if (host->placements.data[i].clock == clock)
      return &host->placements.data[i];
  tm_host_placement fresh = {.clock = clock, .bridge = TM_BRIDGE_DIRECT};
  tm_vec_push(&host->placements, fresh);
  return &host->placements.data[host->placements.len - 1];
}

/* A file's summary is its worst placement: unrelatable over any
 * assumption, an assumption over a real path. */
static void note_bridge(tm_host *host, tm_host_placement *placement,
                        tm_clock_bridge result) {
  placement->bridge = (int)result;
  if (host->bridge < 0 || (int)result > host->bridge)
    host->bridge = (int)result;
}

/* bridge_clock() once per node of a file: a later call would only find
 * the edge the first one added, so the first outcome is the one kept. */
static tm_clock_bridge bridge_anchor(tm_session *session, tm_host *host,
                                     tm_clock_node node, GHashTable *anchors,
                                     GHashTable *refused) {
  gpointer key = GUINT_TO_POINTER(node + 1);
  gpointer known = g_hash_table_lookup(anchors, key);
  if (known)
    return (tm_clock_bridge)(GPOINTER_TO_INT(known) - 1);
  tm_clock_bridge result = bridge_clock(session, host, node, refused);
  g_hash_table_insert(anchors, key, GINT_TO_POINTER((int)result + 1));
  return result;
}

/* Ties each file's clocks to trace time, in processing order, once per
 * (file, clock), with the graph as the earlier files left it:
 * - the file's private timeline, if it is clockless or some of its events
 *   sit there (a proto packet before any clock is known: its raw value
 *   then lines up with trace time, as in trace_processor);
 * - for the builtin clocks its events use, first BOOTTIME of that machine
 *   when the graph knows it (the machine-wide anchor other clocks reach
 *   through snapshots: trace_processor's deferred BOOTTIME identity), then
 *   the clock itself; a clock of a file isolated on its machine is first
 *   tied to its canonical node (tie_isolated_clocks). Sequence-scoped
 *   clocks reach trace time through their snapshots and are not bridged.
 * Each clock's outcome and event count is kept for `tracemerge info`. */
/* The sorter's runs by file: file id + 1 -> GArray of run indexes in
 * ascending order. Passes over every run once per file would be quadratic
 * in the number of files. */
static GHashTable *runs_by_file_new(tm_session *session) {
  GHashTable *runs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                           (GDestroyNotify)g_array_unref);
  for (size_t r = 0; r < sorter_run_count(session->import.sorter); r++) {
    gpointer key = GUINT_TO_POINTER(sorter_borrow_run(session->import.sorter, r)->trace_id + 1);
    GArray *file_runs = g_hash_table_lookup(runs, key);
    if (!file_runs) {
      file_runs = g_array_new(FALSE, FALSE, sizeof(size_t));
      g_hash_table_insert(runs, key, file_runs);
    }
    g_array_append_val(file_runs, r);
  }
  return runs;
}

static void bridge_files(tm_session *session, GPtrArray *ordered) {
  tm_clock_graph *graph = session->import.clocks;
  GHashTable *runs_by_file = runs_by_file_new(session);
  for (guint i = 0; i < ordered->len; i++) {
    tm_host *host = g_ptr_array_index(ordered, i);
    GArray *file_runs =
        g_hash_table_lookup(runs_by_file, GUINT_TO_POINTER(host->file_id + 1));
    guint n_runs = file_runs ? file_runs->len : 0;
    GHashTable *refused = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTable *anchors = g_hash_table_new(g_direct_hash, g_direct_equal);
    bool private_used = (host->reader->descriptor.flags & TM_READER_CLOCKLESS) != 0;
    for (guint k = 0; k < n_runs; k++) {
      const tm_event_run *run =
          sorter_borrow_run(session->import.sorter, g_array_index(file_runs, size_t, k));
      host_placement(host, run->clock)->read += run->len;
      private_used |= run->clock == host->private_clock;
    }
    if (private_used)
      note_bridge(host, host_placement(host, host->private_clock),
                  bridge_clock(session, host, host->private_clock, refused));
    for (guint k = 0; k < n_runs; k++) {
      const tm_event_run *run =
          sorter_borrow_run(session->import.sorter, g_array_index(file_runs, size_t, k));
      if (run->clock == host->private_clock)
        continue;
      const tm_clock_key *key = clock_graph_node_key(graph, run->clock);
      if (key->sequence_id != 0)
        continue;
      if (key->trace_file_id != 0) {
        tie_isolated_clocks(session, host, run->clock);
        key = clock_graph_node_key(graph, run->clock);
      }
      tm_clock_key boot = {TM_CLOCK_BOOTTIME, 0, 0, key->machine_id};
      tm_clock_node boot_node = clock_graph_find_node(graph, &boot);
      tm_clock_bridge anchor = TM_BRIDGE_DIRECT;
      if (boot_node != TM_NO_CLOCK_NODE && boot_node != run->clock)
        anchor = bridge_anchor(session, host, boot_node, anchors, refused);
      tm_clock_bridge result = bridge_anchor(session, host, run->clock, anchors, refused);
      /* A clock that found a real path through its machine's BOOTTIME was
       * placed by whatever tied that BOOTTIME. */
      tm_host_placement *placement = host_placement(host, run->clock);
      if (result == TM_BRIDGE_DIRECT && anchor != TM_BRIDGE_UNRELATABLE &&
          anchor != TM_BRIDGE_DIRECT) {
        result = anchor;
        placement->via_boottime = true;
      }
      note_bridge(host, placement, result);
    }
    g_hash_table_destroy(anchors);
    g_hash_table_destroy(refused);
  }
  g_hash_table_destroy(runs_by_file);
}

/* After conversion, each run holds the events that were placed. */
static void count_placed_events(tm_session *session) {
  GHashTable *hosts = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < session->import.hosts->len; i++) {
    tm_host *host = g_ptr_array_index(session->import.hosts, i);
    g_hash_table_insert(hosts, GUINT_TO_POINTER(host->file_id), host);
  }
  for (size_t r = 0; r < sorter_run_count(session->import.sorter); r++) {
    const tm_event_run *run = sorter_borrow_run(session->import.sorter, r);
    tm_host *host = g_hash_table_lookup(hosts, GUINT_TO_POINTER(run->trace_id));
    if (host)
      host_placement(host, run->clock)->placed += run->len;
  }
  g_hash_table_destroy(hosts);
}

typedef struct snapshot_rows_ctx {
  tm_session *session;
} snapshot_rows_ctx;

static void announce_extra(void *builder, const tm_event *ev) {
  model_builder_expect(builder, ev);
}

static void add_snapshot_row(void *opaque, int64_t snapshot_id,
                             tm_clock_node node, int64_t value_ns) {
  snapshot_rows_ctx *ctx = opaque;
  tm_session *session = ctx->session;
  const tm_clock_key *key = clock_graph_node_key(session->import.clocks, node);
  int64_t ts;
  /* A reading whose clock cannot reach trace time has no row, as upstream. */
  if (clock_graph_to_trace_time(session->import.clocks, node, value_ns, &ts) != TM_CLOCK_OK)
    return;
  tm_clock_snapshot_row row = {
      .ts = ts,
      .clock_id = key->clock_id,
      .clock_name = key->clock_id < G_N_ELEMENTS(builtin_clock_names) &&
                            key->sequence_id == 0
                        ? string_pool_intern_cstr(session->import.model->strings,
                                                  builtin_clock_names[key->clock_id])
                        : 0,
      .clock_value = value_ns,
      .snapshot_id = snapshot_id,
      .machine_id = key->machine_id,
  };
  tm_vec_push(&session->import.model->clock_snapshots, row);
}

static bool session_import(tm_session *session, const char *const *paths,
                           size_t n_paths, GError **error) {
  if (session->imported) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                "a session imports only once");
    return false;
  }
  session->imported = true;
  if (n_paths == 0) {
    g_set_error_literal(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                        "no input files");
    return false;
  }
  if (!plugin_set_check(session->plugins, error) ||
      !tm_session_config_check(session, error))
    return false;
  if (plugin_set_count(session->plugins) == 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_PLUGINS,
                "no reader plugins found (set TRACEMERGE_PLUGIN_PATH)");
    return false;
  }
  GHashTableIter configs;
  gpointer config_reader;
  g_hash_table_iter_init(&configs, session->reader_configs);
  while (g_hash_table_iter_next(&configs, &config_reader, NULL)) {
    if (!plugin_set_find(session->plugins, config_reader)) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG,
                  "a configuration is given for reader '%s', but no reader "
                  "of that name is loaded",
                  (const char *)config_reader);
      return false;
    }
  }
  session->n_inputs = n_paths;
  import_sink state = {
      .session = session,
      .hosts_by_file = g_hash_table_new(g_direct_hash, g_direct_equal),
      .prefetch_wait = g_getenv("TRACEMERGE_TEST_PREFETCH_WAIT") != NULL,
      .prefetch_ahead = g_getenv("TRACEMERGE_TEST_PREFETCH_AHEAD")
                            ? (size_t)g_ascii_strtoull(g_getenv("TRACEMERGE_TEST_PREFETCH_AHEAD"),
                                                       NULL, 10)
                            : 0,
      .prefetch_files = g_getenv("TRACEMERGE_TEST_PREFETCH_FILES")
                            ? (unsigned)g_ascii_strtoull(g_getenv("TRACEMERGE_TEST_PREFETCH_FILES"),
                                                         NULL, 10)
                            : 0,
  };
  tm_container_sink sink = {
      .ctx = &state,
      .detect = sink_detect,
      .begin = sink_begin,
      .chunk = sink_chunk,
      .end = sink_end,
      .container_damaged = sink_container_damaged,
      .priority = sink_priority,
      .budget_exceeded = sink_budget_exceeded,
      .wants_more = sink_wants_more,
  };
  /* Archive members parsed two at a time: one here, the next ones on the
   * prefetch worker (input/reader_worker.h), made at the first offer. */
  if (session->import_threads > 1) {
    sink.offer = sink_offer;
    sink.take = sink_take;
    sink.offers_end = sink_offers_end;
  }
  GError *container_error = NULL;
  /* The reader worker is a third thread (after the calling thread and the
   * read-ahead): only when three are allowed. On this project's 2-core
   * machine, loaded, it made imports slower (docs/performance.md,
   * "Threads"): its questions and per-chunk handoffs wait for the
   * scheduler. */
  if (session->import_threads > 2)
    session->reader_worker = reader_worker_new();
  bool read_ok = container_read_inputs_ahead(session->import.model, paths, n_paths, &sink,
                                             &session->import.budgets,
                                             session->import_threads > 1, &container_error);
  /* A file the container left mid-way (an import stopped by an error)
   * keeps its reader open: what it emitted is replayed, as the serial run
   * had made those calls. */
  for (guint i = 0; i < session->import.hosts->len; i++) {
    tm_host *host = g_ptr_array_index(session->import.hosts, i);
    if (host->recording) {
      reader_recording_detach(host->recording);
      /* A prepared file's reader was closed on the worker. */
      if (reader_recording_is_prepared(host->recording))
        host->open = false;
    }
  }
  reader_worker_free(session->reader_worker);
  session->reader_worker = NULL;
  if (state.prepared)
    g_hash_table_destroy(state.prepared);
  reader_worker_free(session->prefetch_worker);
  session->prefetch_worker = NULL;
  g_hash_table_destroy(state.hosts_by_file);
  if (read_ok)
    session_manifest_finish_reading(session, NULL);
  /* What the merge config's buffers kept joins the runs before anything
   * looks at which clocks the files used. */
  session_config_drain(session);

  /* Pass 2 runs whatever pass 1 managed to read, unless a manifest error
   * failed the whole import (docs/clock-model.md §9.1): then no event of any
   * trace is converted or merged and no snapshot becomes a row, so what
   * the CLI still shows holds no part of a merge. */
  bool whole = !session->fatal_error;
  GPtrArray *ordered = g_ptr_array_copy(session->import.hosts, NULL, NULL);
  g_ptr_array_sort_with_data(ordered, session_host_by_processing_order, session->import.model);
  adopt_primary_files(session, ordered);
  choose_trace_time(session, ordered);
  add_realtime_twins(session);
  bridge_files(session, ordered);
  g_ptr_array_free(ordered, TRUE);

  if (whole) {
    sorter_convert(session->import.sorter, session->import.clocks, session->import.stats);
    count_placed_events(session);
  }
  /* Nothing adds extras after this: give back the doubling's unused tail
   * (the last huge page of it is resident until the merge ends, beside
   * the model's tables at the import's peak). */
  if (session->import.extras.len < session->import.extras.cap) {
    size_t len = session->import.extras.len;
    session->import.extras.data =
        g_realloc_n(session->import.extras.data, len, sizeof *session->import.extras.data);
    session->import.extras.cap = len;
  }
  /* Size the event tables once, exactly: doubling growth would leave up to
   * half of the largest tables unused at the memory peak, and a power of
   * two maps up to twice the rows (21 MB for 17.9 MB of slices of the
   * 1M-event TrackEvent file when they were 40 bytes). */
  tm_vec_reserve_exact(&session->import.model->slices, session->import.slice_events);
  tm_vec_reserve_exact(&session->import.model->slice_ts_base,
                       session->import.slice_events / TM_SLICE_TS_BLOCK + 1);
  tm_vec_reserve_exact(&session->import.model->counters, session->import.counter_events);
  tm_model_builder_inputs inputs = {
      .model = session->import.model,
      .stats = session->import.stats,
      .async_tracks = session->import.async_tracks,
      .extras = session->import.extras.data,
      .n_extras = session->import.extras.len,
      .events_placed = &session->import.events_placed,
      .overflow_track = overflow_track,
      .overflow_ctx = &session->import,
  };
  tm_model_builder *builder = model_builder_new(&inputs);
  /* The runs the merge sorts are sorted now, and the extras put in the
   * order the merge reads them (in emission order, the realistic Chrome
   * JSON's were mostly resident until the merge's last fifth); every
   * event naming one is announced, so that the extras go back to the
   * kernel region by region as the merge passes them. */
  if (whole)
    sorter_sort(session->import.sorter, session->import.extras.data,
                session->import.extras.len, announce_extra, builder);
  if (whole) {
    void *emit_ctx;
    tm_sorter_emit emit = session_config_window(session, builder, &emit_ctx);
    sorter_merge(session->import.sorter, emit, emit_ctx);
  }
  model_builder_free(builder);
  session_config_finish(session);
  tm_vec_free(&session->import.extras);

  snapshot_rows_ctx ctx = {session};
  if (whole)
    clock_graph_foreach_reading(session->import.clocks, add_snapshot_row, &ctx);
  import_finish_tracks(&session->import);
  model_finalize(session->import.model);

  if (session->fatal_error) {
    g_clear_error(&container_error);
    g_propagate_error(error, g_error_copy(session->fatal_error));
    return false;
  }
  if (!read_ok) {
    g_propagate_error(error, container_error);
    return false;
  }
  if (session->first_error) {
    g_propagate_error(error, g_error_copy(session->first_error));
    return false;
  }
  return true;
}

/* --- queries ------------------------------------------------------------ */

bool tm_session_import(tm_session *session, const char *const *paths,
                       size_t n_paths, GError **error) {
  return session_error_publish(session_import(session, paths, n_paths, error),
                               error);
}

bool session_ensure_sql(tm_session *session, GError **error) {
  if (session->sql)
    return true;
  session->sql = sql_surface_new(session->import.model, &session->sql_options,
                                 error);
  if (!session->sql)
    return false;
  sql_surface_set_timeout(session->sql, session->query_timeout_seconds);
  for (char **p = session->sql_packages; p && *p; p++) {
    /* DIR@NAME: the last '@' splits, so a directory may contain '@'. */
    char *dir = g_strdup(*p);
    char *at = strrchr(dir, '@');
    const char *name = NULL;
    if (at) {
      *at = '\0';
      name = at + 1;
    }
    bool ok = sql_surface_add_sql_package(session->sql, dir, name, error);
    g_free(dir);
    if (!ok) {
      g_clear_pointer(&session->sql, sql_surface_free);
      return false;
    }
  }
  return true;
}

void tm_session_interrupt(tm_session *session) {
  /* Async-signal-safe: reads two pointers, sets a flag (sql_connection.c). */
  if (session && session->sql)
    sql_surface_interrupt(session->sql);
}

bool tm_session_query(tm_session *session, const char *sql, tm_format format,
                      FILE *out, GError **error) {
  return session_error_publish(
      session_ensure_sql(session, error) &&
          sql_surface_query(session->sql, sql, format, out, error),
      error);
}

bool tm_session_query_with_options(tm_session *session, const char *sql,
                                   const tm_query_options *options, FILE *out,
                                   uint64_t *rows, GError **error) {
  tm_query_options defaults = {.format = TM_FORMAT_CSV};
  return session_error_publish(
      session_ensure_sql(session, error) &&
          sql_surface_run(session->sql, sql, options ? options : &defaults,
                          out, rows, error),
      error);
}

bool tm_session_save_sqlite(tm_session *session, const char *path,
                            unsigned flags, GError **error) {
  return session_error_publish(
      session_ensure_sql(session, error) &&
          sql_surface_save(session->sql, path, (flags & TM_SAVE_REPLACE) != 0,
                           error),
      error);
}

bool tm_save_path_check(const char *path, unsigned flags, GError **error) {
  return session_error_publish(
      sql_surface_check_save_path(path, (flags & TM_SAVE_REPLACE) != 0, error),
      error);
}

size_t tm_session_reader_count(const tm_session *session) {
  return plugin_set_count(session->plugins);
}

const tm_reader_descriptor *tm_session_borrow_reader(const tm_session *session,
                                                     size_t index,
                                                     const char **path) {
  const tm_reader *reader = plugin_set_borrow(session->plugins, index, path);
  return reader ? &reader->descriptor : NULL;
}

bool tm_session_plugins_check(const tm_session *session, GError **error) {
  return session_error_publish(plugin_set_check(session->plugins, error), error);
}

bool tm_session_config_check(const tm_session *session, GError **error) {
  if (!session->config_error)
    return true;
  /* Whatever the internal domain (config parser, an unreadable file), it
   * is the config that cannot be used. */
  g_set_error_literal(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG,
                      session->config_error->message);
  return false;
}

char *tm_session_config_to_text(const tm_session *session) {
  return session_config_to_text(session->config);
}

const char *const *tm_session_borrow_overridden(const tm_session *session,
                                                size_t index) {
  return plugin_set_borrow_overridden(session->plugins, index);
}

uint64_t tm_session_event_count(const tm_session *session) {
  return session->import.events_placed;
}
