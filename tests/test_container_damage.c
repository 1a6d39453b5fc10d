/* Unit tests of damaged containers: what was delivered stays, the member
 * ends truncated with its cause, damage outside members reaches the
 * container callback, and a sink that refuses a report fails the import
 * (fixture: tests/support/container_fixture.h). */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_fixture.h"

/* ---- damage ---- */

static void test_damage_zip_bad_crc_keeps_the_bytes_and_goes_on(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("{\"a\": \"original contents of a\"}");
  GBytes *b = text("[\"b is intact\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *zip = stored_zip_of(m, N_MEMBERS(m));
  /* Stored, so the flipped byte reaches the sink and only the CRC tells. */
  GByteArray *bad = g_bytes_unref_to_array(zip);
  const uint8_t *hit = memmem(bad->data, bad->len, "original", 8);
  g_assert_nonnull(hit);
  bad->data[hit - bad->data] = 'O';
  GBytes *seen_a = text("{\"a\": \"Original contents of a\"}");
  int64_t zip_size = bad->len;
  const char *path =
      fixture_write(&f, "crc.zip", g_byte_array_free_to_bytes(bad));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, zip_size, "zip", 0, true);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 1, false);
  assert_row(&f, 2, 0, "b.json", size_of(b), "json", 2, false);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  char *display = g_strdup_printf("%s/a.json", path);
  assert_truncated(&f, 0, 1, seen_a, display, "ZIP bad CRC");
  g_free(display);
  assert_delivered(&f, 1, 2, "json", b);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 0);
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(seen_a);
  fixture_clear(&f);
}

/* Garbage in a deflate stream may inflate to wrong bytes before zlib or the
 * size/CRC check notices: the member ends truncated after what was
 * inflated, and the next member, found through the directory, is intact. */
