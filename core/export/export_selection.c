/* What an export writes (see export_selection.h). */
#include "export/export_selection.h"

#include <tracemerge/tracemerge.h>

#include <errno.h>
#include <string.h>

#include "base/string_pool.h"
#include "input/container.h"

void export_selection_init(export_selection *sel, const tm_model *model) {
  memset(sel, 0, sizeof *sel);
  sel->model = model;
  sel->start = INT64_MIN;
  sel->end = INT64_MAX;
}

void export_selection_clear(export_selection *sel) {
  g_free(sel->machine_on);
  g_free(sel->slice_bits);
  memset(sel, 0, sizeof *sel);
}

bool export_selection_set_machines(export_selection *sel, const char *const *names,
                                   size_t n_names, GError **error) {
  const tm_model *model = sel->model;
  bool *on = g_new0(bool, model->machines.len + 1);
  for (size_t i = 0; i < n_names; i++) {
    bool found = false;
    for (size_t m = 0; m < model->machines.len; m++) {
      const char *name = string_pool_borrow(model->strings, model->machines.data[m].name);
      if (name && strcmp(name, names[i]) == 0) {
        on[m] = true;
        found = true;
      }
    }
    if (found)
      continue;
    GString *known = g_string_new(NULL);
    for (size_t m = 0; m < model->machines.len; m++) {
      const char *name = string_pool_borrow(model->strings, model->machines.data[m].name);
      if (name)
        g_string_append_printf(known, "%s'%s'", known->len ? ", " : "", name);
    }
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                "--machine '%s': no machine has that name (%s%s)", names[i],
                known->len ? "the machines are " : "no machine of the trace has a name",
                known->str);
    g_string_free(known, TRUE);
    g_free(on);
    return false;
  }
  g_free(sel->machine_on);
  sel->machine_on = on;
  return true;
}

/* A duration: an optional sign, digits, an optional fraction, an optional
 * unit. Exact: the fraction is scaled in integers, so "1.000000001s" is
 * 1000000001 ns. */
static bool parse_duration(const char *what, const char *text, size_t len, int64_t *out,
                           GError **error) {
  char *copy = g_strndup(text, len);
  char *s = g_strstrip(copy);
  bool ok = false;
  bool negative = false;
  const char *p = s;
  if (*p == '-' || *p == '+')
    negative = *p++ == '-';
  uint64_t whole = 0;
  size_t digits = 0;
  while (g_ascii_isdigit(*p) && whole <= UINT64_MAX / 10) {
    whole = whole * 10 + (uint64_t)(*p++ - '0');
    digits++;
  }
  char fraction[32] = {0};
  size_t n_fraction = 0;
  if (*p == '.') {
    p++;
    while (g_ascii_isdigit(*p)) {
      if (n_fraction < sizeof fraction - 1)
        fraction[n_fraction++] = *p;
      p++;
      digits++;
    }
  }
  uint64_t scale = 1;
  if (*p == '\0' || strcmp(p, "ns") == 0)
    scale = 1;
  else if (strcmp(p, "us") == 0)
    scale = 1000;
  else if (strcmp(p, "ms") == 0)
    scale = 1000000;
  else if (strcmp(p, "s") == 0)
    scale = 1000000000;
  else
    goto out;
  if (digits == 0 || g_ascii_isdigit(*p))
    goto out;
  /* whole * scale + fraction * scale / 10^n, all below 2^63. */
  if (whole > (uint64_t)INT64_MAX / scale)
    goto out;
  uint64_t ns = whole * scale;
  uint64_t unit = scale;
  for (size_t i = 0; i < n_fraction; i++) {
    unit /= 10;
    if (unit == 0) {
      if (fraction[i] != '0')
        goto out; /* finer than a nanosecond */
      continue;
    }
    ns += (uint64_t)(fraction[i] - '0') * unit;
  }
  if (ns > (uint64_t)INT64_MAX)
    goto out;
  *out = negative ? -(int64_t)ns : (int64_t)ns;
  ok = true;
out:
  if (!ok)
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                "%s: '%s' is not a time (a number of ns, or with a unit: "
                "ns, us, ms, s; e.g. 1.5ms)", what, s);
  g_free(copy);
  return ok;
}

bool export_selection_parse_time(const char *text, int64_t *start, int64_t *end,
                                 GError **error) {
  const char *comma = strchr(text, ',');
  if (!comma || strchr(comma + 1, ',')) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                "--time wants START,END (either may be empty), e.g. 0,1.5s; got '%s'", text);
    return false;
  }
  *start = INT64_MIN;
  *end = INT64_MAX;
  size_t start_len = (size_t)(comma - text);
  const char *end_text = comma + 1;
  bool start_empty = strspn(text, " \t") == start_len;
  bool end_empty = end_text[strspn(end_text, " \t")] == '\0';
  if (!start_empty && !parse_duration("--time", text, start_len, start, error))
    return false;
  if (!end_empty && !parse_duration("--time", end_text, strlen(end_text), end, error))
    return false;
  if (*start > *end) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "--time: START is after END in '%s'", text);
    return false;
  }
  return true;
}

bool export_parse_duration(const char *what, const char *text, int64_t *ns, GError **error) {
  return parse_duration(what, text, strlen(text), ns, error);
}

bool export_selection_set_slices(export_selection *sel, const int64_t *ids, size_t n_ids,
                                 GError **error) {
  const tm_model *model = sel->model;
  size_t n = model->slices.len;
  uint8_t *bits = g_new0(uint8_t, n / 8 + 1);
  for (size_t i = 0; i < n_ids; i++) {
    if (ids[i] < 0 || (uint64_t)ids[i] >= n) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_QUERY,
                  "--sql: %" G_GINT64_FORMAT " is not the id of a slice", ids[i]);
      g_free(bits);
      return false;
    }
    /* The slice and its ancestors, stopping at one already kept (whose
     * ancestors are then kept too). */
    for (uint32_t id = (uint32_t)ids[i]; id != TM_NULL_ID && id < n;
         id = model->slices.data[id].parent_id) {
      if (bits[id / 8] & (1u << (id % 8)))
        break;
      bits[id / 8] |= (uint8_t)(1u << (id % 8));
    }
  }
  g_free(sel->slice_bits);
  sel->slice_bits = bits;
  return true;
}

bool export_slice_on(const export_selection *sel, uint32_t slice_id) {
  const tm_model *model = sel->model;
  const tm_slice_row *s = &model->slices.data[slice_id];
  if (sel->slice_bits && !(sel->slice_bits[slice_id / 8] & (1u << (slice_id % 8))))
    return false;
  if (sel->machine_on && s->track_id < model->tracks.len &&
      !export_machine_on(sel, model->tracks.data[s->track_id].machine_id))
    return false;
  return export_interval_on(sel, model_slice_ts(model, slice_id), model_slice_dur(model, s));
}
