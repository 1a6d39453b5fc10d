/*
 * The clock graph of docs/clock-model.md §2-§6.
 *
 * Storage. Nodes are heap records behind an array (node id = index, and a
 * node's key never moves), found through an open-addressing table of ids.
 * Every distinct set of clocks read together by a snapshot is interned as a
 * "clock set": it is the snapshot hash of §3.1 made exact (the sorted member
 * list itself, so two sets never collide). Each member of a set has one
 * series of values for that set. Edges are implicit: once a snapshot over a
 * set is accepted, every monotonic member has an edge to every other member
 * labelled with the set, which is what §3.1 step 4 adds, without the
 * quadratic edge list a hostile snapshot of many clocks would cost.
 *
 * Invariants:
 * - Every accepted snapshot over set S appends exactly one value to the
 *   series of each member of S, so entry i of every member's series comes
 *   from the same snapshot: "B's value in the same snapshot" as A's entry i
 *   is B's entry i. Readings of a rejected snapshot never reach a series;
 *   they still update the clock's registration, running value and
 *   monotonicity tracking (upstream keeps their data point), but having
 *   added no edge they define no offset.
 * - The series of a monotonic node is sorted ascending (a lower reading
 *   marks the node non-monotonic), so the per-edge lookup is a binary search.
 *   A non-monotonic node has no outgoing edge.
 * - The path and span caches describe the current graph: every snapshot,
 *   accepted or not, clears them.
 */
#include "clock/clock_graph.h"

#include <stdlib.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "base/vec.h"

#define MAX_PATH_EDGES 4
#define SPAN_CACHE_SIZE 8

typedef struct node_membership {
  uint32_t set; /* clock set id */
  uint32_t pos; /* the node's index in the set's members */
} node_membership;

typedef struct clock_node {
  tm_clock_key key;
  int64_t unit_ns;
  int64_t running_ns;    /* last snapshot value, advanced by incremental deltas */
  int64_t last_snapshot; /* the last snapshot that read it: duplicate check */
  bool registered;       /* unit and incremental flag recorded */
  bool incremental;
  bool non_monotonic;
  TM_VEC(node_membership) sets;
} clock_node;

typedef struct clock_series {
  TM_VEC(int64_t) values; /* ns, one per accepted snapshot over the set */
  int64_t last_ns;        /* the last reading, accepted or not */
  bool has_last;
} clock_series;

typedef struct clock_set {
  uint32_t hash;
  uint32_t count;
  bool linked;             /* an accepted snapshot gave it edges */
  tm_clock_node *members;  /* sorted ascending, unique */
  uint32_t *series;        /* series index of members[i] */
} clock_set;

typedef struct logged_reading {
  int64_t snapshot_id;
  int64_t value_ns;
  tm_clock_node node;
} logged_reading;

typedef struct clock_hop {
  tm_clock_node from, to;
  uint32_t set;
  uint32_t from_series, to_series;
} clock_hop;

typedef struct clock_path {
  uint64_t key; /* from << 32 | to */
  tm_clock_failure failure;
  uint32_t len;
  clock_hop hops[MAX_PATH_EDGES];
} clock_path;

typedef struct span_cache_entry {
  tm_clock_node from, to; /* from == TM_NO_CLOCK_NODE: empty */
  tm_clock_span span;
} span_cache_entry;

struct tm_clock_graph {
  TM_VEC(clock_node *) nodes;
  tm_clock_node *index; /* open addressing; TM_NO_CLOCK_NODE = free slot */
  size_t index_cap;     /* power of two, > 2 x node count */

  TM_VEC(clock_series) series;
  TM_VEC(clock_set *) sets;
  GHashTable *set_ids;   /* clock_set* (borrowed from sets) -> id + 1 */
  TM_VEC(tm_clock_node) scratch_members;
  TM_VEC(uint32_t) pending_series; /* per reading of the snapshot being added */

  TM_VEC(logged_reading) log;
  int64_t next_snapshot_id;
  size_t accepted_snapshots;
  tm_clock_node trace_time;

  GHashTable *paths; /* &clock_path.key -> clock_path* (owned) */
  span_cache_entry spans[SPAN_CACHE_SIZE];
  unsigned next_span;

  /* Breadth-first search scratch, sized to the node count. */
  size_t bfs_cap;
  uint32_t bfs_stamp;
  uint32_t *bfs_seen;
  uint8_t *bfs_depth;
  tm_clock_node *bfs_queue;
  clock_hop *bfs_via; /* the edge that discovered each node */
};

G_DEFINE_QUARK(tm-clock-graph-error-quark, clock_graph_error)

/* --- keys and the node index -------------------------------------------- */

static uint32_t key_hash(const tm_clock_key *key) {
  uint64_t a = ((uint64_t)key->clock_id << 32) | key->sequence_id;
  uint64_t b = ((uint64_t)key->trace_file_id << 32) | key->machine_id;
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 31;
  return (uint32_t)(h ^ (h >> 32));
}

