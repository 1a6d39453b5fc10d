/*
 * Support for end-to-end tests: fixture archives written at test time (so
 * every input is readable in review as the C string that makes it) and a
 * runner for the tracemerge CLI.
 */
#ifndef TM_E2E_SUPPORT_H
#define TM_E2E_SUPPORT_H

#include <glib.h>
#include <stddef.h>

typedef struct e2e_member {
  const char *name;
  const char *content; /* NUL-terminated unless len is set */
  size_t len;          /* 0: strlen(content) */
} e2e_member;

typedef enum e2e_archive_format {
  E2E_ZIP,
  E2E_TAR,
  E2E_TAR_GZ,
  E2E_GZIP, /* one member: a gzip stream of its content */
} e2e_archive_format;

/* A fresh temporary directory, removed (with its files) by e2e_cleanup. */
char *e2e_tmpdir(void);
void e2e_cleanup(const char *dir);

/* Writes `content` to dir/name; returns the path (free with g_free). */
char *e2e_write_file(const char *dir, const char *name, const char *content,
                     size_t len);

/* Writes an archive of `members` at dir/name; returns its path. */
char *e2e_write_archive(const char *dir, const char *name,
                        e2e_archive_format format, const e2e_member *members,
                        size_t n_members);

typedef struct e2e_result {
  char *out;
  char *err;
  int exit_code;
} e2e_result;

/* Runs $TRACEMERGE_CLI with the NULL-terminated `args` (in `cwd`, or the
 * current directory when NULL). */
e2e_result e2e_run(const char *const *args);
e2e_result e2e_run_in(const char *cwd, const char *const *args);
void e2e_result_clear(e2e_result *result);

/* Runs `tracemerge query INPUTS OPTIONS --sql SQL` in `cwd` (NULL: the
 * current directory); `inputs` and `options` are NULL-terminated,
 * `options` may be NULL. Asserts nothing. */
e2e_result e2e_run_query(const char *cwd, const char *const *inputs,
                         const char *const *options, const char *sql);

/* Runs `tracemerge query INPUTS --sql SQL` and asserts exit 0 and empty
 * stderr; returns stdout (free with g_free). */
char *e2e_query(const char *const *inputs, const char *sql);
char *e2e_query_in(const char *cwd, const char *const *inputs, const char *sql);

/* Writes `members` as dir/run.zip or dir/run.tar (`format` E2E_ZIP or
 * E2E_TAR) and runs e2e_query_in on it; returns stdout. */
char *e2e_query_archive(const char *dir, e2e_archive_format format,
                        const e2e_member *members, size_t n, const char *sql);

/* Writes `content` as NAME in a fresh temporary directory, queries it with
 * `sql` (e2e_query) and removes the directory; returns stdout. */
char *e2e_query_text(const char *name, const char *content, const char *sql);

/* The rows of CSV output `csv`: what follows its header line (borrowed). */
const char *e2e_csv_rows(const char *csv);

/* What a failed import leaves for the query the CLI still runs: nothing. */
#define E2E_NOTHING_SQL                                                       \
  "SELECT (SELECT count(*) FROM slice) AS slices, (SELECT count(*) FROM "    \
  "counter) AS counters, (SELECT count(*) FROM clock_snapshot) AS snapshots"
#define E2E_NOTHING_OUT "\"slices\",\"counters\",\"snapshots\"\n0,0,0\n"

/* Runs `tracemerge query INPUTS --sql E2E_NOTHING_SQL` in `cwd` and asserts
 * that the whole import fails: exit 1, stderr exactly "tracemerge:
 * MESSAGE\n", and nothing imported. */
void e2e_assert_import_fails_with(const char *cwd, const char *const *inputs,
                                  const char *message);

/* The bytes of the encoded proto fixture tests/data/proto/NAME.textproto
 * (built as NAME.pb next to the test); asserts it is not empty. */
typedef struct e2e_bytes {
  char *data; /* free with g_free */
  gsize len;
} e2e_bytes;
e2e_bytes e2e_proto_fixture(const char *name);

/* The path of that built fixture NAME.pb; free with g_free. */
char *e2e_proto_fixture_path(const char *name);

/* e2e_query on the built proto fixture NAME.pb alone: the CSV text of
 * `sql`. Free with g_free. */
char *e2e_query_proto_fixture(const char *name, const char *sql);

/* Writes the example ZIP of tests/data/example (its manifest, client.json
 * and server.json) as tools/demo.sh packs it into `dir`; returns its path
 * (free with g_free). */
char *e2e_write_example_zip(const char *dir);

/* A Chrome JSON trace of one complete slice of 1 µs at `ts_us` on thread
 * (pid, tid); free with g_free. */
char *e2e_json_slice(const char *name, int pid, int tid, int ts_us);

/* Runs `tracemerge query FILE --sql SELECT 1` in `dir` and asserts that it
 * exits 1 with one stderr line that names `file` and contains `message`. */
void e2e_assert_query_fails(const char *dir, const char *file, const char *message);

/* Queries the trace at `path` with `sql`, which returns one row, and
 * asserts that the row reads `expected_row` (CSV without the header); a
 * mismatch names the file. */
void e2e_assert_file_row(const char *path, const char *sql, const char *expected_row);

/* e2e_assert_file_row on the repository's real trace SUBDIR/FILE
 * (tests/data/real, see corpus.h). */
void e2e_assert_real_file_row(const char *subdir, const char *file, const char *sql,
                              const char *expected_row);

/* One row on thread.is_main_thread, for the real-file tests of every
 * format: threads that are main (1), that are not (0), whose process is
 * unknown (NULL), and threads of a known process whose flag is not tid ==
 * pid (trace_processor's rule, issue 10 §3; always 0 when it holds). */
#define E2E_MAIN_THREAD_SQL                                                    \
  "SELECT (SELECT count(*) FROM thread WHERE is_main_thread = 1), "            \
  "(SELECT count(*) FROM thread WHERE is_main_thread = 0), "                   \
  "(SELECT count(*) FROM thread WHERE is_main_thread IS NULL), "               \
  "(SELECT count(*) FROM thread t JOIN process p USING (upid) "                \
  "WHERE t.is_main_thread IS NOT (t.tid = p.pid))"

/* Asserts that `actual` equals `expected`, printing both in full on
 * mismatch. */
#define e2e_assert_text(actual, expected)                                    \
  do {                                                                       \
    const char *a_ = (actual), *e_ = (expected);                             \
    if (g_strcmp0(a_, e_) != 0)                                              \
      g_error("%s:%d: text differs\n--- expected\n%s\n--- actual\n%s",      \
              __FILE__, __LINE__, e_, a_);                                   \
  } while (0)

#endif /* TM_E2E_SUPPORT_H */
