/* ssi_engine_bench.c — the symbolic engine alone on the hand-written SSI random walk of
 * runtime_c/tests/models.h (x_t ~ N(x_{t-1}, 1), y_t ~ N(x_t, 0.5), resample every step), without
 * the compiler in the loop, so that `perf record` sees only the runtime.  Prints the best ns per
 * particle-step over the repeats, the estimate and the log evidence (which a change to the engine must
 * leave as they are).
 *
 *   cmake -S . -B /tmp/perf-build -DSIRENRT_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -G Ninja
 *   cmake --build /tmp/perf-build
 *   cc -O2 -g -Iruntime_c/src -Iruntime_c/tests -Iruntime_c/include benchmarks/ssi_engine_bench.c \
 *      /tmp/perf-build/libsirenrt.a -lm -lpthread -o /tmp/ssi_engine_bench
 *   /tmp/ssi_engine_bench [particles=1000] [steps=100] [repeats=3]                              */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "population/population.h"
#include "models.h"

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000;
  int steps = argc > 2 ? atoi(argv[2]) : 100, repeats = argc > 3 ? atoi(argv[3]) : 3;
  double *ys = malloc(sizeof(double) * (size_t)(steps > 0 ? steps : 1));
  if (!ys || n < 1 || steps < 1) return 2;
  rt_rng g;
  rt_rng_init(&g, 2024, 0, 0, RT_DOMAIN_USER);
  double x = 0.0;
  for (int t = 0; t < steps; t++) {
    x += sqrt(SSI_Q) * rt_normal(&g);
    ys[t] = x + sqrt(SSI_R) * rt_normal(&g);
  }
  double best = INFINITY, est = NAN, ll = NAN;
  for (int r = 0; r < repeats; r++) {
    sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, 1, 0};
    sirenrt_filter *f = sirenrt_filter_new(&ssi_model, n, 7, &o);
    if (!f) {
      fprintf(stderr, "%s\n", sirenrt_last_error());
      return 1;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (sirenrt_filter_run(f, ys, steps, 1)) {
      fprintf(stderr, "%s\n", sirenrt_filter_error(f));
      return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / ((double)n * steps);
    if (ns < best) best = ns;
    int64_t k = 0;
    sirenrt_filter_estimate(f, &est, 1, &k);
    ll = sirenrt_filter_log_evidence(f);
    sirenrt_filter_free(f);
  }
  printf("N=%lld T=%d ns_per_particle_step=%.1f estimate=%.17g log_evidence=%.17g\n", (long long)n, steps, best, est,
         ll);
  free(ys);
  return 0;
}
