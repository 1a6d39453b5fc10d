/*
 * The recording session under its TraceConfig (core/record/session.c and
 * friends): life cycle, triggers (in this process and from another one),
 * streaming into the file with its size limit, data sources with their
 * raw configs and producer filters, unique session names, the
 * trace_config packet, and configs refused with their reason. Timings are
 * short (tens of ms) and every wait has a generous bound, so a busy
 * machine makes the tests slower, never wrong.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e_support.h"
#include "record_support.h"

static tmr_category cat_s = TMR_CATEGORY("s", NULL);

static tmr_config *config_of(const char *text) {
  GError *error = NULL;
  tmr_config *config = tmr_config_parse_text(text, strlen(text), "t.pbtx", &error);
  g_assert_no_error(error);
  return config;
}

static tmr_session *start(const char *dir, const char *name, const char *text,
                          tmr_config **config_out) {
  tmr_config *config = config_of(text);
  g_autofree char *path = g_build_filename(dir, name, NULL);
  tmr_session_options options = {.output_path = path, .producer_name = "me"};
  GError *error = NULL;
  tmr_session *s = tmr_session_new(config, &options, &error);
  g_assert_no_error(error);
  g_assert_true(tmr_session_start(s, &error));
  g_assert_no_error(error);
  *config_out = config;
  return s;
}

static void finish(tmr_session *s, tmr_config *config) {
  GError *error = NULL;
  g_assert_true(tmr_session_stop(s, &error));
  g_assert_no_error(error);
  tmr_session_free(s);
  tmr_config_free(config);
}

static void instant(const char *name, int64_t ts) {
  tmr_instant(tmr_this_thread(), TMR_THREAD_TRACK, &cat_s, name, ts);
}

/* --- life cycle ----------------------------------------------------------------- */

/* duration_ms: the session stops by itself; the trace is written. The
 * event is written at once after the start; 500 ms leaves a stalled
 * thread on a busy machine ample time to write it before the stop. */
static void test_duration_stops_the_session(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "d.pftrace",
                         "buffers { size_kb: 64 }\nduration_ms: 500\n"
                         "data_sources { config { name: \"track_event\" } }\n",
                         &config);
  g_assert_null(tmr_session_borrow_stop_reason(s));
  instant("during", 10);
  g_assert_true(tmr_session_wait(s, 10000));
  g_assert_cmpstr(tmr_session_borrow_stop_reason(s), ==, "duration_ms");
  /* Stopped: writers drop events, tmr_this_thread() has nothing to give. */
  g_assert_null(tmr_this_thread());
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "d.pftrace", NULL);
  g_autofree char *rows = record_query(path, "SELECT ts, name FROM slice");
  e2e_assert_text(rows, "\"ts\",\"name\"\n10,\"during\"\n");
  e2e_cleanup(dir);
}

static void test_stop_is_idempotent_and_start_once(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "i.pftrace",
                         "buffers { size_kb: 64 }\ndata_sources { config { name: \"track_event\" } }\n",
                         &config);
  GError *error = NULL;
  g_assert_false(tmr_session_start(s, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE);
  g_assert_cmpstr(error->message, ==, "this session was started already");
  g_clear_error(&error);
  g_assert_true(tmr_session_stop(s, NULL));
  g_assert_true(tmr_session_stop(s, NULL));
  g_assert_cmpstr(tmr_session_borrow_stop_reason(s), ==, "tmr_session_stop");
  g_assert_true(tmr_session_wait(s, 0));
  finish(s, config);
  e2e_cleanup(dir);
}

