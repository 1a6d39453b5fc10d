/*
 * Stats: named counters instead of silent drops.
 *
 * Every stat name the host bumps has a catalog entry (severity, source,
 * scope, description) with trace_processor's name where one exists
 * (docs/sql-surface.md, stats); readers declare theirs in their
 * descriptors, and the session adds them with stats_declare(). Rows live
 * in model->stats, unique per (name, idx, machine_id, trace_id). Global
 * single-value stats of the catalog are pre-created with value 0 by
 * stats_new(); machine-and-trace ones by stats_open_context() when a
 * (file, machine) starts, so `WHERE value > 0` is the idiom, as in
 * trace_processor.
 */
#ifndef TM_STATS_H
#define TM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

#include "model/model.h"

typedef enum tm_stat_scope {
  TM_STAT_GLOBAL = 0,
  TM_STAT_MACHINE_AND_TRACE = 1,
  /* Either scope, with rows made when first counted instead of zero rows
   * made up front: stats that only a configured feature can bump (a merge
   * config's buffers), so other imports show no row of them. */
  TM_STAT_GLOBAL_ON_DEMAND = 2,
  TM_STAT_MACHINE_AND_TRACE_ON_DEMAND = 3,
} tm_stat_scope;

typedef struct tm_stat_info {
  const char *name;
  const char *severity; /* "info", "notice", "data_loss", "error" */
  const char *source;   /* "trace", "analysis" */
  tm_stat_scope scope;
  const char *description;
} tm_stat_info;

typedef struct tm_stats tm_stats;

/* `model` is borrowed and must outlive the stats. The catalog starts with
 * the host's own stats. */
tm_stats *stats_new(tm_model *model);
void stats_free(tm_stats *stats);

/* Adds a stat a reader declares to the catalog, unless its name is known
 * already. `info` is borrowed and must outlive the stats. Declare before
 * the first stats_open_context(). */
void stats_declare(tm_stats *stats, const tm_stat_info *info);

/* The catalog entry of `name`, or NULL for a name the catalog lacks. */
const tm_stat_info *stats_lookup(const tm_stats *stats, const char *name);

/* The names of tm_stat_severity / tm_stat_source values (plugin.h), or
 * NULL for a value out of range. */
const char *stats_severity_name(uint32_t severity);
const char *stats_source_name(uint32_t source);

/* Pre-creates the zero rows of machine-and-trace stats for a context: one
 * block of rows, in catalog order, for the stats declared so far (a stat
 * declared later gets its own rows in later contexts). Opening a context
 * again adds nothing. */
void stats_open_context(tm_stats *stats, uint32_t machine_id, uint32_t trace_id);

/* Adds `delta` to the row (name, idx, machine_id, trace_id). idx is
 * TM_NULL_INT64 for single-value stats. A global stat ignores machine_id and
 * trace_id. Unknown names get severity "error", source "trace". */
void stats_add(tm_stats *stats, const char *name, int64_t idx,
               uint32_t machine_id, uint32_t trace_id, int64_t delta);

/* Sets the row (name, idx, machine_id, trace_id) to `value`: counters a
 * trace reports about itself, which are totals, not occurrences. */
void stats_set(tm_stats *stats, const char *name, int64_t idx,
               uint32_t machine_id, uint32_t trace_id, int64_t value);

/* Import-log rows (docs/sql-surface.md §5) kept per stats row, i.e. per (stat,
 * file, machine): the first occurrences show what went wrong, and a
 * million dropped events must not become a million rows. The stat still
 * counts every occurrence. */
#define TM_IMPORT_LOG_ROWS_PER_STAT 16

/* Counts one occurrence of stat `name` for (machine_id, trace_id), as
 * stats_add(..., 1) does, and writes its import-log row while that stats
 * row has fewer than TM_IMPORT_LOG_ROWS_PER_STAT: `ts` is trace time and
 * `byte_offset` the offset in the file (each TM_NULL_INT64, or for the
 * offset any negative value, if unknown); `args` are borrowed, their keys
 * and strings interned only when the row is written. This is the one way
 * details of a stat are recorded, so a log row never lacks its count.
 * Returns true if the row was written. */
bool stats_log(tm_stats *stats, const char *name, uint32_t machine_id,
               uint32_t trace_id, int64_t ts, int64_t byte_offset,
               const tm_import_log_arg *args, size_t n_args);

/* Current value of a row, 0 if absent (for tests and the CLI's info). */
int64_t stats_get(const tm_stats *stats, const char *name, int64_t idx,
                  uint32_t machine_id, uint32_t trace_id);

/* How many rows the per-key index holds: the global rows, indexed and
 * on-demand ones, and stats counted before their context opened; never
 * the zero rows of a context, which are a block of model->stats (for
 * tests: a context must not cost an index entry per stat). */
size_t stats_index_rows(const tm_stats *stats);

#endif /* TM_STATS_H */
