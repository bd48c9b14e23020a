/* ds.c — delayed sampling (ARCHITECTURE.md §13) on the engine's nodes, and the assume that BP shares with it (14.1).
 *
 * DS's node states are read off an RV entry:
 *   Realized      a point mass (rv_state != RT_RV_SYMBOLIC);
 *   Initialized   flag RT_DS_INIT: the distribution is the conditional given the one free RV it names,
 *                 the canonical parent.  Once that parent is realised, eval substitutes its value and
 *                 the entry is what do_marginalize makes of it then, Marginalized(None);
 *   Marginalized  otherwise: the distribution is the variable's marginal.
 * The edge of a Marginalized child is kept on the parent's side.  When do_marginalize makes c the
 * marginal child of q, the rule (rt_sym_swap) gives c its marginal and q its posterior given RV c; q
 * keeps its marginal and holds that posterior in a POST node (flag RT_DS_PENDING).  realize(c)'s
 * update of q is applied when q is next used (settle): the posterior, evaluated with c's value, is
 * the one the rule gives from q's distribution at realize time, because q cannot change while it has a
 * marginal child (grafting q prunes the child first).
 *
 * Only parents point at children, never the reverse, so the collector frees what a filter forgets (a
 * random walk's x_{t-1} once only x_t is held), and the original's children lists are not needed: realize's
 * do_marginalize of the Initialized children is what eval does lazily, and the one marginal child is
 * the POST node's.  Chains of Initialized parents and of marginal children are as long as a run:
 * every walk here is a loop, never C recursion.
 *
 * Divergence (docs/symbolic-values.md): ARCHITECTURE.md §13.4's marginalize, for an expectation, of an Initialized
 * variable whose Marginalized parent already has a marginal child gives that parent a second marginal
 * child; here the first is pruned (sampled) first, as graft does, so marginalize is graft. */
#include "sym_node.h"

static int has_flag(rt_sym_state *s, uint32_t rv, int flag) { return (s->nodes[rv].flags & flag) != 0; }

/* q's marginal child, or RT_SYM_NONE. */
static uint32_t marginal_child(rt_sym_state *s, uint32_t q) {
  if (!has_flag(s, q, RT_DS_PENDING)) return RT_SYM_NONE;
  uint32_t c = rt_sym_index(s->nodes[rt_sym_index(s->nodes[q].u.memo)].u.memo);
  return s->nodes[c].rv_state == RT_RV_SYMBOLIC ? c : RT_SYM_NONE;
}

/* realize(c)'s update of q (13.3), once q's marginal child c has been realised. */
static void settle(rt_sym_state *s, uint32_t q) {
  if (!has_flag(s, q, RT_DS_PENDING) || marginal_child(s, q) != RT_SYM_NONE) return;
  uint32_t p = rt_sym_index(s->nodes[q].u.memo);
  uint64_t w[3];
  for (int k = 0; k < 3; k++) w[k] = rt_sym_eval(s, s->nodes[p].w[k]);
  rt_sym_node *n = &s->nodes[q];
  n->family = s->nodes[p].family;
  for (int k = 0; k < 3; k++) n->w[k] = w[k];
  n->flags &= (uint8_t)~RT_DS_PENDING;
  n->u.value = 0.0;
}

/* The canonical parent an Initialized rv names (its parameters evaluated first), or RT_SYM_NONE when
 * it names none any more: then rv is Marginalized(None).  -1 out of memory. */
static int64_t init_parent(rt_sym_state *s, uint32_t rv) {
  uint32_t lone = 0;
  if (rt_sym_direct_parent(s, rv, &lone) == 1) { /* eval would leave it, evaluating q's parameters */
    rt_sym_eval_params(s, lone);
    return s->oom ? -1 : (int64_t)lone;
  }
  rt_sym_eval_params(s, rv);
  uint64_t buf[4];
  rt_vec ps = RT_VEC_ON(buf);
  int np = rt_sym_expr_params(s->nodes[rv].family);
  for (int k = 0; k < np && ps.n == 0; k++)
    if (rt_sym_rvs(s, s->nodes[rv].w[k], &ps)) rt_sym_oom(s);
  int64_t q = ps.n ? (int64_t)ps.v[0] : RT_SYM_NONE;
  rt_vec_free(&ps);
  if (s->oom) return -1;
  if (q == RT_SYM_NONE) s->nodes[rv].flags &= (uint8_t)~RT_DS_INIT;
  return q;
}

