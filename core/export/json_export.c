/*
 * The Chrome JSON export (Trace Event Format, the JSON Object Format:
 * {"traceEvents": [...], "metadata": {...}}) of every selected machine.
 *
 * Machines. JSON has no machines, so each machine's pids and tids are
 * moved into a range of their own: machine m (0 for the first selected,
 * 1, 2, ... in machine-row order) writes pid P as m × S + P and tid T as
 * m × S + T, where the stride S is 10 000 000, or the first power of ten
 * above every pid and tid below 2^31 while every machine's range stays
 * below 2^32 (readers keep ids below 2^32). An id outside [0, S) gets a
 * free one of its machine's range, counted down from S - 1. The first
 * machine's ids are unchanged. Process names say the machine: "<machine>: <name>"
 * (or "<machine>" for a process without a name), and pid m × S itself is
 * a process named "<machine>" that holds what belongs to the machine but
 * to no process (global tracks, threads without a process). The top-level
 * "metadata" object lists the machines, their index and pid offset, and
 * each machine's Chrome JSON "metadata" objects (docs/exports.md).
 *
 * Events: "M" process_name / thread_name first; slices of thread tracks as
 * "X" (a slice never ended as "B" alone), zero-length leaves as "i"
 * (thread scope); slices of every other track as async "b"/"e" (a
 * zero-length leaf as "n") with an id2 "local" of the track's id, on the
 * track's process, or the machine's own process for a track of no process
 * (so its machine is still known), except zero-length slices of process
 * and global instant tracks, which are process-scoped "i"; counters as
 * "C" (a track named "N K" as series K of counter N, the way readers name
 * them; a name without a space as series "value"); flows as v2 bind_id on
 * their two slices when both slices' one bind_id is free, else as v1
 * "s" / "f" (bp "e") events right after the two slices (v1 binds to thread
 * slices only: a flow into an async slice that already has one is not
 * written); args as the event's "args" object, rebuilt from the flat keys
 * ("args.a.b[1]" is {"a": {"b": [_, v]}}; "args." and "debug." are dropped
 * from the front). Timestamps and durations are µs with the nanoseconds as
 * three decimals ("1750.25"), exact.
 *
 * Not in JSON (no event type holds them): scheduling, thread states,
 * samples, logs, and the machine rows' other columns.
 *
 * Streaming: events are written as the model's rows are read; what is
 * held is a few bytes per slice (async nesting and flow indexes).
 */
#include "export/json_export.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <tracemerge/tracemerge.h>

#include "base/json_string.h"
#include "base/string_pool.h"
#include "input/container.h"
#include "sql/model_index.h"

#define OUT_FLUSH (64u << 10)
#define DEFAULT_STRIDE INT64_C(10000000)
#define MAX_ARG_DEPTH 32

typedef struct json_state {
  const tm_model *model;
  const export_selection *sel;
  tmr_out_fn out;
  void *user;
  bool failed;
  GString *buf;
  bool first_event;
  int64_t stride;
  uint32_t *machine_index; /* by machine row; UINT32_MAX: not exported */
  GHashTable *used_ids;    /* (machine, id) of ids in [0, S) */
  GHashTable *remapped;    /* (machine, id) -> id written, for ids outside */
  int64_t *next_free;      /* by machine: the next id to give out */
  /* Arg sets as lists of arg rows (model_index_arg_set) and flow rows by
   * slice (model_index_flows_out/in), owned. */
  tm_model_index *index;
  /* Async slices: per track, the open ones, innermost last. */
  GArray **stacks;
  uint8_t *has_children;
  uint32_t *bind_flow; /* by slice: the flow its bind_id carries, or TM_NULL_ID */
  uint8_t *flow_v2;    /* by flow row: written as v2 */
} json_state;

/* --- output ------------------------------------------------------------------- */

static void flush(json_state *js) {
  if (!js->failed && js->buf->len && !js->out(js->user, js->buf->str, js->buf->len))
    js->failed = true;
  g_string_truncate(js->buf, 0);
}

static void maybe_flush(json_state *js) {
  if (js->buf->len >= OUT_FLUSH)
    flush(js);
}

/* Decimal integers without printf, which costs more than the rest of an
 * event here. */
