/*
 * The tests' one fake host: it drives a reader through its descriptor and
 * implements every service of <tracemerge/plugin.h> by writing one line
 * per call that creates or emits something to a transcript, with ids and
 * strings spelled out ("slice_begin T2 BOOTTIME@host ts=1000 name=foo ..."),
 * so a test states what the reader must have told the host as readable
 * text. Every test that needs a host uses it (reader unit tests, the JSON
 * reader's through tests/support/json_run.h, the fuzzers).
 *
 * The transcript's lines:
 *   process p10                      the host's first process for pid 10
 *   thread t11 of p10                its first thread() for tid 11 (which
 *                                    makes p10 first, unless
 *                                    FAKE_HOST_PROCESS_CALLS)
 *   track T1 = <type> [counter] [name="..."] [tN] [pN] [scope=S] key=K
 *         [unit=U] [cpu=C] [on <machine>]     a track, when first interned
 *   slice_begin|slice_end|slice_complete T1 <clock> ts=N [cat=C] [name=N]
 *         [thread_ts=N] [thread_dur=N] [dur=N] [args={k=v, ...}]
 *   counter T1 <clock> ts=N value=V [args=...]
 *   flow T1 <clock> ts=N id=I OUT|STEP|IN|CONTINUE|IN_KEEP enclosing|next[{args}]
 *   metadata NAME = 5 | metadata NAME = "text"
 *   error at OFFSET: message
 * and one kind per other service (see fake_host.c). Values: 5 (int), 5u
 * (uint), "s" (string), 0.25 (real, the shortest text that reads back the
 * same), true, 0x10 (pointer), json:{...}. Pids and tids of 2^32 + a
 * string id are written $name. An event whose arg set is still being
 * built (args_add without args_commit) fails the test. Stats are kept
 * apart (fake_host_stat) unless fake_host_set_transcript() asks for them;
 * the first error is also kept apart (fake_host_borrow_error).
 */
#ifndef TM_TEST_FAKE_HOST_H
#define TM_TEST_FAKE_HOST_H

#include <glib.h>
#include <tracemerge/plugin.h>

typedef struct fake_host fake_host;

fake_host *fake_host_new(void);

/* The full services table (every one set, as the ABI promises;
 * tests/test_fake_hosts.c checks). */
const tm_host_services *fake_host_services(void);
/* The table this fake passes to open(): the full one, or the one cut by
 * fake_host_set_services_size(). */
const tm_host_services *fake_host_table(const fake_host *fake);
void fake_host_free(fake_host *fake);

/* Makes the host one built against an older <tracemerge/plugin.h>: the
 * table open() gets ends at `size` bytes (struct_size = size, every
 * service past it NULL), e.g. offsetof(tm_host_services, budget) for a
 * host without budgets and the per-machine services. */
void fake_host_set_services_size(fake_host *fake, size_t size);

/* What the budget service answers for TM_BUDGET_RECORD_BYTES (-1, the
 * default: no budget set). */
void fake_host_set_record_budget(fake_host *fake, int64_t bytes);

/* What the transcript writes besides the calls that create or emit
 * something (fake_host_set_transcript; none by default). */
enum {
  /* stat_add writes "stat NAME +DELTA", and import_log (unless
   * FAKE_HOST_IMPORT_LOGS) "stat NAME +1": where in the stream a reader
   * counts what it drops. */
  FAKE_HOST_STATS = 1u << 0,
  /* import_log writes "import_log NAME at=OFFSET key=value; key=value"
   * (strings as they are, other values "int:5", "real:0.5"). */
  FAKE_HOST_IMPORT_LOGS = 1u << 1,
  /* Track keys and flow ids are written k1, k2, ... and f1, f2, ... in
   * order of first appearance (0 stays 0): for readers whose ids are
   * hashes, a test pins which events share one, not the hash. */
  FAKE_HOST_IDS_BY_ORDER = 1u << 2,
  /* thread() names its process without making it: "process pN" lines are
   * the reader's own process() calls, where it makes them. */
  FAKE_HOST_PROCESS_CALLS = 1u << 3,
};
void fake_host_set_transcript(fake_host *fake, unsigned flags);

/* The config text open() gets (NULL, the default: none). */
void fake_host_set_config(fake_host *fake, const char *config);

/* Opens `reader` on the fake host (its table and config) and returns the
 * reader's state, for a test that feeds it itself. */
void *fake_host_open(fake_host *fake, const tm_reader_descriptor *reader);

/* Opens `reader` on the fake host, feeds `data` in chunks of `chunk` bytes
 * (stopping at the first TM_ERROR), finishes and closes it. Returns the
 * first non-OK status, or TM_OK. */
tm_status fake_host_run(fake_host *fake, const tm_reader_descriptor *reader,
                        const uint8_t *data, size_t len, size_t chunk);

/* Whether args_add was called since the last args_commit (every event's
 * line asserts it was not). */
bool fake_host_has_pending_args(const fake_host *fake);

/* The transcript: one line per call, each ending in "\n". */
const char *fake_host_borrow_transcript(const fake_host *fake);
/* Lines of the transcript that start with `prefix`. */
size_t fake_host_count_lines(const fake_host *fake, const char *prefix);
/* The import_log calls, one "name at=OFFSET [arg keys]" line each (each
 * also bumped its stat). */
const char *fake_host_borrow_import_logs(const fake_host *fake);
/* The same lines with each arg's value: "name at=OFFSET key=value ...". */
const char *fake_host_borrow_import_log_values(const fake_host *fake);
/* Value of a stat (0 if never bumped). */
int64_t fake_host_stat(const fake_host *fake, const char *name);
/* The first reported error, or NULL; its offset in *offset. */
const char *fake_host_borrow_error(const fake_host *fake, int64_t *offset);

/* Asserts that every line of `expected` occurs in the transcript, in that
 * order (other lines may come between), printing both on failure. */
void fake_host_assert_lines(const fake_host *fake, const char *expected);

#endif /* TM_TEST_FAKE_HOST_H */
