/*
 * The recording library's TrackEvent features (include/tracemerge/record.h),
 * each written by a session and read back twice: through tracemerge's own
 * proto reader (the CLI, exact SQL answers) and at the protobuf level
 * (protoc --decode against proto/recorded_trace.proto). Events use
 * explicit BOOTTIME timestamps, and BOOTTIME is the trace's clock, so every
 * expected ts below is the one written; expected rows are derived in the
 * comments from the calls that make them.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "e2e_support.h"
#include "record_support.h"

static const char *const track_event_config =
    "buffers { size_kb: 1024 fill_policy: DISCARD }\n"
    "data_sources { config { name: \"track_event\" } }\n";

static tmr_category cat_app = TMR_CATEGORY("app", NULL);

static int64_t my_tid(void) {
  return (int64_t)syscall(SYS_gettid);
}

/* --- slices ------------------------------------------------------------------- */

static void write_slices(tmr_session *s, void *user) {
  (void)s;
  (void)user;
  tmr_writer *w = tmr_this_thread();
  g_assert_nonnull(w);
  tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_app, "outer", 1000);
  tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_app, "inner", 1100);
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, 1300);
  tmr_complete(w, TMR_THREAD_TRACK, &cat_app, "done", 1400, 50, NULL);
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, 1500);
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "mark", 1600);
  tmr_slice_begin(w, TMR_THREAD_TRACK, NULL, "no category", 1700);
  tmr_slice_end(w, TMR_THREAD_TRACK, NULL, 1800);
}

/* outer [1000, 1500) holds inner [1100, 1300) and the complete slice
 * done [1400, 1450); mark is an instant; the last slice has no category.
 * All on the writer's thread track: this thread's. */
static void test_slices_nest_on_the_thread_track(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path =
      record_trace(dir, "slices.pftrace", track_event_config, write_slices, NULL);
  g_autofree char *sql = g_strdup_printf(
      "SELECT s.ts, s.dur, s.depth, s.name, s.category, t.tid = %" PRId64 " AS mine "
      "FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid) "
      "ORDER BY s.ts",
      my_tid());
  g_autofree char *rows = record_query(path, sql);
  e2e_assert_text(rows, "\"ts\",\"dur\",\"depth\",\"name\",\"category\",\"mine\"\n"
                        "1000,500,0,\"outer\",\"app\",1\n"
                        "1100,200,1,\"inner\",\"app\",1\n"
                        "1400,50,1,\"done\",\"app\",1\n"
                        "1600,0,0,\"mark\",\"app\",1\n"
                        "1700,100,0,\"no category\",\"[NULL]\",1\n");
  e2e_cleanup(dir);
}

/* --- categories --------------------------------------------------------------------- */

static tmr_category cat_net = TMR_CATEGORY("net", NULL);
static tmr_category cat_noisy = TMR_CATEGORY("noisy_io", NULL);
static tmr_category cat_slow = TMR_CATEGORY("slowcat", "slow");
static tmr_category cat_dbg = TMR_CATEGORY("dbgcat", "extra, debug");
static tmr_category cat_gpu = TMR_CATEGORY("gpu", "frames");

static void write_categories(tmr_session *s, void *user) {
  (void)s;
  bool *enabled = user;
  tmr_category *all[] = {&cat_net, &cat_noisy, &cat_slow, &cat_dbg, &cat_gpu};
  tmr_writer *w = tmr_this_thread();
  for (int i = 0; i < 5; i++) {
    enabled[i] = tmr_category_enabled(all[i]);
    tmr_instant(w, TMR_THREAD_TRACK, all[i], all[i]->name, 100 * (i + 1));
  }
}

/* TrackEventConfig's rules, in order: net matches nothing (enabled);
 * noisy_io matches the pattern "noisy*" of disabled_categories; slowcat's
 * tag "slow" is in the default disabled tags (the config sets none);
 * dbgcat's tag "debug" is an exact enabled tag, which is checked before
 * the default disabled tags; gpu matches nothing. Instants at 100 * (its
 * rank + 1). */
static void test_categories_filter_at_the_call_site(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *config =
      "buffers { size_kb: 64 }\n"
      "data_sources { config { name: \"track_event\" track_event_config {\n"
      "  disabled_categories: \"noisy*\" enabled_tags: \"debug\" } } }\n";
  bool enabled[5];
  g_autofree char *path = record_trace(dir, "cats.pftrace", config, write_categories, enabled);
  g_assert_true(enabled[0]);
  g_assert_false(enabled[1]);
  g_assert_false(enabled[2]);
  g_assert_true(enabled[3]);
  g_assert_true(enabled[4]);
  g_autofree char *rows = record_query(path, "SELECT ts, name, category FROM slice ORDER BY ts");
  e2e_assert_text(rows, "\"ts\",\"name\",\"category\"\n"
                        "100,\"net\",\"net\"\n"
                        "400,\"dbgcat\",\"dbgcat\"\n"
                        "500,\"gpu\",\"gpu\"\n");
  /* A second session: disabled_tags "fr*" replaces the default list, so
   * slowcat is enabled and gpu (tag "frames") is not; "*" with an exact
   * enabled category keeps only net. */
  const char *second =
      "buffers { size_kb: 64 }\n"
      "data_sources { config { name: \"track_event\" track_event_config {\n"
      "  disabled_tags: \"fr*\" } } }\n";
  g_autofree char *path2 = record_trace(dir, "cats2.pftrace", second, write_categories, enabled);
  g_assert_true(enabled[0] && enabled[1] && enabled[2] && enabled[3]);
  g_assert_false(enabled[4]);
  const char *third =
      "buffers { size_kb: 64 }\n"
      "data_sources { config { name: \"track_event\" track_event_config {\n"
      "  disabled_categories: \"*\" enabled_categories: \"net\" } } }\n";
  g_autofree char *path3 = record_trace(dir, "cats3.pftrace", third, write_categories, enabled);
  g_autofree char *only_net = record_query(path3, "SELECT name FROM slice");
  e2e_assert_text(only_net, "\"name\"\n\"net\"\n");
  /* With no session, every category is off. */
  g_assert_false(tmr_category_enabled(&cat_net));
  g_assert_null(tmr_this_thread());
  e2e_cleanup(dir);
}

/* --- debug annotations --------------------------------------------------------------- */

static void write_args(tmr_session *s, void *user) {
  (void)s;
  (void)user;
  tmr_arg inner[] = {TMR_ARG_STRING("y", "z")};
  tmr_arg dict[] = {TMR_ARG_INT("x", 1), TMR_ARG_DICT("nested", inner, 1)};
  tmr_arg element[] = {TMR_ARG_BOOL("k", true)};
  tmr_arg array[] = {TMR_ARG_INT(NULL, 1), TMR_ARG_STRING(NULL, "two"),
                     TMR_ARG_DICT(NULL, element, 1)};
  tmr_arg args[] = {TMR_ARG_BOOL("b", true),
                    TMR_ARG_UINT("u", UINT64_MAX),
                    TMR_ARG_INT("i", -5),
                    TMR_ARG_DOUBLE("d", 0.25),
                    TMR_ARG_POINTER("p", (void *)0x1000),
                    TMR_ARG_STRING("s", "text"),
                    TMR_ARG_JSON("j", "{\"a\":1}"),
                    TMR_ARG_DICT("dict", dict, 2),
                    TMR_ARG_ARRAY("arr", array, 3)};
  tmr_event_extras x = {.args = args, .n_args = G_N_ELEMENTS(args)};
  tmr_event(tmr_this_thread(), TMR_INSTANT, TMR_THREAD_TRACK, &cat_app, "annotated", 100, &x);
}

/* Every DebugAnnotation type, as trace_processor flattens them: under
 * "debug.", dicts by dots, arrays by [index] (flat_key without it). */