/* Only one session at a time records the process' TrackEvents. */
static void test_one_track_event_session_at_a_time(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *text = "buffers { size_kb: 64 }\ndata_sources { config { name: \"track_event\" } }\n";
  tmr_config *config;
  tmr_session *first = start(dir, "a.pftrace", text, &config);
  tmr_config *config2 = config_of(text);
  g_autofree char *path = g_build_filename(dir, "b.pftrace", NULL);
  tmr_session_options options = {.output_path = path};
  GError *error = NULL;
  tmr_session *second = tmr_session_new(config2, &options, &error);
  g_assert_false(tmr_session_start(second, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE);
  g_assert_cmpstr(error->message, ==,
                  "another session of this process records track_event; stop it first (one "
                  "session at a time writes the process' TrackEvents)");
  g_clear_error(&error);
  tmr_session_free(second);
  finish(first, config);
  /* Once the first has stopped, the next may start. */
  tmr_session *third = tmr_session_new(config2, &options, &error);
  g_assert_true(tmr_session_start(third, &error));
  finish(third, config2);
  e2e_cleanup(dir);
}

static void test_session_needs_an_output(void) {
  tmr_config *config = config_of("buffers { size_kb: 64 }\n");
  GError *error = NULL;
  g_assert_null(tmr_session_new(config, NULL, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG);
  g_assert_cmpstr(error->message, ==,
                  "t.pbtx: no output: set tmr_session_options.output_path, or output_path in the "
                  "config");
  g_clear_error(&error);
  g_assert_null(tmr_session_new(NULL, NULL, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE);
  g_clear_error(&error);
  /* An output the session cannot create: refused at start. */
  tmr_session_options options = {.output_path = "/nonexistent-dir/x.pftrace"};
  tmr_session *s = tmr_session_new(config, &options, &error);
  g_assert_nonnull(s);
  g_assert_false(tmr_session_start(s, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT);
  g_assert_cmpstr(error->message, ==, "/nonexistent-dir/x.pftrace: No such file or directory");
  g_clear_error(&error);
  tmr_session_free(s);
  /* The config's output_path is used when the options give none. */
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *text = g_strdup_printf(
      "buffers { size_kb: 64 }\noutput_path: \"%s/from-config.pftrace\"\n", dir);
  tmr_config *with_path = config_of(text);
  s = tmr_session_new(with_path, NULL, &error);
  g_assert_true(tmr_session_start(s, &error));
  finish(s, with_path);
  g_autofree char *written = g_build_filename(dir, "from-config.pftrace", NULL);
  g_assert_true(g_file_test(written, G_FILE_TEST_EXISTS));
  tmr_config_free(config);
  e2e_cleanup(dir);
}

/* --- the trace_config packet --------------------------------------------------------- */

/* The config, as given, is the trace's trace_config packet; unknown
 * fields (here 900, written by number) included. */
static void test_trace_config_packet_is_in_the_trace(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "c.pftrace",
                         "buffers { size_kb: 64 }\nunique_session_name: \"cfg-test\"\n900: 7\n",
                         &config);
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "c.pftrace", NULL);
  g_autofree char *decoded = record_decode(path);
  g_assert_nonnull(strstr(decoded, "packet {\n  trusted_packet_sequence_id: 1\n  trace_config {\n"
                                   "    buffers {\n      size_kb: 64\n    }\n"
                                   "    unique_session_name: \"cfg-test\"\n    900: 7\n  }\n}\n"));
  /* The reader keeps it as metadata trace_config_pbtxt. */
  g_autofree char *pbtxt = record_query(path,
      "SELECT str_value LIKE '%unique_session_name: \"cfg-test\"%' AND "
      "str_value LIKE '%size_kb: 64%' FROM metadata WHERE name = 'trace_config_pbtxt'");
  g_assert_true(g_str_has_suffix(pbtxt, "\n1\n"));
  /* disable_trace_config leaves it out. */
  s = start(dir, "n.pftrace",
            "buffers { size_kb: 64 }\nbuiltin_data_sources { disable_trace_config: true }\n",
            &config);
  finish(s, config);
  g_autofree char *path2 = g_build_filename(dir, "n.pftrace", NULL);
  g_autofree char *decoded2 = record_decode(path2);
  g_assert_null(strstr(decoded2, "trace_config {"));
  e2e_cleanup(dir);
}

/* --- triggers ------------------------------------------------------------------------ */

/* START_TRACING: nothing records before the trigger; after it, for
 * stop_delay_ms (500 ms: the event written as soon as recording begins
 * must make it even when a busy machine stalls this thread). The trigger
 * is a packet of the trace. */
static void test_start_trigger_starts_recording(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "start.pftrace",
                         "buffers { size_kb: 64 }\n"
                         "data_sources { config { name: \"track_event\" } }\n"
                         "trigger_config { trigger_mode: START_TRACING\n"
                         "  triggers { name: \"go\" stop_delay_ms: 500 }\n"
                         "  trigger_timeout_ms: 60000 }\n",
                         &config);
  g_assert_null(tmr_this_thread());
  g_assert_false(tmr_category_enabled(&cat_s));
  tmr_trigger("not ours");
  tmr_trigger("go");
  tmr_writer *w = NULL;
  for (int i = 0; i < 10000 && !(w = tmr_this_thread()); i++)
    g_usleep(1000);
  g_assert_nonnull(w);
  instant("after", 20);
  g_assert_true(tmr_session_wait(s, 60000));
  g_assert_cmpstr(tmr_session_borrow_stop_reason(s), ==, "trigger:go");
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "start.pftrace", NULL);
  g_autofree char *rows = record_query(path,
      "SELECT s.ts, s.name FROM slice s JOIN thread_track tt ON s.track_id = tt.id");
  e2e_assert_text(rows, "\"ts\",\"name\"\n20,\"after\"\n");
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(record_count(decoded, "trigger {"), ==, 1);
  g_autofree char *expected = g_strdup_printf(
      "  trigger {\n    trigger_name: \"go\"\n    producer_name: \"me\"\n"
      "    trusted_producer_uid: %u\n  }\n",
      (unsigned)getuid());
  g_assert_nonnull(strstr(decoded, expected));
  /* The reader shows it as trace_processor does: an instant on the
   * "Trace Triggers" track, with its producer as args. */
  g_autofree char *triggers = record_query(path,
      "SELECT s.dur, s.name, t.name, (SELECT group_concat(key || '=' || display_value, ';') "
      "FROM args a WHERE a.arg_set_id = s.arg_set_id) AS args FROM slice s "
      "JOIN track t ON s.track_id = t.id WHERE t.type = 'triggers'");
  g_autofree char *expected_row = g_strdup_printf(
      "\"dur\",\"name\",\"name\",\"args\"\n0,\"go\",\"Trace Triggers\","
      "\"producer_name=me;trusted_producer_uid=%u\"\n",
      (unsigned)getuid());
  e2e_assert_text(triggers, expected_row);
  e2e_cleanup(dir);
}

