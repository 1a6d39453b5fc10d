/*
 * Async track sets; see async_tracks.h.
 */
#include "model/async_tracks.h"

#include <glib.h>
#include <string.h>

#include "base/vec.h"

/* What identifies a set: the described track without its cookie. */
typedef struct set_key {
  uint32_t trace_id;
  uint32_t machine_id;
  tm_str_id type;
  tm_str_id name;
  uint32_t utid;
  uint32_t upid;
  tm_str_id scope;
  uint32_t event_type;
  tm_str_id merge_key; /* 0: told apart by name */
  uint32_t pad;
  uint64_t set_key;
} set_key;

/* One track of a set: the cookie it holds and how deep its stack is. */
typedef struct set_track {
  uint64_t cookie;
  uint32_t open;     /* slices open on the cookie (0: adoptable) */
  uint32_t track_id; /* TM_NULL_ID until an event lands on it */
} set_track;

typedef struct async_set {
  set_key key;
  bool unnestable;
  bool resolving_parent; /* guards parent chains that loop */
  uint32_t group_id;     /* TM_NULL_ID until first resolved */
  uint32_t parent;       /* track id, slot id or TM_NULL_ID */
  TM_VEC(set_track) tracks;
} async_set;

typedef struct slot_key {
  uint64_t cookie;
  uint32_t set;
  uint32_t pad;
} slot_key;

/* A slot: its key and what the tracks its events make take from it. */
typedef struct slot_info {
  slot_key key;
  tm_str_id name;
  uint32_t source_args; /* 0: none */
} slot_info;

struct tm_async_tracks {
  TM_VEC(async_set) sets;
  TM_VEC(slot_info) slots; /* by slot index */
  GHashTable *set_index;   /* set_key -> set index + 1 */
  GHashTable *slot_index;  /* slot_key -> slot index + 1 */
  uint32_t next_group_id;
};

static guint bytes_hash(const void *p, size_t n) {
  const uint8_t *b = p;
  guint h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 16777619u;
  return h;
}

static guint set_key_hash(gconstpointer p) { return bytes_hash(p, sizeof(set_key)); }
static gboolean set_key_equal(gconstpointer a, gconstpointer b) {
  return memcmp(a, b, sizeof(set_key)) == 0;
}
static guint slot_key_hash(gconstpointer p) { return bytes_hash(p, sizeof(slot_key)); }
static gboolean slot_key_equal(gconstpointer a, gconstpointer b) {
  return memcmp(a, b, sizeof(slot_key)) == 0;
}

tm_async_tracks *async_tracks_new(void) {
  tm_async_tracks *t = g_new0(tm_async_tracks, 1);
  t->set_index = g_hash_table_new_full(set_key_hash, set_key_equal, g_free, NULL);
  t->slot_index = g_hash_table_new_full(slot_key_hash, slot_key_equal, g_free, NULL);
  return t;
}

void async_tracks_free(tm_async_tracks *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->sets.len; i++)
    tm_vec_free(&t->sets.data[i].tracks);
  tm_vec_free(&t->sets);
  tm_vec_free(&t->slots);
  g_hash_table_destroy(t->set_index);
  g_hash_table_destroy(t->slot_index);
  g_free(t);
}

