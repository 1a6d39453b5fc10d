/*
 * Synthetic Chrome JSON traces for the benchmark (see gen_chrome_json.h).
 *
 * Shape, modelled on what Chrome's tracing and DevTools save: keys in
 * alphabetical order (so "args" comes before "ph"), mostly complete "X"
 * events in begin order per thread, some B/E pairs (E without a name, as
 * Chrome writes them), thread-scoped "i" instants, per-process "C"
 * counters, "M" process/thread names first, args objects with a few keys
 * (some nested, one with an array), ~300 names with a skewed frequency.
 * Half of the processes write whole-µs timestamps, the others sub-µs
 * fractions ("1234.567"), as Perfetto-converted traces do.
 *
 * Invariant: every time is generated in ticks of its thread's quantum
 * (1000 ns for whole-µs threads, 1 ns otherwise), so the printed µs values
 * nest exactly as generated; `left` counts events still to write and never
 * drops below the E events promised by open B events.
 *
 * Built twice: into the gen_chrome_json tool (GEN_CHROME_JSON_MAIN) and
 * into the benchmark driver.
 */
#include "gen_chrome_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Defaults: see gen_chrome_json_options_init(). */
enum {
  DEFAULT_PROCESSES = 8,
  DEFAULT_THREADS = 16,
  MAX_DEPTH = 6,
};

typedef struct gen_rng {
  uint64_t state;
} gen_rng;

