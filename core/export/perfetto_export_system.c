/*
 * The Perfetto export's system data: per machine SystemInfo, clocks,
 * the process tree and packages; and the event sources for scheduling
 * (ftrace bundles), callstack samples (PerfSample: perf samples, and the
 * cpu profile and Instruments samples, which read back as perf samples)
 * and android logs.
 *
 * Scheduling is rebuilt as the events the sched builder
 * (core/model/sched_builder.c) turned into rows, so that a reader running
 * the same rules gets the same rows back:
 * - every sched row was opened by a sched_switch at its ts on its cpu,
 *   whose next thread is the row's, next_prio its priority, and whose prev
 *   thread and prev_state are the cpu's row before it (its end_state);
 * - such a switch made, in this order, the prev thread's new state row
 *   (unless prev is the idle thread) and the next thread's Running row
 *   (unless next is idle); every other thread_state row was made by a
 *   wakeup ("R", with its waker);
 * - rows are numbered in the order they were made, so walking the sched
 *   rows and the thread_state rows together, each switch is found where
 *   its first state row is, and the state rows before it are wakeups.
 * The first switch on a cpu has no row before it: its prev thread is the
 * one whose state row (same ts, no cpu, no waker) comes right before the
 * next thread's Running row, else the idle thread. A sleeping row's io_wait
 * comes back as a sched_blocked_reason right after its switch; its
 * blocked_function cannot (the event carries an address, not a name).
 *
 * Events go in ftrace bundles in the order they were made: a bundle holds
 * one cpu's switches and whatever wakeups come between them (a wakeup's
 * cpu is not a column; its target_cpu is the bundle's), so a reader sees
 * every event in the original order.
 */
#include <string.h>

#include "export/perfetto_export_internal.h"
#include "model/sched_builder.h"
#include "record/encoder.h"

#define BUNDLE_LIMIT (32u << 10)

/* FtraceEvent fields. */
enum {
  FE_TIMESTAMP = 1,
  FE_PID = 2,
  FE_SCHED_SWITCH = 4,
  FE_SCHED_BLOCKED_REASON = 18,
  FE_SCHED_WAKING = 20,
};

typedef struct realtime_reading {
  int64_t ts;    /* trace time */
  int64_t value; /* REALTIME */
} realtime_reading;

typedef TM_VEC(realtime_reading) reading_vec;

/* One machine's ftrace bundle being filled. */
typedef struct bundle {
  GByteArray *events; /* encoded FtraceEvent fields (field 2 each) */
  uint32_t cpu;
  bool open;
} bundle;

typedef enum sched_kind { SCHED_NONE, SCHED_SWITCH, SCHED_WAKING, SCHED_SKIP } sched_kind;

typedef struct sched_step {
  sched_kind kind;
  int64_t ts;
  uint32_t sched_row;  /* SCHED_SWITCH */
  uint32_t prev_utid;  /* SCHED_SWITCH: TM_NULL_ID for idle */
  uint32_t prev_state; /* the prev thread's new state row, or TM_NULL_ID */
  uint32_t state_row;  /* SCHED_WAKING */
  uint32_t consumed;   /* thread_state rows it accounts for */
} sched_step;

typedef struct sched_source {
  uint32_t next_sched, next_state;
  uint32_t *cpu_row; /* by ucpu: its latest sched row, or TM_NULL_ID */
  uint32_t *idle_utid; /* by machine: an idle thread, or TM_NULL_ID */
  sched_step step;   /* the next one, valid when kind != SCHED_NONE */
  bundle *bundles;   /* by machine */
  tm_str_id running, runnable;
} sched_source;

/* perf_sample, cpu_profile_stack_sample, instruments_sample. */
#define SAMPLE_TABLES 3

typedef struct sample_source {
  uint32_t next[SAMPLE_TABLES];
  GArray *frames; /* scratch: frame ids of one callstack */
} sample_source;

typedef struct log_source {
  uint32_t next;
} log_source;

struct pe_system {
  size_t n_machines;
  reading_vec *realtime; /* by machine: REALTIME readings by ts */
  bool *has_logs;        /* by machine */
  sched_source sched;
  sample_source samples;
  log_source logs;
};

static const tm_str_id *thread_name(const pe_state *pe, uint32_t utid) {
  return &pe->model->threads.data[utid].name;
}

static void put_str(const pe_state *pe, tmr_enc *e, uint32_t field, tm_str_id id) {
  const char *s = pe_str(pe, id);
  if (s)
    tmr_enc_bytes(e, field, s, string_pool_length(pe->model->strings, id));
}

/* --- clocks ----------------------------------------------------------------------- */

static gint reading_cmp(gconstpointer a, gconstpointer b) {
  const realtime_reading *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->value < y->value ? -1 : x->value > y->value;
}

