/*
 * Profiling rows: binary mappings, frames and callsites (identity rows,
 * interned at the reader's call) and stack samples (events placed on the
 * merged timeline).
 *
 * Invariants: a mapping is interned by all its fields, a frame by (name,
 * mapping, rel_pc), a callsite by (parent, frame), across the session; a
 * callsite's depth is its parent's depth + 1 (0 for an outermost frame).
 * Sample rows are appended in merged trace-time order, so their ids follow
 * the timeline.
 *
 * TM_EVENT_SAMPLE payload in tm_event (36 bytes, see event.h):
 *   ts           sample time (raw, then trace time)
 *   u.dur_ns     cpu number, -1 if unknown
 *   track_id     utid of the sampled thread
 *   name_id      callsite id + 1, 0 for a sample without a stack
 *   category_id  PROFILE_TABLE_* : which sample table receives the row
 */
#ifndef TM_PROFILE_BUILDER_H
#define TM_PROFILE_BUILDER_H

#include <stdint.h>

#include "model/event.h"
#include "model/model.h"

enum {
  PROFILE_TABLE_CPU_PROFILE = 0, /* cpu_profile_stack_sample */
  PROFILE_TABLE_INSTRUMENTS = 1, /* instruments_sample */
  PROFILE_TABLE_PERF = 2,        /* perf_sample */
};

/* The PROFILE_TABLE_* of the sample table called `table`, or -1. */
int profile_table_by_name(const char *table);

/* Row ids of the interned rows (created on first use). `mapping_id` may be
 * TM_NULL_ID; `parent_id` TM_NULL_ID for an outermost frame. Returns
 * TM_NULL_ID if `frame_id` or `parent_id` names no row. */
uint32_t profile_intern_mapping(tm_model *model, tm_str_id name,
                                tm_str_id build_id, uint64_t start,
                                uint64_t end, uint64_t exact_offset,
                                uint64_t load_bias);
uint32_t profile_intern_frame(tm_model *model, tm_str_id name,
                              uint32_t mapping_id, uint64_t rel_pc);
uint32_t profile_intern_callsite(tm_model *model, uint32_t parent_id,
                                 uint32_t frame_id);

/* Appends the sample row a merged TM_EVENT_SAMPLE describes. */
void profile_builder_push_sample(tm_model *model, const tm_event *ev);

#endif /* TM_PROFILE_BUILDER_H */
