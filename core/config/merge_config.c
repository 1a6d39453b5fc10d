/*
 * A TraceConfig read as a merge session's plan (see merge_config.h).
 * Invariant: every pointer of a tm_merge_config points into its own
 * tm_trace_config or into memory it owns; reader config bytes are slices
 * of the config's bytes, never re-encoded.
 */
#include "config/merge_config.h"

#include <string.h>

#include "config/protowire.h"

#define NS_PER_MS INT64_C(1000000)

/* The resolver's state while a text config is parsed: one opaque field
 * descriptor per block name (each reader's config_name, and
 * reader_config), all for field MERGE_READER_CONFIG_FIELD. */
typedef struct parse_ctx {
  const tm_merge_reader *readers;
  size_t n_readers;
  ProtobufCFieldDescriptor *blocks; /* n_readers + 1 */
} parse_ctx;

static const char generic_block_name[] = "reader_config";

static const ProtobufCFieldDescriptor *resolve_block(void *user,
                                                     const ProtobufCMessageDescriptor *message,
                                                     const char *field_name) {
  parse_ctx *ctx = user;
  if (message != &perfetto__protos__data_source_config__descriptor)
    return NULL;
  for (size_t i = 0; i <= ctx->n_readers; i++)
    if (ctx->blocks[i].name && strcmp(ctx->blocks[i].name, field_name) == 0)
      return &ctx->blocks[i];
  return NULL;
}

/* "data_sources[N].config" with nothing after it. */
static bool is_data_source_config_path(const char *path) {
  if (!g_str_has_prefix(path, "data_sources["))
    return false;
  const char *p = path + strlen("data_sources[");
  while (g_ascii_isdigit(*p))
    p++;
  return strcmp(p, "].config") == 0;
}

static bool expect_block(void *user, const char *path, uint32_t number) {
  (void)user;
  return number == MERGE_READER_CONFIG_FIELD && is_data_source_config_path(path);
}

static const tm_merge_reader *find_reader(const tm_merge_reader *readers, size_t n,
                                          const char *name) {
  for (size_t i = 0; name && i < n; i++)
    if (readers[i].name && strcmp(readers[i].name, name) == 0)
      return &readers[i];
  return NULL;
}

static const tm_merge_reader *reader_of_block(const tm_merge_reader *readers, size_t n,
                                              const char *block_name) {
  for (size_t i = 0; i < n; i++)
    if (readers[i].config_name && strcmp(readers[i].config_name, block_name) == 0)
      return &readers[i];
  return NULL;
}

