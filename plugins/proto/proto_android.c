/* Logcat, packages and the frame timeline (see proto_android.h). */
#include "proto_android.h"

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "proto_context.h"
#include "proto_map.h"
#include "system.pb-c.h"

/* FrameTimelineEvent.JankType bits. */
enum {
  JANK_UNSPECIFIED = 0,
  JANK_NONE = 1,
  JANK_SF_SCHEDULING = 2,
  JANK_PREDICTION_ERROR = 4,
  JANK_DISPLAY_HAL = 8,
  JANK_SF_CPU_DEADLINE_MISSED = 16,
  JANK_SF_GPU_DEADLINE_MISSED = 32,
  JANK_APP_DEADLINE_MISSED = 64,
  JANK_BUFFER_STUFFING = 128,
  JANK_UNKNOWN = 256,
  JANK_SF_STUFFING = 512,
  JANK_DROPPED = 1024,
};

#define PRESENT_DROPPED 4

/* Timestamps this close to the int64 limits are a producer's mistake
 * (trace_processor drops them too). */
#define BAD_TIMESTAMP (INT64_MAX - 10000000000LL)

typedef struct surface_token {
  tm_process_ref process;
  int64_t token;
} surface_token;

struct proto_android {
  proto_context *ctx;
  /* frame cookie -> (process ref << 1 | actual) + 1 of its start, 0 once
   * ended: the track set its end goes to. */
  proto_map cookie_sets;
  GHashTable *expected_seen;  /* surface_token* seen in an expected surface frame */
  tm_str_id key[16];          /* arg keys, interned at first use */
};

enum arg_key {
  KEY_SURFACE_TOKEN,
  KEY_DISPLAY_TOKEN,
  KEY_PRESENT_TYPE,
  KEY_ON_TIME_FINISH,
  KEY_GPU_COMPOSITION,
  KEY_JANK_TYPE,
  KEY_JANK_SEVERITY,
  KEY_LAYER_NAME,
  KEY_PREDICTION_TYPE,
  KEY_IS_BUFFER,
  KEY_COUNT,
};

static const char *const key_names[KEY_COUNT] = {
    "Surface frame token", "Display frame token", "Present type", "On time finish",
    "GPU composition",     "Jank type",           "Jank severity type", "Layer name",
    "Prediction type",     "Is Buffer?",
};

static guint surface_token_hash(gconstpointer p) {
  const surface_token *t = p;
  uint64_t h = (uint64_t)t->token * 0x9E3779B97F4A7C15ull ^ t->process;
  return (guint)(h ^ (h >> 32));
}

static gboolean surface_token_equal(gconstpointer a, gconstpointer b) {
  const surface_token *x = a, *y = b;
  return x->process == y->process && x->token == y->token;
}

proto_android *proto_android_new(proto_context *ctx) {
  proto_android *a = g_new0(proto_android, 1);
  a->ctx = ctx;
  a->expected_seen = g_hash_table_new_full(surface_token_hash, surface_token_equal, g_free, NULL);
  return a;
}

void proto_android_free(proto_android *a) {
  if (!a)
    return;
  proto_map_free(&a->cookie_sets);
  g_hash_table_destroy(a->expected_seen);
  g_free(a);
}

static tm_str_id key_of(proto_android *a, enum arg_key k) {
  if (!a->key[k])
    a->key[k] = proto_intern_cstr(a->ctx, key_names[k]);
  return a->key[k];
}

static void arg_int(proto_android *a, enum arg_key k, int64_t v) {
  a->ctx->s->args_add(a->ctx->host, key_of(a, k),
                      (tm_arg_value){.type = TM_ARG_INT, .u.int_value = v});
}

static void arg_str(proto_android *a, enum arg_key k, tm_str_id v) {
  a->ctx->s->args_add(a->ctx->host, key_of(a, k),
                      (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = v});
}

/* --- logcat ---------------------------------------------------------------- */

/* LID_EVENTS messages have no text: their args, "name=value" joined by
 * spaces, are the message. */
