/*
 * Apple Instruments reader (trace_type "instruments_xml"): the XML that
 * `xctrace export` writes for time-profile / cpu-profile tables.
 *
 * Streaming: GLib's GMarkupParseContext is fed chunk by chunk; the reader
 * keeps only the id/ref caches of the document (every element defined with
 * id="N" may be reused later by ref="N", per element kind), which are
 * bounded by the distinct values the file defines, and the row being read.
 *
 * A <row> with a backtrace is a sample of its thread; its stack is the
 * backtrace's frames, leaf first. A <tagged-backtrace> wraps a
 * <backtrace>; a later ref to the tagged one resolves to the inner
 * backtrace's frames. Older exports give <text-addresses> lists instead of
 * frames: each non-zero address becomes a frame named by its hex address.
 * A frame's rel_pc is addr - load-addr of its binary (minus 1 for non-leaf
 * frames); its mapping is the binary (start = load-addr, end unknown: the
 * highest address of a mapping is only known at the end of the file, after
 * its frames were interned, so end = start).
 *
 * Clock: clockless (docs/formats.md §5.2): times are ns on the file's private
 * clock. Rows without a backtrace (signposts, interval tables) yield no
 * event; a signpost of subsystem dev.perfetto.clock_sync whose
 * os-log-metadata holds one uint64 adds the snapshot {private clock = row
 * time, BOOTTIME = value} (values going backwards skipped and counted), so
 * such a file is tied to its machine's BOOTTIME.
 *
 * Bad input: an unknown ref counts instruments_unknown_ref and leaves the
 * element empty; rows missing their thread, process, time or backtrace
 * count instruments_row_missing_* and are skipped; malformed XML stops the
 * file with GMarkup's message (line and character).
 *
 * Budget (TM_BUDGET_RECORD_BYTES): the bytes GMarkup holds for one
 * unfinished token (fed in pieces of at most 64 KiB, a piece during which
 * no element or text completed counts as held), the text of one element,
 * and all frames the backtraces hold, which refs can multiply (each
 * <text-addresses ref> appends the whole list again): past the budget the
 * file stops there (stat reader_record_size_exceeded).
 */
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <tracemerge/plugin.h>

#define PROBE_SCORE 900
#define MAX_DEPTH 256
#define DEFAULT_MAX_RECORD ((uint64_t)512 << 20)
#define FEED_PIECE ((size_t)64 * 1024)

typedef enum kind {
  K_OTHER = 0,
  K_ROW,
  K_TIME, /* sample-time, event-time */
  K_THREAD,
  K_TID,
  K_PROCESS,
  K_PID,
  K_CORE,
  K_BACKTRACE,
  K_TAGGED,
  K_FRAME,
  K_BINARY,
  K_TEXT_ADDRESSES,
  K_SUBSYSTEM,
  K_OS_LOG_METADATA,
  K_UINT64,
  K_COUNT,
} kind;

static const struct {
  const char *name;
  kind kind;
} element_kinds[] = {
    {"row", K_ROW},
    {"sample-time", K_TIME},
    {"event-time", K_TIME},
    {"thread", K_THREAD},
    {"tid", K_TID},
    {"process", K_PROCESS},
    {"pid", K_PID},
    {"core", K_CORE},
    {"backtrace", K_BACKTRACE},
    {"tagged-backtrace", K_TAGGED},
    {"frame", K_FRAME},
    {"binary", K_BINARY},
    {"text-addresses", K_TEXT_ADDRESSES},
    {"subsystem", K_SUBSYSTEM},
    {"os-log-metadata", K_OS_LOG_METADATA},
    {"uint64", K_UINT64},
};

typedef struct binary_info {
  tm_str_id path;
  tm_str_id uuid;
  uint64_t load_addr;
  tm_mapping_ref mapping; /* 0 until first used */
} binary_info;

typedef struct frame_info {
  tm_str_id name;
  uint64_t addr;
  binary_info *binary; /* may be NULL */
} frame_info;

typedef struct process_info {
  bool has_pid;
  int64_t pid;
  tm_str_id name;
} process_info;

typedef struct thread_info {
  bool has_tid;
  int64_t tid;
  tm_str_id name;
  process_info *process;
} thread_info;

