/*
 * The SQL surface: one generic SQLite virtual-table module ("tm_rows")
 * that reads the model's row arrays in place, driven by a descriptor per
 * table (column name, SQL type, how to read the column from a row), plus
 * the public views of docs/sql-surface.md over those tables.
 *
 * Invariants:
 * - Nothing is copied into SQLite: building the surface costs a fixed
 *   number of CREATE statements whatever the model's size. Strings are
 *   handed to SQLite as static text, which is safe because string-pool
 *   bytes never move while the pool lives, and the model outlives the
 *   surface.
 * - A row's id is its index in the model's array; SQLite's rowid is the
 *   same number.
 * - Equality on `id`/rowid is a direct row access; equality on a column
 *   flagged `indexed` uses a permutation of the row ids sorted by
 *   (value, id), built on first use and kept until the surface is freed.
 *   Rows whose value is NULL are not in the permutation (`= NULL` never
 *   matches). Everything else is a scan in id order. SQLite re-checks
 *   every constraint on the rows we return (we never set `omit`), so a
 *   plan may return a superset, never a subset, of the matching rows.
 */
#include "sql/sql_surface.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <unistd.h>
#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <string.h>

#include "sql/perfetto_sql.h"
#include "sql/sql_connection.h"
#include "sql/sql_output.h"

struct tm_sql_surface {
  sql_connection *connection;
  sqlite3 *db; /* borrowed from `connection` */
  const tm_model *model; /* borrowed */
  tm_perfetto_sql *perfetto_sql;
  double timeout_seconds; /* per sql_surface_query(); 0: none */
};

/* ---- column descriptors -------------------------------------------------- */

typedef enum column_kind {
  COL_ID,       /* the row index */
  COL_INT64,    /* int64_t; TM_NULL_INT64 is NULL */
  COL_UINT32,   /* uint32_t, never NULL */
  COL_REF,      /* uint32_t row id; TM_NULL_ID is NULL */
  COL_ARG_SET,  /* uint32_t arg set id; 0 is NULL */
  COL_ROW_ARG_SET, /* an args row's set, from its id (model_arg_set_id) */
  COL_STRING,   /* tm_str_id; 0 is NULL */
  COL_DOUBLE,   /* double */
  COL_BOOL,     /* bool, as 0/1 */
  COL_INT8,     /* int8_t; negative is NULL */
  COL_INT32,    /* int32_t, never NULL */
  COL_NULL,     /* always NULL: a column the model does not fill */
  COL_COMPUTED, /* derived from several fields by `compute` */
} column_kind;

typedef void (*column_compute_fn)(const tm_model *model, const void *row,
                                  sqlite3_context *ctx);

typedef struct column_def {
  const char *name;
  const char *sql_type;
  column_kind kind;
  size_t offset;
  bool indexed; /* only integer kinds */
  column_compute_fn compute;
} column_def;

typedef struct table_def {
  const char *name; /* the storage name, __intrinsic_<x> */
  const void *(*rows)(const tm_model *model, size_t *count);
  size_t row_size;
  const column_def *columns; /* columns[0] is the id */
  size_t n_columns;
} table_def;

