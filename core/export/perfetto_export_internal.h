/*
 * What the Perfetto export's modules share: the export's state, its
 * sequences and interning kinds, and the event sources the driver merges
 * by timestamp (perfetto_export.c: tracks, slices, counters;
 * perfetto_export_system.c: scheduling, samples, logs). The calls run one
 * way: the driver calls the sources and perfetto_export_service.c, the
 * system source calls the service one, and all of them call
 * perfetto_export_packets.c, which calls none of them.
 */
#ifndef TM_PERFETTO_EXPORT_INTERNAL_H
#define TM_PERFETTO_EXPORT_INTERNAL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/string_pool.h"
#include "export/export_selection.h"
#include "model/model.h"
#include "record/packet_writer.h"
#include "sql/model_index.h"

/* Interning kinds (tmr_sequence_mark). Keys: string-pool ids for names,
 * row ids for profile rows. */
enum {
  PE_MARK_EVENT_NAME = 0,
  PE_MARK_CATEGORY = 1,
  PE_MARK_DEBUG_NAME = 2,
  PE_MARK_FUNCTION_NAME = 3,
  PE_MARK_FRAME = 4,
  PE_MARK_MAPPING = 5,
  PE_MARK_CALLSTACK = 6,
  PE_MARK_BUILD_ID = 7,
  PE_MARK_MAPPING_PATH = 8,
};

/* InternedData fields. */
enum {
  INTERNED_EVENT_CATEGORIES = 1,
  INTERNED_EVENT_NAMES = 2,
  INTERNED_DEBUG_NAMES = 3,
  INTERNED_FUNCTION_NAMES = 5,
  INTERNED_FRAMES = 6,
  INTERNED_CALLSTACKS = 7,
  INTERNED_BUILD_IDS = 16,
  INTERNED_MAPPING_PATHS = 17,
  INTERNED_MAPPINGS = 19,
};

/* TracePacket payload fields the export writes. */
enum {
  PACKET_FTRACE_EVENTS = 1,
  PACKET_PROCESS_TREE = 2,
  PACKET_CLOCK_SNAPSHOT = 6,
  PACKET_TRACK_EVENT = 11,
  PACKET_ANDROID_LOG = 39,
  PACKET_SYSTEM_INFO = 45,
  PACKET_PACKAGES_LIST = 47,
  PACKET_TRACK_DESCRIPTOR = 60,
  PACKET_PERF_SAMPLE = 66,
  PACKET_REMOTE_CLOCK_SYNC = 107,
};

#define PE_CLOCK_REALTIME 1u
#define PE_CLOCK_BOOTTIME 6u

typedef struct pe_system pe_system; /* perfetto_export_system.c */

typedef struct pe_state {
  const tm_model *model;
  const export_selection *sel;
  tmr_packet_writer *writer;
  /* Export machine id by machine row (UINT32_MAX: not exported). */
  uint32_t *machine_export_id;
  uint32_t host_machine; /* the machine row written as machine 0 */
  /* Sequences: key (machine row << 32 | (trace id + 1)), trace id
   * TM_NULL_ID + 1 = 0 for a machine's own sequence. */
  GHashTable *sequences;
  /* Descriptors written, by upid, utid and track id. */
  uint8_t *process_written, *thread_written, *track_written;
  /* By utid: the thread's own track (its first thread_execution track),
   * or TM_NULL_ID. */
  uint32_t *thread_track;
  tm_str_id thread_execution; /* "thread_execution" */
  /* Arg sets as lists of arg rows (model_index_arg_set) and flow rows by
   * slice (model_index_flows_out/in), owned. */
  tm_model_index *index;
  /* Debug annotation name of an arg key (string id -> name offset into
   * the key: 0, or past "args." / "debug."), cached. */
  GHashTable *annotation_skip;
  pe_system *system;
  uint64_t packets_dropped; /* larger than a packet may be */
} pe_state;

/* --- packets (perfetto_export_packets.c) ------------------------------- */

