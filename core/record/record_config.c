/*
 * tmr_config: a TraceConfig (core/config/trace_config.c) as the recording
 * library reads it. On top of the checks every TraceConfig passes, this
 * adds notes for the known fields this library does not act on, so a
 * config written for perfetto says plainly what will not happen here.
 */
#include <string.h>

#include "record/session_internal.h"

static void note_ignored(tm_trace_config *tc, const char *path, const char *why) {
  tm_trace_config_note(tc, path, "known to perfetto but ignored by this library (%s)", why);
}

static void add_record_notes(tm_trace_config *tc) {
  const Perfetto__Protos__TraceConfig *m = tc->message;
  if (m->has_enable_extra_guardrails)
    note_ignored(tc, "enable_extra_guardrails", "no statsd guardrails");
  if (m->has_lockdown_mode)
    note_ignored(tc, "lockdown_mode", "the library runs in its own process");
  if (m->n_producers)
    note_ignored(tc, "producers", "no shared memory between processes");
  if (m->has_deferred_start && m->deferred_start)
    note_ignored(tc, "deferred_start", "tmr_session_start starts the session");
  if (m->has_flush_timeout_ms)
    note_ignored(tc, "flush_timeout_ms", "flushes do not wait for other processes");
  if (m->has_data_source_stop_timeout_ms)
    note_ignored(tc, "data_source_stop_timeout_ms", "on_stop runs to its end");
  if (m->has_notify_traceur || m->has_bugreport_score || m->bugreport_filename)
    note_ignored(tc, "notify_traceur", "Android only");
  if (m->n_activate_triggers)
    note_ignored(tc, "activate_triggers", "fire triggers with tmr_trigger or tmr_trigger_send");
  if (m->has_compression_type)
    note_ignored(tc, "compression_type", "traces are written uncompressed");
  if (m->has_prefer_suspend_clock_for_duration)
    note_ignored(tc, "prefer_suspend_clock_for_duration", "timers use CLOCK_MONOTONIC");
  if (m->has_trace_uuid_msb || m->has_trace_uuid_lsb)
    note_ignored(tc, "trace_uuid_msb", "no trace_uuid packet is written");
  if (m->has_allow_user_build_tracing)
    note_ignored(tc, "allow_user_build_tracing", "Android only");
  if (m->has_start_offset_ms)
    tm_trace_config_note(tc, "start_offset_ms",
                         "a merge session's option (tracemerge --config); ignored when "
                         "recording");
  if (m->write_into_file && m->has_file_write_period_ms && m->file_write_period_ms < 100)
    tm_trace_config_note(tc, "file_write_period_ms",
                         "%u ms is below the 100 ms minimum; 100 ms is used",
                         m->file_write_period_ms);
  if (!m->write_into_file && (m->has_file_write_period_ms || m->has_max_file_size_bytes))
    tm_trace_config_note(tc, m->has_file_write_period_ms ? "file_write_period_ms"
                                                          : "max_file_size_bytes",
                         "applies only with write_into_file: true; the trace is written when "
                         "the session stops");
  for (size_t i = 0; i < m->n_buffers; i++) {
    if (m->buffers[i]->has_transfer_on_clone || m->buffers[i]->has_clear_before_clone) {
      g_autofree char *path = g_strdup_printf("buffers[%zu]", i);
      note_ignored(tc, path, "sessions are not cloned");
    }
  }
  for (size_t i = 0; i < m->n_data_sources; i++)
    if (m->data_sources[i]->n_machine_name_filter) {
      g_autofree char *path = g_strdup_printf("data_sources[%zu].machine_name_filter", i);
      note_ignored(tc, path, "this library records one machine");
    }
  const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = m->builtin_data_sources;
  if (b && (b->has_disable_system_info || b->has_disable_service_events ||
            b->has_snapshot_interval_ms || b->has_prefer_suspend_clock_for_snapshot ||
            b->has_disable_chunk_usage_histograms))
    note_ignored(tc, "builtin_data_sources",
                 "only disable_clock_snapshotting, disable_trace_config and "
                 "primary_trace_clock apply");
  const Perfetto__Protos__TraceConfig__TriggerConfig *t = m->trigger_config;
  if (t && t->has_use_clone_snapshot_if_available)
    note_ignored(tc, "trigger_config.use_clone_snapshot_if_available", "sessions are not cloned");
  for (size_t i = 0; t && i < t->n_triggers; i++)
    if (t->triggers[i]->has_max_per_24_h || t->triggers[i]->has_skip_probability) {
      g_autofree char *path = g_strdup_printf("trigger_config.triggers[%zu]", i);
      note_ignored(tc, path, "max_per_24_h and skip_probability: every trigger counts");
    }
}

static tmr_config *wrap(tm_trace_config *tc) {
  if (!tc)
    return NULL;
  add_record_notes(tc);
  tmr_config *config = g_new0(tmr_config, 1);
  config->tc = tc;
  return config;
}

/* Errors from core/config come in TM_CONFIG_ERROR; the public API speaks
 * TRACEMERGE_ERROR, where a config refused is TM_ERROR_CONFIG. */
static void rehome(GError **error, GError *inner) {
  if (inner)
    g_propagate_error(error, g_error_new_literal(TRACEMERGE_ERROR, TM_ERROR_CONFIG, inner->message));
  g_clear_error(&inner);
}

tmr_config *tmr_config_load(const char *path, tmr_config_format format, GError **error) {
  GError *inner = NULL;
  tm_config_format f = format == TMR_CONFIG_TEXT     ? TM_CONFIG_FORMAT_TEXT
                       : format == TMR_CONFIG_BINARY ? TM_CONFIG_FORMAT_BINARY
                                                     : TM_CONFIG_FORMAT_AUTO;
  tmr_config *config = wrap(tm_trace_config_load_file(path, f, NULL, &inner));
  rehome(error, inner);
  return config;
}

tmr_config *tmr_config_parse_text(const char *text, size_t len, const char *name,
                                  GError **error) {
  GError *inner = NULL;
  tmr_config *config = wrap(tm_trace_config_parse_text(text, len, name, NULL, &inner));
  rehome(error, inner);
  return config;
}

tmr_config *tmr_config_parse_binary(const void *data, size_t len, const char *name,
                                    GError **error) {
  GError *inner = NULL;
  tmr_config *config = wrap(tm_trace_config_parse_binary(data, len, name, &inner));
  rehome(error, inner);
  return config;
}

tmr_config *tmr_config_new_default(void) {
  static const char text[] = "buffers { size_kb: 4096 fill_policy: RING_BUFFER }\n"
                             "data_sources { config { name: \"track_event\" } }\n";
  return tmr_config_parse_text(text, sizeof text - 1, "(default config)", NULL);
}

void tmr_config_free(tmr_config *config) {
  if (!config)
    return;
  tm_trace_config_free(config->tc);
  g_free(config);
}

size_t tmr_config_note_count(const tmr_config *config) {
  return config ? config->tc->notes->len : 0;
}

const char *tmr_config_borrow_note(const tmr_config *config, size_t index) {
  if (!config || index >= config->tc->notes->len)
    return NULL;
  return config->tc->notes->pdata[index];
}

char *tmr_config_to_text(const tmr_config *config) {
  return config ? tm_trace_config_to_text(config->tc) : g_strdup("");
}
