/*
 * Stats: the catalog of named counters and their rows in model->stats.
 *
 * The catalog is the host's own stats (core_catalog) followed by those the
 * readers declare (stats_declare), each name once: the first declaration
 * of a name wins, and the host's own come first.
 *
 * Invariant: every row is unique per (name, idx, machine, trace), and is
 * found in one of two places. The zero rows stats_open_context() makes for
 * a (machine, trace) are one block of model->stats, a row per "context
 * stat" (the single-value machine-and-trace stats of the catalog when the
 * first context opened, in catalog order): `contexts` maps the pair to the
 * block's first row, and a context stat's position in the block is its row.
 * Every other row is in `index`, keyed by (name, idx, machine, trace);
 * global stats are keyed with machine and trace TM_NULL_ID whatever the
 * caller passed.
 *
 * Why two places: an archive of many tiny members opens one context per
 * member, and each context has ~150 zero rows. A hash entry and a key per
 * row cost more than the row itself (about 80 bytes against 40); a block
 * costs one slot per context. A context stat counted before its context
 * opened gets an `index` row, and its context is marked loose, so that the
 * rows of that context stay in `index` (no second row for one key).
 */
#include "model/stats.h"

#include <glib.h>
#include <string.h>

#define MT TM_STAT_MACHINE_AND_TRACE
#define GL TM_STAT_GLOBAL
#define GLD TM_STAT_GLOBAL_ON_DEMAND
#define MTD TM_STAT_MACHINE_AND_TRACE_ON_DEMAND

