/*
 * One arg set as a JSON object, the text trace_processor's
 * __intrinsic_arg_set_to_json(arg_set_id) returns (the UI's "print args"):
 *
 *   args  debug.name = "x", debug.list[0] = 1, debug.list[1] = 2,
 *         debug.nested.n = 3.5, ptr = 0x64 (pointer)
 *   JSON  {"debug":{"name":"x","list":[1,2],"nested":{"n":3.500000}},"ptr":"0x64"}
 *
 * The rules (those of trace_processor's documentation and diff tests):
 * - a key is split at '.'; each part is a member of an object, and a part
 *   `name[i]` (also `name[i][j]`) is element i of the array `name`; empty
 *   parts are skipped;
 * - members and elements keep the order in which the args come (the
 *   caller adds them in args row order), never sorted; array elements a
 *   set skips are null;
 * - int and bool as JSON numbers and true/false, uint as the unsigned
 *   number of its 64 bits, real as printf's "%f" (NaN and infinities as the
 *   strings "NaN", "Infinity", "-Infinity"), pointer as the string
 *   "0x<lowercase hex>", string and json-typed values as JSON strings
 *   (control characters escaped, other bytes as they are);
 * - a key naming a member inside something that already holds a value
 *   (`a` = 1, then `a.b`), or an element of something that is not an
 *   array, is an error; a later arg with the same key replaces the value.
 *
 * Bounds, so that a hostile arg set cannot exhaust memory or the stack: an
 * array index above ARG_SET_JSON_MAX_INDEX, or a key of more than
 * ARG_SET_JSON_MAX_DEPTH parts, is an error (trace_processor pads any
 * index and nests any depth).
 *
 * No SQLite here: core/sql/sql_functions.c feeds it from the model or from
 * a saved database's `args` table.
 */
#ifndef TM_ARG_SET_JSON_H
#define TM_ARG_SET_JSON_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARG_SET_JSON_MAX_INDEX 65535
#define ARG_SET_JSON_MAX_DEPTH 256

typedef enum arg_json_type {
  ARG_JSON_NULL,
  ARG_JSON_INT,
  ARG_JSON_UINT,    /* u.int_value holds the bit pattern */
  ARG_JSON_REAL,
  ARG_JSON_BOOL,    /* u.int_value != 0 */
  ARG_JSON_POINTER, /* u.int_value holds the address */
  ARG_JSON_STRING,  /* u.string.text, u.string.len bytes (json too) */
} arg_json_type;

typedef struct arg_json_value {
  arg_json_type type;
  union {
    int64_t int_value;
    double real_value;
    struct {
      const char *text; /* borrowed for the call; copied */
      size_t len;
    } string;
  } u;
} arg_json_value;

typedef struct arg_set_json arg_set_json;

arg_set_json *arg_set_json_new(void);
void arg_set_json_free(arg_set_json *json);

/* Adds one arg under `key` (NUL-terminated). False, with *error set to a
 * message that names the key (g_free it), if the key conflicts with an
 * earlier one or breaks a bound; the set may then hold empty members of
 * the key's path, so the caller drops it. */
bool arg_set_json_add(arg_set_json *json, const char *key,
                      const arg_json_value *value, char **error);

/* The JSON text of every arg added so far ("{}" for none); g_free it. */
char *arg_set_json_to_string(const arg_set_json *json, size_t *len);

#endif /* TM_ARG_SET_JSON_H */
