/*
 * End-to-end: the import logs (docs/sql-surface.md §5,
 * docs/clock-model.md §11) of the clock machinery and of the systrace reader,
 * read through the CLI as `_trace_import_logs` rows with their `args`
 * joined on arg_set_id, beside the stats they counted in; and of the
 * Chrome JSON reader's dropped events.
 *
 * Fixtures are those of test_e2e_placement.c (their comments there give
 * the placements): rendezvous_phone.pb (BOOTTIME and REALTIME),
 * boot_mono_only.pb (BOOTTIME and MONOTONIC only; instants at BOOTTIME
 * 1.1e9 and 1.3e9 and at MONOTONIC 7e8), capture_a.pb and capture_b.pb
 * (two captures of one machine; capture_b has one instant before its own
 * snapshot).
 */
#include <glib.h>
#include <string.h>

#include "e2e_support.h"
#include "e2e_unrelatable_scenario.h"

/* One line per log row: its file, stat, severity, trace time, byte offset
 * and its args (joined on arg_set_id) as key=value in key order. */
#define LOGS_SQL                                                              \
  "SELECT f.name AS file, l.name, l.severity, l.ts, l.byte_offset, "          \
  "(SELECT group_concat(key || '=' || display_value, ' ') FROM "             \
  "(SELECT a.key, a.display_value FROM args a "                               \
  "WHERE a.arg_set_id = l.arg_set_id ORDER BY a.key)) AS args "               \
  "FROM _trace_import_logs l JOIN trace_file f ON f.id = l.trace_id "         \
  "ORDER BY file, l.name, l.id"

#define LOGS_HEADER "\"file\",\"name\",\"severity\",\"ts\",\"byte_offset\",\"args\"\n"

/* Stats next to their log rows: every log row counted in its stat. */
#define STATS_VS_LOGS_SQL                                                     \
  "SELECT f.name AS file, s.name, s.value, "                                  \
  "(SELECT count(*) FROM __intrinsic_trace_import_logs l "                    \
  "WHERE l.stat_id = s.id) AS log_rows "                                      \
  "FROM stats s JOIN trace_file f ON f.id = s.trace_id "                      \
  "WHERE s.value > 0 ORDER BY file, s.name"

/* test_e2e_placement.c, unrelatable: trace time is phone's REALTIME (1).
 *  - server.pb's BOOTTIME (6), the first of its clocks bridged, has no
 *    way to it: one unrelatable row {6 -> 1}; its three events are
 *    dropped as no_path, each logged with its clock and raw time (two on
 *    BOOTTIME, one on MONOTONIC 3);
 *  - edge.systrace's MONOTONIC (3) is in no snapshot: one unrelatable row
 *    {3 -> 1}; its two events (1 s and 1.0005 s) are dropped as
 *    unknown_source_clock.
 * No row has a trace time (nothing was placed) or a byte offset. */
