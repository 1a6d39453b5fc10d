/*
 * The systrace / ftrace text reader ("systrace"): the descriptor, the probe,
 * the line splitter and what each line becomes (docs/formats.md §3).
 *
 * The file is cut into lines as chunks arrive; systrace_wrapper decides
 * which lines are ftrace data and which PROCESS DUMP rows, and
 * systrace_emitter turns them into host calls (tracing_mark_write
 * (also events "0" and "print") B/E/C/S/F/I and N/G/H into slices, async
 * slices and counters, sched_switch / sched_waking / sched_wakeup into the
 * scheduling services, cpu_frequency / cpu_idle and clock_set_rate /
 * clock_enable / clock_disable into counters, ps tables into process
 * names, parents and thread names). Other kernel events are not read.
 *
 * Beyond trace_processor: the trace-cmd report header and the legacy
 * JavaScript-string HTML are accepted; timestamps are parsed as exact
 * decimals, not through a double (and see systrace_emitter.c).
 *
 * Clock: the timestamps are the machine's MONOTONIC clock, which the
 * reader claims as trace time when the file starts (docs/clock-model.md §5).
 *
 * Lines of plain text that lie whole in a chunk are read where they lie;
 * only a line cut by a chunk's end, and every line of the HTML and
 * JavaScript forms (whose wrapper may change it), is copied into the
 * reader's buffer first.
 *
 * Limits: a line is held in one buffer of at most MAX_LINE bytes; a longer
 * data line is skipped and counted (systrace_line_too_long), so memory
 * does not grow with the file. A data line that does not parse is counted
 * (systrace_parse_failure), with its byte offset and text in the host's
 * import log when the host has one (the host bounds the rows). A file in which
 * no data line parses at all but some failed is reported as damaged, naming the
 * first failing offset.
 */
#include <glib.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "systrace_emitter.h"
#include "systrace_wrapper.h"

#define MAX_LINE (64 * 1024)
#define PROBE_SCORE 800 /* trace_processor sniffs systrace after JSON */

typedef struct systrace_reader {
  const tm_host_services *s;
  tm_host *host;
  systrace_wrapper wrapper;
  systrace_emitter *emitter;
  char *line;          /* the line being assembled, MAX_LINE bytes */
  size_t line_len;
  bool line_overlong;  /* dropping the rest of an overlong line */
  int64_t offset;      /* file offset of line[0] */
  int64_t consumed;    /* bytes fed so far */
  uint64_t lines_parsed;
  uint64_t lines_failed;
  int64_t first_failure_offset;
} systrace_reader;

/* --- probe --------------------------------------------------------------- */

static bool head_contains(const uint8_t *head, size_t len, const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(head + i, s, n) == 0)
      return true;
  return false;
}

static bool head_starts_ci(const uint8_t *head, size_t len, const char *s) {
  size_t n = strlen(s);
  return len >= n && g_ascii_strncasecmp((const char *)head, s, n) == 0;
}

static int systrace_probe(const uint8_t *head, size_t len, const char *file_name) {
  (void)file_name;
  if (len > 128)
    len = 128;
  /* "TRACE:\n" followed by a zlib stream is compressed atrace (ctrace). */
  for (size_t i = 0; i + 8 < len; i++)
    if (memcmp(head + i, "TRACE:\n\x78\x9c", 9) == 0)
      return 0;
  if (head_contains(head, len, "# tracer") ||
      head_starts_ci(head, len, "<!doctype html>") ||
      head_starts_ci(head, len, "<html>") ||
      head_contains(head, len, "TRACE:\n") ||
      head_starts_ci(head, len, "cpus=") || (len > 0 && head[0] == ' '))
    return PROBE_SCORE;
  /* The trace-cmd report header, which upstream does not sniff. */
  if (head_starts_ci(head, len, "version = ") &&
      head_contains(head, len, "\ncpus="))
    return PROBE_SCORE;
  return 0;
}

/* --- streaming ------------------------------------------------------------ */

static void data_line(systrace_reader *r, const char *text, size_t len) {
  systrace_line_result result = systrace_emitter_data_line(r->emitter, text, len);
  if (result != SYSTRACE_LINE_NO_MATCH)
    r->lines_parsed++;
  if (result != SYSTRACE_LINE_READ && r->lines_failed++ == 0)
    r->first_failure_offset = r->offset;
}

