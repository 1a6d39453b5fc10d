/* Stack profile interning and lazy resolution (see proto_stack_profile.h). */
#include "proto_stack_profile.h"

#include <string.h>

#include "proto_context.h"
#include "proto_sequence_state.h"
#include "proto_wire.h"

void proto_stack_table_clear(proto_stack_table *table) {
  proto_map_clear(&table->mapping_index);
  proto_map_clear(&table->frame_index);
  proto_map_clear(&table->callstack_index);
  table->mappings.len = 0;
  table->frames.len = 0;
  table->callstacks.len = 0;
  table->ids.len = 0;
}

void proto_stack_table_free(proto_stack_table *table) {
  proto_map_free(&table->mapping_index);
  proto_map_free(&table->frame_index);
  proto_map_free(&table->callstack_index);
  proto_vec_free(&table->mappings);
  proto_vec_free(&table->frames);
  proto_vec_free(&table->callstacks);
  proto_vec_free(&table->ids);
}

/* Appends the ids of a repeated uint64 field to `ids`; false if malformed. */
static bool push_ids(proto_stack_table *table, const pw_field *f) {
  pw_repeated r = pw_repeated_of(f, false);
  uint64_t v;
  while (pw_repeated_next(&r, &v))
    proto_vec_push(&table->ids, v);
  return !r.error;
}

/* Reads a varint field into *out; false if it has another wire type. */
static bool varint_into(const pw_field *f, uint64_t *out) {
  if (f->wire_type != PW_VARINT)
    return false;
  *out = f->value;
  return true;
}

static bool add_mapping(proto_stack_table *table, pw_cursor *c, uint64_t *iid) {
  proto_stack_mapping m = {.paths_start = (uint32_t)table->ids.len};
  pw_field f;
  bool ok = true;
  while (ok && pw_next(c, &f)) {
    switch (f.number) {
    case 1:
      ok = varint_into(&f, iid);
      break;
    case 2:
      ok = varint_into(&f, &m.build_id_iid);
      break;
    case 4:
      ok = varint_into(&f, &m.start);
      break;
    case 5:
      ok = varint_into(&f, &m.end);
      break;
    case 6:
      ok = varint_into(&f, &m.load_bias);
      break;
    case 8:
      ok = varint_into(&f, &m.exact_offset);
      break;
    case 7:
      ok = push_ids(table, &f);
      break;
    default:
      break; /* start_offset (3) has no column in the host */
    }
  }
  if (!ok || c->error != PW_OK || *iid == 0) {
    table->ids.len = m.paths_start;
    return ok && c->error == PW_OK;
  }
  m.paths_len = (uint32_t)(table->ids.len - m.paths_start);
  /* A later entry with the same iid replaces the earlier one. */
  proto_map_put(&table->mapping_index, *iid, (uint32_t)table->mappings.len);
  proto_vec_push(&table->mappings, m);
  return true;
}

static bool add_frame(proto_stack_table *table, pw_cursor *c, uint64_t *iid) {
  proto_stack_frame fr = {0};
  pw_field f;
  bool ok = true;
  while (ok && pw_next(c, &f)) {
    switch (f.number) {
    case 1:
      ok = varint_into(&f, iid);
      break;
    case 2:
      ok = varint_into(&f, &fr.function_name_iid);
      break;
    case 3:
      ok = varint_into(&f, &fr.mapping_iid);
      break;
    case 4:
      ok = varint_into(&f, &fr.rel_pc);
      break;
    default:
      break; /* source path, line and kind have no host column */
    }
  }
  if (!ok || c->error != PW_OK)
    return false;
  if (*iid) {
    proto_map_put(&table->frame_index, *iid, (uint32_t)table->frames.len);
    proto_vec_push(&table->frames, fr);
  }
  return true;
}

static bool add_callstack(proto_stack_table *table, pw_cursor *c, uint64_t *iid) {
  proto_stack_callstack cs = {.frames_start = (uint32_t)table->ids.len};
  pw_field f;
  bool ok = true;
  while (ok && pw_next(c, &f)) {
    if (f.number == 1)
      ok = varint_into(&f, iid);
    else if (f.number == 2)
      ok = push_ids(table, &f);
  }
  if (!ok || c->error != PW_OK || *iid == 0) {
    table->ids.len = cs.frames_start;
    return ok && c->error == PW_OK;
  }
  cs.frames_len = (uint32_t)(table->ids.len - cs.frames_start);
  proto_map_put(&table->callstack_index, *iid, (uint32_t)table->callstacks.len);
  proto_vec_push(&table->callstacks, cs);
  return true;
}

