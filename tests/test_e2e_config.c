/*
 * Merge configs end to end: `tracemerge query|import|info --config FILE`
 * and `config-check`, each config field changing the merged result as
 * docs say (README, config/).
 *
 * Times: the JSON fixtures' ts are µs, and the first clockless file's
 * private clock is trace time, so an event at ts T µs is at T * 1000 ns
 * in the tables. A second file of a manifest that syncs it to the first
 * with offset_ns 100000 is 100 µs later (docs/clock-model.md §9.3).
 *
 * The test-abi reader (tests/plugins/abi) writes the bytes its open()
 * received, hex-encoded, as the metadata row abi_test_config.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include <string.h>

#include "e2e_support.h"

/* A Chrome JSON trace of instants named e0, e1, ... at ts 0, 1000, 2000,
 * ... µs (1 ms apart) on thread (1, 1). */
static char *json_instants(const char *prefix, int n) {
  GString *s = g_string_new("{\"traceEvents\":[\n");
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%s%d\",\"ts\":%d,\"pid\":1,\"tid\":1}\n",
                           i ? "," : "", prefix, i, i * 1000);
  g_string_append(s, "]}\n");
  return g_string_free(s, FALSE);
}

/* Runs `tracemerge COMMAND INPUTS --config CONFIG EXTRA...` in `dir`. */
static e2e_result run_with_config(const char *dir, const char *command,
                                  const char *const *inputs, const char *config,
                                  const char *const *extra) {
  GPtrArray *args = g_ptr_array_new();
  g_ptr_array_add(args, (char *)command);
  for (size_t i = 0; inputs && inputs[i]; i++)
    g_ptr_array_add(args, (char *)inputs[i]);
  if (config) {
    g_ptr_array_add(args, "--config");
    g_ptr_array_add(args, (char *)config);
  }
  for (size_t i = 0; extra && extra[i]; i++)
    g_ptr_array_add(args, (char *)extra[i]);
  g_ptr_array_add(args, NULL);
  e2e_result r = e2e_run_in(dir, (const char *const *)args->pdata);
  g_ptr_array_free(args, TRUE);
  return r;
}

/* Writes `config_text` as dir/merge.pbtx, queries `inputs` with it and
 * asserts success with an empty stderr; returns stdout. */
static char *query_with(const char *dir, const char *const *inputs, const char *config_text,
                        const char *sql) {
  g_autofree char *path = e2e_write_file(dir, "merge.pbtx", config_text, 0);
  const char *extra[] = {"--sql", sql, NULL};
  e2e_result r = run_with_config(dir, "query", inputs, "merge.pbtx", extra);
  if (r.exit_code != 0 || r.err[0])
    g_error("query failed (exit %d): %s\nstdout: %s", r.exit_code, r.err, r.out);
  char *out = g_steal_pointer(&r.out);
  e2e_result_clear(&r);
  return out;
}

static char *abi_plugin_dir(void) {
  const char *dir = g_getenv("TM_ABI_TEST_READERS");
  g_assert_nonnull(dir);
  return g_strdup(dir);
}

#define CONFIG_BYTES_SQL "SELECT str_value FROM metadata WHERE name = 'abi_test_config'"

/* --- the reader's own config ------------------------------------------- */

/* The block's fields encode as protobuf: 1: 1000 is 08 e8 07; 2: "x" is
 * 12 01 78; 3 { 4: 5 } is 1a 02 20 05; 150: 7 (a field nobody's schema
 * names) is tag 150 << 3 = 1200 = b0 09, then 07. */
