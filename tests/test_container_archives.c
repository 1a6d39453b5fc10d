/* Unit tests of ZIP and TAR inputs: member rows and paths, hidden
 * members, unknown members, processing order, TAR variants, and a ZIP
 * read through a pipe (fixture: tests/support/container_fixture.h). */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_fixture.h"

/* ---- zip ---- */

static void test_zip_members_stream_in_archive_order_with_full_paths(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("{\"a\": 1}");
  GBytes *b = noisy_json(TM_CONTAINER_CHUNK + 5000, 2);
  GBytes *c = text("[{\"c\": 3}]");
  fixture_member m[] = {
      {"sub/", NULL}, {"sub/dir/", NULL}, {"sub/dir/a.json", a},
      {"b.json", b},  {"sub/c.json", c},
  };
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  int64_t zip_size = size_of(zip);
  const char *path = fixture_write(&f, "run.zip", zip);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, path, zip_size, "zip", 0, true);
  assert_row(&f, 1, 0, "sub/dir/a.json", size_of(a), "json", 3, false);
  assert_row(&f, 2, 0, "b.json", size_of(b), "json", 1, false);
  assert_row(&f, 3, 0, "sub/c.json", size_of(c), "json", 2, false);
  g_assert_cmpuint(f.rec.files->len, ==, 3);
  assert_delivered(&f, 0, 1, "json", a);
  const recorded_file *big = assert_delivered(&f, 1, 2, "json", b);
  g_assert_cmpuint(big->n_chunks, >=, 3);
  assert_delivered(&f, 2, 3, "json", c);
  g_assert_cmpstr(f.rec.detected_names->pdata[0], ==, "sub/dir/a.json");
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(c);
  fixture_clear(&f);
}

