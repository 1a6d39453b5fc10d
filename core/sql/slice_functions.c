/*
 * Slice and flow table functions (see slice_functions.h).
 */
#include "sql/slice_functions.h"

#include <glib.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "sql/model_index.h"

typedef enum walk_kind {
  WALK_ANCESTORS,
  WALK_DESCENDANTS,
  WALK_ANCESTORS_BY_STACK,
  WALK_DESCENDANTS_BY_STACK,
  WALK_FOLLOWING_FLOW,
  WALK_PRECEDING_FLOW,
  WALK_CONNECTED_FLOW,
} walk_kind;

typedef struct function_def {
  const char *name;
  walk_kind kind;
} function_def;

static const function_def functions[] = {
    {"ancestor_slice", WALK_ANCESTORS},
    {"descendant_slice", WALK_DESCENDANTS},
    {"ancestor_slice_by_stack", WALK_ANCESTORS_BY_STACK},
    {"descendant_slice_by_stack", WALK_DESCENDANTS_BY_STACK},
    {"following_flow", WALK_FOLLOWING_FLOW},
    {"preceding_flow", WALK_PRECEDING_FLOW},
    {"directly_connected_flow", WALK_CONNECTED_FLOW},
};

static bool returns_flows(walk_kind kind) {
  return kind >= WALK_FOLLOWING_FLOW;
}

/* Output columns; the last one is the hidden argument. */
enum {
  S_ID, S_TS, S_DUR, S_TRACK_ID, S_CATEGORY, S_NAME, S_DEPTH, S_PARENT_ID,
  S_ARG_SET_ID, S_THREAD_TS, S_THREAD_DUR, S_THREAD_INSTRUCTION_COUNT,
  S_THREAD_INSTRUCTION_DELTA, S_CAT, S_SLICE_ID, S_ARG
};
enum { F_ID, F_SLICE_OUT, F_SLICE_IN, F_TRACE_ID, F_ARG_SET_ID, F_ARG };

typedef struct walk_vtab {
  sqlite3_vtab base;
  tm_model_index *index;
  walk_kind kind;
} walk_vtab;

typedef struct walk_cursor {
  sqlite3_vtab_cursor base;
  GArray *ids; /* uint32 row ids, sorted */
  guint pos;
  sqlite3_int64 arg;
} walk_cursor;

typedef struct registration {
  tm_model_index *index;
  walk_kind kind;
} registration;

static int walk_connect(sqlite3 *db, void *aux, int argc,
                        const char *const *argv, sqlite3_vtab **out,
                        char **err) {
  (void)argc, (void)argv, (void)err;
  const registration *reg = aux;
  const char *schema;
  if (returns_flows(reg->kind))
    schema = "CREATE TABLE x(id INTEGER, slice_out INTEGER, slice_in INTEGER, "
             "trace_id INTEGER, arg_set_id INTEGER, start_id HIDDEN)";
  else if (reg->kind == WALK_ANCESTORS_BY_STACK ||
           reg->kind == WALK_DESCENDANTS_BY_STACK)
    schema = "CREATE TABLE x(id INTEGER, ts INTEGER, dur INTEGER, "
             "track_id INTEGER, category TEXT, name TEXT, depth INTEGER, "
             "parent_id INTEGER, arg_set_id INTEGER, thread_ts INTEGER, "
             "thread_dur INTEGER, thread_instruction_count INTEGER, "
             "thread_instruction_delta INTEGER, cat TEXT, slice_id INTEGER, "
             "start_stack_id HIDDEN)";
  else
    schema = "CREATE TABLE x(id INTEGER, ts INTEGER, dur INTEGER, "
             "track_id INTEGER, category TEXT, name TEXT, depth INTEGER, "
             "parent_id INTEGER, arg_set_id INTEGER, thread_ts INTEGER, "
             "thread_dur INTEGER, thread_instruction_count INTEGER, "
             "thread_instruction_delta INTEGER, cat TEXT, slice_id INTEGER, "
             "start_id HIDDEN)";
  int rc = sqlite3_declare_vtab(db, schema);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  walk_vtab *vtab = g_new0(walk_vtab, 1);
  vtab->index = reg->index;
  vtab->kind = reg->kind;
  *out = &vtab->base;
  return SQLITE_OK;
}

