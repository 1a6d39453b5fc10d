/* End-to-end tests of issue 11's SQL and output cases, through the CLI:
 * each attack on the query text fails with exit status 1 and one line
 * saying why, writes no file and crashes nothing; Ctrl-C and --timeout
 * stop a query that would never end; CSV, TSV and JSON output of hostile
 * names parse back to the names; `import -o` writes atomically and never
 * clobbers by accident. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "e2e_support.h"

/* Slice names an attacker would choose: each breaks a naive printer. */
static const char *const hostile_names[] = {
    "a\",\"b",                 /* ends a CSV field and opens another */
    "line1\nline2",            /* a new CSV/TSV record */
    "cr\r\nlf",                /* CRLF inside a value */
    "quote\"inside",
    "comma,inside",
    "tab\tand\\backslash",     /* TSV's separator and escape */
    "\"",
    "\",\"x\"\n\"1\",\"2",     /* a whole fake row */
    "=HYPERLINK(\"x\")",
    "ünïcödé ✓",
};

static void json_escape_into(GString *out, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '"': g_string_append(out, "\\\""); break;
    case '\\': g_string_append(out, "\\\\"); break;
    case '\n': g_string_append(out, "\\n"); break;
    case '\r': g_string_append(out, "\\r"); break;
    case '\t': g_string_append(out, "\\t"); break;
    default: g_string_append_c(out, *s); break;
    }
  }
}

/* A Chrome JSON trace with one slice per hostile name, in order, 1 µs
 * apart. */
static char *write_hostile_trace(const char *dir) {
  GString *json = g_string_new("{\"traceEvents\":[");
  for (size_t i = 0; i < G_N_ELEMENTS(hostile_names); i++) {
    g_string_append_printf(json,
                           "%s{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%zu,"
                           "\"dur\":1,\"name\":\"",
                           i ? "," : "", 10 + 10 * i);
    json_escape_into(json, hostile_names[i]);
    g_string_append(json, "\"}");
  }
  g_string_append(json, "]}\n");
  char *path = e2e_write_file(dir, "hostile.json", json->str, json->len);
  g_string_free(json, TRUE);
  return path;
}

static e2e_result query(const char *dir, const char *sql,
                        const char *const *extra) {
  GPtrArray *args = g_ptr_array_new();
  g_ptr_array_add(args, "query");
  g_ptr_array_add(args, "hostile.json");
  g_ptr_array_add(args, "--sql");
  g_ptr_array_add(args, (char *)sql);
  for (size_t i = 0; extra && extra[i]; i++)
    g_ptr_array_add(args, (char *)extra[i]);
  g_ptr_array_add(args, NULL);
  e2e_result r = e2e_run_in(dir, (const char *const *)args->pdata);
  g_ptr_array_free(args, TRUE);
  return r;
}

/* The query fails: exit 1, nothing but one stderr line containing
 * `reason`. */
static void assert_query_refused(const char *dir, const char *sql,
                                 const char *reason) {
  e2e_result r = query(dir, sql, NULL);
  const char *newline = strchr(r.err, '\n');
  if (r.exit_code != 1 || !g_str_has_prefix(r.err, "tracemerge: ") ||
      !strstr(r.err, reason) || !newline || newline[1] != '\0')
    g_error("%s: expected exit 1 and one line with \"%s\"; got exit %d: %s",
            sql, reason, r.exit_code, r.err);
  e2e_result_clear(&r);
}

/* Files in `dir` (attacks must not add any). */
static guint count_files(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  guint n = 0;
  while (g_dir_read_name(d))
    n++;
  g_dir_close(d);
  return n;
}

/* ---- attacks on the query text ---- */

