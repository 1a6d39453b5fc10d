/*
 * libtracemerge: the host library.
 *
 * A session imports a set of inputs (trace files or archives), places every
 * event on one timeline and answers SQL over the result. Typical use:
 *
 *   tm_session *s = tm_session_new(NULL);
 *   const char *paths[] = {"run.zip"};
 *   if (!tm_session_import(s, paths, 1, &error)) ...
 *   tm_session_query(s, "SELECT name, ts FROM slice", TM_FORMAT_CSV, stdout,
 *                    &error);
 *   tm_session_free(s);
 *
 * Ownership: a session owns everything it imported; strings it returns are
 * borrowed and live as long as the session. Errors are GErrors in
 * TRACEMERGE_ERROR (codes: tm_error_code, <tracemerge/error.h>) whose message
 * names the file (and byte offset) at fault. A session is used from one thread at a time.
 *
 * Build against it with `pkg-config --cflags --libs tracemerge`. Only the
 * functions marked TM_API are exported by libtracemerge.so: every function
 * declared here carries it (tests/test_library_exports.sh).
 */
#ifndef TRACEMERGE_H
#define TRACEMERGE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <tracemerge/error.h>
#include <tracemerge/export.h>
#include <tracemerge/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tm_session tm_session;

typedef enum tm_format {
  TM_FORMAT_CSV = 0, /* as trace_processor prints it */
  TM_FORMAT_TSV = 1,
  TM_FORMAT_JSON = 2,
  TM_FORMAT_TABLE = 3, /* fixed-width columns, as trace_processor_shell's prompt */
} tm_format;

/* The configuration of one reader: the raw bytes of its config block (the
 * block its descriptor's config_name names), handed to its open() for
 * every file it reads, never decoded by the library. */
typedef struct tm_reader_config {
  const char *reader; /* the reader's name, e.g. "json" */
  const void *bytes;
  size_t len;
} tm_reader_config;
/* Budgets: what one import may cost, whatever its inputs hold. Defaults
 * are far above any real trace (README, "Budgets"); they exist so that a
 * hostile input (a decompression bomb, a file of whitespace, a million tiny
 * members) is cut, not followed until memory or patience runs out. 0 in
 * any field means its default. When a budget trips, the file is cut there:
 * everything read before stays, the stat named below counts it and the
 * import's error names the file and the byte offset. */
typedef struct tm_budgets {
  /* Bytes that archive members (every nesting level) may yield per byte of
   * the input they come from, once they exceed 64 MiB (stat
   * container_inflate_ratio_exceeded; the rest of that input is not
   * read). Default 1000; a gzip bomb yields about 1030. */
  uint64_t max_inflate_ratio;
  /* Bytes of one trace file, e.g. one archive member (stat
   * container_member_size_exceeded; the file is cut, other files go on).
   * Default 64 GiB. */
  uint64_t max_member_bytes;
  /* Containers nested in containers (stat container_depth_exceeded; the
   * too-deep one is skipped). Default 16. */
  uint32_t max_depth;
  /* Files (trace_file rows) in one import (stat
   * container_file_count_exceeded; nothing after is read). Default 100000. */
  uint64_t max_files;
  /* Bytes a reader may hold for one unit of its format: a JSON event or
   * string, an Instruments XML token or text, a Gecko thread (stat
   * reader_record_size_exceeded; the file is cut there). Default 512 MiB.
   * The systrace reader (64 KiB lines) and the Perfetto reader (64 MiB
   * packets) keep their own fixed limits and do not ask for this one. */
  uint64_t max_record_bytes;
} tm_budgets;

/* How a merge config's bytes are read. */
typedef enum tm_config_syntax {
  /* Text if config_path ends in .pbtx, .pbtxt, .txtpb, .textproto or
   * .txt; binary otherwise (and for config_data without such a path). */
  TM_CONFIG_SYNTAX_AUTO = 0,
  TM_CONFIG_SYNTAX_TEXT = 1,   /* protobuf text format (perfetto --txt) */
  TM_CONFIG_SYNTAX_BINARY = 2, /* an encoded perfetto.protos.TraceConfig */
} tm_config_syntax;

