/* The tests' one fake host: it writes a transcript (see fake_host.h). */
#include "fake_host.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

struct tm_host {
  GString *transcript;
  GPtrArray *strings;     /* id - 1 -> text */
  GHashTable *string_ids; /* text -> id */
  GPtrArray *clocks;      /* ref - 1 -> label */
  GHashTable *clock_ids;
  GPtrArray *machines; /* ref - 1 -> label */
  GHashTable *machine_ids;
  GPtrArray *processes; /* ref - 1 -> label */
  GHashTable *process_ids;
  GPtrArray *threads;
  GHashTable *thread_ids;
  GPtrArray *tracks; /* ref - 1 -> label */
  GHashTable *track_ids;
  GPtrArray *stack_rows; /* mappings, frames, callsites: ref - 1 -> key */
  GHashTable *stack_row_ids;
  GString *pending_args;
  GPtrArray *arg_sets; /* ref - 1 -> "{...}" */
  GHashTable *stats;   /* name -> int64 value (boxed) */
  GString *import_logs; /* one "name at=offset" line per import_log call */
  GString *import_log_values; /* the same lines with "key=value" args */
  char *error;
  int64_t error_offset;
  int64_t record_budget; /* TM_BUDGET_RECORD_BYTES; -1: none */
  unsigned flags;        /* FAKE_HOST_* */
  GHashTable *key_names;  /* FAKE_HOST_IDS_BY_ORDER: track key -> "kN" */
  GHashTable *flow_names; /* and flow id -> "fN" */
};

struct fake_host {
  struct tm_host host;
  /* The table passed to open(): fake_services, or a copy cut short by
   * fake_host_set_services_size(). */
  tm_host_services services;
  char *config; /* the config text open() gets, or NULL */
};

static void line(tm_host *host, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Formats into a stack buffer first: g_string_append_vprintf allocates
 * at each call, which under ASan is most of a long read's cost. */
static void line(tm_host *host, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = g_vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof buf) {
    g_string_append_len(host->transcript, buf, n);
  } else {
    va_start(ap, fmt);
    g_string_append_vprintf(host->transcript, fmt, ap);
    va_end(ap);
  }
  g_string_append_c(host->transcript, '\n');
}

/* Interns `label` in (array, index); returns its ref and whether it is new. */
static uint32_t ref_of(GPtrArray *array, GHashTable *index, const char *label,
                       bool *created) {
  gpointer found = g_hash_table_lookup(index, label);
  if (found) {
    if (created)
      *created = false;
    return GPOINTER_TO_UINT(found);
  }
  char *copy = g_strdup(label);
  g_ptr_array_add(array, copy);
  g_hash_table_insert(index, copy, GUINT_TO_POINTER(array->len));
  if (created)
    *created = true;
  return array->len;
}

static const char *label_of(GPtrArray *array, uint32_t ref) {
  if (ref == 0 || ref > array->len)
    return "<invalid>";
  return g_ptr_array_index(array, ref - 1);
}

static const char *str(tm_host *host, tm_str_id id) {
  return id ? label_of(host->strings, id) : "-";
}

/* An event arrives: the arg set it names is committed, none is half built. */
static void check_no_pending_args(tm_host *host) {
  g_assert_cmpuint(host->pending_args->len, ==, 0);
}

/* `value` written as "k1", "f2", ... by order of first appearance under
 * FAKE_HOST_IDS_BY_ORDER (0 stays 0), else as its number. */
static char *id_text(tm_host *host, GHashTable *names, const char *prefix, uint64_t value) {
  if (!(host->flags & FAKE_HOST_IDS_BY_ORDER) || value == 0)
    return g_strdup_printf("%" PRIu64, value);
  const char *name = g_hash_table_lookup(names, &value);
  if (!name) {
    char *made = g_strdup_printf("%s%u", prefix, g_hash_table_size(names) + 1);
    g_hash_table_insert(names, g_memdup2(&value, sizeof value), made);
    name = made;
  }
  return g_strdup(name);
}

/* A real number as the shortest text that reads back as the same double. */
static char *real_text(double value) {
  char *text = g_strdup_printf("%.15g", value);
  if (g_ascii_strtod(text, NULL) != value) {
    g_free(text);
    text = g_strdup_printf("%.17g", value);
  }
  return text;
}

static tm_str_id svc_intern_string(tm_host *host, const char *s, size_t len) {
  g_autofree char *text = g_strndup(s ? s : "", s ? len : 0);
  return ref_of(host->strings, host->string_ids, text, NULL);
}

/* --- clocks ------------------------------------------------------------- */

static const char *clock_name(uint32_t id, char *buf, size_t size) {
  static const char *const names[] = {NULL, "REALTIME", "REALTIME_COARSE",
                                      "MONOTONIC", "MONOTONIC_COARSE",
                                      "MONOTONIC_RAW", "BOOTTIME"};
  if (id < G_N_ELEMENTS(names) && names[id])
    return names[id];
  g_snprintf(buf, size, "clock%" PRIu32, id);
  return buf;
}

static tm_clock_ref svc_clock_private(tm_host *host) {
  return ref_of(host->clocks, host->clock_ids, "private", NULL);
}

