/* mh.c — the MH handler (ARCHITECTURE.md §15.2 with the 0.3 decision): lightweight single-site
 * Metropolis–Hastings over the sampled sites of a run, for any method.
 *
 * A chain is a one-particle filter (sirenrt_filter_new_mh, f->mh) that holds the trace in
 * f->mh_live while one of its runs is in progress.  Its barriers never resample (barrier.c), so the
 * particle's log weight is the log likelihood of all observations of the run, and a zero weight is
 * not an error: the run goes on to its end and the proposal is rejected.
 *
 * One iteration: choose a site k of the current trace x uniformly, delete it, run the program again
 * from the start over all the data, with a fresh stream.  A site the new run values is REUSED when
 * x has a value for it (the same value, re-scored under the site's distribution in the new run), and
 * drawn FRESH from that distribution otherwise (k itself, and sites x never reached); sites of x the
 * new run never values are dropped.  With S, S' the valued sites of x and of the proposal x', s, s'
 * their log likelihoods and sc(j), sc'(j) the scores (log densities) of site j in x and x':
 *
 *   target    pi(x)       = exp(s)  * prod_{j in S} exp(sc(j))
 *   proposal  q(x' | x)   = 1/|S|   * prod_{j fresh in x'} exp(sc'(j))
 *   reverse   q(x | x')   = 1/|S'|  * prod_{j in S, not reused by x'} exp(sc(j))
 *
 * (the reverse move chooses k again, which x' always has: the new run repeats the old one exactly
 * until it values k, since every site before it is reused).  The fresh sites' densities cancel
 * against the target's, and so do the dropped sites' and k's old ones, leaving
 *
 *   log alpha = log|S| - log|S'| + (s' - s) + sum_{j reused} (sc'(j) - sc(j)).
 *
 * (The original summed the scores of all sites, fresh ones included, which is not this kernel.)
 * A proposal of zero density (s' = -inf, or a site scored -inf) is rejected; from a current state of
 * zero density (a first run that met one) any other proposal is accepted.
 *
 * Sites are whatever the hooks of base/mh_trace.c see: under -m pf every draw of generated code, where a valid
 * gaussian is drawn inline as mu + sqrt(var) * z and the site is z ~ gaussian(0, 1) (a reused z
 * moves with mu and var: a non-centred parameterisation of the same model, so the same target);
 * under the symbolic engine every random variable it creates, valued when the engine samples it
 * (what it keeps symbolic is integrated out exactly: the observations' log weights are then
 * marginal likelihoods, and the target is the posterior of the sampled sites).
 *
 * Reproducible for a seed: the chain's choices (sites, uniforms) come from the stream (seed, slot 0,
 * domain MH), and run i of the chain draws from the particle stream of a seed taken from stream
 * (seed, slot i + 1, domain MH).  Recorded samples are the current state after iteration i for
 * i = warmup, warmup + thinning, ...: exactly `samples` of them (the original counted thinning from
 * iteration 0, warm-up included, and could record fewer).  Each is kept as its flattened result
 * (rt_flatten_particles: for symbolic words the state's expected value) and its runtime plan, so the
 * estimate is the population estimator over equally weighted samples. */
#include "population.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rt_mh_chain {
  rt_mh_trace trace;    /* the current state's sites and the run's (base/mh_trace.c) */
  uint64_t seed;
  int64_t samples, warmup, thinning;
  int64_t *valued;      /* the valued sites of cur, in order: the uniform choice */
  /* The current state's result, flattened, and its runtime plan. */
  double *cur_flat;
  int64_t cur_n_flat;
  uint8_t *cur_enc;     /* its runtime plan, one RT_PLAN_* byte per program variable */
  /* Recorded samples. */
  double *flat;
  int64_t n_flat, cap_flat;
  int64_t *offsets;     /* n_recorded + 1 */
  int64_t n_recorded, cap_recorded;
  char *plan;           /* their joined runtime plan */
  int64_t iterations, accepted;
  rt_mh_observer *observer; /* tests */
  void *observer_user;
};

/* ------------------------------------------------------------------ the chain ------------------ */

