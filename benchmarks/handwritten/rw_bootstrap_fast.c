/* rw_bootstrap_fast.c — the fastest hand-written bootstrap particle filter we can write for
 *   x_0 = 0,  x_t ~ N(x_{t-1}, 1),  y_t ~ N(x_t, 0.5)   (0.5 is the variance)
 * with systematic resampling after every step: the same model, arithmetic and resampler as
 * rw_bootstrap.c, but with none of the runtime's per-particle streams.  One sequential xoshiro256+
 * generator (Blackman & Vigna) feeds the whole population, and the Gaussian is a 256-layer ziggurat
 * inlined into the propagation loop.  Its draws depend on the particle count and the order of the
 * loop, so it cannot run particles on threads reproducibly: it is the speed of light, not a design.
 * benchmarks/run.py builds it with -O3 -march=native -ffast-math: GCC then vectorises the weights'
 * exp (glibc's libmvec) and the sums.  Interleaved minima at N = 10^4, ns a particle-step: 11.89
 * without -ffast-math, 6.84 with it, 7.45 with it and the runtime's vector exp in place of libmvec.
 *
 * usage: rw_bootstrap_fast DATA.csv [PARTICLES=10000] [SEED=0]
 *   DATA.csv: a header line, then one observation y per line (column 0 is used).
 * prints:  ns_per_particle_step=<ns> mean=<E[x_T | y_1..T]> log_evidence=<..> particles=<N> steps=<T>
 *
 * Build: cc -O3 -march=native -ffast-math -Iruntime_c/include -Iruntime_c/src rw_bootstrap_fast.c libsirenrt.a -lm
 *        (the runtime supplies only the CSV reader; benchmarks/run.py builds it so). */
#define BENCH_LIBM_EXP /* the weights' exp in a loop the compiler vectorises (harness.h) */
#include "harness.h"

#include <string.h>

#include "xoshiro.h"

/* ---------------------------------------------------------------- ziggurat ------------------- */
/* 256 layers of equal area V under exp(-x^2/2) (Marsaglia & Tsang 2000); x[0] is the base strip's
 * width V/f(R), x[1] = R, x[256] = 0; f[i] = exp(-x[i]^2/2); xs[i] = x[i] * 2^-52. */
#define R 3.6541528853610088
#define V 0.00492867323399
static double zx[257], zf[257], zxs[256];

static void zig_build(void) {
  zf[1] = exp(-0.5 * R * R);
  zx[0] = V / zf[1];
  zx[1] = R;
  for (int i = 2; i < 256; i++) {
    zx[i] = sqrt(-2.0 * log(V / zx[i - 1] + zf[i - 1]));
    zf[i] = exp(-0.5 * zx[i] * zx[i]);
  }
  zx[256] = 0.0;
  zf[256] = 1.0;
  for (int i = 0; i < 256; i++) zxs[i] = zx[i] * 0x1.0p-52;
}

static inline double signed_by(double x, uint64_t bit) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  b ^= bit << 63;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* One word: the layer from bits 3..10, the sign from bit 11, a 52-bit uniform from bits 12..63. */
static __attribute__((noinline)) double normal_slow(xo *g, uint64_t r) {
  for (;;) {
    int i = (int)((r >> 3) & 0xFF);
    double x = (double)(r >> 12) * zxs[i];
    if (x < zx[i + 1]) return signed_by(x, (r >> 11) & 1);
    if (i == 0) {
      double a, b;
      do {
        a = -log(xo_uniform_pos(g)) / R;
        b = -log(xo_uniform_pos(g));
      } while (2.0 * b < a * a);
      return signed_by(R + a, (r >> 11) & 1);
    }
    if (zf[i] + xo_uniform(g) * (zf[i + 1] - zf[i]) < exp(-0.5 * x * x)) return signed_by(x, (r >> 11) & 1);
    r = xo_next(g);
  }
}

static inline double normal(xo *g) {
  uint64_t r = xo_next(g);
  int i = (int)((r >> 3) & 0xFF);
  double x = (double)(r >> 12) * zxs[i];
  if (__builtin_expect(x < zx[i + 1], 1)) return signed_by(x, (r >> 11) & 1);
  return normal_slow(g, r);
}

int main(int argc, char **argv) {
  bench b;
  int status = bench_open(&b, argc, argv);
  if (status) return status;
  int64_t n = b.n, steps = b.steps;
  uint64_t seed = b.seed;
  double *x = malloc(((size_t)n + 3) * sizeof(double)), *x_new = malloc(((size_t)n + 3) * sizeof(double));
  double *logw = malloc((size_t)n * sizeof(double)), *w = malloc((size_t)n * sizeof(double));
  if (!x || !x_new || !logw || !w) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (int64_t i = 0; i < n; i++) x[i] = 0.0;
  zig_build();
  xo g;
  xo_seed(&g, seed);

  const double obs_var = 0.5, log_norm = -0.5 * log(2.0 * RT_PI * obs_var);
  double log_evidence = 0.0, mean = 0.0;
  b.t0 = bench_now_ns();
  for (int64_t t = 0; t < steps; t++) {
    double y;
    if (bench_y(&b, t, &y)) return 1;
    double mx = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
      double xi = x[i] + normal(&g);
      double d = y - xi;
      x[i] = xi;
      logw[i] = log_norm - d * d / (2.0 * obs_var);
      if (logw[i] > mx) mx = logw[i];
    }
    double sum = bench_weigh(logw, w, n, mx, &log_evidence);
    if (t == steps - 1) { /* the estimate uses the final weights, before the last resampling */
      mean = 0.0;
      for (int64_t i = 0; i < n; i++) mean += w[i] * x[i];
      mean /= sum;
    }
    /* Systematic resampling, out of place: particle i gets the points (k + u) / n that fall in its
     * stretch of the cumulative weight, as many as ceil(n c / sum - u) counts below its end c.  Its
     * first three copies are stored whatever its count (x_new has three spare entries; a store that is
     * not a copy is overwritten by the next particle's), so only counts of 4 or more branch: a loop
     * that walks the points mispredicts at every particle. */
    double per_unit = (double)n / sum, u = xo_uniform(&g), c = 0.0, top = (double)n;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
      c += w[i];
      double below = ceil(c * per_unit - u);
      below = below > 0.0 ? below : 0.0;
      int64_t now = (int64_t)(below < top ? below : top), count = now - k;
      double xi = x[i];
      x_new[k] = xi;
      x_new[k + 1] = xi;
      x_new[k + 2] = xi;
      if (__builtin_expect(count > 3, 0))
        for (int64_t j = 3; j < count; j++) x_new[k + j] = xi;
      k = now;
    }
    while (k < n) { /* rounding left the last points past the total */
      x_new[k] = x_new[k - 1];
      k++;
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
  return 0;
}
