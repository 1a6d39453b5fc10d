/*
 * The reader ABI as the library serves it: a reader built against the
 * version-1 header still imports (every service whose layout changed in
 * version 2 is adapted), and what a version-2 descriptor declares takes
 * effect: its config bytes reach open() unchanged, its stats carry their
 * severity, source and description, its samples go to its table, and its
 * processing priority orders it among its siblings.
 *
 * The readers are tests/plugins/v1/v1_reader.c and
 * tests/plugins/abi/abi_reader.c, loaded from the build directory named by
 * $TM_ABI_TEST_READERS; the inputs are written by each test.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <tracemerge/tracemerge.h>

#include "session_query.h"

/* An import log row's args as "key=value ..." in key order (l: the row). */
#define LOG_ARGS_SQL                                                        \
  "(SELECT group_concat(key || '=' || display_value, ' ') "                \
  "FROM (SELECT a.key, a.display_value FROM args a "                       \
  "WHERE a.arg_set_id = l.arg_set_id ORDER BY a.key))"
/* The args of every reader_call_refused log row, in the order logged. */
#define REFUSED_LOGS_SQL                                                    \
  "SELECT " LOG_ARGS_SQL " AS args FROM _trace_import_logs l "             \
  "WHERE l.name = 'reader_call_refused' ORDER BY l.id"

typedef struct fixture {
  char *dir; /* temporary directory of the inputs */
} fixture;

static void fixture_set_up(fixture *f, gconstpointer data) {
  (void)data;
  GError *error = NULL;
  f->dir = g_dir_make_tmp("tm-reader-abi-XXXXXX", &error);
  g_assert_no_error(error);
}

static void fixture_tear_down(fixture *f, gconstpointer data) {
  (void)data;
  GDir *dir = g_dir_open(f->dir, 0, NULL);
  for (const char *name; dir && (name = g_dir_read_name(dir)) != NULL;) {
    g_autofree char *path = g_build_filename(f->dir, name, NULL);
    g_assert_cmpint(g_remove(path), ==, 0);
  }
  if (dir)
    g_dir_close(dir);
  g_assert_cmpint(g_rmdir(f->dir), ==, 0);
  g_free(f->dir);
}

static char *write_input(fixture *f, const char *name, const char *text) {
  char *path = g_build_filename(f->dir, name, NULL);
  GError *error = NULL;
  g_file_set_contents(path, text, -1, &error);
  g_assert_no_error(error);
  return path;
}

/* A session that loads the test readers, with `configs` (may be NULL). */
static tm_session *session_new(const tm_reader_config *configs,
                               size_t n_configs) {
  const char *readers = g_getenv("TM_ABI_TEST_READERS");
  g_assert_nonnull(readers);
  const char *dirs[] = {readers};
  tm_session_options options = {
      .plugin_dirs = dirs,
      .n_plugin_dirs = 1,
      .reader_configs = configs,
      .n_reader_configs = n_configs,
  };
  return tm_session_new(&options);
}

static void import_ok(tm_session *session, const char *const *paths,
                      size_t n) {
  GError *error = NULL;
  g_assert_true(tm_session_import(session, paths, n, &error));
  g_assert_no_error(error);
}

/* A session that imported one file, trace.abi, holding `text`. */
static tm_session *session_of_abi_text(fixture *f, const char *text) {
  g_autofree char *path = write_input(f, "trace.abi", text);
  tm_session *session = session_new(NULL, 0);
  const char *paths[] = {path};
  import_ok(session, paths, 1);
  return session;
}

static const tm_reader_descriptor *find_reader(tm_session *session,
                                               const char *name) {
  for (size_t i = 0; i < tm_session_reader_count(session); i++) {
    const tm_reader_descriptor *d = tm_session_borrow_reader(session, i, NULL);
    if (strcmp(d->name, name) == 0)
      return d;
  }
  return NULL;
}

/* --- version 1 ------------------------------------------------------------ */

/* tm_arg_value crosses the boundary by value and so has no struct_size;
 * its layout is version 1's (tests/plugins/v1/tracemerge/plugin.h: a
 * 4-byte enum, then a union of 8-byte members, aligned to 8). */
