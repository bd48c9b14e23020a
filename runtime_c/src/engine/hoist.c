/* hoist.c — ARCHITECTURE.md §12.2-12.3: making a random variable a root of the symbolic DAG by swapping it with
 * its parents (conjugacy.c), ancestors first, so that its distribution becomes its exact marginal and
 * its former ancestors hold posteriors that reference it.
 *
 * ARCHITECTURE.md §0.3: a swap that would create a cycle (can_swap fails) reports the parent as NonConjugate, so
 * SSI samples it instead of raising.  Every walk here is iterative: hoisting the first variable of a
 * chain goes through every later one. */
#include "sym_node.h"

#include <string.h>

/* The free RVs of rv's distribution, left to right with duplicates. */
static int parents(rt_sym_state *s, uint32_t rv, rt_vec *out) {
  int np = rt_sym_expr_params(s->nodes[rv].family);
  for (int k = 0; k < np; k++)
    if (rt_sym_rvs(s, s->nodes[rv].w[k], out)) return -1;
  return 0;
}

/* Constant parameters: no parents, so H(rv) has nothing to swap (a root, as every filter's latest
 * posterior is once evaluated), and the hoist need not open a frame for it. */
static int const_params(rt_sym_state *s, uint32_t rv) {
  int np = rt_sym_expr_params(s->nodes[rv].family);
  for (int k = 0; k < np; k++)
    if (rt_sym_is_node(s->nodes[rv].w[k])) return 0;
  return 1;
}

static int contains(const rt_vec *a, uint64_t x) {
  for (size_t i = 0; i < a->n; i++)
    if (a->v[i] == x) return 1;
  return 0;
}

/* parents(cur) in topological order (ancestors first, no duplicates): the post-order of a depth-first
 * walk from each parent in turn through the parents' own distributions, kept to parents(cur).  The
 * walk is iterative (posterior chains are as deep as the run is long); a node is expanded when popped,
 * as the recursive walk would reach it. */
static int topo_parents(rt_sym_state *s, uint32_t cur, rt_vec *out) {
  uint64_t b1[16], b2[32], b3[16];
  rt_vec ps = RT_VEC_ON(b1), stack = RT_VEC_ON(b2), kids = RT_VEC_ON(b3);
  int rc = -1;
  if (parents(s, cur, &ps)) goto done;
  if (ps.n == 0) {
    rc = 0;
    goto done;
  }
  int one = 1;
  for (size_t i = 1; i < ps.n; i++) one &= ps.v[i] == ps.v[0];
  if (one) {
    rc = rt_vec_push(out, ps.v[0]);
    goto done;
  }
  uint32_t gen = rt_sym_gen(s);
  const uint64_t expanded = UINT64_C(1) << 32;
  for (size_t i = ps.n; i-- > 0;)
    if (rt_vec_push(&stack, ps.v[i])) goto done;
  while (stack.n) {
    uint64_t e = stack.v[--stack.n];
    uint32_t v = (uint32_t)e;
    if (e & expanded) {
      if (contains(&ps, v) && rt_vec_push(out, v)) goto done;
      continue;
    }
    if (s->nodes[v].stamp == gen) continue;
    s->nodes[v].stamp = gen;
    if (rt_vec_push(&stack, v | expanded)) goto done;
    kids.n = 0;
    if (parents(s, v, &kids)) goto done;
    for (size_t k = kids.n; k-- > 0;)
      if (s->nodes[kids.v[k]].stamp != gen && rt_vec_push(&stack, kids.v[k])) goto done;
  }
  rc = 0;
done:
  rt_vec_free(&ps);
  rt_vec_free(&stack);
  rt_vec_free(&kids);
  return rc;
}

/* Does some variable w != q among c's parents depend on q through the distributions of variables?
 * Then swapping q and c would make a cycle.  1 yes, 0 no, -1 out of memory. */
static int would_cycle(rt_sym_state *s, uint32_t q, uint32_t c) {
  uint64_t b1[16], b2[32];
  rt_vec ps = RT_VEC_ON(b1), stack = RT_VEC_ON(b2);
  int rc = -1;
  if (parents(s, c, &ps)) goto done;
  uint32_t gen = rt_sym_gen(s);
  for (size_t i = 0; i < ps.n; i++) {
    if (ps.v[i] == q || s->nodes[ps.v[i]].stamp == gen) continue;
    s->nodes[ps.v[i]].stamp = gen;
    stack.n = 0;
    if (rt_vec_push(&stack, ps.v[i])) goto done;
    while (stack.n) {
      uint32_t v = (uint32_t)stack.v[--stack.n];
      size_t base = stack.n;
      if (parents(s, v, &stack)) goto done;
      /* Keep the unvisited among the parents just appended. */
      size_t keep = base;
      for (size_t k = base; k < stack.n; k++) {
        uint32_t p = (uint32_t)stack.v[k];
        if (p == q) {
          rc = 1;
          goto done;
        }
        if (s->nodes[p].stamp == gen) continue;
        s->nodes[p].stamp = gen;
        stack.v[keep++] = p;
      }
      stack.n = keep;
    }
  }
  rc = 0;
done:
  rt_vec_free(&ps);
  rt_vec_free(&stack);
  return rc;
}

