/*
 * Lazy CSR indexes over the model (see model_index.h).
 */
#include "sql/model_index.h"

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct csr {
  uint32_t *first; /* n_keys + 1 entries */
  uint32_t *ids;
  size_t n_keys;
  bool built;
} csr;

typedef struct stack_entry {
  int64_t stack_id;
  uint32_t slice_id;
} stack_entry;

struct tm_model_index {
  const tm_model *model;
  csr children;
  csr flows_out;
  csr flows_in;
  csr arg_sets;
  int64_t *stack_ids; /* per slice, computed with the children index */
  stack_entry *by_stack; /* sorted by (stack_id, slice_id) */
  uint32_t *by_stack_ids;
};

uint64_t tm_fnv_update(uint64_t hash, const void *bytes, size_t len) {
  const unsigned char *p = bytes;
  for (size_t i = 0; i < len; i++) {
    hash ^= p[i];
    hash *= UINT64_C(0x100000001b3);
  }
  return hash;
}

tm_model_index *model_index_new(const tm_model *model) {
  tm_model_index *index = g_new0(tm_model_index, 1);
  index->model = model;
  return index;
}

static void csr_free(csr *c) {
  g_free(c->first);
  g_free(c->ids);
}

void model_index_free(tm_model_index *index) {
  if (!index)
    return;
  csr_free(&index->children);
  csr_free(&index->flows_out);
  csr_free(&index->flows_in);
  csr_free(&index->arg_sets);
  g_free(index->stack_ids);
  g_free(index->by_stack);
  g_free(index->by_stack_ids);
  g_free(index);
}

const tm_model *model_index_model(const tm_model_index *index) {
  return index->model;
}

/* Builds `c` from key(i) for rows i < n (UINT32_MAX keys skipped). */
typedef uint32_t (*key_fn)(const tm_model *model, size_t row);

/* `keys`, if given, holds every row's key instead of `key`. */
static void csr_build(csr *c, const tm_model *model, size_t n_rows,
                      size_t n_keys, key_fn key, const uint32_t *keys) {
  c->n_keys = n_keys;
  c->first = g_new0(uint32_t, n_keys + 2);
  size_t total = 0;
  for (size_t i = 0; i < n_rows; i++) {
    uint32_t k = keys ? keys[i] : key(model, i);
    if (k < n_keys) {
      c->first[k + 2]++;
      total++;
    }
  }
  for (size_t k = 2; k < n_keys + 2; k++)
    c->first[k] += c->first[k - 1];
  c->ids = g_new(uint32_t, total ? total : 1);
  for (size_t i = 0; i < n_rows; i++) {
    uint32_t k = keys ? keys[i] : key(model, i);
    if (k < n_keys)
      c->ids[c->first[k + 1]++] = (uint32_t)i;
  }
  c->built = true;
}

static const uint32_t *csr_get(const csr *c, uint32_t key, size_t *n) {
  if (key >= c->n_keys) {
    *n = 0;
    return c->ids;
  }
  *n = c->first[key + 1] - c->first[key];
  return c->ids + c->first[key];
}

static uint32_t slice_parent(const tm_model *model, size_t row) {
  return model->slices.data[row].parent_id;
}

static uint32_t flow_out(const tm_model *model, size_t row) {
  return model->flows.data[row].slice_out;
}

static uint32_t flow_in(const tm_model *model, size_t row) {
  return model->flows.data[row].slice_in;
}

const uint32_t *model_index_slice_children(tm_model_index *index, uint32_t id,
                                           size_t *n) {
  if (!index->children.built)
    csr_build(&index->children, index->model, index->model->slices.len,
              index->model->slices.len, slice_parent, NULL);
  return csr_get(&index->children, id, n);
}

const uint32_t *model_index_flows_out(tm_model_index *index, uint32_t id,
                                      size_t *n) {
  if (!index->flows_out.built)
    csr_build(&index->flows_out, index->model, index->model->flows.len,
              index->model->slices.len, flow_out, NULL);
  return csr_get(&index->flows_out, id, n);
}

const uint32_t *model_index_flows_in(tm_model_index *index, uint32_t id,
                                     size_t *n) {
  if (!index->flows_in.built)
    csr_build(&index->flows_in, index->model, index->model->flows.len,
              index->model->slices.len, flow_in, NULL);
  return csr_get(&index->flows_in, id, n);
}