static void test_debug_annotations_of_every_type(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = record_trace(dir, "args.pftrace", track_event_config, write_args, NULL);
  g_autofree char *rows = record_query(path,
      "SELECT key, flat_key, display_value, value_type FROM args WHERE arg_set_id = "
      "(SELECT arg_set_id FROM slice WHERE name = 'annotated') ORDER BY id");
  e2e_assert_text(rows,
                  "\"key\",\"flat_key\",\"display_value\",\"value_type\"\n"
                  "\"debug.b\",\"debug.b\",\"true\",\"bool\"\n"
                  "\"debug.u\",\"debug.u\",\"18446744073709551615\",\"uint\"\n"
                  "\"debug.i\",\"debug.i\",\"-5\",\"int\"\n"
                  "\"debug.d\",\"debug.d\",\"0.25\",\"real\"\n"
                  "\"debug.p\",\"debug.p\",\"0x1000\",\"pointer\"\n"
                  "\"debug.s\",\"debug.s\",\"text\",\"string\"\n"
                  "\"debug.j\",\"debug.j\",\"{\"\"a\"\":1}\",\"json\"\n" /* RFC 4180: quotes doubled */
                  "\"debug.dict.x\",\"debug.dict.x\",\"1\",\"int\"\n"
                  "\"debug.dict.nested.y\",\"debug.dict.nested.y\",\"z\",\"string\"\n"
                  "\"debug.arr[0]\",\"debug.arr\",\"1\",\"int\"\n"
                  "\"debug.arr[1]\",\"debug.arr\",\"two\",\"string\"\n"
                  "\"debug.arr[2].k\",\"debug.arr.k\",\"true\",\"bool\"\n");
  /* At the protobuf level, each of the 13 names (b u i d p s j dict x
   * nested y arr k; array elements have none) is interned once. */
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(record_count(decoded, "debug_annotation_names {"), ==, 13);
  g_assert_cmpuint(record_count(decoded, "name: \"nested\""), ==, 1);
  e2e_cleanup(dir);
}

/* --- tracks, counters, flows, correlation, callstacks ------------------------------------------ */

static void write_tracks(tmr_session *s, void *user) {
  (void)s;
  (void)user;
  tmr_writer *w = tmr_this_thread();
  tmr_track proc = tmr_process_track();
  tmr_track requests = tmr_track_create(&(tmr_track_desc){
      .name = "Requests", .parent = proc, .description = "requests in flight",
      .child_ordering = TMR_CHILD_ORDERING_EXPLICIT});
  tmr_track get = tmr_track_create(&(tmr_track_desc){
      .name = "GET", .parent = requests, .has_sibling_order_rank = true, .sibling_order_rank = 2});
  tmr_track post = tmr_track_create(&(tmr_track_desc){
      .name = "POST", .parent = requests, .has_sibling_order_rank = true,
      .sibling_order_rank = -1, .merge_behavior = TMR_MERGE_BY_SIBLING_MERGE_KEY,
      .sibling_merge_key = "conn"});
  tmr_track global = tmr_track_create(&(tmr_track_desc){
      .name = "Global", .merge_behavior = TMR_MERGE_NONE,
      .child_ordering = TMR_CHILD_ORDERING_LEXICOGRAPHIC});
  tmr_track other = tmr_track_create(&(tmr_track_desc){.tid = 4242, .thread_name = "other thread"});
  tmr_track under_thread = tmr_track_create(&(tmr_track_desc){
      .name = "Under my thread", .parent = tmr_this_thread_track()});
  tmr_track nested = tmr_track_create(&(tmr_track_desc){
      .name = "Nested", .parent = global, .child_ordering = TMR_CHILD_ORDERING_CHRONOLOGICAL});
  tmr_track conns = tmr_track_create(&(tmr_track_desc){
      .name = "Active connections", .parent = proc, .is_counter = true,
      .unit_name = "connections", .y_axis_share_key = "load"});
  tmr_track mem = tmr_track_create(&(tmr_track_desc){
      .name = "Memory", .is_counter = true, .unit = TMR_UNIT_SIZE_BYTES, .unit_multiplier = 1024,
      .y_axis_share_key = "load"});
  tmr_track sent = tmr_track_create(&(tmr_track_desc){
      .name = "Bytes sent", .is_counter = true, .is_incremental = true});
  tmr_track temp = tmr_track_create(&(tmr_track_desc){.name = "Temperature", .is_counter = true});
  /* A track whose parent was never created here is refused. */
  tmr_track bogus = tmr_track_create(&(tmr_track_desc){.name = "x", .parent = {99, 12345}});
  g_assert_cmpuint(bogus.uuid, ==, 0);

  tmr_slice_begin(w, get, &cat_app, "get /a", 1000);
  tmr_slice_end(w, get, &cat_app, 1100);
  tmr_instant(w, post, &cat_app, "post /b", 1200);
  tmr_instant(w, global, &cat_app, "global", 1300);
  tmr_instant(w, other, &cat_app, "on other", 1400);
  tmr_instant(w, under_thread, &cat_app, "under thread", 1500);
  tmr_instant(w, nested, &cat_app, "nested", 1600);
  tmr_counter_int(w, conns, &cat_app, 2000, 5);
  tmr_counter_int(w, conns, &cat_app, 2100, 7);
  tmr_counter_int(w, mem, &cat_app, 2000, 2);
  tmr_counter_int(w, sent, &cat_app, 2000, 10);
  tmr_counter_int(w, sent, &cat_app, 2100, 5);
  tmr_counter_double(w, temp, &cat_app, 2000, 36.5);
  tmr_counter_value extra[] = {{.track = mem, .int_value = 4},
                               {.track = temp, .is_double = true, .double_value = 37.25}};
  tmr_event_extras with_extra = {.extra_counters = extra, .n_extra_counters = 2,
                                 .correlation_id = 42};
  tmr_event(w, TMR_SLICE_BEGIN, TMR_THREAD_TRACK, &cat_app, "work", 3000, &with_extra);
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, 3100);
  uint64_t flow[] = {7};
  tmr_event_extras send = {.flow_ids = flow, .n_flow_ids = 1, .correlation_id_str = "req-1"};
  tmr_event(w, TMR_SLICE_BEGIN, TMR_THREAD_TRACK, &cat_app, "send", 4000, &send);
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, 4100);
  tmr_event_extras handle = {.flow_ids = flow, .n_flow_ids = 1, .correlation_id_str = "req-1"};
  tmr_event(w, TMR_SLICE_BEGIN, get, &cat_app, "handle", 4200, &handle);
  tmr_slice_end(w, get, &cat_app, 4300);
  tmr_event_extras reply = {.terminating_flow_ids = flow, .n_terminating_flow_ids = 1};
  tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_app, "reply", 4400, &reply);
}

