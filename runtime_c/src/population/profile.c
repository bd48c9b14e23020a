/* profile.c — SIRENRT_PROFILE (benchmarks/threads.py): the seconds a filter's loop spends in each of
 * its phases, printed when the filter is freed.  The loop reads the clock only when it is set
 * (rt_profile_clock). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "population.h"

#include <stdio.h>
#include <time.h>

double rt_profile_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void rt_profile_print(const sirenrt_filter *f) {
  fprintf(stderr, "sirenrt profile: resume=%.6fs weigh=%.6fs offspring=%.6fs count=%.6fs copy=%.6fs collect=%.6fs "
          "serial=%.6fs\n", f->profile_s[RT_PHASE_RESUME], f->profile_s[RT_PHASE_WEIGH],
          f->profile_s[RT_PHASE_OFFSPRING], f->profile_s[RT_PHASE_COUNT], f->profile_s[RT_PHASE_COPY],
          f->profile_s[RT_PHASE_COLLECT], f->profile_s[RT_PHASE_SERIAL]);
}
