/*
 * Replays saved fuzz inputs through a libFuzzer target without libFuzzer:
 * linked with the target's LLVMFuzzerTestOneInput (and the code it
 * tests), in the ordinary build, so that CI runs the corpus and every
 * past crash input as plain tests under whatever sanitizers the build
 * has. Arguments are directories (their regular files, in name order) or
 * files; a missing directory is nothing to replay. A finding aborts, as it
 * would under libFuzzer.
 */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int compare_names(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t replay_file(const char *path) {
  char *bytes = NULL;
  gsize len = 0;
  GError *error = NULL;
  if (!g_file_get_contents(path, &bytes, &len, &error)) {
    fprintf(stderr, "replay: %s\n", error->message);
    g_error_free(error);
    return 0;
  }
  /* A copy of exactly `len` bytes, so a read past the end is caught. */
  uint8_t *copy = g_memdup2(bytes, len);
  LLVMFuzzerTestOneInput(copy, len);
  g_free(copy);
  g_free(bytes);
  return 1;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  size_t replayed = 0;
  for (int i = 1; i < argc; i++) {
    if (g_file_test(argv[i], G_FILE_TEST_IS_REGULAR)) {
      replayed += replay_file(argv[i]);
      continue;
    }
    GDir *dir = g_dir_open(argv[i], 0, NULL);
    if (dir == NULL)
      continue;
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *name; (name = g_dir_read_name(dir)) != NULL;)
      g_ptr_array_add(names, g_build_filename(argv[i], name, NULL));
    g_dir_close(dir);
    g_ptr_array_sort(names, compare_names);
    for (guint k = 0; k < names->len; k++)
      if (g_file_test(names->pdata[k], G_FILE_TEST_IS_REGULAR))
        replayed += replay_file(names->pdata[k]);
    g_ptr_array_free(names, TRUE);
  }
  printf("replayed %zu inputs\n", replayed);
  return 0;
}
