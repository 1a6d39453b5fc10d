/*
 * A realistic Chrome JSON trace for the benchmark: what Chrome's tracing,
 * DevTools' "Save profile" and Perfetto's JSON exporter actually write,
 * as opposed to gen_chrome_json.c's friendly shape (see gen_chrome_json.h).
 *
 * What makes it realistic, each point something the importer must cope
 * with (and pay for):
 * - Per-thread trace buffers: every thread records into a chunk of its
 *   own (20-60 events) and chunks reach the file when full, so the file
 *   interleaves ~400 threads of ~36 processes in blocks, and a quiet
 *   thread's events arrive long after a busy one's of the same time.
 * - Complete events ("X") are recorded when they end: a child comes before
 *   its parent, and one thread's events go back in ts by up to the length
 *   of its longest task (a few hundred ms).
 * - Timestamps in µs with a fraction, printed as the shortest decimal of a
 *   double ("ts":372811930123.456, "dur":12.25); threads with thread time
 *   also have "tts"/"tdur".
 * - Roughly half the events carry args: source locations, DevTools'
 *   nested "data" dicts with stack-trace arrays, rect arrays, long strings
 *   (URLs, style sheet text); the others "args":{} or none.
 * - Category lists ("disabled-by-default-devtools.timeline,rail").
 * - Async events "b"/"n"/"e" with "id" (hex string or number) or "id2"
 *   ({"local":...} or {"global":...}), begun and ended by different tasks,
 *   sometimes on different threads of the process.
 * - Flow v1 ("s"/"t"/"f", the end bound with "bp":"e") across threads,
 *   and flow v2 ("bind_id" with "flow_out"/"flow_in") on complete events.
 * - Counters ("C") with one to four series in args.
 * - Instants with thread, process and global scope ("s":"t"/"p"/"g"), and
 *   Perfetto's "I".
 * - Metadata events ("M": process_name, process_labels,
 *   process_sort_index, thread_name, thread_sort_index) written at the
 *   end, as Chrome's TraceLog adds them.
 * - The object form: "traceEvents", then "systemTraceEvents" (an ftrace
 *   text body, as Chrome on Android/ChromeOS adds), then a "metadata"
 *   object with nested values.
 *
 * Invariants: exactly `events` events (traceEvents entries plus the lines
 * of systemTraceEvents that are events); on every thread, complete events
 * nest (a child lies within its parent); every async "b" gets its "e" and
 * every flow its end before the file ends; the same options always give
 * the same bytes.
 */
#include "gen_chrome_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum {
  PROCESSES = 36,
  MAX_DEPTH = 8,
  NAMES = 600,
  /* One event in this many is a systemTraceEvents line. */
  SYSTEM_SHARE = 200,
};

typedef struct rng {
  uint64_t state;
} rng;

