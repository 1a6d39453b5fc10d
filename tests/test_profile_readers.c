/*
 * The Gecko and Instruments readers driven through dlopen with the fake
 * host (tests/support/fake_host.h), whose transcript has a line for every
 * call: the same file fed in chunks of 1, 7, 4093 bytes or whole must
 * produce the same transcript (the readers keep their own
 * partial-token state across chunks), and the probes claim exactly their
 * formats. The plugins are found through $TM_GECKO_PLUGIN and
 * $TM_INSTRUMENTS_PLUGIN; the corpus through $TRACEMERGE_REAL_DATA, and the
 * copyleft jmh exports through $TRACEMERGE_SHARED_DATA: the tests under
 * /profile-readers/jmh/ need them, and meson runs them alone (-p) as the
 * test profile_readers_jmh, which exits 77 (SKIP) when they are absent,
 * and skips them (--skip-prefix) in the test profile_readers.
 */
#include <glib.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "corpus.h"
#include "fake_host.h"
#include "reader_load.h"

/* The handle stays open for the process' life. */
static const tm_reader_descriptor *load_reader(const char *env) {
  void *handle;
  const tm_reader_descriptor *reader = reader_load_from_env(env, &handle);
  if (!reader)
    g_error("%s could not be loaded", env);
  return reader;
}

/* Feeds `data` in chunks of `chunk` bytes (0: whole); returns the host's
 * transcript, and the samples in it in *samples. */
static char *read_in_chunks(const tm_reader_descriptor *reader, const char *data,
                            size_t len, size_t chunk, size_t *samples) {
  fake_host *host = fake_host_new();
  tm_status status = fake_host_run(host, reader, (const uint8_t *)data, len,
                                   chunk ? chunk : MAX(len, 1));
  g_assert_cmpint(status, ==, TM_OK);
  g_assert_null(fake_host_borrow_error(host, NULL));
  *samples = fake_host_count_lines(host, "sample ");
  char *transcript = g_strdup(fake_host_borrow_transcript(host));
  fake_host_free(host);
  return transcript;
}

static void check_chunking(const tm_reader_descriptor *reader, const char *path,
                           size_t expected_samples) {
  const char *file = path;
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  size_t samples = 0;
  g_autofree char *whole = read_in_chunks(reader, data, len, 0, &samples);
  /* Sample counts of the files are worked out in test_e2e_gecko.c /
   * test_e2e_instruments.c (python json / xml.etree). */
  g_assert_cmpuint(samples, ==, expected_samples);
  static const size_t chunks[] = {1, 7, 4093};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    g_autofree char *log = read_in_chunks(reader, data, len, chunks[i], &samples);
    g_assert_cmpuint(samples, ==, expected_samples);
    if (strcmp(log, whole) != 0)
      g_error("%s read in chunks of %zu differs from a whole read", file, chunks[i]);
  }
}

static const tm_reader_descriptor *gecko, *instruments;

static void check_real_chunking(const tm_reader_descriptor *reader, const char *subdir,
                                const char *file, size_t expected_samples) {
  g_autofree char *path = corpus_real_path(subdir, file);
  check_chunking(reader, path, expected_samples);
}

static void test_gecko_reads_the_same_in_any_chunking(void) {
  check_real_chunking(gecko, "gecko", "ffprofiler-argument-values.json", 32);
  check_real_chunking(gecko, "gecko", "speedscope-firefox63-simple-devtools.json", 39);
}

/* The hand-written exports of tests/data/instruments (their samples are
 * worked out in test_e2e_instruments.c). */
static void test_instruments_reads_the_same_in_any_chunking(void) {
  static const struct {
    const char *file;
    size_t samples;
  } cases[] = {
      {"time-profile-symbolicated.xml", 5},
      {"time-profile-unsymbolicated.xml", 3},
      {"cpu-profile-cycle-weight.xml", 4},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    check_chunking(instruments,
                   g_test_get_filename(G_TEST_DIST, "data", "instruments", cases[i].file, NULL),
                   cases[i].samples);
}

static void test_instruments_jmh_reads_the_same_in_any_chunking(void) {
  g_autofree char *modern =
      corpus_shared_path_or_skip("instruments", "jmh-time-profile.xcode26.4.1.xml");
  g_autofree char *old = corpus_shared_path_or_skip("instruments", "jmh-time-profile.xcode12.5.xml");
  check_chunking(instruments, modern, 85);
  check_chunking(instruments, old, 98);
}

static int probe(const tm_reader_descriptor *reader, const char *head) {
  return reader->probe((const uint8_t *)head, strlen(head), NULL);
}

static void test_probes_claim_their_formats_only(void) {
  g_assert_cmpint(probe(gecko, " {\n \"meta\": {"), >, 0);
  g_assert_cmpint(probe(gecko, "{\"libs\":[]"), >, 0);
  g_assert_cmpint(probe(gecko, "{\"label\":\"x\",\"profile\": {\"meta\":{}"), >, 0);
  g_assert_cmpint(probe(gecko, "{\"label\":\"x\",\"duration\":3}"), ==, 0);
  g_assert_cmpint(probe(gecko, "{\"traceEvents\":[]}"), ==, 0);
  g_assert_cmpint(probe(gecko, "[{\"meta\":1}]"), ==, 0);
  g_assert_cmpint(probe(instruments, "<?xml version=\"1.0\"?>\n<trace-query-result>\n"), >, 0);
  g_assert_cmpint(probe(instruments, "<?xml version=\"1.0\"?>\n<html>"), ==, 0);
  g_assert_cmpint(probe(instruments, "{\"meta\":{}}"), ==, 0);
  g_assert_cmpint(probe(gecko, "<?xml version=\"1.0\"?>\n<trace-query-result>"), ==, 0);
  g_assert_true(gecko->flags & TM_READER_CLOCKLESS);
  g_assert_true(instruments->flags & TM_READER_CLOCKLESS);
  g_assert_cmpstr(gecko->name, ==, "gecko");
  g_assert_cmpstr(instruments->name, ==, "instruments_xml");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  gecko = load_reader("TM_GECKO_PLUGIN");
  instruments = load_reader("TM_INSTRUMENTS_PLUGIN");
  g_test_add_func("/profile-readers/gecko/reads-the-same-in-any-chunking",
                  test_gecko_reads_the_same_in_any_chunking);
  g_test_add_func("/profile-readers/instruments/reads-the-same-in-any-chunking",
                  test_instruments_reads_the_same_in_any_chunking);
  g_test_add_func("/profile-readers/jmh/instruments-reads-the-same-in-any-chunking",
                  test_instruments_jmh_reads_the_same_in_any_chunking);
  g_test_add_func("/profile-readers/probes/claim-their-formats-only",
                  test_probes_claim_their_formats_only);
  return g_test_run();
}