/* The particle stream of run i is keyed by a seed of its own: one shared seed would replay the same
 * fresh draws in every run (the original's bug). */
static uint64_t run_seed(const rt_mh_chain *t, int64_t i) {
  rt_rng g;
  rt_rng_init(&g, t->seed, (uint64_t)i + 1, 0, RT_DOMAIN_MH);
  return rt_next_u64(&g);
}

/* Runs the program once with the trace attached, site `deleted` of the current state to be drawn
 * afresh; the first run of a chain loads the data, the others reuse it.  0, or 1 with f failed. */
static int run_proposal(sirenrt_filter *f, rt_mh_chain *t, int64_t i, int64_t deleted, const double *rows,
                        int64_t n_rows, int64_t n_cols) {
  t->trace.prop.n = 0;
  t->trace.prop.n_valued = 0;
  t->trace.prop.zero = 0;
  t->trace.deleted = deleted;
  t->trace.reused_delta = 0.0;
  f->seed = run_seed(t, i);
  f->mh_live = &t->trace;
  if (i == 0)
    rt_filter_run_rows(f, rows, n_rows, n_cols);
  else
    rt_filter_rerun(f);
  f->mh_live = NULL;
  return f->failed;
}

/* The proposal becomes the current state: its sites, its flattened result and runtime plan (read
 * with the trace detached, so that a draw the estimate needs is not a site). */
static int accept_proposal(sirenrt_filter *f, rt_mh_chain *t) {
  rt_mh_sites tmp = t->trace.cur;
  t->trace.cur = t->trace.prop;
  t->trace.prop = tmp;
  if (t->trace.cur.n_valued > 0 && !(t->valued = realloc(t->valued, (size_t)t->trace.cur.n_valued * sizeof(int64_t))))
    return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  for (int64_t k = 0, j = 0; k < t->trace.cur.n; k++)
    if (t->trace.cur.valid[k]) t->valued[j++] = k;
  int64_t offsets[2];
  double *flat = NULL;
  if (rt_flatten_particles(f, &flat, &t->cur_n_flat, offsets)) return 1;
  free(t->cur_flat);
  t->cur_flat = flat;
  if (f->model->n_vars > 0) {
    if (!t->cur_enc && !(t->cur_enc = malloc((size_t)f->model->n_vars)))
      return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
    memset(t->cur_enc, RT_PLAN_NONE, (size_t)f->model->n_vars);
    rt_plan_of_population(f, t->cur_enc);
  }
  return 0;
}

/* log alpha of the header's formula; -inf for a proposal of zero density. */
static double log_acceptance(const rt_mh_chain *t, double s_cur, double s_new) {
  if (!(s_new > -INFINITY) || t->trace.prop.zero) return -INFINITY;
  if (!(s_cur > -INFINITY) || t->trace.cur.zero) return INFINITY;
  double a = log((double)t->trace.cur.n_valued) - log((double)t->trace.prop.n_valued) + (s_new - s_cur) + t->trace.reused_delta;
  return isnan(a) ? -INFINITY : a;
}

/* The current state becomes a sample. */
static int record(sirenrt_filter *f, rt_mh_chain *t, uint8_t *enc) {
  if (rt_grow((void **)&t->flat, sizeof(double), t->n_flat + t->cur_n_flat, &t->cap_flat) ||
      rt_grow((void **)&t->offsets, sizeof(int64_t), t->n_recorded + 2, &t->cap_recorded))
    return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  if (t->cur_n_flat) memcpy(t->flat + t->n_flat, t->cur_flat, (size_t)t->cur_n_flat * sizeof(double));
  t->offsets[t->n_recorded] = t->n_flat;
  t->n_flat += t->cur_n_flat;
  t->offsets[++t->n_recorded] = t->n_flat;
  if (t->cur_enc) rt_plan_join(enc, t->cur_enc, f->model->n_vars);
  return 0;
}

static int render_plan(sirenrt_filter *f, rt_mh_chain *t, const uint8_t *enc) {
  char *text = rt_plan_render(f->model, enc);
  if (!text) return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  free(t->plan);
  t->plan = text;
  return 0;
}