/* splitmix64: small, fast and the same on every platform. */
static uint64_t rng_next(gen_rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static uint64_t rng_below(gen_rng *r, uint64_t n) {
  return n == 0 ? 0 : rng_next(r) % n;
}

static bool rng_percent(gen_rng *r, unsigned percent) {
  return rng_below(r, 100) < percent;
}

typedef struct gen_thread {
  int64_t pid;
  int64_t tid;
  int64_t tick_ns;   /* 1000: whole-µs timestamps; 1: sub-µs fractions */
  int64_t now;       /* ticks: end of the last top-level slice */
  int64_t origin;    /* ticks: when the thread started running */
  unsigned busy_pct; /* how often this thread gets the next task */
} gen_thread;

typedef struct gen {
  FILE *out;
  GString *line;
  gen_rng rng;
  uint64_t left;         /* events still to write */
  uint64_t pending_ends; /* E events owed by open B events */
  bool wrote_event;
  gen_thread *threads;
  size_t n_threads;
  GPtrArray *names; /* the slice name vocabulary */
} gen;

static const char *const name_subjects[] = {
    "ThreadControllerImpl",
    "SequenceManager",
    "MessageLoop",
    "V8",
    "Blink",
    "LayoutView",
    "Paint",
    "Compositor",
    "Raster",
    "GpuChannel",
    "Viz",
    "IPC",
    "Net",
    "URLLoader",
    "Scheduler",
    "StyleEngine",
    "Document",
    "LocalFrame",
    "Scroll",
    "Animation",
};
static const char *const name_actions[] = {
    "::RunTask", "::DoWork",  "::Update", "::Commit",   "::Draw",
    "::Execute", "::Flush",   "::Layout", "::Recalc",   "::Dispatch",
    "::Notify",  "::Prepare", "::Finish", "::Schedule", "::Process",
};
static const char *const categories[] = {
    "toplevel",
    "v8",
    "blink",
    "cc",
    "gpu",
    "viz",
    "ipc",
    "net",
    "loading",
    "disabled-by-default-devtools.timeline",
    "benchmark,rail",
    "renderer.scheduler",
};
static const char *const process_names[] = {
    "Browser",  "GPU Process", "Renderer",  "Utility: Network Service",
    "Renderer", "Renderer",    "Extension", "Utility: Audio Service",
};
static const char *const thread_names[] = {
    "CrMainThread",
    "Compositor",
    "Chrome_ChildIOThread",
    "ThreadPoolForegroundWorker",
    "ThreadPoolBackgroundWorker",
    "VizCompositorThread",
    "CompositorTileWorker",
    "DedicatedWorker thread",
};
static const char *const counter_names[] = {
    "JSHeapUsedSize", "Nodes", "Listeners", "Documents", "GPUMemory",
};
static const char *const src_files[] = {
    "../../base/task/sequence_manager/task_queue_impl.cc",
    "../../cc/trees/layer_tree_host_impl.cc",
    "../../third_party/blink/renderer/core/frame/local_frame.cc",
    "../../services/network/url_loader.cc",
    "../../gpu/ipc/service/gpu_channel.cc",
};

/* --- output -------------------------------------------------------------- */

/* Appends `,"key":<µs>` for `ticks` of thread `t`. */
static void put_time(GString *s, const char *key, const gen_thread *t,
                     int64_t ticks) {
  int64_t ns = ticks * t->tick_ns;
  g_string_append_printf(s, ",\"%s\":%" PRId64, key, ns / 1000);
  if (ns % 1000 != 0)
    g_string_append_printf(s, ".%03" PRId64, ns % 1000);
}

static void put_pid_tid_ts(GString *s, const gen_thread *t, int64_t ts,
                           bool with_tid) {
  g_string_append_printf(s, ",\"pid\":%" PRId64, t->pid);
  if (with_tid)
    g_string_append_printf(s, ",\"tid\":%" PRId64, t->tid);
  put_time(s, "ts", t, ts);
}

/* Starts an event: `{"args":...` follows the caller's `args` text (may be
 * NULL: no args key). */
static void event_begin(gen *g, const char *args) {
  g_string_truncate(g->line, 0);
  g_string_append(g->line, g->wrote_event ? ",\n{" : "\n{");
  if (args != NULL)
    g_string_append_printf(g->line, "\"args\":%s,", args);
}

static void event_end(gen *g) {
  g_string_append_c(g->line, '}');
  fwrite(g->line->str, 1, g->line->len, g->out);
  g->wrote_event = true;
  g->left--;
}

/* Events that may still be started without breaking a promised E. */
static uint64_t gen_free(const gen *g) { return g->left - g->pending_ends; }

/* --- event kinds ---------------------------------------------------------- */

/* An "M" naming event; `index` > 0 is appended ("Compositor/1"). */
static void write_metadata(gen *g, const gen_thread *t, const char *what,
                           const char *name, int index) {
  GString *args = g_string_new(NULL);
  if (index > 0)
    g_string_printf(args, "{\"name\":\"%s/%d\"}", name, index);
  else
    g_string_printf(args, "{\"name\":\"%s\"}", name);
  event_begin(g, args->str);
  g_string_append_printf(g->line,
                         "\"cat\":\"__metadata\",\"name\":\"%s\","
                         "\"ph\":\"M\"",
                         what);
  put_pid_tid_ts(g->line, t, 0, true);
  event_end(g);
  g_string_free(args, TRUE);
}

/* Some slices carry args, in a few shapes Chrome commonly writes. */
static char *slice_args(gen *g) {
  if (!rng_percent(&g->rng, 30))
    return NULL;
  gen_rng *r = &g->rng;
  switch (rng_below(r, 4)) {
  case 0:
    return g_strdup_printf(
        "{\"src_file\":\"%s\",\"src_func\":\"%s\"}",
        src_files[rng_below(r, G_N_ELEMENTS(src_files))],
        name_actions[rng_below(r, G_N_ELEMENTS(name_actions))] + 2);
  case 1:
    return g_strdup_printf(
        "{\"data\":{\"frame\":\"%016" PRIX64 "\",\"url\":\"https://example."
        "com/app/%" PRIu64 ".js\",\"lineNumber\":%" PRIu64
        ",\"columnNumber\":%" PRIu64 "}}",
        rng_next(r), rng_below(r, 500), rng_below(r, 20000), rng_below(r, 120));
  case 2:
    return g_strdup_printf("{\"count\":%" PRIu64 ",\"ratio\":0.%03" PRIu64
                           ",\"sync\":%s}",
                           rng_below(r, 100000), rng_below(r, 1000),
                           rng_percent(r, 50) ? "true" : "false");
  default:
    return g_strdup_printf(
        "{\"data\":{\"stackTrace\":[{\"functionName\":\"f%" PRIu64
        "\",\"lineNumber\":%" PRIu64 "},{\"functionName\":\"g%" PRIu64
        "\",\"lineNumber\":%" PRIu64 "}],\"priority\":%" PRIu64 "}}",
        rng_below(r, 300), rng_below(r, 9000), rng_below(r, 300),
        rng_below(r, 9000), rng_below(r, 5));
  }
}

static const char *pick_name(gen *g) {
  /* Skewed: low indexes are much more frequent, as hot task names are. */
  uint64_t bound = rng_below(&g->rng, g->names->len) + 1;
  return g->names->pdata[rng_below(&g->rng, bound)];
}

static const char *pick_category(gen *g) {
  return categories[rng_below(&g->rng, G_N_ELEMENTS(categories))];
}

static void write_instant(gen *g, const gen_thread *t, int64_t ts) {
  event_begin(g, "{}");
  g_string_append_printf(g->line, "\"cat\":\"%s\",\"name\":\"%s\",\"ph\":\"i\"",
                         pick_category(g), pick_name(g));
  g_string_append_printf(g->line, ",\"pid\":%" PRId64 ",\"s\":\"t\"", t->pid);
  g_string_append_printf(g->line, ",\"tid\":%" PRId64, t->tid);
  put_time(g->line, "ts", t, ts);
  event_end(g);
}

static void write_counter(gen *g, const gen_thread *t, int64_t ts) {
  const char *name =
      counter_names[rng_below(&g->rng, G_N_ELEMENTS(counter_names))];
  char *args;
  if (strcmp(name, "GPUMemory") == 0)
    args = g_strdup_printf(
        "{\"allocated\":%" PRIu64 ",\"used\":%" PRIu64 ".%02" PRIu64 "}",
        rng_below(&g->rng, 1u << 30), rng_below(&g->rng, 1u << 29),
        rng_below(&g->rng, 100));
  else
    args =
        g_strdup_printf("{\"value\":%" PRIu64 "}", rng_below(&g->rng, 5000000));
  event_begin(g, args);
  g_string_append_printf(g->line,
                         "\"cat\":\"disabled-by-default-devtools.timeline\","
                         "\"name\":\"%s\",\"ph\":\"C\"",
                         name);
  put_pid_tid_ts(g->line, t, ts, true);
  event_end(g);
  g_free(args);
}

/* Thread CPU time runs at 70% of wall time from the thread's origin. */
static int64_t thread_time(const gen_thread *t, int64_t ticks) {
  return (ticks - t->origin) * 7 / 10;
}

static int64_t ticks_from_ns(const gen_thread *t, int64_t ns) {
  int64_t ticks = ns / t->tick_ns;
  return ticks > 0 ? ticks : 1;
}

/* Writes a slice over [start, start + dur) ticks on `t` and, budget
 * permitting, children nested inside it (with instants in the gaps).
 * The caller guarantees gen_free(g) >= 1. */
static void write_slice(gen *g, gen_thread *t, int64_t start, int64_t dur,
                        int depth) {
  bool pair = gen_free(g) >= 2 && rng_percent(&g->rng, 12);
  const char *name = pick_name(g);
  const char *cat = pick_category(g);
  char *args = slice_args(g);
  bool with_thread_time = rng_percent(&g->rng, 50);

  event_begin(g, args);
  g_string_append_printf(g->line, "\"cat\":\"%s\"", cat);
  if (!pair)
    put_time(g->line, "dur", t, dur);
  g_string_append_printf(g->line, ",\"name\":\"%s\",\"ph\":\"%s\"", name,
                         pair ? "B" : "X");
  g_string_append_printf(g->line, ",\"pid\":%" PRId64, t->pid);
  if (!pair && with_thread_time)
    put_time(g->line, "tdur", t, dur * 7 / 10);
  g_string_append_printf(g->line, ",\"tid\":%" PRId64, t->tid);
  put_time(g->line, "ts", t, start);
  if (with_thread_time)
    put_time(g->line, "tts", t, thread_time(t, start));
  event_end(g);
  g_free(args);
  if (pair)
    g->pending_ends++;

  int64_t end = start + dur;
  int64_t cursor = start;
  uint64_t children = depth < MAX_DEPTH ? rng_below(&g->rng, 5) : 0;
  for (uint64_t i = 0; i < children && gen_free(g) >= 1; i++) {
    /* Children get at least 2 µs each, whatever the thread's quantum. */
    int64_t share = (end - cursor) / (int64_t)(children - i);
    if (share < 2 || share * t->tick_ns < 2000)
      break;
    int64_t gap = (int64_t)rng_below(&g->rng, (uint64_t)share / 4 + 1);
    int64_t child_dur =
        1 + (int64_t)rng_below(&g->rng, (uint64_t)(share - gap - 1));
    if (gap >= 2 && gen_free(g) >= 2 && rng_percent(&g->rng, 6))
      write_instant(g, t, cursor + gap / 2);
    write_slice(g, t, cursor + gap, child_dur, depth + 1);
    cursor += gap + child_dur;
  }

  if (pair) {
    event_begin(g, NULL);
    g_string_append(g->line, "\"ph\":\"E\"");
    put_pid_tid_ts(g->line, t, end, true);
    if (with_thread_time)
      put_time(g->line, "tts", t, thread_time(t, end));
    g->pending_ends--;
    event_end(g);
  }
}

/* A top-level task on a thread picked with its business as weight. */
static void write_task(gen *g) {
  gen_thread *t = NULL;
  while (t == NULL) {
    gen_thread *candidate = &g->threads[rng_below(&g->rng, g->n_threads)];
    if (rng_percent(&g->rng, candidate->busy_pct))
      t = candidate;
  }
  /* Gaps of 5-300 µs; durations spread from ~10 µs to ~10 ms. */
  int64_t gap_ns = 5000 + (int64_t)rng_below(&g->rng, 295000);
  int64_t dur_ns = (int64_t)(10000u << rng_below(&g->rng, 10));
  dur_ns += (int64_t)rng_below(&g->rng, (uint64_t)dur_ns);
  int64_t start = t->now + ticks_from_ns(t, gap_ns);
  int64_t dur = ticks_from_ns(t, dur_ns);
  write_slice(g, t, start, dur, 0);
  t->now = start + dur;
  if (gen_free(g) >= 1 && rng_percent(&g->rng, 25))
    write_counter(g, t, t->now);
}

/* --- public -------------------------------------------------------------- */

void gen_chrome_json_options_init(gen_chrome_json_options *options) {
  *options = (gen_chrome_json_options){
      .events = 2000000,
      .seed = 1,
      .processes = DEFAULT_PROCESSES,
      .threads_per_process = DEFAULT_THREADS,
  };
}

bool gen_chrome_json_write(FILE *out, const gen_chrome_json_options *options,
                           GError **error) {
  if (options->processes == 0 || options->threads_per_process == 0) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                "gen_chrome_json: need at least one process and one thread");
    return false;
  }
  gen g = {
      .out = out,
      .line = g_string_sized_new(512),
      .rng = {options->seed},
      .left = options->events,
      .n_threads = (size_t)options->processes * options->threads_per_process,
      .names = g_ptr_array_new_with_free_func(g_free),
  };
  for (size_t s = 0; s < G_N_ELEMENTS(name_subjects); s++)
    for (size_t a = 0; a < G_N_ELEMENTS(name_actions); a++)
      g_ptr_array_add(g.names,
                      g_strconcat(name_subjects[s], name_actions[a], NULL));
  /* Shuffle so the frequent names are not all of one subject. */
  for (guint i = g.names->len - 1; i > 0; i--) {
    guint j = (guint)rng_below(&g.rng, (uint64_t)i + 1);
    gpointer tmp = g.names->pdata[i];
    g.names->pdata[i] = g.names->pdata[j];
    g.names->pdata[j] = tmp;
  }

  g.threads = g_new0(gen_thread, g.n_threads);
  /* A boot-relative monotonic clock, in µs, as Chrome on Linux writes. */
  const int64_t base_ns = INT64_C(372811930000000);
  for (uint32_t p = 0; p < options->processes; p++) {
    for (uint32_t i = 0; i < options->threads_per_process; i++) {
      gen_thread *t = &g.threads[p * options->threads_per_process + i];
      t->pid = 41000 + 131 * (int64_t)p;
      t->tid = i == 0 ? t->pid : t->pid + 1 + 7 * (int64_t)i;
      t->tick_ns = p % 2 == 0 ? 1000 : 1;
      t->origin = (base_ns + (int64_t)rng_below(&g.rng, 50000000)) / t->tick_ns;
      t->now = t->origin;
      t->busy_pct = i == 0 ? 100 : i < 3 ? 60 : 15;
    }
  }

  fputs("{\"traceEvents\":[", out);
  for (uint32_t p = 0; p < options->processes && g.left > 0; p++)
    write_metadata(&g, &g.threads[p * options->threads_per_process],
                   "process_name",
                   process_names[p % G_N_ELEMENTS(process_names)], 0);
  for (size_t i = 0; i < g.n_threads && g.left > 0; i++) {
    uint32_t in_process = (uint32_t)(i % options->threads_per_process);
    write_metadata(&g, &g.threads[i], "thread_name",
                   thread_names[in_process % G_N_ELEMENTS(thread_names)],
                   (int)(in_process / G_N_ELEMENTS(thread_names)));
  }
  while (g.left > 0)
    write_task(&g);
  fprintf(out,
          "\n],\n\"metadata\":{\"clock-domain\":\"LINUX_CLOCK_MONOTONIC\","
          "\"generator\":\"tracemerge gen_chrome_json\",\"events\":%" PRIu64
          ",\"seed\":%" PRIu64 "}}\n",
          options->events, options->seed);

  g_free(g.threads);
  g_ptr_array_free(g.names, TRUE);
  g_string_free(g.line, TRUE);
  if (fflush(out) != 0 || ferror(out)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO,
                "gen_chrome_json: write error: %s", g_strerror(errno));
    return false;
  }
  return true;
}

