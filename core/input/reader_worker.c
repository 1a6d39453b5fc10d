/*
 * A reader on a second thread (reader_worker.h).
 *
 * The log: the worker appends each service call as a record (an op byte,
 * then its arguments, strings and arrays by value) to a chain of segments
 * that never move; it publishes how far the chain is written when a
 * segment fills, when it needs an answer, and when a job ends. The
 * calling thread replays what is published, segment by segment, freeing
 * each one it has passed. Private string and arg-set ids are mapped to the
 * session's as the records that made them are replayed (their maps are the
 * calling thread's alone).
 *
 * A call that needs an answer is a record too: the worker publishes it and
 * waits; the calling thread, which replays in order, reaches it, runs it
 * on the real service and hands the answer back.
 *
 * POSIX threads, as read_ahead.c, so that ThreadSanitizer sees the locks.
 */
#include "input/reader_worker.h"

#include <glib.h>
#include <pthread.h>
#include <string.h>

#include "base/string_pool.h"
#include "base/vec.h"
#include "input/host_services.h"

/* Bytes of a segment's records, unless one record is bigger. Below glibc's
 * mmap threshold, so segments come from the heap's free lists. */
#define SEGMENT_BYTES (60u * 1024u)

typedef struct segment {
  struct segment *next;
  size_t len; /* bytes written: final once `next` is set */
  size_t cap;
  uint8_t data[];
} segment;

typedef enum job_kind { JOB_NONE, JOB_OPEN, JOB_FEED, JOB_FINISH, JOB_CLOSE, JOB_STOP } job_kind;

struct reader_worker {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t worker_wakes; /* a job, an answer, or stop */
  pthread_cond_t caller_wakes; /* published records, a question, a job done */
  /* Under `lock`: */
  reader_recording *rec; /* of the job */
  job_kind job;
  bool job_done;
  bool question; /* the worker waits for the answer to its last record */
  /* A prefetch worker (reader_prefetch_new) runs whole files, in the order
   * they were prepared. Under `lock`: */
  GPtrArray *queue; /* reader_recording*, NULL once cancelled */
  guint next;       /* the first not yet taken by the worker */
  bool stop;
  /* Bytes of the prepared recordings' segments not yet replayed, and how
   * many the worker may hold before it waits for the replay (beyond the
   * segment it writes): a file parsed ahead costs at most that much
   * memory, however far ahead its turn is. Under `lock`. */
  size_t ahead_bytes, ahead_limit;
  /* How many files the worker takes (0: all) and has taken; the later
   * ones wait for their turn, to be read serially. */
  unsigned max_files, taken;
};

/* The default bound of a prefetch worker's log (ahead_limit). On the 1.2M
 * event `bench -f multi` ZIP the log ahead peaks at 29 MB, about 70 bytes
 * per event of the members parsed there (docs/performance.md, "Threads"). */
#define PREFETCH_AHEAD_BYTES (64u << 20)

/* A prepared recording's life (under the worker's lock). */
typedef enum prep_state { PREP_PENDING, PREP_RUNNING, PREP_DONE, PREP_CANCELLED } prep_state;

/* Marks in a prepared recording's log, in this order: where the replay of
 * each of the session's steps for the file stops. */
enum { MARK_OPENED = 1, MARK_STREAM_END, MARK_FINISHED, MARK_CLOSED, MARK_NEVER = 255 };

/* The clock_private answer of a prepared recording (its host's private
 * clock is made only when the file begins): mapped at replay. */
#define PRIVATE_CLOCK_SENTINEL UINT32_MAX

typedef union answer {
  uint32_t ref;
  bool flag;
  int64_t value;
} answer;

struct reader_recording {
  reader_worker *worker;
  tm_host *host;
  reader_fed_fn fed;
  void *fed_ctx;
  tm_machine_ref machine_default;
  /* Jobs run on the calling thread, every call replayed when made: until
   * the second feed (a file of one chunk is not worth two thread
   * handoffs per call of open/feed/finish/close), and after close. */
  bool detached;
  uint64_t feeds;
  /* The job's inputs and results (set before it starts, read after). */
  const uint8_t *config, *data;
  size_t config_len, len;
  void *reader_state;
  tm_status status;
  /* Worker's: the private pool, the arg set being built, the tail, the
   * refs it handed out (by the calls that made them). */
  tm_string_pool *strings;
  size_t pending_args;
  uint32_t args_made;
  GHashTable *own_refs; /* call_key -> private ref */
  uint32_t refs_made;
  segment *tail;
  /* Under the worker's lock: how far the chain is published. */
  segment *published_seg;
  size_t published_len;
  /* Calling thread's: the replay position, the maps, the answer. */
  segment *head;
  size_t read_len;
  TM_VEC(tm_str_id) str_map;   /* private id -> session id */
  TM_VEC(tm_args_ref) args_map; /* private ref -> session ref */
  TM_VEC(uint32_t) ref_map;     /* private process/thread/track ref -> the host's */
  answer reply;                 /* written before `question` is cleared */
  /* Prepared (reader_recording_prepare): the whole file on a prefetch
   * worker, from open to close, ahead of its turn. */
  bool prepared;
  prep_state pstate; /* under the worker's lock */
  guint queue_index;
  bool cancel; /* set under the lock, read by the worker atomically */
  const tm_reader *reader;
  tm_host *proxy; /* what the reader is given: only its `recording` is set */
  const tm_budgets *budgets;
  reader_stream_fn stream;
  void *source;
  reader_halt_fn halt;
  tm_status finish_status;
  /* Calling thread's: the host's private clock (for the sentinel), the
   * last mark replayed, where the replay stops. */
  tm_clock_ref private_clock;
  uint8_t mark, stop_mark;
  bool stop, halted;
  /* A prepared recording's segments counted in its worker's ahead_bytes
   * (under the worker's lock). */
  size_t held;
};

enum op {
  OP_MARK = 0, OP_INTERN = 1, OP_CLOCK_PRIVATE, OP_CLOCK_BUILTIN, OP_CLOCK_SEQUENCE, OP_CLAIM,
  OP_SNAPSHOT, OP_REMOTE_SYNC, OP_MACHINE_EMBEDDED, OP_MACHINE_SET_INFO, OP_PROCESS,
  OP_THREAD, OP_PROCESS_SET_NAME, OP_THREAD_SET_NAME, OP_PROCESS_ADD_ARG,
  OP_THREAD_ADD_ARG, OP_PROCESS_SET_CMDLINE, OP_PROCESS_SET_PARENT, OP_PROCESS_SET_UID,
  OP_TRACK_THREAD, OP_TRACK_INTERN, OP_TRACK_SET_PARENT, OP_TRACK_ADD_SOURCE_ARG,
  OP_ARGS_ADD, OP_ARGS_COMMIT, OP_SLICE_BEGIN, OP_SLICE_END, OP_SLICE_COMPLETE,
  OP_COUNTER, OP_FLOW, OP_SCHED_SWITCH, OP_SCHED_WAKING, OP_MAPPING, OP_FRAME,
  OP_CALLSITE, OP_SAMPLE, OP_METADATA_INT, OP_METADATA_STRING, OP_STAT_ADD,
  OP_IMPORT_LOG, OP_REPORT_ERROR, OP_TRACK_ASYNC, OP_FRAME_TIMELINE_BEGIN,
  OP_FTRACE_EVENT, OP_ANDROID_LOG, OP_PACKAGE, OP_THREAD_LIFETIME, OP_STAT_SET_INDEXED,
  OP_SCHED_BLOCKED_REASON, OP_BUDGET, OP_MACHINE_STAT_SET_INDEXED,
  OP_MACHINE_METADATA_INT, OP_MACHINE_METADATA_STRING, OP_ARGS_ADD_CALLSITE, OP_REFUSED, OP_FED, OP_ARGS_ADD_STRING,
};

/* --- writing records (worker) -------------------------------------------- */

typedef struct writer {
  uint8_t *p;
} writer;

static reader_recording *rec_of(tm_host *host) { return host->recording; }

static void publish_locked(reader_recording *rec) {
  rec->published_seg = rec->tail;
  rec->published_len = rec->tail ? rec->tail->len : 0;
}

/* Room for a record of at most `max` bytes at the tail. */
static writer reserve(reader_recording *rec, size_t max) {
  segment *tail = rec->tail;
  if (!tail || tail->cap - tail->len < max) {
    size_t cap = MAX((size_t)SEGMENT_BYTES, max);
    segment *seg = g_malloc(sizeof(segment) + cap);
    seg->next = NULL;
    seg->len = 0;
    seg->cap = cap;
    if (rec->detached || !rec->worker) {
      if (tail)
        tail->next = seg;
      else
        rec->head = seg;
      rec->tail = seg;
      publish_locked(rec);
    } else {
      reader_worker *w = rec->worker;
      pthread_mutex_lock(&w->lock);
      if (rec->prepared) {
        /* Ahead by the bound (not counting the full tail, which the
         * replay can read to its end but frees only once passed): wait
         * until the replay has freed segments. */
        publish_locked(rec);
        pthread_cond_signal(&w->caller_wakes);
        size_t writing = tail ? tail->cap : 0;
        while (w->ahead_bytes > writing && w->ahead_bytes - writing >= w->ahead_limit &&
               !w->stop && !__atomic_load_n(&rec->cancel, __ATOMIC_ACQUIRE))
          pthread_cond_wait(&w->worker_wakes, &w->lock);
        rec->held += cap;
        w->ahead_bytes += cap;
      }
      if (tail)
        tail->next = seg;
      else
        rec->head = seg;
      rec->tail = seg;
      publish_locked(rec); /* the full segment before it, for the replay */
      pthread_cond_signal(&w->caller_wakes);
      pthread_mutex_unlock(&w->lock);
    }
  }
  return (writer){rec->tail->data + rec->tail->len};
}

static void commit(reader_recording *rec, writer w) {
  rec->tail->len = (size_t)(w.p - rec->tail->data);
}

