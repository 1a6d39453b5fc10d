/* Unit tests of the clock graph's bridging (docs/clock-model.md §6.4): the
 * worked examples of the spine with their exact numbers, realtime
 * rendezvous between machines, and every fallback when a domain cannot be
 * related. The graph's own mechanics: test_clock_graph.c. */
#include <glib.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "clock/clock_graph.h"
#include "clock_graph_checks.h"

/* --- §6.4 worked examples and bridging ----------------------------------- */

/* The spine proto of §6.4 on machine `m`, file `tf` (0: canonical). */
static void spine(tm_clock_graph *g, uint32_t m, int64_t boot, int64_t realtime, int64_t mono) {
  tm_clock_reading r[3] = {ns(node(g, BOOTTIME, 0, 0, m), boot),
                           ns(node(g, REALTIME, 0, 0, m), realtime),
                           ns(node(g, MONOTONIC, 0, 0, m), mono)};
  g_assert_cmpint(clock_graph_add_snapshot(g, r, mono ? 3 : 2, NULL), >=, 0);
}

static void test_spine_systrace_line_converts_through_monotonic(void) {
  tm_clock_graph *g = clock_graph_new();
  spine(g, 0, 1000000000, 1700000001000000000, 500000000);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  clock_graph_set_trace_time(g, boot);
  tm_clock_node mono = node(g, MONOTONIC, 0, 0, 0);
  g_assert_cmpint(clock_graph_bridge(g, mono), ==, TM_BRIDGE_DIRECT);
  /* systrace 1.000000 s = MONO 1e9 -> BOOT 1e9 + 5e8 = 1 500 000 000. */
  g_assert_cmpint(trace_ok(g, mono, 1000000000), ==, 1500000000);
  clock_graph_free(g);
}

static void test_spine_json_private_clock_pins_at_zero(void) {
  tm_clock_graph *g = clock_graph_new();
  spine(g, 0, 1000000000, 1700000001000000000, 500000000);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  clock_graph_set_trace_time(g, boot);
  tm_clock_node json = node(g, TRACE_FILE, 0, 2, 0);
  size_t before = clock_graph_snapshot_count(g);
  g_assert_cmpint(clock_graph_bridge(g, json), ==, TM_BRIDGE_SAME_DOMAIN);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, before + 1);
  /* JSON ts 2000 µs = 2 000 000 ns, equated with trace time. */
  g_assert_cmpint(trace_ok(g, json, 2000 * 1000), ==, 2000000);
  /* Bridging again finds the path it added. */
  g_assert_cmpint(clock_graph_bridge(g, json), ==, TM_BRIDGE_DIRECT);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, before + 1);
  clock_graph_free(g);
}

static void test_spine_with_realtime_trace_time(void) {
  tm_clock_graph *g = clock_graph_new();
  spine(g, 0, 1000000000, 1700000001000000000, 500000000);
  clock_graph_set_trace_time(g, node(g, REALTIME, 0, 0, 0));
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  g_assert_cmpint(clock_graph_bridge(g, boot), ==, TM_BRIDGE_DIRECT);
  /* BOOT 1.1e9 -> REALTIME 1 700 000 001 000 000 000 + 1e8. */
  g_assert_cmpint(trace_ok(g, boot, 1100000000), ==, 1700000001100000000);
  clock_graph_free(g);
}

static void test_realtime_rendezvous_two_machines(void) {
  tm_clock_graph *g = clock_graph_new();
  /* phone = machine 1, server = machine 2, each {BOOT 1e9, REALTIME ...}. */
  spine(g, 1, 1000000000, 1700000001000000000, 0);
  spine(g, 2, 1000000000, 1700000002000000000, 0);
  tm_clock_node phone_boot = node(g, BOOTTIME, 0, 0, 1);
  tm_clock_node server_boot = node(g, BOOTTIME, 0, 0, 2);
  clock_graph_set_trace_time(g, phone_boot);
  g_assert_cmpint(clock_graph_bridge(g, phone_boot), ==, TM_BRIDGE_DIRECT);
  g_assert_cmpint(clock_graph_bridge(g, server_boot), ==, TM_BRIDGE_REALTIME);
  /* phone slice BOOT 1.1e9 -> 1 100 000 000; server BOOT 1.1e9 ->
   * server RT 1.700000002e18 + 1e8 = phone RT -> phone BOOT 1e9 + 1.1e9. */
  g_assert_cmpint(trace_ok(g, phone_boot, 1100000000), ==, 1100000000);
  g_assert_cmpint(trace_ok(g, server_boot, 1100000000), ==, 2100000000);
  /* The rendezvous edge is an ordinary snapshot between the REALTIMEs. */
  char *why = clock_graph_describe_path(g, server_boot, phone_boot);
  g_assert_cmpstr(why, ==,
                  "6(seq=0,tf=0,m=2) -[1 snapshot, +1700000001000000000 ns]-> "
                  "1(seq=0,tf=0,m=2) -[1 snapshot, +0 ns]-> 1(seq=0,tf=0,m=1) "
                  "-[1 snapshot, -1700000000000000000 ns]-> 6(seq=0,tf=0,m=1)");
  g_free(why);
  clock_graph_free(g);
}

