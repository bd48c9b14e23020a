/* rw_bootstrap.c — the speed-of-light reference: a bootstrap particle filter written by hand for
 *   x_0 = 0,  x_t ~ N(x_{t-1}, 1),  y_t ~ N(x_t, 0.5)   (0.5 is the variance)
 * with systematic resampling after every step.  It uses the runtime's own pieces (Philox streams keyed
 * by (seed, particle, step), RT_RNG_LANES of them at a time as the population loop keys them, the
 * ziggurat normal, the systematic resampler, the CSV reader) so that a compiled Siren filter of the same
 * model is measured against the same arithmetic, not a cheaper RNG.  rw_bootstrap_fast.c is the other
 * reference, with the fastest sequential generator.
 *
 * usage: rw_bootstrap DATA.csv [PARTICLES=10000] [SEED=0]
 *   DATA.csv: a header line, then one observation y per line (column 0 is used).
 * prints:  ns_per_particle_step=<ns> mean=<E[x_T | y_1..T]> log_evidence=<..> particles=<N> steps=<T>
 *
 * Build: cc -O3 -Iruntime_c/include -Iruntime_c/src rw_bootstrap.c libsirenrt.a -lm
 *        (or the CMake target `rw_bootstrap`, built with -DSIRENRT_TESTS=ON). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DATA.csv [PARTICLES=10000] [SEED=0]\n", argv[0]);
    return 2;
  }
  int64_t n = argc > 2 ? atoll(argv[2]) : 10000;
  uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
  if (n < 1) {
    fprintf(stderr, "need at least one particle\n");
    return 2;
  }
  rt_table data = {0};
  char *err = NULL;
  if (rt_table_read_csv(&data, argv[1], &err)) {
    fprintf(stderr, "%s\n", err ? err : "cannot read data");
    return 1;
  }
  int64_t steps = data.n_rows;
  double *x = malloc(((size_t)n + 3) * sizeof(double)), *x_new = malloc(((size_t)n + 3) * sizeof(double));
  double *logw = malloc((size_t)n * sizeof(double)), *w = malloc((size_t)n * sizeof(double));
  int64_t *counts = malloc((size_t)n * sizeof(int64_t));
  if (!x || !x_new || !logw || !w || !counts) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (int64_t i = 0; i < n; i++) x[i] = 0.0;

  const double obs_var = 0.5, log_norm = -0.5 * log(2.0 * RT_PI * obs_var);
  double log_evidence = 0.0, mean = 0.0;
  double t0 = now_ns();
  for (int64_t t = 0; t < steps; t++) {
    if (rt_row_len(&data, t) < 1) {
      fprintf(stderr, "%s: row %lld is empty\n", argv[1], (long long)t + 2);
      return 1;
    }
    double y = data.vals[data.row_start[t]];
    /* Propagate and weigh; each particle draws from its own (seed, particle, step) stream. */
    double mx = -INFINITY;
    for (int64_t base = 0; base < n; base += RT_RNG_LANES) {
      /* The streams of RT_RNG_LANES particles are keyed together, as the runtime's population loop does. */
      int m = n - base < RT_RNG_LANES ? (int)(n - base) : RT_RNG_LANES;
      rt_rng g[RT_RNG_LANES], *gp[RT_RNG_LANES];
      uint64_t slot[RT_RNG_LANES];
      for (int l = 0; l < m; l++) {
        gp[l] = &g[l];
        slot[l] = (uint64_t)(base + l);
      }
      rt_rng_init_many(gp, slot, m, seed, (uint32_t)t, RT_DOMAIN_PARTICLE);
      for (int l = 0; l < m; l++) {
        int64_t i = base + l;
        double xi = x[i] + rt_normal(&g[l]);
        double d = y - xi;
        x[i] = xi;
        logw[i] = log_norm - d * d / (2.0 * obs_var);
        if (logw[i] > mx) mx = logw[i];
      }
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (w[i] = exp(logw[i] - mx));
    for (int64_t i = 0; i < n; i++) w[i] /= sum;
    log_evidence += mx + log(sum) - log((double)n);
    if (t == steps - 1) { /* the estimate uses the final weights, before the last resampling */
      mean = 0.0;
      for (int64_t i = 0; i < n; i++) mean += w[i] * x[i];
    }
    /* Systematic resampling, out of place.  Each particle's first three copies are stored whatever its
     * count (x_new has three spare entries; a store that is not a copy is overwritten by the next
     * particle's), so only counts of 4 or more branch: a loop over the counts mispredicts. */
    rt_rng rg;
    rt_rng_init(&rg, seed, 0, (uint32_t)t, RT_DOMAIN_RESAMPLE);
    rt_resample_counts(SIRENRT_SYSTEMATIC, w, n, &rg, counts);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t c = counts[i];
      double xi = x[i];
      x_new[k] = xi;
      x_new[k + 1] = xi;
      x_new[k + 2] = xi;
      if (__builtin_expect(c > 3, 0))
        for (int64_t j = 3; j < c; j++) x_new[k + j] = xi;
      k += c;
    }
    double *tmp = x;
    x = x_new;
    x_new = tmp;
  }
  double elapsed = now_ns() - t0;
  double per = steps > 0 ? elapsed / ((double)n * (double)steps) : 0.0;
  printf("ns_per_particle_step=%.3f mean=%.17g log_evidence=%.17g particles=%lld steps=%lld\n", per, mean,
         log_evidence, (long long)n, (long long)steps);
  free(x);
  free(x_new);
  free(logw);
  free(w);
  free(counts);
  rt_table_free(&data);
  return 0;
}
