/*
 * A realistic Perfetto TrackEvent trace for the benchmark: what an app
 * built with the Perfetto SDK records with a profiler running beside it,
 * as opposed to gen_proto_trace.c's friendly shape (every sequence
 * interning everything up front, one annotation per begin).
 *
 * What makes it realistic, each point something the reader must cope
 * with:
 * - Processes and threads described by TrackDescriptors (process and
 *   thread names, threads parented to their process), and counter tracks
 *   of each process.
 * - Incremental interning: a sequence interns a name, category, debug
 *   annotation name or debug string in the packet of its first use, so
 *   InternedData arrives all through the trace, not only at its start.
 * - Writer threads' packets interleaved in chunks of 8-64 packets (the
 *   SDK's per-thread chunks), threads of very different activity.
 * - Slices nested up to 8 deep, some open across many chunks; instants;
 *   counters (integer and double); flows (flow_ids started on one thread,
 *   terminating_flow_ids on another).
 * - Debug annotations on most begins: ints, strings (some interned),
 *   bools, doubles, nested dicts and arrays.
 * - Callstack samples: one sequence writes PerfSample packets (as
 *   traced_perf does), interning mappings, build ids, paths, function
 *   names, frames and callstacks as they are first used; about one event
 *   in ten is a sample.
 *
 * Invariants: exactly `events` counted events (TrackEvent and PerfSample
 * packets); every slice that begins ends; every flow started is
 * terminated; timestamps increase per sequence; the same arguments give
 * the same bytes.
 */
#include "gen_proto_trace.h"

#include "proto_wire_append.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

enum {
  PROCESSES = 8,
  NAMES = 400,
  CATEGORIES = 24,
  DEBUG_NAMES = 24,
  DEBUG_STRINGS = 64,
  MAX_DEPTH = 8,
  /* Callstack samples: a tree of frames over a few mappings. */
  MAPPINGS = 12,
  FUNCTIONS = 600,
  CALLSTACKS = 3000,
  MAX_FRAMES = 24,
  /* One turn in this many is a burst of 1-16 samples, against 8-64
   * track events of a turn: about one event in ten is a sample. */
  SAMPLE_TURNS = 3,
  /* A thread idle for longer resumes this close behind the latest
   * event written: chunks arrive out of time order, within this. */
  MAX_LAG_NS = 20000000,
};

typedef struct open_flow {
  uint64_t id;
  uint64_t ts;   /* of its start: its end comes later */
  uint32_t from; /* the sequence that started it */
} open_flow;

typedef struct sequence {
  uint32_t id; /* trusted_packet_sequence_id */
  uint32_t process;
  uint64_t track_uuid;
  uint64_t ts;
  uint32_t depth;
  uint32_t weight; /* share of the chunks */
  bool cleared;    /* has written its SEQ_INCREMENTAL_STATE_CLEARED packet */
  uint8_t *name_known, *category_known, *debug_name_known, *debug_string_known;
} sequence;

typedef struct gen {
  FILE *out;
  GRand *rand;
  GByteArray *packet, *frame, *interned, *event, *sub, *sub2;
  sequence *seqs;
  uint32_t n_seqs;
  uint64_t total_weight;
  uint64_t counter_uuid[PROCESSES][2];
  GArray *flows; /* open_flow */
  uint64_t next_flow;
  /* the sample sequence */
  uint32_t sample_seq_id;
  uint64_t sample_ts;
  bool samples_cleared;
  uint8_t *mapping_known, *function_known, *frame_known, *callstack_known;
  uint32_t *frame_function, *frame_mapping; /* by frame iid - 1 */
  uint32_t *callstack_len, *callstack_frames; /* frames: MAX_FRAMES per callstack */
  uint32_t n_frames;
  uint64_t now; /* the latest timestamp written */
  uint64_t budget;
  /* Open slices of every sequence plus open flows: each needs one more
   * event, so the budget never falls below it (see write_track_event). */
  uint64_t open;
  bool failed;
} gen;

static uint32_t below(gen *g, uint32_t n) {
  return n <= 1 ? 0 : (uint32_t)g_rand_int_range(g->rand, 0, (gint32)n);
}

/* An index skewed to small values: hot names are much more frequent. */
static uint32_t skewed(gen *g, uint32_t n) {
  return below(g, below(g, n) + 1);
}

