/* sym_node.h — the layout of a symbolic state and the engine's entry points between its files
 * (sym.c: pool and collector; expr.c: simplification, forcing, means; conjugacy.c: the rules of
 * ARCHITECTURE.md §11; hoist.c: SSI's hoisting, §12; ds.c: delayed sampling, §13; rv.c: the operations of
 * §10.3 on a random variable).  Private to the engine; the rest of the runtime uses sym.h.
 *
 * Node indices are never held across an allocation as pointers: the pool is grown by realloc. */
#ifndef SIRENRT_SYM_NODE_H
#define SIRENRT_SYM_NODE_H

#include "sym.h"

#include <stdlib.h>

enum {
  RT_NODE_FREE = 0, /* w[0]: index of the next free node (UINT32_MAX ends the list) */
  RT_NODE_RV,       /* a random variable: family, parameters w[], rv_state, value, ann, var */
  RT_NODE_ADD,      /* binary operators: w[0] op w[1]; w[2] is 0 */
  RT_NODE_MUL,
  RT_NODE_DIV,
  RT_NODE_ITE,      /* w[0] ? w[1] : w[2] */
  RT_NODE_EQ,
  RT_NODE_LT,
  RT_NODE_PROBS,    /* categorical probabilities: w[0] next chunk (0.0 at the end), w[1], w[2], value */
  RT_NODE_POST      /* DS: a parent's posterior given its marginal child, kept until the child is realised:
                     * family, parameters w[] (mentioning the child), u.memo the child's reference */
};
#define RT_NODE_LAST RT_NODE_POST
#define RT_PROBS_PER_CHUNK 3

enum { RT_RV_SYMBOLIC = 0, RT_RV_SAMPLED = 1, RT_RV_OBSERVED = 2 };
/* Why an allocation failed: malloc; the particle's share of the memory limit; the filter's pool. */
enum { RT_SYM_OOM_MALLOC = 1, RT_SYM_OOM_LIMIT = 2, RT_SYM_OOM_POOL = 3 };
/* RV flags (DS, ARCHITECTURE.md §13.1; unused by SSI and BP, whose node states are read off the distribution).
 * RT_DS_INIT: the distribution is the conditional given the one free RV it names, the canonical parent
 * (Initialized); clear, the distribution is the variable's marginal (Marginalized).
 * RT_DS_PENDING: u.memo references a POST node: the variable has a marginal child, and the posterior
 * it takes once that child is realised. */
enum { RT_DS_INIT = 1, RT_DS_PENDING = 2 };


/* 48 bytes.  Unused words are the constant 0.0 so that walks may treat every w[] alike. */
typedef struct rt_sym_node {
  uint8_t kind;
  uint8_t family;   /* RV: SIRENRT_FAM_* (exponential is stored as gamma(1, rate), ARCHITECTURE.md §9) */
  uint8_t rv_state; /* RV: RT_RV_* */
  uint8_t ann;      /* RV: SIRENRT_ANN_* */
  int32_t var;      /* RV: program variable, -1 anonymous */
  uint32_t stamp;   /* walks: equal to the state's gen when visited in the current walk */
  uint8_t mark;     /* collector */
  uint8_t flags;    /* RV: RT_DS_* */
  uint16_t pad;
  uint64_t w[3];
  /* RV: the point mass once sampled/observed; a symbolic categorical's probability count.
   * Expression nodes and symbolic delta RVs: the current eval walk's result (a word). */
  union {
    double value;
    uint64_t memo;
  } u;
} rt_sym_node;

_Static_assert(sizeof(rt_sym_node) == 48, "a node is six words");

struct rt_sym_state {
  int64_t refs;
  rt_sym_node *nodes;
  uint32_t cap, top; /* nodes[0 .. top) have been handed out at least once */
  uint32_t free_head;
  int32_t oom;       /* an allocation failed since the operation began (RT_SYM_OOM_*) */
  int32_t method;    /* RT_METHOD_*: which operations the ABI's assume/observe/value/mean run */
  uint32_t max_nodes; /* the particle's share of the filter's memory limit, in nodes (0: none) */
  rt_budget *budget;  /* the filter's pool (memory.c) the pool's capacity is counted against; NULL: none */
  int64_t live, live_after_sweep;
  int64_t n_rvs;     /* ARCHITECTURE.md §6.2's handle counter: every assume and observe */
  uint32_t gen;      /* walk generation, see rt_sym_node.stamp */
  int32_t n_vars;
  uint8_t *plan;     /* n_vars plan bytes */
};

