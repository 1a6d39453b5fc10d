/*
 * What ftrace lines become in the host; see systrace_emitter.h.
 *
 * Beyond trace_processor: sched_wakeup is read like sched_waking (older
 * kernels have only it); numeric prev_state (trace-cmd report) is spelled
 * as the kernel's letters; comms holding blanks are read whole (kv_scan).
 */
#include "systrace_emitter.h"

#include <glib.h>
#include <string.h>

#include "short_text.h"
#include "systrace_line.h"

#define MAX_CPU 4095u

/* Linux task names are at most 15 bytes; longer ones are re-interned. */
#define NAME_CACHE 24
/* Distinct prev_state texts remembered, and their longest. */
#define STATE_CACHE 8
#define STATE_CACHE_TEXT 8
/* Slots of the name cache, and the longest name it keeps. */
#define NAME_IDS 256
#define NAME_ID_TEXT 47
/* Slots the tables of counter tracks and of open cookies start with. */
#define TRACK_TABLE_MIN 256
/* Tids below this find their entry through a direct table (grown to the
 * largest such tid seen: 512 KiB at most); others through the hash table. */
#define DIRECT_TIDS 65536
/* Thread entries allocated at a time. */
#define ENTRY_BLOCK 256

/* A track by (pid, name, cookie): an open-addressed table with linear
 * probing, at most half full; track 0 marks an empty slot. */
typedef struct track_slot {
  int64_t pid;
  uint64_t cookie;
  tm_str_id name;
  tm_track_ref track;
} track_slot;

typedef struct track_table {
  track_slot *slots; /* mask + 1 of them */
  size_t mask;
  size_t used;
} track_table;

static void track_table_init(track_table *t) {
  t->slots = g_new0(track_slot, TRACK_TABLE_MIN);
  t->mask = TRACK_TABLE_MIN - 1;
  t->used = 0;
}

static inline size_t track_table_home(const track_table *t, int64_t pid, tm_str_id name,
                                      uint64_t cookie) {
  uint64_t h = ((uint64_t)pid * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)name * 0xC2B2AE3D27D4EB4Full) ^
               (cookie * 0xD6E8FEB86659FD93ull);
  return (size_t)(h ^ (h >> 29)) & t->mask;
}

/* The slot holding (pid, name, cookie), or the empty slot where it would
 * go. */
static inline track_slot *track_table_find(track_table *t, int64_t pid, tm_str_id name,
                                           uint64_t cookie) {
  size_t i = track_table_home(t, pid, name, cookie);
  for (;;) {
    track_slot *s = &t->slots[i];
    if (!s->track || (s->pid == pid && s->name == name && s->cookie == cookie))
      return s;
    i = (i + 1) & t->mask;
  }
}

static void track_table_put(track_table *t, int64_t pid, tm_str_id name, uint64_t cookie,
                            tm_track_ref track);

/* Doubles the table, keeping its entries. */
static void track_table_grow(track_table *t) {
  track_slot *old = t->slots;
  size_t n = t->mask + 1;
  t->slots = g_new0(track_slot, 2 * n);
  t->mask = 2 * n - 1;
  t->used = 0;
  for (size_t i = 0; i < n; i++)
    if (old[i].track)
      track_table_put(t, old[i].pid, old[i].name, old[i].cookie, old[i].track);
  g_free(old);
}

/* Adds (pid, name, cookie) -> track; the key is not in the table. */
static void track_table_put(track_table *t, int64_t pid, tm_str_id name, uint64_t cookie,
                            tm_track_ref track) {
  if (2 * (t->used + 1) > t->mask + 1)
    track_table_grow(t);
  track_slot *s = track_table_find(t, pid, name, cookie);
  *s = (track_slot){.pid = pid, .cookie = cookie, .name = name, .track = track};
  t->used++;
}

/* Empties slot `s`, moving later entries of its probe run back so that
 * every entry stays reachable from its home slot. */
static void track_table_remove(track_table *t, track_slot *s) {
  size_t hole = (size_t)(s - t->slots);
  size_t i = hole;
  for (;;) {
    i = (i + 1) & t->mask;
    track_slot *next = &t->slots[i];
    if (!next->track)
      break;
    size_t home = track_table_home(t, next->pid, next->name, next->cookie);
    /* next may fill the hole if its home is not in (hole, i]. */
    if (((i - home) & t->mask) >= ((i - hole) & t->mask)) {
      t->slots[hole] = *next;
      hole = i;
    }
  }
  t->slots[hole] = (track_slot){0};
  t->used--;
}

typedef struct thread_entry {
  int64_t tid;
  bool has_process;
  tm_thread_ref ref;
  tm_track_ref track; /* the thread's main track, 0 until asked for */
  tm_str_id name;
  /* The bytes of `name`, so that the name repeated on every line costs a
   * comparison, not an intern. */
  uint8_t name_len;
  char name_text[NAME_CACHE];
} thread_entry;

struct systrace_emitter {
  const tm_host_services *s;
  tm_host *host;
  tm_machine_ref machine;
  tm_clock_ref clock;
  /* Entries by tid: tids below DIRECT_TIDS through the direct table
   * (the hash lookup, four dependent loads that missed the cache between
   * the model's columns, was 8% of an ftrace import's time, perf, 5M
   * events), others through the hash table (int64 tid -> thread_entry*). */
  GHashTable *threads;
  thread_entry **direct;
  size_t direct_len;
  /* Every entry lives in a block of ENTRY_BLOCK (owned here; neither
   * table owns them): a new thread costs no allocation of its own. */
  GPtrArray *entry_blocks;
  size_t block_used;
  thread_entry *last;      /* the entry found last: lines come in runs */
  tm_track_ref *cpufreq;   /* by cpu, 0 = not interned yet */
  tm_track_ref *cpuidle;
  tm_str_id key_cookie;
  tm_str_id swapper;
  /* prev_state texts seen last ("S", "R+", "D", ...): a switch's state
   * costs a comparison, not a parse and an intern. */
  struct {
    uint8_t len;
    char text[STATE_CACHE_TEXT];
    tm_str_id id;
  } states[STATE_CACHE];
  unsigned states_next;
  /* Slice and counter names by a hash of their bytes: a name repeated on
   * every mark costs a hash and a comparison, not a call into the host
   * (the interning was 5% of an ftrace import's instructions). */
  struct {
    uint8_t len; /* 0: empty slot */
    char text[NAME_ID_TEXT];
    tm_str_id id;
  } name_ids[NAME_IDS];
  /* The tracks of C marks by (pid, name): the host interns a described
   * track once and returns the same ref for the same description, so a
   * counter costs a lookup here, not the host's process lookup and track
   * interning (about 900 instructions a mark). A table of every counter
   * seen, not a cache: the bench's phone writes 826 counters in 14k C
   * marks, and a 256-slot cache missed every other mark. */
  track_table counters;
  /* The S slices open, by (pid, name, cookie), with the track the host
   * gave them: the F that ends one asks no one (the host's set and slot
   * lookups were ~1,250 instructions a mark). An entry is removed when its
   * F comes; a cookie maps to one track, so "open on this cookie" is
   * "open on its track". */
  track_table open_cookies;
  /* The head of the data line read last (systrace_line.h). */
  systrace_line_memo line_memo;
  /* Columns of the current PROCESS DUMP table, -1 if absent. */
  int dump_pid, dump_ppid, dump_tid, dump_name;
  /* Set by systrace_emitter_set_line_offset: failures are logged with the
   * line's offset and text, not only counted. */
  bool log_failures;
  int64_t line_offset;
};

