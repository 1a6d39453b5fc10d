/*
 * The sorter: per-source event runs, converted to trace time in place and
 * merged into one stream ordered by (trace ts, run number, position).
 *
 * Invariants:
 * - runs.data[i] is run number i, in creation order; the table maps each
 *   (clock, machine, trace) to exactly one run.
 * - run->sorted is true only if every ts is >= the largest one before it
 *   (event_run_push keeps last_ts as that maximum, aside as the number of
 *   events that came below it, max_track, track_changes (an estimate once
 *   a conversion drops events: it only picks the sorting method), and
 *   min_ts as the minimum for sorter_convert to skip identity conversions
 *   that drop nothing; the other conversions recompute sorted, last_ts
 *   and aside). Counting while
 *   pushing, when the events are in cache, saves the merge a pass over
 *   memory that has gone cold since.
 * - The merge never reorders two events of one run with equal ts: unsorted
 *   runs are sorted stably (ties keep their position in the run), and the
 *   k-way merge breaks ts ties by run number, each run contributing its
 *   events in order. Every run is merged as a stream of its events in
 *   (ts, position) order: a run that interleaves many tracks (a JSON file
 *   written thread block by thread block, a TrackEvent trace's sequences)
 *   by track, each track being nearly always in order on its own; a run
 *   that changes track at most events (ftrace, systrace) by its ascending
 *   stretches; neither is sorted or copied, alone or beside other runs.
 *   Only the remaining unsorted runs are sorted in place first.
 * - Memory: a run's block is released as soon as the merge exhausts it, and
 *   the pages of a long run already merged are handed back to the kernel
 *   while the rest of it is still being merged (a run merged by track:
 *   each 2^15-event (1.1 MiB) chunk once all its events are merged; a long one whose
 *   windows overlap little, window by window), so the event store shrinks
 *   while the model grows. A run that interleaves few tracks (a TrackEvent
 *   trace's sequences) is packed while it is read, 2^16 events a block at
 *   ~8 bytes an event ("Packed blocks" below), and unpacked a window at
 *   a time by the merge; the other runs keep every event resident, 36
 *   bytes each, from the end of reading to the merge's start.
 */
#include "sort/sorter.h"

#include <string.h>
#include <stdlib.h>

#include <glib.h>
#include <sys/mman.h>

#include "base/vec.h"

/* Natural runs shorter than this are extended by insertion sort first. */
#define MIN_RUN 32
/* Merging by track pays only when the run holds each track's events in
 * blocks (a JSON file written thread block by thread block, ~10-40 events
 * a block): it costs a heap step per block. A run that changes track at
 * more than one event in this many (an ftrace stream, where every CPU's
 * bundle interleaves the threads it ran: ~3 in 4 events change track) is
 * sorted by merging its ascending stretches instead; on a 500k-event
 * system trace that halved the import's sort (and 20% of its peak RSS). */
#define TRACK_BLOCK_MIN 4
/* How far ahead of a merge cursor events are prefetched: a few lines. */
#define PREFETCH_EVENTS 8
/* Merged bytes of one run handed back to the kernel at a time. The
 * model's tables grow as the run is merged, so the step is how far the
 * import's peak RSS rises above what is needed (4 MiB cost ~2 MB more at
 * the end of the realistic JSON's merge than 2 MiB; 1 MiB, half of a huge
 * page, took another ~1.6 MiB off its peak, three runs each). */
#define RELEASE_BYTES ((size_t)1 << 20)

typedef struct run_slot {
  tm_clock_node clock;
  uint32_t machine_id;
  uint32_t trace_id;
  uint32_t run_plus_one; /* 0: free slot */
} run_slot;

struct tm_sorter {
  TM_VEC(tm_event_run *) runs;
  run_slot *slots; /* open addressing, power-of-two capacity */
  size_t slot_cap;
  tm_event_run *last; /* the run sorter_run() returned last */
  unsigned threads;   /* sorter_set_threads(); 1 by default */
  size_t windows;     /* sorter_merged_windows() */
};

/* --- runs ---------------------------------------------------------------- */

void sorter_set_threads(tm_sorter *sorter, unsigned threads) {
  sorter->threads = threads ? threads : 1;
}

tm_sorter *sorter_new(void) {
  return g_new0(tm_sorter, 1);
}

static void run_free_blocks(tm_event_run *run);

static void run_free(tm_event_run *run) {
  g_free(run->events);
  run_free_blocks(run);
  g_free(run);
}

static void sorter_clear(tm_sorter *sorter) {
  for (size_t i = 0; i < sorter->runs.len; i++)
    run_free(sorter->runs.data[i]);
  tm_vec_free(&sorter->runs);
  g_free(sorter->slots);
  sorter->slots = NULL;
  sorter->slot_cap = 0;
  sorter->last = NULL;
}

void sorter_free(tm_sorter *sorter) {
  if (!sorter)
    return;
  sorter_clear(sorter);
  g_free(sorter);
}

static size_t slot_hash(tm_clock_node clock, uint32_t machine_id, uint32_t trace_id) {
  uint64_t h = ((uint64_t)clock << 32 | machine_id) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)trace_id * 0xC2B2AE3D27D4EB4Full;
  return (size_t)(h ^ (h >> 29));
}

static void slot_insert(tm_sorter *sorter, const tm_event_run *run, uint32_t index) {
  size_t mask = sorter->slot_cap - 1;
  size_t i = slot_hash(run->clock, run->machine_id, run->trace_id) & mask;
  while (sorter->slots[i].run_plus_one)
    i = (i + 1) & mask;
  sorter->slots[i] = (run_slot){run->clock, run->machine_id, run->trace_id, index + 1};
}

static void slots_grow(tm_sorter *sorter) {
  g_free(sorter->slots);
  sorter->slot_cap = sorter->slot_cap ? sorter->slot_cap * 2 : 64;
  sorter->slots = g_new0(run_slot, sorter->slot_cap);
  for (size_t i = 0; i < sorter->runs.len; i++)
    slot_insert(sorter, sorter->runs.data[i], (uint32_t)i);
}

tm_event_run *sorter_run(tm_sorter *sorter, tm_clock_node clock,
                         uint32_t machine_id, uint32_t trace_id) {
  tm_event_run *last = sorter->last;
  if (last && last->clock == clock && last->machine_id == machine_id &&
      last->trace_id == trace_id)
    return last;
  if (sorter->slot_cap) {
    size_t mask = sorter->slot_cap - 1;
    for (size_t i = slot_hash(clock, machine_id, trace_id) & mask;
         sorter->slots[i].run_plus_one; i = (i + 1) & mask) {
      const run_slot *slot = &sorter->slots[i];
      if (slot->clock == clock && slot->machine_id == machine_id && slot->trace_id == trace_id)
        return sorter->last = sorter->runs.data[slot->run_plus_one - 1];
    }
  }
  if (sorter->runs.len >= UINT32_MAX - 1)
    g_error("tracemerge: more than %u event runs", UINT32_MAX - 1);
  tm_event_run *run = g_new0(tm_event_run, 1);
  run->clock = clock;
  run->machine_id = machine_id;
  run->trace_id = trace_id;
  run->last_ts = INT64_MIN;
  run->min_ts = INT64_MAX;
  run->sorted = true;
  uint32_t index = (uint32_t)sorter->runs.len;
  tm_vec_push(&sorter->runs, run);
  if ((sorter->runs.len + 1) * 2 > sorter->slot_cap)
    slots_grow(sorter);
  else
    slot_insert(sorter, run, index);
  return sorter->last = run;
}

/* --- packed blocks ------------------------------------------------------------
 *
 * A realistic TrackEvent trace is one run of a million events or more,
 * every one resident from the end of reading to the merge's start: 36
 * bytes each, the import's memory peak. A run that looks like one (its
 * tracks interleaved in blocks, few track ids: what the merge takes by
 * track in windows) packs each PACK_EVENTS events it is given into a
 * block of bytes (7.7 bytes an event on the 1M-event realistic TrackEvent
 * trace).
 * An event is a 16-bit header and its fields, each 0, 1, 2, 4 or 8 bytes
 * long as a 2-bit code of the header says (read with one unaligned load
 * and a mask, no loop per byte): the kind (4 bits; 15: a byte of kind
 * follows), the ts as the zigzag of its difference to the event before,
 * the track (code 0: the one before), name, category (0: none), the arg
 * set (0: none; 1: one above the last non-zero one; 3: flags, reserved
 * and the arg set follow) and u (0: zero; a counter's value in 8 bytes,
 * anything else as a zigzag). Unpacking gives back every byte of every
 * event.
 *
 * Invariants: blocks hold a run's first `packed` events in order, each
 * block's min_ts/max_ts are its events' smallest and largest ts (and
 * `extras` whether any names an extra), and its
 * bytes are followed by PACK_SLACK bytes (loads of 8 bytes never read past
 * them); a packed run is sealed (its last events packed too, `events`
 * freed) at the conversion, the sort or the merge, whichever comes first.
 * The conversion and the extras' renumbering rewrite a block through a
 * scratch of one block; the merge unpacks one block per window as the
 * window opens (sorter_merge) and frees its bytes. A packed run the merge
 * would not take in windows is unpacked whole first (as much memory as
 * before, never more: each block is freed as it is unpacked). */
#define PACK_EVENTS ((size_t)1 << 16)
/* Bytes one event may take at most: header (2), kind (1), ts (8), track,
 * name, category (4 each), flags, reserved and arg set (7), u (8). */
#define PACK_EVENT_MAX 38
/* Bytes after the last field: a field is written and read as 8 bytes. */
#define PACK_SLACK 8
/* Track ids below this many (WINDOW_TRACKS_MAX, which it must equal). */
#define PACK_TRACKS_MAX (PACK_EVENTS / 16)

struct tm_run_block {
  uint8_t *bytes;
  size_t size;
  size_t n;
  int64_t min_ts, max_ts;
  bool extras; /* some event has TM_EVENT_HAS_EXTRA */
};

/* Frees a block of `bytes` bytes having handed its whole pages back to
 * the kernel: blocks of a few hundred KiB come from the heap once glibc's
 * mmap threshold has risen, and a free chunk in the middle of the heap
 * stays resident (~6 B/event more at the 1M-event TrackEvent import's
 * peak). */
static void free_released(void *block, size_t bytes) {
  if (block)
    tm_memory_release(block, (uintptr_t)block, (uintptr_t)block + bytes);
  g_free(block);
}

/* Scratch of a block's size (a few MiB: packing, unpacking a window)
 * mapped on its own, not through malloc: glibc raises its mmap threshold
 * to the size of each mapped chunk it frees, after which the model's
 * growing tables came from the heap and their old copies stayed resident
 * (~2 MB at the 1M-event TrackEvent import's peak). Out of memory aborts,
 * as g_malloc does. */
static void *scratch_map(size_t bytes) {
  void *p = mmap(NULL, MAX(bytes, (size_t)1), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    g_error("tracemerge: cannot map %zu bytes of scratch", bytes);
  return p;
}

static void scratch_unmap(void *p, size_t bytes) {
  if (p)
    munmap(p, MAX(bytes, (size_t)1));
}

/* Header fields: kind in bits 0-3, then a 2-bit code per field. */
#define PK_KIND_ESCAPE 0x0fu
#define PK_TS 4
#define PK_TRACK 6
#define PK_NAME 8
#define PK_CATEGORY 10
#define PK_ARGS 12
#define PK_U 14
/* Arg set codes. */
#define PK_ARGS_NONE 0u
#define PK_ARGS_NEXT 1u
#define PK_ARGS_4 2u
#define PK_ARGS_ESCAPE 3u /* flags (1), reserved (2), arg set (4) */

/* Value codes 0-3 -> bytes: ts (1, 2, 4, 8); track, name, category
 * (0, 1, 2, 4; the track's 0: the one before); u (0, 2, 4, 8). */
static const uint8_t ts_bytes[4] = {1, 2, 4, 8};
static const uint8_t id_bytes[4] = {0, 1, 2, 4};
static const uint8_t u_bytes[4] = {0, 2, 4, 8};

static inline uint64_t load_le64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return GUINT64_FROM_LE(v);
}

static inline void store_le64(uint8_t *p, uint64_t v) {
  v = GUINT64_TO_LE(v);
  memcpy(p, &v, sizeof v);
}

