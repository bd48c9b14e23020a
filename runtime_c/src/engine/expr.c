/* expr.c — symbolic expressions: the raw operators programs build (ARCHITECTURE.md §7.4), the smart
 * constructors and eval of ARCHITECTURE.md §6.3, value forcing (6.4) and expected values (10.4).
 *
 * The rules of 6.3 are reproduced one for one and in order: conjugacy detection (conjugacy.c) is
 * structural, so the shapes built here decide which variables stay symbolic. */
#include "sym_node.h"

#include <string.h>

#define C(x) rt_sym_word(x)
#define D(w) rt_sym_double(w)

static int is_zero(uint64_t w) { return rt_sym_is_const(w) && D(w) == 0.0; }
static int is_one(uint64_t w) { return rt_sym_is_const(w) && D(w) == 1.0; }
static int truthy(double v) { return v != 0.0 || isnan(v); }

/* The node built when no rule applies; `self` (a node reference, or a constant for none) is returned
 * instead when it already is that node, so that re-evaluating a simplified graph allocates nothing. */
static uint64_t make(rt_sym_state *s, int kind, uint64_t a, uint64_t b, uint64_t c, uint64_t self) {
  if (rt_sym_is_node(self)) {
    const rt_sym_node *n = rt_node(s, self);
    if (n->kind == kind && n->w[0] == a && n->w[1] == b && n->w[2] == c) return self;
  }
  return rt_sym_node_new(s, kind, a, b, c);
}

/* A constant first child of an Add/Mul node b: 1 with *k and *x (the other child) set. */
static int const_left(rt_sym_state *s, uint64_t b, int kind, uint64_t *k, uint64_t *x) {
  if (!rt_sym_is_kind(s, b, kind)) return 0;
  const rt_sym_node *n = rt_node(s, b);
  if (!rt_sym_is_const(n->w[0])) return 0;
  *k = n->w[0];
  *x = n->w[1];
  return 1;
}
static int const_right(rt_sym_state *s, uint64_t b, int kind, uint64_t *k, uint64_t *x) {
  if (!rt_sym_is_kind(s, b, kind)) return 0;
  const rt_sym_node *n = rt_node(s, b);
  if (!rt_sym_is_const(n->w[1])) return 0;
  *k = n->w[1];
  *x = n->w[0];
  return 1;
}

static uint64_t add_self(rt_sym_state *s, uint64_t a, uint64_t b, uint64_t self) {
  uint64_t k, x;
  int ca = rt_sym_is_const(a);
  if (ca && rt_sym_is_const(b)) return C(D(a) + D(b));                                  /* 1 */
  if (ca && const_left(s, b, RT_NODE_ADD, &k, &x)) return rt_sm_add(s, C(D(a) + D(k)), x);  /* 2 */
  if (ca && const_right(s, b, RT_NODE_ADD, &k, &x)) return rt_sm_add(s, C(D(a) + D(k)), x); /* 3 */
  if (const_left(s, a, RT_NODE_ADD, &k, &x)) return rt_sm_add(s, k, rt_sm_add(s, x, b));     /* 4 */
  if (is_zero(a)) return b;                                                               /* 5 */
  if (is_zero(b)) return a;                                                               /* 6 */
  return make(s, RT_NODE_ADD, a, b, 0, self);                                             /* 7 */
}

static uint64_t mul_self(rt_sym_state *s, uint64_t a, uint64_t b, uint64_t self) {
  uint64_t k, x;
  int ca = rt_sym_is_const(a);
  if (ca && rt_sym_is_const(b)) return C(D(a) * D(b));                                  /* 1 */
  if (ca && const_left(s, b, RT_NODE_MUL, &k, &x)) return rt_sm_mul(s, C(D(a) * D(k)), x);  /* 2 */
  if (ca && const_right(s, b, RT_NODE_MUL, &k, &x)) return rt_sm_mul(s, C(D(a) * D(k)), x); /* 3 */
  if (ca && const_left(s, b, RT_NODE_ADD, &k, &x))                                       /* 4 */
    return rt_sm_add(s, C(D(a) * D(k)), rt_sm_mul(s, a, x));
  if (is_zero(a)) return a;                                                               /* 5 */
  if (is_zero(b)) return b;                                                               /* 6 */
  return make(s, RT_NODE_MUL, a, b, 0, self);                                             /* 7 */
}