static void collect_realtime(pe_state *pe, pe_system *sys) {
  const tm_model *model = pe->model;
  size_t n_machines = model->machines.len;
  sys->realtime = g_new0(reading_vec, n_machines + 1);
  sys->has_logs = g_new0(bool, n_machines + 1);
  for (size_t i = 0; i < model->clock_snapshots.len; i++) {
    const tm_clock_snapshot_row *row = &model->clock_snapshots.data[i];
    if (row->clock_id != PE_CLOCK_REALTIME || row->machine_id >= n_machines)
      continue;
    realtime_reading r = {row->ts, row->clock_value};
    tm_vec_push(&sys->realtime[row->machine_id], r);
  }
  for (size_t m = 0; m < n_machines; m++) {
    reading_vec *v = &sys->realtime[m];
    if (v->len > 1)
      qsort(v->data, v->len, sizeof *v->data, reading_cmp);
    size_t out = 0;
    for (size_t i = 0; i < v->len; i++)
      if (out == 0 || reading_cmp(&v->data[out - 1], &v->data[i]) != 0)
        v->data[out++] = v->data[i];
    v->len = out;
  }
  for (size_t i = 0; i < model->android_logs.len; i++) {
    uint32_t utid = model->android_logs.data[i].utid;
    /* A log without a thread is on the host machine of its file; the
     * row does not say which: the first machine then. */
    uint32_t m = utid < model->threads.len ? model->threads.data[utid].machine_id : 0;
    if (m < n_machines)
      sys->has_logs[m] = true;
  }
  /* A machine whose logs must be placed but that has no REALTIME reading
   * gets REALTIME = trace time (the logs' REALTIME is then their trace
   * time, which is where the merge put them). */
  for (size_t m = 0; m < n_machines; m++)
    if (sys->has_logs[m] && sys->realtime[m].len == 0) {
      realtime_reading r = {0, 0};
      tm_vec_push(&sys->realtime[m], r);
    }
}

/* REALTIME at trace time `ts` on `machine`, through its reading at or
 * before ts (else its first), as the reader converts back. */
static int64_t realtime_at(const pe_system *sys, uint32_t machine, int64_t ts) {
  const reading_vec *v = &sys->realtime[machine];
  if (v->len == 0)
    return ts;
  size_t lo = 0, hi = v->len;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (v->data[mid].ts <= ts)
      lo = mid;
    else
      hi = mid;
  }
  return v->data[lo].value + (ts - v->data[lo].ts);
}

static void put_clock(tmr_enc *e, uint32_t field, uint32_t clock_id, int64_t value) {
  uint8_t *c = tmr_enc_nest_begin(e, field);
  tmr_enc_uint(e, 1, clock_id);
  tmr_enc_uint(e, 2, (uint64_t)value);
  tmr_enc_nest_end(e, c);
}

typedef struct clock_ctx {
  int64_t boottime;
  bool has_realtime;
  int64_t realtime;
} clock_ctx;

static void build_snapshot(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const clock_ctx *c = p;
  uint8_t *snap = tmr_enc_nest_begin(e, PACKET_CLOCK_SNAPSHOT);
  put_clock(e, 1, PE_CLOCK_BOOTTIME, c->boottime);
  if (c->has_realtime)
    put_clock(e, 1, PE_CLOCK_REALTIME, c->realtime);
  tmr_enc_uint(e, 2, PE_CLOCK_BOOTTIME); /* primary_trace_clock */
  tmr_enc_nest_end(e, snap);
}

/* Two equal entries: a round trip of no delay whose offset is 0 for every
 * clock both sides read (BOOTTIME), whatever rounding the reader uses. */
static void build_remote_sync(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const clock_ctx *c = p;
  int64_t boottime = c->boottime > 0 ? c->boottime : 1; /* 0 reads as absent */
  uint8_t *sync = tmr_enc_nest_begin(e, PACKET_REMOTE_CLOCK_SYNC);
  for (int i = 0; i < 2; i++) {
    uint8_t *entry = tmr_enc_nest_begin(e, 1);
    uint8_t *client = tmr_enc_nest_begin(e, 2);
    put_clock(e, 1, PE_CLOCK_BOOTTIME, boottime);
    if (c->has_realtime)
      put_clock(e, 1, PE_CLOCK_REALTIME, c->realtime + (boottime - c->boottime));
    tmr_enc_nest_end(e, client);
    uint8_t *host = tmr_enc_nest_begin(e, 3);
    put_clock(e, 1, PE_CLOCK_BOOTTIME, boottime);
    tmr_enc_nest_end(e, host);
    tmr_enc_nest_end(e, entry);
  }
  tmr_enc_nest_end(e, sync);
}

static void write_clocks(pe_state *pe, uint32_t machine) {
  tmr_sequence *seq = pe_machine_sequence(pe, machine);
  const reading_vec *v = &pe->system->realtime[machine];
  bool host = machine == pe->host_machine;
  tmr_packet_build build = host ? build_snapshot : build_remote_sync;
  if (v->len == 0) {
    clock_ctx c = {0, false, 0};
    pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build, &c);
    return;
  }
  for (size_t i = 0; i < v->len; i++) {
    clock_ctx c = {v->data[i].ts, true, v->data[i].value};
    pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build, &c);
  }
}

/* --- machine identity ---------------------------------------------------------------- */

typedef struct machine_ctx {
  pe_state *pe;
  uint32_t machine;
} machine_ctx;

static uint32_t machine_cpus(const pe_state *pe, uint32_t machine) {
  uint32_t n = 0;
  for (size_t c = 0; c < pe->model->cpus.len; c++)
    if (pe->model->cpus.data[c].machine_id == machine && pe->model->cpus.data[c].cpu + 1 > n)
      n = pe->model->cpus.data[c].cpu + 1;
  return n;
}