#ifdef GEN_CHROME_JSON_MAIN
int main(int argc, char **argv) {
  gen_chrome_json_options options;
  gen_chrome_json_options_init(&options);
  gint64 events = (gint64)options.events, seed = (gint64)options.seed;
  gint processes = (gint)options.processes;
  gint threads = (gint)options.threads_per_process;
  char *output = NULL;
  gboolean realistic = FALSE;
  GOptionEntry entries[] = {
      {"realistic", 'r', 0, G_OPTION_ARG_NONE, &realistic,
       "the realistic shape (see gen_chrome_json.h); default: the friendly one", NULL},
      {"events", 'n', 0, G_OPTION_ARG_INT64, &events,
       "traceEvents entries (default 2000000)", "N"},
      {"seed", 's', 0, G_OPTION_ARG_INT64, &seed, "random seed (default 1)",
       "S"},
      {"processes", 'p', 0, G_OPTION_ARG_INT, &processes,
       "processes (default 8)", "P"},
      {"threads", 't', 0, G_OPTION_ARG_INT, &threads,
       "threads per process (default 16)", "T"},
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
       "output file (default: stdout)", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GError *error = NULL;
  int status = 1;
  FILE *out = NULL;
  GOptionContext *context =
      g_option_context_new("- write a synthetic Chrome JSON trace");
  g_option_context_add_main_entries(context, entries, NULL);
  if (!g_option_context_parse(context, &argc, &argv, &error))
    goto out;
  if (events < 0 || processes <= 0 || threads <= 0) {
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--events must be >= 0, --processes and --threads > 0");
    goto out;
  }
  options.events = (uint64_t)events;
  options.seed = (uint64_t)seed;
  options.processes = (uint32_t)processes;
  options.threads_per_process = (uint32_t)threads;
  out = output != NULL ? fopen(output, "wb") : stdout;
  if (out == NULL) {
    g_set_error(&error, G_FILE_ERROR, g_file_error_from_errno(errno),
                "cannot write %s: %s", output, g_strerror(errno));
    goto out;
  }
  setvbuf(out, NULL, _IOFBF, 1 << 20);
  if (realistic ? gen_chrome_json_write_realistic(out, &options, &error)
                : gen_chrome_json_write(out, &options, &error))
    status = 0;

out:
  if (out != NULL && out != stdout && fclose(out) != 0 && status == 0) {
    g_set_error(&error, G_FILE_ERROR, g_file_error_from_errno(errno),
                "cannot write %s: %s", output, g_strerror(errno));
    status = 1;
  }
  if (error != NULL)
    fprintf(stderr, "gen_chrome_json: %s\n", error->message);
  g_clear_error(&error);
  g_free(output);
  g_option_context_free(context);
  return status;
}
#endif
