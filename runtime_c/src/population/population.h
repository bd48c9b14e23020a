/* population.h — the face of the population (runtime_c/src/population/): a filter's particles and
 * everything done to them together (ARCHITECTURE.md §15.1, and Execution model).
 *
 *   a filter's life      filter.c (make, reset, free), failure.c (its errors), memory.c (its limit)
 *   the loop             loop.c (passes over the particles, on pool.c's threads), profile.c
 *   the barrier          barrier.c (weigh, resample, copy, history), resample.c and weights_exp.c
 *                        (the arithmetic of its passes)
 *   lists                lists.c (roots, holding, collecting), heap.c (the shared cells)
 *   data                 data.c (data files and streamed rows)
 *   runs and queries     run.c (run, step), queries.c, estimate.c (the estimator, particles,
 *                        posterior), progress.c (the host's progress hook), checkpoint.c (save, load)
 *   symbolic values      symbolic_abi.c: the sirenrt_sym_* calls of compiled code and what the
 *                        population needs of the engine (engine/sym.h)
 *   MH                   mh.c: a chain, a one-particle filter run again and again
 *
 * It stands on base/base.h and calls the engine only through engine/sym.h; neither calls it
 * (private to the runtime; not installed). */
#ifndef SIRENRT_POPULATION_H
#define SIRENRT_POPULATION_H

#include "base/base.h"

#define RT_MAX_THREADS 256
#define RT_PARTICLES_PER_THREAD 2048

/* What a filter was last asked (f->mode): nothing yet, run() over all its rows, step() a row at a time. */
enum { RT_MODE_IDLE = 0, RT_MODE_RAN = 1, RT_MODE_STREAMING = 2 };

/* A resample() barrier as sirenrt_filter_history reports it. */
typedef struct rt_history_row {
  double ess;          /* of the weights before resampling */
  double log_evidence; /* the filter's log evidence after the barrier */
  int64_t rows;        /* rows of the stream given so far (streaming), else -1 */
  int32_t resampled;
} rt_history_row;

/* heap.c: the population's list cells, which offspring share (see there). */
typedef struct rt_heap rt_heap;
rt_heap *rt_heap_new(int threads); /* one allocator for each of threads 0..threads-1; NULL: OOM */
void rt_heap_set_budget(rt_heap *h, rt_budget *b); /* its chunks count against b */
void rt_heap_clear(rt_heap *h);    /* frees every cell */
void rt_heap_free(rt_heap *h);
int64_t rt_heap_live_words(const rt_heap *h); /* the words of the cells allocated and not yet collected */
/* The chunks the heap took from malloc, and those it took again from what collections freed (spares). */
void rt_heap_chunk_counts(const rt_heap *h, int64_t *fresh, int64_t *reused);
/* A new epoch (heap.c): called between phases that promote cells, on one thread, so that no cell a
 * thread promotes refers to one another thread promoted in the same epoch. */
void rt_heap_next_epoch(rt_heap *h);
/* A particle that stops, on thread k: promotes the young cells its roots `now` reach, rewriting the
 * frame, and resets the young arena.  Sets *failed when out of memory (the frame is then not valid). */
void rt_heap_hold(rt_heap *heap, int k, sirenrt_ctx *ctx, uint8_t *frame, const rt_rootset *now, int *failed);
/* Thread k's nursery (base.h): the lanes of a filter that owns its heap make their cells there. */
rt_nursery *rt_heap_nursery(rt_heap *heap, int k);
/* Calls fn(arg, word, elem) for every list handle word of a value of type t stored at `words` (elem: that
 * list's element type), in order; returns the number of words of t. */
typedef void rt_list_word_fn(void *arg, uint64_t *word, const char *elem);
uint32_t rt_each_list(uint64_t *words, const char *t, rt_list_word_fn *fn, void *arg);
/* A new heap list cell of `payload` words (tail, elements: uninitialised), length `len` and element
 * type `elem` (a descriptor that outlives the heap: the model's, or rt_heap_intern_type's), after
 * every cell it will refer to; SIRENRT_NIL when out of memory.  For checkpoint.c. */
