/*
 * Clocks of a proto trace, as the reader sees them (docs/formats.md
 * §1.4-1.6, docs/clock-model.md §3, §5, §8).
 *
 * The host's clock graph works in nanoseconds; unit multipliers and
 * incremental (delta-encoded) clocks are the reader's business: every
 * snapshot value and every packet timestamp reaches the host already as
 * absolute ns. Invariants: a clock's unit and incremental flag are fixed by
 * the first accepted snapshot naming it (later snapshots that disagree are
 * rejected and counted in invalid_clock_snapshots); an incremental clock is
 * always sequence-scoped (64..127) and its running value is re-based by
 * every snapshot and advanced by every timestamp read on it, in file order.
 */
#ifndef TM_PROTO_CLOCK_H
#define TM_PROTO_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "proto_machine.h"

struct proto_context;
struct proto_machine;

static inline bool proto_clock_is_sequence_scoped(uint32_t clock_id) {
  return clock_id >= 64 && clock_id <= 127;
}

proto_clock *proto_clock_get_slow_(struct proto_context *ctx, struct proto_machine *machine,
                                   uint32_t sequence_id, uint32_t clock_id);

/* The clock `clock_id` of `machine` (scoped to `sequence_id` when
 * sequence-scoped), created on first use. The last clock found is
 * checked inline: packets keep using one clock (the file's default, on
 * every sequence), and the out-of-line call's register saves were most
 * of its cost (callgrind). */
static inline proto_clock *proto_clock_get(struct proto_context *ctx,
                                           struct proto_machine *machine,
                                           uint32_t sequence_id, uint32_t clock_id) {
  proto_clock_table *table = &machine->clocks;
  uint64_t key = (uint64_t)sequence_id << 32 | clock_id;
  if (table->last_index_plus_one && table->last_key == key)
    return &table->items.data[table->last_index_plus_one - 1];
  return proto_clock_get_slow_(ctx, machine, sequence_id, clock_id);
}

/* A ClockSnapshot packet (field 6) of `machine` on `sequence_id`: adds it
 * to the host's clock graph, sets the file's default clock and claims
 * trace time (docs/clock-model.md §5). Returns false if it does not decode. */
bool proto_clock_read_snapshot(struct proto_context *ctx, struct proto_machine *machine,
                               uint32_t sequence_id, const uint8_t *data, size_t len);

/* A RemoteClockSync packet (field 107) of client machine `client`: the
 * client snapshots, and one edge per clock between the client and the
 * file's default machine at the round-trip offsets (docs/clock-model.md §8).
 * Returns false if it does not decode. */
bool proto_clock_read_remote_sync(struct proto_context *ctx, struct proto_machine *client,
                                  const uint8_t *data, size_t len);

typedef struct proto_timestamp {
  tm_clock_ref clock;
  int64_t ns;
} proto_timestamp;

/* Turns a packet's raw timestamp into (clock, ns): `clock_id` is the first
 * non-zero of the packet's timestamp_clock_id, the sequence default and the
 * file default; 0 means the raw value is trace time (the file's private
 * timeline). Returns false, counting the reason in
 * clock_sync_failure_unknown_source_clock with a log row at the packet, if
 * the clock cannot be named (a sequence-scoped clock on sequence 0) or is a
 * sequence-scoped clock no accepted snapshot on its sequence has related
 * yet (its unit and offset are unknown until then). */
bool proto_clock_resolve_slow_(struct proto_context *ctx, struct proto_machine *machine,
                               uint32_t sequence_id, uint32_t clock_id, uint64_t raw,
                               proto_timestamp *out);

/* The common case inline (one call per timestamped packet): a clock the
 * last lookup found that needs no check, placed as the slow path places
 * it. */
static inline bool proto_clock_resolve(struct proto_context *ctx,
                                       struct proto_machine *machine, uint32_t sequence_id,
                                       uint32_t clock_id, uint64_t raw, proto_timestamp *out) {
  proto_clock_table *table = &machine->clocks;
  bool scoped = proto_clock_is_sequence_scoped(clock_id);
  uint64_t key = (uint64_t)(scoped ? sequence_id : 0) << 32 | clock_id;
  if (clock_id != 0 && table->last_index_plus_one && table->last_key == key) {
    proto_clock *clock = &table->items.data[table->last_index_plus_one - 1];
    if (!clock->incremental && (clock->registered || !scoped)) {
      out->clock = clock->ref;
      out->ns = (int64_t)(raw * (uint64_t)clock->unit_ns);
      return true;
    }
  }
  return proto_clock_resolve_slow_(ctx, machine, sequence_id, clock_id, raw, out);
}

#endif /* TM_PROTO_CLOCK_H */
