/*
 * Event buffers (see event_buffer.h): per run, the held events form a
 * binary heap whose top is the event the buffer gives up first (RING: the
 * oldest, DISCARD: the newest, by (ts, emission order)); per buffer, the
 * runs that hold events form a heap whose top is the run whose top event
 * lies farthest from the run's own end (RING) or start (DISCARD). A run's
 * "mark" is the event it gave up last that ranks highest: events that
 * rank at or below it are refused when they come, which keeps what a run
 * holds a gap-free tail (RING) or head (DISCARD) of what it was offered.
 *
 * Bytes charged: each run's record array by capacity (held records are
 * 56 bytes), each payload (args, thread times) by its allocation plus an
 * allocator overhead. Arrays grow by an eighth, never past the budget,
 * and shrink when an eighth is unused (a run that holds nothing frees its
 * array), so a buffer's bytes can move between its runs.
 */
#include "buffer/event_buffer.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

/* What malloc adds to each allocation, as charged (glibc: 8-16 bytes). */
#define ALLOC_OVERHEAD 16u
#define NO_POS SIZE_MAX

typedef struct held_payload {
  int64_t thread_ts;
  int64_t thread_dur;
  size_t n_args;
  tm_buffer_arg args[];
} held_payload;

typedef struct held {
  tm_event ev;
  uint64_t seq; /* emission order over every buffer */
  held_payload *payload;
} held;

typedef struct brun {
  void *key;
  uint32_t buffer;
  held *heap;
  size_t len, cap;
  bool seen_any;
  int64_t max_seen, min_seen; /* over the events offered and not cut */
  bool has_mark;
  held mark; /* ev.ts and seq only */
  bool has_cutoff;
  int64_t cutoff;
  size_t heap_pos; /* in its buffer's run heap, or NO_POS */
} brun;

typedef struct buffer {
  tm_buffer_spec spec;
  uint64_t charged;
  tm_buffer_stats stats;
  uint32_t *run_heap; /* run indexes, max-heap by age */
  size_t n_run_heap, cap_run_heap;
} buffer;

typedef struct staged {
  uint32_t owner;
  bool used;
  size_t n;
  tm_buffer_arg args[];
} staged;

struct tm_event_buffers {
  buffer *bufs;
  size_t n_bufs;
  brun *runs;
  size_t n_runs, cap_runs;
  GHashTable *run_index; /* key -> run index + 1 */
  void *last_key;
  uint32_t last_run;
  uint64_t seq;
  GHashTable *staged;  /* id -> staged* (owned) */
  GArray *staged_used; /* ids used since the last release */
  uint32_t next_staged;
  uint64_t args_lost;
};

size_t event_buffers_record_bytes(void) {
  return sizeof(held);
}

tm_event_buffers *event_buffers_new(const tm_buffer_spec *specs, size_t n) {
  tm_event_buffers *b = g_new0(tm_event_buffers, 1);
  b->bufs = g_new0(buffer, n ? n : 1);
  b->n_bufs = n;
  for (size_t i = 0; i < n; i++) {
    b->bufs[i].spec = specs[i];
    b->bufs[i].stats.size_bytes = specs[i].size_bytes;
    b->bufs[i].stats.discard = specs[i].discard;
  }
  b->run_index = g_hash_table_new(g_direct_hash, g_direct_equal);
  b->staged = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  b->staged_used = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  b->next_staged = 1;
  return b;
}

static void free_run_events(brun *r) {
  for (size_t i = 0; i < r->len; i++)
    g_free(r->heap[i].payload);
  g_free(r->heap);
  r->heap = NULL;
  r->len = r->cap = 0;
}

void event_buffers_free(tm_event_buffers *b) {
  if (!b)
    return;
  for (size_t i = 0; i < b->n_runs; i++)
    free_run_events(&b->runs[i]);
  g_free(b->runs);
  for (size_t i = 0; i < b->n_bufs; i++)
    g_free(b->bufs[i].run_heap);
  g_free(b->bufs);
  g_hash_table_destroy(b->run_index);
  g_hash_table_destroy(b->staged);
  g_array_free(b->staged_used, TRUE);
  g_free(b);
}

/* --- staged arg sets ---------------------------------------------------- */