void systrace_emitter_set_line_offset(systrace_emitter *em, int64_t byte_offset) {
  em->log_failures = true;
  em->line_offset = byte_offset;
}

/* Counts a line that could not be read; with a known offset, logs it with
 * the line's offset and text. */
static void count_failure(systrace_emitter *em, const char *text, size_t len) {
  if (em->log_failures) {
    tm_import_log_arg line = {TM_IMPORT_LOG_ARG_INIT, .key = "line",
                              .type = TM_ARG_STRING, .string = text,
                              .string_len = len};
    em->s->import_log(em->host, "systrace_parse_failure", em->line_offset, &line, 1);
    return;
  }
  em->s->stat_add(em->host, "systrace_parse_failure", 1);
}

systrace_emitter *systrace_emitter_new(const tm_host_services *services,
                                       tm_host *host, tm_machine_ref machine,
                                       tm_clock_ref clock) {
  systrace_emitter *em = g_new0(systrace_emitter, 1);
  em->s = services;
  em->host = host;
  em->machine = machine;
  em->clock = clock;
  em->threads = g_hash_table_new(g_int64_hash, g_int64_equal);
  em->entry_blocks = g_ptr_array_new_with_free_func(g_free);
  em->block_used = ENTRY_BLOCK;
  track_table_init(&em->counters);
  track_table_init(&em->open_cookies);
  em->cpufreq = g_new0(tm_track_ref, MAX_CPU + 1);
  em->cpuidle = g_new0(tm_track_ref, MAX_CPU + 1);
  em->key_cookie = services->intern_string(host, "cookie", 6);
  em->swapper = services->intern_string(host, "swapper", 7);
  em->dump_pid = em->dump_ppid = em->dump_tid = em->dump_name = -1;
  return em;
}

void systrace_emitter_free(systrace_emitter *em) {
  if (!em)
    return;
  g_hash_table_destroy(em->threads);
  g_free(em->direct);
  g_ptr_array_free(em->entry_blocks, TRUE);
  g_free(em->counters.slots);
  g_free(em->open_cookies.slots);
  g_free(em->cpufreq);
  g_free(em->cpuidle);
  g_free(em);
}

/* --- helpers ------------------------------------------------------------- */

static tm_str_id intern(systrace_emitter *em, systrace_text t) {
  return em->s->intern_string(em->host, t.p, t.len);
}


/* intern(), through the name cache for names that fit it. */
static tm_str_id intern_name(systrace_emitter *em, systrace_text t) {
  if (t.len == 0 || t.len > NAME_ID_TEXT)
    return intern(em, t);
  /* The hash of the first and last (up to) 8 bytes and the length:
   * constant time, whatever the name's length. Loads of a constant size
   * (memcpy of a variable one was a call to it, twice a mark). */
  uint64_t head, tail;
  if (t.len >= 8) {
    memcpy(&head, t.p, 8);
    memcpy(&tail, t.p + t.len - 8, 8);
  } else if (t.len >= 4) {
    uint32_t a, b;
    memcpy(&a, t.p, 4);
    memcpy(&b, t.p + t.len - 4, 4);
    head = a;
    tail = b;
  } else {
    head = (uint64_t)(unsigned char)t.p[0] | (uint64_t)(unsigned char)t.p[t.len / 2] << 8 |
           (uint64_t)(unsigned char)t.p[t.len - 1] << 16;
    tail = 0;
  }
  uint64_t h = (head * 0x9E3779B97F4A7C15ull) ^ (tail * 0xC2B2AE3D27D4EB4Full) ^ t.len;
  /* Two ways a set: names whose hashes meet share it instead of
   * evicting each other on every mark. A new name takes the first way
   * and moves the name there to the second. */
  size_t slot = (size_t)(h >> 56) & (NAME_IDS - 2);
  for (size_t way = slot; way < slot + 2; way++)
    /* A slice name repeated on every B mark is short: compared inline. */
    if (em->name_ids[way].len == t.len &&
        (t.len < NAME_CACHE ? short_bytes_equal(em->name_ids[way].text, t.p, t.len)
                            : memcmp(em->name_ids[way].text, t.p, t.len) == 0))
      return em->name_ids[way].id;
  tm_str_id id = intern(em, t);
  em->name_ids[slot + 1] = em->name_ids[slot];
  em->name_ids[slot].len = (uint8_t)t.len;
  memcpy(em->name_ids[slot].text, t.p, t.len);
  em->name_ids[slot].id = id;
  return id;
}

static bool is_unknown_task(systrace_text t) {
  return SYSTRACE_TEXT_IS(t, "<...>") || t.len == 0;
}

/* A new entry for `tid`, kept in the direct table if the tid is small
 * enough, else in the hash table. */
static thread_entry *entry_add(systrace_emitter *em, int64_t tid) {
  if (em->block_used == ENTRY_BLOCK) {
    g_ptr_array_add(em->entry_blocks, g_new0(thread_entry, ENTRY_BLOCK));
    em->block_used = 0;
  }
  thread_entry *block = g_ptr_array_index(em->entry_blocks, em->entry_blocks->len - 1);
  thread_entry *e = &block[em->block_used++];
  e->tid = tid;
  if (tid < 0 || tid >= DIRECT_TIDS) {
    g_hash_table_insert(em->threads, &e->tid, e);
    return e;
  }
  size_t slot = (size_t)tid;
  if (slot >= em->direct_len) {
    size_t len = em->direct_len ? em->direct_len : 1024;
    while (len <= slot)
      len *= 2;
    em->direct = g_renew(thread_entry *, em->direct, len);
    memset(em->direct + em->direct_len, 0, (len - em->direct_len) * sizeof *em->direct);
    em->direct_len = len;
  }
  em->direct[slot] = e;
  return e;
}

