/* Track descriptors and the tracks they become (see proto_tracks.h). */
#include "proto_tracks.h"

#include <stdio.h>
#include <string.h>

#include "proto_context.h"
#include "trace.pb-c.h"

/* Parent chains longer than this are treated as loops. */
#define MAX_TRACK_NESTING 64

/* sibling_merge_behavior values that change how a track merges (others,
 * and none, merge by name). */
enum {
  MERGE_NONE = PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_NONE,
  MERGE_BY_KEY =
      PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_BY_SIBLING_MERGE_KEY,
};


static proto_track *add_track(proto_machine *machine, uint64_t uuid) {
  proto_track fresh;
  memset(&fresh, 0, sizeof fresh);
  fresh.uuid = uuid;
  fresh.unit_multiplier = 1;
  uint32_t index = (uint32_t)machine->tracks.items.len;
  tm_vec_push(&machine->tracks.items, fresh);
  proto_map_put(&machine->tracks.index, uuid, index);
  return &machine->tracks.items.data[index];
}

static tm_str_id intern_opt(proto_context *ctx, const char *s) {
  return s ? proto_intern_cstr(ctx, s) : 0;
}

/* Joins `n` strings with spaces and interns the result. */
static tm_str_id intern_joined(proto_context *ctx, char **parts, size_t n, char sep) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += strlen(parts[i]) + 1;
  char *joined = proto_xrealloc(NULL, total + 1);
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    if (i)
      joined[at++] = sep;
    size_t len = strlen(parts[i]);
    memcpy(joined + at, parts[i], len);
    at += len;
  }
  tm_str_id id = proto_intern(ctx, joined, at);
  free(joined);
  return id;
}

static tm_process_ref read_process(proto_context *ctx, proto_machine *machine,
                                   const Perfetto__Protos__ProcessDescriptor *p) {
  const tm_host_services *s = ctx->s;
  tm_process_ref process = s->process(ctx->host, machine->ref, p->pid);
  const char *name = p->process_name;
  if (!name && p->n_cmdline > 0)
    name = p->cmdline[0];
  if (name && *name)
    s->process_set_name(ctx->host, process, proto_intern_cstr(ctx, name));
  if (p->n_cmdline > 0)
    s->process_set_cmdline(ctx->host, process,
                           intern_joined(ctx, p->cmdline, p->n_cmdline, ' '));
  return process;
}

static tm_thread_ref read_thread(proto_context *ctx, proto_machine *machine,
                                 struct proto_sequence *seq,
                                 const Perfetto__Protos__ThreadDescriptor *t) {
  const tm_host_services *s = ctx->s;
  tm_thread_ref thread = s->thread(ctx->host, machine->ref, t->pid, t->tid);
  if (t->thread_name && *t->thread_name)
    s->thread_set_name(ctx->host, thread, proto_intern_cstr(ctx, t->thread_name));
  /* The sequence's default thread, for events on no track (§1.9). */
  if (seq && seq->id != 0 && seq->state_valid) {
    seq->thread = thread;
    seq->thread_machine = machine->index;
    seq->thread_pid = t->pid;
    seq->thread_tid = t->tid;
    if (t->has_reference_timestamp_us)
      seq->timestamp_us = t->reference_timestamp_us;
    if (t->has_reference_thread_time_us)
      seq->thread_time_us = t->reference_thread_time_us;
  }
  return thread;
}