/* splitmix64: small, fast and the same on every platform. */
static uint64_t rnext(rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static uint64_t below(rng *r, uint64_t n) { return n == 0 ? 0 : rnext(r) % n; }
static bool chance(rng *r, unsigned per_mille) { return below(r, 1000) < per_mille; }

/* An index skewed to small values (hot names are much more frequent). */
static uint64_t skewed(rng *r, uint64_t n) {
  uint64_t bound = below(r, n) + 1;
  return below(r, below(r, bound) + 1);
}

/* --- vocabulary --------------------------------------------------------- */

static const char *const subjects[] = {
    "ThreadControllerImpl", "SequenceManager", "MessageLoop",  "V8",
    "Blink",                "LayoutView",      "Paint",        "Compositor",
    "Raster",               "GpuChannel",      "Viz",          "IPC",
    "Net",                  "URLLoader",       "Scheduler",    "StyleEngine",
    "Document",             "LocalFrame",      "Scroll",       "Animation",
    "HTMLDocumentParser",   "ResourceFetcher", "CommandBuffer", "SkiaRenderer",
    "DisplayScheduler",     "FrameSinkManager", "InputRouter", "RenderWidget",
    "ProxyMain",            "ProxyImpl",
};
static const char *const actions[] = {
    "::RunTask", "::DoWork",    "::Update",   "::Commit",     "::Draw",
    "::Execute", "::Flush",     "::Layout",   "::Recalc",     "::Dispatch",
    "::Notify",  "::Prepare",   "::Finish",   "::Schedule",   "::Process",
    "::BeginMainFrame", "::OnMessageReceived", "::DidReceiveResponse",
    "::PumpTokenizer",  "::HandleInputEvent",
};
static const char *const categories[] = {
    "toplevel",
    "v8",
    "blink",
    "cc",
    "gpu",
    "viz",
    "ipc,toplevel",
    "net",
    "loading",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline,rail",
    "devtools.timeline",
    "blink,devtools.timeline",
    "benchmark,rail",
    "renderer.scheduler",
    "toplevel,viz",
    "disabled-by-default-v8.compile",
    "input,benchmark,devtools.timeline",
};
static const char *const process_kinds[] = {
    "Browser", "GPU Process", "Utility: Network Service", "Renderer",
    "Renderer", "Renderer", "Extension", "Utility: Audio Service", "Renderer",
};
static const char *const thread_kinds[] = {
    "CrRendererMain",       "Compositor",           "Chrome_ChildIOThread",
    "ThreadPoolForegroundWorker", "ThreadPoolBackgroundWorker",
    "CompositorTileWorker", "DedicatedWorker thread", "VizCompositorThread",
    "ThreadPoolServiceThread", "Media",
};
static const char *const async_names[] = {
    "ResourceLoad", "Navigation", "v8.compileModule", "LongTask",
    "PipelineReporter", "ScrollUpdate", "EventLatency", "Graphics.Pipeline",
};
static const char *const counter_names[] = {
    "UpdateCounters", "JSHeap", "GPUMemory", "cc::LayerTreeHostImpl", "ProcessPriority",
};
static const char *const series_names[] = {
    "jsHeapSizeUsed", "jsHeapSizeTotal", "documents", "nodes", "jsEventListeners",
    "allocated", "used", "tiles", "value",
};
static const char *const src_files[] = {
    "../../base/task/sequence_manager/task_queue_impl.cc",
    "../../cc/trees/layer_tree_host_impl.cc",
    "../../third_party/blink/renderer/core/frame/local_frame.cc",
    "../../services/network/url_loader.cc",
    "../../gpu/ipc/service/gpu_channel.cc",
    "../../mojo/public/cpp/bindings/lib/connector.cc",
    "../../content/renderer/render_thread_impl.cc",
};
static const char *const words[] = {
    "layout", "paint", "frame", "style", "render", "worker", "module", "script",
    "canvas", "buffer", "tile", "image", "decode", "resource", "network", "cache",
};

/* --- state --------------------------------------------------------------- */

/* One recorded event, waiting in its thread's chunk. */
typedef struct chunk_buf {
  GString *text; /* events, each ",\n{...}" */
  unsigned count;
  unsigned limit; /* events per chunk: 20-60 */
} chunk_buf;

typedef struct thread {
  uint32_t process; /* index */
  int64_t tid;
  const char *name;
  int64_t now_ns;    /* when the thread is free for its next task */
  int64_t origin_ns; /* thread time counts from here */
  unsigned weight;   /* how busy: relative share of tasks */
  bool thread_time;  /* writes tts/tdur */
  chunk_buf chunk;
} thread;

typedef struct process {
  int64_t pid;
  const char *name;
  uint32_t first_thread, n_threads;
} process;

typedef struct open_async {
  uint32_t process;
  uint64_t id;
  uint8_t id_form; /* 0 "id" hex string, 1 "id" number, 2 id2.local, 3 id2.global */
  uint8_t name;
  uint8_t category;
  int64_t begin_ns;
  int64_t last_ns; /* of its latest event: the next comes after */
  unsigned steps;
} open_async;

typedef struct open_flow {
  uint64_t id;
  uint8_t name;
  bool v2;
  int64_t start_ns;
  int64_t last_ns; /* of its latest event: the next comes after */
  unsigned steps;
} open_flow;

typedef struct gen {
  FILE *out;
  rng r;
  uint64_t budget;  /* traceEvents entries still to record */
  uint64_t system_lines;
  bool wrote_event;
  process processes[PROCESSES];
  thread *threads;
  size_t n_threads;
  uint64_t total_weight;
  char *names[NAMES];
  GArray *asyncs; /* open_async */
  GArray *flows;  /* open_flow */
  uint64_t next_id;
  GString *ev;   /* the event being built */
  GString *args; /* its args */
  bool failed;
} gen;

/* --- output -------------------------------------------------------------- */

/* The shortest text of `ns` in µs with up to three decimals, as a double
 * printer writes it: 12.5, 12.25, 12.125, 12. */
static void put_us(GString *s, const char *key, int64_t ns) {
  int64_t whole = ns / 1000, frac = ns % 1000;
  if (frac < 0) {
    frac += 1000;
    whole -= 1;
  }
  g_string_append_printf(s, ",\"%s\":%" PRId64, key, whole);
  if (frac == 0)
    return;
  char digits[4];
  g_snprintf(digits, sizeof digits, "%03" PRId64, frac);
  int n = 3;
  while (n > 0 && digits[n - 1] == '0')
    n--;
  g_string_append_c(s, '.');
  g_string_append_len(s, digits, n);
}

static void put_str(GString *s, const char *key, const char *value) {
  g_string_append_printf(s, ",\"%s\":\"%s\"", key, value);
}

/* Appends the finished event to its thread's chunk; a full chunk goes to
 * the file. */
static void chunk_flush(gen *g, chunk_buf *c) {
  if (c->count == 0)
    return;
  const char *text = c->text->str;
  size_t len = c->text->len;
  if (!g->wrote_event) { /* the first event has no comma before it */
    text++;
    len--;
  }
  if (fwrite(text, 1, len, g->out) != len)
    g->failed = true;
  g->wrote_event = true;
  g_string_truncate(c->text, 0);
  c->count = 0;
  c->limit = 20 + (unsigned)below(&g->r, 41);
}

/* Starts an event of thread `t` (NULL: a process-wide record written by
 * the process' main thread): `{"pid":..,"tid":..,"ts":..,"ph":".."`. */
static void ev_begin(gen *g, const process *p, const thread *t, int64_t ts, const char *ph) {
  g_string_truncate(g->ev, 0);
  g_string_truncate(g->args, 0);
  g_string_append_printf(g->ev, "{\"pid\":%" PRId64 ",\"tid\":%" PRId64, p->pid, t->tid);
  put_us(g->ev, "ts", ts);
  g_string_append_printf(g->ev, ",\"ph\":\"%s\"", ph);
}

static void ev_end(gen *g, thread *t) {
  if (g->args->len)
    g_string_append_printf(g->ev, ",\"args\":{%s}", g->args->str);
  g_string_append_c(g->ev, '}');
  chunk_buf *c = &t->chunk;
  g_string_append(c->text, ",\n");
  g_string_append_len(c->text, g->ev->str, (gssize)g->ev->len);
  c->count++;
  g->budget--;
  if (c->count >= c->limit)
    chunk_flush(g, c);
}

/* --- args ------------------------------------------------------------------ */

static void put_word_run(gen *g, GString *s, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    if (i)
      g_string_append_c(s, i % 7 == 0 ? '/' : '-');
    g_string_append(s, words[below(&g->r, G_N_ELEMENTS(words))]);
  }
}

