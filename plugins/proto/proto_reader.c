/*
 * The Perfetto protobuf reader ("proto"): the plugin descriptor, the probe,
 * and the dispatch of each framed TracePacket to the module that reads its
 * payload.
 *
 * Per packet, in the order trace_processor applies them
 * (docs/formats.md §1.2-1.3): sequence loss/clear bookkeeping, the needs-state
 * check, TracePacketDefaults, InternedData, then the payload. Invariants:
 * a packet whose bytes do not parse ends the file with an error naming
 * its byte offset, and everything read before it stays emitted; a packet
 * that parses but has a known field of the wrong wire type is dropped,
 * counted and logged (proto_packet_wrong_wire_type), and reading goes on.
 *
 * Read: clock_snapshot, remote_clock_sync, track_descriptor,
 * thread/process_descriptor, track_event (typed: slices, instants,
 * counters; legacy: the JSON-era phases B/E/X/I/i/b/e/n), process_tree,
 * system_info, perf_sample, trigger (proto_trigger.c), ftrace_events
 * (proto_ftrace.c), android_log, packages_list and frame_timeline_event
 * (proto_android.c), trace_config, trace_stats, ftrace_stats,
 * service_event, trace_uuid, sys_stats, process_stats and the metadata of
 * chrome_events (proto_service.c), compressed_packets (zlib) and
 * zstd_compressed_packets. Any other payload is skipped like an unknown
 * field and counted per field number (proto_unmodelled_payload, listed by
 * `tracemerge info`). Counted in stats when skipped: state TrackEvents and
 * other legacy phases (proto_track_event_unsupported_type).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_android.h"
#include "proto_clock.h"
#include "proto_compressed.h"
#include "proto_context.h"
#include "proto_framing.h"
#include "proto_packet.h"
#include "proto_ftrace.h"
#include "proto_perf_sample.h"
#include "proto_process_tree.h"
#include "proto_service.h"
#include "proto_sequence_state.h"
#include "proto_system_info.h"
#include "proto_trigger.h"
#include "proto_track_event.h"
#include "proto_tracks.h"
#include "proto_wire_decode.h"
#include "trace.pb-c.h"

/* One file being read: the context the modules share, the framing of the
 * file's packets, and the TrackEvent decoder (whose waiting events outlive
 * the packet they came in). */
typedef struct proto_reader {
  proto_context ctx;
  proto_framer framer;
  proto_track_events events;
  proto_ftrace *ftrace;
  proto_android *android;
} proto_reader;

enum packet_field {
  PACKET_FTRACE_EVENTS = 1,
  PACKET_CHROME_EVENTS = 5,
  PACKET_PROCESS_TREE = 2,
  PACKET_CLOCK_SNAPSHOT = 6,
  PACKET_SYS_STATS = 7,
  PACKET_PROCESS_STATS = 9,
  PACKET_TIMESTAMP = 8,
  PACKET_SEQUENCE_ID = 10,
  PACKET_TRACK_EVENT = 11,
  PACKET_INTERNED_DATA = 12,
  PACKET_SEQUENCE_FLAGS = 13,
  PACKET_TRACE_CONFIG = 33,
  PACKET_FTRACE_STATS = 34,
  PACKET_TRACE_STATS = 35,
  PACKET_SYNCHRONIZATION_MARKER = 36,
  PACKET_ANDROID_LOG = 39,
  PACKET_INCREMENTAL_STATE_CLEARED = 41,
  PACKET_PREVIOUS_PACKET_DROPPED = 42,
  PACKET_PROCESS_DESCRIPTOR = 43,
  PACKET_THREAD_DESCRIPTOR = 44,
  PACKET_SYSTEM_INFO = 45,
  PACKET_TRIGGER = 46,
  PACKET_PACKAGES_LIST = 47,
  PACKET_COMPRESSED_PACKETS = 50,
  PACKET_TIMESTAMP_CLOCK_ID = 58,
  PACKET_DEFAULTS = 59,
  PACKET_TRACK_DESCRIPTOR = 60,
  PACKET_PERF_SAMPLE = 66,
  PACKET_SERVICE_EVENT = 69,
  PACKET_FRAME_TIMELINE_EVENT = 76,
  PACKET_FIRST_PACKET_ON_SEQUENCE = 87,
  PACKET_TRACE_UUID = 89,
  PACKET_MACHINE_ID = 98,
  PACKET_REMOTE_CLOCK_SYNC = 107,
  PACKET_ZSTD_COMPRESSED_PACKETS = 133,
};

#define SEQ_INCREMENTAL_STATE_CLEARED 1u
#define SEQ_NEEDS_INCREMENTAL_STATE 2u


/* --- one packet ------------------------------------------------------------ */

