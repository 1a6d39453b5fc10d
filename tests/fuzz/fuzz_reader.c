/*
 * libFuzzer target for one reader plugin, linked with the reader's own
 * sources (its entry symbol, tracemerge_reader_entry) and the fake host of
 * tests/support: every input is a whole file, fed in chunks whose size the
 * input's last byte picks (so the reader's cross-chunk state is fuzzed
 * too), then finished and closed. A small record budget keeps each run
 * short and exercises the readers' budget paths.
 *
 * Built once per reader by tests/fuzz/meson.build (fuzz_json, fuzz_proto,
 * ...). Findings are crashes, sanitizer reports, leaks and timeouts; a
 * reader's own errors (TM_ERROR) are expected outcomes.
 */
#include <stddef.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

#include "fake_host.h"

const tm_reader_descriptor *tracemerge_reader_entry(void);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const tm_reader_descriptor *reader = tracemerge_reader_entry();
  /* The probe sees at most 512 bytes, as the host gives it. */
  (void)reader->probe(data, size < 512 ? size : 512, "fuzz.input");
  /* Whole (odd last byte) or in chunks of 1..97 bytes. */
  size_t chunk = size;
  if (size > 0 && (data[size - 1] & 1u) == 0)
    chunk = 1 + data[size - 1] % 97u;
  if (chunk == 0)
    chunk = 1;
  fake_host *fake = fake_host_new();
  fake_host_set_record_budget(fake, 1 << 20);
  fake_host_run(fake, reader, data, size, chunk);
  fake_host_free(fake);
  return 0;
}