static uint64_t div_self(rt_sym_state *s, uint64_t a, uint64_t b, uint64_t self) {
  if (rt_sym_is_const(a) && rt_sym_is_const(b)) return C(D(a) / D(b)); /* IEEE: x/0 is inf or nan */
  if (is_one(b)) return a;
  return make(s, RT_NODE_DIV, a, b, 0, self);
}

static uint64_t ite_self(rt_sym_state *s, uint64_t c, uint64_t t, uint64_t f, uint64_t self) {
  if (rt_sym_is_const(c)) return truthy(D(c)) ? t : f;
  return make(s, RT_NODE_ITE, c, t, f, self);
}

static uint64_t cmp_self(rt_sym_state *s, int kind, uint64_t a, uint64_t b, uint64_t self) {
  if (rt_sym_is_const(a) && rt_sym_is_const(b))
    return C((kind == RT_NODE_EQ ? D(a) == D(b) : D(a) < D(b)) ? 1.0 : 0.0);
  return make(s, kind, a, b, 0, self);
}

uint64_t rt_sm_add(rt_sym_state *s, uint64_t a, uint64_t b) { return add_self(s, a, b, 0); }
uint64_t rt_sm_mul(rt_sym_state *s, uint64_t a, uint64_t b) { return mul_self(s, a, b, 0); }
uint64_t rt_sm_div(rt_sym_state *s, uint64_t a, uint64_t b) { return div_self(s, a, b, 0); }
uint64_t rt_sm_ite(rt_sym_state *s, uint64_t c, uint64_t t, uint64_t f) { return ite_self(s, c, t, f, 0); }
uint64_t rt_sm_eq(rt_sym_state *s, uint64_t a, uint64_t b) { return cmp_self(s, RT_NODE_EQ, a, b, 0); }
uint64_t rt_sm_lt(rt_sym_state *s, uint64_t a, uint64_t b) { return cmp_self(s, RT_NODE_LT, a, b, 0); }
uint64_t rt_sm_sub(rt_sym_state *s, uint64_t a, uint64_t b) { return rt_sm_add(s, a, rt_sm_mul(s, C(-1.0), b)); }

uint64_t rt_sm_node(rt_sym_state *s, int kind, uint64_t a, uint64_t b, uint64_t c, uint64_t self) {
  switch (kind) {
    case RT_NODE_ADD: return add_self(s, a, b, self);
    case RT_NODE_MUL: return mul_self(s, a, b, self);
    case RT_NODE_DIV: return div_self(s, a, b, self);
    case RT_NODE_ITE: return ite_self(s, a, b, c, self);
    default: return cmp_self(s, kind, a, b, self);
  }
}

/* ------------------------------------------------------------------ raw operators -------------- */

/* Two constants fold at once (what eval would do first); anything else is a raw node in the
 * particle's own state. */
static uint64_t raw(sirenrt_ctx *ctx, int kind, uint64_t a, uint64_t b, uint64_t c) {
  rt_sym_state *s = rt_sym_own(ctx);
  if (!s) return C(NAN);
  if (!rt_sym_valid(s, a) || !rt_sym_valid(s, b) || !rt_sym_valid(s, c)) {
    rt_sym_bad_word(ctx, -1);
    return C(NAN);
  }
  uint64_t r = rt_sym_node_new(s, kind, a, b, c);
  rt_sym_check_oom(ctx, s, -1);
  return r;
}

