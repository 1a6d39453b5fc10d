/* Stack profile interning tables (see proto_stack_table.h). */
#include "proto_stack_table.h"

#include "proto_wire_decode.h"

void proto_stack_table_clear(proto_stack_table *table) {
  proto_map_clear(&table->mapping_index);
  proto_map_clear(&table->frame_index);
  proto_map_clear(&table->callstack_index);
  /* No slot is read at or beyond len, and remember_callsite() zeroes the
   * slots it grows into: dropping the length forgets them all. */
  table->callsite_by_iid.len = 0;
  table->mappings.len = 0;
  table->frames.len = 0;
  table->callstacks.len = 0;
  table->ids.len = 0;
}

void proto_stack_table_free(proto_stack_table *table) {
  proto_map_free(&table->mapping_index);
  proto_map_free(&table->frame_index);
  proto_map_free(&table->callstack_index);
  tm_vec_free(&table->mappings);
  tm_vec_free(&table->frames);
  tm_vec_free(&table->callstacks);
  tm_vec_free(&table->ids);
  tm_vec_free(&table->callsite_by_iid);
}

/* Appends the ids of a repeated uint64 field to `ids`; false if malformed. */
static bool push_ids(proto_stack_table *table, const pw_field *f) {
  pw_repeated r = pw_repeated_of(f, false);
  uint64_t v;
  while (pw_repeated_next(&r, &v))
    tm_vec_push(&table->ids, v);
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
  tm_vec_push(&table->mappings, m);
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
    tm_vec_push(&table->frames, fr);
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
  tm_vec_push(&table->callstacks, cs);
  if (*iid < table->callsite_by_iid.len)
    table->callsite_by_iid.data[*iid] = 0; /* the new entry is not resolved */
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
