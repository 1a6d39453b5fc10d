/*
 * trace_processor's scalar and aggregate functions (see sql_functions.h).
 *
 * Built twice: into the library (with the model index) and, with
 * TM_SQLITE_EXTENSION defined, into the loadable SQLite extension for
 * saved databases, where every SQLite call goes through the extension
 * API table and the model is not there.
 */
#ifdef TM_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif

#include "sql/sql_functions.h"
#include "sql/arg_set_json.h"

#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <limits.h>
#include <libiberty/demangle.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef TM_SQLITE_EXTENSION
#include "sql/model_index.h"
#include "sql/slice_functions.h"
#include "sql/span_join.h"
#include "sql/sql_output.h"
#else
#define TM_FNV_OFFSET UINT64_C(0xcbf29ce484222325)
static uint64_t tm_fnv_update(uint64_t hash, const void *bytes, size_t len) {
  const unsigned char *p = bytes;
  for (size_t i = 0; i < len; i++) {
    hash ^= p[i];
    hash *= UINT64_C(0x100000001b3);
  }
  return hash;
}
#endif

/* Per-connection state of the functions. Those that query the connection
 * prepare their statement per call and finalize it before returning: a
 * statement kept across calls would stop sqlite3_close() (it refuses a
 * connection with unfinalized statements, and function destructors only
 * run after it succeeds). */
typedef struct function_state {
  tm_model_index *index; /* NULL: read the tables */
  bool owns_index;       /* freed with the connection */
  sqlite3 *db;
  sqlite3_stmt *extract_arg;
  sqlite3_stmt *arg_set;
  sqlite3_stmt *bounds;
  sqlite3_stmt *clock_at;
} function_state;

static void function_state_free(void *p) {
#ifndef TM_SQLITE_EXTENSION
  function_state *state = p;
  if (state->owns_index)
    model_index_free(state->index);
#endif
  sqlite3_free(p);
}

static void error_printf(sqlite3_context *ctx, const char *format, ...)
    G_GNUC_PRINTF(2, 3);
static void error_printf(sqlite3_context *ctx, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  char *message = sqlite3_vmprintf(format, ap);
  va_end(ap);
  sqlite3_result_error(ctx, message ? message : "out of memory", -1);
  sqlite3_free(message);
}

/* Prepares `*stmt` for this call (the caller finalizes it with
 * done_stmt); false (with the error set on ctx) on failure. */
static bool cached_stmt(sqlite3_context *ctx, function_state *state,
                        sqlite3_stmt **stmt, const char *sql) {
  if (sqlite3_prepare_v2(state->db, sql, -1, stmt, NULL) != SQLITE_OK) {
    error_printf(ctx, "%s", sqlite3_errmsg(state->db));
    sqlite3_finalize(*stmt);
    *stmt = NULL;
    return false;
  }
  return true;
}

static void done_stmt(sqlite3_stmt **stmt) {
  sqlite3_finalize(*stmt);
  *stmt = NULL;
}

/* ---- EXTRACT_ARG --------------------------------------------------------- */

#ifndef TM_SQLITE_EXTENSION
static void extract_arg_from_model(sqlite3_context *ctx, tm_model_index *index,
                                   int64_t set, const char *key) {
  const tm_model *model = model_index_model(index);
  if (set <= 0 || set > UINT32_MAX)
    return;
  size_t n;
  const uint32_t *rows = model_index_arg_set(index, (uint32_t)set, &n);
  for (size_t i = 0; i < n; i++) {
    const tm_arg_row *a = &model->args.data[rows[i]];
    const tm_arg_key *ak = model_arg_key(model, a);
    const char *k = string_pool_borrow(model->strings, ak->key);
    if (!k || strcmp(k, key) != 0)
      continue;
    switch (ak->value_type) {
    case TM_ARG_INT:
    case TM_ARG_UINT:
    case TM_ARG_POINTER:
    case TM_ARG_BOOL:
      sqlite3_result_int64(ctx, model_arg_int(model, a));
      return;
    case TM_ARG_REAL:
      sqlite3_result_double(ctx, model_arg_real(model, a));
      return;
    default: {
      size_t len;
      const char *s = model_arg_string(model, a, &len);
      if (s)
        sqlite3_result_text(ctx, s, (int)len, SQLITE_STATIC);
      return;
    }
    }
  }
}
#endif

