/*
 * The model: every table the SQL surface exposes, as in-memory rows.
 *
 * The model is the one place the host keeps imported data. Readers fill
 * the identity tables (machine, process, thread, track, args, metadata,
 * stats, trace_file) through the session while they parse; the model
 * builder fills the event tables (slice, counter, flow) from the sorter's
 * merged stream, so their ids follow the merged timeline. The SQL surface
 * reads the rows in place through virtual tables: nothing is copied into
 * SQLite.
 *
 * Conventions: a row's id is its index. uint32 id columns use TM_NULL_ID
 * for NULL; string columns hold string-pool ids (0 = NULL); int64 columns
 * that may be NULL use TM_NULL_INT64; arg_set_id 0 = NULL. All rows are
 * owned by the model and freed by model_free().
 */
#ifndef TM_MODEL_H
#define TM_MODEL_H

#include <stdbool.h>
#include <glib.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

#include "base/string_pool.h"
#include "base/vec.h"
#include "model/arg_text.h"
#include "model/thread_times.h"

#define TM_NULL_INT64 INT64_MIN

typedef struct tm_machine_row {
  int64_t raw_id;
  tm_str_id name;
  tm_str_id sysname, release, version, arch;
  int64_t num_cpus; /* TM_NULL_INT64 if unknown */
  tm_str_id android_build_fingerprint, android_device_manufacturer;
  int64_t android_sdk_version;
  int64_t system_ram_bytes;
  int64_t system_ram_gb;
} tm_machine_row;

typedef struct tm_trace_file_row {
  uint32_t parent_id;        /* TM_NULL_ID for a root input */
  tm_str_id name;            /* member path; path as given for root inputs */
  int64_t size;              /* bytes fed to this file's parser */
  tm_str_id trace_type;      /* "unknown" until detected */
  int64_t processing_order;  /* TM_NULL_INT64 if never parsed */
  bool is_container;
} tm_trace_file_row;

typedef enum tm_metadata_key_type {
  TM_METADATA_SINGLE = 0,
  TM_METADATA_MULTI = 1,
} tm_metadata_key_type;

typedef struct tm_metadata_row {
  tm_str_id name;
  uint8_t key_type;  /* tm_metadata_key_type */
  bool is_int;       /* int_value set, else str_value */
  int64_t int_value;
  tm_str_id str_value;
  uint32_t machine_id; /* TM_NULL_ID for non-machine keys */
  uint32_t trace_id;   /* TM_NULL_ID for non-trace keys */
} tm_metadata_row;

/* The 64-bit fields first: 40 bytes, no padding. Every (file, machine)
 * has ~150 of these rows (core/base/stats.h), so their size is most of
 * what a tiny archive member costs. */
typedef struct tm_stats_row {
  int64_t idx; /* TM_NULL_INT64 for single-value stats */
  int64_t value;
  tm_str_id name;
  tm_str_id severity;    /* "info", "notice", "data_loss", "error" */
  tm_str_id source;      /* "trace", "analysis" */
  tm_str_id description;
  uint32_t machine_id;   /* TM_NULL_ID for global stats */
  uint32_t trace_id;     /* TM_NULL_ID for global stats */
} tm_stats_row;
_Static_assert(sizeof(tm_stats_row) == 40, "tm_stats_row must stay 40 bytes");

/* One import-log entry (docs/sql-surface.md §5): the details of one occurrence
 * of a stat, written with it by stats_log() (core/model/stats.h). */
typedef struct tm_import_log_row {
  uint32_t trace_id;   /* TM_NULL_ID if no file */
  uint32_t stat_id;    /* the model->stats row the occurrence counted in */
  int64_t ts;          /* trace time, TM_NULL_INT64 if none */
  int64_t byte_offset; /* in the file, TM_NULL_INT64 if unknown */
  uint32_t arg_set_id; /* 0: no args */
} tm_import_log_row;