static void flush_packet(gen *g) {
  g_byte_array_set_size(g->frame, 0);
  wire_append_message(g->frame, 1, g->packet);
  g_byte_array_set_size(g->packet, 0);
  if (fwrite(g->frame->data, 1, g->frame->len, g->out) != g->frame->len)
    g->failed = true;
}

/* --- descriptors --------------------------------------------------------- */

static const char *const process_names[PROCESSES] = {
    "com.example.app", "com.example.app:render", "system_server", "surfaceflinger",
    "com.example.app:service", "media.codec", "com.android.systemui", "webview_zygote",
};
static const char *const thread_names[] = {
    "main", "RenderThread", "hwuiTask0", "hwuiTask1", "Binder:1234_1", "Binder:1234_2",
    "OkHttp Dispatch", "AsyncTask #1", "pool-2-thread-1", "Chrome_IOThread", "Jit thread pool",
    "HeapTaskDaemon", "FinalizerDaemon", "GLThread 12", "CodecLooper", "ReferenceQueueD",
};

static void write_descriptors(gen *g) {
  for (uint32_t p = 0; p < PROCESSES; p++) {
    g_byte_array_set_size(g->sub, 0);
    wire_append_uint(g->sub, 1, 100 + p); /* uuid */
    g_byte_array_set_size(g->sub2, 0);
    wire_append_uint(g->sub2, 1, 1000 + 1000 * p); /* pid */
    wire_append_string(g->sub2, 6, process_names[p]);  /* process_name */
    wire_append_message(g->sub, 3, g->sub2);
    wire_append_uint(g->packet, 10, 1); /* the service's sequence */
    wire_append_message(g->packet, 60, g->sub);
    flush_packet(g);
    for (int k = 0; k < 2; k++) { /* counter tracks of the process */
      g->counter_uuid[p][k] = 500 + 2 * p + (uint64_t)k;
      g_byte_array_set_size(g->sub, 0);
      wire_append_uint(g->sub, 1, g->counter_uuid[p][k]);
      wire_append_uint(g->sub, 5, 100 + p); /* parent_uuid */
      wire_append_string(g->sub, 2, k == 0 ? "mem.rss" : "fps");
      g_byte_array_set_size(g->sub2, 0);
      wire_append_message(g->sub, 8, g->sub2); /* counter {} */
      wire_append_uint(g->packet, 10, 1);
      wire_append_message(g->packet, 60, g->sub);
      flush_packet(g);
    }
  }
  for (uint32_t s = 0; s < g->n_seqs; s++) {
    sequence *q = &g->seqs[s];
    g_byte_array_set_size(g->sub, 0);
    wire_append_uint(g->sub, 1, q->track_uuid);
    wire_append_uint(g->sub, 5, 100 + q->process);
    g_byte_array_set_size(g->sub2, 0);
    wire_append_uint(g->sub2, 1, 1000 + 1000 * q->process);
    wire_append_uint(g->sub2, 2, 1000 + 1000 * q->process + s);
    wire_append_string(g->sub2, 5, thread_names[s % G_N_ELEMENTS(thread_names)]);
    wire_append_message(g->sub, 4, g->sub2);
    wire_append_uint(g->packet, 10, q->id);
    wire_append_uint(g->packet, 13, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
    q->cleared = true;
    wire_append_message(g->packet, 60, g->sub);
    flush_packet(g);
  }
}

/* --- track events ------------------------------------------------------------ */

/* The iid of entry `i` of a kind, interned into g->interned on first use. */
static uint64_t use_interned(gen *g, uint8_t *known, uint32_t field, uint32_t i,
                             const char *text) {
  if (!known[i]) {
    known[i] = 1;
    wire_append_interned(g->interned, field, i + 1, text);
  }
  return i + 1;
}

static uint64_t event_name(gen *g, sequence *q) {
  uint32_t i = skewed(g, NAMES);
  char text[64];
  static const char *const verbs[] = {"Choreographer#doFrame", "traversal", "measure", "layout",
                                      "draw", "RV OnBindView", "inflate", "Lock contention",
                                      "binder transaction", "DrawFrame", "syncFrameState",
                                      "queueBuffer", "dequeueBuffer", "onMessageReceived"};
  g_snprintf(text, sizeof text, "%s %u", verbs[i % G_N_ELEMENTS(verbs)], i);
  return use_interned(g, q->name_known, 2, i, text);
}

static uint64_t category(gen *g, sequence *q) {
  uint32_t i = skewed(g, CATEGORIES);
  char text[32];
  g_snprintf(text, sizeof text, i % 3 ? "gfx.cat%u" : "app,cat%u", i);
  return use_interned(g, q->category_known, 1, i, text);
}

/* One debug annotation in g->sub2 of a random kind. */
static void debug_annotation(gen *g, sequence *q, GByteArray *into) {
  g_autoptr(GByteArray) a = g_byte_array_new();
  uint32_t n = skewed(g, DEBUG_NAMES);
  char name[32];
  g_snprintf(name, sizeof name, "arg_%u", n);
  wire_append_uint(a, 1, use_interned(g, q->debug_name_known, 3, n, name));
  switch (below(g, 8)) {
  case 0:
  case 1:
    wire_append_uint(a, 4, (uint64_t)(int64_t)g_rand_int_range(g->rand, -1000, 1000000));
    break;
  case 2:
    wire_append_uint(a, 2, below(g, 2));
    break;
  case 3:
    wire_append_double(a, 5, g_rand_double_range(g->rand, 0, 1000));
    break;
  case 4: { /* an interned string value */
    uint32_t s = skewed(g, DEBUG_STRINGS);
    char text[48];
    g_snprintf(text, sizeof text, "state_%u_%s", s, s % 2 ? "idle" : "busy");
    wire_append_uint(a, 17, use_interned(g, q->debug_string_known, 29, s, text));
    break;
  }
  case 5: { /* a nested dict of two entries */
    for (int k = 0; k < 2; k++) {
      g_autoptr(GByteArray) e = g_byte_array_new();
      wire_append_string(e, 10, k ? "height" : "width");
      wire_append_uint(e, 4, below(g, 4000));
      wire_append_message(a, 11, e);
    }
    break;
  }
  case 6: { /* an array */
    uint32_t len = 1 + below(g, 4);
    for (uint32_t k = 0; k < len; k++) {
      g_autoptr(GByteArray) e = g_byte_array_new();
      wire_append_uint(e, 4, below(g, 100));
      wire_append_message(a, 12, e);
    }
    break;
  }
  default: { /* a plain string: a URL or a path */
    char text[96];
    g_snprintf(text, sizeof text, "https://cdn.example.com/img/%u/%u.webp", below(g, 5000),
               below(g, 100000));
    wire_append_string(a, 6, text);
    break;
  }
  }
  wire_append_message(into, 4, a);
}

/* Writes one TrackEvent packet of sequence `q` from g->event, with the
 * interned data its fields used. */
static void write_event_packet(gen *g, sequence *q, uint64_t ts) {
  wire_append_uint(g->packet, 8, ts);
  g->now = MAX(g->now, ts);
  wire_append_uint(g->packet, 10, q->id);
  wire_append_uint(g->packet, 13, 2); /* SEQ_NEEDS_INCREMENTAL_STATE */
  if (g->interned->len)
    wire_append_message(g->packet, 12, g->interned);
  wire_append_message(g->packet, 11, g->event);
  flush_packet(g);
  g_byte_array_set_size(g->interned, 0);
  g_byte_array_set_size(g->event, 0);
  g->budget--;
}

static void write_begin(gen *g, sequence *q) {
  wire_append_uint(g->event, 9, 1); /* TYPE_SLICE_BEGIN */
  wire_append_uint(g->event, 11, q->track_uuid);
  wire_append_uint(g->event, 3, category(g, q));
  wire_append_uint(g->event, 10, event_name(g, q));
  uint32_t annotations = below(g, 100) < 70 ? 1 + skewed(g, 4) : 0;
  for (uint32_t i = 0; i < annotations; i++)
    debug_annotation(g, q, g->event);
  /* Flows: start one now and then, or end one another thread began. */
  uint32_t roll = below(g, 100);
  if (roll < 4 && g->budget >= g->open + 3) {
    open_flow f = {g->next_flow++ * 0x9E3779B1u, q->ts, q->id};
    wire_append_fixed64(g->event, 47, f.id);
    g_array_append_val(g->flows, f);
    g->open++;
  } else if (roll < 8) {
    for (guint i = 0; i < g->flows->len; i++) {
      open_flow *f = &g_array_index(g->flows, open_flow, i);
      if (f->from == q->id || f->ts >= q->ts)
        continue;
      wire_append_fixed64(g->event, 48, f->id);
      g_array_remove_index_fast(g->flows, i);
      g->open--;
      break;
    }
  }
  q->depth++;
  g->open++;
}

static void write_end(gen *g, sequence *q) {
  wire_append_uint(g->event, 9, 2); /* TYPE_SLICE_END */
  wire_append_uint(g->event, 11, q->track_uuid);
  q->depth--;
  g->open--;
}

static void write_instant(gen *g, sequence *q) {
  wire_append_uint(g->event, 9, 3); /* TYPE_INSTANT */
  wire_append_uint(g->event, 11, q->track_uuid);
  wire_append_uint(g->event, 3, category(g, q));
  wire_append_uint(g->event, 10, event_name(g, q));
  if (below(g, 2))
    debug_annotation(g, q, g->event);
}

static void write_counter(gen *g, sequence *q) {
  wire_append_uint(g->event, 9, 4); /* TYPE_COUNTER */
  int k = (int)below(g, 2);
  wire_append_uint(g->event, 11, g->counter_uuid[q->process][k]);
  if (k == 0)
    wire_append_uint(g->event, 30, 50000000 + below(g, 100000000));
  else
    wire_append_double(g->event, 44, g_rand_double_range(g->rand, 0, 120));
}

/* One event of sequence `q` at its next timestamp; the caller guarantees
 * budget > open, and a begin needs one more (its end). */
static void write_track_event(gen *g, sequence *q) {
  q->ts += 200 + below(g, below(g, 10) == 0 ? 2000000 : 20000);
  uint32_t roll = below(g, 100);
  if (q->depth > 0 && (q->depth >= MAX_DEPTH || roll < 42))
    write_end(g, q);
  else if (roll < 88 && g->budget >= g->open + 2)
    write_begin(g, q);
  else if (roll < 94)
    write_instant(g, q);
  else
    write_counter(g, q);
  write_event_packet(g, q, q->ts);
}

/* --- callstack samples ------------------------------------------------------------ */

/* Interns (into g->interned) what frame `f` (0-based) needs, then it. */
static void intern_frame(gen *g, uint32_t f) {
  if (g->frame_known[f])
    return;
  uint32_t m = g->frame_mapping[f], fn = g->frame_function[f];
  if (!g->mapping_known[m]) {
    g->mapping_known[m] = 1;
    char text[96];
    g_snprintf(text, sizeof text, "%08x%08x%08x%08x", m * 2654435761u, m + 17, m * 7u, 99u);
    wire_append_interned(g->interned, 16, m + 1, text); /* build_ids */
    g_snprintf(text, sizeof text, m % 3 ? "/system/lib64/libmod%u.so" : "/data/app/base%u.apk",
               m);
    wire_append_interned(g->interned, 17, m + 1, text); /* mapping_paths */
    g_autoptr(GByteArray) mapping = g_byte_array_new();
    wire_append_uint(mapping, 1, m + 1);
    wire_append_uint(mapping, 2, m + 1); /* build_id */
    wire_append_uint(mapping, 4, 0x7000000000ull + (uint64_t)m * 0x1000000);
    wire_append_uint(mapping, 5, 0x7000000000ull + (uint64_t)m * 0x1000000 + 0x800000);
    wire_append_uint(mapping, 7, m + 1); /* path_string_ids */
    wire_append_message(g->interned, 19, mapping);
  }
  if (!g->function_known[fn]) {
    g->function_known[fn] = 1;
    char text[80];
    g_snprintf(text, sizeof text, "android::Module%u::function_%u(int, void*)", fn % 40, fn);
    wire_append_interned(g->interned, 5, fn + 1, text); /* function_names */
  }
  g->frame_known[f] = 1;
  g_autoptr(GByteArray) frame = g_byte_array_new();
  wire_append_uint(frame, 1, f + 1);
  wire_append_uint(frame, 2, fn + 1);
  wire_append_uint(frame, 3, m + 1);
  wire_append_uint(frame, 4, 0x1000 + (uint64_t)f * 0x40);
  wire_append_message(g->interned, 6, frame);
}

static void write_sample(gen *g) {
  /* ~1 kHz per cpu, in time with the threads */
  g->sample_ts = MAX(g->sample_ts + 100000 + below(g, 20000), g->now - MAX_LAG_NS);
  uint32_t cs = skewed(g, CALLSTACKS);
  if (!g->callstack_known[cs]) {
    g->callstack_known[cs] = 1;
    g_autoptr(GByteArray) callstack = g_byte_array_new();
    wire_append_uint(callstack, 1, cs + 1);
    for (uint32_t i = 0; i < g->callstack_len[cs]; i++) {
      uint32_t f = g->callstack_frames[cs * MAX_FRAMES + i];
      intern_frame(g, f);
      wire_append_uint(callstack, 2, f + 1);
    }
    wire_append_message(g->interned, 7, callstack);
  }
  sequence *q = &g->seqs[below(g, g->n_seqs)];
  g_byte_array_set_size(g->sub, 0);
  wire_append_uint(g->sub, 1, below(g, 8));                                    /* cpu */
  wire_append_uint(g->sub, 2, 1000 + 1000 * q->process);                       /* pid */
  wire_append_uint(g->sub, 3, 1000 + 1000 * q->process + (uint64_t)(q - g->seqs)); /* tid */
  wire_append_uint(g->sub, 4, cs + 1);                                         /* callstack_iid */
  wire_append_uint(g->packet, 8, g->sample_ts);
  wire_append_uint(g->packet, 10, g->sample_seq_id);
  wire_append_uint(g->packet, 13, g->samples_cleared ? 2 : 1);
  g->samples_cleared = true;
  if (g->interned->len)
    wire_append_message(g->packet, 12, g->interned);
  wire_append_message(g->packet, 66, g->sub);
  flush_packet(g);
  g_byte_array_set_size(g->interned, 0);
  g->budget--;
}

/* A tree of frames: callstacks share their roots (main, looper) and
 * branch towards the leaves, as real ones do. */
static void make_callstacks(gen *g) {
  g->n_frames = 4000;
  g->frame_function = g_new(uint32_t, g->n_frames);
  g->frame_mapping = g_new(uint32_t, g->n_frames);
  for (uint32_t f = 0; f < g->n_frames; f++) {
    g->frame_function[f] = f < 8 ? f : below(g, FUNCTIONS);
    g->frame_mapping[f] = below(g, MAPPINGS);
  }
  g->callstack_len = g_new(uint32_t, CALLSTACKS);
  g->callstack_frames = g_new(uint32_t, (size_t)CALLSTACKS * MAX_FRAMES);
  for (uint32_t cs = 0; cs < CALLSTACKS; cs++) {
    uint32_t len = 4 + below(g, MAX_FRAMES - 4);
    uint32_t *frames = &g->callstack_frames[cs * MAX_FRAMES];
    for (uint32_t i = 0; i < len; i++) /* roots shared, leaves spread */
      frames[i] = i < 3 ? i : (i < 6 ? 3 + below(g, 40) : below(g, g->n_frames));
    g->callstack_len[cs] = len;
  }
  g->mapping_known = g_new0(uint8_t, MAPPINGS);
  g->function_known = g_new0(uint8_t, FUNCTIONS);
  g->frame_known = g_new0(uint8_t, g->n_frames);
  g->callstack_known = g_new0(uint8_t, CALLSTACKS);
}

bool gen_proto_trace_write_realistic(FILE *out, uint64_t events, uint32_t sequences,
                                     uint32_t seed, uint64_t *bytes_written) {
  gen g = {.out = out, .budget = events, .n_seqs = sequences ? sequences : 1};
  g.rand = g_rand_new_with_seed(seed ^ 0x5eedu);
  g.packet = g_byte_array_new();
  g.frame = g_byte_array_new();
  g.interned = g_byte_array_new();
  g.event = g_byte_array_new();
  g.sub = g_byte_array_new();
  g.sub2 = g_byte_array_new();
  g.flows = g_array_new(FALSE, FALSE, sizeof(open_flow));
  g.next_flow = 1;
  long start = ftell(out);

  /* ClockSnapshot (field 6): BOOTTIME and MONOTONIC read together. */
  for (int c = 0; c < 2; c++) {
    g_byte_array_set_size(g.sub2, 0);
    wire_append_uint(g.sub2, 1, c == 0 ? 6 : 3);
    wire_append_uint(g.sub2, 2, c == 0 ? 5000000000ull : 4000000000ull);
    wire_append_message(g.sub, 1, g.sub2);
  }
  wire_append_uint(g.packet, 10, 1);
  wire_append_message(g.packet, 6, g.sub);
  flush_packet(&g);

  g.seqs = g_new0(sequence, g.n_seqs);
  for (uint32_t s = 0; s < g.n_seqs; s++) {
    sequence *q = &g.seqs[s];
    q->id = 2 + s;
    q->process = s % PROCESSES;
    q->track_uuid = 1000 + s;
    q->ts = 5000000000ull + s * 1000;
    /* Main and render threads busy, pools quiet. */
    q->weight = s < PROCESSES ? 40 : s < 2 * PROCESSES ? 20 : 1 + below(&g, 6);
    g.total_weight += q->weight;
    q->name_known = g_new0(uint8_t, NAMES);
    q->category_known = g_new0(uint8_t, CATEGORIES);
    q->debug_name_known = g_new0(uint8_t, DEBUG_NAMES);
    q->debug_string_known = g_new0(uint8_t, DEBUG_STRINGS);
  }
  g.now = 5000000000ull; /* the clock snapshot's BOOTTIME: the trace starts there */
  g.sample_seq_id = 2 + g.n_seqs;
  g.sample_ts = 5000000000ull;
  make_callstacks(&g);
  write_descriptors(&g);

  while (g.budget > g.open && !g.failed) {
    if (below(&g, SAMPLE_TURNS) == 0) {
      uint32_t burst = 1 + below(&g, 16); /* the profiler's chunk */
      for (uint32_t i = 0; i < burst && g.budget > g.open; i++)
        write_sample(&g);
      continue;
    }
    uint64_t pick = below(&g, (uint32_t)g.total_weight);
    sequence *q = g.seqs;
    for (uint32_t s = 0; s < g.n_seqs; s++) {
      if (pick < g.seqs[s].weight) {
        q = &g.seqs[s];
        break;
      }
      pick -= g.seqs[s].weight;
    }
    if (q->ts + MAX_LAG_NS < g.now) /* idle until now, or nearly */
      q->ts = g.now - below(&g, MAX_LAG_NS);
    uint32_t chunk = 8 + below(&g, 57);
    for (uint32_t i = 0; i < chunk && g.budget > g.open && !g.failed; i++)
      write_track_event(&g, q);
  }
  /* The budget left is what is open: every slice ends, every flow ends
   * on an instant of the thread that did not start it. */
  for (uint32_t s = 0; s < g.n_seqs && !g.failed; s++) {
    sequence *c = &g.seqs[s];
    while (c->depth > 0) {
      c->ts += 1000;
      write_end(&g, c);
      write_event_packet(&g, c, c->ts);
    }
  }
  while (g.flows->len && !g.failed) {
    open_flow f = g_array_index(g.flows, open_flow, g.flows->len - 1);
    g_array_set_size(g.flows, g.flows->len - 1);
    g.open--;
    sequence *c = &g.seqs[f.from == g.seqs[0].id && g.n_seqs > 1 ? 1 : 0];
    c->ts = MAX(c->ts, f.ts) + 1000;
    write_instant(&g, c);
    wire_append_fixed64(g.event, 48, f.id);
    write_event_packet(&g, c, c->ts);
  }

  for (uint32_t s = 0; s < g.n_seqs; s++) {
    g_free(g.seqs[s].name_known);
    g_free(g.seqs[s].category_known);
    g_free(g.seqs[s].debug_name_known);
    g_free(g.seqs[s].debug_string_known);
  }
  g_free(g.seqs);
  g_free(g.frame_function);
  g_free(g.frame_mapping);
  g_free(g.callstack_len);
  g_free(g.callstack_frames);
  g_free(g.mapping_known);
  g_free(g.function_known);
  g_free(g.frame_known);
  g_free(g.callstack_known);
  g_array_free(g.flows, TRUE);
  g_byte_array_free(g.packet, TRUE);
  g_byte_array_free(g.frame, TRUE);
  g_byte_array_free(g.interned, TRUE);
  g_byte_array_free(g.event, TRUE);
  g_byte_array_free(g.sub, TRUE);
  g_byte_array_free(g.sub2, TRUE);
  g_rand_free(g.rand);
  if (bytes_written)
    *bytes_written = (uint64_t)(ftell(out) - start);
  return !g.failed && fflush(out) == 0;
}