static void test_zip_hidden_members_get_no_row(void) {
  fixture f;
  fixture_init(&f);
  GBytes *junk = text("binary junk that no reader knows");
  GBytes *a = text("[1]");
  GBytes *b = text("[2]");
  fixture_member m[] = {
      {"__MACOSX/._a.json", junk},
      {".DS_Store", junk},
      {"a.json", a},
      {"sub/.hidden/x.json", junk},
      {"sub/._x.json", junk},
      {"./b..json", b},
      {"../x/.", b},
  };
  const char *path = fixture_write(&f, "mac.zip", zip_of(m, N_MEMBERS(m)));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 1, 0, "a.json", 3, "json", 3, false);
  assert_row(&f, 2, 0, "./b..json", 3, "json", 2, false);
  assert_row(&f, 3, 0, "../x/.", 3, "json", 1, false);
  g_assert_cmpuint(f.rec.files->len, ==, 3);
  assert_delivered(&f, 0, 1, "json", a);
  assert_delivered(&f, 1, 2, "json", b);
  assert_delivered(&f, 2, 3, "json", b);
  g_bytes_unref(junk);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_zip_unknown_member_fails_naming_archive_and_member(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[1]");
  GBytes *junk = text("ELF? no");
  fixture_member m[] = {{"a.json", a}, {"dir/b.bin", junk}};
  const char *path = fixture_write(&f, "u.zip", zip_of(m, N_MEMBERS(m)));
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want = g_strdup_printf(
      "%s/dir/b.bin: Unknown trace type provided (ERR:fmt)", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  /* Every member is sniffed before any is delivered. */
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  assert_row_count(&f, 3);
  assert_row(&f, 2, 0, "dir/b.bin", 0, "unknown", TM_NULL_INT64, false);
  g_bytes_unref(a);
  g_bytes_unref(junk);
  fixture_clear(&f);
}

/* The reference's example, with our fake types: the manifest first, then
 * protos, containers (with their own members right after them), other
 * types, symbols; by name within a priority. */
static void test_zip_processing_order_follows_archive_priority(void) {
  fixture f;
  fixture_init(&f);
  GBytes *b = text("{\"b\": 1}");
  GBytes *symbols = text("SYMBOLS for a");
  GBytes *proto = g_bytes_new("\x0a\x02\x08\x01", 4);
  GBytes *manifest = text("{\"perfetto_manifest\": {}}");
  GBytes *d = text("[\"d\"]");
  GBytes *d_gz = gzip_of(d);
  GBytes *zero = text("[0]");
  fixture_member m[] = {
      {"b.json", b},           {"a.symbols", symbols}, {"c.trace", proto},
      {"meta.json", manifest}, {"d.json.gz", d_gz},    {"0.json", zero},
  };
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  int64_t zip_size = size_of(zip);
  const char *path = fixture_write(&f, "order.zip", zip);
  fixture_read_ok(&f, &path, 1);
  /* Every member's row exists before any member is delivered; rows of a
   * nested container's members come when it is read. */
  g_assert_cmpuint(f.rec.rows_at_first_begin, ==, 7);
  assert_row_count(&f, 8);
  assert_row(&f, 0, TM_NULL_ID, path, zip_size, "zip", 0, true);
  assert_row(&f, 1, 0, "b.json", size_of(b), "json", 6, false);
  assert_row(&f, 2, 0, "a.symbols", size_of(symbols), "symbols", 7, false);
  assert_row(&f, 3, 0, "c.trace", 4, "proto", 2, false);
  assert_row(&f, 4, 0, "meta.json", size_of(manifest), "perfetto_manifest", 1,
             false);
  assert_row(&f, 5, 0, "d.json.gz", size_of(d_gz), "gzip", 3, true);
  assert_row(&f, 6, 0, "0.json", size_of(zero), "json", 5, false);
  assert_row(&f, 7, 5, "", size_of(d), "json", 4, false);
  /* The manifest first, then archive order. */
  g_assert_cmpuint(f.rec.files->len, ==, 6);
  assert_delivered(&f, 0, 4, "perfetto_manifest", manifest);
  assert_delivered(&f, 1, 1, "json", b);
  assert_delivered(&f, 2, 2, "symbols", symbols);
  assert_delivered(&f, 3, 3, "proto", proto);
  assert_delivered(&f, 4, 7, "json", d);
  assert_delivered(&f, 5, 6, "json", zero);
  g_bytes_unref(b);
  g_bytes_unref(symbols);
  g_bytes_unref(proto);
  g_bytes_unref(manifest);
  g_bytes_unref(d);
  g_bytes_unref(d_gz);
  g_bytes_unref(zero);
  fixture_clear(&f);
}

/* ---- tar ---- */

static void check_tar_format(int format, const char *magic) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[{\"ph\": \"X\"}]");
  GBytes *b = noisy_json(TM_CONTAINER_CHUNK * 2, 3);
  fixture_member m[] = {{"traces/", NULL},
                        {"traces/a.json", a},
                        {"traces/._a.json", a},
                        {"b.json", b}};
  GBytes *tar =
      build_archive(format, ARCHIVE_FILTER_NONE, NULL, m, N_MEMBERS(m));
  g_assert_cmpmem((const char *)g_bytes_get_data(tar, NULL) + 257,
                  strlen(magic) + 1, magic, strlen(magic) + 1);
  int64_t tar_size = size_of(tar);
  const char *path = fixture_write(&f, "t.tar", tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, tar_size, "tar", 0, true);
  assert_row(&f, 1, 0, "traces/a.json", size_of(a), "json", 2, false);
  assert_row(&f, 2, 0, "b.json", size_of(b), "json", 1, false);
  assert_delivered(&f, 0, 1, "json", a);
  const recorded_file *big = assert_delivered(&f, 1, 2, "json", b);
  g_assert_cmpuint(big->n_chunks, >=, 3);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_tar_ustar_members(void) {
  check_tar_format(ARCHIVE_FORMAT_TAR_USTAR, "ustar");
}

static void test_tar_gnu_members(void) {
  check_tar_format(ARCHIVE_FORMAT_TAR_GNUTAR, "ustar  ");
}

static void test_tar_gz_is_a_gzip_whose_payload_is_a_tar(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = text("{\"b\": 2}");
  fixture_member m[] = {{"a.json", a}, {"x/b.json", b}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  GBytes *tgz = gzip_of(tar);
  int64_t tgz_size = size_of(tgz);
  const char *path = fixture_write(&f, "t.tar.gz", tgz);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, path, tgz_size, "gzip", 0, true);
  assert_row(&f, 1, 0, "", size_of(tar), "tar", 1, true);
  assert_row(&f, 2, 1, "a.json", size_of(a), "json", 2, false);
  assert_row(&f, 3, 1, "x/b.json", size_of(b), "json", 3, false);
  assert_delivered(&f, 0, 2, "json", a);
  assert_delivered(&f, 1, 3, "json", b);
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(tar);
  fixture_clear(&f);
}

static void test_tar_sparse_member_holes_arrive_as_zeros(void) {
  fixture f;
  fixture_init(&f);
  GByteArray *out = g_byte_array_new();
  struct archive *a = archive_write_new();
  g_assert_cmpint(archive_write_set_format_pax(a), ==, ARCHIVE_OK);
  g_assert_cmpint(archive_write_open(a, out, NULL, append_written, NULL), ==,
                  ARCHIVE_OK);
  struct archive_entry *entry = archive_entry_new();
  archive_entry_set_pathname(entry, "sparse.json");
  archive_entry_set_filetype(entry, AE_IFREG);
  archive_entry_set_perm(entry, 0644);
  archive_entry_set_size(entry, 200000);
  archive_entry_sparse_add_entry(entry, 0, 1000);
  archive_entry_sparse_add_entry(entry, 150000, 1000);
  g_assert_cmpint(archive_write_header(a, entry), ==, ARCHIVE_OK);
  /* The writer takes the logical contents and stores only the regions. */
  uint8_t *whole = g_malloc0(200000);
  memset(whole, 'x', 1000);
  whole[0] = '[';
  memset(whole + 150000, 'y', 1000);
  g_assert_cmpint(archive_write_data(a, whole, 200000), ==, 200000);
  archive_entry_free(entry);
  g_assert_cmpint(archive_write_close(a), ==, ARCHIVE_OK);
  archive_write_free(a);
  GBytes *expected = g_bytes_new_take(whole, 200000);
  GBytes *tar = g_byte_array_free_to_bytes(out);
  /* Stored sparse: far smaller than the member. */
  g_assert_cmpuint(g_bytes_get_size(tar), <, 20000);
  const char *path = fixture_write(&f, "sparse.tar", tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 1, 0, "sparse.json", 200000, "json", 1, false);
  assert_delivered(&f, 0, 1, "json", expected);
  g_bytes_unref(expected);
  fixture_clear(&f);
}

/* Streamed archives are delivered in archive order; processing_order is
 * still trace_processor's. */
static void test_tar_processing_order_puts_the_manifest_first(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("[\"j\"]");
  GBytes *manifest = text("{\"perfetto_manifest\": {\"version\": 1}}");
  GBytes *proto = g_bytes_new("\x0a\x01\x00", 3);
  fixture_member m[] = {
      {"z.json", json}, {"b.pb", proto}, {"a.pb", proto}, {"m.json", manifest}};
  const char *path = fixture_write(&f, "m.tar", tar_of(m, N_MEMBERS(m)));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 5);
  assert_row(&f, 1, 0, "z.json", size_of(json), "json", 4, false);
  assert_row(&f, 2, 0, "b.pb", 3, "proto", 3, false);
  assert_row(&f, 3, 0, "a.pb", 3, "proto", 2, false);
  assert_row(&f, 4, 0, "m.json", size_of(manifest), "perfetto_manifest", 1,
             false);
  assert_delivered(&f, 0, 1, "json", json);
  assert_delivered(&f, 3, 4, "perfetto_manifest", manifest);
  g_bytes_unref(json);
  g_bytes_unref(manifest);
  g_bytes_unref(proto);
  fixture_clear(&f);
}

typedef struct pipe_writer {
  char *path;
  GBytes *bytes;
} pipe_writer;

static gpointer write_into_pipe(gpointer data) {
  pipe_writer *pw = data;
  int fd = g_open(pw->path, O_WRONLY, 0);
  g_assert_cmpint(fd, >=, 0);
  size_t len;
  const uint8_t *p = g_bytes_get_data(pw->bytes, &len);
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    g_assert_cmpint(n, >, 0);
    p += n;
    len -= (size_t)n;
  }
  close(fd);
  return NULL;
}

