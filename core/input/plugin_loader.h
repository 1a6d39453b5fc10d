/*
 * Finds and loads reader plugins with dlopen.
 *
 * Search order: directories passed by the caller, then each directory of
 * TRACEMERGE_PLUGIN_PATH (colon-separated), then the build tree's plugin
 * directories when libtracemerge itself runs from the build tree, else the
 * install directory ($libdir/tracemerge/plugins). Never the current
 * directory implicitly (relative entries of TRACEMERGE_PLUGIN_PATH are
 * ignored with a warning). Every regular file ending in ".so" is tried.
 *
 * A file without the entry symbol, with an unsupported ABI version or an
 * incomplete descriptor is reported on `warnings` and skipped; so is a
 * second reader with a name already loaded (the first one found wins).
 * Invariant: every descriptor in the set stays valid (its object loaded)
 * until plugin_set_free().
 */
#ifndef TM_PLUGIN_LOADER_H
#define TM_PLUGIN_LOADER_H

#include <stddef.h>
#include <stdio.h>

#include <tracemerge/plugin.h>

typedef struct tm_plugin_set tm_plugin_set;

tm_plugin_set *plugin_set_load(const char *const *extra_dirs, size_t n_extra,
                               FILE *warnings);
void plugin_set_free(tm_plugin_set *set);

size_t plugin_set_count(const tm_plugin_set *set);
/* Borrowed descriptor and the path it was loaded from. */
const tm_reader_descriptor *plugin_set_borrow(const tm_plugin_set *set,
                                              size_t index, const char **path);
/* The reader named `name`, or NULL. */
const tm_reader_descriptor *plugin_set_find(const tm_plugin_set *set,
                                            const char *name);
/* The reader whose probe scores `head` highest (ties: name order), or NULL
 * if every probe returns 0. */
const tm_reader_descriptor *plugin_set_detect(const tm_plugin_set *set,
                                              const uint8_t *head, size_t len,
                                              const char *file_name);

#endif /* TM_PLUGIN_LOADER_H */