bool proto_stack_table_add(proto_stack_table *table, uint32_t field,
                           const uint8_t *data, size_t len) {
  if (table->ids.len + len > UINT32_MAX)
    return false; /* beyond what offsets address; the packet limit prevents it */
  pw_cursor c = pw_cursor_of(data, len);
  uint64_t iid = 0;
  switch (field) {
  case 19: return add_mapping(table, &c, &iid);
  case 6: return add_frame(table, &c, &iid);
  case 7: return add_callstack(table, &c, &iid);
  default: return true;
  }
}

/* --- resolution ------------------------------------------------------------ */

static const proto_interned *lookup_string(proto_context *ctx, proto_sequence *seq,
                                           proto_intern_kind kind, uint64_t iid) {
  const proto_interned *e = proto_sequence_lookup(seq, kind, iid);
  if (!e)
    proto_count(ctx, "stackprofile_invalid_string_id");
  return e;
}

/* Chrome once wrote its module ids as 33 characters of hex text, not raw
 * bytes: trace_processor keeps a build id of exactly that length as it is
 * (BuildId's IsHexModuleId). */
#define HEX_MODULE_ID_LEN 33

/* The context's text scratch is free here: resolution runs
 * after an event's categories and annotation keys were handed to the host.
 *
 * Build ids arrive as raw bytes and are shown as the lowercase hex of
 * those bytes, as trace_processor shows them, even when the bytes are
 * themselves hex text ("a1b2" becomes "61316232"); an empty one is NULL,
 * and one of 33 bytes is kept as it is. */
static tm_str_id build_id_string(proto_context *ctx, proto_sequence *seq,
                                 const proto_interned *e) {
  const char *raw = proto_sequence_borrow_text(seq, e);
  if (e->len == 0)
    return 0;
  if (e->len == HEX_MODULE_ID_LEN)
    return proto_intern(ctx, raw, e->len);
  static const char digits[] = "0123456789abcdef";
  proto_text *text = &ctx->text;
  text->len = 0;
  proto_vec_reserve(text, (size_t)e->len * 2);
  for (uint32_t i = 0; i < e->len; i++) {
    uint8_t b = (uint8_t)raw[i];
    text->data[text->len++] = digits[b >> 4];
    text->data[text->len++] = digits[b & 15];
  }
  return proto_intern(ctx, text->data, text->len);
}

/* The mapping's name: "/" + its path components joined by "/", a leading
 * "//" collapsed (docs/formats.md §1.10). */
static bool mapping_name(proto_context *ctx, proto_sequence *seq,
                         const proto_stack_mapping *m, tm_str_id *out) {
  proto_text *text = &ctx->text;
  text->len = 0;
  for (uint32_t i = 0; i < m->paths_len; i++) {
    uint64_t iid = seq->stacks.ids.data[m->paths_start + i];
    const proto_interned *e = lookup_string(ctx, seq, PROTO_INTERN_MAPPING_PATH, iid);
    if (!e)
      return false;
    proto_vec_reserve(text, text->len + 1 + e->len);
    text->data[text->len++] = '/';
    memcpy(text->data + text->len, proto_sequence_borrow_text(seq, e), e->len);
    text->len += e->len;
  }
  if (text->len == 0) { /* no components: the empty name */
    *out = proto_intern(ctx, "", 0);
    return true;
  }
  size_t skip = text->len >= 2 && text->data[0] == '/' && text->data[1] == '/';
  *out = proto_intern(ctx, text->data + skip, text->len - skip);
  return true;
}