static void test_a_text_block_reaches_the_plugin_byte_for_byte(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *plugins = abi_plugin_dir();
  g_autofree char *input = e2e_write_file(dir, "a.abi", "#tm-abi\nslice 1000 a\n", 0);
  g_autofree char *config = e2e_write_file(
      dir, "merge.pbtx",
      "data_sources { config { name: \"test-abi\"\n"
      "  abi_test_config { 1: 1000 2: \"x\" 3 { 4: 5 } 150: 7 } } }\n",
      0);
  const char *inputs[] = {"a.abi", NULL};
  const char *extra[] = {"--plugin-dir", plugins, "--sql", CONFIG_BYTES_SQL, NULL};
  e2e_result r = run_with_config(dir, "query", inputs, "merge.pbtx", extra);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  e2e_assert_text(r.out, "\"str_value\"\n\"08e807120178" "1a022005" "b00907\"\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* A binary config, encoded here by hand:
 *   12 1a            TraceConfig.data_sources, 26 bytes
 *     0a 18          DataSource.config, 24 bytes
 *       0a 08 "test-abi"        name
 *       c2 b8 02 07 <block>     field 5000 (tag 40002), 7 bytes
 *       b8 3e 01                field 999: 1 (not in the host's schema)
 * block: 08 2a (1: 42), a2 06 02 "hi" (100: "hi"): fields of the reader's
 * own, which the host never decodes. The reader gets the 7 block bytes
 * exactly; the unknown field 999 is noted on stderr and goes nowhere. */
static void test_a_binary_block_with_unknown_fields_reaches_the_plugin_as_given(void) {
  static const uint8_t config_bin[] = {
      0x12, 0x1a, 0x0a, 0x18, 0x0a, 0x08, 0x74, 0x65, 0x73, 0x74, 0x2d, 0x61, 0x62, 0x69,
      0xc2, 0xb8, 0x02, 0x07, 0x08, 0x2a, 0xa2, 0x06, 0x02, 0x68, 0x69, 0xb8, 0x3e, 0x01};
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *plugins = abi_plugin_dir();
  g_autofree char *input = e2e_write_file(dir, "a.abi", "#tm-abi\nslice 1000 a\n", 0);
  g_autofree char *config =
      e2e_write_file(dir, "merge.bin", (const char *)config_bin, sizeof config_bin);
  const char *inputs[] = {"a.abi", NULL};
  const char *extra[] = {"--plugin-dir", plugins, "--sql", CONFIG_BYTES_SQL, NULL};
  e2e_result r = run_with_config(dir, "query", inputs, "merge.bin", extra);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "\"str_value\"\n\"082aa206026869\"\n");
  g_assert_nonnull(strstr(r.err, "tracemerge: note: merge.bin: data_sources[0].config: field "
                                 "999 is not in this build's schema"));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* --- data sources ------------------------------------------------------- */

static void test_a_reader_not_listed_is_disabled(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *plugins = abi_plugin_dir();
  g_autofree char *json_text = e2e_json_slice("from_json", 1, 1, 5);
  g_autofree char *json = e2e_write_file(dir, "a.json", json_text, 0);
  g_autofree char *abi = e2e_write_file(dir, "b.abi", "#tm-abi\nslice 1000 from_abi\n", 0);
  g_autofree char *config =
      e2e_write_file(dir, "merge.pbtx", "data_sources { config { name: \"json\" } }\n", 0);
  const char *inputs[] = {"a.json", "b.abi", NULL};
  const char *extra[] = {"--plugin-dir", plugins, "--sql",
                         "SELECT (SELECT group_concat(name) FROM slice) AS slices, "
                         "(SELECT group_concat(s.value || ' ' || f.name) FROM stats s JOIN "
                         "trace_file f ON f.id = s.trace_id "
                         "WHERE s.name = 'merge_file_not_selected') AS skipped",
                         NULL};
  e2e_result r = run_with_config(dir, "query", inputs, "merge.pbtx", extra);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  e2e_assert_text(r.out, "\"slices\",\"skipped\"\n\"from_json\",\"1 b.abi\"\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_filters_select_files_by_name_and_regex(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *files[][2] = {{"phone.json", "p"}, {"server-1.json", "s1"},
                            {"server-22.json", "s22"}, {"xserver-3.json", "x3"}};
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    g_autofree char *text = e2e_json_slice(files[i][1], 1, 1, 5);
    g_autofree char *path = e2e_write_file(dir, files[i][0], text, 0);
  }
  const char *inputs[] = {"phone.json", "server-1.json", "server-22.json", "xserver-3.json", NULL};
  g_autofree char *out = query_with(
      dir, inputs,
      "data_sources { config { name: \"json\" } producer_name_filter: \"phone.json\"\n"
      "  producer_name_regex_filter: \"server-[0-9]+\\\\.json\" }\n",
      "SELECT name FROM slice ORDER BY name");
  /* xserver-3.json: the regex matches whole names only. */
  e2e_assert_text(out, "\"name\"\n\"p\"\n\"s1\"\n\"s22\"\n");
  e2e_cleanup(dir);
}

static const char two_machines_manifest[] =
    "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
    "  {\"path\": \"phone.json\", \"machine\": {\"name\": \"phone\"}},\n"
    "  {\"path\": \"server.json\", \"machine\": {\"name\": \"backend\"},\n"
    "   \"clocks\": {\"sync_to\": {\"file\": \"phone.json\"}, \"offset_ns\": 100000}}]}}\n";

/* Slices of 1 µs at 1000, 2000, 3000, 4000 µs on each machine, and on the
 * backend an instant "crash" at 2500 µs (2 600 000 ns in trace time). */
static char *write_two_machines(const char *dir) {
  GString *p = g_string_new("{\"traceEvents\":[\n");
  GString *s = g_string_new("{\"traceEvents\":[\n");
  for (int i = 1; i <= 4; i++) {
    g_string_append_printf(p, "%s{\"ph\":\"X\",\"name\":\"phone%d\",\"ts\":%d,\"dur\":1,\"pid\":1,\"tid\":1}\n",
                           i > 1 ? "," : "", i, i * 1000);
    g_string_append_printf(s, "%s{\"ph\":\"X\",\"name\":\"server%d\",\"ts\":%d,\"dur\":1,\"pid\":2,\"tid\":2}\n",
                           i > 1 ? "," : "", i, i * 1000);
  }
  g_string_append(s, ",{\"ph\":\"i\",\"s\":\"t\",\"name\":\"crash\",\"ts\":2500,\"pid\":2,\"tid\":2}\n");
  g_string_append(p, "]}\n");
  g_string_append(s, "]}\n");
  const e2e_member members[] = {{"perfetto_manifest.json", two_machines_manifest, 0},
                                {"phone.json", p->str, 0},
                                {"server.json", s->str, 0}};
  char *zip = e2e_write_archive(dir, "run.zip", E2E_ZIP, members, G_N_ELEMENTS(members));
  g_string_free(p, TRUE);
  g_string_free(s, TRUE);
  return zip;
}

static void test_machine_name_filter_selects_a_machines_files(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = write_two_machines(dir);
  const char *inputs[] = {"run.zip", NULL};
  g_autofree char *out =
      query_with(dir, inputs,
                 "data_sources { config { name: \"json\" } machine_name_filter: \"backend\" }\n",
                 "SELECT name FROM slice ORDER BY ts");
  e2e_assert_text(out, "\"name\"\n\"server1\"\n\"server2\"\n\"crash\"\n\"server3\"\n\"server4\"\n");
  e2e_cleanup(dir);
}

/* --- refusals ------------------------------------------------------------ */

/* Runs a query with `config_text` as merge.pbtx and asserts it is refused
 * before any input is read: exit 1, no output, and one stderr line that
 * is "tracemerge: " + `message` (or, with `prefix`, starts with it). */
static void assert_config_refused_as(const char *config_text, const char *message, bool prefix) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *json_text = e2e_json_slice("a", 1, 1, 5);
  g_autofree char *json = e2e_write_file(dir, "a.json", json_text, 0);
  g_autofree char *config = e2e_write_file(dir, "merge.pbtx", config_text, 0);
  const char *inputs[] = {"a.json", NULL};
  const char *extra[] = {"--sql", "SELECT count(*) FROM slice", NULL};
  e2e_result r = run_with_config(dir, "query", inputs, "merge.pbtx", extra);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_autofree char *line = g_strdup_printf("tracemerge: %s%s", message, prefix ? "" : "\n");
  if (prefix) {
    g_assert_true(g_str_has_prefix(r.err, line));
    g_assert_true(g_str_has_suffix(r.err, "\n") && !strchr(r.err, '\n')[1]);
  } else {
    e2e_assert_text(r.err, line);
  }
  e2e_assert_text(r.out, "");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void assert_config_refused(const char *config_text, const char *message) {
  assert_config_refused_as(config_text, message, false);
}

/* The list of readers loaded is what the build tree holds: checked up to
 * the first of them, which "example" is alphabetically among ours. */
static void test_a_reader_that_does_not_exist_is_refused(void) {
  assert_config_refused_as(
      "buffers { size_kb: 64 }\ndata_sources { config { name: \"chrome_json\" } }\n",
      "merge.pbtx:2:25: data_sources[0].config.name: no reader named 'chrome_json' is loaded "
      "(readers: example, ",
      true);
}

static void test_a_target_buffer_out_of_range_is_refused(void) {
  assert_config_refused(
      "buffers { size_kb: 64 }\nbuffers { size_kb: 64 }\n"
      "data_sources { config { name: \"json\" target_buffer: 2 } }\n",
      "merge.pbtx:3:38: data_sources[0].config.target_buffer: target_buffer 2 of data source "
      "\"json\" is out of range: the config has 2 buffers (0..1)");
}

static void test_a_malformed_config_is_refused_with_its_position(void) {
  assert_config_refused("buffers { size_kb: 64 fill_policy: RING }\n",
                        "merge.pbtx:1:36: unknown value 'RING' for fill_policy (enum "
                        "perfetto.protos.TraceConfig.BufferConfig.FillPolicy; expected one of "
                        "UNSPECIFIED, RING_BUFFER, DISCARD)");
}

static void test_a_missing_config_file_is_refused(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *json_text = e2e_json_slice("a", 1, 1, 5);
  g_autofree char *json = e2e_write_file(dir, "a.json", json_text, 0);
  const char *inputs[] = {"a.json", NULL};
  const char *extra[] = {"--sql", "SELECT 1", NULL};
  e2e_result r = run_with_config(dir, "query", inputs, "nope.pbtx", extra);
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.err, "tracemerge: nope.pbtx: Failed to open file “nope.pbtx”: No such "
                         "file or directory\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* --- buffers ------------------------------------------------------------- */

/* The kept instants are the K with the largest ts when RING_BUFFER, the K
 * smallest when DISCARD, K being what the buffer held (written minus
 * dropped, from stats): names e(N-K)..e(N-1) or e0..e(K-1). */
static void check_buffer_keeps(const char *policy, bool newest) {
  enum { N = 200 };
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = json_instants("e", N);
  g_autofree char *json = e2e_write_file(dir, "a.json", trace, 0);
  const char *inputs[] = {"a.json", NULL};
  g_autofree char *config_text = g_strdup_printf(
      "buffers { size_kb: 2 fill_policy: %s }\ndata_sources { config { name: \"json\" } }\n",
      policy);
  const char *drop_stat = newest ? "merge_buf_events_overwritten" : "merge_buf_events_discarded";
  g_autofree char *sql = g_strdup_printf(
      "SELECT (SELECT value FROM stats WHERE name = 'merge_buf_events_written' AND idx = 0),"
      " (SELECT value FROM stats WHERE name = '%s' AND idx = 0),"
      " (SELECT value FROM stats WHERE name = 'merge_buf_buffer_size' AND idx = 0),"
      " count(*), min(ts), max(ts) FROM slice",
      drop_stat);
  g_autofree char *out = query_with(dir, inputs, config_text, sql);
  int64_t written, dropped, size, count, min_ts, max_ts;
  g_assert_cmpint(sscanf(e2e_csv_rows(out), "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                                            ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                                            ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT,
                         &written, &dropped, &size, &count, &min_ts, &max_ts),
                  ==, 6);
  g_assert_cmpint(written, ==, N);
  g_assert_cmpint(size, ==, 2048);
  int64_t kept = written - dropped;
  g_assert_cmpint(kept, >, 0);
  g_assert_cmpint(kept, <, N);
  g_assert_cmpint(count, ==, kept);
  /* Contiguous: K instants 1 ms apart span (K - 1) ms. */
  g_assert_cmpint(max_ts - min_ts, ==, (kept - 1) * 1000000);
  if (newest)
    g_assert_cmpint(max_ts, ==, (N - 1) * INT64_C(1000000));
  else
    g_assert_cmpint(min_ts, ==, 0);
  e2e_cleanup(dir);
}

static void test_a_ring_buffer_keeps_the_newest_events(void) {
  check_buffer_keeps("RING_BUFFER", true);
}

static void test_a_discard_buffer_keeps_the_oldest_events(void) {
  check_buffer_keeps("DISCARD", false);
}

/* Two files, each into its own buffer: a small one drops, a large one
 * keeps all; `info` shows both. */
/* A buffered proto file's ftrace events (and logs) go through the buffer
 * as its other events do, their staged args with them: the ftrace events
 * and their args equal the unbuffered import's. Before, they bypassed the
 * buffer and kept the buffer's staged refs as arg_set_id, their args lost. */
static void test_a_buffered_files_ftrace_events_keep_their_args(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *pb = e2e_proto_fixture_path("ftrace_kinds");
  const char *inputs[] = {pb, NULL};
  const char *sql = "SELECT e.ts, e.name, a.key, a.display_value FROM ftrace_event e "
                    "LEFT JOIN args a USING (arg_set_id) ORDER BY e.ts, e.name, a.key";
  const char *extra[] = {"--sql", sql, NULL};
  e2e_result plain = run_with_config(dir, "query", inputs, NULL, extra);
  g_assert_cmpint(plain.exit_code, ==, 0);
  const char *config = "buffers { size_kb: 1024 }\n"
                       "data_sources { config { name: \"proto\" target_buffer: 0 } }\n";
  g_autofree char *buffered = query_with(dir, inputs, config, sql);
  g_assert_cmpstr(buffered, ==, plain.out);
  g_autofree char *has_args = query_with(
      dir, inputs, config,
      "SELECT count(*) > 0 AS has_args FROM ftrace_event e JOIN args a USING (arg_set_id)");
  e2e_assert_text(has_args, "\"has_args\"\n1\n");
  e2e_result_clear(&plain);
  e2e_cleanup(dir);
}

static void test_target_buffer_maps_files_to_buffers(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *a_text = json_instants("a", 200);
  g_autofree char *b_text = json_instants("b", 200);
  g_autofree char *a = e2e_write_file(dir, "a.json", a_text, 0);
  g_autofree char *b = e2e_write_file(dir, "b.json", b_text, 0);
  g_autofree char *config = e2e_write_file(
      dir, "merge.pbtx",
      "buffers { size_kb: 2 fill_policy: RING_BUFFER }\n"
      "buffers { size_kb: 1024 fill_policy: DISCARD }\n"
      "data_sources { config { name: \"json\" target_buffer: 0 } producer_name_filter: \"a.json\" }\n"
      "data_sources { config { name: \"json\" target_buffer: 1 } }\n",
      0);
  const char *inputs[] = {"a.json", "b.json", NULL};
  e2e_result r = run_with_config(dir, "info", inputs, "merge.pbtx", NULL);
  g_assert_cmpint(r.exit_code, ==, 0);
  g_assert_nonnull(strstr(r.out, "  file [0] a.json: data_sources[0] (json) buffer 0\n"
                                 "  file [1] b.json: data_sources[1] (json) buffer 1\n"));
  g_assert_nonnull(strstr(r.out, "  buffer 1: 1048576 bytes, DISCARD; 200 events written, 0 "
                                 "discarded"));
  g_assert_nonnull(strstr(r.out, "  buffer 0: 2048 bytes, RING_BUFFER; 200 events written, "));
  g_assert_nonnull(strstr(r.out, "  merge_buf_events_overwritten[0]"));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* --- the window ---------------------------------------------------------- */

/* Instants e0..e9 at 0..9 ms: start_offset_ms 2 and duration_ms 3 keep
 * [2 ms, 5 ms): e2, e3, e4. */
static void test_start_offset_and_duration_keep_a_window(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = json_instants("e", 10);
  g_autofree char *json = e2e_write_file(dir, "a.json", trace, 0);
  const char *inputs[] = {"a.json", NULL};
  g_autofree char *out = query_with(
      dir, inputs, "start_offset_ms: 2 duration_ms: 3\n",
      "SELECT group_concat(name) AS kept, (SELECT value FROM stats WHERE name = "
      "'merge_events_outside_window') AS outside FROM (SELECT name FROM slice ORDER BY ts)");
  e2e_assert_text(out, "\"kept\",\"outside\"\n\"e2,e3,e4\",7\n");
  e2e_cleanup(dir);
}

/* A slice begun (B) at 1 ms and ended (E) at 3 ms, and one from 3 to 4 ms:
 * with the window starting at 2 ms, the first goes entirely (its end is
 * no misplaced end), the second stays whole. */
static void test_an_end_whose_begin_was_cut_goes_with_it(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *json = e2e_write_file(
      dir, "a.json",
      "{\"traceEvents\":[\n"
      "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"start\",\"ts\":0,\"pid\":1,\"tid\":1},\n"
      "{\"ph\":\"B\",\"name\":\"early\",\"ts\":1000,\"pid\":1,\"tid\":1},\n"
      "{\"ph\":\"E\",\"ts\":3000,\"pid\":1,\"tid\":1},\n"
      "{\"ph\":\"B\",\"name\":\"inside\",\"ts\":3000,\"pid\":1,\"tid\":1},\n"
      "{\"ph\":\"E\",\"ts\":4000,\"pid\":1,\"tid\":1}]}\n",
      0);
  const char *inputs[] = {"a.json", NULL};
  g_autofree char *out = query_with(
      dir, inputs, "start_offset_ms: 2\n",
      "SELECT name, ts, dur, (SELECT sum(value) FROM stats WHERE name = "
      "'misplaced_end_event') AS misplaced FROM slice");
  e2e_assert_text(out, "\"name\",\"ts\",\"dur\",\"misplaced\"\n\"inside\",3000000,1000000,0\n");
  e2e_cleanup(dir);
}

/* START_TRACING: instants e0..e9 at 0..9 ms and a trigger "go" at 4.5 ms
 * with stop_delay_ms 2: the window is [4.5 ms, 6.5 ms]: go, e5, e6. */
static void test_a_start_trigger_keeps_what_follows_it(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = json_instants("e", 10);
  /* Append the trigger before the closing "]}". */
  char *end = strstr(trace, "]}");
  *end = '\0';
  g_autofree char *with_trigger = g_strconcat(
      trace, ",{\"ph\":\"i\",\"s\":\"t\",\"name\":\"go\",\"ts\":4500,\"pid\":1,\"tid\":1}]}\n",
      NULL);
  g_autofree char *json = e2e_write_file(dir, "a.json", with_trigger, 0);
  const char *inputs[] = {"a.json", NULL};
  g_autofree char *out = query_with(
      dir, inputs,
      "trigger_config { trigger_mode: START_TRACING trigger_timeout_ms: 10000\n"
      "  triggers { name: \"go\" stop_delay_ms: 2 } }\n",
      "SELECT group_concat(name) AS kept, (SELECT int_value FROM metadata WHERE name = "
      "'merge_trigger_ts') AS trigger FROM (SELECT name FROM slice ORDER BY ts)");
  e2e_assert_text(out, "\"kept\",\"trigger\"\n\"go,e5,e6\",4500000\n");
  e2e_cleanup(dir);
}

/* STOP_TRACING: the crash on the backend at 2 600 000 ns ends the window
 * for both machines: phone1 (1 000 000), server1 (1 100 000), phone2
 * (2 000 000), server2 (2 100 000) and the crash stay; everything after
 * goes, on the phone too. */
static void test_a_stop_trigger_on_one_machine_cuts_all_machines(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = write_two_machines(dir);
  const char *inputs[] = {"run.zip", NULL};
  g_autofree char *out = query_with(
      dir, inputs,
      "trigger_config { trigger_mode: STOP_TRACING trigger_timeout_ms: 60000\n"
      "  triggers { name: \"crash\" } }\n",
      "SELECT s.ts, s.name, m.name AS machine FROM slice s JOIN thread_track tt ON "
      "s.track_id = tt.id JOIN thread USING (utid) JOIN machine m ON m.id = thread.machine_id "
      "ORDER BY s.ts");
  e2e_assert_text(out, "\"ts\",\"name\",\"machine\"\n"
                       "1000000,\"phone1\",\"phone\"\n"
                       "1100000,\"server1\",\"backend\"\n"
                       "2000000,\"phone2\",\"phone\"\n"
                       "2100000,\"server2\",\"backend\"\n"
                       "2600000,\"crash\",\"backend\"\n");
  e2e_cleanup(dir);
}

/* With duration_ms, a STOP trigger keeps the last duration_ms before its
 * end: the crash at 2 600 000 plus stop_delay_ms 1 ends the window at
 * 3 600 000, and 1 ms of it is [2 600 001, 3 600 000]: phone3 (3 000 000)
 * and server3 (3 100 000); the crash itself is 1 ns before it. */
static void test_a_stop_trigger_with_a_duration_keeps_the_span_before_it(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = write_two_machines(dir);
  const char *inputs[] = {"run.zip", NULL};
  g_autofree char *out = query_with(
      dir, inputs,
      "duration_ms: 1\n"
      "trigger_config { trigger_mode: STOP_TRACING trigger_timeout_ms: 60000\n"
      "  triggers { name: \"crash\" stop_delay_ms: 1 } }\n",
      "SELECT group_concat(name) FROM (SELECT name FROM slice ORDER BY ts)");
  e2e_assert_text(out, "\"group_concat(name)\"\n\"phone3,server3\"\n");
  e2e_cleanup(dir);
}

/* A trigger whose producer_name_regex names another machine does not
 * fire; without a trigger within trigger_timeout_ms, STOP keeps up to the
 * timeout (1 ms after the first event, at 1 000 000: up to 2 000 000),
 * START keeps nothing. */
static void test_without_a_trigger_the_timeout_decides(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = write_two_machines(dir);
  const char *inputs[] = {"run.zip", NULL};
  g_autofree char *stop = query_with(
      dir, inputs,
      "trigger_config { trigger_mode: STOP_TRACING trigger_timeout_ms: 1\n"
      "  triggers { name: \"crash\" producer_name_regex: \"phone\" } }\n",
      "SELECT group_concat(name) FROM (SELECT name FROM slice ORDER BY ts)");
  e2e_assert_text(stop, "\"group_concat(name)\"\n\"phone1,server1,phone2\"\n");
  g_autofree char *start = query_with(
      dir, inputs,
      "trigger_config { trigger_mode: START_TRACING trigger_timeout_ms: 60000\n"
      "  triggers { name: \"crash\" producer_name_regex: \"phone\" } }\n",
      "SELECT count(*), (SELECT int_value FROM metadata WHERE name = 'merge_window_empty') "
      "FROM slice");
  e2e_assert_text(start, "\"count(*)\",\"(SELECT int_value FROM metadata WHERE name = "
                         "'merge_window_empty')\"\n0,1\n");
  g_autofree char *backend = query_with(
      dir, inputs,
      "trigger_config { trigger_mode: START_TRACING trigger_timeout_ms: 60000\n"
      "  triggers { name: \"crash\" producer_name_regex: \"back.*\" } }\n",
      "SELECT group_concat(name) FROM (SELECT name FROM slice ORDER BY ts)");
  e2e_assert_text(backend, "\"group_concat(name)\"\n\"crash,phone3,server3,phone4,server4\"\n");
  e2e_cleanup(dir);
}

/* json_instants(prefix, n) with one more instant `name` at `ts_us`, in
 * its place in the file (after the instants before it). */
static char *json_instants_with(const char *prefix, int n, const char *name, int ts_us) {
  GString *s = g_string_new("{\"traceEvents\":[\n");
  bool placed = false;
  for (int i = 0; i < n; i++) {
    if (!placed && i * 1000 > ts_us) {
      g_string_append_printf(s, ",{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%s\",\"ts\":%d,\"pid\":1,"
                                "\"tid\":1}\n",
                             name, ts_us);
      placed = true;
    }
    g_string_append_printf(s, "%s{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%s%d\",\"ts\":%d,\"pid\":1,"
                              "\"tid\":1}\n",
                           i ? "," : "", prefix, i, i * 1000);
  }
  g_string_append(s, "]}\n");
  return g_string_free(s, FALSE);
}

/* A flight recorder: instants e0..e199 (1 ms apart) and "boom" at
 * 100.5 ms through a ring of 2 KiB (a few dozen events) with a STOP
 * trigger: the ring stops taking events after the trigger, so it keeps the
 * K events up to it: boom and e(102-K)..e100, the newest at 100.5 ms. */
static void test_a_stop_trigger_makes_a_ring_keep_what_precedes_it(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = json_instants_with("e", 200, "boom", 100500);
  g_autofree char *json = e2e_write_file(dir, "a.json", trace, 0);
  const char *inputs[] = {"a.json", NULL};
  g_autofree char *out = query_with(
      dir, inputs,
      "buffers { size_kb: 2 fill_policy: RING_BUFFER }\n"
      "trigger_config { trigger_mode: STOP_TRACING trigger_timeout_ms: 1000000\n"
      "  triggers { name: \"boom\" } }\n",
      "SELECT count(*), min(ts), max(ts), (SELECT value FROM stats WHERE name = "
      "'merge_events_outside_window') FROM slice");
  int64_t count, min_ts, max_ts, outside;
  g_assert_cmpint(sscanf(e2e_csv_rows(out), "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                                            ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT,
                         &count, &min_ts, &max_ts, &outside),
                  ==, 4);
  g_assert_cmpint(count, >, 2);
  g_assert_cmpint(count, <, 100);
  g_assert_cmpint(max_ts, ==, 100500000);
  g_assert_cmpint(min_ts, ==, (102 - count) * INT64_C(1000000));
  /* e101..e199, refused after the trigger. */
  g_assert_cmpint(outside, ==, 99);
  e2e_cleanup(dir);
}

/* A START trigger "go" at 10.5 ms that the ring gives up (it keeps the
 * newest events, at the end of 200 ms): pass 2 still knows where it was,
 * so what the ring kept, all after it, stays. */
static void test_a_trigger_a_ring_gave_up_still_counts(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = json_instants_with("e", 200, "go", 10500);
  g_autofree char *json = e2e_write_file(dir, "a.json", trace, 0);
  const char *inputs[] = {"a.json", NULL};
  g_autofree char *out = query_with(
      dir, inputs,
      "buffers { size_kb: 2 fill_policy: RING_BUFFER }\n"
      "trigger_config { trigger_mode: START_TRACING trigger_timeout_ms: 1000000\n"
      "  triggers { name: \"go\" } }\n",
      "SELECT count(*) > 0, max(ts), (SELECT int_value FROM metadata WHERE name = "
      "'merge_trigger_ts'), (SELECT count(*) FROM slice WHERE name = 'go') FROM slice");
  e2e_assert_text(e2e_csv_rows(out), "1,199000000,10500000,0\n");
  e2e_cleanup(dir);
}

/* --- commands ------------------------------------------------------------ */

static void test_import_saves_the_merged_result_of_the_config(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = json_instants("e", 10);
  g_autofree char *json = e2e_write_file(dir, "a.json", trace, 0);
  g_autofree char *config = e2e_write_file(dir, "merge.pbtx", "duration_ms: 2\n", 0);
  const char *inputs[] = {"a.json", NULL};
  const char *extra[] = {"-o", "out.sqlite", NULL};
  e2e_result r = run_with_config(dir, "import", inputs, "merge.pbtx", extra);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  e2e_result_clear(&r);
  g_autofree char *saved = g_build_filename(dir, "out.sqlite", NULL);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open_v2(saved, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(db,
                                     "SELECT group_concat(name), (SELECT str_value FROM "
                                     "metadata WHERE name = 'merge_config_pbtxt') FROM "
                                     "(SELECT name FROM slice ORDER BY ts)",
                                     -1, &stmt, NULL),
                  ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
  g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 0), ==, "e0,e1");
  g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 1), ==, "duration_ms: 2\n");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  e2e_cleanup(dir);
}

/* export writes the merged result of the config: duration_ms 2 over
 * instants e0..e9 at 0..9 ms keeps e0 and e1 (the window [0, 2 ms)), and
 * the Chrome JSON it writes names those and no other. */
static void test_export_writes_the_merged_result_of_the_config(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = json_instants("e", 10);
  g_autofree char *json = e2e_write_file(dir, "a.json", trace, 0);
  g_autofree char *config = e2e_write_file(dir, "merge.pbtx", "duration_ms: 2\n", 0);
  const char *inputs[] = {"a.json", NULL};
  const char *extra[] = {"-o", "out.json", NULL};
  e2e_result r = run_with_config(dir, "export", inputs, "merge.pbtx", extra);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  e2e_result_clear(&r);
  g_autofree char *saved = g_build_filename(dir, "out.json", NULL);
  g_autofree char *written = NULL;
  g_assert_true(g_file_get_contents(saved, &written, NULL, NULL));
  for (int i = 0; i < 10; i++) {
    g_autofree char *name = g_strdup_printf("\"e%d\"", i);
    if (i < 2)
      g_assert_nonnull(strstr(written, name));
    else
      g_assert_null(strstr(written, name));
  }
  e2e_cleanup(dir);
}

static void test_config_check_prints_the_config_normalised(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *config = e2e_write_file(
      dir, "merge.pbtx",
      "# a comment\nduration_ms:5000 buffers{size_kb:64}\n"
      "data_sources { config { name: \"example\" example_config: \"1000\" } }\n",
      0);
  const char *args[] = {"config-check", "merge.pbtx", NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  e2e_assert_text(r.out, "duration_ms: 5000\n"
                         "buffers {\n  size_kb: 64\n}\n"
                         "data_sources {\n  config {\n    name: \"example\"\n"
                         "    example_config: \"1000\"\n  }\n}\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* --txt reads a file of any name as text; without it such a name is
 * binary, which this text is not. */
static void test_txt_makes_any_file_text(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *config = e2e_write_file(dir, "merge.cfg", "duration_ms: 5\n", 0);
  const char *text_args[] = {"config-check", "--txt", "merge.cfg", NULL};
  e2e_result r = e2e_run_in(dir, text_args);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "duration_ms: 5\n");
  e2e_result_clear(&r);
  const char *binary_args[] = {"config-check", "merge.cfg", NULL};
  r = e2e_run_in(dir, binary_args);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_true(g_str_has_prefix(r.err, "tracemerge: merge.cfg: "));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* Command-line mistakes are usage errors (exit 2) with one line saying
 * what to change. */
static void test_misused_options_are_usage_errors(void) {
  static const struct {
    const char *args[6];
    const char *first_line;
  } cases[] = {
      {{"query", "a.json", "--txt", "--sql", "SELECT 1", NULL},
       "tracemerge: --txt applies to --config FILE, which is missing\n"},
      {{"config-check", "--config", "m.pbtx", "m.pbtx", NULL},
       "tracemerge: config-check takes the config as its operand, not --config\n"},
      {{"config-check", "a.pbtx", "b.pbtx", NULL},
       "tracemerge: config-check takes one FILE\n"},
      {{"config-check", NULL}, "tracemerge: config-check takes one FILE\n"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    e2e_result r = e2e_run(cases[i].args);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_assert_true(g_str_has_prefix(r.err, cases[i].first_line));
    e2e_result_clear(&r);
  }
}

/* Every example in config/merge is a valid config for the readers of the
 * build tree, and its normalised text is a fixed point: checked again,
 * it prints the same. */
static void test_every_example_config_passes_config_check(void) {
  g_autofree char *examples = g_test_build_filename(G_TEST_DIST, "..", "config", "merge", NULL);
  GDir *dir = g_dir_open(examples, 0, NULL);
  g_assert_nonnull(dir);
  g_autofree char *tmp = e2e_tmpdir();
  int checked = 0;
  const char *name;
  while ((name = g_dir_read_name(dir))) {
    if (!g_str_has_suffix(name, ".pbtx"))
      continue;
    g_autofree char *path = g_build_filename(examples, name, NULL);
    const char *args[] = {"config-check", path, NULL};
    e2e_result r = e2e_run(args);
    if (r.exit_code != 0 || r.err[0])
      g_error("%s: config-check failed (exit %d): %s", name, r.exit_code, r.err);
    g_autofree char *again_path = e2e_write_file(tmp, name, r.out, 0);
    const char *again_args[] = {"config-check", again_path, NULL};
    e2e_result again = e2e_run(again_args);
    g_assert_cmpint(again.exit_code, ==, 0);
    e2e_assert_text(again.out, r.out);
    e2e_result_clear(&again);
    e2e_result_clear(&r);
    checked++;
  }
  g_dir_close(dir);
  /* One per reader of the tree (6) and per feature. */
  g_assert_cmpint(checked, >=, 10);
  e2e_cleanup(tmp);
}

/* config/merge/example.pbtx with the example reader: a file matching
 * ".*\\.us\\.txt" counts µs ("1000" ns per unit), any other ms: "5 a"
 * is at 5 000 ns in the first, 5 000 000 ns in the second. */
static void test_the_example_reader_reads_its_block_from_the_example_config(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *config =
      g_test_build_filename(G_TEST_DIST, "..", "config", "merge", "example.pbtx", NULL);
  g_autofree char *us = e2e_write_file(dir, "fast.us.txt", "#tm-example\n5 in_us\n", 0);
  g_autofree char *ms = e2e_write_file(dir, "slow.txt", "#tm-example\n5 in_ms\n", 0);
  const char *inputs[] = {"fast.us.txt", "slow.txt", NULL};
  const char *extra[] = {"--sql", "SELECT name, ts FROM slice ORDER BY ts", NULL};
  e2e_result r = run_with_config(dir, "query", inputs, config, extra);
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.err, "");
  e2e_assert_text(r.out, "\"name\",\"ts\"\n\"in_us\",5000\n\"in_ms\",5000000\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e-config/reader-config/a-text-block-reaches-the-plugin-byte-for-byte",
                  test_a_text_block_reaches_the_plugin_byte_for_byte);
  g_test_add_func("/e2e-config/reader-config/a-binary-block-with-unknown-fields-arrives-as-given",
                  test_a_binary_block_with_unknown_fields_reaches_the_plugin_as_given);
  g_test_add_func("/e2e-config/data-sources/a-reader-not-listed-is-disabled",
                  test_a_reader_not_listed_is_disabled);
  g_test_add_func("/e2e-config/data-sources/filters-select-files-by-name-and-regex",
                  test_filters_select_files_by_name_and_regex);
  g_test_add_func("/e2e-config/data-sources/machine-name-filter-selects-a-machines-files",
                  test_machine_name_filter_selects_a_machines_files);
  g_test_add_func("/e2e-config/refused/a-reader-that-does-not-exist",
                  test_a_reader_that_does_not_exist_is_refused);
  g_test_add_func("/e2e-config/refused/a-target-buffer-out-of-range",
                  test_a_target_buffer_out_of_range_is_refused);
  g_test_add_func("/e2e-config/refused/a-malformed-config-with-its-position",
                  test_a_malformed_config_is_refused_with_its_position);
  g_test_add_func("/e2e-config/refused/a-missing-config-file", test_a_missing_config_file_is_refused);
  g_test_add_func("/e2e-config/buffers/a-ring-buffer-keeps-the-newest-events",
                  test_a_ring_buffer_keeps_the_newest_events);
  g_test_add_func("/e2e-config/buffers/a-discard-buffer-keeps-the-oldest-events",
                  test_a_discard_buffer_keeps_the_oldest_events);
  g_test_add_func("/e2e-config/buffers/target-buffer-maps-files-to-buffers",
                  test_target_buffer_maps_files_to_buffers);
  g_test_add_func("/e2e-config/buffers/a-buffered-files-ftrace-events-keep-their-args",
                  test_a_buffered_files_ftrace_events_keep_their_args);
  g_test_add_func("/e2e-config/window/start-offset-and-duration-keep-a-window",
                  test_start_offset_and_duration_keep_a_window);
  g_test_add_func("/e2e-config/window/an-end-whose-begin-was-cut-goes-with-it",
                  test_an_end_whose_begin_was_cut_goes_with_it);
  g_test_add_func("/e2e-config/trigger/a-start-trigger-keeps-what-follows-it",
                  test_a_start_trigger_keeps_what_follows_it);
  g_test_add_func("/e2e-config/trigger/a-stop-trigger-on-one-machine-cuts-all-machines",
                  test_a_stop_trigger_on_one_machine_cuts_all_machines);
  g_test_add_func("/e2e-config/trigger/a-stop-trigger-with-a-duration-keeps-the-span-before-it",
                  test_a_stop_trigger_with_a_duration_keeps_the_span_before_it);
  g_test_add_func("/e2e-config/trigger/without-a-trigger-the-timeout-decides",
                  test_without_a_trigger_the_timeout_decides);
  g_test_add_func("/e2e-config/trigger/a-stop-trigger-makes-a-ring-keep-what-precedes-it",
                  test_a_stop_trigger_makes_a_ring_keep_what_precedes_it);
  g_test_add_func("/e2e-config/trigger/a-trigger-a-ring-gave-up-still-counts",
                  test_a_trigger_a_ring_gave_up_still_counts);
  g_test_add_func("/e2e-config/commands/import-saves-the-merged-result-of-the-config",
                  test_import_saves_the_merged_result_of_the_config);
  g_test_add_func("/e2e-config/commands/export-writes-the-merged-result-of-the-config",
                  test_export_writes_the_merged_result_of_the_config);
  g_test_add_func("/e2e-config/commands/config-check-prints-the-config-normalised",
                  test_config_check_prints_the_config_normalised);
  g_test_add_func("/e2e-config/commands/txt-makes-any-file-text", test_txt_makes_any_file_text);
  g_test_add_func("/e2e-config/commands/misused-options-are-usage-errors",
                  test_misused_options_are_usage_errors);
  g_test_add_func("/e2e-config/examples/the-example-reader-reads-its-block",
                  test_the_example_reader_reads_its_block_from_the_example_config);
  g_test_add_func("/e2e-config/examples/every-example-config-passes-config-check",
                  test_every_example_config_passes_config_check);
  return g_test_run();
}
