/* Imports with two threads (tm_session_options.threads = 2: each file's
 * bytes pulled on a second thread) give what the serial path
 * (threads = 1) gives: every table of the model, dumped whole, and the
 * import's outcome and error message.
 *
 * How the expected values are derived: they are the serial import's own
 * tables, in the same session setup; a case cannot pass vacuously because
 * each asserts that the serial dump holds the rows its inputs must give
 * (files, machines, slices). The Perfetto export of the two is compared
 * too, byte for byte. The inputs are the repository's real traces
 * (tests/data/real), packed at test time as a user's capture of several
 * machines is: a ZIP with a perfetto_manifest, a .tar.gz inside it, loose
 * files beside it. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracemerge/tracemerge.h>

#include "corpus.h"
#include "e2e_support.h"
#include "session_query.h"

/* Every table the model has (the tables of sqlite_master; views only
 * rename their columns). */
static const char tables_sql[] =
    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name";

typedef struct import_outcome {
  bool ok;
  char *error; /* the import's message, or NULL */
  char *dump;  /* every table, "-- name" then its rows as CSV */
  size_t n_tables;
  /* The Perfetto export's SHA-1 and size (it also shows what no table
   * does: the string pool's ids and order, through its interned strings). */
  char *export_sha1;
  size_t export_len;
} import_outcome;

static void outcome_clear(import_outcome *outcome) {
  g_free(outcome->error);
  g_free(outcome->dump);
  g_free(outcome->export_sha1);
}


static import_outcome import_with(unsigned threads, const char *const *paths,
                                  size_t n_paths, const tm_budgets *budgets) {
  tm_session_options options = {.threads = threads};
  if (budgets)
    options.budgets = *budgets;
  tm_session *session = tm_session_new(&options);
  import_outcome outcome = {0};
  GError *error = NULL;
  outcome.ok = tm_session_import(session, paths, n_paths, &error);
  if (error) {
    outcome.error = g_strdup(error->message);
    g_error_free(error);
  }
  g_autofree char *tables = session_query_csv(session, tables_sql);
  GString *dump = g_string_new(NULL);
  g_auto(GStrv) names = g_strsplit(e2e_csv_rows(tables), "\n", -1);
  for (char **name = names; *name; name++) {
    if (!**name)
      continue;
    g_autofree char *table = g_strndup(*name + 1, strlen(*name) - 2); /* "x" */
    g_autofree char *sql = g_strdup_printf("SELECT * FROM %s", table);
    g_autofree char *rows = session_query_csv(session, sql);
    g_string_append_printf(dump, "-- %s\n%s", table, rows);
    outcome.n_tables++;
  }
  outcome.dump = g_string_free(dump, FALSE);
  char *exported = NULL;
  size_t exported_len = 0;
  FILE *out = open_memstream(&exported, &exported_len);
  g_assert_nonnull(out);
  tm_export_options export_options = {.format = TM_EXPORT_PERFETTO};
  g_assert_true(tm_session_export(session, &export_options, out, NULL));
  g_assert_cmpint(fclose(out), ==, 0);
  outcome.export_sha1 =
      g_compute_checksum_for_data(G_CHECKSUM_SHA1, (const guchar *)exported, exported_len);
  outcome.export_len = exported_len;
  free(exported);
  tm_session_free(session);
  return outcome;
}

static size_t count_lines_after(const char *dump, const char *table) {
  g_autofree char *marker = g_strdup_printf("-- %s\n", table);
  const char *at = strstr(dump, marker);
  g_assert_nonnull(at);
  at += strlen(marker);
  const char *end = strstr(at, "\n-- ");
  size_t lines = 0;
  for (const char *p = at; *p && (!end || p <= end); p++)
    lines += *p == '\n';
  return lines - 1; /* the header */
}

/* Fails naming the first line where two dumps differ (and its table),
 * rather than printing megabytes of both. */