typedef struct backtrace_info {
  GPtrArray *frames;        /* frame_info *, borrowed; leaf first */
  struct backtrace_info *alias; /* tagged-backtrace: its inner backtrace */
  bool resolved;
  tm_callsite_ref callsite;
} backtrace_info;

typedef struct text_info {
  GPtrArray *frames; /* frame_info *, borrowed */
} text_info;

typedef struct value_info {
  bool has_value;
  int64_t value;     /* K_UINT64: the bits of the unsigned value */
  tm_str_id text;    /* K_SUBSYSTEM */
} value_info;

/* One open element: its kind and the entry it defines or references
 * (NULL for an unknown ref or an uncached kind). */
typedef struct open_element {
  kind kind;
  void *entry;
  bool defining; /* id= (or no id/ref): children fill the entry */
} open_element;

typedef struct instruments_reader {
  const tm_host_services *svc;
  tm_host *host;
  GMarkupParseContext *markup;
  int64_t bytes_before;
  bool failed;
  bool saw_root;
  open_element stack[MAX_DEPTH];
  size_t depth;
  GString *text;
  GHashTable *cache[K_COUNT]; /* id string -> entry (borrowed) */
  GPtrArray *owned;           /* every entry, freed at close */
  GPtrArray *owned_arrays;    /* GPtrArray of entries' frames */
  /* The row being read. */
  bool in_row;
  value_info *row_time;
  thread_info *row_thread;
  process_info *row_process;
  value_info *row_core;
  backtrace_info *row_backtrace;
  bool row_has_backtrace;
  value_info *row_subsystem;
  value_info *row_sync_value;
  int row_sync_values; /* uint64 values inside os-log-metadata */
  /* dev.perfetto.clock_sync signposts (docs/formats.md §5.2). */
  tm_str_id str_clock_sync;
  bool has_last_sync;
  int64_t last_sync_boottime;
  tm_clock_ref clock;
  /* The record budget and what counts against it. */
  uint64_t max_record;
  uint64_t held_frames;   /* frame pointers in every backtrace */
  uint64_t callbacks;     /* elements and texts completed so far */
  uint64_t stalled_bytes; /* fed since the last one completed */
  const char *over_budget; /* what passed it, once it did */
} instruments_reader;

static kind kind_of(const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(element_kinds); i++)
    if (strcmp(element_kinds[i].name, name) == 0)
      return element_kinds[i].kind;
  return K_OTHER;
}

static tm_str_id intern(instruments_reader *r, const char *s) {
  return s ? r->svc->intern_string(r->host, s, strlen(s)) : 0;
}

static void *own(instruments_reader *r, size_t size) {
  void *p = g_malloc0(size);
  g_ptr_array_add(r->owned, p);
  return p;
}

static GPtrArray *own_array(instruments_reader *r) {
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(r->owned_arrays, a);
  return a;
}

static const char *attr(const char **names, const char **values,
                        const char *name) {
  for (size_t i = 0; names[i]; i++)
    if (strcmp(names[i], name) == 0)
      return values[i];
  return NULL;
}

static bool parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s)
    return false;
  char *end = NULL;
  guint64 v = g_ascii_strtoull(s, &end, 0); /* "0x..." or decimal */
  if (!end || end == s)
    return false;
  while (g_ascii_isspace(*end))
    end++;
  if (*end)
    return false;
  *out = v;
  return true;
}

static bool parse_i64(const char *s, int64_t *out) {
  if (!s)
    return false;
  while (g_ascii_isspace(*s))
    s++;
  char *end = NULL;
  gint64 v = g_ascii_strtoll(s, &end, 10);
  if (!end || end == s)
    return false;
  while (g_ascii_isspace(*end))
    end++;
  if (*end)
    return false;
  *out = v;
  return true;
}

static void *new_entry(instruments_reader *r, kind k) {
  switch (k) {
  case K_TIME:
  case K_CORE:
  case K_SUBSYSTEM:
  case K_UINT64:
    return own(r, sizeof(value_info));
  case K_THREAD:
    return own(r, sizeof(thread_info));
  case K_PROCESS:
    return own(r, sizeof(process_info));
  case K_BACKTRACE:
  case K_TAGGED: {
    backtrace_info *b = own(r, sizeof(backtrace_info));
    b->frames = own_array(r);
    return b;
  }
  case K_FRAME:
    return own(r, sizeof(frame_info));
  case K_BINARY:
    return own(r, sizeof(binary_info));
  case K_TEXT_ADDRESSES: {
    text_info *t = own(r, sizeof(text_info));
    t->frames = own_array(r);
    return t;
  }
  default:
    return NULL;
  }
}

