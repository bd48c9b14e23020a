/* test_filter.c — the population loop with hand-written models (models.h): the random-walk filter
 * against the exact Kalman filter (mean and log evidence, every resampler, ESS threshold),
 * streaming == run, estimate() not disturbing a live stream, the estimator's layout (pairs, lists of
 * different lengths, bools, unit), data files, and the run-time errors users see. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "population/population.h"
#include "models.h"

enum { T = 30 };
static double ys[T];

/* Exact filtering mean/variance of x_T and log p(y_1..T). */
static void kalman(int n, double *mean, double *var, double *loglik) {
  double m = 0.0, p = 0.0, ll = 0.0;
  for (int t = 0; t < n; t++) {
    p += 1.0;
    double s = p + 0.5, k = p / s;
    ll += -0.5 * log(2 * RT_PI * s) - (ys[t] - m) * (ys[t] - m) / (2 * s);
    m += k * (ys[t] - m);
    p -= k * p;
  }
  *mean = m;
  *var = p;
  *loglik = ll;
}

/* Runs the random walk on the first n rows; out gets the estimate [x, n, x_1..x_n]. */
static int run_rw(sirenrt_filter *f, int n, double *out, int64_t cap, int64_t *n_out) {
  if (sirenrt_filter_run(f, ys, n, 1)) return 1;
  return sirenrt_filter_estimate(f, out, cap, n_out);
}

static void test_kalman(int32_t scheme, double ess_threshold) {
  const int64_t N = 20000;
  sirenrt_options o = {scheme, ess_threshold, 1, 0};
  sirenrt_filter *f = sirenrt_filter_new(&rw_model, N, 7, &o);
  CHECK(f != NULL, "filter_new: %s", sirenrt_last_error());
  if (!f) return;
  double est[T + 2];
  int64_t n_out = 0;
  int st = run_rw(f, T, est, T + 2, &n_out);
  CHECK(st == 0, "run: %s", sirenrt_filter_error(f));
  double m, v, ll;
  kalman(T, &m, &v, &ll);
  /* Monte Carlo error: on this data set a bootstrap filter's estimate of the mean has about 3x the
   * standard deviation of N i.i.d. posterior draws, and log Z_hat a standard deviation of about
   * 11/sqrt(N) (both measured over seeds, here and with an independent NumPy filter).  Tolerances are
   * 5 of those standard deviations. */
  char what[96];
  snprintf(what, sizeof what, "scheme %d, ess %.2g: filtering mean vs Kalman", scheme, ess_threshold);
  CHECK_NEAR(est[0], m, 5 * 3 * sqrt(v / N), what);
  snprintf(what, sizeof what, "scheme %d, ess %.2g: log evidence vs Kalman", scheme, ess_threshold);
  CHECK_NEAR(sirenrt_filter_log_evidence(f), ll, 5 * 11 / sqrt((double)N), what);
  CHECK(n_out == T + 2 && est[1] == T, "layout: x, then the list length %g", est[1]);
  CHECK_NEAR(est[T + 1], est[0], 1e-9, "last list element is x_T itself");
  double ess = sirenrt_filter_ess(f);
  CHECK(ess > 0.05 * N && ess <= N + 1e-6, "final ESS %g", ess);
  sirenrt_filter_free(f);
}

/* Over many seeds the filter's mean error averages out and Z_hat = exp(log evidence) is unbiased for
 * Z (a property of the particle filter that also holds with an ESS threshold, where the evidence
 * includes the last, unfinished epoch). */
static void test_unbiased_over_seeds(int32_t scheme, double ess_threshold) {
  enum { SEEDS = 100, N = 500 };
  double m, v, ll, err[SEEDS], ratio[SEEDS], est[T + 2];
  int64_t n;
  kalman(T, &m, &v, &ll);
  sirenrt_options o = {scheme, ess_threshold, 1, 0};
  for (int s = 0; s < SEEDS; s++) {
    sirenrt_filter *f = sirenrt_filter_new(&rw_model, N, 1000 + (uint64_t)s, &o);
    run_rw(f, T, est, T + 2, &n);
    err[s] = est[0] - m;
    ratio[s] = exp(sirenrt_filter_log_evidence(f) - ll);
    sirenrt_filter_free(f);
  }
  double e1 = 0, e2 = 0, r1 = 0, r2 = 0;
  for (int s = 0; s < SEEDS; s++) e1 += err[s], e2 += err[s] * err[s], r1 += ratio[s], r2 += ratio[s] * ratio[s];
  e1 /= SEEDS, e2 /= SEEDS, r1 /= SEEDS, r2 /= SEEDS;
  char what[96];
  snprintf(what, sizeof what, "scheme %d, ess %.2g: average error of the mean over seeds", scheme, ess_threshold);
  CHECK_NEAR(e1, 0.0, 5 * sqrt((e2 - e1 * e1) / SEEDS), what);
  snprintf(what, sizeof what, "scheme %d, ess %.2g: E[Z_hat / Z]", scheme, ess_threshold);
  CHECK_NEAR(r1, 1.0, 5 * sqrt((r2 - r1 * r1) / SEEDS), what);
}

