/*
 * The perfetto_manifest: a JSON sidecar that names machines, relates the
 * clocks of files to one another and adds attributes to an import
 * (docs/clock-model.md §9, §10; docs/formats.md §6; docs/sql-surface.md §1,
 * §3).
 *
 * Three steps, each all-or-nothing, each failing with the first error in
 * the reference's validation order (§10.1, "Validation order matters"):
 *
 *  1. parse (manifest_parser_* or manifest_parse): the JSON itself, then
 *     `version` -> `trace_time` syntax and clock -> each `files` entry in
 *     order (path, exported-table rules, `clocks` syntax, machine/machines)
 *     -> `attributes`; then machine allocation: one synthetic raw id per
 *     distinct name, 2^32, 2^32+1, ... in first-appearance order while
 *     walking `files` (an entry's `machine` before its `machines`).
 *  2. resolve (manifest_resolve), once the input's member paths are known:
 *     exported-table presence -> `trace_time` references -> each override's
 *     source machine, reference and member files, in `files` order.
 *  3. apply, by the session, before any trace file is parsed: named machine
 *     rows, the trace-time claim, one two-clock snapshot per override,
 *     `manifest_attribute.<key>` metadata; then, while files parse, the
 *     lazily detected errors of §10.2, whose messages are built here.
 *
 * JSON semantics (as the reference's DOM): a repeated key keeps its last
 * value; unknown keys are ignored at every level; content after the root
 * value is ignored. An "integer" is a JSON number written without fraction
 * or exponent that fits in int64: 1.0 and 1e3 are not integers (so
 * `"offset_ns": 1e3` fails with "offset_ns must be an integer" and a
 * machines id of 1.5 or 7.0 with "machines entries need an integer id ...").
 * An integer literal beyond int64 is "offset_ns is out of range", "machines:
 * id must be in [0, 4294967295]", "version must be an integer", or an
 * attribute that "must be a string or an integer". Strings must be UTF-8
 * (invalid bytes are a JSON error naming the byte offset); they may hold
 * NUL (\u0000), so every comparison uses the length.
 *
 * Invariants: every message is the reference's byte for byte; memory is
 * linear in the input, which is capped at TM_MANIFEST_MAX_BYTES; nothing
 * recurses on the input's nesting (bounded at TM_MANIFEST_MAX_DEPTH), values
 * under unknown keys are skipped without being stored, and every lookup
 * the session makes is O(1) or O(log n), so a huge `files` or `machines`
 * array is never quadratic.
 *
 * Three rules go beyond the reference, because it accepts these silently
 * and they are never what the writer meant: a `sync_to` chain that leads
 * back to its file is an error of step 2 (after every override resolved);
 * a path listed twice with different machines (`machine` / `machines`) is
 * an error of step 1 (after machine allocation; a repeated path with the
 * same machines still uses the first entry); an `offset_ns` beyond
 * +-TM_MANIFEST_MAX_OFFSET_NS is "out of range", as INT64_MIN is.
 */
#ifndef TM_MANIFEST_H
#define TM_MANIFEST_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TM_MANIFEST_MAX_BYTES ((size_t)16 << 20)
#define TM_MANIFEST_MAX_DEPTH 1000
/* The largest |offset_ns|: 2^62 ns, about 146 years, beyond any real
 * clock offset (REALTIME is about 1.8e18 ns since 1970) and far enough
 * from INT64_MAX that offsets along a chain of overrides add exactly. */
#define TM_MANIFEST_MAX_OFFSET_NS (INT64_C(1) << 62)
/* raw_id of the first machine a manifest names (docs/sql-surface.md §1). */
#define TM_MANIFEST_FIRST_RAW_MACHINE_ID (INT64_C(1) << 32)
/* "No named machine": the file's machine is the host (raw_id 0). */
#define TM_MANIFEST_NO_MACHINE UINT32_MAX
#define TM_MANIFEST_NO_MEMBER SIZE_MAX

/* Errors of this module. JSON: the parser's message (no prefix, as the
 * reference propagates its JSON parser's messages). INVALID: §10.1 rows of
 * the parse step; UNRESOLVED: rows #36-#43; APPLY: §10.2 and #26. */
#define TM_MANIFEST_ERROR (manifest_error_quark())
GQuark manifest_error_quark(void);
typedef enum tm_manifest_error_code {
  TM_MANIFEST_ERROR_JSON = 1,
  TM_MANIFEST_ERROR_TOO_LARGE = 2,
  TM_MANIFEST_ERROR_INVALID = 3,
  TM_MANIFEST_ERROR_UNRESOLVED = 4,
  TM_MANIFEST_ERROR_APPLY = 5,
} tm_manifest_error_code;

