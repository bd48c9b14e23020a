/* sym.c — a particle's symbolic state as storage: the node pool, lazy copy-on-write between the
 * offspring of a resampling, the mark/sweep collector, the plan bits and checkpoint bytes.  What the
 * nodes mean is in expr.c, conjugacy.c, hoist.c, ds.c and rv.c. */
#include "sym_node.h"

#include <math.h>
#include <string.h>

#define MAX_NODES ((uint32_t)1 << 31)

int rt_sym_method(const char *name) {
#define NAME(ID, text) [RT_METHOD_##ID] = text,
  static const char *const names[RT_N_METHODS] = {RT_METHODS(NAME)};
#undef NAME
  for (int m = 0; name && m < RT_N_METHODS; m++)
    if (strcmp(name, names[m]) == 0) return m;
  return -1;
}

rt_sym_state *rt_sym_new(int32_t n_vars, int32_t method) {
  if (n_vars < 0) n_vars = 0;
  rt_sym_state *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->plan = calloc((size_t)n_vars + 1, 1);
  if (!s->plan) {
    free(s);
    return NULL;
  }
  s->refs = 1;
  s->n_vars = n_vars;
  s->method = method >= 0 && method < RT_N_METHODS ? method : RT_METHOD_SSI;
  s->free_head = RT_SYM_NONE;
  return s;
}

static int report_oom(sirenrt_ctx *ctx, const rt_sym_state *s, int why, int32_t site);

/* What a pool of cap nodes takes of the filter's budget, in words. */
static uint64_t pool_words(uint32_t cap) { return (uint64_t)cap * (sizeof(rt_sym_node) / sizeof(uint64_t)); }

static void sym_free(rt_sym_state *s) {
  rt_budget_give(s->budget, pool_words(s->cap));
  free(s->nodes);
  free(s->plan);
  free(s);
}

void rt_sym_retain(rt_sym_state *s, int64_t refs) {
  if (s) __atomic_add_fetch(&s->refs, refs, __ATOMIC_RELAXED);
}

void rt_sym_release(rt_sym_state *s) {
  if (s && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0) sym_free(s);
}

/* The whole pool with its indices, so that words held in shared list cells stay valid. */
static rt_sym_state *sym_copy(const rt_sym_state *src) {
  if (!rt_budget_take(src->budget, pool_words(src->cap))) return NULL;
  rt_sym_state *s = malloc(sizeof *s);
  if (!s) {
    rt_budget_give(src->budget, pool_words(src->cap));
    return NULL;
  }
  /* Every field but refs, which the source's other owners change atomically meanwhile. */
  s->refs = 1;
  memcpy((char *)s + offsetof(rt_sym_state, nodes), (const char *)src + offsetof(rt_sym_state, nodes),
         sizeof *s - offsetof(rt_sym_state, nodes));
  s->nodes = NULL;
  s->plan = malloc((size_t)src->n_vars + 1);
  if (src->cap) s->nodes = malloc((size_t)src->cap * sizeof(rt_sym_node));
  if (!s->plan || (src->cap && !s->nodes)) {
    sym_free(s);
    return NULL;
  }
  memcpy(s->plan, src->plan, (size_t)src->n_vars + 1);
  if (src->top) memcpy(s->nodes, src->nodes, (size_t)src->top * sizeof(rt_sym_node));
  return s;
}

int rt_sym_attach(rt_sym_state *s, sirenrt_filter *f) {
  /* the state may take as much as the particle's lists may (memory.c) */
  s->max_nodes = (uint32_t)fmin((double)f->arena_limit_words * sizeof(uint64_t) / sizeof(rt_sym_node), (double)MAX_NODES);
  if (!rt_budget_take(&f->budget, pool_words(s->cap))) return -1;
  s->budget = &f->budget;
  return 0;
}

