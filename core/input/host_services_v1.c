/*
 * The services table of reader ABI version 1 (reader_abi_v1.h): a service
 * whose signature did not change is version 2's own function; the others
 * convert their arguments to version 2's layouts and call it, so a
 * version-1 reader gets exactly what it got before version 2.
 *
 * What changed: tm_track_desc, tm_slice_fields and tm_import_log_arg gained
 * struct_size (and the description a machine and a cpu, which version 1
 * passed to track_intern_on_machine and track_intern_cpu); sample() named
 * its table by a source string instead of the descriptor.
 */
#include <glib.h>
#include <string.h>

#include "input/host_services.h"
#include "model/profile_builder.h"

static const tm_host_services *const v2 = &host_services_v2;

static tm_track_desc track_desc_from_v1(const tm_v1_track_desc *d) {
  return (tm_track_desc){
      TM_TRACK_DESC_INIT,
      .is_counter = d->is_counter ? 1u : 0u,
      .type = d->type,
      .name = d->name,
      .thread = d->thread,
      .process = d->process,
      .scope = d->scope,
      .key = d->key,
      .unit = d->unit,
  };
}

/* A NULL description stays NULL: version 2 refuses it the same way. */
static tm_track_ref v1_track_intern_on_machine(tm_host *host,
                                               tm_machine_ref machine,
                                               const tm_v1_track_desc *desc) {
  if (!desc) {
    tm_track_desc none = {TM_TRACK_DESC_INIT, .machine = machine};
    return v2->track_intern(host, &none); /* no type: refused */
  }
  tm_track_desc d = track_desc_from_v1(desc);
  d.machine = machine;
  return v2->track_intern(host, &d);
}

static tm_track_ref v1_track_intern(tm_host *host, const tm_v1_track_desc *desc) {
  return v1_track_intern_on_machine(host, 0, desc);
}

static tm_track_ref v1_track_intern_cpu(tm_host *host, tm_machine_ref machine,
                                        uint32_t cpu,
                                        const tm_v1_track_desc *desc) {
  if (!desc)
    return v1_track_intern_on_machine(host, machine, NULL); /* refused */
  tm_track_desc d = track_desc_from_v1(desc);
  d.machine = machine;
  d.has_cpu = 1;
  d.cpu = cpu;
  return v2->track_intern(host, &d);
}

static tm_slice_fields slice_from_v1(const tm_v1_slice_fields *f) {
  return (tm_slice_fields){
      .struct_size = sizeof(tm_slice_fields),
      .track = f->track,
      .clock = f->clock,
      .name = f->name,
      .category = f->category,
      .args = f->args,
      .ts = f->ts,
      .thread_ts = f->thread_ts,
      .thread_dur = f->thread_dur,
  };
}

static void v1_slice_begin(tm_host *host, const tm_v1_slice_fields *f) {
  if (!f) {
    v2->slice_begin(host, NULL); /* refused */
    return;
  }
  tm_slice_fields g = slice_from_v1(f);
  v2->slice_begin(host, &g);
}

static void v1_slice_end(tm_host *host, const tm_v1_slice_fields *f) {
  if (!f) {
    v2->slice_end(host, NULL); /* refused */
    return;
  }
  tm_slice_fields g = slice_from_v1(f);
  v2->slice_end(host, &g);
}

static void v1_slice_complete(tm_host *host, const tm_v1_slice_fields *f,
                              int64_t dur_ns) {
  if (!f) {
    v2->slice_complete(host, NULL, dur_ns); /* refused */
    return;
  }
  tm_slice_fields g = slice_from_v1(f);
  v2->slice_complete(host, &g, dur_ns);
}

/* Version 1 named the table by a source: "<source>_sample" when the host
 * has a sample table of that name, else cpu_profile_stack_sample. */
static void v1_sample(tm_host *host, tm_clock_ref clock, int64_t ts,
                      tm_thread_ref thread, tm_callsite_ref callsite,
                      const char *source, int32_t cpu) {
  int table = -1;
  if (source) {
    char *name = g_strconcat(source, "_sample", NULL);
    table = profile_table_by_name(name);
    g_free(name);
  }
  host_sample(host, table >= 0 ? table : PROFILE_TABLE_CPU_PROFILE, clock, ts,
              thread, callsite, cpu);
}

static void v1_import_log(tm_host *host, const char *name, int64_t byte_offset,
                          const tm_v1_import_log_arg *args, size_t n_args) {
  if (!args || n_args == 0) {
    host_import_log(host, name, byte_offset, NULL, 0);
    return;
  }
  tm_import_log_arg *copies = g_new0(tm_import_log_arg, n_args);
  for (size_t i = 0; i < n_args; i++)
    copies[i] = (tm_import_log_arg){
        TM_IMPORT_LOG_ARG_INIT,
        .type = args[i].type,
        .key = args[i].key,
        .int_value = args[i].int_value,
        .real_value = args[i].real_value,
        .string = args[i].string,
        .string_len = args[i].string_len,
    };
  host_import_log(host, name, byte_offset, copies, n_args);
  g_free(copies);
}

static tm_v1_host_services table;

static void fill_table(void) {
  table = (tm_v1_host_services){
      .struct_size = sizeof(tm_v1_host_services),
      .abi_version = TM_READER_ABI_V1,
      .intern_string = v2->intern_string,
      .clock_private = v2->clock_private,
      .clock_builtin = v2->clock_builtin,
      .clock_sequence = v2->clock_sequence,
      .claim_trace_time = v2->claim_trace_time,
      .add_clock_snapshot = v2->add_clock_snapshot,
      .machine_default = v2->machine_default,
      .machine_embedded = v2->machine_embedded,
      .process = v2->process,
      .thread = v2->thread,
      .process_set_name = v2->process_set_name,
      .thread_set_name = v2->thread_set_name,
      .process_add_arg = v2->process_add_arg,
      .thread_add_arg = v2->thread_add_arg,
      .track_thread = v2->track_thread,
      .track_intern = v1_track_intern,
      .args_add = v2->args_add,
      .args_commit = v2->args_commit,
      .slice_begin = v1_slice_begin,
      .slice_end = v1_slice_end,
      .slice_complete = v1_slice_complete,
      .counter = v2->counter,
      .flow = v2->flow,
      .metadata_set_int = v2->metadata_set_int,
      .metadata_set_string = v2->metadata_set_string,
      .stat_add = v2->stat_add,
      .report_error = v2->report_error,
      .track_intern_on_machine = v1_track_intern_on_machine,
      .track_set_parent = v2->track_set_parent,
      .track_add_source_arg = v2->track_add_source_arg,
      .process_set_cmdline = v2->process_set_cmdline,
      .process_set_parent = v2->process_set_parent,
      .process_set_uid = v2->process_set_uid,
      .machine_set_info = v2->machine_set_info,
      .track_intern_cpu = v1_track_intern_cpu,
      .sched_switch = v2->sched_switch,
      .sched_waking = v2->sched_waking,
      .mapping = v2->mapping,
      .frame = v2->frame,
      .callsite = v2->callsite,
      .sample = v1_sample,
      .import_log = v1_import_log,
      .remote_clock_sync = v2->remote_clock_sync,
  };
}

/* Filled once, on first use: version 2's functions are not constant
 * expressions here. */
const tm_v1_host_services *host_services_v1(void) {
  static gsize filled = 0;
  if (g_once_init_enter(&filled)) {
    fill_table();
    g_once_init_leave(&filled, 1);
  }
  return &table;
}
