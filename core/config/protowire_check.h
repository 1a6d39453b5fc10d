/*
 * The check a binary protobuf config passes before anything unpacks it,
 * walked with protobuf-c descriptors over the wire primitives of
 * protowire.h. Fields the schema does not know are listed in textproto.h's
 * record (tm_textproto_unknown), as the text parser lists them, so a
 * config's unknown fields read the same whichever encoding it came in.
 *
 * Invariant: never looks outside [data, data + len); a malformed encoding
 * is reported with its byte offset and field path, never read past.
 */
#ifndef TM_PROTOWIRE_CHECK_H
#define TM_PROTOWIRE_CHECK_H

#include <glib.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

/* Checks that `data` is a valid encoding of `root`: wire types agree with
 * the declared field types (or are a packed run of them), nested messages
 * decode, enum values are ones the schema names, nesting stays within
 * TM_TEXTPROTO_MAX_DEPTH. Fields the schema does not know are appended to
 * `unknown` (tm_textproto_unknown *, may be NULL) and are no error.
 * Errors name `source_name`, the byte offset and the field path. */
bool tm_protowire_check(const ProtobufCMessageDescriptor *root, const uint8_t *data,
                        size_t len, const char *source_name, GPtrArray *unknown,
                        GError **error);

#endif /* TM_PROTOWIRE_CHECK_H */
