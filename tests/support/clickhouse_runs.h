/*
 * What the ClickHouse tests (test_clickhouse.c, test_clickhouse_reload.c)
 * share: the generated runs and the helpers that load and query them.
 *
 * A run is 3 machines (phone, server, watch), each an ftrace text file
 * whose counts and durations are functions of (run r, machine m, frame k),
 * so every expected answer is computed from the same functions, not
 * written down:
 *   - n_frames(r, m) "Frame" slices; the even ones hold a "Draw" slice of
 *     DRAW_US µs;
 *   - frame k at 10 s + k × 10 ms: the app thread runs (sched_switch in
 *     and out) for RUN_US µs from there, and the Frame begins 500 µs in
 *     (while running) when frame_while_running(), else 3000 µs in (after
 *     it went to sleep); it lasts frame_dur_us() µs.
 * Machines are unrelated clocks; every expectation is within a machine.
 */
#ifndef TM_TEST_CLICKHOUSE_RUNS_H
#define TM_TEST_CLICKHOUSE_RUNS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include <tracemerge/tracemerge.h>

#include "clickhouse_fixture.h"
#include "e2e_support.h"
#include "sink/clickhouse_sink.h"
#include "sink/clickhouse_tables.h"

#define N_RUNS 200
#define N_MACHINES 3
#define LOAD_BATCH 50
#define RUN_US 2000
#define DRAW_US 50

extern const char *const machine_names[N_MACHINES];
/* The server the program started (main) and its scratch directory. */
extern ch_fixture server;
extern char *work_dir;

/* --- the program --- */

/* What each ClickHouse test program's main() does around its tests: start
 * `server` (without a clickhouse-server binary, print why and return 77,
 * meson's SKIP), g_test_init, make `work_dir`, add the tests, run them;
 * then `cleanup` (may be NULL), remove work_dir and stop the server.
 * Returns g_test_run's status. */
int ch_tests_main(int *argc, char ***argv, void (*add_tests)(void), void (*cleanup)(void));

/* --- the generator --- */
int n_frames(int r, int m);
int frame_dur_us(int r, int m, int k);
bool frame_while_running(int r, int m, int k);
/* Slices of machine m in run r: its frames and their draws. */
int slices_of(int r, int m);
/* Machine m's ftrace text in run r. */
char *machine_trace(int r, int m);
/* Run r as a ZIP in work_dir: a manifest naming the machines and their
 * three files. */
char *write_run(int r);
tm_session *import_path(const char *path);

/* --- the server --- */
tm_clickhouse *open_database(const char *database);
/* The result of `sql` on ClickHouse, printed in `format`; asserts success. */
char *ch_query(tm_clickhouse *ch, const char *sql, tm_format format);
char *local_query(tm_session *session, const char *sql, tm_format format);
/* The number in the one row of `sql`'s result. */
int64_t ch_count(tm_clickhouse *ch, const char *sql);
void create_schema(tm_clickhouse *ch);
void load(tm_clickhouse *ch, const char *run_id, tm_session *session,
          tm_clickhouse_load_mode mode);
/* Rows of run `run_id` over every table. */
int64_t rows_of_run(tm_clickhouse *ch, const char *run_id);
/* Slices of run `run_id` on the server, and of generated run r. */
int64_t run_slices(tm_clickhouse *ch, const char *run_id);
int64_t generated_slices(int r);

/* --- the CLI --- */
/* `tracemerge import PATH --to URL --run RUN_ID EXTRA`. */
e2e_result cli_import(const char *path, const char *url, const char *run_id,
                      const char *extra);

#endif /* TM_TEST_CLICKHOUSE_RUNS_H */
