/*
 * Per packet sequence state (trusted_packet_sequence_id): incremental state
 * validity, TracePacketDefaults, the default thread, interned data and
 * incremental counter values.
 *
 * Invariants (docs/formats.md §1.3): a sequence starts invalid; a
 * clear starts a new generation (interned entries, defaults and counter
 * values dropped, default thread kept) and makes it valid; a loss makes it
 * invalid until the next clear, keeping the defaults. Interned strings are
 * resolved to host string ids when they arrive, so a lookup is one array
 * read (a map probe for iids from PROTO_INTERN_DENSE_IIDS on) and no
 * string work; stack profile entries (proto_stack_table.h) are resolved
 * by proto_stack_profile.h when first used. Two files never share a
 * sequence table.
 */
#ifndef TM_PROTO_SEQUENCE_STATE_H
#define TM_PROTO_SEQUENCE_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "proto_map.h"
#include "proto_stack_table.h"
#include "proto_vec.h"

typedef enum proto_intern_kind {
  PROTO_INTERN_CATEGORY = 0,   /* InternedData 1 event_categories */
  PROTO_INTERN_EVENT_NAME,     /* 2 event_names */
  PROTO_INTERN_DEBUG_NAME,     /* 3 debug_annotation_names */
  PROTO_INTERN_DEBUG_STRING,   /* 29 debug_annotation_string_values */
  PROTO_INTERN_CORRELATION,    /* 43 correlation_id_str */
  PROTO_INTERN_FUNCTION_NAME,  /* 5 function_names */
  PROTO_INTERN_BUILD_ID,       /* 16 build_ids (raw bytes: str is 0) */
  PROTO_INTERN_MAPPING_PATH,   /* 17 mapping_paths (str is 0) */
  PROTO_INTERN_SOURCE_LOCATION, /* 4 source_locations: the whole
                                   SourceLocation message (str is 0) */
  PROTO_INTERN_KERNEL_SYMBOL,  /* 26 kernel_symbols (ftrace's symbolized
                                  kernel functions) */
  PROTO_INTERN_KINDS
} proto_intern_kind;

typedef struct proto_interned {
  tm_str_id str;   /* the entry's text, interned by the host (0 for
                      kinds only ever read as text, see above) */
  uint32_t off;    /* the text in the sequence's arena */
  uint32_t len;
  /* Debug annotation names: the host id of the arg key "debug.<name>",
   * 0 until first needed (an annotation name recurs on most events). */
  tm_str_id debug_key;
} proto_interned;

/* Interned iids below this are found through a direct array: producers
 * number their entries from 1, and an array of 4-byte slots keeps a
 * sequence's lookups in a few cache lines (64 sequences' hash maps did not
 * stay in cache). Larger iids go to the map. */
#ifndef PROTO_INTERN_DENSE_IIDS
#define PROTO_INTERN_DENSE_IIDS 4096u
#endif

/* A direct slot: the entry and a copy of its host string id, so that the
 * lookups of every event (names, categories, string values) read one
 * slot and not the entry behind it too. Both reads missed the caches
 * with 64 sequences' tables in turn: the entry's was a tenth of a
 * realistic TrackEvent import's time (perf). */
typedef struct proto_dense_slot {
  uint32_t index_plus_one; /* 0: none */
  tm_str_id str;           /* entries.data[index_plus_one - 1].str */
} proto_dense_slot;

typedef struct proto_intern_table {
  proto_map index; /* iid -> entry, for iids >= PROTO_INTERN_DENSE_IIDS */
  /* dense.data[iid] for iids < dense.len, all in the current generation;
   * a clear sets dense.len to 0 and growth zeroes the slots it adds. */
  TM_VEC(proto_dense_slot) dense;
  TM_VEC(proto_interned) entries;
} proto_intern_table;

typedef struct proto_sequence {
  uint32_t id;
  bool state_valid;
  /* TracePacketDefaults: survive a loss, dropped by a clear. */
  uint32_t default_clock_id; /* 0: none */
  bool has_default_track_uuid;
  uint64_t default_track_uuid;
  proto_u64_vec default_extra_counter_uuids;
  proto_u64_vec default_extra_double_counter_uuids;
  /* Default thread (ThreadDescriptor): kept across clears. */
  tm_thread_ref thread;  /* 0: none */
  uint32_t thread_machine; /* reader machine index of `thread` */
  int64_t thread_pid, thread_tid; /* of `thread`: legacy overrides replace one */
  /* Bases of the legacy delta fields, in µs. */
  int64_t timestamp_us;
  int64_t thread_time_us;
  proto_intern_table tables[PROTO_INTERN_KINDS];
  TM_VEC(char) arena;
  proto_stack_table stacks; /* mappings, frames, callstacks */
  /* Incremental counter tracks: running value by track uuid. */
  proto_map counter_index;
  TM_VEC(double) counter_values;
} proto_sequence;

