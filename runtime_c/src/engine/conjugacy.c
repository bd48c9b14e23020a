/* conjugacy.c — the conjugate pairs of ARCHITECTURE.md §11 as swaps of a parent q with its child c: each rule
 * checks its structural preconditions, then gives c its marginal (q integrated out) and q its
 * posterior given RV c (edge reversal; the value enters later through eval once c is a point mass).
 * All formulas are built with the smart constructors of 6.3, in the order ARCHITECTURE.md §11 lists the rules.
 *
 * Normal-inverse-gamma (11.3) is omitted: the original's formulas are wrong (ARCHITECTURE.md §11.3, 0.3) and no
 * benchmark plan uses it, so a Gaussian child whose variance is 1/lambda with lambda symbolic is
 * non-conjugate here and SSI samples the offending parent. */
#include "sym_node.h"

#define C(x) rt_sym_word(x)
#define D(w) rt_sym_double(w)

static uint64_t param(rt_sym_state *s, uint32_t rv, int k) { return s->nodes[rv].w[k]; }

static void set_dist(rt_sym_state *s, uint32_t rv, int family, uint64_t p0, uint64_t p1, uint64_t p2) {
  rt_sym_node *n = &s->nodes[rv];
  n->family = (uint8_t)family;
  n->w[0] = p0;
  n->w[1] = p1;
  n->w[2] = p2;
}

/* Direct occurrence (ARCHITECTURE.md §11's depends); out of memory counts as "occurs" so the rule declines and
 * the caller reports s->oom. */
static int dep(rt_sym_state *s, uint64_t e, uint32_t r) {
  int d = rt_sym_occurs(s, e, r);
  if (d < 0) rt_sym_oom(s);
  return d != 0;
}

static int is_rv(uint64_t w, uint32_t rv) { return rt_sym_is_node(w) && rt_sym_index(w) == rv; }
static int is_zero(uint64_t w) { return rt_sym_is_const(w) && D(w) == 0.0; }

/* ------------------------------------------------------------------ 11.1 affine ---------------- */

/* affine(e, r) of a constant or an RV. */
static void affine_leaf(uint64_t e, uint32_t r, uint64_t *a, uint64_t *b) {
  int is_r = rt_sym_is_node(e) && rt_sym_index(e) == r;
  *a = C(is_r ? 1.0 : 0.0);
  *b = is_r ? C(0.0) : e;
}

/* e = a*r + b with other RVs as constants (11.1): 1 with *a, *b set, 0 when e is not structurally
 * affine (Ite, Eq, Lt anywhere fail, even without r).  A post-order walk on an explicit stack, each
 * shared subexpression once: a posterior repeats its parents' terms, so walking the tree would be
 * exponential.  The b of a subexpression without r is rebuilt with the node itself as `self`, so it is
 * that node again and nothing is allocated.  A node's result is triple memo/3 of res once its stamp
 * is this walk's (0 = failed, else a, b). */
static int affine(rt_sym_state *s, uint64_t e, uint32_t r, uint64_t *a, uint64_t *b) {
  if (!rt_sym_is_node(e) || rt_sym_is_kind(s, e, RT_NODE_RV)) {
    affine_leaf(e, r, a, b);
    return 1;
  }
  const uint64_t done = UINT64_C(1) << 32;
  uint64_t sbuf[64], rbuf[48];
  rt_vec stack = RT_VEC_ON(sbuf), res = RT_VEC_ON(rbuf);
  uint32_t gen = rt_sym_gen(s);
  int ok = 0;
  if (rt_vec_push(&stack, rt_sym_index(e))) goto oom;
  while (stack.n) {
    uint64_t entry = stack.v[--stack.n];
    uint32_t i = (uint32_t)entry;
    rt_sym_node *n = &s->nodes[i];
    if (n->stamp == gen) continue;
    int kind = n->kind;
    uint64_t e1 = n->w[0], e2 = n->w[1];
    uint64_t ch[2] = {e1, e2};
    if (!(entry & done)) {
      if (kind == RT_NODE_ADD || kind == RT_NODE_MUL || kind == RT_NODE_DIV) {
        if (rt_vec_push(&stack, entry | done)) goto oom;
        for (int k = 1; k >= 0; k--)
          if (rt_sym_is_node(ch[k]) && !rt_sym_is_kind(s, ch[k], RT_NODE_RV) && rt_vec_push(&stack, rt_sym_index(ch[k])))
            goto oom;
        continue;
      }
    }
    uint64_t ab[2][2];
    int fail = !(kind == RT_NODE_ADD || kind == RT_NODE_MUL || kind == RT_NODE_DIV);
    for (int k = 0; k < 2 && !fail; k++) {
      if (!rt_sym_is_node(ch[k]) || rt_sym_is_kind(s, ch[k], RT_NODE_RV)) {
        affine_leaf(ch[k], r, &ab[k][0], &ab[k][1]);
      } else {
        const uint64_t *t = &res.v[s->nodes[rt_sym_index(ch[k])].u.memo];
        fail = t[0] == 0;
        ab[k][0] = t[1];
        ab[k][1] = t[2];
      }
    }
    uint64_t ra = C(0.0), rb = C(0.0);
    if (!fail) {
      uint64_t a1 = ab[0][0], b1 = ab[0][1], a2 = ab[1][0], b2 = ab[1][1], self = rt_sym_ref(i);
      switch (kind) {
        case RT_NODE_ADD:
          ra = rt_sm_add(s, a1, a2);
          rb = rt_sm_node(s, RT_NODE_ADD, b1, b2, 0, self);
          break;
        case RT_NODE_MUL:
          if (is_zero(a1) && is_zero(a2)) ra = C(0.0);
          else if (is_zero(a2)) ra = rt_sm_mul(s, a1, b2);
          else if (is_zero(a1)) ra = rt_sm_mul(s, b1, a2);
          else fail = 1;
          if (!fail) rb = rt_sm_node(s, RT_NODE_MUL, b1, b2, 0, self);
          break;
        default:
          if (!is_zero(a2)) {
            fail = 1;
            break;
          }
          ra = rt_sm_div(s, a1, b2);
          rb = rt_sm_node(s, RT_NODE_DIV, b1, b2, 0, self);
          break;
      }
    }
    uint64_t at = res.n;
    if (rt_vec_push(&res, fail ? 0 : 1) || rt_vec_push(&res, ra) || rt_vec_push(&res, rb)) goto oom;
    s->nodes[i].stamp = gen;
    s->nodes[i].u.memo = at;
  }
  {
    const uint64_t *t = &res.v[s->nodes[rt_sym_index(e)].u.memo];
    ok = t[0] != 0;
    *a = t[1];
    *b = t[2];
  }
  goto out;
oom:
  rt_sym_oom(s);
out:
  rt_vec_free(&stack);
  rt_vec_free(&res);
  return ok;
}

