/* rw_kalman_rb.c — a hand-written Rao–Blackwellised particle filter for the symbolic random walk
 *   x_0 = 0,  x_t ~ N(x_{t-1}, 1),  y_t ~ N(x_t, 0.5)   (0.5 is the variance)
 * as `sirenc -m ssi` runs benchmarks/models/walk with every x symbolic: each particle carries its
 * Gaussian belief (mean, variance) about x_t instead of a draw, weighs itself by the predictive
 * density of y_t, updates the belief in closed form (a one-dimensional Kalman step), and the
 * population is resampled systematically after every step.  Every particle's belief is exact, so all
 * weights are equal and the answer is the Kalman filter's; the point is the cost per particle-step
 * of carrying and copying a symbolic state, which is what the compiled filter pays too.  The state is
 * kept as two arrays (structure of arrays), resampled out of place, with one sequential xoshiro256+
 * generator for the resampler's uniforms: the fastest form we can write, not a design.
 * benchmarks/run.py builds it with -O3 -march=native -ffast-math, under which GCC vectorises the
 * weights' exp (libmvec) and the Kalman step's loops: 10.4 ns a particle-step at N = 10^4 without it,
 * 5.8 with it (interleaved minima), 6.7 with it and the runtime's vector exp in place of libmvec.
 *
 * usage: rw_kalman_rb DATA.csv [PARTICLES=10000] [SEED=0]
 *   DATA.csv: a header line, then one observation y per line (column 0 is used).
 * prints:  ns_per_particle_step=<ns> mean=<E[x_T | y_1..T]> log_evidence=<..> particles=<N> steps=<T>
 *
 * Build: cc -O3 -march=native -ffast-math -Iruntime_c/include -Iruntime_c/src rw_kalman_rb.c libsirenrt.a -lm
 *        (the runtime supplies only the CSV reader; benchmarks/run.py builds it so). */
#define BENCH_LIBM_EXP /* the weights' exp in a loop the compiler vectorises (harness.h) */
#include "harness.h"
#include "xoshiro.h"


int main(int argc, char **argv) {
  bench b;
  int status = bench_open(&b, argc, argv);
  if (status) return status;
  int64_t n = b.n, steps = b.steps;
  uint64_t seed = b.seed;
  size_t bytes = ((size_t)n + 3) * sizeof(double);
  double *m = malloc(bytes), *v = malloc(bytes), *m_new = malloc(bytes), *v_new = malloc(bytes);
  double *logw = malloc((size_t)n * sizeof(double)), *w = malloc((size_t)n * sizeof(double));
  if (!m || !v || !m_new || !v_new || !logw || !w) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (int64_t i = 0; i < n; i++) m[i] = v[i] = 0.0;
  xo g;
  xo_seed(&g, seed);

  const double q = 1.0, r = 0.5;
  double log_evidence = 0.0, mean = 0.0;
  b.t0 = bench_now_ns();
  for (int64_t t = 0; t < steps; t++) {
    double y;
    if (bench_y(&b, t, &y)) return 1;
    double mx = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
      double vp = v[i] + q, s = vp + r, d = y - m[i], k = vp / s;
      logw[i] = -0.5 * log(2.0 * RT_PI * s) - d * d / (2.0 * s);
      m[i] += k * d;
      v[i] = (1.0 - k) * vp;
      if (logw[i] > mx) mx = logw[i];
    }
    double sum = bench_weigh(logw, w, n, mx, &log_evidence);
    if (t == steps - 1) { /* the estimate uses the final weights, before the last resampling */
      mean = 0.0;
      for (int64_t i = 0; i < n; i++) mean += w[i] * m[i];
      mean /= sum;
    }
    /* Systematic resampling out of place, as in rw_bootstrap_fast.c: the first three copies of a
     * particle are stored whatever its count, so only counts of 4 or more branch. */
    double per_unit = (double)n / sum, u = xo_uniform(&g), c = 0.0, top = (double)n;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
      c += w[i];
      double below = ceil(c * per_unit - u);
      below = below > 0.0 ? below : 0.0;
      int64_t now = (int64_t)(below < top ? below : top), count = now - k;
      double mi = m[i], vi = v[i];
      m_new[k] = m_new[k + 1] = m_new[k + 2] = mi;
      v_new[k] = v_new[k + 1] = v_new[k + 2] = vi;
      if (__builtin_expect(count > 3, 0))
        for (int64_t j = 3; j < count; j++) m_new[k + j] = mi, v_new[k + j] = vi;
      k = now;
    }
    for (; k < n; k++) { /* rounding left the last points past the total */
      m_new[k] = m_new[k - 1];
      v_new[k] = v_new[k - 1];
    }
    double *tm = m, *tv = v;
    m = m_new, v = v_new;
    m_new = tm, v_new = tv;
  }
  bench_report(&b, mean, log_evidence);
  free(m);
  free(v);
  free(m_new);
  free(v_new);
  free(logw);
  free(w);
  return 0;
}
