/* barrier.c — the resampling barrier (ARCHITECTURE.md §15.1): once every particle that can go on has
 * stopped, the loop (loop.c) calls rt_barrier, which weighs the whole population (finished and
 * row-waiting particles too), records the barrier in the run's history and resamples when due (every
 * time, or under an ESS threshold; an MH chain never does).
 *
 * Resampling keeps a surviving particle in its own slot and copies only the extra offspring into the
 * slots of particles that died, so a population that barely changes costs almost nothing to
 * resample.  Lists and symbolic states are not copied: offspring share them.  After resampling,
 * every slot's stream is of an older epoch, and the next pass rekeys it (loop.c). */
#include "population.h"
#include "engine/sym.h"

#include <stdlib.h>
#include <string.h>

/* No block's largest log weight is known (rt_block.seen_max). */
void rt_forget_maxima(sirenrt_filter *f) {
  for (int64_t b = 0; b < rt_n_blocks(f->n); b++) f->blocks[b].seen_max = NAN;
}

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
                          * pass resets once it has read them (reset and running: see rt_barrier) */
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

/* A finished particle keeps its result's cells young (resume_range): before the copies, whose frames
 * name the cells they share, they move to the heap. */
static void count_block(sirenrt_filter *f, int k, int64_t first, int64_t end, int *failed) {
  for (int64_t i = first; i < end; i++)
    if (f->state[i] == SIRENRT_FINISHED) rt_hold_slot(f, k, i, failed);
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

/* A resample() barrier: check the weights, resample when due, release the waiting particles. */
int rt_barrier(sirenrt_filter *f) {
  int64_t n = f->n, nb = rt_n_blocks(n);
  int threads = rt_team_threads(f);
  int32_t scheme = f->opts.resampler;
  barrier_args a = {.f = f, .n_blocks = nb,
                    .running = scheme == SIRENRT_SYSTEMATIC || scheme == SIRENRT_STRATIFIED,
                    .reset = rt_resamples_always(f)};
  /* When the barrier resamples for sure by running sums, they replace the log weights, which nothing
   * reads again: one population array fewer for the passes to stream.  The weigh pass at N = 10^6:
   * 1.37 -> 1.15 ns a particle-step (SIRENRT_PROFILE, two pairs of 5 runs). */
  a.in_place = a.running && a.reset;
  double t = rt_profile_clock(f);
  rt_run_team(f, threads, weigh_range, &a);
  rt_profile_add(f, RT_PHASE_WEIGH, &t);
  rt_weights s = rt_combine_blocks(f->blocks, nb);
  /* An MH chain's run never resamples, and a zero weight there is a proposal to reject (mh.c). */
  if (s.log_sum == -INFINITY && !f->mh) return rt_zero_weight_error(f);
  int resample = rt_resamples_always(f) || (!f->mh && !(s.ess >= f->opts.ess_threshold * (double)n));
  if (record_history(f, s, resample)) return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  a.lists = f->lists;
  a.sym = __atomic_load_n(&f->sym_used, __ATOMIC_RELAXED);
  __atomic_store_n(&f->arenas_used, 0, __ATOMIC_RELAXED); /* every particle that built cells was held */
  if (!resample) { /* the particles' lists were held as they stopped: nothing to count */
    rt_profile_add(f, RT_PHASE_SERIAL, &t);
    return rt_collect_if_due(f, 0);
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
    rt_profile_add(f, RT_PHASE_SERIAL, &t);
    rt_run_team(f, threads, offspring_range, &a);
    rt_profile_add(f, RT_PHASE_OFFSPRING, &t);
    if (last >= 0) {
      f->counts[last] += (rt_count)left;
      tally_block(f, last / RT_RESAMPLE_BLOCK);
    }
  } else { /* one sequential walk over the normalised weights */
    a.total = s.total;
    rt_profile_add(f, RT_PHASE_SERIAL, &t);
    rt_run_team(f, threads, normalise_range, &a);
    rt_profile_add(f, RT_PHASE_OFFSPRING, &t);
    rt_resample_counts(scheme, f->w, n, &g, f->counts);
    rt_profile_add(f, RT_PHASE_SERIAL, &t);
    rt_run_team(f, threads, tally_range, &a);
    rt_profile_add(f, RT_PHASE_OFFSPRING, &t);
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
  rt_profile_add(f, RT_PHASE_SERIAL, &t);
  if (a.lists || a.sym) {
    if (a.lists) rt_heap_next_epoch(f->heap);
    rt_run_team(f, threads, count_range, &a);
    rt_profile_add(f, RT_PHASE_COUNT, &t);
    if (any_failed(&a, threads)) return rt_filter_fail(f, rt_budget_message(&f->budget));
  }
  rt_run_team(f, threads, copy_range, &a);
  rt_profile_add(f, RT_PHASE_COPY, &t);
  if (rt_collect_if_due(f, 1)) return 1;
  rt_profile_add(f, RT_PHASE_COLLECT, &t);
  f->epoch++;
  /* Every stream is now of an older epoch.  When the last pass drew, the next will draw too: it keys
   * every slot's stream, a run of slots at a time just before it resumes them (resume_range).
   * Otherwise streams are rekeyed one at a time as particles run: a program past its draws, or
   * without any, keys nothing. */
  f->keys_due = !f->rekey_lazy && !f->model->never_draws;
  return 0;
}

