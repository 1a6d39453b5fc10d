/*
 * The ClickHouse sink against a real server (tests/support/
 * clickhouse_fixture.h starts one on free 127.0.0.1 ports with a temporary
 * data directory and stops it at the end): what a load holds and how it
 * is read back. Without a clickhouse-server binary the program exits 77
 * (SKIP) and says so; nothing else skips.
 *
 * The fleet: 200 generated runs (tests/support/clickhouse_runs.h: their
 * counts and durations are functions of run, machine and frame, so every
 * expected answer is computed, not written down), loaded in batches
 * through the library. Beside it: test_clickhouse_reload.c (loading a run
 * again, and loads stopped half-way).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <tracemerge/tracemerge.h>

#include "clickhouse_fixture.h"
#include "clickhouse_runs.h"
#include "e2e_support.h"
#include "sink/clickhouse_sink.h"
#include "sink/clickhouse_tables.h"

/* ---- the fleet ----------------------------------------------------------- */

static tm_clickhouse *fleet;

/* Loads the 200 runs once, LOAD_BATCH runs per tm_clickhouse_load. */
static tm_clickhouse *fleet_database(void) {
  if (fleet)
    return fleet;
  fleet = open_database("fleet");
  create_schema(fleet);
  gint64 loading = 0, start = g_get_monotonic_time();
  for (int first = 0; first < N_RUNS; first += LOAD_BATCH) {
    tm_clickhouse_run runs[LOAD_BATCH];
    char *ids[LOAD_BATCH];
    for (int i = 0; i < LOAD_BATCH; i++) {
      char *path = write_run(first + i);
      ids[i] = g_strdup_printf("r%03d", first + i);
      runs[i] = (tm_clickhouse_run){ids[i], import_path(path)};
      g_unlink(path);
      g_free(path);
    }
    GError *error = NULL;
    gint64 load_start = g_get_monotonic_time();
    g_assert_true(tm_clickhouse_load(fleet, runs, LOAD_BATCH,
                                     TM_CLICKHOUSE_REFUSE_EXISTING, &error));
    g_assert_no_error(error);
    loading += g_get_monotonic_time() - load_start;
    for (int i = 0; i < LOAD_BATCH; i++) {
      tm_session_free((tm_session *)runs[i].session);
      g_free(ids[i]);
    }
  }
  g_test_message("200 runs imported and loaded in %.1f s, of which loading "
                 "%.1f s", (double)(g_get_monotonic_time() - start) / 1e6,
                 (double)loading / 1e6);
  return fleet;
}

/* Per machine, Σ over runs of slices_of(r, m). */
static void test_fleet_slice_counts_per_machine(void) {
  tm_clickhouse *ch = fleet_database();
  GString *expected = g_string_new("\"machine\",\"slices\"\n");
  for (int m = 0; m < N_MACHINES; m++) {
    int64_t sum = 0;
    for (int r = 0; r < N_RUNS; r++)
      sum += slices_of(r, m);
    g_string_append_printf(expected, "\"%s\",%" G_GINT64_FORMAT "\n",
                           machine_names[m], sum);
  }
  g_autofree char *actual = ch_query(
      ch, "SELECT machine, count() AS slices FROM slice GROUP BY machine "
          "ORDER BY machine",
      TM_FORMAT_CSV);
  e2e_assert_text(actual, expected->str);
  g_string_free(expected, TRUE);
}

