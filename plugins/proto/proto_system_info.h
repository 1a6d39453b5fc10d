/*
 * SystemInfo (packet field 45): the machine row's system columns and the
 * machine's system metadata (docs/formats.md §1.11, docs/sql-surface.md §1,
 * §3). Metadata rows are written only for the file's default machine: the
 * host scopes a reader's metadata to that machine.
 */
#ifndef TM_PROTO_SYSTEM_INFO_H
#define TM_PROTO_SYSTEM_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proto_context;
struct proto_machine;

/* Sets *num_cpus when the message names it (left alone otherwise).
 * Returns false if the message does not decode. */
bool proto_system_info_read(struct proto_context *ctx, struct proto_machine *machine,
                            const uint8_t *data, size_t len, uint32_t *num_cpus);

#endif /* TM_PROTO_SYSTEM_INFO_H */
