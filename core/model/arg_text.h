/*
 * The string values of args, kept outside the string pool.
 *
 * A realistic Chrome JSON trace carries about one string arg an event,
 * and most of those values occur once (URLs, frame ids, style sheet
 * text): interning them cost the pool ~28 bytes of ids, lengths, hashes
 * and slots per string on top of the bytes, for lookups that never hit.
 * Here a value costs its bytes, a NUL and its length: one byte below 255,
 * five bytes from there (most values are short). Values that
 * repeat (source files, function names) are still stored once while they
 * repeat: a small direct-mapped cache of recent values (by hash) hands out
 * the earlier copy. A value that comes back after its slot was taken is
 * stored again; the text is the same, so no result changes: arg values
 * are read as bytes, never compared by id.
 *
 * Invariants: arg_text_add() returns a 32-bit handle (what an arg row
 * stores: model/model.h) of a NUL-terminated copy that stays at its
 * address until arg_text_free() (blocks never move), so it may be handed
 * to SQLite as static text; arg_text_borrow() turns the handle into that
 * address, and the copy's length is stored in the byte before it, or,
 * when that byte is 255, in the 4 bytes before that (arg_text_length()).
 * A handle is the block's index and the offset in
 * it: ARG_TEXT_MAX_BLOCKS blocks of 1 MiB (a value of over 256 KiB takes
 * a block of its own), after which arg_text_add() says the text is full
 * and the caller keeps the value elsewhere.
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

/* Offset bits of a handle: a block is 1 MiB. */
#define ARG_TEXT_BLOCK_BITS 20
#define ARG_TEXT_MAX_BLOCKS ((size_t)1 << (32 - ARG_TEXT_BLOCK_BITS))
/* arg_text_add()'s answer when no handle is left. */
#define ARG_TEXT_FULL UINT32_MAX

typedef struct tm_arg_text_slot {
  const char *text; /* NULL: empty */
  uint32_t hash;
  uint32_t handle;
} tm_arg_text_slot;

typedef struct tm_arg_text {
  TM_VEC(char *) blocks;
  char *cursor;
  size_t left;
  uint32_t cursor_handle;  /* the handle `cursor` would have */
  size_t bytes;            /* of all blocks */
  tm_arg_text_slot *cache; /* ARG_TEXT_CACHE_SLOTS, NULL until the first add */
  /* Blocks allowed (0: ARG_TEXT_MAX_BLOCKS); tests set fewer. */
  size_t max_blocks;
} tm_arg_text;

/* The handle of a copy of `len` bytes of `s` (no NUL among them: the
 * caller replaces them first), or of an earlier equal copy; ARG_TEXT_FULL
 * (nothing stored) if every handle is taken. Lengths above UINT32_MAX - 1
 * are cut there, as the string pool does. */
uint32_t arg_text_add(tm_arg_text *text, const char *s, size_t len);

/* The copy a handle of arg_text_add() names. */
static inline const char *arg_text_borrow(const tm_arg_text *text, uint32_t handle) {
  return text->blocks.data[handle >> ARG_TEXT_BLOCK_BITS] +
         (handle & (((uint32_t)1 << ARG_TEXT_BLOCK_BITS) - 1));
}

/* The byte before a stored copy: its length, or this mark when the length
 * is in the 4 bytes before the mark. */
#define ARG_TEXT_LONG 255u

static inline size_t arg_text_length(const char *stored) {
  uint8_t short_len = (uint8_t)stored[-1];
  if (short_len != ARG_TEXT_LONG)
    return short_len;
  uint32_t len;
  memcpy(&len, stored - 1 - sizeof len, sizeof len);
  return len;
}

void arg_text_free(tm_arg_text *text);

#endif /* TM_ARG_TEXT_H */