typedef struct tm_session_options {
  /* Extra plugin directories searched before TRACEMERGE_PLUGIN_PATH and the
   * default ones (may be NULL). Borrowed for the call. */
  const char *const *plugin_dirs;
  size_t n_plugin_dirs;
  /* Where warnings about plugins that failed to load go (NULL: stderr). */
  FILE *warnings;
  /* Plugin files that win a clash of reader names (loaded first, wherever
   * they are; may be NULL), before those of TRACEMERGE_PLUGIN_PREFER.
   * Without one, two readers of one name fail every import. Borrowed for
   * the call. */
  const char *const *preferred_plugins;
  size_t n_preferred_plugins;
  /* PerfettoSQL packages for INCLUDE PERFETTO MODULE, each "DIR" or
   * "DIR@NAME" as trace_processor_shell's --add-sql-package: every *.sql
   * under DIR is module NAME.<relative path, '/' as '.', no .sql>; NAME
   * defaults to DIR's base name and replaces a package of that name (the
   * standard library's too). Read when the first query runs; an unreadable
   * package fails it. Borrowed for the call (copied). */
  const char *const *sql_packages;
  size_t n_sql_packages;
  /* Per-reader configuration (may be NULL), copied by the call. A reader
   * named twice gets the last one; a name no loaded reader has fails the
   * import, as does a reader that the merge config (below) also gives a
   * config block. */
  const tm_reader_config *reader_configs;
  size_t n_reader_configs;
  /* Queries may ATTACH and DETACH database files. Off by default: a query
   * text then cannot open, create or write any file (VACUUM INTO is
   * refused either way). */
  bool allow_attach;
  /* Each tm_session_query() call is stopped, failing with the reason,
   * once it has run this long (0: no limit). */
  double query_timeout_seconds;
  /* What one import may cost (zeros: the defaults). */
  tm_budgets budgets;
  /* A merge config: a perfetto.protos.TraceConfig, read from the file
   * `config_path`, or from `config_len` bytes at `config_data` (then
   * config_path, if set, only names it in messages). Both may be NULL:
   * no config. It selects and configures readers (data_sources: `name`,
   * the reader's own block handed to its open() as raw bytes, filters by
   * file or machine name), bounds the memory of their events (buffers:
   * size_kb, fill_policy RING_BUFFER or DISCARD) and keeps a window of the
   * merged timeline (start_offset_ms, duration_ms, trigger_config); the
   * repository's config/ holds commented examples. A config that cannot
   * be used fails tm_session_config_check() and every import; notes on
   * fields it ignores go to `warnings`. Borrowed for the call. */
  const char *config_path;
  const void *config_data;
  size_t config_len;
  tm_config_syntax config_syntax;
  /* Threads an import may use. 1: everything on the calling thread (the
   * serial path). 2 or more: each trace file's bytes are pulled (archive
   * members inflated, files read) on a second thread while the readers
   * parse the bytes before them; readers, the model and the merge stay on
   * the calling thread, so the result is the serial one, row for row
   * (docs/performance.md, "Threads"). 0: the machine's processor count
   * (g_get_num_processors()). No import uses more than 2 today. */
  unsigned threads;
} tm_session_options;

/* Creates a session and loads the reader plugins. `options` may be NULL. */
TM_API tm_session *tm_session_new(const tm_session_options *options);
TM_API void tm_session_free(tm_session *session);

/* Imports the inputs (each a trace file or an archive) as one merged trace.
 * Call once per session. On failure the session still holds what was read
 * before the error, queryable. */
TM_API bool tm_session_import(tm_session *session,
                              const char *const *paths, size_t n_paths,
                              GError **error);

/* Runs the statements of `sql` in order as a script, as
 * trace_processor_shell runs -q/-Q: prints the last one's rows; in CSV,
 * first one empty line per earlier statement; an earlier statement that
 * returns rows fails the script (unless its only column is named
 * suppress_query_output), after every statement before the last has run.
 *
 * Every connection the library opens is hardened for SQL from anyone:
 * queries read the trace's tables and views but cannot change them; they
 * may create their own tables, views and temporary objects; ATTACH,
 * DETACH (unless allow_attach), VACUUM INTO, load_extension() and
 * fts3_tokenizer() are refused; values are limited to 128 MiB. */
