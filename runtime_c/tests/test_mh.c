/* test_mh.c — the MH handler (mh.c) on hand-written models: the acceptance ratio of every proposal
 * against a hand computation, on a two-site model and on one whose number of sites changes; the
 * chain's stationary distribution on the latter; options, reproducibility and refused operations. */
#include <stdlib.h>

#include "check.h"
#include "population/population.h"

#define LOG_2PI 1.8378770664093453
static double lnorm(double x, double mu, double var) {
  return -0.5 * (LOG_2PI + log(var)) - (x - mu) * (x - mu) / (2 * var);
}

/* Every run the chain makes, as the model saw it (runs[0] is the first run from the prior, runs[i]
 * the proposal of iteration i - 1), and what the chain said of each iteration. */
#define MAX_RUNS 40000
static struct { double a, b; } runs[MAX_RUNS];
static int n_runs;
typedef struct step {
  int64_t site;
  double log_alpha;
  int accepted;
} step;
static step steps[MAX_RUNS];
static int n_steps;
static void observe_step(void *user, int64_t site, double log_alpha, int accepted) {
  (void)user;
  if (n_steps < MAX_RUNS) steps[n_steps++] = (step){site, log_alpha, accepted};
}
static void record_run(double a, double b) {
  if (n_runs < MAX_RUNS) {
    runs[n_runs].a = a;
    runs[n_runs].b = b;
    n_runs++;
  }
}

/* two.si:
 *   1  let x <- gaussian(0., 1.) in
 *   2  observe(gaussian(x, 4.), 0.5); resample();
 *   3  let y <- gaussian(x, 1.) in observe(gaussian(y, 0.25), 1.); (x, y)
 * Frame: pc | result x | result y | x.  Site 0 is x, site 1 is y (resample() does not resample). */
static double two_lik(double x, double y) { return lnorm(0.5, x, 4.0) + lnorm(1.0, y, 0.25); }
static int32_t two_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  double *w = (double *)(frame + 8);
  if (*(int32_t *)frame == 1) goto second;
  w[2] = sirenrt_sample_gaussian(ctx, 0.0, 1.0, -1);
  sirenrt_observe_gaussian(ctx, w[2], 4.0, 0.5, -1);
  *(int32_t *)frame = 1;
  return SIRENRT_AT_RESAMPLE;
second:
  w[0] = w[2];
  w[1] = sirenrt_sample_gaussian(ctx, w[2], 1.0, -1);
  sirenrt_observe_gaussian(ctx, w[1], 0.25, 1.0, -1);
  record_run(w[0], w[1]);
  return SIRENRT_FINISHED;
}
static const sirenrt_model two_model = {.abi_version = SIRENRT_ABI_VERSION, .name = "two", .method = "pf",
                                        .plan = "", .result_type = "Pff", .frame_size = 32, .result_offset = 8,
                                        .resume = two_resume, .not_streamable_reason = "no data"};

/* jump.si (the number of sites depends on z):
 *   1  let z <- bernoulli(0.5) in
 *   2  (if z then let w <- gaussian(0., 1.) in observe(gaussian(w, 1.), 2.)
 *   3   else observe(gaussian(1., 1.), 2.)); z
 * Site 0 is z, site 1 is w when z = 1.  Exact P(z = 1 | data) = N(2; 0, 2) / (N(2; 0, 2) + N(2; 1, 1)). */
static double jump_lik(double z, double w) { return z == 1.0 ? lnorm(2.0, w, 1.0) : lnorm(2.0, 1.0, 1.0); }
static int32_t jump_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  double z = sirenrt_sample_bernoulli(ctx, 0.5, -1), w = NAN;
  if (z == 1.0) {
    w = sirenrt_sample_gaussian(ctx, 0.0, 1.0, -1);
    sirenrt_observe_gaussian(ctx, w, 1.0, 2.0, -1);
  } else {
    sirenrt_observe_gaussian(ctx, 1.0, 1.0, 2.0, -1);
  }
  record_run(z, w);
  memcpy(frame + 8, &z, sizeof z);
  return SIRENRT_FINISHED;
}
static const sirenrt_model jump_model = {.abi_version = SIRENRT_ABI_VERSION, .name = "jump", .method = "pf",
                                         .plan = "", .result_type = "f", .frame_size = 16, .result_offset = 8,
                                         .resume = jump_resume, .not_streamable_reason = "no data"};

