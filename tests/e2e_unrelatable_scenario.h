/*
 * The unrelatable-domains scenario (docs/clock-model.md §6.2 step 4), shared by
 * the placement test (what is dropped and counted) and the import-log test
 * (what is logged about it). Members: this manifest, edge.systrace, and
 * the proto fixtures boot_mono_only as server.pb and rendezvous_phone as
 * phone.pb. Trace time is phone's REALTIME; server knows only BOOTTIME and
 * MONOTONIC, edge's MONOTONIC is in no snapshot: both are unrelatable.
 */
#ifndef TM_E2E_UNRELATABLE_SCENARIO_H
#define TM_E2E_UNRELATABLE_SCENARIO_H

static const char unrelatable_manifest[] =
    "{\"perfetto_manifest\": {\"version\": 1,\n"
    " \"trace_time\": {\"clock\": \"REALTIME\", \"file\": \"phone.pb\"},\n"
    " \"files\": [\n"
    " {\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}},\n"
    " {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}},\n"
    " {\"path\": \"edge.systrace\", \"machine\": {\"name\": \"edge\"}}]}}\n";

/* A systrace file: one B/E pair (two events) at MONOTONIC 1.0 s and
 * 1.0005 s. */
static const char edge_systrace[] =
    "# tracer: nop\n"
    "#\n"
    "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
    "             app-100   (  100) [000] ...1     1.000000: tracing_mark_write: B|100|work\n"
    "             app-100   (-----) [000] ...1     1.000500: tracing_mark_write: E|100\n";

#endif /* TM_E2E_UNRELATABLE_SCENARIO_H */
