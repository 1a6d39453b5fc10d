/* The ClickHouse tests' runs and helpers; see clickhouse_runs.h. */
#include "clickhouse_runs.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

const char *const machine_names[N_MACHINES] = {"phone", "server", "watch"};
ch_fixture server;
char *work_dir;

int ch_tests_main(int *argc, char ***argv, void (*add_tests)(void), void (*cleanup)(void)) {
  char *skip_reason = NULL;
  if (!ch_fixture_start(&server, &skip_reason)) {
    printf("SKIP: %s\n", skip_reason);
    g_free(skip_reason);
    return 77;
  }
  g_test_init(argc, argv, NULL);
  work_dir = e2e_tmpdir();
  add_tests();
  int status = g_test_run();
  if (cleanup)
    cleanup();
  e2e_cleanup(work_dir);
  g_free(work_dir);
  ch_fixture_stop(&server);
  return status;
}

/* ---- the generator ------------------------------------------------------- */

int n_frames(int r, int m) { return 1 + (r * 3 + m * 5) % 7; }

int frame_dur_us(int r, int m, int k) {
  return 100 + (r * 31 + m * 17 + k * 7) % 1000;
}

bool frame_while_running(int r, int m, int k) {
  return (r + m + k) % 3 != 0;
}

static bool has_draw(int k) { return k % 2 == 0; }

int slices_of(int r, int m) {
  int n = n_frames(r, m), draws = 0;
  for (int k = 0; k < n; k++)
    draws += has_draw(k);
  return n + draws;
}

static void line_at(GString *text, int64_t us, const char *who,
                    const char *flags, const char *what) {
  g_string_append_printf(text, "%s [000] %s %" G_GINT64_FORMAT ".%06d: %s\n",
                         who, flags, us / 1000000, (int)(us % 1000000), what);
}

/* Machine m's ftrace text in run r (the functions above). The app runs
 * with next_prio -1, as the kernel writes a SCHED_DEADLINE task's: a
 * negative priority through the sink's int32 column. */
char *machine_trace(int r, int m) {
  GString *text = g_string_new("# tracer: nop\n");
  for (int k = 0; k < n_frames(r, m); k++) {
    int64_t base = 10000000 + (int64_t)k * 10000;
    int64_t begin = base + (frame_while_running(r, m, k) ? 500 : 3000);
    int64_t end = begin + frame_dur_us(r, m, k);
    GString *frame = g_string_new(NULL);
    line_at(frame, begin, "app-100", "...1",
            "tracing_mark_write: B|100|Frame");
    if (has_draw(k)) {
      line_at(frame, begin + 10, "app-100", "...1",
              "tracing_mark_write: B|100|Draw");
      line_at(frame, begin + 10 + DRAW_US, "app-100", "...1",
              "tracing_mark_write: E|100");
    }
    line_at(frame, end, "app-100", "...1", "tracing_mark_write: E|100");
    line_at(text, base, "<idle>-0", "d..2",
            "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 "
            "prev_state=R ==> next_comm=app next_pid=100 next_prio=-1");
    if (frame_while_running(r, m, k))
      g_string_append(text, frame->str);
    line_at(text, base + RUN_US, "app-100", "d..2",
            "sched_switch: prev_comm=app prev_pid=100 prev_prio=120 "
            "prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120");
    if (!frame_while_running(r, m, k))
      g_string_append(text, frame->str);
    g_string_free(frame, TRUE);
  }
  return g_string_free(text, FALSE);
}

/* Run r as a ZIP: a manifest naming the machines and their three files. */
char *write_run(int r) {
  char *traces[N_MACHINES];
  e2e_member members[N_MACHINES + 1];
  GString *manifest = g_string_new("{\"perfetto_manifest\": {\"version\": 1, "
                                   "\"files\": [");
  for (int m = 0; m < N_MACHINES; m++) {
    traces[m] = machine_trace(r, m);
    members[m + 1] = (e2e_member){g_strdup_printf("%s.txt", machine_names[m]),
                                  traces[m], 0};
    g_string_append_printf(manifest,
                           "%s{\"path\": \"%s.txt\", \"machine\": "
                           "{\"name\": \"%s\"}}",
                           m ? ", " : "", machine_names[m], machine_names[m]);
  }
  g_string_append(manifest, "]}}\n");
  members[0] = (e2e_member){"manifest.json", manifest->str, 0};
  g_autofree char *name = g_strdup_printf("run%d.zip", r);
  char *path = e2e_write_archive(work_dir, name, E2E_ZIP, members,
                                 N_MACHINES + 1);
  for (int m = 0; m < N_MACHINES; m++) {
    g_free((char *)members[m + 1].name);
    g_free(traces[m]);
  }
  g_string_free(manifest, TRUE);
  return path;
}

