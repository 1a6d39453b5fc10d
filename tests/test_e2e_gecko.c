/*
 * End-to-end: the CLI on Gecko / Firefox Profiler inputs.
 *
 * Expected values are worked out in the comments from the fixtures:
 * times are ms, stored as ns truncated ((int64)(ms * 1e6)); a frame label
 * "f (in lib)" is function f in mapping lib, any other label sits in the
 * placeholder mapping "gecko"; callsites are created in the order samples
 * first reach them, outermost first. Gecko is clockless: a file alone owns
 * trace time with its private clock, so values land unchanged.
 */
#include <glib.h>
#include <string.h>

#include "e2e_support.h"

/* Raw Gecko profile, tables in {schema, data} form.
 * frames: 0 "main", 1 "run (in libxul.so)", 2 "paint".
 * stacks: 0 main; 1 main>run; 2 main>run>paint; 3 main>paint.
 * samples: 1.5 ms stack 2, 2.25 ms stack 3, 3 ms no stack (skipped, as
 * trace_processor's Gecko importer skips a sample whose stack is null),
 * 4.0000005 ms stack 1 (4000000.5 ns, truncated). */
static const char raw_profile[] =
    "{\"meta\":{\"version\":12,\"categories\":[{\"name\":\"Idle\"},{\"name\":\"Other\"}]},\n"
    " \"threads\":[{\"name\":\"GeckoMain\",\"tid\":11,\"pid\":10,\n"
    "   \"stringTable\":[\"main\",\"run (in libxul.so)\",\"paint\"],\n"
    "   \"frameTable\":{\"schema\":{\"location\":0,\"line\":1},\"data\":[[0,null],[1,5],[2,null]]},\n"
    "   \"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[[null,0],[0,1],[1,2],[0,2]]},\n"
    "   \"samples\":{\"schema\":{\"stack\":0,\"time\":1},\n"
    "              \"data\":[[2,1.5],[3,2.25],[null,3.0],[1,4.0000005]]}}]}\n";

/* Sample 0 (stack 2) creates callsites main (0), run (1), paint (2);
 * sample 1 (stack 3) adds paint under main (3); sample 3 reuses run. */
static const char raw_samples_csv[] =
    "\"ts\",\"callsite_id\",\"tid\",\"name\"\n"
    "1500000,2,11,\"GeckoMain\"\n"
    "2250000,3,11,\"GeckoMain\"\n"
    "4000000,1,11,\"GeckoMain\"\n";

static const char raw_callsites_csv[] =
    "\"id\",\"depth\",\"parent_id\",\"frame\",\"mapping\"\n"
    "0,0,\"[NULL]\",\"main\",\"gecko\"\n"
    "1,1,0,\"run\",\"libxul.so\"\n"
    "2,2,1,\"paint\",\"gecko\"\n"
    "3,1,0,\"paint\",\"gecko\"\n";

#define SAMPLES_SQL                                                          \
  "SELECT s.ts, s.callsite_id, t.tid, t.name FROM cpu_profile_stack_sample s " \
  "JOIN thread t USING (utid) ORDER BY s.id"
#define CALLSITES_SQL                                                        \
  "SELECT c.id, c.depth, c.parent_id, f.name AS frame, m.name AS mapping "   \
  "FROM stack_profile_callsite c JOIN stack_profile_frame f ON c.frame_id = f.id " \
  "JOIN stack_profile_mapping m ON f.mapping = m.id ORDER BY c.id"

/* Processed profile: strings in "shared", columnar tables, markers.
 * strings: 0 Main, 1 load, 2 parse, 3 Paint, 4 Click. funcs: 0 load,
 * 1 parse; frames = funcs; stacks: 0 load, 1 load>parse.
 * samples: 10 ms stack 1 (callsites load 0, parse 1), 11 ms stack 0.
 * markers: Paint instant at 10.5 (Other); Click interval 12..12.25 (DOM,
 * data args); Paint start 13 and end 14.5 (phases 2/3 -> one slice of
 * 1.5 ms, the end's args merged). Thread "Idle" has no sample or marker
 * and so gets no thread row. */
