/* Running the proto reader on the fake host (see proto_run.h). */
#include "proto_run.h"

GBytes *read_fixture(const char *name) {
  g_autofree char *path = g_strdup_printf("%s/%s.pb", PROTO_FIXTURE_DIR, name);
  GError *error = NULL;
  char *data;
  gsize len;
  g_file_get_contents(path, &data, &len, &error);
  g_assert_no_error(error);
  return g_bytes_new_take(data, len);
}

fake_host *run_bytes(const uint8_t *data, size_t len, size_t chunk, tm_status expected) {
  fake_host *fake = fake_host_new();
  tm_status status = fake_host_run(fake, tracemerge_reader_entry(), data, len, chunk);
  if (status != expected)
    g_error("status %d, expected %d; transcript:\n%s", status, expected,
            fake_host_borrow_transcript(fake));
  return fake;
}

fake_host *run_fixture(const char *name) {
  g_autoptr(GBytes) bytes = read_fixture(name);
  gsize len;
  const uint8_t *data = g_bytes_get_data(bytes, &len);
  fake_host *fake = run_bytes(data, len, len, TM_OK);
  g_assert_null(fake_host_borrow_error(fake, NULL));
  return fake;
}
