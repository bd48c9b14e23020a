/* loop.c — the population loop (ARCHITECTURE.md §15.1, and Execution model).
 *
 * Schedule: resume every particle that can proceed, in slot order, until it stops; if any stopped at
 * resample(), the barrier (barrier.c) weighs and resamples the whole population, and the loop goes on.
 * run() goes until every particle has finished; step() until every particle has finished or waits for
 * a row that has not arrived.
 *
 * A pass runs on the filter's threads (pool.c when there are several), each resuming a stretch of
 * slots, through the model's compiled loop where it has one and on the thread's own lanes where that
 * pays; a stream of an older epoch (a resampling since its particle last ran) is rekeyed before its
 * particle resumes. */
#include "population.h"

#include <string.h>

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
 * in L1 when their slots run.  RT_LANE_RUN (base.h): the same on the thread's lanes (below), 8 KiB
 * of contexts that nothing else evicts: runs of 64 took the walk 0.2-0.3 ns a particle-step less than
 * runs of 16 at N = 10^4 and 10^5 (fewer calls of the keying kernel and of the compiled loop). */
enum { RT_SPAN_REKEY = 64, RT_KEY_RUN = RT_RNG_LANES };

/* Slot i's stream, of an older epoch, keyed with the current one: alone and without its first block
 * when lazy, else with the stale slots of [i, i + ahead) and their first blocks. */
static void rekey_stale(sirenrt_filter *f, int64_t i, int64_t hi, int lazy, int64_t ahead) {
  if (lazy) {
    rt_rekey(f, i);
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
 * filter given one context a particle against one keying 16 streams on the stack).  A model with
 * list slots runs there too: a lane's young arena, emptied when the particle that used it is held
 * right after the compiled loop returns, stays in L1, where each particle's own arena was a cache
 * miss at every cons (the walk returning its trajectory at N = 10^5: 78-90 -> 54-59 ns a
 * particle-step, benchmarks/trajectory.py's `returned`, three alternated pairs). */
static int lanes_apply(const sirenrt_filter *f, const sirenrt_span *span) {
  return span && f->keys_due && rt_resamples_always(f) && f->model->n_vars == 0;
}

/* A lane as a particle's context is before it resumes; its arena stays the lane's. */
static void lane_clear(sirenrt_filter *f, sirenrt_ctx *lane) {
  lane->flagged = 0;
  lane->filter = f;
  lane->zero_site = -1;
  lane->zeroed = 0;
  lane->err_site = 0;
  lane->err_msg = NULL;
  lane->want_row = 0; /* (its nursery stays: a lane holds no symbolic state) */
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
    rt_nursery *nursery = lists && f->owns_heap ? rt_heap_nursery(f->heap, k) : NULL;
    for (int l = 0; l < RT_LANE_RUN; l++) {
      lane[l].nursery = nursery;
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
      /* Slots [i, next) stopped at resample(), their young cells still in the cache (in their
       * lanes' arenas, when they ran on lanes). */
      if (lists)
        for (int64_t j = i; j < next; j++) {
          sirenrt_ctx *ran_on = lanes ? &lane[j - view.ctx_first] : &ctx[j];
          if (ran_on->arena_used) /* (what rt_heap_hold asks first: a lane's cells are in the heap) */
            rt_heap_hold(f->heap, k, ran_on, rt_frame_of(f, j), rt_roots_now(f, j), &out->out_of_memory);
        }
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
          /* A particle that finished on its lane with nothing flagged and no young cell (its
           * result's, which its context takes) left nothing there that its context needs (its
           * stream is spent; it recorded no error or zero weight), and its
           * context has nothing flagged either: the last pass of a run, where every particle
           * finishes, reads and writes no context, and the next reset need not rewrite them. */
          if (r == SIRENRT_FINISHED && !ran_on->flagged && !sym && !ran_on->arena_used) continue;
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
      rt_hold_slot(f, k, i, &out->out_of_memory);
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
  rt_forget_maxima(f); /* the pass may change any weight */
  if (f->lists) rt_heap_next_epoch(f->heap); /* what this pass promotes refers back only (heap.c) */
  int threads = rt_team_threads(f);
  rt_run_team(f, threads, resume_range, &a);
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
  if (error >= 0 && (bad < 0 || error <= bad)) return rt_fail_from_particle(f, &f->ctx[error]), -1;
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
    double t = rt_profile_clock(f);
    int any_at_resample = resume_all(f);
    rt_profile_add(f, RT_PHASE_RESUME, &t);
    if (any_at_resample < 0) return 1;
    if (!any_at_resample) return 0;
    if (f->progress && rt_progress(f)) return 1;
    if (rt_barrier(f)) return 1;
  }
}
