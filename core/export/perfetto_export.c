/*
 * The Perfetto protobuf export: the driver, identity, tracks, slices,
 * flows and counters (see perfetto_export.h for what the trace holds);
 * sequences and the process and thread descriptors, which the system and
 * service sources write too, are perfetto_export_packets.c.
 *
 * The driver merges its event sources by timestamp (slice begins, slice
 * ends, counters, and the system sources of perfetto_export_system.c), so
 * each machine's packets come in time order and a reader sorts nothing.
 *
 * Slices are written as the model nests them, not as their timestamps
 * alone would: before a slice begins, every slice open on its track above
 * its parent ends (a begin at the very instant its parent ends, or a
 * zero-length child, stays inside it). At equal timestamps begins go
 * before pending ends for the same reason. So a reader that nests by
 * begin/end order rebuilds the same depth and parent for every slice.
 */
#include "export/perfetto_export.h"

#include <string.h>

#include <tracemerge/tracemerge.h>

#include "export/perfetto_export_internal.h"
#include "record/encoder.h"

#define MAX_TRACK_NESTING 64

enum {
  TE_TYPE_SLICE_BEGIN = 1,
  TE_TYPE_SLICE_END = 2,
  TE_TYPE_INSTANT = 3,
  TE_TYPE_COUNTER = 4,
  TD_SIBLING_MERGE_NONE = 2,    /* TrackDescriptor.sibling_merge_behavior */
  LEGACY_SCOPE_GLOBAL = 1,      /* LegacyEvent.instant_event_scope */
  LEGACY_SCOPE_PROCESS = 2,
};

/* --- descriptors ------------------------------------------------------------------ */

static void build_track(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const pe_descriptor_ctx *c = p;
  const tm_track_row *row = &c->pe->model->tracks.data[c->id];
  uint8_t *td = tmr_enc_nest_begin(e, PACKET_TRACK_DESCRIPTOR);
  tmr_enc_uint(e, 1, c->uuid);
  if (c->parent_uuid)
    tmr_enc_uint(e, 5, c->parent_uuid);
  pe_put_string(e, 2, c->pe, row->name);
  if (row->event_type == TM_TRACK_COUNTER) {
    uint8_t *cd = tmr_enc_nest_begin(e, 8);
    pe_put_string(e, 6, c->pe, row->counter_unit);
    tmr_enc_nest_end(e, cd);
  } else {
    /* sibling_merge_behavior NONE: the model's tracks are merged already,
     * so each stays one track when read back (docs/formats.md §1.9). */
    tmr_enc_uint(e, 15, TD_SIBLING_MERGE_NONE);
  }
  tmr_enc_nest_end(e, td);
}

static bool is_thread_track(const pe_state *pe, uint32_t track_id) {
  const tm_track_row *row = &pe->model->tracks.data[track_id];
  return row->utid != TM_NULL_ID && pe->thread_track[row->utid] == track_id;
}

static uint64_t track_uuid(const pe_state *pe, uint32_t track_id) {
  return is_thread_track(pe, track_id) ? PE_THREAD_UUID(pe->model->tracks.data[track_id].utid)
                                       : PE_TRACK_UUID(track_id);
}

/* Writes the descriptor of `track_id` (after its parents') once; returns
 * its uuid. */
static uint64_t ensure_track(pe_state *pe, tmr_sequence *seq, uint32_t track_id, int depth) {
  const tm_track_row *row = &pe->model->tracks.data[track_id];
  if (is_thread_track(pe, track_id)) {
    pe_ensure_thread(pe, seq, row->utid);
    return PE_THREAD_UUID(row->utid);
  }
  uint64_t uuid = PE_TRACK_UUID(track_id);
  if (pe_bit_get(pe->track_written, track_id))
    return uuid;
  pe_bit_set(pe->track_written, track_id);
  uint64_t parent = 0;
  if (row->parent_id != TM_NULL_ID && row->parent_id < pe->model->tracks.len &&
      depth < MAX_TRACK_NESTING) {
    parent = ensure_track(pe, seq, row->parent_id, depth + 1);
  } else if (row->utid != TM_NULL_ID) {
    pe_ensure_thread(pe, seq, row->utid);
    parent = PE_THREAD_UUID(row->utid);
  } else if (row->upid != TM_NULL_ID) {
    pe_ensure_process(pe, seq, row->upid);
    parent = PE_PROCESS_UUID(row->upid);
  }
  pe_descriptor_ctx c = {pe, track_id, uuid, parent};
  pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_track, &c);
  return uuid;
}

