/*
 * Merge configs through the library (tracemerge.h): a config given as
 * bytes (tm_session_options.config_data), the check a tool can make before
 * importing, the normalised text, and the refusals the session adds to
 * the config's own (a reader configured twice).
 *
 * The test-abi reader (tests/plugins/abi) writes the bytes its open()
 * received, hex-encoded, as the metadata row abi_test_config.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include <tracemerge/tracemerge.h>

#include "session_query.h"

typedef struct fixture {
  char *dir;
  char *input;
} fixture;

static void fixture_set_up(fixture *f, gconstpointer data) {
  (void)data;
  GError *error = NULL;
  f->dir = g_dir_make_tmp("tm-session-config-XXXXXX", &error);
  g_assert_no_error(error);
  f->input = g_build_filename(f->dir, "a.abi", NULL);
  g_file_set_contents(f->input, "#tm-abi\nslice 1000 first\nslice 2000000 second\n", -1, &error);
  g_assert_no_error(error);
}

static void fixture_tear_down(fixture *f, gconstpointer data) {
  (void)data;
  g_unlink(f->input);
  g_rmdir(f->dir);
  g_free(f->input);
  g_free(f->dir);
}

static tm_session *session_with(const char *config, tm_config_syntax syntax,
                                const tm_reader_config *reader_configs, size_t n) {
  const char *readers = g_getenv("TM_ABI_TEST_READERS");
  g_assert_nonnull(readers);
  const char *dirs[] = {readers};
  tm_session_options options = {
      .plugin_dirs = dirs,
      .n_plugin_dirs = 1,
      .reader_configs = reader_configs,
      .n_reader_configs = n,
      .config_data = config,
      .config_len = config ? strlen(config) : 0,
      .config_syntax = syntax,
  };
  return tm_session_new(&options);
}

/* "ab" as a string block reaches open() as 61 62; duration_ms 1 keeps
 * [1000 ns, 1 001 000 ns) of a timeline that starts at 1000 ns: "first". */
static void test_a_config_given_as_bytes_applies(fixture *f, gconstpointer data) {
  (void)data;
  tm_session *session = session_with("duration_ms: 1\n"
                                     "data_sources { config { name: \"test-abi\" "
                                     "abi_test_config: \"ab\" } }\n",
                                     TM_CONFIG_SYNTAX_TEXT, NULL, 0);
  GError *error = NULL;
  g_assert_true(tm_session_config_check(session, &error));
  const char *paths[] = {f->input};
  g_assert_true(tm_session_import(session, paths, 1, &error));
  g_assert_no_error(error);
  g_autofree char *rows = session_query_csv(
      session, "SELECT (SELECT group_concat(name) FROM slice) AS kept, (SELECT str_value FROM "
               "metadata WHERE name = 'abi_test_config') AS config");
  g_assert_cmpstr(rows, ==, "\"kept\",\"config\"\n\"first\",\"6162\"\n");
  g_autofree char *text = tm_session_config_to_text(session);
  g_assert_cmpstr(text, ==,
                  "duration_ms: 1\n"
                  "data_sources {\n  config {\n    name: \"test-abi\"\n"
                  "    abi_test_config: \"ab\"\n  }\n}\n");
  tm_session_free(session);
}

/* Config bytes without a path are binary unless the syntax says text:
 * this text is not a valid encoding, so the session refuses it, and the
 * import fails with the same message. */
static void test_config_bytes_are_binary_by_default(fixture *f, gconstpointer data) {
  (void)data;
  tm_session *session = session_with("duration_ms: 1\n", TM_CONFIG_SYNTAX_AUTO, NULL, 0);
  GError *check = NULL, *import = NULL;
  g_assert_false(tm_session_config_check(session, &check));
  g_assert_error(check, TRACEMERGE_ERROR, TM_ERROR_CONFIG);
  g_assert_true(g_str_has_prefix(check->message, "(config): "));
  const char *paths[] = {f->input};
  g_assert_false(tm_session_import(session, paths, 1, &import));
  g_assert_error(import, TRACEMERGE_ERROR, TM_ERROR_CONFIG);
  g_assert_cmpstr(import->message, ==, check->message);
  g_assert_null(tm_session_config_to_text(session));
  g_error_free(check);
  g_error_free(import);
  tm_session_free(session);
}