static const tm_stat_info core_catalog[] = {
    {"clock_sync_failure_unknown_source_clock", "error", "analysis", MT,
     "An event's clock never appeared in any snapshot; event dropped."},
    {"clock_sync_failure_unknown_target_clock", "error", "analysis", MT,
     "The trace-time clock was not in the clock graph; event dropped."},
    {"clock_sync_failure_no_path", "error", "analysis", MT,
     "No chain of at most 4 clock edges reaches trace time; event dropped."},
    {"clock_sync_failure_overflow", "error", "analysis", MT,
     "An event's time converted to trace time (or a value on the way) did "
     "not fit in 64 bits; event dropped."},
    {"clock_sync_unrelatable_clock_domains", "error", "analysis", MT,
     "A file's clock could not be tied to trace time by any rule; its "
     "events are dropped."},
    {"clock_sync_mixed_clock_sources", "error", "analysis", MT,
     "A file converted timestamps through its machine's shared clocks "
     "before bringing its own snapshot."},
    {"clock_sync_cache_miss", "info", "analysis", GL,
     "Clock conversions that missed the conversion cache."},
    {"invalid_clock_snapshots", "error", "analysis", GL,
     "Clock snapshots rejected (see the import error for why)."},
    {"trace_sorter_negative_timestamp_dropped", "error", "trace", GL,
     "Events converted to a negative trace time were dropped."},
    {"sorter_push_event_out_of_order", "error", "trace", GL,
     "Events still out of order after sorting."},
    {"slice_spill_overlapping_complete_event", "error", "analysis", MT,
     "A complete slice overlapped a sibling and moved to an overflow track."},
    {"slice_drop_overlapping_complete_event", "error", "analysis", MT,
     "A complete slice partially overlapped another on its track; dropped."},
    {"slice_negative_duration", "error", "analysis", MT,
     "A slice with a negative duration was dropped."},
    {"slice_timestamp_overflow", "error", "analysis", MT,
     "A complete slice whose end (ts + dur) does not fit in 64 bits was "
     "dropped."},
    {"slice_max_depth_exceeded", "error", "analysis", MT,
     "A slice nested deeper than 512 levels was dropped."},
    {"misplaced_end_event", "data_loss", "analysis", MT,
     "An end event had no matching begin on its track."},
    {"container_inflate_ratio_exceeded", "data_loss", "trace", MT,
     "An input's archive members yielded more bytes per byte of the input "
     "than the inflate budget allows (--max-inflate-ratio); the rest of "
     "the input was not read."},
    {"container_member_size_exceeded", "data_loss", "trace", MT,
     "A file was larger than the member budget (--max-member-size); it was "
     "cut there."},
    {"container_depth_exceeded", "data_loss", "trace", MT,
     "A container was nested deeper than the depth budget (--max-depth); "
     "it was not read."},
    {"container_file_count_exceeded", "data_loss", "trace", MT,
     "The import held more files than the file budget (--max-files); the "
     "ones after were not read."},
    {"reader_call_refused", "error", "trace", MT,
     "A reader's call to a host service that the host could not take (a "
     "NULL or too-short struct, a ref that names no row, no key or name, a "
     "column or enum value the host does not know); the call did nothing: "
     "its event was dropped, or it answered 0 or false. The import log "
     "names the call and why."},
    {"reader_record_size_exceeded", "data_loss", "trace", MT,
     "A reader would have held more bytes for one record (event, line, "
     "element, packet) than the record budget (--max-record-size); the "
     "file was cut there."},
    {"sched_cpu_out_of_range", "error", "trace", MT,
     "An event named a cpu above 4095 (a switch, wakeup or ftrace event on it, any call on "
     "a track of it); it was dropped (a sample kept without its cpu)."},
    {"flow_duplicate_id", "error", "trace", MT,
     "A flow started with an id already in flight."},
    {"flow_no_enclosing_slice", "error", "trace", MT,
     "A flow event found no slice to bind to."},
    {"flow_step_without_start", "info", "trace", MT,
     "A flow step arrived for a flow never started."},
    {"flow_end_without_start", "info", "trace", MT,
     "A flow end arrived for a flow never started."},
    {"container_member_truncated", "data_loss", "trace", MT,
     "An archive member could not be read to its end; the bytes before "
     "the damage were kept."},
    {"file_parse_error", "error", "trace", MT,
     "A trace file was damaged; events read before the damage were kept."},

    /* A merge config's buffers (core/buffer), one row per buffer (idx),
     * and its window and data sources (core/session/session_config.c). */
    {"merge_buf_buffer_size", "info", "analysis", GLD,
     "The memory budget of a buffer of the merge config, in bytes."},
    {"merge_buf_events_written", "info", "analysis", GLD,
     "Events the readers emitted into a buffer of the merge config."},
    {"merge_buf_events_overwritten", "data_loss", "analysis", GLD,
     "Events a RING_BUFFER of the merge config gave up for newer ones."},
    {"merge_buf_events_discarded", "data_loss", "analysis", GLD,
     "Events a DISCARD buffer of the merge config refused once full."},
    {"merge_buf_bytes_peak", "info", "analysis", GLD,
     "The most bytes a buffer of the merge config held at once."},
    {"merge_buf_args_lost", "error", "analysis", GLD,
     "Events held without their args: the reader used an arg set after "
     "the callback that committed it had returned."},
    {"merge_events_outside_window", "info", "analysis", GLD,
     "Events outside the window the merge config keeps (start_offset_ms, "
     "duration_ms, trigger_config)."},
    {"merge_file_not_selected", "info", "analysis", MTD,
     "A file no data source of the merge config selects; it was not "
     "read."},
};

#undef MT
#undef GL
#undef GLD
#undef MTD

typedef struct stat_key {
  tm_str_id name;
  uint32_t machine_id;
  uint32_t trace_id;
  int64_t idx;
} stat_key;

/* A slot of `contexts`: the block of zero rows of one (machine, trace). */
typedef struct context_slot {
  uint32_t machine_id;
  uint32_t trace_id;
  uint32_t first_row_plus_one; /* 0: an empty slot; CONTEXT_LOOSE: no block */
} context_slot;

#define CONTEXT_LOOSE UINT32_MAX

