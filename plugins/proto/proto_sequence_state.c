/* Per packet sequence state (see proto_sequence_state.h). */
#include "proto_sequence_state.h"

#include <string.h>

#include "proto_wire_decode.h"

proto_sequence *proto_sequence_get_slow_(proto_sequence_table *table, uint32_t id) {
  uint32_t index;
  if (!proto_map_get(&table->index, id, &index)) {
    proto_sequence *seq = proto_xrealloc(NULL, sizeof *seq);
    memset(seq, 0, sizeof *seq);
    seq->id = id;
    index = (uint32_t)table->items.len;
    tm_vec_push(&table->items, seq);
    proto_map_put(&table->index, id, index);
  }
  table->last = table->items.data[index];
  return table->last;
}

static void sequence_free(proto_sequence *seq) {
  tm_vec_free(&seq->default_extra_counter_uuids);
  tm_vec_free(&seq->default_extra_double_counter_uuids);
  for (int k = 0; k < PROTO_INTERN_KINDS; k++) {
    proto_map_free(&seq->tables[k].index);
    tm_vec_free(&seq->tables[k].dense);
    tm_vec_free(&seq->tables[k].entries);
  }
  tm_vec_free(&seq->arena);
  proto_stack_table_free(&seq->stacks);
  proto_map_free(&seq->counter_index);
  tm_vec_free(&seq->counter_values);
  free(seq);
}

void proto_sequence_table_free(proto_sequence_table *table) {
  for (size_t i = 0; i < table->items.len; i++)
    sequence_free(table->items.data[i]);
  tm_vec_free(&table->items);
  proto_map_free(&table->index);
  table->last = NULL;
}

void proto_sequence_clear(proto_sequence *seq) {
  seq->state_valid = true;
  seq->default_clock_id = 0;
  seq->has_default_track_uuid = false;
  seq->default_track_uuid = 0;
  seq->default_extra_counter_uuids.len = 0;
  seq->default_extra_double_counter_uuids.len = 0;
  seq->timestamp_us = 0;
  seq->thread_time_us = 0;
  for (int k = 0; k < PROTO_INTERN_KINDS; k++) {
    proto_intern_table *table = &seq->tables[k];
    proto_map_clear(&table->index);
    table->dense.len = 0; /* intern() zeroes the slots it grows into */
    table->entries.len = 0;
  }
  seq->arena.len = 0;
  proto_stack_table_clear(&seq->stacks);
  proto_map_clear(&seq->counter_index);
  seq->counter_values.len = 0;
}

static void intern(proto_sequence *seq, proto_intern_kind kind, uint64_t iid,
                   const tm_host_services *s, tm_host *host, const uint8_t *text,
                   size_t len) {
  if (len > UINT32_MAX || seq->arena.len + len + 1 > UINT32_MAX)
    return; /* beyond what offsets address; the packet limit prevents it */
  /* Build ids, path components and source locations are only read back
   * from the arena. */
  bool to_host = kind != PROTO_INTERN_BUILD_ID && kind != PROTO_INTERN_MAPPING_PATH &&
                 kind != PROTO_INTERN_SOURCE_LOCATION;
  proto_interned entry = {
      .str = to_host ? s->intern_string(host, (const char *)text, len) : 0,
      .off = (uint32_t)seq->arena.len,
      .len = (uint32_t)len,
      .debug_key = 0,
  };
  tm_vec_reserve(&seq->arena, seq->arena.len + len + 1);
  if (len)
    memcpy(seq->arena.data + seq->arena.len, text, len);
  seq->arena.data[seq->arena.len + len] = '\0';
  seq->arena.len += len + 1;
  proto_intern_table *table = &seq->tables[kind];
  /* A later entry with the same iid replaces the earlier one. */
  uint32_t index = (uint32_t)table->entries.len;
  if (iid < PROTO_INTERN_DENSE_IIDS) {
    size_t need = (size_t)iid + 1;
    if (need > table->dense.len) {
      /* Slots from len on hold nothing of this generation: zero them. */
      tm_vec_reserve(&table->dense, need);
      memset(table->dense.data + table->dense.len, 0,
             (need - table->dense.len) * sizeof *table->dense.data);
      table->dense.len = need;
    }
    table->dense.data[iid] = (proto_dense_slot){index + 1, entry.str};
  } else {
    proto_map_put(&table->index, iid, index);
  }
  tm_vec_push(&table->entries, entry);
}