/* The TracePacket fields this reader reads, each with the wire type the
 * schema gives it: the one list that read_control_fields() reads them by
 * and expected_wire_type() reports from, so the two cannot disagree.
 * X(number, wire type, the statement that keeps field `f` in packet `p`)
 * for the fields kept one by one; the payloads, all length-delimited, are
 * kept alike as `p->payload`. Macros rather than a table: each field is
 * still its own case of one switch, as fast as the switch written out (a
 * second switch or a lookup for the check alone was ~13% of on_packet's
 * instructions, callgrind). */
#define PACKET_CONTROL_FIELDS(X)                                                         \
  X(PACKET_TIMESTAMP, PW_VARINT, (p->has_timestamp = true, p->timestamp = f.value))      \
  X(PACKET_TIMESTAMP_CLOCK_ID, PW_VARINT, p->clock_id = (uint32_t)f.value)               \
  X(PACKET_SEQUENCE_ID, PW_VARINT, p->sequence_id = (uint32_t)f.value)                   \
  X(PACKET_SEQUENCE_FLAGS, PW_VARINT, p->flags = (uint32_t)f.value)                      \
  X(PACKET_INCREMENTAL_STATE_CLEARED, PW_VARINT, p->cleared = p->cleared || f.value != 0) \
  X(PACKET_PREVIOUS_PACKET_DROPPED, PW_VARINT, p->dropped = (uint32_t)f.value)           \
  X(PACKET_FIRST_PACKET_ON_SEQUENCE, PW_VARINT, p->first_on_sequence = f.value != 0)     \
  X(PACKET_MACHINE_ID, PW_VARINT, p->machine_id = (uint32_t)f.value)                     \
  X(PACKET_DEFAULTS, PW_LENGTH_DELIMITED, p->defaults = f)                               \
  X(PACKET_INTERNED_DATA, PW_LENGTH_DELIMITED, p->interned = f)

#define PACKET_PAYLOAD_FIELDS(X)                                                         \
  X(PACKET_SYS_STATS) X(PACKET_PROCESS_STATS) X(PACKET_TRACE_CONFIG)                    \
  X(PACKET_FTRACE_STATS) X(PACKET_TRACE_STATS) X(PACKET_TRIGGER) X(PACKET_ANDROID_LOG)  \
  X(PACKET_PACKAGES_LIST) X(PACKET_SERVICE_EVENT) X(PACKET_FRAME_TIMELINE_EVENT)        \
  X(PACKET_TRACE_UUID) X(PACKET_CHROME_EVENTS) X(PACKET_FTRACE_EVENTS)                  \
  X(PACKET_PROCESS_TREE) X(PACKET_CLOCK_SNAPSHOT) X(PACKET_TRACK_EVENT)                 \
  X(PACKET_PROCESS_DESCRIPTOR) X(PACKET_THREAD_DESCRIPTOR) X(PACKET_SYSTEM_INFO)        \
  X(PACKET_COMPRESSED_PACKETS) X(PACKET_TRACK_DESCRIPTOR) X(PACKET_PERF_SAMPLE)         \
  X(PACKET_REMOTE_CLOCK_SYNC) X(PACKET_ZSTD_COMPRESSED_PACKETS)

#define PAYLOAD_CASE(number) case number:

/* The wire type field `number` of a TracePacket must have, for the fields
 * this reader reads; -1 for the others (skipped whatever their type):
 * named in the report of a field that has another. */
static int expected_wire_type(uint32_t number) {
#define WIRE_TYPE_CASE(number, wire_type, keep)                                          \
  case number:                                                                           \
    return wire_type;
  switch (number) {
    PACKET_CONTROL_FIELDS(WIRE_TYPE_CASE)
    PACKET_PAYLOAD_FIELDS(PAYLOAD_CASE)
    return PW_LENGTH_DELIMITED;
  default:
    return -1;
  }
#undef WIRE_TYPE_CASE
}

typedef enum control_status {
  CONTROL_OK,
  CONTROL_SKIP,  /* the packet does not decode: counted, dropped */
  CONTROL_ERROR, /* the file is damaged: reported */
} control_status;

