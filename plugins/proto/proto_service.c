/* Service packets and system counters (see proto_service.h). */
#include "proto_service.h"

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ftrace.pb-c.h"
#include "proto_context.h"
#include "proto_pbtxt.h"
#include "proto_wire_decode.h"
#include "service_packets.pb-c.h"
#include "system.pb-c.h"
#include "trace_config.pb-c.h"


bool proto_service_read_config(proto_context *ctx, const proto_machine *machine,
                               const uint8_t *data, size_t len) {
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
  }
  if (c.error != PW_OK)
    return false;
  char *text = proto_pbtxt(&perfetto__protos__trace_config__descriptor, data, len);
  proto_machine_metadata_string(ctx, machine, "trace_config_pbtxt",
                                proto_intern(ctx, text, strlen(text)));
  g_free(text);
  return true;
}

bool proto_service_read_trace_stats(proto_context *ctx, const proto_machine *machine,
                                    const uint8_t *data, size_t len) {
  Perfetto__Protos__TraceStats *st = perfetto__protos__trace_stats__unpack(NULL, len, data);
  if (!st)
    return false;
  for (size_t i = 0; i < st->n_buffer_stats; i++) {
    const Perfetto__Protos__TraceStats__BufferStats *b = st->buffer_stats[i];
    int64_t idx = (int64_t)i;
    proto_machine_stat_set(ctx, machine, "traced_buf_buffer_size", idx, (int64_t)b->buffer_size);
    proto_machine_stat_set(ctx, machine, "traced_buf_bytes_written", idx, (int64_t)b->bytes_written);
    proto_machine_stat_set(ctx, machine, "traced_buf_bytes_overwritten", idx, (int64_t)b->bytes_overwritten);
    proto_machine_stat_set(ctx, machine, "traced_buf_bytes_read", idx, (int64_t)b->bytes_read);
    proto_machine_stat_set(ctx, machine, "traced_buf_padding_bytes_written", idx, (int64_t)b->padding_bytes_written);
    proto_machine_stat_set(ctx, machine, "traced_buf_padding_bytes_cleared", idx, (int64_t)b->padding_bytes_cleared);
    proto_machine_stat_set(ctx, machine, "traced_buf_chunks_written", idx, (int64_t)b->chunks_written);
    proto_machine_stat_set(ctx, machine, "traced_buf_chunks_rewritten", idx, (int64_t)b->chunks_rewritten);
    proto_machine_stat_set(ctx, machine, "traced_buf_chunks_overwritten", idx, (int64_t)b->chunks_overwritten);
    proto_machine_stat_set(ctx, machine, "traced_buf_chunks_discarded", idx, (int64_t)b->chunks_discarded);
    proto_machine_stat_set(ctx, machine, "traced_buf_chunks_read", idx, (int64_t)b->chunks_read);
    proto_machine_stat_set(ctx, machine, "traced_buf_chunks_committed_out_of_order", idx,
             (int64_t)b->chunks_committed_out_of_order);
    proto_machine_stat_set(ctx, machine, "traced_buf_write_wrap_count", idx, (int64_t)b->write_wrap_count);
    proto_machine_stat_set(ctx, machine, "traced_buf_patches_succeeded", idx, (int64_t)b->patches_succeeded);
    proto_machine_stat_set(ctx, machine, "traced_buf_patches_failed", idx, (int64_t)b->patches_failed);
    proto_machine_stat_set(ctx, machine, "traced_buf_readaheads_succeeded", idx, (int64_t)b->readaheads_succeeded);
    proto_machine_stat_set(ctx, machine, "traced_buf_readaheads_failed", idx, (int64_t)b->readaheads_failed);
    proto_machine_stat_set(ctx, machine, "traced_buf_abi_violations", idx, (int64_t)b->abi_violations);
    proto_machine_stat_set(ctx, machine, "traced_buf_trace_writer_packet_loss", idx,
             (int64_t)b->trace_writer_packet_loss);
  }
  proto_machine_stat_set(ctx, machine, "traced_producers_connected", -1, st->producers_connected);
  proto_machine_stat_set(ctx, machine, "traced_producers_seen", -1, (int64_t)st->producers_seen);
  proto_machine_stat_set(ctx, machine, "traced_data_sources_registered", -1, st->data_sources_registered);
  proto_machine_stat_set(ctx, machine, "traced_data_sources_seen", -1, (int64_t)st->data_sources_seen);
  proto_machine_stat_set(ctx, machine, "traced_tracing_sessions", -1, st->tracing_sessions);
  proto_machine_stat_set(ctx, machine, "traced_total_buffers", -1, st->total_buffers);
  proto_machine_stat_set(ctx, machine, "traced_chunks_discarded", -1, (int64_t)st->chunks_discarded);
  proto_machine_stat_set(ctx, machine, "traced_patches_discarded", -1, (int64_t)st->patches_discarded);
  proto_machine_stat_set(ctx, machine, "traced_flushes_requested", -1, (int64_t)st->flushes_requested);
  proto_machine_stat_set(ctx, machine, "traced_flushes_succeeded", -1, (int64_t)st->flushes_succeeded);
  proto_machine_stat_set(ctx, machine, "traced_flushes_failed", -1, (int64_t)st->flushes_failed);
  if (st->has_final_flush_outcome && st->final_flush_outcome == 2)
    proto_machine_stat_set(ctx, machine, "traced_final_flush_failed", -1, 1);
  else if (st->has_final_flush_outcome && st->final_flush_outcome == 1)
    proto_machine_stat_set(ctx, machine, "traced_final_flush_succeeded", -1, 1);
  perfetto__protos__trace_stats__free_unpacked(st, NULL);
  return true;
}

