/*
 * Lookup structures over the model's rows that trace_processor's SQL
 * functions need and the row arrays do not give: the children of a slice,
 * the flows leaving and entering a slice, the rows of an arg set, and a
 * slice's stack hash. Each is built on first use in one pass (counting
 * sort, O(rows)) and kept until model_index_free(); the model is borrowed
 * and must not change meanwhile (the SQL surface's rule).
 *
 * Every list is a CSR pair: for key k, ids[first[k] .. first[k + 1]) in
 * increasing id.
 */
#ifndef TM_MODEL_INDEX_H
#define TM_MODEL_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

typedef struct tm_model_index tm_model_index;

tm_model_index *model_index_new(const tm_model *model);
void model_index_free(tm_model_index *index);
const tm_model *model_index_model(const tm_model_index *index);

/* The ids of the direct children of slice `id` (sorted); n = 0 if none or
 * if `id` is no slice. */
const uint32_t *model_index_slice_children(tm_model_index *index, uint32_t id,
                                           size_t *n);

/* Flow row ids whose slice_out (resp. slice_in) is slice `id`. */
const uint32_t *model_index_flows_out(tm_model_index *index, uint32_t id,
                                      size_t *n);
const uint32_t *model_index_flows_in(tm_model_index *index, uint32_t id,
                                     size_t *n);

/* Rows of model->args in set `arg_set_id`, in row order. */
const uint32_t *model_index_arg_set(tm_model_index *index, uint32_t arg_set_id,
                                    size_t *n);

/* The stack hash of slice `id` (the slices.stack module's stack_id:
 * HASH of the '|'-joined HASH(coalesce(category, '') || '|' || name) of the
 * slice and its ancestors, root first); 0 for no slice. */
int64_t model_index_slice_stack_id(tm_model_index *index, uint32_t id);

/* Slice ids whose stack hash is `stack_id`, in increasing id. */
const uint32_t *model_index_slices_with_stack(tm_model_index *index,
                                              int64_t stack_id, size_t *n);

/* FNV-1a 64 as trace_processor's HASH() computes it: bytes of text,
 * integers as their 8 little-endian bytes. */
#define TM_FNV_OFFSET UINT64_C(0xcbf29ce484222325)
uint64_t tm_fnv_update(uint64_t hash, const void *bytes, size_t len);

#endif /* TM_MODEL_INDEX_H */
