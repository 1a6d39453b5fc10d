/*
 * The systrace reader's parts without the host: the ftrace line grammar,
 * the wrapper state machine, and the reader's streaming (chunks of any
 * size, lines cut anywhere) through a counting stand-in for the host.
 */
#include <glib.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "corpus.h"
#include "systrace_line.h"
#include "systrace_wrapper.h"

const tm_reader_descriptor *tracemerge_reader_entry(void);

/* --- the line grammar ------------------------------------------------------ */

static systrace_line parse_ok(const char *text) {
  systrace_line l;
  g_assert_true(systrace_line_parse(text, strlen(text), &l));
  return l;
}

static void assert_text(systrace_text t, const char *expected) {
  g_assert_cmpmem(t.p, t.len, expected, strlen(expected));
}

static void test_line_with_tgid_and_flags(void) {
  systrace_line l = parse_ok(
      "  surfaceflinger-601   ( 601) [002] d..2  1234.567890: sched_switch: prev_comm=a  ");
  assert_text(l.task, "surfaceflinger");
  g_assert_cmpint(l.pid, ==, 601);
  g_assert_cmpint(l.tgid, ==, 601);
  g_assert_cmpuint(l.cpu, ==, 2);
  g_assert_cmpint(l.ts_ns, ==, 1234567890000);
  assert_text(l.event, "sched_switch");
  assert_text(l.payload, "prev_comm=a");
}

static void test_line_with_unknown_tgid(void) {
  systrace_line l = parse_ok("<...>-19161 (-----) [001] ...1 683201.354908: tracing_mark_write: E");
  assert_text(l.task, "<...>");
  g_assert_cmpint(l.pid, ==, 19161);
  g_assert_cmpint(l.tgid, ==, SYSTRACE_NO_TGID);
  g_assert_cmpint(l.ts_ns, ==, 683201354908000);
}

static void test_line_without_flags_or_tgid(void) {
  systrace_line l = parse_ok("          <idle>-0     [002]    76.211513: sched_wakeup:          comm=sh");
  assert_text(l.task, "<idle>");
  g_assert_cmpint(l.pid, ==, 0);
  g_assert_cmpint(l.tgid, ==, SYSTRACE_NO_TGID);
  assert_text(l.payload, "comm=sh");
}

static void test_task_may_hold_dashes_and_spaces(void) {
  systrace_line l = parse_ok("Binder-a 2-x-77 [000] 0.000001: 0: C|1|n|2");
  assert_text(l.task, "Binder-a 2-x");
  g_assert_cmpint(l.pid, ==, 77);
  assert_text(l.event, "0");
  g_assert_cmpint(l.ts_ns, ==, 1000);
}

static void test_fraction_digits_beyond_ns_are_truncated(void) {
  systrace_line l = parse_ok("a-1 [000] 1.1234567899: e: x");
  g_assert_cmpint(l.ts_ns, ==, 1123456789);
}

static void test_lines_off_the_grammar_fail(void) {
  static const char *const bad[] = {
      "",
      "no pid here [000] 1.0: e: x",
      "a-1 [000] 1.0 e: x",          /* no ':' after the timestamp */
      "a-1 [000] 1: e: x",           /* no fraction */
      "a-1 [x] 1.0: e: x",           /* cpu not a number */
      "a-1 (12 [000] 1.0: e: x",     /* unclosed tgid */
      "a-1 [000] 1.0: e x",          /* event without ':' */
      "a-1 [000] 99999999999.0: e: x", /* seconds overflow int64 ns */
      "a-99999999999999999999 [000] 1.0: e: x",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    systrace_line l;
    if (systrace_line_parse(bad[i], strlen(bad[i]), &l))
      g_error("parsed although off the grammar: \"%s\"", bad[i]);
  }
}

static void test_int64_parse(void) {
  int64_t v = 0;
  g_assert_true(systrace_parse_int64((systrace_text){"-42", 3}, &v));
  g_assert_cmpint(v, ==, -42);
  g_assert_false(systrace_parse_int64((systrace_text){"2.5", 3}, &v));
  g_assert_false(systrace_parse_int64((systrace_text){"", 0}, &v));
  g_assert_false(systrace_parse_int64((systrace_text){"-", 1}, &v));
}

/* --- the wrapper --------------------------------------------------------------- */

/* Runs the lines of `text` through a wrapper; returns the data lines,
 * each followed by "\n". */
