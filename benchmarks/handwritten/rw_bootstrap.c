/* rw_bootstrap.c — the speed-of-light reference: a bootstrap particle filter written by hand for
 *   x_0 = 0,  x_t ~ N(x_{t-1}, 1),  y_t ~ N(x_t, 0.5)   (0.5 is the variance)
 * with systematic resampling after every step.  It uses the runtime's own pieces (Philox streams keyed
 * by (seed, particle, step), RT_RNG_LANES of them at a time as the population loop keys them, the
 * ziggurat normal, the systematic resampler, the CSV reader) so that a compiled Siren filter of the same
 * model is measured against the same arithmetic, not a cheaper RNG (built for a CPU with AVX-512, it
 * draws a run's normals with it: normals_avx512).  rw_bootstrap_fast.c is the other reference, with
 * the fastest sequential generator.
 *
 * usage: rw_bootstrap DATA.csv [PARTICLES=10000] [SEED=0]
 *   DATA.csv: a header line, then one observation y per line (column 0 is used).
 * prints:  ns_per_particle_step=<ns> mean=<E[x_T | y_1..T]> log_evidence=<..> particles=<N> steps=<T>
 *
 * Build: cc -O3 -march=native -Iruntime_c/include -Iruntime_c/src rw_bootstrap.c libsirenrt.a -lm
 *        (benchmarks/run.py builds it so; the CMake target `rw_bootstrap`, built with
 *        -DSIRENRT_TESTS=ON, has no -march and draws as the runtime does, one normal at a time). */
#include "harness.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

/* A full run's normals eight streams at a time: the ziggurat's fast path (internal.h, rt_normal) on a
 * vector of words, buf[0] << 32 | buf[1] of each freshly keyed stream, and rt_normal itself for a
 * lane the fast path rejects (its stream untouched, it takes the same words to the slow path).  So the
 * draws are rt_normal's, bit for bit.  With -march=native on an AVX-512 machine this took the filter
 * from 14.1 to 12.4 ns a particle-step at N = 10^4 (interleaved minima, the same answers). */
static void normals_avx512(rt_rng g[RT_RNG_LANES], double z[RT_RNG_LANES]) {
  const __m512i stride = _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi64((long long)sizeof g[0]));
  for (int h = 0; h < RT_RNG_LANES; h += 8) {
    /* A little-endian load of buf[0..1] is buf[0] | buf[1] << 32: rotated, the word rt_normal reads. */
    __m512i w = _mm512_ror_epi64(_mm512_i64gather_epi64(stride, (const void *)g[h].buf, 1), 32);
    __m512i layer = _mm512_and_si512(w, _mm512_set1_epi64(0xFF));
    __m512d x = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64(w, 11)),
                              _mm512_i64gather_pd(layer, rt_zig_x_scaled, 8));
    __mmask8 in = _mm512_cmp_pd_mask(x, _mm512_i64gather_pd(layer, rt_zig_x + 1, 8), _CMP_LT_OQ);
    __m512i sign = _mm512_slli_epi64(_mm512_and_si512(w, _mm512_set1_epi64(0x100)), 55);
    _mm512_storeu_pd(&z[h], _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), sign)));
    for (int l = 0; in != 0xFF && l < 8; l++)
      if (!(in >> l & 1)) z[h + l] = rt_normal(&g[h + l]);
  }
}
#endif

int main(int argc, char **argv) {
  bench b;
  int status = bench_open(&b, argc, argv);
  if (status) return status;
  int64_t n = b.n, steps = b.steps;
  uint64_t seed = b.seed;
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
  b.t0 = bench_now_ns();
  for (int64_t t = 0; t < steps; t++) {
    double y;
    if (bench_y(&b, t, &y)) return 1;
    /* Propagate and weigh; each particle draws from its own (seed, particle, step) stream. */
    double mx = -INFINITY;
    for (int64_t base = 0; base < n; base += RT_RNG_LANES) {
      /* The streams of RT_RNG_LANES particles are keyed together, as the runtime's population loop does. */
      int m = n - base < RT_RNG_LANES ? (int)(n - base) : RT_RNG_LANES;
      rt_rng g[RT_RNG_LANES];
      rt_rng_key_run(g, sizeof g[0], (uint64_t)base, m, seed, (uint32_t)t, RT_DOMAIN_PARTICLE);
#if defined(__AVX512F__) && defined(__AVX512DQ__)
      double z[RT_RNG_LANES];
      const int drawn = m == RT_RNG_LANES ? (normals_avx512(g, z), 1) : 0;
#else
      const double *z = NULL;
      const int drawn = 0; /* the loop below is then the runtime's draw, one normal at a time */
#endif
      for (int l = 0; l < m; l++) {
        int64_t i = base + l;
        double xi = x[i] + (drawn ? z[l] : rt_normal(&g[l]));
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