static void put_u64(GString *b, uint64_t v) {
  char digits[20];
  int n = 0;
  do {
    digits[sizeof digits - 1 - n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  g_string_append_len(b, digits + sizeof digits - n, n);
}

static void put_i64(GString *b, int64_t v) {
  if (v < 0) {
    g_string_append_c(b, '-');
    put_u64(b, (uint64_t)0 - (uint64_t)v);
  } else {
    put_u64(b, (uint64_t)v);
  }
}

static void put_str_id(json_state *js, tm_str_id id) {
  const char *s = string_pool_borrow(js->model->strings, id);
  tm_json_append_string(js->buf, s ? s : "", s ? string_pool_length(js->model->strings, id) : 0);
}

/* ns as µs with the ns as decimals, trailing zeros dropped. */
static void put_us(GString *b, int64_t ns) {
  uint64_t magnitude = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  if (ns < 0)
    g_string_append_c(b, '-');
  put_u64(b, magnitude / 1000);
  unsigned frac = (unsigned)(magnitude % 1000);
  if (frac) {
    char digits[3] = {(char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                      (char)('0' + frac % 10)};
    int n = 3;
    while (digits[n - 1] == '0')
      n--;
    g_string_append_c(b, '.');
    g_string_append_len(b, digits, n);
  }
}

static void put_double(GString *b, double v) {
  if (!isfinite(v)) {
    g_string_append(b, isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char text[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(text, sizeof text, "%.17g", v);
  g_string_append(b, text);
  /* An integral double stays a number JSON readers take as real. */
  if (!strpbrk(text, ".eEn"))
    g_string_append(b, ".0");
}

static void begin_event(json_state *js) {
  g_string_append(js->buf, js->first_event ? "\n" : ",\n");
  js->first_event = false;
  g_string_append_c(js->buf, '{');
}

static void end_event(json_state *js) {
  g_string_append_c(js->buf, '}');
  maybe_flush(js);
}

/* --- ids ---------------------------------------------------------------------- */

/* The id written for pid or tid `id` of `machine`: m x S + id, or for an
 * id outside [0, S) (readers keep ids below 2^32; a trace may have larger
 * ones, e.g. made up for string ids) a free one of the machine's range,
 * given out from S - 1 down, the same for every use of that id. */
static int64_t map_id(const json_state *js, uint32_t machine, int64_t id) {
  uint32_t index = machine < js->model->machines.len ? js->machine_index[machine] : 0;
  int64_t base = (int64_t)index * js->stride;
  if (id >= 0 && id < js->stride)
    return base + id;
  int64_t key[2] = {machine, id};
  gpointer found = g_hash_table_lookup(js->remapped, key);
  if (found)
    return base + *(int64_t *)found;
  GHashTable *used = js->used_ids;
  int64_t *next = &js->next_free[machine < js->model->machines.len ? machine : 0];
  int64_t used_key[2];
  do {
    used_key[0] = machine;
    used_key[1] = (*next)--;
  } while (g_hash_table_contains(used, used_key) && *next > 0);
  int64_t *value = g_new(int64_t, 1);
  *value = used_key[1];
  g_hash_table_insert(js->remapped, g_memdup2(key, sizeof key), value);
  return base + *value;
}

static guint pair_hash(gconstpointer p) {
  const int64_t *k = p;
  return g_int64_hash(&k[0]) * 31u + g_int64_hash(&k[1]);
}

static gboolean pair_equal(gconstpointer a, gconstpointer b) {
  const int64_t *x = a, *y = b;
  return x[0] == y[0] && x[1] == y[1];
}

static int64_t process_pid(const json_state *js, uint32_t upid) {
  const tm_process_row *p = &js->model->processes.data[upid];
  return map_id(js, p->machine_id, p->pid);
}

static void thread_ids(const json_state *js, uint32_t utid, int64_t *pid, int64_t *tid) {
  const tm_thread_row *t = &js->model->threads.data[utid];
  *tid = map_id(js, t->machine_id, t->tid);
  *pid = t->upid < js->model->processes.len ? process_pid(js, t->upid)
                                             : map_id(js, t->machine_id, 0);
}

static const char *machine_label(const json_state *js, uint32_t machine, char *scratch,
                                 size_t len) {
  const char *name = machine < js->model->machines.len
                         ? string_pool_borrow(js->model->strings,
                                              js->model->machines.data[machine].name)
                         : NULL;
  if (name)
    return name;
  snprintf(scratch, len, "machine %u", machine < js->model->machines.len
                                           ? js->machine_index[machine]
                                           : 0);
  return scratch;
}

/* S: 10 000 000, or the first power of ten above every id below 2^31,
 * as long as every machine's range stays below 2^32. The ids of each
 * machine in [0, S) are noted, so remapped ones never take them. */
static void choose_stride(json_state *js) {
  const tm_model *model = js->model;
  int64_t largest = 0;
  for (size_t i = 0; i < model->processes.len; i++)
    if (model->processes.data[i].pid < INT32_MAX)
      largest = MAX(largest, model->processes.data[i].pid);
  for (size_t i = 0; i < model->threads.len; i++)
    if (model->threads.data[i].tid < INT32_MAX)
      largest = MAX(largest, model->threads.data[i].tid);
  int64_t machines = 1;
  for (uint32_t m = 0; m < model->machines.len; m++)
    if (js->machine_index[m] != UINT32_MAX)
      machines = MAX(machines, (int64_t)js->machine_index[m] + 1);
  js->stride = DEFAULT_STRIDE;
  while (js->stride <= largest && js->stride * 10 * machines <= (INT64_C(1) << 32))
    js->stride *= 10;
  js->used_ids = g_hash_table_new_full(pair_hash, pair_equal, g_free, NULL);
  js->remapped = g_hash_table_new_full(pair_hash, pair_equal, g_free, g_free);
  js->next_free = g_new(int64_t, model->machines.len + 1);
  for (size_t m = 0; m <= model->machines.len; m++)
    js->next_free[m] = js->stride - 1;
  for (size_t i = 0; i < model->processes.len + model->threads.len; i++) {
    bool is_process = i < model->processes.len;
    int64_t key[2];
    key[0] = is_process ? model->processes.data[i].machine_id
                        : model->threads.data[i - model->processes.len].machine_id;
    key[1] = is_process ? model->processes.data[i].pid
                        : model->threads.data[i - model->processes.len].tid;
    if (key[1] >= 0 && key[1] < js->stride)
      g_hash_table_add(js->used_ids, g_memdup2(key, sizeof key));
  }
}

/* --- args ---------------------------------------------------------------------- */

/* A tree of one event's args, built from the flat keys. */
typedef struct arg_node {
  char *name;   /* NULL for array elements and the root */
  long index;   /* array element index, -1 otherwise */
  const tm_arg_row *leaf;
  GPtrArray *children; /* arg_node *, in first-seen order */
  bool is_array;
} arg_node;

static void arg_node_free(gpointer p) {
  arg_node *n = p;
  if (n->children)
    g_ptr_array_unref(n->children);
  g_free(n->name);
  g_free(n);
}

static arg_node *child_of(arg_node *parent, const char *name, size_t len, long index) {
  if (!parent->children)
    parent->children = g_ptr_array_new_with_free_func(arg_node_free);
  for (guint i = 0; i < parent->children->len; i++) {
    arg_node *c = g_ptr_array_index(parent->children, i);
    if (index >= 0 ? c->index == index
                   : (c->name && strlen(c->name) == len && memcmp(c->name, name, len) == 0))
      return c;
  }
  arg_node *c = g_new0(arg_node, 1);
  c->index = index;
  if (index < 0)
    c->name = g_strndup(name, len);
  else
    parent->is_array = true;
  g_ptr_array_add(parent->children, c);
  return c;
}

/* A key without its namespace ("args." or "debug."). */
static const char *arg_name(const char *key) {
  if (g_str_has_prefix(key, "args.") && key[5])
    return key + 5;
  if (g_str_has_prefix(key, "debug.") && key[6])
    return key + 6;
  return key;
}

/* Adds `row` at the path of its key: segments split at '.', "[i]" an
 * array element. The namespace "args." or "debug." is dropped. */
static void add_arg(arg_node *root, const char *key, const tm_arg_row *row) {
  key = arg_name(key);
  arg_node *node = root;
  const char *p = key;
  int depth = 0;
  while (*p && depth++ < MAX_ARG_DEPTH) {
    if (*p == '[') {
      char *close = NULL;
      long index = strtol(p + 1, &close, 10);
      if (close && *close == ']' && index >= 0 && index < 1000000) {
        node = child_of(node, NULL, 0, index);
        p = close + 1;
        if (*p == '.')
          p++;
        continue;
      }
    }
    size_t len = strcspn(p, ".[");
    if (len == 0) {
      len = 1; /* a '[' that opens no index: part of the name */
      len += strcspn(p + 1, ".[");
    }
    node = child_of(node, p, len, -1);
    p += len;
    if (*p == '.')
      p++;
  }
  node->leaf = row;
}

static void put_arg_value(json_state *js, const tm_arg_row *a) {
  GString *b = js->buf;
  switch ((tm_arg_type)model_arg_key(js->model, a)->value_type) {
  case TM_ARG_INT:
    put_i64(b, model_arg_int(js->model, a));
    break;
  case TM_ARG_UINT:
    put_u64(b, (uint64_t)model_arg_int(js->model, a));
    break;
  case TM_ARG_BOOL:
    g_string_append(b, model_arg_int(js->model, a) ? "true" : "false");
    break;
  case TM_ARG_REAL:
    put_double(b, model_arg_real(js->model, a));
    break;
  case TM_ARG_POINTER:
    g_string_append_printf(b, "\"0x%" PRIx64 "\"", (uint64_t)model_arg_int(js->model, a));
    break;
  case TM_ARG_STRING:
  case TM_ARG_JSON:
  default: {
    size_t len;
    const char *s = model_arg_string(js->model, a, &len);
    tm_json_append_string(js->buf, s ? s : "", len);
    break;
  }
  }
}

static gint by_index(gconstpointer a, gconstpointer b) {
  const arg_node *x = *(arg_node *const *)a, *y = *(arg_node *const *)b;
  return (x->index > y->index) - (x->index < y->index);
}

static void put_arg_node(json_state *js, arg_node *node) {
  if (!node->children) {
    if (node->leaf)
      put_arg_value(js, node->leaf);
    else
      g_string_append(js->buf, "null");
    return;
  }
  /* A key that is both a value and a parent keeps the children (JSON
   * cannot say both). */
  if (node->is_array) {
    g_ptr_array_sort(node->children, by_index);
    g_string_append_c(js->buf, '[');
    long next = 0;
    for (guint i = 0; i < node->children->len; i++) {
      arg_node *c = g_ptr_array_index(node->children, i);
      if (c->index < 0)
        continue;
      for (; next < c->index; next++)
        g_string_append(js->buf, next ? ",null" : "null");
      if (next)
        g_string_append_c(js->buf, ',');
      put_arg_node(js, c);
      next = c->index + 1;
    }
    g_string_append_c(js->buf, ']');
    return;
  }
  g_string_append_c(js->buf, '{');
  for (guint i = 0; i < node->children->len; i++) {
    arg_node *c = g_ptr_array_index(node->children, i);
    if (i)
      g_string_append_c(js->buf, ',');
    tm_json_append_string(js->buf, c->name ? c->name : "", c->name ? strlen(c->name) : 0);
    g_string_append_c(js->buf, ':');
    put_arg_node(js, c);
  }
  g_string_append_c(js->buf, '}');
}

#define MAX_FLAT_ARGS 16

/* The common case without the tree: at most MAX_FLAT_ARGS args whose keys
 * are distinct single names (no '.' or '['), written in row order as the
 * tree would write them. False, writing nothing, for any other set. */
static bool put_flat_args(json_state *js, const uint32_t *rows, size_t n_rows,
                          const char *extra) {
  if (n_rows > MAX_FLAT_ARGS)
    return false;
  const char *names[MAX_FLAT_ARGS];
  size_t lens[MAX_FLAT_ARGS];
  uint32_t n = 0;
  for (size_t i = 0; i < n_rows; i++) {
    const tm_arg_row *a = &js->model->args.data[rows[i]];
    const char *key =
        string_pool_borrow(js->model->strings, model_arg_key(js->model, a)->key);
    if (!key)
      return false;
    const char *name = arg_name(key);
    size_t len = strlen(name);
    if (len == 0 || strcspn(name, ".[") != len)
      return false;
    for (uint32_t j = 0; j < n; j++)
      if (lens[j] == len && memcmp(names[j], name, len) == 0)
        return false;
    names[n] = name;
    lens[n++] = len;
  }
  g_string_append_c(js->buf, '{');
  n = 0;
  for (size_t i = 0; i < n_rows; i++, n++) {
    if (n)
      g_string_append_c(js->buf, ',');
    tm_json_append_string(js->buf, names[n], lens[n]);
    g_string_append_c(js->buf, ':');
    put_arg_value(js, &js->model->args.data[rows[i]]);
  }
  if (extra && n) {
    g_string_append_c(js->buf, ',');
    g_string_append(js->buf, extra);
  } else if (extra) {
    g_string_append(js->buf, extra);
  }
  g_string_append_c(js->buf, '}');
  return true;
}

static void put_args(json_state *js, uint32_t arg_set_id, const char *extra) {
  size_t n_rows = 0;
  const uint32_t *rows =
      arg_set_id ? model_index_arg_set(js->index, arg_set_id, &n_rows) : NULL;
  bool has_set = n_rows > 0;
  if (!has_set && !extra)
    return;
  g_string_append(js->buf, ",\"args\":");
  if (!has_set) {
    g_string_append_printf(js->buf, "{%s}", extra);
    return;
  }
  if (put_flat_args(js, rows, n_rows, extra))
    return;
  arg_node root = {0};
  for (size_t i = 0; i < n_rows; i++) {
    const tm_arg_row *a = &js->model->args.data[rows[i]];
    const char *key =
        string_pool_borrow(js->model->strings, model_arg_key(js->model, a)->key);
    if (key)
      add_arg(&root, key, a);
  }
  if (!root.children) {
    g_string_append_printf(js->buf, "{%s}", extra ? extra : "");
  } else {
    root.is_array = false;
    put_arg_node(js, &root);
    if (extra) {
      /* Insert before the closing brace. */
      g_string_truncate(js->buf, js->buf->len - 1);
      g_string_append_printf(js->buf, ",%s}", extra);
    }
    g_ptr_array_unref(root.children);
  }
}

/* --- metadata events ----------------------------------------------------------- */

static void put_ids(json_state *js, int64_t pid, int64_t tid, bool with_tid) {
  g_string_append(js->buf, "\"pid\":");
  put_i64(js->buf, pid);
  if (with_tid) {
    g_string_append(js->buf, ",\"tid\":");
    put_i64(js->buf, tid);
  }
}

static void write_name_event(json_state *js, const char *what, int64_t pid, int64_t tid,
                             bool with_tid, const char *prefix, tm_str_id name) {
  begin_event(js);
  g_string_append(js->buf, "\"ph\":\"M\",");
  put_ids(js, pid, tid, with_tid);
  g_string_append_printf(js->buf, ",\"name\":\"%s\",\"args\":{\"name\":", what);
  const char *s = string_pool_borrow(js->model->strings, name);
  if (prefix) {
    GString *text = g_string_new(prefix);
    if (s) {
      g_string_append(text, ": ");
      g_string_append_len(text, s, (gssize)string_pool_length(js->model->strings, name));
    }
    tm_json_append_string(js->buf, text->str, text->len);
    g_string_free(text, TRUE);
  } else {
    put_str_id(js, name);
  }
  g_string_append(js->buf, "}");
  end_event(js);
}

static void write_names(json_state *js) {
  const tm_model *model = js->model;
  char scratch[32];
  /* Each machine's own process (pid m x S): "<machine>", or with its pid
   * 0's name when that process has one ("<machine>: <name>", as every
   * process is named). */
  for (uint32_t m = 0; m < model->machines.len; m++) {
    if (js->machine_index[m] == UINT32_MAX)
      continue;
    tm_str_id pid0_name = 0;
    for (size_t p = 0; p < model->processes.len && !pid0_name; p++)
      if (model->processes.data[p].machine_id == m && model->processes.data[p].pid == 0)
        pid0_name = model->processes.data[p].name;
    write_name_event(js, "process_name", map_id(js, m, 0), 0, false,
                     machine_label(js, m, scratch, sizeof scratch), pid0_name);
  }
  for (uint32_t upid = 0; upid < model->processes.len; upid++) {
    const tm_process_row *p = &model->processes.data[upid];
    if (!export_machine_on(js->sel, p->machine_id) || p->pid == 0)
      continue;
    write_name_event(js, "process_name", process_pid(js, upid), 0, false,
                     machine_label(js, p->machine_id, scratch, sizeof scratch), p->name);
  }
  for (uint32_t utid = 0; utid < model->threads.len; utid++) {
    const tm_thread_row *t = &model->threads.data[utid];
    if (!export_machine_on(js->sel, t->machine_id) || !t->name || t->is_idle > 0)
      continue;
    int64_t pid, tid;
    thread_ids(js, utid, &pid, &tid);
    write_name_event(js, "thread_name", pid, tid, true, NULL, t->name);
  }
}

/* --- slices ----------------------------------------------------------------------- */

typedef enum track_kind { TRACK_THREAD, TRACK_PROCESS, TRACK_GLOBAL } track_kind;

static track_kind kind_of(const json_state *js, const tm_track_row *t) {
  (void)js;
  if (t->utid != TM_NULL_ID)
    return TRACK_THREAD;
  if (t->upid != TM_NULL_ID)
    return TRACK_PROCESS;
  return TRACK_GLOBAL;
}

static void track_pid_tid(const json_state *js, const tm_track_row *t, int64_t *pid,
                          int64_t *tid) {
  *tid = 0;
  if (t->utid < js->model->threads.len)
    thread_ids(js, t->utid, pid, tid);
  else if (t->upid < js->model->processes.len)
    *pid = process_pid(js, t->upid);
  else
    *pid = map_id(js, t->machine_id, 0);
}

static void put_name_cat(json_state *js, uint32_t id, const tm_slice_row *s) {
  tm_str_id category = model_slice_category(js->model, id);
  if (category) {
    g_string_append(js->buf, ",\"cat\":");
    put_str_id(js, category);
  }
  if (s->name) {
    g_string_append(js->buf, ",\"name\":");
    put_str_id(js, s->name);
  }
}

/* Flows: a flow row goes as v2 (bind_id) when both its slices' one
 * bind_id is free for it, else as v1 events at both ends ("s" after its
 * source slice, "f" with bp "e" after its destination), so each flow's two
 * ends always speak the same version. */
static void assign_flows(json_state *js) {
  const tm_model *model = js->model;
  size_t n = model->slices.len;
  js->bind_flow = g_new(uint32_t, n + 1);
  for (size_t s = 0; s <= n; s++)
    js->bind_flow[s] = TM_NULL_ID;
  js->flow_v2 = g_new0(uint8_t, model->flows.len / 8 + 1);
  for (uint32_t f = 0; f < model->flows.len; f++) {
    const tm_flow_row *row = &model->flows.data[f];
    if (row->slice_out >= n || row->slice_in >= n || row->slice_out == row->slice_in ||
        js->bind_flow[row->slice_out] != TM_NULL_ID || js->bind_flow[row->slice_in] != TM_NULL_ID)
      continue;
    js->bind_flow[row->slice_out] = f;
    js->bind_flow[row->slice_in] = f;
    js->flow_v2[f / 8] |= (uint8_t)(1u << (f % 8));
  }
}

static bool flow_is_v2(const json_state *js, uint32_t f) {
  return (js->flow_v2[f / 8] >> (f % 8)) & 1;
}

/* The v1 flows of exported slice `id`: its flows out ("s"), then in ("f"),
 * each in flow row order, those whose other slice is exported too. */
static void write_v1_flows(json_state *js, uint32_t id, int64_t pid, int64_t tid, int64_t ts) {
  const tm_model *model = js->model;
  for (int pass = 0; pass < 2; pass++) {
    size_t n_flows;
    const uint32_t *flows = pass == 0 ? model_index_flows_out(js->index, id, &n_flows)
                                      : model_index_flows_in(js->index, id, &n_flows);
    for (size_t i = 0; i < n_flows; i++) {
      const tm_flow_row *row = &model->flows.data[flows[i]];
      uint32_t other = pass == 0 ? row->slice_in : row->slice_out;
      if (other >= model->slices.len || !export_slice_on(js->sel, other) ||
          flow_is_v2(js, flows[i]))
        continue;
      begin_event(js);
      g_string_append_printf(js->buf, "\"ph\":\"%s\",", pass == 0 ? "s" : "f");
      put_ids(js, pid, tid, true);
      g_string_append(js->buf, ",\"ts\":");
      put_us(js->buf, ts);
      g_string_append_printf(js->buf,
                             ",\"cat\":\"flow\",\"name\":\"flow\",\"id\":\"0x%" PRIx64
                             "\"%s",
                             (uint64_t)flows[i] + 1, pass == 0 ? "" : ",\"bp\":\"e\"");
      end_event(js);
    }
  }
}

static void put_flow_fields(json_state *js, uint32_t id) {
  uint32_t f = js->bind_flow[id];
  if (f == TM_NULL_ID)
    return;
  bool out = js->model->flows.data[f].slice_out == id;
  g_string_append_printf(js->buf, ",\"bind_id\":\"0x%" PRIx64 "\",\"%s\":true",
                         (uint64_t)f + 1, out ? "flow_out" : "flow_in");
}

static void write_thread_slice(json_state *js, uint32_t id, const tm_slice_row *s,
                               const tm_track_row *t) {
  int64_t pid, tid;
  track_pid_tid(js, t, &pid, &tid);
  int64_t ts = model_slice_ts(js->model, id), dur = model_slice_dur(js->model, s);
  bool instant = dur == 0 && !(js->has_children[id / 8] & (1u << (id % 8)));
  begin_event(js);
  g_string_append(js->buf, instant ? "\"ph\":\"i\"," : dur < 0 ? "\"ph\":\"B\"," : "\"ph\":\"X\",");
  put_ids(js, pid, tid, true);
  g_string_append(js->buf, ",\"ts\":");
  put_us(js->buf, ts);
  if (!instant && dur >= 0) {
    g_string_append(js->buf, ",\"dur\":");
    put_us(js->buf, dur);
  }
  if (instant)
    g_string_append(js->buf, ",\"s\":\"t\"");
  put_name_cat(js, id, s);
  put_flow_fields(js, id);
  put_args(js, s->arg_set_id, NULL);
  end_event(js);
  write_v1_flows(js, id, pid, tid, ts);
}

static void write_async_end(json_state *js, uint32_t id) {
  const tm_slice_row *s = &js->model->slices.data[id];
  const tm_track_row *t = &js->model->tracks.data[s->track_id];
  int64_t pid, tid;
  track_pid_tid(js, t, &pid, &tid);
  begin_event(js);
  g_string_append(js->buf, "\"ph\":\"e\",");
  put_ids(js, pid, tid, false);
  g_string_append(js->buf, ",\"ts\":");
  put_us(js->buf, model_slice_ts(js->model, id) + model_slice_dur(js->model, s));
  put_name_cat(js, id, s);
  g_string_append_printf(js->buf, ",\"id2\":{\"local\":\"0x%x\"}", s->track_id);
  end_event(js);
}

/* Ends the async slices open on the track above `keep` (see the
 * Perfetto export: an end goes before a later begin on its track unless
 * that begin is its child). */
static void close_async_above(json_state *js, uint32_t track, uint32_t keep) {
  GArray *stack = js->stacks[track];
  if (!stack)
    return;
  bool keep_on = false;
  for (guint i = 0; i < stack->len && keep != TM_NULL_ID; i++)
    keep_on = keep_on || g_array_index(stack, uint32_t, i) == keep;
  while (stack->len > 0) {
    uint32_t top = g_array_index(stack, uint32_t, stack->len - 1);
    if (keep_on && top == keep)
      break;
    g_array_set_size(stack, stack->len - 1);
    if (model_slice_dur(js->model, &js->model->slices.data[top]) >= 0)
      write_async_end(js, top);
  }
}

static void write_track_slice(json_state *js, uint32_t id, const tm_slice_row *s,
                              const tm_track_row *t) {
  int64_t pid, tid;
  track_pid_tid(js, t, &pid, &tid);
  int64_t ts = model_slice_ts(js->model, id);
  bool instant = model_slice_dur(js->model, s) == 0 &&
                 !(js->has_children[id / 8] & (1u << (id % 8)));
  const char *type = t->type ? string_pool_borrow(js->model->strings, t->type) : NULL;
  /* Instant tracks of processes and of the trace read back as such. */
  bool instant_track = type && (strcmp(type, "chrome_process_instant") == 0 ||
                                strcmp(type, "legacy_chrome_global_instants") == 0);
  if (instant && instant_track) {
    begin_event(js);
    g_string_append(js->buf, "\"ph\":\"i\",");
    put_ids(js, pid, tid, false);
    g_string_append(js->buf, ",\"ts\":");
    put_us(js->buf, ts);
    g_string_append(js->buf, ",\"s\":\"p\"");
    put_name_cat(js, id, s);
    put_args(js, s->arg_set_id, NULL);
    end_event(js);
    return;
  }
  close_async_above(js, s->track_id, s->parent_id);
  begin_event(js);
  g_string_append_printf(js->buf, "\"ph\":\"%s\",", instant ? "n" : "b");
  put_ids(js, pid, tid, false);
  g_string_append(js->buf, ",\"ts\":");
  put_us(js->buf, ts);
  put_name_cat(js, id, s);
  g_string_append_printf(js->buf, ",\"id2\":{\"local\":\"0x%x\"}", s->track_id);
  put_flow_fields(js, id);
  put_args(js, s->arg_set_id, NULL);
  end_event(js);
  if (instant)
    return;
  if (!js->stacks[s->track_id])
    js->stacks[s->track_id] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_array_append_val(js->stacks[s->track_id], id);
}

static void write_slices(json_state *js) {
  const tm_model *model = js->model;
  for (uint32_t id = 0; id < model->slices.len; id++) {
    if (!export_slice_on(js->sel, id))
      continue;
    const tm_slice_row *s = &model->slices.data[id];
    if (s->track_id >= model->tracks.len)
      continue;
    const tm_track_row *t = &model->tracks.data[s->track_id];
    if (kind_of(js, t) == TRACK_THREAD)
      write_thread_slice(js, id, s, t);
    else
      write_track_slice(js, id, s, t);
  }
  for (uint32_t t = 0; t < model->tracks.len; t++)
    close_async_above(js, t, TM_NULL_ID);
}

/* --- counters ----------------------------------------------------------------------- */

static void write_counters(json_state *js) {
  const tm_model *model = js->model;
  for (uint32_t i = 0; i < model->counters.len; i++) {
    const tm_counter_row *c = &model->counters.data[i];
    if (c->track_id >= model->tracks.len)
      continue;
    const tm_track_row *t = &model->tracks.data[c->track_id];
    if (!export_machine_on(js->sel, t->machine_id) || !export_point_on(js->sel, c->ts))
      continue;
    int64_t pid, tid;
    track_pid_tid(js, t, &pid, &tid);
    const char *name = string_pool_borrow(model->strings, t->name);
    size_t len = name ? string_pool_length(model->strings, t->name) : 0;
    const char *space = name ? strrchr(name, ' ') : NULL;
    begin_event(js);
    g_string_append(js->buf, "\"ph\":\"C\",");
    put_ids(js, pid, tid, false);
    g_string_append(js->buf, ",\"ts\":");
    put_us(js->buf, c->ts);
    g_string_append(js->buf, ",\"name\":");
    if (space) {
      tm_json_append_string(js->buf, name, (size_t)(space - name));
      g_string_append(js->buf, ",\"args\":{");
      tm_json_append_string(js->buf, space + 1, len - (size_t)(space + 1 - name));
    } else {
      tm_json_append_string(js->buf, name ? name : "", len);
      g_string_append(js->buf, ",\"args\":{\"value\"");
    }
    g_string_append_c(js->buf, ':');
    put_double(js->buf, c->value);
    g_string_append_c(js->buf, '}');
    end_event(js);
  }
}

/* --- the file ------------------------------------------------------------------------ */

/* The machine's Chrome JSON "metadata" objects (the JSON reader's rows
 * json_metadata.<key>) as its "metadata" object: each key once, in
 * first-seen order, with the later file's value; an int row as a number,
 * a string row as a string (a nested object or a number with a fraction
 * was read as its JSON text: it stays that text, as a string, so a
 * re-import reads the same row). Nothing if the machine has none. */
static void write_machine_json_metadata(json_state *js, uint32_t machine) {
  static const char prefix[] = "json_metadata.";
  const tm_model *model = js->model;
  GArray *rows = NULL; /* indexes of metadata rows, one per key */
  for (size_t i = 0; i < model->metadata.len; i++) {
    const tm_metadata_row *row = &model->metadata.data[i];
    const char *name = string_pool_borrow(model->strings, row->name);
    if (row->machine_id != machine || row->key_type != TM_METADATA_SINGLE || !name ||
        strncmp(name, prefix, sizeof prefix - 1) != 0)
      continue;
    if (!rows)
      rows = g_array_new(FALSE, FALSE, sizeof(size_t));
    guint k = 0;
    while (k < rows->len &&
           model->metadata.data[g_array_index(rows, size_t, k)].name != row->name)
      k++;
    if (k < rows->len)
      g_array_index(rows, size_t, k) = i;
    else
      g_array_append_val(rows, i);
  }
  if (!rows)
    return;
  g_string_append(js->buf, ",\"metadata\":{");
  for (guint k = 0; k < rows->len; k++) {
    const tm_metadata_row *row = &model->metadata.data[g_array_index(rows, size_t, k)];
    const char *name = string_pool_borrow(model->strings, row->name) + sizeof prefix - 1;
    if (k)
      g_string_append_c(js->buf, ',');
    tm_json_append_string(js->buf, name, strlen(name));
    g_string_append_c(js->buf, ':');
    if (row->is_int)
      put_i64(js->buf, row->int_value);
    else
      put_str_id(js, row->str_value);
  }
  g_string_append_c(js->buf, '}');
  g_array_unref(rows);
}

static void write_metadata(json_state *js) {
  const tm_model *model = js->model;
  char scratch[32];
  g_string_append(js->buf, "\n],\n\"metadata\":{\"tracemerge\":{\"pid_stride\":");
  g_string_append_printf(js->buf, "%" PRId64 ",\"machines\":[", js->stride);
  bool first = true;
  for (uint32_t m = 0; m < model->machines.len; m++) {
    if (js->machine_index[m] == UINT32_MAX)
      continue;
    g_string_append(js->buf, first ? "\n" : ",\n");
    first = false;
    g_string_append(js->buf, "{\"name\":");
    const char *label = machine_label(js, m, scratch, sizeof scratch);
    tm_json_append_string(js->buf, label, strlen(label));
    g_string_append_printf(js->buf, ",\"index\":%u,\"pid_offset\":%" PRId64,
                           js->machine_index[m], map_id(js, m, 0));
    write_machine_json_metadata(js, m);
    g_string_append_c(js->buf, '}');
  }
  g_string_append(js->buf, "]}}}\n");
}

bool json_export(const tm_model *model, const export_selection *sel, tmr_out_fn out, void *user,
                 GError **error) {
  json_state js = {
      .model = model,
      .sel = sel,
      .out = out,
      .user = user,
      .buf = g_string_sized_new(OUT_FLUSH + 4096),
      .first_event = true,
  };
  js.machine_index = g_new(uint32_t, model->machines.len + 1);
  uint32_t next = 0;
  for (uint32_t m = 0; m < model->machines.len; m++)
    js.machine_index[m] = export_machine_on(sel, m) ? next++ : UINT32_MAX;
  choose_stride(&js);
  js.index = model_index_new(model);
  assign_flows(&js);
  size_t n = model->slices.len;
  js.has_children = g_new0(uint8_t, n / 8 + 1);
  for (size_t s = 0; s < n; s++) {
    uint32_t parent = model->slices.data[s].parent_id;
    if (parent < n && export_slice_on(sel, (uint32_t)s))
      js.has_children[parent / 8] |= (uint8_t)(1u << (parent % 8));
  }
  js.stacks = g_new0(GArray *, model->tracks.len + 1);

  g_string_append(js.buf, "{\"traceEvents\":[");
  write_names(&js);
  write_slices(&js);
  write_counters(&js);
  write_metadata(&js);
  flush(&js);

  bool ok = !js.failed;
  if (!ok)
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "writing the JSON trace failed");
  for (size_t t = 0; t < model->tracks.len; t++)
    if (js.stacks[t])
      g_array_unref(js.stacks[t]);
  g_free(js.stacks);
  g_free(js.has_children);
  g_free(js.bind_flow);
  g_free(js.flow_v2);
  g_free(js.machine_index);
  g_hash_table_unref(js.used_ids);
  g_hash_table_unref(js.remapped);
  g_free(js.next_free);
  model_index_free(js.index);
  g_string_free(js.buf, TRUE);
  return ok;
}
