/*
 * Unit tests of the Chrome JSON reader plugin (plugins/json): its
 * descriptor and probe, what each event becomes, the shapes of a file and
 * its errors, and two real traces. The reader is loaded with dlopen, as
 * the host loads it, and driven through the fake host
 * (tests/support/json_run.h); every fixture is read whole, in 7-byte chunks
 * and byte by byte, and the three logs must be identical before the log
 * is compared with the expected one.
 *
 * Beside it: test_json_v8_profile.c (legacy V8 CPU profiles),
 * test_json_fast_path.c (the hand-written tokenizer against yajl, and the
 * import logs of dropped events), test_json_number.c and
 * test_json_segmenter.c (two modules on their own).
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "corpus.h"

#include "json_run.h"

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
      "thread t10 of p10\n"
      "process p10\n"
      "process_name p10 = Browser\n"
      "thread t11 of p10\n"
      "thread_name t11 = Main\n"
      "track T1 = thread_execution t11\n"
      "slice_begin T1 private ts=1000 cat=a name=outer thread_ts=500 args={args.x=1}\n"
      "slice_begin T1 private ts=2500 cat=b name=inner\n"
      "slice_end T1 private ts=3000 thread_ts=2000 args={args.y=\"z\"}\n"
      "slice_end T1 private ts=4000 cat=a name=outer\n"
      "slice_complete T1 private ts=5000 name=work thread_ts=4000 thread_dur=750 dur=1250\n"
      "track T2 = legacy_chrome_global_instants key=0 on host\n"
      "slice_complete T2 private ts=6000 name=global dur=0\n"
      "track T3 = chrome_process_instant p10 key=0\n"
      "slice_complete T3 private ts=7000 name=proc dur=0\n"
      "slice_complete T1 private ts=8000 name=mark thread_ts=7000 dur=0\n"
      "slice_complete T1 private ts=9000 name=thr dur=0\n"
      "slice_complete T1 private ts=10000 dur=0\n"
      "process_arg p10 process_sort_index_hint=-5\n"
      "thread_arg t11 thread_sort_index_hint=2\n"
      "status=ok\n");
}

static void test_object_form_reads_metadata_and_skips_the_rest(void) {
  assert_fixture_log(
      "object_form.json",
      "stat json_display_time_unit +1\n"
      "metadata json_metadata.source = \"DevTools\"\n"
      "metadata json_metadata.cpuThrottling = 1\n"
      "metadata json_metadata.ratio = \"2.5\"\n"
      "metadata json_metadata.integral = 3\n"
      "metadata json_metadata.big = \"1e+300\"\n"
      "metadata json_metadata.flag = 1\n"
      "metadata json_metadata.off = 0\n"
      "metadata json_metadata.nested = "
      "\"{\"a\":[1,\"two\",{\"b\":null}],\"c\":\"q\\\"uote\\n\"}\"\n"
      "metadata json_metadata.list = \"[]\"\n"
      "metadata json_metadata.clock-domain = \"LINUX_CLOCK_MONOTONIC\"\n"
      "thread t2 of p1\n"
      "track T1 = thread_execution t2\n"
      "slice_complete T1 private ts=1000 name=a dur=2000 args={args.s=\"v\", args.n=-3, "
      "args.r=0.25, args.b=true, args.o.p.q=1, args.l[0]=10, args.l[1][0]=20, args.l[2].k=\"v\"}\n"
      "slice_complete T1 private ts=3000 name=b dur=1000\n"
      /* systemTraceEvents in Fuchsia's object form: skipped, counted. */
      "stat json_system_trace_events_skipped +1\n"
      "status=ok\n");
}

static void test_args_arrays_are_indexed_past_nine(void) {
  assert_text_log("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1,\"args\":"
                  "{\"l\":[0,1,2,3,4,5,6,7,8,9,10,[11,{\"k\":12}]]}},{}]",
                  "thread t1 of p1\n"
                  "track T1 = thread_execution t1\n"
                  "slice_complete T1 private ts=1000 dur=0 args={args.l[0]=0, args.l[1]=1, "
                  "args.l[2]=2, args.l[3]=3, args.l[4]=4, args.l[5]=5, args.l[6]=6, args.l[7]=7, "
                  "args.l[8]=8, args.l[9]=9, args.l[10]=10, args.l[11][0]=11, args.l[11][1].k=12}\n"
                  "status=ok\n");
}

