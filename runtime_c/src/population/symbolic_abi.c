/* symbolic_abi.c — symbolic values (-m ssi, ds, bp) on the runtime's side: the exported
 * sirenrt_sym_* functions generated code calls (thin wrappers over the engine, sym.h), and what the
 * population needs of the engine: collection of a stopped particle's state from its roots, the
 * runtime inference plan (ARCHITECTURE.md §16.4) and the bookkeeping of which filters hold states at all.
 *
 * Lifecycle of a particle's state (ctx->sym), kept by the population: created by the engine on the
 * particle's first symbolic operation (rt_sym_own), released when a run restarts and when the filter
 * is freed.  At a resampling the offspring of one parent share its state, exactly as they share its
 * list cells: one rt_sym_retain per extra offspring and one rt_sym_release for a particle left without
 * offspring (barrier.c: count_sym_block), and the copies take the pointer (copy_particle).  Nothing
 * symbolic is copied at the barrier: the engine copies a shared state when an offspring first writes
 * (rt_sym_own).
 *
 * Collection: when a particle stops (at resample(), waiting for a row, or at its end) and the engine
 * says its state is due (rt_sym_collect_due: amortised, by the nodes allocated since the last
 * sweep), the particle takes its state for itself (rt_sym_own: a no-op for a private state, and for a
 * shared one the copy its next write would make anyway), marks every root word and sweeps.  The
 * roots are the frame's 'S' slots at its resume point (model->sym_roots), or a finished particle's
 * result words, and the 'S' elements of every list its list roots reach (young, heap; data rows hold
 * no symbolic words).
 *
 * A filter learns that it holds states from the wrappers here (f->sym_used, set once per run), so the
 * population loop and the barrier of a model without symbolic values never read ctx->sym. */
#include "population.h"
#include "engine/sym.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the ABI -------------------- */

/* A state has just appeared in this particle (or may have): tell the filter, once per run. */
static inline void note_state(sirenrt_ctx *ctx) {
  sirenrt_filter *f = ctx->filter;
  if (ctx->sym && f && !__atomic_load_n(&f->sym_used, __ATOMIC_RELAXED))
    __atomic_store_n(&f->sym_used, 1, __ATOMIC_RELAXED);
}

/* The engine's answer, or the NaN constant once the particle has recorded an error. */
static inline int64_t answer(sirenrt_ctx *ctx, uint64_t w) {
  note_state(ctx);
  return ctx->err_msg ? (int64_t)rt_sym_word(NAN) : (int64_t)w;
}

int64_t sirenrt_sym_add(sirenrt_ctx *ctx, int64_t a, int64_t b) {
  return answer(ctx, rt_sym_binop(ctx, RT_SYM_ADD, (uint64_t)a, (uint64_t)b));
}
int64_t sirenrt_sym_sub(sirenrt_ctx *ctx, int64_t a, int64_t b) {
  return answer(ctx, rt_sym_binop(ctx, RT_SYM_SUB, (uint64_t)a, (uint64_t)b));
}
int64_t sirenrt_sym_mul(sirenrt_ctx *ctx, int64_t a, int64_t b) {
  return answer(ctx, rt_sym_binop(ctx, RT_SYM_MUL, (uint64_t)a, (uint64_t)b));
}
int64_t sirenrt_sym_div(sirenrt_ctx *ctx, int64_t a, int64_t b) {
  return answer(ctx, rt_sym_binop(ctx, RT_SYM_DIV, (uint64_t)a, (uint64_t)b));
}
int64_t sirenrt_sym_eq(sirenrt_ctx *ctx, int64_t a, int64_t b) {
  return answer(ctx, rt_sym_binop(ctx, RT_SYM_EQ, (uint64_t)a, (uint64_t)b));
}
int64_t sirenrt_sym_lt(sirenrt_ctx *ctx, int64_t a, int64_t b) {
  return answer(ctx, rt_sym_binop(ctx, RT_SYM_LT, (uint64_t)a, (uint64_t)b));
}
int64_t sirenrt_sym_neg(sirenrt_ctx *ctx, int64_t a) { return answer(ctx, rt_sym_neg(ctx, (uint64_t)a)); }
int64_t sirenrt_sym_ite(sirenrt_ctx *ctx, int64_t c, int64_t t, int64_t f) {
  return answer(ctx, rt_sym_ite(ctx, (uint64_t)c, (uint64_t)t, (uint64_t)f));
}