static void test_damage_corrupt_zip_data_keeps_what_was_inflated(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = noisy_json(TM_CONTAINER_CHUNK * 2, 8);
  GBytes *b = text("[\"b\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  GByteArray *bad = g_bytes_unref_to_array(zip);
  memset(bad->data + bad->len / 2, 0xff, 64);
  const char *path =
      fixture_write(&f, "corrupt.zip", g_byte_array_free_to_bytes(bad));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  const recorded_file *file = f.rec.files->pdata[0];
  g_assert_cmpuint(file->id, ==, 1);
  g_assert_true(file->truncated);
  g_assert_cmpint(f.model->trace_files.data[1].size, ==, file->bytes->len);
  char *want = g_strdup_printf("%s/a.json: damaged after %u bytes: ZIP ", path,
                               file->bytes->len);
  g_assert_true(g_str_has_prefix(file->damage, want));
  g_free(want);
  /* The bytes before the garbage arrived as they were. */
  const uint8_t *original = g_bytes_get_data(a, NULL);
  size_t same = 0;
  while (same < file->bytes->len && original[same] == file->bytes->data[same])
    same++;
  g_assert_cmpuint(same, >=, 64 * 1024);
  g_assert_cmpuint(same, <, g_bytes_get_size(a));
  assert_delivered(&f, 1, 2, "json", b);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_damage_truncated_zip_member(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = noisy_json(TM_CONTAINER_CHUNK, 9);
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *zip = stored_zip_of(m, N_MEMBERS(m));
  size_t cut = find(zip, "b.json") + 6 + 1000;
  GBytes *short_zip = prefix(zip, cut);
  g_bytes_unref(zip);
  const char *path = fixture_write(&f, "short.zip", short_zip);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "zip", 0, true);
  assert_delivered(&f, 0, 1, "json", a);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  const recorded_file *file = f.rec.files->pdata[1];
  GBytes *delivered = prefix(b, file->bytes->len);
  char *display = g_strdup_printf("%s/b.json", path);
  assert_truncated(&f, 1, 2, delivered, display, "Truncated ZIP file data");
  g_assert_cmpint(f.model->trace_files.data[2].size, ==, file->bytes->len);
  g_free(display);
  g_bytes_unref(delivered);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_damage_truncated_tar_member(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = noisy_json(3000, 10);
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  /* Headers are 512 bytes: a 512 + 512 + b's header 512 + 1500 of b. */
  size_t cut = 512 * 3 + 1500;
  const char *path = fixture_write(&f, "short.tar", prefix(tar, cut));
  g_bytes_unref(tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "tar", 0, true);
  assert_delivered(&f, 0, 1, "json", a);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  GBytes *delivered = prefix(b, 1500);
  char *display = g_strdup_printf("%s/b.json", path);
  assert_truncated(&f, 1, 2, delivered, display, "Truncated tar archive");
  assert_row(&f, 2, 0, "b.json", 1500, "json", 2, false);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 0);
  g_free(display);
  g_bytes_unref(delivered);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_damage_tar_cut_inside_a_header_reports_the_container(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = text("[\"b\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  size_t cut = 512 * 2 + 100;
  const char *path = fixture_write(&f, "cut.tar", prefix(tar, cut));
  g_bytes_unref(tar);
  GBytes *json = text("[\"next input\"]");
  const char *next = fixture_write(&f, "next.json", g_bytes_ref(json));
  const char *paths[] = {path, next};
  fixture_read_ok(&f, paths, 2);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "tar", 0, true);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 1, false);
  assert_row(&f, 2, TM_NULL_ID, next, size_of(json), "json", 2, false);
  assert_delivered(&f, 0, 1, "json", a);
  assert_delivered(&f, 1, 2, "json", json);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("0: %s: damaged at byte 1024: ", path);
  const char *got = f.rec.container_damages->pdata[0];
  g_assert_true(g_str_has_prefix(got, want));
  g_assert_nonnull(strstr(got, "Truncated tar archive"));
  g_free(want);
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_damage_member_cut_before_its_type_is_known(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *x = g_bytes_new_take(memset(g_malloc(2000), 'Z', 2000), 2000);
  fixture_member m[] = {{"a.json", a}, {"x.bin", x}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  const char *path = fixture_write(&f, "cut.tar", prefix(tar, 512 * 3 + 100));
  g_bytes_unref(tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 1, false);
  assert_row(&f, 2, 0, "x.bin", 0, "unknown", TM_NULL_INT64, false);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("0: %s/x.bin: damaged after 100 bytes, before "
                               "its type was known: Truncated tar archive",
                               path);
  g_assert_cmpstr(f.rec.container_damages->pdata[0], ==, want);
  g_free(want);
  g_bytes_unref(a);
  g_bytes_unref(x);
  fixture_clear(&f);
}

/* The tar ends cleanly but the gzip around it breaks in what follows. */
static void test_damage_after_the_last_member_reports_the_container(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  fixture_member m[] = {{"a.json", a}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  GBytes *tail = noisy_json(300000, 14);
  GBytes *payload = concat(tar, tail);
  GBytes *tgz = gzip_of(payload);
  size_t cut = g_bytes_get_size(tgz) * 85 / 100;
  const char *path = fixture_write(&f, "tail.tgz", prefix(tgz, cut));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "gzip", 0, true);
  /* The payload's size is what the gzip could deliver. */
  const tm_trace_file_row *tar_row = &f.model->trace_files.data[1];
  g_assert_cmpint(tar_row->size, >, size_of(tar));
  g_assert_cmpint(tar_row->size, <, size_of(payload));
  assert_delivered(&f, 0, 2, "json", a);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("1: %s: damaged after its last member: "
                               "truncated gzip input",
                               path);
  g_assert_cmpstr(f.rec.container_damages->pdata[0], ==, want);
  g_free(want);
  g_bytes_unref(a);
  g_bytes_unref(tar);
  g_bytes_unref(tail);
  g_bytes_unref(payload);
  g_bytes_unref(tgz);
  fixture_clear(&f);
}

static void test_damage_zip_local_header_stops_the_listing(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = text("[\"b\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", b}, {"c.json", b}};
  GBytes *zip = stored_zip_of(m, N_MEMBERS(m));
  GByteArray *bad = g_bytes_unref_to_array(zip);
  const uint8_t *second = memmem(bad->data + 4, bad->len - 4, "PK\x03\x04", 4);
  g_assert_nonnull(second);
  bad->data[second - bad->data] = 'X';
  const char *path =
      fixture_write(&f, "hdr.zip", g_byte_array_free_to_bytes(bad));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 1, false);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  assert_delivered(&f, 0, 1, "json", a);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("0: %s: damaged at byte ", path);
  const char *got = f.rec.container_damages->pdata[0];
  g_assert_true(g_str_has_prefix(got, want));
  g_free(want);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_damage_without_the_callback_fails_the_import(void) {
  fixture f;
  fixture_init(&f);
  f.sink.container_damaged = NULL;
  GBytes *a = text("[\"a\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", a}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  const char *path = fixture_write(&f, "cut.tar", prefix(tar, 512 * 2 + 100));
  g_bytes_unref(tar);
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_DAMAGED);
  char *want = g_strdup_printf("%s: damaged at byte 1024: ", path);
  g_assert_true(g_str_has_prefix(error->message, want));
  g_free(want);
  g_error_free(error);
  /* What came before the damage was delivered. */
  assert_delivered(&f, 0, 1, "json", a);
  g_bytes_unref(a);
  fixture_clear(&f);
}

static void test_damage_refused_by_the_sink_fails_the_import(void) {
  fixture f;
  fixture_init(&f);
  f.rec.refuse_container_damage = true;
  const char *path = fixture_write(
      &f, "bad.gz", g_bytes_new("\x1f\x8b\x63\x00junk junk junk junk", 22));
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
  g_assert_cmpstr(error->message, ==, "damage refused");
  g_error_free(error);
  fixture_clear(&f);
}

static void test_damage_truncated_gzip_keeps_the_payload_prefix(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = noisy_json(100000, 11);
  GBytes *gz = gzip_of(json);
  size_t cut = g_bytes_get_size(gz) - 5000;
  const char *path = fixture_write(&f, "short.json.gz", prefix(gz, cut));
  g_bytes_unref(gz);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "gzip", 0, true);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  const recorded_file *file = f.rec.files->pdata[0];
  g_assert_cmpuint(file->bytes->len, >, 0);
  g_assert_cmpuint(file->bytes->len, <, g_bytes_get_size(json));
  GBytes *delivered = prefix(json, file->bytes->len);
  assert_truncated(&f, 0, 1, delivered, path, "truncated gzip input");
  assert_row(&f, 1, 0, "", (int64_t)file->bytes->len, "json", 1, false);
  g_bytes_unref(delivered);
  g_bytes_unref(json);
  fixture_clear(&f);
}

