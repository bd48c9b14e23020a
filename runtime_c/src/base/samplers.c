/* samplers.c — variate generators for the non-Gaussian families.  Parameters are valid here;
 * distributions.c checks them.  Each method is exact (rejection or inversion), chosen per parameter
 * range so the expected cost stays O(1). */
#include "base.h"

/* Marsaglia & Tsang (2000) for shape >= 1; shape < 1 boosts to shape + 1 and scales by U^(1/shape). */
double rt_gamma(rt_rng *g, double shape) {
  if (shape < 1.0) return rt_gamma(g, shape + 1.0) * pow(rt_uniform_pos(g), 1.0 / shape);
  double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = rt_normal(g);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = rt_uniform_pos(g);
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return d * v;
    if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v;
  }
}

/* The boost for small shapes is done in log space, so beta(0.01, 0.01) does not turn into 0/0. */
double rt_log_gamma(rt_rng *g, double shape) {
  if (shape >= 1.0) return log(rt_gamma(g, shape));
  return log(rt_gamma(g, shape + 1.0)) + log(rt_uniform_pos(g)) / shape;
}

/* X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b), computed as 1 / (1 + exp(log Y - log X)). */
double rt_beta(rt_rng *g, double a, double b) {
  double lx = rt_log_gamma(g, a), ly = rt_log_gamma(g, b);
  return 1.0 / (1.0 + exp(ly - lx));
}

/* Inversion by sequential search from 0; used while n*p is small so the search is short. */
static double binomial_inversion(rt_rng *g, int64_t n, double p) {
  double q = 1.0 - p, s = p / q, a = (double)(n + 1) * s, r0 = pow(q, (double)n);
  for (;;) {
    double u = rt_uniform(g), r = r0;
    int64_t x = 0;
    while (u > r && x < n) {
      u -= r;
      x++;
      r *= a / (double)x - s;
    }
    if (u <= r) return (double)x; /* else rounding exhausted the mass: draw again */
  }
}

/* BTRS, Hörmann (1993): transformed rejection with squeeze, for n*p >= 14 and p <= 1/2. */
static double binomial_btrs(rt_rng *g, int64_t n_int, double p) {
  double n = (double)n_int, q = 1.0 - p;
  double spq = sqrt(n * p * q);
  double b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5;
  double alpha = (2.83 + 5.1 / b) * spq, vr = 0.92 - 4.2 / b;
  double m = floor((n + 1.0) * p), lpq = log(p / q);
  double h = rt_lgamma(m + 1.0) + rt_lgamma(n - m + 1.0);
  for (;;) {
    double u = rt_uniform(g) - 0.5, v = rt_uniform_pos(g);
    double us = 0.5 - fabs(u);
    double k = floor((2.0 * a / us + b) * u + c);
    if (k < 0.0 || k > n) continue;
    if (us >= 0.07 && v <= vr) return k;
    v = log(v * alpha / (a / (us * us) + b));
    if (v <= h - rt_lgamma(k + 1.0) - rt_lgamma(n - k + 1.0) + (k - m) * lpq) return k;
  }
}

double rt_binomial(rt_rng *g, int64_t n, double p) {
  if (n == 0 || p == 0.0) return 0.0;
  if (p == 1.0) return (double)n;
  if (p > 0.5) return (double)n - rt_binomial(g, n, 1.0 - p); /* both methods want p <= 1/2 */
  if ((double)n * p < 14.0) return binomial_inversion(g, n, p);
  return binomial_btrs(g, n, p);
}

/* PTRS, Hörmann (1993), for lambda >= 10; Knuth's product of uniforms below. */
double rt_poisson(rt_rng *g, double lambda) {
  if (lambda == 0.0) return 0.0;
  if (lambda < 10.0) {
    double limit = exp(-lambda), prod = rt_uniform_pos(g), k = 0.0;
    while (prod > limit) {
      k += 1.0;
      prod *= rt_uniform_pos(g);
    }
    return k;
  }
  double slam = sqrt(lambda), loglam = log(lambda);
  double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  double log_invalpha = log(1.1239 + 1.1328 / (b - 3.4)), vr = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    double u = rt_uniform(g) - 0.5, v = rt_uniform_pos(g);
    double us = 0.5 - fabs(u);
    double k = floor((2.0 * a / us + b) * u + lambda + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log_invalpha - log(a / (us * us) + b) <= -lambda + k * loglam - rt_lgamma(k + 1.0)) return k;
  }
}

/* Z / sqrt(chi2_nu / nu), chi2_nu = 2 * Gamma(nu / 2). */
double rt_student_t(rt_rng *g, double nu) {
  double z = rt_normal(g);
  double chi2 = 2.0 * rt_gamma(g, 0.5 * nu);
  return z / sqrt(chi2 / nu);
}
