/*
 * A version-2 reader that shows what the host does with a descriptor's
 * declarations, for tests/test_reader_abi.c: its config bytes (written
 * back, hex-encoded, as the metadata row "abi_test_config"), its declared
 * stats (one of them indexed), its processing priority (ABI_READER_PRIORITY) and its sample
 * table (instruments_sample).
 *
 * Format: "#tm-abi", then one command per line (ts in ns, on the file's
 * private clock, thread 1 of process 1):
 *   slice <ts> <name>   an instant
 *   sample <ts>         a sample without a stack
 *   noted               stat_add("abi_test_noted", 1)
 *   indexed <idx> <v>   stat_set_indexed("abi_test_per_index", idx, v)
 *   widelog <offset>    import_log("abi_test_noted") with two args
 *                       {first: "one", second: 2} in a struct wider than
 *                       tm_import_log_arg, as a later reader's would be
 *   shortlog <offset>   import_log("abi_test_noted") with one arg whose
 *                       struct_size is too small to hold a key
 *   async <size> <ts> <name>
 *                       an instant on track_async's slot of a set named
 *                       <name>, described by a tm_track_desc whose
 *                       struct_size is "full" (sizeof) or "v2" (version
 *                       2's first layout, up to cpu); the merge fields past
 *                       v2 always say "nameless, merged by key abi_key"
 *   cpu <kind> <cpu> <ts>
 *                       on the track of cpu <cpu> (track_intern with
 *                       has_cpu), interned anew for each line: a counter
 *                       (kind "counter", value 1) or an instant (kind
 *                       "slice", named "on_cpu"), or (kind "parent") the
 *                       track made a thread track's child, then its
 *                       parent, then given a source arg
 *   tinyslice <ts> <name>
 *                       an instant whose tm_slice_fields is too short to
 *                       hold thread_dur (smaller than any version's)
 *   refuse <case>       one call the host must refuse, as refuse() below
 *                       names the cases: a ref that names no row
 *                       (NO_ROW), a NULL or short struct, no key or name;
 *                       "parent-of-another-file" needs a refuse line in
 *                       a file read before this one (its thread track,
 *                       kept in a static: files are read one by one)
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracemerge/plugin.h>

#ifndef ABI_READER_NAME
#define ABI_READER_NAME "test-abi"
#endif
#ifndef ABI_READER_PRIORITY
#define ABI_READER_PRIORITY 0
#endif

typedef struct {
  const tm_host_services *s;
  tm_host *host;
  size_t len;
  char line[128];
} abi_reader;

/* A ref the host never gave: far past any row these tests make. */
#define NO_ROW ((uint32_t)0x7ffffff0u)

/* The thread track of the file read last, for refusals across files. */
static tm_track_ref previous_file_track;

/* Makes the one call `what` names, with arguments the host must refuse.
 * Returns 0 if `what` names no case. */
