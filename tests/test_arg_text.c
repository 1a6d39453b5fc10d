/* Unit tests of the args' string values kept beside the string pool
 * (core/model/arg_text.h) and of their rows in the model: every value
 * reads back with its bytes and length, wherever and however often it was
 * stored. Expected values are the bytes given, kept by the test. */
#include <glib.h>
#include <string.h>

#include "model/arg_text.h"
#include "model/model.h"

/* Values of many lengths, some over a quarter of a block (stored in
 * blocks of their own), many more than one block holds: each handle
 * still reads its bytes, NUL-terminated, after all were added. */
static void test_values_read_back_after_blocks_fill(void) {
  tm_arg_text text = {0};
  enum { N = 6000 };
  GPtrArray *expected = g_ptr_array_new_with_free_func(g_free);
  uint32_t *stored = g_new(uint32_t, N);
  for (unsigned i = 0; i < N; i++) {
    /* Lengths 0..999, and every 1000th value 300 KiB (over BLOCK/4). */
    size_t len = i % 1000 == 999 ? 300 * 1024 : i % 1000;
    char *value = g_malloc(len + 1);
    for (size_t j = 0; j < len; j++)
      value[j] = (char)('a' + (i + j) % 26);
    value[len] = '\0';
    g_ptr_array_add(expected, value);
    stored[i] = arg_text_add(&text, value, len);
    g_assert_cmpuint(stored[i], !=, ARG_TEXT_FULL);
  }
  for (unsigned i = 0; i < N; i++) {
    const char *value = g_ptr_array_index(expected, i);
    const char *copy = arg_text_borrow(&text, stored[i]);
    g_assert_cmpuint(arg_text_length(copy), ==, strlen(value));
    g_assert_cmpstr(copy, ==, value);
  }
  g_free(stored);
  g_ptr_array_unref(expected);
  arg_text_free(&text);
}

/* A value added again while its cache slot still holds it is the same
 * copy; distinct values are distinct copies. */
static void test_a_repeated_value_is_stored_once(void) {
  tm_arg_text text = {0};
  uint32_t a = arg_text_add(&text, "src/main.cc", 11);
  uint32_t b = arg_text_add(&text, "other", 5);
  g_assert_cmpuint(arg_text_add(&text, "src/main.cc", 11), ==, a);
  g_assert_cmpuint(arg_text_add(&text, "other", 5), ==, b);
  g_assert_cmpuint(a, !=, b);
  /* A prefix is another value. */
  uint32_t prefix = arg_text_add(&text, "src/main.cc", 3);
  g_assert_cmpuint(prefix, !=, a);
  g_assert_cmpstr(arg_text_borrow(&text, prefix), ==, "src");
  arg_text_free(&text);
}

/* After 100000 other values have passed through the cache, a value seen
 * at the start may be stored again: it still reads the same bytes. */
