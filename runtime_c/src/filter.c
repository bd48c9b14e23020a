/* filter.c — the particle population and its loop (ARCHITECTURE.md §15.1, ARCHITECTURE.md, Execution model).
 *
 * Schedule: resume every particle that can proceed, in slot order, until it stops; if any stopped at
 * resample(), weigh the whole population (finished and row-waiting particles too), resample it (or
 * not, under an ESS threshold) and repeat.  run() goes until every particle has finished; step()
 * until every particle has finished or waits for a row that has not arrived.
 *
 * Particle i always lives in slot i: frame i of the contiguous frame array and ctx[i].  Resampling
 * keeps a surviving particle in its own slot and copies only the extra offspring into the slots of
 * particles that died, so a population that barely changes costs almost nothing to resample.  After
 * resampling, every slot's stream is rekeyed with the new epoch. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "internal.h"
#include "mh.h"
#include "sym.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int rt_filter_refuse(sirenrt_filter *f, char *msg) {
  /* The loader checks what a checkpoint can break cheaply (checkpoint.c); the engine's deeper
   * invariants (a root variable's parameters, say) are found where they are used, and then the
   * checkpoint, not sirenc, is the likely culprit. */
  if (msg && f->restored && strstr(msg, "internal error")) {
    char *noted = rt_strdup_printf("%s\n  note: this filter was restored from a checkpoint, which may be damaged or "
                                   "forged: a checkpoint sirenc wrote does not do this", msg);
    if (noted) {
      free(msg);
      msg = noted;
    }
  }
  free(f->error);
  f->error = msg ? msg : rt_strdup_printf("error: out of memory");
  return 1;
}

int rt_filter_fail(sirenrt_filter *f, char *msg) {
  f->failed = 1;
  f->est_valid = 0;
  rt_filter_refuse(f, msg);
  free(f->failure);
  f->failure = f->error ? rt_strdup_printf("%s", f->error) : NULL;
  return 1;
}

int rt_filter_failed(sirenrt_filter *f) {
  return rt_filter_refuse(f, rt_strdup_printf("%s", f->failure ? f->failure : "error: the filter's last run failed: "
                                                                               "run() restarts it"));
}

/* Turns a particle's recorded error into the filter's rendered error. */
static int fail_from_particle(sirenrt_filter *f, sirenrt_ctx *c) {
  char *msg = c->err_site == RT_SITE_RENDERED ? rt_strdup_printf("%s", c->err_msg)
                                              : rt_render_site(f->model, c->err_site, "error", c->err_msg);
  rt_free_message(c->err_msg);
  c->err_msg = NULL;
  return rt_filter_fail(f, msg);
}

static uint8_t *frame_of(const sirenrt_filter *f, int64_t i) { return f->frames + (size_t)i * f->model->frame_size; }

static void rekey(sirenrt_filter *f, int64_t i) {
  rt_rng_init(&f->ctx[i].rng, f->seed, (uint64_t)i, f->epoch, RT_DOMAIN_PARTICLE);
}

/* Rekeys the slots of [i, end) whose streams are of an older epoch, each run of consecutive ones
 * together (rt_rng_key_run computes their first blocks with SIMD and stores them in place).  A slot
 * rekeyed ahead of its turn gets the stream it would have got then: it depends only on
 * (seed, slot, epoch). */
static void rekey_ahead(sirenrt_filter *f, int64_t i, int64_t end) {
  sirenrt_ctx *ctx = f->ctx;
  uint32_t epoch = f->epoch;
  while (i < end) {
    while (i < end && ctx[i].rng.ctr[2] == epoch) i++;
    int64_t run = i;
    while (i < end && ctx[i].rng.ctr[2] != epoch) i++;
    if (i > run)
      rt_rng_key_run(&ctx[run].rng, sizeof *ctx, (uint64_t)run, i - run, f->seed, epoch, RT_DOMAIN_PARTICLE);
  }
}

/* Every particle back at the start of the program, weights 1, streams of epoch 0; the data files are
 * dropped unless keep_tables (an MH chain runs the program again over the same data). */
static void reset_population(sirenrt_filter *f, int keep_tables) {
  memset(f->frames, 0, (size_t)f->n * f->model->frame_size);
  f->epoch = 0;
  f->rekey_lazy = 0;
  f->keys_due = !f->model->never_draws;
  memset(f->logw, 0, (size_t)f->n * sizeof(double));
  memset(f->state, SIRENRT_RUNNABLE, (size_t)f->n);
  f->may_resume = 1;
  if (!f->ctx_clean) /* some context was written since the last reset (sirenrt_filter.ctx_clean) */
    for (int64_t i = 0; i < f->n; i++) {
      sirenrt_ctx *c = &f->ctx[i];
      c->arena_used = 0;
      c->zero_site = -1;
      c->zeroed = 0;
      c->want_row = 0;
      if (c->err_msg) rt_free_message(c->err_msg);
      c->err_msg = NULL;
      rekey(f, i);
    }
  f->ctx_clean = 1;
  if (f->sym_used) rt_sym_release_all(f); /* states of the last run (none under pf) */
  if (f->heap && f->owns_heap) rt_heap_clear(f->heap);
  f->budget.over = 0; /* a run that failed at the limit leaves it behind */
  f->log_evidence_done = 0.0;
  f->n_history = 0;
  f->history_dropped_resampled = 0;
  f->progress_steps = 0;
  f->failed = 0;
  free(f->error);
  f->error = NULL;
  free(f->failure);
  f->failure = NULL;
  f->last_zero_site = -1;
  f->est_valid = 0;
  if (!keep_tables)
    for (int32_t k = 0; k < f->model->n_files; k++) rt_table_clear(&f->tables[k]);
}

static sirenrt_ctx *alloc_contexts(int64_t n) {
  size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(sirenrt_ctx); /* a multiple of the alignment */
  sirenrt_ctx *ctx = aligned_alloc(_Alignof(sirenrt_ctx), bytes);
  if (ctx) memset(ctx, 0, bytes);
  return ctx;
}

/* No block's largest log weight is known (rt_block.seen_max). */
static void forget_maxima(sirenrt_filter *f) {
  for (int64_t b = 0; b < rt_n_blocks(f->n); b++) f->blocks[b].seen_max = NAN;
}

int rt_alloc_population(sirenrt_filter *f) {
  size_t n = (size_t)f->n;
  f->frames = aligned_alloc(64, (n * f->model->frame_size + 63) & ~(size_t)63);
  f->ctx = alloc_contexts(f->n);
  f->w = malloc(n * sizeof(double));
  f->logw = malloc(n * sizeof(double));
  f->state = malloc(n);
  f->counts = malloc(n * sizeof *f->counts);
  f->bits.free = malloc(2 * (size_t)rt_bit_words(f->n) * sizeof(uint64_t));
  f->bits.extra = f->bits.free ? f->bits.free + rt_bit_words(f->n) : NULL;
  f->blocks = malloc((size_t)rt_n_blocks(f->n) * sizeof(rt_block));
  if (!f->frames || !f->ctx || !f->w || !f->logw || !f->state || !f->counts || !f->bits.free || !f->blocks)
    return -1;
  for (int64_t i = 0; i < f->n; i++) {
    f->ctx[i].filter = f;
    f->ctx[i].logw = &f->logw[i];
  }
  forget_maxima(f);
  return 0;
}

int rt_zero_weight_error(sirenrt_filter *f) {
  return rt_filter_fail(f, rt_render_site(f->model, f->last_zero_site, "error", "all particles have zero weight"));
}

/* Threads for a pass over the population (sirenrt_filter_new starts a pool only where it pays). */
static int team_size(const sirenrt_filter *f) { return f->pool ? f->threads : 1; }

static void run_team(sirenrt_filter *f, int threads, void (*fn)(void *, int, int), void *arg) {
  if (threads > 1)
    rt_pool_run(f->pool, fn, arg);
  else
    fn(arg, 0, 1);
}

/* SIRENRT_PROFILE: seconds spent in each phase.  profile_add charges the time since *t to a phase and
 * restarts *t; both are free when profiling is off. */
enum { RT_PHASE_RESUME, RT_PHASE_WEIGH, RT_PHASE_OFFSPRING, RT_PHASE_COUNT, RT_PHASE_COPY, RT_PHASE_COLLECT,
       RT_PHASE_SERIAL };

