/*
 * ProcessTree (packet field 2): the process and thread rows of a machine,
 * with names, command lines, parents and uids (docs/formats.md §1.11).
 * As trace_processor does, a process listed without a command line is
 * skipped; threads are attached to their tgid.
 */
#ifndef TM_PROTO_PROCESS_TREE_H
#define TM_PROTO_PROCESS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proto_context;
struct proto_machine;

/* Returns false if the message does not decode. */
bool proto_process_tree_read(struct proto_context *ctx, struct proto_machine *machine,
                             const uint8_t *data, size_t len);

#endif /* TM_PROTO_PROCESS_TREE_H */