int64_t rt_heap_new_cell(rt_heap *heap, int k, uint32_t payload, uint32_t len, const char *elem);
const char *rt_heap_intern_type(rt_heap *h, const char *desc); /* a copy the heap keeps; NULL: OOM */
/* The collector (heap.c): a minor collection (of the cells promoted since the last), or a major one
 * (of every cell) when `major` is set or it is due.  A root walk calls fn(fn_arg, word) for every
 * frame word that may hold a heap handle; no young arena may refer to a heap cell when it runs (every
 * particle is held).  Returns 0;
 * -1 when it did nothing (out of memory, or the budget cannot hold the copies); -2 when malloc failed
 * while it moved cells: the heap is lost (the filter must fail). */
typedef void rt_root_fn(void *fn_arg, uint64_t *word);
typedef void rt_root_walk(void *arg, rt_root_fn *fn, void *fn_arg);
/* The threads a collection may use: run(arg, fn, fn_arg) calls fn(fn_arg, k, threads) for k = 0 ..
 * threads - 1 and returns when all have (the filter's pool). */
typedef struct rt_team {
  void (*run)(void *arg, void (*fn)(void *, int, int), void *fn_arg);
  void *arg;
  int threads;
} rt_team;
int rt_heap_collect(rt_heap *h, rt_root_walk *walk, void *arg, int major, const rt_team *team);
int rt_heap_collection_due(const rt_heap *h); /* enough was allocated since the last one */

/* data.c: the data files' tables (rt_table) and a stream's rows. */
void rt_table_clear(rt_table *t);
void rt_table_free(rt_table *t);
/* 0 ok, -1 out of memory or too much data, -2 over t->budget */
int rt_table_append_row(rt_table *t, const double *row, int64_t n);
/* Reads a CSV into t; on failure returns nonzero with a malloc'd rendered message in *err: -2 when
 * the file does not fit in t->budget (the message names the file and the limit), else -1. */
int rt_table_read_csv(rt_table *t, const char *path, char **err);
/* File 0's rows as resume reads them in place: the loaded table, else an empty view (data.c). */
const sirenrt_rows *rt_stream_rows(const sirenrt_filter *f);
/* Loads table `id` from disk once per run; 0 ok, else error recorded on ctx. */
int rt_ensure_table(sirenrt_ctx *ctx, int32_t id, int32_t site);
/* The path data file `id` is read from: the one set by sirenrt_filter_set_file, else the model's. */
static inline const char *rt_file_path(const sirenrt_filter *f, int32_t id) {
  return f->paths && f->paths[id] ? f->paths[id] : f->model->files[id];
}

/* failure.c */
int rt_filter_fail(sirenrt_filter *f, char *msg); /* takes ownership of msg; returns 1 */
int rt_filter_refuse(sirenrt_filter *f, char *msg); /* the same, for a call refused: f does not fail */
/* A call refused because f failed: 1, with f's error the failure's again (a refusal since, such as
 * save()'s, replaced it). */
int rt_filter_failed(sirenrt_filter *f);
int rt_fail_from_particle(sirenrt_filter *f, sirenrt_ctx *c); /* fails f with c's error, taken from c */
int rt_zero_weight_error(sirenrt_filter *f);      /* fails f with "all particles have zero weight" */
/* run.c: run() without the MH dispatch; and a run from the start on the data the last run loaded (MH). */
int32_t rt_filter_run_rows(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols);
int32_t rt_filter_rerun(sirenrt_filter *f);
/* progress.c: at a barrier, before it resamples (counts it; calls the hook when its interval has
 * passed), and at the end of run().  Only with f->progress set.  0, or 1 with the filter failed (the hook said stop). */
int rt_progress(sirenrt_filter *f);
int rt_progress_done(sirenrt_filter *f);
/* pool.c: a team of threads running fn(arg, k, threads) for k = 0..threads-1 (k = 0 on the caller). */
typedef struct rt_pool rt_pool;
rt_pool *rt_pool_new(int threads); /* threads >= 2; NULL on failure */
void rt_pool_run(rt_pool *pool, void (*fn)(void *arg, int k, int threads), void *arg);
void rt_pool_free(rt_pool *pool);
/* Threads for a pass over the population (sirenrt_filter_new starts a pool only where it pays), and
 * fn run on them. */
static inline int rt_team_threads(const sirenrt_filter *f) { return f->pool ? f->threads : 1; }
static inline void rt_run_team(sirenrt_filter *f, int threads, void (*fn)(void *, int, int), void *arg) {
  if (threads > 1)
    rt_pool_run(f->pool, fn, arg);
  else
    fn(arg, 0, 1);
}

/* filter.c: allocates f->n particles' frames, contexts (zeroed, cache-line aligned, wired to f and
 * their weight slots) and the population's scratch arrays; 0, or -1 (free with sirenrt_filter_free). */