/* Triggers after the deciding one are recorded but decide nothing; a
 * session records at most 256 trigger packets in all, so a process that
 * fires in a loop cannot grow its memory. 300 fired before the stop (each
 * queued for the session's thread, which takes them before it handles
 * the stop): 256 recorded. */
static void test_recorded_triggers_are_bounded(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "many.pftrace",
                         "buffers { size_kb: 64 }\n"
                         "data_sources { config { name: \"track_event\" } }\n"
                         "trigger_config { trigger_mode: START_TRACING\n"
                         "  triggers { name: \"go\" stop_delay_ms: 60000 }\n"
                         "  trigger_timeout_ms: 60000 }\n",
                         &config);
  for (int i = 0; i < 300; i++)
    tmr_trigger("go");
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "many.pftrace", NULL);
  g_autofree char *rows = record_query(path,
      "SELECT count(*), min(s.name), max(s.name) FROM slice s JOIN track t "
      "ON s.track_id = t.id WHERE t.type = 'triggers'");
  g_assert_cmpstr(e2e_csv_rows(rows), ==, "256,\"go\",\"go\"\n");
  e2e_cleanup(dir);
}

/* START_TRACING with no trigger: stops at trigger_timeout_ms, nothing
 * recorded. */
static void test_start_trigger_timeout(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "timeout.pftrace",
                         "buffers { size_kb: 64 }\n"
                         "data_sources { config { name: \"track_event\" } }\n"
                         "trigger_config { trigger_mode: START_TRACING\n"
                         "  triggers { name: \"go\" stop_delay_ms: 100 }\n"
                         "  trigger_timeout_ms: 30 }\n",
                         &config);
  g_assert_true(tmr_session_wait(s, 60000));
  g_assert_cmpstr(tmr_session_borrow_stop_reason(s), ==, "trigger_timeout_ms");
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "timeout.pftrace", NULL);
  g_autofree char *rows = record_query(path, "SELECT count(*) FROM slice");
  e2e_assert_text(rows, "\"count(*)\"\n0\n");
  e2e_cleanup(dir);
}

static const char *const stop_config =
    "buffers { size_kb: 64 fill_policy: RING_BUFFER }\n"
    "data_sources { config { name: \"track_event\" } }\n"
    "trigger_config { trigger_mode: STOP_TRACING\n"
    "  triggers { name: \"crash\" stop_delay_ms: 0 producer_name_regex: \"me|helper.*\" }\n"
    "  trigger_timeout_ms: %d }\n";

/* STOP_TRACING, the flight recorder: events before the trigger are kept;
 * a trigger from a producer the regex does not match is ignored (and not
 * recorded); the first matching one stops the session; later ones are
 * recorded but decide nothing. */
static void test_stop_trigger_keeps_what_came_before(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *text = g_strdup_printf(stop_config, 60000);
  tmr_config *config;
  tmr_session *s = start(dir, "stop.pftrace", text, &config);
  instant("before", 5);
  /* Reaches the session, which ignores it: "stranger" is not "me|helper.*". */
  GError *error = NULL;
  g_assert_cmpint(tmr_trigger_send("crash", "stranger", &error), ==, 1);
  g_assert_false(tmr_session_wait(s, 100));
  tmr_trigger("crash");
  g_assert_true(tmr_session_wait(s, 60000));
  g_assert_cmpstr(tmr_session_borrow_stop_reason(s), ==, "trigger:crash");
  instant("after the stop", 6);
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "stop.pftrace", NULL);
  g_autofree char *rows = record_query(path,
      "SELECT s.ts, s.name FROM slice s JOIN thread_track tt ON s.track_id = tt.id");
  e2e_assert_text(rows, "\"ts\",\"name\"\n5,\"before\"\n");
  /* One trigger recorded: the one that matched. */
  g_autofree char *triggers = record_query(path,
      "SELECT s.name FROM slice s JOIN track t ON s.track_id = t.id WHERE t.type = 'triggers'");
  e2e_assert_text(triggers, "\"name\"\n\"crash\"\n");
  e2e_cleanup(dir);
}

/* STOP_TRACING and no trigger by trigger_timeout_ms: "no data": the
 * events are dropped; the trace keeps its config and stats. */
static void test_stop_trigger_timeout_keeps_no_data(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *text = g_strdup_printf(stop_config, 30);
  tmr_config *config;
  tmr_session *s = start(dir, "nodata.pftrace", text, &config);
  instant("lost", 5);
  g_assert_true(tmr_session_wait(s, 60000));
  g_assert_cmpstr(tmr_session_borrow_stop_reason(s), ==, "trigger_timeout_ms");
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "nodata.pftrace", NULL);
  g_autofree char *rows = record_query(path, "SELECT count(*) FROM slice");
  e2e_assert_text(rows, "\"count(*)\"\n0\n");
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(record_count(decoded, "trace_config {"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "trace_stats {"), ==, 1);
  e2e_cleanup(dir);
}

/* A trigger fired by name from another process (record_fire_trigger)
 * reaches the session through the trigger directory; its producer name and
 * the sender's uid are in the trigger packet; a producer the regex does
 * not match is ignored. */
