/*
 * Opening and configuring SQLite connections (see sql_connection.h).
 *
 * Why each setting:
 * - SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER = 0: the two-argument
 *   fts3_tokenizer() installs a tokenizer from a pointer given as a blob,
 *   so a query could make SQLite call any address. With the setting off
 *   SQLite refuses it (unless the pointer is a bound parameter, which a
 *   query text cannot make); we also replace the function itself with one
 *   that always fails, because the one-argument form returns a library
 *   address (an ASLR leak), and the authorizer refuses it by name.
 * - load_extension(): off in the connection (both the C API and the SQL
 *   function) and refused by the authorizer.
 * - SQLITE_DBCONFIG_DEFENSIVE: no writable_schema, no journal_mode=OFF on
 *   our files, no writes to shadow tables: ordinary SQL cannot corrupt a
 *   database.
 * - SQLITE_DBCONFIG_TRUSTED_SCHEMA = 0: views and triggers may only use
 *   innocuous functions and virtual tables (ours are), so a view in an
 *   attached file cannot run side effects.
 * - Limits: a value's size (SQLITE_LIMIT_LENGTH) bounds what printf(),
 *   zeroblob(), group_concat() and friends may allocate; the SQL text, the
 *   compiled program and trigger recursion are bounded too. printf() and
 *   format() are replaced by sql_printf.c's, which also bound the time a
 *   %c repetition takes.
 * - The authorizer (rules in authorize()) and the progress handler (a
 *   deadline and an interrupt flag, polled every PROGRESS_OPS VM ops).
 *
 * Registrars: the list below runs on every connection, in order, after the
 * safety settings and before the caller creates its schema. Add the
 * registration function of a new module of SQL functions here.
 */
#include "sql/sql_connection.h"

#include <signal.h>
#include <sqlite3.h>
#include <string.h>

#include "sql/sql_functions.h"
#include "sql/sql_output.h"
#include "sql/sql_printf.h"

/* How many VM instructions run between two progress checks: a check
 * costs a clock read, 1000 instructions cost tens of microseconds. */
#define PROGRESS_OPS 1000

static const sql_connection_registrar registrars[] = {
    sql_functions_registrar, /* trace_processor's functions (docs/perfetto-sql.md) */
    NULL,                    /* ends the list */
};

typedef enum stop_reason {
  STOP_NONE,
  STOP_TIMEOUT,
  STOP_INTERRUPT,
} stop_reason;

struct sql_connection {
  sqlite3 *db;
  bool allow_attach;
  bool sealed;
  GHashTable *protected_names; /* lower-case name -> itself */
  /* Set from a signal handler: read and written as sig_atomic_t only. */
  volatile sig_atomic_t interrupt_requested;
  gint64 deadline_us; /* g_get_monotonic_time() units; 0: none */
  double timeout_seconds;
  stop_reason stopped;
  /* Why the authorizer last refused something (static text or in
   * `denial_buffer`), for the error message; NULL when unknown. */
  const char *denial;
  char denial_buffer[256];
};

/* ---- the authorizer ------------------------------------------------------ */

static bool name_is(const char *name, const char *expected) {
  return name && g_ascii_strcasecmp(name, expected) == 0;
}

bool sql_connection_is_protected(const sql_connection *connection,
                                 const char *name) {
  if (!connection->protected_names || !name)
    return false;
  char *lower = g_ascii_strdown(name, -1);
  bool found = g_hash_table_contains(connection->protected_names, lower);
  g_free(lower);
  return found;
}

/* True while some statement of `db` is being stepped: an authorization
 * asked then comes from SQL that SQLite runs inside that statement (VACUUM
 * attaches its output that way), not from a statement being prepared. */
static bool statement_running(sqlite3 *db) {
  for (sqlite3_stmt *s = sqlite3_next_stmt(db, NULL); s;
       s = sqlite3_next_stmt(db, s))
    if (sqlite3_stmt_busy(s))
      return true;
  return false;
}

static int deny(sql_connection *c, const char *format, const char *name) {
  g_snprintf(c->denial_buffer, sizeof c->denial_buffer, format,
             name ? name : "");
  c->denial = c->denial_buffer;
  return SQLITE_DENY;
}