static int refuse(const tm_host_services *s, tm_host *h, const char *what) {
  tm_thread_ref thread = s->thread(h, 0, 1, 1);
  tm_process_ref process = s->process(h, 0, 1);
  tm_track_ref track = s->track_thread(h, thread);
  tm_clock_ref clock = s->clock_private(h);
  tm_str_id key = s->intern_string(h, "k", 1);
  tm_arg_value v = {.type = TM_ARG_INT, .u.int_value = 1};
  tm_track_desc desc = {TM_TRACK_DESC_INIT, .type = "abi_test_track"};
  tm_slice_fields f = {TM_SLICE_FIELDS_INIT, .track = track, .clock = clock, .ts = 20};
  tm_frame_timeline_fields frame = {.struct_size = sizeof frame, .surface_frame_token = 1};
  if (strcmp(what, "claim-no-clock") == 0) {
    s->claim_trace_time(h, NO_ROW);
  } else if (strcmp(what, "snapshot-no-readings") == 0) {
    s->add_clock_snapshot(h, NULL, NULL, 0);
  } else if (strcmp(what, "machine-info-no-column") == 0) {
    s->machine_set_info(h, 0, NULL, v);
  } else if (strcmp(what, "machine-info-unknown-column") == 0) {
    s->machine_set_info(h, 0, "abi_test_column", v);
  } else if (strcmp(what, "machine-info-wrong-type") == 0) {
    s->machine_set_info(h, 0, "num_cpus", (tm_arg_value){.type = TM_ARG_REAL});
  } else if (strcmp(what, "process-name") == 0) {
    s->process_set_name(h, NO_ROW, key);
  } else if (strcmp(what, "thread-name") == 0) {
    s->thread_set_name(h, 0, key);
  } else if (strcmp(what, "process-arg") == 0) {
    s->process_add_arg(h, NO_ROW, key, v);
  } else if (strcmp(what, "process-arg-no-key") == 0) {
    s->process_add_arg(h, process, 0, v);
  } else if (strcmp(what, "thread-arg") == 0) {
    s->thread_add_arg(h, NO_ROW, key, v);
  } else if (strcmp(what, "thread-arg-no-key") == 0) {
    s->thread_add_arg(h, thread, 0, v);
  } else if (strcmp(what, "process-cmdline") == 0) {
    s->process_set_cmdline(h, NO_ROW, key);
  } else if (strcmp(what, "process-parent") == 0) {
    s->process_set_parent(h, NO_ROW, process);
  } else if (strcmp(what, "process-parent-no-row") == 0) {
    s->process_set_parent(h, process, NO_ROW);
  } else if (strcmp(what, "process-parent-itself") == 0) {
    s->process_set_parent(h, process, process);
  } else if (strcmp(what, "process-uid") == 0) {
    s->process_set_uid(h, NO_ROW, 1000);
  } else if (strcmp(what, "track-thread") == 0) {
    s->track_thread(h, NO_ROW);
  } else if (strcmp(what, "track-intern-null") == 0) {
    s->track_intern(h, NULL);
  } else if (strcmp(what, "track-intern-short") == 0) {
    desc.struct_size = offsetof(tm_track_desc, cpu);
    s->track_intern(h, &desc);
  } else if (strcmp(what, "track-intern-no-type") == 0) {
    desc.type = NULL;
    s->track_intern(h, &desc);
  } else if (strcmp(what, "track-async-short") == 0) {
    desc.struct_size = offsetof(tm_track_desc, cpu);
    s->track_async(h, &desc, 1, 0);
  } else if (strcmp(what, "track-async-no-type") == 0) {
    desc.type = NULL;
    s->track_async(h, &desc, 1, 0);
  } else if (strcmp(what, "parent-no-track") == 0) {
    s->track_set_parent(h, NO_ROW, track);
  } else if (strcmp(what, "parent-no-parent") == 0) {
    s->track_set_parent(h, track, 0);
  } else if (strcmp(what, "parent-itself") == 0) {
    s->track_set_parent(h, track, track);
  } else if (strcmp(what, "parent-of-another-file") == 0) {
    s->track_set_parent(h, previous_file_track, track);
  } else if (strcmp(what, "parent-in-another-file") == 0) {
    s->track_set_parent(h, track, previous_file_track);
  } else if (strcmp(what, "source-arg") == 0) {
    s->track_add_source_arg(h, NO_ROW, key, v);
  } else if (strcmp(what, "source-arg-no-key") == 0) {
    s->track_add_source_arg(h, track, 0, v);
  } else if (strcmp(what, "args-add-no-key") == 0) {
    s->args_add(h, 0, v);
  } else if (strcmp(what, "args-add-string-no-key") == 0) {
    s->args_add_string(h, 0, TM_ARG_STRING, "x", 1);
  } else if (strcmp(what, "args-add-callsite-no-key") == 0) {
    tm_frame_ref fr = s->frame(h, key, 0, 0);
    s->args_add_callsite(h, 0, s->callsite(h, 0, fr));
  } else if (strcmp(what, "args-add-callsite-no-row") == 0) {
    s->args_add_callsite(h, key, NO_ROW);
  } else if (strcmp(what, "slice-begin-null") == 0) {
    s->slice_begin(h, NULL);
  } else if (strcmp(what, "slice-end-no-track") == 0) {
    f.track = NO_ROW;
    s->slice_end(h, &f);
  } else if (strcmp(what, "slice-args") == 0) {
    f.args = NO_ROW;
    s->slice_complete(h, &f, 0);
  } else if (strcmp(what, "slice-args-not-yet") == 0) {
    /* The set the next commit will answer: not a set yet. */
    s->args_add(h, key, v);
    tm_args_ref made = s->args_commit(h);
    f.args = made + 1;
    s->slice_begin(h, &f);
  } else if (strcmp(what, "counter") == 0) {
    s->counter(h, NO_ROW, clock, 20, 1.0, TM_NO_ARGS);
  } else if (strcmp(what, "counter-args") == 0) {
    desc.is_counter = 1;
    s->counter(h, s->track_intern(h, &desc), clock, 20, 1.0, NO_ROW);
  } else if (strcmp(what, "flow-args") == 0) {
    s->flow(h, track, clock, 20, 7, TM_FLOW_OUT, TM_FLOW_BIND_ENCLOSING, NO_ROW);
  } else if (strcmp(what, "ftrace-event-args") == 0) {
    s->ftrace_event(h, clock, 20, 0, 0, thread, key, NO_ROW);
  } else if (strcmp(what, "android-log-args") == 0) {
    s->android_log(h, clock, 20, thread, 4, key, key, NO_ROW);
  } else if (strcmp(what, "frame-timeline-args") == 0) {
    f.track = s->track_async(h, &desc, 1, 0);
    f.args = NO_ROW;
    s->frame_timeline_begin(h, &f, &frame);
  } else if (strcmp(what, "flow") == 0) {
    s->flow(h, 0, clock, 20, 7, TM_FLOW_OUT, TM_FLOW_BIND_ENCLOSING, TM_NO_ARGS);
  } else if (strcmp(what, "flow-direction") == 0) {
    s->flow(h, track, clock, 20, 7, (tm_flow_direction)9, TM_FLOW_BIND_ENCLOSING,
            TM_NO_ARGS);
  } else if (strcmp(what, "flow-binding") == 0) {
    s->flow(h, track, clock, 20, 7, TM_FLOW_OUT, (tm_flow_binding)9, TM_NO_ARGS);
  } else if (strcmp(what, "sched-switch") == 0) {
    s->sched_switch(h, clock, 20, 0, 0, thread, 0, NO_ROW, 120);
  } else if (strcmp(what, "sched-waking") == 0) {
    s->sched_waking(h, clock, 20, 0, 0, NO_ROW, thread);
  } else if (strcmp(what, "callsite-no-frame") == 0) {
    s->callsite(h, 0, NO_ROW);
  } else if (strcmp(what, "callsite-no-parent") == 0) {
    s->callsite(h, NO_ROW, s->frame(h, key, 0, 0));
  } else if (strcmp(what, "sample") == 0) {
    s->sample(h, clock, 20, NO_ROW, 0, -1);
  } else if (strcmp(what, "metadata-int") == 0) {
    s->metadata_set_int(h, NULL, 1);
  } else if (strcmp(what, "metadata-string") == 0) {
    s->metadata_set_string(h, NULL, key);
  } else if (strcmp(what, "stat-add") == 0) {
    s->stat_add(h, NULL, 1);
  } else if (strcmp(what, "import-log") == 0) {
    s->import_log(h, NULL, 5, NULL, 0);
  } else if (strcmp(what, "frame-timeline-short") == 0) {
    frame.struct_size = 8;
    f.track = s->track_async(h, &desc, 1, 0);
    s->frame_timeline_begin(h, &f, &frame);
  } else if (strcmp(what, "thread-lifetime") == 0) {
    s->thread_lifetime(h, clock, 20, NO_ROW, 0);
  } else if (strcmp(what, "stat-set-indexed") == 0) {
    s->stat_set_indexed(h, NULL, 0, 1);
  } else if (strcmp(what, "sched-blocked-reason") == 0) {
    s->sched_blocked_reason(h, clock, 20, 0, 1, 0);
  } else if (strcmp(what, "machine-stat") == 0) {
    s->machine_stat_set_indexed(h, 0, NULL, 0, 1);
  } else if (strcmp(what, "machine-metadata-int") == 0) {
    s->machine_metadata_set_int(h, 0, NULL, 1);
  } else if (strcmp(what, "machine-metadata-string") == 0) {
    s->machine_metadata_set_string(h, 0, NULL, key);
  } else {
    return 0;
  }
  previous_file_track = track;
  return 1;
}

