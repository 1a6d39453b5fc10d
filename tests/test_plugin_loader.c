/* Unit tests of the plugin loader: what is loaded from where and in which
 * order, what is skipped and what the warning says, TRACEMERGE_PLUGIN_PATH,
 * duplicate names, the build-tree default directory and probe arbitration.
 *
 * The readers come from tests/plugins (built next to this program): each
 * test copies the ones it needs into fresh temporary directories, so every
 * directory holds exactly what the test says. The default search (the build
 * tree's plugins/) also runs in every load; assertions are therefore about
 * the test's own directories, never about the total count. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/plugin_loader.h"

/* --- fixtures ------------------------------------------------------------ */

static char *built_plugin_path(const char *module) {
  char *file = g_strconcat(module, ".so", NULL);
  char *path = g_test_build_filename(G_TEST_BUILT, "plugins", file, NULL);
  g_free(file);
  return path;
}

/* Copies the built test reader `module` into `dir` as `file_name`. */
static void copy_plugin(const char *module, const char *dir,
                        const char *file_name) {
  char *from = built_plugin_path(module);
  char *to = g_build_filename(dir, file_name, NULL);
  char *bytes = NULL;
  gsize len = 0;
  GError *error = NULL;
  g_file_get_contents(from, &bytes, &len, &error);
  g_assert_no_error(error);
  g_file_set_contents(to, bytes, (gssize)len, &error);
  g_assert_no_error(error);
  g_free(bytes);
  g_free(to);
  g_free(from);
}

static void write_file(const char *dir, const char *file_name,
                       const char *text) {
  char *path = g_build_filename(dir, file_name, NULL);
  GError *error = NULL;
  g_file_set_contents(path, text, -1, &error);
  g_assert_no_error(error);
  g_free(path);
}

static char *make_temp_dir(void) {
  GError *error = NULL;
  char *dir = g_dir_make_tmp("tm-plugin-loader-XXXXXX", &error);
  g_assert_no_error(error);
  /* Canonical, so paths compare equal to what the loader reports. */
  char *canonical = realpath(dir, NULL);
  g_assert_nonnull(canonical);
  g_free(dir);
  char *result = g_strdup(canonical);
  free(canonical);
  return result;
}

static void remove_tree(const char *path) {
  GDir *dir = g_dir_open(path, 0, NULL);
  if (dir != NULL) {
    for (const char *name; (name = g_dir_read_name(dir)) != NULL;) {
      char *child = g_build_filename(path, name, NULL);
      remove_tree(child);
      g_free(child);
    }
    g_dir_close(dir);
  }
  g_assert_cmpint(g_remove(path), ==, 0);
}

/* Loads with `extra_dirs` and the `preferred` plugin files and returns
 * the set; *warnings receives everything the loader wrote on its warnings
 * stream. */
static tm_plugin_set *load_preferring(const char *const *extra_dirs,
                                      size_t n_extra, const char *const *preferred,
                                      size_t n_preferred, char **warnings) {
  char *text = NULL;
  size_t size = 0;
  FILE *stream = open_memstream(&text, &size);
  g_assert_nonnull(stream);
  tm_plugin_set *set =
      plugin_set_load(extra_dirs, n_extra, preferred, n_preferred, stream);
  g_assert_cmpint(fclose(stream), ==, 0);
  *warnings = g_strdup(text);
  free(text);
  return set;
}

static tm_plugin_set *load_capturing(const char *const *extra_dirs,
                                     size_t n_extra, char **warnings) {
  return load_preferring(extra_dirs, n_extra, NULL, 0, warnings);
}

/* Index of the reader loaded from `path`, or -1. */
static int index_of_path(const tm_plugin_set *set, const char *path) {
  for (size_t i = 0; i < plugin_set_count(set); i++) {
    const char *loaded_from = NULL;
    g_assert_nonnull(plugin_set_borrow(set, i, &loaded_from));
    if (strcmp(loaded_from, path) == 0)
      return (int)i;
  }
  return -1;
}

static size_t count_under(const tm_plugin_set *set, const char *dir) {
  size_t n = 0;
  char *prefix = g_strconcat(dir, "/", NULL);
  for (size_t i = 0; i < plugin_set_count(set); i++) {
    const char *loaded_from = NULL;
    plugin_set_borrow(set, i, &loaded_from);
    n += g_str_has_prefix(loaded_from, prefix);
  }
  g_free(prefix);
  return n;
}

static const char *path_of(const tm_plugin_set *set, const char *name) {
  for (size_t i = 0; i < plugin_set_count(set); i++) {
    const char *loaded_from = NULL;
    const tm_reader *r = plugin_set_borrow(set, i, &loaded_from);
    if (strcmp(r->descriptor.name, name) == 0)
      return loaded_from;
  }
  return NULL;
}