int rt_alloc_population(sirenrt_filter *f);
/* Every particle back at the start of the program, weights 1, streams of epoch 0; the data files are
 * dropped unless keep_tables (an MH chain runs the program again over the same data). */
void rt_reset_population(sirenrt_filter *f, int keep_tables);
static inline uint8_t *rt_frame_of(const sirenrt_filter *f, int64_t i) {
  return f->frames + (size_t)i * f->model->frame_size;
}
/* Slot i's stream keyed for the current epoch, its first block left to its first draw. */
static inline void rt_rekey(sirenrt_filter *f, int64_t i) {
  rt_rng_init(&f->ctx[i].rng, f->seed, (uint64_t)i, f->epoch, RT_DOMAIN_PARTICLE);
}

/* loop.c: the population loop.  0, or 1 with f failed. */
int rt_advance(sirenrt_filter *f);
/* barrier.c: a resample() barrier: checks the weights, resamples when due and releases the waiting
 * particles.  0, or 1 with f failed. */
int rt_barrier(sirenrt_filter *f);
void rt_forget_maxima(sirenrt_filter *f); /* no block's largest log weight is known (rt_block.seen_max) */
/* Every barrier resamples, whatever the weights: no ESS threshold, and not an MH chain (which never
 * does). */
static inline int rt_resamples_always(const sirenrt_filter *f) { return !f->mh && !(f->opts.ess_threshold > 0.0); }

/* lists.c: indexes model->roots by resume point, and the result's list words; 0, or -1 (error set). */
int rt_build_rootsets(sirenrt_filter *f);
/* Groups n roots (each with a valid pc < n_sets) by resume point: (*sets)[pc] lists their slots, each
 * slot's descriptor the root's from character `skip` on.  *slots holds them with room for `extra`
 * more after them, where the returned pointer points; NULL when out of memory (last error set; what
 * was allocated is in *sets and *slots, for the filter's free). */
rt_root_slot *rt_group_roots(const sirenrt_root *roots, int32_t n, int32_t n_sets, int32_t skip, size_t extra,
                             rt_rootset **sets, rt_root_slot **slots);
/* The list slots of particle i's frame now: its result's when finished, else those of its pc. */
static inline const rt_rootset *rt_roots_now(const sirenrt_filter *f, int64_t i) {
  static const rt_rootset none = {0, NULL};
  if (f->state[i] == SIRENRT_FINISHED) return &f->result_roots;
  int32_t pc;
  memcpy(&pc, rt_frame_of(f, i), sizeof pc);
  return pc >= 0 && pc < f->n_rootsets ? &f->rootsets[pc] : &none;
}
/* Holds slot i's lists (heap.c) on thread k: the young cells its frame reaches move to the heap.  The
 * population loop does this as each particle stops, while its cells are still in the cache. */
static inline void rt_hold_slot(sirenrt_filter *f, int k, int64_t i, int *failed) {
  rt_heap_hold(f->heap, k, &f->ctx[i], rt_frame_of(f, i), rt_roots_now(f, i), failed);
}
/* What the population loop does to each particle's lists as it stops, for every particle: the young
 * cells its frame reaches move to the heap (a no-op for a particle already held).  0, or -1 out of
 * memory. */
int rt_hold_all(sirenrt_filter *f);
/* Holds every particle and collects the heap now (a filter that owns its heap; major: every cell, not
 * only those promoted since the last collection); 0, or 1 with the filter failed. */
int rt_filter_collect(sirenrt_filter *f, int major);
/* The barrier's collection, when one is due (held: every particle is held already); 0, or 1 with f
 * failed. */
int rt_collect_if_due(sirenrt_filter *f, int held);

/* profile.c: SIRENRT_PROFILE's phases.  rt_profile_add charges the time since *t to a phase and
 * restarts *t; both are free when profiling is off. */
enum { RT_PHASE_RESUME, RT_PHASE_WEIGH, RT_PHASE_OFFSPRING, RT_PHASE_COUNT, RT_PHASE_COPY, RT_PHASE_COLLECT,
       RT_PHASE_SERIAL };
double rt_profile_now(void); /* monotonic seconds */
void rt_profile_print(const sirenrt_filter *f); /* to stderr, as sirenrt_filter_free does */
static inline double rt_profile_clock(const sirenrt_filter *f) { return f->profile ? rt_profile_now() : 0.0; }
static inline void rt_profile_add(sirenrt_filter *f, int phase, double *t) {
  if (!f->profile) return;
  double now = rt_profile_now();
  f->profile_s[phase] += now - *t;
  *t = now;
}

