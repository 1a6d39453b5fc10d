/*
 * The ClickHouse tables (clickhouse_tables.h): descriptors, CREATE TABLE
 * text, and the rows in ClickHouse's Native format.
 *
 * Native is the server's own block format, column by column: a block is
 * a LEB128 column count and row count, then per column its name and type
 * (LEB128-length strings) and the values of all the block's rows: an
 * integer or float as an array of little-endian values of its width, a
 * String as a LEB128 length and the bytes per row, a Nullable(T) as one
 * byte per row (1 = NULL) followed by T's values for all rows (a default
 * value, 0 or "", in the NULL rows), a LowCardinality(T) as its
 * dictionary and indexes (put_dictionary()). Over plain HTTP (no protocol
 * version asked for) there is no block-info header; ClickHouse's current
 * documentation of the format gives the same layout for these types as
 * the 18.16 server writes and reads. The 18.16 server spends about half
 * the CPU per row on Native that it spends on RowBinary
 * (docs/clickhouse.md, "Wire format"), mostly because it reads whole
 * columns instead of one value at a time.
 *
 * Invariant: how a column is written follows from its DDL type
 * (wire_type_of() reads the `type` text once per encoder), so the DDL and
 * the bytes agree. ALIAS columns are not sent.
 */
#include "sink/clickhouse_tables.h"

#include <stddef.h>
#include <string.h>

#if G_BYTE_ORDER != G_LITTLE_ENDIAN
#error "Native writes host integers as little-endian: port put_fixed()"
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

static inline void put_varuint(ch_bytes *b, uint64_t n) {
  do {
    uint8_t byte = n & 0x7f;
    n >>= 7;
    put_u8(b, (uint8_t)(byte | (n ? 0x80 : 0)));
  } while (n);
}

/* Reserves its own room: strings have no fixed bound. */
static void put_string(ch_bytes *b, const char *s, size_t len) {
  ch_bytes_reserve(b, len + 10);
  put_varuint(b, len);
  put_fixed(b, s, len);
}

/* One value of a column, as the descriptor reads it from the model. */
typedef struct ch_value {
  bool null;
  int64_t i;     /* UInt8, UInt32, Int64 */
  double d;      /* Float64 */
  const char *s; /* String: `len` bytes */
  size_t len;
} ch_value;

static inline void set_int(ch_value *v, int64_t i) {
  v->null = false;
  v->i = i;
}

static inline void set_null(ch_value *v) {
  v->null = true;
  v->i = 0;
  v->d = 0;
  v->s = "";
  v->len = 0;
}

static void set_text(ch_value *v, const char *text) {
  if (!text) {
    set_null(v);
    return;
  }
  v->null = false;
  v->s = text;
  v->len = strlen(text);
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
  CH_INT32,         /* int32_t, never NULL, sent as the column's Int64 */
  CH_COMPUTED,      /* `compute` gives the value */
  CH_ALIAS,         /* not stored: ALIAS `alias` */
} ch_kind;

typedef void (*ch_compute_fn)(ch_encoder *encoder, const void *row,
                              uint32_t id, ch_value *value);
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

/* How a column's values are written: its type without Nullable(). */
typedef enum ch_wire_type {
  CH_WIRE_UINT8,
  CH_WIRE_UINT32,
  CH_WIRE_INT64,
  CH_WIRE_FLOAT64,
  CH_WIRE_STRING,
} ch_wire_type;

/* The columns sent: the four every table starts with, then the table's
 * stored columns. */
typedef enum ch_leading {
  CH_LEAD_RUN_ID,
  CH_LEAD_LOAD_ID,
  CH_LEAD_MACHINE,
  CH_LEAD_MACHINE_ID,
  CH_LEAD_NONE, /* a column of the table */
} ch_leading;

typedef struct ch_wire_column {
  const char *name;
  const char *type;
  ch_wire_type wire;
  bool nullable;        /* Nullable(T), or LowCardinality(Nullable(T)) */
  bool low_cardinality; /* LowCardinality(...): a String's dictionary */
  ch_leading leading;
  const ch_column *column; /* CH_LEAD_NONE */
} ch_wire_column;