static void put_url(gen *g, GString *s) {
  g_string_append(s, "https://");
  put_word_run(g, s, 2);
  g_string_append(s, ".example.com/");
  put_word_run(g, s, 1 + (unsigned)below(&g->r, 3));
  g_string_append_printf(s, ".js?v=%" PRIu64, below(&g->r, 1000000));
}

/* A long string: style sheet text, a serialized selector list, a URL list
 * (100-2000 bytes, with escapes now and then). */
static void put_long_text(gen *g, GString *s) {
  unsigned target = 200 + (unsigned)below(&g->r, 1000);
  size_t start = s->len;
  while (s->len - start < target) {
    g_string_append_printf(s, ".%s-%s > div:nth-child(%" PRIu64 ") { margin: %" PRIu64 "px; }",
                           words[below(&g->r, G_N_ELEMENTS(words))],
                           words[below(&g->r, G_N_ELEMENTS(words))], below(&g->r, 20),
                           below(&g->r, 64));
    if (chance(&g->r, 150))
      g_string_append(s, "\\n");
    if (chance(&g->r, 50))
      g_string_append(s, "\\\"quoted\\\"");
  }
}

static void put_stack(gen *g, GString *s, unsigned frames) {
  g_string_append(s, "[");
  for (unsigned i = 0; i < frames; i++) {
    if (i)
      g_string_append_c(s, ',');
    g_string_append_printf(s, "{\"functionName\":\"%s%" PRIu64 "\",\"scriptId\":\"%" PRIu64
                              "\",\"url\":\"",
                           words[below(&g->r, G_N_ELEMENTS(words))], below(&g->r, 500),
                           below(&g->r, 300));
    put_url(g, s);
    g_string_append_printf(s, "\",\"lineNumber\":%" PRIu64 ",\"columnNumber\":%" PRIu64 "}",
                           below(&g->r, 20000), below(&g->r, 200));
  }
  g_string_append(s, "]");
}