#define RT_SYM_NONE UINT32_MAX

static inline int rt_sym_is_const(uint64_t w) { return !rt_sym_is_node(w); }
/* A scratch allocation failed: the operation fails, but a node refused by the memory limit, which
 * the failure usually follows, stays the reason the error gives. */
static inline void rt_sym_oom(rt_sym_state *s) {
  if (!s->oom) s->oom = RT_SYM_OOM_MALLOC;
}
static inline rt_sym_node *rt_node(rt_sym_state *s, uint64_t w) { return &s->nodes[rt_sym_index(w)]; }
static inline int rt_sym_is_kind(rt_sym_state *s, uint64_t w, int kind) {
  return rt_sym_is_node(w) && rt_node(s, w)->kind == kind;
}
/* A word this state can read: a constant, or a reference to a live node (words come from generated
 * code and checkpoints; a bad one is reported, never followed). */
static inline int rt_sym_valid(const rt_sym_state *s, uint64_t w) {
  if (!rt_sym_is_node(w)) return 1;
  return s && rt_sym_index(w) < s->top && s->nodes[rt_sym_index(w)].kind != RT_NODE_FREE;
}
/* A random variable still symbolic (not a point mass): the only kind that hoisting moves. */
static inline int rt_sym_is_free_rv(rt_sym_state *s, uint64_t w) {
  if (!rt_sym_is_node(w)) return 0;
  rt_sym_node *n = rt_node(s, w);
  return n->kind == RT_NODE_RV && n->rv_state == RT_RV_SYMBOLIC && n->family != SIRENRT_FAM_DELTA;
}
/* Parameter words an RV's distribution has as expressions (categorical's probabilities are not). */
static inline int rt_sym_expr_params(int family) {
  switch (family) {
    case SIRENRT_FAM_BERNOULLI: case SIRENRT_FAM_POISSON: case SIRENRT_FAM_DELTA: case SIRENRT_FAM_EXPONENTIAL:
      return 1;
    case SIRENRT_FAM_BETA_BINOMIAL: case SIRENRT_FAM_STUDENT_T: return 3;
    default: return 2;
  }
}

/* sym.c */
int rt_sym_bad_word(sirenrt_ctx *ctx, int32_t site); /* records "invalid symbolic reference"; -1 */
void rt_sym_gen_wrap(rt_sym_state *s);
/* A fresh walk generation.  Inline: every walk starts with one, and most walks are a few nodes. */
static inline uint32_t rt_sym_gen(rt_sym_state *s) {
  if (__builtin_expect(++s->gen == 0, 0)) rt_sym_gen_wrap(s);
  return s->gen;
}
/* A new node (fields zeroed, words 0.0); its reference, or a NaN word with s->oom set. */
uint64_t rt_sym_node_new(rt_sym_state *s, int kind, uint64_t w0, uint64_t w1, uint64_t w2);
/* Reports s->oom on ctx (and clears it): -1, else 0. */
int rt_sym_check_oom(sirenrt_ctx *ctx, rt_sym_state *s, int32_t site);

/* A growable array of indices or words, for the walks that must not recurse.  It may start on a
 * caller's buffer (RT_VEC_ON), so that the usual small walks allocate nothing. */
typedef struct rt_vec {
  uint64_t *v;
  size_t n, cap;
  int owned; /* v was allocated here */
} rt_vec;
#define RT_VEC_ON(buf) {(buf), 0, sizeof(buf) / sizeof((buf)[0]), 0}
int rt_vec_grow(rt_vec *a); /* 0, or -1 out of memory */
static inline int rt_vec_push(rt_vec *a, uint64_t x) { /* 0, or -1 out of memory */
  if (a->n == a->cap && rt_vec_grow(a)) return -1;
  a->v[a->n++] = x;
  return 0;
}
static inline void rt_vec_free(rt_vec *a) {
  if (a->owned) free(a->v);
  a->v = NULL;
  a->n = a->cap = 0;
  a->owned = 0;
}