static bool key_equal(const tm_clock_key *a, const tm_clock_key *b) {
  return a->clock_id == b->clock_id && a->sequence_id == b->sequence_id &&
         a->trace_file_id == b->trace_file_id && a->machine_id == b->machine_id;
}

char *clock_key_to_string(const tm_clock_key *key) {
  if (key->sequence_id == 0 && key->trace_file_id == 0 && key->machine_id == 0)
    return g_strdup_printf("%u", key->clock_id);
  return g_strdup_printf("%u(seq=%u,tf=%u,m=%u)", key->clock_id,
                         key->sequence_id, key->trace_file_id, key->machine_id);
}

static bool is_sequence_clock(uint32_t clock_id) {
  return clock_id >= 64 && clock_id < 128;
}

static void index_insert(tm_clock_graph *graph, tm_clock_node node) {
  size_t mask = graph->index_cap - 1;
  size_t slot = key_hash(&graph->nodes.data[node]->key) & mask;
  while (graph->index[slot] != TM_NO_CLOCK_NODE)
    slot = (slot + 1) & mask;
  graph->index[slot] = node;
}

static void index_grow(tm_clock_graph *graph) {
  g_free(graph->index);
  graph->index_cap = graph->index_cap ? graph->index_cap * 2 : 64;
  graph->index = g_new(tm_clock_node, graph->index_cap);
  memset(graph->index, 0xff, graph->index_cap * sizeof *graph->index);
  for (size_t i = 0; i < graph->nodes.len; i++)
    index_insert(graph, (tm_clock_node)i);
}

tm_clock_node clock_graph_find_node(const tm_clock_graph *graph,
                                    const tm_clock_key *key) {
  size_t mask = graph->index_cap - 1;
  for (size_t slot = key_hash(key) & mask;; slot = (slot + 1) & mask) {
    tm_clock_node node = graph->index[slot];
    if (node == TM_NO_CLOCK_NODE || key_equal(&graph->nodes.data[node]->key, key))
      return node;
  }
}

tm_clock_node clock_graph_node(tm_clock_graph *graph, const tm_clock_key *key) {
  tm_clock_node found = clock_graph_find_node(graph, key);
  if (found != TM_NO_CLOCK_NODE)
    return found;
  if (graph->nodes.len >= TM_NO_CLOCK_NODE - 1)
    g_error("tracemerge: more than %u clocks", TM_NO_CLOCK_NODE - 1);
  clock_node *node = g_new0(clock_node, 1);
  node->key = *key;
  node->unit_ns = 1;
  node->last_snapshot = -1;
  tm_clock_node id = (tm_clock_node)graph->nodes.len;
  tm_vec_push(&graph->nodes, node);
  if ((graph->nodes.len + 1) * 2 > graph->index_cap)
    index_grow(graph);
  else
    index_insert(graph, id);
  return id;
}

const tm_clock_key *clock_graph_node_key(const tm_clock_graph *graph,
                                         tm_clock_node node) {
  if (node >= graph->nodes.len)
    return NULL;
  return &graph->nodes.data[node]->key;
}

size_t clock_graph_node_count(const tm_clock_graph *graph) {
  return graph->nodes.len;
}

bool clock_graph_node_is_monotonic(const tm_clock_graph *graph,
                                   tm_clock_node node) {
  return node < graph->nodes.len && !graph->nodes.data[node]->non_monotonic;
}

size_t clock_graph_snapshot_count(const tm_clock_graph *graph) {
  return graph->accepted_snapshots;
}

/* --- lifetime ------------------------------------------------------------ */

static guint set_hash(gconstpointer p) {
  return ((const clock_set *)p)->hash;
}

static gboolean set_equal(gconstpointer pa, gconstpointer pb) {
  const clock_set *a = pa, *b = pb;
  return a->count == b->count &&
         memcmp(a->members, b->members, a->count * sizeof *a->members) == 0;
}

/* Path keys are (from << 32 | to); g_int64_hash folds them to from ^ to,
 * which collides for every pair with the same xor (thousands of files
 * bridging to a few nodes). A multiplicative mix spreads them. */
static guint path_key_hash(gconstpointer p) {
  uint64_t v = *(const uint64_t *)p * 0x9E3779B97F4A7C15ull;
  return (guint)(v >> 32);
}

tm_clock_graph *clock_graph_new(void) {
  tm_clock_graph *graph = g_new0(tm_clock_graph, 1);
  index_grow(graph);
  graph->set_ids = g_hash_table_new(set_hash, set_equal);
  graph->paths = g_hash_table_new_full(path_key_hash, g_int64_equal, NULL, g_free);
  for (size_t i = 0; i < SPAN_CACHE_SIZE; i++)
    graph->spans[i].from = TM_NO_CLOCK_NODE;
  /* §5: until someone claims it, trace time is file 0's private clock. */
  tm_clock_key initial = {TM_CLOCK_TRACE_FILE, 0, 0, 0};
  graph->trace_time = clock_graph_node(graph, &initial);
  return graph;
}

