/* FtraceEventBundle: framing, clocks, compact_sched (see proto_ftrace.h). */
#include "proto_ftrace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_clock.h"
#include "proto_context.h"
#include "proto_ftrace_kinds.h"
#include "proto_wire_decode.h"

enum bundle_field {
  BUNDLE_CPU = 1,
  BUNDLE_EVENT = 2,
  BUNDLE_COMPACT_SCHED = 4,
  BUNDLE_FTRACE_CLOCK = 5,
  BUNDLE_FTRACE_TIMESTAMP = 6,
  BUNDLE_BOOT_TIMESTAMP = 7,
};

enum ftrace_clock {
  FTRACE_CLOCK_UNSPECIFIED = 0,
  FTRACE_CLOCK_UNKNOWN = 1,
  FTRACE_CLOCK_GLOBAL = 2,
  FTRACE_CLOCK_LOCAL = 3,
  FTRACE_CLOCK_MONO_RAW = 4,
};

/* trace_processor's clock id for FTRACE_CLOCK_GLOBAL: sequence-scoped. */
#define GLOBAL_CLOCK_ID 64

/* The parallel arrays of one compact_sched, by field number. */
enum compact_field {
  CS_SWITCH_TS = 1,
  CS_SWITCH_PREV_STATE = 2,
  CS_SWITCH_NEXT_PID = 3,
  CS_SWITCH_NEXT_PRIO = 4,
  CS_INTERN_TABLE = 5,
  CS_SWITCH_NEXT_COMM = 6,
  CS_WAKING_TS = 7,
  CS_WAKING_PID = 8,
  CS_WAKING_TARGET_CPU = 9,
  CS_WAKING_PRIO = 10,
  CS_WAKING_COMM = 11,
  CS_WAKING_FLAGS = 12,
  CS_ARRAYS = 13,
};

struct proto_ftrace {
  proto_context *ctx;
  ftrace_kinds kinds;
  TM_VEC(ftrace_machine *) machines; /* by proto machine index */
  /* compact_sched scratch: the arrays, and the comm table with each
   * entry's interned id (0 until first used). */
  proto_u64_vec arrays[CS_ARRAYS];
  TM_VEC(proto_bytes) comms;
  TM_VEC(tm_str_id) comm_ids; /* by comm index: interned, 0 until used */
  TM_VEC(proto_bytes) events; /* the expanded events of the bundle being read */
  tm_clock_ref clock_of_bundle; /* of the bundle being read */
};

proto_ftrace *proto_ftrace_new(proto_context *ctx) {
  proto_ftrace *ft = proto_xrealloc(NULL, sizeof *ft);
  memset(ft, 0, sizeof *ft);
  ft->ctx = ctx;
  ftrace_kinds_init(&ft->kinds, ctx);
  return ft;
}

void proto_ftrace_free(proto_ftrace *ft) {
  if (!ft)
    return;
  for (size_t i = 0; i < ft->machines.len; i++) {
    ftrace_machine *m = ft->machines.data[i];
    if (!m)
      continue;
    tm_vec_free(&m->cpus);
    proto_map_free(&m->thread_index);
    free(m->direct);
    tm_vec_free(&m->threads);
    systrace_emitter_free(m->emitter);
    free(m);
  }
  tm_vec_free(&ft->machines);
  for (int i = 0; i < CS_ARRAYS; i++)
    tm_vec_free(&ft->arrays[i]);
  tm_vec_free(&ft->comms);
  tm_vec_free(&ft->comm_ids);
  tm_vec_free(&ft->events);
  ftrace_kinds_free(&ft->kinds);
  free(ft);
}

static ftrace_machine *machine_of(proto_ftrace *ft, proto_machine *machine) {
  while (ft->machines.len <= machine->index)
    tm_vec_push(&ft->machines, (ftrace_machine *)NULL);
  ftrace_machine **slot = &ft->machines.data[machine->index];
  if (!*slot) {
    *slot = proto_xrealloc(NULL, sizeof **slot);
    memset(*slot, 0, sizeof **slot);
    (*slot)->machine = machine;
  }
  return *slot;
}

