/* What each kind of ftrace event becomes (see proto_ftrace_kinds.h). */
#include "proto_ftrace_kinds.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ftrace.pb-c.h"
#include "proto_sequence_state.h"
#include "proto_wire_decode.h"
#include "short_text.h"

/* FtraceEvent payload field numbers the reader models. */
enum {
  EV_PRINT = 3,
  EV_SCHED_SWITCH = 4,
  EV_CPU_FREQUENCY = 11,
  EV_CPU_IDLE = 13,
  EV_CLOCK_ENABLE = 14,
  EV_CLOCK_DISABLE = 15,
  EV_CLOCK_SET_RATE = 16,
  EV_SCHED_WAKEUP = 17,
  EV_SCHED_BLOCKED_REASON = 18,
  EV_SCHED_WAKING = 20,
  EV_SOFTIRQ_ENTRY = 24,
  EV_SOFTIRQ_EXIT = 25,
  EV_IRQ_HANDLER_ENTRY = 36,
  EV_IRQ_HANDLER_EXIT = 37,
  EV_WORKQUEUE_EXECUTE_START = 58,
  EV_WORKQUEUE_QUEUE_WORK = 59,
  EV_SUSPEND_RESUME = 113,
  EV_SCHED_WAKEUP_NEW = 114,
  EV_TASK_NEWTASK = 235,
  EV_TASK_RENAME = 236,
  EV_SCHED_PROCESS_FREE = 240,
  EV_RSS_STAT = 313,
  EV_ION_HEAP_SHRINK = 314,
  EV_ION_HEAP_GROW = 315,
  EV_GENERIC = 327,
  EV_MM_EVENT_RECORD = 328,
  EV_GPU_FREQUENCY = 332,
  EV_ION_STAT = 335,
  EV_DMA_HEAP_STAT = 351,
};

#define CLONE_THREAD 0x00010000u
#define MAX_FIELD 15
/* decode's fast path takes one-byte tags: fields up to 15, all kept. */
_Static_assert(MAX_FIELD == FTRACE_SCHEMA_FIELDS && MAX_FIELD == 15,
               "a one-byte tag's field number must index payload and schema");

/* The fields of one payload, by number (1..MAX_FIELD). */
typedef struct payload {
  uint32_t present; /* bit n: field n seen */
  uint64_t value[MAX_FIELD + 1];
  const uint8_t *text[MAX_FIELD + 1];
  size_t text_len[MAX_FIELD + 1];
} payload;

static bool has(const payload *p, unsigned n) { return (p->present >> n) & 1u; }
static int64_t as_i64(const payload *p, unsigned n) { return (int64_t)p->value[n]; }
static int32_t as_i32(const payload *p, unsigned n) { return (int32_t)(uint32_t)p->value[n]; }

void ftrace_kinds_init(ftrace_kinds *k, proto_context *ctx) {
  memset(k, 0, sizeof *k);
  k->ctx = ctx;
  k->has_system = ctx->host_has_system;
  k->irq_category = proto_intern_cstr(ctx, "irq");
}

void ftrace_kinds_free(ftrace_kinds *k) {
  for (size_t i = 0; i < k->generics.len; i++)
    tm_vec_free(&k->generics.data[i].fields);
  tm_vec_free(&k->generics);
  proto_map_free(&k->generic_index);
  proto_map_free(&k->raw_keys);
  tm_vec_free(&k->raw_key_ids);
  tm_vec_free(&k->schemas);
  free(k->states);
}

/* --- threads and cpus -------------------------------------------------- */

/* Slot of `tid` in the machine's direct table, grown to cover it (a
 * power of two, at most FTRACE_DIRECT_TIDS slots). */
static uint32_t *direct_slot(ftrace_machine *m, uint64_t tid) {
  if (tid >= m->direct_len) {
    size_t len = m->direct_len ? m->direct_len : 1024;
    while (len <= tid)
      len *= 2;
    m->direct = proto_xrealloc(m->direct, len * sizeof *m->direct);
    memset(m->direct + m->direct_len, 0, (len - m->direct_len) * sizeof *m->direct);
    m->direct_len = len;
  }
  return &m->direct[tid];
}

/* The entry of a tid that ftrace_thread_direct() did not find (every
 * caller asks it first: most tids are small and their index one load
 * away, where a hash probe was 4% of the import's instructions): a large
 * tid's from the map, else a new thread's. */
static ftrace_thread *thread_entry_not_direct(ftrace_kinds *k, ftrace_machine *m, int64_t tid) {
  uint64_t key = (uint64_t)tid;
  uint32_t index;
  if (key >= FTRACE_DIRECT_TIDS && proto_map_get(&m->thread_index, key, &index))
    return &m->threads.data[index];
  ftrace_thread fresh = {
      .ref = k->ctx->s->thread(k->ctx->host, m->machine->ref, -1, tid),
  };
  index = (uint32_t)m->threads.len;
  tm_vec_push(&m->threads, fresh);
  if (key < FTRACE_DIRECT_TIDS)
    *direct_slot(m, key) = index + 1;
  else
    proto_map_put(&m->thread_index, key, index);
  return &m->threads.data[index];
}

tm_thread_ref ftrace_thread_of_other(ftrace_kinds *k, ftrace_machine *m, int64_t tid) {
  return thread_entry_not_direct(k, m, tid)->ref;
}

tm_thread_ref ftrace_thread_named(ftrace_kinds *k, ftrace_machine *m, int64_t tid,
                                  const uint8_t *name, size_t name_len) {
  ftrace_thread *t = ftrace_thread_direct(m, tid);
  if (!t)
    t = thread_entry_not_direct(k, m, tid);
  /* The idle thread keeps the host's name ("swapper"). */
  if (tid == 0 || !name || name_len == 0)
    return t->ref;
  if (t->name && t->name_len == name_len && short_bytes_equal(t->name_bytes, name, name_len))
    return t->ref;
  tm_str_id id = proto_intern(k->ctx, (const char *)name, name_len);
  if (id != t->name) {
    t->name = id;
    k->ctx->s->thread_set_name(k->ctx->host, t->ref, id);
  }
  t->name_len = name_len < FTRACE_NAME_BYTES ? (uint8_t)name_len : 0;
  memcpy(t->name_bytes, name, t->name_len);
  return t->ref;
}

tm_thread_ref ftrace_thread_named_id(ftrace_kinds *k, ftrace_machine *m, int64_t tid,
                                     tm_str_id name) {
  ftrace_thread *t = ftrace_thread_direct(m, tid);
  if (!t)
    t = thread_entry_not_direct(k, m, tid);
  if (tid != 0 && name && name != t->name) {
    t->name = name;
    t->name_len = 0; /* its bytes are not known here */
    k->ctx->s->thread_set_name(k->ctx->host, t->ref, name);
  }
  return t->ref;
}

ftrace_cpu *ftrace_cpu_new(ftrace_kinds *k, ftrace_machine *m, uint32_t cpu) {
  if (cpu > 4095 || (m->num_cpus && cpu >= m->num_cpus)) {
    char text[96];
    int n = snprintf(text, sizeof text, "ftrace data of cpu %" PRIu32
                     " beyond the machine's cpus; dropped", cpu);
    tm_import_log_arg args[] = {
        {TM_IMPORT_LOG_ARG_INIT, .key = "cpu", .type = TM_ARG_UINT, .int_value = cpu},
        {TM_IMPORT_LOG_ARG_INIT, .key = "message", .type = TM_ARG_STRING, .string = text, .string_len = (size_t)n},
    };
    proto_count_with(k->ctx, "ftrace_cpu_out_of_range", args, 2);
    return NULL;
  }
  while (m->cpus.len <= cpu) {
    ftrace_cpu fresh = {0};
    tm_vec_push(&m->cpus, fresh);
  }
  return &m->cpus.data[cpu];
}

/* --- payload decoding -------------------------------------------------- */

/* The wire type a field of protobuf-c type `type` has (packed repeated
 * scalars may also be length-delimited). */
