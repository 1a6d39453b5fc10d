/*
 * Unit tests of the Chrome JSON reader plugin (plugins/json). Its number
 * conversions and its segmenter have their own programs
 * (test_json_number.c, test_json_segmenter.c).
 *
 * The plugin is loaded with dlopen from $TM_JSON_PLUGIN, exactly as the
 * host loads it, and driven through a fake host services table that
 * writes every call it receives as one line of a log: creations of
 * processes and threads, names, slices, counters, flows (with their
 * committed arg sets inlined), metadata, stats and errors. Tracks are
 * written by description, async keys and flow ids by order of first
 * appearance (k1, f1, ...), so a log states what the reader meant, not
 * which hash it chose.
 *
 * Every fixture is read whole, in 7-byte chunks and byte by byte; the
 * three logs must be identical before the log is compared with the
 * expected one.
 *
 * The services table `services` has every service (the ABI's rule); its
 * import_log writes what stat_add writes ("stat ... +1"), so most logs
 * show dropped events as counts; `logging_services` has one that writes
 * "log <stat> @<offset> <args>" and counts the stat as the host does.
 * read_bytes_with() uses `active_services`, which the import-log tests
 * switch.
 */
#include <dlfcn.h>
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include <yajl/yajl_parse.h>

#include "corpus.h"
#include "json_fast.h"
#include "json_number.h"
#include "json_segmenter.h"

static const tm_reader_descriptor *reader;

/* --- fake host ---------------------------------------------------------- */

#define FAKE_CLOCK 77u
#define FAKE_MACHINE 5u
#define SYNTHETIC_BASE ((int64_t)1 << 32)

typedef struct fake_thread {
  int64_t pid, tid;
} fake_thread;

typedef struct fake_host {
  GHashTable *string_ids; /* string -> id */
  GPtrArray *strings;     /* id -> string; [0] = NULL */
  GArray *process_pids;   /* ref-1 -> pid */
  GArray *threads;        /* ref-1 -> fake_thread */
  GPtrArray *tracks;      /* ref-1 -> description */
  GHashTable *track_ids;  /* description -> ref */
  GHashTable *key_names;  /* uint64 key -> "kN" */
  GHashTable *flow_names; /* uint64 id -> "fN" */
  GString *pending_args;  /* the arg set under construction */
  GPtrArray *arg_sets;    /* ref-1 -> text */
  GHashTable *stats;      /* name -> total */
  GString *log;
  int clock_calls;
  int errors;
  /* Tallies for the real-file checks. */
  int completes, begins, ends, counters, flows_out, flows_step, flows_in;
  int async_begins, async_ends;
  GPtrArray *process_names;
  int thread_names;
  /* Profiling services: ref-1 -> text, and the
   * text -> ref maps that intern them as the host does. */
  GPtrArray *profile_rows;
  GHashTable *profile_ids;
} fake_host;

static fake_host *fake(tm_host *host) { return (fake_host *)host; }

static const char *str_of(fake_host *h, tm_str_id id) {
  if (id == 0)
    return "-";
  g_assert_cmpuint(id, <, h->strings->len);
  return g_ptr_array_index(h->strings, id);
}

/* pid/tid as text; synthetic ids from string pids show their name. */
static char *id_text(fake_host *h, int64_t id) {
  if (id >= SYNTHETIC_BASE && id - SYNTHETIC_BASE < (int64_t)h->strings->len)
    return g_strdup_printf("$%s", str_of(h, (tm_str_id)(id - SYNTHETIC_BASE)));
  return g_strdup_printf("%" PRId64, id);
}

static char *thread_text(fake_host *h, tm_thread_ref ref) {
  g_assert_cmpuint(ref, >=, 1);
  g_assert_cmpuint(ref, <=, h->threads->len);
  fake_thread *t = &g_array_index(h->threads, fake_thread, ref - 1);
  g_autofree char *pid = id_text(h, t->pid);
  g_autofree char *tid = id_text(h, t->tid);
  return g_strdup_printf("%s/%s", pid, tid);
}

static char *process_text(fake_host *h, tm_process_ref ref) {
  g_assert_cmpuint(ref, >=, 1);
  g_assert_cmpuint(ref, <=, h->process_pids->len);
  return id_text(h, g_array_index(h->process_pids, int64_t, ref - 1));
}

static const char *ordinal_name(GHashTable *table, const char *prefix,
                                uint64_t value) {
  uint64_t *key = g_new(uint64_t, 1);
  *key = value;
  const char *name = g_hash_table_lookup(table, key);
  if (name) {
    g_free(key);
    return name;
  }
  char *made = g_strdup_printf("%s%u", prefix, g_hash_table_size(table) + 1);
  g_hash_table_insert(table, key, made);
  return made;
}

static const char *track_text(fake_host *h, tm_track_ref ref) {
  g_assert_cmpuint(ref, >=, 1);
  g_assert_cmpuint(ref, <=, h->tracks->len);
  return g_ptr_array_index(h->tracks, ref - 1);
}

static char *value_text(fake_host *h, tm_arg_value v) {
  switch (v.type) {
  case TM_ARG_INT:
    return g_strdup_printf("int:%" PRId64, v.u.int_value);
  case TM_ARG_UINT:
    return g_strdup_printf("uint:%" PRIu64, (uint64_t)v.u.int_value);
  case TM_ARG_STRING:
    return g_strdup_printf("str:%s", str_of(h, v.u.str_id));
  case TM_ARG_REAL:
    return g_strdup_printf("real:%.17g", v.u.real_value);
  case TM_ARG_BOOL:
    return g_strdup_printf("bool:%s", v.u.int_value ? "true" : "false");
  default:
    return g_strdup_printf("type%d", (int)v.type);
  }
}

static const char *args_text(fake_host *h, tm_args_ref args) {
  if (args == TM_NO_ARGS)
    return "-";
  g_assert_cmpuint(args, <=, h->arg_sets->len);
  return g_ptr_array_index(h->arg_sets, args - 1);
}

static char *time_text(int64_t t) {
  return t == TM_UNKNOWN_TIME ? g_strdup("-")
                              : g_strdup_printf("%" PRId64, t);
}

/* An event arrives: its arg set must be committed, its clock private. */
static void check_event(fake_host *h, tm_clock_ref clock) {
  g_assert_cmpuint(h->pending_args->len, ==, 0);
  g_assert_cmpuint(clock, ==, FAKE_CLOCK);
}

static tm_str_id fake_intern(tm_host *host, const char *s, size_t len) {
  fake_host *h = fake(host);
  g_autofree char *copy = g_strndup(s, len);
  gpointer id = g_hash_table_lookup(h->string_ids, copy);
  if (id)
    return GPOINTER_TO_UINT(id);
  tm_str_id new_id = h->strings->len;
  char *owned = g_strdup(copy);
  g_ptr_array_add(h->strings, owned);
  g_hash_table_insert(h->string_ids, owned, GUINT_TO_POINTER(new_id));
  return new_id;
}

static tm_clock_ref fake_clock_private(tm_host *host) {
  fake(host)->clock_calls++;
  return FAKE_CLOCK;
}

static tm_machine_ref fake_machine_default(tm_host *host) {
  (void)host;
  return FAKE_MACHINE;
}

static tm_process_ref fake_process(tm_host *host, tm_machine_ref machine,
                                   int64_t pid) {
  fake_host *h = fake(host);
  g_assert_cmpuint(machine, ==, FAKE_MACHINE);
  for (guint i = 0; i < h->process_pids->len; i++)
    if (g_array_index(h->process_pids, int64_t, i) == pid)
      return i + 1;
  g_array_append_val(h->process_pids, pid);
  g_autofree char *text = id_text(h, pid);
  g_string_append_printf(h->log, "process pid=%s\n", text);
  return h->process_pids->len;
}

static tm_thread_ref fake_thread_of(tm_host *host, tm_machine_ref machine,
                                    int64_t pid, int64_t tid) {
  fake_host *h = fake(host);
  g_assert_cmpuint(machine, ==, FAKE_MACHINE);
  for (guint i = 0; i < h->threads->len; i++) {
    fake_thread *t = &g_array_index(h->threads, fake_thread, i);
    if (t->pid == pid && t->tid == tid)
      return i + 1;
  }
  fake_thread t = {pid, tid};
  g_array_append_val(h->threads, t);
  g_autofree char *text = thread_text(h, h->threads->len);
  g_string_append_printf(h->log, "thread %s\n", text);
  return h->threads->len;
}

static void fake_process_set_name(tm_host *host, tm_process_ref process,
                                  tm_str_id name) {
  fake_host *h = fake(host);
  g_autofree char *text = process_text(h, process);
  g_string_append_printf(h->log, "process_name pid=%s name=%s\n", text,
                         str_of(h, name));
  g_ptr_array_add(h->process_names, g_strdup(str_of(h, name)));
}

static void fake_thread_set_name(tm_host *host, tm_thread_ref thread,
                                 tm_str_id name) {
  fake_host *h = fake(host);
  g_autofree char *text = thread_text(h, thread);
  g_string_append_printf(h->log, "thread_name %s name=%s\n", text,
                         str_of(h, name));
  h->thread_names++;
}

static void fake_process_add_arg(tm_host *host, tm_process_ref process,
                                 tm_str_id key, tm_arg_value value) {
  fake_host *h = fake(host);
  g_autofree char *text = process_text(h, process);
  g_autofree char *v = value_text(h, value);
  g_string_append_printf(h->log, "process_arg pid=%s %s=%s\n", text,
                         str_of(h, key), v);
}

static void fake_thread_add_arg(tm_host *host, tm_thread_ref thread,
                                tm_str_id key, tm_arg_value value) {
  fake_host *h = fake(host);
  g_autofree char *text = thread_text(h, thread);
  g_autofree char *v = value_text(h, value);
  g_string_append_printf(h->log, "thread_arg %s %s=%s\n", text,
                         str_of(h, key), v);
}

static tm_track_ref intern_track(fake_host *h, char *description_take) {
  gpointer ref = g_hash_table_lookup(h->track_ids, description_take);
  if (ref) {
    g_free(description_take);
    return GPOINTER_TO_UINT(ref);
  }
  g_ptr_array_add(h->tracks, description_take);
  g_hash_table_insert(h->track_ids, description_take,
                      GUINT_TO_POINTER(h->tracks->len));
  return h->tracks->len;
}

static tm_track_ref fake_track_thread(tm_host *host, tm_thread_ref thread) {
  fake_host *h = fake(host);
  g_autofree char *text = thread_text(h, thread);
  return intern_track(h, g_strdup_printf("thread[%s]", text));
}

static tm_track_ref fake_track_intern(tm_host *host, const tm_track_desc *d) {
  fake_host *h = fake(host);
  g_assert_nonnull(d->type);
  GString *s = g_string_new(d->type);
  g_string_append_c(s, '[');
  const char *sep = "";
  if (d->name) {
    g_string_append_printf(s, "%sname=%s", sep, str_of(h, d->name));
    sep = ";";
  }
  if (d->process) {
    g_autofree char *text = process_text(h, d->process);
    g_string_append_printf(s, "%spid=%s", sep, text);
    sep = ";";
  }
  if (d->thread) {
    g_autofree char *text = thread_text(h, d->thread);
    g_string_append_printf(s, "%sthread=%s", sep, text);
    sep = ";";
  }
  if (d->scope) {
    g_string_append_printf(s, "%sscope=%s", sep, str_of(h, d->scope));
    sep = ";";
  }
  if (d->key) {
    g_string_append_printf(s, "%skey=%s", sep,
                           ordinal_name(h->key_names, "k", d->key));
    sep = ";";
  }
  if (d->is_counter) {
    g_string_append_printf(s, "%scounter", sep);
    sep = ";";
  }
  if (d->unit) {
    g_string_append_printf(s, "%sunit=%s", sep, str_of(h, d->unit));
    sep = ";";
  }
  if (d->has_cpu)
    g_string_append_printf(s, "%scpu=%u", sep, d->cpu);
  g_string_append_c(s, ']');
  return intern_track(h, g_string_free(s, FALSE));
}

static void fake_args_add(tm_host *host, tm_str_id key, tm_arg_value value) {
  fake_host *h = fake(host);
  g_autofree char *v = value_text(h, value);
  g_string_append_printf(h->pending_args, "%s%s=%s",
                         h->pending_args->len ? ", " : "", str_of(h, key), v);
}

static tm_args_ref fake_args_commit(tm_host *host) {
  fake_host *h = fake(host);
  if (h->pending_args->len == 0)
    return TM_NO_ARGS;
  g_ptr_array_add(h->arg_sets,
                  g_strdup_printf("{%s}", h->pending_args->str));
  g_string_truncate(h->pending_args, 0);
  return h->arg_sets->len;
}

static void log_slice(fake_host *h, const char *kind,
                      const tm_slice_fields *f, const int64_t *dur) {
  check_event(h, f->clock);
  g_autofree char *ts = time_text(f->ts);
  g_autofree char *tts = time_text(f->thread_ts);
  g_string_append_printf(h->log, "%s %s ts=%s", kind, track_text(h, f->track),
                         ts);
  if (dur) {
    g_autofree char *tdur = time_text(f->thread_dur);
    g_string_append_printf(h->log, " dur=%" PRId64 " name=%s cat=%s tts=%s "
                                   "tdur=%s",
                           *dur, str_of(h, f->name), str_of(h, f->category),
                           tts, tdur);
  } else {
    g_assert_cmpint(f->thread_dur, ==, TM_UNKNOWN_TIME);
    g_string_append_printf(h->log, " name=%s cat=%s tts=%s", str_of(h, f->name),
                           str_of(h, f->category), tts);
  }
  g_string_append_printf(h->log, " args=%s\n", args_text(h, f->args));
}

static bool is_async_track(fake_host *h, tm_track_ref track) {
  return g_str_has_prefix(track_text(h, track), "legacy_async_");
}

static void fake_slice_begin(tm_host *host, const tm_slice_fields *f) {
  fake_host *h = fake(host);
  log_slice(h, "B", f, NULL);
  h->begins++;
  h->async_begins += is_async_track(h, f->track);
}

static void fake_slice_end(tm_host *host, const tm_slice_fields *f) {
  fake_host *h = fake(host);
  log_slice(h, "E", f, NULL);
  h->ends++;
  h->async_ends += is_async_track(h, f->track);
}

static void fake_slice_complete(tm_host *host, const tm_slice_fields *f,
                                int64_t dur) {
  fake_host *h = fake(host);
  log_slice(h, "X", f, &dur);
  h->completes++;
}

