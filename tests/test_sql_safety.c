/* Unit tests of the connection hardening (sql_connection.c) through the
 * SQL surface: each attack of issue 11 is a test, run on the same
 * connection a session uses. A refused statement must fail with a message
 * that says why, leave no file behind and leave the surface working. */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "sql/sql_connection.h"
#include "sql/sql_output.h"
#include "sql/sql_surface.h"

typedef struct fixture {
  tm_model *model;
  tm_sql_surface *surface;
  char *dir; /* a scratch directory: must stay empty */
} fixture;

/* One track with two slices: enough for the views to have rows. */
static tm_model *build_model(void) {
  tm_model *m = model_new();
  tm_track_row t = {.name = string_pool_intern_cstr(m->strings, "t"),
                    .parent_id = TM_NULL_ID,
                    .machine_id = TM_NULL_ID,
                    .track_group_id = TM_NULL_ID,
                    .event_type = TM_TRACK_SLICE,
                    .utid = TM_NULL_ID,
                    .upid = TM_NULL_ID,
                    .trace_id = TM_NULL_ID};
  tm_vec_push(&m->tracks, t);
  for (int i = 0; i < 2; i++) {
    model_add_slice(m, 100 * (i + 1), 10, 0, 0,
                    string_pool_intern_cstr(m->strings, "s"), 0, TM_NULL_ID, 0);
  }
  model_finalize(m);
  return m;
}

static void open_surface(fixture *f, const sql_connection_options *options) {
  GError *error = NULL;
  f->surface = sql_surface_new(f->model, options, &error);
  g_assert_no_error(error);
  g_assert_nonnull(f->surface);
}

static void fixture_set_up(fixture *f, gconstpointer data) {
  f->model = build_model();
  open_surface(f, data);
  f->dir = g_dir_make_tmp("tm-sql-safety-XXXXXX", NULL);
  g_assert_nonnull(f->dir);
}

static void fixture_tear_down(fixture *f, gconstpointer data) {
  (void)data;
  sql_surface_free(f->surface);
  model_free(f->model);
  g_assert_cmpint(g_rmdir(f->dir), ==, 0); /* fails if a file was made */
  g_free(f->dir);
}

static char *run(fixture *f, const char *sql, GError **error) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  bool ok = sql_surface_query(f->surface, sql, TM_FORMAT_CSV, out, error);
  fclose(out);
  if (!ok) {
    free(text);
    return NULL;
  }
  return text;
}

