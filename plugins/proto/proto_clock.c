/* Clocks of a proto trace (see proto_clock.h). */
#include "proto_clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_context.h"
#include "trace.pb-c.h"

#define SYNC_ROUND_LIMIT_NS 30000000000ull /* entries further apart: other rounds */

proto_clock *proto_clock_get_slow_(proto_context *ctx, proto_machine *machine,
                                   uint32_t sequence_id, uint32_t clock_id) {
  proto_clock_table *table = &machine->clocks;
  uint64_t key = (uint64_t)sequence_id << 32 | clock_id;
  uint32_t index;
  if (proto_map_get(&table->index, key, &index)) {
    table->last_key = key;
    table->last_index_plus_one = index + 1;
    return &table->items.data[index];
  }
  proto_clock clock = {
      .clock_id = clock_id,
      .sequence_id = sequence_id,
      .ref = proto_clock_is_sequence_scoped(clock_id)
                 ? ctx->s->clock_sequence(ctx->host, machine->ref, sequence_id, clock_id)
                 : ctx->s->clock_builtin(ctx->host, machine->ref, clock_id),
      .unit_ns = 1,
  };
  index = (uint32_t)table->items.len;
  tm_vec_push(&table->items, clock);
  proto_map_put(&table->index, key, index);
  return &table->items.data[index];
}

static int64_t wrap_mul(uint64_t a, uint64_t b) { return (int64_t)(a * b); }

static uint64_t unit_of(const Perfetto__Protos__ClockSnapshot__Clock *c) {
  return c->has_unit_multiplier_ns && c->unit_multiplier_ns ? c->unit_multiplier_ns : 1;
}

/* Adds one snapshot to the host's graph, after the checks the host cannot
 * make because it only sees ns: units and incremental flags (a snapshot
 * failing them is counted as the host counts its own rejections). Returns
 * true if the host accepted it. */
static bool add_snapshot(proto_context *ctx, proto_machine *machine, uint32_t sequence_id,
                         const Perfetto__Protos__ClockSnapshot *snapshot) {
  size_t n = snapshot->n_clocks;
  if (n == 0)
    return false;
  bool ok = false;
  tm_clock_ref *refs = proto_xrealloc(NULL, n * sizeof *refs);
  int64_t *values = proto_xrealloc(NULL, n * sizeof *values);
  uint32_t *indexes = proto_xrealloc(NULL, n * sizeof *indexes);
  for (size_t i = 0; i < n; i++) {
    const Perfetto__Protos__ClockSnapshot__Clock *c = snapshot->clocks[i];
    uint32_t id = c->clock_id;
    bool scoped = proto_clock_is_sequence_scoped(id);
    uint64_t unit = unit_of(c);
    if (id == 0 || (scoped && sequence_id == 0) || (c->is_incremental && !scoped) ||
        unit > INT64_MAX) {
      proto_count(ctx, "invalid_clock_snapshots");
      goto out;
    }
    proto_clock *clock = proto_clock_get(ctx, machine, scoped ? sequence_id : 0, id);
    if (clock->registered &&
        (clock->unit_ns != (int64_t)unit || clock->incremental != c->is_incremental)) {
      proto_count(ctx, "invalid_clock_snapshots");
      goto out;
    }
    refs[i] = clock->ref;
    values[i] = wrap_mul(c->timestamp, unit);
    indexes[i] = (uint32_t)(clock - machine->clocks.items.data);
  }
  ok = ctx->s->add_clock_snapshot(ctx->host, refs, values, n);
  if (!ok)
    goto out; /* the host counted it */
  for (size_t i = 0; i < n; i++) {
    const Perfetto__Protos__ClockSnapshot__Clock *c = snapshot->clocks[i];
    proto_clock *clock = &machine->clocks.items.data[indexes[i]];
    clock->registered = true;
    clock->unit_ns = (int64_t)unit_of(c);
    clock->incremental = c->is_incremental;
    clock->running_ns = values[i];
  }
out:
  free(refs);
  free(values);
  free(indexes);
  return ok;
}

static bool snapshot_has(const Perfetto__Protos__ClockSnapshot *snapshot,
                         uint32_t clock_id) {
  for (size_t i = 0; i < snapshot->n_clocks; i++)
    if (snapshot->clocks[i]->clock_id == clock_id)
      return true;
  return false;
}

