/* Unit tests of the container layer's budgets (core/input/budget.h):
 * depth, member size, inflate ratio, file count, and a leaf its sink no
 * longer wants (fixture: tests/support/container_fixture.h). */
#include <archive.h>
#include <archive_entry.h>
#include <glib.h>
#include <string.h>

#include "container_fixture.h"

/* The 17th level is skipped, not fatal: its row stays (a container),
 * nothing inside it is read, and the depth budget says why. */
static void test_nested_deeper_than_sixteen_levels_is_cut(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("[\"deeper\"]");
  const char *path = fixture_write(&f, "deeper.gz", gzip_nested(json, 17));
  fixture_read_ok(&f, &path, 1);
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  assert_row_count(&f, 17);
  g_assert_true(f.model->trace_files.data[16].is_container);
  g_assert_cmpuint(f.rec.budgets->len, ==, 1);
  g_assert_cmpstr(f.rec.budgets->pdata[0], ==, "16: " TM_STAT_DEPTH_EXCEEDED);
  char *want = g_strdup_printf(
      "16: %s: containers nested more than 16 deep (budget --max-depth): not read",
      path);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  g_assert_cmpstr(f.rec.container_damages->pdata[0], ==, want);
  g_free(want);
  g_bytes_unref(json);
  fixture_clear(&f);
}

/* max_depth 2: a tar holding a gzip of a gzip reads the tar (depth 0)
 * and the outer gzip (1); the inner gzip (2) is skipped. The JSON beside
 * it in the tar is read. Rows: 0 tar, 1 outer gzip, 2 inner gzip, 3 the
 * JSON. */
static void test_max_depth_is_configurable(void) {
  fixture f;
  fixture_init(&f);
  f.budgets.max_depth = 2;
  GBytes *json = text("[\"x\"]");
  GBytes *nested = gzip_nested(json, 2);
  const fixture_member m[] = {{"deep.gz", nested}, {"top.json", json}};
  const char *path = fixture_write(&f, "t.tar", tar_of(m, 2));
  fixture_read_ok(&f, &path, 1);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  assert_delivered(&f, 0, 3, "json", json);
  g_assert_cmpuint(f.rec.budgets->len, ==, 1);
  g_assert_cmpstr(f.rec.budgets->pdata[0], ==, "2: " TM_STAT_DEPTH_EXCEEDED);
  g_bytes_unref(nested);
  g_bytes_unref(json);
  fixture_clear(&f);
}

/* max_member_bytes 1000: a 5000-byte member is cut after exactly 1000
 * bytes (delivered, then the end as truncated with the budget's words);
 * the member after it is read whole. */
static void test_member_larger_than_its_budget_is_cut(void) {
  fixture f;
  fixture_init(&f);
  f.budgets.max_member_bytes = 1000;
  GBytes *big = noisy_json(5000, 7);
  GBytes *small = text("[\"small\"]");
  const fixture_member m[] = {{"big.json", big}, {"small.json", small}};
  const char *path = fixture_write(&f, "t.tar", tar_of(m, 2));
  fixture_read_ok(&f, &path, 1);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  const recorded_file *cut = f.rec.files->pdata[0];
  g_assert_cmpuint(cut->bytes->len, ==, 1000);
  g_assert_cmpmem(cut->bytes->data, 1000, g_bytes_get_data(big, NULL), 1000);
  g_assert_true(cut->truncated);
  char *want = g_strdup_printf("%s/big.json: cut after 1000 bytes: larger than the "
                               "1000 bytes of budget --max-member-size",
                               path);
  g_assert_cmpstr(cut->damage, ==, want);
  g_free(want);
  assert_delivered(&f, 1, 2, "json", small);
  g_assert_cmpuint(f.rec.budgets->len, ==, 1);
  g_assert_cmpstr(f.rec.budgets->pdata[0], ==, "1: " TM_STAT_MEMBER_SIZE_EXCEEDED);
  g_bytes_unref(big);
  g_bytes_unref(small);
  fixture_clear(&f);
}

/* A gzip stream of "[" and `n` zero bytes, deflated as it is written (the
 * zeros are never held whole): `n` of 96 MiB makes about 96 KiB. */
static GBytes *gzip_of_zeros(uint64_t n) {
  GByteArray *out = g_byte_array_new();
  struct archive *a = archive_write_new();
  archive_write_set_format_raw(a);
  archive_write_add_filter_gzip(a);
  archive_write_set_bytes_in_last_block(a, 1);
  g_assert_cmpint(archive_write_open(a, out, NULL, append_written, NULL), ==,
                  ARCHIVE_OK);
  struct archive_entry *entry = archive_entry_new();
  archive_entry_set_pathname(entry, "zeros");
  archive_entry_set_filetype(entry, AE_IFREG);
  archive_entry_set_size(entry, (la_int64_t)n + 1);
  g_assert_cmpint(archive_write_header(a, entry), ==, ARCHIVE_OK);
  g_assert_cmpint(archive_write_data(a, "[", 1), ==, 1);
  static const uint8_t block[64 * 1024];
  for (uint64_t done = 0; done < n;) {
    size_t k = (size_t)MIN(n - done, sizeof block);
    g_assert_cmpint(archive_write_data(a, block, k), ==, (la_ssize_t)k);
    done += k;
  }
  archive_entry_free(entry);
  g_assert_cmpint(archive_write_close(a), ==, ARCHIVE_OK);
  archive_write_free(a);
  return g_byte_array_free_to_bytes(out);
}

