/*
 * A writer's interning table: strings → interning ids (iids), per kind of
 * InternedData entry (event names, debug annotation names, ...).
 *
 * One table per writer, used by its thread only. Ids are stable for the
 * writer's life; each entry remembers the incremental-state generation in
 * which the writer last emitted it, so a reset costs nothing here (the
 * next use of an entry emits it again). Strings are copied into the
 * table's own storage.
 *
 * Memory is bounded: past TMR_INTERN_MAX_ENTRIES entries or
 * TMR_INTERN_MAX_BYTES of string bytes, lookups of new strings return NULL
 * and the writer writes them inline instead (a program with unbounded
 * distinct names stays bounded).
 */
#ifndef TMR_INTERN_TABLE_H
#define TMR_INTERN_TABLE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TMR_INTERN_MAX_ENTRIES (1u << 16)
#define TMR_INTERN_MAX_BYTES (4u << 20)

typedef enum tmr_intern_kind {
  TMR_INTERN_EVENT_NAME = 0,   /* InternedData.event_names (2) */
  TMR_INTERN_DEBUG_NAME,       /* debug_annotation_names (3) */
  TMR_INTERN_CORRELATION,      /* correlation_id_str (43) */
  TMR_INTERN_FUNCTION_NAME,    /* function_names (5) */
  TMR_INTERN_BUILD_ID,         /* build_ids (16) */
  TMR_INTERN_MAPPING_PATH,     /* mapping_paths (17) */
  TMR_INTERN_KINDS
} tmr_intern_kind;

typedef struct tmr_intern_entry {
  uint64_t hash;
  const char *str;
  uint32_t len;
  uint8_t kind;
  uint32_t iid;
  uint32_t emitted_generation; /* 0: never */
} tmr_intern_entry;

#define TMR_INTERN_PAGE 256u

/* Entries live in pages and never move (a writer keeps pointers to them
 * while it encodes a packet); `slots` index them by hash. */
typedef struct tmr_intern_table {
  uint32_t *slots; /* open addressing: 0 empty, else entry index + 1 */
  uint32_t mask;   /* capacity - 1 */
  tmr_intern_entry **pages;
  uint32_t n_pages;
  uint32_t count;
  uint32_t next_iid[TMR_INTERN_KINDS];
  size_t bytes;
  GStringChunk *strings;
} tmr_intern_table;

void tmr_intern_table_init(tmr_intern_table *t);
void tmr_intern_table_clear(tmr_intern_table *t);

static inline uint64_t tmr_intern_hash(const char *s, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, s, 8);
    h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    s += 8;
    n -= 8;
  }
  uint64_t v = 0;
  memcpy(&v, s, n);
  h = (h ^ v) * 0x94d049bb133111ebull;
  h ^= h >> 29;
  return h;
}

static inline tmr_intern_entry *tmr_intern_entry_at(const tmr_intern_table *t, uint32_t index) {
  return &t->pages[index / TMR_INTERN_PAGE][index % TMR_INTERN_PAGE];
}

tmr_intern_entry *tmr_intern_add_slow(tmr_intern_table *t, tmr_intern_kind kind, const char *s,
                                      size_t len, uint64_t hash, uint32_t slot);

/* The entry of (kind, s[0..len)), added if new; NULL if the table is full. */
static inline tmr_intern_entry *tmr_intern(tmr_intern_table *t, tmr_intern_kind kind,
                                           const char *s, size_t len) {
  uint64_t hash = tmr_intern_hash(s, len) + (uint64_t)kind;
  uint32_t i = (uint32_t)hash & t->mask;
  for (;;) {
    uint32_t slot = t->slots[i];
    if (!slot)
      return tmr_intern_add_slow(t, kind, s, len, hash, i);
    tmr_intern_entry *e = tmr_intern_entry_at(t, slot - 1);
    if (e->hash == hash && e->len == len && e->kind == kind && memcmp(e->str, s, len) == 0)
      return e;
    i = (i + 1) & t->mask;
  }
}

#endif /* TMR_INTERN_TABLE_H */