static double profile_clock(const sirenrt_filter *f) {
  if (!f->profile) return 0.0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void profile_add(sirenrt_filter *f, int phase, double *t) {
  if (!f->profile) return;
  double now = profile_clock(f);
  f->profile_s[phase] += now - *t;
  *t = now;
}

/* ------------------------------------------------------------------ the resampling barrier ----- */
/* Every pass of the barrier runs on the whole team, thread k of T taking the blocks
 * [B k / T, B (k+1) / T) of RT_RESAMPLE_BLOCK particles (resample.c); what the passes reduce is
 * combined in block order on one thread, so no answer depends on T. */

typedef struct barrier_args {
  sirenrt_filter *f;
  int64_t n_blocks;
  int running;           /* weigh pass: write running sums, for the systematic and stratified offspring */
  int reset;             /* weigh pass: reset each block's log weights once weighed (the barrier
                          * resamples whatever they are), while they are in the cache */
  int in_place;          /* the running sums are written over the log weights, which the offspring
                          * pass resets once it has read them (reset and running: see barrier) */
  double total;          /* the weights' total S (normalise pass) */
  rt_offspring offspring; /* systematic and stratified offspring pass */
  int64_t n_copies;      /* copy pass */
  int mixed_states;      /* copy pass: not every particle stopped at resample() */
  int lists;             /* count pass: hold the finished particles' lists (f->lists) */
  int sym;               /* count and copy passes: share the offspring's symbolic states */
  int failed[RT_MAX_THREADS];
} barrier_args;

static void blocks_of(const barrier_args *a, int k, int threads, int64_t *lo, int64_t *hi) {
  *lo = a->n_blocks * k / threads;
  *hi = a->n_blocks * (k + 1) / threads;
}

/* The set bits of a bitmap, in ascending order. */
typedef struct bit_walk {
  const uint64_t *bits;
  int64_t word;
  uint64_t left; /* the bits of bits[word] not yet taken */
} bit_walk;

/* A walk that starts at the set bit that has `skip` set bits before it from word `word` on. */
static bit_walk walk_from(const uint64_t *bits, int64_t word, int64_t skip) {
  uint64_t w;
  while ((w = bits[word]), rt_popcount(w) <= skip) {
    skip -= rt_popcount(w);
    word++;
  }
  for (; skip > 0; skip--) w &= w - 1;
  return (bit_walk){bits, word, w};
}

static inline int64_t next_bit(bit_walk *b) {
  while (!b->left) b->left = b->bits[++b->word];
  int64_t i = b->word * 64 + __builtin_ctzll(b->left);
  b->left &= b->left - 1;
  return i;
}

/* The block that holds the j-th free slot (copies 0) or the j-th copy (copies 1): the last one whose
 * offset (blocks[b].n_free or n_copies after the barrier's prefix sums) is at most j. */
static int64_t block_of(const rt_block *blocks, int64_t nb, int64_t j, int copies) {
  int64_t lo = 0, hi = nb; /* the answer lies in [lo, hi) */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if ((copies ? blocks[mid].n_copies : blocks[mid].n_free) <= j) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* Copy j goes to the j-th free slot (ascending) from the j-th extra offspring (ascending: a parent of
 * count c gives c - 1 in a row).  The pairs are walked off the tally's bits, not listed. */
typedef struct copy_walk {
  bit_walk free, extra;
  const rt_count *counts;
  int64_t src, left; /* the parent being copied and its copies still to make */
} copy_walk;

static copy_walk copies_from(const sirenrt_filter *f, int64_t nb, int64_t j) {
  const int64_t words_per_block = RT_RESAMPLE_BLOCK / 64;
  int64_t bf = block_of(f->blocks, nb, j, 0), bc = block_of(f->blocks, nb, j, 1);
  copy_walk w = {walk_from(f->bits.free, bf * words_per_block, j - f->blocks[bf].n_free),
                 walk_from(f->bits.extra, bc * words_per_block, 0), f->counts, 0, 0};
  int64_t skip = j - f->blocks[bc].n_copies;
  for (;;) {
    w.src = next_bit(&w.extra);
    w.left = w.counts[w.src] - 1;
    if (skip < w.left) break;
    skip -= w.left;
  }
  w.left -= skip;
  return w;
}

static inline void next_copy(copy_walk *w, int64_t *dst, int64_t *src) {
  if (!w->left) {
    w->src = next_bit(&w->extra);
    w->left = w->counts[w->src] - 1;
  }
  w->left--;
  *dst = next_bit(&w->free);
  *src = w->src;
}

/* Slot dst becomes a copy of particle src.  Frames are a few words: a word loop beats a memcpy call.
 * Lists are not copied: the frame's handles name heap cells that offspring share (every particle
 * was held, count_block), and the collector finds what no frame reaches any more.  The population's
 * arrays are read once per pass (copy_range), not once per copy: the stores through the frames
 * could alias the filter's fields, so the compiler would load them again at every copy. */
typedef struct copy_view {
  uint64_t *frames;
  size_t words; /* per frame */
  int8_t *state;
  sirenrt_ctx *ctx;
  int sym;      /* some particle holds a symbolic state (f->sym_used) */
} copy_view;

static void copy_particle(const copy_view *v, int64_t dst, int64_t src) {
  uint64_t *d_words = v->frames + (size_t)dst * v->words;
  const uint64_t *s_words = v->frames + (size_t)src * v->words;
  for (size_t k = 0; k < v->words; k++) d_words[k] = s_words[k];
  int8_t state = v->state[src];
  v->state[dst] = state;
  /* The context is not touched unless there is more to copy: the weight is reset and the stream
   * rekeyed anyway, and zero_site only matters while logw is -inf. */
  if (state == SIRENRT_NEED_ROW) v->ctx[dst].want_row = v->ctx[src].want_row;
  /* The symbolic state is shared like the lists: count_sym_block counted it for this copy and
   * dropped the reference of the particle that died here. */
  if (v->sym) v->ctx[dst].sym = v->ctx[src].sym;
}

/* copy_particle for a model without list slots or symbolic states, the frame `words` long (a constant
 * where it is inlined, so the copy is a few moves).  The sources of a chunk of copies are listed
 * first, each parent's first three stored whatever its count (the list has three spare entries; the
 * next parent's overwrite those that are not copies), so only a parent of five or more offspring
 * loops: asking at every copy whether its parent has another one left mispredicted about as often
 * as parents change, and cost the walk about 0.5 ns a particle-step at N = 10^4.
 * Sources and destinations ascend, but with gaps, and once the frames outgrow the caches each copy
 * waited for its lines: the copy asks for the frames RT_COPY_AHEAD bytes past both (and for the
 * counts as far ahead), a few pages beyond where the hardware's prefetchers stop.  The walk at
 * N = 10^6: copy pass 2.1 -> 1.6 ns a particle-step, the whole step 9.4 -> 8.5 (medians of 8 runs
 * in one process); no change at N <= 10^5. */
enum { RT_COPY_AHEAD = 6144 };

static inline __attribute__((always_inline)) void copy_plain(const copy_view *v, copy_walk *walk, int64_t m,
                                                             size_t words, int states) {
  enum { CHUNK = 256 };
  int64_t src_of[CHUNK + 3];
  uint64_t *frames = v->frames;
  int8_t *state_of = v->state;
  const rt_count *counts = walk->counts;
  for (int64_t done = 0; done < m;) {
    int64_t want = m - done < CHUNK ? m - done : CHUNK, k = 0;
    if (walk->left) { /* a parent whose copies the last chunk, or another thread's range, began */
      k = walk->left < want ? walk->left : want;
      for (int64_t t = 0; t < k; t++) src_of[t] = walk->src;
      walk->left -= k;
    }
    while (k < want) {
      int64_t src = next_bit(&walk->extra), copies = counts[src] - 1;
      __builtin_prefetch(counts + src + RT_COPY_AHEAD / sizeof *counts, 0);
      int64_t take = copies < want - k ? copies : want - k;
      src_of[k] = src_of[k + 1] = src_of[k + 2] = src;
      if (__builtin_expect(take > 3, 0))
        for (int64_t t = 3; t < take; t++) src_of[k + t] = src;
      k += take;
      walk->src = src;
      walk->left = copies - take;
    }
    for (int64_t j = 0; j < want; j++) {
      int64_t dst = next_bit(&walk->free), src = src_of[j];
      __builtin_prefetch((const char *)(frames + (size_t)dst * words) + RT_COPY_AHEAD, 1);
      __builtin_prefetch((const char *)(frames + (size_t)src * words) + RT_COPY_AHEAD, 0);
      /* a constant size: the compiler loads the whole frame, then stores it */
      memcpy(frames + (size_t)dst * words, frames + (size_t)src * words, words * sizeof(uint64_t));
      if (!states) continue; /* every particle stopped at resample(): the states are the same */
      int8_t state = state_of[src];
      state_of[dst] = state;
      if (state == SIRENRT_NEED_ROW) v->ctx[dst].want_row = v->ctx[src].want_row;
    }
    done += want;
  }
}

/* Every offspring starts with weight 1: the block's log weights, read by weigh_range, are done with. */
static void reset_weights(sirenrt_filter *f, int64_t b) {
  int64_t lo = rt_block_lo(b);
  memset(f->logw + lo, 0, (size_t)(rt_block_hi(b, f->n) - lo) * sizeof(double));
}

/* Where the weigh pass writes the running sums and the offspring pass reads them (barrier_args.in_place). */
static double *running_sums(const barrier_args *a) { return a->in_place ? a->f->logw : a->f->w; }

static void weigh_range(void *arg, int k, int threads) {
  barrier_args *a = arg;
  sirenrt_filter *f = a->f;
  int64_t lo, hi;
  blocks_of(a, k, threads, &lo, &hi);
  for (int64_t b = lo; b < hi; b++) {
    rt_block *blk = &f->blocks[b];
    rt_weigh_block(f->logw, rt_block_lo(b), rt_block_hi(b, f->n), running_sums(a), a->running, blk->seen_max, blk);
    blk->seen_max = NAN;
    if (a->reset && !a->in_place) reset_weights(f, b);
  }
}

/* The list slots of particle i's frame now: its result's when finished, else those of its pc. */
const rt_rootset *rt_roots_now(const sirenrt_filter *f, int64_t i) {
  static const rt_rootset none = {0, NULL};
  if (f->state[i] == SIRENRT_FINISHED) return &f->result_roots;
  int32_t pc;
  memcpy(&pc, frame_of(f, i), sizeof pc);
  return pc >= 0 && pc < f->n_rootsets ? &f->rootsets[pc] : &none;
}

/* Holds slot i's lists (heap.c): the young cells its frame reaches move to the heap.  The population
 * loop does this as each particle stops, while its cells are still in the cache. */
static void hold_slot(sirenrt_filter *f, int k, int64_t i, int *failed) {
  rt_heap_hold(f->heap, k, &f->ctx[i], frame_of(f, i), rt_roots_now(f, i), failed);
}

int rt_hold_all(sirenrt_filter *f) {
  int failed = 0;
  rt_heap_next_epoch(f->heap);
  for (int64_t i = 0; i < f->n; i++) hold_slot(f, 0, i, &failed);
  return failed ? -1 : 0;
}

/* A finished particle keeps its result's cells young (resume_range): before the copies, whose frames
 * name the cells they share, they move to the heap. */
static void count_block(sirenrt_filter *f, int k, int64_t first, int64_t end, int *failed) {
  for (int64_t i = first; i < end; i++)
    if (f->state[i] == SIRENRT_FINISHED) hold_slot(f, k, i, failed);
}

/* The symbolic states: one reference more for every extra offspring, and a particle left without
 * offspring drops its own (a state its parent shares with a survivor lives on in the survivor's).  Its slot then takes a copy's state (copy_particle). */
static void count_sym_block(sirenrt_filter *f, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) {
    int64_t c = f->counts[i];
    sirenrt_ctx *ctx = &f->ctx[i];
    if (c == 1 || !ctx->sym) continue;
    if (c == 0) {
      rt_sym_release(ctx->sym);
      ctx->sym = NULL;
    } else {
      rt_sym_retain(ctx->sym, c - 1);
    }
  }
}

static void tally_block(sirenrt_filter *f, int64_t b) {
  rt_tally_block(f->counts, rt_block_lo(b), rt_block_hi(b, f->n), &f->bits, &f->blocks[b]);
}

static void offspring_range(void *arg, int k, int threads) {
  barrier_args *a = arg;
  sirenrt_filter *f = a->f;
  int64_t lo, hi;
  blocks_of(a, k, threads, &lo, &hi);
  const double *running = running_sums(a);
  for (int64_t b = lo; b < hi; b++) {
    rt_offspring_block(&a->offspring, running + rt_block_lo(b), rt_block_lo(b), rt_block_hi(b, f->n),
                       &f->blocks[b], f->counts, &f->bits);
    if (!a->reset || a->in_place) reset_weights(f, b);
  }
}

static void normalise_range(void *arg, int k, int threads) {
  barrier_args *a = arg;
  sirenrt_filter *f = a->f;
  int64_t lo, hi;
  blocks_of(a, k, threads, &lo, &hi);
  for (int64_t b = lo; b < hi; b++)
    rt_normalise_block(f->w, rt_block_lo(b), rt_block_hi(b, f->n), &f->blocks[b], a->total);
}

static void tally_range(void *arg, int k, int threads) {
  barrier_args *a = arg;
  int64_t lo, hi;
  blocks_of(a, k, threads, &lo, &hi);
  for (int64_t b = lo; b < hi; b++) {
    tally_block(a->f, b);
    if (!a->reset) reset_weights(a->f, b);
  }
}

/* Promotes the finished particles' lists and counts the symbolic states of each block's particles for
 * their offspring (a model with neither has nothing to do here). */
static void count_range(void *arg, int k, int threads) {
  barrier_args *a = arg;
  sirenrt_filter *f = a->f;
  int64_t lo, hi;
  blocks_of(a, k, threads, &lo, &hi);
  for (int64_t b = lo; b < hi; b++) {
    int64_t first = rt_block_lo(b), end = rt_block_hi(b, f->n);
    if (a->lists) count_block(f, k, first, end, &a->failed[k]);
    if (a->sym) count_sym_block(f, first, end);
  }
}

/* Makes copies [m k / T, m (k+1) / T) (copy_walk), so each thread writes one ascending stretch of
 * frames and contexts, never a neighbour's line. */
static void copy_range(void *arg, int k, int threads) {
  barrier_args *a = arg;
  sirenrt_filter *f = a->f;
  int64_t lo = a->n_copies * k / threads, hi = a->n_copies * (k + 1) / threads;
  if (lo == hi) return;
  const copy_view v = {(uint64_t *)f->frames, f->model->frame_size / 8, f->state, f->ctx, a->sym};
  copy_walk walk = copies_from(f, a->n_blocks, lo);
  if (!a->lists && !v.sym) { /* a frame and a state byte: the word count a constant for small frames */
    switch (v.words) {
#define RT_COPY_CASE(W) \
  case W:               \
    copy_plain(&v, &walk, hi - lo, W, a->mixed_states); \
    return;
      RT_COPY_CASE(1) RT_COPY_CASE(2) RT_COPY_CASE(3) RT_COPY_CASE(4)
      RT_COPY_CASE(5) RT_COPY_CASE(6) RT_COPY_CASE(7) RT_COPY_CASE(8)
#undef RT_COPY_CASE
      default:
        break;
    }
  }
  for (int64_t j = lo; j < hi; j++) {
    int64_t dst, src;
    next_copy(&walk, &dst, &src);
    copy_particle(&v, dst, src);
  }
}

static int any_failed(const barrier_args *a, int threads) {
  for (int k = 0; k < threads; k++)
    if (a->failed[k]) return 1;
  return 0;
}

/* Appends the barrier to the run's history; 0, or -1 out of memory.  Past SIRENRT_HISTORY_ROWS rows it is
 * a ring holding the latest ones: a stream of 10^8 steps kept its every row (5 GB beside the memory
 * limit), and a long-running estimator's user wants the recent barriers, not the first ones. */
static int record_history(sirenrt_filter *f, rt_weights s, int resampled) {
  if (f->n_history == f->cap_history && f->cap_history < SIRENRT_HISTORY_ROWS) {
    int64_t cap = f->cap_history ? 2 * f->cap_history : 64;
    rt_history_row *h = realloc(f->history, (size_t)cap * sizeof *h);
    if (!h) return -1;
    f->history = h;
    f->cap_history = cap;
  }
  int64_t rows = f->stream_open && f->model->n_files > 0 ? f->tables[0].n_rows : -1;
  double log_evidence = f->log_evidence_done + s.log_sum - log((double)f->n);
  rt_history_row *slot = &f->history[f->n_history % SIRENRT_HISTORY_ROWS];
  if (f->n_history >= SIRENRT_HISTORY_ROWS) {
    f->history_dropped_log_evidence = slot->log_evidence;
    f->history_dropped_resampled += slot->resampled;
  }
  *slot = (rt_history_row){s.ess, log_evidence, rows, resampled};
  f->n_history++;
  return 0;
}

static int collect(sirenrt_filter *f, int major, int held);

static void run_on_pool(void *f, void (*fn)(void *, int, int), void *arg) {
  run_team(f, team_size(f), fn, arg);
}

/* Calls fn on every frame word that holds a list (rt_root_walk). */
static void walk_roots(void *arg, rt_root_fn *fn, void *fn_arg) {
  sirenrt_filter *f = arg;
  for (int64_t i = 0; i < f->n; i++) {
    const rt_rootset *rs = rt_roots_now(f, i);
    uint8_t *frame = frame_of(f, i);
    for (int32_t j = 0; j < rs->n; j++) fn(fn_arg, (uint64_t *)(frame + rs->slots[j].offset));
  }
}

/* Collects the heap (heap.c) when enough was allocated since it last did, once every particle's cells
 * are in it.  A filter that borrows the heap (estimate()'s clone) never does: the owner's frames name
 * the cells too.  0, or 1 with the filter failed. */
static int collect_if_due(sirenrt_filter *f, int held) {
  if (!f->lists || !f->owns_heap || !rt_heap_collection_due(f->heap)) return 0;
  return collect(f, 0, held);
}

/* held: every particle is held already (after a resampling's copies), so the contexts need not be
 * visited. */
static int collect(sirenrt_filter *f, int major, int held) {
  if (!held && rt_hold_all(f)) return rt_filter_fail(f, rt_budget_message(&f->budget));
  rt_heap_next_epoch(f->heap);
  rt_team team = {run_on_pool, f, team_size(f)};
  if (rt_heap_collect(f->heap, walk_roots, f, major, &team) == -2) return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  return 0;
}

int rt_filter_collect(sirenrt_filter *f, int major) { return collect(f, major, 0); }

/* Every barrier resamples, whatever the weights: no ESS threshold, and not an MH chain (which never
 * does). */
static int resamples_always(const sirenrt_filter *f) { return !f->mh && !(f->opts.ess_threshold > 0.0); }

/* A resample() barrier: check the weights, resample when due, release the waiting particles. */
static int barrier(sirenrt_filter *f) {
  int64_t n = f->n, nb = rt_n_blocks(n);
  int threads = team_size(f);
  int32_t scheme = f->opts.resampler;
  barrier_args a = {.f = f, .n_blocks = nb,
                    .running = scheme == SIRENRT_SYSTEMATIC || scheme == SIRENRT_STRATIFIED,
                    .reset = resamples_always(f)};
  /* When the barrier resamples for sure by running sums, they replace the log weights, which nothing
   * reads again: one population array fewer for the passes to stream.  The weigh pass at N = 10^6:
   * 1.37 -> 1.15 ns a particle-step (SIRENRT_PROFILE, two pairs of 5 runs). */
  a.in_place = a.running && a.reset;
  double t = profile_clock(f);
  run_team(f, threads, weigh_range, &a);
  profile_add(f, RT_PHASE_WEIGH, &t);
  rt_weights s = rt_combine_blocks(f->blocks, nb);
  /* An MH chain's run never resamples, and a zero weight there is a proposal to reject (mh.c). */
  if (s.log_sum == -INFINITY && !f->mh) return rt_zero_weight_error(f);
  int resample = resamples_always(f) || (!f->mh && !(s.ess >= f->opts.ess_threshold * (double)n));
  if (record_history(f, s, resample)) return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  a.lists = f->lists;
  a.sym = __atomic_load_n(&f->sym_used, __ATOMIC_RELAXED);
  __atomic_store_n(&f->arenas_used, 0, __ATOMIC_RELAXED); /* every particle that built cells was held */
  if (!resample) { /* the particles' lists were held as they stopped: nothing to count */
    profile_add(f, RT_PHASE_SERIAL, &t);
    return collect_if_due(f, 0);
  }
  f->log_evidence_done += s.log_sum - log((double)n);
  rt_rng g;
  rt_rng_init(&g, f->seed, 0, f->epoch, RT_DOMAIN_RESAMPLE);
  if (a.running) {
    rt_offspring_init(&a.offspring, scheme, n, s.total, &g);
    /* Points left over by rounding go to the last live particle, found before the offspring pass
     * resets running sums made in place. */
    int64_t left = rt_offspring_leftover(&a.offspring, s.total);
    int64_t last = left > 0 ? rt_last_live(running_sums(&a), f->blocks, n) : -1;
    profile_add(f, RT_PHASE_SERIAL, &t);
    run_team(f, threads, offspring_range, &a);
    profile_add(f, RT_PHASE_OFFSPRING, &t);
    if (last >= 0) {
      f->counts[last] += (rt_count)left;
      tally_block(f, last / RT_RESAMPLE_BLOCK);
    }
  } else { /* one sequential walk over the normalised weights */
    a.total = s.total;
    profile_add(f, RT_PHASE_SERIAL, &t);
    run_team(f, threads, normalise_range, &a);
    profile_add(f, RT_PHASE_OFFSPRING, &t);
    rt_resample_counts(scheme, f->w, n, &g, f->counts);
    profile_add(f, RT_PHASE_SERIAL, &t);
    run_team(f, threads, tally_range, &a);
    profile_add(f, RT_PHASE_OFFSPRING, &t);
  }
  /* Each block's first free slot and first copy: the tallies of the blocks before it. */
  int64_t n_free = 0, n_copies = 0;
  for (int64_t b = 0; b < nb; b++) {
    int64_t block_free = f->blocks[b].n_free, block_copies = f->blocks[b].n_copies;
    f->blocks[b].n_free = n_free;
    f->blocks[b].n_copies = n_copies;
    n_free += block_free;
    n_copies += block_copies;
  }
  a.n_copies = n_copies;
  if (!a.lists && !a.sym) { /* copy_plain's question (copy_range); the other copies carry every state */
    int8_t other = 0;
    for (int64_t i = 0; i < n; i++) other |= (int8_t)(f->state[i] ^ SIRENRT_AT_RESAMPLE);
    a.mixed_states = other != 0;
    f->may_resume = !a.mixed_states;
  }
  profile_add(f, RT_PHASE_SERIAL, &t);
  if (a.lists || a.sym) {
    if (a.lists) rt_heap_next_epoch(f->heap);
    run_team(f, threads, count_range, &a);
    profile_add(f, RT_PHASE_COUNT, &t);
    if (any_failed(&a, threads)) return rt_filter_fail(f, rt_budget_message(&f->budget));
  }
  run_team(f, threads, copy_range, &a);
  profile_add(f, RT_PHASE_COPY, &t);
  if (collect_if_due(f, 1)) return 1;
  profile_add(f, RT_PHASE_COLLECT, &t);
  f->epoch++;
  /* Every stream is now of an older epoch.  When the last pass drew, the next will draw too: it keys
   * every slot's stream, a run of slots at a time just before it resumes them (resume_range).
   * Otherwise streams are rekeyed one at a time as particles run: a program past its draws, or
   * without any, keys nothing. */
  f->keys_due = !f->rekey_lazy && !f->model->never_draws;
  return 0;
}

/* A particle stopped at resample() may go on once the barrier is behind it, which is always the
 * case when the population loop looks again: so no pass over the contexts marks them runnable. */
static int can_proceed(const sirenrt_filter *f, int64_t i) {
  int8_t state = f->state[i];
  if (state == SIRENRT_RUNNABLE || state == SIRENRT_AT_RESAMPLE) return 1;
  return state == SIRENRT_NEED_ROW && (!f->stream_open || f->ctx[i].want_row < f->tables[0].n_rows);
}

/* What one thread saw while resuming its range of slots. */
typedef struct pass_chunk {
  int any_at_resample;
  int drew;            /* some particle drew from its stream */
  int64_t last_zero;   /* highest slot whose weight became zero, -1 if none */
  int64_t first_error; /* lowest slot that recorded an error, -1 if none */
  int64_t first_bad;   /* lowest slot whose resume broke the protocol, -1 if none */
  int32_t bad_status;
  int out_of_memory;   /* holding some particle's lists failed */
  int touched;         /* some particle's own context was written (sirenrt_filter.ctx_clean) */
} pass_chunk;

typedef struct pass_args {
  sirenrt_filter *f;
  int sym; /* collect symbolic states: some particle held one when the pass began (f->sym_used) */
  const sirenrt_rows *rows; /* sirenrt_stream_rows when the pass began, for every resume */
  pass_chunk chunks[RT_MAX_THREADS];
} pass_args;

/* A stream nothing was drawn from since it was keyed: as rt_rng_init leaves it, or rt_rng_key_run. */
static int untouched(const rt_rng *g) { return (g->ctr[0] == 0 && g->left == 0) | (g->ctr[0] == 1 && g->left == 4); }

/* Streams rekeyed at once when the compiled loop hands back a slot for its stream's epoch: the loop
 * then runs this many slots before it stops again.  RT_KEY_RUN: streams keyed at once when a pass
 * keys them all (keys_due), in the particles' own contexts: one SIMD batch, whose contexts are still
 * in L1 when their slots run.  RT_LANE_RUN (internal.h): the same on the thread's lanes (below), 8 KiB
 * of contexts that nothing else evicts: runs of 64 took the walk 0.2-0.3 ns a particle-step less than
 * runs of 16 at N = 10^4 and 10^5 (fewer calls of the keying kernel and of the compiled loop). */
enum { RT_SPAN_REKEY = 64, RT_KEY_RUN = RT_RNG_LANES };

/* Slot i's stream, of an older epoch, keyed with the current one: alone and without its first block
 * when lazy, else with the stale slots of [i, i + ahead) and their first blocks. */
static void rekey_stale(sirenrt_filter *f, int64_t i, int64_t hi, int lazy, int64_t ahead) {
  if (lazy) {
    rekey(f, i);
    return;
  }
  rekey_ahead(f, i, hi - i < ahead ? hi : i + ahead);
}

/* The span of the population a thread's compiled loop (model->resume_span) may run, or NULL when it
 * may not: symbolic states need the bookkeeping after every resume that only this file does, and an
 * MH chain's trace every draw, which the loop makes inline (sirenrt.h).  The particles of a model
 * with list slots that it runs are held after it returns, a run of them at a time (resume_range). */
static const sirenrt_span *span_view(const sirenrt_filter *f, int sym, const sirenrt_rows *rows, sirenrt_span *v) {
  if (!f->model->resume_span || sym || f->mh) return NULL;
  *v = (sirenrt_span){.ctx = (uint8_t *)f->ctx, .ctx_size = sizeof(sirenrt_ctx),
                      .flagged_offset = offsetof(sirenrt_ctx, flagged),
                      .epoch_offset = offsetof(sirenrt_ctx, rng.ctr[2]), .epoch = f->epoch,
                      .keyed = !f->model->never_draws, .may_resume = f->may_resume,
                      .frames = f->frames, .log_weights = f->logw,
                      .state = f->state, .rows = rows};
  return v;
}

/* Lanes.  In a pass that keys every stream (keys_due), of a model whose compiled loop runs it, that
 * makes no symbolic state and whose next barrier resamples for sure (no ESS threshold, no MH chain),
 * no stream outlives the pass unless its particle is handed back.  So a run of RT_LANE_RUN slots runs
 * on contexts of the thread's own, keyed for those slots and still in L1, and a particle's own
 * context is touched only when the loop hands it back (lane_return).  Keying every particle's own
 * context and reading it back cost the walk about 4 ns a particle-step at N = 10^5 (a hand-written
 * filter given one context a particle against one keying 16 streams on the stack). */
static int lanes_apply(const sirenrt_filter *f, const sirenrt_span *span) {
  /* (the young cells of a particle that ran on a lane stay in the lane's arena unless it is handed
   * back: a model with list slots runs on its own contexts) */
  return span && f->keys_due && resamples_always(f) && f->model->n_vars == 0 && !f->lists;
}

/* A lane as a particle's context is before it resumes; its arena stays the lane's. */
static void lane_clear(sirenrt_filter *f, sirenrt_ctx *lane) {
  lane->flagged = 0;
  lane->filter = f;
  lane->zero_site = -1;
  lane->zeroed = 0;
  lane->err_site = 0;
  lane->err_msg = NULL;
  lane->want_row = 0;
  lane->sym = NULL;
}

/* A particle handed back after it ran on a lane: its context takes what the resume left in the lane
 * (stream, flags, error, awaited row) and the lane's young cells, swapping the lane's arena for its
 * own empty one (every particle that built cells was held, and so emptied, at its last stop). */
static void lane_return(sirenrt_filter *f, sirenrt_ctx *lane, sirenrt_ctx *c) {
  c->rng = lane->rng;
  c->flagged = lane->flagged;
  if (lane->zeroed) {
    c->zeroed = 1;
    c->zero_site = lane->zero_site;
  }
  if (lane->err_msg && !c->err_msg) {
    c->err_site = lane->err_site;
    c->err_msg = lane->err_msg;
  } else if (lane->err_msg) {
    rt_free_message(lane->err_msg);
  }
  c->want_row = lane->want_row;
  if (lane->arena_used) {
    uint64_t *arena = c->arena;
    uint32_t cap = c->arena_cap;
    c->arena = lane->arena;
    c->arena_cap = lane->arena_cap;
    c->arena_used = lane->arena_used;
    lane->arena = arena;
    lane->arena_cap = cap;
    lane->arena_used = 0;
  }
  lane_clear(f, lane);
}

/* The largest log weight of each block a thread's pass resumed whole, taken a run of lanes at a time
 * while the run's weights are in L1 (rt_max_into), so that the barrier's weigh pass need not read the
 * block once more to find it (rt_block.seen_max).  The walk, ns a particle-step, medians of 8
 * alternated processes: 7.09 -> 6.99 at N = 10^5, 7.61 -> 7.52 at 10^6.  A block the thread shares with
 * another stays unknown: no two threads write one.  A maximum is the same in any order (rt_max_of), so
 * the answers do not change. */
typedef struct seen_maxima {
  sirenrt_filter *f;
  int64_t lo, hi; /* the thread's slots */
  int64_t block;  /* the block of the runs taken last, -1 before the first */
  double acc[RT_MAX_LANES];
} seen_maxima;

static void seen_block_done(seen_maxima *s) {
  int64_t b = s->block;
  if (b >= 0 && rt_block_lo(b) >= s->lo && rt_block_hi(b, s->f->n) <= s->hi)
    s->f->blocks[b].seen_max = rt_max_lanes(s->acc);
}

/* Slots [lo, hi), just resumed: a run, in the blocks it overlaps. */
static void see_run(seen_maxima *s, int64_t lo, int64_t hi) {
  while (lo < hi) {
    int64_t b = lo / RT_RESAMPLE_BLOCK, end = rt_block_hi(b, s->f->n) < hi ? rt_block_hi(b, s->f->n) : hi;
    if (b != s->block) {
      seen_block_done(s);
      s->block = b;
      for (int l = 0; l < RT_MAX_LANES; l++) s->acc[l] = -INFINITY;
    }
    rt_max_into(s->f->logw + lo, end - lo, s->acc);
    lo = end;
  }
}

/* Resumes every particle of slots [n k / T, n (k+1) / T) that can proceed.  After a resampling that
 * followed draws (keys_due), every stream is keyed with its first block, RT_KEY_RUN slots (RT_LANE_RUN
 * on lanes) at a time just before they run.  Otherwise a stream of an older epoch is rekeyed when its
 * slot comes: with its first block and the stale slots after it (rekey_ahead) while particles draw,
 * else (no particle drew in the last pass: a program without draws, or past them) alone and without
 * it, the first draw computing it.
 * All give the same words: the answer is the same either way, and so for any number of threads.  Runs
 * of particles that need nothing recorded but their state go through the model's compiled loop when
 * it has one (sirenrt_span_fn); it hands back every other. */
static void resume_range(void *arg, int k, int threads) {
  pass_args *a = arg;
  sirenrt_filter *f = a->f;
  pass_chunk *out = &a->chunks[k];
  *out = (pass_chunk){0, 0, -1, -1, -1, 0, 0, 0};
  int64_t lo = f->n * k / threads, hi = f->n * (k + 1) / threads;
  /* Read once: a resume may write through pointers the compiler cannot tell from f's fields. */
  sirenrt_resume_fn resume = f->model->resume;
  sirenrt_ctx *ctx = f->ctx;
  uint8_t *frames = f->frames;
  double *logw = f->logw; /* ctx[i].logw is &logw[i] */
  size_t frame_size = f->model->frame_size;
  uint32_t epoch = f->epoch;
  int8_t *state = f->state;
  int lists = f->lists, sym = a->sym, lazy = f->rekey_lazy, stream_open = f->stream_open;
  int keyed = !f->model->never_draws; /* a stream nobody draws from may keep its first key */
  const sirenrt_rows *rows = a->rows;
  sirenrt_span view;
  const sirenrt_span *span = span_view(f, sym, rows, &view);
  int drew = 0, any_at_resample = 0;
  int64_t keyed_to = f->keys_due ? lo : hi; /* streams to key before their slots run: [keyed_to, hi) */
  if (f->keys_due) view.keyed = 0; /* every run is keyed before the loop is given it: no epoch to check */
  int lanes = lanes_apply(f, span);
  out->touched = !lanes;
  seen_maxima seen = {f, lo, hi, -1, {0}};
  sirenrt_ctx lane[RT_LANE_RUN];
  if (lanes) {
    memset(lane, 0, sizeof lane);
    for (int l = 0; l < RT_LANE_RUN; l++) {
      lane_clear(f, &lane[l]);
      rt_rng_init(&lane[l].rng, f->seed, 0, 0, 0); /* its key, held from now on: rekeyed without it */
    }
    view.ctx = (uint8_t *)lane;
  }
  for (int64_t i = lo; i < hi; i++) {
    int32_t r;
    sirenrt_ctx *c;
    if (i >= keyed_to) { /* the next run of slots, keyed while their contexts are about to be used */
      int64_t run = lanes ? RT_LANE_RUN : RT_KEY_RUN;
      keyed_to = hi - i < run ? hi : i + run;
      if (lanes) { /* (a lane's weight: rt_ctx_logw) */
        if (i > lo) see_run(&seen, view.ctx_first, i); /* the run before, done */
        view.ctx_first = i;
        rt_rng_rekey_run(&lane[0].rng, sizeof *ctx, (uint64_t)i, keyed_to - i, f->seed, epoch, RT_DOMAIN_PARTICLE);
      } else {
        rt_rng_key_run(&ctx[i].rng, sizeof *ctx, (uint64_t)i, keyed_to - i, f->seed, epoch, RT_DOMAIN_PARTICLE);
      }
    }
    if (span) {
      int64_t got = f->model->resume_span(span, i, keyed_to);
      int64_t next = got & ~(int64_t)SIRENRT_SPAN_RESUMED;
      /* Slots [i, next) stopped at resample(), their young cells still in the cache. */
      if (lists)
        for (int64_t j = i; j < next; j++) hold_slot(f, k, j, &out->out_of_memory);
      /* The compiled loop does not look at the streams: a model that draws may have drawn. */
      drew |= keyed && next > i;
      any_at_resample |= next > i;
      if (next >= keyed_to) {
        i = keyed_to - 1;
        continue;
      }
      i = next;
      c = &ctx[i];
      if (got & SIRENRT_SPAN_RESUMED) {
        r = state[i];
        drew |= keyed;
        if (lanes) {
          sirenrt_ctx *ran_on = &lane[i - view.ctx_first];
          /* A particle that finished on its lane with nothing flagged left nothing there that its
           * context needs (its stream is spent; it recorded no error, zero weight or cell), and its
           * context has nothing flagged either: the last pass of a run, where every particle
           * finishes, reads and writes no context, and the next reset need not rewrite them. */
          if (r == SIRENRT_FINISHED && !ran_on->flagged && !sym) continue;
          lane_return(f, ran_on, c);
          out->touched = 1;
        }
        goto resumed;
      }
      /* Handed back only because its stream is of an older epoch: rekeyed (with the slots after it,
       * RT_SPAN_REKEY of them), it goes back to the span. */
      int8_t s = state[i];
      if ((s == SIRENRT_RUNNABLE || s == SIRENRT_AT_RESAMPLE) && keyed && c->rng.ctr[2] != epoch) {
        rekey_stale(f, i, hi, lazy, RT_SPAN_REKEY);
        i--;
        continue;
      }
    }
    int8_t s = state[i];
    if (s != SIRENRT_RUNNABLE && s != SIRENRT_AT_RESAMPLE && !can_proceed(f, i)) continue;
    c = &ctx[i];
    if (keyed && c->rng.ctr[2] != epoch) rekey_stale(f, i, hi, lazy, RT_RNG_LANES); /* of an older epoch */
    out->touched = 1;
    r = resume(c, frames + (size_t)i * frame_size, &logw[i], rows);
    drew |= !untouched(&c->rng);
    state[i] = (int8_t)r;
  resumed:
    if (c->flagged) { /* only now are the context's cold fields read */
      c->flagged = 0;
      if (c->zeroed) {
        out->last_zero = i;
        c->zeroed = 0;
      }
      if (c->err_msg && out->first_error < 0) out->first_error = i;
    }
    any_at_resample |= r == SIRENRT_AT_RESAMPLE;
    if (r == SIRENRT_AT_RESAMPLE && !lists && !sym) { /* the common stop: nothing to hold or collect */
      if (__builtin_expect(__atomic_load_n(&f->arenas_used, __ATOMIC_RELAXED) == 0, 1)) continue;
    }
    int known = r == SIRENRT_FINISHED || r == SIRENRT_AT_RESAMPLE || (r == SIRENRT_NEED_ROW && stream_open);
    if (!known && out->first_bad < 0) {
      out->first_bad = i;
      out->bad_status = r;
    }
    /* A finished particle keeps its result's cells young, unless a later barrier holds them
     * (count_block): at the end of a run nobody copies them.  A model without list slots reads the
     * filter's flag, not each context's second cache line. */
    if (known && r != SIRENRT_FINISHED && (lists || __atomic_load_n(&f->arenas_used, __ATOMIC_RELAXED)))
      hold_slot(f, k, i, &out->out_of_memory);
    /* Its symbolic state, when it has one and it is due, is collected now (symbolic_abi.c).  A
     * model without symbolic values tests the pass's flag, not the context; a state made during
     * this pass (the first) waits for the next one, whatever the thread that made it. */
    if (sym && known && c->sym) rt_sym_collect_particle(f, i, &out->out_of_memory);
  }
  if (lanes && lo < hi) {
    see_run(&seen, view.ctx_first, hi);
    seen_block_done(&seen);
  }
  if (lanes)
    for (int l = 0; l < RT_LANE_RUN; l++) { /* arenas taken from contexts, or grown for cells */
      if (lane[l].arena) rt_budget_give(&f->budget, lane[l].arena_cap);
      rt_arena_free(&lane[l]);
    }
  out->drew = drew;
  out->any_at_resample = any_at_resample;
}

/* One pass over the population, on the thread pool when there is one.  Errors are reported as a
 * sequential pass would meet them: the lowest failing slot, the highest slot that zeroed its weight
 * last.  Returns -1 with f failed, else whether some particle stopped at resample(). */
static int resume_all(sirenrt_filter *f) {
  pass_args a = {f, __atomic_load_n(&f->sym_used, __ATOMIC_RELAXED), rt_stream_rows(f), {{0}}};
  forget_maxima(f); /* the pass may change any weight */
  if (f->lists) rt_heap_next_epoch(f->heap); /* what this pass promotes refers back only (heap.c) */
  int threads = team_size(f);
  run_team(f, threads, resume_range, &a);
  int any = 0, out_of_memory = 0, drew = 0;
  int64_t error = -1, bad = -1;
  int32_t bad_status = 0;
  for (int k = 0; k < threads; k++) {
    pass_chunk *c = &a.chunks[k];
    any |= c->any_at_resample;
    drew |= c->drew;
    out_of_memory |= c->out_of_memory;
    if (c->touched) f->ctx_clean = 0;
    if (c->last_zero >= 0) f->last_zero_site = f->ctx[c->last_zero].zero_site;
    if (error < 0) error = c->first_error;
    if (bad < 0 && c->first_bad >= 0) {
      bad = c->first_bad;
      bad_status = c->bad_status;
    }
  }
  f->rekey_lazy = !drew;
  f->keys_due = 0;
  f->may_resume = 0; /* the pass wrote what its particles' resumes returned */
  if (error >= 0 && (bad < 0 || error <= bad)) return fail_from_particle(f, &f->ctx[error]), -1;
  if (out_of_memory) return rt_filter_fail(f, rt_budget_message(&f->budget)), -1;
  if (bad >= 0) {
    if (bad_status == SIRENRT_NEED_ROW) /* would wait forever */
      return rt_filter_fail(f, rt_strdup_printf("error: internal error: particle waits for a row of a closed stream")), -1;
    return rt_filter_fail(f, rt_strdup_printf("error: internal error: resume returned %d", (int)bad_status)), -1;
  }
  return any;
}

/* The population loop.  Returns 0, or 1 with the filter failed. */
int rt_advance(sirenrt_filter *f) {
  f->est_valid = 0;
  for (;;) {
    double t = profile_clock(f);
    int any_at_resample = resume_all(f);
    profile_add(f, RT_PHASE_RESUME, &t);
    if (any_at_resample < 0) return 1;
    if (!any_at_resample) return 0;
    if (f->progress && rt_progress(f)) return 1;
    if (barrier(f)) return 1;
  }
}

/* All weights zero at the end is an error, as at a resampling. */
static int check_final_weights(sirenrt_filter *f) {
  if (f->mh) return 0; /* a proposal to reject */
  for (int64_t i = 0; i < f->n; i++)
    if (f->logw[i] != -INFINITY) return 0;
  return rt_zero_weight_error(f);
}

/* ------------------------------------------------------------------ lifecycle ------------------ */

/* Counts (slots == NULL) or lists the 'L' words of a value of type t at byte `offset`. */
static int32_t result_lists(const char *t, uint32_t *offset, rt_root_slot *slots, const char **end) {
  switch (*t) {
    case 'P': {
      const char *second;
      int32_t n = result_lists(t + 1, offset, slots, &second);
      return n + result_lists(second, offset, slots ? slots + n : NULL, end);
    }
    case 'L': {
      if (slots) *slots = (rt_root_slot){*offset, t + 1};
      *offset += 8;
      rt_type_words(t + 1, end);
      return 1;
    }
    case 'u':
      *end = t + 1;
      return 0;
    default:
      *offset += 8;
      *end = t + 1;
      return 0;
  }
}

/* Indexes model->roots by resume point, and the result's list words; 0, or -1 (error set). */
static int build_rootsets(sirenrt_filter *f) {
  const sirenrt_model *m = f->model;
  int32_t max_pc = -1;
  for (int32_t r = 0; r < m->n_roots; r++) {
    const sirenrt_root *root = &m->roots[r];
    const char *end;
    if (root->pc < 0 || root->pc > (1 << 24) || !root->type || root->type[0] != 'L' ||
        rt_type_words(root->type, &end) != 1 || *end || root->offset % 8 || root->offset + 8 > m->frame_size) {
      rt_set_last_error("model: bad list root %d", (int)r);
      return -1;
    }
    if (root->pc > max_pc) max_pc = root->pc;
  }
  const char *end;
  uint32_t offset = m->result_offset;
  int32_t n_result = result_lists(rt_frame_result(m), &offset, NULL, &end);
  f->n_rootsets = max_pc + 1;
  /* A list root's descriptor is "L<elem>": a slot keeps the element type. */
  rt_root_slot *next = rt_group_roots(m->roots, m->n_roots, f->n_rootsets, 1, (size_t)n_result, &f->rootsets,
                                      &f->root_slots);
  if (!next) return -1;
  for (int32_t pc = 0; pc < f->n_rootsets; pc++)
    if (f->rootsets[pc].n > 0) f->lists = 1;
  offset = m->result_offset;
  f->result_roots = (rt_rootset){n_result, next};
  result_lists(rt_frame_result(m), &offset, next, &end);
  if (n_result > 0) f->lists = 1;
  return rt_build_symsets(f);
}

rt_root_slot *rt_group_roots(const sirenrt_root *roots, int32_t n, int32_t n_sets, int32_t skip, size_t extra,
                             rt_rootset **sets, rt_root_slot **slots) {
  *sets = calloc((size_t)n_sets + 1, sizeof(rt_rootset));
  *slots = malloc(((size_t)n + extra + 1) * sizeof(rt_root_slot));
  if (!*sets || !*slots) {
    rt_set_last_error("out of memory");
    return NULL;
  }
  for (int32_t r = 0; r < n; r++) (*sets)[roots[r].pc].n++;
  rt_root_slot *next = *slots;
  for (int32_t pc = 0; pc < n_sets; pc++) {
    (*sets)[pc].slots = next;
    next += (*sets)[pc].n;
    (*sets)[pc].n = 0;
  }
  for (int32_t r = 0; r < n; r++) {
    rt_rootset *rs = &(*sets)[roots[r].pc];
    rs->slots[rs->n++] = (rt_root_slot){roots[r].offset, roots[r].type + skip};
  }
  return next;
}

sirenrt_filter *sirenrt_filter_new(const sirenrt_model *m, int64_t n_particles, uint64_t seed,
                                   const sirenrt_options *opts) {
  const char *end = NULL;
  int64_t words;
  if (!m) return rt_set_last_error("sirenrt_filter_new: no model"), NULL;
  if (m->abi_version != SIRENRT_ABI_VERSION)
    return rt_set_last_error("model '%s' was compiled for runtime ABI %u, this runtime is ABI %d",
                             m->name ? m->name : "?", m->abi_version, SIRENRT_ABI_VERSION), NULL;
  if (!m->resume || m->frame_size < 8 || m->frame_size % 8 || m->result_offset % 8)
    return rt_set_last_error("model '%s': bad frame layout", m->name ? m->name : "?"), NULL;
  if (m->never_draws != 0 && m->never_draws != 1)
    return rt_set_last_error("model '%s': never_draws is %d, not 0 or 1", m->name ? m->name : "?",
                             (int)m->never_draws), NULL;
  if (!m->result_type || (words = rt_type_words(m->result_type, &end)) < 0 || *end != '\0')
    return rt_set_last_error("model: bad result type descriptor '%s'", m->result_type ? m->result_type : ""), NULL;
  if (m->frame_result_type) {
    const char *fr = m->frame_result_type, *first;
    size_t n = strlen(m->result_type);
    if (fr[0] != 'P' || strncmp(fr + 1, m->result_type, n) || (words = rt_type_words(fr, &end)) < 0 || *end ||
        rt_type_words(fr + 1, &first) < 0 || first != fr + 1 + n)
      return rt_set_last_error("model: bad frame result type descriptor '%s'", fr), NULL;
  }
  if ((uint64_t)m->result_offset + 8 * (uint64_t)words > m->frame_size)
    return rt_set_last_error("model: result words lie outside the frame"), NULL;
  if (m->n_files < 0 || m->n_files > RT_MAX_FILES || (m->n_files > 0 && !m->files))
    return rt_set_last_error("model: bad data file table (at most %d files)", RT_MAX_FILES), NULL;
  if (n_particles < 1 || n_particles > SIRENRT_MAX_PARTICLES)
    return rt_set_last_error("sirenrt_filter_new: the number of particles must be in [1, 2^31), got %lld",
                             (long long)n_particles), NULL;
  /* The same ranges as sirenc's filter(): what one refuses, the other refuses too. */
  sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, 1, 0};
  if (opts) o = *opts;
  if (o.threads < 1 || o.threads > RT_MAX_THREADS)
    return rt_set_last_error("sirenrt_filter_new: threads must be an integer in [1, %d], got %d", RT_MAX_THREADS,
                             (int)o.threads), NULL;
  if (o.resampler < SIRENRT_SYSTEMATIC || o.resampler > SIRENRT_RESIDUAL)
    return rt_set_last_error("sirenrt_filter_new: unknown resampler %d (SIRENRT_SYSTEMATIC .. SIRENRT_RESIDUAL)",
                             (int)o.resampler), NULL;
  if (!(o.ess_threshold >= 0.0 && o.ess_threshold <= 1.0))
    return rt_set_last_error("sirenrt_filter_new: ess_threshold must lie in [0, 1], got %g", o.ess_threshold), NULL;
  uint64_t memory_limit, arena_limit_words;
  rt_budget budget;
  if (rt_plan_memory(m, n_particles, o.memory_limit, &memory_limit, &arena_limit_words, &budget)) return NULL;
  o.memory_limit = (int64_t)memory_limit;

  sirenrt_filter *f = calloc(1, sizeof *f);
  if (!f) return rt_set_last_error("out of memory"), NULL;
  pthread_mutex_init(&f->table_lock, NULL);
  f->threads = o.threads;
  /* Below a few thousand particles a thread, waking a team costs more than it saves. */
  if (o.threads > 1 && n_particles >= RT_PARTICLES_PER_THREAD * (int64_t)o.threads &&
      !(f->pool = rt_pool_new(o.threads))) {
    sirenrt_filter_free(f);
    return rt_set_last_error("cannot start %d threads", (int)o.threads), NULL;
  }
  f->model = m;
  f->n = n_particles;
  f->seed = seed;
  f->opts = o;
  f->arena_limit_words = arena_limit_words;
  f->budget = budget;
  f->result_words = (uint32_t)words;
  f->owns_tables = 1;
  /* For benchmarks/threads.py: time the population loop's phases, print them at sirenrt_filter_free. */
  f->profile = getenv("SIRENRT_PROFILE") != NULL;
  f->tables = calloc(m->n_files > 0 ? (size_t)m->n_files : 1, sizeof(rt_table));
  f->heap = rt_heap_new(o.threads);
  f->owns_heap = 1;
  if (f->heap) rt_heap_set_budget(f->heap, &f->budget);
  if (f->tables) /* File.read's tables and the host's rows alike: a stream's rows grow with it */
    for (int32_t k = 0; k < m->n_files; k++) f->tables[k].budget = &f->budget;
  if (build_rootsets(f)) {
    sirenrt_filter_free(f);
    return NULL;
  }
  if (!f->tables || !f->heap || rt_alloc_population(f)) {
    sirenrt_filter_free(f);
    return rt_set_last_error("out of memory for %lld particles", (long long)n_particles), NULL;
  }
  reset_population(f, 0);
  f->mode = RT_MODE_IDLE;
  return f;
}

