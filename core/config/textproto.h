/*
 * Protobuf text format, driven by protobuf-c descriptors.
 *
 * protobuf-c has no text format; this module is one, for configs
 * (TraceConfig of the recording library, merge configs, fuzzers): text is
 * parsed straight into the binary wire encoding of the message the root
 * descriptor names, and binary is walked (checked, printed) with the same
 * descriptors. Nothing is unpacked here: callers that want C structs hand
 * the bytes to protobuf_c_message_unpack() after the check.
 *
 * Grammar: the protobuf text format (`name: value`, `name { ... }` or
 * `name < ... >`, `[v1, v2]` lists for repeated fields, `#` comments,
 * adjacent string literals concatenated, C escapes, enum values by name,
 * `,` or `;` between fields). Two extensions: a field may be named by its
 * number (`113 { ... }`), which reaches fields the schema does not name
 * (an integer is encoded as a varint, a string as bytes, a block as a
 * nested message of numbered fields), and a resolver callback may give
 * names to fields of a message the schema does not list (a plugin's own
 * config block).
 *
 * Errors name the source, line and column (1-based, columns in bytes):
 * "merge.pbtx:3:17: unknown value 'RING' for fill_policy (...)". Unknown
 * field names are not errors: the field and its value are skipped and
 * reported in `unknown` (text) — a binary config keeps them verbatim.
 *
 * Invariants: the parser never reads outside [text, text + len) (the text
 * need not be NUL-terminated), recursion is bounded (TM_TEXTPROTO_MAX_DEPTH),
 * output grows only with the input, and any input either parses or fails
 * with one error; nothing here aborts.
 */
#ifndef TM_TEXTPROTO_H
#define TM_TEXTPROTO_H

#include <glib.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TM_TEXTPROTO_MAX_DEPTH 64

#define TM_CONFIG_ERROR (tm_config_error_quark())
GQuark tm_config_error_quark(void);

typedef enum tm_config_error_code {
  TM_CONFIG_ERROR_SYNTAX = 1,  /* text that is not the text format */
  TM_CONFIG_ERROR_VALUE = 2,   /* a value that does not fit its field */
  TM_CONFIG_ERROR_WIRE = 3,    /* binary that is not a valid encoding */
  TM_CONFIG_ERROR_INVALID = 4, /* well-formed, but refused (validation) */
  TM_CONFIG_ERROR_IO = 5,
} tm_config_error_code;

/* Where a field was written: `path` is the field's path from the root,
 * with indexes of repeated fields ("data_sources[1].config.name"). */
typedef struct tm_textproto_position {
  char *path;
  uint32_t line, column;
} tm_textproto_position;

/* A field that the schema does not know. Text: `name` as written, `line`
 * and `column` set, `text` the field's source text. Binary: `name` is
 * the field number, `line` 0, `text` NULL. `path` is the enclosing
 * message's path ("" at the root). */
typedef struct tm_textproto_unknown {
  char *path;
  char *name;
  uint32_t line, column;
  char *text;
} tm_textproto_unknown;

/* Gives a field that `message` does not declare a descriptor to parse it
 * with, or returns NULL for "unknown". The descriptor returned must live
 * as long as the parse. A descriptor of type MESSAGE whose `descriptor`
 * is NULL is an opaque block: written either as a block of numbered
 * fields or as a string, which is taken as the block's bytes. */
typedef const ProtobufCFieldDescriptor *(*tm_textproto_resolve_fn)(
    void *user, const ProtobufCMessageDescriptor *message, const char *field_name);

typedef struct tm_textproto_options {
  const char *source_name;         /* for errors, e.g. the file name */
  tm_textproto_resolve_fn resolve; /* may be NULL */
  void *resolve_user;
} tm_textproto_options;

typedef struct tm_textproto_result {
  GByteArray *bytes;     /* the binary encoding */
  GPtrArray *positions;  /* tm_textproto_position *, in source order */
  GPtrArray *unknown;    /* tm_textproto_unknown * */
} tm_textproto_result;

/* Parses `len` bytes of text as the message `root`. On success fills `out`
 * (release with tm_textproto_result_clear); on failure sets `error` and
 * leaves `out` cleared. */
bool tm_textproto_parse(const ProtobufCMessageDescriptor *root, const char *text,
                        size_t len, const tm_textproto_options *options,
                        tm_textproto_result *out, GError **error);
void tm_textproto_result_clear(tm_textproto_result *result);

/* The position recorded for `path`, or for the nearest enclosing path that
 * has one; NULL if none (binary input, or a root-level absent field). */
const tm_textproto_position *tm_textproto_find_position(const tm_textproto_result *result,
                                                        const char *path);

/* Prints `data` (checked with tm_protowire_check first) as text format,
 * two spaces per nesting level, fields in wire order; fields the schema
 * does not know print by number, so the output parses back to the same
 * known fields. Returns a new string (g_free). */
char *tm_textproto_print(const ProtobufCMessageDescriptor *root, const uint8_t *data,
                         size_t len);

/* A name for the length-delimited field `number` that the schema of
 * `message` (whose encoding is `data`) does not declare, or NULL to print
 * it by number. The name must live until the printing returns. */
typedef const char *(*tm_textproto_name_fn)(void *user, const ProtobufCMessageDescriptor *message,
                                            const uint8_t *data, size_t len, uint32_t number);

/* tm_textproto_print, with unknown length-delimited fields that `name`
 * names printed under that name (still as the string of their bytes, for
 * a parser whose resolver knows the name as an opaque block). */
char *tm_textproto_print_named(const ProtobufCMessageDescriptor *root, const uint8_t *data,
                               size_t len, tm_textproto_name_fn name, void *user);

void tm_textproto_unknown_free(gpointer unknown);

#endif /* TM_TEXTPROTO_H */
