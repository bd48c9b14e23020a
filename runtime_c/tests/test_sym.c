/* test_sym.c — the symbolic engine: ARCHITECTURE.md §6.3's shapes, every conjugate pair against closed forms
 * (posterior means and marginal log-likelihoods computed here independently), a Kalman chain against
 * a Kalman filter and an RTS smoother, deep chains with collection, a goodness-of-fit test of value()
 * on an exact posterior, plan enforcement, copy-on-write and checkpoints. */
#include <stdlib.h>

#include "check.h"
#include "engine/sym_node.h"

#define C(x) rt_sym_word(x)
#define D(w) rt_sym_double(w)

static void ctx_init(sirenrt_ctx *ctx, double *logw, uint64_t slot) {
  memset(ctx, 0, sizeof *ctx);
  *logw = 0.0;
  ctx->logw = logw;
  ctx->zero_site = -1;
  rt_rng_init(&ctx->rng, 20261130, slot, 0, RT_DOMAIN_TEST);
}

static void ctx_done(sirenrt_ctx *ctx) {
  rt_sym_release(ctx->sym);
  ctx->sym = NULL;
  rt_free_message(ctx->err_msg);
  ctx->err_msg = NULL;
  rt_arena_free(ctx);
}

static uint64_t assume(sirenrt_ctx *ctx, int32_t fam, uint64_t p0, uint64_t p1, uint64_t p2) {
  uint64_t p[3] = {p0, p1, p2}, out = C(NAN);
  int r = rt_sym_assume(ctx, fam, p, -1, SIRENRT_ANN_NONE, -1, &out);
  CHECK(r == 0, "assume failed: %s", ctx->err_msg ? ctx->err_msg : "?");
  return out;
}

static double observe(sirenrt_ctx *ctx, int32_t fam, uint64_t p0, uint64_t p1, uint64_t p2, double x) {
  uint64_t p[3] = {p0, p1, p2};
  double lp = NAN;
  int r = rt_sym_observe(ctx, fam, p, x, -1, &lp);
  CHECK(r == 0, "observe failed: %s", ctx->err_msg ? ctx->err_msg : "?");
  return lp;
}

static double mean(sirenrt_ctx *ctx, uint64_t w) {
  double m = NAN;
  int r = rt_sym_mean(ctx, w, &m, -1);
  CHECK(r == 0, "mean failed: %s", ctx->err_msg ? ctx->err_msg : "?");
  return m;
}

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_REL(a, b, tol, what) CHECK_NEAR((a), (b), (tol) * fmax(1.0, fabs(b)), (what))

static double log_norm(double x, double m, double v) { return -0.5 * log(2 * RT_PI * v) - (x - m) * (x - m) / (2 * v); }
static double lbeta(double a, double b) { return lgamma(a) + lgamma(b) - lgamma(a + b); }
static double lchoose(double n, double k) { return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1); }

/* ------------------------------------------------------------------ 6.3 shapes ----------------- */

static int is_kind(sirenrt_ctx *ctx, uint64_t w, int kind) { return rt_sym_is_kind(ctx->sym, w, kind); }
static uint64_t child(sirenrt_ctx *ctx, uint64_t w, int k) { return rt_node(ctx->sym, w)->w[k]; }

static void test_simplification(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 1);
  uint64_t x = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(0.0), C(1.0), 0);
  rt_sym_state *s = ctx.sym;

  /* Raw operators fold constants only. */
  CHECK(D(rt_sym_binop(&ctx, RT_SYM_ADD, C(2.0), C(3.5))) == 5.5, "constant folding");
  CHECK(D(rt_sym_binop(&ctx, RT_SYM_LT, C(2.0), C(3.5))) == 1.0, "constant comparison");
  uint64_t raw = rt_sym_binop(&ctx, RT_SYM_ADD, C(2.0), rt_sym_binop(&ctx, RT_SYM_ADD, C(3.0), x));
  CHECK(is_kind(&ctx, raw, RT_NODE_ADD) && is_kind(&ctx, child(&ctx, raw, 1), RT_NODE_ADD), "raw nesting kept");

  /* add rule 2: Const 2 + Add(Const 3, x) -> Add(Const 5, x) */
  uint64_t e = rt_sym_eval(s, raw);
  CHECK(is_kind(&ctx, e, RT_NODE_ADD) && D(child(&ctx, e, 0)) == 5.0 && child(&ctx, e, 1) == x, "add rule 2");
  /* add rule 3 */
  e = rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_ADD, C(2.0), rt_sym_binop(&ctx, RT_SYM_ADD, x, C(3.0))));
  CHECK(is_kind(&ctx, e, RT_NODE_ADD) && D(child(&ctx, e, 0)) == 5.0 && child(&ctx, e, 1) == x, "add rule 3");
  /* add rule 4 then 3: Add(Const 1, x) + Const 4 -> add(1, Add(x, 4)) -> Add(Const 5, x) */
  e = rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_ADD, rt_sym_binop(&ctx, RT_SYM_ADD, C(1.0), x), C(4.0)));
  CHECK(is_kind(&ctx, e, RT_NODE_ADD) && D(child(&ctx, e, 0)) == 5.0 && child(&ctx, e, 1) == x, "add rule 4");
  /* add rules 5, 6 */
  CHECK(rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_ADD, C(0.0), x)) == x, "add rule 5");
  CHECK(rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_ADD, x, C(-0.0))) == x, "add rule 6");
  /* sub is Add(a, Mul(-1, b)): x - 3 -> Add(x, Const -3), which stays (no constant moves left) */
  e = rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_SUB, x, C(3.0)));
  CHECK(is_kind(&ctx, e, RT_NODE_ADD) && child(&ctx, e, 0) == x && D(child(&ctx, e, 1)) == -3.0, "sub shape");
  /* mul rules 2, 4, 5, 7 */
  e = rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_MUL, C(2.0), rt_sym_binop(&ctx, RT_SYM_MUL, C(3.0), x)));
  CHECK(is_kind(&ctx, e, RT_NODE_MUL) && D(child(&ctx, e, 0)) == 6.0 && child(&ctx, e, 1) == x, "mul rule 2");
  e = rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_MUL, C(2.0), rt_sym_binop(&ctx, RT_SYM_ADD, C(3.0), x)));
  CHECK(is_kind(&ctx, e, RT_NODE_ADD) && D(child(&ctx, e, 0)) == 6.0, "mul rule 4: constant term");
  uint64_t m = is_kind(&ctx, e, RT_NODE_ADD) ? child(&ctx, e, 1) : C(0.0);
  CHECK(is_kind(&ctx, m, RT_NODE_MUL) && D(child(&ctx, m, 0)) == 2.0 && child(&ctx, m, 1) == x, "mul rule 4: 2*x");
  CHECK(D(rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_MUL, C(0.0), x))) == 0.0, "mul rule 5");
  e = rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_MUL, x, C(2.0)));
  CHECK(is_kind(&ctx, e, RT_NODE_MUL) && child(&ctx, e, 0) == x && D(child(&ctx, e, 1)) == 2.0, "mul rule 7");
  /* div, ite, eq */
  CHECK(rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_DIV, x, C(1.0))) == x, "div by 1");
  CHECK(rt_sym_ite(&ctx, C(1.0), x, C(3.0)) == x, "ite on a constant");
  CHECK(D(rt_sym_ite(&ctx, C(NAN), C(1.0), C(2.0))) == 1.0, "NaN is truthy");
  e = rt_sym_eval(s, rt_sym_binop(&ctx, RT_SYM_EQ, x, C(2.0)));
  CHECK(is_kind(&ctx, e, RT_NODE_EQ), "eq stays symbolic");
  CHECK(isinf(D(rt_sym_binop(&ctx, RT_SYM_DIV, C(1.0), C(0.0)))), "IEEE division by zero");
  /* An evaluated graph evaluates to itself without allocating. */
  int64_t live = rt_sym_live_nodes(ctx.sym);
  CHECK(rt_sym_eval(ctx.sym, e) == e && rt_sym_live_nodes(ctx.sym) == live, "eval is idempotent");

  /* value_expr forces the RV once and then reads it */
  double v1, v2;
  uint64_t twice = rt_sym_binop(&ctx, RT_SYM_ADD, x, x);
  CHECK(rt_sym_value(&ctx, twice, &v1, -1) == 0 && rt_sym_value(&ctx, x, &v2, -1) == 0, "value");
  CHECK(v1 == 2 * v2, "value of x + x is twice x: %g vs %g", v1, v2);
  CHECK(D(rt_sym_eval(ctx.sym, twice)) == v1, "a sampled RV evaluates to its value");
  CHECK(D(rt_sym_simplify(&ctx, rt_sym_binop(&ctx, RT_SYM_MUL, C(3.0), x))) == 3 * v2, "simplify");
  ctx_done(&ctx);
}

