/*
 * Debug annotations and inline source locations of a TrackEvent, as slice
 * args (see proto_debug_annotation.h).
 */
#include "proto_debug_annotation.h"

#include <string.h>

#include "proto_context.h"
#include "proto_sequence_state.h"
#include "proto_wire_decode.h"

static void text_append(proto_text *text, const void *data, size_t len) {
  /* The capacity checked here: the scratch rarely grows, and the call
   * that checks it was most of an append (callgrind). */
  if (text->len + len > text->cap)
    tm_vec_reserve(text, text->len + len);
  if (len)
    memcpy(text->data + text->len, data, len);
  text->len += len;
}

/* Keys built from parts ("debug.size.width", "debug.list[2]") recur on
 * most events but have no interned entry to cache their id in: a small
 * direct-mapped cache of recent ones, by the key's text, saves the host
 * pool's lookup, whose table (every string of the trace, most of them
 * arg values seen once) misses the CPU caches. Longer keys go to the pool. */
#define ARG_KEY_CACHE_SLOTS 512
#define ARG_KEY_CACHE_TEXT 52

typedef struct arg_key_slot {
  tm_str_id id; /* 0: empty */
  uint32_t len;
  char text[ARG_KEY_CACHE_TEXT];
} arg_key_slot;

struct proto_arg_key_cache {
  arg_key_slot slots[ARG_KEY_CACHE_SLOTS];
};

/* Eight bytes at a time, each word mixed by a multiply and a shift (FNV-1a
 * byte by byte was half of intern_key's instructions). */
static uint32_t key_hash(const char *text, size_t len) {
  uint64_t h = 0x9e3779b97f4a7c15u ^ len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, text + i, sizeof w);
    h = (h ^ w) * 0xff51afd7ed558ccdu;
    h ^= h >> 32;
  }
  if (i < len) {
    uint64_t w = 0;
    memcpy(&w, text + i, len - i);
    h = (h ^ w) * 0xff51afd7ed558ccdu;
    h ^= h >> 32;
  }
  return (uint32_t)(h ^ (h >> 29));
}

static tm_str_id intern_key(proto_context *ctx, const char *text, size_t len) {
  if (len > ARG_KEY_CACHE_TEXT)
    return proto_intern(ctx, text, len);
  if (!ctx->arg_keys) {
    ctx->arg_keys = proto_xrealloc(NULL, sizeof *ctx->arg_keys);
    memset(ctx->arg_keys, 0, sizeof *ctx->arg_keys);
  }
  arg_key_slot *slot = &ctx->arg_keys->slots[key_hash(text, len) % ARG_KEY_CACHE_SLOTS];
  if (slot->id && slot->len == len && memcmp(slot->text, text, len) == 0)
    return slot->id;
  tm_str_id id = proto_intern(ctx, text, len);
  slot->id = id;
  slot->len = (uint32_t)len;
  memcpy(slot->text, text, len);
  return id;
}

/* Adds the arg `key` = `value`. `key_id`, when not NULL, caches the host
 * id of `key` (0: not known yet); without it the key goes through the
 * cache above. */
static void add_arg(proto_context *ctx, const proto_text *key, tm_str_id *key_id,
                    tm_arg_value value) {
  tm_str_id id = key_id ? *key_id : 0;
  if (!id)
    id = key_id ? proto_intern(ctx, key->data, key->len) : intern_key(ctx, key->data, key->len);
  if (key_id)
    *key_id = id;
  ctx->s->args_add(ctx->host, id, value);
}

/* Appends "[index]" to `key` (snprintf was 4% of an import's
 * instructions on annotations with arrays). */
static void append_index(proto_text *key, uint32_t index) {
  char digits[12];
  size_t n = 0;
  do {
    digits[n++] = (char)('0' + index % 10);
    index /= 10;
  } while (index);
  tm_vec_reserve(key, key->len + n + 2);
  key->data[key->len++] = '[';
  while (n)
    key->data[key->len++] = digits[--n];
  key->data[key->len++] = ']';
}

