/*
 * Unit tests of the Chrome JSON reader plugin (plugins/json): its
 * descriptor and probe, what each event becomes, the shapes of a file and
 * its errors, and two real traces. The reader is loaded with dlopen, as
 * the host loads it, and driven through the fake host of
 * tests/support/json_host.h; every fixture is read whole, in 7-byte chunks
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

#include "json_host.h"

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
  json_host *h = read_all_chunkings(bytes, len);
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
  json_host_free(h);
}

/* A trailing comma is blanked, not removed: an error after it is reported
 * at the same offset as in the same text with a space in its place. */
static void assert_same_log_as_with_space(const char *text, size_t comma) {
  g_assert_cmpint(text[comma], ==, ',');
  g_autofree char *spaced = g_strdup(text);
  spaced[comma] = ' ';
  json_host *with_comma = read_all_chunkings(text, strlen(text));
  json_host *with_space = read_all_chunkings(spaced, strlen(spaced));
  g_assert_cmpstr(with_comma->log->str, ==, with_space->log->str);
  g_assert_true(g_str_has_suffix(with_comma->log->str, "status=error\n"));
  json_host_free(with_comma);
  json_host_free(with_space);
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
  json_host *h = json_host_new();
  void *state = reader->open(&services, (tm_host *)h, NULL, 0);
  g_assert_cmpint(reader->feed(state, (const uint8_t *)"x", 1), ==, TM_ERROR);
  g_assert_cmpint(reader->feed(state, (const uint8_t *)"[]", 2), ==, TM_ERROR);
  g_assert_cmpint(reader->finish(state), ==, TM_ERROR);
  reader->close(state);
  g_assert_cmpint(h->errors, ==, 1);
  json_host_free(h);
}

/* --- real traces ---------------------------------------------------------------------- */

static json_host *read_real_trace(const char *name, size_t chunk) {
  gsize len = 0;
  g_autofree char *bytes = corpus_real_read("json", name, &len);
  json_host *whole = read_bytes(bytes, len, len);
  json_host *chunked = read_bytes(bytes, len, chunk);
  g_assert_cmpstr(chunked->log->str, ==, whole->log->str);
  json_host_free(chunked);
  return whole;
}

static void assert_process_names(json_host *h, const char *const *names,
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
  json_host *h = read_real_trace("speedscope-chrome116-devtools-trace.json",
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
  json_host_free(h);
}

/* README: bare array, 2613 events: X 1988, B/E 190/190, I 87, M 70,
 * P 43, R 15, 5 flow-v2 events; processes Browser, GPU Process, Renderer. */
static void test_chrome70_worker_trace_matches_its_description(void) {
  json_host *h = read_real_trace("speedscope-chrome70-worker.json", 1);
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
  json_host_free(h);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  if (!json_host_load_readers(false))
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
  json_host_unload_readers();
  return result;
}