/* Where the encoder is inside a block. */
typedef enum ch_phase {
  CH_PHASE_HEAD,   /* the column's name and type are next */
  CH_PHASE_NULLS,  /* its null map */
  CH_PHASE_VALUES, /* its values */
  CH_PHASE_DICTIONARY, /* LowCardinality: its block's dictionary */
  CH_PHASE_INDEXES,    /* LowCardinality: each row's place in it */
} ch_phase;

/* A LowCardinality column's dictionary for one block: the distinct
 * strings of its rows, keyed by their address. Equal strings have one
 * address: the model's strings are interned (string pool), computed ones
 * are constants, so the key is cheap to hash and never compares bytes. */
typedef struct ch_dictionary {
  const char **keys; /* in index order, after the reserved ones */
  size_t *key_lens;
  size_t n_keys;
  size_t keys_cap;
  const char **slot_key; /* open addressing; NULL: empty */
  uint32_t *slot_index;
  size_t mask; /* slots - 1 */
  uint32_t reserved; /* indexes before keys[0]: NULL's, the default's */
  uint8_t index_width; /* bytes per index: 1, 2 or 4 */
} ch_dictionary;

#define CH_LEADING_COLUMNS 4

struct ch_encoder {
  const ch_table *table;
  const ch_run_source *run;
  const tm_model *model;
  const char *rows;
  size_t n_rows;
  size_t run_id_len;
  size_t load_id_len;
  size_t block_rows;
  ch_wire_column *wire; /* CH_LEADING_COLUMNS + the table's stored ones */
  size_t n_wire;
  /* The block being written: rows [block_start, block_end), in column
   * `column` (n_wire: all written), `phase`, next row `row`. No block is
   * open when block_start == block_end. */
  size_t block_start;
  size_t block_end;
  size_t column;
  ch_phase phase;
  size_t row;
  uint64_t rows_done; /* rows of the blocks written whole */
  ch_dictionary dictionary; /* CH_PHASE_DICTIONARY, CH_PHASE_INDEXES */
};

#define ID_COL(name) {name, "UInt32", CH_ROW_ID, 0, NULL, NULL}
#define F(T, field, kind, type) {#field, type, kind, offsetof(T, field), NULL, NULL}
#define INT64(T, f) F(T, f, CH_INT64, "Int64")
#define INT64_OR_NULL(T, f) F(T, f, CH_INT64_OR_NULL, "Nullable(Int64)")
#define UINT32(T, f) F(T, f, CH_UINT32, "UInt32")
#define REF(T, f) F(T, f, CH_REF, "Nullable(UInt32)")
#define ARG_SET(T, f) F(T, f, CH_ARG_SET, "Nullable(UInt32)")
#define STRING(T, f) F(T, f, CH_STRING, "Nullable(String)")
/* Few distinct values: the server stores each block's dictionary once
 * (docs/clickhouse.md, "Wire format"). */
#define LC_STRING_TYPE "LowCardinality(Nullable(String))"
#define LC_STRING(T, f) F(T, f, CH_STRING, LC_STRING_TYPE)
#define DOUBLE(T, f) F(T, f, CH_DOUBLE, "Float64")
#define BOOL(T, f) F(T, f, CH_BOOL, "UInt8")
#define INT8_OR_NULL(T, f) F(T, f, CH_INT8_OR_NULL, "Nullable(UInt8)")
/* An int32 field in a Nullable(Int64) column: the schema kept when the
 * model's field was narrowed (sched.priority). */
#define INT32_AS_INT64_OR_NULL(T, f) F(T, f, CH_INT32, "Nullable(Int64)")
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
                                ch_value *v) {
  uint32_t label = 0;
  if (((const tm_machine_row *)row)->raw_id != 0)
    for (uint32_t i = 0; i <= id; i++)
      label += e->model->machines.data[i].raw_id != 0;
  set_int(v, label);
}

