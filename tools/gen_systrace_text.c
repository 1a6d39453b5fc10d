/*
 * Synthetic systrace text shaped like what atrace writes on a phone
 * (docs/formats.md §3): the "# tracer: nop" header with the TGID column,
 * then data lines
 *
 *       RenderThread-1234  ( 1200) [003] d..2 12345.678901: sched_switch: ...
 *
 * Tasks: 48 processes (system_server, surfaceflinger, apps, ...) of 1-24
 * threads each with the names Android gives them, plus kernel threads
 * (kworker, ksoftirqd, irq/...) and the idle task "<idle>-0"; task names
 * are cut at 15 bytes as the kernel cuts comm, and about 1 line in 25
 * prints "<...>" with an unknown tgid "(-----)", as ftrace does when its
 * comm cache missed the pid.
 *
 * Each cpu runs a thread at a time and moves through steps: a context
 * switch (a sched_waking of a sleeping thread onto some cpu by the running
 * one, then sched_switch with prev_state S, R+, D or R and the next
 * thread, sometimes the idle task), tracing_mark_write "B|tgid|name" and
 * "E|tgid" by the running thread (nested up to 6 deep per thread, names
 * from Android's usual ones, a quarter with a frame or id number so many
 * are distinct), "C|tgid|name|value" counters, "S|"/"F|" async slices
 * with cookies, and cpu_idle / cpu_frequency lines.
 *
 * Out of order across cpus: the lines are written cpu block by cpu block,
 * each block 8-48 lines of one cpu covering about the same window of time
 * as the other cpus' blocks of that round, in a shuffled cpu order: what
 * concatenated per-cpu buffers look like (time ascends within a cpu, not
 * across cpus; a thread that moves to a cpu whose clock is behind makes
 * that cpu catch up, so every thread's own lines stay in time order).
 * Timestamps are microseconds, as ftrace prints them.
 */
#include "gen_systrace_text.h"

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum { PROCESSES = 48, KERNEL_THREADS = 40, MAX_DEPTH = 6, MAX_CPUS = 999 };

typedef struct task {
  uint32_t tid, tgid;
  char comm[16];
  int cpu;   /* running on, -1 if not */
  int depth; /* open B slices */
  uint32_t async_open; /* cookie of an open S slice, 0 if none */
  uint64_t last_us;    /* when it last ran */
} task;

typedef struct cpu_state {
  uint32_t running; /* task index; 0 = idle */
  uint64_t ts_us;
} cpu_state;

static const char *const process_names[] = {
    "system_server", "surfaceflinger", "com.android.systemui", "com.google.android.apps.nexuslauncher",
    "com.android.phone", "android.hardware.graphics.composer@2.4-service", "logd", "adbd",
    "com.google.android.gms", "com.google.android.gms.persistent", "audioserver", "cameraserver",
    "media.codec", "com.android.chrome", "com.android.chrome:sandboxed_process0",
    "com.google.android.youtube", "com.whatsapp", "com.instagram.android", "netd", "vold",
    "statsd", "traced", "traced_probes", "com.android.bluetooth", "com.android.nfc",
    "android.hardware.sensors@2.0-service", "installd", "lmkd", "servicemanager",
    "hwservicemanager", "com.google.android.inputmethod.latin", "com.android.providers.media",
    "zygote64", "zygote", "webview_zygote", "com.google.android.apps.maps",
    "com.spotify.music", "com.google.android.apps.photos", "keystore2", "gatekeeperd",
    "incidentd", "storaged", "wificond", "android.hardware.wifi@1.0-service",
    "com.android.vending", "com.google.android.apps.messaging", "com.android.settings",
    "com.google.android.dialer"};

static const char *const thread_names[] = {
    "RenderThread", "HeapTaskDaemon", "FinalizerDaemon", "ReferenceQueueD", "Jit thread pool",
    "Signal Catcher", "binder:%u_1", "binder:%u_2", "binder:%u_3", "binder:%u_4",
    "hwuiTask0", "hwuiTask1", "GLThread 42", "AsyncTask #1", "OkHttp Dispatch",
    "Chrome_IOThread", "CrRendererMain", "ThreadPoolForeg", "android.display", "android.anim",
    "InputDispatcher", "InputReader", "app", "sf", "surfaceflinger", "ComposerCallbac",
    "AudioOut_D", "FastMixer", "queued-work-loo", "CleanupReferenc"};

static const char *const kernel_names[] = {"kworker/u16:%u", "ksoftirqd/%u", "rcuop/%u",
                                           "irq/%u-dwc3", "kworker/%u:1H", "migration/%u",
                                           "kswapd0", "mmcqd/0", "writeback", "jbd2/sda-8"};

