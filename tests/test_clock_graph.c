/* Unit tests of the clock graph: the worked examples of docs/clock-model.md §4
 * with their exact numbers, the snapshot rejections of §10.3 with their
 * exact messages, non-monotonic clocks, the 4-edge path limit, conversion
 * failures, the conversion spans the sorter relies on, the readings log,
 * DOT output and merging a file's nodes. Bridging machines and domains
 * (§6.4): test_clock_bridging.c. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "clock/clock_graph.h"
#include "clock_graph_checks.h"

/* Expects `readings` to be rejected with exactly `message`. */
static void expect_rejected(tm_clock_graph *g, const tm_clock_reading *readings,
                            size_t count, const char *message) {
  GError *error = NULL;
  g_assert_cmpint(clock_graph_add_snapshot(g, readings, count, &error), ==, -1);
  g_assert_error(error, TM_CLOCK_GRAPH_ERROR, TM_CLOCK_GRAPH_ERROR_SNAPSHOT_REJECTED);
  g_assert_cmpstr(error->message, ==, message);
  g_error_free(error);
}

/* --- nodes ------------------------------------------------------------- */

static void test_nodes_are_keyed_by_four_fields(void) {
  tm_clock_graph *g = clock_graph_new();
  /* §5: trace time starts as file 0's private clock (11,0,0,0). */
  tm_clock_node initial = clock_graph_trace_time(g);
  g_assert_cmpuint(initial, !=, TM_NO_CLOCK_NODE);
  g_assert_cmpuint(clock_graph_node_key(g, initial)->clock_id, ==, TRACE_FILE);
  g_assert_cmpuint(node(g, TRACE_FILE, 0, 0, 0), ==, initial);

  tm_clock_node a = node(g, BOOTTIME, 0, 0, 1);
  g_assert_cmpuint(node(g, BOOTTIME, 0, 0, 1), ==, a);
  tm_clock_node variants[] = {node(g, BOOTTIME, 0, 0, 2), node(g, BOOTTIME, 0, 3, 1),
                              node(g, BOOTTIME, 5, 0, 1), node(g, REALTIME, 0, 0, 1)};
  for (size_t i = 0; i < G_N_ELEMENTS(variants); i++) {
    g_assert_cmpuint(variants[i], !=, a);
    for (size_t j = 0; j < i; j++)
      g_assert_cmpuint(variants[i], !=, variants[j]);
  }
  g_assert_cmpuint(clock_graph_node_count(g), ==, 6);
  const tm_clock_key *key = clock_graph_node_key(g, variants[2]);
  g_assert_cmpuint(key->clock_id, ==, BOOTTIME);
  g_assert_cmpuint(key->sequence_id, ==, 5);
  g_assert_cmpuint(key->machine_id, ==, 1);
  g_assert_null(clock_graph_node_key(g, 999));

  tm_clock_key missing = {MONOTONIC, 0, 0, 9};
  g_assert_cmpuint(clock_graph_find_node(g, &missing), ==, TM_NO_CLOCK_NODE);
  g_assert_cmpuint(clock_graph_node_count(g), ==, 6);
  clock_graph_free(g);
}

static void test_many_nodes_survive_index_growth(void) {
  tm_clock_graph *g = clock_graph_new();
  const tm_clock_key *first = clock_graph_node_key(g, node(g, 200, 0, 0, 0));
  for (uint32_t i = 0; i < 5000; i++)
    g_assert_cmpuint(node(g, 128 + i % 7, i % 3, i, i / 11), ==, i + 2);
  g_assert_cmpuint(clock_graph_node_count(g), ==, 5002);
  for (uint32_t i = 0; i < 5000; i++) {
    tm_clock_key key = {128 + i % 7, i % 3, i, i / 11};
    g_assert_cmpuint(clock_graph_find_node(g, &key), ==, i + 2);
  }
  /* Keys never move. */
  g_assert_cmpuint(first->clock_id, ==, 200);
  g_assert_true(first == clock_graph_node_key(g, 1));
  clock_graph_free(g);
}

static void test_key_text_form(void) {
  tm_clock_key plain = {6, 0, 0, 0};
  tm_clock_key qualified = {6, 0, 2, 1};
  tm_clock_key sequence = {64, 3, 2, 0};
  char *a = clock_key_to_string(&plain);
  char *b = clock_key_to_string(&qualified);
  char *c = clock_key_to_string(&sequence);
  g_assert_cmpstr(a, ==, "6");
  g_assert_cmpstr(b, ==, "6(seq=0,tf=2,m=1)");
  g_assert_cmpstr(c, ==, "64(seq=3,tf=2,m=0)");
  g_free(a);
  g_free(b);
  g_free(c);
}

/* --- §4 worked examples ------------------------------------------------- */

