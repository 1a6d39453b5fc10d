/*
 * Benchmark driver: how far is import from the floor of the same work?
 *
 *   bench [--events N] [--seed S] [--input FILE] [--workdir DIR] [--keep]
 *         [--no-save] [--queries] [--to-clickhouse URL] [--format F]
 *         [--friendly] [--scale LIST] [--threads N] [--rounds N]
 *
 * Writes a synthetic trace unless --input is given (for json and proto,
 * the realistic shapes of gen_chrome_json_realistic.c and
 * gen_proto_trace_realistic.c; --friendly: the old shapes of
 * gen_chrome_json.c and gen_proto_trace.c), then measures, each stage in a forked child of its own so that
 * peak RSS (wait4 -> ru_maxrss) belongs to that stage alone:
 *
 *   baseline     a child that does nothing: the RSS every child starts with
 *   yajl floor   yajl with no callbacks over the same bytes, read in the
 *                host's chunk size: the cost no JSON import can go below
 *   import       tm_session_new + tm_session_import (library API)
 *   import+save  the same, then tm_session_save_sqlite to a file
 *   import+ch    with --to-clickhouse: the same, then tm_clickhouse_load
 *                into URL (schema created if missing; run "bench",
 *                replaced)
 *   export pb / export json (--export)  after an import, the export alone:
 *                tm_session_export to a file in the workdir, timed without
 *                the import, and compared with the import stage's time
 *
 * For the two sinks a second table gives the rows written (the fourteen
 * tables docs/clickhouse.md lists, counted by a query) per second of the
 * sink alone, after the import.
 * One table: wall seconds, CPU seconds (user + system of the child, so
 * work on a second core shows), events/s, MB/s, peak RSS, RSS bytes per
 * event above the baseline, and time relative to the floor (wall and CPU).
 * Exit status 1 if any stage failed.
 *
 * --format multi generates one capture of three machines (two realistic
 * Chrome JSON files and a realistic TrackEvent trace, a third of --events
 * each, in a ZIP with a perfetto_manifest) and compares the import with
 * --threads 1 and 2 (or --threads N) instead: --rounds imports of each, interleaved, with
 * wall time, CPU time and the calling thread's own CPU time, their
 * medians and ratios, and the load average around the runs.
 *
 * --scale 1,10 instead generates the input at each multiple of --events
 * in turn and measures the floor and the import of each, then prints how
 * the import's time and memory grew against the first size's (the
 * scaling target: 10x the events costs at most 10.5x of each). Performance is measured, not asserted: build with
 * --buildtype=release and without sanitizers for numbers worth quoting.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <archive.h>
#include <archive_entry.h>
#include <yajl/yajl_parse.h>

#include <tracemerge/tracemerge.h>

#include "gen_chrome_json.h"
#include "gen_ftrace_trace.h"
#include "gen_mixed_archive.h"
#include "gen_proto_trace.h"
#include "gen_systrace_text.h"
#include "proto_floor.h"

/* The host streams files in chunks of this size (TM_CONTAINER_CHUNK in
 * core/input/container.h); the floor reads the same way. */
#define BENCH_CHUNK (256 * 1024)

typedef struct bench_config {
  uint64_t events; /* of the generated file; 0 if --input */
  uint64_t seed;
  char *input;
  char *workdir;
  bool keep;
  bool save;
  bool queries; /* also time the analysis queries after an import */
  char *clickhouse_url; /* --to-clickhouse, or NULL */
  bool exports; /* also time the two exports after an import */
  /* What the input is and so which floor applies: json and gecko (yajl
   * without callbacks), proto (framing and decoding every packet), systrace
   * (splitting lines), instruments (GMarkup without callbacks); ftrace is
   * a Perfetto system trace (the proto floor); mixed is a ZIP of three
   * machines' traces (libarchive inflating every member, nothing parsed).
   * gecko and instruments inputs are not generated: they need --input. */
  const char *format;
  bool proto; /* proto or ftrace: the proto reader and floor */
  bool friendly; /* json: gen_chrome_json's friendly shape, not the realistic one */
  uint64_t scales[8]; /* --scale: multiples of `events`; n_scales == 0 without */
  size_t n_scales;
  unsigned threads; /* --threads of every import (0: the library's default) */
  unsigned rounds;  /* multi: imports per thread count */
} bench_config;

/* What a stage's child reports back through its pipe. */
typedef struct stage_report {
  int ok;
  double seconds;
  uint64_t events; /* placed by the importer; 0 for other stages */
  uint64_t rows;        /* written by a sink stage */
  double sink_seconds;  /* of the sink alone */
  double sink_cpu_seconds; /* this process's CPU time in the sink */
  double main_cpu_seconds; /* import: the calling thread's CPU time alone */
  char message[512];
} stage_report;

typedef bool (*stage_fn)(const bench_config *config, stage_report *report);

typedef struct stage_result {
  const char *name;
  bool ran_ok;
  stage_report report;
  int64_t peak_rss_kib;
  double cpu_seconds; /* user + system time of the stage's child */
} stage_result;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

static bool read_all(int fd, void *data, size_t len) {
  char *p = data;
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

/* --- stages (each runs in its own child) ---------------------------------- */

static bool stage_baseline(const bench_config *config, stage_report *report) {
  (void)config;
  report->seconds = 0;
  return true;
}

/* --format multi: one capture of three machines, as `tracemerge pack`
 * writes it: two browsers' realistic Chrome JSON and a phone's realistic
 * TrackEvent trace, a third of --events each, in a ZIP (deflated) with a
 * perfetto_manifest relating their clocks. */
static bool generate_multi(const bench_config *config, GError **error) {
  static const char *const names[] = {"browser-a.json", "browser-b.json", "phone.pftrace"};
  static const char *const machines[] = {"browser-a", "browser-b", "phone"};
  char *paths[3] = {0};
  bool ok = true;
  for (int i = 0; i < 3 && ok; i++) {
    paths[i] = g_build_filename(config->workdir, names[i], NULL);
    FILE *out = fopen(paths[i], "wb");
    if (out == NULL) {
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot write %s: %s",
                  paths[i], g_strerror(errno));
      ok = false;
      break;
    }
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    uint64_t events = MAX(config->events / 3, 1);
    if (i < 2) {
      gen_chrome_json_options options;
      gen_chrome_json_options_init(&options);
      options.events = events;
      options.seed = config->seed + (uint64_t)i;
      ok = gen_chrome_json_write_realistic(out, &options, error);
    } else {
      ok = gen_proto_trace_write_realistic(out, events, 64, (uint32_t)config->seed + 2, NULL);
      if (!ok)
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "writing %s failed", paths[i]);
    }
    if (fclose(out) != 0 && ok) {
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "closing %s: %s",
                  paths[i], g_strerror(errno));
      ok = false;
    }
  }
  if (ok) {
    /* browser-b's clock runs 1 ms behind browser-a's; the phone keeps its
     * own (TrackEvent's BOOTTIME). */
    tm_pack_machine pack_machines[] = {
        {.name = machines[0]},
        {.name = machines[1], .has_offset = true, .offset_ns = 1000000},
        {.name = machines[2]},
    };
    tm_pack_file files[3];
    for (int i = 0; i < 3; i++)
      files[i] = (tm_pack_file){paths[i], machines[i]};
    tm_pack_options pack = {.files = files, .n_files = 3, .machines = pack_machines,
                            .n_machines = 3};
    char *manifest = tm_pack_manifest(&pack, error);
    ok = manifest != NULL && tm_pack_write(&pack, manifest, config->input, error);
    g_free(manifest);
  }
  for (int i = 0; i < 3; i++) {
    if (paths[i])
      g_remove(paths[i]);
    g_free(paths[i]);
  }
  return ok;
}