/* The annotation's name: inline, or interned on the sequence (then
 * `*entry` is its entry, else NULL). Returns false if it has none. When
 * the name is the first field, *values is where the fields after it
 * start (the annotation's values are read from there, not walked past the
 * name a second time); else it is `data`. */
static inline __attribute__((always_inline)) bool
annotation_name(proto_sequence *seq, const uint8_t *data, size_t len,
                            const char **name, size_t *name_len,
                            proto_interned **entry, const uint8_t **values) {
  *entry = NULL;
  *values = data;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  bool first = true;
  while (pw_next(&c, &f)) {
    if (f.number == 10 && f.wire_type == PW_LENGTH_DELIMITED) {
      *name = (const char *)f.data;
      *name_len = f.len;
      if (first)
        *values = c.p;
      return true;
    }
    if (f.number == 1 && f.wire_type == PW_VARINT) {
      proto_interned *e = proto_sequence_entry(seq, PROTO_INTERN_DEBUG_NAME, f.value);
      if (!e)
        return false;
      *name = proto_sequence_borrow_text(seq, e);
      *name_len = e->len;
      *entry = e;
      if (first)
        *values = c.p;
      return true;
    }
    first = false;
  }
  return false;
}

/* Writes "debug.<name>" into `key`. */
static void top_level_key(proto_text *key, const char *name, size_t name_len) {
  key->len = 0;
  text_append(key, "debug.", 6);
  text_append(key, name, name_len);
}

/* Adds the args of one annotation whose key is in `key` (its host id
 * cached in `*key_id` when not NULL). With `name` not NULL (a top-level
 * annotation whose key's id is cached), `key` is empty and its text,
 * "debug.<name>", is written only if a nested entry needs it. Returns
 * false if it is malformed. */
static bool add_annotation(proto_context *ctx, proto_sequence *seq, proto_text *key,
                           tm_str_id *key_id, const char *name, size_t name_len,
                           const uint8_t *data, size_t len, int depth) {
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
      tm_str_id str;
      value.type = TM_ARG_STRING;
      value.u.str_id = proto_sequence_lookup_str(seq, PROTO_INTERN_DEBUG_STRING, f.value, &str)
                           ? str
                           : proto_intern(ctx, "", 0);
      break;
    }
    case 11: { /* dict entry: key.<name> */
      if (f.wire_type != PW_LENGTH_DELIMITED)
        return false;
      leaf = false;
      const char *entry_name;
      size_t entry_name_len;
      proto_interned *entry;
      const uint8_t *values;
      if (!annotation_name(seq, f.data, f.len, &entry_name, &entry_name_len, &entry, &values))
        break;
      if (name) {
        top_level_key(key, name, name_len);
        key_len = key->len;
        name = NULL;
      }
      text_append(key, ".", 1);
      text_append(key, entry_name, entry_name_len);
      bool ok = add_annotation(ctx, seq, key, NULL, NULL, 0, values,
                               f.len - (size_t)(values - f.data), depth + 1);
      key->len = key_len;
      if (!ok)
        return false;
      break;
    }
    case 12: { /* array element: key[i] */
      if (f.wire_type != PW_LENGTH_DELIMITED)
        return false;
      leaf = false;
      if (name) {
        top_level_key(key, name, name_len);
        key_len = key->len;
        name = NULL;
      }
      append_index(key, array_index++);
      bool ok = add_annotation(ctx, seq, key, NULL, NULL, 0, f.data, f.len, depth + 1);
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
    const uint8_t *values;
    if (!annotation_name(seq, data, len, &name, &name_len, &entry, &values))
      continue; /* an annotation without a (known) name has no key */
    /* The key of an interned name is the same every time: interned once,
     * and its text written only while its id is not known yet (or for
     * nested entries). */
    bool cached = entry && entry->debug_key;
    if (cached)
      key->len = 0;
    else
      top_level_key(key, name, name_len);
    if (!add_annotation(ctx, seq, key, entry ? &entry->debug_key : NULL,
                        cached ? name : NULL, name_len, values,
                        len - (size_t)(values - data), 0))
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
