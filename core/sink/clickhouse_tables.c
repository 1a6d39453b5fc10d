/*
 * The ClickHouse tables (clickhouse_tables.h): descriptors, CREATE TABLE
 * text, and RowBinary rows.
 *
 * RowBinary is ClickHouse's row format without framing: each column in
 * table order, integers and floats little-endian at their width, a String
 * as a LEB128 length and its bytes, a Nullable(T) as one byte (1 = NULL)
 * followed by T unless NULL. ALIAS columns are not sent. We measured it
 * against TabSeparated on the 18.16 server (docs/clickhouse.md): the
 * server parses both at about the same speed, and RowBinary costs the
 * client no number formatting or escaping.
 *
 * Invariant: a column's `type` is exactly what its kind writes (the
 * descriptor macros pair them), so the DDL and the bytes agree.
 */
#include "sink/clickhouse_tables.h"

#include <stddef.h>
#include <string.h>

#if G_BYTE_ORDER != G_LITTLE_ENDIAN
#error "RowBinary writes host integers as little-endian: port put_fixed()"
#endif

/* ---- bytes --------------------------------------------------------------- */

void ch_bytes_reserve(ch_bytes *bytes, size_t more) {
  if (bytes->cap - bytes->len >= more)
    return;
  size_t cap = MAX(bytes->cap * 2, bytes->len + more);
  cap = MAX(cap, (size_t)4096);
  bytes->data = g_realloc(bytes->data, cap);
  bytes->cap = cap;
}

void ch_bytes_clear(ch_bytes *bytes) {
  g_free(bytes->data);
  *bytes = (ch_bytes){0};
}

/* The put_* helpers write into room reserved by the caller. */
static inline void put_fixed(ch_bytes *b, const void *value, size_t size) {
  memcpy(b->data + b->len, value, size);
  b->len += size;
}

static inline void put_u8(ch_bytes *b, uint8_t v) {
  b->data[b->len++] = (char)v;
}

static inline void put_u32(ch_bytes *b, uint32_t v) { put_fixed(b, &v, 4); }
static inline void put_i64(ch_bytes *b, int64_t v) { put_fixed(b, &v, 8); }
static inline void put_f64(ch_bytes *b, double v) { put_fixed(b, &v, 8); }

/* Reserves its own room: strings have no fixed bound. */
static void put_string(ch_bytes *b, const char *s, size_t len) {
  ch_bytes_reserve(b, len + 10);
  size_t n = len;
  do {
    uint8_t byte = n & 0x7f;
    n >>= 7;
    put_u8(b, (uint8_t)(byte | (n ? 0x80 : 0)));
  } while (n);
  put_fixed(b, s, len);
}

static void put_null(ch_bytes *b) { put_u8(b, 1); }

static void put_nullable_i64(ch_bytes *b, int64_t v) {
  if (v == TM_NULL_INT64) {
    put_null(b);
    return;
  }
  put_u8(b, 0);
  put_i64(b, v);
}

static void put_nullable_u32(ch_bytes *b, uint32_t v, uint32_t null_value) {
  if (v == null_value) {
    put_null(b);
    return;
  }
  put_u8(b, 0);
  put_u32(b, v);
}

static void put_nullable_text(ch_bytes *b, const char *text) {
  ch_bytes_reserve(b, 1);
  if (!text) {
    put_null(b);
    return;
  }
  put_u8(b, 0);
  put_string(b, text, strlen(text));
}

/* ---- descriptors --------------------------------------------------------- */

typedef enum ch_kind {
  CH_ROW_ID,        /* UInt32: the row's index */
  CH_INT64,         /* Int64, never NULL (sort keys) */
  CH_INT64_OR_NULL, /* Nullable(Int64): TM_NULL_INT64 is NULL */
  CH_UINT32,        /* UInt32 (ids that are never NULL) */
  CH_REF,           /* Nullable(UInt32): TM_NULL_ID is NULL */
  CH_ARG_SET,       /* Nullable(UInt32): 0 is NULL */
  CH_STRING,        /* Nullable(String): string id 0 is NULL */
  CH_DOUBLE,        /* Float64 */
  CH_BOOL,          /* UInt8 0/1 */
  CH_INT8_OR_NULL,  /* Nullable(UInt8): negative is NULL */
  CH_COMPUTED,      /* `compute` writes the value */
  CH_ALIAS,         /* not stored: ALIAS `alias` */
} ch_kind;