static tm_clock_ref svc_clock_builtin(tm_host *host, tm_machine_ref machine,
                                      uint32_t clock_id) {
  char buf[32];
  g_autofree char *label = g_strdup_printf(
      "%s@%s", clock_name(clock_id, buf, sizeof buf), label_of(host->machines, machine));
  return ref_of(host->clocks, host->clock_ids, label, NULL);
}

static tm_clock_ref svc_clock_sequence(tm_host *host, tm_machine_ref machine,
                                       uint32_t sequence_id, uint32_t clock_id) {
  g_autofree char *label = g_strdup_printf("clock%" PRIu32 "/seq%" PRIu32 "@%s", clock_id,
                                           sequence_id, label_of(host->machines, machine));
  return ref_of(host->clocks, host->clock_ids, label, NULL);
}

static bool svc_claim_trace_time(tm_host *host, tm_clock_ref clock) {
  line(host, "claim %s", label_of(host->clocks, clock));
  return true;
}

static bool svc_add_clock_snapshot(tm_host *host, const tm_clock_ref *clocks,
                                   const int64_t *values_ns, size_t count) {
  GString *text = g_string_new("snapshot");
  for (size_t i = 0; i < count; i++)
    g_string_append_printf(text, " %s=%" PRId64, label_of(host->clocks, clocks[i]),
                           values_ns[i]);
  line(host, "%s", text->str);
  g_string_free(text, TRUE);
  return true;
}

/* --- machines, processes, threads ------------------------------------ */

static tm_machine_ref svc_machine_default(tm_host *host) {
  return ref_of(host->machines, host->machine_ids, "host", NULL);
}

static tm_machine_ref svc_machine_embedded(tm_host *host, uint32_t raw_id) {
  if (raw_id == 0)
    return svc_machine_default(host);
  g_autofree char *label = g_strdup_printf("raw%" PRIu32, raw_id);
  bool created;
  tm_machine_ref ref = ref_of(host->machines, host->machine_ids, label, &created);
  if (created)
    line(host, "machine %s", label);
  return ref;
}

/* "p10", "t11@raw2": the kind, the id, and the machine unless it is the
 * default one. An id of 2^32 + a string id is a name standing in for a
 * number (the JSON reader's string pids and tids): written "$name". */
static char *entity_label(tm_host *host, char kind, tm_machine_ref machine,
                          int64_t id) {
  const int64_t named_base = (int64_t)1 << 32;
  g_autofree char *number = NULL;
  if (id > named_base && id - named_base <= (int64_t)host->strings->len)
    number = g_strdup_printf("$%s", str(host, (tm_str_id)(id - named_base)));
  else
    number = g_strdup_printf("%" PRId64, id);
  const char *m = label_of(host->machines, machine);
  if (strcmp(m, "host") == 0)
    return g_strdup_printf("%c%s", kind, number);
  return g_strdup_printf("%c%s@%s", kind, number, m);
}

static tm_process_ref svc_process(tm_host *host, tm_machine_ref machine,
                                  int64_t pid) {
  g_autofree char *label = entity_label(host, 'p', machine, pid);
  bool created;
  tm_process_ref ref = ref_of(host->processes, host->process_ids, label, &created);
  if (created)
    line(host, "process %s", label);
  return ref;
}

/* A thread makes its process, as the host does, unless
 * FAKE_HOST_PROCESS_CALLS: then it only names it. */
static tm_thread_ref svc_thread(tm_host *host, tm_machine_ref machine,
                                int64_t pid, int64_t tid) {
  g_autofree char *process = entity_label(host, 'p', machine, pid);
  if (!(host->flags & FAKE_HOST_PROCESS_CALLS))
    svc_process(host, machine, pid);
  g_autofree char *label = entity_label(host, 't', machine, tid);
  bool created;
  tm_thread_ref ref = ref_of(host->threads, host->thread_ids, label, &created);
  if (created)
    line(host, "thread %s of %s", label, process);
  return ref;
}

static void svc_process_set_name(tm_host *host, tm_process_ref process,
                                 tm_str_id name) {
  line(host, "process_name %s = %s", label_of(host->processes, process), str(host, name));
}

static void svc_thread_set_name(tm_host *host, tm_thread_ref thread, tm_str_id name) {
  line(host, "thread_name %s = %s", label_of(host->threads, thread), str(host, name));
}

static char *value_text(tm_host *host, tm_arg_value v) {
  switch (v.type) {
  case TM_ARG_INT:
    return g_strdup_printf("%" PRId64, v.u.int_value);
  case TM_ARG_UINT:
    return g_strdup_printf("%" PRIu64 "u", (uint64_t)v.u.int_value);
  case TM_ARG_STRING:
    return g_strdup_printf("\"%s\"", str(host, v.u.str_id));
  case TM_ARG_REAL:
    return real_text(v.u.real_value);
  case TM_ARG_POINTER:
    return g_strdup_printf("0x%" PRIx64, (uint64_t)v.u.int_value);
  case TM_ARG_BOOL:
    return g_strdup(v.u.int_value ? "true" : "false");
  case TM_ARG_JSON:
    return g_strdup_printf("json:%s", str(host, v.u.str_id));
  }
  return g_strdup("?");
}

