/*
 * Gecko / Firefox Profiler reader (trace_type "gecko"): the raw Gecko
 * profile (also inside the old DevTools export wrapper, under "profile")
 * and the processed profile that profiler.firefox.com and samply save.
 * Gzip is undone by the host's containers before the bytes reach us.
 *
 * Streaming: yajl parses chunk by chunk and the callbacks below walk the
 * document by a stack of roles; no DOM of the file is built. Gecko keeps
 * each thread as tables of columns that index into each other (samples ->
 * stacks -> frames -> funcs -> strings), so a thread's tables are held
 * until the thread's object ends, then resolved into samples, callsites and
 * marker slices, then freed. Memory is thus bounded by the largest thread's
 * own tables (plus the "shared" tables when present), not by the file. A
 * thread that needs "shared" tables the file has not given yet is kept
 * until the end of the document. The record budget (TM_BUDGET_RECORD_BYTES)
 * bounds the JSON bytes of one thread object (or "shared"): past it the
 * file is cut there (stat reader_record_size_exceeded).
 *
 * What is read (docs/formats.md §4): meta.categories[].name; threads[] with
 * name, tid, pid, stringTable/stringArray, frameTable (location | func),
 * funcTable.name, stackTable (prefix, frame), samples (stack, time or
 * timeDeltas) and, in the processed form, markers (name, startTime,
 * endTime, phase, category, data -> args under "data."). Tables come
 * either as {schema: {col: position}, data: [[row]...]} (raw form) or as
 * {col: [values]} (processed form). The format is clockless: every time
 * is ms on the file's private clock, converted to ns as (int64)(ms * 1e6).
 *
 * Detection of the DevTools wrapper ({"label": ..., "profile": {...}}):
 * the probe sees at most 512 bytes, so it claims a file starting with
 * {"label" only when "profile":{"libs" or "profile":{"meta" is visible in
 * that window (as in the Firefox 63 export); otherwise the Chrome JSON
 * reader keeps it, as trace_processor does.
 */
#include <glib.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include <tracemerge/plugin.h>

#define MAX_DEPTH 1024
#define DEFAULT_MAX_RECORD ((uint64_t)512 << 20)
#define MAX_SCHEMA 32 /* schema positions past this are not read */
#define PROBE_SCORE 900 /* above the Chrome JSON reader's 890 */

typedef enum role {
  R_SKIP,
  R_ROOT,
  R_META,
  R_CATEGORIES,
  R_CATEGORY,
  R_THREADS,
  R_THREAD,
  R_STRINGS,
  R_TABLE,
  R_SCHEMA,
  R_ROWS,
  R_ROW,
  R_COLUMN,
  R_MARKER_DATA,
  R_ARGS,
} role;

typedef enum table_kind {
  T_FRAME,
  T_FUNC,
  T_STACK,
  T_SAMPLES,
  T_MARKERS,
  T_COUNT,
} table_kind;

typedef enum column_id {
  C_FRAME_LOCATION,
  C_FRAME_FUNC,
  C_FUNC_NAME,
  C_STACK_PREFIX,
  C_STACK_FRAME,
  C_SAMPLE_STACK,
  C_SAMPLE_TIME,
  C_SAMPLE_TIME_DELTA,
  C_MARKER_NAME,
  C_MARKER_START,
  C_MARKER_END,
  C_MARKER_PHASE,
  C_MARKER_CATEGORY,
  C_COUNT,
} column_id;

static const struct {
  table_kind table;
  const char *name;
  column_id column;
} column_names[] = {
    {T_FRAME, "location", C_FRAME_LOCATION},
    {T_FRAME, "func", C_FRAME_FUNC},
    {T_FUNC, "name", C_FUNC_NAME},
    {T_STACK, "prefix", C_STACK_PREFIX},
    {T_STACK, "frame", C_STACK_FRAME},
    {T_SAMPLES, "stack", C_SAMPLE_STACK},
    {T_SAMPLES, "time", C_SAMPLE_TIME},
    {T_SAMPLES, "timeDeltas", C_SAMPLE_TIME_DELTA},
    {T_MARKERS, "name", C_MARKER_NAME},
    {T_MARKERS, "startTime", C_MARKER_START},
    {T_MARKERS, "endTime", C_MARKER_END},
    {T_MARKERS, "phase", C_MARKER_PHASE},
    {T_MARKERS, "category", C_MARKER_CATEGORY},
};

static const struct {
  const char *name;
  table_kind table;
} table_names[] = {
    {"frameTable", T_FRAME}, {"funcTable", T_FUNC}, {"stackTable", T_STACK},
    {"samples", T_SAMPLES},  {"markers", T_MARKERS},
};

/* One arg of a marker's data object, flattened. */
typedef struct marker_arg {
  uint32_t marker;
  tm_str_id key;
  tm_arg_value value;
} marker_arg;

