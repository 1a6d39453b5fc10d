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
 *   tinyslice <ts> <name>
 *                       an instant whose tm_slice_fields is too short to
 *                       hold thread_dur (smaller than any version's)
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
  } else if (sscanf(r->line, "tinyslice %lld %63s", &ts, name) == 2) {
    tm_slice_fields f = {TM_SLICE_FIELDS_INIT, .ts = ts,
                         .clock = s->clock_private(h),
                         .track = s->track_thread(h, thread),
                         .name = s->intern_string(h, name, strlen(name))};
    f.struct_size = offsetof(tm_slice_fields, thread_dur);
    s->slice_complete(h, &f, 0);
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