/* The masks of the codes' bytes, for the value of an 8-byte load. */
static const uint64_t ts_mask[4] = {0xff, 0xffff, 0xffffffffu, UINT64_MAX};
static const uint64_t id_mask[4] = {0, 0xff, 0xffff, 0xffffffffu};
static const uint64_t u_mask[4] = {0, 0xffff, 0xffffffffu, UINT64_MAX};

static inline uint64_t zigzag(uint64_t v) { return (v << 1) ^ (uint64_t)((int64_t)v >> 63); }
static inline uint64_t unzigzag(uint64_t v) { return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1); }

/* Codes of an id (0 excluded by the caller): 1, 2 or 4 bytes. */
static inline unsigned id_code(uint32_t v) { return v < 0x100 ? 1 : v < 0x10000 ? 2 : 3; }

/* What the packing of one event depends on from the events before it. */
typedef struct pack_state {
  uint64_t prev_ts;
  uint32_t prev_track, last_args;
} pack_state;

/* Packs one event at p (room for PACK_EVENT_MAX + PACK_SLACK bytes);
 * returns the end of what it wrote. */
static inline uint8_t *pack_event(const tm_event *e, pack_state *st, uint8_t *p) {
  uint8_t *head = p;
  p += 2;
  unsigned h = e->kind < PK_KIND_ESCAPE ? e->kind : PK_KIND_ESCAPE;
  if (h == PK_KIND_ESCAPE)
    *p++ = e->kind;
  uint64_t d = zigzag((uint64_t)e->ts - st->prev_ts);
  st->prev_ts = (uint64_t)e->ts;
  unsigned c = d < 0x100 ? 0 : d < 0x10000 ? 1 : d < 0x100000000u ? 2 : 3;
  store_le64(p, d);
  p += ts_bytes[c];
  h |= c << PK_TS;
  c = e->track_id == st->prev_track ? 0 : id_code(e->track_id);
  store_le64(p, e->track_id);
  p += id_bytes[c];
  h |= c << PK_TRACK;
  st->prev_track = e->track_id;
  c = e->name_id ? id_code(e->name_id) : 0;
  store_le64(p, e->name_id);
  p += id_bytes[c];
  h |= c << PK_NAME;
  c = e->category_id ? id_code(e->category_id) : 0;
  store_le64(p, e->category_id);
  p += id_bytes[c];
  h |= c << PK_CATEGORY;
  if (e->flags | e->reserved) {
    h |= PK_ARGS_ESCAPE << PK_ARGS;
    *p++ = e->flags;
    store_le64(p, e->reserved);
    p += 2;
    store_le64(p, e->arg_set_id);
    p += 4;
  } else if (e->arg_set_id == 0) {
    h |= PK_ARGS_NONE << PK_ARGS;
  } else if (e->arg_set_id == st->last_args + 1) {
    h |= PK_ARGS_NEXT << PK_ARGS;
  } else {
    h |= PK_ARGS_4 << PK_ARGS;
    store_le64(p, e->arg_set_id);
    p += 4;
  }
  if (e->arg_set_id)
    st->last_args = e->arg_set_id;
  uint64_t u;
  memcpy(&u, &e->u, sizeof u);
  if (u) {
    if (e->kind != TM_EVENT_COUNTER)
      u = zigzag(u);
    c = e->kind == TM_EVENT_COUNTER ? 3 : u < 0x10000 ? 1 : u < 0x100000000u ? 2 : 3;
    store_le64(p, u);
    p += u_bytes[c];
    h |= c << PK_U;
  }
  head[0] = (uint8_t)h;
  head[1] = (uint8_t)(h >> 8);
  return p;
}

/* Packs ev[0, n) into bytes of their exact size and PACK_SLACK after
 * (packed into a scratch for the worst case, whose untouched pages cost
 * nothing, then copied: a block allocated for the worst case and shrunk
 * would count several times its bytes in heap profiles); returns them,
 * their size in *size and the events' smallest and largest ts. */
static uint8_t *pack_events(const tm_event *ev, size_t n, size_t *size, int64_t *min_ts,
                            int64_t *max_ts) {
  size_t scratch_bytes = n * PACK_EVENT_MAX + PACK_SLACK;
  uint8_t *scratch = scratch_map(scratch_bytes), *p = scratch;
  pack_state st = {0};
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    p = pack_event(&ev[i], &st, p);
    lo = MIN(lo, ev[i].ts);
    hi = MAX(hi, ev[i].ts);
  }
  *size = (size_t)(p - scratch);
  uint8_t *bytes = g_malloc(*size + PACK_SLACK);
  memcpy(bytes, scratch, *size);
  memset(bytes + *size, 0, PACK_SLACK);
  scratch_unmap(scratch, scratch_bytes);
  *min_ts = lo;
  *max_ts = hi;
  return bytes;
}

/* Unpacks the n events of `in` (pack_events) into out[0, n). */
static void unpack_events(const uint8_t *in, size_t n, tm_event *out) {
  const uint8_t *p = in;
  uint64_t ts = 0;
  uint32_t track = 0, last_args = 0;
  for (size_t i = 0; i < n; i++) {
    tm_event *e = &out[i];
    unsigned h = (unsigned)p[0] | (unsigned)p[1] << 8;
    p += 2;
    uint8_t kind = (uint8_t)(h & PK_KIND_ESCAPE);
    if (kind == PK_KIND_ESCAPE)
      kind = *p++;
    e->kind = kind;
    unsigned c = (h >> PK_TS) & 3;
    ts += unzigzag(load_le64(p) & ts_mask[c]);
    p += ts_bytes[c];
    e->ts = (int64_t)ts;
    c = (h >> PK_TRACK) & 3;
    if (c) {
      track = (uint32_t)(load_le64(p) & id_mask[c]);
      p += id_bytes[c];
    }
    e->track_id = track;
    c = (h >> PK_NAME) & 3;
    e->name_id = (uint32_t)(load_le64(p) & id_mask[c]);
    p += id_bytes[c];
    c = (h >> PK_CATEGORY) & 3;
    e->category_id = (uint32_t)(load_le64(p) & id_mask[c]);
    p += id_bytes[c];
    c = (h >> PK_ARGS) & 3;
    uint32_t args = 0;
    e->flags = 0;
    e->reserved = 0;
    if (c == PK_ARGS_NEXT) {
      args = last_args + 1;
    } else if (c == PK_ARGS_4) {
      args = (uint32_t)load_le64(p);
      p += 4;
    } else if (c == PK_ARGS_ESCAPE) {
      e->flags = p[0];
      e->reserved = (uint16_t)(p[1] | p[2] << 8);
      args = (uint32_t)load_le64(p + 3);
      p += 7;
    }
    e->arg_set_id = args;
    if (args)
      last_args = args;
    c = (h >> PK_U) & 3;
    uint64_t u = load_le64(p) & u_mask[c];
    p += u_bytes[c];
    if (kind != TM_EVENT_COUNTER)
      u = unzigzag(u);
    memcpy(&e->u, &u, sizeof u);
  }
}

/* (Re)packs ev[0, n) into `block`, whose old bytes are freed. */
static void block_pack(tm_run_block *block, const tm_event *ev, size_t n) {
  free_released(block->bytes, block->size);
  uint8_t flags = 0;
  for (size_t i = 0; i < n; i++)
    flags |= ev[i].flags;
  block->extras = (flags & TM_EVENT_HAS_EXTRA) != 0;
  block->bytes = pack_events(ev, n, &block->size, &block->min_ts, &block->max_ts);
  block->n = n;
}

/* Appends ev[0, n) to the run's blocks as a new block. */
static void run_pack(tm_event_run *run, const tm_event *ev, size_t n) {
  run->blocks = g_renew(tm_run_block, run->blocks, run->n_blocks + 1);
  tm_run_block *block = &run->blocks[run->n_blocks++];
  *block = (tm_run_block){0};
  block_pack(block, ev, n);
  run->packed += n;
}

/* Whether the run packs what it is given: once it has, always; before,
 * while it looks like a run the merge takes by track in windows
 * (run_is_interleaved, few track ids). */
static bool run_packs(const tm_event_run *run) {
  return run->packed || (!run->sorted && run->aside > run->len / 4 &&
                         run->track_changes <= run->len / TRACK_BLOCK_MIN &&
                         (size_t)run->max_track < PACK_TRACKS_MAX);
}

/* Packs the rest of a packed run and frees its `events`: nothing is
 * pushed any more. */
static void run_seal(tm_event_run *run) {
  if (!run->packed)
    return;
  /* Blocks of at most PACK_EVENTS: the tail may be longer when the run
   * grew before it began to pack. */
  const tm_event *ev = run->events;
  while (run->len > run->packed) {
    size_t n = MIN(run->len - run->packed, PACK_EVENTS);
    run_pack(run, ev, n);
    ev += n;
  }
  g_free(run->events);
  run->events = NULL;
  run->cap = 0;
}

static void run_free_blocks(tm_event_run *run) {
  for (size_t b = 0; b < run->n_blocks; b++)
    free_released(run->blocks[b].bytes, run->blocks[b].size);
  g_free(run->blocks);
  run->blocks = NULL;
  run->n_blocks = 0;
  run->packed = 0;
}

/* A packed run's events back in `events[0, len)`, each block freed as soon
 * as it is unpacked. */
static void run_unpack(tm_event_run *run) {
  if (!run->packed)
    return;
  size_t tail = run->len - run->packed;
  tm_event *ev = g_new(tm_event, MAX(run->len, (size_t)1));
  size_t at = 0;
  for (size_t b = 0; b < run->n_blocks; b++) {
    unpack_events(run->blocks[b].bytes, run->blocks[b].n, ev + at);
    at += run->blocks[b].n;
    free_released(run->blocks[b].bytes, run->blocks[b].size);
    run->blocks[b].bytes = NULL;
  }
  if (tail) /* a sealed run has none, and no `events` */
    memcpy(ev + at, run->events, tail * sizeof *ev);
  g_free(run->events);
  run_free_blocks(run);
  run->events = ev;
  run->cap = MAX(run->len, (size_t)1);
}

void sorter_unpack(tm_sorter *sorter) {
  for (size_t i = 0; i < sorter->runs.len; i++)
    run_unpack(sorter->runs.data[i]);
}

/* Grows by half (doubling while small): the slack of a run's last growth is
 * at most a third of its block, and large blocks are moved by mremap, not
 * copied. The first block holds 4 events, not more: an archive of many
 * one-event members has a run per member, kept until the merge (64 events
 * there cost 2.5 KB per member), and the few extra doublings of a big run
 * are nothing beside its events. */
void event_run_grow_(tm_event_run *run) {
  size_t tail = run->len - run->packed;
  if (tail >= PACK_EVENTS && run_packs(run)) {
    size_t done = 0;
    for (; tail - done >= PACK_EVENTS; done += PACK_EVENTS)
      run_pack(run, run->events + done, PACK_EVENTS);
    memmove(run->events, run->events + done, (tail - done) * sizeof *run->events);
    if (tail - done < run->cap)
      return;
  }
  size_t cap = run->cap < 4096 ? MAX(run->cap * 2, 4) : run->cap + run->cap / 2;
  if (cap > SIZE_MAX / sizeof(tm_event))
    g_error("tracemerge: event run of %zu events is too large", run->cap);
  run->events = g_renew(tm_event, run->events, cap);
  run->cap = cap;
}

size_t sorter_run_count(const tm_sorter *sorter) { return sorter->runs.len; }

const tm_event_run *sorter_borrow_run(const tm_sorter *sorter, size_t index) {
  return index < sorter->runs.len ? sorter->runs.data[index] : NULL;
}

void sorter_retarget_clocks(tm_sorter *sorter, const tm_clock_node *retarget,
                            size_t n_nodes) {
  bool moved = false;
  for (size_t i = 0; i < sorter->runs.len; i++) {
    tm_event_run *run = sorter->runs.data[i];
    if (run->clock < n_nodes && retarget[run->clock] != TM_NO_CLOCK_NODE) {
      run->clock = retarget[run->clock];
      moved = true;
    }
  }
  if (!moved)
    return;
  /* Rehash at the same capacity: the slots name runs by their keys. */
  memset(sorter->slots, 0, sorter->slot_cap * sizeof *sorter->slots);
  for (size_t i = 0; i < sorter->runs.len; i++)
    slot_insert(sorter, sorter->runs.data[i], (uint32_t)i);
  sorter->last = NULL;
}

size_t sorter_event_count(const tm_sorter *sorter) {
  size_t total = 0;
  for (size_t i = 0; i < sorter->runs.len; i++)
    total += sorter->runs.data[i]->len;
  return total;
}

/* --- conversion ------------------------------------------------------------ */