uint32_t event_buffers_stage_args(tm_event_buffers *b, uint32_t owner, const tm_buffer_arg *args,
                                  size_t n) {
  /* Ids wrap after 2^31 sets; one still staged is skipped. */
  uint32_t id;
  do {
    id = b->next_staged;
    b->next_staged = b->next_staged >= 0x7fffffffu ? 1 : b->next_staged + 1;
  } while (g_hash_table_contains(b->staged, GUINT_TO_POINTER(id)));
  staged *s = g_malloc(sizeof(staged) + n * sizeof(tm_buffer_arg));
  s->owner = owner;
  s->used = false;
  s->n = n;
  if (n)
    memcpy(s->args, args, n * sizeof(tm_buffer_arg));
  g_hash_table_insert(b->staged, GUINT_TO_POINTER(id), s);
  return EVENT_BUFFER_STAGED_ARGS | id;
}

void event_buffers_release_staged(tm_event_buffers *b, uint32_t owner, bool all) {
  for (guint i = 0; i < b->staged_used->len; i++) {
    gpointer key = GUINT_TO_POINTER(g_array_index(b->staged_used, uint32_t, i));
    staged *s = g_hash_table_lookup(b->staged, key);
    if (s && s->owner == owner)
      g_hash_table_remove(b->staged, key);
  }
  g_array_set_size(b->staged_used, 0);
  if (!all)
    return;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, b->staged);
  while (g_hash_table_iter_next(&it, &key, &value))
    if (((staged *)value)->owner == owner)
      g_hash_table_iter_remove(&it);
}

/* --- ranking -------------------------------------------------------------- */

static bool older(const held *x, const held *y) {
  return x->ev.ts < y->ev.ts || (x->ev.ts == y->ev.ts && x->seq < y->seq);
}

/* True if `x` is given up before `y` (it belongs above y in a run heap). */
static bool gives_up_first(const buffer *buf, const held *x, const held *y) {
  return buf->spec.discard ? older(y, x) : older(x, y);
}

static int64_t distance(int64_t a, int64_t b) {
  int64_t d;
  return __builtin_sub_overflow(a, b, &d) || d < 0 ? (a < b ? 0 : INT64_MAX) : d;
}

/* How far `ev` lies from its run's end (RING) or start (DISCARD). */
static int64_t age_of(const buffer *buf, const brun *r, int64_t ts) {
  return buf->spec.discard ? distance(ts, r->min_seen) : distance(r->max_seen, ts);
}

static int64_t run_age(const tm_event_buffers *b, const brun *r) {
  return age_of(&b->bufs[r->buffer], r, r->heap[0].ev.ts);
}

/* --- a run's heap of held events ------------------------------------------ */

/* The sifts, one pair per policy so that the comparison inlines (they
 * run for nearly every event a full buffer is offered). Both move a hole
 * instead of swapping: one copy per level. FIRST(x, y): x belongs above y. */
#define OLDER(x, y) ((x)->ev.ts < (y)->ev.ts || ((x)->ev.ts == (y)->ev.ts && (x)->seq < (y)->seq))
#define DEFINE_SIFTS(suffix, FIRST)                                                           \
  static void held_sift_up_##suffix(brun *r, size_t i) {                                      \
    held moving = r->heap[i];                                                                 \
    while (i > 0) {                                                                           \
      size_t parent = (i - 1) / 2;                                                            \
      if (!FIRST(&moving, &r->heap[parent]))                                                  \
        break;                                                                                \
      r->heap[i] = r->heap[parent];                                                           \
      i = parent;                                                                             \
    }                                                                                         \
    r->heap[i] = moving;                                                                      \
  }                                                                                           \
  static void held_sift_down_##suffix(brun *r, size_t i) {                                    \
    held moving = r->heap[i];                                                                 \
    for (;;) {                                                                                \
      size_t child = 2 * i + 1;                                                               \
      if (child >= r->len)                                                                    \
        break;                                                                                \
      if (child + 1 < r->len && FIRST(&r->heap[child + 1], &r->heap[child]))                  \
        child++;                                                                              \
      if (!FIRST(&r->heap[child], &moving))                                                   \
        break;                                                                                \
      r->heap[i] = r->heap[child];                                                            \
      i = child;                                                                              \
    }                                                                                         \
    r->heap[i] = moving;                                                                      \
  }
#define RING_FIRST(x, y) OLDER(x, y)
#define DISCARD_FIRST(x, y) OLDER(y, x)
DEFINE_SIFTS(ring, RING_FIRST)
DEFINE_SIFTS(discard, DISCARD_FIRST)