static void test_each_attack_fails_cleanly_and_writes_nothing(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  g_assert_cmpuint(count_files(dir), ==, 1);
  static const char *const attacks[][2] = {
      /* Code execution: the pointer would be called by the FTS3 table. */
      {"SELECT fts3_tokenizer('simple', x'4141414141414141');"
       "CREATE VIRTUAL TABLE temp.f USING fts3(x, tokenize=simple);"
       "INSERT INTO f VALUES ('boom')",
       "fts3_tokenizer() is refused"},
      /* An address leak. */
      {"SELECT hex(fts3_tokenizer('simple'))", "fts3_tokenizer() is refused"},
      {"ATTACH 'x.db' AS x; CREATE TABLE x.t(a)", "ATTACH is refused"},
      {"VACUUM INTO 'y.db'", "VACUUM INTO is refused"},
      {"ATTACH 'file:z.db?mode=rwc' AS z", "ATTACH is refused"},
      {"DROP VIEW slice", "DROP of slice is refused"},
      {"SELECT load_extension('libc.so.6')", "load_extension() is refused"},
      {"SELECT length(printf('%.*c', 2000000000, 'x'))",
       "string or blob too big"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(attacks); i++) {
    assert_query_refused(dir, attacks[i][0], attacks[i][1]);
    g_assert_cmpuint(count_files(dir), ==, 1);
  }
  /* After all that, a fresh query sees every slice. */
  const char *inputs[] = {"hostile.json", NULL};
  g_autofree char *out = e2e_query_in(dir, inputs,
                                      "SELECT count(*) AS n FROM slice");
  g_autofree char *expected =
      g_strdup_printf("\"n\"\n%zu\n", G_N_ELEMENTS(hostile_names));
  e2e_assert_text(out, expected);
  e2e_cleanup(dir);
}

static void test_allow_attach_lets_a_query_write_an_attached_file(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  const char *extra[] = {"--allow-attach", NULL};
  e2e_result r = query(dir,
                       "ATTACH 'mine.db' AS mine;"
                       "CREATE TABLE mine.names AS SELECT name FROM slice;"
                       "SELECT count(*) AS n FROM mine.names",
                       extra);
  g_assert_cmpstr(r.err, ==, "");
  g_assert_cmpint(r.exit_code, ==, 0);
  /* Two earlier statements: two empty lines first. */
  g_autofree char *expected =
      g_strdup_printf("\n\n\"n\"\n%zu\n", G_N_ELEMENTS(hostile_names));
  e2e_assert_text(r.out, expected);
  e2e_result_clear(&r);
  g_autofree char *mine = g_build_filename(dir, "mine.db", NULL);
  g_assert_true(g_file_test(mine, G_FILE_TEST_IS_REGULAR));
  e2e_cleanup(dir);
}

#define ENDLESS_QUERY                                                       \
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "        \
  "SELECT count(*) AS n FROM c"

static void test_timeout_stops_an_endless_query_with_the_reason(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  const char *extra[] = {"--timeout", "0.5", NULL};
  gint64 start = g_get_monotonic_time();
  e2e_result r = query(dir, ENDLESS_QUERY, extra);
  gint64 elapsed = g_get_monotonic_time() - start;
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_cmpstr(r.err, ==,
                  "tracemerge: query stopped: it ran longer than the 0.5 s "
                  "timeout\n");
  /* The CSV header was printed before the statement ran; no row. */
  g_assert_cmpstr(r.out, ==, "\"n\"\n");
  e2e_result_clear(&r);
  /* Generous (an ASan build on a busy machine): "not forever". */
  g_assert_cmpint(elapsed, <, 60 * G_USEC_PER_SEC);

  const char *bad[] = {"--timeout", "-1", NULL};
  r = query(dir, "SELECT 1", bad);
  g_assert_cmpint(r.exit_code, ==, 2);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* Whether `pid` has a handler for SIGINT (Linux: SigCgt in
 * /proc/PID/status), i.e. its query is running. */
static bool catches_sigint(GPid pid) {
  g_autofree char *path = g_strdup_printf("/proc/%d/status", (int)pid);
  g_autofree char *status = NULL;
  if (!g_file_get_contents(path, &status, NULL, NULL))
    return false;
  const char *line = strstr(status, "\nSigCgt:");
  if (!line)
    return false;
  guint64 mask = g_ascii_strtoull(line + strlen("\nSigCgt:"), NULL, 16);
  return (mask >> (SIGINT - 1)) & 1;
}

static void test_ctrl_c_stops_the_running_query_with_exit_status_1(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  const char *argv[] = {g_getenv("TRACEMERGE_CLI"), "query", "hostile.json",
                        "--sql", ENDLESS_QUERY, NULL};
  GPid pid;
  int out_fd, err_fd;
  GError *error = NULL;
  g_assert_true(g_spawn_async_with_pipes(
      dir, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
      NULL, &out_fd, &err_fd, &error));
  g_assert_no_error(error);
  /* Wait until the query runs (its Ctrl-C handler is installed then). */
  gint64 give_up = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  while (!catches_sigint(pid)) {
    g_assert_cmpint(g_get_monotonic_time(), <, give_up);
    g_usleep(10000);
  }
  g_usleep(100000); /* well inside the endless statement */
  g_assert_cmpint(kill(pid, SIGINT), ==, 0);
  int wait_status = 0;
  g_assert_cmpint(waitpid(pid, &wait_status, 0), ==, pid);
  g_spawn_close_pid(pid);
  char err[512] = {0};
  ssize_t n = read(err_fd, err, sizeof err - 1);
  g_assert_cmpint(n, >, 0);
  close(out_fd);
  close(err_fd);
  /* Exited (not killed by the signal), status 1, with the reason. */
  g_assert_true(WIFEXITED(wait_status));
  g_assert_cmpint(WEXITSTATUS(wait_status), ==, 1);
  g_assert_cmpstr(err, ==, "tracemerge: query interrupted\n");
  e2e_cleanup(dir);
}

/* ---- output of hostile names ---- */

/* RFC 4180 records of `text` (LF or CRLF line ends outside quotes). */
static GPtrArray *parse_csv(const char *text) {
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  GPtrArray *fields = g_ptr_array_new();
  GString *field = g_string_new(NULL);
  const char *p = text;
  while (*p) {
    if (*p == '"') {
      for (p++;; p++) {
        g_assert_true(*p != '\0'); /* an unterminated quote */
        if (*p == '"' && p[1] == '"') {
          g_string_append_c(field, '"');
          p++;
        } else if (*p == '"') {
          p++;
          break;
        } else {
          g_string_append_c(field, *p);
        }
      }
      /* After a closing quote only a separator or a line end may come. */
      g_assert_true(*p == ',' || *p == '\n' || *p == '\r' || *p == '\0');
    } else {
      while (*p && *p != ',' && *p != '\n' && *p != '\r')
        g_string_append_c(field, *p++);
    }
    g_ptr_array_add(fields, g_strdup(field->str));
    g_string_truncate(field, 0);
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == '\r')
      p++;
    if (*p == '\n')
      p++;
    g_ptr_array_add(fields, NULL);
    g_ptr_array_add(rows, g_ptr_array_free(fields, FALSE));
    fields = g_ptr_array_new();
  }
  g_ptr_array_free(fields, TRUE);
  g_string_free(field, TRUE);
  return rows;
}

static void test_csv_of_hostile_names_parses_back_to_the_names(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  const char *inputs[] = {"hostile.json", NULL};
  g_autofree char *out = e2e_query_in(
      dir, inputs,
      "SELECT name AS \"x\"\",y\", 7 AS n FROM slice ORDER BY ts");
  GPtrArray *rows = parse_csv(out);
  g_assert_cmpuint(rows->len, ==, 1 + G_N_ELEMENTS(hostile_names));
  char **header = rows->pdata[0];
  g_assert_cmpuint(g_strv_length(header), ==, 2);
  g_assert_cmpstr(header[0], ==, "x\",y");
  g_assert_cmpstr(header[1], ==, "n");
  for (size_t i = 0; i < G_N_ELEMENTS(hostile_names); i++) {
    char **row = rows->pdata[i + 1];
    g_assert_cmpuint(g_strv_length(row), ==, 2);
    g_assert_cmpstr(row[0], ==, hostile_names[i]);
    g_assert_cmpstr(row[1], ==, "7");
  }
  g_ptr_array_free(rows, TRUE);
  e2e_cleanup(dir);
}

static char *tsv_unescape(const char *s) {
  GString *out = g_string_new(NULL);
  for (; *s; s++) {
    if (*s != '\\') {
      g_string_append_c(out, *s);
      continue;
    }
    s++;
    switch (*s) {
    case 't': g_string_append_c(out, '\t'); break;
    case 'n': g_string_append_c(out, '\n'); break;
    case 'r': g_string_append_c(out, '\r'); break;
    case '\\': g_string_append_c(out, '\\'); break;
    default: g_error("bad TSV escape \\%c", *s);
    }
  }
  return g_string_free(out, FALSE);
}

static void test_tsv_of_hostile_names_parses_back_to_the_names(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  const char *extra[] = {"--format", "tsv", NULL};
  e2e_result r = query(dir,
                       "SELECT name AS \"a\tb\", 7 AS n FROM slice ORDER BY ts",
                       extra);
  g_assert_cmpint(r.exit_code, ==, 0);
  /* One line per record: no raw newline or tab can be in a field. */
  g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), ==,
                   2 + G_N_ELEMENTS(hostile_names)); /* + the empty tail */
  g_assert_cmpstr(lines[0], ==, "a\\tb\tn");
  for (size_t i = 0; i < G_N_ELEMENTS(hostile_names); i++) {
    g_auto(GStrv) fields = g_strsplit(lines[i + 1], "\t", -1);
    g_assert_cmpuint(g_strv_length(fields), ==, 2);
    g_autofree char *name = tsv_unescape(fields[0]);
    g_assert_cmpstr(name, ==, hostile_names[i]);
    g_assert_cmpstr(fields[1], ==, "7");
  }
  g_assert_cmpstr(lines[1 + G_N_ELEMENTS(hostile_names)], ==, "");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

