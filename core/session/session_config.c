/*
 * The session's merge config, stage by stage (see session_config.h).
 *
 * The window of the merged timeline, in trace time, with `first` the
 * earliest event of the inputs (events a buffer gave up count: the window
 * is measured on the inputs) and W0 = first + start_offset_ms:
 * - no trigger_config: [W0, W0 + duration_ms) (no duration: to the end);
 * - START_TRACING: from the first trigger T in [W0, W0 +
 *   trigger_timeout_ms] to T + stop_delay_ms (0: to the end); no such
 *   trigger: nothing is kept;
 * - STOP_TRACING: up to T + stop_delay_ms for the first trigger T in that
 *   span, else up to W0 + trigger_timeout_ms; from W0, or with
 *   duration_ms from that end minus duration_ms (the flight-recorder
 *   view: the last duration_ms before the trigger).
 * A trigger is a slice or instant whose name is a trigger's name, on any
 * machine, from a file or machine its producer_name_regex (if any)
 * matches. An end whose begin lies before the window is dropped with it,
 * so no slice of the window loses its begin to the cut; a slice still
 * open at the window's end stays open (dur -1), as in a stopped trace.
 *
 * Triggers in pass 1: a buffered run's trigger events are remembered
 * (the earliest per run and trigger), so a buffer that gives one up does
 * not hide it from pass 2 (with a start offset, a later occurrence than
 * the earliest can still be hidden that way). With STOP_TRACING and no
 * start offset, every trigger T a buffered run emits lies at or after W0,
 * so the window ends by T + the largest stop_delay_ms (the first trigger
 * is no later than T): events of that run later than that are refused
 * there, and a RING_BUFFER keeps what precedes the trigger instead of
 * what follows it. (Raw time is converted by offsets that may differ
 * slightly between the run's clock snapshots: by that drift, the cut can
 * take an event that pass 2 would have kept at the very end.) Other runs
 * (other clocks) are cut in pass 2 only.
 */
#include "session/session_config.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "base/string_pool.h"
#include "buffer/event_buffer.h"
#include "config/merge_config.h"
#include "input/container.h"
#include "model/model_builder.h"
#include "session/session_internal.h"

/* Per file: how the config planned it, for `info`. */
typedef struct file_plan_row {
  uint32_t file_id;
  int32_t source; /* data source index, -1: none (not read or no sources) */
  int32_t buffer;
  bool read;
} file_plan_row;

/* A trigger event a buffered run emitted in pass 1: the earliest per
 * (run, trigger), kept in case the buffer gives the event up. */
typedef struct seen_trigger {
  tm_event_run *run;
  size_t trigger;
  int64_t raw_ts;
} seen_trigger;

/* Per track, while the window filter runs: begins kept and begins dropped
 * (before the window) that are still open. */
typedef struct open_begins {
  uint32_t kept;
  uint32_t dropped;
} open_begins;

struct tm_session_config {
  tm_merge_config *merge;
  tm_merge_reader *readers;
  size_t n_readers;
  tm_event_buffers *buffers; /* NULL without buffers */
  tm_str_id *trigger_names;  /* per trigger, interned */
  bool cut_in_pass1;
  GArray *plans; /* file_plan_row */
  GArray *seen_triggers; /* seen_trigger */

  /* Pass 2. */
  bool windowed; /* a window applies */
  bool keep_nothing;
  int64_t window_start;
  int64_t window_last; /* inclusive */
  bool trigger_found;
  int64_t trigger_ts;
  size_t trigger_index;
  uint32_t trigger_file;
  uint64_t outside_window;
  void *builder;
  GHashTable *open; /* track id -> open_begins* */
};

/* --- loading ------------------------------------------------------------ */

void session_config_free(tm_session_config *config) {
  if (!config)
    return;
  merge_config_free(config->merge);
  g_free(config->readers);
  event_buffers_free(config->buffers);
  g_free(config->trigger_names);
  g_array_free(config->plans, TRUE);
  g_array_free(config->seen_triggers, TRUE);
  if (config->open)
    g_hash_table_destroy(config->open);
  g_free(config);
}