void proto_ftrace_set_num_cpus(proto_ftrace *ft, proto_machine *machine, uint32_t num_cpus) {
  machine_of(ft, machine)->num_cpus = num_cpus;
}

/* --- clocks ------------------------------------------------------------------ */

/* The clock of a bundle's timestamps; false (counted) for a clock
 * trace_processor does not read either (LOCAL, UNKNOWN). */
static bool bundle_clock(proto_ftrace *ft, proto_machine *machine, uint32_t sequence_id,
                         uint64_t ftrace_clock, bool has_pair, int64_t ftrace_ts,
                         int64_t boot_ts, tm_clock_ref *out) {
  proto_context *ctx = ft->ctx;
  switch (ftrace_clock) {
  case FTRACE_CLOCK_UNSPECIFIED:
    *out = proto_clock_get(ctx, machine, 0, TM_CLOCK_BOOTTIME)->ref;
    return true;
  case FTRACE_CLOCK_MONO_RAW:
    *out = proto_clock_get(ctx, machine, 0, TM_CLOCK_MONOTONIC_RAW)->ref;
    return true;
  case FTRACE_CLOCK_GLOBAL: {
    /* One clock per sequence, tied to BOOTTIME by each bundle's pair. */
    tm_clock_ref global = ctx->s->clock_sequence(ctx->host, machine->ref, sequence_id,
                                                 GLOBAL_CLOCK_ID);
    if (has_pair) {
      tm_clock_ref refs[2] = {global,
                              proto_clock_get(ctx, machine, 0, TM_CLOCK_BOOTTIME)->ref};
      int64_t values[2] = {ftrace_ts, boot_ts};
      ctx->s->add_clock_snapshot(ctx->host, refs, values, 2);
    }
    *out = global;
    return true;
  }
  default: {
    char text[96];
    int n = snprintf(text, sizeof text, "ftrace bundle on clock %" PRIu64
                     " (local or unknown) cannot be placed; dropped", ftrace_clock);
    tm_import_log_arg args[] = {
        {TM_IMPORT_LOG_ARG_INIT, .key = "ftrace_clock", .type = TM_ARG_UINT, .int_value = (int64_t)ftrace_clock},
        {TM_IMPORT_LOG_ARG_INIT, .key = "message", .type = TM_ARG_STRING, .string = text, .string_len = (size_t)n},
    };
    proto_count_with(ctx, "ftrace_bundle_unsupported_clock", args, 2);
    return false;
  }
  }
}

/* --- compact_sched --------------------------------------------------------- */

static void compact_error(proto_ftrace *ft, const char *what) {
  tm_import_log_arg arg = {TM_IMPORT_LOG_ARG_INIT, .key = "message", .type = TM_ARG_STRING, .string = what,
                           .string_len = strlen(what)};
  proto_count_with(ft->ctx, "compact_sched_has_parse_errors", &arg, 1);
}

/* The interned comm of table entry `index`, or false (counted). */
static bool comm_of(proto_ftrace *ft, uint64_t index, proto_bytes *out) {
  if (index >= ft->comms.len) {
    compact_error(ft, "a comm index past the intern table; the events from it on dropped");
    return false;
  }
  *out = ft->comms.data[index];
  return true;
}

/* One compact sched_switch: the thread the previous switch put on the cpu
 * leaves it. */
