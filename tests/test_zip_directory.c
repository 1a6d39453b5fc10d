/* Unit tests of core/input/zip_directory: a ZIP's central directory read
 * from disk. The ZIPs are written by libarchive (the fixture's zip_of,
 * and with its zip64 option), so the expected fields are derived from the
 * members: their sizes, zlib's crc32 of their bytes, deflate as method. */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "container_fixture.h"
#include "input/zip_directory.h"

/* `bytes` in a file of the fixture's directory, opened. */
static int open_written(fixture *f, const char *name, GBytes *bytes,
                        uint64_t *size) {
  *size = g_bytes_get_size(bytes);
  const char *path = fixture_write(f, name, bytes);
  int fd = open(path, O_RDONLY);
  g_assert_cmpint(fd, >=, 0);
  return fd;
}

static void assert_members_found(int fd, uint64_t size, const fixture_member *m,
                                 size_t n) {
  char *why = NULL;
  uint64_t why_at = 0;
  zip_directory *dir = zip_directory_read(fd, size, &why, &why_at);
  g_assert_null(why);
  g_assert_nonnull(dir);
  size_t cursor = 0;
  uint64_t last_offset = 0;
  for (size_t k = 0; k < n; k++) {
    const zip_entry *e = zip_directory_find(dir, &cursor, m[k].name);
    g_assert_nonnull(e);
    g_assert_cmpuint(cursor, ==, k + 1);
    g_assert_cmpuint(e->method, ==, ZIP_METHOD_DEFLATE);
    size_t len;
    const uint8_t *data = g_bytes_get_data(m[k].data, &len);
    g_assert_cmpuint(e->uncompressed_size, ==, len);
    g_assert_cmpuint(e->crc32, ==, (uint32_t)crc32(0, data, (uInt)len));
    g_assert_cmpuint(e->local_header_offset, >=, last_offset);
    last_offset = e->local_header_offset;
    uint64_t data_at = 0;
    char *why = NULL;
    g_assert_true(zip_entry_data_offset(fd, e, &data_at, &why));
    g_assert_null(why);
    /* The data follows the 30-byte header and the name (and extras). */
    g_assert_cmpuint(data_at, >=, e->local_header_offset + 30 + strlen(m[k].name));
    g_assert_cmpuint(data_at + e->compressed_size, <=, size);
  }
  /* Past the last member nothing more is found. */
  g_assert_null(zip_directory_find(dir, &cursor, m[0].name));
  g_assert_cmpuint(cursor, ==, n);
  zip_directory_free(dir);
}

static void test_members_are_found_in_local_header_order_with_their_fields(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = noisy_json(100000, 31), *b = text("[\"b\"]");
  fixture_member m[] = {{"dir/a.json", a}, {"b.json", b}};
  uint64_t size;
  int fd = open_written(&f, "plain.zip", zip_of(m, 2), &size);
  assert_members_found(fd, size, m, 2);
  close(fd);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

/* libarchive's zip64 option writes zip64 extra fields and end records:
 * the directory is read through them. */
static void test_a_zip64_directory_is_read_through_its_end_record(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = noisy_json(70000, 32), *b = text("[\"b\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  uint64_t size;
  GBytes *zip = build_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, "zip:zip64",
                              m, 2);
  size_t len;
  const uint8_t *bytes = g_bytes_get_data(zip, &len);
  /* It is a zip64 archive: its end has the zip64 end record locator. */
  g_assert_nonnull(memmem(bytes, len, "PK\x06\x07", 4));
  int fd = open_written(&f, "z64.zip", zip, &size);
  assert_members_found(fd, size, m, 2);
  close(fd);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

/* Bytes before the ZIP (a self-extractor's stub) move every offset:
 * libarchive adjusts them, this reader gives no directory and leaves the
 * archive to libarchive; so does anything that is not a ZIP. */
static void test_no_directory_where_offsets_do_not_line_up_or_there_is_none(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  fixture_member m[] = {{"a.json", a}};
  GBytes *zip = zip_of(m, 1);
  GBytes *stub = g_bytes_new("#!/bin/sh\nexit 0\n", 17);
  uint64_t size, why_at = 0;
  char *why = NULL;
  int fd = open_written(&f, "sfx.zip", concat(stub, zip), &size);
  g_assert_null(zip_directory_read(fd, size, &why, &why_at));
  close(fd);
  fd = open_written(&f, "text.json", g_bytes_ref(a), &size);
  g_assert_null(zip_directory_read(fd, size, &why, &why_at));
  close(fd);
  /* Cut inside the directory: its records run past the end. */
  fd = open_written(&f, "cut.zip", prefix(zip, g_bytes_get_size(zip) - 30), &size);
  g_assert_null(zip_directory_read(fd, size, &why, &why_at));
  close(fd);
  /* Not understood is not damaged: no cause given. */
  g_assert_null(why);
  g_bytes_unref(stub);
  g_bytes_unref(zip);
  g_bytes_unref(a);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/zip-directory/members-are-found-in-local-header-order-with-their-fields",
                  test_members_are_found_in_local_header_order_with_their_fields);
  g_test_add_func("/zip-directory/a-zip64-directory-is-read-through-its-end-record",
                  test_a_zip64_directory_is_read_through_its_end_record);
  g_test_add_func(
      "/zip-directory/no-directory-where-offsets-do-not-line-up-or-there-is-none",
      test_no_directory_where_offsets_do_not_line_up_or_there_is_none);
  return g_test_run();
}