TM_API bool tm_session_query(tm_session *session, const char *sql,
                             tm_format format, FILE *out, GError **error);

typedef struct tm_query_options {
  tm_format format;
  /* TM_FORMAT_TABLE: characters per column (0: 20, trace_processor_shell's;
   * 40 is its -W). */
  unsigned column_width;
  /* As a line typed at trace_processor_shell's prompt: only the last
   * statement's rows are printed, earlier statements' rows are dropped
   * and nothing else is printed. */
  bool interactive;
} tm_query_options;

/* tm_session_query with `options` (NULL: CSV, a script); `*rows` (may be
 * NULL) is set to the number of rows printed. */
TM_API bool tm_session_query_with_options(tm_session *session,
                                          const char *sql,
                                          const tm_query_options *options,
                                          FILE *out, uint64_t *rows,
                                          GError **error);

/* Stops the query running now in `session` (it fails with "query
 * interrupted"). Async-signal-safe: call it from a SIGINT handler. */
TM_API void tm_session_interrupt(tm_session *session);

typedef enum tm_save_flags {
  TM_SAVE_REPLACE = 1 << 0, /* an existing file at the path is replaced */
} tm_save_flags;

/* Saves every table as a standalone SQLite database file at `path`,
 * written under a temporary name beside it and renamed only when
 * complete. Without TM_SAVE_REPLACE an existing `path` makes the save
 * fail and stays untouched. "", ":memory:" and "file:" URIs are refused.
 * `flags` is a mask of tm_save_flags. */
TM_API bool tm_session_save_sqlite(tm_session *session, const char *path,
                                   unsigned flags, GError **error);

/* Fails as tm_session_save_sqlite(path, flags) would for the path alone
 * (a refused name; an existing file without TM_SAVE_REPLACE), so a tool
 * can say so before importing anything. The save checks again. */
TM_API bool tm_save_path_check(const char *path, unsigned flags,
                               GError **error);

/* Writes a human summary: files, formats, machines, clocks, stats. */
TM_API void tm_session_print_info(tm_session *session, FILE *out);

/* Writes the clock graph in Graphviz DOT: one node per clock (machine,
 * domain, file or sequence scope), one edge per snapshot relation; the
 * trace-time clock is drawn doubled. */
TM_API void tm_session_print_clock_graph_dot(tm_session *session,
                                             FILE *out);

/* The reader plugins found, in search order. */
TM_API size_t tm_session_reader_count(const tm_session *session);
TM_API const tm_reader_descriptor *
tm_session_borrow_reader(const tm_session *session, size_t index,
                         const char **path);

/* False, with the reason, if the plugins found cannot be used as they
 * are: two readers of one name, neither preferred (tm_session_options).
 * tm_session_import fails with the same error. */
TM_API bool tm_session_plugins_check(const tm_session *session,
                                     GError **error);

/* False, with the reason (file:line:column and the field for a text
 * config), if the session's merge config cannot be used: unreadable,
 * malformed, naming a reader that is not loaded, a target_buffer out of
 * range, ... tm_session_import fails with the same error. */
TM_API bool tm_session_config_check(const tm_session *session, GError **error);

/* The session's merge config as normalised text (every field it holds;
 * a reader's block as the string of its bytes, under the reader's block
 * name), or NULL without a usable config. g_free the result. */
TM_API char *tm_session_config_to_text(const tm_session *session);

/* The plugin files reader `index` won a name clash against, because it was
 * preferred (NULL-terminated, borrowed), or NULL if none. */
TM_API const char *const *
tm_session_borrow_overridden(const tm_session *session, size_t index);

/* --- exports (core/export, docs/exports.md) ------------------------------ */

typedef enum tm_export_format {
  /* One Perfetto protobuf trace of every machine (machine_id on packets),
   * for ui.perfetto.dev and trace_processor. */
  TM_EXPORT_PERFETTO = 0,
  /* Chrome JSON Trace Event Format, every machine's pids and tids kept
   * apart (docs/exports.md gives the mapping), for chrome://tracing. */
  TM_EXPORT_JSON = 1,
} tm_export_format;

