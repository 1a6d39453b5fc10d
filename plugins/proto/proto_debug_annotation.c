/*
 * Debug annotations and inline source locations of a TrackEvent, as slice
 * args (see proto_debug_annotation.h).
 */
#include "proto_debug_annotation.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "proto_context.h"
#include "proto_sequence_state.h"
#include "proto_wire_decode.h"

static void text_append(proto_text *text, const void *data, size_t len) {
  tm_vec_reserve(text, text->len + len);
  if (len)
    memcpy(text->data + text->len, data, len);
  text->len += len;
}

/* Adds the arg `key` = `value`. `key_id`, when not NULL, caches the host
 * id of `key` (0: not known yet). */
static void add_arg(proto_context *ctx, const proto_text *key, tm_str_id *key_id,
                    tm_arg_value value) {
  tm_str_id id = key_id ? *key_id : 0;
  if (!id)
    id = proto_intern(ctx, key->data, key->len);
  if (key_id)
    *key_id = id;
  ctx->s->args_add(ctx->host, id, value);
}

/* The annotation's name: inline, or interned on the sequence (then
 * `*entry` is its entry, else NULL). Returns false if it has none. */
static bool annotation_name(proto_sequence *seq, const uint8_t *data, size_t len,
                            const char **name, size_t *name_len,
                            proto_interned **entry) {
  *entry = NULL;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
    if (f.number == 10 && f.wire_type == PW_LENGTH_DELIMITED) {
      *name = (const char *)f.data;
      *name_len = f.len;
      return true;
    }
    if (f.number == 1 && f.wire_type == PW_VARINT) {
      proto_interned *e = proto_sequence_entry(seq, PROTO_INTERN_DEBUG_NAME, f.value);
      if (!e)
        return false;
      *name = proto_sequence_borrow_text(seq, e);
      *name_len = e->len;
      *entry = e;
      return true;
    }
  }
  return false;
}

/* Adds the args of one annotation whose key is in `key` (its host id
 * cached in `*key_id` when not NULL). Returns false if it is malformed. */
static bool add_annotation(proto_context *ctx, proto_sequence *seq, proto_text *key,
                           tm_str_id *key_id, const uint8_t *data, size_t len, int depth) {
  if (depth > PROTO_MAX_ANNOTATION_DEPTH) {
    proto_count(ctx, "proto_debug_annotation_too_deep");
    return true;
  }
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  size_t key_len = key->len;
  uint32_t array_index = 0;
  while (pw_next(&c, &f)) {
    tm_arg_value value = {.type = TM_ARG_INT};
    bool leaf = true;
    switch (f.number) {
    case 2:
      value.type = TM_ARG_BOOL;
      value.u.int_value = f.value != 0;
      break;
    case 3:
      value.type = TM_ARG_UINT;
      value.u.int_value = (int64_t)f.value;
      break;
    case 4:
      value.u.int_value = pw_as_int64(&f);
      break;
    case 5:
      if (f.wire_type != PW_FIXED64)
        return false;
      value.type = TM_ARG_REAL;
      value.u.real_value = pw_as_double(&f);
      break;
    case 7:
      value.type = TM_ARG_POINTER;
      value.u.int_value = (int64_t)f.value;
      break;
    case 6:
    case 9:
      if (f.wire_type != PW_LENGTH_DELIMITED)
        return false;
      value.type = f.number == 6 ? TM_ARG_STRING : TM_ARG_JSON;
      value.u.str_id = proto_intern(ctx, (const char *)f.data, f.len);
      break;
    case 17: {
      const proto_interned *e =
          proto_sequence_lookup(seq, PROTO_INTERN_DEBUG_STRING, f.value);
      value.type = TM_ARG_STRING;
      value.u.str_id = e ? e->str : proto_intern(ctx, "", 0);
      break;
    }
    case 11: { /* dict entry: key.<name> */
      if (f.wire_type != PW_LENGTH_DELIMITED)
        return false;
      leaf = false;
      const char *name;
      size_t name_len;
      proto_interned *entry;
      if (!annotation_name(seq, f.data, f.len, &name, &name_len, &entry))
        break;
      text_append(key, ".", 1);
      text_append(key, name, name_len);
      bool ok = add_annotation(ctx, seq, key, NULL, f.data, f.len, depth + 1);
      key->len = key_len;
      if (!ok)
        return false;
      break;
    }
    case 12: { /* array element: key[i] */
      if (f.wire_type != PW_LENGTH_DELIMITED)
        return false;
      leaf = false;
      char index[16];
      int n = snprintf(index, sizeof index, "[%" PRIu32 "]", array_index++);
      text_append(key, index, (size_t)n);
      bool ok = add_annotation(ctx, seq, key, NULL, f.data, f.len, depth + 1);
      key->len = key_len;
      if (!ok)
        return false;
      break;
    }
    default:
      leaf = false; /* names, and fields we do not read */
      break;
    }
    if (leaf)
      add_arg(ctx, key, key_id, value);
  }
  return c.error == PW_OK;
}

bool proto_debug_annotations_add(proto_context *ctx, proto_sequence *seq,
                                 const proto_bytes *annotations, size_t n,
                                 proto_text *key) {
  for (size_t i = 0; i < n; i++) {
    const uint8_t *data = annotations[i].data;
    size_t len = annotations[i].len;
    const char *name;
    size_t name_len;
    proto_interned *entry;
    if (!annotation_name(seq, data, len, &name, &name_len, &entry))
      continue; /* an annotation without a (known) name has no key */
    key->len = 0;
    text_append(key, "debug.", 6);
    text_append(key, name, name_len);
    /* The key of an interned name is the same every time: interned once. */
    if (!add_annotation(ctx, seq, key, entry ? &entry->debug_key : NULL, data, len, 0))
      return false;
  }
  return true;
}

/* An inline SourceLocation, flattened under its field name as
 * trace_processor flattens typed TrackEvent fields. Returns false if it is
 * malformed. */
bool proto_source_location_add(proto_context *ctx, const uint8_t *data, size_t len) {
  static const char *const keys[] = {NULL, NULL, "source_location.file_name",
                                     "source_location.function_name",
                                     "source_location.line_number"};
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
    if (f.number < 2 || f.number > 4)
      continue;
    tm_arg_value value;
    if (f.number == 4 && f.wire_type == PW_VARINT) {
      value = (tm_arg_value){.type = TM_ARG_INT, .u.int_value = (int64_t)(uint32_t)f.value};
    } else if (f.number != 4 && f.wire_type == PW_LENGTH_DELIMITED) {
      value = (tm_arg_value){.type = TM_ARG_STRING,
                             .u.str_id = proto_intern(ctx, (const char *)f.data, f.len)};
    } else {
      return false;
    }
    ctx->s->args_add(ctx->host, proto_intern_cstr(ctx, keys[f.number]), value);
  }
  return c.error == PW_OK;
}