static void fn_extract_arg(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv) {
  (void)argc;
  function_state *state = sqlite3_user_data(ctx);
  int set_type = sqlite3_value_type(argv[0]);
  if (set_type == SQLITE_NULL)
    return;
  if (set_type != SQLITE_INTEGER) {
    sqlite3_result_error(ctx, "EXTRACT_ARG: 1st argument should be arg set id",
                         -1);
    return;
  }
  if (sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
    sqlite3_result_error(ctx, "EXTRACT_ARG: 2nd argument should be arg name",
                         -1);
    return;
  }
  int64_t set = sqlite3_value_int64(argv[0]);
  const char *key = (const char *)sqlite3_value_text(argv[1]);
#ifndef TM_SQLITE_EXTENSION
  if (state->index) {
    extract_arg_from_model(ctx, state->index, set, key);
    return;
  }
#endif
  if (!cached_stmt(ctx, state, &state->extract_arg,
                   "SELECT value_type, int_value, string_value, real_value "
                   "FROM args WHERE arg_set_id = ?1 AND key = ?2"))
    return;
  sqlite3_stmt *stmt = state->extract_arg;
  sqlite3_bind_int64(stmt, 1, set);
  sqlite3_bind_text(stmt, 2, key, -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) {
    const char *type = (const char *)sqlite3_column_text(stmt, 0);
    int column = 1;
    if (type && (strcmp(type, "string") == 0 || strcmp(type, "json") == 0))
      column = 2;
    else if (type && strcmp(type, "real") == 0)
      column = 3;
    sqlite3_result_value(ctx, sqlite3_column_value(stmt, column));
  } else if (rc != SQLITE_DONE) {
    error_printf(ctx, "EXTRACT_ARG: %s", sqlite3_errmsg(state->db));
  }
  done_stmt(&state->extract_arg);
}

/* ---- __INTRINSIC_ARG_SET_TO_JSON ----------------------------------------- */

static arg_json_type arg_json_type_of(const char *value_type) {
  static const struct {
    const char *name;
    arg_json_type type;
  } types[] = {{"int", ARG_JSON_INT},         {"uint", ARG_JSON_UINT},
               {"real", ARG_JSON_REAL},       {"bool", ARG_JSON_BOOL},
               {"pointer", ARG_JSON_POINTER}, {"string", ARG_JSON_STRING},
               {"json", ARG_JSON_STRING}};
  for (size_t i = 0; value_type && i < G_N_ELEMENTS(types); i++)
    if (strcmp(value_type, types[i].name) == 0)
      return types[i].type;
  return ARG_JSON_NULL;
}

/* Adds one arg; false with the error set on ctx. */
static bool arg_set_json_add_or_fail(sqlite3_context *ctx, arg_set_json *json,
                                     int64_t set, const char *key,
                                     const arg_json_value *value) {
  char *message = NULL;
  if (arg_set_json_add(json, key ? key : "", value, &message))
    return true;
  error_printf(ctx, "__intrinsic_arg_set_to_json: arg set %" PRId64 ": %s",
               set, message);
  g_free(message);
  return false;
}

#ifndef TM_SQLITE_EXTENSION
static bool arg_set_json_from_model(sqlite3_context *ctx,
                                    tm_model_index *index, int64_t set,
                                    arg_set_json *json) {
  if (set <= 0 || set > UINT32_MAX)
    return true;
  const tm_model *model = model_index_model(index);
  size_t n;
  const uint32_t *rows = model_index_arg_set(index, (uint32_t)set, &n);
  for (size_t i = 0; i < n; i++) {
    const tm_arg_row *a = &model->args.data[rows[i]];
    const tm_arg_key *ak = model_arg_key(model, a);
    arg_json_value v = {.type = ARG_JSON_NULL};
    switch ((tm_arg_type)ak->value_type) {
    case TM_ARG_INT:
      v.type = ARG_JSON_INT;
      break;
    case TM_ARG_UINT:
      v.type = ARG_JSON_UINT;
      break;
    case TM_ARG_POINTER:
      v.type = ARG_JSON_POINTER;
      break;
    case TM_ARG_BOOL:
      v.type = ARG_JSON_BOOL;
      break;
    case TM_ARG_REAL:
      v.type = ARG_JSON_REAL;
      break;
    case TM_ARG_STRING:
    case TM_ARG_JSON:
      v.type = ARG_JSON_STRING;
      break;
    }
    if (v.type == ARG_JSON_REAL) {
      v.u.real_value = model_arg_real(model, a);
    } else if (v.type == ARG_JSON_STRING) {
      v.u.string.text = model_arg_string(model, a, &v.u.string.len);
    } else {
      v.u.int_value = model_arg_int(model, a);
    }
    if (!arg_set_json_add_or_fail(ctx, json, set,
                                  string_pool_borrow(model->strings, ak->key),
                                  &v))
      return false;
  }
  return true;
}
#endif