static void held_sift_up(const buffer *buf, brun *r, size_t i) {
  if (buf->spec.discard)
    held_sift_up_discard(r, i);
  else
    held_sift_up_ring(r, i);
}

static void held_sift_down(const buffer *buf, brun *r, size_t i) {
  if (buf->spec.discard)
    held_sift_down_discard(r, i);
  else
    held_sift_down_ring(r, i);
}

/* --- a buffer's heap of runs, by age --------------------------------------- */

static bool run_first(const tm_event_buffers *b, uint32_t x, uint32_t y) {
  int64_t ax = run_age(b, &b->runs[x]), ay = run_age(b, &b->runs[y]);
  return ax > ay || (ax == ay && x < y);
}

static void run_heap_set(tm_event_buffers *b, buffer *buf, size_t pos, uint32_t run) {
  buf->run_heap[pos] = run;
  b->runs[run].heap_pos = pos;
}

static void run_heap_sift(tm_event_buffers *b, buffer *buf, size_t i) {
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    uint32_t here = buf->run_heap[i], up = buf->run_heap[parent];
    if (!run_first(b, here, up))
      break;
    run_heap_set(b, buf, parent, here);
    run_heap_set(b, buf, i, up);
    i = parent;
  }
  for (;;) {
    size_t first = i, left = 2 * i + 1, right = left + 1;
    if (left < buf->n_run_heap && run_first(b, buf->run_heap[left], buf->run_heap[first]))
      first = left;
    if (right < buf->n_run_heap && run_first(b, buf->run_heap[right], buf->run_heap[first]))
      first = right;
    if (first == i)
      return;
    uint32_t here = buf->run_heap[i], down = buf->run_heap[first];
    run_heap_set(b, buf, first, here);
    run_heap_set(b, buf, i, down);
    i = first;
  }
}

/* Puts run `index` where its age now belongs: in the heap while it holds
 * events, out of it when it holds none. */
static void run_heap_update(tm_event_buffers *b, uint32_t index) {
  brun *r = &b->runs[index];
  buffer *buf = &b->bufs[r->buffer];
  if (r->len == 0) {
    if (r->heap_pos == NO_POS)
      return;
    size_t pos = r->heap_pos;
    r->heap_pos = NO_POS;
    buf->n_run_heap--;
    if (pos < buf->n_run_heap) {
      run_heap_set(b, buf, pos, buf->run_heap[buf->n_run_heap]);
      run_heap_sift(b, buf, pos);
    }
    return;
  }
  if (r->heap_pos == NO_POS) {
    if (buf->n_run_heap == buf->cap_run_heap) {
      buf->cap_run_heap = buf->cap_run_heap ? 2 * buf->cap_run_heap : 4;
      buf->run_heap = g_renew(uint32_t, buf->run_heap, buf->cap_run_heap);
    }
    run_heap_set(b, buf, buf->n_run_heap++, index);
  }
  run_heap_sift(b, buf, r->heap_pos);
}

/* --- pushing and giving up --------------------------------------------- */

static uint32_t run_for(tm_event_buffers *b, uint32_t buffer_index, void *key) {
  if (key == b->last_key && b->n_runs > 0)
    return b->last_run;
  gpointer found = g_hash_table_lookup(b->run_index, key);
  uint32_t index;
  if (found) {
    index = GPOINTER_TO_UINT(found) - 1;
  } else {
    if (b->n_runs == b->cap_runs) {
      b->cap_runs = b->cap_runs ? 2 * b->cap_runs : 8;
      b->runs = g_renew(brun, b->runs, b->cap_runs);
    }
    index = (uint32_t)b->n_runs++;
    brun *r = &b->runs[index];
    memset(r, 0, sizeof *r);
    r->key = key;
    r->buffer = buffer_index;
    r->heap_pos = NO_POS;
    g_hash_table_insert(b->run_index, key, GUINT_TO_POINTER(index + 1));
  }
  b->last_key = key;
  b->last_run = index;
  return index;
}

static uint64_t payload_charge(const held_payload *p) {
  return p ? sizeof(held_payload) + p->n_args * sizeof(tm_buffer_arg) + ALLOC_OVERHEAD : 0;
}

/* Records that `gone` was given up by run `r`: the mark is the highest
 * ranked event given up. */