rt_sym_state *rt_sym_own(sirenrt_ctx *ctx) {
  rt_sym_state *s = ctx->sym;
  if (!s) {
    const sirenrt_model *m = ctx->filter ? ctx->filter->model : NULL;
    s = rt_sym_new(m ? m->n_vars : 0, m ? rt_sym_method(m->method) : RT_METHOD_SSI);
    if (!s) rt_fail(ctx, -1, "out of memory (symbolic state)");
    else if (ctx->filter) rt_sym_attach(s, ctx->filter); /* an empty pool: nothing to refuse */
    ctx->sym = s;
    return s;
  }
  if (__atomic_load_n(&s->refs, __ATOMIC_ACQUIRE) == 1) return s;
  rt_sym_state *c = sym_copy(s);
  if (!c) {
    int pool = s->budget && __atomic_load_n(&s->budget->used, __ATOMIC_RELAXED) + pool_words(s->cap) > s->budget->words;
    report_oom(ctx, s, pool ? RT_SYM_OOM_POOL : RT_SYM_OOM_MALLOC, -1);
    return NULL;
  }
  rt_sym_release(s);
  ctx->sym = c;
  return c;
}

/* The generation wrapped: old stamps could collide with new generations. */
void rt_sym_gen_wrap(rt_sym_state *s) {
  for (uint32_t i = 0; i < s->top; i++) s->nodes[i].stamp = 0;
  s->gen = 1;
}

/* 0, or the reason it cannot (RT_SYM_OOM_*). */
static int grow(rt_sym_state *s) {
  uint32_t most = s->max_nodes && s->max_nodes < MAX_NODES ? s->max_nodes : MAX_NODES;
  if (s->cap >= most) return s->max_nodes ? RT_SYM_OOM_LIMIT : RT_SYM_OOM_MALLOC;
  uint32_t cap = s->cap ? s->cap * 2 : 64;
  if (cap > most) cap = most;
  if (!rt_budget_take(s->budget, pool_words(cap) - pool_words(s->cap))) return RT_SYM_OOM_POOL;
  rt_sym_node *n = realloc(s->nodes, (size_t)cap * sizeof *n);
  if (!n) {
    rt_budget_give(s->budget, pool_words(cap) - pool_words(s->cap));
    return RT_SYM_OOM_MALLOC;
  }
  s->nodes = n;
  s->cap = cap;
  return 0;
}

uint64_t rt_sym_node_new(rt_sym_state *s, int kind, uint64_t w0, uint64_t w1, uint64_t w2) {
  uint32_t i;
  if (s->free_head != RT_SYM_NONE) {
    i = s->free_head;
    s->free_head = (uint32_t)s->nodes[i].w[0];
  } else {
    int why;
    if (s->top == s->cap && (why = grow(s))) {
      s->oom = why;
      return rt_sym_word(NAN);
    }
    i = s->top++;
  }
  /* One store per field rather than a memset and rewrites: this runs for every node of every step. */
  s->nodes[i] = (rt_sym_node){.kind = (uint8_t)kind, .var = -1, .w = {w0, w1, w2}};
  s->live++;
  return rt_sym_ref(i);
}

/* Records why an allocation for s failed (RT_SYM_OOM_*) on ctx; -1.  Reads s only: s may be shared. */
static int report_oom(sirenrt_ctx *ctx, const rt_sym_state *s, int why, int32_t site) {
  if (why == RT_SYM_OOM_POOL) {
    char state[200];
    __atomic_store_n(&s->budget->over, 1, __ATOMIC_RELAXED);
    rt_fail(ctx, site,
            "the particles' symbolic states, with their lists and data, outgrow the filter's memory limit (%s): "
            "raise the limit (memory_limit, --memory-limit), use fewer particles, or annotate some of the "
            "variables involved `sample`",
            rt_budget_state(state, s->budget));
  } else if (why == RT_SYM_OOM_LIMIT)
    rt_fail(ctx, site,
            "a particle's symbolic state outgrew its share of the memory limit (%.2f MB, %u nodes): the symbolic "
            "methods can build expressions that grow with every step; raise the memory limit, use "
            "fewer particles, or annotate some of the variables involved `sample`",
            (double)s->max_nodes * sizeof(rt_sym_node) / 1048576.0, s->max_nodes);
  else
    rt_fail(ctx, site, "out of memory (symbolic state)");
  return -1;
}

int rt_sym_check_oom(sirenrt_ctx *ctx, rt_sym_state *s, int32_t site) {
  if (!s->oom) return 0;
  int why = s->oom;
  s->oom = 0;
  return report_oom(ctx, s, why, site);
}

int rt_sym_bad_word(sirenrt_ctx *ctx, int32_t site) {
  rt_fail(ctx, site, "internal error: invalid symbolic reference");
  return -1;
}