static control_status read_control_fields(proto_context *ctx, const uint8_t *data,
                                          size_t len, proto_packet *p) {
  proto_packet_clear(p);
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  bool wrong_wire = false;
  pw_field wrong = {0};
  /* One switch: each field this reader knows checks its own wire type
   * where it is read. */
#define READ_CASE(number, type, keep)                                                    \
  case number:                                                                           \
    if (f.wire_type != (type))                                                           \
      goto wrong_wire_type;                                                              \
    keep;                                                                                \
    break;
  while (pw_next(&c, &f)) {
    switch (f.number) {
      PACKET_CONTROL_FIELDS(READ_CASE)
      PACKET_PAYLOAD_FIELDS(PAYLOAD_CASE)
      if (f.wire_type != PW_LENGTH_DELIMITED)
        goto wrong_wire_type;
      p->payload = f;
      break;
    case PACKET_SYNCHRONIZATION_MARKER:
      break; /* a marker to split traces at: nothing to read */
    default:
      /* A payload this reader does not model: remembered to be counted
       * once the packet is known to decode. */
      if (f.wire_type == PW_LENGTH_DELIMITED && !p->payload.number)
        p->unmodelled = f.number;
      break;
    }
    continue;
  wrong_wire_type:
    /* Not read: the first such field is reported once the packet is
     * known to decode. */
    if (!wrong_wire)
      wrong = f;
    wrong_wire = true;
  }
#undef READ_CASE
  if (c.error != PW_OK) {
    proto_fail(ctx, ctx->packet_offset + (uint64_t)(c.p - data), "packet %" PRIu64 ": %s",
               ctx->packet_index, pw_error_message(c.error));
    return CONTROL_ERROR;
  }
  /* A field this reader knows, of another wire type than the schema's,
   * would be read as something else (a length-delimited timestamp as its
   * length): the packet does not decode, as trace_processor decides. */
  if (wrong_wire) {
    proto_count_wrong_wire_type(ctx, "TracePacket", wrong.number, wrong.wire_type,
                                (uint32_t)expected_wire_type(wrong.number));
    return CONTROL_SKIP;
  }
  return CONTROL_OK;
}

static void read_defaults(proto_sequence *seq, const Perfetto__Protos__TracePacketDefaults *d) {
  seq->default_clock_id = d->has_timestamp_clock_id ? d->timestamp_clock_id : 0;
  const Perfetto__Protos__TrackEventDefaults *te = d->track_event_defaults;
  seq->has_default_track_uuid = te && te->has_track_uuid;
  seq->default_track_uuid = te && te->has_track_uuid ? te->track_uuid : 0;
  seq->default_extra_counter_uuids.len = 0;
  seq->default_extra_double_counter_uuids.len = 0;
  for (size_t i = 0; te && i < te->n_extra_counter_track_uuids; i++)
    tm_vec_push(&seq->default_extra_counter_uuids, te->extra_counter_track_uuids[i]);
  for (size_t i = 0; te && i < te->n_extra_double_counter_track_uuids; i++)
    tm_vec_push(&seq->default_extra_double_counter_uuids,
                   te->extra_double_counter_track_uuids[i]);
}

/* Bookkeeping before the payload. Returns false to skip the packet (or,
 * with *error set, to stop). */
static bool apply_sequence_state(proto_context *ctx, const proto_packet *p, proto_sequence *seq,
                                 bool *error) {
  bool cleared = (p->flags & SEQ_INCREMENTAL_STATE_CLEARED) || p->cleared;
  if (p->sequence_id == 0) {
    if (cleared)
      proto_count(ctx, "incremental_state_cleared_missing_sequence_id");
    if (p->flags & SEQ_NEEDS_INCREMENTAL_STATE) {
      *error =
          !proto_fail(ctx, ctx->packet_offset,
                      "packet %" PRIu64 " needs incremental state but has no sequence id",
                      ctx->packet_index);
      return false;
    }
    if (p->defaults.number)
      proto_count(ctx, "trace_packet_defaults_missing_sequence_id");
    if (p->interned.number)
      proto_count(ctx, "interned_data_missing_sequence_id");
    return true;
  }
  /* A producer's first packet lost nothing before it, whatever it says. */
  if (cleared)
    proto_sequence_clear(seq);
  else if (p->dropped && !p->first_on_sequence)
    seq->state_valid = false;
  if ((p->flags & SEQ_NEEDS_INCREMENTAL_STATE) && !seq->state_valid) {
    proto_count(ctx, "packet_skipped_seq_needs_incremental_state_invalid");
    return false;
  }
  if (p->defaults.number) {
    Perfetto__Protos__TracePacketDefaults *d =
        perfetto__protos__trace_packet_defaults__unpack(NULL, p->defaults.len,
                                                        p->defaults.data);
    if (!d) {
      *error = !proto_fail(ctx, ctx->packet_offset,
                           "packet %" PRIu64 ": malformed trace_packet_defaults",
                           ctx->packet_index);
      return false;
    }
    read_defaults(seq, d);
    perfetto__protos__trace_packet_defaults__free_unpacked(d, NULL);
  }
  if (p->interned.number) {
    if (!seq->state_valid) {
      proto_count(ctx, "interned_data_skipped_incremental_state_invalid");
    } else if (!proto_sequence_add_interned_data(seq, ctx->s, ctx->host, p->interned.data,
                                                 p->interned.len)) {
      *error =
          !proto_fail(ctx, ctx->packet_offset,
                      "packet %" PRIu64 ": malformed interned_data", ctx->packet_index);
      return false;
    }
  }
  return true;
}