static int walk_disconnect(sqlite3_vtab *base) {
  g_free(base);
  return SQLITE_OK;
}

static int walk_best_index(sqlite3_vtab *base, sqlite3_index_info *info) {
  walk_vtab *vtab = (walk_vtab *)base;
  int arg_column = returns_flows(vtab->kind) ? F_ARG : S_ARG;
  bool seen = false;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->iColumn != arg_column)
      continue;
    seen = true;
    if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    info->aConstraintUsage[i].argvIndex = 1;
    info->aConstraintUsage[i].omit = 1;
    info->estimatedCost = 10;
    info->estimatedRows = 10;
    if (info->nOrderBy == 1 && !info->aOrderBy[0].desc &&
        info->aOrderBy[0].iColumn == 0)
      info->orderByConsumed = 1;
    return SQLITE_OK;
  }
  /* Without its argument the function has no rows to give: tell SQLite
   * that this plan is impossible, so it orders the join to bind it. */
  (void)seen;
  return SQLITE_CONSTRAINT;
}

static int walk_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out) {
  (void)base;
  walk_cursor *cur = g_new0(walk_cursor, 1);
  cur->ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  *out = &cur->base;
  return SQLITE_OK;
}

static int walk_close(sqlite3_vtab_cursor *base) {
  walk_cursor *cur = (walk_cursor *)base;
  g_array_free(cur->ids, TRUE);
  g_free(cur);
  return SQLITE_OK;
}