int rt_vec_grow(rt_vec *a) {
  size_t cap = a->cap ? a->cap * 2 : 16;
  uint64_t *v = a->owned ? realloc(a->v, cap * sizeof *v) : malloc(cap * sizeof *v);
  if (!v) return -1;
  if (!a->owned && a->n) memcpy(v, a->v, a->n * sizeof *v);
  a->v = v;
  a->cap = cap;
  a->owned = 1;
  return 0;
}

/* ------------------------------------------------------------------ collector ------------------ */

/* Amortised: a sweep visits every node, so it is due only once the pool has doubled since the last.
 * The constant is the slack for small states: with 64 a filter's pool (a few live nodes, a handful of
 * new ones per step) grew past its first 64 nodes and touched twice the cache lines; 24 keeps the
 * walk's whole pool in its first allocation. */
int rt_sym_collect_due(const rt_sym_state *s) { return s && s->live > 2 * s->live_after_sweep + 24; }

/* Chains of posteriors grow with the number of time steps: an explicit stack, never C recursion. */
void rt_sym_mark(rt_sym_state *s, uint64_t w) {
  if (!s || !rt_sym_is_node(w) || rt_sym_index(w) >= s->top) return;
  if (s->nodes[rt_sym_index(w)].mark) return;
  uint32_t local[64], *stack = local, cap = 64, n = 0;
  s->nodes[rt_sym_index(w)].mark = 1;
  stack[n++] = rt_sym_index(w);
  while (n) {
    rt_sym_node *node = &s->nodes[stack[--n]];
    /* A DS parent's pending posterior, and that posterior's child: what the parent becomes. */
    int linked = (node->kind == RT_NODE_RV && (node->flags & RT_DS_PENDING)) || node->kind == RT_NODE_POST;
    for (int k = 0; k < 4; k++) {
      uint64_t c = k < 3 ? node->w[k] : linked ? node->u.memo : 0;
      if (node->kind == RT_NODE_FREE || !rt_sym_is_node(c)) continue;
      uint32_t i = rt_sym_index(c);
      if (i >= s->top || s->nodes[i].mark) continue;
      s->nodes[i].mark = 1;
      if (n == cap) {
        uint32_t *big = malloc((size_t)cap * 2 * sizeof *big);
        if (!big) { /* cannot mark everything: keep every node rather than free a live one */
          for (uint32_t j = 0; j < s->top; j++) s->nodes[j].mark = 1;
          break;
        }
        memcpy(big, stack, (size_t)n * sizeof *big);
        if (stack != local) free(stack);
        stack = big;
        cap *= 2;
      }
      stack[n++] = i;
    }
  }
  if (stack != local) free(stack);
}

void rt_sym_sweep(rt_sym_state *s) {
  if (!s) return;
  int64_t live = 0;
  /* Freed in descending order so that the free list hands out low indices first. */
  for (uint32_t i = s->top; i-- > 0;) {
    rt_sym_node *n = &s->nodes[i];
    if (n->kind == RT_NODE_FREE) continue;
    if (n->mark) {
      n->mark = 0;
      live++;
      continue;
    }
    memset(n, 0, sizeof *n);
    n->kind = RT_NODE_FREE;
    n->w[0] = s->free_head;
    s->free_head = i;
  }
  s->live = live;
  s->live_after_sweep = live;
}

int64_t rt_sym_live_nodes(const rt_sym_state *s) { return s ? s->live : 0; }

int rt_sym_readable(const rt_sym_state *s, uint64_t w) { return rt_sym_valid(s, w); }

int rt_sym_serves(const rt_sym_state *s, int method, int32_t n_vars) { return s->method == method && s->n_vars == n_vars; }

uint8_t rt_sym_plan_bits(const rt_sym_state *s, int32_t v) {
  if (!s || v < 0 || v >= s->n_vars) return 0;
  return s->plan[v];
}

/* ------------------------------------------------------------------ checkpoints ---------------- */

#define SAVE_MAGIC UINT64_C(0x53594D5354415431) /* "SYMSTAT1" */

typedef struct saved_header {
  uint64_t magic;
  uint32_t top, free_head;
  int64_t live, live_after_sweep, n_rvs;
  int32_t n_vars, method;
} saved_header;