/* The entry of `tid`, NULL if it has none yet. */
static inline thread_entry *entry_lookup(systrace_emitter *em, int64_t tid) {
  if (tid >= 0 && (uint64_t)tid < em->direct_len)
    return em->direct[tid]; /* every entry of a tid this small is in it */
  if (tid >= 0 && tid < DIRECT_TIDS)
    return NULL; /* beyond the direct table: not seen yet */
  return g_hash_table_lookup(em->threads, &tid);
}

/* entry_for() below, for any call. */
static __attribute__((noinline)) thread_entry *entry_for_any(systrace_emitter *em, int64_t pid,
                                                             int64_t tid, systrace_text name);

/* The thread `tid`, attached to process `pid` if pid >= 0, named `name`
 * unless it is unknown ("<...>" or empty). tid 0 is the idle thread
 * "swapper". A call that changes nothing on the entry of the last thread
 * (lines come in runs of one thread) or of a tid in the direct table is
 * answered here, inline, without a call: the thread is known, has its
 * process if one is given, and the name is unknown or the one it has. */
static inline thread_entry *entry_for(systrace_emitter *em, int64_t pid, int64_t tid,
                                      systrace_text name) {
  thread_entry *e = em->last;
  if (!e || e->tid != tid)
    e = tid > 0 && (uint64_t)tid < em->direct_len ? em->direct[tid] : NULL;
  if (e && tid != 0 && e->ref && (pid < 0 || e->has_process) &&
      (name.len == 0 ||
       (e->name && name.len == e->name_len && short_bytes_equal(e->name_text, name.p, name.len)) ||
       (name.len == 5 && short_bytes_equal(name.p, "<...>", 5)))) {
    em->last = e; /* a known name: not "<...>", which is never kept */
    return e;
  }
  return entry_for_any(em, pid, tid, name);
}

static thread_entry *entry_for_any(systrace_emitter *em, int64_t pid, int64_t tid,
                                   systrace_text name) {
  thread_entry *e = em->last && em->last->tid == tid ? em->last : entry_lookup(em, tid);
  if (!e)
    e = entry_add(em, tid);
  em->last = e;
  if (!e->ref || (pid >= 0 && !e->has_process)) {
    e->ref = em->s->thread(em->host, em->machine, pid, tid);
    e->track = 0;
    e->has_process = pid >= 0;
    e->name = 0; /* name it again, now maybe its process too */
  }
  if (tid == 0 || is_unknown_task(name)) {
    if (tid == 0 && e->name != em->swapper) {
      e->name = em->swapper;
      em->s->thread_set_name(em->host, e->ref, em->swapper);
    }
    return e;
  }
  if (e->name && name.len == e->name_len && short_bytes_equal(e->name_text, name.p, name.len))
    return e;
  tm_str_id name_id = intern(em, name);
  if (name.len < NAME_CACHE) {
    memcpy(e->name_text, name.p, name.len);
    e->name_len = (uint8_t)name.len;
  } else {
    e->name_len = 0;
  }
  /* Only the thread is named: ftrace text carries no process names, and
   * trace_processor leaves a process unnamed unless a PROCESS DUMP names
   * it, even when its main thread's task name is known. */
  if (name_id != e->name) {
    e->name = name_id;
    em->s->thread_set_name(em->host, e->ref, name_id);
  }
  return e;
}

static tm_thread_ref thread_for(systrace_emitter *em, int64_t pid, int64_t tid,
                                systrace_text name) {
  return entry_for(em, pid, tid, name)->ref;
}

/* The main track of thread `tid` (as thread_for), asked of the host once. */
static inline __attribute__((always_inline)) tm_track_ref
thread_track_for(systrace_emitter *em, int64_t pid, int64_t tid,
                                     systrace_text name) {
  thread_entry *e = entry_for(em, pid, tid, name);
  if (!e->track)
    e->track = em->s->track_thread(em->host, e->ref);
  return e->track;
}

/* Splits on '|' into at most `max` fields; the last takes the rest. */
static size_t split_bars(systrace_text t, systrace_text *fields, size_t max) {
  /* memchr, not a byte loop: the split was 8% of an ftrace import. */
  size_t n = 0;
  const char *p = t.p, *end = t.p + t.len;
  while (n + 1 < max) {
    const char *bar = memchr(p, '|', (size_t)(end - p));
    if (!bar)
      break;
    fields[n++] = (systrace_text){p, (size_t)(bar - p)};
    p = bar + 1;
  }
  if (n < max)
    fields[n++] = (systrace_text){p, (size_t)(end - p)};
  return n;
}

/* --- tracing_mark_write --------------------------------------------------- */

static tm_track_ref process_track(systrace_emitter *em, const char *type,
                                  int is_counter, int64_t pid, tm_str_id name,
                                  uint64_t key) {
  tm_track_desc desc = {
      TM_TRACK_DESC_INIT,
      .type = type,
      .is_counter = is_counter ? 1u : 0u,
      .name = name,
      .process = em->s->process(em->host, em->machine, pid),
      .key = key,
  };
  return em->s->track_intern(em->host, &desc);
}

/* The "atrace_counter" track of process `pid` named `name`, as
 * process_track() makes it, asked of the host once per counter. */
static tm_track_ref counter_track(systrace_emitter *em, int64_t pid, tm_str_id name) {
  track_slot *s = track_table_find(&em->counters, pid, name, 0);
  if (s->track)
    return s->track;
  tm_track_ref track = process_track(em, "atrace_counter", 1, pid, name, 0);
  if (track) /* 0: the host refused it; asked again next time */
    track_table_put(&em->counters, pid, name, 0, track);
  return track;
}

/* The slot of `cookie` in the async set (type, process, name), packed by
 * the host as trace_processor packs async tracks; on a host without
 * track_async, one track per cookie. */
static tm_track_ref async_track(systrace_emitter *em, const char *type,
                                int64_t pid, tm_str_id name, uint64_t cookie,
                                uint32_t flags) {
  if (!TM_HOST_HAS(em->s, track_async) || !em->s->track_async)
    return process_track(em, type, 0, pid, name, cookie);
  tm_track_desc desc = {
      TM_TRACK_DESC_INIT,
      .type = type,
      .name = name,
      .process = em->s->process(em->host, em->machine, pid),
  };
  return em->s->track_async(em->host, &desc, cookie, flags);
}

