/*
 * What the stages after an import (the sinks, core/sink) may read of a
 * session, without its private state (session_internal.h stays inside
 * core/session).
 */
#ifndef TM_SESSION_VIEW_H
#define TM_SESSION_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include <tracemerge/tracemerge.h>

#include "model/model.h"

/* The session's model once tm_session_import() succeeded, else NULL.
 * Borrowed: valid until the session is freed. */
const tm_model *session_imported_model(const tm_session *session);

/* The machine row each trace file was read on (by trace_file id; a file
 * that had no reader has TM_NULL_ID), `*n` of them. Owned by the caller
 * (g_free). */
uint32_t *session_file_machines(const tm_session *session, size_t *n);

#endif /* TM_SESSION_VIEW_H */