static void count(tm_stats *stats, const char *name, const tm_event_run *run, size_t n) {
  if (stats && n)
    stats_add(stats, name, TM_NULL_INT64, run->machine_id, run->trace_id, (int64_t)n);
}

/* Events ev[0, n) of `run` (ev[0, MIN(n, TM_IMPORT_LOG_ROWS_PER_STAT))
 * readable), which `failure` keeps from trace time: each is counted in the
 * failure's stat, the first ones of each (stat, file, machine) with their
 * clocks and raw time in the import log (docs/clock-model.md §11,
 * core/model/stats.h). */
static void count_clock_failures(tm_stats *stats, const tm_clock_graph *graph,
                                 tm_clock_failure failure, const tm_event_run *run,
                                 const tm_event *ev, size_t n, tm_clock_node trace_time) {
  if (!stats || !n)
    return;
  const char *name = clock_failure_stat_name(failure);
  const tm_clock_key *source = clock_graph_node_key(graph, run->clock);
  const tm_clock_key *target =
      trace_time == TM_NO_CLOCK_NODE ? NULL : clock_graph_node_key(graph, trace_time);
  tm_import_log_arg args[5] = {
      {.key = "source_clock_id", .type = TM_ARG_INT, .int_value = source->clock_id},
      {.key = "source_timestamp", .type = TM_ARG_INT},
  };
  size_t n_args = 2;
  if (target)
    args[n_args++] = (tm_import_log_arg){
        .key = "target_clock_id", .type = TM_ARG_INT, .int_value = target->clock_id};
  if (source->sequence_id)
    args[n_args++] = (tm_import_log_arg){
        .key = "source_sequence_id", .type = TM_ARG_INT, .int_value = source->sequence_id};
  if (target && target->sequence_id)
    args[n_args++] = (tm_import_log_arg){
        .key = "target_sequence_id", .type = TM_ARG_INT, .int_value = target->sequence_id};
  /* stats_log stops writing rows at its bound; beyond it, count at once. */
  size_t detailed = MIN(n, (size_t)TM_IMPORT_LOG_ROWS_PER_STAT);
  for (size_t i = 0; i < detailed; i++) {
    args[1].int_value = ev[i].ts;
    stats_log(stats, name, run->machine_id, run->trace_id, TM_NULL_INT64, -1, args,
              n_args);
  }
  count(stats, name, run, n - detailed);
}

/* Gives back the slack of a run that will not grow any more. */
static void run_shrink(tm_event_run *run) {
  if (run->packed)
    return; /* sealed: `events` is freed */
  if (run->len == 0) {
    g_free(run->events);
    run->events = NULL;
    run->cap = 0;
  } else if (run->cap - run->len > run->len / 16) {
    run->events = g_renew(tm_event, run->events, run->len);
    run->cap = run->len;
  }
}

/* The conversion of one run, carried from one stretch of its events to
 * the next (the whole run, or block by block). */
typedef struct convert_state {
  tm_clock_graph *graph;
  tm_clock_node trace_time;
  tm_stats *stats;
  const tm_event_run *run;
  tm_clock_span span;
  int64_t max_ts;
  bool sorted;
  size_t aside, negative;
} convert_state;

/* Converts ev[0, n) in place, moving the events kept to the front; returns
 * how many were kept, and sets *wrote if any event changed place or ts. */
static size_t convert_events(convert_state *st, tm_event *ev, size_t n, bool *wrote) {
  size_t kept = 0;
  int64_t offset = st->span.offset_ns, first = st->span.first, last = st->span.last;
  int64_t max_ts = st->max_ts;
  bool sorted = st->sorted;
  size_t aside = st->aside, negative = st->negative;
  for (size_t i = 0; i < n; i++) {
    int64_t ts = ev[i].ts;
    if (G_UNLIKELY(ts < first || ts > last)) {
      tm_clock_failure failure =
          clock_graph_span(st->graph, st->run->clock, ts, st->trace_time, &st->span);
      if (failure != TM_CLOCK_OK) { /* once a path exists: an overflow */
        count_clock_failures(st->stats, st->graph, failure, st->run, &ev[i], 1,
                             st->trace_time);
        first = 1;
        last = 0;
        continue;
      }
      offset = st->span.offset_ns;
      first = st->span.first;
      last = st->span.last;
    }
    ts = (int64_t)((uint64_t)ts + (uint64_t)offset);
    if (G_UNLIKELY(ts < 0)) {
      negative++;
      continue;
    }
    if (ts < max_ts) {
      sorted = false;
      aside++;
    } else {
      max_ts = ts;
    }
    /* Identity conversions with nothing dropped write nothing. */
    if (kept != i) {
      ev[kept] = ev[i];
      ev[kept].ts = ts;
      *wrote = true;
    } else if (offset != 0) {
      ev[kept].ts = ts;
      *wrote = true;
    }
    kept++;
  }
  st->span = (tm_clock_span){offset, first, last};
  st->max_ts = max_ts;
  st->sorted = sorted;
  st->aside = aside;
  st->negative = negative;
  return kept;
}

/* Converts a sealed packed run block by block through one block of
 * scratch; a block whose events all go is dropped. */
static size_t convert_blocks(convert_state *st, tm_event_run *run) {
  size_t scratch_n = 0;
  for (size_t b = 0; b < run->n_blocks; b++)
    scratch_n = MAX(scratch_n, run->blocks[b].n);
  tm_event *scratch = scratch_map(scratch_n * sizeof *scratch);
  size_t out = 0, total = 0;
  for (size_t b = 0; b < run->n_blocks; b++) {
    tm_run_block block = run->blocks[b];
    unpack_events(block.bytes, block.n, scratch);
    bool wrote = false;
    size_t kept = convert_events(st, scratch, block.n, &wrote);
    if (kept == 0) {
      free_released(block.bytes, block.size);
      continue;
    }
    if (wrote)
      block_pack(&block, scratch, kept);
    run->blocks[out++] = block;
    total += kept;
  }
  scratch_unmap(scratch, scratch_n * sizeof *scratch);
  run->n_blocks = out;
  run->packed = total;
  return total;
}

/* Converts one run with the spans of the graph: one lookup per range of
 * values sharing an offset (for a constant-offset path, one for the run),
 * and drops events that land before trace time 0. */
static void convert_run(tm_event_run *run, tm_clock_graph *graph,
                        tm_clock_node trace_time, tm_stats *stats) {
  run_seal(run);
  if ((run->clock == trace_time || run->clock == TM_NO_CLOCK_NODE) &&
      (run->len == 0 || run->min_ts >= 0)) {
    /* Identity, dropping nothing: the loop below would leave the run (and
     * the sorted/last_ts that event_run_push kept) as it is, after reading
     * every event back from memory. */
    run_shrink(run);
    return;
  }
  tm_clock_span span = {0, INT64_MIN, INT64_MAX};
  if (run->clock != trace_time && run->clock != TM_NO_CLOCK_NODE && run->len) {
    /* A packed run's first events: its first block (whole unless it is
     * the only one, so at least the events the log shows). */
    tm_event *head = run->events;
    if (run->packed) {
      head = g_new(tm_event, run->blocks[0].n);
      unpack_events(run->blocks[0].bytes, run->blocks[0].n, head);
    }
    tm_clock_failure failure = clock_graph_span(graph, run->clock, head[0].ts, trace_time, &span);
    if (failure == TM_CLOCK_OVERFLOW) {
      /* A path exists; only that value fails: every event looks again. */
      span = (tm_clock_span){0, 1, 0};
    } else if (failure != TM_CLOCK_OK) {
      /* Path failures do not depend on the value: the whole run goes. */
      count_clock_failures(stats, graph, failure, run, head, run->len, trace_time);
      if (head != run->events)
        g_free(head);
      run_free_blocks(run);
      run->len = 0;
      run->last_ts = INT64_MIN;
      run->aside = 0;
      run->sorted = true;
      run_shrink(run);
      return;
    }
    if (head != run->events)
      g_free(head);
  }
  convert_state st = {graph, trace_time, stats, run, span, INT64_MIN, true, 0, 0};
  bool wrote = false;
  size_t kept = run->packed ? convert_blocks(&st, run)
                            : convert_events(&st, run->events, run->len, &wrote);
  run->len = kept;
  run->sorted = st.sorted;
  run->aside = st.aside;
  run->last_ts = st.max_ts;
  if (stats && st.negative)
    stats_add(stats, "trace_sorter_negative_timestamp_dropped", TM_NULL_INT64, 0, 0,
              (int64_t)st.negative);
  run_shrink(run);
}

void sorter_convert(tm_sorter *sorter, tm_clock_graph *graph, tm_stats *stats) {
  tm_clock_node trace_time = clock_graph_trace_time(graph);
  for (size_t i = 0; i < sorter->runs.len; i++)
    convert_run(sorter->runs.data[i], graph, trace_time, stats);
}

/* --- stable sort of one run ------------------------------------------------ */

/* Sorts ev[start, end) given that ev[start, sorted_end) is sorted: binary
 * insertion after the last equal key keeps it stable. */
static void insertion_sort(tm_event *ev, size_t start, size_t sorted_end, size_t end) {
  for (size_t i = sorted_end; i < end; i++) {
    tm_event item = ev[i];
    size_t lo = start, hi = i;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (ev[mid].ts <= item.ts)
        lo = mid + 1;
      else
        hi = mid;
    }
    memmove(&ev[lo + 1], &ev[lo], (i - lo) * sizeof *ev);
    ev[lo] = item;
  }
}

/* The first index in [lo, hi) whose ts is above `ts` (ev[lo, hi) ascends). */
static size_t first_above(const tm_event *ev, size_t lo, size_t hi, int64_t ts) {
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ev[mid].ts <= ts)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The first index in [lo, hi) whose ts is at or above `ts`. */
static size_t first_at_or_above(const tm_event *ev, size_t lo, size_t hi, int64_t ts) {
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ev[mid].ts < ts)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Reverses ev[lo, hi). */
static void reverse_events(tm_event *ev, size_t lo, size_t hi) {
  while (hi - lo > 1) {
    tm_event t = ev[lo];
    ev[lo++] = ev[--hi];
    ev[hi] = t;
  }
}

/* Moves ev[mid, hi) before ev[lo, mid), each keeping its order: through
 * `buf` (room for `buf_cap` events) when the smaller part fits, else by
 * three reversals. */
static void rotate_events(tm_event *ev, size_t lo, size_t mid, size_t hi,
                          tm_event *buf, size_t buf_cap) {
  size_t left = mid - lo, right = hi - mid;
  if (left == 0 || right == 0)
    return;
  if (left <= right && left <= buf_cap) {
    memcpy(buf, &ev[lo], left * sizeof *ev);
    memmove(&ev[lo], &ev[mid], right * sizeof *ev);
    memcpy(&ev[lo + right], buf, left * sizeof *ev);
  } else if (right < left && right <= buf_cap) {
    memcpy(buf, &ev[mid], right * sizeof *ev);
    memmove(&ev[lo + right], &ev[lo], left * sizeof *ev);
    memcpy(&ev[lo], buf, right * sizeof *ev);
  } else {
    reverse_events(ev, lo, mid);
    reverse_events(ev, mid, hi);
    reverse_events(ev, lo, hi);
  }
}

/* Merges the ascending ev[lo, mid) and ev[mid, hi) in place, left first on
 * ties, through `buf`, which holds `buf_cap` events. The events of the left
 * part already at or below the right part's first, and those of the right
 * part above the left part's last, stay where they are: complete events
 * come in nearly ordered stretches, so most of each part is never copied.
 * When the smaller of what remains does not fit the buffer, the larger part
 * is cut in half, the other cut where the half's first event belongs, the
 * two middle pieces swapped (a rotation) and the two halves merged on their
 * own, as libstdc++'s adaptive merge does: a small buffer costs a few
 * rotations of the largest merges instead of a spare of half the run,
 * which was the import's memory peak. */