static const char processed_profile[] =
    "{\"meta\":{\"version\":24,\"categories\":[{\"name\":\"Other\",\"color\":\"grey\"},"
    "{\"name\":\"DOM\",\"color\":\"blue\"}]},\n"
    " \"shared\":{\"stringArray\":[\"Main\",\"load\",\"parse\",\"Paint\",\"Click\"]},\n"
    " \"threads\":[{\"name\":\"GeckoMain\",\"tid\":\"21\",\"pid\":\"20\",\n"
    "   \"frameTable\":{\"length\":2,\"func\":[0,1]},\n"
    "   \"funcTable\":{\"length\":2,\"name\":[1,2]},\n"
    "   \"stackTable\":{\"length\":2,\"prefix\":[null,0],\"frame\":[0,1]},\n"
    "   \"samples\":{\"length\":2,\"stack\":[1,0],\"time\":[10.0,11.0]},\n"
    "   \"markers\":{\"length\":4,\"name\":[3,4,3,3],\"startTime\":[10.5,12.0,13.0,null],\n"
    "     \"endTime\":[null,12.25,null,14.5],\"phase\":[0,1,2,3],\"category\":[0,1,0,0],\n"
    "     \"data\":[null,{\"type\":\"DOMEvent\",\"latency\":2.5,\"target\":{\"id\":7}},null,"
    "{\"cause\":\"end\"}]}},\n"
    "  {\"name\":\"Idle\",\"tid\":22,\"pid\":20,\"samples\":{\"length\":0,\"stack\":[],\"time\":[]}}]}\n";

static const char processed_samples_csv[] =
    "\"ts\",\"callsite_id\",\"tid\",\"name\"\n"
    "10000000,1,21,\"GeckoMain\"\n"
    "11000000,0,21,\"GeckoMain\"\n";

static const char processed_slices_csv[] =
    "\"ts\",\"dur\",\"depth\",\"name\",\"category\",\"type\",\"track\",\"tid\"\n"
    "10500000,0,0,\"Paint\",\"Other\",\"firefox_marker\",\"Paint\",21\n"
    "12000000,250000,0,\"Click\",\"DOM\",\"firefox_marker\",\"Click\",21\n"
    "13000000,1500000,0,\"Paint\",\"Other\",\"firefox_marker\",\"Paint\",21\n";

#define SLICES_SQL                                                           \
  "SELECT s.ts, s.dur, s.depth, s.name, s.category, t.type, t.name AS track, " \
  "th.tid FROM slice s JOIN __intrinsic_track t ON s.track_id = t.id "         \
  "JOIN thread th ON t.utid = th.utid ORDER BY s.ts"

static void test_raw_profile_samples_and_callsites(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(dir, "raw.json", raw_profile, 0);
  const char *inputs[] = {"raw.json", NULL};
  g_autofree char *samples = e2e_query_in(dir, inputs, SAMPLES_SQL);
  e2e_assert_text(samples, raw_samples_csv);
  g_autofree char *callsites = e2e_query_in(dir, inputs, CALLSITES_SQL);
  e2e_assert_text(callsites, raw_callsites_csv);
  g_autofree char *type = e2e_query_in(dir, inputs, "SELECT trace_type FROM trace_file");
  e2e_assert_text(type, "\"trace_type\"\n\"gecko\"\n");
  e2e_cleanup(dir);
}

