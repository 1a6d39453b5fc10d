/*
 * Synthetic systrace text for the benchmark (tools/bench.c --format
 * systrace) and the gen_systrace_text tool: what `atrace` (and ftrace's
 * `trace` file with the tgid option) writes on a phone. See
 * gen_systrace_text.c for the shape.
 */
#ifndef TM_GEN_SYSTRACE_TEXT_H
#define TM_GEN_SYSTRACE_TEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Writes the "# tracer: nop" header and exactly `lines` data lines over
 * `cpus` cpus (1..999) to `out`; the same seed gives the same bytes. */
bool gen_systrace_text_write(FILE *out, uint64_t lines, uint32_t cpus, uint32_t seed,
                             uint64_t *bytes_written);

#endif /* TM_GEN_SYSTRACE_TEXT_H */