static const char *const slice_names[] = {
    "Choreographer#doFrame", "traversal", "measure", "layout", "draw", "Record View#draw()",
    "animation", "input", "inflate", "RV OnLayout", "binder transaction", "binder reply",
    "DrawFrame", "syncFrameState", "prepareTree", "flush commands", "eglSwapBuffersWithDamageKHR",
    "dequeueBuffer", "queueBuffer", "onMessageReceived", "handleMessageRefresh", "composite",
    "postComposition", "HIDL::IComposerClient::executeCommands_2_2::client",
    "AIDL::java::IPackageManager::getPackageInfo::server", "GC: Wait For Completion",
    "Lock contention on thread list lock (owner tid: 1234)", "activityStart",
    "bindApplication", "OpenDexFilesFromOat(/data/app/base.apk)", "ResourcesManager#getResources",
    "Open dex file /system/framework/framework.jar", "shader_compile", "Texture upload",
    "obtainBuffer", "processInput", "deliverInputEvent", "performTraversals", "Sleeping",
    "waitForever"};

static const char *const counter_names[] = {"aq:pending:com.android.systemui", "HW_VSYNC_0",
                                            "VSYNC-app", "VSYNC-sf", "FrameMissed",
                                            "GPU completion", "BufferTX - StatusBar#0",
                                            "TX - com.android.chrome/Main#0", "mem.lmk",
                                            "num_jobs"};

static const char *const async_names[] = {"launching: com.android.chrome", "Jank",
                                          "animator:alpha", "PrefetchTask",
                                          "Transition#collect"};

static const char *const states[] = {"S", "S", "S", "S", "S", "S", "R+", "R+", "D", "R"};
static const char *const flags[] = {"d..2", "...1", "d..3", "...2", "d.h3", "dn.2", "...."};

static void make_tasks(GArray *tasks, GRand *rand, uint32_t cpus) {
  task idle = {.tid = 0, .tgid = 0, .cpu = -1};
  g_strlcpy(idle.comm, "<idle>", sizeof idle.comm);
  g_array_append_val(tasks, idle);
  uint32_t next_pid = 2;
  for (uint32_t k = 0; k < KERNEL_THREADS; k++) {
    task t = {.tid = next_pid, .tgid = next_pid, .cpu = -1};
    char name[64];
    g_snprintf(name, sizeof name, kernel_names[k % G_N_ELEMENTS(kernel_names)], k % cpus);
    g_strlcpy(t.comm, name, sizeof t.comm);
    next_pid += 1 + (uint32_t)g_rand_int_range(rand, 0, 7);
    g_array_append_val(tasks, t);
  }
  next_pid = 500;
  for (uint32_t p = 0; p < PROCESSES; p++) {
    uint32_t pid = next_pid;
    uint32_t threads = (uint32_t)g_rand_int_range(rand, 1, 25);
    const char *pname = process_names[p % G_N_ELEMENTS(process_names)];
    /* The main thread's comm is the process name's last 15 bytes. */
    size_t len = strlen(pname);
    task main_thread = {.tid = pid, .tgid = pid, .cpu = -1};
    g_strlcpy(main_thread.comm, len > 15 ? pname + len - 15 : pname, sizeof main_thread.comm);
    g_array_append_val(tasks, main_thread);
    for (uint32_t t = 1; t < threads; t++) {
      task th = {.tid = pid + t, .tgid = pid, .cpu = -1};
      char name[64];
      g_snprintf(name, sizeof name,
                 thread_names[(uint32_t)g_rand_int_range(rand, 0, G_N_ELEMENTS(thread_names))],
                 pid);
      g_strlcpy(th.comm, name, sizeof th.comm);
      g_array_append_val(tasks, th);
    }
    next_pid += threads + 1 + (uint32_t)g_rand_int_range(rand, 0, 300);
  }
}

/* The "TASK-PID (TGID) [CPU] FLAGS TIMESTAMP: " prefix of a line by `t`. */
static void prefix(GString *s, GRand *rand, const task *t, uint32_t cpu, uint64_t ts_us) {
  bool unknown = t->tid != 0 && g_rand_int_range(rand, 0, 25) == 0;
  char tgid[8];
  if (unknown || t->tid == 0)
    g_strlcpy(tgid, "-----", sizeof tgid);
  else
    g_snprintf(tgid, sizeof tgid, "%5u", t->tgid);
  g_string_append_printf(s, "%16s-%-5u (%s) [%03u] %s %5" PRIu64 ".%06" PRIu64 ": ",
                         unknown ? "<...>" : t->comm, t->tid, tgid, cpu,
                         flags[g_rand_int_range(rand, 0, G_N_ELEMENTS(flags))],
                         ts_us / 1000000, ts_us % 1000000);
}

