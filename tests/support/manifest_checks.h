/*
 * Helpers of the perfetto_manifest unit tests (test_manifest*.c): parse a
 * manifest written with single quotes (turned into double quotes first, so
 * the manifests stay readable in C strings), resolve it, and compare the
 * exact error texts of docs/clock-model.md §10.1.
 */
#ifndef TM_TEST_MANIFEST_CHECKS_H
#define TM_TEST_MANIFEST_CHECKS_H

#include <glib.h>

#include "input/manifest.h"

#define RAW0 TM_MANIFEST_FIRST_RAW_MACHINE_ID
#define NO_MACHINE TM_MANIFEST_NO_MACHINE
#define NO_MEMBER TM_MANIFEST_NO_MEMBER

/* A manifest with version 1 and `body` (more members, or empty). */
#define M(body) "{'perfetto_manifest': {'version': 1" body "}}"

/* One valid __exported_table_schema column. */
#define COLUMN                                                                 \
  "{'name': 'id', 'type': 'int64', 'nullability': 'non_null', "                \
  "'sort': 'sorted', 'duplicates': 'no'}"

/* `json` with every ' turned into "; free with g_free. */
char *unquote(const char *json);

/* manifest_parse of unquote(json). */
tm_manifest *parse(const char *json, GError **error);

/* parse(), asserting success. */
tm_manifest *parse_ok(const char *json);

/* Asserts that parsing fails with exactly `expected`. */
void assert_parse_error(const char *json, const char *expected);

/* parse_ok() and manifest_resolve() against `paths`, asserting success. */
tm_manifest *resolve_ok(const char *json, const char *const *paths, size_t n_paths);

/* Asserts that resolving against `paths` fails with exactly `expected`. */
void assert_resolve_error(const char *json, const char *const *paths,
                          size_t n_paths, const char *expected);

/* Asserts that `s` holds exactly `expected` (NULL: absent). */
void assert_str(tm_manifest_string s, const char *expected);

/* Paths every resolve test may use: NULL, a.pb, b.pb, a.json, b.json,
 * t.arrow. */
extern const char *const members[6];
#define N_MEMBERS G_N_ELEMENTS(members)

#endif /* TM_TEST_MANIFEST_CHECKS_H */