static void test_worked_example_one_edge_three_snapshots(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  g_assert_cmpint(snap2(g, ns(mono, 1000), ns(boot, 2000)), ==, 0);
  g_assert_cmpint(snap2(g, ns(mono, 1100), ns(boot, 2100)), ==, 1);
  g_assert_cmpint(snap2(g, ns(mono, 2000), ns(boot, 3500)), ==, 2);
  /* MONO 1104: last entry <= 1104 is 1100 -> 2100 + 4 = 2104. */
  g_assert_cmpint(convert_ok(g, mono, 1104, boot), ==, 2104);
  /* MONO 900: below the first entry, use it -> 2000 - 100 = 1900. */
  g_assert_cmpint(convert_ok(g, mono, 900, boot), ==, 1900);
  /* MONO 2500: after the last -> 3500 + 500 = 4000. */
  g_assert_cmpint(convert_ok(g, mono, 2500, boot), ==, 4000);
  /* Exactly on a snapshot and no interpolation between two. */
  g_assert_cmpint(convert_ok(g, mono, 1100, boot), ==, 2100);
  g_assert_cmpint(convert_ok(g, mono, 1999, boot), ==, 2999);
  /* The reverse direction uses BOOT's series: BOOT 3000 -> last <= is
   * 2100 (MONO 1100) -> 1100 + 900 = 2000. */
  g_assert_cmpint(convert_ok(g, boot, 3000, mono), ==, 2000);
  /* The same value twice (cache hit) gives the same answer. */
  g_assert_cmpint(convert_ok(g, mono, 1104, boot), ==, 2104);
  g_assert_cmpint(convert_ok(g, mono, 1104, mono), ==, 1104);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, 3);
  clock_graph_free(g);
}

static void test_worked_example_two_hops(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node x = node(g, 130, 0, 0, 0);
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  snap2(g, ns(x, 3000), ns(mono, 3200));
  snap2(g, ns(mono, 1200), ns(boot, 5200));
  /* X 3503 -> MONO 3703 -> BOOT 5200 + 2503 = 7703. */
  g_assert_cmpint(convert_ok(g, x, 3503, boot), ==, 7703);
  /* And back: BOOT 7703 -> MONO 3703 -> X 3503. */
  g_assert_cmpint(convert_ok(g, boot, 7703, x), ==, 3503);
  char *why = clock_graph_describe_path(g, x, boot);
  g_assert_cmpstr(why, ==, "130 -[1 snapshot, +200 ns]-> 3 -[1 snapshot, +4000 ns]-> 6");
  g_free(why);
  clock_graph_free(g);
}

static void test_units_multiply_readings(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node us = node(g, 140, 0, 0, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_reading r[2] = {{.node = us, .value = 10, .unit_ns = 1000}, ns(boot, 50000)};
  g_assert_cmpint(clock_graph_add_snapshot(g, r, 2, NULL), ==, 0);
  /* Snapshot: us clock at 10 000 ns <-> BOOT 50 000. Event at raw 12 µs. */
  int64_t value = clock_graph_raw_to_ns(g, us, 12);
  g_assert_cmpint(value, ==, 12000);
  g_assert_cmpint(convert_ok(g, us, value, boot), ==, 52000);
  clock_graph_free(g);
}

static void test_incremental_sequence_clock_keeps_a_running_value(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node seq = node(g, 64, 7, 2, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_reading r[2] = {{.node = seq, .value = 100, .unit_ns = 10, .incremental = true},
                           ns(boot, 5000)};
  g_assert_cmpint(clock_graph_add_snapshot(g, r, 2, NULL), ==, 0);
  /* Snapshot value 100 x 10 = 1000 ns; deltas 5 and 3 (x 10) follow. */
  g_assert_cmpint(clock_graph_raw_to_ns(g, seq, 5), ==, 1050);
  g_assert_cmpint(clock_graph_raw_to_ns(g, seq, 3), ==, 1080);
  g_assert_cmpint(convert_ok(g, seq, 1080, boot), ==, 5080);
  /* A new snapshot resets the running value. */
  r[0].value = 200;
  r[1].value = 6000;
  g_assert_cmpint(clock_graph_add_snapshot(g, r, 2, NULL), ==, 1);
  g_assert_cmpint(clock_graph_raw_to_ns(g, seq, 1), ==, 2010);
  /* Non-incremental and unknown clocks just scale. */
  g_assert_cmpint(clock_graph_raw_to_ns(g, boot, 7), ==, 7);
  g_assert_cmpint(clock_graph_raw_to_ns(g, TM_NO_CLOCK_NODE, 7), ==, 7);
  clock_graph_free(g);
}

/* --- §10.3 rejections ---------------------------------------------------- */

static void test_rejects_incremental_global_clock(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  tm_clock_reading r[2] = {ns(mono, 1), {.node = boot, .value = 5, .unit_ns = 1, .incremental = true}};
  expect_rejected(g, r, 2,
                  "Clock sync error: the global clock with id=6 cannot use incremental "
                  "encoding; this is only supported for sequence-scoped clocks.");
  /* No edge was added, the id was consumed and nothing reached the log. */
  int64_t out;
  g_assert_cmpint(clock_graph_convert(g, mono, 1, boot, &out), ==, TM_CLOCK_UNKNOWN_TARGET);
  g_assert_cmpint(snap2(g, ns(mono, 1), ns(boot, 2)), ==, 1);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, 1);
  clock_graph_free(g);
}

static void test_rejects_unit_or_incremental_change(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 2, 1);
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  snap2(g, ns(mono, 1), ns(boot, 2));
  tm_clock_reading r[2] = {ns(mono, 3), {.node = boot, .value = 4, .unit_ns = 1000}};
  expect_rejected(g, r, 2,
                  "Clock sync error: the clock domain with id=6(seq=0,tf=2,m=1) "
                  "(unit=1000, incremental=0), was previously registered with different "
                  "properties (unit=1, incremental=0).");
  tm_clock_node seq = node(g, 70, 1, 2, 0);
  tm_clock_reading s[2] = {{.node = seq, .value = 1, .unit_ns = 1, .incremental = true}, ns(mono, 9)};
  g_assert_cmpint(clock_graph_add_snapshot(g, s, 2, NULL), ==, 2);
  s[0].incremental = false;
  s[1].value = 10;
  expect_rejected(g, s, 2,
                  "Clock sync error: the clock domain with id=70(seq=1,tf=2,m=0) "
                  "(unit=1, incremental=0), was previously registered with different "
                  "properties (unit=1, incremental=1).");
  clock_graph_free(g);
}

