/*
 * The manifest error messages of docs/clock-model.md §10 as the
 * end-to-end manifest error tests write them (test_e2e_manifest_errors.c,
 * test_e2e_manifest_layout_errors.c), and their two helpers.
 */
#ifndef TM_E2E_MANIFEST_MESSAGES_H
#define TM_E2E_MANIFEST_MESSAGES_H

#include <glib.h>

#include "e2e_support.h"

#define P "perfetto_manifest: "
/* A version-1 manifest around `body` (members of the perfetto_manifest
 * object, ' for "). */
#define M(body) "{'perfetto_manifest': {'version': 1, " body "}}"
/* A valid exported-table schema (§10.1 #10-#12). */
#define TABLE                                                                  \
  "{'format': 1, 'name': 'slice', 'row_count': 2, 'columns': [{'name': "     \
  "'id', 'type': 'int64', 'nullability': 'non_null', 'sort': 'sorted', "     \
  "'duplicates': 'no'}]}"
#define CLOCK_NAMES                                                            \
  ". Use one of REALTIME, REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE, "    \
  "MONOTONIC_RAW, BOOTTIME."
#define UNKNOWN_FILE(label, file)                                              \
  P label " names unknown file '" file "'. It must match the `path` of an "  \
    "entry in the `files` array."
#define NOT_RESOLVED(file)                                                     \
  P "clocks: could not resolve file '" file "'. It must match the `path` of " \
    "an entry in the `files` array."
#define MSG_SYNC_FILE P "clocks: sync_to.file is required and must be a string"
#define MSG_SINGLE_CLOCK P "clock overrides require the trace to use a single clock"
#define MSG_MACHINE_ON_MULTI                                                   \
  P "a `machine` override attributes the file to one machine, but the file " \
    "contains packets from multiple machines. Replace `machine` with a "     \
    "`machines` block that maps each embedded machine_id to a named "        \
    "machine, e.g. \"machines\": [{\"id\": 0, \"name\": \"phone\"}, "        \
    "{\"id\": 7, \"name\": \"vm\"}]."
#define MSG_CLOCKS_ON_MULTI                                                    \
  P "a `clocks` override applies only to a single-machine file, but the "    \
    "file contains packets from multiple machines. Remove the `clocks` "     \
    "override and let the trace's own remote clock snapshots align the "     \
    "machines; if you need to anchor a specific embedded machine, split it " \
    "into its own file and override that."
#define MSG_CONTAINER(path)                                                    \
  P "overrides are not supported for trace files which are themselves "      \
    "archives or perfetto_manifest files: " path

/* The manifest with ' turned into ". */
static inline char *manifest_text(const char *manifest) {
  return g_strdelimit(g_strdup(manifest), "'", '"');
}

/* The whole import of `archive` (in `dir`) fails with exactly `message`. */
static inline void assert_archive_fails(const char *dir, const char *archive,
                                        const char *message) {
  const char *inputs[] = {archive, NULL};
  e2e_assert_import_fails_with(dir, inputs, message);
}

#endif /* TM_E2E_MANIFEST_MESSAGES_H */
