/*
 * Protobuf text format of a message read from the wire, driven by the
 * protoc-c descriptor of its type: what trace_processor stores as the
 * metadata `trace_config_pbtxt`.
 *
 * Fields print in wire order, one per line, nested messages as
 * `name {` ... `}` indented by two spaces, enums by their value names,
 * strings quoted with C escapes. A field the descriptor does not know
 * prints as its number (`42: 7`, bytes as a quoted string), as protoc's
 * --decode does. Invariant: nesting deeper than PROTO_PBTXT_MAX_DEPTH, or
 * bytes that do not parse, print as they are (quoted) rather than fail, so
 * hostile input costs output, never stack.
 */
#ifndef TM_PROTO_PBTXT_H
#define TM_PROTO_PBTXT_H

#include <glib.h>
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_PBTXT_MAX_DEPTH 32

/* The text of message `data` of type `d`; free with g_free. */
char *proto_pbtxt(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len);

#endif /* TM_PROTO_PBTXT_H */