static bool stage_generate(const bench_config *config, stage_report *report) {
  gen_chrome_json_options options;
  gen_chrome_json_options_init(&options);
  options.events = config->events;
  options.seed = config->seed;
  GError *error = NULL;
  bool ok = false;
  double start = now_seconds();
  if (strcmp(config->format, "mixed") == 0) {
    ok = gen_mixed_archive_write(config->input, config->workdir, config->events,
                                 (uint32_t)config->seed, &error);
    if (!ok)
      g_snprintf(report->message, sizeof report->message, "%s", error->message);
    g_clear_error(&error);
    report->seconds = now_seconds() - start;
    return ok;
  }
  FILE *out = fopen(config->input, "wb");
  if (out == NULL) {
    g_snprintf(report->message, sizeof report->message, "cannot write %s: %s",
               config->input, g_strerror(errno));
    return false;
  }
  setvbuf(out, NULL, _IOFBF, 1 << 20);
  if (strcmp(config->format, "multi") == 0) {
    ok = generate_multi(config, &error);
  } else if (strcmp(config->format, "ftrace") == 0) {
    /* 32 cpus, 4096 threads: a busy phone's scheduler and atrace. */
    ok = gen_ftrace_trace_write(out, config->events, 32, 4096, (uint32_t)config->seed, NULL);
    if (!ok)
      g_set_error(&error, G_FILE_ERROR, G_FILE_ERROR_IO, "writing %s failed",
                  config->input);
  } else if (strcmp(config->format, "systrace") == 0) {
    /* 8 cpus: a phone's atrace. */
    ok = gen_systrace_text_write(out, config->events, 8, (uint32_t)config->seed, NULL);
    if (!ok)
      g_set_error(&error, G_FILE_ERROR, G_FILE_ERROR_IO, "writing %s failed",
                  config->input);
  } else if (config->proto) {
    /* 64 sequences: SDK traces interleave many writer threads. */
    ok = config->friendly
             ? gen_proto_trace_write(out, config->events, 64, (uint32_t)config->seed, NULL)
             : gen_proto_trace_write_realistic(out, config->events, 64,
                                               (uint32_t)config->seed, NULL);
    if (!ok)
      g_set_error(&error, G_FILE_ERROR, G_FILE_ERROR_IO, "writing %s failed",
                  config->input);
  } else if (config->friendly) {
    ok = gen_chrome_json_write(out, &options, &error);
  } else {
    ok = gen_chrome_json_write_realistic(out, &options, &error);
  }
  if (fclose(out) != 0 && ok) {
    g_set_error(&error, G_FILE_ERROR, g_file_error_from_errno(errno),
                "closing %s: %s", config->input, g_strerror(errno));
    ok = false;
  }
  if (!ok)
    g_snprintf(report->message, sizeof report->message, "%s", error->message);
  g_clear_error(&error);
  report->seconds = now_seconds() - start;
  return ok;
}

static bool stage_yajl_floor(const bench_config *config, stage_report *report) {
  bool ok = false;
  unsigned char *buf = g_malloc(BENCH_CHUNK);
  yajl_handle parser = yajl_alloc(NULL, NULL, NULL);
  int fd = -1;
  double start = now_seconds();

  fd = open(config->input, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    g_snprintf(report->message, sizeof report->message, "cannot open %s: %s",
               config->input, g_strerror(errno));
    goto out;
  }
  for (;;) {
    ssize_t n = read(fd, buf, BENCH_CHUNK);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      g_snprintf(report->message, sizeof report->message, "reading %s: %s",
                 config->input, g_strerror(errno));
      goto out;
    }
    yajl_status status = n > 0 ? yajl_parse(parser, buf, (size_t)n)
                               : yajl_complete_parse(parser);
    if (status != yajl_status_ok) {
      unsigned char *why = yajl_get_error(parser, 0, NULL, 0);
      g_snprintf(report->message, sizeof report->message, "yajl: %s: %s",
                 config->input, (const char *)why);
      g_strchomp(report->message);
      yajl_free_error(parser, why);
      goto out;
    }
    if (n == 0)
      break;
  }
  ok = true;

out:
  report->seconds = now_seconds() - start;
  if (fd >= 0)
    close(fd);
  yajl_free(parser);
  g_free(buf);
  return ok;
}

/* Reads `path` in BENCH_CHUNK pieces, handing each to `consume`. */
static bool read_chunks(const char *path, stage_report *report,
                        bool (*consume)(void *ctx, const char *data, size_t len),
                        void *ctx) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    g_snprintf(report->message, sizeof report->message, "cannot open %s: %s",
               path, g_strerror(errno));
    return false;
  }
  char *buf = g_malloc(BENCH_CHUNK);
  bool ok = true;
  for (;;) {
    ssize_t n = read(fd, buf, BENCH_CHUNK);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      g_snprintf(report->message, sizeof report->message, "reading %s: %s",
                 path, g_strerror(errno));
      ok = false;
      break;
    }
    if (n == 0 || !consume(ctx, buf, (size_t)n)) {
      ok = n == 0;
      break;
    }
  }
  g_free(buf);
  close(fd);
  return ok;
}