static tm_str_id event_log_message(proto_context *ctx,
                                   const Perfetto__Protos__AndroidLogPacket__LogEvent *e) {
  GString *text = g_string_new(NULL);
  for (size_t i = 0; i < e->n_args; i++) {
    const Perfetto__Protos__AndroidLogPacket__LogEvent__Arg *arg = e->args[i];
    if (i)
      g_string_append_c(text, ' ');
    g_string_append_printf(text, "%s=", arg->name ? arg->name : "");
    switch (arg->value_case) {
    case PERFETTO__PROTOS__ANDROID_LOG_PACKET__LOG_EVENT__ARG__VALUE_INT_VALUE:
      g_string_append_printf(text, "%" PRId64, arg->int_value);
      break;
    case PERFETTO__PROTOS__ANDROID_LOG_PACKET__LOG_EVENT__ARG__VALUE_FLOAT_VALUE:
      g_string_append_printf(text, "%f", (double)arg->float_value);
      break;
    case PERFETTO__PROTOS__ANDROID_LOG_PACKET__LOG_EVENT__ARG__VALUE_STRING_VALUE:
      g_string_append_printf(text, "\"%s\"", arg->string_value ? arg->string_value : "");
      break;
    default:
      break;
    }
  }
  tm_str_id id = proto_intern(ctx, text->str, text->len);
  g_string_free(text, TRUE);
  return id;
}

bool proto_android_read_log(proto_android *a, proto_machine *machine, const uint8_t *data,
                            size_t len) {
  proto_context *ctx = a->ctx;
  Perfetto__Protos__AndroidLogPacket *packet =
      perfetto__protos__android_log_packet__unpack(NULL, len, data);
  if (!packet)
    return false;
  tm_clock_ref realtime = proto_clock_get(ctx, machine, 0, TM_CLOCK_REALTIME)->ref;
  for (size_t i = 0; i < packet->n_events && ctx->host_has_system; i++) {
    const Perfetto__Protos__AndroidLogPacket__LogEvent *e = packet->events[i];
    if (!e->has_timestamp) {
      proto_count(ctx, "android_log_missing_timestamp");
      continue;
    }
    tm_thread_ref thread = 0;
    if (e->has_tid)
      thread = ctx->s->thread(ctx->host, machine->ref, e->has_pid ? e->pid : -1, e->tid);
    tm_str_id tag = e->tag ? proto_intern_cstr(ctx, e->tag) : 0;
    tm_str_id msg = e->log_id == PERFETTO__PROTOS__ANDROID_LOG_ID__LID_EVENTS
                        ? event_log_message(ctx, e)
                        : (e->message ? proto_intern_cstr(ctx, e->message) : 0);
    ctx->s->android_log(ctx->host, realtime, (int64_t)e->timestamp, thread,
                        e->has_prio ? (uint32_t)e->prio : 0, tag, msg, TM_NO_ARGS);
  }
  /* Totals since the session began: the last packet's are the ones. */
  if (packet->stats && ctx->host_has_system) {
    const Perfetto__Protos__AndroidLogPacket__Stats *st = packet->stats;
    proto_machine_stat_set(ctx, machine, "android_log_num_total", -1, (int64_t)st->num_total);
    proto_machine_stat_set(ctx, machine, "android_log_num_failed", -1, (int64_t)st->num_failed);
    proto_machine_stat_set(ctx, machine, "android_log_num_skipped", -1,
                           (int64_t)st->num_skipped);
  }
  perfetto__protos__android_log_packet__free_unpacked(packet, NULL);
  return true;
}

/* --- packages ------------------------------------------------------------- */

bool proto_android_read_packages(proto_android *a, proto_machine *machine,
                                 const uint8_t *data, size_t len) {
  proto_context *ctx = a->ctx;
  Perfetto__Protos__PackagesList *list = perfetto__protos__packages_list__unpack(NULL, len, data);
  if (!list)
    return false;
  if (list->has_error && list->error)
    proto_count(ctx, "packages_list_has_parse_errors");
  for (size_t i = 0; i < list->n_packages && ctx->host_has_system; i++) {
    const Perfetto__Protos__PackagesList__Package *p = list->packages[i];
    ctx->s->package(ctx->host, machine->ref, p->name ? proto_intern_cstr(ctx, p->name) : 0,
                    p->has_uid ? (int64_t)p->uid : INT64_MIN,
                    p->has_debuggable ? p->debuggable : -1,
                    p->has_profileable_from_shell ? p->profileable_from_shell : -1,
                    p->has_version_code ? p->version_code : INT64_MIN);
  }
  perfetto__protos__packages_list__free_unpacked(list, NULL);
  return true;
}