double sirenrt_sym_value(sirenrt_ctx *ctx, int64_t w, int32_t site) {
  double out = NAN;
  int status = rt_sym_value(ctx, (uint64_t)w, &out, site);
  note_state(ctx);
  return status ? NAN : out;
}

int64_t sirenrt_sym_assume(sirenrt_ctx *ctx, int32_t family, int64_t p0, int64_t p1, int64_t p2, int32_t var,
                           int32_t annotation, int32_t site) {
  const uint64_t params[3] = {(uint64_t)p0, (uint64_t)p1, (uint64_t)p2};
  uint64_t out = rt_sym_word(NAN);
  int status = rt_sym_assume(ctx, family, params, var, annotation, site, &out);
  note_state(ctx);
  return status ? (int64_t)rt_sym_word(NAN) : (int64_t)out;
}

/* As sirenrt_observe_<family>: the log-likelihood goes to the weight through sirenrt_add_log_weight
 * (-inf and NaN zero the weight and remember the site); on an error the weight is left alone. */
void sirenrt_sym_observe(sirenrt_ctx *ctx, int32_t family, int64_t p0, int64_t p1, int64_t p2, double x,
                         int32_t site) {
  const uint64_t params[3] = {(uint64_t)p0, (uint64_t)p1, (uint64_t)p2};
  double lp = NAN;
  int status = rt_sym_observe(ctx, family, params, x, site, &lp);
  note_state(ctx);
  if (status == 0) sirenrt_add_log_weight(ctx, lp, site);
}

/* ------------------------------------------------------------------ roots ---------------------- */

int rt_type_has_sym(const char *t) {
  const char *end = rt_skip_type(t);
  for (const char *p = t; p < end; p++)
    if (*p == 'S') return 1;
  return 0;
}

int rt_build_symsets(sirenrt_filter *f) {
  const sirenrt_model *m = f->model;
  if (m->n_sym_roots < 0 || (m->n_sym_roots > 0 && !m->sym_roots)) {
    rt_set_last_error("model: bad symbolic root table");
    return -1;
  }
  if (m->n_vars < 0 || (m->n_vars > 0 && !m->vars)) {
    rt_set_last_error("model: bad program variable table");
    return -1;
  }
  int32_t max_pc = -1;
  for (int32_t r = 0; r < m->n_sym_roots; r++) {
    const sirenrt_root *root = &m->sym_roots[r];
    if (root->pc < 0 || root->pc > (1 << 24) || !root->type || strcmp(root->type, "S") != 0 || root->offset % 8 ||
        (uint64_t)root->offset + 8 > m->frame_size) {
      rt_set_last_error("model: bad symbolic root %d", (int)r);
      return -1;
    }
    if (root->pc > max_pc) max_pc = root->pc;
  }
  f->n_symsets = max_pc + 1;
  return rt_group_roots(m->sym_roots, m->n_sym_roots, f->n_symsets, 0, 0, &f->symsets, &f->sym_slots) ? 0 : -1;
}

/* ------------------------------------------------------------------ collection ----------------- */

static const uint64_t *list_cell(const sirenrt_ctx *ctx, int64_t h) {
  if (rt_is_young(h)) return ctx->arena + rt_young_index(h);
  if (rt_is_heap(h)) return rt_heap_cell(h);
  return NULL; /* nil, or a data row (floats only) */
}

/* A visit of each root word of a particle's state: the collector marks them, a loaded checkpoint's
 * are checked (rt_sym_roots_valid). */
typedef void (*sym_visit)(rt_sym_state *s, uint64_t w, void *arg);

static const char *each_in_value(const sirenrt_ctx *ctx, rt_sym_state *s, const uint64_t *words, const char *t,
                                 uint32_t *n, sym_visit visit, void *arg);