/* Every process and thread of a machine (the placeholders of pid and tid
 * 0 unless named: every machine has them), so that the identity rows exist
 * even where no event names them. Threads without a process come with
 * their events only: a descriptor must name a pid. */
static void write_identity(pe_state *pe, uint32_t machine_id) {
  tmr_sequence *seq = pe_machine_sequence(pe, machine_id);
  const tm_model *model = pe->model;
  for (uint32_t upid = 0; upid < model->processes.len; upid++) {
    const tm_process_row *p = &model->processes.data[upid];
    if (p->machine_id == machine_id && (p->pid != 0 || p->name || p->cmdline))
      pe_ensure_process(pe, seq, upid);
  }
  for (uint32_t utid = 0; utid < model->threads.len; utid++) {
    const tm_thread_row *t = &model->threads.data[utid];
    if (t->machine_id == machine_id && (t->tid != 0 || t->name) && t->upid != TM_NULL_ID)
      pe_ensure_thread(pe, seq, utid);
  }
}

/* --- args ---------------------------------------------------------------------------- */

/* The annotation name of arg key `key`: the key without the namespace the
 * proto reader gives annotations back ("debug.") or JSON gives its args
 * ("args."), else the whole key. Returned as an offset into the key. */
static size_t annotation_skip(pe_state *pe, tm_str_id key) {
  gpointer found = g_hash_table_lookup(pe->annotation_skip, GUINT_TO_POINTER(key));
  if (found)
    return GPOINTER_TO_SIZE(found) - 1;
  const char *s = pe_str(pe, key);
  size_t skip = 0;
  if (s && g_str_has_prefix(s, "debug.") && s[6])
    skip = 6;
  else if (s && g_str_has_prefix(s, "args.") && s[5])
    skip = 5;
  g_hash_table_insert(pe->annotation_skip, GUINT_TO_POINTER(key), GSIZE_TO_POINTER(skip + 1));
  return skip;
}

static void put_interned_name(tmr_sequence *seq, tmr_enc *in, uint32_t kind, uint32_t field,
                              uint64_t iid, const char *text, size_t len) {
  if (!tmr_sequence_mark(seq, kind, iid))
    return;
  uint8_t *body = tmr_enc_nest_begin(in, field);
  tmr_enc_uint(in, 1, iid);
  tmr_enc_bytes(in, 2, text, len);
  tmr_enc_nest_end(in, body);
}

static void put_annotations(pe_state *pe, tmr_sequence *seq, tmr_enc *e, tmr_enc *in,
                            uint32_t arg_set_id) {
  if (arg_set_id == 0)
    return;
  const tm_model *model = pe->model;
  size_t n_rows;
  const uint32_t *rows = model_index_arg_set(pe->index, arg_set_id, &n_rows);
  for (size_t i = 0; i < n_rows; i++) {
    const tm_arg_row *a = &model->args.data[rows[i]];
    const tm_arg_key *ak = model_arg_key(model, a);
    const char *key = pe_str(pe, ak->key);
    if (!key)
      continue;
    size_t skip = annotation_skip(pe, ak->key);
    size_t key_len = string_pool_length(model->strings, ak->key);
    put_interned_name(seq, in, PE_MARK_DEBUG_NAME, INTERNED_DEBUG_NAMES, ak->key, key + skip,
                      key_len - skip);
    uint8_t *body = tmr_enc_nest_begin(e, 4);
    tmr_enc_uint(e, 1, ak->key);
    switch ((tm_arg_type)ak->value_type) {
    case TM_ARG_INT:
      tmr_enc_int(e, 4, model_arg_int(model, a));
      break;
    case TM_ARG_UINT:
      tmr_enc_uint(e, 3, (uint64_t)model_arg_int(model, a));
      break;
    case TM_ARG_BOOL:
      tmr_enc_uint(e, 2, model_arg_int(model, a) != 0);
      break;
    case TM_ARG_REAL:
      tmr_enc_double(e, 5, model_arg_real(model, a));
      break;
    case TM_ARG_POINTER:
      tmr_enc_uint(e, 7, (uint64_t)model_arg_int(model, a));
      break;
    case TM_ARG_JSON: {
      size_t len;
      const char *s = model_arg_string(model, a, &len);
      if (s)
        tmr_enc_bytes(e, 9, s, len);
      break;
    }
    case TM_ARG_STRING:
    default: {
      size_t len;
      const char *s = model_arg_string(model, a, &len);
      tmr_enc_bytes(e, 6, s ? s : "", len);
      break;
    }
    }
    tmr_enc_nest_end(e, body);
  }
}