static void build_system_info(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const machine_ctx *c = p;
  const pe_state *pe = c->pe;
  const tm_machine_row *m = &pe->model->machines.data[c->machine];
  uint8_t *info = tmr_enc_nest_begin(e, PACKET_SYSTEM_INFO);
  if (m->sysname || m->release || m->version || m->arch) {
    uint8_t *uts = tmr_enc_nest_begin(e, 1);
    put_str(pe, e, 1, m->sysname);
    put_str(pe, e, 2, m->version);
    put_str(pe, e, 3, m->release);
    put_str(pe, e, 4, m->arch);
    tmr_enc_nest_end(e, uts);
  }
  put_str(pe, e, 2, m->android_build_fingerprint);
  if (m->android_sdk_version != TM_NULL_INT64)
    tmr_enc_uint(e, 5, (uint64_t)m->android_sdk_version);
  /* num_cpus only as the machine said it: cpu rows come back with the
   * events on them. */
  if (m->num_cpus != TM_NULL_INT64 && m->num_cpus > 0) {
    uint32_t cpus = machine_cpus(pe, c->machine);
    tmr_enc_uint(e, 8, m->num_cpus > (int64_t)cpus ? (uint64_t)m->num_cpus : cpus);
  }
  /* What SystemInfo said beyond the machine row, kept as metadata. */
  const tm_metadata_row *version = pe_metadata_row(pe, c->machine, "tracing_service_version");
  if (version && !version->is_int)
    put_str(pe, e, 4, version->str_value);
  const tm_metadata_row *tz = pe_metadata_row(pe, c->machine, "timezone_off_mins");
  if (tz && tz->is_int)
    tmr_enc_int(e, 7, tz->int_value);
  put_str(pe, e, 14, m->android_device_manufacturer);
  if (m->system_ram_bytes != TM_NULL_INT64)
    tmr_enc_uint(e, 16, (uint64_t)m->system_ram_bytes);
  put_str(pe, e, 17, m->name);
  tmr_enc_nest_end(e, info);
}

/* Parents and uids, which descriptors cannot say. A process needs a
 * command line here: its name stands in when it has none. */
static void build_process_tree(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const machine_ctx *c = p;
  const tm_model *model = c->pe->model;
  uint8_t *tree = tmr_enc_nest_begin(e, PACKET_PROCESS_TREE);
  for (size_t upid = 0; upid < model->processes.len; upid++) {
    const tm_process_row *row = &model->processes.data[upid];
    if (row->machine_id != c->machine || row->pid == 0)
      continue;
    bool has_parent = row->parent_upid < model->processes.len;
    if (!has_parent && row->uid == TM_NULL_INT64)
      continue;
    tm_str_id cmdline = row->cmdline ? row->cmdline : row->name;
    if (!cmdline)
      continue;
    uint8_t *proc = tmr_enc_nest_begin(e, 1);
    tmr_enc_int(e, 1, row->pid);
    if (has_parent)
      tmr_enc_int(e, 2, model->processes.data[row->parent_upid].pid);
    put_str(c->pe, e, 3, cmdline);
    if (!row->cmdline)
      tmr_enc_uint(e, 9, 1); /* cmdline_is_comm: the name as it is */
    if (row->uid != TM_NULL_INT64)
      tmr_enc_int(e, 5, row->uid);
    tmr_enc_nest_end(e, proc);
  }
  tmr_enc_nest_end(e, tree);
}

static void build_packages(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const machine_ctx *c = p;
  const tm_model *model = c->pe->model;
  uint8_t *list = tmr_enc_nest_begin(e, PACKET_PACKAGES_LIST);
  for (size_t i = 0; i < model->packages.len; i++) {
    const tm_package_row *row = &model->packages.data[i];
    if (row->machine_id != c->machine)
      continue;
    uint8_t *pkg = tmr_enc_nest_begin(e, 1);
    put_str(c->pe, e, 1, row->package_name);
    if (row->uid != TM_NULL_INT64)
      tmr_enc_uint(e, 2, (uint64_t)row->uid);
    if (row->debuggable >= 0)
      tmr_enc_uint(e, 3, (uint64_t)row->debuggable);
    if (row->profileable_from_shell >= 0)
      tmr_enc_uint(e, 4, (uint64_t)row->profileable_from_shell);
    if (row->version_code != TM_NULL_INT64)
      tmr_enc_int(e, 5, row->version_code);
    tmr_enc_nest_end(e, pkg);
  }
  tmr_enc_nest_end(e, list);
}

void pe_system_write_machine(pe_state *pe, uint32_t machine) {
  tmr_sequence *seq = pe_machine_sequence(pe, machine);
  machine_ctx c = {pe, machine};
  pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_system_info, &c);
  write_clocks(pe, machine);
  bool tree = false, packages = false;
  const tm_model *model = pe->model;
  for (size_t upid = 0; upid < model->processes.len && !tree; upid++) {
    const tm_process_row *row = &model->processes.data[upid];
    tree = row->machine_id == machine && row->pid != 0 &&
           (row->parent_upid < model->processes.len || row->uid != TM_NULL_INT64) &&
           (row->cmdline || row->name);
  }
  for (size_t i = 0; i < model->packages.len && !packages; i++)
    packages = model->packages.data[i].machine_id == machine;
  if (tree)
    pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_process_tree, &c);
  if (packages)
    pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_packages, &c);
  pe_service_write_machine(pe, machine);
}

/* --- scheduling ------------------------------------------------------------------------- */

/* The kernel's task state bits of a state as the reader names it
 * (proto_ftrace_kinds.c's inverse): letters "SDTtXZxKWPN" are bits 0..10,
 * "R" alone is 0, a trailing "+" is 2048. A state it cannot write is
 * 4096, which reads back as no state (NULL). */
