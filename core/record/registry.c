/*
 * Process-wide registries (see registry.h) and the public calls that fill
 * them: tmr_track_create, tmr_process_track, tmr_mapping_intern,
 * tmr_callstack_intern. Invariant: an index handed out refers to an entry
 * whose fields were written before the index was published (the count is
 * stored with release order under the lock, read with acquire).
 */
#include "record/registry.h"

#include <glib.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config/protowire.h"

typedef struct paged {
  size_t elem_size;
  void *pages[TMR_REG_MAX_PAGES];
  _Atomic uint32_t count; /* entries 1..count exist */
} paged;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static paged tracks = {.elem_size = sizeof(tmr_track_entry)};
static paged srclocs = {.elem_size = sizeof(tmr_srcloc_entry)};
static paged mappings = {.elem_size = sizeof(tmr_mapping_entry)};
static paged frames = {.elem_size = sizeof(tmr_frame_entry)};
static paged callstacks = {.elem_size = sizeof(tmr_callstack_entry)};

/* Content → index, for the registries that intern by value. */
static GHashTable *mapping_index, *frame_index, *callstack_index;

static void *paged_at(paged *p, uint32_t index) {
  uint32_t i = index - 1;
  return (uint8_t *)p->pages[i / TMR_REG_PAGE_SIZE] + (size_t)(i % TMR_REG_PAGE_SIZE) * p->elem_size;
}

static const void *paged_get(paged *p, uint32_t index) {
  if (index == 0 || index > atomic_load_explicit(&p->count, memory_order_acquire))
    return NULL;
  return paged_at(p, index);
}

/* Appends a zeroed entry (lock held); returns its index, 0 when full. The
 * caller fills it, then publishes with paged_publish. */
static uint32_t paged_reserve(paged *p) {
  uint32_t n = atomic_load_explicit(&p->count, memory_order_relaxed);
  if (n >= TMR_REG_PAGE_SIZE * TMR_REG_MAX_PAGES)
    return 0;
  uint32_t page = n / TMR_REG_PAGE_SIZE;
  if (!p->pages[page])
    p->pages[page] = g_malloc0(TMR_REG_PAGE_SIZE * p->elem_size);
  return n + 1;
}

static void paged_publish(paged *p, uint32_t index) {
  atomic_store_explicit(&p->count, index, memory_order_release);
}

const tmr_track_entry *tmr_reg_track(uint32_t index) {
  return paged_get(&tracks, index);
}
const tmr_srcloc_entry *tmr_reg_srcloc(uint32_t index) {
  return paged_get(&srclocs, index);
}
const tmr_mapping_entry *tmr_reg_mapping(uint32_t index) {
  return paged_get(&mappings, index);
}
const tmr_frame_entry *tmr_reg_frame(uint32_t index) {
  return paged_get(&frames, index);
}
const tmr_callstack_entry *tmr_reg_callstack(uint32_t index) {
  return paged_get(&callstacks, index);
}

static tmr_blob *blob_of(const GByteArray *bytes) {
  tmr_blob *b = g_malloc(sizeof *b + bytes->len);
  b->len = bytes->len;
  memcpy(b->data, bytes->data, bytes->len);
  return b;
}

/* --- the process -------------------------------------------------------------- */

static pthread_once_t process_once = PTHREAD_ONCE_INIT;
static int64_t process_pid;
static char *process_name;
static char **process_cmdline;
static uint64_t process_uuid;
static uint32_t process_track_index;

static uint32_t add_track_locked(uint64_t uuid, uint32_t parent, tmr_blob *descriptor) {
  uint32_t index = paged_reserve(&tracks);
  if (!index) {
    g_free(descriptor);
    return 0;
  }
  tmr_track_entry *e = paged_at(&tracks, index);
  e->uuid = uuid;
  e->parent = parent;
  atomic_store_explicit(&e->descriptor, descriptor, memory_order_relaxed);
  paged_publish(&tracks, index);
  return index;
}