static void merge_in_place(tm_event *ev, size_t lo, size_t mid, size_t hi, tm_event *buf,
                           size_t buf_cap) {
  if (lo == mid || mid == hi || ev[mid - 1].ts <= ev[mid].ts)
    return;
  lo = first_above(ev, lo, mid, ev[mid].ts);
  hi = first_at_or_above(ev, mid, hi, ev[mid - 1].ts);
  size_t left = mid - lo, right = hi - mid;
  if (left <= right && left <= buf_cap) {
    /* The left part goes aside; the merge fills ev from lo upwards and
     * never overtakes the right part's next unread event. */
    memcpy(buf, &ev[lo], left * sizeof *ev);
    size_t i = 0, j = mid, k = lo;
    while (i < left && j < hi)
      ev[k++] = ev[j].ts < buf[i].ts ? ev[j++] : buf[i++];
    memcpy(&ev[k], &buf[i], (left - i) * sizeof *ev);
  } else if (right < left && right <= buf_cap) {
    /* The right part goes aside; the merge fills ev from hi downwards. */
    memcpy(buf, &ev[mid], right * sizeof *ev);
    size_t i = mid, j = right, k = hi;
    while (i > lo && j > 0)
      ev[--k] = ev[i - 1].ts > buf[j - 1].ts ? ev[--i] : buf[--j];
    memcpy(&ev[k - j], buf, j * sizeof *ev);
  } else {
    /* Stable cuts: a left event goes before right events of equal ts. */
    size_t cut_left, cut_right;
    if (left >= right) {
      cut_left = lo + left / 2;
      cut_right = first_at_or_above(ev, mid, hi, ev[cut_left].ts);
    } else {
      cut_right = mid + right / 2;
      cut_left = first_above(ev, lo, mid, ev[cut_right].ts);
    }
    rotate_events(ev, cut_left, mid, cut_right, buf, buf_cap);
    size_t new_mid = cut_left + (cut_right - mid);
    merge_in_place(ev, lo, cut_left, new_mid, buf, buf_cap);
    merge_in_place(ev, new_mid, cut_right, hi, buf, buf_cap);
  }
}

typedef TM_VEC(size_t) size_bounds;

/* The ascending stretches of ev[0, n) as bounds 0 = b0 < b1 < ... = n,
 * stretch k being ev[b_k, b_k+1). A stretch shorter than MIN_RUN (but the
 * last) is first extended to MIN_RUN events by insertion sort, so that
 * stretches of a few events do not make the merge's work. */
static size_bounds find_stretches(tm_event *ev, size_t n) {
  size_bounds bounds = {0};
  tm_vec_push(&bounds, (size_t)0);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && ev[j].ts >= ev[j - 1].ts)
      j++;
    if (j - i < MIN_RUN && j < n) {
      size_t end = MIN(n, i + MIN_RUN);
      insertion_sort(ev, i, j, end);
      j = end;
    }
    tm_vec_push(&bounds, j);
    i = j;
  }
  return bounds;
}

/* The events of scratch a natural merge sort of n events touches at most:
 * an eighth of them (but never under MIN_SPARE). */
#define MIN_SPARE ((size_t)4096)
#define SPARE_SHARE 8

/* A natural merge sort of ev[0, n) with spare[0, n / 2 + 1) as scratch: the
 * ascending stretches the reader produced are kept as they are and merged
 * pairwise in place, bottom up. Merging in place (not ping-ponging between
 * ev and a second array of n events) through a buffer of an eighth of the
 * run touches only that much of the spare, whose pages the import's peak
 * memory counts (36 bytes an event of the 1M-event realistic JSON file;
 * docs/performance-log.md, "Third round of 26 Nov", measures the
 * rotations this costs). */
static void natural_merge_sort(tm_event *ev, size_t n, tm_event *spare) {
  size_t spare_cap = MIN(n / 2 + 1, MAX(n / SPARE_SHARE, MIN_SPARE));
  size_bounds bounds = find_stretches(ev, n);
  while (bounds.len > 2) {
    size_t out = 1, k = 0;
    for (; k + 2 < bounds.len; k += 2) {
      merge_in_place(ev, bounds.data[k], bounds.data[k + 1], bounds.data[k + 2], spare,
                     spare_cap);
      bounds.data[out++] = bounds.data[k + 2];
    }
    if (k + 1 < bounds.len)
      bounds.data[out++] = bounds.data[k + 1];
    bounds.len = out;
  }
  tm_vec_free(&bounds);
}

/* The head of one cursor in a merge heap. Ties on ts go to the smaller
 * `order`, which makes the merge stable: in the track merge it is the
 * original position of the cursor's next event, in the k-way merge of runs
 * the run number. */
typedef struct merge_head {
  int64_t ts;
  uint32_t order;  /* tie-break: original position, or run number */
  uint32_t source; /* the cursor: partition index, or run number */
} merge_head;

/* Non-short-circuit operators: the outcome is data-dependent and
 * unpredictable, so a flag computation beats a branch. */
static inline bool head_before(merge_head a, merge_head b) {
  return (a.ts < b.ts) | ((a.ts == b.ts) & (a.order < b.order));
}

/* Puts `item` in place of the top and restores the heap.
 *
 * Two ways, chosen by where new heads have been landing (`sink`, a score
 * kept by the caller, starting at 0): when they sink to the bottom (proto
 * sequences advancing together: the chain just emitted is now later than
 * most), bottom-up (Floyd): the hole goes down to a leaf along the smaller
 * children, one comparison per level and the child picked without a
 * branch, then `item` rises the little it must. When they stay near the
 * top (a JSON thread's events close together), top-down, which stops
 * early. Heads are unique, so both give the same heap: only the cost
 * differs. Comparisons use non-short-circuit operators: their outcome is
 * data-dependent and unpredictable. */
#define SINK_SCORE_LIMIT 64

/* Levels below the root of a heap of `len` entries (0 when empty: the
 * merge replaces the top of a heap it has just emptied). */
static inline size_t heap_height(size_t len) {
  return len > 1 ? (size_t)(63 - __builtin_clzll((unsigned long long)len)) : 0;
}

static inline void sink_update(int *sink, bool deep) {
  int score = *sink + (deep ? 1 : -1);
  *sink = score > SINK_SCORE_LIMIT ? SINK_SCORE_LIMIT
          : score < -SINK_SCORE_LIMIT ? -SINK_SCORE_LIMIT : score;
}

static inline void head_replace_top(merge_head *heap, size_t len, merge_head item,
                                    int *sink) {
  size_t at = 0, levels = 0;
  if (*sink > 0) {
    for (;;) {
      size_t child = 2 * at + 1;
      if (child + 1 < len)
        child += head_before(heap[child + 1], heap[child]);
      else if (child >= len)
        break;
      heap[at] = heap[child];
      at = child;
      levels++;
    }
    size_t climbed = 0;
    while (at > 0) {
      size_t parent = (at - 1) / 2;
      if (!head_before(item, heap[parent]))
        break;
      heap[at] = heap[parent];
      at = parent;
      climbed++;
    }
    sink_update(sink, 2 * climbed <= levels); /* ended in the lower half */
  } else {
    for (;;) {
      size_t child = 2 * at + 1;
      if (child >= len)
        break;
      if (child + 1 < len)
        child += head_before(heap[child + 1], heap[child]);
      if (!head_before(heap[child], item))
        break;
      heap[at] = heap[child];
      at = child;
      levels++;
    }
    sink_update(sink, 2 * levels >= heap_height(len)); /* in the lower half */
  }
  heap[at] = item;
}

static void head_sift_down(merge_head *heap, size_t len, size_t at) {
  merge_head item = heap[at];
  for (;;) {
    size_t child = 2 * at + 1;
    if (child >= len)
      break;
    if (child + 1 < len && head_before(heap[child + 1], heap[child]))
      child++;
    if (!head_before(heap[child], item))
      break;
    heap[at] = heap[child];
    at = child;
  }
  heap[at] = item;
}

/* One partition entry of sort_partition: (ts, original position) is
 * unique, so any sort by it is the stable order. */
typedef struct partition_key {
  int64_t ts;
  uint32_t pos;
  uint32_t at; /* index in the partition */
} partition_key;

static int partition_key_cmp(const void *a, const void *b) {
  const partition_key *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Sorts ev[0, n) and pos[0, n) together by (ts, pos). */
static void sort_partition(tm_event *ev, uint32_t *pos, size_t n) {
  partition_key *keys = g_new(partition_key, n);
  tm_event *copy = g_new(tm_event, n);
  for (size_t i = 0; i < n; i++)
    keys[i] = (partition_key){ev[i].ts, pos[i], (uint32_t)i};
  qsort(keys, n, sizeof *keys, partition_key_cmp);
  memcpy(copy, ev, n * sizeof *ev);
  for (size_t i = 0; i < n; i++) {
    ev[i] = copy[keys[i].at];
    pos[i] = keys[i].pos;
  }
  g_free(copy);
  g_free(keys);
}

/* Stable sort of ev[0, n) through spare[0, n) for runs that interleave many
 * tracks, each in ts order on its own (a JSON file written thread block by
 * thread block): a stable partition by track, then one heap merge of the
 * partitions back into ev, ties broken by original position. Two passes
 * over the events instead of a merge sort's log2(stretches). A track out of
 * order on its own (a counter several threads write) is sorted by (ts,
 * position) first. Returns false, with ev untouched, when the track ids are
 * too sparse for a count table; the caller sorts another way. */
static bool sort_by_track(tm_event *ev, size_t n, tm_event *spare) {
  if (n >= UINT32_MAX)
    return false;
  uint32_t max_track = 0;
  for (size_t i = 0; i < n; i++)
    max_track = MAX(max_track, ev[i].track_id);
  if (max_track >= n)
    return false;
  size_t k = (size_t)max_track + 1;
  size_t *next = g_new0(size_t, k + 1); /* partition t: [next[t], end[t]) */
  size_t *end = g_new(size_t, k);
  int64_t *last_ts = g_new(int64_t, k);
  uint32_t *pos = g_new(uint32_t, n);
  tm_memory_advise_huge(pos, n * sizeof *pos);
  bool *unsorted = g_new0(bool, k);
  merge_head *heap;
  for (size_t i = 0; i < n; i++)
    next[ev[i].track_id + 1]++;
  for (size_t t = 0; t < k; t++) {
    next[t + 1] += next[t];
    end[t] = next[t];
    last_ts[t] = INT64_MIN;
  }
  for (size_t i = 0; i < n; i++) {
    uint32_t t = ev[i].track_id;
    if (ev[i].ts < last_ts[t])
      unsorted[t] = true;
    else
      last_ts[t] = ev[i].ts;
    size_t j = end[t]++;
    spare[j] = ev[i];
    pos[j] = (uint32_t)i;
  }
  for (size_t t = 0; t < k; t++)
    if (unsorted[t])
      sort_partition(spare + next[t], pos + next[t], end[t] - next[t]);
  heap = g_new(merge_head, k);
  size_t heap_len = 0;
  for (size_t t = 0; t < k; t++)
    if (next[t] < end[t])
      heap[heap_len++] = (merge_head){spare[next[t]].ts, pos[next[t]], (uint32_t)t};
  for (size_t i = heap_len / 2; i-- > 0;)
    head_sift_down(heap, heap_len, i);
  size_t out = 0;
  int sink = 0;
  while (heap_len > 1) {
    uint32_t t = heap[0].source;
    merge_head bound = heap[1];
    if (heap_len > 2 && head_before(heap[2], bound))
      bound = heap[2];
    size_t j = next[t], stop = end[t];
    do {
      ev[out++] = spare[j++];
    } while (j < stop && (spare[j].ts < bound.ts || (spare[j].ts == bound.ts && pos[j] < bound.order)));
    next[t] = j;
    if (j == stop) {
      heap_len--;
      head_replace_top(heap, heap_len, heap[heap_len], &sink);
    } else {
      head_replace_top(heap, heap_len, (merge_head){spare[j].ts, pos[j], t}, &sink);
    }
  }
  if (heap_len == 1) {
    uint32_t t = heap[0].source;
    memcpy(&ev[out], &spare[next[t]], (end[t] - next[t]) * sizeof *ev);
  }
  g_free(heap);
  g_free(unsorted);
  g_free(pos);
  g_free(last_ts);
  g_free(end);
  g_free(next);
  return true;
}

/* Stable sort of ev[0, n) with spare[0, n) as scratch.
 *
 * Runs are usually nearly sorted (complete events written when they end, a
 * few late packets): keeping the greedy ascending subsequence in place and
 * moving the few events smaller than it aside costs two passes. The aside
 * events are sorted on their own and merged back from the end; on equal ts
 * an aside event goes after a kept one, which is their original order (an
 * event is set aside only when something before it is larger, and every
 * later kept event is at least that large). When many events would be set
 * aside, the merge sort is cheaper. */
static void sort_events(tm_event *ev, size_t n, tm_event *spare) {
  if (n <= MIN_RUN) {
    insertion_sort(ev, 0, 1, n);
    return;
  }
  size_t aside = 0;
  int64_t max_ts = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    if (ev[i].ts >= max_ts)
      max_ts = ev[i].ts;
    else
      aside++;
  }
  if (aside == 0)
    return;
  if (aside > n / 4) {
    size_t track_changes = 0;
    for (size_t i = 1; i < n; i++)
      track_changes += ev[i].track_id != ev[i - 1].track_id;
    if (track_changes > n / TRACK_BLOCK_MIN || !sort_by_track(ev, n, spare))
      natural_merge_sort(ev, n, spare);
    return;
  }
  size_t kept = 0, moved = 0;
  max_ts = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    if (ev[i].ts >= max_ts) {
      max_ts = ev[i].ts;
      if (kept != i)
        ev[kept] = ev[i];
      kept++;
    } else {
      spare[moved++] = ev[i];
    }
  }
  /* spare[aside, n) is at least three times larger than the aside events. */
  sort_events(spare, aside, spare + aside);
  size_t i = kept, j = aside, k = n;
  while (j > 0) {
    if (i > 0 && ev[i - 1].ts > spare[j - 1].ts)
      ev[--k] = ev[--i];
    else
      ev[--k] = spare[--j];
  }
}