typedef enum mark_fast {
  MARK_OTHER, /* not read here: the general path reads it */
  MARK_BEGIN,
  MARK_END,
} mark_fast;

/* "B|pid|name", "B|pid" and "E", "E|", "E|pid", "E|pid|..." with a pid
 * of 1..18 plain digits, read in one pass over the pid without
 * splitting the mark (two memchr calls and the split were a fifth of a
 * print's instructions). The result is what the general path gives the
 * same text: pid -1 for an E without one, `name` empty for a B without
 * one. Anything else (a sign, a long or odd pid) is MARK_OTHER. */
static mark_fast begin_end_fast(systrace_text payload, int64_t *pid, systrace_text *name) {
  const char *p = payload.p, *end = payload.p + payload.len;
  bool begin = p[0] == 'B';
  if (payload.len == 1) {
    if (begin)
      return MARK_OTHER; /* "B" alone: malformed, the general path counts it */
    *pid = -1;
    return MARK_END;
  }
  /* payload.p[1] is '|' (checked by the caller) */
  const char *digits = p + 2;
  int64_t v;
  const char *q = short_digits_read(digits, end, &v);
  if (q < end && *q != '|')
    return MARK_OTHER;
  if (q == digits) {
    if (begin)
      return MARK_OTHER; /* no pid: malformed */
    *pid = -1;
    return MARK_END;
  }
  *pid = v;
  if (begin)
    *name = q < end ? (systrace_text){q + 1, (size_t)(end - q - 1)} : (systrace_text){q, 0};
  return begin ? MARK_BEGIN : MARK_END;
}

/* The mark `payload` that thread `tid` (task name `task`, empty if
 * unknown) wrote at `ts_ns`. */
static __attribute__((noinline)) bool mark_other(systrace_emitter *em, int64_t ts_ns,
                                                  int64_t tid, systrace_text task,
                                                  systrace_text payload);

static inline __attribute__((always_inline)) bool mark_write(systrace_emitter *em,
                                                             int64_t ts_ns, int64_t tid,
                                                             systrace_text task,
                                                             systrace_text payload) {
  while (payload.len && (payload.p[payload.len - 1] == '\0' ||
                         payload.p[payload.len - 1] == '\n'))
    payload.len--;
  /* A literal "\n" some writers leave at the end. */
  if (payload.len >= 2 && payload.p[payload.len - 2] == '\\' &&
      payload.p[payload.len - 1] == 'n')
    payload.len -= 2;
  static const char clock_sync[] = "trace_event_clock_sync:";
  if (payload.len >= sizeof clock_sync - 1 && payload.p[0] == 't' &&
      memcmp(payload.p, clock_sync, sizeof clock_sync - 1) == 0)
    return true;
  if (payload.len == 0 || (payload.len > 1 && payload.p[1] != '|'))
    return false;
  /* B and E marks here; the rest in mark_other, whose split fields and
   * stack frame they do not need (a third of a print's own cost). */
  if (payload.p[0] == 'B' || payload.p[0] == 'E') {
    int64_t pid = -1;
    systrace_text name;
    tm_slice_fields sf = {TM_SLICE_FIELDS_INIT, .clock = em->clock, .ts = ts_ns};
    switch (begin_end_fast(payload, &pid, &name)) {
    case MARK_BEGIN:
      sf.track = thread_track_for(em, pid, tid, task);
      sf.name = name.len ? intern_name(em, name)
                         : em->s->intern_string(em->host, "[empty slice name]", 18);
      em->s->slice_begin(em->host, &sf);
      return true;
    case MARK_END:
      sf.track = thread_track_for(em, pid, tid, task);
      em->s->slice_end(em->host, &sf);
      return true;
    default:
      break; /* the general path decides */
    }
  }
  return mark_other(em, ts_ns, tid, task, payload);
}

/* mark_write() for what its fast path does not read: `payload` stripped
 * and starting "X|" or one byte long. */
static bool mark_other(systrace_emitter *em, int64_t ts_ns, int64_t tid, systrace_text task,
                       systrace_text payload) {
  systrace_text f[5];
  size_t n;
  int64_t pid = -1;
  tm_slice_fields sf = {TM_SLICE_FIELDS_INIT, .clock = em->clock,
                        .ts = ts_ns};
  switch (payload.p[0]) {
  case 'B':
  case 'I':
    n = split_bars(payload, f, 3);
    if (n < 2 || !systrace_parse_int64(f[1], &pid))
      return false;
    sf.track = thread_track_for(em, pid, tid, task);
    sf.name = n == 3 && f[2].len ? intern_name(em, f[2])
                                 : em->s->intern_string(em->host, "[empty slice name]", 18);
    if (payload.p[0] == 'B')
      em->s->slice_begin(em->host, &sf);
    else
      em->s->slice_complete(em->host, &sf, 0);
    return true;
  case 'E':
    n = split_bars(payload, f, 3);
    if (n >= 2 && f[1].len && !systrace_parse_int64(f[1], &pid))
      return false;
    sf.track = thread_track_for(em, pid, tid, task);
    em->s->slice_end(em->host, &sf);
    return true;
  case 'C': {
    n = split_bars(payload, f, 5);
    int64_t value = 0;
    if (n < 4 || !systrace_parse_int64(f[1], &pid) ||
        !systrace_parse_int64(f[3], &value))
      return false;
    thread_for(em, pid, tid, task);
    tm_track_ref track = counter_track(em, pid, intern_name(em, f[2]));
    em->s->counter(em->host, track, em->clock, ts_ns, (double)value, TM_NO_ARGS);
    return true;
  }
  case 'S':
  case 'F': {
    n = split_bars(payload, f, 4);
    int64_t cookie = 0;
    if (n < 4 || !systrace_parse_int64(f[1], &pid) ||
        !systrace_parse_int64(f[3], &cookie))
      return false;
    thread_for(em, pid, tid, task);
    /* The set is (process, name); its cookies share tracks when they do
     * not overlap. Repeated begins of one cookie saturate (only the first
     * counts), as Android's legacy async slices do. */
    sf.name = intern_name(em, f[2]);
    track_slot *open = track_table_find(&em->open_cookies, pid, sf.name, (uint64_t)cookie);
    if (payload.p[0] == 'S') {
      if (open->track)
        return true; /* repeated begins of one cookie: the first counts */
      sf.track = async_track(em, "atrace_async_slice", pid, sf.name, (uint64_t)cookie,
                             TM_ASYNC_UNNESTABLE);
      em->s->args_add(em->host, em->key_cookie,
                     (tm_arg_value){.type = TM_ARG_INT, .u.int_value = cookie});
      sf.args = em->s->args_commit(em->host);
      if (sf.track)
        track_table_put(&em->open_cookies, pid, sf.name, (uint64_t)cookie, sf.track);
      em->s->slice_begin(em->host, &sf);
    } else {
      if (open->track) {
        sf.track = open->track;
        track_table_remove(&em->open_cookies, open);
      } else {
        sf.track = async_track(em, "atrace_async_slice", pid, sf.name, (uint64_t)cookie,
                               TM_ASYNC_UNNESTABLE);
      }
      sf.name = 0;
      em->s->slice_end(em->host, &sf);
    }
    return true;
  }
  case 'N':
    n = split_bars(payload, f, 4);
    if (n < 4 || !systrace_parse_int64(f[1], &pid))
      return false;
    thread_for(em, pid, tid, task);
    sf.track = process_track(em, "atrace_async_slice_for_track", 0, pid,
                             intern(em, f[2]), 0);
    sf.name = intern(em, f[3]);
    em->s->slice_complete(em->host, &sf, 0);
    return true;
  case 'G':
  case 'H': {
    /* G|pid|track|name|cookie; H|pid|track|cookie or H|pid|track|name|cookie */
    n = split_bars(payload, f, 5);
    int64_t cookie = 0;
    bool begin = payload.p[0] == 'G';
    if ((begin && n != 5) || (!begin && n < 4) ||
        !systrace_parse_int64(f[1], &pid) ||
        !systrace_parse_int64(f[n - 1], &cookie))
      return false;
    thread_for(em, pid, tid, task);
    sf.track = async_track(em, "atrace_async_slice_for_track", pid,
                           intern(em, f[2]), (uint64_t)cookie, 0);
    if (begin) {
      sf.name = intern(em, f[3]);
      em->s->slice_begin(em->host, &sf);
    } else {
      em->s->slice_end(em->host, &sf);
    }
    return true;
  }
  default:
    return false;
  }
}