bool proto_service_read_ftrace_stats(proto_context *ctx, const proto_machine *machine,
                                     const uint8_t *data, size_t len) {
  Perfetto__Protos__FtraceStats *st = perfetto__protos__ftrace_stats__unpack(NULL, len, data);
  if (!st)
    return false;
  const char *phase =
      st->phase == PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE ? "end" : "begin";
  char name[64];
#define CPU_STAT(field, value)                                                   \
  do {                                                                            \
    snprintf(name, sizeof name, "ftrace_cpu_" field "_%s", phase);                \
    proto_machine_stat_set(ctx, machine, name, cpu, (int64_t)(value));                                   \
  } while (0)
  for (size_t i = 0; i < st->n_cpu_stats; i++) {
    const Perfetto__Protos__FtraceCpuStats *c = st->cpu_stats[i];
    int64_t cpu = (int64_t)c->cpu;
    CPU_STAT("entries", c->entries);
    CPU_STAT("overrun", c->overrun);
    CPU_STAT("commit_overrun", c->commit_overrun);
    CPU_STAT("bytes", c->bytes_read);
    CPU_STAT("dropped_events", c->dropped_events);
    CPU_STAT("read_events", c->read_events);
    CPU_STAT("now_ts", c->now_ts * 1e9);
    double oldest = c->oldest_event_ts * 1e9;
    CPU_STAT("oldest_event_ts", oldest >= 9.2e18 ? INT64_MAX : (int64_t)oldest);
  }
#undef CPU_STAT
  if (st->phase == PERFETTO__PROTOS__FTRACE_STATS__PHASE__START_OF_TRACE) {
    size_t errors = st->n_failed_ftrace_events + st->n_unknown_ftrace_events +
                    (st->atrace_errors && *st->atrace_errors ? 1 : 0);
    if (errors)
      proto_machine_stat_set(ctx, machine, "ftrace_setup_errors", -1, (int64_t)errors);
  }
  perfetto__protos__ftrace_stats__free_unpacked(st, NULL);
  return true;
}

