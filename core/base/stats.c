/*
 * Stats: the catalog of named counters and their rows in model->stats.
 *
 * Invariant: `index` maps (name, idx, machine, trace) to the row id of
 * model->stats, so every row is unique per key; global stats are keyed
 * with machine and trace TM_NULL_ID whatever the caller passed.
 */
#include "base/stats.h"

#include <glib.h>
#include <string.h>

#define MT TM_STAT_MACHINE_AND_TRACE
#define GL TM_STAT_GLOBAL

static const tm_stat_info catalog[] = {
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
    {"json_tokenizer_failure", "error", "trace", MT,
     "JSON event malformed (no ph, bad ts/dur/tts/tdur); dropped."},
    {"json_parser_failure", "error", "trace", MT,
     "JSON event semantically invalid (X without dur, async without id, "
     "counter without args); dropped."},
    {"json_display_time_unit", "info", "trace", MT,
     "displayTimeUnit present in a JSON trace (ignored)."},
    {"json_system_trace_events_skipped", "info", "trace", MT,
     "A JSON trace's systemTraceEvents in a form not read (Fuchsia's object "
     "form) was skipped; its traceEvents were imported."},
    {"json_system_trace_events_invalid", "error", "trace", MT,
     "A JSON trace's systemTraceEvents was neither a string nor Fuchsia's "
     "object form; skipped, its traceEvents were imported."},
    {"json_v8_profile_unknown_profile", "error", "trace", MT,
     "A JSON ProfileChunk (ph P) named a pid and id that no Profile event "
     "opened; its nodes and samples were dropped."},
    {"json_v8_profile_invalid_chunk", "error", "trace", MT,
     "A JSON ProfileChunk's samples and timeDeltas differed in length or "
     "held a non-integer; its samples were dropped, its nodes kept."},
    {"json_v8_profile_unknown_node", "error", "trace", MT,
     "A V8 CPU profile sample named a node, or had a parent on its chain, "
     "that its profile did not list (or the chain looped); dropped."},
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
    {"gecko_invalid_stack", "error", "trace", MT,
     "A Gecko sample's stack index, or a prefix on its chain, named no "
     "stack; the sample was kept without a callsite."},
    {"gecko_invalid_frame", "error", "trace", MT,
     "A Gecko frame's function or label named no string; the frame has an "
     "empty name."},
    {"gecko_sample_without_time", "error", "trace", MT,
     "A Gecko sample had no usable time; dropped."},
    {"gecko_invalid_marker", "error", "trace", MT,
     "A Gecko marker had no name, an unknown phase or lacked the times its "
     "phase needs; dropped."},
    {"gecko_invalid_marker_category", "error", "trace", MT,
     "A Gecko marker's category index named no meta.categories entry; the "
     "slice has no category."},
    {"instruments_unknown_ref", "error", "trace", MT,
     "An Instruments element referenced an id never defined before; it was "
     "treated as absent."},
    {"instruments_row_missing_thread", "data_loss", "trace", MT,
     "An Instruments sample row had no (resolvable) thread; skipped."},
    {"instruments_row_missing_process", "data_loss", "trace", MT,
     "An Instruments sample row's thread had no process; skipped."},
    {"instruments_row_missing_backtrace", "data_loss", "trace", MT,
     "An Instruments sample row's backtrace reference resolved to nothing; "
     "skipped."},
    {"instruments_row_missing_time", "data_loss", "trace", MT,
     "An Instruments sample row had no sample time; skipped."},
    {"instruments_invalid_clock_sync", "error", "trace", MT,
     "A dev.perfetto.clock_sync signpost without exactly one uint64 or a "
     "time, or whose BOOTTIME value went backwards; skipped."},
    {"instruments_row_missing_frame", "info", "trace", MT,
     "An Instruments sample's backtrace had no frames; kept without a "
     "callsite."},
    {"systrace_parse_failure", "error", "analysis", MT,
     "A systrace/ftrace text line did not match the line grammar or its "
     "payload was malformed; the line was skipped."},
    {"systrace_line_too_long", "error", "trace", MT,
     "A systrace line longer than the reader's limit was skipped."},
    {"sched_cpu_out_of_range", "error", "trace", MT,
     "A scheduling event named a cpu above 4095; it was dropped."},
    {"flow_duplicate_id", "error", "trace", MT,
     "A flow started with an id already in flight."},
    {"flow_no_enclosing_slice", "error", "trace", MT,
     "A flow event found no slice to bind to."},
    {"flow_invalid_id", "error", "trace", MT, "A flow event had no usable id."},
    {"flow_without_direction", "error", "trace", MT,
     "A flow binding had neither flow_in nor flow_out."},
    {"flow_step_without_start", "info", "trace", MT,
     "A flow step arrived for a flow never started."},
    {"flow_end_without_start", "info", "trace", MT,
     "A flow end arrived for a flow never started."},
    {"packet_skipped_seq_needs_incremental_state_invalid", "notice", "analysis", MT,
     "A proto packet needed incremental state its sequence had lost; skipped."},
    {"interned_data_skipped_incremental_state_invalid", "notice", "analysis", MT,
     "Interned data arrived while its sequence's state was invalid; skipped."},
    {"track_descriptor_missing_uuid", "error", "analysis", MT,
     "A track descriptor without a uuid was dropped."},
    {"track_descriptor_conflicting_reservation", "error", "analysis", MT,
     "A track descriptor conflicted with an earlier one for its uuid; dropped."},
    {"track_descriptor_thread_missing_pid_tid", "error", "analysis", MT,
     "A thread track descriptor lacked pid or tid; dropped."},
    {"track_descriptor_process_missing_pid", "error", "analysis", MT,
     "A process track descriptor lacked a pid; dropped."},
    {"track_event_invalid_timestamp", "error", "analysis", MT,
     "A TrackEvent with a negative raw timestamp was dropped."},
    {"track_event_missing_timestamp", "error", "analysis", MT,
     "A TrackEvent packet without a timestamp was dropped."},
    {"track_event_counter_missing_value", "error", "analysis", MT,
     "A counter TrackEvent without a value was dropped."},
    {"track_event_parser_errors", "error", "analysis", MT,
     "A TrackEvent could not be parsed; dropped."},
    {"interned_data_missing_sequence_id", "error", "analysis", MT,
     "Interned data on a packet without a sequence id was ignored."},
    {"trace_packet_defaults_missing_sequence_id", "error", "analysis", MT,
     "Packet defaults on a packet without a sequence id were ignored."},
    {"incremental_state_cleared_missing_sequence_id", "error", "analysis", MT,
     "An incremental-state clear on a packet without a sequence id was ignored."},
    {"track_event_extra_counter_values_without_track", "error", "analysis", MT,
     "Extra counter values without a counter track; dropped."},
    {"track_event_extra_counter_too_many_values", "error", "analysis", MT,
     "More extra counter values than extra counter tracks; the rest dropped."},
    {"track_descriptor_invalid_child_ordering", "error", "analysis", MT,
     "A track descriptor's child ordering was not understood; ignored."},
    {"proto_track_event_unsupported_type", "info", "analysis", MT,
     "TrackEvents not imported yet: state events, legacy phases other than B/E/X/I/i/b/e/n."},
    {"proto_debug_annotation_too_deep", "error", "analysis", MT,
     "A debug annotation nested too deep; the deeper levels were dropped."},
    {"stackprofile_invalid_callstack_id", "error", "analysis", MT,
     "A sample or event named an interned callstack its sequence lacks."},
    {"stackprofile_invalid_frame_id", "error", "analysis", MT,
     "A callstack named an interned frame its sequence lacks."},
    {"stackprofile_invalid_mapping_id", "error", "analysis", MT,
     "A frame named an interned mapping its sequence lacks."},
    {"stackprofile_invalid_string_id", "error", "analysis", MT,
     "A frame or mapping named an interned string its sequence lacks."},
    {"proto_packet_wrong_wire_type", "error", "trace", MT,
     "A protobuf field the proto reader knows came with another wire type "
     "than its schema gives it; the packet was dropped (import log: the "
     "message, field and both wire types)."},
    {"perf_samples_skipped", "info", "trace", MT,
     "Perf sample records that carried a skip reason instead of a sample."},
    {"perf_samples_skipped_dataloss", "data_loss", "trace", MT,
     "Perf records the kernel reported lost."},
    {"perf_sample_missing_timestamp", "error", "analysis", MT,
     "A perf sample packet without a timestamp was dropped."},
    {"proto_perf_samples_unsupported_by_host", "error", "analysis", MT,
     "Perf samples dropped: the host has no profiling services."},
    {"proto_track_event_callstack_unsupported_by_host", "error", "analysis", MT,
     "TrackEvent callstacks dropped: the host has no profiling services."},
    {"container_member_truncated", "data_loss", "trace", MT,
     "An archive member could not be read to its end; the bytes before "
     "the damage were kept."},
    {"file_parse_error", "error", "trace", MT,
     "A trace file was damaged; events read before the damage were kept."},
};

