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
  uint32_t group_id; /* TM_NULL_ID until first resolved */
  TM_VEC(set_track) tracks;
} async_set;

typedef struct slot_key {
  uint64_t cookie;
  uint32_t set;
  uint32_t pad;
} slot_key;

struct tm_async_tracks {
  TM_VEC(async_set) sets;
  TM_VEC(slot_key) slots;  /* by slot index */
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
                           bool unnestable, uint64_t cookie) {
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
  gpointer found = g_hash_table_lookup(t->set_index, &key);
  uint32_t set;
  if (found) {
    set = GPOINTER_TO_UINT(found) - 1;
  } else {
    async_set fresh = {.key = key, .unnestable = unnestable,
                       .group_id = TM_NULL_ID};
    tm_vec_push(&t->sets, fresh);
    set = (uint32_t)(t->sets.len - 1);
    g_hash_table_insert(t->set_index, g_memdup2(&key, sizeof key),
                        GUINT_TO_POINTER(set + 1));
  }
  slot_key sk = {.cookie = cookie, .set = set};
  found = g_hash_table_lookup(t->slot_index, &sk);
  if (found)
    return (GPOINTER_TO_UINT(found) - 1) | TM_ASYNC_TRACK_BIT;
  tm_vec_push(&t->slots, sk);
  uint32_t slot = (uint32_t)(t->slots.len - 1);
  g_hash_table_insert(t->slot_index, g_memdup2(&sk, sizeof sk),
                      GUINT_TO_POINTER(slot + 1));
  return slot | TM_ASYNC_TRACK_BIT;
}

bool async_tracks_is_slot(const tm_async_tracks *t, uint32_t id) {
  return (id & TM_ASYNC_TRACK_BIT) &&
         (id & ~TM_ASYNC_TRACK_BIT) < t->slots.len;
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

static uint32_t make_track(tm_async_tracks *t, tm_model *model, async_set *set) {
  if (set->group_id == TM_NULL_ID)
    set->group_id = t->next_group_id++;
  tm_track_row row = {
      .name = set->key.name,
      .type = set->key.type,
      .dimension_arg_set_id = 0, /* written by import_finish_tracks() */
      .parent_id = TM_NULL_ID,
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

uint32_t async_tracks_resolve(tm_async_tracks *t, tm_model *model,
                              uint32_t slot_id, tm_async_use use) {
  const slot_key *sk = &t->slots.data[slot_id & ~TM_ASYNC_TRACK_BIT];
  async_set *set = &t->sets.data[sk->set];
  if (set->group_id == TM_NULL_ID)
    set->group_id = t->next_group_id++;
  set_track *track = track_for_cookie(set, sk->cookie);
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
  if (track->track_id == TM_NULL_ID)
    track->track_id = make_track(t, model, set);
  return track->track_id;
}
