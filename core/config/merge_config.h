/*
 * A merge session's configuration: a TraceConfig (trace_config.h) read as
 * the plan of an import rather than of a recording.
 *
 * - data_sources: `config.name` names a reader plugin; the entry's filters
 *   (producer_name_filter, producer_name_regex_filter: a file's name or
 *   its machine's; machine_name_filter: its machine's) select which of
 *   that reader's files it applies to; the first entry in order that
 *   selects a file decides its buffer and its reader config. When the
 *   config lists any data source, a file no entry selects is not read.
 * - The reader's own config block is field 5000 of the DataSourceConfig
 *   (MERGE_READER_CONFIG_FIELD), written in text under the reader's block
 *   name (its descriptor's config_name) or `reader_config`, as a block of
 *   numbered fields or a string. Its bytes are sliced from the config as
 *   given and handed to the reader; nothing here decodes them.
 * - buffers: a memory budget per buffer, RING_BUFFER (UNSPECIFIED) or
 *   DISCARD; none: unbounded.
 * - duration_ms, start_offset_ms and trigger_config: the window of the
 *   merged timeline that is kept (applied by the session in pass 2).
 *
 * Invariant: a tm_merge_config that exists passed the shared TraceConfig
 * checks and these: every data source names a loaded reader, a reader
 * block belongs to the reader its data source names (which declares a
 * config_name), and appears once per data source. Refusals say where
 * (file:line:column in text) and what to change.
 *
 * Ownership: a tm_merge_config owns everything it points to; the reader
 * config bytes point into the config's own bytes.
 */
#ifndef TM_MERGE_CONFIG_H
#define TM_MERGE_CONFIG_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/trace_config.h"

/* The DataSourceConfig field of a reader's own config block. */
#define MERGE_READER_CONFIG_FIELD 5000u
/* tm_merge_source.buffer of a config without buffers. */
#define MERGE_NO_BUFFER UINT32_MAX

/* A reader the session has loaded, as the config may name it. */
typedef struct tm_merge_reader {
  const char *name;        /* e.g. "json" */
  const char *config_name; /* its block's name, or NULL if it takes none */
} tm_merge_reader;

typedef struct tm_merge_source {
  const char *reader;  /* a loaded reader's name */
  uint32_t buffer;     /* index in buffers, or MERGE_NO_BUFFER */
  bool has_reader_config;
  const uint8_t *reader_config; /* the block's bytes, as given */
  size_t reader_config_len;
  GPtrArray *producer_names;   /* char *: exact file or machine names */
  GPtrArray *producer_regexes; /* GRegex *: whole-name matches */
  GPtrArray *machine_names;    /* char *: exact machine names */
} tm_merge_source;

typedef struct tm_merge_buffer {
  uint64_t size_bytes;
  bool discard; /* DISCARD; else RING_BUFFER */
} tm_merge_buffer;

typedef enum tm_merge_trigger_mode {
  MERGE_TRIGGER_NONE = 0,
  MERGE_TRIGGER_START = 1, /* keep what follows the first trigger */
  MERGE_TRIGGER_STOP = 2,  /* keep what precedes it (+ stop_delay) */
} tm_merge_trigger_mode;

typedef struct tm_merge_trigger {
  const char *name;       /* an event name (slice or instant) */
  GRegex *producer_regex; /* NULL: any file or machine may fire it */
  int64_t stop_delay_ns;
} tm_merge_trigger;

typedef struct tm_merge_config {
  tm_trace_config *tc;
  tm_merge_source *sources;
  size_t n_sources;
  tm_merge_buffer *buffers;
  size_t n_buffers;
  int64_t start_offset_ns; /* 0: from the first event */
  int64_t duration_ns;     /* 0: to the end */
  tm_merge_trigger_mode trigger_mode;
  tm_merge_trigger *triggers;
  size_t n_triggers;
  int64_t trigger_timeout_ns;
  int64_t max_stop_delay_ns; /* the largest stop_delay of the triggers */
} tm_merge_config;

/* Loads a merge config from `len` bytes of `data` (text or binary), for a
 * session that loaded `readers`. Notes (unknown fields, fields a merge
 * session ignores) are in config->tc->notes. */
tm_merge_config *merge_config_parse(const uint8_t *data, size_t len, bool text,
                                    const char *source_name, const tm_merge_reader *readers,
                                    size_t n_readers, GError **error);
void merge_config_free(tm_merge_config *config);

/* The data source that selects a file of reader `reader` with the names
 * `file_names` (the file's own names: as listed, base name) on the
 * machine `machine_name` (may be NULL), or NULL if none does. */
const tm_merge_source *merge_config_select(const tm_merge_config *config, const char *reader,
                                           const char *const *file_names, size_t n_file_names,
                                           const char *machine_name);

/* The config as normalised text: every field it holds, fields in wire
 * order, reader blocks under their reader's block name as strings of
 * their bytes. g_free the result. */
char *merge_config_to_text(const tm_merge_config *config, const tm_merge_reader *readers,
                           size_t n_readers);

#endif /* TM_MERGE_CONFIG_H */