#undef MT
#undef GL

typedef struct stat_key {
  tm_str_id name;
  uint32_t machine_id;
  uint32_t trace_id;
  int64_t idx;
} stat_key;

struct tm_stats {
  tm_model *model;
  GHashTable *index; /* stat_key* -> row id + 1 */
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

const tm_stat_info *stats_lookup(const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(catalog); i++)
    if (strcmp(catalog[i].name, name) == 0)
      return &catalog[i];
  return NULL;
}

static stat_key make_key(tm_stats *stats, const char *name, int64_t idx,
                         uint32_t machine_id, uint32_t trace_id,
                         const tm_stat_info *info) {
  stat_key key;
  memset(&key, 0, sizeof key); /* padding takes part in hashing */
  key.name = string_pool_intern_cstr(stats->model->strings, name);
  key.idx = idx;
  bool global = info && info->scope == TM_STAT_GLOBAL;
  key.machine_id = global ? TM_NULL_ID : machine_id;
  key.trace_id = global ? TM_NULL_ID : trace_id;
  return key;
}

static tm_stats_row *row_for(tm_stats *stats, const char *name, int64_t idx,
                             uint32_t machine_id, uint32_t trace_id) {
  const tm_stat_info *info = stats_lookup(name);
  stat_key key = make_key(stats, name, idx, machine_id, trace_id, info);
  gpointer found = g_hash_table_lookup(stats->index, &key);
  if (found)
    return &stats->model->stats.data[GPOINTER_TO_SIZE(found) - 1];
  tm_string_pool *strings = stats->model->strings;
  tm_stats_row row = {
      .name = key.name,
      .idx = idx,
      .severity = string_pool_intern_cstr(strings, info ? info->severity : "error"),
      .source = string_pool_intern_cstr(strings, info ? info->source : "trace"),
      .description = string_pool_intern_cstr(strings, info ? info->description : ""),
      .machine_id = key.machine_id,
      .trace_id = key.trace_id,
  };
  tm_vec_push(&stats->model->stats, row);
  g_hash_table_insert(stats->index, g_memdup2(&key, sizeof key),
                      GSIZE_TO_POINTER(stats->model->stats.len));
  return &stats->model->stats.data[stats->model->stats.len - 1];
}

