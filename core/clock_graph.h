/*
 * The clock graph: one graph for every file and machine of an import.
 *
 * Nodes are clocks, identified by (clock_id, sequence_id, trace_file_id,
 * machine_id) as in reference/clock-model.md §2. Edge sets come from
 * snapshots (readings of several clocks at one instant). Conversion follows
 * the shortest path (at most 4 edges, breadth first); on each edge the
 * snapshot whose source reading is the last one <= the value is used (the
 * first one for values before it), with no interpolation (§4).
 *
 * Invariants: a node id is its index and never changes; every accepted
 * snapshot is kept (for the clock_snapshot table); a clock marked
 * non-monotonic never again serves as a conversion source.
 */
#ifndef TM_CLOCK_GRAPH_H
#define TM_CLOCK_GRAPH_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef uint32_t tm_clock_node;
#define TM_NO_CLOCK_NODE UINT32_MAX

typedef struct tm_clock_key {
  uint32_t clock_id;      /* builtin 1..63, sequence 64..127, global >=128 */
  uint32_t sequence_id;   /* 0 unless a sequence-scoped clock */
  uint32_t trace_file_id; /* 0 for machine-canonical nodes */
  uint32_t machine_id;    /* machine table row */
} tm_clock_key;

typedef struct tm_clock_reading {
  tm_clock_node node;
  int64_t value;          /* raw reading */
  int64_t unit_ns;        /* multiplier to ns, usually 1 */
  bool incremental;
} tm_clock_reading;

typedef enum tm_clock_failure {
  TM_CLOCK_OK = 0,
  TM_CLOCK_UNKNOWN_SOURCE = 1, /* never in any snapshot */
  TM_CLOCK_UNKNOWN_TARGET = 2,
  TM_CLOCK_NO_PATH = 3,
} tm_clock_failure;

typedef enum tm_clock_bridge {
  TM_BRIDGE_DIRECT = 0,      /* a real path already existed */
  TM_BRIDGE_REALTIME = 1,    /* REALTIME rendezvous edge added */
  TM_BRIDGE_SAME_DOMAIN = 2, /* zero-offset edge: private clock or same id */
  TM_BRIDGE_UNRELATABLE = 3, /* nothing added: events will be dropped */
} tm_clock_bridge;

typedef struct tm_clock_graph tm_clock_graph;

tm_clock_graph *clock_graph_new(void);
void clock_graph_free(tm_clock_graph *graph);

/* The node for `key`, created on first use. */
tm_clock_node clock_graph_node(tm_clock_graph *graph, const tm_clock_key *key);
const tm_clock_key *clock_graph_node_key(const tm_clock_graph *graph,
                                         tm_clock_node node);
size_t clock_graph_node_count(const tm_clock_graph *graph);

/* Adds one snapshot; returns its snapshot id (0-based), or -1 with `error`
 * set (messages of clock-model.md §10.3) if it is rejected. */
int64_t clock_graph_add_snapshot(tm_clock_graph *graph,
                                 const tm_clock_reading *readings,
                                 size_t count, GError **error);

/* Trace time. clock_graph_set_trace_time() replaces the current choice
 * (the session decides who wins the claims). */
void clock_graph_set_trace_time(tm_clock_graph *graph, tm_clock_node node);
tm_clock_node clock_graph_trace_time(const tm_clock_graph *graph);

/* Connects `node` to trace time with the fallbacks of clock-model.md §6.2
 * (real path, REALTIME rendezvous, same domain / private clock at zero
 * offset, else unrelatable). */
tm_clock_bridge clock_graph_bridge(tm_clock_graph *graph, tm_clock_node node);

/* Converts `value` (ns on `node`) to trace time. */
tm_clock_failure clock_graph_to_trace_time(tm_clock_graph *graph,
                                           tm_clock_node node, int64_t value,
                                           int64_t *out);
/* Converts between any two nodes. */
tm_clock_failure clock_graph_convert(tm_clock_graph *graph, tm_clock_node from,
                                     int64_t value, tm_clock_node to,
                                     int64_t *out);

/* Visits every accepted snapshot reading, in insertion order, for the
 * clock_snapshot table and for `tracemerge info`. */
typedef void (*tm_clock_snapshot_visit)(void *ctx, int64_t snapshot_id,
                                        tm_clock_node node, int64_t value_ns);
void clock_graph_foreach_reading(const tm_clock_graph *graph,
                                 tm_clock_snapshot_visit visit, void *ctx);

#endif /* TM_CLOCK_GRAPH_H */