const uint32_t *model_index_arg_set(tm_model_index *index, uint32_t arg_set_id,
                                    size_t *n) {
  if (!index->arg_sets.built) {
    uint32_t *sets = model_arg_set_ids_new(index->model);
    csr_build(&index->arg_sets, index->model, index->model->args.len,
              (size_t)index->model->next_arg_set_id + 1, NULL, sets);
    g_free(sets);
  }
  return csr_get(&index->arg_sets, arg_set_id, n);
}

/* HASH(coalesce(category, '') || '|' || name) of one slice. A NULL name
 * makes the concatenation NULL, which the module's group_concat skips. */
static bool frame_hash(const tm_model *model, uint32_t slice_id, char out[24]) {
  const char *name = string_pool_borrow(model->strings, model->slices.data[slice_id].name);
  if (!name)
    return false;
  const char *cat = string_pool_borrow(model->strings, model_slice_category(model, slice_id));
  uint64_t h = TM_FNV_OFFSET;
  if (cat)
    h = tm_fnv_update(h, cat, strlen(cat));
  h = tm_fnv_update(h, "|", 1);
  h = tm_fnv_update(h, name, strlen(name));
  snprintf(out, 24, "%" PRId64, (int64_t)h);
  return true;
}

static int compare_stack_entries(const void *a, const void *b) {
  const stack_entry *x = a, *y = b;
  if (x->stack_id != y->stack_id)
    return x->stack_id < y->stack_id ? -1 : 1;
  return x->slice_id < y->slice_id ? -1 : x->slice_id > y->slice_id;
}

/* One walk from each root down the children index: the running text of
 * joined frame hashes is extended per level, so the cost is O(slices x
 * depth) bytes hashed. */
static void build_stack_ids(tm_model_index *index) {
  const tm_model *model = index->model;
  size_t n = model->slices.len;
  index->stack_ids = g_new0(int64_t, n ? n : 1);
  GString *joined = g_string_new(NULL);
  /* Explicit stack of (slice id, length of `joined` before it). */
  typedef struct frame {
    uint32_t id;
    size_t prefix_len;
  } frame;
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(frame));
  for (size_t root = 0; root < n; root++) {
    if (model->slices.data[root].parent_id != TM_NULL_ID &&
        model->slices.data[root].parent_id < n)
      continue;
    frame f = {(uint32_t)root, 0};
    g_string_truncate(joined, 0);
    g_array_append_val(stack, f);
    while (stack->len) {
      frame cur = g_array_index(stack, frame, stack->len - 1);
      g_array_set_size(stack, stack->len - 1);
      g_string_truncate(joined, cur.prefix_len);
      char part[24];
      if (frame_hash(model, cur.id, part)) {
        if (joined->len)
          g_string_append_c(joined, '|');
        g_string_append(joined, part);
      }
      uint64_t h = tm_fnv_update(TM_FNV_OFFSET, joined->str, joined->len);
      /* group_concat of no rows is NULL, and HASH(NULL) fails: the module
       * then coalesces to 0. */
      index->stack_ids[cur.id] = joined->len ? (int64_t)h : 0;
      size_t n_children;
      const uint32_t *children =
          model_index_slice_children(index, cur.id, &n_children);
      for (size_t i = n_children; i-- > 0;) {
        frame child = {children[i], joined->len};
        g_array_append_val(stack, child);
      }
    }
  }
  g_array_free(stack, TRUE);
  g_string_free(joined, TRUE);

  index->by_stack = g_new(stack_entry, n ? n : 1);
  for (size_t i = 0; i < n; i++)
    index->by_stack[i] = (stack_entry){index->stack_ids[i], (uint32_t)i};
  qsort(index->by_stack, n, sizeof *index->by_stack, compare_stack_entries);
  index->by_stack_ids = g_new(uint32_t, n ? n : 1);
  for (size_t i = 0; i < n; i++)
    index->by_stack_ids[i] = index->by_stack[i].slice_id;
}

int64_t model_index_slice_stack_id(tm_model_index *index, uint32_t id) {
  if (id >= index->model->slices.len)
    return 0;
  if (!index->stack_ids)
    build_stack_ids(index);
  return index->stack_ids[id];
}

const uint32_t *model_index_slices_with_stack(tm_model_index *index,
                                              int64_t stack_id, size_t *n) {
  size_t len = index->model->slices.len;
  if (!index->stack_ids)
    build_stack_ids(index);
  size_t lo = 0, hi = len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (index->by_stack[mid].stack_id < stack_id)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t end = lo;
  while (end < len && index->by_stack[end].stack_id == stack_id)
    end++;
  *n = end - lo;
  return index->by_stack_ids + lo;
}