/* The gzip under a tar breaks: the tar member being streamed ends
 * truncated with the gzip's cause, reported once. */
static void test_damage_truncated_tar_gz_reports_the_innermost_cause(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = noisy_json(200000, 12);
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  GBytes *tgz = gzip_of(tar);
  size_t cut = g_bytes_get_size(tgz) / 2;
  const char *path = fixture_write(&f, "short.tgz", prefix(tgz, cut));
  g_bytes_unref(tgz);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "gzip", 0, true);
  assert_delivered(&f, 0, 2, "json", a);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  const recorded_file *file = f.rec.files->pdata[1];
  GBytes *delivered = prefix(b, file->bytes->len);
  char *display = g_strdup_printf("%s/b.json", path);
  assert_truncated(&f, 1, 3, delivered, display, "truncated gzip input");
  g_assert_cmpuint(f.rec.container_damages->len, ==, 0);
  g_free(display);
  g_bytes_unref(delivered);
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(tar);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/container/damage/zip-bad-crc-keeps-the-bytes-and-goes-on",
                  test_damage_zip_bad_crc_keeps_the_bytes_and_goes_on);
  g_test_add_func("/container/damage/corrupt-zip-data-keeps-what-was-inflated",
                  test_damage_corrupt_zip_data_keeps_what_was_inflated);
  g_test_add_func("/container/damage/truncated-zip-member",
                  test_damage_truncated_zip_member);
  g_test_add_func("/container/damage/truncated-tar-member",
                  test_damage_truncated_tar_member);
  g_test_add_func(
      "/container/damage/tar-cut-inside-a-header-reports-the-container",
      test_damage_tar_cut_inside_a_header_reports_the_container);
  g_test_add_func("/container/damage/member-cut-before-its-type-is-known",
                  test_damage_member_cut_before_its_type_is_known);
  g_test_add_func(
      "/container/damage/after-the-last-member-reports-the-container",
      test_damage_after_the_last_member_reports_the_container);
  g_test_add_func("/container/damage/zip-local-header-stops-the-listing",
                  test_damage_zip_local_header_stops_the_listing);
  g_test_add_func("/container/damage/without-the-callback-fails-the-import",
                  test_damage_without_the_callback_fails_the_import);
  g_test_add_func("/container/damage/refused-by-the-sink-fails-the-import",
                  test_damage_refused_by_the_sink_fails_the_import);
  g_test_add_func("/container/damage/truncated-gzip-keeps-the-payload-prefix",
                  test_damage_truncated_gzip_keeps_the_payload_prefix);
  g_test_add_func(
      "/container/damage/truncated-tar-gz-reports-the-innermost-cause",
      test_damage_truncated_tar_gz_reports_the_innermost_cause);
  return g_test_run();
}