static void test_tracks_keep_their_hierarchy_and_hints(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = record_trace(dir, "tracks.pftrace", track_event_config, write_tracks, NULL);
  /* Tracks that never merge (roots, counters, and Global, whose
   * merge behavior is NONE) come first, in the order the reader met their
   * first use; the merged ones (docs/formats.md §1.9) after them, in the
   * order of the events that need them: "get /a" (1000) needs GET, whose
   * parent Requests is made first; "post /b" (1200) POST, merged by its key
   * "conn" (apart from GET, merged by name); "under thread" (1500) the
   * thread's child; "nested" (1600) Nested, a child of Global. Process
   * tracks are the ones parented to tmr_process_track() (a scope, not a
   * parent_id), the thread_merged one is parented to this thread's; the
   * thread of tid 4242 holds "on other". Source args carry each
   * descriptor's hints; the merge fields shape the tracks instead. */
  g_autofree char *tracks = record_query(path,
      "SELECT t.name, t.type, p.name AS parent, (SELECT group_concat(key || '=' || "
      "display_value, ';') FROM args a WHERE a.arg_set_id = t.source_arg_set_id) AS source "
      "FROM track t LEFT JOIN track p ON p.id = t.parent_id WHERE t.name IS NOT NULL "
      "ORDER BY t.id");
  e2e_assert_text(tracks,
      "\"name\",\"type\",\"parent\",\"source\"\n"
      "\"Global\",\"global_track_event\",\"[NULL]\",\"child_ordering=lexicographic\"\n"
      "\"Active connections\",\"process_counter_track_event\",\"[NULL]\",\"y_axis_share_key=load\"\n"
      "\"Memory\",\"global_counter_track_event\",\"[NULL]\",\"y_axis_share_key=load\"\n"
      "\"Bytes sent\",\"global_counter_track_event\",\"[NULL]\",\"[NULL]\"\n"
      "\"Temperature\",\"global_counter_track_event\",\"[NULL]\",\"[NULL]\"\n"
      "\"Requests\",\"process_merged_track_event\",\"[NULL]\",\"description=requests in flight;"
      "child_ordering=explicit\"\n"
      "\"GET\",\"process_merged_track_event\",\"Requests\",\"sibling_order_rank=2\"\n"
      "\"POST\",\"process_merged_track_event\",\"Requests\",\"sibling_order_rank=-1\"\n"
      "\"Under my thread\",\"thread_merged_track_event\",\"[NULL]\",\"[NULL]\"\n"
      "\"Nested\",\"global_merged_track_event\",\"Global\",\"child_ordering=chronological\"\n");
  g_autofree char *other = record_query(path,
      "SELECT t.tid, t.name, s.name FROM slice s JOIN thread_track tt ON s.track_id = tt.id "
      "JOIN thread t USING (utid) WHERE t.tid = 4242");
  e2e_assert_text(other, "\"tid\",\"name\",\"name\"\n4242,\"other thread\",\"on other\"\n");
  /* A track parented to this thread's track belongs to this thread. */
  g_autofree char *mine_sql = g_strdup_printf(
      "SELECT s.name, t.tid = %" PRId64 " FROM slice s JOIN thread_track tt ON s.track_id = tt.id "
      "JOIN thread t USING (utid) WHERE s.name = 'under thread'",
      my_tid());
  g_autofree char *mine = record_query(path, mine_sql);
  g_autofree char *mine_expected = g_strdup_printf(
      "\"name\",\"t.tid = %" PRId64 "\"\n\"under thread\",1\n", my_tid());
  e2e_assert_text(mine, mine_expected);
  /* Its pid is this process' (tmr_track_desc.pid 0 means "mine"). */
  g_autofree char *pid = record_query(path,
      "SELECT p.pid FROM process p JOIN thread t USING (upid) WHERE t.tid = 4242");
  g_autofree char *expected_pid = g_strdup_printf("\"pid\"\n%d\n", (int)getpid());
  e2e_assert_text(pid, expected_pid);

  /* Counters: Memory's 2 and 4 are KiB (unit_multiplier 1024): 2048 and
   * 4096, the 4 coming from "work"'s extra counter value at 3000, as does
   * Temperature's 37.25; Bytes sent is incremental: 10, then 10 + 5. */
  g_autofree char *counters = record_query(path,
      "SELECT c.ts, c.value, t.name, t.unit FROM counter c JOIN counter_track t "
      "ON c.track_id = t.id ORDER BY c.ts, t.name");
  e2e_assert_text(counters, "\"ts\",\"value\",\"name\",\"unit\"\n"
                            "2000,5.000000,\"Active connections\",\"connections\"\n"
                            "2000,10.000000,\"Bytes sent\",\"[NULL]\"\n"
                            "2000,2048.000000,\"Memory\",\"bytes\"\n"
                            "2000,36.500000,\"Temperature\",\"[NULL]\"\n"
                            "2100,7.000000,\"Active connections\",\"connections\"\n"
                            "2100,15.000000,\"Bytes sent\",\"[NULL]\"\n"
                            "3000,4096.000000,\"Memory\",\"bytes\"\n"
                            "3000,37.250000,\"Temperature\",\"[NULL]\"\n");
  /* Flow 7 starts at send, continues through handle, ends at reply. */
  g_autofree char *flows = record_query(path,
      "SELECT o.name, i.name, f.trace_id FROM flow f JOIN slice o ON o.id = f.slice_out "
      "JOIN slice i ON i.id = f.slice_in ORDER BY f.id");
  e2e_assert_text(flows, "\"name\",\"name\",\"trace_id\"\n\"send\",\"handle\",7\n"
                         "\"handle\",\"reply\",7\n");
  /* correlation_id 42 reads "tp:#42"; the string one is interned once
   * and used twice. */
  g_autofree char *correlation = record_query(path,
      "SELECT s.name, a.display_value FROM slice s JOIN args a USING (arg_set_id) "
      "WHERE a.key = 'correlation_id' ORDER BY s.ts");
  e2e_assert_text(correlation, "\"name\",\"display_value\"\n\"work\",\"tp:#42\"\n"
                               "\"send\",\"req-1\"\n\"handle\",\"req-1\"\n");
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(record_count(decoded, "correlation_id_str {"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "correlation_id_str_iid: 1"), ==, 2);
  /* Each track's descriptor is written once (one generation, DISCARD). */
  g_assert_cmpuint(record_count(decoded, "name: \"Requests\""), ==, 1);
  g_assert_cmpuint(record_count(decoded, "child_ordering: CHILD_ORDERING_EXPLICIT"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "child_ordering: CHILD_ORDERING_CHRONOLOGICAL"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "child_ordering: CHILD_ORDERING_LEXICOGRAPHIC"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "unit_multiplier: 1024"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "is_incremental: true"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "\n    flow_ids: 7"), ==, 2);
  g_assert_cmpuint(record_count(decoded, "terminating_flow_ids: 7"), ==, 1);
  e2e_cleanup(dir);
}

static void write_callstacks(tmr_session *s, void *user) {
  (void)s;
  (void)user;
  tmr_writer *w = tmr_this_thread();
  tmr_frame inline_frames[] = {{.function_name = "main", .source_file = "main.c", .line = 10},
                               {.function_name = "work", .source_file = "work.c", .line = 20}};
  tmr_event_extras inline_stack = {.inline_frames = inline_frames, .n_inline_frames = 2};
  tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_app, "inline stack", 5000, &inline_stack);
  tmr_mapping app = tmr_mapping_intern("abcd", "/usr/bin/app", 0x1000, 0x2000, 0, 0);
  tmr_frame frames[] = {{.function_name = "main", .mapping = app, .rel_pc = 0x10},
                        {.function_name = "handle", .mapping = app, .rel_pc = 0x20}};
  tmr_callstack stack = tmr_callstack_intern(frames, 2);
  g_assert_cmpuint(stack, !=, 0);
  g_assert_cmpuint(tmr_callstack_intern(frames, 2), ==, stack); /* interned by content */
  static tmr_source_location here = TMR_SOURCE_LOCATION_HERE;
  tmr_event_extras interned = {.callstack = stack, .source_location = &here};
  tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_app, "interned stack", 5100, &interned);
  tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_app, "again", 5200, &interned);
}

/* An inline callstack becomes frames without a mapping; an interned one
 * frames in /usr/bin/app at rel_pc 0x10 and 0x20; each slice gets the
 * innermost callsite as "callsite_id". The interned stack, used twice,
 * is written once. The build id "abcd" is written as its 4 bytes, which
 * read back as their lowercase hex, "61626364", as trace_processor shows
 * them. */
static void test_callstacks_inline_and_interned(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path =
      record_trace(dir, "stacks.pftrace", track_event_config, write_callstacks, NULL);
  g_autofree char *stacks = record_query(path,
      "SELECT s.name, c.depth, f.name, f.rel_pc, m.name AS mapping, m.build_id FROM slice s "
      "JOIN args a ON a.arg_set_id = s.arg_set_id AND a.key = 'callsite_id' "
      "JOIN stack_profile_callsite c ON c.id = a.int_value "
      "JOIN stack_profile_frame f ON f.id = c.frame_id "
      "LEFT JOIN stack_profile_mapping m ON m.id = f.mapping ORDER BY s.ts");
  e2e_assert_text(stacks, "\"name\",\"depth\",\"name\",\"rel_pc\",\"mapping\",\"build_id\"\n"
                          "\"inline stack\",1,\"work\",0,\"[NULL]\",\"[NULL]\"\n"
                          "\"interned stack\",1,\"handle\",32,\"/usr/bin/app\",\"61626364\"\n"
                          "\"again\",1,\"handle\",32,\"/usr/bin/app\",\"61626364\"\n");
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(record_count(decoded, "callstacks {"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "callstack_iid: "), ==, 2);
  g_assert_cmpuint(record_count(decoded, "mappings {"), ==, 1);
  /* Two interned frames (in interned_data) and two inline ones (in the
   * event's callstack, which carry their source file and line). */
  g_assert_cmpuint(record_count(decoded, "\n    frames {"), ==, 2);
  g_assert_cmpuint(record_count(decoded, "\n      frames {"), ==, 2);
  g_assert_cmpuint(record_count(decoded, "source_file: \"work.c\""), ==, 1);
  /* The source location is interned once (InternedData.source_locations,
   * field 4 upstream) and named by both events (TrackEvent
   * source_location_iid, field 34)... */
  g_assert_cmpuint(record_count(decoded, "source_locations {"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "source_location_iid: "), ==, 2);
  g_assert_nonnull(strstr(decoded, "function_name: \"write_callstacks\""));
  /* ...and reads back as both events' source_location args, as an inline
   * one would (the function is the one TMR_SOURCE_LOCATION_HERE was in). */
  g_autofree char *located = record_query(path,
      "SELECT s.name, a.string_value FROM slice s JOIN args a ON a.arg_set_id = s.arg_set_id "
      "AND a.key = 'source_location.function_name' ORDER BY s.ts");
  e2e_assert_text(located, "\"name\",\"string_value\"\n"
                           "\"interned stack\",\"write_callstacks\"\n"
                           "\"again\",\"write_callstacks\"\n");
  e2e_cleanup(dir);
}

/* --- interning and incremental state ----------------------------------------------------- */