uint32_t async_tracks_slot(tm_async_tracks *t, const tm_track_row *row,
                           const tm_async_merge *merge, bool unnestable,
                           uint64_t cookie) {
  set_key key;
  memset(&key, 0, sizeof key);
  key.trace_id = row->trace_id;
  key.machine_id = row->machine_id;
  key.type = row->type;
  key.name = row->name;
  key.utid = row->utid;
  key.upid = row->upid;
  key.scope = row->dimension_scope;
  key.event_type = row->event_type;
  if (merge) {
    key.set_key = merge->set_key;
    key.merge_key = merge->merge_key;
    if (merge->merge_key)
      key.name = 0; /* siblings of one key merge whatever their names */
  }
  gpointer found = g_hash_table_lookup(t->set_index, &key);
  uint32_t set;
  if (found) {
    set = GPOINTER_TO_UINT(found) - 1;
  } else {
    async_set fresh = {.key = key, .unnestable = unnestable,
                       .group_id = TM_NULL_ID,
                       .parent = merge ? merge->parent : TM_NULL_ID};
    tm_vec_push(&t->sets, fresh);
    set = (uint32_t)(t->sets.len - 1);
    g_hash_table_insert(t->set_index, g_memdup2(&key, sizeof key),
                        GUINT_TO_POINTER(set + 1));
  }
  slot_key sk = {.cookie = cookie, .set = set};
  found = g_hash_table_lookup(t->slot_index, &sk);
  if (found)
    return (GPOINTER_TO_UINT(found) - 1) | TM_ASYNC_TRACK_BIT;
  slot_info info = {.key = sk, .name = merge && merge->nameless ? 0 : row->name};
  tm_vec_push(&t->slots, info);
  uint32_t slot = (uint32_t)(t->slots.len - 1);
  g_hash_table_insert(t->slot_index, g_memdup2(&sk, sizeof sk),
                      GUINT_TO_POINTER(slot + 1));
  return slot | TM_ASYNC_TRACK_BIT;
}

bool async_tracks_is_slot(const tm_async_tracks *t, uint32_t id) {
  return (id & TM_ASYNC_TRACK_BIT) &&
         (id & ~TM_ASYNC_TRACK_BIT) < t->slots.len;
}

uint32_t async_tracks_trace_id(const tm_async_tracks *t, uint32_t id) {
  const slot_info *slot = &t->slots.data[id & ~TM_ASYNC_TRACK_BIT];
  return t->sets.data[slot->key.set].key.trace_id;
}

/* The set's track of `cookie`: the one holding it, else the first with
 * nothing open (adopted), else a new one. */
static set_track *track_for_cookie(async_set *set, uint64_t cookie) {
  for (size_t i = 0; i < set->tracks.len; i++)
    if (set->tracks.data[i].cookie == cookie)
      return &set->tracks.data[i];
  for (size_t i = 0; i < set->tracks.len; i++) {
    if (set->tracks.data[i].open == 0) {
      set->tracks.data[i].cookie = cookie;
      return &set->tracks.data[i];
    }
  }
  set_track fresh = {.cookie = cookie, .open = 0, .track_id = TM_NULL_ID};
  tm_vec_push(&set->tracks, fresh);
  return &set->tracks.data[set->tracks.len - 1];
}

static uint32_t resolve_parent(tm_async_tracks *t, tm_model *model, async_set *set);

/* A new track of `set`, for an event of `slot`: named and given source
 * args by the slot; its parent is made first, so it has the smaller id. */
static uint32_t make_track(tm_async_tracks *t, tm_model *model, uint32_t set_index,
                           const slot_info *slot) {
  /* The parent (and its set's group id) first, as trace_processor interns
   * a parent before its child. */
  uint32_t parent = resolve_parent(t, model, &t->sets.data[set_index]);
  async_set *set = &t->sets.data[set_index];
  if (set->group_id == TM_NULL_ID)
    set->group_id = t->next_group_id++;
  tm_track_row row = {
      .name = slot ? slot->name : set->key.name,
      .type = set->key.type,
      .dimension_arg_set_id = 0, /* written by import_finish_tracks() */
      .parent_id = parent,
      .source_arg_set_id = slot ? slot->source_args : 0,
      .machine_id = set->key.machine_id,
      .track_group_id = set->group_id,
      .event_type = (uint8_t)set->key.event_type,
      .utid = set->key.utid,
      .upid = set->key.upid,
      .trace_id = set->key.trace_id,
      .dimension_scope = set->key.scope,
  };
  tm_vec_push(&model->tracks, row);
  return (uint32_t)(model->tracks.len - 1);
}

/* The first track of the set of slot `slot_index`, made for cookie 0
 * (nothing open: the next cookie adopts it) when the set has none yet;
 * named after that slot, as trace_processor names the parent's first track
 * after the parent's descriptor. */