static char *data_lines(const char *text) {
  systrace_wrapper w = {0};
  GString *out = g_string_new(NULL);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (size_t i = 0; lines[i]; i++) {
    size_t len = strlen(lines[i]);
    if (systrace_wrapper_line(&w, lines[i], &len) == LINE_DATA) {
      g_string_append_len(out, lines[i], (gssize)len);
      g_string_append_c(out, '\n');
    }
  }
  return g_string_free(out, FALSE);
}

static void test_wrapper_plain_headers_are_skipped(void) {
  g_autofree char *out = data_lines(
      "\nversion = 6\ncpus=6\n# tracer: nop\nA\n\n#x\ncpus=6\nB");
  /* A header-looking line after data is data (and will fail to parse). */
  g_assert_cmpstr(out, ==, "A\ncpus=6\nB\n");
}

static void test_wrapper_html_blocks(void) {
  g_autofree char *out = data_lines(
      "<html>\n<script class=\"trace-data\" type=\"application/text\">\n"
      "PROCESS DUMP\nx\n</script>\n"
      "<script class=\"trace-data\" type=\"application/text\">\n"
      "# TASK-PID\nA\nB  </script>\nC\n"
      "<script class=\"trace-data\">\n# TASK-PID\nD\n</script>\n"
      "<script class=\"trace-data\">\n{\"json\": 1}\n</script>\n"
      "<script class=\"trace-data\">\n# tracer: nop\nE\n</script>");
  /* Every ftrace block is read (issue 11), also one without the TASK-PID
   * legend after '#' header lines (E); a JSON block is not; C lies between
   * blocks. */
  g_assert_cmpstr(out, ==, "A\nB  \nD\nE\n");
}

static void test_wrapper_legacy_string_unescapes(void) {
  g_autofree char *out = data_lines(
      "<!DOCTYPE html>\nvar linuxPerfData = \"\\\n# tracer\\n\\\n"
      "A \\\"q\\\"\\n\\\nB\\n\";\nC");
  g_assert_cmpstr(out, ==, "A \"q\"\nB\n");
}

/* --- streaming through a counting host ------------------------------------------ */

typedef struct counting_host {
  GHashTable *stats; /* name -> count */
  GHashTable *strings;
  size_t switches, wakings, counters, begins, ends, completes;
  char *error;
  int64_t error_offset;
  GPtrArray *logs; /* "stat@offset: key=value", one per import_log call */
} counting_host;

#define HOST(h) ((counting_host *)(void *)(h))