/* Args of a slice: about half of them have some. */
static void slice_args(gen *g, unsigned name) {
  GString *a = g->args;
  rng *r = &g->r;
  if (!chance(r, 480))
    return;
  unsigned shape = (unsigned)below(r, 100);
  if (shape < 40) { /* toplevel tasks: the posting location */
    g_string_append_printf(a, "\"src_file\":\"%s\",\"src_func\":\"%s\"",
                           src_files[below(r, G_N_ELEMENTS(src_files))],
                           actions[below(r, G_N_ELEMENTS(actions))] + 2);
  } else if (shape < 60) { /* DevTools' data dict */
    g_string_append_printf(a, "\"data\":{\"frame\":\"%016" PRIX64 "\",\"url\":\"", rnext(r));
    put_url(g, a);
    g_string_append_printf(a, "\",\"lineNumber\":%" PRIu64 ",\"columnNumber\":%" PRIu64
                              ",\"functionName\":\"%s\"}",
                           below(r, 20000), below(r, 120), words[name % G_N_ELEMENTS(words)]);
  } else if (shape < 68) { /* with a stack trace array */
    g_string_append(a, "\"data\":{\"stackTrace\":");
    put_stack(g, a, 1 + (unsigned)below(r, 3));
    g_string_append_printf(a, ",\"priority\":\"%s\",\"requestId\":\"%" PRIu64 ".%" PRIu64 "\"}",
                           chance(r, 500) ? "High" : "Low", below(r, 100000), below(r, 1000));
  } else if (shape < 84) { /* numbers and flags */
    g_string_append_printf(a, "\"count\":%" PRIu64 ",\"ratio\":0.%03" PRIu64 ",\"sync\":%s",
                           below(r, 100000), below(r, 1000), chance(r, 500) ? "true" : "false");
  } else if (shape < 92) { /* rect arrays, nested */
    g_string_append(a, "\"data\":{\"clip\":[");
    for (unsigned i = 0; i < 8; i++)
      g_string_append_printf(a, "%s%" PRIu64, i ? "," : "", below(r, 2000));
    g_string_append_printf(a, "],\"layerId\":%" PRIu64 ",\"nodeId\":%" PRIu64
                              ",\"dirty\":[[0,0,%" PRIu64 ",%" PRIu64 "],[%" PRIu64 ",0,64,64]]}",
                           below(r, 300), below(r, 100000), below(r, 1920), below(r, 1080),
                           below(r, 1000));
  } else if (shape < 94) { /* a long string */
    g_string_append(a, "\"data\":{\"styleSheetUrl\":\"");
    put_url(g, a);
    g_string_append(a, "\",\"text\":\"");
    put_long_text(g, a);
    g_string_append(a, "\"}");
  } else { /* a chrome_* proto-converted dict */
    g_string_append_printf(a, "\"chrome_task_annotator\":{\"ipc_hash\":%" PRIu64
                              ",\"task_delay_us\":%" PRIu64 "},\"chrome_mojo_event_info\":{"
                              "\"mojo_interface_tag\":\"%s.mojom.%s\",\"is_reply\":%s}",
                           below(r, UINT32_MAX), below(r, 5000),
                           words[below(r, G_N_ELEMENTS(words))],
                           subjects[below(r, G_N_ELEMENTS(subjects))],
                           chance(r, 300) ? "true" : "false");
  }
}

/* --- events ---------------------------------------------------------------- */

static const char *pick_category(gen *g) {
  return categories[skewed(&g->r, G_N_ELEMENTS(categories))];
}

static int64_t thread_ns(const thread *t, int64_t ns) {
  return (ns - t->origin_ns) * 7 / 10;
}

static void write_instant(gen *g, thread *t, int64_t ts) {
  process *p = &g->processes[t->process];
  unsigned scope = (unsigned)below(&g->r, 100);
  bool perfetto = chance(&g->r, 150);
  ev_begin(g, p, t, ts, perfetto ? "I" : "i");
  put_str(g->ev, "cat", pick_category(g));
  put_str(g->ev, "name", g->names[skewed(&g->r, NAMES)]);
  put_str(g->ev, "s", scope < 80 ? "t" : scope < 96 ? "p" : "g");
  if (chance(&g->r, 300))
    g_string_append_printf(g->args, "\"data\":{\"type\":\"%s\",\"frame\":\"%016" PRIX64 "\"}",
                           words[below(&g->r, G_N_ELEMENTS(words))], rnext(&g->r));
  ev_end(g, t);
}

static void write_counter(gen *g, thread *t, int64_t ts) {
  process *p = &g->processes[t->process];
  unsigned which = (unsigned)below(&g->r, G_N_ELEMENTS(counter_names));
  ev_begin(g, p, t, ts, "C");
  put_str(g->ev, "cat", "disabled-by-default-devtools.timeline");
  put_str(g->ev, "name", counter_names[which]);
  unsigned series = 1 + (which + (unsigned)below(&g->r, 2)) % 4;
  for (unsigned i = 0; i < series; i++) {
    const char *key = series_names[(which * 2 + i) % G_N_ELEMENTS(series_names)];
    if (i % 2 == 0)
      g_string_append_printf(g->args, "%s\"%s\":%" PRIu64, i ? "," : "", key,
                             below(&g->r, 50000000));
    else
      g_string_append_printf(g->args, ",\"%s\":%" PRIu64 ".%02" PRIu64, key,
                             below(&g->r, 5000), below(&g->r, 100));
  }
  ev_end(g, t);
}

static void put_async_id(gen *g, const open_async *a) {
  switch (a->id_form) {
  case 0:
    g_string_append_printf(g->ev, ",\"id\":\"0x%" PRIx64 "\"", a->id);
    break;
  case 1:
    g_string_append_printf(g->ev, ",\"id\":%" PRIu64, a->id);
    break;
  case 2:
    g_string_append_printf(g->ev, ",\"id2\":{\"local\":\"0x%" PRIx64 "\"}", a->id);
    break;
  default:
    g_string_append_printf(g->ev, ",\"id2\":{\"global\":\"0x%" PRIx64 "\"}", a->id);
    break;
  }
}

static void write_async(gen *g, thread *t, int64_t ts, const open_async *a, const char *ph) {
  process *p = &g->processes[t->process];
  ev_begin(g, p, t, ts, ph);
  put_str(g->ev, "cat", categories[a->category]);
  put_str(g->ev, "name", async_names[a->name]);
  put_async_id(g, a);
  if (ph[0] == 'b' && chance(&g->r, 400)) {
    g_string_append(g->args, "\"data\":{\"url\":\"");
    put_url(g, g->args);
    g_string_append(g->args, "\"}");
  } else if (ph[0] == 'n') {
    g_string_append_printf(g->args, "\"step\":\"%s\"", words[below(&g->r, G_N_ELEMENTS(words))]);
  }
  ev_end(g, t);
}