void sirenrt_filter_free(sirenrt_filter *f) {
  if (!f) return;
  rt_mh_free(f);
  if (f->ctx) {
    for (int64_t i = 0; i < f->n; i++) {
      rt_arena_free(&f->ctx[i]);
      if (f->ctx[i].err_msg) rt_free_message(f->ctx[i].err_msg);
    }
  }
  rt_sym_release_all(f);
  if (f->owns_heap) rt_heap_free(f->heap);
  if (f->owns_heap) {
    free(f->rootsets);
    free(f->root_slots);
    free(f->symsets);
    free(f->sym_slots);
  }
  free(f->runtime_plan);
  if (f->owns_tables && f->tables)
    for (int32_t k = 0; k < f->model->n_files; k++) rt_table_free(&f->tables[k]);
  if (f->owns_tables && f->paths)
    for (int32_t k = 0; k < f->model->n_files; k++) free(f->paths[k]);
  if (f->owns_tables) free(f->paths);
  if (f->owns_tables) free(f->tables);
  free(f->frames);
  free(f->ctx);
  free(f->w);
  free(f->logw);
  free(f->state);
  free(f->counts);
  free(f->bits.free);
  free(f->blocks);
  if (f->profile)
    fprintf(stderr, "sirenrt profile: resume=%.6fs weigh=%.6fs offspring=%.6fs count=%.6fs copy=%.6fs collect=%.6fs "
            "serial=%.6fs\n", f->profile_s[RT_PHASE_RESUME], f->profile_s[RT_PHASE_WEIGH],
            f->profile_s[RT_PHASE_OFFSPRING], f->profile_s[RT_PHASE_COUNT], f->profile_s[RT_PHASE_COPY],
            f->profile_s[RT_PHASE_COLLECT], f->profile_s[RT_PHASE_SERIAL]);
  free(f->error);
  free(f->failure);
  free(f->est);
  free(f->history);
  rt_pool_free(f->pool);
  pthread_mutex_destroy(&f->table_lock);
  free(f);
}