static tm_str_id c_intern(tm_host *h, const char *s, size_t len) {
  g_autofree char *key = g_strndup(s, len);
  gpointer id = g_hash_table_lookup(HOST(h)->strings, key);
  if (!id) {
    id = GUINT_TO_POINTER(g_hash_table_size(HOST(h)->strings) + 1);
    g_hash_table_insert(HOST(h)->strings, g_steal_pointer(&key), id);
  }
  return GPOINTER_TO_UINT(id);
}
static tm_clock_ref c_clock(tm_host *h, tm_machine_ref m, uint32_t id) {
  (void)h, (void)m;
  return id;
}
static bool c_claim(tm_host *h, tm_clock_ref c) {
  (void)h;
  return c == TM_CLOCK_MONOTONIC;
}
static tm_machine_ref c_machine(tm_host *h) {
  (void)h;
  return 1;
}
static tm_process_ref c_process(tm_host *h, tm_machine_ref m, int64_t pid) {
  (void)h, (void)m;
  return (tm_process_ref)pid + 2;
}
static tm_thread_ref c_thread(tm_host *h, tm_machine_ref m, int64_t pid, int64_t tid) {
  (void)h, (void)m, (void)pid;
  return (tm_thread_ref)tid + 2;
}
static void c_process_name(tm_host *h, tm_process_ref p, tm_str_id n) {
  (void)h, (void)p, (void)n;
}
static void c_thread_name(tm_host *h, tm_thread_ref t, tm_str_id n) {
  (void)h, (void)t, (void)n;
}
static tm_track_ref c_track_thread(tm_host *h, tm_thread_ref t) {
  (void)h;
  return t;
}
/* A cpu track's ref encodes its cpu and name, any other its name. */
static tm_track_ref c_track(tm_host *h, const tm_track_desc *d) {
  (void)h;
  if (d->has_cpu)
    return d->cpu * 2 + 1 + (uint32_t)(d->name & 1);
  return d->name + 1;
}
static void c_args_add(tm_host *h, tm_str_id k, tm_arg_value v) {
  (void)h, (void)k, (void)v;
}
static tm_args_ref c_args_commit(tm_host *h) {
  (void)h;
  return TM_NO_ARGS;
}
static void c_begin(tm_host *h, const tm_slice_fields *f) {
  (void)f;
  HOST(h)->begins++;
}
static void c_end(tm_host *h, const tm_slice_fields *f) {
  (void)f;
  HOST(h)->ends++;
}
static void c_complete(tm_host *h, const tm_slice_fields *f, int64_t dur) {
  (void)f, (void)dur;
  HOST(h)->completes++;
}
static void c_counter(tm_host *h, tm_track_ref t, tm_clock_ref c, int64_t ts,
                      double v, tm_args_ref a) {
  (void)t, (void)c, (void)ts, (void)v, (void)a;
  HOST(h)->counters++;
}
static void c_stat(tm_host *h, const char *name, int64_t delta) {
  GHashTable *stats = HOST(h)->stats;
  int64_t value = GPOINTER_TO_SIZE(g_hash_table_lookup(stats, name)) + delta;
  g_hash_table_replace(stats, g_strdup(name), GSIZE_TO_POINTER((gsize)value));
}
/* As the host: counts the stat, and keeps what the call carried. */
static void c_import_log(tm_host *h, const char *name, int64_t offset,
                         const tm_import_log_arg *args, size_t n_args) {
  c_stat(h, name, 1);
  GString *entry = g_string_new(NULL);
  g_string_printf(entry, "%s@%" G_GINT64_FORMAT ":", name, offset);
  for (size_t i = 0; i < n_args; i++) {
    g_assert_cmpint(args[i].type, ==, TM_ARG_STRING);
    g_string_append_printf(entry, " %s=%.*s", args[i].key, (int)args[i].string_len,
                           args[i].string);
  }
  g_ptr_array_add(HOST(h)->logs, g_string_free(entry, FALSE));
}
static void c_error(tm_host *h, int64_t offset, const char *message) {
  if (HOST(h)->error)
    return;
  HOST(h)->error = g_strdup(message);
  HOST(h)->error_offset = offset;
}
/* Services the systrace reader never calls (the ABI wants none NULL). */
static tm_clock_ref c_clock_private(tm_host *h) {
  (void)h;
  g_assert_not_reached();
}
static tm_clock_ref c_clock_sequence(tm_host *h, tm_machine_ref m, uint32_t seq,
                                     uint32_t id) {
  (void)h, (void)m, (void)seq, (void)id;
  g_assert_not_reached();
}
static bool c_snapshot(tm_host *h, const tm_clock_ref *c, const int64_t *v,
                       size_t n) {
  (void)h, (void)c, (void)v, (void)n;
  g_assert_not_reached();
}
static bool c_remote_sync(tm_host *h) {
  (void)h;
  g_assert_not_reached();
}
static tm_machine_ref c_machine_embedded(tm_host *h, uint32_t raw) {
  (void)h, (void)raw;
  g_assert_not_reached();
}
static void c_machine_info(tm_host *h, tm_machine_ref m, const char *column,
                           tm_arg_value v) {
  (void)h, (void)m, (void)column, (void)v;
  g_assert_not_reached();
}
static void c_process_cmdline(tm_host *h, tm_process_ref p, tm_str_id c) {
  (void)h, (void)p, (void)c;
  g_assert_not_reached();
}
static void c_process_uid(tm_host *h, tm_process_ref p, int64_t uid) {
  (void)h, (void)p, (void)uid;
  g_assert_not_reached();
}
static void c_track_parent(tm_host *h, tm_track_ref t, tm_track_ref p) {
  (void)h, (void)t, (void)p;
  g_assert_not_reached();
}
static void c_track_arg(tm_host *h, tm_track_ref t, tm_str_id k, tm_arg_value v) {
  (void)h, (void)t, (void)k, (void)v;
  g_assert_not_reached();
}
static void c_flow(tm_host *h, tm_track_ref t, tm_clock_ref c, int64_t ts,
                   uint64_t id, tm_flow_direction d, tm_flow_binding b,
                   tm_args_ref a) {
  (void)h, (void)t, (void)c, (void)ts, (void)id, (void)d, (void)b, (void)a;
  g_assert_not_reached();
}
static tm_mapping_ref c_mapping(tm_host *h, tm_str_id n, tm_str_id b,
                                uint64_t s, uint64_t e, uint64_t o, uint64_t l) {
  (void)h, (void)n, (void)b, (void)s, (void)e, (void)o, (void)l;
  g_assert_not_reached();
}
static tm_frame_ref c_frame(tm_host *h, tm_str_id n, tm_mapping_ref m,
                            uint64_t pc) {
  (void)h, (void)n, (void)m, (void)pc;
  g_assert_not_reached();
}
static tm_callsite_ref c_callsite(tm_host *h, tm_callsite_ref p, tm_frame_ref f) {
  (void)h, (void)p, (void)f;
  g_assert_not_reached();
}
static void c_sample(tm_host *h, tm_clock_ref c, int64_t ts, tm_thread_ref t,
                     tm_callsite_ref s, int32_t cpu) {
  (void)h, (void)c, (void)ts, (void)t, (void)s, (void)cpu;
  g_assert_not_reached();
}
static void c_metadata_int(tm_host *h, const char *n, int64_t v) {
  (void)h, (void)n, (void)v;
  g_assert_not_reached();
}
static void c_metadata_string(tm_host *h, const char *n, tm_str_id v) {
  (void)h, (void)n, (void)v;
  g_assert_not_reached();
}
/* Services it calls whose effect the counting host does not keep. */
static void c_process_parent(tm_host *h, tm_process_ref p, tm_process_ref q) {
  (void)h, (void)p, (void)q;
}
static void c_process_arg(tm_host *h, tm_process_ref p, tm_str_id k,
                          tm_arg_value v) {
  (void)h, (void)p, (void)k, (void)v;
}
static void c_thread_arg(tm_host *h, tm_thread_ref t, tm_str_id k,
                         tm_arg_value v) {
  (void)h, (void)t, (void)k, (void)v;
}
static void c_switch(tm_host *h, tm_clock_ref c, int64_t ts, tm_machine_ref m,
                     uint32_t cpu, tm_thread_ref prev, tm_str_id state,
                     tm_thread_ref next, int32_t prio) {
  (void)c, (void)ts, (void)m, (void)cpu, (void)prev, (void)state, (void)next, (void)prio;
  HOST(h)->switches++;
}
static void c_waking(tm_host *h, tm_clock_ref c, int64_t ts, tm_machine_ref m,
                     uint32_t cpu, tm_thread_ref t, tm_thread_ref w) {
  (void)c, (void)ts, (void)m, (void)cpu, (void)t, (void)w;
  HOST(h)->wakings++;
}