static gint by_name(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *reader_list(const tm_merge_reader *readers, size_t n) {
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (size_t i = 0; i < n; i++)
    if (readers[i].name)
      g_ptr_array_add(names, (gpointer)readers[i].name);
  g_ptr_array_sort(names, by_name);
  if (names->len == 0)
    return g_strdup("none");
  g_ptr_array_add(names, NULL);
  return g_strjoinv(", ", (char **)names->pdata);
}

/* A pattern that matches only a whole name, as perfetto's filters do. */
static GRegex *whole_name_regex(const char *pattern) {
  g_autofree char *anchored = g_strdup_printf("\\A(?:%s)\\z", pattern);
  /* The shared check compiled `pattern` already; wrapping it cannot fail
   * unless it closes the group itself, which the check would also pass:
   * then the pattern is taken as it is. */
  GRegex *regex = g_regex_new(anchored, 0, 0, NULL);
  return regex ? regex : g_regex_new(pattern, G_REGEX_ANCHORED, 0, NULL);
}

static void source_clear(tm_merge_source *s) {
  if (s->producer_names)
    g_ptr_array_unref(s->producer_names);
  if (s->producer_regexes)
    g_ptr_array_unref(s->producer_regexes);
  if (s->machine_names)
    g_ptr_array_unref(s->machine_names);
}

void merge_config_free(tm_merge_config *config) {
  if (!config)
    return;
  for (size_t i = 0; i < config->n_sources; i++)
    source_clear(&config->sources[i]);
  g_free(config->sources);
  g_free(config->buffers);
  for (size_t i = 0; i < config->n_triggers; i++)
    if (config->triggers[i].producer_regex)
      g_regex_unref(config->triggers[i].producer_regex);
  g_free(config->triggers);
  tm_trace_config_free(config->tc);
  g_free(config);
}

/* The reader block of one data source: its bytes, refusing a second one
 * or one that is not length-delimited. */
static bool find_block(const tm_trace_config *tc, size_t index, tm_merge_source *source,
                       GError **error) {
  const tm_config_data_source *ds = &tc->data_sources[index];
  tm_wire_reader r = tm_wire_reader_of(ds->raw_config, ds->raw_config_len);
  tm_wire_field f;
  while (tm_wire_next(&r, &f)) {
    if (f.number != MERGE_READER_CONFIG_FIELD)
      continue;
    g_autofree char *path = g_strdup_printf("data_sources[%zu].config", index);
    if (f.wire_type != TM_WIRE_LEN)
      return tm_trace_config_refuse(tc, error, path,
                                    "field %u (the reader's config block) must be "
                                    "length-delimited bytes",
                                    MERGE_READER_CONFIG_FIELD);
    if (source->has_reader_config)
      return tm_trace_config_refuse(tc, error, path,
                                    "reader '%s' is given its config block twice; give "
                                    "one",
                                    ds->name);
    source->has_reader_config = true;
    source->reader_config = f.data;
    source->reader_config_len = f.len;
  }
  return true;
}

/* In text, a block written under another reader's name is a mistake the
 * bytes cannot show (every block is the same field): find it by the
 * positions the parser recorded. */
static bool check_block_names(const tm_trace_config *tc, size_t index,
                              const tm_merge_reader *reader, const tm_merge_reader *readers,
                              size_t n_readers, GError **error) {
  if (!tc->from_text)
    return true;
  g_autofree char *prefix = g_strdup_printf("data_sources[%zu].config.", index);
  for (guint i = 0; i < tc->text.positions->len; i++) {
    const tm_textproto_position *pos = tc->text.positions->pdata[i];
    if (!g_str_has_prefix(pos->path, prefix))
      continue;
    const char *field = pos->path + strlen(prefix);
    if (strpbrk(field, ".["))
      continue;
    const tm_merge_reader *owner = reader_of_block(readers, n_readers, field);
    bool generic = strcmp(field, generic_block_name) == 0;
    if (!owner && !generic)
      continue;
    if (!reader->config_name)
      return tm_trace_config_refuse(tc, error, pos->path,
                                    "reader '%s' takes no config block (its descriptor "
                                    "declares no config_name)",
                                    reader->name);
    if (owner && owner != reader)
      return tm_trace_config_refuse(tc, error, pos->path,
                                    "%s is the config block of reader '%s', not of '%s' "
                                    "(write %s { ... } or reader_config { ... })",
                                    field, owner->name, reader->name, reader->config_name);
  }
  return true;
}

static bool read_sources(tm_merge_config *config, const tm_merge_reader *readers,
                         size_t n_readers, GError **error) {
  tm_trace_config *tc = config->tc;
  const Perfetto__Protos__TraceConfig *m = tc->message;
  config->n_sources = tc->n_data_sources;
  config->sources = g_new0(tm_merge_source, config->n_sources ? config->n_sources : 1);
  for (size_t i = 0; i < tc->n_data_sources; i++) {
    const tm_config_data_source *ds = &tc->data_sources[i];
    tm_merge_source *source = &config->sources[i];
    const tm_merge_reader *reader = find_reader(readers, n_readers, ds->name);
    if (!reader) {
      g_autofree char *path = g_strdup_printf("data_sources[%zu].config.name", i);
      g_autofree char *known = reader_list(readers, n_readers);
      return tm_trace_config_refuse(tc, error, path,
                                    "no reader named '%s' is loaded (readers: %s; "
                                    "`tracemerge plugins` lists them)",
                                    ds->name, known);
    }
    source->reader = reader->name;
    source->buffer = m->n_buffers ? ds->target_buffer : MERGE_NO_BUFFER;
    if (!check_block_names(tc, i, reader, readers, n_readers, error) ||
        !find_block(tc, i, source, error))
      return false;
    if (source->has_reader_config && !reader->config_name) {
      g_autofree char *path = g_strdup_printf("data_sources[%zu].config", i);
      return tm_trace_config_refuse(tc, error, path,
                                    "reader '%s' takes no config block (its descriptor "
                                    "declares no config_name)",
                                    reader->name);
    }
    const Perfetto__Protos__TraceConfig__DataSource *entry = ds->entry;
    source->producer_names = g_ptr_array_new_with_free_func(g_free);
    source->producer_regexes = g_ptr_array_new_with_free_func((GDestroyNotify)g_regex_unref);
    source->machine_names = g_ptr_array_new_with_free_func(g_free);
    for (size_t k = 0; k < entry->n_producer_name_filter; k++)
      g_ptr_array_add(source->producer_names, g_strdup(entry->producer_name_filter[k]));
    for (size_t k = 0; k < entry->n_producer_name_regex_filter; k++) {
      GRegex *regex = whole_name_regex(entry->producer_name_regex_filter[k]);
      if (regex)
        g_ptr_array_add(source->producer_regexes, regex);
    }
    for (size_t k = 0; k < entry->n_machine_name_filter; k++)
      g_ptr_array_add(source->machine_names, g_strdup(entry->machine_name_filter[k]));
  }
  return true;
}

static void read_buffers(tm_merge_config *config) {
  const Perfetto__Protos__TraceConfig *m = config->tc->message;
  config->n_buffers = m->n_buffers;
  config->buffers = g_new0(tm_merge_buffer, m->n_buffers ? m->n_buffers : 1);
  for (size_t i = 0; i < m->n_buffers; i++) {
    config->buffers[i].size_bytes = (uint64_t)m->buffers[i]->size_kb * 1024u;
    config->buffers[i].discard =
        m->buffers[i]->has_fill_policy &&
        m->buffers[i]->fill_policy ==
            PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD;
  }
}

static void read_window(tm_merge_config *config) {
  const Perfetto__Protos__TraceConfig *m = config->tc->message;
  config->start_offset_ns = m->has_start_offset_ms ? (int64_t)m->start_offset_ms * NS_PER_MS : 0;
  config->duration_ns = m->has_duration_ms ? (int64_t)m->duration_ms * NS_PER_MS : 0;
  const Perfetto__Protos__TraceConfig__TriggerConfig *tc = m->trigger_config;
  if (!tc)
    return;
  config->trigger_mode =
      tc->trigger_mode == PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__START_TRACING
          ? MERGE_TRIGGER_START
          : MERGE_TRIGGER_STOP;
  config->trigger_timeout_ns = (int64_t)tc->trigger_timeout_ms * NS_PER_MS;
  config->n_triggers = tc->n_triggers;
  config->triggers = g_new0(tm_merge_trigger, tc->n_triggers ? tc->n_triggers : 1);
  for (size_t i = 0; i < tc->n_triggers; i++) {
    const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *t = tc->triggers[i];
    tm_merge_trigger *trigger = &config->triggers[i];
    trigger->name = t->name;
    trigger->producer_regex = t->producer_name_regex ? whole_name_regex(t->producer_name_regex)
                                                     : NULL;
    trigger->stop_delay_ns = t->has_stop_delay_ms ? (int64_t)t->stop_delay_ms * NS_PER_MS : 0;
    config->max_stop_delay_ns = MAX(config->max_stop_delay_ns, trigger->stop_delay_ns);
  }
}

static void note_ignored(tm_trace_config *tc, const char *path, const char *why) {
  tm_trace_config_note(tc, path, "ignored by a merge session (%s)", why);
}

/* Known fields that mean something to a recording and nothing to a merge,
 * so a config written for perfetto says plainly what will not happen. */
static void add_merge_notes(tm_trace_config *tc) {
  const Perfetto__Protos__TraceConfig *m = tc->message;
  if (m->has_write_into_file || m->output_path || m->has_file_write_period_ms ||
      m->has_max_file_size_bytes)
    note_ignored(tc, m->has_write_into_file ? "write_into_file" : "output_path",
                 "the output is the command's: query, import -o, export");
  if (m->has_flush_period_ms || m->has_flush_timeout_ms || m->has_data_source_stop_timeout_ms ||
      m->has_deferred_start)
    note_ignored(tc, "flush_period_ms", "files are read, not recorded");
  if (m->incremental_state_config)
    note_ignored(tc, "incremental_state_config", "files are read, not recorded");
  if (m->builtin_data_sources)
    note_ignored(tc, "builtin_data_sources", "the inputs bring their own snapshots");
  if (m->n_producers || m->has_lockdown_mode || m->has_enable_extra_guardrails ||
      m->unique_session_name || m->has_compression_type)
    note_ignored(tc, "producers", "no tracing service is involved");
  if (m->n_activate_triggers)
    note_ignored(tc, "activate_triggers", "triggers are events of the inputs");
  const Perfetto__Protos__TraceConfig__TriggerConfig *t = m->trigger_config;
  for (size_t i = 0; t && i < t->n_triggers; i++)
    if (t->triggers[i]->has_max_per_24_h || t->triggers[i]->has_skip_probability) {
      g_autofree char *path = g_strdup_printf("trigger_config.triggers[%zu]", i);
      note_ignored(tc, path, "max_per_24_h and skip_probability: the first trigger counts");
    }
}

tm_merge_config *merge_config_parse(const uint8_t *data, size_t len, bool text,
                                    const char *source_name, const tm_merge_reader *readers,
                                    size_t n_readers, GError **error) {
  parse_ctx ctx = {readers, n_readers, g_new0(ProtobufCFieldDescriptor, n_readers + 1)};
  for (size_t i = 0; i <= n_readers; i++) {
    ProtobufCFieldDescriptor *fd = &ctx.blocks[i];
    fd->name = i < n_readers ? readers[i].config_name : generic_block_name;
    fd->id = MERGE_READER_CONFIG_FIELD;
    fd->label = PROTOBUF_C_LABEL_OPTIONAL;
    fd->type = PROTOBUF_C_TYPE_MESSAGE;
    fd->descriptor = NULL; /* opaque: numbered fields or a string */
  }
  tm_trace_config_options options = {
      .resolve = resolve_block,
      .resolve_user = &ctx,
      .expected_unknown = expect_block,
      .buffers_optional = true,
  };
  tm_merge_config *config = g_new0(tm_merge_config, 1);
  config->tc = tm_trace_config_parse(data, len, text, source_name, &options, error);
  g_free(ctx.blocks);
  if (!config->tc || !read_sources(config, readers, n_readers, error)) {
    merge_config_free(config);
    return NULL;
  }
  read_buffers(config);
  read_window(config);
  add_merge_notes(config->tc);
  return config;
}

static bool in_list(const GPtrArray *names, const char *name) {
  for (guint i = 0; name && i < names->len; i++)
    if (strcmp(names->pdata[i], name) == 0)
      return true;
  return false;
}

static bool producer_matches(const tm_merge_source *s, const char *name) {
  if (!name)
    return false;
  if (in_list(s->producer_names, name))
    return true;
  for (guint i = 0; i < s->producer_regexes->len; i++)
    if (g_regex_match(s->producer_regexes->pdata[i], name, 0, NULL))
      return true;
  return false;
}

const tm_merge_source *merge_config_select(const tm_merge_config *config, const char *reader,
                                           const char *const *file_names, size_t n_file_names,
                                           const char *machine_name) {
  for (size_t i = 0; i < config->n_sources; i++) {
    const tm_merge_source *s = &config->sources[i];
    if (strcmp(s->reader, reader) != 0)
      continue;
    bool producer_ok = s->producer_names->len == 0 && s->producer_regexes->len == 0;
    for (size_t k = 0; !producer_ok && k < n_file_names; k++)
      producer_ok = producer_matches(s, file_names[k]);
    producer_ok = producer_ok || producer_matches(s, machine_name);
    bool machine_ok = s->machine_names->len == 0 || in_list(s->machine_names, machine_name);
    if (producer_ok && machine_ok)
      return s;
  }
  return NULL;
}

typedef struct print_ctx {
  const tm_merge_reader *readers;
  size_t n_readers;
} print_ctx;

/* A DataSourceConfig's field 5000 prints under its reader's block name. */
static const char *name_block(void *user, const ProtobufCMessageDescriptor *message,
                              const uint8_t *data, size_t len, uint32_t number) {
  print_ctx *ctx = user;
  if (message != &perfetto__protos__data_source_config__descriptor ||
      number != MERGE_READER_CONFIG_FIELD)
    return NULL;
  tm_wire_reader r = tm_wire_reader_of(data, len);
  tm_wire_field f;
  const tm_merge_reader *reader = NULL;
  while (tm_wire_next(&r, &f))
    if (f.number == 1 && f.wire_type == TM_WIRE_LEN) {
      g_autofree char *name = g_strndup((const char *)f.data, f.len);
      reader = find_reader(ctx->readers, ctx->n_readers, name);
    }
  return reader && reader->config_name ? reader->config_name : generic_block_name;
}

char *merge_config_to_text(const tm_merge_config *config, const tm_merge_reader *readers,
                           size_t n_readers) {
  print_ctx ctx = {readers, n_readers};
  gsize len;
  const uint8_t *data = g_bytes_get_data(config->tc->bytes, &len);
  return tm_textproto_print_named(&perfetto__protos__trace_config__descriptor, data, len,
                                  name_block, &ctx);
}