static void put(writer *w, const void *v, size_t n) {
  if (n)
    memcpy(w->p, v, n);
  w->p += n;
}
#define PUT(w, v) put((w), &(v), sizeof(v))

/* A C string (NULL kept apart from ""): its length + 1 (0 for NULL), then
 * its bytes and NUL. */
static size_t cstr_size(const char *s) { return sizeof(uint64_t) + (s ? strlen(s) + 1 : 0); }
static void put_cstr(writer *w, const char *s) {
  uint64_t n = s ? strlen(s) + 1 : 0;
  PUT(w, n);
  put(w, s, n);
}
static void put_bytes(writer *w, const void *s, size_t len) {
  uint64_t n = len;
  PUT(w, n);
  put(w, s, len);
}

static void replay_published(reader_recording *rec);

/* `n` bytes of a prepared recording's segments freed (or all it holds,
 * SIZE_MAX): a worker waiting for room may go on. */
static void release_held(reader_recording *rec, size_t n) {
  reader_worker *w = rec->worker;
  if (!rec->prepared || !w)
    return;
  pthread_mutex_lock(&w->lock);
  n = MIN(n, rec->held);
  rec->held -= n;
  w->ahead_bytes -= n;
  pthread_cond_broadcast(&w->worker_wakes);
  pthread_mutex_unlock(&w->lock);
}

/* The record just written, published; for a question, waits for the
 * answer. */
static void done(reader_recording *rec, writer w, bool question) {
  commit(rec, w);
  if (rec->detached || !rec->worker) {
    publish_locked(rec);
    replay_published(rec);
    return;
  }
  if (!question)
    return;
  reader_worker *wk = rec->worker;
  pthread_mutex_lock(&wk->lock);
  publish_locked(rec);
  if (rec->cancel) { /* a prepared file given up: no one will answer */
    memset(&rec->reply, 0, sizeof rec->reply);
    pthread_mutex_unlock(&wk->lock);
    return;
  }
  wk->question = true;
  pthread_cond_signal(&wk->caller_wakes);
  while (wk->question)
    pthread_cond_wait(&wk->worker_wakes, &wk->lock);
  pthread_mutex_unlock(&wk->lock);
}

static writer begin(reader_recording *rec, uint8_t op, size_t args_size) {
  writer w = reserve(rec, 1 + args_size);
  PUT(&w, op);
  return w;
}

/* --- the recording services (worker) -------------------------------------- */

static tm_str_id rec_intern_string(tm_host *host, const char *s, size_t len) {
  reader_recording *rec = rec_of(host);
  GString *normal = NULL;
  if (!s) {
    s = "";
    len = 0;
  } else if (memchr(s, 0, len)) {
    /* As the host's pool keeps them (host_services.c). */
    normal = g_string_sized_new(len + 8);
    for (size_t i = 0; i < len; i++) {
      if (s[i])
        g_string_append_c(normal, s[i]);
      else
        g_string_append(normal, "\xEF\xBF\xBD");
    }
    s = normal->str;
    len = normal->len;
  }
  size_t known = string_pool_count(rec->strings);
  tm_str_id id = string_pool_intern(rec->strings, s, len);
  if (id >= known) { /* new: the replay interns it in the session's pool */
    writer w = begin(rec, OP_INTERN, sizeof(uint64_t) + len);
    put_bytes(&w, s, len);
    done(rec, w, false);
  }
  if (normal)
    g_string_free(normal, TRUE);
  return id;
}

#define ASK(rec, w, field) (done((rec), (w), true), (rec)->reply.field)

/* A call by its record's bytes (op and arguments): equal calls, equal
 * keys. Stored keys own their bytes (allocated with the key). */
typedef struct call_key {
  size_t len;
  const uint8_t *bytes;
} call_key;

static guint call_key_hash(gconstpointer p) {
  const call_key *k = p;
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (size_t i = 0; i < k->len; i++)
    h = (h ^ k->bytes[i]) * 0x100000001b3ull;
  return (guint)(h ^ (h >> 32));
}

static gboolean call_key_equal(gconstpointer a, gconstpointer b) {
  const call_key *x = a, *y = b;
  return x->len == y->len && memcmp(x->bytes, y->bytes, x->len) == 0;
}

static call_key *call_key_copy(const call_key *k) {
  call_key *copy = g_malloc(sizeof *copy + k->len);
  uint8_t *bytes = (uint8_t *)(copy + 1);
  memcpy(bytes, k->bytes, k->len);
  copy->len = k->len;
  copy->bytes = bytes;
  return copy;
}

/* A process, thread, track, mapping, frame or callsite: answered here,
 * without waiting, by a
 * private ref (the same for the same call, as the host interns them), or
 * 0 when the host's answer is known to be 0 (`none`). The record carries
 * the ref; its replay maps it to the host's answer, so every later call
 * that names it is replayed with the host's ref. The record is written
 * from `start` to w.p (its op and arguments). */
static uint32_t own_ref(reader_recording *rec, writer *w, const uint8_t *start, bool none) {
  uint32_t ref = 0;
  if (!none) {
    call_key probe = {(size_t)(w->p - start), start};
    gpointer found = g_hash_table_lookup(rec->own_refs, &probe);
    if (found) {
      ref = GPOINTER_TO_UINT(found);
    } else {
      ref = ++rec->refs_made;
      g_hash_table_insert(rec->own_refs, call_key_copy(&probe), GUINT_TO_POINTER(ref));
    }
  }
  PUT(w, ref);
  return ref;
}

static uint32_t own_answer(reader_recording *rec, writer w, const uint8_t *start, bool none) {
  uint32_t ref = own_ref(rec, &w, start, none);
  done(rec, w, false);
  return ref;
}

static tm_clock_ref rec_clock_private(tm_host *host) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_CLOCK_PRIVATE, 0);
  if (rec->prepared) { /* replayed for its side effect; the ref is mapped */
    done(rec, w, false);
    return PRIVATE_CLOCK_SENTINEL;
  }
  return ASK(rec, w, ref);
}

static tm_clock_ref rec_clock_builtin(tm_host *host, tm_machine_ref machine, uint32_t clock_id) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_CLOCK_BUILTIN, 8);
  PUT(&w, machine);
  PUT(&w, clock_id);
  return ASK(rec, w, ref);
}

static tm_clock_ref rec_clock_sequence(tm_host *host, tm_machine_ref machine,
                                       uint32_t sequence_id, uint32_t clock_id) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_CLOCK_SEQUENCE, 12);
  PUT(&w, machine);
  PUT(&w, sequence_id);
  PUT(&w, clock_id);
  return ASK(rec, w, ref);
}

static bool rec_claim_trace_time(tm_host *host, tm_clock_ref clock) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_CLAIM, 4);
  PUT(&w, clock);
  return ASK(rec, w, flag);
}

static bool rec_add_clock_snapshot(tm_host *host, const tm_clock_ref *clocks,
                                   const int64_t *values_ns, size_t count) {
  reader_recording *rec = rec_of(host);
  uint64_t n = count;
  writer w = begin(rec, OP_SNAPSHOT, 8 + count * (sizeof(*clocks) + sizeof(*values_ns)));
  PUT(&w, n);
  put(&w, clocks, count * sizeof(*clocks));
  put(&w, values_ns, count * sizeof(*values_ns));
  return ASK(rec, w, flag);
}

static bool rec_remote_clock_sync(tm_host *host) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_REMOTE_SYNC, 0);
  return ASK(rec, w, flag);
}

static tm_machine_ref rec_machine_default(tm_host *host) {
  return rec_of(host)->machine_default;
}

static tm_machine_ref rec_machine_embedded(tm_host *host, uint32_t raw_id) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_MACHINE_EMBEDDED, 4);
  PUT(&w, raw_id);
  return ASK(rec, w, ref);
}

static void rec_machine_set_info(tm_host *host, tm_machine_ref machine, const char *column,
                                 tm_arg_value value) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_MACHINE_SET_INFO, 4 + cstr_size(column) + sizeof value);
  PUT(&w, machine);
  put_cstr(&w, column);
  PUT(&w, value);
  done(rec, w, false);
}

static tm_process_ref rec_process(tm_host *host, tm_machine_ref machine, int64_t pid) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_PROCESS, 12 + 4);
  const uint8_t *start = w.p - 1;
  PUT(&w, machine);
  PUT(&w, pid);
  return own_answer(rec, w, start, false);
}

static tm_thread_ref rec_thread(tm_host *host, tm_machine_ref machine, int64_t pid,
                                int64_t tid) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_THREAD, 20 + 4);
  const uint8_t *start = w.p - 1;
  PUT(&w, machine);
  PUT(&w, pid);
  PUT(&w, tid);
  return own_answer(rec, w, start, false);
}

/* A call of (ref, u32) or (ref, key, value): the common shapes. */
static void rec_ref_u32(tm_host *host, uint8_t op, uint32_t ref, uint32_t v) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, op, 8);
  PUT(&w, ref);
  PUT(&w, v);
  done(rec, w, false);
}
static void rec_ref_key_value(tm_host *host, uint8_t op, uint32_t ref, tm_str_id key,
                              tm_arg_value value) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, op, 8 + sizeof value);
  PUT(&w, ref);
  PUT(&w, key);
  PUT(&w, value);
  done(rec, w, false);
}