/* The backtrace frames should be appended to: the innermost open one. */
static backtrace_info *open_backtrace(instruments_reader *r) {
  for (size_t i = r->depth; i-- > 0;) {
    open_element *e = &r->stack[i];
    if (e->kind == K_BACKTRACE || e->kind == K_TAGGED)
      return e->defining ? e->entry : NULL;
  }
  return NULL;
}

/* Counts `n` more frame pointers held; false once past the budget. */
static bool hold_frames(instruments_reader *r, uint64_t n) {
  r->held_frames += n;
  if (r->held_frames * sizeof(void *) <= r->max_record)
    return true;
  r->over_budget = "the backtraces' frames";
  return false;
}

static void append_frames(instruments_reader *r, backtrace_info *b, GPtrArray *frames) {
  if (!hold_frames(r, frames->len))
    return;
  for (guint i = 0; i < frames->len; i++)
    g_ptr_array_add(b->frames, g_ptr_array_index(frames, i));
}

static bool parent_is_metadata(instruments_reader *r) {
  for (size_t i = r->depth; i-- > 0;)
    if (r->stack[i].kind == K_OS_LOG_METADATA)
      return true;
  return false;
}

/* An element that references (or just defined) `entry` takes its place
 * in its parent. */
static void attach(instruments_reader *r, kind k, void *entry) {
  if (!entry)
    return;
  open_element *parent = r->depth ? &r->stack[r->depth - 1] : NULL;
  kind pk = parent ? parent->kind : K_OTHER;
  switch (k) {
  case K_TIME:
    if (pk == K_ROW)
      r->row_time = entry;
    break;
  case K_CORE:
    if (pk == K_ROW)
      r->row_core = entry;
    break;
  case K_SUBSYSTEM:
    if (r->in_row)
      r->row_subsystem = entry;
    break;
  case K_UINT64:
    if (r->in_row && parent_is_metadata(r)) {
      r->row_sync_value = entry;
      r->row_sync_values++;
    }
    break;
  case K_THREAD:
    if (pk == K_ROW)
      r->row_thread = entry;
    break;
  case K_PROCESS:
    if (pk == K_ROW)
      r->row_process = entry;
    else if (pk == K_THREAD && parent->defining && parent->entry)
      ((thread_info *)parent->entry)->process = entry;
    break;
  case K_BACKTRACE:
  case K_TAGGED:
    if (pk == K_ROW) {
      backtrace_info *b = entry;
      r->row_backtrace = b->alias ? b->alias : b;
    } else if (pk == K_TAGGED && parent->defining && parent->entry) {
      backtrace_info *tagged = parent->entry;
      backtrace_info *inner = entry;
      tagged->alias = inner->alias ? inner->alias : inner;
    }
    break;
  case K_FRAME: {
    backtrace_info *b = open_backtrace(r);
    if (b && hold_frames(r, 1))
      g_ptr_array_add(b->frames, entry);
    break;
  }
  case K_BINARY:
    if (pk == K_FRAME && parent->defining && parent->entry)
      ((frame_info *)parent->entry)->binary = entry;
    break;
  case K_TEXT_ADDRESSES: {
    backtrace_info *b = open_backtrace(r);
    if (b)
      append_frames(r, b, ((text_info *)entry)->frames);
    break;
  }
  default:
    break;
  }
}