/* The warning line about `path`, or NULL. */
static char *warning_about(const char *warnings, const char *path) {
  char **lines = g_strsplit(warnings, "\n", -1);
  char *found = NULL;
  for (char **line = lines; *line != NULL && found == NULL; line++)
    if (strstr(*line, path) != NULL)
      found = g_strdup(*line);
  g_strfreev(lines);
  return found;
}

/* Asserts the one warning line about `dir`/`file` contains `reason`. */
static void assert_skipped(const char *warnings, const char *dir,
                           const char *file, const char *reason) {
  char *path = g_build_filename(dir, file, NULL);
  char *line = warning_about(warnings, path);
  if (line == NULL)
    g_error("no warning about %s in:\n%s", path, warnings);
  char *expected_start =
      g_strdup_printf("tracemerge: warning: skipping plugin %s: ", path);
  g_assert_true(g_str_has_prefix(line, expected_start));
  if (strstr(line, reason) == NULL)
    g_error("warning about %s lacks \"%s\": %s", path, reason, line);
  g_free(expected_start);
  g_free(line);
  g_free(path);
}

/* --- skipping bad plugins ------------------------------------------------ */

/* Loads a directory holding one good reader and `bad_module` (copied as
 * `bad_file`), and checks the bad one is skipped with `reason` while the
 * good one loads. */
static void check_bad_plugin_is_skipped(const char *bad_module,
                                        const char *bad_file,
                                        const char *reason) {
  char *dir = make_temp_dir();
  copy_plugin("tm-test-alpha", dir, "tm-test-alpha.so");
  if (bad_module != NULL)
    copy_plugin(bad_module, dir, bad_file);
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  assert_skipped(warnings, dir, bad_file, reason);
  g_assert_cmpuint(count_under(set, dir), ==, 1);
  char *good = g_build_filename(dir, "tm-test-alpha.so", NULL);
  g_assert_cmpstr(path_of(set, "test-alpha"), ==, good);
  g_assert_nonnull(plugin_set_find(set, "test-alpha"));
  g_assert_null(warning_about(warnings, good));

  g_free(good);
  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(dir);
}

static void test_missing_entry_symbol_is_skipped(void) {
  check_bad_plugin_is_skipped("tm-test-no-entry", "tm-test-no-entry.so",
                              "no entry symbol tracemerge_reader_entry");
}

static void test_entry_returning_null_is_skipped(void) {
  check_bad_plugin_is_skipped(
      "tm-test-null-descriptor", "tm-test-null-descriptor.so",
      "tracemerge_reader_entry() returned no descriptor");
}

static void test_abi_version_999_is_skipped(void) {
  check_bad_plugin_is_skipped("tm-test-abi-999", "tm-test-abi-999.so",
                              "ABI versions 999..999 are not supported (this "
                              "host supports 1..2)");
}

static void test_an_empty_abi_range_is_skipped(void) {
  check_bad_plugin_is_skipped("tm-test-abi-empty", "tm-test-abi-empty.so",
                              "ABI range 3..2 is empty or invalid");
}

static void test_a_descriptor_smaller_than_version_2_is_skipped(void) {
  check_bad_plugin_is_skipped("tm-test-small-descriptor",
                              "tm-test-small-descriptor.so",
                              "descriptor of 16 bytes is smaller than "
                              "version 2's");
}

static void test_an_unknown_sample_table_is_skipped(void) {
  check_bad_plugin_is_skipped("tm-test-bad-sample-table",
                              "tm-test-bad-sample-table.so",
                              "unknown sample table \"nope_sample\"");
}

static void test_a_stat_of_unknown_severity_is_skipped(void) {
  check_bad_plugin_is_skipped("tm-test-bad-stat", "tm-test-bad-stat.so",
                              "invalid stat declaration 0 "
                              "(test_reader_bad_severity)");
}

/* A reader of a later version whose range still includes 2 loads: the
 * host reads its larger descriptor only as far as version 2's, and speaks
 * version 2 with it. */
static void test_a_later_reader_that_speaks_version_2_loads(void) {
  char *dir = make_temp_dir();
  copy_plugin("tm-test-abi-future", dir, "tm-test-abi-future.so");
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  const tm_reader *r = plugin_set_find(set, "test-abi-future");
  g_assert_nonnull(r);
  g_assert_cmpuint(r->abi, ==, 2);
  g_assert_cmpuint(r->descriptor.abi_version, ==, 3);
  g_assert_cmpuint(r->descriptor.abi_min, ==, 2);
  g_assert_null(strstr(warnings, dir));

  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(dir);
}

/* What a descriptor declares is resolved at load: its stats with their
 * severity and source names (test_reader.c declares one, "notice",
 * "analysis"), and its sample table (none named: cpu_profile_stack_sample,
 * PROFILE_TABLE_CPU_PROFILE = 0). */