/* --- frame timeline ---------------------------------------------------------- */

static tm_str_id jank_type_string(proto_context *ctx, int32_t jank) {
  if (jank == JANK_UNSPECIFIED)
    return proto_intern_cstr(ctx, "Unspecified");
  if (jank == JANK_NONE)
    return proto_intern_cstr(ctx, "None");
  static const struct {
    int32_t bit;
    const char *name;
  } reasons[] = {
      {JANK_SF_SCHEDULING, "SurfaceFlinger Scheduling"},
      {JANK_PREDICTION_ERROR, "Prediction Error"},
      {JANK_DISPLAY_HAL, "Display HAL"},
      {JANK_SF_CPU_DEADLINE_MISSED, "SurfaceFlinger CPU Deadline Missed"},
      {JANK_SF_GPU_DEADLINE_MISSED, "SurfaceFlinger GPU Deadline Missed"},
      {JANK_APP_DEADLINE_MISSED, "App Deadline Missed"},
      {JANK_BUFFER_STUFFING, "Buffer Stuffing"},
      {JANK_UNKNOWN, "Unknown Jank"},
      {JANK_SF_STUFFING, "SurfaceFlinger Stuffing"},
      {JANK_DROPPED, "Dropped Frame"},
  };
  GString *text = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(reasons); i++) {
    if (!(jank & reasons[i].bit))
      continue;
    if (text->len)
      g_string_append(text, ", ");
    g_string_append(text, reasons[i].name);
  }
  tm_str_id id = proto_intern(ctx, text->str, text->len);
  g_string_free(text, TRUE);
  return id;
}

static bool display_janky(int32_t jank) {
  if (jank == JANK_UNSPECIFIED || jank == JANK_NONE)
    return false;
  return (jank & (JANK_SF_SCHEDULING | JANK_PREDICTION_ERROR | JANK_DISPLAY_HAL |
                  JANK_SF_CPU_DEADLINE_MISSED | JANK_SF_GPU_DEADLINE_MISSED)) != 0;
}

static bool surface_janky(int32_t jank) {
  if (jank == JANK_UNSPECIFIED || jank == JANK_NONE)
    return false;
  return (jank & (JANK_APP_DEADLINE_MISSED | JANK_UNKNOWN)) != 0;
}

static tm_str_id present_type_string(proto_android *a, bool has, int32_t type) {
  static const char *const names[] = {"Unspecified Present", "On-time Present",
                                      "Late Present",        "Early Present",
                                      "Dropped Frame",       "Unknown Present"};
  if (has && (type < 1 || type > 5)) {
    proto_count(a->ctx, "frame_timeline_event_parser_errors");
    has = false;
  }
  return proto_intern_cstr(a->ctx, names[has ? type : 0]);
}

static tm_str_id prediction_type_string(proto_android *a, bool has, int32_t type) {
  static const char *const names[] = {"Unspecified Prediction", "Valid Prediction",
                                      "Expired Prediction", "Unknown Prediction"};
  if (has && (type < 1 || type > 3)) {
    proto_count(a->ctx, "frame_timeline_event_parser_errors");
    has = false;
  }
  return proto_intern_cstr(a->ctx, names[has ? type : 0]);
}

static tm_str_id severity_string(proto_android *a, bool has, int32_t severity, int32_t jank) {
  static const char *const names[] = {"Unknown", "None", "Partial", "Full"};
  /* Older traces have no severity: "None" for JANK_NONE, else "Unknown". */
  if (!has || severity < 0 || severity > 3)
    severity = jank == JANK_NONE ? 1 : 0;
  return proto_intern_cstr(a->ctx, names[severity]);
}