/* ------------------------------------------------------------------ conjugate pairs ------------ */

static void test_gaussian_affine(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 2);
  double m0 = 1.5, v0 = 2.0, a = 3.0, b = -0.5, v = 0.7, y[2] = {2.2, -1.3};
  uint64_t x = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(m0), C(v0), 0);
  double ll = 0.0, m = m0, P = v0, want = 0.0;
  for (int i = 0; i < 2; i++) {
    uint64_t mu = rt_sym_binop(&ctx, RT_SYM_SUB, rt_sym_binop(&ctx, RT_SYM_MUL, C(a), x), C(-b));
    ll += observe(&ctx, SIRENRT_FAM_GAUSSIAN, mu, C(v), 0, y[i]);
    want += log_norm(y[i], a * m + b, a * a * P + v);
    double prec = 1.0 / P + a * a / v;
    m = (m / P + a * (y[i] - b) / v) / prec;
    P = 1.0 / prec;
  }
  CHECK_REL(ll, want, 1e-12, "gaussian affine: log-likelihood");
  CHECK_REL(mean(&ctx, x), m, 1e-12, "gaussian affine: posterior mean");
  const rt_sym_node *n = rt_node(ctx.sym, x);
  CHECK(n->family == SIRENRT_FAM_GAUSSIAN && rt_sym_is_const(n->w[1]), "gaussian affine: root");
  CHECK_REL(D(n->w[1]), P, 1e-12, "gaussian affine: posterior variance");
  ctx_done(&ctx);
}

static void test_beta_bernoulli(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 3);
  double a = 2.0, b = 3.0, xs[4] = {1, 0, 1, 1}, ll = 0.0;
  uint64_t p = assume(&ctx, SIRENRT_FAM_BETA, C(a), C(b), 0);
  for (int i = 0; i < 4; i++) ll += observe(&ctx, SIRENRT_FAM_BERNOULLI, p, 0, 0, xs[i]);
  CHECK_REL(ll, lbeta(a + 3, b + 1) - lbeta(a, b), 1e-12, "beta-bernoulli: log-likelihood");
  CHECK_REL(mean(&ctx, p), (a + 3) / (a + b + 4), 1e-12, "beta-bernoulli: posterior mean");
  ctx_done(&ctx);
}

static void test_beta_binomial(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 4);
  double a = 2.0, b = 3.0;
  uint64_t p = assume(&ctx, SIRENRT_FAM_BETA, C(a), C(b), 0);
  double ll = observe(&ctx, SIRENRT_FAM_BINOMIAL, C(10.0), p, 0, 4.0);
  ll += observe(&ctx, SIRENRT_FAM_BINOMIAL, C(5.0), p, 0, 2.0);
  double want = lchoose(10, 4) + lbeta(a + 4, b + 6) - lbeta(a, b) + lchoose(5, 2) + lbeta(a + 6, b + 9) -
                lbeta(a + 4, b + 6);
  CHECK_REL(ll, want, 1e-12, "beta-binomial: log-likelihood");
  CHECK_REL(mean(&ctx, p), (a + 6) / (a + b + 15), 1e-12, "beta-binomial: posterior mean");
  ctx_done(&ctx);
}

static double log_negbin(double n, double p, double k) { return lchoose(k + n - 1, k) + n * log(p) + k * log1p(-p); }