static int64_t task_state_bits(const char *state) {
  static const char letters[] = "SDTtXZxKWPN";
  if (!state || !*state)
    return 4096;
  int64_t bits = 0;
  for (const char *p = state; *p; p++) {
    if (*p == 'R' && p == state) {
      continue;
    } else if (*p == '+' && p[1] == '\0') {
      bits |= 2048;
    } else {
      const char *at = strchr(letters, *p);
      if (!at)
        return 4096;
      bits |= (int64_t)1 << (at - letters);
    }
  }
  if (state[0] == 'R' && (bits & ~(int64_t)2048))
    return 4096; /* "R" with other letters is not a state the reader names */
  return bits;
}

static bool is_idle(const pe_state *pe, uint32_t utid) {
  return utid < pe->model->threads.len && pe->model->threads.data[utid].is_idle > 0;
}

static const tm_thread_state_row *state_row(const pe_state *pe, uint32_t id) {
  return id < pe->model->thread_states.len ? &pe->model->thread_states.data[id] : NULL;
}

static bool is_switch_prev_row(const tm_thread_state_row *r, int64_t ts) {
  return r && r->ts == ts && r->ucpu == TM_NULL_ID && r->waker_utid == TM_NULL_ID;
}

static bool is_running_row(const tm_thread_state_row *r, uint32_t utid, int64_t ts,
                           uint32_t ucpu) {
  return r && r->utid == utid && r->ts == ts && r->ucpu == ucpu;
}

/* Works out the next event (see the top of the file). */
static void sched_peek(pe_state *pe, sched_source *s) {
  if (s->step.kind != SCHED_NONE)
    return;
  const tm_model *model = pe->model;
  sched_step *st = &s->step;
  memset(st, 0, sizeof *st);
  const tm_thread_state_row *row = state_row(pe, s->next_state);
  if (s->next_sched < model->sched_slices.len) {
    uint32_t id = s->next_sched;
    const tm_sched_row *r = &model->sched_slices.data[id];
    uint32_t before = r->ucpu < model->cpus.len ? s->cpu_row[r->ucpu] : TM_NULL_ID;
    uint32_t prev = before == TM_NULL_ID ? TM_NULL_ID : model->sched_slices.data[before].utid;
    bool next_has_row = !is_idle(pe, r->utid);
    st->kind = SCHED_SWITCH;
    st->ts = r->ts;
    st->sched_row = id;
    st->prev_utid = prev;
    st->prev_state = TM_NULL_ID;
    if (prev != TM_NULL_ID && !is_idle(pe, prev)) {
      /* Its rows: prev's new state, then next's Running. */
      if (row && row->utid == prev && is_switch_prev_row(row, r->ts)) {
        st->prev_state = s->next_state;
        st->consumed = 1;
        if (next_has_row &&
            is_running_row(state_row(pe, s->next_state + 1), r->utid, r->ts, r->ucpu))
          st->consumed = 2;
        return;
      }
    } else if (next_has_row) {
      if (is_running_row(row, r->utid, r->ts, r->ucpu)) {
        st->consumed = 1;
        return;
      }
      /* The first switch on a cpu: a prev row right before Running. */
      if (prev == TM_NULL_ID && is_switch_prev_row(row, r->ts) &&
          is_running_row(state_row(pe, s->next_state + 1), r->utid, r->ts, r->ucpu)) {
        st->prev_utid = row->utid;
        st->prev_state = s->next_state;
        st->consumed = 2;
        return;
      }
    } else if (prev == TM_NULL_ID && row && row->ts == r->ts &&
               is_switch_prev_row(row, r->ts)) {
      /* The first switch on a cpu, to the idle thread: its one row. */
      st->prev_utid = row->utid;
      st->prev_state = s->next_state;
      st->consumed = 1;
      return;
    } else if (!row || row->ts >= r->ts) {
      return; /* a switch that made no state row */
    }
    /* Rows of later events cannot come before this switch's: its own are
     * not there, so it goes alone. */
    if (!row || row->ts > r->ts)
      return;
  }
  if (!row) {
    st->kind = SCHED_NONE;
    return;
  }
  /* A state row before the next switch's: a wakeup, or a row this
   * reconstruction cannot explain (skipped). */
  st->kind = row->state == s->runnable && row->ucpu == TM_NULL_ID ? SCHED_WAKING : SCHED_SKIP;
  st->ts = row->ts;
  st->state_row = s->next_state;
  st->consumed = 1;
}

static int64_t sched_next_ts(pe_state *pe, void *self) {
  sched_source *s = &((pe_system *)self)->sched;
  /* Rows the reconstruction cannot explain are stepped over here. */
  for (;;) {
    sched_peek(pe, s);
    if (s->step.kind != SCHED_SKIP)
      break;
    s->next_state += s->step.consumed;
    s->step.kind = SCHED_NONE;
  }
  return s->step.kind == SCHED_NONE ? INT64_MAX : s->step.ts;
}

static void flush_bundle(pe_state *pe, sched_source *s, uint32_t machine);

typedef struct bundle_ctx {
  bundle *b;
} bundle_ctx;

static void build_bundle(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const bundle_ctx *c = p;
  uint8_t *body = tmr_enc_nest_begin(e, PACKET_FTRACE_EVENTS);
  tmr_enc_uint(e, 1, c->b->cpu);
  tmr_enc_raw(e, c->b->events->data, c->b->events->len);
  tmr_enc_nest_end(e, body);
}