static void fake_counter(tm_host *host, tm_track_ref track, tm_clock_ref clock,
                         int64_t ts, double value, tm_args_ref args) {
  fake_host *h = fake(host);
  check_event(h, clock);
  g_string_append_printf(h->log, "C %s ts=%" PRId64 " value=%.17g args=%s\n",
                         track_text(h, track), ts, value, args_text(h, args));
  h->counters++;
}

static void fake_flow(tm_host *host, tm_track_ref track, tm_clock_ref clock,
                      int64_t ts, uint64_t flow_id,
                      tm_flow_direction direction, tm_flow_binding binding,
                      tm_args_ref args) {
  fake_host *h = fake(host);
  check_event(h, clock);
  /* JSON ends keep their flow in flight (TM_FLOW_IN_KEEP); logged "in". */
  static const char *const directions[] = {"out", "step", "in", "continue", "in"};
  g_assert_true(direction != TM_FLOW_IN && direction <= TM_FLOW_IN_KEEP &&
                direction != TM_FLOW_CONTINUE);
  g_string_append_printf(
      h->log, "F %s ts=%" PRId64 " id=%s dir=%s bind=%s args=%s\n",
      track_text(h, track), ts, ordinal_name(h->flow_names, "f", flow_id),
      directions[direction],
      binding == TM_FLOW_BIND_NEXT_BEGIN ? "next" : "enclosing",
      args_text(h, args));
  h->flows_out += direction == TM_FLOW_OUT;
  h->flows_step += direction == TM_FLOW_STEP;
  h->flows_in += direction == TM_FLOW_IN_KEEP;
}

static void fake_metadata_set_int(tm_host *host, const char *name,
                                  int64_t value) {
  g_string_append_printf(fake(host)->log, "meta %s=int:%" PRId64 "\n", name,
                         value);
}

static void fake_metadata_set_string(tm_host *host, const char *name,
                                     tm_str_id value) {
  fake_host *h = fake(host);
  g_string_append_printf(h->log, "meta %s=str:%s\n", name, str_of(h, value));
}

static void fake_stat_add(tm_host *host, const char *name, int64_t delta) {
  fake_host *h = fake(host);
  g_string_append_printf(h->log, "stat %s %+" PRId64 "\n", name, delta);
  int64_t *total = g_hash_table_lookup(h->stats, name);
  if (!total) {
    total = g_new0(int64_t, 1);
    g_hash_table_insert(h->stats, g_strdup(name), total);
  }
  *total += delta;
}

/* One line per import log: stat, byte offset, the args in order. */
static void fake_import_log(tm_host *host, const char *name,
                            int64_t byte_offset, const tm_import_log_arg *args,
                            size_t n_args) {
  fake_host *h = fake(host);
  g_string_append_printf(h->log, "log %s @%" PRId64, name, byte_offset);
  for (size_t i = 0; i < n_args; i++) {
    g_assert_cmpint(args[i].type, ==, TM_ARG_STRING);
    g_string_append_printf(h->log, "%s%s=", i ? "; " : " ", args[i].key);
    g_string_append_len(h->log, args[i].string, (gssize)args[i].string_len);
  }
  g_string_append_c(h->log, '\n');
  int64_t *total = g_hash_table_lookup(h->stats, name);
  if (!total) {
    total = g_new0(int64_t, 1);
    g_hash_table_insert(h->stats, g_strdup(name), total);
  }
  (*total)++;
}

static void fake_report_error(tm_host *host, int64_t offset,
                              const char *message) {
  fake_host *h = fake(host);
  g_string_append_printf(h->log, "error @%" PRId64 " %s\n", offset, message);
  h->errors++;
}

/* Services a plugin must never need. */
static tm_clock_ref fake_clock_builtin(tm_host *host, tm_machine_ref m,
                                       uint32_t id) {
  (void)host, (void)m, (void)id;
  g_assert_not_reached();
}
static tm_clock_ref fake_clock_sequence(tm_host *host, tm_machine_ref m,
                                        uint32_t seq, uint32_t id) {
  (void)host, (void)m, (void)seq, (void)id;
  g_assert_not_reached();
}
static bool fake_claim_trace_time(tm_host *host, tm_clock_ref clock) {
  (void)host, (void)clock;
  g_assert_not_reached();
}
static bool fake_add_clock_snapshot(tm_host *host, const tm_clock_ref *c,
                                    const int64_t *v, size_t n) {
  (void)host, (void)c, (void)v, (void)n;
  g_assert_not_reached();
}
static tm_machine_ref fake_machine_embedded(tm_host *host, uint32_t raw) {
  (void)host, (void)raw;
  g_assert_not_reached();
}
static bool fake_remote_clock_sync(tm_host *host) {
  (void)host;
  g_assert_not_reached();
}
static void fake_machine_set_info(tm_host *host, tm_machine_ref m,
                                  const char *column, tm_arg_value value) {
  (void)host, (void)m, (void)column, (void)value;
  g_assert_not_reached();
}
static void fake_process_set_cmdline(tm_host *host, tm_process_ref p,
                                     tm_str_id cmdline) {
  (void)host, (void)p, (void)cmdline;
  g_assert_not_reached();
}
static void fake_process_set_uid(tm_host *host, tm_process_ref p, int64_t uid) {
  (void)host, (void)p, (void)uid;
  g_assert_not_reached();
}
static void fake_track_set_parent(tm_host *host, tm_track_ref t,
                                  tm_track_ref parent) {
  (void)host, (void)t, (void)parent;
  g_assert_not_reached();
}
static void fake_track_add_source_arg(tm_host *host, tm_track_ref t,
                                      tm_str_id key, tm_arg_value value) {
  (void)host, (void)t, (void)key, (void)value;
  g_assert_not_reached();
}

/* Services only systemTraceEvents use: each writes one line. */
static void fake_process_set_parent(tm_host *host, tm_process_ref p,
                                    tm_process_ref parent) {
  g_string_append_printf(fake(host)->log, "process_parent p%u=p%u\n", p,
                         parent);
}
static void fake_sched_switch(tm_host *host, tm_clock_ref clock, int64_t ts,
                              tm_machine_ref m, uint32_t cpu,
                              tm_thread_ref prev, tm_str_id prev_state,
                              tm_thread_ref next, int32_t next_prio) {
  (void)clock, (void)m, (void)prev_state, (void)next_prio;
  g_string_append_printf(fake(host)->log,
                         "sched_switch ts=%" PRId64 " cpu=%u t%u->t%u\n", ts,
                         cpu, prev, next);
}
static void fake_sched_waking(tm_host *host, tm_clock_ref clock, int64_t ts,
                              tm_machine_ref m, uint32_t cpu,
                              tm_thread_ref thread, tm_thread_ref waker) {
  (void)clock, (void)m, (void)waker;
  g_string_append_printf(fake(host)->log,
                         "sched_waking ts=%" PRId64 " cpu=%u t%u\n", ts, cpu,
                         thread);
}

static void fake_stat_add(tm_host *host, const char *name, int64_t delta);
static void fake_import_log_as_stat(tm_host *host, const char *name,
                                    int64_t byte_offset,
                                    const tm_import_log_arg *args,
                                    size_t n_args) {
  (void)byte_offset, (void)args, (void)n_args;
  fake_stat_add(host, name, 1);
}
static tm_mapping_ref fake_mapping(tm_host *host, tm_str_id name,
                                   tm_str_id build_id, uint64_t start,
                                   uint64_t end, uint64_t exact_offset,
                                   uint64_t load_bias);
static tm_frame_ref fake_frame(tm_host *host, tm_str_id function_name,
                               tm_mapping_ref mapping, uint64_t rel_pc);
static tm_callsite_ref fake_callsite(tm_host *host, tm_callsite_ref parent,
                                     tm_frame_ref frame);
static void fake_sample(tm_host *host, tm_clock_ref clock, int64_t ts,
                        tm_thread_ref thread, tm_callsite_ref callsite,
                        int32_t cpu);

static const tm_host_services services = {
    .struct_size = sizeof(tm_host_services),
    .abi_version = TM_READER_ABI_VERSION,
    .intern_string = fake_intern,
    .clock_private = fake_clock_private,
    .clock_builtin = fake_clock_builtin,
    .clock_sequence = fake_clock_sequence,
    .claim_trace_time = fake_claim_trace_time,
    .add_clock_snapshot = fake_add_clock_snapshot,
    .machine_default = fake_machine_default,
    .machine_embedded = fake_machine_embedded,
    .process = fake_process,
    .thread = fake_thread_of,
    .process_set_name = fake_process_set_name,
    .thread_set_name = fake_thread_set_name,
    .process_add_arg = fake_process_add_arg,
    .thread_add_arg = fake_thread_add_arg,
    .track_thread = fake_track_thread,
    .track_intern = fake_track_intern,
    .args_add = fake_args_add,
    .args_commit = fake_args_commit,
    .slice_begin = fake_slice_begin,
    .slice_end = fake_slice_end,
    .slice_complete = fake_slice_complete,
    .counter = fake_counter,
    .flow = fake_flow,
    .metadata_set_int = fake_metadata_set_int,
    .metadata_set_string = fake_metadata_set_string,
    .stat_add = fake_stat_add,
    .report_error = fake_report_error,
    .remote_clock_sync = fake_remote_clock_sync,
    .machine_set_info = fake_machine_set_info,
    .process_set_cmdline = fake_process_set_cmdline,
    .process_set_parent = fake_process_set_parent,
    .process_set_uid = fake_process_set_uid,
    .track_set_parent = fake_track_set_parent,
    .track_add_source_arg = fake_track_add_source_arg,
    .sched_switch = fake_sched_switch,
    .sched_waking = fake_sched_waking,
    .mapping = fake_mapping,
    .frame = fake_frame,
    .callsite = fake_callsite,
    .sample = fake_sample,
    .import_log = fake_import_log_as_stat,
};

/* Mappings, frames and callsites share one interning table of texts: a
 * mapping is its url, a frame "name@url", a callsite its frames root
 * first, joined by '>'. A ref is the text's position + 1, so equal texts
 * (the host's interning keys) give equal refs. */
static uint32_t profile_row(fake_host *h, char *text_take) {
  gpointer ref = g_hash_table_lookup(h->profile_ids, text_take);
  if (ref) {
    g_free(text_take);
    return GPOINTER_TO_UINT(ref);
  }
  g_ptr_array_add(h->profile_rows, text_take);
  g_hash_table_insert(h->profile_ids, text_take,
                      GUINT_TO_POINTER(h->profile_rows->len));
  return h->profile_rows->len;
}

static const char *profile_text(fake_host *h, uint32_t ref) {
  g_assert_cmpuint(ref, >=, 1);
  g_assert_cmpuint(ref, <=, h->profile_rows->len);
  return g_ptr_array_index(h->profile_rows, ref - 1);
}

static tm_mapping_ref fake_mapping(tm_host *host, tm_str_id name,
                                   tm_str_id build_id, uint64_t start,
                                   uint64_t end, uint64_t exact_offset,
                                   uint64_t load_bias) {
  fake_host *h = fake(host);
  g_assert_true(!build_id && !start && !end && !exact_offset && !load_bias);
  return profile_row(h, g_strdup_printf("map:%s", name ? str_of(h, name)
                                                       : "(null)"));
}

static tm_frame_ref fake_frame(tm_host *host, tm_str_id function_name,
                               tm_mapping_ref mapping, uint64_t rel_pc) {
  fake_host *h = fake(host);
  g_assert_cmpuint(rel_pc, ==, 0);
  return profile_row(h, g_strdup_printf("%s@%s", str_of(h, function_name),
                                        profile_text(h, mapping) + 4));
}

static tm_callsite_ref fake_callsite(tm_host *host, tm_callsite_ref parent,
                                     tm_frame_ref frame) {
  fake_host *h = fake(host);
  return profile_row(h, g_strdup_printf(
                            "%s%s%s", parent ? profile_text(h, parent) : "",
                            parent ? ">" : "", profile_text(h, frame)));
}

static void fake_sample(tm_host *host, tm_clock_ref clock, int64_t ts,
                        tm_thread_ref thread, tm_callsite_ref callsite,
                        int32_t cpu) {
  fake_host *h = fake(host);
  check_event(h, clock);
  g_autofree char *t = thread_text(h, thread);
  g_string_append_printf(h->log, "sample ts=%" PRId64 " thread=%s cpu=%d "
                         "stack=%s\n", ts, t, cpu,
                         profile_text(h, callsite));
}

/* `services` with the logging import_log; filled in by main(). */
static tm_host_services logging_services;
static const tm_host_services *active_services = &services;

static fake_host *fake_host_new(void) {
  fake_host *h = g_new0(fake_host, 1);
  h->string_ids = g_hash_table_new(g_str_hash, g_str_equal);
  h->strings = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(h->strings, NULL);
  h->process_pids = g_array_new(FALSE, FALSE, sizeof(int64_t));
  h->threads = g_array_new(FALSE, FALSE, sizeof(fake_thread));
  h->tracks = g_ptr_array_new_with_free_func(g_free);
  h->track_ids = g_hash_table_new(g_str_hash, g_str_equal);
  h->key_names = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                       g_free);
  h->flow_names = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                        g_free);
  h->pending_args = g_string_new(NULL);
  h->arg_sets = g_ptr_array_new_with_free_func(g_free);
  h->stats = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  h->log = g_string_new(NULL);
  h->process_names = g_ptr_array_new_with_free_func(g_free);
  h->profile_rows = g_ptr_array_new_with_free_func(g_free);
  h->profile_ids = g_hash_table_new(g_str_hash, g_str_equal);
  return h;
}

static void fake_host_free(fake_host *h) {
  g_hash_table_destroy(h->string_ids);
  g_ptr_array_free(h->strings, TRUE);
  g_array_free(h->process_pids, TRUE);
  g_array_free(h->threads, TRUE);
  g_hash_table_destroy(h->track_ids);
  g_ptr_array_free(h->tracks, TRUE);
  g_hash_table_destroy(h->key_names);
  g_hash_table_destroy(h->flow_names);
  g_string_free(h->pending_args, TRUE);
  g_ptr_array_free(h->arg_sets, TRUE);
  g_hash_table_destroy(h->stats);
  g_string_free(h->log, TRUE);
  g_ptr_array_free(h->process_names, TRUE);
  g_hash_table_destroy(h->profile_ids);
  g_ptr_array_free(h->profile_rows, TRUE);
  g_free(h);
}

static int64_t stat_total(fake_host *h, const char *name) {
  int64_t *total = g_hash_table_lookup(h->stats, name);
  return total ? *total : 0;
}

/* --- driving the reader ---------------------------------------------------- */

/* Reads `len` bytes in chunks of `chunk` as the host would: stop feeding
 * after an error, finish otherwise, always close. The log ends with the
 * final status. */
