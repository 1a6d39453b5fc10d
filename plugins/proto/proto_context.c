/* The context of the proto reader's modules (see proto_context.h). */
#include "proto_context.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void proto_context_init(proto_context *ctx, const tm_host_services *s, tm_host *host) {
  memset(ctx, 0, sizeof *ctx);
  ctx->s = s;
  ctx->host = host;
  ctx->host_has_system = TM_HOST_HAS(s, sched_blocked_reason);
  ctx->waiting_event_offset = -1;
  ctx->inflate_ratio = 1000;
  if (TM_HOST_HAS(s, budget) && s->budget != NULL) {
    int64_t ratio = s->budget(host, TM_BUDGET_INFLATE_RATIO);
    if (ratio > 0)
      ctx->inflate_ratio = (uint64_t)ratio;
  }
  proto_machine_of(ctx, 0);
}

void proto_context_free(proto_context *ctx) {
  proto_sequence_table_free(&ctx->sequences);
  for (size_t i = 0; i < ctx->machines.len; i++)
    proto_machine_free(ctx->machines.data[i]);
  tm_vec_free(&ctx->machines);
  proto_map_free(&ctx->machine_index);
  proto_map_free(&ctx->unmodelled);
  tm_vec_free(&ctx->text);
  free(ctx->arg_keys);
}

proto_machine *proto_context_machine_slow_(proto_context *ctx, uint32_t raw_id) {
  uint32_t index;
  if (proto_map_get(&ctx->machine_index, raw_id, &index))
    return ctx->machines.data[index];
  proto_machine *machine = proto_xrealloc(NULL, sizeof *machine);
  memset(machine, 0, sizeof *machine);
  machine->raw_id = raw_id;
  machine->index = (uint32_t)ctx->machines.len;
  machine->ref = raw_id == 0 ? ctx->s->machine_default(ctx->host)
                             : ctx->s->machine_embedded(ctx->host, raw_id);
  tm_vec_push(&ctx->machines, machine);
  proto_map_put(&ctx->machine_index, raw_id, machine->index);
  return machine;
}

void proto_count_with(proto_context *ctx, const char *name, const tm_import_log_arg *args,
                      size_t n) {
  int64_t offset = ctx->waiting_event_offset >= 0 ? ctx->waiting_event_offset
                                                  : (int64_t)ctx->packet_offset;
  ctx->s->import_log(ctx->host, name, offset, args, n);
}

void proto_count(proto_context *ctx, const char *name) {
  proto_count_with(ctx, name, NULL, 0);
}

static const char *wire_type_name(uint32_t wire_type) {
  switch (wire_type) {
  case 0:
    return "varint";
  case 1:
    return "fixed64";
  case 2:
    return "length-delimited";
  case 5:
    return "fixed32";
  default:
    return "unsupported";
  }
}

void proto_count_wrong_wire_type(proto_context *ctx, const char *message, uint32_t field,
                                 uint32_t wire_type, uint32_t expected) {
  char text[200];
  int n = snprintf(text, sizeof text,
                   "packet %" PRIu64 ": %s field %" PRIu32 " has wire type %" PRIu32
                   " (%s), expected %" PRIu32 " (%s); the packet is dropped",
                   ctx->packet_index, message, field, wire_type, wire_type_name(wire_type),
                   expected, wire_type_name(expected));
  const tm_import_log_arg args[] = {
      {TM_IMPORT_LOG_ARG_INIT, .key = "message", .type = TM_ARG_STRING, .string = text,
       .string_len = (size_t)n},
      {TM_IMPORT_LOG_ARG_INIT, .key = "proto_message", .type = TM_ARG_STRING,
       .string = message, .string_len = strlen(message)},
      {TM_IMPORT_LOG_ARG_INIT, .key = "field", .type = TM_ARG_UINT, .int_value = field},
      {TM_IMPORT_LOG_ARG_INIT, .key = "wire_type", .type = TM_ARG_UINT,
       .int_value = wire_type},
      {TM_IMPORT_LOG_ARG_INIT, .key = "expected_wire_type", .type = TM_ARG_UINT,
       .int_value = expected},
  };
  proto_count_with(ctx, "proto_packet_wrong_wire_type", args, sizeof args / sizeof *args);
}

void proto_count_unmodelled(proto_context *ctx, uint32_t field) {
  uint32_t n = 0;
  proto_map_get(&ctx->unmodelled, field, &n);
  proto_map_put(&ctx->unmodelled, field, ++n);
  ctx->s->stat_set_indexed(ctx->host, "proto_unmodelled_payload", field, n);
}

void proto_stat_add(proto_context *ctx, const char *name, int64_t delta) {
  ctx->s->stat_add(ctx->host, name, delta);
}

/* Whether `machine`'s rows need the per-machine services. */
static bool machine_scoped(const proto_context *ctx, const proto_machine *machine) {
  return machine && machine->raw_id != 0 &&
         TM_HOST_HAS(ctx->s, machine_metadata_set_string);
}

void proto_machine_stat_set(proto_context *ctx, const proto_machine *machine, const char *name,
                            int64_t idx, int64_t value) {
  if (!ctx->host_has_system)
    return;
  if (machine_scoped(ctx, machine))
    ctx->s->machine_stat_set_indexed(ctx->host, machine->ref, name, idx, value);
  else
    ctx->s->stat_set_indexed(ctx->host, name, idx, value);
}

void proto_machine_metadata_int(proto_context *ctx, const proto_machine *machine,
                                const char *name, int64_t value) {
  if (machine_scoped(ctx, machine))
    ctx->s->machine_metadata_set_int(ctx->host, machine->ref, name, value);
  else
    ctx->s->metadata_set_int(ctx->host, name, value);
}

void proto_machine_metadata_string(proto_context *ctx, const proto_machine *machine,
                                   const char *name, tm_str_id value) {
  if (machine_scoped(ctx, machine))
    ctx->s->machine_metadata_set_string(ctx->host, machine->ref, name, value);
  else
    ctx->s->metadata_set_string(ctx->host, name, value);
}

bool proto_fail(proto_context *ctx, uint64_t offset, const char *fmt, ...) {
  char message[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  ctx->s->report_error(ctx->host, (int64_t)offset, message);
  return false;
}

tm_str_id proto_intern_cstr(proto_context *ctx, const char *s) {
  return ctx->s->intern_string(ctx->host, s, strlen(s));
}