static int compare_int64(gconstpointer a, gconstpointer b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* quantileExact(0.95) is the element at index floor(0.95 × n) of the
 * sorted values: over every Frame of every run and machine, and 50 µs for
 * every Draw. */
static void test_fleet_p95_by_name(void) {
  tm_clickhouse *ch = fleet_database();
  GArray *durs = g_array_new(FALSE, FALSE, sizeof(int64_t));
  for (int r = 0; r < N_RUNS; r++)
    for (int m = 0; m < N_MACHINES; m++)
      for (int k = 0; k < n_frames(r, m); k++) {
        int64_t dur_ns = (int64_t)frame_dur_us(r, m, k) * 1000;
        g_array_append_val(durs, dur_ns);
      }
  g_array_sort(durs, compare_int64);
  size_t index = (size_t)(0.95 * (double)durs->len);
  g_autofree char *expected = g_strdup_printf(
      "\"name\",\"p95\"\n\"Draw\",%d\n\"Frame\",%" G_GINT64_FORMAT "\n",
      DRAW_US * 1000, g_array_index(durs, int64_t, index));
  g_autofree char *actual = ch_query(
      ch, "SELECT name, quantileExact(0.95)(dur) AS p95 FROM slice "
          "GROUP BY name ORDER BY name",
      TM_FORMAT_CSV);
  e2e_assert_text(actual, expected);
  g_array_free(durs, TRUE);
}

/* Frames that begin while their thread runs: a join of slice (through its
 * thread track) and sched within each run, counted per machine. */
static void test_fleet_join_of_sched_and_slices(void) {
  tm_clickhouse *ch = fleet_database();
  GString *expected = g_string_new("\"machine\",\"frames\"\n");
  for (int m = 0; m < N_MACHINES; m++) {
    int count = 0;
    for (int r = 0; r < N_RUNS; r++)
      for (int k = 0; k < n_frames(r, m); k++)
        count += frame_while_running(r, m, k);
    g_string_append_printf(expected, "\"%s\",%d\n", machine_names[m], count);
  }
  /* ClickHouse 18 joins two tables per SELECT: slice with its thread
   * track, then that with sched, on run_id first. */
  g_autofree char *actual = ch_query(
      ch,
      "SELECT machine, count() AS frames FROM ("
      " SELECT run_id, machine, ts, utid FROM"
      "  (SELECT run_id, machine, track_id, ts FROM slice WHERE name = 'Frame')"
      "  ALL INNER JOIN"
      "  (SELECT run_id, id AS track_id, assumeNotNull(utid) AS utid FROM track"
      "   WHERE utid IS NOT NULL) USING (run_id, track_id))"
      " ALL INNER JOIN"
      " (SELECT run_id, utid, ts AS run_ts, dur AS run_dur FROM sched)"
      " USING (run_id, utid)"
      " WHERE ts >= run_ts AND ts < run_ts + run_dur"
      " GROUP BY machine ORDER BY machine",
      TM_FORMAT_CSV);
  e2e_assert_text(actual, expected->str);
  g_string_free(expected, TRUE);
}

/* Every table that every run fills holds all 200 runs, and the machine
 * table three machines per run. */
static void test_fleet_every_run_in_every_table(void) {
  tm_clickhouse *ch = fleet_database();
  static const char *const filled[] = {"slice", "sched", "thread_state",
                                       "thread", "process", "track", "cpu",
                                       "trace_file", "metadata", "machine"};
  for (size_t t = 0; t < G_N_ELEMENTS(filled); t++) {
    g_autofree char *sql =
        g_strdup_printf("SELECT uniqExact(run_id) FROM %s", filled[t]);
    g_assert_cmpint(ch_count(ch, sql), ==, N_RUNS);
  }
  g_assert_cmpint(ch_count(ch, "SELECT count() FROM machine"), ==,
                  N_RUNS * N_MACHINES);
  /* One partition per load and table, not one per run. */
  g_assert_cmpint(ch_count(ch, "SELECT uniqExact(load_id) FROM slice"), ==,
                  N_RUNS / LOAD_BATCH);
  /* No staging table outlives its load. */
  g_assert_cmpint(ch_count(ch, "SELECT count() FROM system.tables WHERE "
                               "database = 'fleet' AND name LIKE '\\\\_tm%'"),
                  ==, 0);
}

/* ---- every column as local queries see it -------------------------------- */

/* A trace that fills every table: JSON (args of every type, thread time,
 * nesting, a flow, counters, names with tabs, quotes and newlines) on
 * machine `phone`, ftrace with scheduling on machine `server`. */
static char *write_values_run(void) {
  static const char json[] =
      "{\"traceEvents\":[\n"
      "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"process_name\","
      "\"args\":{\"name\":\"bro\\twser \\\"q\\\" 'x' \\\\ \\u00fcn\\u00ef\"}},\n"
      "{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_name\","
      "\"args\":{\"name\":\"main\\nthread\"}},\n"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":1000,\"dur\":500,\"tts\":10,"
      "\"tdur\":7,\"name\":\"outer\",\"cat\":\"c1\",\"args\":{\"i\":-5,"
      "\"u\":18446744073709551615,\"r\":0.1,\"s\":\"tab\\there\",\"b\":true,"
      "\"big\":1e300,\"nested\":{\"a\":[1,2]}}},\n"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":1100,\"dur\":100,"
      "\"name\":\"inner\",\"cat\":\"c1,c2\"},\n"
      "{\"ph\":\"s\",\"pid\":1,\"tid\":2,\"ts\":1150,\"id\":7,\"name\":\"f\","
      "\"cat\":\"c1\"},\n"
      "{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":1250,\"dur\":100,"
      "\"name\":\"later\"},\n"
      "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":3,\"ts\":1300,\"id\":7,"
      "\"name\":\"f\",\"cat\":\"c1\"},\n"
      "{\"ph\":\"C\",\"pid\":1,\"ts\":1200,\"name\":\"mem\","
      "\"args\":{\"rss\":12.5,\"heap\":3}},\n"
      "{\"ph\":\"C\",\"pid\":1,\"ts\":1300,\"name\":\"mem\","
      "\"args\":{\"rss\":-0.0,\"heap\":4}},\n"
      "{\"ph\":\"i\",\"pid\":1,\"tid\":3,\"ts\":1400,\"name\":\"instant\","
      "\"s\":\"t\"}\n"
      "]}\n";
  g_autofree char *ftrace = machine_trace(3, 1);
  const e2e_member members[] = {
      {"manifest.json",
       "{\"perfetto_manifest\": {\"version\": 1, \"files\": [\n"
       " {\"path\": \"app.json\", \"machine\": {\"name\": \"phone\"}},\n"
       " {\"path\": \"kernel.txt\", \"machine\": {\"name\": \"server\"}}]}}\n",
       0},
      {"app.json", json, 0},
      {"kernel.txt", ftrace, 0},
  };
  return e2e_write_archive(work_dir, "values.zip", E2E_ZIP, members, 3);
}

typedef struct table_columns {
  const char *table;
  const char *local; /* the local table or view with the same columns */
  const char *columns;
} table_columns;

static const table_columns compared[] = {
    {"slice", "slice",
     "id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, "
     "thread_ts, thread_dur, cat, slice_id"},
    {"counter", "counter", "id, ts, track_id, value, arg_set_id"},
    {"sched", "sched",
     "id, ts, dur, cpu, utid, end_state, priority, ucpu, ts_end"},
    {"thread_state", "thread_state",
     "id, ts, dur, cpu, utid, state, waker_utid, waker_id, ucpu"},
    {"flow", "flow", "id, slice_out, slice_in, trace_id, arg_set_id"},
    {"args", "args",
     "id, arg_set_id, flat_key, key, int_value, string_value, real_value, "
     "value_type"},
    {"thread", "thread",
     "utid, id, tid, name, start_ts, end_ts, upid, is_main_thread, is_idle, "
     "machine_id, arg_set_id"},
    {"process", "process",
     "upid, id, pid, name, start_ts, end_ts, parent_upid, uid, android_appid, "
     "android_user_id, cmdline, arg_set_id, machine_id"},
    {"track", "__intrinsic_track",
     "id, name, type, dimension_arg_set_id, parent_id, source_arg_set_id, "
     "machine_id, track_group_id, event_type, counter_unit, utid, upid, "
     "trace_id, ucpu"},
    {"cpu", "cpu", "id, ucpu, cpu, machine_id"},
    {"trace_file", "trace_file",
     "id, parent_id, name, size, trace_type, processing_order, is_container"},
    {"stats", "stats",
     "id, name, idx, severity, source, value, description, machine_id, "
     "trace_id"},
    {"metadata", "metadata",
     "id, name, key_type, int_value, str_value, machine_id, trace_id"},
    {"machine", "machine",
     "id, raw_id, name, sysname, release, version, arch, num_cpus, "
     "android_build_fingerprint, android_device_manufacturer, "
     "android_sdk_version, system_ram_bytes, system_ram_gb, label_index"},
};

/* Each table's columns read back from ClickHouse print exactly as the
 * local query over the same session prints them, in every format: the
 * run as a load sends it (one Native block per table), and again in
 * blocks of two rows (blocks that end inside tables, a block's columns
 * read again from its first row, blocks the server squashes). */
static void test_values_match_local_queries(void) {
  tm_clickhouse *ch = open_database("values_db");
  create_schema(ch);
  g_autofree char *path = write_values_run();
  tm_session *session = import_path(path);
  static const struct {
    const char *run_id;
    size_t block_rows; /* 0: the sink's choice */
  } loads[] = {{"values", 0}, {"values_in_blocks_of_2", 2}};
  static const tm_format formats[] = {TM_FORMAT_CSV, TM_FORMAT_TSV,
                                      TM_FORMAT_JSON, TM_FORMAT_TABLE};
  for (size_t l = 0; l < G_N_ELEMENTS(loads); l++) {
    const char *run_id = loads[l].run_id;
    clickhouse_set_block_rows(ch, loads[l].block_rows);
    load(ch, run_id, session, TM_CLICKHOUSE_REFUSE_EXISTING);
    for (size_t t = 0; t < G_N_ELEMENTS(compared); t++) {
      g_autofree char *local_sql =
          g_strdup_printf("SELECT %s FROM %s ORDER BY id",
                          compared[t].columns, compared[t].local);
      g_autofree char *ch_sql = g_strdup_printf(
          "SELECT %s FROM %s WHERE run_id = '%s' ORDER BY id",
          compared[t].columns, compared[t].table, run_id);
      for (size_t f = 0; f < G_N_ELEMENTS(formats); f++) {
        g_autofree char *expected =
            local_query(session, local_sql, formats[f]);
        g_autofree char *actual = ch_query(ch, ch_sql, formats[f]);
        if (g_strcmp0(actual, expected) != 0)
          g_error("run %s, table %s, format %d:\n--- local\n%s\n"
                  "--- ClickHouse\n%s",
                  run_id, compared[t].table, (int)formats[f], expected,
                  actual);
      }
      /* Not an empty comparison: every table holds rows here. */
      g_autofree char *count_sql =
          g_strdup_printf("SELECT count() FROM %s WHERE run_id = '%s'",
                          compared[t].table, run_id);
      g_assert_cmpint(ch_count(ch, count_sql), >, 0);
    }
    /* The machine columns: the name of the row's machine, and its id. */
    g_autofree char *expected = local_query(
        session,
        "SELECT coalesce(m.name, '') AS machine, t.machine_id AS machine_id, "
        "count(*) AS n FROM slice s JOIN track t ON s.track_id = t.id "
        "LEFT JOIN machine m ON m.id = t.machine_id GROUP BY 1, 2 "
        "ORDER BY 1, 2",
        TM_FORMAT_CSV);
    g_autofree char *machine_sql = g_strdup_printf(
        "SELECT machine, machine_id, count() AS n FROM slice WHERE "
        "run_id = '%s' GROUP BY machine, machine_id ORDER BY machine, "
        "machine_id",
        run_id);
    g_autofree char *actual = ch_query(ch, machine_sql, TM_FORMAT_CSV);
    e2e_assert_text(actual, expected);
    g_assert_cmpuint(tm_clickhouse_rows_loaded(ch), ==,
                     (guint64)rows_of_run(ch, run_id));
  }
  /* Blocks of two rows: more than one block in the tables compared. */
  g_assert_cmpint(ch_count(ch, "SELECT count() FROM slice WHERE run_id = "
                               "'values_in_blocks_of_2'"), >, 2);
  tm_session_free(session);
  tm_clickhouse_free(ch);
}

/* ---- the schema as docs/clickhouse.md gives it --------------------------- */

/* The backquoted names in `text`, in order; with `before_equals`, only
 * those followed by " =" (the ALIAS list: "`cpu` = ucpu"). */
static GPtrArray *quoted_names(const char *text, bool before_equals) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *p = text;
  while ((p = strchr(p, '`')) != NULL) {
    const char *end = strchr(p + 1, '`');
    if (!end)
      break;
    if (!before_equals || g_str_has_prefix(end + 1, " ="))
      g_ptr_array_add(names, g_strndup(p + 1, (gsize)(end - p - 1)));
    p = end + 1;
  }
  return names;
}