/* symbolic_abi.c: runtime plans (ARCHITECTURE.md §16.4) as one encoding byte per program variable (RT_PLAN_*).
 * rt_plan_of_population joins the particles' into enc; rt_plan_join joins n encodings of another
 * run into enc (equal ones stay, different ones are dynamic); rt_plan_render: the text,
 * "x: symbolic\ny: sample\n" in model->vars order, variables never created left out (malloc'd;
 * NULL out of memory). */
enum { RT_PLAN_NONE = 0, RT_PLAN_SYMBOLIC = 1, RT_PLAN_SAMPLE = 2, RT_PLAN_DYNAMIC = 3 };
void rt_plan_of_population(const sirenrt_filter *f, uint8_t *enc);
void rt_plan_join(uint8_t *enc, const uint8_t *other, int32_t n);
char *rt_plan_render(const sirenrt_model *m, const uint8_t *enc);

/* memory.c: the memory limit (see there).  rt_plan_memory resolves a requested limit (0: the default)
 * into *limit and, for n particles of model m, each one's share for lists in words and the budget of
 * what grows while they run; -1 (last error set) when the particles' fixed state alone exceeds it. */
#define RT_MAX_FRAME_BYTES ((uint64_t)1 << 40) /* the frames of a population, whatever the memory limit */
uint64_t rt_default_memory_limit(void);
int rt_plan_memory(const sirenrt_model *m, int64_t n, int64_t requested, uint64_t *limit, uint64_t *share_words,
                   rt_budget *budget);

/* resample.c: the barrier's passes over fixed blocks of particles (whatever the thread count), each
 * reduction in a fixed order inside a block and in block order across blocks, so that the answer does
 * not depend on how many threads ran the blocks. */
#define RT_RESAMPLE_BLOCK 4096
static inline int64_t rt_n_blocks(int64_t n) { return (n + RT_RESAMPLE_BLOCK - 1) / RT_RESAMPLE_BLOCK; }
static inline int64_t rt_bit_words(int64_t n) { return (n + 63) / 64; } /* a bit a slot; a block's start a word's */
/* The set bits of x.  The runtime is built for every x86-64, where __builtin_popcountll is a call into
 * libgcc's table lookup (half a percent of the walk at N = 10^5): these few operations are inline. */
static inline int64_t rt_popcount(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return (int64_t)((x * 0x0101010101010101ull) >> 56);
}
static inline int64_t rt_block_lo(int64_t k) { return k * RT_RESAMPLE_BLOCK; }
static inline int64_t rt_block_hi(int64_t k, int64_t n) {
  return (k + 1) * RT_RESAMPLE_BLOCK < n ? (k + 1) * RT_RESAMPLE_BLOCK : n;
}

typedef struct rt_block {
  double seen_max;    /* resume: m_b as the pass that resumed the block's slots last found it, or NAN; weigh
                       * takes it instead of finding it again, and forgets it */
  double max;         /* weigh: the block's largest log weight m_b */
  double sum, sum_sq; /* weigh: sums of e_i = exp(logw_i - m_b) and of e_i^2 (rt_weigh_sums) */
  double scale;       /* combine: exp(m_b - M), M the population's largest log weight */
  double start;       /* combine: the scaled weight of the blocks before this one */
  int64_t n_free;     /* tally: slots without offspring; then those of the blocks before this one */
  int64_t n_copies;   /* tally: extra offspring; then those of the blocks before this one */
} rt_block;

typedef struct rt_weights {
  double log_sum; /* log sum exp(logw), -inf if every weight is zero */
  double total;   /* S = sum of the blocks' scaled sums (the normalised weight is e_i scale_b / S) */
  double ess;     /* S^2 / sum of the scaled squares */
} rt_weights;

/* weights_exp.c: out[i] = exp(logw[i] - mx) for i < m, where logw[i] - mx <= 0 (or NaN), within 0.6 ulp;
 * the same bits from every kernel. */
void rt_exp_shifted(const double *logw, int64_t m, double mx, double *out);
/* The largest of x[0..m) that is a number, -inf if none; the same from every kernel (but for the sign
 * of a zero). */
