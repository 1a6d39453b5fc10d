/* Unit tests of inputs and containers: plain files, several root inputs,
 * and a sink that refuses. Archives are in test_container_archives.c,
 * gzip/zstd and nesting in test_container_compressed.c, damage in
 * test_container_damage.c; the fixture (archives built at test time, a
 * recording sink) in tests/support/container_fixture.h. */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_fixture.h"

/* ---- plain files ---- */

static void test_plain_json_file_is_one_leaf_row(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("{\"traceEvents\": []}");
  const char *path = fixture_write(&f, "t.json", g_bytes_ref(json));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 1);
  assert_row(&f, 0, TM_NULL_ID, path, size_of(json), "json", 0, false);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  const recorded_file *file = assert_delivered(&f, 0, 0, "json", json);
  g_assert_cmpuint(file->n_chunks, ==, 1);
  g_assert_cmpstr(f.rec.detected_names->pdata[0], ==, path);
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_plain_large_file_arrives_in_bounded_chunks(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = noisy_json(2 * TM_CONTAINER_CHUNK + 1000, 1);
  const char *path = fixture_write(&f, "big.json", g_bytes_ref(json));
  fixture_read_ok(&f, &path, 1);
  assert_row(&f, 0, TM_NULL_ID, path, size_of(json), "json", 0, false);
  const recorded_file *file = assert_delivered(&f, 0, 0, "json", json);
  /* The head alone first, then the rest in chunks of at most the limit. */
  g_assert_cmpuint(file->n_chunks, >=, 4);
  g_assert_cmpuint(file->first_chunk, ==, TM_CONTAINER_HEAD);
  g_assert_cmpuint(file->largest_chunk, ==, TM_CONTAINER_CHUNK);
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_plain_empty_file_is_an_unknown_type(void) {
  fixture f;
  fixture_init(&f);
  const char *path = fixture_write(&f, "empty", g_bytes_new(NULL, 0));
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want =
      g_strdup_printf("%s: Unknown trace type provided (ERR:fmt)", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  assert_row_count(&f, 1);
  assert_row(&f, 0, TM_NULL_ID, path, 0, "unknown", TM_NULL_INT64, false);
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  fixture_clear(&f);
}

static void test_plain_unknown_type_fails_naming_the_file(void) {
  fixture f;
  fixture_init(&f);
  const char *path =
      fixture_write(&f, "mystery.bin", text("MZ\x90\x00 not a trace"));
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want =
      g_strdup_printf("%s: Unknown trace type provided (ERR:fmt)", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  fixture_clear(&f);
}

static void test_plain_missing_file_fails_naming_it(void) {
  fixture f;
  fixture_init(&f);
  const char *good = fixture_write(&f, "good.json", text("[]"));
  char *missing = g_build_filename(f.dir, "no-such-file.json", NULL);
  const char *paths[] = {good, missing};
  GError *error = NULL;
  g_assert_false(fixture_read(&f, paths, 2, &error));
  char *want =
      g_strdup_printf("%s: cannot open: %s", missing, g_strerror(ENOENT));
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  /* The first input was read before the failure. */
  assert_row_count(&f, 1);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  g_free(missing);
  fixture_clear(&f);
}

static void test_plain_directory_fails_naming_it(void) {
  fixture f;
  fixture_init(&f);
  const char *path = f.dir;
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want = g_strdup_printf("%s: not a file", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  assert_row_count(&f, 0);
  fixture_clear(&f);
}

/* ---- several inputs ---- */

static void test_roots_are_members_of_one_virtual_archive(void) {
  fixture f;
  fixture_init(&f);
  GBytes *b = text("[\"b\"]");
  GBytes *proto = g_bytes_new("\x0a\x00", 2);
  GBytes *inner = text("{\"in zip\": 1}");
  fixture_member m[] = {{"inner.json", inner}};
  GBytes *zip = zip_of(m, 1);
  int64_t zip_size = size_of(zip);
  const char *b_path = fixture_write(&f, "b.json", g_bytes_ref(b));
  const char *zip_path = fixture_write(&f, "c.zip", zip);
  const char *proto_path = fixture_write(&f, "z.pb", g_bytes_ref(proto));
  const char *paths[] = {b_path, zip_path, proto_path};
  fixture_read_ok(&f, paths, 3);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, b_path, size_of(b), "json", 3, false);
  assert_row(&f, 1, TM_NULL_ID, zip_path, zip_size, "zip", 1, true);
  assert_row(&f, 2, 1, "inner.json", size_of(inner), "json", 2, false);
  assert_row(&f, 3, TM_NULL_ID, proto_path, size_of(proto), "proto", 0, false);
  assert_delivered(&f, 0, 0, "json", b);
  assert_delivered(&f, 1, 2, "json", inner);
  assert_delivered(&f, 2, 3, "proto", proto);
  g_bytes_unref(b);
  g_bytes_unref(proto);
  g_bytes_unref(inner);
  fixture_clear(&f);
}

/* ---- sink refusals ---- */

static void test_sink_refusing_a_file_stops_everything(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", a}, {"c.json", a}};
  const char *path = fixture_write(&f, "r.zip", zip_of(m, N_MEMBERS(m)));
  f.rec.refuse_begin_of = 2;
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
  g_assert_cmpstr(error->message, ==, "begin refused 2");
  g_error_free(error);
  assert_row_count(&f, 4);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  g_bytes_unref(a);
  fixture_clear(&f);
}

static void test_sink_refusing_a_chunk_stops_everything(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("[\"a\"]");
  const char *paths[] = {fixture_write(&f, "a.json", g_bytes_ref(json)),
                         fixture_write(&f, "b.json", g_bytes_ref(json))};
  f.rec.refuse_chunks = true;
  GError *error = NULL;
  g_assert_false(fixture_read(&f, paths, 2, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
  g_assert_cmpstr(error->message, ==, "chunk refused 0");
  g_error_free(error);
  assert_row_count(&f, 1);
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_sink_refusing_without_an_error_names_the_file(void) {
  fixture f;
  fixture_init(&f);
  const char *path = fixture_write(&f, "a.json", text("[]"));
  f.rec.refuse_end_silently = true;
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want = g_strdup_printf("%s: the session refused the file", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/container/plain/json-file-is-one-leaf-row",
                  test_plain_json_file_is_one_leaf_row);
  g_test_add_func("/container/plain/large-file-arrives-in-bounded-chunks",
                  test_plain_large_file_arrives_in_bounded_chunks);
  g_test_add_func("/container/plain/empty-file-is-an-unknown-type",
                  test_plain_empty_file_is_an_unknown_type);
  g_test_add_func("/container/plain/unknown-type-fails-naming-the-file",
                  test_plain_unknown_type_fails_naming_the_file);
  g_test_add_func("/container/plain/missing-file-fails-naming-it",
                  test_plain_missing_file_fails_naming_it);
  g_test_add_func("/container/plain/directory-fails-naming-it",
                  test_plain_directory_fails_naming_it);
  g_test_add_func("/container/roots/are-members-of-one-virtual-archive",
                  test_roots_are_members_of_one_virtual_archive);
  g_test_add_func("/container/sink/refusing-a-file-stops-everything",
                  test_sink_refusing_a_file_stops_everything);
  g_test_add_func("/container/sink/refusing-a-chunk-stops-everything",
                  test_sink_refusing_a_chunk_stops_everything);
  g_test_add_func("/container/sink/refusing-without-an-error-names-the-file",
                  test_sink_refusing_without_an_error_names_the_file);
  return g_test_run();
}