/* A systemTraceEvents string is systrace text: its lines become the
 * systrace reader's events, on the JSON file's private clock (each event's
 * line names it: "private"), seconds -> ns. Comment and
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
      "thread t8 of p7\n"
      "track T1 = thread_execution t8\n"
      "slice_complete T1 private ts=1000000000 name=json dur=5000\n"
      "thread_name t8 = app\n"
      "slice_begin T1 private ts=1000000000 name=draw\n"
      "stat systrace_parse_failure +1\n"
      "slice_end T1 private ts=1000250000\n"
      "status=ok\n");
}

/* Fuchsia's object form is skipped without error (see object_form.json);
 * any other type, or an object of another "type", is skipped and counted
 * where upstream fails the file: the traceEvents stay. */
static void test_system_trace_of_another_type_is_skipped_and_counted(void) {
  const char *events = "\"traceEvents\":[{\"ph\":\"i\",\"pid\":1,\"tid\":1,"
                       "\"ts\":2,\"name\":\"kept\"}]";
  const char *expected_after = "thread t1 of p1\n"
                               "track T1 = thread_execution t1\n"
                               "slice_complete T1 private ts=2000 name=kept dur=0\n";
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
      "thread t6 of p5\n"
      "track T1 = legacy_async_global_slice name=\"Load\" key=k1 on host\n"
      "slice_begin T1 private ts=1000 cat=net name=Load args={args.url=\"a\"}\n"
      "thread t7 of p5\n"
      "slice_begin T1 private ts=2000 cat=net name=Sub\n"
      "slice_end T1 private ts=3000 cat=net name=Sub\n"
      "slice_end T1 private ts=4000 cat=net name=Load\n"
      "slice_complete T1 private ts=5000 cat=net name=Ping dur=0\n"
      "track T2 = legacy_async_global_slice name=\"Load\" key=k2 on host\n"
      "slice_begin T2 private ts=6000 cat=other name=Load\n"
      "process p5\n"
      "track T3 = legacy_async_process_slice name=\"Frame\" p5 key=k3\n"
      "slice_begin T3 private ts=7000 cat=cc name=Frame\n"
      "thread t8 of p8\n"
      "process p8\n"
      "track T4 = legacy_async_process_slice name=\"Frame\" p8 key=k3\n"
      "slice_begin T4 private ts=8000 cat=cc name=Frame\n"
      "track T5 = legacy_async_global_slice name=\"Job\" key=k4 on host\n"
      "slice_begin T5 private ts=9000 cat=cc name=Job\n"
      "track T6 = legacy_async_global_slice name=\"Num\" key=k5 on host\n"
      "slice_begin T6 private ts=10000 cat=cc name=Num\n"
      "slice_end T6 private ts=11000 cat=cc name=Num\n"
      "status=ok\n");
}

static void test_counters_name_tracks_after_members_and_string_ids(void) {
  assert_fixture_log(
      "counters.json",
      "thread t3 of p3\n"
      "process p3\n"
      "track T1 = json_counter counter name=\"mem heap\" p3 key=0\n"
      "counter T1 private ts=1000 value=10\n"
      "track T2 = json_counter counter name=\"mem gpu\" p3 key=0\n"
      "counter T2 private ts=1000 value=2.5\n"
      "stat json_parser_failure +1\n"
      "stat json_parser_failure +1\n"
      "stat json_parser_failure +1\n"
      "stat json_parser_failure +1\n"
      "track T3 = json_counter counter name=\"mem id: 0xA heap\" p3 key=0\n"
      "counter T3 private ts=2000 value=11\n"
      "counter T1 private ts=3000 value=12.5\n"
      "stat json_parser_failure +1\n"
      "status=ok\n");
}