/* prune (13.3) of q's marginal child and of that child's own, deepest first: each is sampled, and its
 * parent takes the posterior given the value when settled. */
static int prune_child(sirenrt_ctx *ctx, uint32_t q, int32_t site) {
  uint64_t buf[8];
  rt_vec chain = RT_VEC_ON(buf);
  int rc = -1;
  for (uint32_t c = marginal_child(ctx->sym, q); c != RT_SYM_NONE; c = marginal_child(ctx->sym, c)) {
    settle(ctx->sym, c);
    if (rt_vec_push(&chain, c)) {
      rt_fail(ctx, site, "out of memory");
      goto done;
    }
  }
  while (chain.n) {
    double ignored;
    if (rt_rv_value(ctx, (uint32_t)chain.v[--chain.n], &ignored, site)) goto done;
  }
  settle(ctx->sym, q);
  rc = 0;
done:
  rt_vec_free(&chain);
  return rc;
}

/* do_marginalize(v) (13.3) with v Initialized(q) and q Marginalized without a marginal child: v takes
 * its marginal and becomes q's marginal child, or, when no rule applies, q is sampled. */
static int do_marginalize(sirenrt_ctx *ctx, uint32_t v, uint32_t q, int32_t site) {
  rt_sym_state *s = ctx->sym;
  rt_sym_node saved = s->nodes[q];
  int r = rt_sym_swap(s, q, v);
  if (r < 0 || s->oom) {
    rt_sym_oom(s);
    return rt_sym_check_oom(ctx, s, site);
  }
  if (r == 0) {
    double ignored;
    if (rt_rv_value(ctx, q, &ignored, site)) return -1;
    s = ctx->sym;
  } else {
    rt_sym_node *n = &s->nodes[q];
    uint64_t post = rt_sym_node_new(s, RT_NODE_POST, n->w[0], n->w[1], n->w[2]);
    if (rt_sym_check_oom(ctx, s, site)) return -1;
    s->nodes[rt_sym_index(post)].family = s->nodes[q].family;
    s->nodes[rt_sym_index(post)].u.memo = rt_sym_ref(v);
    n = &s->nodes[q];
    n->family = saved.family;
    for (int k = 0; k < 3; k++) n->w[k] = saved.w[k];
    n->flags |= RT_DS_PENDING;
    n->u.memo = post;
  }
  s->nodes[v].flags &= (uint8_t)~RT_DS_INIT;
  rt_sym_eval_params(s, v);
  return rt_sym_check_oom(ctx, s, site);
}

/* graft (13.3) iteratively: the Initialized ancestors of rv, up to the first Marginalized one, whose
 * marginal child is pruned; then do_marginalize down the path, so that rv ends a root. */
int rt_ds_graft(sirenrt_ctx *ctx, uint32_t rv, int32_t site) {
  rt_sym_state *s = rt_sym_own(ctx);
  if (!s) return -1;
  if (s->nodes[rv].rv_state != RT_RV_SYMBOLIC) return 0;
  uint64_t buf[8];
  rt_vec path = RT_VEC_ON(buf);
  int rc = -1;
  uint32_t cur = rv;
  for (;;) {
    if (rt_vec_push(&path, cur)) goto oom;
    settle(s, cur);
    if (!has_flag(s, cur, RT_DS_INIT)) break;
    int64_t q = init_parent(s, cur);
    if (q < 0) goto oom;
    if (q == RT_SYM_NONE) break;
    cur = (uint32_t)q;
  }
  if (prune_child(ctx, cur, site)) goto done;
  for (size_t i = path.n - 1; i-- > 0;) {
    uint32_t v = (uint32_t)path.v[i], q = (uint32_t)path.v[i + 1];
    s = ctx->sym;
    if (s->nodes[q].rv_state != RT_RV_SYMBOLIC) { /* sampled meanwhile: v names a constant now */
      s->nodes[v].flags &= (uint8_t)~RT_DS_INIT;
      rt_sym_eval_params(s, v);
      continue;
    }
    if (do_marginalize(ctx, v, q, site)) goto done;
  }
  s = ctx->sym;
  rt_sym_eval_params(s, rv);
  rc = rt_sym_check_oom(ctx, s, site);
  goto done;
oom:
  rt_sym_oom(s);
  rt_sym_check_oom(ctx, s, site);
done:
  rt_vec_free(&path);
  return rc;
}