static void compact_switch(proto_ftrace *ft, ftrace_machine *m, uint32_t cpu_index,
                           ftrace_event *ev, size_t i, const proto_bytes *comm) {
  ftrace_cpu *cpu = &m->cpus.data[cpu_index];
  int32_t next_pid = (int32_t)(uint32_t)ft->arrays[CS_SWITCH_NEXT_PID].data[i];
  int32_t next_prio = (int32_t)(uint32_t)ft->arrays[CS_SWITCH_NEXT_PRIO].data[i];
  size_t index = (size_t)(comm - ft->comms.data);
  if (!ft->comm_ids.data[index])
    ft->comm_ids.data[index] = proto_intern(ft->ctx, (const char *)comm->data, comm->len);
  tm_thread_ref next = ftrace_thread_named_id(&ft->kinds, m, next_pid,
                                              comm->len ? ft->comm_ids.data[index] : 0);
  if (cpu->running) {
    ftrace_switch(&ft->kinds, ev, cpu->running,
                  (int64_t)ft->arrays[CS_SWITCH_PREV_STATE].data[i], next, next_prio);
  } else {
    /* The first switch of a cpu has no prev_* in this form: it only says
     * who runs next (trace_processor skips it the same way). */
    proto_count(ft->ctx, "compact_sched_switch_skipped");
  }
  cpu->running = next;
  cpu->running_pid = next_pid;
  cpu->running_prio = next_prio;
}

/* One compact sched_waking: the waker is whoever runs on the cpu at that
 * time, unknown before the cpu's first switch (the event is then dropped,
 * as trace_processor drops it). */
static void compact_waking(proto_ftrace *ft, ftrace_machine *m, uint32_t cpu_index,
                           int64_t ts, size_t i) {
  proto_context *ctx = ft->ctx;
  tm_thread_ref waker = m->cpus.data[cpu_index].running;
  if (!waker) {
    proto_count(ctx, "compact_sched_waking_skipped");
    return;
  }
  int32_t pid = (int32_t)(uint32_t)ft->arrays[CS_WAKING_PID].data[i];
  int32_t target = (int32_t)(uint32_t)ft->arrays[CS_WAKING_TARGET_CPU].data[i];
  tm_thread_ref woken = ftrace_thread_of(&ft->kinds, m, pid);
  if (target < 0 || !ftrace_cpu_of(&ft->kinds, m, (uint32_t)target))
    return;
  ctx->s->sched_waking(ctx->host, ft->clock_of_bundle, ts, m->machine->ref, (uint32_t)target,
                       woken, waker);
}

/* The events every array of a kind covers; unequal arrays are counted. */
static size_t compact_count(proto_ftrace *ft, const int *fields, size_t n, const char *what) {
  size_t lo = SIZE_MAX, hi = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len = ft->arrays[fields[i]].len;
    lo = len < lo ? len : lo;
    hi = len > hi ? len : hi;
  }
  if (lo != hi)
    compact_error(ft, what);
  return lo;
}

/* Switches and wakings in time order (each array is, ties switch first,
 * as trace_processor sorts them): a waking's waker is the thread running
 * on the cpu at its time. */
static void compact_events(proto_ftrace *ft, ftrace_machine *m, uint32_t cpu_index,
                           ftrace_event *ev) {
  static const int switch_fields[] = {CS_SWITCH_TS, CS_SWITCH_PREV_STATE, CS_SWITCH_NEXT_PID,
                                      CS_SWITCH_NEXT_PRIO, CS_SWITCH_NEXT_COMM};
  static const int waking_fields[] = {CS_WAKING_TS, CS_WAKING_PID, CS_WAKING_TARGET_CPU,
                                      CS_WAKING_PRIO, CS_WAKING_COMM};
  size_t n_switch = compact_count(ft, switch_fields, 5,
                                  "compact sched_switch arrays of unequal length; the "
                                  "events every array covers kept");
  size_t n_waking = compact_count(ft, waking_fields, 5,
                                  "compact sched_waking arrays of unequal length; the "
                                  "events every array covers kept");
  const uint64_t *switch_ts = ft->arrays[CS_SWITCH_TS].data;
  const uint64_t *waking_ts = ft->arrays[CS_WAKING_TS].data;
  size_t i = 0, j = 0;
  int64_t next_switch = n_switch ? (int64_t)switch_ts[0] : 0;
  int64_t next_waking = n_waking ? (int64_t)waking_ts[0] : 0;
  while (i < n_switch || j < n_waking) {
    bool take_switch = i < n_switch && (j >= n_waking || next_switch <= next_waking);
    proto_bytes comm;
    if (take_switch) {
      uint64_t index = ft->arrays[CS_SWITCH_NEXT_COMM].data[i];
      if (!comm_of(ft, index, &comm))
        return;
      ev->ts = next_switch;
      compact_switch(ft, m, cpu_index, ev, i, &ft->comms.data[index]);
      if (++i < n_switch)
        next_switch = (int64_t)((uint64_t)next_switch + switch_ts[i]);
    } else {
      if (!comm_of(ft, ft->arrays[CS_WAKING_COMM].data[j], &comm))
        return;
      compact_waking(ft, m, cpu_index, next_waking, j);
      if (++j < n_waking)
        next_waking = (int64_t)((uint64_t)next_waking + waking_ts[j]);
    }
  }
}

