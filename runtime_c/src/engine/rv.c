/* rv.c — the operations of ARCHITECTURE.md §10.3 on a particle's random variables, for every symbolic method:
 * assume creates the entry and lets the method place it (SSI keeps the distribution as given; DS and
 * BP keep one parent and sample the others, ds.c); observe, value and the expectation's marginalize
 * make the variable a root, whose parameters are constants, the method's way (SSI and BP hoist it,
 * hoist.c; DS grafts it, ds.c), then score, draw or take the mean of that root distribution.  Here too:
 * a root's distribution as numbers (family.c computes with them) and point masses. */
#include "sym_node.h"

#include <stdio.h>
#include <string.h>

#define C(x) rt_sym_word(x)
#define D(w) rt_sym_double(w)

/* A root's distribution as numbers: its constant parameters and, for a categorical, a malloc'd copy
 * of its probabilities (free with root_free). */
typedef struct root_dist {
  int family;
  double p[3];
  double *probs;
  int64_t n;
} root_dist;

static void root_free(root_dist *d) { free(d->probs); }

/* rv's distribution as numbers, its parameters checked (ARCHITECTURE.md §9); 0, or -1 after recording an error. */
static int root_dist_of(sirenrt_ctx *ctx, uint32_t rv, root_dist *d, int32_t site) {
  rt_sym_state *s = ctx->sym;
  const rt_sym_node *node = &s->nodes[rv];
  int np = rt_sym_expr_params(node->family);
  d->family = node->family;
  d->probs = NULL;
  d->n = 0;
  for (int k = 0; k < 3; k++) {
    uint64_t w = k < np ? node->w[k] : C(0.0);
    if (rt_sym_is_node(w)) {
      rt_fail(ctx, site, "internal error: a variable made a root kept a symbolic parameter");
      return -1;
    }
    d->p[k] = D(w);
  }
  if (node->family == SIRENRT_FAM_CATEGORICAL) {
    int64_t count = (int64_t)node->u.value;
    double *a = malloc((size_t)(count > 0 ? count : 1) * sizeof *a);
    if (!a) {
      rt_fail(ctx, site, "out of memory");
      return -1;
    }
    int64_t i = 0;
    for (uint64_t c = node->w[2]; rt_sym_is_node(c) && i < count; c = s->nodes[rt_sym_index(c)].w[0])
      for (int k = 0; k < RT_PROBS_PER_CHUNK && i < count; k++) {
        const rt_sym_node *chunk = &s->nodes[rt_sym_index(c)];
        a[i++] = k < 2 ? D(chunk->w[1 + k]) : chunk->u.value;
      }
    d->probs = a;
    d->n = count;
  }
  char msg[RT_MSG];
  if (!rt_family_bad(d->family, d->p, d->probs, d->n, msg)) return 0;
  root_free(d);
  rt_fail(ctx, site, "%s", msg);
  return -1;
}

/* Stores a categorical's probabilities as a chain of PROBS chunks; its head, or a NaN word (oom). */
static uint64_t store_probs(rt_sym_state *s, const double *probs, int64_t n) {
  uint64_t next = C(0.0);
  for (int64_t start = (n - 1) / RT_PROBS_PER_CHUNK * RT_PROBS_PER_CHUNK; start >= 0; start -= RT_PROBS_PER_CHUNK) {
    double v[RT_PROBS_PER_CHUNK] = {0.0, 0.0, 0.0};
    for (int k = 0; k < RT_PROBS_PER_CHUNK && start + k < n; k++) v[k] = probs[start + k];
    uint64_t c = rt_sym_node_new(s, RT_NODE_PROBS, next, C(v[0]), C(v[1]));
    if (s->oom) return c;
    s->nodes[rt_sym_index(c)].u.value = v[2];
    next = c;
  }
  return next;
}

/* ------------------------------------------------------------------ point masses --------------- */

static const char *var_name(const sirenrt_ctx *ctx, int32_t var) {
  const sirenrt_filter *f = ctx->filter;
  if (f && f->model->vars && var >= 0 && var < f->model->n_vars) return f->model->vars[var];
  return "a variable";
}

/* ARCHITECTURE.md §10.2: the moment a `symbolic` variable is about to be sampled.  With no site at
 * hand (the final estimate), the error points at the variable's binding. */