static sirenrt_filter *chain_of(const sirenrt_model *m, uint64_t seed, int64_t samples, int64_t warmup,
                                int64_t thinning) {
  sirenrt_mh_options o = {samples, warmup, thinning};
  sirenrt_filter *f = sirenrt_filter_new_mh(m, seed, &o, NULL);
  CHECK(f != NULL, "sirenrt_filter_new_mh: %s", sirenrt_last_error());
  if (f) rt_mh_set_observer(f, observe_step, NULL);
  n_runs = n_steps = 0;
  return f;
}

/* log alpha = log|S| - log|S'| + (s' - s) + sum over reused sites of (score' - score), written out
 * for the two-site model: choosing x keeps y (re-scored under gaussian(x', 1)); choosing y keeps x,
 * whose score does not change; |S| = |S'| = 2. */
static void test_two_site_ratio(void) {
  sirenrt_filter *f = chain_of(&two_model, 7, 300, 0, 1);
  if (!f) return;
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "run: %s", sirenrt_filter_error(f));
  CHECK(n_steps == 300 && n_runs == 301, "%d iterations, %d runs", n_steps, n_runs);
  int cur = 0, chose_x = 0, accepted = 0;
  for (int i = 0; i < n_steps; i++) {
    double x = runs[cur].a, y = runs[cur].b, x2 = runs[i + 1].a, y2 = runs[i + 1].b, hand;
    if (steps[i].site == 0) {
      chose_x++;
      CHECK(y2 == y && x2 != x, "iteration %d: y kept, x drawn afresh", i);
      hand = two_lik(x2, y2) - two_lik(x, y) + lnorm(y, x2, 1.0) - lnorm(y, x, 1.0);
    } else {
      CHECK(steps[i].site == 1 && x2 == x && y2 != y, "iteration %d: x kept, y drawn afresh", i);
      hand = two_lik(x2, y2) - two_lik(x, y);
    }
    CHECK_NEAR(steps[i].log_alpha, hand, 1e-9 * (1 + fabs(hand)), "log alpha");
    if (steps[i].accepted) {
      cur = i + 1;
      accepted++;
    }
  }
  CHECK(chose_x > 100 && chose_x < 200, "site x chosen %d of 300 times", chose_x);
  CHECK(accepted > 30 && accepted < 290, "%d of 300 accepted", accepted);
  int64_t iterations = 0, acc = 0;
  CHECK(sirenrt_mh_stats(f, &iterations, &acc) == 0 && iterations == 300 && acc == accepted, "stats %lld %lld",
        (long long)iterations, (long long)acc);
  /* The last sample is the chain's final state. */
  int64_t offsets[301], n_values = 0;
  double weights[300], *values = malloc(600 * sizeof(double));
  CHECK(sirenrt_filter_size(f) == 300, "300 samples, not %lld", (long long)sirenrt_filter_size(f));
  CHECK(sirenrt_filter_particles(f, values, 600, &n_values, offsets, weights) == 0 && n_values == 600, "particles");
  CHECK(values[598] == runs[cur].a && values[599] == runs[cur].b, "last sample = final state");
  CHECK(weights[0] == 1.0 / 300 && weights[299] == 1.0 / 300, "equal weights");
  double sum = 0.0, est[2];
  for (int i = 0; i < 300; i++) sum += values[2 * i];
  int64_t n_est = 0;
  CHECK(sirenrt_filter_estimate(f, est, 2, &n_est) == 0 && n_est == 2, "estimate");
  CHECK_NEAR(est[0], sum / 300, 1e-12, "estimate = mean of the samples");
  free(values);
  sirenrt_filter_free(f);
}

