/*
 * The fake host of the JSON reader's tests (test_json_reader*.c): it
 * implements the reader services by writing each call as one line of a
 * log (creations of processes and threads, names, slices, counters, flows
 * with their committed arg sets inlined, metadata, stats and errors).
 * Tracks are written by description, async keys and flow ids by order of
 * first appearance (k1, f1, ...), so a log states what the reader meant,
 * not which hash it chose. The reader is loaded with dlopen, as the host
 * loads it.
 *
 * `services` is the table of a host built before track_async (its
 * struct_size ends there) and sets every service it covers (the ABI's
 * rule, tests/test_fake_hosts.c); its import_log writes
 * what stat_add writes ("stat ... +1"), so most logs show dropped events
 * as counts; `logging_services` has one that writes "log <stat> @<offset>
 * <args>" and counts the stat as the host does. read_bytes_with() uses
 * `active_services`, which the import-log tests switch.
 *
 * It keeps its own log format (not tests/support/fake_host.h's): the
 * expected logs of these tests are written in it. Still to do (issue 12,
 * "one fake host"): rewrite those logs in fake_host.h's transcript and
 * remove this host.
 */
#ifndef TM_TEST_JSON_HOST_H
#define TM_TEST_JSON_HOST_H

#include <glib.h>
#include <stdbool.h>
#include <tracemerge/plugin.h>

#define FAKE_CLOCK 77u
#define FAKE_MACHINE 5u
#define SYNTHETIC_BASE ((int64_t)1 << 32)

typedef struct fake_thread {
  int64_t pid, tid;
} fake_thread;

typedef struct json_host {
  GHashTable *string_ids; /* string -> id */
  GPtrArray *strings;     /* id -> string; [0] = NULL */
  GArray *process_pids;   /* ref-1 -> pid */
  GArray *threads;        /* ref-1 -> fake_thread */
  GPtrArray *tracks;      /* ref-1 -> description */
  GHashTable *track_ids;  /* description -> ref */
  GHashTable *key_names;  /* uint64 key -> "kN" */
  GHashTable *flow_names; /* uint64 id -> "fN" */
  GString *pending_args;  /* the arg set under construction */
  GPtrArray *arg_sets;    /* ref-1 -> text */
  GHashTable *stats;      /* name -> total */
  GString *log;
  int clock_calls;
  int errors;
  /* Tallies for the real-file checks. */
  int completes, begins, ends, counters, flows_out, flows_step, flows_in;
  int async_begins, async_ends;
  GPtrArray *process_names;
  int thread_names;
  /* Profiling services: ref-1 -> text, and the
   * text -> ref maps that intern them as the host does. */
  GPtrArray *profile_rows;
  GHashTable *profile_ids;
} json_host;

/* The reader under test ($TM_JSON_PLUGIN), and the test build of it
 * ($TM_JSON_TEST_PLUGIN, NULL unless loaded), set by json_host_load_readers(). */
extern const tm_reader_descriptor *reader;
extern const tm_reader_descriptor *test_reader;

extern const tm_host_services services;
extern tm_host_services logging_services;
extern const tm_host_services *active_services;

/* Loads the reader (and with `with_test_build` its test build); false,
 * with the reason on stderr, if one cannot be loaded. */
bool json_host_load_readers(bool with_test_build);
void json_host_unload_readers(void);

json_host *json_host_new(void);
void json_host_free(json_host *h);
int64_t stat_total(json_host *h, const char *name);

/* Reads `len` bytes in chunks of `chunk` as the host would: stop feeding
 * after an error, finish otherwise, always close. The log ends with the
 * final status. `config` (may be NULL) is the reader's config text. */
json_host *read_bytes_with(const tm_reader_descriptor *rd, const char *config,
                           const char *bytes, size_t len, size_t chunk);
json_host *read_bytes(const char *bytes, size_t len, size_t chunk);
/* Reads whole, in 7-byte chunks and byte by byte; the logs must match. */
json_host *read_all_chunkings(const char *bytes, size_t len);
char *fixture_path(const char *name);
json_host *read_fixture(const char *name);
void assert_fixture_log(const char *name, const char *expected);
void assert_text_log(const char *text, const char *expected);

#endif /* TM_TEST_JSON_HOST_H */