static void rec_process_set_name(tm_host *host, tm_process_ref process, tm_str_id name) {
  rec_ref_u32(host, OP_PROCESS_SET_NAME, process, name);
}
static void rec_thread_set_name(tm_host *host, tm_thread_ref thread, tm_str_id name) {
  rec_ref_u32(host, OP_THREAD_SET_NAME, thread, name);
}
static void rec_process_add_arg(tm_host *host, tm_process_ref process, tm_str_id key,
                                tm_arg_value value) {
  rec_ref_key_value(host, OP_PROCESS_ADD_ARG, process, key, value);
}
static void rec_thread_add_arg(tm_host *host, tm_thread_ref thread, tm_str_id key,
                               tm_arg_value value) {
  rec_ref_key_value(host, OP_THREAD_ADD_ARG, thread, key, value);
}
static void rec_process_set_cmdline(tm_host *host, tm_process_ref process, tm_str_id cmdline) {
  rec_ref_u32(host, OP_PROCESS_SET_CMDLINE, process, cmdline);
}
static void rec_process_set_parent(tm_host *host, tm_process_ref process, tm_process_ref parent) {
  rec_ref_u32(host, OP_PROCESS_SET_PARENT, process, parent);
}
static void rec_process_set_uid(tm_host *host, tm_process_ref process, int64_t uid) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_PROCESS_SET_UID, 12);
  PUT(&w, process);
  PUT(&w, uid);
  done(rec, w, false);
}

static tm_track_ref rec_track_thread(tm_host *host, tm_thread_ref thread) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_TRACK_THREAD, 4 + 4);
  const uint8_t *start = w.p - 1;
  PUT(&w, thread);
  /* The host answers 0 for no thread; every ref the reader holds is one
   * of this recording's. */
  return own_answer(rec, w, start, thread == 0);
}

/* A tm_track_desc as far as its struct_size covers, and its type. */
static size_t desc_size(const tm_track_desc *desc) {
  return 4 + sizeof(tm_track_desc) + cstr_size(desc ? desc->type : NULL);
}
static void put_desc(writer *w, const tm_track_desc *desc) {
  tm_track_desc copy = {0};
  uint32_t size = desc ? desc->struct_size : 0;
  if (desc)
    memcpy(&copy, desc, MIN((size_t)size, sizeof copy));
  PUT(w, size);
  PUT(w, copy);
  put_cstr(w, size >= offsetof(tm_track_desc, type) + sizeof(desc->type) ? desc->type : NULL);
}

/* What the host checks before it makes a described track (host_services.c:
 * a description of version 2 with a type); 0 otherwise. */
static bool desc_refused(const tm_track_desc *desc) {
  return !desc || desc->struct_size < offsetof(tm_track_desc, cpu) + sizeof(uint32_t) ||
         !desc->type;
}

static tm_track_ref rec_track_intern(tm_host *host, const tm_track_desc *desc) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_TRACK_INTERN, 1 + desc_size(desc) + 4);
  const uint8_t *start = w.p - 1;
  uint8_t present = desc != NULL;
  PUT(&w, present);
  put_desc(&w, desc);
  /* A cpu track may be refused for its cpu (and counted): asked whether
   * it was, so that the reader sees the 0 the host answers. */
  if (!desc_refused(desc) && desc->has_cpu) {
    uint32_t ref = own_ref(rec, &w, start, false);
    return ASK(rec, w, ref) ? ref : 0;
  }
  return own_answer(rec, w, start, desc_refused(desc));
}

static void rec_track_set_parent(tm_host *host, tm_track_ref track, tm_track_ref parent) {
  rec_ref_u32(host, OP_TRACK_SET_PARENT, track, parent);
}
static void rec_track_add_source_arg(tm_host *host, tm_track_ref track, tm_str_id key,
                                     tm_arg_value value) {
  rec_ref_key_value(host, OP_TRACK_ADD_SOURCE_ARG, track, key, value);
}

static void rec_args_add(tm_host *host, tm_str_id key, tm_arg_value value) {
  reader_recording *rec = rec_of(host);
  if (key) /* the host ignores a pair without a key */
    rec->pending_args++;
  writer w = begin(rec, OP_ARGS_ADD, 4 + sizeof value);
  PUT(&w, key);
  PUT(&w, value);
  done(rec, w, false);
}

/* The value's bytes, as they came: the replay hands them to the host's
 * args_add_string, which keeps them in the model's arg text as in the
 * serial run (interned here, they would be new strings of the session's
 * pool, and the Perfetto export's interned strings would differ). */
static void rec_args_add_string(tm_host *host, tm_str_id key, tm_arg_type type,
                                const char *s, size_t len) {
  reader_recording *rec = rec_of(host);
  if (key) /* the host refuses a pair without a key (replayed) */
    rec->pending_args++;
  if (!s)
    len = 0;
  uint32_t t = type;
  writer w = begin(rec, OP_ARGS_ADD_STRING, 4 + 4 + sizeof(uint64_t) + len);
  PUT(&w, key);
  PUT(&w, t);
  put_bytes(&w, s, len);
  done(rec, w, false);
}

static tm_args_ref rec_args_commit(tm_host *host) {
  reader_recording *rec = rec_of(host);
  if (rec->pending_args == 0)
    return TM_NO_ARGS; /* as the host answers, and it does nothing else */
  rec->pending_args = 0;
  tm_args_ref made = ++rec->args_made;
  writer w = begin(rec, OP_ARGS_COMMIT, 4);
  PUT(&w, made);
  done(rec, w, false);
  return made;
}

/* tm_slice_fields as far as its struct_size covers. */
static void put_fields(writer *w, const tm_slice_fields *f) {
  tm_slice_fields copy = {0};
  uint32_t size = f ? f->struct_size : 0;
  if (f)
    memcpy(&copy, f, MIN((size_t)size, sizeof copy));
  uint8_t present = f != NULL;
  PUT(w, present);
  PUT(w, copy);
}
#define FIELDS_SIZE (1 + sizeof(tm_slice_fields))

static void rec_slice(tm_host *host, uint8_t op, const tm_slice_fields *f, int64_t dur) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, op, FIELDS_SIZE + 8);
  put_fields(&w, f);
  PUT(&w, dur);
  done(rec, w, false);
}
static void rec_slice_begin(tm_host *host, const tm_slice_fields *f) {
  rec_slice(host, OP_SLICE_BEGIN, f, 0);
}
static void rec_slice_end(tm_host *host, const tm_slice_fields *f) {
  rec_slice(host, OP_SLICE_END, f, 0);
}
static void rec_slice_complete(tm_host *host, const tm_slice_fields *f, int64_t dur_ns) {
  rec_slice(host, OP_SLICE_COMPLETE, f, dur_ns);
}

static void rec_counter(tm_host *host, tm_track_ref track, tm_clock_ref clock, int64_t ts,
                        double value, tm_args_ref args) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_COUNTER, 28);
  PUT(&w, track);
  PUT(&w, clock);
  PUT(&w, ts);
  PUT(&w, value);
  PUT(&w, args);
  done(rec, w, false);
}

static void rec_flow(tm_host *host, tm_track_ref track, tm_clock_ref clock, int64_t ts,
                     uint64_t flow_id, tm_flow_direction direction, tm_flow_binding binding,
                     tm_args_ref args) {
  reader_recording *rec = rec_of(host);
  uint32_t d = direction, b = binding;
  writer w = begin(rec, OP_FLOW, 40);
  PUT(&w, track);
  PUT(&w, clock);
  PUT(&w, ts);
  PUT(&w, flow_id);
  PUT(&w, d);
  PUT(&w, b);
  PUT(&w, args);
  done(rec, w, false);
}

static void rec_sched_switch(tm_host *host, tm_clock_ref clock, int64_t ts,
                             tm_machine_ref machine, uint32_t cpu, tm_thread_ref prev,
                             tm_str_id prev_state, tm_thread_ref next, int32_t next_prio) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_SCHED_SWITCH, 40);
  PUT(&w, clock);
  PUT(&w, ts);
  PUT(&w, machine);
  PUT(&w, cpu);
  PUT(&w, prev);
  PUT(&w, prev_state);
  PUT(&w, next);
  PUT(&w, next_prio);
  done(rec, w, false);
}

static void rec_sched_waking(tm_host *host, tm_clock_ref clock, int64_t ts,
                             tm_machine_ref machine, uint32_t target_cpu, tm_thread_ref thread,
                             tm_thread_ref waker) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_SCHED_WAKING, 32);
  PUT(&w, clock);
  PUT(&w, ts);
  PUT(&w, machine);
  PUT(&w, target_cpu);
  PUT(&w, thread);
  PUT(&w, waker);
  done(rec, w, false);
}

static tm_mapping_ref rec_mapping(tm_host *host, tm_str_id name, tm_str_id build_id,
                                  uint64_t start_addr, uint64_t end, uint64_t exact_offset,
                                  uint64_t load_bias) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_MAPPING, 40 + 4);
  const uint8_t *start = w.p - 1;
  PUT(&w, name);
  PUT(&w, build_id);
  PUT(&w, start_addr);
  PUT(&w, end);
  PUT(&w, exact_offset);
  PUT(&w, load_bias);
  return own_answer(rec, w, start, false);
}

static tm_frame_ref rec_frame(tm_host *host, tm_str_id function_name, tm_mapping_ref mapping,
                              uint64_t rel_pc) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_FRAME, 16 + 4);
  const uint8_t *start = w.p - 1;
  PUT(&w, function_name);
  PUT(&w, mapping);
  PUT(&w, rel_pc);
  return own_answer(rec, w, start, false);
}

static tm_callsite_ref rec_callsite(tm_host *host, tm_callsite_ref parent, tm_frame_ref frame) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_CALLSITE, 8 + 4);
  const uint8_t *start = w.p - 1;
  PUT(&w, parent);
  PUT(&w, frame);
  /* The host answers 0 for no frame. */
  return own_answer(rec, w, start, frame == 0);
}

static void rec_sample(tm_host *host, tm_clock_ref clock, int64_t ts, tm_thread_ref thread,
                       tm_callsite_ref callsite, int32_t cpu) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_SAMPLE, 24);
  PUT(&w, clock);
  PUT(&w, ts);
  PUT(&w, thread);
  PUT(&w, callsite);
  PUT(&w, cpu);
  done(rec, w, false);
}