static bool read_config_bytes(const tm_session_options *options, GBytes **bytes,
                              GError **error) {
  if (options->config_data) {
    *bytes = g_bytes_new(options->config_data, options->config_len);
    return true;
  }
  char *contents = NULL;
  gsize len = 0;
  if (!tm_trace_config_read_file(options->config_path, &contents, &len, error))
    return false;
  *bytes = g_bytes_new_take(contents, len);
  return true;
}

/* A reader given its config twice, by tm_session_options.reader_configs
 * and by a data source, is a mistake the user should fix. */
static bool check_reader_configs(const tm_merge_config *merge, const tm_session_options *options,
                                 GError **error) {
  for (size_t i = 0; i < options->n_reader_configs; i++) {
    const char *reader = options->reader_configs[i].reader;
    for (size_t k = 0; reader && k < merge->n_sources; k++)
      if (merge->sources[k].has_reader_config && strcmp(merge->sources[k].reader, reader) == 0) {
        g_set_error(error, TM_CONFIG_ERROR, TM_CONFIG_ERROR_INVALID,
                    "%s: reader '%s' is configured twice: by a reader configuration "
                    "(--reader-config) and by data_sources[%zu] of the config; give one",
                    merge->tc->source_name, reader, k);
        return false;
      }
  }
  return true;
}

tm_session_config *session_config_load(tm_session *session, const tm_session_options *options,
                                       FILE *warnings, GError **error) {
  if (!options || (!options->config_path && !options->config_data))
    return NULL;
  g_autoptr(GBytes) bytes = NULL;
  if (!read_config_bytes(options, &bytes, error))
    return NULL;
  const char *name = options->config_path ? options->config_path : "(config)";
  bool text = options->config_syntax == TM_CONFIG_SYNTAX_TEXT ||
              (options->config_syntax == TM_CONFIG_SYNTAX_AUTO && options->config_path &&
               tm_trace_config_is_text_name(options->config_path));
  tm_session_config *config = g_new0(tm_session_config, 1);
  config->plans = g_array_new(FALSE, FALSE, sizeof(file_plan_row));
  config->seen_triggers = g_array_new(FALSE, FALSE, sizeof(seen_trigger));
  size_t n = plugin_set_count(session->plugins);
  config->readers = g_new0(tm_merge_reader, n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    const tm_reader *reader = plugin_set_borrow(session->plugins, i, NULL);
    config->readers[i].name = reader->descriptor.name;
    config->readers[i].config_name = reader->descriptor.config_name;
  }
  config->n_readers = n;
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  config->merge = merge_config_parse(data, len, text, name, config->readers, n, error);
  if (!config->merge || !check_reader_configs(config->merge, options, error)) {
    session_config_free(config);
    return NULL;
  }
  tm_merge_config *merge = config->merge;
  for (guint i = 0; i < merge->tc->notes->len; i++)
    fprintf(warnings, "tracemerge: note: %s\n", (const char *)merge->tc->notes->pdata[i]);
  if (merge->n_buffers) {
    tm_buffer_spec *specs = g_new0(tm_buffer_spec, merge->n_buffers);
    for (size_t i = 0; i < merge->n_buffers; i++) {
      specs[i].size_bytes = merge->buffers[i].size_bytes;
      specs[i].discard = merge->buffers[i].discard;
    }
    config->buffers = event_buffers_new(specs, merge->n_buffers);
    g_free(specs);
  }
  config->trigger_names = g_new0(tm_str_id, merge->n_triggers ? merge->n_triggers : 1);
  for (size_t i = 0; i < merge->n_triggers; i++)
    config->trigger_names[i] =
        string_pool_intern_cstr(session->import.model->strings, merge->triggers[i].name);
  config->cut_in_pass1 = config->buffers && merge->trigger_mode == MERGE_TRIGGER_STOP &&
                         merge->start_offset_ns == 0;
  return config;
}

char *session_config_to_text(const tm_session_config *config) {
  return config ? merge_config_to_text(config->merge, config->readers, config->n_readers) : NULL;
}

