/*
 * End-to-end: traces written with the recording library merged with
 * traces of other machines, and the example programs of tools/examples
 * run with their configs (the .pbtx files of config/), each read back by
 * the CLI.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "e2e_support.h"
#include "record_support.h"

static tmr_category cat_client = TMR_CATEGORY("client", NULL);

static void write_client(tmr_session *s, void *user) {
  (void)s;
  (void)user;
  tmr_writer *w = tmr_this_thread();
  tmr_writer_set_thread_name(w, "ui");
  tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_client, "client request", 5000000);
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_client, 5400000);
}

/* A trace recorded here (machine "phone", BOOTTIME) and a Chrome JSON
 * file from another machine ("backend"), in a ZIP with a
 * perfetto_manifest that pins the JSON file's timeline to the phone's
 * BOOTTIME with offset_ns 100000: the backend's "handle" at 5100 µs
 * lands at 5,100,000 + 100,000 = 5,200,000 ns, inside the client's
 * request [5,000,000, 5,400,000), both on one timeline and each on its
 * machine. */
static void test_recorded_trace_merges_with_json_of_another_machine(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = record_trace(dir, "phone.pftrace",
                                       "buffers { size_kb: 256 }\n"
                                       "data_sources { config { name: \"track_event\" } }\n",
                                       write_client, NULL);
  g_autofree char *trace = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &trace, &len, NULL));
  const char *server_json =
      "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"handle\", \"ts\": 5100, \"dur\": 200, "
      "\"pid\": 1, \"tid\": 2, \"cat\": \"server\"}]}";
  const char *manifest =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      "  {\"path\": \"phone.pftrace\", \"machine\": {\"name\": \"phone\"}},\n"
      "  {\"path\": \"server.json\", \"machine\": {\"name\": \"backend\"},\n"
      "   \"clocks\": {\"sync_to\": {\"file\": \"phone.pftrace\", \"clock\": \"BOOTTIME\"},\n"
      "              \"offset_ns\": 100000}}]}}";
  e2e_member members[] = {{"perfetto_manifest.json", manifest, 0},
                          {"phone.pftrace", trace, len},
                          {"server.json", server_json, 0}};
  g_autofree char *rows = e2e_query_archive(dir, E2E_ZIP, members, G_N_ELEMENTS(members),
      "SELECT s.ts, s.dur, s.name, m.name AS machine FROM slice s JOIN track t "
      "ON s.track_id = t.id JOIN thread_track tt ON tt.id = t.id JOIN thread th USING (utid) "
      "JOIN machine m ON th.machine_id = m.id ORDER BY s.ts");
  e2e_assert_text(rows, "\"ts\",\"dur\",\"name\",\"machine\"\n"
                        "5000000,400000,\"client request\",\"phone\"\n"
                        "5200000,200000,\"handle\",\"backend\"\n");
  e2e_cleanup(dir);
}

static void write_now(tmr_session *s, void *user) {
  (void)s;
  int64_t *at = user;
  tmr_writer *w = tmr_this_thread();
  at[0] = record_boottime();
  tmr_instant(w, TMR_THREAD_TRACK, &cat_client, "event", at[0]);
}

/* Two traces recorded on "two machines" that share nothing but their
 * clock snapshots (BOOTTIME beside REALTIME, at the start and at the final
 * flush): the merge relates them by REALTIME. Both were recorded on this
 * machine, so the REALTIME rendezvous maps the second's BOOTTIME onto the
 * first's with the drift between their snapshots, well under a
 * millisecond, and keeps their order. Because the two BOOTTIMEs are in
 * fact one clock, the placement alone cannot tell a rendezvous from none:
 * `tracemerge info` must also name the REALTIME rendezvous as what placed
 * the second file. */
