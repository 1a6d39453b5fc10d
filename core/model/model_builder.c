/*
 * The model builder: turns the sorter's merged event stream into slice,
 * counter and flow rows.
 *
 * Invariants: events arrive in trace-time order, so slice ids follow the
 * merged timeline. Each track keeps a stack of open slices; an entry's
 * end_ts is the known end of a complete slice, or OPEN for a begun slice
 * not yet ended. Before any event at ts is applied to a track, complete
 * slices ending at or before ts are popped, so the stack always holds the
 * slices enclosing ts. Depth is the stack height at begin; parent_id is the
 * top of the stack.
 */
#include "model/model_builder.h"

#include <string.h>
#include <unistd.h>

#include "base/checked_math.h"
#include "model/async_tracks.h"
#include "model/profile_builder.h"
#include "model/sched_builder.h"
#include "model/system_builder.h"

#define OPEN INT64_MAX
#define MAX_DEPTH 512
_Static_assert(MAX_DEPTH <= UINT16_MAX, "tm_slice_row.depth is 16 bits");

typedef struct open_slice {
  uint32_t slice_id;
  int64_t end_ts;
} open_slice;

typedef struct pending_flow {
  uint64_t flow_id;
  uint32_t trace_id;
  uint32_t arg_set_id;
  uint8_t direction;
} pending_flow;

typedef struct track_state {
  TM_VEC(open_slice) stack;
  TM_VEC(pending_flow) next_begin_flows;
  uint32_t last_slice; /* TM_NULL_ID: most recent slice begun on the track */
} track_state;

typedef struct flow_key {
  uint64_t flow_id;
  uint32_t trace_id;
  uint32_t pad;
} flow_key;

struct tm_model_builder {
  tm_model_builder_inputs in;
  tm_model *model;
  TM_VEC(track_state *) tracks; /* by track id, created on first event */
  GHashTable *flows;            /* flow_key -> last slice id + 1 */
  tm_sched_builder *sched;      /* sched and thread_state rows */
  tm_system_builder *system;    /* raw, logs, lifetimes, frame timeline */
  /* Announced events not yet pushed, per EXTRA_REGION bytes of the extras
   * counted from extras_origin (the page holding extras[0]); NULL until an
   * event with an extra is announced. */
  uint32_t *extra_refs;
  uintptr_t extras_origin;
};

#define EXTRA_REGION ((uintptr_t)64 << 10)

static guint flow_key_hash(gconstpointer p) {
  const flow_key *k = p;
  uint64_t h = k->flow_id * 0x9E3779B97F4A7C15ull ^ k->trace_id;
  return (guint)(h ^ (h >> 32));
}

static gboolean flow_key_equal(gconstpointer a, gconstpointer b) {
  const flow_key *x = a, *y = b;
  return x->flow_id == y->flow_id && x->trace_id == y->trace_id;
}

tm_model_builder *model_builder_new(const tm_model_builder_inputs *inputs) {
  tm_model_builder *builder = g_new0(tm_model_builder, 1);
  builder->in = *inputs;
  builder->model = inputs->model;
  builder->flows = g_hash_table_new_full(flow_key_hash, flow_key_equal, g_free, NULL);
  builder->sched = sched_builder_new(inputs->model);
  builder->system = system_builder_new(inputs->model);
  return builder;
}

void model_builder_free(tm_model_builder *builder) {
  if (!builder)
    return;
  for (size_t i = 0; i < builder->tracks.len; i++) {
    track_state *state = builder->tracks.data[i];
    if (!state)
      continue;
    tm_vec_free(&state->stack);
    tm_vec_free(&state->next_begin_flows);
    g_free(state);
  }
  tm_vec_free(&builder->tracks);
  g_free(builder->extra_refs);
  g_hash_table_destroy(builder->flows);
  sched_builder_free(builder->sched);
  system_builder_free(builder->system);
  g_free(builder);
}

static track_state *state_of(tm_model_builder *builder, uint32_t track_id) {
  if (track_id >= builder->tracks.len) {
    size_t old = builder->tracks.len;
    tm_vec_reserve(&builder->tracks, (size_t)track_id + 1);
    memset(builder->tracks.data + old, 0,
           ((size_t)track_id + 1 - old) * sizeof(track_state *));
    builder->tracks.len = (size_t)track_id + 1;
  }
  track_state *state = builder->tracks.data[track_id];
  if (!state) {
    state = g_new0(track_state, 1);
    state->last_slice = TM_NULL_ID;
    builder->tracks.data[track_id] = state;
  }
  return state;
}