static void test_flows_v1_and_v2(void) {
  assert_fixture_log(
      "flows.json",
      "thread t1 of p1\n"
      "track T1 = thread_execution t1\n"
      "slice_complete T1 private ts=1000 cat=ipc name=send dur=5000\n"
      "flow T1 private ts=2000 id=f1 OUT enclosing{name=\"msg\", cat=\"ipc\"}\n"
      "thread t2 of p1\n"
      "track T2 = thread_execution t2\n"
      "flow T2 private ts=3000 id=f1 STEP enclosing{name=\"msg\", cat=\"ipc\"}\n"
      "thread t3 of p1\n"
      "track T3 = thread_execution t3\n"
      "flow T3 private ts=4000 id=f1 IN_KEEP next{name=\"msg\", cat=\"ipc\"}\n"
      "flow T3 private ts=5000 id=f1 IN_KEEP enclosing{name=\"msg\", cat=\"ipc\"}\n"
      "flow T1 private ts=6000 id=f2 OUT enclosing{name=\"other\", cat=\"ipc\"}\n"
      "stat flow_invalid_id +1\n"
      "stat flow_invalid_id +1\n"
      "slice_complete T1 private ts=10000 name=v2out dur=1000\n"
      "flow T1 private ts=10000 id=f3 OUT enclosing\n"
      "slice_begin T2 private ts=12000 name=v2step\n"
      "flow T2 private ts=12000 id=f3 STEP enclosing\n"
      "slice_end T2 private ts=13000\n"
      "slice_complete T3 private ts=14000 name=v2in dur=1000\n"
      "flow T3 private ts=14000 id=f3 IN_KEEP enclosing\n"
      "slice_complete T3 private ts=15000 name=v2none dur=1000\n"
      "stat flow_without_direction +1\n"
      "slice_complete T3 private ts=16000 name=v2bad dur=1000\n"
      "stat flow_invalid_id +1\n"
      "track T4 = legacy_async_global_slice name=\"v2async\" key=k1 on host\n"
      "slice_begin T4 private ts=17000 cat=c name=v2async\n"
      "flow T4 private ts=17000 id=f4 OUT enclosing\n"
      "slice_complete T4 private ts=18000 cat=c name=v2n dur=0\n"
      "flow T4 private ts=18000 id=f4 IN_KEEP enclosing\n"
      "status=ok\n");
}

static void test_pids_and_tids_follow_the_coercion_rules(void) {
  assert_fixture_log(
      "pid_tid.json",
      "process p$Renderer\n"
      "process_name p$Renderer = Renderer\n"
      "thread t$Compositor of p$Renderer\n"
      "thread_name t$Compositor = Compositor\n"
      "track T1 = thread_execution t$Compositor\n"
      "slice_complete T1 private ts=1000 name=a dur=1000\n"
      "thread t$Renderer of p$Renderer\n"
      "track T2 = thread_execution t$Renderer\n"
      "slice_complete T2 private ts=2000 name=b dur=1000\n"
      "thread t7 of p7\n"
      "track T3 = thread_execution t7\n"
      "slice_complete T3 private ts=3000 name=c dur=1000\n"
      "slice_complete T3 private ts=4000 name=d dur=1000\n"
      "thread t8 of p7\n"
      "track T4 = thread_execution t8\n"
      "slice_complete T4 private ts=5000 name=e dur=1000\n"
      "thread t0 of p0\n"
      "track T5 = thread_execution t0\n"
      "slice_complete T5 private ts=6000 name=f dur=1000\n"
      "slice_complete T5 private ts=7000 name=g dur=1000\n"
      "thread t5 of p0\n"
      "track T6 = thread_execution t5\n"
      "slice_complete T6 private ts=8000 name=h dur=1000\n"
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
                     "thread t1 of p1\n"
                     "stat json_parser_failure +1\n" /* X without dur */
                     "stat json_parser_failure +1\n" /* b without id */
                     "thread t0 of p0\n"
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
                     "track T1 = thread_execution t1\n"
                     "slice_complete T1 private ts=2000 name=ok dur=1000\n"
                     "status=ok\n");
}

