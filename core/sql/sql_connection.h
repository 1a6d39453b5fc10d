/*
 * Every SQLite connection the library opens: the in-memory database that
 * answers queries, and the file `import -o` writes. One entry point,
 * sql_connection_open(), opens it and configures it the same way every
 * time (sql_connection.c says what and why):
 *
 * - safety: FTS3 tokenizer pointers off, fts3_tokenizer() and
 *   load_extension() refused, SQLITE_DBCONFIG_DEFENSIVE, untrusted schema,
 *   limits on value and statement sizes;
 * - an authorizer that, once the connection is sealed, refuses what a
 *   query has no business doing: ATTACH/DETACH (unless `allow_attach`),
 *   VACUUM INTO, writing to, dropping, altering or shadowing the objects
 *   that existed at sealing time (the model's tables and views);
 * - a progress handler that stops the running statement on a timeout or
 *   on sql_connection_interrupt() (Ctrl-C);
 * - the functions other modules register (sql_connection.c keeps the list:
 *   add a registrar there and it runs on every connection).
 *
 * Ownership: the caller owns the sql_connection and closes it with
 * sql_connection_close(); the sqlite3 handle is borrowed from it.
 */
#ifndef TM_SQL_CONNECTION_H
#define TM_SQL_CONNECTION_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

typedef struct sqlite3 sqlite3;
typedef struct sql_connection sql_connection;

typedef struct sql_connection_options {
  /* Queries may ATTACH and DETACH database files (VACUUM INTO stays
   * refused). */
  bool allow_attach;
  /* SQLITE_LIMIT_LENGTH: the largest string or blob a query may build;
   * 0 means SQL_CONNECTION_DEFAULT_MAX_VALUE_BYTES. */
  int64_t max_value_bytes;
} sql_connection_options;

/* 128 MiB: far above any value of a real trace or a sane aggregate, far
 * below what exhausts a machine. */
#define SQL_CONNECTION_DEFAULT_MAX_VALUE_BYTES ((int64_t)128 << 20)
/* The longest SQL text accepted (SQLITE_LIMIT_SQL_LENGTH). */
#define SQL_CONNECTION_MAX_SQL_BYTES (64 << 20)

/* A function that registers SQL functions, modules or collations on `db`.
 * `model` is the model the connection serves, NULL on a connection that
 * does not see the model (the saved file). Registered functions that
 * views or triggers use must carry SQLITE_INNOCUOUS (the schema is not
 * trusted). */
typedef bool (*sql_connection_registrar)(sqlite3 *db, const tm_model *model,
                                         GError **error);

/* Opens `filename` (":memory:" for the query database) with `flags`
 * (SQLITE_OPEN_*; SQLITE_OPEN_URI is never added: a file named "file:..."
 * is a file) and configures it. `options` may be NULL (defaults). Errors
 * are TM_SQL_ERROR. */
sql_connection *sql_connection_open(const char *filename, int flags,
                                    const tm_model *model,
                                    const sql_connection_options *options,
                                    GError **error);
void sql_connection_close(sql_connection *connection);

/* Borrowed: valid until sql_connection_close(). */
sqlite3 *sql_connection_borrow_db(sql_connection *connection);

/* From now on the authorizer applies the rules for queries, and every
 * table, view and virtual table that exists in the main schema now is
 * protected: queries may read it, not write, drop, alter, trigger on or
 * shadow it with a temporary object of the same name. Before sealing
 * everything is allowed (the library builds the schema). */
bool sql_connection_seal(sql_connection *connection, GError **error);

/* Whether `name` (any case) is a protected object of a sealed connection. */
bool sql_connection_is_protected(const sql_connection *connection,
                                 const char *name);

/* Starts a run of user SQL: clears any earlier interrupt and, if
 * `timeout_seconds` > 0, stops statements once that much time has passed
 * from now. sql_connection_disarm() ends the run. */
void sql_connection_arm(sql_connection *connection, double timeout_seconds);
void sql_connection_disarm(sql_connection *connection);

/* Stops the statement running now (if any) at its next progress check.
 * Async-signal-safe: meant for a SIGINT handler. */
void sql_connection_interrupt(sql_connection *connection);

/* Sets `error` (TM_SQL_ERROR, `code`) from the connection's last failure:
 * SQLite's message, with the reason when the statement was stopped by the
 * timeout or an interrupt (code TM_SQL_ERROR_INTERRUPTED then) or refused
 * by the authorizer. */
void sql_connection_set_error(sql_connection *connection, int code,
                              GError **error);

/* Rewrites `*error` (set by anyone from a failure on this connection
 * during the current run) the way sql_connection_set_error() would: the
 * stop reason replaces it, the authorizer's reason is appended. */
void sql_connection_explain_error(sql_connection *connection,
                                  GError **error);

#endif /* TM_SQL_CONNECTION_H */