static bool on_packet(void *arg, const uint8_t *data, size_t len, uint64_t offset);

/* The packet's timestamp as (clock, ns) (docs/formats.md §1.6). False if it has
 * none or its clock cannot be named (counted by the resolver). Always
 * inline: GCC kept it out of line, and the call cost more than the
 * inline clock lookup it wraps (callgrind). */
static inline __attribute__((always_inline)) bool packet_time(proto_context *ctx, const proto_packet *p, proto_machine *machine,
                        const proto_sequence *seq, proto_timestamp *out) {
  if (!p->has_timestamp)
    return false;
  uint32_t clock_id = p->clock_id             ? p->clock_id
                      : seq->default_clock_id ? seq->default_clock_id
                                              : ctx->default_clock_id;
  return proto_clock_resolve(ctx, machine, p->sequence_id, clock_id, p->timestamp, out);
}

static bool read_payload(proto_reader *reader, const proto_packet *p,
                         proto_machine *machine, proto_sequence *seq) {
  proto_context *ctx = &reader->ctx;
  const uint8_t *data = p->payload.data;
  size_t len = p->payload.len;
  bool ok = true;
  const char *what = NULL;
  switch (p->payload.number) {
  case PACKET_CLOCK_SNAPSHOT:
    ok = proto_clock_read_snapshot(ctx, machine, p->sequence_id, data, len);
    what = "clock_snapshot";
    break;
  case PACKET_REMOTE_CLOCK_SYNC:
    ok = proto_clock_read_remote_sync(ctx, machine, data, len);
    what = "remote_clock_sync";
    break;
  case PACKET_TRACK_DESCRIPTOR: {
    uint64_t uuid;
    ok = proto_tracks_read_descriptor(ctx, machine, seq, data, len, &uuid);
    if (ok && uuid)
      proto_track_event_flush_uuid(&reader->events, machine, uuid);
    what = "track_descriptor";
    break;
  }
  case PACKET_THREAD_DESCRIPTOR:
    ok = p->sequence_id == 0 ||
         proto_tracks_read_thread_descriptor(ctx, machine, seq, data, len);
    what = "thread_descriptor";
    break;
  case PACKET_PROCESS_DESCRIPTOR:
    ok = proto_tracks_read_process_descriptor(ctx, machine, data, len);
    what = "process_descriptor";
    break;
  case PACKET_PROCESS_TREE:
    ok = proto_process_tree_read(ctx, machine, data, len);
    what = "process_tree";
    break;
  case PACKET_SYSTEM_INFO: {
    uint32_t num_cpus = 0;
    ok = proto_system_info_read(ctx, machine, data, len, &num_cpus);
    if (ok && num_cpus)
      proto_ftrace_set_num_cpus(reader->ftrace, machine, num_cpus);
    what = "system_info";
    break;
  }
  case PACKET_FTRACE_EVENTS:
    ok = proto_ftrace_read_bundle(reader->ftrace, machine, p->sequence_id, seq, data, len);
    what = "ftrace_events";
    break;
  case PACKET_ANDROID_LOG:
    ok = proto_android_read_log(reader->android, machine, data, len);
    what = "android_log";
    break;
  case PACKET_PACKAGES_LIST:
    ok = proto_android_read_packages(reader->android, machine, data, len);
    what = "packages_list";
    break;
  case PACKET_FRAME_TIMELINE_EVENT: {
    proto_timestamp ts;
    bool has_ts = packet_time(ctx, p, machine, seq, &ts);
    ok = proto_android_read_frame(reader->android, machine, has_ts ? &ts : NULL, data, len);
    what = "frame_timeline_event";
    break;
  }
  case PACKET_TRACE_CONFIG:
    ok = proto_service_read_config(ctx, machine, data, len);
    what = "trace_config";
    break;
  case PACKET_TRACE_STATS:
    ok = proto_service_read_trace_stats(ctx, machine, data, len);
    what = "trace_stats";
    break;
  case PACKET_TRIGGER: {
    proto_timestamp ts;
    bool has_ts = packet_time(ctx, p, machine, seq, &ts);
    ok = proto_trigger_read(ctx, machine, has_ts ? &ts : NULL, data, len);
    what = "trigger";
    break;
  }
  case PACKET_FTRACE_STATS:
    ok = proto_service_read_ftrace_stats(ctx, machine, data, len);
    what = "ftrace_stats";
    break;
  case PACKET_SERVICE_EVENT: {
    proto_timestamp ts;
    bool has_ts = packet_time(ctx, p, machine, seq, &ts);
    ok = proto_service_read_event(ctx, machine, has_ts ? &ts : NULL, data, len);
    what = "service_event";
    break;
  }
  case PACKET_TRACE_UUID:
    ok = proto_service_read_uuid(ctx, machine, data, len);
    what = "trace_uuid";
    break;
  case PACKET_CHROME_EVENTS: {
    bool has_events = false;
    ok = proto_service_read_chrome_events(ctx, machine, data, len, &has_events);
    if (ok && has_events && ctx->host_has_system)
      proto_count_unmodelled(ctx, PACKET_CHROME_EVENTS);
    what = "chrome_events";
    break;
  }
  case PACKET_PROCESS_STATS:
  case PACKET_SYS_STATS: {
    proto_timestamp ts;
    bool has_ts = packet_time(ctx, p, machine, seq, &ts);
    ok = p->payload.number == PACKET_SYS_STATS
             ? proto_service_read_sys_stats(ctx, machine, has_ts ? &ts : NULL, data, len)
             : proto_service_read_process_stats(ctx, machine, has_ts ? &ts : NULL, data, len);
    what = p->payload.number == PACKET_SYS_STATS ? "sys_stats" : "process_stats";
    break;
  }
  case PACKET_TRACK_EVENT: {
    proto_timestamp ts;
    bool has_ts = false;
    if (p->has_timestamp) {
      if (!packet_time(ctx, p, machine, seq, &ts))
        break;
      has_ts = true;
    }
    ok = proto_track_event_read(&reader->events, machine, seq, has_ts ? &ts : NULL, data,
                                len);
    what = "track_event";
    break;
  }
  case PACKET_PERF_SAMPLE: {
    proto_timestamp ts;
    if (!p->has_timestamp) {
      proto_count(ctx, "perf_sample_missing_timestamp");
      break;
    }
    if (!packet_time(ctx, p, machine, seq, &ts))
      break;
    ok = proto_perf_sample_read(ctx, machine, seq, &ts, data, len);
    what = "perf_sample";
    break;
  }
  /* Both report their own damage. */
  case PACKET_COMPRESSED_PACKETS:
    return proto_compressed_read(ctx, PROTO_CODEC_ZLIB, data, len, on_packet, reader);
  case PACKET_ZSTD_COMPRESSED_PACKETS:
    return proto_compressed_read(ctx, PROTO_CODEC_ZSTD, data, len, on_packet, reader);
  default:
    if (p->unmodelled && ctx->host_has_system)
      proto_count_unmodelled(ctx, p->unmodelled);
    break;
  }
  if (!ok)
    return proto_fail(ctx, ctx->packet_offset, "packet %" PRIu64 ": malformed %s",
                      ctx->packet_index, what);
  return true;
}