static void test_times_keep_every_digit(void) {
  assert_fixture_log(
      "times.json",
      "thread t1 of p1\n"
      "track T1 = thread_execution t1\n"
      "slice_complete T1 private ts=1001 name=t1 dur=0\n"
      "slice_complete T1 private ts=123456789 name=t2 dur=1\n"
      "slice_complete T1 private ts=2000000 name=t3 dur=1500\n"
      "slice_complete T1 private ts=1500000 name=t4 dur=2\n"
      "slice_complete T1 private ts=-1500 name=t5 dur=1000\n"
      "slice_complete T1 private ts=-1 name=t6 dur=0\n"
      "slice_complete T1 private ts=433087829325000 name=t7 dur=10000\n"
      "slice_complete T1 private ts=9223372036854775000 name=t8 dur=2\n"
      "stat json_tokenizer_failure +1\n"
      "slice_complete T1 private ts=1000 name=t10 dur=123\n"
      "status=ok\n");
}

static void test_commas_and_brackets_inside_strings_are_text(void) {
  assert_fixture_log(
      "strings.json",
      "thread t1 of p1\n"
      "track T1 = thread_execution t1\n"
      "slice_complete T1 private ts=1000 cat=c,} name=a,] dur=1000 args={args.s=\"x,}\",]\", "
      "args.u=\"caf\xc3\xa9\", args.k,]=\"\\\"}\n"
      "slice_complete T1 private ts=2000 name=[,{ dur=0 args={args.list[0]=1, args.list[1]=2}\n"
      "status=ok\n");
}

/* --- shapes and errors ------------------------------------------------------------- */

static void test_unterminated_array_is_legal(void) {
  const char *expected =
      "thread t1 of p1\n"
      "track T1 = thread_execution t1\n"
      "slice_begin T1 private ts=1000 name=open\n"
      "slice_end T1 private ts=2000\n"
      "status=ok\n";
  assert_fixture_log("unterminated.json", expected);
  assert_fixture_log("unterminated_after_comma.json", expected);
  assert_text_log("[", "status=ok\n");
  assert_text_log(" [ {\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}",
                  "thread t1 of p1\n"
                  "track T1 = thread_execution t1\n"
                  "slice_complete T1 private ts=1000 dur=1000\n"
                  "status=ok\n");
}

static void test_array_truncated_mid_string_keeps_earlier_events(void) {
  assert_text_log("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1},"
                  "{\"ph\":\"X\",\"name\":\"trunc",
                  "thread t1 of p1\n"
                  "track T1 = thread_execution t1\n"
                  "slice_complete T1 private ts=1000 dur=0\n"
                  "status=ok\n");
}

static void test_incomplete_object_is_an_error_after_its_events(void) {
  assert_fixture_log("incomplete_object.json",
                     "thread t1 of p1\n"
                     "track T1 = thread_execution t1\n"
                     "slice_complete T1 private ts=1000 name=kept dur=1000\n"
                     "error at 93: JSON trace file is incomplete\n"
                     "status=error\n");
  assert_text_log("{\"traceEvents\":[]", "error at 17: JSON trace file is incomplete\n"
                                         "status=error\n");
  assert_text_log("{\"traceEvents\":[],\"metadata\":{\"a\":\"b",
                  "error at 36: JSON trace file is incomplete\n"
                  "status=error\n");
  assert_text_log("{", "error at 1: JSON trace file is incomplete\n"
                       "status=error\n");
}

static void test_malformed_json_reports_its_offset(void) {
  g_autofree char *path = fixture_path("malformed.json");
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  /* Every chunking reports the same offset (read_all_chunkings). */
  json_run *h = read_all_chunkings(bytes, len);
  const char *prefix =
      "thread t1 of p1\n"
      "track T1 = thread_execution t1\n"
      "slice_complete T1 private ts=1000 name=kept dur=1000\n"
      "error at ";
  g_assert_true(g_str_has_prefix(h->log->str, prefix));
  const char *error = h->log->str + strlen(prefix);
  char *after = NULL;
  gint64 offset = g_ascii_strtoll(error, &after, 10);
  g_assert_cmpstr(after, ==,
                  ": Failed to parse JSON: parse error: after key and value, "
                  "inside map, I expect ',' or '}'\n"
                  "status=error\n");
  /* A comma is missing after "X": yajl points into the offending token,
   * the string "ts" at [token, token + 4). */
  gint64 token = strstr(bytes, "\"X\" \"ts\"") + 4 - bytes;
  g_assert_cmpint(offset, >=, token);
  g_assert_cmpint(offset, <, token + 4);
  json_run_free(h);
}

