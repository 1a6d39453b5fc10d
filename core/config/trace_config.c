/*
 * TraceConfig loading and the checks every use of it needs (see
 * trace_config.h). Invariant: a tm_trace_config that exists passed every
 * check; its data_sources[i] is message->data_sources[i] with that entry's
 * raw DataSourceConfig bytes, sliced from `bytes` without re-encoding.
 */
#include "config/trace_config.h"

#include <stdarg.h>
#include <string.h>

#include "config/protowire.h"
#include "config/protowire_check.h"

#define MAX_CONFIG_FILE_BYTES (16u << 20)

static char *where(const tm_trace_config *config, const char *path) {
  const tm_textproto_position *pos =
      config->from_text ? tm_textproto_find_position(&config->text, path) : NULL;
  if (pos)
    return g_strdup_printf("%s:%u:%u", config->source_name, pos->line, pos->column);
  return g_strdup(config->source_name);
}

bool tm_trace_config_refuse(const tm_trace_config *config, GError **error, const char *path,
                            const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *at = where(config, path);
  g_set_error(error, TM_CONFIG_ERROR, TM_CONFIG_ERROR_INVALID, "%s: %s%s%s", at,
              path && *path ? path : "", path && *path ? ": " : "", what);
  return false;
}

void tm_trace_config_note(tm_trace_config *config, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *at = where(config, path);
  g_ptr_array_add(config->notes, g_strdup_printf("%s: %s%s%s", at, path && *path ? path : "",
                                                 path && *path ? ": " : "", what));
}

static tm_trace_config *config_new(const char *source_name) {
  tm_trace_config *config = g_new0(tm_trace_config, 1);
  config->source_name = g_strdup(source_name ? source_name : "(config)");
  config->notes = g_ptr_array_new_with_free_func(g_free);
  return config;
}

void tm_trace_config_free(tm_trace_config *config) {
  if (!config)
    return;
  if (config->message)
    perfetto__protos__trace_config__free_unpacked(config->message, NULL);
  g_free(config->data_sources);
  if (config->bytes)
    g_bytes_unref(config->bytes);
  g_ptr_array_unref(config->notes);
  tm_textproto_result_clear(&config->text);
  g_free(config->source_name);
  g_free(config);
}

/* The raw DataSourceConfig of each data_sources entry, in order. */
static bool slice_data_sources(tm_trace_config *config, GError **error) {
  size_t n = config->message->n_data_sources;
  config->data_sources = g_new0(tm_config_data_source, n ? n : 1);
  config->n_data_sources = n;
  gsize len;
  const uint8_t *data = g_bytes_get_data(config->bytes, &len);
  tm_wire_reader r = tm_wire_reader_of(data, len);
  tm_wire_field f;
  size_t i = 0;
  while (tm_wire_next(&r, &f)) {
    if (f.number != 2 || f.wire_type != TM_WIRE_LEN || i >= n)
      continue;
    tm_config_data_source *ds = &config->data_sources[i];
    ds->entry = config->message->data_sources[i];
    if (ds->entry->config) {
      ds->name = ds->entry->config->name;
      ds->target_buffer = ds->entry->config->has_target_buffer ? ds->entry->config->target_buffer : 0;
    }
    tm_wire_reader inner = tm_wire_reader_of(f.data, f.len);
    tm_wire_field g;
    while (tm_wire_next(&inner, &g))
      if (g.number == 1 && g.wire_type == TM_WIRE_LEN) {
        /* A repeated occurrence of a singular message merges; the last
         * one is what a data source would see first-hand, so keep it. */
        ds->raw_config = g.data;
        ds->raw_config_len = g.len;
      }
    i++;
  }
  (void)error;
  return true;
}

static bool check_regex(const tm_trace_config *config, const char *pattern, const char *path,
                        GError **error) {
  g_autoptr(GError) regex_error = NULL;
  g_autoptr(GRegex) regex = g_regex_new(pattern, 0, 0, &regex_error);
  if (!regex)
    return tm_trace_config_refuse(config, error, path, "'%s' is not a regular expression: %s",
                                  pattern, regex_error->message);
  return true;
}

