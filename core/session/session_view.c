/* The session as the sinks see it (see session_view.h). */
#include "session/session_view.h"

#include "session/session_internal.h"

const tm_model *session_imported_model(const tm_session *session) {
  return session && session->imported ? session->import.model : NULL;
}

/* Each host was given its file's machine row when the file began. */
uint32_t *session_file_machines(const tm_session *session, size_t *n) {
  *n = session->import.model->trace_files.len;
  uint32_t *machines = g_new(uint32_t, *n + 1);
  for (size_t i = 0; i < *n; i++)
    machines[i] = TM_NULL_ID;
  for (guint i = 0; i < session->import.hosts->len; i++) {
    const tm_host *host = g_ptr_array_index(session->import.hosts, i);
    if (host->file_id < *n)
      machines[host->file_id] = host->machine_id;
  }
  return machines;
}
