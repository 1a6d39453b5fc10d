/* Unit tests of the args' string values kept beside the string pool
 * (core/model/arg_text.h) and of their rows in the model: every value
 * reads back with its bytes and length, wherever and however often it was
 * stored. Expected values are the bytes given, kept by the test. */
#include <glib.h>
#include <string.h>

#include "model/arg_text.h"
#include "model/model.h"

/* Values of many lengths, some over a quarter of a block (stored in
 * blocks of their own), many more than one block holds: each pointer
 * still reads its bytes, NUL-terminated, after all were added. */
static void test_values_read_back_after_blocks_fill(void) {
  tm_arg_text text = {0};
  enum { N = 6000 };
  GPtrArray *expected = g_ptr_array_new_with_free_func(g_free);
  const char **stored = g_new(const char *, N);
  for (unsigned i = 0; i < N; i++) {
    /* Lengths 0..999, and every 1000th value 300 KiB (over BLOCK/4). */
    size_t len = i % 1000 == 999 ? 300 * 1024 : i % 1000;
    char *value = g_malloc(len + 1);
    for (size_t j = 0; j < len; j++)
      value[j] = (char)('a' + (i + j) % 26);
    value[len] = '\0';
    g_ptr_array_add(expected, value);
    stored[i] = arg_text_add(&text, value, len);
  }
  for (unsigned i = 0; i < N; i++) {
    const char *value = g_ptr_array_index(expected, i);
    g_assert_cmpuint(arg_text_length(stored[i]), ==, strlen(value));
    g_assert_cmpstr(stored[i], ==, value);
  }
  g_free(stored);
  g_ptr_array_unref(expected);
  arg_text_free(&text);
}

/* A value added again while its cache slot still holds it is the same
 * copy; distinct values are distinct copies. */
static void test_a_repeated_value_is_stored_once(void) {
  tm_arg_text text = {0};
  const char *a = arg_text_add(&text, "src/main.cc", 11);
  const char *b = arg_text_add(&text, "other", 5);
  g_assert_true(arg_text_add(&text, "src/main.cc", 11) == a);
  g_assert_true(arg_text_add(&text, "other", 5) == b);
  g_assert_true(a != b);
  /* A prefix is another value. */
  const char *prefix = arg_text_add(&text, "src/main.cc", 3);
  g_assert_true(prefix != a);
  g_assert_cmpstr(prefix, ==, "src");
  arg_text_free(&text);
}

/* After 100000 other values have passed through the cache, a value seen
 * at the start may be stored again: it still reads the same bytes. */
static void test_a_value_evicted_from_the_cache_reads_the_same(void) {
  tm_arg_text text = {0};
  const char *first = arg_text_add(&text, "https://example.com/a.js", 24);
  char buf[32];
  for (unsigned i = 0; i < 100000; i++) {
    int n = g_snprintf(buf, sizeof buf, "value-%u", i);
    arg_text_add(&text, buf, (size_t)n);
  }
  const char *again = arg_text_add(&text, "https://example.com/a.js", 24);
  g_assert_cmpstr(again, ==, first);
  g_assert_cmpuint(arg_text_length(again), ==, 24);
  arg_text_free(&text);
}

/* A value in the arg text and the same key's value interned in the pool
 * are rows of distinct key entries (in_text differs) that read the same
 * bytes, with the same key, flat key and type. */
static void test_model_rows_read_text_and_pool_values_alike(void) {
  tm_model *m = model_new();
  tm_str_id key = string_pool_intern_cstr(m->strings, "args.list[1].url");
  const char *value = "https://example.com/x?v=1";
  tm_arg_value pooled = {.type = TM_ARG_STRING};
  pooled.u.str_id = string_pool_intern_cstr(m->strings, value);
  tm_arg_value in_text = {.type = (tm_arg_type)(TM_ARG_STRING | TM_ARG_IN_TEXT)};
  in_text.u.int_value =
      (int64_t)(intptr_t)arg_text_add(&m->arg_text, value, strlen(value));
  uint32_t set = model_add_arg(m, 0, key, pooled);
  g_assert_cmpuint(model_add_arg(m, set, key, in_text), ==, set);
  g_assert_cmpuint(m->args.len, ==, 2);
  const tm_arg_key *k0 = model_arg_key(m, &m->args.data[0]);
  const tm_arg_key *k1 = model_arg_key(m, &m->args.data[1]);
  g_assert_false(k0->in_text);
  g_assert_true(k1->in_text);
  g_assert_cmpuint(k0->key, ==, k1->key);
  g_assert_cmpuint(k0->flat_key, ==, k1->flat_key);
  g_assert_cmpstr(string_pool_borrow(m->strings, k1->flat_key), ==, "args.list.url");
  g_assert_cmpint(k0->value_type, ==, TM_ARG_STRING);
  g_assert_cmpint(k1->value_type, ==, TM_ARG_STRING);
  for (size_t r = 0; r < 2; r++) {
    size_t len = 0;
    const char *s = model_arg_string(m, &m->args.data[r], &len);
    g_assert_cmpstr(s, ==, value);
    g_assert_cmpuint(len, ==, strlen(value));
  }
  /* A NULL pooled string reads as NULL. */
  tm_arg_value null_string = {.type = TM_ARG_STRING};
  model_add_arg(m, set, key, null_string);
  size_t len = 7;
  g_assert_null(model_arg_string(m, &m->args.data[2], &len));
  g_assert_cmpuint(len, ==, 0);
  model_free(m);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/arg_text/values-read-back-after-blocks-fill",
                  test_values_read_back_after_blocks_fill);
  g_test_add_func("/arg_text/a-repeated-value-is-stored-once",
                  test_a_repeated_value_is_stored_once);
  g_test_add_func("/arg_text/a-value-evicted-from-the-cache-reads-the-same",
                  test_a_value_evicted_from_the_cache_reads_the_same);
  g_test_add_func("/arg_text/model-rows-read-text-and-pool-values-alike",
                  test_model_rows_read_text_and_pool_values_alike);
  return g_test_run();
}