uint64_t rt_sym_binop(sirenrt_ctx *ctx, int op, uint64_t a, uint64_t b) {
  int consts = rt_sym_is_const(a) && rt_sym_is_const(b);
  switch (op) {
    case RT_SYM_ADD: return consts ? C(D(a) + D(b)) : raw(ctx, RT_NODE_ADD, a, b, 0);
    case RT_SYM_SUB: return rt_sym_binop(ctx, RT_SYM_ADD, a, rt_sym_neg(ctx, b));
    case RT_SYM_MUL: return consts ? C(D(a) * D(b)) : raw(ctx, RT_NODE_MUL, a, b, 0);
    case RT_SYM_DIV: return consts ? C(D(a) / D(b)) : raw(ctx, RT_NODE_DIV, a, b, 0);
    case RT_SYM_EQ: return consts ? C(D(a) == D(b) ? 1.0 : 0.0) : raw(ctx, RT_NODE_EQ, a, b, 0);
    case RT_SYM_LT: return consts ? C(D(a) < D(b) ? 1.0 : 0.0) : raw(ctx, RT_NODE_LT, a, b, 0);
    default: rt_fail(ctx, -1, "internal error: symbolic operator %d", op); return C(NAN);
  }
}

uint64_t rt_sym_neg(sirenrt_ctx *ctx, uint64_t a) { return rt_sym_binop(ctx, RT_SYM_MUL, C(-1.0), a); }

uint64_t rt_sym_ite(sirenrt_ctx *ctx, uint64_t c, uint64_t t, uint64_t f) {
  if (rt_sym_is_const(c)) return truthy(D(c)) ? t : f;
  return raw(ctx, RT_NODE_ITE, c, t, f);
}

/* ------------------------------------------------------------------ eval ----------------------- */

/* What a node evaluated to, once its walk is done: an RV stands for itself (or its point mass); an
 * expression node and a delta RV keep their result in memo. */
static uint64_t result_of(rt_sym_state *s, uint64_t w) {
  if (!rt_sym_is_node(w)) return w;
  const rt_sym_node *n = rt_node(s, w);
  if (n->kind == RT_NODE_RV) {
    if (n->rv_state != RT_RV_SYMBOLIC) return C(n->u.value);
    return n->family == SIRENRT_FAM_DELTA ? n->u.memo : w;
  }
  return n->kind >= RT_NODE_ADD && n->kind <= RT_NODE_LT ? n->u.memo : w;
}

/* A post-order walk with an explicit stack: a chain of posteriors is as deep as the run is long.
 * Every node is simplified once per walk (stamp), so shared subgraphs cost nothing extra; an RV's
 * parameters are replaced by their simplified forms (ARCHITECTURE.md §6.3's side effect of eval).  Stack
 * entries are node indices, bit 32 set for the second visit (the children are done). */
static uint64_t eval_walk(rt_sym_state *s, uint64_t w, uint32_t gen) {
  if (!rt_sym_is_node(w)) return w;
  const uint64_t done = UINT64_C(1) << 32;
  uint64_t buf[64];
  rt_vec stack = RT_VEC_ON(buf);
#define PUSH(x)                      \
  do {                               \
    if (rt_vec_push(&stack, (x))) {  \
      rt_sym_oom(s);                    \
      goto out;                      \
    }                                \
  } while (0)
  PUSH(rt_sym_index(w));
  while (stack.n) {
    uint64_t e = stack.v[--stack.n];
    uint32_t i = (uint32_t)e;
    rt_sym_node *n = &s->nodes[i];
    int kind = n->kind;
    if (kind == RT_NODE_RV) {
      if (n->rv_state != RT_RV_SYMBOLIC) continue;
      int np = n->family == SIRENRT_FAM_DELTA ? 1 : rt_sym_expr_params(n->family);
      if (e & done) {
        if (n->family == SIRENRT_FAM_DELTA) {
          n->u.memo = result_of(s, n->w[0]);
        } else {
          for (int k = 0; k < np; k++) {
            uint64_t r = result_of(s, s->nodes[i].w[k]);
            s->nodes[i].w[k] = r;
          }
        }
        continue;
      }
      if (n->stamp == gen) continue;
      n->stamp = gen;
      if (n->family == SIRENRT_FAM_DELTA) n->u.memo = w; /* only a cycle would read it before it is set */
      uint64_t ch[3] = {n->w[0], n->w[1], n->w[2]};
      PUSH(e | done);
      for (int k = np; k-- > 0;)
        if (rt_sym_is_node(ch[k])) PUSH(rt_sym_index(ch[k]));
      continue;
    }
    if (kind < RT_NODE_ADD || kind > RT_NODE_LT) continue;
    uint64_t a = n->w[0], b = n->w[1], c = n->w[2];
    if (e & done) {
      uint64_t r = rt_sm_node(s, kind, result_of(s, a), result_of(s, b), kind == RT_NODE_ITE ? result_of(s, c) : c,
                         rt_sym_ref(i));
      s->nodes[i].u.memo = r;
      continue;
    }
    if (n->stamp == gen) continue;
    n->stamp = gen;
    n->u.memo = rt_sym_ref(i);
    PUSH(e | done);
    if (kind == RT_NODE_ITE && rt_sym_is_node(c)) PUSH(rt_sym_index(c));
    if (rt_sym_is_node(b)) PUSH(rt_sym_index(b));
    if (rt_sym_is_node(a)) PUSH(rt_sym_index(a));
  }
#undef PUSH
out:
  rt_vec_free(&stack);
  return result_of(s, w);
}

