/*
 * Legacy V8 CPU profiles: see json_v8_profile.h for what is read and the
 * invariants.
 *
 * Mapping of the data (as trace_processor's legacy V8 profile import):
 * every node is a frame named by callFrame.functionName ("(anonymous)"
 * when empty or absent, as DevTools shows it) in the mapping named by
 * callFrame.url (an unnamed mapping when empty), rel_pc 0; its callsite is
 * its parent's callsite extended by its frame, root first; the parent is
 * the node's "parent", else the node whose "children" list it. Samples go to
 * cpu_profile_stack_sample (source "legacy_v8").
 *
 * Malformed data is skipped and counted:
 * - json_v8_profile_unknown_profile: a ProfileChunk whose pid and id no
 *   Profile event opened before it in the file (the whole chunk, counted
 *   when it is read). trace_processor reads P events in file order while
 *   tokenizing and drops such a chunk (its nodes and samples), even when
 *   the Profile comes later: Chrome writes events out of order, and the
 *   reference keeps only the chunks after their Profile;
 * - json_v8_profile_invalid_chunk: samples and timeDeltas of different
 *   lengths, or an entry that is not an integer (the chunk's samples, and
 *   its deltas, which cannot be paired with them; its nodes are kept);
 * - json_v8_profile_unknown_node: a sample whose node, or a parent on its
 *   chain, is not known (or the chain loops); its delta still counts.
 *
 * A sample's thread is resolved when the sample is emitted, as upstream's
 * AddSample does: a thread that only writes dropped chunks is never made.
 */
#include "json_v8_profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "json_buf.h"
#include "json_cookie_map.h"

typedef struct v8_node {
  int64_t parent_id;
  bool has_parent;
  tm_frame_ref frame;
  tm_callsite_ref callsite; /* 0 until its chain is known */
} v8_node;

typedef struct v8_profile {
  int64_t ts_ns;          /* startTime + the deltas so far */
  json_cookie_map index;  /* node id -> position in `nodes` + 1 */
  v8_node *nodes;
  size_t n_nodes, cap_nodes;
} v8_profile;

/* A node as one chunk lists it, before it joins its profile. */
typedef struct chunk_node {
  int64_t id, parent;
  bool has_id, has_parent;
  json_span name, url;
  bool has_name, has_url;
} chunk_node;

/* "children": [child] of the chunk's node at `node` (the DevTools
 * Profile.ProfileNode form, which lists children instead of a parent). */
typedef struct chunk_edge {
  size_t node;
  int64_t child;
} chunk_edge;

/* An entry of samples[] or timeDeltas[]. */
typedef struct chunk_int {
  int64_t value;
  bool valid;
} chunk_int;

/* What one ProfileChunk lists, as read from its args. */
typedef struct v8_chunk {
  chunk_node *nodes;
  size_t n_nodes, cap_nodes;
  chunk_edge *edges;
  size_t n_edges, cap_edges;
  chunk_int *samples;
  size_t n_samples, cap_samples;
  chunk_int *deltas;
  size_t n_deltas, cap_deltas;
  bool bad_entry; /* a samples/timeDeltas entry of the wrong shape */
} v8_chunk;

struct json_v8_profiles {
  const tm_host_services *svc;
  tm_host *host;
  GHashTable *by_key;   /* "pid/kind/id" -> v8_profile */
  v8_chunk scratch;     /* one chunk, reused: bounded by the largest */
  uint32_t *chain; /* positions being resolved, leaf first */
  size_t cap_chain;
};

static void profile_free(void *p) {
  v8_profile *profile = p;
  json_cookie_map_clear(&profile->index);
  free(profile->nodes);
  free(profile);
}

static void chunk_free(v8_chunk *c) {
  free(c->nodes);
  free(c->edges);
  free(c->samples);
  free(c->deltas);
}

json_v8_profiles *json_v8_profiles_new(const tm_host_services *services,
                                       tm_host *host) {
  json_v8_profiles *p = calloc(1, sizeof(*p));
  if (!p)
    return NULL;
  p->svc = services;
  p->host = host;
  p->by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                    profile_free);
  return p;
}

void json_v8_profiles_free(json_v8_profiles *p) {
  if (!p)
    return;
  g_hash_table_destroy(p->by_key);
  chunk_free(&p->scratch);
  free(p->chain);
  free(p);
}

static void stat(json_v8_profiles *p, const char *name) {
  p->svc->stat_add(p->host, name, 1);
}