static void test_rejects_non_nanosecond_trace_clock(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  clock_graph_set_trace_time(g, boot);
  tm_clock_reading r[2] = {ns(mono, 1), {.node = boot, .value = 4, .unit_ns = 1000}};
  expect_rejected(g, r, 2,
                  "Clock sync error: the trace clock (id=6) must always use nanoseconds "
                  "as unit multiplier.");
  clock_graph_free(g);
}

static void test_rejects_duplicate_clock(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  snap2(g, ns(mono, 1), ns(boot, 2));
  tm_clock_reading r[3] = {ns(boot, 10), ns(mono, 11), ns(boot, 12)};
  expect_rejected(g, r, 3, "Clock sync error: duplicate clock domain with id=6 at snapshot 1.");
  /* The rejected snapshot added no conversion point: MONO 11 still uses
   * snapshot 0 (+1). */
  g_assert_cmpint(convert_ok(g, mono, 11, boot), ==, 12);
  clock_graph_free(g);
}

static void test_rejects_trace_clock_going_backwards(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  clock_graph_set_trace_time(g, boot);
  snap2(g, ns(mono, 100), ns(boot, 1000));
  snap2(g, ns(mono, 200), ns(boot, 1100));
  tm_clock_reading r[2] = {ns(mono, 300), ns(boot, 900)};
  expect_rejected(g, r, 2,
                  "Clock sync error: the trace clock (id=6) is not monotonic at snapshot 2. "
                  "900 not >= 1100.");
  /* Still converts with the two accepted snapshots. */
  g_assert_cmpint(trace_ok(g, mono, 350), ==, 1250);
  g_assert_true(clock_graph_node_is_monotonic(g, boot));
  clock_graph_free(g);
}

static void test_rejects_unknown_node_id(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_reading r[1] = {ns(77, 1)};
  expect_rejected(g, r, 1,
                  "Clock sync error: snapshot reading 0 names clock node 77, which does not exist.");
  clock_graph_free(g);
}

/* --- non-monotonic clocks ------------------------------------------------ */