static void test_declarations_are_resolved_at_load(void) {
  char *dir = make_temp_dir();
  copy_plugin("tm-test-alpha", dir, "tm-test-alpha.so");
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  const tm_reader *r = plugin_set_find(set, "test-alpha");
  g_assert_nonnull(r);
  g_assert_cmpuint(r->abi, ==, 2);
  g_assert_cmpuint(r->n_stats, ==, 1);
  g_assert_cmpstr(r->stats[0].name, ==, "test_reader_stat");
  g_assert_cmpstr(r->stats[0].severity, ==, "notice");
  g_assert_cmpstr(r->stats[0].source, ==, "analysis");
  g_assert_cmpstr(r->stats[0].description, ==,
                  "A stat the loader test reader declares.");
  g_assert_cmpint(r->sample_table, ==, 0);

  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(dir);
}

/* Stat declarations from before tm_reader_stat had flags (32 bytes each,
 * two of them) are read with their own stride, and without flags they are
 * plain per-file stats, not indexed ones. */
static void test_stats_declared_without_flags_load_as_plain_stats(void) {
  char *dir = make_temp_dir();
  copy_plugin("tm-test-short-stat", dir, "tm-test-short-stat.so");
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  const tm_reader *r = plugin_set_find(set, "test-short-stat");
  g_assert_nonnull(r);
  g_assert_cmpuint(r->n_stats, ==, 2);
  g_assert_cmpstr(r->stats[0].name, ==, "test_reader_short_first");
  g_assert_cmpstr(r->stats[1].name, ==, "test_reader_short_second");
  g_assert_cmpstr(r->stats[1].severity, ==, "error");
  g_assert_cmpstr(r->stats[1].description, ==,
                  "The second of two short declarations.");
  g_assert_cmpint(r->stats[0].scope, ==, TM_STAT_MACHINE_AND_TRACE);
  g_assert_cmpint(r->stats[1].scope, ==, TM_STAT_MACHINE_AND_TRACE);

  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(dir);
}

static void test_descriptor_without_name_is_skipped(void) {
  check_bad_plugin_is_skipped("tm-test-null-name", "tm-test-null-name.so",
                              "incomplete descriptor: no name");
}

static void test_descriptor_without_a_callback_is_skipped(gconstpointer data) {
  const char *callback = data;
  char *module = g_strconcat("tm-test-no-", callback, NULL);
  char *file = g_strconcat(module, ".so", NULL);
  char *reason = g_strdup_printf("incomplete descriptor: no %s()", callback);
  check_bad_plugin_is_skipped(module, file, reason);
  g_free(reason);
  g_free(file);
  g_free(module);
}

static void test_file_that_is_not_a_shared_object_is_skipped(void) {
  char *dir = make_temp_dir();
  write_file(dir, "junk.so", "this is not an ELF file\n");
  copy_plugin("tm-test-alpha", dir, "tm-test-alpha.so");
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  assert_skipped(warnings, dir, "junk.so", "cannot be loaded: ");
  g_assert_cmpuint(count_under(set, dir), ==, 1);

  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(dir);
}

static void test_all_bad_plugins_together_leave_the_good_ones(void) {
  char *dir = make_temp_dir();
  const char *bad[] = {
      "tm-test-no-entry",         "tm-test-null-descriptor",
      "tm-test-abi-999",          "tm-test-abi-empty",
      "tm-test-small-descriptor", "tm-test-bad-sample-table",
      "tm-test-bad-stat",         "tm-test-null-name",
      "tm-test-no-probe",         "tm-test-no-open",
      "tm-test-no-feed",          "tm-test-no-finish",
      "tm-test-no-close"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *file = g_strconcat(bad[i], ".so", NULL);
    copy_plugin(bad[i], dir, file);
    g_free(file);
  }
  copy_plugin("tm-test-alpha", dir, "tm-test-alpha.so");
  copy_plugin("tm-test-beta", dir, "tm-test-beta.so");
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  g_assert_cmpuint(count_under(set, dir), ==, 2);
  g_assert_cmpuint(count_under(set, dir) + G_N_ELEMENTS(bad), ==, 15);
  g_assert_nonnull(plugin_set_find(set, "test-alpha"));
  g_assert_nonnull(plugin_set_find(set, "test-beta"));
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *path = g_strconcat(dir, "/", bad[i], ".so", NULL);
    char *line = warning_about(warnings, path);
    g_assert_nonnull(line);
    g_free(line);
    g_free(path);
  }

  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(dir);
}