static void svc_process_add_arg(tm_host *host, tm_process_ref process,
                                tm_str_id key, tm_arg_value value) {
  g_autofree char *text = value_text(host, value);
  line(host, "process_arg %s %s=%s", label_of(host->processes, process), str(host, key), text);
}

static void svc_thread_add_arg(tm_host *host, tm_thread_ref thread, tm_str_id key,
                               tm_arg_value value) {
  g_autofree char *text = value_text(host, value);
  line(host, "thread_arg %s %s=%s", label_of(host->threads, thread), str(host, key), text);
}

/* --- tracks ------------------------------------------------------------- */

static tm_track_ref track_of(tm_host *host, const char *description) {
  bool created;
  tm_track_ref ref = ref_of(host->tracks, host->track_ids, description, &created);
  if (created)
    line(host, "track T%" PRIu32 " = %s", ref, description);
  return ref;
}

static const char *track(tm_host *host, tm_track_ref ref, char *buf, size_t size) {
  if (ref == 0 || ref > host->tracks->len)
    return "<invalid track>";
  g_snprintf(buf, size, "T%" PRIu32, ref);
  return buf;
}

static tm_track_ref svc_track_thread(tm_host *host, tm_thread_ref thread) {
  g_autofree char *d = g_strdup_printf("thread_execution %s", label_of(host->threads, thread));
  return track_of(host, d);
}

static tm_track_ref svc_track_intern(tm_host *host, const tm_track_desc *desc) {
  tm_machine_ref machine = desc->machine;
  GString *d = g_string_new(desc->type);
  if (desc->is_counter)
    g_string_append(d, " counter");
  if (desc->name)
    g_string_append_printf(d, " name=\"%s\"", str(host, desc->name));
  if (desc->thread)
    g_string_append_printf(d, " %s", label_of(host->threads, desc->thread));
  if (desc->process)
    g_string_append_printf(d, " %s", label_of(host->processes, desc->process));
  if (desc->scope)
    g_string_append_printf(d, " scope=%s", str(host, desc->scope));
  g_autofree char *key = id_text(host, host->key_names, "k", desc->key);
  g_string_append_printf(d, " key=%s", key);
  if (desc->unit)
    g_string_append_printf(d, " unit=%s", str(host, desc->unit));
  if (desc->has_cpu)
    g_string_append_printf(d, " cpu=%u", desc->cpu);
  if (!desc->thread && !desc->process)
    g_string_append_printf(d, " on %s",
                           label_of(host->machines, machine ? machine : svc_machine_default(host)));
  tm_track_ref ref = track_of(host, d->str);
  g_string_free(d, TRUE);
  return ref;
}


static void svc_track_set_parent(tm_host *host, tm_track_ref t, tm_track_ref parent) {
  char a[16], b[16];
  line(host, "track_parent %s = %s", track(host, t, a, sizeof a), track(host, parent, b, sizeof b));
}

static void svc_track_add_source_arg(tm_host *host, tm_track_ref t, tm_str_id key,
                                     tm_arg_value value) {
  char a[16];
  g_autofree char *text = value_text(host, value);
  line(host, "track_arg %s %s=%s", track(host, t, a, sizeof a), str(host, key), text);
}

static void svc_process_set_cmdline(tm_host *host, tm_process_ref process,
                                    tm_str_id cmdline) {
  line(host, "process_cmdline %s = %s", label_of(host->processes, process), str(host, cmdline));
}

static void svc_process_set_parent(tm_host *host, tm_process_ref process,
                                   tm_process_ref parent) {
  line(host, "process_parent %s = %s", label_of(host->processes, process),
       label_of(host->processes, parent));
}

static void svc_process_set_uid(tm_host *host, tm_process_ref process, int64_t uid) {
  line(host, "process_uid %s = %" PRId64, label_of(host->processes, process), uid);
}

static void svc_machine_set_info(tm_host *host, tm_machine_ref machine,
                                 const char *column, tm_arg_value value) {
  g_autofree char *text = value_text(host, value);
  line(host, "machine_info %s %s=%s", label_of(host->machines, machine), column, text);
}

/* --- args ---------------------------------------------------------------- */

static void svc_args_add(tm_host *host, tm_str_id key, tm_arg_value value) {
  g_autofree char *text = value_text(host, value);
  g_string_append_printf(host->pending_args, "%s%s=%s",
                         host->pending_args->len ? ", " : "", str(host, key), text);
}

/* The fake keeps no arg text beside its strings: the value is interned
 * and printed as args_add prints it. */
static void svc_args_add_string(tm_host *host, tm_str_id key, tm_arg_type type,
                                const char *s, size_t len) {
  tm_arg_value value = {.type = type == TM_ARG_JSON ? TM_ARG_JSON : TM_ARG_STRING};
  value.u.str_id = svc_intern_string(host, s, len);
  svc_args_add(host, key, value);
}