static char *joined(const GPtrArray *names) {
  GString *text = g_string_new(NULL);
  for (guint i = 0; i < names->len; i++)
    g_string_append_printf(text, "%s%s", i ? ", " : "",
                           (const char *)g_ptr_array_index(names, i));
  return g_string_free(text, FALSE);
}

static int compare_names(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The server's columns of `table`: the stored ones in the order it keeps
 * them (with their types when `types`), or the ALIAS ones sorted. */
static char *server_columns(tm_clickhouse *ch, const char *database,
                            const char *table, bool aliases, bool types) {
  g_autofree char *sql = g_strdup_printf(
      "SELECT %s FROM system.columns WHERE database = '%s' AND "
      "table = '%s' AND (default_kind = 'ALIAS') = %d",
      types ? "concat(name, ' ', type)" : "name", database, table,
      aliases ? 1 : 0);
  g_autofree char *tsv = ch_query(ch, sql, TM_FORMAT_TSV);
  char **lines = g_strsplit(strchr(tsv, '\n') + 1, "\n", -1);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (char **l = lines; *l; l++)
    if (**l)
      g_ptr_array_add(names, g_strdup(*l));
  if (aliases)
    g_ptr_array_sort(names, compare_names);
  char *text = joined(names);
  g_ptr_array_unref(names);
  g_strfreev(lines);
  return text;
}

/* docs/clickhouse.md's tables ("| column | type | meaning |" for the
 * columns every table starts with, "| table | columns after the four |"
 * for the rest, ALIAS columns and ORDER BY) are what --create-schema
 * makes: column names, order and leading types, ALIAS names, sort key and
 * partition key, read back from system.columns and system.tables. */
static void test_docs_give_the_schema(void) {
  g_autofree char *docs_path = g_build_filename(
      g_getenv("G_TEST_SRCDIR"), "..", "docs", "clickhouse.md", NULL);
  g_autofree char *docs = NULL;
  g_assert_true(g_file_get_contents(docs_path, &docs, NULL, NULL));
  tm_clickhouse *ch = open_database("docs_schema");
  create_schema(ch);
  char **lines = g_strsplit(docs, "\n", -1);
  GPtrArray *leading = g_ptr_array_new_with_free_func(g_free);
  size_t tables_seen = 0;
  enum { NONE, LEADING, TABLES } section = NONE;
  for (char **l = lines; *l; l++) {
    if (g_str_has_prefix(*l, "| column | type | meaning |")) {
      section = LEADING;
      continue;
    }
    if (g_str_has_prefix(*l, "| table | columns after the four |")) {
      section = TABLES;
      continue;
    }
    if (!g_str_has_prefix(*l, "| `")) {
      if (!g_str_has_prefix(*l, "|---"))
        section = NONE;
      continue;
    }
    if (section == NONE)
      continue;
    char **cells = g_strsplit(*l, " | ", -1);
    g_assert_cmpuint(g_strv_length(cells), >=, 3);
    if (section == LEADING) {
      /* "| `run_id` | `String` | ..." */
      g_autoptr(GPtrArray) name = quoted_names(cells[0], false);
      g_autoptr(GPtrArray) type = quoted_names(cells[1], false);
      g_ptr_array_add(leading, g_strdup_printf(
          "%s %s", (char *)g_ptr_array_index(name, 0),
          (char *)g_ptr_array_index(type, 0)));
    } else if (section == TABLES) {
      g_autoptr(GPtrArray) name_of = quoted_names(cells[0], false);
      const char *table = g_ptr_array_index(name_of, 0);
      if (strcmp(table, "schema_version") == 0) {
        g_strfreev(cells);
        continue;
      }
      tables_seen++;
      /* Stored columns up to "; ALIAS" or a remark in parentheses. */
      char *alias_part = strstr(cells[1], "; ALIAS");
      char *stored_part = g_strndup(
          cells[1], alias_part ? (gsize)(alias_part - cells[1])
                               : strlen(cells[1]));
      char *remark = strstr(stored_part, " (");
      if (remark)
        *remark = '\0';
      GPtrArray *stored = quoted_names(stored_part, false);
      g_autofree char *leading_names = joined(leading);
      GString *expected = g_string_new(NULL);
      for (guint i = 0; i < leading->len; i++) {
        const char *column = g_ptr_array_index(leading, i);
        g_string_append_len(expected, column,
                            (gssize)(strchr(column, ' ') - column));
        g_string_append(expected, ", ");
      }
      g_autofree char *rest = joined(stored);
      g_string_append(expected, rest);
      g_autofree char *actual = server_columns(ch, "docs_schema", table,
                                               false, false);
      if (strcmp(actual, expected->str) != 0)
        g_error("table %s: docs say\n  %s\nthe server has\n  %s", table,
                expected->str, actual);
      /* The leading columns' types, as the docs give them. */
      g_autofree char *typed = server_columns(ch, "docs_schema", table,
                                              false, true);
      g_autofree char *leading_typed = joined(leading);
      g_assert_true(g_str_has_prefix(typed, leading_typed));
      GPtrArray *aliases = alias_part ? quoted_names(alias_part, true)
                                      : g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_sort(aliases, compare_names);
      g_autofree char *expected_aliases = joined(aliases);
      g_autofree char *actual_aliases = server_columns(ch, "docs_schema",
                                                       table, true, false);
      e2e_assert_text(actual_aliases, expected_aliases);
      /* "| `(run_id, machine, ts)` |": the sort key. */
      g_autoptr(GPtrArray) order = quoted_names(cells[2], false);
      g_autofree char *engine_sql = g_strdup_printf(
          "SELECT engine_full FROM system.tables WHERE "
          "database = 'docs_schema' AND name = '%s'", table);
      g_autofree char *engine = ch_query(ch, engine_sql, TM_FORMAT_TSV);
      g_autofree char *key = g_strdup_printf(
          "MergeTree() PARTITION BY load_id ORDER BY %s ",
          (char *)g_ptr_array_index(order, 0));
      if (!strstr(engine, key))
        g_error("table %s: docs say \"%s\", the server has %s", table, key,
                engine);
      g_ptr_array_unref(aliases);
      g_ptr_array_unref(stored);
      g_string_free(expected, TRUE);
      g_free(stored_part);
    }
    g_strfreev(cells);
  }
  /* Every table the sink makes is in the docs, and the four columns. */
  g_assert_cmpuint(tables_seen, ==, ch_table_count());
  g_assert_cmpuint(leading->len, ==, 4);
  g_ptr_array_unref(leading);
  g_strfreev(lines);
  tm_clickhouse_free(ch);
}

/* ---- queries and errors through the CLI ---------------------------------- */

/* The same result printed by a local query and by `query --from`. */
static void test_query_prints_as_local_queries_do(void) {
  tm_clickhouse *ch = open_database("printing");
  create_schema(ch);
  g_autofree char *path = write_run(7);
  tm_session *session = import_path(path);
  load(ch, "r7", session, TM_CLICKHOUSE_REFUSE_EXISTING);
  g_autofree char *url = ch_fixture_url(&server, "printing");
  static const char *const formats[] = {"csv", "tsv", "json", "table"};
  for (size_t f = 0; f < 2 * G_N_ELEMENTS(formats); f++) {
    /* The second time round with -W (40-character table columns). */
    bool wide = f >= G_N_ELEMENTS(formats);
    const char *format = formats[f % G_N_ELEMENTS(formats)];
    const char *local_args[] = {
        "query", path, "--format", format, "--sql",
        "SELECT name, count(*) AS n, sum(dur) AS total, avg(dur) AS mean, "
        "NULL AS none, 'a\"b,c' AS text FROM slice GROUP BY name "
        "ORDER BY name",
        wide ? "-W" : NULL, NULL};
    const char *remote_args[] = {
        "query", "--from", url, "--format", format, "--sql",
        "SELECT name, count() AS n, sum(dur) AS total, avg(dur) AS mean, "
        "NULL AS none, 'a\"b,c' AS text FROM slice WHERE run_id = 'r7' "
        "GROUP BY name ORDER BY name",
        wide ? "-W" : NULL, NULL};
    e2e_result local = e2e_run(local_args);
    e2e_result remote = e2e_run(remote_args);
    g_assert_cmpint(local.exit_code, ==, 0);
    g_assert_cmpint(remote.exit_code, ==, 0);
    e2e_assert_text(remote.err, "");
    e2e_assert_text(remote.out, local.out);
    e2e_result_clear(&local);
    e2e_result_clear(&remote);
  }
  tm_session_free(session);
  tm_clickhouse_free(ch);
}

static void assert_cli_fails(const char *const *args, int exit_code,
                             const char *message_part) {
  e2e_result r = e2e_run(args);
  if (r.exit_code != exit_code || !strstr(r.err, message_part))
    g_error("expected exit %d and \"%s\", got exit %d: %s", exit_code,
            message_part, r.exit_code, r.err);
  e2e_result_clear(&r);
}

static void test_query_errors_name_server_and_cause(void) {
  g_autofree char *url = ch_fixture_url(&server, "default");
  g_autofree char *where =
      g_strdup_printf("tracemerge: ClickHouse at 127.0.0.1:%d: query: HTTP ",
                      server.http_port);
  const char *syntax[] = {"query", "--from", url, "--sql", "SELEC 1", NULL};
  assert_cli_fails(syntax, 1, where);
  assert_cli_fails(syntax, 1, "Syntax error");
  const char *format[] = {"query", "--from", url, "--sql",
                          "SELECT 1 FORMAT JSON", NULL};
  assert_cli_fails(format, 1, "not in TabSeparatedWithNamesAndTypes");
  /* Failing after the first rows went out (megabytes: more than the
   * server buffers): ClickHouse appends its report to a 200 answer. With
   * one column the report could pass for a row; the rows before it are
   * printed, as a local query's are. */
  const char *late[] = {"query", "--from", url, "--sql",
                        "SELECT concat(toString(number), toString("
                        "throwIf(number = 900000))) AS x FROM system.numbers "
                        "LIMIT 1000000 SETTINGS max_block_size = 1000",
                        NULL};
  e2e_result r = e2e_run(late);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, "query: failed after its first rows were "
                                 "sent: Code: 395"));
  g_assert_true(g_str_has_suffix(r.out, "\"8999990\"\n"));
  g_assert_null(strstr(r.out, "Code:"));
  e2e_result_clear(&r);
  /* Nobody listens on a port just freed. */
  int port = ch_fixture_unused_port();
  g_autofree char *nobody = g_strdup_printf("clickhouse://127.0.0.1:%d/x",
                                            port);
  g_autofree char *nobody_where =
      g_strdup_printf("tracemerge: ClickHouse at 127.0.0.1:%d: query: ", port);
  const char *refused[] = {"query", "--from", nobody, "--sql", "SELECT 1",
                           NULL};
  assert_cli_fails(refused, 1, nobody_where);
  const char *bad_url[] = {"query", "--from", "clickhouse://host/a-b",
                           "--sql", "SELECT 1", NULL};
  assert_cli_fails(bad_url, 2, "the database must be a plain identifier");
  const char *with_inputs[] = {"query", "x.json", "--from", url, "--sql",
                               "SELECT 1", NULL};
  assert_cli_fails(with_inputs, 2, "--from takes no input files");
}