static void test_other_files_and_subdirectories_are_not_tried(void) {
  char *dir = make_temp_dir();
  char *sub = g_build_filename(dir, "nested", NULL);
  g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
  copy_plugin("tm-test-beta", sub, "tm-test-beta.so");
  copy_plugin("tm-test-alpha", dir, "tm-test-alpha.so.disabled");
  write_file(dir, "README", "not a plugin\n");
  copy_plugin("tm-test-gamma", dir, "tm-test-gamma.so");
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  /* Only gamma: explicit directories are flat, and only "*.so" counts. */
  g_assert_cmpuint(count_under(set, dir), ==, 1);
  g_assert_nonnull(plugin_set_find(set, "test-gamma"));
  g_assert_null(plugin_set_find(set, "test-alpha"));
  g_assert_null(plugin_set_find(set, "test-beta"));
  g_assert_null(strstr(warnings, dir));

  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(sub);
  g_free(dir);
}

static void test_missing_directory_is_reported(void) {
  char *parent = make_temp_dir();
  char *dir = g_build_filename(parent, "does-not-exist", NULL);
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  char *line = warning_about(warnings, dir);
  g_assert_nonnull(line);
  g_assert_nonnull(strstr(line, "cannot open plugin directory"));
  g_assert_nonnull(strstr(line, g_strerror(ENOENT)));
  g_assert_cmpuint(count_under(set, parent), ==, 0);

  g_free(line);
  g_free(warnings);
  plugin_set_free(set);
  remove_tree(parent);
  g_free(dir);
  g_free(parent);
}

/* --- order and duplicates ------------------------------------------------ */

static void test_names_are_tried_in_sorted_order(void) {
  char *dir = make_temp_dir();
  /* Created in the opposite order of their names. */
  copy_plugin("tm-test-alpha", dir, "z-alpha.so");
  copy_plugin("tm-test-gamma", dir, "m-gamma.so");
  copy_plugin("tm-test-beta", dir, "a-beta.so");
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  char *a = g_build_filename(dir, "a-beta.so", NULL);
  char *m = g_build_filename(dir, "m-gamma.so", NULL);
  char *z = g_build_filename(dir, "z-alpha.so", NULL);
  g_assert_cmpint(index_of_path(set, a), ==, 0);
  g_assert_cmpint(index_of_path(set, m), ==, 1);
  g_assert_cmpint(index_of_path(set, z), ==, 2);
  g_assert_cmpstr(plugin_set_borrow(set, 0, NULL)->descriptor.name, ==, "test-beta");

  g_free(a);
  g_free(m);
  g_free(z);
  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(dir);
}

/* The clash message names both files and how to choose. */
static void assert_clash(const tm_plugin_set *set, const char *name,
                         const char *first, const char *second) {
  GError *error = NULL;
  g_assert_false(plugin_set_check(set, &error));
  g_assert_nonnull(error);
  g_autofree char *expected = g_strdup_printf(
      "two reader plugins are named \"%s\": %s and %s; name the one to use "
      "with --prefer-plugin FILE (or TRACEMERGE_PLUGIN_PREFER=FILE), or "
      "remove one",
      name, first, second);
  g_assert_cmpstr(error->message, ==, expected);
  g_error_free(error);
}

static void test_two_readers_of_one_name_in_a_directory_clash(void) {
  char *dir = make_temp_dir();
  copy_plugin("tm-test-alpha", dir, "2-second.so");
  copy_plugin("tm-test-alpha", dir, "1-first.so");
  char *warnings = NULL;
  const char *dirs[] = {dir};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);

  /* The first found stays listed; the set is not usable. */
  g_autofree char *first = g_build_filename(dir, "1-first.so", NULL);
  g_autofree char *second = g_build_filename(dir, "2-second.so", NULL);
  g_assert_cmpstr(path_of(set, "test-alpha"), ==, first);
  g_assert_cmpuint(count_under(set, dir), ==, 1);
  assert_clash(set, "test-alpha", first, second);
  g_assert_nonnull(strstr(warnings, "plugin name clash"));

  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(dir);
}

static void test_readers_of_one_name_in_two_directories_clash(void) {
  char *a = make_temp_dir();
  char *b = make_temp_dir();
  copy_plugin("tm-test-alpha", a, "tm-test-alpha.so");
  copy_plugin("tm-test-alpha", b, "tm-test-alpha.so");
  copy_plugin("tm-test-beta", b, "tm-test-beta.so");
  char *warnings = NULL;
  const char *dirs[] = {a, b};
  tm_plugin_set *set = load_capturing(dirs, 2, &warnings);

  g_autofree char *alpha_a = g_build_filename(a, "tm-test-alpha.so", NULL);
  g_autofree char *alpha_b = g_build_filename(b, "tm-test-alpha.so", NULL);
  g_assert_cmpstr(path_of(set, "test-alpha"), ==, alpha_a);
  assert_clash(set, "test-alpha", alpha_a, alpha_b);
  g_assert_nonnull(plugin_set_find(set, "test-beta"));

  g_free(warnings);
  plugin_set_free(set);
  remove_tree(a);
  remove_tree(b);
  g_free(a);
  g_free(b);
}

