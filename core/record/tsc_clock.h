/*
 * The TSC as the writers' TMR_NOW clock: one process-wide calibration of
 * the time-stamp counter against CLOCK_BOOTTIME, and the reads a writer
 * anchors its own TSC clock with (writer.c keeps the anchors).
 *
 * Why: clock_gettime(CLOCK_BOOTTIME) costs ~31 ns on the project's VM,
 * a bare rdtsc ~12 ns, and a TMR_NOW slice pair reads the clock twice.
 *
 * When the TSC is used (tmr_tsc_usable()): x86-64, the CPU says the TSC
 * is invariant (CPUID 0x80000007 EDX bit 8: constant rate, ticking in
 * every C-state), and the kernel's own clocksource is "tsc" (so the kernel
 * found it synchronised across CPUs and based BOOTTIME on it). Otherwise,
 * or when the session is told not to (tmr_session_options.now_clock,
 * TRACEMERGE_RECORD_CLOCK=boottime: session.c), writers read
 * clock_gettime(CLOCK_BOOTTIME) as before.
 *
 * The calibration is taken once per process (tmr_tsc_usable() sleeps
 * ~10 ms the first time): two (TSC, BOOTTIME) pairs 10 ms apart give
 * ns per tick as a 32.32 fixed-point multiplier. Writers refine it at
 * every anchor from their own last period (writer.c).
 */
#ifndef TMR_TSC_CLOCK_H
#define TMR_TSC_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <x86intrin.h>
#define TMR_HAVE_TSC 1
#else
#define TMR_HAVE_TSC 0
#endif

/* A writer re-anchors when its TSC clock has run this long since the last
 * anchor (or at a flush, or when the TSC went backwards). */
#define TMR_TSC_ANCHOR_PERIOD_NS 100000000ll
/* A period at least this long re-measures the writer's multiplier. */
#define TMR_TSC_RECALIBRATE_NS 50000000ll
/* A re-measured multiplier further than this (parts per million) from the
 * process' calibration is not taken: BOOTTIME ran without the TSC (a
 * suspend, a paused VM), and the anchor's snapshot takes the jump. */
#define TMR_TSC_MAX_RATE_CHANGE_PPM 1000

/* Reads the TSC (bare rdtsc: it may run a few tens of cycles ahead of
 * earlier instructions, far below what a timestamp resolves). */
static inline uint64_t tmr_tsc_read(void) {
#if TMR_HAVE_TSC
  return __rdtsc();
#else
  return 0;
#endif
}

/* TSC ticks × mult >> 32 = ns. */
static inline int64_t tmr_tsc_ticks_to_ns(uint64_t ticks, uint64_t mult) {
#if defined(__SIZEOF_INT128__)
  return (int64_t)(((unsigned __int128)ticks * mult) >> 32);
#else
  return (int64_t)((ticks >> 32) * mult + (((ticks & 0xffffffffu) * mult) >> 32));
#endif
}

typedef struct tmr_tsc_pair {
  uint64_t tsc;
  int64_t boottime_ns;
} tmr_tsc_pair;

/* A TSC reading and a BOOTTIME reading taken together: of three tries,
 * the one whose two bracketing TSC reads are closest, the TSC value taken
 * mid-bracket (so the pair's own error is half a clock_gettime, ~15 ns,
 * unless all three were preempted). */
tmr_tsc_pair tmr_tsc_read_pair(void);

/* Whether writers may use the TSC (see the top), calibrating it the first
 * time it is asked. */
bool tmr_tsc_usable(void);

/* The process' calibration: ns per tick × 2^32, and the anchor period and
 * the re-measuring threshold in ticks. Valid once tmr_tsc_usable() said
 * true. */
uint64_t tmr_tsc_mult(void);
uint64_t tmr_tsc_period_ticks(void);
uint64_t tmr_tsc_recalibrate_ticks(void);

#endif /* TMR_TSC_CLOCK_H */