static bool on_packet(void *arg, const uint8_t *data, size_t len, uint64_t offset) {
  proto_reader *reader = arg;
  proto_context *ctx = &reader->ctx;
  /* Decompressed packets have no file offset: their damage is the wrapper's,
   * named by the wrapper's packet number. */
  if (ctx->inner_framer) {
    ctx->packet_offset = ctx->wrapper_offset;
  } else {
    ctx->packet_offset = offset;
    ctx->packet_index++;
  }
  proto_packet p;
  control_status status = read_control_fields(ctx, data, len, &p);
  if (status != CONTROL_OK)
    return status == CONTROL_SKIP;
  proto_machine *machine = proto_machine_of(ctx, p.machine_id);
  proto_sequence *seq = proto_sequence_get(&ctx->sequences, p.sequence_id);
  bool error = false;
  if (!apply_sequence_state(ctx, &p, seq, &error))
    return !error;
  return read_payload(reader, &p, machine, seq);
}

/* --- the plugin ------------------------------------------------------------ */

static void reader_free(proto_reader *reader) {
  if (!reader)
    return;
  proto_framer_clear(&reader->framer);
  proto_track_events_free(&reader->events);
  proto_ftrace_free(reader->ftrace);
  proto_android_free(reader->android);
  proto_context_free(&reader->ctx);
  free(reader);
}

static void *proto_open(const tm_host_services *s, tm_host *host,
                        const uint8_t *config, size_t config_len) {
  (void)config, (void)config_len;
  proto_reader *reader = calloc(1, sizeof *reader);
  if (!reader) {
    s->report_error(host, -1, "out of memory");
    return NULL;
  }
  proto_context_init(&reader->ctx, s, host);
  proto_track_events_init(&reader->events, &reader->ctx);
  reader->ftrace = proto_ftrace_new(&reader->ctx);
  reader->android = proto_android_new(&reader->ctx);
  proto_framer_init(&reader->framer, PROTO_DEFAULT_MAX_PACKET, on_packet, reader);
  return reader;
}

/* Framing stopped: report a framing error (a packet error was reported by
 * the packet's module), and place the events still waiting for a
 * descriptor, which were read before the damage. */