/* A preferred file wins whichever directory the others are in, and
 * whatever their order; the set is usable and says whom it overrode. */
static void test_a_preferred_reader_wins_a_clash(void) {
  char *a = make_temp_dir();
  char *b = make_temp_dir();
  copy_plugin("tm-test-alpha", a, "tm-test-alpha.so");
  copy_plugin("tm-test-alpha", b, "mine.so");
  char *warnings = NULL;
  const char *dirs[] = {a};
  g_autofree char *alpha_a = g_build_filename(a, "tm-test-alpha.so", NULL);
  g_autofree char *mine = g_build_filename(b, "mine.so", NULL);
  const char *preferred[] = {mine};
  tm_plugin_set *set = load_preferring(dirs, 1, preferred, 1, &warnings);

  g_assert_cmpstr(path_of(set, "test-alpha"), ==, mine);
  g_assert_true(plugin_set_check(set, NULL));
  int index = index_of_path(set, mine);
  const char *const *overridden = plugin_set_borrow_overridden(set, (size_t)index);
  g_assert_nonnull(overridden);
  g_assert_cmpstr(overridden[0], ==, alpha_a);
  g_assert_null(overridden[1]);
  g_assert_null(strstr(warnings, "clash"));
  g_free(warnings);
  plugin_set_free(set);

  /* The same through TRACEMERGE_PLUGIN_PREFER. */
  g_assert_true(g_setenv("TRACEMERGE_PLUGIN_PREFER", mine, TRUE));
  set = load_capturing(dirs, 1, &warnings);
  g_unsetenv("TRACEMERGE_PLUGIN_PREFER");
  g_assert_cmpstr(path_of(set, "test-alpha"), ==, mine);
  g_assert_true(plugin_set_check(set, NULL));
  g_free(warnings);
  plugin_set_free(set);

  /* Two preferred readers of one name are a clash again. */
  const char *both[] = {mine, alpha_a};
  set = load_preferring(NULL, 0, both, 2, &warnings);
  assert_clash(set, "test-alpha", mine, alpha_a);
  g_free(warnings);
  plugin_set_free(set);
  remove_tree(a);
  remove_tree(b);
  g_free(a);
  g_free(b);
}

/* One file reached through a symbolic link and its own name is one
 * plugin: no clash. */
static void test_one_file_by_two_paths_is_no_clash(void) {
  char *a = make_temp_dir();
  char *b = make_temp_dir();
  copy_plugin("tm-test-alpha", a, "tm-test-alpha.so");
  g_autofree char *target = g_build_filename(a, "tm-test-alpha.so", NULL);
  g_autofree char *link = g_build_filename(b, "link.so", NULL);
  g_assert_cmpint(symlink(target, link), ==, 0);
  char *warnings = NULL;
  const char *dirs[] = {a, b};
  tm_plugin_set *set = load_capturing(dirs, 2, &warnings);
  g_assert_true(plugin_set_check(set, NULL));
  g_assert_cmpstr(path_of(set, "test-alpha"), ==, target);
  g_free(warnings);
  plugin_set_free(set);
  remove_tree(a);
  remove_tree(b);
  g_free(a);
  g_free(b);
}

static void test_a_directory_named_twice_is_scanned_once(void) {
  char *dir = make_temp_dir();
  copy_plugin("tm-test-alpha", dir, "tm-test-alpha.so");
  char *again = g_build_filename(dir, ".", NULL);
  char *warnings = NULL;
  const char *dirs[] = {dir, again};
  tm_plugin_set *set = load_capturing(dirs, 2, &warnings);

  g_assert_cmpuint(count_under(set, dir), ==, 1);
  g_assert_null(strstr(warnings, "already loaded"));

  g_free(warnings);
  plugin_set_free(set);
  remove_tree(dir);
  g_free(again);
  g_free(dir);
}

/* --- TRACEMERGE_PLUGIN_PATH --------------------------------------------- */