static void write_repeats(tmr_session *s, void *user) {
  (void)s;
  int64_t pause_ms = *(int64_t *)user;
  tmr_writer *w = tmr_this_thread();
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "repeat", 100);
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "repeat", 200);
  if (pause_ms)
    g_usleep((gulong)pause_ms * 1000);
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "repeat", 300);
}

/* One generation: the first packet clears the state and carries the
 * defaults (BOOTTIME, the thread's track) and the thread's descriptor;
 * every TrackEvent packet needs the state; "repeat" and "app" are
 * interned once for three events. */
static void test_interning_in_one_generation(void) {
  g_autofree char *dir = e2e_tmpdir();
  int64_t pause = 0;
  g_autofree char *path =
      record_trace(dir, "interning.pftrace", track_event_config, write_repeats, &pause);
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(record_count(decoded, "sequence_flags: 1\n"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "sequence_flags: 2\n"), ==, 3);
  g_assert_cmpuint(record_count(decoded, "first_packet_on_sequence: true"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "event_names {"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "event_categories {"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "name_iid: 1\n"), ==, 3);
  g_assert_cmpuint(record_count(decoded, "timestamp_clock_id: 6"), ==, 1);
  /* The defaults' track is the thread descriptor's uuid. */
  const char *defaults = strstr(decoded, "track_event_defaults {\n      track_uuid: ");
  g_assert_nonnull(defaults);
  g_autofree char *uuid = g_strndup(defaults + strlen("track_event_defaults {\n      track_uuid: "),
                                    strcspn(defaults + strlen("track_event_defaults {\n      track_uuid: "), "\n"));
  g_autofree char *descriptor = g_strdup_printf("track_descriptor {\n    uuid: %s\n    thread {", uuid);
  g_assert_nonnull(strstr(decoded, descriptor));
  g_autofree char *rows = record_query(path, "SELECT count(*), min(name), max(name) FROM slice");
  e2e_assert_text(rows, "\"count(*)\",\"min(name)\",\"max(name)\"\n3,\"repeat\",\"repeat\"\n");
  e2e_cleanup(dir);
}

/* incremental_state_config.clear_period_ms: the writer starts a new
 * generation at its first event after a period ends (however many
 * periods passed). The 120 ms pause spans whole 20 ms periods, so the
 * third instant opens a generation of its own: at least 2 generations.
 * A busy machine may also stall this thread for a period between the
 * first two instants, giving a third; so the test counts rather than
 * fixes them: each generation opens with an event that interns "repeat"
 * again, and the reader still names all three instants. */
static void test_periodic_incremental_state_reset(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *config = "buffers { size_kb: 1024 }\n"
                       "data_sources { config { name: \"track_event\" } }\n"
                       "incremental_state_config { clear_period_ms: 20 }\n";
  int64_t pause = 120;
  g_autofree char *path = record_trace(dir, "reset.pftrace", config, write_repeats, &pause);
  g_autofree char *decoded = record_decode(path);
  guint generations = record_count(decoded, "sequence_flags: 1\n");
  g_assert_cmpuint(generations, >=, 2);
  g_assert_cmpuint(generations, <=, 3);
  g_assert_cmpuint(record_count(decoded, "event_names {"), ==, generations);
  g_assert_cmpuint(record_count(decoded, "first_packet_on_sequence: true"), ==, 1);
  g_autofree char *rows = record_query(path, "SELECT ts, name FROM slice ORDER BY ts");
  e2e_assert_text(rows, "\"ts\",\"name\"\n100,\"repeat\"\n200,\"repeat\"\n300,\"repeat\"\n");
  e2e_cleanup(dir);
}

/* --- buffers ------------------------------------------------------------------------------ */

#define BUFFER_EVENTS 3000

typedef struct buffer_run {
  tmr_buffer_stats stats;
} buffer_run;

static void write_many(tmr_session *s, void *user) {
  buffer_run *run = user;
  tmr_writer *w = tmr_this_thread();
  for (int64_t i = 0; i < BUFFER_EVENTS; i++) {
    tmr_arg arg = TMR_ARG_INT("i", i);
    tmr_event_extras x = {.args = &arg, .n_args = 1};
    tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_app, "tick", 1000 + i, &x);
  }
  tmr_session_flush(s);
  g_assert_true(tmr_session_buffer_stats(s, 0, &run->stats));
  tmr_buffer_stats none;
  g_assert_false(tmr_session_buffer_stats(s, 1, &none)); /* one buffer: 0 */
}

/* The trace_stats packet's value of `field` in buffer_stats (the last
 * trace_stats of the file). */
static uint64_t stat_in_trace(const char *decoded, const char *field) {
  const char *stats = NULL;
  for (const char *p = strstr(decoded, "trace_stats {"); p; p = strstr(p + 1, "trace_stats {"))
    stats = p;
  g_assert_nonnull(stats);
  g_autofree char *needle = g_strdup_printf("\n      %s: ", field);
  const char *at = strstr(stats, needle);
  g_assert_nonnull(at);
  return g_ascii_strtoull(at + strlen(needle), NULL, 10);
}

static char *ticks_query(const char *path) {
  return record_query(path,
      "SELECT count(*) AS n, min(a.int_value) AS first, max(a.int_value) AS last FROM slice s "
      "JOIN args a ON a.arg_set_id = s.arg_set_id AND a.key = 'debug.i'");
}

/* A RING_BUFFER of 16 KiB (chunks of 4 KiB) keeps the newest ticks: a run
 * that ends at the last one written, with no gap, every surviving chunk
 * decodable on its own (each starts a generation); the overwritten chunks
 * are counted in trace_stats as the API counts them. */
static void test_ring_buffer_keeps_the_newest_chunks(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *config = "buffers { size_kb: 16 fill_policy: RING_BUFFER }\n"
                       "data_sources { config { name: \"track_event\" } }\n";
  buffer_run run;
  g_autofree char *path = record_trace(dir, "ring.pftrace", config, write_many, &run);
  g_assert_cmpuint(run.stats.chunks_overwritten, >, 0);
  g_assert_cmpuint(run.stats.chunks_discarded, ==, 0);
  g_assert_cmpuint(run.stats.buffer_size, ==, 16 * 1024);
  g_autofree char *decoded = record_decode(path);
  /* The file's last trace_stats also counts the final flush's chunks. */
  g_assert_cmpuint(stat_in_trace(decoded, "chunks_overwritten"), >=, run.stats.chunks_overwritten);
  g_assert_cmpuint(stat_in_trace(decoded, "buffer_size"), ==, 16 * 1024);
  g_assert_cmpuint(stat_in_trace(decoded, "chunks_discarded"), ==, 0);
  g_assert_cmpuint(stat_in_trace(decoded, "write_wrap_count"), >, 0);
  g_autofree char *ticks = ticks_query(path);
  guint64 n = 0, first = 0, last = 0;
  g_assert_cmpint(sscanf(strchr(ticks, '\n') + 1, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                         ",%" G_GUINT64_FORMAT, &n, &first, &last), ==, 3);
  g_assert_cmpuint(last, ==, BUFFER_EVENTS - 1);
  g_assert_cmpuint(n, ==, last - first + 1);
  g_assert_cmpuint(n, <, BUFFER_EVENTS);
  /* The reader shows trace_stats as traced_buf_* stats of buffer 0. */
  g_autofree char *stats_sql = g_strdup_printf(
      "SELECT name, idx, value FROM stats WHERE name IN ('traced_buf_chunks_overwritten', "
      "'traced_buf_buffer_size', 'traced_buf_chunks_discarded') AND idx = 0 ORDER BY name");
  g_autofree char *stats = record_query(path, stats_sql);
  g_autofree char *expected_stats = g_strdup_printf(
      "\"name\",\"idx\",\"value\"\n\"traced_buf_buffer_size\",0,16384\n"
      "\"traced_buf_chunks_discarded\",0,0\n\"traced_buf_chunks_overwritten\",0,%" G_GUINT64_FORMAT
      "\n",
      stat_in_trace(decoded, "chunks_overwritten"));
  e2e_assert_text(stats, expected_stats);
  /* Nothing the reader had to skip for want of incremental state. */
  g_autofree char *skipped = record_query(path,
      "SELECT count(*) FROM stats WHERE value > 0 AND (name LIKE '%incremental%' OR "
      "name LIKE 'interned%' OR name LIKE 'track_event%')");
  e2e_assert_text(skipped, "\"count(*)\"\n0\n");
  e2e_cleanup(dir);
}