static void test_import_errors(void) {
  g_autofree char *path = write_run(2);
  g_autofree char *url = ch_fixture_url(&server, "no_schema");
  e2e_result r = cli_import(path, url, "r2", NULL);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_autofree char *missing = g_strdup_printf(
      "tracemerge: ClickHouse at 127.0.0.1:%d: database no_schema lacks "
      "tracemerge tables (slice, counter, sched, thread_state, flow, args, "
      "thread, process, track, cpu, trace_file, stats, metadata, machine, "
      "schema_version): create them first (import --create-schema)\n",
      server.http_port);
  e2e_assert_text(r.err, missing);
  e2e_result_clear(&r);

  /* Another schema version: refused by the load and by --create-schema. */
  tm_clickhouse *ch = open_database("other_version");
  create_schema(ch);
  create_schema(ch); /* twice is fine */
  g_autofree char *insert = g_strdup_printf(
      "INSERT INTO schema_version (version) VALUES (%d)",
      CLICKHOUSE_SCHEMA_VERSION + 1);
  g_autofree char *inserted = ch_query(ch, insert, TM_FORMAT_CSV);
  g_autofree char *other = g_strdup_printf(
      "database other_version holds tracemerge schema version %d; this "
      "tracemerge reads and writes version %d",
      CLICKHOUSE_SCHEMA_VERSION + 1, CLICKHOUSE_SCHEMA_VERSION);
  g_autofree char *vurl = ch_fixture_url(&server, "other_version");
  for (int with_create = 0; with_create < 2; with_create++) {
    r = cli_import(path, vurl, "r2", with_create ? "--create-schema" : NULL);
    g_assert_cmpint(r.exit_code, ==, 1);
    g_assert_nonnull(strstr(r.err, other));
    e2e_result_clear(&r);
  }
  tm_clickhouse_free(ch);

  const char *no_run[] = {"import", path, "--to", url, NULL};
  assert_cli_fails(no_run, 2, "--to needs --run RUN_ID");
  const char *both[] = {"import", path, "--to", url, "--run", "a", "-o",
                        "x.sqlite", NULL};
  assert_cli_fails(both, 2, "give one of -o and --to");
  const char *run_alone[] = {"import", path, "-o", "x.sqlite", "--run", "a",
                             NULL};
  assert_cli_fails(run_alone, 2, "go with --to");
  const char *modes[] = {"import", path, "--to", url, "--run", "a",
                         "--replace", "--refuse-existing", NULL};
  assert_cli_fails(modes, 2, "give one of --replace and --refuse-existing");
  const char *empty_id[] = {"import", path, "--to", url, "--run", "", NULL};
  assert_cli_fails(empty_id, 1, "run id \"\" must be 1 to 256 bytes");
  const char *control[] = {"import", path, "--to", url, "--run", "a\tb",
                           NULL};
  assert_cli_fails(control, 1, "must not hold control characters");
}