uint64_t rt_sym_eval(rt_sym_state *s, uint64_t w) {
  if (!rt_sym_is_node(w)) return w;
  return eval_walk(s, w, rt_sym_gen(s));
}

uint64_t rt_sym_simplify(sirenrt_ctx *ctx, uint64_t w) {
  if (!rt_sym_is_node(w)) return w;
  rt_sym_state *s = rt_sym_own(ctx);
  if (!s) return C(NAN);
  if (!rt_sym_valid(s, w)) {
    rt_sym_bad_word(ctx, -1);
    return C(NAN);
  }
  w = rt_sym_eval(s, w);
  return rt_sym_check_oom(ctx, s, -1) ? C(NAN) : w;
}

void rt_sym_eval_params(rt_sym_state *s, uint32_t rv) {
  uint32_t gen = rt_sym_gen(s);
  int np = rt_sym_expr_params(s->nodes[rv].family);
  s->nodes[rv].stamp = gen; /* a cycle back to rv would stop here */
  for (int k = 0; k < np; k++) {
    uint64_t r = eval_walk(s, s->nodes[rv].w[k], gen);
    s->nodes[rv].w[k] = r;
  }
}

/* Each shared subexpression is rewritten once (stamp, memo): posteriors repeat their parents' terms. */
static uint64_t subst_rec(rt_sym_state *s, uint64_t e, uint32_t p, double v, uint32_t gen) {
  if (!rt_sym_is_node(e)) return e;
  rt_sym_node *n = rt_node(s, e);
  if (n->kind == RT_NODE_RV) return rt_sym_index(e) == p ? C(v) : e;
  if (n->kind < RT_NODE_ADD || n->kind > RT_NODE_LT) return e;
  if (n->stamp == gen) return n->u.memo;
  int kind = n->kind;
  uint64_t a = n->w[0], b = n->w[1], c = n->w[2];
  a = subst_rec(s, a, p, v, gen);
  b = subst_rec(s, b, p, v, gen);
  if (kind == RT_NODE_ITE) c = subst_rec(s, c, p, v, gen);
  uint64_t r = rt_sm_node(s, kind, a, b, c, e);
  s->nodes[rt_sym_index(e)].stamp = gen;
  s->nodes[rt_sym_index(e)].u.memo = r;
  return r;
}

uint64_t rt_sym_subst(rt_sym_state *s, uint64_t e, uint32_t p, double v) {
  return subst_rec(s, e, p, v, rt_sym_gen(s));
}

/* Walks e's expression nodes with an explicit stack, calling visit on each RV left to right; visit
 * returns nonzero to stop.  -1 out of memory, 1 stopped, 0 done.  A shared subexpression is walked
 * once (posteriors repeat their parents' terms: walking trees would be exponential in the worst
 * case), so an RV may be visited more than once only through distinct nodes.  Only expression nodes
 * are stamped: the walks over RVs that call this one stamp RVs with their own generation. */