static const tm_host_services counting_services = {
    .struct_size = sizeof(tm_host_services),
    .abi_version = TM_READER_ABI_VERSION,
    .intern_string = c_intern,
    .clock_builtin = c_clock,
    .claim_trace_time = c_claim,
    .machine_default = c_machine,
    .process = c_process,
    .thread = c_thread,
    .process_set_name = c_process_name,
    .thread_set_name = c_thread_name,
    .track_thread = c_track_thread,
    .track_intern = c_track,
    .args_add = c_args_add,
    .args_commit = c_args_commit,
    .slice_begin = c_begin,
    .slice_end = c_end,
    .slice_complete = c_complete,
    .counter = c_counter,
    .stat_add = c_stat,
    .report_error = c_error,
    .clock_private = c_clock_private,
    .clock_sequence = c_clock_sequence,
    .add_clock_snapshot = c_snapshot,
    .remote_clock_sync = c_remote_sync,
    .machine_embedded = c_machine_embedded,
    .machine_set_info = c_machine_info,
    .process_add_arg = c_process_arg,
    .thread_add_arg = c_thread_arg,
    .process_set_cmdline = c_process_cmdline,
    .process_set_parent = c_process_parent,
    .process_set_uid = c_process_uid,
    .track_set_parent = c_track_parent,
    .track_add_source_arg = c_track_arg,
    .flow = c_flow,
    .mapping = c_mapping,
    .frame = c_frame,
    .callsite = c_callsite,
    .sample = c_sample,
    .metadata_set_int = c_metadata_int,
    .metadata_set_string = c_metadata_string,
    .sched_switch = c_switch,
    .sched_waking = c_waking,
    .import_log = c_import_log,
};

