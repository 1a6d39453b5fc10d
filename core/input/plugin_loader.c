/*
 * Reader plugin discovery and loading; plugin_loader.h gives the search
 * order and the skip rules.
 *
 * Invariants: `entries` is in search order, preferred files first; reader
 * names in it are unique (a preferred reader, else the first one found,
 * holds the name; `clash` records a clash without a preference); every
 * entry holds its dlopen handle until
 * plugin_set_free(), because its descriptor (and every pointer inside it)
 * lives in the plugin's data. A directory is scanned at most once per load,
 * however many search entries name it (compared by canonical path), so
 * naming it twice does not report its readers as duplicates. Within a
 * directory, names are tried in strcmp order, so the result never depends
 * on readdir order.
 */
#include "input/plugin_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <glib.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tracemerge/tracemerge.h>

#include "model/profile_builder.h"

/* core/meson.build defines where readers live, in the build tree and once
 * installed. */
#if !defined(TM_BUILD_ROOT) || !defined(TM_BUILD_PLUGIN_DIR) ||             \
    !defined(TM_INSTALL_PLUGIN_DIR)
#error "TM_BUILD_ROOT, TM_BUILD_PLUGIN_DIR and TM_INSTALL_PLUGIN_DIR needed"
#endif

#define PLUGIN_PATH_ENV "TRACEMERGE_PLUGIN_PATH"
#define PLUGIN_PREFER_ENV "TRACEMERGE_PLUGIN_PREFER"
#define PLUGIN_SUFFIX ".so"
/* plugin.h promises probe() at most this many bytes. */
#define PROBE_HEAD_MAX 512u

typedef struct plugin_entry {
  tm_reader reader; /* first: a tm_reader* is its entry */
  tm_stat_info *stats; /* reader.stats, owned */
  void *handle;
  char *path;
  char *canonical;      /* realpath of `path`: one file reached twice */
  bool preferred;       /* named by the user: wins a name clash */
  bool score_warned;    /* a probe score out of range was reported */
  GPtrArray *overridden; /* paths it won a clash against, NULL-terminated */
} plugin_entry;

struct tm_plugin_set {
  GPtrArray *entries; /* plugin_entry*, in search order */
  GError *clash;   /* the first name clash without a preference */
  FILE *warnings;
};

/* State of one plugin_set_load() call. */
typedef struct plugin_search {
  tm_plugin_set *set;
  FILE *warnings;
  GHashTable *scanned_dirs; /* canonical path -> itself */
} plugin_search;

G_GNUC_PRINTF(2, 3)
static void search_warn(const plugin_search *search, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  fputs("tracemerge: warning: ", search->warnings);
  vfprintf(search->warnings, format, ap);
  fputc('\n', search->warnings);
  va_end(ap);
}

static plugin_entry *set_find_entry(const tm_plugin_set *set,
                                    const char *name) {
  for (guint i = 0; i < set->entries->len; i++) {
    plugin_entry *e = g_ptr_array_index(set->entries, i);
    if (strcmp(e->reader.descriptor.name, name) == 0)
      return e;
  }
  return NULL;
}

static void entry_free(plugin_entry *e) {
  g_free(e->stats);
  g_free(e->path);
  g_free(e->canonical);
  if (e->overridden != NULL)
    g_ptr_array_free(e->overridden, TRUE);
  g_free(e);
}

/* The smallest descriptor of version 2: every field up to config_name. */
#define DESCRIPTOR_V2_SIZE                                                  \
  (offsetof(tm_reader_descriptor, config_name) + sizeof(const char *))
#define READER_STAT_V2_SIZE                                                 \
  (offsetof(tm_reader_stat, description) + sizeof(const char *))

/* Whether a declaration of `stride` bytes has flags and says indexed. */
static bool stat_is_indexed(const tm_reader_stat *s, uint32_t stride) {
  if (stride < offsetof(tm_reader_stat, flags) + sizeof s->flags)
    return false;
  return (s->flags & TM_READER_STAT_INDEXED) != 0;
}

/* Reads the plugin's descriptor into `r` in the current layout: a
 * version-1 descriptor (its first field, abi_version, is 1 where later
 * versions have struct_size) converted, a later one copied as far as both
 * its struct_size and ours cover. Returns why it cannot be used (in
 * *owned_why when formatted), or NULL. */
