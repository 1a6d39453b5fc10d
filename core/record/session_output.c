/*
 * What the session itself writes (the "service" sequence, trusted packet
 * sequence 1: trace_config, clock snapshots, triggers, trace_stats), and
 * the output file the buffers drain into.
 *
 * Invariant: the file only ever holds whole framed packets, and never more
 * than max_file_size_bytes of them: a packet that would cross the limit is
 * not written, the output is marked full, and the session stops (its
 * trace_stats are written only if they still fit).
 *
 * Memory: the service packets wait in memory for the next write, which
 * without write_into_file is the stop. Clock snapshots are the ones that
 * recur (one per flush, and flush_period_ms may ask for one a second for
 * days), so at most TMR_MAX_PENDING_SNAPSHOTS of them wait: the oldest
 * (for a session writing at its stop, the one taken at its start) and the
 * latest, as traced keeps its first snapshot and a ring of recent ones.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "config/protowire.h"
#include "record/session_internal.h"

void tmr_session_add_service_packet(tmr_session *s, const uint8_t *packet, size_t len) {
  pthread_mutex_lock(&s->lock);
  tm_wire_put_bytes(s->service_packets, 1, packet, len);
  pthread_mutex_unlock(&s->lock);
}

static void put_uint(GByteArray *b, uint32_t field, uint64_t v) {
  tm_wire_put_tag(b, field, TM_WIRE_VARINT);
  tm_wire_put_varint(b, v);
}

static int64_t read_clock(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void tmr_session_add_clock_snapshot(tmr_session *s) {
  const Perfetto__Protos__TraceConfig__BuiltinDataSource *b =
      s->config.tc->message->builtin_data_sources;
  if (b && b->disable_clock_snapshotting)
    return;
  /* Read back to back; BOOTTIME first and last, the tightest of three
   * rounds kept, so every reading is within a few hundred ns of the others. */
  static const struct {
    uint32_t id;
    clockid_t clock;
  } clocks[] = {{6, CLOCK_BOOTTIME},        {1, CLOCK_REALTIME},
                {2, CLOCK_REALTIME_COARSE}, {3, CLOCK_MONOTONIC},
                {4, CLOCK_MONOTONIC_COARSE}, {5, CLOCK_MONOTONIC_RAW}};
  int64_t best[G_N_ELEMENTS(clocks)] = {0};
  int64_t best_spread = INT64_MAX;
  for (int round = 0; round < 3; round++) {
    int64_t values[G_N_ELEMENTS(clocks)];
    for (size_t i = 0; i < G_N_ELEMENTS(clocks); i++)
      values[i] = read_clock(clocks[i].clock);
    int64_t spread = read_clock(CLOCK_BOOTTIME) - values[0];
    if (spread < best_spread) {
      best_spread = spread;
      memcpy(best, values, sizeof best);
    }
  }
  GByteArray *snap = g_byte_array_new();
  for (size_t i = 0; i < G_N_ELEMENTS(clocks); i++) {
    GByteArray *c = g_byte_array_new();
    put_uint(c, 1, clocks[i].id);
    put_uint(c, 2, (uint64_t)best[i]);
    tm_wire_put_bytes(snap, 1, c->data, c->len);
    g_byte_array_unref(c);
  }
  uint32_t primary = b && b->has_primary_trace_clock && b->primary_trace_clock ? (uint32_t)b->primary_trace_clock : 6;
  put_uint(snap, 2, primary);
  GByteArray *packet = g_byte_array_new();
  put_uint(packet, 8, (uint64_t)best[0]);
  put_uint(packet, 10, TMR_SERVICE_SEQUENCE_ID);
  tm_wire_put_bytes(packet, 6, snap->data, snap->len);
  GByteArray *framed = g_byte_array_new();
  tm_wire_put_bytes(framed, 1, packet->data, packet->len);
  g_byte_array_unref(snap);
  g_byte_array_unref(packet);
  pthread_mutex_lock(&s->lock);
  g_queue_push_tail(&s->pending_snapshots, framed);
  if (s->pending_snapshots.length > TMR_MAX_PENDING_SNAPSHOTS) {
    /* Keep the oldest; the second oldest is the one to lose. */
    GList *second = s->pending_snapshots.head->next;
    g_byte_array_unref(second->data);
    g_queue_delete_link(&s->pending_snapshots, second);
  }
  pthread_mutex_unlock(&s->lock);
}

void tmr_session_add_trigger_packet(tmr_session *s, const tmr_pending_trigger *t) {
  GByteArray *trigger = g_byte_array_new();
  tm_wire_put_bytes(trigger, 1, t->name, strlen(t->name));
  if (t->producer_name)
    tm_wire_put_bytes(trigger, 2, t->producer_name, strlen(t->producer_name));
  if (t->uid >= 0)
    put_uint(trigger, 3, (uint64_t)t->uid);
  GByteArray *packet = g_byte_array_new();
  put_uint(packet, 8, (uint64_t)t->boottime_ns);
  put_uint(packet, 10, TMR_SERVICE_SEQUENCE_ID);
  tm_wire_put_bytes(packet, 46, trigger->data, trigger->len);
  tmr_session_add_service_packet(s, packet->data, packet->len);
  g_byte_array_unref(trigger);
  g_byte_array_unref(packet);
}