static void counting_host_init(counting_host *h) {
  memset(h, 0, sizeof *h);
  h->stats = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  h->strings = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  h->logs = g_ptr_array_new_with_free_func(g_free);
}

static void counting_host_clear(counting_host *h) {
  g_hash_table_destroy(h->stats);
  g_hash_table_destroy(h->strings);
  g_ptr_array_free(h->logs, TRUE);
  g_free(h->error);
}

static int64_t stat_of(const counting_host *h, const char *name) {
  return (int64_t)GPOINTER_TO_SIZE(g_hash_table_lookup(h->stats, name));
}

static tm_status run_reader_with(const tm_host_services *services, counting_host *h,
                                 const char *data, size_t len, size_t chunk) {
  const tm_reader_descriptor *d = tracemerge_reader_entry();
  void *state = d->open(services, (tm_host *)(void *)h, NULL, 0);
  g_assert_nonnull(state);
  tm_status status = TM_OK;
  for (size_t at = 0; at < len && status == TM_OK; at += chunk)
    status = d->feed(state, (const uint8_t *)data + at, MIN(chunk, len - at));
  if (status == TM_OK)
    status = d->finish(state);
  d->close(state);
  return status;
}

static tm_status run_reader(counting_host *h, const char *data, size_t len,
                            size_t chunk) {
  return run_reader_with(&counting_services, h, data, len, chunk);
}

static void test_any_chunking_reads_the_same_events(void) {
  /* lisa's trace-cmd report: grep -c ' sched_switch: ' = 1856,
   * ' sched_wakeup: ' = 1068, ' print: ' = 14 (none an atrace payload). */
  gsize len = 0;
  g_autofree char *data = corpus_real_read("systrace", "lisa-trace-cmd-report.txt", &len);
  static const size_t chunks[] = {1, 7, 4096, 1 << 30};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    counting_host h;
    counting_host_init(&h);
    g_assert_cmpint(run_reader(&h, data, len, chunks[i]), ==, TM_OK);
    g_assert_cmpuint(h.switches, ==, 1856);
    g_assert_cmpuint(h.wakings, ==, 1068);
    g_assert_cmpint(stat_of(&h, "systrace_parse_failure"), ==, 14);
    g_assert_null(h.error);
    counting_host_clear(&h);
  }
}

static void test_binary_input_reports_the_first_bad_offset(void) {
  static const char data[] = "# tracer: nop\n\x01\x02\x03\n\xff\xfe\n";
  counting_host h;
  counting_host_init(&h);
  g_assert_cmpint(run_reader(&h, data, sizeof data - 1, 5), ==, TM_ERROR);
  g_assert_nonnull(h.error);
  g_assert_cmpint(h.error_offset, ==, 14);
  g_assert_cmpint(stat_of(&h, "systrace_parse_failure"), ==, 2);
  counting_host_clear(&h);
}

static void test_malformed_kernel_events_are_counted(void) {
  /* Each line parses, but its payload lacks what its event needs. */
  static const char data[] =
      "# tracer: nop\n"
      "a-1 [000] 1.0: sched_switch: prev_comm=a prev_pid=1 prev_state=S next_comm=b\n"
      "a-1 [5000] 1.0: sched_switch: prev_comm=a prev_pid=1 prev_prio=1 prev_state=S next_comm=b next_pid=2 next_prio=1\n"
      "a-1 [000] 1.0: sched_waking: comm=b pid=2 prio=120 target_cpu=99999\n"
      "a-1 [000] 1.0: sched_wakeup: comm=b prio=120 target_cpu=0\n"
      "a-1 [000] 1.0: cpu_idle: state=1\n"
      "a-1 [000] 1.0: cpu_frequency: state=x cpu_id=0\n"
      "a-1 [000] 1.0: tracing_mark_write: B|x|name\n"
      "a-1 [000] 1.0: tracing_mark_write: S|1|name\n"
      "a-1 [000] 1.0: tracing_mark_write: E|y\n"
      "a-1 [000] 1.0: tracing_mark_write: Bfoo\n"
      "a-1 [000] 1.0: some_other_event: ignored=1\n";
  counting_host h;
  counting_host_init(&h);
  g_assert_cmpint(run_reader(&h, data, sizeof data - 1, 64), ==, TM_OK);
  g_assert_cmpint(stat_of(&h, "systrace_parse_failure"), ==, 10);
  g_assert_cmpuint(h.switches + h.wakings + h.counters + h.begins + h.ends, ==, 0);
  counting_host_clear(&h);
}

