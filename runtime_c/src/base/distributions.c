/* distributions.c — the 13 families of ARCHITECTURE.md §9 as mathematics: validity checks (with the messages
 * users see), log densities / masses and analytic means.  Drawing and weighting particles with them is
 * in sample_observe.c.
 *
 * Boundary conventions (ARCHITECTURE.md §0.2): a density is never an error.  Out of the support, non-integral
 * for an integer family, or NaN -> -inf; terms like 0 * log 0 are 0 (xlogy), so e.g. bernoulli(0)
 * at false is log 1 = 0 and binomial(n, 1) at n is 0. */
#define _DEFAULT_SOURCE /* lgamma_r */
#include "base.h"

#include <stdio.h>

#define BAD(...) (snprintf(msg, RT_MSG, __VA_ARGS__), 1)

static int is_int(double x) { return isfinite(x) && x == floor(x); }
static int is_prob(double p) { return p >= 0.0 && p <= 1.0; }
static double xlogy(double a, double y) { return a == 0.0 ? 0.0 : a * log(y); }
static double xlog1py(double a, double y) { return a == 0.0 ? 0.0 : a * log1p(y); }
double rt_lgamma(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

static double log_beta(double a, double b) { return rt_lgamma(a) + rt_lgamma(b) - rt_lgamma(a + b); }
static double log_choose(double n, double k) { return rt_lgamma(n + 1.0) - rt_lgamma(k + 1.0) - rt_lgamma(n - k + 1.0); }

/* ------------------------------------------------------------------ validity (ARCHITECTURE.md §9) ---------- */
/* Comparisons are written so that NaN parameters fail them. */

int rt_bad_gaussian(double mu, double var, char *msg) {
  (void)mu;
  if (!(var > 0.0)) return BAD("gaussian: variance must be > 0, got %g", var);
  return 0;
}

int rt_bad_beta(double a, double b, char *msg) {
  if (!(a > 0.0)) return BAD("beta: alpha must be > 0, got %g", a);
  if (!(b > 0.0)) return BAD("beta: beta must be > 0, got %g", b);
  return 0;
}

int rt_bad_bernoulli(double p, char *msg) {
  if (!is_prob(p)) return BAD("bernoulli: probability must be in [0, 1], got %g", p);
  return 0;
}

/* Counts must be finite so that sampling terminates. */
int rt_bad_binomial(double n, double p, char *msg) {
  if (!(n >= 0.0 && isfinite(n))) return BAD("binomial: n must be >= 0 and finite, got %g", n);
  if (!is_prob(p)) return BAD("binomial: probability must be in [0, 1], got %g", p);
  return 0;
}

int rt_bad_beta_binomial(double n, double a, double b, char *msg) {
  if (!(n >= 0.0 && isfinite(n))) return BAD("beta_binomial: n must be >= 0 and finite, got %g", n);
  if (!(a > 0.0)) return BAD("beta_binomial: alpha must be > 0, got %g", a);
  if (!(b > 0.0)) return BAD("beta_binomial: beta must be > 0, got %g", b);
  return 0;
}

/* ARCHITECTURE.md §9 lists only 0 <= p <= 1; n > 0 is added because the mass and the sampler (numpy's too) are
 * undefined otherwise. */
int rt_bad_negative_binomial(double n, double p, char *msg) {
  if (!(n > 0.0 && isfinite(n))) return BAD("negative_binomial: n must be > 0 and finite, got %g", n);
  if (!is_prob(p)) return BAD("negative_binomial: probability must be in [0, 1], got %g", p);
  return 0;
}

int rt_bad_exponential(double rate, char *msg) {
  if (!(rate > 0.0)) return BAD("exponential: rate must be > 0, got %g", rate);
  return 0;
}

int rt_bad_gamma(double shape, double rate, char *msg) {
  if (!(shape > 0.0)) return BAD("gamma: shape must be > 0, got %g", shape);
  if (!(rate > 0.0)) return BAD("gamma: rate must be > 0, got %g", rate);
  return 0;
}

int rt_bad_poisson(double lambda, char *msg) {
  if (!(lambda >= 0.0 && isfinite(lambda))) return BAD("poisson: rate must be >= 0 and finite, got %g", lambda);
  return 0;
}

/* Every point is a valid delta (its check exists so that the observe wrappers are uniform). */
int rt_bad_delta(double v, char *msg) {
  (void)v;
  (void)msg;
  return 0;
}

int rt_bad_categorical(double lo, double hi, const double *probs, int64_t n, char *msg) {
  if (!(is_int(lo) && lo >= 0.0)) return BAD("categorical: lower bound must be an integer >= 0, got %g", lo);
  if (!(is_int(hi) && hi >= lo))
    return BAD("categorical: upper bound must be an integer >= the lower bound %g, got %g", lo, hi);
  if ((double)n != hi - lo + 1.0)
    return BAD("categorical: %lld probabilities given for the values %g..%g, expected %.0f", (long long)n, lo,
               hi, hi - lo + 1.0);
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (!is_prob(probs[i]))
      return BAD("categorical: probability %lld must be in [0, 1], got %g", (long long)i, probs[i]);
    sum += probs[i];
  }
  /* numpy.isclose(sum, 1) with its default tolerances, as the original checks. */
  if (!(fabs(sum - 1.0) <= 1e-8 + 1e-5)) return BAD("categorical: probabilities must sum to 1, got %.17g", sum);
  return 0;
}