static int refuse_protected(sql_connection *c, const char *action,
                            const char *name) {
  g_snprintf(c->denial_buffer, sizeof c->denial_buffer,
             "%s %s is refused: it is part of the trace's schema, which "
             "queries may read but not change",
             action, name);
  c->denial = c->denial_buffer;
  return SQLITE_DENY;
}

/* Whether (`name` in `schema`) is a protected object. Protected objects
 * live in "main"; a temporary object of the same name would shadow one. */
static bool is_protected_in(const sql_connection *c, const char *name,
                            const char *schema) {
  return (!schema || name_is(schema, "main") || name_is(schema, "temp")) &&
         sql_connection_is_protected(c, name);
}

static int authorize(void *user_data, int action, const char *arg1,
                     const char *arg2, const char *schema,
                     const char *inner) {
  (void)inner;
  sql_connection *c = user_data;
  if (!c->sealed)
    return SQLITE_OK;
  switch (action) {
  case SQLITE_ATTACH:
    if (statement_running(c->db)) {
      /* Plain VACUUM rebuilds into an anonymous temporary database (an
       * empty name); VACUUM INTO writes the file it names. */
      if (arg1 && *arg1)
        return deny(c,
                    "VACUUM INTO is refused: queries may not write files "
                    "(%s)",
                    arg1);
      return SQLITE_OK;
    }
    if (!c->allow_attach)
      return deny(c,
                  "ATTACH is refused: queries may not open database files "
                  "(%s); allow it with --allow-attach (allow_attach)",
                  arg1);
    return SQLITE_OK;
  case SQLITE_DETACH:
    if (!c->allow_attach && !statement_running(c->db))
      return deny(c,
                  "DETACH is refused (%s); allow ATTACH and DETACH with "
                  "--allow-attach (allow_attach)",
                  arg1);
    return SQLITE_OK;
  case SQLITE_FUNCTION:
    if (name_is(arg2, "load_extension"))
      return deny(c, "%s() is refused: queries may not load code",
                  "load_extension");
    if (name_is(arg2, "fts3_tokenizer"))
      return deny(c, "%s() is refused: it reads and installs code pointers",
                  "fts3_tokenizer");
    return SQLITE_OK;
  case SQLITE_PRAGMA:
    if (name_is(arg1, "temp_store_directory") ||
        name_is(arg1, "data_store_directory") ||
        name_is(arg1, "writable_schema"))
      return deny(c, "PRAGMA %s is refused", arg1);
    return SQLITE_OK;
  case SQLITE_INSERT:
    return is_protected_in(c, arg1, schema)
               ? refuse_protected(c, "INSERT into", arg1)
               : SQLITE_OK;
  case SQLITE_UPDATE:
    return is_protected_in(c, arg1, schema)
               ? refuse_protected(c, "UPDATE of", arg1)
               : SQLITE_OK;
  case SQLITE_DELETE:
    return is_protected_in(c, arg1, schema)
               ? refuse_protected(c, "DELETE from", arg1)
               : SQLITE_OK;
  case SQLITE_DROP_TABLE:
  case SQLITE_DROP_VIEW:
  case SQLITE_DROP_VTABLE:
  case SQLITE_DROP_TEMP_TABLE:
  case SQLITE_DROP_TEMP_VIEW:
    return is_protected_in(c, arg1, schema)
               ? refuse_protected(c, "DROP of", arg1)
               : SQLITE_OK;
  case SQLITE_ALTER_TABLE:
    /* arg1 is the schema, arg2 the table. */
    return is_protected_in(c, arg2, arg1)
               ? refuse_protected(c, "ALTER TABLE of", arg2)
               : SQLITE_OK;
  case SQLITE_CREATE_TRIGGER:
  case SQLITE_CREATE_TEMP_TRIGGER:
    /* A trigger on a model view (INSTEAD OF) would make writes to it
     * look successful; on a model table it could never fire. */
    return is_protected_in(c, arg2, schema)
               ? refuse_protected(c, "CREATE TRIGGER on", arg2)
               : SQLITE_OK;
  case SQLITE_CREATE_TEMP_TABLE:
  case SQLITE_CREATE_TEMP_VIEW:
  case SQLITE_CREATE_TABLE:
  case SQLITE_CREATE_VIEW:
    return is_protected_in(c, arg1, schema)
               ? refuse_protected(c, "CREATE of a second", arg1)
               : SQLITE_OK;
  case SQLITE_CREATE_VTABLE:
    if (name_is(arg2, "tm_rows"))
      return deny(c, "virtual tables of module %s are the library's own",
                  arg2);
    return is_protected_in(c, arg1, schema)
               ? refuse_protected(c, "CREATE of a second", arg1)
               : SQLITE_OK;
  default:
    return SQLITE_OK;
  }
}

