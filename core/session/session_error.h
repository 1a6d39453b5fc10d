/*
 * The library's public error domain, TM_SESSION_ERROR (tracemerge.h):
 * errors made where the public code is known use it directly (container,
 * session); the internal modules keep domains of their own (manifest,
 * SQL, configuration, clock graph), which every public function turns
 * into TM_SESSION_ERROR with the matching code before returning, so a
 * caller sees one domain.
 */
#ifndef TM_SESSION_ERROR_H
#define TM_SESSION_ERROR_H

#include <glib.h>
#include <stdbool.h>

/* Turns *error, if set and of an internal domain, into TM_SESSION_ERROR
 * (same message). Returns `ok`, for `return session_error_publish(...)`. */
bool session_error_publish(bool ok, GError **error);

#endif /* TM_SESSION_ERROR_H */