#define COL(T, field, kind, type, indexed)                                  \
  { #field, type, kind, offsetof(T, field), indexed, NULL }
#define COL_ID_DEF { "id", "INTEGER", COL_ID, 0, false, NULL }
#define INT64(T, f) COL(T, f, COL_INT64, "INTEGER", false)
#define UINT32(T, f) COL(T, f, COL_UINT32, "INTEGER", false)
#define REF(T, f) COL(T, f, COL_REF, "INTEGER", false)
#define REF_INDEXED(T, f) COL(T, f, COL_REF, "INTEGER", true)
#define ARG_SET(T, f) COL(T, f, COL_ARG_SET, "INTEGER", false)
#define ARG_SET_INDEXED(T, f) COL(T, f, COL_ARG_SET, "INTEGER", true)
#define ROW_ARG_SET_INDEXED(name) { name, "INTEGER", COL_ROW_ARG_SET, 0, true, NULL }
#define STRING(T, f) COL(T, f, COL_STRING, "TEXT", false)
#define DOUBLE(T, f) COL(T, f, COL_DOUBLE, "REAL", false)
#define BOOL(T, f) COL(T, f, COL_BOOL, "INTEGER", false)
#define INT8(T, f) COL(T, f, COL_INT8, "INTEGER", false)
#define INT32(T, f) COL(T, f, COL_INT32, "INTEGER", false)
#define NULL_COL(name, type) { name, type, COL_NULL, 0, false, NULL }
#define COMPUTED(name, type, fn) { name, type, COL_COMPUTED, 0, false, fn }

static void result_string(const tm_model *model, tm_str_id id,
                          sqlite3_context *ctx) {
  const char *s = string_pool_borrow(model->strings, id);
  if (!s) {
    sqlite3_result_null(ctx);
    return;
  }
  sqlite3_result_text(ctx, s, (int)string_pool_length(model->strings, id),
                      SQLITE_STATIC);
}

/* ---- computed columns ---- */

static void metadata_key_type(const tm_model *model, const void *row,
                              sqlite3_context *ctx) {
  (void)model;
  const tm_metadata_row *m = row;
  sqlite3_result_text(ctx, m->key_type == TM_METADATA_MULTI ? "multi"
                                                            : "single",
                      -1, SQLITE_STATIC);
}

static void metadata_int_value(const tm_model *model, const void *row,
                               sqlite3_context *ctx) {
  (void)model;
  const tm_metadata_row *m = row;
  if (m->is_int)
    sqlite3_result_int64(ctx, m->int_value);
  else
    sqlite3_result_null(ctx);
}

static void metadata_str_value(const tm_model *model, const void *row,
                               sqlite3_context *ctx) {
  const tm_metadata_row *m = row;
  if (m->is_int)
    sqlite3_result_null(ctx);
  else
    result_string(model, m->str_value, ctx);
}

static void track_event_type(const tm_model *model, const void *row,
                             sqlite3_context *ctx) {
  (void)model;
  const tm_track_row *t = row;
  const char *text = NULL;
  switch (t->event_type) {
  case TM_TRACK_SLICE:
    text = "slice";
    break;
  case TM_TRACK_COUNTER:
    text = "counter";
    break;
  case TM_TRACK_STATE:
    text = "state";
    break;
  }
  if (text)
    sqlite3_result_text(ctx, text, -1, SQLITE_STATIC);
  else
    sqlite3_result_null(ctx);
}

static bool arg_is_integer(uint8_t value_type) {
  switch (value_type) {
  case TM_ARG_INT:
  case TM_ARG_UINT:
  case TM_ARG_POINTER:
  case TM_ARG_BOOL:
    return true;
  default:
    return false;
  }
}

static void arg_int_value(const tm_model *model, const void *row,
                          sqlite3_context *ctx) {
  const tm_arg_row *a = row;
  if (arg_is_integer(model_arg_key(model, a)->value_type))
    sqlite3_result_int64(ctx, model_arg_int(model, a));
  else
    sqlite3_result_null(ctx);
}

static void arg_string_value(const tm_model *model, const void *row,
                             sqlite3_context *ctx) {
  const tm_arg_row *a = row;
  uint8_t type = model_arg_key(model, a)->value_type;
  if (type == TM_ARG_STRING || type == TM_ARG_JSON) {
    size_t len;
    const char *s = model_arg_string(model, a, &len);
    if (s)
      sqlite3_result_text(ctx, s, (int)len, SQLITE_STATIC);
    else
      sqlite3_result_null(ctx);
  } else {
    sqlite3_result_null(ctx);
  }
}

static void arg_real_value(const tm_model *model, const void *row,
                           sqlite3_context *ctx) {
  const tm_arg_row *a = row;
  if (model_arg_key(model, a)->value_type == TM_ARG_REAL)
    sqlite3_result_double(ctx, model_arg_real(model, a));
  else
    sqlite3_result_null(ctx);
}

static void arg_value_type(const tm_model *model, const void *row,
                           sqlite3_context *ctx) {
  static const char *const names[] = {
      [TM_ARG_INT] = "int",         [TM_ARG_UINT] = "uint",
      [TM_ARG_STRING] = "string",   [TM_ARG_REAL] = "real",
      [TM_ARG_POINTER] = "pointer", [TM_ARG_BOOL] = "bool",
      [TM_ARG_JSON] = "json",
  };
  uint8_t type = model_arg_key(model, row)->value_type;
  if (type < G_N_ELEMENTS(names))
    sqlite3_result_text(ctx, names[type], -1, SQLITE_STATIC);
  else
    sqlite3_result_null(ctx);
}

static void arg_flat_key(const tm_model *model, const void *row,
                         sqlite3_context *ctx) {
  result_string(model, model_arg_key(model, row)->flat_key, ctx);
}

static void arg_key(const tm_model *model, const void *row,
                    sqlite3_context *ctx) {
  result_string(model, model_arg_key(model, row)->key, ctx);
}

/* ---- the tables ---- */

static const column_def machine_columns[] = {
    COL_ID_DEF,
    INT64(tm_machine_row, raw_id),
    STRING(tm_machine_row, name),
    STRING(tm_machine_row, sysname),
    STRING(tm_machine_row, release),
    STRING(tm_machine_row, version),
    STRING(tm_machine_row, arch),
    INT64(tm_machine_row, num_cpus),
    STRING(tm_machine_row, android_build_fingerprint),
    STRING(tm_machine_row, android_device_manufacturer),
    INT64(tm_machine_row, android_sdk_version),
    INT64(tm_machine_row, system_ram_bytes),
    INT64(tm_machine_row, system_ram_gb),
};

static const column_def trace_file_columns[] = {
    COL_ID_DEF,
    REF_INDEXED(tm_trace_file_row, parent_id),
    STRING(tm_trace_file_row, name),
    INT64(tm_trace_file_row, size),
    STRING(tm_trace_file_row, trace_type),
    INT64(tm_trace_file_row, processing_order),
    BOOL(tm_trace_file_row, is_container),
};

static const column_def metadata_columns[] = {
    COL_ID_DEF,
    STRING(tm_metadata_row, name),
    COMPUTED("key_type", "TEXT", metadata_key_type),
    COMPUTED("int_value", "INTEGER", metadata_int_value),
    COMPUTED("str_value", "TEXT", metadata_str_value),
    REF(tm_metadata_row, machine_id),
    REF(tm_metadata_row, trace_id),
};

static const column_def stats_columns[] = {
    COL_ID_DEF,
    STRING(tm_stats_row, name),
    /* trace_processor's index of the stat in its compiled list: we have no
     * such list. */
    NULL_COL("key", "INTEGER"),
    INT64(tm_stats_row, idx),
    STRING(tm_stats_row, severity),
    STRING(tm_stats_row, source),
    INT64(tm_stats_row, value),
    STRING(tm_stats_row, description),
    REF(tm_stats_row, machine_id),
    REF(tm_stats_row, trace_id),
};

/* docs/sql-surface.md §5. stat_key is NULL as stats.key is; stat_id (ours)
 * names the stats row, which gives the view its name and severity and the
 * occurrence's machine. */
static const column_def import_log_columns[] = {
    COL_ID_DEF,
    REF(tm_import_log_row, trace_id),
    INT64(tm_import_log_row, ts),
    INT64(tm_import_log_row, byte_offset),
    NULL_COL("stat_key", "INTEGER"),
    REF(tm_import_log_row, stat_id),
    ARG_SET(tm_import_log_row, arg_set_id),
};

static const column_def clock_snapshot_columns[] = {
    COL_ID_DEF,
    INT64(tm_clock_snapshot_row, ts),
    INT64(tm_clock_snapshot_row, clock_id),
    STRING(tm_clock_snapshot_row, clock_name),
    INT64(tm_clock_snapshot_row, clock_value),
    INT64(tm_clock_snapshot_row, snapshot_id),
    REF(tm_clock_snapshot_row, machine_id),
};

static const column_def process_columns[] = {
    COL_ID_DEF,
    COL(tm_process_row, pid, COL_INT64, "INTEGER", true),
    STRING(tm_process_row, name),
    INT64(tm_process_row, start_ts),
    INT64(tm_process_row, end_ts),
    REF(tm_process_row, parent_upid),
    INT64(tm_process_row, uid),
    INT64(tm_process_row, android_appid),
    INT64(tm_process_row, android_user_id),
    STRING(tm_process_row, cmdline),
    ARG_SET(tm_process_row, arg_set_id),
    REF(tm_process_row, machine_id),
};

static const column_def thread_columns[] = {
    COL_ID_DEF,
    COL(tm_thread_row, tid, COL_INT64, "INTEGER", true),
    STRING(tm_thread_row, name),
    INT64(tm_thread_row, start_ts),
    INT64(tm_thread_row, end_ts),
    REF_INDEXED(tm_thread_row, upid),
    INT8(tm_thread_row, is_main_thread),
    INT8(tm_thread_row, is_idle),
    REF(tm_thread_row, machine_id),
    ARG_SET(tm_thread_row, arg_set_id),
};

static void track_ucpu(const tm_model *model, const void *row,
                       sqlite3_context *ctx) {
  (void)model;
  const tm_track_row *t = row;
  if (t->cpu_dimension)
    sqlite3_result_int64(ctx, (sqlite3_int64)t->cpu_dimension - 1);
  else
    sqlite3_result_null(ctx);
}

static const column_def track_columns[] = {
    COL_ID_DEF,
    STRING(tm_track_row, name),
    STRING(tm_track_row, type),
    ARG_SET(tm_track_row, dimension_arg_set_id),
    REF_INDEXED(tm_track_row, parent_id),
    ARG_SET(tm_track_row, source_arg_set_id),
    REF(tm_track_row, machine_id),
    REF(tm_track_row, track_group_id),
    COMPUTED("event_type", "TEXT", track_event_type),
    STRING(tm_track_row, counter_unit),
    REF_INDEXED(tm_track_row, utid),
    REF_INDEXED(tm_track_row, upid),
    REF(tm_track_row, trace_id),
    COMPUTED("ucpu", "INTEGER", track_ucpu),
};

/* Thread time lives beside the slice rows (model.h): found by slice id.
 * `which` 0: thread_ts, 1: thread_dur; TM_NULL_INT64 if the slice has none. */
static int64_t slice_thread_time(const tm_model *model, const void *row, int which) {
  uint32_t id = model_slice_id(model, row);
  int64_t thread_ts, thread_dur;
  if (!model_slice_thread_time(model, id, &thread_ts, &thread_dur))
    return TM_NULL_INT64;
  return which ? thread_dur : thread_ts;
}

static void result_int64_or_null(int64_t v, sqlite3_context *ctx) {
  if (v == TM_NULL_INT64)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_int64(ctx, v);
}

static void slice_thread_ts(const tm_model *model, const void *row,
                            sqlite3_context *ctx) {
  result_int64_or_null(slice_thread_time(model, row, 0), ctx);
}

static void slice_thread_dur(const tm_model *model, const void *row,
                             sqlite3_context *ctx) {
  result_int64_or_null(slice_thread_time(model, row, 1), ctx);
}

/* ts, dur and category are coded in the row (model.h). */
static void slice_ts(const tm_model *model, const void *row,
                     sqlite3_context *ctx) {
  result_int64_or_null(model_slice_ts(model, model_slice_id(model, row)), ctx);
}

static void slice_dur(const tm_model *model, const void *row,
                      sqlite3_context *ctx) {
  result_int64_or_null(model_slice_dur(model, row), ctx);
}

static void slice_category(const tm_model *model, const void *row,
                           sqlite3_context *ctx) {
  result_string(model, model_slice_category(model, model_slice_id(model, row)), ctx);
}

static void slice_depth(const tm_model *model, const void *row,
                        sqlite3_context *ctx) {
  (void)model;
  sqlite3_result_int64(ctx, ((const tm_slice_row *)row)->depth);
}

static const column_def slice_columns[] = {
    COL_ID_DEF,
    COMPUTED("ts", "INTEGER", slice_ts),
    COMPUTED("dur", "INTEGER", slice_dur),
    REF_INDEXED(tm_slice_row, track_id),
    COMPUTED("category", "TEXT", slice_category),
    STRING(tm_slice_row, name),
    COMPUTED("depth", "INTEGER", slice_depth),
    REF_INDEXED(tm_slice_row, parent_id),
    ARG_SET_INDEXED(tm_slice_row, arg_set_id),
    COMPUTED("thread_ts", "INTEGER", slice_thread_ts),
    COMPUTED("thread_dur", "INTEGER", slice_thread_dur),
    NULL_COL("thread_instruction_count", "INTEGER"),
    NULL_COL("thread_instruction_delta", "INTEGER"),
};

static const column_def cpu_columns[] = {
    COL_ID_DEF,
    UINT32(tm_cpu_row, cpu),
    REF(tm_cpu_row, machine_id),
};

static const column_def sched_columns[] = {
    COL_ID_DEF,
    INT64(tm_sched_row, ts),
    INT64(tm_sched_row, dur),
    REF_INDEXED(tm_sched_row, ucpu),
    REF_INDEXED(tm_sched_row, utid),
    STRING(tm_sched_row, end_state),
    INT32(tm_sched_row, priority),
};

static void thread_state_io_wait(const tm_model *model, const void *row,
                                 sqlite3_context *ctx) {
  int8_t io_wait = tm_thread_state_io_wait(model, row);
  if (io_wait < 0)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_int(ctx, io_wait);
}

static void thread_state_blocked_function(const tm_model *model,
                                          const void *row,
                                          sqlite3_context *ctx) {
  result_string(model, tm_thread_state_blocked_function(model, row), ctx);
}

static const column_def thread_state_columns[] = {
    COL_ID_DEF,
    INT64(tm_thread_state_row, ts),
    INT64(tm_thread_state_row, dur),
    REF(tm_thread_state_row, ucpu),
    REF_INDEXED(tm_thread_state_row, utid),
    STRING(tm_thread_state_row, state),
    REF(tm_thread_state_row, waker_utid),
    REF(tm_thread_state_row, waker_id),
    COMPUTED("io_wait", "INTEGER", thread_state_io_wait),
    COMPUTED("blocked_function", "TEXT", thread_state_blocked_function),
};

/* --- system traces (core/model/system_builder.h) ------------------------ */

static const column_def ftrace_event_columns[] = {
    COL_ID_DEF,
    INT64(tm_ftrace_event_row, ts),
    STRING(tm_ftrace_event_row, name),
    REF(tm_ftrace_event_row, ucpu),
    REF_INDEXED(tm_ftrace_event_row, utid),
    ARG_SET_INDEXED(tm_ftrace_event_row, arg_set_id),
};

static const column_def android_log_columns[] = {
    COL_ID_DEF,
    INT64(tm_android_log_row, ts),
    REF_INDEXED(tm_android_log_row, utid),
    UINT32(tm_android_log_row, prio),
    STRING(tm_android_log_row, tag),
    STRING(tm_android_log_row, msg),
    ARG_SET(tm_android_log_row, arg_set_id),
};

static const column_def package_columns[] = {
    COL_ID_DEF,
    STRING(tm_package_row, package_name),
    INT64(tm_package_row, uid),
    INT8(tm_package_row, debuggable),
    INT8(tm_package_row, profileable_from_shell),
    INT64(tm_package_row, version_code),
    REF(tm_package_row, machine_id),
};

static const column_def frame_timeline_columns[] = {
    COL_ID_DEF,
    REF_INDEXED(tm_frame_timeline_row, slice_id),
    BOOL(tm_frame_timeline_row, is_actual),
    INT64(tm_frame_timeline_row, display_frame_token),
    INT64(tm_frame_timeline_row, surface_frame_token),
    REF(tm_frame_timeline_row, upid),
    STRING(tm_frame_timeline_row, layer_name),
    STRING(tm_frame_timeline_row, present_type),
    INT8(tm_frame_timeline_row, on_time_finish),
    INT8(tm_frame_timeline_row, gpu_composition),
    STRING(tm_frame_timeline_row, jank_type),
    STRING(tm_frame_timeline_row, jank_severity_type),
    STRING(tm_frame_timeline_row, prediction_type),
    STRING(tm_frame_timeline_row, jank_tag),
};

static const column_def counter_columns[] = {
    COL_ID_DEF,
    INT64(tm_counter_row, ts),
    REF_INDEXED(tm_counter_row, track_id),
    DOUBLE(tm_counter_row, value),
    ARG_SET(tm_counter_row, arg_set_id),
};

static const column_def flow_columns[] = {
    COL_ID_DEF,
    REF_INDEXED(tm_flow_row, slice_out),
    REF_INDEXED(tm_flow_row, slice_in),
    INT64(tm_flow_row, trace_id),
    ARG_SET(tm_flow_row, arg_set_id),
};

static const column_def args_columns[] = {
    COL_ID_DEF,
    ROW_ARG_SET_INDEXED("arg_set_id"),
    COMPUTED("flat_key", "TEXT", arg_flat_key),
    COMPUTED("key", "TEXT", arg_key),
    COMPUTED("int_value", "INTEGER", arg_int_value),
    COMPUTED("string_value", "TEXT", arg_string_value),
    COMPUTED("real_value", "REAL", arg_real_value),
    COMPUTED("value_type", "TEXT", arg_value_type),
};

static const column_def stack_profile_mapping_columns[] = {
    COL_ID_DEF,
    STRING(tm_stack_profile_mapping_row, build_id),
    INT64(tm_stack_profile_mapping_row, exact_offset),
    INT64(tm_stack_profile_mapping_row, start_offset),
    INT64(tm_stack_profile_mapping_row, start),
    INT64(tm_stack_profile_mapping_row, end),
    INT64(tm_stack_profile_mapping_row, load_bias),
    STRING(tm_stack_profile_mapping_row, name),
};

static const column_def stack_profile_frame_columns[] = {
    COL_ID_DEF,
    STRING(tm_stack_profile_frame_row, name),
    REF(tm_stack_profile_frame_row, mapping),
    INT64(tm_stack_profile_frame_row, rel_pc),
    NULL_COL("symbol_set_id", "INTEGER"),
    NULL_COL("deobfuscated_name", "TEXT"),
    NULL_COL("type", "TEXT"),
};

static const column_def stack_profile_callsite_columns[] = {
    COL_ID_DEF,
    UINT32(tm_stack_profile_callsite_row, depth),
    REF_INDEXED(tm_stack_profile_callsite_row, parent_id),
    REF(tm_stack_profile_callsite_row, frame_id),
};

static const column_def cpu_profile_stack_sample_columns[] = {
    COL_ID_DEF,
    INT64(tm_cpu_profile_sample_row, ts),
    REF(tm_cpu_profile_sample_row, callsite_id),
    REF_INDEXED(tm_cpu_profile_sample_row, utid),
    NULL_COL("process_priority", "INTEGER"),
};

static const column_def perf_sample_columns[] = {
    COL_ID_DEF,
    INT64(tm_perf_sample_row, ts),
    REF_INDEXED(tm_perf_sample_row, utid),
    INT64(tm_perf_sample_row, cpu),
    REF(tm_perf_sample_row, callsite_id),
};

static const column_def instruments_sample_columns[] = {
    COL_ID_DEF,
    INT64(tm_instruments_sample_row, ts),
    REF_INDEXED(tm_instruments_sample_row, utid),
    REF(tm_instruments_sample_row, callsite_id),
    INT64(tm_instruments_sample_row, cpu),
};

#define ROWS_FN(field)                                                      \
  static const void *rows_##field(const tm_model *model, size_t *count) {   \
    *count = model->field.len;                                              \
    return model->field.data;                                               \
  }