static bool resolve_mapping(proto_context *ctx, proto_sequence *seq, uint64_t iid,
                            tm_mapping_ref *out) {
  proto_stack_table *table = &seq->stacks;
  uint32_t index;
  if (!proto_map_get(&table->mapping_index, iid, &index)) {
    proto_count(ctx, "stackprofile_invalid_mapping_id");
    return false;
  }
  proto_stack_mapping *m = &table->mappings.data[index];
  if (!m->ref) {
    tm_str_id build_id = 0, name = 0;
    if (m->build_id_iid) {
      const proto_interned *e =
          lookup_string(ctx, seq, PROTO_INTERN_BUILD_ID, m->build_id_iid);
      if (!e)
        return false;
      build_id = build_id_string(ctx, seq, e);
    }
    if (!mapping_name(ctx, seq, m, &name))
      return false;
    m->ref = ctx->s->mapping(ctx->host, name, build_id, m->start, m->end, m->exact_offset,
                             m->load_bias);
  }
  *out = m->ref;
  return true;
}

static bool resolve_frame(proto_context *ctx, proto_sequence *seq, uint64_t iid,
                          tm_frame_ref *out) {
  proto_stack_table *table = &seq->stacks;
  uint32_t index;
  if (!proto_map_get(&table->frame_index, iid, &index)) {
    proto_count(ctx, "stackprofile_invalid_frame_id");
    return false;
  }
  if (!table->frames.data[index].ref) {
    proto_stack_frame fr = table->frames.data[index];
    tm_str_id name = 0;
    tm_mapping_ref mapping = 0;
    if (fr.function_name_iid) {
      const proto_interned *e =
          lookup_string(ctx, seq, PROTO_INTERN_FUNCTION_NAME, fr.function_name_iid);
      if (!e)
        return false;
      name = e->str;
    } else {
      name = proto_intern(ctx, "", 0);
    }
    if (fr.mapping_iid && !resolve_mapping(ctx, seq, fr.mapping_iid, &mapping))
      return false;
    /* Resolving the mapping does not grow `frames`: the index still holds. */
    table->frames.data[index].ref = ctx->s->frame(ctx->host, name, mapping, fr.rel_pc);
  }
  *out = table->frames.data[index].ref;
  return true;
}

tm_callsite_ref proto_stack_callsite(proto_context *ctx, proto_sequence *seq,
                                     uint64_t iid) {
  proto_stack_table *table = &seq->stacks;
  uint32_t index;
  if (!proto_map_get(&table->callstack_index, iid, &index)) {
    proto_count(ctx, "stackprofile_invalid_callstack_id");
    return 0;
  }
  proto_stack_callstack *cs = &table->callstacks.data[index];
  if (cs->ref)
    return cs->ref;
  tm_callsite_ref callsite = 0;
  for (uint32_t i = 0; i < cs->frames_len; i++) {
    tm_frame_ref frame;
    if (!resolve_frame(ctx, seq, table->ids.data[cs->frames_start + i], &frame))
      return 0;
    callsite = ctx->s->callsite(ctx->host, callsite, frame);
  }
  cs->ref = callsite;
  return callsite;
}

/* One InlineCallstack.InlineFrame: its function name becomes the frame
 * name; the frame has no mapping and rel_pc 0 (source file and line have
 * no column in stack_profile_frame). */
static bool inline_frame(proto_context *ctx, const pw_field *outer, tm_frame_ref *out) {
  if (outer->wire_type != PW_LENGTH_DELIMITED)
    return false;
  pw_cursor c = pw_cursor_of(outer->data, outer->len);
  pw_field f;
  const uint8_t *name = (const uint8_t *)"";
  size_t name_len = 0;
  while (pw_next(&c, &f)) {
    if (f.number == 1) {
      if (f.wire_type != PW_LENGTH_DELIMITED)
        return false;
      name = f.data;
      name_len = f.len;
    }
  }
  if (c.error != PW_OK)
    return false;
  tm_str_id name_id = proto_intern(ctx, (const char *)name, name_len);
  *out = ctx->s->frame(ctx->host, name_id, 0, 0);
  return true;
}

bool proto_stack_inline_callsite(proto_context *ctx, const uint8_t *data, size_t len,
                                 tm_callsite_ref *out) {
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  tm_callsite_ref callsite = 0;
  while (pw_next(&c, &f)) {
    if (f.number != 1)
      continue;
    tm_frame_ref frame;
    if (!inline_frame(ctx, &f, &frame))
      return false;
    callsite = ctx->s->callsite(ctx->host, callsite, frame);
  }
  if (c.error != PW_OK)
    return false;
  *out = callsite;
  return true;
}
