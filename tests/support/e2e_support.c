#include "e2e_support.h"

#include "corpus.h"

#include <archive.h>
#include <archive_entry.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

char *e2e_tmpdir(void) {
  GError *error = NULL;
  char *dir = g_dir_make_tmp("tracemerge-e2e-XXXXXX", &error);
  g_assert_no_error(error);
  return dir;
}

static void remove_tree(const char *path) {
  if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
    GDir *dir = g_dir_open(path, 0, NULL);
    if (dir) {
      const char *name;
      while ((name = g_dir_read_name(dir))) {
        g_autofree char *child = g_build_filename(path, name, NULL);
        remove_tree(child);
      }
      g_dir_close(dir);
    }
    g_rmdir(path);
  } else {
    g_unlink(path);
  }
}

void e2e_cleanup(const char *dir) {
  if (dir)
    remove_tree(dir);
}

char *e2e_write_file(const char *dir, const char *name, const char *content,
                     size_t len) {
  char *path = g_build_filename(dir, name, NULL);
  g_autofree char *parent = g_path_get_dirname(path);
  g_mkdir_with_parents(parent, 0700);
  GError *error = NULL;
  g_file_set_contents(path, content, len ? (gssize)len : (gssize)strlen(content), &error);
  g_assert_no_error(error);
  return path;
}

char *e2e_write_archive(const char *dir, const char *name,
                        e2e_archive_format format, const e2e_member *members,
                        size_t n_members) {
  char *path = g_build_filename(dir, name, NULL);
  struct archive *a = archive_write_new();
  switch (format) {
  case E2E_ZIP:
    archive_write_set_format_zip(a);
    break;
  case E2E_TAR:
    archive_write_set_format_pax_restricted(a);
    break;
  case E2E_TAR_GZ:
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_gzip(a);
    break;
  case E2E_GZIP:
    g_assert_cmpuint(n_members, ==, 1);
    archive_write_set_format_raw(a);
    archive_write_add_filter_gzip(a);
    break;
  }
  g_assert_cmpint(archive_write_open_filename(a, path), ==, ARCHIVE_OK);
  for (size_t i = 0; i < n_members; i++) {
    size_t len = members[i].len ? members[i].len : strlen(members[i].content);
    struct archive_entry *entry = archive_entry_new();
    archive_entry_set_pathname(entry, members[i].name);
    archive_entry_set_size(entry, (la_int64_t)len);
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    g_assert_cmpint(archive_write_header(a, entry), ==, ARCHIVE_OK);
    g_assert_cmpint(archive_write_data(a, members[i].content, len), ==, (la_ssize_t)len);
    archive_entry_free(entry);
  }
  g_assert_cmpint(archive_write_close(a), ==, ARCHIVE_OK);
  archive_write_free(a);
  return path;
}

e2e_result e2e_run_in(const char *cwd, const char *const *args) {
  const char *cli = g_getenv("TRACEMERGE_CLI");
  g_assert_nonnull(cli);
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)cli);
  for (size_t i = 0; args[i]; i++)
    g_ptr_array_add(argv, (char *)args[i]);
  g_ptr_array_add(argv, NULL);
  e2e_result result = {0};
  int wait_status = 0;
  GError *error = NULL;
  g_spawn_sync(cwd, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
               &result.out, &result.err, &wait_status, &error);
  g_assert_no_error(error);
  g_ptr_array_free(argv, TRUE);
  result.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
  return result;
}

e2e_result e2e_run(const char *const *args) { return e2e_run_in(NULL, args); }

void e2e_result_clear(e2e_result *result) {
  g_free(result->out);
  g_free(result->err);
  memset(result, 0, sizeof *result);
}

e2e_result e2e_run_query(const char *cwd, const char *const *inputs,
                         const char *const *options, const char *sql) {
  GPtrArray *args = g_ptr_array_new();
  g_ptr_array_add(args, "query");
  for (size_t i = 0; inputs[i]; i++)
    g_ptr_array_add(args, (char *)inputs[i]);
  for (size_t i = 0; options && options[i]; i++)
    g_ptr_array_add(args, (char *)options[i]);
  g_ptr_array_add(args, "--sql");
  g_ptr_array_add(args, (char *)sql);
  g_ptr_array_add(args, NULL);
  e2e_result r = e2e_run_in(cwd, (const char *const *)args->pdata);
  g_ptr_array_free(args, TRUE);
  return r;
}

char *e2e_query_in(const char *cwd, const char *const *inputs, const char *sql) {
  e2e_result r = e2e_run_query(cwd, inputs, NULL, sql);
  if (r.exit_code != 0 || r.err[0])
    g_error("query failed (exit %d): %s\nstdout: %s", r.exit_code, r.err, r.out);
  char *out = r.out;
  r.out = NULL;
  e2e_result_clear(&r);
  return out;
}