/* `sql` with `from` replaced by `to`, which must occur exactly once (so a
 * change to the DDL the sink generates fails here instead of silently
 * building something else). */
static char *replace_once(const char *sql, const char *from, const char *to) {
  const char *at = strstr(sql, from);
  g_assert_nonnull(at);
  g_assert_null(strstr(at + 1, from));
  return g_strdup_printf("%.*s%s%s", (int)(at - sql), sql, to,
                         at + strlen(from));
}

/* Everything of `database` a refused call could have changed: each
 * table's full CREATE statement (columns, engine, partition key), its
 * active parts with their rows (any insert makes a new part), and the
 * schema_version rows. */
static char *database_state(tm_clickhouse *ch, const char *database) {
  g_autofree char *tables = g_strdup_printf(
      "SELECT name, create_table_query FROM system.tables "
      "WHERE database = '%s' ORDER BY name", database);
  g_autofree char *parts = g_strdup_printf(
      "SELECT table, partition, name, rows FROM system.parts "
      "WHERE database = '%s' AND active ORDER BY table, name", database);
  g_autofree char *versions = g_strdup_printf(
      "SELECT version, created FROM `%s`.schema_version ORDER BY version",
      database);
  g_autofree char *a = ch_query(ch, tables, TM_FORMAT_TSV);
  g_autofree char *b = ch_query(ch, parts, TM_FORMAT_TSV);
  g_autofree char *c = ch_query(ch, versions, TM_FORMAT_TSV);
  return g_strconcat(a, b, c, NULL);
}