/* --- slices --------------------------------------------------------------------------- */

typedef struct pending_end {
  int64_t ts;
  uint32_t depth;
  uint32_t slice_id;
} pending_end;

typedef struct slice_source {
  uint32_t next;        /* next slice id to consider */
  uint8_t *has_children;
  uint8_t *open;        /* begun and not ended */
  GArray **stacks;      /* by track id: open slice ids, innermost last */
  GArray *heap;         /* pending_end: min by (ts, deeper first) */
} slice_source;

static bool end_before(const pending_end *a, const pending_end *b) {
  if (a->ts != b->ts)
    return a->ts < b->ts;
  if (a->depth != b->depth)
    return a->depth > b->depth;
  return a->slice_id > b->slice_id;
}

static void heap_push(GArray *heap, pending_end x) {
  g_array_append_val(heap, x);
  pending_end *h = (pending_end *)heap->data;
  size_t i = heap->len - 1;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!end_before(&h[i], &h[parent]))
      break;
    pending_end t = h[i];
    h[i] = h[parent];
    h[parent] = t;
    i = parent;
  }
}

static void heap_pop(GArray *heap) {
  pending_end *h = (pending_end *)heap->data;
  size_t n = heap->len - 1;
  h[0] = h[n];
  g_array_set_size(heap, n);
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && end_before(&h[l], &h[m]))
      m = l;
    if (r < n && end_before(&h[r], &h[m]))
      m = r;
    if (m == i)
      break;
    pending_end t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

static slice_source *slice_source_new(pe_state *pe) {
  const tm_model *model = pe->model;
  slice_source *src = g_new0(slice_source, 1);
  size_t n = model->slices.len;
  src->has_children = g_new0(uint8_t, n / 8 + 1);
  src->open = g_new0(uint8_t, n / 8 + 1);
  for (size_t s = 0; s < n; s++) {
    uint32_t parent = model->slices.data[s].parent_id;
    if (parent < n && export_slice_on(pe->sel, (uint32_t)s))
      pe_bit_set(src->has_children, parent);
  }
  src->stacks = g_new0(GArray *, model->tracks.len + 1);
  src->heap = g_array_new(FALSE, FALSE, sizeof(pending_end));
  return src;
}

static void slice_source_free(slice_source *src, size_t n_tracks) {
  for (size_t t = 0; t < n_tracks; t++)
    if (src->stacks[t])
      g_array_unref(src->stacks[t]);
  g_free(src->stacks);
  g_array_unref(src->heap);
  g_free(src->has_children);
  g_free(src->open);
  g_free(src);
}

typedef struct event_ctx {
  pe_state *pe;
  uint32_t slice_id;
  uint64_t uuid;
  int type;
  double value; /* counters */
  /* Scoped instants: LEGACY_SCOPE_*, 0 for any other event; the pid of a
   * process-scoped one. */
  int legacy_scope;
  int64_t legacy_pid;
} event_ctx;

/* The legacy instant scope whose track `track_id` is (Chrome's global and
 * process instant tracks), or 0. A descriptor cannot give them back: it
 * makes a track event type, and a parentless one without a name is named
 * after its first event (docs/formats.md §1.9); a legacy instant with its
 * scope lands on the same track in trace_processor and in our reader. */
static int legacy_instant_scope(const pe_state *pe, uint32_t track_id, int64_t *pid) {
  const tm_track_row *row = &pe->model->tracks.data[track_id];
  const char *type = pe_str(pe, row->type);
  if (!type || row->name)
    return 0;
  if (strcmp(type, "legacy_chrome_global_instants") == 0)
    return LEGACY_SCOPE_GLOBAL;
  if (strcmp(type, "chrome_process_instant") == 0 && row->upid != TM_NULL_ID) {
    *pid = pe->model->processes.data[row->upid].pid;
    return LEGACY_SCOPE_PROCESS;
  }
  return 0;
}

/* Flow ids are the flow rows' ids + 1: each row is its own flow, from
 * its source slice (flow_ids) to its destination (terminating_flow_ids).
 * Written: the flows whose other slice is written too (a filter may drop
 * either), each list in flow row order. */