/* Reads a compact_sched message into the scratch arrays. False if its
 * bytes do not parse. */
static bool read_compact_arrays(proto_ftrace *ft, const uint8_t *data, size_t len) {
  for (int i = 0; i < CS_ARRAYS; i++)
    ft->arrays[i].len = 0;
  ft->comms.len = 0;
  ft->comm_ids.len = 0;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  bool truncated = false;
  while (pw_next(&c, &f)) {
    if (f.number == CS_INTERN_TABLE) {
      if (f.wire_type != PW_LENGTH_DELIMITED) {
        proto_count_wrong_wire_type(ft->ctx, "FtraceEventBundle.CompactSched", f.number,
                                    f.wire_type, PW_LENGTH_DELIMITED);
        return true;
      }
      proto_bytes comm = {f.data, f.len};
      tm_vec_push(&ft->comms, comm);
      tm_vec_push(&ft->comm_ids, (tm_str_id)0);
      continue;
    }
    if (f.number >= CS_ARRAYS)
      continue;
    if (f.wire_type == PW_LENGTH_DELIMITED) {
      /* Packed, as traced writes them: one value per byte at most, so
       * the room is reserved once and the values decoded straight in. */
      proto_u64_vec *a = &ft->arrays[f.number];
      tm_vec_reserve(a, a->len + f.len);
      const uint8_t *p = f.data, *end = f.data + f.len;
      uint64_t *out = a->data + a->len;
      while (p < end) {
        /* Comm indexes, prios and cpus take one byte, pids and switch
         * deltas of a few microseconds two: both read without the
         * general varint loop. */
        if (*p < 0x80) {
          *out++ = *p++;
          continue;
        }
        if (end - p >= 2 && p[1] < 0x80) {
          *out++ = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
          p += 2;
          continue;
        }
        size_t used = pw_read_varint(p, end, out);
        if (used == 0) {
          truncated = true; /* the values before the cut are kept */
          break;
        }
        out++;
        p += used;
      }
      a->len = (size_t)(out - a->data);
      continue;
    }
    pw_repeated r = pw_repeated_of(&f, false);
    uint64_t v;
    while (pw_repeated_next(&r, &v))
      tm_vec_push(&ft->arrays[f.number], v);
    /* A packed array cut inside a varint keeps the values before it. */
    truncated |= r.error;
  }
  if (c.error != PW_OK)
    return false;
  if (truncated)
    compact_error(ft, "a compact_sched array is cut short; the values before the cut kept");
  return true;
}

/* --- the bundle ------------------------------------------------------------- */

typedef struct bundle {
  bool has_cpu;
  uint32_t cpu;
  uint64_t clock;
  bool has_ftrace_ts, has_boot_ts;
  int64_t ftrace_ts, boot_ts;
  pw_field compact; /* number 0 if absent */
  bool wrong_wire;  /* counted: the bundle is dropped */
} bundle;

/* Reads the bundle's own fields into `b` and its expanded events into
 * ft->events, in one walk. */