static void pop_finished(track_state *state, int64_t ts) {
  while (state->stack.len && state->stack.data[state->stack.len - 1].end_ts <= ts)
    state->stack.len--;
}

static void count(tm_model_builder *builder, const char *stat,
                  uint32_t machine_id, uint32_t trace_id) {
  stats_add(builder->in.stats, stat, TM_NULL_INT64, machine_id, trace_id, 1);
}

static const tm_event_extra *extra_of(tm_model_builder *builder,
                                      const tm_event *ev) {
  if (!(ev->flags & TM_EVENT_HAS_EXTRA))
    return NULL;
  return &builder->in.extras[ev->u.x.extra];
}

static void add_flow_row(tm_model_builder *builder, uint32_t out, uint32_t in,
                         uint64_t flow_id, uint32_t arg_set_id) {
  tm_flow_row row = {
      .slice_out = out,
      .slice_in = in,
      .trace_id = (int64_t)flow_id,
      .arg_set_id = arg_set_id,
  };
  tm_vec_push(&builder->model->flows, row);
}

/* Applies one flow binding to `slice_id`. */
static void bind_flow(tm_model_builder *builder, uint32_t slice_id,
                      uint64_t flow_id, uint32_t trace_id, uint8_t direction,
                      uint32_t arg_set_id, uint32_t machine_id) {
  flow_key key = {.flow_id = flow_id, .trace_id = trace_id};
  gpointer found = g_hash_table_lookup(builder->flows, &key);
  uint32_t previous = found ? GPOINTER_TO_UINT(found) - 1 : TM_NULL_ID;
  switch (direction) {
  case TM_FLOW_OUT:
    /* A start of a flow in flight is counted and ignored: the flow goes on
     * from where it was (trace_processor's FlowTracker::Begin). */
    if (previous != TM_NULL_ID)
      count(builder, "flow_duplicate_id", machine_id, trace_id);
    else
      g_hash_table_replace(builder->flows, g_memdup2(&key, sizeof key),
                           GUINT_TO_POINTER(slice_id + 1));
    break;
  case TM_FLOW_STEP:
  case TM_FLOW_CONTINUE:
    if (previous == TM_NULL_ID && direction == TM_FLOW_STEP)
      count(builder, "flow_step_without_start", machine_id, trace_id);
    else if (previous != TM_NULL_ID && previous != slice_id)
      add_flow_row(builder, previous, slice_id, flow_id, arg_set_id);
    g_hash_table_replace(builder->flows, g_memdup2(&key, sizeof key),
                         GUINT_TO_POINTER(slice_id + 1));
    break;
  default: /* TM_FLOW_IN, TM_FLOW_IN_KEEP */
    if (previous == TM_NULL_ID) {
      count(builder, "flow_end_without_start", machine_id, trace_id);
    } else {
      if (previous != slice_id)
        add_flow_row(builder, previous, slice_id, flow_id, arg_set_id);
      if (direction == TM_FLOW_IN)
        g_hash_table_remove(builder->flows, &key);
    }
    break;
  }
}

static void bind_pending_flows(tm_model_builder *builder, track_state *state,
                               uint32_t slice_id, uint32_t machine_id) {
  for (size_t i = 0; i < state->next_begin_flows.len; i++) {
    const pending_flow *f = &state->next_begin_flows.data[i];
    bind_flow(builder, slice_id, f->flow_id, f->trace_id, f->direction,
              f->arg_set_id, machine_id);
  }
  state->next_begin_flows.len = 0;
}

/* Appends the slice row and pushes it on the track's stack; returns its id
 * or TM_NULL_ID if dropped. */