static void test_gamma_poisson(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 5);
  double a = 3.0, b = 2.0, ks[2] = {4, 1}, ll = 0.0, want = 0.0;
  uint64_t l = assume(&ctx, SIRENRT_FAM_GAMMA, C(a), C(b), 0);
  for (int i = 0; i < 2; i++) {
    ll += observe(&ctx, SIRENRT_FAM_POISSON, l, 0, 0, ks[i]);
    want += log_negbin(a, b / (1 + b), ks[i]);
    a += ks[i];
    b += 1;
  }
  CHECK_REL(ll, want, 1e-12, "gamma-poisson: log-likelihood");
  CHECK_REL(mean(&ctx, l), a / b, 1e-12, "gamma-poisson: posterior mean");
  ctx_done(&ctx);
}

static double log_t(double x, double mu, double s2, double nu) {
  return lgamma((nu + 1) / 2) - lgamma(nu / 2) - 0.5 * log(nu * RT_PI * s2) -
         (nu + 1) / 2 * log(1 + (x - mu) * (x - mu) / (nu * s2));
}

static void test_gamma_gaussian(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 6);
  double a = 2.0, b = 1.5, mu = 0.3, xs[3] = {1.1, -0.4, 0.25}, ll = 0.0, want = 0.0;
  /* exponential(r) is Gamma(1, r): the same rule applies to it */
  uint64_t tau = assume(&ctx, SIRENRT_FAM_GAMMA, C(a), C(b), 0);
  for (int i = 0; i < 3; i++) {
    ll += observe(&ctx, SIRENRT_FAM_GAUSSIAN, C(mu), rt_sym_binop(&ctx, RT_SYM_DIV, C(1.0), tau), 0, xs[i]);
    want += log_t(xs[i], mu, b / a, 2 * a);
    a += 0.5;
    b += 0.5 * (xs[i] - mu) * (xs[i] - mu);
  }
  CHECK_REL(ll, want, 1e-12, "gamma-gaussian: log-likelihood");
  CHECK_REL(mean(&ctx, tau), a / b, 1e-12, "gamma-gaussian: posterior mean");
  ctx_done(&ctx);
}

static void test_bernoulli_bernoulli(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 7);
  double q = 0.3, t = 0.9, f = 0.2, xs[3] = {1, 0, 1}, ll = 0.0, want = 0.0, p = q;
  uint64_t z = assume(&ctx, SIRENRT_FAM_BERNOULLI, C(q), 0, 0);
  for (int i = 0; i < 3; i++) {
    ll += observe(&ctx, SIRENRT_FAM_BERNOULLI, rt_sym_ite(&ctx, z, C(t), C(f)), 0, 0, xs[i]);
    double m = p * t + (1 - p) * f;
    want += log(xs[i] ? m : 1 - m);
    p = p * (xs[i] ? t : 1 - t) / (xs[i] ? m : 1 - m);
  }
  CHECK_REL(ll, want, 1e-12, "bernoulli-bernoulli: log-likelihood");
  CHECK_REL(mean(&ctx, z), p, 1e-12, "bernoulli-bernoulli: posterior mean");
  ctx_done(&ctx);
}

/* Two parents of one observation, independent and then dependent (b ~ N(a, 1): topological order and
 * a ghost root): exact Gaussian conditioning, both posterior means and the evidence. */
static void test_two_parents(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 16);
  uint64_t a = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(1.0), C(2.0), 0);
  uint64_t b = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(-1.0), C(3.0), 0);
  uint64_t mu = rt_sym_binop(&ctx, RT_SYM_ADD, a, rt_sym_binop(&ctx, RT_SYM_MUL, C(2.0), b));
  double y = 1.7, S = 2 + 4 * 3 + 0.5, ll = observe(&ctx, SIRENRT_FAM_GAUSSIAN, mu, C(0.5), 0, y);
  CHECK_REL(ll, log_norm(y, -1.0, S), 1e-12, "independent parents: log-likelihood");
  CHECK_REL(mean(&ctx, b), -1.0 + 6 * (y + 1) / S, 1e-12, "independent parents: mean of b");
  CHECK_REL(mean(&ctx, a), 1.0 + 2 * (y + 1) / S, 1e-12, "independent parents: mean of a");
  ctx_done(&ctx);

  ctx_init(&ctx, &logw, 17);
  a = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(0.0), C(1.0), 0);
  b = assume(&ctx, SIRENRT_FAM_GAUSSIAN, a, C(1.0), 0);
  ll = observe(&ctx, SIRENRT_FAM_GAUSSIAN, rt_sym_binop(&ctx, RT_SYM_ADD, a, b), C(1.0), 0, 2.0);
  CHECK_REL(ll, log_norm(2.0, 0.0, 6.0), 1e-12, "dependent parents: log-likelihood");
  CHECK_REL(mean(&ctx, a), 2.0 / 3.0, 1e-12, "dependent parents: mean of a");
  CHECK_REL(mean(&ctx, b), 1.0, 1e-12, "dependent parents: mean of b");
  ctx_done(&ctx);
}

/* ------------------------------------------------------------------ Kalman ---------------------- */

