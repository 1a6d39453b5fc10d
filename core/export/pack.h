/*
 * tracemerge pack (pack.c): the work of tm_pack_manifest and tm_pack_write
 * (<tracemerge/tracemerge.h>), whose public wrappers (core/session/
 * session_export.c) publish the errors: here they may be of an internal
 * domain (the manifest parser's).
 */
#ifndef TM_PACK_H
#define TM_PACK_H

#include <glib.h>
#include <stdbool.h>

#include <tracemerge/tracemerge.h>

/* The manifest that tm_pack_write would write (owned by the caller), or
 * NULL with the reason. */
char *pack_manifest(const tm_pack_options *options, GError **error);

/* Writes the archive at `path` with `manifest` (NULL: pack_manifest's). */
bool pack_write(const tm_pack_options *options, const char *manifest,
                const char *path, GError **error);

#endif /* TM_PACK_H */
