/*
 * The ClickHouse sink against a real server (tests/support/
 * clickhouse_fixture.h): loading a run again (refused, or replaced whole,
 * never duplicated) and loads stopped half-way (the server killed while
 * streaming, before publishing, while replacing; a partly published run),
 * on the generated runs of tests/support/clickhouse_runs.h. Without a
 * clickhouse-server binary the program exits 77 (SKIP) and says so.
 * Beside it: test_clickhouse.c.
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

/* ---- re-loads through the CLI -------------------------------------------- */

static void assert_cli_ok(e2e_result *r) {
  if (r->exit_code != 0 || r->err[0])
    g_error("tracemerge exited %d: %s", r->exit_code, r->err);
  e2e_result_clear(r);
}

/* Loading a run again: refused by default with a message naming it,
 * replaced whole with --replace (never duplicated), and a failed import
 * never replaces a loaded run. */
static void test_reload_refuse_or_replace(void) {
  g_autofree char *url = ch_fixture_url(&server, "reload");
  g_autofree char *run0 = write_run(0);
  g_autofree char *run5 = write_run(5);
  e2e_result r = cli_import(run0, url, "r0", "--create-schema");
  assert_cli_ok(&r);
  tm_clickhouse *ch = open_database("reload");
  int64_t rows_before = rows_of_run(ch, "r0");
  g_assert_cmpint(run_slices(ch, "r0"), ==, generated_slices(0));

  r = cli_import(run0, url, "r0", NULL);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_autofree char *refused = g_strdup_printf(
      "tracemerge: ClickHouse at 127.0.0.1:%d: run 'r0' already loaded in "
      "database reload: nothing loaded (replace mode replaces a loaded run)\n",
      server.http_port);
  e2e_assert_text(r.err, refused);
  e2e_result_clear(&r);
  g_assert_cmpint(rows_of_run(ch, "r0"), ==, rows_before);

  r = cli_import(run0, url, "r0", "--replace");
  assert_cli_ok(&r);
  g_assert_cmpint(rows_of_run(ch, "r0"), ==, rows_before);

  /* Run 5's content under id r0: only it remains. */
  r = cli_import(run5, url, "r0", "--replace");
  assert_cli_ok(&r);
  g_assert_cmpint(run_slices(ch, "r0"), ==, generated_slices(5));
  g_assert_cmpint(ch_count(ch, "SELECT count() FROM machine WHERE "
                               "run_id = 'r0'"), ==, N_MACHINES);
  int64_t rows_of_5 = rows_of_run(ch, "r0");

  /* A damaged input: its import fails (exit 1); what it read is loaded
   * only under a new run id. */
  g_autofree char *damaged = e2e_write_file(
      work_dir, "damaged.json",
      "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,"
      "\"dur\":1,\"name\":\"kept\"},{\"ph\":", 0);
  r = cli_import(damaged, url, "r0", "--replace");
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, "tracemerge: run 'r0' left as it was: a "
                                 "failed import does not replace it\n"));
  e2e_result_clear(&r);
  g_assert_cmpint(rows_of_run(ch, "r0"), ==, rows_of_5);
  r = cli_import(damaged, url, "partial", "--replace");
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, "damaged.json"));
  e2e_result_clear(&r);
  g_autofree char *kept = ch_query(
      ch, "SELECT name FROM slice WHERE run_id = 'partial'", TM_FORMAT_CSV);
  e2e_assert_text(kept, "\"name\"\n\"kept\"\n");
  tm_clickhouse_free(ch);
}

/* The runs of one load share a partition: replacing some of them keeps
 * the others as they were, removes the replaced runs' rows from tables
 * their new content has none in, and an earlier load left without runs
 * is gone. */