static void assert_same_dump(const char *serial, const char *parallel) {
  if (strcmp(serial, parallel) == 0)
    return;
  /* One pass over both (g_strsplit's strstr is quadratic under ASan). */
  const char *a = serial, *b = parallel, *table = serial;
  size_t line = 0;
  while (true) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
    if (strncmp(a, "-- ", 3) == 0)
      table = a;
    if (la != lb || memcmp(a, b, la) != 0 || !ea || !eb) {
      g_autofree char *in = g_strndup(table, strcspn(table, "\n"));
      g_autofree char *x = g_strndup(a, la), *y = g_strndup(b, lb);
      g_test_message("dumps differ at line %zu, in %s", line, in);
      g_assert_cmpstr(y, ==, x);
      g_assert_true(ea && eb); /* equal lines, one dump ends */
    }
    a = ea + 1;
    b = eb + 1;
    line++;
  }
}

/* The dumps and outcomes of threads 1 and `threads` are equal. */
/* Imports at `threads` and checks the outcome is `serial`'s. */
static void assert_matches_serial(const import_outcome *serial, const char *const *paths,
                                  size_t n_paths, const tm_budgets *budgets,
                                  unsigned threads) {
  import_outcome parallel = import_with(threads, paths, n_paths, budgets);
  g_assert_cmpint(parallel.ok, ==, serial->ok);
  g_assert_cmpstr(parallel.error, ==, serial->error);
  g_assert_cmpuint(serial->n_tables, >=, 20);
  g_assert_cmpuint(parallel.n_tables, ==, serial->n_tables);
  assert_same_dump(serial->dump, parallel.dump);
  g_assert_cmpuint(serial->export_len, >, 0);
  g_assert_cmpuint(parallel.export_len, ==, serial->export_len);
  g_assert_cmpstr(parallel.export_sha1, ==, serial->export_sha1);
  outcome_clear(&parallel);
}

static void assert_same_import(const char *const *paths, size_t n_paths,
                               const tm_budgets *budgets, unsigned threads,
                               import_outcome *serial_out) {
  *serial_out = import_with(1, paths, n_paths, budgets);
  assert_matches_serial(serial_out, paths, n_paths, budgets, threads);
}

static e2e_member real_member(const char *name, const char *subdir,
                              const char *file, GPtrArray *keep) {
  gsize len = 0;
  char *bytes = corpus_real_read(subdir, file, &len);
  g_ptr_array_add(keep, bytes);
  return (e2e_member){name, bytes, len};
}

/* Three machines in one ZIP (an Android Perfetto trace, a Chrome JSON
 * trace with a clock offset, a Linux system trace with scheduling), a
 * .tar.gz of two more traces inside it, and two loose files (a plain JSON,
 * a gzipped one). */