static bool read_bundle_header(proto_ftrace *ft, const uint8_t *data, size_t len, bundle *b) {
  memset(b, 0, sizeof *b);
  ft->events.len = 0;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  for (;;) {
    /* An expanded event (one-byte tag, its length within the bundle): kept
     * without pw_next's general path, most of a bundle's fields. */
    uint64_t event_len;
    size_t n;
    if (c.p < c.end && *c.p == ((BUNDLE_EVENT << 3) | PW_LENGTH_DELIMITED) &&
        (n = pw_read_varint(c.p + 1, c.end, &event_len)) != 0 &&
        event_len <= (uint64_t)(c.end - c.p - 1 - n)) {
      proto_bytes event = {c.p + 1 + n, (size_t)event_len};
      tm_vec_push(&ft->events, event);
      c.p += 1 + n + event_len;
      continue;
    }
    if (!pw_next(&c, &f))
      break;
    bool varint = f.wire_type == PW_VARINT;
    switch (f.number) {
    case BUNDLE_CPU:
      if (!varint)
        goto wrong;
      b->has_cpu = true;
      b->cpu = (uint32_t)f.value;
      break;
    case BUNDLE_FTRACE_CLOCK:
      if (!varint)
        goto wrong;
      b->clock = f.value;
      break;
    case BUNDLE_FTRACE_TIMESTAMP:
      if (!varint)
        goto wrong;
      b->has_ftrace_ts = true;
      b->ftrace_ts = (int64_t)f.value;
      break;
    case BUNDLE_BOOT_TIMESTAMP:
      if (!varint)
        goto wrong;
      b->has_boot_ts = true;
      b->boot_ts = (int64_t)f.value;
      break;
    case BUNDLE_COMPACT_SCHED:
    case BUNDLE_EVENT:
      if (f.wire_type != PW_LENGTH_DELIMITED)
        goto wrong;
      if (f.number == BUNDLE_COMPACT_SCHED) {
        b->compact = f;
      } else {
        /* Kept, so that the events are not framed a second time. */
        proto_bytes event = {f.data, f.len};
        tm_vec_push(&ft->events, event);
      }
      break;
    default:
      break;
    }
    continue;
  wrong:
    proto_count_wrong_wire_type(ft->ctx, "FtraceEventBundle", f.number, f.wire_type,
                                f.number == BUNDLE_EVENT || f.number == BUNDLE_COMPACT_SCHED
                                    ? PW_LENGTH_DELIMITED
                                    : PW_VARINT);
    b->has_cpu = false;
    b->wrong_wire = true;
    return true;
  }
  return c.error == PW_OK;
}

/* An event as traced writes it: timestamp 1, pid 2, maybe common_flags
 * 5, then the payload as its last field, every tag one byte but the
 * payload's; read in one pass into `ev`. False (ev untouched) for any
 * other shape, which read_event's general loop then reads: the result is
 * the same, this only skips the loop's tests per field (they were 4% of
 * the ftrace import's instructions). */
static bool read_event_canonical(ftrace_event *ev, const uint8_t *p, const uint8_t *end) {
  uint64_t ts, pid, flags, tag, payload_len;
  size_t n;
  if (end - p < 2 || p[0] != (1 << 3) || !(n = pw_read_varint_word(p + 1, end, &ts)))
    return false;
  p += 1 + n;
  if (p >= end || p[0] != (2 << 3) || !(n = pw_read_varint_word(p + 1, end, &pid)))
    return false;
  p += 1 + n;
  if (p < end && p[0] == (5 << 3)) {
    if (!(n = pw_read_varint(p + 1, end, &flags)))
      return false;
    p += 1 + n;
  }
  if (!(n = pw_read_varint(p, end, &tag)) || (tag & 7) != PW_LENGTH_DELIMITED)
    return false;
  uint64_t number = tag >> 3;
  if (number < 3 || number == 5 || number > UINT32_MAX)
    return false;
  p += n;
  if (!(n = pw_read_varint(p, end, &payload_len)) || payload_len != (uint64_t)(end - p - n))
    return false;
  ev->ts = (int64_t)ts;
  ev->pid = (uint32_t)pid;
  ev->id = (uint32_t)number;
  ev->data = p + n;
  ev->len = (size_t)payload_len;
  return true;
}