/* The slot of `cookie` in the (process, expected or actual) timeline track
 * set: frames of one process share its tracks as async slices do. */
static tm_track_ref timeline_slot(proto_android *a, tm_process_ref process, bool actual,
                                  int64_t cookie) {
  tm_track_desc desc = {
      TM_TRACK_DESC_INIT,
      .type = actual ? "android_actual_frame_timeline" : "android_expected_frame_timeline",
      .name = proto_intern_cstr(a->ctx, actual ? "Actual Timeline" : "Expected Timeline"),
      .process = process,
  };
  return a->ctx->s->track_async(a->ctx->host, &desc, (uint64_t)cookie, 0);
}

static void begin_frame(proto_android *a, const proto_timestamp *ts, tm_process_ref process,
                        bool actual, int64_t cookie, int64_t token,
                        tm_frame_timeline_fields *frame) {
  proto_context *ctx = a->ctx;
  char name[32];
  int n = snprintf(name, sizeof name, "%" PRId64, token);
  tm_slice_fields f = {
      TM_SLICE_FIELDS_INIT,
      .track = timeline_slot(a, process, actual, cookie),
      .clock = ts->clock,
      .ts = ts->ns,
      .name = proto_intern(ctx, name, (size_t)n),
      .args = ctx->s->args_commit(ctx->host),
  };
  frame->struct_size = sizeof *frame;
  ctx->s->frame_timeline_begin(ctx->host, &f, frame);
  proto_map_put(&a->cookie_sets, (uint64_t)cookie, ((uint32_t)process << 1 | actual) + 1);
}

static void frame_end(proto_android *a, const proto_timestamp *ts, int64_t cookie) {
  uint32_t started = 0;
  if (!proto_map_get(&a->cookie_sets, (uint64_t)cookie, &started) || started == 0) {
    proto_count(a->ctx, "frame_timeline_unpaired_end_event");
    return;
  }
  started--;
  tm_slice_fields f = {
      TM_SLICE_FIELDS_INIT,
      .track = timeline_slot(a, started >> 1, started & 1, cookie),
      .clock = ts->clock,
      .ts = ts->ns,
  };
  a->ctx->s->slice_end(a->ctx->host, &f);
  proto_map_put(&a->cookie_sets, (uint64_t)cookie, 0);
}

static tm_frame_timeline_fields frame_fields(bool actual, tm_process_ref process) {
  tm_frame_timeline_fields frame = {
      .struct_size = sizeof frame,
      .is_actual = actual,
      .display_frame_token = INT64_MIN,
      .surface_frame_token = INT64_MIN,
      .process = process,
      .on_time_finish = -1,
      .gpu_composition = -1,
  };
  return frame;
}

