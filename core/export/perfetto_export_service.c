/*
 * The Perfetto export's service packets: what each machine's traces said
 * about their own recording, written back in the packets trace_processor
 * (and tracemerge's proto reader) read it from, so a re-import of the
 * export has the same stats and metadata rows:
 *
 *   stats traced_*, traced_buf_*[buffer]      one TraceStats
 *   stats ftrace_cpu_*_begin/_end[cpu]        FtraceStats, START and END
 *   stats android_log_num_*                   an AndroidLogPacket's Stats
 *   metadata trace_uuid                       TraceUuid
 *   metadata trace_config_pbtxt               TraceConfig (the text parsed
 *                                             back with its schema)
 *   metadata tracing_started_ns, ...          TracingServiceEvents at
 *                                             those timestamps
 *   metadata tracing_service_version,         SystemInfo fields (in
 *            timezone_off_mins                perfetto_export_system.c)
 *   counters cpu.times.<field> of a cpu       SysStats.cpu_stat, one packet
 *                                             per value
 *   metadata json_metadata.<key>              one ChromeEventBundle of
 *                                             ChromeMetadata <key> (read
 *                                             back as cr-<key>)
 *
 * All on the machine's own sequence, so they carry its machine_id. The
 * service events' timestamps are the metadata values as they were read
 * (raw BOOTTIME of the machine's trace), not trace time: a reader keeps
 * them as they come. A machine whose rows came from several files writes
 * one packet of each kind: for a stat or key two files both set, the value
 * of the later file (in trace-file order) is the one written.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/textproto.h"
#include "export/perfetto_export_internal.h"
#include "record/encoder.h"
#include "service_packets.pb-c.h"
#include "trace_config.pb-c.h"

/* TracePacket fields. */
enum {
  PACKET_TRACE_CONFIG = 33,
  PACKET_FTRACE_STATS = 34,
  PACKET_TRACE_STATS = 35,
  PACKET_SERVICE_EVENT = 69,
  PACKET_TRACE_UUID = 89,
  PACKET_CHROME_EVENTS = 5,
  PACKET_SYS_STATS = 7,
};

/* SysStats.cpu_stat and its CpuTimes fields: a counter track of type
 * cpu_stat named cpu.times.<field> on a cpu is what the reader makes of
 * each. Written back in that packet, the cpu comes back with it (a
 * TrackEvent counter track cannot name a cpu). */
enum { SYS_STATS_CPU_STAT = 3, CPU_TIMES_CPU_ID = 1 };
static const struct {
  const char *name;
  uint32_t number;
} cpu_times[] = {
    {"cpu.times.user_ns", 2},    {"cpu.times.user_nice_ns", 3}, {"cpu.times.system_mode_ns", 4},
    {"cpu.times.idle_ns", 5},    {"cpu.times.io_wait_ns", 6},   {"cpu.times.irq_ns", 7},
    {"cpu.times.softirq_ns", 8}, {"cpu.times.steal_ns", 9},
};

/* ChromeEventBundle.metadata, and ChromeMetadata's fields. */
enum { BUNDLE_METADATA = 2 };
enum { CHROME_METADATA_NAME = 1, CHROME_METADATA_STRING = 2, CHROME_METADATA_INT = 4 };
#define JSON_METADATA_PREFIX "json_metadata."


/* AndroidLogPacket.stats and its fields; the reader names each stat
 * android_log_<field>. */
enum { ANDROID_LOG_STATS = 2 };
static const struct {
  const char *field;
  uint32_t number;
} android_log_stats[] = {{"num_total", 1}, {"num_failed", 2}, {"num_skipped", 3}};

/* FtraceStats: phase 1, cpu_stats 2 (FtraceCpuStats: cpu 1, then the
 * fields below); phases START_OF_TRACE 1 ("begin") and END_OF_TRACE 2
 * ("end"), the suffixes the reader gives the stats. */