static void test_plugin_path_is_searched_after_extra_dirs(void) {
  char *extra = make_temp_dir();
  char *first = make_temp_dir();
  char *second = make_temp_dir();
  copy_plugin("tm-test-alpha", extra, "tm-test-alpha.so");
  copy_plugin("tm-test-gamma", first, "tm-test-gamma.so");
  copy_plugin("tm-test-beta", second, "tm-test-beta.so");
  /* Empty entries (leading, doubled, trailing colons) mean nothing. */
  char *value = g_strdup_printf(":%s::%s:", first, second);
  g_assert_true(g_setenv("TRACEMERGE_PLUGIN_PATH", value, TRUE));
  char *warnings = NULL;
  const char *dirs[] = {extra};
  tm_plugin_set *set = load_capturing(dirs, 1, &warnings);
  g_unsetenv("TRACEMERGE_PLUGIN_PATH");

  char *alpha = g_build_filename(extra, "tm-test-alpha.so", NULL);
  char *gamma = g_build_filename(first, "tm-test-gamma.so", NULL);
  char *beta = g_build_filename(second, "tm-test-beta.so", NULL);
  g_assert_cmpstr(path_of(set, "test-alpha"), ==, alpha);
  g_assert_cmpstr(path_of(set, "test-gamma"), ==, gamma);
  g_assert_cmpstr(path_of(set, "test-beta"), ==, beta);
  g_assert_cmpint(index_of_path(set, alpha), <, index_of_path(set, gamma));
  g_assert_cmpint(index_of_path(set, gamma), <, index_of_path(set, beta));
  g_assert_true(plugin_set_check(set, NULL));
  g_assert_null(strstr(warnings, "relative"));

  g_free(alpha);
  g_free(gamma);
  g_free(beta);
  g_free(value);
  g_free(warnings);
  plugin_set_free(set);
  remove_tree(extra);
  remove_tree(first);
  remove_tree(second);
  g_free(extra);
  g_free(first);
  g_free(second);
}

static void test_relative_plugin_path_entries_are_ignored(void) {
  char *work = make_temp_dir();
  char *relative = g_build_filename(work, "rel", NULL);
  char *absolute = make_temp_dir();
  g_assert_cmpint(g_mkdir(relative, 0700), ==, 0);
  copy_plugin("tm-test-gamma", relative, "tm-test-gamma.so");
  copy_plugin("tm-test-beta", absolute, "tm-test-beta.so");
  char *old_cwd = g_get_current_dir();
  g_assert_cmpint(g_chdir(work), ==, 0);

  /* "rel" exists relative to the current directory and holds a reader:
   * it must still not be searched. */
  char *value = g_strdup_printf("rel:%s", absolute);
  g_assert_true(g_setenv("TRACEMERGE_PLUGIN_PATH", value, TRUE));
  char *warnings = NULL;
  tm_plugin_set *set = load_capturing(NULL, 0, &warnings);
  g_unsetenv("TRACEMERGE_PLUGIN_PATH");
  g_assert_cmpint(g_chdir(old_cwd), ==, 0);

  g_assert_null(plugin_set_find(set, "test-gamma"));
  g_assert_cmpuint(count_under(set, work), ==, 0);
  g_assert_nonnull(plugin_set_find(set, "test-beta"));
  g_assert_nonnull(strstr(warnings,
                          "tracemerge: warning: ignoring relative "
                          "TRACEMERGE_PLUGIN_PATH entry \"rel\" (only "
                          "absolute directories are searched)\n"));

  g_free(value);
  g_free(warnings);
  plugin_set_free(set);
  remove_tree(work);
  remove_tree(absolute);
  g_free(old_cwd);
  g_free(relative);
  g_free(work);
  g_free(absolute);
}

/* --- default directories ------------------------------------------------- */

/* This program runs from the build tree, so the loader must search the
 * build tree's plugins/ and its subdirectories, where the in-tree example
 * reader is built as plugins/example/tm-example.so. */
static void test_build_tree_plugins_are_found_by_default(void) {
  char *tests_dir = realpath(g_test_get_dir(G_TEST_BUILT), NULL);
  g_assert_nonnull(tests_dir);
  char *build_root = g_path_get_dirname(tests_dir);
  char *example =
      g_build_filename(build_root, "plugins", "example", "tm-example.so", NULL);
  g_assert_true(g_file_test(example, G_FILE_TEST_IS_REGULAR));
  char *warnings = NULL;
  tm_plugin_set *set = load_capturing(NULL, 0, &warnings);

  g_assert_cmpstr(path_of(set, "example"), ==, example);
  /* The test readers next to this program are not a default location. */
  g_assert_null(plugin_set_find(set, "test-alpha"));

  g_free(warnings);
  plugin_set_free(set);
  g_free(example);
  g_free(build_root);
  free(tests_dir);
}

/* --- lookup and detection ------------------------------------------------ */

static void test_find_and_borrow_reject_unknown_readers(void) {
  char *warnings = NULL;
  tm_plugin_set *set = load_capturing(NULL, 0, &warnings);
  const char *path = "unchanged";
  g_assert_null(plugin_set_find(set, "no-such-reader"));
  g_assert_null(plugin_set_find(set, NULL));
  g_assert_null(plugin_set_borrow(set, plugin_set_count(set), &path));
  g_assert_null(path);
  g_free(warnings);
  plugin_set_free(set);
  plugin_set_free(NULL);
}

typedef struct detect_fixture {
  char *first;  /* beta and gamma */
  char *second; /* alpha */
  tm_plugin_set *set;
} detect_fixture;