static void test_replacing_runs_of_a_load_keeps_the_others(void) {
  tm_clickhouse *ch = open_database("batch");
  create_schema(ch);
  const char *ids[] = {"b10", "b11", "b12"};
  tm_session *sessions[3];
  tm_clickhouse_run runs[3];
  for (int i = 0; i < 3; i++) {
    g_autofree char *path = write_run(10 + i);
    sessions[i] = import_path(path);
    runs[i] = (tm_clickhouse_run){ids[i], sessions[i]};
  }
  GError *error = NULL;
  g_assert_true(tm_clickhouse_load(ch, runs, 3, TM_CLICKHOUSE_REFUSE_EXISTING,
                                   &error));
  g_assert_no_error(error);
  int64_t rows10 = rows_of_run(ch, "b10"), rows12 = rows_of_run(ch, "b12");
  g_assert_cmpint(ch_count(ch, "SELECT count() FROM sched WHERE "
                               "run_id = 'b11'"), >, 0);

  /* b11 becomes one JSON slice: no scheduling any more. */
  g_autofree char *json = e2e_write_file(
      work_dir, "one.json",
      "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,"
      "\"name\":\"only\"}]\n", 0);
  tm_session *one = import_path(json);
  load(ch, "b11", one, TM_CLICKHOUSE_REPLACE);
  g_assert_cmpint(rows_of_run(ch, "b10"), ==, rows10);
  g_assert_cmpint(rows_of_run(ch, "b12"), ==, rows12);
  g_assert_cmpint(run_slices(ch, "b11"), ==, 1);
  g_assert_cmpint(ch_count(ch, "SELECT count() FROM sched WHERE "
                               "run_id = 'b11'"), ==, 0);
  g_assert_cmpint(run_slices(ch, "b10"), ==, generated_slices(10));

  /* b10 and b12 again, together: the first load's partition has no run
   * left, so two loads remain (b11's and this one). */
  tm_clickhouse_run again[] = {runs[0], runs[2]};
  g_assert_true(tm_clickhouse_load(ch, again, 2, TM_CLICKHOUSE_REPLACE,
                                   &error));
  g_assert_no_error(error);
  g_assert_cmpint(rows_of_run(ch, "b10"), ==, rows10);
  g_assert_cmpint(rows_of_run(ch, "b12"), ==, rows12);
  g_assert_cmpint(run_slices(ch, "b11"), ==, 1);
  g_assert_cmpint(ch_count(ch, "SELECT uniqExact(load_id) FROM slice"), ==,
                  2);
  g_assert_cmpint(ch_count(ch, "SELECT count() FROM system.parts WHERE "
                               "database = 'batch' AND table = 'slice' AND "
                               "active"), ==, 2);
  for (int i = 0; i < 3; i++)
    tm_session_free(sessions[i]);
  tm_session_free(one);
  tm_clickhouse_free(ch);
}

/* ---- a load stopped half-way ------------------------------------------- */

/* One machine, enough slices for several batches of the slice table. */
static char *write_big_run(void) {
  GString *json = g_string_new("[");
  for (int i = 0; i < 60000; i++)
    g_string_append_printf(json,
                           "%s{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%d,"
                           "\"dur\":1,\"name\":\"s%d\"}",
                           i ? ",\n" : "", i * 2, i % 100);
  g_string_append(json, "]\n");
  char *path = e2e_write_file(work_dir, "big.json", json->str, json->len);
  g_string_free(json, TRUE);
  return path;
}

typedef struct kill_plan {
  const char *table;  /* kill once this table streamed... */
  uint64_t rows;      /* ...more than this many rows; NULL: at publishing */
  bool killed;
} kill_plan;

static void kill_server(void *data, const char *table, uint64_t rows) {
  kill_plan *plan = data;
  if (plan->killed)
    return;
  bool now = plan->table ? table && strcmp(table, plan->table) == 0 &&
                               rows != UINT64_MAX && rows > plan->rows
                         : rows == UINT64_MAX;
  if (now) {
    ch_fixture_kill(&server);
    plan->killed = true;
  }
}

/* The server dies during a load (mid-stream, or just before publishing):
 * the load fails naming what failed, and once the server is back no table
 * holds a row of that run (or, `replacing`, the run is as it was before,
 * loaded with run "kept" in one earlier load); the run loads afterwards. */
static void assert_killed_load_leaves_nothing(kill_plan plan,
                                              const char *expected_what,
                                              bool replacing) {
  tm_clickhouse *ch = open_database("killed");
  create_schema(ch);
  g_autofree char *small = write_run(1);
  g_autofree char *earlier = write_run(2);
  tm_session *kept = import_path(small);
  tm_session *old = import_path(earlier);
  tm_clickhouse_run before[] = {{"kept", kept}, {"doomed", old}};
  GError *error = NULL;
  g_assert_true(tm_clickhouse_load(ch, before, replacing ? 2 : 1,
                                   TM_CLICKHOUSE_REFUSE_EXISTING, &error));
  g_assert_no_error(error);
  int64_t kept_rows = rows_of_run(ch, "kept");
  int64_t old_rows = replacing ? rows_of_run(ch, "doomed") : 0;
  if (replacing)
    g_assert_cmpint(run_slices(ch, "doomed"), ==, generated_slices(2));

  g_autofree char *big = write_big_run();
  tm_session *doomed = import_path(big);
  clickhouse_set_load_hook(ch, kill_server, &plan);
  tm_clickhouse_run run = {"doomed", doomed};
  tm_clickhouse_load_mode mode =
      replacing ? TM_CLICKHOUSE_REPLACE : TM_CLICKHOUSE_REFUSE_EXISTING;
  g_assert_false(tm_clickhouse_load(ch, &run, 1, mode, &error));
  g_assert_true(plan.killed);
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_CONNECTION);
  g_autofree char *prefix = g_strdup_printf("ClickHouse at 127.0.0.1:%d: %s",
                                            server.http_port, expected_what);
  if (!g_str_has_prefix(error->message, prefix) ||
      !strstr(error->message, "; nothing of run 'doomed' was published"))
    g_error("unexpected message: %s", error->message);
  g_clear_error(&error);
  clickhouse_set_load_hook(ch, NULL, NULL);

  ch_fixture_restart(&server);
  g_assert_cmpint(rows_of_run(ch, "doomed"), ==, old_rows);
  g_assert_cmpint(rows_of_run(ch, "kept"), ==, kept_rows);
  load(ch, "doomed", doomed, mode);
  g_assert_cmpint(run_slices(ch, "doomed"), ==, 60000);
  g_assert_cmpint(rows_of_run(ch, "kept"), ==, kept_rows);
  /* Clean for the next scenario. */
  g_autofree char *drop = ch_query(ch, "DROP DATABASE killed", TM_FORMAT_CSV);
  tm_session_free(doomed);
  tm_session_free(old);
  tm_session_free(kept);
  tm_clickhouse_free(ch);
}