/* expr.c: ARCHITECTURE.md §6.3's smart constructors and eval. */
uint64_t rt_sm_add(rt_sym_state *s, uint64_t a, uint64_t b);
uint64_t rt_sm_mul(rt_sym_state *s, uint64_t a, uint64_t b);
uint64_t rt_sm_div(rt_sym_state *s, uint64_t a, uint64_t b);
uint64_t rt_sm_ite(rt_sym_state *s, uint64_t c, uint64_t t, uint64_t f);
uint64_t rt_sm_eq(rt_sym_state *s, uint64_t a, uint64_t b);
uint64_t rt_sm_lt(rt_sym_state *s, uint64_t a, uint64_t b);
uint64_t rt_sm_sub(rt_sym_state *s, uint64_t a, uint64_t b); /* add(a, mul(-1, b)) */
/* The smart constructor of an expression kind; `self` (or a constant for none) is returned instead of
 * a new node equal to it, so rebuilding an unchanged simplified expression allocates nothing. */
uint64_t rt_sm_node(rt_sym_state *s, int kind, uint64_t a, uint64_t b, uint64_t c, uint64_t self);
uint64_t rt_sym_eval(rt_sym_state *s, uint64_t w);
void rt_sym_eval_params(rt_sym_state *s, uint32_t rv); /* eval_distr: replaces the parameters */
/* e with RV p replaced by the constant v and simplified; other RVs are left alone (11.4). */
uint64_t rt_sym_subst(rt_sym_state *s, uint64_t e, uint32_t p, double v);
/* Does RV p occur in e (directly: other RVs' distributions are not looked into)?  -1 out of memory. */
int rt_sym_occurs(rt_sym_state *s, uint64_t e, uint32_t p);
/* Appends the free RVs of e, left to right with duplicates, to out.  -1 out of memory. */
int rt_sym_rvs(rt_sym_state *s, uint64_t e, rt_vec *out);

/* hoist.c: hoist_and_eval (12.2) of rv.  HOIST_OK: rv's parameters are constants;
 * HOIST_NONCONJUGATE: *nc is a parent no rule can swap (the caller samples it and retries). */
enum { HOIST_OK = 0, HOIST_NONCONJUGATE = 1, HOIST_OOM = -1 };
int rt_sym_hoist_and_eval(rt_sym_state *s, uint32_t rv, uint32_t *nc);

/* hoist.c: SSI's and BP's way to make rv a root (sampling the parents no rule can swap). */
/* The one free variable rv's distribution names when each parameter is a constant or that variable
 * itself (a random walk's mean): 1 with *q set; 0 when every parameter is a constant; -1 for any other
 * shape, which the general walks handle. */
int rt_sym_direct_parent(rt_sym_state *s, uint32_t rv, uint32_t *q);
int rt_hoist_root(sirenrt_ctx *ctx, uint32_t rv, int32_t site);

/* rv.c: value (10.3) of an RV entry (a point mass gives its value again), marginalize for
 * expectations (10.4), and the analytic mean of a root (constant parameters). */
int rt_rv_value(sirenrt_ctx *ctx, uint32_t rv, double *out, int32_t site);
int rt_rv_marginalize(sirenrt_ctx *ctx, uint32_t rv, int32_t site);
int rt_rv_root_mean(sirenrt_ctx *ctx, uint32_t rv, double *out, int32_t site);
/* A root's family and constant parameters (the categorical's probabilities are not copied). */
int rt_rv_root_params(sirenrt_ctx *ctx, uint32_t rv, int *family, double p[3], int32_t site);

/* ds.c: DS (ARCHITECTURE.md §13).  place: assume's choice of the one canonical parent among the free RVs of a new
 * variable's distribution, sampling the others (13.2; BP's 14.1 is the same with the Gaussian rule
 * alone).  graft: makes rv a root (13.3), pruning and marginalising as DS does; it is also 13.4's
 * marginalize for expectations (see ds.c).  0, or -1 with the error recorded on ctx. */
int rt_ds_place(sirenrt_ctx *ctx, uint32_t rv, int32_t site);
int rt_ds_graft(sirenrt_ctx *ctx, uint32_t rv, int32_t site);

/* conjugacy.c: swap(q, c) of ARCHITECTURE.md §12.3 by the (family of q, family of c) table, among the rules the
 * state's method uses (ARCHITECTURE.md §11.8).  1 swapped (c holds its marginal, q its posterior given RV c), 0 no
 * rule applies, -1 out of memory. */
int rt_sym_swap(rt_sym_state *s, uint32_t q, uint32_t c);
/* The same rule's check alone (DS and BP choose a canonical parent with it): 1 applies, 0 not. */
int rt_sym_conjugate(rt_sym_state *s, uint32_t q, uint32_t c);

#endif
