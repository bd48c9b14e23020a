/* test_weights_exp.c — the weigh pass's exponential: within 0.6 ulp of long double expl where the
 * result is a normal number, 1 ulp where it is subnormal (rounded twice), 0 past the underflow; exact where exp is (0, -inf,
 * NaN), and the same bits from every kernel the CPU has, for runs of every length (full vectors and
 * their scalar tails); and the weigh pass's sums, in their written-out order from every kernel. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "population/population.h"

/* |got - want| in units in the last place of want (a double near it; 2^-1074 in the subnormals). */
static double ulps(double got, long double want) {
  double w = (double)want;
  double ulp = nextafter(fabs(w), INFINITY) - fabs(w);
  if (w == 0.0) ulp = 0x1p-1074;
  return (double)(fabsl((long double)got - want) / (long double)ulp);
}

static void test_accuracy(void) {
  enum { N = 400000, CHUNK = 64 };
  double *x = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
  rt_rng g;
  rt_rng_init(&g, 3, 0, 0, RT_DOMAIN_TEST);
  for (int i = 0; i < N; i++) {
    double u = rt_uniform(&g);
    switch (i % 5) {
      case 0: x[i] = -745.5 * u; break;                      /* the whole range */
      case 1: x[i] = -40.0 * u; break;                       /* where weights live */
      case 2: x[i] = -1e-3 * u; break;                       /* near 0: r alone */
      case 3: x[i] = -708.0 - 37.5 * u; break;               /* subnormal results and the underflow */
      default: x[i] = -(double)(i % 4096) * 0x1.62e42fefa39efp-7; break; /* near multiples of ln2/64 */
    }
  }
  for (int level = 0; level <= 3; level++) {
    if (rt_exp_kernel(level) != level) continue;
    double worst = 0.0, at = 0.0, worst_sub = 0.0, at_sub = 0.0; /* normal results; subnormal ones */
    for (int i = 0; i < N; i += CHUNK) rt_exp_shifted(x + i, N - i < CHUNK ? N - i : CHUNK, 0.0, y + i);
    for (int i = 0; i < N; i++) {
      long double want = expl((long double)x[i]);
      double e = ulps(y[i], want);
      if (want >= DBL_MIN && e > worst) worst = e, at = x[i];
      if (want < DBL_MIN && e > worst_sub) worst_sub = e, at_sub = x[i];
    }
    CHECK(worst <= 0.6, "kernel %d: %.3f ulp at x = %a", level, worst, at);
    CHECK(worst_sub <= 1.0, "kernel %d: %.3f ulp at x = %a (a subnormal result)", level, worst_sub, at_sub);
  }
  rt_exp_kernel(3);
  free(x);
  free(y);
}

/* The special values, through the shift by the block's maximum. */
static void test_exact(void) {
  double logw[6] = {2.5, -INFINITY, NAN, 2.5 - 1e4, 2.5 - 745.2, 2.5 - 0.0}, e[6];
  for (int level = 0; level <= 3; level++) {
    if (rt_exp_kernel(level) != level) continue;
    rt_exp_shifted(logw, 6, 2.5, e);
    CHECK(e[0] == 1.0 && e[5] == 1.0, "kernel %d: exp(0) = %a", level, e[0]);
    CHECK(e[1] == 0.0 && !signbit(e[1]), "kernel %d: exp(-inf) = %a", level, e[1]);
    CHECK(isnan(e[2]), "kernel %d: exp(NaN) = %a", level, e[2]);
    CHECK(e[3] == 0.0, "kernel %d: exp(-1e4) = %a", level, e[3]);
    CHECK(e[4] == 0x1p-1074 || e[4] == 0.0, "kernel %d: exp(-745.2) = %a", level, e[4]);
  }
  rt_exp_kernel(3);
}

/* Every kernel gives the scalar code's bits, for runs of 1 to 70 slots, shifted by a maximum that is
 * not 0 (the subtraction is the kernels' too). */
static void test_kernels_agree(void) {
  enum { M = 70 };
  double logw[M], want[M], got[M];
  int64_t differ = 0, runs = 0;
  int best = rt_exp_kernel(-1);
  rt_rng g;
  rt_rng_init(&g, 4, 0, 0, RT_DOMAIN_TEST);
  for (int rep = 0; rep < 2000; rep++) {
    int64_t m = 1 + rep % M;
    double mx = 10.0 * rt_uniform(&g) - 5.0;
    for (int64_t i = 0; i < m; i++) logw[i] = mx - (rep % 3 ? 50.0 : 800.0) * rt_uniform(&g);
    if (rep % 7 == 0) logw[m / 2] = -INFINITY;
    if (rep % 11 == 0) logw[m - 1] = mx;
    rt_exp_kernel(0);
    rt_exp_shifted(logw, m, mx, want);
    for (int level = 2; level <= best; level++) {
      rt_exp_kernel(level);
      rt_exp_shifted(logw, m, mx, got);
      differ += memcmp(got, want, (size_t)m * sizeof(double)) != 0;
      runs++;
    }
  }
  rt_exp_kernel(best);
  CHECK(differ == 0, "%lld of %lld runs differ from the scalar kernel", (long long)differ, (long long)runs);
}

/* rt_weigh_sums's order written out: groups of eight slots, a group's prefix slot after slot, each
 * running sum the carry plus the prefix, the carry plus the group's whole prefix the next carry; the
 * squares in eight lanes, added up pairwise.  e comes from the scalar kernel. */