void tmr_session_add_trace_stats(tmr_session *s) {
  GByteArray *stats = g_byte_array_new();
  for (guint i = 0; i < s->buffers->len; i++) {
    tmr_buffer_stats b;
    tmr_trace_buffer_get_stats(s->buffers->pdata[i], &b);
    /* Every field, zeros included, as traced writes them. */
    GByteArray *bs = g_byte_array_new();
    put_uint(bs, 1, b.bytes_written);
    put_uint(bs, 2, b.chunks_written);
    put_uint(bs, 3, b.chunks_overwritten);
    put_uint(bs, 4, b.write_wrap_count);
    put_uint(bs, 5, 0);  /* patches_succeeded: no patches here */
    put_uint(bs, 6, 0);  /* patches_failed */
    put_uint(bs, 7, 0);  /* readaheads_succeeded: packets are never split */
    put_uint(bs, 8, 0);  /* readaheads_failed */
    put_uint(bs, 9, 0);  /* abi_violations */
    put_uint(bs, 10, 0); /* chunks_rewritten */
    put_uint(bs, 11, 0); /* chunks_committed_out_of_order */
    put_uint(bs, 12, b.buffer_size);
    put_uint(bs, 13, b.bytes_overwritten);
    put_uint(bs, 14, b.bytes_read);
    put_uint(bs, 15, b.padding_bytes_written);
    put_uint(bs, 16, b.padding_bytes_cleared);
    put_uint(bs, 17, b.chunks_read);
    put_uint(bs, 18, b.chunks_discarded);
    put_uint(bs, 19, b.trace_writer_packet_loss);
    tm_wire_put_bytes(stats, 1, bs->data, bs->len);
    g_byte_array_unref(bs);
  }
  put_uint(stats, 2, 1); /* producers_connected: this process */
  put_uint(stats, 3, 1); /* producers_seen */
  put_uint(stats, 4, tmr_registered_data_source_count() + 1); /* + track_event */
  put_uint(stats, 5, s->instances->len);                        /* data_sources_seen */
  put_uint(stats, 6, tmr_sessions_count());                     /* tracing_sessions */
  put_uint(stats, 7, s->buffers->len);                          /* total_buffers */
  put_uint(stats, 8, 0);                                        /* chunks_discarded (no invalid buffer ids here) */
  put_uint(stats, 9, 0);                                        /* patches_discarded */
  put_uint(stats, 10, 0);                                       /* invalid_packets */
  put_uint(stats, 12, s->flushes_requested);
  put_uint(stats, 13, s->flushes_succeeded);
  put_uint(stats, 14, s->flushes_requested - s->flushes_succeeded);
  if (s->state >= TMR_SESSION_STOPPING)
    put_uint(stats, 15, 1); /* final_flush_outcome: FINAL_FLUSH_SUCCEEDED */
  GByteArray *packet = g_byte_array_new();
  put_uint(packet, 8, (uint64_t)tmr_boottime_ns());
  put_uint(packet, 10, TMR_SERVICE_SEQUENCE_ID);
  tm_wire_put_bytes(packet, 35, stats->data, stats->len);
  tmr_session_add_service_packet(s, packet->data, packet->len);
  g_byte_array_unref(stats);
  g_byte_array_unref(packet);
}

/* --- the file ------------------------------------------------------------------------------ */

/* Writes framed packets one by one while they fit the size limit. */
static bool write_framed(tmr_session *s, const uint8_t *data, size_t len) {
  size_t at = 0;
  while (at < len) {
    /* 0x0a, a varint length, the packet. */
    size_t p = at + 1;
    uint64_t n = 0;
    int shift = 0;
    while (p < len && shift < 64) {
      uint8_t b = data[p++];
      n |= (uint64_t)(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80))
        break;
    }
    size_t frame = (p - at) + (size_t)n;
    if (frame > len - at)
      frame = len - at; /* cannot happen: writers frame whole packets */
    if (s->max_file_size && s->bytes_written + frame > s->max_file_size) {
      s->output_full = true;
      return false;
    }
    if (s->out && fwrite(data + at, 1, frame, s->out) != frame && !s->stop_error)
      g_set_error(&s->stop_error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "%s: writing the trace failed",
                  s->output_path);
    s->bytes_written += frame;
    at += frame;
  }
  return true;
}

static bool sink_chunk(void *user, uint32_t sequence_id, const uint8_t *data, size_t len) {
  (void)sequence_id;
  return write_framed(user, data, len);
}

bool tmr_session_write_out(tmr_session *s, bool discard) {
  pthread_mutex_lock(&s->output_lock);
  pthread_mutex_lock(&s->lock);
  GByteArray *pending = s->service_packets;
  s->service_packets = g_byte_array_new();
  GQueue snapshots = s->pending_snapshots;
  g_queue_init(&s->pending_snapshots);
  pthread_mutex_unlock(&s->lock);
  /* The trace_config (at the start) before the snapshots; snapshots
   * before the buffers' data, whose clocks they relate. */
  if (!s->output_full)
    write_framed(s, pending->data, pending->len);
  g_byte_array_unref(pending);
  for (GList *l = snapshots.head; l; l = l->next) {
    GByteArray *snapshot = l->data;
    if (!s->output_full)
      write_framed(s, snapshot->data, snapshot->len);
  }
  g_queue_clear_full(&snapshots, (GDestroyNotify)g_byte_array_unref);
  for (guint i = 0; i < s->buffers->len; i++) {
    tmr_trace_buffer *b = s->buffers->pdata[i];
    if (discard || s->output_full)
      tmr_trace_buffer_clear(b);
    else
      tmr_trace_buffer_drain(b, sink_chunk, s);
  }
  if (s->out)
    fflush(s->out);
  bool ok = !s->output_full;
  pthread_mutex_unlock(&s->output_lock);
  return ok;
}