int rt_sym_save(const rt_sym_state *s, uint8_t **buf, int64_t *len) {
  if (!s || !buf || !len) return -1;
  size_t nodes = (size_t)s->top * sizeof(rt_sym_node);
  size_t n = sizeof(saved_header) + nodes + (size_t)s->n_vars;
  uint8_t *b = malloc(n ? n : 1);
  if (!b) return -1;
  saved_header h = {SAVE_MAGIC, s->top, s->free_head, s->live, s->live_after_sweep, s->n_rvs, s->n_vars, s->method};
  memcpy(b, &h, sizeof h);
  if (nodes) memcpy(b + sizeof h, s->nodes, nodes);
  if (s->n_vars) memcpy(b + sizeof h + nodes, s->plan, (size_t)s->n_vars);
  *buf = b;
  *len = (int64_t)n;
  return 0;
}

/* A loaded pool is used as the engine left it, so it must be one the engine could have left: every
 * word of a live node names a live node (a node's kind fixes which words are references), a node's
 * fields are in range, no node reaches itself (walks that follow parameters and DS links would not
 * end), the free list threads every free node once, and the counters agree with the nodes.  A
 * checkpoint is outside data (ARCHITECTURE.md, Streaming and the C ABI): anything else is refused. */
static int live_ref(const rt_sym_state *s, uint64_t w) {
  return rt_sym_is_node(w) && rt_sym_index(w) < s->top && s->nodes[rt_sym_index(w)].kind != RT_NODE_FREE;
}

/* The links a walk may follow out of node n: its words, and for a DS parent with a marginal child or
 * a pending posterior the reference in u.memo. */
static int node_links(const rt_sym_node *n, uint64_t out[4]) {
  int k = 0;
  for (int j = 0; j < 3; j++)
    if (rt_sym_is_node(n->w[j])) out[k++] = n->w[j];
  if ((n->kind == RT_NODE_RV && (n->flags & RT_DS_PENDING)) || n->kind == RT_NODE_POST) out[k++] = n->u.memo;
  return k;
}

static int valid_node(const rt_sym_state *s, const rt_sym_node *n) {
  uint64_t links[4];
  int k = node_links(n, links);
  for (int j = 0; j < k; j++)
    if (!live_ref(s, links[j])) return 0;
  switch (n->kind) {
    case RT_NODE_RV:
      if (n->family >= SIRENRT_N_FAMILIES || n->rv_state > RT_RV_OBSERVED || n->ann > SIRENRT_ANN_SYMBOLIC ||
          n->var < -1 || n->var >= s->n_vars || (n->flags & ~(RT_DS_INIT | RT_DS_PENDING)))
        return 0;
      if ((n->flags & RT_DS_PENDING) && s->nodes[rt_sym_index(n->u.memo)].kind != RT_NODE_POST) return 0;
      if (n->family == SIRENRT_FAM_CATEGORICAL && n->rv_state == RT_RV_SYMBOLIC) {
        /* u.value counts the probabilities chained from w[2] in chunks */
        double count = n->u.value;
        int64_t chunks = 0;
        for (uint64_t c = n->w[2]; rt_sym_is_node(c); c = s->nodes[rt_sym_index(c)].w[0])
          if (s->nodes[rt_sym_index(c)].kind != RT_NODE_PROBS || ++chunks > (int64_t)s->top) return 0;
        if (!(count >= 1 && count <= (double)chunks * RT_PROBS_PER_CHUNK) || count != (double)(int64_t)count) return 0;
      }
      return 1;
    case RT_NODE_POST: return n->family < SIRENRT_N_FAMILIES;
    case RT_NODE_PROBS: return !rt_sym_is_node(n->w[0]) || s->nodes[rt_sym_index(n->w[0])].kind == RT_NODE_PROBS;
    default: return n->kind <= RT_NODE_LAST;
  }
}

/* No node reaches itself: a depth-first walk without recursion, each node finished once (its stamp
 * says 1 while on the path, 2 once done; stamps are the walks' and start at 0 on a loaded pool). */