typedef struct tm_clock_snapshot_row {
  int64_t ts;           /* trace time */
  int64_t clock_id;     /* raw clock number */
  tm_str_id clock_name; /* builtin names for 1..6, else 0 */
  int64_t clock_value;  /* ns */
  int64_t snapshot_id;
  uint32_t machine_id;
} tm_clock_snapshot_row;

typedef struct tm_process_row {
  int64_t pid;
  tm_str_id name;
  int64_t start_ts, end_ts; /* TM_NULL_INT64 if unknown */
  uint32_t parent_upid;     /* TM_NULL_ID */
  int64_t uid, android_appid, android_user_id; /* TM_NULL_INT64 */
  tm_str_id cmdline;
  uint32_t arg_set_id;
  uint32_t machine_id;
} tm_process_row;

typedef struct tm_thread_row {
  int64_t tid;
  tm_str_id name;
  int64_t start_ts, end_ts; /* TM_NULL_INT64 if unknown */
  uint32_t upid;            /* TM_NULL_ID if unknown */
  int8_t is_main_thread;    /* -1 = NULL */
  int8_t is_idle;
  uint32_t machine_id;
  uint32_t arg_set_id;
} tm_thread_row;

typedef enum tm_track_event_type {
  TM_TRACK_SLICE = 0,
  TM_TRACK_COUNTER = 1,
  TM_TRACK_STATE = 2,
} tm_track_event_type;

typedef struct tm_track_row {
  tm_str_id name;
  tm_str_id type;
  uint32_t dimension_arg_set_id;
  uint32_t parent_id;         /* TM_NULL_ID */
  uint32_t source_arg_set_id;
  uint32_t machine_id;
  uint32_t track_group_id;    /* TM_NULL_ID */
  uint8_t event_type;         /* tm_track_event_type */
  tm_str_id counter_unit;
  uint32_t utid;              /* TM_NULL_ID unless a thread dimension */
  uint32_t upid;              /* TM_NULL_ID unless a process dimension */
  uint32_t trace_id;          /* file the track was interned for */
  tm_str_id dimension_scope;  /* async scope dimension, or 0 */
  uint32_t cpu_dimension;     /* ucpu + 1 of a cpu track, 0 if none */
} tm_track_row;

/* 28 bytes, no 64-bit field: the slice table is the largest the model
 * builds. What every slice has a full word for is stored; the rest is
 * narrower or derived, read through the model_slice_*() accessors:
 * - ts: rows come in trace-time order (the model builder's), so a row
 *   keeps its distance from the first row of its block of
 *   TM_SLICE_TS_BLOCK rows (model->slice_ts_base); a distance that is
 *   negative or 2^31 or more (rows added out of order, a block spanning
 *   seconds) is a TM_SLICE_WIDE index into model->slice_wide.
 * - dur: below 2^31 in the row, -1 as TM_SLICE_DUR_OPEN, any other value
 *   a TM_SLICE_WIDE index into model->slice_wide.
 * - category: an index into model->slice_categories (a trace has few
 *   distinct categories); TM_SLICE_CATEGORY_ESCAPE beyond 65534 of them,
 *   the category then in model->slice_category_escapes by slice id.
 * - depth: the builder nests at most 512 deep (model_builder.c).
 * Thread time (not every slice has it) lives in
 * tm_model.slice_thread_times. Add rows with model_add_slice(). */
typedef struct tm_slice_row {
  uint32_t ts_code;
  uint32_t dur_code;
  uint32_t track_id;
  tm_str_id name;
  uint32_t parent_id; /* TM_NULL_ID */
  uint32_t arg_set_id;
  uint16_t category_code;
  uint16_t depth;
} tm_slice_row;

_Static_assert(sizeof(tm_slice_row) == 28, "tm_slice_row must stay 28 bytes");

#define TM_SLICE_TS_BLOCK_SHIFT 6
#define TM_SLICE_TS_BLOCK (1u << TM_SLICE_TS_BLOCK_SHIFT)
/* A ts_code or dur_code with this bit set (and not all ones) is an index
 * into model->slice_wide. */
#define TM_SLICE_WIDE 0x80000000u
#define TM_SLICE_DUR_OPEN UINT32_MAX
#define TM_SLICE_CATEGORY_ESCAPE UINT16_MAX

