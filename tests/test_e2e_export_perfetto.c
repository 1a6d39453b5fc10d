/*
 * `tracemerge export --format perfetto`: a merge written as one Perfetto
 * trace, read back, answers as the merge did (the round trips of
 * tests/data/export/perfetto_roundtrip.sql on two merges of two machines
 * each and on the proto reader's Android fixture, the one input with
 * logcat events, packages and cpu times; stats, metadata and import logs
 * per machine, an Android trace's service packets), and the file is sound protobuf: protoc decodes it raw
 * and against proto/trace.proto without a field the schema lacks, and a
 * walk of its packets checks one trusted sequence per source with its
 * state set before use (the first packet clears incremental state and sets
 * defaults; every interned id and track uuid an event names was defined
 * before on its sequence, or machine for tracks; one machine per sequence).
 *
 * The expected answers are the merge's own (tests/support/export_checks.h
 * compares both saved databases query by query): nothing is written down
 * here, so a query can only pass if the export carried what it asks. Each
 * round trip also checks that the merge has what the queries are about
 * (slices, flows, args, scheduling, samples), so an empty answer on both
 * sides cannot pass for a carried one. Beside it: test_e2e_export_json.c
 * and test_e2e_export_cli.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "corpus.h"
#include "e2e_support.h"
#include "export_checks.h"


/* The system trace and Chrome JSON merge exported as Perfetto, written once
 * and shared by the tests that read it (each export costs a second under
 * AddressSanitizer); main removes it after the run. */
static char *shared_dir;

static const char *system_and_chrome_pftrace(void) {
  static char *pftrace;
  if (!pftrace) {
    shared_dir = e2e_tmpdir();
    g_autofree char *zip = write_system_and_chrome_zip(shared_dir);
    pftrace = export_to(shared_dir, "system_and_chrome.zip", "merged.pftrace", "perfetto");
  }
  return pftrace;
}

/* --- Perfetto round trips ----------------------------------------------------- */

/* Compares the merge `zip` and its Perfetto export `pftrace`, both in `dir`. */
/* --- stats, metadata and import logs -------------------------------------------- */

/* Each row of `sql` as one line of its values ("|" between them). */
static GPtrArray *rows_of(sqlite3 *db, const char *sql) {
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error("cannot prepare (%s): %s", sqlite3_errmsg(db), sql);
  GPtrArray *rows = g_ptr_array_new_with_free_func(g_free);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    GString *line = g_string_new(NULL);
    for (int c = 0; c < sqlite3_column_count(stmt); c++) {
      const char *text = (const char *)sqlite3_column_text(stmt, c);
      g_string_append_printf(line, "%s%s", c ? "|" : "", text ? text : "NULL");
    }
    g_ptr_array_add(rows, g_string_free(line, FALSE));
  }
  sqlite3_finalize(stmt);
  return rows;
}

static bool has_row(const GPtrArray *rows, const char *row) {
  for (guint i = 0; i < rows->len; i++)
    if (strcmp(rows->pdata[i], row) == 0)
      return true;
  return false;
}

/* The rows of `rows` for which `keep` holds, one per line, in order. */
static char *joined(const GPtrArray *rows, bool (*keep)(const char *row, void *user), void *user) {
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < rows->len; i++)
    if (!keep || keep(rows->pdata[i], user))
      g_string_append_printf(out, "%s\n", (const char *)rows->pdata[i]);
  return g_string_free(out, FALSE);
}

/* A stat row "machine|name|idx|severity|source|value" of a stat the trace
 * reported about itself in a service packet: TraceStats (traced_*),
 * FtraceStats (ftrace_cpu_*), logcat's Stats (android_log_num_*). */
static bool is_reported_stat(const char *row, void *user) {
  (void)user;
  const char *name = strchr(row, '|') + 1;
  return g_str_has_prefix(name, "traced_") || g_str_has_prefix(name, "ftrace_cpu_") ||
         g_str_has_prefix(name, "android_log_num_");
}

/* The metadata keys the reader takes from SystemInfo (proto_system_info.c),
 * which it keeps as metadata for a trace's own machine only (as
 * trace_processor does); other machines have them in their machine row. */
static const char *const system_info_keys[] = {
    "system_name", "system_release", "system_version", "system_machine",
    "android_build_fingerprint", "android_device_manufacturer", "tracing_service_version",
    "android_sdk_version", "timezone_off_mins", "system_ram_bytes", "system_ram_gb"};