static void init_process(void) {
  process_pid = (int64_t)getpid();
  char *cmdline = NULL;
  gsize len = 0;
  if (g_file_get_contents("/proc/self/cmdline", &cmdline, &len, NULL) && len > 0) {
    GPtrArray *args = g_ptr_array_new();
    for (gsize i = 0; i < len; i += strlen(cmdline + i) + 1)
      g_ptr_array_add(args, g_strdup(cmdline + i));
    g_ptr_array_add(args, NULL);
    process_cmdline = (char **)g_ptr_array_free(args, FALSE);
  }
  g_free(cmdline);
  /* The program's name: argv[0]'s base name (comm is cut at 15 bytes). */
  if (process_cmdline && process_cmdline[0] && *process_cmdline[0]) {
    process_name = g_path_get_basename(process_cmdline[0]);
  } else {
    char *comm = NULL;
    if (g_file_get_contents("/proc/self/comm", &comm, NULL, NULL))
      process_name = g_strstrip(comm);
    else
      process_name = g_strdup(g_get_prgname() ? g_get_prgname() : "unknown");
  }
  /* A random 63-bit id: tracks of two processes never collide. */
  process_uuid = (((uint64_t)g_random_int() << 32) | g_random_int()) & INT64_MAX;
  if (!process_uuid)
    process_uuid = 1;

  GByteArray *d = g_byte_array_new();
  tm_wire_put_tag(d, 1, TM_WIRE_VARINT);
  tm_wire_put_varint(d, process_uuid);
  GByteArray *p = g_byte_array_new();
  tm_wire_put_tag(p, 1, TM_WIRE_VARINT);
  tm_wire_put_varint(p, (uint64_t)process_pid);
  for (char **arg = process_cmdline; arg && *arg; arg++)
    tm_wire_put_bytes(p, 2, *arg, strlen(*arg));
  tm_wire_put_bytes(p, 6, process_name, strlen(process_name));
  tm_wire_put_bytes(d, 3, p->data, p->len);
  pthread_mutex_lock(&registry_lock);
  process_track_index = add_track_locked(process_uuid, 0, blob_of(d));
  pthread_mutex_unlock(&registry_lock);
  g_byte_array_unref(p);
  g_byte_array_unref(d);
}

static void ensure_process(void) {
  pthread_once(&process_once, init_process);
}

int64_t tmr_reg_pid(void) {
  ensure_process();
  return process_pid;
}

const char *tmr_reg_process_name(void) {
  ensure_process();
  return process_name;
}

uint32_t tmr_reg_process_track(void) {
  ensure_process();
  return process_track_index;
}

tmr_track tmr_process_track(void) {
  uint32_t index = tmr_reg_process_track();
  return (tmr_track){tmr_reg_track(index)->uuid, index};
}

/* --- threads -------------------------------------------------------------------- */

static _Thread_local uint32_t thread_track_index;
static _Thread_local int64_t thread_tid;

int64_t tmr_reg_tid(void) {
  if (!thread_tid)
    thread_tid = (int64_t)syscall(SYS_gettid);
  return thread_tid;
}

static tmr_blob *thread_descriptor(uint64_t uuid, int64_t pid, int64_t tid, const char *name) {
  GByteArray *d = g_byte_array_new();
  tm_wire_put_tag(d, 1, TM_WIRE_VARINT);
  tm_wire_put_varint(d, uuid);
  GByteArray *t = g_byte_array_new();
  tm_wire_put_tag(t, 1, TM_WIRE_VARINT);
  tm_wire_put_varint(t, (uint64_t)pid);
  tm_wire_put_tag(t, 2, TM_WIRE_VARINT);
  tm_wire_put_varint(t, (uint64_t)tid);
  if (name && *name)
    tm_wire_put_bytes(t, 5, name, strlen(name));
  tm_wire_put_bytes(d, 4, t->data, t->len);
  tmr_blob *b = blob_of(d);
  g_byte_array_unref(t);
  g_byte_array_unref(d);
  return b;
}

static char *current_thread_name(int64_t tid) {
  g_autofree char *path = g_strdup_printf("/proc/self/task/%" G_GINT64_FORMAT "/comm", tid);
  char *comm = NULL;
  if (g_file_get_contents(path, &comm, NULL, NULL))
    return g_strstrip(comm);
  return NULL;
}

