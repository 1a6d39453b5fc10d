/* End-to-end tests of `tracemerge query`'s shell habits: the prompt on a
 * real terminal (a pseudo-terminal: line editing, history recall, Ctrl-C,
 * the history file), the dot commands through a pipe (-i), -q - reading
 * standard input, the table format and -W, and scripts printing what
 * trace_processor_shell prints (its RunQueriesAndPrintResult: one empty
 * line per statement before the last, then the last one's CSV; rows from
 * an earlier statement fail the script), and --add-sql-package. */
#include <errno.h>
#include <glib.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "e2e_support.h"

/* Two slices on one thread: "outer" [1 µs, 6 µs) holding "inner". */
static const char trace_json[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":5,\"name\":\"outer\"},"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,\"name\":\"inner\"}"
    "]}\n";

/* Runs the CLI in `dir` with `input` on its standard input: a file in
 * `dir`, not a pipe. A CLI that exits before reading its input (a usage
 * error) closes a pipe's reading end, and whether the test's write then
 * fails (EPIPE, which makes g_subprocess_communicate fail) depends on
 * which of the two processes the machine runs first: under load the CLI
 * can exit before the test writes. A file is there before the CLI starts
 * and is read the same way (neither is a terminal). */
static e2e_result run_with_input(const char *dir, const char *const *args,
                                 const char *input) {
  g_autofree char *input_path = e2e_write_file(dir, "stdin.txt", input, 0);
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)g_getenv("TRACEMERGE_CLI"));
  for (size_t i = 0; args[i]; i++)
    g_ptr_array_add(argv, (char *)args[i]);
  g_ptr_array_add(argv, NULL);
  GSubprocess *process = NULL;
  GError *error = NULL;
  GSubprocessLauncher *launcher = g_subprocess_launcher_new(
      G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_stdin_file_path(launcher, input_path);
  g_subprocess_launcher_set_cwd(launcher, dir);
  /* No history file may be touched by a test: the input is no terminal,
   * and XDG_CONFIG_HOME points into the test's directory anyway. */
  g_subprocess_launcher_setenv(launcher, "XDG_CONFIG_HOME", dir, TRUE);
  process = g_subprocess_launcher_spawnv(
      launcher, (const char *const *)argv->pdata, &error);
  g_assert_no_error(error);
  e2e_result result = {0};
  g_assert_true(g_subprocess_communicate_utf8(process, NULL, NULL,
                                              &result.out, &result.err,
                                              &error));
  g_assert_no_error(error);
  result.exit_code = g_subprocess_get_if_exited(process)
                         ? g_subprocess_get_exit_status(process)
                         : 128 + g_subprocess_get_term_sig(process);
  g_object_unref(process);
  g_object_unref(launcher);
  g_ptr_array_free(argv, TRUE);
  return result;
}

static char *setup(void) {
  char *dir = e2e_tmpdir();
  g_free(e2e_write_file(dir, "t.json", trace_json, 0));
  return dir;
}

/* `text` with the variable "N rows in T ms" lines cut to "N rows". */
static char *without_times(const char *text) {
  GRegex *times = g_regex_new(" in [0-9]+\\.[0-9]{3} ms", 0, 0, NULL);
  char *out = g_regex_replace_literal(times, text, -1, 0, "", 0, NULL);
  g_regex_unref(times);
  return out;
}

/* ---- the prompt through a pipe ---- */