/* ------------------------------------------------------------------ run / step ----------------- */

int32_t sirenrt_filter_run(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols) {
  if (!f) return rt_set_last_error("sirenrt_filter_run: no filter"), 1;
  if (f->mh) return rt_mh_run(f, rows, n_rows, n_cols);
  return rt_filter_run_rows(f, rows, n_rows, n_cols);
}

int32_t rt_filter_rerun(sirenrt_filter *f) {
  reset_population(f, 1);
  f->mode = RT_MODE_RAN;
  if (rt_advance(f)) return 1;
  return check_final_weights(f);
}

int32_t rt_filter_run_rows(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols) {
  reset_population(f, 0);
  f->mode = RT_MODE_RAN;
  f->stream_open = 0;
  if (rows || n_rows > 0) {
    if (!rows || n_rows < 0 || n_cols < 0)
      return rt_filter_fail(f, rt_strdup_printf("error: run: bad data (%lld rows of %lld columns)",
                                                (long long)n_rows, (long long)n_cols));
    if (f->model->n_files < 1)
      return rt_filter_fail(f, rt_strdup_printf("error: this model reads no data file, so rows cannot be supplied"));
    rt_table *t = &f->tables[0];
    for (int64_t r = 0; r < n_rows; r++) {
      int status = rt_table_append_row(t, rows + r * n_cols, n_cols);
      if (status == -2) return rt_filter_fail(f, rt_budget_rows_message(&f->budget, "run", n_rows, n_cols));
      if (status) return rt_filter_fail(f, rt_strdup_printf("error: run: out of memory or too much data for file 0"));
    }
    t->loaded = 1;
  }
  if (rt_advance(f)) return 1;
  if (f->progress && rt_progress_done(f)) return 1;
  return check_final_weights(f);
}