uint32_t tmr_reg_thread_track(void) {
  if (thread_track_index)
    return thread_track_index;
  ensure_process();
  int64_t tid = tmr_reg_tid();
  g_autofree char *name = current_thread_name(tid);
  uint64_t uuid = process_uuid ^ (uint64_t)tid;
  pthread_mutex_lock(&registry_lock);
  thread_track_index = add_track_locked(uuid, 0, thread_descriptor(uuid, process_pid, tid, name));
  pthread_mutex_unlock(&registry_lock);
  return thread_track_index;
}

tmr_track tmr_this_thread_track(void) {
  uint32_t index = tmr_reg_thread_track();
  const tmr_track_entry *e = tmr_reg_track(index);
  return e ? (tmr_track){e->uuid, index} : (tmr_track){0, 0};
}

void tmr_reg_rename_thread(const char *name) {
  uint32_t index = tmr_reg_thread_track();
  tmr_track_entry *e = index ? paged_at(&tracks, index) : NULL;
  if (!e)
    return;
  /* The old descriptor may be read by another writer right now: it is
   * retired, not freed (renames are rare). */
  static GPtrArray *retired;
  tmr_blob *fresh = thread_descriptor(e->uuid, process_pid, tmr_reg_tid(), name);
  pthread_mutex_lock(&registry_lock);
  if (!retired)
    retired = g_ptr_array_new();
  g_ptr_array_add(retired, (gpointer)atomic_load(&e->descriptor));
  atomic_store_explicit(&e->descriptor, fresh, memory_order_release);
  atomic_fetch_add_explicit(&e->version, 1, memory_order_release);
  pthread_mutex_unlock(&registry_lock);
}

/* --- custom tracks ----------------------------------------------------------------- */

