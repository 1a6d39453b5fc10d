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

#include "base/vec.h"
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
  TM_VEC(v8_node) nodes;
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

typedef TM_VEC(chunk_int) chunk_int_vec;

/* What one ProfileChunk lists, as read from its args. */
typedef struct v8_chunk {
  TM_VEC(chunk_node) nodes;
  TM_VEC(chunk_edge) edges;
  chunk_int_vec samples;
  chunk_int_vec deltas;
  bool bad_entry; /* a samples/timeDeltas entry of the wrong shape */
} v8_chunk;

struct json_v8_profiles {
  const tm_host_services *svc;
  tm_host *host;
  GHashTable *by_key;   /* "pid/kind/id" -> v8_profile */
  v8_chunk scratch;     /* one chunk, reused: bounded by the largest */
  TM_VEC(uint32_t) chain; /* positions being resolved, leaf first */
};

static void profile_free(void *p) {
  v8_profile *profile = p;
  json_cookie_map_clear(&profile->index);
  tm_vec_free(&profile->nodes);
  g_free(profile);
}

static void chunk_free(v8_chunk *c) {
  tm_vec_free(&c->nodes);
  tm_vec_free(&c->edges);
  tm_vec_free(&c->samples);
  tm_vec_free(&c->deltas);
}

json_v8_profiles *json_v8_profiles_new(const tm_host_services *services,
                                       tm_host *host) {
  json_v8_profiles *p = g_new0(json_v8_profiles, 1);
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
  tm_vec_free(&p->chain);
  g_free(p);
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

/* Grows a TM_VEC (its data, len and cap) to hold `index`, zeroing what
 * it adds. */
static void reach(void **items, size_t *n, size_t *cap, size_t index,
                  size_t elem_size) {
  if (index < *n)
    return;
  tm_vec_reserve_(items, cap, index + 1, elem_size);
  memset((char *)*items + *n * elem_size, 0, (index + 1 - *n) * elem_size);
  *n = index + 1;
}

#define TM_VEC_REACH(v, index)                                              \
  reach((void **)&(v)->data, &(v)->len, &(v)->cap, (index),                 \
        sizeof(*(v)->data))

/* An entry of samples[] or timeDeltas[]: `rest` is what follows "]". */
static void read_int_entry(json_v8_profiles *p, chunk_int_vec *items,
                           size_t index, size_t rest_len,
                           const json_arg *arg) {
  TM_VEC_REACH(items, index);
  if (rest_len == 0 && arg->kind == JSON_ARG_KIND_INT) {
    items->data[index].value = arg->u.int_value;
    items->data[index].valid = true;
  } else {
    /* null, real, string, or a container's member */
    p->scratch.bad_entry = true;
  }
}

static void read_node_field(json_v8_profiles *p, size_t index,
                            const char *rest, size_t rest_len,
                            const json_arg *arg) {
  TM_VEC_REACH(&p->scratch.nodes, index);
  chunk_node *node = &p->scratch.nodes.data[index];
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
    tm_vec_push(&p->scratch.edges, ((chunk_edge){index, arg->u.int_value}));
  }
  /* other fields (scriptId, lineNumber, ...) are not kept */
}

/* Fills the chunk scratch from the event's args; `start_ns` gets
 * args.data.startTime when present. */
static void read_chunk(json_v8_profiles *p, const json_event_buf *buf,
                       bool *has_start, int64_t *start_ns) {
  p->scratch.nodes.len = p->scratch.edges.len = p->scratch.samples.len =
      p->scratch.deltas.len = 0;
  p->scratch.bad_entry = false;
  *has_start = false;
  for (size_t i = 0; i < buf->args.len; i++) {
    const json_arg *arg = &buf->args.data[i];
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
      if (take_index(&s, &len, &index))
        read_node_field(p, index, s, len, arg);
    } else if (has_prefix(&s, &len, "cpuProfile.samples[")) {
      if (take_index(&s, &len, &index))
        read_int_entry(p, &p->scratch.samples, index, len, arg);
    } else if (has_prefix(&s, &len, "timeDeltas[")) {
      if (take_index(&s, &len, &index))
        read_int_entry(p, &p->scratch.deltas, index, len, arg);
    }
  }
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
                               uint32_t pos) {
  size_t depth = 0;
  tm_callsite_ref base = 0;
  for (;;) {
    v8_node *node = &profile->nodes.data[pos];
    if (node->callsite) {
      base = node->callsite;
      break;
    }
    /* A chain longer than the node set revisits a node: a loop. */
    if (depth >= profile->nodes.len)
      return 0;
    p->chain.len = depth;
    tm_vec_push(&p->chain, pos);
    depth++;
    if (!node->has_parent)
      break;
    uint32_t parent = json_cookie_map_get(&profile->index,
                                          (uint64_t)node->parent_id);
    if (!parent)
      return 0;
    pos = parent - 1;
  }
  while (depth > 0) {
    v8_node *node = &profile->nodes.data[p->chain.data[--depth]];
    base = p->svc->callsite(p->host, base, node->frame);
    node->callsite = base;
  }
  return base;
}