static int compare_ids(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static void sort_unique(GArray *ids) {
  if (ids->len < 2)
    return;
  qsort(ids->data, ids->len, sizeof(uint32_t), compare_ids);
  guint w = 1;
  uint32_t *a = (uint32_t *)(void *)ids->data;
  for (guint r = 1; r < ids->len; r++)
    if (a[r] != a[w - 1])
      a[w++] = a[r];
  g_array_set_size(ids, w);
}

static void add_ancestors(const tm_model *model, uint32_t id, GArray *out) {
  uint32_t p = model->slices.data[id].parent_id;
  while (p != TM_NULL_ID && p < model->slices.len) {
    g_array_append_val(out, p);
    p = model->slices.data[p].parent_id;
  }
}

/* Appends the descendants of `id` (not `id`) to `out`, depth first. */
static void add_descendants(tm_model_index *index, uint32_t id, GArray *out) {
  guint start = out->len;
  size_t n;
  const uint32_t *children = model_index_slice_children(index, id, &n);
  g_array_append_vals(out, children, (guint)n);
  for (guint i = start; i < out->len; i++) {
    uint32_t c = g_array_index(out, uint32_t, i);
    children = model_index_slice_children(index, c, &n);
    g_array_append_vals(out, children, (guint)n);
  }
}

/* Queues slice `t` unless it was reached before. */
static void visit(const tm_model *model, GHashTable *seen, GArray *queue,
                  uint32_t t) {
  if (t < model->slices.len && g_hash_table_add(seen, GUINT_TO_POINTER(t + 1)))
    g_array_append_val(queue, t);
}

/* The flows reached from `start` (see slice_functions.h), breadth first;
 * every slice is expanded once. */
static void walk_flows(tm_model_index *index, walk_kind kind, uint32_t start,
                       GArray *out) {
  const tm_model *model = model_index_model(index);
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  GArray *queue = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  visit(model, seen, queue, start);
  for (guint q = 0; q < queue->len; q++) {
    uint32_t s = g_array_index(queue, uint32_t, q);
    size_t n;
    const uint32_t *ids;
    if (kind != WALK_PRECEDING_FLOW) {
      ids = model_index_flows_out(index, s, &n);
      for (size_t i = 0; i < n; i++) {
        g_array_append_val(out, ids[i]);
        visit(model, seen, queue, model->flows.data[ids[i]].slice_in);
      }
    }
    if (kind != WALK_FOLLOWING_FLOW) {
      ids = model_index_flows_in(index, s, &n);
      for (size_t i = 0; i < n; i++) {
        g_array_append_val(out, ids[i]);
        visit(model, seen, queue, model->flows.data[ids[i]].slice_out);
      }
    }
    if (kind == WALK_FOLLOWING_FLOW) {
      ids = model_index_slice_children(index, s, &n);
      for (size_t i = 0; i < n; i++)
        visit(model, seen, queue, ids[i]);
    } else if (kind == WALK_PRECEDING_FLOW) {
      uint32_t p = model->slices.data[s].parent_id;
      if (p != TM_NULL_ID)
        visit(model, seen, queue, p);
    }
  }
  g_array_free(queue, TRUE);
  g_hash_table_destroy(seen);
}

static int walk_filter(sqlite3_vtab_cursor *base, int idx_num,
                       const char *idx_str, int argc, sqlite3_value **argv) {
  (void)idx_num, (void)idx_str;
  walk_cursor *cur = (walk_cursor *)base;
  walk_vtab *vtab = (walk_vtab *)base->pVtab;
  const tm_model *model = model_index_model(vtab->index);
  g_array_set_size(cur->ids, 0);
  cur->pos = 0;
  if (argc < 1 || sqlite3_value_type(argv[0]) != SQLITE_INTEGER)
    return SQLITE_OK; /* NULL or not an id: no rows */
  sqlite3_int64 arg = sqlite3_value_int64(argv[0]);
  cur->arg = arg;
  switch (vtab->kind) {
  case WALK_ANCESTORS_BY_STACK:
  case WALK_DESCENDANTS_BY_STACK: {
    size_t n;
    const uint32_t *ids = model_index_slices_with_stack(vtab->index, arg, &n);
    for (size_t i = 0; i < n; i++) {
      g_array_append_val(cur->ids, ids[i]);
      if (vtab->kind == WALK_ANCESTORS_BY_STACK)
        add_ancestors(model, ids[i], cur->ids);
      else
        add_descendants(vtab->index, ids[i], cur->ids);
    }
    break;
  }
  default: {
    if (arg < 0 || (uint64_t)arg >= model->slices.len)
      return SQLITE_OK;
    uint32_t id = (uint32_t)arg;
    if (vtab->kind == WALK_ANCESTORS)
      add_ancestors(model, id, cur->ids);
    else if (vtab->kind == WALK_DESCENDANTS)
      add_descendants(vtab->index, id, cur->ids);
    else
      walk_flows(vtab->index, vtab->kind, id, cur->ids);
    break;
  }
  }
  sort_unique(cur->ids);
  return SQLITE_OK;
}

static int walk_next(sqlite3_vtab_cursor *base) {
  ((walk_cursor *)base)->pos++;
  return SQLITE_OK;
}

static int walk_eof(sqlite3_vtab_cursor *base) {
  walk_cursor *cur = (walk_cursor *)base;
  return cur->pos >= cur->ids->len;
}

static void result_id(sqlite3_context *ctx, uint32_t id) {
  if (id == TM_NULL_ID)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_int64(ctx, id);
}

static void result_str(sqlite3_context *ctx, const tm_model *model,
                       tm_str_id id) {
  const char *s = string_pool_borrow(model->strings, id);
  if (s)
    sqlite3_result_text(ctx, s, (int)string_pool_length(model->strings, id),
                        SQLITE_STATIC);
}

static void result_int64(sqlite3_context *ctx, int64_t v) {
  if (v != TM_NULL_INT64)
    sqlite3_result_int64(ctx, v);
}

static int walk_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx,
                       int column) {
  walk_cursor *cur = (walk_cursor *)base;
  walk_vtab *vtab = (walk_vtab *)base->pVtab;
  const tm_model *model = model_index_model(vtab->index);
  uint32_t id = g_array_index(cur->ids, uint32_t, cur->pos);
  if (returns_flows(vtab->kind)) {
    const tm_flow_row *f = &model->flows.data[id];
    switch (column) {
    case F_ID:
      sqlite3_result_int64(ctx, id);
      break;
    case F_SLICE_OUT:
      result_id(ctx, f->slice_out);
      break;
    case F_SLICE_IN:
      result_id(ctx, f->slice_in);
      break;
    case F_TRACE_ID:
      result_int64(ctx, f->trace_id);
      break;
    case F_ARG_SET_ID:
      if (f->arg_set_id)
        sqlite3_result_int64(ctx, f->arg_set_id);
      break;
    default:
      sqlite3_result_int64(ctx, cur->arg);
      break;
    }
    return SQLITE_OK;
  }
  const tm_slice_row *s = &model->slices.data[id];
  int64_t thread_ts, thread_dur;
  switch (column) {
  case S_ID:
  case S_SLICE_ID:
    sqlite3_result_int64(ctx, id);
    break;
  case S_TS:
    sqlite3_result_int64(ctx, model_slice_ts(model, id));
    break;
  case S_DUR:
    sqlite3_result_int64(ctx, model_slice_dur(model, s));
    break;
  case S_TRACK_ID:
    result_id(ctx, s->track_id);
    break;
  case S_CATEGORY:
  case S_CAT:
    result_str(ctx, model, model_slice_category(model, id));
    break;
  case S_NAME:
    result_str(ctx, model, s->name);
    break;
  case S_DEPTH:
    sqlite3_result_int64(ctx, s->depth);
    break;
  case S_PARENT_ID:
    result_id(ctx, s->parent_id);
    break;
  case S_ARG_SET_ID:
    if (s->arg_set_id)
      sqlite3_result_int64(ctx, s->arg_set_id);
    break;
  case S_THREAD_TS:
  case S_THREAD_DUR:
    if (model_slice_thread_time(model, id, &thread_ts, &thread_dur))
      result_int64(ctx, column == S_THREAD_TS ? thread_ts : thread_dur);
    break;
  case S_THREAD_INSTRUCTION_COUNT:
  case S_THREAD_INSTRUCTION_DELTA:
    break;
  default:
    sqlite3_result_int64(ctx, cur->arg);
    break;
  }
  return SQLITE_OK;
}