static bool count_lines(void *ctx, const char *data, size_t len) {
  uint64_t *lines = ctx;
  for (const char *p = data, *end = data + len;
       (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
    (*lines)++;
  return true;
}

/* The systrace floor: the bytes split into lines, nothing parsed. */
static bool stage_line_floor(const bench_config *config, stage_report *report) {
  uint64_t lines = 0;
  double start = now_seconds();
  bool ok = read_chunks(config->input, report, count_lines, &lines);
  report->seconds = now_seconds() - start;
  return ok;
}

static bool feed_markup(void *ctx, const char *data, size_t len) {
  return g_markup_parse_context_parse(ctx, data, (gssize)len, NULL);
}

/* The Instruments floor: GMarkup parsing the XML with no callbacks. */
static bool stage_markup_floor(const bench_config *config, stage_report *report) {
  static const GMarkupParser no_callbacks = {NULL, NULL, NULL, NULL, NULL};
  GMarkupParseContext *markup = g_markup_parse_context_new(&no_callbacks, 0, NULL, NULL);
  double start = now_seconds();
  bool ok = read_chunks(config->input, report, feed_markup, markup) &&
            g_markup_parse_context_end_parse(markup, NULL);
  report->seconds = now_seconds() - start;
  if (!ok && !report->message[0])
    g_snprintf(report->message, sizeof report->message, "%s: not well-formed XML",
               config->input);
  g_markup_parse_context_free(markup);
  return ok;
}

/* The proto floor: framing and decoding every packet, no model. */
static bool stage_proto_floor(const bench_config *config, stage_report *report) {
  uint64_t packets = 0, fields = 0;
  double start = now_seconds();
  bool ok = proto_floor_walk_file(config->input, &packets, &fields);
  report->seconds = now_seconds() - start;
  if (!ok)
    g_snprintf(report->message, sizeof report->message,
               "%s: not a readable Perfetto trace", config->input);
  return ok;
}

/* The archive floor: libarchive reading (inflating) every member of the
 * archive in the host's chunk size, nothing parsed. */
static bool stage_archive_floor(const bench_config *config, stage_report *report) {
  double start = now_seconds();
  struct archive *a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  bool ok = archive_read_open_filename(a, config->input, BENCH_CHUNK) == ARCHIVE_OK;
  char *buf = g_malloc(BENCH_CHUNK);
  struct archive_entry *entry;
  int status = ARCHIVE_OK;
  while (ok && (status = archive_read_next_header(a, &entry)) == ARCHIVE_OK) {
    la_ssize_t n;
    while ((n = archive_read_data(a, buf, BENCH_CHUNK)) > 0)
      ;
    ok = n == 0;
  }
  ok = ok && status == ARCHIVE_EOF;
  if (!ok)
    g_snprintf(report->message, sizeof report->message, "%s: %s", config->input,
               archive_error_string(a) ? archive_error_string(a) : "not a readable archive");
  g_free(buf);
  archive_read_free(a);
  report->seconds = now_seconds() - start;
  return ok;
}

static double process_cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef enum bench_sink {
  SINK_NONE,
  SINK_SQLITE,
  SINK_CLICKHOUSE,
} bench_sink;

/* The rows of the tables both sinks write (docs/clickhouse.md). */
static const char rows_sql[] =
    "SELECT (SELECT count(*) FROM slice) + (SELECT count(*) FROM counter) + "
    "(SELECT count(*) FROM sched) + (SELECT count(*) FROM thread_state) + "
    "(SELECT count(*) FROM flow) + (SELECT count(*) FROM args) + "
    "(SELECT count(*) FROM thread) + (SELECT count(*) FROM process) + "
    "(SELECT count(*) FROM track) + (SELECT count(*) FROM cpu) + "
    "(SELECT count(*) FROM trace_file) + (SELECT count(*) FROM stats) + "
    "(SELECT count(*) FROM metadata) + (SELECT count(*) FROM machine)";

static bool count_rows(tm_session *session, uint64_t *rows, GError **error) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  bool ok = tm_session_query(session, rows_sql, TM_FORMAT_TSV, out, error);
  fclose(out);
  const char *value = text ? strchr(text, '\n') : NULL;
  if (ok && value)
    *rows = g_ascii_strtoull(value + 1, NULL, 10);
  free(text);
  return ok;
}

static bool load_clickhouse(const bench_config *config, tm_session *session,
                            stage_report *report, GError **error) {
  tm_clickhouse *ch = tm_clickhouse_open(config->clickhouse_url, error);
  if (!ch)
    return false;
  bool ok = tm_clickhouse_create_schema(ch, error);
  double start = now_seconds(), cpu_start = process_cpu_seconds();
  tm_clickhouse_run run = {"bench", session};
  ok = ok && tm_clickhouse_load(ch, &run, 1, TM_CLICKHOUSE_REPLACE, error);
  report->sink_seconds = now_seconds() - start;
  report->sink_cpu_seconds = process_cpu_seconds() - cpu_start;
  report->rows = tm_clickhouse_rows_loaded(ch);
  tm_clickhouse_free(ch);
  return ok;
}

/* The calling thread's CPU time: with a second thread pulling the bytes,
 * the import's critical path on an idle machine. */
static double thread_cpu_seconds(void) {
  struct rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0)
    return 0;
  return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
         (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
}

static bool import_and_maybe_save(const bench_config *config,
                                  stage_report *report, bench_sink sink) {
  GError *error = NULL;
  bool ok = false;
  double start = now_seconds();
  tm_session_options options = {.warnings = stderr, .threads = config->threads};
  tm_session *session = tm_session_new(&options);
  if (session == NULL) {
    g_snprintf(report->message, sizeof report->message,
               "tm_session_new failed");
    goto out;
  }
  const char *paths[] = {config->input};
  if (!tm_session_import(session, paths, 1, &error))
    goto out;
  report->main_cpu_seconds = thread_cpu_seconds();
  report->events = tm_session_event_count(session);
  if (sink == SINK_SQLITE) {
    char *db = g_build_filename(config->workdir, "bench.sqlite", NULL);
    g_remove(db);
    double sink_start = now_seconds(), cpu_start = process_cpu_seconds();
    ok = tm_session_save_sqlite(session, db, TM_SAVE_REPLACE, &error);
    report->sink_seconds = now_seconds() - sink_start;
    report->sink_cpu_seconds = process_cpu_seconds() - cpu_start;
    if (!config->keep)
      g_remove(db);
    g_free(db);
    /* Counted after the clock stopped: the query is not the save's. */
    if (!ok || !count_rows(session, &report->rows, &error))
      goto out;
  } else if (sink == SINK_CLICKHOUSE) {
    if (!load_clickhouse(config, session, report, &error))
      goto out;
  }
  if (report->events == 0) {
    g_snprintf(report->message, sizeof report->message,
               "the import placed no events");
    goto out;
  }
  ok = true;

out:
  report->seconds = now_seconds() - start;
  if (error != NULL)
    g_snprintf(report->message, sizeof report->message, "%s", error->message);
  g_clear_error(&error);
  tm_session_free(session);
  return ok;
}

static bool stage_import(const bench_config *config, stage_report *report) {
  return import_and_maybe_save(config, report, SINK_NONE);
}

static bool stage_import_save(const bench_config *config,
                              stage_report *report) {
  return import_and_maybe_save(config, report, SINK_SQLITE);
}

static bool stage_import_clickhouse(const bench_config *config,
                                    stage_report *report) {
  return import_and_maybe_save(config, report, SINK_CLICKHOUSE);
}

/* --export: an import (not timed), then the export alone to a file: its
 * wall time in `seconds`, its CPU time in `sink_cpu_seconds`. The report's
 * message holds the output's size. */
static bool export_stage(const bench_config *config, stage_report *report,
                         tm_export_format format) {
  GError *error = NULL;
  bool ok = false;
  tm_session_options options = {.warnings = stderr};
  tm_session *session = tm_session_new(&options);
  const char *paths[] = {config->input};
  char *out_path = g_build_filename(config->workdir, "bench.export", NULL);
  FILE *out = NULL;
  if (!session || !tm_session_import(session, paths, 1, &error))
    goto out;
  report->events = tm_session_event_count(session);
  out = fopen(out_path, "wb");
  if (!out) {
    g_snprintf(report->message, sizeof report->message, "cannot write %s", out_path);
    goto out;
  }
  double start = now_seconds(), cpu_start = process_cpu_seconds();
  tm_export_options export_options = {.format = format};
  ok = tm_session_export(session, &export_options, out, &error);
  ok = fclose(out) == 0 && ok;
  out = NULL;
  report->seconds = now_seconds() - start;
  report->sink_cpu_seconds = process_cpu_seconds() - cpu_start;
  struct stat st;
  if (ok && stat(out_path, &st) == 0)
    g_snprintf(report->message, sizeof report->message, "%.1f MB written",
               (double)st.st_size / 1e6);
out:
  if (out)
    fclose(out);
  g_remove(out_path);
  g_free(out_path);
  if (error != NULL)
    g_snprintf(report->message, sizeof report->message, "%s", error->message);
  g_clear_error(&error);
  tm_session_free(session);
  return ok;
}

static bool stage_export_perfetto(const bench_config *config, stage_report *report) {
  return export_stage(config, report, TM_EXPORT_PERFETTO);
}

static bool stage_export_json(const bench_config *config, stage_report *report) {
  return export_stage(config, report, TM_EXPORT_JSON);
}

/* Eleven typical analysis queries (--queries), run in one session after
 * one import; each one's wall time is printed as it finishes. */
static const struct {
  const char *name;
  const char *sql;
} analysis_queries[] = {
    {"top slices by dur per thread",
     "SELECT count(*) FROM (SELECT t.utid, s.name, s.dur, row_number() OVER "
     "(PARTITION BY t.utid ORDER BY s.dur DESC) AS r FROM slice s JOIN "
     "thread_track t ON s.track_id = t.id) WHERE r <= 10"},
    {"ancestor chains of every slice",
     "SELECT count(*), sum(a.depth) FROM slice s JOIN ancestor_slice(s.id) a"},
    {"descendants of every root",
     "SELECT sum((SELECT count(*) FROM descendant_slice(s.id))) FROM slice s "
     "WHERE s.depth = 0"},
    {"flow walks from every flow end",
     "SELECT count(*) FROM (SELECT slice_out AS id FROM flow UNION SELECT "
     "slice_in FROM flow) e JOIN following_flow(e.id) f"},
    {"SPAN_JOIN thread slices x counter",
     "DROP TABLE IF EXISTS temp.bench_sj; DROP VIEW IF EXISTS temp.bench_top;"
     "DROP VIEW IF EXISTS temp.bench_ctr;"
     "CREATE TEMP VIEW bench_top AS SELECT s.ts, s.dur, t.utid, s.id AS sid "
     "FROM slice s JOIN thread_track t ON s.track_id = t.id WHERE s.depth = 0;"
     "CREATE TEMP VIEW bench_ctr AS SELECT ts, lead(ts, 1, trace_end()) OVER "
     "(ORDER BY ts) - ts AS dur, value FROM counter WHERE track_id = (SELECT "
     "min(track_id) FROM counter);"
     "CREATE VIRTUAL TABLE temp.bench_sj USING SPAN_JOIN(bench_top "
     "PARTITIONED utid, bench_ctr);"
     "SELECT count(*), sum(dur) FROM bench_sj"},
    /* The docs' "CPU time of slices": each thread's top-level slices
     * against that thread's sched slices (both partitioned by utid; the
     * idle thread, utid 0, has no slices). Empty without sched data: run
     * it on --format ftrace. */
    {"SPAN_JOIN sched x thread slices",
     "DROP TABLE IF EXISTS temp.bench_sched_sj;"
     "DROP VIEW IF EXISTS temp.bench_thread_top;"
     "DROP VIEW IF EXISTS temp.bench_sched;"
     "CREATE TEMP VIEW bench_thread_top AS SELECT s.ts, s.dur, t.utid, s.id "
     "AS slice_id FROM slice s JOIN thread_track t ON s.track_id = t.id "
     "WHERE s.depth = 0;"
     "CREATE TEMP VIEW bench_sched AS SELECT ts, dur, utid, cpu FROM sched "
     "WHERE utid != 0;"
     "CREATE VIRTUAL TABLE temp.bench_sched_sj USING SPAN_JOIN("
     "bench_thread_top PARTITIONED utid, bench_sched PARTITIONED utid);"
     "SELECT count(*), sum(dur), count(DISTINCT slice_id) FROM "
     "bench_sched_sj"},
    {"args extraction",
     "SELECT count(EXTRACT_ARG(arg_set_id, 'args.src_func')), "
     "count(EXTRACT_ARG(arg_set_id, 'args.data.lineNumber')) FROM slice"},
    {"counter intervals",
     "INCLUDE PERFETTO MODULE counters.intervals;"
     "SELECT track_id, count(*), sum(dur) FROM counter_leading_intervals!("
     "counter) GROUP BY track_id"},
    {"thread_slice by thread",
     "INCLUDE PERFETTO MODULE slices.with_context;"
     "SELECT thread_name, count(*), sum(dur) FROM thread_slice GROUP BY 1"},
    {"self time by name",
     "SELECT s.name, sum(s.dur - coalesce((SELECT sum(c.dur) FROM slice c "
     "WHERE c.parent_id = s.id), 0)) FROM slice s WHERE s.dur > 0 GROUP BY "
     "s.name"},
    {"p90 dur by name",
     "SELECT name, percentile(dur, 90) FROM slice GROUP BY name"},
};

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall and CPU time of each query; the ratios are to the import's own
 * (CPU time shows the work when the machine is shared). */
static bool stage_queries(const bench_config *config, stage_report *report) {
  tm_session *session = tm_session_new(NULL);
  GError *error = NULL;
  const char *paths[] = {config->input};
  double start = now_seconds(), cpu_start = cpu_seconds();
  bool ok = tm_session_import(session, paths, 1, &error);
  double import_seconds = now_seconds() - start;
  double import_cpu = cpu_seconds() - cpu_start;
  printf("queries after an import of %.3f s wall, %.3f s CPU:\n",
         import_seconds, import_cpu);
  printf("  %-36s %9s %9s %9s %9s\n", "query", "wall s", "x import", "CPU s",
         "x import");
  FILE *null = fopen("/dev/null", "w");
  double worst = 0, worst_cpu = 0;
  for (size_t i = 0; ok && i < G_N_ELEMENTS(analysis_queries); i++) {
    double t0 = now_seconds(), c0 = cpu_seconds();
    ok = tm_session_query(session, analysis_queries[i].sql, TM_FORMAT_CSV,
                          null, &error);
    double t = now_seconds() - t0, c = cpu_seconds() - c0;
    worst = MAX(worst, t / import_seconds);
    worst_cpu = MAX(worst_cpu, c / import_cpu);
    printf("  %-36s %9.3f %9.2f %9.3f %9.2f\n", analysis_queries[i].name, t,
           t / import_seconds, c, c / import_cpu);
    fflush(stdout);
  }
  if (ok)
    printf("  slowest query: %.2f x import (wall), %.2f x import (CPU)\n",
           worst, worst_cpu);
  fclose(null);
  report->seconds = now_seconds() - start;
  if (!ok)
    g_snprintf(report->message, sizeof report->message, "%s", error->message);
  g_clear_error(&error);
  tm_session_free(session);
  return ok;
}

/* --- running a stage in a child --------------------------------------------
 */

static stage_result run_stage(const char *name, stage_fn fn,
                              const bench_config *config) {
  stage_result result = {.name = name};
  int fds[2];
  fflush(NULL);
  if (pipe(fds) != 0) {
    g_snprintf(result.report.message, sizeof result.report.message, "pipe: %s",
               g_strerror(errno));
    return result;
  }
  pid_t pid = fork();
  if (pid < 0) {
    g_snprintf(result.report.message, sizeof result.report.message, "fork: %s",
               g_strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return result;
  }
  if (pid == 0) {
    close(fds[0]);
    stage_report report = {0};
    report.ok = fn(config, &report);
    fflush(NULL);
    _exit(write_all(fds[1], &report, sizeof report) && report.ok ? 0 : 1);
  }

  close(fds[1]);
  bool got_report = read_all(fds[0], &result.report, sizeof result.report);
  close(fds[0]);
  int status = 0;
  struct rusage usage;
  pid_t waited;
  do
    waited = wait4(pid, &status, 0, &usage);
  while (waited < 0 && errno == EINTR);
  if (waited == pid) {
    result.peak_rss_kib = usage.ru_maxrss; /* KiB on Linux */
    result.cpu_seconds = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
                         (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
  }

  if (waited != pid)
    g_snprintf(result.report.message, sizeof result.report.message, "wait4: %s",
               g_strerror(errno));
  else if (WIFSIGNALED(status))
    g_snprintf(result.report.message, sizeof result.report.message,
               "killed by signal %d (%s)", WTERMSIG(status),
               g_strsignal(WTERMSIG(status)));
  else if (!got_report)
    g_snprintf(result.report.message, sizeof result.report.message,
               "exited with status %d without a report", WEXITSTATUS(status));
  result.ran_ok = waited == pid && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0 && got_report && result.report.ok;
  if (!result.ran_ok)
    fprintf(stderr, "bench: stage %s failed: %s\n", name,
            result.report.message[0] ? result.report.message : "unknown");
  return result;
}

/* Reads the file once so every stage starts with it in the page cache. */
static bool warm_page_cache(const char *path, uint64_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char *buf = g_malloc(BENCH_CHUNK);
  ssize_t n;
  *size = 0;
  while ((n = read(fd, buf, BENCH_CHUNK)) > 0 || (n < 0 && errno == EINTR))
    *size += n > 0 ? (uint64_t)n : 0;
  g_free(buf);
  close(fd);
  return n == 0;
}

/* --- report ----------------------------------------------------------------
 */

static void print_row(const stage_result *r, const stage_result *baseline,
                      const stage_result *floor, uint64_t events,
                      uint64_t file_bytes) {
  double floor_seconds = floor->ran_ok ? floor->report.seconds : 0;
  if (!r->ran_ok) {
    printf("%-13s %s\n", r->name, "FAILED");
    return;
  }
  double s = r->report.seconds;
  char eps[32] = "-", mbps[32] = "-", per_event[32] = "-", ratio[32] = "-", cpu[32] = "-",
       cpu_ratio[32] = "-";
  bool timed = s > 0 && r != baseline;
  if (timed && events > 0)
    g_snprintf(eps, sizeof eps, "%.0f", (double)events / s);
  if (timed)
    g_snprintf(mbps, sizeof mbps, "%.1f", (double)file_bytes / 1e6 / s);
  if (r != baseline && events > 0)
    g_snprintf(per_event, sizeof per_event, "%.1f",
               (double)(r->peak_rss_kib - baseline->peak_rss_kib) * 1024.0 /
                   (double)events);
  if (timed && floor_seconds > 0)
    g_snprintf(ratio, sizeof ratio, "%.2f", s / floor_seconds);
  if (r != baseline)
    g_snprintf(cpu, sizeof cpu, "%.3f", r->cpu_seconds);
  if (r != baseline && floor->ran_ok && floor->cpu_seconds > 0)
    g_snprintf(cpu_ratio, sizeof cpu_ratio, "%.2f", r->cpu_seconds / floor->cpu_seconds);
  printf("%-13s %9.3f %9s %12s %9s %13.1f %13s %9s %9s\n", r->name, s, cpu, eps, mbps,
         (double)r->peak_rss_kib / 1024.0, per_event, ratio, cpu_ratio);
}

/* Issue 15 asks the systrace text and the mixed archive to import 1.3x
 * faster than before its system-trace round: the import's time over the
 * floor of the same run, the medians of three runs of the code before that
 * round on the same generated inputs (docs/performance-log.md, "Rounds
 * of 25-26 Nov", runs of "the unchanged code", 2026-11-25). A ratio to the floor
 * of the same run carries across a machine whose load changes; the
 * absolute times do not. */
typedef struct recorded_baseline {
  const char *format;
  uint64_t events;
  double cpu_x_floor, wall_x_floor;
} recorded_baseline;

static const recorded_baseline recorded_baselines[] = {
    {"systrace", 1000000, 21.96, 21.22},
    {"mixed", 1000000, 3.85, 3.76},
};

static void print_against_baseline(const bench_config *config, const stage_result *import,
                                   const stage_result *floor) {
  for (size_t i = 0; i < G_N_ELEMENTS(recorded_baselines); i++) {
    const recorded_baseline *b = &recorded_baselines[i];
    if (strcmp(config->format, b->format) != 0 || config->events != b->events ||
        !import->ran_ok || !floor->ran_ok || floor->cpu_seconds <= 0 ||
        floor->report.seconds <= 0)
      continue;
    double cpu = import->cpu_seconds / floor->cpu_seconds;
    double wall = import->report.seconds / floor->report.seconds;
    printf("against the recorded baseline (%s, %" PRIu64 " events, before issue 15's "
           "system-trace round): CPU x fl %.2f -> %.2f, %.2fx faster; wall x fl %.2f -> "
           "%.2f, %.2fx faster\n",
           b->format, b->events, b->cpu_x_floor, cpu, b->cpu_x_floor / cpu, b->wall_x_floor,
           wall, b->wall_x_floor / wall);
  }
}

static bool parse_args(int argc, char **argv, bench_config *config) {
  gint64 events = 2000000, seed = 1;
  gboolean keep = FALSE, no_save = FALSE, queries = FALSE, friendly = FALSE;
  g_autofree char *scale = NULL;
  gboolean exports = FALSE;
  gint threads = 0, rounds = 3;
  g_autofree char *format = NULL;
  GOptionEntry entries[] = {
      {"events", 'n', 0, G_OPTION_ARG_INT64, &events,
       "events to generate (default 2000000)", "N"},
      {"seed", 's', 0, G_OPTION_ARG_INT64, &seed, "generator seed (default 1)",
       "S"},
      {"input", 'i', 0, G_OPTION_ARG_FILENAME, &config->input,
       "measure this file instead of generating one", "FILE"},
      {"workdir", 'w', 0, G_OPTION_ARG_FILENAME, &config->workdir,
       "where generated files go (default: a new temporary directory)", "DIR"},
      {"keep", 'k', 0, G_OPTION_ARG_NONE, &keep,
       "keep the generated trace and database", NULL},
      {"queries", 'q', 0, G_OPTION_ARG_NONE, &queries,
       "also time 11 analysis queries after an import (SPAN_JOIN of sched "
       "with slices needs sched: --format ftrace)", NULL},
      {"friendly", 0, 0, G_OPTION_ARG_NONE, &friendly,
       "json, proto: generate the old friendly shape (json: every thread "
       "sorted, few args; proto: all interned up front, B/E only) instead of "
       "the realistic one", NULL},
      {"scale", 0, 0, G_OPTION_ARG_STRING, &scale,
       "generate and import at each of these multiples of --events (e.g. 1,10) "
       "and print the growth of time and memory", "LIST"},
      {"export", 'e', 0, G_OPTION_ARG_NONE, &exports,
       "also time the Perfetto and JSON exports after an import (export alone)", NULL},
      {"no-save", 0, 0, G_OPTION_ARG_NONE, &no_save,
       "skip the import+save stage", NULL},
      {"threads", 't', 0, G_OPTION_ARG_INT, &threads,
       "threads of every import (default 0: the library's, one per processor)", "N"},
      {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds,
       "multi: imports per thread count (default 3, at most 15)", "N"},
      {"to-clickhouse", 0, 0, G_OPTION_ARG_STRING, &config->clickhouse_url,
       "also time loading the import into this ClickHouse database (run "
       "'bench', replaced; docs/clickhouse.md)", "clickhouse://HOST:PORT/DB"},
      {"format", 'f', 0, G_OPTION_ARG_STRING, &format,
       "json (default: Chrome JSON, floor = yajl without callbacks), proto "
       "(TrackEvent trace, floor = framing and decoding every packet), ftrace "
       "(system trace of sched and print events, compact and expanded; the "
       "proto floor), systrace (atrace text of 8 cpus, floor = splitting lines), "
       "mixed (a ZIP of a phone's systrace, a workstation's Chrome JSON and a "
       "server's TrackEvent proto with a perfetto_manifest, floor = inflating "
       "every member), multi (3 machines' files in a ZIP with a manifest: "
       "imports with 1 and 2 threads compared); with --input also gecko (floor = "
       "yajl) or instruments (floor = GMarkup without callbacks)", "FORMAT"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GError *error = NULL;
  GOptionContext *context =
      g_option_context_new("- time tracemerge import against its floor");
  g_option_context_add_main_entries(context, entries, NULL);
  bool ok = g_option_context_parse(context, &argc, &argv, &error);
  g_option_context_free(context);
  static const char *const formats[] = {"json",     "proto",       "ftrace", "gecko",
                                        "systrace", "instruments", "mixed",  "multi"};
  const char *chosen = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(formats); i++)
    if (g_strcmp0(format ? format : "json", formats[i]) == 0)
      chosen = formats[i];
  if (ok && !chosen) {
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--format must be json, proto, ftrace, gecko, systrace, instruments, "
                "mixed or multi");
    ok = false;
  }
  if (ok && config->input == NULL &&
      (strcmp(chosen, "gecko") == 0 || strcmp(chosen, "instruments") == 0)) {
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--format %s needs --input FILE (only json, proto, ftrace, systrace, "
                "mixed and multi are generated)",
                chosen);
    ok = false;
  }
  if (ok && (threads < 0 || rounds < 1 || rounds > 15)) {
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                threads < 0 ? "--threads must be >= 0" : "--rounds must be 1 to 15");
    ok = false;
  }
  if (ok && scale && strcmp(chosen, "multi") == 0) {
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--scale does not apply to --format multi");
    ok = false;
  }
  if (ok && (events <= 0 || argc > 1)) {
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                events <= 0 ? "--events must be > 0" : "unexpected argument %s",
                argc > 1 ? argv[1] : "");
    ok = false;
  }
  if (ok && scale) {
    g_auto(GStrv) parts = g_strsplit(scale, ",", -1);
    for (size_t i = 0; ok && parts[i]; i++) {
      char *end = NULL;
      guint64 m = g_ascii_strtoull(parts[i], &end, 10);
      if (i >= G_N_ELEMENTS(config->scales) || m == 0 || end == parts[i] || *end ||
          (uint64_t)events > UINT64_MAX / m) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--scale takes up to %zu positive multiples, as in 1,10",
                    G_N_ELEMENTS(config->scales));
        ok = false;
      } else {
        config->scales[config->n_scales++] = m;
      }
    }
    if (ok && config->input != NULL) {
      g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "--scale generates its inputs: it cannot take --input");
      ok = false;
    }
  }
  if (!ok) {
    fprintf(stderr, "bench: %s\n", error->message);
    g_clear_error(&error);
    return false;
  }
  config->events = config->input != NULL ? 0 : (uint64_t)events;
  config->seed = (uint64_t)seed;
  config->keep = keep;
  config->save = !no_save;
  config->queries = queries;
  config->friendly = friendly;
  config->exports = exports;
  config->threads = (unsigned)threads;
  config->rounds = (unsigned)rounds;
  config->format = chosen;
  config->proto = strcmp(chosen, "proto") == 0 || strcmp(chosen, "ftrace") == 0;
  return true;
}

