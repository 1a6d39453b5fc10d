/*
 * trace_processor's span join operator tables:
 *
 *   CREATE VIRTUAL TABLE j USING SPAN_JOIN(t1 [PARTITIONED col], t2 [PARTITIONED col]);
 *   ... USING SPAN_LEFT_JOIN(...)   every span of t1, t2's columns NULL
 *                                   where t2 has none
 *   ... USING SPAN_OUTER_JOIN(...)  every span of either table
 *
 * t1 and t2 are tables or views with `ts` and `dur` columns whose spans
 * do not overlap within one partition (the documented restriction, not
 * checked). j's columns: ts, dur, the partition column (if any), then the
 * other columns of t1, then of t2; a name in both is an error. Each row of
 * j is a maximal time range over which the same pair of spans (one of
 * each, or one and none) is active, in the same partition; a table
 * without PARTITIONED applies to every partition of the other. Partition
 * values are integers (rows with a NULL partition are skipped); spans with
 * dur < 0 (still open) and dur = 0 have no extent and are skipped.
 *
 * The inputs are read when j is queried (an equality on the partition
 * column is passed down to them); rows come in (partition, ts) order.
 */
#ifndef TM_SPAN_JOIN_H
#define TM_SPAN_JOIN_H

typedef struct sqlite3 sqlite3;

/* Registers the three modules on `db`. Returns an SQLite result code. */
int span_join_register(sqlite3 *db);

#endif /* TM_SPAN_JOIN_H */