static void test_processed_profile_samples_markers_and_args(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *f = e2e_write_file(dir, "p.json", processed_profile, 0);
  const char *inputs[] = {"p.json", NULL};
  g_autofree char *samples = e2e_query_in(dir, inputs, SAMPLES_SQL);
  e2e_assert_text(samples, processed_samples_csv);
  g_autofree char *slices = e2e_query_in(dir, inputs, SLICES_SQL);
  e2e_assert_text(slices, processed_slices_csv);
  g_autofree char *args = e2e_query_in(
      dir, inputs,
      "SELECT s.name, a.key, a.display_value FROM slice s JOIN args a "
      "USING (arg_set_id) ORDER BY s.ts, a.id");
  e2e_assert_text(args, "\"name\",\"key\",\"display_value\"\n"
                        "\"Click\",\"data.type\",\"DOMEvent\"\n"
                        "\"Click\",\"data.latency\",\"2.5\"\n"
                        "\"Click\",\"data.target.id\",\"7\"\n"
                        "\"Paint\",\"data.cause\",\"end\"\n");
  /* Only the thread with samples and markers exists (besides the
   * machine's placeholder tid 0), with its process's main thread (tid ==
   * pid), which trace_processor creates with the process (reference
   * docs/sql-surface.md §10); tid and pid were numeric strings. */
  g_autofree char *threads = e2e_query_in(
      dir, inputs,
      "SELECT t.tid, t.name, p.pid FROM thread t JOIN process p USING (upid) "
      "WHERE t.tid != 0");
  e2e_assert_text(threads,
                  "\"tid\",\"name\",\"pid\"\n20,\"[NULL]\",20\n21,\"GeckoMain\",20\n");
  e2e_cleanup(dir);
}

static void test_devtools_wrapper_is_read_as_gecko(void) {
  g_autofree char *dir = e2e_tmpdir();
  /* "profile" with its first key inside the probe's window. */
  g_autofree char *wrapped = g_strdup_printf(
      "{\"label\":\"rec\",\"duration\":1,\"markers\":[],\"profile\":%s,\"version\":1}",
      raw_profile);
  g_autofree char *f = e2e_write_file(dir, "devtools.json", wrapped, 0);
  const char *inputs[] = {"devtools.json", NULL};
  g_autofree char *samples = e2e_query_in(dir, inputs, SAMPLES_SQL);
  e2e_assert_text(samples, raw_samples_csv);
  /* Beyond the window the wrapper is not decidable: it stays Chrome JSON
   * (as in trace_processor) and yields nothing. */
  GString *far = g_string_new("{\"label\":\"rec\",\"padding\":\"");
  for (int i = 0; i < 600; i++)
    g_string_append_c(far, 'x');
  g_string_append_printf(far, "\",\"profile\":%s}", raw_profile);
  g_autofree char *f2 = e2e_write_file(dir, "far.json", far->str, 0);
  g_string_free(far, TRUE);
  const char *far_inputs[] = {"far.json", NULL};
  g_autofree char *type = e2e_query_in(
      dir, far_inputs,
      "SELECT trace_type, (SELECT count(*) FROM cpu_profile_stack_sample) FROM trace_file");
  e2e_assert_text(type, "\"trace_type\",\"(SELECT count(*) FROM cpu_profile_stack_sample)\"\n"
                        "\"json\",0\n");
  e2e_cleanup(dir);
}

static void test_gzipped_processed_profile(void) {
  g_autofree char *dir = e2e_tmpdir();
  const e2e_member members[] = {{"p.json", processed_profile, 0}};
  g_autofree char *gz = e2e_write_archive(dir, "p.json.gz", E2E_GZIP, members, 1);
  const char *inputs[] = {"p.json.gz", NULL};
  g_autofree char *samples = e2e_query_in(dir, inputs, SAMPLES_SQL);
  e2e_assert_text(samples, processed_samples_csv);
  g_autofree char *types = e2e_query_in(
      dir, inputs, "SELECT trace_type FROM trace_file ORDER BY id");
  e2e_assert_text(types, "\"trace_type\"\n\"gzip\"\n\"gecko\"\n");
  e2e_cleanup(dir);
}

/* Both formats are clockless: in a zip, the first member in name order
 * (a.json) owns trace time and the other file's private clock is tied to
 * it at zero offset, so a JSON slice at 1500 µs and a Gecko sample at
 * 1.5 ms land on the same trace time. */
