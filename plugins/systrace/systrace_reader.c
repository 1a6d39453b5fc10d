/*
 * The systrace / ftrace text reader ("systrace"): the descriptor, the probe,
 * the line splitter and what each line becomes (reference/formats.md §3).
 *
 * The file is cut into lines as chunks arrive; systrace_wrapper decides
 * which lines are ftrace data, systrace_line splits them, and this file
 * turns them into host calls: threads and processes named from the task
 * field, tracing_mark_write (also events "0" and "print") B/E/C/S/F/I and
 * N/G/H into slices, async slices and counters, sched_switch / sched_waking /
 * sched_wakeup into the scheduling services, cpu_frequency / cpu_idle into
 * per-cpu counters, clock_set_rate / clock_enable / clock_disable into
 * per-clock counters, PROCESS DUMP tables of systrace HTML into process
 * names, parents and thread names. Other kernel events are not read.
 *
 * Beyond trace_processor: sched_wakeup is read like sched_waking (older
 * kernels have only it); numeric prev_state (trace-cmd report) is spelled
 * as the kernel's letters; the trace-cmd report header and the legacy
 * JavaScript-string HTML are accepted; timestamps are parsed as exact
 * decimals, not through a double.
 *
 * Clock: the timestamps are the machine's MONOTONIC clock, which the
 * reader claims as trace time when the file starts (clock-model.md §5).
 *
 * Limits: a line is held in one buffer of at most MAX_LINE bytes; a longer
 * data line is skipped and counted (systrace_line_too_long), so memory
 * does not grow with the file. A data line that does not parse is counted
 * (systrace_parse_failure). A file in which no data line parses at all but
 * some failed is reported as damaged, naming the first failing offset.
 */
#include <glib.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "systrace_line.h"
#include "systrace_wrapper.h"

#define MAX_LINE (64 * 1024)
#define PROBE_SCORE 800 /* trace_processor sniffs systrace after JSON */
#define MAX_CPU 4095u

/* Linux task names are at most 15 bytes; longer ones are re-interned. */
#define NAME_CACHE 24

typedef struct thread_entry {
  int64_t tid;
  bool has_process;
  tm_thread_ref ref;
  tm_str_id name;
  /* The bytes of `name`, so that the name repeated on every line costs a
   * comparison, not an intern. */
  uint8_t name_len;
  char name_text[NAME_CACHE];
} thread_entry;

typedef struct systrace_reader {
  const tm_host_services *s;
  tm_host *host;
  tm_machine_ref machine;
  tm_clock_ref clock;
  systrace_wrapper wrapper;
  char *line;          /* the line being assembled, MAX_LINE bytes */
  size_t line_len;
  bool line_overlong;  /* dropping the rest of an overlong line */
  int64_t offset;      /* file offset of line[0] */
  int64_t consumed;    /* bytes fed so far */
  uint64_t lines_parsed;
  uint64_t lines_failed;
  int64_t first_failure_offset;
  GHashTable *threads;     /* int64 tid -> thread_entry* */
  GHashTable *async_open;  /* track ref -> 1 while an S slice is open */
  tm_track_ref *cpufreq;   /* by cpu, 0 = not interned yet */
  tm_track_ref *cpuidle;
  tm_str_id key_cookie;
  tm_str_id swapper;
  /* Columns of the current PROCESS DUMP table, -1 if absent. */
  int dump_pid, dump_ppid, dump_tid, dump_name;
  GHashTable *dump_named; /* pids named by a PROCESS DUMP: keep that name */
} systrace_reader;

/* --- probe --------------------------------------------------------------- */

static bool head_contains(const uint8_t *head, size_t len, const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(head + i, s, n) == 0)
      return true;
  return false;
}

static bool head_starts_ci(const uint8_t *head, size_t len, const char *s) {
  size_t n = strlen(s);
  return len >= n && g_ascii_strncasecmp((const char *)head, s, n) == 0;
}