static void test_the_prompt_runs_lines_and_dot_commands(void) {
  g_autofree char *dir = setup();
  g_autofree char *script = e2e_write_file(
      dir, "script.sql",
      "CREATE TEMP TABLE seen AS SELECT name FROM slice;\n"
      "SELECT count(*) AS n FROM seen;\n",
      0);
  const char *args[] = {"query", "t.json", "-i", NULL};
  e2e_result r = run_with_input(
      dir, args,
      "SELECT id, ts, name FROM slice ORDER BY id\n"
      "\n"
      ".mode csv\n"
      "SELECT 1 AS a; SELECT 2 AS b\n"
      ".mode\n"
      ".mode json\n"
      "SELECT name FROM slice WHERE depth = 1\n"
      ".mode tsv\n"
      "SELECT NULL AS z\n"
      ".mode table\n"
      ".width 6\n"
      "SELECT dur, name FROM slice WHERE id = 0\n"
      ".read script.sql\n"
      ".dump saved.sqlite\n"
      ".schema counter\n"
      ".schema nope\n"
      ".mode xml\n"
      ".width 0\n"
      ".frobnicate\n"
      "SELECT nope FROM slice\n"
      ".quit\n"
      "SELECT 'never run'\n");
  g_assert_cmpint(r.exit_code, ==, 0);
  g_autofree char *out = without_times(r.out);
  /* Each line's result as the mode prints it; an interactive line prints
   * only its last statement (no empty line, no error for the first). */
  const char *help_tail =
      "Any other line is SQL, run on the merged trace; Ctrl-C stops it.\n";
  g_autofree char *expected = g_strconcat(
      "id                   ts                   name                 \n"
      "-------------------- -------------------- -------------------- \n"
      "                   0                 1000 outer                \n"
      "                   1                 2000 inner                \n"
      "\n2 rows\n\n"
      "(.help lists the commands; .quit or Ctrl-D leaves)\n"
      "\"b\"\n2\n"
      "\n1 row\n\n"
      "csv\n"
      "[\n{\"name\":\"inner\"}\n]\n"
      "\n1 row\n\n"
      "z\n\n"
      "\n1 row\n\n"
      "dur    name   \n"
      "------ ------ \n"
      "  5000 outer  \n"
      "\n1 row\n\n"
      /* .read runs a script: table mode, no empty lines outside CSV. */
      "n      \n"
      "------ \n"
      "     2 \n"
      "\n1 row\n\n"
      "CREATE VIEW counter (\n"
      "  id INTEGER,\n"
      "  ts INTEGER,\n"
      "  track_id INTEGER,\n"
      "  value REAL,\n"
      "  arg_set_id INTEGER\n"
      ");\n",
      NULL);
  /* After .schema come the help of the unknown command. */
  if (!g_str_has_prefix(out, expected))
    g_error("prompt output differs\n--- expected prefix\n%s\n--- actual\n%s",
            expected, out);
  g_assert_true(g_str_has_suffix(out, help_tail));
  g_assert_null(strstr(out, "never run"));
  e2e_assert_text(r.err,
                  "no table or view named nope\n"
                  ".mode takes table, csv, tsv or json\n"
                  ".width takes a number of characters from 1 to 1000\n"
                  "unknown command .frobnicate\n"
                  "query:1:8: no such column: nope\n");
  e2e_result_clear(&r);
  /* .dump wrote a database plain SQLite reads. */
  g_autofree char *saved = g_build_filename(dir, "saved.sqlite", NULL);
  g_assert_true(g_file_test(saved, G_FILE_TEST_IS_REGULAR));
  e2e_cleanup(dir);
}