ROWS_FN(machines)
ROWS_FN(trace_files)
ROWS_FN(metadata)
ROWS_FN(stats)
ROWS_FN(import_logs)
ROWS_FN(clock_snapshots)
ROWS_FN(processes)
ROWS_FN(threads)
ROWS_FN(tracks)
ROWS_FN(slices)
ROWS_FN(counters)
ROWS_FN(flows)
ROWS_FN(args)
ROWS_FN(cpus)
ROWS_FN(sched_slices)
ROWS_FN(thread_states)
ROWS_FN(stack_profile_mappings)
ROWS_FN(stack_profile_frames)
ROWS_FN(stack_profile_callsites)
ROWS_FN(cpu_profile_samples)
ROWS_FN(instruments_samples)
ROWS_FN(ftrace_events)
ROWS_FN(android_logs)
ROWS_FN(packages)
ROWS_FN(frame_timeline)
ROWS_FN(perf_samples)

#define TABLE(name, field, T, columns)                                      \
  { name, rows_##field, sizeof(T), columns, G_N_ELEMENTS(columns) }

static const table_def tables[] = {
    TABLE("__intrinsic_machine", machines, tm_machine_row, machine_columns),
    TABLE("__intrinsic_trace_file", trace_files, tm_trace_file_row,
          trace_file_columns),
    TABLE("__intrinsic_metadata", metadata, tm_metadata_row,
          metadata_columns),
    TABLE("__intrinsic_stats", stats, tm_stats_row, stats_columns),
    TABLE("__intrinsic_trace_import_logs", import_logs, tm_import_log_row,
          import_log_columns),
    TABLE("__intrinsic_clock_snapshot", clock_snapshots,
          tm_clock_snapshot_row, clock_snapshot_columns),
    TABLE("__intrinsic_process", processes, tm_process_row, process_columns),
    TABLE("__intrinsic_thread", threads, tm_thread_row, thread_columns),
    TABLE("__intrinsic_track", tracks, tm_track_row, track_columns),
    TABLE("__intrinsic_slice", slices, tm_slice_row, slice_columns),
    TABLE("__intrinsic_counter", counters, tm_counter_row, counter_columns),
    TABLE("__intrinsic_flow", flows, tm_flow_row, flow_columns),
    TABLE("__intrinsic_args", args, tm_arg_row, args_columns),
    TABLE("__intrinsic_cpu", cpus, tm_cpu_row, cpu_columns),
    TABLE("__intrinsic_sched_slice", sched_slices, tm_sched_row,
          sched_columns),
    TABLE("__intrinsic_thread_state", thread_states, tm_thread_state_row,
          thread_state_columns),
    TABLE("stack_profile_mapping", stack_profile_mappings,
          tm_stack_profile_mapping_row, stack_profile_mapping_columns),
    TABLE("stack_profile_frame", stack_profile_frames,
          tm_stack_profile_frame_row, stack_profile_frame_columns),
    TABLE("stack_profile_callsite", stack_profile_callsites,
          tm_stack_profile_callsite_row, stack_profile_callsite_columns),
    TABLE("cpu_profile_stack_sample", cpu_profile_samples,
          tm_cpu_profile_sample_row, cpu_profile_stack_sample_columns),
    TABLE("instruments_sample", instruments_samples,
          tm_instruments_sample_row, instruments_sample_columns),
    TABLE("__intrinsic_ftrace_event", ftrace_events, tm_ftrace_event_row,
          ftrace_event_columns),
    TABLE("__intrinsic_android_logs", android_logs, tm_android_log_row,
          android_log_columns),
    TABLE("__intrinsic_package_list", packages, tm_package_row,
          package_columns),
    TABLE("__intrinsic_frame_timeline", frame_timeline,
          tm_frame_timeline_row, frame_timeline_columns),
    TABLE("__intrinsic_perf_sample", perf_samples, tm_perf_sample_row,
          perf_sample_columns),
};

/* ---- the public views ---------------------------------------------------- */

#define COUNTER_TRACK_COLUMNS                                               \
  "id, name, NULL AS parent_id, type, dimension_arg_set_id, "               \
  "source_arg_set_id, machine_id, counter_unit AS unit, "                   \
  "(SELECT a.string_value FROM __intrinsic_args a "                         \
  "WHERE a.arg_set_id = t.source_arg_set_id AND a.key = 'description') "    \
  "AS description"

typedef struct view_def {
  const char *name;
  const char *select;
} view_def;

static const view_def views[] = {
    /* label_index: 0 for the host, else the 1-based rank of the row among
     * the non-host rows in id order. */
    {"machine",
     "SELECT *, iif(raw_id = 0, 0, sum(raw_id != 0) OVER "
     "(ORDER BY id ROWS UNBOUNDED PRECEDING)) AS label_index "
     "FROM __intrinsic_machine"},
    {"trace_file", "SELECT * FROM __intrinsic_trace_file"},
    {"metadata", "SELECT * FROM __intrinsic_metadata"},
    {"stats", "SELECT * FROM __intrinsic_stats"},
    {"_trace_import_logs",
     "SELECT l.id, l.trace_id, l.ts, l.byte_offset, s.severity, s.name, "
     "l.arg_set_id FROM __intrinsic_trace_import_logs l "
     "JOIN __intrinsic_stats s ON s.id = l.stat_id"},
    {"clock_snapshot", "SELECT * FROM __intrinsic_clock_snapshot"},
    {"track",
     "SELECT id, name, type, dimension_arg_set_id, parent_id, "
     "source_arg_set_id, machine_id, track_group_id FROM __intrinsic_track"},
    {"thread_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, machine_id, utid "
     "FROM __intrinsic_track WHERE event_type = 'slice' AND utid IS NOT NULL"},
    {"process_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, machine_id, upid "
     "FROM __intrinsic_track WHERE event_type = 'slice' AND upid IS NOT NULL"},
    /* docs/sql-surface.md §8.2: slice tracks with a cpu dimension (none of our
     * readers makes one yet: empty, but queries that name it run). */
    {"cpu_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, machine_id, "
     "ucpu AS cpu FROM __intrinsic_track "
     "WHERE event_type = 'slice' AND ucpu IS NOT NULL"},
    {"counter_track",
     "SELECT " COUNTER_TRACK_COLUMNS " FROM __intrinsic_track t "
     "WHERE event_type = 'counter'"},
    {"process_counter_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, machine_id, unit, "
     "description, upid FROM (SELECT " COUNTER_TRACK_COLUMNS ", upid "
     "FROM __intrinsic_track t WHERE event_type = 'counter' "
     "AND upid IS NOT NULL)"},
    {"thread_counter_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, machine_id, unit, "
     "description, utid FROM (SELECT " COUNTER_TRACK_COLUMNS ", utid "
     "FROM __intrinsic_track t WHERE event_type = 'counter' "
     "AND utid IS NOT NULL)"},
    {"slice",
     "SELECT *, category AS cat, id AS slice_id FROM __intrinsic_slice"},
    {"slices", "SELECT * FROM slice"},
    {"instant",
     "SELECT ts, track_id, name, arg_set_id FROM slice WHERE dur = 0"},
    {"counter", "SELECT * FROM __intrinsic_counter"},
    {"counters",
     "SELECT c.*, t.name AS name, t.unit AS unit FROM counter c "
     "JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts"},
    {"thread", "SELECT id AS utid, * FROM __intrinsic_thread"},
    {"process", "SELECT id AS upid, * FROM __intrinsic_process"},
    {"flow", "SELECT * FROM __intrinsic_flow"},
    /* Scheduling (docs/sql-surface.md §14): like upstream, `cpu` of sched and
     * thread_state holds the ucpu. */
    {"cpu",
     "SELECT id, id AS ucpu, cpu, NULL AS cluster_id, NULL AS processor, "
     "machine_id, NULL AS capacity, NULL AS arg_set_id FROM __intrinsic_cpu"},
    {"sched_slice",
     "SELECT id, ts, dur, ucpu AS cpu, utid, end_state, priority, ucpu "
     "FROM __intrinsic_sched_slice"},
    {"sched", "SELECT *, ts + dur AS ts_end FROM sched_slice"},
    {"thread_state",
     "SELECT id, ts, dur, ucpu AS cpu, utid, state, io_wait, "
     "blocked_function, waker_utid, waker_id, NULL AS irq_context, "
     "ucpu FROM __intrinsic_thread_state"},
    /* System traces: ftrace_event is trace_processor's raw table (cpu
     * holds the ucpu, as in sched); the frame timeline slices are slices
     * with the columns of their frame. */
    {"ftrace_event",
     "SELECT id, ts, name, ucpu AS cpu, utid, arg_set_id, "
     "NULL AS common_flags, ucpu FROM __intrinsic_ftrace_event"},
    {"raw", "SELECT * FROM ftrace_event"},
    {"android_logs", "SELECT * FROM __intrinsic_android_logs"},
    {"package_list",
     "SELECT id, package_name, uid, debuggable, profileable_from_shell, "
     "version_code FROM __intrinsic_package_list"},
    {"expected_frame_timeline_slice",
     "SELECT s.*, f.display_frame_token, f.surface_frame_token, f.upid, "
     "f.layer_name FROM slice s JOIN __intrinsic_frame_timeline f "
     "ON f.slice_id = s.id WHERE NOT f.is_actual"},
    {"actual_frame_timeline_slice",
     "SELECT s.*, f.display_frame_token, f.surface_frame_token, f.upid, "
     "f.layer_name, f.present_type, f.on_time_finish, f.gpu_composition, "
     "f.jank_type, f.jank_severity_type, f.prediction_type, f.jank_tag "
     "FROM slice s JOIN __intrinsic_frame_timeline f "
     "ON f.slice_id = s.id WHERE f.is_actual"},
    {"cpu_counter_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, machine_id, unit, "
     "description, ucpu AS cpu FROM (SELECT " COUNTER_TRACK_COLUMNS ", ucpu "
     "FROM __intrinsic_track t WHERE event_type = 'counter' "
     "AND ucpu IS NOT NULL)"},
    /* display_value: unsigned decimal for uint, hex for pointer, SQLite's
     * own text of a real. */
    {"args",
     "SELECT *, CASE value_type "
     "WHEN 'int' THEN CAST(int_value AS TEXT) "
     "WHEN 'uint' THEN printf('%llu', int_value) "
     "WHEN 'pointer' THEN printf('0x%llx', int_value) "
     "WHEN 'bool' THEN iif(int_value != 0, 'true', 'false') "
     "WHEN 'real' THEN CAST(real_value AS TEXT) "
     "ELSE string_value END AS display_value "
     "FROM __intrinsic_args"},
    /* perf_sample (trace_processor's prelude): PerfSample packets. We keep
     * no cpu mode, unwinding error or perf session: NULL. */
    {"perf_sample",
     "SELECT id, ts, utid, cpu, NULL AS cpu_mode, callsite_id, "
     "NULL AS unwind_error, NULL AS perf_session_id "
     "FROM __intrinsic_perf_sample"},
    /* TrackEvent callstacks: the proto reader records an event's
     * innermost callsite as its "callsite_id" arg. One row per slice with
     * one; the id is that arg's row id (not dense, unlike upstream); the
     * callstack of an end event is not kept (end_callsite_id NULL). Kept
     * flattenable, so a join on slice_id is a lookup. */
    {"__intrinsic_track_event_callstacks",
     "SELECT a.id AS id, s.id AS slice_id, a.int_value AS callsite_id, "
     "NULL AS end_callsite_id FROM __intrinsic_slice s "
     "JOIN __intrinsic_args a ON a.arg_set_id = s.arg_set_id "
     "AND a.key = 'callsite_id'"},
};

/* The indexes of the saved file: the joins and filters trace_processor
 * queries lean on (slices by time, by track in time order, by parent;
 * args by set; counters by track in time order; flows from either end;
 * threads by process; scheduling by thread). Every table also has its id
 * as INTEGER PRIMARY KEY, so utid, upid and every *_id lookup is a rowid
 * lookup. */
typedef struct saved_index {
  const char *table;
  const char *columns;
  const char *suffix; /* index name: <table>_<suffix> */
} saved_index;

static const saved_index saved_indexes[] = {
    {"__intrinsic_slice", "ts", "ts"},
    {"__intrinsic_slice", "track_id, ts", "track_id_ts"},
    {"__intrinsic_slice", "parent_id", "parent_id"},
    {"__intrinsic_args", "arg_set_id", "arg_set_id"},
    {"__intrinsic_counter", "track_id, ts", "track_id_ts"},
    {"__intrinsic_flow", "slice_out", "slice_out"},
    {"__intrinsic_flow", "slice_in", "slice_in"},
    {"__intrinsic_thread", "upid", "upid"},
    {"__intrinsic_track", "utid", "utid"},
    {"__intrinsic_track", "upid", "upid"},
    {"__intrinsic_sched_slice", "utid", "utid"},
    {"__intrinsic_thread_state", "utid", "utid"},
    {"stack_profile_callsite", "parent_id", "parent_id"},
};

/* ---- the virtual-table module -------------------------------------------- */

typedef struct column_index {
  uint32_t *row_ids; /* non-NULL rows sorted by (value, id) */
  size_t len;
  size_t distinct;
  bool built;
  /* Dense values (the counting-sort case): the rows of value v are
   * row_ids[offsets[v - min_key] .. offsets[v - min_key + 1]), so an
   * equality lookup is two array reads instead of a binary search whose
   * every step is a cache miss into the rows. NULL otherwise. */
  uint32_t *offsets;
  int64_t min_key;
  size_t range;
} column_index;

typedef struct rows_vtab {
  sqlite3_vtab base; /* first: SQLite casts between the two */
  const table_def *def;
  const tm_model *model;
  column_index *indexes; /* one per column */
} rows_vtab;

typedef struct rows_cursor {
  sqlite3_vtab_cursor base; /* first */
  const char *rows;
  const uint32_t *list; /* NULL: the row id is `pos` itself */
  size_t pos;
  size_t end;
  uint32_t single; /* backing store of `list` for an id lookup */
} rows_cursor;

enum {
  PLAN_SCAN = 0,
  PLAN_ID = 1,
  PLAN_INDEX = 2, /* the column is idxNum >> 8 */
};

static const table_def *table_def_by_name(const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(tables); i++)
    if (strcmp(tables[i].name, name) == 0)
      return &tables[i];
  return NULL;
}