typedef void (*ch_compute_fn)(ch_encoder *encoder, const void *row,
                              uint32_t id, ch_bytes *out);
/* The machine row a row belongs to, or TM_NULL_ID. */
typedef uint32_t (*ch_machine_fn)(const ch_encoder *encoder, const void *row,
                                  uint32_t id);

typedef struct ch_column {
  const char *name;
  const char *type;
  ch_kind kind;
  size_t offset;
  ch_compute_fn compute;
  const char *alias;
} ch_column;

struct ch_table {
  const char *name;
  const void *(*rows)(const tm_model *model, size_t *count);
  size_t row_size;
  const ch_column *columns;
  size_t n_columns;
  const char *order_by; /* after run_id */
  ch_machine_fn machine_of;
};

struct ch_encoder {
  const ch_table *table;
  const ch_run_source *run;
  const tm_model *model;
  const char *rows;
  size_t n_rows;
  size_t next;
  size_t run_id_len;
  size_t load_id_len;
  size_t thread_time_cursor; /* slice thread times: first entry not passed */
};

#define ID_COL(name) {name, "UInt32", CH_ROW_ID, 0, NULL, NULL}
#define F(T, field, kind, type) {#field, type, kind, offsetof(T, field), NULL, NULL}
#define INT64(T, f) F(T, f, CH_INT64, "Int64")
#define INT64_OR_NULL(T, f) F(T, f, CH_INT64_OR_NULL, "Nullable(Int64)")
#define UINT32(T, f) F(T, f, CH_UINT32, "UInt32")
#define REF(T, f) F(T, f, CH_REF, "Nullable(UInt32)")
#define ARG_SET(T, f) F(T, f, CH_ARG_SET, "Nullable(UInt32)")
#define STRING(T, f) F(T, f, CH_STRING, "Nullable(String)")
#define DOUBLE(T, f) F(T, f, CH_DOUBLE, "Float64")
#define BOOL(T, f) F(T, f, CH_BOOL, "UInt8")
#define INT8_OR_NULL(T, f) F(T, f, CH_INT8_OR_NULL, "Nullable(UInt8)")
#define COMPUTED(name, type, fn) {name, type, CH_COMPUTED, 0, fn, NULL}
#define ALIAS(name, type, expr) {name, type, CH_ALIAS, 0, NULL, expr}

/* ---- machines ---- */

static uint32_t machine_field(const void *row, size_t offset) {
  uint32_t id;
  memcpy(&id, (const char *)row + offset, sizeof id);
  return id;
}

static uint32_t track_machine(const tm_model *model, uint32_t track_id) {
  return track_id < model->tracks.len ? model->tracks.data[track_id].machine_id
                                      : TM_NULL_ID;
}

static uint32_t machine_of_machine(const ch_encoder *e, const void *row,
                                   uint32_t id) {
  (void)e;
  (void)row;
  return id;
}

static uint32_t machine_of_trace_file(const ch_encoder *e, const void *row,
                                      uint32_t id) {
  (void)row;
  return e->run->file_machines && id < e->run->n_file_machines
             ? e->run->file_machines[id]
             : TM_NULL_ID;
}

