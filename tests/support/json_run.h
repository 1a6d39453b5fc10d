/*
 * Running the JSON reader on the fake host (tests/support/fake_host.h),
 * for test_json_reader.c, test_json_v8_profile.c and
 * test_json_fast_path.c. The reader is loaded with dlopen, as the host
 * loads it.
 *
 * The fake host is cut to the table of a host built before track_async
 * (fake_host_set_services_size): the JSON reader then gives each legacy
 * async id a track of its own and reads without a record budget, as it
 * does on such a host, and the expected transcripts are written for that.
 * The transcript also holds the stats where they are counted, track keys
 * and flow ids by order of first appearance (k1, f1: the reader hashes
 * them), and only the reader's own process() calls (FAKE_HOST_STATS,
 * FAKE_HOST_IDS_BY_ORDER, FAKE_HOST_PROCESS_CALLS); an import log is a
 * "stat NAME +1" line unless `import_logs_in_transcript` asks for
 * "import_log" lines.
 */
#ifndef TM_TEST_JSON_RUN_H
#define TM_TEST_JSON_RUN_H

#include <glib.h>
#include <stdbool.h>
#include <tracemerge/plugin.h>

#include "fake_host.h"

/* One read of the reader. */
typedef struct json_run {
  fake_host *fake;
  tm_status status;
  /* The transcript, then "status=ok" or "status=error". */
  GString *log;
} json_run;

/* The reader under test ($TM_JSON_PLUGIN), and the test build of it
 * ($TM_JSON_TEST_PLUGIN, NULL unless loaded), set by
 * json_run_load_readers(). */
extern const tm_reader_descriptor *reader;
extern const tm_reader_descriptor *test_reader;

/* Whether import_log calls are transcribed as "import_log NAME at=OFFSET
 * key=value; ..." (the import-log tests switch it on, and back off). */
extern bool import_logs_in_transcript;

/* Loads the reader (and with `with_test_build` its test build); false,
 * with the reason on stderr, if one cannot be loaded. */
bool json_run_load_readers(bool with_test_build);
void json_run_unload_readers(void);

/* A fake host set up as above, for a test that drives the reader itself. */
fake_host *json_fake_host_new(void);

void json_run_free(json_run *h);
int64_t stat_total(json_run *h, const char *name);

/* Reads `len` bytes in chunks of `chunk` as the host would: stop feeding
 * after an error, finish otherwise, always close. Asserts that no arg set
 * is left half built and that one error was reported if, and only if, the
 * read failed. `config` (may be NULL) is the reader's config text. */
json_run *read_bytes_with(const tm_reader_descriptor *rd, const char *config,
                          const char *bytes, size_t len, size_t chunk);
json_run *read_bytes(const char *bytes, size_t len, size_t chunk);
/* Reads whole, in 7-byte chunks and byte by byte; the logs must match. */
json_run *read_all_chunkings(const char *bytes, size_t len);
char *fixture_path(const char *name);
json_run *read_fixture(const char *name);
void assert_fixture_log(const char *name, const char *expected);
void assert_text_log(const char *text, const char *expected);

/* Tallies for the real-file checks: lines of the log that start with
 * `prefix` ("slice_complete ") and hold `containing` (NULL: any, " OUT ");
 * lines that start with `event` and whose track (the word after it) was
 * made with a type starting `track_type`; and the names given to
 * processes, in order (an array of strings). */
size_t count_lines(json_run *h, const char *prefix, const char *containing);
size_t count_on_tracks(json_run *h, const char *event, const char *track_type);
GPtrArray *process_names(json_run *h);

#endif /* TM_TEST_JSON_RUN_H */