/* --- reading the flattened args -------------------------------------------- */

static bool has_prefix(const char **s, size_t *len, const char *prefix) {
  size_t n = strlen(prefix);
  if (*len < n || memcmp(*s, prefix, n) != 0)
    return false;
  *s += n;
  *len -= n;
  return true;
}

static bool equals(const char *s, size_t len, const char *word) {
  return len == strlen(word) && memcmp(s, word, len) == 0;
}

/* "<digits>]" at *s: the index, consumed. The reader writes it, so it is
 * canonical; the bound only keeps the arithmetic safe. */
static bool take_index(const char **s, size_t *len, size_t *index) {
  size_t i = 0, value = 0;
  while (i < *len && (*s)[i] >= '0' && (*s)[i] <= '9') {
    if (value > (SIZE_MAX - 9) / 10 || i >= 12)
      return false;
    value = value * 10 + (size_t)((*s)[i] - '0');
    i++;
  }
  if (i == 0 || i >= *len || (*s)[i] != ']')
    return false;
  *s += i + 1;
  *len -= i + 1;
  *index = value;
  return true;
}

/* Grows `*items` (of `*n` used, `*cap` allocated) to hold `index`, zeroing
 * what it adds. */
static bool reach(void **items, size_t *n, size_t *cap, size_t index,
                  size_t elem_size) {
  if (index < *n)
    return true;
  if (!json_grow(items, cap, index + 1, elem_size))
    return false;
  memset((char *)*items + *n * elem_size, 0, (index + 1 - *n) * elem_size);
  *n = index + 1;
  return true;
}

/* An entry of samples[] or timeDeltas[]: `rest` is what follows "]". */
static bool read_int_entry(json_v8_profiles *p, chunk_int **items, size_t *n,
                           size_t *cap, size_t index, size_t rest_len,
                           const json_arg *arg) {
  if (!reach((void **)items, n, cap, index, sizeof(chunk_int)))
    return false;
  if (rest_len == 0 && arg->kind == JSON_ARG_KIND_INT) {
    (*items)[index].value = arg->u.int_value;
    (*items)[index].valid = true;
  } else {
    /* null, real, string, or a container's member */
    p->scratch.bad_entry = true;
  }
  return true;
}

static bool read_node_field(json_v8_profiles *p, size_t index,
                            const char *rest, size_t rest_len,
                            const json_arg *arg) {
  if (!reach((void **)&p->scratch.nodes, &p->scratch.n_nodes,
             &p->scratch.cap_nodes, index, sizeof(chunk_node)))
    return false;
  chunk_node *node = &p->scratch.nodes[index];
  if (arg->kind == JSON_ARG_KIND_INT && equals(rest, rest_len, ".id")) {
    node->id = arg->u.int_value;
    node->has_id = true;
  } else if (arg->kind == JSON_ARG_KIND_INT &&
             equals(rest, rest_len, ".parent")) {
    node->parent = arg->u.int_value;
    node->has_parent = true;
  } else if (arg->kind == JSON_ARG_KIND_STRING &&
             equals(rest, rest_len, ".callFrame.functionName")) {
    node->name = arg->u.text;
    node->has_name = true;
  } else if (arg->kind == JSON_ARG_KIND_STRING &&
             equals(rest, rest_len, ".callFrame.url")) {
    node->url = arg->u.text;
    node->has_url = true;
  } else if (arg->kind == JSON_ARG_KIND_INT &&
             has_prefix(&rest, &rest_len, ".children[")) {
    if (!json_grow((void **)&p->scratch.edges, &p->scratch.cap_edges,
                   p->scratch.n_edges + 1, sizeof(chunk_edge)))
      return false;
    p->scratch.edges[p->scratch.n_edges++] =
        (chunk_edge){index, arg->u.int_value};
  }
  return true; /* other fields (scriptId, lineNumber, ...) are not kept */
}

/* Fills the chunk scratch from the event's args; `start_ns` gets
 * args.data.startTime when present. False on out of memory. */