static void end_of_line(systrace_reader *r) {
  size_t len = r->line_len;
  if (!r->line_overlong) {
    systrace_emitter_set_line_offset(r->emitter, r->offset);
    systrace_line_kind kind = systrace_wrapper_line(&r->wrapper, r->line, &len);
    if (kind == LINE_DATA)
      data_line(r, r->line, len);
    else if (kind == LINE_PROCESS_DUMP)
      systrace_emitter_dump_line(r->emitter, r->line, len);
  } else if (systrace_wrapper_in_data(&r->wrapper) ||
             systrace_wrapper_line(&r->wrapper, r->line, &len) == LINE_DATA) {
    /* Outside trace data (HTML viewer code) long lines are expected, and
     * their first MAX_LINE bytes are enough to follow the wrapper. */
    r->s->stat_add(r->host, "systrace_line_too_long", 1);
  }
  r->line_overlong = false;
  r->line_len = 0;
}

/* A whole line of plain text, read in the chunk: end_of_line() without
 * the copy. */
static void whole_plain_line(systrace_reader *r, const char *text, size_t len) {
  systrace_emitter_set_line_offset(r->emitter, r->offset);
  if (systrace_wrapper_plain_line(&r->wrapper, text, len) == LINE_DATA)
    data_line(r, text, len);
}

static void append(systrace_reader *r, const uint8_t *data, size_t n) {
  if (r->line_overlong)
    return;
  if (r->line_len + n > MAX_LINE) {
    n = MAX_LINE - r->line_len;
    r->line_overlong = true;
  }
  memcpy(r->line + r->line_len, data, n);
  r->line_len += n;
}

static void systrace_close(void *state);

static void *systrace_open(const tm_host_services *services, tm_host *host,
                           const uint8_t *config, size_t config_len) {
  (void)config;
  (void)config_len;
  systrace_reader *r = g_new0(systrace_reader, 1);
  r->s = services;
  r->host = host;
  tm_machine_ref machine = services->machine_default(host);
  tm_clock_ref clock = services->clock_builtin(host, machine, TM_CLOCK_MONOTONIC);
  services->claim_trace_time(host, clock);
  r->emitter = systrace_emitter_new(services, host, machine, clock);
  r->line = g_malloc(MAX_LINE);
  r->first_failure_offset = -1;
  return r;
}

static tm_status systrace_feed(void *state, const uint8_t *data, size_t len) {
  systrace_reader *r = state;
  size_t start = 0;
  while (start < len) {
    const uint8_t *nl = memchr(data + start, '\n', len - start);
    size_t end = nl ? (size_t)(nl - data) : len;
    if (nl && r->line_len == 0 && !r->line_overlong && end - start <= MAX_LINE &&
        systrace_wrapper_is_plain(&r->wrapper)) {
      whole_plain_line(r, (const char *)data + start, end - start);
    } else {
      append(r, data + start, end - start);
      if (!nl)
        break;
      end_of_line(r);
    }
    r->offset = r->consumed + (int64_t)end + 1;
    start = end + 1;
  }
  r->consumed += (int64_t)len;
  return TM_OK;
}

static tm_status systrace_finish(void *state) {
  systrace_reader *r = state;
  if (r->line_len || r->line_overlong)
    end_of_line(r);
  if (r->lines_parsed == 0 && r->lines_failed > 0) {
    r->s->report_error(r->host, r->first_failure_offset,
                       "not ftrace text: no line matches the line grammar");
    return TM_ERROR;
  }
  return TM_OK;
}

static void systrace_close(void *state) {
  systrace_reader *r = state;
  if (!r)
    return;
  systrace_emitter_free(r->emitter);
  g_free(r->line);
  g_free(r);
}

static const tm_reader_stat systrace_stats[] = {
    SYSTRACE_EMITTER_STATS,
    TM_READER_STAT("systrace_line_too_long", TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
        "A systrace line longer than the reader's limit was skipped."),
};

static const tm_reader_descriptor systrace_descriptor = {
    TM_READER_DESCRIPTOR_INIT,
    .flags = TM_READER_PID0_IS_IDLE,
    .name = "systrace",
    .description = "Android systrace / Linux ftrace text (plain, trace-cmd "
                   "report, systrace HTML)",
    .probe = systrace_probe,
    .open = systrace_open,
    .feed = systrace_feed,
    .finish = systrace_finish,
    .close = systrace_close,
    .stats = systrace_stats,
    .n_stats = sizeof systrace_stats / sizeof systrace_stats[0],
};

TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  return &systrace_descriptor;
}
