/* Open-addressing map with linear probing (see proto_map.h). */
#include "proto_map.h"

#include <stdlib.h>
#include <string.h>

#include "proto_vec.h"

static size_t slot_of(uint64_t key, size_t cap) {
  uint64_t h = key * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return (size_t)h & (cap - 1);
}

bool proto_map_get(const proto_map *map, uint64_t key, uint32_t *value) {
  if (map->len == 0)
    return false;
  for (size_t i = slot_of(key, map->cap);; i = (i + 1) & (map->cap - 1)) {
    if (!map->used[i])
      return false;
    if (map->keys[i] == key) {
      *value = map->values[i];
      return true;
    }
  }
}

static void grow(proto_map *map) {
  size_t cap = map->cap ? map->cap * 2 : 16;
  proto_map bigger = {
      .keys = proto_xrealloc(NULL, cap * sizeof(uint64_t)),
      .values = proto_xrealloc(NULL, cap * sizeof(uint32_t)),
      .used = proto_xrealloc(NULL, cap),
      .cap = cap,
  };
  memset(bigger.used, 0, cap);
  for (size_t i = 0; i < map->cap; i++)
    if (map->used[i])
      proto_map_put(&bigger, map->keys[i], map->values[i]);
  proto_map_free(map);
  *map = bigger;
}

void proto_map_put(proto_map *map, uint64_t key, uint32_t value) {
  if ((map->len + 1) * 4 > map->cap * 3)
    grow(map);
  for (size_t i = slot_of(key, map->cap);; i = (i + 1) & (map->cap - 1)) {
    if (!map->used[i]) {
      map->used[i] = 1;
      map->keys[i] = key;
      map->values[i] = value;
      map->len++;
      return;
    }
    if (map->keys[i] == key) {
      map->values[i] = value;
      return;
    }
  }
}

void proto_map_clear(proto_map *map) {
  if (map->len)
    memset(map->used, 0, map->cap);
  map->len = 0;
}

void proto_map_free(proto_map *map) {
  free(map->keys);
  free(map->values);
  free(map->used);
  memset(map, 0, sizeof *map);
}