static int check_may_sample(sirenrt_ctx *ctx, uint32_t rv, int32_t site) {
  const rt_sym_node *n = &ctx->sym->nodes[rv];
  if (n->ann != SIRENRT_ANN_SYMBOLIC) return 0;
  const sirenrt_model *m = ctx->filter ? ctx->filter->model : NULL;
  if (site < 0 && m && m->var_sites && n->var >= 0 && n->var < m->n_vars) site = m->var_sites[n->var];
  rt_fail(ctx, site, "%s is annotated as symbolic but will be sampled", var_name(ctx, n->var));
  return -1;
}

/* The parameters are dropped: a point mass needs none, and the collector may then free them. */
static void set_point(rt_sym_state *s, uint32_t rv, double v, int state) {
  rt_sym_node *n = &s->nodes[rv];
  n->rv_state = (uint8_t)state;
  n->flags = 0; /* a point mass has no DS edge (u held a pending posterior) */
  n->u.value = v;
  n->w[0] = n->w[1] = n->w[2] = C(0.0);
  if (state == RT_RV_SAMPLED && n->var >= 0 && n->var < s->n_vars) s->plan[n->var] |= 2;
}

/* Makes rv a root the method's way: 0 with rv's parameters constant (or rv a point mass). */
static int make_root(sirenrt_ctx *ctx, uint32_t rv, int32_t site) {
  return ctx->sym->method == RT_METHOD_DS ? rt_ds_graft(ctx, rv, site) : rt_hoist_root(ctx, rv, site);
}

/* ------------------------------------------------------------------ operations (10.3) ---------- */

int rt_rv_value(sirenrt_ctx *ctx, uint32_t rv, double *out, int32_t site) {
  rt_sym_state *s = rt_sym_own(ctx);
  if (!s) return -1;
  rt_sym_node *n = &s->nodes[rv];
  if (n->rv_state != RT_RV_SYMBOLIC) {
    if (check_may_sample(ctx, rv, site)) return -1;
    *out = n->u.value;
    set_point(s, rv, *out, RT_RV_SAMPLED);
    return 0;
  }
  if (check_may_sample(ctx, rv, site)) return -1;
  if (n->family == SIRENRT_FAM_DELTA) {
    if (rt_sym_value(ctx, n->w[0], out, site)) return -1;
    set_point(ctx->sym, rv, *out, RT_RV_SAMPLED);
    return 0;
  }
  root_dist d;
  if (make_root(ctx, rv, site) || root_dist_of(ctx, rv, &d, site)) return -1;
  double v = rt_mh_on(ctx) ? rt_mh_draw(ctx, rv, d.family, d.p, d.probs, d.n, site)
                           : rt_family_draw(ctx, d.family, d.p, d.probs, d.n, site);
  root_free(&d);
  if (isnan(v) && ctx->err_msg) return -1;
  set_point(ctx->sym, rv, v, RT_RV_SAMPLED);
  *out = v;
  return 0;
}

int rt_rv_marginalize(sirenrt_ctx *ctx, uint32_t rv, int32_t site) {
  rt_sym_state *s = rt_sym_own(ctx);
  if (!s) return -1;
  if (s->nodes[rv].rv_state != RT_RV_SYMBOLIC || s->nodes[rv].family == SIRENRT_FAM_DELTA) return 0;
  return make_root(ctx, rv, site);
}

int rt_rv_root_mean(sirenrt_ctx *ctx, uint32_t rv, double *out, int32_t site) {
  root_dist d;
  if (root_dist_of(ctx, rv, &d, site)) return -1;
  *out = rt_family_mean(d.family, d.p, d.probs, d.n);
  root_free(&d);
  return 0;
}

int rt_rv_root_params(sirenrt_ctx *ctx, uint32_t rv, int *family, double p[3], int32_t site) {
  root_dist d;
  if (root_dist_of(ctx, rv, &d, site)) return -1;
  *family = d.family;
  memcpy(p, d.p, sizeof d.p);
  root_free(&d);
  return 0;
}