struct tm_stats {
  tm_model *model;
  GHashTable *catalog;    /* name -> const tm_stat_info* (borrowed) */
  GPtrArray *declared;    /* const tm_stat_info*, readers', in order */
  GHashTable *index; /* stat_key* -> row id + 1; rows outside blocks */
  /* The context stats, fixed when the first context opens: each one's
   * row as a block holds it (value 0, machine and trace unset), and each
   * info's position in the block + 1. */
  bool context_stats_fixed;
  TM_VEC(tm_stats_row) context_rows;
  GHashTable *context_position; /* const tm_stat_info* -> position + 1 */
  /* Open addressing, linear probing, at most half full. */
  context_slot *contexts;
  size_t contexts_cap; /* 0 or a power of two */
  size_t contexts_len;
  /* Import-log rows written per stats row, by row id (shorter than
   * model->stats until a row first logs). */
  TM_VEC(uint32_t) logged;
};

static guint stat_key_hash(gconstpointer p) {
  const stat_key *k = p;
  return (guint)(k->name * 2654435761u) ^ (guint)(k->machine_id * 40503u) ^
         (guint)(k->trace_id * 97u) ^ (guint)k->idx;
}

static gboolean stat_key_equal(gconstpointer a, gconstpointer b) {
  return memcmp(a, b, sizeof(stat_key)) == 0;
}

const tm_stat_info *stats_lookup(const tm_stats *stats, const char *name) {
  return g_hash_table_lookup(stats->catalog, name);
}

static const char *const severity_names[] = {
    [TM_STAT_INFO] = "info",
    [TM_STAT_NOTICE] = "notice",
    [TM_STAT_DATA_LOSS] = "data_loss",
    [TM_STAT_ERROR] = "error",
};

static const char *const source_names[] = {
    [TM_STAT_SOURCE_TRACE] = "trace",
    [TM_STAT_SOURCE_ANALYSIS] = "analysis",
};

const char *stats_severity_name(uint32_t severity) {
  return severity < G_N_ELEMENTS(severity_names) ? severity_names[severity] : NULL;
}

const char *stats_source_name(uint32_t source) {
  return source < G_N_ELEMENTS(source_names) ? source_names[source] : NULL;
}

void stats_declare(tm_stats *stats, const tm_stat_info *info) {
  if (g_hash_table_contains(stats->catalog, info->name))
    return;
  g_hash_table_insert(stats->catalog, (gpointer)info->name, (gpointer)info);
  g_ptr_array_add(stats->declared, (gpointer)info);
}

static bool scope_is_global(const tm_stat_info *info) {
  return info && (info->scope == TM_STAT_GLOBAL || info->scope == TM_STAT_GLOBAL_ON_DEMAND);
}

static stat_key make_key(tm_str_id name, int64_t idx, uint32_t machine_id,
                         uint32_t trace_id, const tm_stat_info *info) {
  stat_key key;
  memset(&key, 0, sizeof key); /* padding takes part in hashing */
  key.name = name;
  key.idx = idx;
  bool global = scope_is_global(info);
  key.machine_id = global ? TM_NULL_ID : machine_id;
  key.trace_id = global ? TM_NULL_ID : trace_id;
  return key;
}

static tm_stats_row make_row(tm_string_pool *strings, tm_str_id name, int64_t idx,
                             const tm_stat_info *info) {
  return (tm_stats_row){
      .name = name,
      .idx = idx,
      .severity = string_pool_intern_cstr(strings, info ? info->severity : "error"),
      .source = string_pool_intern_cstr(strings, info ? info->source : "trace"),
      .description = string_pool_intern_cstr(strings, info ? info->description : ""),
      .machine_id = TM_NULL_ID,
      .trace_id = TM_NULL_ID,
  };
}

/* ---- context blocks ------------------------------------------------------ */

static size_t context_hash(uint32_t machine_id, uint32_t trace_id) {
  return (size_t)(trace_id * 2654435761u) ^ (size_t)(machine_id * 40503u);
}

/* The slot of (machine, trace), or NULL if it has none. */
static context_slot *context_find(const tm_stats *stats, uint32_t machine_id,
                                  uint32_t trace_id) {
  if (stats->contexts_cap == 0)
    return NULL;
  size_t mask = stats->contexts_cap - 1;
  for (size_t i = context_hash(machine_id, trace_id) & mask;
       stats->contexts[i].first_row_plus_one; i = (i + 1) & mask) {
    context_slot *slot = &stats->contexts[i];
    if (slot->machine_id == machine_id && slot->trace_id == trace_id)
      return slot;
  }
  return NULL;
}