static void on_start(GMarkupParseContext *ctx, const char *name,
                     const char **attr_names, const char **attr_values,
                     void *user_data, GError **error) {
  (void)ctx;
  instruments_reader *r = user_data;
  r->callbacks++;
  if (r->depth >= MAX_DEPTH) {
    g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                "elements nested deeper than %d levels", MAX_DEPTH);
    return;
  }
  if (r->depth == 0) {
    if (strcmp(name, "trace-query-result") != 0) {
      g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                  "not an xctrace export: root element <%s>", name);
      return;
    }
    r->saw_root = true;
  }
  kind k = kind_of(name);
  open_element e = {.kind = k, .defining = true};
  g_string_truncate(r->text, 0);
  if (k == K_ROW) {
    r->in_row = true;
    r->row_time = NULL;
    r->row_thread = NULL;
    r->row_process = NULL;
    r->row_core = NULL;
    r->row_backtrace = NULL;
    r->row_has_backtrace = false;
    r->row_subsystem = NULL;
    r->row_sync_value = NULL;
    r->row_sync_values = 0;
  } else if (k == K_BACKTRACE || k == K_TAGGED) {
    if (r->stack[r->depth - 1].kind == K_ROW)
      r->row_has_backtrace = true;
  }
  if (k != K_OTHER && k != K_ROW && k != K_TID && k != K_PID &&
      k != K_OS_LOG_METADATA) {
    const char *ref = attr(attr_names, attr_values, "ref");
    const char *id = attr(attr_names, attr_values, "id");
    if (ref) {
      e.defining = false;
      e.entry = g_hash_table_lookup(r->cache[k], ref);
      if (!e.entry)
        r->svc->stat_add(r->host, "instruments_unknown_ref", 1);
    } else {
      e.entry = new_entry(r, k);
      if (id)
        g_hash_table_replace(r->cache[k], g_strdup(id), e.entry);
      if (k == K_THREAD)
        ((thread_info *)e.entry)->name = intern(r, attr(attr_names, attr_values, "fmt"));
      else if (k == K_PROCESS)
        ((process_info *)e.entry)->name = intern(r, attr(attr_names, attr_values, "fmt"));
      else if (k == K_FRAME) {
        frame_info *f = e.entry;
        const char *fname = attr(attr_names, attr_values, "name");
        const char *addr = attr(attr_names, attr_values, "addr");
        parse_u64(addr, &f->addr);
        f->name = fname ? intern(r, fname) : intern(r, addr ? addr : "");
      } else if (k == K_BINARY) {
        binary_info *b = e.entry;
        const char *path = attr(attr_names, attr_values, "path");
        b->path = intern(r, path ? path : attr(attr_names, attr_values, "name"));
        b->uuid = intern(r, attr(attr_names, attr_values, "UUID"));
        parse_u64(attr(attr_names, attr_values, "load-addr"), &b->load_addr);
      }
    }
    /* Frames, binaries and references attach at once; elements whose
     * content is text attach when it is complete. */
    if (!e.defining || k == K_FRAME || k == K_BINARY)
      attach(r, k, e.entry);
  }
  r->stack[r->depth++] = e;
}

static void on_text(GMarkupParseContext *ctx, const char *text, gsize len,
                    void *user_data, GError **error) {
  (void)ctx;
  (void)error;
  instruments_reader *r = user_data;
  r->callbacks++;
  if (r->depth == 0)
    return;
  kind k = r->stack[r->depth - 1].kind;
  r->callbacks++;
  if (k == K_TIME || k == K_CORE || k == K_TID || k == K_PID ||
      k == K_TEXT_ADDRESSES || k == K_SUBSYSTEM || k == K_UINT64) {
    g_string_append_len(r->text, text, (gssize)len);
    if (r->text->len > r->max_record && !r->over_budget)
      r->over_budget = "an element's text";
  }
}