static void svc_args_add_callsite(tm_host *host, tm_str_id key, tm_callsite_ref callsite) {
  if (callsite)
    svc_args_add(host, key, (tm_arg_value){.type = TM_ARG_INT,
                                           .u.int_value = (int64_t)callsite - 1});
}

static tm_args_ref svc_args_commit(tm_host *host) {
  if (host->pending_args->len == 0)
    return TM_NO_ARGS;
  g_ptr_array_add(host->arg_sets, g_strdup_printf("{%s}", host->pending_args->str));
  g_string_truncate(host->pending_args, 0);
  return host->arg_sets->len;
}

/* --- events -------------------------------------------------------------- */

static void slice_line(tm_host *host, const char *what, const tm_slice_fields *f,
                       const char *extra) {
  char t[16];
  check_no_pending_args(host);
  GString *text = g_string_new(NULL);
  g_string_append_printf(text, "%s %s %s ts=%" PRId64, what, track(host, f->track, t, sizeof t),
                         label_of(host->clocks, f->clock), f->ts);
  if (f->category)
    g_string_append_printf(text, " cat=%s", str(host, f->category));
  if (f->name)
    g_string_append_printf(text, " name=%s", str(host, f->name));
  if (f->thread_ts != TM_UNKNOWN_TIME)
    g_string_append_printf(text, " thread_ts=%" PRId64, f->thread_ts);
  if (f->thread_dur != TM_UNKNOWN_TIME)
    g_string_append_printf(text, " thread_dur=%" PRId64, f->thread_dur);
  if (extra)
    g_string_append_printf(text, " %s", extra);
  if (f->args)
    g_string_append_printf(text, " args=%s", label_of(host->arg_sets, f->args));
  line(host, "%s", text->str);
  g_string_free(text, TRUE);
}

static void svc_slice_begin(tm_host *host, const tm_slice_fields *f) {
  slice_line(host, "slice_begin", f, NULL);
}

static void svc_slice_end(tm_host *host, const tm_slice_fields *f) {
  slice_line(host, "slice_end", f, NULL);
}

static void svc_slice_complete(tm_host *host, const tm_slice_fields *f, int64_t dur_ns) {
  g_autofree char *dur = g_strdup_printf("dur=%" PRId64, dur_ns);
  slice_line(host, "slice_complete", f, dur);
}

static void svc_counter(tm_host *host, tm_track_ref t, tm_clock_ref clock, int64_t ts,
                        double value, tm_args_ref args) {
  char a[16];
  check_no_pending_args(host);
  g_autofree char *number = real_text(value);
  line(host, "counter %s %s ts=%" PRId64 " value=%s%s%s", track(host, t, a, sizeof a),
       label_of(host->clocks, clock), ts, number, args ? " args=" : "",
       args ? label_of(host->arg_sets, args) : "");
}

static void svc_flow(tm_host *host, tm_track_ref t, tm_clock_ref clock, int64_t ts,
                     uint64_t flow_id, tm_flow_direction direction,
                     tm_flow_binding binding, tm_args_ref args) {
  static const char *const directions[] = {"OUT", "STEP", "IN", "CONTINUE", "IN_KEEP"};
  char a[16];
  check_no_pending_args(host);
  g_autofree char *id = id_text(host, host->flow_names, "f", flow_id);
  line(host, "flow %s %s ts=%" PRId64 " id=%s %s %s%s", track(host, t, a, sizeof a),
       label_of(host->clocks, clock), ts, id,
       direction <= TM_FLOW_IN_KEEP ? directions[direction] : "?",
       binding == TM_FLOW_BIND_ENCLOSING ? "enclosing" : "next",
       args ? label_of(host->arg_sets, args) : "");
}

/* --- profiling ----------------------------------------------------------- */

/* Mappings, frames and callsites share one ref space, interned by their
 * fields; a new row is one transcript line "<kind> S<ref> <fields>". */
static uint32_t stack_row(tm_host *host, const char *kind, const char *fields) {
  g_autofree char *key = g_strdup_printf("%s %s", kind, fields);
  bool created;
  uint32_t ref = ref_of(host->stack_rows, host->stack_row_ids, key, &created);
  if (created)
    line(host, "%s S%u %s", kind, ref, fields);
  return ref;
}

static tm_mapping_ref svc_mapping(tm_host *host, tm_str_id name, tm_str_id build_id,
                                  uint64_t start, uint64_t end, uint64_t exact_offset,
                                  uint64_t load_bias) {
  g_autofree char *fields = g_strdup_printf(
      "name=%s build_id=%s start=%" PRIu64 " end=%" PRIu64 " exact_offset=%" PRIu64
      " load_bias=%" PRIu64, str(host, name), str(host, build_id), start, end,
      exact_offset, load_bias);
  return stack_row(host, "mapping", fields);
}

static tm_frame_ref svc_frame(tm_host *host, tm_str_id function_name,
                              tm_mapping_ref mapping, uint64_t rel_pc) {
  g_autofree char *fields = g_strdup_printf("name=%s mapping=S%u rel_pc=%" PRIu64,
                                            str(host, function_name), mapping, rel_pc);
  return stack_row(host, "frame", fields);
}