/* beta is loaded before alpha, so a tie between them can only go to alpha
 * by name, not by load order. */
static void detect_fixture_set_up(detect_fixture *f, gconstpointer data) {
  (void)data;
  f->first = make_temp_dir();
  f->second = make_temp_dir();
  copy_plugin("tm-test-beta", f->first, "tm-test-beta.so");
  copy_plugin("tm-test-gamma", f->first, "tm-test-gamma.so");
  copy_plugin("tm-test-alpha", f->second, "tm-test-alpha.so");
  char *warnings = NULL;
  const char *dirs[] = {f->first, f->second};
  f->set = load_capturing(dirs, 2, &warnings);
  g_free(warnings);
  g_assert_cmpint(index_of_path(f->set, path_of(f->set, "test-beta")), <,
                  index_of_path(f->set, path_of(f->set, "test-alpha")));
}

static void detect_fixture_tear_down(detect_fixture *f, gconstpointer data) {
  (void)data;
  plugin_set_free(f->set);
  remove_tree(f->first);
  remove_tree(f->second);
  g_free(f->first);
  g_free(f->second);
}

static const tm_reader_descriptor *detect_text(tm_plugin_set *set,
                                               const char *text) {
  const tm_reader *r = plugin_set_detect(set, (const uint8_t *)text,
                                         strlen(text), "input.trace");
  return r ? &r->descriptor : NULL;
}

static void test_detect_highest_score_wins(detect_fixture *f,
                                           gconstpointer data) {
  (void)data;
  /* alpha and beta score 5 ("#tm-test"), gamma 9 ("#tm-test-high"). */
  const tm_reader_descriptor *d = detect_text(f->set, "#tm-test-high\n1 x\n");
  g_assert_nonnull(d);
  g_assert_cmpstr(d->name, ==, "test-gamma");
}

static void test_detect_tie_goes_to_the_first_name(detect_fixture *f,
                                                   gconstpointer data) {
  (void)data;
  const tm_reader_descriptor *d = detect_text(f->set, "#tm-test-tie\n");
  g_assert_nonnull(d);
  g_assert_cmpstr(d->name, ==, "test-alpha");
}

static void test_detect_without_any_score_finds_nothing(detect_fixture *f,
                                                        gconstpointer data) {
  (void)data;
  g_assert_null(detect_text(f->set, "#not-a-test-format\n"));
  g_assert_null(plugin_set_detect(f->set, (const uint8_t *)"", 0, NULL));
}

/* A probe returning INT_MAX counts as TM_PROBE_SCORE_MAX (it still takes
 * a head no other reader scores), and the user is told once, whatever the
 * number of files probed. */
static void test_probe_scores_are_clamped(void) {
  char *dir = make_temp_dir();
  copy_plugin("tm-test-greedy", dir, "tm-test-greedy.so");
  copy_plugin("tm-test-gamma", dir, "tm-test-gamma.so");
  char *text = NULL;
  size_t size = 0;
  FILE *stream = open_memstream(&text, &size);
  const char *dirs[] = {dir};
  tm_plugin_set *set = plugin_set_load(dirs, 1, NULL, 0, stream);
  for (int i = 0; i < 3; i++) {
    const tm_reader_descriptor *d = detect_text(set, "#tm-test-greedy\n");
    g_assert_nonnull(d);
    g_assert_cmpstr(d->name, ==, "test-greedy");
  }
  plugin_set_free(set);
  g_assert_cmpint(fclose(stream), ==, 0);
  g_autofree char *path = g_build_filename(dir, "tm-test-greedy.so", NULL);
  g_autofree char *expected = g_strdup_printf(
      "tracemerge: warning: plugin %s: probe() returned 2147483647, outside "
      "[0, %d]; taken as %d\n",
      path, TM_PROBE_SCORE_MAX, TM_PROBE_SCORE_MAX);
  g_assert_cmpstr(text, ==, expected);
  free(text);
  remove_tree(dir);
  g_free(dir);
}