static void test_stream_equals_run(void) {
  const int64_t N = 300;
  double a[T + 2], b[T + 2], c[T + 2], mid[12], mid_run[12];
  int64_t n = 0;
  sirenrt_filter *fr = sirenrt_filter_new(&rw_model, N, 99, NULL);
  CHECK(run_rw(fr, T, a, T + 2, &n) == 0, "run");
  double ev_run = sirenrt_filter_log_evidence(fr);

  sirenrt_filter *fs = sirenrt_filter_new(&rw_model, N, 99, NULL);
  sirenrt_filter *fe = sirenrt_filter_new(&rw_model, N, 99, NULL);
  for (int t = 0; t < T; t++) {
    CHECK(sirenrt_filter_step(fs, &ys[t], 1) == 0, "step %d: %s", t, sirenrt_filter_error(fs));
    CHECK(sirenrt_filter_step(fe, &ys[t], 1) == 0, "step %d", t);
    if (t == 9) CHECK(sirenrt_filter_estimate(fe, mid, 12, &n) == 0 && n == 12, "mid-stream estimate");
  }
  CHECK(sirenrt_filter_estimate(fs, b, T + 2, &n) == 0, "stream estimate: %s", sirenrt_filter_error(fs));
  CHECK(sirenrt_filter_estimate(fe, c, T + 2, &n) == 0, "stream estimate after a mid estimate");
  CHECK(memcmp(a, b, sizeof a) == 0, "streaming must equal run exactly: %.17g vs %.17g", a[0], b[0]);
  CHECK(memcmp(b, c, sizeof b) == 0, "estimate() must not disturb the live stream");
  CHECK(sirenrt_filter_log_evidence(fs) == ev_run, "log evidence equal");
  /* The mid-stream estimate is the run on the first 10 rows (the clone closes the stream). */
  CHECK(run_rw(fr, 10, mid_run, 12, &n) == 0 && memcmp(mid, mid_run, sizeof mid) == 0,
        "estimate mid-stream = run on the rows so far");
  /* run() after streaming restarts; step() after run() starts a fresh stream. */
  CHECK(run_rw(fs, T, b, T + 2, &n) == 0 && memcmp(a, b, sizeof a) == 0, "run after a stream");
  CHECK(sirenrt_filter_step(fs, &ys[0], 1) == 0 && sirenrt_filter_estimate(fs, b, T + 2, &n) == 0 && n == 3,
        "step after run starts a new stream (%lld values)", (long long)n);
  int64_t need = 0;
  CHECK(sirenrt_filter_estimate(fs, b, 1, &need) == 2 && need == 3, "cap too small -> 2, needed %lld", (long long)need);
  sirenrt_filter_free(fr);
  sirenrt_filter_free(fs);
  sirenrt_filter_free(fe);
}

static void test_estimator_layout(void) {
  const int64_t N = 40000;
  sirenrt_filter *f = sirenrt_filter_new(&ragged_model, N, 3, NULL);
  CHECK(f != NULL, "ragged filter: %s", sirenrt_last_error());
  double out[8];
  int64_t n = 0;
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "ragged run: %s", sirenrt_filter_error(f));
  CHECK(sirenrt_filter_estimate(f, out, 8, &n) == 0 && n == 5, "5 values, got %lld", (long long)n);
  /* [P(b), list length, index 0, index 1, 4]; index 1 exists only when b is false: renormalised -> 5. */
  CHECK_NEAR(out[0], 0.3, 5 * sqrt(0.21 / N), "bool estimate");
  CHECK(out[1] == 2.0, "list length is the longest list");
  CHECK_NEAR(out[2], 0.3 * 1.0 + 0.7 * 2.0, 5 * sqrt(0.21 / N), "index 0 over all particles");
  CHECK_NEAR(out[3], 5.0, 1e-9, "index 1 renormalised over the particles that have it");
  CHECK_NEAR(out[4], 4.0, 1e-9, "float after the list");
  sirenrt_filter_free(f);
}

/* rw_model with its trajectory stored as a view (frame_result_type "PfV1f"): the words hold the list
 * reversed back (so the built list), and every answer read from them is rw_model's without its
 * first element, bit for bit.  A view that does not match result_type is refused. */
static int32_t rw_view_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  int32_t r = rw_resume(ctx, frame, log_weight, rows);
  rw_frame *f = (rw_frame *)frame;
  if (r == SIRENRT_FINISHED) f->result_xs = sirenrt_list_rev(ctx, f->result_xs, 1);
  return r;
}