/* --- kernel events -------------------------------------------------------- */

/* The value of `key=` among the payload's space-separated tokens. */
static bool kv_find(systrace_text payload, const char *key, systrace_text *value) {
  size_t n = strlen(key);
  size_t i = 0;
  while (i < payload.len) {
    while (i < payload.len && payload.p[i] == ' ')
      i++;
    size_t start = i;
    while (i < payload.len && payload.p[i] != ' ')
      i++;
    if (i - start > n && payload.p[start + n] == '=' &&
        memcmp(payload.p + start, key, n) == 0) {
      *value = (systrace_text){payload.p + start + n + 1, i - start - n - 1};
      return true;
    }
  }
  return false;
}

static bool kv_int(systrace_text payload, const char *key, int64_t *out) {
  systrace_text v;
  return kv_find(payload, key, &v) && systrace_parse_int64(v, out);
}

/* The end of a task name's value that starts at `value` and whose first
 * blank is at `value_end`: a comm may hold blanks ("Signal Catcher",
 * "Jit thread pool"), and the kernel prints it as is, so the value runs on
 * over the tokens without '=' up to the blank before the next token with
 * one (the next "key=", or sched_switch's "==>"). A comm that itself holds
 * " x=y" is cut there: the text cannot tell it from a key. */
static const char *comm_end(const char *value_end, const char *end) {
  for (;;) {
    const char *token = value_end;
    while (token < end && *token == ' ')
      token++;
    if (token == end)
      return value_end;
    /* The token holds '=' if one comes before its end. */
    const char *stop = systrace_find_either(token, end, ' ', '=');
    if (stop < end && *stop == '=')
      return value_end;
    value_end = stop;
  }
}

/* A key kv_scan looks for, with its length. */
typedef struct kv_key {
  const char *name;
  size_t len;
} kv_key;
#define KV_KEY(literal) {literal, sizeof(literal) - 1}

/* kv_find for several keys in one pass over the payload (a sched_switch
 * names six): values[k] is the value of the first token "keys[k]=...",
 * as kv_find would find it, except that the value of a key in the mask
 * `comm_keys` (bit k: keys[k]) is a task name and runs over blanks as
 * comm_end says. trace_processor splits every value at its first blank,
 * so it names "Signal Catcher" "Signal" from a switch; this reader keeps
 * the whole name. Returns the mask of the keys found (bit k: keys[k]); at
 * most 8 keys. */
static unsigned kv_scan(systrace_text payload, const kv_key *keys, size_t n_keys,
                        unsigned comm_keys, systrace_text *values) {
  /* Token by token from the front: a token's key ends at its first '=',
   * its value at the blank after that; a token without '=' is passed
   * over. The scans take eight bytes at a time (this was 15% of a
   * systrace import as memchr calls and a walk back to each key). */
  unsigned found = 0, all = (1u << n_keys) - 1;
  const char *p = payload.p, *end = payload.p + payload.len;
  while (p < end && found != all) {
    const char *eq = systrace_find_either(p, end, ' ', '=');
    if (eq == end)
      break;
    if (*eq == ' ') {
      p = eq + 1;
      continue;
    }
    const char *key = p;
    const char *value_end = systrace_find_either(eq + 1, end, ' ', ' ');
    size_t key_len = (size_t)(eq - key);
    for (size_t k = 0; key_len && k < n_keys; k++) {
      /* Length, first and last byte first: the keys of one event differ
       * in one of them, so memcmp runs only on the key that matches. The
       * token may hold a NUL byte: lengths, not strncmp (fuzz_systrace). */
      if (found & (1u << k) || keys[k].len != key_len || keys[k].name[0] != key[0] ||
          keys[k].name[key_len - 1] != key[key_len - 1] ||
          memcmp(keys[k].name, key, key_len) != 0)
        continue;
      if (comm_keys & (1u << k))
        value_end = comm_end(value_end, end);
      values[k] = (systrace_text){eq + 1, (size_t)(value_end - eq - 1)};
      found |= 1u << k;
      break;
    }
    p = value_end;
  }
  return found;
}

/* --- the kernel's own layouts ------------------------------------------- */

/* The kernel prints sched_switch and sched_waking in one layout, and a
 * payload in exactly that layout is read field after field below instead
 * of by kv_scan (whose key search was 15% of a systrace import). Each
 * reader accepts only text on which kv_scan finds every one of its keys
 * and the same values; anything else (other keys, extra blanks or
 * fields, a '=' in a value or comm) returns false and goes to kv_scan. */