static fake_host *read_bytes_with(const tm_reader_descriptor *rd,
                                  const char *config, const char *bytes,
                                  size_t len, size_t chunk) {
  fake_host *h = fake_host_new();
  void *state = rd->open(active_services, (tm_host *)h,
                         (const uint8_t *)config, config ? strlen(config) : 0);
  g_assert_nonnull(state);
  tm_status status = TM_OK;
  for (size_t off = 0; off < len && status == TM_OK;) {
    size_t n = MIN(chunk, len - off);
    status = rd->feed(state, (const uint8_t *)bytes + off, n);
    off += n;
  }
  if (status == TM_OK)
    status = rd->finish(state);
  rd->close(state);
  g_assert_cmpuint(h->pending_args->len, ==, 0);
  g_assert_cmpint(h->errors, ==, status == TM_OK ? 0 : 1);
  g_string_append(h->log, status == TM_OK ? "status=ok\n" : "status=error\n");
  return h;
}

static fake_host *read_bytes(const char *bytes, size_t len, size_t chunk) {
  return read_bytes_with(reader, NULL, bytes, len, chunk);
}

/* Reads whole, in 7-byte chunks and byte by byte; the logs must match. */
static fake_host *read_all_chunkings(const char *bytes, size_t len) {
  fake_host *whole = read_bytes(bytes, len, MAX(len, 1));
  const size_t chunks[] = {7, 1};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    fake_host *other = read_bytes(bytes, len, chunks[i]);
    g_assert_cmpstr(other->log->str, ==, whole->log->str);
    fake_host_free(other);
  }
  return whole;
}

static char *fixture_path(const char *name) {
  return g_test_build_filename(G_TEST_DIST, "data", "json", name, NULL);
}

static fake_host *read_fixture(const char *name) {
  g_autofree char *path = fixture_path(name);
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  g_file_get_contents(path, &bytes, &len, &error);
  g_assert_no_error(error);
  return read_all_chunkings(bytes, len);
}

static void assert_fixture_log(const char *name, const char *expected) {
  fake_host *h = read_fixture(name);
  g_assert_cmpstr(h->log->str, ==, expected);
  fake_host_free(h);
}

static void assert_text_log(const char *text, const char *expected) {
  fake_host *h = read_all_chunkings(text, strlen(text));
  g_assert_cmpstr(h->log->str, ==, expected);
  fake_host_free(h);
}

/* --- fast path ------------------------------------------------------------------
 *
 * The fast path (json_fast.c) must be unobservable: the tokenizer must
 * call yajl's callbacks exactly as yajl does, and the reader must log the
 * same host calls, errors and offsets whether an element went through it
 * or through yajl. The reference is a test build of the same reader with
 * the fast path off (config "yajl-only").
 */

static const tm_reader_descriptor *test_reader; /* TM_JSON_TEST_PLUGIN */

/* One line per callback; strings with their length, bytes as they are.
 * A line is marked "m " when the callback is one for a member of the
 * element: yajl's by depth (directly inside the array's object), the
 * tokenizer's by the table it came from (json_fast_element's `members`),
 * so that the logs agree only if the tokenizer picks its tables right. */
typedef struct recording {
  GString *log;
  int depth; /* containers open */
  bool by_depth;
} recording;

static GString *rec_line(void *ctx, bool member_table, int depth_change) {
  recording *r = ctx;
  if (depth_change < 0)
    r->depth--;
  bool member = r->by_depth ? depth_change >= 0 && r->depth == 2
                            : member_table;
  if (depth_change > 0)
    r->depth++;
  if (member)
    g_string_append(r->log, "m ");
  return r->log;
}

#define RECORDERS(prefix, member_table)                                        \
  static int prefix##null(void *ctx) {                                        \
    g_string_append(rec_line(ctx, member_table, 0), "null\n");                \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##boolean(void *ctx, int b) {                              \
    g_string_append_printf(rec_line(ctx, member_table, 0), "bool %d\n", b);   \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##number(void *ctx, const char *s, size_t len) {           \
    g_string_append_printf(rec_line(ctx, member_table, 0), "number %.*s\n",   \
                           (int)len, s);                                       \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##string(void *ctx, const unsigned char *s, size_t len) {  \
    GString *log = rec_line(ctx, member_table, 0);                             \
    g_string_append_printf(log, "string %zu:", len);                           \
    g_string_append_len(log, (const char *)s, (gssize)len);                    \
    g_string_append_c(log, '\n');                                             \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##key(void *ctx, const unsigned char *s, size_t len) {     \
    GString *log = rec_line(ctx, member_table, 0);                             \
    g_string_append_printf(log, "key %zu:", len);                              \
    g_string_append_len(log, (const char *)s, (gssize)len);                    \
    g_string_append_c(log, '\n');                                             \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##start_map(void *ctx) {                                   \
    g_string_append(rec_line(ctx, member_table, 1), "{\n");                   \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##end_map(void *ctx) {                                     \
    g_string_append(rec_line(ctx, member_table, -1), "}\n");                  \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##start_array(void *ctx) {                                 \
    g_string_append(rec_line(ctx, member_table, 1), "[\n");                   \
    return 1;                                                                  \
  }                                                                            \
  static int prefix##end_array(void *ctx) {                                   \
    g_string_append(rec_line(ctx, member_table, -1), "]\n");                  \
    return 1;                                                                  \
  }                                                                            \
  static const yajl_callbacks prefix##table = {                                \
      prefix##null,      prefix##boolean,   NULL,                              \
      NULL,              prefix##number,    prefix##string,                    \
      prefix##start_map, prefix##key,       prefix##end_map,                   \
      prefix##start_array, prefix##end_array};

RECORDERS(rec_, false)
RECORDERS(member_rec_, true)
#define recorder rec_table
#define member_recorder member_rec_table

/* yajl's callbacks over `text` (configured as the reader configures it);
 * NULL if yajl rejects it. */
static char *yajl_log(const char *text, size_t len) {
  GString *log = g_string_new(NULL);
  recording rec = {log, 0, true};
  yajl_handle yajl = yajl_alloc(&recorder, NULL, &rec);
  yajl_config(yajl, yajl_dont_validate_strings, 1);
  bool ok = yajl_parse(yajl, (const unsigned char *)text, len) ==
                yajl_status_ok &&
            yajl_complete_parse(yajl) == yajl_status_ok;
  yajl_free(yajl);
  return g_string_free(log, !ok);
}

/* Runs the tokenizer on `data`; when it takes an element, yajl must
 * accept "[" + the bytes it took + "0]" and call the same callbacks for
 * them. Returns the status; `*consumed` as the tokenizer set it. */
static json_fast_status check_fast_element(const char *data, size_t len,
                                           size_t *consumed) {
  GString *fast = g_string_new("[\n");
  recording rec = {fast, 1, false};
  json_buf decoded = {0};
  *consumed = 0;
  json_fast_status status =
      json_fast_element(&recorder, &member_recorder, &rec, &decoded,
                        (const uint8_t *)data, len, consumed);
  if (status == JSON_FAST_DONE) {
    g_assert_cmpuint(*consumed, <=, len);
    g_assert_cmpint(data[*consumed - 1], ==, ',');
    GString *array = g_string_new("[");
    g_string_append_len(array, data, (gssize)*consumed);
    g_string_append(array, "0]");
    g_autofree char *expected = yajl_log(array->str, array->len);
    g_string_append(fast, "number 0\n]\n");
    if (!expected)
      g_error("yajl rejects what the fast path took: %s", array->str);
    g_assert_cmpstr(fast->str, ==, expected);
    g_string_free(array, TRUE);
  }
  json_buf_free(&decoded);
  g_string_free(fast, TRUE);
  return status;
}

/* An element the fast path must take whole with its comma (it must see
 * the next element start), and no prefix of it. */
static void assert_fast_takes(const char *element) {
  g_autofree char *data = g_strconcat(element, ", {", NULL);
  size_t len = strlen(data), consumed;
  if (check_fast_element(data, len, &consumed) != JSON_FAST_DONE)
    g_error("the fast path declines %s", element);
  g_assert_cmpuint(consumed, ==, strlen(element) + 1);
  for (size_t k = 0; k < len; k++)
    g_assert_cmpint(check_fast_element(data, k, &consumed), ==,
                    JSON_FAST_DECLINED);
}

/* An element the fast path must leave to yajl, though the next element
 * is in sight. */
static void assert_fast_declines(const char *data) {
  g_autofree char *more = g_strconcat(data, "{", NULL);
  size_t consumed;
  g_assert_cmpint(check_fast_element(more, strlen(more), &consumed), ==,
                  JSON_FAST_DECLINED);
}

static void test_fast_tokenizer_takes_common_events(void) {
  assert_fast_takes("{\"args\":{\"name\":\"Browser\"},\"cat\":\"__metadata\","
                    "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":41000,"
                    "\"tid\":41000,\"ts\":0}");
  assert_fast_takes("{\"cat\":\"viz\",\"dur\":94.054,\"name\":\"Scroll\","
                    "\"ph\":\"X\",\"pid\":41655,\"tdur\":65.837,\"tid\":41655,"
                    "\"ts\":372811992840.374,\"tts\":13968.399}");
  assert_fast_takes("{\"args\":{\"data\":{\"stackTrace\":[{\"functionName\":"
                    "\"f191\",\"lineNumber\":1757},{\"functionName\":\"g\","
                    "\"lineNumber\":828}],\"priority\":3}},\"ph\":\"X\"}");
  assert_fast_takes("{}");
  assert_fast_takes(" \n\t{ \"a\" : [ ] , \"b\" : { } ,\"c\":[1,[2,[3]]]}\r\n ");
  assert_fast_takes("{\"t\":true,\"f\":false,\"n\":null,\"a\":[true,false,null]}");
  /* Numbers: every form of the grammar. */
  assert_fast_takes("{\"a\":0,\"b\":-0,\"c\":12,\"d\":-7.25,\"e\":1e3,"
                    "\"f\":1.5E-2,\"g\":2e+2,\"h\":-0.0e0,\"i\":"
                    "123456789012345678901234567890.5}");
  /* Escapes, in keys and values, decoded as yajl does. */
  assert_fast_takes("{\"p\\u0068\":\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\","
                    "\"\\u00e9\\u00E9\\u2028\\uFFFF\":\"\\ud83d\\ude00\","
                    "\"nul\":\"a\\u0000b\",\"low\":\"\\udc00\","
                    "\"max\":\"\\udbff\\udfff\",\"raw\":\"caf\xc3\xa9\"}");
  /* Deep, but within the limit. */
  GString *deep = g_string_new("{\"a\":");
  for (int i = 0; i < JSON_FAST_MAX_DEPTH - 1; i++)
    g_string_append(deep, "[");
  for (int i = 0; i < JSON_FAST_MAX_DEPTH - 1; i++)
    g_string_append(deep, "]");
  g_string_append(deep, "}");
  assert_fast_takes(deep->str);
  g_string_free(deep, TRUE);
}

static void test_fast_tokenizer_leaves_the_rest_to_yajl(void) {
  /* The byte after the comma must be seen, and not be ']': yajl may be
   * in array_start, where "]" would be accepted. */
  size_t consumed;
  g_assert_cmpint(check_fast_element("{},", 3, &consumed), ==,
                  JSON_FAST_DECLINED);
  g_assert_cmpint(check_fast_element("{}, \n", 5, &consumed), ==,
                  JSON_FAST_DECLINED);
  g_assert_cmpint(check_fast_element("{}, ]", 5, &consumed), ==,
                  JSON_FAST_DECLINED);
  g_assert_cmpint(check_fast_element("{},}", 4, &consumed), ==,
                  JSON_FAST_DONE);
  g_assert_cmpint(check_fast_element("{},,", 4, &consumed), ==,
                  JSON_FAST_DONE);
  /* Not an object, or not followed by a comma. */
  assert_fast_declines("[1],");
  assert_fast_declines("1,");
  assert_fast_declines("{}]");
  assert_fast_declines("{} x,");
  assert_fast_declines("{}");
  /* Syntax errors, which yajl must report. */
  assert_fast_declines("{\"a\":01},");
  assert_fast_declines("{\"a\":1.},");
  assert_fast_declines("{\"a\":-},");
  assert_fast_declines("{\"a\":1e},");
  assert_fast_declines("{\"a\":.5},");
  assert_fast_declines("{\"a\":+1},");
  assert_fast_declines("{\"a\":tru},");
  assert_fast_declines("{\"a\":truex},");
  assert_fast_declines("{\"a\":1x},");
  assert_fast_declines("{\"a\":1,},");
  assert_fast_declines("{\"a\" 1},");
  assert_fast_declines("{\"a\":1 \"b\":2},");
  assert_fast_declines("{a:1},");
  assert_fast_declines("{\"a\":[1,]},");
  assert_fast_declines("{\"a\":[1}},");
  assert_fast_declines("{\"a\":{\"b\":1]},");
  assert_fast_declines("{\"a\":\"x\ty\"},");
  assert_fast_declines("{\"a\":\"\\x\"},");
  assert_fast_declines("{\"a\":\"\\u12g4\"},");
  assert_fast_declines("{\"a\":\"\\u12\"},");
  /* Whitespace yajl accepts but the fast path does not know. */
  assert_fast_declines("{\"a\":1\v},");
  assert_fast_declines("{\"a\":1\f},");
  /* Surrogates yajl decodes in its own way. */
  assert_fast_declines("{\"a\":\"\\ud800\"},");
  assert_fast_declines("{\"a\":\"\\ud800x\"},");
  assert_fast_declines("{\"a\":\"\\ud800\\n\"},");
  assert_fast_declines("{\"a\":\"\\ud800\\u0041\"},");
  assert_fast_declines("{\"a\":\"\\udbff\\ud800\"},");
  /* Too deep. */
  GString *deep = g_string_new("{\"a\":");
  for (int i = 0; i < JSON_FAST_MAX_DEPTH; i++)
    g_string_append(deep, "[");
  for (int i = 0; i < JSON_FAST_MAX_DEPTH; i++)
    g_string_append(deep, "]");
  g_string_append(deep, "},");
  assert_fast_declines(deep->str);
  g_string_free(deep, TRUE);
}

/* --- random traces ----------------------------------------------------------- */

static const char *const number_texts[] = {
    "0",      "-0",        "1",         "12",        "-7",
    "1.5",    "0.001",     "123456.789", "1.0005",   "-2.5",
    "1e3",    "1.5E-2",    "2e+2",      "-1e-7",     "4294967296",
    "9007199254740993",    "123456789012345678901", "1.23456789e5",
    "372811992840.374",    "0.0000001", "-0.0",      "1E400"};