/* One entry message: `1 iid` plus its text in `text_field` (0: the whole
 * message is kept). */
static bool add_entry(proto_sequence *seq, proto_intern_kind kind,
                      uint32_t text_field, const tm_host_services *s,
                      tm_host *host, const pw_field *outer) {
  if (outer->wire_type != PW_LENGTH_DELIMITED)
    return false;
  pw_cursor c = pw_cursor_of(outer->data, outer->len);
  pw_field f;
  uint64_t iid = 0;
  const uint8_t *text = NULL;
  size_t text_len = 0;
  while (pw_next(&c, &f)) {
    if (f.number == 1 && f.wire_type == PW_VARINT)
      iid = f.value;
    else if (f.number == text_field && f.wire_type == PW_LENGTH_DELIMITED)
      text = f.data, text_len = f.len;
  }
  if (c.error != PW_OK)
    return false;
  if (text_field == 0)
    text = outer->data, text_len = outer->len;
  if (iid != 0) /* iid 0 always means "not set" */
    intern(seq, kind, iid, s, host, text ? text : (const uint8_t *)"", text_len);
  return true;
}

bool proto_sequence_add_interned_data(proto_sequence *seq,
                                      const tm_host_services *s, tm_host *host,
                                      const uint8_t *data, size_t len) {
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  bool ok = true;
  while (ok && pw_next(&c, &f)) {
    switch (f.number) {
    case 1:
      ok = add_entry(seq, PROTO_INTERN_CATEGORY, 2, s, host, &f);
      break;
    case 2:
      ok = add_entry(seq, PROTO_INTERN_EVENT_NAME, 2, s, host, &f);
      break;
    case 3:
      ok = add_entry(seq, PROTO_INTERN_DEBUG_NAME, 2, s, host, &f);
      break;
    case 29:
      ok = add_entry(seq, PROTO_INTERN_DEBUG_STRING, 2, s, host, &f);
      break;
    case 43:
      ok = add_entry(seq, PROTO_INTERN_CORRELATION, 2, s, host, &f);
      break;
    case 4:
      ok = add_entry(seq, PROTO_INTERN_SOURCE_LOCATION, 0, s, host, &f);
      break;
    case 5:
      ok = add_entry(seq, PROTO_INTERN_FUNCTION_NAME, 2, s, host, &f);
      break;
    case 16:
      ok = add_entry(seq, PROTO_INTERN_BUILD_ID, 2, s, host, &f);
      break;
    case 17:
      ok = add_entry(seq, PROTO_INTERN_MAPPING_PATH, 2, s, host, &f);
      break;
    case 26:
      ok = add_entry(seq, PROTO_INTERN_KERNEL_SYMBOL, 2, s, host, &f);
      break;
    case 6:
    case 7:
    case 19:
      ok = f.wire_type == PW_LENGTH_DELIMITED &&
           proto_stack_table_add(&seq->stacks, f.number, f.data, f.len);
      break;
    default:
      break; /* interned data we do not read */
    }
  }
  return ok && c.error == PW_OK;
}

double *proto_sequence_counter_slot(proto_sequence *seq, uint64_t uuid) {
  uint32_t index;
  if (!proto_map_get(&seq->counter_index, uuid, &index)) {
    index = (uint32_t)seq->counter_values.len;
    tm_vec_push(&seq->counter_values, 0.0);
    proto_map_put(&seq->counter_index, uuid, index);
  }
  return &seq->counter_values.data[index];
}