static void put_flow_ids(pe_state *pe, tmr_enc *e, uint32_t slice_id) {
  const tm_model *model = pe->model;
  for (int pass = 0; pass < 2; pass++) {
    size_t n_flows;
    const uint32_t *flows = pass == 0 ? model_index_flows_out(pe->index, slice_id, &n_flows)
                                      : model_index_flows_in(pe->index, slice_id, &n_flows);
    for (size_t i = 0; i < n_flows; i++) {
      const tm_flow_row *row = &model->flows.data[flows[i]];
      uint32_t other = pass == 0 ? row->slice_in : row->slice_out;
      if (other < model->slices.len && export_slice_on(pe->sel, other))
        tmr_enc_fixed64(e, pass == 0 ? 47 : 48, (uint64_t)flows[i] + 1);
    }
  }
}

static void build_slice_event(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  const event_ctx *c = p;
  pe_state *pe = c->pe;
  const tm_slice_row *s = &pe->model->slices.data[c->slice_id];
  uint8_t *te = tmr_enc_nest_begin(e, PACKET_TRACK_EVENT);
  if (c->legacy_scope) {
    /* An "I" of its scope (no type, no track: the legacy phase names it). */
    uint8_t *le = tmr_enc_nest_begin(e, 6);
    tmr_enc_uint(e, 2, 'I');
    tmr_enc_uint(e, 14, (uint64_t)c->legacy_scope);
    if (c->legacy_scope == LEGACY_SCOPE_PROCESS)
      tmr_enc_int(e, 18, c->legacy_pid);
    tmr_enc_nest_end(e, le);
  } else {
    tmr_enc_uint(e, 9, (uint64_t)c->type);
    tmr_enc_uint(e, 11, c->uuid);
  }
  if (c->type != TE_TYPE_SLICE_END) {
    tm_str_id category = model_slice_category(pe->model, c->slice_id);
    if (category) {
      put_interned_name(seq, in, PE_MARK_CATEGORY, INTERNED_EVENT_CATEGORIES, category,
                        pe_str(pe, category),
                        string_pool_length(pe->model->strings, category));
      tmr_enc_uint(e, 3, category);
    }
    if (s->name) {
      put_interned_name(seq, in, PE_MARK_EVENT_NAME, INTERNED_EVENT_NAMES, s->name,
                        pe_str(pe, s->name), string_pool_length(pe->model->strings, s->name));
      tmr_enc_uint(e, 10, s->name);
    }
    put_annotations(pe, seq, e, in, s->arg_set_id);
    put_flow_ids(pe, e, c->slice_id);
  }
  tmr_enc_nest_end(e, te);
}

static tmr_sequence *track_sequence(pe_state *pe, uint32_t track_id) {
  const tm_track_row *row = &pe->model->tracks.data[track_id];
  return pe_sequence(pe, row->machine_id, row->trace_id);
}

static void write_end(pe_state *pe, slice_source *src, uint32_t slice_id) {
  const tm_slice_row *s = &pe->model->slices.data[slice_id];
  src->open[slice_id / 8] &= (uint8_t)~(1u << (slice_id % 8));
  tmr_sequence *seq = track_sequence(pe, s->track_id);
  event_ctx c = {pe, slice_id, track_uuid(pe, s->track_id), TE_TYPE_SLICE_END, 0, 0, 0};
  pe_emit(pe, seq, model_slice_ts(pe->model, slice_id) + model_slice_dur(pe->model, s),
          TMR_SEQ_NEEDS_INCREMENTAL_STATE, build_slice_event, &c);
}

/* Ends every slice open on `track_id` above `keep` (TM_NULL_ID: all). */
static void close_above(pe_state *pe, slice_source *src, uint32_t track_id, uint32_t keep) {
  GArray *stack = src->stacks[track_id];
  if (!stack)
    return;
  bool keep_open = keep != TM_NULL_ID && pe_bit_get(src->open, keep);
  while (stack->len > 0) {
    uint32_t top = g_array_index(stack, uint32_t, stack->len - 1);
    if (keep_open && top == keep)
      break;
    g_array_set_size(stack, stack->len - 1);
    /* Unfinished slices (dur -1) stay open in the trace too. */
    if (pe_bit_get(src->open, top) &&
        model_slice_dur(pe->model, &pe->model->slices.data[top]) >= 0)
      write_end(pe, src, top);
  }
}

static int64_t begins_next_ts(pe_state *pe, void *self) {
  slice_source *src = self;
  const tm_model *model = pe->model;
  while (src->next < model->slices.len && !export_slice_on(pe->sel, src->next))
    src->next++;
  return src->next < model->slices.len ? model_slice_ts(model, src->next) : INT64_MAX;
}

