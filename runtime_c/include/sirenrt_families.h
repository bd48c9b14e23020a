/* sirenrt_families.h — the distribution families' ids and per-family functions.
 * GENERATED from sirenc/distributions.py by `python -m sirenc.runtime.families_header`; do not edit.
 * Included by sirenrt.h (which defines sirenrt_ctx and SIRENRT_API), not on its own. */
#ifndef SIRENRT_FAMILIES_H
#define SIRENRT_FAMILIES_H

/* Family ids: sirenrt_sample_many's `family` and sirenrt_family_info's index. */
enum {
  SIRENRT_FAM_GAUSSIAN = 0, /* gaussian(mu, var) */
  SIRENRT_FAM_BETA = 1, /* beta(a, b) */
  SIRENRT_FAM_BERNOULLI = 2, /* bernoulli(p) */
  SIRENRT_FAM_BINOMIAL = 3, /* binomial(n, p) */
  SIRENRT_FAM_BETA_BINOMIAL = 4, /* beta_binomial(n, a, b) */
  SIRENRT_FAM_NEGATIVE_BINOMIAL = 5, /* negative_binomial(n, p) */
  SIRENRT_FAM_EXPONENTIAL = 6, /* exponential(rate) */
  SIRENRT_FAM_GAMMA = 7, /* gamma(shape, rate) */
  SIRENRT_FAM_POISSON = 8, /* poisson(lambda) */
  SIRENRT_FAM_DELTA = 9, /* delta(v) */
  SIRENRT_FAM_CATEGORICAL = 10, /* categorical(lo, hi, probs) */
  SIRENRT_FAM_UNIFORM_INT = 11, /* uniform_int(a, b) */
  SIRENRT_FAM_STUDENT_T = 12, /* student_t(mu, tau2, nu) */
  SIRENRT_N_FAMILIES = 13
};

/* X(ID, name, N, SHAPE, PARAMS, ARGS) for every family in id order: N parameters, SHAPE SCALAR
 * (all doubles) or LIST (the last one is a list handle), PARAMS the parameters of
 * sirenrt_sample_<name> between ctx and site, ARGS their names. */
#define SIRENRT_FAMILIES(X) \
  X(GAUSSIAN, gaussian, 2, SCALAR, (double mu, double var), (mu, var)) \
  X(BETA, beta, 2, SCALAR, (double a, double b), (a, b)) \
  X(BERNOULLI, bernoulli, 1, SCALAR, (double p), (p)) \
  X(BINOMIAL, binomial, 2, SCALAR, (double n, double p), (n, p)) \
  X(BETA_BINOMIAL, beta_binomial, 3, SCALAR, (double n, double a, double b), (n, a, b)) \
  X(NEGATIVE_BINOMIAL, negative_binomial, 2, SCALAR, (double n, double p), (n, p)) \
  X(EXPONENTIAL, exponential, 1, SCALAR, (double rate), (rate)) \
  X(GAMMA, gamma, 2, SCALAR, (double shape, double rate), (shape, rate)) \
  X(POISSON, poisson, 1, SCALAR, (double lambda), (lambda)) \
  X(DELTA, delta, 1, SCALAR, (double v), (v)) \
  X(CATEGORICAL, categorical, 3, LIST, (double lo, double hi, int64_t probs), (lo, hi, probs)) \
  X(UNIFORM_INT, uniform_int, 2, SCALAR, (double a, double b), (a, b)) \
  X(STUDENT_T, student_t, 3, SCALAR, (double mu, double tau2, double nu), (mu, tau2, nu))

/* Sampling: the draw. */
SIRENRT_API double sirenrt_sample_gaussian(sirenrt_ctx *ctx, double mu, double var, int32_t site);
SIRENRT_API double sirenrt_sample_beta(sirenrt_ctx *ctx, double a, double b, int32_t site);
SIRENRT_API double sirenrt_sample_bernoulli(sirenrt_ctx *ctx, double p, int32_t site);
SIRENRT_API double sirenrt_sample_binomial(sirenrt_ctx *ctx, double n, double p, int32_t site);
SIRENRT_API double sirenrt_sample_beta_binomial(sirenrt_ctx *ctx, double n, double a, double b, int32_t site);
SIRENRT_API double sirenrt_sample_negative_binomial(sirenrt_ctx *ctx, double n, double p, int32_t site);
SIRENRT_API double sirenrt_sample_exponential(sirenrt_ctx *ctx, double rate, int32_t site);
SIRENRT_API double sirenrt_sample_gamma(sirenrt_ctx *ctx, double shape, double rate, int32_t site);
SIRENRT_API double sirenrt_sample_poisson(sirenrt_ctx *ctx, double lambda, int32_t site);
SIRENRT_API double sirenrt_sample_delta(sirenrt_ctx *ctx, double v, int32_t site);
SIRENRT_API double sirenrt_sample_categorical(sirenrt_ctx *ctx, double lo, double hi, int64_t probs, int32_t site);
SIRENRT_API double sirenrt_sample_uniform_int(sirenrt_ctx *ctx, double a, double b, int32_t site);
SIRENRT_API double sirenrt_sample_student_t(sirenrt_ctx *ctx, double mu, double tau2, double nu, int32_t site);