typedef struct ftrace_field {
  const char *name; /* ftrace_cpu_<name>_<phase> */
  uint32_t number;
  bool seconds; /* a double of seconds, the stat in ns */
} ftrace_field;

static const ftrace_field ftrace_fields[] = {
    {"entries", 2, false},        {"overrun", 3, false},       {"commit_overrun", 4, false},
    {"bytes", 5, false},          {"oldest_event_ts", 6, true}, {"now_ts", 7, true},
    {"dropped_events", 8, false}, {"read_events", 9, false},
};
#define FTRACE_FIELDS (sizeof ftrace_fields / sizeof ftrace_fields[0])

/* TracingServiceEvent: the metadata key of each event field. */
static const struct {
  const char *key;
  uint32_t number;
} service_events[] = {
    {"tracing_started_ns", 2},          {"all_data_source_started_ns", 1},
    {"all_data_source_flushed_ns", 3},  {"tracing_buffers_read_ns", 4},
    {"tracing_disabled_ns", 5},
};

/* --- rows of one machine ------------------------------------------------------------ */

const tm_metadata_row *pe_metadata_row(const pe_state *pe, uint32_t machine, const char *key) {
  const tm_metadata_row *found = NULL;
  for (size_t i = 0; i < pe->model->metadata.len; i++) {
    const tm_metadata_row *row = &pe->model->metadata.data[i];
    if (row->machine_id != machine || row->key_type != TM_METADATA_SINGLE)
      continue;
    const char *name = pe_str(pe, row->name);
    if (name && strcmp(name, key) == 0)
      found = row; /* the later file's */
  }
  return found;
}

/* A set stat of `machine` (value != 0: the rows made up front are 0). */
typedef struct stat_ref {
  const char *name;
  int64_t idx;
  int64_t value;
} stat_ref;

typedef TM_VEC(stat_ref) stat_vec;
typedef TM_VEC(const tm_metadata_row *) metadata_vec;

static void collect_stats(const pe_state *pe, uint32_t machine, const char *prefix,
                          stat_vec *out) {
  size_t n = strlen(prefix);
  for (size_t i = 0; i < pe->model->stats.len; i++) {
    const tm_stats_row *row = &pe->model->stats.data[i];
    if (row->machine_id != machine || row->value == 0)
      continue;
    const char *name = pe_str(pe, row->name);
    if (name && strncmp(name, prefix, n) == 0)
      tm_vec_push(out, ((stat_ref){name, row->idx, row->value}));
  }
}

/* --- TraceStats ------------------------------------------------------------------------ */

/* The stats name the reader gives each field: traced_<field> for
 * TraceStats's own, traced_buf_<field>[buffer] for BufferStats's, so the
 * schema's field names say which field a stat is. */
static const ProtobufCFieldDescriptor *field_named(const ProtobufCMessageDescriptor *message,
                                                   const char *name) {
  for (unsigned i = 0; i < message->n_fields; i++)
    if (strcmp(message->fields[i].name, name) == 0)
      return &message->fields[i];
  return NULL;
}

typedef struct stats_ctx {
  const stat_vec *stats;
} stats_ctx;

