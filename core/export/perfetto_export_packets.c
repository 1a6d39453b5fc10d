/*
 * The Perfetto export's packets: sequences, emitting a packet, and the
 * process and thread descriptors every source writes before its events
 * (see perfetto_export_internal.h). Below the driver (perfetto_export.c)
 * and the system and service sources, which all call it; it calls none
 * of them.
 */
#include <string.h>

#include <tracemerge/tracemerge.h>

#include "export/perfetto_export_internal.h"
#include "record/encoder.h"

/* --- sequences ------------------------------------------------------------------ */

tmr_sequence *pe_sequence(pe_state *pe, uint32_t machine_id, uint32_t trace_id) {
  uint64_t key = (uint64_t)machine_id << 32 | (uint32_t)(trace_id + 1);
  tmr_sequence *seq = g_hash_table_lookup(pe->sequences, &key);
  if (!seq) {
    seq = tmr_packet_writer_new_sequence(pe->writer, pe->machine_export_id[machine_id]);
    g_hash_table_insert(pe->sequences, g_memdup2(&key, sizeof key), seq);
  }
  return seq;
}

tmr_sequence *pe_machine_sequence(pe_state *pe, uint32_t machine_id) {
  return pe_sequence(pe, machine_id, TM_NULL_ID);
}

void pe_emit(pe_state *pe, tmr_sequence *seq, int64_t ts, uint32_t flags, tmr_packet_build build,
                 void *ctx) {
  if (!tmr_sequence_emit(seq, ts, flags, build, ctx) && tmr_packet_writer_ok(pe->writer))
    pe->packets_dropped++;
}

int64_t pe_thread_pid(const pe_state *pe, uint32_t utid) {
  uint32_t upid = pe->model->threads.data[utid].upid;
  return upid == TM_NULL_ID ? -1 : pe->model->processes.data[upid].pid;
}

void pe_put_string(tmr_enc *e, uint32_t field, const pe_state *pe, tm_str_id id) {
  const char *s = pe_str(pe, id);
  if (s)
    tmr_enc_bytes(e, field, s, string_pool_length(pe->model->strings, id));
}

static void build_process(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const pe_descriptor_ctx *c = p;
  const tm_process_row *row = &c->pe->model->processes.data[c->id];
  uint8_t *td = tmr_enc_nest_begin(e, PACKET_TRACK_DESCRIPTOR);
  tmr_enc_uint(e, 1, c->uuid);
  uint8_t *pd = tmr_enc_nest_begin(e, 3);
  tmr_enc_int(e, 1, row->pid);
  /* The command line as one element: readers join elements with spaces,
   * so it reads back as it was. */
  pe_put_string(e, 2, c->pe, row->cmdline);
  pe_put_string(e, 6, c->pe, row->name);
  tmr_enc_nest_end(e, pd);
  tmr_enc_nest_end(e, td);
}

static void build_thread(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const pe_descriptor_ctx *c = p;
  const tm_thread_row *row = &c->pe->model->threads.data[c->id];
  uint8_t *td = tmr_enc_nest_begin(e, PACKET_TRACK_DESCRIPTOR);
  tmr_enc_uint(e, 1, c->uuid);
  if (c->parent_uuid)
    tmr_enc_uint(e, 5, c->parent_uuid);
  uint8_t *thd = tmr_enc_nest_begin(e, 4);
  tmr_enc_int(e, 1, pe_thread_pid(c->pe, c->id));
  tmr_enc_int(e, 2, row->tid);
  pe_put_string(e, 5, c->pe, row->name);
  tmr_enc_nest_end(e, thd);
  tmr_enc_nest_end(e, td);
}

void pe_ensure_process(pe_state *pe, tmr_sequence *seq, uint32_t upid) {
  if (upid == TM_NULL_ID || pe_bit_get(pe->process_written, upid))
    return;
  pe_bit_set(pe->process_written, upid);
  pe_descriptor_ctx c = {pe, upid, PE_PROCESS_UUID(upid), 0};
  pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_process, &c);
}

void pe_ensure_thread(pe_state *pe, tmr_sequence *seq, uint32_t utid) {
  if (utid == TM_NULL_ID || pe_bit_get(pe->thread_written, utid))
    return;
  pe_bit_set(pe->thread_written, utid);
  uint32_t upid = pe->model->threads.data[utid].upid;
  pe_ensure_process(pe, seq, upid);
  pe_descriptor_ctx c = {pe, utid, PE_THREAD_UUID(utid),
                      upid == TM_NULL_ID ? 0 : PE_PROCESS_UUID(upid)};
  pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_thread, &c);
}