int32_t sirenrt_filter_step(sirenrt_filter *f, const double *row, int64_t n_cols) {
  if (!f) return rt_set_last_error("sirenrt_filter_step: no filter"), 1;
  if (f->mh) /* every iteration re-runs the program over all the data */
    return rt_filter_refuse(f, rt_strdup_printf("error: an MH chain cannot be streamed: give run() all the data"));
  if (!f->model->streamable)
    return rt_filter_refuse(f, rt_strdup_printf("error: this program cannot be run as a stream: %s",
                                                f->model->not_streamable_reason ? f->model->not_streamable_reason
                                                                                : "unknown reason"));
  if (f->model->n_files < 1) return rt_filter_fail(f, rt_strdup_printf("error: a streamable model must read a file"));
  if (f->mode == RT_MODE_STREAMING && f->failed) return rt_filter_failed(f); /* the stream is broken until run() */
  if (n_cols < 0 || (n_cols > 0 && !row))
    return rt_filter_refuse(f, rt_strdup_printf("error: step: bad row (%lld columns)", (long long)n_cols));
  if (f->mode != RT_MODE_STREAMING) { /* a fresh stream */
    reset_population(f, 0);
    f->mode = RT_MODE_STREAMING;
    f->stream_open = 1;
    f->tables[0].loaded = 1;
  }
  int appended = rt_table_append_row(&f->tables[0], row, n_cols);
  if (appended == -2)
    return rt_filter_fail(f, rt_budget_rows_message(&f->budget, "step", f->tables[0].n_rows + 1, n_cols));
  if (appended) return rt_filter_fail(f, rt_strdup_printf("error: step: out of memory or stream too long"));
  if (rt_advance(f)) return 1;
  return check_final_weights(f);
}