static int acyclic(rt_sym_state *s) {
  uint32_t *stack = malloc((size_t)(s->top ? s->top : 1) * sizeof *stack);
  uint8_t *next = calloc(s->top ? s->top : 1, 1); /* the link of each node on the path to follow next */
  int ok = stack && next;
  for (uint32_t root = 0; ok && root < s->top; root++) {
    if (s->nodes[root].kind == RT_NODE_FREE || s->nodes[root].stamp) continue;
    uint32_t depth = 0;
    stack[depth++] = root;
    s->nodes[root].stamp = 1;
    while (ok && depth) {
      uint32_t i = stack[depth - 1];
      uint64_t links[4];
      int k = node_links(&s->nodes[i], links);
      if (next[i] == k) {
        s->nodes[i].stamp = 2;
        depth--;
        continue;
      }
      uint32_t j = rt_sym_index(links[next[i]++]);
      if (s->nodes[j].stamp == 1) ok = 0;
      else if (!s->nodes[j].stamp) {
        s->nodes[j].stamp = 1;
        stack[depth++] = j;
      }
    }
  }
  for (uint32_t i = 0; i < s->top; i++) s->nodes[i].stamp = 0;
  free(stack);
  free(next);
  return ok;
}

static int valid_pool(rt_sym_state *s) {
  int64_t live = 0, free_nodes = 0;
  for (uint32_t i = 0; i < s->top; i++) {
    const rt_sym_node *n = &s->nodes[i];
    if (n->kind == RT_NODE_FREE) free_nodes++;
    else if (live++, !valid_node(s, n)) return 0;
  }
  if (live != s->live || s->live_after_sweep < 0 || s->live_after_sweep > live || s->n_rvs < 0) return 0;
  /* The free list: free nodes only, each once (the mark is free to use: it starts at 0 too). */
  int64_t listed = 0, ok = 1;
  for (uint32_t i = s->free_head; ok && i != RT_SYM_NONE; i = (uint32_t)s->nodes[i].w[0]) {
    if (i >= s->top || s->nodes[i].kind != RT_NODE_FREE || s->nodes[i].mark) ok = 0;
    else s->nodes[i].mark = 1, listed++;
  }
  for (uint32_t i = 0; i < s->top; i++) s->nodes[i].mark = 0;
  return ok && listed == free_nodes && acyclic(s);
}

rt_sym_state *rt_sym_load(const uint8_t *buf, int64_t len) {
  saved_header h;
  if (!buf || len < (int64_t)sizeof h) return NULL;
  memcpy(&h, buf, sizeof h);
  if (h.magic != SAVE_MAGIC || h.n_vars < 0 || h.top > MAX_NODES || h.method < 0 || h.method >= RT_N_METHODS)
    return NULL;
  size_t nodes = (size_t)h.top * sizeof(rt_sym_node);
  if ((uint64_t)len != sizeof h + nodes + (size_t)h.n_vars) return NULL;
  if (h.free_head != RT_SYM_NONE && h.free_head >= h.top) return NULL;
  rt_sym_state *s = rt_sym_new(h.n_vars, h.method);
  if (!s) return NULL;
  if (h.top) {
    s->nodes = malloc(nodes);
    if (!s->nodes) {
      sym_free(s);
      return NULL;
    }
    memcpy(s->nodes, buf + sizeof h, nodes);
  }
  s->cap = s->top = h.top;
  s->free_head = h.free_head;
  s->live = h.live;
  s->live_after_sweep = h.live_after_sweep;
  s->n_rvs = h.n_rvs;
  if (h.n_vars) memcpy(s->plan, buf + sizeof h + nodes, (size_t)h.n_vars);
  /* Marks and stamps are transient; a stale one would make the next walk skip a node.  Links must
   * stay inside the pool, or a walk would read past it. */
  for (uint32_t i = 0; i < s->top; i++) {
    rt_sym_node *n = &s->nodes[i];
    n->mark = n->stamp = 0;
    int bad = n->kind > RT_NODE_LAST;
    if (n->kind == RT_NODE_FREE) {
      bad |= n->w[0] != RT_SYM_NONE && n->w[0] >= s->top;
    } else {
      for (int k = 0; k < 3; k++) bad |= rt_sym_is_node(n->w[k]) && rt_sym_index(n->w[k]) >= s->top;
      if ((n->kind == RT_NODE_RV && (n->flags & RT_DS_PENDING)) || n->kind == RT_NODE_POST)
        bad |= !rt_sym_is_node(n->u.memo) || rt_sym_index(n->u.memo) >= s->top;
    }
    if (bad) {
      sym_free(s);
      return NULL;
    }
  }
  if (!valid_pool(s)) {
    sym_free(s);
    return NULL;
  }
  return s;
}
