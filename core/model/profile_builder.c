/*
 * Profiling rows of the model: interning of mappings, frames and callsites
 * (one hash table keyed by a tagged fixed-size key) and the sample rows the
 * merged stream produces.
 *
 * Invariant: the index maps every key to the id of the one row holding
 * exactly those fields, so a row is never created twice; rows are only
 * appended, so ids stay valid.
 */
#include "model/profile_builder.h"

#include <glib.h>
#include <string.h>

enum { KEY_MAPPING = 1, KEY_FRAME = 2, KEY_CALLSITE = 3 };

typedef struct profile_key {
  uint32_t kind;
  uint32_t a, b, pad;
  uint64_t c, d, e, f;
} profile_key;

_Static_assert(sizeof(profile_key) % sizeof(uint64_t) == 0,
               "profile_key is hashed a 64-bit word at a time");

/* A word at a time, each mixed by a multiply and a shift: hashing the 48
 * bytes one by one (FNV-1a) was 3.9% of a realistic TrackEvent import's
 * instructions (callgrind, 200k packets, one lookup per callsite and
 * frame). Keys are built from a memset, so `pad` hashes as zero. */
static guint profile_key_hash(gconstpointer p) {
  const uint8_t *b = p;
  uint64_t h = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < sizeof(profile_key); i += sizeof(uint64_t)) {
    uint64_t w;
    memcpy(&w, b + i, sizeof w);
    h = (h ^ w) * 0xff51afd7ed558ccdu;
    h ^= h >> 32;
  }
  return (guint)(h ^ (h >> 29));
}

static gboolean profile_key_equal(gconstpointer a, gconstpointer b) {
  return memcmp(a, b, sizeof(profile_key)) == 0;
}

int profile_table_by_name(const char *table) {
  if (table && strcmp(table, "cpu_profile_stack_sample") == 0)
    return PROFILE_TABLE_CPU_PROFILE;
  if (table && strcmp(table, "instruments_sample") == 0)
    return PROFILE_TABLE_INSTRUMENTS;
  if (table && strcmp(table, "perf_sample") == 0)
    return PROFILE_TABLE_PERF;
  return -1;
}

/* The model's interning index of profiling rows (profile_key -> row id +
 * 1), created here on first use; the model frees it as any hash table. */
static GHashTable *index_of(tm_model *model) {
  if (!model->profile_rows)
    model->profile_rows = g_hash_table_new_full(profile_key_hash,
                                                profile_key_equal, g_free, NULL);
  return model->profile_rows;
}

/* The id stored for `key`, or TM_NULL_ID. */
static uint32_t lookup(tm_model *model, const profile_key *key) {
  gpointer found = g_hash_table_lookup(index_of(model), key);
  return found ? GPOINTER_TO_UINT(found) - 1 : TM_NULL_ID;
}

static void remember(tm_model *model, const profile_key *key, uint32_t id) {
  g_hash_table_insert(index_of(model), g_memdup2(key, sizeof *key),
                      GUINT_TO_POINTER(id + 1));
}

uint32_t profile_intern_mapping(tm_model *model, tm_str_id name,
                                tm_str_id build_id, uint64_t start,
                                uint64_t end, uint64_t exact_offset,
                                uint64_t load_bias) {
  profile_key key;
  memset(&key, 0, sizeof key);
  key.kind = KEY_MAPPING;
  key.a = name;
  key.b = build_id;
  key.c = start;
  key.d = end;
  key.e = exact_offset;
  key.f = load_bias;
  uint32_t id = lookup(model, &key);
  if (id != TM_NULL_ID)
    return id;
  tm_stack_profile_mapping_row row = {
      .build_id = build_id,
      .exact_offset = (int64_t)exact_offset,
      .start_offset = 0,
      .start = (int64_t)start,
      .end = (int64_t)end,
      .load_bias = (int64_t)load_bias,
      .name = name,
  };
  tm_vec_push(&model->stack_profile_mappings, row);
  id = (uint32_t)(model->stack_profile_mappings.len - 1);
  remember(model, &key, id);
  return id;
}

uint32_t profile_intern_frame(tm_model *model, tm_str_id name,
                              uint32_t mapping_id, uint64_t rel_pc) {
  if (mapping_id != TM_NULL_ID &&
      mapping_id >= model->stack_profile_mappings.len)
    mapping_id = TM_NULL_ID;
  profile_key key;
  memset(&key, 0, sizeof key);
  key.kind = KEY_FRAME;
  key.a = name;
  key.b = mapping_id;
  key.c = rel_pc;
  uint32_t id = lookup(model, &key);
  if (id != TM_NULL_ID)
    return id;
  tm_stack_profile_frame_row row = {
      .name = name,
      .mapping = mapping_id,
      .rel_pc = (int64_t)rel_pc,
  };
  tm_vec_push(&model->stack_profile_frames, row);
  id = (uint32_t)(model->stack_profile_frames.len - 1);
  remember(model, &key, id);
  return id;
}

uint32_t profile_intern_callsite(tm_model *model, uint32_t parent_id,
                                 uint32_t frame_id) {
  if (frame_id >= model->stack_profile_frames.len)
    return TM_NULL_ID;
  if (parent_id != TM_NULL_ID &&
      parent_id >= model->stack_profile_callsites.len)
    return TM_NULL_ID;
  profile_key key;
  memset(&key, 0, sizeof key);
  key.kind = KEY_CALLSITE;
  key.a = parent_id;
  key.b = frame_id;
  uint32_t id = lookup(model, &key);
  if (id != TM_NULL_ID)
    return id;
  tm_stack_profile_callsite_row row = {
      .depth = parent_id == TM_NULL_ID
                   ? 0
                   : model->stack_profile_callsites.data[parent_id].depth + 1,
      .parent_id = parent_id,
      .frame_id = frame_id,
  };
  tm_vec_push(&model->stack_profile_callsites, row);
  id = (uint32_t)(model->stack_profile_callsites.len - 1);
  remember(model, &key, id);
  return id;
}

void profile_builder_push_sample(tm_model *model, const tm_event *ev) {
  uint32_t callsite = ev->name_id ? ev->name_id - 1 : TM_NULL_ID;
  if (ev->category_id == PROFILE_TABLE_INSTRUMENTS) {
    tm_instruments_sample_row row = {
        .ts = ev->ts,
        .utid = ev->track_id,
        .callsite_id = callsite,
        .cpu = ev->u.dur_ns < 0 ? TM_NULL_INT64 : ev->u.dur_ns,
    };
    tm_vec_push(&model->instruments_samples, row);
    return;
  }
  if (ev->category_id == PROFILE_TABLE_PERF) {
    tm_perf_sample_row row = {
        .ts = ev->ts,
        .utid = ev->track_id,
        .callsite_id = callsite,
        .cpu = ev->u.dur_ns < 0 ? TM_NULL_INT64 : ev->u.dur_ns,
    };
    tm_vec_push(&model->perf_samples, row);
    return;
  }
  tm_cpu_profile_sample_row row = {
      .ts = ev->ts,
      .callsite_id = callsite,
      .utid = ev->track_id,
  };
  tm_vec_push(&model->cpu_profile_samples, row);
}