static void test_server_killed_while_streaming(void) {
  kill_plan plan = {"slice", 20000, false};
  assert_killed_load_leaves_nothing(plan, "loading run 'doomed' into slice "
                                          "(staging table _tm_stage_", false);
}

static void test_server_killed_before_publishing(void) {
  kill_plan plan = {NULL, 0, false};
  assert_killed_load_leaves_nothing(plan, "publishing run 'doomed' in slice: ",
                                    false);
}

/* Replacing a run that shares its earlier load with another: killed after
 * the other run was copied into the stage, before publishing. */
static void test_server_killed_while_replacing(void) {
  kill_plan plan = {NULL, 0, false};
  assert_killed_load_leaves_nothing(plan, "publishing run 'doomed' in slice: ",
                                    true);
}

/* Just before publishing, the `machine` table's stage disappears (as if
 * someone dropped it): every other table publishes, `machine` does not.
 * The error says which tables were published, and since `machine` is
 * published last, the run is not listed there. */
static void drop_machine_stage(void *data, const char *table, uint64_t rows) {
  (void)table;
  if (rows != UINT64_MAX)
    return;
  tm_clickhouse *other = open_database("partial");
  g_autofree char *name = ch_query(
      other, "SELECT name FROM system.tables WHERE database = 'partial' AND "
             "name LIKE '\\_tm\\_stage\\_%\\_machine'",
      TM_FORMAT_TSV);
  char *stage = strchr(name, '\n') + 1;
  *strchr(stage, '\n') = '\0';
  g_autofree char *sql = g_strdup_printf("DROP TABLE `%s`", stage);
  g_autofree char *dropped = ch_query(other, sql, TM_FORMAT_TSV);
  tm_clickhouse_free(other);
  *(bool *)data = true;
}

static void test_partly_published_run(void) {
  tm_clickhouse *ch = open_database("partial");
  create_schema(ch);
  g_autofree char *path = write_run(6);
  tm_session *session = import_path(path);
  bool dropped = false;
  clickhouse_set_load_hook(ch, drop_machine_stage, &dropped);
  tm_clickhouse_run run = {"half", session};
  GError *error = NULL;
  g_assert_false(tm_clickhouse_load(ch, &run, 1, TM_CLICKHOUSE_REFUSE_EXISTING,
                                    &error));
  g_assert_true(dropped);
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_PARTIAL);
  g_autofree char *where = g_strdup_printf(
      "ClickHouse at 127.0.0.1:%d: publishing run 'half' in machine: HTTP ",
      server.http_port);
  if (!g_str_has_prefix(error->message, where) ||
      !strstr(error->message,
              "; run 'half' partly published (done: slice, counter, sched, "
              "thread_state, flow, args, thread, process, track, cpu, "
              "trace_file, stats, metadata; not done: machine): load again "
              "in replace mode"))
    g_error("unexpected message: %s", error->message);
  g_clear_error(&error);
  clickhouse_set_load_hook(ch, NULL, NULL);
  g_assert_cmpint(run_slices(ch, "half"), ==, generated_slices(6));
  g_assert_cmpint(ch_count(ch, "SELECT count() FROM machine WHERE "
                               "run_id = 'half'"), ==, 0);
  /* As the message says: loading again in replace mode completes it. */
  load(ch, "half", session, TM_CLICKHOUSE_REPLACE);
  g_assert_cmpint(ch_count(ch, "SELECT count() FROM machine WHERE "
                               "run_id = 'half'"), ==, N_MACHINES);
  g_assert_cmpint(run_slices(ch, "half"), ==, generated_slices(6));
  tm_session_free(session);
  tm_clickhouse_free(ch);
}

static void add_tests(void) {
  g_test_add_func("/clickhouse/reload/refused-or-replaced-never-duplicated",
                  test_reload_refuse_or_replace);
  g_test_add_func("/clickhouse/reload/replacing-runs-of-a-load-keeps-the-others",
                  test_replacing_runs_of_a_load_keeps_the_others);
  g_test_add_func("/clickhouse/failure/server-killed-while-streaming",
                  test_server_killed_while_streaming);
  g_test_add_func("/clickhouse/failure/server-killed-before-publishing",
                  test_server_killed_before_publishing);
  g_test_add_func("/clickhouse/failure/server-killed-while-replacing-leaves-the-old-run",
                  test_server_killed_while_replacing);
  g_test_add_func("/clickhouse/failure/partly-published-run-is-named-and-not-in-machine",
                  test_partly_published_run);
}

int main(int argc, char **argv) {
  return ch_tests_main(&argc, &argv, add_tests, NULL);
}