static void test_a_multi_machine_archive_and_loose_files_import_the_same_on_two_threads(void) {
  g_autofree char *dir = e2e_tmpdir();
  GPtrArray *keep = g_ptr_array_new_with_free_func(g_free);
  e2e_member inner[] = {
      real_member("gecko.json", "gecko", "samply-ls-profile.json", keep),
      real_member("tokio.pftrace", "proto", "tokio-flight-recorder.pftrace", keep),
  };
  g_autofree char *inner_path =
      e2e_write_archive(dir, "inner.tar.gz", E2E_TAR_GZ, inner, G_N_ELEMENTS(inner));
  gsize inner_len = 0;
  char *inner_bytes = NULL;
  g_assert_true(g_file_get_contents(inner_path, &inner_bytes, &inner_len, NULL));
  g_ptr_array_add(keep, inner_bytes);
  static const char manifest[] =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": ["
      "{\"path\": \"phone.perfetto-trace\", \"machine\": {\"name\": \"phone\"}},"
      "{\"path\": \"browser.json\", \"machine\": {\"name\": \"browser\"},"
      " \"clocks\": {\"sync_to\": {\"file\": \"phone.perfetto-trace\"},"
      " \"offset_ns\": 1000000}},"
      "{\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}}]}}";
  e2e_member members[] = {
      {"perfetto_manifest.json", manifest, 0},
      real_member("phone.perfetto-trace", "proto", "nowinandroid-trace.perfetto-trace", keep),
      real_member("browser.json", "json", "speedscope-chrome70-worker.json", keep),
      real_member("server.pb", "proto", "systing-trace.pb", keep),
      {"more/inner.tar.gz", inner_bytes, inner_len},
  };
  g_autofree char *zip =
      e2e_write_archive(dir, "capture.zip", E2E_ZIP, members, G_N_ELEMENTS(members));
  /* Loose inputs are taken in the order of their paths, and the ZIP's
   * manifest must come first (docs/clock-model.md §9.5): the loose files
   * sit beside the ZIP under names that sort after "capture.zip", so the
   * order does not depend on where the checkout is. */
  gsize devtools_len = 0, webview_len = 0;
  g_autofree char *devtools = corpus_real_read("json", "speedscope-chrome116-devtools-trace.json",
                                               &devtools_len);
  g_autofree char *webview = corpus_real_read("json", "catapult-webview.json.gz", &webview_len);
  g_autofree char *loose = e2e_write_file(dir, "devtools.json", devtools, devtools_len);
  g_autofree char *loose_gz = e2e_write_file(dir, "webview.json.gz", webview, webview_len);
  const char *paths[] = {zip, loose, loose_gz};
  import_outcome serial;
  assert_same_import(paths, G_N_ELEMENTS(paths), NULL, 2, &serial);
  g_assert_true(serial.ok);
  /* Not vacuous: the rows these inputs give. trace_file: the zip, its
   * manifest and 4 members, the tar.gz's gzip payload (a tar) and its 2
   * members, the loose JSON, the loose gzip and its payload = 12. Three
   * named machines and the host machine of the loose files = 4. */
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_trace_file"), ==, 12);
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_machine"), ==, 4);
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_slice"), >, 10000);
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_sched_slice"), >, 0);
  outcome_clear(&serial);
  /* Three threads and more add the reader worker (from a file's second
   * chunk on: the browser's and server's files here). */
  assert_same_import(paths, G_N_ELEMENTS(paths), NULL, 8, &serial);
  outcome_clear(&serial);
  g_ptr_array_unref(keep);
  e2e_cleanup(dir);
}

/* A JSON member whose reader fails early (bad bytes after a good start)
 * is followed by megabytes the reader never wants, which the second
 * thread may already have inflated: what it pulled past the failure is
 * given back, so the member's size, the damage, the error naming file and
 * offset, and the next member's rows are those of the serial run. */
static void test_a_reader_that_fails_mid_member_leaves_the_same_tables_and_error(void) {
  g_autofree char *dir = e2e_tmpdir();
  GString *damaged = g_string_new(
      "{\"traceEvents\":[{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":2,"
      "\"pid\":1,\"tid\":1},\n@@@ not JSON @@@");
  /* Far more than the read-ahead's blocks: 8 MiB the reader never reads. */
  while (damaged->len < (8u << 20))
    g_string_append(damaged, "{\"name\":\"filler\",\"ph\":\"i\",\"ts\":5},\n");
  GPtrArray *keep = g_ptr_array_new_with_free_func(g_free);
  e2e_member members[] = {
      {"a-damaged.json", damaged->str, damaged->len},
      real_member("b-good.json", "json", "speedscope-chrome70-worker.json", keep),
  };
  g_autofree char *zip =
      e2e_write_archive(dir, "capture.zip", E2E_ZIP, members, G_N_ELEMENTS(members));
  g_autofree char *gz = e2e_write_archive(dir, "damaged.json.gz", E2E_GZIP, members, 1);
  const char *paths[] = {zip, gz};
  import_outcome serial;
  assert_same_import(paths, G_N_ELEMENTS(paths), NULL, 2, &serial);
  g_assert_false(serial.ok);
  g_assert_nonnull(strstr(serial.error, "a-damaged.json"));
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_slice"), >, 1000);
  outcome_clear(&serial);
  g_string_free(damaged, TRUE);
  g_ptr_array_unref(keep);
  e2e_cleanup(dir);
}