/* x1 ~ N(0, 1); x_t ~ N(x_{t-1}, q); y_t ~ N(x_t, r).  With `collect`, only the latest x is a root. */
static void kalman(int T, int collect, int smooth) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 8);
  const double q = 0.3, r = 0.8;
  double *mf = malloc(T * sizeof *mf), *pf = malloc(T * sizeof *pf);
  double ll = 0.0, want = 0.0, m = 0.0, P = 1.0;
  uint64_t x = C(0.0), x1 = C(0.0);
  int64_t max_live = 0;
  for (int t = 0; t < T; t++) {
    x = t == 0 ? assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(0.0), C(1.0), 0) : assume(&ctx, SIRENRT_FAM_GAUSSIAN, x, C(q), 0);
    if (t == 0) x1 = x;
    if (t > 0) P += q;
    double y = 2.0 * sin(0.1 * t) + 0.5 * cos(1.7 * t);
    ll += observe(&ctx, SIRENRT_FAM_GAUSSIAN, x, C(r), 0, y);
    want += log_norm(y, m, P + r);
    double k = P / (P + r);
    m += k * (y - m);
    P *= 1 - k;
    mf[t] = m;
    pf[t] = P;
    if (collect && rt_sym_collect_due(ctx.sym)) {
      rt_sym_mark(ctx.sym, x);
      rt_sym_sweep(ctx.sym);
    }
    if (rt_sym_live_nodes(ctx.sym) > max_live) max_live = rt_sym_live_nodes(ctx.sym);
  }
  char what[64];
  snprintf(what, sizeof what, "kalman T=%d: log evidence", T);
  CHECK_REL(ll, want, 1e-9, what);
  snprintf(what, sizeof what, "kalman T=%d: filter mean", T);
  CHECK_REL(mean(&ctx, x), m, 1e-9, what);
  if (collect) CHECK(max_live < 200, "kalman T=%d with collection: %lld live nodes", T, (long long)max_live);
  if (!collect) { /* the whole chain is reachable from x1: an explicit-stack mark, and a deep copy */
    int64_t live = rt_sym_live_nodes(ctx.sym);
    rt_sym_mark(ctx.sym, x1);
    rt_sym_sweep(ctx.sym);
    CHECK(rt_sym_live_nodes(ctx.sym) >= T && rt_sym_live_nodes(ctx.sym) <= live, "kalman: chain kept by mark");
  }
  if (smooth) { /* RTS: x1's mean given everything, by hoisting x1 through the chain */
    double ms = mf[T - 1], ps = pf[T - 1];
    for (int t = T - 2; t >= 0; t--) {
      double g = pf[t] / (pf[t] + q);
      ms = mf[t] + g * (ms - mf[t]);
      ps = pf[t] + g * g * (ps - (pf[t] + q));
    }
    snprintf(what, sizeof what, "kalman T=%d: smoother mean of x1", T);
    CHECK_REL(mean(&ctx, x1), ms, 1e-9, what);
    const rt_sym_node *n = rt_node(ctx.sym, x1);
    snprintf(what, sizeof what, "kalman T=%d: smoother variance of x1", T);
    CHECK(rt_sym_is_const(n->w[1]), "x1 is a root");
    CHECK_REL(D(n->w[1]), ps, 1e-9, what);
  }
  free(mf);
  free(pf);
  ctx_done(&ctx);
}

/* A population sharing states as resampling leaves it: at every step each particle's state is replaced
 * by a random other's (retained, then copied on the first write) and collected with its x as the only
 * root.  Every particle is exact, so each one's evidence and mean are the Kalman filter's. */
static void test_shared_population(void) {
  enum { NP = 16, T = 200 };
  sirenrt_ctx ctx[NP];
  double logw[NP], ll[NP];
  uint64_t x[NP];
  rt_rng pick;
  rt_rng_init(&pick, 7, 0, 0, RT_DOMAIN_TEST);
  for (int i = 0; i < NP; i++) {
    ctx_init(&ctx[i], &logw[i], 200 + (uint64_t)i);
    ll[i] = 0.0;
  }
  double m = 0.0, P = 1.0, want = 0.0;
  const double q = 0.5, r = 1.5;
  for (int t = 0; t < T; t++) {
    double y = cos(0.3 * t);
    for (int i = 0; i < NP; i++) {
      x[i] = t == 0 ? assume(&ctx[i], SIRENRT_FAM_GAUSSIAN, C(0.0), C(1.0), 0)
                    : assume(&ctx[i], SIRENRT_FAM_GAUSSIAN, x[i], C(q), 0);
      ll[i] += observe(&ctx[i], SIRENRT_FAM_GAUSSIAN, x[i], C(r), 0, y);
    }
    if (t > 0) P += q;
    want += log_norm(y, m, P + r);
    double k = P / (P + r);
    m += k * (y - m);
    P *= 1 - k;
    /* resample: particle i takes the state of particle j (words stay valid: same indices) */
    rt_sym_state *old[NP];
    uint64_t oldx[NP];
    for (int i = 0; i < NP; i++) old[i] = ctx[i].sym, oldx[i] = x[i];
    for (int i = 0; i < NP; i++) {
      int j = (int)rt_below(&pick, NP);
      rt_sym_retain(old[j], 1);
      ctx[i].sym = old[j];
      x[i] = oldx[j];
    }
    for (int i = 0; i < NP; i++) rt_sym_release(old[i]);
    for (int i = 0; i < NP; i++) {
      rt_sym_state *s = rt_sym_own(&ctx[i]);
      if (s && rt_sym_collect_due(s)) {
        rt_sym_mark(s, x[i]);
        rt_sym_sweep(s);
      }
    }
  }
  for (int i = 0; i < NP; i++) {
    CHECK_REL(ll[i] - ll[0], 0.0, 1e-12, "particles agree");
    CHECK_REL(mean(&ctx[i], x[i]), m, 1e-9, "shared population: filter mean");
    CHECK(rt_sym_live_nodes(ctx[i].sym) < 200, "bounded: %lld", (long long)rt_sym_live_nodes(ctx[i].sym));
  }
  CHECK_REL(ll[0], want, 1e-9, "shared population: log evidence");
  for (int i = 0; i < NP; i++) ctx_done(&ctx[i]);
}

/* A fold-built sum of 10^5 symbolic terms: eval, mean and value walk it without the C stack. */
static void test_long_sum(void) {
  sirenrt_ctx ctx;
  double logw, v = NAN;
  ctx_init(&ctx, &logw, 18);
  uint64_t sum = C(0.0);
  for (int i = 0; i < 100000; i++)
    sum = rt_sym_binop(&ctx, RT_SYM_ADD, sum, assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(1.0), C(1.0), 0));
  CHECK_REL(mean(&ctx, sum), 100000.0, 1e-12, "mean of a long sum");
  CHECK(rt_sym_value(&ctx, sum, &v, -1) == 0 && fabs(v - 1e5) < 5 * sqrt(1e5), "value of a long sum: %g", v);
  ctx_done(&ctx);

  /* Every term's posterior then depends on all the terms before it.  Hoisting each in turn (the mean
   * of the sum) grows the graph exponentially, as ARCHITECTURE.md §12.5 warns of the original: one term only. */
  ctx_init(&ctx, &logw, 19);
  enum { K = 60 };
  uint64_t last = C(0.0);
  sum = C(0.0);
  for (int i = 0; i < K; i++) {
    last = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(1.0), C(1.0), 0);
    sum = rt_sym_binop(&ctx, RT_SYM_ADD, sum, last);
  }
  double lp = observe(&ctx, SIRENRT_FAM_GAUSSIAN, sum, C(1.0), 0, 3.0);
  CHECK_REL(lp, log_norm(3.0, K, K + 1.0), 1e-9, "evidence of a sum");
  CHECK_REL(mean(&ctx, last), 1.0 + (3.0 - K) / (K + 1.0), 1e-9, "posterior mean of its last term");
  ctx_done(&ctx);
}