static int wire_type_of(ProtobufCType type) {
  switch (type) {
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_BYTES:
  case PROTOBUF_C_TYPE_MESSAGE:
    return PW_LENGTH_DELIMITED;
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_DOUBLE:
    return PW_FIXED64;
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_FLOAT:
    return PW_FIXED32;
  default:
    return PW_VARINT;
  }
}

enum { FAST_VARINT = 1, FAST_BYTES = 2 };

/* Whether the reader models payload `id` (decode, then its own reading)
 * rather than writing a raw ftrace_event row. */
static bool is_modelled(uint32_t id) {
  switch (id) {
  case EV_PRINT:
  case EV_SCHED_SWITCH:
  case EV_CPU_FREQUENCY:
  case EV_CPU_IDLE:
  case EV_CLOCK_ENABLE:
  case EV_CLOCK_DISABLE:
  case EV_CLOCK_SET_RATE:
  case EV_SCHED_WAKEUP:
  case EV_SCHED_BLOCKED_REASON:
  case EV_SCHED_WAKING:
  case EV_SOFTIRQ_ENTRY:
  case EV_SOFTIRQ_EXIT:
  case EV_IRQ_HANDLER_ENTRY:
  case EV_IRQ_HANDLER_EXIT:
  case EV_SUSPEND_RESUME:
  case EV_SCHED_WAKEUP_NEW:
  case EV_TASK_NEWTASK:
  case EV_TASK_RENAME:
  case EV_SCHED_PROCESS_FREE:
  case EV_RSS_STAT:
  case EV_ION_HEAP_SHRINK:
  case EV_ION_HEAP_GROW:
  case EV_MM_EVENT_RECORD:
  case EV_GPU_FREQUENCY:
  case EV_ION_STAT:
  case EV_DMA_HEAP_STAT:
    return true;
  default:
    return false;
  }
}

/* The schema of payload `id`, looked up on its first event. Ids beyond
 * the cache's bound are looked up every time (no such id is in the
 * schema today). */
#define SCHEMA_CACHE_IDS 4096
static const ftrace_schema *payload_schema(ftrace_kinds *k, uint32_t id, ftrace_schema *scratch) {
  ftrace_schema *sc = scratch;
  if (id < SCHEMA_CACHE_IDS) {
    while (k->schemas.len <= id) {
      ftrace_schema empty = {0};
      tm_vec_push(&k->schemas, empty);
    }
    sc = &k->schemas.data[id];
    if (sc->looked_up)
      return sc;
  }
  memset(sc, 0, sizeof *sc);
  sc->looked_up = true;
  const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(
      &perfetto__protos__ftrace_event__descriptor, id);
  if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE)
    return sc;
  sc->d = f->descriptor;
  sc->name = f->name;
  for (unsigned n = 1; n <= FTRACE_SCHEMA_FIELDS; n++) {
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(sc->d, n);
    sc->wire[n] = fd ? (int8_t)wire_type_of(fd->type) : -1;
    if (fd && fd->label == PROTOBUF_C_LABEL_REPEATED)
      sc->repeated |= (uint16_t)(1u << n);
    if (sc->wire[n] == PW_VARINT)
      sc->fast[n << 3 | PW_VARINT] = FAST_VARINT;
    else if (sc->wire[n] == PW_LENGTH_DELIMITED)
      sc->fast[n << 3 | PW_LENGTH_DELIMITED] = FAST_BYTES;
  }
  sc->modelled = is_modelled(id);
  return sc;
}

typedef enum decode_status {
  DECODE_OK,
  DECODE_SKIP,      /* a known field of the wrong wire type: counted */
  DECODE_MALFORMED, /* bytes that do not parse */
} decode_status;

/* Reads the fields of payload `ev` into `out`, checking each known one's
 * wire type against the schema's (a mismatch drops the event, counted as
 * proto_packet_wrong_wire_type). */
static decode_status decode(ftrace_kinds *k, const ftrace_event *ev, const ftrace_schema *sc,
                            payload *out) {
  const char *name = sc->name;
  out->present = 0;
  pw_cursor c = pw_cursor_of(ev->data, ev->len);
  pw_field f;
  for (;;) {
    /* Nearly every field is the common case: a one-byte tag (fields
     * 1..15) with the wire type the schema gives, a varint or bytes. It is
     * read here without pw_next's general path; anything else (and any
     * damage, which pw_next then reports) takes the general path below. */
    if (c.p == c.end)
      break;
    uint8_t fast = *c.p < 0x80 ? sc->fast[*c.p] : 0;
    if (fast) {
      unsigned n = *c.p >> 3;
      uint64_t v;
      size_t used;
      if ((used = pw_read_varint(c.p + 1, c.end, &v)) != 0) {
        const uint8_t *after = c.p + 1 + used;
        if (fast == FAST_VARINT) {
          out->present |= 1u << n;
          out->value[n] = v;
          out->text[n] = NULL;
          out->text_len[n] = 0;
          c.p = after;
          continue;
        }
        if (v <= (uint64_t)(c.end - after)) {
          out->present |= 1u << n;
          out->value[n] = v;
          out->text[n] = after;
          out->text_len[n] = (size_t)v;
          c.p = after + v;
          continue;
        }
      }
    }
    if (!pw_next(&c, &f))
      break;
    int expected;
    bool repeated;
    if (f.number >= 1 && f.number <= FTRACE_SCHEMA_FIELDS) {
      expected = sc->wire[f.number];
      if (expected < 0)
        continue;
      repeated = (sc->repeated >> f.number) & 1u;
    } else {
      const ProtobufCFieldDescriptor *fd =
          protobuf_c_message_descriptor_get_field(sc->d, f.number);
      if (!fd)
        continue;
      expected = wire_type_of(fd->type);
      repeated = fd->label == PROTOBUF_C_LABEL_REPEATED;
    }
    bool packed = repeated && f.wire_type == PW_LENGTH_DELIMITED;
    if (f.wire_type != expected && !packed) {
      char message[64];
      snprintf(message, sizeof message, "FtraceEvent.%s", name);
      proto_count_wrong_wire_type(k->ctx, message, f.number, f.wire_type, (uint32_t)expected);
      return DECODE_SKIP;
    }
    if (f.number > MAX_FIELD)
      continue;
    out->present |= 1u << f.number;
    out->value[f.number] = f.value;
    out->text[f.number] = f.data;
    out->text_len[f.number] = f.len;
  }
  return c.error == PW_OK ? DECODE_OK : DECODE_MALFORMED;
}

/* --- raw events ---------------------------------------------------------- */

static tm_str_id raw_key(ftrace_kinds *k, uint32_t id, const ProtobufCFieldDescriptor *fd) {
  uint64_t key = (uint64_t)id << 32 | fd->id;
  uint32_t index;
  if (proto_map_get(&k->raw_keys, key, &index))
    return k->raw_key_ids.data[index];
  tm_str_id str = proto_intern_cstr(k->ctx, fd->name);
  proto_map_put(&k->raw_keys, key, (uint32_t)k->raw_key_ids.len);
  tm_vec_push(&k->raw_key_ids, str);
  return str;
}

static void add_raw_arg(ftrace_kinds *k, tm_str_id key, const ProtobufCFieldDescriptor *fd,
                        uint64_t bits, const uint8_t *data, size_t len) {
  tm_arg_value v = {.type = TM_ARG_INT};
  switch (fd->type) {
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_BYTES:
    v.type = TM_ARG_STRING;
    v.u.str_id = proto_intern(k->ctx, (const char *)data, len);
    break;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_FIXED64:
    v.type = TM_ARG_UINT;
    v.u.int_value = (int64_t)bits;
    break;
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_ENUM:
    v.u.int_value = (int32_t)(uint32_t)bits;
    break;
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SINT64:
    v.u.int_value = (int64_t)(bits >> 1) ^ -(int64_t)(bits & 1);
    break;
  case PROTOBUF_C_TYPE_BOOL:
    v.type = TM_ARG_BOOL;
    v.u.int_value = bits != 0;
    break;
  case PROTOBUF_C_TYPE_DOUBLE: {
    double d;
    memcpy(&d, &bits, sizeof d);
    v.type = TM_ARG_REAL;
    v.u.real_value = d;
    break;
  }
  default:
    v.u.int_value = (int64_t)bits;
    break;
  }
  k->ctx->s->args_add(k->ctx->host, key, v);
}

