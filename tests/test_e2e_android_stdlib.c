/*
 * End-to-end: the standard library's Android modules
 * (android.frames.timeline, android.startup.startups and what they
 * include) on system traces shaped as Android writes them: atrace slices
 * (ftrace print) of the UI thread, RenderThread and system_server, and
 * SurfaceFlinger's frame timeline (tests/data/proto/android_frames,
 * android_startups_sdk29, android_startups_sdk28). No trace of the corpus
 * has these events; the fixtures' comments say what each holds. Expected
 * rows are worked out beside each query from the fixture's events and the
 * module's rules (restated in core/sql/stdlib/android/).
 */
#include <glib.h>
#include <string.h>

#include "e2e_support.h"

static char *query(const char *name, const char *sql) {
  g_autofree char *path = e2e_proto_fixture_path(name);
  const char *inputs[] = {path, NULL};
  char *out = e2e_query(inputs, sql);
  /* Every query here is a two-statement script (INCLUDE, then SELECT):
   * the CLI separates statements' outputs with a blank line, as
   * trace_processor_shell does; the rows follow it. */
  g_assert_true(out[0] == '\n');
  memmove(out, out + 1, strlen(out));
  return out;
}

/* Slice ids are the order of the slices' starts (ties: file order):
 * 0 launchingActivity#1, 1 bindApplication, 2 activityStart,
 * 3 activityResume, 4 app doFrame 1001 (12-16 ms), 5/6 the app's expected
 * and actual 1001, 7 systemui doFrame 1001 (13-15), 8/9 its expected and
 * actual, 10 systemui DrawFrame 1001, 11 app DrawFrames 1001 (16.5-21),
 * 12 app doFrame 1002, 13/14 expected and actual 1002 (layer #12),
 * 15 actual 1002 (layer #14), 16/17 DrawFrames 1002, 18 the completed
 * instant, 19 doFrame 1003, 20 the resynced doFrame inside it, 21
 * DrawFrame 1003. utid 3 / 6: the app's main thread / RenderThread, 4 / 7
 * systemui's; upid 3 the app, 4 systemui. */
static void test_do_frame_and_draw_frame_slices_carry_their_vsync_id(void) {
  /* Every `Choreographer#doFrame <id>` but the resynced one (its second
   * word is not a number). */
  g_autofree char *do_frames = query("android_frames",
      "INCLUDE PERFETTO MODULE android.frames.timeline;"
      "SELECT * FROM android_frames_choreographer_do_frame ORDER BY id");
  e2e_assert_text(e2e_csv_rows(do_frames), "4,1001,3,3,12000000\n"
                                           "7,1001,4,4,13000000\n"
                                           "12,1002,3,3,28000000\n"
                                           "19,1003,3,3,45000000\n");
  /* DrawFrame and DrawFrames alike; 1002 is drawn twice. */
  g_autofree char *draws = query("android_frames",
      "INCLUDE PERFETTO MODULE android.frames.timeline;"
      "SELECT * FROM android_frames_draw_frame ORDER BY id");
  e2e_assert_text(e2e_csv_rows(draws), "10,1001,7,4\n"
                                       "11,1001,6,3\n"
                                       "16,1002,6,3\n"
                                       "17,1002,6,3\n"
                                       "21,1003,6,3\n");
}

/* Per (vsync, process): ts and dur from the actual timeline slice
 * (earliest start, longest dur over its layers); 1003 has none, so it
 * runs from its doFrame (45 ms) to the end of its DrawFrame (52 ms). The
 * app's 1001 and systemui's 1001 are different frames. Counts: 1002 has
 * two actual slices (two layers) and two DrawFrames; 1003 no timeline
 * slice. */