bool proto_clock_read_snapshot(proto_context *ctx, proto_machine *machine,
                               uint32_t sequence_id, const uint8_t *data, size_t len) {
  Perfetto__Protos__ClockSnapshot *snapshot =
      perfetto__protos__clock_snapshot__unpack(NULL, len, data);
  if (!snapshot)
    return false;
  /* The default clock and the claim follow every snapshot read, accepted
   * or not (docs/formats.md §1.6, docs/clock-model.md §5). */
  uint32_t chosen = 0;
  if (snapshot->has_primary_trace_clock && snapshot->primary_trace_clock != 0)
    chosen = (uint32_t)snapshot->primary_trace_clock;
  else if (snapshot_has(snapshot, TM_CLOCK_BOOTTIME) &&
           !snapshot_has(snapshot, TM_CLOCK_TRACE_FILE))
    chosen = TM_CLOCK_BOOTTIME;
  if (chosen != 0) {
    ctx->default_clock_id = chosen;
    ctx->s->claim_trace_time(ctx->host,
                             ctx->s->clock_builtin(ctx->host, machine->ref, chosen));
  }
  add_snapshot(ctx, machine, sequence_id, snapshot);
  perfetto__protos__clock_snapshot__free_unpacked(snapshot, NULL);
  return true;
}

/* The reading of `clock_id` in `snapshot` in ns, 0 when absent. */
static int64_t reading_of(const Perfetto__Protos__ClockSnapshot *snapshot,
                          uint32_t clock_id) {
  if (!snapshot)
    return 0;
  for (size_t i = 0; i < snapshot->n_clocks; i++) {
    const Perfetto__Protos__ClockSnapshot__Clock *c = snapshot->clocks[i];
    if (c->clock_id == clock_id)
      return wrap_mul(c->timestamp, unit_of(c));
  }
  return 0;
}

typedef struct sync_samples {
  uint32_t clock_id;
  __int128 sum;
  int64_t count;
} sync_samples;

typedef TM_VEC(sync_samples) sync_sample_vec;

/* Adds the round-trip offsets of every clock of one ping/update pair. */
static void add_round(sync_sample_vec *samples,
                      const Perfetto__Protos__RemoteClockSync__SyncedClocks *ping,
                      const Perfetto__Protos__RemoteClockSync__SyncedClocks *update) {
  if (!ping->client_clocks)
    return;
  for (size_t i = 0; i < ping->client_clocks->n_clocks; i++) {
    uint32_t k = ping->client_clocks->clocks[i]->clock_id;
    __int128 t1c = reading_of(ping->client_clocks, k);
    __int128 t1h = reading_of(ping->host_clocks, k);
    __int128 t2c = reading_of(update->client_clocks, k);
    __int128 t2h = reading_of(update->host_clocks, k);
    if (t1c == 0 || t1h == 0 || t2c == 0 || t2h == 0)
      continue;
    /* Round trip started by the client, then the one started by the host. */
    __int128 off1 = (t1c + t2c) / 2 - t1h;
    __int128 off2 = t2c - (t1h + t2h) / 2;
    size_t j = 0;
    while (j < samples->len && samples->data[j].clock_id != k)
      j++;
    if (j == samples->len) {
      sync_samples fresh = {.clock_id = k};
      tm_vec_push(samples, fresh);
    }
    samples->data[j].sum += off1 + off2;
    samples->data[j].count += 2;
  }
}