static void test_trigger_from_another_process(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *text = g_strdup_printf(stop_config, 60000);
  tmr_config *config;
  tmr_session *s = start(dir, "x.pftrace", text, &config);
  instant("before", 5);
  const char *tool = g_getenv("TM_FIRE_TRIGGER");
  g_assert_nonnull(tool);
  const char *ignored[] = {tool, "crash", "stranger", NULL};
  g_autofree char *out1 = NULL;
  int status = 0;
  g_assert_true(g_spawn_sync(NULL, (char **)ignored, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out1,
                             NULL, &status, NULL));
  g_assert_cmpstr(out1, ==, "trigger \"crash\" reached 1 session\n");
  g_assert_false(tmr_session_wait(s, 200)); /* not this producer */
  const char *fired[] = {tool, "crash", "helper-7", NULL};
  g_autofree char *out2 = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)fired, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out2, NULL,
                             &status, NULL));
  g_assert_true(tmr_session_wait(s, 60000));
  g_assert_cmpstr(tmr_session_borrow_stop_reason(s), ==, "trigger:crash");
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "x.pftrace", NULL);
  g_autofree char *decoded = record_decode(path);
  g_autofree char *expected = g_strdup_printf(
      "  trigger {\n    trigger_name: \"crash\"\n    producer_name: \"helper-7\"\n"
      "    trusted_producer_uid: %u\n  }\n",
      (unsigned)getuid());
  g_assert_nonnull(strstr(decoded, expected));
  g_assert_cmpuint(record_count(decoded, "trigger {"), ==, 1);
  /* The session's socket is gone with it. */
  const char *again[] = {tool, "crash", NULL};
  g_autofree char *out3 = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)again, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out3, NULL,
                             &status, NULL));
  g_assert_cmpstr(out3, ==, "trigger \"crash\" reached 0 sessions\n");
  e2e_cleanup(dir);
}

/* The trigger directory (TRACEMERGE_TRIGGER_DIR, set by main() before
 * any thread starts). */
static char *trigger_dir;

/* A trigger directory others could write into is refused. */
static void test_trigger_directory_must_be_private(void) {
  g_assert_cmpint(chmod(trigger_dir, 0777), ==, 0);
  GError *error = NULL;
  g_assert_cmpint(tmr_trigger_send("x", NULL, &error), ==, -1);
  g_autofree char *expected = g_strdup_printf(
      "refusing trigger directory %s: it must be a directory of this user with no group or "
      "other permissions (chmod 700)",
      trigger_dir);
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM);
  g_assert_cmpstr(error->message, ==, expected);
  g_clear_error(&error);
  g_assert_cmpint(chmod(trigger_dir, 0700), ==, 0);
  g_assert_cmpint(tmr_trigger_send("", NULL, &error), ==, -1);
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE);
  g_assert_cmpstr(error->message, ==, "a trigger name must be 1 to 1023 bytes of UTF-8");
  g_clear_error(&error);
  g_assert_cmpint(tmr_trigger_send("nobody listens", NULL, &error), ==, 0);
  g_assert_no_error(error);
}

/* --- streaming ---------------------------------------------------------------------- */

/* Waits (up to a minute) until the session has written more than
 * `than` bytes; returns what it has written. */
static uint64_t wait_for_growth(tmr_session *s, uint64_t than) {
  uint64_t written = 0;
  for (int i = 0; i < 6000 && (written = tmr_session_bytes_written(s)) <= than; i++)
    g_usleep(10000);
  return written;
}

/* write_into_file: the file grows while the session runs (every
 * file_write_period_ms, here the 100 ms minimum since 10 was asked). */
static void test_write_into_file_streams(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "stream.pftrace",
                         "buffers { size_kb: 64 }\n"
                         "data_sources { config { name: \"track_event\" } }\n"
                         "write_into_file: true\nfile_write_period_ms: 10\n",
                         &config);
  g_assert_cmpuint(tmr_config_note_count(config), ==, 1);
  g_assert_cmpstr(tmr_config_borrow_note(config, 0), ==,
                  "t.pbtx:4:1: file_write_period_ms: 10 ms is below the 100 ms minimum; 100 ms "
                  "is used");
  instant("early", 1);
  g_autofree char *path = g_build_filename(dir, "stream.pftrace", NULL);
  /* Every periodic write adds at least a clock snapshot and trace_stats,
   * so the count grows at each one. A write under way when "early" was
   * written may have collected the writers before it; the one after it
   * cannot have: wait for two. */
  uint64_t written = tmr_session_bytes_written(s);
  for (int seen = 0; seen < 2;) {
    uint64_t now = wait_for_growth(s, written);
    g_assert_cmpuint(now, >, written);
    written = now;
    seen++;
  }
  /* While running, the file already decodes and holds the event. */
  g_autofree char *midway = record_query(path, "SELECT name FROM slice");
  e2e_assert_text(midway, "\"name\"\n\"early\"\n");
  instant("late", 2);
  finish(s, config);
  g_autofree char *rows = record_query(path, "SELECT ts, name FROM slice ORDER BY ts");
  e2e_assert_text(rows, "\"ts\",\"name\"\n1,\"early\"\n2,\"late\"\n");
  e2e_cleanup(dir);
}