/* A database that schema version 1 made, as docs/clickhouse.md describes
 * it (today's tables without the load_id column, partitioned by run_id),
 * holding one run: a load and --create-schema both refuse it with the
 * version message and leave it exactly as it was. The version 1 DDL is
 * derived from today's by undoing those two differences. */
static void test_older_schema_version_is_refused_untouched(void) {
  tm_clickhouse *admin = open_database("default");
  g_free(ch_query(admin, "CREATE DATABASE version_1", TM_FORMAT_CSV));
  for (size_t i = 0; i < ch_table_count(); i++) {
    const ch_table *table = ch_table_at(i);
    g_autofree char *name = g_strdup_printf("`version_1`.`%s`",
                                            ch_table_name(table));
    g_autofree char *today = ch_table_create_sql(table, name);
    g_autofree char *no_load_id = replace_once(today, "`load_id` String, ", "");
    g_autofree char *v1 = replace_once(no_load_id, "PARTITION BY load_id",
                                       "PARTITION BY run_id");
    g_free(ch_query(admin, v1, TM_FORMAT_CSV));
  }
  g_free(ch_query(admin,
                  "CREATE TABLE version_1.schema_version (`version` UInt32, "
                  "`created` DateTime DEFAULT now()) ENGINE = MergeTree() "
                  "ORDER BY version", TM_FORMAT_CSV));
  g_free(ch_query(admin, "INSERT INTO version_1.schema_version (version) "
                         "VALUES (1)", TM_FORMAT_CSV));
  g_free(ch_query(admin, "INSERT INTO version_1.machine (run_id, machine, "
                         "id, name) VALUES ('old', 'phone', 0, 'phone')",
                  TM_FORMAT_CSV));
  g_free(ch_query(admin, "INSERT INTO version_1.slice (run_id, machine, id, "
                         "ts, dur, track_id, depth) VALUES "
                         "('old', 'phone', 0, 10, 5, 0, 0)", TM_FORMAT_CSV));
  g_autofree char *before = database_state(admin, "version_1");
  g_assert_nonnull(strstr(before, "PARTITION BY run_id"));

  g_autofree char *path = write_run(3);
  g_autofree char *url = ch_fixture_url(&server, "version_1");
  g_autofree char *refused = g_strdup_printf(
      "tracemerge: ClickHouse at 127.0.0.1:%d: database version_1 holds "
      "tracemerge schema version 1; this tracemerge reads and writes "
      "version %d\n", server.http_port, CLICKHOUSE_SCHEMA_VERSION);
  const char *extras[] = {NULL, "--create-schema", "--replace"};
  for (size_t i = 0; i < G_N_ELEMENTS(extras); i++) {
    e2e_result r = cli_import(path, url, "r3", extras[i]);
    g_assert_cmpint(r.exit_code, ==, 1);
    e2e_assert_text(r.err, refused);
    e2e_result_clear(&r);
    g_autofree char *after = database_state(admin, "version_1");
    e2e_assert_text(after, before);
  }

  /* The library's calls on their own: import --create-schema goes on to
   * the load's check, which would refuse even if creating did not, so
   * creating is asked here alone. */
  tm_clickhouse *ch = open_database("version_1");
  const char *id = "r3";
  GError *error = NULL;
  g_assert_false(tm_clickhouse_create_schema(ch, &error));
  g_assert_error(error, TM_CLICKHOUSE_ERROR, TM_CLICKHOUSE_ERROR_SCHEMA);
  g_autofree char *message = g_strdup_printf("%s\n", error->message);
  e2e_assert_text(message, refused + strlen("tracemerge: "));
  g_clear_error(&error);
  g_assert_false(tm_clickhouse_check(ch, &id, 1,
                                     TM_CLICKHOUSE_REFUSE_EXISTING, &error));
  g_assert_error(error, TM_CLICKHOUSE_ERROR, TM_CLICKHOUSE_ERROR_SCHEMA);
  g_clear_error(&error);
  g_autofree char *after = database_state(admin, "version_1");
  e2e_assert_text(after, before);
  tm_clickhouse_free(ch);
  tm_clickhouse_free(admin);
}

