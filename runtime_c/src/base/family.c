/* family.c — a distribution given by its family id and constant parameters, as the symbolic engine
 * and the MH trace hold one: its parameter check (ARCHITECTURE.md §9), a draw, its log density and its mean,
 * each dispatched over SIRENRT_FAMILIES to the per-family functions.  A categorical's probabilities
 * are `probs[0 .. n)`. */
#include "base.h"

#include <math.h>
#include <stdio.h>

#define ARGS_1 p[0]
#define ARGS_2 p[0], p[1]
#define ARGS_3 p[0], p[1], p[2]

int rt_family_bad(int family, const double *p, const double *probs, int64_t n, char *msg) {
  switch (family) {
#define BAD_SCALAR(ID, name, N) case SIRENRT_FAM_##ID: return rt_bad_##name(ARGS_##N, msg);
#define BAD_LIST(ID, name, N) case SIRENRT_FAM_##ID: return rt_bad_categorical(p[0], p[1], probs, n, msg);
#define BAD_CASE(ID, name, N, SHAPE, PARAMS, ARGS) BAD_##SHAPE(ID, name, N)
    SIRENRT_FAMILIES(BAD_CASE)
#undef BAD_CASE
#undef BAD_LIST
#undef BAD_SCALAR
    default: snprintf(msg, RT_MSG, "unknown distribution family %d", family); return 1;
  }
}

double rt_family_draw(sirenrt_ctx *ctx, int family, const double *p, const double *probs, int64_t n,
                      int32_t site) {
  switch (family) {
#define DRAW_SCALAR(ID, name, N) case SIRENRT_FAM_##ID: return sirenrt_sample_##name(ctx, ARGS_##N, site);
#define DRAW_LIST(ID, name, N) \
  case SIRENRT_FAM_##ID: return rt_sample_categorical_probs(ctx, p[0], p[1], probs, n, site);
#define DRAW_CASE(ID, name, N, SHAPE, PARAMS, ARGS) DRAW_##SHAPE(ID, name, N)
    SIRENRT_FAMILIES(DRAW_CASE)
#undef DRAW_CASE
#undef DRAW_LIST
#undef DRAW_SCALAR
    default: return rt_fail(ctx, site, "internal error: unknown distribution family %d", family);
  }
}

double rt_family_logpdf(int family, const double *p, const double *probs, int64_t n, double x) {
  switch (family) {
#define PDF_SCALAR(ID, name, N) case SIRENRT_FAM_##ID: return sirenrt_logpdf_##name(ARGS_##N, x);
#define PDF_LIST(ID, name, N) case SIRENRT_FAM_##ID: return sirenrt_logpdf_categorical(p[0], p[1], probs, n, x);
#define PDF_CASE(ID, name, N, SHAPE, PARAMS, ARGS) PDF_##SHAPE(ID, name, N)
    SIRENRT_FAMILIES(PDF_CASE)
#undef PDF_CASE
#undef PDF_LIST
#undef PDF_SCALAR
    default: return NAN;
  }
}

double rt_family_mean(int family, const double *p, const double *probs, int64_t n) {
  switch (family) {
#define MEAN_SCALAR(ID, name, N) case SIRENRT_FAM_##ID: return sirenrt_mean_##name(ARGS_##N);
#define MEAN_LIST(ID, name, N) case SIRENRT_FAM_##ID: return sirenrt_mean_categorical(p[0], p[1], probs, n);
#define MEAN_CASE(ID, name, N, SHAPE, PARAMS, ARGS) MEAN_##SHAPE(ID, name, N)
    SIRENRT_FAMILIES(MEAN_CASE)
#undef MEAN_CASE
#undef MEAN_LIST
#undef MEAN_SCALAR
    default: return NAN;
  }
}