/* A metadata row "machine|name|type|int|str" the export carries
 * (docs/exports.md): every machine's, except the SystemInfo keys of
 * machines other than the first (`user`: its name). A Chrome JSON's own
 * metadata object (json_metadata.<key>) is carried as ChromeMetadata,
 * which the reader names cr-<key>: merged_metadata_sql names it so. */
static bool is_carried_metadata(const char *row, void *user) {
  const char *first = user;
  g_auto(GStrv) f = g_strsplit(row, "|", 3);
  if (strcmp(f[0], first) == 0)
    return true;
  for (size_t i = 0; i < G_N_ELEMENTS(system_info_keys); i++)
    if (strcmp(f[1], system_info_keys[i]) == 0)
      return false;
  return true;
}

static const char stats_sql[] =
    "SELECT m.name, s.name, s.idx, s.severity, s.source, s.value FROM stats s "
    "LEFT JOIN machine m ON m.id = s.machine_id WHERE s.value <> 0 ORDER BY 1, 2, 3, 6";
/* Machine-scoped rows, by machine name. The others describe the inputs,
 * not their data, and cannot survive (docs/exports.md): a file's own rows
 * (trace_type, trace_size_bytes), the manifest's attributes, the merge's
 * trace clock (the export's is BOOTTIME). */
static const char metadata_sql[] =
    "SELECT m.name, d.name, d.key_type, d.int_value, d.str_value FROM metadata d "
    "JOIN machine m ON m.id = d.machine_id ORDER BY 1, 2, 4, 5";
static const char merged_metadata_sql[] =
    "SELECT m.name, CASE WHEN d.name LIKE 'json\\_metadata.%' ESCAPE '\\' "
    "THEN 'cr-' || substr(d.name, length('json_metadata.') + 1) ELSE d.name END, "
    "d.key_type, d.int_value, d.str_value FROM metadata d "
    "JOIN machine m ON m.id = d.machine_id ORDER BY 1, 2, 4, 5";
/* Import logs without their file and byte offset (which point into the
 * inputs): stat, severity, timestamp and args. */
static const char import_logs_sql[] =
    "SELECT l.name, l.severity, l.ts, (SELECT group_concat(a.key || '=' || "
    "coalesce(a.int_value, a.string_value, a.real_value), ',') FROM args a "
    "WHERE a.arg_set_id = l.arg_set_id) FROM _trace_import_logs l ORDER BY 1, 2, 3, 4";

typedef struct stat_filter {
  const GPtrArray *merged, *exported; /* stats rows */
} stat_filter;

/* An import-log row of a stat whose rows came back whole: the stat's rows
 * (by name) are the same on both sides. */
static bool is_log_of_surviving_stat(const char *row, void *user) {
  const stat_filter *f = user;
  g_autofree char *name = g_strndup(row, strcspn(row, "|"));
  guint n = 0;
  for (guint i = 0; i < f->merged->len; i++) {
    g_auto(GStrv) cols = g_strsplit(f->merged->pdata[i], "|", 3);
    if (strcmp(cols[1], name) != 0)
      continue;
    if (!has_row(f->exported, f->merged->pdata[i]))
      return false;
    n++;
  }
  for (guint i = 0; i < f->exported->len; i++) {
    g_auto(GStrv) cols = g_strsplit(f->exported->pdata[i], "|", 3);
    if (strcmp(cols[1], name) == 0)
      n--;
  }
  return n == 0;
}

/* The stats, metadata and import logs of the export's import against the
 * merge's: what docs/exports.md says survives is equal, and nothing comes
 * back that the merge did not have. Returns the number of stats rows the
 * traces reported (carried), so a caller can check there were some. */