static uint32_t open_slice_row(tm_model_builder *builder, track_state *state,
                               const tm_event *ev, uint32_t track_id,
                               int64_t dur, uint32_t machine_id,
                               uint32_t trace_id) {
  if (state->stack.len >= MAX_DEPTH) {
    count(builder, "slice_max_depth_exceeded", machine_id, trace_id);
    return TM_NULL_ID;
  }
  uint32_t slice_id = model_add_slice(
      builder->model, ev->ts, dur, track_id, ev->category_id, ev->name_id,
      (uint32_t)state->stack.len,
      state->stack.len ? state->stack.data[state->stack.len - 1].slice_id : TM_NULL_ID,
      ev->arg_set_id);
  const tm_event_extra *extra = extra_of(builder, ev);
  if (extra) {
    int64_t thread_dur =
        ev->kind == TM_EVENT_SLICE_COMPLETE ? extra->thread_dur : TM_NULL_INT64;
    if (extra->thread_ts != TM_NULL_INT64 || thread_dur != TM_NULL_INT64)
      model_slice_set_thread_time(builder->model, slice_id, extra->thread_ts,
                                  thread_dur);
  }
  /* Zero-length slices enclose nothing, so they never go on the stack.
   * A complete slice's end was checked to fit by on_complete(). */
  if (dur != 0) {
    open_slice entry = {slice_id, dur < 0 ? OPEN : tm_saturating_add(ev->ts, dur)};
    tm_vec_push(&state->stack, entry);
  }
  state->last_slice = slice_id;
  bind_pending_flows(builder, state, slice_id, machine_id);
  return slice_id;
}

static void on_complete(tm_model_builder *builder, const tm_event *ev,
                        uint32_t track_id, uint32_t machine_id,
                        uint32_t trace_id) {
  int64_t dur = tm_event_dur(ev, builder->in.extras);
  if (dur < 0) {
    count(builder, "slice_negative_duration", machine_id, trace_id);
    return;
  }
  int64_t end_ts;
  if (!tm_checked_add(ev->ts, dur, &end_ts)) {
    count(builder, "slice_timestamp_overflow", machine_id, trace_id);
    return;
  }
  /* A complete slice that starts inside a sibling but ends after it cannot
   * nest: like trace_processor, move it to an overflow track. Bounded: each
   * level is a new track whose stack is shallower or empty. */
  for (int level = 0; level < MAX_DEPTH; level++) {
    track_state *state = state_of(builder, track_id);
    pop_finished(state, ev->ts);
    const open_slice *top =
        state->stack.len ? &state->stack.data[state->stack.len - 1] : NULL;
    if (!top || top->end_ts == OPEN || end_ts <= top->end_ts) {
      open_slice_row(builder, state, ev, track_id, dur, machine_id,
                     trace_id);
      return;
    }
    count(builder, "slice_spill_overlapping_complete_event", machine_id, trace_id);
    track_id = builder->in.overflow_track(builder->in.overflow_ctx, track_id);
  }
  count(builder, "slice_drop_overlapping_complete_event", machine_id, trace_id);
}

static bool end_matches(const tm_model *model, uint32_t slice_id,
                        const tm_event *ev) {
  const tm_slice_row *slice = &model->slices.data[slice_id];
  if (ev->category_id && model_slice_category(model, slice_id) != ev->category_id)
    return false;
  if (ev->name_id && slice->name && slice->name != ev->name_id)
    return false;
  return true;
}

/* Appends the end event's args to the slice's set (a new set if it had
 * none). The end's set was committed in one piece, so its rows are
 * consecutive from arg_set_first_row. */
static void merge_end_args(tm_model *model, tm_slice_row *slice,
                           uint32_t end_set) {
  size_t first, end;
  if (!end_set || !model_arg_set_first_rows(model, end_set, &first, &end))
    return;
  if (!slice->arg_set_id) {
    slice->arg_set_id = end_set;
    return;
  }
  for (size_t row = first; row < end; row++)
    model_copy_arg(model, slice->arg_set_id, row);
}

static void on_end(tm_model_builder *builder, const tm_event *ev,
                   uint32_t track_id, uint32_t machine_id, uint32_t trace_id) {
  track_state *state = state_of(builder, track_id);
  pop_finished(state, ev->ts);
  tm_model *model = builder->model;
  for (size_t i = state->stack.len; i-- > 0;) {
    open_slice *entry = &state->stack.data[i];
    if (entry->end_ts != OPEN)
      continue;
    if (!end_matches(model, entry->slice_id, ev))
      continue;
    model_slice_set_dur(model, entry->slice_id,
                        ev->ts - model_slice_ts(model, entry->slice_id));
    tm_slice_row *slice = &model->slices.data[entry->slice_id];
    const tm_event_extra *extra = extra_of(builder, ev);
    int64_t begin_ts, begin_dur, thread_dur;
    /* Thread times are the reader's raw values: a difference that does
     * not fit leaves thread_dur unknown. */
    if (extra && extra->thread_ts != TM_NULL_INT64 &&
        model_slice_thread_time(model, entry->slice_id, &begin_ts, &begin_dur) &&
        begin_ts != TM_NULL_INT64 &&
        tm_checked_sub(extra->thread_ts, begin_ts, &thread_dur))
      model_slice_set_thread_time(model, entry->slice_id, begin_ts, thread_dur);
    merge_end_args(model, slice, ev->arg_set_id);
    /* Slices opened above the matched one and still open never end. */
    state->stack.len = i;
    return;
  }
  count(builder, "misplaced_end_event", machine_id, trace_id);
}