static bool arg_set_json_from_table(sqlite3_context *ctx,
                                    function_state *state, int64_t set,
                                    arg_set_json *json) {
  if (!cached_stmt(ctx, state, &state->arg_set,
                   "SELECT key, value_type, int_value, string_value, "
                   "real_value FROM args WHERE arg_set_id = ?1 ORDER BY id"))
    return false;
  sqlite3_stmt *stmt = state->arg_set;
  sqlite3_bind_int64(stmt, 1, set);
  bool ok = true;
  int rc;
  while (ok && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    arg_json_value v = {
        .type = arg_json_type_of((const char *)sqlite3_column_text(stmt, 1))};
    if (v.type == ARG_JSON_REAL) {
      v.u.real_value = sqlite3_column_double(stmt, 4);
    } else if (v.type == ARG_JSON_STRING) {
      v.u.string.text = (const char *)sqlite3_column_text(stmt, 3);
      v.u.string.len = (size_t)sqlite3_column_bytes(stmt, 3);
    } else {
      v.u.int_value = sqlite3_column_int64(stmt, 2);
    }
    ok = arg_set_json_add_or_fail(
        ctx, json, set, (const char *)sqlite3_column_text(stmt, 0), &v);
  }
  if (ok && rc != SQLITE_DONE) {
    error_printf(ctx, "__intrinsic_arg_set_to_json: %s",
                 sqlite3_errmsg(state->db));
    ok = false;
  }
  done_stmt(&state->arg_set);
  return ok;
}

/* The arg set as trace_processor's JSON object (arg_set_json.h); NULL for
 * a NULL id, "{}" for an id without args. */
static void fn_arg_set_to_json(sqlite3_context *ctx, int argc,
                               sqlite3_value **argv) {
  (void)argc;
  function_state *state = sqlite3_user_data(ctx);
  int set_type = sqlite3_value_type(argv[0]);
  if (set_type == SQLITE_NULL)
    return;
  if (set_type != SQLITE_INTEGER) {
    sqlite3_result_error(
        ctx, "__intrinsic_arg_set_to_json: the argument should be an arg set id",
        -1);
    return;
  }
  int64_t set = sqlite3_value_int64(argv[0]);
  arg_set_json *json = arg_set_json_new();
  bool ok;
#ifndef TM_SQLITE_EXTENSION
  if (state->index)
    ok = arg_set_json_from_model(ctx, state->index, set, json);
  else
#endif
    ok = arg_set_json_from_table(ctx, state, set, json);
  if (ok) {
    size_t len;
    char *text = arg_set_json_to_string(json, &len);
    if (len > INT_MAX)
      sqlite3_result_error_toobig(ctx);
    else
      sqlite3_result_text(ctx, text, (int)len, SQLITE_TRANSIENT);
    g_free(text);
  }
  arg_set_json_free(json);
}

/* ---- trace bounds -------------------------------------------------------- */

static bool trace_bounds(sqlite3_context *ctx, int64_t *start, int64_t *end) {
  function_state *state = sqlite3_user_data(ctx);
#ifndef TM_SQLITE_EXTENSION
  if (state->index) {
    *start = model_index_model(state->index)->bounds_start;
    *end = model_index_model(state->index)->bounds_end;
    return true;
  }
#endif
  if (!cached_stmt(ctx, state, &state->bounds,
                   "SELECT start_ts, end_ts FROM trace_bounds"))
    return false;
  bool ok = sqlite3_step(state->bounds) == SQLITE_ROW;
  if (ok) {
    *start = sqlite3_column_int64(state->bounds, 0);
    *end = sqlite3_column_int64(state->bounds, 1);
  } else {
    error_printf(ctx, "trace_bounds: %s", sqlite3_errmsg(state->db));
  }
  done_stmt(&state->bounds);
  return ok;
}

static void fn_trace_start(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv) {
  (void)argc, (void)argv;
  int64_t start, end;
  if (trace_bounds(ctx, &start, &end))
    sqlite3_result_int64(ctx, start);
}

static void fn_trace_end(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc, (void)argv;
  int64_t start, end;
  if (trace_bounds(ctx, &start, &end))
    sqlite3_result_int64(ctx, end);
}

static void fn_trace_dur(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc, (void)argv;
  int64_t start, end;
  if (trace_bounds(ctx, &start, &end))
    sqlite3_result_int64(ctx, end - start);
}

/* ---- ABS_TIME_STR, TO_REALTIME, TO_MONOTONIC, TO_TIMECODE ---------------- */

/* The reading of clock `clock_name` at trace time `ts`: that clock's
 * value in the last snapshot at or before ts (else the first one) plus
 * the distance to it. False without a snapshot of that clock (or on an
 * error, then set on ctx). */