static uint32_t default_track(tm_async_tracks *t, tm_model *model, uint32_t slot_index) {
  uint32_t set_index = t->slots.data[slot_index].key.set;
  async_set *set = &t->sets.data[set_index];
  if (set->tracks.len == 0) {
    set_track fresh = {.cookie = 0, .open = 0, .track_id = TM_NULL_ID};
    tm_vec_push(&set->tracks, fresh);
  }
  if (set->tracks.data[0].track_id == TM_NULL_ID) {
    uint32_t id = make_track(t, model, set_index, &t->slots.data[slot_index]);
    t->sets.data[set_index].tracks.data[0].track_id = id;
  }
  return t->sets.data[set_index].tracks.data[0].track_id;
}

/* The parent_id of a new track of `set`: a slot stands for its set's
 * first track. A chain of sets that loops back (only a reader setting
 * parents by hand can make one) ends without a parent. */
static uint32_t resolve_parent(tm_async_tracks *t, tm_model *model, async_set *set) {
  uint32_t parent = set->parent;
  if (parent == TM_NULL_ID || !(parent & TM_ASYNC_TRACK_BIT))
    return parent;
  if (!async_tracks_is_slot(t, parent))
    return TM_NULL_ID;
  uint32_t slot_index = parent & ~TM_ASYNC_TRACK_BIT;
  uint32_t set_index = (uint32_t)(set - t->sets.data);
  uint32_t parent_set = t->slots.data[slot_index].key.set;
  if (parent_set == set_index || t->sets.data[parent_set].resolving_parent)
    return TM_NULL_ID;
  set->resolving_parent = true;
  uint32_t id = default_track(t, model, slot_index);
  t->sets.data[set_index].resolving_parent = false;
  return id;
}

void async_tracks_set_parent(tm_async_tracks *t, uint32_t slot_id, uint32_t parent) {
  if (!async_tracks_is_slot(t, slot_id) || parent == slot_id)
    return;
  t->sets.data[t->slots.data[slot_id & ~TM_ASYNC_TRACK_BIT].key.set].parent = parent;
}

uint32_t *async_tracks_source_args(tm_async_tracks *t, uint32_t slot_id) {
  if (!async_tracks_is_slot(t, slot_id))
    return NULL;
  return &t->slots.data[slot_id & ~TM_ASYNC_TRACK_BIT].source_args;
}

uint32_t async_tracks_default(tm_async_tracks *t, tm_model *model, uint32_t slot_id) {
  if (!async_tracks_is_slot(t, slot_id))
    return TM_NULL_ID;
  return default_track(t, model, slot_id & ~TM_ASYNC_TRACK_BIT);
}

void async_tracks_finish_parents(tm_async_tracks *t, tm_model *model) {
  /* Tracks made here are appended and checked too; their parents are
   * never slots (make_track resolves them). */
  for (size_t i = 0; i < model->tracks.len; i++) {
    uint32_t parent = model->tracks.data[i].parent_id;
    if (parent == TM_NULL_ID || !(parent & TM_ASYNC_TRACK_BIT))
      continue;
    model->tracks.data[i].parent_id = async_tracks_default(t, model, parent);
  }
}

uint32_t async_tracks_resolve(tm_async_tracks *t, tm_model *model,
                              uint32_t slot_id, tm_async_use use) {
  const slot_info *slot = &t->slots.data[slot_id & ~TM_ASYNC_TRACK_BIT];
  uint32_t set_index = slot->key.set;
  async_set *set = &t->sets.data[set_index];
  set_track *track = track_for_cookie(set, slot->key.cookie);
  switch (use) {
  case TM_ASYNC_BEGIN:
    track->open = set->unnestable ? 1 : track->open + 1;
    break;
  case TM_ASYNC_END:
    if (track->open > 0)
      track->open--;
    break;
  case TM_ASYNC_INSTANT:
  case TM_ASYNC_BIND:
    break;
  }
  if (track->track_id == TM_NULL_ID) {
    /* make_track may make the parent set's first track (another set's
     * vector), never grow this one: `track` stays valid. */
    size_t index = (size_t)(track - set->tracks.data);
    uint32_t id = make_track(t, model, set_index, slot);
    t->sets.data[set_index].tracks.data[index].track_id = id;
    return id;
  }
  return track->track_id;
}