static void on_flow(tm_model_builder *builder, const tm_event *ev,
                    uint32_t track_id, uint32_t machine_id, uint32_t trace_id) {
  track_state *state = state_of(builder, track_id);
  uint8_t direction = ev->flags & TM_EVENT_FLOW_DIRECTION_MASK;
  if (ev->flags & TM_EVENT_FLOW_BIND_NEXT) {
    pending_flow pending = {ev->u.flow_id, trace_id, ev->arg_set_id, direction};
    tm_vec_push(&state->next_begin_flows, pending);
    return;
  }
  pop_finished(state, ev->ts);
  uint32_t slice_id = TM_NULL_ID;
  /* The slice that began at this very instant is the innermost one here,
   * even when it has no length and so is not on the stack. */
  if (state->last_slice != TM_NULL_ID &&
      model_slice_ts(builder->model, state->last_slice) == ev->ts)
    slice_id = state->last_slice;
  else if (state->stack.len)
    slice_id = state->stack.data[state->stack.len - 1].slice_id;
  if (slice_id == TM_NULL_ID) {
    count(builder, "flow_no_enclosing_slice", machine_id, trace_id);
    return;
  }
  bind_flow(builder, slice_id, ev->u.flow_id, trace_id, direction,
            ev->arg_set_id, machine_id);
}

static uintptr_t page_size(void) {
  static uintptr_t page;
  if (!page)
    page = (uintptr_t)sysconf(_SC_PAGESIZE);
  return page;
}

/* The region holding byte `at` of the extras. */
static size_t region_at(const tm_model_builder *builder, uintptr_t at) {
  return (at - builder->extras_origin) / EXTRA_REGION;
}

/* The regions holding the first and the last byte of the `n` extras from
 * `extra` on: an event's extras (two with TM_EVENT_DUR_IN_EXTRA) may
 * straddle two regions, and then count in both. */
static size_t extra_first_region(const tm_model_builder *builder, size_t extra) {
  return region_at(builder, (uintptr_t)&builder->in.extras[extra]);
}

static size_t extra_last_region(const tm_model_builder *builder, size_t extra, size_t n) {
  return region_at(builder, (uintptr_t)(&builder->in.extras[extra] + n) - 1);
}

/* The extras of `ev` lie within the array (a reader cannot name others:
 * the host made them). */
static bool extras_known(const tm_model_builder *builder, const tm_event *ev) {
  return (ev->flags & TM_EVENT_HAS_EXTRA) &&
         (size_t)ev->u.x.extra + tm_event_extra_count(ev) <= builder->in.n_extras;
}

void model_builder_expect(tm_model_builder *builder, const tm_event *ev) {
  if (!extras_known(builder, ev))
    return;
  if (!builder->extra_refs) {
    builder->extras_origin = (uintptr_t)builder->in.extras & ~(page_size() - 1);
    builder->extra_refs =
        g_new0(uint32_t, extra_last_region(builder, builder->in.n_extras - 1, 1) + 1);
  }
  size_t first = extra_first_region(builder, ev->u.x.extra);
  size_t last = extra_last_region(builder, ev->u.x.extra, tm_event_extra_count(ev));
  builder->extra_refs[first]++;
  if (last != first)
    builder->extra_refs[last]++;
}

/* One announced event of `region` was pushed: the last gives the region's
 * whole pages back (tm_memory_release keeps the block's first page and any
 * page the region shares with its neighbours). */
static void region_pushed(tm_model_builder *builder, size_t region) {
  uint32_t *refs = &builder->extra_refs[region];
  if (*refs == 0 || --*refs > 0)
    return;
  uintptr_t block_end =
      (uintptr_t)builder->in.extras + builder->in.n_extras * sizeof *builder->in.extras;
  uintptr_t from = builder->extras_origin + region * EXTRA_REGION;
  tm_memory_release(builder->in.extras, from, MIN(from + EXTRA_REGION, block_end));
}