/* --- files ------------------------------------------------------------- */

/* The names a file answers to in filters: as listed (a root input's path
 * as given, a member's path) and its base name. */
static size_t file_names(const tm_model *model, uint32_t file_id, const char *names[2],
                         char **base) {
  const char *listed = string_pool_borrow(model->strings, model->trace_files.data[file_id].name);
  size_t n = 0;
  *base = NULL;
  if (listed && *listed) {
    names[n++] = listed;
    *base = g_path_get_basename(listed);
    if (strcmp(*base, listed) != 0)
      names[n++] = *base;
  }
  return n;
}

static const char *machine_name(const tm_model *model, uint32_t machine_id) {
  if (machine_id >= model->machines.len)
    return NULL;
  return string_pool_borrow(model->strings, model->machines.data[machine_id].name);
}

session_file_plan session_config_plan_file(tm_session_config *config, tm_session *session,
                                           uint32_t file_id, uint32_t machine_id,
                                           const char *reader) {
  session_file_plan plan = {.read = true, .buffer = -1};
  if (!config)
    return plan;
  const tm_merge_config *merge = config->merge;
  file_plan_row row = {.file_id = file_id, .source = -1, .buffer = -1, .read = true};
  if (merge->n_sources == 0) {
    /* Every reader, into buffer 0 as perfetto's default target_buffer. */
    plan.buffer = merge->n_buffers ? 0 : -1;
  } else {
    const char *names[2];
    g_autofree char *base = NULL;
    size_t n = file_names(session->import.model, file_id, names, &base);
    const tm_merge_source *source = merge_config_select(
        merge, reader, names, n, machine_name(session->import.model, machine_id));
    if (!source) {
      plan.read = false;
    } else {
      row.source = (int32_t)(source - merge->sources);
      plan.buffer = source->buffer == MERGE_NO_BUFFER ? -1 : (int32_t)source->buffer;
      plan.has_reader_config = source->has_reader_config;
      plan.reader_config = source->reader_config;
      plan.reader_config_len = source->reader_config_len;
    }
  }
  row.read = plan.read;
  row.buffer = plan.buffer;
  g_array_append_val(config->plans, row);
  if (!plan.read)
    stats_add(session->import.stats, "merge_file_not_selected", TM_NULL_INT64, machine_id, file_id, 1);
  return plan;
}

/* --- pass 1 ----------------------------------------------------------- */

static bool trigger_may_fire(const tm_merge_trigger *trigger, const tm_model *model,
                             uint32_t file_id, uint32_t machine_id) {
  if (!trigger->producer_regex)
    return true;
  const char *names[2];
  g_autofree char *base = NULL;
  size_t n = file_names(model, file_id, names, &base);
  for (size_t i = 0; i < n; i++)
    if (g_regex_match(trigger->producer_regex, names[i], 0, NULL))
      return true;
  const char *machine = machine_name(model, machine_id);
  return machine && g_regex_match(trigger->producer_regex, machine, 0, NULL);
}

/* The index of the trigger event `ev` of file `file_id` on machine
 * `machine_id` is, or -1. */
static int trigger_of(const tm_session_config *config, const tm_model *model,
                          const tm_event *ev, uint32_t file_id, uint32_t machine_id) {
  if (ev->kind != TM_EVENT_SLICE_BEGIN && ev->kind != TM_EVENT_SLICE_COMPLETE)
    return -1;
  for (size_t i = 0; i < config->merge->n_triggers; i++)
    if (ev->name_id == config->trigger_names[i] &&
        trigger_may_fire(&config->merge->triggers[i], model, file_id, machine_id))
      return (int)i;
  return -1;
}

static int64_t saturating_add(int64_t a, int64_t b) {
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? (b > 0 ? INT64_MAX : INT64_MIN) : sum;
}

/* Remembers a trigger event of a buffered run, the earliest per (run,
 * trigger): pass 2 still sees it if the buffer gives it up. */