static void test_realtime_rendezvous_three_machines(void) {
  tm_clock_graph *g = clock_graph_new();
  spine(g, 1, 1000000000, 1700000001000000000, 0);
  spine(g, 2, 5000000000, 1700000002000000000, 0);
  spine(g, 3, 7000000000, 1700000000500000000, 0);
  tm_clock_node boot1 = node(g, BOOTTIME, 0, 0, 1);
  tm_clock_node boot2 = node(g, BOOTTIME, 0, 0, 2);
  tm_clock_node boot3 = node(g, BOOTTIME, 0, 0, 3);
  clock_graph_set_trace_time(g, boot1);
  size_t before = clock_graph_snapshot_count(g);
  g_assert_cmpint(clock_graph_bridge(g, boot2), ==, TM_BRIDGE_REALTIME);
  g_assert_cmpint(clock_graph_bridge(g, boot3), ==, TM_BRIDGE_REALTIME);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, before + 2);
  /* m2 BOOT 5.1e9 -> RT 1.700000002e18 + 1e8 -> m1 BOOT 1e9 + 1.1e9. */
  g_assert_cmpint(trace_ok(g, boot2, 5100000000), ==, 2100000000);
  /* m3 BOOT 7.2e9 -> RT 1.7000000005e18 + 2e8 -> m1 BOOT 1e9 - 5e8 + 2e8. */
  g_assert_cmpint(trace_ok(g, boot3, 7200000000), ==, 700000000);
  /* Machines 2 and 3 now relate to each other through machine 1's REALTIME. */
  /* m3 7.2e9 <-> trace 0.7e9 <-> m2 3.7e9 (m2 trace = BOOT - 3e9). */
  g_assert_cmpint(convert_ok(g, boot3, 7200000000, boot2), ==, 3700000000);
  /* A second bridge of machine 3 adds nothing. */
  g_assert_cmpint(clock_graph_bridge(g, boot3), ==, TM_BRIDGE_DIRECT);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, before + 2);
  clock_graph_free(g);
}

static void test_rendezvous_reuses_an_existing_realtime_edge(void) {
  tm_clock_graph *g = clock_graph_new();
  /* machine 2's BOOT reaches its REALTIME in 3 hops, and REALTIME 2 is
   * already tied to REALTIME 1 (e.g. by remote sync), so the full path
   * (5 edges) is too long but the rendezvous edge exists. */
  tm_clock_node a = node(g, 130, 0, 0, 2), b = node(g, 131, 0, 0, 2);
  tm_clock_node boot2 = node(g, BOOTTIME, 0, 0, 2), rt2 = node(g, REALTIME, 0, 0, 2);
  tm_clock_node boot1 = node(g, BOOTTIME, 0, 0, 1), rt1 = node(g, REALTIME, 0, 0, 1);
  snap2(g, ns(boot2, 0), ns(a, 0));
  snap2(g, ns(a, 0), ns(b, 0));
  snap2(g, ns(b, 0), ns(rt2, 0));
  snap2(g, ns(rt2, 0), ns(rt1, 0));
  snap2(g, ns(rt1, 0), ns(boot1, 0));
  clock_graph_set_trace_time(g, boot1);
  size_t before = clock_graph_snapshot_count(g);
  g_assert_cmpint(clock_graph_bridge(g, boot2), ==, TM_BRIDGE_REALTIME);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, before);
  clock_graph_free(g);
}

static void test_same_domain_fallback_when_server_has_only_boottime(void) {
  tm_clock_graph *g = clock_graph_new();
  spine(g, 1, 1000000000, 1700000001000000000, 0);
  tm_clock_node server_boot = node(g, BOOTTIME, 0, 0, 2);
  tm_clock_node server_mono = node(g, MONOTONIC, 0, 0, 2);
  snap2(g, ns(server_boot, 1000000000), ns(server_mono, 400));
  tm_clock_node phone_boot = node(g, BOOTTIME, 0, 0, 1);
  clock_graph_set_trace_time(g, phone_boot);
  g_assert_cmpint(clock_graph_bridge(g, server_boot), ==, TM_BRIDGE_SAME_DOMAIN);
  /* Same boot instant guess: server BOOT 3e9 -> 3 000 000 000. */
  g_assert_cmpint(trace_ok(g, server_boot, 3000000000), ==, 3000000000);
  /* Its other clocks follow through their own snapshots. */
  g_assert_cmpint(trace_ok(g, server_mono, 500), ==, 1000000100);
  clock_graph_free(g);
}

static void test_no_realtime_on_trace_machine_overlays_boottime(void) {
  tm_clock_graph *g = clock_graph_new();
  /* Trace-time machine 1 has only BOOT + MONO; machine 2 has REALTIME. */
  tm_clock_node boot1 = node(g, BOOTTIME, 0, 0, 1);
  snap2(g, ns(boot1, 1000), ns(node(g, MONOTONIC, 0, 0, 1), 500));
  spine(g, 2, 4000, 1700000002000000000, 0);
  tm_clock_node boot2 = node(g, BOOTTIME, 0, 0, 2);
  clock_graph_set_trace_time(g, boot1);
  g_assert_cmpint(clock_graph_bridge(g, boot2), ==, TM_BRIDGE_SAME_DOMAIN);
  g_assert_cmpint(trace_ok(g, boot2, 4500), ==, 4500);
  clock_graph_free(g);
}

