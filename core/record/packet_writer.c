/*
 * Trusted packet sequences written straight to a stream (see
 * packet_writer.h for the invariants).
 *
 * A packet is built into two scratch areas (its fields, and the interned
 * entries it introduces), then framed into the output buffer as
 *   Trace.packet { timestamp, trusted_packet_sequence_id, sequence_flags,
 *                  machine_id, [first-packet fields], interned_data,
 *                  <fields> }
 * The output buffer is written out whenever the next packet would not fit.
 */
#include "record/packet_writer.h"

#include <glib.h>
#include <string.h>

#define OUT_BUFFER (256u << 10)
#define INITIAL_SCRATCH (4u << 10)
#define MAX_PACKET (64u << 20)
#define MARK_KINDS 32u
#define BUILTIN_BOOTTIME 6u

/* TracePacket field numbers. */
enum {
  PACKET_TIMESTAMP = 8,
  PACKET_SEQUENCE_ID = 10,
  PACKET_INTERNED_DATA = 12,
  PACKET_SEQUENCE_FLAGS = 13,
  PACKET_DEFAULTS = 59,
  PACKET_FIRST_ON_SEQUENCE = 87,
  PACKET_MACHINE_ID = 98,
  DEFAULTS_CLOCK_ID = 58,
};

typedef struct mark_set {
  uint64_t *bits; /* keys below 2^32 */
  size_t n_words;
  GHashTable *large; /* keys from 2^32 on, as uint64 pointers */
} mark_set;

typedef struct mark_undo {
  uint32_t kind;
  uint64_t key;
} mark_undo;

struct tmr_sequence {
  tmr_packet_writer *writer;
  uint32_t id;
  uint32_t machine_id;
  bool started;
  mark_set marks[MARK_KINDS];
  GArray *undo; /* mark_undo made by the packet being built */
};

struct tmr_packet_writer {
  tmr_out_fn out;
  void *user;
  bool failed;
  uint8_t *buf;
  size_t used;
  uint64_t bytes;
  uint8_t *scratch;
  size_t scratch_cap;
  uint8_t *interned;
  size_t interned_cap;
  GPtrArray *sequences;
  uint32_t next_id;
};

static void sequence_free(gpointer p) {
  tmr_sequence *seq = p;
  for (uint32_t k = 0; k < MARK_KINDS; k++) {
    g_free(seq->marks[k].bits);
    if (seq->marks[k].large)
      g_hash_table_unref(seq->marks[k].large);
  }
  g_array_unref(seq->undo);
  g_free(seq);
}

tmr_packet_writer *tmr_packet_writer_new(tmr_out_fn out, void *user) {
  tmr_packet_writer *w = g_new0(tmr_packet_writer, 1);
  w->out = out;
  w->user = user;
  w->buf = g_malloc(OUT_BUFFER);
  w->scratch_cap = INITIAL_SCRATCH;
  w->scratch = g_malloc(w->scratch_cap);
  w->interned_cap = INITIAL_SCRATCH;
  w->interned = g_malloc(w->interned_cap);
  w->sequences = g_ptr_array_new_with_free_func(sequence_free);
  w->next_id = 2;
  return w;
}

void tmr_packet_writer_free(tmr_packet_writer *w) {
  if (!w)
    return;
  g_ptr_array_unref(w->sequences);
  g_free(w->buf);
  g_free(w->scratch);
  g_free(w->interned);
  g_free(w);
}

static void write_out(tmr_packet_writer *w, const void *data, size_t len) {
  if (w->failed || len == 0)
    return;
  if (!w->out(w->user, data, len))
    w->failed = true;
}

bool tmr_packet_writer_flush(tmr_packet_writer *w) {
  write_out(w, w->buf, w->used);
  w->used = 0;
  return !w->failed;
}

bool tmr_packet_writer_ok(const tmr_packet_writer *w) {
  return !w->failed;
}

uint64_t tmr_packet_writer_bytes(const tmr_packet_writer *w) {
  return w->bytes;
}

tmr_sequence *tmr_packet_writer_new_sequence(tmr_packet_writer *w, uint32_t machine_id) {
  tmr_sequence *seq = g_new0(tmr_sequence, 1);
  seq->writer = w;
  seq->id = w->next_id++;
  seq->machine_id = machine_id;
  seq->undo = g_array_new(FALSE, FALSE, sizeof(mark_undo));
  g_ptr_array_add(w->sequences, seq);
  return seq;
}

uint32_t tmr_sequence_id(const tmr_sequence *seq) {
  return seq->id;
}

/* --- marks ------------------------------------------------------------------ */

static bool mark_test(const mark_set *m, uint64_t key) {
  if (key >> 32)
    return m->large && g_hash_table_contains(m->large, &key);
  size_t word = (size_t)(key >> 6);
  return word < m->n_words && (m->bits[word] >> (key & 63)) & 1;
}

