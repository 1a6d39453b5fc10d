/* Unit tests of the string pool: interning identity, NULL id, stable
 * pointers across growth, embedded NULs and oversized strings. */
#include <glib.h>
#include <string.h>

#include "base/string_pool.h"

static void test_equal_strings_share_an_id(void) {
  tm_string_pool *pool = string_pool_new();
  tm_str_id a = string_pool_intern_cstr(pool, "slice");
  tm_str_id b = string_pool_intern(pool, "slice and more", 5);
  tm_str_id c = string_pool_intern_cstr(pool, "track");
  g_assert_cmpuint(a, !=, 0);
  g_assert_cmpuint(a, ==, b);
  g_assert_cmpuint(a, !=, c);
  g_assert_cmpstr(string_pool_borrow(pool, a), ==, "slice");
  g_assert_cmpuint(string_pool_length(pool, c), ==, 5);
  string_pool_free(pool);
}

static void test_id_zero_is_null_and_empty_is_not(void) {
  tm_string_pool *pool = string_pool_new();
  g_assert_null(string_pool_borrow(pool, 0));
  g_assert_cmpuint(string_pool_intern_cstr(pool, NULL), ==, 0);
  tm_str_id empty = string_pool_intern(pool, "", 0);
  g_assert_cmpuint(empty, !=, 0);
  g_assert_cmpstr(string_pool_borrow(pool, empty), ==, "");
  g_assert_null(string_pool_borrow(pool, 999999));
  string_pool_free(pool);
}

static void test_pointers_stay_valid_while_growing(void) {
  tm_string_pool *pool = string_pool_new();
  tm_str_id first = string_pool_intern_cstr(pool, "first");
  const char *p = string_pool_borrow(pool, first);
  char buf[32];
  for (int i = 0; i < 200000; i++) {
    int n = g_snprintf(buf, sizeof buf, "name-%d", i);
    tm_str_id id = string_pool_intern(pool, buf, (size_t)n);
    g_assert_cmpstr(string_pool_borrow(pool, id), ==, buf);
  }
  g_assert_true(p == string_pool_borrow(pool, first));
  g_assert_cmpstr(p, ==, "first");
  g_assert_cmpuint(string_pool_count(pool), ==, 200002);
  g_assert_cmpuint(string_pool_intern_cstr(pool, "name-77"), ==,
                   string_pool_intern_cstr(pool, "name-77"));
  string_pool_free(pool);
}

static void test_embedded_nul_ends_the_string(void) {
  tm_string_pool *pool = string_pool_new();
  tm_str_id a = string_pool_intern(pool, "ab\0cd", 5);
  g_assert_cmpuint(a, ==, string_pool_intern_cstr(pool, "ab"));
  string_pool_free(pool);
}

static void test_oversized_string_gets_its_own_block(void) {
  tm_string_pool *pool = string_pool_new();
  size_t len = 3u << 20;
  char *big = g_malloc(len);
  memset(big, 'x', len);
  tm_str_id small = string_pool_intern_cstr(pool, "small");
  tm_str_id id = string_pool_intern(pool, big, len);
  g_assert_cmpuint(string_pool_length(pool, id), ==, len);
  g_assert_cmpint(memcmp(string_pool_borrow(pool, id), big, len), ==, 0);
  g_assert_cmpstr(string_pool_borrow(pool, small), ==, "small");
  g_assert_cmpuint(string_pool_intern_cstr(pool, "after"), !=, 0);
  g_free(big);
  string_pool_free(pool);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/string-pool/equal-strings-share-an-id",
                  test_equal_strings_share_an_id);
  g_test_add_func("/string-pool/id-zero-is-null-and-empty-is-not",
                  test_id_zero_is_null_and_empty_is_not);
  g_test_add_func("/string-pool/pointers-stay-valid-while-growing",
                  test_pointers_stay_valid_while_growing);
  g_test_add_func("/string-pool/embedded-nul-ends-the-string",
                  test_embedded_nul_ends_the_string);
  g_test_add_func("/string-pool/oversized-string-gets-its-own-block",
                  test_oversized_string_gets_its_own_block);
  return g_test_run();
}