static void assert_prints(fixture *f, const char *sql, const char *expected) {
  GError *error = NULL;
  char *text = run(f, sql, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(text, ==, expected);
  free(text);
}

/* `sql` fails with a message containing `reason`. */
static void assert_refused(fixture *f, const char *sql, const char *reason) {
  GError *error = NULL;
  char *text = run(f, sql, &error);
  if (text)
    g_error("'%s' succeeded and printed:\n%s", sql, text);
  g_assert_nonnull(error);
  if (!strstr(error->message, reason))
    g_error("'%s' failed with '%s', which does not say '%s'", sql,
            error->message, reason);
  g_error_free(error);
}

/* The model is intact: both slices still read through the view. */
static void assert_model_intact(fixture *f) {
  assert_prints(f, "SELECT count(*) AS n, sum(ts) AS ts FROM slice",
                "\"n\",\"ts\"\n2,300\n");
}

static char *scratch(fixture *f, const char *name) {
  return g_build_filename(f->dir, name, NULL);
}

/* ---- code pointers ---- */

static void test_fts3_tokenizer_with_a_pointer_is_refused(fixture *f,
                                                          gconstpointer d) {
  (void)d;
  /* The attack: install a tokenizer whose methods live at 0x4141..., then
   * make FTS3 call it. Refused at the first step; the FTS3 table that
   * follows uses the real "simple" tokenizer. */
  assert_refused(f, "SELECT fts3_tokenizer('simple', x'4141414141414141')",
                 "fts3_tokenizer() is refused");
  assert_prints(f,
                "CREATE VIRTUAL TABLE temp.f USING fts3(x, tokenize=simple);"
                "INSERT INTO f VALUES ('hello world');"
                "SELECT count(*) AS n FROM f WHERE f MATCH 'hello'",
                "\n\n\"n\"\n1\n"); /* an empty line per earlier statement */
  /* A view (or a temp trigger) does not launder the call. */
  assert_refused(f,
                 "CREATE TEMP VIEW launder AS SELECT fts3_tokenizer('simple', "
                 "x'4141414141414141') AS p; SELECT * FROM launder",
                 "fts3_tokenizer() is refused");
  assert_model_intact(f);
}

static void test_fts3_tokenizer_does_not_print_an_address(fixture *f,
                                                          gconstpointer d) {
  (void)d;
  assert_refused(f, "SELECT hex(fts3_tokenizer('simple'))",
                 "fts3_tokenizer() is refused");
  assert_refused(f, "SELECT quote(FTS3_TOKENIZER('porter'))",
                 "fts3_tokenizer() is refused");
}

static void test_the_connection_settings_are_on(fixture *f,
                                                gconstpointer d) {
  (void)d;
  sqlite3 *db = sql_surface_borrow_db(f->surface);
  static const struct {
    int op;
    int expected;
  } settings[] = {
      {SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0},
      {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0},
      {SQLITE_DBCONFIG_DEFENSIVE, 1},
      {SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(settings); i++) {
    int value = -1;
    g_assert_cmpint(sqlite3_db_config(db, settings[i].op, -1, &value), ==,
                    SQLITE_OK);
    g_assert_cmpint(value, ==, settings[i].expected);
  }
  g_assert_cmpint(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1), ==,
                  (int)SQL_CONNECTION_DEFAULT_MAX_VALUE_BYTES);
  /* Temporary tables, sorters and DISTINCT sets stay in memory (2). */
  assert_prints(f, "PRAGMA temp_store", "\"temp_store\"\n2\n");

  /* A file connection (what `import -o` writes through) gets the same. */
  char *path = scratch(f, "file.sqlite");
  GError *error = NULL;
  sql_connection *file =
      sql_connection_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                          NULL, NULL, &error);
  g_assert_no_error(error);
  sqlite3 *fdb = sql_connection_borrow_db(file);
  for (size_t i = 0; i < G_N_ELEMENTS(settings); i++) {
    int value = -1;
    sqlite3_db_config(fdb, settings[i].op, -1, &value);
    g_assert_cmpint(value, ==, settings[i].expected);
  }
  sql_connection_close(file);
  g_unlink(path);
  g_free(path);
}

static void test_load_extension_is_refused(fixture *f, gconstpointer d) {
  (void)d;
  assert_refused(f, "SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')",
                 "load_extension() is refused");
}

/* ---- files ---- */

static void test_attach_and_create_table_write_no_file(fixture *f,
                                                       gconstpointer d) {
  (void)d;
  char *path = scratch(f, "x.db");
  char *sql = g_strdup_printf("ATTACH '%s' AS x; CREATE TABLE x.t(a)", path);
  assert_refused(f, sql, "ATTACH is refused");
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  g_free(sql);
  /* Nothing is attached: a DETACH is refused as such. */
  assert_refused(f, "DETACH main", "DETACH is refused");
  assert_model_intact(f);
  g_free(path);
}

static void test_attach_of_a_uri_with_mode_rwc_is_refused(fixture *f,
                                                          gconstpointer d) {
  (void)d;
  char *path = scratch(f, "z.db");
  char *sql = g_strdup_printf("ATTACH 'file:%s?mode=rwc' AS z", path);
  assert_refused(f, sql, "ATTACH is refused");
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  g_free(sql);
  g_free(path);
}

static void test_vacuum_into_writes_no_file(fixture *f, gconstpointer d) {
  (void)d;
  char *path = scratch(f, "y.db");
  char *sql = g_strdup_printf("VACUUM INTO '%s'", path);
  assert_refused(f, sql, "VACUUM INTO is refused");
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  g_free(sql);
  g_free(path);
  /* Plain VACUUM touches no file of the user's: it still works. */
  assert_prints(f, "VACUUM", "");
  assert_model_intact(f);
}