/* With three threads the readers run on a worker thread from a file's
 * second chunk on, their
 * calls replayed in order on the calling thread (core/input/reader_worker.c):
 * the systrace text and HTML readers, Instruments XML, a Gecko profile and
 * a JSON file that fails in its third chunk, after emitting two chunks'
 * worth of slices on the worker, give the serial tables and error. */
static void test_readers_on_the_worker_thread_give_the_serial_tables_and_error(void) {
  g_autofree char *dir = e2e_tmpdir();
  /* 600 KiB of good complete events (three chunks of 256 KiB in part),
   * then damage: the reader fails on the worker, mid-file. */
  GString *late = g_string_new("{\"traceEvents\":[\n");
  for (unsigned i = 0; late->len < (600u << 10); i++)
    g_string_append_printf(late,
                           "{\"name\":\"s%u\",\"cat\":\"c%u\",\"ph\":\"X\",\"ts\":%u,"
                           "\"dur\":1,\"pid\":%u,\"tid\":%u,\"args\":{\"k\":\"v%u\"}},\n",
                           i % 97, i % 5, i, i % 7, i % 13, i % 11);
  g_string_append(late, "@@@ not JSON @@@ {\"name\":\"after\",\"ph\":\"i\",\"ts\":5}]}");
  g_autofree char *late_path = e2e_write_file(dir, "z-late-damage.json", late->str, late->len);
  g_autofree char *trace_cmd = corpus_real_path("systrace", "lisa-trace-cmd-report.txt");
  g_autofree char *html = corpus_real_path("systrace", "trappy-trace_surfaceflinger.html");
  g_autofree char *counters = corpus_real_path("systrace", "catapult-counter_tracks.html");
  g_autofree char *xml = corpus_real_path("instruments", "xctrace-mcp-potential-hangs.xml");
  g_autofree char *gecko = corpus_real_path("gecko", "ffprofiler-argument-values.json");
  const char *paths[] = {trace_cmd, html, counters, xml, gecko, late_path};
  import_outcome serial;
  /* Three threads: the reader worker is the third. */
  assert_same_import(paths, G_N_ELEMENTS(paths), NULL, 3, &serial);
  g_assert_false(serial.ok);
  g_assert_nonnull(strstr(serial.error, "z-late-damage.json"));
  /* Not vacuous: the systrace files schedule threads, and the damaged
   * file kept what it emitted before the damage (more than 5000 events
   * of about 110 bytes in its 600 KiB). */
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_sched_slice"), >, 0);
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_slice"), >, 5000);
  outcome_clear(&serial);
  g_string_free(late, TRUE);
  e2e_cleanup(dir);
}

/* With three threads a reader's processes, threads, tracks, mappings,
 * frames and callsites are refs of the recording's own (reader_worker.c),
 * which the replay maps to the host's rows: the proto fixtures that use
 * each (stack profiles and a TrackEvent callstack's "callsite_id" arg,
 * frame timelines keyed by process, process trees, described tracks) and
 * a Perfetto trace with callstack samples give the serial tables. A file
 * of one chunk is read on the calling thread, against the same recording,
 * so these small files take that path too. */