static void read_display_frame(proto_android *a, proto_machine *machine,
                               const proto_timestamp *ts,
                               const Perfetto__Protos__FrameTimelineEvent *e) {
  proto_context *ctx = a->ctx;
  bool actual = e->event_case ==
                PERFETTO__PROTOS__FRAME_TIMELINE_EVENT__EVENT_ACTUAL_DISPLAY_FRAME_START;
  int64_t cookie, token;
  int32_t pid;
  if (actual) {
    const Perfetto__Protos__FrameTimelineEvent__ActualDisplayFrameStart *s =
        e->actual_display_frame_start;
    if (!s->has_cookie || !s->has_token || !s->has_pid)
      goto missing;
    cookie = s->cookie, token = s->token, pid = s->pid;
  } else {
    const Perfetto__Protos__FrameTimelineEvent__ExpectedDisplayFrameStart *s =
        e->expected_display_frame_start;
    if (!s->has_cookie || !s->has_token || !s->has_pid)
      goto missing;
    cookie = s->cookie, token = s->token, pid = s->pid;
  }
  tm_process_ref process = ctx->s->process(ctx->host, machine->ref, pid);
  tm_frame_timeline_fields frame = frame_fields(actual, process);
  frame.display_frame_token = token;
  arg_int(a, KEY_DISPLAY_TOKEN, token);
  if (actual) {
    const Perfetto__Protos__FrameTimelineEvent__ActualDisplayFrameStart *s =
        e->actual_display_frame_start;
    int32_t jank = s->jank_type;
    frame.present_type = present_type_string(a, s->has_present_type, s->present_type);
    frame.jank_type = jank_type_string(ctx, jank);
    frame.jank_severity_type =
        severity_string(a, s->has_jank_severity_type, s->jank_severity_type, jank);
    frame.prediction_type = prediction_type_string(a, s->has_prediction_type, s->prediction_type);
    frame.on_time_finish = s->on_time_finish;
    frame.gpu_composition = s->gpu_composition;
    const char *tag = display_janky(jank)           ? "Self Jank"
                      : jank == JANK_SF_STUFFING    ? "SurfaceFlinger Stuffing"
                      : jank == JANK_DROPPED        ? "Dropped Frame"
                                                    : "No Jank";
    frame.jank_tag = proto_intern_cstr(ctx, tag);
    arg_str(a, KEY_PRESENT_TYPE, frame.present_type);
    arg_int(a, KEY_ON_TIME_FINISH, s->on_time_finish);
    arg_int(a, KEY_GPU_COMPOSITION, s->gpu_composition);
    arg_str(a, KEY_JANK_TYPE, frame.jank_type);
    arg_str(a, KEY_JANK_SEVERITY, frame.jank_severity_type);
    arg_str(a, KEY_PREDICTION_TYPE, frame.prediction_type);
  }
  begin_frame(a, ts, process, actual, cookie, token, &frame);
  return;
missing:
  proto_count(ctx, "frame_timeline_event_parser_errors");
}

static void read_surface_frame(proto_android *a, proto_machine *machine,
                               const proto_timestamp *ts,
                               const Perfetto__Protos__FrameTimelineEvent *e) {
  proto_context *ctx = a->ctx;
  bool actual = e->event_case ==
                PERFETTO__PROTOS__FRAME_TIMELINE_EVENT__EVENT_ACTUAL_SURFACE_FRAME_START;
  int64_t cookie, token, display_token;
  int32_t pid;
  const char *layer;
  if (actual) {
    const Perfetto__Protos__FrameTimelineEvent__ActualSurfaceFrameStart *s =
        e->actual_surface_frame_start;
    if (!s->has_cookie || !s->has_token || !s->has_display_frame_token || !s->has_pid)
      goto missing;
    cookie = s->cookie, token = s->token, display_token = s->display_frame_token;
    pid = s->pid, layer = s->layer_name;
  } else {
    const Perfetto__Protos__FrameTimelineEvent__ExpectedSurfaceFrameStart *s =
        e->expected_surface_frame_start;
    if (!s->has_cookie || !s->has_token || !s->has_display_frame_token || !s->has_pid)
      goto missing;
    cookie = s->cookie, token = s->token, display_token = s->display_frame_token;
    pid = s->pid, layer = s->layer_name;
  }
  tm_process_ref process = ctx->s->process(ctx->host, machine->ref, pid);
  if (!actual) {
    /* The expectations of a token are the same for every frame that uses
     * it: the first one is kept. */
    surface_token key = {process, token};
    if (g_hash_table_contains(a->expected_seen, &key))
      return;
    g_hash_table_add(a->expected_seen, g_memdup2(&key, sizeof key));
  }
  tm_frame_timeline_fields frame = frame_fields(actual, process);
  frame.display_frame_token = display_token;
  frame.surface_frame_token = token;
  frame.layer_name = layer ? proto_intern_cstr(ctx, layer) : 0;
  if (!actual) {
    /* trace_processor's expected surface frame records its own token
     * under "Display frame token". */
    arg_int(a, KEY_DISPLAY_TOKEN, token);
    if (frame.layer_name)
      arg_str(a, KEY_LAYER_NAME, frame.layer_name);
    begin_frame(a, ts, process, false, cookie, token, &frame);
    return;
  }
  const Perfetto__Protos__FrameTimelineEvent__ActualSurfaceFrameStart *s =
      e->actual_surface_frame_start;
  int32_t jank = s->jank_type;
  bool present_valid = s->has_present_type && s->present_type >= 1 && s->present_type <= 5;
  frame.present_type = present_type_string(a, s->has_present_type, s->present_type);
  frame.jank_type = jank_type_string(ctx, jank);
  frame.jank_severity_type =
      severity_string(a, s->has_jank_severity_type, s->jank_severity_type, jank);
  frame.prediction_type = prediction_type_string(a, s->has_prediction_type, s->prediction_type);
  frame.on_time_finish = s->on_time_finish;
  frame.gpu_composition = s->gpu_composition;
  const char *tag = surface_janky(jank)                 ? "Self Jank"
                    : display_janky(jank)               ? "Other Jank"
                    : jank == JANK_BUFFER_STUFFING      ? "Buffer Stuffing"
                    : present_valid && s->present_type == PRESENT_DROPPED ? "Dropped Frame"
                                                                          : "No Jank";
  frame.jank_tag = proto_intern_cstr(ctx, tag);
  const char *is_buffer = !s->has_is_buffer ? "Unspecified" : s->is_buffer ? "Yes" : "No";
  arg_int(a, KEY_SURFACE_TOKEN, token);
  arg_int(a, KEY_DISPLAY_TOKEN, display_token);
  if (frame.layer_name)
    arg_str(a, KEY_LAYER_NAME, frame.layer_name);
  arg_str(a, KEY_PRESENT_TYPE, frame.present_type);
  arg_int(a, KEY_ON_TIME_FINISH, s->on_time_finish);
  arg_int(a, KEY_GPU_COMPOSITION, s->gpu_composition);
  arg_str(a, KEY_JANK_TYPE, frame.jank_type);
  arg_str(a, KEY_JANK_SEVERITY, frame.jank_severity_type);
  arg_str(a, KEY_PREDICTION_TYPE, frame.prediction_type);
  arg_str(a, KEY_IS_BUFFER, proto_intern_cstr(ctx, is_buffer));
  begin_frame(a, ts, process, true, cookie, token, &frame);
  return;
missing:
  proto_count(ctx, "frame_timeline_event_parser_errors");
}