G_STATIC_ASSERT(sizeof(tm_arg_value) == 16);
G_STATIC_ASSERT(offsetof(tm_arg_value, u) == 8);

static const char v1_input[] = "#tm-v1\n"
                               "slice 1000 500 alpha\n"
                               "begin 2000 outer\n"
                               "end 3000\n"
                               "counter 1500 2.5\n"
                               "cpu 1600 3 1200\n"
                               "sample 1700 hot\n"
                               "args 4000 with_args -7 0.25 blue\n"
                               "nonsense here\n";

static void test_a_version_1_reader_still_imports(fixture *f,
                                                  gconstpointer data) {
  (void)data;
  g_autofree char *path = write_input(f, "trace.v1", v1_input);
  tm_session *session = session_new(NULL, 0);
  const tm_reader_descriptor *v1 = find_reader(session, "test-v1");
  g_assert_nonnull(v1);
  g_assert_cmpuint(v1->abi_version, ==, 1);
  const char *paths[] = {path};
  import_ok(session, paths, 1);

  /* slice_complete and slice_begin/end with version 1's tm_slice_fields:
   * the clockless file's private clock is trace time, so raw ns stay;
   * "begin 2000" gave thread time 2000 / 2. */
  g_autofree char *slices = session_query_csv(
      session, "SELECT name, ts, dur, thread_ts FROM slice ORDER BY ts");
  g_assert_cmpstr(slices, ==,
                  "\"name\",\"ts\",\"dur\",\"thread_ts\"\n"
                  "\"alpha\",1000,500,\"[NULL]\"\n"
                  "\"outer\",2000,1000,1000\n"
                  "\"with_args\",4000,1,\"[NULL]\"\n");
  /* tm_arg_value, passed by value, has no struct_size (plugin.h,
   * "Versioning"): version 1's values arrive as the "args" line wrote them
   * (-7, 0.25, "blue", true), on the slice and on the thread. */
  g_autofree char *slice_args = session_query_csv(
      session, "SELECT a.key, a.value_type, a.display_value FROM slice s "
               "JOIN args a ON a.arg_set_id = s.arg_set_id "
               "WHERE s.name = 'with_args' ORDER BY a.key");
  g_assert_cmpstr(slice_args, ==,
                  "\"key\",\"value_type\",\"display_value\"\n"
                  "\"v1.flag\",\"bool\",\"true\"\n"
                  "\"v1.int\",\"int\",\"-7\"\n"
                  "\"v1.real\",\"real\",\"0.25\"\n"
                  "\"v1.word\",\"string\",\"blue\"\n");
  g_autofree char *thread_args = session_query_csv(
      session, "SELECT a.key, a.display_value FROM thread t "
               "JOIN args a ON a.arg_set_id = t.arg_set_id WHERE t.tid = 1");
  g_assert_cmpstr(thread_args, ==,
                  "\"key\",\"display_value\"\n"
                  "\"v1.word\",\"blue\"\n");
  /* track_intern and track_intern_cpu with version 1's tm_track_desc. */
  g_autofree char *counters = session_query_csv(
      session, "SELECT t.type, t.name, c.ts, c.value FROM counter c "
               "JOIN track t ON t.id = c.track_id ORDER BY c.ts");
  g_assert_cmpstr(counters, ==,
                  "\"type\",\"name\",\"ts\",\"value\"\n"
                  "\"v1_counter\",\"v1 counter\",1500,2.500000\n"
                  "\"cpu_frequency\",\"cpufreq\",1600,1200.000000\n");
  g_autofree char *cpus = session_query_csv(
      session, "SELECT c.cpu FROM cpu_counter_track t JOIN cpu c ON c.id = t.cpu");
  g_assert_cmpstr(cpus, ==, "\"cpu\"\n3\n");
  /* sample("instruments") named its table by source in version 1. */
  g_autofree char *samples = session_query_csv(
      session, "SELECT (SELECT count(*) FROM instruments_sample) AS instruments, "
               "(SELECT count(*) FROM cpu_profile_stack_sample) AS cpu_profile");
  g_assert_cmpstr(samples, ==, "\"instruments\",\"cpu_profile\"\n1,0\n");
  /* import_log with version 1's tm_import_log_arg: the line's offset is
   * the length of every line before it. */
  size_t offset = strstr(v1_input, "nonsense") - v1_input;
  g_autofree char *expected_log = g_strdup_printf(
      "\"name\",\"byte_offset\",\"key\",\"display_value\"\n"
      "\"v1_bad_line\",%zu,\"line\",\"nonsense here\"\n",
      offset);
  g_autofree char *logs = session_query_csv(
      session, "SELECT l.name, l.byte_offset, a.key, a.display_value "
               "FROM _trace_import_logs l JOIN args a "
               "ON a.arg_set_id = l.arg_set_id");
  g_assert_cmpstr(logs, ==, expected_log);
  tm_session_free(session);
}

