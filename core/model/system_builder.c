/* Rows of system traces from the merged stream (see system_builder.h). */
#include "model/system_builder.h"

#include <glib.h>

#include "base/vec.h"

typedef TM_VEC(uint32_t) id_vec;

struct tm_system_builder {
  tm_model *model;
  /* Actual surface frame slices by display frame token, until the actual
   * display frame of that token begins. */
  GHashTable *surfaces_by_display_token; /* int64* -> id_vec* */
};

static void id_vec_free(gpointer p) {
  id_vec *v = p;
  tm_vec_free(v);
  g_free(v);
}

tm_system_builder *system_builder_new(tm_model *model) {
  tm_system_builder *builder = g_new0(tm_system_builder, 1);
  builder->model = model;
  builder->surfaces_by_display_token =
      g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, id_vec_free);
  return builder;
}

void system_builder_free(tm_system_builder *builder) {
  if (!builder)
    return;
  g_hash_table_destroy(builder->surfaces_by_display_token);
  g_free(builder);
}

static void add_flow(tm_model *model, uint32_t out, uint32_t in) {
  tm_flow_row row = {
      .slice_out = out,
      .slice_in = in,
      .trace_id = TM_NULL_INT64,
      .arg_set_id = 0,
  };
  tm_vec_push(&model->flows, row);
}

void system_builder_frame_slice(tm_system_builder *builder, const tm_event *ev,
                                uint32_t slice_id) {
  tm_model *model = builder->model;
  if (!(ev->flags & TM_EVENT_HAS_FRAME) || ev->u.x.extra >= model->frame_timeline.len)
    return;
  tm_frame_timeline_row *frame = &model->frame_timeline.data[ev->u.x.extra];
  frame->slice_id = slice_id;
  if (!frame->is_actual || frame->display_frame_token == TM_NULL_INT64)
    return;
  int64_t token = frame->display_frame_token;
  GHashTable *waiting = builder->surfaces_by_display_token;
  if (frame->surface_frame_token != TM_NULL_INT64) {
    /* An app's frame: it waits for SurfaceFlinger's frame of its token. */
    id_vec *surfaces = g_hash_table_lookup(waiting, &token);
    if (!surfaces) {
      surfaces = g_new0(id_vec, 1);
      g_hash_table_insert(waiting, g_memdup2(&token, sizeof token), surfaces);
    }
    tm_vec_push(surfaces, slice_id);
    return;
  }
  id_vec *surfaces = g_hash_table_lookup(waiting, &token);
  if (!surfaces)
    return;
  for (size_t i = 0; i < surfaces->len; i++)
    add_flow(model, surfaces->data[i], slice_id);
  g_hash_table_remove(waiting, &token);
}

void system_builder_push(tm_system_builder *builder, const tm_event *ev) {
  tm_model *model = builder->model;
  switch (ev->kind) {
  case TM_EVENT_FTRACE_RAW: {
    tm_ftrace_event_row row = {
        .ts = ev->ts,
        .name = ev->name_id,
        .ucpu = ev->track_id,
        .utid = ev->category_id,
        .arg_set_id = ev->arg_set_id,
    };
    tm_vec_push(&model->ftrace_events, row);
    break;
  }
  case TM_EVENT_ANDROID_LOG: {
    tm_android_log_row row = {
        .ts = ev->ts,
        .utid = ev->category_id,
        .prio = ev->track_id,
        .tag = ev->name_id,
        .msg = (tm_str_id)ev->u.dur_ns,
        .arg_set_id = ev->arg_set_id,
    };
    tm_vec_push(&model->android_logs, row);
    break;
  }
  case TM_EVENT_THREAD_LIFETIME:
    if (ev->category_id < model->threads.len) {
      tm_thread_row *thread = &model->threads.data[ev->category_id];
      if (ev->u.dur_ns)
        thread->end_ts = ev->ts;
      else
        thread->start_ts = ev->ts;
    }
    break;
  default:
    break;
  }
}