static void test_result_views(void) {
  sirenrt_model view = rw_model;
  view.resume = rw_view_resume;
  view.frame_result_type = "PfV1f";
  sirenrt_filter *a = sirenrt_filter_new(&rw_model, 500, 8, NULL), *b = sirenrt_filter_new(&view, 500, 8, NULL);
  CHECK(a && b, "view filter: %s", sirenrt_last_error());
  double ea[T + 2], eb[T + 2];
  int64_t na = 0, nb = 0;
  CHECK(run_rw(a, T, ea, T + 2, &na) == 0 && run_rw(b, T, eb, T + 2, &nb) == 0, "view runs");
  CHECK(na == T + 2 && nb == T + 1 && ea[1] == T && eb[1] == T - 1, "the view drops one element");
  CHECK(ea[0] == eb[0] && !memcmp(ea + 3, eb + 2, (T - 1) * sizeof(double)), "the view's estimate is the list's");
  static double va[500 * (T + 2)], vb[500 * (T + 2)];
  int64_t oa[501], ob[501], nva = 0, nvb = 0;
  double wa[500], wb[500];
  CHECK(sirenrt_filter_particles(a, va, 500 * (T + 2), &nva, oa, wa) == 0 &&
            sirenrt_filter_particles(b, vb, 500 * (T + 2), &nvb, ob, wb) == 0, "particles");
  int same = nvb == nva - 500;
  for (int64_t i = 0; i < 500 && same; i++)
    same = vb[ob[i]] == va[oa[i]] && vb[ob[i] + 1] == T - 1 &&
           !memcmp(vb + ob[i] + 2, va + oa[i] + 3, (T - 1) * sizeof(double));
  CHECK(same, "each particle's view is its list without the first element");
  sirenrt_filter_free(a);
  sirenrt_filter_free(b);
  const char *bad[] = {"PfV1b", "PfV1", "PfVxf", "PfLf", "PbV1f", "PfV1fLf"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    view.frame_result_type = bad[k];
    CHECK(sirenrt_filter_new(&view, 10, 1, NULL) == NULL, "frame result type %s refused", bad[k]);
  }
}

static void test_errors(void) {
  sirenrt_filter *f = sirenrt_filter_new(&dead_model, 100, 1, NULL);
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) != 0, "all particles dead must fail");
  CHECK_CONTAINS(sirenrt_filter_error(f), "dead.si:5:3: error: all particles have zero weight\n"
                                          "  observe(uniform_int(0, 1), 5.);\n"
                                          "  ^~~~~~~~~~~~~~~~~~~~~~~~~~~");
  double out[2];
  int64_t n;
  CHECK(sirenrt_filter_estimate(f, out, 2, &n) != 0, "no estimate after a failed run");
  CHECK(sirenrt_filter_step(f, out, 1) != 0, "dead model is not streamable");
  CHECK_CONTAINS(sirenrt_filter_error(f), "cannot be run as a stream: the program reads no data");
  sirenrt_filter_free(f);

  f = sirenrt_filter_new(&bad_model, 10, 1, NULL);
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) != 0, "invalid parameter must fail");
  CHECK_CONTAINS(sirenrt_filter_error(f), "bad.si:3:12: error: gaussian: variance must be > 0, got -1\n"
                                          "  let x <- gaussian(0., -1.) in\n"
                                          "           ^~~~~~~~~~~~~~~~");
  sirenrt_filter_free(f);

  /* rows NULL: file 0 from disk, which does not exist. */
  f = sirenrt_filter_new(&rw_model, 10, 1, NULL);
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) != 0, "missing data file must fail");
  CHECK_CONTAINS(sirenrt_filter_error(f), "model.si:1:12: error: cannot read data file '/nonexistent/data.csv'");
  CHECK_CONTAINS(sirenrt_filter_error(f), "let data = File.read(\"data.csv\") in\n           ^~~~~~~~~~~~~~~~~~~~");
  sirenrt_filter_free(f);

  /* Bad models and options are refused with a reason. */
  sirenrt_model m = rw_model;
  m.abi_version = 99;
  CHECK(sirenrt_filter_new(&m, 10, 1, NULL) == NULL, "ABI mismatch");
  CHECK_CONTAINS(sirenrt_last_error(), "ABI");
  m = rw_model;
  m.result_type = "PfX";
  CHECK(sirenrt_filter_new(&m, 10, 1, NULL) == NULL, "bad descriptor");
  CHECK(sirenrt_filter_new(&rw_model, 0, 1, NULL) == NULL, "zero particles");
  sirenrt_options o = {7, 0.0, 1, 0};
  CHECK(sirenrt_filter_new(&rw_model, 10, 1, &o) == NULL, "unknown resampler");
}