#define MACHINE_FIELD_FN(T)                                                 \
  static uint32_t machine_of_##T(const ch_encoder *e, const void *row,      \
                                 uint32_t id) {                             \
    (void)e;                                                                \
    (void)id;                                                               \
    return machine_field(row, offsetof(tm_##T##_row, machine_id));          \
  }
MACHINE_FIELD_FN(metadata)
MACHINE_FIELD_FN(stats)
MACHINE_FIELD_FN(process)
MACHINE_FIELD_FN(thread)
MACHINE_FIELD_FN(track)
MACHINE_FIELD_FN(cpu)

static uint32_t machine_of_slice(const ch_encoder *e, const void *row,
                                 uint32_t id) {
  (void)id;
  return track_machine(e->model, ((const tm_slice_row *)row)->track_id);
}

static uint32_t machine_of_counter(const ch_encoder *e, const void *row,
                                   uint32_t id) {
  (void)id;
  return track_machine(e->model, ((const tm_counter_row *)row)->track_id);
}

static uint32_t machine_of_flow(const ch_encoder *e, const void *row,
                                uint32_t id) {
  (void)id;
  uint32_t out = ((const tm_flow_row *)row)->slice_out;
  return out < e->model->slices.len
             ? track_machine(e->model, e->model->slices.data[out].track_id)
             : TM_NULL_ID;
}

static uint32_t machine_of_sched(const ch_encoder *e, const void *row,
                                 uint32_t id) {
  (void)id;
  uint32_t ucpu = ((const tm_sched_row *)row)->ucpu;
  return ucpu < e->model->cpus.len ? e->model->cpus.data[ucpu].machine_id
                                   : TM_NULL_ID;
}

static uint32_t machine_of_thread_state(const ch_encoder *e, const void *row,
                                        uint32_t id) {
  (void)id;
  uint32_t utid = ((const tm_thread_state_row *)row)->utid;
  return utid < e->model->threads.len ? e->model->threads.data[utid].machine_id
                                      : TM_NULL_ID;
}

static uint32_t machine_of_nothing(const ch_encoder *e, const void *row,
                                   uint32_t id) {
  (void)e;
  (void)row;
  (void)id;
  return TM_NULL_ID;
}

/* ---- computed columns ---- */

/* 0 for the host (raw_id 0), else the 1-based rank among the other rows in
 * id order, as the local machine view computes it. */
static void machine_label_index(ch_encoder *e, const void *row, uint32_t id,
                                ch_bytes *out) {
  uint32_t label = 0;
  if (((const tm_machine_row *)row)->raw_id != 0)
    for (uint32_t i = 0; i <= id; i++)
      label += e->model->machines.data[i].raw_id != 0;
  ch_bytes_reserve(out, 4);
  put_u32(out, label);
}

static void metadata_key_type(ch_encoder *e, const void *row, uint32_t id,
                              ch_bytes *out) {
  (void)e;
  (void)id;
  const tm_metadata_row *m = row;
  const char *text = m->key_type == TM_METADATA_MULTI ? "multi" : "single";
  put_string(out, text, strlen(text));
}

static void metadata_int_value(ch_encoder *e, const void *row, uint32_t id,
                               ch_bytes *out) {
  (void)e;
  (void)id;
  const tm_metadata_row *m = row;
  ch_bytes_reserve(out, 9);
  put_nullable_i64(out, m->is_int ? m->int_value : TM_NULL_INT64);
}

static void metadata_str_value(ch_encoder *e, const void *row, uint32_t id,
                               ch_bytes *out) {
  (void)id;
  const tm_metadata_row *m = row;
  put_nullable_text(out, m->is_int ? NULL
                                   : string_pool_borrow(e->model->strings,
                                                        m->str_value));
}

static void track_event_type(ch_encoder *e, const void *row, uint32_t id,
                             ch_bytes *out) {
  (void)e;
  (void)id;
  static const char *const names[] = {
      [TM_TRACK_SLICE] = "slice",
      [TM_TRACK_COUNTER] = "counter",
      [TM_TRACK_STATE] = "state",
  };
  uint8_t type = ((const tm_track_row *)row)->event_type;
  put_nullable_text(out, type < G_N_ELEMENTS(names) ? names[type] : NULL);
}

static void track_ucpu(ch_encoder *e, const void *row, uint32_t id,
                       ch_bytes *out) {
  (void)e;
  (void)id;
  uint32_t cpu = ((const tm_track_row *)row)->cpu_dimension;
  ch_bytes_reserve(out, 5);
  /* cpu_dimension is ucpu + 1; 0 (no cpu) becomes TM_NULL_ID. */
  put_nullable_u32(out, cpu - 1, TM_NULL_ID);
}

/* Thread times are sorted by slice id and slices are encoded in id order:
 * one cursor walks both. */
static const tm_slice_thread_time *slice_thread_time(ch_encoder *e,
                                                     uint32_t id) {
  const tm_model *model = e->model;
  size_t *cursor = &e->thread_time_cursor;
  while (*cursor < model->slice_thread_times.len &&
         model->slice_thread_times.data[*cursor].slice_id < id)
    (*cursor)++;
  if (*cursor < model->slice_thread_times.len &&
      model->slice_thread_times.data[*cursor].slice_id == id)
    return &model->slice_thread_times.data[*cursor];
  return NULL;
}

static void slice_thread_ts(ch_encoder *e, const void *row, uint32_t id,
                            ch_bytes *out) {
  (void)row;
  const tm_slice_thread_time *tt = slice_thread_time(e, id);
  ch_bytes_reserve(out, 9);
  put_nullable_i64(out, tt ? tt->thread_ts : TM_NULL_INT64);
}

static void slice_thread_dur(ch_encoder *e, const void *row, uint32_t id,
                             ch_bytes *out) {
  (void)row;
  const tm_slice_thread_time *tt = slice_thread_time(e, id);
  ch_bytes_reserve(out, 9);
  put_nullable_i64(out, tt ? tt->thread_dur : TM_NULL_INT64);
}

static bool arg_is_integer(const tm_arg_row *a) {
  switch (a->value_type) {
  case TM_ARG_INT:
  case TM_ARG_UINT:
  case TM_ARG_POINTER:
  case TM_ARG_BOOL:
    return true;
  default:
    return false;
  }
}

static void arg_int_value(ch_encoder *e, const void *row, uint32_t id,
                          ch_bytes *out) {
  (void)e;
  (void)id;
  const tm_arg_row *a = row;
  ch_bytes_reserve(out, 9);
  if (arg_is_integer(a)) {
    put_u8(out, 0);
    put_i64(out, a->u.int_value);
  } else {
    put_null(out);
  }
}

static void arg_string_value(ch_encoder *e, const void *row, uint32_t id,
                             ch_bytes *out) {
  (void)id;
  const tm_arg_row *a = row;
  bool text = a->value_type == TM_ARG_STRING || a->value_type == TM_ARG_JSON;
  put_nullable_text(out, text ? string_pool_borrow(e->model->strings,
                                                   a->u.str_id)
                              : NULL);
}

static void arg_real_value(ch_encoder *e, const void *row, uint32_t id,
                           ch_bytes *out) {
  (void)e;
  (void)id;
  const tm_arg_row *a = row;
  ch_bytes_reserve(out, 9);
  if (a->value_type == TM_ARG_REAL) {
    put_u8(out, 0);
    put_f64(out, a->u.real_value);
  } else {
    put_null(out);
  }
}

static void arg_value_type(ch_encoder *e, const void *row, uint32_t id,
                           ch_bytes *out) {
  (void)e;
  (void)id;
  static const char *const names[] = {
      [TM_ARG_INT] = "int",         [TM_ARG_UINT] = "uint",
      [TM_ARG_STRING] = "string",   [TM_ARG_REAL] = "real",
      [TM_ARG_POINTER] = "pointer", [TM_ARG_BOOL] = "bool",
      [TM_ARG_JSON] = "json",
  };
  uint8_t type = ((const tm_arg_row *)row)->value_type;
  put_nullable_text(out, type < G_N_ELEMENTS(names) ? names[type] : NULL);
}

/* ---- the tables ---- */

static const ch_column machine_columns[] = {
    ID_COL("id"),
    INT64(tm_machine_row, raw_id),
    STRING(tm_machine_row, name),
    STRING(tm_machine_row, sysname),
    STRING(tm_machine_row, release),
    STRING(tm_machine_row, version),
    STRING(tm_machine_row, arch),
    INT64_OR_NULL(tm_machine_row, num_cpus),
    STRING(tm_machine_row, android_build_fingerprint),
    STRING(tm_machine_row, android_device_manufacturer),
    INT64_OR_NULL(tm_machine_row, android_sdk_version),
    INT64_OR_NULL(tm_machine_row, system_ram_bytes),
    INT64_OR_NULL(tm_machine_row, system_ram_gb),
    COMPUTED("label_index", "UInt32", machine_label_index),
};

static const ch_column trace_file_columns[] = {
    ID_COL("id"),
    REF(tm_trace_file_row, parent_id),
    STRING(tm_trace_file_row, name),
    INT64_OR_NULL(tm_trace_file_row, size),
    STRING(tm_trace_file_row, trace_type),
    INT64_OR_NULL(tm_trace_file_row, processing_order),
    BOOL(tm_trace_file_row, is_container),
};

static const ch_column metadata_columns[] = {
    ID_COL("id"),
    STRING(tm_metadata_row, name),
    COMPUTED("key_type", "String", metadata_key_type),
    COMPUTED("int_value", "Nullable(Int64)", metadata_int_value),
    COMPUTED("str_value", "Nullable(String)", metadata_str_value),
    REF(tm_metadata_row, trace_id),
};

static const ch_column stats_columns[] = {
    ID_COL("id"),
    STRING(tm_stats_row, name),
    INT64_OR_NULL(tm_stats_row, idx),
    STRING(tm_stats_row, severity),
    STRING(tm_stats_row, source),
    INT64(tm_stats_row, value),
    STRING(tm_stats_row, description),
    REF(tm_stats_row, trace_id),
};

static const ch_column process_columns[] = {
    ID_COL("id"),
    ALIAS("upid", "UInt32", "id"),
    INT64_OR_NULL(tm_process_row, pid),
    STRING(tm_process_row, name),
    INT64_OR_NULL(tm_process_row, start_ts),
    INT64_OR_NULL(tm_process_row, end_ts),
    REF(tm_process_row, parent_upid),
    INT64_OR_NULL(tm_process_row, uid),
    INT64_OR_NULL(tm_process_row, android_appid),
    INT64_OR_NULL(tm_process_row, android_user_id),
    STRING(tm_process_row, cmdline),
    ARG_SET(tm_process_row, arg_set_id),
};

static const ch_column thread_columns[] = {
    ID_COL("id"),
    ALIAS("utid", "UInt32", "id"),
    INT64_OR_NULL(tm_thread_row, tid),
    STRING(tm_thread_row, name),
    INT64_OR_NULL(tm_thread_row, start_ts),
    INT64_OR_NULL(tm_thread_row, end_ts),
    REF(tm_thread_row, upid),
    INT8_OR_NULL(tm_thread_row, is_main_thread),
    INT8_OR_NULL(tm_thread_row, is_idle),
    ARG_SET(tm_thread_row, arg_set_id),
};

static const ch_column track_columns[] = {
    ID_COL("id"),
    STRING(tm_track_row, name),
    STRING(tm_track_row, type),
    ARG_SET(tm_track_row, dimension_arg_set_id),
    REF(tm_track_row, parent_id),
    ARG_SET(tm_track_row, source_arg_set_id),
    REF(tm_track_row, track_group_id),
    COMPUTED("event_type", "Nullable(String)", track_event_type),
    STRING(tm_track_row, counter_unit),
    REF(tm_track_row, utid),
    REF(tm_track_row, upid),
    REF(tm_track_row, trace_id),
    COMPUTED("ucpu", "Nullable(UInt32)", track_ucpu),
};

static const ch_column cpu_columns[] = {
    ID_COL("id"),
    ALIAS("ucpu", "UInt32", "id"),
    UINT32(tm_cpu_row, cpu),
};

static const ch_column slice_columns[] = {
    ID_COL("id"),
    ALIAS("slice_id", "UInt32", "id"),
    INT64(tm_slice_row, ts),
    INT64(tm_slice_row, dur),
    UINT32(tm_slice_row, track_id),
    STRING(tm_slice_row, category),
    ALIAS("cat", "Nullable(String)", "category"),
    STRING(tm_slice_row, name),
    UINT32(tm_slice_row, depth),
    REF(tm_slice_row, parent_id),
    ARG_SET(tm_slice_row, arg_set_id),
    COMPUTED("thread_ts", "Nullable(Int64)", slice_thread_ts),
    COMPUTED("thread_dur", "Nullable(Int64)", slice_thread_dur),
};

static const ch_column counter_columns[] = {
    ID_COL("id"),
    INT64(tm_counter_row, ts),
    UINT32(tm_counter_row, track_id),
    DOUBLE(tm_counter_row, value),
    ARG_SET(tm_counter_row, arg_set_id),
};

static const ch_column sched_columns[] = {
    ID_COL("id"),
    INT64(tm_sched_row, ts),
    INT64(tm_sched_row, dur),
    ALIAS("ts_end", "Int64", "ts + dur"),
    UINT32(tm_sched_row, ucpu),
    ALIAS("cpu", "UInt32", "ucpu"),
    UINT32(tm_sched_row, utid),
    STRING(tm_sched_row, end_state),
    INT64_OR_NULL(tm_sched_row, priority),
};

static const ch_column thread_state_columns[] = {
    ID_COL("id"),
    INT64(tm_thread_state_row, ts),
    INT64(tm_thread_state_row, dur),
    REF(tm_thread_state_row, ucpu),
    ALIAS("cpu", "Nullable(UInt32)", "ucpu"),
    UINT32(tm_thread_state_row, utid),
    STRING(tm_thread_state_row, state),
    REF(tm_thread_state_row, waker_utid),
    REF(tm_thread_state_row, waker_id),
};

static const ch_column flow_columns[] = {
    ID_COL("id"),
    UINT32(tm_flow_row, slice_out),
    UINT32(tm_flow_row, slice_in),
    INT64_OR_NULL(tm_flow_row, trace_id),
    ARG_SET(tm_flow_row, arg_set_id),
};

static const ch_column args_columns[] = {
    ID_COL("id"),
    UINT32(tm_arg_row, arg_set_id),
    STRING(tm_arg_row, flat_key),
    STRING(tm_arg_row, key),
    COMPUTED("int_value", "Nullable(Int64)", arg_int_value),
    COMPUTED("string_value", "Nullable(String)", arg_string_value),
    COMPUTED("real_value", "Nullable(Float64)", arg_real_value),
    COMPUTED("value_type", "Nullable(String)", arg_value_type),
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
ROWS_FN(processes)
ROWS_FN(threads)
ROWS_FN(tracks)
ROWS_FN(cpus)
ROWS_FN(slices)
ROWS_FN(counters)
ROWS_FN(sched_slices)
ROWS_FN(thread_states)
ROWS_FN(flows)
ROWS_FN(args)

#define TABLE(name, field, T, columns, order_by, machine_fn)                \
  {name, rows_##field, sizeof(T), columns, G_N_ELEMENTS(columns), order_by, \
   machine_fn}

/* Publishing order: `machine` last, so a run listed there has every table
 * published (docs/clickhouse.md, "Loads"). */
static const ch_table tables[] = {
    TABLE("slice", slices, tm_slice_row, slice_columns, "machine, ts",
          machine_of_slice),
    TABLE("counter", counters, tm_counter_row, counter_columns, "machine, ts",
          machine_of_counter),
    TABLE("sched", sched_slices, tm_sched_row, sched_columns, "machine, ts",
          machine_of_sched),
    TABLE("thread_state", thread_states, tm_thread_state_row,
          thread_state_columns, "machine, ts", machine_of_thread_state),
    TABLE("flow", flows, tm_flow_row, flow_columns, "slice_out",
          machine_of_flow),
    TABLE("args", args, tm_arg_row, args_columns, "arg_set_id",
          machine_of_nothing),
    TABLE("thread", threads, tm_thread_row, thread_columns, "id",
          machine_of_thread),
    TABLE("process", processes, tm_process_row, process_columns, "id",
          machine_of_process),
    TABLE("track", tracks, tm_track_row, track_columns, "id",
          machine_of_track),
    TABLE("cpu", cpus, tm_cpu_row, cpu_columns, "id", machine_of_cpu),
    TABLE("trace_file", trace_files, tm_trace_file_row, trace_file_columns,
          "id", machine_of_trace_file),
    TABLE("stats", stats, tm_stats_row, stats_columns, "id",
          machine_of_stats),
    TABLE("metadata", metadata, tm_metadata_row, metadata_columns, "id",
          machine_of_metadata),
    TABLE("machine", machines, tm_machine_row, machine_columns, "id",
          machine_of_machine),
};

size_t ch_table_count(void) { return G_N_ELEMENTS(tables); }

const ch_table *ch_table_at(size_t index) {
  return index < G_N_ELEMENTS(tables) ? &tables[index] : NULL;
}

const char *ch_table_name(const ch_table *table) { return table->name; }

size_t ch_table_row_count(const ch_table *table, const tm_model *model) {
  size_t count = 0;
  table->rows(model, &count);
  return count;
}

char *ch_table_create_sql(const ch_table *table, const char *qualified_name) {
  GString *sql = g_string_new(NULL);
  g_string_append_printf(sql,
                         "CREATE TABLE IF NOT EXISTS %s (`run_id` String, "
                         "`load_id` String, `machine` String, "
                         "`machine_id` Nullable(UInt32)",
                         qualified_name);
  for (size_t i = 0; i < table->n_columns; i++) {
    const ch_column *col = &table->columns[i];
    g_string_append_printf(sql, ", `%s` %s", col->name, col->type);
    if (col->kind == CH_ALIAS)
      g_string_append_printf(sql, " ALIAS %s", col->alias);
  }
  g_string_append_printf(sql,
                         ") ENGINE = MergeTree() PARTITION BY load_id "
                         "ORDER BY (run_id, %s)",
                         table->order_by);
  return g_string_free(sql, FALSE);
}

/* ---- encoding ------------------------------------------------------------ */

ch_encoder *ch_encoder_new(const ch_table *table, const ch_run_source *run) {
  ch_encoder *e = g_new0(ch_encoder, 1);
  e->table = table;
  e->run = run;
  e->model = run->model;
  e->rows = table->rows(run->model, &e->n_rows);
  e->run_id_len = strlen(run->run_id);
  e->load_id_len = strlen(run->load_id);
  return e;
}

void ch_encoder_free(ch_encoder *encoder) { g_free(encoder); }

static void put_machine(const ch_encoder *e, uint32_t machine_id,
                        ch_bytes *out) {
  const tm_model *model = e->model;
  const char *name = NULL;
  size_t len = 0;
  bool known = machine_id < model->machines.len;
  if (known) {
    tm_str_id name_id = model->machines.data[machine_id].name;
    name = string_pool_borrow(model->strings, name_id);
    len = string_pool_length(model->strings, name_id);
  }
  put_string(out, name ? name : "", name ? len : 0);
  ch_bytes_reserve(out, 5);
  put_nullable_u32(out, known ? machine_id : TM_NULL_ID, TM_NULL_ID);
}

static void put_column(ch_encoder *e, const ch_column *col, const char *row,
                       uint32_t id, ch_bytes *out) {
  const char *field = row + col->offset;
  const tm_string_pool *strings = e->model->strings;
  uint32_t u32;
  int64_t i64;
  switch (col->kind) {
  case CH_ROW_ID:
    put_u32(out, id);
    break;
  case CH_INT64:
    memcpy(&i64, field, 8);
    put_i64(out, i64);
    break;
  case CH_INT64_OR_NULL:
    memcpy(&i64, field, 8);
    put_nullable_i64(out, i64);
    break;
  case CH_UINT32:
    memcpy(&u32, field, 4);
    put_u32(out, u32);
    break;
  case CH_REF:
    memcpy(&u32, field, 4);
    put_nullable_u32(out, u32, TM_NULL_ID);
    break;
  case CH_ARG_SET:
    memcpy(&u32, field, 4);
    put_nullable_u32(out, u32, 0);
    break;
  case CH_STRING: {
    tm_str_id sid;
    memcpy(&sid, field, sizeof sid);
    if (sid == 0) {
      put_null(out);
      break;
    }
    put_u8(out, 0);
    put_string(out, string_pool_borrow(strings, sid),
               string_pool_length(strings, sid));
    break;
  }
  case CH_DOUBLE: {
    double d;
    memcpy(&d, field, 8);
    put_f64(out, d);
    break;
  }
  case CH_BOOL:
    put_u8(out, *(const bool *)(const void *)field ? 1 : 0);
    break;
  case CH_INT8_OR_NULL: {
    int8_t v = *(const int8_t *)(const void *)field;
    if (v < 0) {
      put_null(out);
    } else {
      put_u8(out, 0);
      put_u8(out, (uint8_t)v);
    }
    break;
  }
  case CH_COMPUTED:
    col->compute(e, row, id, out);
    break;
  case CH_ALIAS:
    break;
  }
}

size_t ch_encoder_fill(ch_encoder *e, ch_bytes *out, size_t target) {
  const ch_table *table = e->table;
  size_t appended = 0;
  while (e->next < e->n_rows && out->len < target) {
    uint32_t id = (uint32_t)e->next;
    const char *row = e->rows + e->next * table->row_size;
    put_string(out, e->run->run_id, e->run_id_len);
    put_string(out, e->run->load_id, e->load_id_len);
    put_machine(e, table->machine_of(e, row, id), out);
    for (size_t c = 0; c < table->n_columns; c++) {
      /* Re-reserved per column: a string may have used the room. */
      ch_bytes_reserve(out, 10);
      put_column(e, &table->columns[c], row, id, out);
    }
    e->next++;
    appended++;
  }
  return appended;
}