static void finish_text_element(instruments_reader *r, open_element *e) {
  int64_t v;
  switch (e->kind) {
  case K_TIME:
  case K_CORE:
    if (e->defining && e->entry && parse_i64(r->text->str, &v)) {
      ((value_info *)e->entry)->has_value = true;
      ((value_info *)e->entry)->value = v;
    }
    break;
  case K_SUBSYSTEM:
    if (e->defining && e->entry) {
      g_strstrip(r->text->str);
      ((value_info *)e->entry)->text = intern(r, r->text->str);
      ((value_info *)e->entry)->has_value = true;
    }
    break;
  case K_UINT64: {
    uint64_t u;
    if (e->defining && e->entry && parse_u64(g_strstrip(r->text->str), &u)) {
      ((value_info *)e->entry)->has_value = true;
      ((value_info *)e->entry)->value = (int64_t)u;
    }
    break;
  }
  case K_TID: {
    open_element *t = r->depth ? &r->stack[r->depth - 1] : NULL;
    if (t && t->kind == K_THREAD && t->defining && t->entry &&
        parse_i64(r->text->str, &v)) {
      ((thread_info *)t->entry)->has_tid = true;
      ((thread_info *)t->entry)->tid = v;
    }
    break;
  }
  case K_PID: {
    open_element *p = r->depth ? &r->stack[r->depth - 1] : NULL;
    if (p && p->kind == K_PROCESS && p->defining && p->entry &&
        parse_i64(r->text->str, &v)) {
      ((process_info *)p->entry)->has_pid = true;
      ((process_info *)p->entry)->pid = v;
    }
    break;
  }
  case K_TEXT_ADDRESSES:
    if (e->defining && e->entry) {
      text_info *t = e->entry;
      char **words = g_strsplit_set(r->text->str, " \t\r\n", -1);
      for (char **w = words; *w; w++) {
        uint64_t addr;
        if (!**w || !parse_u64(*w, &addr) || addr == 0)
          continue; /* 0 ends a fragment */
        frame_info *f = own(r, sizeof(frame_info));
        f->addr = addr;
        char name[24];
        g_snprintf(name, sizeof name, "0x%" G_GINT64_MODIFIER "x", addr);
        f->name = intern(r, name);
        g_ptr_array_add(t->frames, f);
      }
      g_strfreev(words);
    }
    break;
  default:
    break;
  }
}

static tm_frame_ref frame_ref(instruments_reader *r, frame_info *f, bool leaf) {
  tm_mapping_ref mapping = 0;
  uint64_t rel_pc = f->addr;
  if (f->binary) {
    binary_info *b = f->binary;
    if (!b->mapping)
      b->mapping = r->svc->mapping(r->host, b->path, b->uuid, b->load_addr,
                                   b->load_addr, 0, 0);
    mapping = b->mapping;
    if (f->addr >= b->load_addr)
      rel_pc = f->addr - b->load_addr - (leaf || f->addr == b->load_addr ? 0 : 1);
  }
  return r->svc->frame(r->host, f->name, mapping, rel_pc);
}

static tm_callsite_ref callsite_of(instruments_reader *r, backtrace_info *b) {
  if (b->resolved)
    return b->callsite;
  tm_callsite_ref parent = 0;
  for (guint i = b->frames->len; i-- > 0;) {
    frame_info *f = g_ptr_array_index(b->frames, i);
    parent = r->svc->callsite(r->host, parent, frame_ref(r, f, i == 0));
  }
  b->resolved = true;
  b->callsite = parent;
  return parent;
}

/* A dev.perfetto.clock_sync signpost: {private clock = row time, BOOTTIME
 * of the machine = its one uint64}; a value going backwards is skipped. */
static void finish_signpost(instruments_reader *r) {
  if (!r->row_subsystem || !r->row_subsystem->has_value ||
      r->row_subsystem->text != r->str_clock_sync)
    return;
  if (r->row_sync_values != 1 || !r->row_sync_value->has_value ||
      !r->row_time || !r->row_time->has_value) {
    r->svc->stat_add(r->host, "instruments_invalid_clock_sync", 1);
    return;
  }
  int64_t boottime = r->row_sync_value->value;
  if (boottime < 0 || (r->has_last_sync && boottime < r->last_sync_boottime)) {
    r->svc->stat_add(r->host, "instruments_invalid_clock_sync", 1);
    return;
  }
  r->has_last_sync = true;
  r->last_sync_boottime = boottime;
  tm_clock_ref clocks[2] = {
      r->clock, r->svc->clock_builtin(r->host, 0, TM_CLOCK_BOOTTIME)};
  int64_t values[2] = {r->row_time->value, boottime};
  r->svc->add_clock_snapshot(r->host, clocks, values, 2);
}