static void test_files(void) {
  char path[] = "/tmp/sirenrt_test_filter_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  if (fd < 0) return;
  FILE *fp = fdopen(fd, "w");
  fputs("a,b\n1,2\n3\n", fp);
  fclose(fp);
  const char *files[] = {path};
  sirenrt_model m = {.abi_version = SIRENRT_ABI_VERSION, .name = "file", .method = "smc", .plan = "",
                     .result_type = "LLf", .frame_size = 16, .result_offset = 8, .resume = file_resume,
                     .not_streamable_reason = "returns the data", .n_files = 1, .files = files,
                     .n_sites = 1, .sites = file_sites};
  sirenrt_filter *f = sirenrt_filter_new(&m, 5, 1, NULL);
  double out[8];
  int64_t n = 0;
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "read the file: %s", sirenrt_filter_error(f));
  CHECK(sirenrt_filter_estimate(f, out, 8, &n) == 0 && n == 6, "file estimate has %lld values", (long long)n);
  const double want[6] = {2, 2, 1, 2, 1, 3}; /* [2, [2, 1, 2], [1, 3]] flattened */
  for (int i = 0; i < 6; i++) CHECK_NEAR(out[i], want[i], 1e-12, "file as list of rows");
  double rows[3] = {7, 8, 9};
  CHECK(sirenrt_filter_run(f, rows, 3, 1) == 0 && sirenrt_filter_estimate(f, out, 8, &n) == 0 && n == 7 &&
            out[0] == 3 && fabs(out[6] - 9) < 1e-12,
        "rows replace file 0");
  fp = fopen(path, "w");
  fputs("a,b\n1,2\n\n3\n", fp);
  fclose(fp);
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) != 0, "malformed file must fail");
  char where[80];
  snprintf(where, sizeof where, "%s:3:1: error: empty line", path);
  CHECK_CONTAINS(sirenrt_filter_error(f), where);
  CHECK_CONTAINS(sirenrt_filter_error(f), "file.si:1:1: note: data file read here");
  sirenrt_filter_free(f);
  unlink(path);
}

/* sirenrt_list_head_word reads a data row in place and gives every other list, and every handle that
 * fails a check, to sirenrt_list_get: the same word and the same error either way. */
static char *take_error(sirenrt_ctx *c) {
  char *msg = c->err_msg ? rt_strdup_printf("%d %s", (int)c->err_site, c->err_msg) : NULL;
  if (c->err_msg) rt_free_message(c->err_msg);
  c->err_msg = NULL;
  c->flagged = 0;
  return msg;
}

static void test_list_head_word(void) {
  sirenrt_filter *f = sirenrt_filter_new(&rw_model, 4, 1, NULL);
  CHECK(f != NULL, "filter_new: %s", sirenrt_last_error());
  if (!f) return;
  CHECK(sirenrt_filter_run(f, ys, 3, 1) == 0, "run: %s", sirenrt_filter_error(f));
  sirenrt_ctx *c = &f->ctx[0];
  int64_t young = sirenrt_list_cons(c, SIRENRT_NIL, 1);
  sirenrt_list_set(c, young, 0, 42);
  const int64_t lists[] = {rt_shared_row(0, 0, 0), rt_shared_row(0, 2, 0), rt_shared_row(0, 0, 1),
                           rt_shared_row(0, 3, 0), rt_shared_row(5, 0, 0), rt_shared_rows(0, 1),
                           SIRENRT_NIL, young, RT_SHARED_BIT | RT_ROW_BIT | 7};
  for (int j = 0; j < (int)(sizeof lists / sizeof lists[0]); j++)
    for (int32_t i = 0; i < 2; i++) {
      int64_t got = sirenrt_list_head_word(c, lists[j], i, 3);
      char *got_error = take_error(c);
      int64_t want = sirenrt_list_get(c, lists[j], i, 3);
      char *want_error = take_error(c);
      CHECK(got == want, "list %d word %d: %lld, sirenrt_list_get says %lld", j, (int)i, (long long)got,
            (long long)want);
      CHECK((!got_error && !want_error) || (got_error && want_error && !strcmp(got_error, want_error)),
            "list %d word %d: error '%s', sirenrt_list_get's '%s'", j, (int)i, got_error ? got_error : "",
            want_error ? want_error : "");
      free(got_error);
      free(want_error);
    }
  double y;
  int64_t w = sirenrt_list_head_word(c, rt_shared_row(0, 2, 0), 0, 3);
  memcpy(&y, &w, sizeof y);
  CHECK(y == ys[2], "row 2 read in place: %g, want %g", y, ys[2]);
  sirenrt_filter_free(f);
}

/* rt_stream_rows (resume's `rows`): what compiled code reads a streamed row from in place must be what
 * sirenrt_stream_row and sirenrt_list_head_word answer, and empty while nothing is readable. */