/* A string as written in the manifest: `str` is NUL-terminated, `len`
 * excludes the terminator and counts any NUL inside. str == NULL: absent. */
typedef struct tm_manifest_string {
  const char *str;
  size_t len;
} tm_manifest_string;

typedef struct tm_manifest_machine {
  tm_manifest_string name;
  int64_t raw_id; /* TM_MANIFEST_FIRST_RAW_MACHINE_ID + index */
} tm_manifest_machine;

/* One `machines` mapping: embedded proto machine_id -> named machine. */
typedef struct tm_manifest_remap {
  uint32_t embedded_id;
  uint32_t machine; /* index in tm_manifest.machines */
} tm_manifest_remap;

/* A `clocks` override: one two-clock snapshot {source: source_reading_ns,
 * reference: sync_reading_ns}, i.e. the source reads T when the reference
 * reads T + offset_ns.
 *   source node: clock != 0 (RELATE): builtin `clock` on machine
 *     `source_machine`, machine-canonical; clock == 0 (PIN): the private
 *     TRACE_FILE clock of member `source_member` on `source_machine`.
 *   reference node: sync_clock != 0: builtin `sync_clock` on machine
 *     `sync_machine`, canonical; else the private TRACE_FILE clock of member
 *     `sync_member` on `sync_machine`.
 * Machines are indexes in tm_manifest.machines, TM_MANIFEST_NO_MACHINE for
 * the host (raw_id 0). Fields after `sync_reading_ns` are set by
 * manifest_resolve. */
typedef struct tm_manifest_clocks {
  tm_manifest_string machine_name;      /* clocks.machine, or absent */
  uint32_t clock;                       /* clocks.clock 1..6; 0 = PIN */
  tm_manifest_string sync_file;         /* sync_to.file, always present */
  tm_manifest_string sync_machine_name; /* sync_to.machine, or absent */
  uint32_t sync_clock;       /* 1..6; 0 = reference's private clock */
  int64_t offset_ns;         /* 0 when absent; never INT64_MIN */
  int64_t source_reading_ns; /* max(0, -offset_ns) */
  int64_t sync_reading_ns;   /* max(0, offset_ns) */

  uint32_t source_machine;
  uint32_t sync_machine;
  uint32_t sync_entry;  /* index in tm_manifest.files of sync_to.file's entry */
  size_t source_member; /* PIN: index in the resolve paths; else NO_MEMBER */
  size_t sync_member;   /* sync_clock 0: index in the paths; else NO_MEMBER */
} tm_manifest_clocks;

/* An internal `__exported_table_schema` entry: validated only; such a
 * member is a serialized table, not a trace. */
typedef struct tm_manifest_exported_table {
  int64_t format;
  tm_manifest_string name;
  uint32_t row_count;
  size_t n_columns;
} tm_manifest_exported_table;

typedef struct tm_manifest_file {
  tm_manifest_string path;
  /* An earlier entry has the same path. A repeated path uses the first
   * entry: a shadowed entry is validated (and its machine names allocated,
   * as the reference walks every entry) but is never applied, and it adds
   * no edge — upstream would add its edge too; we follow the reference's
   * "uses the first entry". */
  bool shadowed;
  bool has_machine;      /* `machine` given (single-machine attribution) */
  bool is_multi_machine; /* a non-empty `machines` */
  bool is_exported_table;
  /* The file's base machine: `machine`, else the `machines` entry of id 0,
   * else TM_MANIFEST_NO_MACHINE (its data stays on the host). */
  uint32_t machine;
  /* `machines`, sorted by embedded_id, one per id (the first mapping of an
   * id wins, also for the base machine — upstream's remap keeps the first
   * but its base machine the last; we keep them consistent). */
  const tm_manifest_remap *remap;
  size_t n_remap;
  const tm_manifest_clocks *clocks;        /* NULL without `clocks` */
  const tm_manifest_exported_table *table; /* NULL unless is_exported_table */
  /* Every machine this entry declares (`machine` and all `machines`
   * names), sorted, unique: the "declared by file" checks. */
  const uint32_t *declared;
  size_t n_declared;
} tm_manifest_file;

/* One `manifest_attribute.<key>` metadata row (global; a key written twice
 * keeps the last value). First-appearance order of keys. */
typedef struct tm_manifest_attribute {
  tm_manifest_string key;
  bool is_int;
  int64_t int_value;
  tm_manifest_string str_value;
} tm_manifest_attribute;