static void finish_row(instruments_reader *r) {
  r->in_row = false;
  if (!r->row_has_backtrace) {
    finish_signpost(r); /* interval rows yield nothing, as upstream */
    return;
  }
  if (!r->row_backtrace) {
    r->svc->stat_add(r->host, "instruments_row_missing_backtrace", 1);
    return;
  }
  if (!r->row_thread || !r->row_thread->has_tid) {
    r->svc->stat_add(r->host, "instruments_row_missing_thread", 1);
    return;
  }
  process_info *process = r->row_thread->process ? r->row_thread->process
                                                 : r->row_process;
  if (!process || !process->has_pid) {
    r->svc->stat_add(r->host, "instruments_row_missing_process", 1);
    return;
  }
  if (!r->row_time || !r->row_time->has_value) {
    r->svc->stat_add(r->host, "instruments_row_missing_time", 1);
    return;
  }
  if (r->row_backtrace->frames->len == 0)
    r->svc->stat_add(r->host, "instruments_row_missing_frame", 1);
  tm_process_ref p = r->svc->process(r->host, 0, process->pid);
  if (process->name)
    r->svc->process_set_name(r->host, p, process->name);
  tm_thread_ref t = r->svc->thread(r->host, 0, process->pid, r->row_thread->tid);
  if (r->row_thread->name)
    r->svc->thread_set_name(r->host, t, r->row_thread->name);
  int32_t cpu = -1;
  if (r->row_core && r->row_core->has_value && r->row_core->value >= 0 &&
      r->row_core->value <= INT32_MAX)
    cpu = (int32_t)r->row_core->value;
  r->svc->sample(r->host, r->clock, r->row_time->value, t,
                 callsite_of(r, r->row_backtrace), cpu);
}

static void on_end(GMarkupParseContext *ctx, const char *name, void *user_data,
                   GError **error) {
  (void)ctx;
  (void)name;
  (void)error;
  instruments_reader *r = user_data;
  if (r->depth == 0)
    return;
  open_element e = r->stack[--r->depth];
  finish_text_element(r, &e);
  g_string_truncate(r->text, 0);
  if (e.kind == K_ROW) {
    finish_row(r);
    return;
  }
  /* Defined elements other than frames and binaries attach when complete
   * (their children have filled them). */
  if (e.defining && e.kind != K_FRAME && e.kind != K_BINARY &&
      e.kind != K_OTHER && e.kind != K_TID && e.kind != K_PID)
    attach(r, e.kind, e.entry);
}

static const GMarkupParser parser = {
    .start_element = on_start,
    .end_element = on_end,
    .text = on_text,
};

/* ---- the reader ABI ----------------------------------------------------- */

static const char probe_prefix[] = "<?xml version=\"1.0\"?>\n<trace-query-result>";

static int instruments_probe(const uint8_t *head, size_t len,
                             const char *file_name) {
  (void)file_name;
  size_t n = sizeof probe_prefix - 1;
  return len >= n && memcmp(head, probe_prefix, n) == 0 ? PROBE_SCORE : 0;
}

static void instruments_close(void *state);

static void *instruments_open(const tm_host_services *services, tm_host *host,
                              const uint8_t *config, size_t config_len) {
  (void)config;
  (void)config_len;
  instruments_reader *r = g_new0(instruments_reader, 1);
  r->svc = services;
  r->host = host;
  r->markup = g_markup_parse_context_new(&parser, 0, r, NULL);
  r->text = g_string_new(NULL);
  for (int k = 0; k < K_COUNT; k++)
    r->cache[k] = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  r->owned = g_ptr_array_new_with_free_func(g_free);
  r->owned_arrays = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  r->clock = services->clock_private(host);
  r->max_record = DEFAULT_MAX_RECORD;
  if (TM_HOST_HAS(services, budget) && services->budget != NULL) {
    int64_t budget = services->budget(host, TM_BUDGET_RECORD_BYTES);
    if (budget > 0)
      r->max_record = (uint64_t)budget;
  }
  r->str_clock_sync = intern(r, "dev.perfetto.clock_sync");
  return r;
}

static tm_status fail(instruments_reader *r, int64_t offset, GError *error) {
  char *msg = g_strdup_printf("Error parsing Instruments XML: %s", error->message);
  r->svc->report_error(r->host, offset, msg);
  g_free(msg);
  g_error_free(error);
  r->failed = true;
  return TM_ERROR;
}

/* The record budget tripped at `offset`: counted, then the file's error. */
static tm_status fail_budget(instruments_reader *r, int64_t offset) {
  r->svc->stat_add(r->host, "reader_record_size_exceeded", 1);
  char *msg = g_strdup_printf("%s: more than %" G_GUINT64_FORMAT
                              " bytes held (budget --max-record-size)",
                              r->over_budget, r->max_record);
  r->svc->report_error(r->host, offset, msg);
  g_free(msg);
  r->failed = true;
  return TM_ERROR;
}