static bool validate(tm_trace_config *config, const tm_trace_config_options *options,
                     GError **error) {
  const Perfetto__Protos__TraceConfig *m = config->message;
  bool buffers_optional = options && options->buffers_optional;
  if (m->n_buffers == 0 && !buffers_optional)
    return tm_trace_config_refuse(
        config, error, "buffers",
        "a config needs at least one buffer, e.g. buffers { size_kb: 4096 fill_policy: "
        "RING_BUFFER }");
  for (size_t i = 0; i < m->n_buffers; i++) {
    g_autofree char *path = g_strdup_printf("buffers[%zu].size_kb", i);
    if (!m->buffers[i]->has_size_kb || m->buffers[i]->size_kb == 0)
      return tm_trace_config_refuse(config, error, path,
                                    "buffer %zu has 0 bytes; give it size_kb > 0", i);
  }
  for (size_t i = 0; i < m->n_data_sources; i++) {
    const Perfetto__Protos__TraceConfig__DataSource *ds = m->data_sources[i];
    g_autofree char *path = g_strdup_printf("data_sources[%zu]", i);
    if (!ds->config || !ds->config->name || !ds->config->name[0])
      return tm_trace_config_refuse(config, error, path,
                                    "a data source needs config { name: \"...\" }");
    uint32_t target = ds->config->has_target_buffer ? ds->config->target_buffer : 0;
    if (m->n_buffers == 0 && ds->config->has_target_buffer) {
      g_autofree char *tpath = g_strdup_printf("data_sources[%zu].config.target_buffer", i);
      return tm_trace_config_refuse(
          config, error, tpath,
          "target_buffer %u of data source \"%s\" is out of range: the config has no "
          "buffers (add buffers { size_kb: ... } or remove target_buffer)",
          target, ds->config->name);
    }
    if (m->n_buffers > 0 && target >= m->n_buffers) {
      g_autofree char *tpath = g_strdup_printf("data_sources[%zu].config.target_buffer", i);
      return tm_trace_config_refuse(
          config, error, tpath,
          "target_buffer %u of data source \"%s\" is out of range: the config has %zu "
          "buffer%s (0..%zu)",
          target, ds->config->name, m->n_buffers, m->n_buffers == 1 ? "" : "s",
          m->n_buffers - 1);
    }
    for (size_t k = 0; k < ds->n_producer_name_regex_filter; k++) {
      g_autofree char *rpath =
          g_strdup_printf("data_sources[%zu].producer_name_regex_filter[%zu]", i, k);
      if (!check_regex(config, ds->producer_name_regex_filter[k], rpath, error))
        return false;
    }
  }
  const Perfetto__Protos__TraceConfig__TriggerConfig *tc = m->trigger_config;
  if (tc) {
    if (!tc->has_trigger_mode ||
        tc->trigger_mode == PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__UNSPECIFIED)
      return tm_trace_config_refuse(config, error, "trigger_config.trigger_mode",
                                    "a trigger_config needs trigger_mode: START_TRACING or "
                                    "STOP_TRACING");
    if (tc->trigger_mode ==
        PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__CLONE_SNAPSHOT)
      return tm_trace_config_refuse(config, error, "trigger_config.trigger_mode",
                                    "CLONE_SNAPSHOT is not supported; use STOP_TRACING");
    if (tc->trigger_mode ==
            PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__START_TRACING &&
        m->has_duration_ms && m->duration_ms > 0)
      return tm_trace_config_refuse(
          config, error, "duration_ms",
          "duration_ms and a START_TRACING trigger cannot be used together: the trace lasts "
          "stop_delay_ms after its trigger (give each trigger a stop_delay_ms instead)");
    if (tc->n_triggers == 0)
      return tm_trace_config_refuse(config, error, "trigger_config",
                                    "a trigger_config needs at least one triggers { name: ... }");
    for (size_t i = 0; i < tc->n_triggers; i++) {
      g_autofree char *path = g_strdup_printf("trigger_config.triggers[%zu]", i);
      if (!tc->triggers[i]->name || !tc->triggers[i]->name[0])
        return tm_trace_config_refuse(config, error, path, "a trigger needs a name");
      if (tc->triggers[i]->producer_name_regex) {
        g_autofree char *rpath =
            g_strdup_printf("trigger_config.triggers[%zu].producer_name_regex", i);
        if (!check_regex(config, tc->triggers[i]->producer_name_regex, rpath, error))
          return false;
      }
    }
    if (!tc->has_trigger_timeout_ms || tc->trigger_timeout_ms == 0)
      return tm_trace_config_refuse(config, error, "trigger_config.trigger_timeout_ms",
                                    "a trigger_config needs trigger_timeout_ms > 0 (how long to "
                                    "wait for a trigger)");
  }
  return true;
}