static void build_trace_stats(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const stat_vec *stats = ((const stats_ctx *)p)->stats;
  const ProtobufCMessageDescriptor *top = &perfetto__protos__trace_stats__descriptor;
  const ProtobufCMessageDescriptor *buf = &perfetto__protos__trace_stats__buffer_stats__descriptor;
  uint8_t *body = tmr_enc_nest_begin(e, PACKET_TRACE_STATS);
  int64_t buffers = 0;
  for (size_t i = 0; i < stats->len; i++)
    if (strncmp(stats->data[i].name, "traced_buf_", 11) == 0 && stats->data[i].idx >= buffers)
      buffers = stats->data[i].idx + 1;
  /* Buffers in order (their index is their position); each field once,
   * the later row's value. */
  for (int64_t b = 0; b < buffers; b++) {
    uint8_t *entry = tmr_enc_nest_begin(e, 1);
    for (unsigned f = 0; f < buf->n_fields; f++) {
      char name[96];
      snprintf(name, sizeof name, "traced_buf_%s", buf->fields[f].name);
      const stat_ref *last = NULL;
      for (size_t i = 0; i < stats->len; i++)
        if (stats->data[i].idx == b && strcmp(stats->data[i].name, name) == 0)
          last = &stats->data[i];
      if (last)
        tmr_enc_uint(e, buf->fields[f].id, (uint64_t)last->value);
    }
    tmr_enc_nest_end(e, entry);
  }
  for (unsigned f = 0; f < top->n_fields; f++) {
    const ProtobufCFieldDescriptor *field = &top->fields[f];
    if (field->type == PROTOBUF_C_TYPE_MESSAGE || field->type == PROTOBUF_C_TYPE_ENUM)
      continue;
    char name[96];
    snprintf(name, sizeof name, "traced_%s", field->name);
    const stat_ref *last = NULL;
    for (size_t i = 0; i < stats->len; i++)
      if (stats->data[i].idx == TM_NULL_INT64 && strcmp(stats->data[i].name, name) == 0)
        last = &stats->data[i];
    if (last)
      tmr_enc_uint(e, field->id, (uint64_t)last->value);
  }
  /* The outcome is one stat per outcome, traced_<value name in lower
   * case>, of which the reader sets the one that happened. */
  const ProtobufCFieldDescriptor *outcome = field_named(top, "final_flush_outcome");
  const ProtobufCEnumDescriptor *outcomes =
      &perfetto__protos__trace_stats__final_flush_outcome__descriptor;
  int64_t value = 0;
  for (unsigned v = 0; v < outcomes->n_values; v++) {
    if (outcomes->values[v].value == 0)
      continue;
    g_autofree char *lower = g_ascii_strdown(outcomes->values[v].name, -1);
    g_autofree char *name = g_strconcat("traced_", lower, NULL);
    for (size_t i = 0; i < stats->len; i++)
      if (strcmp(stats->data[i].name, name) == 0)
        value = outcomes->values[v].value;
  }
  if (outcome && value)
    tmr_enc_uint(e, outcome->id, (uint64_t)value);
  tmr_enc_nest_end(e, body);
}

/* --- FtraceStats ------------------------------------------------------------------------- */

/* Seconds whose value times 1e9, truncated as the reader does, is `ns`. */
static double seconds_of(int64_t ns) {
  if (ns == INT64_MAX)
    return 1e10; /* "none yet": the reader's sentinel from anything >= 9.2e18 ns */
  double s = (double)ns / 1e9;
  for (int i = 0; i < 4 && (int64_t)(s * 1e9) < ns; i++)
    s = nextafter(s, INFINITY);
  for (int i = 0; i < 4 && (int64_t)(s * 1e9) > ns; i++)
    s = nextafter(s, -INFINITY);
  return s;
}

typedef struct ftrace_ctx {
  const stat_vec *stats;
  const char *phase; /* "begin", "end" */
  uint32_t phase_value;
} ftrace_ctx;

/* The field of a stat name of this phase, or NULL. */
static const ftrace_field *ftrace_field_of(const char *name, const char *phase) {
  if (strncmp(name, "ftrace_cpu_", 11) != 0)
    return NULL;
  name += 11;
  size_t len = strlen(name), plen = strlen(phase);
  if (len < plen + 2 || name[len - plen - 1] != '_' || strcmp(name + len - plen, phase) != 0)
    return NULL;
  for (size_t f = 0; f < FTRACE_FIELDS; f++)
    if (strlen(ftrace_fields[f].name) == len - plen - 1 &&
        strncmp(ftrace_fields[f].name, name, len - plen - 1) == 0)
      return &ftrace_fields[f];
  return NULL;
}