static void test_clockless_gecko_next_to_json_is_aligned(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *json =
      "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1500,\"dur\":10,\"name\":\"x\"}]";
  const e2e_member members[] = {{"b.gecko.json", raw_profile, 0},
                                {"a.json", json, 0}};
  g_autofree char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, 2);
  const char *inputs[] = {"run.zip", NULL};
  g_autofree char *out = e2e_query_in(
      dir, inputs,
      "SELECT (SELECT ts FROM slice) AS slice_ts, "
      "(SELECT min(ts) FROM cpu_profile_stack_sample) AS sample_ts");
  e2e_assert_text(out, "\"slice_ts\",\"sample_ts\"\n1500000,1500000\n");
  e2e_cleanup(dir);
}

static void test_broken_stacks_are_counted(void) {
  g_autofree char *dir = e2e_tmpdir();
  /* Stack 0 is its own prefix (a cycle): its sample is kept without a
   * callsite; sample 1 names stack 9 of 1: skipped, as upstream skips a
   * stack index out of range. Both are counted. */
  const char *bad =
      "{\"meta\":{},\"threads\":[{\"name\":\"T\",\"tid\":2,\"pid\":1,"
      "\"stringArray\":[\"f\"],\"frameTable\":{\"func\":[0]},\"funcTable\":{\"name\":[0]},"
      "\"stackTable\":{\"prefix\":[0],\"frame\":[0]},"
      "\"samples\":{\"stack\":[0,9],\"time\":[1,2]}}]}";
  g_autofree char *f = e2e_write_file(dir, "bad.json", bad, 0);
  const char *inputs[] = {"bad.json", NULL};
  g_autofree char *out = e2e_query_in(
      dir, inputs,
      "SELECT ts, callsite_id FROM cpu_profile_stack_sample ORDER BY id");
  e2e_assert_text(out, "\"ts\",\"callsite_id\"\n1000000,\"[NULL]\"\n");
  g_autofree char *stats = e2e_query_in(
      dir, inputs, "SELECT name, value FROM stats WHERE name LIKE 'gecko%' AND value > 0");
  e2e_assert_text(stats, "\"name\",\"value\"\n\"gecko_invalid_stack\",2\n");
  e2e_cleanup(dir);
}

static void test_damaged_inputs_fail_with_a_clear_error(void) {
  static const struct {
    const char *name;
    const char *content;
    size_t len;
    const char *message;
  } cases[] = {
      {"cut-string.json", "{\"meta\":{\"version\":24},\"threads\":[{\"name\":\"Gec", 0,
       "Syntactic error while parsing Gecko trace"},
      {"cut-key.json", "{\"meta\":{\"version\":24},\"threads\":[{\"na", 0,
       "Syntactic error while parsing Gecko trace"},
      {"nesting.json", "{\"meta\":{\"version\":1],\"threads\":[]}", 0,
       "Syntactic error while parsing Gecko trace"},
      {"garbage.json", "{\"meta\":\x01\xff\xfe\x00\x13garbage", 20,
       "Syntactic error while parsing Gecko trace"},
      {"no-threads.json", "{\"meta\":{\"version\":1}}", 0, "no \"threads\" array"},
  };
  g_autofree char *dir = e2e_tmpdir();
  /* 2000 nested arrays: refused at the reader's depth limit. */
  GString *deep = g_string_new("{\"meta\":");
  for (int i = 0; i < 2000; i++)
    g_string_append_c(deep, '[');
  g_autofree char *deep_file = e2e_write_file(dir, "deep.json", deep->str, 0);
  g_string_free(deep, TRUE);
  e2e_assert_query_fails(dir, "deep.json", "nested deeper than 1024 levels");
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *f =
        e2e_write_file(dir, cases[i].name, cases[i].content, cases[i].len);
    e2e_assert_query_fails(dir, cases[i].name, cases[i].message);
  }
  e2e_cleanup(dir);
}