static guint assert_service_rows_survive(sqlite3 *merged, sqlite3 *exported) {
  g_autoptr(GPtrArray) stats_a = rows_of(merged, stats_sql);
  g_autoptr(GPtrArray) stats_b = rows_of(exported, stats_sql);
  g_autofree char *reported_a = joined(stats_a, is_reported_stat, NULL);
  g_autofree char *reported_b = joined(stats_b, is_reported_stat, NULL);
  g_assert_cmpstr(reported_b, ==, reported_a);
  for (guint i = 0; i < stats_b->len; i++)
    if (!has_row(stats_a, stats_b->pdata[i]))
      g_error("a stat the merge did not have: %s", (const char *)stats_b->pdata[i]);

  g_autoptr(GPtrArray) first = rows_of(merged, "SELECT name FROM machine WHERE id = 0");
  g_assert_cmpuint(first->len, ==, 1);
  g_autoptr(GPtrArray) meta_a = rows_of(merged, merged_metadata_sql);
  g_autoptr(GPtrArray) meta_b = rows_of(exported, metadata_sql);
  g_autofree char *carried_a = joined(meta_a, is_carried_metadata, first->pdata[0]);
  g_autofree char *carried_b = joined(meta_b, NULL, NULL);
  g_assert_cmpstr(carried_b, ==, carried_a);

  g_autoptr(GPtrArray) logs_a = rows_of(merged, import_logs_sql);
  g_autoptr(GPtrArray) logs_b = rows_of(exported, import_logs_sql);
  stat_filter filter = {stats_a, stats_b};
  g_autofree char *surviving_a = joined(logs_a, is_log_of_surviving_stat, &filter);
  g_autofree char *surviving_b = joined(logs_b, is_log_of_surviving_stat, &filter);
  g_assert_cmpstr(surviving_b, ==, surviving_a);
  for (guint i = 0; i < logs_b->len; i++)
    if (!has_row(logs_a, logs_b->pdata[i]))
      g_error("an import log the merge did not have: %s", (const char *)logs_b->pdata[i]);

  guint reported = 0;
  for (guint i = 0; i < stats_a->len; i++)
    reported += is_reported_stat(stats_a->pdata[i], NULL);
  return reported;
}

static void perfetto_round_trip(const char *dir, const char *zip, const char *pftrace,
                                guint *queries, sqlite3 **merged_out) {
  g_autofree char *merged_db = save(dir, zip, "merged.sqlite");
  g_autofree char *export_db = save(dir, pftrace, "exported.sqlite");
  g_autofree char *suite = data_file("perfetto_roundtrip.sql");
  sqlite3 *merged = open_db(merged_db, NULL);
  sqlite3 *exported = open_db(export_db, NULL);
  *queries = compare_suite(merged, exported, suite);
  assert_service_rows_survive(merged, exported);
  sqlite3_close(exported);
  *merged_out = merged;
}

/* Two Android system traces on two machines, each with the stats and
 * metadata traced writes (TraceStats of two and three buffers, FtraceStats,
 * TraceConfig, service events; the first also a TraceUuid): every one
 * comes back on its machine, the second's on packets naming its
 * machine_id. */
static void test_perfetto_stats_and_metadata_survive_per_machine(void) {
  g_autofree char *dir = e2e_tmpdir();
  gsize tablet_len = 0, phone_len = 0;
  g_autofree char *tablet =
      corpus_read_plain("proto", "winscope-no_winscope_traces.perfetto-trace", &tablet_len);
  g_autofree char *phone =
      corpus_read_plain("proto", "nowinandroid-trace.perfetto-trace", &phone_len);
  const char *manifest =
      "{\"perfetto_manifest\": {\"version\": 1, \"files\": ["
      "{\"path\": \"tablet.pftrace\", \"machine\": {\"name\": \"tablet\"}},"
      "{\"path\": \"phone.pftrace\", \"machine\": {\"name\": \"phone\"}}]}}";
  const e2e_member members[] = {{"perfetto_manifest.json", manifest, 0},
                                {"tablet.pftrace", tablet, tablet_len},
                                {"phone.pftrace", phone, phone_len}};
  g_autofree char *zip = e2e_write_archive(dir, "two_phones.zip", E2E_ZIP, members, 3);
  g_autofree char *pftrace = export_to(dir, "two_phones.zip", "merged.pftrace", "perfetto");
  g_autofree char *merged_db = save(dir, "two_phones.zip", "merged.sqlite");
  g_autofree char *export_db = save(dir, "merged.pftrace", "exported.sqlite");
  sqlite3 *merged = open_db(merged_db, NULL);
  sqlite3 *exported = open_db(export_db, NULL);
  guint reported = assert_service_rows_survive(merged, exported);
  /* What the comparison is about is there, on both machines. */
  g_assert_cmpuint(reported, >, 50);
  g_assert_cmpint(scalar(merged, "SELECT count(DISTINCT machine_id) FROM stats "
                                 "WHERE name LIKE 'traced%' AND value <> 0"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM stats "
                                 "WHERE name LIKE 'ftrace_cpu%' AND value <> 0"), >, 8);
  g_assert_cmpint(scalar(merged, "SELECT count(DISTINCT machine_id) FROM metadata "
                                 "WHERE name IN ('trace_config_pbtxt', 'tracing_started_ns')"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM metadata WHERE name = 'trace_uuid'"), ==, 1);
  g_assert_cmpint(scalar(exported, "SELECT count(*) FROM metadata WHERE machine_id = 1"), >, 5);
  sqlite3_close(merged);
  sqlite3_close(exported);
  e2e_cleanup(dir);
}

static void test_perfetto_system_and_chrome_answer_the_same(void) {
  const char *pftrace = system_and_chrome_pftrace();
  guint queries = 0;
  sqlite3 *merged = NULL;
  perfetto_round_trip(shared_dir, "system_and_chrome.zip", pftrace, &queries, &merged);
  g_assert_cmpuint(queries, >=, 30);
  /* What the answers are about is there to carry. */
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM machine WHERE name IS NOT NULL"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM slice"), >, 10000);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM flow"), >, 100);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM args"), >, 1000);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM sched"), >, 1000);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM thread_state WHERE waker_utid IS NOT NULL"), >, 100);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM perf_sample"), >, 100);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM slice WHERE dur = 0"), >, 10);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM clock_snapshot WHERE clock_name = 'REALTIME'"), >, 0);
  /* The Chrome JSON's metadata object, compared as cr-<key> rows. */
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM metadata WHERE name LIKE 'json_metadata.%'"), >, 10);
  sqlite3_close(merged);
}