static const char *const string_texts[] = {
    "plain", "", "with \\\"quote\\\"", "tab\\there", "slash\\/x",
    "\\u00e9t\\u00E9", "emoji \\ud83d\\ude00", "nul\\u0000byte",
    "back\\\\slash", "ctl \\b\\f\\n\\r", "caf\xc3\xa9",
    "comma, [bracket] {brace}", "\\u2028", "lone \\ud800x",
    "0x1F", "12.5", "renderer", "e", "g", "p", "t"};

static const char *const phases[] = {"X", "B", "E", "i", "I", "C", "b",
                                     "e", "n", "s", "t", "f", "M", "P",
                                     "R", "Z", ""};

static void random_space(GString *out) {
  static const char *const spaces[] = {"", "", "", "", " ", "\n", "\t",
                                       "\r\n", "  "};
  g_string_append(out, spaces[g_test_rand_int_range(0, G_N_ELEMENTS(spaces))]);
}

#define PICK(array) (array)[g_test_rand_int_range(0, G_N_ELEMENTS(array))]

static void random_string(GString *out) {
  g_string_append_printf(out, "\"%s\"", PICK(string_texts));
}

static void random_value(GString *out, int depth) {
  int kind = g_test_rand_int_range(0, depth > 3 ? 6 : 8);
  switch (kind) {
  case 0:
  case 1:
    g_string_append(out, PICK(number_texts));
    break;
  case 2:
  case 3:
    random_string(out);
    break;
  case 4:
    g_string_append(out, g_test_rand_bit() ? "true" : "false");
    break;
  case 5:
    g_string_append(out, "null");
    break;
  default: {
    bool object = kind == 6;
    int n = g_test_rand_int_range(0, 4);
    g_string_append_c(out, object ? '{' : '[');
    for (int i = 0; i < n; i++) {
      if (i)
        g_string_append_c(out, ',');
      random_space(out);
      if (object) {
        random_string(out);
        random_space(out);
        g_string_append_c(out, ':');
        random_space(out);
      }
      random_value(out, depth + 1);
      random_space(out);
    }
    g_string_append_c(out, object ? '}' : ']');
  }
  }
}

/* One event: the keys the reader knows, in random order, with values of
 * the right type or not, and unknown keys. */
static void random_event(GString *out) {
  static const char *const keys[] = {
      "ph", "ph",  "ts",   "ts",   "dur",     "tts",      "tdur",
      "pid", "tid", "name", "cat",  "args",    "args",     "id",
      "id2", "s",   "bp",   "bind_id", "flow_in", "flow_out", "other",
      "p\\u0068", "t\\u0073"};
  int n = g_test_rand_int_range(0, 9);
  g_string_append_c(out, '{');
  for (int i = 0; i < n; i++) {
    if (i)
      g_string_append_c(out, ',');
    random_space(out);
    const char *key = PICK(keys);
    g_string_append_printf(out, "\"%s\":", key);
    random_space(out);
    bool typed = g_test_rand_int_range(0, 5) > 0;
    if (typed && (strcmp(key, "ph") == 0 || strcmp(key, "p\\u0068") == 0))
      g_string_append_printf(out, "\"%s\"", PICK(phases));
    else if (typed && (key[0] == 't' || strcmp(key, "dur") == 0 ||
                       strcmp(key, "pid") == 0))
      g_string_append(out, PICK(number_texts));
    else if (typed && strcmp(key, "args") == 0)
      random_value(out, 2); /* often an object, nested */
    else if (typed && strcmp(key, "id2") == 0)
      g_string_append_printf(out, "{\"%s\":\"0x%x\"}",
                             g_test_rand_bit() ? "local" : "global",
                             g_test_rand_int_range(0, 4));
    else
      random_value(out, 1);
    random_space(out);
  }
  g_string_append_c(out, '}');
}

/* A trace of `n` events: a bare array or an object with metadata, with or
 * without trailing commas and a closing bracket. */
static char *random_trace(int n, size_t *len) {
  GString *out = g_string_new(NULL);
  bool object = g_test_rand_bit();
  if (object)
    g_string_append(out, "{\"metadata\":{\"a\":[1,{\"b\":\"c\"}]},"
                         "\"traceEvents\":");
  g_string_append_c(out, '[');
  random_space(out);
  for (int i = 0; i < n; i++) {
    if (g_test_rand_int_range(0, 12) == 0)
      random_value(out, 1); /* not an event: counted and skipped */
    else
      random_event(out);
    random_space(out);
    if (i + 1 < n || g_test_rand_bit())
      g_string_append_c(out, ',');
    random_space(out);
  }
  g_string_append_c(out, ']');
  if (object)
    g_string_append(out, ",\"displayTimeUnit\":\"ns\"}");
  *len = out->len;
  return g_string_free(out, FALSE);
}

/* The fast path's log, in each chunking, must be the test build's with
 * yajl alone reading the input whole. */
static void assert_same_with_config(const char *config, const char *bytes,
                                    size_t len, const size_t *chunks,
                                    size_t n_chunks) {
  g_autofree char *reference_config =
      g_strjoin(" ", "yajl-only", config, NULL);
  fake_host *reference = read_bytes_with(test_reader, reference_config, bytes,
                                         len, MAX(len, 1));
  for (size_t i = 0; i < n_chunks; i++) {
    fake_host *h =
        config ? read_bytes_with(test_reader, config, bytes, len, chunks[i])
               : read_bytes_with(reader, NULL, bytes, len, chunks[i]);
    if (strcmp(h->log->str, reference->log->str) != 0) {
      g_printerr("input (%zu bytes, chunks of %zu):\n%.*s\n", len, chunks[i],
                 (int)len, bytes);
      g_assert_cmpstr(h->log->str, ==, reference->log->str);
    }
    fake_host_free(h);
  }
  fake_host_free(reference);
}

static void assert_same_as_yajl_alone(const char *bytes, size_t len,
                                      const size_t *chunks, size_t n_chunks) {
  assert_same_with_config(NULL, bytes, len, chunks, n_chunks);
}

static void assert_same_in_every_chunking(const char *bytes, size_t len) {
  size_t *chunks = g_new(size_t, len + 1);
  for (size_t i = 0; i <= len; i++)
    chunks[i] = i + 1;
  assert_same_as_yajl_alone(bytes, len, chunks, len + 1);
  g_free(chunks);
}

static int64_t fast_elements(const char *bytes, size_t len) {
  fake_host *h = read_bytes_with(test_reader, "count-fast", bytes, len,
                                 MAX(len, 1));
  int64_t n = stat_total(h, "json_test_fast_elements");
  fake_host_free(h);
  return n;
}

static void test_fast_reader_agrees_with_yajl_in_every_chunking(void) {
  int64_t taken = 0;
  for (int round = 0; round < 40; round++) {
    size_t len;
    g_autofree char *trace = random_trace(g_test_rand_int_range(1, 8), &len);
    assert_same_in_every_chunking(trace, len);
    taken += fast_elements(trace, len);
  }
  /* The comparison means something only if the fast path ran. */
  g_assert_cmpint(taken, >, 40);
  const char *fixtures[] = {"slices.json", "async.json", "counters.json",
                            "flows.json", "pid_tid.json", "strings.json",
                            "times.json", "bad_events.json",
                            "object_form.json", "malformed.json",
                            "incomplete_object.json", "unterminated.json",
                            "unterminated_after_comma.json"};
  for (size_t i = 0; i < G_N_ELEMENTS(fixtures); i++) {
    g_autofree char *path = fixture_path(fixtures[i]);
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    assert_same_in_every_chunking(bytes, len);
  }
}

static void test_fast_reader_agrees_with_yajl_on_truncated_traces(void) {
  static const size_t chunks[] = {1, 2, 3, 5, 8, 13, 64, 4096};
  for (int round = 0; round < 12; round++) {
    size_t len;
    g_autofree char *trace = random_trace(g_test_rand_int_range(2, 6), &len);
    for (size_t cut = 0; cut <= len; cut++)
      assert_same_as_yajl_alone(trace, cut, chunks, G_N_ELEMENTS(chunks));
  }
}

/* When an event's end fails (out of memory), the fast path reports it
 * where yajl would: just after the event's closing brace. */
static void test_fast_reader_stops_where_yajl_would(void) {
  static const size_t chunks[] = {1, 2, 5, 16, 64, 4096};
  int stopped = 0;
  for (int round = 0; round < 30; round++) {
    size_t len;
    g_autofree char *trace = random_trace(g_test_rand_int_range(3, 8), &len);
    assert_same_with_config("cancel-third-event", trace, len, chunks,
                            G_N_ELEMENTS(chunks));
    fake_host *h = read_bytes_with(test_reader, "cancel-third-event", trace,
                                   len, len);
    stopped += strstr(h->log->str, "out of memory") != NULL;
    fake_host_free(h);
  }
  g_assert_cmpint(stopped, >, 0);
  /* And by the fast path itself, in a trace it reads whole. */
  const char *events = "[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1},"
                       "{\"ph\":\"i\",\"ts\":2,\"pid\":1,\"tid\":1},"
                       "{\"ph\":\"i\",\"ts\":3,\"pid\":1,\"tid\":1},"
                       "{\"ph\":\"i\",\"ts\":4,\"pid\":1,\"tid\":1}]";
  size_t third_end = (size_t)(strstr(events, "\"ts\":3") - events) + 23;
  g_assert_cmpint(events[third_end - 1], ==, '}');
  fake_host *h = read_bytes_with(test_reader, "cancel-third-event count-fast",
                                 events, strlen(events), strlen(events));
  g_autofree char *expected = g_strdup_printf(
      "error @%zu out of memory while reading the JSON trace\n", third_end);
  g_assert_nonnull(strstr(h->log->str, expected));
  g_assert_cmpint(stat_total(h, "json_test_fast_elements"), ==, 2);
  fake_host_free(h);
}

static void test_fast_reader_agrees_with_yajl_on_damaged_traces(void) {
  static const size_t chunks[] = {1, 3, 7, 16, 4096};
  static const char damage[] = "\"\\,:{}[]0-.eEtfnu \x01\v";
  for (int round = 0; round < 400; round++) {
    size_t len;
    char *trace = random_trace(g_test_rand_int_range(1, 5), &len);
    int edits = g_test_rand_int_range(1, 4);
    for (int e = 0; e < edits && len > 0; e++) {
      size_t at = (size_t)g_test_rand_int_range(0, (gint32)len);
      char c = damage[g_test_rand_int_range(0, sizeof(damage) - 1)];
      switch (g_test_rand_int_range(0, 3)) {
      case 0: /* replace */
        trace[at] = c;
        break;
      case 1: /* delete */
        memmove(trace + at, trace + at + 1, len - at - 1);
        len--;
        break;
      default: { /* insert */
        char *grown = g_malloc(len + 2);
        memcpy(grown, trace, at);
        grown[at] = c;
        memcpy(grown + at + 1, trace + at, len - at);
        g_free(trace);
        trace = grown;
        len++;
      }
      }
    }
    assert_same_as_yajl_alone(trace, len, chunks, G_N_ELEMENTS(chunks));
    g_free(trace);
  }
}

static void test_fast_tokenizer_agrees_with_yajl_on_random_events(void) {
  static const char damage[] = "\"\\,:{}[]0-.eEtfnu \x01\v";
  for (int round = 0; round < 3000; round++) {
    GString *event = g_string_new(NULL);
    random_space(event);
    random_event(event);
    random_space(event);
    g_string_append(event, ",{");
    size_t consumed;
    json_fast_status status =
        check_fast_element(event->str, event->len, &consumed);
    if (!strstr(event->str, "\\ud800x")) {
      g_assert_cmpint(status, ==, JSON_FAST_DONE);
      g_assert_cmpuint(consumed, ==, event->len - 1);
    }
    /* Damaged: whatever the fast path takes, yajl takes the same way
     * (check_fast_element compares). */
    size_t at = (size_t)g_test_rand_int_range(0, (gint32)event->len);
    char c = damage[g_test_rand_int_range(0, sizeof(damage) - 1)];
    if (g_test_rand_bit())
      event->str[at] = c;
    else
      g_string_insert_c(event, (gssize)at, c);
    check_fast_element(event->str, event->len, &consumed);
    g_string_free(event, TRUE);
  }
}

/* --- descriptor and probe ---------------------------------------------------- */

static void test_descriptor_is_a_clockless_json_reader(void) {
  g_assert_cmpuint(reader->abi_version, ==, TM_READER_ABI_VERSION);
  g_assert_cmpstr(reader->name, ==, "json");
  g_assert_cmpuint(reader->flags, ==, TM_READER_CLOCKLESS);
  g_assert_nonnull(reader->description);
  g_assert_nonnull(reader->probe);
  g_assert_nonnull(reader->open);
  g_assert_nonnull(reader->feed);
  g_assert_nonnull(reader->finish);
  g_assert_nonnull(reader->close);
}

static int probe(const char *head) {
  return reader->probe((const uint8_t *)head, strlen(head), "trace.json");
}

static void test_probe_accepts_object_and_array_prefixes(void) {
  int score = probe("{\"traceEvents\":[");
  g_assert_cmpint(score, >, 0);
  g_assert_cmpint(probe("[{\"pid\":96624,"), ==, score);
  g_assert_cmpint(probe(" \n\t{ \"traceEvents\" : ["), ==, score);
  g_assert_cmpint(probe("[ \r\n { \"ph\""), ==, score);
  g_assert_cmpint(probe("{\"metadata\":{}}"), ==, score);
  g_assert_cmpint(probe("{\"label\":\"simple\",\"profile\":{\"meta\":{}}}"),
                  ==, score);
  g_assert_cmpint(reader->probe((const uint8_t *)"{\"a\"", 4, NULL), ==,
                  score);
}

static void test_probe_rejects_other_formats(void) {
  g_assert_cmpint(probe("{\"perfetto_manifest\":{\"version\":1}}"), ==, 0);
  g_assert_cmpint(probe(" { \"perfetto_manifest\" : {}}"), ==, 0);
  g_assert_cmpint(probe("{\"meta\":{\"version\":24}}"), ==, 0);
  g_assert_cmpint(probe("{\n  \"meta\": {"), ==, 0);
  g_assert_cmpint(probe("{\"libs\":[]}"), ==, 0);
  g_assert_cmpint(probe("[]"), ==, 0);
  g_assert_cmpint(probe("[1,2]"), ==, 0);
  g_assert_cmpint(probe("{}"), ==, 0);
  g_assert_cmpint(probe("# tracer: nop\n"), ==, 0);
  g_assert_cmpint(probe("<?xml version=\"1.0\"?>"), ==, 0);
  g_assert_cmpint(probe(""), ==, 0);
  g_assert_cmpint(reader->probe((const uint8_t *)"\x0a\x53\x32", 3, NULL), ==,
                  0);
}