static void test_json_of_hostile_names_parses_back_to_the_names(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  const char *extra[] = {"--format", "json", NULL};
  e2e_result r = query(dir,
                       "SELECT name AS \"k\"\"\\\", 7 AS n FROM slice "
                       "ORDER BY ts",
                       extra);
  g_assert_cmpint(r.exit_code, ==, 0);
  char parse_error[256];
  yajl_val doc = yajl_tree_parse(r.out, parse_error, sizeof parse_error);
  if (!doc)
    g_error("JSON output does not parse: %s\n%s", parse_error, r.out);
  g_assert_true(YAJL_IS_ARRAY(doc));
  g_assert_cmpuint(YAJL_GET_ARRAY(doc)->len, ==, G_N_ELEMENTS(hostile_names));
  for (size_t i = 0; i < G_N_ELEMENTS(hostile_names); i++) {
    yajl_val row = YAJL_GET_ARRAY(doc)->values[i];
    g_assert_true(YAJL_IS_OBJECT(row));
    g_assert_cmpuint(YAJL_GET_OBJECT(row)->len, ==, 2);
    g_assert_cmpstr(YAJL_GET_OBJECT(row)->keys[0], ==, "k\"\\");
    g_assert_cmpstr(YAJL_GET_STRING(YAJL_GET_OBJECT(row)->values[0]), ==,
                    hostile_names[i]);
  }
  yajl_tree_free(doc);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* ---- import -o ---- */

static e2e_result import_to(const char *dir, const char *input,
                            const char *output, bool force) {
  const char *args[] = {"import", input, "-o", output,
                        force ? "--force" : NULL, NULL};
  return e2e_run_in(dir, args);
}

static char *read_file(const char *dir, const char *name) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  char *content = NULL;
  g_assert_true(g_file_get_contents(path, &content, NULL, NULL));
  return content;
}