static void test_unrelatable_domains_add_nothing(void) {
  tm_clock_graph *g = clock_graph_new();
  /* trace_time REALTIME on the phone; the server has only BOOTTIME. */
  spine(g, 1, 1000000000, 1700000001000000000, 0);
  clock_graph_set_trace_time(g, node(g, REALTIME, 0, 0, 1));
  tm_clock_node server_boot = node(g, BOOTTIME, 0, 0, 2);
  snap2(g, ns(server_boot, 1000000000), ns(node(g, MONOTONIC, 0, 0, 2), 0));
  size_t before = clock_graph_snapshot_count(g);
  g_assert_cmpint(clock_graph_bridge(g, server_boot), ==, TM_BRIDGE_UNRELATABLE);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, before);
  int64_t out;
  g_assert_cmpint(clock_graph_to_trace_time(g, server_boot, 1100000000, &out), ==,
                  TM_CLOCK_NO_PATH);
  /* An unknown node and an invalid id are unrelatable too. */
  g_assert_cmpint(clock_graph_bridge(g, node(g, 140, 0, 0, 2)), ==, TM_BRIDGE_UNRELATABLE);
  g_assert_cmpint(clock_graph_bridge(g, 99999), ==, TM_BRIDGE_UNRELATABLE);
  g_assert_cmpuint(clock_graph_snapshot_count(g), ==, before);
  clock_graph_free(g);
}

static void test_private_trace_time_pins_explicit_boottime(void) {
  /* A proto without snapshots: trace time is still (11,0,0,0); its BOOT
   * events line up at zero offset. */
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  g_assert_cmpint(clock_graph_bridge(g, boot), ==, TM_BRIDGE_SAME_DOMAIN);
  g_assert_cmpint(trace_ok(g, boot, 123456), ==, 123456);
  clock_graph_free(g);
}

static void test_zero_offset_edge_keeps_registered_units(void) {
  tm_clock_graph *g = clock_graph_new();
  tm_clock_node us = node(g, 140, 0, 0, 0);
  tm_clock_node boot = node(g, BOOTTIME, 0, 0, 0);
  tm_clock_node other = node(g, BOOTTIME, 0, 0, 1);
  tm_clock_reading r[2] = {{.node = us, .value = 1, .unit_ns = 1000}, ns(boot, 7)};
  g_assert_cmpint(clock_graph_add_snapshot(g, r, 2, NULL), ==, 0);
  GError *error = NULL;
  g_assert_cmpint(clock_graph_add_zero_offset_edge(g, us, other, &error), ==, 1);
  g_assert_no_error(error);
  g_assert_cmpint(convert_ok(g, us, 5000, other), ==, 5000);
  g_assert_cmpint(clock_graph_add_zero_offset_edge(g, us, us, &error), ==, -1);
  g_assert_error(error, TM_CLOCK_GRAPH_ERROR, TM_CLOCK_GRAPH_ERROR_SNAPSHOT_REJECTED);
  g_assert_cmpstr(error->message, ==, "Clock sync error: duplicate clock domain with id=140 at snapshot 2.");
  g_error_free(error);
  clock_graph_free(g);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/clock-graph/bridge/spine-systrace-line-converts-through-monotonic",
                  test_spine_systrace_line_converts_through_monotonic);
  g_test_add_func("/clock-graph/bridge/spine-json-private-clock-pins-at-zero",
                  test_spine_json_private_clock_pins_at_zero);
  g_test_add_func("/clock-graph/bridge/spine-with-realtime-trace-time",
                  test_spine_with_realtime_trace_time);
  g_test_add_func("/clock-graph/realtime-rendezvous/two-machines", test_realtime_rendezvous_two_machines);
  g_test_add_func("/clock-graph/realtime-rendezvous/three-machines",
                  test_realtime_rendezvous_three_machines);
  g_test_add_func("/clock-graph/realtime-rendezvous/reuses-an-existing-edge",
                  test_rendezvous_reuses_an_existing_realtime_edge);
  g_test_add_func("/clock-graph/bridge/same-domain-when-server-has-only-boottime",
                  test_same_domain_fallback_when_server_has_only_boottime);
  g_test_add_func("/clock-graph/bridge/no-realtime-on-trace-machine-overlays-boottime",
                  test_no_realtime_on_trace_machine_overlays_boottime);
  g_test_add_func("/clock-graph/bridge/unrelatable-domains-add-nothing",
                  test_unrelatable_domains_add_nothing);
  g_test_add_func("/clock-graph/bridge/private-trace-time-pins-explicit-boottime",
                  test_private_trace_time_pins_explicit_boottime);
  g_test_add_func("/clock-graph/bridge/zero-offset-edge-keeps-registered-units",
                  test_zero_offset_edge_keeps_registered_units);
  return g_test_run();
}
