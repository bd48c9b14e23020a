/* test_distributions.c — every sampler's mean and variance against the analytic values (z-tests at
 * 5 sigma with fixed seeds), log-density spot checks (reference values from scipy.stats), boundary
 * conventions, and parameter validation messages. */
#include <stdlib.h>

#include "check.h"
#include "base/base.h"

enum { N_DRAWS = 400000 };

typedef struct moment_case {
  const char *name;
  int32_t family;
  double params[8];
  double mean, var;
  int integral; /* draws must be integers */
  double lo, hi; /* support bounds to check */
} moment_case;

static void check_moments(const moment_case *c) {
  double *x = malloc(N_DRAWS * sizeof(double));
  int32_t st = sirenrt_sample_many(c->family, c->params, N_DRAWS, 1234, x);
  CHECK(st == 0, "%s: sample_many failed: %s", c->name, sirenrt_last_error());
  if (st) {
    free(x);
    return;
  }
  double s = 0, outside = 0, nonint = 0;
  for (int i = 0; i < N_DRAWS; i++) {
    s += x[i];
    outside += !(x[i] >= c->lo && x[i] <= c->hi);
    nonint += c->integral && x[i] != floor(x[i]);
  }
  double m = s / N_DRAWS, m2 = 0, m4 = 0;
  for (int i = 0; i < N_DRAWS; i++) {
    double d = x[i] - m;
    m2 += d * d;
    m4 += d * d * d * d;
  }
  m2 /= N_DRAWS;
  m4 /= N_DRAWS;
  char what[96];
  snprintf(what, sizeof what, "%s mean", c->name);
  CHECK_NEAR(m, c->mean, 5 * sqrt(c->var / N_DRAWS) + 1e-9 * fabs(c->mean), what);
  snprintf(what, sizeof what, "%s variance", c->name);
  CHECK_NEAR(m2, c->var, 5 * sqrt(fabs(m4 - m2 * m2) / N_DRAWS) + 1e-12, what);
  CHECK(outside == 0, "%s: %g draws outside [%g, %g]", c->name, outside, c->lo, c->hi);
  CHECK(nonint == 0, "%s: %g non-integral draws", c->name, nonint);
  /* Same seed, same draws. */
  double y[16];
  sirenrt_sample_many(c->family, c->params, 16, 1234, y);
  CHECK(memcmp(x, y, sizeof y) == 0, "%s: sample_many is not deterministic", c->name);
  free(x);
}

static double bb_var(double n, double a, double b) {
  return n * a * b * (a + b + n) / ((a + b) * (a + b) * (a + b + 1));
}