static void test_realtime_going_back_is_no_longer_a_source(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node rt = node(g, REALTIME, 0, 0, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  snap2(g, ns(boot, 1000), ns(rt, 50000));
  g_assert_cmpint(convert_ok(g, rt, 50010, boot), ==, 1010);
  /* REALTIME jumps back an hour (here 40 000 ns) while BOOT goes on. */
  snap2(g, ns(boot, 2000), ns(rt, 10000));
  g_assert_false(clock_graph_node_is_monotonic(g, rt));
  g_assert_true(clock_graph_node_is_monotonic(g, boot));
  int64_t out = -1;
  g_assert_cmpint(clock_graph_convert(g, rt, 50010, boot, &out), ==, TM_CLOCK_NO_PATH);
  /* It still works as a target: BOOT 2500 -> last <= is 2000 -> 10 500. */
  g_assert_cmpint(convert_ok(g, boot, 2500, rt), ==, 10500);
  g_assert_cmpint(convert_ok(g, boot, 1500, rt), ==, 50500);
  /* Later snapshots never bring its outgoing edges back. */
  snap2(g, ns(boot, 3000), ns(rt, 11000));
  g_assert_cmpint(clock_graph_convert(g, rt, 11000, boot, &out), ==, TM_CLOCK_NO_PATH);
  clock_graph_free(g);
}

static void test_non_monotonic_clock_is_not_an_intermediate_hop(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node a = node(g, 130, 0, 0, 0);
  tm_clock_node rt = node(g, REALTIME, 0, 0, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  snap2(g, ns(a, 10), ns(rt, 100));
  snap2(g, ns(rt, 100), ns(boot, 1000));
  g_assert_cmpint(convert_ok(g, a, 11, boot), ==, 1001);
  snap2(g, ns(rt, 50), ns(boot, 2000)); /* rt goes back in its {rt, boot} series */
  int64_t out;
  g_assert_cmpint(clock_graph_convert(g, a, 11, boot, &out), ==, TM_CLOCK_NO_PATH);
  g_assert_false(clock_graph_has_path(g, a, boot));
  clock_graph_free(g);
}

/* --- paths and failures --------------------------------------------------- */

static void chain(tm_clock_graph *g, tm_clock_node *nodes, size_t n) {
  for (size_t i = 0; i < n; i++)
    nodes[i] = node(g, 128 + (uint32_t)i, 0, 0, 0);
  for (size_t i = 0; i + 1 < n; i++)
    snap2(g, ns(nodes[i], 0), ns(nodes[i + 1], 10));
}

static void test_four_edges_reach_five_do_not(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node n[6];
  chain(g, n, 6);
  /* Each edge adds 10: n0 -> n4 is 4 edges -> +40. */
  g_assert_cmpint(convert_ok(g, n[0], 1, n[4]), ==, 41);
  g_assert_cmpint(convert_ok(g, n[5], 41, n[1]), ==, 1);
  int64_t out = -1;
  g_assert_cmpint(clock_graph_convert(g, n[0], 1, n[5], &out), ==, TM_CLOCK_NO_PATH);
  g_assert_cmpint(out, ==, -1);
  g_assert_cmpint(clock_graph_convert(g, n[5], 1, n[0], &out), ==, TM_CLOCK_NO_PATH);
  g_assert_false(clock_graph_has_path(g, n[0], n[5]));
  g_assert_true(clock_graph_has_path(g, n[0], n[4]));
  char *why = clock_graph_describe_path(g, n[0], n[5]);
  g_assert_cmpstr(why, ==, "128 -> 133: no path of at most 4 edges");
  g_free(why);
  /* A shortcut makes it reachable again, through the shortest path. */
  snap2(g, ns(n[0], 0), ns(n[3], 1000));
  g_assert_cmpint(convert_ok(g, n[0], 1, n[5]), ==, 1021);
  clock_graph_free(g);
}

static void test_unknown_source_and_target(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  tm_clock_node lonely = node(g, 140, 0, 0, 0);
  tm_clock_node other = node(g, 141, 0, 0, 0);
  int64_t out = -1;
  g_assert_cmpint(clock_graph_convert(g, lonely, 5, boot, &out), ==, TM_CLOCK_UNKNOWN_SOURCE);
  snap2(g, ns(mono, 1), ns(boot, 2));
  g_assert_cmpint(clock_graph_convert(g, lonely, 5, boot, &out), ==, TM_CLOCK_UNKNOWN_SOURCE);
  g_assert_cmpint(clock_graph_convert(g, mono, 5, lonely, &out), ==, TM_CLOCK_UNKNOWN_TARGET);
  g_assert_cmpint(clock_graph_convert(g, TM_NO_CLOCK_NODE, 5, boot, &out), ==,
                  TM_CLOCK_UNKNOWN_SOURCE);
  g_assert_cmpint(clock_graph_convert(g, mono, 5, 12345, &out), ==, TM_CLOCK_UNKNOWN_TARGET);
  /* Two known clocks with no relation: no path. */
  snap2(g, ns(lonely, 1), ns(other, 2));
  g_assert_cmpint(clock_graph_convert(g, lonely, 5, boot, &out), ==, TM_CLOCK_NO_PATH);
  g_assert_cmpint(out, ==, -1);
  /* Trace time is unknown to the graph (nobody snapshotted 11). */
  g_assert_cmpint(clock_graph_to_trace_time(g, mono, 5, &out), ==, TM_CLOCK_UNKNOWN_TARGET);
  /* ... but a clock converts to itself unchanged, known or not. */
  g_assert_cmpint(convert_ok(g, node(g, 150, 0, 0, 0), 77, node(g, 150, 0, 0, 0)), ==, 77);

  g_assert_cmpstr(clock_failure_stat_name(TM_CLOCK_UNKNOWN_SOURCE), ==,
                  "clock_sync_failure_unknown_source_clock");
  g_assert_cmpstr(clock_failure_stat_name(TM_CLOCK_UNKNOWN_TARGET), ==,
                  "clock_sync_failure_unknown_target_clock");
  g_assert_cmpstr(clock_failure_stat_name(TM_CLOCK_NO_PATH), ==, "clock_sync_failure_no_path");
  g_assert_null(clock_failure_stat_name(TM_CLOCK_OK));
  char *why = clock_graph_describe_path(g, node(g, 150, 0, 0, 0), boot);
  g_assert_cmpstr(why, ==, "150 -> 6: unknown source clock");
  g_free(why);
  why = clock_graph_describe_path(g, mono, node(g, 150, 0, 0, 0));
  g_assert_cmpstr(why, ==, "3 -> 150: unknown target clock");
  g_free(why);
  clock_graph_free(g);
}

static void test_offsets_add_along_a_path(void) {
  /* §9.3: A related to B with +300 and B to C with +200 -> A T is C T+500,
   * each edge a one-snapshot {source: max(0, -off), reference: max(0, off)}. */
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node a = node(g, BOOTTIME, 0, 0, 1);
  tm_clock_node b = node(g, BOOTTIME, 0, 0, 2);
  tm_clock_node c = node(g, BOOTTIME, 0, 0, 3);
  snap2(g, ns(a, 0), ns(b, 300));
  snap2(g, ns(b, 0), ns(c, 200));
  g_assert_cmpint(convert_ok(g, a, 1000, c), ==, 1500);
  g_assert_cmpint(convert_ok(g, c, 1500, a), ==, 1000);
  clock_graph_free(g);
}

/* --- spans (what the sorter uses) ---------------------------------------- */

static void test_single_snapshot_path_gives_a_constant_span(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node a = node(g, BOOTTIME, 0, 0, 1);
  tm_clock_node b = node(g, BOOTTIME, 0, 0, 2);
  snap2(g, ns(a, 0), ns(b, 300));
  tm_clock_span span;
  g_assert_cmpint(clock_graph_span(g, a, 5, b, &span), ==, TM_CLOCK_OK);
  g_assert_cmpint(span.offset_ns, ==, 300);
  g_assert_cmpint(span.first, ==, INT64_MIN);
  g_assert_cmpint(span.last, ==, INT64_MAX - 300);
  /* A value whose result would overflow is refused, never wrapped: the
   * first value past the span's last is the first that overflows. */
  g_assert_cmpint(clock_graph_span(g, a, INT64_MAX, b, &span), ==, TM_CLOCK_OVERFLOW);
  g_assert_cmpint(clock_graph_span(g, a, INT64_MAX - 299, b, &span), ==, TM_CLOCK_OVERFLOW);
  g_assert_cmpint(clock_graph_span(g, a, INT64_MAX - 300, b, &span), ==, TM_CLOCK_OK);
  int64_t converted = 0;
  g_assert_cmpint(clock_graph_convert(g, a, INT64_MAX, b, &converted), ==, TM_CLOCK_OVERFLOW);
  g_assert_cmpint(clock_graph_span(g, a, 5, a, &span), ==, TM_CLOCK_OK);
  g_assert_cmpint(span.offset_ns, ==, 0);
  g_assert_cmpint(span.first, ==, INT64_MIN);
  g_assert_cmpint(span.last, ==, INT64_MAX);
  tm_clock_node lonely = node(g, 140, 0, 0, 0);
  g_assert_cmpint(clock_graph_span(g, lonely, 5, b, &span), ==, TM_CLOCK_UNKNOWN_SOURCE);
  clock_graph_free(g);
}

static void test_span_covers_exactly_the_values_of_one_snapshot(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node x = node(g, 130, 0, 0, 0);
  snap2(g, ns(mono, 1000), ns(boot, 2000));
  snap2(g, ns(mono, 1100), ns(boot, 2100));
  snap2(g, ns(mono, 2000), ns(boot, 3500));
  snap2(g, ns(x, 0), ns(mono, 100)); /* x = mono - 100 */
  tm_clock_span span;
  g_assert_cmpint(clock_graph_span(g, mono, 1500, boot, &span), ==, TM_CLOCK_OK);
  g_assert_cmpint(span.offset_ns, ==, 1000);
  g_assert_cmpint(span.first, ==, 1100);
  g_assert_cmpint(span.last, ==, 1999);
  g_assert_cmpint(clock_graph_span(g, mono, 5, boot, &span), ==, TM_CLOCK_OK);
  g_assert_cmpint(span.first, ==, INT64_MIN);
  g_assert_cmpint(span.last, ==, 1099);
  /* Two hops: the range is shifted into the source's coordinates. */
  /* x 2500 -> MONO 2600 -> last snapshot (+1500): from x 1900 upwards. */
  g_assert_cmpint(clock_graph_span(g, x, 2500, boot, &span), ==, TM_CLOCK_OK);
  g_assert_cmpint(span.offset_ns, ==, 1600);
  g_assert_cmpint(span.first, ==, 1900);
  g_assert_cmpint(span.last, ==, INT64_MAX - 1600);
  /* Every value agrees with a fresh conversion. */
  for (int64_t v = 800; v < 2300; v += 7) {
    g_assert_cmpint(clock_graph_span(g, x, v, boot, &span), ==, TM_CLOCK_OK);
    g_assert_cmpint(v, >=, span.first);
    g_assert_cmpint(v, <=, span.last);
    int64_t expected_mono = v + 100;
    int64_t expected = expected_mono < 1100   ? expected_mono + 1000
                       : expected_mono < 2000 ? expected_mono + 1000
                                              : expected_mono + 1500;
    g_assert_cmpint(convert_ok(g, x, v, boot), ==, expected);
    g_assert_cmpint(clock_span_apply(&span, span.first), ==, convert_ok(g, x, span.first, boot));
    g_assert_cmpint(clock_span_apply(&span, span.last), ==, convert_ok(g, x, span.last, boot));
  }
  clock_graph_free(g);
}

static void test_cache_is_cleared_when_the_graph_changes(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node x = node(g, 130, 0, 0, 0);
  snap2(g, ns(mono, 1000), ns(boot, 2000));
  g_assert_cmpint(convert_ok(g, mono, 5000, boot), ==, 6000);
  snap2(g, ns(mono, 3000), ns(boot, 9000));
  g_assert_cmpint(convert_ok(g, mono, 5000, boot), ==, 11000);
  /* A path that failed is found once an edge appears. */
  int64_t out;
  snap2(g, ns(x, 0), ns(node(g, 131, 0, 0, 0), 0));
  g_assert_cmpint(clock_graph_convert(g, x, 1, boot, &out), ==, TM_CLOCK_NO_PATH);
  snap2(g, ns(x, 0), ns(mono, 1000));
  g_assert_cmpint(convert_ok(g, x, 1, boot), ==, 2001);
  clock_graph_free(g);
}

static void test_many_sources_thrash_the_cache_correctly(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node src[20];
  for (uint32_t i = 0; i < 20; i++) {
    src[i] = node(g, 128 + i, 0, 0, 0);
    snap2(g, ns(src[i], 0), ns(boot, 1000 * (int64_t)i));
  }
  clock_graph_set_trace_time(g, boot);
  for (int round = 0; round < 3; round++)
    for (uint32_t i = 0; i < 20; i++)
      g_assert_cmpint(trace_ok(g, src[i], 7 + round), ==, 7 + round + 1000 * (int64_t)i);
  clock_graph_free(g);
}

/* --- readings log ---------------------------------------------------------- */

typedef struct reading_record {
  int64_t snapshot_id;
  tm_clock_node node;
  int64_t value_ns;
} reading_record;

static void record_reading(void *ctx, int64_t snapshot_id, tm_clock_node n, int64_t value_ns) {
  GArray *out = ctx;
  reading_record r = {snapshot_id, n, value_ns};
  g_array_append_val(out, r);
}

static void test_readings_are_visited_in_insertion_order(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node us = node(g, 140, 0, 0, 0);
  snap2(g, ns(boot, 20), ns(mono, 10));
  tm_clock_reading bad[2] = {ns(mono, 1), ns(mono, 2)};
  g_assert_cmpint(clock_graph_add_snapshot(g, bad, 2, NULL), ==, -1);
  tm_clock_reading r[3] = {ns(mono, 30), ns(boot, 40), {.node = us, .value = 5, .unit_ns = 1000}};
  g_assert_cmpint(clock_graph_add_snapshot(g, r, 3, NULL), ==, 2);
  /* An empty snapshot takes an id and relates nothing. */
  g_assert_cmpint(clock_graph_add_snapshot(g, NULL, 0, NULL), ==, 3);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, 3);
  GArray *seen = g_array_new(FALSE, FALSE, sizeof(reading_record));
  clock_graph_foreach_reading(g, record_reading, seen);
  reading_record expected[] = {{0, boot, 20}, {0, mono, 10}, {2, mono, 30},
                               {2, boot, 40}, {2, us, 5000}};
  g_assert_cmpuint(seen->len, ==, G_N_ELEMENTS(expected));
  for (size_t i = 0; i < G_N_ELEMENTS(expected); i++) {
    reading_record *got = &g_array_index(seen, reading_record, i);
    g_assert_cmpint(got->snapshot_id, ==, expected[i].snapshot_id);
    g_assert_cmpuint(got->node, ==, expected[i].node);
    g_assert_cmpint(got->value_ns, ==, expected[i].value_ns);
  }
  g_array_free(seen, TRUE);
  clock_graph_free(g);
}

/* --- DOT ------------------------------------------------------------------ */

static void label_machine(void *ctx, tm_clock_node n, const tm_clock_key *key, GString *out) {
  (void)ctx;
  (void)n;
  g_string_append_printf(out, "clock \"%u\" on m%u", key->clock_id, key->machine_id);
}

static void test_dot_lists_nodes_and_edges(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node rt = node(g, REALTIME, 0, 0, 1);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 1);
  snap2(g, ns(boot, 1), ns(rt, 10));
  snap2(g, ns(boot, 2), ns(rt, 5));
  clock_graph_set_trace_time(g, boot);
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  clock_graph_print_dot(g, out, label_machine, NULL);
  fclose(out);
  g_assert_cmpstr(text, ==,
                  "digraph clocks {\n"
                  "  n0 [label=\"clock \\\"11\\\" on m0\"];\n"
                  "  n1 [label=\"clock \\\"1\\\" on m1\" style=dashed];\n"
                  "  n2 [label=\"clock \\\"6\\\" on m1\" shape=doublecircle];\n"
                  "  n2 -> n1 [label=\"set 0 x2\"];\n"
                  "}\n");
  free(text);
  out = open_memstream(&text, &size);
  clock_graph_print_dot(g, out, NULL, NULL);
  fclose(out);
  g_assert_nonnull(strstr(text, "n1 [label=\"1(seq=0,tf=0,m=1)\" style=dashed]"));
  free(text);
  clock_graph_free(g);
}