static const char *comm_of(const task *t, char *buf, size_t size, uint32_t cpu) {
  if (t->tid != 0)
    return t->comm;
  g_snprintf(buf, size, "swapper/%u", cpu);
  return buf;
}

/* A thread that runs nowhere, or the idle task. */
static uint32_t pick_sleeping(GArray *tasks, GRand *rand) {
  for (int tries = 0; tries < 8; tries++) {
    uint32_t i = (uint32_t)g_rand_int_range(rand, 1, (gint32)tasks->len);
    if (g_array_index(tasks, task, i).cpu < 0)
      return i;
  }
  return 0;
}

/* One step of cpu `c`: appends 1 or 2 lines to `s`; returns how many. */
static unsigned step(GString *s, GArray *tasks, cpu_state *cpus, uint32_t n_cpus, uint32_t c,
                     GRand *rand, uint64_t *serial) {
  cpu_state *cpu = &cpus[c];
  task *run = &g_array_index(tasks, task, cpu->running);
  cpu->ts_us += (uint64_t)g_rand_int_range(rand, 1, 40);
  int action = g_rand_int_range(rand, 0, 100);
  char b1[32], b2[32];
  if (cpu->running == 0)
    action = action < 60 ? 0 : 99; /* idle: it only switches or reports idle states */
  if (action < 35) {
    unsigned lines = 0;
    uint32_t woken = pick_sleeping(tasks, rand);
    if (woken != 0 && cpu->running != 0) {
      task *w = &g_array_index(tasks, task, woken);
      prefix(s, rand, run, c, cpu->ts_us);
      g_string_append_printf(s, "sched_waking: comm=%s pid=%u prio=120 target_cpu=%03u\n",
                             w->comm, w->tid, (uint32_t)g_rand_int_range(rand, 0, (gint32)n_cpus));
      cpu->ts_us += (uint64_t)g_rand_int_range(rand, 1, 10);
      lines++;
    }
    /* About one switch in seven goes idle. */
    uint32_t next = cpu->running != 0 && g_rand_int_range(rand, 0, 100) < 15
                        ? 0
                        : pick_sleeping(tasks, rand);
    task *nt = &g_array_index(tasks, task, next);
    prefix(s, rand, run, c, cpu->ts_us);
    g_string_append_printf(s,
                           "sched_switch: prev_comm=%s prev_pid=%u prev_prio=120 prev_state=%s"
                           " ==> next_comm=%s next_pid=%u next_prio=%u\n",
                           comm_of(run, b1, sizeof b1, c), run->tid,
                           cpu->running == 0 ? "R"
                                             : states[g_rand_int_range(rand, 0, G_N_ELEMENTS(states))],
                           comm_of(nt, b2, sizeof b2, c), nt->tid, next == 0 ? 120 : 110 + next % 20);
    if (cpu->running != 0) {
      run->cpu = -1;
      run->last_us = cpu->ts_us;
    }
    if (next != 0) {
      nt->cpu = (int)c;
      /* A thread runs after it last ran: this cpu's clock may be behind
       * the one it left, so it catches up (each thread's lines stay in
       * time order, as on a real machine, while the cpus' blocks interleave
       * out of order). */
      if (cpu->ts_us <= nt->last_us)
        cpu->ts_us = nt->last_us + 1;
    }
    cpu->running = next;
    return lines + 1;
  }
  prefix(s, rand, run, c, cpu->ts_us);
  if (cpu->running == 0 || action >= 95) {
    if (g_rand_boolean(rand))
      g_string_append_printf(s, "cpu_idle: state=%d cpu_id=%u\n",
                             cpu->running == 0 ? g_rand_int_range(rand, 0, 3) : -1, c);
    else
      g_string_append_printf(s, "cpu_frequency: state=%u cpu_id=%u\n",
                             300000 + 100000 * (uint32_t)g_rand_int_range(rand, 0, 24), c);
    return 1;
  }
  if (action < 80) {
    if (run->depth > 0 && (run->depth >= MAX_DEPTH || g_rand_boolean(rand))) {
      g_string_append_printf(s, "tracing_mark_write: E|%u\n", run->tgid);
      run->depth--;
    } else {
      const char *name = slice_names[g_rand_int_range(rand, 0, G_N_ELEMENTS(slice_names))];
      if (g_rand_int_range(rand, 0, 4) == 0)
        g_string_append_printf(s, "tracing_mark_write: B|%u|%s %" PRIu64 "\n", run->tgid, name,
                               (*serial)++);
      else
        g_string_append_printf(s, "tracing_mark_write: B|%u|%s\n", run->tgid, name);
      run->depth++;
    }
  } else if (action < 90) {
    g_string_append_printf(s, "tracing_mark_write: C|%u|%s|%d\n", run->tgid,
                           counter_names[g_rand_int_range(rand, 0, G_N_ELEMENTS(counter_names))],
                           g_rand_int_range(rand, 0, 64));
  } else {
    const char *name = async_names[run->tid % G_N_ELEMENTS(async_names)];
    if (run->async_open) {
      g_string_append_printf(s, "tracing_mark_write: F|%u|%s|%u\n", run->tgid, name,
                             run->async_open);
      run->async_open = 0;
    } else {
      run->async_open = (uint32_t)(*serial)++;
      g_string_append_printf(s, "tracing_mark_write: S|%u|%s|%u\n", run->tgid, name,
                             run->async_open);
    }
  }
  return 1;
}