bool proto_service_read_event(proto_context *ctx, const proto_machine *machine,
                              const proto_timestamp *ts,
                              const uint8_t *data, size_t len) {
  Perfetto__Protos__TracingServiceEvent *e =
      perfetto__protos__tracing_service_event__unpack(NULL, len, data);
  if (!e)
    return false;
  const char *key = NULL;
  switch (e->event_type_case) {
  case PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_TRACING_STARTED:
    key = "tracing_started_ns";
    break;
  case PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_ALL_DATA_SOURCES_STARTED:
    key = "all_data_source_started_ns";
    break;
  case PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_ALL_DATA_SOURCES_FLUSHED:
    key = "all_data_source_flushed_ns";
    break;
  case PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_READ_TRACING_BUFFERS_COMPLETED:
    key = "tracing_buffers_read_ns";
    break;
  case PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_TRACING_DISABLED:
    key = "tracing_disabled_ns";
    break;
  default:
    break;
  }
  if (key && ts)
    proto_machine_metadata_int(ctx, machine, key, ts->ns);
  perfetto__protos__tracing_service_event__free_unpacked(e, NULL);
  return true;
}

bool proto_service_read_uuid(proto_context *ctx, const proto_machine *machine,
                             const uint8_t *data, size_t len) {
  Perfetto__Protos__TraceUuid *u = perfetto__protos__trace_uuid__unpack(NULL, len, data);
  if (!u)
    return false;
  /* The 16 bytes lsb (little end first) then msb, printed as a uuid. */
  uint8_t bytes[16];
  uint64_t lsb = (uint64_t)u->lsb, msb = (uint64_t)u->msb;
  for (int i = 0; i < 8; i++) {
    bytes[i] = (uint8_t)(lsb >> (8 * i));
    bytes[8 + i] = (uint8_t)(msb >> (8 * i));
  }
  char text[40];
  int n = 0;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      text[n++] = '-';
    n += snprintf(text + n, sizeof text - (size_t)n, "%02x", bytes[15 - i]);
  }
  proto_machine_metadata_string(ctx, machine, "trace_uuid", proto_intern(ctx, text, (size_t)n));
  perfetto__protos__trace_uuid__free_unpacked(u, NULL);
  return true;
}

/* ChromeEventBundle: metadata (2) of ChromeMetadata {name 1; one of
 * string_value 2, bool_value 3, int_value 4, json_value 5}. A bool is an
 * int row and a JSON value a string row, as trace_processor keeps them;
 * an entry without a value is counted (empty_chrome_metadata). */
enum { BUNDLE_METADATA = 2 };
enum { CR_NAME = 1, CR_STRING = 2, CR_BOOL = 3, CR_INT = 4, CR_JSON = 5 };

static bool read_chrome_metadata(proto_context *ctx, const proto_machine *machine,
                                 uint32_t bundle, const uint8_t *data, size_t len) {
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  const uint8_t *name = NULL;
  size_t name_len = 0;
  pw_field value = {0};
  while (pw_next(&c, &f)) {
    bool delimited = f.wire_type == PW_LENGTH_DELIMITED;
    if (f.number == CR_NAME && delimited) {
      name = f.data;
      name_len = f.len;
    } else if (((f.number == CR_STRING || f.number == CR_JSON) && delimited) ||
               ((f.number == CR_BOOL || f.number == CR_INT) && f.wire_type == PW_VARINT)) {
      value = f; /* a oneof: the last one set */
    }
  }
  if (c.error != PW_OK)
    return false;
  if (!value.number) {
    proto_count(ctx, "empty_chrome_metadata");
    return true;
  }
  char *key = bundle > 1 ? g_strdup_printf("cr-%u-%.*s", bundle, (int)name_len, (const char *)name)
                         : g_strdup_printf("cr-%.*s", (int)name_len, (const char *)name);
  if (value.number == CR_STRING || value.number == CR_JSON)
    proto_machine_metadata_string(ctx, machine, key,
                                  proto_intern(ctx, (const char *)value.data, value.len));
  else
    proto_machine_metadata_int(ctx, machine, key,
                               value.number == CR_BOOL ? value.value != 0 : (int64_t)value.value);
  g_free(key);
  return true;
}