/* A thread's (or the "shared" object's) tables while they are parsed.
 * Numbers are doubles (indexes are exact below 2^53); NaN is null. */
typedef struct gecko_tables {
  GArray *columns[C_COUNT];  /* double */
  GPtrArray *strings;        /* char *, owned; NULL if the thread has none */
  bool table_seen[T_COUNT];
  int8_t schema[T_COUNT][MAX_SCHEMA]; /* position -> column_id, -1 */
  uint32_t rows[T_COUNT];             /* rows read in {schema, data} form */
  char *name;
  bool has_tid, has_pid;
  int64_t tid, pid;
  GArray *marker_args; /* marker_arg */
} gecko_tables;

typedef struct container {
  uint8_t role;
  uint8_t is_array;
  uint8_t table;   /* table_kind for R_TABLE/R_SCHEMA/R_ROWS/R_ROW */
  int8_t column;   /* column_id for R_COLUMN, -1 */
  uint32_t index;  /* next element index of an array */
  uint32_t marker; /* R_ARGS: marker index */
  size_t key_len;  /* R_ARGS: length of the args key prefix */
} container;

typedef struct gecko_reader {
  const tm_host_services *svc;
  tm_host *host;
  yajl_handle yajl;
  int64_t bytes_before; /* file offset of the current chunk */
  bool failed;
  bool saw_root;
  bool saw_threads;
  container stack[MAX_DEPTH];
  size_t depth;
  GString *key;      /* last map key at the top container */
  GString *args_key; /* marker data key under construction */
  GArray *categories; /* tm_str_id by category index */
  gecko_tables *shared;  /* the "shared" object, or NULL */
  bool shared_done;
  gecko_tables *current; /* the thread (or shared) being parsed */
  bool current_is_shared;
  GPtrArray *deferred; /* gecko_tables * waiting for "shared" */
  tm_clock_ref clock;
  tm_str_id str_gecko;
  uint64_t max_record;  /* the record budget */
  int64_t table_start;  /* file offset of the thread being read, or -1 */
} gecko_reader;

/* ---- tables ----------------------------------------------------------- */

static gecko_tables *tables_new(void) {
  gecko_tables *t = g_new0(gecko_tables, 1);
  memset(t->schema, -1, sizeof t->schema);
  t->marker_args = g_array_new(FALSE, FALSE, sizeof(marker_arg));
  return t;
}

static void tables_free(gecko_tables *t) {
  if (!t)
    return;
  for (int c = 0; c < C_COUNT; c++)
    if (t->columns[c])
      g_array_free(t->columns[c], TRUE);
  if (t->strings)
    g_ptr_array_free(t->strings, TRUE);
  g_array_free(t->marker_args, TRUE);
  g_free(t->name);
  g_free(t);
}

static GArray *column_of(gecko_tables *t, int c) {
  if (!t->columns[c])
    t->columns[c] = g_array_new(FALSE, FALSE, sizeof(double));
  return t->columns[c];
}

static void column_set(gecko_tables *t, int c, uint32_t row, double v) {
  GArray *col = column_of(t, c);
  double nan = NAN;
  while (col->len < row)
    g_array_append_val(col, nan);
  if (col->len == row)
    g_array_append_val(col, v);
  else
    g_array_index(col, double, row) = v;
}

static int column_by_name(table_kind table, const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(column_names); i++)
    if (column_names[i].table == table && strcmp(column_names[i].name, name) == 0)
      return (int)column_names[i].column;
  return -1;
}

/* ---- errors ------------------------------------------------------------- */

static int fail(gecko_reader *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static int fail(gecko_reader *r, const char *fmt, ...) {
  if (!r->failed) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    int64_t offset = r->bytes_before + (int64_t)yajl_get_bytes_consumed(r->yajl);
    r->svc->report_error(r->host, offset, msg);
    g_free(msg);
    r->failed = true;
  }
  return 0; /* cancels the parse */
}

/* ---- resolving a thread ------------------------------------------------- */

typedef struct resolve_ctx {
  gecko_reader *r;
  gecko_tables *t;
  GPtrArray *strings;          /* borrowed */
  GArray *cols[C_COUNT];       /* borrowed, may be NULL */
  tm_frame_ref *frame_refs;    /* by frame index; 0: not yet */
  tm_callsite_ref *stack_refs; /* by stack index; 0: not yet */
  bool *stack_done;
  size_t n_frames, n_stacks;
  tm_thread_ref thread; /* 0 until its first sample or marker */
  int64_t pid, tid;
} resolve_ctx;

static bool cell(GArray *col, size_t i, double *out) {
  if (!col || i >= col->len)
    return false;
  double v = g_array_index(col, double, i);
  if (isnan(v))
    return false;
  *out = v;
  return true;
}

static bool cell_index(GArray *col, size_t i, size_t limit, size_t *out) {
  double v;
  if (!cell(col, i, &v) || v < 0 || v >= (double)limit || v != floor(v))
    return false;
  *out = (size_t)v;
  return true;
}