static void read_counter(proto_context *ctx, proto_track *track,
                         const Perfetto__Protos__CounterDescriptor *c) {
  static const char *const unit_names[] = {NULL, "ns", "count", "bytes"};
  track->is_counter = true;
  if (c->type == PERFETTO__PROTOS__COUNTER_DESCRIPTOR__BUILTIN_COUNTER_TYPE__COUNTER_THREAD_TIME_NS) {
    if (!track->name)
      track->name = proto_intern_cstr(ctx, "thread_time");
    track->unit = proto_intern_cstr(ctx, "ns");
    track->is_thread_time = true;
  } else if (c->type ==
             PERFETTO__PROTOS__COUNTER_DESCRIPTOR__BUILTIN_COUNTER_TYPE__COUNTER_THREAD_INSTRUCTION_COUNT) {
    if (!track->name)
      track->name = proto_intern_cstr(ctx, "thread_instruction_count");
    track->unit = proto_intern_cstr(ctx, "count");
  } else if (c->has_unit && c->unit > 0 && c->unit < 4) {
    track->unit = proto_intern_cstr(ctx, unit_names[c->unit]);
  } else {
    track->unit = intern_opt(ctx, c->unit_name);
  }
  if (c->n_categories > 0)
    track->categories = intern_joined(ctx, c->categories, c->n_categories, ',');
  if (c->has_unit_multiplier && c->unit_multiplier != 0)
    track->unit_multiplier = c->unit_multiplier;
  track->incremental = c->is_incremental;
  track->y_axis_share_key = intern_opt(ctx, c->y_axis_share_key);
}

static const char *descriptor_name(const Perfetto__Protos__TrackDescriptor *d) {
  if (d->name)
    return d->name;
  if (d->static_name)
    return d->static_name;
  return d->atrace_name;
}

bool proto_tracks_read_descriptor(proto_context *ctx, proto_machine *machine,
                                  struct proto_sequence *seq, const uint8_t *data,
                                  size_t len, uint64_t *uuid) {
  *uuid = 0;
  Perfetto__Protos__TrackDescriptor *d =
      perfetto__protos__track_descriptor__unpack(NULL, len, data);
  if (!d)
    return false;
  if (!d->has_uuid) {
    proto_count(ctx, "track_descriptor_missing_uuid");
    goto out;
  }
  /* uuid 0 is the implicit Default Track: its descriptor only carries
   * ordering hints we do not read. */
  if (d->uuid == 0)
    goto out;
  uint8_t kind = PROTO_TRACK_CUSTOM;
  if (d->thread) {
    if (!d->thread->has_pid || !d->thread->has_tid) {
      proto_count(ctx, "track_descriptor_thread_missing_pid_tid");
      goto out;
    }
    kind = PROTO_TRACK_THREAD;
  } else if (d->process) {
    if (!d->process->has_pid) {
      proto_count(ctx, "track_descriptor_process_missing_pid");
      goto out;
    }
    kind = PROTO_TRACK_PROCESS;
  }
  if (d->has_child_ordering && (d->child_ordering < 0 || d->child_ordering > 3)) {
    proto_count(ctx, "track_descriptor_invalid_child_ordering");
    goto out;
  }

  const char *name = descriptor_name(d);
  /* How the track merges with its siblings: NONE, BY_KEY with its key, or
   * (anything else) by name. */
  int32_t merge = d->has_sibling_merge_behavior ? (int32_t)d->sibling_merge_behavior : 0;
  if (merge != MERGE_NONE && merge != MERGE_BY_KEY)
    merge = 0;
  bool merge_none = merge == MERGE_NONE;
  /* The key is a oneof (a union in protobuf-c): its case says which
   * member is set. */
  tm_str_id merge_key = 0;
  if (merge == MERGE_BY_KEY &&
      d->sibling_merge_key_field_case ==
          PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_KEY_FIELD_SIBLING_MERGE_KEY) {
    merge_key = proto_intern_cstr(ctx, d->sibling_merge_key);
  } else if (merge == MERGE_BY_KEY &&
             d->sibling_merge_key_field_case ==
                 PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_KEY_FIELD_SIBLING_MERGE_KEY_INT) {
    char key[64];
    int n = snprintf(key, sizeof key, "sibling_merge_key_int:%llu",
                     (unsigned long long)d->sibling_merge_key_int);
    merge_key = proto_intern(ctx, key, (size_t)n);
  }
  proto_track *track = proto_tracks_find(machine, d->uuid);
  if (track && track->kind != PROTO_TRACK_UNDESCRIBED) {
    /* A later descriptor must describe the same track, merge included
     * (trace_processor's IsForSameTrack). */
    if (track->kind != kind || track->is_counter != (d->counter != NULL) ||
        track->sibling_merge_behavior != merge || track->sibling_merge_key != merge_key) {
      proto_count(ctx, "track_descriptor_conflicting_reservation");
      goto out;
    }
    /* The first name wins, except with merge behavior NONE. */
    if (name && (!track->name || merge_none) && !track->ref)
      track->name = proto_intern_cstr(ctx, name);
    *uuid = d->uuid;
    goto out;
  }
  /* Events already placed this uuid on a plain global track (they waited
   * longer than the bound): the descriptor names things but cannot turn
   * that track into another kind. */
  if (track && track->is_counter != (d->counter != NULL)) {
    proto_count(ctx, "track_descriptor_conflicting_reservation");
    goto out;
  }
  if (!track)
    track = add_track(machine, d->uuid);
  track->kind = kind;
  track->parent_uuid = d->has_parent_uuid ? d->parent_uuid : 0;
  track->disallow_merging = d->disallow_merging_with_system_tracks;
  if (name && !track->name)
    track->name = proto_intern_cstr(ctx, name);
  track->description = intern_opt(ctx, d->description);
  track->child_ordering = d->has_child_ordering ? (int32_t)d->child_ordering : 0;
  track->has_sibling_order_rank = d->has_sibling_order_rank;
  track->sibling_order_rank = d->sibling_order_rank;
  track->sibling_merge_behavior = merge;
  track->sibling_merge_key = merge_key;
  if (kind == PROTO_TRACK_THREAD) {
    track->thread = read_thread(ctx, machine, seq, d->thread);
    track->process = ctx->s->process(ctx->host, machine->ref, d->thread->pid);
  } else if (kind == PROTO_TRACK_PROCESS) {
    track->process = read_process(ctx, machine, d->process);
  }
  if (d->counter)
    read_counter(ctx, track, d->counter);
  *uuid = d->uuid;
out:
  perfetto__protos__track_descriptor__free_unpacked(d, NULL);
  return true;
}