static void test_probe_looks_only_at_the_first_128_bytes(void) {
  char head[200];
  memset(head, ' ', sizeof(head));
  memcpy(head + 130, "{\"a\":1}", 7);
  g_assert_cmpint(reader->probe((const uint8_t *)head, 137, NULL), ==, 0);
  memcpy(head + 100, "{\"a\":1}", 7);
  g_assert_cmpint(reader->probe((const uint8_t *)head, 137, NULL), >, 0);
}

/* --- events -------------------------------------------------------------------- */

static void test_slices_instants_and_names_from_an_array(void) {
  assert_fixture_log(
      "slices.json",
      "thread 10/10\n"
      "process pid=10\n"
      "process_name pid=10 name=Browser\n"
      "thread 10/11\n"
      "thread_name 10/11 name=Main\n"
      "B thread[10/11] ts=1000 name=outer cat=a tts=500 args={args.x=int:1}\n"
      "B thread[10/11] ts=2500 name=inner cat=b tts=- args=-\n"
      "E thread[10/11] ts=3000 name=- cat=- tts=2000 args={args.y=str:z}\n"
      "E thread[10/11] ts=4000 name=outer cat=a tts=- args=-\n"
      "X thread[10/11] ts=5000 dur=1250 name=work cat=- tts=4000 tdur=750 "
      "args=-\n"
      "X legacy_chrome_global_instants[] ts=6000 dur=0 name=global cat=- "
      "tts=- tdur=- args=-\n"
      "X chrome_process_instant[pid=10] ts=7000 dur=0 name=proc cat=- tts=- "
      "tdur=- args=-\n"
      "X thread[10/11] ts=8000 dur=0 name=mark cat=- tts=7000 tdur=- args=-\n"
      "X thread[10/11] ts=9000 dur=0 name=thr cat=- tts=- tdur=- args=-\n"
      "X thread[10/11] ts=10000 dur=0 name=- cat=- tts=- tdur=- args=-\n"
      "process_arg pid=10 process_sort_index_hint=int:-5\n"
      "thread_arg 10/11 thread_sort_index_hint=int:2\n"
      "status=ok\n");
}

static void test_object_form_reads_metadata_and_skips_the_rest(void) {
  assert_fixture_log(
      "object_form.json",
      "stat json_display_time_unit +1\n"
      "meta json_metadata.source=str:DevTools\n"
      "meta json_metadata.cpuThrottling=int:1\n"
      "meta json_metadata.ratio=str:2.5\n"
      "meta json_metadata.integral=int:3\n"
      "meta json_metadata.big=str:1e+300\n"
      "meta json_metadata.flag=int:1\n"
      "meta json_metadata.off=int:0\n"
      "meta json_metadata.nested=str:{\"a\":[1,\"two\",{\"b\":null}],"
      "\"c\":\"q\\\"uote\\n\"}\n"
      "meta json_metadata.list=str:[]\n"
      "meta json_metadata.clock-domain=str:LINUX_CLOCK_MONOTONIC\n"
      "thread 1/2\n"
      "X thread[1/2] ts=1000 dur=2000 name=a cat=- tts=- tdur=- "
      "args={args.s=str:v, args.n=int:-3, args.r=real:0.25, args.b=bool:true, "
      "args.o.p.q=int:1, args.l[0]=int:10, args.l[1][0]=int:20, "
      "args.l[2].k=str:v}\n"
      "X thread[1/2] ts=3000 dur=1000 name=b cat=- tts=- tdur=- args=-\n"
      /* systemTraceEvents in Fuchsia's object form: skipped, counted. */
      "stat json_system_trace_events_skipped +1\n"
      "status=ok\n");
}

static void test_args_arrays_are_indexed_past_nine(void) {
  assert_text_log("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1,\"args\":"
                  "{\"l\":[0,1,2,3,4,5,6,7,8,9,10,[11,{\"k\":12}]]}},{}]",
                  "thread 1/1\n"
                  "X thread[1/1] ts=1000 dur=0 name=- cat=- tts=- tdur=- "
                  "args={args.l[0]=int:0, args.l[1]=int:1, args.l[2]=int:2, "
                  "args.l[3]=int:3, args.l[4]=int:4, args.l[5]=int:5, "
                  "args.l[6]=int:6, args.l[7]=int:7, args.l[8]=int:8, "
                  "args.l[9]=int:9, args.l[10]=int:10, args.l[11][0]=int:11, "
                  "args.l[11][1].k=int:12}\n"
                  "status=ok\n");
}

/* A systemTraceEvents string is systrace text: its lines become the
 * systrace reader's events, on the JSON file's private clock (check_event
 * asserts every event's clock is FAKE_CLOCK), seconds -> ns. Comment and
 * empty lines are skipped; a line off the grammar is counted; a "\r\n"
 * ending is accepted. */
static void test_system_trace_string_is_systrace_on_the_private_clock(void) {
  assert_text_log(
      "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":7,\"tid\":8,\"ts\":1000000,"
      "\"dur\":5,\"name\":\"json\"}],\n"
      "\"systemTraceEvents\":\"# tracer: nop\\n#\\n\\n"
      "  app-8  ( 7) [001] ...1  1.000000: tracing_mark_write: B|7|draw\\r\\n"
      "not an ftrace line\\n"
      "  app-8  ( 7) [001] ...1  1.000250: tracing_mark_write: E|7\"}",
      /* X at 1000000 µs and B at 1.000000 s: both 1e9 ns, one thread. */
      "thread 7/8\n"
      "X thread[7/8] ts=1000000000 dur=5000 name=json cat=- tts=- tdur=- "
      "args=-\n"
      "thread_name 7/8 name=app\n"
      "B thread[7/8] ts=1000000000 name=draw cat=- tts=- args=-\n"
      "stat systrace_parse_failure +1\n"
      "E thread[7/8] ts=1000250000 name=- cat=- tts=- args=-\n"
      "status=ok\n");
}

/* Fuchsia's object form is skipped without error (see object_form.json);
 * any other type, or an object of another "type", is skipped and counted
 * where upstream fails the file: the traceEvents stay. */
static void test_system_trace_of_another_type_is_skipped_and_counted(void) {
  const char *events = "\"traceEvents\":[{\"ph\":\"i\",\"pid\":1,\"tid\":1,"
                       "\"ts\":2,\"name\":\"kept\"}]";
  const char *expected_after = "thread 1/1\n"
                               "X thread[1/1] ts=2000 dur=0 name=kept cat=- "
                               "tts=- tdur=- args=-\n";
  const char *values[] = {"42", "[\"a\\n\", 1]", "null",
                          "{\"type\":\"other\",\"events\":[]}"};
  for (size_t i = 0; i < G_N_ELEMENTS(values); i++) {
    g_autofree char *text =
        g_strdup_printf("{\"systemTraceEvents\":%s,%s}", values[i], events);
    g_autofree char *expected =
        g_strdup_printf("stat json_system_trace_events_invalid +1\n%s"
                        "status=ok\n", expected_after);
    assert_text_log(text, expected);
  }
  /* After traceEvents, the Fuchsia form: one info stat, no error. */
  g_autofree char *fuchsia = g_strdup_printf(
      "{%s,\"systemTraceEvents\":{\"events\":[{\"ph\":\"k\"}],"
      "\"type\":\"fuchsia\"}}", events);
  g_autofree char *expected_fuchsia = g_strdup_printf(
      "%sstat json_system_trace_events_skipped +1\nstatus=ok\n",
      expected_after);
  assert_text_log(fuchsia, expected_fuchsia);
}

static void test_async_slices_are_keyed_by_cookie(void) {
  assert_fixture_log(
      "async.json",
      "thread 5/6\n"
      "B legacy_async_global_slice[name=Load;key=k1] ts=1000 name=Load "
      "cat=net tts=- args={args.url=str:a}\n"
      "thread 5/7\n"
      "B legacy_async_global_slice[name=Load;key=k1] ts=2000 name=Sub "
      "cat=net tts=- args=-\n"
      "E legacy_async_global_slice[name=Load;key=k1] ts=3000 name=Sub "
      "cat=net tts=- args=-\n"
      "E legacy_async_global_slice[name=Load;key=k1] ts=4000 name=Load "
      "cat=net tts=- args=-\n"
      "X legacy_async_global_slice[name=Load;key=k1] ts=5000 dur=0 "
      "name=Ping cat=net tts=- tdur=- args=-\n"
      "B legacy_async_global_slice[name=Load;key=k2] ts=6000 name=Load "
      "cat=other tts=- args=-\n"
      "process pid=5\n"
      "B legacy_async_process_slice[name=Frame;pid=5;key=k3] ts=7000 "
      "name=Frame cat=cc tts=- args=-\n"
      "thread 8/8\n"
      "process pid=8\n"
      "B legacy_async_process_slice[name=Frame;pid=8;key=k3] ts=8000 "
      "name=Frame cat=cc tts=- args=-\n"
      "B legacy_async_global_slice[name=Job;key=k4] ts=9000 name=Job cat=cc "
      "tts=- args=-\n"
      "B legacy_async_global_slice[name=Num;key=k5] ts=10000 name=Num cat=cc "
      "tts=- args=-\n"
      "E legacy_async_global_slice[name=Num;key=k5] ts=11000 name=Num cat=cc "
      "tts=- args=-\n"
      "status=ok\n");
}

static void test_counters_name_tracks_after_members_and_string_ids(void) {
  assert_fixture_log(
      "counters.json",
      "thread 3/3\n"
      "process pid=3\n"
      "C json_counter[name=mem heap;pid=3;counter] ts=1000 value=10 args=-\n"
      "C json_counter[name=mem gpu;pid=3;counter] ts=1000 value=2.5 args=-\n"
      "stat json_parser_failure +1\n"
      "stat json_parser_failure +1\n"
      "stat json_parser_failure +1\n"
      "stat json_parser_failure +1\n"
      "C json_counter[name=mem id: 0xA heap;pid=3;counter] ts=2000 value=11 "
      "args=-\n"
      "C json_counter[name=mem heap;pid=3;counter] ts=3000 value=12.5 "
      "args=-\n"
      "stat json_parser_failure +1\n"
      "status=ok\n");
}

static void test_flows_v1_and_v2(void) {
  assert_fixture_log(
      "flows.json",
      "thread 1/1\n"
      "X thread[1/1] ts=1000 dur=5000 name=send cat=ipc tts=- tdur=- args=-\n"
      "F thread[1/1] ts=2000 id=f1 dir=out bind=enclosing "
      "args={name=str:msg, cat=str:ipc}\n"
      "thread 1/2\n"
      "F thread[1/2] ts=3000 id=f1 dir=step bind=enclosing "
      "args={name=str:msg, cat=str:ipc}\n"
      "thread 1/3\n"
      "F thread[1/3] ts=4000 id=f1 dir=in bind=next "
      "args={name=str:msg, cat=str:ipc}\n"
      "F thread[1/3] ts=5000 id=f1 dir=in bind=enclosing "
      "args={name=str:msg, cat=str:ipc}\n"
      "F thread[1/1] ts=6000 id=f2 dir=out bind=enclosing "
      "args={name=str:other, cat=str:ipc}\n"
      "stat flow_invalid_id +1\n"
      "stat flow_invalid_id +1\n"
      "X thread[1/1] ts=10000 dur=1000 name=v2out cat=- tts=- tdur=- args=-\n"
      "F thread[1/1] ts=10000 id=f3 dir=out bind=enclosing args=-\n"
      "B thread[1/2] ts=12000 name=v2step cat=- tts=- args=-\n"
      "F thread[1/2] ts=12000 id=f3 dir=step bind=enclosing args=-\n"
      "E thread[1/2] ts=13000 name=- cat=- tts=- args=-\n"
      "X thread[1/3] ts=14000 dur=1000 name=v2in cat=- tts=- tdur=- args=-\n"
      "F thread[1/3] ts=14000 id=f3 dir=in bind=enclosing args=-\n"
      "X thread[1/3] ts=15000 dur=1000 name=v2none cat=- tts=- tdur=- "
      "args=-\n"
      "stat flow_without_direction +1\n"
      "X thread[1/3] ts=16000 dur=1000 name=v2bad cat=- tts=- tdur=- args=-\n"
      "stat flow_invalid_id +1\n"
      "B legacy_async_global_slice[name=v2async;key=k1] ts=17000 "
      "name=v2async cat=c tts=- args=-\n"
      "F legacy_async_global_slice[name=v2async;key=k1] ts=17000 id=f4 "
      "dir=out bind=enclosing args=-\n"
      "X legacy_async_global_slice[name=v2async;key=k1] ts=18000 dur=0 "
      "name=v2n cat=c tts=- tdur=- args=-\n"
      "F legacy_async_global_slice[name=v2async;key=k1] ts=18000 id=f4 "
      "dir=in bind=enclosing args=-\n"
      "status=ok\n");
}

static void test_pids_and_tids_follow_the_coercion_rules(void) {
  assert_fixture_log(
      "pid_tid.json",
      "process pid=$Renderer\n"
      "process_name pid=$Renderer name=Renderer\n"
      "thread $Renderer/$Compositor\n"
      "thread_name $Renderer/$Compositor name=Compositor\n"
      "X thread[$Renderer/$Compositor] ts=1000 dur=1000 name=a cat=- tts=- "
      "tdur=- args=-\n"
      "thread $Renderer/$Renderer\n"
      "X thread[$Renderer/$Renderer] ts=2000 dur=1000 name=b cat=- tts=- "
      "tdur=- args=-\n"
      "thread 7/7\n"
      "X thread[7/7] ts=3000 dur=1000 name=c cat=- tts=- tdur=- args=-\n"
      "X thread[7/7] ts=4000 dur=1000 name=d cat=- tts=- tdur=- args=-\n"
      "thread 7/8\n"
      "X thread[7/8] ts=5000 dur=1000 name=e cat=- tts=- tdur=- args=-\n"
      "thread 0/0\n"
      "X thread[0/0] ts=6000 dur=1000 name=f cat=- tts=- tdur=- args=-\n"
      "X thread[0/0] ts=7000 dur=1000 name=g cat=- tts=- tdur=- args=-\n"
      "thread 0/5\n"
      "X thread[0/5] ts=8000 dur=1000 name=h cat=- tts=- tdur=- args=-\n"
      "status=ok\n");
}

