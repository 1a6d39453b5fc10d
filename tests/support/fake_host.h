/*
 * A fake host for driving a reader through its descriptor in unit tests.
 *
 * It implements every service of <tracemerge/plugin.h> by writing one line
 * per call that creates or emits something to a transcript, with ids and
 * strings spelled out ("slice_begin T2 BOOTTIME@m0 ts=1000 name=foo ..."),
 * so a test states what the reader must have told the host as readable
 * text. Stats are kept apart (fake_host_stat), as is the first error.
 */
#ifndef TM_TEST_FAKE_HOST_H
#define TM_TEST_FAKE_HOST_H

#include <glib.h>
#include <tracemerge/plugin.h>

typedef struct fake_host fake_host;

fake_host *fake_host_new(void);

/* The services fake_host_run() passes to open() (every one set, as the
 * ABI promises; tests/test_fake_hosts.c checks). */
const tm_host_services *fake_host_services(void);
void fake_host_free(fake_host *fake);

/* Makes the host one built against an older <tracemerge/plugin.h>: the
 * table open() gets ends at `size` bytes (struct_size = size, every
 * service past it NULL), e.g. offsetof(tm_host_services, budget) for a
 * host without budgets and the per-machine services. */
void fake_host_set_services_size(fake_host *fake, size_t size);

/* What the budget service answers for TM_BUDGET_RECORD_BYTES (-1, the
 * default: no budget set). */
void fake_host_set_record_budget(fake_host *fake, int64_t bytes);

/* Opens `reader` on the fake host, feeds `data` in chunks of `chunk` bytes
 * (stopping at the first TM_ERROR), finishes and closes it. Returns the
 * first non-OK status, or TM_OK. */
tm_status fake_host_run(fake_host *fake, const tm_reader_descriptor *reader,
                        const uint8_t *data, size_t len, size_t chunk);

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
