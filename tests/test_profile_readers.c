/*
 * The Gecko and Instruments readers driven through dlopen with a fake host
 * that logs every call as text: the same file fed in chunks of 1, 7, 4093
 * bytes or whole must produce the same log (the readers keep their own
 * partial-token state across chunks), and the probes claim exactly their
 * formats. The plugins are found through $TM_GECKO_PLUGIN and
 * $TM_INSTRUMENTS_PLUGIN; the corpus through $TRACEMERGE_REAL_DATA, and the
 * copyleft jmh exports through $TRACEMERGE_SHARED_DATA: the tests under
 * /profile-readers/jmh/ need them, and meson runs them alone (-p) as the
 * test profile_readers_jmh, which exits 77 (SKIP) when they are absent,
 * and skips them (--skip-prefix) in the test profile_readers.
 */
#include <dlfcn.h>
#include <glib.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "corpus.h"

struct tm_host {
  GString *log;
  GHashTable *strings; /* text -> id */
  uint32_t next_string;
  uint32_t next_ref;
  size_t samples;
  bool error;
};

static tm_str_id fake_intern(tm_host *h, const char *s, size_t len) {
  char *key = g_strndup(s, len);
  gpointer found = g_hash_table_lookup(h->strings, key);
  if (found) {
    g_free(key);
    return GPOINTER_TO_UINT(found);
  }
  tm_str_id id = ++h->next_string;
  g_hash_table_insert(h->strings, key, GUINT_TO_POINTER(id));
  return id;
}

static tm_clock_ref fake_clock_private(tm_host *h) {
  (void)h;
  return 1;
}

static tm_process_ref fake_process(tm_host *h, tm_machine_ref m, int64_t pid) {
  g_string_append_printf(h->log, "process %u %" G_GINT64_FORMAT "\n", m, pid);
  return ++h->next_ref;
}

static tm_thread_ref fake_thread(tm_host *h, tm_machine_ref m, int64_t pid,
                                 int64_t tid) {
  g_string_append_printf(h->log, "thread %u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT "\n",
                         m, pid, tid);
  return ++h->next_ref;
}

static void fake_process_set_name(tm_host *h, tm_process_ref p, tm_str_id n) {
  g_string_append_printf(h->log, "process_name %u %u\n", p, n);
}

static void fake_thread_set_name(tm_host *h, tm_thread_ref t, tm_str_id n) {
  g_string_append_printf(h->log, "thread_name %u %u\n", t, n);
}

static tm_track_ref fake_track_intern(tm_host *h, const tm_track_desc *d) {
  g_string_append_printf(h->log, "track %s %u %u %u\n", d->type, d->name,
                         d->thread, d->scope);
  return ++h->next_ref;
}

static void fake_args_add(tm_host *h, tm_str_id key, tm_arg_value v) {
  g_string_append_printf(h->log, "arg %u %d %" G_GINT64_FORMAT "\n", key, v.type,
                         v.u.int_value);
}

static tm_args_ref fake_args_commit(tm_host *h) { return ++h->next_ref; }

static void log_slice(tm_host *h, const char *what, const tm_slice_fields *f,
                      int64_t dur) {
  g_string_append_printf(h->log, "%s %u %" G_GINT64_FORMAT " %u %u %u %" G_GINT64_FORMAT "\n",
                         what, f->track, f->ts, f->name, f->category, f->args, dur);
}

static void fake_slice_begin(tm_host *h, const tm_slice_fields *f) {
  log_slice(h, "begin", f, 0);
}
static void fake_slice_end(tm_host *h, const tm_slice_fields *f) {
  log_slice(h, "end", f, 0);
}
static void fake_slice_complete(tm_host *h, const tm_slice_fields *f, int64_t dur) {
  log_slice(h, "complete", f, dur);
}

static void fake_stat_add(tm_host *h, const char *name, int64_t delta) {
  g_string_append_printf(h->log, "stat %s %" G_GINT64_FORMAT "\n", name, delta);
}