static void flush_bundle(pe_state *pe, sched_source *s, uint32_t machine) {
  bundle *b = &s->bundles[machine];
  if (!b->open)
    return;
  if (b->events->len) {
    bundle_ctx c = {b};
    pe_emit(pe, pe_machine_sequence(pe, machine), TMR_NO_TIMESTAMP, 0, build_bundle, &c);
  }
  g_byte_array_set_size(b->events, 0);
  b->open = false;
}

/* The bundle an event of `machine` goes in: cpu `cpu`'s when `cpu` is
 * given (a switch), else the open one (a wakeup). */
static bundle *bundle_for(pe_state *pe, sched_source *s, uint32_t machine, int64_t cpu) {
  bundle *b = &s->bundles[machine];
  if (b->open && ((cpu >= 0 && b->cpu != (uint32_t)cpu) || b->events->len > BUNDLE_LIMIT))
    flush_bundle(pe, s, machine);
  if (!b->open) {
    b->open = true;
    if (cpu >= 0)
      b->cpu = (uint32_t)cpu;
  }
  return b;
}

/* Appends one FtraceEvent built by `fill` to `b`. */
static void append_event(bundle *b, int64_t ts, int64_t pid, void (*fill)(tmr_enc *, const void *),
                         const void *ctx) {
  uint8_t scratch[1024];
  tmr_enc e = {scratch, scratch + sizeof scratch, false};
  uint8_t *ev = tmr_enc_nest_begin(&e, 2);
  tmr_enc_uint(&e, FE_TIMESTAMP, (uint64_t)ts);
  tmr_enc_uint(&e, FE_PID, (uint64_t)(uint32_t)pid);
  fill(&e, ctx);
  tmr_enc_nest_end(&e, ev);
  if (!e.overflow)
    g_byte_array_append(b->events, scratch, (guint)(e.p - scratch));
}

typedef struct switch_fields {
  const pe_state *pe;
  uint32_t prev, next;
  int64_t prev_prio, next_prio, prev_state;
} switch_fields;

/* Thread names longer than this are cut (a kernel comm is 16 bytes). */
#define MAX_COMM 255

static void put_comm(tmr_enc *e, uint32_t field, const pe_state *pe, uint32_t utid) {
  if (utid == TM_NULL_ID || utid >= pe->model->threads.len)
    return;
  tm_str_id name = *thread_name(pe, utid);
  const char *s = pe_str(pe, name);
  if (s) {
    size_t len = string_pool_length(pe->model->strings, name);
    tmr_enc_bytes(e, field, s, len > MAX_COMM ? MAX_COMM : len);
  }
}

static int64_t tid_of(const pe_state *pe, uint32_t utid) {
  return utid == TM_NULL_ID || utid >= pe->model->threads.len ? 0 : pe_thread_tid(pe, utid);
}

static void fill_switch(tmr_enc *e, const void *p) {
  const switch_fields *f = p;
  uint8_t *sw = tmr_enc_nest_begin(e, FE_SCHED_SWITCH);
  put_comm(e, 1, f->pe, f->prev);
  tmr_enc_int(e, 2, tid_of(f->pe, f->prev));
  tmr_enc_int(e, 3, f->prev_prio);
  tmr_enc_int(e, 4, f->prev_state);
  put_comm(e, 5, f->pe, f->next);
  tmr_enc_int(e, 6, tid_of(f->pe, f->next));
  tmr_enc_int(e, 7, f->next_prio);
  tmr_enc_nest_end(e, sw);
}

typedef struct waking_fields {
  const pe_state *pe;
  uint32_t woken;
  uint32_t cpu;
} waking_fields;

static void fill_waking(tmr_enc *e, const void *p) {
  const waking_fields *f = p;
  uint8_t *w = tmr_enc_nest_begin(e, FE_SCHED_WAKING);
  put_comm(e, 1, f->pe, f->woken);
  tmr_enc_int(e, 2, tid_of(f->pe, f->woken));
  tmr_enc_int(e, 4, 1);
  tmr_enc_int(e, 5, f->cpu);
  tmr_enc_nest_end(e, w);
}

typedef struct blocked_fields {
  int64_t tid;
  int io_wait;
} blocked_fields;

static void fill_blocked(tmr_enc *e, const void *p) {
  const blocked_fields *f = p;
  uint8_t *b = tmr_enc_nest_begin(e, FE_SCHED_BLOCKED_REASON);
  tmr_enc_int(e, 1, f->tid);
  tmr_enc_uint(e, 3, (uint64_t)f->io_wait);
  tmr_enc_nest_end(e, b);
}

static uint32_t utid_machine(const pe_state *pe, uint32_t utid) {
  return utid < pe->model->threads.len ? pe->model->threads.data[utid].machine_id : TM_NULL_ID;
}

