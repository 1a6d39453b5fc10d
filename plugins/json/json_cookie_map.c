/*
 * Cookie map; see json_cookie_map.h.
 */
#include "json_cookie_map.h"

#include <glib.h>

static size_t slot_of(uint64_t key, size_t mask) {
  /* Keys are hashes already; fold the high bits in for small tables. */
  return (size_t)(key ^ (key >> 32)) & mask;
}

uint32_t json_cookie_map_get(const json_cookie_map *map, uint64_t key) {
  if (!map->values)
    return 0;
  for (size_t i = slot_of(key, map->mask);; i = (i + 1) & map->mask) {
    if (map->values[i] == 0)
      return 0;
    if (map->keys[i] == key)
      return map->values[i];
  }
}

static void rehash(json_cookie_map *map, size_t new_size) {
  uint64_t *keys = g_new0(uint64_t, new_size);
  uint32_t *values = g_new0(uint32_t, new_size);
  size_t new_mask = new_size - 1;
  if (map->values) {
    for (size_t i = 0; i <= map->mask; i++) {
      if (map->values[i] == 0)
        continue;
      size_t j = slot_of(map->keys[i], new_mask);
      while (values[j] != 0)
        j = (j + 1) & new_mask;
      keys[j] = map->keys[i];
      values[j] = map->values[i];
    }
  }
  g_free(map->keys);
  g_free(map->values);
  map->keys = keys;
  map->values = values;
  map->mask = new_mask;
}

void json_cookie_map_put(json_cookie_map *map, uint64_t key, uint32_t value) {
  if (!map->values || (map->count + 1) * 2 > map->mask + 1)
    rehash(map, map->values ? (map->mask + 1) * 2 : 64);
  size_t i = slot_of(key, map->mask);
  while (map->values[i] != 0 && map->keys[i] != key)
    i = (i + 1) & map->mask;
  if (map->values[i] == 0)
    map->count++;
  map->keys[i] = key;
  map->values[i] = value;
}

void json_cookie_map_clear(json_cookie_map *map) {
  g_free(map->keys);
  g_free(map->values);
  map->keys = NULL;
  map->values = NULL;
  map->mask = 0;
  map->count = 0;
}