static void test_unrelatable_domains_and_dropped_events(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes phone = e2e_proto_fixture("rendezvous_phone");
  e2e_bytes server = e2e_proto_fixture("boot_mono_only");
  const e2e_member members[] = {
      {"manifest.json", unrelatable_manifest, 0},
      {"edge.systrace", edge_systrace, 0},
      {"server.pb", server.data, server.len},
      {"phone.pb", phone.data, phone.len},
  };
  g_autofree char *logs = e2e_query_archive(dir, E2E_TAR, members, 4, LOGS_SQL);
  e2e_assert_text(logs,
      LOGS_HEADER
      "\"edge.systrace\",\"clock_sync_failure_unknown_source_clock\",\"error\",\"[NULL]\","
      "\"[NULL]\",\"source_clock_id=3 source_timestamp=1000000000 target_clock_id=1\"\n"
      "\"edge.systrace\",\"clock_sync_failure_unknown_source_clock\",\"error\",\"[NULL]\","
      "\"[NULL]\",\"source_clock_id=3 source_timestamp=1000500000 target_clock_id=1\"\n"
      "\"edge.systrace\",\"clock_sync_unrelatable_clock_domains\",\"error\",\"[NULL]\","
      "\"[NULL]\",\"source_clock_id=3 target_clock_id=1\"\n"
      "\"server.pb\",\"clock_sync_failure_no_path\",\"error\",\"[NULL]\",\"[NULL]\","
      "\"source_clock_id=6 source_timestamp=1100000000 target_clock_id=1\"\n"
      "\"server.pb\",\"clock_sync_failure_no_path\",\"error\",\"[NULL]\",\"[NULL]\","
      "\"source_clock_id=6 source_timestamp=1300000000 target_clock_id=1\"\n"
      "\"server.pb\",\"clock_sync_failure_no_path\",\"error\",\"[NULL]\",\"[NULL]\","
      "\"source_clock_id=3 source_timestamp=700000000 target_clock_id=1\"\n"
      "\"server.pb\",\"clock_sync_unrelatable_clock_domains\",\"error\",\"[NULL]\","
      "\"[NULL]\",\"source_clock_id=6 target_clock_id=1\"\n");
  /* The args are ints, and the rows are on the stats' machines. */
  g_autofree char *types = e2e_query_archive(dir, E2E_TAR, members, 4,
      "SELECT DISTINCT a.value_type FROM _trace_import_logs l "
      "JOIN args a ON a.arg_set_id = l.arg_set_id");
  e2e_assert_text(types, "\"value_type\"\n\"int\"\n");
  g_autofree char *machines = e2e_query_archive(dir, E2E_TAR, members, 4,
      "SELECT s.name, m.name AS machine, count(*) AS n FROM __intrinsic_trace_import_logs l "
      "JOIN stats s ON s.id = l.stat_id JOIN machine m ON m.id = s.machine_id "
      "GROUP BY s.name, m.name ORDER BY s.name, m.name");
  e2e_assert_text(machines, "\"name\",\"machine\",\"n\"\n"
                            "\"clock_sync_failure_no_path\",\"server\",3\n"
                            "\"clock_sync_failure_unknown_source_clock\",\"edge\",2\n"
                            "\"clock_sync_unrelatable_clock_domains\",\"edge\",1\n"
                            "\"clock_sync_unrelatable_clock_domains\",\"server\",1\n");
  g_autofree char *stats = e2e_query_archive(dir, E2E_TAR, members, 4, STATS_VS_LOGS_SQL);
  e2e_assert_text(stats, "\"file\",\"name\",\"value\",\"log_rows\"\n"
                         "\"edge.systrace\",\"clock_sync_failure_unknown_source_clock\",2,2\n"
                         "\"edge.systrace\",\"clock_sync_unrelatable_clock_domains\",1,1\n"
                         "\"server.pb\",\"clock_sync_failure_no_path\",3,3\n"
                         "\"server.pb\",\"clock_sync_unrelatable_clock_domains\",1,1\n");
  g_free(phone.data);
  g_free(server.data);
  e2e_cleanup(dir);
}

/* test_e2e_placement.c, primary file: 1_a.pb is the primary of the host
 * machine; 2_b.pb converted one instant ("b before its snapshot") through
 * the machine's shared clocks before its own snapshot isolated it: one
 * mixed-clock-sources row with num_conversions_using_primary 1. Alone,
 * capture_b is its machine's primary and logs nothing. */
static void test_mixed_clock_sources_counts_conversions(void) {
  g_autofree char *dir = e2e_tmpdir();
  e2e_bytes a = e2e_proto_fixture("capture_a");
  e2e_bytes b = e2e_proto_fixture("capture_b");
  const e2e_member members[] = {{"2_b.pb", b.data, b.len}, {"1_a.pb", a.data, a.len}};
  g_autofree char *logs = e2e_query_archive(dir, E2E_TAR, members, 2, LOGS_SQL);
  e2e_assert_text(logs, LOGS_HEADER
                        "\"2_b.pb\",\"clock_sync_mixed_clock_sources\",\"error\",\"[NULL]\","
                        "\"[NULL]\",\"num_conversions_using_primary=1\"\n");
  g_autofree char *stats = e2e_query_archive(dir, E2E_TAR, members, 2, STATS_VS_LOGS_SQL);
  e2e_assert_text(stats, "\"file\",\"name\",\"value\",\"log_rows\"\n"
                         "\"2_b.pb\",\"clock_sync_mixed_clock_sources\",1,1\n");
  g_autofree char *pb = e2e_write_file(dir, "2_b.pb", b.data, b.len);
  const char *alone[] = {"2_b.pb", NULL};
  g_autofree char *alone_logs = e2e_query_in(dir, alone, LOGS_SQL);
  e2e_assert_text(alone_logs, LOGS_HEADER);
  g_free(a.data);
  g_free(b.data);
  e2e_cleanup(dir);
}

/* Offsets: the header is 14 bytes, the good line 76 (to 90), the bad
 * payload (cpu_idle without cpu_id) 35 (to 125), then a line off the
 * grammar. The stat and the rows agree; the good line's slice is kept. */