static void test_stream_rows(void) {
  sirenrt_filter *f = sirenrt_filter_new(&rw_model, 4, 1, NULL);
  CHECK(f != NULL, "filter_new: %s", sirenrt_last_error());
  if (!f) return;
  sirenrt_ctx *c = &f->ctx[0];
  CHECK(rt_stream_rows(f)->n_rows == 0, "no rows before the data is read");
  CHECK(sirenrt_filter_run(f, ys, 3, 1) == 0, "run: %s", sirenrt_filter_error(f));
  const sirenrt_rows *rows = rt_stream_rows(f);
  CHECK(rows->n_rows == 3, "%lld rows, want 3", (long long)rows->n_rows);
  for (int64_t r = 0; r < rows->n_rows; r++) {
    int64_t handle = SIRENRT_FIRST_ROW | r << SIRENRT_ROW_SHIFT;
    CHECK(sirenrt_stream_row(c, r, 0) == handle, "row %lld's handle", (long long)r);
    CHECK(rows->row_start[r + 1] - rows->row_start[r] == 1 && rows->vals[rows->row_start[r]] == ys[r],
          "row %lld in place", (long long)r);
    int64_t word = sirenrt_list_head_word(c, handle, 0, 3);
    CHECK(!memcmp(&word, &rows->vals[rows->row_start[r]], sizeof word), "row %lld's head", (long long)r);
  }
  CHECK(rt_stream_rows(NULL)->n_rows == 0, "no rows without a filter");
  sirenrt_filter_free(f);
}

/* The answer must not depend on the number of threads: streams are keyed by slot, and the barrier's
 * reductions run over fixed blocks combined in block order.  N = 20001 gives every thread count here
 * the pool (RT_PARTICLES_PER_THREAD a thread) and five blocks of RT_RESAMPLE_BLOCK, the last a short
 * one, split unevenly between the threads (and fewer blocks than threads at 7). */
static void test_threads_give_the_same_answer(int32_t scheme, double ess_threshold) {
  const int64_t N = 20001;
  const int32_t counts[] = {1, 2, 4, 7};
  double base[T + 2], est[T + 2];
  int64_t n = 0;
  double base_ev = 0.0, base_ess = 0.0;
  for (int c = 0; c < 4; c++) {
    int32_t threads = counts[c];
    sirenrt_options o = {scheme, ess_threshold, threads, 0};
    sirenrt_filter *f = sirenrt_filter_new(&rw_model, N, 5, &o);
    CHECK(f != NULL, "filter_new with %d threads: %s", (int)threads, sirenrt_last_error());
    if (!f) return;
    CHECK((f->pool != NULL) == (threads > 1), "%d threads: the pool runs the passes", (int)threads);
    CHECK(run_rw(f, T, threads == 1 ? base : est, T + 2, &n) == 0, "run with %d threads", (int)threads);
    if (threads == 1) {
      base_ev = sirenrt_filter_log_evidence(f);
      base_ess = sirenrt_filter_ess(f);
    } else {
      CHECK(memcmp(base, est, sizeof base) == 0, "scheme %d, ess %g: estimate with %d threads differs", scheme,
            ess_threshold, (int)threads);
      CHECK(sirenrt_filter_log_evidence(f) == base_ev && sirenrt_filter_ess(f) == base_ess,
            "scheme %d, ess %g: log evidence or ESS with %d threads differs", scheme, ess_threshold, (int)threads);
    }
    sirenrt_filter_free(f);
  }
}

/* Each particle's own result, flattened: [x, n, x_1..x_n] (n = T for every particle here); the
 * weighted mean of the particles' x is the estimate's; one history row per resample(). */
static void test_particles_and_history(void) {
  enum { N = 300 };
  sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.5, 1, 0};
  sirenrt_filter *f = sirenrt_filter_new(&rw_model, N, 12, &o);
  CHECK(f != NULL, "filter_new");
  if (!f) return;
  double est[T + 2];
  int64_t n_est = 0, n_values = 0, offsets[N + 1];
  double weights[N];
  CHECK(sirenrt_filter_particles(f, NULL, 0, &n_values, offsets, weights) != 0, "particles before run refused");
  CHECK(run_rw(f, T, est, T + 2, &n_est) == 0, "run");
  CHECK(sirenrt_filter_size(f) == N, "size");
  CHECK(sirenrt_filter_particles(f, NULL, 0, &n_values, offsets, weights) == 2 && n_values == N * (T + 2),
        "cap 0 asks for %lld values", (long long)n_values);
  double *values = malloc((size_t)n_values * sizeof(double));
  CHECK(values && sirenrt_filter_particles(f, values, n_values, &n_values, offsets, weights) == 0, "particles");
  double mean = 0.0, total = 0.0;
  for (int64_t i = 0; values && i < N; i++) {
    CHECK(offsets[i] == i * (T + 2) && values[offsets[i] + 1] == T, "particle %lld's slice", (long long)i);
    CHECK(values[offsets[i] + T + 1] == values[offsets[i]], "its last state is its x");
    mean += weights[i] * values[offsets[i]];
    total += weights[i];
  }
  CHECK_NEAR(total, 1.0, 1e-12, "weights are normalised");
  CHECK_NEAR(mean, est[0], 1e-12 * (1 + fabs(est[0])), "the weighted particles give the estimate");
  free(values);
  double ess[T], logz[T];
  int32_t resampled[T];
  int64_t rows[T], n = 0;
  CHECK(sirenrt_filter_history(f, NULL, NULL, NULL, NULL, 0, &n) == 2 && n == T, "%lld history rows", (long long)n);
  CHECK(sirenrt_filter_history(f, ess, logz, resampled, rows, T, &n) == 0, "history");
  for (int k = 0; k < T; k++) {
    CHECK(resampled[k] == (ess[k] < 0.5 * N) && rows[k] == -1, "row %d", k);
  }
  CHECK_NEAR(logz[T - 1], sirenrt_filter_log_evidence(f), 1e-9, "the last row's log evidence is the filter's");
  sirenrt_filter_free(f);
}