static void begins_emit(pe_state *pe, void *self) {
  slice_source *src = self;
  uint32_t id = src->next++;
  const tm_slice_row *s = &pe->model->slices.data[id];
  uint32_t track = s->track_id;
  if (track >= pe->model->tracks.len)
    return;
  close_above(pe, src, track, s->parent_id);
  tmr_sequence *seq = track_sequence(pe, track);
  int64_t ts = model_slice_ts(pe->model, id), dur = model_slice_dur(pe->model, s);
  bool instant = dur == 0 && !pe_bit_get(src->has_children, id);
  int64_t pid = 0;
  int scope = instant ? legacy_instant_scope(pe, track, &pid) : 0;
  if (scope) {
    event_ctx c = {pe, id, 0, TE_TYPE_INSTANT, 0, scope, pid};
    pe_emit(pe, seq, ts, TMR_SEQ_NEEDS_INCREMENTAL_STATE, build_slice_event, &c);
    return;
  }
  uint64_t uuid = ensure_track(pe, seq, track, 0);
  event_ctx c = {pe, id, uuid, instant ? TE_TYPE_INSTANT : TE_TYPE_SLICE_BEGIN, 0, 0, 0};
  pe_emit(pe, seq, ts, TMR_SEQ_NEEDS_INCREMENTAL_STATE, build_slice_event, &c);
  if (instant)
    return;
  if (!src->stacks[track])
    src->stacks[track] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_array_append_val(src->stacks[track], id);
  pe_bit_set(src->open, id);
  if (dur >= 0)
    heap_push(src->heap, (pending_end){ts + dur, s->depth, id});
}

static int64_t ends_next_ts(pe_state *pe, void *self) {
  (void)pe;
  slice_source *src = self;
  while (src->heap->len > 0) {
    const pending_end *top = &g_array_index(src->heap, pending_end, 0);
    if (pe_bit_get(src->open, top->slice_id))
      return top->ts;
    heap_pop(src->heap); /* ended already, by a later begin on its track */
  }
  return INT64_MAX;
}

static void ends_emit(pe_state *pe, void *self) {
  slice_source *src = self;
  uint32_t id = g_array_index(src->heap, pending_end, 0).slice_id;
  heap_pop(src->heap);
  /* Its open descendants end first (they end no later: deeper first). */
  uint32_t track = pe->model->slices.data[id].track_id;
  GArray *stack = src->stacks[track];
  close_above(pe, src, track, id);
  if (stack && stack->len > 0 && g_array_index(stack, uint32_t, stack->len - 1) == id)
    g_array_set_size(stack, stack->len - 1);
  write_end(pe, src, id);
}

/* --- counters --------------------------------------------------------------------------- */

typedef struct counter_source {
  uint32_t next;
} counter_source;

static bool counter_on(const pe_state *pe, uint32_t id) {
  const tm_counter_row *c = &pe->model->counters.data[id];
  if (c->track_id >= pe->model->tracks.len)
    return false;
  return export_machine_on(pe->sel, pe->model->tracks.data[c->track_id].machine_id) &&
         export_point_on(pe->sel, c->ts);
}

static int64_t counters_next_ts(pe_state *pe, void *self) {
  counter_source *src = self;
  while (src->next < pe->model->counters.len && !counter_on(pe, src->next))
    src->next++;
  return src->next < pe->model->counters.len ? pe->model->counters.data[src->next].ts
                                              : INT64_MAX;
}

static void build_counter(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const event_ctx *c = p;
  uint8_t *te = tmr_enc_nest_begin(e, PACKET_TRACK_EVENT);
  tmr_enc_uint(e, 9, TE_TYPE_COUNTER);
  tmr_enc_uint(e, 11, c->uuid);
  tmr_enc_double(e, 44, c->value);
  tmr_enc_nest_end(e, te);
}

static void counters_emit(pe_state *pe, void *self) {
  counter_source *src = self;
  const tm_counter_row *row = &pe->model->counters.data[src->next++];
  if (pe_service_write_cpu_time(pe, row))
    return;
  tmr_sequence *seq = track_sequence(pe, row->track_id);
  uint64_t uuid = ensure_track(pe, seq, row->track_id, 0);
  event_ctx c = {pe, 0, uuid, TE_TYPE_COUNTER, row->value, 0, 0};
  pe_emit(pe, seq, row->ts, TMR_SEQ_NEEDS_INCREMENTAL_STATE, build_counter, &c);
}