/* A trailing comma is blanked, not removed: an error after it is reported
 * at the same offset as in the same text with a space in its place. */
static void assert_same_log_as_with_space(const char *text, size_t comma) {
  g_assert_cmpint(text[comma], ==, ',');
  g_autofree char *spaced = g_strdup(text);
  spaced[comma] = ' ';
  json_run *with_comma = read_all_chunkings(text, strlen(text));
  json_run *with_space = read_all_chunkings(spaced, strlen(spaced));
  g_assert_cmpstr(with_comma->log->str, ==, with_space->log->str);
  g_assert_true(g_str_has_suffix(with_comma->log->str, "status=error\n"));
  json_run_free(with_comma);
  json_run_free(with_space);
}

static void test_error_offsets_are_not_moved_by_trailing_commas(void) {
  assert_same_log_as_with_space("[{},\n]\n]", 3);
  assert_same_log_as_with_space("[[1,],\n 2 3]", 3);
  assert_same_log_as_with_space(
      "[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1,}, ] \n x", 33);
  assert_same_log_as_with_space("{\"a\":[1,2,],\"b\":tru}", 9);
  /* And the offsets are the stray token's: "]" at 7 ends at 8. */
  assert_text_log("[{},\n]\n]", "error at 8: Failed to parse JSON: parse error: trailing garbage\n"
                                "status=error\n");
}

static void test_empty_and_non_json_inputs_are_errors(void) {
  assert_text_log("", "error at 0: JSON trace file is empty\n"
                      "status=error\n");
  assert_text_log(" \n\t ", "error at 4: JSON trace file is empty\n"
                            "status=error\n");
  assert_text_log("hello", "error at 0: not a JSON trace: the first non-whitespace byte is neither "
                           "'{' nor '['\n"
                           "status=error\n");
  assert_text_log("\n\n# tracer: nop", "error at 2: not a JSON trace: the first non-whitespace "
                                       "byte is neither '{' nor '['\n"
                                       "status=error\n");
}

static void test_structural_errors_are_reported(void) {
  assert_text_log("{\"traceEvents\":{}}",
                  "error at 16: Failed to parse JSON: traceEvents is not an array\n"
                  "status=error\n");
  assert_text_log("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1}] x",
                  "thread t1 of p1\n"
                  "track T1 = thread_execution t1\n"
                  "slice_complete T1 private ts=1000 dur=0\n"
                  "error at 37: Failed to parse JSON: parse error: trailing garbage\n"
                  "status=error\n");
  assert_text_log("[] tru", "error at 6: Failed to parse JSON: parse error: trailing garbage\n"
                            "status=error\n");
  assert_text_log("[{\"ph\":\"X\"\x01}]", "error at 11: Failed to parse JSON: lexical error: "
                                          "invalid char in json text.\n"
                                          "status=error\n");
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
  fake_host *fake = json_fake_host_new();
  void *state = fake_host_open(fake, reader);
  g_assert_cmpint(reader->feed(state, (const uint8_t *)"x", 1), ==, TM_ERROR);
  g_assert_cmpint(reader->feed(state, (const uint8_t *)"[]", 2), ==, TM_ERROR);
  g_assert_cmpint(reader->finish(state), ==, TM_ERROR);
  reader->close(state);
  g_assert_cmpuint(fake_host_count_lines(fake, "error at "), ==, 1);
  fake_host_free(fake);
}

/* --- real traces ---------------------------------------------------------------------- */

static json_run *read_real_trace(const char *name, size_t chunk) {
  gsize len = 0;
  g_autofree char *bytes = corpus_real_read("json", name, &len);
  json_run *whole = read_bytes(bytes, len, len);
  json_run *chunked = read_bytes(bytes, len, chunk);
  g_assert_cmpstr(chunked->log->str, ==, whole->log->str);
  json_run_free(chunked);
  return whole;
}