/* The same with a varying number of sites: the log|S| - log|S'| term decides the jumps of z. */
static void test_jump_ratio(void) {
  sirenrt_filter *f = chain_of(&jump_model, 11, 400, 0, 1);
  if (!f) return;
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "run: %s", sirenrt_filter_error(f));
  int cur = 0, jumps_up = 0, jumps_down = 0;
  for (int i = 0; i < n_steps; i++) {
    double z = runs[cur].a, w = runs[cur].b, z2 = runs[i + 1].a, w2 = runs[i + 1].b, hand;
    double n_old = 1 + z, n_new = 1 + z2;
    if (steps[i].site == 0 && z == 1.0 && z2 == 1.0) {
      CHECK(w2 == w, "iteration %d: w reused", i);
      hand = 0.0; /* w's score under gaussian(0, 1) does not change */
    } else {
      CHECK(steps[i].site == 0 || (z == 1.0 && z2 == 1.0 && w2 != w), "iteration %d: w drawn afresh", i);
      hand = log(n_old) - log(n_new) + jump_lik(z2, w2) - jump_lik(z, w);
    }
    jumps_up += z == 0.0 && z2 == 1.0;
    jumps_down += z == 1.0 && z2 == 0.0;
    CHECK_NEAR(steps[i].log_alpha, hand, 1e-9 * (1 + fabs(hand)), "log alpha");
    if (steps[i].accepted) cur = i + 1;
  }
  CHECK(jumps_up > 10 && jumps_down > 10, "both jumps proposed (%d up, %d down)", jumps_up, jumps_down);
  sirenrt_filter_free(f);
}

/* The chain's answer for z against the exact posterior; the tolerance is 5 standard errors from the
 * chain's own batch means (30 batches), so autocorrelation is accounted for. */
static void test_jump_posterior(void) {
  enum { N = 30000, BATCHES = 30 };
  sirenrt_filter *f = chain_of(&jump_model, 3, N, 500, 1);
  if (!f) return;
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "run: %s", sirenrt_filter_error(f));
  double *values = malloc(N * sizeof(double)), *weights = malloc(N * sizeof(double));
  int64_t *offsets = malloc((N + 1) * sizeof(int64_t)), n_values = 0;
  CHECK(sirenrt_filter_particles(f, values, N, &n_values, offsets, weights) == 0 && n_values == N, "particles");
  double batch[BATCHES], mean = 0.0, var = 0.0;
  for (int b = 0; b < BATCHES; b++) {
    batch[b] = 0.0;
    for (int i = b * (N / BATCHES); i < (b + 1) * (N / BATCHES); i++) batch[b] += values[i];
    batch[b] /= N / BATCHES;
    mean += batch[b] / BATCHES;
  }
  for (int b = 0; b < BATCHES; b++) var += (batch[b] - mean) * (batch[b] - mean) / (BATCHES - 1);
  double se = sqrt(var / BATCHES), p1 = exp(lnorm(2.0, 0.0, 2.0)), p0 = exp(lnorm(2.0, 1.0, 1.0));
  double exact = p1 / (p1 + p0);
  CHECK(se > 0.0 && se < 0.02, "standard error %g", se);
  CHECK_NEAR(mean, exact, 5 * se, "P(z = 1 | data)");
  free(values);
  free(weights);
  free(offsets);
  sirenrt_filter_free(f);
}