tm_stats *stats_new(tm_model *model) {
  tm_stats *stats = g_new0(tm_stats, 1);
  stats->model = model;
  stats->index = g_hash_table_new_full(stat_key_hash, stat_key_equal, g_free, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(catalog); i++)
    if (catalog[i].scope == TM_STAT_GLOBAL)
      row_for(stats, catalog[i].name, TM_NULL_INT64, TM_NULL_ID, TM_NULL_ID);
  return stats;
}

void stats_free(tm_stats *stats) {
  if (!stats)
    return;
  g_hash_table_destroy(stats->index);
  tm_vec_free(&stats->logged);
  g_free(stats);
}

void stats_open_context(tm_stats *stats, uint32_t machine_id, uint32_t trace_id) {
  for (size_t i = 0; i < G_N_ELEMENTS(catalog); i++)
    if (catalog[i].scope == TM_STAT_MACHINE_AND_TRACE)
      row_for(stats, catalog[i].name, TM_NULL_INT64, machine_id, trace_id);
}

void stats_add(tm_stats *stats, const char *name, int64_t idx,
               uint32_t machine_id, uint32_t trace_id, int64_t delta) {
  row_for(stats, name, idx, machine_id, trace_id)->value += delta;
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
  const tm_stat_info *info = stats_lookup(name);
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
  stat_key key;
  memset(&key, 0, sizeof key);
  key.name = name_id;
  key.idx = idx;
  bool global = info && info->scope == TM_STAT_GLOBAL;
  key.machine_id = global ? TM_NULL_ID : machine_id;
  key.trace_id = global ? TM_NULL_ID : trace_id;
  gpointer found = g_hash_table_lookup(stats->index, &key);
  return found ? stats->model->stats.data[GPOINTER_TO_SIZE(found) - 1].value : 0;
}