/* ------------------------------------------------------------------ 11.2 Gaussian-Gaussian ------ */

static int gaussian_gaussian(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t mu0 = param(s, q, 0), v0 = param(s, q, 1), mu = param(s, c, 0), v = param(s, c, 1), a, b;
  if (dep(s, mu0, c) || dep(s, v0, c) || dep(s, v, q)) return 0;
  if (!affine(s, mu, q, &a, &b)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c), aa = rt_sm_mul(s, a, a);
  uint64_t mu01 = rt_sm_add(s, rt_sm_mul(s, a, mu0), b);
  uint64_t v01 = rt_sm_mul(s, aa, v0);
  uint64_t v02 = rt_sm_div(s, C(1.0), rt_sm_add(s, rt_sm_div(s, C(1.0), v01), rt_sm_div(s, C(1.0), v)));
  uint64_t mu02 = rt_sm_mul(s, rt_sm_add(s, rt_sm_div(s, mu01, v01), rt_sm_div(s, x, v)), v02);
  uint64_t post_mu = rt_sm_div(s, rt_sm_add(s, mu02, rt_sm_mul(s, C(-1.0), b)), a);
  uint64_t post_var = rt_sm_div(s, v02, aa);
  uint64_t marg_var = rt_sm_add(s, v01, v);
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_GAUSSIAN, mu01, marg_var, 0);
  set_dist(s, q, SIRENRT_FAM_GAUSSIAN, post_mu, post_var, 0);
  return 1;
}

/* ------------------------------------------------------------------ 11.4 Bernoulli-Bernoulli ---- */

static int bernoulli_bernoulli(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t q1 = param(s, q, 0), q2 = param(s, c, 0);
  if (!dep(s, q2, q) || dep(s, q1, c)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t q2t = rt_sym_subst(s, q2, q, 1.0), q2f = rt_sym_subst(s, q2, q, 0.0);
  uint64_t m = rt_sm_add(s, rt_sm_mul(s, q1, q2t), rt_sm_mul(s, rt_sm_sub(s, C(1.0), q1), q2f));
  uint64_t lik_t = rt_sym_subst(s, rt_sm_ite(s, x, q2, rt_sm_sub(s, C(1.0), q2)), q, 1.0);
  uint64_t post = rt_sm_div(s, rt_sm_mul(s, q1, lik_t), rt_sm_ite(s, x, m, rt_sm_sub(s, C(1.0), m)));
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_BERNOULLI, m, 0, 0);
  set_dist(s, q, SIRENRT_FAM_BERNOULLI, post, 0, 0);
  return 1;
}

/* ------------------------------------------------------------------ 11.5 Beta-Bernoulli/Binomial  */

static int beta_bernoulli(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t al = param(s, q, 0), be = param(s, q, 1);
  if (!is_rv(param(s, c, 0), q) || dep(s, al, c) || dep(s, be, c)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t marg = rt_sm_div(s, al, rt_sm_add(s, al, be));
  uint64_t pa = rt_sm_add(s, al, rt_sm_ite(s, x, C(1.0), C(0.0)));
  uint64_t pb = rt_sm_add(s, be, rt_sm_ite(s, x, C(0.0), C(1.0)));
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_BERNOULLI, marg, 0, 0);
  set_dist(s, q, SIRENRT_FAM_BETA, pa, pb, 0);
  return 1;
}

