/*
 * Ctrl-C while the CLI works on a session: it interrupts the running
 * query (tm_session_interrupt) instead of killing the process. The
 * one-shot query command and the interactive prompt share it.
 */
#ifndef TRACEMERGE_SIGINT_GUARD_H
#define TRACEMERGE_SIGINT_GUARD_H

#include <signal.h>
#include <stdbool.h>

#include <tracemerge/tracemerge.h>

typedef struct sigint_guard {
  struct sigaction saved;
} sigint_guard;

/* From now until sigint_guard_end(), Ctrl-C interrupts `session` (which
 * is borrowed and must outlive the guard). `one_shot`: the first Ctrl-C
 * only interrupts, a second one kills as usual (for a single query); else
 * every Ctrl-C interrupts (for the prompt, which goes on). One guard at a
 * time. */
void sigint_guard_begin(sigint_guard *guard, tm_session *session, bool one_shot);

/* Restores the handler sigint_guard_begin() replaced. */
void sigint_guard_end(sigint_guard *guard);

/* Whether Ctrl-C came since the last call, which forgets it: libedit's
 * readline() returns NULL both at end of input and when Ctrl-C interrupts
 * it, and this tells the two apart. */
bool sigint_guard_take(void);

#endif /* TRACEMERGE_SIGINT_GUARD_H */
