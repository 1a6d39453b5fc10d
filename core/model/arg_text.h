/*
 * The string values of args, kept outside the string pool.
 *
 * A realistic Chrome JSON trace carries about one string arg an event,
 * and most of those values occur once (URLs, frame ids, style sheet
 * text): interning them cost the pool ~28 bytes of ids, lengths, hashes
 * and slots per string on top of the bytes, for lookups that never hit.
 * Here a value costs its bytes, a NUL and a 4-byte length. Values that
 * repeat (source files, function names) are still stored once while they
 * repeat: a small direct-mapped cache of recent values (by hash) hands out
 * the earlier copy. A value that comes back after its slot was taken is
 * stored again; the text is the same, so no result changes: arg values
 * are read as bytes, never compared by id.
 *
 * Invariants: arg_text_add() returns a pointer to a NUL-terminated copy
 * that stays at its address until arg_text_free() (blocks never move), so
 * it may be handed to SQLite as static text; its length is stored in the
 * 4 bytes before it (arg_text_length()).
 *
 * Ownership: a tm_arg_text is a value inside the model (zeroed = empty)
 * that owns its blocks and cache, released by arg_text_free().
 */
#ifndef TM_ARG_TEXT_H
#define TM_ARG_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/vec.h"

typedef struct tm_arg_text_slot {
  const char *text; /* NULL: empty */
  uint32_t hash;
  uint32_t len;
} tm_arg_text_slot;

typedef struct tm_arg_text {
  TM_VEC(char *) blocks;
  char *cursor;
  size_t left;
  size_t bytes;            /* of all blocks */
  tm_arg_text_slot *cache; /* ARG_TEXT_CACHE_SLOTS, NULL until the first add */
} tm_arg_text;

/* A copy of `len` bytes of `s` (no NUL among them: the caller replaces
 * them first), or an earlier equal copy. Lengths above UINT32_MAX - 1 are
 * cut there, as the string pool does. */
const char *arg_text_add(tm_arg_text *text, const char *s, size_t len);

static inline size_t arg_text_length(const char *stored) {
  uint32_t len;
  memcpy(&len, stored - sizeof len, sizeof len);
  return len;
}

void arg_text_free(tm_arg_text *text);

#endif /* TM_ARG_TEXT_H */