static const char *string_at(resolve_ctx *c, GArray *col, size_t i) {
  size_t s;
  if (!c->strings || !cell_index(col, i, c->strings->len, &s))
    return NULL;
  return g_ptr_array_index(c->strings, s);
}

static tm_str_id intern(gecko_reader *r, const char *s, size_t len) {
  return r->svc->intern_string(r->host, s, len);
}

static tm_frame_ref frame_ref(resolve_ctx *c, size_t frame) {
  if (c->frame_refs[frame])
    return c->frame_refs[frame];
  gecko_reader *r = c->r;
  const char *label = NULL;
  size_t func;
  GArray *funcs = c->cols[C_FUNC_NAME];
  if (c->cols[C_FRAME_FUNC] && c->cols[C_FRAME_FUNC]->len)
    label = cell_index(c->cols[C_FRAME_FUNC], frame, funcs ? funcs->len : 0, &func)
                ? string_at(c, funcs, func)
                : NULL;
  else
    label = string_at(c, c->cols[C_FRAME_LOCATION], frame);
  if (!label) {
    r->svc->stat_add(r->host, "gecko_invalid_frame", 1);
    label = "";
  }
  /* "func (in lib)": the function, and the library as its mapping. */
  size_t len = strlen(label);
  const char *in = g_strrstr(label, " (in ");
  tm_mapping_ref mapping;
  tm_str_id name;
  if (in && len > 0 && label[len - 1] == ')' && in > label) {
    const char *lib = in + 5;
    mapping = r->svc->mapping(r->host, intern(r, lib, (size_t)(label + len - 1 - lib)),
                              0, 0, 0, 0, 0);
    name = intern(r, label, (size_t)(in - label));
  } else {
    mapping = r->svc->mapping(r->host, r->str_gecko, 0, 0, 0, 0, 0);
    name = intern(r, label, len);
  }
  c->frame_refs[frame] = r->svc->frame(r->host, name, mapping, 0);
  return c->frame_refs[frame];
}

/* The callsite of stack `stack`, walking prefixes to the first one already
 * known; 0 (and a stat) for a broken chain. */
static tm_callsite_ref stack_ref(resolve_ctx *c, size_t stack) {
  if (c->stack_done[stack])
    return c->stack_refs[stack];
  GArray *path = g_array_new(FALSE, FALSE, sizeof(size_t));
  tm_callsite_ref parent = 0;
  bool broken = false;
  size_t s = stack;
  for (;;) {
    if (c->stack_done[s]) {
      parent = c->stack_refs[s];
      broken = parent == 0 && s != stack;
      break;
    }
    if (path->len > c->n_stacks) { /* a prefix cycle */
      broken = true;
      break;
    }
    g_array_append_val(path, s);
    size_t prefix;
    double v;
    if (!cell(c->cols[C_STACK_PREFIX], s, &v))
      break; /* the outermost frame */
    if (!cell_index(c->cols[C_STACK_PREFIX], s, c->n_stacks, &prefix)) {
      broken = true;
      break;
    }
    s = prefix;
  }
  for (guint i = path->len; i-- > 0;) {
    size_t at = g_array_index(path, size_t, i);
    size_t frame;
    tm_callsite_ref ref = 0;
    if (!broken && cell_index(c->cols[C_STACK_FRAME], at, c->n_frames, &frame))
      ref = c->r->svc->callsite(c->r->host, parent, frame_ref(c, frame));
    else
      broken = true;
    c->stack_refs[at] = ref;
    c->stack_done[at] = true;
    parent = ref;
  }
  g_array_free(path, TRUE);
  if (broken)
    c->r->svc->stat_add(c->r->host, "gecko_invalid_stack", 1);
  return c->stack_refs[stack];
}

static int64_t ms_to_ns(double ms) { return (int64_t)(ms * 1e6); }

/* A time in ms that fits int64 ns. */
static bool time_ok(double ms) { return isfinite(ms) && fabs(ms) < 9.2e12; }

/* The thread of the tables being resolved, made with its first kept sample
 * or marker (as upstream, which announces a thread with its first one). */
static tm_thread_ref ctx_thread(resolve_ctx *c) {
  if (!c->thread) {
    gecko_reader *r = c->r;
    c->thread = r->svc->thread(r->host, 0, c->pid, c->tid);
    if (c->t->name)
      r->svc->thread_set_name(r->host, c->thread,
                              intern(r, c->t->name, strlen(c->t->name)));
  }
  return c->thread;
}

/* A sample without a stack (null: the thread was not running, as samply
 * writes) is skipped, as trace_processor's Gecko importer skips it; one
 * whose stack index is out of range too, and counted. */