static void test_refs_the_recording_answers_itself_map_to_the_serial_rows(void) {
  static const char *const fixtures[] = {"stacks", "android_frames", "process_tree",
                                         "track_events", "legacy_events"};
  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  for (size_t i = 0; i < G_N_ELEMENTS(fixtures); i++)
    g_ptr_array_add(paths, e2e_proto_fixture_path(fixtures[i]));
  g_ptr_array_add(paths, corpus_real_path("proto", "systing-trace.pb"));
  import_outcome serial;
  assert_same_import((const char *const *)paths->pdata, paths->len, NULL, 3, &serial);
  g_assert_true(serial.ok);
  /* Not vacuous: stacks.textproto's callstacks (tests/test_e2e_proto.c,
   * test_stack_profiles) and systing's samples give callsites, and a
   * TrackEvent callstack a callsite_id arg. */
  g_assert_cmpuint(count_lines_after(serial.dump, "stack_profile_callsite"), >, 98);
  g_assert_nonnull(strstr(serial.dump, "callsite_id"));
  outcome_clear(&serial);
  g_ptr_array_unref(paths);
}

/* A member larger than --max-member-size is cut at the same byte on both
 * paths: the second thread pulls no block past the one that crosses the
 * budget. (The inflate-ratio budget's equality is checked by the container
 * tests run with read-ahead, container_budgets_read_ahead: it needs more
 * than 64 MiB inflated, too slow for a reader under sanitizers.) */
static void test_a_member_cut_by_its_size_budget_is_cut_at_the_same_byte(void) {
  g_autofree char *dir = e2e_tmpdir();
  GPtrArray *keep = g_ptr_array_new_with_free_func(g_free);
  e2e_member members[] = {
      real_member("a.json", "json", "speedscope-chrome116-devtools-trace.json", keep),
      real_member("b.json", "json", "speedscope-chrome70-worker.json", keep),
  };
  g_autofree char *zip =
      e2e_write_archive(dir, "capture.zip", E2E_ZIP, members, G_N_ELEMENTS(members));
  const char *paths[] = {zip};
  /* 300000 bytes: inside the first file's second block of 256 KiB. */
  tm_budgets budgets = {.max_member_bytes = 300000};
  import_outcome serial;
  assert_same_import(paths, G_N_ELEMENTS(paths), &budgets, 2, &serial);
  g_assert_false(serial.ok);
  g_assert_nonnull(strstr(serial.error, "max-member-size"));
  outcome_clear(&serial);
  g_ptr_array_unref(keep);
  e2e_cleanup(dir);
}

/* Members of a listed ZIP are parsed ahead of their turn on the prefetch
 * worker, each against a recording of its own, and replayed in their
 * turn (core/input/reader_worker.h). TRACEMERGE_TEST_PREFETCH_WAIT makes
 * a member's turn wait for the worker to start it, so every member the
 * session accepts takes that path here whatever the scheduler does: a
 * Perfetto trace whose clocks, snapshots and claims are questions
 * answered in its turn, a Chrome JSON file, a JSON file whose reader
 * fails on the worker after 600 KiB (no finish(), as fail_host() keeps
 * it from being called), and a system trace with scheduling. */