static void test_tables_lists_the_public_names(void) {
  g_autofree char *dir = setup();
  const char *args[] = {"query", "t.json", "-i", NULL};
  e2e_result r = run_with_input(dir, args,
                                "CREATE TEMP TABLE mine(x)\n.tables\n");
  g_assert_cmpint(r.exit_code, ==, 0);
  g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
  /* The same names as a query of the schema, minus SQLite's own and the
   * __intrinsic_ storage; the user's own table among them. */
  bool saw_slice = false, saw_mine = false;
  for (size_t i = 0; lines[i]; i++) {
    g_assert_false(g_str_has_prefix(lines[i], "__intrinsic_"));
    g_assert_false(g_str_has_prefix(lines[i], "sqlite_"));
    saw_slice |= strcmp(lines[i], "slice") == 0;
    saw_mine |= strcmp(lines[i], "mine") == 0;
  }
  g_assert_true(saw_slice);
  g_assert_true(saw_mine);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_without_sql_and_without_a_terminal_is_a_usage_error(void) {
  g_autofree char *dir = setup();
  const char *args[] = {"query", "t.json", NULL};
  e2e_result r = run_with_input(dir, args, "SELECT 1\n");
  g_assert_cmpint(r.exit_code, ==, 2);
  g_assert_nonnull(strstr(r.err, "no SQL: give --sql or --query-file"));
  g_assert_cmpstr(r.out, ==, "");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* ---- scripts ---- */

static void test_query_file_dash_reads_standard_input(void) {
  g_autofree char *dir = setup();
  const char *args[] = {"query", "t.json", "-q", "-", NULL};
  e2e_result r = run_with_input(
      dir, args, "SELECT name FROM slice ORDER BY ts DESC LIMIT 1;\n");
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "\"name\"\n\"inner\"\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_a_script_prints_what_trace_processor_shell_prints(void) {
  g_autofree char *dir = setup();
  /* Five statements: a PerfettoSQL include, a PerfettoSQL table, a plain
   * table, a statement whose row is suppressed, then the SELECT. Four
   * earlier statements, four empty lines. */
  const char *args[] = {"query", "t.json", "-q", "-", NULL};
  e2e_result r = run_with_input(
      dir, args,
      "INCLUDE PERFETTO MODULE slices.with_context;\n"
      "CREATE PERFETTO TABLE tops AS SELECT id, name FROM slice "
      "WHERE depth = 0;\n"
      "CREATE TEMP TABLE later AS SELECT id FROM slice WHERE ts > 1000;\n"
      "SELECT 1 AS suppress_query_output;\n"
      "SELECT t.name, (SELECT count(*) FROM later) AS later FROM tops t;\n");
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "\n\n\n\n\"name\",\"later\"\n\"outer\",1\n");
  e2e_result_clear(&r);

  /* A script ending with a statement without columns prints the empty
   * lines of the ones before it, and nothing else. */
  r = run_with_input(dir, args,
                     "CREATE TEMP TABLE a(x); CREATE TEMP TABLE b(x);\n");
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "\n");
  e2e_result_clear(&r);

  /* Rows from an earlier statement fail the script, exit status 1. */
  r = run_with_input(dir, args, "SELECT 1 AS a;\nSELECT 2 AS b;\n");
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_cmpstr(r.out, ==, "");
  g_assert_nonnull(strstr(r.err, "statement 1 returned rows"));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_table_format_and_wide_columns(void) {
  g_autofree char *dir = setup();
  const char *args[] = {"query", "t.json",  "-Q",
                        "SELECT name, dur FROM slice ORDER BY id",
                        "-f",    "table", "-W", NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 0);
  /* -W: 40 characters a column, as trace_processor_shell's -W. */
  g_autofree char *name = g_strdup_printf("%-40s %-40s \n", "name", "dur");
  g_autofree char *dashes = g_strnfill(40, '-');
  g_autofree char *expected = g_strdup_printf(
      "%s%s %s \n%-40s %40d \n%-40s %40d \n", name, dashes, dashes, "outer",
      5000, "inner", 1000);
  e2e_assert_text(r.out, expected);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* ---- the prompt on a terminal ---- */

typedef struct terminal {
  int fd;
  pid_t pid;
  GString *seen; /* everything read so far */
} terminal;

/* Kills the prompt before failing, so a failed test cannot leave it
 * running (an endless query in it would run until the test harness's
 * timeout). */
static G_NORETURN void terminal_fail(terminal *t, size_t from, const char *what) {
  kill(t->pid, SIGKILL);
  g_error("%s; the terminal showed:\n%s", what,
          from <= t->seen->len ? t->seen->str + from : "");
}

/* Reads what the terminal shows within 100 ms, if anything, into seen.
 * Returns false once the terminal is closed (the CLI has left). */
static bool read_a_tick(terminal *t) {
  fd_set fds;
  FD_ZERO(&fds);
  FD_SET(t->fd, &fds);
  struct timeval tick = {0, 100000};
  if (select(t->fd + 1, &fds, NULL, NULL, &tick) <= 0)
    return true;
  char buf[4096];
  ssize_t n = read(t->fd, buf, sizeof buf);
  if (n <= 0)
    return false;
  g_string_append_len(t->seen, buf, n);
  return true;
}

/* Reads what the terminal shows for up to `ms` milliseconds, or until
 * `text` appears after `from` (an offset in seen). Returns the offset just
 * past it, or 0 when it did not appear in time. */
static size_t read_until(terminal *t, size_t from, const char *text, int ms) {
  gint64 give_up = g_get_monotonic_time() + (gint64)ms * 1000;
  for (;;) {
    const char *hit = from <= t->seen->len
                          ? g_strstr_len(t->seen->str + from,
                                         (gssize)(t->seen->len - from), text)
                          : NULL;
    if (hit)
      return (size_t)(hit - t->seen->str) + strlen(text);
    if (g_get_monotonic_time() > give_up)
      return 0;
    if (!read_a_tick(t))
      terminal_fail(t, from, "the terminal closed");
  }
}

/* As read_until, failing after a generous wait (the machine may be loaded
 * and the CLI built with sanitizers). */
static size_t wait_for(terminal *t, size_t from, const char *text) {
  size_t at = read_until(t, from, text, 30000);
  if (!at) {
    g_autofree char *what = g_strdup_printf("no \"%s\" on the terminal", text);
    terminal_fail(t, from, what);
  }
  return at;
}

/* Reads what the terminal shows for 100 ms; a closed terminal is not an
 * error here (the CLI is leaving). Draining matters: a CLI whose last
 * words do not fit the terminal's buffer would otherwise block on them
 * and never exit. */
static void drain(terminal *t) {
  if (!read_a_tick(t))
    g_usleep(100000);
}

/* Waits until the terminal is (or is not) in line mode; the master side
 * reads the terminal's modes. */
static void wait_for_line_mode(terminal *t, size_t from, bool line_mode) {
  gint64 give_up = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
  for (;;) {
    struct termios modes;
    if (tcgetattr(t->fd, &modes) == 0 &&
        ((modes.c_lflag & ICANON) != 0) == line_mode)
      return;
    if (g_get_monotonic_time() > give_up)
      terminal_fail(t, from, line_mode ? "the terminal never went back to line mode"
                                       : "the prompt never left line mode");
    drain(t);
  }
}

/* Waits for the prompt, then until it has taken the terminal out of line
 * mode: libedit prints "> " before it does, and a control key typed in
 * between is handled by the terminal's line discipline instead (Ctrl-D
 * becomes a NUL byte in the next line, Ctrl-C a signal at no prompt). */
static size_t wait_for_prompt(terminal *t, size_t from) {
  size_t at = wait_for(t, from, "> ");
  wait_for_line_mode(t, from, false);
  return at;
}

static void type(terminal *t, const char *keys) {
  size_t len = strlen(keys);
  g_assert_cmpint(write(t->fd, keys, len), ==, (ssize_t)len);
}

static void test_the_prompt_on_a_terminal_edits_recalls_and_interrupts(void) {
  g_autofree char *dir = setup();
  g_autofree char *config = g_build_filename(dir, "config", NULL);
  terminal t = {.seen = g_string_new(NULL)};
  struct winsize size = {.ws_row = 40, .ws_col = 200};
  /* The child's environment and arguments are built before the fork: in
   * the child only async-signal-safe calls are made (the test process may
   * have other threads, whose locks a fork copies held). */
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "XDG_CONFIG_HOME", config, TRUE);
  env = g_environ_setenv(env, "TERM", "xterm", TRUE);
  const char *cli = g_getenv("TRACEMERGE_CLI");
  /* No -i: on a terminal the prompt opens by itself. */
  char *const argv[] = {"tracemerge", "query", "t.json", NULL};
  t.pid = forkpty(&t.fd, NULL, NULL, &size);
  g_assert_cmpint(t.pid, >=, 0);
  if (t.pid == 0) {
    if (chdir(dir) == 0)
      execve(cli, argv, env);
    _exit(127);
  }
  size_t at = wait_for_prompt(&t, 0);
  /* Line editing: type a typo, go back over it with the arrow keys, fix
   * it (ESC [ D is "left"; ^H deletes back). */
  type(&t, "SELECT 40 + 3 AS answer\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D"
           "\x1b[D\x1b[D\x1b[D\x1b[D\b2\r");
  at = wait_for(&t, at, "                  42 ");
  at = wait_for(&t, at, "1 row in ");
  at = wait_for_prompt(&t, at);
  /* History: "up" recalls the line, which runs again. */
  type(&t, "\x1b[A\r");
  at = wait_for(&t, at, "                  42 ");
  at = wait_for_prompt(&t, at);
  /* Ctrl-C at the prompt gives a fresh prompt; it does not leave. */
  type(&t, "\x03");
  at = wait_for_prompt(&t, at);
  type(&t, "SELECT 5 AS after_ctrl_c\r");
  at = wait_for(&t, at, "                   5 ");
  at = wait_for_prompt(&t, at);
  /* Ctrl-C stops an endless query; the prompt comes back. The terminal
   * back in line mode shows the prompt has returned the line; Ctrl-C is
   * pressed again until the query is interrupted, as a user would: a
   * press between returning the line and starting the query is
   * forgotten. */
  type(&t, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
           "SELECT count(*) FROM c\r");
  at = wait_for(&t, at, "FROM c\r\n");
  wait_for_line_mode(&t, at, true);
  size_t interrupted = 0;
  for (int press = 0; press < 30 && !interrupted; press++) {
    type(&t, "\x03");
    interrupted = read_until(&t, at, "query interrupted", 1000);
  }
  if (!interrupted)
    terminal_fail(&t, at, "Ctrl-C did not interrupt the query");
  at = wait_for_prompt(&t, interrupted);
  type(&t, "SELECT 7 AS still_alive\r");
  at = wait_for(&t, at, "                   7 ");
  at = wait_for_prompt(&t, at);
  /* Ctrl-D leaves with status 0. */
  type(&t, "\x04");
  int status = 0;
  pid_t done;
  gint64 give_up = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
  while ((done = waitpid(t.pid, &status, WNOHANG)) == 0 &&
         g_get_monotonic_time() < give_up)
    drain(&t);
  if (done != t.pid)
    terminal_fail(&t, at, "Ctrl-D did not end the prompt");
  g_assert_true(WIFEXITED(status));
  g_assert_cmpint(WEXITSTATUS(status), ==, 0);
  close(t.fd);
  g_string_free(t.seen, TRUE);

  /* The history file holds the edited line (as run, not as typed). */
  g_autofree char *history_path =
      g_build_filename(config, "tracemerge", "history", NULL);
  g_autofree char *history = NULL;
  g_assert_true(g_file_get_contents(history_path, &history, NULL, NULL));
  g_assert_nonnull(strstr(history, "SELECT\\04040\\040+\\0402\\040AS\\040answer"));
  g_assert_null(strstr(history, "+\\0403"));
  e2e_cleanup(dir);
}

/* ---- --add-sql-package ---- */

/* trace_processor_shell's --add-sql-package DIR[@NAME]: every *.sql under
 * DIR is a module NAME.<path with / as .>, NAME DIR's base name unless
 * given. The module's view keeps the depth-0 slices of t.json: "outer". */
static void test_add_sql_package_makes_modules_of_a_directory(void) {
  g_autofree char *dir = setup();
  g_autofree char *pkgs = g_build_filename(dir, "pkgs", "mylib", "util", NULL);
  g_assert_cmpint(g_mkdir_with_parents(pkgs, 0755), ==, 0);
  g_free(e2e_write_file(pkgs, "top.sql",
                        "CREATE PERFETTO VIEW top_slice AS SELECT name FROM "
                        "slice WHERE depth = 0;\n",
                        0));
  const char *inputs[] = {"t.json", NULL};
  const char *by_base_name[] = {"--add-sql-package", "pkgs/mylib", NULL};
  e2e_result r = e2e_run_query(dir, inputs, by_base_name,
                               "INCLUDE PERFETTO MODULE mylib.util.top;"
                               "SELECT name FROM top_slice");
  g_assert_cmpstr(r.err, ==, "");
  g_assert_cmpint(r.exit_code, ==, 0);
  g_assert_cmpstr(r.out, ==, "\n\"name\"\n\"outer\"\n"); /* INCLUDE's line */
  e2e_result_clear(&r);
  /* @NAME renames the package: the base name no longer finds it. */
  const char *named[] = {"--add-sql-package", "pkgs/mylib@team", NULL};
  r = e2e_run_query(dir, inputs, named,
                    "INCLUDE PERFETTO MODULE team.util.top;"
                    "SELECT name FROM top_slice");
  g_assert_cmpint(r.exit_code, ==, 0);
  g_assert_cmpstr(r.out, ==, "\n\"name\"\n\"outer\"\n"); /* INCLUDE's line */
  e2e_result_clear(&r);
  r = e2e_run_query(dir, inputs, named, "INCLUDE PERFETTO MODULE mylib.util.top");
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, "unknown module mylib.util.top"));
  e2e_result_clear(&r);
  /* A directory that is not there is named in the error. */
  const char *missing[] = {"--add-sql-package", "pkgs/nope", NULL};
  r = e2e_run_query(dir, inputs, missing, "SELECT 1");
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_cmpstr(r.err, ==,
                  "tracemerge: SQL package nope: pkgs/nope is not a "
                  "directory\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/shell/the-prompt-runs-lines-and-dot-commands",
                  test_the_prompt_runs_lines_and_dot_commands);
  g_test_add_func("/e2e/shell/tables-lists-the-public-names",
                  test_tables_lists_the_public_names);
  g_test_add_func("/e2e/shell/without-sql-and-without-a-terminal-is-a-usage-error",
                  test_without_sql_and_without_a_terminal_is_a_usage_error);
  g_test_add_func("/e2e/shell/query-file-dash-reads-standard-input",
                  test_query_file_dash_reads_standard_input);
  g_test_add_func("/e2e/shell/a-script-prints-what-trace-processor-shell-prints",
                  test_a_script_prints_what_trace_processor_shell_prints);
  g_test_add_func("/e2e/shell/table-format-and-wide-columns",
                  test_table_format_and_wide_columns);
  g_test_add_func("/e2e/shell/the-prompt-on-a-terminal-edits-recalls-and-interrupts",
                  test_the_prompt_on_a_terminal_edits_recalls_and_interrupts);
  g_test_add_func("/e2e/shell/add-sql-package-makes-modules-of-a-directory",
                  test_add_sql_package_makes_modules_of_a_directory);
  return g_test_run();
}
