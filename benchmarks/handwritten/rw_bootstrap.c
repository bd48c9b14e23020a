/* rw_bootstrap.c — the speed-of-light reference: a bootstrap particle filter written by hand for
 *   x_0 = 0,  x_t ~ N(x_{t-1}, 1),  y_t ~ N(x_t, 0.5)   (0.5 is the variance)
 * with systematic resampling after every step.  It uses the runtime's own pieces (ARS-7 streams keyed
 * by (seed, particle, step), RT_LANE_RUN of them at a time as the population loop keys them, the
 * ziggurat normal, the systematic resampler, the CSV reader) so that a compiled Siren filter of the same
 * model is measured against the same arithmetic, not a cheaper RNG (a keyed stream's first normal is
 * ready, made with SIMD as the streams are keyed).  rw_bootstrap_fast.c is the other reference, with
 * the fastest sequential generator.
 *
 * usage: rw_bootstrap DATA.csv [PARTICLES=10000] [SEED=0]
 *   DATA.csv: a header line, then one observation y per line (column 0 is used).
 * prints:  ns_per_particle_step=<ns> mean=<E[x_T | y_1..T]> log_evidence=<..> particles=<N> steps=<T>
 *
 * Build: cc -O3 -march=native -Iruntime_c/include -Iruntime_c/src rw_bootstrap.c libsirenrt.a -lm
 *        (benchmarks/run.py builds it so; the CMake target `rw_bootstrap`, built with
 *        -DSIRENRT_TESTS=ON, has no -march). */
#include "harness.h"

int main(int argc, char **argv) {
  bench b;
  int status = bench_open(&b, argc, argv);
  if (status) return status;
  int64_t n = b.n, steps = b.steps;
  uint64_t seed = b.seed;
  double *x = malloc(((size_t)n + 3) * sizeof(double)), *x_new = malloc(((size_t)n + 3) * sizeof(double));
  double *logw = malloc((size_t)n * sizeof(double)), *w = malloc((size_t)n * sizeof(double));
  rt_count *counts = malloc((size_t)n * sizeof *counts);
  if (!x || !x_new || !logw || !w || !counts) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (int64_t i = 0; i < n; i++) x[i] = 0.0;

  const double obs_var = 0.5, log_norm = -0.5 * log(2.0 * RT_PI * obs_var);
  double log_evidence = 0.0, mean = 0.0;
  /* The streams of RT_LANE_RUN particles are keyed together, as the runtime's population loop keys
   * its lanes: the key (the seed) stored once, each step's streams rekeyed in place. */
  rt_rng g[RT_LANE_RUN];
  for (int l = 0; l < RT_LANE_RUN; l++) rt_rng_init(&g[l], seed, 0, 0, 0);
  b.t0 = bench_now_ns();
  for (int64_t t = 0; t < steps; t++) {
    double y;
    if (bench_y(&b, t, &y)) return 1;
    /* Propagate and weigh; each particle draws from its own (seed, particle, step) stream. */
    double mx = -INFINITY;
    for (int64_t base = 0; base < n; base += RT_LANE_RUN) {
      int m = n - base < RT_LANE_RUN ? (int)(n - base) : RT_LANE_RUN;
      rt_rng_rekey_run(g, sizeof g[0], (uint64_t)base, m, seed, (uint32_t)t, RT_DOMAIN_PARTICLE);
      for (int l = 0; l < m; l++) {
        int64_t i = base + l;
        double xi = x[i] + rt_normal(&g[l]);
        double d = y - xi;
        x[i] = xi;
        logw[i] = log_norm - d * d / (2.0 * obs_var);
        if (logw[i] > mx) mx = logw[i];
      }
    }
    double sum = bench_weigh(logw, w, n, mx, &log_evidence);
    for (int64_t i = 0; i < n; i++) w[i] /= sum;
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
  bench_report(&b, mean, log_evidence);
  free(x);
  free(x_new);
  free(logw);
  free(w);
  free(counts);
  return 0;
}