static void emit_samples(resolve_ctx *c) {
  gecko_reader *r = c->r;
  GArray *stacks = c->cols[C_SAMPLE_STACK];
  GArray *times = c->cols[C_SAMPLE_TIME];
  GArray *deltas = c->cols[C_SAMPLE_TIME_DELTA];
  size_t n = MAX(stacks ? stacks->len : 0,
                 MAX(times ? times->len : 0, deltas ? deltas->len : 0));
  double running = 0;
  for (size_t i = 0; i < n; i++) {
    double ms = 0, delta = 0;
    bool has_time;
    if (times && times->len) {
      has_time = cell(times, i, &ms);
    } else {
      has_time = cell(deltas, i, &delta);
      running += has_time ? delta : 0;
      ms = running;
    }
    if (!has_time || !time_ok(ms)) {
      r->svc->stat_add(r->host, "gecko_sample_without_time", 1);
      continue;
    }
    size_t stack;
    double raw;
    if (!cell(stacks, i, &raw))
      continue;
    if (!cell_index(stacks, i, c->n_stacks, &stack)) {
      r->svc->stat_add(r->host, "gecko_invalid_stack", 1);
      continue;
    }
    tm_callsite_ref callsite = stack_ref(c, stack);
    r->svc->sample(r->host, r->clock, ms_to_ns(ms), ctx_thread(c), callsite, -1);
  }
}

static tm_args_ref marker_args(gecko_reader *r, gecko_tables *t, guint *next,
                               uint32_t marker) {
  while (*next < t->marker_args->len &&
         g_array_index(t->marker_args, marker_arg, *next).marker < marker)
    (*next)++;
  bool any = false;
  while (*next < t->marker_args->len &&
         g_array_index(t->marker_args, marker_arg, *next).marker == marker) {
    marker_arg *a = &g_array_index(t->marker_args, marker_arg, *next);
    r->svc->args_add(r->host, a->key, a->value);
    any = true;
    (*next)++;
  }
  return any ? r->svc->args_commit(r->host) : TM_NO_ARGS;
}

static void emit_markers(resolve_ctx *c) {
  gecko_reader *r = c->r;
  GArray *names = c->cols[C_MARKER_NAME];
  size_t n = names ? names->len : 0;
  guint next_arg = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = string_at(c, names, i);
    double start = 0, end = 0, phase_v, cat_v;
    bool has_start = cell(c->cols[C_MARKER_START], i, &start) && time_ok(start);
    bool has_end = cell(c->cols[C_MARKER_END], i, &end) && time_ok(end);
    int phase;
    if (cell(c->cols[C_MARKER_PHASE], i, &phase_v))
      phase = phase_v >= 0 && phase_v <= 3 && phase_v == floor(phase_v) ? (int)phase_v : -1;
    else
      phase = has_end ? 1 : 0;
    bool time_needed_ok = phase == 3 ? has_end : phase == 1 ? has_start && has_end : has_start;
    if (!name || phase < 0 || !time_needed_ok) {
      r->svc->stat_add(r->host, "gecko_invalid_marker", 1);
      continue;
    }
    tm_str_id category = 0;
    size_t cat;
    if (cell_index(c->cols[C_MARKER_CATEGORY], i, r->categories->len, &cat))
      category = g_array_index(r->categories, tm_str_id, cat);
    else if (cell(c->cols[C_MARKER_CATEGORY], i, &cat_v))
      r->svc->stat_add(r->host, "gecko_invalid_marker_category", 1);
    tm_str_id name_id = intern(r, name, strlen(name));
    tm_track_desc desc = {
        TM_TRACK_DESC_INIT,
        .type = "firefox_marker",
        .name = name_id,
        .thread = ctx_thread(c),
        .scope = category,
    };
    tm_slice_fields f = {
        TM_SLICE_FIELDS_INIT,
        .track = r->svc->track_intern(r->host, &desc),
        .clock = r->clock,
        .name = name_id,
        .category = category,
        .args = marker_args(r, c->t, &next_arg, (uint32_t)i),
    };
    switch (phase) {
    case 0:
      f.ts = ms_to_ns(start);
      r->svc->slice_complete(r->host, &f, 0);
      break;
    case 1:
      f.ts = ms_to_ns(start);
      r->svc->slice_complete(r->host, &f, ms_to_ns(end) - f.ts);
      break;
    case 2:
      f.ts = ms_to_ns(start);
      r->svc->slice_begin(r->host, &f);
      break;
    default: /* 3: ends the innermost open marker of that name */
      f.ts = ms_to_ns(end);
      r->svc->slice_end(r->host, &f);
      break;
    }
  }
}

static int64_t thread_tid_or(gecko_tables *t, int64_t fallback) {
  return t->has_tid ? t->tid : fallback;
}

/* Turns a thread's tables into samples, callsites and marker slices. A
 * table the thread lacks is taken from "shared". */
