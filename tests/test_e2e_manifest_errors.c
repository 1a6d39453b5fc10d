/*
 * End-to-end: every manifest error of docs/clock-model.md §10 through
 * the CLI. Covers each row of §10.1 (#1-#43), each message of §10.2, the
 * §10.3 clock-graph messages a manifest override can trigger, and which
 * message wins when two errors are present (the §10.1 validation order).
 *
 * Every case runs `tracemerge query ARCHIVE` and asserts exit status 1, the
 * exact single stderr line ("tracemerge: " + the reference's message) and
 * that nothing was imported half-way: the query the CLI still runs over a
 * failed import sees no event of any trace and no clock snapshot (a
 * manifest error fails the whole import, docs/clock-model.md §9.1 and docs/architecture.md "Errors"; the
 * process, thread and track rows a reader declared before a lazily
 * detected error stay, without events).
 * Table cases run twice: in a ZIP with the manifest listed last (a ZIP
 * delivers its manifest first wherever it is listed) and in a TAR with the
 * manifest first (a stream is read in order). Cases where the archive's
 * layout itself is the point are in test_e2e_manifest_layout_errors.c.
 *
 * Rows that cannot be reached end to end, and why (each with a test that
 * shows what happens instead):
 *  - #27 "root not an object" and "key missing": a member is a manifest
 *    only if its first non-blank bytes are {"perfetto_manifest"
 *    (docs/formats.md §6.1), so such a file is another format (here a JSON trace) and
 *    imports. Only "its value not an object" is reachable.
 *  - #37's sync_to variant: `clocks` without `sync_to.file` already fails
 *    parsing with #6, so resolution never sees a sync_to machine without a
 *    file.
 *  - §10.3 unit/incremental/non-ns messages: readers hand the graph every
 *    reading in ns with unit 1 and not incremental (proto_clock.c checks a
 *    clock's unit and encoding itself and counts invalid_clock_snapshots),
 *    and an override edge is two plain ns readings; so "cannot use
 *    incremental encoding", "previously registered with different
 *    properties" and "must always use nanoseconds" are unit-tested in
 *    test_clock_graph.c and cannot come from a manifest
 *    (test_units_never_reach_an_override_edge shows a µs clock and an
 *    override edge on one node). "Not updating trace time clock" never
 *    fails an import: the reference's callers ignore it, and we choose
 *    trace time after every file is read, so we never raise it.
 *
 * Fixtures: a.json and b.json are one-slice JSON traces; phone.pb is
 * systrace_spine.pb (one BOOTTIME/MONOTONIC snapshot, one marker);
 * relay.pb is machines.pb (a host snapshot, then packets of embedded
 * machine 7); remote.pb is remote_machine.pb (its first packet is from
 * machine 7, no snapshot). Two cases use remote_sync_first.pb (a
 * remote_clock_sync of machine 7 first), remote_sync_on_host.pb (the same
 * sync without a machine_id) and boottime_in_us.pb. Manifests
 * are written with ' for " and converted before use, so the table stays
 * readable.
 */
#include <glib.h>
#include <stdbool.h>
#include <string.h>

#include "e2e_manifest_messages.h"
#include "e2e_support.h"


typedef struct error_case {
  const char *path; /* the test's name */
  const char *manifest; /* ' for " */
  const char *message;  /* stderr without "tracemerge: " and the newline */
} error_case;

/* The trace members every table case's archive holds. */
typedef struct trace_set {
  char *a, *b;
  e2e_bytes phone, relay, remote;
} trace_set;

static trace_set trace_set_new(void) {
  return (trace_set){
      .a = e2e_json_slice("a", 1, 1, 1),
      .b = e2e_json_slice("b", 2, 2, 2),
      .phone = e2e_proto_fixture("systrace_spine"),
      .relay = e2e_proto_fixture("machines"),
      .remote = e2e_proto_fixture("remote_machine"),
  };
}

static void trace_set_free(trace_set *t) {
  g_free(t->a);
  g_free(t->b);
  g_free(t->phone.data);
  g_free(t->relay.data);
  g_free(t->remote.data);
}

/* A table case: the manifest with the trace set, in a ZIP (manifest listed
 * last) and in a TAR (manifest first). */
static void test_error_case(gconstpointer data) {
  const error_case *c = data;
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *manifest = manifest_text(c->manifest);
  trace_set t = trace_set_new();
  const e2e_member traces[] = {
      {"a.json", t.a, 0},
      {"b.json", t.b, 0},
      {"phone.pb", t.phone.data, t.phone.len},
      {"relay.pb", t.relay.data, t.relay.len},
      {"remote.pb", t.remote.data, t.remote.len},
  };
  enum { N = G_N_ELEMENTS(traces) + 1 };
  e2e_member zip[N], tar[N];
  tar[0] = zip[N - 1] = (e2e_member){"manifest.json", manifest, 0};
  for (size_t i = 0; i < N - 1; i++)
    zip[i] = tar[i + 1] = traces[i];
  g_autofree char *zip_path = e2e_write_archive(dir, "run.zip", E2E_ZIP, zip, N);
  assert_archive_fails(dir, "run.zip", c->message);
  g_autofree char *tar_path = e2e_write_archive(dir, "run.tar", E2E_TAR, tar, N);
  assert_archive_fails(dir, "run.tar", c->message);
  trace_set_free(&t);
  e2e_cleanup(dir);
}

