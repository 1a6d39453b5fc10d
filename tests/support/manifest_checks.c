#include "manifest_checks.h"

#include <string.h>

char *unquote(const char *json) {
  char *s = g_strdup(json);
  for (char *c = s; *c; c++)
    if (*c == '\'')
      *c = '"';
  return s;
}

tm_manifest *parse(const char *json, GError **error) {
  char *s = unquote(json);
  tm_manifest *m = manifest_parse((const uint8_t *)s, strlen(s), error);
  g_free(s);
  return m;
}

tm_manifest *parse_ok(const char *json) {
  GError *error = NULL;
  tm_manifest *m = parse(json, &error);
  g_assert_no_error(error);
  g_assert_nonnull(m);
  return m;
}

void assert_parse_error(const char *json, const char *expected) {
  GError *error = NULL;
  tm_manifest *m = parse(json, &error);
  g_assert_null(m);
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==, expected);
  g_error_free(error);
}

tm_manifest *resolve_ok(const char *json, const char *const *paths,
                               size_t n_paths) {
  tm_manifest *m = parse_ok(json);
  GError *error = NULL;
  g_assert_true(manifest_resolve(m, paths, n_paths, &error));
  g_assert_no_error(error);
  g_assert_true(m->resolved);
  return m;
}

void assert_resolve_error(const char *json, const char *const *paths,
                                 size_t n_paths, const char *expected) {
  tm_manifest *m = parse_ok(json);
  GError *error = NULL;
  g_assert_false(manifest_resolve(m, paths, n_paths, &error));
  g_assert_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_UNRESOLVED);
  g_assert_cmpstr(error->message, ==, expected);
  g_assert_false(m->resolved);
  g_error_free(error);
  manifest_free(m);
}

void assert_str(tm_manifest_string s, const char *expected) {
  if (expected == NULL) {
    g_assert_null(s.str);
    return;
  }
  g_assert_nonnull(s.str);
  g_assert_cmpuint(s.len, ==, strlen(expected));
  g_assert_cmpstr(s.str, ==, expected);
}

const char *const members[6] = {NULL, "a.pb", "b.pb", "a.json", "b.json", "t.arrow"};

