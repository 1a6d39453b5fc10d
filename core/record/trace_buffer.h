/*
 * A session's trace buffer (TraceConfig.buffers[i]): a byte ring of
 * chunks committed by writers, with traced's fill policies and stats.
 *
 * A chunk is a run of framed TracePackets (each `0x0a varint(len) bytes`,
 * as in a trace file) from one writer's sequence. Chunks are stored whole
 * and in commit order, each after an 8-byte header, never split at the
 * ring's end: the tail that does not fit becomes padding. When a chunk
 * does not fit, RING_BUFFER evicts the oldest chunks (chunks_overwritten,
 * bytes_overwritten; padding_bytes_cleared) and DISCARD refuses the new
 * one (chunks_discarded). Reading (draining) removes chunks oldest first.
 *
 * Memory: exactly size_kb * 1024 bytes, allocated when the buffer is
 * created. Thread safety: every call takes the buffer's lock; commits copy
 * under it (a chunk at most), drains copy out in bounded pieces so a slow
 * output never holds writers up for long.
 */
#ifndef TMR_TRACE_BUFFER_H
#define TMR_TRACE_BUFFER_H

#include <glib.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemerge/record.h"

#define TMR_CHUNK_HEADER 8u

typedef enum tmr_fill_policy {
  TMR_FILL_RING_BUFFER = 1,
  TMR_FILL_DISCARD = 2,
} tmr_fill_policy;

typedef struct tmr_trace_buffer {
  pthread_mutex_t lock;
  uint8_t *data;
  size_t size;
  size_t head; /* offset of the oldest chunk */
  size_t used; /* bytes from head (headers, payloads, padding) */
  tmr_fill_policy policy;
  tmr_buffer_stats stats;
} tmr_trace_buffer;

/* NULL if the memory cannot be had. */
tmr_trace_buffer *tmr_trace_buffer_new(size_t size, tmr_fill_policy policy);
void tmr_trace_buffer_free(tmr_trace_buffer *buffer);

/* Stores one chunk of `len` bytes (framed packets of sequence
 * `sequence_id`). False if it was discarded (DISCARD full, or larger than
 * the whole buffer). */
bool tmr_trace_buffer_commit(tmr_trace_buffer *buffer, uint32_t sequence_id, const uint8_t *data,
                             size_t len);
/* The same, with the buffer's lock already held by the caller. */
bool tmr_trace_buffer_commit_locked(tmr_trace_buffer *buffer, uint32_t sequence_id,
                                    const uint8_t *data, size_t len);

/* Removes chunks oldest first, passing each to `sink` (outside the lock),
 * until the buffer is empty or `sink` returns false. */
typedef bool (*tmr_chunk_sink)(void *user, uint32_t sequence_id, const uint8_t *data, size_t len);
void tmr_trace_buffer_drain(tmr_trace_buffer *buffer, tmr_chunk_sink sink, void *user);

/* Drops everything the buffer holds (a trace that ends without data). */
void tmr_trace_buffer_clear(tmr_trace_buffer *buffer);

void tmr_trace_buffer_get_stats(tmr_trace_buffer *buffer, tmr_buffer_stats *out);
/* Counts a packet a writer dropped before it reached the buffer. */
void tmr_trace_buffer_count_packet_loss(tmr_trace_buffer *buffer);

#endif /* TMR_TRACE_BUFFER_H */