static int systrace_probe(const uint8_t *head, size_t len, const char *file_name) {
  (void)file_name;
  if (len > 128)
    len = 128;
  /* "TRACE:\n" followed by a zlib stream is compressed atrace (ctrace). */
  for (size_t i = 0; i + 8 < len; i++)
    if (memcmp(head + i, "TRACE:\n\x78\x9c", 9) == 0)
      return 0;
  if (head_contains(head, len, "# tracer") ||
      head_starts_ci(head, len, "<!doctype html>") ||
      head_starts_ci(head, len, "<html>") ||
      head_contains(head, len, "TRACE:\n") ||
      head_starts_ci(head, len, "cpus=") || (len > 0 && head[0] == ' '))
    return PROBE_SCORE;
  /* The trace-cmd report header, which upstream does not sniff. */
  if (head_starts_ci(head, len, "version = ") &&
      head_contains(head, len, "\ncpus="))
    return PROBE_SCORE;
  return 0;
}

/* --- helpers ------------------------------------------------------------- */

static tm_str_id intern(systrace_reader *r, systrace_text t) {
  return r->s->intern_string(r->host, t.p, t.len);
}

static void count_failure(systrace_reader *r) {
  r->s->stat_add(r->host, "systrace_parse_failure", 1);
  if (r->lines_failed++ == 0)
    r->first_failure_offset = r->offset;
}

static bool is_unknown_task(systrace_text t) {
  return SYSTRACE_TEXT_IS(t, "<...>") || t.len == 0;
}

/* The thread `tid`, attached to process `pid` if pid >= 0, named `name`
 * unless it is unknown ("<...>"). tid 0 is the idle thread "swapper". */
static tm_thread_ref thread_for(systrace_reader *r, int64_t pid, int64_t tid,
                                systrace_text name) {
  thread_entry *e = g_hash_table_lookup(r->threads, &tid);
  if (!e) {
    e = g_new0(thread_entry, 1);
    e->tid = tid;
    g_hash_table_insert(r->threads, &e->tid, e);
  }
  if (!e->ref || (pid >= 0 && !e->has_process)) {
    e->ref = r->s->thread(r->host, r->machine, pid, tid);
    e->has_process = pid >= 0;
    e->name = 0; /* name it again, now maybe its process too */
  }
  if (tid == 0 || is_unknown_task(name)) {
    if (tid == 0 && e->name != r->swapper) {
      e->name = r->swapper;
      r->s->thread_set_name(r->host, e->ref, r->swapper);
    }
    return e->ref;
  }
  if (e->name && name.len == e->name_len &&
      memcmp(name.p, e->name_text, name.len) == 0)
    return e->ref;
  tm_str_id name_id = intern(r, name);
  if (name.len < NAME_CACHE) {
    memcpy(e->name_text, name.p, name.len);
    e->name_len = (uint8_t)name.len;
  } else {
    e->name_len = 0;
  }
  if (name_id != e->name) {
    e->name = name_id;
    r->s->thread_set_name(r->host, e->ref, name_id);
    if (pid == tid && pid > 0 &&
        !g_hash_table_contains(r->dump_named, GINT_TO_POINTER((gint)pid)))
      r->s->process_set_name(r->host, r->s->process(r->host, r->machine, pid),
                             name_id);
  }
  return e->ref;
}

/* Splits on '|' into at most `max` fields; the last takes the rest. */
static size_t split_bars(systrace_text t, systrace_text *fields, size_t max) {
  size_t n = 0, start = 0;
  for (size_t i = 0; i <= t.len && n < max; i++) {
    if (i == t.len || (t.p[i] == '|' && n + 1 < max)) {
      fields[n++] = (systrace_text){t.p + start, i - start};
      start = i + 1;
    }
  }
  return n;
}

/* --- tracing_mark_write --------------------------------------------------- */

static tm_track_ref process_track(systrace_reader *r, const char *type,
                                  int is_counter, int64_t pid, tm_str_id name,
                                  uint64_t key) {
  tm_track_desc desc = {
      .type = type,
      .is_counter = is_counter,
      .name = name,
      .process = r->s->process(r->host, r->machine, pid),
      .key = key,
  };
  return r->s->track_intern(r->host, &desc);
}

