/*
 * The ClickHouse tables a merged run is loaded into (docs/clickhouse.md):
 * one descriptor per table says its columns (name, ClickHouse type, where
 * the value comes from in the model), its sort key, and which machine a
 * row belongs to. The CREATE TABLE text and the rows' bytes (ClickHouse's
 * Native format) are both generated from the descriptor, so the two can
 * never disagree on column order or type.
 *
 * Every table starts with `run_id String`, `load_id String` (the load
 * that published the row), `machine String` (the row's machine's name, ""
 * if it has none or the row has no machine) and `machine_id
 * Nullable(UInt32)` (the machine's row in the run, as local queries see
 * it), is a MergeTree partitioned by load_id (a load publishes one
 * partition per table, docs/clickhouse.md), and mirrors the columns of the
 * local table or view of the same name; columns the model never fills are
 * left out, and trace_processor's duplicate names (slice.cat, thread.utid,
 * sched.cpu...) are ALIAS columns, which cost nothing.
 *
 * Encoding reads the model in place, a column of a block at a time, into
 * the caller's buffer: nothing of a run is held beyond the bytes asked
 * for, however many rows a block has.
 */
#ifndef TM_CLICKHOUSE_TABLES_H
#define TM_CLICKHOUSE_TABLES_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Bumped whenever a table or column changes; the `schema_version` table
 * holds the version a database was created with. */
#define CLICKHOUSE_SCHEMA_VERSION 3

typedef struct ch_table ch_table;

/* One run as the encoder reads it: borrowed for the encoder's life. */
typedef struct ch_run_source {
  const char *run_id;
  const char *load_id; /* the load's partition, the same for all its runs */
  const tm_model *model;
  /* Machine row of each trace_file row (TM_NULL_ID: none), or NULL when
   * not known; `n_file_machines` entries. */
  const uint32_t *file_machines;
  size_t n_file_machines;
} ch_run_source;

/* The tables, in the order a load publishes them. */
size_t ch_table_count(void);
const ch_table *ch_table_at(size_t index);
const char *ch_table_name(const ch_table *table);

/* "CREATE TABLE IF NOT EXISTS <qualified_name> (...) ENGINE = MergeTree()
 * PARTITION BY load_id ORDER BY (...)". `qualified_name` is quoted by the
 * caller. Free with g_free. */
char *ch_table_create_sql(const ch_table *table, const char *qualified_name);

/* Rows of `table` in the model. */
size_t ch_table_row_count(const ch_table *table, const tm_model *model);

/* A growable byte buffer: data[0..len) written, cap allocated. */
typedef struct ch_bytes {
  char *data;
  size_t len;
  size_t cap;
} ch_bytes;

void ch_bytes_reserve(ch_bytes *bytes, size_t more);
void ch_bytes_clear(ch_bytes *bytes); /* frees the block */

/* Streams one table of one run as Native blocks of `block_rows` rows
 * (the last one fewer; a table without rows is no block at all). */
typedef struct ch_encoder ch_encoder;
ch_encoder *ch_encoder_new(const ch_table *table, const ch_run_source *run,
                           size_t block_rows);
void ch_encoder_free(ch_encoder *encoder);
/* Encodes only rows [first, end) of the table (blocks count from
 * `first`); before the first ch_encoder_fill(). */
void ch_encoder_limit(ch_encoder *encoder, size_t first, size_t end);
/* Appends to `out` until it holds at least `target` bytes or the table is
 * done, stopping anywhere (inside a block, a column); false if there was
 * nothing left to append. */
bool ch_encoder_fill(ch_encoder *encoder, ch_bytes *out, size_t target);
/* Rows of the blocks appended whole so far. */
uint64_t ch_encoder_rows_done(const ch_encoder *encoder);

#endif /* TM_CLICKHOUSE_TABLES_H */