/* ------------------------------------------------------------------ goodness of fit ------------ */

/* value() of a Gaussian parent after an observation draws from the exact posterior: mean and
 * variance of N draws within 5 standard errors. */
static void test_posterior_draws(void) {
  enum { N = 20000 };
  const double m0 = 1.0, v0 = 2.0, r = 0.5, y = 3.0;
  double prec = 1 / v0 + 1 / r, pm = (m0 / v0 + y / r) / prec, pv = 1 / prec;
  double sum = 0.0, sum2 = 0.0;
  for (int i = 0; i < N; i++) {
    sirenrt_ctx ctx;
    double logw, v = NAN;
    ctx_init(&ctx, &logw, 1000 + (uint64_t)i);
    uint64_t x = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(m0), C(v0), 0);
    observe(&ctx, SIRENRT_FAM_GAUSSIAN, x, C(r), 0, y);
    CHECK(rt_sym_value(&ctx, x, &v, -1) == 0, "value");
    sum += v;
    sum2 += v * v;
    ctx_done(&ctx);
  }
  double m = sum / N, var = (sum2 - N * m * m) / (N - 1);
  CHECK_NEAR(m, pm, 5 * sqrt(pv / N), "posterior draws: mean");
  CHECK_NEAR(var, pv, 5 * pv * sqrt(2.0 / (N - 1)), "posterior draws: variance");

  /* Beta(2, 3) after observing true: Beta(3, 3).  The sample variance's standard error comes from
   * the draws' fourth central moment. */
  double xs[N];
  sum = 0.0;
  for (int i = 0; i < N; i++) {
    sirenrt_ctx ctx;
    double logw, v = NAN;
    ctx_init(&ctx, &logw, 100000 + (uint64_t)i);
    uint64_t p = assume(&ctx, SIRENRT_FAM_BETA, C(2.0), C(3.0), 0);
    observe(&ctx, SIRENRT_FAM_BERNOULLI, p, 0, 0, 1.0);
    CHECK(rt_sym_value(&ctx, p, &v, -1) == 0, "value");
    xs[i] = v;
    sum += v;
    ctx_done(&ctx);
  }
  m = sum / N;
  double m2 = 0.0, m4 = 0.0;
  for (int i = 0; i < N; i++) {
    double d = xs[i] - m;
    m2 += d * d;
    m4 += d * d * d * d;
  }
  m2 /= N - 1;
  m4 /= N;
  pv = 3.0 * 3.0 / (36.0 * 7.0);
  CHECK_NEAR(m, 0.5, 5 * sqrt(pv / N), "beta posterior draws: mean");
  CHECK_NEAR(m2, pv, 5 * sqrt((m4 - m2 * m2) / N), "beta posterior draws: variance");
}

/* ------------------------------------------------------------------ plan ------------------------ */

/* A filter whose model names `n` variables and whose pool holds `words`: what the symbolic engine
 * reads of a filter (variable names, the memory pool), without a population. */
static void fake_filter(sirenrt_filter *filter, sirenrt_model *model, const char *const *vars, int32_t n,
                        uint64_t words) {
  memset(model, 0, sizeof *model);
  model->n_vars = n;
  model->vars = vars;
  memset(filter, 0, sizeof *filter);
  filter->model = model;
  filter->budget.words = words;
}

static void test_plan(void) {
  static const char *const vars[] = {"x", "s"};
  sirenrt_model model;
  sirenrt_filter filter;
  fake_filter(&filter, &model, vars, 2, (uint64_t)1 << 40);

  for (int ann = SIRENRT_ANN_NONE; ann <= SIRENRT_ANN_SYMBOLIC; ann += SIRENRT_ANN_SYMBOLIC) {
    sirenrt_ctx ctx;
    double logw;
    ctx_init(&ctx, &logw, 9);
    ctx.filter = &filter;
    uint64_t p[3] = {C(5.0), C(1.0), 0}, s = 0, x = 0;
    CHECK(rt_sym_assume(&ctx, SIRENRT_FAM_GAUSSIAN, p, 1, ann, 7, &s) == 0, "assume s");
    uint64_t px[3] = {C(0.0), C(1.0), 0};
    CHECK(rt_sym_assume(&ctx, SIRENRT_FAM_GAUSSIAN, px, 0, SIRENRT_ANN_NONE, 8, &x) == 0, "assume x");
    /* s is the variance: no rule reverses that edge, so observing samples s */
    uint64_t q[3] = {x, s, 0};
    double lp;
    int r = rt_sym_observe(&ctx, SIRENRT_FAM_GAUSSIAN, q, 0.5, 11, &lp);
    if (ann == SIRENRT_ANN_SYMBOLIC) {
      CHECK(r == -1, "a symbolic variance must fail the observation");
      CHECK(ctx.err_msg != NULL, "error recorded");
      if (ctx.err_msg) CHECK_CONTAINS(ctx.err_msg, "s is annotated as symbolic but will be sampled");
      CHECK(ctx.err_site == 11, "site of the observation: %d", ctx.err_site);
    } else {
      CHECK(r == 0, "observe: %s", ctx.err_msg ? ctx.err_msg : "?");
      CHECK(rt_sym_plan_bits(ctx.sym, 1) == 3, "s created and sampled: %d", rt_sym_plan_bits(ctx.sym, 1));
      CHECK(rt_sym_plan_bits(ctx.sym, 0) == 1, "x created, symbolic: %d", rt_sym_plan_bits(ctx.sym, 0));
      CHECK(rt_sym_plan_bits(ctx.sym, 2) == 0, "out of range");
    }
    ctx_done(&ctx);
  }

  /* Without a filter the variable has no name; forcing it is the violation. */
  sirenrt_ctx ctx;
  double logw, v;
  ctx_init(&ctx, &logw, 10);
  uint64_t p[3] = {C(1.0), C(1.0), 0}, g = 0;
  CHECK(rt_sym_assume(&ctx, SIRENRT_FAM_GAMMA, p, -1, SIRENRT_ANN_SYMBOLIC, 3, &g) == 0, "assume");
  CHECK(rt_sym_value(&ctx, rt_sym_binop(&ctx, RT_SYM_ADD, g, C(1.0)), &v, 4) == -1, "forcing fails");
  if (ctx.err_msg) CHECK_CONTAINS(ctx.err_msg, "a variable is annotated as symbolic but will be sampled");
  ctx_done(&ctx);

  /* A `sample` annotation draws at once. */
  ctx_init(&ctx, &logw, 11);
  CHECK(rt_sym_assume(&ctx, SIRENRT_FAM_GAMMA, p, -1, SIRENRT_ANN_SAMPLE, 3, &g) == 0 && rt_sym_is_const(g) &&
            D(g) > 0.0,
        "sample annotation gives a value");
  ctx_done(&ctx);
}