/* A DISCARD buffer keeps the oldest: a run from the first tick on. */
static void test_discard_buffer_keeps_the_oldest_chunks(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *config = "buffers { size_kb: 16 fill_policy: DISCARD }\n"
                       "data_sources { config { name: \"track_event\" } }\n";
  buffer_run run;
  g_autofree char *path = record_trace(dir, "discard.pftrace", config, write_many, &run);
  g_assert_cmpuint(run.stats.chunks_discarded, >, 0);
  g_assert_cmpuint(run.stats.chunks_overwritten, ==, 0);
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(stat_in_trace(decoded, "chunks_discarded"), >=, run.stats.chunks_discarded);
  g_assert_cmpuint(stat_in_trace(decoded, "chunks_overwritten"), ==, 0);
  g_autofree char *stats = record_query(path,
      "SELECT value FROM stats WHERE name = 'traced_buf_chunks_discarded' AND idx = 0");
  g_autofree char *expected_stats = g_strdup_printf(
      "\"value\"\n%" G_GUINT64_FORMAT "\n", stat_in_trace(decoded, "chunks_discarded"));
  e2e_assert_text(stats, expected_stats);
  g_autofree char *ticks = ticks_query(path);
  guint64 n = 0, first = 1, last = 0;
  g_assert_cmpint(sscanf(strchr(ticks, '\n') + 1, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                         ",%" G_GUINT64_FORMAT, &n, &first, &last), ==, 3);
  g_assert_cmpuint(first, ==, 0);
  g_assert_cmpuint(n, ==, last + 1);
  g_assert_cmpuint(n, <, BUFFER_EVENTS);
  e2e_cleanup(dir);
}

static void write_oversized(tmr_session *s, void *user) {
  (void)s;
  tmr_buffer_stats *stats = user;
  tmr_writer *w = tmr_this_thread();
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "before", 100);
  /* 2 MiB of text: more than a packet may hold (1 MiB). */
  size_t len = 2u << 20;
  char *big = g_malloc(len + 1);
  memset(big, 'x', len);
  big[len] = '\0';
  tmr_arg arg = TMR_ARG_STRING("big", big);
  tmr_event_extras x = {.args = &arg, .n_args = 1};
  tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_app, "too big", 200, &x);
  g_free(big);
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "after", 300);
  tmr_session_flush(s);
  tmr_session_buffer_stats(s, 0, stats);
}

/* A packet too large to write is dropped and counted
 * (trace_writer_packet_loss); the next packet says so
 * (previous_packet_dropped) and starts a new generation, so "after" is
 * still readable. */
static void test_a_packet_too_large_is_counted_as_lost(void) {
  g_autofree char *dir = e2e_tmpdir();
  tmr_buffer_stats stats;
  g_autofree char *path =
      record_trace(dir, "big.pftrace", track_event_config, write_oversized, &stats);
  g_assert_cmpuint(stats.trace_writer_packet_loss, ==, 1);
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(stat_in_trace(decoded, "trace_writer_packet_loss"), ==, 1);
  g_autofree char *loss = record_query(path,
      "SELECT value FROM stats WHERE name = 'traced_buf_trace_writer_packet_loss' AND idx = 0");
  e2e_assert_text(loss, "\"value\"\n1\n");
  g_assert_cmpuint(record_count(decoded, "previous_packet_dropped: 1"), ==, 1);
  g_assert_cmpuint(record_count(decoded, "sequence_flags: 1\n"), ==, 2);
  g_autofree char *rows = record_query(path, "SELECT ts, name FROM slice ORDER BY ts");
  e2e_assert_text(rows, "\"ts\",\"name\"\n100,\"before\"\n300,\"after\"\n");
  e2e_cleanup(dir);
}

/* --- clocks --------------------------------------------------------------------------------- */

typedef struct clock_run {
  int64_t before, after; /* BOOTTIME around tmr_writer_use_clock */
} clock_run;

static void write_custom_clock(tmr_session *s, void *user) {
  (void)s;
  clock_run *run = user;
  tmr_writer *w = tmr_this_thread();
  g_assert_false(tmr_writer_use_clock(w, 63, 1, 0));   /* builtin range */
  g_assert_false(tmr_writer_use_clock(w, 64, 0, 0));   /* no unit */
  run->before = record_boottime();
  g_assert_true(tmr_writer_use_clock(w, 64, 1000, 500)); /* reads 500 (µs) now */
  run->after = record_boottime();
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "at 500", 500);
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "at 520", 520);
  tmr_writer_use_boottime(w);
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "boottime", 7);
}

/* Clock 64 counts µs and read 500 at a BOOTTIME between `before` and
 * `after`: "at 500" lands there, "at 520" 20 µs later; back on BOOTTIME,
 * 7 is 7. The writer's sequence carries the clock's snapshot. */
static void test_sequence_scoped_clock(void) {
  g_autofree char *dir = e2e_tmpdir();
  clock_run run;
  g_autofree char *path =
      record_trace(dir, "clock.pftrace", track_event_config, write_custom_clock, &run);
  g_autofree char *rows = record_query(path, "SELECT ts, name FROM slice ORDER BY name");
  int64_t at500 = 0, at520 = 0, boot = 0;
  char *line = strchr(rows, '\n') + 1;
  g_assert_cmpint(sscanf(line, "%" G_GINT64_FORMAT ",\"at 500\"", &at500), ==, 1);
  line = strchr(line, '\n') + 1;
  g_assert_cmpint(sscanf(line, "%" G_GINT64_FORMAT ",\"at 520\"", &at520), ==, 1);
  line = strchr(line, '\n') + 1;
  g_assert_cmpint(sscanf(line, "%" G_GINT64_FORMAT ",\"boottime\"", &boot), ==, 1);
  g_assert_cmpint(at500, >=, run.before);
  g_assert_cmpint(at500, <=, run.after);
  g_assert_cmpint(at520 - at500, ==, 20000);
  g_assert_cmpint(boot, ==, 7);
  g_autofree char *decoded = record_decode(path);
  g_assert_nonnull(strstr(decoded, "clock_id: 64\n      timestamp: 500\n      unit_multiplier_ns: 1000"));
  e2e_cleanup(dir);
}

/* --- TMR_NOW's clock ------------------------------------------------------------------------- */

/* What TMR_NOW's timestamps may be off BOOTTIME by, read back: on the
 * clock_gettime path none (the read lies between the test's two reads);
 * on the TSC path, the error measured by bench_record --clock-error
 * (docs/performance.md, "The TSC clock": none seen outside brackets of
 * ~1 us) with a wide margin for a loaded CI machine. */
#define TSC_ERROR_BOUND_NS 20000
#define NOW_ROUNDS 12

typedef struct now_run {
  int64_t before[NOW_ROUNDS], after[NOW_ROUNDS]; /* BOOTTIME around each "at" */
  int64_t pair_before, pair_after;               /* around the TMR_NOW slice pair */
  tmr_now_clock clock;                           /* what the session read */
} now_run;

/* An instant with TMR_NOW between two BOOTTIME reads, 12 times 25 ms
 * apart (300 ms: TSC anchors every 100 ms, and a flush in the middle
 * re-anchors too); a TMR_NOW slice pair; an instant at explicit
 * BOOTTIME 5000 on the same writer. */
static void write_now_events(tmr_session *s, void *user) {
  now_run *run = user;
  run->clock = tmr_session_now_clock(s);
  tmr_writer *w = tmr_this_thread();
  g_assert_false(tmr_writer_use_clock(w, TMR_TSC_CLOCK_ID, 1, 0)); /* reserved */
  for (int i = 0; i < NOW_ROUNDS; i++) {
    run->before[i] = record_boottime();
    tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "at", TMR_NOW);
    run->after[i] = record_boottime();
    if (i == NOW_ROUNDS / 2)
      tmr_session_flush(s);
    g_usleep(25000);
  }
  run->pair_before = record_boottime();
  tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_app, "pair", TMR_NOW);
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, TMR_NOW);
  run->pair_after = record_boottime();
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "explicit", 5000);
}

/* Whether this machine should read the TSC, derived apart from the
 * library: x86-64, /proc/cpuinfo's constant_tsc and nonstop_tsc (the
 * kernel's names for CPUID 0x80000007 EDX bit 8), clocksource "tsc". */