/* --- version 2 declarations --------------------------------------------- */

static char *config_metadata(tm_session *session) {
  return session_query_csv(session, "SELECT str_value FROM metadata "
                        "WHERE name = 'abi_test_config'");
}

/* Every byte value that text would mangle: NUL, newline, quote, 0xff. */
static void test_config_bytes_reach_open_unchanged(fixture *f,
                                                   gconstpointer data) {
  (void)data;
  static const uint8_t config[] = {0x00, '\n', '"', 0xff, 'a'};
  tm_reader_config configs[] = {{"test-abi", config, sizeof config}};
  g_autofree char *path = write_input(f, "trace.abi", "#tm-abi\n");
  tm_session *session = session_new(configs, 1);
  const char *paths[] = {path};
  import_ok(session, paths, 1);
  /* abi_reader.c writes the bytes back in hex. */
  g_autofree char *metadata = config_metadata(session);
  g_assert_cmpstr(metadata, ==, "\"str_value\"\n\"000a22ff61\"\n");
  tm_session_free(session);
}

static void test_without_a_config_open_gets_none(fixture *f,
                                                 gconstpointer data) {
  (void)data;
  tm_session *session = session_of_abi_text(f, "#tm-abi\n");
  g_autofree char *metadata = config_metadata(session);
  g_assert_cmpstr(metadata, ==, "\"str_value\"\n");
  tm_session_free(session);
}