/* The original's preconditions: the number of trials and alpha constant (beta may be symbolic). */
static int beta_binomial(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t al = param(s, q, 0), be = param(s, q, 1), n = param(s, c, 0);
  if (!is_rv(param(s, c, 1), q) || !rt_sym_is_const(n) || !rt_sym_is_const(al) || dep(s, be, c)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t pa = rt_sm_add(s, al, x);
  uint64_t pb = rt_sm_add(s, be, rt_sm_sub(s, n, x));
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_BETA_BINOMIAL, n, al, be);
  set_dist(s, q, SIRENRT_FAM_BETA, pa, pb, 0);
  return 1;
}

/* ------------------------------------------------------------------ 11.6 Gamma-Poisson/Normal ---- */

/* The original's precondition: alpha a constant numpy-close to an integer.  The marginal's n is alpha
 * itself (the Gamma-Poisson mixture is exactly NegativeBinomial(alpha, beta/(1+beta)) for any real
 * alpha); the original's int(alpha) would turn 2.9999999 into 2. */
static int gamma_poisson(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t al = param(s, q, 0), be = param(s, q, 1);
  if (!is_rv(param(s, c, 0), q) || !rt_sym_is_const(al) || dep(s, be, c)) return 0;
  double k = round(D(al));
  if (!(fabs(D(al) - k) <= 1e-8 + 1e-5 * fabs(k))) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t p = rt_sm_div(s, be, rt_sm_add(s, C(1.0), be));
  uint64_t pa = rt_sm_add(s, al, x), pb = rt_sm_add(s, be, C(1.0));
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_NEGATIVE_BINOMIAL, al, p, 0);
  set_dist(s, q, SIRENRT_FAM_GAMMA, pa, pb, 0);
  return 1;
}

/* Known mean, unknown precision: the variance must be exactly Div(Const 1, RV tau). */
static int gamma_gaussian(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t al = param(s, q, 0), be = param(s, q, 1), mu = param(s, c, 0), v = param(s, c, 1);
  if (!rt_sym_is_const(mu) || !rt_sym_is_kind(s, v, RT_NODE_DIV)) return 0;
  const rt_sym_node *vn = rt_node(s, v);
  if (!(rt_sym_is_const(vn->w[0]) && D(vn->w[0]) == 1.0 && is_rv(vn->w[1], q))) return 0;
  if (dep(s, al, c) || dep(s, be, c)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t d = rt_sm_add(s, x, C(-D(mu)));
  uint64_t pa = rt_sm_add(s, al, C(0.5));
  uint64_t pb = rt_sm_add(s, be, rt_sm_mul(s, C(0.5), rt_sm_mul(s, d, d)));
  uint64_t scale2 = rt_sm_div(s, be, al), nu = rt_sm_mul(s, C(2.0), al);
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_STUDENT_T, mu, scale2, nu);
  set_dist(s, q, SIRENRT_FAM_GAMMA, pa, pb, 0);
  return 1;
}

/* ------------------------------------------------------------------ the table ------------------- */

/* ARCHITECTURE.md §11.8: BP keeps only the Gaussian pair; SSI and DS use them all. */
#define ALL (1 << RT_METHOD_SSI | 1 << RT_METHOD_DS | 1 << RT_METHOD_BP)
#define NOT_BP (1 << RT_METHOD_SSI | 1 << RT_METHOD_DS)
const rt_sym_rule rt_sym_rules[] = {
    {SIRENRT_FAM_GAUSSIAN, SIRENRT_FAM_GAUSSIAN, ALL, "gaussian-gaussian (affine mean)", gaussian_gaussian},
    {SIRENRT_FAM_BERNOULLI, SIRENRT_FAM_BERNOULLI, NOT_BP, "bernoulli-bernoulli", bernoulli_bernoulli},
    {SIRENRT_FAM_BETA, SIRENRT_FAM_BERNOULLI, NOT_BP, "beta-bernoulli", beta_bernoulli},
    {SIRENRT_FAM_BETA, SIRENRT_FAM_BINOMIAL, NOT_BP, "beta-binomial", beta_binomial},
    {SIRENRT_FAM_GAMMA, SIRENRT_FAM_POISSON, NOT_BP, "gamma-poisson", gamma_poisson},
    {SIRENRT_FAM_GAMMA, SIRENRT_FAM_GAUSSIAN, NOT_BP, "gamma-gaussian (precision)", gamma_gaussian},
};
const int rt_sym_n_rules = (int)(sizeof rt_sym_rules / sizeof rt_sym_rules[0]);

static int conjugate(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  int pf = s->nodes[q].family, cf = s->nodes[c].family;
  for (int i = 0; i < rt_sym_n_rules; i++)
    if (rt_sym_rules[i].parent == pf && rt_sym_rules[i].child == cf && (rt_sym_rules[i].methods >> s->method & 1))
      return rt_sym_rules[i].rule(s, q, c, apply);
  return 0;
}

int rt_sym_swap(rt_sym_state *s, uint32_t q, uint32_t c) { return conjugate(s, q, c, 1); }
int rt_sym_conjugate(rt_sym_state *s, uint32_t q, uint32_t c) { return conjugate(s, q, c, 0); }
