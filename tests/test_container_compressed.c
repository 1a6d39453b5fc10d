/* Unit tests of gzip and zstd inputs and of containers nested in one
 * another, up to the depth limit (fixture:
 * tests/support/container_fixture.h). */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_fixture.h"

/* ---- gzip and zstd ---- */

static void test_gzip_payload_is_one_row_with_an_empty_name(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = noisy_json(TM_CONTAINER_CHUNK * 3 + 7, 4);
  GBytes *gz = gzip_of(json);
  int64_t gz_size = size_of(gz);
  const char *path = fixture_write(&f, "t.json.gz", gz);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 0, TM_NULL_ID, path, gz_size, "gzip", 0, true);
  assert_row(&f, 1, 0, "", size_of(json), "json", 1, false);
  const recorded_file *file = assert_delivered(&f, 0, 1, "json", json);
  g_assert_cmpuint(file->n_chunks, >=, 4);
  /* A payload has no name of its own to detect by. */
  g_assert_cmpstr(f.rec.detected_names->pdata[0], ==, "(null)");
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_gzip_concatenated_members_are_one_stream(void) {
  fixture f;
  fixture_init(&f);
  GBytes *first = text("[{\"name\": \"first\"},");
  GBytes *second = text("{\"name\": \"second\"}]");
  GBytes *gz1 = gzip_of(first);
  GBytes *gz2 = gzip_of(second);
  GBytes *both = concat(gz1, gz2);
  GBytes *whole = concat(first, second);
  int64_t both_size = size_of(both);
  const char *path = fixture_write(&f, "cat.json.gz", both);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 0, TM_NULL_ID, path, both_size, "gzip", 0, true);
  assert_row(&f, 1, 0, "", size_of(whole), "json", 1, false);
  assert_delivered(&f, 0, 1, "json", whole);
  g_bytes_unref(first);
  g_bytes_unref(second);
  g_bytes_unref(gz1);
  g_bytes_unref(gz2);
  g_bytes_unref(whole);
  fixture_clear(&f);
}

static void test_gzip_with_a_bad_header_is_damage(void) {
  fixture f;
  fixture_init(&f);
  /* The magic, then a compression method gzip does not define. */
  const char *path = fixture_write(
      &f, "bad.gz", g_bytes_new("\x1f\x8b\x63\x00junk junk junk junk", 22));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 1);
  assert_row(&f, 0, TM_NULL_ID, path, 22, "gzip", 0, true);
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  /* libarchive's own words follow. */
  char *want = g_strdup_printf("0: %s: cannot be opened as gzip: ", path);
  const char *got = f.rec.container_damages->pdata[0];
  g_assert_true(g_str_has_prefix(got, want));
  g_assert_cmpuint(strlen(got), >, strlen(want));
  g_free(want);
  fixture_clear(&f);
}

static void test_zstd_payload_is_one_row_with_an_empty_name(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = noisy_json(TM_CONTAINER_CHUNK + 99, 5);
  GBytes *zst = compressed(ARCHIVE_FILTER_ZSTD, json);
  int64_t zst_size = size_of(zst);
  const char *path = fixture_write(&f, "t.json.zst", zst);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 0, TM_NULL_ID, path, zst_size, "zstd", 0, true);
  assert_row(&f, 1, 0, "", size_of(json), "json", 1, false);
  assert_delivered(&f, 0, 1, "json", json);
  g_bytes_unref(json);
  fixture_clear(&f);
}

/* ---- nesting ---- */

static void test_nested_gzip_inside_zip(void) {
  fixture f;
  fixture_init(&f);
  GBytes *inner = noisy_json(TM_CONTAINER_CHUNK + 1234, 6);
  GBytes *inner_gz = gzip_of(inner);
  GBytes *after = text("[\"after\"]");
  fixture_member m[] = {{"logs/inner.json.gz", inner_gz},
                        {"after.json", after}};
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  int64_t zip_size = size_of(zip);
  const char *path = fixture_write(&f, "outer.zip", zip);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, path, zip_size, "zip", 0, true);
  assert_row(&f, 1, 0, "logs/inner.json.gz", size_of(inner_gz), "gzip", 1,
             true);
  assert_row(&f, 2, 0, "after.json", size_of(after), "json", 3, false);
  assert_row(&f, 3, 1, "", size_of(inner), "json", 2, false);
  assert_delivered(&f, 0, 3, "json", inner);
  assert_delivered(&f, 1, 2, "json", after);
  g_bytes_unref(inner);
  g_bytes_unref(inner_gz);
  g_bytes_unref(after);
  fixture_clear(&f);
}

static void test_nested_zip_inside_tar(void) {
  fixture f;
  fixture_init(&f);
  GBytes *x = text("{\"x\": true}");
  GBytes *y = noisy_json(TM_CONTAINER_CHUNK + 77, 7);
  fixture_member inner_m[] = {{"deep/", NULL},
                              {"x.json", x},
                              {"__MACOSX/._x.json", x},
                              {"deep/y.json", y},
                              {"deep/.DS_Store", x}};
  GBytes *inner_zip = zip_of(inner_m, N_MEMBERS(inner_m));
  GBytes *z = text("[\"z\"]");
  fixture_member m[] = {{"z.json", z}, {"bundle/inner.zip", inner_zip}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  int64_t tar_size = size_of(tar);
  const char *path = fixture_write(&f, "outer.tar", tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 5);
  assert_row(&f, 0, TM_NULL_ID, path, tar_size, "tar", 0, true);
  assert_row(&f, 1, 0, "z.json", size_of(z), "json", 4, false);
  assert_row(&f, 2, 0, "bundle/inner.zip", size_of(inner_zip), "zip", 1, true);
  assert_row(&f, 3, 2, "x.json", size_of(x), "json", 3, false);
  assert_row(&f, 4, 2, "deep/y.json", size_of(y), "json", 2, false);
  assert_delivered(&f, 0, 1, "json", z);
  assert_delivered(&f, 1, 3, "json", x);
  assert_delivered(&f, 2, 4, "json", y);
  g_bytes_unref(x);
  g_bytes_unref(y);
  g_bytes_unref(z);
  g_bytes_unref(inner_zip);
  fixture_clear(&f);
}

static void test_nested_sixteen_levels_are_read(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("[\"deep\"]");
  const char *path = fixture_write(&f, "deep.gz", gzip_nested(json, 16));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 17);
  for (uint32_t i = 0; i < 16; i++)
    g_assert_true(f.model->trace_files.data[i].is_container);
  assert_row(&f, 16, 15, "", size_of(json), "json", 16, false);
  assert_delivered(&f, 0, 16, "json", json);
  g_bytes_unref(json);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/container/gzip/payload-is-one-row-with-an-empty-name",
                  test_gzip_payload_is_one_row_with_an_empty_name);
  g_test_add_func("/container/gzip/concatenated-members-are-one-stream",
                  test_gzip_concatenated_members_are_one_stream);
  g_test_add_func("/container/gzip/bad-header-is-damage",
                  test_gzip_with_a_bad_header_is_damage);
  g_test_add_func("/container/zstd/payload-is-one-row-with-an-empty-name",
                  test_zstd_payload_is_one_row_with_an_empty_name);
  g_test_add_func("/container/nested/gzip-inside-zip",
                  test_nested_gzip_inside_zip);
  g_test_add_func("/container/nested/zip-inside-tar",
                  test_nested_zip_inside_tar);
  g_test_add_func("/container/nested/sixteen-levels-are-read",
                  test_nested_sixteen_levels_are_read);
  return g_test_run();
}