static void resolve_thread(gecko_reader *r, gecko_tables *t) {
  gecko_tables *shared = r->shared;
  resolve_ctx c = {.r = r, .t = t};
  c.strings = t->strings ? t->strings : shared ? shared->strings : NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(column_names); i++) {
    int col = column_names[i].column;
    table_kind table = column_names[i].table;
    c.cols[col] = t->table_seen[table] || !shared ? t->columns[col]
                                                  : shared->columns[col];
  }
  size_t n_samples = 0, n_markers = 0;
  for (int col = C_SAMPLE_STACK; col <= C_SAMPLE_TIME_DELTA; col++)
    n_samples = MAX(n_samples, c.cols[col] ? c.cols[col]->len : 0);
  n_markers = c.cols[C_MARKER_NAME] ? c.cols[C_MARKER_NAME]->len : 0;
  if (n_samples == 0 && n_markers == 0)
    return; /* threads appear only with a sample or a marker */
  c.n_frames = MAX(c.cols[C_FRAME_FUNC] ? c.cols[C_FRAME_FUNC]->len : 0,
                   c.cols[C_FRAME_LOCATION] ? c.cols[C_FRAME_LOCATION]->len : 0);
  c.n_stacks = MAX(c.cols[C_STACK_FRAME] ? c.cols[C_STACK_FRAME]->len : 0,
                   c.cols[C_STACK_PREFIX] ? c.cols[C_STACK_PREFIX]->len : 0);
  c.frame_refs = g_new0(tm_frame_ref, c.n_frames + 1);
  c.stack_refs = g_new0(tm_callsite_ref, c.n_stacks + 1);
  c.stack_done = g_new0(bool, c.n_stacks + 1);

  c.pid = t->has_pid ? t->pid : 0;
  c.tid = thread_tid_or(t, c.pid);
  emit_samples(&c);
  emit_markers(&c);
  g_free(c.frame_refs);
  g_free(c.stack_refs);
  g_free(c.stack_done);
}

static void finish_current(gecko_reader *r) {
  gecko_tables *t = r->current;
  r->current = NULL;
  if (r->current_is_shared) {
    r->current_is_shared = false;
    tables_free(r->shared);
    r->shared = t;
    return;
  }
  /* A thread without its own strings may rely on "shared" tables that come
   * later in the document. */
  if (!t->strings && !r->shared) {
    g_ptr_array_add(r->deferred, t);
    return;
  }
  resolve_thread(r, t);
  tables_free(t);
}

static void resolve_deferred(gecko_reader *r) {
  for (guint i = 0; i < r->deferred->len; i++)
    resolve_thread(r, g_ptr_array_index(r->deferred, i));
  g_ptr_array_set_size(r->deferred, 0);
}

/* ---- the document walk -------------------------------------------------- */

static container *top(gecko_reader *r) {
  return r->depth ? &r->stack[r->depth - 1] : NULL;
}

static bool key_is(gecko_reader *r, const char *k) {
  return strcmp(r->key->str, k) == 0;
}

/* The role of a new container (or, for scalars, the role of the slot it
 * fills) given its parent. */
static container child_of(gecko_reader *r, bool is_map) {
  container child = {.role = R_SKIP, .is_array = !is_map, .column = -1};
  container *p = top(r);
  if (!p) {
    child.role = is_map ? R_ROOT : R_SKIP;
    return child;
  }
  switch (p->role) {
  case R_ROOT:
    if (key_is(r, "meta") && is_map)
      child.role = R_META;
    else if (key_is(r, "threads") && !is_map)
      child.role = R_THREADS;
    else if (key_is(r, "shared") && is_map)
      child.role = R_THREAD;
    else if (key_is(r, "profile") && is_map && r->depth == 1)
      child.role = R_ROOT; /* the DevTools wrapper */
    break;
  case R_META:
    if (key_is(r, "categories") && !is_map)
      child.role = R_CATEGORIES;
    break;
  case R_CATEGORIES:
    if (is_map)
      child.role = R_CATEGORY;
    break;
  case R_THREADS:
    if (is_map)
      child.role = R_THREAD;
    break;
  case R_THREAD:
    if ((key_is(r, "stringTable") || key_is(r, "stringArray")) && !is_map) {
      child.role = R_STRINGS;
      break;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(table_names); i++)
      if (key_is(r, table_names[i].name) && is_map) {
        child.role = R_TABLE;
        child.table = (uint8_t)table_names[i].table;
      }
    break;
  case R_TABLE:
    child.table = p->table;
    if (key_is(r, "schema") && is_map) {
      child.role = R_SCHEMA;
    } else if (key_is(r, "data") && !is_map) {
      child.role = p->table == T_MARKERS ? R_MARKER_DATA : R_ROWS;
    } else if (!is_map) {
      int col = column_by_name((table_kind)p->table, r->key->str);
      if (col >= 0) {
        child.role = R_COLUMN;
        child.column = (int8_t)col;
      }
    }
    break;
  case R_ROWS:
    if (!is_map) {
      child.role = R_ROW;
      child.table = p->table;
    }
    break;
  case R_MARKER_DATA:
    /* The processed form's data column: one object (or null) per marker.
     * The raw form's marker rows are arrays, which are not read. */
    if (is_map) {
      child.role = R_ARGS;
      child.marker = p->index;
      g_string_assign(r->args_key, "data");
      child.key_len = r->args_key->len;
    }
    break;
  case R_ARGS:
    child.role = R_ARGS;
    child.marker = p->marker;
    g_string_truncate(r->args_key, p->key_len);
    if (p->is_array)
      g_string_append_printf(r->args_key, "[%u]", p->index);
    else
      g_string_append_printf(r->args_key, ".%s", r->key->str);
    child.key_len = r->args_key->len;
    break;
  default:
    break;
  }
  return child;
}