/* Observation: adds log p(x | params) to the particle's log weight. */
SIRENRT_API void sirenrt_observe_gaussian(sirenrt_ctx *ctx, double mu, double var, double x, int32_t site);
SIRENRT_API void sirenrt_observe_beta(sirenrt_ctx *ctx, double a, double b, double x, int32_t site);
SIRENRT_API void sirenrt_observe_bernoulli(sirenrt_ctx *ctx, double p, double x, int32_t site);
SIRENRT_API void sirenrt_observe_binomial(sirenrt_ctx *ctx, double n, double p, double x, int32_t site);
SIRENRT_API void sirenrt_observe_beta_binomial(sirenrt_ctx *ctx, double n, double a, double b, double x, int32_t site);
SIRENRT_API void sirenrt_observe_negative_binomial(sirenrt_ctx *ctx, double n, double p, double x, int32_t site);
SIRENRT_API void sirenrt_observe_exponential(sirenrt_ctx *ctx, double rate, double x, int32_t site);
SIRENRT_API void sirenrt_observe_gamma(sirenrt_ctx *ctx, double shape, double rate, double x, int32_t site);
SIRENRT_API void sirenrt_observe_poisson(sirenrt_ctx *ctx, double lambda, double x, int32_t site);
SIRENRT_API void sirenrt_observe_delta(sirenrt_ctx *ctx, double v, double x, int32_t site);
SIRENRT_API void sirenrt_observe_categorical(sirenrt_ctx *ctx, double lo, double hi, int64_t probs, double x, int32_t site);
SIRENRT_API void sirenrt_observe_uniform_int(sirenrt_ctx *ctx, double a, double b, double x, int32_t site);
SIRENRT_API void sirenrt_observe_student_t(sirenrt_ctx *ctx, double mu, double tau2, double nu, double x, int32_t site);

/* Log density / mass of x. */
SIRENRT_API double sirenrt_logpdf_gaussian(double mu, double var, double x);
SIRENRT_API double sirenrt_logpdf_beta(double a, double b, double x);
SIRENRT_API double sirenrt_logpdf_bernoulli(double p, double x);
SIRENRT_API double sirenrt_logpdf_binomial(double n, double p, double x);
SIRENRT_API double sirenrt_logpdf_beta_binomial(double n, double a, double b, double x);
SIRENRT_API double sirenrt_logpdf_negative_binomial(double n, double p, double x);
SIRENRT_API double sirenrt_logpdf_exponential(double rate, double x);
SIRENRT_API double sirenrt_logpdf_gamma(double shape, double rate, double x);
SIRENRT_API double sirenrt_logpdf_poisson(double lambda, double x);
SIRENRT_API double sirenrt_logpdf_delta(double v, double x);
SIRENRT_API double sirenrt_logpdf_categorical(double lo, double hi, const double *probs, int64_t n_probs, double x);
SIRENRT_API double sirenrt_logpdf_uniform_int(double a, double b, double x);
SIRENRT_API double sirenrt_logpdf_student_t(double mu, double tau2, double nu, double x);

/* The analytic mean. */
SIRENRT_API double sirenrt_mean_gaussian(double mu, double var);
SIRENRT_API double sirenrt_mean_beta(double a, double b);
SIRENRT_API double sirenrt_mean_bernoulli(double p);
SIRENRT_API double sirenrt_mean_binomial(double n, double p);
SIRENRT_API double sirenrt_mean_beta_binomial(double n, double a, double b);
SIRENRT_API double sirenrt_mean_negative_binomial(double n, double p);
SIRENRT_API double sirenrt_mean_exponential(double rate);
SIRENRT_API double sirenrt_mean_gamma(double shape, double rate);
SIRENRT_API double sirenrt_mean_poisson(double lambda);
SIRENRT_API double sirenrt_mean_delta(double v);
SIRENRT_API double sirenrt_mean_categorical(double lo, double hi, const double *probs, int64_t n_probs);
SIRENRT_API double sirenrt_mean_uniform_int(double a, double b);
SIRENRT_API double sirenrt_mean_student_t(double mu, double tau2, double nu);

#endif /* SIRENRT_FAMILIES_H */