/* ---- the progress handler ------------------------------------------------ */

static int progress(void *user_data) {
  sql_connection *c = user_data;
  if (c->interrupt_requested) {
    c->stopped = STOP_INTERRUPT;
    return 1;
  }
  if (c->deadline_us && g_get_monotonic_time() >= c->deadline_us) {
    c->stopped = STOP_TIMEOUT;
    return 1;
  }
  return 0;
}

void sql_connection_arm(sql_connection *c, double timeout_seconds) {
  c->interrupt_requested = 0;
  c->stopped = STOP_NONE;
  c->denial = NULL;
  c->timeout_seconds = timeout_seconds;
  c->deadline_us =
      timeout_seconds > 0
          ? g_get_monotonic_time() + (gint64)(timeout_seconds * 1e6)
          : 0;
}

void sql_connection_disarm(sql_connection *c) {
  c->deadline_us = 0;
}

void sql_connection_interrupt(sql_connection *c) {
  c->interrupt_requested = 1;
  /* Also stops work between progress checks (documented as safe from
   * another thread, and what the sqlite3 shell calls from its handler). */
  sqlite3_interrupt(c->db);
}

/* ---- errors ---------------------------------------------------------------- */

void sql_connection_set_error(sql_connection *c, int code, GError **error) {
  int rc = sqlite3_errcode(c->db);
  const char *message = sqlite3_errmsg(c->db);
  if (rc == SQLITE_INTERRUPT && c->stopped == STOP_TIMEOUT) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_INTERRUPTED,
                "query stopped: it ran longer than the %g s timeout",
                c->timeout_seconds);
  } else if (rc == SQLITE_INTERRUPT) {
    g_set_error_literal(error, TM_SQL_ERROR, TM_SQL_ERROR_INTERRUPTED,
                        "query interrupted");
  } else if (c->denial && (rc == SQLITE_AUTH ||
                            g_str_has_prefix(message, "not authorized"))) {
    /* SQLite says "not authorized" (or "... to use function: f", or
     * "authorization denied" at run time); the authorizer knows why. */
    g_set_error(error, TM_SQL_ERROR, code, "%s: %s", message, c->denial);
  } else {
    g_set_error(error, TM_SQL_ERROR, code, "%s", message);
  }
  c->denial = NULL;
}

void sql_connection_explain_error(sql_connection *c, GError **error) {
  if (!error || !*error ||
      g_error_matches(*error, TM_SQL_ERROR, TM_SQL_ERROR_INTERRUPTED))
    return;
  if (c->stopped != STOP_NONE || c->interrupt_requested) {
    /* The statement failed because the progress handler or
     * sqlite3_interrupt() stopped it: that is the reason, whatever text
     * the failure carried. */
    g_clear_error(error);
    if (c->stopped == STOP_TIMEOUT)
      g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_INTERRUPTED,
                  "query stopped: it ran longer than the %g s timeout",
                  c->timeout_seconds);
    else
      g_set_error_literal(error, TM_SQL_ERROR, TM_SQL_ERROR_INTERRUPTED,
                          "query interrupted");
    return;
  }
  if (c->denial && (strstr((*error)->message, "not authorized") ||
                    strstr((*error)->message, "authorization denied"))) {
    char *message = g_strdup_printf("%s: %s", (*error)->message, c->denial);
    g_free((*error)->message);
    (*error)->message = message;
    c->denial = NULL;
  }
}

/* ---- opening ------------------------------------------------------------- */

static void refuse_fts3_tokenizer(sqlite3_context *ctx, int argc,
                                  sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_error(ctx, "fts3_tokenizer() is disabled", -1);
}