/* A slice's category beyond the first 65534 distinct ones. */
typedef struct tm_slice_category_escape {
  uint32_t slice_id;
  tm_str_id category;
} tm_slice_category_escape;

typedef struct tm_counter_row {
  int64_t ts;
  double value;
  uint32_t track_id;
  uint32_t arg_set_id;
} tm_counter_row;

typedef struct tm_flow_row {
  uint32_t slice_out;
  uint32_t slice_in;
  int64_t trace_id; /* the flow's own id; TM_NULL_INT64 for inferred flows */
  uint32_t arg_set_id;
} tm_flow_row;

/* cpu (docs/sql-surface.md §14); the row id is the ucpu. */
typedef struct tm_cpu_row {
  uint32_t cpu; /* index on its machine */
  uint32_t machine_id;
} tm_cpu_row;

/* sched_slice: one thread running on one cpu (core/model/sched_builder.h). */
typedef struct tm_sched_row {
  int64_t ts;
  int64_t dur; /* -1 while the thread still runs at the end */
  uint32_t ucpu;
  uint32_t utid;
  tm_str_id end_state; /* prev_state of the switch that ended it, or 0 */
  int32_t priority;    /* the switch's next_prio: an int32 in the kernel */
} tm_sched_row;        /* 32 bytes: one a context switch */

/* thread_state: what a thread was doing between two scheduling events.
 * io_wait and blocked_function, which only a sched_blocked_reason sets on
 * a sleep, live beside the table (tm_thread_state_blocked; read them with
 * tm_thread_state_io_wait() and tm_thread_state_blocked_function()), so
 * that a row is 40 bytes: one to three a context switch. */
typedef struct tm_thread_state_row {
  int64_t ts;
  int64_t dur;         /* -1 if still in that state at the end */
  uint32_t ucpu;       /* TM_NULL_ID unless running */
  uint32_t utid;
  tm_str_id state;     /* "Running", or the kernel's letters ("S", "R+") */
  uint32_t waker_utid; /* TM_NULL_ID */
  uint32_t waker_id;   /* TM_NULL_ID: the waker's thread_state row */
  uint32_t blocked;    /* 0 (both NULL), or 1 + its thread_state_blocked row */
} tm_thread_state_row;

/* What a sched_blocked_reason said of a sleeping thread_state row. */
typedef struct tm_thread_state_blocked {
  tm_str_id function; /* blocked_function; 0 = NULL */
  int8_t io_wait;     /* -1 = NULL */
} tm_thread_state_blocked;

/* --- system traces (core/model/system_builder.h) ------------------------ */

/* ftrace_event (trace_processor's raw): one kernel event not otherwise
 * modelled, its fields as args. */
typedef struct tm_ftrace_event_row {
  int64_t ts;
  tm_str_id name;
  uint32_t ucpu;       /* TM_NULL_ID */
  uint32_t utid;       /* TM_NULL_ID */
  uint32_t arg_set_id;
} tm_ftrace_event_row;

/* android_logs: one logcat message. */
typedef struct tm_android_log_row {
  int64_t ts;
  uint32_t utid;       /* TM_NULL_ID */
  uint32_t prio;
  tm_str_id tag;
  tm_str_id msg;
  uint32_t arg_set_id;
} tm_android_log_row;

/* package_list: one installed package. */
typedef struct tm_package_row {
  tm_str_id package_name;
  int64_t uid;
  int8_t debuggable;              /* -1 = NULL */
  int8_t profileable_from_shell;  /* -1 = NULL */
  int64_t version_code;           /* TM_NULL_INT64 */
  uint32_t machine_id;
} tm_package_row;

/* The columns of one expected or actual frame timeline slice; the slice
 * row itself is model->slices[slice_id] (TM_NULL_ID until the merge
 * creates it, or if its event was dropped). */
