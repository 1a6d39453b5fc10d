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

#include "input/plugin_loader.h"
#include "input/reader_abi_v1.h"

/* The services of version 2: every field set. */
extern const tm_host_services host_services_v2;

/* The services of version 1, adapting to version 2's. */
const tm_v1_host_services *host_services_v1(void);

/* Calls `host->reader`'s open() with the services of the version it
 * speaks; `config` is borrowed until its close(). */
void *host_open_reader(tm_host *host, const uint8_t *config, size_t config_len);

/* What sample() and import_log() do, for the version-1 adapters: a sample
 * into PROFILE_TABLE_* `table`, an import log with args of the current
 * layout. */
void host_sample(tm_host *host, int table, tm_clock_ref clock, int64_t ts,
                 tm_thread_ref thread, tm_callsite_ref callsite, int32_t cpu);
void host_import_log(tm_host *host, const char *name, int64_t byte_offset,
                     const tm_import_log_arg *args, size_t n_args);

#endif /* TM_HOST_SERVICES_H */