static bool db_config(sqlite3 *db, int op, int value, const char *what,
                      GError **error) {
  int now = -1;
  if (sqlite3_db_config(db, op, value, &now) != SQLITE_OK || now != value) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                "cannot set %s on the SQLite connection", what);
    return false;
  }
  return true;
}

static bool configure(sql_connection *c, const tm_model *model,
                      const sql_connection_options *options, GError **error) {
  sqlite3 *db = c->db;
  if (!db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0,
                 "the FTS3 tokenizer switch", error) ||
      !db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0,
                 "the extension loading switch", error) ||
      !db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, "defensive mode", error) ||
      !db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, "untrusted schema",
                 error))
    return false;
  for (int n_args = 1; n_args <= 2; n_args++) {
    if (sqlite3_create_function_v2(
            db, "fts3_tokenizer", n_args, SQLITE_UTF8 | SQLITE_DIRECTONLY,
            NULL, refuse_fts3_tokenizer, NULL, NULL, NULL) != SQLITE_OK) {
      g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                  "cannot disable fts3_tokenizer(): %s", sqlite3_errmsg(db));
      return false;
    }
  }

  int64_t max_value = options && options->max_value_bytes > 0
                          ? options->max_value_bytes
                          : SQL_CONNECTION_DEFAULT_MAX_VALUE_BYTES;
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH,
                (int)MIN(max_value, (int64_t)G_MAXINT));
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, SQL_CONNECTION_MAX_SQL_BYTES);
  sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 25 * 1000 * 1000);
  sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 100);
  /* Sorters, DISTINCT and GROUP BY tables and temp tables stay in memory,
   * as everything does in trace_processor: by default SQLite spills them
   * to files in /tmp beyond 2 MB, which made a DISTINCT over a million
   * span-join rows spend as much time in the kernel as in SQLite, and
   * wrote trace data to disk. */
  if (sqlite3_exec(db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL) !=
      SQLITE_OK) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                "cannot keep temporary tables in memory: %s",
                sqlite3_errmsg(db));
    return false;
  }

  if (!sql_printf_register(db, error))
    return false;

  sqlite3_set_authorizer(db, authorize, c);
  sqlite3_progress_handler(db, PROGRESS_OPS, progress, c);

  for (size_t i = 0; registrars[i]; i++)
    if (!registrars[i](db, model, error))
      return false;
  return true;
}

sql_connection *sql_connection_open(const char *filename, int flags,
                                    const tm_model *model,
                                    const sql_connection_options *options,
                                    GError **error) {
  sql_connection *c = g_new0(sql_connection, 1);
  c->allow_attach = options && options->allow_attach;
  if (sqlite3_open_v2(filename, &c->db, flags & ~SQLITE_OPEN_URI, NULL) !=
      SQLITE_OK) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                "cannot open the SQLite database %s: %s", filename,
                c->db ? sqlite3_errmsg(c->db) : "out of memory");
    sql_connection_close(c);
    return NULL;
  }
  if (!configure(c, model, options, error)) {
    sql_connection_close(c);
    return NULL;
  }
  return c;
}

void sql_connection_close(sql_connection *c) {
  if (!c)
    return;
  sqlite3_close_v2(c->db);
  if (c->protected_names)
    g_hash_table_destroy(c->protected_names);
  g_free(c);
}

sqlite3 *sql_connection_borrow_db(sql_connection *c) {
  return c->db;
}

bool sql_connection_seal(sql_connection *c, GError **error) {
  sqlite3_stmt *stmt = NULL;
  if (!c->protected_names)
    c->protected_names =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  if (sqlite3_prepare_v2(c->db,
                         "SELECT name FROM main.sqlite_schema "
                         "WHERE type IN ('table', 'view')",
                         -1, &stmt, NULL) != SQLITE_OK) {
    sql_connection_set_error(c, TM_SQL_ERROR_QUERY, error);
    return false;
  }
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(stmt, 0);
    if (name)
      g_hash_table_add(c->protected_names, g_ascii_strdown(name, -1));
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) {
    sql_connection_set_error(c, TM_SQL_ERROR_QUERY, error);
    return false;
  }
  /* sqlite_schema itself: DEFENSIVE already refuses writing it. */
  c->sealed = true;
  return true;
}