/* Async work around `ts` on thread `t`: maybe begins one, maybe steps or
 * ends one of its process begun earlier. */
static void async_activity(gen *g, thread *t, int64_t ts) {
  if (g->budget < 8)
    return;
  GArray *open = g->asyncs;
  if (chance(&g->r, 350)) {
    open_async a = {
        .process = t->process,
        .id = g->next_id++ * 0x9e37u + 0x1000,
        .id_form = (uint8_t)below(&g->r, 4),
        .name = (uint8_t)below(&g->r, G_N_ELEMENTS(async_names)),
        .category = (uint8_t)skewed(&g->r, G_N_ELEMENTS(categories)),
        .begin_ns = ts,
        .last_ns = ts,
    };
    write_async(g, t, ts, &a, "b");
    g_array_append_val(open, a);
    return;
  }
  /* End or step one of this process's, begun before ts. */
  for (guint i = open->len; i-- > 0;) {
    open_async *a = &g_array_index(open, open_async, i);
    if (a->process != t->process || a->last_ns >= ts)
      continue;
    if (a->steps < 2 && chance(&g->r, 400)) {
      a->steps++;
      a->last_ns = ts;
      write_async(g, t, ts, a, "n");
    } else {
      open_async done = *a;
      write_async(g, t, ts, &done, "e");
      g_array_remove_index_fast(open, i);
    }
    return;
  }
}

static void write_flow_v1(gen *g, thread *t, int64_t ts, const open_flow *f, const char *ph) {
  process *p = &g->processes[t->process];
  ev_begin(g, p, t, ts, ph);
  put_str(g->ev, "cat", "disabled-by-default-toplevel.flow");
  put_str(g->ev, "name", f->name % 2 ? "MojoMessage" : "PostTask");
  g_string_append_printf(g->ev, ",\"id\":\"0x%" PRIx64 "\"", f->id);
  if (ph[0] == 'f')
    put_str(g->ev, "bp", "e");
  ev_end(g, t);
}

/* Flow v1 inside a slice that spans `ts`: may start one, or continue or
 * finish one that started earlier (on any thread). */
static void flow_v1_activity(gen *g, thread *t, int64_t ts) {
  if (g->budget < 8)
    return;
  GArray *flows = g->flows;
  for (guint i = flows->len; i-- > 0;) {
    open_flow *f = &g_array_index(flows, open_flow, i);
    if (f->v2 || f->last_ns >= ts)
      continue;
    open_flow done = *f;
    if (f->steps < 1 && chance(&g->r, 300)) {
      f->steps++;
      f->last_ns = ts;
      write_flow_v1(g, t, ts, &done, "t");
    } else {
      write_flow_v1(g, t, ts, &done, "f");
      g_array_remove_index_fast(flows, i);
    }
    return;
  }
  open_flow f = {.id = g->next_id++ * 0x10001u, .name = (uint8_t)below(&g->r, 2),
                 .start_ns = ts, .last_ns = ts};
  write_flow_v1(g, t, ts, &f, "s");
  g_array_append_val(flows, f);
}

/* The flow v2 keys of a complete event that begins at `start`: maybe the
 * end of an earlier one, maybe the start of a new one. */
static void flow_v2_keys(gen *g, int64_t start) {
  GArray *flows = g->flows;
  if (g->budget < 8)
    return;
  for (guint i = 0; i < flows->len; i++) {
    open_flow *f = &g_array_index(flows, open_flow, i);
    if (!f->v2 || f->last_ns >= start)
      continue;
    g_string_append_printf(g->ev, ",\"bind_id\":\"0x%" PRIx64 "\",\"flow_in\":true", f->id);
    g_array_remove_index_fast(flows, i);
    return;
  }
  open_flow f = {.id = g->next_id++ * 0x10001u + 7, .v2 = true, .start_ns = start,
                 .last_ns = start};
  g_string_append_printf(g->ev, ",\"bind_id\":\"0x%" PRIx64 "\",\"flow_out\":true", f.id);
  g_array_append_val(flows, f);
}

/* Records a slice over [start, start + dur) on `t` and, budget permitting,
 * its children; complete events are recorded when they end, so after
 * their children. The caller guarantees g->budget >= 1. */