static int each_rv(rt_sym_state *s, uint64_t e, int (*visit)(void *arg, rt_sym_state *s, uint64_t rv),
                   void *arg) {
  if (!rt_sym_is_node(e)) return 0;
  /* A parameter that is a variable itself (a random walk's mean) needs no stack or generation. */
  if (rt_node(s, e)->kind == RT_NODE_RV) return rt_sym_is_free_rv(s, e) ? visit(arg, s, e) : 0;
  uint64_t buf[32];
  rt_vec stack = RT_VEC_ON(buf);
  int r = 0;
  uint32_t gen = rt_sym_gen(s);
  if (rt_vec_push(&stack, e)) return -1;
  while (stack.n && !r) {
    uint64_t w = stack.v[--stack.n];
    rt_sym_node *n = rt_node(s, w);
    if (n->kind == RT_NODE_RV) {
      if (rt_sym_is_free_rv(s, w)) r = visit(arg, s, w);
      continue;
    }
    if (n->kind < RT_NODE_ADD || n->kind > RT_NODE_LT || n->stamp == gen) continue;
    n->stamp = gen;
    int nc = n->kind == RT_NODE_ITE ? 3 : 2;
    uint64_t ch[3] = {n->w[0], n->w[1], n->w[2]};
    for (int k = nc; k-- > 0;) /* pushed right to left: popped left to right */
      if (rt_sym_is_node(ch[k]) && rt_vec_push(&stack, ch[k])) r = -1;
  }
  rt_vec_free(&stack);
  return r;
}

static int visit_occurs(void *arg, rt_sym_state *s, uint64_t rv) {
  (void)s;
  return rt_sym_index(rv) == *(uint32_t *)arg;
}

int rt_sym_occurs(rt_sym_state *s, uint64_t e, uint32_t p) { return each_rv(s, e, visit_occurs, &p); }

static int visit_collect(void *arg, rt_sym_state *s, uint64_t rv) {
  (void)s;
  return rt_vec_push(arg, rt_sym_index(rv)) ? -1 : 0;
}

int rt_sym_rvs(rt_sym_state *s, uint64_t e, rt_vec *out) { return each_rv(s, e, visit_collect, out) < 0 ? -1 : 0; }

/* ------------------------------------------------------------------ value_expr, mean ------------ */

/* value_expr (6.4) and mean (10.4) are the same walk over an expression with different leaves and Ite:
 *   FORCE: an RV is value()d (every occurrence on its own: a sampled one gives its value again); Ite
 *          forces its condition, then only the branch it picks.
 *   MEAN:  an RV is marginalized and gives its distribution's mean; Mul and Div of means (exact only
 *          for independent factors, as the original computes them); Ite is m(c)m(t) + (1-m(c))m(f);
 *          Eq/Lt compare the means.
 * Left to right, post-order, on explicit stacks: sums built by folds are as deep as they are long.
 * Tasks are (word, phase) pairs: phase 1 combines the values its children left on the value stack
 * (a forced Ite: picks its branch), phase 2 records a forced Ite's value.  Each expression node's
 * value is kept for the rest of the walk (stamp, memo): programs build DAGs whose trees are
 * exponential (a position chosen by an ite of the previous one, step after step), and every
 * occurrence of a node has the same value once the first has forced or marginalised its RVs. */
enum { FOLD_FORCE, FOLD_MEAN };

/* The nodes array may have moved (forcing and marginalising allocate): index it afresh. */
static void remember(rt_sym_state *s, uint64_t e, uint32_t gen, uint64_t value) {
  rt_sym_node *n = &s->nodes[rt_sym_index(e)];
  n->stamp = gen;
  n->u.memo = value;
}