static void build_ftrace_stats(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const ftrace_ctx *c = p;
  const stat_vec *stats = c->stats;
  uint8_t *body = tmr_enc_nest_begin(e, PACKET_FTRACE_STATS);
  tmr_enc_uint(e, 1, c->phase_value);
  int64_t cpus = 0;
  for (size_t i = 0; i < stats->len; i++)
    if (ftrace_field_of(stats->data[i].name, c->phase) && stats->data[i].idx >= cpus)
      cpus = stats->data[i].idx + 1;
  for (int64_t cpu = 0; cpu < cpus; cpu++) {
    bool any = false;
    for (size_t i = 0; i < stats->len && !any; i++)
      any = stats->data[i].idx == cpu && ftrace_field_of(stats->data[i].name, c->phase);
    if (!any)
      continue;
    uint8_t *entry = tmr_enc_nest_begin(e, 2);
    tmr_enc_uint(e, 1, (uint64_t)cpu);
    for (size_t f = 0; f < FTRACE_FIELDS; f++) {
      const stat_ref *last = NULL;
      for (size_t i = 0; i < stats->len; i++)
        if (stats->data[i].idx == cpu &&
            ftrace_field_of(stats->data[i].name, c->phase) == &ftrace_fields[f])
          last = &stats->data[i];
      if (!last)
        continue;
      if (ftrace_fields[f].seconds)
        tmr_enc_double(e, ftrace_fields[f].number, seconds_of(last->value));
      else
        tmr_enc_uint(e, ftrace_fields[f].number, (uint64_t)last->value);
    }
    tmr_enc_nest_end(e, entry);
  }
  tmr_enc_nest_end(e, body);
}

static bool has_phase(const stat_vec *stats, const char *phase) {
  for (size_t i = 0; i < stats->len; i++)
    if (ftrace_field_of(stats->data[i].name, phase))
      return true;
  return false;
}

/* --- android log stats ----------------------------------------------------------------- */

static void build_log_stats(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const stat_vec *stats = ((const stats_ctx *)p)->stats;
  uint8_t *packet = tmr_enc_nest_begin(e, PACKET_ANDROID_LOG);
  uint8_t *body = tmr_enc_nest_begin(e, ANDROID_LOG_STATS);
  for (size_t f = 0; f < sizeof android_log_stats / sizeof android_log_stats[0]; f++) {
    char name[64];
    snprintf(name, sizeof name, "android_log_%s", android_log_stats[f].field);
    const stat_ref *last = NULL;
    for (size_t i = 0; i < stats->len; i++)
      if (strcmp(stats->data[i].name, name) == 0)
        last = &stats->data[i];
    if (last)
      tmr_enc_uint(e, android_log_stats[f].number, (uint64_t)last->value);
  }
  tmr_enc_nest_end(e, body);
  tmr_enc_nest_end(e, packet);
}

/* --- metadata ---------------------------------------------------------------------------- */

typedef struct bytes_ctx {
  uint32_t field;
  const uint8_t *data;
  size_t len;
} bytes_ctx;

static void build_bytes(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const bytes_ctx *c = p;
  tmr_enc_bytes(e, c->field, c->data, c->len);
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": msb is the first 16 digits, lsb
 * the last 16, as the reader prints them. False if it is not one. */
static bool parse_uuid(const char *text, uint64_t *msb, uint64_t *lsb) {
  uint64_t half[2] = {0, 0};
  int digits = 0;
  for (const char *s = text; *s; s++) {
    if (*s == '-')
      continue;
    int v = g_ascii_xdigit_value(*s);
    if (v < 0 || digits >= 32)
      return false;
    half[digits / 16] = half[digits / 16] << 4 | (uint64_t)v;
    digits++;
  }
  *msb = half[0];
  *lsb = half[1];
  return digits == 32;
}

static void write_uuid(pe_state *pe, tmr_sequence *seq, uint32_t machine) {
  const tm_metadata_row *row = pe_metadata_row(pe, machine, "trace_uuid");
  uint64_t msb, lsb;
  if (!row || row->is_int || !parse_uuid(pe_str(pe, row->str_value), &msb, &lsb))
    return;
  uint8_t body[48];
  tmr_enc e = {body, body + sizeof body, false};
  tmr_enc_uint(&e, 1, msb);
  tmr_enc_uint(&e, 2, lsb);
  bytes_ctx c = {PACKET_TRACE_UUID, body, (size_t)(e.p - body)};
  pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_bytes, &c);
}