/* max_file_size_bytes: the session stops itself before the file would
 * pass the limit; what was written is whole packets, readable. */
static void test_max_file_size_stops_cleanly(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "max.pftrace",
                         "buffers { size_kb: 1024 }\n"
                         "data_sources { config { name: \"track_event\" } }\n"
                         "write_into_file: true\nfile_write_period_ms: 100\n"
                         "max_file_size_bytes: 6000\n",
                         &config);
  tmr_writer *w = tmr_this_thread();
  for (int i = 0; i < 2000 && !tmr_session_wait(s, 0); i++) {
    tmr_arg arg = TMR_ARG_INT("i", i);
    tmr_event_extras x = {.args = &arg, .n_args = 1};
    tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_s, "tick", 100 + i, &x);
    if (i % 100 == 99)
      g_usleep(20000);
  }
  g_assert_true(tmr_session_wait(s, 60000));
  g_assert_cmpstr(tmr_session_borrow_stop_reason(s), ==, "max_file_size_bytes");
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "max.pftrace", NULL);
  GStatBuf st;
  g_assert_cmpint(g_stat(path, &st), ==, 0);
  g_assert_cmpint(st.st_size, <=, 6000);
  g_assert_cmpint(st.st_size, >, 0);
  /* The ticks kept are the first ones, without a gap. */
  g_autofree char *rows = record_query(path,
      "SELECT count(*) = max(a.int_value) + 1 AND min(a.int_value) = 0 FROM slice s "
      "JOIN args a ON a.arg_set_id = s.arg_set_id AND a.key = 'debug.i'");
  e2e_assert_text(rows, "\"count(*) = max(a.int_value) + 1 AND min(a.int_value) = 0\"\n1\n");
  g_free(record_decode(path)); /* protoc reads it whole */
  e2e_cleanup(dir);
}

#define DRAIN_ROUNDS 12
#define DRAIN_EVENTS 200
#define DRAIN_TEXT 256

/* write_into_file drains the buffers every file_write_period_ms, so a
 * trace grows far beyond its buffer. A 128 KiB DISCARD buffer (which
 * would lose, not overwrite, what does not fit) takes 12 rounds of 200
 * events, each carrying a 256-byte string (debug annotation values are
 * written inline): at least 12 * 200 * 256 = 614,400 bytes of strings,
 * more than 4 * 131,072 = 524,288. A round (about 57 KiB with framing)
 * waits until the buffer is empty again (bytes read = bytes committed),
 * which only a periodic write does (nothing else flushes here), so the
 * buffer never holds more than a round plus a writer's chunk: nothing is
 * discarded, every event is in the file. */
static void test_write_into_file_outgrows_the_buffer(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "big.pftrace",
                         "buffers { size_kb: 128 fill_policy: DISCARD }\n"
                         "data_sources { config { name: \"track_event\" } }\n"
                         "write_into_file: true\nfile_write_period_ms: 100\n",
                         &config);
  char text[DRAIN_TEXT + 1];
  memset(text, 'x', DRAIN_TEXT);
  text[DRAIN_TEXT] = '\0';
  tmr_writer *w = tmr_this_thread();
  for (int round = 0; round < DRAIN_ROUNDS; round++) {
    for (int i = 0; i < DRAIN_EVENTS; i++) {
      int64_t n = (int64_t)round * DRAIN_EVENTS + i;
      tmr_arg args[] = {TMR_ARG_INT("i", n), TMR_ARG_STRING("text", text)};
      tmr_event_extras x = {.args = args, .n_args = 2};
      tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_s, "tick", 100 + n, &x);
    }
    tmr_buffer_stats stats;
    int polls = 0;
    do {
      g_usleep(5000);
      g_assert_true(tmr_session_buffer_stats(s, 0, &stats));
    } while ((stats.bytes_read < stats.bytes_written || stats.bytes_written == 0) &&
             ++polls < 12000);
    g_assert_cmpuint(stats.bytes_read, ==, stats.bytes_written);
    g_assert_cmpuint(stats.chunks_discarded, ==, 0);
  }
  finish(s, config);
  g_autofree char *path = g_build_filename(dir, "big.pftrace", NULL);
  GStatBuf st;
  g_assert_cmpint(g_stat(path, &st), ==, 0);
  g_assert_cmpint(st.st_size, >, 4 * 128 * 1024);
  g_autofree char *rows = record_query(path,
      "SELECT count(*), min(a.int_value), max(a.int_value) FROM slice s "
      "JOIN args a ON a.arg_set_id = s.arg_set_id AND a.key = 'debug.i'");
  g_autofree char *expected = g_strdup_printf(
      "\"count(*)\",\"min(a.int_value)\",\"max(a.int_value)\"\n%d,0,%d\n",
      DRAIN_ROUNDS * DRAIN_EVENTS, DRAIN_ROUNDS * DRAIN_EVENTS - 1);
  e2e_assert_text(rows, expected);
  g_autofree char *lost = record_query(path,
      "SELECT value FROM stats WHERE name = 'traced_buf_chunks_discarded' AND idx = 0");
  e2e_assert_text(lost, "\"value\"\n0\n");
  e2e_cleanup(dir);
}

/* --- data sources ----------------------------------------------------------------------- */