static void test_sampler_moments(void) {
  const double inf = INFINITY;
  const moment_case cases[] = {
      {"gaussian(1,2)", SIRENRT_FAM_GAUSSIAN, {1, 2}, 1, 2, 0, -inf, inf},
      {"gaussian(-3,1e-4)", SIRENRT_FAM_GAUSSIAN, {-3, 1e-4}, -3, 1e-4, 0, -inf, inf},
      {"beta(2.5,1.5)", SIRENRT_FAM_BETA, {2.5, 1.5}, 2.5 / 4, 2.5 * 1.5 / (16 * 5), 0, 0, 1},
      {"beta(0.1,0.2)", SIRENRT_FAM_BETA, {0.1, 0.2}, 1.0 / 3, 0.02 / (0.09 * 1.3), 0, 0, 1},
      {"bernoulli(0.3)", SIRENRT_FAM_BERNOULLI, {0.3}, 0.3, 0.21, 1, 0, 1},
      {"binomial(10,0.3)", SIRENRT_FAM_BINOMIAL, {10, 0.3}, 3, 2.1, 1, 0, 10},
      {"binomial(1000,0.3)", SIRENRT_FAM_BINOMIAL, {1000, 0.3}, 300, 210, 1, 0, 1000},
      {"binomial(50,0.8)", SIRENRT_FAM_BINOMIAL, {50, 0.8}, 40, 8, 1, 0, 50},
      {"binomial(7.9,0.5) truncates n", SIRENRT_FAM_BINOMIAL, {7.9, 0.5}, 3.5, 1.75, 1, 0, 7},
      {"beta_binomial(10,2,3)", SIRENRT_FAM_BETA_BINOMIAL, {10, 2, 3}, 4, bb_var(10, 2, 3), 1, 0, 10},
      {"negative_binomial(3,0.4)", SIRENRT_FAM_NEGATIVE_BINOMIAL, {3, 0.4}, 4.5, 11.25, 1, 0, inf},
      {"exponential(2)", SIRENRT_FAM_EXPONENTIAL, {2}, 0.5, 0.25, 0, 0, inf},
      {"gamma(2.5,1.5)", SIRENRT_FAM_GAMMA, {2.5, 1.5}, 2.5 / 1.5, 2.5 / 2.25, 0, 0, inf},
      {"gamma(0.3,2)", SIRENRT_FAM_GAMMA, {0.3, 2}, 0.15, 0.075, 0, 0, inf},
      {"poisson(3.5)", SIRENRT_FAM_POISSON, {3.5}, 3.5, 3.5, 1, 0, inf},
      {"poisson(50)", SIRENRT_FAM_POISSON, {50}, 50, 50, 1, 0, inf},
      {"poisson(0)", SIRENRT_FAM_POISSON, {0}, 0, 0, 1, 0, 0},
      {"delta(4.2)", SIRENRT_FAM_DELTA, {4.2}, 4.2, 0, 0, 4.2, 4.2},
      {"categorical(2,4,[.2,.5,.3])", SIRENRT_FAM_CATEGORICAL, {2, 4, 3, 0.2, 0.5, 0.3}, 3.1, 0.49, 1, 2, 4},
      {"uniform_int(-2,3)", SIRENRT_FAM_UNIFORM_INT, {-2, 3}, 0.5, 35.0 / 12, 1, -2, 3},
      {"student_t(1,2,10)", SIRENRT_FAM_STUDENT_T, {1, 2, 10}, 1, 2.5, 0, -inf, inf},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_moments(&cases[i]);
}

static void test_means(void) {
  const double p[] = {0.2, 0.5, 0.3};
  CHECK_NEAR(sirenrt_mean_gaussian(1, 2), 1, 0, "mean gaussian");
  CHECK_NEAR(sirenrt_mean_beta(2, 6), 0.25, 1e-15, "mean beta");
  CHECK_NEAR(sirenrt_mean_bernoulli(0.3), 0.3, 0, "mean bernoulli");
  CHECK_NEAR(sirenrt_mean_binomial(10, 0.3), 3, 1e-15, "mean binomial");
  CHECK_NEAR(sirenrt_mean_beta_binomial(10, 2, 3), 4, 1e-15, "mean beta_binomial");
  CHECK_NEAR(sirenrt_mean_negative_binomial(3, 0.4), 4.5, 1e-14, "mean negative_binomial");
  CHECK_NEAR(sirenrt_mean_exponential(2), 0.5, 0, "mean exponential");
  CHECK_NEAR(sirenrt_mean_gamma(3, 2), 1.5, 0, "mean gamma");
  CHECK_NEAR(sirenrt_mean_poisson(3.5), 3.5, 0, "mean poisson");
  CHECK_NEAR(sirenrt_mean_delta(4.2), 4.2, 0, "mean delta");
  CHECK_NEAR(sirenrt_mean_categorical(2, 4, p, 3), 3.1, 1e-15, "mean categorical");
  CHECK_NEAR(sirenrt_mean_uniform_int(-2, 3), 0.5, 0, "mean uniform_int");
  CHECK_NEAR(sirenrt_mean_student_t(1, 2, 5), 1, 0, "mean student_t");
}

static void test_logpdf(void) {
  const double p[] = {0.2, 0.5, 0.3};
  const double inf = INFINITY, tol = 1e-12;
  /* Reference values: scipy.stats 1.17 with ARCHITECTURE.md §9's parameterisations. */
  CHECK_NEAR(sirenrt_logpdf_gaussian(1, 2, 0.3), -1.3880121234846454, tol, "gaussian");
  CHECK_NEAR(sirenrt_logpdf_beta(2.5, 1.5, 0.3), -0.3564378420678893, tol, "beta");
  CHECK_NEAR(sirenrt_logpdf_bernoulli(0.3, 1), -1.2039728043259361, tol, "bernoulli true");
  CHECK_NEAR(sirenrt_logpdf_bernoulli(0.3, 0), -0.35667494393873245, tol, "bernoulli false");
  CHECK_NEAR(sirenrt_logpdf_binomial(10, 0.3, 4), -1.6088333502186698, tol, "binomial");
  CHECK_NEAR(sirenrt_logpdf_beta_binomial(10, 2, 3, 4), -1.967112356705917, tol, "beta_binomial");
  CHECK_NEAR(sirenrt_logpdf_negative_binomial(3, 0.4, 5), -2.258477876728995, tol, "negative_binomial");
  CHECK_NEAR(sirenrt_logpdf_exponential(2, 0.7), -0.7068528194400546, tol, "exponential");
  CHECK_NEAR(sirenrt_logpdf_gamma(2.5, 1.5, 1.2), -0.7975377650115762, tol, "gamma");
  CHECK_NEAR(sirenrt_logpdf_poisson(3.5, 2), -1.6876212435692093, tol, "poisson");
  CHECK_NEAR(sirenrt_logpdf_student_t(1, 2, 4, 0.3), -1.4760214899002488, tol, "student_t");
  CHECK_NEAR(sirenrt_logpdf_categorical(2, 4, p, 3, 3), log(0.5), tol, "categorical");
  CHECK_NEAR(sirenrt_logpdf_uniform_int(-2, 3, 0), -log(6.0), tol, "uniform_int");
  CHECK_NEAR(sirenrt_logpdf_delta(4.2, 4.2), 0, 0, "delta");

  /* Boundaries and outside the support: -inf (or +inf for an unbounded density), never NaN. */
  CHECK(sirenrt_logpdf_beta(2, 2, -0.1) == -inf, "beta below 0");
  CHECK_NEAR(sirenrt_logpdf_beta(1, 3, 0), log(3.0), tol, "beta(1,3) at 0");
  CHECK(sirenrt_logpdf_beta(0.5, 0.5, 0) == inf, "beta(0.5,0.5) at 0");
  CHECK(sirenrt_logpdf_bernoulli(0, 1) == -inf, "bernoulli(0) at true");
  CHECK(sirenrt_logpdf_bernoulli(0, 0) == 0, "bernoulli(0) at false");
  CHECK(sirenrt_logpdf_bernoulli(1, 0) == -inf, "bernoulli(1) at false");
  CHECK(sirenrt_logpdf_binomial(10, 0.3, 11) == -inf, "binomial above n");
  CHECK(sirenrt_logpdf_binomial(10, 0.3, 2.5) == -inf, "binomial non-integral");
  CHECK(sirenrt_logpdf_binomial(10, 0, 0) == 0, "binomial(10,0) at 0");
  CHECK(sirenrt_logpdf_binomial(10, 1, 10) == 0, "binomial(10,1) at 10");
  CHECK(sirenrt_logpdf_binomial(10, 1, 9) == -inf, "binomial(10,1) at 9");
  CHECK(sirenrt_logpdf_negative_binomial(3, 1, 0) == 0, "negative_binomial(3,1) at 0");
  CHECK(sirenrt_logpdf_negative_binomial(3, 0.5, -1) == -inf, "negative_binomial at -1");
  CHECK(sirenrt_logpdf_exponential(2, -1) == -inf, "exponential below 0");
  CHECK_NEAR(sirenrt_logpdf_exponential(2, 0), log(2.0), tol, "exponential at 0");
  CHECK(sirenrt_logpdf_gamma(2.5, 1, inf) == -inf, "gamma at inf");
  CHECK(sirenrt_logpdf_poisson(0, 0) == 0, "poisson(0) at 0");
  CHECK(sirenrt_logpdf_poisson(0, 1) == -inf, "poisson(0) at 1");
  CHECK(sirenrt_logpdf_categorical(2, 4, p, 3, 5) == -inf, "categorical above hi");
  CHECK(sirenrt_logpdf_categorical(2, 4, p, 3, 1) == -inf, "categorical below lo");
  CHECK(sirenrt_logpdf_categorical(2, 4, p, 3, 2.5) == -inf, "categorical non-integral");
  CHECK(sirenrt_logpdf_uniform_int(-2, 3, 4) == -inf, "uniform_int above");
  CHECK(sirenrt_logpdf_delta(4.2, 4) == -inf, "delta elsewhere");
  CHECK(sirenrt_logpdf_gaussian(0, 1, NAN) != sirenrt_logpdf_gaussian(0, 1, NAN), "NaN in, NaN out (pure)");
  CHECK(isnan(sirenrt_logpdf_gaussian(0, 0, 1)), "invalid parameters give NaN");
  CHECK(isnan(sirenrt_logpdf_categorical(2, 4, p, 2, 3)), "wrong probability count gives NaN");
}

static void expect_error(int32_t family, const double *params, const char *needle) {
  double out[4];
  int32_t st = sirenrt_sample_many(family, params, 4, 1, out);
  CHECK(st != 0, "expected an error containing \"%s\"", needle);
  if (st) CHECK_CONTAINS(sirenrt_last_error(), needle);
}

static void test_validation(void) {
  expect_error(SIRENRT_FAM_GAUSSIAN, (double[]){0, -1}, "gaussian: variance must be > 0, got -1");
  expect_error(SIRENRT_FAM_GAUSSIAN, (double[]){0, NAN}, "gaussian: variance must be > 0, got nan");
  expect_error(SIRENRT_FAM_BETA, (double[]){0, 1}, "beta: alpha must be > 0, got 0");
  expect_error(SIRENRT_FAM_BETA, (double[]){1, -2}, "beta: beta must be > 0, got -2");
  expect_error(SIRENRT_FAM_BERNOULLI, (double[]){1.5}, "bernoulli: probability must be in [0, 1], got 1.5");
  expect_error(SIRENRT_FAM_BINOMIAL, (double[]){-1, 0.5}, "binomial: n must be >= 0");
  expect_error(SIRENRT_FAM_BINOMIAL, (double[]){5, NAN}, "binomial: probability must be in [0, 1]");
  expect_error(SIRENRT_FAM_BINOMIAL, (double[]){INFINITY, 0.5}, "binomial: n must be >= 0 and finite, got inf");
  expect_error(SIRENRT_FAM_BETA_BINOMIAL, (double[]){5, 0, 1}, "beta_binomial: alpha must be > 0");
  expect_error(SIRENRT_FAM_NEGATIVE_BINOMIAL, (double[]){0, 0.5}, "negative_binomial: n must be > 0");
  expect_error(SIRENRT_FAM_NEGATIVE_BINOMIAL, (double[]){3, 0}, "negative_binomial: cannot sample with probability 0");
  expect_error(SIRENRT_FAM_EXPONENTIAL, (double[]){0}, "exponential: rate must be > 0, got 0");
  expect_error(SIRENRT_FAM_GAMMA, (double[]){1, 0}, "gamma: rate must be > 0, got 0");
  expect_error(SIRENRT_FAM_GAMMA, (double[]){-1, 1}, "gamma: shape must be > 0, got -1");
  expect_error(SIRENRT_FAM_POISSON, (double[]){-1}, "poisson: rate must be >= 0 and finite, got -1");
  expect_error(SIRENRT_FAM_POISSON, (double[]){INFINITY}, "poisson: rate must be >= 0 and finite, got inf");
  expect_error(SIRENRT_FAM_CATEGORICAL, (double[]){0, 1, 2, 0.5, 0.6}, "categorical: probabilities must sum to 1");
  expect_error(SIRENRT_FAM_CATEGORICAL, (double[]){0, 2, 2, 0.5, 0.5}, "categorical: 2 probabilities given");
  expect_error(SIRENRT_FAM_CATEGORICAL, (double[]){2, 1, 2, 0.5, 0.5}, "categorical: upper bound");
  expect_error(SIRENRT_FAM_CATEGORICAL, (double[]){-1, 0, 2, 0.5, 0.5}, "categorical: lower bound");
  expect_error(SIRENRT_FAM_CATEGORICAL, (double[]){0, 1, 2, 1.5, -0.5}, "categorical: probability 0 must be");
  expect_error(SIRENRT_FAM_UNIFORM_INT, (double[]){0.5, 3}, "uniform_int: bounds must be integers");
  expect_error(SIRENRT_FAM_UNIFORM_INT, (double[]){3, 1}, "uniform_int: lower bound must be <= upper bound");
  expect_error(SIRENRT_FAM_STUDENT_T, (double[]){0, 1, 1}, "student_t: degrees of freedom must be > 1, got 1");
  expect_error(SIRENRT_FAM_STUDENT_T, (double[]){0, 0, 3}, "student_t: squared scale must be > 0");
  expect_error(99, (double[]){0}, "unknown distribution family 99");
  /* Valid edge cases draw without error. */
  double out[8];
  CHECK(sirenrt_sample_many(SIRENRT_FAM_BERNOULLI, (double[]){0}, 8, 1, out) == 0 && out[0] == 0, "bernoulli(0)");
  CHECK(sirenrt_sample_many(SIRENRT_FAM_BINOMIAL, (double[]){0, 0.5}, 8, 1, out) == 0 && out[7] == 0, "binomial(0,.5)");
  CHECK(sirenrt_sample_many(SIRENRT_FAM_BINOMIAL, (double[]){9, 1}, 8, 1, out) == 0 && out[3] == 9, "binomial(9,1)");
  CHECK(sirenrt_sample_many(SIRENRT_FAM_UNIFORM_INT, (double[]){5, 5}, 8, 1, out) == 0 && out[2] == 5, "u_int(5,5)");
  CHECK(sirenrt_sample_many(SIRENRT_FAM_CATEGORICAL, (double[]){0, 2, 3, 0, 1, 0}, 8, 1, out) == 0 && out[5] == 1,
        "categorical with a certain outcome");
}

int main(void) {
  test_sampler_moments();
  test_means();
  test_logpdf();
  test_validation();
  return check_report("test_distributions");
}