/* An event the reader does not model: an ftrace_event row with every
 * field the schema names as an arg. */
/* The kernel function that iid `iid` of the bundle's sequence names
 * (InternedData.kernel_symbols, written when the trace was recorded with
 * symbolize_ksyms), or 0: without them the field is an address-like
 * number that names nothing, and trace_processor leaves it unnamed too. */
static tm_str_id kernel_symbol(const ftrace_event *ev, uint64_t iid) {
  if (!ev->seq)
    return 0;
  const proto_interned *e = proto_sequence_lookup(ev->seq, PROTO_INTERN_KERNEL_SYMBOL, iid);
  return e ? e->str : 0;
}

/* Fields that hold a kernel function as a kernel_symbols iid, as
 * trace_processor lists them among the events this schema names. */
static bool is_kernel_function(uint32_t event_id, uint32_t field) {
  return field == 2 &&
         (event_id == EV_WORKQUEUE_EXECUTE_START || event_id == EV_WORKQUEUE_QUEUE_WORK);
}

static bool read_raw(ftrace_kinds *k, const ftrace_event *ev, const ftrace_schema *sc) {
  const ProtobufCMessageDescriptor *d = sc->d;
  const char *name = sc->name;
  payload check;
  decode_status status = decode(k, ev, sc, &check);
  if (status != DECODE_OK)
    return status == DECODE_SKIP;
  tm_thread_ref thread = ftrace_thread_of(k, ev->m, ev->pid);
  if (!k->has_system)
    return true;
  pw_cursor c = pw_cursor_of(ev->data, ev->len);
  pw_field f;
  while (pw_next(&c, &f)) {
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(d, f.number);
    if (!fd)
      continue;
    tm_str_id key = raw_key(k, ev->id, fd);
    if (f.wire_type == PW_LENGTH_DELIMITED && fd->type != PROTOBUF_C_TYPE_STRING &&
        fd->type != PROTOBUF_C_TYPE_BYTES && fd->type != PROTOBUF_C_TYPE_MESSAGE) {
      pw_repeated r = pw_repeated_of(&f, wire_type_of(fd->type) == PW_FIXED64);
      uint64_t v;
      while (pw_repeated_next(&r, &v))
        add_raw_arg(k, key, fd, v, NULL, 0);
      continue;
    }
    if (fd->type == PROTOBUF_C_TYPE_MESSAGE)
      continue; /* nested messages: none among the events named here */
    tm_str_id function;
    if (f.wire_type == PW_VARINT && is_kernel_function(ev->id, f.number) &&
        (function = kernel_symbol(ev, f.value)) != 0) {
      k->ctx->s->args_add(k->ctx->host, key,
                          (tm_arg_value){.type = TM_ARG_STRING, .u.str_id = function});
      continue;
    }
    add_raw_arg(k, key, fd, f.value, f.data, f.len);
  }
  tm_args_ref args = k->ctx->s->args_commit(k->ctx->host);
  k->ctx->s->ftrace_event(k->ctx->host, ev->clock, ev->ts, ev->m->machine->ref, ev->cpu,
                          thread, proto_intern_cstr(k->ctx, name), args);
  return true;
}

/* --- scheduling ------------------------------------------------------------ */

tm_str_id ftrace_task_state_new(ftrace_kinds *k, int64_t state) {
  /* trace_processor's TaskState: bits 1..1024 are the atoms
   * "SDTtXZxKWPN", 0 is runnable, 2048 (the kernel's TASK_STATE_MAX)
   * marks a preempted task ("R+"); anything above is not a state. */
  static const char letters[] = "SDTtXZxKWPN";
  char text[16];
  size_t n = 0;
  uint64_t bits = (uint64_t)state;
  if (bits > 2048) {
    proto_count(k->ctx, "task_state_invalid");
    return 0;
  }
  /* Every switch spells a state: each spelling is interned once. */
  if (!k->states) {
    k->states = proto_xrealloc(NULL, FTRACE_STATE_CACHE * sizeof *k->states);
    memset(k->states, 0, FTRACE_STATE_CACHE * sizeof *k->states);
  }
  if (k->states[bits])
    return k->states[bits];
  for (unsigned b = 0; b < 11; b++)
    if (bits & (1u << b))
      text[n++] = letters[b];
  if (n == 0)
    text[n++] = 'R';
  if (bits & 2048)
    text[n++] = '+';
  k->states[bits] = proto_intern(k->ctx, text, n);
  return k->states[bits];
}

/* A switch: `prev_pid` (named prev_comm) leaves in `prev_state`,
 * `next_pid` (named next_comm) runs; a comm of length 0 names nothing. */
static void switch_of(ftrace_kinds *k, const ftrace_event *ev, int32_t prev_pid,
                      const uint8_t *prev_comm, size_t prev_len, int64_t prev_state,
                      int32_t next_pid, const uint8_t *next_comm, size_t next_len,
                      int32_t next_prio) {
  tm_thread_ref next = ftrace_thread_named(k, ev->m, next_pid, next_comm, next_len);
  tm_thread_ref prev = ftrace_thread_named(k, ev->m, prev_pid, prev_comm, prev_len);
  ftrace_switch(k, ev, prev, prev_state, next, next_prio);
}

static void read_switch(ftrace_kinds *k, const ftrace_event *ev, const payload *p) {
  switch_of(k, ev, as_i32(p, 2), p->text[1], has(p, 1) ? p->text_len[1] : 0, as_i64(p, 4),
            as_i32(p, 6), p->text[5], has(p, 5) ? p->text_len[5] : 0, as_i32(p, 7));
}

/* A wakeup of `pid` (named comm) onto cpu `target` (-1: the event's) by
 * `waker`, the thread of the event's pid, which the caller has made
 * known before the woken thread (as trace_processor makes them). */
static void waking_of(ftrace_kinds *k, const ftrace_event *ev, tm_thread_ref waker,
                      int32_t pid, const uint8_t *comm, size_t comm_len, int32_t target) {
  tm_thread_ref woken = ftrace_thread_named(k, ev->m, pid, comm, comm_len);
  if (target < 0)
    return;
  if (!ftrace_cpu_of(k, ev->m, (uint32_t)target))
    return;
  k->ctx->s->sched_waking(k->ctx->host, ev->clock, ev->ts, ev->m->machine->ref,
                          (uint32_t)target, woken, waker);
}

/* sched_waking, sched_wakeup, sched_wakeup_new: {comm 1, pid 2, prio 3,
 * success 4, target_cpu 5}. */
static void read_waking(ftrace_kinds *k, const ftrace_event *ev, tm_thread_ref waker,
                        const payload *p) {
  waking_of(k, ev, waker, as_i32(p, 2), p->text[1], has(p, 1) ? p->text_len[1] : 0,
            has(p, 5) ? as_i32(p, 5) : (int32_t)ev->cpu);
}

/* Switches and wakeups as the kernel's formats and traced write them:
 * each field once, in field order, one-byte tags, the schema's wire
 * types. Read here in one pass into locals, without decode's table
 * lookups and stores per field (decode was 6% of the ftrace import's
 * instructions); what they give is what decode gives the same bytes.
 * Any other shape returns false, and decode reads it. */
#define TAG_VARINT(n) ((uint8_t)((n) << 3 | PW_VARINT))
#define TAG_BYTES(n) ((uint8_t)((n) << 3 | PW_LENGTH_DELIMITED))

static inline bool take_varint(const uint8_t **p, const uint8_t *end, uint8_t tag,
                               uint64_t *v) {
  const uint8_t *q = *p;
  size_t n;
  if (q >= end || *q != tag || !(n = pw_read_varint(q + 1, end, v)))
    return false;
  *p = q + 1 + n;
  return true;
}