static void emit_switch(pe_state *pe, sched_source *s, const sched_step *st) {
  const tm_model *model = pe->model;
  const tm_sched_row *r = &model->sched_slices.data[st->sched_row];
  if (r->ucpu >= model->cpus.len)
    return;
  const tm_cpu_row *cpu = &model->cpus.data[r->ucpu];
  uint32_t before = s->cpu_row[r->ucpu];
  s->cpu_row[r->ucpu] = st->sched_row;
  if (!export_machine_on(pe->sel, cpu->machine_id) || !export_interval_on(pe->sel, r->ts, r->dur))
    return;
  switch_fields f = {pe, st->prev_utid, r->utid, 0, r->priority, 0};
  if (f.prev == TM_NULL_ID)
    f.prev = s->idle_utid[cpu->machine_id];
  if (before != TM_NULL_ID) {
    const tm_sched_row *b = &model->sched_slices.data[before];
    f.prev_prio = b->priority;
    f.prev_state = task_state_bits(pe_str(pe, b->end_state));
  } else if (st->prev_state != TM_NULL_ID) {
    f.prev_state = task_state_bits(pe_str(pe, model->thread_states.data[st->prev_state].state));
  }
  bundle *b = bundle_for(pe, s, cpu->machine_id, cpu->cpu);
  append_event(b, r->ts, tid_of(pe, f.prev), fill_switch, &f);
  if (st->prev_state != TM_NULL_ID) {
    const tm_thread_state_row *prev = &model->thread_states.data[st->prev_state];
    int8_t io_wait = tm_thread_state_io_wait(model, prev);
    if (io_wait >= 0) {
      blocked_fields bf = {tid_of(pe, prev->utid), io_wait};
      append_event(b, r->ts, tid_of(pe, prev->utid), fill_blocked, &bf);
    }
  }
}

static void emit_waking(pe_state *pe, sched_source *s, const sched_step *st) {
  const tm_thread_state_row *row = &pe->model->thread_states.data[st->state_row];
  uint32_t machine = utid_machine(pe, row->utid);
  if (machine == TM_NULL_ID || !export_machine_on(pe->sel, machine) ||
      !export_point_on(pe->sel, row->ts))
    return;
  bundle *b = bundle_for(pe, s, machine, -1);
  waking_fields f = {pe, row->utid, b->cpu};
  append_event(b, row->ts, tid_of(pe, row->waker_utid), fill_waking, &f);
}

static void sched_emit(pe_state *pe, void *self) {
  sched_source *s = &((pe_system *)self)->sched;
  sched_step st = s->step;
  s->step.kind = SCHED_NONE;
  s->next_state += st.consumed;
  if (st.kind == SCHED_SWITCH) {
    s->next_sched++;
    emit_switch(pe, s, &st);
  } else if (st.kind == SCHED_WAKING) {
    emit_waking(pe, s, &st);
  }
}

static void sched_init(pe_state *pe, sched_source *s) {
  const tm_model *model = pe->model;
  s->cpu_row = g_new(uint32_t, model->cpus.len + 1);
  for (size_t c = 0; c <= model->cpus.len; c++)
    s->cpu_row[c] = TM_NULL_ID;
  s->idle_utid = g_new(uint32_t, model->machines.len + 1);
  for (size_t m = 0; m <= model->machines.len; m++)
    s->idle_utid[m] = TM_NULL_ID;
  for (uint32_t u = 0; u < model->threads.len; u++) {
    const tm_thread_row *t = &model->threads.data[u];
    if (t->is_idle > 0 && t->machine_id < model->machines.len &&
        s->idle_utid[t->machine_id] == TM_NULL_ID)
      s->idle_utid[t->machine_id] = u;
  }
  s->bundles = g_new0(bundle, model->machines.len + 1);
  for (size_t m = 0; m <= model->machines.len; m++)
    s->bundles[m].events = g_byte_array_new();
  /* The pool is read-only here: find the state names by value. */
  s->running = s->runnable = 0;
  for (size_t i = 0; i < model->thread_states.len && !(s->running && s->runnable); i++) {
    tm_str_id state = model->thread_states.data[i].state;
    const char *text = pe_str(pe, state);
    if (text && strcmp(text, "Running") == 0)
      s->running = state;
    else if (text && strcmp(text, "R") == 0)
      s->runnable = state;
  }
}

/* --- samples ----------------------------------------------------------------------------- */

typedef struct sample_ctx {
  pe_state *pe;
  sample_source *src;
  uint32_t utid;
  uint32_t callsite;
  int64_t cpu; /* < 0: none */
} sample_ctx;

static void put_mapping(pe_state *pe, tmr_sequence *seq, tmr_enc *in, uint32_t mapping) {
  const tm_model *model = pe->model;
  if (mapping >= model->stack_profile_mappings.len ||
      !tmr_sequence_mark(seq, PE_MARK_MAPPING, mapping))
    return;
  const tm_stack_profile_mapping_row *m = &model->stack_profile_mappings.data[mapping];
  if (m->build_id && tmr_sequence_mark(seq, PE_MARK_BUILD_ID, m->build_id)) {
    uint8_t *b = tmr_enc_nest_begin(in, INTERNED_BUILD_IDS);
    tmr_enc_uint(in, 1, m->build_id);
    put_str(pe, in, 2, m->build_id);
    tmr_enc_nest_end(in, b);
  }
  if (m->name && tmr_sequence_mark(seq, PE_MARK_MAPPING_PATH, m->name)) {
    uint8_t *b = tmr_enc_nest_begin(in, INTERNED_MAPPING_PATHS);
    tmr_enc_uint(in, 1, m->name);
    put_str(pe, in, 2, m->name);
    tmr_enc_nest_end(in, b);
  }
  uint8_t *body = tmr_enc_nest_begin(in, INTERNED_MAPPINGS);
  tmr_enc_uint(in, 1, (uint64_t)mapping + 1);
  if (m->build_id)
    tmr_enc_uint(in, 2, m->build_id);
  if (m->exact_offset > 0)
    tmr_enc_uint(in, 8, (uint64_t)m->exact_offset);
  if (m->start_offset > 0)
    tmr_enc_uint(in, 3, (uint64_t)m->start_offset);
  tmr_enc_uint(in, 4, (uint64_t)m->start);
  tmr_enc_uint(in, 5, (uint64_t)m->end);
  if (m->load_bias > 0)
    tmr_enc_uint(in, 6, (uint64_t)m->load_bias);
  if (m->name)
    tmr_enc_uint(in, 7, m->name);
  tmr_enc_nest_end(in, body);
}