/* (machine, name, idx, value) shapes of metadata and stats. */
static void rec_named(tm_host *host, uint8_t op, tm_machine_ref machine, const char *name,
                      int64_t idx, int64_t value) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, op, 4 + cstr_size(name) + 16);
  PUT(&w, machine);
  put_cstr(&w, name);
  PUT(&w, idx);
  PUT(&w, value);
  done(rec, w, false);
}

static void rec_metadata_set_int(tm_host *host, const char *name, int64_t value) {
  rec_named(host, OP_METADATA_INT, 0, name, 0, value);
}
static void rec_metadata_set_string(tm_host *host, const char *name, tm_str_id value) {
  rec_named(host, OP_METADATA_STRING, 0, name, 0, value);
}
static void rec_stat_add(tm_host *host, const char *name, int64_t delta) {
  rec_named(host, OP_STAT_ADD, 0, name, 0, delta);
}

static void rec_import_log(tm_host *host, const char *name, int64_t byte_offset,
                           const tm_import_log_arg *args, size_t n_args) {
  reader_recording *rec = rec_of(host);
  /* The array as the reader laid it out (the host steps by its
   * struct_size), then each element's key and string bytes. */
  uint32_t stride = args && n_args ? args[0].struct_size : 0;
  bool has_key = stride >= offsetof(tm_import_log_arg, key) + sizeof(args->key);
  bool has_string = stride >= offsetof(tm_import_log_arg, string_len) + sizeof(args->string_len);
  size_t size = cstr_size(name) + 8 + 8 + 4 + (size_t)stride * n_args;
  const uint8_t *base = (const uint8_t *)args;
  for (size_t i = 0; i < n_args; i++) {
    const tm_import_log_arg *a = (const tm_import_log_arg *)(base + (size_t)stride * i);
    if (has_key)
      size += cstr_size(a->key);
    if (has_string)
      size += 8 + (a->string ? a->string_len : 0);
  }
  writer w = begin(rec, OP_IMPORT_LOG, size);
  uint64_t n = args ? n_args : 0;
  put_cstr(&w, name);
  PUT(&w, byte_offset);
  PUT(&w, n);
  PUT(&w, stride);
  put(&w, args, (size_t)stride * n);
  for (size_t i = 0; i < n; i++) {
    const tm_import_log_arg *a = (const tm_import_log_arg *)(base + (size_t)stride * i);
    if (has_key)
      put_cstr(&w, a->key);
    if (has_string) {
      uint8_t present = a->string != NULL;
      size_t len = present ? a->string_len : 0;
      /* Presence rides on the length's top bit: a string is never 2^63. */
      uint64_t l = (uint64_t)len | ((uint64_t)present << 63);
      PUT(&w, l);
      put(&w, a->string, len);
    }
  }
  done(rec, w, false);
}

static void rec_report_error(tm_host *host, int64_t byte_offset, const char *message) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_REPORT_ERROR, 8 + cstr_size(message));
  PUT(&w, byte_offset);
  put_cstr(&w, message);
  done(rec, w, false);
}

static tm_track_ref rec_track_async(tm_host *host, const tm_track_desc *set, uint64_t cookie,
                                    uint32_t flags) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_TRACK_ASYNC, 1 + desc_size(set) + 12 + 4);
  const uint8_t *start = w.p - 1;
  uint8_t present = set != NULL;
  PUT(&w, present);
  put_desc(&w, set);
  PUT(&w, cookie);
  PUT(&w, flags);
  return own_answer(rec, w, start, desc_refused(set));
}

static void rec_frame_timeline_begin(tm_host *host, const tm_slice_fields *f,
                                     const tm_frame_timeline_fields *frame) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_FRAME_TIMELINE_BEGIN, FIELDS_SIZE + 5 + sizeof(*frame));
  put_fields(&w, f);
  tm_frame_timeline_fields copy = {0};
  uint32_t size = frame ? frame->struct_size : 0;
  if (frame)
    memcpy(&copy, frame, MIN((size_t)size, sizeof copy));
  uint8_t present = frame != NULL;
  PUT(&w, present);
  PUT(&w, copy);
  done(rec, w, false);
}

static void rec_ftrace_event(tm_host *host, tm_clock_ref clock, int64_t ts,
                             tm_machine_ref machine, uint32_t cpu, tm_thread_ref thread,
                             tm_str_id name, tm_args_ref args) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_FTRACE_EVENT, 32);
  PUT(&w, clock);
  PUT(&w, ts);
  PUT(&w, machine);
  PUT(&w, cpu);
  PUT(&w, thread);
  PUT(&w, name);
  PUT(&w, args);
  done(rec, w, false);
}

static void rec_android_log(tm_host *host, tm_clock_ref clock, int64_t ts, tm_thread_ref thread,
                            uint32_t prio, tm_str_id tag, tm_str_id msg, tm_args_ref args) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_ANDROID_LOG, 32);
  PUT(&w, clock);
  PUT(&w, ts);
  PUT(&w, thread);
  PUT(&w, prio);
  PUT(&w, tag);
  PUT(&w, msg);
  PUT(&w, args);
  done(rec, w, false);
}

static void rec_package(tm_host *host, tm_machine_ref machine, tm_str_id name, int64_t uid,
                        int32_t debuggable, int32_t profileable, int64_t version_code) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_PACKAGE, 32);
  PUT(&w, machine);
  PUT(&w, name);
  PUT(&w, uid);
  PUT(&w, debuggable);
  PUT(&w, profileable);
  PUT(&w, version_code);
  done(rec, w, false);
}

static void rec_thread_lifetime(tm_host *host, tm_clock_ref clock, int64_t ts,
                                tm_thread_ref thread, uint32_t is_end) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_THREAD_LIFETIME, 20);
  PUT(&w, clock);
  PUT(&w, ts);
  PUT(&w, thread);
  PUT(&w, is_end);
  done(rec, w, false);
}

static void rec_stat_set_indexed(tm_host *host, const char *name, int64_t idx, int64_t value) {
  rec_named(host, OP_STAT_SET_INDEXED, 0, name, idx, value);
}

static void rec_sched_blocked_reason(tm_host *host, tm_clock_ref clock, int64_t ts,
                                     tm_thread_ref thread, int32_t io_wait,
                                     tm_str_id blocked_function) {
  reader_recording *rec = rec_of(host);
  writer w = begin(rec, OP_SCHED_BLOCKED_REASON, 24);
  PUT(&w, clock);
  PUT(&w, ts);
  PUT(&w, thread);
  PUT(&w, io_wait);
  PUT(&w, blocked_function);
  done(rec, w, false);
}

static int64_t rec_budget(tm_host *host, uint32_t which) {
  reader_recording *rec = rec_of(host);
  if (rec->prepared) /* no side effect: answered here */
    return host_services_budget(rec->budgets, which);
  writer w = begin(rec, OP_BUDGET, 4);
  PUT(&w, which);
  return ASK(rec, w, value);
}

static void rec_machine_stat_set_indexed(tm_host *host, tm_machine_ref machine,
                                         const char *name, int64_t idx, int64_t value) {
  rec_named(host, OP_MACHINE_STAT_SET_INDEXED, machine, name, idx, value);
}
static void rec_machine_metadata_set_int(tm_host *host, tm_machine_ref machine,
                                         const char *name, int64_t value) {
  rec_named(host, OP_MACHINE_METADATA_INT, machine, name, 0, value);
}
static void rec_machine_metadata_set_string(tm_host *host, tm_machine_ref machine,
                                            const char *name, tm_str_id value) {
  rec_named(host, OP_MACHINE_METADATA_STRING, machine, name, 0, value);
}

static void rec_args_add_callsite(tm_host *host, tm_str_id key, tm_callsite_ref callsite) {
  reader_recording *rec = rec_of(host);
  if (key && callsite) /* as the host, which adds no pair for these */
    rec->pending_args++;
  rec_ref_u32(host, OP_ARGS_ADD_CALLSITE, callsite, key);
}

static const tm_host_services recording_services = {
    .struct_size = sizeof(tm_host_services),
    .abi_version = TM_READER_ABI_VERSION,
    .intern_string = rec_intern_string,
    .clock_private = rec_clock_private,
    .clock_builtin = rec_clock_builtin,
    .clock_sequence = rec_clock_sequence,
    .claim_trace_time = rec_claim_trace_time,
    .add_clock_snapshot = rec_add_clock_snapshot,
    .remote_clock_sync = rec_remote_clock_sync,
    .machine_default = rec_machine_default,
    .machine_embedded = rec_machine_embedded,
    .machine_set_info = rec_machine_set_info,
    .process = rec_process,
    .thread = rec_thread,
    .process_set_name = rec_process_set_name,
    .thread_set_name = rec_thread_set_name,
    .process_add_arg = rec_process_add_arg,
    .thread_add_arg = rec_thread_add_arg,
    .process_set_cmdline = rec_process_set_cmdline,
    .process_set_parent = rec_process_set_parent,
    .process_set_uid = rec_process_set_uid,
    .track_thread = rec_track_thread,
    .track_intern = rec_track_intern,
    .track_set_parent = rec_track_set_parent,
    .track_add_source_arg = rec_track_add_source_arg,
    .args_add = rec_args_add,
    .args_commit = rec_args_commit,
    .args_add_string = rec_args_add_string,
    .slice_begin = rec_slice_begin,
    .slice_end = rec_slice_end,
    .slice_complete = rec_slice_complete,
    .counter = rec_counter,
    .flow = rec_flow,
    .sched_switch = rec_sched_switch,
    .sched_waking = rec_sched_waking,
    .mapping = rec_mapping,
    .frame = rec_frame,
    .callsite = rec_callsite,
    .sample = rec_sample,
    .metadata_set_int = rec_metadata_set_int,
    .metadata_set_string = rec_metadata_set_string,
    .stat_add = rec_stat_add,
    .import_log = rec_import_log,
    .report_error = rec_report_error,
    .track_async = rec_track_async,
    .frame_timeline_begin = rec_frame_timeline_begin,
    .ftrace_event = rec_ftrace_event,
    .android_log = rec_android_log,
    .package = rec_package,
    .thread_lifetime = rec_thread_lifetime,
    .stat_set_indexed = rec_stat_set_indexed,
    .sched_blocked_reason = rec_sched_blocked_reason,
    .budget = rec_budget,
    .machine_stat_set_indexed = rec_machine_stat_set_indexed,
    .machine_metadata_set_int = rec_machine_metadata_set_int,
    .machine_metadata_set_string = rec_machine_metadata_set_string,
    .args_add_callsite = rec_args_add_callsite,
};