static bool clock_value_at(sqlite3_context *ctx, const char *clock_name,
                           int64_t ts, int64_t *value) {
  function_state *state = sqlite3_user_data(ctx);
  if (!cached_stmt(ctx, state, &state->clock_at,
                   "SELECT ts, clock_value FROM clock_snapshot "
                   "WHERE clock_name = ?2 "
                   "ORDER BY ts > ?1, iif(ts <= ?1, -ts, ts) LIMIT 1"))
    return false;
  sqlite3_bind_int64(state->clock_at, 1, ts);
  sqlite3_bind_text(state->clock_at, 2, clock_name, -1, SQLITE_STATIC);
  bool found = sqlite3_step(state->clock_at) == SQLITE_ROW;
  if (found)
    *value = sqlite3_column_int64(state->clock_at, 1) +
             (ts - sqlite3_column_int64(state->clock_at, 0));
  done_stmt(&state->clock_at);
  return found;
}

/* The timestamp argument of the clock functions: false (NULL result, or
 * an error naming `fn` for a non-integer) when there is none. */
static bool timestamp_arg(sqlite3_context *ctx, sqlite3_value *arg,
                          const char *fn, int64_t *ts) {
  if (sqlite3_value_type(arg) == SQLITE_NULL)
    return false;
  if (sqlite3_value_type(arg) != SQLITE_INTEGER) {
    error_printf(ctx, "%s: first argument should be timestamp", fn);
    return false;
  }
  *ts = sqlite3_value_int64(arg);
  return true;
}

static void fn_abs_time_str(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv) {
  (void)argc;
  int64_t ts, wall;
  if (!timestamp_arg(ctx, argv[0], "ABS_TIME_STR", &ts) ||
      !clock_value_at(ctx, "REALTIME", ts, &wall))
    return;
  int64_t secs = wall / 1000000000, nanos = wall % 1000000000;
  if (nanos < 0) {
    nanos += 1000000000;
    secs--;
  }
  time_t t = (time_t)secs;
  struct tm tm;
  if (gmtime_r(&t, &tm)) {
    char text[64];
    size_t n = strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(text + n, sizeof text - n, ".%09" PRId64, nanos);
    sqlite3_result_text(ctx, text, -1, SQLITE_TRANSIENT);
  }
}

/* TO_REALTIME(ts), TO_MONOTONIC(ts): the clock's reading in ns, NULL
 * without a snapshot of that clock. */
static void fn_to_clock(sqlite3_context *ctx, const char *fn, const char *clock,
                        sqlite3_value *arg) {
  int64_t ts, value;
  if (timestamp_arg(ctx, arg, fn, &ts) && clock_value_at(ctx, clock, ts, &value))
    sqlite3_result_int64(ctx, value);
}

static void fn_to_realtime(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  fn_to_clock(ctx, "TO_REALTIME", "REALTIME", argv[0]);
}

static void fn_to_monotonic(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  fn_to_clock(ctx, "TO_MONOTONIC", "MONOTONIC", argv[0]);
}

/* TO_TIMECODE(ns): "HH:MM:SS mmm uuu nnn" (hours not wrapped). */
static void fn_to_timecode(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int64_t ns;
  if (!timestamp_arg(ctx, argv[0], "TO_TIMECODE", &ns))
    return;
  int64_t us = ns / 1000, ms = us / 1000, s = ms / 1000, m = s / 60, h = m / 60;
  char text[96];
  snprintf(text, sizeof text,
           "%02" PRId64 ":%02" PRId64 ":%02" PRId64 " %03" PRId64 " %03" PRId64
           " %03" PRId64,
           h, m % 60, s % 60, ms % 1000, us % 1000, ns % 1000);
  sqlite3_result_text(ctx, text, -1, SQLITE_TRANSIENT);
}

/* ---- BASE64_ENCODE, BASE64_DECODE (GLib's codec) ------------------------ */

static void fn_base64_encode(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int type = sqlite3_value_type(argv[0]);
  if (type == SQLITE_NULL)
    return;
  if (type != SQLITE_BLOB) {
    sqlite3_result_error(ctx, "BASE64_ENCODE: argument should be bytes", -1);
    return;
  }
  const void *bytes = sqlite3_value_blob(argv[0]);
  int n = sqlite3_value_bytes(argv[0]);
  char *text = g_base64_encode(bytes, (gsize)n);
  sqlite3_result_text(ctx, text, -1, SQLITE_TRANSIENT);
  g_free(text);
}

/* Standard alphabet, padded to a multiple of 4 ('=' only at the end):
 * g_base64_decode skips what it does not know, so it is checked first. */
static bool is_base64(const char *s, size_t n) {
  if (n % 4 != 0)
    return false;
  size_t pad = 0;
  while (pad < 2 && pad < n && s[n - 1 - pad] == '=')
    pad++;
  for (size_t i = 0; i < n - pad; i++)
    if (!g_ascii_isalnum(s[i]) && s[i] != '+' && s[i] != '/')
      return false;
  return true;
}

