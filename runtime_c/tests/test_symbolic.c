/* test_symbolic.c — symbolic values (-m ssi) in the population loop, with the hand-written SSI models
 * of models.h: the symbolic random walk is the exact Kalman filter in every particle (estimate and
 * log evidence to 1e-9, equal weights), whatever the thread count; its states stay bounded over a
 * long run (collection); the runtime plan is symbolic / sample / dynamic as the particles did; a
 * forced symbolic variable fails naming it; a trajectory of symbolic words in a list survives
 * collection and gives the smoother's means; a filter saved and restored mid-stream continues to the
 * same answer; estimate() while streaming leaves the live filter alone. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "population/population.h"
#include "models.h"
#include "engine/sym.h"

enum { T = 30, LONG_T = 2000 };
static double ys[LONG_T];

/* The Kalman filter on the first n rows: filtering means and variances of x_1..x_n, log p(y_1..n). */
static double kalman(int n, double *mean, double *var) {
  double m = 0.0, p = 0.0, ll = 0.0;
  for (int t = 0; t < n; t++) {
    p += SSI_Q;
    double s = p + SSI_R, k = p / s;
    ll += -0.5 * log(2 * RT_PI * s) - (ys[t] - m) * (ys[t] - m) / (2 * s);
    m += k * (ys[t] - m);
    p -= k * p;
    if (mean) mean[t] = m;
    if (var) var[t] = p;
  }
  return ll;
}

static double kalman_mean(int n) {
  double m[LONG_T];
  kalman(n, m, NULL);
  return m[n - 1];
}

static double ess_threshold = 0.0;

static sirenrt_filter *run_model(const sirenrt_model *m, int64_t n, int rows, int32_t threads, uint64_t seed) {
  sirenrt_options o = {SIRENRT_SYSTEMATIC, ess_threshold, threads, 0};
  sirenrt_filter *f = sirenrt_filter_new(m, n, seed, &o);
  CHECK(f != NULL, "filter_new %s: %s", m->name, sirenrt_last_error());
  if (f) CHECK(sirenrt_filter_run(f, ys, rows, 1) == 0, "run %s: %s", m->name, sirenrt_filter_error(f));
  return f;
}

static double estimate1(sirenrt_filter *f) {
  double out[1] = {NAN};
  int64_t n = 0;
  int st = sirenrt_filter_estimate(f, out, 1, &n);
  CHECK(st == 0 && n == 1, "estimate: %d, %lld values: %s", st, (long long)n, sirenrt_filter_error(f));
  return out[0];
}

static void test_exact_kalman(void) {
  const int64_t N = 64;
  sirenrt_filter *f = run_model(&ssi_model, N, T, 1, 7);
  if (!f) return;
  double ll = kalman(T, NULL, NULL), m = kalman_mean(T);
  CHECK_NEAR(estimate1(f), m, 1e-9, "every particle's mean is the Kalman mean");
  CHECK_NEAR(sirenrt_filter_log_evidence(f), ll, 1e-9 * (1 + fabs(ll)), "log evidence is the Kalman one");
  CHECK_NEAR(sirenrt_filter_ess(f), (double)N, 1e-9, "weights are equal");
  double hist_ess[T];
  int64_t n = 0;
  CHECK(sirenrt_filter_history(f, hist_ess, NULL, NULL, NULL, T, &n) == 0 && n == T, "history");
  for (int k = 0; k < T; k++) CHECK_NEAR(hist_ess[k], (double)N, 1e-6, "ESS at every barrier");
  /* Each particle's own result is its mean, the Kalman mean. */
  double values[64], weights[64];
  int64_t offsets[65], n_values = 0;
  CHECK(sirenrt_filter_particles(f, values, 64, &n_values, offsets, weights) == 0 && n_values == N, "particles: %s",
        sirenrt_filter_error(f));
  for (int64_t i = 0; i < N; i++) CHECK_NEAR(values[i], m, 1e-9, "a particle's value");
  CHECK(strcmp(sirenrt_filter_runtime_plan(f), "x: symbolic\n") == 0, "plan '%s'", sirenrt_filter_runtime_plan(f));
  sirenrt_filter_free(f);
}

