/*
 * Stack profile resolution: turns the raw entries of a sequence's stack
 * table (proto_stack_table.h) into host refs (services mapping, frame,
 * callsite) when a sample or event first uses them.
 *
 * Invariants: an entry is resolved only on first use, because it may name
 * ids that a later packet of the same generation interns; a resolved ref
 * is cached on the entry, so a callstack costs the host calls once per
 * generation. A reference that does not resolve is counted
 * (stackprofile_invalid_*_id) and the sample or event loses its stack,
 * never its row. The caller passes the context and the sequence; nothing
 * here is reached from them in the other direction.
 */
#ifndef TM_PROTO_STACK_PROFILE_H
#define TM_PROTO_STACK_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

struct proto_context;
struct proto_sequence;

/* The innermost callsite of callstack `iid` of `seq`'s generation, or 0
 * (counted) if it, or one of its frames, does not resolve. */
tm_callsite_ref proto_stack_callsite(struct proto_context *ctx, struct proto_sequence *seq,
                                     uint64_t iid);

/* The innermost callsite of an inline TrackEvent callstack (`data` is an
 * InlineCallstack: frames outermost first), 0 if it has no frames. Returns
 * false if it is malformed. */
bool proto_stack_inline_callsite(struct proto_context *ctx, const uint8_t *data, size_t len,
                                 tm_callsite_ref *out);

#endif /* TM_PROTO_STACK_PROFILE_H */
