/* Unit tests of saving the SQL surface: a standalone file that plain
 * SQLite reads back, and the refusals (an existing file, a name that is
 * no file, an impossible path). Beside it: test_sql_surface_output.c and
 * test_sql_surface_tables.c. */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_surface_fixture.h"


/* ---- saving ---- */

static char *dump(sqlite3 *db, const char *sql) {
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), ==,
                  SQLITE_OK);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  GError *error = NULL;
  g_assert_true(sql_output_write_rows(stmt, TM_FORMAT_CSV, out, &error));
  g_assert_no_error(error);
  fclose(out);
  sqlite3_finalize(stmt);
  return text;
}

/* The names of `type` ('table', 'view', 'index') in a saved file. */
static char *saved_names_of_type(sqlite3 *db, const char *type) {
  char *sql = g_strdup_printf("SELECT group_concat(name, ' ') FROM "
                              "(SELECT name FROM sqlite_master "
                              "WHERE type = '%s' AND name NOT LIKE "
                              "'sqlite_%%' ORDER BY name)",
                              type);
  char *text = dump(db, sql);
  g_free(sql);
  return text;
}

/* Files left in `dir` (a save must leave no temporary behind). */
static guint count_files(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  guint n = 0;
  while (g_dir_read_name(d))
    n++;
  g_dir_close(d);
  return n;
}