static void write_slice(gen *g, thread *t, int64_t start, int64_t dur, int depth) {
  process *p = &g->processes[t->process];
  rng *r = &g->r;
  /* B/E only at the top: TRACE_EVENT_BEGIN/END around a task. */
  bool pair = depth == 0 && g->budget >= 3 && chance(r, 60);
  unsigned name = (unsigned)skewed(r, NAMES);
  const char *cat = pick_category(g);
  if (pair) {
    ev_begin(g, p, t, start, "B");
    put_str(g->ev, "cat", cat);
    put_str(g->ev, "name", g->names[name]);
    if (t->thread_time)
      put_us(g->ev, "tts", thread_ns(t, start));
    slice_args(g, name);
    ev_end(g, t);
  }

  int64_t end = start + dur, cursor = start;
  uint64_t children = depth < MAX_DEPTH ? below(r, depth == 0 ? 6 : 4) : 0;
  for (uint64_t i = 0; i < children && g->budget >= 2 + (pair ? 1 : 0); i++) {
    int64_t share = (end - cursor) / (int64_t)(children - i);
    if (share < 4000)
      break;
    /* A child never starts with its parent: recorded first, it would come
     * first among equal timestamps and its parent would not nest. */
    int64_t gap = 1 + (int64_t)below(r, (uint64_t)share / 4);
    int64_t child = 1 + (int64_t)below(r, (uint64_t)(share - gap - 1));
    if (g->budget >= 4 + (pair ? 1 : 0)) {
      unsigned what = (unsigned)below(r, 1000);
      int64_t at = cursor + gap / 2;
      if (what < 60)
        write_instant(g, t, at);
      else if (what < 100)
        async_activity(g, t, at);
      else if (what < 120 && depth > 0) /* inside this slice */
        flow_v1_activity(g, t, at == start ? at + 1 : at);
      else if (what < 150 && depth == 0)
        write_counter(g, t, at);
    }
    if (g->budget < 2 + (pair ? 1 : 0))
      break;
    write_slice(g, t, cursor + gap, child, depth + 1);
    cursor += gap + child;
  }

  if (pair) {
    ev_begin(g, p, t, end, "E");
    if (t->thread_time)
      put_us(g->ev, "tts", thread_ns(t, end));
    if (chance(r, 200))
      g_string_append_printf(g->args, "\"result\":%" PRIu64, below(r, 3));
    ev_end(g, t);
    return;
  }
  ev_begin(g, p, t, start, "X");
  put_str(g->ev, "cat", cat);
  put_str(g->ev, "name", g->names[name]);
  put_us(g->ev, "dur", dur);
  if (t->thread_time) {
    put_us(g->ev, "tts", thread_ns(t, start));
    put_us(g->ev, "tdur", dur * 7 / 10);
  }
  if (chance(r, 40))
    flow_v2_keys(g, start);
  slice_args(g, name);
  ev_end(g, t);
}

/* The next task of the thread picked by weight. */
static void write_task(gen *g) {
  uint64_t pick = below(&g->r, g->total_weight);
  thread *t = g->threads;
  for (size_t i = 0; i < g->n_threads; i++) {
    if (pick < g->threads[i].weight) {
      t = &g->threads[i];
      break;
    }
    pick -= g->threads[i].weight;
  }
  rng *r = &g->r;
  /* Gaps of 5 µs - 2 ms; durations from ~5 µs to ~80 ms, one task in 400
   * a long one of 100-500 ms (a long task, a GC, a big layout). */
  int64_t gap = 5000 + (int64_t)below(r, chance(r, 200) ? 2000000 : 200000);
  int64_t dur = (int64_t)(5000u << below(r, 14));
  dur += (int64_t)below(r, (uint64_t)dur) + (int64_t)below(r, 1000);
  if (chance(r, 3))
    dur = 100000000 + (int64_t)below(r, 400000000);
  int64_t start = t->now_ns + gap;
  write_slice(g, t, start, dur, 0);
  t->now_ns = start + dur;
}

/* --- metadata and the other top-level keys ----------------------------------- */

static void write_metadata_event(gen *g, process *p, thread *t, const char *what,
                                 const char *args_fmt, ...) G_GNUC_PRINTF(5, 6);

static void write_metadata_event(gen *g, process *p, thread *t, const char *what,
                                 const char *args_fmt, ...) {
  ev_begin(g, p, t, 0, "M");
  put_str(g->ev, "cat", "__metadata");
  put_str(g->ev, "name", what);
  va_list ap;
  va_start(ap, args_fmt);
  g_string_append_vprintf(g->args, args_fmt, ap);
  va_end(ap);
  ev_end(g, t);
}

static void write_all_metadata(gen *g) {
  for (uint32_t i = 0; i < PROCESSES && g->budget > 0; i++) {
    process *p = &g->processes[i];
    thread *main = &g->threads[p->first_thread];
    write_metadata_event(g, p, main, "process_name", "\"name\":\"%s\"", p->name);
    if (g->budget > 0 && strcmp(p->name, "Renderer") == 0)
      write_metadata_event(g, p, main, "process_labels", "\"labels\":\"%s.example.com\"",
                           words[i % G_N_ELEMENTS(words)]);
    if (g->budget > 0)
      write_metadata_event(g, p, main, "process_sort_index", "\"sort_index\":%u", i);
  }
  for (size_t i = 0; i < g->n_threads && g->budget > 0; i++) {
    thread *t = &g->threads[i];
    process *p = &g->processes[t->process];
    write_metadata_event(g, p, t, "thread_name", "\"name\":\"%s\"", t->name);
    if (g->budget > 0 && t->weight > 20)
      write_metadata_event(g, p, t, "thread_sort_index", "\"sort_index\":%d",
                           (int)(i - p->first_thread) - 5);
  }
  for (size_t i = 0; i < g->n_threads; i++)
    chunk_flush(g, &g->threads[i].chunk);
}