/* A JSON in a tar, then a gzip of a gzip of "[" and 96 MiB of zeros (a
 * few KiB): the bomb's levels yield past the 64 MiB floor, far more than
 * 1000 times the tar's size, so its payload (a leaf taken as JSON) is cut
 * where the floor is passed, with the budget's words; the stat is charged
 * to the root (row 0); the JSON before it stays delivered whole and the
 * one after it in the same root is not read. Rows: 0 tar, 1 a.json,
 * 2 bomb.gz, 3 its inner gzip, 4 the payload. */
static void test_nested_gzip_bomb_is_cut_by_the_inflate_ratio(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("[\"before\"]");
  GBytes *inner = gzip_of_zeros((uint64_t)96 << 20);
  GBytes *bomb = gzip_of(inner);
  const fixture_member m[] = {{"a.json", json}, {"bomb.gz", bomb}, {"c.json", json}};
  const char *path = fixture_write(&f, "t.tar", tar_of(m, 3));
  fixture_read_ok(&f, &path, 1);
  assert_delivered(&f, 0, 1, "json", json);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  const recorded_file *cut = f.rec.files->pdata[1];
  g_assert_cmpuint(cut->id, ==, 4);
  g_assert_true(cut->truncated);
  g_assert_cmpuint(cut->bytes->len, <, (96u << 20));
  char *want = g_strdup_printf("%s/bomb.gz: cut after %u bytes: %s yields more than "
                               "1000 times its ",
                               path, cut->bytes->len, path);
  g_assert_true(g_str_has_prefix(cut->damage, want));
  g_assert_true(g_str_has_suffix(cut->damage, " bytes (budget --max-inflate-ratio)"));
  g_free(want);
  g_assert_cmpuint(f.rec.budgets->len, ==, 1);
  g_assert_cmpstr(f.rec.budgets->pdata[0], ==, "0: " TM_STAT_INFLATE_RATIO_EXCEEDED);
  assert_row_count(&f, 5);
  g_bytes_unref(json);
  g_bytes_unref(inner);
  g_bytes_unref(bomb);
  fixture_clear(&f);
}

/* A leaf whose sink wants no more bytes is not pulled further: of a
 * 1 MiB member, the sink sees the first chunk only, and the end is not
 * truncated. */
static void test_unwanted_leaf_is_not_read_further(void) {
  fixture f;
  fixture_init(&f);
  f.rec.unwanted_after = 1;
  GBytes *json = noisy_json(1 << 20, 3);
  const char *path = fixture_write(&f, "t.gz", gzip_of(json));
  fixture_read_ok(&f, &path, 1);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  const recorded_file *leaf = f.rec.files->pdata[0];
  g_assert_cmpuint(leaf->n_chunks, ==, 1);
  g_assert_cmpuint(leaf->bytes->len, <, 1 << 20);
  g_assert_true(leaf->ended);
  g_assert_false(leaf->truncated);
  g_bytes_unref(json);
  fixture_clear(&f);
}

/* max_files 3: a tar of five members gets its row and two members' rows;
 * the third member is reported on the tar and nothing more is read, not
 * even a second root. */
static void test_file_budget_stops_the_import(void) {
  fixture f;
  fixture_init(&f);
  f.budgets.max_files = 3;
  GBytes *json = text("[\"x\"]");
  const fixture_member m[] = {{"1.json", json}, {"2.json", json}, {"3.json", json},
                              {"4.json", json}, {"5.json", json}};
  const char *paths[] = {fixture_write(&f, "t.tar", tar_of(m, 5)),
                         fixture_write(&f, "later.json", g_bytes_ref(json))};
  fixture_read_ok(&f, paths, 2);
  assert_row_count(&f, 3);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  g_assert_cmpuint(f.rec.budgets->len, ==, 1);
  g_assert_cmpstr(f.rec.budgets->pdata[0], ==, "0: " TM_STAT_FILE_COUNT_EXCEEDED);
  char *want = g_strdup_printf("0: %s/3.json: more than 3 files in one import (budget "
                               "--max-files): it and everything after it are not read",
                               paths[0]);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  g_assert_cmpstr(f.rec.container_damages->pdata[0], ==, want);
  g_free(want);
  g_bytes_unref(json);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/container/budgets/nested-deeper-than-sixteen-levels-is-cut",
                  test_nested_deeper_than_sixteen_levels_is_cut);
  g_test_add_func("/container/budgets/max-depth-is-configurable",
                  test_max_depth_is_configurable);
  g_test_add_func("/container/budgets/member-larger-than-its-budget-is-cut",
                  test_member_larger_than_its_budget_is_cut);
  g_test_add_func("/container/budgets/nested-gzip-bomb-is-cut-by-the-inflate-ratio",
                  test_nested_gzip_bomb_is_cut_by_the_inflate_ratio);
  g_test_add_func("/container/budgets/unwanted-leaf-is-not-read-further",
                  test_unwanted_leaf_is_not_read_further);
  g_test_add_func("/container/budgets/file-budget-stops-the-import",
                  test_file_budget_stops_the_import);
  return g_test_run();
}