typedef struct tm_frame_timeline_row {
  uint32_t slice_id;
  uint8_t is_actual;
  int8_t on_time_finish;  /* -1 = NULL */
  int8_t gpu_composition; /* -1 = NULL */
  int64_t display_frame_token; /* TM_NULL_INT64 */
  int64_t surface_frame_token; /* TM_NULL_INT64 */
  uint32_t upid;               /* TM_NULL_ID */
  tm_str_id layer_name;
  tm_str_id present_type, jank_type, jank_severity_type, prediction_type;
  tm_str_id jank_tag;
} tm_frame_timeline_row;

/* Profiling rows (docs/sql-surface.md §15; core/model/profile_builder.h). */

/* An interning index of one kind of profiling row: open addressing over
 * row id + 1 (0: empty), the keys read back from the rows. */
typedef struct tm_profile_index {
  uint32_t *slots;
  size_t cap; /* 0 or a power of two */
  size_t len;
} tm_profile_index;

typedef struct tm_stack_profile_mapping_row {
  tm_str_id build_id;
  int64_t exact_offset, start_offset, start, end, load_bias;
  tm_str_id name;
} tm_stack_profile_mapping_row;

typedef struct tm_stack_profile_frame_row {
  tm_str_id name;
  uint32_t mapping; /* TM_NULL_ID */
  int64_t rel_pc;
} tm_stack_profile_frame_row;

typedef struct tm_stack_profile_callsite_row {
  uint32_t depth;
  uint32_t parent_id; /* TM_NULL_ID at depth 0 */
  uint32_t frame_id;
} tm_stack_profile_callsite_row;

typedef struct tm_cpu_profile_sample_row {
  int64_t ts;
  uint32_t callsite_id; /* TM_NULL_ID */
  uint32_t utid;
} tm_cpu_profile_sample_row;

/* A sample of a perf-event profiler (PerfSample packets): trace_processor's
 * perf_sample. */
typedef struct tm_perf_sample_row {
  int64_t ts;
  uint32_t utid;
  uint32_t callsite_id; /* TM_NULL_ID */
  int64_t cpu;          /* TM_NULL_INT64 */
} tm_perf_sample_row;

typedef struct tm_instruments_sample_row {
  int64_t ts;
  uint32_t utid;
  uint32_t callsite_id; /* TM_NULL_ID */
  int64_t cpu;          /* TM_NULL_INT64 */
} tm_instruments_sample_row;

/* One distinct (key, value type, storage) triple of the args table. Rows
 * name theirs by index (tm_arg_row.key_id): a trace repeats a few hundred
 * keys over millions of rows, so the key, its flat key, the type and where
 * the value is are stored once per triple instead of in every row
 * (model_arg_key()). */
typedef struct tm_arg_key {
  tm_str_id key;
  tm_str_id flat_key; /* key without array indexes ("a[2].b" -> "a.b") */
  uint8_t value_type; /* tm_arg_type */
  /* A string value is in model->arg_text (tm_arg_row.value is its
   * handle), not in the string pool (value is the str_id). Read it with
   * model_arg_string(). */
  bool in_text;
  /* The value is model->arg_wide.data[tm_arg_row.value]: a real, or an
   * integer outside int32_t (others are the row's value, sign-extended). */
  bool wide;
  uint8_t type_bits; /* value_type | storage flags: model_add_arg()'s memo */
} tm_arg_key;

/* Or'ed into tm_arg_value.type for model_add_arg(): the value is a string
 * (TM_ARG_STRING or TM_ARG_JSON) stored by arg_text_add(&model->arg_text),
 * its handle in u.int_value. The host adds readers' args_add_string()
 * values so, to keep values seen once out of the string pool. */
#define TM_ARG_IN_TEXT 0x40

/* 8 bytes: the args table is the model's largest with the slices (a
 * realistic Chrome JSON trace has ~2.2 rows an event). The row's set is
 * not stored: sets are made one after the other, each in consecutive
 * rows, so a row's set is found from model->arg_set_first_row and the
 * few rows added to an older set later (model->arg_set_resumed):
 * model_arg_set_id(). */