/* The 'S' words of every element of list h (element type elem), spines iteratively. */
static void each_in_list(const sirenrt_ctx *ctx, rt_sym_state *s, int64_t h, const char *elem, sym_visit visit,
                         void *arg) {
  const uint64_t *cell;
  while ((cell = list_cell(ctx, h))) {
    uint32_t n = 0;
    each_in_value(ctx, s, cell + 3, elem, &n, visit, arg);
    h = (int64_t)cell[2];
  }
}

/* The 'S' words of a value of type t stored at words[*n ...]; returns the end of t. */
static const char *each_in_value(const sirenrt_ctx *ctx, rt_sym_state *s, const uint64_t *words, const char *t,
                                 uint32_t *n, sym_visit visit, void *arg) {
  switch (*t) {
    case 'S': visit(s, words[(*n)++], arg); return t + 1;
    case 'P': return each_in_value(ctx, s, words, each_in_value(ctx, s, words, t + 1, n, visit, arg), n, visit, arg);
    case 'L':
      if (rt_type_has_sym(t + 1)) each_in_list(ctx, s, (int64_t)words[*n], t + 1, visit, arg);
      (*n)++;
      return rt_skip_type(t + 1);
    case 'u': return t + 1;
    default: (*n)++; return rt_skip_type(t); /* (a view holds no symbolic words) */
  }
}

/* Every root word of particle i's state s: its result's, or its frame's 'S' slots at its resume
 * point and the 'S' elements of the lists its list roots reach. */
static void each_root(sirenrt_filter *f, int64_t i, rt_sym_state *s, sym_visit visit, void *arg) {
  const sirenrt_ctx *c = &f->ctx[i];
  const sirenrt_model *m = f->model;
  uint8_t *frame = f->frames + (size_t)i * m->frame_size;
  if (f->state[i] == SIRENRT_FINISHED) {
    uint32_t n = 0;
    each_in_value(c, s, (const uint64_t *)(frame + m->result_offset), rt_frame_result(m), &n, visit, arg);
    return;
  }
  int32_t pc;
  memcpy(&pc, frame, sizeof pc);
  if (pc >= 0 && pc < f->n_symsets) {
    const rt_rootset *ss = &f->symsets[pc];
    for (int32_t j = 0; j < ss->n; j++) {
      uint64_t w;
      memcpy(&w, frame + ss->slots[j].offset, sizeof w);
      visit(s, w, arg);
    }
  }
  const rt_rootset *rs = rt_roots_now(f, i);
  for (int32_t j = 0; j < rs->n; j++)
    if (rt_type_has_sym(rs->slots[j].elem)) {
      int64_t h;
      memcpy(&h, frame + rs->slots[j].offset, sizeof h);
      each_in_list(c, s, h, rs->slots[j].elem, visit, arg);
    }
}

static void mark_word(rt_sym_state *s, uint64_t w, void *arg) {
  (void)arg;
  if (rt_sym_is_node(w)) rt_sym_mark(s, w);
}

void rt_sym_collect_particle(sirenrt_filter *f, int64_t i, int *failed) {
  sirenrt_ctx *c = &f->ctx[i];
  if (!c->sym || !rt_sym_collect_due(c->sym)) return;
  rt_sym_state *s = rt_sym_own(c);
  if (!s) { /* out of memory copying a shared state: the filter fails */
    *failed = 1;
    return;
  }
  each_root(f, i, s, mark_word, NULL);
  rt_sym_sweep(s);
}

static void check_word(rt_sym_state *s, uint64_t w, void *bad) {
  if (!rt_sym_readable(s, w)) *(int *)bad = 1;
}

int rt_sym_roots_valid(sirenrt_filter *f, int64_t i) {
  int bad = 0;
  each_root(f, i, f->ctx[i].sym, check_word, &bad);
  return !bad;
}

void rt_sym_release_all(sirenrt_filter *f) {
  if (!f->ctx) return;
  for (int64_t i = 0; i < f->n; i++) {
    rt_sym_release(f->ctx[i].sym);
    f->ctx[i].sym = NULL;
  }
  f->sym_used = 0;
}

