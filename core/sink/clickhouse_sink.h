/*
 * The ClickHouse sink: the tm_clickhouse_* API of <tracemerge/tracemerge.h>
 * (connection, schema, loads, pass-through queries). What is internal to
 * the library and its tests is declared here.
 *
 * A load, in statements (docs/clickhouse.md, "Loads"), all of its runs
 * together in one partition (the load's id, `load_id`) of each table:
 *   1. the schema check (and, refusing existing runs, a look for them;
 *      replacing, a look for the earlier loads that hold them);
 *   2. CREATE TABLE _tm_stage_<token>_<table> AS <table>, per table;
 *   3. INSERT INTO _tm_stage_... FORMAT Native, per table (two for a
 *      table of more than two blocks), streamed
 *      from the model; replacing, also INSERT INTO _tm_stage_... SELECT
 *      the other runs of those earlier loads;
 *   4. ALTER TABLE <table> REPLACE PARTITION '<earlier load>' FROM ...,
 *      REPLACE PARTITION '<token>' FROM _tm_stage_..., per table
 *      (`machine` last): the only step that changes what queries see, one
 *      table at a time;
 *   5. DROP TABLE _tm_stage_..., also after a failure.
 */
#ifndef TM_CLICKHOUSE_SINK_H
#define TM_CLICKHOUSE_SINK_H

#include <stddef.h>
#include <stdint.h>

#include <tracemerge/tracemerge.h>

/* Called while a load streams a table's rows, after each batch (`rows`
 * in the blocks encoded whole so far, for the whole statement) and once more with `rows` = UINT64_MAX
 * when the load is about to publish (table NULL). For tests: what to do
 * when the server goes away mid-load. */
typedef void (*clickhouse_load_hook)(void *data, const char *table,
                                     uint64_t rows);
void clickhouse_set_load_hook(tm_clickhouse *ch, clickhouse_load_hook hook,
                              void *data);

/* Rows per Native block of the next loads (0: chosen per table, as
 * clickhouse_sink.c says). For tests: many blocks from small runs. */
void clickhouse_set_block_rows(tm_clickhouse *ch, size_t rows);

#endif /* TM_CLICKHOUSE_SINK_H */