/* --- merging a file's nodes into the canonical ones -------------------- */

typedef struct logged {
  int64_t snapshot_id;
  tm_clock_node node;
  int64_t value_ns;
} logged;

static void collect_reading(void *ctx, int64_t snapshot_id, tm_clock_node n,
                            int64_t value_ns) {
  g_array_append_val((GArray *)ctx, ((logged){snapshot_id, n, value_ns}));
}

/* A primary file decided after reading (docs/clock-model.md §2): its snapshot
 * {BOOTTIME 1000, REALTIME 5000} sat on its own nodes (file 2); merged
 * into the machine-canonical nodes, it joins the edge the manifest gave
 * canonical BOOTTIME ({machine 1 BOOTTIME 500, BOOTTIME 0}, i.e. machine 0
 * BOOTTIME = machine 1 BOOTTIME - 500): REALTIME 5100 -> BOOTTIME 1100 ->
 * machine 1 BOOTTIME 1600, which had no path before. The snapshot log and
 * trace time follow the merged node. */
static void test_merge_moves_readings_to_the_canonical_node(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0), rt = node(g, REALTIME, 0, 0, 0);
  tm_clock_node other = node(g, BOOTTIME, 0, 0, 1);
  tm_clock_node own_boot = node(g, BOOTTIME, 0, 2, 0), own_rt = node(g, REALTIME, 0, 2, 0);
  snap2(g, ns(other, 500), ns(boot, 0));
  snap2(g, ns(own_boot, 1000), ns(own_rt, 5000));
  clock_graph_set_trace_time(g, own_boot);
  int64_t out;
  g_assert_cmpint(clock_graph_convert(g, rt, 5100, other, &out), ==, TM_CLOCK_UNKNOWN_SOURCE);
  g_assert_true(clock_graph_merge_node(g, own_boot, boot));
  g_assert_true(clock_graph_merge_node(g, own_rt, rt));
  g_assert_cmpint(convert_ok(g, rt, 5100, other), ==, 1600);
  g_assert_cmpint(convert_ok(g, other, 1600, rt), ==, 5100);
  g_assert_cmpuint(clock_graph_trace_time(g), ==, boot);
  g_assert_false(clock_graph_has_path(g, own_rt, other));
  GArray *log = g_array_new(FALSE, FALSE, sizeof(logged));
  clock_graph_foreach_reading(g, collect_reading, log);
  g_assert_cmpuint(log->len, ==, 4);
  const logged *second = &g_array_index(log, logged, 2), *third = &g_array_index(log, logged, 3);
  g_assert_cmpint(second->snapshot_id, ==, 1);
  g_assert_true((second->node == boot && second->value_ns == 1000 && third->node == rt &&
                 third->value_ns == 5000) ||
                (second->node == rt && second->value_ns == 5000 && third->node == boot &&
                 third->value_ns == 1000));
  g_array_free(log, TRUE);
  clock_graph_free(g);
}