static tm_callsite_ref svc_callsite(tm_host *host, tm_callsite_ref parent,
                                    tm_frame_ref frame) {
  g_autofree char *fields = g_strdup_printf("parent=S%u frame=S%u", parent, frame);
  return stack_row(host, "callsite", fields);
}

static void svc_sample(tm_host *host, tm_clock_ref clock, int64_t ts, tm_thread_ref thread,
                       tm_callsite_ref callsite, int32_t cpu) {
  check_no_pending_args(host);
  line(host, "sample %s %s ts=%" PRId64 " callsite=S%u cpu=%d",
       label_of(host->threads, thread), label_of(host->clocks, clock), ts, callsite,
       cpu);
}

/* --- metadata, stats, errors -------------------------------------------- */

static void svc_metadata_set_int(tm_host *host, const char *name, int64_t value) {
  line(host, "metadata %s = %" PRId64, name, value);
}

static void svc_metadata_set_string(tm_host *host, const char *name, tm_str_id value) {
  line(host, "metadata %s = \"%s\"", name, str(host, value));
}

static void count_stat(tm_host *host, const char *name, int64_t delta) {
  int64_t *found = g_hash_table_lookup(host->stats, name);
  if (found)
    *found += delta;
  else
    g_hash_table_insert(host->stats, g_strdup(name), g_memdup2(&delta, sizeof delta));
}

static void svc_stat_add(tm_host *host, const char *name, int64_t delta) {
  count_stat(host, name, delta);
  if (host->flags & FAKE_HOST_STATS)
    line(host, "stat %s %+" PRId64, name, delta);
}

static void svc_report_error(tm_host *host, int64_t byte_offset, const char *message) {
  line(host, "error at %" PRId64 ": %s", byte_offset, message);
  if (host->error)
    return;
  host->error = g_strdup(message);
  host->error_offset = byte_offset;
}

static bool svc_remote_clock_sync(tm_host *host) {
  line(host, "remote_clock_sync");
  return true;
}

/* Counts like stat_add and records the call: every call, where the real
 * host keeps the first few per stat, so a test sees each occurrence. */
/* Appends " key=value" (the value as import_log_values shows it). Plain
 * appends, not printf: the JSON tests log thousands of 1 KiB quotes, and
 * under ASan each printf is an allocation. */
static void append_import_arg(GString *out, const tm_import_log_arg *arg, const char *sep,
                              bool typed) {
  g_string_append(out, sep);
  g_string_append(out, arg->key);
  g_string_append_c(out, '=');
  if (arg->type == TM_ARG_STRING || arg->type == TM_ARG_JSON)
    g_string_append_len(out, arg->string, (gssize)arg->string_len);
  else if (arg->type == TM_ARG_REAL)
    g_string_append_printf(out, typed ? "real:%.17g" : "%g", arg->real_value);
  else
    g_string_append_printf(out, typed ? "int:%" PRId64 : "%" PRId64, arg->int_value);
}

static void svc_import_log(tm_host *host, const char *name, int64_t byte_offset,
                           const tm_import_log_arg *args, size_t n_args) {
  count_stat(host, name, 1);
  char at[32];
  g_snprintf(at, sizeof at, " at=%" PRId64, byte_offset);
  GString *t = host->transcript;
  if (host->flags & FAKE_HOST_IMPORT_LOGS) {
    g_string_append(t, "import_log ");
    g_string_append(t, name);
    g_string_append(t, at);
    for (size_t i = 0; i < n_args; i++)
      append_import_arg(t, &args[i], i ? "; " : " ", true);
    g_string_append_c(t, '\n');
  } else if (host->flags & FAKE_HOST_STATS) {
    line(host, "stat %s +1", name);
  }
  g_string_append(host->import_logs, name);
  g_string_append(host->import_logs, at);
  g_string_append(host->import_log_values, name);
  g_string_append(host->import_log_values, at);
  for (size_t i = 0; i < n_args; i++) {
    g_string_append_c(host->import_logs, ' ');
    g_string_append(host->import_logs, args[i].key);
    append_import_arg(host->import_log_values, &args[i], " ", false);
  }
  g_string_append_c(host->import_logs, '\n');
  g_string_append_c(host->import_log_values, '\n');
}

/* --- scheduling ------------------------------------------------------------ */

static void svc_sched_switch(tm_host *host, tm_clock_ref clock, int64_t ts,
                             tm_machine_ref machine, uint32_t cpu, tm_thread_ref prev,
                             tm_str_id prev_state, tm_thread_ref next, int32_t next_prio) {
  (void)machine;
  line(host, "sched_switch %s ts=%" PRId64 " cpu=%u %s state=%s -> %s prio=%d",
       label_of(host->clocks, clock), ts, cpu, label_of(host->threads, prev),
       prev_state ? str(host, prev_state) : "NULL", label_of(host->threads, next), next_prio);
}

static void svc_sched_waking(tm_host *host, tm_clock_ref clock, int64_t ts,
                             tm_machine_ref machine, uint32_t target_cpu, tm_thread_ref thread,
                             tm_thread_ref waker) {
  (void)machine;
  line(host, "sched_waking %s ts=%" PRId64 " cpu=%u %s by %s", label_of(host->clocks, clock),
       ts, target_cpu, label_of(host->threads, thread),
       waker ? label_of(host->threads, waker) : "-");
}