static void run_stable_sort(tm_event_run *run) {
  tm_event *spare = g_new(tm_event, run->len);
  tm_memory_advise_huge(spare, run->len * sizeof *spare);
  sort_events(run->events, run->len, spare);
  g_free(spare);
  run->sorted = true;
}

/* --- sorting the runs on two threads --------------------------------------
 *
 * Each unsorted run is sorted on its own, stably, into its own memory:
 * which thread sorts it changes nothing in the result. With a second
 * thread the runs are dealt largest first to whichever side has fewer
 * events so far; the helper sorts its share while the calling thread sorts
 * the other, and the merge starts once both are done. */

/* Below this many events to sort a thread costs more than it saves. */
#define PARALLEL_SORT_MIN_EVENTS ((size_t)1 << 16)

typedef struct sort_share {
  GPtrArray *runs; /* tm_event_run*, borrowed */
} sort_share;

static gpointer sort_share_main(gpointer data) {
  sort_share *share = data;
  for (guint i = 0; i < share->runs->len; i++)
    run_stable_sort(g_ptr_array_index(share->runs, i));
  return NULL;
}

static gint run_longer_first(gconstpointer a, gconstpointer b) {
  const tm_event_run *x = *(tm_event_run *const *)a, *y = *(tm_event_run *const *)b;
  return x->len > y->len ? -1 : x->len < y->len;
}

/* Whether the merge takes the run as it is (by track or by its ascending
 * stretches) instead of sorting it first. */
static bool run_is_streamed(const tm_event_run *run);

static void sort_runs(tm_sorter *sorter) {
  GPtrArray *unsorted = g_ptr_array_new();
  size_t events = 0;
  for (size_t i = 0; i < sorter->runs.len; i++) {
    tm_event_run *run = sorter->runs.data[i];
    if (!run->sorted && run->len > 1 && !run_is_streamed(run)) {
      g_ptr_array_add(unsorted, run);
      events += run->len;
    }
  }
  GThread *helper = NULL;
  sort_share mine = {g_ptr_array_new()}, theirs = {g_ptr_array_new()};
  if (sorter->threads > 1 && unsorted->len > 1 && events >= PARALLEL_SORT_MIN_EVENTS) {
    g_ptr_array_sort(unsorted, run_longer_first);
    size_t mine_events = 0, theirs_events = 0;
    for (guint i = 0; i < unsorted->len; i++) {
      tm_event_run *run = g_ptr_array_index(unsorted, i);
      bool to_mine = mine_events <= theirs_events;
      g_ptr_array_add(to_mine ? mine.runs : theirs.runs, run);
      *(to_mine ? &mine_events : &theirs_events) += run->len;
    }
    helper = g_thread_try_new("tm-sort", sort_share_main, &theirs, NULL);
    if (helper == NULL) /* no thread: sort them here */
      g_ptr_array_extend(mine.runs, theirs.runs, NULL, NULL);
  } else {
    g_ptr_array_extend(mine.runs, unsorted, NULL, NULL);
  }
  sort_share_main(&mine);
  if (helper != NULL)
    g_thread_join(helper);
  g_ptr_array_free(mine.runs, TRUE);
  g_ptr_array_free(theirs.runs, TRUE);
  g_ptr_array_free(unsorted, TRUE);
}

/* Moves extras[old] to extras[new_of_old[old]] for every old < n, a
 * permutation, following its cycles (new_of_old is used up). */
static void permute_extras(tm_event_extra *extras, uint32_t *new_of_old, size_t n) {
  for (size_t start = 0; start < n; start++) {
    uint32_t dst = new_of_old[start];
    if (dst == start)
      continue;
    tm_event_extra carry = extras[start];
    while (dst != start) {
      tm_event_extra next = extras[dst];
      extras[dst] = carry;
      carry = next;
      uint32_t after = new_of_old[dst];
      new_of_old[dst] = dst;
      dst = after;
    }
    extras[start] = carry;
    new_of_old[start] = (uint32_t)start;
  }
}

/* Renumbers the extras that ev[0, n) name (sorter_sort); returns whether
 * any event names one. */
static bool renumber_extras(tm_event *ev, size_t n, uint32_t *new_of_old, size_t n_extras,
                            uint32_t *next, tm_sorter_named_fn named, void *ctx) {
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    tm_event *e = &ev[i];
    if (!(e->flags & TM_EVENT_HAS_EXTRA))
      continue;
    uint32_t old = e->u.x.extra, count = tm_event_extra_count(e);
    if (old >= n_extras || count > n_extras - old)
      continue;
    /* An event's extras stay together; an extra named twice keeps one
     * place. */
    if (new_of_old[old] == UINT32_MAX)
      for (uint32_t k = 0; k < count; k++)
        if (new_of_old[old + k] == UINT32_MAX)
          new_of_old[old + k] = (*next)++;
    e->u.x.extra = new_of_old[old];
    any = true;
    if (named)
      named(ctx, e);
  }
  return any;
}

static void settle_packed(tm_sorter *sorter);

void sorter_sort(tm_sorter *sorter, tm_event_extra *extras, size_t n_extras,
                 tm_sorter_named_fn named, void *ctx) {
  settle_packed(sorter);
  sort_runs(sorter);
  if (n_extras == 0 || n_extras > UINT32_MAX)
    return;
  uint32_t *new_of_old = g_new(uint32_t, n_extras);
  memset(new_of_old, 0xff, n_extras * sizeof *new_of_old);
  uint32_t next = 0;
  tm_event *scratch = NULL;
  for (size_t r = 0; r < sorter->runs.len; r++) {
    tm_event_run *run = sorter->runs.data[r];
    if (!run->packed) {
      renumber_extras(run->events, run->len, new_of_old, n_extras, &next, named, ctx);
      continue;
    }
    /* A packed run (sealed), block by block: a block naming extras is
     * packed again. */
    if (!scratch)
      scratch = scratch_map(PACK_EVENTS * sizeof *scratch);
    for (size_t b = 0; b < run->n_blocks; b++) {
      tm_run_block *block = &run->blocks[b];
      if (!block->extras)
        continue;
      unpack_events(block->bytes, block->n, scratch);
      if (renumber_extras(scratch, block->n, new_of_old, n_extras, &next, named, ctx))
        block_pack(block, scratch, block->n);
    }
  }
  scratch_unmap(scratch, PACK_EVENTS * sizeof *scratch);
  /* Extras no event names (dropped by the conversion) go last. */
  for (size_t old = 0; old < n_extras; old++)
    if (new_of_old[old] == UINT32_MAX)
      new_of_old[old] = next++;
  permute_extras(extras, new_of_old, n_extras);
  g_free(new_of_old);
}

/* --- k-way merge ------------------------------------------------------------ */

typedef struct merge_cursor {
  const tm_event *pos, *end;
  const tm_event *released; /* pages before this were given back */
  tm_event_run *run;
} merge_cursor;

/* Hands the whole pages of already merged events back to the kernel
 * (tm_memory_release); nothing ever reads merged events again. */
static void release_merged(merge_cursor *c) {
  if ((size_t)((const char *)c->pos - (const char *)c->released) < RELEASE_BYTES)
    return;
  tm_memory_release(c->run->events, (uintptr_t)c->released, (uintptr_t)c->pos);
  c->released = c->pos;
}

static void cursor_finish(merge_cursor *c) {
  g_free(c->run->events);
  c->run->events = NULL;
  c->run->len = c->run->cap = 0;
}

/* Emits the rest of one run: once it is the only one left, no heap. */
static void stream_rest(merge_cursor *c, tm_sorter_emit emit, void *ctx) {
  uint32_t machine_id = c->run->machine_id, trace_id = c->run->trace_id;
  size_t batch = RELEASE_BYTES / sizeof(tm_event);
  while (c->pos < c->end) {
    const tm_event *stop = c->end - c->pos > (ptrdiff_t)batch ? c->pos + batch : c->end;
    for (const tm_event *ev = c->pos; ev < stop; ev++)
      emit(ctx, ev, machine_id, trace_id);
    c->pos = stop;
    release_merged(c);
  }
  cursor_finish(c);
}

/* --- helpers of the streams below ------------------------------------------------ */

/* Hands back the whole pages of ev[0, floor) (see tm_memory_release). */
static void release_below(const tm_event *ev, size_t floor, size_t *released) {
  if ((floor - *released) * sizeof *ev < RELEASE_BYTES)
    return;
  tm_memory_release(ev, (uintptr_t)(ev + *released), (uintptr_t)(ev + floor));
  *released = floor;
}

/* Sorts keys[0, n) by ts, stably, through tmp[0, n / 2): a merge sort
 * that skips the merge of two halves already in order, so a track nearly
 * in order costs about a pass. Keys gathered in position order come out
 * in (ts, position) order. glibc's qsort, calling partition_key_cmp per
 * comparison, was 8% of a realistic TrackEvent import's instructions. */
static void sort_keys_by_ts(partition_key *keys, size_t n, partition_key *tmp) {
  if (n <= MIN_RUN) {
    for (size_t i = 1; i < n; i++) {
      partition_key x = keys[i];
      size_t j = i;
      for (; j > 0 && keys[j - 1].ts > x.ts; j--)
        keys[j] = keys[j - 1];
      keys[j] = x;
    }
    return;
  }
  size_t mid = n / 2;
  sort_keys_by_ts(keys, mid, tmp);
  sort_keys_by_ts(keys + mid, n - mid, tmp);
  if (keys[mid - 1].ts <= keys[mid].ts)
    return;
  memcpy(tmp, keys, mid * sizeof *keys);
  size_t i = 0, j = mid, out = 0;
  while (i < mid && j < n)
    keys[out++] = keys[j].ts < tmp[i].ts ? keys[j++] : tmp[i++];
  memcpy(keys + out, tmp + i, (mid - i) * sizeof *keys);
}

/* Events per chunk of a run whose merged events are counted down: 2^15
 * events, 1.1 MiB. The model's tables grow while the first chunk waits
 * for its last event, on top of the whole run and its side table: that is
 * the import's peak. 5 MiB chunks made the 1M-event realistic TrackEvent
 * file's peak ~2 MB higher (docs/performance.md, "Where the memory goes"). */
#define CHUNK_SHIFT 15
#define CHUNK_EVENTS ((size_t)1 << CHUNK_SHIFT)

/* How many events of each chunk of a run are still to merge. */
static uint32_t *chunks_left_new(size_t n) {
  size_t chunks = n ? ((n - 1) >> CHUNK_SHIFT) + 1 : 1;
  uint32_t *left = g_new(uint32_t, chunks);
  for (size_t c = 0; c < chunks; c++)
    left[c] = (uint32_t)(MIN(n, (c + 1) << CHUNK_SHIFT) - (c << CHUNK_SHIFT));
  return left;
}

/* Counts ev[i] of n events (a run, or a window of the run whose events
 * are the g_malloc'd `block`) as merged; once its chunk is all merged,
 * hands back the chunk's whole pages (pages shared with a neighbouring
 * chunk stay; see tm_memory_release for the block's first page). */
static inline void chunk_merged(const tm_event *block, const tm_event *ev, size_t n,
                                uint32_t *left, size_t i) {
  size_t c = i >> CHUNK_SHIFT;
  if (--left[c])
    return;
  tm_memory_release(block, (uintptr_t)(ev + (c << CHUNK_SHIFT)),
                    (uintptr_t)(ev + MIN(n, (c + 1) << CHUNK_SHIFT)));
}

