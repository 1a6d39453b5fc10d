/* Running the JSON reader on the fake host (json_run.h). */
#include "json_run.h"
#include "reader_load.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

bool import_logs_in_transcript;

fake_host *json_fake_host_new(void) {
  fake_host *fake = fake_host_new();
  fake_host_set_services_size(fake, offsetof(tm_host_services, track_async));
  fake_host_set_transcript(fake, FAKE_HOST_STATS | FAKE_HOST_IDS_BY_ORDER |
                                     FAKE_HOST_PROCESS_CALLS |
                                     (import_logs_in_transcript ? FAKE_HOST_IMPORT_LOGS : 0));
  return fake;
}

void json_run_free(json_run *h) {
  fake_host_free(h->fake);
  g_string_free(h->log, TRUE);
  g_free(h);
}

int64_t stat_total(json_run *h, const char *name) { return fake_host_stat(h->fake, name); }

json_run *read_bytes_with(const tm_reader_descriptor *rd, const char *config,
                          const char *bytes, size_t len, size_t chunk) {
  json_run *h = g_new0(json_run, 1);
  h->fake = json_fake_host_new();
  fake_host_set_config(h->fake, config);
  h->status = fake_host_run(h->fake, rd, (const uint8_t *)bytes, len, MAX(chunk, 1));
  g_assert_false(fake_host_has_pending_args(h->fake));
  g_assert_cmpuint(fake_host_count_lines(h->fake, "error at "), ==, h->status == TM_OK ? 0 : 1);
  h->log = g_string_new(fake_host_borrow_transcript(h->fake));
  g_string_append(h->log, h->status == TM_OK ? "status=ok\n" : "status=error\n");
  return h;
}

json_run *read_bytes(const char *bytes, size_t len, size_t chunk) {
  return read_bytes_with(reader, NULL, bytes, len, chunk);
}

json_run *read_all_chunkings(const char *bytes, size_t len) {
  json_run *whole = read_bytes(bytes, len, MAX(len, 1));
  const size_t chunks[] = {7, 1};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    json_run *other = read_bytes(bytes, len, chunks[i]);
    g_assert_cmpstr(other->log->str, ==, whole->log->str);
    json_run_free(other);
  }
  return whole;
}

char *fixture_path(const char *name) {
  return g_test_build_filename(G_TEST_DIST, "data", "json", name, NULL);
}

json_run *read_fixture(const char *name) {
  g_autofree char *path = fixture_path(name);
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  g_file_get_contents(path, &bytes, &len, &error);
  g_assert_no_error(error);
  return read_all_chunkings(bytes, len);
}

void assert_fixture_log(const char *name, const char *expected) {
  json_run *h = read_fixture(name);
  g_assert_cmpstr(h->log->str, ==, expected);
  json_run_free(h);
}

void assert_text_log(const char *text, const char *expected) {
  json_run *h = read_all_chunkings(text, strlen(text));
  g_assert_cmpstr(h->log->str, ==, expected);
  json_run_free(h);
}

/* --- tallies ---------------------------------------------------------------- */

/* The log's lines one by one, found with memchr: a real trace's log is
 * megabytes, and under ASan each str* call on it (g_strsplit's strstr,
 * strchr) measures the rest of it, which made a line walk quadratic. */
typedef struct line_walk {
  const char *at, *end;
} line_walk;

static bool next_line(line_walk *w, char *line, size_t size) {
  if (w->at >= w->end)
    return false;
  const char *nl = memchr(w->at, '\n', (size_t)(w->end - w->at));
  size_t len = nl ? (size_t)(nl - w->at) : (size_t)(w->end - w->at);
  /* Lines longer than `size` are cut: the tallies read only their start. */
  size_t kept = MIN(len, size - 1);
  memcpy(line, w->at, kept);
  line[kept] = '\0';
  w->at += len + 1;
  return true;
}

static line_walk walk(json_run *h) {
  return (line_walk){h->log->str, h->log->str + h->log->len};
}

size_t count_lines(json_run *h, const char *prefix, const char *containing) {
  size_t n = 0;
  char line[4096];
  for (line_walk w = walk(h); next_line(&w, line, sizeof line);)
    n += g_str_has_prefix(line, prefix) && (!containing || strstr(line, containing));
  return n;
}

size_t count_on_tracks(json_run *h, const char *event, const char *track_type) {
  g_autoptr(GHashTable) tracks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *track_prefix = g_strdup_printf(" = %s", track_type);
  size_t event_len = strlen(event);
  size_t n = 0;
  char line[4096];
  for (line_walk w = walk(h); next_line(&w, line, sizeof line);) {
    char ref[32];
    int end = 0;
    if (sscanf(line, "track %31s%n", ref, &end) == 1 &&
        g_str_has_prefix(line + end, track_prefix))
      g_hash_table_add(tracks, g_strdup(ref));
    else if (strncmp(line, event, event_len) == 0 && line[event_len] == ' ' &&
             sscanf(line + event_len, " %31s", ref) == 1 && g_hash_table_contains(tracks, ref))
      n++;
  }
  return n;
}

GPtrArray *process_names(json_run *h) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  char line[4096];
  for (line_walk w = walk(h); next_line(&w, line, sizeof line);) {
    if (!g_str_has_prefix(line, "process_name "))
      continue;
    const char *value = strstr(line, " = ");
    g_assert_nonnull(value);
    g_ptr_array_add(names, g_strdup(value + 3));
  }
  return names;
}

/* --- loading the readers ------------------------------------------------------ */

const tm_reader_descriptor *reader;
const tm_reader_descriptor *test_reader;
static void *reader_handle, *test_reader_handle;

bool json_run_load_readers(bool with_test_build) {
  reader = reader_load_from_env("TM_JSON_PLUGIN", &reader_handle);
  if (with_test_build)
    test_reader = reader_load_from_env("TM_JSON_TEST_PLUGIN", &test_reader_handle);
  return reader && (!with_test_build || test_reader);
}

void json_run_unload_readers(void) {
  if (test_reader_handle)
    dlclose(test_reader_handle);
  if (reader_handle)
    dlclose(reader_handle);
}
