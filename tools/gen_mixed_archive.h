/*
 * Synthetic mixed 3-machine archive for the benchmark (tools/bench.c
 * --format mixed): what `tracemerge pack` makes of a phone's systrace, a
 * workstation's Chrome JSON and a server app's Perfetto trace. See
 * gen_mixed_archive.c.
 */
#ifndef TM_GEN_MIXED_ARCHIVE_H
#define TM_GEN_MIXED_ARCHIVE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* Writes the ZIP at `path` with about `events` events in all, its members
 * generated in `workdir` first (and removed). False with `error` set on
 * failure. */
bool gen_mixed_archive_write(const char *path, const char *workdir, uint64_t events,
                             uint32_t seed, GError **error);

#endif /* TM_GEN_MIXED_ARCHIVE_H */