/* Whether an event of run `self` at `ts` comes before `bound`, the best
 * head of the other runs in the k-way merge (ties go to the smaller run
 * number). A lone run is merged with the bound UNBOUNDED. */
static inline bool before_bound(int64_t ts, uint32_t self, merge_head bound) {
  return ts < bound.ts || (ts == bound.ts && self < bound.order);
}

static const merge_head UNBOUNDED = {INT64_MAX, UINT32_MAX, UINT32_MAX};

/* --- a run merged by track, without sorting it ------------------------------
 *
 * For a run that interleaves many tracks each in ts order (a JSON file
 * written thread block by thread block): the positions of each track's
 * events are gathered in one pass over the run (side[], grouped by track,
 * in run order), and the tracks are merged with a heap, ties broken by
 * position in the run. A track out of order on its own (a counter that
 * several threads write; in a realistic TrackEvent trace most tracks) has
 * its positions sorted by (ts, position) first, through keys that live
 * only while it is sorted. The events are read where they lie in the run;
 * a chunk of the run goes back to the kernel once all its events are
 * merged. Nothing of the run is copied: 4 bytes per event beside it (the
 * sort by track this replaces took a 40-byte spare and a 4-byte position),
 * both for a lone run and for each such run of a k-way merge. */
/* What a track stream's events are, and what closing it frees. */
typedef enum track_mode {
  TRACK_WHOLE,  /* the run's events: closing frees them */
  TRACK_WINDOW, /* a window of the run's events: closing hands its pages back */
  TRACK_OWNED,  /* a packed block unpacked for the stream (scratch_map): closing unmaps it */
} track_mode;

typedef struct track_stream {
  tm_event_run *run;
  const tm_event *ev; /* the run's events, or one window of them */
  size_t n;
  track_mode mode;
  const tm_event *base; /* the g_malloc'd block that ev lies in */
  uint32_t *head;     /* per track: the index in side[] of its next event */
  uint32_t *side_end; /* per track: the end of its positions in side[] */
  uint32_t *side;     /* positions, grouped by track, each in (ts, position) order */
  uint32_t *left; /* chunks_left_new */
  merge_head *heap;
  size_t heap_len;
  int sink;
} track_stream;

/* False, having changed nothing, when the track ids are too sparse for a
 * table (or the run too long for 32-bit positions): the run is sorted
 * instead. */
static bool track_stream_fits(const tm_event_run *run) {
  return run->len < UINT32_MAX / 2 && run->max_track < run->len;
}

/* Counts the events of ev[0, n) on each track t < k in count[t] (zeroed
 * by the caller) and flags in unsorted[t] (false on entry) the tracks out
 * of order on their own; last_ts (k entries, any content) is scratch, left
 * with each track's largest ts. Returns the smallest ts (INT64_MAX if n is
 * 0). */
static int64_t count_tracks(const tm_event *ev, size_t n, size_t k, uint32_t *count,
                            bool *unsorted, int64_t *last_ts) {
  int64_t min = INT64_MAX;
  for (size_t t = 0; t < k; t++)
    last_ts[t] = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    uint32_t t = ev[i].track_id;
    int64_t ts = ev[i].ts;
    count[t]++;
    min = MIN(min, ts);
    if (ts < last_ts[t])
      unsorted[t] = true;
    else
      last_ts[t] = ts;
  }
  return min;
}

/* Opens the stream over the run's events [first, first + n), ordered by
 * (ts, position); `window` unless that is the whole run. `counted` and
 * `counted_unsorted` are count_tracks()'s tables of these events when the
 * caller has them (borrowed), else NULL. */
static void track_stream_open(track_stream *s, tm_event_run *run, const tm_event *ev,
                              size_t n, track_mode mode, const uint32_t *counted,
                              const bool *counted_unsorted) {
  size_t k = (size_t)run->max_track + 1;
  uint32_t *own_count = NULL;
  bool *own_unsorted = NULL;
  if (!counted) {
    int64_t *last_ts = g_new(int64_t, k);
    own_count = g_new0(uint32_t, k);
    own_unsorted = g_new0(bool, k);
    count_tracks(ev, n, k, own_count, own_unsorted, last_ts);
    g_free(last_ts);
    counted = own_count;
    counted_unsorted = own_unsorted;
  }
  const uint32_t *count = counted;
  const bool *unsorted = counted_unsorted;

  /* Track t's positions: side[head[t], side_end[t]). */
  uint32_t *head = g_new(uint32_t, k), *side_end = g_new(uint32_t, k);
  size_t at = 0, longest = 0;
  for (size_t t = 0; t < k; t++) {
    head[t] = side_end[t] = (uint32_t)at;
    at += count[t];
    if (unsorted[t])
      longest = MAX(longest, (size_t)count[t]);
  }
  uint32_t *side = g_new(uint32_t, n ? n : 1);
  tm_memory_advise_huge(side, n * sizeof *side);
  for (size_t i = 0; i < n; i++)
    side[side_end[ev[i].track_id]++] = (uint32_t)i;

  /* Out-of-order tracks, one at a time: (ts, position) keys, sorted, and
   * the positions written back in that order. */
  if (longest) {
    partition_key *keys = g_new(partition_key, longest);
    partition_key *tmp = g_new(partition_key, longest / 2 + 1);
    for (size_t t = 0; t < k; t++) {
      if (!unsorted[t])
        continue;
      size_t len = side_end[t] - head[t];
      uint32_t *p = side + head[t];
      for (size_t q = 0; q < len; q++)
        keys[q] = (partition_key){ev[p[q]].ts, p[q], (uint32_t)q};
      sort_keys_by_ts(keys, len, tmp);
      for (size_t q = 0; q < len; q++)
        p[q] = keys[q].pos;
    }
    g_free(tmp);
    g_free(keys);
  }
  g_free(own_count);
  g_free(own_unsorted);

  merge_head *heap = g_new(merge_head, k);
  size_t heap_len = 0;
  for (size_t t = 0; t < k; t++) {
    if (head[t] == side_end[t])
      continue;
    uint32_t pos = side[head[t]];
    heap[heap_len++] = (merge_head){ev[pos].ts, pos, (uint32_t)t};
  }
  for (size_t i = heap_len / 2; i-- > 0;)
    head_sift_down(heap, heap_len, i);
  *s = (track_stream){run, ev, n, mode, mode == TRACK_OWNED ? ev : run->events, head,
                      side_end, side, chunks_left_new(n), heap, heap_len, 0};
}

/* Emits the run's events in (ts, position) order while they come before
 * `bound` (run number `self`); the run's next event is then heap[0]. */
static void track_stream_until(track_stream *s, uint32_t self, merge_head bound,
                               tm_sorter_emit emit, void *ctx) {
  const tm_event *ev = s->ev;
  size_t n = s->n;
  uint32_t *head = s->head;
  const uint32_t *side = s->side, *side_end = s->side_end;
  merge_head *heap = s->heap;
  size_t heap_len = s->heap_len;
  uint32_t machine_id = s->run->machine_id, trace_id = s->run->trace_id;
  while (heap_len > 0 && before_bound(heap[0].ts, self, bound)) {
    uint32_t t = heap[0].source;
    merge_head inner = {INT64_MAX, UINT32_MAX, 0};
    if (heap_len > 1)
      inner = heap[1];
    if (heap_len > 2 && head_before(heap[2], inner))
      inner = heap[2];
    uint32_t j = head[t], end = side_end[t];
    uint32_t pos = heap[0].order;
    for (;;) {
      /* With dozens of tracks in turn the hardware prefetcher loses
       * them, and every line of events would be a miss to memory. */
      __builtin_prefetch(&ev[side[MIN(j + PREFETCH_EVENTS, end - 1)]]);
      emit(ctx, &ev[pos], machine_id, trace_id);
      chunk_merged(s->base, ev, n, s->left, pos);
      if (++j == end)
        break;
      pos = side[j];
      if (!(ev[pos].ts < inner.ts || (ev[pos].ts == inner.ts && pos < inner.order)) ||
          !before_bound(ev[pos].ts, self, bound))
        break;
    }
    head[t] = j;
    if (j == end) {
      heap_len--;
      head_replace_top(heap, heap_len, heap[heap_len], &s->sink);
    } else {
      head_replace_top(heap, heap_len, (merge_head){ev[pos].ts, pos, t}, &s->sink);
    }
  }
  s->heap_len = heap_len;
}

/* Frees the stream's tables and the run's events (a window's pages only:
 * the caller frees the run once its last window is closed). */
static void track_stream_close(track_stream *s) {
  g_free(s->left);
  g_free(s->heap);
  g_free(s->side_end);
  g_free(s->side);
  g_free(s->head);
  if (s->mode == TRACK_OWNED) {
    scratch_unmap((tm_event *)s->ev, s->n * sizeof *s->ev);
    return;
  }
  if (s->mode == TRACK_WINDOW) {
    tm_memory_release(s->run->events, (uintptr_t)s->ev, (uintptr_t)(s->ev + s->n));
    return;
  }
  g_free(s->run->events);
  s->run->events = NULL;
  s->run->len = s->run->cap = 0;
  s->run->sorted = true;
}

/* --- a run merged by its ascending stretches -------------------------------- */

static int merge_head_cmp(const void *a, const void *b) {
  const merge_head *x = a, *y = b;
  return head_before(*x, *y) ? -1 : head_before(*y, *x) ? 1 : 0;
}

/* For a run the sort would give to the natural merge sort (an ftrace or
 * systrace stream: cpu bundles, the track changing at most events): one
 * k-way merge of its ascending stretches (shorter ones extended to MIN_RUN
 * by insertion in place). No spare copy of the run (40 bytes an event, each
 * page zeroed by the kernel) and no pass per level: each event is read
 * once. Stretches join the merge in the order of their first event, so it
 * holds about as many as overlap in time (a cpu's bundles each). Ties go
 * to the earlier stretch: stable. The pages of the merged prefix go back
 * to the kernel while the model grows.
 *
 * The stretches being merged sit in the leaves of a tournament tree
 * (each inner node holds the least key of its subtree), not in a heap:
 * when cpus interleave event by event (an ftrace trace of 32 cpus), every
 * event changes the best head, and the tree replays one path, a comparison
 * a level, where the heap moved a 16-byte head a level and compared twice
 * (the heap merge was 20% of an ftrace import's instructions). Leaves are
 * reused as stretches end; the tree doubles when more overlap. The keys
 * (ts, stretch) are unique, so the merged order is the heap's.
 *
 * A key is one 128-bit number: ts (sign bit flipped) above the stretch
 * above the slot of its leaf, so that a match is one unsigned comparison
 * (cmp, sbb) and a node holds the winning key itself, not the slot that
 * holds it: a level is one load, one comparison, one store. (Nodes that
 * held a slot, matched on ts then stretch, took 21 instructions a level:
 * 26 M of a 200k-event ftrace import's 229 M.) */
__extension__ typedef unsigned __int128 stretch_key;

#define KEY_TS_FLIP ((uint64_t)1 << 63)

static inline stretch_key stretch_key_of(int64_t ts, uint32_t stretch, uint32_t slot) {
  return (stretch_key)((uint64_t)ts ^ KEY_TS_FLIP) << 64 | (uint64_t)stretch << 32 | slot;
}
static inline int64_t stretch_key_ts(stretch_key key) {
  return (int64_t)((uint64_t)(key >> 64) ^ KEY_TS_FLIP);
}
static inline uint32_t stretch_key_stretch(stretch_key key) { return (uint32_t)(key >> 32); }
static inline uint32_t stretch_key_slot(stretch_key key) { return (uint32_t)key; }

/* An empty leaf: after every real key (ts INT64_MAX, stretch UINT32_MAX
 * at most). */
#define NO_KEY (~(stretch_key)0)

typedef struct stretch_stream {
  tm_event_run *run;
  tm_event *ev;
  size_t n;
  size_bounds bounds;
  size_t k;
  merge_head *waiting; /* the stretches by (first ts, index) */
  size_t next_waiting;
  /* The key of waiting[next_waiting] (slot 0), NO_KEY when none waits:
   * tested against the tree's best once an event. */
  stretch_key next_key;
  size_t *pos; /* per stretch: its next event */
  /* The tournament of `width` leaves (a power of two): tree[width + slot]
   * the key of the head of the stretch in that slot, or NO_KEY;
   * tree[node] for nodes 1 .. width - 1 the least key below it, tree[1]
   * the run's next event; free_slots[0, n_free) the slots holding no
   * stretch. */
  stretch_key *tree;
  uint32_t *free_slots;
  size_t width, n_free;
  size_t n_occupied; /* slots holding a stretch (width - n_free) */
  /* Every stretch before `unfinished` is merged, and so is
   * ev[0, pos[unfinished]). */
  size_t unfinished, released;
} stretch_stream;

