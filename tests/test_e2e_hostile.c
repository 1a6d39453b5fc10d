/*
 * End-to-end: the hostile inputs of issue 11 through the CLI. Each case
 * is built at test time (bombs are generated, never committed) and checks
 * that the import neither crashes nor runs away, that what was read before
 * the damage is kept, and that the damage is a stat plus one stderr line
 * naming the file.
 */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_support.h"

/* ---- arithmetic ---------------------------------------------------------- */

/* A JSON X event at 9e15 µs lasting 9e15 µs: ts and dur each fit in int64
 * ns (9e18 < 2^63 - 1 ~ 9.22e18), their sum does not. The event is dropped
 * and counted; the slice before it stays, and trace_bounds ends where that
 * slice ends (1 µs + 2 µs = 3000 ns) instead of wrapping negative. */
static void test_slice_end_overflow_is_dropped_and_counted(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = e2e_write_file(
      dir, "ovf.json",
      "[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"ok\"},\n"
      "{\"ph\":\"X\",\"ts\":9000000000000000,\"dur\":9000000000000000,"
      "\"pid\":1,\"tid\":1,\"name\":\"big\"}]\n",
      0);
  const char *inputs[] = {"ovf.json", NULL};
  e2e_result r = e2e_run_query(dir, inputs, NULL,
                            "SELECT (SELECT group_concat(name) FROM slice) AS slices, "
                            "start_ts, end_ts, (SELECT value FROM stats WHERE name = "
                            "'slice_timestamp_overflow') AS dropped FROM trace_bounds");
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "\"slices\",\"start_ts\",\"end_ts\",\"dropped\"\n"
                         "\"ok\",1000,3000,1\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* ---- plugins -------------------------------------------------------------- */

/* A copy of the built-in JSON reader on TRACEMERGE_PLUGIN_PATH is a second
 * reader named "json": every import fails naming both files, until the
 * user prefers one; `plugins` then shows which one won and what it
 * overrode. */
static void test_plugin_named_like_a_built_in_clashes_until_preferred(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *built = g_getenv("TM_JSON_PLUGIN");
  g_assert_nonnull(built);
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(built, &bytes, &len, NULL));
  g_autofree char *copy = e2e_write_file(dir, "evil-json.so", bytes, len);
  g_autofree char *slice = e2e_json_slice("s", 1, 1, 5);
  g_autofree char *trace = e2e_write_file(dir, "t.json", slice, 0);
  g_autofree char *built_real = realpath(built, NULL);
  g_assert_true(g_setenv("TRACEMERGE_PLUGIN_PATH", dir, TRUE));

  const char *inputs[] = {"t.json", NULL};
  e2e_result r = e2e_run_query(dir, inputs, NULL, "SELECT count(*) FROM slice");
  g_assert_cmpint(r.exit_code, ==, 1);
  /* Search order: TRACEMERGE_PLUGIN_PATH before the build tree. */
  g_autofree char *expected = g_strdup_printf(
      "two reader plugins are named \"json\": %s and %s; name the one to use "
      "with --prefer-plugin FILE (or TRACEMERGE_PLUGIN_PREFER=FILE), or remove one",
      copy, built_real);
  g_assert_nonnull(strstr(r.err, expected));
  e2e_result_clear(&r);

  const char *prefer[] = {"--prefer-plugin", copy, NULL};
  r = e2e_run_query(dir, inputs, prefer, "SELECT count(*) FROM slice");
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "\"count(*)\"\n1\n");
  e2e_result_clear(&r);

  const char *plugins[] = {"plugins", "--prefer-plugin", copy, NULL};
  r = e2e_run_in(dir, plugins);
  g_assert_cmpint(r.exit_code, ==, 0);
  g_autofree char *overrides = g_strdup_printf("overrides %s (preferred)\n", built_real);
  g_assert_nonnull(strstr(r.out, overrides));
  g_assert_nonnull(strstr(r.out, copy));
  e2e_result_clear(&r);

  const char *plain[] = {"plugins", NULL};
  r = e2e_run_in(dir, plain);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, expected));
  e2e_result_clear(&r);
  g_unsetenv("TRACEMERGE_PLUGIN_PATH");
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/hostile/arithmetic/slice-end-overflow-is-dropped-and-counted",
                  test_slice_end_overflow_is_dropped_and_counted);
  g_test_add_func("/e2e/hostile/plugins/named-like-a-built-in-clashes-until-preferred",
                  test_plugin_named_like_a_built_in_clashes_until_preferred);
  return g_test_run();
}