bool proto_tracks_read_thread_descriptor(proto_context *ctx, proto_machine *machine,
                                         struct proto_sequence *seq, const uint8_t *data,
                                         size_t len) {
  Perfetto__Protos__ThreadDescriptor *t =
      perfetto__protos__thread_descriptor__unpack(NULL, len, data);
  if (!t)
    return false;
  /* Ignored while the sequence's state is invalid (docs/formats.md §1.3). */
  if (t->has_pid && t->has_tid && seq->state_valid)
    read_thread(ctx, machine, seq, t);
  perfetto__protos__thread_descriptor__free_unpacked(t, NULL);
  return true;
}

bool proto_tracks_read_process_descriptor(proto_context *ctx, proto_machine *machine,
                                          const uint8_t *data, size_t len) {
  Perfetto__Protos__ProcessDescriptor *p =
      perfetto__protos__process_descriptor__unpack(NULL, len, data);
  if (!p)
    return false;
  if (p->has_pid)
    read_process(ctx, machine, p);
  perfetto__protos__process_descriptor__free_unpacked(p, NULL);
  return true;
}

static const char *track_type(bool thread, bool process, bool counter) {
  if (thread)
    return counter ? "thread_counter_track_event" : "thread_track_event";
  if (process)
    return counter ? "process_counter_track_event" : "process_track_event";
  return counter ? "global_counter_track_event" : "global_track_event";
}

static const char *merged_track_type(bool thread, bool process) {
  if (thread)
    return "thread_merged_track_event";
  return process ? "process_merged_track_event" : "global_merged_track_event";
}

static void add_source_arg(proto_context *ctx, tm_track_ref ref, const char *key,
                           tm_arg_value value) {
  ctx->s->track_add_source_arg(ctx->host, ref, proto_intern_cstr(ctx, key), value);
}

