/* mh_trace.c — the hooks through which every random choice of a run reaches the MH handler
 * (ARCHITECTURE.md §15.2; the chain itself is population/mh.c).
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
#include "base.h"

#include <stdlib.h>

int rt_grow(void **a, size_t elem, int64_t need, int64_t *cap) {
  if (need <= *cap) return 0;
  int64_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *b = realloc(*a, (size_t)c * elem);
  if (!b) return -1;
  *a = b;
  *cap = c;
  return 0;
}

static int sites_reserve(rt_mh_sites *s, int64_t need) {
  if (need <= s->cap) return 0;
  int64_t cap = s->cap, c1 = cap, c2 = cap;
  if (rt_grow((void **)&s->value, sizeof(double), need, &c1) ||
      rt_grow((void **)&s->score, sizeof(double), need, &c2) || rt_grow((void **)&s->valid, 1, need, &cap))
    return -1; /* s->cap unchanged: the next call grows whichever array is still short */
  s->cap = cap;
  return 0;
}

static void sites_free(rt_mh_sites *s) {
  free(s->value);
  free(s->score);
  free(s->valid);
}

void rt_mh_trace_free(rt_mh_trace *t) {
  sites_free(&t->cur);
  sites_free(&t->prop);
  free(t->node_site);
}

/* A new site: the next one of the run. */
static int64_t new_site(rt_mh_trace *t) {
  int64_t k = t->prop.n;
  if (sites_reserve(&t->prop, k + 1)) return -1;
  t->prop.valid[k] = 0;
  t->prop.n = k + 1;
  return k;
}

/* Values site k of the run: its value in the current state unless it is the deleted one or has
 * none, else a fresh draw; records the score, and for a reused site its change of score. */
static double value_site(sirenrt_ctx *ctx, rt_mh_trace *t, int64_t k, int family, const double *p,
                         const double *probs, int64_t n, int32_t site) {
  if (k < 0 || k >= t->prop.n || t->prop.valid[k])
    return rt_fail(ctx, site, "internal error: MH site %lld valued twice or never created", (long long)k);
  int reused = k < t->cur.n && t->cur.valid[k] && k != t->deleted;
  double v;
  if (reused) {
    v = t->cur.value[k];
  } else {
    ctx->filter->mh_live = NULL;
    v = rt_family_draw(ctx, family, p, probs, n, site);
    ctx->filter->mh_live = t;
    if (isnan(v) && ctx->err_msg) return NAN;
  }
  double score = rt_family_logpdf(family, p, probs, n, v);
  if (isnan(score)) score = -INFINITY;
  t->prop.value[k] = v;
  t->prop.score[k] = score;
  t->prop.valid[k] = 1;
  t->prop.n_valued++;
  if (score == -INFINITY) t->prop.zero = 1;
  if (reused) t->reused_delta += score - t->cur.score[k];
  return v;
}

void rt_mh_note_rv_slow(sirenrt_ctx *ctx, uint32_t node) {
  rt_mh_trace *t = ctx->filter->mh_live;
  int64_t k = new_site(t), cap = t->cap_nodes;
  if (k < 0 || rt_grow((void **)&t->node_site, sizeof(int64_t), (int64_t)node + 1, &t->cap_nodes)) {
    rt_fail(ctx, -1, "out of memory");
    return;
  }
  for (int64_t i = cap; i < t->cap_nodes; i++) t->node_site[i] = -1;
  t->node_site[node] = k;
}

double rt_mh_draw(sirenrt_ctx *ctx, uint32_t node, int family, const double *p, const double *probs, int64_t n,
                  int32_t site) {
  rt_mh_trace *t = ctx->filter->mh_live;
  int64_t k = (int64_t)node < t->cap_nodes ? t->node_site[node] : -1;
  return value_site(ctx, t, k, family, p, probs, n, site);
}

double rt_mh_sample(sirenrt_ctx *ctx, int family, const double *p, const double *probs, int64_t n, int32_t site) {
  rt_mh_trace *t = ctx->filter->mh_live;
  int64_t k = new_site(t);
  if (k < 0) return rt_fail(ctx, site, "out of memory");
  return value_site(ctx, t, k, family, p, probs, n, site);
}
