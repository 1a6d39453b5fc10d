/* TrackEvent.legacy_event decoding (see proto_legacy_event.h). */
#include "proto_legacy_event.h"

#include <string.h>

#include "proto_wire_decode.h"

bool proto_legacy_event_decode(const uint8_t *data, size_t len, proto_legacy_event *out) {
  memset(out, 0, sizeof *out);
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  bool ok = true;
  while (ok && pw_next(&c, &f)) {
    bool is_varint = f.wire_type == PW_VARINT;
    switch (f.number) {
    case 1:
      ok = is_varint;
      out->has_name_iid = true;
      out->name_iid = f.value;
      break;
    case 2:
      ok = is_varint;
      out->phase = (int32_t)f.value;
      break;
    case 3:
      ok = is_varint;
      out->duration_us = (int64_t)f.value;
      break;
    case 4:
      ok = is_varint;
      out->has_thread_duration = true;
      out->thread_duration_us = (int64_t)f.value;
      break;
    /* unscoped_id, local_id and global_id are a oneof: the last wins. */
    case 6:
    case 10:
    case 11:
      ok = is_varint;
      out->id_kind = f.number == 6    ? PROTO_LEGACY_ID_UNSCOPED
                     : f.number == 10 ? PROTO_LEGACY_ID_LOCAL
                                      : PROTO_LEGACY_ID_GLOBAL;
      out->id = f.value;
      break;
    case 7:
      ok = f.wire_type == PW_LENGTH_DELIMITED;
      out->id_scope = f.data;
      out->id_scope_len = f.len;
      break;
    case 9:
      ok = is_varint;
      out->use_async_tts = f.value != 0;
      break;
    case 8:
      ok = is_varint;
      out->has_bind_id = true;
      out->bind_id = f.value;
      break;
    case 12:
      ok = is_varint;
      out->bind_to_enclosing = f.value != 0;
      break;
    case 13:
      ok = is_varint;
      out->flow_direction = (uint32_t)(f.value > 3 ? 0 : f.value);
      break;
    case 14:
      ok = is_varint;
      out->instant_scope = (uint32_t)(f.value > 3 ? 0 : f.value);
      break;
    case 18:
      ok = is_varint;
      out->has_pid_override = true;
      out->pid_override = (int32_t)f.value;
      break;
    case 19:
      ok = is_varint;
      out->has_tid_override = true;
      out->tid_override = (int32_t)f.value;
      break;
    default:
      break; /* instruction counts */
    }
  }
  return ok && c.error == PW_OK;
}