static void test_android_frames_pairs_slices_with_the_frame_timeline(void) {
  g_autofree char *frames = query("android_frames",
      "INCLUDE PERFETTO MODULE android.frames.timeline;"
      "SELECT * FROM android_frames ORDER BY ts");
  e2e_assert_text(frames,
      "\"frame_id\",\"ts\",\"dur\",\"do_frame_id\",\"draw_frame_id\","
      "\"actual_frame_timeline_id\",\"expected_frame_timeline_id\","
      "\"render_thread_utid\",\"ui_thread_utid\",\"actual_frame_timeline_count\","
      "\"expected_frame_timeline_count\",\"draw_frame_count\",\"upid\",\"process_name\"\n"
      "1001,12000000,21000000,4,11,6,5,6,3,1,1,1,3,\"com.example.app\"\n"
      "1001,13000000,13000000,7,10,9,8,7,4,1,1,1,4,\"com.android.systemui\"\n"
      "1002,28000000,9000000,12,16,14,13,6,3,2,1,2,3,\"com.example.app\"\n"
      "1003,45000000,7000000,19,21,\"[NULL]\",\"[NULL]\",6,3,0,0,1,3,\"com.example.app\"\n");
  /* The layer rows of 1002: each actual slice (layer id after its '#')
   * with each DrawFrame. */
  g_autofree char *layers = query("android_frames",
      "INCLUDE PERFETTO MODULE android.frames.timeline;"
      "SELECT ts, ts_end, draw_frame_id, actual_frame_timeline_id, layer_id "
      "FROM android_frames_layers WHERE frame_id = 1002 "
      "ORDER BY actual_frame_timeline_id, draw_frame_id");
  e2e_assert_text(e2e_csv_rows(layers), "28000000,37000000,16,14,12\n"
                                        "28000000,37000000,17,14,12\n"
                                        "29000000,38000000,16,15,14\n"
                                        "29000000,38000000,17,15,14\n");
  /* The first frame starting after 12 ms is systemui's (13 ms); after
   * 28 ms, the app's 1003 (45 ms). */
  g_autofree char *after = query("android_frames",
      "INCLUDE PERFETTO MODULE android.frames.timeline;"
      "SELECT a.frame_id, a.ts, b.frame_id, b.ts FROM "
      "android_first_frame_after(12000000) a, android_first_frame_after(28000000) b");
  e2e_assert_text(e2e_csv_rows(after), "1001,13000000,1003,45000000\n");
}

/* Without a frame timeline (Android 9 and older) doFrame and DrawFrame
 * carry no id: frames are numbered in time order, and a DrawFrame belongs
 * to the last doFrame of its process that started before it. Frame 2
 * ends with its second DrawFrame (21 ms). Slice ids: 0 launching,
 * 1 bindApplication, 2 activityStart, 3 activityResume, 4 doFrame,
 * 5 DrawFrame, 6 doFrame, 7 and 8 DrawFrame, 9 activityResume, 10
 * doFrame, 11 DrawFrame; utid 3 the main thread, 5 RenderThread. */
static void test_frames_without_a_timeline_follow_the_do_frames(void) {
  g_autofree char *frames = query("android_startups_sdk28",
      "INCLUDE PERFETTO MODULE android.frames.timeline;"
      "SELECT frame_id, ts, dur, do_frame_id, draw_frame_id, "
      "actual_frame_timeline_id, render_thread_utid, ui_thread_utid, "
      "draw_frame_count, upid FROM android_frames ORDER BY ts");
  e2e_assert_text(e2e_csv_rows(frames), "1,10000000,4000000,4,5,\"[NULL]\",5,3,1,3\n"
                                        "2,16000000,5000000,6,7,\"[NULL]\",5,3,2,3\n"
                                        "3,42000000,5000000,10,11,\"[NULL]\",5,3,1,3\n");
}

#define STARTUPS_SQL                                                          \
  "INCLUDE PERFETTO MODULE android.startup.startups;"                        \
  "SELECT s.*, p.upid, p.pid FROM android_startups s LEFT JOIN "             \
  "android_startup_processes p USING (startup_id) ORDER BY ts"

/* Android 13+: the startup is launchingActivity#1 (0.5-40 ms), its
 * package and type (cold) from the completed instant; the app's process
 * (package_list) ran it. */