static void test_perfetto_demo_example_answers_the_same(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *zip = e2e_write_example_zip(dir);
  guint queries = 0;
  sqlite3 *merged = NULL;
  g_autofree char *pftrace = export_to(dir, "example.zip", "merged.pftrace", "perfetto");
  perfetto_round_trip(dir, "example.zip", pftrace, &queries, &merged);
  g_assert_cmpuint(queries, >=, 30);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM counter"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(DISTINCT thread.machine_id) FROM thread_track "
                                 "JOIN thread USING (utid)"), ==, 2);
  sqlite3_close(merged);
  e2e_cleanup(dir);
}

/* The proto reader's Android fixture (tests/data/proto/android_system),
 * which holds every kind of service packet, logcat stats too: all of them
 * come back. */
static void test_perfetto_service_packets_of_an_android_trace_survive(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *fixture = PROTO_FIXTURE_DIR "/android_system.pb";
  g_autofree char *pftrace = export_to(dir, fixture, "merged.pftrace", "perfetto");
  g_autofree char *merged_db = save(dir, fixture, "merged.sqlite");
  g_autofree char *export_db = save(dir, "merged.pftrace", "exported.sqlite");
  sqlite3 *merged = open_db(merged_db, NULL);
  sqlite3 *exported = open_db(export_db, NULL);
  g_assert_cmpuint(assert_service_rows_survive(merged, exported), >, 10);
  /* The whole suite too: of the round trips it is the one with logcat
   * events and a package list (two of each in the fixture). */
  g_autofree char *suite = data_file("perfetto_roundtrip.sql");
  g_assert_cmpuint(compare_suite(merged, exported, suite), >=, 30);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM android_logs"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM package_list"), ==, 2);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM stats "
                                 "WHERE name LIKE 'android_log_num%' AND value <> 0"), ==, 3);
  g_assert_cmpint(scalar(merged, "SELECT count(*) FROM metadata WHERE name IN "
                                 "('trace_uuid', 'trace_config_pbtxt', 'tracing_started_ns')"), ==, 3);
  sqlite3_close(merged);
  sqlite3_close(exported);
  e2e_cleanup(dir);
}

/* --- the Perfetto file as protobuf ----------------------------------------------- */