static void add_source_string(proto_context *ctx, tm_track_ref ref, const char *key,
                              tm_str_id value) {
  if (value)
    add_source_arg(ctx, ref, key, (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = value});
}

/* Descriptor fields the track table has no column for. The merge
 * behavior and key are not among them: they shape the tracks instead
 * (trace_processor keeps no arg for them either). */
static void add_source_args(proto_context *ctx, const proto_track *track) {
  static const char *const orderings[] = {NULL, "lexicographic", "chronological",
                                          "explicit"};
  tm_track_ref ref = track->ref;
  add_source_string(ctx, ref, "description", track->description);
  if (track->child_ordering > 0 && track->child_ordering < 4)
    add_source_string(ctx, ref, "child_ordering",
                      proto_intern_cstr(ctx, orderings[track->child_ordering]));
  if (track->has_sibling_order_rank)
    add_source_arg(
        ctx, ref, "sibling_order_rank",
        (tm_arg_value){.type = TM_ARG_INT, .u.int_value = track->sibling_order_rank});
  add_source_string(ctx, ref, "y_axis_share_key", track->y_axis_share_key);
  add_source_string(ctx, ref, "categories", track->categories);
}

tm_track_ref proto_tracks_intern(proto_context *ctx, proto_machine *machine,
                                 const tm_track_desc *desc) {
  tm_track_desc on_machine = *desc;
  on_machine.machine = machine->ref;
  return ctx->s->track_intern(ctx->host, &on_machine);
}

/* The slot of `cookie` in a set of merged tracks: the tracks of one scope
 * and parent uuid that share a name (or merge key) share tracks, split
 * only where their slices overlap (docs/formats.md §1.9). 0 on a host
 * without track_async (then each uuid keeps its own track). */
static tm_track_ref merged_slot(proto_context *ctx, proto_machine *machine,
                                const tm_track_desc *set, uint64_t cookie) {
  if (!TM_HOST_HAS(ctx->s, track_async) || !ctx->s->track_async)
    return 0;
  tm_track_desc on_machine = *set;
  on_machine.machine = machine->ref;
  return ctx->s->track_async(ctx->host, &on_machine, cookie, 0);
}