static void fn_base64_decode(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int type = sqlite3_value_type(argv[0]);
  if (type == SQLITE_NULL)
    return;
  const char *text = type == SQLITE_TEXT ? (const char *)sqlite3_value_text(argv[0]) : NULL;
  size_t n = text ? strlen(text) : 0;
  if (!text || !is_base64(text, n)) {
    sqlite3_result_error(ctx, "BASE64_DECODE: argument should be base64 text", -1);
    return;
  }
  if (n == 0) {
    sqlite3_result_zeroblob(ctx, 0);
    return;
  }
  gsize len = 0;
  guchar *bytes = g_base64_decode(text, &len);
  sqlite3_result_blob(ctx, bytes, (int)len, SQLITE_TRANSIENT);
  g_free(bytes);
}

/* ---- HASH, REVERSE, STR_SPLIT, UNHEX, DEMANGLE --------------------------- */

static void fn_hash(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  uint64_t h = TM_FNV_OFFSET;
  for (int i = 0; i < argc; i++) {
    switch (sqlite3_value_type(argv[i])) {
    case SQLITE_INTEGER: {
      uint64_t v = (uint64_t)sqlite3_value_int64(argv[i]);
      unsigned char bytes[8];
      for (int b = 0; b < 8; b++)
        bytes[b] = (unsigned char)(v >> (8 * b));
      h = tm_fnv_update(h, bytes, 8);
      break;
    }
    case SQLITE_TEXT: {
      const char *s = (const char *)sqlite3_value_text(argv[i]);
      h = tm_fnv_update(h, s, strlen(s));
      break;
    }
    default:
      error_printf(ctx, "HASH: arg %d has unknown type", i);
      return;
    }
  }
  sqlite3_result_int64(ctx, (int64_t)h);
}

static void fn_reverse(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int type = sqlite3_value_type(argv[0]);
  if (type == SQLITE_NULL)
    return;
  if (type != SQLITE_TEXT) {
    sqlite3_result_error(ctx, "REVERSE: argument should be string", -1);
    return;
  }
  const char *s = (const char *)sqlite3_value_text(argv[0]);
  int n = sqlite3_value_bytes(argv[0]);
  char *r = sqlite3_malloc(n + 1);
  if (!r) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  for (int i = 0; i < n; i++)
    r[i] = s[n - 1 - i];
  r[n] = '\0';
  sqlite3_result_text(ctx, r, n, sqlite3_free);
}

static void fn_str_split(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
    return;
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT ||
      sqlite3_value_type(argv[1]) != SQLITE_TEXT ||
      sqlite3_value_type(argv[2]) != SQLITE_INTEGER) {
    sqlite3_result_error(ctx,
                         "STR_SPLIT: expects (string, delimiter string, "
                         "field index integer)",
                         -1);
    return;
  }
  const char *s = (const char *)sqlite3_value_text(argv[0]);
  const char *delim = (const char *)sqlite3_value_text(argv[1]);
  int64_t field = sqlite3_value_int64(argv[2]);
  size_t dlen = strlen(delim);
  if (dlen == 0) {
    sqlite3_result_error(ctx, "STR_SPLIT: delimiter must not be empty", -1);
    return;
  }
  if (field < 0) {
    sqlite3_result_error(ctx, "STR_SPLIT: field index must be >= 0", -1);
    return;
  }
  const char *p = s;
  for (int64_t i = 0; i < field; i++) {
    const char *next = strstr(p, delim);
    if (!next)
      return;
    p = next + dlen;
  }
  const char *end = strstr(p, delim);
  sqlite3_result_text(ctx, p, end ? (int)(end - p) : -1, SQLITE_TRANSIENT);
}

static void fn_unhex(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int type = sqlite3_value_type(argv[0]);
  if (type == SQLITE_NULL)
    return;
  if (type != SQLITE_TEXT) {
    sqlite3_result_error(ctx, "UNHEX: argument must be text", -1);
    return;
  }
  const char *s = (const char *)sqlite3_value_text(argv[0]);
  while (*s && g_ascii_isspace(*s))
    s++;
  size_t n = strlen(s);
  while (n && g_ascii_isspace(s[n - 1]))
    n--;
  if (n == 0) {
    sqlite3_result_error(ctx, "UNHEX: input is empty or only whitespace", -1);
    return;
  }
  if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s += 2;
    n -= 2;
  }
  if (n == 0) {
    sqlite3_result_error(ctx, "UNHEX: hex string is empty after prefix", -1);
    return;
  }
  char *digits = g_strndup(s, n);
  char *end = NULL;
  errno = 0;
  long long v = strtoll(digits, &end, 16);
  bool ok = errno == 0 && end && *end == '\0' && g_ascii_isxdigit(digits[0]);
  g_free(digits);
  if (!ok) {
    sqlite3_result_error(ctx, "UNHEX: invalid or out of range hex string", -1);
    return;
  }
  sqlite3_result_int64(ctx, v);
}