static void test_a_value_evicted_from_the_cache_reads_the_same(void) {
  tm_arg_text text = {0};
  const char *first = arg_text_borrow(&text, arg_text_add(&text, "https://example.com/a.js", 24));
  char buf[32];
  for (unsigned i = 0; i < 100000; i++) {
    int n = g_snprintf(buf, sizeof buf, "value-%u", i);
    arg_text_add(&text, buf, (size_t)n);
  }
  const char *again = arg_text_borrow(&text, arg_text_add(&text, "https://example.com/a.js", 24));
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
  in_text.u.int_value = arg_text_add(&m->arg_text, value, strlen(value));
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

/* Once its blocks are all taken, the text stores nothing more and says
 * so; what it holds still reads back, and a value it holds is still found
 * by the cache. */
static void test_a_full_text_refuses_new_values(void) {
  tm_arg_text text = {.max_blocks = 2};
  uint32_t small = arg_text_add(&text, "kept", 4);
  /* Over a quarter of a block: a block of its own, the second and last. */
  size_t big_len = 300 * 1024;
  char *big = g_malloc0(big_len);
  memset(big, 'x', big_len);
  uint32_t big_handle = arg_text_add(&text, big, big_len);
  g_assert_cmpuint(big_handle, !=, ARG_TEXT_FULL);
  g_assert_cmpuint(arg_text_add(&text, big, big_len - 1), ==, ARG_TEXT_FULL);
  /* The first block still has room for small values. */
  uint32_t more = arg_text_add(&text, "more", 4);
  g_assert_cmpuint(more, !=, ARG_TEXT_FULL);
  /* Filling the first block leaves no handle for the next one. */
  char value[1000];
  memset(value, 'v', sizeof value);
  size_t added = 0;
  uint32_t handle;
  for (unsigned i = 0; i < 2000; i++) {
    g_snprintf(value, 16, "%08u", i); /* distinct values: no cache hit */
    value[8] = 'v';
    handle = arg_text_add(&text, value, sizeof value);
    if (handle == ARG_TEXT_FULL)
      break;
    added++;
  }
  g_assert_cmpuint(handle, ==, ARG_TEXT_FULL);
  g_assert_cmpuint(added, >, 1000);
  g_assert_cmpuint(added, <, 1100);
  g_assert_cmpstr(arg_text_borrow(&text, small), ==, "kept");
  g_assert_cmpstr(arg_text_borrow(&text, more), ==, "more");
  g_assert_cmpuint(arg_text_length(arg_text_borrow(&text, big_handle)), ==, big_len);
  g_assert_cmpuint(arg_text_add(&text, "kept", 4), ==, small);
  g_free(big);
  arg_text_free(&text);
}

/* A string value goes to the arg text while it has room, then to the
 * string pool: both read back the same through their rows. */
static void test_a_full_text_leaves_values_to_the_pool(void) {
  tm_model *m = model_new();
  m->arg_text.max_blocks = 1;
  tm_str_id key = string_pool_intern_cstr(m->strings, "args.s");
  tm_arg_value first = model_arg_text_value(m, TM_ARG_STRING, "first", 5);
  g_assert_cmpint(first.type, ==, TM_ARG_STRING | TM_ARG_IN_TEXT);
  /* The only block is the first value's: one needing its own finds none. */
  size_t big_len = 300 * 1024;
  char *big = g_malloc(big_len);
  memset(big, 'b', big_len);
  tm_arg_value pooled = model_arg_text_value(m, TM_ARG_JSON, big, big_len);
  g_assert_cmpint(pooled.type, ==, TM_ARG_JSON);
  uint32_t set = model_add_arg(m, 0, key, first);
  model_add_arg(m, set, key, pooled);
  size_t len;
  g_assert_cmpstr(model_arg_string(m, &m->args.data[0], &len), ==, "first");
  g_assert_cmpuint(len, ==, 5);
  g_assert_true(model_arg_key(m, &m->args.data[0])->in_text);
  const char *s = model_arg_string(m, &m->args.data[1], &len);
  g_assert_cmpuint(len, ==, big_len);
  g_assert_true(memcmp(s, big, big_len) == 0);
  g_assert_false(model_arg_key(m, &m->args.data[1])->in_text);
  g_assert_cmpint(model_arg_key(m, &m->args.data[1])->value_type, ==, TM_ARG_JSON);
  g_free(big);
  model_free(m);
}

/* Integers within 32 bits are kept in the row; others and reals beside
 * it, under a key entry of their own: every value reads back. */
static void test_model_rows_read_narrow_and_wide_values(void) {
  tm_model *m = model_new();
  tm_str_id key = string_pool_intern_cstr(m->strings, "args.n");
  const int64_t ints[] = {0, 1, -1, INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1,
                          (int64_t)INT32_MIN - 1, INT64_MAX, INT64_MIN};
  uint32_t set = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(ints); i++)
    set = model_add_arg(m, set, key, (tm_arg_value){.type = TM_ARG_INT, .u.int_value = ints[i]});
  set = model_add_arg(m, set, key, (tm_arg_value){.type = TM_ARG_UINT, .u.int_value = -1});
  set = model_add_arg(m, set, key, (tm_arg_value){.type = TM_ARG_REAL, .u.real_value = 0.5});
  set = model_add_arg(m, set, key, (tm_arg_value){.type = TM_ARG_REAL, .u.real_value = -1e300});
  for (size_t i = 0; i < G_N_ELEMENTS(ints); i++) {
    const tm_arg_row *a = &m->args.data[i];
    g_assert_cmpint(model_arg_int(m, a), ==, ints[i]);
    g_assert_cmpint(model_arg_key(m, a)->wide, ==, ints[i] < INT32_MIN || ints[i] > INT32_MAX);
    g_assert_cmpint(model_arg_key(m, a)->value_type, ==, TM_ARG_INT);
  }
  size_t n = G_N_ELEMENTS(ints);
  g_assert_cmpint(model_arg_int(m, &m->args.data[n]), ==, -1);
  g_assert_cmpint(model_arg_key(m, &m->args.data[n])->value_type, ==, TM_ARG_UINT);
  g_assert_cmpfloat(model_arg_real(m, &m->args.data[n + 1]), ==, 0.5);
  g_assert_cmpfloat(model_arg_real(m, &m->args.data[n + 2]), ==, -1e300);
  g_assert_cmpint(model_arg_key(m, &m->args.data[n + 2])->value_type, ==, TM_ARG_REAL);
  /* One entry per (key, type, storage). */
  g_assert_cmpuint(m->arg_keys.len, ==, 4);
  for (size_t r = 0; r < m->args.len; r++)
    g_assert_cmpuint(model_arg_set_id(m, r), ==, set);
  model_free(m);
}