tm_track_ref proto_tracks_resolve_slow_(proto_context *ctx, proto_machine *machine,
                                        proto_track *track, tm_str_id event_name) {
  if (track->ref)
    return track->ref;
  if (track->resolving)
    return 0;
  track->resolving = true;
  const tm_host_services *s = ctx->s;
  uint64_t uuid = track->uuid;
  /* The parent's track first, whatever the child: trace_processor interns
   * a described parent whenever it interns a child (TrackEventTracker's
   * InternDescriptorTrackImpl), so a process descriptor whose thread
   * descriptors name it as parent has its process track even if no event
   * is on it. A parent is interned without an event name. A thread or
   * process parent scopes the child without being its parent in the track
   * table; only a custom parent is. */
  proto_track *parent =
      track->parent_uuid ? proto_tracks_find(machine, track->parent_uuid) : NULL;
  if (parent && parent->kind == PROTO_TRACK_UNDESCRIBED)
    parent = NULL;
  tm_track_ref parent_ref = 0;
  if (parent) {
    parent_ref = proto_tracks_resolve(ctx, machine, parent, 0);
    if (!parent_ref) {
      track->resolving = false;
      return 0; /* a loop of parents */
    }
  }
  bool root = false;
  switch (track->kind) {
  case PROTO_TRACK_THREAD:
    root = true;
    track->scope_thread = track->thread;
    if (!track->is_counter && !track->disallow_merging) {
      track->ref = s->track_thread(ctx->host, track->thread);
      goto done;
    }
    parent_ref = 0;
    break;
  case PROTO_TRACK_PROCESS:
    root = true;
    track->scope_process = track->process;
    parent_ref = 0;
    break;
  case PROTO_TRACK_UNDESCRIBED:
    parent_ref = 0;
    break;
  default:
    if (!parent) {
      break;
    } else if (parent->kind == PROTO_TRACK_THREAD) {
      track->scope_thread = parent->thread;
      parent_ref = 0;
    } else if (parent->kind == PROTO_TRACK_PROCESS) {
      track->scope_process = parent->process;
      parent_ref = 0;
    } else {
      track->scope_thread = parent->scope_thread;
      track->scope_process = parent->scope_process;
    }
    break;
  }
  /* A child track (below a process, thread or custom track) without a
   * name keeps a NULL name column (issue 10 §3; docs/formats.md §1.9):
   * its first event's name only says which siblings it merges with. A
   * track of no parent without a name is still named after its first
   * event, as trace_processor's TrackEventTracker names it. */
  bool nameless_child = parent && !track->name && !root;
  /* A slice track below the root of its scope merges with its siblings
   * unless its descriptor says NONE: by merge key, else by name (its
   * descriptor's, else its first event's), as trace_processor's
   * TrackEventTracker merges them since it reads sibling_merge_behavior.
   * The parent's uuid is part of the set: siblings only. */
  if (!root && !track->is_counter && track->sibling_merge_behavior != MERGE_NONE) {
    bool by_key = track->sibling_merge_behavior == MERGE_BY_KEY;
    tm_track_desc set = {
        TM_TRACK_DESC_INIT,
        .type = merged_track_type(track->scope_thread != 0, track->scope_process != 0),
        .name = track->name ? track->name : event_name,
        .nameless = nameless_child,
        .thread = track->scope_thread,
        .process = track->scope_thread ? 0 : track->scope_process,
        .parent = parent_ref,
        .set_key = track->parent_uuid,
        /* A key-merged track without a key merges with its keyless
         * siblings: "" stands for the missing key. */
        .merge_key = by_key ? (track->sibling_merge_key ? track->sibling_merge_key
                                                        : proto_intern_cstr(ctx, ""))
                            : 0,
    };
    track->ref = merged_slot(ctx, machine, &set, uuid);
    if (track->ref) {
      add_source_args(ctx, track);
      goto done;
    }
  }
  tm_track_desc desc = {
      TM_TRACK_DESC_INIT,
      .type = track_type(track->scope_thread != 0, track->scope_process != 0,
                         track->is_counter),
      .is_counter = track->is_counter,
      .name = track->name ? track->name
                          : (track->is_counter || nameless_child ? 0 : event_name),
      .thread = track->scope_thread,
      .process = track->scope_thread ? 0 : track->scope_process,
      .key = uuid,
      .unit = track->unit,
  };
  /* The root track of a process takes no event's name. */
  if (root)
    desc.name = track->name;
  track->ref = proto_tracks_intern(ctx, machine, &desc);
  if (parent_ref)
    s->track_set_parent(ctx->host, track->ref, parent_ref);
  add_source_args(ctx, track);
done:
  track->resolving = false;
  return track->ref;
}

proto_track *proto_tracks_undescribed(proto_context *ctx, proto_machine *machine,
                                      uint64_t uuid, bool is_counter) {
  (void)ctx;
  proto_track *track = proto_tracks_find(machine, uuid);
  if (!track) {
    track = add_track(machine, uuid);
    track->kind = PROTO_TRACK_UNDESCRIBED;
    track->is_counter = is_counter;
  }
  return track;
}

tm_track_ref proto_tracks_default_track(proto_context *ctx, proto_machine *machine) {
  if (!machine->default_track) {
    /* uuid 0: a global track below no parent, merged by its name like any
     * other, its slices all of cookie 0 (so always one track). */
    tm_track_desc set = {
        TM_TRACK_DESC_INIT,
        .type = "global_merged_track_event",
        .name = proto_intern_cstr(ctx, "Default Track"),
    };
    machine->default_track = merged_slot(ctx, machine, &set, 0);
    if (!machine->default_track) {
      set.type = "global_track_event";
      machine->default_track = proto_tracks_intern(ctx, machine, &set);
    }
  }
  return machine->default_track;
}
