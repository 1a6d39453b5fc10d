/*
 * Data sources: the registry of user data sources, the built-in
 * "track_event" (its category filter, the per-thread writers that
 * tmr_this_thread() hands out), and the instances a session starts.
 *
 * Invariants:
 * - At most one track_event instance runs in the process; while it runs,
 *   `te_serial` is its serial, else 0. A thread's cached writer is valid
 *   only while its serial equals `te_serial`, so stopping an instance
 *   invalidates every cache with one store.
 * - An instance is findable by serial (`instances_by_serial`) from its
 *   creation until its session frees it; a thread exiting releases its
 *   writers only through that table, so it never touches a freed writer.
 */
#include <pthread.h>
#include <string.h>

#include "record/registry.h"
#include "record/session_internal.h"

static pthread_mutex_t ds_lock = PTHREAD_MUTEX_INITIALIZER; /* registered, instances_by_serial, track_event_instance */
static GPtrArray *registered;          /* tmr_data_source_desc *, names owned */
static GHashTable *instances_by_serial; /* uint64 serial → instance */
static tmr_data_source_instance *track_event_instance;
static uint64_t next_instance_serial = 1;
static _Atomic uint64_t te_serial;

/* --- registration ------------------------------------------------------------ */

static tmr_data_source_desc *find_registered_locked(const char *name) {
  for (guint i = 0; registered && i < registered->len; i++) {
    tmr_data_source_desc *d = registered->pdata[i];
    if (!strcmp(d->name, name))
      return d;
  }
  return NULL;
}

bool tmr_register_data_source(const tmr_data_source_desc *desc, GError **error) {
  if (!desc || !desc->name || !desc->name[0] || !strcmp(desc->name, "track_event")) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "a data source needs a name other than \"track_event\"");
    return false;
  }
  pthread_mutex_lock(&ds_lock);
  bool taken = find_registered_locked(desc->name) != NULL;
  if (!taken) {
    if (!registered)
      registered = g_ptr_array_new();
    tmr_data_source_desc *copy = g_memdup2(desc, sizeof *desc);
    copy->name = g_strdup(desc->name);
    g_ptr_array_add(registered, copy);
  }
  pthread_mutex_unlock(&ds_lock);
  if (taken)
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "a data source named \"%s\" is already registered",
                desc->name);
  return !taken;
}

/* --- track_event's category filter ---------------------------------------------- */

static bool any_exact(char **list, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(list[i], s))
      return true;
  return false;
}

static bool any_pattern(char **list, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (g_pattern_match_simple(list[i], s))
      return true;
  return false;
}

static bool any_tag(char **list, size_t n, char **tags, bool exact) {
  for (char **t = tags; t && *t; t++)
    if (**t && (exact ? any_exact(list, n, *t) : any_pattern(list, n, *t)))
      return true;
  return false;
}

/* TrackEventConfig's rules, in their documented order (trace_config.proto). */
static bool category_filter(void *user, const tmr_category *category) {
  const tmr_data_source_instance *instance = user;
  const Perfetto__Protos__TrackEventConfig *c =
      instance->track_event_config ? instance->track_event_config->track_event_config : NULL;
  static char *default_disabled_tags[] = {"slow", "debug"};
  char **enabled_cats = c ? c->enabled_categories : NULL;
  size_t n_enabled_cats = c ? c->n_enabled_categories : 0;
  char **disabled_cats = c ? c->disabled_categories : NULL;
  size_t n_disabled_cats = c ? c->n_disabled_categories : 0;
  char **enabled_tags = c ? c->enabled_tags : NULL;
  size_t n_enabled_tags = c ? c->n_enabled_tags : 0;
  char **disabled_tags = c && c->n_disabled_tags ? c->disabled_tags : default_disabled_tags;
  size_t n_disabled_tags = c && c->n_disabled_tags ? c->n_disabled_tags : 2;
  const char *name = category->name ? category->name : "";
  g_auto(GStrv) tags = category->tags ? g_strsplit(category->tags, ",", -1) : NULL;
  for (char **t = tags; t && *t; t++)
    g_strstrip(*t);
  if (any_exact(enabled_cats, n_enabled_cats, name) ||
      any_tag(enabled_tags, n_enabled_tags, tags, true))
    return true;
  if (any_exact(disabled_cats, n_disabled_cats, name) ||
      any_tag(disabled_tags, n_disabled_tags, tags, true))
    return false;
  if (any_pattern(enabled_cats, n_enabled_cats, name) ||
      any_tag(enabled_tags, n_enabled_tags, tags, false))
    return true;
  if (any_pattern(disabled_cats, n_disabled_cats, name) ||
      any_tag(disabled_tags, n_disabled_tags, tags, false))
    return false;
  return true;
}