static void context_place(context_slot *slots, size_t cap, context_slot slot) {
  size_t mask = cap - 1;
  size_t i = context_hash(slot.machine_id, slot.trace_id) & mask;
  while (slots[i].first_row_plus_one)
    i = (i + 1) & mask;
  slots[i] = slot;
}

/* Adds a slot for a pair that has none. */
static void context_insert(tm_stats *stats, uint32_t machine_id, uint32_t trace_id,
                           uint32_t first_row_plus_one) {
  if ((stats->contexts_len + 1) * 2 > stats->contexts_cap) {
    size_t cap = stats->contexts_cap ? stats->contexts_cap * 2 : 16;
    context_slot *slots = g_new0(context_slot, cap);
    for (size_t i = 0; i < stats->contexts_cap; i++)
      if (stats->contexts[i].first_row_plus_one)
        context_place(slots, cap, stats->contexts[i]);
    g_free(stats->contexts);
    stats->contexts = slots;
    stats->contexts_cap = cap;
  }
  context_place(stats->contexts, stats->contexts_cap,
                (context_slot){machine_id, trace_id, first_row_plus_one});
  stats->contexts_len++;
}

/* The position + 1 of `info` in a context's block; 0 if it has none there
 * (not a context stat, or declared after the first context opened). */
static guint context_position(const tm_stats *stats, const tm_stat_info *info,
                              int64_t idx) {
  if (!stats->context_stats_fixed || !info || idx != TM_NULL_INT64 ||
      info->scope != TM_STAT_MACHINE_AND_TRACE)
    return 0;
  return GPOINTER_TO_UINT(g_hash_table_lookup(stats->context_position, info));
}

static void add_context_stat(tm_stats *stats, const tm_stat_info *info) {
  tm_stats_row row = make_row(stats->model->strings,
                              string_pool_intern_cstr(stats->model->strings, info->name),
                              TM_NULL_INT64, info);
  tm_vec_push(&stats->context_rows, row);
  g_hash_table_insert(stats->context_position, (gpointer)info,
                      GUINT_TO_POINTER((guint)stats->context_rows.len));
}

static void fix_context_stats(tm_stats *stats) {
  stats->context_stats_fixed = true;
  for (size_t i = 0; i < G_N_ELEMENTS(core_catalog); i++)
    if (core_catalog[i].scope == TM_STAT_MACHINE_AND_TRACE)
      add_context_stat(stats, &core_catalog[i]);
  for (guint i = 0; i < stats->declared->len; i++) {
    const tm_stat_info *info = g_ptr_array_index(stats->declared, i);
    if (info->scope == TM_STAT_MACHINE_AND_TRACE)
      add_context_stat(stats, info);
  }
}

/* ---- rows ---------------------------------------------------------------- */

/* The row id of an existing row, or -1. */
static int64_t find_row(const tm_stats *stats, const tm_stat_info *info,
                        tm_str_id name, int64_t idx, uint32_t machine_id,
                        uint32_t trace_id) {
  guint position = context_position(stats, info, idx);
  if (position) {
    const context_slot *slot = context_find(stats, machine_id, trace_id);
    if (slot && slot->first_row_plus_one != CONTEXT_LOOSE)
      return (int64_t)slot->first_row_plus_one - 1 + position - 1;
  }
  stat_key key = make_key(name, idx, machine_id, trace_id, info);
  gpointer found = g_hash_table_lookup(stats->index, &key);
  return found ? (int64_t)GPOINTER_TO_SIZE(found) - 1 : -1;
}

