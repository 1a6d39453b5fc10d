/*
 * `tracemerge info`: a human summary of an import — files and formats,
 * machines, how each file reached trace time, and every non-zero stat.
 */
#include <inttypes.h>

#include "session/session_config.h"
#include "session/session_internal.h"
#include "base/string_pool.h"

static const char *str_or(const tm_model *model, tm_str_id id, const char *fallback) {
  const char *s = string_pool_borrow(model->strings, id);
  return s ? s : fallback;
}

/* How a file (its worst clock) or one clock reached trace time. A
 * zero-offset tie is an assumption about the private timeline of a
 * clockless file, or about two clocks of the same domain on different
 * machines or files (docs/clock-model.md §6.2 step 3). */
static const char *bridge_text(int bridge, bool private_clock) {
  switch (bridge) {
  case TM_BRIDGE_DIRECT:
    return "trace time itself, or a real clock path to it";
  case TM_BRIDGE_REALTIME:
    return "REALTIME rendezvous";
  case TM_BRIDGE_SAME_DOMAIN:
    return private_clock ? "private timeline tied to trace time at zero offset"
                         : "same clock domain as trace time, assumed at zero offset";
  case TM_BRIDGE_UNRELATABLE:
    return "unrelatable: its events were dropped";
  default:
    return "its own clocks (see clock_snapshot)";
  }
}

/* The clock behind a file's summary: the first with its worst outcome. */
static const tm_host_placement *worst_placement(const tm_host *host) {
  const tm_host_placement *worst = NULL;
  for (size_t i = 0; i < host->placements.len; i++)
    if (!worst || host->placements.data[i].bridge > worst->bridge)
      worst = &host->placements.data[i];
  return worst;
}

/* One line per clock carrying the file's events: how it reached trace
 * time, how many events were read and placed, the stat that counted the
 * others, and the edges to trace time. */
static void print_clock_placements(tm_session *session, const tm_host *host,
                                   tm_clock_node trace_time, FILE *out) {
  for (size_t i = 0; i < host->placements.len; i++) {
    const tm_host_placement *p = &host->placements.data[i];
    g_autofree char *clock =
        clock_key_to_string(clock_graph_node_key(session->import.clocks, p->clock));
    fprintf(out, "    %s: %s%s; %" PRIu64 " event%s, %" PRIu64 " placed", clock,
            p->via_boottime ? "through its machine's BOOTTIME, " : "",
            p->clock == trace_time            ? "trace time itself"
            : p->bridge == TM_BRIDGE_DIRECT ? "a real clock path to trace time"
                                            : bridge_text(p->bridge, p->clock == host->private_clock),
            p->read, p->read == 1 ? "" : "s", p->placed);
    if (p->placed < p->read) {
      /* A clock without a path loses all its events (a failure that does
       * not depend on the value); with one, only those converted before
       * trace time 0 (docs/clock-model.md §7). */
      int64_t ignored;
      tm_clock_failure failure =
          trace_time == TM_NO_CLOCK_NODE
              ? TM_CLOCK_UNKNOWN_TARGET
              : clock_graph_to_trace_time(session->import.clocks, p->clock, 0, &ignored);
      fprintf(out, ", %" PRIu64 " dropped (%s)", p->read - p->placed,
              failure == TM_CLOCK_OK ? "trace_sorter_negative_timestamp_dropped"
                                     : clock_failure_stat_name(failure));
    }
    fputc('\n', out);
    if (trace_time != TM_NO_CLOCK_NODE) {
      g_autofree char *path =
          clock_graph_describe_path(session->import.clocks, p->clock, trace_time);
      fprintf(out, "      path: %s\n", path);
    }
  }
}