bool tmr_category_enabled_slow_(tmr_category *category) {
  if (!category)
    return atomic_load_explicit(&te_serial, memory_order_acquire) != 0;
  tmr_reg_category_index(category);
  return atomic_load_explicit(&category->state_, memory_order_acquire) == 2;
}

/* --- per-thread writers ------------------------------------------------------------- */

typedef struct tls_writer {
  uint64_t serial;
  tmr_writer *writer;
} tls_writer;

#define TLS_SLOTS 16
static _Thread_local tls_writer tls_track_event;
static _Thread_local tls_writer tls_slots[TLS_SLOTS];
static _Thread_local unsigned tls_next_slot;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* At thread exit: commit what the thread's writers hold, if their
 * instances still exist. */
static void release_thread_writers(void *unused) {
  (void)unused;
  pthread_mutex_lock(&ds_lock);
  for (unsigned i = 0; i < TLS_SLOTS; i++) {
    tls_writer *t = &tls_slots[i];
    if (t->writer && instances_by_serial &&
        g_hash_table_contains(instances_by_serial, &t->serial))
      tmr_writer_release(t->writer);
    t->writer = NULL;
    t->serial = 0;
  }
  pthread_mutex_unlock(&ds_lock);
  tls_track_event.writer = NULL;
  tls_track_event.serial = 0;
}

static void make_exit_key(void) {
  pthread_key_create(&exit_key, release_thread_writers);
}

/* The calling thread's writer of `instance` (ds_lock held). */
static tmr_writer *thread_writer_locked(tmr_data_source_instance *instance) {
  for (unsigned i = 0; i < TLS_SLOTS; i++)
    if (tls_slots[i].writer && tls_slots[i].serial == instance->serial)
      return tls_slots[i].writer;
  tmr_writer *w = tmr_writer_new(instance);
  pthread_mutex_lock(&instance->lock);
  g_ptr_array_add(instance->writers, w);
  pthread_mutex_unlock(&instance->lock);
  /* Reuse a slot whose instance is gone, else the next in turn (an evicted
   * writer stays with its instance and is freed with it). */
  unsigned slot = tls_next_slot++ % TLS_SLOTS;
  for (unsigned i = 0; i < TLS_SLOTS; i++)
    if (!tls_slots[i].writer || !g_hash_table_contains(instances_by_serial, &tls_slots[i].serial)) {
      slot = i;
      break;
    }
  tls_slots[slot] = (tls_writer){instance->serial, w};
  pthread_once(&exit_key_once, make_exit_key);
  pthread_setspecific(exit_key, (void *)1);
  return w;
}

tmr_writer *tmr_this_thread(void) {
  uint64_t serial = atomic_load_explicit(&te_serial, memory_order_acquire);
  if (G_LIKELY(tls_track_event.serial == serial))
    return tls_track_event.writer;
  tmr_writer *w = NULL;
  pthread_mutex_lock(&ds_lock);
  if (serial && track_event_instance && track_event_instance->serial == serial)
    w = thread_writer_locked(track_event_instance);
  pthread_mutex_unlock(&ds_lock);
  tls_track_event = (tls_writer){serial, w};
  return w;
}

