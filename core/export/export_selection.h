/*
 * What an export writes: the machines, the time window and the slices the
 * filters of `tracemerge export` keep (--machine, --time, --sql).
 *
 * Invariants: a kept slice's ancestors are kept (a slice is never written
 * without the slices that enclose it); an event of an unselected machine
 * is never kept; an interval is kept when it overlaps the window (a slice
 * still open at the end reaches to the end of time), a point when it lies
 * in it, both bounds included.
 */
#ifndef TM_EXPORT_SELECTION_H
#define TM_EXPORT_SELECTION_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

typedef struct export_selection {
  const tm_model *model;
  bool *machine_on;     /* by machine id; NULL: every machine */
  int64_t start, end;   /* the window, bounds included */
  uint8_t *slice_bits;  /* by slice id; NULL: every slice */
} export_selection;

/* Every machine, all time, every slice. */
void export_selection_init(export_selection *sel, const tm_model *model);
void export_selection_clear(export_selection *sel);

/* Keeps only the machines named `names` (each must name a machine row;
 * otherwise an error listing the names there are). */
bool export_selection_set_machines(export_selection *sel, const char *const *names,
                                   size_t n_names, GError **error);

/* Parses "START,END" (either may be empty: open), each a number with an
 * optional unit ns (default), us, ms or s, e.g. "1.5ms,2s". */
bool export_selection_parse_time(const char *text, int64_t *start, int64_t *end,
                                 GError **error);

/* Parses one duration as --time's bounds ("+100us", "-1.5ms", "250");
 * `what` names it in the error. */
bool export_parse_duration(const char *what, const char *text, int64_t *ns, GError **error);

/* Keeps only slices `ids` (unknown ids are an error) and their ancestors. */
bool export_selection_set_slices(export_selection *sel, const int64_t *ids, size_t n_ids,
                                 GError **error);

static inline bool export_machine_on(const export_selection *sel, uint32_t machine_id) {
  return !sel->machine_on ||
         (machine_id < sel->model->machines.len && sel->machine_on[machine_id]);
}

static inline bool export_point_on(const export_selection *sel, int64_t ts) {
  return ts >= sel->start && ts <= sel->end;
}

/* [ts, ts + dur] overlaps the window; dur < 0: still open at the end. */
static inline bool export_interval_on(const export_selection *sel, int64_t ts, int64_t dur) {
  if (ts > sel->end)
    return false;
  return dur < 0 || ts + dur >= sel->start;
}

/* A slice's machine, window and filter all keep it. */
bool export_slice_on(const export_selection *sel, uint32_t slice_id);

#endif /* TM_EXPORT_SELECTION_H */