/* The floor stage of the input's format, and its name for the table's note. */
static stage_result run_floor(const bench_config *config, const char **floor_name) {
  if (config->proto) {
    *floor_name = "proto";
    return run_stage("proto floor", stage_proto_floor, config);
  }
  if (strcmp(config->format, "systrace") == 0) {
    *floor_name = "line split";
    return run_stage("line floor", stage_line_floor, config);
  }
  if (strcmp(config->format, "instruments") == 0) {
    *floor_name = "GMarkup";
    return run_stage("xml floor", stage_markup_floor, config);
  }
  if (strcmp(config->format, "mixed") == 0) {
    *floor_name = "archive (inflating every member)";
    return run_stage("archive floor", stage_archive_floor, config);
  }
  *floor_name = "yajl";
  return run_stage("yajl floor", stage_yajl_floor, config);
}

/* The generated input's file name in the work directory. */
static char *generated_path(const bench_config *config) {
  const char *name = config->proto                               ? "bench.pftrace"
                     : strcmp(config->format, "systrace") == 0 ? "bench.txt"
                     : strcmp(config->format, "mixed") == 0 ||
                             strcmp(config->format, "multi") == 0
                         ? "bench.zip"
                         : "bench.json";
  return g_build_filename(config->workdir, name, NULL);
}