/* The C ABI refuses exactly what sirenc's filter() refuses (threads in [1, 256], ess_threshold in
 * [0, 1], a known resampler), each with a message naming the option. */
static void test_bad_options(void) {
  const struct {
    sirenrt_options o;
    const char *message;
  } bad[] = {
      {{SIRENRT_SYSTEMATIC, 0.0, -2, 0}, "threads must be an integer in [1, 256], got -2"},
      {{SIRENRT_SYSTEMATIC, 0.0, 0, 0}, "threads must be an integer in [1, 256], got 0"},
      {{SIRENRT_SYSTEMATIC, 0.0, 257, 0}, "threads must be an integer in [1, 256], got 257"},
      {{SIRENRT_SYSTEMATIC, 5.0, 1, 0}, "ess_threshold must lie in [0, 1], got 5"},
      {{SIRENRT_SYSTEMATIC, 1.0000001, 1, 0}, "ess_threshold must lie in [0, 1], got 1"},
      {{SIRENRT_SYSTEMATIC, -0.5, 1, 0}, "ess_threshold must lie in [0, 1], got -0.5"},
      {{SIRENRT_SYSTEMATIC, NAN, 1, 0}, "ess_threshold must lie in [0, 1], got nan"},
      {{SIRENRT_SYSTEMATIC, INFINITY, 1, 0}, "ess_threshold must lie in [0, 1], got inf"},
      {{-1, 0.0, 1, 0}, "unknown resampler -1"},
      {{SIRENRT_RESIDUAL + 1, 0.0, 1, 0}, "unknown resampler 4"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sirenrt_filter *f = sirenrt_filter_new(&rw_model, 10, 5, &bad[i].o);
    CHECK(f == NULL, "options %zu must be refused", i);
    sirenrt_filter_free(f);
    CHECK_CONTAINS(sirenrt_last_error(), bad[i].message);
    CHECK_CONTAINS(sirenrt_last_error(), "sirenrt_filter_new: ");
  }
  /* The ends of each range are accepted. */
  const sirenrt_options good[] = {{SIRENRT_SYSTEMATIC, 0.0, 1, 0}, {SIRENRT_RESIDUAL, 1.0, 256, 0},
                                   {SIRENRT_MULTINOMIAL, 0.5, 3, 1 << 30}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    sirenrt_filter *f = sirenrt_filter_new(&rw_model, 10, 5, &good[i]);
    CHECK(f != NULL, "options %zu must be accepted: %s", i, sirenrt_last_error());
    sirenrt_filter_free(f);
  }
  sirenrt_filter *f = sirenrt_filter_new(&rw_model, 10, 5, NULL);
  CHECK(f != NULL && f->threads == 1 && f->opts.ess_threshold == 0.0, "NULL options are the defaults");
  sirenrt_filter_free(f);
}

/* ---- the memory limit (memory.c) ---- */
/* range.si:  1  let xs = List.range(0., K) in List.len(xs)       (K from the frame, set by the test)
 * cons.si:   1  fold(fun (acc, i) -> i :: acc, ..., [])          (K cells consed one at a time) */
static const sirenrt_site range_sites[] = {{"range.si", 1, 10, 30, "let xs = List.range(0., K) in List.len(xs)"}};
static double range_k = 0;
static int32_t range_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  int64_t xs = sirenrt_list_range(ctx, 0.0, range_k, 0);
  double n = sirenrt_list_len(ctx, xs);
  memcpy(frame + 8, &n, sizeof n);
  return SIRENRT_FINISHED;
}
static int32_t cons_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  int64_t acc = SIRENRT_NIL;
  for (int64_t i = 0; i < (int64_t)range_k; i++) {
    int64_t cell = sirenrt_list_cons(ctx, acc, 1);
    if (cell == SIRENRT_NIL) break;
    sirenrt_list_set(ctx, cell, 0, double_to_bits((double)i));
    acc = cell;
  }
  double n = sirenrt_list_len(ctx, acc);
  memcpy(frame + 8, &n, sizeof n);
  return SIRENRT_FINISHED;
}