/* Unpacks and checks `config->bytes`; notes the unknown fields in `unknown`. */
static bool finish_load(tm_trace_config *config, GPtrArray *wire_unknown,
                        const tm_trace_config_options *options, GError **error) {
  gsize len;
  const uint8_t *data = g_bytes_get_data(config->bytes, &len);
  config->message = perfetto__protos__trace_config__unpack(NULL, len, data);
  if (!config->message) {
    g_set_error(error, TM_CONFIG_ERROR, TM_CONFIG_ERROR_WIRE,
                "%s: protobuf-c could not unpack the TraceConfig", config->source_name);
    return false;
  }
  for (guint i = 0; i < wire_unknown->len; i++) {
    const tm_textproto_unknown *u = wire_unknown->pdata[i];
    guint64 number = 0;
    if (options && options->expected_unknown &&
        g_ascii_string_to_unsigned(u->name, 10, 1, G_MAXUINT32, &number, NULL) &&
        options->expected_unknown(options->resolve_user, u->path, (uint32_t)number))
      continue;
    /* A field written by number in text has a position of its own. */
    g_autofree char *field_path = g_strdup_printf("%s%s%s", u->path, *u->path ? "." : "", u->name);
    const tm_textproto_position *pos =
        config->from_text ? tm_textproto_find_position(&config->text, field_path) : NULL;
    if (pos && !strcmp(pos->path, field_path)) {
      g_ptr_array_add(config->notes,
                      g_strdup_printf("%s:%u:%u: %s%sfield %s is not in this build's schema; "
                                      "kept as given (a data source receives it in its raw "
                                      "config)",
                                      config->source_name, pos->line, pos->column, u->path,
                                      *u->path ? ": " : "", u->name));
      continue;
    }
    tm_trace_config_note(config, u->path,
                         "field %s is not in this build's schema; kept as given (a data "
                         "source receives it in its raw config)",
                         u->name);
  }
  if (!slice_data_sources(config, error) || !validate(config, options, error))
    return false;
  return true;
}

tm_trace_config *tm_trace_config_parse_text(const char *text, size_t len, const char *source_name,
                                            const tm_trace_config_options *options,
                                            GError **error) {
  tm_trace_config *config = config_new(source_name);
  config->from_text = true;
  tm_textproto_options topt = {config->source_name, options ? options->resolve : NULL,
                               options ? options->resolve_user : NULL};
  if (!tm_textproto_parse(&perfetto__protos__trace_config__descriptor, text, len, &topt,
                          &config->text, error)) {
    tm_trace_config_free(config);
    return NULL;
  }
  for (guint i = 0; i < config->text.unknown->len; i++) {
    const tm_textproto_unknown *u = config->text.unknown->pdata[i];
    g_ptr_array_add(config->notes,
                    g_strdup_printf("%s:%u:%u: %s%sunknown field '%s' is not in this build's "
                                    "schema; skipped (write it by field number to pass it "
                                    "on): %s",
                                    config->source_name, u->line, u->column, u->path,
                                    *u->path ? ": " : "", u->name, u->text));
  }
  config->bytes = g_bytes_new(config->text.bytes->data, config->text.bytes->len);
  g_autoptr(GPtrArray) wire_unknown = g_ptr_array_new_with_free_func(tm_textproto_unknown_free);
  gsize blen;
  const uint8_t *bdata = g_bytes_get_data(config->bytes, &blen);
  if (!tm_protowire_check(&perfetto__protos__trace_config__descriptor, bdata, blen,
                          config->source_name, wire_unknown, error) ||
      !finish_load(config, wire_unknown, options, error)) {
    tm_trace_config_free(config);
    return NULL;
  }
  return config;
}