/* Sets the leaf of `slot` to `key` and replays the matches on its path:
 * a level, the sibling subtree's least key against the best so far. */
static inline void stretch_replay(stretch_stream *s, uint32_t slot, stretch_key key) {
  /* Walked by byte offset (node * 16): the sibling is offset ^ 16 and the
   * parent (offset / 2) rounded down to a key, with no scaling a level. */
  char *tree = (char *)s->tree;
  const size_t size = sizeof(stretch_key);
  size_t at = (s->width + slot) * size;
  *(stretch_key *)(void *)(tree + at) = key;
  stretch_key best = key;
  while (at > size) {
    stretch_key theirs = *(const stretch_key *)(const void *)(tree + (at ^ size));
    best = theirs < best ? theirs : best;
    at = (at >> 1) & ~(size - 1);
    *(stretch_key *)(void *)(tree + at) = best;
  }
}

static void stretch_rebuild(stretch_stream *s) {
  stretch_key *tree = s->tree;
  for (size_t node = s->width; node-- > 1;)
    tree[node] = tree[2 * node + 1] < tree[2 * node] ? tree[2 * node + 1] : tree[2 * node];
}

/* Grows the tree to `width` leaves (a power of two), the new slots free
 * and the lowest of them taken first. */
static void stretch_widen(stretch_stream *s, size_t width) {
  size_t old = s->width;
  stretch_key *tree = g_new(stretch_key, 2 * width);
  for (size_t slot = 0; slot < width; slot++)
    tree[width + slot] = slot < old ? s->tree[old + slot] : NO_KEY;
  g_free(s->tree);
  s->tree = tree;
  s->free_slots = g_renew(uint32_t, s->free_slots, width);
  for (size_t slot = width; slot-- > old;)
    s->free_slots[s->n_free++] = (uint32_t)slot;
  s->width = width;
  stretch_rebuild(s);
}

/* Puts `head` in a free slot (doubling the tree when there is none). */
static void stretch_join(stretch_stream *s, merge_head head) {
  if (s->n_free == 0)
    stretch_widen(s, 2 * s->width);
  uint32_t slot = s->free_slots[--s->n_free];
  s->n_occupied++;
  stretch_replay(s, slot, stretch_key_of(head.ts, head.order, slot));
}

/* Whether the next waiting stretch begins before the tree's best (an
 * empty tree's best is NO_KEY). */
static inline bool stretch_next_joins(const stretch_stream *s) {
  return s->next_key < s->tree[1];
}

static void stretch_set_next_key(stretch_stream *s) {
  merge_head next = s->next_waiting < s->k ? s->waiting[s->next_waiting] : (merge_head){0};
  s->next_key = s->next_waiting < s->k ? stretch_key_of(next.ts, next.order, 0) : NO_KEY;
}

/* The heads of the stretches that begin before the tree's best join it,
 * so that the best is the run's next event (none left: n_occupied 0). */
static void stretch_stream_settle(stretch_stream *s) {
  while (stretch_next_joins(s)) {
    stretch_join(s, s->waiting[s->next_waiting++]);
    stretch_set_next_key(s);
  }
}

/* False when the run has more stretches than the heads index (beyond
 * 2^37 events, never in practice): it is sorted instead. */
static bool stretch_stream_fits(const tm_event_run *run) { return run->len <= UINT32_MAX; }

#define STRETCH_TREE_WIDTH 16

static void stretch_stream_open(stretch_stream *s, tm_event_run *run) {
  tm_event *ev = run->events;
  size_t n = run->len;
  size_bounds bounds = find_stretches(ev, n);
  size_t k = bounds.len - 1;
  merge_head *waiting = g_new(merge_head, k ? k : 1);
  for (size_t i = 0; i < k; i++)
    waiting[i] = (merge_head){ev[bounds.data[i]].ts, (uint32_t)i, (uint32_t)i};
  size_t in_order = 1;
  while (in_order < k && !head_before(waiting[in_order], waiting[in_order - 1]))
    in_order++;
  if (in_order < k)
    qsort(waiting, k, sizeof *waiting, merge_head_cmp);
  size_t *pos = g_new(size_t, k ? k : 1);
  for (size_t i = 0; i < k; i++)
    pos[i] = bounds.data[i];
  *s = (stretch_stream){.run = run, .ev = ev, .n = n, .bounds = bounds, .k = k,
                        .waiting = waiting, .pos = pos};
  stretch_widen(s, STRETCH_TREE_WIDTH);
  stretch_set_next_key(s);
  stretch_stream_settle(s);
}

/* One event a round: after each, the tree decides again. (Running the
 * best stretch on up to the next best head, as the heap did, needs that
 * head, a second pass up the tree; in ftrace and systrace runs the best
 * stretch changes at nearly every event.) */
static void stretch_stream_until(stretch_stream *s, uint32_t self, merge_head bound,
                                 tm_sorter_emit emit, void *ctx) {
  const tm_event *ev = s->ev;
  uint32_t machine_id = s->run->machine_id, trace_id = s->run->trace_id;
  while (s->n_occupied > 0) {
    stretch_key top = s->tree[1];
    if (!before_bound(stretch_key_ts(top), self, bound))
      break;
    uint32_t slot = stretch_key_slot(top), i = stretch_key_stretch(top);
    size_t p = s->pos[i], end = s->bounds.data[i + 1];
    __builtin_prefetch(end - p > PREFETCH_EVENTS ? &ev[p + PREFETCH_EVENTS] : &ev[p]);
    emit(ctx, &ev[p++], machine_id, trace_id);
    s->pos[i] = p;
    /* The merged prefix ends in stretch `unfinished`: only its events
     * move it. */
    if (i == s->unfinished) {
      while (s->unfinished < s->k && s->pos[s->unfinished] == s->bounds.data[s->unfinished + 1])
        s->unfinished++;
      release_below(ev, s->unfinished < s->k ? s->pos[s->unfinished] : s->n, &s->released);
    }
    stretch_key next = NO_KEY;
    if (p == end) {
      s->free_slots[s->n_free++] = slot;
      s->n_occupied--;
    } else {
      next = stretch_key_of(ev[p].ts, i, slot);
    }
    stretch_replay(s, slot, next);
    /* Settle's own first test, here: once per event, a stretch joining
     * about once per bundle. */
    if (stretch_next_joins(s))
      stretch_stream_settle(s);
  }
}

static void stretch_stream_close(stretch_stream *s) {
  g_free(s->tree);
  g_free(s->free_slots);
  g_free(s->pos);
  g_free(s->waiting);
  tm_vec_free(&s->bounds);
  g_free(s->run->events);
  s->run->events = NULL;
  s->run->len = s->run->cap = 0;
  s->run->sorted = true;
}

/* --- the runs as streams ----------------------------------------------------- */

/* What sort_events would give to the natural merge sort: many events out
 * of order, the track changing too often for the merge by track. */
static bool run_is_stretched(const tm_event_run *run) {
  return !run->sorted && run->len > MIN_RUN && run->aside > run->len / 4 &&
         run->track_changes > run->len / TRACK_BLOCK_MIN;
}

/* Better merged by track than sorted: more than a quarter of it would be
 * set aside by sort_events, and its tracks come in blocks (see
 * TRACK_BLOCK_MIN). */
static bool run_is_interleaved(const tm_event_run *run) {
  return !run->sorted && run->len > MIN_RUN && run->aside > run->len / 4 &&
         run->track_changes <= run->len / TRACK_BLOCK_MIN;
}

typedef enum stream_kind {
  STREAM_SORTED,    /* the run, sorted in place first if it was not */
  STREAM_TRACKS,    /* track_stream (of the run, or of one of its windows) */
  STREAM_STRETCHES, /* stretch_stream */
  STREAM_WINDOW,    /* a window of a run merged by track, not opened yet */
} stream_kind;

static stream_kind stream_kind_of(const tm_event_run *run) {
  if (run_is_interleaved(run) && track_stream_fits(run))
    return STREAM_TRACKS;
  if (run_is_stretched(run) && stretch_stream_fits(run))
    return STREAM_STRETCHES;
  return STREAM_SORTED;
}

static bool run_is_streamed(const tm_event_run *run) {
  return stream_kind_of(run) != STREAM_SORTED;
}

typedef struct run_stream {
  stream_kind kind;
  union {
    merge_cursor cursor;
    track_stream tracks;
    stretch_stream stretches;
  } u;
  /* A window's: its run, its events [first, first + n) of the run, their
   * smallest ts (its head until it is opened) and track counts (the
   * run's window_plan's), and the count of the run's windows not closed
   * yet (shared by them; the last one frees the run). */
  tm_event_run *run;
  size_t first, n;
  int64_t window_min;
  const uint32_t *window_count;
  const bool *window_unsorted;
  size_t *windows_left;
  tm_run_block *block; /* a packed run's window: its block, else NULL */
} run_stream;

/* --- a long run merged by track, window by window ----------------------------
 *
 * A realistic TrackEvent trace is one run (one clock) of dozens of packet
 * sequences taking turns: merged by track as a whole, its side table (4
 * bytes an event) is made while every event of the run is resident, which
 * was the import's peak. Its sequences advance together, so consecutive
 * slices of the run cover consecutive stretches of time that overlap only
 * at their edges (at 1M events, windows of 2^16 overlap their neighbours
 * and nothing else). Such a run is cut into windows of WINDOW_EVENTS
 * events, each merged by track on its own: a window is opened (its side
 * table made) when its smallest ts reaches the top of the merge, and
 * closed, its pages handed back, once its last event is merged, so only
 * the side tables of the few windows open at once exist. The k-way merge
 * breaks ties between streams by their index, and the windows of a run
 * are consecutive streams in position order, so the merged order is still
 * (ts, run, position). A run whose windows overlap more (a JSON file
 * written thread by thread spans the whole trace in every window) is
 * merged whole, as before: windows would all be open at once and the
 * k-way merge would switch between them at nearly every event. */
#define WINDOW_SHIFT 16
#define WINDOW_EVENTS ((size_t)1 << WINDOW_SHIFT)
/* At most WINDOW_OVERLAP_MAX + 1 windows may be open at once. */
#define WINDOW_OVERLAP_MAX 2
/* Each open window has tables of ~24 bytes a track (heads, ends, heap):
 * beyond this many tracks they would outweigh the side table saved. */
#define WINDOW_TRACKS_MAX (WINDOW_EVENTS / 16)
_Static_assert(WINDOW_EVENTS == PACK_EVENTS && WINDOW_TRACKS_MAX == PACK_TRACKS_MAX,
               "a packed run's blocks are its windows");

/* How a run merged by track is cut in windows (run_windows): per window
 * w, its smallest ts min[w] and count_tracks()'s tables of its events at
 * count[w * tracks], unsorted[w * tracks]. */
typedef struct window_plan {
  size_t windows, tracks;
  int64_t *min;
  uint32_t *count;
  bool *unsorted;
} window_plan;

static void window_plan_free(window_plan *plan) {
  g_free(plan->min);
  g_free(plan->count);
  g_free(plan->unsorted);
  *plan = (window_plan){0};
}

/* One end of a window's span of ts, for windows_fit. */
typedef struct window_end {
  int64_t ts;
  int step; /* +1: the window opens here, -1: it closes after ts */
} window_end;

static int window_end_cmp(const void *a, const void *b) {
  const window_end *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return y->step - x->step; /* at one ts, windows open before others close */
}

/* Whether windows whose events span [min[w], max[w]] qualify: a window is
 * open from its smallest ts to its largest, so at most as many are open at
 * once as the spans overlap at one point, which must not exceed
 * WINDOW_OVERLAP_MAX + 1. (A trace's last window, the producers' buffers
 * flushed at its end, may begin well before the one before it.) */
static bool windows_fit(const int64_t *min, const int64_t *max, size_t windows) {
  window_end *ends = g_new(window_end, 2 * windows);
  for (size_t w = 0; w < windows; w++) {
    ends[2 * w] = (window_end){min[w], 1};
    ends[2 * w + 1] = (window_end){max[w], -1};
  }
  qsort(ends, 2 * windows, sizeof *ends, window_end_cmp);
  int open = 0;
  bool fits = true;
  for (size_t i = 0; i < 2 * windows && fits; i++)
    fits = (open += ends[i].step) <= WINDOW_OVERLAP_MAX + 1;
  g_free(ends);
  return fits;
}