/* ------------------------------------------------------------------ COW, checkpoints ------------ */

/* The filter's pool (memory.c) holds the states' node pools: a state that outgrows what is left of
 * it fails with the pool's message, and what a freed state held is given back. */
static void test_budget(void) {
  static const char *const vars[] = {"x"};
  sirenrt_model model;
  sirenrt_filter filter;
  fake_filter(&filter, &model, vars, 1, 64 * 6 * 4); /* four pools of the first size, two doublings */
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 30);
  ctx.filter = &filter;
  uint64_t sum = C(0.0);
  int failed = 0;
  for (int i = 0; i < 1000 && !failed; i++) {
    uint64_t p[3] = {C(0.0), C(1.0), 0}, x;
    failed = rt_sym_assume(&ctx, SIRENRT_FAM_GAUSSIAN, p, 0, SIRENRT_ANN_NONE, 3, &x) != 0;
    if (!failed) sum = rt_sym_binop(&ctx, RT_SYM_ADD, sum, x);
  }
  CHECK(failed && ctx.err_msg && strstr(ctx.err_msg, "outgrow the filter's memory limit"), "the pool refuses: %s",
        ctx.err_msg ? ctx.err_msg : "(no error)");
  CHECK(filter.budget.used > 0 && filter.budget.used <= filter.budget.words, "taken: %llu",
        (unsigned long long)filter.budget.used);
  ctx_done(&ctx);
  CHECK(filter.budget.used == 0, "given back: %llu", (unsigned long long)filter.budget.used);
}

static void test_copy_on_write(void) {
  sirenrt_ctx a, b;
  double la, lb;
  ctx_init(&a, &la, 12);
  ctx_init(&b, &lb, 13);
  uint64_t x = assume(&a, SIRENRT_FAM_GAUSSIAN, C(0.0), C(1.0), 0);
  rt_sym_state *shared = a.sym;
  rt_sym_retain(shared, 1);
  b.sym = shared;
  int64_t live = rt_sym_live_nodes(shared);
  observe(&a, SIRENRT_FAM_GAUSSIAN, x, C(1.0), 0, 2.0);
  CHECK(a.sym != shared && b.sym == shared, "the writer copied the state");
  CHECK(rt_sym_live_nodes(shared) == live, "the shared state is unchanged");
  CHECK(rt_node(shared, x)->rv_state == RT_RV_SYMBOLIC && D(rt_node(shared, x)->w[0]) == 0.0, "x untouched there");
  CHECK_REL(mean(&a, x), 1.0, 1e-12, "writer sees its posterior");
  CHECK_REL(mean(&b, x), 0.0, 1e-12, "other holder sees the prior");
  CHECK(b.sym == shared, "sole holder writes in place");

  /* Checkpoint: save, load, same answers. */
  uint8_t *buf = NULL;
  int64_t len = 0;
  CHECK(rt_sym_save(a.sym, &buf, &len) == 0, "save");
  rt_sym_state *loaded = rt_sym_load(buf, len);
  CHECK(loaded != NULL, "load");
  CHECK(rt_sym_load(buf, len - 1) == NULL, "truncated checkpoint refused");
  free(buf);
  if (loaded) {
    rt_sym_release(b.sym);
    b.sym = loaded;
    double lp = observe(&b, SIRENRT_FAM_GAUSSIAN, x, C(1.0), 0, 0.0);
    CHECK_REL(lp, log_norm(0.0, 1.0, 0.5 + 1.0), 1e-12, "loaded state keeps the posterior");
  }
  ctx_done(&a);
  ctx_done(&b);
}

static void test_categorical(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 14);
  double probs[5] = {0.1, 0.2, 0.3, 0.15, 0.25};
  int64_t list = SIRENRT_NIL;
  for (int i = 4; i >= 0; i--) {
    int64_t cell = sirenrt_list_cons(&ctx, list, 1);
    sirenrt_list_set(&ctx, cell, 0, double_to_bits(probs[i]));
    list = cell;
  }
  uint64_t k = assume(&ctx, SIRENRT_FAM_CATEGORICAL, C(2.0), C(6.0), (uint64_t)list);
  CHECK_REL(mean(&ctx, k), 2 * 0.1 + 3 * 0.2 + 4 * 0.3 + 5 * 0.15 + 6 * 0.25, 1e-12, "categorical mean");
  /* A categorical parent is never conjugate: observing through it samples it. */
  double lp = observe(&ctx, SIRENRT_FAM_POISSON, k, 0, 0, 3.0);
  double v = D(rt_sym_eval(ctx.sym, k));
  CHECK(v >= 2 && v <= 6 && v == floor(v), "categorical sampled: %g", v);
  CHECK_REL(lp, 3 * log(v) - v - lgamma(4.0), 1e-12, "poisson given the sample");
  ctx_done(&ctx);
}