static tm_trace_config *parse_binary(const uint8_t *data, size_t len, const char *source_name,
                                     const tm_trace_config_options *options, GError **error) {
  tm_trace_config *config = config_new(source_name);
  config->bytes = g_bytes_new(data, len);
  g_autoptr(GPtrArray) wire_unknown = g_ptr_array_new_with_free_func(tm_textproto_unknown_free);
  if (!tm_protowire_check(&perfetto__protos__trace_config__descriptor, data, len,
                          config->source_name, wire_unknown, error) ||
      !finish_load(config, wire_unknown, options, error)) {
    tm_trace_config_free(config);
    return NULL;
  }
  return config;
}

tm_trace_config *tm_trace_config_parse_binary(const uint8_t *data, size_t len,
                                              const char *source_name, GError **error) {
  return parse_binary(data, len, source_name, NULL, error);
}

tm_trace_config *tm_trace_config_parse(const uint8_t *data, size_t len, bool text,
                                       const char *source_name,
                                       const tm_trace_config_options *options, GError **error) {
  if (text)
    return tm_trace_config_parse_text((const char *)data, len, source_name, options, error);
  return parse_binary(data, len, source_name, options, error);
}

bool tm_trace_config_is_text_name(const char *path) {
  static const char *const suffixes[] = {".pbtx", ".pbtxt", ".txtpb", ".textproto", ".txt"};
  for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++)
    if (g_str_has_suffix(path, suffixes[i]))
      return true;
  return false;
}

bool tm_trace_config_read_file(const char *path, char **contents, size_t *len, GError **error) {
  gsize n = 0;
  g_autoptr(GError) io_error = NULL;
  *contents = NULL;
  if (!g_file_get_contents(path, contents, &n, &io_error)) {
    g_set_error(error, TM_CONFIG_ERROR, TM_CONFIG_ERROR_IO, "%s: %s", path, io_error->message);
    return false;
  }
  if (n > MAX_CONFIG_FILE_BYTES) {
    g_set_error(error, TM_CONFIG_ERROR, TM_CONFIG_ERROR_IO,
                "%s: %" G_GSIZE_FORMAT " bytes is too large for a config (at most %u)", path, n,
                MAX_CONFIG_FILE_BYTES);
    g_clear_pointer(contents, g_free);
    return false;
  }
  *len = n;
  return true;
}

tm_trace_config *tm_trace_config_load_file(const char *path, tm_config_format format,
                                           const tm_trace_config_options *options,
                                           GError **error) {
  g_autofree char *contents = NULL;
  size_t len = 0;
  if (!tm_trace_config_read_file(path, &contents, &len, error))
    return NULL;
  bool text = format == TM_CONFIG_FORMAT_TEXT ||
              (format == TM_CONFIG_FORMAT_AUTO && tm_trace_config_is_text_name(path));
  return tm_trace_config_parse((const uint8_t *)contents, len, text, path, options, error);
}

char *tm_trace_config_to_text(const tm_trace_config *config) {
  gsize len;
  const uint8_t *data = g_bytes_get_data(config->bytes, &len);
  return tm_textproto_print(&perfetto__protos__trace_config__descriptor, data, len);
}
