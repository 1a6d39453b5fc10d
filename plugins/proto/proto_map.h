/*
 * A map from 64-bit keys (iids, track uuids, clock keys) to 32-bit values,
 * with open addressing.
 *
 * Invariants: capacity is 0 or a power of two, at most 3/4 full. A slot is
 * in use when its mark equals the map's generation (never 0), so clearing
 * is a generation bump: a sequence that clears its state every few packets
 * neither allocates nor rewrites its table. Key, value and mark share one
 * 16-byte slot, so a probe touches one cache line. Lookups never allocate.
 */
#ifndef TM_PROTO_MAP_H
#define TM_PROTO_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct proto_map_slot {
  uint64_t key;
  uint32_t value;
  uint32_t mark; /* == generation: in use */
} proto_map_slot;

typedef struct proto_map {
  proto_map_slot *slots;
  size_t cap;
  size_t len;
  uint32_t generation; /* 0 until the first slot array exists */
} proto_map;

static inline size_t proto_map_slot_of(uint64_t key, size_t cap) {
  uint64_t h = key * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return (size_t)h & (cap - 1);
}

static inline bool proto_map_get(const proto_map *map, uint64_t key, uint32_t *value) {
  if (map->len == 0)
    return false;
  size_t mask = map->cap - 1;
  for (size_t i = proto_map_slot_of(key, map->cap);; i = (i + 1) & mask) {
    const proto_map_slot *slot = &map->slots[i];
    if (slot->mark != map->generation)
      return false;
    if (slot->key == key) {
      *value = slot->value;
      return true;
    }
  }
}

/* Inserts or replaces (aborts when out of memory, see proto_vec.h). */
void proto_map_put(proto_map *map, uint64_t key, uint32_t value);
/* Removes every entry, keeping the storage. */
void proto_map_clear(proto_map *map);
void proto_map_free(proto_map *map);

#endif /* TM_PROTO_MAP_H */
