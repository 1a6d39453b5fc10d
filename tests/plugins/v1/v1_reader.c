/*
 * A reader of ABI version 1, built with the version-1 header kept verbatim
 * beside this file (tests/plugins/v1/tracemerge/plugin.h), as a reader
 * built before version 2 would be. tests/test_reader_abi.c loads it into
 * today's host and checks that every service whose layout changed in
 * version 2 still does what it did.
 *
 * Format: "#tm-v1", then one command per line (ts in ns, on the file's
 * private clock; thread 1 of process 1):
 *   slice <ts> <dur> <name>    slice_complete
 *   begin <ts> <name>          slice_begin, thread time ts / 2
 *   end <ts>                   slice_end
 *   counter <ts> <value>       track_intern ("v1_counter"), counter
 *   cpu <ts> <cpu> <value>     track_intern_cpu ("cpu_frequency"), counter
 *   sample <ts> <function>     mapping, frame, callsite, sample "instruments"
 *   args <ts> <name> <int> <real> <word>
 *                              a 1 ns slice whose arg set holds v1.int,
 *                              v1.real, v1.word (string) and v1.flag (bool);
 *                              thread_add_arg v1.word: tm_arg_value by value
 *   nullslices                 slice_begin, slice_end, slice_complete of NULL
 *   nullcpu                    track_intern_cpu of a NULL description
 *   anything else              import_log("v1_bad_line") with the line
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracemerge/plugin.h>

#if TM_READER_ABI_VERSION != 1
#error "built against the wrong header: this reader must see version 1's"
#endif

typedef struct {
  const tm_host_services *s;
  tm_host *host;
  int64_t at; /* offset of line[0] */
  size_t len;
  char line[256];
} v1_reader;

static int v1_probe(const uint8_t *head, size_t len, const char *name) {
  (void)name;
  return len >= 6 && memcmp(head, "#tm-v1", 6) == 0 ? 100 : 0;
}

static void *v1_open(const tm_host_services *s, tm_host *host,
                     const uint8_t *config, size_t config_len) {
  (void)config, (void)config_len;
  v1_reader *r = calloc(1, sizeof *r);
  if (!r) {
    s->report_error(host, -1, "out of memory");
    return NULL;
  }
  r->s = s;
  r->host = host;
  return r;
}

static tm_str_id intern(v1_reader *r, const char *text) {
  return r->s->intern_string(r->host, text, strlen(text));
}

