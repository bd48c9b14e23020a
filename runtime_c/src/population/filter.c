/* filter.c — a filter's life (ARCHITECTURE.md §15.1): sirenrt_filter_new checks the model and the
 * options, plans the memory limit (memory.c) and allocates the population; every run starts from
 * rt_reset_population; sirenrt_filter_free releases it all.
 *
 * Particle i always lives in slot i: frame i of the contiguous frame array and ctx[i], its weight
 * logw[i] and its state byte state[i] in dense arrays beside them.  The population's other files:
 * loop.c (the population loop, on the filter's threads), barrier.c (weights, resampling, history),
 * lists.c (the frames' list roots; holding and collecting lists), run.c (run and step), queries.c
 * (what a host asks between runs), failure.c (the filter's errors), profile.c (SIRENRT_PROFILE). */
#include "population.h"

#include <stdlib.h>
#include <string.h>

static sirenrt_ctx *alloc_contexts(int64_t n) {
  size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(sirenrt_ctx); /* a multiple of the alignment */
  sirenrt_ctx *ctx = aligned_alloc(_Alignof(sirenrt_ctx), bytes);
  if (ctx) memset(ctx, 0, bytes);
  return ctx;
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
  rt_forget_maxima(f);
  return 0;
}

/* Every particle back at the start of the program, weights 1, streams of epoch 0; the data files are
 * dropped unless keep_tables (an MH chain runs the program again over the same data). */
void rt_reset_population(sirenrt_filter *f, int keep_tables) {
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
      rt_rekey(f, i);
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

/* Whether fr is result type rt with some lists stored as views ('V' k a for 'L' a). */
static int views_of(const char *fr, const char *rt) {
  const char *end;
  if (rt_type_words(fr, &end) < 0 || *end) return 0;
  while (*fr && *rt) {
    if (*fr == 'V') {
      if (rt[0] != 'L' || rt[1] != fr[2]) return 0;
      fr += 3;
      rt += 2;
    } else if (*fr++ != *rt++) {
      return 0;
    }
  }
  return !*fr && !*rt;
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
  if (rt_result_views(m)) {
    if (!views_of(m->frame_result_type, m->result_type))
      return rt_set_last_error("model: bad frame result type descriptor '%s'", m->frame_result_type), NULL;
  } else if (m->frame_result_type) {
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
  if (rt_build_rootsets(f) || rt_build_symsets(f)) {
    sirenrt_filter_free(f);
    return NULL;
  }
  if (!f->tables || !f->heap || rt_alloc_population(f)) {
    sirenrt_filter_free(f);
    return rt_set_last_error("out of memory for %lld particles", (long long)n_particles), NULL;
  }
  rt_reset_population(f, 0);
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
  if (f->profile) rt_profile_print(f);
  free(f->error);
  free(f->failure);
  free(f->est);
  free(f->history);
  rt_pool_free(f->pool);
  pthread_mutex_destroy(&f->table_lock);
  free(f);
}