/* --scale: the floor and the import at each multiple of the events, one
 * generated file at a time; ratios are to the first multiple's. */
static bool run_scaling(bench_config *config) {
  uint64_t base_events = config->events;
  double first_cpu = 0, first_wall = 0, first_rss = 0, first_floor_cpu = 0;
  bool all_ok = true;
  printf("%-6s %12s %9s %9s %9s %13s %9s %9s %9s %9s\n", "scale", "events", "wall s", "CPU s",
         "CPU x fl", "RSS MiB", "x time", "x CPU", "x memory", "floor x");
  for (size_t i = 0; i < config->n_scales; i++) {
    config->events = base_events * config->scales[i];
    stage_result gen = run_stage("generate", stage_generate, config);
    uint64_t file_bytes = 0;
    if (!gen.ran_ok || !warm_page_cache(config->input, &file_bytes)) {
      g_remove(config->input);
      return false;
    }
    stage_result baseline = run_stage("baseline", stage_baseline, config);
    const char *floor_name;
    stage_result floor = run_floor(config, &floor_name);
    stage_result import = run_stage("import", stage_import, config);
    g_remove(config->input);
    if (!baseline.ran_ok || !floor.ran_ok || !import.ran_ok) {
      all_ok = false;
      continue;
    }
    /* Memory: peak RSS above the child that does nothing. */
    double rss = (double)(import.peak_rss_kib - baseline.peak_rss_kib) / 1024.0;
    if (first_rss == 0) {
      first_cpu = import.cpu_seconds;
      first_wall = import.report.seconds;
      first_rss = rss;
      first_floor_cpu = floor.cpu_seconds;
    }
    printf("%-6" PRIu64 " %12" PRIu64 " %9.3f %9.3f %9.2f %13.1f %9.2f %9.2f %9.2f %9.2f\n",
           config->scales[i], config->events, import.report.seconds, import.cpu_seconds,
           floor.cpu_seconds > 0 ? import.cpu_seconds / floor.cpu_seconds : 0, rss,
           first_wall > 0 ? import.report.seconds / first_wall : 0,
           first_cpu > 0 ? import.cpu_seconds / first_cpu : 0,
           first_rss > 0 ? rss / first_rss : 0,
           first_floor_cpu > 0 ? floor.cpu_seconds / first_floor_cpu : 0);
    fflush(stdout);
  }
  printf("(x time, x CPU, x memory: the import's wall time, CPU time and peak RSS above "
         "the baseline child, over the first scale's; the scale's own ratio is linear; "
         "floor x: the floor's CPU time over the first scale's, the same work, to tell "
         "the machine's own growth from the import's)\n");
  return all_ok;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *values, size_t n) {
  qsort(values, n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* --format multi: the import with 1 and with 2 threads (--threads N: N,
 * e.g. 3 for the reader worker), interleaved
 * (1, 2, 1, 2, ...) so that a change in the machine's load hits both,
 * --rounds times each; medians and their ratio. The machine's load
 * average is printed before and after: on a shared machine the second
 * thread competes with others, and wall time shows it. */
static bool run_threads_comparison(const bench_config *config, uint64_t file_bytes) {
  const unsigned counts[] = {1, config->threads > 1 ? config->threads : 2};
  enum { MAX_ROUNDS = 15 };
  double wall[2][MAX_ROUNDS], cpu[2][MAX_ROUNDS], main_cpu[2][MAX_ROUNDS];
  unsigned rounds = MIN(config->rounds, (unsigned)MAX_ROUNDS);
  uint64_t placed[2] = {0, 0};
  double load_before[3] = {0}, load_after[3] = {0};
  getloadavg(load_before, 3);
  bool ok = true;
  for (unsigned r = 0; r < rounds && ok; r++) {
    for (int t = 0; t < 2 && ok; t++) {
      bench_config with = *config;
      with.threads = counts[t];
      stage_result x = run_stage(t ? "import t=N" : "import t=1", stage_import, &with);
      ok = x.ran_ok;
      wall[t][r] = x.report.seconds;
      cpu[t][r] = x.cpu_seconds;
      main_cpu[t][r] = x.report.main_cpu_seconds;
      placed[t] = x.report.events;
      printf("round %u threads %u: wall %.3f s, CPU %.3f s, calling thread's CPU %.3f s\n",
             r + 1, counts[t], x.report.seconds, x.cpu_seconds, x.report.main_cpu_seconds);
      fflush(stdout);
    }
  }
  getloadavg(load_after, 3);
  if (!ok)
    return false;
  if (placed[0] != placed[1]) {
    fprintf(stderr, "bench: threads 1 placed %" PRIu64 " events, threads %u %" PRIu64 "\n",
            placed[0], counts[1], placed[1]);
    return false;
  }
  double m_wall[2], m_cpu[2], m_main[2];
  for (int t = 0; t < 2; t++) {
    m_wall[t] = median(wall[t], rounds);
    m_cpu[t] = median(cpu[t], rounds);
    m_main[t] = median(main_cpu[t], rounds);
  }
  printf("input: %s, %.1f MB (3 files in a ZIP), %" PRIu64 " events placed\n", config->input,
         (double)file_bytes / 1e6, placed[0]);
  printf("%-8s %9s %9s %14s\n", "threads", "wall s", "CPU s", "calling CPU s");
  for (int t = 0; t < 2; t++)
    printf("%-8u %9.3f %9.3f %14.3f\n", counts[t], m_wall[t], m_cpu[t], m_main[t]);
  /* With the readers on a worker thread (core/input/reader_worker.c) the
   * calling thread no longer bounds the wall time alone: two idle cores
   * give at best the larger of its CPU and half of all the CPU. */
  double bound = MAX(m_main[1], m_cpu[1] / 2);
  printf("threads %u / threads 1: wall %.2f x; calling thread's CPU / all CPU of threads 1: "
         "%.2f x; max(calling CPU, all CPU / 2) / all CPU of threads 1: %.2f x (the wall "
         "ratio two idle cores would give at best%s)\n",
         counts[1], m_wall[1] / m_wall[0], m_main[1] / m_cpu[0], bound / m_cpu[0],
         counts[1] > 2 ? "; the reader worker's own CPU, not measured here, bounds it too" : "");
  printf("(medians of %u imports each, interleaved; load average before %.2f %.2f %.2f, "
         "after %.2f %.2f %.2f on %ld processors)\n",
         rounds, load_before[0], load_before[1], load_before[2], load_after[0], load_after[1],
         load_after[2], sysconf(_SC_NPROCESSORS_ONLN));
  return true;
}

int main(int argc, char **argv) {
  bench_config config = {0};
  int status = 1;
  bool made_workdir = false;
  bool generated = false;

  if (!parse_args(argc, argv, &config))
    goto out;
  if (config.workdir == NULL) {
    GError *error = NULL;
    config.workdir = g_dir_make_tmp("tm-bench-XXXXXX", &error);
    if (config.workdir == NULL) {
      fprintf(stderr, "bench: %s\n", error->message);
      g_clear_error(&error);
      goto out;
    }
    made_workdir = true;
  } else if (g_mkdir_with_parents(config.workdir, 0755) != 0) {
    fprintf(stderr, "bench: cannot create %s: %s\n", config.workdir,
            g_strerror(errno));
    goto out;
  }

  if (config.n_scales > 0) {
    config.input = generated_path(&config);
    status = run_scaling(&config) ? 0 : 1;
    goto out;
  }
  if (config.input == NULL) {
    config.input = generated_path(&config);
    generated = true;
    stage_result gen = run_stage("generate", stage_generate, &config);
    if (!gen.ran_ok)
      goto out;
    printf("generated %s%s: %" PRIu64 " events in %.2f s (seed %" PRIu64 ")\n",
           config.input,
           strcmp(config.format, "multi") == 0 ? " (3 machines, realistic shapes)"
           : strcmp(config.format, "json") != 0 && strcmp(config.format, "proto") != 0 ? ""
           : config.friendly                   ? " (friendly shape)"
                                               : " (realistic shape)",
           config.events, gen.report.seconds, config.seed);
  }
  uint64_t file_bytes = 0;
  if (!warm_page_cache(config.input, &file_bytes)) {
    fprintf(stderr, "bench: cannot read %s: %s\n", config.input,
            g_strerror(errno));
    goto out;
  }

  if (strcmp(config.format, "multi") == 0) {
    status = run_threads_comparison(&config, file_bytes) ? 0 : 1;
    goto out;
  }

  stage_result results[5];
  size_t n = 0;
  results[n++] = run_stage("baseline", stage_baseline, &config);
  const char *floor_name;
  results[n++] = run_floor(&config, &floor_name);
  results[n++] = run_stage("import", stage_import, &config);
  size_t first_sink = n;
  if (config.save)
    results[n++] = run_stage("import+save", stage_import_save, &config);
  if (config.clickhouse_url)
    results[n++] = run_stage("import+ch", stage_import_clickhouse, &config);

  uint64_t placed = results[2].ran_ok ? results[2].report.events : 0;
  uint64_t events = config.events > 0 ? config.events : placed;

  printf("input: %s, %.1f MB, %" PRIu64 " events%s; import placed %" PRIu64
         " events\n",
         config.input, (double)file_bytes / 1e6, events,
         config.events > 0 ? "" : " (as placed by the import)", placed);
  printf("%-13s %9s %9s %12s %9s %13s %13s %9s %9s\n", "stage", "wall s", "CPU s",
         "events/s", "MB/s", "peak RSS MiB", "RSS B/event", "x floor", "CPU x fl");
  bool all_ok = true;
  for (size_t i = 0; i < n; i++) {
    print_row(&results[i], &results[0], &results[1], events, file_bytes);
    all_ok = all_ok && results[i].ran_ok;
  }
  printf("(RSS B/event: peak RSS above the baseline child, per event; "
         "x floor: wall time / %s floor wall time; CPU x fl: the same for CPU time, "
         "steadier on a shared machine, higher than x floor when a second core works)\n",
         floor_name);
  print_against_baseline(&config, &results[2], &results[1]);
  if (n > first_sink) {
    printf("%-13s %12s %9s %12s %9s\n", "sink", "rows", "wall s", "rows/s",
           "CPU s");
    for (size_t i = first_sink; i < n; i++) {
      const stage_result *r = &results[i];
      if (!r->ran_ok || r->report.sink_seconds <= 0)
        continue;
      printf("%-13s %12" PRIu64 " %9.3f %12.0f %9.3f\n",
             strcmp(r->name, "import+save") == 0 ? "sqlite save" : "clickhouse",
             r->report.rows, r->report.sink_seconds,
             (double)r->report.rows / r->report.sink_seconds,
             r->report.sink_cpu_seconds);
    }
    printf("(the sink alone, after the import: rows of the fourteen tables "
           "both write; CPU s: this process's, not a server's)\n");
  }
  /* The exports beside the import: wall and CPU time each as a ratio of
   * the import's (the import stage's child, which does no more than import). */
  double import_seconds = results[2].ran_ok ? results[2].report.seconds : 0;
  double import_cpu = results[2].ran_ok ? results[2].cpu_seconds : 0;
  for (int e = 0; config.exports && e < 2; e++) {
    stage_result x = run_stage(e ? "export json" : "export pb",
                               e ? stage_export_json : stage_export_perfetto, &config);
    if (!x.ran_ok) {
      fprintf(stderr, "bench: %s: %s\n", x.name, x.report.message);
      all_ok = false;
      continue;
    }
    printf("%-13s %9.3f s, %.2f x import; CPU %.3f s, %.2f x import's (%s; peak RSS "
           "%.1f MiB, import included)\n",
           x.name, x.report.seconds,
           import_seconds > 0 ? x.report.seconds / import_seconds : 0,
           x.report.sink_cpu_seconds,
           import_cpu > 0 ? x.report.sink_cpu_seconds / import_cpu : 0, x.report.message,
           (double)x.peak_rss_kib / 1024);
  }
  if (config.queries) {
    stage_result q = run_stage("queries", stage_queries, &config);
    if (!q.ran_ok) {
      fprintf(stderr, "bench: queries: %s\n", q.report.message);
      all_ok = false;
    }
  }
  status = all_ok ? 0 : 1;

out:
  if (generated && !config.keep)
    g_remove(config.input);
  if (made_workdir && !config.keep)
    g_rmdir(config.workdir);
  else if (generated && config.keep)
    printf("kept %s\n", config.input);
  g_free(config.input);
  g_free(config.workdir);
  g_free(config.clickhouse_url);
  return status;
}