static const char *normalise_descriptor(const void *raw, tm_reader *r,
                                        char **owned_why) {
  uint32_t first;
  memcpy(&first, raw, sizeof first);
  tm_reader_descriptor *d = &r->descriptor;
  if (first == TM_READER_ABI_V1) {
    const tm_v1_reader_descriptor *v1 = raw;
    *d = (tm_reader_descriptor){
        .struct_size = sizeof *d,
        .abi_version = TM_READER_ABI_V1,
        .abi_min = TM_READER_ABI_V1,
        .flags = v1->flags,
        .name = v1->name,
        .description = v1->description,
        .probe = v1->probe,
        .feed = v1->feed,
        .finish = v1->finish,
        .close = v1->close,
    };
    r->open_v1 = v1->open;
    r->abi = TM_READER_ABI_V1;
    return NULL;
  }
  if (first < DESCRIPTOR_V2_SIZE) {
    *owned_why = g_strdup_printf("descriptor of %u bytes is smaller than "
                                 "version 2's (%zu): neither a version-1 "
                                 "descriptor nor a later one",
                                 (unsigned)first, (size_t)DESCRIPTOR_V2_SIZE);
    return *owned_why;
  }
  memset(d, 0, sizeof *d);
  memcpy(d, raw, MIN((size_t)first, sizeof *d));
  if (d->abi_min > d->abi_version || d->abi_min < TM_READER_ABI_V1) {
    *owned_why = g_strdup_printf("ABI range %u..%u is empty or invalid",
                                 (unsigned)d->abi_min,
                                 (unsigned)d->abi_version);
    return *owned_why;
  }
  if (d->abi_min > TM_READER_ABI_VERSION || d->abi_version < TM_HOST_ABI_MIN) {
    *owned_why = g_strdup_printf("ABI versions %u..%u are not supported "
                                 "(this host supports %u..%u)",
                                 (unsigned)d->abi_min, (unsigned)d->abi_version,
                                 TM_HOST_ABI_MIN, TM_READER_ABI_VERSION);
    return *owned_why;
  }
  r->abi = MIN(d->abi_version, TM_READER_ABI_VERSION);
  return NULL;
}

/* Why a normalised descriptor cannot be used, or NULL if it can. */
static const char *descriptor_defect(const tm_reader *r) {
  const tm_reader_descriptor *d = &r->descriptor;
  if (d->name == NULL || d->name[0] == '\0')
    return "incomplete descriptor: no name";
  if (d->probe == NULL)
    return "incomplete descriptor: no probe()";
  if (d->open == NULL && r->open_v1 == NULL)
    return "incomplete descriptor: no open()";
  if (d->feed == NULL)
    return "incomplete descriptor: no feed()";
  if (d->finish == NULL)
    return "incomplete descriptor: no finish()";
  if (d->close == NULL)
    return "incomplete descriptor: no close()";
  if (d->n_stats > 0 && d->stats == NULL)
    return "invalid descriptor: n_stats without stats";
  return NULL;
}

/* Resolves what the descriptor declares: its sample table and its stats
 * (read with the stride of their struct_size). */
