/* The smallest complete tracemerge reader, built against <tracemerge/plugin.h>
 * alone (plugins/README.md). Format: "#tm-example", then "<ts_ns> <name>"
 * lines, each an instant on thread 1 of process 1. No absolute clock. */
#include <stdlib.h>
#include <string.h>
#include <tracemerge/plugin.h>

typedef struct {
  const tm_host_services *s;
  tm_host *host;
  int64_t at;     /* file offset of line[0], for error messages */
  size_t len;     /* of the line being read: lines may span chunks */
  char line[256];
} example;

static int example_probe(const uint8_t *head, size_t len, const char *name) {
  (void)name;
  return len >= 11 && memcmp(head, "#tm-example", 11) == 0 ? 100 : 0;
}

static void *example_open(const tm_host_services *s, tm_host *host,
                          const uint8_t *config, size_t config_len) {
  (void)config, (void)config_len;
  example *e = calloc(1, sizeof *e);
  if (e == NULL)
    s->report_error(host, -1, "out of memory");
  else
    *e = (example){.s = s, .host = host};
  return e;
}

/* Ends line[]: at a newline (`complete`), or because it is too long. */
static tm_status example_line(example *e, bool complete) {
  const tm_host_services *s = e->s;
  char *name = e->line;
  e->line[e->len] = '\0';
  int64_t ts = strtoll(e->line, &name, 10), at = e->at;
  e->at += (int64_t)e->len + 1, e->len = 0;
  if (complete && (e->line[0] == '#' || e->line[0] == '\0'))
    return TM_OK; /* a comment (the "#tm-example" header too) or blank line */
  if (!complete || name == e->line || *name++ != ' ')
    return s->report_error(e->host, at, "want '<ts_ns> <name>' < 256 bytes"),
           TM_ERROR;
  tm_thread_ref t = s->thread(e->host, s->machine_default(e->host), 1, 1);
  tm_slice_fields f = {s->track_thread(e->host, t), s->clock_private(e->host),
                       ts, s->intern_string(e->host, name, strlen(name)), 0,
                       TM_NO_ARGS, TM_UNKNOWN_TIME, TM_UNKNOWN_TIME};
  s->slice_complete(e->host, &f, 0); /* duration 0: an instant */
  return TM_OK;
}

static tm_status example_feed(void *state, const uint8_t *data, size_t len) {
  example *e = state;
  for (size_t i = 0; i < len; i++)
    if (data[i] != '\n' && e->len + 1 < sizeof e->line)
      e->line[e->len++] = (char)data[i];
    else if (example_line(e, data[i] == '\n') != TM_OK)
      return TM_ERROR;
  return TM_OK;
}

static tm_status example_finish(void *state) { /* a last line without \n */
  return ((example *)state)->len > 0 ? example_line(state, true) : TM_OK;
}

TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  static const tm_reader_descriptor d = {
      TM_READER_ABI_VERSION, TM_READER_CLOCKLESS, "example", "toy line format",
      example_probe, example_open, example_feed, example_finish, free};
  return &d;
}