static inline bool take_bytes(const uint8_t **p, const uint8_t *end, uint8_t tag,
                              const uint8_t **text, size_t *len) {
  const uint8_t *q = *p;
  uint64_t v;
  if (!take_varint(&q, end, tag, &v) || v > (uint64_t)(end - q))
    return false;
  *text = q;
  *len = (size_t)v;
  *p = q + v;
  return true;
}

/* sched_switch {prev_comm 1, prev_pid 2, prev_prio 3, prev_state 4,
 * next_comm 5, next_pid 6, next_prio 7}, all seven. */
static bool read_switch_canonical(ftrace_kinds *k, const ftrace_event *ev) {
  const uint8_t *p = ev->data, *end = ev->data + ev->len;
  const uint8_t *prev_comm, *next_comm;
  size_t prev_len, next_len;
  uint64_t prev_pid, prev_prio, prev_state, next_pid, next_prio;
  if (!take_bytes(&p, end, TAG_BYTES(1), &prev_comm, &prev_len) ||
      !take_varint(&p, end, TAG_VARINT(2), &prev_pid) ||
      !take_varint(&p, end, TAG_VARINT(3), &prev_prio) ||
      !take_varint(&p, end, TAG_VARINT(4), &prev_state) ||
      !take_bytes(&p, end, TAG_BYTES(5), &next_comm, &next_len) ||
      !take_varint(&p, end, TAG_VARINT(6), &next_pid) ||
      !take_varint(&p, end, TAG_VARINT(7), &next_prio) || p != end)
    return false;
  switch_of(k, ev, (int32_t)(uint32_t)prev_pid, prev_comm, prev_len, (int64_t)prev_state,
            (int32_t)(uint32_t)next_pid, next_comm, next_len, (int32_t)(uint32_t)next_prio);
  return true;
}

/* A wakeup {comm 1, pid 2, prio 3, success 4 (newer kernels omit it),
 * target_cpu 5 (maybe absent)}. */
static bool read_waking_canonical(ftrace_kinds *k, const ftrace_event *ev,
                                  tm_thread_ref waker) {
  const uint8_t *p = ev->data, *end = ev->data + ev->len;
  const uint8_t *comm;
  size_t comm_len;
  uint64_t pid, prio, success, target;
  if (!take_bytes(&p, end, TAG_BYTES(1), &comm, &comm_len) ||
      !take_varint(&p, end, TAG_VARINT(2), &pid) ||
      !take_varint(&p, end, TAG_VARINT(3), &prio))
    return false;
  if (p < end && *p == TAG_VARINT(4) && !take_varint(&p, end, TAG_VARINT(4), &success))
    return false;
  bool has_target = p < end;
  if (has_target && !take_varint(&p, end, TAG_VARINT(5), &target))
    return false;
  if (p != end)
    return false;
  waking_of(k, ev, waker, (int32_t)(uint32_t)pid, comm, comm_len,
            has_target ? (int32_t)(uint32_t)target : (int32_t)ev->cpu);
  return true;
}

/* --- tracks ---------------------------------------------------------------- */

static tm_track_ref cpu_track(ftrace_kinds *k, const ftrace_event *ev, tm_track_ref *cache,
                              const char *type, const char *name, bool counter) {
  if (*cache)
    return *cache;
  tm_track_desc desc = {
      TM_TRACK_DESC_INIT,
      .type = type,
      .is_counter = counter,
      .name = proto_intern_cstr(k->ctx, name),
  };
  desc.machine = ev->m->machine->ref;
  desc.has_cpu = 1;
  desc.cpu = ev->cpu;
  *cache = k->ctx->s->track_intern(k->ctx->host, &desc);
  return *cache;
}

static tm_track_ref global_counter(ftrace_kinds *k, const ftrace_event *ev, const char *type,
                                   tm_str_id name, uint64_t key) {
  tm_track_desc desc = {TM_TRACK_DESC_INIT, .type = type, .is_counter = 1, .name = name, .key = key};
  desc.machine = ev->m->machine->ref;
  return k->ctx->s->track_intern(k->ctx->host, &desc);
}

static tm_track_ref thread_counter(ftrace_kinds *k, tm_thread_ref thread, const char *name) {
  tm_track_desc desc = {
      TM_TRACK_DESC_INIT,
      .type = "thread_counter",
      .is_counter = 1,
      .name = proto_intern_cstr(k->ctx, name),
      .thread = thread,
  };
  return k->ctx->s->track_intern(k->ctx->host, &desc);
}

static void counter(ftrace_kinds *k, const ftrace_event *ev, tm_track_ref track, double v) {
  if (track)
    k->ctx->s->counter(k->ctx->host, track, ev->clock, ev->ts, v, TM_NO_ARGS);
}

static tm_slice_fields slice_at(const ftrace_event *ev, tm_track_ref track) {
  tm_slice_fields f = {
      TM_SLICE_FIELDS_INIT,
      .track = track,
      .clock = ev->clock,
      .ts = ev->ts,
  };
  return f;
}

/* cpu_frequency / cpu_idle: {state 1, cpu_id 2}, on the cpu they name. */
static void read_cpu_counter(ftrace_kinds *k, const ftrace_event *ev, const payload *p,
                             bool frequency) {
  uint32_t cpu = (uint32_t)p->value[2];
  ftrace_cpu *c = ftrace_cpu_of(k, ev->m, cpu);
  if (!c)
    return;
  ftrace_event at = *ev;
  at.cpu = cpu;
  tm_track_ref track = frequency
                           ? cpu_track(k, &at, &c->cpufreq, "cpu_frequency", "cpufreq", true)
                           : cpu_track(k, &at, &c->cpuidle, "cpu_idle", "cpuidle", true);
  counter(k, ev, track, (double)(uint32_t)p->value[1]);
}

static const char *const softirq_names[] = {"HI",    "TIMER",   "NET_TX", "NET_RX",
                                            "BLOCK", "IRQ_POLL", "TASKLET", "SCHED",
                                            "HRTIMER", "RCU"};

static void read_irq(ftrace_kinds *k, const ftrace_event *ev, const payload *p) {
  ftrace_cpu *c = ftrace_cpu_of(k, ev->m, ev->cpu);
  if (!c)
    return;
  proto_context *ctx = k->ctx;
  char name[128];
  bool soft = ev->id == EV_SOFTIRQ_ENTRY || ev->id == EV_SOFTIRQ_EXIT;
  snprintf(name, sizeof name, soft ? "SoftIrq Cpu %" PRIu32 : "Irq Cpu %" PRIu32, ev->cpu);
  tm_track_ref track = soft ? cpu_track(k, ev, &c->softirq, "cpu_softirq", name, false)
                            : cpu_track(k, ev, &c->irq, "cpu_irq", name, false);
  if (!track)
    return;
  tm_slice_fields f = slice_at(ev, track);
  f.category = k->irq_category;
  switch (ev->id) {
  case EV_SOFTIRQ_ENTRY: {
    uint64_t vec = p->value[1];
    if (vec >= sizeof softirq_names / sizeof *softirq_names) {
      proto_count(ctx, "ftrace_softirq_unknown_vector");
      return;
    }
    f.name = proto_intern_cstr(ctx, softirq_names[vec]);
    ctx->s->slice_begin(ctx->host, &f);
    break;
  }
  case EV_IRQ_HANDLER_ENTRY: {
    char slice[160];
    int n = snprintf(slice, sizeof slice, "IRQ (%.*s)",
                     (int)(has(p, 2) ? p->text_len[2] : 0), (const char *)p->text[2]);
    f.name = proto_intern(ctx, slice, (size_t)(n < (int)sizeof slice ? n : (int)sizeof slice - 1));
    ctx->s->slice_begin(ctx->host, &f);
    break;
  }
  case EV_IRQ_HANDLER_EXIT: {
    const char *status = p->value[2] == 1 ? "handled" : "unhandled";
    ctx->s->args_add(ctx->host, proto_intern_cstr(ctx, "ret"),
                     (tm_arg_value){.type = TM_ARG_STRING,
                                    .u.str_id = proto_intern_cstr(ctx, status)});
    f.args = ctx->s->args_commit(ctx->host);
    ctx->s->slice_end(ctx->host, &f);
    break;
  }
  default:
    ctx->s->slice_end(ctx->host, &f);
    break;
  }
}