static int walk_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *rowid) {
  walk_cursor *cur = (walk_cursor *)base;
  *rowid = g_array_index(cur->ids, uint32_t, cur->pos);
  return SQLITE_OK;
}

static const sqlite3_module walk_module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous only */
    .xConnect = walk_connect,
    .xBestIndex = walk_best_index,
    .xDisconnect = walk_disconnect,
    .xDestroy = walk_disconnect,
    .xOpen = walk_open,
    .xClose = walk_close,
    .xFilter = walk_filter,
    .xNext = walk_next,
    .xEof = walk_eof,
    .xColumn = walk_column,
    .xRowid = walk_rowid,
};

/* __intrinsic_slice_stack_id(id): the slices.stack module's stack_id,
 * NULL for no slice. */
static void fn_slice_stack_id(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv) {
  (void)argc;
  tm_model_index *index = sqlite3_user_data(ctx);
  if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER)
    return;
  sqlite3_int64 id = sqlite3_value_int64(argv[0]);
  if (id < 0 || (uint64_t)id >= model_index_model(index)->slices.len)
    return;
  sqlite3_result_int64(ctx, model_index_slice_stack_id(index, (uint32_t)id));
}

int slice_functions_register(sqlite3 *db, tm_model_index *index) {
  int rc = sqlite3_create_function_v2(db, "__intrinsic_slice_stack_id", 1,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC |
                                          SQLITE_INNOCUOUS,
                                      index, fn_slice_stack_id, NULL, NULL,
                                      NULL);
  if (rc != SQLITE_OK)
    return rc;
  for (size_t i = 0; i < G_N_ELEMENTS(functions); i++) {
    registration *reg = g_new(registration, 1);
    reg->index = index;
    reg->kind = functions[i].kind;
    int rc = sqlite3_create_module_v2(db, functions[i].name, &walk_module, reg,
                                      g_free);
    if (rc != SQLITE_OK)
      return rc;
  }
  return SQLITE_OK;
}
