/* conjugacy_rules.h — the conjugate pairs the runtime swaps (ARCHITECTURE.md §11).
 * GENERATED from sirenc/conjugate_pairs.py by `python -m sirenc.runtime.conjugacy_source`; do not edit.
 * Included by conjugacy.c alone: each rule checks its requirements (0: no swap), then with apply
 * gives the child c its marginal and the parent q its posterior given RV c (-1: out of memory). */
#ifndef RT_CONJUGACY_RULES_H
#define RT_CONJUGACY_RULES_H

static int near_int(double v) {
  double k = round(v);
  return fabs(v - k) <= 1e-08 + 1e-05 * fabs(k);
}

/* gaussian-gaussian */
static int gaussian_gaussian(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t mu0 = param(s, q, 0), v0 = param(s, q, 1), mu = param(s, c, 0), v = param(s, c, 1), a, b;
  if (dep(s, mu0, c)) return 0;
  if (dep(s, v0, c)) return 0;
  if (dep(s, v, q)) return 0;
  if (!affine(s, mu, q, &a, &b)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t t0 = rt_sm_mul(s, a, a);
  uint64_t t1 = rt_sm_mul(s, a, mu0);
  uint64_t t2 = rt_sm_add(s, t1, b);
  uint64_t t3 = rt_sm_mul(s, t0, v0);
  uint64_t t4 = rt_sm_div(s, C(1.0), t3);
  uint64_t t5 = rt_sm_div(s, C(1.0), v);
  uint64_t t6 = rt_sm_add(s, t4, t5);
  uint64_t t7 = rt_sm_div(s, C(1.0), t6);
  uint64_t t8 = rt_sm_div(s, t2, t3);
  uint64_t t9 = rt_sm_div(s, x, v);
  uint64_t t10 = rt_sm_add(s, t8, t9);
  uint64_t t11 = rt_sm_mul(s, t10, t7);
  uint64_t t12 = rt_sm_add(s, t3, v);
  uint64_t t13 = rt_sm_sub(s, t11, b);
  uint64_t t14 = rt_sm_div(s, t13, a);
  uint64_t t15 = rt_sm_div(s, t7, t0);
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_GAUSSIAN, t2, t12, 0);
  set_dist(s, q, SIRENRT_FAM_GAUSSIAN, t14, t15, 0);
  return 1;
}

/* bernoulli-bernoulli */
static int bernoulli_bernoulli(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t q1 = param(s, q, 0), q2 = param(s, c, 0);
  if (!dep(s, q2, q)) return 0;
  if (dep(s, q1, c)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t t0 = rt_sym_subst(s, q2, q, 1.0);
  uint64_t t1 = rt_sym_subst(s, q2, q, 0.0);
  uint64_t t2 = rt_sm_mul(s, q1, t0);
  uint64_t t3 = rt_sm_sub(s, C(1.0), q1);
  uint64_t t4 = rt_sm_mul(s, t3, t1);
  uint64_t t5 = rt_sm_add(s, t2, t4);
  uint64_t t6 = rt_sm_sub(s, C(1.0), q2);
  uint64_t t7 = rt_sm_ite(s, x, q2, t6);
  uint64_t t8 = rt_sym_subst(s, t7, q, 1.0);
  uint64_t t9 = rt_sm_mul(s, q1, t8);
  uint64_t t10 = rt_sm_sub(s, C(1.0), t5);
  uint64_t t11 = rt_sm_ite(s, x, t5, t10);
  uint64_t t12 = rt_sm_div(s, t9, t11);
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_BERNOULLI, t5, 0, 0);
  set_dist(s, q, SIRENRT_FAM_BERNOULLI, t12, 0, 0);
  return 1;
}

/* beta-bernoulli */
static int beta_bernoulli(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t al = param(s, q, 0), be = param(s, q, 1), p = param(s, c, 0);
  if (!is_rv(p, q)) return 0;
  if (dep(s, al, c)) return 0;
  if (dep(s, be, c)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t t0 = rt_sm_add(s, al, be);
  uint64_t t1 = rt_sm_div(s, al, t0);
  uint64_t t2 = rt_sm_ite(s, x, C(1.0), C(0.0));
  uint64_t t3 = rt_sm_add(s, al, t2);
  uint64_t t4 = rt_sm_ite(s, x, C(0.0), C(1.0));
  uint64_t t5 = rt_sm_add(s, be, t4);
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_BERNOULLI, t1, 0, 0);
  set_dist(s, q, SIRENRT_FAM_BETA, t3, t5, 0);
  return 1;
}

