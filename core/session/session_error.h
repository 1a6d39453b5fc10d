/*
 * The library's public error domain, TRACEMERGE_ERROR (<tracemerge/error.h>):
 * errors made where the public code is known use it directly (container,
 * session, exports, ClickHouse, the recording library); the internal modules keep domains of their own (manifest,
 * SQL, configuration, clock graph), which every public function turns
 * into TRACEMERGE_ERROR with the matching code before returning, so a
 * caller sees one domain.
 */
#ifndef TM_SESSION_ERROR_H
#define TM_SESSION_ERROR_H

#include <glib.h>
#include <stdbool.h>

/* Turns *error, if set and of an internal domain, into TRACEMERGE_ERROR
 * (same message). Returns `ok`, for `return session_error_publish(...)`. */
bool session_error_publish(bool ok, GError **error);

#endif /* TM_SESSION_ERROR_H */