static void test_a_reader_configured_twice_is_refused(fixture *f, gconstpointer data) {
  (void)f;
  (void)data;
  tm_reader_config twice = {"test-abi", "x", 1};
  tm_session *session =
      session_with("data_sources { config { name: \"test-abi\" abi_test_config: \"y\" } }\n",
                   TM_CONFIG_SYNTAX_TEXT, &twice, 1);
  GError *error = NULL;
  g_assert_false(tm_session_config_check(session, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG);
  g_assert_cmpstr(error->message, ==,
                  "(config): reader 'test-abi' is configured twice: by a reader configuration "
                  "(--reader-config) and by data_sources[0] of the config; give one");
  g_error_free(error);
  tm_session_free(session);
}

/* A reader configuration for a reader the config does not give a block
 * still applies. */
static void test_a_reader_configuration_applies_beside_the_config(fixture *f,
                                                                  gconstpointer data) {
  (void)data;
  tm_reader_config config = {"test-abi", "zz", 2};
  tm_session *session = session_with("data_sources { config { name: \"test-abi\" } }\n",
                                     TM_CONFIG_SYNTAX_TEXT, &config, 1);
  GError *error = NULL;
  const char *paths[] = {f->input};
  g_assert_true(tm_session_import(session, paths, 1, &error));
  g_autofree char *rows =
      session_query_csv(session, "SELECT str_value FROM metadata WHERE name = 'abi_test_config'");
  g_assert_cmpstr(rows, ==, "\"str_value\"\n\"7a7a\"\n");
  tm_session_free(session);
}

static void test_without_a_config_there_is_nothing_to_check(fixture *f, gconstpointer data) {
  (void)f;
  (void)data;
  tm_session *session = session_with(NULL, TM_CONFIG_SYNTAX_AUTO, NULL, 0);
  GError *error = NULL;
  g_assert_true(tm_session_config_check(session, &error));
  g_assert_null(tm_session_config_to_text(session));
  tm_session_free(session);
}

/* A config file that cannot be read is a config error like any other:
 * the public domain's CONFIG code, the path in the message. */
static void test_an_unreadable_config_file_is_a_config_error(fixture *f, gconstpointer data) {
  (void)data;
  g_autofree char *path = g_build_filename(f->dir, "missing.pbtx", NULL);
  tm_session_options options = {.config_path = path};
  tm_session *session = tm_session_new(&options);
  GError *error = NULL;
  g_assert_false(tm_session_config_check(session, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG);
  g_assert_nonnull(strstr(error->message, path));
  g_error_free(error);
  tm_session_free(session);
}

#define ADD(path, fn) g_test_add(path, fixture, NULL, fixture_set_up, fn, fixture_tear_down)

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  ADD("/session-config/a-config-given-as-bytes-applies", test_a_config_given_as_bytes_applies);
  ADD("/session-config/config-bytes-are-binary-by-default",
      test_config_bytes_are_binary_by_default);
  ADD("/session-config/a-reader-configured-twice-is-refused",
      test_a_reader_configured_twice_is_refused);
  ADD("/session-config/a-reader-configuration-applies-beside-the-config",
      test_a_reader_configuration_applies_beside_the_config);
  ADD("/session-config/without-a-config-there-is-nothing-to-check",
      test_without_a_config_there_is_nothing_to_check);
  ADD("/session-config/an-unreadable-config-file-is-a-config-error",
      test_an_unreadable_config_file_is_a_config_error);
  return g_test_run();
}