/* beta-binomial */
static int beta_binomial(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t al = param(s, q, 0), be = param(s, q, 1), n = param(s, c, 0), p = param(s, c, 1);
  if (!is_rv(p, q)) return 0;
  if (!rt_sym_is_const(n)) return 0;
  if (!rt_sym_is_const(al)) return 0;
  if (dep(s, be, c)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t t0 = rt_sm_add(s, al, x);
  uint64_t t1 = rt_sm_sub(s, n, x);
  uint64_t t2 = rt_sm_add(s, be, t1);
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_BETA_BINOMIAL, n, al, be);
  set_dist(s, q, SIRENRT_FAM_BETA, t0, t2, 0);
  return 1;
}

/* gamma-poisson */
static int gamma_poisson(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t al = param(s, q, 0), be = param(s, q, 1), l = param(s, c, 0);
  if (!is_rv(l, q)) return 0;
  if (!rt_sym_is_const(al) || !near_int(D(al))) return 0;
  if (dep(s, be, c)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t t0 = rt_sm_add(s, C(1.0), be);
  uint64_t t1 = rt_sm_div(s, be, t0);
  uint64_t t2 = rt_sm_add(s, al, x);
  uint64_t t3 = rt_sm_add(s, be, C(1.0));
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_NEGATIVE_BINOMIAL, al, t1, 0);
  set_dist(s, q, SIRENRT_FAM_GAMMA, t2, t3, 0);
  return 1;
}

/* gamma-gaussian */
static int gamma_gaussian(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  uint64_t al = param(s, q, 0), be = param(s, q, 1), mu = param(s, c, 0), v = param(s, c, 1);
  if (!rt_sym_is_const(mu)) return 0;
  if (!is_recip(s, v, q)) return 0;
  if (dep(s, al, c)) return 0;
  if (dep(s, be, c)) return 0;
  if (!apply) return 1;
  uint64_t x = rt_sym_ref(c);
  uint64_t t0 = rt_sm_sub(s, x, mu);
  uint64_t t1 = rt_sm_div(s, be, al);
  uint64_t t2 = rt_sm_mul(s, C(2.0), al);
  uint64_t t3 = rt_sm_add(s, al, C(0.5));
  uint64_t t4 = rt_sm_mul(s, t0, t0);
  uint64_t t5 = rt_sm_mul(s, C(0.5), t4);
  uint64_t t6 = rt_sm_add(s, be, t5);
  if (s->oom) return -1;
  set_dist(s, c, SIRENRT_FAM_STUDENT_T, mu, t1, t2);
  set_dist(s, q, SIRENRT_FAM_GAMMA, t3, t6, 0);
  return 1;
}

/* ARCHITECTURE.md §11.8: the methods that swap each pair, bit RT_METHOD_*. */
static const rt_sym_rule rules[] = {
    {SIRENRT_FAM_GAUSSIAN, SIRENRT_FAM_GAUSSIAN, 1 << RT_METHOD_SSI | 1 << RT_METHOD_DS | 1 << RT_METHOD_BP, gaussian_gaussian}, /* gaussian-gaussian */
    {SIRENRT_FAM_BERNOULLI, SIRENRT_FAM_BERNOULLI, 1 << RT_METHOD_SSI | 1 << RT_METHOD_DS, bernoulli_bernoulli}, /* bernoulli-bernoulli */
    {SIRENRT_FAM_BETA, SIRENRT_FAM_BERNOULLI, 1 << RT_METHOD_SSI | 1 << RT_METHOD_DS, beta_bernoulli}, /* beta-bernoulli */
    {SIRENRT_FAM_BETA, SIRENRT_FAM_BINOMIAL, 1 << RT_METHOD_SSI | 1 << RT_METHOD_DS, beta_binomial}, /* beta-binomial */
    {SIRENRT_FAM_GAMMA, SIRENRT_FAM_POISSON, 1 << RT_METHOD_SSI | 1 << RT_METHOD_DS, gamma_poisson}, /* gamma-poisson */
    {SIRENRT_FAM_GAMMA, SIRENRT_FAM_GAUSSIAN, 1 << RT_METHOD_SSI | 1 << RT_METHOD_DS, gamma_gaussian}, /* gamma-gaussian */
};

#endif /* RT_CONJUGACY_RULES_H */