static int occurs_in_params(rt_sym_state *s, uint32_t c, uint32_t q) {
  int np = rt_sym_expr_params(s->nodes[c].family);
  for (int k = 0; k < np; k++) {
    int r = rt_sym_occurs(s, s->nodes[c].w[k], q);
    if (r) return r;
  }
  return 0;
}

/* Step 3 of H(cur, G): swap cur with its parents, last first.  A parent that no longer occurs in
 * cur's distribution (an earlier swap simplified it away) has nothing to reverse. */
static int swap_parents(rt_sym_state *s, uint32_t cur, const rt_vec *order, const rt_vec *ghosts, uint32_t *nc) {
  for (size_t i = order->n; i-- > 0;) {
    uint32_t q = (uint32_t)order->v[i];
    if (contains(ghosts, q)) continue;
    /* A lone parent: order was all of cur's parents, no swap of this frame has touched cur yet, and
     * hoisting q rewrote only q and its ancestors (cur is none of them), so q still occurs in cur's
     * distribution and is its only parent, which can make no cycle. */
    int lone = order->n == 1;
    int occ = lone ? 1 : occurs_in_params(s, cur, q);
    if (occ < 0) return HOIST_OOM;
    if (!occ) continue;
    int cyc = lone ? 0 : would_cycle(s, q, cur);
    if (cyc < 0) return HOIST_OOM;
    int sw = cyc ? 0 : rt_sym_swap(s, q, cur);
    if (sw < 0 || s->oom) return HOIST_OOM;
    if (sw == 0) {
      *nc = q;
      return HOIST_NONCONJUGATE;
    }
  }
  return HOIST_OK;
}

/* H(cur, G) of ARCHITECTURE.md §12.3 with its recursion on an explicit stack of frames (hoisting the first
 * variable of a chain goes through every later one).  A frame's G is its caller's G1, which does not
 * change while the callee runs.  On NonConjugate, *nc is the parent to sample. */
typedef struct hoist_frame {
  uint32_t cur;
  int entered; /* the callee for order[i] has run */
  size_t i;
  rt_vec order, g1;
  /* Usual orders and ghost sets are a few variables: kept in the frame, they cost no malloc. */
  uint64_t order_buf[8], g1_buf[8];
} hoist_frame;

static int frame_init(rt_sym_state *s, hoist_frame *f, uint32_t cur, const rt_vec *ghosts) {
  f->cur = cur;
  f->entered = 0;
  f->i = 0;
  f->order = (rt_vec)RT_VEC_ON(f->order_buf);
  f->g1 = (rt_vec)RT_VEC_ON(f->g1_buf);
  if (topo_parents(s, cur, &f->order)) return -1;
  for (size_t i = 0; i < ghosts->n; i++)
    if (rt_vec_push(&f->g1, ghosts->v[i])) return -1;
  return 0;
}

int rt_sym_direct_parent(rt_sym_state *s, uint32_t cur, uint32_t *q) {
  int np = rt_sym_expr_params(s->nodes[cur].family), found = 0;
  for (int k = 0; k < np; k++) {
    uint64_t w = s->nodes[cur].w[k];
    if (!rt_sym_is_node(w)) continue;
    if (!rt_sym_is_free_rv(s, w) || (found && rt_sym_index(w) != *q)) return -1;
    *q = rt_sym_index(w);
    found = 1;
  }
  return found;
}

enum { HOIST_GENERAL = 2 };

/* H(rv) when rv heads a chain of lone, direct parents ending at a root (the random walk's y <- x_t
 * <- x_{t-1}): every frame's order is its one parent and every ghost set is empty, so the general
 * walk's frames, topological orders and occurrence checks come down to swapping each link, deepest
 * first.  Only reads before the first swap, so HOIST_GENERAL (another shape) leaves the state as is. */
static int hoist_chain(rt_sym_state *s, uint32_t rv, uint32_t *nc) {
  uint32_t chain[9];
  int n = 0;
  chain[n++] = rv;
  for (;;) {
    uint32_t q;
    int k = rt_sym_direct_parent(s, chain[n - 1], &q);
    if (k < 0) return HOIST_GENERAL;
    if (k == 0) break;
    if (n == 9) return HOIST_GENERAL;
    chain[n++] = q;
  }
  for (int i = n - 1; i-- > 0;) {
    int sw = rt_sym_swap(s, chain[i + 1], chain[i]);
    if (sw < 0 || s->oom) return HOIST_OOM;
    if (sw == 0) {
      *nc = chain[i + 1];
      return HOIST_NONCONJUGATE;
    }
  }
  return HOIST_OK;
}