/* §10.1, one case per row (several for rows with several triggers), in
 * row order; then §10.2's messages raised while files are read, §10.3's
 * graph messages, and pairs of errors in validation order. */
static const error_case cases[] = {
    /* #1 */
    {"/e2e/manifest/errors/10.1-01/trace-time-clock-is-a-number",
     M("'trace_time': {'clock': 6}"), P "clock name must be a string"},
    {"/e2e/manifest/errors/10.1-01/clocks-clock-is-a-number",
     M("'files': [{'path': 'a.json', 'clocks': {'clock': 6, 'sync_to': {'file': 'b.json'}}},"
       " {'path': 'b.json'}]"),
     P "clock name must be a string"},
    {"/e2e/manifest/errors/10.1-01/sync-to-clock-is-null",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'b.json', 'clock': null}}},"
       " {'path': 'b.json'}]"),
     P "clock name must be a string"},
    /* #2 */
    {"/e2e/manifest/errors/10.1-02/trace-time-clock-unknown",
     M("'trace_time': {'clock': 'TAI'}"), P "unknown clock name: TAI" CLOCK_NAMES},
    {"/e2e/manifest/errors/10.1-02/clock-names-are-case-sensitive",
     M("'files': [{'path': 'a.json', 'clocks': {'clock': 'boottime', "
       "'sync_to': {'file': 'b.json'}}},"
       " {'path': 'b.json'}]"),
     P "unknown clock name: boottime" CLOCK_NAMES},
    {"/e2e/manifest/errors/10.1-02/sync-to-clock-unknown",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'phone.pb', 'clock': "
       "'BOOTTIME_RAW'}}}, {'path': 'phone.pb'}]"),
     P "unknown clock name: BOOTTIME_RAW" CLOCK_NAMES},
    /* #3 */
    {"/e2e/manifest/errors/10.1-03/clocks-machine-not-a-string",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': 7, 'name': 'vm'}], 'clocks': "
       "{'machine': 7, 'clock': 'BOOTTIME', 'sync_to': {'file': 'phone.pb'}}}, "
       "{'path': 'phone.pb'}]"),
     P "clocks: machine must be a string"},
    /* #4 */
    {"/e2e/manifest/errors/10.1-04/clocks-without-sync-to",
     M("'files': [{'path': 'a.json', 'clocks': {'clock': 'BOOTTIME', 'offset_ns': 5}}]"),
     P "clocks: a sync_to block is required. Manual clock handling relates this file to a "
       "clock in another trace, e.g. \"sync_to\": {\"file\": \"other.pb\"}."},
    {"/e2e/manifest/errors/10.1-04/empty-clocks-object",
     M("'files': [{'path': 'a.json', 'clocks': {}}]"),
     P "clocks: a sync_to block is required. Manual clock handling relates this file to a "
       "clock in another trace, e.g. \"sync_to\": {\"file\": \"other.pb\"}."},
    /* #5 */
    {"/e2e/manifest/errors/10.1-05/sync-to-is-a-string",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': 'b.json'}}, {'path': 'b.json'}]"),
     P "clocks: sync_to must be an object"},
    {"/e2e/manifest/errors/10.1-05/sync-to-is-an-array",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': [{'file': 'b.json'}]}}, "
       "{'path': 'b.json'}]"),
     P "clocks: sync_to must be an object"},
    /* #6 */
    {"/e2e/manifest/errors/10.1-06/sync-to-file-missing",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'clock': 'BOOTTIME'}}}]"),
     MSG_SYNC_FILE},
    {"/e2e/manifest/errors/10.1-06/sync-to-file-not-a-string",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': ['b.json']}}}, "
       "{'path': 'b.json'}]"),
     MSG_SYNC_FILE},
    /* #7 */
    {"/e2e/manifest/errors/10.1-07/sync-to-machine-not-a-string",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'relay.pb', 'machine': 7}}},"
       " {'path': 'relay.pb', 'machines': [{'id': 7, 'name': 'vm'}]}]"),
     P "clocks: sync_to.machine must be a string"},
    /* #8 */
    {"/e2e/manifest/errors/10.1-08/offset-ns-with-a-fraction",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'b.json'}, 'offset_ns': 1.5}},"
       " {'path': 'b.json'}]"),
     P "clocks: offset_ns must be an integer"},
    {"/e2e/manifest/errors/10.1-08/offset-ns-with-an-exponent",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'b.json'}, 'offset_ns': 1e3}},"
       " {'path': 'b.json'}]"),
     P "clocks: offset_ns must be an integer"},
    {"/e2e/manifest/errors/10.1-08/offset-ns-is-a-string",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'b.json'}, "
       "'offset_ns': '500'}},"
       " {'path': 'b.json'}]"),
     P "clocks: offset_ns must be an integer"},
    /* #9 */
    {"/e2e/manifest/errors/10.1-09/offset-ns-is-int64-min",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'b.json'}, 'offset_ns': "
       "-9223372036854775808}}, {'path': 'b.json'}]"),
     P "clocks: offset_ns is out of range"},
    {"/e2e/manifest/errors/10.1-09/offset-ns-beyond-int64",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'b.json'}, 'offset_ns': "
       "9223372036854775808}}, {'path': 'b.json'}]"),
     P "clocks: offset_ns is out of range"},
    /* Beyond the reference: |offset_ns| > 2^62 (core/input/manifest.h). */
    {"/e2e/manifest/errors/10.1-09/offset-ns-is-int64-max",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'b.json'}, 'offset_ns': "
       "9223372036854775807}}, {'path': 'b.json'}]"),
     P "clocks: offset_ns is out of range: it must be within -4611686018427387904 and "
       "4611686018427387904 (2^62 ns, about 146 years)"},
    /* #10 */
    {"/e2e/manifest/errors/10.1-10/exported-table-row-count-not-an-integer",
     M("'files': [{'path': 't.tsv', '__exported_table_schema': {'format': 1, 'name': 'slice', "
       "'row_count': '2', 'columns': []}}]"),
     P "__exported_table_schema needs an integer format, a string name, an integer row_count "
       "and a columns array"},
    {"/e2e/manifest/errors/10.1-10/exported-table-without-columns",
     M("'files': [{'path': 't.tsv', '__exported_table_schema': {'format': 1, 'name': 'slice', "
       "'row_count': 2}}]"),
     P "__exported_table_schema needs an integer format, a string name, an integer row_count "
       "and a columns array"},
    /* #11 */
    {"/e2e/manifest/errors/10.1-11/exported-table-negative-row-count",
     M("'files': [{'path': 't.tsv', '__exported_table_schema': {'format': 1, 'name': 'slice', "
       "'row_count': -1, 'columns': []}}]"),
     P "table 'slice': invalid row_count"},
    {"/e2e/manifest/errors/10.1-11/exported-table-row-count-above-2-to-the-32-minus-1",
     M("'files': [{'path': 't.tsv', '__exported_table_schema': {'format': 1, 'name': 'slice', "
       "'row_count': 4294967296, 'columns': []}}]"),
     P "table 'slice': invalid row_count"},
    /* #12 */
    {"/e2e/manifest/errors/10.1-12/exported-table-column-without-type",
     M("'files': [{'path': 't.tsv', '__exported_table_schema': {'format': 1, 'name': 'slice', "
       "'row_count': 2, 'columns': [{'name': 'id', 'nullability': 'non_null', 'sort': 'sorted', "
       "'duplicates': 'no'}]}}]"),
     P "table 'slice': malformed column entry"},
    /* #13 */
    {"/e2e/manifest/errors/10.1-13/attributes-is-an-array",
     M("'attributes': ['benchmark', 'startup']"),
     P "attributes must be an object of string or integer values, e.g. \"attributes\": "
       "{\"benchmark\": \"startup\"}."},
    /* #14 */
    {"/e2e/manifest/errors/10.1-14/attributes-empty-key",
     M("'attributes': {'run': 1, '': 'x'}"), P "attributes: keys must be non-empty"},
    /* #15 */
    {"/e2e/manifest/errors/10.1-15/attribute-value-is-a-bool",
     M("'attributes': {'cold': true}"), P "attributes: 'cold' must be a string or an integer"},
    {"/e2e/manifest/errors/10.1-15/attribute-value-is-a-double",
     M("'attributes': {'ratio': 0.5}"), P "attributes: 'ratio' must be a string or an integer"},
    {"/e2e/manifest/errors/10.1-15/attribute-value-is-null",
     M("'attributes': {'x': null}"), P "attributes: 'x' must be a string or an integer"},
    {"/e2e/manifest/errors/10.1-15/attribute-value-is-an-object",
     M("'attributes': {'nested': {'a': 1}}"),
     P "attributes: 'nested' must be a string or an integer"},
    /* #16 */
    {"/e2e/manifest/errors/10.1-16/files-entry-is-a-string",
     M("'files': ['a.json']"), P "files entries must be objects with a string path"},
    {"/e2e/manifest/errors/10.1-16/files-entry-without-path",
     M("'files': [{'machine': {'name': 'phone'}}]"),
     P "files entries must be objects with a string path"},
    {"/e2e/manifest/errors/10.1-16/files-entry-path-is-a-number",
     M("'files': [{'path': 1}]"), P "files entries must be objects with a string path"},
    /* #17 */
    {"/e2e/manifest/errors/10.1-17/exported-table-with-a-machine",
     M("'files': [{'path': 't.tsv', 'machine': {'name': 'phone'}, '__exported_table_schema': "
       TABLE "}]"),
     P "'t.tsv': an exported table is not a trace, so __exported_table_schema cannot be "
       "combined with clocks/machine/machines"},
    {"/e2e/manifest/errors/10.1-17/exported-table-with-clocks",
     M("'files': [{'path': 't.tsv', 'clocks': {'sync_to': {'file': 'a.json'}}, "
       "'__exported_table_schema': " TABLE "}, {'path': 'a.json'}]"),
     P "'t.tsv': an exported table is not a trace, so __exported_table_schema cannot be "
       "combined with clocks/machine/machines"},
    /* #18 */
    {"/e2e/manifest/errors/10.1-18/clocks-is-a-string",
     M("'files': [{'path': 'a.json', 'clocks': 'BOOTTIME'}]"), P "clocks must be an object"},
    /* #19 */
    {"/e2e/manifest/errors/10.1-19/machine-and-machines-together",
     M("'files': [{'path': 'relay.pb', 'machine': {'name': 'relay'}, 'machines': [{'id': 7, "
       "'name': 'vm'}]}]"),
     P "machine and machines are mutually exclusive. Use `machine` for a single-machine file, "
       "or `machines` to remap a multi-machine proto's embedded ids; not both."},
    /* #20 */
    {"/e2e/manifest/errors/10.1-20/machine-is-a-string",
     M("'files': [{'path': 'a.json', 'machine': 'phone'}]"),
     P "machine must be an object with a string name, e.g. \"machine\": {\"name\": \"phone\"}."},
    {"/e2e/manifest/errors/10.1-20/machine-name-is-a-number",
     M("'files': [{'path': 'a.json', 'machine': {'name': 1}}]"),
     P "machine must be an object with a string name, e.g. \"machine\": {\"name\": \"phone\"}."},
    /* #21 */
    {"/e2e/manifest/errors/10.1-21/machine-name-empty",
     M("'files': [{'path': 'a.json', 'machine': {'name': ''}}]"),
     P "machine: name must be non-empty"},
    /* #22 */
    {"/e2e/manifest/errors/10.1-22/machines-is-an-object",
     M("'files': [{'path': 'relay.pb', 'machines': {'id': 7, 'name': 'vm'}}]"),
     P "machines must be an array"},
    /* #23 */
    {"/e2e/manifest/errors/10.1-23/machines-id-is-a-string",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': '7', 'name': 'vm'}]}]"),
     P "machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
       "\"name\": \"phone\"}]."},
    {"/e2e/manifest/errors/10.1-23/machines-id-written-as-7.0",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': 7.0, 'name': 'vm'}]}]"),
     P "machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
       "\"name\": \"phone\"}]."},
    {"/e2e/manifest/errors/10.1-23/machines-entry-without-name",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': 7}]}]"),
     P "machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
       "\"name\": \"phone\"}]."},
    {"/e2e/manifest/errors/10.1-23/machines-entry-is-a-string",
     M("'files': [{'path': 'relay.pb', 'machines': ['vm']}]"),
     P "machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
       "\"name\": \"phone\"}]."},
    /* #24 */
    {"/e2e/manifest/errors/10.1-24/machines-id-negative",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': -1, 'name': 'vm'}]}]"),
     P "machines: id must be in [0, 4294967295]"},
    {"/e2e/manifest/errors/10.1-24/machines-id-2-to-the-32",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': 4294967296, 'name': 'vm'}]}]"),
     P "machines: id must be in [0, 4294967295]"},
    /* #25 */
    {"/e2e/manifest/errors/10.1-25/machines-name-empty",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': 0, 'name': 'relay'}, {'id': 7, "
       "'name': ''}]}]"),
     P "machines: name must be non-empty"},
    /* #26: placement, see test_second_manifest_*. */
    /* #27: only "the value is not an object" is reachable, see the top. */
    {"/e2e/manifest/errors/10.1-27/manifest-value-is-a-number",
     "{'perfetto_manifest': 1}",
     P "expected a JSON object with a top-level perfetto_manifest key"},
    {"/e2e/manifest/errors/10.1-27/manifest-value-is-an-array",
     "{'perfetto_manifest': [{'version': 1}]}",
     P "expected a JSON object with a top-level perfetto_manifest key"},
    {"/e2e/manifest/errors/10.1-27/repeated-key-keeps-the-last-value-null",
     "{'perfetto_manifest': {'version': 1}, 'perfetto_manifest': null}",
     P "expected a JSON object with a top-level perfetto_manifest key"},
    /* #28 */
    {"/e2e/manifest/errors/10.1-28/version-missing",
     "{'perfetto_manifest': {'files': [{'path': 'a.json'}]}}",
     P "missing required field: version"},
    /* #29 */
    {"/e2e/manifest/errors/10.1-29/version-1.5", "{'perfetto_manifest': {'version': 1.5}}",
     P "version must be an integer"},
    {"/e2e/manifest/errors/10.1-29/version-is-a-string", "{'perfetto_manifest': {'version': '1'}}",
     P "version must be an integer"},
    {"/e2e/manifest/errors/10.1-29/version-1.0", "{'perfetto_manifest': {'version': 1.0}}",
     P "version must be an integer"},
    {"/e2e/manifest/errors/10.1-29/version-beyond-int64",
     "{'perfetto_manifest': {'version': 18446744073709551617}}", P "version must be an integer"},
    /* #30 */
    {"/e2e/manifest/errors/10.1-30/version-2", "{'perfetto_manifest': {'version': 2}}",
     P "unsupported version: 2. Only version 1 is supported; set \"version\": 1."},
    {"/e2e/manifest/errors/10.1-30/version-0", "{'perfetto_manifest': {'version': 0}}",
     P "unsupported version: 0. Only version 1 is supported; set \"version\": 1."},
    {"/e2e/manifest/errors/10.1-30/version-int64-min",
     "{'perfetto_manifest': {'version': -9223372036854775808}}",
     P "unsupported version: -9223372036854775808. Only version 1 is supported; set "
       "\"version\": 1."},
    /* #31 */
    {"/e2e/manifest/errors/10.1-31/trace-time-is-a-string", M("'trace_time': 'BOOTTIME'"),
     P "trace_time must be an object"},
    /* #32 */
    {"/e2e/manifest/errors/10.1-32/trace-time-without-clock",
     M("'trace_time': {'file': 'phone.pb'}, 'files': [{'path': 'phone.pb'}]"),
     P "trace_time needs a clock"},
    /* #33 */
    {"/e2e/manifest/errors/10.1-33/trace-time-file-not-a-string",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 1}"), P "trace_time: file must be a string"},
    /* #34 */
    {"/e2e/manifest/errors/10.1-34/trace-time-machine-not-a-string",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'relay.pb', 'machine': 7}, 'files': "
       "[{'path': 'relay.pb', 'machines': [{'id': 7, 'name': 'vm'}]}]"),
     P "trace_time: machine must be a string"},
    /* #35 */
    {"/e2e/manifest/errors/10.1-35/files-is-an-object",
     M("'files': {'path': 'a.json'}"), P "files must be an array"},
    /* #36 */
    {"/e2e/manifest/errors/10.1-36/exported-table-member-absent",
     M("'files': [{'path': 't.tsv', '__exported_table_schema': " TABLE "}]"),
     P "table member 't.tsv' is declared but not present in the archive"},
    /* #37: the trace_time variant; the sync_to one is pre-empted by #6. */
    {"/e2e/manifest/errors/10.1-37/trace-time-machine-without-file",
     M("'trace_time': {'clock': 'BOOTTIME', 'machine': 'vm'}, 'files': [{'path': 'relay.pb', "
       "'machines': [{'id': 0, 'name': 'relay'}, {'id': 7, 'name': 'vm'}]}]"),
     P "trace_time: machine 'vm' needs trace_time: file too: a machine name alone is "
       "ambiguous because embedded machine ids are scoped to their trace."},
    {"/e2e/manifest/errors/10.1-37/sync-to-machine-without-file-is-pre-empted-by-10.1-06",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'machine': 'vm', 'clock': "
       "'BOOTTIME'}}}, {'path': 'relay.pb', 'machines': [{'id': 7, 'name': 'vm'}]}]"),
     MSG_SYNC_FILE},
    /* #38 */
    {"/e2e/manifest/errors/10.1-38/trace-time-file-unknown",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'ghost.pb'}, 'files': [{'path': 'phone.pb'}]"),
     UNKNOWN_FILE("trace_time: file", "ghost.pb")},
    {"/e2e/manifest/errors/10.1-38/trace-time-file-is-a-member-but-not-listed",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'phone.pb'}"),
     UNKNOWN_FILE("trace_time: file", "phone.pb")},
    {"/e2e/manifest/errors/10.1-38/sync-to-file-unknown",
     M("'files': [{'path': 'a.json', 'clocks': {'clock': 'BOOTTIME', 'sync_to': {'file': "
       "'ghost.pb', 'clock': 'BOOTTIME'}}}]"),
     UNKNOWN_FILE("clocks: sync_to.file", "ghost.pb")},
    /* #39 */
    {"/e2e/manifest/errors/10.1-39/trace-time-file-is-multi-machine",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'relay.pb'}, 'files': [{'path': 'relay.pb', "
       "'machines': [{'id': 0, 'name': 'relay'}, {'id': 7, 'name': 'vm'}]}]"),
     P "trace_time: file 'relay.pb' is a multi-machine trace; also name the machine with "
       "trace_time: machine."},
    {"/e2e/manifest/errors/10.1-39/sync-to-file-is-multi-machine",
     M("'files': [{'path': 'phone.pb', 'clocks': {'clock': 'BOOTTIME', 'sync_to': {'file': "
       "'relay.pb', 'clock': 'BOOTTIME'}}}, {'path': 'relay.pb', 'machines': [{'id': 0, "
       "'name': 'relay'}, {'id': 7, 'name': 'vm'}]}]"),
     P "clocks: sync_to.file 'relay.pb' is a multi-machine trace; also name the machine with "
       "clocks: sync_to.machine."},
    /* #40 */
    {"/e2e/manifest/errors/10.1-40/trace-time-machine-not-declared-by-the-file",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'phone.pb', 'machine': 'vm'}, 'files': "
       "[{'path': 'phone.pb', 'machine': {'name': 'phone'}}, {'path': 'relay.pb', 'machines': "
       "[{'id': 7, 'name': 'vm'}]}]"),
     P "trace_time: machine 'vm' is not a machine declared by file 'phone.pb'."},
    {"/e2e/manifest/errors/10.1-40/sync-to-machine-not-declared-by-the-file",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'phone.pb', 'machine': "
       "'vm', 'clock': 'BOOTTIME'}}}, {'path': 'phone.pb', 'machine': {'name': 'phone'}}]"),
     P "clocks: sync_to.machine 'vm' is not a machine declared by file 'phone.pb'."},
    {"/e2e/manifest/errors/10.1-40/sync-to-machine-of-a-file-that-declares-none",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'phone.pb', 'machine': "
       "'phone'}}}, {'path': 'phone.pb'}, {'path': 'b.json', 'machine': {'name': 'phone'}}]"),
     P "clocks: sync_to.machine 'phone' is not a machine declared by file 'phone.pb'."},
    /* #41 */
    {"/e2e/manifest/errors/10.1-41/source-file-is-multi-machine",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': 0, 'name': 'relay'}, {'id': 7, "
       "'name': 'vm'}], 'clocks': {'clock': 'BOOTTIME', 'sync_to': {'file': 'phone.pb', "
       "'clock': 'BOOTTIME'}}}, {'path': 'phone.pb'}]"),
     P "clocks: file 'relay.pb' is a multi-machine trace; name which machine the clock is on "
       "with clocks: machine."},
    /* #42 */
    {"/e2e/manifest/errors/10.1-42/source-machine-not-declared",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': 0, 'name': 'relay'}, {'id': 7, "
       "'name': 'vm'}], 'clocks': {'machine': 'phone', 'clock': 'BOOTTIME', 'sync_to': "
       "{'file': 'phone.pb', 'clock': 'BOOTTIME'}}}, {'path': 'phone.pb', 'machine': "
       "{'name': 'phone'}}]"),
     P "clocks: machine 'phone' is not a machine declared by file 'relay.pb'."},
    {"/e2e/manifest/errors/10.1-42/source-machine-on-a-single-machine-file",
     M("'files': [{'path': 'a.json', 'machine': {'name': 'phone'}, 'clocks': {'machine': 'vm', "
       "'sync_to': {'file': 'b.json'}}}, {'path': 'b.json', 'machine': {'name': 'vm'}}]"),
     P "clocks: machine 'vm' is not a machine declared by file 'a.json'."},
    /* #43 */
    {"/e2e/manifest/errors/10.1-43/pin-source-not-in-the-archive",
     M("'files': [{'path': 'absent.json', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
       "{'path': 'a.json'}]"),
     NOT_RESOLVED("absent.json")},
    {"/e2e/manifest/errors/10.1-43/private-clock-reference-not-in-the-archive",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'absent.json'}}}, "
       "{'path': 'absent.json'}]"),
     NOT_RESOLVED("absent.json")},
    {"/e2e/manifest/errors/10.1-43/relate-onto-a-private-clock-not-in-the-archive",
     M("'files': [{'path': 'phone.pb', 'clocks': {'clock': 'BOOTTIME', 'sync_to': {'file': "
       "'absent.json'}}}, {'path': 'absent.json'}]"),
     NOT_RESOLVED("absent.json")},

    /* The JSON parser's messages, propagated without a prefix (§10.1,
     * after the table); ours name how far the parser read. "Empty JSON
     * input" and "Failed to start parsing" cannot be reached: a manifest
     * is detected by its first bytes {"perfetto_manifest", so its root
     * value has begun. "Empty parse stack after ParseStart" and "Unknown
     * JSON value type" are internal states of the reference's parser. */
    {"/e2e/manifest/errors/10.1-json/trailing-comma-in-an-object",
     "{'perfetto_manifest': {'version': 1,}}",
     "Failed to parse object: parse error: invalid object key (must be a string), near byte 37"},
    {"/e2e/manifest/errors/10.1-json/missing-comma-in-an-array",
     M("'files': [{'path': 'a.json'} {'path': 'b.json'}]"),
     "Failed to parse array: parse error: after array element, I expect ',' or ']', near byte 67"},
    {"/e2e/manifest/errors/10.1-json/manifest-cut-short",
     "{'perfetto_manifest': {'version': 1, 'files': [",
     "Failed to parse array: parse error: premature EOF, near byte 47"},

    /* §10.2, raised while files are read. */
    {"/e2e/manifest/errors/10.2/pinned-file-adds-a-clock-snapshot",
     M("'files': [{'path': 'phone.pb', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
       "{'path': 'a.json'}]"),
     MSG_SINGLE_CLOCK},
    {"/e2e/manifest/errors/10.2/machines-remap-lacks-an-embedded-id",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': 0, 'name': 'relay'}]}]"),
     P "machines: trace has a packet from undeclared machine id 7"},
    {"/e2e/manifest/errors/10.2/machines-remap-without-id-0-lacks-embedded-id-7",
     M("'files': [{'path': 'remote.pb', 'machines': [{'id': 8, 'name': 'vm'}]}]"),
     P "machines: trace has a packet from undeclared machine id 7"},
    {"/e2e/manifest/errors/10.2/machine-override-on-a-multi-machine-file",
     M("'files': [{'path': 'relay.pb', 'machine': {'name': 'relay'}}]"), MSG_MACHINE_ON_MULTI},
    {"/e2e/manifest/errors/10.2/machine-override-on-a-file-whose-first-packet-is-remote",
     M("'files': [{'path': 'remote.pb', 'machine': {'name': 'phone'}}]"), MSG_MACHINE_ON_MULTI},
    {"/e2e/manifest/errors/10.2/clocks-override-on-a-file-with-a-remote-packet",
     M("'files': [{'path': 'remote.pb', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
       "{'path': 'a.json'}]"),
     MSG_CLOCKS_ON_MULTI},
    {"/e2e/manifest/errors/10.2/override-on-the-manifest-itself",
     M("'files': [{'path': 'manifest.json', 'machine': {'name': 'phone'}}]"),
     MSG_CONTAINER("manifest.json")},

    /* §10.3 through an override edge (each override is one two-clock
     * snapshot, §9.3). */
    {"/e2e/manifest/errors/10.3/relate-between-two-files-on-one-named-machine",
     M("'files': [{'path': 'a.json', 'machine': {'name': 'phone'}, 'clocks': {'clock': "
       "'BOOTTIME', 'sync_to': {'file': 'b.json', 'clock': 'BOOTTIME'}}}, {'path': 'b.json', "
       "'machine': {'name': 'phone'}}]"),
     "Clock sync error: duplicate clock domain with id=6 at snapshot 0."},
    /* x is machine row 0 and relay row 1, so the shared clock prints with
     * its machine. */
    {"/e2e/manifest/errors/10.3/relate-onto-the-same-machine-through-a-remap",
     M("'files': [{'path': 'b.json', 'machine': {'name': 'x'}}, {'path': 'phone.pb', "
       "'machine': {'name': 'relay'}, 'clocks': {'clock': 'BOOTTIME', 'sync_to': {'file': "
       "'relay.pb', 'machine': 'relay', 'clock': 'BOOTTIME'}}}, {'path': 'relay.pb', "
       "'machines': [{'id': 7, 'name': 'relay'}]}]"),
     "Clock sync error: duplicate clock domain with id=6(seq=0,tf=0,m=1) at snapshot 0."},
    {"/e2e/manifest/errors/10.3/relate-on-the-host-names-host-boottime-twice",
     M("'files': [{'path': 'phone.pb', 'clocks': {'clock': 'BOOTTIME', 'offset_ns': 9, "
       "'sync_to': {'file': 'a.json', 'clock': 'BOOTTIME'}}}, {'path': 'a.json'}]"),
     "Clock sync error: duplicate clock domain with id=6 at snapshot 0."},
    {"/e2e/manifest/errors/10.3/trace-time-clock-goes-back-between-two-overrides",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'phone.pb'}, 'files': ["
       "{'path': 'phone.pb', 'machine': {'name': 'phone'}},"
       " {'path': 'a.json', 'clocks': {'clock': 'BOOTTIME', 'offset_ns': 100, 'sync_to': "
       "{'file': 'phone.pb', 'clock': 'BOOTTIME'}}},"
       " {'path': 'b.json', 'clocks': {'clock': 'BOOTTIME', 'offset_ns': -100, 'sync_to': "
       "{'file': 'phone.pb', 'clock': 'BOOTTIME'}}}]"),
     "Clock sync error: the trace clock (id=6) is not monotonic at snapshot 1. 0 not >= 100."},

    /* Two errors: the validation order of §10.1 decides which is reported. */
    {"/e2e/manifest/errors/order/version-before-everything-else",
     "{'perfetto_manifest': {'trace_time': 'x', 'files': 'y', 'attributes': [], 'version': 3}}",
     P "unsupported version: 3. Only version 1 is supported; set \"version\": 1."},
    {"/e2e/manifest/errors/order/trace-time-before-files",
     M("'files': 'y', 'trace_time': {'clock': 'TAI'}"),
     P "unknown clock name: TAI" CLOCK_NAMES},
    {"/e2e/manifest/errors/order/trace-time-syntax-before-its-references",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'ghost.pb', 'machine': 1}"),
     P "trace_time: machine must be a string"},
    {"/e2e/manifest/errors/order/files-before-attributes",
     M("'attributes': {'x': true}, 'files': [{'path': 'a.json', 'machine': {'name': ''}}]"),
     P "machine: name must be non-empty"},
    {"/e2e/manifest/errors/order/files-entries-in-array-order",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {}}}, {'path': 'b.json', "
       "'clocks': 'x'}]"),
     MSG_SYNC_FILE},
    {"/e2e/manifest/errors/order/path-before-the-rest-of-its-entry",
     M("'files': [{'path': 7, 'clocks': 'x', 'machine': 'y'}]"),
     P "files entries must be objects with a string path"},
    {"/e2e/manifest/errors/order/exported-table-rules-before-clocks-syntax",
     M("'files': [{'path': 't.tsv', 'clocks': 'x', '__exported_table_schema': 5}]"),
     P "'t.tsv': an exported table is not a trace, so __exported_table_schema cannot be "
       "combined with clocks/machine/machines"},
    {"/e2e/manifest/errors/order/clocks-syntax-before-machine-and-machines",
     M("'files': [{'path': 'relay.pb', 'machine': {'name': 'x'}, 'machines': [], "
       "'clocks': {'sync_to': {'file': 'a.json'}, 'offset_ns': 0.5}}]"),
     P "clocks: offset_ns must be an integer"},
    {"/e2e/manifest/errors/order/attributes-before-any-reference",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'ghost.pb'}, 'attributes': {'': 1}"),
     P "attributes: keys must be non-empty"},
    {"/e2e/manifest/errors/order/exported-table-presence-before-trace-time-references",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'ghost.pb'}, 'files': [{'path': 't.tsv', "
       "'__exported_table_schema': " TABLE "}]"),
     P "table member 't.tsv' is declared but not present in the archive"},
    {"/e2e/manifest/errors/order/trace-time-references-before-overrides",
     M("'trace_time': {'clock': 'BOOTTIME', 'file': 'ghost.pb'}, 'files': [{'path': 'a.json', "
       "'clocks': {'sync_to': {'file': 'phantom.json'}}}]"),
     UNKNOWN_FILE("trace_time: file", "ghost.pb")},
    {"/e2e/manifest/errors/order/source-machine-before-the-reference",
     M("'files': [{'path': 'relay.pb', 'machines': [{'id': 7, 'name': 'vm'}], 'clocks': "
       "{'clock': 'BOOTTIME', 'sync_to': {'file': 'ghost.pb'}}}]"),
     P "clocks: file 'relay.pb' is a multi-machine trace; name which machine the clock is on "
       "with clocks: machine."},
    {"/e2e/manifest/errors/order/reference-before-the-member-files",
     M("'files': [{'path': 'absent.json', 'clocks': {'sync_to': {'file': 'ghost.json'}}}]"),
     UNKNOWN_FILE("clocks: sync_to.file", "ghost.json")},
    {"/e2e/manifest/errors/order/pin-source-before-its-reference",
     M("'files': [{'path': 'absent1.json', 'clocks': {'sync_to': {'file': 'absent2.json'}}}, "
       "{'path': 'absent2.json'}]"),
     NOT_RESOLVED("absent1.json")},
    {"/e2e/manifest/errors/order/resolution-before-any-override-edge",
     M("'files': [{'path': 'a.json', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
       "{'path': 'b.json', 'clocks': {'sync_to': {'file': 'ghost.json'}}}]"),
     UNKNOWN_FILE("clocks: sync_to.file", "ghost.json")},
    {"/e2e/manifest/errors/order/validation-before-any-file-is-read",
     M("'files': [{'path': 'phone.pb', 'clocks': {'sync_to': {'file': 'a.json'}}}, "
       "{'path': 'a.json'}], 'attributes': {'x': [1]}"),
     P "attributes: 'x' must be a string or an integer"},
};

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    if (cases[i].message)
      g_test_add_data_func(cases[i].path, &cases[i], test_error_case);
  return g_test_run();
}