static void test_a_config_for_an_unknown_reader_fails_the_import(
    fixture *f, gconstpointer data) {
  (void)data;
  tm_reader_config configs[] = {{"no-such-reader", "x", 1}};
  g_autofree char *path = write_input(f, "trace.abi", "#tm-abi\n");
  tm_session *session = session_new(configs, 1);
  const char *paths[] = {path};
  GError *error = NULL;
  g_assert_false(tm_session_import(session, paths, 1, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG);
  g_assert_cmpstr(error->message, ==,
                  "a configuration is given for reader 'no-such-reader', but "
                  "no reader of that name is loaded");
  g_error_free(error);
  tm_session_free(session);
}

/* abi_reader.c declares abi_test_noted (notice, analysis); two "noted"
 * lines count 2 in the file's row, and the other file (read by the
 * version-1 reader) has its zero row too. */
static void test_declared_stats_carry_their_catalog_entry(fixture *f,
                                                          gconstpointer data) {
  (void)data;
  g_autofree char *abi = write_input(f, "a.abi", "#tm-abi\nnoted\nnoted\n");
  g_autofree char *v1 = write_input(f, "b.v1", "#tm-v1\n");
  tm_session *session = session_new(NULL, 0);
  const char *paths[] = {abi, v1};
  import_ok(session, paths, 2);
  g_autofree char *stats = session_query_csv(
      session, "SELECT f.name, s.severity, s.source, s.description, s.value "
               "FROM stats s JOIN trace_file f ON f.id = s.trace_id "
               "WHERE s.name = 'abi_test_noted' ORDER BY f.name");
  g_autofree char *expected = g_strdup_printf(
      "\"name\",\"severity\",\"source\",\"description\",\"value\"\n"
      "\"%s\",\"notice\",\"analysis\",\"A line said noted.\",2\n"
      "\"%s\",\"notice\",\"analysis\",\"A line said noted.\",0\n",
      abi, v1);
  g_assert_cmpstr(stats, ==, expected);
  tm_session_free(session);
}

/* Import-log args cross the boundary as an array: the host steps through
 * it by the reader's struct_size, so a later reader's wider args (abi_reader
 * "widelog": 8 bytes more each) keep their keys and values, and args too
 * short to hold a key ("shortlog") are left out while the entry is kept
 * and counted. */
static void test_import_log_args_are_read_at_the_readers_stride(fixture *f,
                                                                 gconstpointer data) {
  (void)data;
  tm_session *session = session_of_abi_text(f, "#tm-abi\nwidelog 5\nshortlog 9\n");
  g_autofree char *logs = session_query_csv(
      session, "SELECT l.byte_offset, " LOG_ARGS_SQL " AS args "
               "FROM _trace_import_logs l WHERE l.name = 'abi_test_noted' "
               "ORDER BY l.byte_offset");
  g_assert_cmpstr(logs, ==,
                  "\"byte_offset\",\"args\"\n"
                  "5,\"first=one second=2\"\n"
                  "9,\"[NULL]\"\n");
  g_autofree char *count = session_query_csv(
      session, "SELECT value FROM stats WHERE name = 'abi_test_noted'");
  g_assert_cmpstr(count, ==, "\"value\"\n2\n");
  tm_session_free(session);
}

/* The host reads a tm_track_desc only as far as its struct_size: the
 * same description of a set, whose merge fields say "nameless, merged by
 * key abi_key", makes an unnamed track when the reader's struct holds
 * those fields, and a track named after the set (the fields unread) when
 * the reader's struct ends at version 2's cpu. Expected from plugin.h's
 * track_async contract: a slot's tracks are named after the set unless
 * the description says nameless. */
static void test_track_descriptions_are_read_as_far_as_their_size(
    fixture *f, gconstpointer data) {
  (void)data;
  tm_session *session =
      session_of_abi_text(f, "#tm-abi\nasync full 10 wide\nasync v2 20 short\n");
  g_autofree char *tracks = session_query_csv(
      session, "SELECT s.name AS slice, t.name AS track FROM slice s "
               "JOIN track t ON t.id = s.track_id ORDER BY s.ts");
  g_assert_cmpstr(tracks, ==,
                  "\"slice\",\"track\"\n"
                  "\"wide\",\"[NULL]\"\n"
                  "\"short\",\"short\"\n");
  tm_session_free(session);
}

/* A tm_slice_fields shorter than any version's layout is refused: its
 * event is not imported, the events around it are; the refusal is
 * counted in reader_call_refused and named in the import log. */
static void test_slice_fields_shorter_than_any_version_are_refused(
    fixture *f, gconstpointer data) {
  (void)data;
  tm_session *session =
      session_of_abi_text(f, "#tm-abi\nslice 10 before\ntinyslice 20 tiny\nslice 30 after\n");
  g_autofree char *names = session_query_csv(
      session, "SELECT group_concat(name, ' ') AS names FROM (SELECT name FROM slice ORDER BY ts)");
  g_assert_cmpstr(names, ==, "\"names\"\n\"before after\"\n");
  /* The refusal is counted once (the one tinyslice line) and its import
   * log row names the call abi_reader.c made and why it was refused. */
  g_autofree char *count = session_query_csv(
      session, "SELECT severity, value FROM stats WHERE name = 'reader_call_refused'");
  g_assert_cmpstr(count, ==, "\"severity\",\"value\"\n\"error\",1\n");
  g_autofree char *logs = session_query_csv(
      session, "SELECT " LOG_ARGS_SQL " AS args "
               "FROM _trace_import_logs l WHERE l.name = 'reader_call_refused'");
  g_assert_cmpstr(logs, ==,
                  "\"args\"\n"
                  "\"call=slice_complete reason=tm_slice_fields shorter than version 2's\"\n");
  tm_session_free(session);
}

/* Every refusal of every service (abi_reader.c's "refuse <case>"): the
 * call it refuses, and the reason the host gives (host_services.c). */
static const struct refusal_case {
  const char *what, *call, *reason;
} refusal_cases[] = {
    {"claim-no-clock", "claim_trace_time", "no such clock"},
    {"snapshot-no-readings", "add_clock_snapshot", "no readings"},
    {"machine-info-no-column", "machine_set_info", "no column"},
    {"machine-info-unknown-column", "machine_set_info", "no such column of that type"},
    {"machine-info-wrong-type", "machine_set_info", "no such column of that type"},
    {"process-name", "process_set_name", "no such process"},
    {"thread-name", "thread_set_name", "no such thread"},
    {"process-arg", "process_add_arg", "no such process"},
    {"process-arg-no-key", "process_add_arg", "no key"},
    {"thread-arg", "thread_add_arg", "no such thread"},
    {"thread-arg-no-key", "thread_add_arg", "no key"},
    {"process-cmdline", "process_set_cmdline", "no such process"},
    {"process-parent", "process_set_parent", "no such process"},
    {"process-parent-no-row", "process_set_parent", "no such parent process"},
    {"process-parent-itself", "process_set_parent", "a process cannot be its own parent"},
    {"process-uid", "process_set_uid", "no such process"},
    {"track-thread", "track_thread", "no such thread"},
    {"track-intern-null", "track_intern", "no tm_track_desc"},
    {"track-intern-short", "track_intern", "tm_track_desc shorter than version 2's"},
    {"track-intern-no-type", "track_intern", "a tm_track_desc without a type"},
    {"track-async-short", "track_async", "tm_track_desc shorter than version 2's"},
    {"track-async-no-type", "track_async", "a tm_track_desc without a type"},
    {"parent-no-track", "track_set_parent", "no such track"},
    {"parent-no-parent", "track_set_parent", "no such parent track"},
    {"parent-itself", "track_set_parent", "a track cannot be its own parent"},
    {"parent-of-another-file", "track_set_parent", "a track of another file"},
    {"parent-in-another-file", "track_set_parent", "a parent track of another file"},
    {"source-arg", "track_add_source_arg", "no such track"},
    {"source-arg-no-key", "track_add_source_arg", "no key"},
    {"args-add-no-key", "args_add", "no key"},
    {"args-add-string-no-key", "args_add_string", "no key"},
    {"args-add-callsite-no-key", "args_add_callsite", "no key"},
    {"args-add-callsite-no-row", "args_add_callsite", "no such callsite"},
    {"slice-begin-null", "slice_begin", "no tm_slice_fields"},
    {"slice-end-no-track", "slice_end", "no such track"},
    {"slice-args", "slice_complete", "no such arg set"},
    {"slice-args-not-yet", "slice_begin", "no such arg set"},
    {"counter", "counter", "no such track"},
    {"counter-args", "counter", "no such arg set"},
    {"flow-args", "flow", "no such arg set"},
    {"ftrace-event-args", "ftrace_event", "no such arg set"},
    {"android-log-args", "android_log", "no such arg set"},
    {"frame-timeline-args", "frame_timeline_begin", "no such arg set"},
    {"flow", "flow", "no such track"},
    {"flow-direction", "flow", "no such flow direction"},
    {"flow-binding", "flow", "no such flow binding"},
    {"sched-switch", "sched_switch", "no such thread"},
    {"sched-waking", "sched_waking", "no such thread"},
    {"callsite-no-frame", "callsite", "no such frame"},
    {"callsite-no-parent", "callsite", "no such parent callsite"},
    {"sample", "sample", "no such thread"},
    {"metadata-int", "metadata_set_int", "no name"},
    {"metadata-string", "metadata_set_string", "no name"},
    {"stat-add", "stat_add", "no name"},
    {"import-log", "import_log", "no name"},
    {"frame-timeline-short", "frame_timeline_begin",
     "no tm_frame_timeline_fields, or a short one"},
    {"thread-lifetime", "thread_lifetime", "no such thread"},
    {"stat-set-indexed", "stat_set_indexed", "no name"},
    {"sched-blocked-reason", "sched_blocked_reason", "no such thread"},
    {"machine-stat", "machine_stat_set_indexed", "no name"},
    {"machine-metadata-int", "machine_metadata_set_int", "no name"},
    {"machine-metadata-string", "machine_metadata_set_string", "no name"},
};

/* Each refusal in a file of its own, between two slices: the file's
 * reader_call_refused is 1, its one import log row names the call and the
 * reason (and the file, by trace_id), and the slices around the refused
 * call are imported; the row has no byte offset (the host cannot know
 * where in the file the reader was). Expected from plugin.h: every service refuses what
 * it cannot take, and the host never drops a call without counting it. */
static void test_every_refused_call_is_counted_and_named(fixture *f, gconstpointer data) {
  (void)data;
  size_t n = G_N_ELEMENTS(refusal_cases);
  const char **paths = g_new0(const char *, n);
  GString *expected = g_string_new("\"file\",\"value\",\"offset\",\"args\",\"kept\"\n");
  for (size_t i = 0; i < n; i++) {
    g_autofree char *name = g_strdup_printf("r%02zu.abi", i);
    g_autofree char *text = g_strdup_printf("#tm-abi\nslice 10 before\nrefuse %s\n"
                                            "slice 30 after\n",
                                            refusal_cases[i].what);
    paths[i] = write_input(f, name, text);
    g_string_append_printf(expected, "\"%s\",1,\"[NULL]\",\"call=%s reason=%s\",\"before after\"\n",
                           name, refusal_cases[i].call, refusal_cases[i].reason);
  }
  tm_session *session = session_new(NULL, 0);
  import_ok(session, paths, n);
  g_autofree char *rows = session_query_csv(
      session,
      "SELECT substr(f.name, -7) AS file, s.value, l.byte_offset AS offset, "
      LOG_ARGS_SQL " AS args, (SELECT group_concat(name, ' ') FROM (SELECT sl.name FROM slice sl "
      "JOIN __intrinsic_track t ON t.id = sl.track_id WHERE t.trace_id = f.id ORDER BY sl.ts)) "
      "AS kept "
      "FROM trace_file f JOIN stats s ON s.trace_id = f.id AND s.name = 'reader_call_refused' "
      "LEFT JOIN _trace_import_logs l ON l.trace_id = f.id AND l.name = s.name "
      "ORDER BY f.name");
  g_assert_cmpstr(rows, ==, expected->str);
  g_string_free(expected, TRUE);
  for (size_t i = 0; i < n; i++)
    g_free((char *)paths[i]);
  g_free(paths);
  tm_session_free(session);
}

/* The refusals of a file whose reader runs on the reader worker (from
 * its second chunk, with three threads: core/input/reader_worker.c) are
 * the serial run's, call and reason alike: args_add_string without a key,
 * which the worker refuses itself (it records no arg), among the ones the
 * host refuses when it replays the calls; and refs the worker never
 * handed out, which it must not map to 0 where 0 means "none" (a
 * callsite arg, a callsite's parent, an arg set). */
static void test_refusals_are_the_same_on_the_reader_worker(fixture *f, gconstpointer data) {
  (void)data;
  GString *text = g_string_new("#tm-abi\n");
  while (text->len < 600 * 1024) /* three chunks of 256 KiB */
    g_string_append(text, "# padding the file past its first chunk\n");
  g_string_append(text, "slice 10 before\nrefuse args-add-string-no-key\n"
                        "refuse args-add-no-key\nrefuse track-thread\nrefuse counter\n"
                        "refuse args-add-callsite-no-row\nrefuse callsite-no-parent\n"
                        "refuse slice-args\nrefuse counter-args\n"
                        "slice 30 after\n");
  g_autofree char *path = write_input(f, "worker.abi", text->str);
  g_string_free(text, TRUE);
  char *seen[2];
  for (unsigned threads = 1; threads <= 3; threads += 2) {
    const char *dirs[] = {g_getenv("TM_ABI_TEST_READERS")};
    tm_session_options options = {.plugin_dirs = dirs, .n_plugin_dirs = 1, .threads = threads};
    tm_session *session = tm_session_new(&options);
    const char *paths[] = {path};
    import_ok(session, paths, 1);
    seen[threads / 2] = session_query_csv(
        session, REFUSED_LOGS_SQL);
    tm_session_free(session);
  }
  g_assert_cmpstr(seen[0], ==,
                  "\"args\"\n"
                  "\"call=args_add_string reason=no key\"\n"
                  "\"call=args_add reason=no key\"\n"
                  "\"call=track_thread reason=no such thread\"\n"
                  "\"call=counter reason=no such track\"\n"
                  "\"call=args_add_callsite reason=no such callsite\"\n"
                  "\"call=callsite reason=no such parent callsite\"\n"
                  "\"call=slice_complete reason=no such arg set\"\n"
                  "\"call=counter reason=no such arg set\"\n");
  g_assert_cmpstr(seen[1], ==, seen[0]);
  g_free(seen[0]);
  g_free(seen[1]);
}

/* A cpu above 4095 has one cause, the trace, and one count: each call on
 * the track of such a cpu (a counter, a slice, two set_parents and a
 * source arg: 5) is counted in sched_cpu_out_of_range, none in
 * reader_call_refused as well, and track_intern itself counts nothing;
 * the same cpu 7's counter and slice are kept. Alike on the reader worker
 * (three threads, past the first chunk), which asks the host for a cpu
 * track's answer. Expected from plugin.h (tm_track_desc.has_cpu). */
static void test_a_cpu_above_4095_is_counted_once_per_call(fixture *f, gconstpointer data) {
  (void)data;
  GString *text = g_string_new("#tm-abi\n");
  while (text->len < 600 * 1024) /* three chunks of 256 KiB */
    g_string_append(text, "# padding the file past its first chunk\n");
  g_string_append(text, "cpu counter 5000 20\ncpu slice 5000 30\ncpu parent 5000 35\n"
                        "cpu counter 7 40\ncpu slice 7 50\n");
  g_autofree char *path = write_input(f, "cpus.abi", text->str);
  g_string_free(text, TRUE);
  for (unsigned threads = 1; threads <= 3; threads += 2) {
    const char *dirs[] = {g_getenv("TM_ABI_TEST_READERS")};
    tm_session_options options = {.plugin_dirs = dirs, .n_plugin_dirs = 1, .threads = threads};
    tm_session *session = tm_session_new(&options);
    const char *paths[] = {path};
    import_ok(session, paths, 1);
    g_autofree char *rows = session_query_csv(
        session,
        "SELECT (SELECT sum(value) FROM stats WHERE name = 'sched_cpu_out_of_range') AS cpu, "
        "(SELECT sum(value) FROM stats WHERE name = 'reader_call_refused') AS refused, "
        "(SELECT group_concat(c.ts || '@' || t.cpu) FROM counter c "
        "JOIN cpu_counter_track t ON t.id = c.track_id) AS counters, "
        "(SELECT count(*) FROM slice WHERE name = 'on_cpu') AS slices");
    g_assert_cmpstr(rows, ==, "\"cpu\",\"refused\",\"counters\",\"slices\"\n5,0,\"40@7\",1\n");
    tm_session_free(session);
  }
}

/* A version-1 reader's NULL slice fields and NULL cpu track description
 * reach version 2's services as NULL and are refused there, counted as a
 * version-2 reader's are. */
static void test_a_version_1_readers_refused_calls_are_counted(fixture *f,
                                                                gconstpointer data) {
  (void)data;
  g_autofree char *path = write_input(f, "refused.v1", "#tm-v1\nnullslices\nnullcpu\n");
  tm_session *session = session_new(NULL, 0);
  const char *paths[] = {path};
  import_ok(session, paths, 1);
  g_autofree char *logs = session_query_csv(
      session, REFUSED_LOGS_SQL);
  g_assert_cmpstr(logs, ==,
                  "\"args\"\n"
                  "\"call=slice_begin reason=no tm_slice_fields\"\n"
                  "\"call=slice_end reason=no tm_slice_fields\"\n"
                  "\"call=slice_complete reason=no tm_slice_fields\"\n"
                  "\"call=track_intern reason=a tm_track_desc without a type\"\n");
  tm_session_free(session);
}

/* abi_reader.c declares abi_test_per_index indexed: the file that sets
 * indices 3 and 0 has exactly those two rows (the later value of index 3
 * wins: set, not add), the file that sets none has no row, not a zero one. */
static void test_an_indexed_stat_has_rows_only_for_its_indices(
    fixture *f, gconstpointer data) {
  (void)data;
  g_autofree char *abi = write_input(
      f, "a.abi", "#tm-abi\nindexed 3 7\nindexed 0 5\nindexed 3 9\n");
  g_autofree char *quiet = write_input(f, "b.abi", "#tm-abi\nnoted\n");
  tm_session *session = session_new(NULL, 0);
  const char *paths[] = {abi, quiet};
  import_ok(session, paths, 2);
  g_autofree char *stats = session_query_csv(
      session, "SELECT f.name, s.idx, s.severity, s.source, s.value "
               "FROM stats s JOIN trace_file f ON f.id = s.trace_id "
               "WHERE s.name = 'abi_test_per_index' ORDER BY f.name, s.idx");
  g_autofree char *expected = g_strdup_printf(
      "\"name\",\"idx\",\"severity\",\"source\",\"value\"\n"
      "\"%s\",0,\"info\",\"trace\",5\n"
      "\"%s\",3,\"info\",\"trace\",9\n",
      abi, abi);
  g_assert_cmpstr(stats, ==, expected);
  tm_session_free(session);
}

static void test_samples_go_to_the_declared_table(fixture *f,
                                                  gconstpointer data) {
  (void)data;
  tm_session *session = session_of_abi_text(f, "#tm-abi\nsample 10\nsample 20\n");
  g_autofree char *samples = session_query_csv(
      session, "SELECT (SELECT group_concat(ts) FROM instruments_sample) AS i, "
               "(SELECT count(*) FROM cpu_profile_stack_sample) AS c");
  g_assert_cmpstr(samples, ==, "\"i\",\"c\"\n\"10,20\",0\n");
  tm_session_free(session);
}

/* Root inputs are ordered as the members of one archive: by priority,
 * then by name. By name a.v1 would come first; test-abi declares -3. */
static void test_processing_priority_orders_siblings(fixture *f,
                                                     gconstpointer data) {
  (void)data;
  g_autofree char *v1 = write_input(f, "a.v1", "#tm-v1\n");
  g_autofree char *abi = write_input(f, "z.abi", "#tm-abi\n");
  tm_session *session = session_new(NULL, 0);
  const char *paths[] = {v1, abi};
  import_ok(session, paths, 2);
  g_autofree char *order = session_query_csv(
      session, "SELECT trace_type, processing_order FROM trace_file "
               "ORDER BY processing_order");
  g_assert_cmpstr(order, ==,
                  "\"trace_type\",\"processing_order\"\n"
                  "\"test-abi\",0\n"
                  "\"test-v1\",1\n");
  tm_session_free(session);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
#define ADD(path, fn)                                                       \
  g_test_add(path, fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD("/reader-abi/v1/a-version-1-reader-still-imports",
      test_a_version_1_reader_still_imports);
  ADD("/reader-abi/config/bytes-reach-open-unchanged",
      test_config_bytes_reach_open_unchanged);
  ADD("/reader-abi/config/without-one-open-gets-none",
      test_without_a_config_open_gets_none);
  ADD("/reader-abi/config/one-for-an-unknown-reader-fails-the-import",
      test_a_config_for_an_unknown_reader_fails_the_import);
  ADD("/reader-abi/declarations/stats-carry-their-catalog-entry",
      test_declared_stats_carry_their_catalog_entry);
  ADD("/reader-abi/declarations/an-indexed-stat-has-rows-only-for-its-indices",
      test_an_indexed_stat_has_rows_only_for_its_indices);
  ADD("/reader-abi/sizes/import-log-args-are-read-at-the-readers-stride",
      test_import_log_args_are_read_at_the_readers_stride);
  ADD("/reader-abi/sizes/track-descriptions-are-read-as-far-as-their-size",
      test_track_descriptions_are_read_as_far_as_their_size);
  ADD("/reader-abi/sizes/slice-fields-shorter-than-any-version-are-refused",
      test_slice_fields_shorter_than_any_version_are_refused);
  ADD("/reader-abi/refusals/every-refused-call-is-counted-and-named",
      test_every_refused_call_is_counted_and_named);
  ADD("/reader-abi/refusals/the-same-on-the-reader-worker",
      test_refusals_are_the_same_on_the_reader_worker);
  ADD("/reader-abi/refusals/a-cpu-above-4095-is-counted-once-per-call",
      test_a_cpu_above_4095_is_counted_once_per_call);
  ADD("/reader-abi/refusals/a-version-1-readers-refused-calls-are-counted",
      test_a_version_1_readers_refused_calls_are_counted);
  ADD("/reader-abi/declarations/samples-go-to-the-declared-table",
      test_samples_go_to_the_declared_table);
  ADD("/reader-abi/declarations/processing-priority-orders-siblings",
      test_processing_priority_orders_siblings);
#undef ADD
  return g_test_run();
}