static void test_save_writes_a_standalone_database(fixture *f,
                                                   gconstpointer data) {
  (void)data;
  char *dir = g_dir_make_tmp("tm-sql-XXXXXX", NULL);
  char *path = g_build_filename(dir, "out.sqlite", NULL);
  /* An existing file is replaced (when asked), not appended to. */
  g_assert_true(g_file_set_contents(path, "not a database", -1, NULL));
  GError *error = NULL;
  g_assert_true(sql_surface_save(f->surface, path, true, &error));
  g_assert_no_error(error);
  /* Saving twice replaces the first copy. */
  g_assert_true(sql_surface_save(f->surface, path, true, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(count_files(dir), ==, 1);

  sqlite3 *saved = NULL;
  g_assert_cmpint(sqlite3_open_v2(path, &saved, SQLITE_OPEN_READONLY, NULL),
                  ==, SQLITE_OK);
  /* Every public name of the live surface reads the same in the file
   * (the list is the live schema itself, so a new table is covered). */
  sqlite3 *live = sql_surface_borrow_db(f->surface);
  sqlite3_stmt *names = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(live,
                                     "SELECT name, type FROM sqlite_master "
                                     "ORDER BY name",
                                     -1, &names, NULL), ==, SQLITE_OK);
  size_t n_names = 0;
  while (sqlite3_step(names) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(names, 0);
    const char *live_type = (const char *)sqlite3_column_text(names, 1);
    n_names++;
    char *sql = g_strdup_printf("SELECT * FROM \"%s\"", name);
    char *expected = dump(live, sql);
    char *actual = dump(saved, sql);
    g_assert_cmpstr(actual, ==, expected);
    free(expected);
    free(actual);
    g_free(sql);
    /* Views stay views (no copy of aliased data); the model's virtual
     * tables become real tables. */
    sql = g_strdup_printf("SELECT type FROM sqlite_master WHERE name = '%s'",
                          name);
    char *kind = dump(saved, sql);
    g_assert_cmpstr(kind, ==,
                    strcmp(live_type, "view") == 0 ? "\"type\"\n\"view\"\n"
                                                   : "\"type\"\n\"table\"\n");
    free(kind);
    g_free(sql);
  }
  sqlite3_finalize(names);
  g_assert_cmpuint(n_names, >, 30);

  /* Ids are the rowid: lookups by utid, upid, id need no index. */
  char *pk = dump(saved, "SELECT name, pk FROM pragma_table_info("
                         "'__intrinsic_slice') WHERE pk > 0");
  g_assert_cmpstr(pk, ==, "\"name\",\"pk\"\n\"id\",1\n");
  free(pk);
  char *indexes = saved_names_of_type(saved, "index");
  g_assert_cmpstr(indexes, ==,
                  "\"group_concat(name, ' ')\"\n"
                  "\"__intrinsic_args_arg_set_id __intrinsic_counter_track_id_ts "
                  "__intrinsic_flow_slice_in __intrinsic_flow_slice_out "
                  "__intrinsic_sched_slice_utid __intrinsic_slice_parent_id "
                  "__intrinsic_slice_track_id_ts __intrinsic_slice_ts "
                  "__intrinsic_thread_state_utid __intrinsic_thread_upid "
                  "__intrinsic_track_upid __intrinsic_track_utid "
                  "stack_profile_callsite_parent_id\"\n");
  free(indexes);
  /* The common joins use them, through the public views. */
  static const char *const plans[][2] = {
      {"SELECT * FROM slice WHERE ts > 5", "__intrinsic_slice_ts"},
      {"SELECT * FROM slice WHERE track_id = 2 ORDER BY ts",
       "__intrinsic_slice_track_id_ts"},
      {"SELECT * FROM slices WHERE parent_id = 0",
       "__intrinsic_slice_parent_id"},
      {"SELECT * FROM args WHERE arg_set_id = 1",
       "__intrinsic_args_arg_set_id"},
      {"SELECT * FROM thread WHERE utid = 1", "INTEGER PRIMARY KEY"},
      {"SELECT * FROM process WHERE upid = 1", "INTEGER PRIMARY KEY"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(plans); i++) {
    char *sql = g_strdup_printf("EXPLAIN QUERY PLAN %s", plans[i][0]);
    char *plan = dump(saved, sql);
    if (!strstr(plan, plans[i][1]))
      g_error("%s: plan does not use %s:\n%s", plans[i][0], plans[i][1],
              plan);
    free(plan);
    g_free(sql);
  }
  /* The planner has statistics for them (ANALYZE's sqlite_stat1). */
  char *stats = dump(saved, "SELECT count(*) FROM sqlite_stat1 WHERE idx = "
                            "'__intrinsic_slice_track_id_ts'");
  g_assert_cmpstr(stats, ==, "\"count(*)\"\n1\n");
  free(stats);
  sqlite3_close(saved);

  /* The live database is usable and unchanged after the save. */
  assert_query(f, "SELECT name FROM pragma_database_list ORDER BY seq",
               TM_FORMAT_TSV, "name\nmain\n");
  g_assert_cmpint(g_unlink(path), ==, 0);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(path);
  g_free(dir);
}

static void test_save_keeps_an_existing_file_unless_told(fixture *f,
                                                         gconstpointer data) {
  (void)data;
  char *dir = g_dir_make_tmp("tm-sql-XXXXXX", NULL);
  char *path = g_build_filename(dir, "out.sqlite", NULL);
  g_assert_true(g_file_set_contents(path, "precious", -1, NULL));
  GError *error = NULL;
  g_assert_false(sql_surface_save(f->surface, path, false, &error));
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE);
  char *expected = g_strdup_printf("%s exists (replace it with --force)", path);
  g_assert_cmpstr(error->message, ==, expected);
  g_free(expected);
  g_clear_error(&error);
  char *content = NULL;
  g_assert_true(g_file_get_contents(path, &content, NULL, NULL));
  g_assert_cmpstr(content, ==, "precious");
  g_free(content);
  g_assert_cmpuint(count_files(dir), ==, 1);
  /* A new name is written without replace. */
  g_assert_cmpint(g_unlink(path), ==, 0);
  g_assert_true(sql_surface_save(f->surface, path, false, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(count_files(dir), ==, 1);
  g_assert_cmpint(g_unlink(path), ==, 0);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(path);
  g_free(dir);
}

static void test_save_refuses_names_that_are_not_files(fixture *f,
                                                       gconstpointer data) {
  (void)data;
  static const char *const refused[][2] = {
      {"", "an empty name is an in-memory database"},
      {":memory:", "\":memory:\" is an in-memory database"},
      {"file:out.sqlite?mode=memory", "is an SQLite URI"},
      {"FILE:out.sqlite", "is an SQLite URI"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
    GError *error = NULL;
    g_assert_false(sql_surface_save(f->surface, refused[i][0], true, &error));
    g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE);
    if (!strstr(error->message, refused[i][1]))
      g_error("'%s': %s", refused[i][0], error->message);
    g_error_free(error);
  }
}

static void test_save_to_an_impossible_path_fails(fixture *f,
                                                  gconstpointer data) {
  (void)data;
  GError *error = NULL;
  g_assert_false(sql_surface_save(f->surface,
                                  "/nonexistent-dir/x/out.sqlite", true,
                                  &error));
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE);
  g_assert_nonnull(strstr(error->message, "/nonexistent-dir/x/out.sqlite"));
  g_clear_error(&error);

  /* A directory in the way cannot be replaced: the complete temporary
   * file is removed and the directory stays. */
  char *dir = g_dir_make_tmp("tm-sql-XXXXXX", NULL);
  char *sub = g_build_filename(dir, "busy", NULL);
  g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
  char *inner = g_build_filename(sub, "f", NULL);
  g_assert_true(g_file_set_contents(inner, "x", -1, NULL));
  g_assert_false(sql_surface_save(f->surface, sub, true, &error));
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_SAVE);
  g_assert_nonnull(strstr(error->message, "cannot replace"));
  g_clear_error(&error);
  g_assert_cmpuint(count_files(dir), ==, 1);
  g_assert_true(g_file_test(inner, G_FILE_TEST_IS_REGULAR));
  g_unlink(inner);
  g_rmdir(sub);
  g_rmdir(dir);
  g_free(inner);
  g_free(sub);
  g_free(dir);

  /* The surface still answers queries after a failed save. */
  assert_query(f, "SELECT count(*) AS n FROM machine", TM_FORMAT_CSV,
               "\"n\"\n3\n");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  ADD("/sql-surface/save/writes-a-standalone-database",
      test_save_writes_a_standalone_database);
  ADD("/sql-surface/save/to-an-impossible-path-fails",
      test_save_to_an_impossible_path_fails);
  ADD("/sql-surface/save/keeps-an-existing-file-unless-told",
      test_save_keeps_an_existing_file_unless_told);
  ADD("/sql-surface/save/refuses-names-that-are-not-files",
      test_save_refuses_names_that_are_not_files);
  return g_test_run();
}
