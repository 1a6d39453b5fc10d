/*
 * Stack profile interning tables of one packet sequence generation:
 * InternedData mappings (19), frames (6) and callstacks (7), whose ids
 * point at other interned entries (function_names 5, build_ids 16,
 * mapping_paths 17; docs/formats.md §1.10), stored raw as they arrive.
 *
 * The sequence state (proto_sequence_state.h) owns one table per
 * sequence; resolving its entries into host refs is proto_stack_profile.h's
 * job, which receives the context and the sequence, so this storage needs
 * neither.
 *
 * Invariants: an entry's id lists live in `ids` (offset and length on the
 * entry); a later entry with the same iid replaces the earlier one in the
 * index; a clear drops every entry with the rest of the generation.
 */
#ifndef TM_PROTO_STACK_TABLE_H
#define TM_PROTO_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "proto_map.h"
#include "proto_vec.h"

typedef struct proto_stack_mapping {
  uint64_t build_id_iid;
  uint64_t start, end, exact_offset, load_bias;
  uint32_t paths_start, paths_len; /* path component iids, in `ids` */
  tm_mapping_ref ref;              /* 0 until resolved */
} proto_stack_mapping;

typedef struct proto_stack_frame {
  uint64_t function_name_iid;
  uint64_t mapping_iid;
  uint64_t rel_pc;
  tm_frame_ref ref; /* 0 until resolved */
} proto_stack_frame;

typedef struct proto_stack_callstack {
  uint32_t frames_start, frames_len; /* frame iids, outermost first, in `ids` */
  tm_callsite_ref ref;               /* 0 until resolved */
} proto_stack_callstack;

typedef struct proto_stack_table {
  proto_map mapping_index; /* iid -> mappings index */
  proto_map frame_index;
  proto_map callstack_index;
  TM_VEC(proto_stack_mapping) mappings;
  TM_VEC(proto_stack_frame) frames;
  TM_VEC(proto_stack_callstack) callstacks;
  proto_u64_vec ids;
  /* callsite_by_iid.data[iid]: the resolved callsite of callstack `iid`
   * (a copy of its entry's ref; 0 until resolved) for iids below
   * PROTO_STACK_DIRECT_IIDS, so a sample's lookup reads one slot instead
   * of the map and the entry, both cache misses with many callstacks. A
   * new entry for the iid zeroes its slot; a clear drops them all (len 0:
   * slots are zeroed as the table grows into them again). */
  TM_VEC(tm_callsite_ref) callsite_by_iid;
} proto_stack_table;

#define PROTO_STACK_DIRECT_IIDS 65536u

void proto_stack_table_clear(proto_stack_table *table);
void proto_stack_table_free(proto_stack_table *table);

/* Stores one InternedData entry message of field `field` (6, 7 or 19).
 * Returns false if it is malformed. */
bool proto_stack_table_add(proto_stack_table *table, uint32_t field,
                           const uint8_t *data, size_t len);

#endif /* TM_PROTO_STACK_TABLE_H */