static const char bad_lines_systrace[] =
    "# tracer: nop\n"
    "          app-100   [000] ...1     1.000000: tracing_mark_write: B|100|work\n"
    "app-1 [000] 1.0: cpu_idle: state=1\n"
    "this is not ftrace\n"
    "          app-100   [000] ...1     1.000500: tracing_mark_write: E|100\n";

static void test_systrace_bad_lines_with_offset_and_text(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = e2e_write_file(dir, "bad.systrace", bad_lines_systrace, 0);
  const char *inputs[] = {"bad.systrace", NULL};
  g_autofree char *logs = e2e_query_in(dir, inputs, LOGS_SQL);
  e2e_assert_text(logs, LOGS_HEADER
                        "\"bad.systrace\",\"systrace_parse_failure\",\"error\",\"[NULL]\",90,"
                        "\"line=app-1 [000] 1.0: cpu_idle: state=1\"\n"
                        "\"bad.systrace\",\"systrace_parse_failure\",\"error\",\"[NULL]\",125,"
                        "\"line=this is not ftrace\"\n");
  g_autofree char *stats = e2e_query_in(dir, inputs, STATS_VS_LOGS_SQL);
  e2e_assert_text(stats, "\"file\",\"name\",\"value\",\"log_rows\"\n"
                         "\"bad.systrace\",\"systrace_parse_failure\",2,2\n");
  /* The offsets point at the lines as written. */
  g_assert_cmpint(strncmp(bad_lines_systrace + 90, "app-1 [000]", 11), ==, 0);
  g_assert_cmpint(strncmp(bad_lines_systrace + 125, "this is not", 11), ==, 0);
  g_autofree char *slices = e2e_query_in(dir, inputs, "SELECT ts, dur, name FROM slice");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"name\"\n1000000000,500000,\"work\"\n");
  e2e_cleanup(dir);
}

/* 40 bad lines: the stat counts 40, the log keeps the first 16, in file
 * order (each line is 12 bytes: "bad line NN\n"). */
static void test_systrace_log_rows_are_bounded(void) {
  g_autofree char *dir = e2e_tmpdir();
  GString *text = g_string_new("# tracer: nop\n"
                               "          app-100   [000] ...1     1.000000: "
                               "tracing_mark_write: B|100|work\n");
  gsize first_bad = text->len;
  for (int i = 0; i < 40; i++)
    g_string_append_printf(text, "bad line %02d\n", i);
  g_autofree char *path = e2e_write_file(dir, "many.systrace", text->str, text->len);
  const char *inputs[] = {"many.systrace", NULL};
  g_autofree char *stats = e2e_query_in(dir, inputs, STATS_VS_LOGS_SQL);
  e2e_assert_text(stats, "\"file\",\"name\",\"value\",\"log_rows\"\n"
                         "\"many.systrace\",\"systrace_parse_failure\",40,16\n");
  g_autofree char *last = e2e_query_in(dir, inputs,
      "SELECT l.byte_offset, a.display_value FROM _trace_import_logs l "
      "JOIN args a USING (arg_set_id) ORDER BY l.id DESC LIMIT 1");
  g_autofree char *expected = g_strdup_printf(
      "\"byte_offset\",\"display_value\"\n%" G_GSIZE_FORMAT ",\"bad line 15\"\n",
      first_bad + 15 * 12);
  e2e_assert_text(last, expected);
  g_string_free(text, TRUE);
  e2e_cleanup(dir);
}

/* Offsets: "[\n" is 2 bytes, the good event's line 55 (to 57), the X
 * without dur's 51 (to 108), the line without ph 28 (to 136), then two
 * spaces before the bad ts (at 138). The good event's slice is kept. */
static const char bad_events_json[] =
    "[\n"
    "{\"ph\":\"X\",\"name\":\"ok\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},\n"
    "{\"ph\":\"X\",\"name\":\"no dur\",\"ts\":3,\"pid\":1,\"tid\":1},\n"
    "{\"name\":\"no phase\",\"ts\":4},\n"
    "  {\"ph\":\"i\",\"name\":\"bad ts\",\"ts\":\"soon\",\"pid\":1,\"tid\":1}\n"
    "]\n";