/* The config as the reader printed it, parsed back with the same schema;
 * nothing is written if it does not parse. */
static void write_config(pe_state *pe, tmr_sequence *seq, uint32_t machine) {
  const tm_metadata_row *row = pe_metadata_row(pe, machine, "trace_config_pbtxt");
  if (!row || row->is_int || !row->str_value)
    return;
  const char *text = pe_str(pe, row->str_value);
  tm_textproto_options options = {.source_name = "trace_config_pbtxt"};
  tm_textproto_result result = {0};
  GError *error = NULL;
  if (!tm_textproto_parse(&perfetto__protos__trace_config__descriptor, text, strlen(text),
                          &options, &result, &error)) {
    g_clear_error(&error);
    return;
  }
  bytes_ctx c = {PACKET_TRACE_CONFIG, result.bytes->data, result.bytes->len};
  pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_bytes, &c);
  tm_textproto_result_clear(&result);
}

static void write_service_events(pe_state *pe, tmr_sequence *seq, uint32_t machine) {
  for (size_t k = 0; k < sizeof service_events / sizeof service_events[0]; k++) {
    const tm_metadata_row *row = pe_metadata_row(pe, machine, service_events[k].key);
    if (!row || !row->is_int || row->int_value < 0)
      continue;
    uint8_t body[32];
    tmr_enc e = {body, body + sizeof body, false};
    tmr_enc_uint(&e, service_events[k].number, 1);
    bytes_ctx c = {PACKET_SERVICE_EVENT, body, (size_t)(e.p - body)};
    pe_emit(pe, seq, row->int_value, 0, build_bytes, &c);
  }
}

/* A Chrome JSON's own "metadata" object (the JSON reader's rows
 * json_metadata.<key>): each key once, in first-seen order, with the
 * value of the later file (as pe_metadata_row). An int row is an
 * int_value, a string row a string_value, so the reader's cr-<key> row has
 * the same type and value. */
typedef struct chrome_metadata_ctx {
  const pe_state *pe;
  const metadata_vec *rows;
} chrome_metadata_ctx;

static void build_chrome_metadata(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const chrome_metadata_ctx *c = p;
  uint8_t *bundle = tmr_enc_nest_begin(e, PACKET_CHROME_EVENTS);
  for (size_t i = 0; i < c->rows->len; i++) {
    const tm_metadata_row *row = c->rows->data[i];
    const char *name = pe_str(c->pe, row->name) + strlen(JSON_METADATA_PREFIX);
    uint8_t *entry = tmr_enc_nest_begin(e, BUNDLE_METADATA);
    tmr_enc_string(e, CHROME_METADATA_NAME, name);
    if (row->is_int) {
      tmr_enc_int(e, CHROME_METADATA_INT, row->int_value);
    } else {
      const char *value = pe_str(c->pe, row->str_value);
      tmr_enc_string(e, CHROME_METADATA_STRING, value ? value : "");
    }
    tmr_enc_nest_end(e, entry);
  }
  tmr_enc_nest_end(e, bundle);
}