/* The integer value of an integer column; false for NULL. */
static bool column_int(const tm_model *model, const column_def *col,
                       const char *row, uint32_t id, int64_t *value) {
  const char *field = row + col->offset;
  switch (col->kind) {
  case COL_ID:
    *value = id;
    return true;
  case COL_ROW_ARG_SET:
    *value = model_arg_set_id(model, id);
    return *value != 0;
  case COL_INT64:
    *value = *(const int64_t *)(const void *)field;
    return *value != TM_NULL_INT64;
  case COL_UINT32:
    *value = *(const uint32_t *)(const void *)field;
    return true;
  case COL_REF:
    *value = *(const uint32_t *)(const void *)field;
    return *value != TM_NULL_ID;
  case COL_ARG_SET:
    *value = *(const uint32_t *)(const void *)field;
    return *value != 0;
  case COL_BOOL:
    *value = *(const bool *)(const void *)field ? 1 : 0;
    return true;
  case COL_INT8:
    *value = *(const int8_t *)(const void *)field;
    return *value >= 0;
  case COL_INT32:
    *value = *(const int32_t *)(const void *)field;
    return true;
  default:
    return false;
  }
}

static int rows_connect(sqlite3 *db, void *aux, int argc,
                        const char *const *argv, sqlite3_vtab **out,
                        char **err) {
  const tm_model *model = aux;
  /* "USING tm_rows" reads the model table of the same name;
   * "USING tm_rows(name)" reads the one named (the save's source). */
  const char *name = argc >= 4 ? argv[3] : argc >= 3 ? argv[2] : NULL;
  const table_def *def = name ? table_def_by_name(name) : NULL;
  if (!def) {
    *err = sqlite3_mprintf("tm_rows: no model table named %s",
                           name ? name : "(none)");
    return SQLITE_ERROR;
  }
  GString *schema = g_string_new("CREATE TABLE x(");
  for (size_t i = 0; i < def->n_columns; i++)
    g_string_append_printf(schema, "%s\"%s\" %s", i ? ", " : "",
                           def->columns[i].name, def->columns[i].sql_type);
  g_string_append_c(schema, ')');
  int rc = sqlite3_declare_vtab(db, schema->str);
  g_string_free(schema, TRUE);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);

  rows_vtab *vtab = g_new0(rows_vtab, 1);
  vtab->def = def;
  vtab->model = model;
  vtab->indexes = g_new0(column_index, def->n_columns);
  *out = &vtab->base;
  return SQLITE_OK;
}

