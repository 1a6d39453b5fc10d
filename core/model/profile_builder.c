/*
 * Profiling rows of the model: interning of mappings, frames and callsites
 * (an index of row ids per kind, the keys read from the rows) and the
 * sample rows the merged stream produces.
 *
 * Invariant: the index maps every key to the id of the one row holding
 * exactly those fields, so a row is never created twice; rows are only
 * appended, so ids stay valid.
 */
#include "model/profile_builder.h"

#include <glib.h>
#include <string.h>

/* One interning index per kind of row (tm_profile_index, model.h): at
 * most half full, each key read back from its row. A GHashTable of
 * 48-byte keys, each copied to the heap, took ~560 instructions a new
 * callsite (callgrind, realistic TrackEvent trace); this allocates
 * nothing per row. */
typedef tm_profile_index profile_index;
enum { INDEX_MAPPINGS, INDEX_FRAMES, INDEX_CALLSITES };

static uint64_t mix(uint64_t h, uint64_t w) {
  h = (h ^ w) * 0xff51afd7ed558ccdu;
  return h ^ (h >> 32);
}

static uint64_t mapping_hash(const tm_stack_profile_mapping_row *r) {
  uint64_t h = mix(0x9e3779b97f4a7c15u, (uint64_t)r->name << 32 | r->build_id);
  h = mix(h, (uint64_t)r->start);
  h = mix(h, (uint64_t)r->end);
  h = mix(h, (uint64_t)r->exact_offset);
  return mix(h, (uint64_t)r->load_bias);
}

static bool mapping_equal(const tm_stack_profile_mapping_row *a,
                          const tm_stack_profile_mapping_row *b) {
  return a->name == b->name && a->build_id == b->build_id && a->start == b->start &&
         a->end == b->end && a->exact_offset == b->exact_offset &&
         a->load_bias == b->load_bias;
}

static uint64_t frame_hash(const tm_stack_profile_frame_row *r) {
  return mix(mix(0x9e3779b97f4a7c15u, (uint64_t)r->name << 32 | r->mapping),
             (uint64_t)r->rel_pc);
}

static bool frame_equal(const tm_stack_profile_frame_row *a,
                        const tm_stack_profile_frame_row *b) {
  return a->name == b->name && a->mapping == b->mapping && a->rel_pc == b->rel_pc;
}

static uint64_t callsite_hash(const tm_stack_profile_callsite_row *r) {
  return mix(0x9e3779b97f4a7c15u, (uint64_t)r->parent_id << 32 | r->frame_id);
}

static bool callsite_equal(const tm_stack_profile_callsite_row *a,
                           const tm_stack_profile_callsite_row *b) {
  return a->parent_id == b->parent_id && a->frame_id == b->frame_id;
}

/* The id of the row of `vec` equal to `key`, or else TM_NULL_ID with
 * *slot_out the empty slot it would take; grows the index first so that
 * one more row keeps it at most half full. `vec` holds the model's rows of
 * the kind, `hash` and `equal` read the key from a row. Written as a
 * macro so that each kind's hash and comparison are inlined. */
#define PROFILE_FIND(index, vec, key, hash, equal, slot_out)                        \
  do {                                                                             \
    if (((index)->len + 1) * 2 > (index)->cap) {                                   \
      size_t cap_ = (index)->cap ? (index)->cap * 2 : 64;                          \
      uint32_t *slots_ = g_new0(uint32_t, cap_);                                   \
      for (size_t r_ = 0; r_ < (vec)->len; r_++) {                                 \
        size_t i_ = (size_t)hash(&(vec)->data[r_]) & (cap_ - 1);                   \
        while (slots_[i_])                                                         \
          i_ = (i_ + 1) & (cap_ - 1);                                              \
        slots_[i_] = (uint32_t)r_ + 1;                                             \
      }                                                                            \
      g_free((index)->slots);                                                      \
      (index)->slots = slots_;                                                     \
      (index)->cap = cap_;                                                         \
    }                                                                              \
    size_t mask_ = (index)->cap - 1;                                               \
    size_t i_ = (size_t)hash(key) & mask_;                                         \
    found = TM_NULL_ID;                                                            \
    for (; (index)->slots[i_]; i_ = (i_ + 1) & mask_) {                            \
      uint32_t id_ = (index)->slots[i_] - 1;                                       \
      if (equal(&(vec)->data[id_], key)) {                                         \
        found = id_;                                                               \
        break;                                                                     \
      }                                                                            \
    }                                                                              \
    *(slot_out) = &(index)->slots[i_];                                             \
  } while (0)

