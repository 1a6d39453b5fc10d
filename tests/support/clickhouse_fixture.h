/*
 * A real ClickHouse server for the ClickHouse tests: started from
 * tests/clickhouse_server.sh on two free 127.0.0.1 ports with a temporary
 * data directory (under $TRACEMERGE_CLICKHOUSE_TMPDIR, else /dev/shm when
 * writable, else the temporary directory), stopped (and the directory
 * removed) at the end. The
 * server dies with the test process (PR_SET_PDEATHSIG), so a failed
 * assertion never leaves it running.
 */
#ifndef TM_CLICKHOUSE_FIXTURE_H
#define TM_CLICKHOUSE_FIXTURE_H

#include <glib.h>
#include <stdbool.h>

typedef struct ch_fixture {
  char *dir;       /* data, config and logs */
  int http_port;
  int tcp_port;
  GPid pid;        /* 0 while stopped */
} ch_fixture;

/* Starts a server in a new temporary directory. False, with the reason in
 * *skip_reason (free with g_free), only when no clickhouse-server binary
 * exists; any other failure fails the test. */
bool ch_fixture_start(ch_fixture *fixture, char **skip_reason);

/* Kills the server at once (SIGKILL), as a crash or power loss would. */
void ch_fixture_kill(ch_fixture *fixture);

/* Starts the server again on the same directory and ports. */
void ch_fixture_restart(ch_fixture *fixture);

/* Stops the server (SIGTERM, SIGKILL after 20 s) and removes its
 * directory. */
void ch_fixture_stop(ch_fixture *fixture);

/* A 127.0.0.1 port nothing listens on right now. */
int ch_fixture_unused_port(void);

/* "clickhouse://127.0.0.1:PORT/DATABASE" (free with g_free). */
char *ch_fixture_url(const ch_fixture *fixture, const char *database);

#endif /* TM_CLICKHOUSE_FIXTURE_H */
