/*
 * Running the proto reader (plugins/proto, linked into the test) on the
 * transcript-writing fake host (fake_host.h), for the proto reader's unit
 * tests. Fixtures are the binary encodings of the text protobuf files in
 * tests/data/proto/, built into PROTO_FIXTURE_DIR (a compile-time define
 * of each test).
 */
#ifndef TM_TEST_PROTO_RUN_H
#define TM_TEST_PROTO_RUN_H

#include <glib.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "fake_host.h"

const tm_reader_descriptor *tracemerge_reader_entry(void);

/* The bytes of fixture `name` (asserts that it exists). */
GBytes *read_fixture(const char *name);

/* Runs the reader on `data` fed in `chunk`-byte pieces; fails the test,
 * printing the transcript, unless the run ends with `expected`. The
 * caller frees the host. */
fake_host *run_bytes(const uint8_t *data, size_t len, size_t chunk, tm_status expected);

/* Runs fixture `name` whole; it must read without an error. */
fake_host *run_fixture(const char *name);

#endif /* TM_TEST_PROTO_RUN_H */
