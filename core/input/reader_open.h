/*
 * Opening a file's reader with the services table of the ABI version it
 * speaks: version 2's (host_services.c) or version 1's adapter
 * (host_services_v1.c), which calls version 2's. Kept apart from both so
 * that each table's file depends only on what is below it.
 */
#ifndef TM_READER_OPEN_H
#define TM_READER_OPEN_H

#include <stddef.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

/* Calls `host->reader`'s open() with the services of the version it
 * speaks; `config` is borrowed until its close(). */
void *host_open_reader(tm_host *host, const uint8_t *config, size_t config_len);

#endif /* TM_READER_OPEN_H */