static void mark_set_bit(mark_set *m, uint64_t key, bool on) {
  if (key >> 32) {
    if (!m->large)
      m->large = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    if (on)
      g_hash_table_add(m->large, g_memdup2(&key, sizeof key));
    else
      g_hash_table_remove(m->large, &key);
    return;
  }
  size_t word = (size_t)(key >> 6);
  if (word >= m->n_words) {
    size_t n = m->n_words ? m->n_words : 16;
    while (n <= word)
      n *= 2;
    m->bits = g_renew(uint64_t, m->bits, n);
    memset(m->bits + m->n_words, 0, (n - m->n_words) * sizeof *m->bits);
    m->n_words = n;
  }
  if (on)
    m->bits[word] |= (uint64_t)1 << (key & 63);
  else
    m->bits[word] &= ~((uint64_t)1 << (key & 63));
}

bool tmr_sequence_marked(const tmr_sequence *seq, uint32_t kind, uint64_t key) {
  return kind < MARK_KINDS && mark_test(&seq->marks[kind], key);
}

bool tmr_sequence_mark(tmr_sequence *seq, uint32_t kind, uint64_t key) {
  if (kind >= MARK_KINDS || mark_test(&seq->marks[kind], key))
    return false;
  mark_set_bit(&seq->marks[kind], key, true);
  mark_undo u = {kind, key};
  g_array_append_val(seq->undo, u);
  return true;
}

static void undo_marks(tmr_sequence *seq) {
  for (guint i = seq->undo->len; i-- > 0;) {
    mark_undo *u = &g_array_index(seq->undo, mark_undo, i);
    mark_set_bit(&seq->marks[u->kind], u->key, false);
  }
  g_array_set_size(seq->undo, 0);
}

/* --- packets ----------------------------------------------------------------- */

static bool grow_scratch(tmr_packet_writer *w) {
  if (w->scratch_cap >= MAX_PACKET)
    return false;
  w->scratch_cap *= 2;
  w->scratch = g_realloc(w->scratch, w->scratch_cap);
  w->interned_cap *= 2;
  w->interned = g_realloc(w->interned, w->interned_cap);
  return true;
}

/* Appends `len` bytes to the output buffer, writing it out first (or the
 * bytes directly) when they do not fit. */
static void append(tmr_packet_writer *w, const void *data, size_t len) {
  if (w->used + len > OUT_BUFFER) {
    write_out(w, w->buf, w->used);
    w->used = 0;
    if (len > OUT_BUFFER) {
      write_out(w, data, len);
      return;
    }
  }
  memcpy(w->buf + w->used, data, len);
  w->used += len;
}

bool tmr_sequence_emit(tmr_sequence *seq, int64_t ts, uint32_t flags, tmr_packet_build build,
                       void *ctx) {
  tmr_packet_writer *w = seq->writer;
  if (w->failed)
    return false;
  tmr_enc e, in;
  for (;;) {
    e = (tmr_enc){w->scratch, w->scratch + w->scratch_cap, false};
    in = (tmr_enc){w->interned, w->interned + w->interned_cap, false};
    build(seq, &e, &in, ctx);
    if (!e.overflow && !in.overflow)
      break;
    undo_marks(seq);
    if (!grow_scratch(w))
      return false;
  }
  g_array_set_size(seq->undo, 0);
  size_t body_len = (size_t)(e.p - w->scratch);
  size_t interned_len = (size_t)(in.p - w->interned);
  if (interned_len)
    flags |= TMR_SEQ_NEEDS_INCREMENTAL_STATE;

  /* The header: small, so a fixed buffer holds it. */
  uint8_t header[96];
  tmr_enc h = {header, header + sizeof header, false};
  if (ts != TMR_NO_TIMESTAMP)
    tmr_enc_uint(&h, PACKET_TIMESTAMP, (uint64_t)ts);
  tmr_enc_uint(&h, PACKET_SEQUENCE_ID, seq->id);
  if (!seq->started) {
    flags |= TMR_SEQ_INCREMENTAL_STATE_CLEARED;
    tmr_enc_uint(&h, PACKET_FIRST_ON_SEQUENCE, 1);
    uint8_t *defaults = tmr_enc_nest_begin(&h, PACKET_DEFAULTS);
    tmr_enc_uint(&h, DEFAULTS_CLOCK_ID, BUILTIN_BOOTTIME);
    tmr_enc_nest_end(&h, defaults);
  }
  if (flags)
    tmr_enc_uint(&h, PACKET_SEQUENCE_FLAGS, flags);
  if (seq->machine_id)
    tmr_enc_uint(&h, PACKET_MACHINE_ID, seq->machine_id);
  size_t header_len = (size_t)(h.p - header);
  size_t interned_field =
      interned_len ? 1 + tmr_varint_size(interned_len) + interned_len : 0;
  size_t packet_len = header_len + interned_field + body_len;

  uint8_t frame[16];
  tmr_enc f = {frame, frame + sizeof frame, false};
  tmr_enc_tag(&f, 1, TMR_WT_LEN);
  tmr_enc_varint(&f, packet_len);
  append(w, frame, (size_t)(f.p - frame));
  append(w, header, header_len);
  if (interned_len) {
    tmr_enc t = {frame, frame + sizeof frame, false};
    tmr_enc_tag(&t, PACKET_INTERNED_DATA, TMR_WT_LEN);
    tmr_enc_varint(&t, interned_len);
    append(w, frame, (size_t)(t.p - frame));
    append(w, w->interned, interned_len);
  }
  append(w, w->scratch, body_len);
  w->bytes += (uint64_t)(f.p - frame) + packet_len;
  seq->started = true;
  return !w->failed;
}