static bool machine_has_usable_tsc(void) {
#if defined(__x86_64__)
  g_autofree char *cpuinfo = NULL, *source = NULL;
  if (!g_file_get_contents("/proc/cpuinfo", &cpuinfo, NULL, NULL) ||
      !g_file_get_contents("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                           &source, NULL, NULL))
    return false;
  return strstr(cpuinfo, " constant_tsc") && strstr(cpuinfo, " nonstop_tsc") &&
         strcmp(g_strchomp(source), "tsc") == 0;
#else
  return false;
#endif
}

/* The timestamps of clock `clock_id` in the decoded text's clock
 * snapshots, in order. */
static GArray *snapshot_values(const char *decoded, uint32_t clock_id) {
  GArray *values = g_array_new(FALSE, FALSE, sizeof(int64_t));
  g_autofree char *needle = g_strdup_printf("clocks {\n      clock_id: %u\n", clock_id);
  for (const char *p = strstr(decoded, needle); p; p = strstr(p + 1, needle)) {
    const char *t = strstr(p, "timestamp: ");
    g_assert_nonnull(t);
    int64_t v = g_ascii_strtoll(t + strlen("timestamp: "), NULL, 10);
    g_array_append_val(values, v);
  }
  return values;
}

/* Reads back what write_now_events recorded on clock `clock` and checks
 * that every TMR_NOW timestamp lands on BOOTTIME between the reads around
 * it (within `bound`), the pair too, and that the explicit 5000 stays
 * 5000. Returns the protoc decoding. */
static char *check_now_run(const char *dir, const char *name, tmr_now_clock clock,
                           int64_t *bound_out) {
  now_run run;
  g_autofree char *path =
      record_trace_on_clock(dir, name, track_event_config, clock, write_now_events, &run);
  bool tsc = clock == TMR_NOW_CLOCK_AUTO && machine_has_usable_tsc();
  g_assert_cmpint(run.clock, ==, tsc ? TMR_NOW_CLOCK_TSC : TMR_NOW_CLOCK_BOOTTIME);
  int64_t bound = tsc ? TSC_ERROR_BOUND_NS : 0;
  *bound_out = bound;
  g_autofree char *rows =
      record_query(path, "SELECT ts, dur, name FROM slice WHERE name != 'explicit' ORDER BY ts");
  char *line = strchr(rows, '\n') + 1;
  int64_t worst = 0;
  for (int i = 0; i < NOW_ROUNDS; i++) {
    int64_t ts = 0, dur = -1;
    g_assert_cmpint(sscanf(line, "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",\"at\"", &ts, &dur),
                    ==, 2);
    g_assert_cmpint(ts, >=, run.before[i] - bound);
    g_assert_cmpint(ts, <=, run.after[i] + bound);
    worst = MAX(worst, MAX(run.before[i] - ts, ts - run.after[i]));
    line = strchr(line, '\n') + 1;
  }
  int64_t ts = 0, dur = -1;
  g_assert_cmpint(sscanf(line, "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",\"pair\"", &ts, &dur),
                  ==, 2);
  g_assert_cmpint(ts, >=, run.pair_before - bound);
  g_assert_cmpint(dur, >=, 0);
  g_assert_cmpint(ts + dur, <=, run.pair_after + bound);
  g_test_message("%s: TMR_NOW timestamps at most %" G_GINT64_FORMAT
                 " ns outside the BOOTTIME reads around them",
                 name, MAX(worst, (int64_t)0));
  g_autofree char *exp = record_query(path, "SELECT ts FROM slice WHERE name = 'explicit'");
  g_assert_cmpstr(e2e_csv_rows(exp), ==, "5000\n");
  return record_decode(path);
}

/* With the TSC (where this machine has a usable one): the writer's
 * generation sets its default clock to TMR_TSC_CLOCK_ID, events on it
 * carry no clock id, the explicit BOOTTIME instant names clock 6, and the
 * sequence carries a snapshot {BOOTTIME, 127} per anchor: the first
 * TMR_NOW, the flush, and at least one 100 ms period after the flush
 * (5 x 25 ms later), both clocks increasing from one to the next. The
 * session's own snapshots (start, flush, stop) relate BOOTTIME to
 * REALTIME as before. Forced onto clock_gettime: no clock 127 anywhere,
 * BOOTTIME by default, the timestamps exact. */
static void test_tmr_now_lands_on_boottime_within_the_bound_on_either_clock(void) {
  g_autofree char *dir = e2e_tmpdir();
  int64_t bound = 0;
  g_autofree char *decoded = check_now_run(dir, "now.pftrace", TMR_NOW_CLOCK_AUTO, &bound);
  if (machine_has_usable_tsc()) {
    g_assert_cmpuint(record_count(decoded, "timestamp_clock_id: 127\n"), ==, 1); /* defaults */
    g_assert_cmpuint(record_count(decoded, "timestamp_clock_id: 6\n"), >=, 2); /* explicit + */
    g_autoptr(GArray) tsc = snapshot_values(decoded, TMR_TSC_CLOCK_ID);
    g_autoptr(GArray) realtime = snapshot_values(decoded, 1);
    g_assert_cmpuint(tsc->len, >=, 3);
    g_assert_cmpuint(realtime->len, ==, 3);
    for (guint i = 1; i < tsc->len; i++)
      g_assert_cmpint(g_array_index(tsc, int64_t, i), >, g_array_index(tsc, int64_t, i - 1));
    /* Each {BOOTTIME, 127} snapshot: BOOTTIME first, the clock after it. */
    g_assert_cmpuint(record_count(decoded, "clocks {\n      clock_id: 6\n"), ==,
                     tsc->len + realtime->len);
  } else {
    g_assert_cmpuint(record_count(decoded, "clock_id: 127\n"), ==, 0);
  }
  g_autofree char *forced = check_now_run(dir, "forced.pftrace", TMR_NOW_CLOCK_BOOTTIME, &bound);
  g_assert_cmpint(bound, ==, 0);
  g_assert_cmpuint(record_count(forced, "clock_id: 127\n"), ==, 0);
  g_assert_cmpuint(record_count(forced, "timestamp_clock_id: 6\n"), ==, 1); /* defaults only */
  g_assert_cmpuint(record_count(forced, "clock_snapshot {"), ==, 3); /* the session's */
  e2e_cleanup(dir);
}

/* TRACEMERGE_RECORD_CLOCK=boottime forces the clock_gettime path on any
 * machine, whatever the options ask. */
static void test_the_environment_forces_clock_gettime(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_setenv("TRACEMERGE_RECORD_CLOCK", "boottime", TRUE);
  now_run run;
  g_autofree char *path =
      record_trace(dir, "env.pftrace", track_event_config, write_now_events, &run);
  g_unsetenv("TRACEMERGE_RECORD_CLOCK");
  g_assert_cmpint(run.clock, ==, TMR_NOW_CLOCK_BOOTTIME);
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(record_count(decoded, "clock_id: 127\n"), ==, 0);
  e2e_cleanup(dir);
}

/* --- packets on sequence-scoped clocks ------------------------------------------------------- */

/* Fails the test with the walk's first unrelated packet, if any. */
static void assert_every_scoped_timestamp_related(const record_clock_order *order) {
  if (order->unrelated)
    g_error("%u packet(s) on a sequence-scoped clock before their generation's snapshot of it; "
            "the first: %s", order->unrelated, order->first_unrelated);
}

/* The reader placed every event: no clock-conversion failure, nothing
 * skipped or dropped, and one slice per event packet but `ends` (the
 * slice ends among them). */
static void assert_reader_placed_every_event(const char *path, const record_clock_order *order,
                                             guint ends) {
  g_autofree char *failures = record_query(path,
      "SELECT name, value FROM stats WHERE value > 0 AND (name LIKE 'clock_sync_failure%' OR "
      "name LIKE 'invalid_clock%' OR name LIKE '%skipped%' OR name LIKE '%dropped%' OR "
      "name LIKE '%incremental_state%')");
  e2e_assert_text(failures, "\"name\",\"value\"\n");
  g_autofree char *slices = record_query(path, "SELECT count(*) FROM slice");
  g_autofree char *expected = g_strdup_printf("%u\n", order->events - ends);
  g_assert_cmpstr(e2e_csv_rows(slices), ==, expected);
}

#define SIDE_CLOCK 70u

/* On clock 70 (µs, reading 500 at tmr_writer_use_clock): 3 instants on
 * the thread track and one on a custom track (whose descriptor the event
 * brings along), a flush, 2 more; one back on BOOTTIME; then clock 70
 * again, reading 600 (a new generation), for 2 more: 8 events on clock 70. */
static void write_custom_clock_generations(tmr_session *s, void *user) {
  (void)user;
  tmr_writer *w = tmr_this_thread();
  tmr_track side = tmr_track_create(&(tmr_track_desc){.name = "side"});
  g_assert_true(tmr_writer_use_clock(w, SIDE_CLOCK, 1000, 500));
  for (int64_t i = 0; i < 3; i++)
    tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "custom", 500 + i);
  tmr_instant(w, side, &cat_app, "custom side", 503);
  tmr_session_flush(s);
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "custom", 504);
  tmr_instant(w, side, &cat_app, "custom side", 505);
  tmr_writer_use_boottime(w);
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "boottime", 7);
  g_assert_true(tmr_writer_use_clock(w, SIDE_CLOCK, 1000, 600));
  tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "custom", 600);
  tmr_instant(w, side, &cat_app, "custom side", 601);
}

