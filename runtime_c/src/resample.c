/* resample.c — weight normalisation (log-sum-exp), effective sample size and the four resampling
 * schemes.  Each scheme produces offspring counts with E[count_i] = N w_i; filter.c turns counts into
 * copies, moving only duplicated particles.  All schemes walk the cumulative weights once against
 * sorted points, so they are O(N). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

double rt_normalise(const double *logw, int64_t n, double *w) {
  double mx = -INFINITY;
  for (int64_t i = 0; i < n; i++)
    if (logw[i] > mx) mx = logw[i];
  if (mx == -INFINITY) {
    memset(w, 0, (size_t)n * sizeof(double));
    return -INFINITY;
  }
  double sum = 0.0;
  if (mx == INFINITY) { /* infinite densities (e.g. gamma(0.5, 1) at 0) share the mass */
    for (int64_t i = 0; i < n; i++) sum += (w[i] = logw[i] == INFINITY ? 1.0 : 0.0);
  } else {
    for (int64_t i = 0; i < n; i++) sum += (w[i] = exp(logw[i] - mx));
  }
  for (int64_t i = 0; i < n; i++) w[i] /= sum;
  return mx + log(sum);
}

double rt_ess_of(const double *w, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += w[i] * w[i];
  return s > 0.0 ? 1.0 / s : 0.0;
}

/* Points left over by rounding (cumulative sum slightly below 1) go to the last live particle. */
static void give_leftover(const double *w, int64_t n, int64_t left, int64_t *counts) {
  if (left <= 0) return;
  int64_t i = n - 1;
  while (i > 0 && !(w[i] > 0.0)) i--;
  counts[i] += left;
}

/* One uniform offset: points (u + j) / N.  The points below the running sum c are the j < c - u, so
 * their number is ceil(c - u) clamped to [0, N]: no data-dependent inner loop (whose mispredicted
 * exits used to cost more than the rest of the filter step). */
static void systematic(const double *w, int64_t n, rt_rng *g, int64_t *counts) {
  double u = rt_uniform(g), c = 0.0, dn = (double)n;
  int64_t below = 0;
  for (int64_t i = 0; i < n; i++) {
    c += w[i] * dn;
    double k = ceil(c - u);
    int64_t now = k <= 0.0 ? 0 : k >= dn ? n : (int64_t)k;
    counts[i] = now - below;
    below = now;
  }
  give_leftover(w, n, n - below, counts);
}

/* One uniform per stratum: points (u_j + j) / N. */
static void stratified(const double *w, int64_t n, rt_rng *g, int64_t *counts) {
  double pos = rt_uniform(g), c = 0.0;
  int64_t j = 0;
  for (int64_t i = 0; i < n; i++) {
    c += w[i] * (double)n;
    while (j < n && pos < c) {
      counts[i]++;
      j++;
      pos = (double)j + rt_uniform(g);
    }
  }
  give_leftover(w, n, n - j, counts);
}

/* m i.i.d. draws from weights w (summing to total), as m sorted uniforms: the normalised partial sums
 * of m+1 exponentials.  The normaliser needs all of them first, so the stream is replayed. */
static void multinomial(const double *w, int64_t n, int64_t m, double total, rt_rng *g, int64_t *counts) {
  rt_rng start = *g;
  double s = 0.0;
  for (int64_t j = 0; j <= m; j++) s += rt_exponential(g);
  *g = start;
  double scale = total / s, acc = rt_exponential(g), c = 0.0;
  int64_t j = 0;
  for (int64_t i = 0; i < n; i++) {
    c += w[i];
    while (j < m && acc * scale < c) {
      counts[i]++;
      j++;
      acc += rt_exponential(g);
    }
  }
  give_leftover(w, n, m - j, counts);
}

/* floor(N w_i) copies for sure, the remaining R drawn multinomially from the fractional parts. */
static void residual(const double *w, int64_t n, rt_rng *g, int64_t *counts) {
  double *r = malloc((size_t)n * sizeof(double));
  if (!r) { /* keep going with a scheme that needs no memory */
    systematic(w, n, g, counts);
    return;
  }
  int64_t assigned = 0;
  double total = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double nw = w[i] * (double)n, k = floor(nw);
    counts[i] = (int64_t)k;
    assigned += counts[i];
    total += (r[i] = nw - k);
  }
  if (assigned > n) { /* rounding: cannot happen with sum w = 1, but never overshoot */
    memset(counts, 0, (size_t)n * sizeof(int64_t));
    systematic(w, n, g, counts);
  } else if (assigned < n) {
    multinomial(r, n, n - assigned, total, g, counts);
  }
  free(r);
}

void rt_resample_counts(int32_t scheme, const double *w, int64_t n, rt_rng *g, int64_t *counts) {
  memset(counts, 0, (size_t)n * sizeof(int64_t));
  switch (scheme) {
    case SIRENRT_MULTINOMIAL: multinomial(w, n, n, 1.0, g, counts); break;
    case SIRENRT_STRATIFIED: stratified(w, n, g, counts); break;
    case SIRENRT_RESIDUAL: residual(w, n, g, counts); break;
    default: systematic(w, n, g, counts); break;
  }
}
