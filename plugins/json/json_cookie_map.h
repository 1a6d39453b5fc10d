/*
 * Map from a 64-bit key (an async cookie hash) to a non-zero 32-bit value
 * (the host's track ref), open addressing with linear probing.
 *
 * Invariants: the table size is a power of two and at most half full; a
 * slot whose value is 0 is empty (host refs are never 0), so keys may take
 * any value. Memory grows with the number of distinct keys only; out of
 * memory aborts (GLib's allocator), as for the reader's vectors (TM_VEC).
 */
#ifndef TM_JSON_COOKIE_MAP_H
#define TM_JSON_COOKIE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct json_cookie_map {
  uint64_t *keys;
  uint32_t *values;
  size_t mask; /* size - 1, or 0 before the first insert */
  size_t count;
} json_cookie_map;

/* The value stored for `key`, or 0. */
uint32_t json_cookie_map_get(const json_cookie_map *map, uint64_t key);
/* Stores `value` (non-zero) for `key`. */
void json_cookie_map_put(json_cookie_map *map, uint64_t key, uint32_t value);
void json_cookie_map_clear(json_cookie_map *map);

#endif /* TM_JSON_COOKIE_MAP_H */