/* One expanded event: {timestamp 1, pid 2, common_flags 5, payload}. */
static bool read_event(proto_ftrace *ft, ftrace_event *ev, const uint8_t *data, size_t len) {
  if (read_event_canonical(ev, data, data + len))
    return ftrace_kinds_read(&ft->kinds, ev);
  bool has_ts = false, has_pid = false;
  ev->id = 0;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  for (;;) {
    /* timestamp, pid and common_flags as every event has them (one-byte
     * tags, varints) without pw_next's general path; anything else, and
     * damage, goes through it. */
    uint64_t v;
    size_t used;
    if (c.p < c.end && (*c.p == (1 << 3) || *c.p == (2 << 3) || *c.p == (5 << 3)) &&
        (used = pw_read_varint(c.p + 1, c.end, &v)) != 0) {
      if (*c.p == (1 << 3)) {
        has_ts = true;
        ev->ts = (int64_t)v;
      } else if (*c.p == (2 << 3)) {
        has_pid = true;
        ev->pid = (uint32_t)v;
      }
      c.p += 1 + used;
      continue;
    }
    if (!pw_next(&c, &f))
      break;
    if (f.number == 1 || f.number == 2 || f.number == 5) {
      if (f.wire_type != PW_VARINT) {
        proto_count_wrong_wire_type(ft->ctx, "FtraceEvent", f.number, f.wire_type, PW_VARINT);
        return true;
      }
      if (f.number == 1) {
        has_ts = true;
        ev->ts = (int64_t)f.value;
      } else if (f.number == 2) {
        has_pid = true;
        ev->pid = (uint32_t)f.value;
      }
      continue;
    }
    /* The payload: the one length-delimited field of the oneof. A field
     * of another wire type is no event this reader knows. */
    ev->id = f.number;
    ev->data = f.data;
    ev->len = f.wire_type == PW_LENGTH_DELIMITED ? f.len : 0;
    if (f.wire_type != PW_LENGTH_DELIMITED)
      ev->data = NULL;
  }
  if (c.error != PW_OK)
    return false;
  if (!ev->id)
    return true; /* nothing but the header: nothing happened */
  if (!has_ts || !has_pid) {
    proto_count(ft->ctx, has_ts ? "ftrace_event_missing_pid" : "ftrace_event_missing_timestamp");
    return true;
  }
  if (!ev->data) {
    ev->data = (const uint8_t *)"";
    ev->len = 0;
  }
  return ftrace_kinds_read(&ft->kinds, ev);
}

bool proto_ftrace_read_bundle(proto_ftrace *ft, proto_machine *machine, uint32_t sequence_id,
                              const proto_sequence *seq, const uint8_t *data, size_t len) {
  bundle b;
  if (!read_bundle_header(ft, data, len, &b))
    return false;
  if (b.wrong_wire)
    return true;
  if (!b.has_cpu) {
    proto_count(ft->ctx, "ftrace_bundle_missing_cpu");
    return true;
  }
  ftrace_machine *m = machine_of(ft, machine);
  ftrace_cpu *cpu = ftrace_cpu_of(&ft->kinds, m, b.cpu);
  if (!cpu)
    return true;
  ftrace_event ev = {.m = m, .cpu = b.cpu, .seq = seq, .bundle = data, .bundle_len = len};
  if (!bundle_clock(ft, machine, sequence_id, b.clock, b.has_ftrace_ts && b.has_boot_ts,
                    b.ftrace_ts, b.boot_ts, &ev.clock))
    return true;
  for (size_t i = 0; i < ft->events.len; i++) {
    if (!read_event(ft, &ev, ft->events.data[i].data, ft->events.data[i].len))
      return false;
    /* An event may have changed the cpu vector (another cpu's counter). */
    cpu = &m->cpus.data[b.cpu];
  }
  if (b.compact.number) {
    if (!read_compact_arrays(ft, b.compact.data, b.compact.len))
      return false;
    ft->clock_of_bundle = ev.clock;
    compact_events(ft, m, b.cpu, &ev);
  }
  return true;
}