static int rows_disconnect(sqlite3_vtab *base) {
  rows_vtab *vtab = (rows_vtab *)base;
  for (size_t i = 0; i < vtab->def->n_columns; i++) {
    g_free(vtab->indexes[i].row_ids);
    g_free(vtab->indexes[i].offsets);
  }
  g_free(vtab->indexes);
  g_free(vtab);
  return SQLITE_OK;
}

static size_t table_len(const rows_vtab *vtab) {
  size_t n;
  vtab->def->rows(vtab->model, &n);
  return n;
}

static int rows_best_index(sqlite3_vtab *base, sqlite3_index_info *info) {
  rows_vtab *vtab = (rows_vtab *)base;
  double n = (double)table_len(vtab);
  int id_constraint = -1, index_constraint = -1, index_column = -1;

  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    if (c->iColumn == -1 || c->iColumn == 0) {
      id_constraint = i;
      break;
    }
    if (index_constraint < 0 && vtab->def->columns[c->iColumn].indexed) {
      index_constraint = i;
      index_column = c->iColumn;
    }
  }

  if (id_constraint >= 0) {
    info->idxNum = PLAN_ID;
    info->aConstraintUsage[id_constraint].argvIndex = 1;
    info->estimatedCost = 1;
    info->estimatedRows = 1;
    info->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
  } else if (index_constraint >= 0) {
    const column_index *index = &vtab->indexes[index_column];
    double rows;
    if (index->built)
      rows = index->distinct ? ceil((double)index->len / index->distinct) : 0;
    else
      rows = n < 16 ? n : 16; /* unknown until first use: assume selective */
    info->idxNum = PLAN_INDEX | (index_column << 8);
    info->aConstraintUsage[index_constraint].argvIndex = 1;
    info->estimatedCost = log2(n + 2) + rows;
    info->estimatedRows = (sqlite3_int64)(rows < 1 ? 1 : rows);
  } else {
    info->idxNum = PLAN_SCAN;
    info->estimatedCost = n + 1;
    info->estimatedRows = (sqlite3_int64)n;
  }

  /* Every plan yields rows in increasing id. */
  if (info->nOrderBy == 1 && !info->aOrderBy[0].desc &&
      (info->aOrderBy[0].iColumn == 0 || info->aOrderBy[0].iColumn == -1))
    info->orderByConsumed = 1;
  return SQLITE_OK;
}