static void test_allow_attach_lets_a_query_attach_but_not_vacuum_into(
    fixture *f, gconstpointer d) {
  (void)d;
  sql_surface_free(f->surface);
  sql_connection_options options = {.allow_attach = true};
  open_surface(f, &options);
  char *path = scratch(f, "x.db");
  char *sql = g_strdup_printf("ATTACH '%s' AS x; CREATE TABLE x.t(a);"
                              "INSERT INTO x.t VALUES (7); SELECT a FROM x.t",
                              path);
  assert_prints(f, sql, "\n\n\n\"a\"\n7\n");
  assert_prints(f, "DETACH x", "");
  g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
  g_free(sql);
  char *into = scratch(f, "y.db");
  sql = g_strdup_printf("VACUUM INTO '%s'", into);
  assert_refused(f, sql, "VACUUM INTO is refused");
  g_assert_false(g_file_test(into, G_FILE_TEST_EXISTS));
  g_free(sql);
  g_free(into);
  g_assert_cmpint(g_unlink(path), ==, 0);
  g_free(path);
}

/* ---- the model's schema ---- */

static void test_the_model_cannot_be_dropped_or_changed(fixture *f,
                                                        gconstpointer d) {
  (void)d;
  /* SQLite itself refuses writes to a view or to our read-only virtual
   * tables; the authorizer refuses the rest. */
  static const char *const attacks[][2] = {
      {"DROP VIEW slice", "not authorized"},
      {"DROP VIEW IF EXISTS SLICE", "not authorized"},
      {"DROP TABLE __intrinsic_slice", "not authorized"},
      {"DROP VIEW trace_bounds", "not authorized"},
      {"ALTER TABLE __intrinsic_slice RENAME TO old", "not authorized"},
      {"DELETE FROM slice", "cannot modify slice because it is a view"},
      {"INSERT INTO slice(ts) VALUES (1)", "INSERT into slice is refused"},
      {"UPDATE __intrinsic_slice SET ts = 0", "may not be modified"},
      {"CREATE TEMP TRIGGER t INSTEAD OF DELETE ON slice "
       "BEGIN SELECT 1; END",
       "not authorized"},
      {"CREATE TEMP VIEW slice AS SELECT 1 AS ts", "not authorized"},
      {"CREATE TEMP TABLE thread(utid)", "not authorized"},
      {"CREATE VIRTUAL TABLE temp.x USING tm_rows(__intrinsic_slice)",
       "not authorized"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(attacks); i++) {
    assert_refused(f, attacks[i][0], attacks[i][1]);
    assert_model_intact(f);
  }
  assert_refused(f, "DROP VIEW slice",
                 "DROP of slice is refused: it is part of the trace's schema");
  assert_refused(f, "PRAGMA writable_schema = ON", "PRAGMA writable_schema");
  assert_refused(f, "PRAGMA temp_store_directory = '/tmp'",
                 "PRAGMA temp_store_directory");
}

static void test_queries_may_create_and_drop_their_own_objects(
    fixture *f, gconstpointer d) {
  (void)d;
  assert_prints(f,
                "CREATE TABLE mine AS SELECT id, ts FROM slice;"
                "CREATE VIEW mine_late AS SELECT * FROM mine WHERE ts > 150;"
                "CREATE TEMP TABLE scratch(x);"
                "INSERT INTO scratch VALUES (1), (2);"
                "UPDATE scratch SET x = x * 10;"
                "CREATE INDEX mine_ts ON mine(ts);"
                "CREATE TEMP TRIGGER t AFTER INSERT ON scratch "
                "BEGIN INSERT INTO mine VALUES (99, 999); END;"
                "INSERT INTO scratch VALUES (3);"
                "SELECT (SELECT group_concat(x) FROM scratch) AS x, "
                "(SELECT group_concat(ts) FROM mine_late) AS late",
                "\n\n\n\n\n\n\n\n" /* 8 earlier statements */
                "\"x\",\"late\"\n\"10,20,3\",\"200,999\"\n");
  assert_prints(f,
                "DROP VIEW mine_late; DROP TABLE mine; DROP TABLE scratch;"
                "SELECT count(*) AS n FROM sqlite_temp_master",
                "\n\n\n\"n\"\n0\n");
  assert_model_intact(f);
}

/* ---- time and size ---- */

static void test_a_huge_printf_is_refused_quickly(fixture *f,
                                                  gconstpointer d) {
  (void)d;
  gint64 start = g_get_monotonic_time();
  /* SQLite 3.40's own printf() spins for minutes here (one append per
   * repetition, limit or not); ours refuses before it starts. */
  assert_refused(f, "SELECT length(printf('%.*c', 2000000000, 'x'))",
                 "string or blob too big");
  assert_refused(f, "SELECT format('%.2000000000c%.2000000000c', 'x', 'y')",
                 "string or blob too big");
  assert_refused(f, "SELECT length(zeroblob(1000000000))",
                 "string or blob too big");
  /* Just under the limit is fine. */
  assert_prints(f, "SELECT length(printf('%.*c', 1000000, 'x')) AS n",
                "\"n\"\n1000000\n");
  /* Generous: the point is "not minutes". */
  g_assert_cmpint(g_get_monotonic_time() - start, <, 10 * G_USEC_PER_SEC);
}

/* Our printf() prints what SQLite's prints: every case compared with a
 * plain connection's built-in. */
static void test_printf_prints_what_the_builtin_prints(fixture *f,
                                                       gconstpointer d) {
  (void)d;
  static const char *const calls[] = {
      "printf('%d|%5d|%-5d|%05d|%+d|% d|%,d', 42, 42, 42, 42, 42, 42, "
      "1234567)",
      "printf('%lld %llu %lx %X %o %u', -1, -1, 255, 255, 8, -1)",
      "printf('%i|%r|%r|%r|%r', 7, 1, 2, 3, 11)",
      "printf('%p|%#x|%#o', 255, 255, 8)",
      "printf('%f|%.2f|%10.3f|%-10.1e|%E|%g|%G|%!.3g|%!f', 3.14159, "
      "3.14159, -2.5, 12345.678, 0.000123, 1e20, 1e-20, 100.0, 2.0)",
      "printf('%s|%10s|%-10s|%.2s|%!.2s|%z', 'abc', 'abc', 'abc', 'abc', "
      "'héllo', 'zz')",
      "printf('%q|%Q|%Q|%w', 'it''s', 'it''s', NULL, 'a\"b')",
      "printf('%c|%.3c|%5.3c|%-5c|%!5c|%c|%c', 'héllo', 'é', 'x', 'y', 'é', "
      "'', NULL)",
      "printf('%*d|%-*d|%.*f|%*.*s|%*c', 4, 1, -4, 2, 2, 3.14159, 6, 2, "
      "'abcdef', -3, 'q')",
      "printf('%d %d %s', 1)",
      "printf('a%yb%d', 1, 2)",
      "printf('%l5d|', 3)",
      "printf('%5lld|%5ld|', 3, 4)",
      "printf('x%ny%%z', 1)",
      "printf('%T x', 1)",
      "printf('%')",
      "printf('')",
      "printf(NULL, 1)",
      "printf()",
      "printf('100%% %s', 'sure')",
      "format('%s=%d', 'n', 3)",
      "printf('%s %d %f', x'41', '12abc', '2.5e1')",
      "printf('%.*c', 3, 'ab')",
      "printf('%.0c|%.1c|%.*c', 'a', 'b', -2, 'c')",
  };
  sqlite3 *plain = NULL;
  g_assert_cmpint(sqlite3_open(":memory:", &plain), ==, SQLITE_OK);
  sqlite3 *ours = sql_surface_borrow_db(f->surface);
  for (size_t i = 0; i < G_N_ELEMENTS(calls); i++) {
    char *sql = g_strdup_printf("SELECT quote(%s), hex(%s)", calls[i],
                                calls[i]);
    sqlite3_stmt *a = NULL, *b = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(plain, sql, -1, &a, NULL), ==,
                    SQLITE_OK);
    g_assert_cmpint(sqlite3_prepare_v2(ours, sql, -1, &b, NULL), ==,
                    SQLITE_OK);
    g_assert_cmpint(sqlite3_step(a), ==, SQLITE_ROW);
    g_assert_cmpint(sqlite3_step(b), ==, SQLITE_ROW);
    for (int col = 0; col < 2; col++) {
      const char *expected = (const char *)sqlite3_column_text(a, col);
      const char *actual = (const char *)sqlite3_column_text(b, col);
      if (g_strcmp0(expected, actual) != 0)
        g_error("%s: built-in %s, ours %s", calls[i], expected, actual);
    }
    sqlite3_finalize(a);
    sqlite3_finalize(b);
    g_free(sql);
  }
  sqlite3_close(plain);
}