/* Takes `lit` (at most 24 bytes) at *p. Compared inline: memcmp was a
 * call for each of a switch's eight literals. */
static inline __attribute__((always_inline)) bool take(const char **p, const char *end,
                                                       const char *lit, size_t n) {
  if ((size_t)(end - *p) < n || !short_bytes_equal(*p, lit, n))
    return false;
  *p += n;
  return true;
}
#define TAKE(p, end, lit) take((p), (end), (lit), sizeof(lit) - 1)

/* A value without blanks or '=' from *p to the next blank or the end. */
static inline __attribute__((always_inline)) bool take_value(const char **p, const char *end, systrace_text *value) {
  const char *stop = systrace_find_either(*p, end, ' ', '=');
  if (stop < end && *stop == '=')
    return false;
  *value = (systrace_text){*p, (size_t)(stop - *p)};
  *p = stop;
  return true;
}

/* take_value for a value of 1 to 18 plain digits, and its number: what
 * systrace_parse_int64 reads from the text take_value takes. Any other
 * value (a sign, no digit, more digits, a byte after them that is not a
 * blank) fails, and the caller's kv_scan path reads it. */
static inline __attribute__((always_inline)) bool take_uint(const char **p, const char *end, int64_t *value) {
  int64_t v;
  const char *q = short_digits_read(*p, end, &v);
  if (q == *p || (q < end && *q != ' '))
    return false;
  *value = v;
  *p = q;
  return true;
}

/* A comm from *p up to " `next_key`=": as comm_end reads it when the comm
 * holds no '=', without its trailing blanks. */
static inline bool take_comm(const char **p, const char *end, const char *next_key, size_t n,
                      systrace_text *comm) {
  const char *eq = systrace_find_either(*p, end, '=', '=');
  if (eq == end || (size_t)(eq - *p) < n + 1 || eq[-(ptrdiff_t)n - 1] != ' ' ||
      !short_bytes_equal(eq - n, next_key, n))
    return false;
  const char *comm_end = eq - n - 1;
  while (comm_end > *p && comm_end[-1] == ' ')
    comm_end--;
  *comm = (systrace_text){*p, (size_t)(comm_end - *p)};
  *p = eq + 1;
  return true;
}
#define TAKE_COMM(p, end, key, comm) take_comm((p), (end), (key), sizeof(key) - 1, (comm))

/* The order of sched_switch's and sched_waking's keys (and values). */
enum { PREV_PID, NEXT_PID, NEXT_PRIO, PREV_STATE, PREV_COMM, NEXT_COMM, SWITCH_KEYS };
enum { WAKING_PID, WAKING_TARGET_CPU, WAKING_COMM, WAKING_KEYS };

/* "prev_comm=C prev_pid=N prev_prio=N prev_state=S ==> next_comm=C
 * next_pid=N next_prio=N": the texts in the order of sched_switch's keys,
 * the numbers (plain digits here) in n[PREV_PID], n[NEXT_PID] and
 * n[NEXT_PRIO], read as they are crossed. */
static bool switch_in_kernel_layout(systrace_text payload, systrace_text *v, int64_t *n) {
  const char *p = payload.p, *end = payload.p + payload.len;
  systrace_text prev_prio;
  return TAKE(&p, end, "prev_comm=") && TAKE_COMM(&p, end, "prev_pid", &v[PREV_COMM]) &&
         take_uint(&p, end, &n[PREV_PID]) && TAKE(&p, end, " prev_prio=") &&
         take_value(&p, end, &prev_prio) && TAKE(&p, end, " prev_state=") &&
         take_value(&p, end, &v[PREV_STATE]) && TAKE(&p, end, " ==> next_comm=") &&
         TAKE_COMM(&p, end, "next_pid", &v[NEXT_COMM]) &&
         take_uint(&p, end, &n[NEXT_PID]) && TAKE(&p, end, " next_prio=") &&
         take_uint(&p, end, &n[NEXT_PRIO]) && p == end;
}

/* "comm=C pid=N prio=N target_cpu=N": the comm in v[WAKING_COMM], the
 * numbers (plain digits here) in n[WAKING_PID] and n[WAKING_TARGET_CPU]. */
static bool waking_in_kernel_layout(systrace_text payload, systrace_text *v, int64_t *n) {
  const char *p = payload.p, *end = payload.p + payload.len;
  systrace_text prio;
  return TAKE(&p, end, "comm=") && TAKE_COMM(&p, end, "pid", &v[WAKING_COMM]) &&
         take_uint(&p, end, &n[WAKING_PID]) && TAKE(&p, end, " prio=") &&
         take_value(&p, end, &prio) && TAKE(&p, end, " target_cpu=") &&
         take_uint(&p, end, &n[WAKING_TARGET_CPU]) && p == end;
}

static bool kv_value_int(unsigned found, unsigned k, const systrace_text *values,
                         int64_t *out) {
  return (found & (1u << k)) && systrace_parse_int64(values[k], out);
}

/* Older kernels print prev_state as the task state bits (Linux 4.x
 * values); newer ones as letters, kept as written. */
static tm_str_id prev_state_id_uncached(systrace_emitter *em, systrace_text state) {
  int64_t bits;
  if (!systrace_parse_int64(state, &bits))
    return intern(em, state);
  static const char letters[] = "SDTtXZxKWPNn";
  char text[24];
  size_t n = 0;
  for (size_t b = 0; b < sizeof letters - 1; b++)
    if (bits & ((int64_t)1 << b))
      text[n++] = letters[b];
  if (n == 0)
    text[n++] = 'R';
  if (bits & 4096) /* TASK_STATE_MAX: preempted while runnable */
    text[n++] = '+';
  return em->s->intern_string(em->host, text, n);
}

static tm_str_id prev_state_id(systrace_emitter *em, systrace_text state) {
  if (state.len == 0 || state.len > STATE_CACHE_TEXT)
    return prev_state_id_uncached(em, state);
  for (unsigned i = 0; i < STATE_CACHE; i++)
    if (em->states[i].len == state.len &&
        short_bytes_equal(em->states[i].text, state.p, state.len))
      return em->states[i].id;
  tm_str_id id = prev_state_id_uncached(em, state);
  unsigned slot = em->states_next++ % STATE_CACHE;
  em->states[slot].len = (uint8_t)state.len;
  memcpy(em->states[slot].text, state.p, state.len);
  em->states[slot].id = id;
  return id;
}