static int push(gecko_reader *r, bool is_map) {
  if (r->depth >= MAX_DEPTH)
    return fail(r, "Gecko profile nested deeper than %d levels", MAX_DEPTH);
  container *p = top(r);
  container child = child_of(r, is_map);
  if (!p) {
    if (!is_map)
      return fail(r, "not a Gecko profile: the document is not a JSON object");
    r->saw_root = true;
  }
  if (child.role == R_THREADS)
    r->saw_threads = true;
  if (child.role == R_THREAD) {
    /* yajl has consumed the thread's '{' when it calls back. */
    r->table_start = r->bytes_before + (int64_t)yajl_get_bytes_consumed(r->yajl) - 1;
    tables_free(r->current);
    r->current = tables_new();
    r->current_is_shared = p->role == R_ROOT;
  }
  if (child.role == R_CATEGORY) {
    tm_str_id unnamed = 0;
    g_array_append_val(r->categories, unnamed);
  }
  if (child.role == R_TABLE)
    r->current->table_seen[child.table] = true;
  if (child.role == R_ROW)
    child.index = 0;
  /* A container inside a column or a row takes one slot. */
  if (p && (p->role == R_COLUMN))
    column_set(r->current, p->column, column_of(r->current, p->column)->len, NAN);
  r->stack[r->depth++] = child;
  return 1;
}

static int on_start_map(void *ctx) { return push(ctx, true); }
static int on_start_array(void *ctx) { return push(ctx, false); }

static int on_end(void *ctx) {
  gecko_reader *r = ctx;
  container *c = top(r);
  if (!c)
    return fail(r, "unbalanced JSON");
  uint8_t role = c->role;
  r->depth--;
  if (role == R_THREAD)
    r->table_start = -1;
  if (role == R_THREAD && r->current)
    finish_current(r);
  else if (role == R_ROW)
    r->current->rows[c->table]++;
  else if (role == R_ROOT)
    resolve_deferred(r);
  container *p = top(r);
  if (p && p->is_array)
    p->index++;
  return 1;
}

static int on_map_key(void *ctx, const unsigned char *s, size_t len) {
  gecko_reader *r = ctx;
  g_string_truncate(r->key, 0);
  g_string_append_len(r->key, (const char *)s, (gssize)len);
  return 1;
}

static void add_marker_arg(gecko_reader *r, container *p, tm_arg_value v) {
  g_string_truncate(r->args_key, p->key_len);
  if (p->is_array)
    g_string_append_printf(r->args_key, "[%u]", p->index);
  else
    g_string_append_printf(r->args_key, ".%s", r->key->str);
  marker_arg a = {
      .marker = p->marker,
      .key = intern(r, r->args_key->str, r->args_key->len),
      .value = v,
  };
  g_array_append_val(r->current->marker_args, a);
}

/* A scalar: a number (as double, with `iv` exact when is_int), a string,
 * a bool or null. */
typedef struct scalar {
  enum { S_NULL, S_BOOL, S_INT, S_REAL, S_STRING } type;
  int64_t iv;
  double dv;
  const char *s;
  size_t len;
} scalar;

static bool scalar_number(const scalar *v, double *out) {
  if (v->type == S_INT || v->type == S_REAL) {
    *out = v->dv;
    return true;
  }
  return false;
}

/* tid / pid: a number or a numeric string. */
static bool scalar_id(const scalar *v, int64_t *out) {
  if (v->type == S_INT) {
    *out = v->iv;
    return true;
  }
  if (v->type == S_STRING && v->len > 0 && v->len < 32) {
    char buf[32];
    memcpy(buf, v->s, v->len);
    buf[v->len] = '\0';
    char *end = NULL;
    gint64 n = g_ascii_strtoll(buf, &end, 10);
    if (end && *end == '\0') {
      *out = n;
      return true;
    }
  }
  return false;
}

