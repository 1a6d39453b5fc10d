/*
 * The system builder: the rows of a system trace that come from the merged
 * stream besides slices and scheduling — ftrace_event (raw), android_logs,
 * thread lifetimes — and the frame timeline's rows and flows.
 *
 * Payload of its events in the 40-byte tm_event (event.h):
 *
 *   TM_EVENT_SLICE_BEGIN flagged TM_EVENT_HAS_FRAME
 *     a frame timeline slice (on an async slot, model/async_tracks.h);
 *     `extra` = its model->frame_timeline row
 *   TM_EVENT_FTRACE_RAW
 *     track_id ucpu (TM_NULL_ID: none), category_id utid (TM_NULL_ID),
 *     name_id the event's name, arg_set_id its fields
 *   TM_EVENT_ANDROID_LOG
 *     track_id prio, category_id utid (TM_NULL_ID), name_id tag,
 *     u.dur_ns the message's string id, arg_set_id its args
 *   TM_EVENT_THREAD_LIFETIME
 *     category_id utid, u.dur_ns 0: start_ts, 1: end_ts
 *   (TM_EVENT_SCHED_BLOCKED is the scheduling builder's, sched_builder.h)
 *
 * Invariants: events arrive in trace-time order, so every actual surface
 * frame begun before the actual display frame of its display token gets
 * one flow into it, and none after (trace_processor's rule).
 */
#ifndef TM_SYSTEM_BUILDER_H
#define TM_SYSTEM_BUILDER_H

#include <stdint.h>

#include "model/model.h"
#include "model/event.h"

typedef struct tm_system_builder tm_system_builder;

/* `model` is borrowed for the builder's life. */
tm_system_builder *system_builder_new(tm_model *model);
void system_builder_free(tm_system_builder *builder);

/* Slice `slice_id` was begun by the frame-flagged event `ev`: links its
 * frame timeline row, and adds the flows of the frame timeline. */
void system_builder_frame_slice(tm_system_builder *builder, const tm_event *ev,
                                uint32_t slice_id);

/* TM_EVENT_FTRACE_RAW, TM_EVENT_ANDROID_LOG, TM_EVENT_THREAD_LIFETIME. */
void system_builder_push(tm_system_builder *builder, const tm_event *ev);

#endif /* TM_SYSTEM_BUILDER_H */
