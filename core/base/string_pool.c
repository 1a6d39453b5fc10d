/*
 * String pool: open-addressing hash set of ids over strings stored in
 * append-only blocks.
 *
 * Invariants: `slots` has a power-of-two size and is at most half full; a
 * slot holds 0 (empty) or an id; strings[id] points into a block that is
 * never reallocated (a string longer than the block size gets a block of
 * its own), so borrowed pointers stay valid until string_pool_free().
 */
#include "base/string_pool.h"

#include <glib.h>
#include <string.h>

#include "base/vec.h"

#define BLOCK_SIZE (1u << 20)

struct tm_string_pool {
  TM_VEC(const char *) strings; /* by id; [0] = NULL */
  TM_VEC(uint32_t) lengths;
  TM_VEC(uint32_t) hashes;
  uint32_t *slots;
  size_t slot_mask;
  TM_VEC(char *) blocks;
  char *block_cursor;
  size_t block_left;
  size_t bytes;
};

static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

/* Eight bytes per step: interning every name, category, arg key and arg
 * value is on the import's hot path, and FNV's byte-at-a-time loop showed
 * in the benchmark's profile. */
static uint32_t hash_bytes(const char *s, size_t len) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = mix64(h ^ w) * 0x9e3779b97f4a7c15ull;
  }
  if (i < len) {
    uint64_t w = 0;
    memcpy(&w, s + i, len - i);
    h = mix64(h ^ w) * 0x9e3779b97f4a7c15ull;
  }
  return (uint32_t)mix64(h);
}

uint32_t string_pool_hash(const char *s, size_t len) {
  return hash_bytes(s, len);
}

tm_string_pool *string_pool_new(void) {
  tm_string_pool *pool = g_new0(tm_string_pool, 1);
  tm_vec_push(&pool->strings, NULL);
  tm_vec_push(&pool->lengths, 0);
  tm_vec_push(&pool->hashes, 0);
  pool->slot_mask = 1023;
  pool->slots = g_new0(uint32_t, pool->slot_mask + 1);
  return pool;
}

void string_pool_free(tm_string_pool *pool) {
  if (!pool)
    return;
  for (size_t i = 0; i < pool->blocks.len; i++)
    g_free(pool->blocks.data[i]);
  tm_vec_free(&pool->blocks);
  tm_vec_free(&pool->strings);
  tm_vec_free(&pool->lengths);
  tm_vec_free(&pool->hashes);
  g_free(pool->slots);
  g_free(pool);
}

static char *store_bytes(tm_string_pool *pool, const char *s, size_t len) {
  size_t need = len + 1;
  if (need > pool->block_left) {
    size_t size = need > BLOCK_SIZE / 4 ? need : BLOCK_SIZE;
    char *block = g_malloc(size);
    tm_vec_push(&pool->blocks, block);
    if (size != BLOCK_SIZE) {
      /* An oversized string keeps its own block; the current one stays. */
      memcpy(block, s, len);
      block[len] = '\0';
      pool->bytes += size;
      return block;
    }
    pool->block_cursor = block;
    pool->block_left = size;
    pool->bytes += size;
  }
  char *dst = pool->block_cursor;
  memcpy(dst, s, len);
  dst[len] = '\0';
  pool->block_cursor += need;
  pool->block_left -= need;
  return dst;
}

static void grow_slots(tm_string_pool *pool) {
  size_t new_mask = pool->slot_mask * 2 + 1;
  uint32_t *slots = g_new0(uint32_t, new_mask + 1);
  for (size_t id = 1; id < pool->strings.len; id++) {
    size_t i = pool->hashes.data[id] & new_mask;
    while (slots[i])
      i = (i + 1) & new_mask;
    slots[i] = (uint32_t)id;
  }
  g_free(pool->slots);
  pool->slots = slots;
  pool->slot_mask = new_mask;
}

tm_str_id string_pool_intern(tm_string_pool *pool, const char *s, size_t len) {
  const char *nul = len ? memchr(s, '\0', len) : NULL;
  if (nul)
    len = (size_t)(nul - s);
  if (len > UINT32_MAX - 1)
    len = UINT32_MAX - 1;
  uint32_t h = hash_bytes(s, len);
  size_t i = h & pool->slot_mask;
  for (uint32_t id; (id = pool->slots[i]) != 0; i = (i + 1) & pool->slot_mask) {
    if (pool->hashes.data[id] == h && pool->lengths.data[id] == len &&
        memcmp(pool->strings.data[id], s, len) == 0)
      return id;
  }
  if (pool->strings.len >= UINT32_MAX - 1)
    g_error("tracemerge: more than 2^32 distinct strings");
  uint32_t id = (uint32_t)pool->strings.len;
  tm_vec_push(&pool->strings, store_bytes(pool, s, len));
  tm_vec_push(&pool->lengths, (uint32_t)len);
  tm_vec_push(&pool->hashes, h);
  pool->slots[i] = id;
  if (pool->strings.len * 2 > pool->slot_mask)
    grow_slots(pool);
  return id;
}

tm_str_id string_pool_intern_cstr(tm_string_pool *pool, const char *s) {
  return s ? string_pool_intern(pool, s, strlen(s)) : 0;
}

const char *string_pool_borrow(const tm_string_pool *pool, tm_str_id id) {
  return id < pool->strings.len ? pool->strings.data[id] : NULL;
}

size_t string_pool_length(const tm_string_pool *pool, tm_str_id id) {
  return id < pool->lengths.len ? pool->lengths.data[id] : 0;
}

size_t string_pool_count(const tm_string_pool *pool) {
  return pool->strings.len;
}

size_t string_pool_memory(const tm_string_pool *pool) {
  return pool->bytes + pool->strings.cap * sizeof(char *) +
         (pool->lengths.cap + pool->hashes.cap + pool->slot_mask + 1) *
             sizeof(uint32_t);
}
