/*
 * Queries through the library, for tests that hold a tm_session.
 */
#ifndef TM_TEST_SESSION_QUERY_H
#define TM_TEST_SESSION_QUERY_H

#include <tracemerge/tracemerge.h>

/* The rows `sql` gives on `session`, as CSV with its header line, as the
 * CLI prints them; the query must succeed (asserted). Free with free(). */
char *session_query_csv(tm_session *session, const char *sql);

#endif /* TM_TEST_SESSION_QUERY_H */