char *e2e_query(const char *const *inputs, const char *sql) {
  return e2e_query_in(NULL, inputs, sql);
}

char *e2e_query_archive(const char *dir, e2e_archive_format format,
                        const e2e_member *members, size_t n, const char *sql) {
  g_assert_true(format == E2E_ZIP || format == E2E_TAR);
  g_autofree char *archive = e2e_write_archive(
      dir, format == E2E_ZIP ? "run.zip" : "run.tar", format, members, n);
  const char *inputs[] = {archive, NULL};
  return e2e_query_in(dir, inputs, sql);
}

char *e2e_proto_fixture_path(const char *name) {
  g_autofree char *file = g_strdup_printf("%s.pb", name);
  return g_test_build_filename(G_TEST_BUILT, "data", "proto", file, NULL);
}

char *e2e_query_proto_fixture(const char *name, const char *sql) {
  g_autofree char *path = e2e_proto_fixture_path(name);
  const char *inputs[] = {path, NULL};
  return e2e_query(inputs, sql);
}

static char *example_file(const char *name) {
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "example", name, NULL);
  char *text = NULL;
  GError *error = NULL;
  g_file_get_contents(path, &text, NULL, &error);
  g_assert_no_error(error);
  return text;
}

char *e2e_write_example_zip(const char *dir) {
  g_autofree char *manifest = example_file("perfetto_manifest.json");
  g_autofree char *client = example_file("client.json");
  g_autofree char *server = example_file("server.json");
  const e2e_member members[] = {{"perfetto_manifest.json", manifest, 0},
                                {"client.json", client, 0},
                                {"server.json", server, 0}};
  return e2e_write_archive(dir, "example.zip", E2E_ZIP, members, G_N_ELEMENTS(members));
}

e2e_bytes e2e_proto_fixture(const char *name) {
  g_autofree char *path = e2e_proto_fixture_path(name);
  e2e_bytes bytes = {0};
  GError *error = NULL;
  g_file_get_contents(path, &bytes.data, &bytes.len, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(bytes.len, >, 0);
  return bytes;
}

char *e2e_query_text(const char *name, const char *content, const char *sql) {
  char *dir = e2e_tmpdir();
  g_autofree char *path = e2e_write_file(dir, name, content, 0);
  const char *inputs[] = {path, NULL};
  char *out = e2e_query(inputs, sql);
  e2e_cleanup(dir);
  g_free(dir);
  return out;
}

const char *e2e_csv_rows(const char *csv) {
  const char *newline = strchr(csv, '\n');
  if (!newline)
    g_error("CSV without a header line: %s", csv);
  return newline + 1;
}

void e2e_assert_import_fails_with(const char *cwd, const char *const *inputs,
                                  const char *message) {
  e2e_result r = e2e_run_query(cwd, inputs, NULL, E2E_NOTHING_SQL);
  g_autofree char *expected = g_strdup_printf("tracemerge: %s\n", message);
  e2e_assert_text(r.err, expected);
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, E2E_NOTHING_OUT);
  e2e_result_clear(&r);
}

char *e2e_json_slice(const char *name, int pid, int tid, int ts_us) {
  return g_strdup_printf("{\"traceEvents\": [{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                         "\"ts\":%d,\"dur\":1,\"name\":\"%s\"}]}\n",
                         pid, tid, ts_us, name);
}

void e2e_assert_query_fails(const char *dir, const char *file, const char *message) {
  const char *args[] = {"query", file, "--sql", "SELECT 1", NULL};
  e2e_result r = e2e_run_in(dir, args);
  const char *newline = strchr(r.err, '\n');
  if (r.exit_code != 1 || !strstr(r.err, message) || !strstr(r.err, file) || !newline ||
      newline[1] != '\0')
    g_error("%s: expected exit 1 and one line naming it with \"%s\"; got exit %d: %s", file,
            message, r.exit_code, r.err);
  e2e_result_clear(&r);
}

void e2e_assert_file_row(const char *path, const char *sql, const char *expected_row) {
  const char *inputs[] = {path, NULL};
  g_autofree char *out = e2e_query(inputs, sql);
  const char *body = strchr(out, '\n');
  g_assert_nonnull(body);
  g_autofree char *expected = g_strdup_printf("%s\n", expected_row);
  if (g_strcmp0(body + 1, expected) != 0)
    g_error("%s: expected %s got %s", path, expected, body + 1);
}

void e2e_assert_real_file_row(const char *subdir, const char *file, const char *sql,
                              const char *expected_row) {
  g_autofree char *path = corpus_real_path(subdir, file);
  e2e_assert_file_row(path, sql, expected_row);
}