/* Adds the chunk's nodes with ids not seen yet (the first listing of an id
 * wins), then builds the callsites of those whose chains are complete. */
static void add_nodes(json_v8_profiles *p, v8_profile *profile,
                      const v8_chunk *c, const json_event_buf *buf) {
  size_t first_new = profile->nodes.len;
  for (size_t i = 0; i < c->nodes.len; i++) {
    const chunk_node *n = &c->nodes.data[i];
    if (!n->has_id ||
        json_cookie_map_get(&profile->index, (uint64_t)n->id) != 0)
      continue;
    /* Positions are kept + 1 in 32 bits; the file's size bounds them
     * far below that, so more nodes than that are not kept. */
    if (profile->nodes.len >= UINT32_MAX - 1)
      break;
    json_cookie_map_put(&profile->index, (uint64_t)n->id,
                        (uint32_t)profile->nodes.len + 1);
    tm_vec_push(&profile->nodes, ((v8_node){
                                     .parent_id = n->parent,
                                     .has_parent = n->has_parent,
                                     .frame = node_frame(p, buf, n),
                                 }));
  }
  /* A child learns its parent from the parent's "children" unless it
   * named one itself; a node already on a built stack keeps it. */
  for (size_t i = 0; i < c->edges.len; i++) {
    const chunk_node *parent = &c->nodes.data[c->edges.data[i].node];
    uint32_t child = json_cookie_map_get(&profile->index,
                                         (uint64_t)c->edges.data[i].child);
    if (!parent->has_id || !child)
      continue;
    v8_node *node = &profile->nodes.data[child - 1];
    if (!node->has_parent && !node->callsite) {
      node->parent_id = parent->id;
      node->has_parent = true;
    }
  }
  for (size_t pos = first_new; pos < profile->nodes.len; pos++)
    resolve(p, profile, (uint32_t)pos);
}

static void emit_samples(json_v8_profiles *p, v8_profile *profile,
                         const v8_chunk *c, const json_v8_thread *thread,
                         tm_clock_ref clock) {
  if (c->bad_entry || c->samples.len != c->deltas.len) {
    stat(p, "json_v8_profile_invalid_chunk");
    return;
  }
  tm_thread_ref thread_ref = 0;
  for (size_t i = 0; i < c->samples.len; i++) {
    int64_t delta_ns;
    if (__builtin_mul_overflow(c->deltas.data[i].value, (int64_t)1000, &delta_ns) ||
        __builtin_add_overflow(profile->ts_ns, delta_ns, &profile->ts_ns)) {
      stat(p, "json_v8_profile_invalid_chunk");
      return;
    }
    uint32_t pos = json_cookie_map_get(&profile->index,
                                       (uint64_t)c->samples.data[i].value);
    tm_callsite_ref callsite = pos ? resolve(p, profile, pos - 1) : 0;
    if (!callsite) {
      stat(p, "json_v8_profile_unknown_node");
      continue;
    }
    if (!thread_ref)
      thread_ref = thread->resolve(thread->ctx);
    p->svc->sample(p->host, clock, profile->ts_ns, thread_ref, callsite, -1);
  }
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

void json_v8_profiles_event(json_v8_profiles *p, const json_event_buf *buf,
                            int64_t pid, const json_v8_thread *thread,
                            tm_clock_ref clock) {
  const json_event *ev = &buf->ev;
  const char *name = json_event_buf_text(buf, ev->name);
  bool is_start = equals(name, ev->name.len, "Profile");
  if (!is_start && !equals(name, ev->name.len, "ProfileChunk"))
    return;

  bool has_start = false;
  int64_t start_ns = 0;
  read_chunk(p, buf, &has_start, &start_ns);

  char *key = profile_key(buf, pid);
  v8_profile *profile;
  if (is_start) {
    /* A Profile again with the same key starts over: V8 numbers the nodes
     * of each profile from 1. Without startTime, the event's own ts. */
    profile = g_new0(v8_profile, 1);
    profile->ts_ns = has_start ? start_ns : ev->ts.ns;
    g_hash_table_replace(p->by_key, key, profile);
  } else {
    profile = g_hash_table_lookup(p->by_key, key);
    g_free(key);
    if (!profile) {
      stat(p, "json_v8_profile_unknown_profile");
      return;
    }
  }
  add_nodes(p, profile, &p->scratch, buf);
  emit_samples(p, profile, &p->scratch, thread, clock);
}
