/* sample_observe.c — what generated code calls at `x <- d` and `observe(d, v)` for a particle:
 * check the parameters (an error is recorded on the particle, never raised), then draw from the
 * particle's own stream or add the log density to its weight.  Also sirenrt_sample_many, the same
 * path for goodness-of-fit tests. */
#include "base.h"

#include <stdlib.h>
#include <string.h>

/* `bad` is an rt_bad_* call writing into `msg`. */
#define SAMPLE_GUARD(bad)                        \
  do {                                           \
    char msg[RT_MSG];                            \
    if (bad) return rt_fail(ctx, site, "%s", msg); \
  } while (0)

#define OBSERVE_GUARD(bad)          \
  do {                              \
    char msg[RT_MSG];               \
    if (bad) {                      \
      rt_fail(ctx, site, "%s", msg); \
      return;                       \
    }                               \
  } while (0)

/* A weight that reaches -inf stays there (also against a later +inf density), and remembers the
 * observation that zeroed it for the "all particles have zero weight" error. */
void sirenrt_add_log_weight(sirenrt_ctx *ctx, double lp, int32_t site) {
  double *logw = rt_ctx_logw(ctx);
  if (*logw == -INFINITY) return;
  double w = *logw + lp;
  if (isnan(w)) w = -INFINITY;
  *logw = w;
  if (w == -INFINITY) {
    ctx->zero_site = site;
    ctx->zeroed = 1;
    ctx->flagged = 1;
  }
}

/* Reads a categorical probability list; *probs points at buf or at a malloc'd array (caller frees if
 * != buf).  Returns the length, or -1 after recording an error. */
static int64_t read_probs(sirenrt_ctx *ctx, int64_t list, double *buf, int64_t cap, double **probs, int32_t site) {
  int64_t n = rt_list_floats(ctx, list, buf, cap, site);
  *probs = buf;
  if (n <= cap) return n;
  double *big = malloc((size_t)n * sizeof(double));
  if (!big) {
    rt_fail(ctx, site, "out of memory");
    return -1;
  }
  rt_list_floats(ctx, list, big, n, site);
  *probs = big;
  return n;
}

/* ------------------------------------------------------------------ sampling ------------------- */

/* Under MH every draw of generated code is a site of the trace (mh_trace.c): the parameters are checked
 * first, as without MH, then the trace answers.  Without a trace: one predictable branch. */