static int abi_probe(const uint8_t *head, size_t len, const char *name) {
  (void)name;
  return len >= 7 && memcmp(head, "#tm-abi", 7) == 0 ? 100 : 0;
}

static void *abi_open(const tm_host_services *s, tm_host *host,
                      const uint8_t *config, size_t config_len) {
  abi_reader *r = calloc(1, sizeof *r);
  char *hex = malloc(2 * config_len + 1);
  if (!r || !hex) {
    free(r);
    free(hex);
    s->report_error(host, -1, "out of memory");
    return NULL;
  }
  r->s = s;
  r->host = host;
  for (size_t i = 0; i < config_len; i++)
    snprintf(hex + 2 * i, 3, "%02x", config[i]);
  hex[2 * config_len] = '\0';
  if (config)
    s->metadata_set_string(host, "abi_test_config",
                           s->intern_string(host, hex, 2 * config_len));
  free(hex);
  return r;
}

/* A later reader's tm_import_log_arg: this one's fields, then one more. */
typedef struct wide_import_log_arg {
  tm_import_log_arg arg;
  uint64_t added_later;
} wide_import_log_arg;

static void abi_command(abi_reader *r) {
  const tm_host_services *s = r->s;
  tm_host *h = r->host;
  tm_thread_ref thread = s->thread(h, 0, 1, 1);
  char name[64];
  char size[8];
  long long ts;
  unsigned cpu;
  if (sscanf(r->line, "slice %lld %63s", &ts, name) == 2) {
    tm_slice_fields f = {TM_SLICE_FIELDS_INIT, .ts = ts,
                         .clock = s->clock_private(h),
                         .track = s->track_thread(h, thread),
                         .name = s->intern_string(h, name, strlen(name))};
    s->slice_complete(h, &f, 0);
  } else if (sscanf(r->line, "sample %lld", &ts) == 1) {
    s->sample(h, s->clock_private(h), ts, thread, 0, -1);
  } else if (strcmp(r->line, "noted") == 0) {
    s->stat_add(h, "abi_test_noted", 1);
  } else if (sscanf(r->line, "widelog %lld", &ts) == 1) {
    wide_import_log_arg args[2] = {
        {{.struct_size = sizeof(wide_import_log_arg), .type = TM_ARG_STRING, .key = "first",
          .string = "one", .string_len = 3},
         0xdeadbeefu},
        {{.struct_size = sizeof(wide_import_log_arg), .type = TM_ARG_INT, .key = "second",
          .int_value = 2},
         0xdeadbeefu},
    };
    s->import_log(h, "abi_test_noted", ts, &args[0].arg, 2);
  } else if (sscanf(r->line, "shortlog %lld", &ts) == 1) {
    tm_import_log_arg arg = {.struct_size = sizeof(uint32_t), .type = TM_ARG_INT, .key = "x"};
    s->import_log(h, "abi_test_noted", ts, &arg, 1);
  } else if (sscanf(r->line, "async %7s %lld %63s", size, &ts, name) == 3) {
    tm_track_desc set = {
        TM_TRACK_DESC_INIT,
        .type = "abi_test_async",
        .name = s->intern_string(h, name, strlen(name)),
        .process = s->process(h, 0, 1),
        .merge_key = s->intern_string(h, "abi_key", 7),
        .nameless = 1,
    };
    if (strcmp(size, "v2") == 0)
      set.struct_size = offsetof(tm_track_desc, cpu) + sizeof(uint32_t);
    tm_slice_fields f = {TM_SLICE_FIELDS_INIT, .ts = ts,
                         .clock = s->clock_private(h),
                         .track = s->track_async(h, &set, 1, 0),
                         .name = set.name};
    s->slice_complete(h, &f, 0);
  } else if (sscanf(r->line, "cpu %7s %u %lld", size, &cpu, &ts) == 3) {
    tm_track_desc desc = {TM_TRACK_DESC_INIT, .type = "abi_test_cpu", .has_cpu = 1, .cpu = cpu,
                          .is_counter = strcmp(size, "counter") == 0};
    tm_track_ref track = s->track_intern(h, &desc);
    tm_slice_fields f = {TM_SLICE_FIELDS_INIT, .ts = ts, .clock = s->clock_private(h),
                         .track = track, .name = s->intern_string(h, "on_cpu", 6)};
    if (strcmp(size, "counter") == 0) {
      s->counter(h, track, f.clock, ts, 1.0, TM_NO_ARGS);
    } else if (strcmp(size, "slice") == 0) {
      s->slice_complete(h, &f, 0);
    } else if (strcmp(size, "parent") == 0) {
      s->track_set_parent(h, track, s->track_thread(h, thread));
      s->track_set_parent(h, s->track_thread(h, thread), track);
      s->track_add_source_arg(h, track, f.name, (tm_arg_value){.type = TM_ARG_INT});
    }
  } else if (sscanf(r->line, "tinyslice %lld %63s", &ts, name) == 2) {
    tm_slice_fields f = {TM_SLICE_FIELDS_INIT, .ts = ts,
                         .clock = s->clock_private(h),
                         .track = s->track_thread(h, thread),
                         .name = s->intern_string(h, name, strlen(name))};
    f.struct_size = offsetof(tm_slice_fields, thread_dur);
    s->slice_complete(h, &f, 0);
  } else if (sscanf(r->line, "refuse %63s", name) == 1) {
    if (!refuse(s, h, name))
      s->stat_add(h, "abi_test_noted", 1000); /* a typo in a test: seen */
  } else if (sscanf(r->line, "indexed %lld %63s", &ts, name) == 2) {
    s->stat_set_indexed(h, "abi_test_per_index", ts, strtoll(name, NULL, 10));
  }
}