static void remember_trigger(tm_session_config *config, tm_event_run *run, int trigger,
                             int64_t raw_ts) {
  for (guint i = 0; i < config->seen_triggers->len; i++) {
    seen_trigger *seen = &g_array_index(config->seen_triggers, seen_trigger, i);
    if (seen->run == run && seen->trigger == (size_t)trigger) {
      seen->raw_ts = MIN(seen->raw_ts, raw_ts);
      return;
    }
  }
  seen_trigger fresh = {run, (size_t)trigger, raw_ts};
  g_array_append_val(config->seen_triggers, fresh);
}

void session_config_push(tm_host *host, tm_event_run *run, const tm_event *ev, int64_t thread_ts,
                         int64_t thread_dur) {
  tm_session_config *config = host_session(host)->config;
  run->buffered++;
  event_buffers_push(config->buffers, (uint32_t)host->buffer, run, ev, thread_ts, thread_dur);
  if (config->merge->trigger_mode == MERGE_TRIGGER_NONE)
    return;
  int trigger = trigger_of(config, host->state->model, ev, host->file_id, run->machine_id);
  if (trigger < 0)
    return;
  remember_trigger(config, run, trigger, ev->ts);
  if (config->cut_in_pass1)
    event_buffers_set_cutoff(config->buffers, run,
                             saturating_add(ev->ts, config->merge->max_stop_delay_ns));
}

uint32_t session_config_stage_args(tm_host *host) {
  tm_session_config *config = host_session(host)->config;
  /* The host's pending pairs have the layout of tm_buffer_arg. */
  G_STATIC_ASSERT(sizeof(tm_buffer_arg) == sizeof(tm_host_pending_arg));
  G_STATIC_ASSERT(offsetof(tm_buffer_arg, value) == offsetof(tm_host_pending_arg, value));
  uint32_t ref =
      event_buffers_stage_args(config->buffers, host->file_id,
                               (const tm_buffer_arg *)host->pending_args.data,
                               host->pending_args.len);
  host->pending_args.len = 0;
  return ref;
}

void session_config_reader_returned(tm_host *host, bool file_done) {
  tm_session_config *config = host_session(host)->config;
  if (config && config->buffers && host->buffer >= 0)
    event_buffers_release_staged(config->buffers, host->file_id, file_done);
}

/* --- end of pass 1 ------------------------------------------------------- */

static void drain_one(void *ctx, void *run_key, const tm_event *held, int64_t thread_ts,
                      int64_t thread_dur, const tm_buffer_arg *args, size_t n_args) {
  tm_session *session = ctx;
  tm_event_run *run = run_key;
  tm_event ev = *held;
  if (n_args) {
    uint32_t set = 0;
    for (size_t i = 0; i < n_args; i++)
      set = model_add_arg(session->import.model, set, args[i].key, args[i].value);
    ev.arg_set_id = set;
  }
  /* Held events never have an extra: their thread times came beside them. */
  ev.flags &= (uint8_t)~(TM_EVENT_HAS_EXTRA | TM_EVENT_DUR_IN_EXTRA);
  import_state_add_extra(&session->import, &ev, thread_ts, thread_dur);
  event_run_push(run, &ev);
  if (ev.kind == TM_EVENT_SLICE_BEGIN || ev.kind == TM_EVENT_SLICE_COMPLETE)
    session->import.slice_events++;
  else if (ev.kind == TM_EVENT_COUNTER)
    session->import.counter_events++;
}