static void write_chrome_metadata(pe_state *pe, tmr_sequence *seq, uint32_t machine) {
  metadata_vec rows = {0};
  for (size_t i = 0; i < pe->model->metadata.len; i++) {
    const tm_metadata_row *row = &pe->model->metadata.data[i];
    const char *name = pe_str(pe, row->name);
    if (row->machine_id != machine || row->key_type != TM_METADATA_SINGLE || !name ||
        strncmp(name, JSON_METADATA_PREFIX, strlen(JSON_METADATA_PREFIX)) != 0)
      continue;
    size_t k = 0;
    while (k < rows.len && strcmp(pe_str(pe, rows.data[k]->name), name) != 0)
      k++;
    if (k < rows.len)
      rows.data[k] = row; /* the later file's value, in the first one's place */
    else
      tm_vec_push(&rows, row);
  }
  chrome_metadata_ctx c = {pe, &rows};
  if (rows.len)
    pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_chrome_metadata, &c);
  tm_vec_free(&rows);
}

void pe_service_write_machine(pe_state *pe, uint32_t machine) {
  tmr_sequence *seq = pe_machine_sequence(pe, machine);
  write_config(pe, seq, machine);
  write_uuid(pe, seq, machine);
  write_service_events(pe, seq, machine);
  write_chrome_metadata(pe, seq, machine);
  stat_vec stats = {0};
  collect_stats(pe, machine, "traced_", &stats);
  stats_ctx sc = {&stats};
  if (stats.len)
    pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_trace_stats, &sc);
  stats.len = 0;
  collect_stats(pe, machine, "ftrace_cpu_", &stats);
  static const char *const phases[] = {"begin", "end"};
  for (uint32_t ph = 0; ph < 2; ph++) {
    ftrace_ctx fc = {&stats, phases[ph], ph + 1};
    if (has_phase(&stats, phases[ph]))
      pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_ftrace_stats, &fc);
  }
  stats.len = 0;
  collect_stats(pe, machine, "android_log_num_", &stats);
  if (stats.len)
    pe_emit(pe, seq, TMR_NO_TIMESTAMP, 0, build_log_stats, &sc);
  tm_vec_free(&stats);
}

/* --- cpu times ----------------------------------------------------------------------------- */

typedef struct cpu_time_ctx {
  uint32_t cpu;
  uint32_t field;
  uint64_t value;
} cpu_time_ctx;

static void build_cpu_time(tmr_sequence *seq, tmr_enc *e, tmr_enc *in, void *p) {
  (void)seq;
  (void)in;
  const cpu_time_ctx *c = p;
  uint8_t *stats = tmr_enc_nest_begin(e, PACKET_SYS_STATS);
  uint8_t *times = tmr_enc_nest_begin(e, SYS_STATS_CPU_STAT);
  tmr_enc_uint(e, CPU_TIMES_CPU_ID, c->cpu);
  tmr_enc_uint(e, c->field, c->value);
  tmr_enc_nest_end(e, times);
  tmr_enc_nest_end(e, stats);
}

bool pe_service_write_cpu_time(pe_state *pe, const tm_counter_row *row) {
  const tm_model *model = pe->model;
  const tm_track_row *track = &model->tracks.data[row->track_id];
  if (track->cpu_dimension == 0 || track->cpu_dimension > model->cpus.len || row->value < 0 ||
      !(row->value < 18446744073709551616.0))
    return false;
  const char *type = pe_str(pe, track->type), *name = pe_str(pe, track->name);
  if (!type || !name || strcmp(type, "cpu_stat") != 0)
    return false;
  for (size_t f = 0; f < sizeof cpu_times / sizeof cpu_times[0]; f++) {
    if (strcmp(name, cpu_times[f].name) != 0)
      continue;
    cpu_time_ctx c = {model->cpus.data[track->cpu_dimension - 1].cpu, cpu_times[f].number,
                      (uint64_t)row->value};
    pe_emit(pe, pe_machine_sequence(pe, track->machine_id), row->ts, 0, build_cpu_time, &c);
    return true;
  }
  return false;
}