/* --- system traces -------------------------------------------------------- */

/* An async slot is written once, as "slot T<n> = <set> cookie=<c>" (no
 * "track " line: its track is chosen by the host at merge time). */
static tm_track_ref svc_track_async(tm_host *host, const tm_track_desc *set, uint64_t cookie,
                                    uint32_t flags) {
  GString *d = g_string_new(set->type);
  if (set->name)
    g_string_append_printf(d, " name=\"%s\"", str(host, set->name));
  if (set->thread)
    g_string_append_printf(d, " %s", label_of(host->threads, set->thread));
  if (set->process)
    g_string_append_printf(d, " %s", label_of(host->processes, set->process));
  if (set->parent)
    g_string_append_printf(d, " parent=T%" PRIu32, set->parent);
  if (set->set_key)
    g_string_append_printf(d, " set_key=%" PRIu64, set->set_key);
  if (set->merge_key)
    g_string_append_printf(d, " merge_key=\"%s\"", str(host, set->merge_key));
  if (set->nameless)
    g_string_append(d, " nameless");
  if (!set->thread && !set->process)
    g_string_append_printf(
        d, " on %s", label_of(host->machines, set->machine ? set->machine : svc_machine_default(host)));
  g_string_append_printf(d, " cookie=%" PRIu64 "%s", cookie, flags ? " unnestable" : "");
  bool created;
  tm_track_ref ref = ref_of(host->tracks, host->track_ids, d->str, &created);
  if (created)
    line(host, "slot T%" PRIu32 " = %s", ref, d->str);
  g_string_free(d, TRUE);
  return ref;
}

static void svc_frame_timeline_begin(tm_host *host, const tm_slice_fields *f,
                                     const tm_frame_timeline_fields *frame) {
  GString *text = g_string_new(frame->is_actual ? "actual" : "expected");
  if (frame->display_frame_token != INT64_MIN)
    g_string_append_printf(text, " display=%" PRId64, frame->display_frame_token);
  if (frame->surface_frame_token != INT64_MIN)
    g_string_append_printf(text, " surface=%" PRId64, frame->surface_frame_token);
  g_string_append_printf(text, " %s", label_of(host->processes, frame->process));
  if (frame->layer_name)
    g_string_append_printf(text, " layer=\"%s\"", str(host, frame->layer_name));
  if (frame->jank_type)
    g_string_append_printf(text, " jank=\"%s\"", str(host, frame->jank_type));
  if (frame->jank_tag)
    g_string_append_printf(text, " tag=\"%s\"", str(host, frame->jank_tag));
  slice_line(host, "frame_begin", f, text->str);
  g_string_free(text, TRUE);
}

static void svc_ftrace_event(tm_host *host, tm_clock_ref clock, int64_t ts,
                             tm_machine_ref machine, uint32_t cpu, tm_thread_ref thread,
                             tm_str_id name, tm_args_ref args) {
  (void)machine;
  line(host, "ftrace_event %s ts=%" PRId64 " cpu=%u %s %s args=%s",
       label_of(host->clocks, clock), ts, cpu, label_of(host->threads, thread), str(host, name),
       args ? label_of(host->arg_sets, args) : "{}");
}

static void svc_android_log(tm_host *host, tm_clock_ref clock, int64_t ts,
                            tm_thread_ref thread, uint32_t prio, tm_str_id tag, tm_str_id msg,
                            tm_args_ref args) {
  (void)args;
  line(host, "android_log %s ts=%" PRId64 " %s prio=%u tag=%s msg=%s",
       label_of(host->clocks, clock), ts, thread ? label_of(host->threads, thread) : "-",
       prio, str(host, tag), str(host, msg));
}

static void svc_package(tm_host *host, tm_machine_ref machine, tm_str_id name, int64_t uid,
                        int32_t debuggable, int32_t profileable, int64_t version_code) {
  (void)machine;
  line(host, "package %s uid=%" PRId64 " debuggable=%d profileable=%d version=%" PRId64,
       str(host, name), uid, debuggable, profileable, version_code);
}

static void svc_thread_lifetime(tm_host *host, tm_clock_ref clock, int64_t ts,
                                tm_thread_ref thread, uint32_t is_end) {
  line(host, "thread_%s %s %s ts=%" PRId64, is_end ? "end" : "start",
       label_of(host->threads, thread), label_of(host->clocks, clock), ts);
}

static void svc_stat_set_indexed(tm_host *host, const char *name, int64_t idx, int64_t value) {
  g_autofree char *key = idx < 0 ? g_strdup(name) : g_strdup_printf("%s[%" PRId64 "]", name, idx);
  g_hash_table_replace(host->stats, g_strdup(key), g_memdup2(&value, sizeof value));
}