static int rows_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out) {
  (void)base;
  rows_cursor *cur = g_new0(rows_cursor, 1);
  *out = &cur->base;
  return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *base) {
  g_free(base);
  return SQLITE_OK;
}

typedef enum key_status {
  KEY_OK,    /* an integer to look up */
  KEY_NONE,  /* matches no integer column value */
  KEY_SCAN,  /* text or blob: let SQLite compare with column affinity */
} key_status;

static key_status value_key(sqlite3_value *value, int64_t *key) {
  switch (sqlite3_value_type(value)) {
  case SQLITE_INTEGER:
    *key = sqlite3_value_int64(value);
    return KEY_OK;
  case SQLITE_FLOAT: {
    double d = sqlite3_value_double(value);
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) ||
        d != floor(d))
      return KEY_NONE;
    *key = (int64_t)d;
    return KEY_OK;
  }
  case SQLITE_NULL:
    return KEY_NONE;
  default:
    return KEY_SCAN;
  }
}

typedef struct keyed_row {
  int64_t key;
  uint32_t id;
} keyed_row;

static int compare_keyed_rows(const void *a, const void *b) {
  const keyed_row *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* column_int(), or the row's entry of `sets` (model_arg_set_ids_new())
 * when given. */
static bool index_key(const tm_model *model, const column_def *col, const char *row,
                      uint32_t id, const uint32_t *sets, int64_t *key) {
  if (sets) {
    *key = sets[id];
    return *key != 0;
  }
  return column_int(model, col, row, id, key);
}

/* Sorts the non-NULL rows of `column` by (value, id) into `index`. Ids
 * and arg-set ids are dense, so a counting sort (O(rows + value range),
 * stable, hence id order within a value) covers the common case; sparse
 * values (pids, tids) fall back to qsort. */
static const column_index *ensure_index(rows_vtab *vtab, int column) {
  column_index *index = &vtab->indexes[column];
  if (index->built)
    return index;
  const column_def *col = &vtab->def->columns[column];
  size_t n;
  const char *rows = vtab->def->rows(vtab->model, &n);
  size_t row_size = vtab->def->row_size;
  /* An args row's set is found by a search; all of them, by one walk. */
  uint32_t *sets = col->kind == COL_ROW_ARG_SET ? model_arg_set_ids_new(vtab->model) : NULL;
  size_t len = 0;
  int64_t min = INT64_MAX, max = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    int64_t key;
    if (index_key(vtab->model, col, rows + i * row_size, (uint32_t)i, sets, &key)) {
      len++;
      min = MIN(min, key);
      max = MAX(max, key);
    }
  }
  index->row_ids = g_new(uint32_t, len ? len : 1);
  index->len = len;
  index->distinct = 0;
  index->built = true;
  if (len == 0) {
    g_free(sets);
    return index;
  }

  if ((uint64_t)max - (uint64_t)min <= 2 * (uint64_t)len + 1024) {
    size_t range = (size_t)((uint64_t)max - (uint64_t)min) + 1;
    uint32_t *start = g_new0(uint32_t, range + 1);
    for (size_t i = 0; i < n; i++) {
      int64_t key;
      if (index_key(vtab->model, col, rows + i * row_size, (uint32_t)i, sets, &key))
        start[(uint64_t)key - (uint64_t)min + 1]++;
    }
    for (size_t v = 0; v < range; v++) {
      if (start[v + 1])
        index->distinct++;
      start[v + 1] += start[v];
    }
    index->offsets = g_memdup2(start, (range + 1) * sizeof *start);
    index->min_key = min;
    index->range = range;
    for (size_t i = 0; i < n; i++) {
      int64_t key;
      if (index_key(vtab->model, col, rows + i * row_size, (uint32_t)i, sets, &key))
        index->row_ids[start[(uint64_t)key - (uint64_t)min]++] = (uint32_t)i;
    }
    g_free(start);
    g_free(sets);
    return index;
  }

  keyed_row *keyed = g_new(keyed_row, len);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t key;
    if (index_key(vtab->model, col, rows + i * row_size, (uint32_t)i, sets, &key))
      keyed[k++] = (keyed_row){key, (uint32_t)i};
  }
  g_free(sets);
  qsort(keyed, len, sizeof *keyed, compare_keyed_rows);
  for (size_t i = 0; i < len; i++) {
    index->row_ids[i] = keyed[i].id;
    if (i == 0 || keyed[i].key != keyed[i - 1].key)
      index->distinct++;
  }
  g_free(keyed);
  return index;
}

/* First position in `index` whose value is >= key (or > key if `after`). */
static size_t index_bound(const rows_vtab *vtab, const column_index *index,
                          int column, int64_t key, bool after) {
  const column_def *col = &vtab->def->columns[column];
  size_t n;
  const char *rows = vtab->def->rows(vtab->model, &n);
  size_t lo = 0, hi = index->len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    uint32_t id = index->row_ids[mid];
    int64_t value = 0;
    column_int(vtab->model, col, rows + (size_t)id * vtab->def->row_size, id, &value);
    if (value < key || (after && value == key))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int rows_filter(sqlite3_vtab_cursor *base, int idx_num,
                       const char *idx_str, int argc, sqlite3_value **argv) {
  (void)idx_str;
  rows_cursor *cur = (rows_cursor *)base;
  rows_vtab *vtab = (rows_vtab *)base->pVtab;
  size_t n;
  cur->rows = vtab->def->rows(vtab->model, &n);
  cur->list = NULL;
  cur->pos = 0;
  cur->end = n;

  int plan = idx_num & 0xff;
  if (plan == PLAN_SCAN || argc < 1)
    return SQLITE_OK;
  int64_t key;
  switch (value_key(argv[0], &key)) {
  case KEY_SCAN:
    return SQLITE_OK;
  case KEY_NONE:
    cur->end = 0;
    return SQLITE_OK;
  case KEY_OK:
    break;
  }
  if (plan == PLAN_ID) {
    if (key >= 0 && (uint64_t)key < n) {
      cur->single = (uint32_t)key;
      cur->list = &cur->single;
      cur->end = 1;
    } else {
      cur->end = 0;
    }
    return SQLITE_OK;
  }
  int column = idx_num >> 8;
  const column_index *index = ensure_index(vtab, column);
  cur->list = index->row_ids;
  if (index->offsets) {
    if (key < index->min_key ||
        (uint64_t)key - (uint64_t)index->min_key >= index->range) {
      cur->end = 0;
      return SQLITE_OK;
    }
    size_t slot = (size_t)((uint64_t)key - (uint64_t)index->min_key);
    cur->pos = index->offsets[slot];
    cur->end = index->offsets[slot + 1];
    return SQLITE_OK;
  }
  cur->pos = index_bound(vtab, index, column, key, false);
  cur->end = index_bound(vtab, index, column, key, true);
  return SQLITE_OK;
}

static int rows_next(sqlite3_vtab_cursor *base) {
  ((rows_cursor *)base)->pos++;
  return SQLITE_OK;
}

static int rows_eof(sqlite3_vtab_cursor *base) {
  rows_cursor *cur = (rows_cursor *)base;
  return cur->pos >= cur->end;
}

static uint32_t cursor_row_id(const rows_cursor *cur) {
  return cur->list ? cur->list[cur->pos] : (uint32_t)cur->pos;
}

static int rows_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx,
                       int column) {
  rows_cursor *cur = (rows_cursor *)base;
  rows_vtab *vtab = (rows_vtab *)base->pVtab;
  const column_def *col = &vtab->def->columns[column];
  uint32_t id = cursor_row_id(cur);
  const char *row = cur->rows + (size_t)id * vtab->def->row_size;
  int64_t value;

  switch (col->kind) {
  case COL_STRING:
    result_string(vtab->model,
                  *(const tm_str_id *)(const void *)(row + col->offset), ctx);
    break;
  case COL_DOUBLE:
    sqlite3_result_double(ctx,
                          *(const double *)(const void *)(row + col->offset));
    break;
  case COL_NULL:
    sqlite3_result_null(ctx);
    break;
  case COL_COMPUTED:
    col->compute(vtab->model, row, ctx);
    break;
  default:
    if (column_int(vtab->model, col, row, id, &value))
      sqlite3_result_int64(ctx, value);
    else
      sqlite3_result_null(ctx);
    break;
  }
  return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *rowid) {
  *rowid = cursor_row_id((rows_cursor *)base);
  return SQLITE_OK;
}