static bool mark_write(systrace_reader *r, const systrace_line *l,
                       systrace_text payload) {
  while (payload.len && (payload.p[payload.len - 1] == '\0' ||
                         payload.p[payload.len - 1] == '\n'))
    payload.len--;
  /* A literal "\n" some writers leave at the end. */
  if (payload.len >= 2 && payload.p[payload.len - 2] == '\\' &&
      payload.p[payload.len - 1] == 'n')
    payload.len -= 2;
  static const char clock_sync[] = "trace_event_clock_sync:";
  if (payload.len >= sizeof clock_sync - 1 &&
      memcmp(payload.p, clock_sync, sizeof clock_sync - 1) == 0)
    return true;
  if (payload.len == 0 || (payload.len > 1 && payload.p[1] != '|'))
    return false;
  systrace_text f[5];
  size_t n;
  int64_t pid = -1;
  tm_slice_fields sf = {.clock = r->clock, .ts = l->ts_ns,
                        .thread_ts = TM_UNKNOWN_TIME,
                        .thread_dur = TM_UNKNOWN_TIME};
  switch (payload.p[0]) {
  case 'B':
  case 'I':
    n = split_bars(payload, f, 3);
    if (n < 2 || !systrace_parse_int64(f[1], &pid))
      return false;
    sf.track = r->s->track_thread(r->host, thread_for(r, pid, l->pid, l->task));
    sf.name = n == 3 && f[2].len ? intern(r, f[2])
                                 : r->s->intern_string(r->host, "[empty slice name]", 18);
    if (payload.p[0] == 'B')
      r->s->slice_begin(r->host, &sf);
    else
      r->s->slice_complete(r->host, &sf, 0);
    return true;
  case 'E':
    n = split_bars(payload, f, 3);
    if (n >= 2 && f[1].len && !systrace_parse_int64(f[1], &pid))
      return false;
    sf.track = r->s->track_thread(r->host, thread_for(r, pid, l->pid, l->task));
    r->s->slice_end(r->host, &sf);
    return true;
  case 'C': {
    n = split_bars(payload, f, 5);
    int64_t value = 0;
    if (n < 4 || !systrace_parse_int64(f[1], &pid) ||
        !systrace_parse_int64(f[3], &value))
      return false;
    thread_for(r, pid, l->pid, l->task);
    tm_track_ref track =
        process_track(r, "atrace_counter", 1, pid, intern(r, f[2]), 0);
    r->s->counter(r->host, track, r->clock, l->ts_ns, (double)value, TM_NO_ARGS);
    return true;
  }
  case 'S':
  case 'F': {
    n = split_bars(payload, f, 4);
    int64_t cookie = 0;
    if (n < 4 || !systrace_parse_int64(f[1], &pid) ||
        !systrace_parse_int64(f[3], &cookie))
      return false;
    thread_for(r, pid, l->pid, l->task);
    /* One track per (process, name, cookie): concurrent cookies never
     * share a stack. */
    sf.name = intern(r, f[2]);
    sf.track = process_track(r, "atrace_async_slice", 0, pid, sf.name,
                             (uint64_t)cookie);
    gpointer key = GUINT_TO_POINTER(sf.track);
    bool open = g_hash_table_contains(r->async_open, key);
    if (payload.p[0] == 'S') {
      if (open)
        return true; /* repeated begins of one cookie: the first counts */
      r->s->args_add(r->host, r->key_cookie,
                     (tm_arg_value){.type = TM_ARG_INT, .u.int_value = cookie});
      sf.args = r->s->args_commit(r->host);
      g_hash_table_add(r->async_open, key);
      r->s->slice_begin(r->host, &sf);
    } else {
      sf.name = 0;
      g_hash_table_remove(r->async_open, key);
      r->s->slice_end(r->host, &sf);
    }
    return true;
  }
  case 'N':
    n = split_bars(payload, f, 4);
    if (n < 4 || !systrace_parse_int64(f[1], &pid))
      return false;
    thread_for(r, pid, l->pid, l->task);
    sf.track = process_track(r, "atrace_async_slice_for_track", 0, pid,
                             intern(r, f[2]), 0);
    sf.name = intern(r, f[3]);
    r->s->slice_complete(r->host, &sf, 0);
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
    thread_for(r, pid, l->pid, l->task);
    sf.track = process_track(r, "atrace_async_slice_for_track", 0, pid,
                             intern(r, f[2]), (uint64_t)cookie);
    if (begin) {
      sf.name = intern(r, f[3]);
      r->s->slice_begin(r->host, &sf);
    } else {
      r->s->slice_end(r->host, &sf);
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

/* Older kernels print prev_state as the task state bits (Linux 4.x
 * values); newer ones as letters, kept as written. */
static tm_str_id prev_state_id(systrace_reader *r, systrace_text state) {
  int64_t bits;
  if (!systrace_parse_int64(state, &bits))
    return intern(r, state);
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
  return r->s->intern_string(r->host, text, n);
}

static bool sched_switch(systrace_reader *r, const systrace_line *l) {
  systrace_text prev_comm = {0}, next_comm = {0}, state;
  int64_t prev_pid, next_pid, next_prio;
  if (!kv_int(l->payload, "prev_pid", &prev_pid) ||
      !kv_int(l->payload, "next_pid", &next_pid) ||
      !kv_int(l->payload, "next_prio", &next_prio) ||
      !kv_find(l->payload, "prev_state", &state) || l->cpu > MAX_CPU)
    return false;
  kv_find(l->payload, "prev_comm", &prev_comm);
  kv_find(l->payload, "next_comm", &next_comm);
  tm_thread_ref prev = thread_for(r, -1, prev_pid, prev_comm);
  tm_thread_ref next = thread_for(r, -1, next_pid, next_comm);
  r->s->sched_switch(r->host, r->clock, l->ts_ns, r->machine, l->cpu, prev,
                     prev_state_id(r, state), next, (int32_t)next_prio);
  return true;
}

static bool sched_waking(systrace_reader *r, const systrace_line *l) {
  systrace_text comm = {0};
  int64_t pid, target_cpu;
  if (!kv_int(l->payload, "pid", &pid) ||
      !kv_int(l->payload, "target_cpu", &target_cpu) || target_cpu < 0 ||
      target_cpu > MAX_CPU)
    return false;
  kv_find(l->payload, "comm", &comm);
  tm_thread_ref waker = thread_for(r, l->tgid, l->pid, l->task);
  tm_thread_ref woken = thread_for(r, -1, pid, comm);
  r->s->sched_waking(r->host, r->clock, l->ts_ns, r->machine,
                     (uint32_t)target_cpu, woken, waker);
  return true;
}

static bool cpu_counter(systrace_reader *r, const systrace_line *l,
                        bool frequency) {
  int64_t state, cpu;
  if (!kv_int(l->payload, "state", &state) ||
      !kv_int(l->payload, "cpu_id", &cpu) || cpu < 0 || cpu > MAX_CPU)
    return false;
  tm_track_ref *cache = frequency ? r->cpufreq : r->cpuidle;
  if (!cache[cpu]) {
    const char *name = frequency ? "cpufreq" : "cpuidle";
    tm_track_desc desc = {
        .type = frequency ? "cpu_frequency" : "cpu_idle",
        .is_counter = 1,
        .name = r->s->intern_string(r->host, name, strlen(name)),
    };
    cache[cpu] = r->s->track_intern_cpu(r->host, r->machine, (uint32_t)cpu, &desc);
  }
  r->s->counter(r->host, cache[cpu], r->clock, l->ts_ns, (double)state,
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
static bool clock_counter(systrace_reader *r, const systrace_line *l,
                          const char *type) {
  systrace_text name;
  int64_t state;
  if (!bare_token(l->payload, &name) || !kv_int(l->payload, "state", &state))
    return false;
  tm_track_desc desc = {.type = type, .is_counter = 1, .name = intern(r, name)};
  tm_track_ref track = r->s->track_intern(r->host, &desc);
  r->s->counter(r->host, track, r->clock, l->ts_ns, (double)state, TM_NO_ARGS);
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

static void data_line(systrace_reader *r, const char *text, size_t len) {
  systrace_line l;
  if (!systrace_line_parse(text, len, &l)) {
    count_failure(r);
    return;
  }
  r->lines_parsed++;
  thread_for(r, l.tgid == SYSTRACE_NO_TGID ? -1 : l.tgid, l.pid, l.task);
  bool ok = true;
  if (SYSTRACE_TEXT_IS(l.event, "tracing_mark_write") ||
      SYSTRACE_TEXT_IS(l.event, "0"))
    ok = mark_write(r, &l, l.payload);
  else if (SYSTRACE_TEXT_IS(l.event, "print"))
    ok = mark_write(r, &l, strip_print_ip(l.payload));
  else if (SYSTRACE_TEXT_IS(l.event, "sched_switch"))
    ok = sched_switch(r, &l);
  else if (SYSTRACE_TEXT_IS(l.event, "sched_waking") ||
           SYSTRACE_TEXT_IS(l.event, "sched_wakeup"))
    ok = sched_waking(r, &l);
  else if (SYSTRACE_TEXT_IS(l.event, "cpu_frequency"))
    ok = cpu_counter(r, &l, true);
  else if (SYSTRACE_TEXT_IS(l.event, "cpu_idle"))
    ok = cpu_counter(r, &l, false);
  else if (SYSTRACE_TEXT_IS(l.event, "clock_set_rate"))
    ok = clock_counter(r, &l, "clock_frequency");
  else if (SYSTRACE_TEXT_IS(l.event, "clock_enable") ||
           SYSTRACE_TEXT_IS(l.event, "clock_disable"))
    ok = clock_counter(r, &l, "clock_state");
  if (!ok)
    count_failure(r);
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
static void dump_line(systrace_reader *r, const char *text, size_t len) {
  systrace_text t[DUMP_MAX_COLUMNS];
  size_t n = split_blanks(text, len, t, DUMP_MAX_COLUMNS);
  if (n > 0 && SYSTRACE_TEXT_IS(t[0], "USER")) {
    r->dump_pid = r->dump_ppid = r->dump_tid = r->dump_name = -1;
    for (size_t i = 0; i < n; i++) {
      if (SYSTRACE_TEXT_IS(t[i], "PID"))
        r->dump_pid = (int)i;
      else if (SYSTRACE_TEXT_IS(t[i], "PPID"))
        r->dump_ppid = (int)i;
      else if (SYSTRACE_TEXT_IS(t[i], "TID"))
        r->dump_tid = (int)i;
      else if (SYSTRACE_TEXT_IS(t[i], "NAME") || SYSTRACE_TEXT_IS(t[i], "CMD"))
        r->dump_name = (int)i;
    }
    return;
  }
  int64_t pid, other;
  if (r->dump_pid < 0 || r->dump_name < 0 || (size_t)r->dump_name >= n ||
      !systrace_parse_int64(t[r->dump_pid], &pid) || pid <= 0) {
    r->s->stat_add(r->host, "systrace_parse_failure", 1);
    return;
  }
  /* The name is the rest of the row: it may hold blanks. */
  split_blanks(text, len, t, (size_t)r->dump_name + 1);
  tm_str_id name = intern(r, t[r->dump_name]);
  if (r->dump_tid >= 0) {
    if (!systrace_parse_int64(t[r->dump_tid], &other) || other <= 0) {
      r->s->stat_add(r->host, "systrace_parse_failure", 1);
      return;
    }
    thread_for(r, pid, other, t[r->dump_name]);
    return;
  }
  tm_process_ref process = r->s->process(r->host, r->machine, pid);
  r->s->process_set_name(r->host, process, name);
  g_hash_table_add(r->dump_named, GINT_TO_POINTER((gint)pid));
  if (r->dump_ppid >= 0 && systrace_parse_int64(t[r->dump_ppid], &other) &&
      other > 0)
    r->s->process_set_parent(r->host, process,
                             r->s->process(r->host, r->machine, other));
}

/* --- streaming ------------------------------------------------------------ */

static void end_of_line(systrace_reader *r) {
  size_t len = r->line_len;
  if (!r->line_overlong) {
    systrace_line_kind kind = systrace_wrapper_line(&r->wrapper, r->line, &len);
    if (kind == LINE_DATA)
      data_line(r, r->line, len);
    else if (kind == LINE_PROCESS_DUMP)
      dump_line(r, r->line, len);
  } else if (systrace_wrapper_in_data(&r->wrapper) ||
             systrace_wrapper_line(&r->wrapper, r->line, &len) == LINE_DATA) {
    /* Outside trace data (HTML viewer code) long lines are expected, and
     * their first MAX_LINE bytes are enough to follow the wrapper. */
    r->s->stat_add(r->host, "systrace_line_too_long", 1);
  }
  r->line_overlong = false;
  r->line_len = 0;
}

static void append(systrace_reader *r, const uint8_t *data, size_t n) {
  if (r->line_overlong)
    return;
  if (r->line_len + n > MAX_LINE) {
    n = MAX_LINE - r->line_len;
    r->line_overlong = true;
  }
  memcpy(r->line + r->line_len, data, n);
  r->line_len += n;
}

static void systrace_close(void *state);

static void *systrace_open(const tm_host_services *services, tm_host *host,
                           const uint8_t *config, size_t config_len) {
  (void)config;
  (void)config_len;
  systrace_reader *r = g_new0(systrace_reader, 1);
  r->s = services;
  r->host = host;
  if (!TM_HOST_HAS(services, sched_waking) ||
      !TM_HOST_HAS(services, process_set_parent)) {
    services->report_error(host, -1, "the host lacks the scheduling services");
    systrace_close(r);
    return NULL;
  }
  r->machine = services->machine_default(host);
  r->clock = services->clock_builtin(host, r->machine, TM_CLOCK_MONOTONIC);
  services->claim_trace_time(host, r->clock);
  r->line = g_malloc(MAX_LINE);
  r->threads = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  r->async_open = g_hash_table_new(g_direct_hash, g_direct_equal);
  r->cpufreq = g_new0(tm_track_ref, MAX_CPU + 1);
  r->cpuidle = g_new0(tm_track_ref, MAX_CPU + 1);
  r->key_cookie = services->intern_string(host, "cookie", 6);
  r->swapper = services->intern_string(host, "swapper", 7);
  r->first_failure_offset = -1;
  r->dump_pid = r->dump_ppid = r->dump_tid = r->dump_name = -1;
  r->dump_named = g_hash_table_new(g_direct_hash, g_direct_equal);
  return r;
}

static tm_status systrace_feed(void *state, const uint8_t *data, size_t len) {
  systrace_reader *r = state;
  size_t start = 0;
  while (start < len) {
    const uint8_t *nl = memchr(data + start, '\n', len - start);
    size_t end = nl ? (size_t)(nl - data) : len;
    append(r, data + start, end - start);
    if (!nl)
      break;
    end_of_line(r);
    r->offset = r->consumed + (int64_t)end + 1;
    start = end + 1;
  }
  r->consumed += (int64_t)len;
  return TM_OK;
}

static tm_status systrace_finish(void *state) {
  systrace_reader *r = state;
  if (r->line_len || r->line_overlong)
    end_of_line(r);
  if (r->lines_parsed == 0 && r->lines_failed > 0) {
    r->s->report_error(r->host, r->first_failure_offset,
                       "not ftrace text: no line matches the line grammar");
    return TM_ERROR;
  }
  return TM_OK;
}

static void systrace_close(void *state) {
  systrace_reader *r = state;
  if (!r)
    return;
  g_free(r->line);
  if (r->threads)
    g_hash_table_destroy(r->threads);
  if (r->async_open)
    g_hash_table_destroy(r->async_open);
  if (r->dump_named)
    g_hash_table_destroy(r->dump_named);
  g_free(r->cpufreq);
  g_free(r->cpuidle);
  g_free(r);
}

static const tm_reader_descriptor systrace_descriptor = {
    .abi_version = TM_READER_ABI_VERSION,
    .flags = TM_READER_PID0_IS_IDLE,
    .name = "systrace",
    .description = "Android systrace / Linux ftrace text (plain, trace-cmd "
                   "report, systrace HTML)",
    .probe = systrace_probe,
    .open = systrace_open,
    .feed = systrace_feed,
    .finish = systrace_finish,
    .close = systrace_close,
};

TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  return &systrace_descriptor;
}
