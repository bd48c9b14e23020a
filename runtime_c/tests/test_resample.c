/* test_resample.c — normalisation, ESS, and the four schemes: offspring counts always sum to N and
 * are unbiased (E[count_i] = N w_i); systematic/stratified/residual keep counts near N w_i. */
#include <stdlib.h>

#include "check.h"
#include "internal.h"

static const char *scheme_name[] = {"systematic", "multinomial", "stratified", "residual"};

static void test_normalise_and_ess(void) {
  double c[4];
  double w[4];
  double lw[4] = {0, log(3.0), -INFINITY, log(4.0)};
  for (int i = 0; i < 4; i++) c[i] = lw[i] - 1000.0; /* shifting must not underflow */
  double lz = rt_normalise(c, 4, w);
  CHECK_NEAR(lz, log(8.0) - 1000.0, 1e-12, "log sum");
  CHECK_NEAR(w[0], 1.0 / 8, 1e-12, "w0");
  CHECK_NEAR(w[1], 3.0 / 8, 1e-12, "w1");
  CHECK(w[2] == 0.0, "a -inf weight normalises to 0");
  CHECK_NEAR(rt_ess_of(w, 4), 1.0 / (1.0 / 64 + 9.0 / 64 + 16.0 / 64), 1e-12, "ESS");
  for (int i = 0; i < 4; i++) c[i] = -INFINITY;
  CHECK(rt_normalise(c, 4, w) == -INFINITY, "all zero");
  CHECK(rt_ess_of(w, 4) == 0.0, "ESS of zero weights");
  c[1] = INFINITY;
  c[3] = INFINITY;
  rt_normalise(c, 4, w);
  CHECK(w[1] == 0.5 && w[3] == 0.5 && w[0] == 0.0, "infinite weights share the mass");
  double uniform[5] = {0.2, 0.2, 0.2, 0.2, 0.2};
  CHECK_NEAR(rt_ess_of(uniform, 5), 5.0, 1e-12, "ESS of uniform weights");
}

static void test_unbiased(int32_t scheme) {
  enum { N = 10, REPS = 40000 };
  double w[N] = {0.02, 0.3, 0.0, 0.08, 0.15, 0.05, 0.2, 0.1, 0.07, 0.03};
  double mean[N] = {0}, sq[N] = {0};
  int64_t counts[N];
  int sum_ok = 1, spread_ok = 1;
  for (int r = 0; r < REPS; r++) {
    rt_rng g;
    rt_rng_init(&g, 77, 0, (uint32_t)r, RT_DOMAIN_RESAMPLE);
    rt_resample_counts(scheme, w, N, &g, counts);
    int64_t s = 0;
    for (int i = 0; i < N; i++) {
      s += counts[i];
      mean[i] += (double)counts[i];
      sq[i] += (double)counts[i] * (double)counts[i];
      /* Low-variance guarantees: systematic gives floor(N w) or ceil(N w), residual at least floor(N w),
       * stratified is at most one off either way. */
      double nw = N * w[i], c = (double)counts[i];
      if (scheme == SIRENRT_SYSTEMATIC && (c < floor(nw) || c > ceil(nw))) spread_ok = 0;
      if (scheme == SIRENRT_RESIDUAL && c < floor(nw)) spread_ok = 0;
      if (scheme == SIRENRT_STRATIFIED && (c < floor(nw) - 1 || c > ceil(nw) + 1)) spread_ok = 0;
    }
    sum_ok &= s == N;
    sum_ok &= counts[2] == 0; /* a zero weight never has offspring */
  }
  CHECK(sum_ok, "%s: counts must sum to N, zero weights none", scheme_name[scheme]);
  CHECK(spread_ok, "%s: counts far from N w", scheme_name[scheme]);
  for (int i = 0; i < N; i++) {
    double m = mean[i] / REPS, v = sq[i] / REPS - m * m;
    char what[64];
    snprintf(what, sizeof what, "%s: E[count %d]", scheme_name[scheme], i);
    CHECK_NEAR(m, N * w[i], 5 * sqrt(v / REPS) + 1e-9, what);
  }
}

static void test_extremes(void) {
  /* One particle takes all; a large population keeps the sum. */
  enum { N = 1000 };
  double *w = calloc(N, sizeof(double));
  int64_t *counts = malloc(N * sizeof(int64_t));
  w[N - 1] = 1.0;
  for (int32_t s = 0; s <= SIRENRT_RESIDUAL; s++) {
    rt_rng g;
    rt_rng_init(&g, 1, 0, 0, RT_DOMAIN_RESAMPLE);
    rt_resample_counts(s, w, N, &g, counts);
    CHECK(counts[N - 1] == N, "%s: all mass on the last particle", scheme_name[s]);
  }
  for (int i = 0; i < N; i++) w[i] = 1.0 / N;
  for (int32_t s = 0; s <= SIRENRT_RESIDUAL; s++) {
    rt_rng g;
    rt_rng_init(&g, 2, 0, 0, RT_DOMAIN_RESAMPLE);
    rt_resample_counts(s, w, N, &g, counts);
    int64_t sum = 0, ones = 0;
    for (int i = 0; i < N; i++) sum += counts[i], ones += counts[i] == 1;
    CHECK(sum == N, "%s: sum %lld", scheme_name[s], (long long)sum);
    if (s == SIRENRT_SYSTEMATIC)
      CHECK(ones == N, "%s: equal weights keep every particle (%lld kept)", scheme_name[s], (long long)ones);
  }
  free(w);
  free(counts);
}

int main(void) {
  test_normalise_and_ess();
  for (int32_t s = 0; s <= SIRENRT_RESIDUAL; s++) test_unbiased(s);
  test_extremes();
  return check_report("test_resample");
}