typedef struct tm_arg_row {
  uint32_t key_id; /* index into tm_model.arg_keys */
  uint32_t value;  /* how to read it: model_arg_key(...)->in_text, wide */
} tm_arg_row;

_Static_assert(sizeof(tm_arg_row) == 8, "tm_arg_row must stay 8 bytes");

/* The value of an arg row of a wide key. */
typedef union tm_arg_wide {
  int64_t int_value;
  double real_value;
} tm_arg_wide;

/* A row added to a set other than the one of the row before it, when the
 * set is not new: that row and those after it up to the next boundary
 * belong to `arg_set_id`. */
typedef struct tm_arg_set_resume {
  uint32_t row;
  uint32_t arg_set_id;
} tm_arg_set_resume;

typedef struct tm_model {
  tm_string_pool *strings; /* owned */
  TM_VEC(tm_machine_row) machines;
  TM_VEC(tm_trace_file_row) trace_files;
  TM_VEC(tm_metadata_row) metadata;
  TM_VEC(tm_stats_row) stats;
  TM_VEC(tm_import_log_row) import_logs;
  TM_VEC(tm_clock_snapshot_row) clock_snapshots;
  TM_VEC(tm_process_row) processes;
  TM_VEC(tm_thread_row) threads;
  TM_VEC(tm_track_row) tracks;
  TM_VEC(tm_slice_row) slices;
  /* The ts of the first row of every block of TM_SLICE_TS_BLOCK slices. */
  TM_VEC(int64_t) slice_ts_base;
  /* ts and dur values that do not fit their row's 32 bits. */
  TM_VEC(int64_t) slice_wide;
  /* Distinct slice categories by tm_slice_row.category_code (code 0 is
   * NULL; empty until the first category); slice_category_index maps a category to its code + 1 (owned,
   * NULL until the first category), slice_category_memo caches it. */
  TM_VEC(tm_str_id) slice_categories;
  GHashTable *slice_category_index;
  uint32_t slice_category_memo[256];
  /* By slice id (increasing): categories of TM_SLICE_CATEGORY_ESCAPE rows. */
  TM_VEC(tm_slice_category_escape) slice_category_escapes;
  /* Thread time by slice id (model/thread_times.h): slice.thread_ts and
   * thread_dur are NULL for every slice without an entry. */
  tm_thread_times slice_thread_times;
  TM_VEC(tm_counter_row) counters;
  TM_VEC(tm_flow_row) flows;
  TM_VEC(tm_arg_row) args;
  TM_VEC(tm_arg_key) arg_keys; /* by tm_arg_row.key_id */
  tm_arg_text arg_text;        /* string values kept out of the pool */
  /* Values of wide keys (reals, integers beyond 32 bits), by tm_arg_row.value. */
  TM_VEC(tm_arg_wide) arg_wide;
  /* Scheduling (core/model/sched_builder.h). cpu_lookup maps machine_id *
   * (TM_SCHED_MAX_CPU + 1) + cpu to ucpu + 1 (0: no row yet). */
  TM_VEC(tm_cpu_row) cpus;
  TM_VEC(tm_sched_row) sched_slices;
  TM_VEC(tm_thread_state_row) thread_states;
  TM_VEC(tm_thread_state_blocked) thread_state_blocked; /* by row.blocked - 1 */
  TM_VEC(uint32_t) cpu_lookup;
  /* Profiling (core/model/profile_builder.h); profile_rows interns the
   * identity rows (indexes only profile_builder.c reads and writes). */
  TM_VEC(tm_stack_profile_mapping_row) stack_profile_mappings;
  TM_VEC(tm_stack_profile_frame_row) stack_profile_frames;
  TM_VEC(tm_stack_profile_callsite_row) stack_profile_callsites;
  TM_VEC(tm_cpu_profile_sample_row) cpu_profile_samples;
  TM_VEC(tm_instruments_sample_row) instruments_samples;
  TM_VEC(tm_perf_sample_row) perf_samples;
  tm_profile_index profile_rows[3]; /* mappings, frames, callsites */
  /* System traces (core/model/system_builder.h). */
  TM_VEC(tm_ftrace_event_row) ftrace_events;
  TM_VEC(tm_android_log_row) android_logs;
  TM_VEC(tm_package_row) packages;
  TM_VEC(tm_frame_timeline_row) frame_timeline;
  uint32_t next_arg_set_id; /* arg set ids start at 1 */
  /* Row of model->args where each set begins, by set id (sets built by one
   * commit are consecutive rows; sets grown later with model_add_arg on an
   * old id, e.g. process args, are not). Increasing: a new set begins at
   * the end of the table. */
  TM_VEC(uint32_t) arg_set_first_row;
  /* Rows that went on an older set than the row before them, in row order
   * (model_arg_set_id()); arg_set_last is the set of the last row. */
  TM_VEC(tm_arg_set_resume) arg_set_resumed;
  uint32_t arg_set_last;
  /* model_add_arg's memo of key ids: the slot of a hash of (key, type)
   * holds the key id + 1 of the last pair that landed there (0: none);
   * misses go to arg_key_index, (key << 8 | type) -> key id + 1, owned.
   * Events repeat a few hundred arg keys millions of times; 1024 slots
   * keep the realistic Chrome JSON's from evicting each other. */
  uint32_t arg_key_memo[1024];
  GHashTable *arg_key_index;
  /* Single-key metadata rows by (name, machine, trace): key -> row id + 1,
   * owned. Rows pushed directly onto `metadata` are indexed on the next
   * lookup (metadata_indexed counts the rows seen), the first of equal
   * keys winning, as a scan would. */
  GHashTable *metadata_index;
  size_t metadata_indexed;
  /* trace_bounds, set by model_finalize(). */
  int64_t bounds_start;
  int64_t bounds_end;
} tm_model;

