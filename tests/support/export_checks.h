/*
 * Helpers of the `tracemerge export` tests (test_e2e_export_perfetto.c,
 * test_e2e_export_json.c, test_e2e_export_cli.c): their inputs (corpus
 * files, gunzipped; the system trace and Chrome JSON merge; the query
 * suites of tests/data/export/), the CLI runs they make, and answers of
 * two saved databases compared query by query.
 */
#ifndef TM_TEST_EXPORT_CHECKS_H
#define TM_TEST_EXPORT_CHECKS_H

#include <glib.h>
#include <sqlite3.h>
#include <stdint.h>

/* A corpus file, gunzipped when its name ends in .gz. */
char *corpus_read_plain(const char *subdir, const char *file, gsize *len);
/* The system trace and the Chrome JSON on two machines; returns the ZIP. */
char *write_system_and_chrome_zip(const char *dir);
/* tests/data/export/`name`, whole. */
char *data_file(const char *name);

/* Runs the CLI in `dir`; it must succeed. */
void run_ok(const char *dir, const char *const *args);
/* `tracemerge export INPUT -o OUT --format FORMAT`; returns OUT's path. */
char *export_to(const char *dir, const char *input, const char *out,
                const char *format);
/* `tracemerge import INPUT -o OUT.sqlite`; returns the database's path. */
char *save(const char *dir, const char *input, const char *db);

/* `path` opened read-only, with `prelude` (may be NULL) run on it. */
sqlite3 *open_db(const char *path, const char *prelude);
/* Every row of `stmt`, each value with its type, one line per row. */
char *answer(sqlite3 *db, sqlite3_stmt *stmt, const char *sql);
/* Runs every statement of `suite` on both databases and asserts equal
 * answers; returns the number of statements. */
guint compare_suite(sqlite3 *merged, sqlite3 *exported, const char *suite);
/* The one value of `sql`'s one row. */
int64_t scalar(sqlite3 *db, const char *sql);

#endif /* TM_TEST_EXPORT_CHECKS_H */
