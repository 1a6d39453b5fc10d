/*
 * trace_processor's scalar and aggregate SQL functions, for SQLite 3.40
 * (Debian 12), which lacks several and never had trace_processor's own:
 *
 *   EXTRACT_ARG(arg_set_id, key)   the value of `key` (args.key, e.g.
 *                                  'debug.foo', 'args.list[0]') in the set
 *   __INTRINSIC_ARG_SET_TO_JSON(arg_set_id)  the set as one JSON object,
 *                                  keys nested at '.' and '[i]'
 *                                  (arg_set_json.h)
 *   HASH(v, ...)                   FNV-1a 64 of integers and text
 *   DEMANGLE(name)                 Itanium C++ demangling (libiberty)
 *   REGEXP(pattern, text)          POSIX extended regex search, so
 *                                  `text REGEXP pattern` works
 *   REGEXP_EXTRACT(text, pattern)  the first group (else the whole match)
 *   REGEXP_REPLACE_SIMPLE(text, pattern, replacement), and its alias
 *   REGEXP_REPLACE                 every match replaced, literally
 *   STR_SPLIT(text, delimiter, n)  the n-th (0-based) field, else NULL
 *   UNHEX(text)                    hex digits (optional 0x) -> integer
 *   REVERSE(text)
 *   TRACE_START(), TRACE_END(), TRACE_DUR()  from trace_bounds
 *   ABS_TIME_STR(ts)               trace time as ISO 8601 wall-clock time
 *                                  (through a REALTIME clock snapshot)
 *   TO_REALTIME(ts), TO_MONOTONIC(ts)  the clock's reading at ts (same rule)
 *   TO_TIMECODE(ns)                "HH:MM:SS mmm uuu nnn"
 *   BASE64_ENCODE(bytes), BASE64_DECODE(text)  (GLib's codec)
 *   STRING_AGG(x, sep)             group_concat under its SQL:2016 name
 *   PERCENTILE(x, p)               p in [0, 100], linear interpolation;
 *   MEDIAN(x), PERCENTILE_CONT(x, f), PERCENTILE_DISC(x, f)  f in [0, 1]
 *
 * They are the library's own code except DEMANGLE (libiberty's
 * cplus_demangle), base64 (GLib) and regular expressions (the C library's POSIX
 * <regex.h>, the dialect trace_processor uses); see docs/architecture.md.
 *
 * With a model index, EXTRACT_ARG, __INTRINSIC_ARG_SET_TO_JSON and TRACE_*
 * read the model directly; without one (the loadable extension for saved
 * databases) they query the `args` and `trace_bounds` tables of the
 * connection.
 */
#ifndef TM_SQL_FUNCTIONS_H
#define TM_SQL_FUNCTIONS_H

#include <glib.h>
#include <stdbool.h>

typedef struct sqlite3 sqlite3;
typedef struct tm_model tm_model;
typedef struct tm_model_index tm_model_index;

/* Registers every function on `db`. `index` (may be NULL) is borrowed and
 * must outlive the connection. Returns an SQLite result code. */
int sql_functions_register(sqlite3 *db, tm_model_index *index);

/* The sql_connection registrar (sql_connection.h) for all of
 * trace_processor's functions: these, the slice and flow table functions
 * (slice_functions.h, only with a model) and the span joins
 * (span_join.h), sharing one model index that the connection owns. */
bool sql_functions_registrar(sqlite3 *db, const tm_model *model,
                             GError **error);

#endif /* TM_SQL_FUNCTIONS_H */