/* Events between the ts read by the sampled check of run_windows. */
#define WINDOW_SAMPLE_STRIDE 32

/* Plans the windows of `run` (merged by track) in *plan, or returns false
 * to merge it whole: when it has fewer than two windows, too many tracks,
 * or more than WINDOW_OVERLAP_MAX + 1 windows would be open at once. A
 * sample of the ts first: overlaps seen in it are real ones (a sample's
 * span lies inside its window's), so a
 * run written thread by thread, every window spanning the trace, is
 * turned down after reading 1 event in WINDOW_SAMPLE_STRIDE. Then one pass
 * over the run counts each window's tracks as track_stream_open would,
 * which then reads the run once less. */
static bool run_windows(const tm_event_run *run, window_plan *plan) {
  size_t n = run->len;
  size_t k = (size_t)run->max_track + 1;
  if (n < 2 * WINDOW_EVENTS || k > WINDOW_TRACKS_MAX)
    return false;
  size_t windows = ((n - 1) >> WINDOW_SHIFT) + 1;
  const tm_event *ev = run->events;
  int64_t *min = g_new(int64_t, windows), *max = g_new(int64_t, windows);
  for (size_t w = 0; w < windows; w++) {
    size_t end = MIN(n, (w + 1) << WINDOW_SHIFT);
    min[w] = INT64_MAX;
    max[w] = INT64_MIN;
    for (size_t i = w << WINDOW_SHIFT; i < end; i += WINDOW_SAMPLE_STRIDE) {
      min[w] = MIN(min[w], ev[i].ts);
      max[w] = MAX(max[w], ev[i].ts);
    }
  }
  if (!windows_fit(min, max, windows)) {
    g_free(min);
    g_free(max);
    return false;
  }
  uint32_t *count = g_new0(uint32_t, windows * k);
  bool *unsorted = g_new0(bool, windows * k);
  int64_t *last_ts = g_new(int64_t, k);
  for (size_t w = 0; w < windows; w++) {
    size_t first = w << WINDOW_SHIFT;
    min[w] = count_tracks(ev + first, MIN(n - first, WINDOW_EVENTS), k, count + w * k,
                          unsorted + w * k, last_ts);
    max[w] = INT64_MIN; /* the largest of the tracks' largest ts */
    for (size_t t = 0; t < k; t++)
      max[w] = MAX(max[w], last_ts[t]);
  }
  g_free(last_ts);
  bool fits = windows_fit(min, max, windows);
  g_free(max);
  if (!fits) {
    g_free(min);
    g_free(count);
    g_free(unsorted);
    return false;
  }
  *plan = (window_plan){windows, k, min, count, unsorted};
  return true;
}

/* Closes a window's stream; the last of its run's frees the run's events. */
static void window_close(run_stream *s) {
  if (s->kind == STREAM_TRACKS)
    track_stream_close(&s->u.tracks);
  if (--*s->windows_left)
    return;
  g_free(s->run->events);
  s->run->events = NULL;
  s->run->len = s->run->cap = 0;
  s->run->sorted = true;
}

static void run_stream_open(run_stream *s, tm_event_run *run) {
  s->kind = stream_kind_of(run);
  s->windows_left = NULL;
  s->block = NULL;
  if (s->kind == STREAM_TRACKS)
    track_stream_open(&s->u.tracks, run, run->events, run->len, TRACK_WHOLE, NULL, NULL);
  else if (s->kind == STREAM_STRETCHES)
    stretch_stream_open(&s->u.stretches, run);
  else
    s->u.cursor = (merge_cursor){run->events, run->events + run->len, run->events, run};
}

/* The ts of the stream's next event; false when it has none left. */
static bool run_stream_head(const run_stream *s, int64_t *ts) {
  switch (s->kind) {
  case STREAM_TRACKS:
    if (!s->u.tracks.heap_len)
      return false;
    *ts = s->u.tracks.heap[0].ts;
    return true;
  case STREAM_STRETCHES:
    if (!s->u.stretches.n_occupied)
      return false;
    *ts = stretch_key_ts(s->u.stretches.tree[1]);
    return true;
  case STREAM_WINDOW:
    *ts = s->window_min; /* its first event in (ts, position) order */
    return true;
  case STREAM_SORTED:
  default:
    if (s->u.cursor.pos == s->u.cursor.end)
      return false;
    *ts = s->u.cursor.pos->ts;
    return true;
  }
}

/* Emits the stream's events while they come before `bound`; at least one
 * when its head does. */
static void run_stream_until(run_stream *s, uint32_t self, merge_head bound,
                             tm_sorter_emit emit, void *ctx) {
  if (s->kind == STREAM_WINDOW) {
    if (s->block) {
      /* A packed run's window: its block unpacked, its bytes freed. */
      tm_event *ev = scratch_map(s->n * sizeof *ev);
      unpack_events(s->block->bytes, s->n, ev);
      free_released(s->block->bytes, s->block->size);
      s->block->bytes = NULL;
      track_stream_open(&s->u.tracks, s->run, ev, s->n, TRACK_OWNED, NULL, NULL);
    } else {
      track_stream_open(&s->u.tracks, s->run, s->run->events + s->first, s->n, TRACK_WINDOW,
                        s->window_count, s->window_unsorted);
    }
    s->kind = STREAM_TRACKS;
  }
  if (s->kind == STREAM_TRACKS) {
    track_stream_until(&s->u.tracks, self, bound, emit, ctx);
    return;
  }
  if (s->kind == STREAM_STRETCHES) {
    stretch_stream_until(&s->u.stretches, self, bound, emit, ctx);
    return;
  }
  /* A run emitted in position order: the common case of several files. */
  merge_cursor *c = &s->u.cursor;
  uint32_t machine_id = c->run->machine_id, trace_id = c->run->trace_id;
  const tm_event *ev = c->pos;
  while (ev < c->end && before_bound(ev->ts, self, bound)) {
    /* Many runs in turn lose the hardware prefetcher (see above). */
    __builtin_prefetch(c->end - ev > PREFETCH_EVENTS ? ev + PREFETCH_EVENTS : ev);
    emit(ctx, ev, machine_id, trace_id);
    ev++;
  }
  c->pos = ev;
  if (ev != c->end)
    release_merged(c);
}

static void run_stream_close(run_stream *s) {
  if (s->windows_left)
    window_close(s);
  else if (s->kind == STREAM_TRACKS)
    track_stream_close(&s->u.tracks);
  else if (s->kind == STREAM_STRETCHES)
    stretch_stream_close(&s->u.stretches);
  else
    cursor_finish(&s->u.cursor);
}

/* Every run is merged as a stream: a sorted (or nearly sorted) run by a
 * cursor, after the runs that need it were sorted in place (on two threads
 * when allowed); an interleaved one by track and a stretched one by its
 * ascending stretches, neither sorted nor copied. The streams are merged by
 * a heap of their heads, ties to the smaller run number; a stream whose
 * head is on top emits until it reaches the next best head. */
/* Whether the merge takes a sealed packed run in windows, one per block
 * (as run_windows decides for a run of events). */
static bool packed_windows_fit(const tm_event_run *run) {
  if (run->n_blocks < 2 || stream_kind_of(run) != STREAM_TRACKS ||
      (size_t)run->max_track + 1 > WINDOW_TRACKS_MAX)
    return false;
  int64_t *min = g_new(int64_t, run->n_blocks), *max = g_new(int64_t, run->n_blocks);
  for (size_t b = 0; b < run->n_blocks; b++) {
    min[b] = run->blocks[b].min_ts;
    max[b] = run->blocks[b].max_ts;
  }
  bool fits = windows_fit(min, max, run->n_blocks);
  g_free(min);
  g_free(max);
  return fits;
}

/* Seals every packed run, and unpacks those the merge would not take in
 * windows: they are sorted or merged whole, as runs of events. */
static void settle_packed(tm_sorter *sorter) {
  for (size_t i = 0; i < sorter->runs.len; i++) {
    tm_event_run *run = sorter->runs.data[i];
    if (!run->packed)
      continue;
    run_seal(run);
    if (!packed_windows_fit(run))
      run_unpack(run);
  }
}

void sorter_merge(tm_sorter *sorter, tm_sorter_emit emit, void *ctx) {
  size_t k = sorter->runs.len;
  settle_packed(sorter);
  sort_runs(sorter);
  /* A stream per run, or per window of a run cut in windows: stream
   * indexes follow (run, window), and break the merge's ties. */
  size_t *windows_left = g_new0(size_t, k ? k : 1);
  window_plan *plans = g_new0(window_plan, k ? k : 1);
  size_t n_streams = 0;
  sorter->windows = 0;
  for (size_t i = 0; i < k; i++) {
    tm_event_run *run = sorter->runs.data[i];
    if (run->packed)
      windows_left[i] = run->n_blocks; /* settle_packed: it fits */
    else if (stream_kind_of(run) == STREAM_TRACKS && run_windows(run, &plans[i]))
      windows_left[i] = plans[i].windows;
    n_streams += MAX(windows_left[i], (size_t)1);
    sorter->windows += windows_left[i];
  }
  if (n_streams >= UINT32_MAX)
    g_error("tracemerge: more than %u streams to merge", UINT32_MAX - 1);
  run_stream *streams = g_new(run_stream, n_streams ? n_streams : 1);
  merge_head *heap = g_new(merge_head, n_streams ? n_streams : 1);
  size_t heap_len = 0;
  for (size_t i = 0, at = 0; i < k; i++) {
    tm_event_run *run = sorter->runs.data[i];
    const window_plan *plan = &plans[i];
    for (size_t w = 0, first = 0; w < windows_left[i]; w++, at++) {
      if (run->packed) {
        tm_run_block *block = &run->blocks[w];
        streams[at] = (run_stream){.kind = STREAM_WINDOW, .run = run, .first = first,
                                   .n = block->n, .window_min = block->min_ts,
                                   .windows_left = &windows_left[i], .block = block};
        first += block->n;
      } else {
        first = w << WINDOW_SHIFT;
        streams[at] = (run_stream){.kind = STREAM_WINDOW, .run = run, .first = first,
                                   .n = MIN(run->len - first, WINDOW_EVENTS),
                                   .window_min = plan->min[w],
                                   .window_count = plan->count + w * plan->tracks,
                                   .window_unsorted = plan->unsorted + w * plan->tracks,
                                   .windows_left = &windows_left[i]};
      }
      heap[heap_len++] = (merge_head){streams[at].window_min, (uint32_t)at, (uint32_t)at};
    }
    if (windows_left[i])
      continue;
    run_stream_open(&streams[at], run);
    int64_t ts;
    if (run_stream_head(&streams[at], &ts))
      heap[heap_len++] = (merge_head){ts, (uint32_t)at, (uint32_t)at};
    else
      run_stream_close(&streams[at]);
    at++;
  }

  int sink = 0;
  for (size_t i = heap_len / 2; i-- > 0;)
    head_sift_down(heap, heap_len, i);

  while (heap_len > 1) {
    uint32_t number = heap[0].source;
    run_stream *s = &streams[number];
    /* The best of the others: the top's run may go on until it reaches it. */
    merge_head bound = heap[1];
    if (heap_len > 2 && head_before(heap[2], bound))
      bound = heap[2];
    run_stream_until(s, number, bound, emit, ctx);
    int64_t ts;
    if (run_stream_head(s, &ts)) {
      head_replace_top(heap, heap_len, (merge_head){ts, number, number}, &sink);
    } else {
      run_stream_close(s);
      heap_len--;
      head_replace_top(heap, heap_len, heap[heap_len], &sink);
    }
  }
  if (heap_len == 1) {
    run_stream *s = &streams[heap[0].source];
    if (s->kind == STREAM_SORTED)
      stream_rest(&s->u.cursor, emit, ctx);
    else {
      run_stream_until(s, heap[0].source, UNBOUNDED, emit, ctx);
      run_stream_close(s);
    }
  }

  g_free(heap);
  g_free(streams);
  for (size_t i = 0; i < k; i++)
    window_plan_free(&plans[i]);
  g_free(plans);
  g_free(windows_left);
  sorter_clear(sorter);
}

size_t sorter_merged_windows(const tm_sorter *sorter) { return sorter->windows; }