/* The systemTraceEvents string: an ftrace text body (escaped as a JSON
 * string: "\n" between lines) of sched_switch, sched_wakeup and
 * tracing_mark_write lines over 8 cpus, on the same µs timeline. */
static void write_system_trace(gen *g, int64_t base_ns) {
  GString *s = g_string_sized_new(1 << 16);
  g_string_append(s, ",\n\"systemTraceEvents\":\"# tracer: nop\\n#\\n"
                     "#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\\n"
                     "#              | |       |   ||||       |         |\\n");
  int64_t ts = base_ns;
  int64_t running[8] = {0};
  for (uint64_t i = 0; i < g->system_lines; i++) {
    ts += 1000 + (int64_t)below(&g->r, 40000);
    unsigned cpu = (unsigned)below(&g->r, 8);
    const thread *t = &g->threads[below(&g->r, g->n_threads)];
    int64_t pid = g->processes[t->process].pid;
    char stamp[48];
    g_snprintf(stamp, sizeof stamp, "%" PRId64 ".%06" PRId64, ts / 1000000000,
               (ts / 1000) % 1000000);
    unsigned kind = (unsigned)below(&g->r, 3);
    if (kind == 0) {
      g_string_append_printf(s,
                             "%16s-%-5" PRId64 " [%03u] d..2 %s: sched_switch: prev_comm=%s "
                             "prev_pid=%" PRId64 " prev_prio=120 prev_state=S ==> next_comm=%s "
                             "next_pid=%" PRId64 " next_prio=120\\n",
                             "kworker", running[cpu], cpu, stamp, "kworker", running[cpu],
                             "chrome", t->tid);
      running[cpu] = t->tid;
    } else if (kind == 1) {
      g_string_append_printf(s,
                             "%16s-%-5" PRId64 " [%03u] d..4 %s: sched_wakeup: comm=chrome "
                             "pid=%" PRId64 " prio=120 target_cpu=%03u\\n",
                             "chrome", running[cpu], cpu, stamp, t->tid, (cpu + 1) % 8);
    } else {
      g_string_append_printf(s,
                             "%16s-%-5" PRId64 " [%03u] ...1 %s: tracing_mark_write: "
                             "C|%" PRId64 "|%s|%" PRIu64 "\\n",
                             "chrome", t->tid, cpu, stamp, pid,
                             series_names[below(&g->r, G_N_ELEMENTS(series_names))],
                             below(&g->r, 100000));
    }
  }
  g_string_append(s, "\"");
  if (fwrite(s->str, 1, s->len, g->out) != s->len)
    g->failed = true;
  g_string_free(s, TRUE);
}

static void write_trailer(gen *g, const gen_chrome_json_options *options) {
  fprintf(g->out,
          ",\n\"metadata\":{\"clock-domain\":\"LINUX_CLOCK_MONOTONIC\","
          "\"command_line\":\"/opt/google/chrome/chrome --enable-tracing "
          "--trace-startup-file=/tmp/trace.json\",\"cpu-brand\":\"Generic CPU @ 2.40GHz\","
          "\"gpu-driver\":\"535.129.03\",\"highres-ticks\":true,\"network-type\":\"Ethernet\","
          "\"num-cpus\":8,\"os-name\":\"Linux\",\"product-version\":\"Chrome/120.0.6099.109\","
          "\"trace-capture-datetime\":\"2024-1-5 10:11:12\","
          "\"trace-config\":\"{\\\"enable_argument_filter\\\":false,\\\"included_categories\\\":"
          "[\\\"*\\\",\\\"disabled-by-default-devtools.timeline\\\"],\\\"record_mode\\\":"
          "\\\"record-until-full\\\"}\",\"field-trials\":[\"1e2f3a4b-5c6d7e8f\",\"2a3b4c5d-6e7f8091\"],"
          "\"gpu\":{\"gpu_count\":1,\"driver_info\":{\"vendor_id\":4318,\"device_id\":7942}},"
          "\"generator\":\"tracemerge gen_chrome_json --realistic\",\"events\":%" PRIu64
          ",\"seed\":%" PRIu64 "}}\n",
          options->events, options->seed);
}