#define MH_SITE(ID, ...)                                                   \
  do {                                                                     \
    if (rt_mh_on(ctx)) {                                                   \
      const double mh_p_[] = {__VA_ARGS__};                                \
      return rt_mh_sample(ctx, SIRENRT_FAM_##ID, mh_p_, NULL, 0, site);    \
    }                                                                      \
  } while (0)

/* Generated code draws a valid gaussian inline as mu + sqrt(var) * z from this; under MH the site is
 * then z ~ gaussian(0, 1) (a non-centred parameterisation of the same model: the chain targets the
 * same posterior, a reused z moves with its distribution's mean and variance). */
double sirenrt_std_normal(sirenrt_ctx *ctx) {
  if (rt_mh_on(ctx)) {
    static const double standard[2] = {0.0, 1.0};
    return rt_mh_sample(ctx, SIRENRT_FAM_GAUSSIAN, standard, NULL, 0, -1);
  }
  return rt_normal(&ctx->rng);
}

double sirenrt_sample_gaussian(sirenrt_ctx *ctx, double mu, double var, int32_t site) {
  SAMPLE_GUARD(rt_bad_gaussian(mu, var, msg));
  MH_SITE(GAUSSIAN, mu, var);
  return mu + sqrt(var) * rt_normal(&ctx->rng);
}

double sirenrt_sample_beta(sirenrt_ctx *ctx, double a, double b, int32_t site) {
  SAMPLE_GUARD(rt_bad_beta(a, b, msg));
  MH_SITE(BETA, a, b);
  return rt_beta(&ctx->rng, a, b);
}

double sirenrt_sample_bernoulli(sirenrt_ctx *ctx, double p, int32_t site) {
  SAMPLE_GUARD(rt_bad_bernoulli(p, msg));
  MH_SITE(BERNOULLI, p);
  return rt_uniform(&ctx->rng) < p ? 1.0 : 0.0;
}

double sirenrt_sample_binomial(sirenrt_ctx *ctx, double n, double p, int32_t site) {
  SAMPLE_GUARD(rt_bad_binomial(n, p, msg));
  MH_SITE(BINOMIAL, n, p);
  if (n >= 0x1.0p62) return rt_fail(ctx, site, "binomial: n = %g is too large to sample", n);
  return rt_binomial(&ctx->rng, (int64_t)n, p);
}

double sirenrt_sample_beta_binomial(sirenrt_ctx *ctx, double n, double a, double b, int32_t site) {
  SAMPLE_GUARD(rt_bad_beta_binomial(n, a, b, msg));
  MH_SITE(BETA_BINOMIAL, n, a, b);
  if (n >= 0x1.0p62) return rt_fail(ctx, site, "beta_binomial: n = %g is too large to sample", n);
  return rt_binomial(&ctx->rng, (int64_t)n, rt_beta(&ctx->rng, a, b));
}

/* Failures before the n-th success: a Poisson with a Gamma(n, scale (1-p)/p) rate, as numpy draws it. */
double sirenrt_sample_negative_binomial(sirenrt_ctx *ctx, double n, double p, int32_t site) {
  SAMPLE_GUARD(rt_bad_negative_binomial(n, p, msg));
  MH_SITE(NEGATIVE_BINOMIAL, n, p);
  if (p == 0.0) return rt_fail(ctx, site, "negative_binomial: cannot sample with probability 0");
  if (p == 1.0) return 0.0;
  return rt_poisson(&ctx->rng, rt_gamma(&ctx->rng, n) * (1.0 - p) / p);
}

double sirenrt_sample_exponential(sirenrt_ctx *ctx, double rate, int32_t site) {
  SAMPLE_GUARD(rt_bad_exponential(rate, msg));
  MH_SITE(EXPONENTIAL, rate);
  return rt_exponential(&ctx->rng) / rate;
}

double sirenrt_sample_gamma(sirenrt_ctx *ctx, double shape, double rate, int32_t site) {
  SAMPLE_GUARD(rt_bad_gamma(shape, rate, msg));
  MH_SITE(GAMMA, shape, rate);
  return rt_gamma(&ctx->rng, shape) / rate;
}

double sirenrt_sample_poisson(sirenrt_ctx *ctx, double lambda, int32_t site) {
  SAMPLE_GUARD(rt_bad_poisson(lambda, msg));
  MH_SITE(POISSON, lambda);
  return rt_poisson(&ctx->rng, lambda);
}

double sirenrt_sample_delta(sirenrt_ctx *ctx, double v, int32_t site) {
  MH_SITE(DELTA, v);
  return v;
}

/* Inverse CDF against the actual sum (numpy normalises too); the last value with positive probability
 * absorbs rounding.  Also the symbolic engine's draw, whose probabilities are not a list. */
double rt_sample_categorical_probs(sirenrt_ctx *ctx, double lo, double hi, const double *probs, int64_t n,
                                   int32_t site) {
  char msg[RT_MSG];
  if (rt_bad_categorical(lo, hi, probs, n, msg)) return rt_fail(ctx, site, "%s", msg);
  double sum = 0.0;
  int64_t last = 0;
  for (int64_t i = 0; i < n; i++) {
    sum += probs[i];
    if (probs[i] > 0.0) last = i;
  }
  double u = rt_uniform(&ctx->rng) * sum, acc = 0.0;
  int64_t k = last;
  for (int64_t i = 0; i < n; i++) {
    acc += probs[i];
    if (u < acc) {
      k = i;
      break;
    }
  }
  return lo + (double)k;
}

double sirenrt_sample_categorical(sirenrt_ctx *ctx, double lo, double hi, int64_t probs_list, int32_t site) {
  double buf[64], *probs;
  int64_t n = read_probs(ctx, probs_list, buf, 64, &probs, site);
  if (n < 0) return NAN;
  double result;
  if (!rt_mh_on(ctx)) {
    result = rt_sample_categorical_probs(ctx, lo, hi, probs, n, site);
  } else { /* checked first, as MH_SITE's families are */
    char msg[RT_MSG];
    const double bounds[2] = {lo, hi};
    result = rt_bad_categorical(lo, hi, probs, n, msg) ? rt_fail(ctx, site, "%s", msg)
                                                       : rt_mh_sample(ctx, SIRENRT_FAM_CATEGORICAL, bounds, probs, n, site);
  }
  if (probs != buf) free(probs);
  return result;
}

double sirenrt_sample_uniform_int(sirenrt_ctx *ctx, double a, double b, int32_t site) {
  SAMPLE_GUARD(rt_bad_uniform_int(a, b, msg));
  MH_SITE(UNIFORM_INT, a, b);
  return a + (double)rt_below(&ctx->rng, (uint64_t)(b - a) + 1u);
}

double sirenrt_sample_student_t(sirenrt_ctx *ctx, double mu, double tau2, double nu, int32_t site) {
  SAMPLE_GUARD(rt_bad_student_t(mu, tau2, nu, msg));
  MH_SITE(STUDENT_T, mu, tau2, nu);
  return mu + sqrt(tau2) * rt_student_t(&ctx->rng, nu);
}

/* ------------------------------------------------------------------ observation ---------------- */

/* Every family's observe is its check and then its density, except categorical's (below), which
 * first reads the probabilities out of the arena. */
#define RT_OBSERVE_SCALAR(name, PARAMS, ARGS)                                            \
  void sirenrt_observe_##name(sirenrt_ctx *ctx, RT_UNPAREN PARAMS, double x, int32_t site) { \
    OBSERVE_GUARD(rt_bad_##name(RT_UNPAREN ARGS, msg));                                  \
    sirenrt_add_log_weight(ctx, sirenrt_logpdf_##name(RT_UNPAREN ARGS, x), site);        \
  }
#define RT_OBSERVE_LIST(name, PARAMS, ARGS)
#define RT_OBSERVE(ID, name, N, SHAPE, PARAMS, ARGS) RT_OBSERVE_##SHAPE(name, PARAMS, ARGS)
SIRENRT_FAMILIES(RT_OBSERVE)
#undef RT_OBSERVE
#undef RT_OBSERVE_LIST
#undef RT_OBSERVE_SCALAR

void sirenrt_observe_categorical(sirenrt_ctx *ctx, double lo, double hi, int64_t probs_list, double x,
                                 int32_t site) {
  double buf[64], *probs;
  int64_t n = read_probs(ctx, probs_list, buf, 64, &probs, site);
  if (n < 0) return;
  char msg[RT_MSG];
  if (rt_bad_categorical(lo, hi, probs, n, msg))
    rt_fail(ctx, site, "%s", msg);
  else
    sirenrt_add_log_weight(ctx, sirenrt_logpdf_categorical(lo, hi, probs, n, x), site);
  if (probs != buf) free(probs);
}

/* ------------------------------------------------------------------ test helper ---------------- */

/* sirenrt_sample_many's arguments for a family of SHAPE with N parameters: the parameters from the
 * array p, a list parameter as the arena list built from the array. */
#define RT_MANY_SCALAR_1 p[0]
#define RT_MANY_SCALAR_2 p[0], p[1]
#define RT_MANY_SCALAR_3 p[0], p[1], p[2]
#define RT_MANY_LIST_3 p[0], p[1], probs

static double draw_one(sirenrt_ctx *ctx, int32_t family, const double *p, int64_t probs) {
  switch (family) {
#define RT_DRAW_CASE(ID, name, N, SHAPE, PARAMS, ARGS) \
  case SIRENRT_FAM_##ID: return sirenrt_sample_##name(ctx, RT_MANY_##SHAPE##_##N, -1);
    SIRENRT_FAMILIES(RT_DRAW_CASE)
#undef RT_DRAW_CASE
    default: return rt_fail(ctx, -1, "unknown distribution family %d", (int)family);
  }
}

static const sirenrt_family families[SIRENRT_N_FAMILIES] = {
#define RT_FAMILY_ROW(ID, name, N, SHAPE, PARAMS, ARGS) [SIRENRT_FAM_##ID] = {#name, N},
    SIRENRT_FAMILIES(RT_FAMILY_ROW)
#undef RT_FAMILY_ROW
};

const sirenrt_family *sirenrt_family_info(int32_t family) {
  return family >= 0 && family < SIRENRT_N_FAMILIES ? &families[family] : NULL;
}

int32_t sirenrt_sample_many(int32_t family, const double *params, int64_t n, uint64_t seed, double *out) {
  if (n < 0 || !params || (n > 0 && !out)) {
    rt_set_last_error("sirenrt_sample_many: bad arguments");
    return 1;
  }
  sirenrt_ctx ctx;
  double logw = 0.0;
  memset(&ctx, 0, sizeof ctx);
  ctx.logw = &logw;
  ctx.zero_site = -1;
  rt_rng_init(&ctx.rng, seed, 0, 0, RT_DOMAIN_TEST);
  /* The probabilities travel as an arena list, as in generated code. */
  int64_t probs = SIRENRT_NIL;
  if (family == SIRENRT_FAM_CATEGORICAL) {
    double m = params[2];
    if (!(m >= 0.0 && m <= 1e7 && m == floor(m))) {
      rt_set_last_error("sirenrt_sample_many: bad probability count %g", m);
      return 1;
    }
    for (int64_t i = (int64_t)m - 1; i >= 0; i--) {
      int64_t cell = sirenrt_list_cons(&ctx, probs, 1);
      sirenrt_list_set(&ctx, cell, 0, (int64_t)rt_bits_of(params[3 + i]));
      probs = cell;
    }
  }
  for (int64_t i = 0; i < n && !ctx.err_msg; i++) out[i] = draw_one(&ctx, family, params, probs);
  int32_t status = 0;
  if (ctx.err_msg) {
    rt_set_last_error("%s", ctx.err_msg);
    rt_free_message(ctx.err_msg);
    status = 1;
  }
  rt_arena_free(&ctx);
  return status;
}