void clock_graph_free(tm_clock_graph *graph) {
  if (!graph)
    return;
  for (size_t i = 0; i < graph->nodes.len; i++) {
    tm_vec_free(&graph->nodes.data[i]->sets);
    g_free(graph->nodes.data[i]);
  }
  tm_vec_free(&graph->nodes);
  g_free(graph->index);
  for (size_t i = 0; i < graph->series.len; i++)
    tm_vec_free(&graph->series.data[i].values);
  tm_vec_free(&graph->series);
  for (size_t i = 0; i < graph->sets.len; i++)
    g_free(graph->sets.data[i]);
  tm_vec_free(&graph->sets);
  g_hash_table_destroy(graph->set_ids);
  tm_vec_free(&graph->scratch_members);
  tm_vec_free(&graph->pending_series);
  tm_vec_free(&graph->log);
  g_hash_table_destroy(graph->paths);
  g_free(graph->bfs_seen);
  g_free(graph->bfs_depth);
  g_free(graph->bfs_queue);
  g_free(graph->bfs_via);
  g_free(graph);
}

static void invalidate_caches(tm_clock_graph *graph) {
  g_hash_table_remove_all(graph->paths);
  for (size_t i = 0; i < SPAN_CACHE_SIZE; i++)
    graph->spans[i].from = TM_NO_CLOCK_NODE;
}

/* --- trace time ---------------------------------------------------------- */

void clock_graph_set_trace_time(tm_clock_graph *graph, tm_clock_node node) {
  graph->trace_time = node;
}

tm_clock_node clock_graph_trace_time(const tm_clock_graph *graph) {
  return graph->trace_time;
}

/* --- snapshots ----------------------------------------------------------- */

static int compare_nodes(const void *pa, const void *pb) {
  tm_clock_node a = *(const tm_clock_node *)pa, b = *(const tm_clock_node *)pb;
  return (a > b) - (a < b);
}

/* The id of the set of clocks read by `readings` (order and repeats
 * ignored), created with one empty series per member on first sight. */
static uint32_t intern_set(tm_clock_graph *graph,
                           const tm_clock_reading *readings, size_t count) {
  graph->scratch_members.len = 0;
  tm_vec_reserve(&graph->scratch_members, count);
  for (size_t i = 0; i < count; i++)
    graph->scratch_members.data[i] = readings[i].node;
  qsort(graph->scratch_members.data, count, sizeof(tm_clock_node), compare_nodes);
  size_t unique = 0;
  for (size_t i = 0; i < count; i++)
    if (unique == 0 || graph->scratch_members.data[unique - 1] != graph->scratch_members.data[i])
      graph->scratch_members.data[unique++] = graph->scratch_members.data[i];

  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < unique; i++)
    hash = (hash ^ graph->scratch_members.data[i]) * 16777619u;
  clock_set probe = {.hash = hash, .count = (uint32_t)unique,
                     .members = graph->scratch_members.data};
  gpointer found = g_hash_table_lookup(graph->set_ids, &probe);
  if (found)
    return GPOINTER_TO_UINT(found) - 1;

  uint32_t id = (uint32_t)graph->sets.len;
  clock_set *set = g_malloc0(sizeof(clock_set) + unique * (sizeof(tm_clock_node) + sizeof(uint32_t)));
  set->hash = hash;
  set->count = (uint32_t)unique;
  set->members = (tm_clock_node *)(set + 1);
  set->series = (uint32_t *)(set->members + unique);
  for (size_t i = 0; i < unique; i++) {
    tm_clock_node node = graph->scratch_members.data[i];
    set->members[i] = node;
    set->series[i] = (uint32_t)graph->series.len;
    *tm_vec_push_zero(&graph->series) = (clock_series){0};
    node_membership membership = {id, (uint32_t)i};
    tm_vec_push(&graph->nodes.data[node]->sets, membership);
  }
  tm_vec_push(&graph->sets, set);
  g_hash_table_insert(graph->set_ids, set, GUINT_TO_POINTER(id + 1));
  return id;
}

static uint32_t member_series(const clock_set *set, tm_clock_node node) {
  size_t lo = 0, hi = set->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (set->members[mid] < node)
      lo = mid + 1;
    else
      hi = mid;
  }
  g_assert(lo < set->count && set->members[lo] == node);
  return set->series[lo];
}

static int64_t wrap_mul(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a * (uint64_t)b);
}

static int64_t wrap_add(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a + (uint64_t)b);
}