static void test_an_unbounded_recursive_query_stops_at_the_timeout(
    fixture *f, gconstpointer d) {
  (void)d;
  sql_surface_set_timeout(f->surface, 0.3);
  gint64 start = g_get_monotonic_time();
  GError *error = NULL;
  char *text = run(f,
                   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                   "SELECT x + 1 FROM c) SELECT count(*) FROM c",
                   &error);
  gint64 elapsed = g_get_monotonic_time() - start;
  g_assert_null(text);
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_INTERRUPTED);
  g_assert_cmpstr(error->message, ==,
                  "query stopped: it ran longer than the 0.3 s timeout");
  g_error_free(error);
  g_assert_cmpint(elapsed, >=, 300000);
  g_assert_cmpint(elapsed, <, 5 * G_USEC_PER_SEC);
  /* The timeout is per call: the next query has its own 0.3 s. */
  assert_model_intact(f);
}

typedef struct interrupter {
  tm_sql_surface *surface;
  gint64 delay_us;
} interrupter;

static gpointer interrupt_later(gpointer data) {
  interrupter *it = data;
  g_usleep((gulong)it->delay_us);
  sql_surface_interrupt(it->surface);
  return NULL;
}

static void test_an_interrupt_stops_the_running_statement(fixture *f,
                                                          gconstpointer d) {
  (void)d;
  interrupter it = {f->surface, 200000};
  GThread *thread = g_thread_new("interrupter", interrupt_later, &it);
  GError *error = NULL;
  char *text = run(f,
                   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                   "SELECT x + 1 FROM c) SELECT max(x) FROM c",
                   &error);
  g_thread_join(thread);
  g_assert_null(text);
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_INTERRUPTED);
  g_assert_cmpstr(error->message, ==, "query interrupted");
  g_error_free(error);
  /* An interrupt between queries does not stop the next one. */
  sql_surface_interrupt(f->surface);
  assert_model_intact(f);
}