tmr_writer *tmr_data_source_writer(tmr_data_source_instance *instance) {
  if (!instance)
    return NULL;
  for (unsigned i = 0; i < TLS_SLOTS; i++)
    if (tls_slots[i].writer && tls_slots[i].serial == instance->serial)
      return tls_slots[i].writer;
  pthread_mutex_lock(&ds_lock);
  tmr_writer *w = thread_writer_locked(instance);
  pthread_mutex_unlock(&ds_lock);
  return w;
}

/* --- instances ------------------------------------------------------------------------- */

/* Whether this process' producer name passes an entry's filters. */
static bool producer_matches(const Perfetto__Protos__TraceConfig__DataSource *entry,
                             const char *producer) {
  if (entry->n_producer_name_filter == 0 && entry->n_producer_name_regex_filter == 0)
    return true;
  for (size_t i = 0; i < entry->n_producer_name_filter; i++)
    if (!strcmp(entry->producer_name_filter[i], producer))
      return true;
  for (size_t i = 0; i < entry->n_producer_name_regex_filter; i++) {
    /* A full match, as perfetto's std::regex_match. */
    g_autofree char *anchored =
        g_strdup_printf("\\A(?:%s)\\z", entry->producer_name_regex_filter[i]);
    g_autoptr(GRegex) re = g_regex_new(anchored, 0, 0, NULL);
    if (re && g_regex_match(re, producer, 0, NULL))
      return true;
  }
  return false;
}

static size_t chunk_size_for(const tmr_trace_buffer *buffer) {
  /* A chunk is at most a quarter of its buffer, so a ring always holds
   * several; at least 1 KiB. */
  size_t size = MIN((size_t)TMR_MAX_CHUNK, buffer->size / 4);
  return MAX(size, (size_t)1024);
}

void tmr_session_create_instances(tmr_session *s) {
  const tm_trace_config *tc = s->config.tc;
  for (size_t i = 0; i < tc->n_data_sources; i++) {
    const tm_config_data_source *ds = &tc->data_sources[i];
    if (!producer_matches(ds->entry, s->producer_name))
      continue;
    bool is_track_event = !strcmp(ds->name, "track_event");
    tmr_data_source_desc desc = {0};
    if (is_track_event) {
      if (s->track_event)
        continue; /* one track_event instance per session */
    } else {
      pthread_mutex_lock(&ds_lock);
      const tmr_data_source_desc *d = find_registered_locked(ds->name);
      if (d)
        desc = *d;
      pthread_mutex_unlock(&ds_lock);
      if (!d)
        continue; /* no data source of this process has that name */
    }
    tmr_data_source_instance *instance = g_new0(tmr_data_source_instance, 1);
    instance->session = s;
    instance->name = g_strdup(ds->name);
    instance->is_track_event = is_track_event;
    instance->desc = desc;
    instance->raw_config = ds->raw_config;
    instance->raw_config_len = ds->raw_config_len;
    instance->buffer = s->buffers->pdata[ds->target_buffer];
    instance->ring = instance->buffer->policy == TMR_FILL_RING_BUFFER;
    instance->chunk_size = chunk_size_for(instance->buffer);
    pthread_mutex_init(&instance->lock, NULL);
    instance->writers = g_ptr_array_new_with_free_func((GDestroyNotify)tmr_writer_free);
    if (is_track_event) {
      instance->track_event_config = perfetto__protos__data_source_config__unpack(
          NULL, ds->raw_config_len, ds->raw_config);
      s->track_event = instance;
    }
    pthread_mutex_lock(&ds_lock);
    instance->serial = next_instance_serial++;
    if (!instances_by_serial)
      instances_by_serial = g_hash_table_new(g_int64_hash, g_int64_equal);
    g_hash_table_insert(instances_by_serial, &instance->serial, instance);
    pthread_mutex_unlock(&ds_lock);
    g_ptr_array_add(s->instances, instance);
  }
}