static tm_status stopped(proto_reader *reader) {
  proto_framer *framer = &reader->framer;
  if (framer->failed)
    proto_fail(&reader->ctx, framer->error_offset, "after packet %" PRIu64 ": %s",
               framer->packets, framer->error);
  proto_track_event_flush_all(&reader->events);
  return TM_ERROR;
}

static tm_status proto_feed(void *state, const uint8_t *data, size_t len) {
  proto_reader *reader = state;
  if (!proto_framer_feed(&reader->framer, data, len))
    return stopped(reader);
  return TM_OK;
}

static tm_status proto_finish(void *state) {
  proto_reader *reader = state;
  if (!proto_framer_finish(&reader->framer))
    return stopped(reader);
  proto_track_event_flush_all(&reader->events);
  return TM_OK;
}

static void proto_close(void *state) { reader_free(state); }

/* True if the bytes at `p` are the tag and length of a length-delimited
 * field whose value runs past `end` (cut by the end of the probed bytes). */
static bool cut_message_field(const uint8_t *p, const uint8_t *end) {
  uint64_t tag, field_len;
  size_t n = pw_read_varint(p, end, &tag);
  if (n == 0 || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX || (tag & 7) != PW_LENGTH_DELIMITED)
    return false;
  size_t m = pw_read_varint(p + n, end, &field_len);
  return m > 0 && field_len > (uint64_t)(end - (p + n + m));
}

/* True if `data` parses as protobuf fields up to `len` (a message cut by
 * the end of the probed bytes counts as parsing). A packet whose first
 * field is already cut (a compressed wrapper, a large event) counts if
 * that field's tag and length read as a message field's. */
static bool fields_parse(const uint8_t *data, size_t len, bool cut) {
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  size_t fields = 0;
  while (pw_next(&c, &f))
    fields++;
  if (c.error == PW_OK)
    return fields > 0;
  if (cut && fields == 0 && c.error == PW_TRUNCATED)
    return cut_message_field(data, data + len);
  return cut && fields > 0 && (c.error == PW_TRUNCATED || c.error == PW_BAD_VARINT);
}

static bool has_suffix(const char *name, const char *suffix) {
  size_t n = strlen(name), m = strlen(suffix);
  return n >= m && strcmp(name + n - m, suffix) == 0;
}

static int proto_probe(const uint8_t *head, size_t len, const char *file_name) {
  /* A trace is a run of `packet` fields: tag 0x0A, a length, a packet
   * whose own fields parse. Text that merely starts with a newline fails
   * the field check. */
  if (len < 2 || head[0] != 0x0A)
    return 0;
  uint64_t packet_len;
  size_t n = pw_read_varint(head + 1, head + len, &packet_len);
  if (n == 0 || packet_len == 0 || packet_len > PROTO_DEFAULT_MAX_PACKET)
    return 0;
  size_t start = 1 + n;
  bool cut = packet_len > len - start;
  size_t visible = cut ? len - start : (size_t)packet_len;
  if (!fields_parse(head + start, visible, cut))
    return 0;
  if (file_name && (has_suffix(file_name, ".pftrace") ||
                    has_suffix(file_name, ".perfetto-trace") ||
                    has_suffix(file_name, ".pb") || has_suffix(file_name, ".proto")))
    return 100;
  return 80;
}