static void assert_process_names(json_run *h, const char *const *names,
                                 guint n) {
  g_autoptr(GPtrArray) given = process_names(h);
  g_assert_cmpuint(given->len, ==, n);
  for (guint i = 0; i < n; i++) {
    gboolean found = FALSE;
    for (guint j = 0; j < given->len; j++)
      found |= g_str_equal(names[i], g_ptr_array_index(given, j));
    g_assert_true(found);
  }
}

/* README: object form, 3108 events: X 2456, b/e 234/234, I 97, M 28,
 * P 17, R 13, s/f 13/13, O 2; processes Browser, GPU Process, Renderer. */
static void test_chrome116_devtools_trace_matches_its_description(void) {
  json_run *h = read_real_trace("speedscope-chrome116-devtools-trace.json",
                                 4093);
  g_assert_true(g_str_has_suffix(h->log->str, "status=ok\n"));
  g_assert_cmpint(count_lines(h, "slice_complete ", NULL) +
                      stat_total(h, "json_parser_failure"),
                  ==,
                  2456 + 97 + 13);
  g_assert_cmpint(count_on_tracks(h, "slice_begin", "legacy_async_"), ==, 234);
  g_assert_cmpint(count_on_tracks(h, "slice_end", "legacy_async_"), ==, 234);
  g_assert_cmpint(count_lines(h, "slice_begin ", NULL), ==, 234); /* no B events in this file */
  g_assert_cmpint(count_lines(h, "flow ", " OUT "), ==, 13);
  g_assert_cmpint(count_lines(h, "flow ", " IN_KEEP "), ==, 13);
  g_assert_cmpint(count_lines(h, "flow ", " STEP "), ==, 0);
  g_assert_cmpint(count_lines(h, "counter ", NULL), ==, 0);
  g_assert_cmpint(stat_total(h, "json_tokenizer_failure"), ==, 0);
  const char *const names[] = {"Browser", "GPU Process", "Renderer"};
  assert_process_names(h, names, G_N_ELEMENTS(names));
  g_assert_nonnull(strstr(h->log->str, "metadata json_metadata.source = "
                                       "\"DevTools\"\n"));
  g_assert_nonnull(strstr(h->log->str, "metadata json_metadata.hardware"
                                       "Concurrency = 16\n"));
  json_run_free(h);
}

/* README: bare array, 2613 events: X 1988, B/E 190/190, I 87, M 70,
 * P 43, R 15, 5 flow-v2 events; processes Browser, GPU Process, Renderer. */
static void test_chrome70_worker_trace_matches_its_description(void) {
  json_run *h = read_real_trace("speedscope-chrome70-worker.json", 1);
  g_assert_true(g_str_has_suffix(h->log->str, "status=ok\n"));
  g_assert_cmpint(count_lines(h, "slice_complete ", NULL) +
                      stat_total(h, "json_parser_failure"),
                  ==,
                  1988 + 87 + 15);
  g_assert_cmpint(count_lines(h, "slice_begin ", NULL), ==, 190);
  g_assert_cmpint(count_lines(h, "slice_end ", NULL), ==, 190);
  g_assert_cmpint(count_on_tracks(h, "slice_begin", "legacy_async_"), ==, 0);
  g_assert_cmpint(count_lines(h, "flow ", " OUT ") + count_lines(h, "flow ", " STEP ") +
                      count_lines(h, "flow ", " IN_KEEP "),
                  ==, 5);
  g_assert_cmpint(stat_total(h, "json_tokenizer_failure"), ==, 0);
  const char *const names[] = {"Browser", "GPU Process", "Renderer"};
  assert_process_names(h, names, G_N_ELEMENTS(names));
  json_run_free(h);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  if (!json_run_load_readers(false))
    return 1;

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
  g_test_add_func("/json-reader/real-traces/chrome116-devtools-trace",
                  test_chrome116_devtools_trace_matches_its_description);
  g_test_add_func("/json-reader/real-traces/chrome70-worker-trace",
                  test_chrome70_worker_trace_matches_its_description);

  int result = g_test_run();
  json_run_unload_readers();
  return result;
}