void tm_session_print_info(tm_session *session, FILE *out) {
  const tm_model *model = session->import.model;
  fprintf(out, "files:\n");
  for (size_t i = 0; i < model->trace_files.len; i++) {
    const tm_trace_file_row *f = &model->trace_files.data[i];
    fprintf(out, "  [%zu] %-40s %-18s %12" PRId64 " bytes", i,
            str_or(model, f->name, "\"\""), str_or(model, f->trace_type, "?"),
            f->size);
    if (f->parent_id != TM_NULL_ID)
      fprintf(out, "  in [%" PRIu32 "]", f->parent_id);
    fputc('\n', out);
  }
  fprintf(out, "machines:\n");
  for (size_t i = 0; i < model->machines.len; i++) {
    const tm_machine_row *m = &model->machines.data[i];
    fprintf(out, "  [%zu] raw_id %" PRId64 "  %s\n", i, m->raw_id,
            str_or(model, m->name, m->raw_id == 0 ? "(host)" : "(unnamed)"));
  }
  tm_clock_node trace_time = clock_graph_trace_time(session->import.clocks);
  fprintf(out, "trace time: ");
  if (trace_time == TM_NO_CLOCK_NODE) {
    fprintf(out, "none claimed\n");
  } else {
    const tm_clock_key *key = clock_graph_node_key(session->import.clocks, trace_time);
    fprintf(out, "clock %" PRIu32 " of machine %" PRIu32, key->clock_id, key->machine_id);
    if (key->trace_file_id)
      fprintf(out, " (private timeline of file %" PRIu32 ")", key->trace_file_id);
    fputc('\n', out);
  }
  fprintf(out, "placement:\n");
  /* In the order the files were tied to trace time. */
  GPtrArray *ordered = g_ptr_array_copy(session->import.hosts, NULL, NULL);
  g_ptr_array_sort_with_data(ordered, session_host_by_processing_order, session->import.model);
  for (guint i = 0; i < ordered->len; i++) {
    const tm_host *host = g_ptr_array_index(ordered, i);
    bool owner = trace_time != TM_NO_CLOCK_NODE && host->claimed_clock == trace_time;
    const tm_host_placement *worst = worst_placement(host);
    bool private_clock = worst && worst->clock == host->private_clock;
    fprintf(out, "  file [%" PRIu32 "] machine %" PRIu32 " (%s): %s\n", host->file_id,
            host->machine_id, host->reader->descriptor.name,
            owner ? "owns trace time" : bridge_text(host->bridge, private_clock));
    print_clock_placements(session, host, trace_time, out);
  }
  g_ptr_array_free(ordered, TRUE);
  fprintf(out, "events on the timeline: %" PRIu64 " (%zu slices, %zu counters, %zu flows)\n",
          session->import.events_placed, model->slices.len, model->counters.len,
          model->flows.len);
  fprintf(out, "trace bounds: %" PRId64 " .. %" PRId64 "\n", model->bounds_start,
          model->bounds_end);
  session_config_print_info(session, out);
  fprintf(out, "stats (non-zero):\n");
  bool any = false;
  for (size_t i = 0; i < model->stats.len; i++) {
    const tm_stats_row *s = &model->stats.data[i];
    if (s->value == 0)
      continue;
    any = true;
    char name[96];
    if (s->idx == TM_NULL_INT64)
      snprintf(name, sizeof name, "%s", str_or(model, s->name, "?"));
    else
      snprintf(name, sizeof name, "%s[%" PRId64 "]", str_or(model, s->name, "?"), s->idx);
    fprintf(out, "  %-45s %-9s %10" PRId64, name, str_or(model, s->severity, "?"), s->value);
    if (s->trace_id != TM_NULL_ID)
      fprintf(out, "  file [%" PRIu32 "]", s->trace_id);
    fputc('\n', out);
  }
  if (!any)
    fprintf(out, "  (none)\n");
}

static const char *const clock_names[] = {
    NULL, "REALTIME", "REALTIME_COARSE", "MONOTONIC", "MONOTONIC_COARSE",
    "MONOTONIC_RAW", "BOOTTIME",
};

/* "BOOTTIME, machine 0", "TRACE_FILE of client.json, machine 0",
 * "clock 64 of sequence 3 (file 2), machine 1". */
static void label_clock(void *ctx, tm_clock_node node, const tm_clock_key *key,
                        GString *out) {
  (void)node;
  const tm_model *model = ctx;
  if (key->clock_id == TM_CLOCK_TRACE_FILE && key->trace_file_id < model->trace_files.len &&
      model->trace_files.data[key->trace_file_id].is_container) {
    /* Node 0 stands for trace time before anyone claims it. */
    g_string_append(out, "TRACE_FILE (initial trace time)");
  } else if (key->clock_id == TM_CLOCK_TRACE_FILE && key->trace_file_id < model->trace_files.len) {
    const char *name = str_or(model, model->trace_files.data[key->trace_file_id].name, "");
    g_string_append_printf(out, "TRACE_FILE of %s", name);
  } else if (key->sequence_id) {
    g_string_append_printf(out, "clock %" PRIu32 " of sequence %" PRIu32 " (file %" PRIu32 ")",
                           key->clock_id, key->sequence_id, key->trace_file_id);
  } else if (key->clock_id < G_N_ELEMENTS(clock_names) && clock_names[key->clock_id]) {
    g_string_append(out, clock_names[key->clock_id]);
    if (key->trace_file_id)
      g_string_append_printf(out, " (file %" PRIu32 ")",
                             key->trace_file_id == import_isolation_tag(0) ? 0
                                                                             : key->trace_file_id);
  } else {
    g_string_append_printf(out, "clock %" PRIu32, key->clock_id);
  }
  g_string_append_printf(out, ", machine %" PRIu32, key->machine_id);
}

void tm_session_print_clock_graph_dot(tm_session *session, FILE *out) {
  clock_graph_print_dot(session->import.clocks, out, label_clock, session->import.model);
}