/* The event `ev`, which has extras, was pushed. */
static void extras_pushed(tm_model_builder *builder, const tm_event *ev) {
  if (!builder->extra_refs || !extras_known(builder, ev))
    return;
  size_t first = extra_first_region(builder, ev->u.x.extra);
  size_t last = extra_last_region(builder, ev->u.x.extra, tm_event_extra_count(ev));
  region_pushed(builder, first);
  if (last != first)
    region_pushed(builder, last);
}

static void push_event(tm_model_builder *builder, const tm_event *ev,
                       uint32_t machine_id, uint32_t trace_id);

/* Every kind but the scheduling events model_builder_push() hands on. */
static __attribute__((noinline)) void push_other(tm_model_builder *builder,
                                                 const tm_event *ev,
                                                 uint32_t machine_id,
                                                 uint32_t trace_id) {
  push_event(builder, ev, machine_id, trace_id);
  if (ev->flags & TM_EVENT_HAS_EXTRA)
    extras_pushed(builder, ev);
}

void model_builder_push(void *opaque, const tm_event *ev, uint32_t machine_id,
                        uint32_t trace_id) {
  tm_model_builder *builder = opaque;
  /* Switches and wakeups, most of a system trace's events, straight to
   * the sched builder: a jump, without the register saves of the other
   * kinds' work (push_other, not inlined here). */
  if ((ev->kind == TM_EVENT_SCHED_SWITCH || ev->kind == TM_EVENT_SCHED_WAKING) &&
      !(ev->flags & TM_EVENT_HAS_EXTRA)) {
    (*builder->in.events_placed)++;
    sched_builder_push(builder->sched, ev);
    return;
  }
  push_other(builder, ev, machine_id, trace_id);
}

static void push_event(tm_model_builder *builder, const tm_event *ev,
                       uint32_t machine_id, uint32_t trace_id) {
  (*builder->in.events_placed)++;
  uint32_t track_id = ev->track_id;
  switch (ev->kind) {
  case TM_EVENT_SLICE_BEGIN: {
    if (track_id & TM_ASYNC_TRACK_BIT)
      track_id = async_tracks_resolve(builder->in.async_tracks,
                                      builder->model, track_id, TM_ASYNC_BEGIN);
    track_state *state = state_of(builder, track_id);
    pop_finished(state, ev->ts);
    uint32_t slice_id =
        open_slice_row(builder, state, ev, track_id, -1, machine_id, trace_id);
    if ((ev->flags & TM_EVENT_HAS_FRAME) && slice_id != TM_NULL_ID)
      system_builder_frame_slice(builder->system, ev, slice_id);
    break;
  }
  case TM_EVENT_SLICE_END:
    if (track_id & TM_ASYNC_TRACK_BIT)
      track_id = async_tracks_resolve(builder->in.async_tracks,
                                      builder->model, track_id, TM_ASYNC_END);
    on_end(builder, ev, track_id, machine_id, trace_id);
    break;
  case TM_EVENT_SLICE_COMPLETE:
    if (track_id & TM_ASYNC_TRACK_BIT)
      track_id = async_tracks_resolve(builder->in.async_tracks,
                                      builder->model, track_id, TM_ASYNC_INSTANT);
    on_complete(builder, ev, track_id, machine_id, trace_id);
    break;
  case TM_EVENT_COUNTER: {
    tm_counter_row row = {
        .ts = ev->ts,
        .value = ev->u.value,
        .track_id = ev->track_id,
        .arg_set_id = ev->arg_set_id,
    };
    tm_vec_push(&builder->model->counters, row);
    break;
  }
  case TM_EVENT_FLOW:
    if (track_id & TM_ASYNC_TRACK_BIT)
      track_id = async_tracks_resolve(builder->in.async_tracks,
                                      builder->model, track_id, TM_ASYNC_BIND);
    on_flow(builder, ev, track_id, machine_id, trace_id);
    break;
  case TM_EVENT_SCHED_SWITCH:
  case TM_EVENT_SCHED_WAKING:
    sched_builder_push(builder->sched, ev);
    break;
  case TM_EVENT_SAMPLE:
    profile_builder_push_sample(builder->model, ev);
    break;
  case TM_EVENT_SCHED_BLOCKED:
    sched_builder_push(builder->sched, ev);
    break;
  case TM_EVENT_FTRACE_RAW:
  case TM_EVENT_ANDROID_LOG:
  case TM_EVENT_THREAD_LIFETIME:
    system_builder_push(builder->system, ev);
    break;
  default:
    break;
  }
}
