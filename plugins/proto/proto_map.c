/* Open-addressing map with linear probing (see proto_map.h). */
#include "proto_map.h"

#include <stdlib.h>
#include <string.h>

#include "proto_vec.h"

static void grow(proto_map *map) {
  size_t cap = map->cap ? map->cap * 2 : 16;
  proto_map bigger = {
      .slots = proto_xrealloc(NULL, cap * sizeof(proto_map_slot)),
      .cap = cap,
      .generation = 1,
  };
  memset(bigger.slots, 0, cap * sizeof(proto_map_slot));
  for (size_t i = 0; i < map->cap; i++)
    if (map->slots[i].mark == map->generation)
      proto_map_put(&bigger, map->slots[i].key, map->slots[i].value);
  proto_map_free(map);
  *map = bigger;
}

void proto_map_put(proto_map *map, uint64_t key, uint32_t value) {
  if ((map->len + 1) * 4 > map->cap * 3)
    grow(map);
  size_t mask = map->cap - 1;
  for (size_t i = proto_map_slot_of(key, map->cap);; i = (i + 1) & mask) {
    proto_map_slot *slot = &map->slots[i];
    if (slot->mark != map->generation) {
      *slot = (proto_map_slot){key, value, map->generation};
      map->len++;
      return;
    }
    if (slot->key == key) {
      slot->value = value;
      return;
    }
  }
}

void proto_map_clear(proto_map *map) {
  if (map->len == 0)
    return;
  map->len = 0;
  if (++map->generation == 0) {
    /* After 2^32 - 1 clears, marks from old generations could match again. */
    memset(map->slots, 0, map->cap * sizeof(proto_map_slot));
    map->generation = 1;
  }
}

void proto_map_free(proto_map *map) {
  free(map->slots);
  memset(map, 0, sizeof *map);
}