static void test_memory_limit(void) {
  sirenrt_model m = {.abi_version = SIRENRT_ABI_VERSION, .name = "range", .method = "smc", .plan = "",
                     .result_type = "f", .frame_size = 16, .result_offset = 8, .resume = range_resume,
                     .not_streamable_reason = "no data", .n_sites = 1, .sites = range_sites};
  /* Too many particles for the limit: refused before allocating, naming the largest count that fits. */
  sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, 1, 1 << 20};
  CHECK(sirenrt_filter_new(&m, 100000, 1, &o) == NULL, "100000 particles in 1 MiB");
  CHECK_CONTAINS(sirenrt_last_error(), "sirenrt_filter_new: 100000 particles need ");
  CHECK_CONTAINS(sirenrt_last_error(), "more than the memory limit of 1.00 MiB; use at most ");
  long long fits = 0;
  const char *at = strstr(sirenrt_last_error(), "use at most ");
  CHECK(at && sscanf(at, "use at most %lld particles", &fits) == 1 && fits > 1000, "fits: %s", sirenrt_last_error());
  sirenrt_filter *f = sirenrt_filter_new(&m, fits, 1, &o);
  CHECK(f != NULL, "%lld particles fit: %s", fits, sirenrt_last_error());
  CHECK(f && f->arena_limit_words < 8, "what is left for lists is tiny");
  sirenrt_filter_free(f);
  CHECK(sirenrt_filter_new(&m, fits + 1, 1, &o) == NULL, "one more does not fit");
  /* The default: half the machine's memory, which 2^31 - 1 particles' contexts alone exceed. */
  CHECK(sirenrt_filter_new(&m, SIRENRT_MAX_PARTICLES, 1, NULL) == NULL, "2^31 - 1 particles");
  CHECK_CONTAINS(sirenrt_last_error(), "(half the machine's memory); use at most ");
  /* More than an offspring count holds (rt_count), whatever the memory. */
  CHECK(sirenrt_filter_new(&m, (int64_t)SIRENRT_MAX_PARTICLES + 1, 1, NULL) == NULL, "2^31 particles");
  CHECK_CONTAINS(sirenrt_last_error(), "the number of particles must be in [1, 2^31), got 2147483648");
  /* Frames past 2^40 bytes, whatever the limit: 2^30 particles of 4 KiB (each one's state is more). */
  sirenrt_model big = m;
  big.frame_size = 4096;
  sirenrt_options huge = {SIRENRT_SYSTEMATIC, 0.0, 1, (int64_t)1 << 62};
  CHECK(sirenrt_filter_new(&big, (int64_t)1 << 30, 1, &huge) == NULL, "2^42 bytes of frames");
  CHECK_CONTAINS(sirenrt_last_error(), "particles of 4096 bytes each exceed the runtime's limit of 2**40 bytes");
  o.memory_limit = -1;
  CHECK(sirenrt_filter_new(&m, 10, 1, &o) == NULL, "a negative limit");
  CHECK_CONTAINS(sirenrt_last_error(), "sirenrt_filter_new: memory_limit must be a number of bytes > 0");

  /* Lists: each particle an equal share of what the state leaves; List.range checks before it allocates. */
  o.memory_limit = 1 << 20;
  f = sirenrt_filter_new(&m, 10, 1, &o);
  CHECK(f != NULL, "10 particles: %s", sirenrt_last_error());
  if (!f) return;
  uint64_t share = f->arena_limit_words;
  CHECK(share > 10000 && share * 8 * 10 <= (1u << 20), "share %llu words", (unsigned long long)share);
  double out[1];
  int64_t n = 0;
  range_k = (double)(share / 4); /* 4-word cells: header, count, tail, x */
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0 && sirenrt_filter_estimate(f, out, 1, &n) == 0 && out[0] == range_k,
        "List.range of a quarter of the share: %s", sirenrt_filter_error(f));
  sirenrt_filter_free(f);
  f = sirenrt_filter_new(&m, 10, 1, &o);
  if (!f) return;
  range_k = (double)(share / 4 + 1);
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) != 0, "List.range past the share must fail");
  char want[160];
  snprintf(want, sizeof want, "range.si:1:10: error: List.range: %lld elements need ", (long long)range_k);
  CHECK_CONTAINS(sirenrt_filter_error(f), want);
  CHECK_CONTAINS(sirenrt_filter_error(f), "more than a particle's share of the filter's memory limit (");
  CHECK_CONTAINS(sirenrt_filter_error(f), " over 10 particles); raise the limit (memory_limit, --memory-limit)");
  CHECK_CONTAINS(sirenrt_filter_error(f), "\nlet xs = List.range(0., K) in List.len(xs)\n         ^~~~~~~~~~~~~~~~~~~~");
  CHECK(f->ctx[0].arena_cap == 0, "nothing was allocated");
  sirenrt_filter_free(f);

  /* Growing one cell at a time: the arena's capacity stops at the share (not at the next doubling). */
  m.resume = cons_resume;
  f = sirenrt_filter_new(&m, 10, 1, &o);
  if (!f) return;
  range_k = (double)(share / 4); /* 4-word cells: header, count, tail, x */
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0 && sirenrt_filter_estimate(f, out, 1, &n) == 0 && out[0] == range_k,
        "consing a quarter of the share: %s", sirenrt_filter_error(f));
  CHECK(f->ctx[0].arena_cap <= share, "capacity %u within the share %llu", f->ctx[0].arena_cap, (unsigned long long)share);
  range_k = (double)(share / 4 + 1);
  CHECK(sirenrt_filter_run(f, NULL, 0, 0) != 0, "consing past the share must fail");
  CHECK_CONTAINS(sirenrt_filter_error(f), "error: this particle's lists would grow to ");
  CHECK_CONTAINS(sirenrt_filter_error(f), "more than a particle's share of the filter's memory limit");
  sirenrt_filter_free(f);
}