static int fold(sirenrt_ctx *ctx, uint64_t w, int mode, double *out, int32_t site) {
  uint64_t tb[64], vb[32];
  rt_vec tasks = RT_VEC_ON(tb), vals = RT_VEC_ON(vb);
  int rc = -1;
#define TASK(word, phase)                                                      \
  do {                                                                         \
    if (rt_vec_push(&tasks, (word)) || rt_vec_push(&tasks, (phase))) goto oom; \
  } while (0)
#define VAL(x)                                          \
  do {                                                  \
    if (rt_vec_push(&vals, rt_sym_word(x))) goto oom;   \
  } while (0)
#define POP() D(vals.v[--vals.n])
  uint32_t gen = rt_sym_gen(ctx->sym);
  TASK(w, 0);
  while (tasks.n) {
    uint64_t phase = tasks.v[--tasks.n], e = tasks.v[--tasks.n];
    if (!rt_sym_is_node(e)) {
      VAL(D(e));
      continue;
    }
    const rt_sym_node *n = rt_node(ctx->sym, e);
    int kind = n->kind;
    uint64_t a = n->w[0], b = n->w[1], c = n->w[2];
    if (kind == RT_NODE_RV) {
      uint32_t i = rt_sym_index(e);
      double v;
      if (mode == FOLD_FORCE) {
        if (rt_rv_value(ctx, i, &v, site)) goto done;
      } else if (n->rv_state != RT_RV_SYMBOLIC) {
        v = n->u.value;
      } else if (n->family == SIRENRT_FAM_DELTA) { /* stands for its expression */
        uint64_t x = rt_sym_eval(ctx->sym, e);
        if (rt_sym_check_oom(ctx, ctx->sym, site)) goto done;
        TASK(x, 0);
        continue;
      } else {
        if (rt_rv_marginalize(ctx, i, site)) goto done;
        const rt_sym_node *m = &ctx->sym->nodes[i];
        if (m->rv_state != RT_RV_SYMBOLIC) v = m->u.value;
        else if (rt_rv_root_mean(ctx, i, &v, site)) goto done;
      }
      VAL(v);
      continue;
    }
    if (kind < RT_NODE_ADD || kind > RT_NODE_LT) {
      rt_fail(ctx, site, "internal error: a symbolic node of kind %d in an expression", kind);
      goto done;
    }
    int lazy = kind == RT_NODE_ITE && mode == FOLD_FORCE;
    if (phase == 0 && n->stamp == gen) {
      VAL(D(n->u.memo));
      continue;
    }
    if (phase == 2) {
      remember(ctx->sym, e, gen, vals.v[vals.n - 1]);
      continue;
    }
    if (phase == 0) {
      TASK(e, 1);
      if (kind == RT_NODE_ITE && !lazy) TASK(c, 0);
      if (!lazy) TASK(b, 0);
      TASK(a, 0);
      continue;
    }
    if (lazy) { /* the branch's value becomes the Ite's */
      uint64_t branch = truthy(POP()) ? b : c;
      TASK(e, 2);
      TASK(branch, 0);
      continue;
    }
    double z = kind == RT_NODE_ITE ? POP() : 0.0, y = POP(), x = POP(), r;
    switch (kind) {
      case RT_NODE_ADD: r = x + y; break;
      case RT_NODE_MUL: r = x * y; break;
      case RT_NODE_DIV: r = x / y; break;
      case RT_NODE_ITE: r = x * y + (1.0 - x) * z; break;
      case RT_NODE_EQ: r = x == y ? 1.0 : 0.0; break;
      default: r = x < y ? 1.0 : 0.0; break;
    }
    remember(ctx->sym, e, gen, rt_sym_word(r));
    VAL(r);
  }
  *out = POP();
  rc = 0;
  goto done;
oom:
  rt_fail(ctx, site, "out of memory");
done:
#undef POP
#undef VAL
#undef TASK
  rt_vec_free(&tasks);
  rt_vec_free(&vals);
  return rc;
}

int rt_sym_value(sirenrt_ctx *ctx, uint64_t w, double *out, int32_t site) {
  if (!rt_sym_is_node(w)) {
    *out = D(w);
    return 0;
  }
  rt_sym_state *s = rt_sym_own(ctx);
  if (!s) return -1;
  if (!rt_sym_valid(s, w)) return rt_sym_bad_word(ctx, site);
  return fold(ctx, w, FOLD_FORCE, out, site);
}

int rt_sym_mean(sirenrt_ctx *ctx, uint64_t w, double *out, int32_t site) {
  if (!rt_sym_is_node(w)) {
    *out = D(w);
    return 0;
  }
  rt_sym_state *s = rt_sym_own(ctx);
  if (!s) return -1;
  if (!rt_sym_valid(s, w)) return rt_sym_bad_word(ctx, site);
  w = rt_sym_eval(s, w);
  if (rt_sym_check_oom(ctx, s, site)) return -1;
  return fold(ctx, w, FOLD_MEAN, out, site);
}

/* ------------------------------------------------------------------ posterior atoms ------------ */