static int on_scalar(gecko_reader *r, const scalar *v) {
  container *p = top(r);
  if (!p)
    return fail(r, "not a Gecko profile: the document is not a JSON object");
  double d;
  switch (p->role) {
  case R_CATEGORY:
    if (key_is(r, "name") && v->type == S_STRING)
      g_array_index(r->categories, tm_str_id, r->categories->len - 1) =
          intern(r, v->s, v->len);
    break;
  case R_CATEGORIES: { /* a category that is not an object: keep indexes */
    tm_str_id none = 0;
    g_array_append_val(r->categories, none);
    break;
  }
  case R_THREAD:
    if (key_is(r, "name") && v->type == S_STRING) {
      g_free(r->current->name);
      r->current->name = g_strndup(v->s, v->len);
    } else if (key_is(r, "tid")) {
      r->current->has_tid = scalar_id(v, &r->current->tid);
    } else if (key_is(r, "pid")) {
      r->current->has_pid = scalar_id(v, &r->current->pid);
    }
    break;
  case R_STRINGS:
    if (!r->current->strings)
      r->current->strings = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(r->current->strings,
                    v->type == S_STRING ? g_strndup(v->s, v->len) : g_strdup(""));
    break;
  case R_SCHEMA:
    if (v->type == S_INT && v->iv >= 0 && v->iv < MAX_SCHEMA) {
      int col = column_by_name((table_kind)p->table, r->key->str);
      r->current->schema[p->table][v->iv] = (int8_t)col;
    }
    break;
  case R_ROW:
    if (p->index < MAX_SCHEMA) {
      int col = r->current->schema[p->table][p->index];
      if (col >= 0)
        column_set(r->current, col, r->current->rows[p->table],
                   scalar_number(v, &d) ? d : NAN);
    }
    break;
  case R_COLUMN:
    column_set(r->current, p->column, column_of(r->current, p->column)->len,
               scalar_number(v, &d) ? d : NAN);
    break;
  case R_ARGS: {
    tm_arg_value value;
    switch (v->type) {
    case S_NULL:
      value.type = TM_ARG_JSON; /* skipped below */
      break;
    case S_BOOL:
      value = (tm_arg_value){.type = TM_ARG_BOOL, .u.int_value = v->iv};
      break;
    case S_INT:
      value = (tm_arg_value){.type = TM_ARG_INT, .u.int_value = v->iv};
      break;
    case S_REAL:
      value = (tm_arg_value){.type = TM_ARG_REAL, .u.real_value = v->dv};
      break;
    default:
      value = (tm_arg_value){.type = TM_ARG_STRING,
                             .u.str_id = intern(r, v->s, v->len)};
      break;
    }
    if (v->type != S_NULL)
      add_marker_arg(r, p, value);
    break;
  }
  default:
    break;
  }
  if (p->is_array)
    p->index++;
  return 1;
}

static int on_null(void *ctx) {
  scalar v = {.type = S_NULL};
  return on_scalar(ctx, &v);
}

static int on_boolean(void *ctx, int b) {
  scalar v = {.type = S_BOOL, .iv = b != 0};
  return on_scalar(ctx, &v);
}

static int on_integer(void *ctx, long long n) {
  scalar v = {.type = S_INT, .iv = n, .dv = (double)n};
  return on_scalar(ctx, &v);
}

static int on_double(void *ctx, double n) {
  scalar v = {.type = S_REAL, .dv = n};
  return on_scalar(ctx, &v);
}