bool proto_service_read_chrome_events(proto_context *ctx, proto_machine *machine,
                                      const uint8_t *data, size_t len, bool *has_events) {
  *has_events = false;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  bool counted = false;
  while (pw_next(&c, &f)) {
    if (f.number != BUNDLE_METADATA || f.wire_type != PW_LENGTH_DELIMITED) {
      *has_events = true;
      continue;
    }
    if (!counted) {
      machine->chrome_metadata_bundles++;
      counted = true;
    }
    if (!read_chrome_metadata(ctx, machine, machine->chrome_metadata_bundles, f.data, f.len))
      return false;
  }
  return c.error == PW_OK;
}

static void process_counter(proto_context *ctx, tm_process_ref process, const char *name,
                            const proto_timestamp *ts, double value) {
  tm_track_desc desc = {
      TM_TRACK_DESC_INIT,
      .type = "process_memory",
      .is_counter = 1,
      .name = proto_intern_cstr(ctx, name),
      .process = process,
  };
  tm_track_ref track = ctx->s->track_intern(ctx->host, &desc);
  if (track)
    ctx->s->counter(ctx->host, track, ts->clock, ts->ns, value, TM_NO_ARGS);
}

bool proto_service_read_process_stats(proto_context *ctx, proto_machine *machine,
                                      const proto_timestamp *ts, const uint8_t *data,
                                      size_t len) {
  Perfetto__Protos__ProcessStats *st = perfetto__protos__process_stats__unpack(NULL, len, data);
  if (!st)
    return false;
  for (size_t i = 0; ts && i < st->n_processes; i++) {
    const Perfetto__Protos__ProcessStats__Process *p = st->processes[i];
    if (!p->has_pid)
      continue;
    tm_process_ref process = ctx->s->process(ctx->host, machine->ref, p->pid);
    const struct {
      bool has;
      uint64_t kb;
      const char *name;
    } mem[] = {
        {p->has_vm_size_kb, p->vm_size_kb, "mem.virt"},
        {p->has_vm_rss_kb, p->vm_rss_kb, "mem.rss"},
        {p->has_rss_anon_kb, p->rss_anon_kb, "mem.rss.anon"},
        {p->has_rss_file_kb, p->rss_file_kb, "mem.rss.file"},
        {p->has_rss_shmem_kb, p->rss_shmem_kb, "mem.rss.shmem"},
        {p->has_vm_swap_kb, p->vm_swap_kb, "mem.swap"},
        {p->has_vm_locked_kb, p->vm_locked_kb, "mem.locked"},
        {p->has_vm_hwm_kb, p->vm_hwm_kb, "mem.rss.watermark"},
    };
    for (size_t m = 0; m < G_N_ELEMENTS(mem); m++)
      if (mem[m].has)
        process_counter(ctx, process, mem[m].name, ts, (double)mem[m].kb * 1024.0);
    if (p->has_oom_score_adj)
      process_counter(ctx, process, "oom_score_adj", ts, (double)p->oom_score_adj);
  }
  perfetto__protos__process_stats__free_unpacked(st, NULL);
  return true;
}

/* /proc/meminfo keys by MeminfoCounters value (1..). */
static const char *const meminfo_names[] = {
    NULL,           "MemTotal",       "MemFree",          "MemAvailable",  "Buffers",
    "Cached",       "SwapCached",     "Active",           "Inactive",      "Active(anon)",
    "Inactive(anon)", "Active(file)", "Inactive(file)",   "Unevictable",   "Mlocked",
    "SwapTotal",    "SwapFree",       "Dirty",            "Writeback",     "AnonPages",
    "Mapped",       "Shmem",          "Slab",             "SReclaimable",  "SUnreclaim",
    "KernelStack",  "PageTables",     "CommitLimit",      "Committed_AS",  "VmallocTotal",
    "VmallocUsed",  "VmallocChunk",   "CmaTotal",         "CmaFree",
};