/* ------------------------------------------------------------------ estimate, plan ------------- */

int rt_sym_estimate_word(sirenrt_ctx *ctx, uint64_t w, double *out) {
  if (!rt_sym_is_node(w)) { /* a constant: no state needed */
    *out = rt_sym_double(w);
    return 0;
  }
  int status = rt_sym_mean(ctx, w, out, -1);
  note_state(ctx);
  return status;
}

static int compare_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return (x > y) - (x < y);
}

int64_t rt_sym_population_nodes(const sirenrt_filter *f) {
  if (!__atomic_load_n(&f->sym_used, __ATOMIC_RELAXED)) return 0;
  rt_sym_state **states = malloc((size_t)f->n * sizeof *states);
  int64_t total = 0, m = 0;
  if (!states) { /* counted once per particle instead */
    for (int64_t i = 0; i < f->n; i++)
      if (f->ctx[i].sym) total += rt_sym_live_nodes(f->ctx[i].sym);
    return total;
  }
  for (int64_t i = 0; i < f->n; i++)
    if (f->ctx[i].sym) states[m++] = f->ctx[i].sym;
  qsort(states, (size_t)m, sizeof *states, compare_ptr);
  for (int64_t k = 0; k < m; k++)
    if (k == 0 || states[k] != states[k - 1]) total += rt_sym_live_nodes(states[k]);
  free(states);
  return total;
}

/* ARCHITECTURE.md §16.4 over the particles as they are now: per particle a variable is `sample` when one of its
 * random variables was sampled, else `symbolic` when one was created; joined across the particles
 * that created one (equal: that encoding, else `dynamic`). */
void rt_plan_of_population(const sirenrt_filter *f, uint8_t *enc) {
  const sirenrt_model *m = f->model;
  const rt_sym_state *last = NULL;
  for (int64_t i = 0; i < f->n; i++) {
    const rt_sym_state *s = f->ctx[i].sym;
    if (!s || s == last) continue; /* offspring sharing a state agree with it */
    last = s;
    for (int32_t v = 0; v < m->n_vars; v++) {
      uint8_t bits = rt_sym_plan_bits(s, v);
      uint8_t e = (bits & 2) ? RT_PLAN_SAMPLE : (bits & 1) ? RT_PLAN_SYMBOLIC : RT_PLAN_NONE;
      rt_plan_join(enc + v, &e, 1);
    }
  }
}

void rt_plan_join(uint8_t *enc, const uint8_t *other, int32_t n) {
  for (int32_t v = 0; v < n; v++)
    if (other[v] != RT_PLAN_NONE) enc[v] = enc[v] == RT_PLAN_NONE || enc[v] == other[v] ? other[v] : RT_PLAN_DYNAMIC;
}

char *rt_plan_render(const sirenrt_model *m, const uint8_t *enc) {
  static const char *const names[] = {"", "symbolic", "sample", "dynamic"};
  size_t len = 1;
  for (int32_t v = 0; v < m->n_vars; v++)
    if (enc[v]) len += strlen(m->vars[v] ? m->vars[v] : "") + 2 + strlen(names[enc[v]]) + 1;
  char *text = malloc(len), *p = text;
  if (!text) return NULL;
  *p = '\0';
  for (int32_t v = 0; v < m->n_vars; v++)
    if (enc[v]) p += sprintf(p, "%s: %s\n", m->vars[v] ? m->vars[v] : "", names[enc[v]]);
  return text;
}

/* Variables no particle created are left out, and the lines follow model->vars. */
const char *sirenrt_filter_runtime_plan(sirenrt_filter *f) {
  if (!f) return "";
  const sirenrt_model *m = f->model;
  if (m->static_runtime_plan) return m->static_runtime_plan;
  free(f->runtime_plan);
  f->runtime_plan = NULL;
  if (m->n_vars <= 0 || !m->vars) return "";
  uint8_t *enc = calloc((size_t)m->n_vars, 1);
  if (!enc) return "";
  rt_plan_of_population(f, enc);
  f->runtime_plan = rt_plan_render(m, enc);
  free(enc);
  return f->runtime_plan ? f->runtime_plan : "";
}