void tmr_session_start_instances(tmr_session *s) {
  for (guint i = 0; i < s->instances->len; i++) {
    tmr_data_source_instance *instance = s->instances->pdata[i];
    atomic_store_explicit(&instance->running, true, memory_order_release);
    if (instance->is_track_event) {
      pthread_mutex_lock(&ds_lock);
      track_event_instance = instance;
      pthread_mutex_unlock(&ds_lock);
      tmr_reg_apply_categories(category_filter, instance);
      atomic_store_explicit(&te_serial, instance->serial, memory_order_release);
    } else if (instance->desc.on_start) {
      instance->desc.on_start(instance->desc.user, instance, instance->raw_config,
                              instance->raw_config_len);
    }
  }
}

void tmr_session_stop_instances(tmr_session *s) {
  for (guint i = 0; i < s->instances->len; i++) {
    tmr_data_source_instance *instance = s->instances->pdata[i];
    if (!atomic_load(&instance->running))
      continue;
    if (!instance->is_track_event && instance->desc.on_stop)
      instance->desc.on_stop(instance->desc.user, instance);
    atomic_store_explicit(&instance->running, false, memory_order_release);
    if (instance->is_track_event) {
      atomic_store_explicit(&te_serial, 0, memory_order_release);
      tmr_reg_apply_categories(NULL, NULL);
      pthread_mutex_lock(&ds_lock);
      if (track_event_instance == instance)
        track_event_instance = NULL;
      pthread_mutex_unlock(&ds_lock);
    }
  }
}

void tmr_instance_flush_writers(tmr_data_source_instance *instance, bool free_retired) {
  pthread_mutex_lock(&instance->lock);
  for (guint i = 0; i < instance->writers->len;) {
    tmr_writer *w = instance->writers->pdata[i];
    tmr_writer_scrape(w);
    if (free_retired && w->retired)
      g_ptr_array_remove_index_fast(instance->writers, i);
    else
      i++;
  }
  pthread_mutex_unlock(&instance->lock);
}

void tmr_session_free_instances(tmr_session *s) {
  pthread_mutex_lock(&ds_lock);
  for (guint i = 0; i < s->instances->len; i++) {
    tmr_data_source_instance *instance = s->instances->pdata[i];
    g_hash_table_remove(instances_by_serial, &instance->serial);
    if (track_event_instance == instance)
      track_event_instance = NULL;
  }
  pthread_mutex_unlock(&ds_lock);
  for (guint i = 0; i < s->instances->len; i++) {
    tmr_data_source_instance *instance = s->instances->pdata[i];
    g_ptr_array_unref(instance->writers);
    if (instance->track_event_config)
      perfetto__protos__data_source_config__free_unpacked(instance->track_event_config, NULL);
    pthread_mutex_destroy(&instance->lock);
    g_free(instance->name);
    g_free(instance);
  }
  g_ptr_array_set_size(s->instances, 0);
  s->track_event = NULL;
}

/* --- who records track_event ----------------------------------------------------------------- */

static tmr_session *track_event_owner;

bool tmr_session_claim_track_event(tmr_session *s, GError **error) {
  pthread_mutex_lock(&ds_lock);
  bool free = !track_event_owner || track_event_owner == s;
  if (free)
    track_event_owner = s;
  pthread_mutex_unlock(&ds_lock);
  if (!free)
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                "another session of this process records track_event; stop it first (one "
                "session at a time writes the process' TrackEvents)");
  return free;
}

void tmr_session_release_track_event(tmr_session *s) {
  pthread_mutex_lock(&ds_lock);
  if (track_event_owner == s)
    track_event_owner = NULL;
  pthread_mutex_unlock(&ds_lock);
}

size_t tmr_registered_data_source_count(void) {
  pthread_mutex_lock(&ds_lock);
  size_t n = registered ? registered->len : 0;
  pthread_mutex_unlock(&ds_lock);
  return n;
}
