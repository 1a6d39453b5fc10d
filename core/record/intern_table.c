/*
 * A writer's interning table (see intern_table.h). Invariants: the slot
 * array is at most half full, so every probe ends at an empty slot;
 * entries never move once added.
 */
#include "record/intern_table.h"

#include <string.h>

#define INITIAL_SLOTS 64u

void tmr_intern_table_init(tmr_intern_table *t) {
  memset(t, 0, sizeof *t);
  t->slots = g_new0(uint32_t, INITIAL_SLOTS);
  t->mask = INITIAL_SLOTS - 1;
  t->strings = g_string_chunk_new(4096);
}

void tmr_intern_table_clear(tmr_intern_table *t) {
  g_free(t->slots);
  for (uint32_t i = 0; i < t->n_pages; i++)
    g_free(t->pages[i]);
  g_free(t->pages);
  if (t->strings)
    g_string_chunk_free(t->strings);
  memset(t, 0, sizeof *t);
}

static void grow_slots(tmr_intern_table *t) {
  uint32_t capacity = (t->mask + 1) * 2;
  uint32_t *slots = g_new0(uint32_t, capacity);
  for (uint32_t i = 0; i < t->count; i++) {
    uint32_t j = (uint32_t)tmr_intern_entry_at(t, i)->hash & (capacity - 1);
    while (slots[j])
      j = (j + 1) & (capacity - 1);
    slots[j] = i + 1;
  }
  g_free(t->slots);
  t->slots = slots;
  t->mask = capacity - 1;
}

tmr_intern_entry *tmr_intern_add_slow(tmr_intern_table *t, tmr_intern_kind kind, const char *s,
                                      size_t len, uint64_t hash, uint32_t slot) {
  if (t->count >= TMR_INTERN_MAX_ENTRIES || t->bytes + len > TMR_INTERN_MAX_BYTES)
    return NULL;
  uint32_t index = t->count;
  if (index / TMR_INTERN_PAGE >= t->n_pages) {
    t->pages = g_renew(tmr_intern_entry *, t->pages, t->n_pages + 1);
    t->pages[t->n_pages++] = g_new0(tmr_intern_entry, TMR_INTERN_PAGE);
  }
  tmr_intern_entry *e = tmr_intern_entry_at(t, index);
  e->hash = hash;
  e->str = g_string_chunk_insert_len(t->strings, s, (gssize)len);
  e->len = (uint32_t)len;
  e->kind = (uint8_t)kind;
  e->iid = ++t->next_iid[kind];
  e->emitted_generation = 0;
  t->count++;
  t->bytes += len;
  if (t->count * 2 > t->mask + 1) {
    grow_slots(t);
  } else {
    t->slots[slot] = index + 1;
  }
  return e;
}