static void fn_demangle(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int type = sqlite3_value_type(argv[0]);
  if (type == SQLITE_NULL)
    return;
  if (type != SQLITE_TEXT) {
    sqlite3_result_error(ctx, "Unsupported type of arg passed to DEMANGLE", -1);
    return;
  }
  const char *mangled = (const char *)sqlite3_value_text(argv[0]);
  /* Only Itanium symbol names: a bare type code ("i") is not a symbol. */
  if (strncmp(mangled, "_Z", 2) != 0)
    return;
  char *demangled = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI);
  if (!demangled)
    return;
  sqlite3_result_text(ctx, demangled, -1, SQLITE_TRANSIENT);
  free(demangled);
}

/* ---- regular expressions (POSIX ERE) ------------------------------------ */

typedef struct compiled_regex {
  regex_t re;
} compiled_regex;

static void compiled_regex_free(void *p) {
  compiled_regex *c = p;
  regfree(&c->re);
  g_free(c);
}

/* The compiled form of argument `arg`, cached by SQLite while the pattern
 * stays the same (a constant pattern is compiled once per statement). */
static regex_t *regex_arg(sqlite3_context *ctx, sqlite3_value **argv, int arg,
                          const char *function) {
  compiled_regex *c = sqlite3_get_auxdata(ctx, arg);
  if (c)
    return &c->re;
  const char *pattern = (const char *)sqlite3_value_text(argv[arg]);
  if (!pattern)
    return NULL;
  c = g_new0(compiled_regex, 1);
  int rc = regcomp(&c->re, pattern, REG_EXTENDED);
  if (rc != 0) {
    char message[256];
    regerror(rc, &c->re, message, sizeof message);
    g_free(c);
    error_printf(ctx, "%s: invalid regex '%s': %s", function, pattern,
                 message);
    return NULL;
  }
  sqlite3_set_auxdata(ctx, arg, c, compiled_regex_free);
  /* SQLite may have freed it at once (no room to keep it): look again. */
  c = sqlite3_get_auxdata(ctx, arg);
  if (!c) {
    error_printf(ctx, "%s: out of memory", function);
    return NULL;
  }
  return &c->re;
}

static void fn_regexp(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  const char *text = (const char *)sqlite3_value_text(argv[1]);
  if (!text || sqlite3_value_type(argv[0]) == SQLITE_NULL)
    return;
  regex_t *re = regex_arg(ctx, argv, 0, "REGEXP");
  if (re)
    sqlite3_result_int(ctx, regexec(re, text, 0, NULL, 0) == 0);
}