static const char *resolve_declarations(plugin_entry *e, char **owned_why) {
  tm_reader *r = &e->reader;
  const tm_reader_descriptor *d = &r->descriptor;
  r->sample_table = profile_table_by_name(
      d->sample_table ? d->sample_table : "cpu_profile_stack_sample");
  if (r->sample_table < 0) {
    *owned_why = g_strdup_printf("unknown sample table \"%s\"", d->sample_table);
    return *owned_why;
  }
  if (d->n_stats == 0)
    return NULL;
  uint32_t stride = d->stats[0].struct_size;
  if (stride < READER_STAT_V2_SIZE) {
    *owned_why = g_strdup_printf("stat declarations of %u bytes are smaller "
                                 "than version 2's (%zu)",
                                 (unsigned)stride, (size_t)READER_STAT_V2_SIZE);
    return *owned_why;
  }
  e->stats = g_new0(tm_stat_info, d->n_stats);
  for (size_t i = 0; i < d->n_stats; i++) {
    const tm_reader_stat *s =
        (const tm_reader_stat *)((const char *)d->stats + i * stride);
    const char *severity = stats_severity_name(s->severity);
    const char *source = stats_source_name(s->source);
    if (s->struct_size != stride || s->name == NULL || s->name[0] == '\0' ||
        severity == NULL || source == NULL) {
      *owned_why = g_strdup_printf(
          "invalid stat declaration %zu (%s): needs a name, a known "
          "severity and source, and the struct_size of the first",
          i, s->struct_size == stride && s->name ? s->name : "?");
      return *owned_why;
    }
    e->stats[i] = (tm_stat_info){
        .name = s->name,
        .severity = severity,
        .source = source,
        .scope = stat_is_indexed(s, stride) ? TM_STAT_MACHINE_AND_TRACE_ON_DEMAND
                                            : TM_STAT_MACHINE_AND_TRACE,
        .description = s->description ? s->description : "",
    };
  }
  r->stats = e->stats;
  r->n_stats = d->n_stats;
  return NULL;
}

/* A second reader named like `first`'s, from `path` (canonical
 * `canonical`): the same file again is nothing; a preferred first one
 * overrides it; otherwise it is a clash (recorded once, the first one
 * found stays). */
static void search_name_taken(plugin_search *search, plugin_entry *first,
                              const char *path, const char *canonical,
                              bool preferred) {
  if (canonical != NULL && first->canonical != NULL &&
      strcmp(canonical, first->canonical) == 0)
    return;
  if (first->preferred && !preferred) {
    if (first->overridden == NULL) {
      first->overridden = g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_add(first->overridden, NULL);
    }
    first->overridden->pdata[first->overridden->len - 1] = g_strdup(path);
    g_ptr_array_add(first->overridden, NULL);
    return;
  }
  search_warn(search,
              "plugin name clash: a reader named \"%s\" is in both %s and %s",
              first->reader.descriptor.name, first->path, path);
  if (search->set->clash == NULL)
    search->set->clash = g_error_new(
        TRACEMERGE_ERROR, TM_ERROR_PLUGINS,
        "two reader plugins are named \"%s\": %s and %s; name the one to "
        "use with --prefer-plugin FILE (or %s=FILE), or remove one",
        first->reader.descriptor.name, first->path, path, PLUGIN_PREFER_ENV);
}

static void search_try_file(plugin_search *search, const char *path,
                            bool preferred) {
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    search_warn(search, "skipping plugin %s: cannot be loaded: %s", path,
                why ? why : "unknown dlopen error");
    return;
  }

  char *owned_why = NULL;
  const char *defect = NULL;
  plugin_entry *e = g_new0(plugin_entry, 1);
  /* POSIX guarantees a function address survives the void* round trip.
   * The entry's type is the same in every version; what it returns is
   * read by normalise_descriptor. */
  const void *(*entry)(void) =
      (const void *(*)(void))dlsym(handle, TM_READER_ENTRY_SYMBOL);
  if (entry == NULL) {
    search_warn(search, "skipping plugin %s: no entry symbol %s", path,
                TM_READER_ENTRY_SYMBOL);
    goto out_close;
  }
  const void *raw = entry();
  if (raw == NULL) {
    search_warn(search, "skipping plugin %s: %s() returned no descriptor", path,
                TM_READER_ENTRY_SYMBOL);
    goto out_close;
  }
  if ((defect = normalise_descriptor(raw, &e->reader, &owned_why)) != NULL ||
      (defect = descriptor_defect(&e->reader)) != NULL ||
      (defect = resolve_declarations(e, &owned_why)) != NULL) {
    search_warn(search, "skipping plugin %s: %s", path, defect);
    goto out_close;
  }
  char *canonical = realpath(path, NULL);
  plugin_entry *first = set_find_entry(search->set, e->reader.descriptor.name);
  if (first != NULL) {
    search_name_taken(search, first, path, canonical, preferred);
    free(canonical);
    goto out_close;
  }

  e->handle = handle;
  e->path = g_strdup(path);
  e->canonical = canonical != NULL ? g_strdup(canonical) : NULL;
  e->preferred = preferred;
  free(canonical);
  g_ptr_array_add(search->set->entries, e);
  return;