static void test_perfetto_decodes_with_protoc(void) {
  const char *pftrace = system_and_chrome_pftrace();
  g_autofree char *quoted = g_shell_quote(pftrace);
  g_autofree char *proto_dir = g_shell_quote(TM_PROTO_DIR);
  g_autofree char *raw_cmd = g_strdup_printf("%s --decode_raw < %s", TM_PROTOC, quoted);
  g_autofree char *schema_cmd =
      g_strdup_printf("%s -I %s --decode=perfetto.protos.Trace trace.proto < %s", TM_PROTOC,
                      proto_dir, quoted);
  const char *commands[] = {raw_cmd, schema_cmd};
  for (int i = 0; i < 2; i++) {
    const char *argv[] = {"/bin/sh", "-c", commands[i], NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    GError *error = NULL;
    g_spawn_sync(TM_PROTO_DIR, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                 &status, &error);
    g_assert_no_error(error);
    if (!g_spawn_check_wait_status(status, NULL))
      g_error("%s failed: %s", commands[i], err);
    g_assert_cmpstr(err, ==, "");
    g_assert_nonnull(strstr(out, i == 0 ? "98: 1" : "machine_id: 1"));
    if (i == 1) {
      /* A field the schema does not name prints as its bare number. */
      GRegex *unknown = g_regex_new("^\\s*[0-9]+[ :{]", G_REGEX_MULTILINE, 0, NULL);
      g_assert_false(g_regex_match(unknown, out, 0, NULL));
      g_regex_unref(unknown);
      g_assert_nonnull(strstr(out, "sched_switch {"));
      g_assert_nonnull(strstr(out, "perf_sample {"));
      g_assert_nonnull(strstr(out, "remote_clock_sync {"));
      g_assert_nonnull(strstr(out, "machine_name: \"phone\""));
    }
  }
}

/* A protobuf field, as the packet walk reads it. */
typedef struct field {
  uint32_t number, wire_type;
  uint64_t value;
  const uint8_t *data;
  size_t len;
} field;

static bool next_field(const uint8_t **p, const uint8_t *end, field *f) {
  if (*p >= end)
    return false;
  uint64_t key = 0;
  for (int shift = 0; *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    key |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      break;
  }
  f->number = (uint32_t)(key >> 3);
  f->wire_type = (uint32_t)(key & 7);
  f->value = 0;
  f->data = NULL;
  f->len = 0;
  if (f->wire_type == 0 || f->wire_type == 2) {
    for (int shift = 0; *p < end; shift += 7) {
      uint8_t b = *(*p)++;
      f->value |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80))
        break;
    }
    if (f->wire_type == 2) {
      g_assert_cmpuint(f->value, <=, (uint64_t)(end - *p));
      f->data = *p;
      f->len = (size_t)f->value;
      *p += f->len;
    }
  } else if (f->wire_type == 1) {
    g_assert_cmpuint((size_t)(end - *p), >=, 8);
    memcpy(&f->value, *p, 8);
    *p += 8;
  } else {
    g_assert_cmpuint(f->wire_type, ==, 5);
    *p += 4;
  }
  return true;
}

/* Adds the iids InternedData defines (kind << 56 | iid). */
static void add_interned(GHashTable *defined, const field *interned) {
  const uint8_t *p = interned->data, *end = p + interned->len;
  field f;
  while (next_field(&p, end, &f)) {
    if (f.wire_type != 2)
      continue;
    const uint8_t *q = f.data, *qend = q + f.len;
    field g;
    while (next_field(&q, qend, &g))
      if (g.number == 1)
        g_hash_table_add(defined, g_memdup2(&(uint64_t){(uint64_t)f.number << 56 | g.value},
                                            sizeof(uint64_t)));
  }
}

static bool is_defined(GHashTable *defined, uint32_t kind, uint64_t iid) {
  uint64_t key = (uint64_t)kind << 56 | iid;
  return g_hash_table_contains(defined, &key);
}

typedef struct sequence_state {
  uint32_t machine;
  GHashTable *defined; /* interned (kind << 56 | iid) */
} sequence_state;

static void sequence_state_free(gpointer p) {
  sequence_state *s = p;
  g_hash_table_unref(s->defined);
  g_free(s);
}