static void svc_sched_blocked_reason(tm_host *host, tm_clock_ref clock, int64_t ts,
                                     tm_thread_ref thread, int32_t io_wait,
                                     tm_str_id blocked_function) {
  line(host, "blocked_reason %s %s ts=%" PRId64 " io_wait=%d%s%s",
       label_of(host->threads, thread), label_of(host->clocks, clock), ts, io_wait,
       blocked_function ? " function=" : "", blocked_function ? str(host, blocked_function) : "");
}

static int64_t svc_budget(tm_host *host, uint32_t which) {
  return which == TM_BUDGET_RECORD_BYTES ? host->record_budget : -1;
}

/* The per-machine forms: the machine's label before the name. */
static void svc_machine_stat_set_indexed(tm_host *host, tm_machine_ref machine, const char *name,
                                         int64_t idx, int64_t value) {
  g_autofree char *scoped = g_strdup_printf("%s:%s", label_of(host->machines, machine), name);
  svc_stat_set_indexed(host, scoped, idx, value);
}

static void svc_machine_metadata_set_int(tm_host *host, tm_machine_ref machine, const char *name,
                                         int64_t value) {
  line(host, "metadata %s:%s = %" PRId64, label_of(host->machines, machine), name, value);
}

static void svc_machine_metadata_set_string(tm_host *host, tm_machine_ref machine,
                                            const char *name, tm_str_id value) {
  line(host, "metadata %s:%s = \"%s\"", label_of(host->machines, machine), name,
       str(host, value));
}

static const tm_host_services fake_services = {
    .struct_size = sizeof(tm_host_services),
    .abi_version = TM_READER_ABI_VERSION,
    .intern_string = svc_intern_string,
    .clock_private = svc_clock_private,
    .clock_builtin = svc_clock_builtin,
    .clock_sequence = svc_clock_sequence,
    .claim_trace_time = svc_claim_trace_time,
    .add_clock_snapshot = svc_add_clock_snapshot,
    .machine_default = svc_machine_default,
    .machine_embedded = svc_machine_embedded,
    .process = svc_process,
    .thread = svc_thread,
    .process_set_name = svc_process_set_name,
    .thread_set_name = svc_thread_set_name,
    .process_add_arg = svc_process_add_arg,
    .thread_add_arg = svc_thread_add_arg,
    .track_thread = svc_track_thread,
    .track_intern = svc_track_intern,
    .args_add = svc_args_add,
    .args_commit = svc_args_commit,
    .args_add_string = svc_args_add_string,
    .slice_begin = svc_slice_begin,
    .slice_end = svc_slice_end,
    .slice_complete = svc_slice_complete,
    .counter = svc_counter,
    .flow = svc_flow,
    .metadata_set_int = svc_metadata_set_int,
    .metadata_set_string = svc_metadata_set_string,
    .stat_add = svc_stat_add,
    .report_error = svc_report_error,
    .track_set_parent = svc_track_set_parent,
    .track_add_source_arg = svc_track_add_source_arg,
    .process_set_cmdline = svc_process_set_cmdline,
    .process_set_parent = svc_process_set_parent,
    .process_set_uid = svc_process_set_uid,
    .machine_set_info = svc_machine_set_info,
    .mapping = svc_mapping,
    .frame = svc_frame,
    .callsite = svc_callsite,
    .sample = svc_sample,
    .import_log = svc_import_log,
    .sched_switch = svc_sched_switch,
    .sched_waking = svc_sched_waking,
    .track_async = svc_track_async,
    .frame_timeline_begin = svc_frame_timeline_begin,
    .ftrace_event = svc_ftrace_event,
    .android_log = svc_android_log,
    .package = svc_package,
    .thread_lifetime = svc_thread_lifetime,
    .stat_set_indexed = svc_stat_set_indexed,
    .sched_blocked_reason = svc_sched_blocked_reason,
    .remote_clock_sync = svc_remote_clock_sync,
    .budget = svc_budget,
    .machine_stat_set_indexed = svc_machine_stat_set_indexed,
    .machine_metadata_set_int = svc_machine_metadata_set_int,
    .machine_metadata_set_string = svc_machine_metadata_set_string,
    .args_add_callsite = svc_args_add_callsite,
};

/* --- the fake ------------------------------------------------------------ */

const tm_host_services *fake_host_services(void) { return &fake_services; }

void fake_host_set_services_size(fake_host *fake, size_t size) {
  g_assert_cmpuint(size, <=, sizeof fake->services);
  fake->services = fake_services;
  fake->services.struct_size = (uint32_t)size;
  /* What an older host lacks is not there to call: a reader that calls a
   * service past struct_size crashes the test instead of passing. */
  memset((char *)&fake->services + size, 0, sizeof fake->services - size);
}

fake_host *fake_host_new(void) {
  fake_host *fake = g_new0(fake_host, 1);
  tm_host *h = &fake->host;
  h->transcript = g_string_new(NULL);
  h->record_budget = -1;
#define TABLE(array, index)                                            \
  h->array = g_ptr_array_new_with_free_func(g_free);                   \
  h->index = g_hash_table_new(g_str_hash, g_str_equal)
  TABLE(strings, string_ids);
  TABLE(clocks, clock_ids);
  TABLE(machines, machine_ids);
  TABLE(processes, process_ids);
  TABLE(threads, thread_ids);
  TABLE(tracks, track_ids);
  TABLE(stack_rows, stack_row_ids);
#undef TABLE
  h->pending_args = g_string_new(NULL);
  h->arg_sets = g_ptr_array_new_with_free_func(g_free);
  h->stats = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  h->import_logs = g_string_new(NULL);
  h->import_log_values = g_string_new(NULL);
  h->error_offset = -1;
  h->key_names = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  h->flow_names = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  fake->services = fake_services;
  return fake;
}