/* The row of `key` in `index`, made (value 0) if absent. */
static tm_stats_row *indexed_row_for(tm_stats *stats, const tm_stat_info *info,
                                     const stat_key *key) {
  gpointer found = g_hash_table_lookup(stats->index, key);
  if (found)
    return &stats->model->stats.data[GPOINTER_TO_SIZE(found) - 1];
  tm_stats_row row = make_row(stats->model->strings, key->name, key->idx, info);
  row.machine_id = key->machine_id;
  row.trace_id = key->trace_id;
  tm_vec_push(&stats->model->stats, row);
  g_hash_table_insert(stats->index, g_memdup2(key, sizeof *key),
                      GSIZE_TO_POINTER(stats->model->stats.len));
  return &stats->model->stats.data[stats->model->stats.len - 1];
}

static tm_stats_row *row_for(tm_stats *stats, const char *name, int64_t idx,
                             uint32_t machine_id, uint32_t trace_id) {
  const tm_stat_info *info = stats_lookup(stats, name);
  if (info && info->scope == TM_STAT_MACHINE_AND_TRACE && idx == TM_NULL_INT64) {
    const context_slot *slot = context_find(stats, machine_id, trace_id);
    guint position = context_position(stats, info, idx);
    if (!slot)
      /* Counted before its context opened: the row goes to `index`, and
       * so will the rest of this context's. */
      context_insert(stats, machine_id, trace_id, CONTEXT_LOOSE);
    else if (position && slot->first_row_plus_one != CONTEXT_LOOSE)
      return &stats->model->stats.data[slot->first_row_plus_one - 1 + position - 1];
  }
  tm_str_id name_id = string_pool_intern_cstr(stats->model->strings, name);
  stat_key key = make_key(name_id, idx, machine_id, trace_id, info);
  return indexed_row_for(stats, info, &key);
}

tm_stats *stats_new(tm_model *model) {
  tm_stats *stats = g_new0(tm_stats, 1);
  stats->model = model;
  stats->index = g_hash_table_new_full(stat_key_hash, stat_key_equal, g_free, NULL);
  stats->catalog = g_hash_table_new(g_str_hash, g_str_equal);
  stats->declared = g_ptr_array_new();
  stats->context_position = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (size_t i = 0; i < G_N_ELEMENTS(core_catalog); i++)
    g_hash_table_insert(stats->catalog, (gpointer)core_catalog[i].name,
                        (gpointer)&core_catalog[i]);
  for (size_t i = 0; i < G_N_ELEMENTS(core_catalog); i++)
    if (core_catalog[i].scope == TM_STAT_GLOBAL)
      row_for(stats, core_catalog[i].name, TM_NULL_INT64, TM_NULL_ID, TM_NULL_ID);
  return stats;
}

void stats_free(tm_stats *stats) {
  if (!stats)
    return;
  g_hash_table_destroy(stats->index);
  g_hash_table_destroy(stats->catalog);
  g_ptr_array_free(stats->declared, TRUE);
  g_hash_table_destroy(stats->context_position);
  tm_vec_free(&stats->context_rows);
  g_free(stats->contexts);
  tm_vec_free(&stats->logged);
  g_free(stats);
}

void stats_open_context(tm_stats *stats, uint32_t machine_id, uint32_t trace_id) {
  if (!stats->context_stats_fixed)
    fix_context_stats(stats);
  const context_slot *slot = context_find(stats, machine_id, trace_id);
  bool loose = slot && slot->first_row_plus_one == CONTEXT_LOOSE;
  if (!slot) {
    tm_model *model = stats->model;
    size_t first = model->stats.len;
    if (first + stats->context_rows.len + 1 >= CONTEXT_LOOSE)
      g_error("tracemerge: more than %u stats rows", CONTEXT_LOOSE - 2);
    tm_vec_reserve(&model->stats, first + stats->context_rows.len);
    for (size_t i = 0; i < stats->context_rows.len; i++) {
      tm_stats_row row = stats->context_rows.data[i];
      row.machine_id = machine_id;
      row.trace_id = trace_id;
      model->stats.data[model->stats.len++] = row;
    }
    context_insert(stats, machine_id, trace_id, (uint32_t)first + 1);
  } else if (loose) {
    for (size_t i = 0; i < G_N_ELEMENTS(core_catalog); i++)
      if (core_catalog[i].scope == TM_STAT_MACHINE_AND_TRACE)
        row_for(stats, core_catalog[i].name, TM_NULL_INT64, machine_id, trace_id);
  }
  /* Readers' stats outside the block (all of them for a loose context;
   * else those declared after the first context opened) get `index` rows,
   * in catalog order as the block's. */
  for (guint i = 0; i < stats->declared->len; i++) {
    const tm_stat_info *info = g_ptr_array_index(stats->declared, i);
    if (info->scope == TM_STAT_MACHINE_AND_TRACE &&
        (loose || !context_position(stats, info, TM_NULL_INT64)))
      row_for(stats, info->name, TM_NULL_INT64, machine_id, trace_id);
  }
}

