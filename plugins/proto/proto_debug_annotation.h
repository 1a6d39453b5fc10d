/*
 * Debug annotations (TrackEvent field 4) and the inline source location
 * (field 33) as slice args (docs/formats.md §1.8).
 *
 * Keys: "debug.<name>", nested dict entries append ".<name>", array
 * elements "[i]"; names are inline or interned on the sequence
 * (debug_annotation_names), string values too
 * (debug_annotation_string_values). Invariant: nesting deeper than
 * PROTO_MAX_ANNOTATION_DEPTH is skipped and counted, so hostile input
 * cannot exhaust the stack; args are only added to the host's set under
 * construction, never committed here.
 */
#ifndef TM_PROTO_DEBUG_ANNOTATION_H
#define TM_PROTO_DEBUG_ANNOTATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_vec.h"

#define PROTO_MAX_ANNOTATION_DEPTH 32

struct proto_context;
struct proto_sequence;

/* Adds the args of `n` DebugAnnotation messages; `key` is scratch space.
 * Returns false if one is malformed. */
bool proto_debug_annotations_add(struct proto_context *ctx, struct proto_sequence *seq,
                                 const proto_bytes *annotations, size_t n, proto_text *key);

/* Adds an inline SourceLocation as "source_location.file_name",
 * ".function_name", ".line_number" (trace_processor flattens typed
 * TrackEvent fields under their field names). Returns false if malformed. */
bool proto_source_location_add(struct proto_context *ctx, const uint8_t *data, size_t len);

#endif /* TM_PROTO_DEBUG_ANNOTATION_H */