/* A ZIP that cannot be seeked is streamed: rows come as members are met
 * (a nested container's members before the next member), delivery is in
 * archive order, the manifest included. */
static void test_zip_through_a_pipe_is_streamed(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *payload = noisy_json(TM_CONTAINER_CHUNK + 10, 13);
  GBytes *gz = gzip_of(payload);
  GBytes *manifest = text("{\"perfetto_manifest\": {}}");
  fixture_member m[] = {
      {"a.json", a}, {"in.json.gz", gz}, {"m.json", manifest}};
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  char *fifo = g_build_filename(f.dir, "pipe.zip", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  g_ptr_array_add(f.paths, fifo);
  pipe_writer pw = {.path = fifo, .bytes = zip};
  GThread *writer = g_thread_new("pipe-writer", write_into_pipe, &pw);
  const char *path = fifo;
  fixture_read_ok(&f, &path, 1);
  g_thread_join(writer);
  assert_row_count(&f, 5);
  assert_row(&f, 0, TM_NULL_ID, path, size_of(zip), "zip", 0, true);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 4, false);
  assert_row(&f, 2, 0, "in.json.gz", size_of(gz), "gzip", 2, true);
  assert_row(&f, 3, 2, "", size_of(payload), "json", 3, false);
  assert_row(&f, 4, 0, "m.json", size_of(manifest), "perfetto_manifest", 1,
             false);
  assert_delivered(&f, 0, 1, "json", a);
  assert_delivered(&f, 1, 3, "json", payload);
  assert_delivered(&f, 2, 4, "perfetto_manifest", manifest);
  g_bytes_unref(a);
  g_bytes_unref(payload);
  g_bytes_unref(gz);
  g_bytes_unref(manifest);
  g_bytes_unref(zip);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func(
      "/container/zip/members-stream-in-archive-order-with-full-paths",
      test_zip_members_stream_in_archive_order_with_full_paths);
  g_test_add_func("/container/zip/hidden-members-get-no-row",
                  test_zip_hidden_members_get_no_row);
  g_test_add_func(
      "/container/zip/unknown-member-fails-naming-archive-and-member",
      test_zip_unknown_member_fails_naming_archive_and_member);
  g_test_add_func("/container/zip/processing-order-follows-archive-priority",
                  test_zip_processing_order_follows_archive_priority);
  g_test_add_func("/container/tar/ustar-members", test_tar_ustar_members);
  g_test_add_func("/container/tar/gnu-members", test_tar_gnu_members);
  g_test_add_func("/container/tar/sparse-member-holes-arrive-as-zeros",
                  test_tar_sparse_member_holes_arrive_as_zeros);
  g_test_add_func("/container/tar/processing-order-puts-the-manifest-first",
                  test_tar_processing_order_puts_the_manifest_first);
  g_test_add_func("/container/zip/through-a-pipe-is-streamed",
                  test_zip_through_a_pipe_is_streamed);
  g_test_add_func("/container/tar/gz-is-a-gzip-whose-payload-is-a-tar",
                  test_tar_gz_is_a_gzip_whose_payload_is_a_tar);
  return g_test_run();
}