static void global_counter(proto_context *ctx, proto_machine *machine, const char *name,
                           const proto_timestamp *ts, double value) {
  tm_track_desc desc = {TM_TRACK_DESC_INIT, .type = "sys_stats", .is_counter = 1,
                        .name = proto_intern_cstr(ctx, name)};
  desc.machine = machine->ref;
  tm_track_ref track = ctx->s->track_intern(ctx->host, &desc);
  if (track)
    ctx->s->counter(ctx->host, track, ts->clock, ts->ns, value, TM_NO_ARGS);
}

bool proto_service_read_sys_stats(proto_context *ctx, proto_machine *machine,
                                  const proto_timestamp *ts, const uint8_t *data, size_t len) {
  Perfetto__Protos__SysStats *st = perfetto__protos__sys_stats__unpack(NULL, len, data);
  if (!st)
    return false;
  if (!ts)
    goto out;
  for (size_t i = 0; i < st->n_meminfo; i++) {
    int32_t key = st->meminfo[i]->key;
    if (key <= 0 || (size_t)key >= G_N_ELEMENTS(meminfo_names)) {
      proto_count(ctx, "meminfo_unknown_keys");
      continue;
    }
    global_counter(ctx, machine, meminfo_names[key], ts,
                   (double)st->meminfo[i]->value * 1024.0);
  }
  for (size_t i = 0; i < st->n_cpu_stat; i++) {
    const Perfetto__Protos__SysStats__CpuTimes *c = st->cpu_stat[i];
    const struct {
      bool has;
      uint64_t ns;
      const char *name;
    } times[] = {
        {c->has_user_ns, c->user_ns, "cpu.times.user_ns"},
        {c->has_user_nice_ns, c->user_nice_ns, "cpu.times.user_nice_ns"},
        {c->has_system_mode_ns, c->system_mode_ns, "cpu.times.system_mode_ns"},
        {c->has_idle_ns, c->idle_ns, "cpu.times.idle_ns"},
        {c->has_io_wait_ns, c->io_wait_ns, "cpu.times.io_wait_ns"},
        {c->has_irq_ns, c->irq_ns, "cpu.times.irq_ns"},
        {c->has_softirq_ns, c->softirq_ns, "cpu.times.softirq_ns"},
        {c->has_steal_ns, c->steal_ns, "cpu.times.steal_ns"},
    };
    for (size_t t = 0; t < G_N_ELEMENTS(times); t++) {
      if (!times[t].has)
        continue;
      tm_track_desc desc = {TM_TRACK_DESC_INIT, .type = "cpu_stat", .is_counter = 1,
                            .name = proto_intern_cstr(ctx, times[t].name)};
      desc.machine = machine->ref;
      desc.has_cpu = 1;
      desc.cpu = c->cpu_id;
      tm_track_ref track = ctx->s->track_intern(ctx->host, &desc);
      if (track)
        ctx->s->counter(ctx->host, track, ts->clock, ts->ns, (double)times[t].ns, TM_NO_ARGS);
    }
  }
  if (st->has_num_forks)
    global_counter(ctx, machine, "num_forks", ts, (double)st->num_forks);
  if (st->has_num_irq_total)
    global_counter(ctx, machine, "num_irq_total", ts, (double)st->num_irq_total);
  if (st->has_num_softirq_total)
    global_counter(ctx, machine, "num_softirq_total", ts, (double)st->num_softirq_total);
out:
  perfetto__protos__sys_stats__free_unpacked(st, NULL);
  return true;
}