const tm_host_services *reader_recording_services(void) { return &recording_services; }

/* --- replay (calling thread) ---------------------------------------------- */

typedef struct reader {
  const uint8_t *p;
} reader;

static void get(reader *r, void *v, size_t n) {
  if (n)
    memcpy(v, r->p, n);
  r->p += n;
}
#define GET(r, v) get((r), &(v), sizeof(v))

static const char *get_cstr(reader *r) {
  uint64_t n;
  GET(r, n);
  const char *s = n ? (const char *)r->p : NULL;
  r->p += n;
  return s;
}

static tm_str_id map_str(reader_recording *rec, tm_str_id id) {
  return id < rec->str_map.len ? rec->str_map.data[id] : 0;
}
/* An arg set the recording handed out -> the host's. One it never handed
 * out (a reader's mistake) becomes a ref that names no set in either kind
 * of file (no model set, not staged), so the host refuses it as it does
 * the serial run's, rather than taking the event without args. */
#define ARGS_NO_SET 0x7fffffffu
static tm_args_ref map_args(reader_recording *rec, tm_args_ref ref) {
  if (ref < rec->args_map.len)
    return rec->args_map.data[ref];
  return ref == TM_NO_ARGS ? TM_NO_ARGS : ARGS_NO_SET;
}
/* A process, thread or track ref the recording handed out -> the host's.
 * A ref it never handed out (a reader's mistake) becomes one that names no
 * row, not 0, so the host refuses or ignores it as it does the serial
 * run's (0 means "none" to some services: a callsite's parent, an arg). */
static uint32_t map_ref(const reader_recording *rec, uint32_t ref) {
  if (ref < rec->ref_map.len)
    return rec->ref_map.data[ref];
  return ref == 0 ? 0 : UINT32_MAX;
}
/* A clock ref the reader was given -> the host's. */
static tm_clock_ref map_clock(const reader_recording *rec, tm_clock_ref clock) {
  return clock == PRIVATE_CLOCK_SENTINEL && rec->prepared ? rec->private_clock : clock;
}
/* The host's answer to a call the recording answered with `ref`. */
static void set_ref(reader_recording *rec, reader *r, uint32_t host_ref) {
  uint32_t ref;
  GET(r, ref);
  if (!ref)
    return;
  while (rec->ref_map.len <= ref)
    tm_vec_push(&rec->ref_map, 0);
  rec->ref_map.data[ref] = host_ref;
}
static tm_arg_value map_value(reader_recording *rec, tm_arg_value v) {
  if (v.type == TM_ARG_STRING || v.type == TM_ARG_JSON)
    v.u.str_id = map_str(rec, v.u.str_id);
  return v;
}

/* A tm_track_desc as recorded (after its presence byte), its strings
 * mapped; NULL if the reader passed none. */
static const tm_track_desc *get_desc(reader_recording *rec, reader *r, tm_track_desc *desc) {
  uint8_t present;
  GET(r, present);
  uint32_t size;
  GET(r, size);
  GET(r, *desc);
  const char *type = get_cstr(r);
  if (!present)
    return NULL;
  desc->struct_size = size;
  desc->type = type;
  desc->thread = map_ref(rec, desc->thread);
  desc->process = map_ref(rec, desc->process);
  desc->parent = map_ref(rec, desc->parent);
  desc->name = map_str(rec, desc->name);
  desc->scope = map_str(rec, desc->scope);
  desc->unit = map_str(rec, desc->unit);
  desc->merge_key = map_str(rec, desc->merge_key);
  return desc;
}

static const tm_slice_fields *get_fields(reader_recording *rec, reader *r, tm_slice_fields *f) {
  uint8_t present;
  GET(r, present);
  GET(r, *f);
  if (!present)
    return NULL;
  f->track = map_ref(rec, f->track);
  f->clock = map_clock(rec, f->clock);
  f->name = map_str(rec, f->name);
  f->category = map_str(rec, f->category);
  f->args = map_args(rec, f->args);
  return f;
}