static void v1_command(v1_reader *r, int64_t at) {
  const tm_host_services *s = r->s;
  tm_host *h = r->host;
  tm_clock_ref clock = s->clock_private(h);
  tm_thread_ref thread = s->thread(h, s->machine_default(h), 1, 1);
  tm_track_ref track = s->track_thread(h, thread);
  char name[128], word[64];
  long long ts, dur, cpu, number;
  double value;
  if (sscanf(r->line, "slice %lld %lld %127s", &ts, &dur, name) == 3) {
    tm_slice_fields f = {track, clock, ts, intern(r, name), 0, TM_NO_ARGS,
                         TM_UNKNOWN_TIME, TM_UNKNOWN_TIME};
    s->slice_complete(h, &f, dur);
  } else if (sscanf(r->line, "begin %lld %127s", &ts, name) == 2) {
    tm_slice_fields f = {track, clock, ts, intern(r, name), 0, TM_NO_ARGS,
                         ts / 2, TM_UNKNOWN_TIME};
    s->slice_begin(h, &f);
  } else if (sscanf(r->line, "end %lld", &ts) == 1) {
    tm_slice_fields f = {track, clock, ts, 0, 0, TM_NO_ARGS,
                         TM_UNKNOWN_TIME, TM_UNKNOWN_TIME};
    s->slice_end(h, &f);
  } else if (sscanf(r->line, "counter %lld %lf", &ts, &value) == 2) {
    tm_track_desc d = {"v1_counter", 1, intern(r, "v1 counter"), 0, 0, 0, 0, 0};
    s->counter(h, s->track_intern(h, &d), clock, ts, value, TM_NO_ARGS);
  } else if (sscanf(r->line, "cpu %lld %lld %lf", &ts, &cpu, &value) == 3 &&
             TM_HOST_HAS(s, track_intern_cpu)) {
    tm_track_desc d = {"cpu_frequency", 1, intern(r, "cpufreq"), 0, 0, 0, 0, 0};
    tm_track_ref cpu_track = s->track_intern_cpu(h, 0, (uint32_t)cpu, &d);
    s->counter(h, cpu_track, clock, ts, value, TM_NO_ARGS);
  } else if (sscanf(r->line, "sample %lld %127s", &ts, name) == 2 &&
             TM_HOST_HAS(s, sample)) {
    tm_mapping_ref mapping = s->mapping(h, intern(r, "v1.so"), 0, 0, 0, 0, 0);
    tm_frame_ref frame = s->frame(h, intern(r, name), mapping, 0);
    tm_callsite_ref callsite = s->callsite(h, 0, frame);
    s->sample(h, clock, ts, thread, callsite, "instruments", -1);
  } else if (sscanf(r->line, "args %lld %127s %lld %lf %63s", &ts, name,
                    &number, &value, word) == 5) {
    tm_arg_value v = {TM_ARG_INT, {.int_value = number}};
    s->args_add(h, intern(r, "v1.int"), v);
    v = (tm_arg_value){TM_ARG_REAL, {.real_value = value}};
    s->args_add(h, intern(r, "v1.real"), v);
    v = (tm_arg_value){TM_ARG_STRING, {.str_id = intern(r, word)}};
    s->args_add(h, intern(r, "v1.word"), v);
    s->thread_add_arg(h, thread, intern(r, "v1.word"), v);
    v = (tm_arg_value){TM_ARG_BOOL, {.int_value = 1}};
    s->args_add(h, intern(r, "v1.flag"), v);
    tm_slice_fields f = {track, clock, ts, intern(r, name), 0, s->args_commit(h),
                         TM_UNKNOWN_TIME, TM_UNKNOWN_TIME};
    s->slice_complete(h, &f, 1);
  } else if (strcmp(r->line, "nullslices") == 0) {
    s->slice_begin(h, NULL);
    s->slice_end(h, NULL);
    s->slice_complete(h, NULL, 1);
  } else if (strcmp(r->line, "nullcpu") == 0 && TM_HOST_HAS(s, track_intern_cpu)) {
    s->track_intern_cpu(h, 0, 0, NULL);
  } else if (TM_HOST_HAS(s, import_log)) {
    tm_import_log_arg arg = {"line", TM_ARG_STRING, 0, 0, r->line,
                             strlen(r->line)};
    s->import_log(h, "v1_bad_line", at, &arg, 1);
  }
}

static tm_status v1_feed(void *state, const uint8_t *data, size_t len) {
  v1_reader *r = state;
  for (size_t i = 0; i < len; i++) {
    if (data[i] != '\n') {
      if (r->len + 1 < sizeof r->line)
        r->line[r->len++] = (char)data[i];
      continue;
    }
    r->line[r->len] = '\0';
    if (r->line[0] != '#')
      v1_command(r, r->at);
    r->at += (int64_t)r->len + 1;
    r->len = 0;
  }
  return TM_OK;
}

static tm_status v1_finish(void *state) { /* a last line without \n */
  if (((v1_reader *)state)->len == 0)
    return TM_OK;
  return v1_feed(state, (const uint8_t *)"\n", 1);
}

TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  static const tm_reader_descriptor d = {
      TM_READER_ABI_VERSION, TM_READER_CLOCKLESS, "test-v1", "version-1 reader",
      v1_probe, v1_open, v1_feed, v1_finish, free};
  return &d;
}