static int chain(sirenrt_filter *f, rt_mh_chain *t, const double *rows, int64_t n_rows, int64_t n_cols,
                 uint8_t *enc) {
  rt_rng g; /* the chain's own choices */
  rt_rng_init(&g, t->seed, 0, 0, RT_DOMAIN_MH);
  /* ARCHITECTURE.md §15.2 step 1: a first run from the prior is the initial state. */
  if (run_proposal(f, t, 0, -1, rows, n_rows, n_cols) || accept_proposal(f, t)) return 1;
  double s_cur = f->logw[0];
  int64_t total = t->warmup + t->samples * t->thinning;
  for (int64_t i = 0; i < total; i++) {
    if (t->trace.cur.n_valued == 0) /* nothing random is sampled: the one state is the answer */
      return record(f, t, enc);
    int64_t k = t->valued[rt_below(&g, (uint64_t)t->trace.cur.n_valued)];
    if (run_proposal(f, t, i + 1, k, rows, n_rows, n_cols)) return 1;
    double s_new = f->logw[0], la = log_acceptance(t, s_cur, s_new);
    t->iterations++;
    int accepted = log(rt_uniform_pos(&g)) < la;
    if (t->observer) t->observer(t->observer_user, k, la, accepted);
    if (accepted) {
      if (accept_proposal(f, t)) return 1;
      s_cur = s_new;
      t->accepted++;
    }
    if (i >= t->warmup && (i - t->warmup) % t->thinning == 0 && record(f, t, enc)) return 1;
  }
  return 0;
}

int32_t rt_mh_run(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols) {
  rt_mh_chain *t = f->mh;
  t->trace.cur.n = t->trace.cur.n_valued = t->trace.cur.zero = 0;
  t->n_flat = t->n_recorded = t->iterations = t->accepted = 0;
  free(t->plan);
  t->plan = NULL;
  uint8_t *enc = calloc(f->model->n_vars > 0 ? (size_t)f->model->n_vars : 1, 1);
  if (!enc) return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  /* The progress hook counts resampling barriers, which a chain's runs have but do not resample at:
   * its reports would describe one run of many, so the chain keeps it off. */
  sirenrt_progress_fn progress = f->progress;
  f->progress = NULL;
  int status = chain(f, t, rows, n_rows, n_cols, enc);
  f->progress = progress;
  f->seed = t->seed;
  if (!status) status = render_plan(f, t, enc);
  free(enc);
  if (status) t->n_recorded = 0;
  return status;
}

/* ------------------------------------------------------------------ the samples ---------------- */

static int no_samples(sirenrt_filter *f) {
  if (f->failed) return 1;
  if (f->mh->n_recorded > 0) return 0;
  return rt_filter_refuse(f, rt_strdup_printf("error: the MH chain has no samples yet: call run() first"));
}

int32_t rt_mh_estimate(sirenrt_filter *f, double *out, int64_t cap, int64_t *n_out) {
  rt_mh_chain *t = f->mh;
  if (no_samples(f)) return 1;
  double *w = malloc((size_t)t->n_recorded * sizeof(double)), *est = NULL;
  int64_t n_est = 0;
  for (int64_t i = 0; w && i < t->n_recorded; i++) w[i] = 1.0 / (double)t->n_recorded;
  int failed = !w || rt_estimate_flat(f->model->result_type, t->flat, t->offsets, w, t->n_recorded, &est, &n_est);
  free(w);
  if (failed) return rt_filter_refuse(f, rt_strdup_printf("error: out of memory"));
  int32_t status = rt_copy_answer(out, cap, n_out, est, n_est);
  free(est);
  return status;
}

/* The samples as sirenrt_filter_particles gives a population's (atoms: as sirenrt_filter_posterior's,
 * each number a point), each of weight 1/samples. */
