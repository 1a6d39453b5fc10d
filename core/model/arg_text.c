/*
 * Arg string values in append-only blocks behind a direct-mapped cache of
 * recent values (see arg_text.h).
 */
#include "model/arg_text.h"

#include <glib.h>

#include "base/string_pool.h"

#define BLOCK_SIZE (1u << 20)
/* 16384 slots (256 KiB): the realistic Chrome JSON's repeated values (a
 * few thousand stack frame names, hundreds of interface tags) stay. */
#define CACHE_BITS 14

static char *store(tm_arg_text *text, const char *s, uint32_t len) {
  size_t need = sizeof len + (size_t)len + 1;
  char *dst;
  if (need > BLOCK_SIZE / 4) {
    /* An oversized value gets a block of its own; the current one stays. */
    dst = g_malloc(need);
    tm_vec_push(&text->blocks, dst);
    text->bytes += need;
  } else {
    if (need > text->left) {
      text->cursor = g_malloc(BLOCK_SIZE);
      tm_vec_push(&text->blocks, text->cursor);
      text->left = BLOCK_SIZE;
      text->bytes += BLOCK_SIZE;
    }
    dst = text->cursor;
    text->cursor += need;
    text->left -= need;
  }
  memcpy(dst, &len, sizeof len);
  memcpy(dst + sizeof len, s, len);
  dst[sizeof len + len] = '\0';
  return dst + sizeof len;
}

const char *arg_text_add(tm_arg_text *text, const char *s, size_t len) {
  if (len > UINT32_MAX - 1)
    len = UINT32_MAX - 1;
  if (!text->cache)
    text->cache = g_new0(tm_arg_text_slot, (size_t)1 << CACHE_BITS);
  uint32_t hash = string_pool_hash(s, len);
  tm_arg_text_slot *slot = &text->cache[hash >> (32 - CACHE_BITS)];
  if (slot->text && slot->hash == hash && slot->len == len &&
      memcmp(slot->text, s, len) == 0)
    return slot->text;
  const char *stored = store(text, s, (uint32_t)len);
  *slot = (tm_arg_text_slot){stored, hash, (uint32_t)len};
  return stored;
}

void arg_text_free(tm_arg_text *text) {
  for (size_t i = 0; i < text->blocks.len; i++)
    g_free(text->blocks.data[i]);
  tm_vec_free(&text->blocks);
  g_free(text->cache);
  memset(text, 0, sizeof *text);
}