/* Replays one record at `r`; returns the position after it. */
static const uint8_t *replay_one(reader_recording *rec, const uint8_t *at) {
  const tm_host_services *s = &host_services_v2;
  tm_host *host = rec->host;
  reader rd = {at};
  reader *r = &rd;
  uint8_t op;
  GET(r, op);
  answer *reply = &rec->reply;
  switch (op) {
  case OP_INTERN: {
    uint64_t len;
    GET(r, len);
    tm_str_id id = s->intern_string(host, (const char *)r->p, (size_t)len);
    r->p += len;
    tm_vec_push(&rec->str_map, id);
    break;
  }
  case OP_CLOCK_PRIVATE:
    reply->ref = s->clock_private(host);
    rec->private_clock = reply->ref;
    break;
  case OP_CLOCK_BUILTIN: {
    uint32_t machine, clock_id;
    GET(r, machine);
    GET(r, clock_id);
    reply->ref = s->clock_builtin(host, machine, clock_id);
    break;
  }
  case OP_CLOCK_SEQUENCE: {
    uint32_t machine, seq, clock_id;
    GET(r, machine);
    GET(r, seq);
    GET(r, clock_id);
    reply->ref = s->clock_sequence(host, machine, seq, clock_id);
    break;
  }
  case OP_CLAIM: {
    uint32_t clock;
    GET(r, clock);
    reply->flag = s->claim_trace_time(host, map_clock(rec, clock));
    break;
  }
  case OP_SNAPSHOT: {
    uint64_t n;
    GET(r, n);
    tm_clock_ref *clocks = g_new(tm_clock_ref, n ? n : 1);
    int64_t *values = g_new(int64_t, n ? n : 1);
    get(r, clocks, n * sizeof(*clocks));
    get(r, values, n * sizeof(*values));
    for (uint64_t i = 0; i < n; i++)
      clocks[i] = map_clock(rec, clocks[i]);
    reply->flag = s->add_clock_snapshot(host, clocks, values, (size_t)n);
    g_free(clocks);
    g_free(values);
    break;
  }
  case OP_REMOTE_SYNC:
    reply->flag = s->remote_clock_sync(host);
    break;
  case OP_MACHINE_EMBEDDED: {
    uint32_t raw;
    GET(r, raw);
    reply->ref = s->machine_embedded(host, raw);
    break;
  }
  case OP_MACHINE_SET_INFO: {
    uint32_t machine;
    tm_arg_value value;
    GET(r, machine);
    const char *column = get_cstr(r);
    GET(r, value);
    s->machine_set_info(host, machine, column, map_value(rec, value));
    break;
  }
  case OP_PROCESS: {
    uint32_t machine;
    int64_t pid;
    GET(r, machine);
    GET(r, pid);
    set_ref(rec, r, s->process(host, machine, pid));
    break;
  }
  case OP_THREAD: {
    uint32_t machine;
    int64_t pid, tid;
    GET(r, machine);
    GET(r, pid);
    GET(r, tid);
    set_ref(rec, r, s->thread(host, machine, pid, tid));
    break;
  }
  case OP_PROCESS_SET_NAME:
  case OP_THREAD_SET_NAME:
  case OP_PROCESS_SET_CMDLINE:
  case OP_PROCESS_SET_PARENT:
  case OP_TRACK_SET_PARENT: {
    uint32_t ref, v;
    GET(r, ref);
    GET(r, v);
    ref = map_ref(rec, ref);
    if (op == OP_PROCESS_SET_PARENT || op == OP_TRACK_SET_PARENT)
      v = map_ref(rec, v);
    if (op == OP_PROCESS_SET_NAME)
      s->process_set_name(host, ref, map_str(rec, v));
    else if (op == OP_THREAD_SET_NAME)
      s->thread_set_name(host, ref, map_str(rec, v));
    else if (op == OP_PROCESS_SET_CMDLINE)
      s->process_set_cmdline(host, ref, map_str(rec, v));
    else if (op == OP_PROCESS_SET_PARENT)
      s->process_set_parent(host, ref, v);
    else
      s->track_set_parent(host, ref, v);
    break;
  }
  case OP_PROCESS_ADD_ARG:
  case OP_THREAD_ADD_ARG:
  case OP_TRACK_ADD_SOURCE_ARG: {
    uint32_t ref;
    tm_str_id key;
    tm_arg_value value;
    GET(r, ref);
    GET(r, key);
    GET(r, value);
    ref = map_ref(rec, ref);
    key = map_str(rec, key);
    value = map_value(rec, value);
    if (op == OP_PROCESS_ADD_ARG)
      s->process_add_arg(host, ref, key, value);
    else if (op == OP_THREAD_ADD_ARG)
      s->thread_add_arg(host, ref, key, value);
    else
      s->track_add_source_arg(host, ref, key, value);
    break;
  }
  case OP_PROCESS_SET_UID: {
    uint32_t process;
    int64_t uid;
    GET(r, process);
    GET(r, uid);
    s->process_set_uid(host, map_ref(rec, process), uid);
    break;
  }
  case OP_TRACK_THREAD: {
    uint32_t thread;
    GET(r, thread);
    set_ref(rec, r, s->track_thread(host, map_ref(rec, thread)));
    break;
  }
  case OP_TRACK_INTERN: {
    tm_track_desc desc;
    tm_track_ref track = s->track_intern(host, get_desc(rec, r, &desc));
    reply->ref = track; /* a cpu track's was asked */
    set_ref(rec, r, track);
    break;
  }
  case OP_ARGS_ADD: {
    tm_str_id key;
    tm_arg_value value;
    GET(r, key);
    GET(r, value);
    s->args_add(host, map_str(rec, key), map_value(rec, value));
    break;
  }
  case OP_ARGS_ADD_STRING: {
    tm_str_id key;
    uint32_t type;
    uint64_t len;
    GET(r, key);
    GET(r, type);
    GET(r, len);
    s->args_add_string(host, map_str(rec, key), (tm_arg_type)type, (const char *)r->p,
                       (size_t)len);
    r->p += len;
    break;
  }
  case OP_ARGS_COMMIT: {
    uint32_t made;
    GET(r, made);
    tm_args_ref ref = s->args_commit(host);
    while (rec->args_map.len <= made)
      tm_vec_push(&rec->args_map, TM_NO_ARGS);
    rec->args_map.data[made] = ref;
    break;
  }
  case OP_SLICE_BEGIN:
  case OP_SLICE_END:
  case OP_SLICE_COMPLETE: {
    tm_slice_fields f;
    const tm_slice_fields *fp = get_fields(rec, r, &f);
    int64_t dur;
    GET(r, dur);
    if (op == OP_SLICE_BEGIN)
      s->slice_begin(host, fp);
    else if (op == OP_SLICE_END)
      s->slice_end(host, fp);
    else
      s->slice_complete(host, fp, dur);
    break;
  }
  case OP_COUNTER: {
    uint32_t track, clock, args;
    int64_t ts;
    double value;
    GET(r, track);
    GET(r, clock);
    GET(r, ts);
    GET(r, value);
    GET(r, args);
    s->counter(host, map_ref(rec, track), map_clock(rec, clock), ts, value, map_args(rec, args));
    break;
  }
  case OP_FLOW: {
    uint32_t track, clock, d, b, args;
    int64_t ts;
    uint64_t id;
    GET(r, track);
    GET(r, clock);
    GET(r, ts);
    GET(r, id);
    GET(r, d);
    GET(r, b);
    GET(r, args);
    s->flow(host, map_ref(rec, track), map_clock(rec, clock), ts, id, (tm_flow_direction)d, (tm_flow_binding)b,
            map_args(rec, args));
    break;
  }
  case OP_SCHED_SWITCH: {
    uint32_t clock, machine, cpu, prev, prev_state, next;
    int64_t ts;
    int32_t prio;
    GET(r, clock);
    GET(r, ts);
    GET(r, machine);
    GET(r, cpu);
    GET(r, prev);
    GET(r, prev_state);
    GET(r, next);
    GET(r, prio);
    s->sched_switch(host, map_clock(rec, clock), ts, machine, cpu, map_ref(rec, prev), map_str(rec, prev_state),
                    map_ref(rec, next), prio);
    break;
  }
  case OP_SCHED_WAKING: {
    uint32_t clock, machine, cpu, thread, waker;
    int64_t ts;
    GET(r, clock);
    GET(r, ts);
    GET(r, machine);
    GET(r, cpu);
    GET(r, thread);
    GET(r, waker);
    s->sched_waking(host, map_clock(rec, clock), ts, machine, cpu, map_ref(rec, thread), map_ref(rec, waker));
    break;
  }
  case OP_MAPPING: {
    tm_str_id name, build_id;
    uint64_t start, end, offset, bias;
    GET(r, name);
    GET(r, build_id);
    GET(r, start);
    GET(r, end);
    GET(r, offset);
    GET(r, bias);
    set_ref(rec, r,
            s->mapping(host, map_str(rec, name), map_str(rec, build_id), start, end, offset, bias));
    break;
  }
  case OP_FRAME: {
    tm_str_id name;
    uint32_t mapping;
    uint64_t rel_pc;
    GET(r, name);
    GET(r, mapping);
    GET(r, rel_pc);
    set_ref(rec, r, s->frame(host, map_str(rec, name), map_ref(rec, mapping), rel_pc));
    break;
  }
  case OP_CALLSITE: {
    uint32_t parent, frame;
    GET(r, parent);
    GET(r, frame);
    set_ref(rec, r, s->callsite(host, map_ref(rec, parent), map_ref(rec, frame)));
    break;
  }
  case OP_SAMPLE: {
    uint32_t clock, thread, callsite;
    int64_t ts;
    int32_t cpu;
    GET(r, clock);
    GET(r, ts);
    GET(r, thread);
    GET(r, callsite);
    GET(r, cpu);
    s->sample(host, map_clock(rec, clock), ts, map_ref(rec, thread), map_ref(rec, callsite), cpu);
    break;
  }
  case OP_METADATA_INT:
  case OP_METADATA_STRING:
  case OP_STAT_ADD:
  case OP_STAT_SET_INDEXED:
  case OP_MACHINE_STAT_SET_INDEXED:
  case OP_MACHINE_METADATA_INT:
  case OP_MACHINE_METADATA_STRING: {
    uint32_t machine;
    int64_t idx, value;
    GET(r, machine);
    const char *name = get_cstr(r);
    GET(r, idx);
    GET(r, value);
    switch (op) {
    case OP_METADATA_INT:
      s->metadata_set_int(host, name, value);
      break;
    case OP_METADATA_STRING:
      s->metadata_set_string(host, name, map_str(rec, (tm_str_id)value));
      break;
    case OP_STAT_ADD:
      s->stat_add(host, name, value);
      break;
    case OP_STAT_SET_INDEXED:
      s->stat_set_indexed(host, name, idx, value);
      break;
    case OP_MACHINE_STAT_SET_INDEXED:
      s->machine_stat_set_indexed(host, machine, name, idx, value);
      break;
    case OP_MACHINE_METADATA_INT:
      s->machine_metadata_set_int(host, machine, name, value);
      break;
    default:
      s->machine_metadata_set_string(host, machine, name, map_str(rec, (tm_str_id)value));
      break;
    }
    break;
  }
  case OP_IMPORT_LOG: {
    const char *name = get_cstr(r);
    int64_t offset;
    uint64_t n;
    uint32_t stride;
    GET(r, offset);
    GET(r, n);
    GET(r, stride);
    uint8_t *args = n ? g_malloc((size_t)stride * n) : NULL;
    get(r, args, (size_t)stride * n);
    bool has_key = stride >= offsetof(tm_import_log_arg, key) + sizeof(const char *);
    bool has_string = stride >= offsetof(tm_import_log_arg, string_len) + sizeof(size_t);
    for (size_t i = 0; i < n; i++) {
      tm_import_log_arg *a = (tm_import_log_arg *)(args + (size_t)stride * i);
      if (has_key)
        a->key = get_cstr(r);
      if (has_string) {
        uint64_t l;
        GET(r, l);
        bool present = l >> 63;
        size_t len = (size_t)(l & ~(UINT64_C(1) << 63));
        a->string = present ? (const char *)r->p : NULL;
        r->p += len;
      }
    }
    s->import_log(host, name, offset, (const tm_import_log_arg *)args, (size_t)n);
    g_free(args);
    break;
  }
  case OP_REPORT_ERROR: {
    int64_t offset;
    GET(r, offset);
    s->report_error(host, offset, get_cstr(r));
    break;
  }
  case OP_TRACK_ASYNC: {
    tm_track_desc desc;
    const tm_track_desc *d = get_desc(rec, r, &desc);
    uint64_t cookie;
    uint32_t flags;
    GET(r, cookie);
    GET(r, flags);
    set_ref(rec, r, s->track_async(host, d, cookie, flags));
    break;
  }
  case OP_FRAME_TIMELINE_BEGIN: {
    tm_slice_fields f;
    const tm_slice_fields *fp = get_fields(rec, r, &f);
    uint8_t present;
    tm_frame_timeline_fields frame;
    GET(r, present);
    GET(r, frame);
    frame.process = map_ref(rec, frame.process);
    frame.layer_name = map_str(rec, frame.layer_name);
    frame.present_type = map_str(rec, frame.present_type);
    frame.jank_type = map_str(rec, frame.jank_type);
    frame.jank_severity_type = map_str(rec, frame.jank_severity_type);
    frame.prediction_type = map_str(rec, frame.prediction_type);
    frame.jank_tag = map_str(rec, frame.jank_tag);
    s->frame_timeline_begin(host, fp, present ? &frame : NULL);
    break;
  }
  case OP_FTRACE_EVENT: {
    uint32_t clock, machine, cpu, thread, name, args;
    int64_t ts;
    GET(r, clock);
    GET(r, ts);
    GET(r, machine);
    GET(r, cpu);
    GET(r, thread);
    GET(r, name);
    GET(r, args);
    s->ftrace_event(host, map_clock(rec, clock), ts, machine, cpu, map_ref(rec, thread), map_str(rec, name),
                    map_args(rec, args));
    break;
  }
  case OP_ANDROID_LOG: {
    uint32_t clock, thread, prio, tag, msg, args;
    int64_t ts;
    GET(r, clock);
    GET(r, ts);
    GET(r, thread);
    GET(r, prio);
    GET(r, tag);
    GET(r, msg);
    GET(r, args);
    s->android_log(host, map_clock(rec, clock), ts, map_ref(rec, thread), prio, map_str(rec, tag), map_str(rec, msg),
                   map_args(rec, args));
    break;
  }
  case OP_PACKAGE: {
    uint32_t machine, name;
    int64_t uid, version;
    int32_t debuggable, profileable;
    GET(r, machine);
    GET(r, name);
    GET(r, uid);
    GET(r, debuggable);
    GET(r, profileable);
    GET(r, version);
    s->package(host, machine, map_str(rec, name), uid, debuggable, profileable, version);
    break;
  }
  case OP_THREAD_LIFETIME: {
    uint32_t clock, thread, is_end;
    int64_t ts;
    GET(r, clock);
    GET(r, ts);
    GET(r, thread);
    GET(r, is_end);
    s->thread_lifetime(host, map_clock(rec, clock), ts, map_ref(rec, thread), is_end);
    break;
  }
  case OP_SCHED_BLOCKED_REASON: {
    uint32_t clock, thread, function;
    int64_t ts;
    int32_t io_wait;
    GET(r, clock);
    GET(r, ts);
    GET(r, thread);
    GET(r, io_wait);
    GET(r, function);
    s->sched_blocked_reason(host, map_clock(rec, clock), ts, map_ref(rec, thread), io_wait,
                            map_str(rec, function));
    break;
  }
  case OP_BUDGET: {
    uint32_t which;
    GET(r, which);
    reply->value = s->budget(host, which);
    break;
  }
  case OP_ARGS_ADD_CALLSITE: {
    uint32_t callsite;
    tm_str_id key;
    GET(r, callsite);
    GET(r, key);
    s->args_add_callsite(host, map_str(rec, key), map_ref(rec, callsite));
    break;
  }
  case OP_REFUSED: {
    const char *call = get_cstr(r);
    host_refuse_call(host, call, get_cstr(r));
    break;
  }
  case OP_FED: {
    uint32_t status;
    uint64_t len;
    GET(r, status);
    GET(r, len);
    rec->fed(rec->fed_ctx, host, (tm_status)status, (size_t)len);
    if (rec->halt != NULL && rec->halt(rec->fed_ctx))
      rec->halted = rec->stop = true;
    break;
  }
  case OP_MARK: {
    uint8_t mark;
    GET(r, mark);
    rec->mark = mark;
    if (mark >= rec->stop_mark)
      rec->stop = true;
    break;
  }
  default:
    g_assert_not_reached();
  }
  return r->p;
}