/* The answer must not depend on the thread count (the pool runs with N >= 2048 per thread). */
static void test_threads(void) {
  const int64_t N = 8200;
  sirenrt_filter *a = run_model(&ssi_dynamic_model, N, T, 1, 5), *b = run_model(&ssi_dynamic_model, N, T, 4, 5);
  if (!a || !b) return;
  CHECK(b->pool != NULL, "4 threads run the pool");
  double ea = estimate1(a), eb = estimate1(b);
  CHECK(ea == eb, "estimate with 4 threads %.17g, with 1 %.17g", eb, ea);
  CHECK(sirenrt_filter_log_evidence(a) == sirenrt_filter_log_evidence(b), "log evidence with 4 threads differs");
  CHECK(strcmp(sirenrt_filter_runtime_plan(a), sirenrt_filter_runtime_plan(b)) == 0, "plans differ");
  sirenrt_filter_free(a);
  sirenrt_filter_free(b);
  a = run_model(&ssi_model, N, T, 1, 5);
  b = run_model(&ssi_model, N, T, 4, 5);
  if (a && b) {
    CHECK(estimate1(a) == estimate1(b), "symbolic estimate with 4 threads differs");
    CHECK(sirenrt_filter_log_evidence(a) == sirenrt_filter_log_evidence(b), "log evidence with 4 threads differs");
  }
  sirenrt_filter_free(a);
  sirenrt_filter_free(b);
}

static int64_t max_live_nodes(const sirenrt_filter *f) {
  int64_t most = 0;
  for (int64_t i = 0; i < f->n; i++)
    if (f->ctx[i].sym && rt_sym_live_nodes(f->ctx[i].sym) > most) most = rt_sym_live_nodes(f->ctx[i].sym);
  return most;
}

/* A filter that keeps no history holds a bounded state: the live nodes of every particle after 2000
 * steps are no more than after 100 (give or take the collector's slack), and so is the memory. */
static void test_bounded(void) {
  const int64_t N = 8;
  sirenrt_filter *f = sirenrt_filter_new(&ssi_model, N, 3, NULL);
  if (!f) return;
  int64_t early = 0, late = 0, words_early = 0, words_late = 0;
  for (int t = 0; t < LONG_T; t++) {
    if (sirenrt_filter_step(f, &ys[t], 1)) {
      CHECK(0, "step %d: %s", t, sirenrt_filter_error(f));
      break;
    }
    int64_t live = max_live_nodes(f), words = sirenrt_filter_memory_words(f);
    if (t < 100) {
      if (live > early) early = live;
      if (words > words_early) words_early = words;
    } else {
      if (live > late) late = live;
      if (words > words_late) words_late = words;
    }
  }
  printf("live symbolic nodes per particle: at most %lld in steps 1..100, %lld in 101..%d; memory words %lld, %lld\n",
         (long long)early, (long long)late, LONG_T, (long long)words_early, (long long)words_late);
  CHECK(early > 0 && late <= 2 * early + 8 && late < 200, "live nodes per particle: %lld in the first 100 steps, %lld after",
        (long long)early, (long long)late);
  CHECK(words_late <= 2 * words_early + 64, "memory words: %lld in the first 100 steps, %lld after", (long long)words_early,
        (long long)words_late);
  CHECK_NEAR(estimate1(f), kalman_mean(LONG_T), 1e-9, "still the Kalman mean after 2000 steps");
  sirenrt_filter_free(f);
}

