/*
 * tracemerge_sqlite: a loadable SQLite extension that gives a database
 * saved by `tracemerge import` trace_processor's scalar and aggregate
 * functions (sql_functions.h) in any SQLite tool:
 *
 *   sqlite3 trace.sqlite
 *   sqlite> .load /usr/lib/x86_64-linux-gnu/tracemerge/tracemerge_sqlite
 *   sqlite> SELECT EXTRACT_ARG(arg_set_id, 'args.x') FROM slice;
 *
 * Without the model, EXTRACT_ARG reads the saved `args` table and
 * TRACE_START/END/DUR the saved `trace_bounds`. Table functions, span
 * joins and PerfettoSQL need the library (`tracemerge query`).
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include <stddef.h>

#include "sql/sql_functions.h"

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_tracemergesqlite_init(sqlite3 *db, char **err,
                                  const sqlite3_api_routines *api);

int sqlite3_tracemergesqlite_init(sqlite3 *db, char **err,
                                  const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  int rc = sql_functions_register(db, NULL);
  if (rc != SQLITE_OK && err)
    *err = sqlite3_mprintf("tracemerge_sqlite: %s", sqlite3_errmsg(db));
  return rc;
}