bool proto_clock_read_remote_sync(proto_context *ctx, proto_machine *client,
                                  const uint8_t *data, size_t len) {
  /* A host that refuses the sync (a manifest PIN) has failed the import. */
  if (!ctx->s->remote_clock_sync(ctx->host))
    return true;
  Perfetto__Protos__RemoteClockSync *sync =
      perfetto__protos__remote_clock_sync__unpack(NULL, len, data);
  if (!sync)
    return false;
  size_t n = sync->n_synced_clocks;
  Perfetto__Protos__RemoteClockSync__SyncedClocks **entries = sync->synced_clocks;
  /* Client readings relate the client's own clocks. */
  for (size_t i = 0; i < n; i++)
    if (entries[i]->client_clocks)
      add_snapshot(ctx, client, 0, entries[i]->client_clocks);

  proto_machine *host_machine = ctx->machines.data[0];
  sync_sample_vec samples = {0};
  /* A client adopted onto the host row (host_services.c) is the host's own
   * machine: a sync with itself is no edge. */
  for (size_t i = 1; i < n && client->ref != host_machine->ref; i++) {
    uint64_t gap = (uint64_t)reading_of(entries[i]->client_clocks, TM_CLOCK_BOOTTIME) -
                   (uint64_t)reading_of(entries[i - 1]->client_clocks, TM_CLOCK_BOOTTIME);
    if (gap >= SYNC_ROUND_LIMIT_NS)
      continue;
    add_round(&samples, entries[i - 1], entries[i]);
  }
  for (size_t j = 0; j < samples.len; j++) {
    uint32_t k = samples.data[j].clock_id;
    if (proto_clock_is_sequence_scoped(k))
      continue; /* a sequence's clock has no twin on the host */
    int64_t offset = (int64_t)(samples.data[j].sum / samples.data[j].count);
    int64_t anchor = 0;
    for (size_t i = n; i-- > 0 && anchor == 0;)
      anchor = reading_of(entries[i]->host_clocks, k);
    tm_clock_ref refs[2] = {
        proto_clock_get(ctx, host_machine, 0, k)->ref,
        proto_clock_get(ctx, client, 0, k)->ref,
    };
    int64_t values[2] = {anchor, (int64_t)((uint64_t)anchor + (uint64_t)offset)};
    ctx->s->add_clock_snapshot(ctx->host, refs, values, 2);
  }
  tm_vec_free(&samples);
  perfetto__protos__remote_clock_sync__free_unpacked(sync, NULL);
  return true;
}

bool proto_clock_resolve_slow_(proto_context *ctx, proto_machine *machine,
                               uint32_t sequence_id, uint32_t clock_id, uint64_t raw,
                               proto_timestamp *out) {
  if (clock_id == 0) {
    out->clock = ctx->s->clock_private(ctx->host);
    out->ns = (int64_t)raw;
    return true;
  }
  bool scoped = proto_clock_is_sequence_scoped(clock_id);
  if (scoped && sequence_id == 0) {
    proto_count(ctx, "clock_sync_failure_unknown_source_clock");
    return false;
  }
  proto_clock *clock = proto_clock_get(ctx, machine, scoped ? sequence_id : 0, clock_id);
  if (scoped && !clock->registered) {
    /* No snapshot on this sequence has related the clock yet, so neither its
     * unit nor its place on any other clock is known: a later snapshot may
     * declare unit_multiplier_ns != 1, and reading the raw value as ns now
     * would place the packet wrongly with no trace of it. Not placed, as
     * trace_processor does not place it (no path at that point). */
    char text[160];
    int n = snprintf(text, sizeof text,
                     "packet on sequence-scoped clock %" PRIu32 " of sequence %" PRIu32
                     " before any clock snapshot of it on that sequence; not placed",
                     clock_id, sequence_id);
    if (n < 0 || (size_t)n >= sizeof text) /* cannot happen: 32-bit ids fit */
      n = 0;
    tm_import_log_arg args[] = {
        {TM_IMPORT_LOG_ARG_INIT, .key = "clock_id", .type = TM_ARG_UINT, .int_value = clock_id},
        {TM_IMPORT_LOG_ARG_INIT, .key = "sequence_id", .type = TM_ARG_UINT,
         .int_value = sequence_id},
        {TM_IMPORT_LOG_ARG_INIT, .key = "message", .type = TM_ARG_STRING, .string = text,
         .string_len = (size_t)n},
    };
    proto_count_with(ctx, "clock_sync_failure_unknown_source_clock", args, 3);
    return false;
  }
  out->clock = clock->ref;
  if (clock->incremental) {
    clock->running_ns = (int64_t)((uint64_t)clock->running_ns +
                                  raw * (uint64_t)clock->unit_ns);
    out->ns = clock->running_ns;
  } else {
    out->ns = wrap_mul(raw, (uint64_t)clock->unit_ns);
  }
  return true;
}