typedef struct tm_export_options {
  tm_export_format format;
  /* Only the machines of these names (NULL: every machine). Borrowed. */
  const char *const *machines;
  size_t n_machines;
  /* Only what overlaps [start_ns, end_ns] of trace time (both included). */
  bool has_time_range;
  int64_t start_ns, end_ns;
  /* Only the slices whose ids this query returns (one integer column),
   * with their ancestors, e.g. "SELECT id FROM slice WHERE name GLOB
   * 'net*'"; NULL: every slice. The other tables are not filtered by it. */
  const char *slice_sql;
} tm_export_options;

/* Parses "START,END" of trace time for tm_export_options: either may be
 * empty (open); each a number of ns or with a unit ns, us, ms, s ("1.5ms").
 * An open bound is INT64_MIN / INT64_MAX. */
TM_API bool tm_parse_time_range(const char *text, int64_t *start_ns,
                                int64_t *end_ns, GError **error);

/* Parses a duration as tm_parse_time_range parses a bound, with an
 * optional sign ("+100us", "-2ms"); `what` names it in the error. */
TM_API bool tm_parse_duration(const char *what, const char *text, int64_t *ns,
                              GError **error);

/* Writes the imported trace to `out` in `options->format`, streaming: the
 * file is written while the model is read, never held whole in memory.
 * False (error set) if a filter is wrong or writing failed. */
TM_API bool tm_session_export(tm_session *session,
                              const tm_export_options *options, FILE *out,
                              GError **error);

/* --- packing archives (core/export/pack.c) ------------------------------ */

/* A machine of a pack. The first machine of tm_pack_options is the
 * reference: the others' clocks are related to its first file. */
typedef struct tm_pack_machine {
  const char *name;
  /* The machine's files read T when the reference's first file reads
   * T + offset_ns (manifest `offset_ns`). */
  bool has_offset;
  int64_t offset_ns;
  /* The clock of the machine's files the relation uses ("BOOTTIME", ...;
   * manifest `clocks.clock`, or `sync_to.clock` on the reference); NULL:
   * the file's own timeline (a clockless file's private clock). A
   * machine other than the reference with a clock is related even
   * without an offset (offset 0). */
  const char *clock;
} tm_pack_machine;

typedef struct tm_pack_file {
  const char *path;
  const char *machine; /* a tm_pack_machine name, or NULL: no machine */
} tm_pack_file;

typedef struct tm_pack_options {
  const tm_pack_file *files;
  size_t n_files;
  const tm_pack_machine *machines;
  size_t n_machines;
  /* Trace time: `trace_time_clock` of the machine's first file (NULL:
   * the import chooses). */
  const char *trace_time_machine;
  const char *trace_time_clock;
  /* "KEY=VALUE" manifest attributes (a VALUE that is an integer is one). */
  const char *const *attributes;
  size_t n_attributes;
  /* An import's budgets (zeros: the defaults): a file stored decompressed
   * is inflated no further than max_inflate_ratio allows, and a trace
   * file is stored no longer than max_member_bytes; the others do not
   * apply (pack opens no archive). A file they cut is stored cut, as an
   * import keeps what it read, and tm_pack_write then fails
   * (TM_ERROR_DAMAGED) after writing the archive. */
  tm_budgets budgets;
} tm_pack_options;

/* The perfetto_manifest (JSON text, g_free) that `options` describe,
 * checked by the same parser and resolver the import runs, against the
 * member names the archive will have. */
TM_API char *tm_pack_manifest(const tm_pack_options *options, GError **error);

/* Writes the archive at `path` (ZIP for .zip, TAR for .tar, gzipped TAR
 * for .tar.gz / .tgz): the manifest first, then every file as a member
 * named after it (a gzip- or otherwise compressed file stored
 * decompressed, without its .gz: a manifest describes traces, not
 * archives). Written under a temporary name beside `path`, renamed once
 * complete. A file that a budget (options->budgets) cut is stored up to
 * the cut; the archive is still written, and the call returns false with
 * TM_ERROR_DAMAGED and the import's message for it (file, byte offset,
 * budget option, and the stat an import counts it under). */
TM_API bool tm_pack_write(const tm_pack_options *options, const char *manifest,
                          const char *path, GError **error);

/* Number of events imported (placed on the timeline), for tools. */
TM_API uint64_t tm_session_event_count(const tm_session *session);