int rt_bad_uniform_int(double a, double b, char *msg) {
  if (!is_int(a) || !is_int(b)) return BAD("uniform_int: bounds must be integers, got %g and %g", a, b);
  if (!(a <= b)) return BAD("uniform_int: lower bound must be <= upper bound, got %g > %g", a, b);
  if (b - a >= 0x1.0p53) return BAD("uniform_int: range %g..%g is too large", a, b);
  return 0;
}

int rt_bad_student_t(double mu, double tau2, double nu, char *msg) {
  (void)mu;
  if (!(tau2 > 0.0)) return BAD("student_t: squared scale must be > 0, got %g", tau2);
  if (!(nu > 1.0)) return BAD("student_t: degrees of freedom must be > 1, got %g", nu);
  return 0;
}

/* ------------------------------------------------------------------ log densities -------------- */

double sirenrt_logpdf_gaussian(double mu, double var, double x) {
  char msg[RT_MSG];
  if (rt_bad_gaussian(mu, var, msg)) return NAN;
  double d = x - mu;
  return -0.5 * log(2.0 * RT_PI * var) - d * d / (2.0 * var);
}

double sirenrt_logpdf_beta(double a, double b, double x) {
  char msg[RT_MSG];
  if (rt_bad_beta(a, b, msg)) return NAN;
  if (!(x >= 0.0 && x <= 1.0)) return -INFINITY;
  return -log_beta(a, b) + xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x);
}

double sirenrt_logpdf_bernoulli(double p, double x) {
  char msg[RT_MSG];
  if (rt_bad_bernoulli(p, msg)) return NAN;
  if (isnan(x)) return -INFINITY;
  return x != 0.0 ? log(p) : log1p(-p); /* the original tests truthiness */
}

double sirenrt_logpdf_binomial(double n, double p, double x) {
  char msg[RT_MSG];
  if (rt_bad_binomial(n, p, msg)) return NAN;
  if (!(is_int(x) && x >= 0.0 && x <= n)) return -INFINITY;
  return log_choose(n, x) + xlogy(x, p) + xlog1py(n - x, -p);
}

double sirenrt_logpdf_beta_binomial(double n, double a, double b, double x) {
  char msg[RT_MSG];
  if (rt_bad_beta_binomial(n, a, b, msg)) return NAN;
  if (!(is_int(x) && x >= 0.0 && x <= n)) return -INFINITY;
  return log_choose(n, x) + log_beta(x + a, n - x + b) - log_beta(a, b);
}