static tm_status abi_feed(void *state, const uint8_t *data, size_t len) {
  abi_reader *r = state;
  for (size_t i = 0; i < len; i++) {
    if (data[i] != '\n') {
      if (r->len + 1 < sizeof r->line)
        r->line[r->len++] = (char)data[i];
      continue;
    }
    r->line[r->len] = '\0';
    if (r->line[0] != '#')
      abi_command(r);
    r->len = 0;
  }
  return TM_OK;
}

static tm_status abi_finish(void *state) {
  if (((abi_reader *)state)->len == 0)
    return TM_OK;
  return abi_feed(state, (const uint8_t *)"\n", 1);
}

static const tm_reader_stat abi_stats[] = {
    TM_READER_STAT("abi_test_noted", TM_STAT_NOTICE, TM_STAT_SOURCE_ANALYSIS,
                   "A line said noted."),
    TM_READER_INDEXED_STAT("abi_test_per_index", TM_STAT_INFO,
                           TM_STAT_SOURCE_TRACE, "Set per index by a line."),
};

TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  static const tm_reader_descriptor d = {
      TM_READER_DESCRIPTOR_INIT,
      .flags = TM_READER_CLOCKLESS,
      .name = ABI_READER_NAME,
      .description = "declarations test reader",
      .probe = abi_probe,
      .open = abi_open,
      .feed = abi_feed,
      .finish = abi_finish,
      .close = free,
      .stats = abi_stats,
      .n_stats = sizeof abi_stats / sizeof abi_stats[0],
      .processing_priority = ABI_READER_PRIORITY,
      .sample_table = "instruments_sample",
      .config_name = "abi_test_config",
  };
  return &d;
}