static void test_bad_events_are_counted_and_dropped(void) {
  assert_fixture_log("bad_events.json",
                     /* no ph, no ts, bad ts x2, bad dur, bad tts, bad tdur */
                     "stat json_tokenizer_failure +1\n"
                     "stat json_tokenizer_failure +1\n"
                     "stat json_tokenizer_failure +1\n"
                     "stat json_tokenizer_failure +1\n"
                     "stat json_tokenizer_failure +1\n"
                     "stat json_tokenizer_failure +1\n"
                     "stat json_tokenizer_failure +1\n"
                     "thread 1/1\n"
                     "stat json_parser_failure +1\n" /* X without dur */
                     "stat json_parser_failure +1\n" /* b without id */
                     "thread 0/0\n"
                     "stat json_parser_failure +1\n"    /* b without pid */
                     "stat json_tokenizer_failure +1\n" /* id2 not object */
                     "stat json_parser_failure +1\n"    /* double id */
                     "stat json_parser_failure +1\n"    /* C without args */
                     "stat json_parser_failure +1\n"    /* s:p without pid */
                     "stat json_parser_failure +1\n"    /* s:t without tid */
                     "stat json_tokenizer_failure +1\n" /* ph "" */
                     "stat json_tokenizer_failure +1\n" /* ph 5 */
                     "stat json_tokenizer_failure +1\n" /* 42 */
                     "stat json_tokenizer_failure +1\n" /* "string" */
                     "stat json_tokenizer_failure +1\n" /* [1,2] */
                     "stat json_parser_failure +1\n" /* empty process name */
                     "stat json_parser_failure +1\n" /* sort_index "x" */
                     /* the ProfileChunk no Profile opened */
                     "stat json_v8_profile_unknown_profile +1\n"
                     "X thread[1/1] ts=2000 dur=1000 name=ok cat=- tts=- "
                     "tdur=- args=-\n"
                     "status=ok\n");
}

static void test_times_keep_every_digit(void) {
  assert_fixture_log(
      "times.json",
      "thread 1/1\n"
      "X thread[1/1] ts=1001 dur=0 name=t1 cat=- tts=- tdur=- args=-\n"
      "X thread[1/1] ts=123456789 dur=1 name=t2 cat=- tts=- tdur=- args=-\n"
      "X thread[1/1] ts=2000000 dur=1500 name=t3 cat=- tts=- tdur=- args=-\n"
      "X thread[1/1] ts=1500000 dur=2 name=t4 cat=- tts=- tdur=- args=-\n"
      "X thread[1/1] ts=-1500 dur=1000 name=t5 cat=- tts=- tdur=- args=-\n"
      "X thread[1/1] ts=-1 dur=0 name=t6 cat=- tts=- tdur=- args=-\n"
      "X thread[1/1] ts=433087829325000 dur=10000 name=t7 cat=- tts=- "
      "tdur=- args=-\n"
      "X thread[1/1] ts=9223372036854775000 dur=2 name=t8 cat=- tts=- "
      "tdur=- args=-\n"
      "stat json_tokenizer_failure +1\n"
      "X thread[1/1] ts=1000 dur=123 name=t10 cat=- tts=- tdur=- args=-\n"
      "status=ok\n");
}

static void test_commas_and_brackets_inside_strings_are_text(void) {
  assert_fixture_log(
      "strings.json",
      "thread 1/1\n"
      "X thread[1/1] ts=1000 dur=1000 name=a,] cat=c,} tts=- tdur=- "
      "args={args.s=str:x,}\",], args.u=str:caf\xc3\xa9, args.k,]=str:\\}\n"
      "X thread[1/1] ts=2000 dur=0 name=[,{ cat=- tts=- tdur=- "
      "args={args.list[0]=int:1, args.list[1]=int:2}\n"
      "status=ok\n");
}

/* --- shapes and errors ------------------------------------------------------------- */

static void test_unterminated_array_is_legal(void) {
  const char *expected =
      "thread 1/1\n"
      "B thread[1/1] ts=1000 name=open cat=- tts=- args=-\n"
      "E thread[1/1] ts=2000 name=- cat=- tts=- args=-\n"
      "status=ok\n";
  assert_fixture_log("unterminated.json", expected);
  assert_fixture_log("unterminated_after_comma.json", expected);
  assert_text_log("[", "status=ok\n");
  assert_text_log(" [ {\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}",
                  "thread 1/1\n"
                  "X thread[1/1] ts=1000 dur=1000 name=- cat=- tts=- "
                  "tdur=- args=-\n"
                  "status=ok\n");
}

static void test_array_truncated_mid_string_keeps_earlier_events(void) {
  assert_text_log("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1},"
                  "{\"ph\":\"X\",\"name\":\"trunc",
                  "thread 1/1\n"
                  "X thread[1/1] ts=1000 dur=0 name=- cat=- tts=- tdur=- "
                  "args=-\n"
                  "status=ok\n");
}

static void test_incomplete_object_is_an_error_after_its_events(void) {
  assert_fixture_log("incomplete_object.json",
                     "thread 1/1\n"
                     "X thread[1/1] ts=1000 dur=1000 name=kept cat=- tts=- "
                     "tdur=- args=-\n"
                     "error @93 JSON trace file is incomplete\n"
                     "status=error\n");
  assert_text_log("{\"traceEvents\":[]", "error @17 JSON trace file is "
                                         "incomplete\nstatus=error\n");
  assert_text_log("{\"traceEvents\":[],\"metadata\":{\"a\":\"b",
                  "error @36 JSON trace file is incomplete\nstatus=error\n");
  assert_text_log("{", "error @1 JSON trace file is incomplete\n"
                       "status=error\n");
}

static void test_malformed_json_reports_its_offset(void) {
  g_autofree char *path = fixture_path("malformed.json");
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  /* Every chunking reports the same offset (read_all_chunkings). */
  fake_host *h = read_all_chunkings(bytes, len);
  const char *prefix =
      "thread 1/1\n"
      "X thread[1/1] ts=1000 dur=1000 name=kept cat=- tts=- tdur=- args=-\n"
      "error @";
  g_assert_true(g_str_has_prefix(h->log->str, prefix));
  const char *error = h->log->str + strlen(prefix);
  char *after = NULL;
  gint64 offset = g_ascii_strtoll(error, &after, 10);
  g_assert_cmpstr(after, ==,
                  " Failed to parse JSON: parse error: after key and value, "
                  "inside map, I expect ',' or '}'\n"
                  "status=error\n");
  /* A comma is missing after "X": yajl points into the offending token,
   * the string "ts" at [token, token + 4). */
  gint64 token = strstr(bytes, "\"X\" \"ts\"") + 4 - bytes;
  g_assert_cmpint(offset, >=, token);
  g_assert_cmpint(offset, <, token + 4);
  fake_host_free(h);
}

/* A trailing comma is blanked, not removed: an error after it is reported
 * at the same offset as in the same text with a space in its place. */
static void assert_same_log_as_with_space(const char *text, size_t comma) {
  g_assert_cmpint(text[comma], ==, ',');
  g_autofree char *spaced = g_strdup(text);
  spaced[comma] = ' ';
  fake_host *with_comma = read_all_chunkings(text, strlen(text));
  fake_host *with_space = read_all_chunkings(spaced, strlen(spaced));
  g_assert_cmpstr(with_comma->log->str, ==, with_space->log->str);
  g_assert_true(g_str_has_suffix(with_comma->log->str, "status=error\n"));
  fake_host_free(with_comma);
  fake_host_free(with_space);
}

static void test_error_offsets_are_not_moved_by_trailing_commas(void) {
  assert_same_log_as_with_space("[{},\n]\n]", 3);
  assert_same_log_as_with_space("[[1,],\n 2 3]", 3);
  assert_same_log_as_with_space(
      "[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1,}, ] \n x", 33);
  assert_same_log_as_with_space("{\"a\":[1,2,],\"b\":tru}", 9);
  /* And the offsets are the stray token's: "]" at 7 ends at 8. */
  assert_text_log("[{},\n]\n]", "error @8 Failed to parse JSON: parse error: "
                                  "trailing garbage\nstatus=error\n");
}

static void test_empty_and_non_json_inputs_are_errors(void) {
  assert_text_log("", "error @0 JSON trace file is empty\nstatus=error\n");
  assert_text_log(" \n\t ", "error @4 JSON trace file is empty\n"
                            "status=error\n");
  assert_text_log("hello", "error @0 not a JSON trace: the first "
                           "non-whitespace byte is neither '{' nor '['\n"
                           "status=error\n");
  assert_text_log("\n\n# tracer: nop", "error @2 not a JSON trace: the first "
                                       "non-whitespace byte is neither '{' "
                                       "nor '['\n"
                                       "status=error\n");
}

static void test_structural_errors_are_reported(void) {
  assert_text_log("{\"traceEvents\":{}}",
                  "error @16 Failed to parse JSON: traceEvents is not an "
                  "array\nstatus=error\n");
  assert_text_log("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1}] x",
                  "thread 1/1\n"
                  "X thread[1/1] ts=1000 dur=0 name=- cat=- tts=- tdur=- "
                  "args=-\n"
                  "error @37 Failed to parse JSON: parse error: trailing "
                  "garbage\n"
                  "status=error\n");
  assert_text_log("[] tru", "error @6 Failed to parse JSON: parse error: "
                            "trailing garbage\nstatus=error\n");
  assert_text_log("[{\"ph\":\"X\"\x01}]", "error @11 Failed to parse JSON: "
                                         "lexical error: invalid char in json "
                                         "text.\nstatus=error\n");
}

static void test_documents_without_events_are_fine(void) {
  assert_text_log("[]", "status=ok\n");
  assert_text_log("{}", "status=ok\n");
  assert_text_log("{\"label\":\"simple\",\"profile\":{\"meta\":{\"v\":12},"
                  "\"threads\":[{\"samples\":[1,2]}]}}\n\n",
                  "status=ok\n");
  assert_text_log("{\"systemTraceEvents\":\"# tracer: nop\\n\"}", "status=ok\n");
}

static void test_feed_after_an_error_keeps_failing(void) {
  fake_host *h = fake_host_new();
  void *state = reader->open(&services, (tm_host *)h, NULL, 0);
  g_assert_cmpint(reader->feed(state, (const uint8_t *)"x", 1), ==, TM_ERROR);
  g_assert_cmpint(reader->feed(state, (const uint8_t *)"[]", 2), ==, TM_ERROR);
  g_assert_cmpint(reader->finish(state), ==, TM_ERROR);
  reader->close(state);
  g_assert_cmpint(h->errors, ==, 1);
  fake_host_free(h);
}

/* --- real traces ---------------------------------------------------------------------- */

static fake_host *read_real_trace(const char *name, size_t chunk) {
  gsize len = 0;
  g_autofree char *bytes = corpus_real_read("json", name, &len);
  fake_host *whole = read_bytes(bytes, len, len);
  fake_host *chunked = read_bytes(bytes, len, chunk);
  g_assert_cmpstr(chunked->log->str, ==, whole->log->str);
  fake_host_free(chunked);
  return whole;
}

static void assert_process_names(fake_host *h, const char *const *names,
                                 guint n) {
  g_assert_cmpuint(h->process_names->len, ==, n);
  for (guint i = 0; i < n; i++) {
    gboolean found = FALSE;
    for (guint j = 0; j < h->process_names->len; j++)
      found |= g_str_equal(names[i], g_ptr_array_index(h->process_names, j));
    g_assert_true(found);
  }
}

/* README: object form, 3108 events: X 2456, b/e 234/234, I 97, M 28,
 * P 17, R 13, s/f 13/13, O 2; processes Browser, GPU Process, Renderer. */
static void test_chrome116_devtools_trace_matches_its_description(void) {
  fake_host *h = read_real_trace("speedscope-chrome116-devtools-trace.json",
                                   4093);
  g_assert_true(g_str_has_suffix(h->log->str, "status=ok\n"));
  g_assert_cmpint(h->completes + stat_total(h, "json_parser_failure"), ==,
                  2456 + 97 + 13);
  g_assert_cmpint(h->async_begins, ==, 234);
  g_assert_cmpint(h->async_ends, ==, 234);
  g_assert_cmpint(h->begins, ==, 234); /* no B events in this file */
  g_assert_cmpint(h->flows_out, ==, 13);
  g_assert_cmpint(h->flows_in, ==, 13);
  g_assert_cmpint(h->flows_step, ==, 0);
  g_assert_cmpint(h->counters, ==, 0);
  g_assert_cmpint(stat_total(h, "json_tokenizer_failure"), ==, 0);
  const char *const names[] = {"Browser", "GPU Process", "Renderer"};
  assert_process_names(h, names, G_N_ELEMENTS(names));
  g_assert_nonnull(strstr(h->log->str, "meta json_metadata.source=str:"
                                       "DevTools\n"));
  g_assert_nonnull(strstr(h->log->str, "meta json_metadata.hardware"
                                       "Concurrency=int:16\n"));
  fake_host_free(h);
}

/* README: bare array, 2613 events: X 1988, B/E 190/190, I 87, M 70,
 * P 43, R 15, 5 flow-v2 events; processes Browser, GPU Process, Renderer. */
static void test_chrome70_worker_trace_matches_its_description(void) {
  fake_host *h = read_real_trace("speedscope-chrome70-worker.json", 1);
  g_assert_true(g_str_has_suffix(h->log->str, "status=ok\n"));
  g_assert_cmpint(h->completes + stat_total(h, "json_parser_failure"), ==,
                  1988 + 87 + 15);
  g_assert_cmpint(h->begins, ==, 190);
  g_assert_cmpint(h->ends, ==, 190);
  g_assert_cmpint(h->async_begins, ==, 0);
  g_assert_cmpint(h->flows_out + h->flows_step + h->flows_in, ==, 5);
  g_assert_cmpint(stat_total(h, "json_tokenizer_failure"), ==, 0);
  const char *const names[] = {"Browser", "GPU Process", "Renderer"};
  assert_process_names(h, names, G_N_ELEMENTS(names));
  fake_host_free(h);
}

/* --- V8 CPU profiles (ph P) ---------------------------------------------------- */

/* The log's sample lines only. */
static char *sample_lines(fake_host *h) {
  GString *out = g_string_new(NULL);
  g_auto(GStrv) lines = g_strsplit(h->log->str, "\n", -1);
  for (char **line = lines; *line; line++)
    if (g_str_has_prefix(*line, "sample "))
      g_string_append_printf(out, "%s\n", *line);
  return g_string_free(out, FALSE);
}

/* One profile over five chunks: a child listed before its parent, a node
 * used by a later chunk, an empty function name, a sample naming no node,
 * a chunk whose lengths differ, a chunk of a profile never opened, and the
 * same id in another process (a separate profile). Times: startTime 1000
 * µs plus the running sum of deltas, which the dropped chunks do not
 * advance. */