/* ------------------------------------------------------------------ queries -------------------- */

double sirenrt_filter_log_evidence(const sirenrt_filter *f) {
  if (!f || f->mh) return NAN; /* MH estimates no evidence */
  double mx = -INFINITY, sum = 0.0;
  for (int64_t i = 0; i < f->n; i++)
    if (f->logw[i] > mx) mx = f->logw[i];
  if (mx == -INFINITY || mx == INFINITY) return f->log_evidence_done + mx;
  for (int64_t i = 0; i < f->n; i++) sum += exp(f->logw[i] - mx);
  return f->log_evidence_done + mx + log(sum) - log((double)f->n);
}

double sirenrt_filter_ess(const sirenrt_filter *f) {
  if (!f) return NAN;
  if (f->mh) return (double)rt_mh_size(f); /* equal weights */
  double mx = -INFINITY, s1 = 0.0, s2 = 0.0;
  for (int64_t i = 0; i < f->n; i++)
    if (f->logw[i] > mx) mx = f->logw[i];
  if (mx == -INFINITY) return 0.0;
  for (int64_t i = 0; i < f->n; i++) {
    double w = mx == INFINITY ? (f->logw[i] == INFINITY) : exp(f->logw[i] - mx);
    s1 += w;
    s2 += w * w;
  }
  return s1 * s1 / s2;
}