/* --- the driver ---------------------------------------------------------------------------- */

static void find_thread_tracks(pe_state *pe) {
  const tm_model *model = pe->model;
  pe->thread_track = g_new(uint32_t, model->threads.len + 1);
  for (size_t u = 0; u <= model->threads.len; u++)
    pe->thread_track[u] = TM_NULL_ID;
  pe->thread_execution = 0;
  /* The string pool is not ours to add to: look the type up by value. */
  for (uint32_t t = 0; t < model->tracks.len; t++) {
    const tm_track_row *row = &model->tracks.data[t];
    if (row->utid == TM_NULL_ID || row->utid >= model->threads.len ||
        row->event_type != TM_TRACK_SLICE || pe->thread_track[row->utid] != TM_NULL_ID)
      continue;
    const char *type = pe_str(pe, row->type);
    if (type && strcmp(type, "thread_execution") == 0)
      pe->thread_track[row->utid] = t;
  }
}

static void assign_machines(pe_state *pe) {
  const tm_model *model = pe->model;
  pe->machine_export_id = g_new(uint32_t, model->machines.len + 1);
  pe->host_machine = TM_NULL_ID;
  uint32_t next = 0;
  for (uint32_t m = 0; m < model->machines.len; m++) {
    if (!export_machine_on(pe->sel, m)) {
      pe->machine_export_id[m] = UINT32_MAX;
      continue;
    }
    if (pe->host_machine == TM_NULL_ID)
      pe->host_machine = m;
    pe->machine_export_id[m] = next++;
  }
}

bool perfetto_export(const tm_model *model, const export_selection *sel, tmr_out_fn out,
                     void *user, GError **error) {
  pe_state pe = {
      .model = model,
      .sel = sel,
      .writer = tmr_packet_writer_new(out, user),
      .sequences = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
      .process_written = g_new0(uint8_t, model->processes.len / 8 + 1),
      .thread_written = g_new0(uint8_t, model->threads.len / 8 + 1),
      .track_written = g_new0(uint8_t, model->tracks.len / 8 + 1),
      .annotation_skip = g_hash_table_new(g_direct_hash, g_direct_equal),
  };
  assign_machines(&pe);
  find_thread_tracks(&pe);
  pe.index = model_index_new(pe.model);
  pe.system = pe_system_new(&pe);

  /* The host first: its packets make it the file's own machine. */
  for (int64_t m = -1; m < (int64_t)model->machines.len; m++) {
    uint32_t machine = m < 0 ? pe.host_machine : (uint32_t)m;
    if (machine == TM_NULL_ID || (m >= 0 && machine == pe.host_machine) ||
        !export_machine_on(sel, machine))
      continue;
    pe_system_write_machine(&pe, machine);
    write_identity(&pe, machine);
  }

  slice_source *slices = slice_source_new(&pe);
  counter_source counters = {0};
  pe_source sources[8] = {
      {begins_next_ts, begins_emit, slices},
      {ends_next_ts, ends_emit, slices},
      {counters_next_ts, counters_emit, &counters},
  };
  size_t n_sources = 3;
  n_sources += pe_system_sources(&pe, sources + n_sources);
  int64_t next[8];
  for (size_t i = 0; i < n_sources; i++)
    next[i] = sources[i].next_ts(&pe, sources[i].self);
  for (;;) {
    /* Ties go to the earlier source: begins before ends (see above). */
    size_t best = 0;
    for (size_t i = 1; i < n_sources; i++)
      if (next[i] < next[best])
        best = i;
    if (next[best] == INT64_MAX)
      break;
    sources[best].emit_next(&pe, sources[best].self);
    /* A begin may end slices, which moves the ends' source too. */
    for (size_t i = 0; i < n_sources; i++)
      if (i == best || i == 1)
        next[i] = sources[i].next_ts(&pe, sources[i].self);
  }
  pe_system_finish(&pe);

  bool ok = tmr_packet_writer_flush(pe.writer);
  if (!ok)
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "writing the Perfetto trace failed");
  slice_source_free(slices, model->tracks.len);
  pe_system_free(pe.system);
  tmr_packet_writer_free(pe.writer);
  g_hash_table_unref(pe.sequences);
  g_hash_table_unref(pe.annotation_skip);
  g_free(pe.process_written);
  g_free(pe.thread_written);
  g_free(pe.track_written);
  g_free(pe.thread_track);
  g_free(pe.machine_export_id);
  model_index_free(pe.index);
  return ok;
}