static int on_string(void *ctx, const unsigned char *s, size_t len) {
  scalar v = {.type = S_STRING, .s = (const char *)s, .len = len};
  return on_scalar(ctx, &v);
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_integer = on_integer,
    .yajl_double = on_double,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

/* ---- the reader ABI ----------------------------------------------------- */

static void report_parse_error(gecko_reader *r, int64_t offset) {
  if (r->failed)
    return;
  unsigned char *detail = yajl_get_error(r->yajl, 0, NULL, 0);
  char *msg = g_strdup_printf("Syntactic error while parsing Gecko trace: %s",
                              detail ? g_strstrip((char *)detail) : "unknown");
  r->svc->report_error(r->host, offset, msg);
  g_free(msg);
  if (detail)
    yajl_free_error(r->yajl, detail);
  r->failed = true;
}

static bool has_prefix(const char *s, size_t n, const char *prefix) {
  size_t len = strlen(prefix);
  return n >= len && memcmp(s, prefix, len) == 0;
}

static bool is_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int gecko_probe(const uint8_t *head, size_t len, const char *file_name) {
  (void)file_name;
  char stripped[16];
  size_t n = 0;
  for (size_t i = 0; i < len && i < 128 && n < sizeof stripped; i++)
    if (!is_space(head[i]))
      stripped[n++] = (char)head[i];
  if (has_prefix(stripped, n, "{\"meta\"") || has_prefix(stripped, n, "{\"libs\""))
    return PROBE_SCORE;
  if (!has_prefix(stripped, n, "{\"label\""))
    return 0;
  /* The DevTools wrapper, when its "profile" starts inside the window. */
  static const char needle[] = "\"profile\"";
  for (size_t i = 0; i + sizeof needle - 1 < len; i++) {
    if (memcmp(head + i, needle, sizeof needle - 1) != 0)
      continue;
    size_t j = i + sizeof needle - 1;
    while (j < len && (is_space(head[j]) || head[j] == ':' || head[j] == '{'))
      j++;
    if (j + 6 <= len && (memcmp(head + j, "\"libs\"", 6) == 0 ||
                         memcmp(head + j, "\"meta\"", 6) == 0))
      return PROBE_SCORE;
  }
  return 0;
}

static void gecko_close(void *state);

static void *gecko_open(const tm_host_services *services, tm_host *host,
                        const uint8_t *config, size_t config_len) {
  (void)config;
  (void)config_len;
  gecko_reader *r = g_new0(gecko_reader, 1);
  r->svc = services;
  r->host = host;
  r->yajl = yajl_alloc(&callbacks, NULL, r);
  r->key = g_string_new(NULL);
  r->args_key = g_string_new(NULL);
  r->categories = g_array_new(FALSE, FALSE, sizeof(tm_str_id));
  r->deferred = g_ptr_array_new_with_free_func((GDestroyNotify)tables_free);
  r->clock = services->clock_private(host);
  r->str_gecko = services->intern_string(host, "gecko", 5);
  r->table_start = -1;
  r->max_record = DEFAULT_MAX_RECORD;
  if (TM_HOST_HAS(services, budget) && services->budget != NULL) {
    int64_t budget = services->budget(host, TM_BUDGET_RECORD_BYTES);
    if (budget > 0)
      r->max_record = (uint64_t)budget;
  }
  return r;
}

static tm_status gecko_feed(void *state, const uint8_t *data, size_t len) {
  gecko_reader *r = state;
  if (r->failed)
    return TM_ERROR;
  yajl_status status = yajl_parse(r->yajl, data, len);
  if (status != yajl_status_ok) {
    report_parse_error(r, r->bytes_before + (int64_t)yajl_get_bytes_consumed(r->yajl));
    return TM_ERROR;
  }
  r->bytes_before += (int64_t)len;
  /* A thread's tables are held until its object ends. */
  if (r->table_start >= 0 && (uint64_t)(r->bytes_before - r->table_start) > r->max_record) {
    r->svc->stat_add(r->host, "reader_record_size_exceeded", 1);
    char *msg = g_strdup_printf("a Gecko thread longer than %" G_GUINT64_FORMAT
                                " bytes (budget --max-record-size)",
                                r->max_record);
    r->svc->report_error(r->host, r->table_start, msg);
    g_free(msg);
    r->failed = true;
    return TM_ERROR;
  }
  return TM_OK;
}

static tm_status gecko_finish(void *state) {
  gecko_reader *r = state;
  if (r->failed)
    return TM_ERROR;
  yajl_status status = yajl_complete_parse(r->yajl);
  if (status != yajl_status_ok) {
    report_parse_error(r, r->bytes_before);
    return TM_ERROR;
  }
  if (!r->saw_root || !r->saw_threads) {
    r->svc->report_error(r->host, r->bytes_before,
                         "not a Gecko profile: no \"threads\" array");
    r->failed = true;
    return TM_ERROR;
  }
  return TM_OK;
}

static void gecko_close(void *state) {
  gecko_reader *r = state;
  if (!r)
    return;
  yajl_free(r->yajl);
  g_string_free(r->key, TRUE);
  g_string_free(r->args_key, TRUE);
  g_array_free(r->categories, TRUE);
  g_ptr_array_free(r->deferred, TRUE);
  tables_free(r->current);
  tables_free(r->shared);
  g_free(r);
}

static const tm_reader_stat gecko_stats[] = {
    TM_READER_STAT("gecko_invalid_stack", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A Gecko sample's stack index, or a prefix on its chain, named no "
        "stack; the sample was kept without a callsite."),
    TM_READER_STAT("gecko_invalid_frame", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A Gecko frame's function or label named no string; the frame has an "
        "empty name."),
    TM_READER_STAT("gecko_sample_without_time", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A Gecko sample had no usable time; dropped."),
    TM_READER_STAT("gecko_invalid_marker", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A Gecko marker had no name, an unknown phase or lacked the times its "
        "phase needs; dropped."),
    TM_READER_STAT("gecko_invalid_marker_category", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A Gecko marker's category index named no meta.categories entry; the "
        "slice has no category."),
};

static const tm_reader_descriptor gecko_descriptor = {
    TM_READER_DESCRIPTOR_INIT,
    .flags = TM_READER_CLOCKLESS,
    .name = "gecko",
    .description = "Gecko / Firefox Profiler JSON (raw, processed, DevTools export)",
    .probe = gecko_probe,
    .open = gecko_open,
    .feed = gecko_feed,
    .finish = gecko_finish,
    .close = gecko_close,
    .stats = gecko_stats,
    .n_stats = sizeof gecko_stats / sizeof gecko_stats[0],
};

TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  return &gecko_descriptor;
}
