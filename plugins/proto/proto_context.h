/*
 * The context every module of the proto reader receives: the host and its
 * services (ABI version 2: every one of them present), where in the file the
 * packet being read is (for error messages and import logs), the file's
 * machines and packet sequences, and the helpers that count and report.
 *
 * The dispatcher (proto_reader.c) owns one context per file and hands it
 * to the module that reads each payload; modules never call the
 * dispatcher. Layers, each using only those below it:
 *
 *   proto_map, proto_vec, proto_wire_decode, proto_framing,
 *   proto_sequence_state, proto_machine                 plain data
 *   proto_context                                       this file
 *   proto_clock, proto_tracks, proto_track_event, ...   payload modules
 *   proto_reader                                        the dispatcher
 *
 * Invariants: machine index 0 is the file's default machine (packets
 * without machine_id), created with the context; machines are created on
 * first use and never move (the table holds pointers); every host call
 * goes through `s` and `host`.
 */
#ifndef TM_PROTO_CONTEXT_H
#define TM_PROTO_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "proto_machine.h"
#include "proto_map.h"
#include "proto_sequence_state.h"
#include "proto_vec.h"

struct proto_framer;

typedef struct proto_context {
  const tm_host_services *s;
  tm_host *host;
  /* The host has the system trace services (added after ABI v2). */
  bool host_has_system;

  /* The packet being read, for error messages. */
  uint64_t packet_offset;
  uint64_t packet_index;
  /* While unpacking a compressed wrapper: the framer of the decompressed
   * packets, and the wrapper's offset, which every error inside is
   * reported at (decompressed bytes have no file offset). NULL otherwise. */
  struct proto_framer *inner_framer;
  uint64_t wrapper_offset;
  /* While an event read earlier is emitted (a TrackEvent that waited for
   * its descriptor): the offset of the packet it came in, which its stats
   * are logged at; -1 otherwise (the packet being read is the one). */
  int64_t waiting_event_offset;

  /* The file's default clock (docs/formats.md §1.6): 0 until a
   * ClockSnapshot. */
  uint32_t default_clock_id;
  proto_sequence_table sequences;
  proto_map machine_index; /* raw machine id -> machines index */
  TM_VEC(proto_machine *) machines;

  /* Packets of payloads the reader does not model, by TracePacket field
   * number (proto_count_unmodelled). */
  proto_map unmodelled;
  /* Bytes inflated from compressed wrappers so far, and the budget
   * (TM_BUDGET_INFLATE_RATIO) they are held to against the file's bytes. */
  uint64_t inflated;
  uint64_t inflate_ratio;
  uint64_t wrapper_end; /* file bytes up to the wrapper being inflated */

  /* Text scratch for one module call at a time (joined categories, arg
   * keys, build ids): a module that calls another must be done with it. */
  proto_text text;
  /* Recent debug annotation keys built from parts (nested dict entries,
   * array elements) and their host ids (proto_debug_annotation.c); NULL
   * until the first one. */
  struct proto_arg_key_cache *arg_keys;
} proto_context;

/* Sets up `ctx` for one file read through `s`/`host`, with its default
 * machine. */
void proto_context_init(proto_context *ctx, const tm_host_services *s, tm_host *host);
/* Frees what the context owns (machines, sequences, scratch). */
void proto_context_free(proto_context *ctx);

proto_machine *proto_context_machine_slow_(proto_context *ctx, uint32_t raw_id);

/* The machine of raw id `raw_id` (0: the default machine). Nearly every
 * packet is on the default machine: checked inline. */
static inline proto_machine *proto_machine_of(proto_context *ctx, uint32_t raw_id) {
  if (raw_id == 0 && ctx->machines.len)
    return ctx->machines.data[0];
  return proto_context_machine_slow_(ctx, raw_id);
}

/* Adds 1 to the stat `name` of this file and logs it at the byte offset of the packet being read (of the
 * wrapper, inside compressed packets). Every per-packet drop goes through
 * here, so a log row points at the packet that caused it. */
void proto_count(proto_context *ctx, const char *name);
/* The same with the details `args` (n of them) on the log row. */
void proto_count_with(proto_context *ctx, const char *name, const tm_import_log_arg *args,
                      size_t n);
/* A field this reader knows, of message `message` (e.g. "TracePacket"),
 * came with wire type `wire_type` where the schema says `expected`: counts
 * proto_packet_wrong_wire_type, logging the field and both wire types and
 * a sentence saying so. The caller drops the packet. */
void proto_count_wrong_wire_type(proto_context *ctx, const char *message, uint32_t field,
                                 uint32_t wire_type, uint32_t expected);
/* A packet whose payload (TracePacket field `field`) this reader does not
 * model: counted per field number in the indexed stat
 * proto_unmodelled_payload, which `tracemerge info` lists. */
void proto_count_unmodelled(proto_context *ctx, uint32_t field);
/* Adds `delta` to the stat `name`, without a log row (totals a trace
 * declares, e.g. lost samples). */
void proto_stat_add(proto_context *ctx, const char *name, int64_t delta);

/* What the trace says about `machine`: the stat `name`[idx] (idx < 0: a
 * single value) set, or a metadata row, on that machine. The default
 * machine's go to the file's own machine; another machine's (packets with
 * machine_id) to that machine when the host has the per-machine services,
 * else to the file's machine as before. Stats only with the system
 * services (they are what those traces report). */
void proto_machine_stat_set(proto_context *ctx, const proto_machine *machine, const char *name,
                            int64_t idx, int64_t value);
void proto_machine_metadata_int(proto_context *ctx, const proto_machine *machine,
                                const char *name, int64_t value);
void proto_machine_metadata_string(proto_context *ctx, const proto_machine *machine,
                                   const char *name, tm_str_id value);

/* Reports damage at byte `offset` (the message says which packet). Always
 * returns false, for `return proto_fail(...)`. */
bool proto_fail(proto_context *ctx, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline tm_str_id proto_intern(proto_context *ctx, const char *s, size_t len) {
  return ctx->s->intern_string(ctx->host, s, len);
}
tm_str_id proto_intern_cstr(proto_context *ctx, const char *s);

#endif /* TM_PROTO_CONTEXT_H */
