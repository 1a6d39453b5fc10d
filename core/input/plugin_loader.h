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
 * Preferred plugin files (named by the user: `preferred`, then each file
 * of TRACEMERGE_PLUGIN_PREFER, colon-separated) are loaded first, wherever
 * they are.
 *
 * A file without the entry symbol, whose ABI range does not meet the
 * versions this host speaks (TM_HOST_ABI_MIN..TM_READER_ABI_VERSION), or
 * with an incomplete or invalid descriptor is reported on `warnings` and
 * skipped. Two readers
 * of one name are a clash: a preferred one wins over the others (which are
 * skipped, recorded as overridden and noted on `warnings`); a clash with
 * no preferred side (or two preferred sides) is an error naming both
 * paths (plugin_set_check), and the first one found stays in the set so
 * that `tracemerge plugins` can still list it. A file reached by two paths
 * is one plugin, not a clash.
 *
 * Probe scores are clamped to [0, TM_PROBE_SCORE_MAX] (plugin.h); a probe
 * that returns more is warned about once.
 *
 * Every loaded reader is kept as a tm_reader: its descriptor normalised to
 * the current layout (read only as far as the plugin's struct_size covers,
 * a version-1 descriptor converted), the ABI version the host speaks with
 * it, and its declarations resolved (stats, sample table).
 *
 * Invariant: every reader in the set stays valid (its object loaded) until
 * plugin_set_free().
 */
#ifndef TM_PLUGIN_LOADER_H
#define TM_PLUGIN_LOADER_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <tracemerge/plugin.h>

#include "model/stats.h"
#include "input/reader_abi_v1.h"

/* The oldest reader ABI version this host loads. */
#define TM_HOST_ABI_MIN TM_READER_ABI_V1

typedef struct tm_reader {
  /* Normalised: the current layout, fields the plugin lacks zero. For a
   * version-1 reader `descriptor.open` is NULL and `open_v1` is set. */
  tm_reader_descriptor descriptor;
  void *(*open_v1)(const tm_v1_host_services *services, tm_host *host,
                   const uint8_t *config, size_t config_len);
  uint32_t abi;              /* the version the host speaks with it */
  int sample_table;          /* PROFILE_TABLE_* of its samples */
  const tm_stat_info *stats; /* its declared stats, n_stats of them */
  size_t n_stats;
} tm_reader;

typedef struct tm_plugin_set tm_plugin_set;

tm_plugin_set *plugin_set_load(const char *const *extra_dirs, size_t n_extra,
                               const char *const *preferred, size_t n_preferred,
                               FILE *warnings);
/* False, with the first clash's message, if two readers of one name were
 * found and none was preferred. */
bool plugin_set_check(const tm_plugin_set *set, GError **error);
void plugin_set_free(tm_plugin_set *set);

size_t plugin_set_count(const tm_plugin_set *set);
/* Borrowed reader and the path it was loaded from. */
const tm_reader *plugin_set_borrow(const tm_plugin_set *set, size_t index,
                                   const char **path);
/* The plugin files a preferred reader `index` overrode (NULL-terminated,
 * borrowed), or NULL if none. */
const char *const *plugin_set_borrow_overridden(const tm_plugin_set *set,
                                                size_t index);
/* The reader named `name`, or NULL. */
const tm_reader *plugin_set_find(const tm_plugin_set *set, const char *name);
/* The reader whose probe scores `head` highest (ties: name order), or NULL
 * if every probe returns 0. Scores are clamped (warning once per reader). */
const tm_reader *plugin_set_detect(tm_plugin_set *set, const uint8_t *head,
                                   size_t len, const char *file_name);

#endif /* TM_PLUGIN_LOADER_H */
