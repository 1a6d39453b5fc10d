/*
 * A TraceConfig (perfetto.protos.TraceConfig, proto/trace_config.proto),
 * read from text or binary and checked: the config shared by the recording
 * library (core/record) and by merge sessions configured the same way.
 *
 * Loading a config does, in order: text → binary (textproto.c) or the
 * binary as given; a descriptor-driven check of the binary (protowire.c);
 * protobuf-c unpack; the checks every use of a TraceConfig needs (below).
 * What a particular user does with it (start data sources, size buffers)
 * and the further checks that belong to that use are the user's.
 *
 * Checks: at least one buffer (unless the options make buffers
 * optional); every buffer's size_kb > 0; every data
 * source has a config with a name; every target_buffer names a buffer;
 * producer name and trigger regexes compile; duration_ms and a
 * START_TRACING trigger are not used together; a trigger_config has a
 * mode (START_TRACING or STOP_TRACING), named triggers and a positive
 * trigger_timeout_ms; every enum value is one the schema names. A refused
 * config is one error that says where (file:line:column for text, the
 * field path in both forms) and what to change.
 *
 * Unknown fields are no error. In binary they are kept: the bytes stay as
 * given, so a data source's raw config reaches it with fields this build
 * does not know. In text a field name the schema does not know cannot be
 * encoded: it is skipped (write it by number to pass it on). Both kinds
 * are listed in `notes`.
 *
 * Ownership: a tm_trace_config owns its bytes, its unpacked message and
 * its notes; every pointer it hands out lives as long as it does.
 */
#ifndef TM_TRACE_CONFIG_H
#define TM_TRACE_CONFIG_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/textproto.h"
#include "trace_config.pb-c.h"

typedef enum tm_config_format {
  TM_CONFIG_FORMAT_AUTO = 0, /* text if the name ends in .pbtx, .pbtxt, .txtpb, .textproto or .txt */
  TM_CONFIG_FORMAT_TEXT = 1,
  TM_CONFIG_FORMAT_BINARY = 2,
} tm_config_format;

/* One entry of data_sources, with its config as raw bytes. */
typedef struct tm_config_data_source {
  const char *name;
  uint32_t target_buffer;
  const uint8_t *raw_config; /* the DataSourceConfig's bytes, as encoded in the config */
  size_t raw_config_len;
  const Perfetto__Protos__TraceConfig__DataSource *entry; /* unpacked */
} tm_config_data_source;

typedef struct tm_trace_config {
  char *source_name;
  bool from_text;
  GBytes *bytes;                          /* the binary encoding */
  Perfetto__Protos__TraceConfig *message; /* unpacked from `bytes` */
  tm_config_data_source *data_sources;    /* message->n_data_sources entries */
  size_t n_data_sources;
  GPtrArray *notes;                       /* char *: unknown fields, each a line */
  tm_textproto_result text;               /* positions of a text config */
} tm_trace_config;

/* What a particular use of TraceConfigs adds to loading one. */
typedef struct tm_trace_config_options {
  /* Hook for config blocks of data sources the schema does not name (text
   * only): see tm_textproto_resolve_fn. May be NULL. */
  tm_textproto_resolve_fn resolve;
  void *resolve_user;
  /* Unknown fields this returns true for are expected by the user of the
   * config and get no note (a merge session's reader config blocks).
   * `path` is the enclosing message's path ("data_sources[0].config"),
   * `number` the field's; `user` is resolve_user. May be NULL. */
  bool (*expected_unknown)(void *user, const char *path, uint32_t number);
  /* A config without buffers is valid (a merge session is then
   * unbounded); its data sources may then name no target_buffer. */
  bool buffers_optional;
} tm_trace_config_options;

tm_trace_config *tm_trace_config_parse_text(const char *text, size_t len,
                                            const char *source_name,
                                            const tm_trace_config_options *options,
                                            GError **error);
tm_trace_config *tm_trace_config_parse_binary(const uint8_t *data, size_t len,
                                              const char *source_name, GError **error);
/* Either form, with `options` (may be NULL) applying to both. */
tm_trace_config *tm_trace_config_parse(const uint8_t *data, size_t len, bool text,
                                       const char *source_name,
                                       const tm_trace_config_options *options, GError **error);
/* True if `path` names a text config (by its suffix, for TM_CONFIG_FORMAT_AUTO). */
bool tm_trace_config_is_text_name(const char *path);
/* Reads a config file of at most 16 MiB into `*contents` (g_free). */
bool tm_trace_config_read_file(const char *path, char **contents, size_t *len, GError **error);
/* Reads a file of at most 16 MiB. */
tm_trace_config *tm_trace_config_load_file(const char *path, tm_config_format format,
                                           const tm_trace_config_options *options,
                                           GError **error);
void tm_trace_config_free(tm_trace_config *config);

/* Sets `error` (TM_CONFIG_ERROR_INVALID) to "<where>: <path>: <message>",
 * where <where> is file:line:column of `path` (or of its nearest enclosing
 * field) in a text config, the file name otherwise. Returns false. */
bool tm_trace_config_refuse(const tm_trace_config *config, GError **error, const char *path,
                            const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* Adds a note in the same "<where>: <path>: <message>" form. */
void tm_trace_config_note(tm_trace_config *config, const char *path, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

/* Normalised text of the config (every field it holds, unknown ones by
 * number). g_free the result. */
char *tm_trace_config_to_text(const tm_trace_config *config);

#endif /* TM_TRACE_CONFIG_H */