static const sqlite3_module rows_module = {
    .iVersion = 0,
    .xCreate = rows_connect,
    .xConnect = rows_connect,
    .xBestIndex = rows_best_index,
    .xDisconnect = rows_disconnect,
    .xDestroy = rows_disconnect,
    .xOpen = rows_open,
    .xClose = rows_close,
    .xFilter = rows_filter,
    .xNext = rows_next,
    .xEof = rows_eof,
    .xColumn = rows_column,
    .xRowid = rows_rowid,
};

/* ---- the surface ---------------------------------------------------------- */

/* trace_bounds is a view of the model's two numbers. */
static char *trace_bounds_view_sql(const tm_model *model) {
  return g_strdup_printf("CREATE VIEW trace_bounds AS SELECT %" G_GINT64_FORMAT
                         " AS start_ts, %" G_GINT64_FORMAT " AS end_ts",
                         (gint64)model->bounds_start,
                         (gint64)model->bounds_end);
}

static bool exec_sql(sqlite3 *db, const char *sql, tm_sql_error_code code,
                     GError **error) {
  char *message = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) {
    g_set_error(error, TM_SQL_ERROR, (gint)code, "%s",
                message ? message : sqlite3_errmsg(db));
    sqlite3_free(message);
    return false;
  }
  return true;
}

/* PerfettoSQL (docs/perfetto-sql.md) on the surface's connection; the
 * functions it builds on came with the connection (sql_connection.c's
 * registrars). */
static bool register_trace_processor_sql(tm_sql_surface *surface,
                                         GError **error) {
  surface->perfetto_sql = perfetto_sql_new(surface->db, error);
  return surface->perfetto_sql != NULL;
}

tm_sql_surface *sql_surface_new(const tm_model *model,
                                const sql_connection_options *options,
                                GError **error) {
  tm_sql_surface *surface = g_new0(tm_sql_surface, 1);
  surface->model = model;
  bool ok = false;
  char *sql = NULL;

  surface->connection = sql_connection_open(
      ":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, model, options,
      error);
  if (!surface->connection)
    goto out;
  surface->db = sql_connection_borrow_db(surface->connection);
  if (sqlite3_create_module_v2(surface->db, "tm_rows", &rows_module,
                               (void *)model, NULL) != SQLITE_OK) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY, "%s",
                sqlite3_errmsg(surface->db));
    goto out;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(tables); i++) {
    sql = g_strdup_printf("CREATE VIRTUAL TABLE %s USING tm_rows",
                          tables[i].name);
    if (!exec_sql(surface->db, sql, TM_SQL_ERROR_QUERY, error))
      goto out;
    g_clear_pointer(&sql, g_free);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(views); i++) {
    sql = g_strdup_printf("CREATE VIEW %s AS %s", views[i].name,
                          views[i].select);
    if (!exec_sql(surface->db, sql, TM_SQL_ERROR_QUERY, error))
      goto out;
    g_clear_pointer(&sql, g_free);
  }
  sql = trace_bounds_view_sql(model);
  if (!exec_sql(surface->db, sql, TM_SQL_ERROR_QUERY, error))
    goto out;
  if (!register_trace_processor_sql(surface, error))
    goto out;
  /* Everything created so far is the model's: queries read it only. */
  if (!sql_connection_seal(surface->connection, error))
    goto out;
  ok = true;
out:
  g_free(sql);
  if (!ok) {
    g_prefix_error(error, "building the SQL surface: ");
    sql_surface_free(surface);
    return NULL;
  }
  return surface;
}

void sql_surface_free(tm_sql_surface *surface) {
  if (!surface)
    return;
  /* Functions hold pointers into the engine and the index: close first. */
  sql_connection_close(surface->connection);
  perfetto_sql_free(surface->perfetto_sql);
  g_free(surface);
}

bool sql_surface_add_sql_package(tm_sql_surface *surface, const char *dir,
                                 const char *package, GError **error) {
  return perfetto_sql_add_package(surface->perfetto_sql, dir, package, error);
}

sqlite3 *sql_surface_borrow_db(tm_sql_surface *surface) {
  return surface->db;
}

void sql_surface_set_timeout(tm_sql_surface *surface, double seconds) {
  surface->timeout_seconds = seconds > 0 ? seconds : 0;
}

void sql_surface_interrupt(tm_sql_surface *surface) {
  sql_connection_interrupt(surface->connection);
}

/* Whether `stmt`, just stepped to SQLITE_ROW, counts as a statement with
 * output: trace_processor exempts a single column named
 * suppress_query_output. */
static bool counts_as_output(sqlite3_stmt *stmt) {
  return !(sqlite3_column_count(stmt) == 1 &&
           g_strcmp0(sqlite3_column_name(stmt, 0), "suppress_query_output") ==
               0);
}

static bool write_empty_lines(unsigned n, FILE *out, GError **error) {
  for (unsigned i = 0; i < n; i++) {
    if (fputc('\n', out) == EOF) {
      g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_OUTPUT,
                  "writing the query result failed: %s", g_strerror(errno));
      return false;
    }
  }
  return true;
}

bool sql_surface_run(tm_sql_surface *surface, const char *sql,
                     const tm_query_options *options, FILE *out,
                     uint64_t *rows, GError **error) {
  perfetto_sql_script script;
  sqlite3_stmt *stmt = NULL;
  bool ok = false;
  /* Statements run before the current one, and the first of them that
   * returned rows (1-based; 0: none). */
  unsigned earlier = 0, first_with_rows = 0;
  /* trace_processor_shell prints one empty line per earlier statement
   * before a script's CSV; our own formats stay clean. */
  bool script_lines = !options->interactive &&
                      options->format == TM_FORMAT_CSV;

  if (rows)
    *rows = 0;
  sql_connection_arm(surface->connection, surface->timeout_seconds);
  perfetto_sql_script_init(&script, sql, "query");
  for (;;) {
    /* PerfettoSQL statements run inside perfetto_sql_next; plain ones come
     * back prepared, macros expanded. */
    unsigned perfetto_before = script.perfetto_statements;
    if (!perfetto_sql_next(surface->perfetto_sql, &script, &stmt, error))
      goto out;
    earlier += script.perfetto_statements - perfetto_before;
    bool last = !stmt || perfetto_sql_script_at_end(&script);
    if (last && !options->interactive && first_with_rows) {
      g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                  "statement %u returned rows, but only the last statement "
                  "of a script may (name an earlier SELECT's only column "
                  "suppress_query_output to run it for its effects)",
                  first_with_rows);
      goto out;
    }
    if (!stmt) {
      /* The script ended with a PerfettoSQL statement (it prints nothing)
       * or held none. */
      if (script_lines && earlier > 0 &&
          !write_empty_lines(earlier - 1, out, error))
        goto out;
      break;
    }
    if (last) {
      if (script_lines && !write_empty_lines(earlier, out, error))
        goto out;
      if (!sql_output_write(stmt, options->format, options->column_width, out,
                            rows, error))
        goto out;
      break;
    }
    /* An earlier statement: run it for its effects. */
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && !first_with_rows && counts_as_output(stmt))
      first_with_rows = earlier + 1;
    while (rc == SQLITE_ROW)
      rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) {
      sql_connection_set_error(surface->connection, TM_SQL_ERROR_QUERY,
                               error);
      goto out;
    }
    g_clear_pointer(&stmt, sqlite3_finalize);
    earlier++;
  }
  ok = true;
out:
  /* Whoever reported the failure, say why the connection stopped or
   * refused the statement. */
  if (!ok)
    sql_connection_explain_error(surface->connection, error);
  sqlite3_finalize(stmt);
  sql_connection_disarm(surface->connection);
  return ok;
}

bool sql_surface_query(tm_sql_surface *surface, const char *sql,
                       tm_format format, FILE *out, GError **error) {
  tm_query_options options = {.format = format};
  return sql_surface_run(surface, sql, &options, out, NULL, error);
}

