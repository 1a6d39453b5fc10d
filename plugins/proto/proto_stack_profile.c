/* Lazy resolution of stack profile entries into host refs (see
 * proto_stack_profile.h). */
#include "proto_stack_profile.h"

#include <string.h>

#include "proto_context.h"
#include "proto_sequence_state.h"
#include "proto_wire_decode.h"

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
  tm_vec_reserve(text, (size_t)e->len * 2);
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
    tm_vec_reserve(text, text->len + 1 + e->len);
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

/* Remembers the resolved callsite of callstack `iid` in its direct slot. */
static void remember_callsite(proto_stack_table *table, uint64_t iid, tm_callsite_ref ref) {
  if (iid >= PROTO_STACK_DIRECT_IIDS)
    return;
  size_t len = table->callsite_by_iid.len;
  if (iid >= len) {
    /* Slots from len on hold nothing of this generation: zero them. */
    tm_vec_reserve(&table->callsite_by_iid, (size_t)iid + 1);
    memset(table->callsite_by_iid.data + len, 0,
           ((size_t)iid + 1 - len) * sizeof *table->callsite_by_iid.data);
    table->callsite_by_iid.len = (size_t)iid + 1;
  }
  table->callsite_by_iid.data[iid] = ref;
}

tm_callsite_ref proto_stack_callsite(proto_context *ctx, proto_sequence *seq,
                                     uint64_t iid) {
  proto_stack_table *table = &seq->stacks;
  if (iid < table->callsite_by_iid.len && table->callsite_by_iid.data[iid])
    return table->callsite_by_iid.data[iid];
  uint32_t index;
  if (!proto_map_get(&table->callstack_index, iid, &index)) {
    proto_count(ctx, "stackprofile_invalid_callstack_id");
    return 0;
  }
  proto_stack_callstack *cs = &table->callstacks.data[index];
  if (cs->ref) {
    remember_callsite(table, iid, cs->ref);
    return cs->ref;
  }
  tm_callsite_ref callsite = 0;
  for (uint32_t i = 0; i < cs->frames_len; i++) {
    tm_frame_ref frame;
    if (!resolve_frame(ctx, seq, table->ids.data[cs->frames_start + i], &frame))
      return 0;
    callsite = ctx->s->callsite(ctx->host, callsite, frame);
  }
  cs->ref = callsite;
  remember_callsite(table, iid, callsite);
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