/* The number of slices in the database `name` of `dir`, read by plain
 * SQLite. */
static int64_t saved_slices(const char *dir, const char *name) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), ==,
                  SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(db, "SELECT count(*) FROM slice", -1,
                                     &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
  int64_t n = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return n;
}

static void test_import_keeps_an_existing_file_without_force(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  g_autofree char *old = e2e_write_file(dir, "out.sqlite", "precious", 0);
  e2e_result r = import_to(dir, "hostile.json", "out.sqlite", false);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_cmpstr(r.err, ==,
                  "tracemerge: out.sqlite exists (replace it with --force)\n");
  e2e_result_clear(&r);
  g_autofree char *content = read_file(dir, "out.sqlite");
  g_assert_cmpstr(content, ==, "precious");
  g_assert_cmpuint(count_files(dir), ==, 2);

  /* --force replaces it, and leaves no temporary file. */
  r = import_to(dir, "hostile.json", "out.sqlite", true);
  g_assert_cmpint(r.exit_code, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  e2e_result_clear(&r);
  g_assert_cmpint(saved_slices(dir, "out.sqlite"), ==,
                  (int64_t)G_N_ELEMENTS(hostile_names));
  g_assert_cmpuint(count_files(dir), ==, 2);
  e2e_cleanup(dir);
}

static void test_import_refuses_names_that_write_no_file(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  static const char *const names[][2] = {
      {":memory:", "is an in-memory database, not a file"},
      {"", "an empty name is an in-memory database"},
      {"file:out.sqlite?mode=rwc", "is an SQLite URI"},
      {"file:out.sqlite", "is an SQLite URI"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    e2e_result r = import_to(dir, "hostile.json", names[i][0], true);
    if (r.exit_code != 1 || !strstr(r.err, names[i][1]))
      g_error("-o '%s': exit %d, %s", names[i][0], r.exit_code, r.err);
    e2e_result_clear(&r);
    g_assert_cmpuint(count_files(dir), ==, 1);
  }
  e2e_cleanup(dir);
}

static void test_a_failed_import_never_replaces_the_output(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *trace = write_hostile_trace(dir);
  g_autofree char *old = e2e_write_file(dir, "out.sqlite", "precious", 0);
  /* A missing input fails the import; even --force keeps the old file. */
  const char *args[] = {"import", "hostile.json", "missing.json", "-o",
                        "out.sqlite", "--force", NULL};
  e2e_result r = e2e_run_in(dir, args);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, "missing.json"));
  g_assert_nonnull(strstr(r.err, "tracemerge: out.sqlite left as it was: a "
                                 "failed import does not replace it\n"));
  e2e_result_clear(&r);
  g_autofree char *content = read_file(dir, "out.sqlite");
  g_assert_cmpstr(content, ==, "precious");
  g_assert_cmpuint(count_files(dir), ==, 2);

  /* Under a new name the partial result is saved (exit status still 1). */
  const char *args2[] = {"import", "hostile.json", "missing.json", "-o",
                         "partial.sqlite", NULL};
  r = e2e_run_in(dir, args2);
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_result_clear(&r);
  g_assert_cmpint(saved_slices(dir, "partial.sqlite"), ==,
                  (int64_t)G_N_ELEMENTS(hostile_names));
  g_assert_cmpuint(count_files(dir), ==, 3);
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/sql-safety/each-attack-fails-cleanly-and-writes-nothing",
                  test_each_attack_fails_cleanly_and_writes_nothing);
  g_test_add_func("/e2e/sql-safety/allow-attach-lets-a-query-write-an-attached-file",
                  test_allow_attach_lets_a_query_write_an_attached_file);
  g_test_add_func("/e2e/sql-safety/timeout-stops-an-endless-query-with-the-reason",
                  test_timeout_stops_an_endless_query_with_the_reason);
  g_test_add_func("/e2e/sql-safety/ctrl-c-stops-the-running-query-with-exit-status-1",
                  test_ctrl_c_stops_the_running_query_with_exit_status_1);
  g_test_add_func("/e2e/output/csv-of-hostile-names-parses-back-to-the-names",
                  test_csv_of_hostile_names_parses_back_to_the_names);
  g_test_add_func("/e2e/output/tsv-of-hostile-names-parses-back-to-the-names",
                  test_tsv_of_hostile_names_parses_back_to_the_names);
  g_test_add_func("/e2e/output/json-of-hostile-names-parses-back-to-the-names",
                  test_json_of_hostile_names_parses_back_to_the_names);
  g_test_add_func("/e2e/import/keeps-an-existing-file-without-force",
                  test_import_keeps_an_existing_file_without_force);
  g_test_add_func("/e2e/import/refuses-names-that-write-no-file",
                  test_import_refuses_names_that_write_no_file);
  g_test_add_func("/e2e/import/a-failed-import-never-replaces-the-output",
                  test_a_failed_import_never_replaces_the_output);
  return g_test_run();
}