int64_t sirenrt_filter_size(const sirenrt_filter *f) { return f ? (f->mh ? rt_mh_size(f) : f->n) : -1; }

int32_t sirenrt_filter_set_file(sirenrt_filter *f, int32_t file_id, const char *path) {
  if (!f) return rt_set_last_error("sirenrt_filter_set_file: no filter"), 1;
  if (file_id < 0 || file_id >= f->model->n_files)
    return rt_filter_refuse(f, rt_strdup_printf("error: set_file: the program reads %d data file%s, there is no file %d",
                                                (int)f->model->n_files, f->model->n_files == 1 ? "" : "s", (int)file_id));
  if (!path || !*path) return rt_filter_refuse(f, rt_strdup_printf("error: set_file: no path"));
  if (!f->paths && !(f->paths = calloc((size_t)f->model->n_files, sizeof(char *))))
    return rt_filter_refuse(f, NULL);
  char *copy = rt_strdup_printf("%s", path);
  if (!copy) return rt_filter_refuse(f, NULL);
  free(f->paths[file_id]);
  f->paths[file_id] = copy;
  return 0;
}

int32_t sirenrt_filter_history(const sirenrt_filter *f, double *ess, double *log_evidence, int32_t *resampled,
                               int64_t *rows, int64_t cap, int64_t *n) {
  if (!f) return rt_set_last_error("sirenrt_filter_history: no filter"), 1;
  /* an MH chain has no resampling barriers */
  int64_t rows_n = f->mh ? 0 : f->n_history < SIRENRT_HISTORY_ROWS ? f->n_history : SIRENRT_HISTORY_ROWS;
  if (n) *n = rows_n;
  if (cap < rows_n) return 2;
  int64_t first = f->mh ? 0 : f->n_history - rows_n;
  for (int64_t k = 0; k < rows_n; k++) {
    const rt_history_row *h = &f->history[(first + k) % SIRENRT_HISTORY_ROWS];
    if (ess) ess[k] = h->ess;
    if (log_evidence) log_evidence[k] = h->log_evidence;
    if (resampled) resampled[k] = h->resampled;
    if (rows) rows[k] = h->rows;
  }
  return 0;
}

int64_t sirenrt_filter_history_dropped(const sirenrt_filter *f, double *log_evidence, int64_t *resampled) {
  if (!f) return rt_set_last_error("sirenrt_filter_history_dropped: no filter"), -1;
  int64_t dropped = f->mh || f->n_history <= SIRENRT_HISTORY_ROWS ? 0 : f->n_history - SIRENRT_HISTORY_ROWS;
  if (log_evidence) *log_evidence = dropped ? f->history_dropped_log_evidence : 0.0;
  if (resampled) *resampled = dropped ? f->history_dropped_resampled : 0;
  return dropped;
}

const char *sirenrt_filter_error(const sirenrt_filter *f) {
  if (!f) return sirenrt_last_error();
  return f->error ? f->error : "";
}

int64_t sirenrt_filter_memory_words(const sirenrt_filter *f) {
  if (!f) return -1;
  int64_t total = rt_heap_live_words(f->heap);
  for (int64_t i = 0; i < f->n; i++) total += f->ctx[i].arena_used;
  return total + rt_sym_population_nodes(f);
}