static void metadata_key_type(ch_encoder *e, const void *row, uint32_t id,
                              ch_value *v) {
  (void)e;
  (void)id;
  const tm_metadata_row *m = row;
  set_text(v, m->key_type == TM_METADATA_MULTI ? "multi" : "single");
}

static void metadata_int_value(ch_encoder *e, const void *row, uint32_t id,
                               ch_value *v) {
  (void)e;
  (void)id;
  const tm_metadata_row *m = row;
  if (m->is_int && m->int_value != TM_NULL_INT64)
    set_int(v, m->int_value);
  else
    set_null(v);
}

static void metadata_str_value(ch_encoder *e, const void *row, uint32_t id,
                               ch_value *v) {
  (void)id;
  const tm_metadata_row *m = row;
  set_text(v, m->is_int ? NULL
                        : string_pool_borrow(e->model->strings, m->str_value));
}

static void track_event_type(ch_encoder *e, const void *row, uint32_t id,
                             ch_value *v) {
  (void)e;
  (void)id;
  static const char *const names[] = {
      [TM_TRACK_SLICE] = "slice",
      [TM_TRACK_COUNTER] = "counter",
      [TM_TRACK_STATE] = "state",
  };
  uint8_t type = ((const tm_track_row *)row)->event_type;
  set_text(v, type < G_N_ELEMENTS(names) ? names[type] : NULL);
}

static void track_ucpu(ch_encoder *e, const void *row, uint32_t id,
                       ch_value *v) {
  (void)e;
  (void)id;
  uint32_t cpu = ((const tm_track_row *)row)->cpu_dimension;
  /* cpu_dimension is ucpu + 1; 0 (no cpu) is NULL. */
  if (cpu == 0)
    set_null(v);
  else
    set_int(v, cpu - 1);
}

/* A slice's ts, dur and category are coded in its row (model.h). */
static void slice_ts(ch_encoder *e, const void *row, uint32_t id, ch_value *v) {
  (void)row;
  set_int(v, model_slice_ts(e->model, id));
}

static void slice_dur(ch_encoder *e, const void *row, uint32_t id, ch_value *v) {
  (void)id;
  set_int(v, model_slice_dur(e->model, row));
}

static void slice_depth(ch_encoder *e, const void *row, uint32_t id, ch_value *v) {
  (void)e;
  (void)id;
  set_int(v, ((const tm_slice_row *)row)->depth);
}

static void slice_category(ch_encoder *e, const void *row, uint32_t id, ch_value *v) {
  (void)row;
  tm_str_id sid = model_slice_category(e->model, id);
  if (sid == 0) {
    set_null(v);
    return;
  }
  v->null = false;
  v->s = string_pool_borrow(e->model->strings, sid);
  v->len = string_pool_length(e->model->strings, sid);
}

/* Thread time is found by slice id in O(1) (model/thread_times.h). */
static void slice_thread_ts(ch_encoder *e, const void *row, uint32_t id,
                            ch_value *v) {
  (void)row;
  int64_t thread_ts, thread_dur;
  if (model_slice_thread_time(e->model, id, &thread_ts, &thread_dur) &&
      thread_ts != TM_NULL_INT64)
    set_int(v, thread_ts);
  else
    set_null(v);
}

