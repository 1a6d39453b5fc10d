/*
 * The proto reader's state for one file, shared by its modules: framing,
 * sequences, machines (each with its clocks and track descriptors) and the
 * TrackEvent decoder.
 *
 * Invariants: machine index 0 is the file's default machine (packets
 * without machine_id); machines are created on first use and never move
 * (the table holds pointers); every host call goes through `s`.
 */
#ifndef TM_PROTO_READER_H
#define TM_PROTO_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <tracemerge/plugin.h>

#include "proto_clock.h"
#include "proto_framing.h"
#include "proto_map.h"
#include "proto_sequence_state.h"
#include "proto_track_event.h"
#include "proto_tracks.h"
#include "proto_vec.h"

typedef struct proto_machine {
  uint32_t raw_id; /* 0: the file's default machine */
  uint32_t index;  /* in proto_reader.machines */
  tm_machine_ref ref;
  proto_clock_table clocks;
  proto_track_table tracks;
  tm_track_ref default_track; /* "Default Track", 0 until used */
} proto_machine;

typedef struct proto_reader {
  const tm_host_services *s;
  tm_host *host;
  proto_framer framer;
  /* The packet being read, for error messages. */
  uint64_t packet_offset;
  uint64_t packet_index;
  /* While unpacking a compressed wrapper: the framer of the decompressed
   * packets, and the wrapper's offset, which every error inside is reported
   * at (decompressed bytes have no file offset). NULL otherwise. */
  proto_framer *inner_framer;
  uint64_t wrapper_offset;
  /* The file's default clock (formats.md §1.6): 0 until a ClockSnapshot. */
  uint32_t default_clock_id;
  proto_sequence_table sequences;
  proto_map machine_index; /* raw machine id -> machines index */
  PROTO_VEC(proto_machine *) machines;
  proto_track_event_state events;
  /* Host services added after ABI v1 that this host has. */
  bool host_has_track_extras;
  bool host_has_process_extras;
  bool host_has_machine_info;
  bool host_has_stacks; /* mapping, frame, callsite, sample */
  bool host_has_import_log;
  /* While a waiting TrackEvent is emitted: the offset of the packet it
   * came in, which its stats are logged at; -1 otherwise (the packet
   * being read is the one). */
  int64_t waiting_event_offset;
} proto_reader;

proto_machine *proto_reader_machine_slow_(proto_reader *reader, uint32_t raw_id);

/* The machine of raw id `raw_id` (0: the default machine). Nearly every
 * packet is on the default machine (created at open): checked inline. */
static inline proto_machine *proto_reader_machine(proto_reader *reader,
                                                  uint32_t raw_id) {
  if (raw_id == 0 && reader->machines.len)
    return reader->machines.data[0];
  return proto_reader_machine_slow_(reader, raw_id);
}

/* Adds 1 to the stat `name` of this file; with a host that keeps import
 * logs, also logs it at the byte offset of the packet being read (of the
 * wrapper, inside compressed packets). Every per-packet drop goes through
 * here, so a log row points at the packet that caused it. */
void proto_reader_count(proto_reader *reader, const char *name);

static inline tm_str_id proto_reader_intern(proto_reader *reader,
                                            const char *s, size_t len) {
  return reader->s->intern_string(reader->host, s, len);
}
tm_str_id proto_reader_intern_cstr(proto_reader *reader, const char *s);

#endif /* TM_PROTO_READER_H */
