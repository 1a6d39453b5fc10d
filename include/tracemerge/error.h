/*
 * The one error domain of libtracemerge: every GError a public function
 * of <tracemerge/tracemerge.h> (sessions, exports, pack, ClickHouse) or of
 * <tracemerge/record.h> (the recording library) returns is in TRACEMERGE_ERROR,
 * with a code of tm_error_code; the message says what and where (the file
 * and byte offset, the config's line and column, the server). Code on the
 * code, never on the message: the codes are the contract, the messages
 * may be reworded.
 *
 * Internal modules keep domains of their own; every public function turns
 * them into TRACEMERGE_ERROR before returning (core/session/session_error.h).
 */
#ifndef TRACEMERGE_ERROR_H
#define TRACEMERGE_ERROR_H

#include <glib.h>

#include <tracemerge/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* (Not TM_ERROR: that is the readers' tm_status of <tracemerge/plugin.h>.) */
#define TRACEMERGE_ERROR (tm_error_quark())
TM_API GQuark tm_error_quark(void);

typedef enum tm_error_code {
  TM_ERROR_FAILED = 0, /* none of the others */
  /* The call itself: a second import, no inputs, a session started
   * twice, a name or argument the call does not take. */
  TM_ERROR_USAGE = 1,
  /* No reader plugin, or two of one name (tm_session_plugins_check). */
  TM_ERROR_PLUGINS = 2,
  /* A configuration (a reader's, the merge config, a recording
   * TraceConfig: unreadable, invalid, naming a reader that is not
   * loaded) cannot be used. */
  TM_ERROR_CONFIG = 3,
  /* An input cannot be opened or read, or has no known format. */
  TM_ERROR_INPUT = 4,
  /* A file or archive member is damaged; what came before the damage
   * was imported. */
  TM_ERROR_DAMAGED = 5,
  /* The perfetto_manifest is invalid or does not fit the inputs: nothing
   * was merged. */
  TM_ERROR_MANIFEST = 6,
  TM_ERROR_QUERY = 7, /* the SQL failed */
  /* Writing failed: rows, a database, an export, an archive, a recorded
   * trace. */
  TM_ERROR_OUTPUT = 8,
  /* A query was stopped: its time ran out, or tm_session_interrupt(). */
  TM_ERROR_INTERRUPTED = 9,
  /* The system refused a resource the recording library needs: memory
   * for a buffer, a thread, an eventfd, a trigger socket or directory. */
  TM_ERROR_SYSTEM = 10,
  /* ClickHouse (tm_clickhouse_*): */
  TM_ERROR_CLICKHOUSE_URL = 11,        /* not clickhouse://[USER[:PASS]@]HOST[:PORT]/DB */
  TM_ERROR_CLICKHOUSE_CONNECTION = 12, /* no answer: refused, reset, timed out */
  TM_ERROR_CLICKHOUSE_SERVER = 13,     /* the server refused or failed a statement */
  TM_ERROR_CLICKHOUSE_SCHEMA = 14,     /* tables missing, or another schema version */
  TM_ERROR_CLICKHOUSE_RUN_EXISTS = 15, /* refused: the run is already loaded */
  TM_ERROR_CLICKHOUSE_RUN_ID = 16,     /* an empty, too long or repeated run id */
  TM_ERROR_CLICKHOUSE_PARTIAL = 17,    /* publishing stopped between tables */
  TM_ERROR_CLICKHOUSE_RESULT = 18,     /* an answer that could not be read */
} tm_error_code;

/* Deprecated: the names of the three domains that TRACEMERGE_ERROR replaced, kept
 * so that code written against them still compiles. They are TRACEMERGE_ERROR and
 * its codes (the session's codes kept their numbers; ClickHouse's and the
 * recording library's did not, so rebuild, and prefer the names above). */
#define TM_SESSION_ERROR TRACEMERGE_ERROR
typedef tm_error_code tm_session_error;
#define TM_SESSION_ERROR_FAILED TM_ERROR_FAILED
#define TM_SESSION_ERROR_USAGE TM_ERROR_USAGE
#define TM_SESSION_ERROR_PLUGINS TM_ERROR_PLUGINS
#define TM_SESSION_ERROR_CONFIG TM_ERROR_CONFIG
#define TM_SESSION_ERROR_INPUT TM_ERROR_INPUT
#define TM_SESSION_ERROR_DAMAGED TM_ERROR_DAMAGED
#define TM_SESSION_ERROR_MANIFEST TM_ERROR_MANIFEST
#define TM_SESSION_ERROR_QUERY TM_ERROR_QUERY
#define TM_SESSION_ERROR_OUTPUT TM_ERROR_OUTPUT
#define TM_SESSION_ERROR_INTERRUPTED TM_ERROR_INTERRUPTED
#define TM_CLICKHOUSE_ERROR TRACEMERGE_ERROR
typedef tm_error_code tm_clickhouse_error_code;
#define TM_CLICKHOUSE_ERROR_URL TM_ERROR_CLICKHOUSE_URL
#define TM_CLICKHOUSE_ERROR_CONNECTION TM_ERROR_CLICKHOUSE_CONNECTION
#define TM_CLICKHOUSE_ERROR_SERVER TM_ERROR_CLICKHOUSE_SERVER
#define TM_CLICKHOUSE_ERROR_SCHEMA TM_ERROR_CLICKHOUSE_SCHEMA
#define TM_CLICKHOUSE_ERROR_RUN_EXISTS TM_ERROR_CLICKHOUSE_RUN_EXISTS
#define TM_CLICKHOUSE_ERROR_RUN_ID TM_ERROR_CLICKHOUSE_RUN_ID
#define TM_CLICKHOUSE_ERROR_PARTIAL TM_ERROR_CLICKHOUSE_PARTIAL
#define TM_CLICKHOUSE_ERROR_RESULT TM_ERROR_CLICKHOUSE_RESULT
#define TMR_ERROR TRACEMERGE_ERROR

#ifdef __cplusplus
}
#endif

#endif /* TRACEMERGE_ERROR_H */
