/*
 * The JSON reader tests' fake host (json_host.h).
 */
#include "json_host.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

static json_host *fake(tm_host *host) { return (json_host *)host; }

static const char *str_of(json_host *h, tm_str_id id) {
  if (id == 0)
    return "-";
  g_assert_cmpuint(id, <, h->strings->len);
  return g_ptr_array_index(h->strings, id);
}

/* pid/tid as text; synthetic ids from string pids show their name. */
static char *id_text(json_host *h, int64_t id) {
  if (id >= SYNTHETIC_BASE && id - SYNTHETIC_BASE < (int64_t)h->strings->len)
    return g_strdup_printf("$%s", str_of(h, (tm_str_id)(id - SYNTHETIC_BASE)));
  return g_strdup_printf("%" PRId64, id);
}

static char *thread_text(json_host *h, tm_thread_ref ref) {
  g_assert_cmpuint(ref, >=, 1);
  g_assert_cmpuint(ref, <=, h->threads->len);
  fake_thread *t = &g_array_index(h->threads, fake_thread, ref - 1);
  g_autofree char *pid = id_text(h, t->pid);
  g_autofree char *tid = id_text(h, t->tid);
  return g_strdup_printf("%s/%s", pid, tid);
}

static char *process_text(json_host *h, tm_process_ref ref) {
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

static const char *track_text(json_host *h, tm_track_ref ref) {
  g_assert_cmpuint(ref, >=, 1);
  g_assert_cmpuint(ref, <=, h->tracks->len);
  return g_ptr_array_index(h->tracks, ref - 1);
}

static char *value_text(json_host *h, tm_arg_value v) {
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

static const char *args_text(json_host *h, tm_args_ref args) {
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
static void check_event(json_host *h, tm_clock_ref clock) {
  g_assert_cmpuint(h->pending_args->len, ==, 0);
  g_assert_cmpuint(clock, ==, FAKE_CLOCK);
}

static tm_str_id fake_intern(tm_host *host, const char *s, size_t len) {
  json_host *h = fake(host);
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
  json_host *h = fake(host);
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
  json_host *h = fake(host);
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
  json_host *h = fake(host);
  g_autofree char *text = process_text(h, process);
  g_string_append_printf(h->log, "process_name pid=%s name=%s\n", text,
                         str_of(h, name));
  g_ptr_array_add(h->process_names, g_strdup(str_of(h, name)));
}

static void fake_thread_set_name(tm_host *host, tm_thread_ref thread,
                                 tm_str_id name) {
  json_host *h = fake(host);
  g_autofree char *text = thread_text(h, thread);
  g_string_append_printf(h->log, "thread_name %s name=%s\n", text,
                         str_of(h, name));
  h->thread_names++;
}

static void fake_process_add_arg(tm_host *host, tm_process_ref process,
                                 tm_str_id key, tm_arg_value value) {
  json_host *h = fake(host);
  g_autofree char *text = process_text(h, process);
  g_autofree char *v = value_text(h, value);
  g_string_append_printf(h->log, "process_arg pid=%s %s=%s\n", text,
                         str_of(h, key), v);
}

static void fake_thread_add_arg(tm_host *host, tm_thread_ref thread,
                                tm_str_id key, tm_arg_value value) {
  json_host *h = fake(host);
  g_autofree char *text = thread_text(h, thread);
  g_autofree char *v = value_text(h, value);
  g_string_append_printf(h->log, "thread_arg %s %s=%s\n", text,
                         str_of(h, key), v);
}

static tm_track_ref intern_track(json_host *h, char *description_take) {
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
  json_host *h = fake(host);
  g_autofree char *text = thread_text(h, thread);
  return intern_track(h, g_strdup_printf("thread[%s]", text));
}

static tm_track_ref fake_track_intern(tm_host *host, const tm_track_desc *d) {
  json_host *h = fake(host);
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
  json_host *h = fake(host);
  g_autofree char *v = value_text(h, value);
  g_string_append_printf(h->pending_args, "%s%s=%s",
                         h->pending_args->len ? ", " : "", str_of(h, key), v);
}

static tm_args_ref fake_args_commit(tm_host *host) {
  json_host *h = fake(host);
  if (h->pending_args->len == 0)
    return TM_NO_ARGS;
  g_ptr_array_add(h->arg_sets,
                  g_strdup_printf("{%s}", h->pending_args->str));
  g_string_truncate(h->pending_args, 0);
  return h->arg_sets->len;
}

static void log_slice(json_host *h, const char *kind,
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

static bool is_async_track(json_host *h, tm_track_ref track) {
  return g_str_has_prefix(track_text(h, track), "legacy_async_");
}

static void fake_slice_begin(tm_host *host, const tm_slice_fields *f) {
  json_host *h = fake(host);
  log_slice(h, "B", f, NULL);
  h->begins++;
  h->async_begins += is_async_track(h, f->track);
}

static void fake_slice_end(tm_host *host, const tm_slice_fields *f) {
  json_host *h = fake(host);
  log_slice(h, "E", f, NULL);
  h->ends++;
  h->async_ends += is_async_track(h, f->track);
}

static void fake_slice_complete(tm_host *host, const tm_slice_fields *f,
                                int64_t dur) {
  json_host *h = fake(host);
  log_slice(h, "X", f, &dur);
  h->completes++;
}

static void fake_counter(tm_host *host, tm_track_ref track, tm_clock_ref clock,
                         int64_t ts, double value, tm_args_ref args) {
  json_host *h = fake(host);
  check_event(h, clock);
  g_string_append_printf(h->log, "C %s ts=%" PRId64 " value=%.17g args=%s\n",
                         track_text(h, track), ts, value, args_text(h, args));
  h->counters++;
}

static void fake_flow(tm_host *host, tm_track_ref track, tm_clock_ref clock,
                      int64_t ts, uint64_t flow_id,
                      tm_flow_direction direction, tm_flow_binding binding,
                      tm_args_ref args) {
  json_host *h = fake(host);
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
  json_host *h = fake(host);
  g_string_append_printf(h->log, "meta %s=str:%s\n", name, str_of(h, value));
}

static void fake_stat_add(tm_host *host, const char *name, int64_t delta) {
  json_host *h = fake(host);
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
  json_host *h = fake(host);
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
  json_host *h = fake(host);
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

/* A host built before track_async: the services up to import_log and
 * report_error, every one set (the ABI's rule, tests/test_fake_hosts.c).
 * The JSON reader then gives each legacy async id a track of its own and
 * reads without a record budget, as it does on such a host; the logs of
 * these tests are written for that. */
const tm_host_services services = {
    .struct_size = offsetof(tm_host_services, track_async),
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
static uint32_t profile_row(json_host *h, char *text_take) {
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

static const char *profile_text(json_host *h, uint32_t ref) {
  g_assert_cmpuint(ref, >=, 1);
  g_assert_cmpuint(ref, <=, h->profile_rows->len);
  return g_ptr_array_index(h->profile_rows, ref - 1);
}

static tm_mapping_ref fake_mapping(tm_host *host, tm_str_id name,
                                   tm_str_id build_id, uint64_t start,
                                   uint64_t end, uint64_t exact_offset,
                                   uint64_t load_bias) {
  json_host *h = fake(host);
  g_assert_true(!build_id && !start && !end && !exact_offset && !load_bias);
  return profile_row(h, g_strdup_printf("map:%s", name ? str_of(h, name)
                                                       : "(null)"));
}

static tm_frame_ref fake_frame(tm_host *host, tm_str_id function_name,
                               tm_mapping_ref mapping, uint64_t rel_pc) {
  json_host *h = fake(host);
  g_assert_cmpuint(rel_pc, ==, 0);
  return profile_row(h, g_strdup_printf("%s@%s", str_of(h, function_name),
                                        profile_text(h, mapping) + 4));
}

static tm_callsite_ref fake_callsite(tm_host *host, tm_callsite_ref parent,
                                     tm_frame_ref frame) {
  json_host *h = fake(host);
  return profile_row(h, g_strdup_printf(
                            "%s%s%s", parent ? profile_text(h, parent) : "",
                            parent ? ">" : "", profile_text(h, frame)));
}

static void fake_sample(tm_host *host, tm_clock_ref clock, int64_t ts,
                        tm_thread_ref thread, tm_callsite_ref callsite,
                        int32_t cpu) {
  json_host *h = fake(host);
  check_event(h, clock);
  g_autofree char *t = thread_text(h, thread);
  g_string_append_printf(h->log, "sample ts=%" PRId64 " thread=%s cpu=%d "
                         "stack=%s\n", ts, t, cpu,
                         profile_text(h, callsite));
}

/* `services` with the logging import_log; filled in by json_host_load_readers(). */
tm_host_services logging_services;
const tm_host_services *active_services = &services;

json_host *json_host_new(void) {
  json_host *h = g_new0(json_host, 1);
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

void json_host_free(json_host *h) {
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

int64_t stat_total(json_host *h, const char *name) {
  int64_t *total = g_hash_table_lookup(h->stats, name);
  return total ? *total : 0;
}

/* --- driving the reader ---------------------------------------------------- */

/* Reads `len` bytes in chunks of `chunk` as the host would: stop feeding
 * after an error, finish otherwise, always close. The log ends with the
 * final status. */
json_host *read_bytes_with(const tm_reader_descriptor *rd,
                                  const char *config, const char *bytes,
                                  size_t len, size_t chunk) {
  json_host *h = json_host_new();
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

json_host *read_bytes(const char *bytes, size_t len, size_t chunk) {
  return read_bytes_with(reader, NULL, bytes, len, chunk);
}

/* Reads whole, in 7-byte chunks and byte by byte; the logs must match. */
json_host *read_all_chunkings(const char *bytes, size_t len) {
  json_host *whole = read_bytes(bytes, len, MAX(len, 1));
  const size_t chunks[] = {7, 1};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    json_host *other = read_bytes(bytes, len, chunks[i]);
    g_assert_cmpstr(other->log->str, ==, whole->log->str);
    json_host_free(other);
  }
  return whole;
}

char *fixture_path(const char *name) {
  return g_test_build_filename(G_TEST_DIST, "data", "json", name, NULL);
}

json_host *read_fixture(const char *name) {
  g_autofree char *path = fixture_path(name);
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  g_file_get_contents(path, &bytes, &len, &error);
  g_assert_no_error(error);
  return read_all_chunkings(bytes, len);
}

void assert_fixture_log(const char *name, const char *expected) {
  json_host *h = read_fixture(name);
  g_assert_cmpstr(h->log->str, ==, expected);
  json_host_free(h);
}

void assert_text_log(const char *text, const char *expected) {
  json_host *h = read_all_chunkings(text, strlen(text));
  g_assert_cmpstr(h->log->str, ==, expected);
  json_host_free(h);
}

/* --- loading the readers ---------------------------------------------------- */

const tm_reader_descriptor *reader;
const tm_reader_descriptor *test_reader;
static void *reader_handle, *test_reader_handle;

static const tm_reader_descriptor *load(const char *variable, void **handle) {
  const char *path = g_getenv(variable);
  if (!path) {
    g_printerr("%s must name a built JSON reader\n", variable);
    return NULL;
  }
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*handle) {
    g_printerr("dlopen %s: %s\n", path, dlerror());
    return NULL;
  }
  tm_reader_entry_fn entry =
      (tm_reader_entry_fn)dlsym(*handle, TM_READER_ENTRY_SYMBOL);
  if (!entry) {
    g_printerr("%s has no %s\n", path, TM_READER_ENTRY_SYMBOL);
    return NULL;
  }
  return entry();
}

bool json_host_load_readers(bool with_test_build) {
  logging_services = services;
  logging_services.import_log = fake_import_log;
  reader = load("TM_JSON_PLUGIN", &reader_handle);
  if (with_test_build)
    test_reader = load("TM_JSON_TEST_PLUGIN", &test_reader_handle);
  return reader && (!with_test_build || test_reader);
}

void json_host_unload_readers(void) {
  if (test_reader_handle)
    dlclose(test_reader_handle);
  if (reader_handle)
    dlclose(reader_handle);
}
