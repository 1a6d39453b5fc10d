/*
 * Helpers of the clock graph's unit tests (test_clock_graph.c,
 * test_clock_bridging.c): nodes by their four key fields, nanosecond
 * readings, and snapshots and conversions that must succeed.
 */
#ifndef TM_TEST_CLOCK_GRAPH_CHECKS_H
#define TM_TEST_CLOCK_GRAPH_CHECKS_H

#include <glib.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

#include "clock/clock_graph.h"

/* Builtin clock ids as in docs/clock-model.md §9 (clock names -> ids). */
enum { REALTIME = 1, MONOTONIC = 3, BOOTTIME = 6, TRACE_FILE = 11 };

static inline tm_clock_node node(tm_clock_graph *g, uint32_t clock_id, uint32_t seq,
                          uint32_t file, uint32_t machine) {
  tm_clock_key key = {clock_id, seq, file, machine};
  return clock_graph_node(g, &key);
}

static inline tm_clock_reading ns(tm_clock_node n, int64_t value) {
  return (tm_clock_reading){.node = n, .value = value, .unit_ns = 1};
}

static inline int64_t snap2(tm_clock_graph *g, tm_clock_reading a, tm_clock_reading b) {
  tm_clock_reading r[2] = {a, b};
  GError *error = NULL;
  int64_t id = clock_graph_add_snapshot(g, r, 2, &error);
  g_assert_no_error(error);
  g_assert_cmpint(id, >=, 0);
  return id;
}

static inline int64_t convert_ok(tm_clock_graph *g, tm_clock_node from, int64_t value,
                          tm_clock_node to) {
  int64_t out = 0;
  g_assert_cmpint(clock_graph_convert(g, from, value, to, &out), ==, TM_CLOCK_OK);
  return out;
}

static inline int64_t trace_ok(tm_clock_graph *g, tm_clock_node from, int64_t value) {
  int64_t out = 0;
  g_assert_cmpint(clock_graph_to_trace_time(g, from, value, &out), ==, TM_CLOCK_OK);
  return out;
}

#endif /* TM_TEST_CLOCK_GRAPH_CHECKS_H */