/* Run ids reach SQL only as literals: quotes and backslashes included. */
static void test_run_ids_with_quotes(void) {
  tm_clickhouse *ch = open_database("quoting");
  create_schema(ch);
  g_autofree char *path = write_run(4);
  tm_session *session = import_path(path);
  const char *id = "it's a \\ run";
  load(ch, id, session, TM_CLICKHOUSE_REFUSE_EXISTING);
  g_autofree char *ids = ch_query(ch, "SELECT DISTINCT run_id FROM machine",
                                  TM_FORMAT_CSV);
  e2e_assert_text(ids, "\"run_id\"\n\"it's a \\ run\"\n");
  const char *dup[] = {id, id};
  GError *error = NULL;
  g_assert_false(tm_clickhouse_check(ch, dup, 2, TM_CLICKHOUSE_REPLACE,
                                     &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RUN_ID);
  g_clear_error(&error);
  g_assert_false(tm_clickhouse_check(ch, &id, 1,
                                     TM_CLICKHOUSE_REFUSE_EXISTING, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RUN_EXISTS);
  g_clear_error(&error);
  tm_session_free(session);
  tm_clickhouse_free(ch);
}

/* ---- LowCardinality columns ---------------------------------------------- */

/* `n` slices named "n<i % names>" (distinct names: min(n, names)), their
 * category cycling through "c<i / 3 % 300>", "" and none at all (the
 * JSON reader stores "" as NULL too), each with an arg "k<i % 3>":
 * repeated strings of every dictionary size the encoder writes
 * (clickhouse_tables.c, put_dictionary()). */
static char *write_repeated_strings_run(const char *name, int n, int names) {
  GString *json = g_string_new("[");
  for (int i = 0; i < n; i++) {
    g_string_append_printf(json,
                           "%s{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%d,"
                           "\"dur\":1,\"name\":\"n%d\"",
                           i ? ",\n" : "", i * 2, i % names);
    if (i % 3 == 0)
      g_string_append_printf(json, ",\"cat\":\"c%d\"", i / 3 % 300);
    else if (i % 3 == 1)
      g_string_append(json, ",\"cat\":\"\"");
    g_string_append_printf(json, ",\"args\":{\"k%d\":%d}}", i % 3, i);
  }
  g_string_append(json, "]\n");
  char *path = e2e_write_file(work_dir, name, json->str, json->len);
  g_string_free(json, TRUE);
  return path;
}

/* The repeated strings of slice and args go as LowCardinality columns
 * (docs/clickhouse.md, "Tables"): the server's types are those, and every
 * value reads back as the local query prints it, NULL apart from ""
 * (JSON). Three runs cover the dictionary's index widths: 70 000 distinct
 * names in one block (more than 65 536: 4-byte indexes), 300 categories
 * (2-byte), three arg keys (1-byte); and 2 000 distinct names in blocks of
 * 254 rows, whose 254 names and the two places before them (NULL, "")
 * are exactly the 256 a 1-byte index holds, and of 255 rows (one more:
 * 2-byte indexes). */
static void test_repeated_strings_read_back(void) {
  tm_clickhouse *ch = open_database("repeated");
  create_schema(ch);
  g_autofree char *types = ch_query(
      ch, "SELECT table, name, type FROM system.columns WHERE database = "
          "'repeated' AND type LIKE 'LowCardinality%' ORDER BY table, name",
      TM_FORMAT_TSV);
  e2e_assert_text(types,
                  "table\tname\ttype\n"
                  "args\tflat_key\tLowCardinality(Nullable(String))\n"
                  "args\tkey\tLowCardinality(Nullable(String))\n"
                  "args\tvalue_type\tLowCardinality(Nullable(String))\n"
                  "slice\tcat\tLowCardinality(Nullable(String))\n"
                  "slice\tcategory\tLowCardinality(Nullable(String))\n"
                  "slice\tname\tLowCardinality(Nullable(String))\n");
  g_autofree char *wide = write_repeated_strings_run("wide.json", 70000,
                                                     70000);
  g_autofree char *narrow = write_repeated_strings_run("narrow.json", 2000,
                                                       2000);
  tm_session *sessions[] = {import_path(wide), import_path(narrow),
                            import_path(narrow)};
  static const struct {
    const char *run_id;
    size_t block_rows; /* 0: the sink's choice */
  } runs[] = {{"wide", 0}, {"blocks_of_254", 254}, {"blocks_of_255", 255}};
  static const char *const queries[] = {
      /* NULL sorts first in SQLite, last in ClickHouse: "IS NULL" first. */
      "SELECT name, category, category IS NULL AS no_category, count(*) AS n "
      "FROM slice GROUP BY name, category "
      "ORDER BY name, category IS NULL, category",
      "SELECT flat_key, key, value_type, count(*) AS n FROM args "
      "GROUP BY flat_key, key, value_type "
      "ORDER BY flat_key IS NULL, flat_key, key IS NULL, key, value_type",
  };
  for (size_t r = 0; r < G_N_ELEMENTS(runs); r++) {
    clickhouse_set_block_rows(ch, runs[r].block_rows);
    load(ch, runs[r].run_id, sessions[r], TM_CLICKHOUSE_REFUSE_EXISTING);
    /* Not an empty comparison: NULL categories are there too. */
    g_autofree char *null_sql = g_strdup_printf(
        "SELECT count() FROM slice WHERE run_id = '%s' AND category IS NULL",
        runs[r].run_id);
    g_assert_cmpint(ch_count(ch, null_sql), >, 0);
    for (size_t q = 0; q < G_N_ELEMENTS(queries); q++) {
      g_autofree char *expected =
          local_query(sessions[r], queries[q], TM_FORMAT_JSON);
      /* The same query over the run's rows alone. */
      g_autofree char *from = g_strdup_printf(
          "FROM (SELECT * FROM %s WHERE run_id = '%s')",
          q == 0 ? "slice" : "args", runs[r].run_id);
      g_autofree char *ch_sql = replace_once(
          queries[q], q == 0 ? "FROM slice" : "FROM args", from);
      g_autofree char *actual = ch_query(ch, ch_sql, TM_FORMAT_JSON);
      if (g_strcmp0(actual, expected) != 0)
        g_error("run %s, query %zu: ClickHouse differs from the local "
                "query", runs[r].run_id, q);
    }
  }
  clickhouse_set_block_rows(ch, 0);
  for (size_t r = 0; r < G_N_ELEMENTS(sessions); r++)
    tm_session_free(sessions[r]);
  tm_clickhouse_free(ch);
}

static void free_fleet(void) { tm_clickhouse_free(fleet); }

static void add_tests(void) {
  g_test_add_func("/clickhouse/fleet/slice-counts-per-machine-sum-over-runs",
                  test_fleet_slice_counts_per_machine);
  g_test_add_func("/clickhouse/fleet/p95-of-dur-by-name",
                  test_fleet_p95_by_name);
  g_test_add_func("/clickhouse/fleet/sched-joins-slices-within-runs",
                  test_fleet_join_of_sched_and_slices);
  g_test_add_func("/clickhouse/fleet/every-run-is-in-every-table",
                  test_fleet_every_run_in_every_table);
  g_test_add_func("/clickhouse/load/values-read-back-as-local-queries-print-them",
                  test_values_match_local_queries);
  g_test_add_func("/clickhouse/schema/is-the-one-docs-clickhouse-md-gives",
                  test_docs_give_the_schema);
  g_test_add_func("/clickhouse/load/run-ids-with-quotes-are-literals",
                  test_run_ids_with_quotes);
  g_test_add_func("/clickhouse/query/prints-as-local-queries-do",
                  test_query_prints_as_local_queries_do);
  g_test_add_func("/clickhouse/query/errors-name-server-and-cause",
                  test_query_errors_name_server_and_cause);
  g_test_add_func("/clickhouse/import/errors-name-what-failed",
                  test_import_errors);
  g_test_add_func("/clickhouse/load/repeated-strings-read-back-whatever-their-dictionary-size",
                  test_repeated_strings_read_back);
  g_test_add_func("/clickhouse/schema/version-1-database-is-refused-and-left-unchanged",
                  test_older_schema_version_is_refused_untouched);
}

int main(int argc, char **argv) {
  return ch_tests_main(&argc, &argv, add_tests, free_fleet);
}