/* A line that is not read is logged with the offset of its first byte
 * and its text, however the chunks cut it; lines that parse are not. */
static void test_bad_lines_are_logged_with_offset_and_text(void) {
  static const char data[] =
      "# tracer: nop\n"                                              /* 0 */
      "a-1 [000] 1.0: tracing_mark_write: B|1|ok\n"                  /* 14 */
      "a-1 [000] 1.0: cpu_idle: state=1\n"                           /* 56 */
      "not an ftrace line\n"                                         /* 89 */
      "a-1 [000] 1.0: tracing_mark_write: E|1\n";                    /* 108 */
  static const size_t chunks[] = {1, 5, 1 << 20};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    counting_host h;
    counting_host_init(&h);
    g_assert_cmpint(run_reader(&h, data, sizeof data - 1, chunks[i]), ==, TM_OK);
    g_assert_cmpuint(h.logs->len, ==, 2);
    g_assert_cmpstr(g_ptr_array_index(h.logs, 0), ==,
                    "systrace_parse_failure@56: line=a-1 [000] 1.0: cpu_idle: state=1");
    g_assert_cmpstr(g_ptr_array_index(h.logs, 1), ==,
                    "systrace_parse_failure@89: line=not an ftrace line");
    g_assert_cmpint(stat_of(&h, "systrace_parse_failure"), ==, 2);
    g_assert_cmpuint(h.begins + h.ends, ==, 2);
    counting_host_clear(&h);
  }
}

static void test_probe(void) {
  const tm_reader_descriptor *d = tracemerge_reader_entry();
  g_assert_true(d->flags & TM_READER_PID0_IS_IDLE);
  g_assert_false(d->flags & TM_READER_CLOCKLESS);
  static const char *const yes[] = {
      "# tracer: nop\n", "<!DOCTYPE html>\n<html>", "<html>", "TRACE:\n# tracer",
      "cpus=4\n", " app-1 [000] 1.0: e: x", "version = 6\ncpus=6\n",
  };
  static const char *const no[] = {
      "{\"traceEvents\": []}", "\x0a\x05", "version = 6\nfoo", "TRACE:\n\x78\x9c\x01",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(yes); i++)
    g_assert_cmpint(d->probe((const uint8_t *)yes[i], strlen(yes[i]), NULL), >, 0);
  for (size_t i = 0; i < G_N_ELEMENTS(no); i++)
    g_assert_cmpint(d->probe((const uint8_t *)no[i], strlen(no[i]), NULL), ==, 0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/systrace/line/with-tgid-and-flags", test_line_with_tgid_and_flags);
  g_test_add_func("/systrace/line/with-unknown-tgid", test_line_with_unknown_tgid);
  g_test_add_func("/systrace/line/without-flags-or-tgid", test_line_without_flags_or_tgid);
  g_test_add_func("/systrace/line/task-may-hold-dashes-and-spaces",
                  test_task_may_hold_dashes_and_spaces);
  g_test_add_func("/systrace/line/fraction-digits-beyond-ns-are-truncated",
                  test_fraction_digits_beyond_ns_are_truncated);
  g_test_add_func("/systrace/line/lines-off-the-grammar-fail", test_lines_off_the_grammar_fail);
  g_test_add_func("/systrace/line/int64-parse", test_int64_parse);
  g_test_add_func("/systrace/wrapper/plain-headers-are-skipped",
                  test_wrapper_plain_headers_are_skipped);
  g_test_add_func("/systrace/wrapper/html-reads-the-first-ftrace-block",
                  test_wrapper_html_blocks);
  g_test_add_func("/systrace/wrapper/legacy-string-is-unescaped",
                  test_wrapper_legacy_string_unescapes);
  g_test_add_func("/systrace/reader/any-chunking-reads-the-same-events",
                  test_any_chunking_reads_the_same_events);
  g_test_add_func("/systrace/reader/binary-input-reports-the-first-bad-offset",
                  test_binary_input_reports_the_first_bad_offset);
  g_test_add_func("/systrace/reader/malformed-kernel-events-are-counted",
                  test_malformed_kernel_events_are_counted);
  g_test_add_func("/systrace/reader/bad-lines-are-logged-with-offset-and-text",
                  test_bad_lines_are_logged_with_offset_and_text);
  g_test_add_func("/systrace/reader/probe", test_probe);
  return g_test_run();
}