/* Rows added to older sets (a process's args, an end event's args merged
 * into its slice's set) interleave with later sets: every row still
 * reads its own set, by one row and by the walk over all, and a set's
 * first rows are the ones made with it. */
static void test_rows_of_resumed_sets_read_their_set(void) {
  tm_model *m = model_new();
  tm_str_id key = string_pool_intern_cstr(m->strings, "k");
  /* Row sets, in row order: 1 1 2 1 3 3 2 2 4 1 3 4 */
  const uint32_t plan[] = {0, 1, 0, 1, 0, 3, 2, 2, 0, 1, 3, 4};
  const uint32_t expect[] = {1, 1, 2, 1, 3, 3, 2, 2, 4, 1, 3, 4};
  for (size_t i = 0; i < G_N_ELEMENTS(plan); i++) {
    uint32_t set = model_add_arg(m, plan[i], key,
                                 (tm_arg_value){.type = TM_ARG_INT, .u.int_value = (int64_t)i});
    g_assert_cmpuint(set, ==, expect[i]);
  }
  uint32_t *all = model_arg_set_ids_new(m);
  for (size_t r = 0; r < m->args.len; r++) {
    g_assert_cmpuint(model_arg_set_id(m, r), ==, expect[r]);
    g_assert_cmpuint(all[r], ==, expect[r]);
    g_assert_cmpint(model_arg_int(m, &m->args.data[r]), ==, (int64_t)r);
  }
  g_free(all);
  g_assert_cmpuint(model_arg_set_id(m, m->args.len), ==, 0);
  size_t first, end;
  const size_t firsts[][2] = {{0, 0}, {0, 2}, {2, 3}, {4, 6}, {8, 9}};
  for (uint32_t set = 1; set <= 4; set++) {
    g_assert_true(model_arg_set_first_rows(m, set, &first, &end));
    g_assert_cmpuint(first, ==, firsts[set][0]);
    g_assert_cmpuint(end, ==, firsts[set][1]);
  }
  g_assert_false(model_arg_set_first_rows(m, 0, &first, &end));
  g_assert_false(model_arg_set_first_rows(m, 5, &first, &end));
  /* A copy goes on the set named, from any row. */
  model_copy_arg(m, 2, 0);
  g_assert_cmpuint(model_arg_set_id(m, m->args.len - 1), ==, 2);
  g_assert_cmpint(model_arg_int(m, &m->args.data[m->args.len - 1]), ==, 0);
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
  g_test_add_func("/arg_text/a-full-text-refuses-new-values",
                  test_a_full_text_refuses_new_values);
  g_test_add_func("/arg_text/a-full-text-leaves-values-to-the-pool",
                  test_a_full_text_leaves_values_to_the_pool);
  g_test_add_func("/arg_text/model-rows-read-narrow-and-wide-values",
                  test_model_rows_read_narrow_and_wide_values);
  g_test_add_func("/arg_text/rows-of-resumed-sets-read-their-set",
                  test_rows_of_resumed_sets_read_their_set);
  return g_test_run();
}