typedef struct proto_sequence_table {
  proto_map index; /* sequence id -> items index */
  TM_VEC(proto_sequence *) items;
  proto_sequence *last; /* most recent lookup: packets come in runs */
} proto_sequence_table;

proto_sequence *proto_sequence_get_slow_(proto_sequence_table *table, uint32_t id);

/* The sequence `id`, created (invalid, no defaults) on first use. Packets
 * come in runs of one sequence: the last one is checked inline. */
static inline proto_sequence *proto_sequence_get(proto_sequence_table *table,
                                                 uint32_t id) {
  if (table->last && table->last->id == id)
    return table->last;
  return proto_sequence_get_slow_(table, id);
}
void proto_sequence_table_free(proto_sequence_table *table);

/* SEQ_INCREMENTAL_STATE_CLEARED: a new generation, valid. */
void proto_sequence_clear(proto_sequence *seq);

/* Stores the InternedData message `data` (a packet's field 12) in the
 * sequence's current generation. Returns false if it is malformed. */
bool proto_sequence_add_interned_data(proto_sequence *seq,
                                      const tm_host_services *s, tm_host *host,
                                      const uint8_t *data, size_t len);

/* The index of entry `iid` in `table`, or false. Inline: several lookups
 * per event. */
static inline bool proto_intern_find(const proto_intern_table *table, uint64_t iid,
                                     uint32_t *index) {
  if (iid < PROTO_INTERN_DENSE_IIDS) {
    if (iid >= table->dense.len || table->dense.data[iid].index_plus_one == 0)
      return false;
    *index = table->dense.data[iid].index_plus_one - 1;
    return true;
  }
  return proto_map_get(&table->index, iid, index);
}

/* The entry `iid` of `kind` in the current generation, writable (for its
 * cached fields), or NULL. */
static inline proto_interned *proto_sequence_entry(proto_sequence *seq,
                                                   proto_intern_kind kind,
                                                   uint64_t iid) {
  uint32_t index;
  if (iid == 0 || !proto_intern_find(&seq->tables[kind], iid, &index))
    return NULL;
  return &seq->tables[kind].entries.data[index];
}

/* The same, read-only. */
static inline const proto_interned *proto_sequence_lookup(const proto_sequence *seq,
                                                          proto_intern_kind kind,
                                                          uint64_t iid) {
  uint32_t index;
  if (iid == 0 || !proto_intern_find(&seq->tables[kind], iid, &index))
    return NULL;
  return &seq->tables[kind].entries.data[index];
}
/* The host string id of entry `iid` of `kind` in *str (0 for kinds kept
 * only as text), or false if the sequence has no such entry: the same as
 * proto_sequence_lookup()->str, in one read for small iids. */
static inline bool proto_sequence_lookup_str(const proto_sequence *seq,
                                             proto_intern_kind kind, uint64_t iid,
                                             tm_str_id *str) {
  const proto_intern_table *table = &seq->tables[kind];
  if (iid - 1 < PROTO_INTERN_DENSE_IIDS - 1) { /* 0 < iid < PROTO_INTERN_DENSE_IIDS */
    if (iid >= table->dense.len || table->dense.data[iid].index_plus_one == 0)
      return false;
    *str = table->dense.data[iid].str;
    return true;
  }
  const proto_interned *e = proto_sequence_lookup(seq, kind, iid);
  if (!e)
    return false;
  *str = e->str;
  return true;
}

/* Starts loading the direct slot of entry `iid` of `kind`, for a lookup
 * a little later (a TrackEvent's name and category iids are decoded
 * before the rest of the event, and looked up after it): the slot's
 * cache miss then overlaps the decoding. */
static inline void proto_sequence_prefetch(const proto_sequence *seq, proto_intern_kind kind,
                                           uint64_t iid) {
  const proto_intern_table *table = &seq->tables[kind];
  if (iid < table->dense.len)
    __builtin_prefetch(&table->dense.data[iid]);
}

static inline const char *proto_sequence_borrow_text(const proto_sequence *seq,
                                                     const proto_interned *e) {
  return seq->arena.data + e->off;
}

/* The running value slot of incremental counter track `uuid` (0 at first). */
double *proto_sequence_counter_slot(proto_sequence *seq, uint64_t uuid);

#endif /* TM_PROTO_SEQUENCE_STATE_H */