static int32_t read_samples(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                            double *weights, int atoms, const char *entry) {
  rt_mh_chain *t = f->mh;
  if (no_samples(f)) return 1;
  if (!offsets || !weights)
    return rt_filter_refuse(f, rt_strdup_printf("error: %s: offsets and weights are required", entry));
  double *flat = t->flat, *points = NULL;
  int64_t n_flat = t->n_flat;
  if (!atoms)
    memcpy(offsets, t->offsets, (size_t)(t->n_recorded + 1) * sizeof(int64_t));
  else if (rt_points_of_flat(f->model->result_type, t->flat, t->offsets, t->n_recorded, &points, &n_flat, offsets))
    return rt_filter_refuse(f, rt_strdup_printf("error: out of memory"));
  else
    flat = points;
  for (int64_t i = 0; i < t->n_recorded; i++) weights[i] = 1.0 / (double)t->n_recorded;
  int32_t status = rt_copy_answer(values, cap, n_values, flat, n_flat);
  free(points);
  return status;
}

int32_t rt_mh_particles(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                        double *weights) {
  return read_samples(f, values, cap, n_values, offsets, weights, 0, "sirenrt_filter_particles");
}

int32_t rt_mh_posterior(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                        double *weights) {
  return read_samples(f, values, cap, n_values, offsets, weights, 1, "sirenrt_filter_posterior");
}

int64_t rt_mh_size(const sirenrt_filter *f) { return f->mh->n_recorded; }

const char *rt_mh_runtime_plan(sirenrt_filter *f) { return f->mh->plan ? f->mh->plan : ""; }

void rt_mh_free(sirenrt_filter *f) {
  rt_mh_chain *t = f->mh;
  if (!t) return;
  rt_mh_trace_free(&t->trace);
  free(t->valued);
  free(t->cur_flat);
  free(t->cur_enc);
  free(t->flat);
  free(t->offsets);
  free(t->plan);
  free(t);
  f->mh = NULL;
}

void rt_mh_set_observer(sirenrt_filter *f, rt_mh_observer *fn, void *user) {
  f->mh->observer = fn;
  f->mh->observer_user = user;
}

/* ------------------------------------------------------------------ public API ----------------- */

sirenrt_filter *sirenrt_filter_new_mh(const sirenrt_model *m, uint64_t seed, const sirenrt_mh_options *mh,
                                      const sirenrt_options *opts) {
  sirenrt_mh_options o = {100, 0, 1};
  if (mh) o = *mh;
  if (o.samples < 1 || o.warmup < 0 || o.thinning < 1 || o.samples > ((int64_t)1 << 40) ||
      o.thinning > ((int64_t)1 << 20) || o.warmup > ((int64_t)1 << 60))
    return rt_set_last_error("sirenrt_filter_new_mh: bad chain options (samples %lld >= 1, warmup %lld >= 0, "
                             "thinning %lld >= 1)",
                             (long long)o.samples, (long long)o.warmup, (long long)o.thinning), NULL;
  sirenrt_options fo = {SIRENRT_SYSTEMATIC, 0.0, 1, 0};
  if (opts) fo = *opts;
  fo.ess_threshold = 0.0; /* a chain's barriers never resample (barrier.c): no option applies */
  fo.resampler = SIRENRT_SYSTEMATIC;
  fo.threads = 1;
  sirenrt_filter *f = sirenrt_filter_new(m, 1, seed, &fo);
  if (!f) return NULL;
  rt_mh_chain *t = calloc(1, sizeof *t);
  if (!t) {
    sirenrt_filter_free(f);
    return rt_set_last_error("out of memory"), NULL;
  }
  t->seed = seed;
  t->samples = o.samples;
  t->warmup = o.warmup;
  t->thinning = o.thinning;
  t->trace.deleted = -1;
  f->mh = t;
  return f;
}

const char *sirenrt_mh_runtime_plan(sirenrt_filter *f) {
  if (!f || !f->mh) return "";
  return f->model->static_runtime_plan ? f->model->static_runtime_plan : rt_mh_runtime_plan(f);
}

int32_t sirenrt_mh_stats(const sirenrt_filter *f, int64_t *iterations, int64_t *accepted) {
  if (!f || !f->mh) return rt_set_last_error("sirenrt_mh_stats: not an MH chain"), 1;
  if (iterations) *iterations = f->mh->iterations;
  if (accepted) *accepted = f->mh->accepted;
  return 0;
}
