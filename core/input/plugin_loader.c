/*
 * Reader plugin discovery and loading; plugin_loader.h gives the search
 * order and the skip rules.
 *
 * Invariants: `entries` is in search order; reader names in it are unique
 * (the first one found wins); every entry holds its dlopen handle until
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

/* core/meson.build defines where readers live, in the build tree and once
 * installed. */
#if !defined(TM_BUILD_ROOT) || !defined(TM_BUILD_PLUGIN_DIR) ||             \
    !defined(TM_INSTALL_PLUGIN_DIR)
#error "TM_BUILD_ROOT, TM_BUILD_PLUGIN_DIR and TM_INSTALL_PLUGIN_DIR needed"
#endif

#define PLUGIN_PATH_ENV "TRACEMERGE_PLUGIN_PATH"
#define PLUGIN_SUFFIX ".so"
/* plugin.h promises probe() at most this many bytes. */
#define PROBE_HEAD_MAX 512u

typedef struct plugin_entry {
  void *handle;
  const tm_reader_descriptor *descriptor;
  char *path;
} plugin_entry;

struct tm_plugin_set {
  GArray *entries; /* plugin_entry, in search order */
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

static const plugin_entry *set_find_entry(const tm_plugin_set *set,
                                          const char *name) {
  for (guint i = 0; i < set->entries->len; i++) {
    const plugin_entry *e = &g_array_index(set->entries, plugin_entry, i);
    if (strcmp(e->descriptor->name, name) == 0)
      return e;
  }
  return NULL;
}

/* Why a descriptor cannot be used, or NULL if it can. */
static const char *descriptor_defect(const tm_reader_descriptor *d) {
  if (d->name == NULL || d->name[0] == '\0')
    return "incomplete descriptor: no name";
  if (d->probe == NULL)
    return "incomplete descriptor: no probe()";
  if (d->open == NULL)
    return "incomplete descriptor: no open()";
  if (d->feed == NULL)
    return "incomplete descriptor: no feed()";
  if (d->finish == NULL)
    return "incomplete descriptor: no finish()";
  if (d->close == NULL)
    return "incomplete descriptor: no close()";
  return NULL;
}

static void search_try_file(plugin_search *search, const char *path) {
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    search_warn(search, "skipping plugin %s: cannot be loaded: %s", path,
                why ? why : "unknown dlopen error");
    return;
  }

  /* POSIX guarantees a function address survives the void* round trip. */
  tm_reader_entry_fn entry =
      (tm_reader_entry_fn)dlsym(handle, TM_READER_ENTRY_SYMBOL);
  if (entry == NULL) {
    search_warn(search, "skipping plugin %s: no entry symbol %s", path,
                TM_READER_ENTRY_SYMBOL);
    goto out_close;
  }
  const tm_reader_descriptor *d = entry();
  if (d == NULL) {
    search_warn(search, "skipping plugin %s: %s() returned no descriptor", path,
                TM_READER_ENTRY_SYMBOL);
    goto out_close;
  }
  if (d->abi_version != TM_READER_ABI_VERSION) {
    search_warn(search,
                "skipping plugin %s: ABI version %u is not supported "
                "(this host supports %u)",
                path, (unsigned)d->abi_version, TM_READER_ABI_VERSION);
    goto out_close;
  }
  const char *defect = descriptor_defect(d);
  if (defect != NULL) {
    search_warn(search, "skipping plugin %s: %s", path, defect);
    goto out_close;
  }
  const plugin_entry *first = set_find_entry(search->set, d->name);
  if (first != NULL) {
    search_warn(search,
                "skipping plugin %s: a reader named \"%s\" is already "
                "loaded from %s",
                path, d->name, first->path);
    goto out_close;
  }

  plugin_entry e = {handle, d, g_strdup(path)};
  g_array_append_val(search->set->entries, e);
  return;

out_close:
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
        search_try_file(search, path);
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

tm_plugin_set *plugin_set_load(const char *const *extra_dirs, size_t n_extra,
                               FILE *warnings) {
  tm_plugin_set *set = g_new0(tm_plugin_set, 1);
  set->entries = g_array_new(FALSE, FALSE, sizeof(plugin_entry));
  plugin_search search = {
      .set = set,
      .warnings = warnings != NULL ? warnings : stderr,
      .scanned_dirs =
          g_hash_table_new_full(g_str_hash, g_str_equal, free, NULL),
  };

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
    plugin_entry *e = &g_array_index(set->entries, plugin_entry, i);
    g_free(e->path);
    dlclose(e->handle);
  }
  g_array_free(set->entries, TRUE);
  g_free(set);
}

size_t plugin_set_count(const tm_plugin_set *set) { return set->entries->len; }

const tm_reader_descriptor *plugin_set_borrow(const tm_plugin_set *set,
                                              size_t index, const char **path) {
  if (index >= set->entries->len) {
    if (path != NULL)
      *path = NULL;
    return NULL;
  }
  const plugin_entry *e = &g_array_index(set->entries, plugin_entry, index);
  if (path != NULL)
    *path = e->path;
  return e->descriptor;
}

const tm_reader_descriptor *plugin_set_find(const tm_plugin_set *set,
                                            const char *name) {
  const plugin_entry *e = name != NULL ? set_find_entry(set, name) : NULL;
  return e != NULL ? e->descriptor : NULL;
}

const tm_reader_descriptor *plugin_set_detect(const tm_plugin_set *set,
                                              const uint8_t *head, size_t len,
                                              const char *file_name) {
  const tm_reader_descriptor *best = NULL;
  int best_score = 0;
  if (len > PROBE_HEAD_MAX)
    len = PROBE_HEAD_MAX;
  for (guint i = 0; i < set->entries->len; i++) {
    const tm_reader_descriptor *d =
        g_array_index(set->entries, plugin_entry, i).descriptor;
    int score = d->probe(head, len, file_name);
    if (score <= 0)
      continue;
    if (score > best_score ||
        (score == best_score && strcmp(d->name, best->name) < 0)) {
      best = d;
      best_score = score;
    }
  }
  return best;
}