static void fn_regexp_extract(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv) {
  (void)argc;
  const char *text = (const char *)sqlite3_value_text(argv[0]);
  if (!text || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return;
  regex_t *re = regex_arg(ctx, argv, 1, "REGEXP_EXTRACT");
  if (!re)
    return;
  if (re->re_nsub > 1) {
    sqlite3_result_error(ctx, "REGEXP_EXTRACT: pattern has more than one group.",
                         -1);
    return;
  }
  regmatch_t m[2];
  if (regexec(re, text, 2, m, 0) != 0)
    return;
  regmatch_t use = m[0];
  if (re->re_nsub == 1 && m[1].rm_so >= 0 && m[1].rm_eo > m[1].rm_so)
    use = m[1];
  sqlite3_result_text(ctx, text + use.rm_so, (int)(use.rm_eo - use.rm_so),
                      SQLITE_TRANSIENT);
}

static void fn_regexp_replace(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv) {
  (void)argc;
  const char *text = (const char *)sqlite3_value_text(argv[0]);
  const char *replacement = (const char *)sqlite3_value_text(argv[2]);
  if (!text || !replacement || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return;
  regex_t *re = regex_arg(ctx, argv, 1, "REGEXP_REPLACE_SIMPLE");
  if (!re)
    return;
  GString *out = g_string_new(NULL);
  const char *p = text;
  regmatch_t m;
  int flags = 0;
  while (*p && regexec(re, p, 1, &m, flags) == 0) {
    g_string_append_len(out, p, m.rm_so);
    g_string_append(out, replacement);
    if (m.rm_eo == m.rm_so) {
      /* An empty match: keep one character and go on after it. */
      g_string_append_c(out, p[m.rm_eo]);
      p += m.rm_eo + 1;
    } else {
      p += m.rm_eo;
    }
    flags = REG_NOTBOL;
  }
  g_string_append(out, p);
  sqlite3_result_text(ctx, out->str, (int)out->len, SQLITE_TRANSIENT);
  g_string_free(out, TRUE);
}

/* ---- STRING_AGG ---------------------------------------------------------- */

typedef struct string_agg_state {
  GString *text;
} string_agg_state;

static void string_agg_step(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
    return;
  string_agg_state *state = sqlite3_aggregate_context(ctx, sizeof *state);
  if (!state) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (!state->text) {
    state->text = g_string_new(NULL);
  } else {
    const char *sep = argc > 1 ? (const char *)sqlite3_value_text(argv[1]) : ",";
    if (sep)
      g_string_append(state->text, sep);
  }
  g_string_append_len(state->text, (const char *)sqlite3_value_text(argv[0]),
                      sqlite3_value_bytes(argv[0]));
}

static void string_agg_final(sqlite3_context *ctx) {
  string_agg_state *state = sqlite3_aggregate_context(ctx, 0);
  if (!state || !state->text)
    return;
  sqlite3_result_text(ctx, state->text->str, (int)state->text->len,
                      SQLITE_TRANSIENT);
  g_string_free(state->text, TRUE);
}

/* ---- PERCENTILE family --------------------------------------------------- */

typedef enum percentile_kind {
  PERCENTILE_0_100,   /* percentile(x, p), p in [0, 100] */
  PERCENTILE_MEDIAN,  /* median(x) */
  PERCENTILE_CONT,    /* percentile_cont(x, f), f in [0, 1] */
  PERCENTILE_DISC,    /* percentile_disc(x, f) */
} percentile_kind;

typedef struct percentile_state {
  GArray *values; /* double */
  double fraction;
  bool fraction_set;
  bool failed;
} percentile_state;

static const char *percentile_name(percentile_kind kind) {
  switch (kind) {
  case PERCENTILE_0_100:
    return "percentile";
  case PERCENTILE_MEDIAN:
    return "median";
  case PERCENTILE_CONT:
    return "percentile_cont";
  case PERCENTILE_DISC:
    return "percentile_disc";
  }
  return "percentile";
}

static void percentile_step(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv) {
  percentile_kind kind = (percentile_kind)(intptr_t)sqlite3_user_data(ctx);
  percentile_state *state = sqlite3_aggregate_context(ctx, sizeof *state);
  if (!state) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (state->failed)
    return;
  double fraction = 0.5;
  if (argc > 1) {
    int t = sqlite3_value_numeric_type(argv[1]);
    double p = sqlite3_value_double(argv[1]);
    double max = kind == PERCENTILE_0_100 ? 100.0 : 1.0;
    if ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) || p < 0 || p > max) {
      error_printf(ctx,
                   "the fraction argument to %s() is not between 0.0 and %.1f",
                   percentile_name(kind), max);
      state->failed = true;
      return;
    }
    fraction = p / max;
  }
  if (state->fraction_set && fraction != state->fraction) {
    error_printf(ctx,
                 "the fraction argument to %s() is not the same for all input "
                 "rows",
                 percentile_name(kind));
    state->failed = true;
    return;
  }
  state->fraction = fraction;
  state->fraction_set = true;
  int type = sqlite3_value_numeric_type(argv[0]);
  if (type == SQLITE_NULL)
    return;
  if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) {
    error_printf(ctx, "input to %s() is not numeric", percentile_name(kind));
    state->failed = true;
    return;
  }
  if (!state->values)
    state->values = g_array_new(FALSE, FALSE, sizeof(double));
  double v = sqlite3_value_double(argv[0]);
  g_array_append_val(state->values, v);
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void percentile_final(sqlite3_context *ctx) {
  percentile_kind kind = (percentile_kind)(intptr_t)sqlite3_user_data(ctx);
  percentile_state *state = sqlite3_aggregate_context(ctx, 0);
  if (!state)
    return;
  GArray *values = state->values;
  if (!state->failed && values && values->len) {
    double *a = (double *)(void *)values->data;
    size_t n = values->len;
    qsort(a, n, sizeof *a, compare_doubles);
    if (kind == PERCENTILE_DISC) {
      double at = ceil(state->fraction * (double)n);
      size_t i = at < 1 ? 0 : (size_t)at - 1;
      sqlite3_result_double(ctx, a[MIN(i, n - 1)]);
    } else {
      double ix = state->fraction * (double)(n - 1);
      size_t lo = (size_t)floor(ix), hi = (size_t)ceil(ix);
      double v = a[lo] + (a[hi] - a[lo]) * (ix - (double)lo);
      sqlite3_result_double(ctx, v);
    }
  }
  if (values)
    g_array_free(values, TRUE);
}