tm_model *model_new(void);
void model_free(tm_model *model);

/* A thread_state row's io_wait (-1: NULL) and blocked_function (0: NULL). */
static inline int8_t tm_thread_state_io_wait(const tm_model *model,
                                             const tm_thread_state_row *row) {
  return row->blocked ? model->thread_state_blocked.data[row->blocked - 1].io_wait : -1;
}
static inline tm_str_id tm_thread_state_blocked_function(const tm_model *model,
                                                         const tm_thread_state_row *row) {
  return row->blocked ? model->thread_state_blocked.data[row->blocked - 1].function : 0;
}

/* Row constructors: append a row with every nullable column NULL and
 * return its id. */
uint32_t model_add_machine(tm_model *model, int64_t raw_id);
uint32_t model_add_process(tm_model *model, uint32_t machine_id, int64_t pid);
uint32_t model_add_thread(tm_model *model, uint32_t machine_id, int64_t tid,
                          uint32_t upid);
uint32_t model_add_trace_file(tm_model *model, uint32_t parent_id,
                              const char *name, bool is_container);

/* Appends an import-log row for stats row `stat_id` with ts, byte offset
 * and args NULL; returns its id. */
uint32_t model_add_import_log(tm_model *model, uint32_t stat_id,
                              uint32_t trace_id);

/* Sets (replaces, for 'single' keys with the same name, machine and trace)
 * a metadata row. */
void model_metadata_set_int(tm_model *model, const char *name,
                            uint32_t machine_id, uint32_t trace_id,
                            int64_t value);
void model_metadata_set_string(tm_model *model, const char *name,
                               uint32_t machine_id, uint32_t trace_id,
                               tm_str_id value);

/* The value model_add_arg() takes for a string arg of `type` (TM_ARG_STRING
 * or TM_ARG_JSON) of `len` bytes of `s`, none of them NUL: stored in the
 * arg text (flagged TM_ARG_IN_TEXT), or interned in the string pool once
 * the arg text has no handle left. */
static inline tm_arg_value model_arg_text_value(tm_model *model, tm_arg_type type,
                                                const char *s, size_t len) {
  tm_arg_value value = {.type = type};
  uint32_t handle = arg_text_add(&model->arg_text, s, len);
  if (handle == ARG_TEXT_FULL) {
    value.u.str_id = string_pool_intern(model->strings, s, len);
  } else {
    value.type = (tm_arg_type)(type | TM_ARG_IN_TEXT);
    value.u.int_value = handle;
  }
  return value;
}