void session_config_drain(tm_session *session) {
  tm_session_config *config = session->config;
  if (!config || !config->buffers)
    return;
  event_buffers_drain(config->buffers, drain_one, session);
  tm_stats *stats = session->import.stats;
  for (size_t i = 0; i < event_buffers_count(config->buffers); i++) {
    tm_buffer_stats s;
    event_buffers_stats(config->buffers, i, &s);
    int64_t idx = (int64_t)i;
    stats_add(stats, "merge_buf_buffer_size", idx, TM_NULL_ID, TM_NULL_ID, (int64_t)s.size_bytes);
    stats_add(stats, "merge_buf_events_written", idx, TM_NULL_ID, TM_NULL_ID, (int64_t)s.written);
    stats_add(stats, s.discard ? "merge_buf_events_discarded" : "merge_buf_events_overwritten",
              idx, TM_NULL_ID, TM_NULL_ID, (int64_t)s.dropped);
    stats_add(stats, "merge_buf_bytes_peak", idx, TM_NULL_ID, TM_NULL_ID, (int64_t)s.peak_bytes);
    config->outside_window += s.cut;
  }
  uint64_t lost = event_buffers_args_lost(config->buffers);
  if (lost)
    stats_add(stats, "merge_buf_args_lost", TM_NULL_INT64, TM_NULL_ID, TM_NULL_ID, (int64_t)lost);
}

/* --- pass 2: the window ---------------------------------------------- */

static void consider_trigger(tm_session_config *config, int64_t ts, size_t trigger,
                             uint32_t file_id, int64_t from, int64_t until) {
  if (ts < from || ts > until || (config->trigger_found && ts >= config->trigger_ts))
    return;
  config->trigger_found = true;
  config->trigger_ts = ts;
  config->trigger_index = trigger;
  config->trigger_file = file_id;
}

/* The first trigger at or after `from` and at most `until`, over every
 * run (on trace time now) and the triggers buffers gave up. */
static void find_trigger(tm_session *session, tm_session_config *config, int64_t from,
                         int64_t until) {
  for (guint i = 0; i < config->seen_triggers->len; i++) {
    const seen_trigger *seen = &g_array_index(config->seen_triggers, seen_trigger, i);
    int64_t ts;
    if (clock_graph_to_trace_time(session->import.clocks, seen->run->clock, seen->raw_ts, &ts) ==
        TM_CLOCK_OK)
      consider_trigger(config, ts, seen->trigger, seen->run->trace_id, from, until);
  }
  sorter_unpack(session->import.sorter);
  for (size_t r = 0; r < sorter_run_count(session->import.sorter); r++) {
    const tm_event_run *run = sorter_borrow_run(session->import.sorter, r);
    for (size_t k = 0; k < run->len; k++) {
      const tm_event *ev = &run->events[k];
      if (ev->ts < from || ev->ts > until ||
          (config->trigger_found && ev->ts >= config->trigger_ts))
        continue;
      int index = trigger_of(config, session->import.model, ev, run->trace_id, run->machine_id);
      if (index >= 0)
        consider_trigger(config, ev->ts, (size_t)index, run->trace_id, from, until);
    }
  }
}

typedef struct first_ctx {
  tm_session *session;
  bool any;
  int64_t first;
} first_ctx;

/* A buffered run's first event, given up or not, converted like the run. */
static void buffered_run_first(void *opaque, void *run_key, int64_t min_ts, int64_t max_ts) {
  (void)max_ts;
  first_ctx *ctx = opaque;
  const tm_event_run *run = run_key;
  int64_t ts;
  if (clock_graph_to_trace_time(ctx->session->import.clocks, run->clock, min_ts, &ts) != TM_CLOCK_OK)
    return;
  if (!ctx->any || ts < ctx->first) {
    ctx->first = ts;
    ctx->any = true;
  }
}

/* The first event of the merged timeline, the events buffers gave up
 * included: the window is measured on the inputs, not on what a buffer
 * kept of them. */
static bool first_event_ts(tm_session *session, int64_t *first) {
  tm_session_config *config = session->config;
  first_ctx ctx = {session, false, 0};
  if (config->buffers)
    event_buffers_foreach_run(config->buffers, buffered_run_first, &ctx);
  bool any = ctx.any;
  *first = ctx.first;
  sorter_unpack(session->import.sorter);
  for (size_t r = 0; r < sorter_run_count(session->import.sorter); r++) {
    const tm_event_run *run = sorter_borrow_run(session->import.sorter, r);
    for (size_t k = 0; k < run->len; k++)
      if (!any || run->events[k].ts < *first) {
        *first = run->events[k].ts;
        any = true;
      }
  }
  return any;
}