/* Replays from the replay position to what is published (read under the
 * lock by the caller, or the recording's own when detached). */
static void replay_to(reader_recording *rec, segment *until_seg, size_t until_len) {
  while (rec->head) {
    segment *seg = rec->head;
    size_t end = seg == until_seg ? until_len : seg->len;
    const uint8_t *p = seg->data + rec->read_len;
    while ((size_t)(p - seg->data) < end) {
      p = replay_one(rec, p);
      if (rec->stop) { /* a prepared recording's mark, or a halt */
        rec->read_len = (size_t)(p - seg->data);
        return;
      }
    }
    rec->read_len = (size_t)(p - seg->data);
    if (seg == until_seg)
      return;
    /* Passed: the worker writes into a later segment. */
    rec->head = seg->next;
    rec->read_len = 0;
    release_held(rec, seg->cap);
    g_free(seg);
  }
}

static void replay_published(reader_recording *rec) {
  replay_to(rec, rec->published_seg, rec->published_len);
}

/* --- the worker thread ----------------------------------------------------- */

static void run_job(reader_recording *rec, job_kind job) {
  const tm_reader_descriptor *d = &rec->host->reader->descriptor;
  switch (job) {
  case JOB_OPEN:
    rec->reader_state =
        d->open(&recording_services, rec->host, rec->config, rec->config_len);
    break;
  case JOB_FEED: {
    rec->status = d->feed(rec->reader_state, rec->data, rec->len);
    uint32_t status = rec->status;
    uint64_t len = rec->len;
    writer w = begin(rec, OP_FED, 12);
    PUT(&w, status);
    PUT(&w, len);
    done(rec, w, false);
    break;
  }
  case JOB_FINISH:
    rec->status = d->finish(rec->reader_state);
    break;
  case JOB_CLOSE:
    d->close(rec->reader_state);
    rec->reader_state = NULL;
    break;
  default:
    break;
  }
}

static void *worker_main(void *arg) {
  reader_worker *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (w->job == JOB_NONE)
      pthread_cond_wait(&w->worker_wakes, &w->lock);
    job_kind job = w->job;
    if (job == JOB_STOP)
      break;
    reader_recording *rec = w->rec;
    pthread_mutex_unlock(&w->lock);
    run_job(rec, job);
    pthread_mutex_lock(&w->lock);
    publish_locked(rec);
    w->job = JOB_NONE;
    w->job_done = true;
    pthread_cond_signal(&w->caller_wakes);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* A worker running `thread_main`, with a queue of prepared recordings if
 * `queued` (the prefetch worker); NULL if the thread cannot start. */
static reader_worker *worker_start(void *(*thread_main)(void *), bool queued,
                                   size_t ahead_limit) {
  reader_worker *w = g_new0(reader_worker, 1);
  w->ahead_limit = ahead_limit;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->worker_wakes, NULL);
  pthread_cond_init(&w->caller_wakes, NULL);
  if (queued)
    w->queue = g_ptr_array_new();
  if (pthread_create(&w->thread, NULL, thread_main, w) != 0) {
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->worker_wakes);
    pthread_cond_destroy(&w->caller_wakes);
    if (w->queue)
      g_ptr_array_free(w->queue, TRUE);
    g_free(w);
    return NULL;
  }
  return w;
}

reader_worker *reader_worker_new(void) { return worker_start(worker_main, false, 0); }

void reader_worker_free(reader_worker *w) {
  if (!w)
    return;
  pthread_mutex_lock(&w->lock);
  w->job = JOB_STOP;
  w->stop = true;
  pthread_cond_broadcast(&w->worker_wakes);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_mutex_destroy(&w->lock);
  pthread_cond_destroy(&w->worker_wakes);
  pthread_cond_destroy(&w->caller_wakes);
  if (w->queue)
    g_ptr_array_free(w->queue, TRUE);
  g_free(w);
}

/* Runs `job` on the worker; meanwhile replays what it publishes and
 * answers its questions. Returns when the job is done; its last calls
 * may still wait to be replayed. */
static void run_on_worker(reader_recording *rec, job_kind job) {
  reader_worker *w = rec->worker;
  if (rec->detached || !w) {
    run_job(rec, job); /* each call replayed as it is made */
    return;
  }
  pthread_mutex_lock(&w->lock);
  w->rec = rec;
  w->job = job;
  w->job_done = false;
  pthread_cond_signal(&w->worker_wakes);
  for (;;) {
    segment *seg = rec->published_seg;
    size_t len = rec->published_len;
    bool question = w->question, job_done = w->job_done;
    bool behind = rec->head && (rec->head != seg || rec->read_len < len);
    if (behind || question) {
      pthread_mutex_unlock(&w->lock);
      replay_to(rec, seg, len);
      pthread_mutex_lock(&w->lock);
      if (question) { /* its record was the last published: answered */
        w->question = false;
        pthread_cond_signal(&w->worker_wakes);
      }
      continue;
    }
    if (job_done)
      break;
    pthread_cond_wait(&w->caller_wakes, &w->lock);
  }
  w->job_done = false;
  pthread_mutex_unlock(&w->lock);
}

/* What every recording starts with, run on a worker now or prepared for
 * the prefetch worker: its private pool and ids, each map's entry 0. */
static reader_recording *recording_alloc(reader_worker *worker, reader_fed_fn fed, void *ctx,
                                         tm_machine_ref machine_default) {
  reader_recording *rec = g_new0(reader_recording, 1);
  rec->worker = worker;
  rec->fed = fed;
  rec->fed_ctx = ctx;
  rec->machine_default = machine_default;
  rec->stop_mark = MARK_NEVER;
  rec->strings = string_pool_new();
  rec->own_refs = g_hash_table_new_full(call_key_hash, call_key_equal, g_free, NULL);
  tm_vec_push(&rec->str_map, 0); /* the NULL string */
  tm_vec_push(&rec->ref_map, 0);  /* no ref */
  tm_vec_push(&rec->args_map, TM_NO_ARGS);
  return rec;
}

reader_recording *reader_recording_new(reader_worker *worker, tm_host *host, reader_fed_fn fed,
                                       void *ctx) {
  reader_recording *rec =
      recording_alloc(worker, fed, ctx, host_services_v2.machine_default(host));
  rec->host = host;
  rec->detached = true;
  return rec;
}

static void free_segments(reader_recording *rec) {
  while (rec->head) {
    segment *next = rec->head->next;
    g_free(rec->head);
    rec->head = next;
  }
  rec->tail = rec->published_seg = NULL;
  rec->read_len = rec->published_len = 0;
}

void *reader_recording_open(reader_recording *rec, const uint8_t *config, size_t config_len) {
  rec->config = config;
  rec->config_len = config_len;
  run_on_worker(rec, JOB_OPEN);
  reader_recording_drain(rec);
  return rec->reader_state;
}

tm_status reader_recording_feed(reader_recording *rec, const uint8_t *data, size_t len) {
  rec->data = data;
  rec->len = len;
  /* Every call so far is replayed (detached): the worker takes over. */
  if (rec->feeds++ == 1 && rec->worker)
    rec->detached = false;
  run_on_worker(rec, JOB_FEED);
  rec->data = NULL;
  return rec->status;
}

static bool replay_prepared_until(reader_recording *rec, uint8_t mark);
static void wait_prepared_done(reader_recording *rec);

void reader_recording_drain(reader_recording *rec) {
  if (rec->prepared)
    return; /* replayed step by step, up to its marks */
  /* No job runs: what is published is all there is. */
  replay_published(rec);
}

tm_status reader_recording_finish(reader_recording *rec) {
  if (rec->prepared) {
    replay_prepared_until(rec, MARK_FINISHED);
    return rec->finish_status;
  }
  reader_recording_drain(rec);
  run_on_worker(rec, JOB_FINISH);
  reader_recording_drain(rec);
  return rec->status;
}

void reader_recording_close(reader_recording *rec) {
  if (rec->prepared) {
    replay_prepared_until(rec, MARK_CLOSED);
    wait_prepared_done(rec);
    release_held(rec, SIZE_MAX);
    rec->detached = true;
    rec->worker = NULL; /* done with it: the worker may go first */
  } else {
    reader_recording_drain(rec);
    run_on_worker(rec, JOB_CLOSE);
    reader_recording_detach(rec);
  }
  /* Closed: every call is replayed, and nothing interns or commits any
   * more. (Tens of thousands of small files keep nothing.) */
  free_segments(rec);
  string_pool_free(rec->strings);
  rec->strings = NULL;
  g_clear_pointer(&rec->own_refs, g_hash_table_destroy);
  tm_vec_free(&rec->str_map);
  tm_vec_free(&rec->args_map);
  tm_vec_free(&rec->ref_map);
}