static void test_plans_and_errors(void) {
  const int64_t N = 2000;
  sirenrt_filter *f = run_model(&ssi_sample_model, N, T, 1, 11);
  if (f) {
    CHECK(strcmp(sirenrt_filter_runtime_plan(f), "x: sample\n") == 0, "plan '%s'", sirenrt_filter_runtime_plan(f));
    double var[T], mean[T];
    kalman(T, mean, var);
    /* A bootstrap filter: Monte Carlo error (5 x 3 standard deviations of N posterior draws). */
    CHECK_NEAR(estimate1(f), mean[T - 1], 5 * 3 * sqrt(var[T - 1] / (double)N), "sampled x: near the Kalman mean");
    sirenrt_filter_free(f);
  }
  f = run_model(&ssi_dynamic_model, N, T, 1, 11);
  if (f) {
    CHECK(strcmp(sirenrt_filter_runtime_plan(f), "x: dynamic\n") == 0, "plan '%s'", sirenrt_filter_runtime_plan(f));
    double var[T], mean[T];
    kalman(T, mean, var);
    CHECK_NEAR(estimate1(f), mean[T - 1], 5 * 3 * sqrt(var[T - 1] / (double)N), "dynamic x: near the Kalman mean");
    sirenrt_filter_free(f);
  }
  sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, 1, 0};
  f = sirenrt_filter_new(&ssi_forced_model, 10, 1, &o);
  if (f) {
    CHECK(sirenrt_filter_run(f, ys, T, 1) != 0, "a forced symbolic variable must fail");
    CHECK_CONTAINS(sirenrt_filter_error(f), "x is annotated as symbolic but will be sampled");
    CHECK_CONTAINS(sirenrt_filter_error(f), "ssi.si:3:3: error: ");
    sirenrt_filter_free(f);
  }
  /* No particle has run: the plan is empty; a pf model's plan is always empty. */
  f = sirenrt_filter_new(&ssi_model, 4, 1, NULL);
  CHECK(f && strcmp(sirenrt_filter_runtime_plan(f), "") == 0, "plan before a run");
  sirenrt_filter_free(f);
  f = sirenrt_filter_new(&rw_model, 4, 1, NULL);
  CHECK(f && sirenrt_filter_run(f, ys, 3, 1) == 0 && strcmp(sirenrt_filter_runtime_plan(f), "") == 0, "pf plan");
  CHECK(f && f->sym_used == 0, "a pf model never holds a symbolic state");
  sirenrt_filter_free(f);
}

/* Symbolic words in a list (a list root "LS", result "PSLS"): collection must keep what the list
 * reaches, and the mean of x_k given y_1..T is the smoother's (SSI hoists x_k back to the root). */
static void test_trajectory(void) {
  const int64_t N = 16;
  sirenrt_filter *f = run_model(&ssi_trajectory_model, N, T, 1, 2);
  if (!f) return;
  double out[T + 2];
  int64_t n = 0;
  CHECK(sirenrt_filter_estimate(f, out, T + 2, &n) == 0 && n == T + 2, "estimate: %s", sirenrt_filter_error(f));
  double mf[T], pf[T], ms[T];
  kalman(T, mf, pf);
  ms[T - 1] = mf[T - 1];
  for (int t = T - 2; t >= 0; t--) ms[t] = mf[t] + pf[t] / (pf[t] + SSI_Q) * (ms[t + 1] - mf[t]);
  CHECK_NEAR(out[0], mf[T - 1], 1e-9, "x_T");
  CHECK(out[1] == T, "list length %g", out[1]);
  for (int t = 0; t < T; t++) {
    char what[64];
    snprintf(what, sizeof what, "smoothed mean of x_%d", t + 1);
    CHECK_NEAR(out[2 + t], ms[t], 1e-8, what);
  }
  sirenrt_filter_free(f);

  /* A long trajectory is collected too (only what the list and x do not reach). */
  f = run_model(&ssi_trajectory_model, 4, 500, 1, 2);
  if (f) {
    CHECK(max_live_nodes(f) >= 500, "the trajectory's nodes are live: %lld", (long long)max_live_nodes(f));
    CHECK(max_live_nodes(f) <= 4 * 500 + 64, "and little else: %lld", (long long)max_live_nodes(f));
  }
  sirenrt_filter_free(f);
}

static int stream(sirenrt_filter *f, int from, int to) {
  for (int t = from; t < to; t++)
    if (sirenrt_filter_step(f, &ys[t], 1)) return 1;
  return 0;
}

/* The whole estimate, padded with NaN up to cap (a trajectory's is T + 2 values). */
static int64_t estimate_all(sirenrt_filter *f, double *out, int64_t cap) {
  int64_t n = 0;
  for (int64_t k = 0; k < cap; k++) out[k] = NAN;
  int st = sirenrt_filter_estimate(f, out, cap, &n);
  CHECK(st == 0, "estimate: %s", sirenrt_filter_error(f));
  return n;
}

/* A filter saved mid-stream and restored (on another thread count) continues to the same answer as
 * one that never stopped, and estimate() while streaming (a clone that shares the states) leaves the
 * live filter's answer alone. */
