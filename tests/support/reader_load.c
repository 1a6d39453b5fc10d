/* Loading a reader plugin named by the environment (reader_load.h). */
#include "reader_load.h"

#include <dlfcn.h>
#include <glib.h>

const tm_reader_descriptor *reader_load_from_env(const char *variable, void **handle) {
  *handle = NULL;
  const char *path = g_getenv(variable);
  if (!path) {
    g_printerr("%s must name a built reader\n", variable);
    return NULL;
  }
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*handle) {
    g_printerr("dlopen %s: %s\n", path, dlerror());
    return NULL;
  }
  tm_reader_entry_fn entry = (tm_reader_entry_fn)dlsym(*handle, TM_READER_ENTRY_SYMBOL);
  if (!entry) {
    g_printerr("%s has no %s\n", path, TM_READER_ENTRY_SYMBOL);
    return NULL;
  }
  return entry();
}
