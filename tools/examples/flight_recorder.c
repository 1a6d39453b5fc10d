/*
 * A flight recorder: trace all the time into a ring buffer, keep the last
 * moments when something goes wrong.
 *
 *   record_flight_recorder OUTPUT.pftrace [CONFIG.pbtx]
 *
 * The program renders "frames" (a slice each, with nested work) at a
 * steady pace. The config (config/flight_recorder.pbtx, or the same
 * built in when CONFIG is not given) keeps them in a small RING_BUFFER
 * and declares a STOP_TRACING trigger "missed_frame": when a frame misses
 * its deadline (simulated: frame 300 takes 6 ms instead of 1), the
 * program fires it, and the session stops stop_delay_ms later, keeping
 * only what the ring still holds, the moments before the problem.
 *
 * The trigger can come from anywhere: this program fires it itself with
 * tmr_trigger(); with FLIGHT_RECORDER_WAIT=1 in the environment it never
 * does, and another process fires it by name, e.g.
 *   record_fire_trigger missed_frame
 * If no trigger comes within trigger_timeout_ms the trace holds no events
 * ("no data is returned", as perfetto does).
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracemerge/record.h>

static tmr_category cat_frame = TMR_CATEGORY("frame", NULL);

static const char default_config[] =
    "buffers { size_kb: 32 fill_policy: RING_BUFFER }\n"
    "data_sources { config { name: \"track_event\" } }\n"
    "trigger_config {\n"
    "  trigger_mode: STOP_TRACING\n"
    "  triggers { name: \"missed_frame\" stop_delay_ms: 100 }\n"
    "  trigger_timeout_ms: 30000\n"
    "}\n";

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s OUTPUT.pftrace [CONFIG.pbtx]\n", argv[0]);
    return 2;
  }
  GError *error = NULL;
  tmr_config *config =
      argc == 3 ? tmr_config_load(argv[2], TMR_CONFIG_AUTO, &error)
                : tmr_config_parse_text(default_config, sizeof default_config - 1,
                                        "(built-in flight recorder config)", &error);
  if (!config) {
    fprintf(stderr, "%s\n", error->message);
    return 1;
  }
  tmr_session_options options = {.output_path = argv[1], .producer_name = "flight_recorder"};
  tmr_session *session = tmr_session_new(config, &options, &error);
  if (!session || !tmr_session_start(session, &error)) {
    fprintf(stderr, "%s\n", error->message);
    return 1;
  }
  bool wait_for_outside = g_strcmp0(g_getenv("FLIGHT_RECORDER_WAIT"), "1") == 0;
  tmr_track frame_time = tmr_track_create(&(tmr_track_desc){
      .name = "frame time", .parent = tmr_process_track(), .is_counter = true,
      .unit = TMR_UNIT_TIME_NS});
  tmr_writer *w = tmr_this_thread();
  tmr_writer_set_thread_name(w, "render");
  /* Frames every 2 ms or so; frame 300 is slow. Keep rendering until the
   * session has stopped (the trigger's stop_delay_ms later). */
  const int slow_frame = 300;
  for (int frame = 0; !tmr_session_wait(session, 0); frame++) {
    int64_t start = g_get_monotonic_time();
    tmr_arg args[] = {TMR_ARG_INT("frame", frame)};
    tmr_event_extras x = {.args = args, .n_args = 1};
    tmr_event(w, TMR_SLICE_BEGIN, TMR_THREAD_TRACK, &cat_frame, "frame", TMR_NOW, &x);
    tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_frame, "layout", TMR_NOW);
    g_usleep(300);
    tmr_slice_end(w, TMR_THREAD_TRACK, &cat_frame, TMR_NOW);
    tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_frame, "draw", TMR_NOW);
    g_usleep(frame == slow_frame ? 6000 : 500);
    tmr_slice_end(w, TMR_THREAD_TRACK, &cat_frame, TMR_NOW);
    tmr_slice_end(w, TMR_THREAD_TRACK, &cat_frame, TMR_NOW);
    int64_t took_us = g_get_monotonic_time() - start;
    tmr_counter_int(w, frame_time, &cat_frame, TMR_NOW, took_us * 1000);
    if (frame == slow_frame && !wait_for_outside) {
      tmr_arg late[] = {TMR_ARG_INT("took_us", took_us)};
      tmr_event_extras y = {.args = late, .n_args = 1};
      tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_frame, "missed frame", TMR_NOW, &y);
      tmr_trigger("missed_frame");
    }
    g_usleep(1000);
    if (frame > 100000)
      break; /* a config without a trigger: do not run forever */
  }
  bool ok = tmr_session_stop(session, &error);
  if (!ok)
    fprintf(stderr, "%s\n", error->message);
  else
    printf("%s: stopped by %s, %" G_GUINT64_FORMAT " bytes\n", argv[1],
           tmr_session_borrow_stop_reason(session), tmr_session_bytes_written(session));
  tmr_session_free(session);
  tmr_config_free(config);
  return ok ? 0 : 1;
}
