/* Ctrl-C interrupts the session's query (see sigint_guard.h). */
#include "sigint_guard.h"

#include <string.h>

/* Only what a signal handler may touch: a pointer read and a flag. */
static tm_session *volatile interruptible_session = NULL;
static volatile sig_atomic_t sigint_seen = 0;

static void on_sigint(int signal_number) {
  (void)signal_number;
  sigint_seen = 1;
  /* Async-signal-safe: sets a flag the running statement polls. */
  tm_session_interrupt(interruptible_session);
}

void sigint_guard_begin(sigint_guard *guard, tm_session *session, bool one_shot) {
  interruptible_session = session;
  sigint_seen = 0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_sigint;
  action.sa_flags = one_shot ? SA_RESETHAND : 0;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &guard->saved);
}

void sigint_guard_end(sigint_guard *guard) {
  sigaction(SIGINT, &guard->saved, NULL);
  interruptible_session = NULL;
}

bool sigint_guard_take(void) {
  bool seen = sigint_seen != 0;
  sigint_seen = 0;
  return seen;
}