double sirenrt_logpdf_negative_binomial(double n, double p, double x) {
  char msg[RT_MSG];
  if (rt_bad_negative_binomial(n, p, msg)) return NAN;
  if (!(is_int(x) && x >= 0.0)) return -INFINITY;
  return rt_lgamma(x + n) - rt_lgamma(x + 1.0) - rt_lgamma(n) + n * log(p) + xlog1py(x, -p);
}

double sirenrt_logpdf_gamma(double shape, double rate, double x) {
  char msg[RT_MSG];
  if (rt_bad_gamma(shape, rate, msg)) return NAN;
  if (!(x >= 0.0) || isinf(x)) return -INFINITY;
  return xlogy(shape - 1.0, x) - rate * x - rt_lgamma(shape) + shape * log(rate);
}

double sirenrt_logpdf_exponential(double rate, double x) {
  char msg[RT_MSG];
  if (rt_bad_exponential(rate, msg)) return NAN;
  return sirenrt_logpdf_gamma(1.0, rate, x);
}

double sirenrt_logpdf_poisson(double lambda, double x) {
  char msg[RT_MSG];
  if (rt_bad_poisson(lambda, msg)) return NAN;
  if (!(is_int(x) && x >= 0.0)) return -INFINITY;
  return xlogy(x, lambda) - lambda - rt_lgamma(x + 1.0);
}

double sirenrt_logpdf_delta(double v, double x) { return x == v ? 0.0 : -INFINITY; }

double sirenrt_logpdf_categorical(double lo, double hi, const double *probs, int64_t n, double x) {
  char msg[RT_MSG];
  if (rt_bad_categorical(lo, hi, probs, n, msg)) return NAN;
  if (!(is_int(x) && x >= lo && x <= hi)) return -INFINITY;
  return log(probs[(int64_t)(x - lo)]);
}

double sirenrt_logpdf_uniform_int(double a, double b, double x) {
  char msg[RT_MSG];
  if (rt_bad_uniform_int(a, b, msg)) return NAN;
  if (!(is_int(x) && x >= a && x <= b)) return -INFINITY;
  return -log(b - a + 1.0);
}

double sirenrt_logpdf_student_t(double mu, double tau2, double nu, double x) {
  char msg[RT_MSG];
  if (rt_bad_student_t(mu, tau2, nu, msg)) return NAN;
  double d = x - mu;
  return rt_lgamma(0.5 * (nu + 1.0)) - rt_lgamma(0.5 * nu) - 0.5 * log(nu) - 0.5 * log(RT_PI) - 0.5 * log(tau2) -
         0.5 * (nu + 1.0) * log1p(d * d / (nu * tau2));
}

/* ------------------------------------------------------------------ means (ARCHITECTURE.md §9) ------------ */

double sirenrt_mean_gaussian(double mu, double var) { (void)var; return mu; }
double sirenrt_mean_beta(double a, double b) { return a / (a + b); }
double sirenrt_mean_bernoulli(double p) { return p; }
double sirenrt_mean_binomial(double n, double p) { return n * p; }
double sirenrt_mean_beta_binomial(double n, double a, double b) { return n * a / (a + b); }
double sirenrt_mean_negative_binomial(double n, double p) { return n * (1.0 - p) / p; }
double sirenrt_mean_exponential(double rate) { return 1.0 / rate; }
double sirenrt_mean_gamma(double shape, double rate) { return shape / rate; }
double sirenrt_mean_poisson(double lambda) { return lambda; }
double sirenrt_mean_delta(double v) { return v; }
double sirenrt_mean_uniform_int(double a, double b) { return 0.5 * (a + b); }
double sirenrt_mean_student_t(double mu, double tau2, double nu) { (void)tau2; (void)nu; return mu; }

double sirenrt_mean_categorical(double lo, double hi, const double *probs, int64_t n) {
  (void)hi;
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) m += ((double)i + lo) * probs[i];
  return m;
}