int profile_table_by_name(const char *table) {
  if (table && strcmp(table, "cpu_profile_stack_sample") == 0)
    return PROFILE_TABLE_CPU_PROFILE;
  if (table && strcmp(table, "instruments_sample") == 0)
    return PROFILE_TABLE_INSTRUMENTS;
  if (table && strcmp(table, "perf_sample") == 0)
    return PROFILE_TABLE_PERF;
  return -1;
}

uint32_t profile_intern_mapping(tm_model *model, tm_str_id name,
                                tm_str_id build_id, uint64_t start,
                                uint64_t end, uint64_t exact_offset,
                                uint64_t load_bias) {
  tm_stack_profile_mapping_row row = {
      .build_id = build_id,
      .exact_offset = (int64_t)exact_offset,
      .start_offset = 0,
      .start = (int64_t)start,
      .end = (int64_t)end,
      .load_bias = (int64_t)load_bias,
      .name = name,
  };
  profile_index *index = &model->profile_rows[INDEX_MAPPINGS];
  uint32_t found, *slot;
  PROFILE_FIND(index, &model->stack_profile_mappings, &row, mapping_hash, mapping_equal,
               &slot);
  if (found != TM_NULL_ID)
    return found;
  tm_vec_push(&model->stack_profile_mappings, row);
  uint32_t id = (uint32_t)(model->stack_profile_mappings.len - 1);
  *slot = id + 1;
  index->len++;
  return id;
}

uint32_t profile_intern_frame(tm_model *model, tm_str_id name,
                              uint32_t mapping_id, uint64_t rel_pc) {
  if (mapping_id != TM_NULL_ID &&
      mapping_id >= model->stack_profile_mappings.len)
    mapping_id = TM_NULL_ID;
  tm_stack_profile_frame_row row = {
      .name = name,
      .mapping = mapping_id,
      .rel_pc = (int64_t)rel_pc,
  };
  profile_index *index = &model->profile_rows[INDEX_FRAMES];
  uint32_t found, *slot;
  PROFILE_FIND(index, &model->stack_profile_frames, &row, frame_hash, frame_equal, &slot);
  if (found != TM_NULL_ID)
    return found;
  tm_vec_push(&model->stack_profile_frames, row);
  uint32_t id = (uint32_t)(model->stack_profile_frames.len - 1);
  *slot = id + 1;
  index->len++;
  return id;
}

uint32_t profile_intern_callsite(tm_model *model, uint32_t parent_id,
                                 uint32_t frame_id) {
  if (frame_id >= model->stack_profile_frames.len)
    return TM_NULL_ID;
  if (parent_id != TM_NULL_ID &&
      parent_id >= model->stack_profile_callsites.len)
    return TM_NULL_ID;
  tm_stack_profile_callsite_row row = {
      .depth = parent_id == TM_NULL_ID
                   ? 0
                   : model->stack_profile_callsites.data[parent_id].depth + 1,
      .parent_id = parent_id,
      .frame_id = frame_id,
  };
  profile_index *index = &model->profile_rows[INDEX_CALLSITES];
  uint32_t found, *slot;
  PROFILE_FIND(index, &model->stack_profile_callsites, &row, callsite_hash, callsite_equal,
               &slot);
  if (found != TM_NULL_ID)
    return found;
  tm_vec_push(&model->stack_profile_callsites, row);
  uint32_t id = (uint32_t)(model->stack_profile_callsites.len - 1);
  *slot = id + 1;
  index->len++;
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