out_close:
  g_free(owned_why);
  entry_free(e);
  dlclose(handle);
}

static int compare_names(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Tries every "*.so" regular file of `dir` in name order; with
 * `with_subdirs`, also the files of its immediate subdirectories, each at
 * the position of its directory's name. */
static void search_scan_dir(plugin_search *search, const char *dir,
                            bool with_subdirs) {
  GError *error = NULL;
  GDir *d = NULL;
  GPtrArray *names = NULL;
  char *canonical = realpath(dir, NULL);

  if (canonical == NULL) {
    search_warn(search, "cannot open plugin directory %s: %s", dir,
                g_strerror(errno));
    goto out;
  }
  if (g_hash_table_contains(search->scanned_dirs, canonical))
    goto out;
  d = g_dir_open(dir, 0, &error);
  if (d == NULL) {
    search_warn(search, "cannot open plugin directory %s: %s", dir,
                error->message);
    goto out;
  }
  g_hash_table_add(search->scanned_dirs, canonical);
  canonical = NULL;

  names = g_ptr_array_new_with_free_func(g_free);
  for (const char *name; (name = g_dir_read_name(d)) != NULL;)
    g_ptr_array_add(names, g_strdup(name));
  g_ptr_array_sort(names, compare_names);

  for (guint i = 0; i < names->len; i++) {
    const char *name = names->pdata[i];
    char *path = g_build_filename(dir, name, NULL);
    struct stat st;
    if (stat(path, &st) == 0) {
      if (S_ISREG(st.st_mode) && g_str_has_suffix(name, PLUGIN_SUFFIX))
        search_try_file(search, path, false);
      else if (S_ISDIR(st.st_mode) && with_subdirs)
        search_scan_dir(search, path, false);
    }
    g_free(path);
  }

out:
  if (names != NULL)
    g_ptr_array_free(names, TRUE);
  if (d != NULL)
    g_dir_close(d);
  g_clear_error(&error);
  free(canonical);
}

static void search_env_path(plugin_search *search) {
  const char *value = g_getenv(PLUGIN_PATH_ENV);
  if (value == NULL)
    return;
  char **dirs = g_strsplit(value, ":", -1);
  for (char **dir = dirs; *dir != NULL; dir++) {
    if ((*dir)[0] == '\0')
      continue;
    if (!g_path_is_absolute(*dir)) {
      search_warn(search,
                  "ignoring relative %s entry \"%s\" (only absolute "
                  "directories are searched)",
                  PLUGIN_PATH_ENV, *dir);
      continue;
    }
    search_scan_dir(search, *dir, false);
  }
  g_strfreev(dirs);
}

/* The canonical path of the object this code runs from (libtracemerge.so,
 * or the executable it is linked into), or NULL. */
static char *library_location(void) {
  Dl_info info;
  if (dladdr((void *)plugin_set_load, &info) == 0 || info.dli_fname == NULL)
    return NULL;
  /* For the main program glibc reports argv[0], which may be a bare name
   * found through PATH or relative to a directory since left. */
  if (strchr(info.dli_fname, '/') == NULL ||
      strcmp(info.dli_fname, program_invocation_name) == 0)
    return realpath("/proc/self/exe", NULL);
  return realpath(info.dli_fname, NULL);
}

static bool path_is_under(const char *path, const char *root) {
  size_t n = strlen(root);
  while (n > 1 && root[n - 1] == '/')
    n--;
  return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void search_default_dirs(plugin_search *search) {
  char *location = library_location();
  char *build_root = realpath(TM_BUILD_ROOT, NULL);
  if (location != NULL && build_root != NULL &&
      path_is_under(location, build_root))
    search_scan_dir(search, TM_BUILD_PLUGIN_DIR, true);
  else
    search_scan_dir(search, TM_INSTALL_PLUGIN_DIR, false);
  free(build_root);
  free(location);
}

/* The user's preferred plugin files: `preferred`, then those of
 * TRACEMERGE_PLUGIN_PREFER. */
static void search_preferred(plugin_search *search, const char *const *preferred,
                             size_t n_preferred) {
  for (size_t i = 0; i < n_preferred; i++)
    search_try_file(search, preferred[i], true);
  const char *value = g_getenv(PLUGIN_PREFER_ENV);
  if (value == NULL)
    return;
  char **files = g_strsplit(value, ":", -1);
  for (char **file = files; *file != NULL; file++)
    if ((*file)[0] != '\0')
      search_try_file(search, *file, true);
  g_strfreev(files);
}

tm_plugin_set *plugin_set_load(const char *const *extra_dirs, size_t n_extra,
                               const char *const *preferred, size_t n_preferred,
                               FILE *warnings) {
  tm_plugin_set *set = g_new0(tm_plugin_set, 1);
  set->entries = g_ptr_array_new();
  set->warnings = warnings != NULL ? warnings : stderr;
  plugin_search search = {
      .set = set,
      .warnings = set->warnings,
      .scanned_dirs =
          g_hash_table_new_full(g_str_hash, g_str_equal, free, NULL),
  };

  search_preferred(&search, preferred, n_preferred);
  for (size_t i = 0; i < n_extra; i++)
    search_scan_dir(&search, extra_dirs[i], false);
  search_env_path(&search);
  search_default_dirs(&search);

  g_hash_table_destroy(search.scanned_dirs);
  return set;
}

void plugin_set_free(tm_plugin_set *set) {
  if (set == NULL)
    return;
  for (guint i = 0; i < set->entries->len; i++) {
    plugin_entry *e = g_ptr_array_index(set->entries, i);
    dlclose(e->handle);
    entry_free(e);
  }
  g_ptr_array_free(set->entries, TRUE);
  g_clear_error(&set->clash);
  g_free(set);
}

bool plugin_set_check(const tm_plugin_set *set, GError **error) {
  if (set->clash == NULL)
    return true;
  g_propagate_error(error, g_error_copy(set->clash));
  return false;
}

const char *const *plugin_set_borrow_overridden(const tm_plugin_set *set,
                                                size_t index) {
  if (index >= set->entries->len)
    return NULL;
  const plugin_entry *e = g_ptr_array_index(set->entries, index);
  return e->overridden != NULL ? (const char *const *)e->overridden->pdata : NULL;
}

size_t plugin_set_count(const tm_plugin_set *set) { return set->entries->len; }

const tm_reader *plugin_set_borrow(const tm_plugin_set *set, size_t index,
                                   const char **path) {
  if (index >= set->entries->len) {
    if (path != NULL)
      *path = NULL;
    return NULL;
  }
  const plugin_entry *e = g_ptr_array_index(set->entries, index);
  if (path != NULL)
    *path = e->path;
  return &e->reader;
}

const tm_reader *plugin_set_find(const tm_plugin_set *set, const char *name) {
  const plugin_entry *e = name != NULL ? set_find_entry(set, name) : NULL;
  return e != NULL ? &e->reader : NULL;
}

const tm_reader *plugin_set_detect(tm_plugin_set *set, const uint8_t *head,
                                   size_t len, const char *file_name) {
  const tm_reader *best = NULL;
  int best_score = 0;
  if (len > PROBE_HEAD_MAX)
    len = PROBE_HEAD_MAX;
  for (guint i = 0; i < set->entries->len; i++) {
    plugin_entry *e = g_ptr_array_index(set->entries, i);
    const tm_reader_descriptor *d = &e->reader.descriptor;
    int score = d->probe(head, len, file_name);
    if ((score < 0 || score > TM_PROBE_SCORE_MAX) && !e->score_warned) {
      e->score_warned = true;
      fprintf(set->warnings,
              "tracemerge: warning: plugin %s: probe() returned %d, outside "
              "[0, %d]; taken as %d\n",
              e->path, score, TM_PROBE_SCORE_MAX,
              score < 0 ? 0 : TM_PROBE_SCORE_MAX);
    }
    score = CLAMP(score, 0, TM_PROBE_SCORE_MAX);
    if (score == 0)
      continue;
    if (score > best_score ||
        (score == best_score &&
         strcmp(d->name, best->descriptor.name) < 0)) {
      best = &e->reader;
      best_score = score;
    }
  }
  return best;
}