static void decide_window(tm_session *session, tm_session_config *config) {
  const tm_merge_config *merge = config->merge;
  int64_t first;
  if (!first_event_ts(session, &first))
    return;
  int64_t w0 = saturating_add(first, merge->start_offset_ns);
  int64_t start = w0, last = INT64_MAX;
  switch (merge->trigger_mode) {
  case MERGE_TRIGGER_NONE:
    if (merge->duration_ns)
      last = saturating_add(w0, merge->duration_ns - 1);
    break;
  case MERGE_TRIGGER_START:
    find_trigger(session, config, w0, saturating_add(w0, merge->trigger_timeout_ns));
    if (!config->trigger_found) {
      config->keep_nothing = true;
      break;
    }
    start = config->trigger_ts;
    if (merge->triggers[config->trigger_index].stop_delay_ns)
      last = saturating_add(start, merge->triggers[config->trigger_index].stop_delay_ns);
    break;
  case MERGE_TRIGGER_STOP:
    find_trigger(session, config, w0, saturating_add(w0, merge->trigger_timeout_ns));
    last = config->trigger_found
               ? saturating_add(config->trigger_ts,
                                merge->triggers[config->trigger_index].stop_delay_ns)
               : saturating_add(w0, merge->trigger_timeout_ns);
    if (merge->duration_ns)
      start = MAX(w0, saturating_add(last, -(merge->duration_ns - 1)));
    break;
  }
  config->window_start = start;
  config->window_last = last;
}

static bool is_slice_event(const tm_event *ev) {
  return ev->kind == TM_EVENT_SLICE_BEGIN || ev->kind == TM_EVENT_SLICE_END;
}

static open_begins *open_of(tm_session_config *config, uint32_t track) {
  open_begins *o = g_hash_table_lookup(config->open, GUINT_TO_POINTER(track));
  if (!o) {
    o = g_new0(open_begins, 1);
    g_hash_table_insert(config->open, GUINT_TO_POINTER(track), o);
  }
  return o;
}

static bool in_window(tm_session_config *config, const tm_event *ev) {
  if (config->keep_nothing)
    return false;
  if (ev->ts > config->window_last)
    return false;
  if (!is_slice_event(ev))
    return ev->ts >= config->window_start;
  open_begins *o = open_of(config, ev->track_id);
  if (ev->kind == TM_EVENT_SLICE_BEGIN) {
    if (ev->ts < config->window_start) {
      o->dropped++;
      return false;
    }
    o->kept++;
    return true;
  }
  /* An end closes the innermost open begin: a kept one if any is open
   * (they came later), else one dropped before the window. */
  if (o->kept) {
    o->kept--;
    return true;
  }
  if (o->dropped) {
    o->dropped--;
    return false;
  }
  return ev->ts >= config->window_start;
}

static void window_push(void *ctx, const tm_event *ev, uint32_t machine_id, uint32_t trace_id) {
  tm_session *session = ctx;
  tm_session_config *config = session->config;
  if (!in_window(config, ev)) {
    config->outside_window++;
    return;
  }
  model_builder_push(config->builder, ev, machine_id, trace_id);
}

tm_sorter_emit session_config_window(tm_session *session, void *builder, void **ctx) {
  tm_session_config *config = session->config;
  const tm_merge_config *merge = config ? config->merge : NULL;
  if (!merge || (merge->trigger_mode == MERGE_TRIGGER_NONE && !merge->duration_ns &&
                 !merge->start_offset_ns)) {
    *ctx = builder;
    return model_builder_push;
  }
  config->windowed = true;
  config->window_start = INT64_MIN;
  config->window_last = INT64_MAX;
  decide_window(session, config);
  config->builder = builder;
  config->open = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  *ctx = session;
  return window_push;
}