tmr_track tmr_track_create(const tmr_track_desc *desc) {
  tmr_track none = {0, 0};
  if (!desc)
    return none;
  ensure_process();
  uint32_t parent = 0;
  if (desc->parent.uuid) {
    const tmr_track_entry *pe = tmr_reg_track(desc->parent.index_);
    if (!pe || pe->uuid != desc->parent.uuid)
      return none;
    parent = desc->parent.index_;
  }
  pthread_mutex_lock(&registry_lock);
  uint32_t index = paged_reserve(&tracks);
  if (!index) {
    pthread_mutex_unlock(&registry_lock);
    return none;
  }
  /* A track of one of this process' threads is that thread's own track
   * (the uuid its writers use, process ^ tid); other chosen uuids differ
   * from every thread track's (tid < 2^32). */
  bool own_thread = desc->tid && (!desc->pid || desc->pid == process_pid);
  uint64_t uuid = desc->uuid        ? desc->uuid
                  : own_thread ? process_uuid ^ (uint64_t)desc->tid
                               : process_uuid ^ ((uint64_t)index << 32);
  GByteArray *d = g_byte_array_new();
  tm_wire_put_tag(d, 1, TM_WIRE_VARINT);
  tm_wire_put_varint(d, uuid);
  if (parent) {
    tm_wire_put_tag(d, 5, TM_WIRE_VARINT);
    tm_wire_put_varint(d, desc->parent.uuid);
  }
  if (desc->name)
    tm_wire_put_bytes(d, 2, desc->name, strlen(desc->name));
  if (desc->description)
    tm_wire_put_bytes(d, 14, desc->description, strlen(desc->description));
  if (desc->tid) {
    GByteArray *t = g_byte_array_new();
    tm_wire_put_tag(t, 1, TM_WIRE_VARINT);
    tm_wire_put_varint(t, (uint64_t)(desc->pid ? desc->pid : process_pid));
    tm_wire_put_tag(t, 2, TM_WIRE_VARINT);
    tm_wire_put_varint(t, (uint64_t)desc->tid);
    if (desc->thread_name)
      tm_wire_put_bytes(t, 5, desc->thread_name, strlen(desc->thread_name));
    tm_wire_put_bytes(d, 4, t->data, t->len);
    g_byte_array_unref(t);
  }
  if (desc->is_counter) {
    GByteArray *c = g_byte_array_new();
    if (desc->unit) {
      tm_wire_put_tag(c, 3, TM_WIRE_VARINT);
      tm_wire_put_varint(c, (uint64_t)desc->unit);
    }
    if (desc->unit_multiplier) {
      tm_wire_put_tag(c, 4, TM_WIRE_VARINT);
      tm_wire_put_varint(c, (uint64_t)desc->unit_multiplier);
    }
    if (desc->is_incremental) {
      tm_wire_put_tag(c, 5, TM_WIRE_VARINT);
      tm_wire_put_varint(c, 1);
    }
    if (desc->unit_name)
      tm_wire_put_bytes(c, 6, desc->unit_name, strlen(desc->unit_name));
    if (desc->y_axis_share_key)
      tm_wire_put_bytes(c, 7, desc->y_axis_share_key, strlen(desc->y_axis_share_key));
    tm_wire_put_bytes(d, 8, c->data, c->len);
    g_byte_array_unref(c);
  }
  if (desc->child_ordering) {
    tm_wire_put_tag(d, 11, TM_WIRE_VARINT);
    tm_wire_put_varint(d, (uint64_t)desc->child_ordering);
  }
  if (desc->has_sibling_order_rank) {
    tm_wire_put_tag(d, 12, TM_WIRE_VARINT);
    tm_wire_put_varint(d, (uint64_t)(int64_t)desc->sibling_order_rank);
  }
  if (desc->merge_behavior) {
    tm_wire_put_tag(d, 15, TM_WIRE_VARINT);
    tm_wire_put_varint(d, (uint64_t)desc->merge_behavior);
  }
  if (desc->sibling_merge_key)
    tm_wire_put_bytes(d, 16, desc->sibling_merge_key, strlen(desc->sibling_merge_key));
  tmr_track_entry *e = paged_at(&tracks, index);
  e->uuid = uuid;
  e->parent = parent;
  atomic_store_explicit(&e->descriptor, blob_of(d), memory_order_relaxed);
  paged_publish(&tracks, index);
  pthread_mutex_unlock(&registry_lock);
  g_byte_array_unref(d);
  return (tmr_track){uuid, index};
}

/* --- source locations ---------------------------------------------------------------- */