static void test_save_load_and_clone(const sirenrt_model *m) {
  const int64_t N = 300;
  enum { CAP = T + 2 };
  sirenrt_filter *a = sirenrt_filter_new(m, N, 21, NULL), *b = sirenrt_filter_new(m, N, 21, NULL);
  if (!a || !b) return;
  CHECK(stream(a, 0, T / 2) == 0 && stream(b, 0, T / 2) == 0, "%s: first half: %s", m->name, sirenrt_filter_error(a));
  double mid[CAP], mid_c[CAP], ea[CAP], eb[CAP], ec[CAP];
  int64_t n_mid = estimate_all(b, mid, CAP); /* through a clone */
  CHECK(strcmp(sirenrt_filter_runtime_plan(b), sirenrt_filter_runtime_plan(a)) == 0, "the clone's estimate kept the plan");
  uint8_t *buf = NULL;
  int64_t len = 0;
  CHECK(sirenrt_filter_save(b, &buf, &len) == 0, "%s: save: %s", m->name, sirenrt_filter_error(b));
  sirenrt_filter *c = buf ? sirenrt_filter_load(m, buf, len, 2) : NULL;
  CHECK(c != NULL, "%s: load: %s", m->name, sirenrt_last_error());
  sirenrt_buffer_free(buf);
  if (c) CHECK(estimate_all(c, mid_c, CAP) == n_mid && memcmp(mid, mid_c, sizeof mid) == 0,
               "%s: the restored filter's estimate mid-stream", m->name);
  CHECK(stream(a, T / 2, T) == 0 && stream(b, T / 2, T) == 0, "%s: second half", m->name);
  if (c) CHECK(stream(c, T / 2, T) == 0, "%s: restored second half: %s", m->name, sirenrt_filter_error(c));
  int64_t na = estimate_all(a, ea, CAP), nb = estimate_all(b, eb, CAP), nc = c ? estimate_all(c, ec, CAP) : -1;
  CHECK(na == nb && memcmp(ea, eb, sizeof ea) == 0, "%s: estimate() mid-stream changed the answer: %.17g vs %.17g",
        m->name, eb[0], ea[0]);
  CHECK(na == nc && memcmp(ea, ec, sizeof ea) == 0, "%s: the restored filter's answer %.17g, the saved one's %.17g",
        m->name, ec[0], ea[0]);
  CHECK(c && sirenrt_filter_log_evidence(a) == sirenrt_filter_log_evidence(c), "%s: log evidence after restoring",
        m->name);
  CHECK(c && strcmp(sirenrt_filter_runtime_plan(a), sirenrt_filter_runtime_plan(c)) == 0, "%s: plan after restoring",
        m->name);
  if (m != &ssi_dynamic_model) CHECK_NEAR(ea[0], kalman_mean(T), 1e-9, "the Kalman mean");
  sirenrt_filter_free(a);
  sirenrt_filter_free(b);
  sirenrt_filter_free(c);
}

/* A plan violation met by the final expectation (ARCHITECTURE.md §10.2, 16.1): the run succeeds, the estimate
 * fails through the usual error path, naming the variable.
 *   1  let symbolic a <- beta(1., 1.) in
 *   2  let b <- gaussian(a, 1.) in b        (mean(b) must sample a: no beta-gaussian rule) */
static const sirenrt_site mean_sites[] = {{"mean.si", 1, 22, 36, "let symbolic a <- beta(1., 1.) in"},
                                          {"mean.si", 2, 10, 26, "let b <- gaussian(a, 1.) in b"}};
static const char *const mean_vars[] = {"a", "b"};
static int32_t mean_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  int64_t a = sirenrt_sym_assume(ctx, SIRENRT_FAM_BETA, double_to_bits(1.0), double_to_bits(1.0), 0, 0, SIRENRT_ANN_SYMBOLIC, 0);
  int64_t b = sirenrt_sym_assume(ctx, SIRENRT_FAM_GAUSSIAN, a, double_to_bits(1.0), 0, 1, SIRENRT_ANN_NONE, 1);
  memcpy(frame + 8, &b, sizeof b);
  return SIRENRT_FINISHED;
}

static void test_violation_in_the_estimate(void) {
  const sirenrt_model m = {.abi_version = SIRENRT_ABI_VERSION, .name = "mean", .method = "ssi",
                           .plan = "a: symbolic\nb: symbolic", .result_type = "S", .frame_size = 16,
                           .result_offset = 8, .resume = mean_resume, .not_streamable_reason = "no data",
                           .n_sites = 2, .sites = mean_sites, .n_vars = 2, .vars = mean_vars};
  sirenrt_filter *f = sirenrt_filter_new(&m, 10, 1, NULL);
  CHECK(f != NULL, "filter_new: %s", sirenrt_last_error());
  if (!f) return;
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "run: %s", sirenrt_filter_error(f));
  CHECK(strcmp(sirenrt_filter_runtime_plan(f), "a: symbolic\nb: symbolic\n") == 0, "plan '%s'",
        sirenrt_filter_runtime_plan(f));
  double out[1];
  int64_t n = 0;
  CHECK(sirenrt_filter_estimate(f, out, 1, &n) == 1, "the estimate must fail");
  CHECK_CONTAINS(sirenrt_filter_error(f), "error: while estimating the result: a is annotated as symbolic but will be sampled");
  double values[10], weights[10];
  int64_t offsets[11];
  CHECK(sirenrt_filter_particles(f, values, 10, &n, offsets, weights) != 0, "particles fail too (the filter failed)");
  sirenrt_filter_free(f);
}