static void raise_mark(const buffer *buf, brun *r, const held *gone) {
  if (!r->has_mark || gives_up_first(buf, &r->mark, gone)) {
    r->mark.ev.ts = gone->ev.ts;
    r->mark.seq = gone->seq;
    r->has_mark = true;
  }
}

/* Releases the unused capacity of run `r` once it is an eighth (at least
 * 16 records), all of it when the run holds nothing: the bytes go back to
 * the buffer for its other runs. */
static void maybe_shrink(buffer *buf, brun *r) {
  if (r->len == 0) {
    buf->charged -= (uint64_t)r->cap * sizeof(held);
    g_free(r->heap);
    r->heap = NULL;
    r->cap = 0;
    return;
  }
  size_t unused = r->cap - r->len;
  if (unused < 16 || unused < r->cap / 8)
    return;
  size_t cap = r->len + 8;
  r->heap = g_renew(held, r->heap, cap);
  buf->charged -= (uint64_t)(r->cap - cap) * sizeof(held);
  r->cap = cap;
}

/* Gives up the top event of run `index`. */
static void give_up_top(tm_event_buffers *b, uint32_t index) {
  brun *r = &b->runs[index];
  buffer *buf = &b->bufs[r->buffer];
  held gone = r->heap[0];
  r->heap[0] = r->heap[--r->len];
  if (r->len)
    held_sift_down(buf, r, 0);
  raise_mark(buf, r, &gone);
  buf->charged -= payload_charge(gone.payload);
  g_free(gone.payload);
  buf->stats.dropped++;
  buf->stats.held--;
  maybe_shrink(buf, r);
  run_heap_update(b, index);
}

/* The payload of an event (its staged args and thread times), or NULL if
 * it needs none. Staged args a reader uses after their release are lost
 * (counted in args_lost); arg_set_id is 0 afterwards either way. */
static held_payload *make_payload(tm_event_buffers *b, tm_event *ev, int64_t thread_ts,
                                  int64_t thread_dur) {
  const staged *args = NULL;
  bool carries_args = ev->kind == TM_EVENT_SLICE_BEGIN || ev->kind == TM_EVENT_SLICE_END ||
                      ev->kind == TM_EVENT_SLICE_COMPLETE || ev->kind == TM_EVENT_COUNTER ||
                      ev->kind == TM_EVENT_FLOW || ev->kind == TM_EVENT_FTRACE_RAW ||
                      ev->kind == TM_EVENT_ANDROID_LOG;
  if (carries_args && (ev->arg_set_id & EVENT_BUFFER_STAGED_ARGS)) {
    uint32_t id = ev->arg_set_id & ~EVENT_BUFFER_STAGED_ARGS;
    staged *s = g_hash_table_lookup(b->staged, GUINT_TO_POINTER(id));
    if (s) {
      if (!s->used)
        g_array_append_val(b->staged_used, id);
      s->used = true;
      args = s;
    } else {
      b->args_lost++;
    }
    ev->arg_set_id = 0;
  }
  size_t n_args = args ? args->n : 0;
  if (n_args == 0 && thread_ts == TM_UNKNOWN_TIME && thread_dur == TM_UNKNOWN_TIME)
    return NULL;
  held_payload *p = g_malloc(sizeof(held_payload) + n_args * sizeof(tm_buffer_arg));
  p->thread_ts = thread_ts;
  p->thread_dur = thread_dur;
  p->n_args = n_args;
  if (n_args)
    memcpy(p->args, args->args, n_args * sizeof(tm_buffer_arg));
  return p;
}