/* ---- streams keyed one at a time after passes without draws ----
 * Each particle draws a standard normal only at steps 0, 1, 5 and 6 of 9 (one resample() a step, no
 * observation: equal weights, so systematic resampling leaves every particle in its slot).  After the
 * passes that draw nothing the population loop keys streams one at a time, without their first block;
 * the draws must still be those of the stream of (seed, slot, epoch), epoch = step. */
enum { SPORADIC_STEPS = 9, SPORADIC_DRAWS = 4 };
typedef struct sporadic_frame {
  int32_t pc, pad;
  int64_t t;
  double z[SPORADIC_DRAWS];
  double result;
} sporadic_frame;

static int sporadic_slot(int64_t t) { return t == 0 ? 0 : t == 1 ? 1 : t == 5 ? 2 : t == 6 ? 3 : -1; }

static int32_t sporadic_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  sporadic_frame *f = (sporadic_frame *)frame;
  if (f->pc == 0) f->t = 0;
  else f->t++;
  if (f->t == SPORADIC_STEPS) {
    f->result = f->z[0] + f->z[1] + f->z[2] + f->z[3];
    return SIRENRT_FINISHED;
  }
  int k = sporadic_slot(f->t);
  if (k >= 0) f->z[k] = sirenrt_std_normal(ctx);
  f->pc = 1;
  return SIRENRT_AT_RESAMPLE;
}

static const sirenrt_model sporadic_model = {
    .abi_version = SIRENRT_ABI_VERSION, .name = "sporadic", .method = "smc", .plan = "z: sample",
    .result_type = "f", .frame_size = sizeof(sporadic_frame), .result_offset = offsetof(sporadic_frame, result),
    .resume = sporadic_resume, .not_streamable_reason = "the program reads no data",
};

static void test_streams_after_passes_without_draws(void) {
  enum { N = 100 };
  const uint64_t seed = 17;
  const int32_t counts[] = {1, 2};
  for (int c = 0; c < 2; c++) {
    sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, counts[c], 0};
    sirenrt_filter *f = sirenrt_filter_new(&sporadic_model, N, seed, &o);
    CHECK(f != NULL, "filter_new: %s", sirenrt_last_error());
    if (!f) return;
    CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "run: %s", sirenrt_filter_error(f));
    int bad = 0;
    for (int64_t i = 0; i < N; i++) {
      const sporadic_frame *fr = (const sporadic_frame *)(f->frames + (size_t)i * sizeof(sporadic_frame));
      for (int64_t t = 0; t < SPORADIC_STEPS; t++) {
        int k = sporadic_slot(t);
        if (k < 0) continue;
        rt_rng g;
        rt_rng_init(&g, seed, (uint64_t)i, (uint32_t)t, RT_DOMAIN_PARTICLE);
        bad += fr->z[k] != rt_normal(&g);
      }
    }
    CHECK(bad == 0, "%d threads: %d draws are not those of the stream of (seed, slot, epoch)", (int)counts[c], bad);
    CHECK(f->rekey_lazy == 1, "the last passes drew nothing: streams keyed one at a time");
    sirenrt_filter_free(f);
  }
}

int main(void) {
  walk_data(ys, T, 2024, 1.0, 0.5);
  for (int32_t scheme = SIRENRT_SYSTEMATIC; scheme <= SIRENRT_RESIDUAL; scheme++)
    test_threads_give_the_same_answer(scheme, 0.0);
  test_threads_give_the_same_answer(SIRENRT_SYSTEMATIC, 0.5);
  test_particles_and_history();
  test_bad_options();
  test_kalman(SIRENRT_SYSTEMATIC, 0.0);
  test_kalman(SIRENRT_MULTINOMIAL, 0.0);
  test_kalman(SIRENRT_STRATIFIED, 0.0);
  test_kalman(SIRENRT_RESIDUAL, 0.0);
  test_kalman(SIRENRT_SYSTEMATIC, 0.5);
  test_unbiased_over_seeds(SIRENRT_SYSTEMATIC, 0.0);
  test_unbiased_over_seeds(SIRENRT_MULTINOMIAL, 0.5);
  test_stream_equals_run();
  test_estimator_layout();
  test_result_views();
  test_errors();
  test_files();
  test_memory_limit();
  test_list_head_word();
  test_stream_rows();
  test_streams_after_passes_without_draws();
  return check_report("test_filter");
}