static const char v8_profile_input[] =
    "[{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":1,\"tid\":2,\"ts\":5,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"startTime\":1000}}},\n"
    "{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":7,\"tid\":7,\"ts\":5,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"startTime\":3}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":6,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
    "{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":\"leaf\","
    "\"url\":\"a.js\",\"scriptId\":3,\"lineNumber\":4}},"
    "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"url\":\"\"}}],"
    "\"samples\":[2,1]},\"timeDeltas\":[10,5]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":7,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
    "{\"id\":3,\"parent\":2,\"callFrame\":{\"functionName\":\"\","
    "\"url\":\"a.js\"}}],\"samples\":[3,9]},\"timeDeltas\":[1,2]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":8,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[3]},"
    "\"timeDeltas\":[1,2]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":9,"
    "\"id\":\"0x2\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[3]},"
    "\"timeDeltas\":[1]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":7,\"tid\":7,\"ts\":9,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
    "{\"id\":3,\"callFrame\":{\"functionName\":\"main\"}}],"
    "\"samples\":[3]},\"timeDeltas\":[-1]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":9,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[3]},"
    "\"timeDeltas\":[4]}}}]\n";

static const char v8_profile_samples[] =
    "sample ts=1010000 thread=1/2 cpu=-1 "
    "stack=(root)@(null)>leaf@a.js\n"
    "sample ts=1015000 thread=1/2 cpu=-1 stack=(root)@(null)\n"
    "sample ts=1016000 thread=1/2 cpu=-1 "
    "stack=(root)@(null)>leaf@a.js>(anonymous)@a.js\n"
    "sample ts=2000 thread=7/7 cpu=-1 stack=main@(null)\n"
    "sample ts=1022000 thread=1/2 cpu=-1 "
    "stack=(root)@(null)>leaf@a.js>(anonymous)@a.js\n";

static void test_v8_profile_chunks_become_samples(void) {
  size_t len = strlen(v8_profile_input);
  fake_host *whole = read_bytes(v8_profile_input, len, len);
  fake_host *bytewise = read_bytes(v8_profile_input, len, 1);
  fake_host *yajl = read_bytes_with(reader, "yajl-only", v8_profile_input,
                                    len, 1);
  active_services = &services;
  g_assert_cmpstr(bytewise->log->str, ==, whole->log->str);
  g_assert_cmpstr(yajl->log->str, ==, whole->log->str);
  g_assert_true(g_str_has_suffix(whole->log->str, "status=ok\n"));
  g_autofree char *samples = sample_lines(whole);
  g_assert_cmpstr(samples, ==, v8_profile_samples);
  g_assert_cmpint(stat_total(whole, "json_v8_profile_unknown_node"), ==, 1);
  g_assert_cmpint(stat_total(whole, "json_v8_profile_invalid_chunk"), ==, 1);
  g_assert_cmpint(stat_total(whole, "json_v8_profile_unknown_profile"), ==,
                  1);
  fake_host_free(whole);
  fake_host_free(bytewise);
  fake_host_free(yajl);
}

/* A parent chain that loops, and a parent that is never listed: the
 * samples are dropped (counted), nothing loops forever. */
static void test_v8_profile_broken_chains_are_counted(void) {
  static const char input[] =
      "[{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"startTime\":0}}},"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":1,\"parent\":2,\"callFrame\":{\"functionName\":\"a\"}},"
      "{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":\"b\"}},"
      "{\"id\":3,\"parent\":4,\"callFrame\":{\"functionName\":\"c\"}},"
      "{\"id\":5,\"callFrame\":{\"functionName\":\"d\"}}],"
      "\"samples\":[1,2,3,5]},\"timeDeltas\":[1,1,1,1]}}},"
      /* "samples" beside "cpuProfile", not in it: deltas without samples. */
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"samples\":[5],\"timeDeltas\":[1]}}},"
      /* A sample that is not an integer. */
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[\"5\"]},"
      "\"timeDeltas\":[1]}}},"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[5]},"
      "\"timeDeltas\":[6]}}}]";
  fake_host *h = read_all_chunkings(input, strlen(input));
  active_services = &services;
  g_autofree char *samples = sample_lines(h);
  g_assert_cmpstr(samples, ==,
                  "sample ts=4000 thread=1/1 cpu=-1 "
                  "stack=d@(null)\n"
                  "sample ts=10000 thread=1/1 cpu=-1 "
                  "stack=d@(null)\n");
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_node"), ==, 3);
  g_assert_cmpint(stat_total(h, "json_v8_profile_invalid_chunk"), ==, 2);
  fake_host_free(h);
}

/* DevTools' node form lists "children" instead of "parent"; a child may
 * come first, and an explicit "parent" wins over a children list. */
static void test_v8_profile_children_lists_give_parents(void) {
  static const char input[] =
      "[{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":1,\"tid\":1,\"ts\":9,"
      "\"id\":1,\"args\":{\"data\":{}}},"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":3,\"callFrame\":{\"functionName\":\"c\"}},"
      "{\"id\":4,\"parent\":1,\"callFrame\":{\"functionName\":\"d\"}},"
      "{\"callFrame\":{\"functionName\":\"b\"},\"children\":[3,4],\"id\":2},"
      "{\"id\":1,\"callFrame\":{\"functionName\":\"a\"},\"children\":[2]}],"
      "\"samples\":[3,4]},\"timeDeltas\":[1,1]}}}]";
  fake_host *h = read_all_chunkings(input, strlen(input));
  active_services = &services;
  g_autofree char *samples = sample_lines(h);
  /* No startTime: the Profile event's ts (9 µs) starts the clock. */
  g_assert_cmpstr(samples, ==,
                  "sample ts=10000 thread=1/1 cpu=-1 "
                  "stack=a@(null)>b@(null)>c@(null)\n"
                  "sample ts=11000 thread=1/1 cpu=-1 "
                  "stack=a@(null)>d@(null)\n");
  fake_host_free(h);
}

/* Chrome writes trace events out of order: two chunks come before their
 * Profile (with a slice between them), one after. trace_processor reads P
 * events in file order while tokenizing and drops a chunk whose Profile it
 * has not seen (docs/formats.md §2.3, P rows: the V8 profile tracker
 * of upstream's JSON tokenizer), so only the late chunk counts: its own
 * root node, its sample at startTime (500 µs, not the Profile's ts) + its
 * delta 1; the early chunks' deltas are not added. The early chunks'
 * thread (tid 7) is never made: a thread is made by a sample. */
static void test_v8_profile_chunks_before_their_profile_are_dropped(void) {
  static const char input[] =
      "[{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":7,\"ts\":1,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":\"early\","
      "\"url\":\"e.js\"}},"
      "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\"}}],"
      "\"samples\":[2,1]},\"timeDeltas\":[10,5]}}},\n"
      "{\"ph\":\"X\",\"name\":\"between\",\"pid\":1,\"tid\":3,\"ts\":2,"
      "\"dur\":1,\"args\":{\"url\":\"zzzz.js\",\"functionName\":\"zzzzz\"}},\n"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":7,\"ts\":3,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":3,\"parent\":2,\"callFrame\":{\"functionName\":\"later\","
      "\"url\":\"l.js\"}}],\"samples\":[3]},\"timeDeltas\":[7]}}},\n"
      "{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":1,\"tid\":4,\"ts\":900,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"startTime\":500}}},\n"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":3,\"ts\":4,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\"}}],"
      "\"samples\":[1]},\"timeDeltas\":[1]}}}]\n";
  size_t len = strlen(input);
  fake_host *h = read_all_chunkings(input, len);
  fake_host *yajl = read_bytes_with(reader, "yajl-only", input, len, 1);
  active_services = &services;
  g_assert_cmpstr(yajl->log->str, ==, h->log->str);
  g_assert_true(g_str_has_suffix(h->log->str, "status=ok\n"));
  g_autofree char *samples = sample_lines(h);
  g_assert_cmpstr(samples, ==,
                  "sample ts=501000 thread=1/3 cpu=-1 "
                  "stack=(root)@(null)\n");
  g_assert_null(strstr(h->log->str, "/7"));
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_profile"), ==, 2);
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_node"), ==, 0);
  g_assert_cmpint(stat_total(h, "json_v8_profile_invalid_chunk"), ==, 0);
  fake_host_free(h);
  fake_host_free(yajl);
}

/* Chunks whose Profile did not come before them: each is counted when it
 * is read (a Profile of the same id in another process does not open
 * them) and no sample is made. A file damaged after such a chunk counts
 * it too. */
static void test_v8_profile_chunks_without_profile_are_counted(void) {
  static const char input[] =
      "[{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":3,\"ts\":1,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":1,\"callFrame\":{\"functionName\":\"f\",\"url\":\"u.js\"}}],"
      "\"samples\":[1]},\"timeDeltas\":[10]}}},\n"
      "{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":2,\"tid\":3,\"ts\":1,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"startTime\":5}}},\n"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":3,\"ts\":2,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[1]},"
      "\"timeDeltas\":[1]}}},\n"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":3,\"ts\":2,"
      "\"id\":\"0x6\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[1,1]},"
      "\"timeDeltas\":[1]}}}]\n";
  size_t len = strlen(input);
  fake_host *h = read_all_chunkings(input, len);
  /* The same chunks, then damage: the file fails in feed(). */
  g_autofree char *head = g_strndup(input, len - 2);
  g_autofree char *damaged = g_strconcat(head, ",}\n", NULL);
  fake_host *broken = read_bytes(damaged, strlen(damaged), 1);
  active_services = &services;
  g_assert_true(g_str_has_suffix(h->log->str,
                                 "stat json_v8_profile_unknown_profile +1\n"
                                 "stat json_v8_profile_unknown_profile +1\n"
                                 "stat json_v8_profile_unknown_profile +1\n"
                                 "status=ok\n"));
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_profile"), ==, 3);
  g_assert_cmpint(stat_total(h, "json_v8_profile_invalid_chunk"), ==, 0);
  g_assert_null(strstr(h->log->str, "sample "));
  g_assert_true(g_str_has_suffix(broken->log->str, "status=error\n"));
  g_assert_cmpint(stat_total(broken, "json_v8_profile_unknown_profile"), ==,
                  3);
  g_assert_null(strstr(broken->log->str, "sample "));
  fake_host_free(h);
  fake_host_free(broken);
}

/* --- import logs ------------------------------------------------------------------------ */

/* Every malformed kind once, in the shapes that move offsets: leading
 * whitespace, whitespace before a comma, non-object elements (a string
 * with escaped quotes and a bracket, an array holding an object), a
 * trailing comma inside an event, an event longer than the 1 KiB quoted.
 * LONG_TS marks where a long "ts" string goes. Most elements start a
 * line; one follows its comma directly. */
#define LONG_TS "@LONG@"
static const char import_log_template[] =
    "[\n"
    "{\"name\":\"no phase\",\"ts\":1,\"pid\":1,\"tid\":1},\n"
    "  {\"ph\":\"X\",\"name\":\"bad ts\",\"ts\":\"soon\",\"dur\":1,\"pid\":1,"
    "\"tid\":1} ,\n"
    "{\"ph\":\"X\",\"name\":\"no dur\",\"ts\":1,\"pid\":1,\"tid\":1},"
    "{\"ph\":\"X\",\"name\":\"dur null\",\"ts\":1,\"dur\":null,\"pid\":1,"
    "\"tid\":1},\n"
    "42,\n"
    "\"a \\\"quoted\\\" [string],\",\n"
    "[1,{\"ph\":\"X\"}],\n"
    "{\"ph\":\"C\",\"name\":\"no args\",\"ts\":1,\"pid\":1},\n"
    "{\"ph\":\"b\",\"cat\":\"c\",\"ts\":1,\"pid\":1,\"tid\":1},\n"
    "{\"ph\":\"C\",\"name\":\"mem\",\"ts\":1,\"pid\":1,"
    "\"args\":{\"a\":\"x\",\"b\":1}},\n"
    "{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"tdur\":\"x\",\"pid\":1,\"tid\":1,},\n"
    "{\"ph\":\"X\",\"name\":\"id2\",\"id2\":5,\"ts\":1,\"dur\":1,\"pid\":1,"
    "\"tid\":1},\n"
    "{\"ph\":\"I\",\"name\":\"long\",\"ts\":\"" LONG_TS "\",\"pid\":1},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"\"}},\n"
    "{\"ph\":\"X\",\"name\":\"ok\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":1}\n"
    "]\n";

static char *import_log_input(void) {
  GString *x = g_string_new(NULL);
  for (int i = 0; i < 1100; i++)
    g_string_append_c(x, (char)('a' + i % 26));
  GString *out = g_string_new(import_log_template);
  g_string_replace(out, LONG_TS, x->str, 1);
  g_string_free(x, TRUE);
  return g_string_free(out, FALSE);
}

/* The offset of `needle` in `input`, which must hold it exactly once. */
static size_t offset_of(const char *input, const char *needle) {
  const char *at = strstr(input, needle);
  g_assert_nonnull(at);
  g_assert_null(strstr(at + 1, needle));
  return (size_t)(at - input);
}

/* "log json_tokenizer_failure @<offset of raw> raw_event=<raw>; error=..." */
static void expect_tokenizer_log(GString *expected, const char *input,
                                 const char *raw, const char *error) {
  g_string_append_printf(expected,
                         "log json_tokenizer_failure @%zu raw_event=%s; "
                         "error=%s\n",
                         offset_of(input, raw), raw, error);
}

static void expect_parser_log(GString *expected, const char *input,
                              const char *event, const char *args) {
  g_string_append_printf(expected, "log json_parser_failure @%zu %s\n",
                         offset_of(input, event), args);
}

/* Every chunk size from 1 byte to the whole input gives the same log. */
static fake_host *read_in_every_chunk_size(const char *bytes, size_t len) {
  fake_host *whole = read_bytes(bytes, len, len);
  for (size_t chunk = 1; chunk < len; chunk++) {
    fake_host *other = read_bytes(bytes, len, chunk);
    if (strcmp(other->log->str, whole->log->str) != 0) {
      g_printerr("chunks of %zu:\n", chunk);
      g_assert_cmpstr(other->log->str, ==, whole->log->str);
    }
    fake_host_free(other);
  }
  return whole;
}