static void slice_thread_dur(ch_encoder *e, const void *row, uint32_t id,
                             ch_value *v) {
  (void)row;
  int64_t thread_ts, thread_dur;
  if (model_slice_thread_time(e->model, id, &thread_ts, &thread_dur) &&
      thread_dur != TM_NULL_INT64)
    set_int(v, thread_dur);
  else
    set_null(v);
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

static void arg_set_of_row(ch_encoder *e, const void *row, uint32_t id,
                           ch_value *v) {
  (void)row;
  set_int(v, model_arg_set_id(e->model, id));
}

static void arg_int_value(ch_encoder *e, const void *row, uint32_t id,
                          ch_value *v) {
  (void)id;
  const tm_arg_row *a = row;
  if (arg_is_integer(model_arg_key(e->model, a)->value_type))
    set_int(v, model_arg_int(e->model, a));
  else
    set_null(v);
}

static void arg_string_value(ch_encoder *e, const void *row, uint32_t id,
                             ch_value *v) {
  (void)id;
  const tm_arg_row *a = row;
  uint8_t type = model_arg_key(e->model, a)->value_type;
  bool text = type == TM_ARG_STRING || type == TM_ARG_JSON;
  size_t len;
  set_text(v, text ? model_arg_string(e->model, a, &len) : NULL);
}

static void arg_real_value(ch_encoder *e, const void *row, uint32_t id,
                           ch_value *v) {
  (void)id;
  const tm_arg_row *a = row;
  if (model_arg_key(e->model, a)->value_type == TM_ARG_REAL) {
    v->null = false;
    v->d = model_arg_real(e->model, a);
  } else {
    set_null(v);
  }
}

static void arg_value_type(ch_encoder *e, const void *row, uint32_t id,
                           ch_value *v) {
  (void)id;
  static const char *const names[] = {
      [TM_ARG_INT] = "int",         [TM_ARG_UINT] = "uint",
      [TM_ARG_STRING] = "string",   [TM_ARG_REAL] = "real",
      [TM_ARG_POINTER] = "pointer", [TM_ARG_BOOL] = "bool",
      [TM_ARG_JSON] = "json",
  };
  uint8_t type = model_arg_key(e->model, row)->value_type;
  set_text(v, type < G_N_ELEMENTS(names) ? names[type] : NULL);
}

static void arg_string_of(ch_encoder *e, tm_str_id id, ch_value *v) {
  const char *text = id ? string_pool_borrow(e->model->strings, id) : NULL;
  if (!text) {
    set_null(v);
    return;
  }
  v->null = false;
  v->s = text;
  v->len = string_pool_length(e->model->strings, id);
}

static void arg_flat_key(ch_encoder *e, const void *row, uint32_t id,
                         ch_value *v) {
  (void)id;
  arg_string_of(e, model_arg_key(e->model, row)->flat_key, v);
}

static void arg_key(ch_encoder *e, const void *row, uint32_t id, ch_value *v) {
  (void)id;
  arg_string_of(e, model_arg_key(e->model, row)->key, v);
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
    COMPUTED("ts", "Int64", slice_ts),
    COMPUTED("dur", "Int64", slice_dur),
    UINT32(tm_slice_row, track_id),
    COMPUTED("category", LC_STRING_TYPE, slice_category),
    ALIAS("cat", LC_STRING_TYPE, "category"),
    LC_STRING(tm_slice_row, name),
    COMPUTED("depth", "UInt32", slice_depth),
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
    INT32_AS_INT64_OR_NULL(tm_sched_row, priority),
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
    COMPUTED("arg_set_id", "UInt32", arg_set_of_row),
    COMPUTED("flat_key", LC_STRING_TYPE, arg_flat_key),
    COMPUTED("key", LC_STRING_TYPE, arg_key),
    COMPUTED("int_value", "Nullable(Int64)", arg_int_value),
    COMPUTED("string_value", "Nullable(String)", arg_string_value),
    COMPUTED("real_value", "Nullable(Float64)", arg_real_value),
    COMPUTED("value_type", LC_STRING_TYPE, arg_value_type),
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

/* The way `type` (a descriptor's DDL type) is written. */
static ch_wire_type wire_type_of(const char *type, bool *nullable,
                                 bool *low_cardinality) {
  static const struct {
    const char *name;
    ch_wire_type wire;
  } known[] = {
      {"UInt8", CH_WIRE_UINT8},     {"UInt32", CH_WIRE_UINT32},
      {"Int64", CH_WIRE_INT64},     {"Float64", CH_WIRE_FLOAT64},
      {"String", CH_WIRE_STRING},
  };
  size_t len = strlen(type);
  *low_cardinality = g_str_has_prefix(type, "LowCardinality(") &&
                     type[len - 1] == ')';
  if (*low_cardinality) {
    type += strlen("LowCardinality(");
    len -= strlen("LowCardinality()");
  }
  *nullable = g_str_has_prefix(type, "Nullable(") && type[len - 1] == ')';
  const char *base = *nullable ? type + strlen("Nullable(") : type;
  size_t base_len = *nullable ? len - strlen("Nullable()") : len;
  /* LowCardinality only of String: the dictionary holds strings. */
  for (size_t i = 0; i < G_N_ELEMENTS(known); i++)
    if (strlen(known[i].name) == base_len &&
        strncmp(known[i].name, base, base_len) == 0 &&
        (!*low_cardinality || known[i].wire == CH_WIRE_STRING))
      return known[i].wire;
  g_error("clickhouse_tables: no Native encoding for column type %s", type);
}

ch_encoder *ch_encoder_new(const ch_table *table, const ch_run_source *run,
                           size_t block_rows) {
  static const ch_wire_column leading[CH_LEADING_COLUMNS] = {
      {.name = "run_id", .type = "String", .wire = CH_WIRE_STRING,
       .leading = CH_LEAD_RUN_ID},
      {.name = "load_id", .type = "String", .wire = CH_WIRE_STRING,
       .leading = CH_LEAD_LOAD_ID},
      {.name = "machine", .type = "String", .wire = CH_WIRE_STRING,
       .leading = CH_LEAD_MACHINE},
      {.name = "machine_id", .type = "Nullable(UInt32)",
       .wire = CH_WIRE_UINT32, .nullable = true,
       .leading = CH_LEAD_MACHINE_ID},
  };
  ch_encoder *e = g_new0(ch_encoder, 1);
  e->table = table;
  e->run = run;
  e->model = run->model;
  e->rows = table->rows(run->model, &e->n_rows);
  e->run_id_len = strlen(run->run_id);
  e->load_id_len = strlen(run->load_id);
  e->block_rows = MAX(block_rows, (size_t)1);
  e->wire = g_new0(ch_wire_column, CH_LEADING_COLUMNS + table->n_columns);
  memcpy(e->wire, leading, sizeof leading);
  e->n_wire = CH_LEADING_COLUMNS;
  for (size_t c = 0; c < table->n_columns; c++) {
    const ch_column *col = &table->columns[c];
    if (col->kind == CH_ALIAS)
      continue;
    ch_wire_column *w = &e->wire[e->n_wire++];
    w->name = col->name;
    w->type = col->type;
    w->wire = wire_type_of(col->type, &w->nullable, &w->low_cardinality);
    w->leading = CH_LEAD_NONE;
    w->column = col;
  }
  return e;
}

void ch_encoder_free(ch_encoder *encoder) {
  if (!encoder)
    return;
  g_free(encoder->dictionary.keys);
  g_free(encoder->dictionary.key_lens);
  g_free(encoder->dictionary.slot_key);
  g_free(encoder->dictionary.slot_index);
  g_free(encoder->wire);
  g_free(encoder);
}

void ch_encoder_limit(ch_encoder *encoder, size_t first, size_t end) {
  encoder->n_rows = MIN(end, encoder->n_rows);
  encoder->block_start = encoder->block_end = MIN(first, encoder->n_rows);
}

uint64_t ch_encoder_rows_done(const ch_encoder *encoder) {
  return encoder->rows_done;
}

static void machine_value(const ch_encoder *e, const char *row, uint32_t id,
                          bool want_name, ch_value *v) {
  const tm_model *model = e->model;
  uint32_t machine_id = e->table->machine_of(e, row, id);
  bool known = machine_id < model->machines.len;
  if (!want_name) {
    if (known)
      set_int(v, machine_id);
    else
      set_null(v);
    return;
  }
  /* `machine` is a String: "" for no machine, or a machine without name. */
  tm_str_id name_id = known ? model->machines.data[machine_id].name : 0;
  const char *name = known ? string_pool_borrow(model->strings, name_id)
                           : NULL;
  v->null = false;
  v->s = name ? name : "";
  v->len = name ? string_pool_length(model->strings, name_id) : 0;
}

static void field_value(ch_encoder *e, const ch_column *col, const char *row,
                        uint32_t id, ch_value *v) {
  const char *field = row + col->offset;
  uint32_t u32;
  int64_t i64;
  switch (col->kind) {
  case CH_ROW_ID:
    set_int(v, id);
    break;
  case CH_INT64:
    memcpy(&i64, field, 8);
    set_int(v, i64);
    break;
  case CH_INT64_OR_NULL:
    memcpy(&i64, field, 8);
    if (i64 == TM_NULL_INT64)
      set_null(v);
    else
      set_int(v, i64);
    break;
  case CH_UINT32:
    memcpy(&u32, field, 4);
    set_int(v, u32);
    break;
  case CH_REF:
    memcpy(&u32, field, 4);
    if (u32 == TM_NULL_ID)
      set_null(v);
    else
      set_int(v, u32);
    break;
  case CH_ARG_SET:
    memcpy(&u32, field, 4);
    if (u32 == 0)
      set_null(v);
    else
      set_int(v, u32);
    break;
  case CH_STRING: {
    tm_str_id sid;
    memcpy(&sid, field, sizeof sid);
    if (sid == 0) {
      set_null(v);
      break;
    }
    v->null = false;
    v->s = string_pool_borrow(e->model->strings, sid);
    v->len = string_pool_length(e->model->strings, sid);
    break;
  }
  case CH_DOUBLE:
    v->null = false;
    memcpy(&v->d, field, 8);
    break;
  case CH_BOOL:
    set_int(v, *(const bool *)(const void *)field ? 1 : 0);
    break;
  case CH_INT32: {
    int32_t i32;
    memcpy(&i32, field, 4);
    set_int(v, i32);
    break;
  }
  case CH_INT8_OR_NULL: {
    int8_t small = *(const int8_t *)(const void *)field;
    if (small < 0)
      set_null(v);
    else
      set_int(v, small);
    break;
  }
  case CH_COMPUTED:
    col->compute(e, row, id, v);
    break;
  case CH_ALIAS:
    set_null(v);
    break;
  }
}

static void column_value(ch_encoder *e, const ch_wire_column *w, size_t index,
                         ch_value *v) {
  const char *row = e->rows + index * e->table->row_size;
  uint32_t id = (uint32_t)index;
  switch (w->leading) {
  case CH_LEAD_RUN_ID:
    v->null = false;
    v->s = e->run->run_id;
    v->len = e->run_id_len;
    break;
  case CH_LEAD_LOAD_ID:
    v->null = false;
    v->s = e->run->load_id;
    v->len = e->load_id_len;
    break;
  case CH_LEAD_MACHINE:
  case CH_LEAD_MACHINE_ID:
    machine_value(e, row, id, w->leading == CH_LEAD_MACHINE, v);
    break;
  case CH_LEAD_NONE:
    field_value(e, w->column, row, id, v);
    break;
  }
}

/* A NULL row's value is the type's default (0, ""): the null map says it
 * is NULL. */
static void put_value(ch_bytes *out, ch_wire_type wire, const ch_value *v) {
  if (wire == CH_WIRE_STRING) {
    if (v->null)
      put_string(out, "", 0);
    else
      put_string(out, v->s, v->len);
    return;
  }
  ch_bytes_reserve(out, 8);
  int64_t i = v->null ? 0 : v->i;
  switch (wire) {
  case CH_WIRE_UINT8:
    put_u8(out, (uint8_t)i);
    break;
  case CH_WIRE_UINT32: {
    uint32_t u = (uint32_t)i;
    put_fixed(out, &u, 4);
    break;
  }
  case CH_WIRE_INT64:
    put_fixed(out, &i, 8);
    break;
  case CH_WIRE_FLOAT64: {
    double d = v->null ? 0.0 : v->d;
    put_fixed(out, &d, 8);
    break;
  }
  case CH_WIRE_STRING:
    break;
  }
}

/* ---- LowCardinality ---- */

/* The serialization of LowCardinality in Native, as the 18.16 server
 * writes and reads it with no shared dictionary: once per block and
 * column, a UInt64 version (1: "shared dictionaries with additional
 * keys"), then a UInt64 saying the index width (0..2: UInt8, UInt16,
 * UInt32) with the bits "has additional keys" (1 << 9) and "needs a
 * dictionary update" (1 << 10), the UInt64 number of keys and the keys
 * (as String, no null map), the UInt64 number of rows and one index per
 * row. Index 0 is NULL for LowCardinality(Nullable(String)), then comes
 * the default value "" (index 0 without Nullable): the server gives
 * these places that meaning whatever the keys there hold. */
#define LC_VERSION 1
#define LC_HAS_ADDITIONAL_KEYS (1u << 9)
#define LC_NEEDS_UPDATE (1u << 10)

static inline size_t pointer_hash(const char *key) {
  uint64_t h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 32);
}

/* The index of a value in the dictionary being built or written. */
static uint32_t dictionary_index(const ch_dictionary *d, const ch_value *v) {
  if (v->null)
    return 0; /* only in Nullable columns: set_null() gives no other */
  if (v->len == 0)
    return d->reserved - 1; /* the default value */
  for (size_t slot = pointer_hash(v->s) & d->mask;;
       slot = (slot + 1) & d->mask)
    if (d->slot_key[slot] == v->s)
      return d->slot_index[slot];
    else if (!d->slot_key[slot])
      g_error("clickhouse_tables: a value not in its block's dictionary");
}

static void dictionary_reset(ch_dictionary *d, bool nullable, size_t rows) {
  size_t slots = 64;
  while (slots < 2 * MIN(rows, (size_t)1 << 20))
    slots *= 2;
  if (slots - 1 != d->mask) {
    g_free(d->slot_key);
    g_free(d->slot_index);
    d->slot_key = g_new(const char *, slots);
    d->slot_index = g_new(uint32_t, slots);
    d->mask = slots - 1;
  }
  memset(d->slot_key, 0, slots * sizeof *d->slot_key);
  d->n_keys = 0;
  d->reserved = nullable ? 2 : 1;
}

static void dictionary_grow(ch_dictionary *d) {
  size_t slots = (d->mask + 1) * 2;
  const char **keys = g_new0(const char *, slots);
  uint32_t *indexes = g_new(uint32_t, slots);
  for (size_t i = 0; i <= d->mask; i++) {
    if (!d->slot_key[i])
      continue;
    size_t slot = pointer_hash(d->slot_key[i]) & (slots - 1);
    while (keys[slot])
      slot = (slot + 1) & (slots - 1);
    keys[slot] = d->slot_key[i];
    indexes[slot] = d->slot_index[i];
  }
  g_free(d->slot_key);
  g_free(d->slot_index);
  d->slot_key = keys;
  d->slot_index = indexes;
  d->mask = slots - 1;
}

static void dictionary_add(ch_dictionary *d, const ch_value *v) {
  if (v->null || v->len == 0)
    return;
  size_t slot = pointer_hash(v->s) & d->mask;
  for (; d->slot_key[slot]; slot = (slot + 1) & d->mask)
    if (d->slot_key[slot] == v->s)
      return;
  if (d->n_keys == d->keys_cap) {
    d->keys_cap = MAX(d->keys_cap * 2, (size_t)256);
    d->keys = g_renew(const char *, d->keys, d->keys_cap);
    d->key_lens = g_renew(size_t, d->key_lens, d->keys_cap);
  }
  d->keys[d->n_keys] = v->s;
  d->key_lens[d->n_keys] = v->len;
  d->slot_key[slot] = v->s;
  d->slot_index[slot] = d->reserved + (uint32_t)d->n_keys;
  d->n_keys++;
  if (2 * d->n_keys > d->mask)
    dictionary_grow(d);
}

static void put_u64(ch_bytes *out, uint64_t n) {
  ch_bytes_reserve(out, 8);
  put_fixed(out, &n, 8);
}

/* Builds the dictionary of the block's rows in column `w` and writes
 * everything before the indexes. */
static void put_dictionary(ch_encoder *e, const ch_wire_column *w,
                           ch_bytes *out) {
  ch_dictionary *d = &e->dictionary;
  ch_value v = {0};
  dictionary_reset(d, w->nullable, e->block_end - e->block_start);
  for (size_t row = e->block_start; row < e->block_end; row++) {
    column_value(e, w, row, &v);
    dictionary_add(d, &v);
  }
  uint64_t keys = d->reserved + d->n_keys;
  uint64_t width_code = keys <= 0x100 ? 0 : keys <= 0x10000 ? 1 : 2;
  d->index_width = (uint8_t)(1u << width_code);
  put_u64(out, LC_VERSION);
  put_u64(out, width_code | LC_HAS_ADDITIONAL_KEYS | LC_NEEDS_UPDATE);
  put_u64(out, keys);
  for (uint32_t i = 0; i < d->reserved; i++)
    put_string(out, "", 0);
  for (size_t i = 0; i < d->n_keys; i++)
    put_string(out, d->keys[i], d->key_lens[i]);
  put_u64(out, e->block_end - e->block_start);
}

bool ch_encoder_fill(ch_encoder *e, ch_bytes *out, size_t target) {
  size_t start_len = out->len;
  ch_value v = {0};
  while (out->len < target) {
    if (e->block_start == e->block_end) {
      if (e->block_end == e->n_rows)
        break; /* every row written */
      e->block_end = e->block_start + MIN(e->block_rows,
                                          e->n_rows - e->block_start);
      ch_bytes_reserve(out, 20);
      put_varuint(out, e->n_wire);
      put_varuint(out, e->block_end - e->block_start);
      e->column = 0;
      e->phase = CH_PHASE_HEAD;
      continue;
    }
    if (e->column == e->n_wire) {
      e->rows_done += e->block_end - e->block_start;
      e->block_start = e->block_end;
      continue;
    }
    const ch_wire_column *w = &e->wire[e->column];
    switch (e->phase) {
    case CH_PHASE_HEAD:
      put_string(out, w->name, strlen(w->name));
      put_string(out, w->type, strlen(w->type));
      e->phase = w->low_cardinality ? CH_PHASE_DICTIONARY
                 : w->nullable      ? CH_PHASE_NULLS
                                    : CH_PHASE_VALUES;
      e->row = e->block_start;
      break;
    case CH_PHASE_DICTIONARY:
      put_dictionary(e, w, out);
      e->phase = CH_PHASE_INDEXES;
      break;
    case CH_PHASE_INDEXES:
      for (; e->row < e->block_end && out->len < target; e->row++) {
        column_value(e, w, e->row, &v);
        uint32_t index = dictionary_index(&e->dictionary, &v);
        ch_bytes_reserve(out, 4);
        put_fixed(out, &index, e->dictionary.index_width);
      }
      if (e->row == e->block_end) {
        e->column++;
        e->phase = CH_PHASE_HEAD;
      }
      break;
    case CH_PHASE_NULLS:
      for (; e->row < e->block_end && out->len < target; e->row++) {
        column_value(e, w, e->row, &v);
        ch_bytes_reserve(out, 1);
        put_u8(out, v.null ? 1 : 0);
      }
      if (e->row == e->block_end) {
        e->phase = CH_PHASE_VALUES;
        e->row = e->block_start;
      }
      break;
    case CH_PHASE_VALUES:
      for (; e->row < e->block_end && out->len < target; e->row++) {
        column_value(e, w, e->row, &v);
        put_value(out, w->wire, &v);
      }
      if (e->row == e->block_end) {
        e->column++;
        e->phase = CH_PHASE_HEAD;
      }
      break;
    }
  }
  return out->len > start_len;
}