bool reader_recording_failed(const reader_recording *rec) { return rec->status != TM_OK; }

void reader_recording_detach(reader_recording *rec) {
  if (rec->prepared) {
    /* The import stopped mid-file: what the worker did past the replay is
     * not the serial run's; its reader is closed there. */
    reader_recording_cancel(rec);
    release_held(rec, SIZE_MAX);
    rec->detached = true;
    rec->worker = NULL;
    return;
  }
  reader_recording_drain(rec);
  rec->detached = true;
}

void reader_recording_free(reader_recording *rec) {
  if (!rec)
    return;
  if (rec->prepared) {
    reader_recording_cancel(rec);
    release_held(rec, SIZE_MAX);
    g_free(rec->proxy);
  }
  free_segments(rec);
  string_pool_free(rec->strings);
  if (rec->own_refs)
    g_hash_table_destroy(rec->own_refs);
  tm_vec_free(&rec->str_map);
  tm_vec_free(&rec->args_map);
  tm_vec_free(&rec->ref_map);
  g_free(rec);
}

/* --- prepared files (the prefetch worker) ---------------------------------- */

static bool cancelled(const reader_recording *rec) {
  return __atomic_load_n(&rec->cancel, __ATOMIC_ACQUIRE);
}

/* A mark, published at once (the calling thread may wait for it). */
static void put_mark(reader_recording *rec, uint8_t mark) {
  writer w = begin(rec, OP_MARK, 1);
  PUT(&w, mark);
  commit(rec, w);
  reader_worker *wk = rec->worker;
  pthread_mutex_lock(&wk->lock);
  publish_locked(rec);
  pthread_cond_signal(&wk->caller_wakes);
  pthread_mutex_unlock(&wk->lock);
}

/* What sink_chunk() does with a chunk: fed only to a reader that opened
 * and has not failed. */
static void prepared_chunk(void *ctx, const uint8_t *data, size_t len) {
  reader_recording *rec = ctx;
  if (!rec->reader_state || rec->status != TM_OK)
    return;
  rec->status = rec->reader->descriptor.feed(rec->reader_state, data, len);
  uint32_t status = rec->status;
  uint64_t n = len;
  writer w = begin(rec, OP_FED, 12);
  PUT(&w, status);
  PUT(&w, n);
  done(rec, w, false);
}

/* sink_wants_more(): a reader open and not failed (or a file given up). */
static bool prepared_wants_more(void *ctx) {
  reader_recording *rec = ctx;
  return rec->reader_state && rec->status == TM_OK && !cancelled(rec);
}

/* The session's steps for one file (sink_begin, sink_chunk, sink_end), as
 * far as the reader goes: finish only when no feed failed, as
 * fail_host() would have kept it from being called. */
static void run_file(reader_recording *rec) {
  const tm_reader_descriptor *d = &rec->reader->descriptor;
  void *state = d->open(&recording_services, rec->proxy, rec->config, rec->config_len);
  rec->reader_state = state;
  rec->status = TM_OK;
  put_mark(rec, MARK_OPENED);
  rec->stream(rec->source, prepared_chunk, prepared_wants_more, rec);
  put_mark(rec, MARK_STREAM_END);
  rec->finish_status = TM_OK;
  if (state && rec->status == TM_OK && !cancelled(rec))
    rec->finish_status = d->finish(state);
  put_mark(rec, MARK_FINISHED);
  if (state)
    d->close(state);
  put_mark(rec, MARK_CLOSED);
}

static void *prefetch_main(void *arg) {
  reader_worker *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (!w->stop && (w->next >= w->queue->len || (w->max_files && w->taken >= w->max_files)))
      pthread_cond_wait(&w->worker_wakes, &w->lock);
    if (w->stop)
      break;
    reader_recording *rec = g_ptr_array_index(w->queue, w->next);
    w->next++;
    if (rec == NULL || rec->pstate != PREP_PENDING)
      continue;
    w->taken++;
    rec->pstate = PREP_RUNNING;
    w->rec = rec;
    pthread_cond_broadcast(&w->caller_wakes);
    pthread_mutex_unlock(&w->lock);
    run_file(rec);
    pthread_mutex_lock(&w->lock);
    publish_locked(rec);
    rec->pstate = PREP_DONE;
    g_ptr_array_index(w->queue, rec->queue_index) = NULL;
    w->rec = NULL;
    pthread_cond_broadcast(&w->caller_wakes);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

reader_worker *reader_prefetch_new(size_t ahead_limit, unsigned max_files) {
  reader_worker *w =
      worker_start(prefetch_main, true, ahead_limit ? ahead_limit : PREFETCH_AHEAD_BYTES);
  if (w) { /* before any file is queued, which the lock orders */
    pthread_mutex_lock(&w->lock);
    w->max_files = max_files;
    pthread_mutex_unlock(&w->lock);
  }
  return w;
}

reader_recording *reader_recording_prepare(reader_worker *prefetch, const tm_reader *reader,
                                           tm_machine_ref machine, const tm_budgets *budgets,
                                           const uint8_t *config, size_t config_len,
                                           reader_stream_fn stream, void *source,
                                           reader_fed_fn fed, reader_halt_fn halt, void *ctx) {
  reader_recording *rec = recording_alloc(prefetch, fed, ctx, machine);
  rec->halt = halt;
  rec->prepared = true;
  rec->reader = reader;
  rec->proxy = g_new0(tm_host, 1);
  rec->proxy->recording = rec;
  rec->budgets = budgets;
  rec->config = config;
  rec->config_len = config_len;
  rec->stream = stream;
  rec->source = source;
  pthread_mutex_lock(&prefetch->lock);
  rec->pstate = PREP_PENDING;
  rec->queue_index = prefetch->queue->len;
  g_ptr_array_add(prefetch->queue, rec);
  pthread_cond_signal(&prefetch->worker_wakes);
  pthread_mutex_unlock(&prefetch->lock);
  return rec;
}

bool reader_recording_is_prepared(const reader_recording *rec) { return rec->prepared; }

tm_machine_ref reader_recording_machine(const reader_recording *rec) {
  return rec->machine_default;
}

/* Replays the published log up to `mark` (or a halt), answering the
 * worker's questions on the way; waits for the worker where the log is
 * not written yet. False once halted. */
static bool replay_prepared_until(reader_recording *rec, uint8_t mark) {
  reader_worker *w = rec->worker;
  rec->stop_mark = mark;
  rec->stop = false;
  pthread_mutex_lock(&w->lock);
  while (rec->mark < mark && !rec->halted) {
    segment *seg = rec->published_seg;
    size_t len = rec->published_len;
    bool question = w->rec == rec && w->question;
    bool behind = rec->head && (rec->head != seg || rec->read_len < len);
    if (behind) {
      pthread_mutex_unlock(&w->lock);
      replay_to(rec, seg, len);
      pthread_mutex_lock(&w->lock);
      continue;
    }
    if (question) { /* its record was the last published: answered */
      w->question = false;
      pthread_cond_signal(&w->worker_wakes);
      continue;
    }
    if (rec->pstate != PREP_RUNNING)
      break; /* done (every mark written) or cancelled */
    pthread_cond_wait(&w->caller_wakes, &w->lock);
  }
  pthread_mutex_unlock(&w->lock);
  rec->stop_mark = MARK_NEVER;
  rec->stop = false;
  return !rec->halted;
}

static void wait_prepared_done(reader_recording *rec) {
  reader_worker *w = rec->worker;
  pthread_mutex_lock(&w->lock);
  while (rec->pstate == PREP_RUNNING)
    pthread_cond_wait(&w->caller_wakes, &w->lock);
  pthread_mutex_unlock(&w->lock);
}

bool reader_recording_claim(reader_recording *rec, tm_host *host, bool wait,
                            void **reader_state) {
  reader_worker *w = rec->worker;
  pthread_mutex_lock(&w->lock);
  /* Every file queued before this one is done or given up, so the worker
   * takes this one next. */
  while (wait && rec->pstate == PREP_PENDING)
    pthread_cond_wait(&w->caller_wakes, &w->lock);
  bool started = rec->pstate == PREP_RUNNING || rec->pstate == PREP_DONE;
  if (rec->pstate == PREP_PENDING) {
    rec->pstate = PREP_CANCELLED;
    g_ptr_array_index(w->queue, rec->queue_index) = NULL;
  }
  pthread_mutex_unlock(&w->lock);
  if (!started)
    return false;
  rec->host = host;
  replay_prepared_until(rec, MARK_OPENED);
  *reader_state = rec->reader_state;
  return true;
}

bool reader_recording_replay_stream(reader_recording *rec) {
  return replay_prepared_until(rec, MARK_STREAM_END);
}

void reader_recording_cancel(reader_recording *rec) {
  reader_worker *w = rec->worker;
  rec->halted = true; /* nothing more is replayed */
  if (!w)
    return; /* closed or detached: the worker is done with it */
  pthread_mutex_lock(&w->lock);
  if (rec->pstate == PREP_PENDING) {
    rec->pstate = PREP_CANCELLED;
    g_ptr_array_index(w->queue, rec->queue_index) = NULL;
  } else if (rec->pstate == PREP_RUNNING) {
    __atomic_store_n(&rec->cancel, true, __ATOMIC_RELEASE);
    if (w->rec == rec && w->question) {
      memset(&rec->reply, 0, sizeof rec->reply);
      w->question = false;
    }
    pthread_cond_broadcast(&w->worker_wakes); /* an answer, or room */
    while (rec->pstate == PREP_RUNNING)
      pthread_cond_wait(&w->caller_wakes, &w->lock);
  }
  pthread_mutex_unlock(&w->lock);
}