void session_config_finish(tm_session *session) {
  tm_session_config *config = session->config;
  if (!config)
    return;
  tm_model *model = session->import.model;
  g_autofree char *text = session_config_to_text(config);
  model_metadata_set_string(model, "merge_config_pbtxt", TM_NULL_ID, TM_NULL_ID,
                            string_pool_intern_cstr(model->strings, text));
  if (config->outside_window)
    stats_add(session->import.stats, "merge_events_outside_window", TM_NULL_INT64, TM_NULL_ID,
              TM_NULL_ID, (int64_t)config->outside_window);
  if (!config->windowed)
    return;
  if (config->keep_nothing) {
    model_metadata_set_int(model, "merge_window_empty", TM_NULL_ID, TM_NULL_ID, 1);
  } else {
    if (config->window_start != INT64_MIN)
      model_metadata_set_int(model, "merge_window_start", TM_NULL_ID, TM_NULL_ID,
                             config->window_start);
    if (config->window_last != INT64_MAX)
      model_metadata_set_int(model, "merge_window_end", TM_NULL_ID, TM_NULL_ID,
                             config->window_last);
  }
  if (config->trigger_found) {
    model_metadata_set_string(
        model, "merge_trigger_name", TM_NULL_ID, config->trigger_file,
        string_pool_intern_cstr(model->strings,
                                config->merge->triggers[config->trigger_index].name));
    model_metadata_set_int(model, "merge_trigger_ts", TM_NULL_ID, config->trigger_file,
                           config->trigger_ts);
  }
}

/* --- info ------------------------------------------------------------------ */

static const char *str_or(const tm_model *model, tm_str_id id, const char *fallback) {
  const char *s = string_pool_borrow(model->strings, id);
  return s ? s : fallback;
}

void session_config_print_info(tm_session *session, FILE *out) {
  tm_session_config *config = session->config;
  if (!config)
    return;
  const tm_merge_config *merge = config->merge;
  const tm_model *model = session->import.model;
  fprintf(out, "config: %s\n", merge->tc->source_name);
  for (guint i = 0; i < config->plans->len; i++) {
    const file_plan_row *p = &g_array_index(config->plans, file_plan_row, i);
    const char *name = str_or(model, model->trace_files.data[p->file_id].name, "\"\"");
    if (!p->read) {
      fprintf(out, "  file [%" PRIu32 "] %s: not read (no data source selects it)\n",
              p->file_id, name);
      continue;
    }
    fprintf(out, "  file [%" PRIu32 "] %s:", p->file_id, name);
    if (p->source >= 0)
      fprintf(out, " data_sources[%d] (%s)", p->source, merge->sources[p->source].reader);
    if (p->buffer >= 0)
      fprintf(out, " buffer %d", p->buffer);
    else
      fprintf(out, " unbuffered");
    fputc('\n', out);
  }
  for (size_t i = 0; config->buffers && i < event_buffers_count(config->buffers); i++) {
    tm_buffer_stats s;
    event_buffers_stats(config->buffers, i, &s);
    fprintf(out,
            "  buffer %zu: %" PRIu64 " bytes, %s; %" PRIu64 " events written, %" PRIu64
            " %s, peak %" PRIu64 " bytes\n",
            i, s.size_bytes, s.discard ? "DISCARD" : "RING_BUFFER", s.written, s.dropped,
            s.discard ? "discarded" : "overwritten", s.peak_bytes);
  }
  if (config->windowed) {
    if (config->keep_nothing)
      fprintf(out, "  window: empty (no trigger within trigger_timeout_ms)\n");
    else if (config->window_last == INT64_MAX)
      fprintf(out, "  window: %" PRId64 " .. end\n", config->window_start);
    else
      fprintf(out, "  window: %" PRId64 " .. %" PRId64 "\n", config->window_start,
              config->window_last);
    if (config->trigger_found)
      fprintf(out, "  trigger: %s at %" PRId64 " (file [%" PRIu32 "])\n",
              merge->triggers[config->trigger_index].name, config->trigger_ts,
              config->trigger_file);
    else if (merge->trigger_mode != MERGE_TRIGGER_NONE)
      fprintf(out, "  trigger: none within trigger_timeout_ms\n");
  }
  if (config->outside_window)
    fprintf(out, "  events outside the window: %" PRIu64 "\n", config->outside_window);
}