static void put_frame(pe_state *pe, tmr_sequence *seq, tmr_enc *in, uint32_t frame) {
  const tm_model *model = pe->model;
  if (!tmr_sequence_mark(seq, PE_MARK_FRAME, frame))
    return;
  const tm_stack_profile_frame_row *f = &model->stack_profile_frames.data[frame];
  if (f->name && tmr_sequence_mark(seq, PE_MARK_FUNCTION_NAME, f->name)) {
    uint8_t *b = tmr_enc_nest_begin(in, INTERNED_FUNCTION_NAMES);
    tmr_enc_uint(in, 1, f->name);
    put_str(pe, in, 2, f->name);
    tmr_enc_nest_end(in, b);
  }
  if (f->mapping != TM_NULL_ID)
    put_mapping(pe, seq, in, f->mapping);
  uint8_t *body = tmr_enc_nest_begin(in, INTERNED_FRAMES);
  tmr_enc_uint(in, 1, (uint64_t)frame + 1);
  if (f->name)
    tmr_enc_uint(in, 2, f->name);
  if (f->mapping != TM_NULL_ID && f->mapping < model->stack_profile_mappings.len)
    tmr_enc_uint(in, 3, (uint64_t)f->mapping + 1);
  tmr_enc_uint(in, 4, (uint64_t)f->rel_pc);
  tmr_enc_nest_end(in, body);
}

/* The callstack of callsite `id`: its frames outermost first. */
static void put_callstack(pe_state *pe, sample_source *src, tmr_sequence *seq, tmr_enc *in,
                          uint32_t id) {
  const tm_model *model = pe->model;
  if (!tmr_sequence_mark(seq, PE_MARK_CALLSTACK, id))
    return;
  g_array_set_size(src->frames, 0);
  for (uint32_t c = id; c < model->stack_profile_callsites.len && src->frames->len < 4096;
       c = model->stack_profile_callsites.data[c].parent_id)
    g_array_append_val(src->frames, model->stack_profile_callsites.data[c].frame_id);
  for (guint i = 0; i < src->frames->len; i++) {
    uint32_t frame = g_array_index(src->frames, uint32_t, i);
    if (frame < model->stack_profile_frames.len)
      put_frame(pe, seq, in, frame);
  }
  uint8_t *body = tmr_enc_nest_begin(in, INTERNED_CALLSTACKS);
  tmr_enc_uint(in, 1, (uint64_t)id + 1);
  for (guint i = src->frames->len; i-- > 0;) {
    uint32_t frame = g_array_index(src->frames, uint32_t, i);
    if (frame < model->stack_profile_frames.len)
      tmr_enc_uint(in, 2, (uint64_t)frame + 1);
  }
  tmr_enc_nest_end(in, body);
}

static void build_sample(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  const sample_ctx *c = p;
  pe_state *pe = c->pe;
  bool has_stack = c->callsite < pe->model->stack_profile_callsites.len;
  if (has_stack)
    put_callstack(pe, c->src, seq, in, c->callsite);
  uint8_t *body = tmr_enc_nest_begin(e, PACKET_PERF_SAMPLE);
  if (c->cpu >= 0)
    tmr_enc_uint(e, 1, (uint64_t)c->cpu);
  tmr_enc_uint(e, 2, (uint64_t)(uint32_t)pe_thread_pid(pe, c->utid));
  tmr_enc_uint(e, 3, (uint64_t)(uint32_t)pe_thread_tid(pe, c->utid));
  if (has_stack)
    tmr_enc_uint(e, 4, (uint64_t)c->callsite + 1);
  tmr_enc_nest_end(e, body);
}

static bool sample_on(const pe_state *pe, uint32_t utid, int64_t ts) {
  return utid < pe->model->threads.len &&
         export_machine_on(pe->sel, pe->model->threads.data[utid].machine_id) &&
         export_point_on(pe->sel, ts);
}

/* One sample of any of the three tables, by index. */
typedef struct sample_view {
  int64_t ts;
  uint32_t utid, callsite;
  int64_t cpu; /* < 0: none */
} sample_view;

static bool sample_at(const tm_model *model, int table, uint32_t i, sample_view *out) {
  switch (table) {
  case 0:
    if (i >= model->perf_samples.len)
      return false;
    *out = (sample_view){model->perf_samples.data[i].ts, model->perf_samples.data[i].utid,
                         model->perf_samples.data[i].callsite_id,
                         model->perf_samples.data[i].cpu == TM_NULL_INT64
                             ? -1 : model->perf_samples.data[i].cpu};
    return true;
  case 1:
    if (i >= model->cpu_profile_samples.len)
      return false;
    *out = (sample_view){model->cpu_profile_samples.data[i].ts,
                         model->cpu_profile_samples.data[i].utid,
                         model->cpu_profile_samples.data[i].callsite_id, -1};
    return true;
  default:
    if (i >= model->instruments_samples.len)
      return false;
    *out = (sample_view){model->instruments_samples.data[i].ts,
                         model->instruments_samples.data[i].utid,
                         model->instruments_samples.data[i].callsite_id,
                         model->instruments_samples.data[i].cpu == TM_NULL_INT64
                             ? -1 : model->instruments_samples.data[i].cpu};
    return true;
  }
}