typedef struct source_log {
  GByteArray *config;
  int starts, stops;
} source_log;

static source_log raw_log, filtered_log;

static void on_start(void *user, tmr_data_source_instance *instance, const uint8_t *config,
                     size_t len) {
  source_log *log = user;
  log->starts++;
  g_byte_array_append(log->config, config, (guint)len);
  /* A packet of its own: field 900 ("for_testing" in recorded_trace.proto). */
  static const uint8_t payload[] = {0xa2, 0x38, 0x02, 'h', 'i'};
  tmr_write_packet(tmr_data_source_writer(instance), 77, payload, sizeof payload);
}

static void on_stop(void *user, tmr_data_source_instance *instance) {
  source_log *log = user;
  log->stops++;
  static const uint8_t payload[] = {0xa2, 0x38, 0x03, 'b', 'y', 'e'};
  tmr_write_packet(tmr_data_source_writer(instance), 78, payload, sizeof payload);
}

/* A registered data source gets its DataSourceConfig's bytes exactly as
 * the config holds them, fields this library's schema does not know
 * included (1234, 9999); its packets go to its target_buffer on a
 * sequence of their own; producer filters decide whether it starts. */
static void test_data_source_gets_its_raw_config(void) {
  raw_log.config = g_byte_array_new();
  filtered_log.config = g_byte_array_new();
  tmr_data_source_desc raw = {"com.example.raw", on_start, on_stop, &raw_log};
  tmr_data_source_desc filtered = {"com.example.filtered", on_start, on_stop, &filtered_log};
  GError *error = NULL;
  g_assert_true(tmr_register_data_source(&raw, &error));
  g_assert_true(tmr_register_data_source(&filtered, &error));
  g_assert_false(tmr_register_data_source(&raw, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE);
  g_assert_cmpstr(error->message, ==, "a data source named \"com.example.raw\" is already registered");
  g_clear_error(&error);
  tmr_data_source_desc reserved = {"track_event", NULL, NULL, NULL};
  g_assert_false(tmr_register_data_source(&reserved, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE);
  g_clear_error(&error);

  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "ds.pftrace",
                         "buffers { size_kb: 64 }\nbuffers { size_kb: 64 fill_policy: DISCARD }\n"
                         "data_sources { config { name: \"com.example.raw\" target_buffer: 1\n"
                         "  1234 { 1: 5 2: \"opaque\" } 9999: 3 } }\n"
                         "data_sources { config { name: \"com.example.filtered\" }\n"
                         "  producer_name_filter: \"someone else\" }\n"
                         "data_sources { config { name: \"not.registered\" } }\n",
                         &config);
  g_assert_cmpint(raw_log.starts, ==, 1);
  g_assert_cmpint(filtered_log.starts, ==, 0);
  GError *stop_error = NULL;
  g_assert_true(tmr_session_stop(s, &stop_error));
  g_assert_no_error(stop_error);
  g_assert_cmpint(raw_log.stops, ==, 1);
  g_assert_cmpint(filtered_log.stops, ==, 0);
  /* target_buffer 1: its two packets went to buffer 1, one chunk per
   * writer (on_start wrote on this thread, on_stop on the session's),
   * committed at the final flush; buffer 0 has no data source and got
   * none. */
  tmr_buffer_stats in_0, in_1;
  g_assert_true(tmr_session_buffer_stats(s, 0, &in_0));
  g_assert_true(tmr_session_buffer_stats(s, 1, &in_1));
  tmr_buffer_stats none;
  g_assert_false(tmr_session_buffer_stats(s, 2, &none)); /* two buffers: 0 and 1 */
  g_assert_cmpuint(in_0.chunks_written, ==, 0);
  g_assert_cmpuint(in_1.chunks_written, ==, 2);
  g_assert_cmpuint(in_1.chunks_read, ==, 2);
  tmr_session_free(s);
  tmr_config_free(config);
  /* name (0x0a, 15 bytes), target_buffer 1 (0x10 0x01), field 1234
   * (0x92 0x4d) of 10 bytes {1: 5, 2: "opaque"}, field 9999 (0xf8 0xf0
   * 0x04) = 3: the text's fields in the text's order. */
  static const uint8_t expected[] = {
      0x0a, 0x0f, 'c', 'o', 'm', '.', 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'r', 'a', 'w',
      0x10, 0x01,
      0x92, 0x4d, 0x0a, 0x08, 0x05, 0x12, 0x06, 'o', 'p', 'a', 'q', 'u', 'e',
      0xf8, 0xf0, 0x04, 0x03};
  g_assert_cmpmem(raw_log.config->data, raw_log.config->len, expected, sizeof expected);
  g_autofree char *path = g_build_filename(dir, "ds.pftrace", NULL);
  g_autofree char *decoded = record_decode(path);
  g_assert_nonnull(strstr(decoded, "  timestamp: 77\n  trusted_packet_sequence_id: 2\n"));
  g_assert_nonnull(strstr(decoded, "  for_testing: \"hi\"\n"));
  g_assert_nonnull(strstr(decoded, "  for_testing: \"bye\"\n"));
  g_autofree char *by_buffer = record_query(path,
      "SELECT idx, value FROM stats WHERE name = 'traced_buf_chunks_written' "
      "ORDER BY idx");
  e2e_assert_text(by_buffer, "\"idx\",\"value\"\n0,0\n1,2\n");
  g_assert_nonnull(strstr(decoded, "  timestamp: 78\n  trusted_packet_sequence_id: 3\n"));
  /* A producer regex that matches starts it (a full match of "me"). */
  s = start(dir, "ds2.pftrace",
            "buffers { size_kb: 64 }\n"
            "data_sources { config { name: \"com.example.filtered\" }\n"
            "  producer_name_regex_filter: \"m.\" }\n",
            &config);
  g_assert_cmpint(filtered_log.starts, ==, 1);
  finish(s, config);
  s = start(dir, "ds3.pftrace",
            "buffers { size_kb: 64 }\n"
            "data_sources { config { name: \"com.example.filtered\" }\n"
            "  producer_name_regex_filter: \"m\" }\n",
            &config);
  g_assert_cmpint(filtered_log.starts, ==, 1);
  finish(s, config);
  g_byte_array_unref(raw_log.config);
  g_byte_array_unref(filtered_log.config);
  e2e_cleanup(dir);
}

/* track_event with a producer filter that does not match this process:
 * nothing records TrackEvents. */
static void test_track_event_producer_filter(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_config *config;
  tmr_session *s = start(dir, "f.pftrace",
                         "buffers { size_kb: 64 }\n"
                         "data_sources { config { name: \"track_event\" }\n"
                         "  producer_name_filter: \"other\" }\n",
                         &config);
  g_assert_null(tmr_this_thread());
  finish(s, config);
  e2e_cleanup(dir);
}

/* --- unique session names ---------------------------------------------------------------- */

/* unique_session_name: a second session of that name (in any process of
 * this user) is refused while the first runs. */
static void test_unique_session_name(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *text = "buffers { size_kb: 64 }\nunique_session_name: \"only/one\"\n";
  tmr_config *config;
  tmr_session *first = start(dir, "u1.pftrace", text, &config);
  tmr_config *config2 = config_of(text);
  g_autofree char *path = g_build_filename(dir, "u2.pftrace", NULL);
  tmr_session_options options = {.output_path = path};
  GError *error = NULL;
  tmr_session *second = tmr_session_new(config2, &options, &error);
  g_assert_false(tmr_session_start(second, &error));
  g_autofree char *expected = g_strdup_printf(
      "a session with unique_session_name \"only/one\" is already running (pid %d)",
      (int)getpid());
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE);
  g_assert_cmpstr(error->message, ==, expected);
  g_clear_error(&error);
  tmr_session_free(second);
  finish(first, config);
  tmr_session *third = tmr_session_new(config2, &options, &error);
  g_assert_true(tmr_session_start(third, &error));
  finish(third, config2);
  e2e_cleanup(dir);
}

