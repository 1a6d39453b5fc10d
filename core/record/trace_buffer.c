/*
 * The trace buffer ring (see trace_buffer.h). Invariants: `size` and every
 * chunk's footprint (header + payload, rounded up to 8) are multiples of
 * 8, so the space left before the ring's end always holds at least a
 * header; chunks occupy [head, head + used) modulo size, oldest first.
 */
#include "record/trace_buffer.h"

#include <pthread.h>
#include <string.h>

#define PADDING_FLAG 0x80000000u
#define DRAIN_PIECE (256u << 10)

static size_t footprint(size_t len) {
  return (TMR_CHUNK_HEADER + len + 7) & ~(size_t)7;
}

tmr_trace_buffer *tmr_trace_buffer_new(size_t size, tmr_fill_policy policy) {
  size &= ~(size_t)7;
  uint8_t *data = g_try_malloc(size ? size : 8);
  if (!data)
    return NULL;
  tmr_trace_buffer *b = g_new0(tmr_trace_buffer, 1);
  pthread_mutex_init(&b->lock, NULL);
  b->size = size;
  b->data = data;
  b->policy = policy;
  b->stats.buffer_size = b->size;
  return b;
}

void tmr_trace_buffer_free(tmr_trace_buffer *b) {
  if (!b)
    return;
  pthread_mutex_destroy(&b->lock);
  g_free(b->data);
  g_free(b);
}

static void read_header(const tmr_trace_buffer *b, size_t at, uint32_t *word, uint32_t *seq) {
  memcpy(word, b->data + at, 4);
  memcpy(seq, b->data + at + 4, 4);
}

static void write_header(tmr_trace_buffer *b, size_t at, uint32_t word, uint32_t seq) {
  memcpy(b->data + at, &word, 4);
  memcpy(b->data + at + 4, &seq, 4);
}

/* The footprint of the chunk (or padding) at `at`. */
static size_t footprint_at(const tmr_trace_buffer *b, size_t at, bool *padding) {
  uint32_t word, seq;
  read_header(b, at, &word, &seq);
  *padding = (word & PADDING_FLAG) != 0;
  return *padding ? TMR_CHUNK_HEADER + (word & ~PADDING_FLAG) : footprint(word);
}

static bool evict_oldest(tmr_trace_buffer *b) {
  if (b->policy == TMR_FILL_DISCARD || b->used == 0)
    return false;
  bool padding;
  size_t f = footprint_at(b, b->head, &padding);
  if (padding) {
    b->stats.padding_bytes_cleared += f;
  } else {
    b->stats.chunks_overwritten++;
    b->stats.bytes_overwritten += f;
  }
  b->head = (b->head + f) % b->size;
  b->used -= f;
  if (b->used == 0)
    b->head = 0;
  return true;
}

/* Where `need` contiguous bytes can go, evicting or padding as the policy
 * allows; SIZE_MAX if they cannot. */
static size_t place(tmr_trace_buffer *b, size_t need) {
  if (need > b->size)
    return SIZE_MAX;
  for (;;) {
    if (b->used == 0)
      b->head = 0;
    if (b->used < b->size) {
      size_t tail = (b->head + b->used) % b->size;
      if (tail >= b->head) {
        size_t to_end = b->size - tail;
        if (need <= to_end)
          return tail;
        if (need <= b->head) {
          /* Pad to the end and wrap around. */
          write_header(b, tail, PADDING_FLAG | (uint32_t)(to_end - TMR_CHUNK_HEADER), 0);
          b->used += to_end;
          b->stats.padding_bytes_written += to_end;
          b->stats.write_wrap_count++;
          return 0;
        }
      } else if (need <= b->head - tail) {
        return tail;
      }
    }
    if (!evict_oldest(b))
      return SIZE_MAX;
  }
}

bool tmr_trace_buffer_commit_locked(tmr_trace_buffer *b, uint32_t sequence_id,
                                    const uint8_t *data, size_t len) {
  if (len == 0)
    return true;
  size_t need = footprint(len);
  size_t at = len < PADDING_FLAG ? place(b, need) : SIZE_MAX;
  if (at == SIZE_MAX) {
    b->stats.chunks_discarded++;
    return false;
  }
  write_header(b, at, (uint32_t)len, sequence_id);
  memcpy(b->data + at + TMR_CHUNK_HEADER, data, len);
  b->used += need;
  b->stats.bytes_written += need;
  b->stats.chunks_written++;
  return true;
}

bool tmr_trace_buffer_commit(tmr_trace_buffer *b, uint32_t sequence_id, const uint8_t *data,
                             size_t len) {
  pthread_mutex_lock(&b->lock);
  bool ok = tmr_trace_buffer_commit_locked(b, sequence_id, data, len);
  pthread_mutex_unlock(&b->lock);
  return ok;
}

void tmr_trace_buffer_drain(tmr_trace_buffer *b, tmr_chunk_sink sink, void *user) {
  uint8_t *piece = NULL;
  size_t piece_cap = 0;
  bool go_on = true;
  while (go_on) {
    /* Copy out whole chunks, at least one, up to DRAIN_PIECE bytes. */
    size_t piece_len = 0;
    pthread_mutex_lock(&b->lock);
    while (b->used > 0) {
      bool padding;
      size_t f = footprint_at(b, b->head, &padding);
      if (!padding) {
        if (piece_len > 0 && piece_len + f > DRAIN_PIECE)
          break;
        if (piece_len + f > piece_cap) {
          piece_cap = MAX(piece_len + f, DRAIN_PIECE);
          piece = g_realloc(piece, piece_cap);
        }
        memcpy(piece + piece_len, b->data + b->head, f);
        piece_len += f;
        b->stats.bytes_read += f;
        b->stats.chunks_read++;
      }
      b->head = (b->head + f) % b->size;
      b->used -= f;
    }
    if (b->used == 0)
      b->head = 0;
    pthread_mutex_unlock(&b->lock);
    if (piece_len == 0)
      break;
    for (size_t at = 0; at < piece_len && go_on;) {
      uint32_t len, seq;
      memcpy(&len, piece + at, 4);
      memcpy(&seq, piece + at + 4, 4);
      go_on = sink(user, seq, piece + at + TMR_CHUNK_HEADER, len);
      at += footprint(len);
    }
  }
  g_free(piece);
}

void tmr_trace_buffer_clear(tmr_trace_buffer *b) {
  pthread_mutex_lock(&b->lock);
  b->head = 0;
  b->used = 0;
  pthread_mutex_unlock(&b->lock);
}

void tmr_trace_buffer_get_stats(tmr_trace_buffer *b, tmr_buffer_stats *out) {
  pthread_mutex_lock(&b->lock);
  *out = b->stats;
  pthread_mutex_unlock(&b->lock);
}

void tmr_trace_buffer_count_packet_loss(tmr_trace_buffer *b) {
  pthread_mutex_lock(&b->lock);
  b->stats.trace_writer_packet_loss++;
  pthread_mutex_unlock(&b->lock);
}
