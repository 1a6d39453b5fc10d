/*
 * The host side of the reader ABI (<tracemerge/plugin.h>): the services
 * table readers receive, one per ABI version the host speaks.
 *
 * Version 2 is host_services.c; version 1 readers get host_services_v1.c's
 * table, which adapts their calls (the frozen layouts of reader_abi_v1.h)
 * to version 2's. Either way a call lands in the same code, so a reader
 * behaves the same whichever version it was built for.
 */
#ifndef TM_HOST_SERVICES_H
#define TM_HOST_SERVICES_H

#include <tracemerge/plugin.h>

#include "input/import_state.h"
#include "input/plugin_loader.h"
#include "input/reader_abi_v1.h"

/* The services of version 2: every field set. */
extern const tm_host_services host_services_v2;

/* The budget service's answer: a pure function of the import's budgets
 * (so a reader run ahead of its turn is answered without the host). */
int64_t host_services_budget(const tm_budgets *budgets, uint32_t which);

/* The services of version 1, adapting to version 2's. */
const tm_v1_host_services *host_services_v1(void);

/* What sample() and import_log() do, for the version-1 adapters: a sample
 * into PROFILE_TABLE_* `table`, an import log with args of the current
 * layout. */
void host_sample(tm_host *host, int table, tm_clock_ref clock, int64_t ts,
                 tm_thread_ref thread, tm_callsite_ref callsite, int32_t cpu);
void host_import_log(tm_host *host, const char *name, int64_t byte_offset,
                     const tm_import_log_arg *args, size_t n_args);

/* Counts a call the host refuses in the stat reader_call_refused and
 * logs `call` and `reason` with it (the call then does nothing). */
void host_refuse_call(tm_host *host, const char *call, const char *reason);

/* Hash/equality of the identity keys (import_state.h's processes and
 * threads) and track keys (its tracks). */
guint import_identity_hash(gconstpointer p);
gboolean import_identity_equal(gconstpointer a, gconstpointer b);
guint import_track_hash(gconstpointer p);
gboolean import_track_equal(gconstpointer a, gconstpointer b);

/* Machine state (placeholders) for a machine row, created once. */
void import_open_machine(tm_import_state *state, uint32_t machine_id);

/* The track id of the overflow twin of a thread track (JSON X spill). */
uint32_t import_overflow_track(tm_import_state *state, uint32_t track_id);

/* Writes each track's dimension arg set (utid, upid, scope, name, key). */
void import_finish_tracks(tm_import_state *state);

#endif /* TM_HOST_SERVICES_H */
