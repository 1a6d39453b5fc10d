/*
 * End-to-end: legacy TrackEvents (Chrome's legacy_event phases) through
 * the CLI: every phase into its table, flows chained by bind_id as the
 * JSON reader chains them, drops counted in the import logs, and flow
 * ends that keep the flow. Fixtures are tests/data/proto/'s text protobuf
 * files, encoded at build time; expected values are worked out there and
 * below. Beside it: test_e2e_proto.c and test_e2e_proto_tracks.c.
 */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "corpus.h"
#include "e2e_support.h"

/* --- legacy TrackEvents ------------------------------------------------------ */

/* Every legacy phase of legacy_events.textproto (expected values worked
 * out there): thread slices, Chrome's instant tracks, async tracks by id,
 * flows by bind_id, threads made by the pid/tid overrides. */
static void test_legacy_events_reach_every_table(void) {
  g_autofree char *slices = e2e_query_proto_fixture("legacy_events",
      "SELECT s.id, s.ts, s.dur, s.depth, s.category, s.name, t.type, t.name AS track, "
      "s.thread_ts, s.thread_dur FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.id");
  e2e_assert_text(slices,
      "\"id\",\"ts\",\"dur\",\"depth\",\"category\",\"name\",\"type\",\"track\",\"thread_ts\","
      "\"thread_dur\"\n"
      "0,1000,2000,0,\"cat\",\"outer\",\"thread_execution\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "1,1100,1000,1,\"[NULL]\",\"inner\",\"thread_execution\",\"[NULL]\",3000,2000\n"
      "2,1200,0,2,\"[NULL]\",\"mark\",\"thread_execution\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "3,3100,0,0,\"[NULL]\",\"global mark\",\"legacy_chrome_global_instants\",\"[NULL]\","
      "\"[NULL]\",\"[NULL]\"\n"
      "4,3200,0,0,\"[NULL]\",\"process mark\",\"chrome_process_instant\",\"[NULL]\",\"[NULL]\","
      "\"[NULL]\"\n"
      "5,4000,1000,0,\"net\",\"req\",\"legacy_async_global_slice\",\"req\",\"[NULL]\",\"[NULL]\"\n"
      "6,4500,0,1,\"[NULL]\",\"req step\",\"legacy_async_global_slice\",\"req\",\"[NULL]\","
      "\"[NULL]\"\n"
      "7,5100,200,0,\"[NULL]\",\"local\",\"legacy_async_process_slice\",\"local\",60000,"
      "1000\n"
      "8,5400,100,0,\"[NULL]\",\"scoped\",\"legacy_async_global_slice\",\"scoped\",\"[NULL]\","
      "\"[NULL]\"\n"
      "9,6000,1000,0,\"[NULL]\",\"elsewhere\",\"thread_execution\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "10,6100,1000,0,\"[NULL]\",\"sibling\",\"thread_execution\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "11,9000,0,0,\"[NULL]\",\"interned legacy\",\"thread_execution\",\"[NULL]\",\"[NULL]\","
      "\"[NULL]\"\n"
      "12,9500,0,0,\"[NULL]\",\"undirected\",\"thread_execution\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "13,9600,2000,0,\"[NULL]\",\"waits\",\"global_merged_track_event\",\"Later\",\"[NULL]\",\"[NULL]\"\n");

  /* Thread slices by thread: the overrides made tid 21 of pid 20 and tid
   * 12 of pid 10. */
  g_autofree char *threads = e2e_query_proto_fixture("legacy_events",
      "SELECT s.name, th.tid, th.name AS thread, p.pid FROM slice s JOIN thread_track tt ON "
      "s.track_id = tt.id JOIN thread th USING (utid) LEFT JOIN process p USING (upid) "
      "ORDER BY s.id");
  e2e_assert_text(threads,
      "\"name\",\"tid\",\"thread\",\"pid\"\n"
      "\"outer\",11,\"main\",10\n\"inner\",11,\"main\",10\n\"mark\",11,\"main\",10\n"
      "\"elsewhere\",21,\"[NULL]\",20\n\"sibling\",12,\"[NULL]\",10\n"
      "\"interned legacy\",11,\"main\",10\n\"undirected\",11,\"main\",10\n");
  g_autofree char *process_tracks = e2e_query_proto_fixture("legacy_events",
      "SELECT s.name, pt.type, p.pid FROM slice s JOIN process_track pt ON s.track_id = pt.id "
      "JOIN process p USING (upid) ORDER BY s.id");
  e2e_assert_text(process_tracks,
      "\"name\",\"type\",\"pid\"\n"
      "\"process mark\",\"chrome_process_instant\",10\n"
      "\"local\",\"legacy_async_process_slice\",10\n");

  g_autofree char *flows = e2e_query_proto_fixture("legacy_events",
      "SELECT f.trace_id, o.name, i.name FROM flow f JOIN slice o ON o.id = f.slice_out "
      "JOIN slice i ON i.id = f.slice_in");
  e2e_assert_text(flows, "\"trace_id\",\"name\",\"name\"\n5,\"outer\",\"req\"\n");

  g_autofree char *stats = e2e_query_proto_fixture("legacy_events",
      "SELECT name, value FROM stats WHERE value > 0 ORDER BY name");
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         "\"flow_without_direction\",1\n"
                         "\"misplaced_end_event\",1\n"
                         "\"proto_track_event_unsupported_type\",3\n"
                         "\"track_event_parser_errors\",1\n");
}