void fake_host_free(fake_host *fake) {
  if (!fake)
    return;
  tm_host *h = &fake->host;
  g_string_free(h->transcript, TRUE);
  GHashTable *indexes[] = {h->string_ids, h->clock_ids, h->machine_ids,
                           h->process_ids, h->thread_ids, h->track_ids,
                           h->stack_row_ids};
  for (size_t i = 0; i < G_N_ELEMENTS(indexes); i++)
    g_hash_table_destroy(indexes[i]);
  GPtrArray *arrays[] = {h->strings, h->clocks, h->machines, h->processes,
                         h->threads, h->tracks, h->arg_sets, h->stack_rows};
  for (size_t i = 0; i < G_N_ELEMENTS(arrays); i++)
    g_ptr_array_free(arrays[i], TRUE);
  g_string_free(h->pending_args, TRUE);
  g_hash_table_destroy(h->stats);
  g_string_free(h->import_logs, TRUE);
  g_string_free(h->import_log_values, TRUE);
  g_free(h->error);
  g_hash_table_destroy(h->key_names);
  g_hash_table_destroy(h->flow_names);
  g_free(fake->config);
  g_free(fake);
}

void *fake_host_open(fake_host *fake, const tm_reader_descriptor *reader) {
  const char *config = fake->config;
  return reader->open(&fake->services, &fake->host, (const uint8_t *)config,
                      config ? strlen(config) : 0);
}

tm_status fake_host_run(fake_host *fake, const tm_reader_descriptor *reader,
                        const uint8_t *data, size_t len, size_t chunk) {
  void *state = fake_host_open(fake, reader);
  if (!state)
    return TM_ERROR;
  tm_status status = TM_OK;
  for (size_t at = 0; at < len && status == TM_OK; at += chunk)
    status = reader->feed(state, data + at, MIN(chunk, len - at));
  if (status == TM_OK)
    status = reader->finish(state);
  reader->close(state);
  return status;
}

bool fake_host_has_pending_args(const fake_host *fake) {
  return fake->host.pending_args->len > 0;
}

const char *fake_host_borrow_transcript(const fake_host *fake) {
  return fake->host.transcript->str;
}

/* Lines are found with memchr over the known length: under ASan, strchr
 * on a transcript measures all the rest of it at each call. */
size_t fake_host_count_lines(const fake_host *fake, const char *prefix) {
  size_t count = 0;
  const GString *t = fake->host.transcript;
  const char *p = t->str, *end = t->str + t->len;
  size_t n = strlen(prefix);
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (len >= n && memcmp(p, prefix, n) == 0)
      count++;
    p += len + 1;
  }
  return count;
}

const char *fake_host_borrow_import_logs(const fake_host *fake) {
  return fake->host.import_logs->str;
}

const char *fake_host_borrow_import_log_values(const fake_host *fake) {
  return fake->host.import_log_values->str;
}

int64_t fake_host_stat(const fake_host *fake, const char *name) {
  gpointer found = g_hash_table_lookup(fake->host.stats, name);
  return found ? *(int64_t *)found : 0;
}

const char *fake_host_borrow_error(const fake_host *fake, int64_t *offset) {
  if (offset)
    *offset = fake->host.error_offset;
  return fake->host.error;
}

void fake_host_assert_lines(const fake_host *fake, const char *expected) {
  const char *transcript = fake->host.transcript->str;
  g_auto(GStrv) want = g_strsplit(expected, "\n", -1);
  const char *at = transcript;
  for (size_t i = 0; want[i]; i++) {
    if (!*want[i])
      continue;
    /* Find the line as a whole line at or after `at`. */
    const char *found = NULL;
    for (const char *p = at; *p;) {
      const char *nl = strchr(p, '\n');
      size_t len = nl ? (size_t)(nl - p) : strlen(p);
      if (len == strlen(want[i]) && strncmp(p, want[i], len) == 0) {
        found = p;
        at = nl ? nl + 1 : p + len;
        break;
      }
      if (!nl)
        break;
      p = nl + 1;
    }
    if (!found)
      g_error("line %zu of the expectation not found in order: %s\n--- expected\n%s\n"
              "--- transcript\n%s",
              i + 1, want[i], expected, transcript);
  }
}

void fake_host_set_record_budget(fake_host *fake, int64_t bytes) {
  fake->host.record_budget = bytes;
}

void fake_host_set_transcript(fake_host *fake, unsigned flags) { fake->host.flags = flags; }

void fake_host_set_config(fake_host *fake, const char *config) {
  g_free(fake->config);
  fake->config = g_strdup(config);
}

const tm_host_services *fake_host_table(const fake_host *fake) { return &fake->services; }