/* ---- registration -------------------------------------------------------- */

typedef struct scalar_def {
  const char *name;
  int n_args;
  void (*fn)(sqlite3_context *, int, sqlite3_value **);
  bool deterministic;
} scalar_def;

static const scalar_def scalars[] = {
    {"extract_arg", 2, fn_extract_arg, false},
    {"__intrinsic_arg_set_to_json", 1, fn_arg_set_to_json, false},
    {"trace_start", 0, fn_trace_start, false},
    {"trace_end", 0, fn_trace_end, false},
    {"trace_dur", 0, fn_trace_dur, false},
    {"abs_time_str", 1, fn_abs_time_str, false},
    {"to_realtime", 1, fn_to_realtime, false},
    {"to_monotonic", 1, fn_to_monotonic, false},
    {"to_timecode", 1, fn_to_timecode, true},
    {"base64_encode", 1, fn_base64_encode, true},
    {"base64_decode", 1, fn_base64_decode, true},
    {"hash", -1, fn_hash, true},
    {"reverse", 1, fn_reverse, true},
    {"str_split", 3, fn_str_split, true},
    {"unhex", 1, fn_unhex, true},
    {"demangle", 1, fn_demangle, true},
    {"regexp", 2, fn_regexp, true},
    {"regexp_extract", 2, fn_regexp_extract, true},
    {"regexp_replace_simple", 3, fn_regexp_replace, true},
    {"regexp_replace", 3, fn_regexp_replace, true},
};

static int register_all(sqlite3 *db, tm_model_index *index, bool owns_index) {
  function_state *state = sqlite3_malloc(sizeof *state);
  if (!state) {
#ifndef TM_SQLITE_EXTENSION
    if (owns_index)
      model_index_free(index);
#endif
    return SQLITE_NOMEM;
  }
  memset(state, 0, sizeof *state);
  state->index = index;
  state->owns_index = owns_index;
  state->db = db;
  /* The first registration owns `state` (and so the index) and frees it
   * with the connection, or at once if it fails. Every function is
   * INNOCUOUS (no side effects), so views may use them under the
   * connection's untrusted schema. */
  int rc = sqlite3_create_function_v2(db, "extract_arg", 2,
                                      SQLITE_UTF8 | SQLITE_INNOCUOUS, state,
                                      fn_extract_arg, NULL, NULL,
                                      function_state_free);
  for (size_t i = 1; rc == SQLITE_OK && i < G_N_ELEMENTS(scalars); i++) {
    int flags = SQLITE_UTF8 | SQLITE_INNOCUOUS |
                (scalars[i].deterministic ? SQLITE_DETERMINISTIC : 0);
    rc = sqlite3_create_function_v2(db, scalars[i].name, scalars[i].n_args,
                                    flags, state, scalars[i].fn, NULL, NULL,
                                    NULL);
  }
  for (int n = 1; rc == SQLITE_OK && n <= 2; n++)
    rc = sqlite3_create_function_v2(db, "string_agg", n,
                                    SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
                                    NULL, string_agg_step, string_agg_final,
                                    NULL);
  static const struct {
    const char *name;
    int n_args;
    percentile_kind kind;
  } percentiles[] = {
      {"percentile", 2, PERCENTILE_0_100},
      {"median", 1, PERCENTILE_MEDIAN},
      {"percentile_cont", 2, PERCENTILE_CONT},
      {"percentile_disc", 2, PERCENTILE_DISC},
  };
  for (size_t i = 0; rc == SQLITE_OK && i < G_N_ELEMENTS(percentiles); i++)
    rc = sqlite3_create_function_v2(
        db, percentiles[i].name, percentiles[i].n_args,
        SQLITE_UTF8 | SQLITE_INNOCUOUS,
        (void *)(intptr_t)percentiles[i].kind, NULL, percentile_step,
        percentile_final, NULL);
  return rc;
}

int sql_functions_register(sqlite3 *db, tm_model_index *index) {
  return register_all(db, index, false);
}

#ifndef TM_SQLITE_EXTENSION
bool sql_functions_registrar(sqlite3 *db, const tm_model *model,
                             GError **error) {
  tm_model_index *index = model ? model_index_new(model) : NULL;
  int rc = register_all(db, index, index != NULL);
  if (rc == SQLITE_OK && index)
    rc = slice_functions_register(db, index);
  if (rc == SQLITE_OK)
    rc = span_join_register(db);
  if (rc != SQLITE_OK) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                "registering trace_processor's functions: %s",
                sqlite3_errmsg(db));
    return false;
  }
  return true;
}
#endif