/* Flow v1 of legacy_flows.textproto (expected values worked out there):
 * s/t/f chain slices, bind_to_enclosing ends in the enclosing slice,
 * flows carry name and cat, a waiting flow keeps its binding; bad ids and
 * pid/tid 0 are counted. The same events as Chrome JSON give the same
 * thread flows: the proto reader reads flow v1 as the JSON reader does. */
#define FLOWS_SQL                                                                      \
  "SELECT o.name AS slice_out, i.name AS slice_in, "                                   \
  "(SELECT display_value FROM args a WHERE a.arg_set_id = f.arg_set_id AND a.key = "   \
  "'name') AS flow_name, "                                                             \
  "(SELECT display_value FROM args a WHERE a.arg_set_id = f.arg_set_id AND a.key = "   \
  "'cat') AS flow_cat FROM flow f JOIN slice o ON o.id = f.slice_out "                 \
  "JOIN slice i ON i.id = f.slice_in JOIN track t ON o.track_id = t.id "               \
  "WHERE t.type GLOB ?TYPE? ORDER BY f.id"

static char *flows_sql(const char *track_type) {
  g_autofree char *quoted = g_strdup_printf("'%s'", track_type);
  g_auto(GStrv) parts = g_strsplit(FLOWS_SQL, "?TYPE?", 2);
  return g_strjoin(quoted, parts[0], parts[1], NULL);
}

static void test_legacy_flows_chain_slices_like_json(void) {
  g_autofree char *all_sql = flows_sql("*");
  g_autofree char *flows = e2e_query_proto_fixture("legacy_flows", all_sql);
  e2e_assert_text(flows,
      "\"slice_out\",\"slice_in\",\"flow_name\",\"flow_cat\"\n"
      "\"A\",\"B\",\"io\",\"c\"\n"
      "\"B\",\"C\",\"io\",\"c\"\n"
      "\"D\",\"E\",\"ipc\",\"[NULL]\"\n"
      "\"D\",\"E\",\"other\",\"[NULL]\"\n"
      "\"G1\",\"G2\",\"late\",\"[NULL]\"\n");

  /* No slice for a flow event, none for the pid/tid 0 events. */
  g_autofree char *slices = e2e_query_proto_fixture("legacy_flows",
      "SELECT s.ts, s.dur, s.depth, s.name, t.type FROM slice s "
      "JOIN track t ON s.track_id = t.id ORDER BY s.id");
  e2e_assert_text(slices,
      "\"ts\",\"dur\",\"depth\",\"name\",\"type\"\n"
      "1000,500,0,\"A\",\"thread_execution\"\n"
      "2000,500,0,\"B\",\"thread_execution\"\n"
      "3000,1000,0,\"C\",\"thread_execution\"\n"
      "5000,200,0,\"D\",\"thread_execution\"\n"
      "6000,200,0,\"E\",\"thread_execution\"\n"
      "7000,1000,0,\"F\",\"thread_execution\"\n"
      "9000,1000,0,\"G1\",\"global_merged_track_event\"\n"
      "10000,1000,0,\"G2\",\"global_merged_track_event\"\n");

  g_autofree char *stats = e2e_query_proto_fixture("legacy_flows",
      "SELECT name, value FROM stats WHERE value > 0 ORDER BY name");
  e2e_assert_text(stats, "\"name\",\"value\"\n"
                         "\"flow_invalid_id\",3\n"
                         "\"track_event_parser_errors\",3\n");

  /* The thread part as Chrome JSON (µs), with an id2 as its bad id. */
  g_autofree char *dir = e2e_tmpdir();
#define EV(ph, name, ts, more) \
  "{\"ph\":\"" ph "\",\"name\":\"" name "\",\"pid\":10,\"tid\":11,\"ts\":" ts more "},"
  g_autofree char *json_path = e2e_write_file(dir, "flows.json",
      "[" EV("B", "A", "1", "") EV("s", "io", "1.1", ",\"cat\":\"c\",\"id\":1")
      EV("E", "A", "1.5", "") EV("B", "B", "2", "")
      EV("t", "io", "2.1", ",\"cat\":\"c\",\"id\":1") EV("E", "B", "2.5", "")
      EV("f", "io", "2.6", ",\"cat\":\"c\",\"id\":1") EV("X", "C", "3", ",\"dur\":1")
      EV("B", "D", "5", "") EV("s", "ipc", "5.1", ",\"id\":2")
      EV("s", "other", "5.15", ",\"id\":1") EV("E", "D", "5.2", "") EV("B", "E", "6", "")
      EV("f", "ipc", "6.1", ",\"id\":2,\"bp\":\"e\"")
      EV("f", "other", "6.15", ",\"id\":1,\"bp\":\"e\"") EV("E", "E", "6.2", "")
      EV("X", "F", "7", ",\"dur\":1") EV("s", "bad", "8", ",\"id2\":{\"local\":3}")
      "{}]",
      0);
#undef EV
  const char *json_inputs[] = {json_path, NULL};
  g_autofree char *thread_sql = flows_sql("thread_execution");
  g_autofree char *json_flows = e2e_query(json_inputs, thread_sql);
  g_autofree char *proto_flows = e2e_query_proto_fixture("legacy_flows", thread_sql);
  g_assert_true(g_str_has_prefix(flows, proto_flows));
  e2e_assert_text(json_flows, proto_flows);
  g_autofree char *json_invalid = e2e_query(json_inputs,
      "SELECT value FROM stats WHERE name = 'flow_invalid_id'");
  e2e_assert_text(json_invalid, "\"value\"\n1\n");
  e2e_cleanup(dir);
}