static void test_detect_hands_probes_at_most_512_bytes(detect_fixture *f,
                                                       gconstpointer data) {
  (void)data;
  /* The test probes return 0 for a head longer than the ABI allows. */
  char head[4096];
  memset(head, ' ', sizeof head);
  memcpy(head, "#tm-test-high", 13);
  const tm_reader *r =
      plugin_set_detect(f->set, (const uint8_t *)head, sizeof head, NULL);
  g_assert_nonnull(r);
  g_assert_cmpstr(r->descriptor.name, ==, "test-gamma");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/plugin-loader/skips/missing-entry-symbol",
                  test_missing_entry_symbol_is_skipped);
  g_test_add_func("/plugin-loader/skips/entry-returning-no-descriptor",
                  test_entry_returning_null_is_skipped);
  g_test_add_func("/plugin-loader/skips/abi-version-999",
                  test_abi_version_999_is_skipped);
  g_test_add_func("/plugin-loader/skips/empty-abi-range",
                  test_an_empty_abi_range_is_skipped);
  g_test_add_func("/plugin-loader/skips/descriptor-smaller-than-version-2",
                  test_a_descriptor_smaller_than_version_2_is_skipped);
  g_test_add_func("/plugin-loader/skips/unknown-sample-table",
                  test_an_unknown_sample_table_is_skipped);
  g_test_add_func("/plugin-loader/skips/stat-of-unknown-severity",
                  test_a_stat_of_unknown_severity_is_skipped);
  g_test_add_func("/plugin-loader/abi/later-reader-speaking-2-loads",
                  test_a_later_reader_that_speaks_version_2_loads);
  g_test_add_func("/plugin-loader/abi/declarations-resolved-at-load",
                  test_declarations_are_resolved_at_load);
  g_test_add_func("/plugin-loader/abi/stats-without-flags-load-as-plain-stats",
                  test_stats_declared_without_flags_load_as_plain_stats);
  g_test_add_func("/plugin-loader/skips/descriptor-without-a-name",
                  test_descriptor_without_name_is_skipped);
  static const char *const callbacks[] = {"probe", "open", "feed", "finish",
                                          "close"};
  for (size_t i = 0; i < G_N_ELEMENTS(callbacks); i++) {
    char *path = g_strdup_printf("/plugin-loader/skips/descriptor-without-%s",
                                 callbacks[i]);
    g_test_add_data_func(path, callbacks[i],
                         test_descriptor_without_a_callback_is_skipped);
    g_free(path);
  }
  g_test_add_func("/plugin-loader/skips/file-that-is-not-a-shared-object",
                  test_file_that_is_not_a_shared_object_is_skipped);
  g_test_add_func("/plugin-loader/skips/all-bad-plugins-leave-the-good-ones",
                  test_all_bad_plugins_together_leave_the_good_ones);
  g_test_add_func("/plugin-loader/skips/other-files-and-subdirectories",
                  test_other_files_and_subdirectories_are_not_tried);
  g_test_add_func("/plugin-loader/skips/missing-directory-is-reported",
                  test_missing_directory_is_reported);
  g_test_add_func("/plugin-loader/order/names-sorted-within-a-directory",
                  test_names_are_tried_in_sorted_order);
  g_test_add_func("/plugin-loader/duplicates/two-of-one-name-in-a-directory-clash",
                  test_two_readers_of_one_name_in_a_directory_clash);
  g_test_add_func("/plugin-loader/duplicates/one-name-in-two-directories-clash",
                  test_readers_of_one_name_in_two_directories_clash);
  g_test_add_func("/plugin-loader/duplicates/a-preferred-reader-wins-a-clash",
                  test_a_preferred_reader_wins_a_clash);
  g_test_add_func("/plugin-loader/duplicates/one-file-by-two-paths-is-no-clash",
                  test_one_file_by_two_paths_is_no_clash);
  g_test_add_func(
      "/plugin-loader/duplicates/directory-named-twice-scanned-once",
      test_a_directory_named_twice_is_scanned_once);
  g_test_add_func("/plugin-loader/plugin-path/searched-after-extra-dirs",
                  test_plugin_path_is_searched_after_extra_dirs);
  g_test_add_func("/plugin-loader/plugin-path/relative-entries-are-ignored",
                  test_relative_plugin_path_entries_are_ignored);
  g_test_add_func("/plugin-loader/defaults/build-tree-plugins-are-found",
                  test_build_tree_plugins_are_found_by_default);
  g_test_add_func("/plugin-loader/lookup/unknown-readers-are-null",
                  test_find_and_borrow_reject_unknown_readers);
  g_test_add("/plugin-loader/detect/highest-score-wins", detect_fixture, NULL,
             detect_fixture_set_up, test_detect_highest_score_wins,
             detect_fixture_tear_down);
  g_test_add("/plugin-loader/detect/tie-goes-to-the-first-name", detect_fixture,
             NULL, detect_fixture_set_up,
             test_detect_tie_goes_to_the_first_name, detect_fixture_tear_down);
  g_test_add("/plugin-loader/detect/no-score-finds-nothing", detect_fixture,
             NULL, detect_fixture_set_up,
             test_detect_without_any_score_finds_nothing,
             detect_fixture_tear_down);
  g_test_add_func("/plugin-loader/detect/probe-scores-are-clamped-and-warned-about-once",
                  test_probe_scores_are_clamped);
  g_test_add("/plugin-loader/detect/probes-see-at-most-512-bytes",
             detect_fixture, NULL, detect_fixture_set_up,
             test_detect_hands_probes_at_most_512_bytes,
             detect_fixture_tear_down);
  return g_test_run();
}