double rt_max_of(const double *x, int64_t m);
/* The same maximum a run at a time: acc, RT_MAX_LANES running maxima (-inf to begin), takes x[0..m);
 * rt_max_lanes gives what rt_max_of would of all the runs taken (a zero's sign aside, rt_max_of's
 * caveat). */
#define RT_MAX_LANES 16
void rt_max_into(const double *x, int64_t m, double acc[RT_MAX_LANES]);
double rt_max_lanes(const double acc[RT_MAX_LANES]);
/* Selects the kernels of these for the whole process (tests compare them; not while filters run): 0 the
 * portable scalar code, 1 scalar with FMA, 2 AVX2 and FMA, 3 AVX-512F; a level the CPU lacks is
 * lowered.  Returns the level now in use; -1 only reports it.  The best is chosen when the library
 * loads. */
int rt_exp_kernel(int level);
/* For a run of m slots with mx finite: e_i = exp(logw_i - mx) (rt_exp_shifted's), written to out[i],
 * or when `running` is set their running sums; *sum and *sum_sq, the sums of the e_i and of their
 * squares.  The sums are made in groups of eight slots (weights_exp.c says how): the last running sum
 * is *sum, and every kernel gives the same bits. */
void rt_weigh_sums(const double *logw, int64_t m, double mx, double *out, int running, double *sum, double *sum_sq);

/* Writes, for slots [lo, hi), e_i = exp(logw_i - m_b) or, when `running` is set, the running sum
 * e_lo + ... + e_i (which the systematic and stratified offspring read); and the block's sums.  m_b is
 * `max` when that is not NaN (the largest of the slots' log weights, known already), else found. */
void rt_weigh_block(const double *logw, int64_t lo, int64_t hi, double *out, int running, double max, rt_block *b);
/* Sets every block's scale and start; the population's log sum, total and ESS. */
rt_weights rt_combine_blocks(rt_block *blocks, int64_t nb);
/* e_i becomes the normalised weight e_i scale_b / total for slots [lo, hi). */
void rt_normalise_block(double *e, int64_t lo, int64_t hi, const rt_block *b, double total);
/* All of the above on one thread: w = normalised weights of logw; returns the log sum (-inf: all zero). */
double rt_normalise(const double *logw, int64_t n, double *w);

/* Tallies counts[lo, hi) of block b into bits (rt_bits) and b->n_free, b->n_copies. */
void rt_tally_block(const rt_count *counts, int64_t lo, int64_t hi, const rt_bits *bits, rt_block *b);
/* Selects the vector kernels of the offspring pass (systematic counts, tallies) for the whole process
 * (tests compare them; not while filters run): 0 scalar, 1 SSE2, 2 AVX2, 3 AVX-512F; a level the CPU
 * lacks is lowered.  Returns the level now in use; -1 only reports it.  The best is chosen when the
 * library loads. */
int rt_offspring_kernel(int level);

/* Systematic and stratified offspring, block by block: every block finds its first point from the
 * cumulative weight before it, so blocks run in any order on any thread. */
typedef struct rt_offspring {
  int32_t scheme;  /* SIRENRT_SYSTEMATIC or SIRENRT_STRATIFIED */
  int64_t n;       /* points (= particles) */
  double per_unit; /* points per unit of cumulative weight: N / total */
  double u;        /* the systematic offset: the stream's first uniform */
  rt_rng stream;   /* the resampling stream at its start: stratified point j uses its j-th uniform */
} rt_offspring;
void rt_offspring_init(rt_offspring *o, int32_t scheme, int64_t n, double total, const rt_rng *g);
/* Counts of slots [lo, hi), slot i at cumulative weight b->start + b->scale * running[i - lo] (its
 * block's running sum, rt_weigh_block), tallied as rt_tally_block does when `bits` is not NULL;
 * returns the cumulative weight at the block's end. */
double rt_offspring_block(const rt_offspring *o, const double *running, int64_t lo, int64_t hi, rt_block *b,
                          rt_count *counts, const rt_bits *bits);
/* Points that fell beyond the total by rounding (0 almost always)... */
int64_t rt_offspring_leftover(const rt_offspring *o, double total);
/* ...go to the last live particle, whose running sum (running[i], blocks' sums as rt_weigh_block
 * writes them) grew at its slot: rt_last_live is its slot (0 when none is live). */
int64_t rt_last_live(const double *running, const rt_block *blocks, int64_t n);