void stats_add(tm_stats *stats, const char *name, int64_t idx,
               uint32_t machine_id, uint32_t trace_id, int64_t delta) {
  row_for(stats, name, idx, machine_id, trace_id)->value += delta;
}

void stats_set(tm_stats *stats, const char *name, int64_t idx,
               uint32_t machine_id, uint32_t trace_id, int64_t value) {
  row_for(stats, name, idx, machine_id, trace_id)->value = value;
}

static tm_arg_value import_log_value(tm_string_pool *strings,
                                     const tm_import_log_arg *arg) {
  tm_arg_value value = {.type = arg->type};
  switch (arg->type) {
  case TM_ARG_REAL:
    value.u.real_value = arg->real_value;
    break;
  case TM_ARG_STRING:
  case TM_ARG_JSON:
    value.u.str_id = string_pool_intern(strings, arg->string ? arg->string : "",
                                        arg->string ? arg->string_len : 0);
    break;
  default:
    value.u.int_value = arg->int_value;
    break;
  }
  return value;
}

bool stats_log(tm_stats *stats, const char *name, uint32_t machine_id,
               uint32_t trace_id, int64_t ts, int64_t byte_offset,
               const tm_import_log_arg *args, size_t n_args) {
  tm_model *model = stats->model;
  tm_stats_row *row = row_for(stats, name, TM_NULL_INT64, machine_id, trace_id);
  row->value++;
  size_t stat_id = (size_t)(row - model->stats.data);
  while (stats->logged.len <= stat_id)
    tm_vec_push(&stats->logged, 0);
  if (stats->logged.data[stat_id] >= TM_IMPORT_LOG_ROWS_PER_STAT)
    return false;
  stats->logged.data[stat_id]++;
  uint32_t arg_set_id = 0;
  for (size_t i = 0; i < n_args; i++) {
    if (!args[i].key)
      continue;
    tm_str_id key = string_pool_intern_cstr(model->strings, args[i].key);
    arg_set_id = model_add_arg(model, arg_set_id, key,
                               import_log_value(model->strings, &args[i]));
  }
  uint32_t id = model_add_import_log(model, (uint32_t)stat_id, trace_id);
  tm_import_log_row *log = &model->import_logs.data[id];
  log->ts = ts;
  log->byte_offset = byte_offset < 0 ? TM_NULL_INT64 : byte_offset;
  log->arg_set_id = arg_set_id;
  return true;
}

int64_t stats_get(const tm_stats *stats, const char *name, int64_t idx,
                  uint32_t machine_id, uint32_t trace_id) {
  const tm_stat_info *info = stats_lookup(stats, name);
  tm_str_id name_id = 0;
  /* Look the name up without interning it: a const pool stays const. */
  for (size_t i = 0; i < stats->model->stats.len; i++) {
    const tm_stats_row *row = &stats->model->stats.data[i];
    if (strcmp(string_pool_borrow(stats->model->strings, row->name), name) == 0) {
      name_id = row->name;
      break;
    }
  }
  if (!name_id)
    return 0;
  int64_t row = find_row(stats, info, name_id, idx, machine_id, trace_id);
  return row >= 0 ? stats->model->stats.data[row].value : 0;
}

size_t stats_index_rows(const tm_stats *stats) {
  return g_hash_table_size(stats->index);
}