static void test_startups_from_launching_activity_slices(void) {
  g_autofree char *startups = query("android_frames", STARTUPS_SQL);
  e2e_assert_text(startups, "\"startup_id\",\"ts\",\"ts_end\",\"dur\",\"package\","
                            "\"startup_type\",\"upid\",\"pid\"\n"
                            "1,500000,40000000,39500000,\"com.example.app\",\"cold\",3,100\n");
  /* Its threads, and sums over its slices: the doFrames of 1001 (4 ms)
   * and 1002 (3 ms) start in it, 1003 (45 ms) after it; on the main
   * thread only, '*Frame*' leaves the DrawFrames out. */
  g_autofree char *threads = query("android_frames",
      "INCLUDE PERFETTO MODULE android.startup.startups;"
      "SELECT group_concat(tid || ':' || thread_name || ':' || is_main_thread, ' ') "
      "FROM (SELECT * FROM android_startup_threads ORDER BY tid)");
  e2e_assert_text(e2e_csv_rows(threads), "\"100:example.app:1 110:RenderThread:0\"\n");
  g_autofree char *sums = query("android_frames",
      "INCLUDE PERFETTO MODULE android.startup.startups;"
      "SELECT android_sum_dur_for_startup_and_slice(1, 'Choreographer*'), "
      "android_sum_dur_for_startup_and_slice(1, '*Frame*'), "
      "android_sum_dur_on_main_thread_for_startup_and_slice(1, '*Frame*'), "
      "(SELECT group_concat(slice_name) FROM "
      "android_slices_for_startup_and_slice_name(1, 'activity*'))");
  /* '*Frame*' on all threads: doFrames 4 + 3 ms, DrawFrames 1001 (4.5)
   * and 1002 (2.5 + 1). */
  e2e_assert_text(e2e_csv_rows(sums),
                  "7000000,15000000,7000000,\"activityStart,activityResume\"\n");
}

/* Android 10-12: a startup per intent span (intent to next intent) that
 * holds one launching slice and a launch-finished slice: the 1 ms and
 * 50 ms intents (the 70 ms launch never finished; the 80 ms intent
 * launched nothing). Ids in time order; ts from the intent, ts_end from
 * the launching slice's end; type from the app's main thread: bind,
 * start and resume (cold), then start and resume (warm). upid 3: after
 * 0 (pid 0), 1 (init, the parent named by ppid) and 2 (system_server). */
static void test_startups_from_metrics_logger_slices(void) {
  g_autofree char *startups = query("android_startups_sdk29", STARTUPS_SQL);
  e2e_assert_text(e2e_csv_rows(startups),
                  "0,1000000,30000000,29000000,\"com.example.app\",\"cold\",3,100\n"
                  "1,50000000,60000000,10000000,\"com.example.app\",\"warm\",3,100\n");
}

/* Android 9 and older: the launching slice (1-20 ms, cold from the main
 * thread's bind, start and resume), and a hot start at the activityResume
 * at 40 ms that ends with the first frame after it (42 ms + 5 ms). */
static void test_startups_from_launching_slices_and_resumes(void) {
  g_autofree char *startups = query("android_startups_sdk28", STARTUPS_SQL);
  e2e_assert_text(e2e_csv_rows(startups),
                  "0,1000000,20000000,19000000,\"com.example.app\",\"cold\",3,100\n"
                  "1,40000000,47000000,7000000,\"com.example.app\",\"hot\",3,100\n");
}

/* The package of each process: package_list's entry for the app id of
 * its uid (uid 10100: user 0, app 10100). A fixture again: the one real
 * trace with a package list (nowinandroid, 850 packages) has no process
 * uids or names, so no process there can be matched to a package. */
static void test_process_metadata_names_the_package(void) {
  g_autofree char *rows = query("android_frames",
      "INCLUDE PERFETTO MODULE android.process_metadata;"
      "SELECT pid, process_name, uid, user_id, package_name, version_code "
      "FROM android_process_metadata WHERE package_name IS NOT NULL ORDER BY pid");
  e2e_assert_text(e2e_csv_rows(rows),
                  "100,\"com.example.app\",10100,0,\"com.example.app\",7\n"
                  "200,\"com.android.systemui\",10050,0,\"com.android.systemui\",\"[NULL]\"\n");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/android-stdlib/do-frame-and-draw-frame-slices-carry-their-vsync-id",
                  test_do_frame_and_draw_frame_slices_carry_their_vsync_id);
  g_test_add_func("/android-stdlib/android-frames-pairs-slices-with-the-frame-timeline",
                  test_android_frames_pairs_slices_with_the_frame_timeline);
  g_test_add_func("/android-stdlib/frames-without-a-timeline-follow-the-do-frames",
                  test_frames_without_a_timeline_follow_the_do_frames);
  g_test_add_func("/android-stdlib/startups-from-launching-activity-slices",
                  test_startups_from_launching_activity_slices);
  g_test_add_func("/android-stdlib/startups-from-metrics-logger-slices",
                  test_startups_from_metrics_logger_slices);
  g_test_add_func("/android-stdlib/startups-from-launching-slices-and-resumes",
                  test_startups_from_launching_slices_and_resumes);
  g_test_add_func("/android-stdlib/process-metadata-names-the-package",
                  test_process_metadata_names_the_package);
  return g_test_run();
}