/* Non-conjugate parents are sampled and the child scored given the sample; exponential is gamma;
 * delta stands for its expression; means of Ite/Eq; value forces only the branch taken. */
static void test_mixed(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 15);
  uint64_t v = assume(&ctx, SIRENRT_FAM_GAMMA, C(2.0), C(1.0), 0);
  double lp = observe(&ctx, SIRENRT_FAM_GAUSSIAN, C(0.0), v, 0, 0.7); /* variance v, not 1/v */
  CHECK(rt_node(ctx.sym, v)->rv_state == RT_RV_SAMPLED, "a gamma variance is sampled");
  double vs = D(rt_sym_eval(ctx.sym, v));
  CHECK_REL(lp, log_norm(0.7, 0.0, vs), 1e-12, "scored given the sampled variance");
  CHECK(logw == 0.0, "observe leaves the weight to its caller");

  uint64_t l = assume(&ctx, SIRENRT_FAM_EXPONENTIAL, C(2.0), 0, 0);
  lp = observe(&ctx, SIRENRT_FAM_POISSON, l, 0, 0, 3.0);
  CHECK_REL(lp, log_negbin(1.0, 2.0 / 3.0, 3.0), 1e-12, "exponential-poisson: log-likelihood");
  CHECK_REL(mean(&ctx, l), 4.0 / 3.0, 1e-12, "exponential-poisson: posterior mean");

  uint64_t x = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(2.0), C(1.0), 0);
  uint64_t d = assume(&ctx, SIRENRT_FAM_DELTA, rt_sym_binop(&ctx, RT_SYM_ADD, x, C(1.0)), 0, 0);
  CHECK_REL(mean(&ctx, d), 3.0, 1e-12, "delta: mean of its expression");
  lp = observe(&ctx, SIRENRT_FAM_GAUSSIAN, d, C(1.0), 0, 4.0);
  CHECK_REL(lp, log_norm(4.0, 3.0, 2.0), 1e-12, "delta: observed through it, x stays symbolic");
  CHECK(rt_node(ctx.sym, x)->rv_state == RT_RV_SYMBOLIC, "x symbolic");

  uint64_t z = assume(&ctx, SIRENRT_FAM_BERNOULLI, C(0.3), 0, 0);
  CHECK_REL(mean(&ctx, rt_sym_ite(&ctx, z, C(5.0), C(1.0))), 0.3 * 5 + 0.7 * 1, 1e-12, "mean of ite");
  CHECK(mean(&ctx, rt_sym_binop(&ctx, RT_SYM_EQ, z, C(1.0))) == 0.0, "mean of eq compares means");
  CHECK(mean(&ctx, rt_sym_binop(&ctx, RT_SYM_LT, z, C(1.0))) == 1.0, "mean of lt compares means");
  CHECK(rt_node(ctx.sym, z)->rv_state == RT_RV_SYMBOLIC, "means sample nothing here");

  uint64_t sure = assume(&ctx, SIRENRT_FAM_BERNOULLI, C(1.0), 0, 0);
  uint64_t y = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(0.0), C(1.0), 0);
  double val = NAN;
  CHECK(rt_sym_value(&ctx, rt_sym_ite(&ctx, sure, C(5.0), y), &val, -1) == 0 && val == 5.0, "ite forced: %g", val);
  CHECK(rt_node(ctx.sym, y)->rv_state == RT_RV_SYMBOLIC, "the branch not taken is not forced");

  /* A reference that is not a live node is reported, not followed. */
  CHECK(rt_sym_value(&ctx, rt_sym_ref(1u << 30), &val, 5) == -1, "bad reference refused");
  if (ctx.err_msg) CHECK_CONTAINS(ctx.err_msg, "invalid symbolic reference");
  ctx_done(&ctx);
}

/* ------------------------------------------------------------------ DS and BP ------------------ */

static void use_method(sirenrt_ctx *ctx, int method) {
  rt_sym_state *s = rt_sym_own(ctx);
  CHECK(s != NULL, "state");
  if (s) s->method = method;
}

static int sampled(sirenrt_ctx *ctx, uint64_t w) { return rt_node(ctx->sym, w)->rv_state == RT_RV_SAMPLED; }

/* x -> y -> observation under DS (ARCHITECTURE.md §13): the observation's graft marginalises y and then its
 * observation; y's posterior is exact without sampling, and x's mean prunes y (samples it) first. */
static void test_ds_chain(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 40);
  use_method(&ctx, RT_METHOD_DS);
  uint64_t x = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(0.0), C(1.0), 0);
  uint64_t y = assume(&ctx, SIRENRT_FAM_GAUSSIAN, x, C(1.0), 0);
  CHECK(rt_node(ctx.sym, y)->flags & RT_DS_INIT, "y is Initialized(x)");
  double lp = observe(&ctx, SIRENRT_FAM_GAUSSIAN, y, C(1.0), 0, 0.5);
  CHECK_REL(lp, log_norm(0.5, 0.0, 3.0), 1e-12, "the observation's marginal");
  CHECK((rt_node(ctx.sym, x)->flags & RT_DS_PENDING) && !(rt_node(ctx.sym, y)->flags & RT_DS_INIT),
        "y is x's marginal child");
  /* A checkpoint keeps the pending edge. */
  uint8_t *buf = NULL;
  int64_t len = 0;
  CHECK(rt_sym_save(ctx.sym, &buf, &len) == 0, "save");
  rt_sym_state *loaded = rt_sym_load(buf, len);
  free(buf);
  CHECK(loaded && loaded->method == RT_METHOD_DS && (rt_node(loaded, x)->flags & RT_DS_PENDING), "load");
  CHECK_REL(mean(&ctx, y), 2.0 / 3.0 * 0.5, 1e-12, "y's posterior mean");
  CHECK(!sampled(&ctx, y), "y's mean samples nothing");
  double mx = mean(&ctx, x);
  CHECK(sampled(&ctx, y), "x's mean pruned y");
  CHECK_REL(mx, rt_node(ctx.sym, y)->u.value / 2.0, 1e-12, "x given y");
  if (loaded) { /* the loaded copy continues as the original did before the means */
    rt_sym_release(ctx.sym);
    ctx.sym = loaded;
    CHECK_REL(mean(&ctx, y), 2.0 / 3.0 * 0.5, 1e-12, "y's posterior mean after loading");
  }
  ctx_done(&ctx);
}