/* suspend_resume {action 1, val 2, start 3}: a slice "<action>(<val>)"
 * from start 1 to start 0 on the machine's suspend/resume track. */
static void read_suspend_resume(ftrace_kinds *k, const ftrace_event *ev, const payload *p) {
  proto_context *ctx = k->ctx;
  tm_track_desc desc = {TM_TRACK_DESC_INIT, .type = "suspend_resume",
                        .name = proto_intern_cstr(ctx, "Suspend/Resume Latency")};
  desc.machine = ev->m->machine->ref;
  tm_track_ref track = ctx->s->track_intern(ctx->host, &desc);
  tm_slice_fields f = slice_at(ev, track);
  if (p->value[3]) {
    char name[160];
    int n = snprintf(name, sizeof name, "%.*s(%" PRId32 ")",
                     (int)(has(p, 1) ? p->text_len[1] : 0), (const char *)p->text[1],
                     as_i32(p, 2));
    f.name = proto_intern(ctx, name, (size_t)(n < (int)sizeof name ? n : (int)sizeof name - 1));
    ctx->s->slice_begin(ctx->host, &f);
  } else {
    ctx->s->slice_end(ctx->host, &f);
  }
}

static void read_clock(ftrace_kinds *k, const ftrace_event *ev, const payload *p) {
  const char *type = ev->id == EV_CLOCK_SET_RATE ? "clock_frequency" : "clock_state";
  tm_str_id name = proto_intern(k->ctx, (const char *)p->text[1], has(p, 1) ? p->text_len[1] : 0);
  counter(k, ev, global_counter(k, ev, type, name, 0), (double)p->value[2]);
}

static void read_mm_event(ftrace_kinds *k, const ftrace_event *ev, const payload *p) {
  static const char *const types[] = {"min_flt", "maj_flt", "read_io", "compaction",
                                      "reclaim", "swp_flt", "kern_alloc"};
  uint64_t type = p->value[4];
  if (type >= sizeof types / sizeof *types) {
    proto_count(k->ctx, "mm_unknown_type");
    return;
  }
  tm_thread_ref thread = ftrace_thread_of(k, ev->m, ev->pid);
  static const char *const what[] = {"count", "max_lat", "avg_lat"};
  static const unsigned field[] = {2, 3, 1};
  for (int i = 0; i < 3; i++) {
    char name[64];
    snprintf(name, sizeof name, "mem.mm.%s.%s", types[type], what[i]);
    counter(k, ev, thread_counter(k, thread, name), (double)(uint32_t)p->value[field[i]]);
  }
}

static void read_rss_stat(ftrace_kinds *k, const ftrace_event *ev, const payload *p) {
  static const char *const members[] = {"mem.rss.file", "mem.rss.anon", "mem.swap",
                                        "mem.rss.shmem"};
  int32_t member = as_i32(p, 1);
  if (member < 0 || member >= 4) {
    proto_count(k->ctx, "rss_stat_unknown_keys");
    return;
  }
  int64_t size = as_i64(p, 2);
  if (size < 0) {
    proto_count(k->ctx, "rss_stat_negative_size");
    return;
  }
  tm_thread_ref thread = ftrace_thread_of(k, ev->m, ev->pid);
  counter(k, ev, thread_counter(k, thread, members[member]), (double)size);
}

/* ion_heap_grow/shrink {heap_name 1, len 2, total_allocated 3}, ion_stat
 * and dma_heap_stat {.., len 2, total_allocated 3}. */
static void read_heap(ftrace_kinds *k, const ftrace_event *ev, const payload *p) {
  proto_context *ctx = k->ctx;
  char total[128], change[128];
  int64_t len = as_i64(p, 2);
  if (ev->id == EV_ION_HEAP_GROW || ev->id == EV_ION_HEAP_SHRINK) {
    int n = has(p, 1) ? (int)p->text_len[1] : 0;
    snprintf(total, sizeof total, "mem.ion.%.*s", n, (const char *)p->text[1]);
    snprintf(change, sizeof change, "mem.ion_change.%.*s", n, (const char *)p->text[1]);
    if (ev->id == EV_ION_HEAP_SHRINK)
      len = -len;
  } else if (ev->id == EV_ION_STAT) {
    snprintf(total, sizeof total, "mem.ion");
    snprintf(change, sizeof change, "mem.ion_change");
  } else {
    snprintf(total, sizeof total, "mem.dma_heap");
    snprintf(change, sizeof change, "mem.dma_heap_change");
  }
  counter(k, ev, global_counter(k, ev, "android_ion", proto_intern_cstr(ctx, total), 0),
          (double)as_i64(p, 3));
  tm_thread_ref thread = ftrace_thread_of(k, ev->m, ev->pid);
  counter(k, ev, thread_counter(k, thread, change), (double)len);
}

static void read_gpu_frequency(ftrace_kinds *k, const ftrace_event *ev, const payload *p) {
  counter(k, ev,
          global_counter(k, ev, "gpu_frequency", proto_intern_cstr(k->ctx, "gpufreq"),
                         p->value[1]),
          (double)(uint32_t)p->value[2]);
}

/* --- threads --------------------------------------------------------------- */

static void read_newtask(ftrace_kinds *k, const ftrace_event *ev, const payload *p) {
  proto_context *ctx = k->ctx;
  int32_t tid = as_i32(p, 1);
  /* Without CLONE_THREAD the child is a new process of its own. */
  bool thread_of_parent = (p->value[3] & CLONE_THREAD) != 0;
  tm_thread_ref thread = thread_of_parent
                             ? ftrace_thread_of(k, ev->m, tid)
                             : ctx->s->thread(ctx->host, ev->m->machine->ref, tid, tid);
  ftrace_thread_named(k, ev->m, tid, p->text[2], has(p, 2) ? p->text_len[2] : 0);
  if (k->has_system)
    ctx->s->thread_lifetime(ctx->host, ev->clock, ev->ts, thread, 0);
  /* The new task is runnable, woken by the task that cloned it. */
  if (ftrace_cpu_of(k, ev->m, ev->cpu))
    ctx->s->sched_waking(ctx->host, ev->clock, ev->ts, ev->m->machine->ref, ev->cpu, thread,
                         ftrace_thread_of(k, ev->m, ev->pid));
}

/* --- print ------------------------------------------------------------------- */

/* A print payload as the kernel writes it, {ip 1 (maybe absent), buf 2}
 * and nothing else: its buf, read without decode (what decode would give
 * it). False for any other shape, which decode then reads. */
static bool print_canonical(const ftrace_event *ev, const uint8_t **buf, size_t *buf_len) {
  const uint8_t *p = ev->data, *end = ev->data + ev->len;
  uint64_t v;
  size_t n;
  if (p < end && *p == (1 << 3)) {
    if (!(n = pw_read_varint(p + 1, end, &v)))
      return false;
    p += 1 + n;
  }
  if (p >= end || *p != ((2 << 3) | PW_LENGTH_DELIMITED) ||
      !(n = pw_read_varint(p + 1, end, &v)) || v != (uint64_t)(end - p - 1 - n))
    return false;
  *buf = p + 1 + n;
  *buf_len = (size_t)v;
  return true;
}