/* exec_sql, with the saved file named in the error. */
static bool save_exec(sqlite3 *db, const char *sql, const char *path,
                      GError **error) {
  if (exec_sql(db, sql, TM_SQL_ERROR_SAVE, error))
    return true;
  g_prefix_error(error, "writing %s: ", path);
  return false;
}

/* Names SQLite would not treat as a plain file: ":memory:" and "" make
 * no file at all, "file:" names are URIs (Debian's SQLite interprets
 * them everywhere). */
static bool save_path_refused(const char *path, GError **error) {
  const char *why = NULL;
  if (!path || !*path)
    why = "an empty name is an in-memory database, not a file";
  else if (strcmp(path, ":memory:") == 0)
    why = "\":memory:\" is an in-memory database, not a file";
  else if (g_ascii_strncasecmp(path, "file:", 5) == 0)
    why = "a name starting with \"file:\" is an SQLite URI (write "
          "./file:... for a file of that name)";
  if (!why)
    return false;
  g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE,
              "cannot save to '%s': %s", path ? path : "", why);
  return true;
}

/* Creates an empty file beside `path` (same directory, so the final
 * rename stays on one file system) and returns its name. Its mode is
 * what a new file gets (0666 less the umask), as `path` would have. */
static char *create_temporary_beside(const char *path, GError **error) {
  char *dir = g_path_get_dirname(path);
  char *base = g_path_get_basename(path);
  char *tmp = NULL;
  for (int attempt = 0; attempt < 100; attempt++) {
    g_free(tmp);
    tmp = g_strdup_printf("%s%c.%s.tmp-%08x", dir, G_DIR_SEPARATOR, base,
                          g_random_int());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      close(fd);
      goto out;
    }
    if (errno != EEXIST) {
      int saved_errno = errno;
      g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE,
                  "cannot create %s (a temporary file beside %s): %s", tmp,
                  path, g_strerror(saved_errno));
      g_clear_pointer(&tmp, g_free);
      goto out;
    }
  }
  g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE,
              "cannot create a temporary file beside %s", path);
  g_clear_pointer(&tmp, g_free);
out:
  g_free(dir);
  g_free(base);
  return tmp;
}

static bool sync_file(const char *tmp, const char *path, GError **error) {
  int fd = open(tmp, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0) {
    int saved_errno = errno;
    if (fd >= 0)
      close(fd);
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE, "writing %s: %s",
                path, g_strerror(saved_errno));
    return false;
  }
  close(fd);
  return true;
}

/* Moves `tmp` to `path`: over it when `replace`, else only if `path` does
 * not exist (atomically where the system can). */
static bool move_into_place(const char *tmp, const char *path, bool replace,
                            GError **error) {
  int rc;
  if (replace) {
    rc = rename(tmp, path);
  } else {
    rc = renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
      /* A file system without RENAME_NOREPLACE: a hard link also fails
       * when the name exists. */
      rc = link(tmp, path);
      if (rc == 0)
        g_unlink(tmp);
    }
  }
  if (rc == 0)
    return true;
  int saved_errno = errno;
  if (!replace && saved_errno == EEXIST)
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE,
                "%s exists (replace it with --force)", path);
  else
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE,
                "cannot replace %s: %s", path, g_strerror(saved_errno));
  return false;
}

/* CREATE TABLE for the saved copy of `def`: the declared types, id as
 * INTEGER PRIMARY KEY (the rowid itself: no separate index). */
static char *saved_table_sql(const table_def *def) {
  GString *sql = g_string_new(NULL);
  g_string_append_printf(sql, "CREATE TABLE main.\"%s\"(", def->name);
  for (size_t i = 0; i < def->n_columns; i++) {
    const column_def *col = &def->columns[i];
    g_string_append_printf(sql, "%s\"%s\" %s%s", i ? ", " : "", col->name,
                           col->sql_type,
                           col->kind == COL_ID ? " PRIMARY KEY" : "");
  }
  g_string_append_c(sql, ')');
  return g_string_free(sql, FALSE);
}

/* Fills the file `db` (empty) with the model: every table of `tables`
 * copied from a temporary tm_rows source, then the views and indexes. */
static bool save_into(sqlite3 *db, const tm_model *model, const char *path,
                      GError **error) {
  bool ok = false;
  char *sql = NULL;

  if (sqlite3_create_module_v2(db, "tm_rows", &rows_module, (void *)model,
                               NULL) != SQLITE_OK) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE, "writing %s: %s",
                path, sqlite3_errmsg(db));
    goto out;
  }
  /* The file is only visible under its final name once complete: no
   * rollback journal on disk is needed. Large pages and cache make the
   * bulk inserts and index builds cheaper. */
  if (!save_exec(db,
                 "PRAGMA main.page_size = 65536;"
                 "PRAGMA main.journal_mode = MEMORY;"
                 "PRAGMA main.synchronous = OFF;"
                 "PRAGMA main.cache_size = -65536;"
                 "PRAGMA temp_store = MEMORY;"
                 "BEGIN",
                 path, error))
    goto out;
  for (size_t i = 0; i < G_N_ELEMENTS(tables); i++) {
    g_clear_pointer(&sql, g_free);
    sql = saved_table_sql(&tables[i]);
    if (!save_exec(db, sql, path, error))
      goto out;
    /* Indexes first, filled row by row as the rows arrive in id order:
     * each insert lands at the end of its key's run (ts grows with id),
     * which costs less than CREATE INDEX sorting the whole column
     * afterwards (measured on 2M events: the save takes a third less CPU). */
    for (size_t j = 0; j < G_N_ELEMENTS(saved_indexes); j++) {
      const saved_index *index = &saved_indexes[j];
      if (strcmp(index->table, tables[i].name) != 0)
        continue;
      g_clear_pointer(&sql, g_free);
      sql = g_strdup_printf("CREATE INDEX main.\"%s_%s\" ON \"%s\"(%s)",
                            index->table, index->suffix, index->table,
                            index->columns);
      if (!save_exec(db, sql, path, error))
        goto out;
    }
    g_clear_pointer(&sql, g_free);
    sql = g_strdup_printf(
        "CREATE VIRTUAL TABLE temp.tm_source USING tm_rows(%s);"
        "INSERT INTO main.\"%s\" SELECT * FROM temp.tm_source;"
        "DROP TABLE temp.tm_source",
        tables[i].name, tables[i].name);
    if (!save_exec(db, sql, path, error))
      goto out;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(views); i++) {
    g_clear_pointer(&sql, g_free);
    sql = g_strdup_printf("CREATE VIEW main.%s AS %s", views[i].name,
                          views[i].select);
    if (!save_exec(db, sql, path, error))
      goto out;
  }
  g_clear_pointer(&sql, g_free);
  sql = trace_bounds_view_sql(model);
  if (!save_exec(db, sql, path, error))
    goto out;
  /* Statistics for the planner of whichever tool opens the file,
   * estimated from a sample of each index (a full ANALYZE costs as much
   * as building them). */
  if (!save_exec(db, "PRAGMA analysis_limit = 400; ANALYZE main; COMMIT",
                 path, error))
    goto out;
  ok = true;
out:
  g_free(sql);
  return ok;
}

bool sql_surface_check_save_path(const char *path, bool replace,
                                 GError **error) {
  if (save_path_refused(path, error))
    return false;
  GStatBuf st;
  if (!replace && g_lstat(path, &st) == 0) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE,
                "%s exists (replace it with --force)", path);
    return false;
  }
  return true;
}

bool sql_surface_save(tm_sql_surface *surface, const char *path,
                      bool replace, GError **error) {
  if (save_path_refused(path, error))
    return false;
  char *tmp = create_temporary_beside(path, error);
  if (!tmp)
    return false;
  bool ok = false;
  sql_connection *file = sql_connection_open(
      tmp, SQLITE_OPEN_READWRITE, NULL, NULL, error);
  if (!file) {
    g_prefix_error(error, "writing %s: ", path);
    goto out;
  }
  if (!save_into(sql_connection_borrow_db(file), surface->model, path,
                 error))
    goto out;
  g_clear_pointer(&file, sql_connection_close);
  /* On disk before it takes the name: a crash never leaves a torn file
   * where the old one was. */
  if (!sync_file(tmp, path, error))
    goto out;
  ok = move_into_place(tmp, path, replace, error);
out:
  sql_connection_close(file);
  if (!ok)
    g_unlink(tmp);
  g_free(tmp);
  return ok;
}