/* The table whose next kept sample comes first (-1: none left). */
static int samples_next_table(pe_state *pe, sample_source *s, int64_t *ts) {
  int best = -1;
  *ts = INT64_MAX;
  for (int table = 0; table < SAMPLE_TABLES; table++) {
    sample_view v;
    while (sample_at(pe->model, table, s->next[table], &v) && !sample_on(pe, v.utid, v.ts))
      s->next[table]++;
    if (sample_at(pe->model, table, s->next[table], &v) && v.ts < *ts) {
      *ts = v.ts;
      best = table;
    }
  }
  return best;
}

static int64_t samples_next_ts(pe_state *pe, void *self) {
  int64_t ts;
  samples_next_table(pe, &((pe_system *)self)->samples, &ts);
  return ts;
}

static void samples_emit(pe_state *pe, void *self) {
  sample_source *s = &((pe_system *)self)->samples;
  int64_t ts;
  int table = samples_next_table(pe, s, &ts);
  sample_view v;
  if (table < 0 || !sample_at(pe->model, table, s->next[table]++, &v))
    return;
  sample_ctx c = {pe, s, v.utid, v.callsite, v.cpu};
  uint32_t machine = pe->model->threads.data[c.utid].machine_id;
  tmr_sequence *seq = pe_machine_sequence(pe, machine);
  pe_ensure_thread(pe, seq, c.utid);
  pe_emit(pe, seq, v.ts, TMR_SEQ_NEEDS_INCREMENTAL_STATE, build_sample, &c);
}

/* --- logs ---------------------------------------------------------------------------------- */

typedef struct log_ctx {
  pe_state *pe;
  const tm_android_log_row *row;
  int64_t realtime;
} log_ctx;

static void build_log(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const log_ctx *c = p;
  const pe_state *pe = c->pe;
  const tm_android_log_row *row = c->row;
  uint8_t *packet = tmr_enc_nest_begin(e, PACKET_ANDROID_LOG);
  uint8_t *ev = tmr_enc_nest_begin(e, 1);
  if (row->utid < pe->model->threads.len) {
    int64_t pid = pe_thread_pid(pe, row->utid);
    if (pid >= 0)
      tmr_enc_int(e, 2, pid);
    tmr_enc_int(e, 3, pe_thread_tid(pe, row->utid));
  }
  tmr_enc_uint(e, 5, (uint64_t)c->realtime);
  put_str(pe, e, 6, row->tag);
  if (row->prio)
    tmr_enc_uint(e, 7, row->prio);
  put_str(pe, e, 8, row->msg);
  tmr_enc_nest_end(e, ev);
  tmr_enc_nest_end(e, packet);
}

static uint32_t log_machine(const pe_state *pe, const tm_android_log_row *row) {
  return row->utid < pe->model->threads.len ? pe->model->threads.data[row->utid].machine_id : 0;
}

static int64_t logs_next_ts(pe_state *pe, void *self) {
  log_source *s = &((pe_system *)self)->logs;
  const tm_model *model = pe->model;
  while (s->next < model->android_logs.len) {
    const tm_android_log_row *row = &model->android_logs.data[s->next];
    uint32_t m = log_machine(pe, row);
    if (m < model->machines.len && export_machine_on(pe->sel, m) &&
        export_point_on(pe->sel, row->ts))
      return row->ts;
    s->next++;
  }
  return INT64_MAX;
}

static void logs_emit(pe_state *pe, void *self) {
  pe_system *sys = self;
  const tm_android_log_row *row = &pe->model->android_logs.data[sys->logs.next++];
  uint32_t machine = log_machine(pe, row);
  log_ctx c = {pe, row, realtime_at(sys, machine, row->ts)};
  pe_emit(pe, pe_machine_sequence(pe, machine), TMR_NO_TIMESTAMP, 0, build_log, &c);
}

/* --- the module ------------------------------------------------------------------------------ */

pe_system *pe_system_new(pe_state *pe) {
  pe_system *sys = g_new0(pe_system, 1);
  sys->n_machines = pe->model->machines.len;
  pe->system = sys;
  collect_realtime(pe, sys);
  sched_init(pe, &sys->sched);
  sys->samples.frames = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  return sys;
}

void pe_system_free(pe_system *sys) {
  if (!sys)
    return;
  for (size_t m = 0; m <= sys->n_machines; m++) {
    tm_vec_free(&sys->realtime[m]);
    g_byte_array_unref(sys->sched.bundles[m].events);
  }
  g_free(sys->realtime);
  g_free(sys->sched.bundles);
  g_free(sys->has_logs);
  g_free(sys->sched.cpu_row);
  g_free(sys->sched.idle_utid);
  g_array_unref(sys->samples.frames);
  g_free(sys);
}

size_t pe_system_sources(pe_state *pe, pe_source *out) {
  pe_system *sys = pe->system;
  out[0] = (pe_source){sched_next_ts, sched_emit, sys};
  out[1] = (pe_source){samples_next_ts, samples_emit, sys};
  out[2] = (pe_source){logs_next_ts, logs_emit, sys};
  return 3;
}

void pe_system_finish(pe_state *pe) {
  pe_system *sys = pe->system;
  for (uint32_t m = 0; m < pe->model->machines.len; m++)
    flush_bundle(pe, &sys->sched, m);
}