#define ADD(path, fn, options)                                               \
  g_test_add(path, fixture, options, fixture_set_up, fn, fixture_tear_down)

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  ADD("/sql-safety/fts3-tokenizer-with-a-pointer-is-refused",
      test_fts3_tokenizer_with_a_pointer_is_refused, NULL);
  ADD("/sql-safety/fts3-tokenizer-does-not-print-an-address",
      test_fts3_tokenizer_does_not_print_an_address, NULL);
  ADD("/sql-safety/the-connection-settings-are-on",
      test_the_connection_settings_are_on, NULL);
  ADD("/sql-safety/load-extension-is-refused", test_load_extension_is_refused,
      NULL);
  ADD("/sql-safety/attach-and-create-table-write-no-file",
      test_attach_and_create_table_write_no_file, NULL);
  ADD("/sql-safety/attach-of-a-uri-with-mode-rwc-is-refused",
      test_attach_of_a_uri_with_mode_rwc_is_refused, NULL);
  ADD("/sql-safety/vacuum-into-writes-no-file",
      test_vacuum_into_writes_no_file, NULL);
  ADD("/sql-safety/allow-attach-lets-a-query-attach-but-not-vacuum-into",
      test_allow_attach_lets_a_query_attach_but_not_vacuum_into, NULL);
  ADD("/sql-safety/the-model-cannot-be-dropped-or-changed",
      test_the_model_cannot_be_dropped_or_changed, NULL);
  ADD("/sql-safety/queries-may-create-and-drop-their-own-objects",
      test_queries_may_create_and_drop_their_own_objects, NULL);
  ADD("/sql-safety/a-huge-printf-is-refused-quickly",
      test_a_huge_printf_is_refused_quickly, NULL);
  ADD("/sql-safety/printf-prints-what-the-builtin-prints",
      test_printf_prints_what_the_builtin_prints, NULL);
  ADD("/sql-safety/an-unbounded-recursive-query-stops-at-the-timeout",
      test_an_unbounded_recursive_query_stops_at_the_timeout, NULL);
  ADD("/sql-safety/an-interrupt-stops-the-running-statement",
      test_an_interrupt_stops_the_running_statement, NULL);
  return g_test_run();
}