static bool read_chunk(json_v8_profiles *p, const json_event_buf *buf,
                       bool *has_start, int64_t *start_ns) {
  p->scratch.n_nodes = p->scratch.n_edges = p->scratch.n_samples =
      p->scratch.n_deltas = 0;
  p->scratch.bad_entry = false;
  *has_start = false;
  for (size_t i = 0; i < buf->n_args; i++) {
    const json_arg *arg = &buf->args[i];
    const char *s = json_event_buf_text(buf, arg->key);
    size_t len = arg->key.len;
    size_t index;
    if (!has_prefix(&s, &len, "args.data."))
      continue;
    if (equals(s, len, "startTime")) {
      if (arg->kind == JSON_ARG_KIND_INT &&
          arg->u.int_value <= INT64_MAX / 1000 &&
          arg->u.int_value >= INT64_MIN / 1000) {
        *start_ns = arg->u.int_value * 1000;
        *has_start = true;
      } else if (arg->kind == JSON_ARG_KIND_REAL &&
                 fabs(arg->u.real_value) < 9e15) {
        *start_ns = llround(arg->u.real_value * 1000.0);
        *has_start = true;
      }
    } else if (has_prefix(&s, &len, "cpuProfile.nodes[")) {
      if (take_index(&s, &len, &index) &&
          !read_node_field(p, index, s, len, arg))
        return false;
    } else if (has_prefix(&s, &len, "cpuProfile.samples[")) {
      if (!take_index(&s, &len, &index))
        continue;
      if (!read_int_entry(p, &p->scratch.samples, &p->scratch.n_samples,
                          &p->scratch.cap_samples, index, len, arg))
        return false;
    } else if (has_prefix(&s, &len, "timeDeltas[")) {
      if (!take_index(&s, &len, &index))
        continue;
      if (!read_int_entry(p, &p->scratch.deltas, &p->scratch.n_deltas,
                          &p->scratch.cap_deltas, index, len, arg))
        return false;
    }
  }
  return true;
}

/* --- building stacks --------------------------------------------------------- */

static tm_frame_ref node_frame(json_v8_profiles *p, const json_event_buf *buf,
                               const chunk_node *node) {
  const char *name = "(anonymous)";
  size_t name_len = 11;
  if (node->has_name && node->name.len) {
    name = json_event_buf_text(buf, node->name);
    name_len = node->name.len;
  }
  tm_str_id url = node->has_url && node->url.len
                      ? p->svc->intern_string(p->host,
                                              json_event_buf_text(buf, node->url),
                                              node->url.len)
                      : 0;
  tm_mapping_ref mapping = p->svc->mapping(p->host, url, 0, 0, 0, 0, 0);
  return p->svc->frame(p->host, p->svc->intern_string(p->host, name, name_len),
                       mapping, 0);
}

/* The callsite of the node at `pos`, building what its chain lacks; 0 when
 * a node on the chain is unknown or the chain loops. */
static tm_callsite_ref resolve(json_v8_profiles *p, v8_profile *profile,
                               uint32_t pos, bool *oom) {
  size_t depth = 0;
  tm_callsite_ref base = 0;
  for (;;) {
    v8_node *node = &profile->nodes[pos];
    if (node->callsite) {
      base = node->callsite;
      break;
    }
    /* A chain longer than the node set revisits a node: a loop. */
    if (depth >= profile->n_nodes)
      return 0;
    if (!json_grow((void **)&p->chain, &p->cap_chain, depth + 1,
                   sizeof(*p->chain))) {
      *oom = true;
      return 0;
    }
    p->chain[depth++] = pos;
    if (!node->has_parent)
      break;
    uint32_t parent = json_cookie_map_get(&profile->index,
                                          (uint64_t)node->parent_id);
    if (!parent)
      return 0;
    pos = parent - 1;
  }
  while (depth > 0) {
    v8_node *node = &profile->nodes[p->chain[--depth]];
    base = p->svc->callsite(p->host, base, node->frame);
    node->callsite = base;
  }
  return base;
}

/* Adds the chunk's nodes with ids not seen yet (the first listing of an id
 * wins), then builds the callsites of those whose chains are complete. */