static bool sched_switch(systrace_emitter *em, const systrace_line *l) {
  static const kv_key keys[SWITCH_KEYS] = {KV_KEY("prev_pid"),   KV_KEY("next_pid"),
                                           KV_KEY("next_prio"),  KV_KEY("prev_state"),
                                           KV_KEY("prev_comm"),  KV_KEY("next_comm")};
  systrace_text v[SWITCH_KEYS] = {{0}};
  int64_t n[SWITCH_KEYS];
  if (!switch_in_kernel_layout(l->payload, v, n)) {
    memset(v, 0, sizeof v);
    unsigned found =
        kv_scan(l->payload, keys, SWITCH_KEYS, 1u << PREV_COMM | 1u << NEXT_COMM, v);
    if (!kv_value_int(found, PREV_PID, v, &n[PREV_PID]) ||
        !kv_value_int(found, NEXT_PID, v, &n[NEXT_PID]) ||
        !kv_value_int(found, NEXT_PRIO, v, &n[NEXT_PRIO]) || !(found & (1u << PREV_STATE)))
      return false;
  }
  if (l->cpu > MAX_CPU)
    return false;
  int64_t prev_pid = n[PREV_PID], next_pid = n[NEXT_PID], next_prio = n[NEXT_PRIO];
  systrace_text prev_comm = v[PREV_COMM], next_comm = v[NEXT_COMM], state = v[PREV_STATE];
  tm_thread_ref prev = thread_for(em, -1, prev_pid, prev_comm);
  tm_thread_ref next = thread_for(em, -1, next_pid, next_comm);
  em->s->sched_switch(em->host, em->clock, l->ts_ns, em->machine, l->cpu, prev,
                     prev_state_id(em, state), next, (int32_t)next_prio);
  return true;
}

static bool sched_waking(systrace_emitter *em, const systrace_line *l) {
  static const kv_key keys[WAKING_KEYS] = {KV_KEY("pid"), KV_KEY("target_cpu"),
                                           KV_KEY("comm")};
  systrace_text v[WAKING_KEYS] = {{0}};
  int64_t n[WAKING_KEYS];
  if (!waking_in_kernel_layout(l->payload, v, n)) {
    memset(v, 0, sizeof v);
    unsigned found = kv_scan(l->payload, keys, WAKING_KEYS, 1u << WAKING_COMM, v);
    if (!kv_value_int(found, WAKING_PID, v, &n[WAKING_PID]) ||
        !kv_value_int(found, WAKING_TARGET_CPU, v, &n[WAKING_TARGET_CPU]))
      return false;
  }
  int64_t pid = n[WAKING_PID], target_cpu = n[WAKING_TARGET_CPU];
  if (target_cpu < 0 || target_cpu > MAX_CPU)
    return false;
  systrace_text comm = v[WAKING_COMM];
  tm_thread_ref waker = thread_for(em, l->tgid, l->pid, l->task);
  tm_thread_ref woken = thread_for(em, -1, pid, comm);
  em->s->sched_waking(em->host, em->clock, l->ts_ns, em->machine,
                     (uint32_t)target_cpu, woken, waker);
  return true;
}

/* "state=N cpu_id=N" (plain digits): what cpu_frequency and cpu_idle
 * print, read without kv_scan (a third of these lines' cost). */
static bool cpu_in_kernel_layout(systrace_text payload, int64_t *state, int64_t *cpu) {
  const char *p = payload.p, *end = payload.p + payload.len;
  if (!TAKE(&p, end, "state="))
    return false;
  /* cpu_idle's exit from idle is state=-1 (4294967295 on some kernels). */
  bool negative = p < end && *p == '-';
  p += negative;
  if (!take_uint(&p, end, state) || !TAKE(&p, end, " cpu_id=") || !take_uint(&p, end, cpu) ||
      p != end)
    return false;
  if (negative)
    *state = -*state;
  return true;
}

static bool cpu_counter(systrace_emitter *em, const systrace_line *l,
                        bool frequency) {
  static const kv_key keys[] = {KV_KEY("state"), KV_KEY("cpu_id")};
  int64_t state, cpu;
  if (!cpu_in_kernel_layout(l->payload, &state, &cpu)) {
    systrace_text v[2];
    unsigned found = kv_scan(l->payload, keys, 2, 0, v);
    if (!kv_value_int(found, 0, v, &state) || !kv_value_int(found, 1, v, &cpu))
      return false;
  }
  if (cpu < 0 || cpu > MAX_CPU)
    return false;
  tm_track_ref *cache = frequency ? em->cpufreq : em->cpuidle;
  if (!cache[cpu]) {
    const char *name = frequency ? "cpufreq" : "cpuidle";
    tm_track_desc desc = {
        TM_TRACK_DESC_INIT,
        .type = frequency ? "cpu_frequency" : "cpu_idle",
        .is_counter = 1,
        .name = em->s->intern_string(em->host, name, strlen(name)),
        .machine = em->machine,
        .has_cpu = 1,
        .cpu = (uint32_t)cpu,
    };
    cache[cpu] = em->s->track_intern(em->host, &desc);
  }
  em->s->counter(em->host, cache[cpu], em->clock, l->ts_ns, (double)state,
                TM_NO_ARGS);
  return true;
}

/* The first token without '=' (the clock's name in clock_* events). */
static bool bare_token(systrace_text payload, systrace_text *out) {
  size_t i = 0;
  while (i < payload.len) {
    while (i < payload.len && payload.p[i] == ' ')
      i++;
    size_t start = i;
    bool has_equal = false;
    while (i < payload.len && payload.p[i] != ' ')
      has_equal |= payload.p[i++] == '=';
    if (i > start && !has_equal) {
      *out = (systrace_text){payload.p + start, i - start};
      return true;
    }
  }
  return false;
}

/* clock_set_rate -> clock_frequency, clock_enable/disable -> clock_state:
 * one counter track per clock name. */
static bool clock_counter(systrace_emitter *em, const systrace_line *l,
                          const char *type) {
  systrace_text name;
  int64_t state;
  if (!bare_token(l->payload, &name) || !kv_int(l->payload, "state", &state))
    return false;
  tm_track_desc desc = {TM_TRACK_DESC_INIT, .type = type, .is_counter = 1,
                        .name = intern(em, name)};
  tm_track_ref track = em->s->track_intern(em->host, &desc);
  em->s->counter(em->host, track, em->clock, l->ts_ns, (double)state, TM_NO_ARGS);
  return true;
}