/* Refusals leave the graph as it was: a snapshot that read both nodes
 * (the merged snapshot would read one clock twice); a snapshot over the
 * same clocks as an existing one once merged (two series of one edge
 * set); different units. */
static void test_merge_refuses_what_it_cannot_keep(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0), other = node(g, BOOTTIME, 0, 0, 1);
  tm_clock_node both = node(g, BOOTTIME, 0, 2, 0), twin = node(g, BOOTTIME, 0, 3, 0);
  tm_clock_node micro = node(g, MONOTONIC, 0, 4, 0), mono = node(g, MONOTONIC, 0, 0, 0);
  snap2(g, ns(other, 500), ns(boot, 0));
  snap2(g, ns(both, 7), ns(boot, 9));
  snap2(g, ns(twin, 1), ns(other, 2));
  tm_clock_reading in_us[2] = {{.node = micro, .value = 1, .unit_ns = 1000}, ns(other, 3)};
  g_assert_cmpint(clock_graph_add_snapshot(g, in_us, 2, NULL), >=, 0);
  snap2(g, ns(mono, 4), ns(boot, 5));
  g_assert_false(clock_graph_merge_node(g, both, boot));
  g_assert_false(clock_graph_merge_node(g, twin, boot));
  g_assert_false(clock_graph_merge_node(g, micro, mono));
  g_assert_false(clock_graph_merge_node(g, boot, boot));
  g_assert_cmpint(convert_ok(g, twin, 1, other), ==, 2);
  g_assert_cmpint(convert_ok(g, both, 7, boot), ==, 9);
  g_assert_cmpint(convert_ok(g, micro, 1000, other), ==, 3);
  clock_graph_free(g);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/clock-graph/nodes/are-keyed-by-four-fields", test_nodes_are_keyed_by_four_fields);
  g_test_add_func("/clock-graph/nodes/survive-index-growth", test_many_nodes_survive_index_growth);
  g_test_add_func("/clock-graph/nodes/text-form", test_key_text_form);
  g_test_add_func("/clock-graph/convert/worked-example-one-edge-three-snapshots",
                  test_worked_example_one_edge_three_snapshots);
  g_test_add_func("/clock-graph/convert/worked-example-two-hops", test_worked_example_two_hops);
  g_test_add_func("/clock-graph/convert/units-multiply-readings", test_units_multiply_readings);
  g_test_add_func("/clock-graph/convert/incremental-clock-keeps-a-running-value",
                  test_incremental_sequence_clock_keeps_a_running_value);
  g_test_add_func("/clock-graph/snapshot-rejected/incremental-global-clock",
                  test_rejects_incremental_global_clock);
  g_test_add_func("/clock-graph/snapshot-rejected/unit-or-incremental-change",
                  test_rejects_unit_or_incremental_change);
  g_test_add_func("/clock-graph/snapshot-rejected/non-nanosecond-trace-clock",
                  test_rejects_non_nanosecond_trace_clock);
  g_test_add_func("/clock-graph/snapshot-rejected/duplicate-clock", test_rejects_duplicate_clock);
  g_test_add_func("/clock-graph/snapshot-rejected/trace-clock-going-backwards",
                  test_rejects_trace_clock_going_backwards);
  g_test_add_func("/clock-graph/snapshot-rejected/unknown-node-id", test_rejects_unknown_node_id);
  g_test_add_func("/clock-graph/non-monotonic/realtime-going-back-is-no-longer-a-source",
                  test_realtime_going_back_is_no_longer_a_source);
  g_test_add_func("/clock-graph/non-monotonic/clock-is-not-an-intermediate-hop",
                  test_non_monotonic_clock_is_not_an_intermediate_hop);
  g_test_add_func("/clock-graph/path/four-edges-reach-five-do-not", test_four_edges_reach_five_do_not);
  g_test_add_func("/clock-graph/path/unknown-source-and-target", test_unknown_source_and_target);
  g_test_add_func("/clock-graph/path/offsets-add-along-a-path", test_offsets_add_along_a_path);
  g_test_add_func("/clock-graph/span/single-snapshot-path-is-constant",
                  test_single_snapshot_path_gives_a_constant_span);
  g_test_add_func("/clock-graph/span/covers-exactly-one-snapshot",
                  test_span_covers_exactly_the_values_of_one_snapshot);
  g_test_add_func("/clock-graph/cache/cleared-when-the-graph-changes",
                  test_cache_is_cleared_when_the_graph_changes);
  g_test_add_func("/clock-graph/cache/many-sources-thrash-it-correctly",
                  test_many_sources_thrash_the_cache_correctly);
  g_test_add_func("/clock-graph/readings/visited-in-insertion-order",
                  test_readings_are_visited_in_insertion_order);
  g_test_add_func("/clock-graph/dot/lists-nodes-and-edges", test_dot_lists_nodes_and_edges);
  g_test_add_func("/clock-graph/merge/moves-readings-to-the-canonical-node",
                  test_merge_moves_readings_to_the_canonical_node);
  g_test_add_func("/clock-graph/merge/refuses-what-it-cannot-keep",
                  test_merge_refuses_what_it_cannot_keep);
  return g_test_run();
}