/* Track uuids: a process's, a thread's, another track's. */
#define PE_PROCESS_UUID(upid) ((UINT64_C(1) << 48) | (uint64_t)(upid))
#define PE_THREAD_UUID(utid) ((UINT64_C(2) << 48) | (uint64_t)(utid))
#define PE_TRACK_UUID(track) ((UINT64_C(3) << 48) | (uint64_t)(track))

/* Bit `i` of a bit set (descriptors written, slices open, ...). */
static inline bool pe_bit_get(const uint8_t *bits, size_t i) {
  return (bits[i / 8] >> (i % 8)) & 1;
}

static inline void pe_bit_set(uint8_t *bits, size_t i) {
  bits[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* What a TrackDescriptor packet is built from. */
typedef struct pe_descriptor_ctx {
  pe_state *pe;
  uint32_t id;          /* upid, utid or track id */
  uint64_t uuid;
  uint64_t parent_uuid; /* 0: none */
} pe_descriptor_ctx;

/* Writes string `id` as bytes field `field`, unless it is NULL. */
void pe_put_string(tmr_enc *e, uint32_t field, const pe_state *pe, tm_str_id id);

/* The machine's own sequence (identity, clocks, system data). */
tmr_sequence *pe_machine_sequence(pe_state *pe, uint32_t machine_id);
/* The sequence of a trace file's events on a machine. */
tmr_sequence *pe_sequence(pe_state *pe, uint32_t machine_id, uint32_t trace_id);

/* Emits one packet on `seq` (a packet too large to build is counted). */
void pe_emit(pe_state *pe, tmr_sequence *seq, int64_t ts, uint32_t flags, tmr_packet_build build, void *ctx);

/* Writes the descriptors a thread's events need (its process's, its own)
 * on `seq`, once. */
void pe_ensure_thread(pe_state *pe, tmr_sequence *seq, uint32_t utid);
void pe_ensure_process(pe_state *pe, tmr_sequence *seq, uint32_t upid);

static inline const char *pe_str(const pe_state *pe, tm_str_id id) {
  return string_pool_borrow(pe->model->strings, id);
}

static inline int64_t pe_thread_tid(const pe_state *pe, uint32_t utid) {
  return pe->model->threads.data[utid].tid;
}

/* The pid written for a thread: its process's, or -1 (unknown). */
int64_t pe_thread_pid(const pe_state *pe, uint32_t utid);

/* --- event sources (merged by timestamp in perfetto_export.c) --------- */

/* A source of packets in timestamp order: `next_ts` is the timestamp of
 * its next packet (INT64_MAX when done), `emit_next` writes it. */
typedef struct pe_source {
  int64_t (*next_ts)(pe_state *pe, void *self);
  void (*emit_next)(pe_state *pe, void *self);
  void *self;
} pe_source;

/* perfetto_export_system.c */
pe_system *pe_system_new(pe_state *pe);
void pe_system_free(pe_system *system);
/* The system sources: scheduling, samples, logs; at most 3. */
size_t pe_system_sources(pe_state *pe, pe_source *out);
/* Identity and clock packets of one machine, before any event. */
void pe_system_write_machine(pe_state *pe, uint32_t machine_id);
/* Writes what is still buffered (ftrace bundles). */
void pe_system_finish(pe_state *pe);

/* perfetto_export_service.c */
/* The stats and metadata a machine's traces said about their recording,
 * as the service packets they came in (TraceStats, FtraceStats,
 * TraceConfig, TraceUuid, service events, log stats). */
void pe_service_write_machine(pe_state *pe, uint32_t machine_id);
/* Writes counter `row` as the SysStats cpu times it was read from, when
 * its track is a cpu's cpu.times.<field>; false (nothing written) for
 * any other counter. */
bool pe_service_write_cpu_time(pe_state *pe, const tm_counter_row *row);
/* The single-key metadata row `key` of machine row `machine_id` (of the
 * later file when several set it), or NULL. */
const tm_metadata_row *pe_metadata_row(const pe_state *pe, uint32_t machine_id, const char *key);

#endif /* TM_PERFETTO_EXPORT_INTERNAL_H */