static tm_status instruments_feed(void *state, const uint8_t *data, size_t len) {
  instruments_reader *r = state;
  if (r->failed)
    return TM_ERROR;
  for (size_t at = 0; at < len;) {
    size_t n = MIN(len - at, FEED_PIECE);
    uint64_t callbacks = r->callbacks;
    GError *error = NULL;
    bool ok = g_markup_parse_context_parse(r->markup, (const char *)data + at,
                                           (gssize)n, &error);
    int64_t offset = r->bytes_before;
    r->bytes_before += (int64_t)n;
    at += n;
    if (r->over_budget) {
      g_clear_error(&error);
      return fail_budget(r, offset);
    }
    if (!ok)
      return fail(r, offset, error);
    /* GMarkup holds an unfinished token whole until it completes. */
    r->stalled_bytes = r->callbacks == callbacks ? r->stalled_bytes + n : 0;
    if (r->stalled_bytes > r->max_record) {
      r->over_budget = "an unfinished XML token";
      return fail_budget(r, offset);
    }
  }
  return TM_OK;
}

static tm_status instruments_finish(void *state) {
  instruments_reader *r = state;
  if (r->failed)
    return TM_ERROR;
  GError *error = NULL;
  if (!g_markup_parse_context_end_parse(r->markup, &error))
    return fail(r, r->bytes_before, error);
  if (!r->saw_root) {
    r->svc->report_error(r->host, r->bytes_before,
                         "not an xctrace export: no <trace-query-result>");
    r->failed = true;
    return TM_ERROR;
  }
  return TM_OK;
}

static void instruments_close(void *state) {
  instruments_reader *r = state;
  if (!r)
    return;
  g_markup_parse_context_free(r->markup);
  g_string_free(r->text, TRUE);
  for (int k = 0; k < K_COUNT; k++)
    g_hash_table_destroy(r->cache[k]);
  g_ptr_array_free(r->owned_arrays, TRUE);
  g_ptr_array_free(r->owned, TRUE);
  g_free(r);
}

static const tm_reader_stat instruments_stats[] = {
    TM_READER_STAT("instruments_unknown_ref", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "An Instruments element referenced an id never defined before; it was "
        "treated as absent."),
    TM_READER_STAT("instruments_row_missing_thread", TM_STAT_DATA_LOSS, TM_STAT_SOURCE_TRACE,
        "An Instruments sample row had no (resolvable) thread; skipped."),
    TM_READER_STAT("instruments_row_missing_process", TM_STAT_DATA_LOSS, TM_STAT_SOURCE_TRACE,
        "An Instruments sample row's thread had no process; skipped."),
    TM_READER_STAT("instruments_row_missing_backtrace", TM_STAT_DATA_LOSS, TM_STAT_SOURCE_TRACE,
        "An Instruments sample row's backtrace reference resolved to nothing; "
        "skipped."),
    TM_READER_STAT("instruments_row_missing_time", TM_STAT_DATA_LOSS, TM_STAT_SOURCE_TRACE,
        "An Instruments sample row had no sample time; skipped."),
    TM_READER_STAT("instruments_invalid_clock_sync", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A dev.perfetto.clock_sync signpost without exactly one uint64 or a "
        "time, or whose BOOTTIME value went backwards; skipped."),
    TM_READER_STAT("instruments_row_missing_frame", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        "An Instruments sample's backtrace had no frames; kept without a "
        "callsite."),
};

static const tm_reader_descriptor instruments_descriptor = {
    TM_READER_DESCRIPTOR_INIT,
    .flags = TM_READER_CLOCKLESS,
    .name = "instruments_xml",
    .description = "Apple Instruments xctrace export XML (time/cpu profile)",
    .probe = instruments_probe,
    .open = instruments_open,
    .feed = instruments_feed,
    .finish = instruments_finish,
    .close = instruments_close,
    .stats = instruments_stats,
    .n_stats = sizeof instruments_stats / sizeof instruments_stats[0],
    .sample_table = "instruments_sample",
};

TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  return &instruments_descriptor;
}
