/* mh.h — the hooks through which every random choice of a run reaches the MH handler (ARCHITECTURE.md §15.2).
 *
 * While an MH chain runs its program, the running particle's filter holds the chain's trace
 * (ctx->filter->mh_live; NULL otherwise).  A SITE is the k-th random variable a run creates,
 * k = 0, 1, ... (the original's handles rv1, rv2, ...): the trace maps sites to values.  Whoever creates or
 * values a random variable tells the trace:
 *
 *  - rt_mh_note_rv(ctx, node): the symbolic engine created random variable `node` (an index into its
 *    node array; every assume and every observe creates one): it becomes the next site.  The engine
 *    reuses indices of collected nodes, so the map node -> site is overwritten at each creation.
 *  - rt_mh_draw(ctx, node, family, p, probs, n, site): the engine must value `node`, whose
 *    distribution now has the constant parameters p (a categorical's probabilities in probs[0..n)).
 *    Returns the site's stored value when the trace has one (reused), else a fresh draw from that
 *    distribution, and records the log density of the answer under it (the site's score).  On an
 *    error (invalid parameters) it returns NaN with the error recorded on ctx, as the samplers do.
 *    Call it only when rt_mh_on(ctx).
 *  - rt_mh_sample(ctx, family, p, probs, n, site): the same for a plain draw of generated code
 *    (sirenrt_sample_<family>, sirenrt_std_normal): a new site valued at once.
 *
 * Without a chain each hook costs rt_mh_on(): a predictable branch on a word of the filter, which
 * all its particles share (so it stays cached), reached through the context's first cache line.
 * Observations of -m pf take no site: the compiler scores the gaussian's inline, so the runtime
 * never sees them; under the symbolic engine they are random variables and take one.  (The
 * numbering is internal: any numbering that is a function of the run so far gives a correct
 * chain; it only decides which sites a proposal keeps.)  Draws made while estimating the result
 * (the trace is detached then) are not sites. */
#ifndef SIRENRT_MH_H
#define SIRENRT_MH_H

#include "internal.h"

typedef struct rt_mh_trace rt_mh_trace;

static inline int rt_mh_on(const sirenrt_ctx *ctx) {
  return __builtin_expect(ctx->filter != NULL && ctx->filter->mh_live != NULL, 0);
}

void rt_mh_note_rv_slow(sirenrt_ctx *ctx, uint32_t node);
static inline void rt_mh_note_rv(sirenrt_ctx *ctx, uint32_t node) {
  if (rt_mh_on(ctx)) rt_mh_note_rv_slow(ctx, node);
}
double rt_mh_draw(sirenrt_ctx *ctx, uint32_t node, int family, const double *p, const double *probs, int64_t n,
                  int32_t site);
double rt_mh_sample(sirenrt_ctx *ctx, int family, const double *p, const double *probs, int64_t n, int32_t site);

/* The chain's side, for filter.c / estimate.c / symbolic_abi.c (mh.c): a filter made by
 * sirenrt_filter_new_mh has f->mh set; these answer the population queries from its samples. */
int32_t rt_mh_run(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols);
int32_t rt_mh_estimate(sirenrt_filter *f, double *out, int64_t cap, int64_t *n_out);
int32_t rt_mh_particles(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                        double *weights);
/* sirenrt_filter_posterior of a chain: its samples as point atoms. */
int32_t rt_mh_posterior(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                        double *weights);
int64_t rt_mh_size(const sirenrt_filter *f);
const char *rt_mh_runtime_plan(sirenrt_filter *f);
void rt_mh_free(sirenrt_filter *f);
/* For tests (test_mh.c): called after every iteration with the site chosen, log alpha and the
 * decision, so that the ratio can be checked against a hand computation. */
typedef void rt_mh_observer(void *user, int64_t site, double log_alpha, int accepted);
void rt_mh_set_observer(sirenrt_filter *f, rt_mh_observer *fn, void *user);

#endif /* SIRENRT_MH_H */
