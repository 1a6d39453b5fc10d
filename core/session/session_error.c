/* TRACEMERGE_ERROR and the internal domains it stands for (session_error.h). */
#include "session/session_error.h"

#include <tracemerge/tracemerge.h>

#include "clock/clock_graph.h"
#include "config/textproto.h"
#include "input/manifest.h"
#include "sql/sql_output.h"

static tm_error_code public_code(const GError *error) {
  if (error->domain == TM_MANIFEST_ERROR)
    return TM_ERROR_MANIFEST;
  if (error->domain == TM_CONFIG_ERROR)
    return TM_ERROR_CONFIG;
  if (error->domain == TM_SQL_ERROR)
    return error->code == TM_SQL_ERROR_QUERY ? TM_ERROR_QUERY
           : error->code == TM_SQL_ERROR_INTERRUPTED ? TM_ERROR_INTERRUPTED
                                                     : TM_ERROR_OUTPUT;
  return TM_ERROR_FAILED;
}

bool session_error_publish(bool ok, GError **error) {
  if (!error || !*error || (*error)->domain == TRACEMERGE_ERROR)
    return ok;
  GError *internal = *error;
  *error = g_error_new_literal(TRACEMERGE_ERROR, public_code(internal),
                               internal->message);
  g_error_free(internal);
  return ok;
}