bool gen_chrome_json_write_realistic(FILE *out, const gen_chrome_json_options *options,
                                     GError **error) {
  gen g = {.out = out, .r = {options->seed ^ 0x5eedf00dULL}};
  g.system_lines = options->events / SYSTEM_SHARE;
  g.budget = options->events - g.system_lines;
  g.ev = g_string_sized_new(4096);
  g.args = g_string_sized_new(4096);
  g.asyncs = g_array_new(FALSE, FALSE, sizeof(open_async));
  g.flows = g_array_new(FALSE, FALSE, sizeof(open_flow));
  g.next_id = 1;
  for (unsigned i = 0; i < NAMES; i++) {
    const char *subject = subjects[below(&g.r, G_N_ELEMENTS(subjects))];
    const char *action = actions[below(&g.r, G_N_ELEMENTS(actions))];
    g.names[i] = i % 5 == 4 ? g_strdup_printf("%s%s/%u", subject, action, i)
                            : g_strconcat(subject, action, NULL);
  }

  /* Processes and their threads: main threads and IO busy, pools quiet. */
  GArray *threads = g_array_new(FALSE, TRUE, sizeof(thread));
  const int64_t base_ns = INT64_C(372811930000000);
  for (uint32_t i = 0; i < PROCESSES; i++) {
    process *p = &g.processes[i];
    /* Distinct pids, and tids (below pid + 700) that no other process has. */
    p->pid = 10000 + 2437 * (int64_t)i + (int64_t)below(&g.r, 1000);
    p->name = process_kinds[i % G_N_ELEMENTS(process_kinds)];
    p->first_thread = threads->len;
    p->n_threads = 4 + (uint32_t)below(&g.r, 14);
    for (uint32_t k = 0; k < p->n_threads; k++) {
      thread t = {.process = i};
      t.tid = k == 0 ? p->pid : p->pid + 37 * (int64_t)k + (int64_t)below(&g.r, 30);
      t.name = thread_kinds[k < 3 ? k : 3 + below(&g.r, G_N_ELEMENTS(thread_kinds) - 3)];
      t.origin_ns = base_ns + (int64_t)below(&g.r, 50000000);
      t.now_ns = t.origin_ns;
      t.weight = k == 0 ? 100 : k < 3 ? 40 : 1 + (unsigned)below(&g.r, 8);
      t.thread_time = k == 0;
      t.chunk.text = g_string_sized_new(8192);
      t.chunk.limit = 20 + (unsigned)below(&g.r, 41);
      g_array_append_val(threads, t);
    }
  }
  g.n_threads = threads->len;
  g.threads = (thread *)(void *)g_array_free(threads, FALSE);
  for (size_t i = 0; i < g.n_threads; i++)
    g.total_weight += g.threads[i].weight;

  fputs("{\"traceEvents\":[", out);
  /* Metadata events (about 2 per thread) close the array. */
  uint64_t metadata = (uint64_t)g.n_threads * 2 + PROCESSES * 3;
  while (g.budget > metadata && !g.failed)
    write_task(&g);
  /* What is still open ends now, in the order it began. */
  thread *closer = &g.threads[0];
  int64_t last_ns = 0;
  for (size_t i = 0; i < g.n_threads; i++)
    last_ns = MAX(last_ns, g.threads[i].now_ns);
  for (guint i = 0; i < g.asyncs->len && g.budget > 0; i++) {
    open_async *a = &g_array_index(g.asyncs, open_async, i);
    write_async(&g, &g.threads[g.processes[a->process].first_thread], last_ns + 1, a, "e");
  }
  for (guint i = 0; i < g.flows->len && g.budget > 0; i++) {
    open_flow *f = &g_array_index(g.flows, open_flow, i);
    int64_t at = last_ns + 10 + (int64_t)i * 10;
    /* A last task to carry the flow's end. */
    ev_begin(&g, &g.processes[0], closer, at, "X");
    put_str(g.ev, "cat", "toplevel");
    put_str(g.ev, "name", "ThreadControllerImpl::RunTask");
    put_us(g.ev, "dur", 5);
    if (f->v2) {
      g_string_append_printf(g.ev, ",\"bind_id\":\"0x%" PRIx64 "\",\"flow_in\":true", f->id);
      ev_end(&g, closer);
    } else {
      ev_end(&g, closer);
      if (g.budget > 0)
        write_flow_v1(&g, closer, at + 1, f, "f");
    }
  }
  while (g.budget > 0 && !g.failed) {
    if (g.budget > metadata) {
      /* Only if the closing ran over: more plain instants. */
      write_instant(&g, closer, last_ns + 100000);
      continue;
    }
    write_all_metadata(&g);
    while (g.budget > 0) /* fewer events than metadata: pad with instants */
      write_instant(&g, closer, last_ns + 200000);
  }
  for (size_t i = 0; i < g.n_threads; i++)
    chunk_flush(&g, &g.threads[i].chunk);
  fputs("\n]", out);
  write_system_trace(&g, base_ns);
  write_trailer(&g, options);

  for (size_t i = 0; i < g.n_threads; i++)
    g_string_free(g.threads[i].chunk.text, TRUE);
  g_free(g.threads);
  for (unsigned i = 0; i < NAMES; i++)
    g_free(g.names[i]);
  g_array_free(g.asyncs, TRUE);
  g_array_free(g.flows, TRUE);
  g_string_free(g.ev, TRUE);
  g_string_free(g.args, TRUE);
  if (g.failed || fflush(out) != 0 || ferror(out)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO,
                "gen_chrome_json: write error: %s", g_strerror(errno));
    return false;
  }
  return true;
}
