/* Trigger packets (see proto_trigger.h). */
#include "proto_trigger.h"

#include "proto_context.h"
#include "proto_tracks.h"
#include "proto_wire_decode.h"

bool proto_trigger_read(proto_context *ctx, proto_machine *machine, const proto_timestamp *ts,
                        const uint8_t *data, size_t len) {
  const uint8_t *name = NULL, *producer = NULL;
  size_t name_len = 0, producer_len = 0;
  bool has_uid = false;
  int64_t uid = 0;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
    switch (f.number) {
    case 1: /* trigger_name */
    case 2: /* producer_name */
      if (f.wire_type != PW_LENGTH_DELIMITED)
        return false;
      if (f.number == 1) {
        name = f.data;
        name_len = f.len;
      } else {
        producer = f.data;
        producer_len = f.len;
      }
      break;
    case 3: /* trusted_producer_uid, an int32 */
      if (f.wire_type != PW_VARINT)
        return false;
      has_uid = true;
      uid = (int32_t)(uint32_t)f.value;
      break;
    default:
      break;
    }
  }
  if (c.error != PW_OK)
    return false;
  if (!ts)
    return true;
  const tm_host_services *s = ctx->s;
  tm_track_desc desc = {.struct_size = sizeof desc, .type = "triggers",
                        .name = proto_intern_cstr(ctx, "Trace Triggers")};
  tm_track_ref track = proto_tracks_intern(ctx, machine, &desc);
  if (producer)
    s->args_add(ctx->host, proto_intern_cstr(ctx, "producer_name"),
                (tm_arg_value){.type = TM_ARG_STRING,
                               .u.str_id = proto_intern(ctx, (const char *)producer, producer_len)});
  if (has_uid)
    s->args_add(ctx->host, proto_intern_cstr(ctx, "trusted_producer_uid"),
                (tm_arg_value){.type = TM_ARG_INT, .u.int_value = uid});
  tm_slice_fields fields = {TM_SLICE_FIELDS_INIT};
  fields.track = track;
  fields.clock = ts->clock;
  fields.ts = ts->ns;
  fields.name = name ? proto_intern(ctx, (const char *)name, name_len) : 0;
  fields.args = s->args_commit(ctx->host);
  s->slice_complete(ctx->host, &fields, 0);
  return true;
}