static void test_json_dropped_events_with_offset_and_args(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = e2e_write_file(dir, "bad.json", bad_events_json, 0);
  const char *inputs[] = {"bad.json", NULL};
  g_autofree char *logs = e2e_query_in(dir, inputs, LOGS_SQL);
  e2e_assert_text(logs, LOGS_HEADER
                        "\"bad.json\",\"json_parser_failure\",\"error\",\"[NULL]\",57,"
                        "\"event_name=no dur event_phase=X\"\n"
                        "\"bad.json\",\"json_tokenizer_failure\",\"error\",\"[NULL]\",108,"
                        "\"error=bad or missing ph "
                        "raw_event={\"\"name\"\":\"\"no phase\"\",\"\"ts\"\":4}\"\n"
                        "\"bad.json\",\"json_tokenizer_failure\",\"error\",\"[NULL]\",138,"
                        "\"error=bad ts raw_event={\"\"ph\"\":\"\"i\"\",\"\"name\"\":\"\"bad ts\"\","
                        "\"\"ts\"\":\"\"soon\"\",\"\"pid\"\":1,\"\"tid\"\":1}\"\n");
  /* The offsets point at the events' opening braces as written. */
  g_assert_cmpint(strncmp(bad_events_json + 57, "{\"ph\":\"X\",\"name\":\"no dur\"", 25), ==, 0);
  g_assert_cmpint(strncmp(bad_events_json + 108, "{\"name\":\"no phase\"", 18), ==, 0);
  g_assert_cmpint(strncmp(bad_events_json + 138, "{\"ph\":\"i\",\"name\":\"bad ts\"", 25), ==, 0);
  g_autofree char *stats = e2e_query_in(dir, inputs, STATS_VS_LOGS_SQL);
  e2e_assert_text(stats, "\"file\",\"name\",\"value\",\"log_rows\"\n"
                         "\"bad.json\",\"json_parser_failure\",1,1\n"
                         "\"bad.json\",\"json_tokenizer_failure\",2,2\n");
  /* Every arg is a string, and the good event's slice is kept. */
  g_autofree char *types = e2e_query_in(dir, inputs,
      "SELECT DISTINCT a.value_type FROM _trace_import_logs l "
      "JOIN args a ON a.arg_set_id = l.arg_set_id");
  e2e_assert_text(types, "\"value_type\"\n\"string\"\n");
  g_autofree char *slices = e2e_query_in(dir, inputs, "SELECT ts, dur, name FROM slice");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"name\"\n1000,2000,\"ok\"\n");
  e2e_cleanup(dir);
}

/* 20 events without a phase: the stat counts 20, the log keeps the first
 * 16, in file order (each element is 10 bytes: {"ts":NN}, from 10 on). */
static void test_json_log_rows_are_bounded(void) {
  g_autofree char *dir = e2e_tmpdir();
  GString *text = g_string_new("[");
  for (int i = 0; i < 20; i++)
    g_string_append_printf(text, "{\"ts\":%d},", 10 + i);
  g_string_append(text, "{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1}]");
  g_autofree char *path = e2e_write_file(dir, "many.json", text->str, text->len);
  const char *inputs[] = {"many.json", NULL};
  g_autofree char *stats = e2e_query_in(dir, inputs, STATS_VS_LOGS_SQL);
  e2e_assert_text(stats, "\"file\",\"name\",\"value\",\"log_rows\"\n"
                         "\"many.json\",\"json_tokenizer_failure\",20,16\n");
  g_autofree char *last = e2e_query_in(dir, inputs,
      "SELECT l.byte_offset, a.display_value FROM _trace_import_logs l "
      "JOIN args a USING (arg_set_id) WHERE a.key = 'raw_event' "
      "ORDER BY l.id DESC LIMIT 1");
  e2e_assert_text(last, "\"byte_offset\",\"display_value\"\n"
                        "151,\"{\"\"ts\"\":25}\"\n");
  g_assert_cmpint(strncmp(text->str + 151, "{\"ts\":25}", 9), ==, 0);
  g_string_free(text, TRUE);
  e2e_cleanup(dir);
}

/* A bad event cut by the host's 256 KiB chunk boundary is quoted whole,
 * at its offset: the reader keeps its first bytes across chunks. */