bool gen_systrace_text_write(FILE *out, uint64_t lines, uint32_t cpus, uint32_t seed,
                             uint64_t *bytes_written) {
  if (cpus == 0 || cpus > MAX_CPUS)
    return false;
  GRand *rand = g_rand_new_with_seed(seed);
  GArray *tasks = g_array_new(FALSE, TRUE, sizeof(task));
  make_tasks(tasks, rand, cpus);
  cpu_state *cpu = g_new0(cpu_state, cpus);
  uint32_t *order = g_new(uint32_t, cpus);
  for (uint32_t c = 0; c < cpus; c++) {
    cpu[c].ts_us = 12345000000ull + c * 7;
    order[c] = c;
  }
  GString *s = g_string_sized_new(1 << 16);
  uint64_t serial = 1, written = 0, bytes = 0;
  g_string_append_printf(s,
                         "# tracer: nop\n#\n# entries-in-buffer/entries-written: %" PRIu64
                         "/%" PRIu64 "   #P:%u\n#\n"
                         "#                                      _-----=> irqs-off\n"
                         "#                                     / _----=> need-resched\n"
                         "#                                    | / _---=> hardirq/softirq\n"
                         "#                                    || / _--=> preempt-depth\n"
                         "#                                    ||| /     delay\n"
                         "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
                         "#              | |        |      |   ||||       |         |\n",
                         lines, lines, cpus);
  bool ok = true;
  while (ok && written < lines) {
    /* A round: every cpu's block, in a shuffled order. */
    for (uint32_t c = cpus; c > 1; c--) {
      uint32_t j = (uint32_t)g_rand_int_range(rand, 0, (gint32)c);
      uint32_t t = order[c - 1];
      order[c - 1] = order[j];
      order[j] = t;
    }
    for (uint32_t k = 0; k < cpus && written < lines; k++) {
      uint32_t c = order[k];
      int block = g_rand_int_range(rand, 8, 49);
      for (int i = 0; i < block && written < lines; i++) {
        gsize before = s->len;
        unsigned n = step(s, tasks, cpu, cpus, c, rand, &serial);
        if (written + n > lines) {
          /* Only the first line of a two-line step still fits. */
          const char *nl = memchr(s->str + before, '\n', s->len - before);
          g_string_truncate(s, (gsize)(nl - s->str) + 1);
          n = 1;
        }
        written += n;
      }
      if (s->len >= (1 << 16)) {
        ok = fwrite(s->str, 1, s->len, out) == s->len;
        bytes += s->len;
        g_string_truncate(s, 0);
      }
    }
  }
  if (ok && s->len) {
    ok = fwrite(s->str, 1, s->len, out) == s->len;
    bytes += s->len;
  }
  g_string_free(s, TRUE);
  g_free(order);
  g_free(cpu);
  g_array_free(tasks, TRUE);
  g_rand_free(rand);
  if (bytes_written)
    *bytes_written = bytes;
  return ok && !ferror(out);
}

#ifdef GEN_SYSTRACE_TEXT_MAIN
int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gen_systrace_text LINES OUT.txt\n");
    return 2;
  }
  FILE *out = fopen(argv[2], "wb");
  if (!out) {
    perror(argv[2]);
    return 1;
  }
  bool ok = gen_systrace_text_write(out, g_ascii_strtoull(argv[1], NULL, 10), 8, 1, NULL);
  return fclose(out) == 0 && ok ? 0 : 1;
}
#endif