/* At most one symbolic parent (13.2): y ~ N(x + w, 1) keeps x and samples w; under BP a Beta parent
 * of a Bernoulli is sampled (14.1), under DS it stays symbolic. */
static void test_one_parent(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 41);
  use_method(&ctx, RT_METHOD_DS);
  uint64_t x = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(0.0), C(1.0), 0);
  uint64_t w = assume(&ctx, SIRENRT_FAM_GAUSSIAN, C(0.0), C(1.0), 0);
  uint64_t y = assume(&ctx, SIRENRT_FAM_GAUSSIAN, rt_sym_binop(&ctx, RT_SYM_ADD, x, w), C(1.0), 0);
  CHECK(!sampled(&ctx, x) && sampled(&ctx, w), "the second parent is sampled");
  double wv = rt_node(ctx.sym, w)->u.value;
  double lp = observe(&ctx, SIRENRT_FAM_GAUSSIAN, y, C(1.0), 0, 1.0);
  CHECK_REL(lp, log_norm(1.0, wv, 3.0), 1e-12, "x and y marginalised around w's value");
  ctx_done(&ctx);

  /* A parent with a marginal child keeps its marginal: the check of a new child sees Beta(2, 3) with
   * a constant alpha (beta-binomial's precondition), not the posterior given the child. */
  ctx_init(&ctx, &logw, 44);
  use_method(&ctx, RT_METHOD_DS);
  uint64_t p = assume(&ctx, SIRENRT_FAM_BETA, C(2.0), C(3.0), 0);
  uint64_t b = assume(&ctx, SIRENRT_FAM_BERNOULLI, p, 0, 0);
  observe(&ctx, SIRENRT_FAM_BERNOULLI, rt_sym_ite(&ctx, b, C(0.9), C(0.1)), 0, 0, 1.0);
  CHECK((rt_node(ctx.sym, p)->flags & RT_DS_PENDING) && !sampled(&ctx, b), "b is p's marginal child");
  uint64_t k = assume(&ctx, SIRENRT_FAM_BINOMIAL, C(10.0), p, 0);
  CHECK(!sampled(&ctx, p) && !sampled(&ctx, b) && (rt_node(ctx.sym, k)->flags & RT_DS_INIT), "p is k's parent");
  ctx_done(&ctx);

  for (int method = RT_METHOD_DS; method <= RT_METHOD_BP; method++) {
    ctx_init(&ctx, &logw, 42);
    use_method(&ctx, method);
    uint64_t p = assume(&ctx, SIRENRT_FAM_BETA, C(2.0), C(3.0), 0);
    lp = observe(&ctx, SIRENRT_FAM_BERNOULLI, p, 0, 0, 1.0);
    if (method == RT_METHOD_DS) {
      CHECK(!sampled(&ctx, p), "DS keeps beta-bernoulli");
      CHECK_REL(lp, log(2.0 / 5.0), 1e-12, "DS: the marginal");
      CHECK_REL(mean(&ctx, p), 3.0 / 6.0, 1e-12, "DS: the posterior");
    } else {
      CHECK(sampled(&ctx, p), "BP samples a Beta parent");
      CHECK_REL(lp, log(rt_node(ctx.sym, p)->u.value), 1e-12, "BP: scored at the drawn p");
    }
    ctx_done(&ctx);
  }
}

/* A DS random walk that keeps only its latest state: marking that one variable and sweeping leaves a
 * bounded state over many steps (parents point at their marginal children, never the reverse). */
static void test_ds_walk_is_collected(void) {
  sirenrt_ctx ctx;
  double logw;
  ctx_init(&ctx, &logw, 43);
  use_method(&ctx, RT_METHOD_DS);
  uint64_t x = C(0.0);
  int64_t most = 0;
  double m = 0.0, v = 0.0, err = 0.0;
  for (int t = 0; t < 20000; t++) {
    x = assume(&ctx, SIRENRT_FAM_GAUSSIAN, x, C(1.0), 0);
    double y = sin(t * 0.1);
    observe(&ctx, SIRENRT_FAM_GAUSSIAN, x, C(0.5), 0, y);
    v += 1.0; /* the Kalman filter beside it */
    m = (m / v + y / 0.5) / (1.0 / v + 1.0 / 0.5);
    v = 1.0 / (1.0 / v + 1.0 / 0.5);
    if (rt_sym_collect_due(ctx.sym)) {
      rt_sym_mark(ctx.sym, x);
      rt_sym_sweep(ctx.sym);
    }
    if (rt_sym_live_nodes(ctx.sym) > most) most = rt_sym_live_nodes(ctx.sym);
    if (t % 997 == 0) err = fmax(err, fabs(mean(&ctx, x) - m));
  }
  CHECK(most < 200, "live nodes bounded: %lld", (long long)most);
  CHECK(err < 1e-9, "the DS walk is the Kalman filter: %g", err);
  ctx_done(&ctx);
}

int main(void) {
  test_simplification();
  test_gaussian_affine();
  test_beta_bernoulli();
  test_beta_binomial();
  test_gamma_poisson();
  test_gamma_gaussian();
  test_bernoulli_bernoulli();
  test_two_parents();
  kalman(50, 0, 1);
  kalman(1000, 0, 1);
  kalman(5000, 0, 0);
  kalman(10000, 0, 1);
  kalman(5000, 1, 0);
  test_shared_population();
  test_long_sum();
  test_posterior_draws();
  test_plan();
  test_copy_on_write();
  test_budget();
  test_categorical();
  test_mixed();
  test_ds_chain();
  test_one_parent();
  test_ds_walk_is_collected();
  return check_report("test_sym");
}