static void test_two_recorded_traces_meet_by_realtime(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *config = "buffers { size_kb: 256 }\n"
                       "data_sources { config { name: \"track_event\" } }\n";
  int64_t first_at, second_at;
  g_autofree char *a = record_trace(dir, "a.pftrace", config, write_now, &first_at);
  g_usleep(2000);
  g_autofree char *b = record_trace(dir, "b.pftrace", config, write_now, &second_at);
  g_autofree char *a_bytes = NULL, *b_bytes = NULL;
  gsize a_len, b_len;
  g_assert_true(g_file_get_contents(a, &a_bytes, &a_len, NULL));
  g_assert_true(g_file_get_contents(b, &b_bytes, &b_len, NULL));
  const char *manifest =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
      "  {\"path\": \"a.pftrace\", \"machine\": {\"name\": \"one\"}},\n"
      "  {\"path\": \"b.pftrace\", \"machine\": {\"name\": \"two\"}}]}}";
  e2e_member members[] = {{"perfetto_manifest.json", manifest, 0},
                          {"a.pftrace", a_bytes, a_len},
                          {"b.pftrace", b_bytes, b_len}};
  g_autofree char *sql = g_strdup_printf(
      "SELECT m.name, abs(s.ts - CASE m.name WHEN 'one' THEN %" G_GINT64_FORMAT
      " ELSE %" G_GINT64_FORMAT " END) < 1000000 AS placed FROM slice s JOIN thread_track tt "
      "ON s.track_id = tt.id JOIN thread th USING (utid) JOIN machine m ON th.machine_id = m.id "
      "ORDER BY s.ts",
      first_at, second_at);
  g_autofree char *rows = e2e_query_archive(dir, E2E_ZIP, members, G_N_ELEMENTS(members), sql);
  e2e_assert_text(rows, "\"name\",\"placed\"\n\"one\",1\n\"two\",1\n");
  /* Files: [0] the ZIP, [1] the manifest, [2] a.pftrace (machine 0, which
   * owns trace time), [3] b.pftrace (machine 1). */
  const char *info[] = {"info", "run.zip", NULL};
  e2e_result r = e2e_run_in(dir, info);
  g_assert_cmpint(r.exit_code, ==, 0);
  if (!strstr(r.out, "file [2] machine 0 (proto): owns trace time\n") ||
      !strstr(r.out, "file [3] machine 1 (proto): REALTIME rendezvous\n") ||
      !strstr(r.out, "6(seq=0,tf=0,m=1): REALTIME rendezvous; 1 event, 1 placed\n"))
    g_error("tracemerge info does not say b.pftrace was placed by REALTIME:\n%s", r.out);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* --- the examples ------------------------------------------------------------ */

static char *run_example(const char *env_name, const char *const *args, const char *const *env) {
  const char *exe = g_getenv(env_name);
  g_assert_nonnull(exe);
  const char *argv[8] = {exe};
  for (int i = 0; args[i]; i++)
    argv[i + 1] = args[i];
  char *out = NULL, *err = NULL;
  int status;
  GError *error = NULL;
  char **envp = g_get_environ();
  for (int i = 0; env && env[i]; i += 2)
    envp = g_environ_setenv(envp, env[i], env[i + 1], TRUE);
  g_spawn_sync(NULL, (char **)argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_strfreev(envp);
  g_assert_no_error(error);
  if (!g_spawn_check_wait_status(status, NULL))
    g_error("%s failed: %s", exe, err);
  g_free(err);
  return out;
}

/* record_service under config/service.pbtx: 24 requests, each an
 * accept on the acceptor, a handle (> parse, query, with the verbose
 * category's "cache miss" enabled by its tag) and a reply on a worker,
 * an async slice on lane id % 4, two flow links (accept → handle →
 * reply) and two queue-depth samples; 24 load samples. */
static void test_service_example(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *out = g_build_filename(dir, "service.pftrace", NULL);
  g_autofree char *config = g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "config",
                                             "service.pbtx", NULL);
  const char *args[] = {out, config, NULL};
  g_autofree char *printed = run_example("TM_RECORD_SERVICE", args, NULL);
  g_assert_true(g_str_has_prefix(printed, out));
  g_autofree char *names = record_query(out,
      "SELECT name, count(*) FROM slice WHERE name NOT LIKE '/%' GROUP BY name ORDER BY name");
  e2e_assert_text(names, "\"name\",\"count(*)\"\n\"accept\",24\n\"cache miss\",24\n"
                         "\"handle\",24\n\"parse\",24\n\"query\",24\n\"reply\",24\n");
  g_autofree char *lanes = record_query(out,
      "SELECT t.name, count(*), min(s.dur) > 0 FROM slice s JOIN track t ON s.track_id = t.id "
      "WHERE t.name LIKE 'lane %' GROUP BY t.name ORDER BY t.name");
  e2e_assert_text(lanes, "\"name\",\"count(*)\",\"min(s.dur) > 0\"\n\"lane 0\",6,1\n"
                         "\"lane 1\",6,1\n\"lane 2\",6,1\n\"lane 3\",6,1\n");
  g_autofree char *flows = record_query(out,
      "SELECT o.name, i.name, count(*) FROM flow f JOIN slice o ON o.id = f.slice_out "
      "JOIN slice i ON i.id = f.slice_in GROUP BY 1, 2 ORDER BY 1");
  e2e_assert_text(flows, "\"name\",\"name\",\"count(*)\"\n\"accept\",\"handle\",24\n"
                         "\"handle\",\"reply\",24\n");
  g_autofree char *counters = record_query(out,
      "SELECT t.name, count(*) FROM counter c JOIN counter_track t ON c.track_id = t.id "
      "GROUP BY t.name ORDER BY t.name");
  e2e_assert_text(counters, "\"name\",\"count(*)\"\n\"load\",24\n\"queue depth\",48\n");
  g_autofree char *threads = record_query(out,
      "SELECT t.name FROM thread t JOIN process p USING (upid) WHERE p.name = 'record_service' "
      "ORDER BY t.name");
  e2e_assert_text(threads, "\"name\"\n\"acceptor\"\n\"worker 0\"\n\"worker 1\"\n\"worker 2\"\n");
  /* The config is optional: without one, tmr_config_new_default()'s
   * track_event has no track_event_config, so TrackEventConfig's default
   * disabled tags ("slow", "debug") turn off the "verbose" category
   * (tag "debug") and its "cache miss"; the rest is as above. */
  g_autofree char *plain = g_build_filename(dir, "plain.pftrace", NULL);
  const char *no_config[] = {plain, NULL};
  g_autofree char *printed_plain = run_example("TM_RECORD_SERVICE", no_config, NULL);
  g_assert_true(g_str_has_prefix(printed_plain, plain));
  g_autofree char *plain_names = record_query(plain,
      "SELECT name, count(*) FROM slice WHERE name NOT LIKE '/%' GROUP BY name ORDER BY name");
  e2e_assert_text(plain_names, "\"name\",\"count(*)\"\n\"accept\",24\n\"handle\",24\n"
                               "\"parse\",24\n\"query\",24\n\"reply\",24\n");
  e2e_cleanup(dir);
}

/* record_flight_recorder under config/flight_recorder.pbtx: the ring
 * (32 KiB, some 180 frames of ~180 bytes) wraps; frame 300 fires
 * "missed_frame"; the trace ends stop_delay_ms = 100 ms later. A frame
 * takes at least 1.8 ms (its sleeps), so at most ~55 frames follow the
 * trigger and the ring still holds frames before it; the next frame
 * starts 1 ms after the trigger, so even a thread stalled for most of the
 * 100 ms by a busy machine writes one after it. No gap either way. */
static void test_flight_recorder_example(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *out = g_build_filename(dir, "flight.pftrace", NULL);
  g_autofree char *config = g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "config",
                                             "flight_recorder.pbtx", NULL);
  const char *args[] = {out, config, NULL};
  g_autofree char *printed = run_example("TM_RECORD_FLIGHT_RECORDER", args, NULL);
  g_assert_nonnull(strstr(printed, ": stopped by trigger:missed_frame, "));
  g_autofree char *frames = record_query(out,
      "SELECT count(*) = max(a.int_value) - min(a.int_value) + 1 AS contiguous, "
      "min(a.int_value) > 0 AS wrapped, max(a.int_value) > 300 AS after, "
      "min(a.int_value) < 300 AS before FROM slice s JOIN args a ON a.arg_set_id = s.arg_set_id "
      "AND a.key = 'debug.frame' WHERE s.name = 'frame'");
  e2e_assert_text(frames, "\"contiguous\",\"wrapped\",\"after\",\"before\"\n1,1,1,1\n");
  g_autofree char *missed = record_query(out, "SELECT count(*) FROM slice WHERE name = 'missed frame'");
  e2e_assert_text(missed, "\"count(*)\"\n1\n");
  g_autofree char *decoded = record_decode(out);
  g_assert_nonnull(strstr(decoded, "  trigger {\n    trigger_name: \"missed_frame\"\n"
                                   "    producer_name: \"flight_recorder\"\n"));
  g_assert_null(strstr(decoded, "chunks_overwritten: 0\n"));
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_autofree char *run_dir = e2e_tmpdir();
  g_autofree char *trigger_dir = g_build_filename(run_dir, "triggers", NULL);
  g_assert_cmpint(g_mkdir(trigger_dir, 0700), ==, 0);
  g_setenv("TRACEMERGE_TRIGGER_DIR", trigger_dir, TRUE);
  g_test_add_func("/e2e/record/merges-with-json-of-another-machine",
                  test_recorded_trace_merges_with_json_of_another_machine);
  g_test_add_func("/e2e/record/two-recorded-traces-meet-by-realtime",
                  test_two_recorded_traces_meet_by_realtime);
  g_test_add_func("/e2e/record/examples/service", test_service_example);
  g_test_add_func("/e2e/record/examples/flight-recorder", test_flight_recorder_example);
  int status = g_test_run();
  e2e_cleanup(run_dir);
  return status;
}