/* Offspring counts (sum n) for normalised weights w under any scheme, on one thread (multinomial and
 * residual resampling always run so: their sorted uniforms come from one sequential stream). */
void rt_resample_counts(int32_t scheme, const double *w, int64_t n, rt_rng *g, rt_count *counts);

/* estimate.c */
/* Weighted estimate of the population's results into a malloc'd buffer. 0 ok, else error on f. */
int rt_estimate_population(sirenrt_filter *f, const double *w, double **out, int64_t *n_out);
/* Each particle's own result, flattened as the estimate is, one after another: particle i's words are
 * (*out)[offsets[i] .. offsets[i+1]).  0 ok, else error on f. */
int rt_flatten_particles(sirenrt_filter *f, double **out, int64_t *n_out, int64_t *offsets);
/* The ABI's answer protocol: *n_out = n (when n_out), then src copied to out, or 2 when cap is too
 * small (or out is NULL); 0 otherwise. */
int32_t rt_copy_answer(double *out, int64_t cap, int64_t *n_out, const double *src, int64_t n);
/* The same estimator over n particles given flattened (particle i: values[offsets[i] .. offsets[i+1]))
 * with normalised weights w, for type descriptor `type`, into a malloc'd buffer.  0, or -1 out of
 * memory.  (MH: its samples are kept flattened.) */
int rt_estimate_flat(const char *type, const double *values, const int64_t *offsets, const double *w, int64_t n,
                     double **out, int64_t *n_out);

/* n particles' flattened values of type `type` (offsets as rt_estimate_flat's) as point atoms
 * (sirenrt_filter_posterior's layout, offsets into *out in out_offsets[0 .. n]); -1 out of memory. */
int rt_points_of_flat(const char *type, const double *values, const int64_t *offsets, int64_t n, double **out,
                      int64_t *n_out, int64_t *out_offsets);

/* symbolic_abi.c: the filter's side of symbolic values (the engine is engine/sym.h). */
/* Does type descriptor t (one whole type) contain a symbolic word 'S'? */
int rt_type_has_sym(const char *t);
/* Indexes model->sym_roots by resume point into f->symsets; 0, or -1 (last error set). */
int rt_build_symsets(sirenrt_filter *f);
/* Particle i has stopped (its lists held, or it finished): when its state is due for collection,
 * marks its roots (the frame's 'S' slots at its pc, or its result words; the 'S' elements of the
 * lists its roots reach) and sweeps.  Sets *failed when out of memory. */
void rt_sym_collect_particle(sirenrt_filter *f, int64_t i, int *failed);
/* Whether every root word of particle i (frame slots, list elements, result) is a constant or a live
 * node of its state: a restored checkpoint's are checked before use (checkpoint.c). */
int rt_sym_roots_valid(sirenrt_filter *f, int64_t i);
/* Drops every particle's symbolic state (a run restarts, the filter is freed). */
void rt_sym_release_all(sirenrt_filter *f);
/* The expected value (ARCHITECTURE.md §10.4) of symbolic word w in particle ctx; 0, or -1 with the error on ctx. */
int rt_sym_estimate_word(sirenrt_ctx *ctx, uint64_t w, double *out);
/* Live symbolic nodes over the distinct states of the population. */
int64_t rt_sym_population_nodes(const sirenrt_filter *f);

/* mh.c: the MH chain.  A filter made by sirenrt_filter_new_mh has f->mh set; run.c, queries.c and
 * estimate.c hand its runs and queries to these, which answer from the chain's samples, and filter.c
 * frees it. */
typedef struct rt_mh_chain rt_mh_chain;
int32_t rt_mh_run(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols);
int32_t rt_mh_estimate(sirenrt_filter *f, double *out, int64_t cap, int64_t *n_out);
int32_t rt_mh_particles(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                        double *weights);
/* sirenrt_filter_posterior of a chain: its samples as point atoms. */
int32_t rt_mh_posterior(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                        double *weights);
int64_t rt_mh_size(const sirenrt_filter *f);
const char *rt_mh_runtime_plan(sirenrt_filter *f);
void rt_mh_free(sirenrt_filter *f);
/* For tests (test_mh.c): called after every iteration with the site chosen, log alpha and the
 * decision, so that the ratio can be checked against a hand computation. */
typedef void rt_mh_observer(void *user, int64_t site, double log_alpha, int accepted);
void rt_mh_set_observer(sirenrt_filter *f, rt_mh_observer *fn, void *user);

#endif /* SIRENRT_POPULATION_H */
