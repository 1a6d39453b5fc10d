#include "corpus.h"

#include <stdio.h>
#include <stdlib.h>

char *corpus_real_path(const char *subdir, const char *file) {
  const char *root = g_getenv("TRACEMERGE_REAL_DATA");
  if (!root)
    g_error("TRACEMERGE_REAL_DATA is not set (meson test sets it to tests/data/real)");
  char *path = g_build_filename(root, subdir, file, NULL);
  if (!g_file_test(path, G_FILE_TEST_IS_REGULAR))
    g_error("%s: missing from the repository's corpus", path);
  return path;
}

char *corpus_real_read(const char *subdir, const char *file, gsize *len) {
  g_autofree char *path = corpus_real_path(subdir, file);
  char *data = NULL;
  GError *error = NULL;
  g_file_get_contents(path, &data, len, &error);
  g_assert_no_error(error);
  return data;
}

char *corpus_shared_path_or_skip(const char *subdir, const char *file) {
  const char *root = g_getenv("TRACEMERGE_SHARED_DATA");
  char *path = root ? g_build_filename(root, subdir, file, NULL) : NULL;
  if (!path || !g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
    /* Printed to stdout, which meson keeps in the test log. */
    printf("SKIP: %s is not here (it is not in the repository; see "
           "tests/data/real/README.md)\n", path ? path : "$TRACEMERGE_SHARED_DATA");
    fflush(stdout);
    g_free(path);
    exit(CORPUS_EXIT_SKIP);
  }
  return path;
}