static void test_options_and_refusals(void) {
  sirenrt_mh_options bad[] = {{0, 0, 1}, {10, -1, 1}, {10, 0, 0}};
  for (int i = 0; i < 3; i++) {
    CHECK(sirenrt_filter_new_mh(&two_model, 1, &bad[i], NULL) == NULL, "bad options %d refused", i);
    CHECK_CONTAINS(sirenrt_last_error(), "bad chain options");
  }
  /* warmup + samples * thinning iterations, `samples` of them recorded. */
  sirenrt_filter *f = chain_of(&two_model, 5, 7, 4, 3);
  if (!f) return;
  double est[2];
  int64_t n = 0, iterations = 0;
  CHECK(sirenrt_filter_estimate(f, est, 2, &n) == 1, "no estimate before run()");
  CHECK_CONTAINS(sirenrt_filter_error(f), "call run() first");
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "run: %s", sirenrt_filter_error(f));
  CHECK(sirenrt_mh_stats(f, &iterations, NULL) == 0 && iterations == 4 + 7 * 3, "%lld iterations",
        (long long)iterations);
  CHECK(sirenrt_filter_size(f) == 7 && sirenrt_filter_ess(f) == 7.0, "7 samples");
  CHECK(isnan(sirenrt_filter_log_evidence(f)), "no evidence");
  int64_t rows = -1;
  CHECK(sirenrt_filter_history(f, NULL, NULL, NULL, NULL, 0, &rows) == 0 && rows == 0, "no history");
  double row = 1.0;
  CHECK(sirenrt_filter_step(f, &row, 1) != 0, "step refused");
  CHECK_CONTAINS(sirenrt_filter_error(f), "an MH chain cannot be streamed");
  uint8_t *buf = NULL;
  int64_t len = 0;
  CHECK(sirenrt_filter_save(f, &buf, &len) != 0 && buf == NULL, "save refused");
  CHECK_CONTAINS(sirenrt_filter_error(f), "an MH chain cannot be saved");
  CHECK(sirenrt_filter_estimate(f, est, 2, &n) == 0, "refusals leave the chain usable: %s", sirenrt_filter_error(f));
  sirenrt_filter_free(f);
}

/* Same seed, same chain bit for bit (also when run twice); another seed, another chain. */
static void test_reproducible(void) {
  double a[2], b[2], c[2];
  int64_t n;
  sirenrt_filter *f = chain_of(&two_model, 42, 50, 10, 2), *g = chain_of(&two_model, 42, 50, 10, 2),
                 *h = chain_of(&two_model, 43, 50, 10, 2);
  if (!f || !g || !h) return;
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0 && sirenrt_filter_run(g, NULL, 0, 0) == 0 &&
            sirenrt_filter_run(h, NULL, 0, 0) == 0, "runs");
  sirenrt_filter_estimate(f, a, 2, &n);
  sirenrt_filter_estimate(g, b, 2, &n);
  sirenrt_filter_estimate(h, c, 2, &n);
  CHECK(memcmp(a, b, sizeof a) == 0, "same seed: %.17g vs %.17g", a[0], b[0]);
  CHECK(a[0] != c[0] && a[1] != c[1], "another seed: %.17g vs %.17g", a[0], c[0]);
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "run again");
  sirenrt_filter_estimate(f, c, 2, &n);
  CHECK(memcmp(a, c, sizeof a) == 0, "run() again gives the same chain");
  sirenrt_filter_free(f);
  sirenrt_filter_free(g);
  sirenrt_filter_free(h);
}

/* A program without random choices: one state, recorded once (ARCHITECTURE.md §15.2 step 2b). */
static int32_t const_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  sirenrt_observe_gaussian(ctx, 0.0, 1.0, 0.5, -1);
  double v = 3.0;
  memcpy(frame + 8, &v, sizeof v);
  return SIRENRT_FINISHED;
}
static void test_no_sites(void) {
  sirenrt_model m = two_model;
  m.result_type = "f";
  m.frame_size = 16;
  m.resume = const_resume;
  sirenrt_filter *f = chain_of(&m, 1, 20, 0, 1);
  if (!f) return;
  double est = 0.0;
  int64_t n;
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0 && sirenrt_filter_size(f) == 1, "one sample");
  CHECK(sirenrt_filter_estimate(f, &est, 1, &n) == 0 && est == 3.0, "estimate %g", est);
  sirenrt_filter_free(f);
}

int main(void) {
  test_two_site_ratio();
  test_jump_ratio();
  test_jump_posterior();
  test_options_and_refusals();
  test_reproducible();
  test_no_sites();
  return check_report("test_mh");
}