/* Appends one arg to set `arg_set_id` (0: a new set), deriving the flat key
 * from `key`; returns the set id. `value.type` may carry TM_ARG_IN_TEXT. */
uint32_t model_add_arg(tm_model *model, uint32_t arg_set_id, tm_str_id key,
                       tm_arg_value value);

/* The key, flat key and value type of arg row `row`, owned by the model. */
static inline const tm_arg_key *model_arg_key(const tm_model *model,
                                              const tm_arg_row *row) {
  return &model->arg_keys.data[row->key_id];
}

/* The set of arg row `row` (an index of model->args): O(log sets). */
uint32_t model_arg_set_id(const tm_model *model, size_t row);

/* The set of every arg row, in row order: a g_malloc'd array of
 * model->args.len entries (at least one), for a walk over all rows. */
uint32_t *model_arg_set_ids_new(const tm_model *model);

/* The rows [*first, *end) of set `arg_set_id` made in one piece when it
 * began (rows added to it later, after other sets, are not among them);
 * false for a set that does not exist. */
bool model_arg_set_first_rows(const tm_model *model, uint32_t arg_set_id,
                              size_t *first, size_t *end);

/* The integer value of an integer arg row (TM_ARG_INT, UINT, POINTER,
 * BOOL). */
static inline int64_t model_arg_int(const tm_model *model, const tm_arg_row *row) {
  if (model_arg_key(model, row)->wide)
    return model->arg_wide.data[row->value].int_value;
  return (int32_t)row->value;
}

/* The value of a TM_ARG_REAL arg row. */
static inline double model_arg_real(const tm_model *model, const tm_arg_row *row) {
  return model->arg_wide.data[row->value].real_value;
}

/* The string value of arg row `row` (TM_ARG_STRING or TM_ARG_JSON) and its
 * length, owned by the model; NULL (length 0) for a NULL string. */
static inline const char *model_arg_string(const tm_model *model,
                                           const tm_arg_row *row,
                                           size_t *len) {
  if (model_arg_key(model, row)->in_text) {
    const char *s = arg_text_borrow(&model->arg_text, row->value);
    *len = arg_text_length(s);
    return s;
  }
  const char *s = string_pool_borrow(model->strings, row->value);
  *len = s ? string_pool_length(model->strings, row->value) : 0;
  return s;
}

/* Appends a copy of arg row `row` (of any set) to set `arg_set_id`, which
 * exists. */
void model_copy_arg(tm_model *model, uint32_t arg_set_id, size_t row);

/* The slow paths of model_add_slice() and model_slice_set_dur(): the
 * code of a value kept in model->slice_wide (entry `code` of the row
 * reused when it names one), and the category code of a category the
 * memo does not know. */
uint32_t model_slice_wide_code(tm_model *model, int64_t v, uint32_t code);
uint16_t model_slice_category_lookup(tm_model *model, uint32_t slice_id,
                                     tm_str_id category);

static inline uint32_t *model_slice_category_memo(tm_model *model,
                                                  tm_str_id category) {
  return &model->slice_category_memo[(category * 0x9E3779B1u) >> 24];
}

/* dur's code; `code` is the row's current one (0 for a new row). */
static inline uint32_t model_slice_dur_code(tm_model *model, int64_t dur,
                                            uint32_t code) {
  if ((uint64_t)dur < TM_SLICE_WIDE)
    return (uint32_t)dur;
  if (dur == -1)
    return TM_SLICE_DUR_OPEN;
  return model_slice_wide_code(model, dur, code);
}

/* Appends a slice row; returns its id. depth <= UINT16_MAX. Inline: the
 * model builder adds one per slice event. */