static void test_json_event_across_a_chunk_boundary(void) {
  g_autofree char *dir = e2e_tmpdir();
  const gsize boundary = 256 * 1024;
  const char *bad = "{\"ph\":\"X\",\"name\":\"across\",\"ts\":\"late\",\"pid\":1,"
                    "\"tid\":1}";
  const char *filler = "{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1},\n";
  GString *text = g_string_new("[");
  while (text->len + strlen(filler) < boundary - 20)
    g_string_append(text, filler);
  while (text->len < boundary - 20) /* whitespace before it is not quoted */
    g_string_append_c(text, ' ');
  gsize bad_offset = text->len;
  g_assert_cmpuint(bad_offset, <, boundary);
  g_assert_cmpuint(bad_offset + strlen(bad), >, boundary);
  g_string_append(text, bad);
  g_string_append(text, "]");
  g_autofree char *path = e2e_write_file(dir, "across.json", text->str, text->len);
  const char *inputs[] = {"across.json", NULL};
  g_autofree char *logs = e2e_query_in(dir, inputs,
      "SELECT l.byte_offset, a.key, a.display_value FROM _trace_import_logs l "
      "JOIN args a USING (arg_set_id) ORDER BY a.key");
  /* CSV doubles the quotes inside the value (RFC 4180). */
  g_auto(GStrv) pieces = g_strsplit(bad, "\"", -1);
  g_autofree char *bad_csv = g_strjoinv("\"\"", pieces);
  g_autofree char *expected = g_strdup_printf(
      "\"byte_offset\",\"key\",\"display_value\"\n"
      "%" G_GSIZE_FORMAT ",\"error\",\"bad ts\"\n"
      "%" G_GSIZE_FORMAT ",\"raw_event\",\"%s\"\n",
      bad_offset, bad_offset, bad_csv);
  e2e_assert_text(logs, expected);
  g_string_free(text, TRUE);
  e2e_cleanup(dir);
}

/* Strict protobuf (issue 11): a packet whose timestamp (field 8) is
 * length-delimited does not decode; it is dropped, counted and logged at
 * its bytes with a message, and the packet after it is read. Bytes:
 * packet 1 {timestamp: "xy", track_event {INSTANT, name "bad"}} (header
 * at 0, bytes from 2), packet 2 {timestamp: 5, track_event {INSTANT, name
 * "ok"}} on the file's private timeline. */
static void test_proto_wrong_wire_type(void) {
  g_autofree char *dir = e2e_tmpdir();
  static const char bytes[] = {0x0a, 0x0e, 0x42, 0x02, 'x', 'y', 0x5a, 0x08, 0x48, 0x03,
                               (char)0xba, 0x01, 0x03, 'b', 'a', 'd',
                               0x0a, 0x0b, 0x40, 0x05, 0x5a, 0x07, 0x48, 0x03,
                               (char)0xba, 0x01, 0x02, 'o', 'k'};
  g_autofree char *path = e2e_write_file(dir, "strict.pb", bytes, sizeof bytes);
  const char *inputs[] = {"strict.pb", NULL};
  g_autofree char *logs = e2e_query_in(dir, inputs, LOGS_SQL);
  e2e_assert_text(logs, LOGS_HEADER
      "\"strict.pb\",\"proto_packet_wrong_wire_type\",\"error\",\"[NULL]\",2,"
      "\"expected_wire_type=0 field=8 message=packet 1: TracePacket field 8 has wire "
      "type 2 (length-delimited), expected 0 (varint); the packet is dropped "
      "proto_message=TracePacket wire_type=2\"\n");
  g_autofree char *stats = e2e_query_in(dir, inputs, STATS_VS_LOGS_SQL);
  e2e_assert_text(stats, "\"file\",\"name\",\"value\",\"log_rows\"\n"
                         "\"strict.pb\",\"proto_packet_wrong_wire_type\",1,1\n");
  g_autofree char *slices = e2e_query_in(dir, inputs, "SELECT ts, dur, name FROM slice");
  e2e_assert_text(slices, "\"ts\",\"dur\",\"name\"\n5,0,\"ok\"\n");
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/import-logs/clock/unrelatable-domains-and-each-dropped-event",
                  test_unrelatable_domains_and_dropped_events);
  g_test_add_func("/e2e/import-logs/clock/mixed-clock-sources-counts-conversions-through-primary",
                  test_mixed_clock_sources_counts_conversions);
  g_test_add_func("/e2e/import-logs/systrace/bad-lines-with-byte-offset-and-text",
                  test_systrace_bad_lines_with_offset_and_text);
  g_test_add_func("/e2e/import-logs/systrace/first-16-rows-while-the-stat-counts-all",
                  test_systrace_log_rows_are_bounded);
  g_test_add_func("/e2e/import-logs/proto/a-length-delimited-timestamp-drops-its-packet",
                  test_proto_wrong_wire_type);
  g_test_add_func("/e2e/import-logs/json/dropped-events-with-byte-offset-and-args",
                  test_json_dropped_events_with_offset_and_args);
  g_test_add_func("/e2e/import-logs/json/first-16-rows-while-the-stat-counts-all",
                  test_json_log_rows_are_bounded);
  g_test_add_func("/e2e/import-logs/json/event-across-a-chunk-boundary-is-quoted-whole",
                  test_json_event_across_a_chunk_boundary);
  return g_test_run();
}