static void weigh_reference(const double *e, int64_t m, int running, double *out, double *sum, double *sum_sq) {
  double carry = 0.0, lane[8] = {0.0};
  for (int64_t g = 0; g < m; g += 8) {
    double prefix = 0.0;
    for (int64_t i = g; i < m && i < g + 8; i++) {
      prefix = i == g ? e[i] : prefix + e[i];
      out[i] = running ? carry + prefix : e[i];
      lane[i - g] += e[i] * e[i];
    }
    carry = carry + prefix;
  }
  *sum = carry;
  *sum_sq = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* Every kernel's sums are the reference's bits, for runs of 1 to 70 slots and runs longer than a chunk,
 * with weights -inf, at the maximum, far below it; the running sums never decrease, end at the sum, and
 * are within a few ulp of a long double running sum. */
static void test_weigh_sums(void) {
  enum { M = 300 };
  double logw[M], e[M], want[M], got[M];
  int64_t differ = 0, runs = 0, backwards = 0;
  double worst = 0.0;
  int best = rt_exp_kernel(-1);
  rt_rng g;
  rt_rng_init(&g, 6, 0, 0, RT_DOMAIN_TEST);
  for (int rep = 0; rep < 1200; rep++) {
    int64_t m = rep % 4 ? 1 + rep % 70 : 1 + rep % M;
    int running = rep / 4 % 2; /* both kinds of sums for runs of every length */
    double mx = 6.0 * rt_uniform(&g) - 3.0;
    for (int64_t i = 0; i < m; i++) logw[i] = mx - (rep % 3 ? 8.0 : 900.0) * rt_uniform(&g);
    if (rep % 5 == 0) logw[m / 3] = -INFINITY;
    logw[(m - 1) / 2] = mx;
    rt_exp_kernel(0);
    rt_exp_shifted(logw, m, mx, e);
    double sum, sum_sq;
    weigh_reference(e, m, running, want, &sum, &sum_sq);
    long double exact = 0.0L;
    for (int64_t i = 0; i < m; i++) {
      exact += e[i];
      if (running) {
        double ulp = nextafter(want[i], INFINITY) - want[i], err = (double)fabsl(want[i] - exact) / ulp;
        worst = err > worst ? err : worst;
        backwards += i > 0 && want[i] < want[i - 1];
      }
    }
    for (int level = 0; level <= best; level++) {
      if (rt_exp_kernel(level) != level) continue;
      double s, sq;
      rt_weigh_sums(logw, m, mx, got, running, &s, &sq);
      differ += memcmp(got, want, (size_t)m * sizeof(double)) != 0 || s != sum || sq != sum_sq;
      differ += running && got[m - 1] != s;
      runs++;
    }
  }
  rt_exp_kernel(best);
  CHECK(differ == 0, "%lld of %lld runs differ from the written-out order", (long long)differ, (long long)runs);
  CHECK(backwards == 0, "%lld running sums decrease", (long long)backwards);
  CHECK(worst <= 8.0, "running sums %.2f ulp from a long double sum", worst);
}

/* Every kernel's rt_max_of is the largest number of the run, whatever the run's length and where the
 * maximum lies; NaNs are passed over, a run of none but NaN and -inf gives -inf.  So is rt_max_lanes of
 * the run taken by rt_max_into in pieces of any lengths. */
static void test_max(void) {
  enum { M = 70 };
  double x[M];
  int64_t wrong = 0, runs = 0;
  int best = rt_exp_kernel(-1);
  rt_rng g;
  rt_rng_init(&g, 5, 0, 0, RT_DOMAIN_TEST);
  for (int level = 0; level <= best; level++) {
    if (rt_exp_kernel(level) != level && level != 1) continue;
    for (int rep = 0; rep < 3000; rep++) {
      int64_t m = 1 + rep % M, at = (int64_t)(rt_uniform(&g) * (double)m);
      for (int64_t i = 0; i < m; i++) x[i] = rep % 5 == 0 ? NAN : -100.0 * rt_uniform(&g);
      if (rep % 3 == 0) x[(at + 1) % m] = NAN;
      if (rep % 4 == 0) x[(at + 2) % m] = -INFINITY;
      double want = rep % 5 == 0 ? -INFINITY : 1.0 + rt_uniform(&g);
      if (rep % 5 != 0) x[at] = want;
      else if (rep % 2) x[at] = -INFINITY;
      wrong += rt_max_of(x, m) != want;
      double acc[RT_MAX_LANES];
      for (int l = 0; l < RT_MAX_LANES; l++) acc[l] = -INFINITY;
      for (int64_t lo = 0, piece; lo < m; lo += piece) {
        piece = 1 + (int64_t)(rt_uniform(&g) * 40.0);
        rt_max_into(x + lo, piece < m - lo ? piece : m - lo, acc);
      }
      wrong += rt_max_lanes(acc) != want;
      runs++;
    }
  }
  rt_exp_kernel(best);
  CHECK(wrong == 0, "%lld of %lld maxima wrong", (long long)wrong, (long long)runs);
}

int main(void) {
  test_accuracy();
  test_exact();
  test_kernels_agree();
  test_weigh_sums();
  test_max();
  return check_report("test_weights_exp");
}