static inline uint32_t model_add_slice(tm_model *model, int64_t ts, int64_t dur,
                                       uint32_t track_id, tm_str_id category,
                                       tm_str_id name, uint32_t depth,
                                       uint32_t parent_id, uint32_t arg_set_id) {
  g_assert(depth <= UINT16_MAX && model->slices.len < UINT32_MAX);
  uint32_t id = (uint32_t)model->slices.len;
  if (id % TM_SLICE_TS_BLOCK == 0)
    tm_vec_push(&model->slice_ts_base, ts);
  /* In unsigned arithmetic, as model_slice_ts() adds it back. */
  uint64_t delta =
      (uint64_t)ts - (uint64_t)model->slice_ts_base.data[id >> TM_SLICE_TS_BLOCK_SHIFT];
  uint16_t category_code = 0;
  if (category) {
    uint32_t memo = *model_slice_category_memo(model, category);
    category_code = memo && model->slice_categories.data[memo - 1] == category
                        ? (uint16_t)(memo - 1)
                        : model_slice_category_lookup(model, id, category);
  }
  tm_slice_row row = {
      .ts_code = delta < TM_SLICE_WIDE ? (uint32_t)delta
                                       : model_slice_wide_code(model, ts, 0),
      .dur_code = model_slice_dur_code(model, dur, 0),
      .track_id = track_id,
      .name = name,
      .parent_id = parent_id,
      .arg_set_id = arg_set_id,
      .category_code = category_code,
      .depth = (uint16_t)depth,
  };
  tm_vec_push_populated(&model->slices, row);
  return id;
}

/* Sets the duration of slice `slice_id`. */
static inline void model_slice_set_dur(tm_model *model, uint32_t slice_id,
                                       int64_t dur) {
  tm_slice_row *row = &model->slices.data[slice_id];
  row->dur_code = model_slice_dur_code(model, dur, row->dur_code);
}

/* The id of slice row `row`, a pointer into model->slices. */
static inline uint32_t model_slice_id(const tm_model *model,
                                      const tm_slice_row *row) {
  return (uint32_t)(row - model->slices.data);
}

static inline int64_t model_slice_ts(const tm_model *model, uint32_t slice_id) {
  uint32_t code = model->slices.data[slice_id].ts_code;
  if (code & TM_SLICE_WIDE)
    return model->slice_wide.data[code & ~TM_SLICE_WIDE];
  /* Unsigned: the distance was taken so (model_add_slice()). */
  return (int64_t)((uint64_t)model->slice_ts_base.data[slice_id >> TM_SLICE_TS_BLOCK_SHIFT] +
                   code);
}

/* -1 while (or if never) ended. */
static inline int64_t model_slice_dur(const tm_model *model,
                                      const tm_slice_row *row) {
  uint32_t code = row->dur_code;
  if (!(code & TM_SLICE_WIDE))
    return code;
  if (code == TM_SLICE_DUR_OPEN)
    return -1;
  return model->slice_wide.data[code & ~TM_SLICE_WIDE];
}

tm_str_id model_slice_category_escaped(const tm_model *model, uint32_t slice_id);

static inline tm_str_id model_slice_category(const tm_model *model,
                                             uint32_t slice_id) {
  uint16_t code = model->slices.data[slice_id].category_code;
  if (code == 0)
    return 0;
  if (code == TM_SLICE_CATEGORY_ESCAPE)
    return model_slice_category_escaped(model, slice_id);
  return model->slice_categories.data[code];
}

/* Whether slice `slice_id` has thread time; if so its thread_ts and
 * thread_dur (each TM_NULL_INT64 if unknown) are stored through the
 * pointers. */
bool model_slice_thread_time(const tm_model *model, uint32_t slice_id,
                             int64_t *thread_ts, int64_t *thread_dur);
/* Sets the thread time of slice `slice_id` (TM_NULL_INT64 for unknown).
 * Setting it for the newest slice or replacing it, as the model builder
 * does, is O(1). */
void model_slice_set_thread_time(tm_model *model, uint32_t slice_id,
                                 int64_t thread_ts, int64_t thread_dur);

/* Computes trace_bounds over the event tables. */
void model_finalize(tm_model *model);

#endif /* TM_MODEL_H */