/* A new symbolic RV holding the distribution as given (raw); its index, or -1 after an error. */
static int64_t new_rv(sirenrt_ctx *ctx, int32_t family, const uint64_t *params, int32_t var, int32_t ann,
                      int32_t site) {
  if (family < 0 || family >= SIRENRT_N_FAMILIES || !params) {
    rt_fail(ctx, site, "internal error: unknown distribution family %d", (int)family);
    return -1;
  }
  rt_sym_state *s = rt_sym_own(ctx);
  if (!s) return -1;
  uint64_t p[3] = {C(0.0), C(0.0), C(0.0)};
  int np = rt_sym_expr_params(family);
  for (int k = 0; k < np; k++) {
    if (!rt_sym_valid(s, params[k])) return rt_sym_bad_word(ctx, site);
    p[k] = params[k];
  }
  double count = 0.0;
  if (family == SIRENRT_FAM_EXPONENTIAL) { /* ARCHITECTURE.md §9: exponential(r) is Gamma(1.0, r) */
    family = SIRENRT_FAM_GAMMA;
    p[1] = p[0];
    p[0] = C(1.0);
  } else if (family == SIRENRT_FAM_CATEGORICAL) {
    double buf[64], *probs = buf;
    int64_t n = rt_list_floats(ctx, (int64_t)params[2], buf, 64, site);
    if (n < 0) return -1;
    if (n > 64) {
      probs = malloc((size_t)n * sizeof *probs);
      if (!probs) {
        rt_fail(ctx, site, "out of memory");
        return -1;
      }
      rt_list_floats(ctx, (int64_t)params[2], probs, n, site);
    }
    p[2] = store_probs(s, probs, n);
    if (probs != buf) free(probs);
    count = (double)n;
  }
  uint64_t ref = rt_sym_node_new(s, RT_NODE_RV, p[0], p[1], p[2]);
  if (rt_sym_check_oom(ctx, s, site)) return -1;
  rt_sym_node *n = rt_node(s, ref);
  n->family = (uint8_t)family;
  n->rv_state = RT_RV_SYMBOLIC;
  n->ann = (uint8_t)ann;
  n->var = var;
  n->u.value = count;
  s->n_rvs++;
  if (var >= 0 && var < s->n_vars) s->plan[var] |= 1;
  rt_mh_note_rv(ctx, rt_sym_index(ref));
  return rt_sym_index(ref);
}

/* assume's placement: DS and BP keep at most one symbolic parent (13.2, 14.1). */
static int64_t placed_rv(sirenrt_ctx *ctx, int32_t family, const uint64_t *params, int32_t var, int32_t ann,
                         int32_t site) {
  int64_t rv = new_rv(ctx, family, params, var, ann, site);
  if (rv < 0 || ctx->sym->method == RT_METHOD_SSI) return rv;
  return rt_ds_place(ctx, (uint32_t)rv, site) ? -1 : rv;
}

int rt_sym_assume(sirenrt_ctx *ctx, int32_t family, const uint64_t *params, int32_t var, int32_t ann,
                  int32_t site, uint64_t *out) {
  int64_t rv = placed_rv(ctx, family, params, var, ann, site);
  if (rv < 0) return -1;
  if (ann != SIRENRT_ANN_SAMPLE) {
    *out = rt_sym_ref((uint32_t)rv);
    return 0;
  }
  double v;
  if (rt_rv_value(ctx, (uint32_t)rv, &v, site)) return -1;
  *out = C(v);
  return 0;
}

int rt_sym_observe(sirenrt_ctx *ctx, int32_t family, const uint64_t *params, double x, int32_t site,
                   double *logp) {
  int64_t rv = placed_rv(ctx, family, params, -1, SIRENRT_ANN_NONE, site);
  if (rv < 0) return -1;
  uint32_t i = (uint32_t)rv;
  if (ctx->sym->nodes[i].family == SIRENRT_FAM_DELTA) {
    double v;
    if (rt_sym_value(ctx, ctx->sym->nodes[i].w[0], &v, site)) return -1;
    *logp = sirenrt_logpdf_delta(v, x);
  } else {
    root_dist d;
    if (make_root(ctx, i, site) || root_dist_of(ctx, i, &d, site)) return -1;
    *logp = rt_family_logpdf(d.family, d.p, d.probs, d.n, x);
    root_free(&d);
  }
  set_point(ctx->sym, i, x, RT_RV_OBSERVED);
  return 0;
}
