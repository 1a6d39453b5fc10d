/*
 * The clock graph: one graph for every file and machine of an import.
 *
 * Nodes are clocks, identified by (clock_id, sequence_id, trace_file_id,
 * machine_id) as in docs/clock-model.md §2. Edge sets come from
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
  /* A path exists, but this value's result (or a value on the way) does
   * not fit in 64 bits: the value is dropped, never wrapped. */
  TM_CLOCK_OVERFLOW = 4,
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
 * set (messages of docs/clock-model.md §10.3) if it is rejected. */
int64_t clock_graph_add_snapshot(tm_clock_graph *graph,
                                 const tm_clock_reading *readings,
                                 size_t count, GError **error);

/* Trace time. clock_graph_set_trace_time() replaces the current choice
 * (the session decides who wins the claims). */
void clock_graph_set_trace_time(tm_clock_graph *graph, tm_clock_node node);
tm_clock_node clock_graph_trace_time(const tm_clock_graph *graph);

/* Connects `node` to trace time with the fallbacks of docs/clock-model.md §6.2
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

/* --- Additions beyond the first contract (all additive). ------------- */

#include <stdio.h>

/* Snapshot rejections (docs/clock-model.md §10.3) use this domain. */
#define TM_CLOCK_GRAPH_ERROR (clock_graph_error_quark())
GQuark clock_graph_error_quark(void);
typedef enum tm_clock_graph_error {
  TM_CLOCK_GRAPH_ERROR_SNAPSHOT_REJECTED = 1,
} tm_clock_graph_error;

/* The text form of docs/clock-model.md §2: "6" when sequence, file and machine
 * are all 0, else "6(seq=0,tf=2,m=1)". The caller g_free()s it. */
char *clock_key_to_string(const tm_clock_key *key);

/* The node for `key` if it exists, else TM_NO_CLOCK_NODE (creates nothing). */
tm_clock_node clock_graph_find_node(const tm_clock_graph *graph,
                                    const tm_clock_key *key);

/* Turns a raw reading on `node` into ns (§4 step 5): raw x unit, or for an
 * incremental clock the running value advanced by that delta (which it
 * updates). Call it in emission order, when the event is read. Overflow
 * wraps (garbage in, defined garbage out). */
int64_t clock_graph_raw_to_ns(tm_clock_graph *graph, tm_clock_node node,
                              int64_t raw);

/* The stat name for a conversion failure ("clock_sync_failure_no_path"...),
 * NULL for TM_CLOCK_OK. */
const char *clock_failure_stat_name(tm_clock_failure failure);

/* True if `from` == `to` or a path of at most 4 edges leads from one to the
 * other. */
bool clock_graph_has_path(tm_clock_graph *graph, tm_clock_node from,
                          tm_clock_node to);

/* Adds the two-clock snapshot {a: 0, b: 0} (each in its registered unit):
 * the two clocks read the same at every instant. Returns the snapshot id,
 * or -1 with `error` set if the graph rejects it. */
int64_t clock_graph_add_zero_offset_edge(tm_clock_graph *graph, tm_clock_node a,
                                         tm_clock_node b, GError **error);

/* The translation that converts `value` and the range of source values
 * sharing it: for every v in [first, last], convert(v) == v + offset_ns
 * (clock_span_apply; no value of the range overflows). A path whose edges
 * each hold one snapshot gives a span covering every value that does not
 * overflow; the sorter uses this to convert whole runs without per-event
 * lookups. A value whose conversion would overflow fails with
 * TM_CLOCK_OVERFLOW (`out` then holds a one-value span for it, unused). */
typedef struct tm_clock_span {
  int64_t offset_ns;
  int64_t first;
  int64_t last;
} tm_clock_span;

tm_clock_failure clock_graph_span(tm_clock_graph *graph, tm_clock_node from,
                                  int64_t value, tm_clock_node to,
                                  tm_clock_span *out);

static inline int64_t clock_span_apply(const tm_clock_span *span,
                                       int64_t value) {
  return (int64_t)((uint64_t)value + (uint64_t)span->offset_ns);
}

/* False once a reading of `node` went backwards (it is then no conversion
 * source any more, §3.1 step 3). */
bool clock_graph_node_is_monotonic(const tm_clock_graph *graph,
                                   tm_clock_node node);

/* Number of accepted snapshots so far. */
size_t clock_graph_snapshot_count(const tm_clock_graph *graph);

/* Makes `into` the node of every reading of `from`: each snapshot that read
 * `from` now reads `into` (its offsets unchanged), and the snapshot log
 * and trace time follow. `from` is left with no reading. For a file that
 * turns out to be its machine's primary (docs/clock-model.md §2), whose
 * readings were kept on its own nodes until every input was read.
 * Refused (false, nothing changed) if the two clocks were registered with
 * different units, if a snapshot read both, or if a snapshot over the
 * same clocks as one of `from`'s, with `into` in its place, exists. */
bool clock_graph_merge_node(tm_clock_graph *graph, tm_clock_node from,
                            tm_clock_node into);

/* A one-line explanation of how `from` reaches `to`, for `tracemerge info`,
 * e.g. "6(seq=0,tf=0,m=1) -[1 snapshot, +500 ns]-> 6", or why it cannot
 * ("no path", "unknown source clock", ...). The caller g_free()s it. */
char *clock_graph_describe_path(tm_clock_graph *graph, tm_clock_node from,
                                tm_clock_node to);

/* Writes the graph in Graphviz DOT. `label` (may be NULL) appends a node's
 * display name to `out`; the default is clock_key_to_string(). The
 * trace-time node is drawn doubled, non-monotonic nodes dashed. */
typedef void (*tm_clock_label_fn)(void *ctx, tm_clock_node node,
                                  const tm_clock_key *key, GString *out);
void clock_graph_print_dot(const tm_clock_graph *graph, FILE *out,
                           tm_clock_label_fn label, void *ctx);

#endif /* TM_CLOCK_GRAPH_H */