bool proto_android_read_frame(proto_android *a, proto_machine *machine,
                              const proto_timestamp *ts, const uint8_t *data, size_t len) {
  proto_context *ctx = a->ctx;
  Perfetto__Protos__FrameTimelineEvent *e =
      perfetto__protos__frame_timeline_event__unpack(NULL, len, data);
  if (!e)
    return false;
  if (!ctx->host_has_system)
    goto out;
  if (!ts || ts->ns < 0 || ts->ns >= BAD_TIMESTAMP) {
    proto_count(ctx, "frame_timeline_event_parser_errors");
    goto out;
  }
  switch (e->event_case) {
  case PERFETTO__PROTOS__FRAME_TIMELINE_EVENT__EVENT_EXPECTED_DISPLAY_FRAME_START:
  case PERFETTO__PROTOS__FRAME_TIMELINE_EVENT__EVENT_ACTUAL_DISPLAY_FRAME_START:
    read_display_frame(a, machine, ts, e);
    break;
  case PERFETTO__PROTOS__FRAME_TIMELINE_EVENT__EVENT_EXPECTED_SURFACE_FRAME_START:
  case PERFETTO__PROTOS__FRAME_TIMELINE_EVENT__EVENT_ACTUAL_SURFACE_FRAME_START:
    read_surface_frame(a, machine, ts, e);
    break;
  case PERFETTO__PROTOS__FRAME_TIMELINE_EVENT__EVENT_FRAME_END:
    if (e->frame_end->has_cookie)
      frame_end(a, ts, e->frame_end->cookie);
    else
      proto_count(ctx, "frame_timeline_event_parser_errors");
    break;
  default:
    proto_count(ctx, "frame_timeline_event_parser_errors");
    break;
  }
out:
  perfetto__protos__frame_timeline_event__free_unpacked(e, NULL);
  return true;
}