static void reject(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
static void reject(GError **error, const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *message = g_strdup_vprintf(format, args);
  va_end(args);
  g_set_error_literal(error, TM_CLOCK_GRAPH_ERROR,
                      TM_CLOCK_GRAPH_ERROR_SNAPSHOT_REJECTED, message);
  g_free(message);
}

/* Checks and records reading `r` of snapshot `snapshot_id` over `set`
 * (§3.1 step 2-3, in upstream's order). */
static bool take_reading(tm_clock_graph *graph, const tm_clock_reading *r,
                         const clock_set *set, int64_t snapshot_id,
                         uint32_t *series_out, GError **error) {
  clock_node *node = graph->nodes.data[r->node];
  bool is_trace_time = r->node == graph->trace_time;
  bool ok = false;
  char *id = clock_key_to_string(&node->key);
  if (!node->registered) {
    if (r->incremental && !is_sequence_clock(node->key.clock_id)) {
      reject(error, "Clock sync error: the global clock with id=%s cannot use "
                    "incremental encoding; this is only supported for "
                    "sequence-scoped clocks.", id);
      goto out;
    }
    node->registered = true;
    node->unit_ns = r->unit_ns;
    node->incremental = r->incremental;
  } else if (node->unit_ns != r->unit_ns || node->incremental != r->incremental) {
    reject(error, "Clock sync error: the clock domain with id=%s (unit=%" G_GINT64_FORMAT
                  ", incremental=%d), was previously registered with different "
                  "properties (unit=%" G_GINT64_FORMAT ", incremental=%d).",
           id, r->unit_ns, (int)r->incremental, node->unit_ns, (int)node->incremental);
    goto out;
  }
  if (is_trace_time && node->unit_ns != 1) {
    reject(error, "Clock sync error: the trace clock (id=%s) must always use "
                  "nanoseconds as unit multiplier.", id);
    goto out;
  }
  int64_t value_ns = wrap_mul(r->value, node->unit_ns);
  node->running_ns = value_ns;
  if (node->last_snapshot == snapshot_id) {
    reject(error, "Clock sync error: duplicate clock domain with id=%s at snapshot %u.",
           id, (unsigned)snapshot_id);
    goto out;
  }
  node->last_snapshot = snapshot_id;
  uint32_t series_index = member_series(set, r->node);
  clock_series *series = &graph->series.data[series_index];
  if (series->has_last && value_ns < series->last_ns) {
    if (is_trace_time) {
      reject(error, "Clock sync error: the trace clock (id=%s) is not monotonic at "
                    "snapshot %u. %" G_GINT64_FORMAT " not >= %" G_GINT64_FORMAT ".",
             id, (unsigned)snapshot_id, value_ns, series->last_ns);
      goto out;
    }
    /* REALTIME stepping back: one value may now map to two instants, so
     * the clock can still be a target but never again a source. */
    node->non_monotonic = true;
  }
  series->last_ns = value_ns;
  series->has_last = true;
  *series_out = series_index;
  ok = true;
out:
  g_free(id);
  return ok;
}

int64_t clock_graph_add_snapshot(tm_clock_graph *graph,
                                 const tm_clock_reading *readings,
                                 size_t count, GError **error) {
  for (size_t i = 0; i < count; i++) {
    if (readings[i].node >= graph->nodes.len) {
      g_set_error(error, TM_CLOCK_GRAPH_ERROR, TM_CLOCK_GRAPH_ERROR_SNAPSHOT_REJECTED,
                  "Clock sync error: snapshot reading %zu names clock node %u, "
                  "which does not exist.", i, readings[i].node);
      return -1;
    }
  }
  int64_t snapshot_id = graph->next_snapshot_id++;
  invalidate_caches(graph);
  if (count == 0) { /* breaks no rule and relates nothing */
    graph->accepted_snapshots++;
    return snapshot_id;
  }
  uint32_t set_id = intern_set(graph, readings, count);
  clock_set *set = graph->sets.data[set_id];

  graph->pending_series.len = 0;
  tm_vec_reserve(&graph->pending_series, count);
  for (size_t i = 0; i < count; i++) {
    if (!take_reading(graph, &readings[i], set, snapshot_id,
                      &graph->pending_series.data[i], error))
      return -1;
  }

  for (size_t i = 0; i < count; i++) {
    const clock_node *node = graph->nodes.data[readings[i].node];
    int64_t value_ns = wrap_mul(readings[i].value, node->unit_ns);
    tm_vec_push(&graph->series.data[graph->pending_series.data[i]].values, value_ns);
    logged_reading entry = {snapshot_id, value_ns, readings[i].node};
    tm_vec_push(&graph->log, entry);
  }
  set->linked = true;
  graph->accepted_snapshots++;
  return snapshot_id;
}

int64_t clock_graph_add_zero_offset_edge(tm_clock_graph *graph, tm_clock_node a,
                                         tm_clock_node b, GError **error) {
  tm_clock_reading readings[2] = {{.node = a}, {.node = b}};
  for (size_t i = 0; i < 2; i++) {
    tm_clock_node node = readings[i].node;
    /* Zero is zero in any unit: reuse the registered properties so the
     * edge never trips the unit check. */
    if (node < graph->nodes.len && graph->nodes.data[node]->registered) {
      readings[i].unit_ns = graph->nodes.data[node]->unit_ns;
      readings[i].incremental = graph->nodes.data[node]->incremental;
    } else {
      readings[i].unit_ns = 1;
    }
  }
  return clock_graph_add_snapshot(graph, readings, 2, error);
}

void clock_graph_foreach_reading(const tm_clock_graph *graph,
                                 tm_clock_snapshot_visit visit, void *ctx) {
  for (size_t i = 0; i < graph->log.len; i++) {
    const logged_reading *r = &graph->log.data[i];
    visit(ctx, r->snapshot_id, r->node, r->value_ns);
  }
}

int64_t clock_graph_raw_to_ns(tm_clock_graph *graph, tm_clock_node node,
                              int64_t raw) {
  if (node >= graph->nodes.len)
    return raw;
  clock_node *n = graph->nodes.data[node];
  int64_t ns = wrap_mul(raw, n->unit_ns);
  if (!n->incremental)
    return ns;
  n->running_ns = wrap_add(n->running_ns, ns);
  return n->running_ns;
}

/* --- paths --------------------------------------------------------------- */

static void bfs_reserve(tm_clock_graph *graph) {
  size_t need = graph->nodes.len;
  if (need <= graph->bfs_cap)
    return;
  size_t cap = MAX(need, graph->bfs_cap * 2);
  graph->bfs_seen = g_renew(uint32_t, graph->bfs_seen, cap);
  memset(graph->bfs_seen + graph->bfs_cap, 0, (cap - graph->bfs_cap) * sizeof(uint32_t));
  graph->bfs_depth = g_renew(uint8_t, graph->bfs_depth, cap);
  graph->bfs_queue = g_renew(tm_clock_node, graph->bfs_queue, cap);
  graph->bfs_via = g_renew(clock_hop, graph->bfs_via, cap);
  graph->bfs_cap = cap;
}

/* Breadth first over the implicit edges, at most MAX_PATH_EDGES deep; the
 * first path to reach `to` is a shortest one, edges explored in the order
 * the node joined its sets. */
static void search_path(tm_clock_graph *graph, tm_clock_node from,
                        tm_clock_node to, clock_path *path) {
  path->len = 0;
  if (from >= graph->nodes.len || !graph->nodes.data[from]->registered) {
    path->failure = TM_CLOCK_UNKNOWN_SOURCE;
    return;
  }
  if (to >= graph->nodes.len || !graph->nodes.data[to]->registered) {
    path->failure = TM_CLOCK_UNKNOWN_TARGET;
    return;
  }
  path->failure = TM_CLOCK_OK;
  if (from == to)
    return;
  bfs_reserve(graph);
  if (++graph->bfs_stamp == 0) {
    memset(graph->bfs_seen, 0, graph->bfs_cap * sizeof(uint32_t));
    graph->bfs_stamp = 1;
  }
  uint32_t stamp = graph->bfs_stamp;
  size_t head = 0, tail = 0;
  graph->bfs_seen[from] = stamp;
  graph->bfs_depth[from] = 0;
  graph->bfs_queue[tail++] = from;
  while (head < tail) {
    tm_clock_node u = graph->bfs_queue[head++];
    const clock_node *node = graph->nodes.data[u];
    if (graph->bfs_depth[u] == MAX_PATH_EDGES || node->non_monotonic)
      continue;
    for (size_t m = 0; m < node->sets.len; m++) {
      const clock_set *set = graph->sets.data[node->sets.data[m].set];
      if (!set->linked)
        continue;
      uint32_t from_series = set->series[node->sets.data[m].pos];
      for (uint32_t i = 0; i < set->count; i++) {
        tm_clock_node v = set->members[i];
        if (graph->bfs_seen[v] == stamp)
          continue;
        graph->bfs_seen[v] = stamp;
        graph->bfs_depth[v] = (uint8_t)(graph->bfs_depth[u] + 1);
        graph->bfs_via[v] = (clock_hop){u, v, node->sets.data[m].set,
                                        from_series, set->series[i]};
        if (v == to) {
          uint32_t len = graph->bfs_depth[v];
          path->len = len;
          for (tm_clock_node at = v; at != from; at = graph->bfs_via[at].from)
            path->hops[--len] = graph->bfs_via[at];
          return;
        }
        graph->bfs_queue[tail++] = v;
      }
    }
  }
  path->failure = TM_CLOCK_NO_PATH;
}

static const clock_path *find_path(tm_clock_graph *graph, tm_clock_node from,
                                   tm_clock_node to) {
  uint64_t key = ((uint64_t)from << 32) | to;
  clock_path *path = g_hash_table_lookup(graph->paths, &key);
  if (path)
    return path;
  path = g_new(clock_path, 1);
  path->key = key;
  search_path(graph, from, to, path);
  g_hash_table_insert(graph->paths, &path->key, path);
  return path;
}

bool clock_graph_has_path(tm_clock_graph *graph, tm_clock_node from,
                          tm_clock_node to) {
  if (from == to)
    return true;
  return find_path(graph, from, to)->failure == TM_CLOCK_OK;
}

/* Index of the last value <= v, or 0 when v is below them all (§4 step 4). */
static size_t series_lookup(const clock_series *series, int64_t v) {
  size_t lo = 0, hi = series->values.len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (series->values.data[mid] <= v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo ? lo - 1 : 0;
}

/* Follows `path` for `value`. The range is tracked in 128 bits: within
 * [first, last] every hop picks the same snapshot and no intermediate value
 * overflows, so one offset holds for the whole range. Returns false when
 * `value` itself is outside its range: then its result, or a value on the
 * way, does not fit in 64 bits (the snapshot choices always include it). */
static bool path_span(const tm_clock_graph *graph, const clock_path *path,
                      int64_t value, tm_clock_span *out) {
  __int128 lo = INT64_MIN, hi = INT64_MAX, cum = 0;
  int64_t v = value;
  bool exact = true;
  for (uint32_t h = 0; h < path->len; h++) {
    const clock_series *a = &graph->series.data[path->hops[h].from_series];
    const clock_series *b = &graph->series.data[path->hops[h].to_series];
    g_assert(a->values.len > 0 && a->values.len == b->values.len);
    size_t i = series_lookup(a, v);
    int64_t a_value = a->values.data[i], b_value = b->values.data[i];
    if (i > 0)
      lo = MAX(lo, (__int128)a_value - cum);
    if (i + 1 < a->values.len)
      hi = MIN(hi, (__int128)a->values.data[i + 1] - 1 - cum);
    cum += (__int128)b_value - a_value;
    v = wrap_add(b_value, (int64_t)((uint64_t)v - (uint64_t)a_value));
    lo = MAX(lo, (__int128)INT64_MIN - cum);
    hi = MIN(hi, (__int128)INT64_MAX - cum);
    if (value < lo || value > hi)
      exact = false;
  }
  if (exact) {
    out->offset_ns = (int64_t)(uint64_t)cum;
    out->first = (int64_t)lo;
    out->last = (int64_t)hi;
  } else {
    out->offset_ns = (int64_t)((uint64_t)v - (uint64_t)value);
    out->first = out->last = value;
  }
  return exact;
}

tm_clock_failure clock_graph_span(tm_clock_graph *graph, tm_clock_node from,
                                  int64_t value, tm_clock_node to,
                                  tm_clock_span *out) {
  if (from == to) {
    *out = (tm_clock_span){0, INT64_MIN, INT64_MAX};
    return TM_CLOCK_OK;
  }
  const clock_path *path = find_path(graph, from, to);
  if (path->failure != TM_CLOCK_OK)
    return path->failure;
  if (!path_span(graph, path, value, out))
    return TM_CLOCK_OVERFLOW;
  span_cache_entry *entry = &graph->spans[graph->next_span];
  graph->next_span = (graph->next_span + 1) % SPAN_CACHE_SIZE;
  *entry = (span_cache_entry){from, to, *out};
  return TM_CLOCK_OK;
}

tm_clock_failure clock_graph_convert(tm_clock_graph *graph, tm_clock_node from,
                                     int64_t value, tm_clock_node to,
                                     int64_t *out) {
  if (from == to) {
    *out = value;
    return TM_CLOCK_OK;
  }
  for (size_t i = 0; i < SPAN_CACHE_SIZE; i++) {
    const span_cache_entry *entry = &graph->spans[i];
    if (entry->from == from && entry->to == to && value >= entry->span.first &&
        value <= entry->span.last) {
      *out = clock_span_apply(&entry->span, value);
      return TM_CLOCK_OK;
    }
  }
  tm_clock_span span;
  tm_clock_failure failure = clock_graph_span(graph, from, value, to, &span);
  if (failure == TM_CLOCK_OK)
    *out = clock_span_apply(&span, value);
  return failure;
}

tm_clock_failure clock_graph_to_trace_time(tm_clock_graph *graph,
                                           tm_clock_node node, int64_t value,
                                           int64_t *out) {
  return clock_graph_convert(graph, node, value, graph->trace_time, out);
}

const char *clock_failure_stat_name(tm_clock_failure failure) {
  switch (failure) {
  case TM_CLOCK_OK:
    return NULL;
  case TM_CLOCK_UNKNOWN_SOURCE:
    return "clock_sync_failure_unknown_source_clock";
  case TM_CLOCK_UNKNOWN_TARGET:
    return "clock_sync_failure_unknown_target_clock";
  case TM_CLOCK_NO_PATH:
    return "clock_sync_failure_no_path";
  case TM_CLOCK_OVERFLOW:
    return "clock_sync_failure_overflow";
  }
  return NULL;
}

/* --- merging a node into another ---------------------------------------- */

static bool set_has_member(const clock_set *set, tm_clock_node node) {
  size_t lo = 0, hi = set->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (set->members[mid] < node)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < set->count && set->members[lo] == node;
}

/* The members of `set` with `from` replaced by `into`, sorted, in
 * graph->scratch_members; returns their hash (as intern_set computes it). */
static uint32_t replaced_members(tm_clock_graph *graph, const clock_set *set,
                                 tm_clock_node from, tm_clock_node into) {
  graph->scratch_members.len = 0;
  for (uint32_t i = 0; i < set->count; i++)
    tm_vec_push(&graph->scratch_members, set->members[i] == from ? into : set->members[i]);
  qsort(graph->scratch_members.data, set->count, sizeof(tm_clock_node), compare_nodes);
  uint32_t hash = 2166136261u;
  for (uint32_t i = 0; i < set->count; i++)
    hash = (hash ^ graph->scratch_members.data[i]) * 16777619u;
  return hash;
}

bool clock_graph_merge_node(tm_clock_graph *graph, tm_clock_node from,
                            tm_clock_node into) {
  if (from == into || from >= graph->nodes.len || into >= graph->nodes.len)
    return false;
  clock_node *f = graph->nodes.data[from], *t = graph->nodes.data[into];
  if (f->registered && t->registered &&
      (f->unit_ns != t->unit_ns || f->incremental != t->incremental))
    return false;
  for (size_t m = 0; m < f->sets.len; m++) {
    const clock_set *set = graph->sets.data[f->sets.data[m].set];
    if (set_has_member(set, into))
      return false;
    clock_set probe = {.count = set->count};
    probe.hash = replaced_members(graph, set, from, into);
    probe.members = graph->scratch_members.data;
    if (g_hash_table_lookup(graph->set_ids, &probe))
      return false;
  }
  for (size_t m = 0; m < f->sets.len; m++) {
    uint32_t set_id = f->sets.data[m].set;
    clock_set *set = graph->sets.data[set_id];
    g_hash_table_remove(graph->set_ids, set);
    /* Move `into` from `from`'s place to its sorted place, its series
     * with it: the members stay sorted and aligned with their series. */
    uint32_t pos = f->sets.data[m].pos;
    uint32_t series = set->series[pos];
    while (pos > 0 && set->members[pos - 1] > into) {
      set->members[pos] = set->members[pos - 1];
      set->series[pos] = set->series[pos - 1];
      pos--;
    }
    while (pos + 1 < set->count && set->members[pos + 1] < into) {
      set->members[pos] = set->members[pos + 1];
      set->series[pos] = set->series[pos + 1];
      pos++;
    }
    set->members[pos] = into;
    set->series[pos] = series;
    set->hash = replaced_members(graph, set, into, into);
    g_hash_table_insert(graph->set_ids, set, GUINT_TO_POINTER(set_id + 1));
    node_membership moved = {set_id, pos};
    tm_vec_push(&t->sets, moved);
    for (uint32_t i = 0; i < set->count; i++) {
      clock_node *member = graph->nodes.data[set->members[i]];
      for (size_t k = 0; k < member->sets.len; k++)
        if (member->sets.data[k].set == set_id)
          member->sets.data[k].pos = i;
    }
  }
  f->sets.len = 0;
  if (!t->registered && f->registered) {
    t->registered = true;
    t->unit_ns = f->unit_ns;
    t->incremental = f->incremental;
    t->running_ns = f->running_ns;
  }
  t->non_monotonic |= f->non_monotonic;
  t->last_snapshot = MAX(t->last_snapshot, f->last_snapshot);
  for (size_t i = 0; i < graph->log.len; i++)
    if (graph->log.data[i].node == from)
      graph->log.data[i].node = into;
  if (graph->trace_time == from)
    graph->trace_time = into;
  invalidate_caches(graph);
  return true;
}

/* --- bridging (§6.2) ----------------------------------------------------- */

/* True if a snapshot already related `from` to `to` directly. */
static bool has_edge(const tm_clock_graph *graph, tm_clock_node from,
                     tm_clock_node to) {
  const clock_node *node = graph->nodes.data[from];
  if (node->non_monotonic)
    return false;
  for (size_t m = 0; m < node->sets.len; m++) {
    const clock_set *set = graph->sets.data[node->sets.data[m].set];
    if (!set->linked)
      continue;
    for (uint32_t i = 0; i < set->count; i++)
      if (set->members[i] == to)
        return true;
  }
  return false;
}

tm_clock_bridge clock_graph_bridge(tm_clock_graph *graph, tm_clock_node node) {
  tm_clock_node trace_time = graph->trace_time;
  if (node >= graph->nodes.len || trace_time >= graph->nodes.len)
    return TM_BRIDGE_UNRELATABLE;
  if (clock_graph_has_path(graph, node, trace_time))
    return TM_BRIDGE_DIRECT;

  tm_clock_key c = graph->nodes.data[node]->key;
  tm_clock_key g = graph->nodes.data[trace_time]->key;
  tm_clock_key r_key = {TM_CLOCK_REALTIME, 0, 0, c.machine_id};
  tm_clock_key gr_key = {TM_CLOCK_REALTIME, 0, 0, g.machine_id};
  tm_clock_node r = clock_graph_find_node(graph, &r_key);
  tm_clock_node gr = clock_graph_find_node(graph, &gr_key);
  if (r != TM_NO_CLOCK_NODE && gr != TM_NO_CLOCK_NODE && r != gr &&
      clock_graph_has_path(graph, node, r) &&
      clock_graph_has_path(graph, gr, trace_time)) {
    if (has_edge(graph, r, gr))
      return TM_BRIDGE_REALTIME;
    if (clock_graph_add_zero_offset_edge(graph, r, gr, NULL) >= 0)
      return TM_BRIDGE_REALTIME;
  }

  if (c.clock_id == TM_CLOCK_TRACE_FILE || g.clock_id == TM_CLOCK_TRACE_FILE ||
      c.clock_id == g.clock_id) {
    if (clock_graph_add_zero_offset_edge(graph, node, trace_time, NULL) >= 0)
      return TM_BRIDGE_SAME_DOMAIN;
  }
  return TM_BRIDGE_UNRELATABLE;
}

/* --- explaining ---------------------------------------------------------- */

static void append_key(GString *out, const tm_clock_key *key) {
  char *text = clock_key_to_string(key);
  g_string_append(out, text);
  g_free(text);
}

char *clock_graph_describe_path(tm_clock_graph *graph, tm_clock_node from,
                                tm_clock_node to) {
  GString *out = g_string_new(NULL);
  const tm_clock_key *from_key = clock_graph_node_key(graph, from);
  const tm_clock_key *to_key = clock_graph_node_key(graph, to);
  if (from_key)
    append_key(out, from_key);
  else
    g_string_append(out, "(no clock)");
  if (from == to) {
    g_string_append(out, " is the target clock itself");
    return g_string_free(out, FALSE);
  }
  const clock_path *path = find_path(graph, from, to);
  if (path->failure != TM_CLOCK_OK) {
    g_string_append(out, " -> ");
    if (to_key)
      append_key(out, to_key);
    else
      g_string_append(out, "(no clock)");
    g_string_append_printf(out, ": %s",
                           path->failure == TM_CLOCK_UNKNOWN_SOURCE ? "unknown source clock"
                           : path->failure == TM_CLOCK_UNKNOWN_TARGET ? "unknown target clock"
                                                                      : "no path of at most 4 edges");
    return g_string_free(out, FALSE);
  }
  for (uint32_t h = 0; h < path->len; h++) {
    const clock_series *a = &graph->series.data[path->hops[h].from_series];
    const clock_series *b = &graph->series.data[path->hops[h].to_series];
    size_t n = a->values.len;
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
      int64_t offset = wrap_add(b->values.data[i], -a->values.data[i]);
      low = MIN(low, offset);
      high = MAX(high, offset);
    }
    if (low == high)
      g_string_append_printf(out, " -[%zu snapshot%s, %+" G_GINT64_FORMAT " ns]-> ",
                             n, n == 1 ? "" : "s", low);
    else
      g_string_append_printf(out, " -[%zu snapshots, %+" G_GINT64_FORMAT "..%+" G_GINT64_FORMAT
                             " ns]-> ", n, low, high);
    append_key(out, &graph->nodes.data[path->hops[h].to]->key);
  }
  return g_string_free(out, FALSE);
}

static void append_dot_escaped(GString *out, const char *text) {
  for (const char *p = text; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_c(out, '\\');
    if (*p == '\n')
      g_string_append(out, "\\n");
    else
      g_string_append_c(out, *p);
  }
}

void clock_graph_print_dot(const tm_clock_graph *graph, FILE *file,
                           tm_clock_label_fn label, void *ctx) {
  GString *out = g_string_new("digraph clocks {\n");
  GString *name = g_string_new(NULL);
  for (size_t u = 0; u < graph->nodes.len; u++) {
    const clock_node *node = graph->nodes.data[u];
    g_string_truncate(name, 0);
    if (label)
      label(ctx, (tm_clock_node)u, &node->key, name);
    else
      append_key(name, &node->key);
    g_string_append_printf(out, "  n%zu [label=\"", u);
    append_dot_escaped(out, name->str);
    g_string_append(out, "\"");
    if (u == graph->trace_time)
      g_string_append(out, " shape=doublecircle");
    if (node->non_monotonic)
      g_string_append(out, " style=dashed");
    g_string_append(out, "];\n");
  }
  for (size_t u = 0; u < graph->nodes.len; u++) {
    const clock_node *node = graph->nodes.data[u];
    if (node->non_monotonic)
      continue;
    for (size_t m = 0; m < node->sets.len; m++) {
      uint32_t set_id = node->sets.data[m].set;
      const clock_set *set = graph->sets.data[set_id];
      if (!set->linked)
        continue;
      size_t snapshots = graph->series.data[set->series[0]].values.len;
      for (uint32_t i = 0; i < set->count; i++) {
        if (set->members[i] == u)
          continue;
        g_string_append_printf(out, "  n%zu -> n%u [label=\"set %u x%zu\"];\n", u,
                               set->members[i], set_id, snapshots);
      }
    }
  }
  g_string_append(out, "}\n");
  fwrite(out->str, 1, out->len, file);
  g_string_free(name, TRUE);
  g_string_free(out, TRUE);
}
