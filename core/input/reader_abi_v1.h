/*
 * The reader ABI of version 1, frozen: the layouts a version-1 reader was
 * built with, so the host can still load it (plugin_loader.c reads its
 * descriptor) and serve it (host_services_v1.c adapts its calls to the
 * current services). Only the types whose layout differs from the current
 * <tracemerge/plugin.h> are here; the id typedefs, tm_arg_value and the
 * enums did not change. tests/plugins/v1/tracemerge/plugin.h is the
 * version-1 header itself, verbatim, which the version-1 test reader is
 * built with.
 *
 * Never change this file: version-1 readers out there were built with it.
 */
#ifndef TM_READER_ABI_V1_H
#define TM_READER_ABI_V1_H

#include <tracemerge/plugin.h>

#define TM_READER_ABI_V1 1u

typedef struct tm_v1_import_log_arg {
  const char *key;
  tm_arg_type type;
  int64_t int_value;
  double real_value;
  const char *string;
  size_t string_len;
} tm_v1_import_log_arg;

typedef struct tm_v1_track_desc {
  const char *type;
  int is_counter;
  tm_str_id name;
  tm_thread_ref thread;
  tm_process_ref process;
  tm_str_id scope;
  uint64_t key;
  tm_str_id unit;
} tm_v1_track_desc;

typedef struct tm_v1_slice_fields {
  tm_track_ref track;
  tm_clock_ref clock;
  int64_t ts;
  tm_str_id name;
  tm_str_id category;
  tm_args_ref args;
  int64_t thread_ts;
  int64_t thread_dur;
} tm_v1_slice_fields;

/* Version 1's services table: the services of its first release, then
 * those it appended (which a version-1 reader checks with its struct_size
 * before use). */