static void read_print(ftrace_kinds *k, const ftrace_event *ev, const uint8_t *buf,
                       size_t buf_len) {
  ftrace_machine *m = ev->m;
  int64_t offset = (int64_t)k->ctx->packet_offset;
  /* The clock and the offset are told the emitter when they change (a
   * bundle's prints share them): two calls per print were 2% of them. */
  if (!m->emitter) {
    m->emitter = systrace_emitter_new(k->ctx->s, k->ctx->host, m->machine->ref, ev->clock);
    m->emitter_clock = ev->clock;
    m->emitter_offset = offset;
    systrace_emitter_set_line_offset(m->emitter, offset);
  }
  if (m->emitter_clock != ev->clock) {
    m->emitter_clock = ev->clock;
    systrace_emitter_set_clock(m->emitter, ev->clock);
  }
  if (m->emitter_offset != offset) {
    m->emitter_offset = offset;
    systrace_emitter_set_line_offset(m->emitter, offset);
  }
  systrace_emitter_print(m->emitter, ev->ts, ev->cpu, ev->pid, (const char *)buf, buf_len);
}

/* --- generic events ---------------------------------------------------------- */

/* One field of a GenericFtraceEvent {name 1, oneof {str_value 3,
 * int_value 4, uint_value 5}}; with `add`, an arg named by it (a field
 * without a name or a value is none: trace_processor skips it too).
 * Returns false if its bytes do not parse. */
static bool generic_field(ftrace_kinds *k, const uint8_t *data, size_t len, bool add) {
  proto_context *ctx = k->ctx;
  const uint8_t *name = NULL;
  size_t name_len = 0;
  bool has_value = false;
  tm_arg_value v = {.type = TM_ARG_INT};
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
    if (f.number == 1 && f.wire_type == PW_LENGTH_DELIMITED) {
      name = f.data;
      name_len = f.len;
    } else if (f.number == 3 && f.wire_type == PW_LENGTH_DELIMITED) {
      has_value = true;
      v.type = TM_ARG_STRING;
      v.u.str_id = add ? proto_intern(ctx, (const char *)f.data, f.len) : 0;
    } else if ((f.number == 4 || f.number == 5) && f.wire_type == PW_VARINT) {
      has_value = true;
      v.type = f.number == 4 ? TM_ARG_INT : TM_ARG_UINT;
      v.u.int_value = (int64_t)f.value;
    }
  }
  if (c.error != PW_OK)
    return false;
  if (add && name_len && has_value)
    ctx->s->args_add(ctx->host, proto_intern(ctx, (const char *)name, name_len), v);
  return true;
}

/* The fields of a generic payload, checked (add false) or added as args. */
static bool generic_fields(ftrace_kinds *k, const ftrace_event *ev, bool add,
                           tm_str_id *name) {
  pw_cursor c = pw_cursor_of(ev->data, ev->len);
  pw_field f;
  while (pw_next(&c, &f)) {
    if (f.number == 1 && f.wire_type == PW_LENGTH_DELIMITED && f.len && add)
      *name = proto_intern(k->ctx, (const char *)f.data, f.len);
    else if (f.number == 2 && f.wire_type == PW_LENGTH_DELIMITED &&
             !generic_field(k, f.data, f.len, add))
      return false;
  }
  return c.error == PW_OK;
}

/* generic {event_name 1, repeated field 2}: an event the recorder had no
 * message for, in its legacy encoding. An ftrace_event row named
 * event_name ("generic" without one), each field an arg named by it, as
 * trace_processor reads it. Returns false if the payload does not parse
 * (the bundle is damaged); it is checked whole before any arg is added. */
static bool read_generic(ftrace_kinds *k, const ftrace_event *ev) {
  proto_context *ctx = k->ctx;
  tm_str_id name = 0;
  if (!generic_fields(k, ev, false, &name))
    return false;
  tm_thread_ref thread = ftrace_thread_of(k, ev->m, ev->pid);
  if (!k->has_system)
    return true;
  generic_fields(k, ev, true, &name);
  tm_args_ref args = ctx->s->args_commit(ctx->host);
  ctx->s->ftrace_event(ctx->host, ev->clock, ev->ts, ev->m->machine->ref, ev->cpu, thread,
                       name ? name : proto_intern_cstr(ctx, "generic"), args);
  return true;
}

/* --- events the schema does not name -------------------------------------- */

/* True if `len` bytes at `p` are UTF-8 text: valid sequences, no control
 * characters but tab, newline and carriage return. */
static bool is_text(const uint8_t *p, size_t len) {
  size_t i = 0;
  while (i < len) {
    uint8_t c = p[i];
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
        return false;
      i++;
      continue;
    }
    size_t n = c >= 0xf0 && c <= 0xf4 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 && c < 0xe0 ? 1 : 0;
    if (n == 0 || c > 0xf4 || len - i <= n)
      return false;
    uint32_t cp = c & (0x3fu >> n);
    for (size_t j = 1; j <= n; j++) {
      if ((p[i + j] & 0xc0) != 0x80)
        return false;
      cp = cp << 6 | (p[i + j] & 0x3fu);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n + 1;
  }
  return true;
}

/* Bytes that are not text, as "0x" and two hex digits a byte. */
static tm_str_id hex_string(ftrace_kinds *k, const uint8_t *p, size_t len) {
  static const char digits[] = "0123456789abcdef";
  size_t n = 2 + 2 * len;
  char stack[258];
  char *text = n <= sizeof stack ? stack : proto_xrealloc(NULL, n);
  text[0] = '0';
  text[1] = 'x';
  for (size_t i = 0; i < len; i++) {
    text[2 + 2 * i] = digits[p[i] >> 4];
    text[3 + 2 * i] = digits[p[i] & 15];
  }
  tm_str_id id = proto_intern(k->ctx, text, n);
  if (text != stack)
    free(text);
  return id;
}

/* Field `f` as an arg "field_<n>" holding its wire value (see
 * read_unknown). */
static void add_wire_arg(ftrace_kinds *k, const pw_field *f) {
  proto_context *ctx = k->ctx;
  char key[24];
  int key_len = snprintf(key, sizeof key, "field_%" PRIu32, f->number);
  tm_arg_value v = {.type = TM_ARG_INT, .u.int_value = (int64_t)f->value};
  if (f->wire_type == PW_FIXED32)
    v.u.int_value = (int64_t)(uint32_t)f->value;
  if (f->wire_type == PW_LENGTH_DELIMITED) {
    v.type = TM_ARG_STRING;
    v.u.str_id = is_text(f->data, f->len) ? proto_intern(ctx, (const char *)f->data, f->len)
                                          : hex_string(k, f->data, f->len);
  }
  ctx->s->args_add(ctx->host, proto_intern(ctx, key, (size_t)key_len), v);
}

/* An event whose id the schema does not name: still an ftrace_event row,
 * "unknown_ftrace_event_<id>", so that nothing in the file is invisible.
 * Without a schema the fields' types are unknown, so each is an arg
 * "field_<n>" holding its wire value: a varint or fixed64 as the 64-bit
 * integer it encodes (an int32 or int64 field reads right, a uint64 past
 * 2^63 reads negative), a fixed32 as the 32-bit unsigned integer, and
 * length-delimited bytes as a string when they are UTF-8 text, else as
 * hex (a nested message or packed numbers are not decoded). A payload
 * that does not parse as fields is one arg "payload", its bytes in hex:
 * the bytes of an unknown id are no damage of the bundle. Counted as
 * proto_ftrace_unknown_event, and logged. */
static bool read_unknown(ftrace_kinds *k, const ftrace_event *ev) {
  proto_context *ctx = k->ctx;
  char name[48];
  int name_len = snprintf(name, sizeof name, "unknown_ftrace_event_%" PRIu32, ev->id);
  char text[160];
  int n = snprintf(text, sizeof text, "ftrace event id %" PRIu32 " is not in the schema;"
                   " kept as ftrace_event %s, its fields by number", ev->id, name);
  tm_import_log_arg log[] = {
      {TM_IMPORT_LOG_ARG_INIT, .key = "event_id", .type = TM_ARG_UINT, .int_value = ev->id},
      {TM_IMPORT_LOG_ARG_INIT, .key = "message", .type = TM_ARG_STRING, .string = text, .string_len = (size_t)n},
  };
  proto_count_with(ctx, "proto_ftrace_unknown_event", log, 2);
  tm_thread_ref thread = ftrace_thread_of(k, ev->m, ev->pid);
  if (!k->has_system)
    return true;
  /* Parsed once to see whether the payload is fields at all, so that an
   * unparseable one gives no half list of args. */
  pw_cursor check = pw_cursor_of(ev->data, ev->len);
  pw_field f;
  while (pw_next(&check, &f)) {
  }
  if (check.error != PW_OK) {
    ctx->s->args_add(ctx->host, proto_intern_cstr(ctx, "payload"),
                     (tm_arg_value){.type = TM_ARG_STRING,
                                    .u.str_id = hex_string(k, ev->data, ev->len)});
  } else {
    pw_cursor c = pw_cursor_of(ev->data, ev->len);
    while (pw_next(&c, &f))
      add_wire_arg(k, &f);
  }
  tm_args_ref args = ctx->s->args_commit(ctx->host);
  ctx->s->ftrace_event(ctx->host, ev->clock, ev->ts, ev->m->machine->ref, ev->cpu, thread,
                       proto_intern(ctx, name, (size_t)name_len), args);
  return true;
}

