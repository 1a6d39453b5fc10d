#include "record_support.h"

#include <string.h>
#include <time.h>

#include "e2e_support.h"

char *record_trace(const char *dir, const char *name, const char *config_text, record_body body,
                   void *user) {
  return record_trace_on_clock(dir, name, config_text, TMR_NOW_CLOCK_AUTO, body, user);
}

char *record_trace_on_clock(const char *dir, const char *name, const char *config_text,
                            tmr_now_clock now_clock, record_body body, void *user) {
  char *path = g_build_filename(dir, name, NULL);
  GError *error = NULL;
  tmr_config *config = tmr_config_parse_text(config_text, strlen(config_text), name, &error);
  g_assert_no_error(error);
  tmr_session_options options = {.output_path = path, .producer_name = "record-test",
                                 .now_clock = now_clock};
  tmr_session *session = tmr_session_new(config, &options, &error);
  g_assert_no_error(error);
  g_assert_true(tmr_session_start(session, &error));
  g_assert_no_error(error);
  if (body)
    body(session, user);
  g_assert_true(tmr_session_stop(session, &error));
  g_assert_no_error(error);
  tmr_session_free(session);
  tmr_config_free(config);
  return path;
}

char *record_decode(const char *path) {
  const char *argv[] = {"/bin/sh", "-c",
                        "exec \"$0\" --decode=tracemerge.record.Trace -I \"$1\" "
                        "\"$1/recorded_trace.proto\" < \"$2\"",
                        TM_PROTOC, TM_PROTO_DIR, path, NULL};
  char *out = NULL, *err = NULL;
  int status = 0;
  GError *error = NULL;
  g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
               &error);
  g_assert_no_error(error);
  if (!g_spawn_check_wait_status(status, NULL) || (err && *err))
    g_error("protoc --decode of %s failed: %s", path, err);
  g_free(err);
  return out;
}

guint record_count(const char *haystack, const char *needle) {
  guint n = 0;
  size_t len = strlen(needle);
  for (const char *p = strstr(haystack, needle); p; p = strstr(p + len, needle))
    n++;
  return n;
}

char *record_query(const char *path, const char *sql) {
  const char *inputs[] = {path, NULL};
  return e2e_query(inputs, sql);
}

int64_t record_boottime(void) {
  struct timespec t;
  clock_gettime(CLOCK_BOOTTIME, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