/* e as scale * RV + shift with one symbolic variable: 1 with *rv (UINT32_MAX: e is a constant);
 * 0 for any other shape (two variables, a product of them, a comparison, an ite). */
static int affine_of(rt_sym_state *s, uint64_t e, uint32_t *rv, double *scale, double *shift, int depth) {
  if (!rt_sym_is_node(e)) {
    *rv = UINT32_MAX;
    *scale = 0.0;
    *shift = D(e);
    return 1;
  }
  if (depth > 64) return 0; /* deeper sums are not worth the stack: their mean alone is reported */
  const rt_sym_node *n = rt_node(s, e);
  if (n->kind == RT_NODE_RV) {
    if (n->rv_state != RT_RV_SYMBOLIC) {
      *rv = UINT32_MAX;
      *scale = 0.0;
      *shift = n->u.value;
    } else {
      *rv = rt_sym_index(e);
      *scale = 1.0;
      *shift = 0.0;
    }
    return 1;
  }
  if (n->kind != RT_NODE_ADD && n->kind != RT_NODE_MUL && n->kind != RT_NODE_DIV) return 0;
  uint64_t a = n->w[0], b = n->w[1];
  int kind = n->kind;
  uint32_t ra, rb;
  double sa, ha, sb, hb;
  if (!affine_of(s, a, &ra, &sa, &ha, depth + 1) || !affine_of(s, b, &rb, &sb, &hb, depth + 1)) return 0;
  if (kind == RT_NODE_ADD) {
    if (ra != UINT32_MAX && rb != UINT32_MAX && ra != rb) return 0;
    *rv = ra != UINT32_MAX ? ra : rb;
    *scale = sa + sb;
    *shift = ha + hb;
    return 1;
  }
  if (rb != UINT32_MAX) { /* the divisor or the right factor depends on a variable */
    if (kind == RT_NODE_DIV || ra != UINT32_MAX) return 0;
    *rv = rb;
    *scale = ha * sb;
    *shift = ha * hb;
    return 1;
  }
  *rv = ra;
  *scale = kind == RT_NODE_MUL ? sa * hb : sa / hb;
  *shift = kind == RT_NODE_MUL ? ha * hb : ha / hb;
  return 1;
}

int rt_sym_atom(sirenrt_ctx *ctx, uint64_t w, double atom[SIRENRT_ATOM_WORDS], int32_t site) {
  double mean;
  if (rt_sym_mean(ctx, w, &mean, site)) return -1;
  atom[0] = atom[6] = mean;
  atom[1] = SIRENRT_ATOM_POINT;
  atom[2] = atom[3] = atom[4] = atom[5] = 0.0;
  if (!rt_sym_is_node(w)) return 0;
  /* The mean made the expression's variables roots (SSI hoists, DS grafts): read them as they are. */
  rt_sym_state *s = ctx->sym;
  uint64_t e = rt_sym_eval(s, w);
  if (rt_sym_check_oom(ctx, s, site)) return -1;
  uint32_t rv;
  double scale, shift;
  if (!affine_of(s, e, &rv, &scale, &shift, 0)) {
    atom[1] = SIRENRT_ATOM_MEAN;
    return 0;
  }
  if (rv == UINT32_MAX || scale == 0.0) return 0;
  const rt_sym_node *n = &s->nodes[rv];
  if (n->family == SIRENRT_FAM_DELTA || n->family == SIRENRT_FAM_CATEGORICAL) {
    atom[1] = SIRENRT_ATOM_MEAN; /* an expression in disguise; probabilities the atom cannot carry */
    return 0;
  }
  if (rt_rv_marginalize(ctx, rv, site)) return -1;
  n = &ctx->sym->nodes[rv];
  if (n->rv_state != RT_RV_SYMBOLIC) return 0; /* DS drew it on the way: a point, as the mean says */
  int family;
  double p[3];
  if (rt_rv_root_params(ctx, rv, &family, p, site)) return -1;
  atom[1] = family;
  atom[2] = p[0];
  atom[3] = p[1];
  atom[4] = p[2];
  atom[5] = scale;
  atom[6] = shift;
  return 0;
}