/* "print" events carry the writer's address first: "0x...s: text". */
static systrace_text strip_print_ip(systrace_text p) {
  if (p.len < 3 || p.p[0] != '0' || p.p[1] != 'x')
    return p;
  for (size_t i = 2; i + 1 < p.len; i++) {
    if (p.p[i] == ':' && p.p[i + 1] == ' ') {
      size_t j = i + 1;
      while (j < p.len && p.p[j] == ' ')
        j++;
      return (systrace_text){p.p + j, p.len - j};
    }
    if (!g_ascii_isxdigit(p.p[i]) && p.p[i] != 's')
      return p;
  }
  return p;
}

systrace_line_result systrace_emitter_data_line(systrace_emitter *em,
                                                const char *text, size_t len) {
  systrace_line l;
  if (!systrace_line_parse_memo(text, len, &l, &em->line_memo)) {
    count_failure(em, text, len);
    return SYSTRACE_LINE_NO_MATCH;
  }
  thread_for(em, l.tgid == SYSTRACE_NO_TGID ? -1 : l.tgid, l.pid, l.task);
  bool ok = true;
  /* By the name's length first, then its bytes compared inline (memcmp
   * calls for the 18 bytes of tracing_mark_write were 1% of an import). */
#define EVENT_IS(lit) short_bytes_equal(l.event.p, (lit), sizeof(lit) - 1)
  /* The three kinds of marks share one (inline) mark_write below. */
  bool is_mark = false;
  systrace_text mark = l.payload;
  switch (l.event.len) {
  case 18:
    is_mark = EVENT_IS("tracing_mark_write");
    break;
  case 1:
    is_mark = l.event.p[0] == '0';
    break;
  case 5:
    if (EVENT_IS("print")) {
      is_mark = true;
      mark = strip_print_ip(l.payload);
    }
    break;
  case 12:
    if (EVENT_IS("sched_switch"))
      ok = sched_switch(em, &l);
    else if (EVENT_IS("sched_waking") || EVENT_IS("sched_wakeup"))
      ok = sched_waking(em, &l);
    else if (EVENT_IS("clock_enable"))
      ok = clock_counter(em, &l, "clock_state");
    break;
  case 13:
    if (EVENT_IS("cpu_frequency"))
      ok = cpu_counter(em, &l, true);
    else if (EVENT_IS("clock_disable"))
      ok = clock_counter(em, &l, "clock_state");
    break;
  case 8:
    if (EVENT_IS("cpu_idle"))
      ok = cpu_counter(em, &l, false);
    break;
  case 14:
    if (EVENT_IS("clock_set_rate"))
      ok = clock_counter(em, &l, "clock_frequency");
    break;
  default:
    break;
  }
  if (is_mark)
    ok = mark_write(em, l.ts_ns, l.pid, l.task, mark);
#undef EVENT_IS
  if (ok)
    return SYSTRACE_LINE_READ;
  count_failure(em, text, len);
  return SYSTRACE_LINE_BAD_PAYLOAD;
}

void systrace_emitter_set_clock(systrace_emitter *em, tm_clock_ref clock) {
  em->clock = clock;
}

bool systrace_emitter_print(systrace_emitter *em, int64_t ts_ns, uint32_t cpu,
                            int64_t tid, const char *payload, size_t len) {
  (void)cpu;
  if (mark_write(em, ts_ns, tid, (systrace_text){"", 0}, (systrace_text){payload, len}))
    return true;
  count_failure(em, payload, len);
  return false;
}

/* --- PROCESS DUMP (ps tables in systrace HTML) ---------------------------- */

#define DUMP_MAX_COLUMNS 16

/* Splits on blanks; the last token takes the rest of the line. */
static size_t split_blanks(const char *s, size_t len, systrace_text *tokens,
                           size_t max) {
  size_t n = 0, i = 0;
  while (n < max) {
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
      i++;
    if (i >= len)
      break;
    size_t start = i;
    if (n + 1 == max) {
      i = len;
    } else {
      while (i < len && s[i] != ' ' && s[i] != '\t')
        i++;
    }
    tokens[n++] = (systrace_text){s + start, i - start};
  }
  return n;
}

/* A header ("USER PID PPID VSZ RSS WCHAN ADDR S NAME" for processes,
 * "USER PID TID CMD" for threads) sets the columns; a row names the
 * process (and its parent) or the thread. */
void systrace_emitter_dump_line(systrace_emitter *em, const char *text,
                                size_t len) {
  systrace_text t[DUMP_MAX_COLUMNS];
  size_t n = split_blanks(text, len, t, DUMP_MAX_COLUMNS);
  if (n > 0 && SYSTRACE_TEXT_IS(t[0], "USER")) {
    em->dump_pid = em->dump_ppid = em->dump_tid = em->dump_name = -1;
    for (size_t i = 0; i < n; i++) {
      if (SYSTRACE_TEXT_IS(t[i], "PID"))
        em->dump_pid = (int)i;
      else if (SYSTRACE_TEXT_IS(t[i], "PPID"))
        em->dump_ppid = (int)i;
      else if (SYSTRACE_TEXT_IS(t[i], "TID"))
        em->dump_tid = (int)i;
      else if (SYSTRACE_TEXT_IS(t[i], "NAME") || SYSTRACE_TEXT_IS(t[i], "CMD"))
        em->dump_name = (int)i;
    }
    return;
  }
  int64_t pid, other;
  if (em->dump_pid < 0 || em->dump_name < 0 || (size_t)em->dump_name >= n ||
      !systrace_parse_int64(t[em->dump_pid], &pid) || pid <= 0) {
    count_failure(em, text, len);
    return;
  }
  /* The name is the rest of the row: it may hold blanks. */
  split_blanks(text, len, t, (size_t)em->dump_name + 1);
  tm_str_id name = intern(em, t[em->dump_name]);
  if (em->dump_tid >= 0) {
    if (!systrace_parse_int64(t[em->dump_tid], &other) || other <= 0) {
      count_failure(em, text, len);
      return;
    }
    thread_for(em, pid, other, t[em->dump_name]);
    return;
  }
  tm_process_ref process = em->s->process(em->host, em->machine, pid);
  em->s->process_set_name(em->host, process, name);
  if (em->dump_ppid >= 0 && systrace_parse_int64(t[em->dump_ppid], &other) &&
      other > 0)
    em->s->process_set_parent(em->host, process,
                             em->s->process(em->host, em->machine, other));
}
