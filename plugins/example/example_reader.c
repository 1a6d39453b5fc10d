/* The smallest complete tracemerge reader (docs/plugin-guide.md), built
 * against <tracemerge/plugin.h> alone. Format: "#tm-example", then lines
 * "<ts> <name>", each an instant of thread 1 on the file's own clock. Its
 * config block ("example_config") is ns per ts unit as text; default 1. */
#include <stdlib.h>
#include <string.h>
#include <tracemerge/plugin.h>

typedef struct {
  const tm_host_services *s;
  tm_host *host;
  int64_t unit, at; /* ns per ts unit; file offset of line[0] */
  size_t len;       /* of the line so far: a line may span chunks */
  char line[256];
} example;

static int example_probe(const uint8_t *head, size_t len, const char *name) {
  return (void)name, len >= 11 && !memcmp(head, "#tm-example", 11) ? 100 : 0;
}

static void *example_open(const tm_host_services *s, tm_host *host,
                          const uint8_t *config, size_t n) {
  char unit[20] = {0}, *end; /* the config as a C string, "1" if none */
  memcpy(unit, n ? (const char *)config : "1", n && n < sizeof unit ? n : 1);
  example *e = calloc(1, sizeof *e);
  if (e && n < sizeof unit && (e->unit = strtoll(unit, &end, 10)) > 0 && !*end)
    return e->s = s, e->host = host, e;
  s->report_error(host, -1, e ? "example_config is no unit" : "out of memory");
  return free(e), NULL;
}

/* Ends line[]: at a newline (`complete`), or because it is too long. */
static tm_status example_line(example *e, bool complete) {
  char *name = (e->line[e->len] = '\0', e->line);
  int64_t ts = strtoll(e->line, &name, 10), at = e->at;
  e->at += (int64_t)e->len + 1, e->len = 0;
  if (complete && (e->line[0] == '#' || e->line[0] == '\0'))
    return TM_OK; /* a comment (the "#tm-example" header too) or blank line */
  if (!complete || name == e->line || *name++ != ' ' ||
      __builtin_mul_overflow(ts, e->unit, &ts))
    return e->s->report_error(e->host, at, "want '<ts> <name>'"), TM_ERROR;
  tm_slice_fields f = { /* machine 0: the file's; pid 1, tid 1 */
      TM_SLICE_FIELDS_INIT, .clock = e->s->clock_private(e->host), .ts = ts,
      .track = e->s->track_thread(e->host, e->s->thread(e->host, 0, 1, 1)),
      .name = e->s->intern_string(e->host, name, strlen(name))};
  e->s->slice_complete(e->host, &f, 0); /* duration 0: an instant */
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
    TM_READER_DESCRIPTOR_INIT, .name = "example", .flags = TM_READER_CLOCKLESS,
    .description = "toy line format", .config_name = "example_config",
    .probe = example_probe, .open = example_open, .feed = example_feed,
    .finish = example_finish, .close = free};
  return &d;
}