static void test_import_logs_quote_each_dropped_event(void) {
  active_services = &logging_services;
  g_autofree char *input = import_log_input();
  size_t len = strlen(input);

  const char *long_start = strstr(input, "{\"ph\":\"I\",\"name\":\"long\"");
  g_assert_nonnull(long_start);
  g_autofree char *long_raw = g_strndup(long_start, 1024);
  g_assert_cmpuint(strlen(long_raw), ==, 1024);

  g_autoptr(GString) expected = g_string_new(NULL);
  expect_tokenizer_log(expected, input,
                       "{\"name\":\"no phase\",\"ts\":1,\"pid\":1,\"tid\":1}",
                       "bad or missing ph");
  expect_tokenizer_log(expected, input,
                       "{\"ph\":\"X\",\"name\":\"bad ts\",\"ts\":\"soon\","
                       "\"dur\":1,\"pid\":1,\"tid\":1}",
                       "bad ts");
  g_string_append(expected, "thread 1/1\n");
  expect_parser_log(expected, input,
                    "{\"ph\":\"X\",\"name\":\"no dur\"",
                    "event_name=no dur; event_phase=X");
  /* Right after the previous comma, without whitespace. */
  expect_parser_log(expected, input,
                    "{\"ph\":\"X\",\"name\":\"dur null\"",
                    "event_name=dur null; event_phase=X");
  g_string_append_printf(expected,
                         "log json_tokenizer_failure @%zu raw_event=42; "
                         "error=event is not an object\n",
                         offset_of(input, "42,"));
  expect_tokenizer_log(expected, input, "\"a \\\"quoted\\\" [string],\"",
                       "event is not an object");
  expect_tokenizer_log(expected, input, "[1,{\"ph\":\"X\"}]",
                       "event is not an object");
  expect_parser_log(expected, input, "{\"ph\":\"C\",\"name\":\"no args\"",
                    "event_name=no args; event_phase=C");
  /* No name: the arg is left out rather than given as "". */
  expect_parser_log(expected, input, "{\"ph\":\"b\",\"cat\":\"c\"",
                    "event_phase=b");
  g_string_append(expected, "process pid=1\n");
  /* A counter's non-numeric member: the rest still counts. */
  expect_parser_log(expected, input, "{\"ph\":\"C\",\"name\":\"mem\"",
                    "event_name=mem; event_phase=C");
  g_string_append(expected,
                  "C json_counter[name=mem b;pid=1;counter] ts=1000 value=1 "
                  "args=-\n");
  /* The trailing comma the reader tolerates is quoted as the space it
   * reads. */
  g_string_append_printf(
      expected,
      "log json_tokenizer_failure @%zu raw_event={\"ph\":\"X\",\"ts\":1,"
      "\"dur\":1,\"tdur\":\"x\",\"pid\":1,\"tid\":1 }; error=bad tdur\n",
      offset_of(input, "{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"tdur\""));
  expect_tokenizer_log(expected, input,
                       "{\"ph\":\"X\",\"name\":\"id2\",\"id2\":5,\"ts\":1,"
                       "\"dur\":1,\"pid\":1,\"tid\":1}",
                       "id2 is not an object");
  g_string_append_printf(expected,
                         "log json_tokenizer_failure @%zu raw_event=%s; "
                         "error=bad ts\n",
                         (size_t)(long_start - input), long_raw);
  expect_parser_log(expected, input, "{\"ph\":\"M\",\"name\":\"process_name\"",
                    "event_name=process_name; event_phase=M");
  g_string_append(expected,
                  "X thread[1/1] ts=2000 dur=1000 name=ok cat=- tts=- "
                  "tdur=- args=-\n"
                  "status=ok\n");

  fake_host *h = read_in_every_chunk_size(input, len);
  g_assert_cmpstr(h->log->str, ==, expected->str);
  /* Logging counts too, as the host's stats_log does. */
  g_assert_cmpint(stat_total(h, "json_tokenizer_failure"), ==, 8);
  g_assert_cmpint(stat_total(h, "json_parser_failure"), ==, 6);
  fake_host_free(h);
  active_services = &services;
}

/* Offsets in an object form, where the first event follows the array's
 * '[' directly and events come after other keys. */
static void test_import_logs_offsets_in_the_object_form(void) {
  active_services = &logging_services;
  const char *input =
      "{\"metadata\":{\"k\":[1,2]},\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,"
      "\"pid\":2,\"tid\":3},{\"ts\":5}],\"displayTimeUnit\":\"ns\"}";
  g_autoptr(GString) expected = g_string_new("meta json_metadata.k=str:[1,2]\n"
                                             "thread 2/3\n");
  expect_parser_log(expected, input, "{\"ph\":\"X\",\"ts\":1",
                    "event_phase=X");
  expect_tokenizer_log(expected, input, "{\"ts\":5}", "bad or missing ph");
  g_string_append(expected, "stat json_display_time_unit +1\nstatus=ok\n");
  fake_host *h = read_in_every_chunk_size(input, strlen(input));
  g_assert_cmpstr(h->log->str, ==, expected->str);
  fake_host_free(h);
  active_services = &services;
}

/* A scalar element is quoted as yajl lexed it, even when garbage follows
 * it before the next comma (the parse error comes after the log). */
static void test_import_logs_quote_scalars_as_lexed(void) {
  active_services = &logging_services;
  const char *input = "[3.5e2,\"s\\\\\",null{\"ts\":1,\"x\":[1]}]";
  g_autoptr(GString) expected = g_string_new(NULL);
  g_string_append_printf(expected,
                         "log json_tokenizer_failure @1 raw_event=3.5e2; "
                         "error=event is not an object\n"
                         "log json_tokenizer_failure @7 raw_event=\"s\\\\\"; "
                         "error=event is not an object\n"
                         "log json_tokenizer_failure @13 raw_event=null; "
                         "error=event is not an object\n"
                         "error @18 Failed to parse JSON: parse error: after "
                         "array element, I expect ',' or ']'\n"
                         "status=error\n");
  g_assert_cmpint(offset_of(input, "null"), ==, 13);
  fake_host *h = read_in_every_chunk_size(input, strlen(input));
  g_assert_cmpstr(h->log->str, ==, expected->str);
  fake_host_free(h);
  assert_same_in_every_chunking(input, strlen(input));
  active_services = &services;
}

/* With logging on, the fast path and yajl alone must still agree in every
 * chunking: the same offsets and quotes whichever read the element. */
static void test_import_logs_fast_path_agrees_with_yajl(void) {
  active_services = &logging_services;
  int logged = 0;
  for (int round = 0; round < 40; round++) {
    size_t len;
    g_autofree char *trace = random_trace(g_test_rand_int_range(1, 8), &len);
    assert_same_in_every_chunking(trace, len);
    fake_host *h = read_bytes_with(reader, NULL, trace, len, len);
    logged += strstr(h->log->str, "\nlog json_") != NULL ||
              g_str_has_prefix(h->log->str, "log json_");
    fake_host_free(h);
  }
  g_autofree char *input = import_log_input();
  assert_same_in_every_chunking(input, strlen(input));
  g_autofree char *path = fixture_path("bad_events.json");
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  assert_same_in_every_chunking(bytes, len);
  /* The comparison means something only if failures were logged. */
  g_assert_cmpint(logged, >, 0);
  /* Truncated and damaged traces too, where elements end early. */
  test_fast_reader_agrees_with_yajl_on_truncated_traces();
  test_fast_reader_agrees_with_yajl_on_damaged_traces();
  active_services = &services;
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  logging_services = services;
  logging_services.import_log = fake_import_log;

  const char *plugin_path = g_getenv("TM_JSON_PLUGIN");
  if (!plugin_path) {
    g_printerr("TM_JSON_PLUGIN must name the built tm-json.so\n");
    return 1;
  }
  void *handle = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    g_printerr("dlopen %s: %s\n", plugin_path, dlerror());
    return 1;
  }
  tm_reader_entry_fn entry =
      (tm_reader_entry_fn)dlsym(handle, TM_READER_ENTRY_SYMBOL);
  if (!entry) {
    g_printerr("%s has no %s\n", plugin_path, TM_READER_ENTRY_SYMBOL);
    return 1;
  }
  reader = entry();
  const char *test_plugin_path = g_getenv("TM_JSON_TEST_PLUGIN");
  void *test_handle =
      test_plugin_path ? dlopen(test_plugin_path, RTLD_NOW | RTLD_LOCAL) : NULL;
  tm_reader_entry_fn test_entry =
      test_handle ? (tm_reader_entry_fn)dlsym(test_handle,
                                              TM_READER_ENTRY_SYMBOL)
                  : NULL;
  if (!test_entry) {
    g_printerr("TM_JSON_TEST_PLUGIN (%s) is not a JSON reader test build\n",
               test_plugin_path ? test_plugin_path : "unset");
    return 1;
  }
  test_reader = test_entry();

  g_test_add_func("/json-reader/descriptor/is-a-clockless-json-reader",
                  test_descriptor_is_a_clockless_json_reader);
  g_test_add_func("/json-reader/probe/accepts-object-and-array-prefixes",
                  test_probe_accepts_object_and_array_prefixes);
  g_test_add_func("/json-reader/probe/rejects-other-formats",
                  test_probe_rejects_other_formats);
  g_test_add_func("/json-reader/probe/looks-only-at-the-first-128-bytes",
                  test_probe_looks_only_at_the_first_128_bytes);
  g_test_add_func("/json-reader/events/slices-instants-and-names",
                  test_slices_instants_and_names_from_an_array);
  g_test_add_func("/json-reader/events/object-form-metadata-and-skipped-keys",
                  test_object_form_reads_metadata_and_skips_the_rest);
  g_test_add_func("/json-reader/system-trace/string-is-systrace-on-the-private-clock",
                  test_system_trace_string_is_systrace_on_the_private_clock);
  g_test_add_func("/json-reader/system-trace/other-types-are-skipped-and-counted",
                  test_system_trace_of_another_type_is_skipped_and_counted);
  g_test_add_func("/json-reader/events/async-slices-are-keyed-by-cookie",
                  test_async_slices_are_keyed_by_cookie);
  g_test_add_func("/json-reader/events/counters-named-after-members",
                  test_counters_name_tracks_after_members_and_string_ids);
  g_test_add_func("/json-reader/events/flows-v1-and-v2", test_flows_v1_and_v2);
  g_test_add_func("/json-reader/events/args-arrays-are-indexed-past-nine",
                  test_args_arrays_are_indexed_past_nine);
  g_test_add_func("/json-reader/events/pids-and-tids-follow-coercion-rules",
                  test_pids_and_tids_follow_the_coercion_rules);
  g_test_add_func("/json-reader/events/bad-events-are-counted-and-dropped",
                  test_bad_events_are_counted_and_dropped);
  g_test_add_func("/json-reader/events/times-keep-every-digit",
                  test_times_keep_every_digit);
  g_test_add_func("/json-reader/events/commas-inside-strings-are-text",
                  test_commas_and_brackets_inside_strings_are_text);
  g_test_add_func("/json-reader/shapes/unterminated-array-is-legal",
                  test_unterminated_array_is_legal);
  g_test_add_func("/json-reader/shapes/array-truncated-mid-string-keeps-events",
                  test_array_truncated_mid_string_keeps_earlier_events);
  g_test_add_func("/json-reader/errors/incomplete-object-after-its-events",
                  test_incomplete_object_is_an_error_after_its_events);
  g_test_add_func("/json-reader/errors/malformed-json-reports-its-offset",
                  test_malformed_json_reports_its_offset);
  g_test_add_func("/json-reader/errors/offsets-not-moved-by-trailing-commas",
                  test_error_offsets_are_not_moved_by_trailing_commas);
  g_test_add_func("/json-reader/errors/empty-and-non-json-inputs",
                  test_empty_and_non_json_inputs_are_errors);
  g_test_add_func("/json-reader/errors/structural-errors-are-reported",
                  test_structural_errors_are_reported);
  g_test_add_func("/json-reader/shapes/documents-without-events-are-fine",
                  test_documents_without_events_are_fine);
  g_test_add_func("/json-reader/errors/feed-after-an-error-keeps-failing",
                  test_feed_after_an_error_keeps_failing);
  g_test_add_func("/json-reader/v8-profile/chunks-become-samples-on-one-timeline",
                  test_v8_profile_chunks_become_samples);
  g_test_add_func("/json-reader/v8-profile/children-lists-give-parents",
                  test_v8_profile_children_lists_give_parents);
  g_test_add_func("/json-reader/v8-profile/broken-parent-chains-are-counted",
                  test_v8_profile_broken_chains_are_counted);
  g_test_add_func("/json-reader/v8-profile/chunks-before-their-profile-are-dropped",
                  test_v8_profile_chunks_before_their_profile_are_dropped);
  g_test_add_func("/json-reader/v8-profile/chunks-without-profile-are-counted",
                  test_v8_profile_chunks_without_profile_are_counted);
  g_test_add_func("/json-reader/real-traces/chrome116-devtools-trace",
                  test_chrome116_devtools_trace_matches_its_description);
  g_test_add_func("/json-reader/real-traces/chrome70-worker-trace",
                  test_chrome70_worker_trace_matches_its_description);

  g_test_add_func("/json-reader/fast-path/tokenizer-takes-common-events",
                  test_fast_tokenizer_takes_common_events);
  g_test_add_func("/json-reader/fast-path/tokenizer-leaves-the-rest-to-yajl",
                  test_fast_tokenizer_leaves_the_rest_to_yajl);
  g_test_add_func("/json-reader/fast-path/tokenizer-agrees-with-yajl-on-random-events",
                  test_fast_tokenizer_agrees_with_yajl_on_random_events);
  g_test_add_func("/json-reader/fast-path/reader-agrees-with-yajl-in-every-chunking",
                  test_fast_reader_agrees_with_yajl_in_every_chunking);
  g_test_add_func("/json-reader/fast-path/reader-agrees-with-yajl-on-truncated-traces",
                  test_fast_reader_agrees_with_yajl_on_truncated_traces);
  g_test_add_func("/json-reader/fast-path/reader-stops-where-yajl-would",
                  test_fast_reader_stops_where_yajl_would);
  g_test_add_func("/json-reader/import-logs/each-dropped-event-is-quoted-at-its-offset",
                  test_import_logs_quote_each_dropped_event);
  g_test_add_func("/json-reader/import-logs/offsets-in-the-object-form",
                  test_import_logs_offsets_in_the_object_form);
  g_test_add_func("/json-reader/import-logs/scalars-are-quoted-as-lexed",
                  test_import_logs_quote_scalars_as_lexed);
  g_test_add_func("/json-reader/import-logs/fast-path-agrees-with-yajl",
                  test_import_logs_fast_path_agrees_with_yajl);
  g_test_add_func("/json-reader/fast-path/reader-agrees-with-yajl-on-damaged-traces",
                  test_fast_reader_agrees_with_yajl_on_damaged_traces);

  int result = g_test_run();
  dlclose(test_handle);
  dlclose(handle);
  return result;
}