static bool add_nodes(json_v8_profiles *p, v8_profile *profile,
                      const v8_chunk *c, const json_event_buf *buf) {
  size_t first_new = profile->n_nodes;
  for (size_t i = 0; i < c->n_nodes; i++) {
    const chunk_node *n = &c->nodes[i];
    if (!n->has_id ||
        json_cookie_map_get(&profile->index, (uint64_t)n->id) != 0)
      continue;
    if (profile->n_nodes >= UINT32_MAX - 1 ||
        !json_grow((void **)&profile->nodes, &profile->cap_nodes,
                   profile->n_nodes + 1, sizeof(v8_node)) ||
        !json_cookie_map_put(&profile->index, (uint64_t)n->id,
                             (uint32_t)profile->n_nodes + 1))
      return false;
    profile->nodes[profile->n_nodes++] = (v8_node){
        .parent_id = n->parent,
        .has_parent = n->has_parent,
        .frame = node_frame(p, buf, n),
    };
  }
  /* A child learns its parent from the parent's "children" unless it
   * named one itself; a node already on a built stack keeps it. */
  for (size_t i = 0; i < c->n_edges; i++) {
    const chunk_node *parent = &c->nodes[c->edges[i].node];
    uint32_t child = json_cookie_map_get(&profile->index,
                                         (uint64_t)c->edges[i].child);
    if (!parent->has_id || !child)
      continue;
    v8_node *node = &profile->nodes[child - 1];
    if (!node->has_parent && !node->callsite) {
      node->parent_id = parent->id;
      node->has_parent = true;
    }
  }
  bool oom = false;
  for (size_t pos = first_new; pos < profile->n_nodes && !oom; pos++)
    resolve(p, profile, (uint32_t)pos, &oom);
  return !oom;
}

static bool emit_samples(json_v8_profiles *p, v8_profile *profile,
                         const v8_chunk *c, const json_v8_thread *thread,
                         tm_clock_ref clock) {
  if (c->bad_entry || c->n_samples != c->n_deltas) {
    stat(p, "json_v8_profile_invalid_chunk");
    return true;
  }
  tm_thread_ref thread_ref = 0;
  for (size_t i = 0; i < c->n_samples; i++) {
    int64_t delta_ns;
    if (__builtin_mul_overflow(c->deltas[i].value, (int64_t)1000, &delta_ns) ||
        __builtin_add_overflow(profile->ts_ns, delta_ns, &profile->ts_ns)) {
      stat(p, "json_v8_profile_invalid_chunk");
      return true;
    }
    uint32_t pos = json_cookie_map_get(&profile->index,
                                       (uint64_t)c->samples[i].value);
    bool oom = false;
    tm_callsite_ref callsite = pos ? resolve(p, profile, pos - 1, &oom) : 0;
    if (oom)
      return false;
    if (!callsite) {
      stat(p, "json_v8_profile_unknown_node");
      continue;
    }
    if (!thread_ref)
      thread_ref = thread->resolve(thread->ctx);
    p->svc->sample(p->host, clock, profile->ts_ns, thread_ref, callsite, -1);
  }
  return true;
}

/* --- events -------------------------------------------------------------------- */

/* "pid/kind/id": profile ids repeat across processes (Chrome numbers them
 * per process, "0x1"), so the pid is part of the key, as upstream. */
static char *profile_key(const json_event_buf *buf, int64_t pid) {
  const json_id_field *id = &buf->ev.id;
  if (id->kind == JSON_ID_NUMBER)
    return g_strdup_printf("%" G_GINT64_FORMAT "/n/%" G_GUINT64_FORMAT, pid,
                           id->number);
  if (id->kind == JSON_ID_STRING)
    return g_strdup_printf("%" G_GINT64_FORMAT "/s/%.*s", pid,
                           (int)id->text.len,
                           json_event_buf_text(buf, id->text));
  return g_strdup_printf("%" G_GINT64_FORMAT "/-", pid);
}

bool json_v8_profiles_event(json_v8_profiles *p, const json_event_buf *buf,
                            int64_t pid, const json_v8_thread *thread,
                            tm_clock_ref clock) {
  const json_event *ev = &buf->ev;
  const char *name = json_event_buf_text(buf, ev->name);
  bool is_start = equals(name, ev->name.len, "Profile");
  if (!is_start && !equals(name, ev->name.len, "ProfileChunk"))
    return true;

  bool has_start = false;
  int64_t start_ns = 0;
  if (!read_chunk(p, buf, &has_start, &start_ns))
    return false;

  char *key = profile_key(buf, pid);
  v8_profile *profile;
  if (is_start) {
    /* A Profile again with the same key starts over: V8 numbers the nodes
     * of each profile from 1. Without startTime, the event's own ts. */
    profile = calloc(1, sizeof(*profile));
    if (!profile) {
      g_free(key);
      return false;
    }
    profile->ts_ns = has_start ? start_ns : ev->ts.ns;
    g_hash_table_replace(p->by_key, key, profile);
  } else {
    profile = g_hash_table_lookup(p->by_key, key);
    g_free(key);
    if (!profile) {
      stat(p, "json_v8_profile_unknown_profile");
      return true;
    }
  }
  return add_nodes(p, profile, &p->scratch, buf) &&
         emit_samples(p, profile, &p->scratch, thread, clock);
}
