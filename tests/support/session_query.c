/* Queries through the library (see session_query.h). */
#include "session_query.h"

#include <glib.h>
#include <stdio.h>

char *session_query_csv(tm_session *session, const char *sql) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  g_assert_nonnull(out);
  GError *error = NULL;
  bool ok = tm_session_query(session, sql, TM_FORMAT_CSV, out, &error);
  fclose(out);
  g_assert_no_error(error);
  g_assert_true(ok);
  return text;
}
