/* sym.h — the symbolic engine (-m ssi, ds, bp): a particle's symbolic state, its nodes, ARCHITECTURE.md §6.3's
 * simplification, value forcing (6.4), expected values (10.4), the conjugacy rules (11), SSI (12), DS
 * (13) and BP (14).
 * The face of the engine (runtime_c/src/engine/): the population (its symbolic ABI wrappers, the
 * barrier, estimates, checkpoints) calls these and nothing else of it; sym_node.h is the engine's own.
 * It stands on base/base.h alone.  Private to the runtime.
 *
 * WORDS.  A symbolic word is a double's bit pattern (a constant; bools 0.0/1.0) or a node reference:
 * top 16 bits RT_SYM_TAG, node index in the low 32 bits.  Arithmetic never produces the tag (hardware
 * NaNs are 0x7FF8.../0xFFF8...), and parsed data never does.
 *
 * STATE.  One rt_sym_state per particle (ctx->sym) holds a pool of fixed-size nodes addressed by
 * index: expression nodes (Add, Mul, Div, Ite, Eq, Lt: immutable once built) and random-variable
 * entries (family, parameters as words, point-mass value, annotation, program variable; mutated by
 * hoisting).  A reference is only meaningful in the state of the particle that holds it; a state is
 * copied whole with its indices, so words stored in list cells that offspring share stay valid in
 * every offspring's copy.  After resampling, offspring share one state (reference count); the first
 * write copies it (rt_sym_own): lazy copy-on-write at the granularity of the state.  The collector
 * (rt_sym_mark + rt_sym_sweep) frees nodes that the particle's roots no longer reach; freed indices
 * are reused, so a filter that keeps no history holds a bounded state.
 *
 * PLAN.  Each state records, per program variable (model->vars), whether one of its variables was
 * created and whether one was sampled (ARCHITECTURE.md §16.4: observation never counts as sampling); these bits
 * survive collection, so the runtime plan is recorded incrementally (ARCHITECTURE.md §0.3). */
#ifndef SIRENRT_SYM_H
#define SIRENRT_SYM_H

#include "base/base.h"
#include "methods.h"

#define RT_SYM_TAG UINT64_C(0x7FFD)
static inline int rt_sym_is_node(uint64_t w) { return (w >> 48) == RT_SYM_TAG; }
static inline uint32_t rt_sym_index(uint64_t w) { return (uint32_t)w; }
static inline uint64_t rt_sym_ref(uint32_t i) { return RT_SYM_TAG << 48 | i; }
static inline uint64_t rt_sym_word(double x) { return rt_bits_of(x); }
static inline double rt_sym_double(uint64_t w) { return rt_double_of(w); }

typedef struct rt_sym_state rt_sym_state;

/* The engine (RT_METHOD_* of methods.h, generated from sirenc/methods.py) that a model's method name
 * stands for; -1 for a name with none (pf keeps no state). */
int rt_sym_method(const char *name);

/* Lifecycle.  n_vars: the model's program variables (plan bits).  NULL when out of memory. */
rt_sym_state *rt_sym_new(int32_t n_vars, int32_t method);
void rt_sym_retain(rt_sym_state *s, int64_t refs);  /* atomic: offspring on several threads */
void rt_sym_release(rt_sym_state *s);               /* frees at zero; NULL is a no-op */
/* Counts s against filter f's memory limit: its nodes against the particle's share, its pool
 * against the filter's budget (memory.c), as every state of f's particles is.  -1: the budget
 * cannot hold it (a loaded checkpoint's). */
int rt_sym_attach(rt_sym_state *s, sirenrt_filter *f);
/* The particle's state, private to it: created on first use, copied when shared.  NULL (error
 * recorded on ctx) when out of memory. */
rt_sym_state *rt_sym_own(sirenrt_ctx *ctx);

/* Operators of ARCHITECTURE.md §7.4 (raw nodes; two constants are folded at once). */
enum { RT_SYM_ADD, RT_SYM_SUB, RT_SYM_MUL, RT_SYM_DIV, RT_SYM_EQ, RT_SYM_LT };
uint64_t rt_sym_binop(sirenrt_ctx *ctx, int op, uint64_t a, uint64_t b);
uint64_t rt_sym_neg(sirenrt_ctx *ctx, uint64_t a);
uint64_t rt_sym_ite(sirenrt_ctx *ctx, uint64_t c, uint64_t t, uint64_t f);

/* eval (6.3) of w in the particle's own state: the simplified word, a constant once w no longer
 * depends on a symbolic variable (sampled and observed ones are substituted).  Samples nothing.  A NaN
 * word with the error recorded on ctx when out of memory or w is not a live reference. */
uint64_t rt_sym_simplify(sirenrt_ctx *ctx, uint64_t w);
/* value_expr (6.4): 0 with *out set, or -1 with the error recorded on ctx at site (a plan violation
 * names the variable: "x is annotated as symbolic but will be sampled (forced here)"). */
int rt_sym_value(sirenrt_ctx *ctx, uint64_t w, double *out, int32_t site);
/* The operations of ARCHITECTURE.md §10.3 under the state's method (SSI 12, DS 13, BP 14).  params: the family's
 * parameter words (categorical: lo, hi, probs list handle, whose probabilities the state copies).
 * assume returns the entry's reference, or the drawn value's word for ann SIRENRT_ANN_SAMPLE; observe
 * adds nothing to the weight itself: it returns the log-likelihood in *logp.  -1: error recorded on
 * ctx. */
int rt_sym_assume(sirenrt_ctx *ctx, int32_t family, const uint64_t *params, int32_t var, int32_t ann,
                  int32_t site, uint64_t *out);
int rt_sym_observe(sirenrt_ctx *ctx, int32_t family, const uint64_t *params, double x, int32_t site,
                   double *logp);
/* mean (10.4) for the estimate: may hoist, and sample (recording a plan violation) where it must. */
int rt_sym_mean(sirenrt_ctx *ctx, uint64_t w, double *out, int32_t site);
/* The posterior atom of w for summaries (sirenrt_filter_posterior): its mean as rt_sym_mean computes
 * it, and where w is scale * X + shift of one symbolic variable X, X's family and parameters as
 * marginalised; a point for a constant, SIRENRT_ATOM_MEAN for any other expression. */
int rt_sym_atom(sirenrt_ctx *ctx, uint64_t w, double atom[SIRENRT_ATOM_WORDS], int32_t site);

/* Collection: when rt_sym_collect_due(s), the caller marks every root word (frame 'S' slots, 'S'
 * elements of the lists its roots reach) and then sweeps.  Only on a private state. */
int rt_sym_collect_due(const rt_sym_state *s);
void rt_sym_mark(rt_sym_state *s, uint64_t w);
void rt_sym_sweep(rt_sym_state *s);
int64_t rt_sym_live_nodes(const rt_sym_state *s);

/* Plan bits of program variable v: bit 0 created, bit 1 sampled. */
uint8_t rt_sym_plan_bits(const rt_sym_state *s, int32_t v);

/* Checkpoints: a flat copy of the state (pool, counters, plan bits); -1 out of memory / bad input. */
int rt_sym_save(const rt_sym_state *s, uint8_t **buf, int64_t *len);
/* Whether state s (NULL: none) can read word w: a constant, or a reference to one of its live nodes. */
int rt_sym_readable(const rt_sym_state *s, uint64_t w);
/* Whether state s serves `method` (RT_METHOD_*) over n_vars program variables. */
int rt_sym_serves(const rt_sym_state *s, int method, int32_t n_vars);
rt_sym_state *rt_sym_load(const uint8_t *buf, int64_t len);

#endif
