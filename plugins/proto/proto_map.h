/*
 * A map from 64-bit keys (iids, track uuids, clock keys) to 32-bit values,
 * with open addressing.
 *
 * Invariants: capacity is 0 or a power of two, at most 3/4 full; clearing
 * keeps the capacity so a sequence that clears its state every few packets
 * does not allocate again. Lookups never allocate.
 */
#ifndef TM_PROTO_MAP_H
#define TM_PROTO_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct proto_map {
  uint64_t *keys;
  uint32_t *values;
  uint8_t *used;
  size_t cap;
  size_t len;
} proto_map;

bool proto_map_get(const proto_map *map, uint64_t key, uint32_t *value);
/* Inserts or replaces (aborts when out of memory, see proto_vec.h). */
void proto_map_put(proto_map *map, uint64_t key, uint32_t value);
/* Removes every entry, keeping the storage. */
void proto_map_clear(proto_map *map);
void proto_map_free(proto_map *map);

#endif /* TM_PROTO_MAP_H */