typedef struct tm_manifest_trace_time {
  bool present;
  uint32_t clock;             /* 1..6 */
  tm_manifest_string file;    /* or absent */
  tm_manifest_string machine; /* or absent */
  /* Resolved: the machine whose canonical `clock` becomes trace time. With
   * no `file`, the reference uses machine row 0, which is the first named
   * machine when the manifest names any (named rows are allocated first)
   * and the host otherwise (§9.4, an upstream quirk reproduced here);
   * `implicit_row_zero` says this happened. */
  uint32_t machine_index;
  bool implicit_row_zero;
} tm_manifest_trace_time;

/* Read-only for everyone but this module; owned, free with manifest_free. */
typedef struct tm_manifest {
  int64_t version;
  tm_manifest_trace_time trace_time;
  tm_manifest_file *files; /* in manifest order, shadowed ones included */
  size_t n_files;
  tm_manifest_attribute *attributes;
  size_t n_attributes;
  tm_manifest_machine *machines; /* allocation order = raw id order */
  size_t n_machines;
  bool resolved;
  struct tm_manifest_private *priv;
} tm_manifest;

/* Content detection (docs/formats.md §6.1): after removing every whitespace
 * byte from the first 128 bytes, they start with {"perfetto_manifest". */
bool manifest_detect(const uint8_t *head, size_t len);

/* Streaming parse: feed the manifest's bytes in any chunking, then finish.
 * feed fails (TOO_LARGE) once more than TM_MANIFEST_MAX_BYTES arrived, or
 * on a JSON error. After a failure, or after finish, only
 * manifest_parser_free is valid. */
typedef struct tm_manifest_parser tm_manifest_parser;
tm_manifest_parser *manifest_parser_new(void);
bool manifest_parser_feed(tm_manifest_parser *parser, const uint8_t *data,
                          size_t len, GError **error);
/* Ends the JSON and runs step 1. Returns an owned manifest, or NULL with
 * `error` set. The parser must still be freed. */
tm_manifest *manifest_parser_finish(tm_manifest_parser *parser, GError **error);
void manifest_parser_free(tm_manifest_parser *parser);

/* The same in one call, for a manifest already in memory. */
tm_manifest *manifest_parse(const uint8_t *data, size_t len, GError **error);

void manifest_free(tm_manifest *manifest);

/* Step 2. `paths` are the names of the input's files that exist when the
 * manifest is applied (archive member paths, in trace_file id order; NULL
 * entries, e.g. the root input, are skipped); the first file with a given
 * name is the one an override's member index points to. Call once. */
bool manifest_resolve(tm_manifest *manifest, const char *const *paths,
                      size_t n_paths, GError **error);

/* The entry that applies to a file named `path` (the first with that
 * path), or NULL if the manifest does not list it. */
const tm_manifest_file *manifest_borrow_file(const tm_manifest *manifest,
                                             const char *path);

/* For a file with `machines`: the named machine of embedded `machine_id`.
 * False if the id is not declared (then raise
 * manifest_error_undeclared_machine). */
bool manifest_file_remap(const tm_manifest_file *file, uint32_t embedded_id,
                         uint32_t *machine);

/* True if the entry carries an override that a container or manifest
 * member cannot take (`clocks` or `machine`, §10.2). */
bool manifest_file_has_override(const tm_manifest_file *file);

/* True if the entry PINs the file's private clock (`clocks` without
 * `clocks.clock`): the file must then use a single clock and a single
 * machine (§9.3). */
bool manifest_file_is_pinned(const tm_manifest_file *file);

/* "REALTIME" .. "BOOTTIME" for 1..6, NULL otherwise. */
const char *manifest_clock_name(uint32_t clock_id);

/* #43 for a member that resolve could not find among `paths` (domain
 * TM_MANIFEST_ERROR, code UNRESOLVED); manifest_resolve raises it too. A
 * session that resolves before a streamed archive has listed every member
 * raises it itself once the input is read. */
GError *manifest_error_unresolved_member(const char *path);

/* The errors raised outside the manifest itself (§10.2 and #26), each a
 * new GError (domain TM_MANIFEST_ERROR, code APPLY) with the exact text. */
GError *manifest_error_multiple_manifests(void);
GError *manifest_error_not_first(void);
GError *manifest_error_override_on_container(const char *path);
GError *manifest_error_pinned_clock_snapshot(void);
GError *manifest_error_undeclared_machine(uint32_t machine_id);
GError *manifest_error_machine_on_multi_machine_file(void);
GError *manifest_error_clocks_on_multi_machine_file(void);

#endif /* TM_MANIFEST_H */