bool event_buffers_push(tm_event_buffers *b, uint32_t buffer_index, void *run_key,
                        const tm_event *ev_in, int64_t thread_ts, int64_t thread_dur) {
  if (buffer_index >= b->n_bufs)
    return false;
  uint32_t index = run_for(b, buffer_index, run_key);
  brun *r = &b->runs[index];
  buffer *buf = &b->bufs[r->buffer];
  buf->stats.written++;
  held incoming = {.ev = *ev_in, .seq = b->seq++};
  if (r->has_cutoff && incoming.ev.ts > r->cutoff) {
    buf->stats.cut++;
    /* Its staged args count as used, so they are released. */
    g_free(make_payload(b, &incoming.ev, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME));
    return false;
  }
  if (!r->seen_any || incoming.ev.ts > r->max_seen)
    r->max_seen = incoming.ev.ts;
  if (!r->seen_any || incoming.ev.ts < r->min_seen)
    r->min_seen = incoming.ev.ts;
  r->seen_any = true;
  incoming.payload = make_payload(b, &incoming.ev, thread_ts, thread_dur);
  uint64_t pay = payload_charge(incoming.payload);
  bool refused = r->has_mark && !gives_up_first(buf, &r->mark, &incoming);
  while (!refused) {
    uint64_t grow = r->len == r->cap ? sizeof(held) : 0;
    if (buf->charged + pay + grow <= buf->spec.size_bytes)
      break;
    /* The run to take from: the farthest from its own end (start); on a
     * tie, the incoming event's own run. */
    int64_t victim = buf->n_run_heap ? (int64_t)buf->run_heap[0] : -1;
    if (victim >= 0 && (uint32_t)victim != index && r->len > 0 &&
        run_age(b, r) == run_age(b, &b->runs[victim]))
      victim = index;
    if (victim < 0)
      refused = true;
    else if ((uint32_t)victim == index)
      refused = gives_up_first(buf, &incoming, &r->heap[0]);
    else
      refused = age_of(buf, r, incoming.ev.ts) >= run_age(b, &b->runs[victim]);
    if (!refused)
      give_up_top(b, (uint32_t)victim);
    r = &b->runs[index];
  }
  if (refused) {
    raise_mark(buf, r, &incoming);
    g_free(incoming.payload);
    buf->stats.dropped++;
    return false;
  }
  if (r->len == r->cap) {
    uint64_t room = (buf->spec.size_bytes - buf->charged - pay) / sizeof(held);
    size_t step = MAX((size_t)8, r->cap / 8);
    size_t cap = r->cap + (size_t)MIN((uint64_t)step, room);
    r->heap = g_renew(held, r->heap, cap);
    buf->charged += (uint64_t)(cap - r->cap) * sizeof(held);
    r->cap = cap;
  }
  r->heap[r->len++] = incoming;
  held_sift_up(buf, r, r->len - 1);
  buf->charged += pay;
  buf->stats.held++;
  if (buf->charged > buf->stats.peak_bytes)
    buf->stats.peak_bytes = buf->charged;
  run_heap_update(b, index);
  return true;
}

void event_buffers_set_cutoff(tm_event_buffers *b, void *run_key, int64_t ts) {
  gpointer found = g_hash_table_lookup(b->run_index, run_key);
  if (!found)
    return;
  brun *r = &b->runs[GPOINTER_TO_UINT(found) - 1];
  if (!r->has_cutoff || ts < r->cutoff) {
    r->cutoff = ts;
    r->has_cutoff = true;
  }
}

static int by_seq(const void *a, const void *b) {
  uint64_t x = ((const held *)a)->seq, y = ((const held *)b)->seq;
  return x < y ? -1 : x > y;
}

void event_buffers_drain(tm_event_buffers *b, tm_buffer_drain_fn fn, void *ctx) {
  for (size_t i = 0; i < b->n_runs; i++) {
    brun *r = &b->runs[i];
    buffer *buf = &b->bufs[r->buffer];
    qsort(r->heap, r->len, sizeof(held), by_seq);
    for (size_t k = 0; k < r->len; k++) {
      const held *h = &r->heap[k];
      const held_payload *p = h->payload;
      fn(ctx, r->key, &h->ev, p ? p->thread_ts : TM_UNKNOWN_TIME,
         p ? p->thread_dur : TM_UNKNOWN_TIME, p && p->n_args ? p->args : NULL,
         p ? p->n_args : 0);
    }
    buf->stats.held -= r->len;
    free_run_events(r);
    r->heap_pos = NO_POS;
  }
  for (size_t i = 0; i < b->n_bufs; i++) {
    b->bufs[i].n_run_heap = 0;
    b->bufs[i].charged = 0;
  }
}

void event_buffers_foreach_run(const tm_event_buffers *b, tm_buffer_run_fn fn, void *ctx) {
  for (size_t i = 0; i < b->n_runs; i++)
    if (b->runs[i].seen_any)
      fn(ctx, b->runs[i].key, b->runs[i].min_seen, b->runs[i].max_seen);
}

size_t event_buffers_count(const tm_event_buffers *b) {
  return b->n_bufs;
}

void event_buffers_stats(const tm_event_buffers *b, size_t index, tm_buffer_stats *out) {
  *out = b->bufs[index].stats;
}

uint64_t event_buffers_args_lost(const tm_event_buffers *b) {
  return b->args_lost;
}
