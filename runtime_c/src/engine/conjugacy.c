/* conjugacy.c — the conjugate pairs of ARCHITECTURE.md §11 as swaps of a parent q with its child c.  The
 * rules themselves (requirements, marginal, posterior, methods) are generated from
 * sirenc/conjugate_pairs.py into conjugacy_rules.h; this file holds what they call: the affine
 * decomposition (11.1), the dependence and shape tests, and the table's lookup.  The value of c
 * enters later through eval once c is a point mass (edge reversal). */
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

/* v is structurally 1 / RV r (ARCHITECTURE.md §11.6: as `1/tau` or `1./tau` is written). */
static int is_recip(rt_sym_state *s, uint64_t v, uint32_t r) {
  if (!rt_sym_is_kind(s, v, RT_NODE_DIV)) return 0;
  const rt_sym_node *vn = rt_node(s, v);
  return rt_sym_is_const(vn->w[0]) && D(vn->w[0]) == 1.0 && is_rv(vn->w[1], r);
}

/* ------------------------------------------------------------------ the rules ------------------- */

typedef struct rt_sym_rule {
  int32_t parent, child; /* SIRENRT_FAM_* */
  int32_t methods;       /* bit RT_METHOD_*: the methods that use it */
  int (*rule)(rt_sym_state *s, uint32_t q, uint32_t c, int apply); /* apply 0: the check alone */
} rt_sym_rule;

#include "conjugacy_rules.h"

static int conjugate(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {
  int pf = s->nodes[q].family, cf = s->nodes[c].family;
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
    if (rules[i].parent == pf && rules[i].child == cf && (rules[i].methods >> s->method & 1))
      return rules[i].rule(s, q, c, apply);
  return 0;
}

int rt_sym_swap(rt_sym_state *s, uint32_t q, uint32_t c) { return conjugate(s, q, c, 1); }
int rt_sym_conjugate(rt_sym_state *s, uint32_t q, uint32_t c) { return conjugate(s, q, c, 0); }