/* --- events a bundle describes ------------------------------------------------ */

enum {
  GENERIC_FIRST_ID = 65536,        /* FtraceEvent ids of described events */
  BUNDLE_GENERIC_DESCRIPTORS = 11, /* GenericEventDescriptor {field_id 1, event_descriptor 2} */
  DESCRIPTOR_NAME = 1,             /* DescriptorProto {name 1, field 2} */
  DESCRIPTOR_FIELD = 2,
  FIELD_NAME = 1,                  /* FieldDescriptorProto {name 1, number 3, type 5} */
  FIELD_NUMBER = 3,
  FIELD_TYPE = 5,
};

/* FieldDescriptorProto.Type values, as protobuf's descriptor.proto
 * numbers them. */
enum {
  FD_DOUBLE = 1, FD_FLOAT = 2, FD_INT64 = 3, FD_UINT64 = 4, FD_INT32 = 5, FD_FIXED64 = 6,
  FD_FIXED32 = 7, FD_BOOL = 8, FD_STRING = 9, FD_BYTES = 12, FD_UINT32 = 13, FD_ENUM = 14,
  FD_SFIXED32 = 15, FD_SFIXED64 = 16, FD_SINT32 = 17, FD_SINT64 = 18,
};

static uint64_t generic_key(const ftrace_event *ev, uint64_t id) {
  return (uint64_t)ev->m->machine->ref << 32 | (id & 0xffffffffu);
}

/* One GenericEventDescriptor: the DescriptorProto of event `field_id`,
 * kept for the machine (a later description of the same id is ignored).
 * A description that does not parse, or names no field id, is counted
 * (ftrace_generic_descriptor_invalid) and its events stay unknown. */
static void add_description(ftrace_kinds *k, const ftrace_event *ev, const uint8_t *data,
                            size_t len) {
  proto_context *ctx = k->ctx;
  uint64_t id = 0;
  const uint8_t *descriptor = NULL;
  size_t descriptor_len = 0;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
    if (f.number == 1 && f.wire_type == PW_VARINT)
      id = f.value;
    else if (f.number == 2 && f.wire_type == PW_LENGTH_DELIMITED) {
      descriptor = f.data;
      descriptor_len = f.len;
    }
  }
  ftrace_generic g = {0};
  bool ok = c.error == PW_OK && id != 0 && id <= UINT32_MAX && descriptor;
  pw_cursor d = pw_cursor_of(descriptor, descriptor_len);
  while (ok && pw_next(&d, &f)) {
    if (f.number == DESCRIPTOR_NAME && f.wire_type == PW_LENGTH_DELIMITED && f.len) {
      g.name = proto_intern(ctx, (const char *)f.data, f.len);
    } else if (f.number == DESCRIPTOR_FIELD && f.wire_type == PW_LENGTH_DELIMITED) {
      ftrace_generic_field field = {0};
      pw_cursor fc = pw_cursor_of(f.data, f.len);
      pw_field ff;
      while (pw_next(&fc, &ff)) {
        if (ff.number == FIELD_NAME && ff.wire_type == PW_LENGTH_DELIMITED && ff.len)
          field.key = proto_intern(ctx, (const char *)ff.data, ff.len);
        else if (ff.number == FIELD_NUMBER && ff.wire_type == PW_VARINT)
          field.number = (uint32_t)ff.value;
        else if (ff.number == FIELD_TYPE && ff.wire_type == PW_VARINT)
          field.type = (uint32_t)ff.value;
      }
      if (fc.error != PW_OK)
        ok = false;
      else if (field.number && field.key)
        tm_vec_push(&g.fields, field);
    }
  }
  if (!ok || d.error != PW_OK) {
    tm_vec_free(&g.fields);
    proto_count(ctx, "ftrace_generic_descriptor_invalid");
    return;
  }
  uint32_t index;
  if (proto_map_get(&k->generic_index, generic_key(ev, id), &index)) {
    tm_vec_free(&g.fields);
    return;
  }
  proto_map_put(&k->generic_index, generic_key(ev, id), (uint32_t)k->generics.len);
  tm_vec_push(&k->generics, g);
}

/* The description of ev->id for its machine, or NULL. On the first
 * event of an id not yet described, the descriptions of its bundle are
 * read (once per bundle). */
static const ftrace_generic *described(ftrace_kinds *k, const ftrace_event *ev) {
  /* Only ids from 65536 are described (as trace_processor reads them):
   * an id below that which the schema lacks costs no search. */
  if (ev->id < GENERIC_FIRST_ID)
    return NULL;
  uint32_t index;
  if (proto_map_get(&k->generic_index, generic_key(ev, ev->id), &index))
    return &k->generics.data[index];
  /* A bundle is searched once: known by its bytes' place and length and
   * its packet's offset (buffers are reused, so a place alone could be
   * another bundle's). */
  if (!ev->bundle || (ev->bundle == k->described_bundle &&
                      ev->bundle_len == k->described_len &&
                      k->ctx->packet_offset == k->described_offset))
    return NULL;
  k->described_bundle = ev->bundle;
  k->described_len = ev->bundle_len;
  k->described_offset = k->ctx->packet_offset;
  pw_cursor c = pw_cursor_of(ev->bundle, ev->bundle_len);
  pw_field f;
  while (pw_next(&c, &f))
    if (f.number == BUNDLE_GENERIC_DESCRIPTORS && f.wire_type == PW_LENGTH_DELIMITED)
      add_description(k, ev, f.data, f.len);
  if (proto_map_get(&k->generic_index, generic_key(ev, ev->id), &index))
    return &k->generics.data[index];
  return NULL;
}

/* The value of field `f` as described type `type`; false if the wire
 * type is not that type's (the wire value is kept then). */
static bool described_value(ftrace_kinds *k, uint32_t type, const pw_field *f, tm_arg_value *v) {
  uint64_t bits = f->value;
  switch (type) {
  case FD_STRING:
  case FD_BYTES:
    if (f->wire_type != PW_LENGTH_DELIMITED)
      return false;
    v->type = TM_ARG_STRING;
    v->u.str_id = is_text(f->data, f->len) ? proto_intern(k->ctx, (const char *)f->data, f->len)
                                           : hex_string(k, f->data, f->len);
    return true;
  case FD_INT64:
  case FD_INT32:
  case FD_ENUM:
  case FD_UINT64:
  case FD_UINT32:
  case FD_BOOL:
  case FD_SINT32:
  case FD_SINT64:
    if (f->wire_type != PW_VARINT)
      return false;
    break;
  case FD_FIXED64:
  case FD_SFIXED64:
  case FD_DOUBLE:
    if (f->wire_type != PW_FIXED64)
      return false;
    break;
  case FD_FIXED32:
  case FD_SFIXED32:
  case FD_FLOAT:
    if (f->wire_type != PW_FIXED32)
      return false;
    break;
  default:
    return false;
  }
  switch (type) {
  case FD_INT32:
  case FD_ENUM:
  case FD_SFIXED32:
    v->type = TM_ARG_INT;
    v->u.int_value = (int32_t)(uint32_t)bits;
    break;
  case FD_UINT64:
  case FD_UINT32:
  case FD_FIXED64:
  case FD_FIXED32:
    v->type = TM_ARG_UINT;
    v->u.int_value = (int64_t)bits;
    break;
  case FD_BOOL:
    v->type = TM_ARG_BOOL;
    v->u.int_value = bits != 0;
    break;
  case FD_SINT32:
  case FD_SINT64:
    v->type = TM_ARG_INT;
    v->u.int_value = (int64_t)(bits >> 1) ^ -(int64_t)(bits & 1);
    break;
  case FD_DOUBLE: {
    double d;
    memcpy(&d, &bits, sizeof d);
    v->type = TM_ARG_REAL;
    v->u.real_value = d;
    break;
  }
  case FD_FLOAT: {
    uint32_t b32 = (uint32_t)bits;
    float x;
    memcpy(&x, &b32, sizeof x);
    v->type = TM_ARG_REAL;
    v->u.real_value = x;
    break;
  }
  default: /* int64, sfixed64 */
    v->type = TM_ARG_INT;
    v->u.int_value = (int64_t)bits;
    break;
  }
  return true;
}