/* A reader converts a packet's timestamp with the snapshots it has read
 * on the sequence so far, so every packet on the user's clock 70 comes
 * after a snapshot of it in its generation: the 8 events, and nothing
 * else (the packets the writer adds for them are on BOOTTIME). The reader
 * places all 9 events. */
static void test_custom_clock_packets_follow_their_snapshot(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = record_trace(dir, "custom.pftrace", track_event_config,
                                       write_custom_clock_generations, NULL);
  record_clock_order order;
  record_check_clock_order(path, &order);
  assert_every_scoped_timestamp_related(&order);
  g_assert_cmpuint(order.scoped[SIDE_CLOCK - 64], ==, 8); /* the writer's own: BOOTTIME */
  g_assert_cmpuint(order.events, ==, 9);
  assert_reader_placed_every_event(path, &order, 0);
  e2e_cleanup(dir);
}

/* TMR_NOW on the TSC (where this machine has one): the 12 instants and
 * the slice pair of write_now_events are on clock 127, across a flush
 * that re-anchors it, each after a snapshot of 127 in its generation;
 * the explicit BOOTTIME instant is not. Without a usable TSC nothing is
 * on 127. */
static void test_tsc_clock_packets_follow_their_snapshot(void) {
  g_autofree char *dir = e2e_tmpdir();
  now_run run;
  g_autofree char *path = record_trace_on_clock(dir, "tsc.pftrace", track_event_config,
                                                TMR_NOW_CLOCK_AUTO, write_now_events, &run);
  record_clock_order order;
  record_check_clock_order(path, &order);
  assert_every_scoped_timestamp_related(&order);
  bool tsc = machine_has_usable_tsc();
  g_assert_cmpint(run.clock, ==, tsc ? TMR_NOW_CLOCK_TSC : TMR_NOW_CLOCK_BOOTTIME);
  g_assert_cmpuint(order.scoped[TMR_TSC_CLOCK_ID - 64], ==, tsc ? NOW_ROUNDS + 2 : 0);
  g_assert_cmpuint(order.events, ==, NOW_ROUNDS + 3);
  assert_reader_placed_every_event(path, &order, 1);
  e2e_cleanup(dir);
}

#define RING_TICKS 3000

/* Ticks on clock 64 (ns, reading 0 now) with an argument (so chunks fill
 * fast), every 50th followed by a TMR_NOW instant (the TSC where there is
 * one), a flush half way. */
static void write_ring_on_scoped_clocks(tmr_session *s, void *user) {
  buffer_run *run = user;
  tmr_writer *w = tmr_this_thread();
  g_assert_true(tmr_writer_use_clock(w, 64, 1, 0));
  for (int64_t i = 0; i < RING_TICKS; i++) {
    tmr_arg arg = TMR_ARG_INT("i", i);
    tmr_event_extras x = {.args = &arg, .n_args = 1};
    tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_app, "tick", 1000 + i, &x);
    if (i % 50 == 0)
      tmr_instant(w, TMR_THREAD_TRACK, &cat_app, "now", TMR_NOW);
    if (i == RING_TICKS / 2)
      tmr_session_flush(s);
  }
  tmr_session_flush(s);
  g_assert_true(tmr_session_buffer_stats(s, 0, &run->stats));
}

/* A 16 KiB RING_BUFFER that wrapped: every surviving chunk starts a
 * generation, and in each the packets on clock 64 (and on 127 where the
 * TSC is used) come after that generation's snapshot of their clock, so
 * whichever chunks survive, a reader places every event in them. */
static void test_ring_buffer_chunks_relate_their_scoped_clocks(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *config = "buffers { size_kb: 16 fill_policy: RING_BUFFER }\n"
                       "data_sources { config { name: \"track_event\" } }\n";
  buffer_run run;
  g_autofree char *path =
      record_trace(dir, "ring-clocks.pftrace", config, write_ring_on_scoped_clocks, &run);
  g_assert_cmpuint(run.stats.chunks_overwritten, >, 0);
  record_clock_order order;
  record_check_clock_order(path, &order);
  assert_every_scoped_timestamp_related(&order);
  g_assert_cmpuint(order.generations, >=, 2);
  g_assert_cmpuint(order.scoped[0], >, 0);
  if (machine_has_usable_tsc())
    g_assert_cmpuint(order.scoped[TMR_TSC_CLOCK_ID - 64], >, 0);
  else
    g_assert_cmpuint(order.scoped[TMR_TSC_CLOCK_ID - 64], ==, 0);
  g_assert_cmpuint(order.events, <, RING_TICKS + RING_TICKS / 50);
  g_test_message("%u generations, %u events on clock 64 and %u on 127 survived the ring",
                 order.generations, order.scoped[0], order.scoped[TMR_TSC_CLOCK_ID - 64]);
  assert_reader_placed_every_event(path, &order, 0);
  e2e_cleanup(dir);
}

/* Snapshots of the service sequence: one at the start, one per flush
 * (two explicit ones and the final one), each with REALTIME beside
 * BOOTTIME, the trace's primary clock. */
static void flush_twice(tmr_session *s, void *user) {
  (void)user;
  tmr_instant(tmr_this_thread(), TMR_THREAD_TRACK, &cat_app, "x", 1);
  tmr_session_flush(s);
  tmr_session_flush(s);
}

static void test_clock_snapshot_at_start_and_every_flush(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = record_trace(dir, "snap.pftrace", track_event_config, flush_twice, NULL);
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(record_count(decoded, "clock_snapshot {"), ==, 4);
  g_assert_cmpuint(record_count(decoded, "clock_id: 1\n"), ==, 4);
  g_assert_cmpuint(record_count(decoded, "primary_trace_clock: BUILTIN_CLOCK_BOOTTIME"), ==, 4);
  /* The reader relates REALTIME to BOOTTIME in each of the 4 snapshots. */
  g_autofree char *snapshots = record_query(path,
      "SELECT count(DISTINCT snapshot_id) FROM clock_snapshot WHERE clock_name = 'REALTIME'");
  e2e_assert_text(snapshots, "\"count(DISTINCT snapshot_id)\"\n4\n");
  /* disable_clock_snapshotting: none at all. */
  const char *off = "buffers { size_kb: 64 }\n"
                    "data_sources { config { name: \"track_event\" } }\n"
                    "builtin_data_sources { disable_clock_snapshotting: true }\n";
  g_autofree char *path2 = record_trace(dir, "nosnap.pftrace", off, flush_twice, NULL);
  g_autofree char *decoded2 = record_decode(path2);
  g_assert_cmpuint(record_count(decoded2, "clock_snapshot {"), ==, 0);
  e2e_cleanup(dir);
}

typedef struct many_flushes {
  int64_t before;    /* BOOTTIME after the start, before any flush */
  int64_t after_25;  /* BOOTTIME after the 25th flush */
} many_flushes;

static void flush_forty_times(tmr_session *s, void *user) {
  many_flushes *run = user;
  run->before = record_boottime();
  for (int i = 1; i <= 40; i++) {
    tmr_session_flush(s);
    if (i == 25)
      run->after_25 = record_boottime();
  }
}

/* A session that writes only when it stops holds its clock snapshots in
 * memory until then, so it keeps at most 16 (TMR_MAX_PENDING_SNAPSHOTS):
 * the first and the latest. Here 42 are taken: at the start, at each of
 * 40 flushes, at the stop; the trace keeps the start's (before `before`)
 * and the last 15, i.e. those of flushes 27..40 and the stop's (all after
 * `after_25`). */
static void test_clock_snapshots_waiting_in_memory_are_bounded(void) {
  g_autofree char *dir = e2e_tmpdir();
  many_flushes run;
  g_autofree char *path =
      record_trace(dir, "flushes.pftrace", track_event_config, flush_forty_times, &run);
  g_autofree char *decoded = record_decode(path);
  g_assert_cmpuint(record_count(decoded, "clock_snapshot {"), ==, 16);
  g_autofree char *sql = g_strdup_printf(
      "SELECT count(*), sum(ts < %" G_GINT64_FORMAT "), sum(ts > %" G_GINT64_FORMAT ") "
      "FROM clock_snapshot WHERE clock_name = 'BOOTTIME'",
      run.before, run.after_25);
  g_autofree char *rows = record_query(path, sql);
  g_assert_cmpstr(e2e_csv_rows(rows), ==, "16,1,15\n");
  e2e_cleanup(dir);
}

/* --- threads -------------------------------------------------------------------------------- */