static int hoist(rt_sym_state *s, uint32_t rv, uint32_t *nc) {
  static const rt_vec none = {0};
  int chain = hoist_chain(s, rv, nc);
  if (chain != HOIST_GENERAL) return chain;
  hoist_frame local[8], *frames = local;
  size_t n = 1, cap = 8;
  int rc = HOIST_OOM;
  if (frame_init(s, &frames[0], rv, &none)) goto done;
  while (n) {
    hoist_frame *f = &frames[n - 1];
    if (f->i < f->order.n) {
      uint32_t q = (uint32_t)f->order.v[f->i];
      if (!f->entered && !contains(&f->g1, q) && !const_params(s, q)) {
        f->entered = 1;
        if (n == cap) {
          hoist_frame *big = frames == local ? malloc(cap * 2 * sizeof *big) : realloc(frames, cap * 2 * sizeof *big);
          if (!big) goto done;
          if (frames == local) memcpy(big, local, sizeof local);
          frames = big;
          cap *= 2;
          /* A vector still on its frame's buffer must follow the frame to its new place. */
          for (size_t k = 0; k < n; k++) {
            if (!frames[k].order.owned) frames[k].order.v = frames[k].order_buf;
            if (!frames[k].g1.owned) frames[k].g1.v = frames[k].g1_buf;
          }
        }
        n++;
        if (frame_init(s, &frames[n - 1], q, &frames[n - 2].g1)) goto done;
        continue;
      }
      f->entered = 0;
      if (rt_vec_push(&f->g1, q)) goto done;
      f->i++;
      continue;
    }
    int r = swap_parents(s, f->cur, &f->order, n > 1 ? &frames[n - 2].g1 : &none, nc);
    rt_vec_free(&f->order);
    rt_vec_free(&f->g1);
    n--;
    if (r != HOIST_OK) {
      rc = r;
      goto done;
    }
  }
  rc = HOIST_OK;
done:
  while (n) {
    n--;
    rt_vec_free(&frames[n].order);
    rt_vec_free(&frames[n].g1);
  }
  if (frames != local) free(frames);
  if (s->oom) rc = HOIST_OOM;
  return rc;
}

/* hoist_and_eval (12.2).  After it, rv's parameters are constants; a parent that stayed (which only
 * a failed swap leaves) is reported as NonConjugate so that the caller samples it. */
int rt_sym_hoist_and_eval(rt_sym_state *s, uint32_t rv, uint32_t *nc) {
  /* With constant parameters eval rewrites nothing and hoisting finds no parent: a root already
   * evaluated is done at once, and a swap that left constants needs no second eval. */
  if (const_params(s, rv)) return s->oom ? HOIST_OOM : HOIST_OK;
  rt_sym_eval_params(s, rv);
  int r = s->oom ? HOIST_OOM : hoist(s, rv, nc);
  if (r != HOIST_OK) return r;
  if (const_params(s, rv)) return HOIST_OK;
  rt_sym_eval_params(s, rv);
  if (s->oom) return HOIST_OOM;
  if (const_params(s, rv)) return HOIST_OK; /* the usual outcome: nothing left to look for */
  uint64_t buf[8];
  rt_vec left = RT_VEC_ON(buf);
  if (parents(s, rv, &left)) return HOIST_OOM;
  if (left.n) {
    *nc = (uint32_t)left.v[0];
    r = HOIST_NONCONJUGATE;
  }
  rt_vec_free(&left);
  return r;
}


/* The loop of 12.1 (SSI) and of BP's marginalize (14.2): hoist; sample whatever parent could not be
 * swapped; again.  BP's rules are the Gaussian pair alone (rt_sym_swap reads the state's method), and
 * its variables name one parent each, so the hoist is BP's chain of condition_cd. */
int rt_hoist_root(sirenrt_ctx *ctx, uint32_t rv, int32_t site) {
  for (;;) {
    rt_sym_state *s = rt_sym_own(ctx);
    if (!s) return -1;
    uint32_t q = 0;
    int r = rt_sym_hoist_and_eval(s, rv, &q);
    if (r == HOIST_OK) return 0;
    if (r == HOIST_OOM) {
      rt_sym_oom(s);
      return rt_sym_check_oom(ctx, s, site);
    }
    double ignored;
    if (rt_rv_value(ctx, q, &ignored, site)) return -1;
  }
}