/* An event its machine's bundles described: an ftrace_event row named as
 * the description names it, each field an arg named and typed by it (a
 * field it does not describe, or of another wire type, "field_<n>" with
 * its wire value as for unknown events). A payload that does not parse is
 * damage of the bundle, as for events of the schema. */
static bool read_described(ftrace_kinds *k, const ftrace_event *ev, const ftrace_generic *g) {
  proto_context *ctx = k->ctx;
  pw_cursor check = pw_cursor_of(ev->data, ev->len);
  pw_field f;
  while (pw_next(&check, &f)) {
  }
  if (check.error != PW_OK)
    return false;
  tm_thread_ref thread = ftrace_thread_of(k, ev->m, ev->pid);
  if (!k->has_system)
    return true;
  pw_cursor c = pw_cursor_of(ev->data, ev->len);
  while (pw_next(&c, &f)) {
    const ftrace_generic_field *field = NULL;
    for (size_t i = 0; i < g->fields.len && !field; i++)
      if (g->fields.data[i].number == f.number)
        field = &g->fields.data[i];
    tm_arg_value v = {.type = TM_ARG_INT};
    if (field && described_value(k, field->type, &f, &v))
      ctx->s->args_add(ctx->host, field->key, v);
    else
      add_wire_arg(k, &f);
  }
  tm_args_ref args = ctx->s->args_commit(ctx->host);
  char name[48];
  int name_len = snprintf(name, sizeof name, "unknown_ftrace_event_%" PRIu32, ev->id);
  ctx->s->ftrace_event(ctx->host, ev->clock, ev->ts, ev->m->machine->ref, ev->cpu, thread,
                       g->name ? g->name : proto_intern(ctx, name, (size_t)name_len), args);
  return true;
}

/* --- one event --------------------------------------------------------------- */

/* Any event: its schema looked up, then read as its kind says. */
static __attribute__((noinline)) bool read_event_general(ftrace_kinds *k,
                                                         const ftrace_event *ev) {
  ftrace_schema scratch;
  const ftrace_schema *sc = payload_schema(k, ev->id, &scratch);
  if (!sc->d) {
    const ftrace_generic *g = described(k, ev);
    return g ? read_described(k, ev, g) : read_unknown(k, ev);
  }
  /* Every event but a switch makes its pid's thread known (the switch
   * names its own two); a wakeup's is its waker. */
  tm_thread_ref own = 0;
  if (ev->id != EV_SCHED_SWITCH)
    own = ftrace_thread_of(k, ev->m, ev->pid);
  if (ev->id == EV_GENERIC)
    return read_generic(k, ev);
  if (!sc->modelled)
    return read_raw(k, ev, sc);
  /* A print, switch or wakeup here is not in traced's shape:
   * ftrace_kinds_read tried that first. */
  payload p;
  decode_status status = decode(k, ev, sc, &p);
  if (status != DECODE_OK)
    return status == DECODE_SKIP;
  proto_context *ctx = k->ctx;
  switch (ev->id) {
  case EV_PRINT:
    read_print(k, ev, p.text[2], has(&p, 2) ? p.text_len[2] : 0);
    break;
  case EV_SCHED_SWITCH:
    read_switch(k, ev, &p);
    break;
  case EV_SCHED_WAKING:
  case EV_SCHED_WAKEUP:
  case EV_SCHED_WAKEUP_NEW:
    read_waking(k, ev, own, &p);
    break;
  case EV_SCHED_BLOCKED_REASON:
    if (k->has_system)
      ctx->s->sched_blocked_reason(ctx->host, ev->clock, ev->ts,
                                   ftrace_thread_of(k, ev->m, as_i32(&p, 1)),
                                   has(&p, 3) ? (int32_t)(p.value[3] != 0) : -1,
                                   has(&p, 2) ? kernel_symbol(ev, p.value[2]) : 0);
    break;
  case EV_CPU_FREQUENCY:
  case EV_CPU_IDLE:
    read_cpu_counter(k, ev, &p, ev->id == EV_CPU_FREQUENCY);
    break;
  case EV_SOFTIRQ_ENTRY:
  case EV_SOFTIRQ_EXIT:
  case EV_IRQ_HANDLER_ENTRY:
  case EV_IRQ_HANDLER_EXIT:
    read_irq(k, ev, &p);
    break;
  case EV_SUSPEND_RESUME:
    read_suspend_resume(k, ev, &p);
    break;
  case EV_CLOCK_ENABLE:
  case EV_CLOCK_DISABLE:
  case EV_CLOCK_SET_RATE:
    read_clock(k, ev, &p);
    break;
  case EV_GPU_FREQUENCY:
    read_gpu_frequency(k, ev, &p);
    break;
  case EV_MM_EVENT_RECORD:
    read_mm_event(k, ev, &p);
    break;
  case EV_RSS_STAT:
    read_rss_stat(k, ev, &p);
    break;
  case EV_ION_HEAP_GROW:
  case EV_ION_HEAP_SHRINK:
  case EV_ION_STAT:
  case EV_DMA_HEAP_STAT:
    read_heap(k, ev, &p);
    break;
  case EV_TASK_NEWTASK:
    read_newtask(k, ev, &p);
    break;
  case EV_TASK_RENAME:
    ftrace_thread_named(k, ev->m, as_i32(&p, 1), p.text[3], has(&p, 3) ? p.text_len[3] : 0);
    break;
  case EV_SCHED_PROCESS_FREE:
    if (k->has_system)
      ctx->s->thread_lifetime(ctx->host, ev->clock, ev->ts,
                              ftrace_thread_of(k, ev->m, as_i32(&p, 2)), 1);
    break;
  default:
    break;
  }
  return true;
}

bool ftrace_kinds_read(ftrace_kinds *k, const ftrace_event *ev) {
  /* Prints, switches and wakeups in the shapes traced writes, nearly
   * every event of a system trace, are read here without the general
   * path's frame (a kilobyte of schema scratch and payload). Their ids
   * are messages of the schema the reader models; any other shape goes
   * to the general path, which decodes it field by field. */
  switch (ev->id) {
  case EV_PRINT: {
    const uint8_t *buf;
    size_t buf_len;
    if (!print_canonical(ev, &buf, &buf_len))
      break;
    ftrace_thread_of(k, ev->m, ev->pid);
    read_print(k, ev, buf, buf_len);
    return true;
  }
  case EV_SCHED_SWITCH:
    if (read_switch_canonical(k, ev))
      return true;
    break;
  case EV_SCHED_WAKING:
  case EV_SCHED_WAKEUP:
  case EV_SCHED_WAKEUP_NEW:
    /* The event's thread, the waker, first, as the general path makes
     * it. */
    if (read_waking_canonical(k, ev, ftrace_thread_of(k, ev->m, ev->pid)))
      return true;
    break;
  default:
    break;
  }
  return read_event_general(k, ev);
}