/* --- configs ------------------------------------------------------------------------------ */

static void assert_config_refused(const char *text, const char *message) {
  GError *error = NULL;
  g_assert_null(tmr_config_parse_text(text, strlen(text), "r.pbtx", &error));
  g_assert_nonnull(error);
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG);
  if (strcmp(error->message, message) != 0)
    g_error("for %s\nexpected: %s\nactual:   %s", text, message, error->message);
  g_error_free(error);
}

/* The refusals the issue names, through the recording API. */
static void test_configs_refused_with_the_reason(void) {
  assert_config_refused("buffers { size_kb: 64 fill_policy: RINGBUFFER }",
                        "r.pbtx:1:36: unknown value 'RINGBUFFER' for fill_policy (enum "
                        "perfetto.protos.TraceConfig.BufferConfig.FillPolicy; expected one of "
                        "UNSPECIFIED, RING_BUFFER, DISCARD)");
  assert_config_refused("buffers { size_kb: 0 }",
                        "r.pbtx:1:11: buffers[0].size_kb: buffer 0 has 0 bytes; give it size_kb > 0");
  assert_config_refused("buffers { size_kb: 4 }\n"
                        "data_sources { config { name: \"track_event\" target_buffer: 1 } }",
                        "r.pbtx:2:45: data_sources[0].config.target_buffer: target_buffer 1 of "
                        "data source \"track_event\" is out of range: the config has 1 buffer "
                        "(0..0)");
  assert_config_refused("buffers { size_kb: 4 }\nduration_ms: 10000\n"
                        "trigger_config { trigger_mode: START_TRACING triggers { name: \"t\" } "
                        "trigger_timeout_ms: 5 }",
                        "r.pbtx:2:1: duration_ms: duration_ms and a START_TRACING trigger cannot "
                        "be used together: the trace lasts stop_delay_ms after its trigger (give "
                        "each trigger a stop_delay_ms instead)");
  /* Binary: the same checks, by offset and field path. */
  static const uint8_t bad_enum[] = {0x0a, 0x04, 0x08, 0x04, 0x20, 0x07};
  GError *error = NULL;
  g_assert_null(tmr_config_parse_binary(bad_enum, sizeof bad_enum, "r.bin", &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG);
  g_assert_cmpstr(error->message, ==,
                  "r.bin: byte 4: buffers[0].fill_policy: unknown value 7 for enum "
                  "perfetto.protos.TraceConfig.BufferConfig.FillPolicy");
  g_clear_error(&error);
  g_assert_null(tmr_config_load("/nonexistent/x.pbtx", TMR_CONFIG_AUTO, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG);
  g_assert_nonnull(strstr(error->message, "/nonexistent/x.pbtx: "));
  g_clear_error(&error);
}

/* Known fields this library does not act on are noted, not refused. */
static void test_ignored_fields_are_noted(void) {
  tmr_config *config = config_of("buffers { size_kb: 64 transfer_on_clone: true }\n"
                                 "deferred_start: true\ncompression_type: COMPRESSION_TYPE_DEFLATE\n"
                                 "max_file_size_bytes: 5\n");
  const char *expected[] = {
      "t.pbtx:2:1: deferred_start: known to perfetto but ignored by this library "
      "(tmr_session_start starts the session)",
      "t.pbtx:3:1: compression_type: known to perfetto but ignored by this library (traces are "
      "written uncompressed)",
      "t.pbtx:4:1: max_file_size_bytes: applies only with write_into_file: true; the trace is "
      "written when the session stops",
      "t.pbtx:1:1: buffers[0]: known to perfetto but ignored by this library (sessions are not "
      "cloned)"};
  g_assert_cmpuint(tmr_config_note_count(config), ==, G_N_ELEMENTS(expected));
  for (size_t i = 0; i < G_N_ELEMENTS(expected); i++)
    g_assert_cmpstr(tmr_config_borrow_note(config, i), ==, expected[i]);
  g_assert_null(tmr_config_borrow_note(config, 99));
  g_autofree char *text = tmr_config_to_text(config);
  g_assert_cmpstr(text, ==,
                  "buffers {\n  size_kb: 64\n  transfer_on_clone: true\n}\ndeferred_start: true\n"
                  "compression_type: COMPRESSION_TYPE_DEFLATE\nmax_file_size_bytes: 5\n");
  tmr_config_free(config);
  /* The default config: one 4 MiB ring buffer with track_event. */
  tmr_config *fallback = tmr_config_new_default();
  g_autofree char *fallback_text = tmr_config_to_text(fallback);
  g_assert_cmpstr(fallback_text, ==,
                  "buffers {\n  size_kb: 4096\n  fill_policy: RING_BUFFER\n}\n"
                  "data_sources {\n  config {\n    name: \"track_event\"\n  }\n}\n");
  tmr_config_free(fallback);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  /* A private trigger directory for this run: sessions with triggers and
   * unique names use it, and so do the processes this test spawns. */
  g_autofree char *run_dir = e2e_tmpdir();
  trigger_dir = g_build_filename(run_dir, "triggers", NULL);
  g_assert_cmpint(g_mkdir(trigger_dir, 0700), ==, 0);
  g_setenv("TRACEMERGE_TRIGGER_DIR", trigger_dir, TRUE);
  g_test_add_func("/record/session/duration-stops-the-session", test_duration_stops_the_session);
  g_test_add_func("/record/session/stop-is-idempotent-and-start-once",
                  test_stop_is_idempotent_and_start_once);
  g_test_add_func("/record/session/one-track-event-session-at-a-time",
                  test_one_track_event_session_at_a_time);
  g_test_add_func("/record/session/needs-an-output", test_session_needs_an_output);
  g_test_add_func("/record/session/trace-config-packet-is-in-the-trace",
                  test_trace_config_packet_is_in_the_trace);
  g_test_add_func("/record/triggers/start-trigger-starts-recording",
                  test_start_trigger_starts_recording);
  g_test_add_func("/record/triggers/start-trigger-timeout", test_start_trigger_timeout);
  g_test_add_func("/record/triggers/recorded-triggers-are-bounded",
                  test_recorded_triggers_are_bounded);
  g_test_add_func("/record/triggers/stop-trigger-keeps-what-came-before",
                  test_stop_trigger_keeps_what_came_before);
  g_test_add_func("/record/triggers/stop-trigger-timeout-keeps-no-data",
                  test_stop_trigger_timeout_keeps_no_data);
  g_test_add_func("/record/triggers/from-another-process", test_trigger_from_another_process);
  g_test_add_func("/record/triggers/directory-must-be-private",
                  test_trigger_directory_must_be_private);
  g_test_add_func("/record/streaming/write-into-file-streams", test_write_into_file_streams);
  g_test_add_func("/record/streaming/write-into-file-outgrows-the-buffer",
                  test_write_into_file_outgrows_the_buffer);
  g_test_add_func("/record/streaming/max-file-size-stops-cleanly",
                  test_max_file_size_stops_cleanly);
  g_test_add_func("/record/data-sources/get-their-raw-config", test_data_source_gets_its_raw_config);
  g_test_add_func("/record/data-sources/track-event-producer-filter",
                  test_track_event_producer_filter);
  g_test_add_func("/record/session/unique-session-name", test_unique_session_name);
  g_test_add_func("/record/config/refused-with-the-reason", test_configs_refused_with_the_reason);
  g_test_add_func("/record/config/ignored-fields-are-noted", test_ignored_fields_are_noted);
  int status = g_test_run();
  e2e_cleanup(run_dir);
  g_free(trigger_dir);
  return status;
}
