/* SystemInfo packets (see proto_system_info.h). */
#include "proto_system_info.h"

#include "proto_context.h"
#include "trace.pb-c.h"

typedef struct system_info_sink {
  proto_context *ctx;
  proto_machine *machine;
  bool metadata; /* the default machine: metadata rows too */
} system_info_sink;

/* The machine column `column` and the metadata key `key` (either NULL). */
static void put_string(const system_info_sink *sink, const char *column,
                       const char *key, const char *value) {
  proto_context *ctx = sink->ctx;
  if (!value)
    return;
  tm_str_id id = proto_intern_cstr(ctx, value);
  if (column)
    ctx->s->machine_set_info(ctx->host, sink->machine->ref, column,
                             (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = id});
  if (key && sink->metadata)
    ctx->s->metadata_set_string(ctx->host, key, id);
}

static void put_int(const system_info_sink *sink, const char *column,
                    const char *key, int64_t value) {
  proto_context *ctx = sink->ctx;
  if (column)
    ctx->s->machine_set_info(ctx->host, sink->machine->ref, column,
                             (tm_arg_value){.type = TM_ARG_INT, .u.int_value = value});
  if (key && sink->metadata)
    ctx->s->metadata_set_int(ctx->host, key, value);
}

bool proto_system_info_read(proto_context *ctx, proto_machine *machine, const uint8_t *data,
                            size_t len, uint32_t *num_cpus) {
  Perfetto__Protos__SystemInfo *info =
      perfetto__protos__system_info__unpack(NULL, len, data);
  if (!info)
    return false;
  system_info_sink sink = {ctx, machine, machine->raw_id == 0};
  const Perfetto__Protos__Utsname *uts = info->utsname;
  if (uts) {
    put_string(&sink, "sysname", "system_name", uts->sysname);
    put_string(&sink, "release", "system_release", uts->release);
    put_string(&sink, "version", "system_version", uts->version);
    put_string(&sink, "arch", "system_machine", uts->machine);
  }
  put_string(&sink, "android_build_fingerprint", "android_build_fingerprint",
             info->android_build_fingerprint);
  put_string(&sink, "android_device_manufacturer", "android_device_manufacturer",
             info->android_device_manufacturer);
  put_string(&sink, NULL, "tracing_service_version", info->tracing_service_version);
  put_string(&sink, "name", NULL, info->machine_name);
  if (info->has_android_sdk_version)
    put_int(&sink, "android_sdk_version", "android_sdk_version",
            (int64_t)info->android_sdk_version);
  if (info->has_num_cpus) {
    put_int(&sink, "num_cpus", NULL, info->num_cpus);
    *num_cpus = info->num_cpus;
  }
  if (info->has_timezone_off_mins)
    put_int(&sink, NULL, "timezone_off_mins", info->timezone_off_mins);
  if (info->has_system_ram_bytes) {
    int64_t bytes = (int64_t)info->system_ram_bytes;
    put_int(&sink, "system_ram_bytes", "system_ram_bytes", bytes);
    put_int(&sink, NULL, "system_ram_gb", (bytes + 500000000) / 1000000000);
  }
  perfetto__protos__system_info__free_unpacked(info, NULL);
  return true;
}
