/*
 * Trusted packet sequences written straight to a stream: the lower layer
 * of the recording library (the hand encoder of encoder.h, the framing of
 * writer.c) without a session, threads or buffers, for programs that
 * already hold their data and write a trace in one pass (the exporter,
 * core/export/perfetto_export.c).
 *
 * Invariants:
 * - Every packet is framed as Trace.packet (field 1) and written whole, in
 *   call order; nothing is kept but a bounded output buffer, so a trace of
 *   any size is written in memory proportional to its largest packet.
 * - A sequence's first packet carries SEQ_INCREMENTAL_STATE_CLEARED,
 *   first_packet_on_sequence and its TracePacketDefaults (BOOTTIME
 *   timestamps), so any state a later packet needs is set before use; a
 *   packet that defines interned entries carries SEQ_NEEDS_INCREMENTAL_STATE
 *   (callers add it to packets that only use them). A sequence never
 *   resets, so an entry emitted once stays valid to its end.
 * - Every packet of a sequence made for machine id M != 0 carries
 *   `machine_id` M (TracePacket field 98); machine 0 is the host and
 *   carries none.
 * - A packet builder may run more than once (when what it writes does not
 *   fit the scratch, it is run again with a larger one): marks it made
 *   with tmr_sequence_mark() are taken back before it runs again, so it
 *   writes the same packet every time.
 *
 * Ownership: the writer owns its sequences; `out` is called with bytes the
 * writer owns for the duration of the call. Errors: the first failed `out`
 * call latches; later packets are dropped and tmr_packet_writer_flush()
 * reports false.
 */
#ifndef TMR_PACKET_WRITER_H
#define TMR_PACKET_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/encoder.h"

/* A packet without a timestamp (tmr_sequence_emit's `ts`). */
#define TMR_NO_TIMESTAMP INT64_MIN

#define TMR_SEQ_INCREMENTAL_STATE_CLEARED 1u
#define TMR_SEQ_NEEDS_INCREMENTAL_STATE 2u

/* Writes `len` bytes; false on failure (latched by the writer). */
typedef bool (*tmr_out_fn)(void *user, const void *data, size_t len);

typedef struct tmr_packet_writer tmr_packet_writer;
typedef struct tmr_sequence tmr_sequence;

tmr_packet_writer *tmr_packet_writer_new(tmr_out_fn out, void *user);
/* Frees the writer and its sequences; does not flush. */
void tmr_packet_writer_free(tmr_packet_writer *w);
/* Writes out what the buffer holds. False if any write failed so far. */
bool tmr_packet_writer_flush(tmr_packet_writer *w);
/* False once a write has failed. */
bool tmr_packet_writer_ok(const tmr_packet_writer *w);
/* Bytes framed so far (written or buffered). */
uint64_t tmr_packet_writer_bytes(const tmr_packet_writer *w);

/* A new trusted sequence (ids 2, 3, ...: 1 is the service's, as the
 * recording session numbers them) whose packets name `machine_id`. */
tmr_sequence *tmr_packet_writer_new_sequence(tmr_packet_writer *w, uint32_t machine_id);
uint32_t tmr_sequence_id(const tmr_sequence *seq);

/* Writes the packet's fields into `e` and its new InternedData entries
 * into `interned` (both may overflow: the writer then grows them and
 * calls again). */
typedef void (*tmr_packet_build)(tmr_sequence *seq, tmr_enc *e, tmr_enc *interned, void *ctx);

/* Emits one packet: timestamp `ts` (TMR_NO_TIMESTAMP: none), the sequence
 * id, the machine id, `flags` (sequence_flags; SEQ_NEEDS_INCREMENTAL_STATE
 * is added when the builder interned anything or asked for it), then what
 * `build` writes. False if the packet could not be built (larger than
 * 64 MiB) or the output failed. */
bool tmr_sequence_emit(tmr_sequence *seq, int64_t ts, uint32_t flags, tmr_packet_build build,
                       void *ctx);

/* Interning marks, per sequence: true if (kind, key) was not marked yet on
 * this sequence, and marks it (the caller then writes its entry). Keys are
 * the caller's ids; kinds are small numbers (< 32) the caller chooses. */
bool tmr_sequence_mark(tmr_sequence *seq, uint32_t kind, uint64_t key);
/* Whether (kind, key) is marked, without marking it. */
bool tmr_sequence_marked(const tmr_sequence *seq, uint32_t kind, uint64_t key);

#endif /* TMR_PACKET_WRITER_H */