static void fake_report_error(tm_host *h, int64_t offset, const char *message) {
  g_string_append_printf(h->log, "error %" G_GINT64_FORMAT " %s\n", offset, message);
  h->error = true;
}

static tm_mapping_ref fake_mapping(tm_host *h, tm_str_id name, tm_str_id build_id,
                                   uint64_t start, uint64_t end,
                                   uint64_t exact_offset, uint64_t load_bias) {
  g_string_append_printf(h->log, "mapping %u %u %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
                         " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n",
                         name, build_id, start, end, exact_offset, load_bias);
  return ++h->next_ref;
}

static tm_frame_ref fake_frame(tm_host *h, tm_str_id name, tm_mapping_ref m,
                               uint64_t rel_pc) {
  g_string_append_printf(h->log, "frame %u %u %" G_GUINT64_FORMAT "\n", name, m, rel_pc);
  return ++h->next_ref;
}

static tm_callsite_ref fake_callsite(tm_host *h, tm_callsite_ref parent,
                                     tm_frame_ref frame) {
  g_string_append_printf(h->log, "callsite %u %u\n", parent, frame);
  return ++h->next_ref;
}

static void fake_sample(tm_host *h, tm_clock_ref clock, int64_t ts,
                        tm_thread_ref thread, tm_callsite_ref callsite,
                        const char *source, int32_t cpu) {
  g_string_append_printf(h->log, "sample %u %" G_GINT64_FORMAT " %u %u %s %d\n",
                         clock, ts, thread, callsite, source, cpu);
  h->samples++;
}

static const tm_host_services services = {
    .struct_size = sizeof(tm_host_services),
    .abi_version = TM_READER_ABI_VERSION,
    .intern_string = fake_intern,
    .clock_private = fake_clock_private,
    .process = fake_process,
    .thread = fake_thread,
    .process_set_name = fake_process_set_name,
    .thread_set_name = fake_thread_set_name,
    .track_intern = fake_track_intern,
    .args_add = fake_args_add,
    .args_commit = fake_args_commit,
    .slice_begin = fake_slice_begin,
    .slice_end = fake_slice_end,
    .slice_complete = fake_slice_complete,
    .stat_add = fake_stat_add,
    .report_error = fake_report_error,
    .mapping = fake_mapping,
    .frame = fake_frame,
    .callsite = fake_callsite,
    .sample = fake_sample,
};

static const tm_reader_descriptor *load_reader(const char *env) {
  const char *path = g_getenv(env);
  if (!path)
    g_error("%s must name the built plugin", env);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    g_error("dlopen %s: %s", path, dlerror());
  tm_reader_entry_fn entry = (tm_reader_entry_fn)dlsym(handle, TM_READER_ENTRY_SYMBOL);
  g_assert_nonnull(entry);
  return entry(); /* the handle stays open for the process' life */
}

/* Feeds `data` in chunks of `chunk` bytes (0: whole); returns the log. */
static char *read_in_chunks(const tm_reader_descriptor *reader, const char *data,
                            size_t len, size_t chunk, size_t *samples) {
  tm_host host = {
      .log = g_string_new(NULL),
      .strings = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
  };
  void *state = reader->open(&services, &host, NULL, 0);
  g_assert_nonnull(state);
  tm_status status = TM_OK;
  for (size_t off = 0; off < len && status == TM_OK;) {
    size_t n = chunk ? MIN(chunk, len - off) : len;
    status = reader->feed(state, (const uint8_t *)data + off, n);
    off += n;
  }
  if (status == TM_OK)
    status = reader->finish(state);
  reader->close(state);
  g_assert_cmpint(status, ==, host.error ? TM_ERROR : TM_OK);
  *samples = host.samples;
  g_hash_table_destroy(host.strings);
  return g_string_free(host.log, FALSE);
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
  g_assert_null(strstr(whole, "error "));
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