/* assume's steps 2-4 (13.2): the first parent a rule accepts becomes the canonical one (checked
 * against its current distribution: its marginal, or its conditional when Initialized); every other
 * parent is sampled.  Under BP the rules are the Gaussian pair alone (rt_sym_conjugate reads the
 * state's method), and no flag is kept: BP reads its node states off the distribution. */
/* The canonical parent rule's check; Gaussian mean q with a constant variance, the random walk's
 * shape, passes without the walks (q's distribution cannot name rv, which is newer). */
static int accepts(rt_sym_state *s, uint32_t q, uint32_t rv) {
  const rt_sym_node *c = &s->nodes[rv];
  if (c->family == SIRENRT_FAM_GAUSSIAN && s->nodes[q].family == SIRENRT_FAM_GAUSSIAN && c->w[0] == rt_sym_ref(q) &&
      !rt_sym_is_node(c->w[1]))
    return 1;
  return rt_sym_conjugate(s, q, rv);
}

static void mark_initialized(rt_sym_state *s, uint32_t rv) {
  if (s->method == RT_METHOD_DS) s->nodes[rv].flags |= RT_DS_INIT;
}

int rt_ds_place(sirenrt_ctx *ctx, uint32_t rv, int32_t site) {
  rt_sym_state *s = ctx->sym;
  uint32_t lone = 0;
  int shape = rt_sym_direct_parent(s, rv, &lone);
  if (shape == 0) return 0;
  if (shape == 1) { /* eval_distr leaves the parameter itself, with eval's side effect on q */
    rt_sym_eval_params(s, lone);
    settle(s, lone);
    int ok = accepts(s, lone, rv);
    if (rt_sym_check_oom(ctx, s, site)) return -1;
    if (ok) {
      mark_initialized(s, rv);
      return 0;
    }
  }
  rt_sym_eval_params(s, rv);
  uint64_t buf[8];
  rt_vec ps = RT_VEC_ON(buf);
  int rc = -1, np = rt_sym_expr_params(s->nodes[rv].family);
  for (int k = 0; k < np; k++)
    if (rt_sym_rvs(s, s->nodes[rv].w[k], &ps)) goto oom;
  if (rt_sym_check_oom(ctx, s, site)) goto done;
  uint32_t canonical = RT_SYM_NONE;
  for (size_t i = 0; i < ps.n; i++) {
    uint32_t q = (uint32_t)ps.v[i];
    int seen = 0;
    for (size_t j = 0; j < i; j++) seen |= ps.v[j] == q;
    s = ctx->sym;
    if (seen || q == canonical || s->nodes[q].rv_state != RT_RV_SYMBOLIC) continue;
    int occurs = 0;
    for (int k = 0; k < np && !occurs; k++) occurs = rt_sym_occurs(s, s->nodes[rv].w[k], q);
    if (occurs < 0) goto oom;
    if (!occurs) continue;
    if (canonical == RT_SYM_NONE) {
      settle(s, q);
      int ok = accepts(s, q, rv);
      if (rt_sym_check_oom(ctx, s, site)) goto done;
      if (ok) {
        canonical = q;
        continue;
      }
    }
    double ignored;
    if (rt_rv_value(ctx, q, &ignored, site)) goto done;
    rt_sym_eval_params(ctx->sym, rv);
    if (rt_sym_check_oom(ctx, ctx->sym, site)) goto done;
  }
  if (canonical != RT_SYM_NONE) mark_initialized(ctx->sym, rv);
  rc = 0;
  goto done;
oom:
  rt_sym_oom(s);
  rt_sym_check_oom(ctx, s, site);
done:
  rt_vec_free(&ps);
  return rc;
}