#define THREADS 4
#define PER_THREAD 200

static gpointer thread_main(gpointer data) {
  int k = GPOINTER_TO_INT(data);
  tmr_writer *w = tmr_this_thread();
  g_assert_nonnull(w);
  g_autofree char *name = g_strdup_printf("worker %d", k);
  tmr_writer_set_thread_name(w, name);
  for (int i = 0; i < PER_THREAD; i++) {
    tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_app, "job", 1000 * i);
    tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, 1000 * i + 10 + k);
  }
  return NULL;
}

static void write_threads(tmr_session *s, void *user) {
  (void)s;
  (void)user;
  GThread *threads[THREADS];
  for (int k = 0; k < THREADS; k++)
    threads[k] = g_thread_new("worker", thread_main, GINT_TO_POINTER(k));
  for (int k = 0; k < THREADS; k++)
    g_thread_join(threads[k]);
}

/* Four threads, each its own writer and trusted sequence (2..5 after the
 * service's 1), each renamed: 200 jobs per thread, worker k's jobs last
 * 10 + k ns. */
static void test_one_sequence_per_thread(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = record_trace(dir, "threads.pftrace", track_event_config, write_threads, NULL);
  g_autofree char *rows = record_query(path,
      "SELECT t.name, count(*), min(s.dur), max(s.dur) FROM slice s JOIN thread_track tt "
      "ON s.track_id = tt.id JOIN thread t USING (utid) GROUP BY t.utid ORDER BY t.name");
  e2e_assert_text(rows, "\"name\",\"count(*)\",\"min(s.dur)\",\"max(s.dur)\"\n"
                        "\"worker 0\",200,10,10\n\"worker 1\",200,11,11\n"
                        "\"worker 2\",200,12,12\n\"worker 3\",200,13,13\n");
  g_autofree char *decoded = record_decode(path);
  for (int seq = 1; seq <= THREADS + 1; seq++) {
    g_autofree char *needle = g_strdup_printf("trusted_packet_sequence_id: %d\n", seq);
    g_assert_cmpuint(record_count(decoded, needle), >, 0);
  }
  g_assert_cmpuint(record_count(decoded, "trusted_packet_sequence_id: 6\n"), ==, 0);
  g_assert_cmpuint(record_count(decoded, "first_packet_on_sequence: true"), ==, THREADS);
  e2e_cleanup(dir);
}

static gpointer worker_instant(gpointer data) {
  int64_t *tid = data;
  *tid = my_tid();
  tmr_instant(tmr_this_thread(), TMR_THREAD_TRACK, &cat_app, "by the worker", 100);
  return NULL;
}

static void write_for_another_thread(tmr_session *s, void *user) {
  (void)s;
  (void)user;
  int64_t tid = 0;
  g_thread_join(g_thread_new("worker", worker_instant, &tid));
  tmr_track worker = tmr_track_create(&(tmr_track_desc){.tid = tid});
  tmr_instant(tmr_this_thread(), worker, &cat_app, "about the worker", 200);
}

/* A track made for one of this process' threads is that thread's own
 * track: an event written there by another thread and one the thread
 * wrote itself share it. */
static void test_track_of_another_thread_is_its_own_track(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path =
      record_trace(dir, "other.pftrace", track_event_config, write_for_another_thread, NULL);
  g_autofree char *rows = record_query(path,
      "SELECT count(DISTINCT track_id), count(*) FROM slice WHERE name LIKE '%worker'");
  e2e_assert_text(rows, "\"count(DISTINCT track_id)\",\"count(*)\"\n1,2\n");
  e2e_cleanup(dir);
}

/* --- strict nesting ------------------------------------------------------------------------ */

static void write_unbalanced(tmr_session *s, void *user) {
  (void)s;
  tmr_writer *w = tmr_this_thread();
  /* An end with no begin on a track is the tail of a slice begun before
   * recording: allowed. */
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, 50);
  tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_app, "a", 100);
  if (GPOINTER_TO_INT(user) == 1) {
    tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, 90); /* before its begin */
  } else {
    tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, 200);
    tmr_slice_end(w, TMR_THREAD_TRACK, &cat_app, 300); /* one end too many */
  }
}

/* Each case runs in a subprocess (an abort must not end the test run). The
 * parent owns the directory and removes it: a subprocess that aborts never
 * reaches its own cleanup. */
#define NEST_DIR_ENV "TRACEMERGE_TEST_NEST_DIR"

static void run_nesting_case(int which) {
  const char *dir = g_getenv(NEST_DIR_ENV);
  g_assert_nonnull(dir);
  g_autofree char *path = record_trace(dir, "nest.pftrace", track_event_config, write_unbalanced,
                                       GINT_TO_POINTER(which));
}

static void trap_nesting_case(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_setenv(NEST_DIR_ENV, dir, TRUE);
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_unsetenv(NEST_DIR_ENV);
  e2e_cleanup(dir);
}

static void test_end_before_its_begin(void) {
  if (g_test_subprocess()) {
    run_nesting_case(1);
    return;
  }
  trap_nesting_case();
#ifndef NDEBUG
  g_test_trap_assert_failed();
  g_test_trap_assert_stderr("*slice end at 90 on track * is before its begin at 100*");
#else
  g_test_trap_assert_passed(); /* release builds write what they are given */
#endif
}

static void test_more_ends_than_begins(void) {
  if (g_test_subprocess()) {
    run_nesting_case(2);
    return;
  }
  trap_nesting_case();
#ifndef NDEBUG
  g_test_trap_assert_failed();
  g_test_trap_assert_stderr("*slice end at 300 on track * has no open slice: ends outnumber "
                            "begins on this track*");
#else
  g_test_trap_assert_passed();
#endif
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/record/trace/slices-nest-on-the-thread-track",
                  test_slices_nest_on_the_thread_track);
  g_test_add_func("/record/trace/categories-filter-at-the-call-site",
                  test_categories_filter_at_the_call_site);
  g_test_add_func("/record/trace/debug-annotations-of-every-type",
                  test_debug_annotations_of_every_type);
  g_test_add_func("/record/trace/tracks-keep-their-hierarchy-and-hints",
                  test_tracks_keep_their_hierarchy_and_hints);
  g_test_add_func("/record/trace/callstacks-inline-and-interned", test_callstacks_inline_and_interned);
  g_test_add_func("/record/trace/interning-in-one-generation", test_interning_in_one_generation);
  g_test_add_func("/record/trace/periodic-incremental-state-reset",
                  test_periodic_incremental_state_reset);
  g_test_add_func("/record/trace/ring-buffer-keeps-the-newest-chunks",
                  test_ring_buffer_keeps_the_newest_chunks);
  g_test_add_func("/record/trace/discard-buffer-keeps-the-oldest-chunks",
                  test_discard_buffer_keeps_the_oldest_chunks);
  g_test_add_func("/record/trace/a-packet-too-large-is-counted-as-lost",
                  test_a_packet_too_large_is_counted_as_lost);
  g_test_add_func("/record/trace/sequence-scoped-clock", test_sequence_scoped_clock);
  g_test_add_func("/record/trace/tmr-now-lands-on-boottime-within-the-bound-on-either-clock",
                  test_tmr_now_lands_on_boottime_within_the_bound_on_either_clock);
  g_test_add_func("/record/trace/the-environment-forces-clock-gettime",
                  test_the_environment_forces_clock_gettime);
  g_test_add_func("/record/trace/custom-clock-packets-follow-their-snapshot",
                  test_custom_clock_packets_follow_their_snapshot);
  g_test_add_func("/record/trace/tsc-clock-packets-follow-their-snapshot",
                  test_tsc_clock_packets_follow_their_snapshot);
  g_test_add_func("/record/trace/ring-buffer-chunks-relate-their-scoped-clocks",
                  test_ring_buffer_chunks_relate_their_scoped_clocks);
  g_test_add_func("/record/trace/clock-snapshot-at-start-and-every-flush",
                  test_clock_snapshot_at_start_and_every_flush);
  g_test_add_func("/record/trace/clock-snapshots-waiting-in-memory-are-bounded",
                  test_clock_snapshots_waiting_in_memory_are_bounded);
  g_test_add_func("/record/trace/one-sequence-per-thread", test_one_sequence_per_thread);
  g_test_add_func("/record/trace/track-of-another-thread-is-its-own-track",
                  test_track_of_another_thread_is_its_own_track);
  g_test_add_func("/record/trace/strict-nesting/end-before-its-begin", test_end_before_its_begin);
  g_test_add_func("/record/trace/strict-nesting/more-ends-than-begins", test_more_ends_than_begins);
  return g_test_run();
}