static void test_members_parsed_ahead_give_the_serial_tables_and_error(void) {
  g_autofree char *dir = e2e_tmpdir();
  GPtrArray *keep = g_ptr_array_new_with_free_func(g_free);
  GString *late = g_string_new("{\"traceEvents\":[\n");
  for (unsigned i = 0; late->len < (600u << 10); i++)
    g_string_append_printf(late,
                           "{\"name\":\"s%u\",\"ph\":\"X\",\"ts\":%u,\"dur\":1,"
                           "\"pid\":%u,\"tid\":%u},\n",
                           i % 97, i, i % 7, i % 13);
  g_string_append(late, "@@@ not JSON @@@]}");
  static const char manifest[] =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": ["
      "{\"path\": \"phone.perfetto-trace\", \"machine\": {\"name\": \"phone\"}},"
      "{\"path\": \"browser.json\", \"machine\": {\"name\": \"browser\"},"
      " \"clocks\": {\"sync_to\": {\"file\": \"phone.perfetto-trace\"},"
      " \"offset_ns\": 1000000}},"
      "{\"path\": \"late.json\", \"machine\": {\"name\": \"browser\"}},"
      "{\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}}]}}";
  e2e_member members[] = {
      {"perfetto_manifest.json", manifest, 0},
      real_member("phone.perfetto-trace", "proto", "nowinandroid-trace.perfetto-trace", keep),
      real_member("browser.json", "json", "speedscope-chrome70-worker.json", keep),
      {"late.json", late->str, late->len},
      real_member("server.pb", "proto", "systing-trace.pb", keep),
  };
  g_autofree char *zip =
      e2e_write_archive(dir, "capture.zip", E2E_ZIP, members, G_N_ELEMENTS(members));
  const char *paths[] = {zip};
  g_setenv("TRACEMERGE_TEST_PREFETCH_WAIT", "1", TRUE);
  import_outcome serial;
  assert_same_import(paths, G_N_ELEMENTS(paths), NULL, 2, &serial);
  g_assert_false(serial.ok);
  g_assert_nonnull(strstr(serial.error, "late.json"));
  /* Not vacuous: three named machines, every member's rows, the damaged
   * file's slices before the damage (about 7000 events in 600 KiB). */
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_machine"), ==, 3);
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_slice"), >, 17000);
  g_assert_cmpuint(count_lines_after(serial.dump, "__intrinsic_sched_slice"), >, 0);
  /* With the reader worker too (three threads): the first member is
   * read there, the others on the prefetch worker. */
  assert_matches_serial(&serial, paths, G_N_ELEMENTS(paths), NULL, 3);
  /* The prefetch worker bounded to one segment of log ahead of the
   * replay: it waits for the replay at every new segment while it runs
   * ahead (browser.json's log alone is several segments). */
  g_setenv("TRACEMERGE_TEST_PREFETCH_AHEAD", "1", TRUE);
  assert_matches_serial(&serial, paths, G_N_ELEMENTS(paths), NULL, 2);
  g_unsetenv("TRACEMERGE_TEST_PREFETCH_AHEAD");
  g_unsetenv("TRACEMERGE_TEST_PREFETCH_WAIT");
  /* The worker takes only the first file queued (browser.json): the
   * turns of late.json and server.pb find theirs not started, and the
   * session gives their recordings up and reads them here. */
  g_setenv("TRACEMERGE_TEST_PREFETCH_FILES", "1", TRUE);
  assert_matches_serial(&serial, paths, G_N_ELEMENTS(paths), NULL, 2);
  g_unsetenv("TRACEMERGE_TEST_PREFETCH_FILES");
  outcome_clear(&serial);
  g_string_free(late, TRUE);
  g_ptr_array_unref(keep);
  e2e_cleanup(dir);
}

/* A member parsed ahead whose replay fails the import (a `machine`
 * override on a file with packets of two machines, found when the
 * replay answers the worker's machine question) stops the import at the
 * same feed with the same error, and what the worker parsed past it is
 * dropped: the tables are the serial run's. */
static void test_a_member_parsed_ahead_that_fails_the_import_stops_it_where_the_serial_run_does(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes relay = e2e_proto_fixture("machines");
  g_autofree char *a = e2e_json_slice("a", 1, 1, 1);
  static const char manifest[] =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": ["
      "{\"path\": \"a.json\", \"machine\": {\"name\": \"a\"}},"
      "{\"path\": \"relay.pb\", \"machine\": {\"name\": \"relay\"}}]}}";
  e2e_member members[] = {
      {"perfetto_manifest.json", manifest, 0},
      {"a.json", a, strlen(a)},
      {"relay.pb", relay.data, relay.len},
  };
  g_autofree char *zip =
      e2e_write_archive(dir, "capture.zip", E2E_ZIP, members, G_N_ELEMENTS(members));
  const char *paths[] = {zip};
  g_setenv("TRACEMERGE_TEST_PREFETCH_WAIT", "1", TRUE);
  import_outcome serial;
  assert_same_import(paths, G_N_ELEMENTS(paths), NULL, 2, &serial);
  g_unsetenv("TRACEMERGE_TEST_PREFETCH_WAIT");
  g_assert_false(serial.ok);
  g_assert_nonnull(strstr(serial.error, "packets from multiple machines"));
  outcome_clear(&serial);
  g_free(relay.data);
  e2e_cleanup(dir);
}

