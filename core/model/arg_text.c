/*
 * Arg string values in append-only blocks behind a direct-mapped cache of
 * recent values (see arg_text.h).
 */
#include "model/arg_text.h"

#include <glib.h>

#include "base/string_pool.h"

#define BLOCK_SIZE ((size_t)1 << ARG_TEXT_BLOCK_BITS)
/* 16384 slots (256 KiB): the realistic Chrome JSON's repeated values (a
 * few thousand stack frame names, hundreds of interface tags) stay. */
#define CACHE_BITS 14

/* Stores the copy, its address in *stored; ARG_TEXT_FULL if it needs a
 * block and none is left. */
static uint32_t store(tm_arg_text *text, const char *s, uint32_t len, const char **stored) {
  size_t prefix = len < ARG_TEXT_LONG ? 1 : 1 + sizeof len;
  size_t need = prefix + (size_t)len + 1;
  size_t max_blocks = text->max_blocks ? text->max_blocks : ARG_TEXT_MAX_BLOCKS;
  char *dst;
  uint32_t handle;
  if (need > BLOCK_SIZE / 4 || need > text->left) {
    if (text->blocks.len >= max_blocks)
      return ARG_TEXT_FULL;
    /* An oversized value gets a block of its own; the current one stays. */
    bool own = need > BLOCK_SIZE / 4;
    size_t size = own ? need : BLOCK_SIZE;
    dst = g_malloc(size);
    handle = (uint32_t)(text->blocks.len << ARG_TEXT_BLOCK_BITS);
    tm_vec_push(&text->blocks, dst);
    text->bytes += size;
    if (!own) {
      /* The block's last byte stays unused: no handle is ARG_TEXT_FULL. */
      text->cursor = dst + need;
      text->cursor_handle = handle + (uint32_t)need;
      text->left = BLOCK_SIZE - 1 - need;
    }
  } else {
    dst = text->cursor;
    handle = text->cursor_handle;
    text->cursor += need;
    text->cursor_handle += (uint32_t)need;
    text->left -= need;
  }
  if (len < ARG_TEXT_LONG) {
    dst[0] = (char)len;
  } else {
    memcpy(dst, &len, sizeof len);
    dst[sizeof len] = (char)ARG_TEXT_LONG;
  }
  memcpy(dst + prefix, s, len);
  dst[prefix + len] = '\0';
  *stored = dst + prefix;
  return handle + (uint32_t)prefix;
}

uint32_t arg_text_add(tm_arg_text *text, const char *s, size_t len) {
  if (len > UINT32_MAX - 1)
    len = UINT32_MAX - 1;
  if (!text->cache)
    text->cache = g_new0(tm_arg_text_slot, (size_t)1 << CACHE_BITS);
  uint32_t hash = string_pool_hash(s, len);
  tm_arg_text_slot *slot = &text->cache[hash >> (32 - CACHE_BITS)];
  if (slot->text && slot->hash == hash && arg_text_length(slot->text) == len &&
      memcmp(slot->text, s, len) == 0)
    return slot->handle;
  const char *stored;
  uint32_t handle = store(text, s, (uint32_t)len, &stored);
  if (handle != ARG_TEXT_FULL)
    *slot = (tm_arg_text_slot){stored, hash, handle};
  return handle;
}

void arg_text_free(tm_arg_text *text) {
  for (size_t i = 0; i < text->blocks.len; i++)
    g_free(text->blocks.data[i]);
  tm_vec_free(&text->blocks);
  g_free(text->cache);
  memset(text, 0, sizeof *text);
}