static const tm_reader_stat proto_stats[] = {
    TM_READER_STAT("flow_invalid_id", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A flow event had no usable id."),
    TM_READER_STAT("flow_without_direction", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A flow binding had neither flow_in nor flow_out."),
    TM_READER_STAT("packet_skipped_seq_needs_incremental_state_invalid", TM_STAT_NOTICE, TM_STAT_SOURCE_ANALYSIS,
        "A proto packet needed incremental state its sequence had lost; skipped."),
    TM_READER_STAT("interned_data_skipped_incremental_state_invalid", TM_STAT_NOTICE, TM_STAT_SOURCE_ANALYSIS,
        "Interned data arrived while its sequence's state was invalid; skipped."),
    TM_READER_STAT("track_descriptor_missing_uuid", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A track descriptor without a uuid was dropped."),
    TM_READER_STAT("track_descriptor_conflicting_reservation", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A track descriptor conflicted with an earlier one for its uuid; dropped."),
    TM_READER_STAT("track_descriptor_thread_missing_pid_tid", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A thread track descriptor lacked pid or tid; dropped."),
    TM_READER_STAT("track_descriptor_process_missing_pid", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A process track descriptor lacked a pid; dropped."),
    TM_READER_STAT("track_event_invalid_timestamp", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A TrackEvent with a negative raw timestamp was dropped."),
    TM_READER_STAT("track_event_missing_timestamp", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A TrackEvent packet without a timestamp was dropped."),
    TM_READER_STAT("track_event_counter_missing_value", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A counter TrackEvent without a value was dropped."),
    TM_READER_STAT("track_event_parser_errors", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A TrackEvent could not be parsed; dropped."),
    TM_READER_STAT("interned_data_missing_sequence_id", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "Interned data on a packet without a sequence id was ignored."),
    TM_READER_STAT("trace_packet_defaults_missing_sequence_id", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "Packet defaults on a packet without a sequence id were ignored."),
    TM_READER_STAT("incremental_state_cleared_missing_sequence_id", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "An incremental-state clear on a packet without a sequence id was ignored."),
    TM_READER_STAT("track_event_extra_counter_values_without_track", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "Extra counter values without a counter track; dropped."),
    TM_READER_STAT("track_event_extra_counter_too_many_values", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "More extra counter values than extra counter tracks; the rest dropped."),
    TM_READER_STAT("track_descriptor_invalid_child_ordering", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A track descriptor's child ordering was not understood; ignored."),
    TM_READER_STAT("proto_track_event_unsupported_type", TM_STAT_INFO, TM_STAT_SOURCE_ANALYSIS,
        "TrackEvents not imported yet: state events, legacy phases other than B/E/X/I/i/b/e/n."),
    TM_READER_STAT("proto_debug_annotation_too_deep", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A debug annotation nested too deep; the deeper levels were dropped."),
    TM_READER_STAT("stackprofile_invalid_callstack_id", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A sample or event named an interned callstack its sequence lacks."),
    TM_READER_STAT("stackprofile_invalid_frame_id", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A callstack named an interned frame its sequence lacks."),
    TM_READER_STAT("stackprofile_invalid_mapping_id", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A frame named an interned mapping its sequence lacks."),
    TM_READER_STAT("stackprofile_invalid_string_id", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A frame or mapping named an interned string its sequence lacks."),
    TM_READER_STAT("proto_packet_wrong_wire_type", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A protobuf field the proto reader knows came with another wire type "
        "than its schema gives it; the packet was dropped (import log: the "
        "message, field and both wire types)."),
    TM_READER_STAT("perf_samples_skipped", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        "Perf sample records that carried a skip reason instead of a sample."),
    TM_READER_STAT("perf_samples_skipped_dataloss", TM_STAT_DATA_LOSS, TM_STAT_SOURCE_TRACE,
        "Perf records the kernel reported lost."),
    TM_READER_STAT("perf_sample_missing_timestamp", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A perf sample packet without a timestamp was dropped."),
    /* System traces: ftrace, Android payloads, the service's own stats
     * (trace_processor's names and severities). */
    TM_READER_STAT("compact_sched_has_parse_errors", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A compact_sched bundle had arrays of unequal length, a cut array or a comm index past its table; the events every array covers were kept."),
    TM_READER_STAT("compact_sched_switch_skipped", TM_STAT_INFO, TM_STAT_SOURCE_ANALYSIS,
        "The first compact sched_switch of a cpu says only who runs next; it makes no sched row."),
    TM_READER_STAT("compact_sched_waking_skipped", TM_STAT_INFO, TM_STAT_SOURCE_ANALYSIS,
        "A compact sched_waking before its cpu's first switch (its waker unknown) was dropped."),
    TM_READER_STAT("task_state_invalid", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A sched_switch prev_state that is no task state; its thread_state is NULL."),
    TM_READER_STAT("ftrace_cpu_out_of_range", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "ftrace data of a cpu beyond the machine's cpus (SystemInfo.num_cpus, or 4095) was dropped."),
    TM_READER_STAT("proto_ftrace_unknown_event", TM_STAT_INFO, TM_STAT_SOURCE_ANALYSIS,
        "ftrace_event rows made from an event whose id the reader's schema (proto/ftrace.proto) "
        "does not name: named unknown_ftrace_event_<id>, its fields as args field_<n> with their wire values."),
    TM_READER_STAT("ftrace_generic_descriptor_invalid", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A bundle's description of an event without a message did not parse or named no id; "
        "its events are unknown_ftrace_event_<id> rows."),
    TM_READER_STAT("ftrace_bundle_unsupported_clock", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "An ftrace bundle on the LOCAL or an unknown ftrace clock cannot be placed and was dropped."),
    TM_READER_STAT("ftrace_bundle_missing_cpu", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "An ftrace bundle without its cpu was dropped."),
    TM_READER_STAT("ftrace_event_missing_pid", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "An ftrace event without its pid was dropped."),
    TM_READER_STAT("ftrace_event_missing_timestamp", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "An ftrace event without its timestamp was dropped."),
    TM_READER_STAT("ftrace_softirq_unknown_vector", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A softirq_entry of a vector the kernel does not name was dropped."),
    TM_READER_STAT("ftrace_setup_errors", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "ftrace or atrace events the trace config asked for failed or were unknown on the device (FtraceStats at the start)."),
    TM_READER_STAT("mm_unknown_type", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "An mm_event_record of an unknown type was dropped."),
    TM_READER_STAT("rss_stat_unknown_keys", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "An rss_stat of an unknown member was dropped."),
    TM_READER_STAT("rss_stat_negative_size", TM_STAT_INFO, TM_STAT_SOURCE_ANALYSIS,
        "An rss_stat with a negative size was dropped."),
    TM_READER_STAT("meminfo_unknown_keys", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "A sys_stats meminfo value of an unknown key was dropped."),
    TM_READER_STAT("frame_timeline_event_parser_errors", TM_STAT_INFO, TM_STAT_SOURCE_ANALYSIS,
        "A frame timeline event with a missing field, a bad timestamp or an unknown enum value; dropped or read without that value."),
    TM_READER_STAT("frame_timeline_unpaired_end_event", TM_STAT_INFO, TM_STAT_SOURCE_ANALYSIS,
        "A frame timeline FrameEnd whose cookie began nothing was dropped."),
    TM_READER_STAT("android_log_missing_timestamp", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A logcat event without a timestamp was dropped."),
    TM_READER_STAT("android_log_num_total", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        "Logcat events the trace saw (its last AndroidLogPacket stats)."),
    TM_READER_STAT("android_log_num_failed", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "Logcat events the trace failed to read."),
    TM_READER_STAT("android_log_num_skipped", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        "Logcat events the trace's filters skipped."),
    TM_READER_STAT("packages_list_has_parse_errors", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "The device failed to read part of its package list."),
    TM_READER_STAT("empty_chrome_metadata", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A ChromeMetadata entry of a chrome_events bundle without a value was dropped."),
    TM_READER_INDEXED_STAT("proto_unmodelled_payload", TM_STAT_INFO, TM_STAT_SOURCE_ANALYSIS,
        "Packets of a payload this reader does not model yet, by TracePacket field number (idx)."),
    TM_READER_STAT("systrace_parse_failure", TM_STAT_ERROR, TM_STAT_SOURCE_ANALYSIS,
        "An atrace payload of a print event was not understood; skipped."),
    TM_READER_STAT("traced_producers_connected", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_producers_seen", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_data_sources_registered", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_data_sources_seen", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_tracing_sessions", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_total_buffers", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_chunks_discarded", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_patches_discarded", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_flushes_requested", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_flushes_succeeded", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_flushes_failed", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_final_flush_failed", TM_STAT_DATA_LOSS, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_STAT("traced_final_flush_succeeded", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_buffer_size", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        "Per buffer (idx), from the trace's TraceStats."),
    TM_READER_INDEXED_STAT("traced_buf_bytes_written", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_bytes_overwritten", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_bytes_read", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_padding_bytes_written", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_padding_bytes_cleared", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_chunks_written", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_chunks_rewritten", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_chunks_overwritten", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_chunks_discarded", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_chunks_read", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_chunks_committed_out_of_order", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_write_wrap_count", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_patches_succeeded", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_patches_failed", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_readaheads_succeeded", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_readaheads_failed", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_abi_violations", TM_STAT_DATA_LOSS, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("traced_buf_trace_writer_packet_loss", TM_STAT_DATA_LOSS, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_entries_begin", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_entries_end", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_overrun_begin", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_overrun_end", TM_STAT_DATA_LOSS, TM_STAT_SOURCE_TRACE,
        "The kernel ftrace buffer could not keep up: events lost, per cpu (idx)."),
    TM_READER_INDEXED_STAT("ftrace_cpu_commit_overrun_begin", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_commit_overrun_end", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_bytes_begin", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_bytes_end", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_dropped_events_begin", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_dropped_events_end", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_read_events_begin", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_read_events_end", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_now_ts_begin", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_now_ts_end", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_oldest_event_ts_begin", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
    TM_READER_INDEXED_STAT("ftrace_cpu_oldest_event_ts_end", TM_STAT_INFO, TM_STAT_SOURCE_TRACE,
        ""),
};

static const tm_reader_descriptor proto_descriptor = {
    TM_READER_DESCRIPTOR_INIT,
    .flags = TM_READER_PID0_IS_IDLE,
    .name = "proto",
    .description = "Perfetto protobuf trace (TracePacket stream)",
    .probe = proto_probe,
    .open = proto_open,
    .feed = proto_feed,
    .finish = proto_finish,
    .close = proto_close,
    .stats = proto_stats,
    .n_stats = sizeof proto_stats / sizeof proto_stats[0],
    /* trace_processor parses Perfetto traces before archives and other
     * formats, which decides who claims trace time first. */
    .processing_priority = -1,
    /* The only samples of a Perfetto trace we read are PerfSample packets:
     * trace_processor's perf_sample. */
    .sample_table = "perf_sample",
};

TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  return &proto_descriptor;
}