uint32_t tmr_reg_srcloc_index(tmr_source_location *loc) {
  uint32_t id = atomic_load_explicit(&loc->id_, memory_order_acquire);
  if (id)
    return id;
  pthread_mutex_lock(&registry_lock);
  id = atomic_load_explicit(&loc->id_, memory_order_relaxed);
  if (!id) {
    id = paged_reserve(&srclocs);
    if (id) {
      tmr_srcloc_entry *e = paged_at(&srclocs, id);
      e->file_name = g_strdup(loc->file_name);
      e->function_name = g_strdup(loc->function_name);
      e->line_number = loc->line_number;
      paged_publish(&srclocs, id);
      atomic_store_explicit(&loc->id_, id, memory_order_release);
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return id;
}

/* --- mappings, frames, callstacks ---------------------------------------------------------- */

static void ensure_indexes_locked(void) {
  if (!mapping_index) {
    mapping_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    frame_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    callstack_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  }
}

tmr_mapping tmr_mapping_intern(const char *build_id, const char *path, uint64_t start,
                               uint64_t end, uint64_t exact_offset, uint64_t load_bias) {
  g_autofree char *key = g_strdup_printf(
      "%s\x1f%s\x1f%" G_GUINT64_FORMAT "\x1f%" G_GUINT64_FORMAT "\x1f%" G_GUINT64_FORMAT
      "\x1f%" G_GUINT64_FORMAT "\x1f%d%d",
      build_id ? build_id : "", path ? path : "", start, end, exact_offset, load_bias,
      build_id != NULL, path != NULL);
  pthread_mutex_lock(&registry_lock);
  ensure_indexes_locked();
  uint32_t id = GPOINTER_TO_UINT(g_hash_table_lookup(mapping_index, key));
  if (!id) {
    id = paged_reserve(&mappings);
    if (id) {
      tmr_mapping_entry *e = paged_at(&mappings, id);
      e->build_id = g_strdup(build_id);
      e->path = g_strdup(path);
      e->start = start;
      e->end = end;
      e->exact_offset = exact_offset;
      e->load_bias = load_bias;
      paged_publish(&mappings, id);
      g_hash_table_insert(mapping_index, g_steal_pointer(&key), GUINT_TO_POINTER(id));
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return id;
}

static uint32_t frame_locked(const tmr_frame *f) {
  g_autofree char *key = g_strdup_printf("%s\x1f%u\x1f%" G_GUINT64_FORMAT,
                                         f->function_name ? f->function_name : "", f->mapping,
                                         f->rel_pc);
  uint32_t id = GPOINTER_TO_UINT(g_hash_table_lookup(frame_index, key));
  if (id)
    return id;
  id = paged_reserve(&frames);
  if (!id)
    return 0;
  tmr_frame_entry *e = paged_at(&frames, id);
  e->function_name = g_strdup(f->function_name ? f->function_name : "");
  e->mapping = tmr_reg_mapping(f->mapping) ? f->mapping : 0;
  e->rel_pc = f->rel_pc;
  paged_publish(&frames, id);
  g_hash_table_insert(frame_index, g_steal_pointer(&key), GUINT_TO_POINTER(id));
  return id;
}

tmr_callstack tmr_callstack_intern(const tmr_frame *frame_list, size_t n_frames) {
  if (!frame_list || n_frames == 0 || n_frames > 4096)
    return 0;
  pthread_mutex_lock(&registry_lock);
  ensure_indexes_locked();
  uint32_t *ids = g_new(uint32_t, n_frames);
  GString *key = g_string_new(NULL);
  uint32_t id = 0;
  for (size_t i = 0; i < n_frames; i++) {
    ids[i] = frame_locked(&frame_list[i]);
    if (!ids[i])
      goto out;
    g_string_append_printf(key, "%u,", ids[i]);
  }
  id = GPOINTER_TO_UINT(g_hash_table_lookup(callstack_index, key->str));
  if (!id) {
    id = paged_reserve(&callstacks);
    if (id) {
      tmr_callstack_entry *e = paged_at(&callstacks, id);
      e->n_frames = (uint32_t)n_frames;
      e->frames = g_steal_pointer(&ids);
      paged_publish(&callstacks, id);
      g_hash_table_insert(callstack_index, g_string_free(g_steal_pointer(&key), FALSE),
                          GUINT_TO_POINTER(id));
    }
  }
out:
  pthread_mutex_unlock(&registry_lock);
  g_free(ids);
  if (key)
    g_string_free(key, TRUE);
  return id;
}

/* --- categories -------------------------------------------------------------------------- */

static tmr_category *category_list;
static uint32_t category_count;
static tmr_category_filter current_filter;
static void *current_filter_user;

static uint32_t category_state(const tmr_category *c) {
  return current_filter && current_filter(current_filter_user, c) ? 2 : 1;
}

uint32_t tmr_reg_category_index(tmr_category *category) {
  pthread_mutex_lock(&registry_lock);
  if (!category->index_) {
    category->index_ = ++category_count;
    category->next_ = category_list;
    category_list = category;
    atomic_store_explicit(&category->state_, category_state(category), memory_order_release);
  }
  uint32_t index = category->index_;
  pthread_mutex_unlock(&registry_lock);
  return index;
}

void tmr_reg_apply_categories(tmr_category_filter filter, void *user) {
  pthread_mutex_lock(&registry_lock);
  current_filter = filter;
  current_filter_user = user;
  for (tmr_category *c = category_list; c; c = c->next_)
    atomic_store_explicit(&c->state_, category_state(c), memory_order_release);
  pthread_mutex_unlock(&registry_lock);
}

uint32_t tmr_reg_count_categories(void) {
  pthread_mutex_lock(&registry_lock);
  uint32_t n = category_count;
  pthread_mutex_unlock(&registry_lock);
  return n;
}