/* The byte offset of packet `index` (0-based)'s payload in a framed file. */
static size_t packet_payload_offset(const e2e_bytes *file, size_t index) {
  const uint8_t *data = (const uint8_t *)file->data;
  size_t at = 0;
  for (size_t i = 0;; i++) {
    g_assert_cmpuint(at, <, file->len);
    g_assert_cmpuint(data[at], ==, 0x0a);
    at++;
    uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      g_assert_cmpuint(at, <, file->len);
      len |= (uint64_t)(data[at] & 0x7f) << shift;
      if (!(data[at++] & 0x80))
        break;
    }
    if (i == index)
      return at;
    at += len;
  }
}

/* The proto reader's drops reach _trace_import_logs at their packet's
 * byte offset: legacy_events packets 19-21 (C, S, no legacy_event), 22
 * (b without an id), 23 (bind_id without a direction). */
static void test_drops_reach_import_logs(void) {
  e2e_bytes file = e2e_proto_fixture("legacy_events");
  g_autofree char *logs = e2e_query_proto_fixture("legacy_events",
      "SELECT trace_id, byte_offset, severity, name FROM _trace_import_logs ORDER BY id");
  g_autofree char *expected = g_strdup_printf(
      "\"trace_id\",\"byte_offset\",\"severity\",\"name\"\n"
      "0,%zu,\"info\",\"proto_track_event_unsupported_type\"\n"
      "0,%zu,\"info\",\"proto_track_event_unsupported_type\"\n"
      "0,%zu,\"info\",\"proto_track_event_unsupported_type\"\n"
      "0,%zu,\"error\",\"track_event_parser_errors\"\n"
      "0,%zu,\"error\",\"flow_without_direction\"\n",
      packet_payload_offset(&file, 19), packet_payload_offset(&file, 20),
      packet_payload_offset(&file, 21), packet_payload_offset(&file, 22),
      packet_payload_offset(&file, 23));
  e2e_assert_text(logs, expected);
  g_free(file.data);
}

/* A legacy flow end (bind_id FLOW_IN, flow v1 f) keeps its flow in flight,
 * as trace_processor does: a second end of the id links from the same
 * out-slice (worked out in legacy_flow_ends.textproto). Before, the first
 * end closed the flow: 2 flows instead of 4, and 2 flow_end_without_start. */
static void test_legacy_flow_ends_keep_the_flow(void) {
  g_autofree char *all_sql = flows_sql("*");
  g_autofree char *flows = e2e_query_proto_fixture("legacy_flow_ends", all_sql);
  e2e_assert_text(flows,
      "\"slice_out\",\"slice_in\",\"flow_name\",\"flow_cat\"\n"
      "\"send\",\"recv1\",\"[NULL]\",\"[NULL]\"\n"
      "\"send\",\"recv2\",\"[NULL]\",\"[NULL]\"\n"
      "\"A\",\"B\",\"io\",\"[NULL]\"\n"
      "\"A\",\"C\",\"io\",\"[NULL]\"\n");
  g_autofree char *stats = e2e_query_proto_fixture("legacy_flow_ends",
      "SELECT name, value FROM stats WHERE value > 0 AND name GLOB 'flow*'");
  e2e_assert_text(stats, "\"name\",\"value\"\n");
}
int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/proto/legacy-events/phases-reach-slices-tracks-flows-threads",
                  test_legacy_events_reach_every_table);
  g_test_add_func("/e2e/proto/legacy-events/flow-v1-chains-slices-like-json",
                  test_legacy_flows_chain_slices_like_json);
  g_test_add_func("/e2e/proto/import-logs/drops-name-their-packet-offset",
                  test_drops_reach_import_logs);
  g_test_add_func("/e2e/proto/legacy-events/flow-ends-keep-the-flow-in-flight",
                  test_legacy_flow_ends_keep_the_flow);
  return g_test_run();
}