/* The corpus files of tests/data/real/gecko. Expected counts were computed
 * with python3's json module from each file (gzip opened with gzip.open,
 * the DevTools export's "profile" unwrapped): samples = entries of
 * samples.stack of every thread that are not null (samply writes
 * null for a sample without a stack: 11 in samply-ls-profile, which
 * trace_processor skips); threads = threads with a sample or a
 * marker, plus their process's main thread (tid == pid) when none of them
 * is it (trace_processor creates it with the process, docs/sql-surface.md §10);
 * callsites = distinct root-to-frame paths of the sampled stacks,
 * frames = distinct (function, library) pairs on those paths, with labels
 * split at " (in lib)"; slices = markers of phase 0, 1 and 2 (argument-
 * values has 2, 6 and 2, plus 3 phase-3 ends of which "IPC Accumulator"
 * has no start, hence one misplaced_end_event). */
static void test_corpus_files_import(void) {
  static const struct {
    const char *file;
    const char *expected;
  } cases[] = {
      {"ffprofiler-argument-values.json", "32,2,1,15,15,10,1"},
      {"ffprofiler-unsymbolicated.json.gz", "42,7,1,34,15,0,0"},
      {"samply-ls-profile.json", "5119,1,1,1115,608,0,0"},
      {"speedscope-firefox63-simple-devtools.json", "39,2,1,154,66,0,0"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    e2e_assert_real_file_row(
        "gecko", cases[i].file,
        "SELECT (SELECT count(*) FROM cpu_profile_stack_sample), "
        "(SELECT count(*) FROM thread WHERE tid != 0), "
        "(SELECT count(*) FROM process WHERE pid != 0), "
        "(SELECT count(*) FROM stack_profile_callsite), "
        "(SELECT count(*) FROM stack_profile_frame), "
        "(SELECT count(*) FROM slice), "
        "(SELECT ifnull(sum(value), 0) FROM stats WHERE name = 'misplaced_end_event')",
        cases[i].expected);
}

/* thread.is_main_thread on the corpus files (E2E_MAIN_THREAD_SQL): from
 * the counts above (threads with tid != 0, one process each) plus the
 * placeholder pid 0 / tid 0: every thread has its process (no NULL), the
 * main threads are the processes' (tid == pid: 1 + the placeholder), the
 * others the rest. samply's one sampled thread is its process's main
 * thread, so it has no other. */
static void test_corpus_files_main_threads(void) {
  static const struct {
    const char *file;
    const char *expected;
  } cases[] = {
      {"ffprofiler-argument-values.json", "2,1,0,0"},
      {"ffprofiler-unsymbolicated.json.gz", "2,6,0,0"},
      {"samply-ls-profile.json", "2,0,0,0"},
      {"speedscope-firefox63-simple-devtools.json", "2,1,0,0"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    e2e_assert_real_file_row("gecko", cases[i].file, E2E_MAIN_THREAD_SQL, cases[i].expected);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/gecko/raw-profile-samples-and-callsites",
                  test_raw_profile_samples_and_callsites);
  g_test_add_func("/e2e/gecko/processed-profile-samples-markers-and-args",
                  test_processed_profile_samples_markers_and_args);
  g_test_add_func("/e2e/gecko/devtools-wrapper-is-read-as-gecko",
                  test_devtools_wrapper_is_read_as_gecko);
  g_test_add_func("/e2e/gecko/gzipped-processed-profile", test_gzipped_processed_profile);
  g_test_add_func("/e2e/gecko/clockless-gecko-next-to-json-is-aligned",
                  test_clockless_gecko_next_to_json_is_aligned);
  g_test_add_func("/e2e/gecko/broken-stacks-are-counted",
                  test_broken_stacks_are_counted);
  g_test_add_func("/e2e/gecko/damaged-inputs-fail-with-a-clear-error",
                  test_damaged_inputs_fail_with_a_clear_error);
  g_test_add_func("/e2e/gecko/corpus-files-import", test_corpus_files_import);
  g_test_add_func("/e2e/gecko/corpus-files-main-threads-are-tid-equal-pid",
                  test_corpus_files_main_threads);
  return g_test_run();
}
