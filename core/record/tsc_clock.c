/* The TSC as the writers' TMR_NOW clock (see tsc_clock.h). */
#include "record/tsc_clock.h"

#include "record/session_internal.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#if TMR_HAVE_TSC
#include <cpuid.h>
#endif

#define CALIBRATION_SLEEP_US 10000
#define CLOCKSOURCE_PATH "/sys/devices/system/clocksource/clocksource0/current_clocksource"

static bool usable;
static uint64_t mult, period_ticks, recalibrate_ticks;

tmr_tsc_pair tmr_tsc_read_pair(void) {
  tmr_tsc_pair best = {0, 0};
  uint64_t best_bracket = UINT64_MAX;
  for (int i = 0; i < 3; i++) {
    uint64_t before = tmr_tsc_read();
    int64_t boot = tmr_boottime_ns();
    uint64_t after = tmr_tsc_read();
    if (after - before < best_bracket) {
      best_bracket = after - before;
      best = (tmr_tsc_pair){before + (after - before) / 2, boot};
    }
  }
  return best;
}

#if TMR_HAVE_TSC
static bool invariant_tsc(void) {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u)
    return false;
  if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx))
    return false;
  return (edx >> 8) & 1;
}

static bool kernel_clocksource_is_tsc(void) {
  char source[32] = "";
  FILE *f = fopen(CLOCKSOURCE_PATH, "r");
  if (!f)
    return false;
  bool ok = fgets(source, sizeof source, f) != NULL;
  fclose(f);
  return ok && strcmp(g_strchomp(source), "tsc") == 0;
}
#endif

static gpointer calibrate(gpointer unused) {
  (void)unused;
#if TMR_HAVE_TSC
  if (!invariant_tsc() || !kernel_clocksource_is_tsc())
    return NULL;
  tmr_tsc_pair a = tmr_tsc_read_pair();
  g_usleep(CALIBRATION_SLEEP_US);
  tmr_tsc_pair b = tmr_tsc_read_pair();
  if (b.tsc <= a.tsc || b.boottime_ns <= a.boottime_ns)
    return NULL;
  double ns_per_tick = (double)(b.boottime_ns - a.boottime_ns) / (double)(b.tsc - a.tsc);
  /* A TSC between 100 MHz and 100 GHz; anything else is not a TSC to
   * trust. */
  if (!(ns_per_tick > 0.01 && ns_per_tick < 10.0))
    return NULL;
  mult = (uint64_t)(ns_per_tick * 4294967296.0 + 0.5);
  period_ticks = (uint64_t)((double)TMR_TSC_ANCHOR_PERIOD_NS / ns_per_tick);
  recalibrate_ticks = (uint64_t)((double)TMR_TSC_RECALIBRATE_NS / ns_per_tick);
  usable = true;
#endif
  return NULL;
}

bool tmr_tsc_usable(void) {
  static GOnce once = G_ONCE_INIT;
  g_once(&once, calibrate, NULL);
  return usable;
}

uint64_t tmr_tsc_mult(void) {
  return mult;
}

uint64_t tmr_tsc_period_ticks(void) {
  return period_ticks;
}

uint64_t tmr_tsc_recalibrate_ticks(void) {
  return recalibrate_ticks;
}