/* Symbolic roots and variables are checked like list roots. */
static void test_bad_models(void) {
  const sirenrt_root bad_type[] = {{1, offsetof(ssi_frame, x), "f"}};
  const sirenrt_root outside[] = {{1, sizeof(ssi_frame), "S"}};
  sirenrt_model m = ssi_model;
  m.n_sym_roots = 1;
  m.sym_roots = bad_type;
  CHECK(sirenrt_filter_new(&m, 4, 1, NULL) == NULL, "a symbolic root of type f");
  CHECK_CONTAINS(sirenrt_last_error(), "model: bad symbolic root 0");
  m.sym_roots = outside;
  CHECK(sirenrt_filter_new(&m, 4, 1, NULL) == NULL, "a symbolic root outside the frame");
  m = ssi_model;
  m.vars = NULL;
  CHECK(sirenrt_filter_new(&m, 4, 1, NULL) == NULL, "variables without names");
  CHECK_CONTAINS(sirenrt_last_error(), "model: bad program variable table");
}

/* An observation outside the support zeroes the weight through sirenrt_add_log_weight, as
 * sirenrt_observe_<family> does: every particle dead is the usual error at that observation.
 *   1  let p <- beta(1., 1.) in
 *   2  observe(binomial(3., p), 5.); p */
static const sirenrt_site dead_ssi_sites[] = {{"dead.si", 1, 10, 22, "let p <- beta(1., 1.) in"},
                                              {"dead.si", 2, 3, 31, "observe(binomial(3., p), 5.); p"}};
static const char *const dead_ssi_vars[] = {"p"};
static int32_t dead_ssi_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  int32_t *pc = (int32_t *)frame;
  if (*pc == 1) return SIRENRT_FINISHED;
  int64_t p = sirenrt_sym_assume(ctx, SIRENRT_FAM_BETA, double_to_bits(1.0), double_to_bits(1.0), 0, 0, SIRENRT_ANN_NONE, 0);
  sirenrt_sym_observe(ctx, SIRENRT_FAM_BINOMIAL, double_to_bits(3.0), p, 0, 5.0, 1);
  memcpy(frame + 8, &p, sizeof p);
  *pc = 1;
  return SIRENRT_AT_RESAMPLE;
}

static void test_zero_weight(void) {
  const sirenrt_model m = {.abi_version = SIRENRT_ABI_VERSION, .name = "dead_ssi", .method = "ssi",
                           .plan = "p: symbolic", .result_type = "S", .frame_size = 16, .result_offset = 8,
                           .resume = dead_ssi_resume, .not_streamable_reason = "no data", .n_sites = 2,
                           .sites = dead_ssi_sites, .n_vars = 1, .vars = dead_ssi_vars};
  sirenrt_filter *f = sirenrt_filter_new(&m, 10, 1, NULL);
  if (!f) return;
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) != 0, "every particle observed 5 under a binomial(3, p)");
  CHECK_CONTAINS(sirenrt_filter_error(f), "dead.si:2:3: error: all particles have zero weight");
  sirenrt_filter_free(f);
}

int main(void) {
  walk_data(ys, LONG_T, 2024, SSI_Q, SSI_R);
  test_exact_kalman();
  test_threads();
  ess_threshold = 0.5; /* barriers that keep the population: weights accumulate, states stay put */
  test_threads();
  ess_threshold = 0.0;
  test_bounded();
  test_plans_and_errors();
  test_trajectory();
  test_violation_in_the_estimate();
  test_bad_models();
  test_zero_weight();
  test_save_load_and_clone(&ssi_model);
  test_save_load_and_clone(&ssi_dynamic_model);
  test_save_load_and_clone(&ssi_trajectory_model);
  return check_report("test_symbolic");
}