tm_session *import_path(const char *path) {
  tm_session *session = tm_session_new(NULL);
  GError *error = NULL;
  const char *paths[] = {path};
  g_assert_true(tm_session_import(session, paths, 1, &error));
  g_assert_no_error(error);
  return session;
}

/* ---- helpers ------------------------------------------------------------- */

tm_clickhouse *open_database(const char *database) {
  g_autofree char *url = ch_fixture_url(&server, database);
  GError *error = NULL;
  tm_clickhouse *ch = tm_clickhouse_open(url, &error);
  g_assert_no_error(error);
  return ch;
}

/* The result of `sql` on ClickHouse, printed in `format`; asserts success. */
char *ch_query(tm_clickhouse *ch, const char *sql, tm_format format) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  GError *error = NULL;
  tm_query_options options = {.format = format};
  bool ok = tm_clickhouse_query(ch, sql, &options, out, 0, &error);
  fclose(out);
  g_assert_no_error(error);
  g_assert_true(ok);
  char *copy = g_strdup(text);
  free(text);
  return copy;
}

char *local_query(tm_session *session, const char *sql,
                         tm_format format) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  GError *error = NULL;
  bool ok = tm_session_query(session, sql, format, out, &error);
  fclose(out);
  g_assert_no_error(error);
  g_assert_true(ok);
  char *copy = g_strdup(text);
  free(text);
  return copy;
}

int64_t ch_count(tm_clickhouse *ch, const char *sql) {
  g_autofree char *csv = ch_query(ch, sql, TM_FORMAT_TSV);
  const char *rows = strchr(csv, '\n');
  g_assert_nonnull(rows);
  return g_ascii_strtoll(rows + 1, NULL, 10);
}

void create_schema(tm_clickhouse *ch) {
  GError *error = NULL;
  g_assert_true(tm_clickhouse_create_schema(ch, &error));
  g_assert_no_error(error);
}

void load(tm_clickhouse *ch, const char *run_id, tm_session *session,
                 tm_clickhouse_load_mode mode) {
  GError *error = NULL;
  tm_clickhouse_run run = {run_id, session};
  g_assert_true(tm_clickhouse_load(ch, &run, 1, mode, &error));
  g_assert_no_error(error);
}

static const char *const all_tables[] = {
    "slice", "counter", "sched",      "thread_state", "flow",
    "args",  "thread",  "process",    "track",        "cpu",
    "trace_file", "stats", "metadata", "machine",
};

/* Rows of run `run_id` over every table. */
int64_t rows_of_run(tm_clickhouse *ch, const char *run_id) {
  int64_t total = 0;
  for (size_t t = 0; t < G_N_ELEMENTS(all_tables); t++) {
    g_autofree char *sql = g_strdup_printf(
        "SELECT count() FROM %s WHERE run_id = '%s'", all_tables[t], run_id);
    total += ch_count(ch, sql);
  }
  return total;
}


/* ---- through the CLI ---- */

e2e_result cli_import(const char *path, const char *url,
                             const char *run_id, const char *extra) {
  const char *args[] = {"import", path, "--to", url, "--run", run_id,
                        extra, NULL};
  return e2e_run(args);
}

int64_t run_slices(tm_clickhouse *ch, const char *run_id) {
  g_autofree char *sql = g_strdup_printf(
      "SELECT count() FROM slice WHERE run_id = '%s'", run_id);
  return ch_count(ch, sql);
}

int64_t generated_slices(int r) {
  int64_t n = 0;
  for (int m = 0; m < N_MACHINES; m++)
    n += slices_of(r, m);
  return n;
}