typedef struct tm_v1_host_services {
  uint32_t struct_size;
  uint32_t abi_version;
  tm_str_id (*intern_string)(tm_host *host, const char *s, size_t len);
  tm_clock_ref (*clock_private)(tm_host *host);
  tm_clock_ref (*clock_builtin)(tm_host *host, tm_machine_ref machine,
                                uint32_t clock_id);
  tm_clock_ref (*clock_sequence)(tm_host *host, tm_machine_ref machine,
                                 uint32_t sequence_id, uint32_t clock_id);
  bool (*claim_trace_time)(tm_host *host, tm_clock_ref clock);
  bool (*add_clock_snapshot)(tm_host *host, const tm_clock_ref *clocks,
                             const int64_t *values_ns, size_t count);
  tm_machine_ref (*machine_default)(tm_host *host);
  tm_machine_ref (*machine_embedded)(tm_host *host, uint32_t raw_id);
  tm_process_ref (*process)(tm_host *host, tm_machine_ref machine,
                            int64_t pid);
  tm_thread_ref (*thread)(tm_host *host, tm_machine_ref machine, int64_t pid,
                          int64_t tid);
  void (*process_set_name)(tm_host *host, tm_process_ref process,
                           tm_str_id name);
  void (*thread_set_name)(tm_host *host, tm_thread_ref thread, tm_str_id name);
  void (*process_add_arg)(tm_host *host, tm_process_ref process, tm_str_id key,
                          tm_arg_value value);
  void (*thread_add_arg)(tm_host *host, tm_thread_ref thread, tm_str_id key,
                         tm_arg_value value);
  tm_track_ref (*track_thread)(tm_host *host, tm_thread_ref thread);
  tm_track_ref (*track_intern)(tm_host *host, const tm_v1_track_desc *desc);
  void (*args_add)(tm_host *host, tm_str_id key, tm_arg_value value);
  tm_args_ref (*args_commit)(tm_host *host);
  void (*slice_begin)(tm_host *host, const tm_v1_slice_fields *f);
  void (*slice_end)(tm_host *host, const tm_v1_slice_fields *f);
  void (*slice_complete)(tm_host *host, const tm_v1_slice_fields *f,
                         int64_t dur_ns);
  void (*counter)(tm_host *host, tm_track_ref track, tm_clock_ref clock,
                  int64_t ts, double value, tm_args_ref args);
  void (*flow)(tm_host *host, tm_track_ref track, tm_clock_ref clock,
               int64_t ts, uint64_t flow_id, tm_flow_direction direction,
               tm_flow_binding binding, tm_args_ref args);
  void (*metadata_set_int)(tm_host *host, const char *name, int64_t value);
  void (*metadata_set_string)(tm_host *host, const char *name, tm_str_id value);
  void (*stat_add)(tm_host *host, const char *name, int64_t delta);
  void (*report_error)(tm_host *host, int64_t byte_offset, const char *message);
  /* appended during version 1 */
  tm_track_ref (*track_intern_on_machine)(tm_host *host, tm_machine_ref machine,
                                          const tm_v1_track_desc *desc);
  void (*track_set_parent)(tm_host *host, tm_track_ref track,
                           tm_track_ref parent);
  void (*track_add_source_arg)(tm_host *host, tm_track_ref track, tm_str_id key,
                               tm_arg_value value);
  void (*process_set_cmdline)(tm_host *host, tm_process_ref process,
                              tm_str_id cmdline);
  void (*process_set_parent)(tm_host *host, tm_process_ref process,
                             tm_process_ref parent);
  void (*process_set_uid)(tm_host *host, tm_process_ref process, int64_t uid);
  void (*machine_set_info)(tm_host *host, tm_machine_ref machine,
                           const char *column, tm_arg_value value);
  tm_track_ref (*track_intern_cpu)(tm_host *host, tm_machine_ref machine,
                                   uint32_t cpu, const tm_v1_track_desc *desc);
  void (*sched_switch)(tm_host *host, tm_clock_ref clock, int64_t ts,
                       tm_machine_ref machine, uint32_t cpu,
                       tm_thread_ref prev, tm_str_id prev_state,
                       tm_thread_ref next, int32_t next_prio);
  void (*sched_waking)(tm_host *host, tm_clock_ref clock, int64_t ts,
                       tm_machine_ref machine, uint32_t target_cpu,
                       tm_thread_ref thread, tm_thread_ref waker);
  tm_mapping_ref (*mapping)(tm_host *host, tm_str_id name, tm_str_id build_id,
                            uint64_t start, uint64_t end, uint64_t exact_offset,
                            uint64_t load_bias);
  tm_frame_ref (*frame)(tm_host *host, tm_str_id function_name,
                        tm_mapping_ref mapping, uint64_t rel_pc);
  tm_callsite_ref (*callsite)(tm_host *host, tm_callsite_ref parent,
                              tm_frame_ref frame);
  /* `source` named the sample table: "<source>_sample" if the host has
   * such a table, else cpu_profile_stack_sample. */
  void (*sample)(tm_host *host, tm_clock_ref clock, int64_t ts,
                 tm_thread_ref thread, tm_callsite_ref callsite,
                 const char *source, int32_t cpu);
  void (*import_log)(tm_host *host, const char *name, int64_t byte_offset,
                     const tm_v1_import_log_arg *args, size_t n_args);
  bool (*remote_clock_sync)(tm_host *host);
} tm_v1_host_services;

typedef struct tm_v1_reader_descriptor {
  uint32_t abi_version; /* 1: where later versions have struct_size */
  uint32_t flags;
  const char *name;
  const char *description;
  int (*probe)(const uint8_t *head, size_t len, const char *file_name);
  void *(*open)(const tm_v1_host_services *services, tm_host *host,
                const uint8_t *config, size_t config_len);
  tm_status (*feed)(void *state, const uint8_t *data, size_t len);
  tm_status (*finish)(void *state);
  void (*close)(void *state);
} tm_v1_reader_descriptor;

#endif /* TM_READER_ABI_V1_H */