/* ---- ClickHouse: merged runs in a fleet database (docs/clickhouse.md) ----
 *
 * Many imports ("runs"), each under its own run id, loaded into one
 * ClickHouse database over its HTTP interface and queried across runs:
 *
 *   tm_clickhouse *ch = tm_clickhouse_open("clickhouse://host:8123/fleet",
 *                                          &error);
 *   tm_clickhouse_create_schema(ch, &error);   (once per database)
 *   tm_clickhouse_run run = {"2024-05-01-pixel7-17", session};
 *   tm_clickhouse_load(ch, &run, 1, TM_CLICKHOUSE_REFUSE_EXISTING, &error);
 *   tm_clickhouse_query(ch, "SELECT machine, count() FROM slice GROUP BY "
 *                       "machine", NULL, stdout, 0, &error);
 *   tm_clickhouse_free(ch);
 *
 * Errors are GErrors in TRACEMERGE_ERROR, with the codes TM_ERROR_CLICKHOUSE_*
 * (and TM_ERROR_OUTPUT when writing query output fails, as for
 * tm_session_query), whose message names the server, what was being done
 * (the table, the run) and the server's own message. A tm_clickhouse is
 * used from one thread at a time. */

typedef enum tm_clickhouse_load_mode {
  TM_CLICKHOUSE_REFUSE_EXISTING = 0, /* fail if a run id is already loaded */
  TM_CLICKHOUSE_REPLACE = 1,         /* a loaded run is replaced whole */
} tm_clickhouse_load_mode;

/* One run of a load: the session (imported, borrowed for the call) and the
 * id its rows get (UTF-8, 1..256 bytes, no control characters). */
typedef struct tm_clickhouse_run {
  const char *run_id;
  const tm_session *session;
} tm_clickhouse_run;

typedef struct tm_clickhouse tm_clickhouse;

/* Parses `url`; talks to no server yet. NULL with the reason if the URL is
 * not clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE (port 8123 by
 * default; DATABASE a plain identifier). */
TM_API tm_clickhouse *tm_clickhouse_open(const char *url, GError **error);
TM_API void tm_clickhouse_free(tm_clickhouse *ch);

/* Creates the database and every table if missing, and records the
 * schema version; fails if the database holds another version. */
TM_API bool tm_clickhouse_create_schema(tm_clickhouse *ch, GError **error);

/* Fails as tm_clickhouse_load would before sending any row: unusable run
 * ids, the server unreachable, the schema missing or of another version,
 * or (in TM_CLICKHOUSE_REFUSE_EXISTING mode) a run id already loaded, so
 * a tool can say so before importing. The load checks again. */
TM_API bool tm_clickhouse_check(tm_clickhouse *ch,
                                const char *const *run_ids, size_t n_runs,
                                tm_clickhouse_load_mode mode, GError **error);

/* Loads `n_runs` runs: every table of each run is streamed (batched
 * RowBinary, nothing buffered whole) into staging tables, then published
 * as one partition of each table (the load's, column load_id), in one
 * statement per table. A failure before that publishing step leaves no
 * row of any of the runs visible; the loaded runs are visible whole once
 * it returns true. Loading many runs in one call makes one partition
 * where one call per run makes one per run (docs/clickhouse.md: what
 * partitions cost). */
TM_API bool tm_clickhouse_load(tm_clickhouse *ch,
                               const tm_clickhouse_run *runs, size_t n_runs,
                               tm_clickhouse_load_mode mode, GError **error);

/* Rows sent by the last successful tm_clickhouse_load (all tables). */
TM_API uint64_t tm_clickhouse_rows_loaded(const tm_clickhouse *ch);

/* Runs one ClickHouse SQL statement on the database and prints its result
 * as tm_session_query_with_options prints a local one (`options` NULL:
 * CSV; its `interactive` is ignored), ClickHouse's types mapped as
 * docs/clickhouse.md says. The SQL must not end in a FORMAT clause.
 * `timeout_seconds` > 0 stops it (server side) after that long. */
TM_API bool tm_clickhouse_query(tm_clickhouse *ch, const char *sql,
                                const tm_query_options *options, FILE *out,
                                double timeout_seconds, GError **error);

#ifdef __cplusplus
}
#endif

#endif /* TRACEMERGE_H */
