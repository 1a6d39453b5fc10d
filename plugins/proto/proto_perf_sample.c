/* PerfSample packets (see proto_perf_sample.h). */
#include "proto_perf_sample.h"

#include "proto_clock.h"
#include "proto_context.h"
#include "proto_sequence_state.h"
#include "proto_stack_profile.h"
#include "proto_wire_decode.h"

bool proto_perf_sample_read(proto_context *ctx, proto_machine *machine, proto_sequence *seq,
                            const proto_timestamp *ts, const uint8_t *data, size_t len) {
  bool has_cpu = false, has_lost = false, skipped = false, has_sample = false;
  uint64_t cpu = 0, pid = 0, tid = 0, callstack_iid = 0, lost = 0, reason = 0;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  bool ok = true;
  while (ok && pw_next(&c, &f)) {
    uint64_t *into = NULL;
    switch (f.number) {
    case 1:
      has_cpu = true;
      into = &cpu;
      break;
    case 2:
      has_sample = true;
      into = &pid;
      break;
    case 3:
      has_sample = true;
      into = &tid;
      break;
    case 4:
      has_sample = true;
      into = &callstack_iid;
      break;
    case 17:
      has_lost = true;
      into = &lost;
      break;
    case 18:
      skipped = true;
      into = &reason;
      break;
    default:
      break; /* cpu_mode, counters, unwind errors, producer_event: no column */
    }
    if (into) {
      ok = f.wire_type == PW_VARINT;
      *into = f.value;
    }
  }
  if (!ok || c.error != PW_OK)
    return false;
  if (has_lost) {
    ctx->s->stat_add(ctx->host, "perf_samples_skipped_dataloss",
                     lost > INT64_MAX ? INT64_MAX : (int64_t)lost);
    return true;
  }
  if (skipped) {
    proto_count(ctx, "perf_samples_skipped");
    return true;
  }
  if (!has_sample)
    return true;
  tm_thread_ref thread = ctx->s->thread(ctx->host, machine->ref, (int64_t)(uint32_t)pid,
                                        (int64_t)(uint32_t)tid);
  tm_callsite_ref callsite =
      callstack_iid ? proto_stack_callsite(ctx, seq, callstack_iid) : 0;
  int32_t sample_cpu = has_cpu && cpu <= INT32_MAX ? (int32_t)cpu : -1;
  ctx->s->sample(ctx->host, ts->clock, ts->ns, thread, callsite, sample_cpu);
  return true;
}