/* The CLI's --threads: 1 and 2 print the same answer; anything but a
 * number from 1 to 1024 is a usage error naming the option. */
static void test_the_cli_takes_threads_and_refuses_a_count_that_is_not_one(void) {
  g_autofree char *json = corpus_real_path("json", "speedscope-chrome70-worker.json");
  g_autofree char *gz = corpus_real_path("json", "catapult-webview.json.gz");
  const char *inputs[] = {json, gz, NULL};
  static const char sql[] =
      "SELECT count(*), sum(ts), sum(dur), sum(depth), count(DISTINCT track_id) FROM slice";
  const char *one[] = {"--threads", "1", NULL};
  const char *two[] = {"--threads", "2", NULL};
  e2e_result serial = e2e_run_query(NULL, inputs, one, sql);
  e2e_result parallel = e2e_run_query(NULL, inputs, two, sql);
  g_assert_cmpint(serial.exit_code, ==, 0);
  g_assert_cmpstr(serial.err, ==, "");
  g_assert_cmpint(parallel.exit_code, ==, 0);
  g_assert_cmpstr(parallel.out, ==, serial.out);
  g_assert_cmpstr(parallel.err, ==, "");
  /* Not vacuous: the two files have slices. */
  g_assert_false(g_str_has_prefix(e2e_csv_rows(serial.out), "0,"));
  e2e_result_clear(&serial);
  e2e_result_clear(&parallel);
  static const char *const bad_counts[] = {"0", "1025", "two", "-1"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad_counts); i++) {
    const char *bad[] = {"--threads", bad_counts[i], NULL};
    e2e_result refused = e2e_run_query(NULL, inputs, bad, sql);
    g_assert_cmpint(refused.exit_code, ==, 2);
    g_autofree char *expected = g_strdup_printf(
        "tracemerge: --threads: '%s' is not a number of threads from 1 to 1024\n"
        "Try 'tracemerge query --help'.\n",
        bad_counts[i]);
    g_assert_cmpstr(refused.err, ==, expected);
    e2e_result_clear(&refused);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/import-threads/a-multi-machine-archive-and-loose-files-import-the-same-on-two-threads",
                  test_a_multi_machine_archive_and_loose_files_import_the_same_on_two_threads);
  g_test_add_func("/import-threads/a-reader-that-fails-mid-member-leaves-the-same-tables-and-error",
                  test_a_reader_that_fails_mid_member_leaves_the_same_tables_and_error);
  g_test_add_func("/import-threads/readers-on-the-worker-thread-give-the-serial-tables-and-error",
                  test_readers_on_the_worker_thread_give_the_serial_tables_and_error);
  g_test_add_func("/import-threads/refs-the-recording-answers-itself-map-to-the-serial-rows",
                  test_refs_the_recording_answers_itself_map_to_the_serial_rows);
  g_test_add_func("/import-threads/a-member-cut-by-its-size-budget-is-cut-at-the-same-byte",
                  test_a_member_cut_by_its_size_budget_is_cut_at_the_same_byte);
  g_test_add_func("/import-threads/members-parsed-ahead-give-the-serial-tables-and-error",
                  test_members_parsed_ahead_give_the_serial_tables_and_error);
  g_test_add_func("/import-threads/a-member-parsed-ahead-that-fails-the-import-stops-it-where-the-serial-run-does",
                  test_a_member_parsed_ahead_that_fails_the_import_stops_it_where_the_serial_run_does);
  g_test_add_func("/import-threads/the-cli-takes-threads-and-refuses-a-count-that-is-not-one",
                  test_the_cli_takes_threads_and_refuses_a_count_that_is_not_one);
  return g_test_run();
}