static void test_perfetto_sequences_set_their_state_before_use(void) {
  const char *pftrace = system_and_chrome_pftrace();
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(pftrace, &bytes, &len, NULL));
  GHashTable *sequences =
      g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, sequence_state_free);
  /* Track uuids described, per machine: machine << 56 is not needed, the
   * exporter's uuids are unique across machines, but checked per machine. */
  GHashTable *tracks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  GHashTable *machines = g_hash_table_new(g_direct_hash, g_direct_equal);
  guint events = 0, uses = 0;
  const uint8_t *p = (const uint8_t *)bytes, *end = p + len;
  field packet;
  while (next_field(&p, end, &packet)) {
    g_assert_cmpuint(packet.number, ==, 1);
    uint32_t seq_id = 0, flags = 0, machine = 0;
    bool first = false, defaults = false;
    field interned = {0}, event = {0}, descriptor = {0};
    const uint8_t *q = packet.data, *qend = q + packet.len;
    field f;
    while (next_field(&q, qend, &f)) {
      switch (f.number) {
      case 10: seq_id = (uint32_t)f.value; break;
      case 13: flags = (uint32_t)f.value; break;
      case 87: first = f.value != 0; break;
      case 98: machine = (uint32_t)f.value; break;
      case 59: defaults = true; break;
      case 12: interned = f; break;
      case 11: event = f; break;
      case 60: descriptor = f; break;
      default: break;
      }
    }
    g_assert_cmpuint(seq_id, >, 0);
    g_hash_table_add(machines, GUINT_TO_POINTER(machine + 1));
    sequence_state *seq = g_hash_table_lookup(sequences, GUINT_TO_POINTER(seq_id));
    if (!seq) {
      /* The first packet of a sequence clears its state and sets it. */
      g_assert_true(first);
      g_assert_true(flags & 1);
      g_assert_true(defaults);
      seq = g_new0(sequence_state, 1);
      seq->machine = machine;
      seq->defined = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
      g_hash_table_insert(sequences, GUINT_TO_POINTER(seq_id), seq);
    } else {
      g_assert_false(first);
      g_assert_false(flags & 1);
      g_assert_cmpuint(seq->machine, ==, machine); /* one machine per sequence */
    }
    if (interned.data)
      add_interned(seq->defined, &interned);
    if (descriptor.data) {
      const uint8_t *d = descriptor.data, *dend = d + descriptor.len;
      while (next_field(&d, dend, &f))
        if (f.number == 1) {
          uint64_t key = f.value ^ ((uint64_t)machine << 60);
          g_hash_table_add(tracks, g_memdup2(&key, sizeof key));
        }
    }
    if (!event.data)
      continue;
    events++;
    g_assert_true(flags & 2); /* events name state: SEQ_NEEDS_INCREMENTAL_STATE */
    const uint8_t *e = event.data, *eend = e + event.len;
    while (next_field(&e, eend, &f)) {
      if (f.number == 3) /* category_iids: InternedData.event_categories (1) */
        g_assert_true(is_defined(seq->defined, 1, f.value));
      else if (f.number == 10) /* name_iid: event_names (2) */
        g_assert_true(is_defined(seq->defined, 2, f.value));
      else if (f.number == 11) { /* track_uuid: described on this machine */
        uint64_t key = f.value ^ ((uint64_t)machine << 60);
        g_assert_true(g_hash_table_contains(tracks, &key));
      } else if (f.number == 4) { /* debug annotation name_iid (3) */
        const uint8_t *a = f.data, *aend = a + f.len;
        field g;
        while (next_field(&a, aend, &g))
          if (g.number == 1) {
            g_assert_true(is_defined(seq->defined, 3, g.value));
            uses++;
          }
      } else {
        continue;
      }
      uses++;
    }
  }
  g_assert_true(p == end);
  g_assert_cmpuint(events, >, 10000);
  g_assert_cmpuint(uses, >, events);
  g_assert_cmpuint(g_hash_table_size(machines), ==, 2);
  /* A sequence per source: per machine for its system data, per machine
   * and trace file for its events. */
  g_assert_cmpuint(g_hash_table_size(sequences), >=, 4);
  g_hash_table_unref(sequences);
  g_hash_table_unref(tracks);
  g_hash_table_unref(machines);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/export/perfetto/system-trace-and-chrome-json-answer-the-same",
                  test_perfetto_system_and_chrome_answer_the_same);
  g_test_add_func("/export/perfetto/demo-example-answers-the-same",
                  test_perfetto_demo_example_answers_the_same);
  g_test_add_func("/export/perfetto/stats-and-metadata-survive-per-machine",
                  test_perfetto_stats_and_metadata_survive_per_machine);
  g_test_add_func("/export/perfetto/service-packets-of-an-android-trace-survive",
                  test_perfetto_service_packets_of_an_android_trace_survive);
  g_test_add_func("/export/perfetto/decodes-with-protoc", test_perfetto_decodes_with_protoc);
  g_test_add_func("/export/perfetto/sequences-set-their-state-before-use",
                  test_perfetto_sequences_set_their_state_before_use);
  int status = g_test_run();
  if (shared_dir)
    e2e_cleanup(shared_dir);
  g_free(shared_dir);
  return status;
}
