/* test_threads.c — a small model run by 1 to 8 threads, for ThreadSanitizer
 * (tests/unit/test_runtime_ctest.py builds it with -DSIRENRT_TSAN=ON; ctest runs it in every test build).
 *
 * The particles' first resume reads both data files lazily, so at every thread count several threads
 * meet rt_ensure_table at once (issue 11: TSan saw a race on rt_table.loaded there); a missing and a
 * malformed file fail on every thread at once; a stream and an estimate() in the middle of it cover
 * the row requests.  The answers must not depend on the thread count, and the errors must be the ones
 * a single thread reports. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "population/population.h"
#include "models.h"

/* model.si:
 *   1  let obs = File.read("obs.csv") in
 *   2  let drift = File.read("drift.csv") in
 *   3  let d = List.hd(List.hd(drift)) in
 *   4  fold(fun (acc, row) -> let (x, xs) = acc in
 *   5    let x <- gaussian(x + d, 1.) in observe(gaussian(x, 0.5), List.hd(row));
 *   6    resample(); (x, x :: xs), obs, (0., []))                                            */
static const sirenrt_site two_sites[] = {
    {"model.si", 1, 11, 29, "let obs = File.read(\"obs.csv\") in"},
    {"model.si", 2, 13, 33, "let drift = File.read(\"drift.csv\") in"},
    {"model.si", 5, 12, 29, "  let x <- gaussian(x + d, 1.) in observe(gaussian(x, 0.5), List.hd(row));"},
    {"model.si", 5, 38, 62, "  let x <- gaussian(x + d, 1.) in observe(gaussian(x, 0.5), List.hd(row));"},
};

typedef struct two_frame {
  int32_t pc, pad;
  int64_t rows; /* the rows of obs.csv not yet folded over */
  double d;
  double x;
  int64_t xs;
  double result_x; /* result: (x, xs) */
  int64_t result_xs;
} two_frame;

static const sirenrt_root two_roots[] = {{1, offsetof(two_frame, xs), "Lf"}};

static int32_t two_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  two_frame *f = (two_frame *)frame;
  if (f->pc == 0) {
    f->rows = sirenrt_file(ctx, 0, 0);
    int64_t drift = sirenrt_file(ctx, 1, 1);
    if (drift == SIRENRT_NIL) return SIRENRT_FINISHED; /* an error was recorded (or no rows) */
    f->d = bits_to_double(sirenrt_list_get(ctx, sirenrt_list_get(ctx, drift, 0, 1), 0, 1));
    f->x = 0.0;
    f->xs = SIRENRT_NIL;
  }
  if (f->rows == SIRENRT_NIL) {
    f->result_x = f->x;
    f->result_xs = f->xs;
    return SIRENRT_FINISHED;
  }
  double y = bits_to_double(sirenrt_list_get(ctx, sirenrt_list_get(ctx, f->rows, 0, 3), 0, 3));
  f->rows = sirenrt_list_tl(ctx, f->rows, 3);
  f->x = sirenrt_sample_gaussian(ctx, f->x + f->d, 1.0, 2);
  sirenrt_observe_gaussian(ctx, f->x, 0.5, y, 3);
  int64_t cell = sirenrt_list_cons(ctx, f->xs, 1);
  sirenrt_list_set(ctx, cell, 0, double_to_bits(f->x));
  f->xs = cell;
  f->pc = 1;
  return SIRENRT_AT_RESAMPLE;
}

/* The same model streaming file 0 (row t read in place when the table holds it, as compiled code does
 * through resume's `rows`, else through sirenrt_stream_row), with file 1 read lazily.  Under
 * ThreadSanitizer this checks that the view is safe while another thread reads file 0. */
static int32_t stream_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight;
  two_frame *f = (two_frame *)frame;
  if (f->pc == 0) {
    int64_t drift = sirenrt_file(ctx, 1, 1);
    if (drift == SIRENRT_NIL) return SIRENRT_FINISHED;
    f->d = bits_to_double(sirenrt_list_get(ctx, sirenrt_list_get(ctx, drift, 0, 1), 0, 1));
    f->x = 0.0;
    f->xs = SIRENRT_NIL;
    f->rows = 0; /* the next row's index */
    f->pc = 1;
  }
  int64_t r = f->rows;
  int in_place = r < rows->n_rows && rows->row_start[r + 1] > rows->row_start[r];
  int64_t row = in_place ? SIRENRT_FIRST_ROW | r << SIRENRT_ROW_SHIFT : sirenrt_stream_row(ctx, r, 0);
  if (row == SIRENRT_NEED) return SIRENRT_NEED_ROW;
  if (row == SIRENRT_END) {
    f->result_x = f->x;
    f->result_xs = f->xs;
    return SIRENRT_FINISHED;
  }
  double y = in_place ? rows->vals[rows->row_start[r]] : bits_to_double(sirenrt_list_get(ctx, row, 0, 3));
  f->rows++;
  f->x = sirenrt_sample_gaussian(ctx, f->x + f->d, 1.0, 2);
  sirenrt_observe_gaussian(ctx, f->x, 0.5, y, 3);
  int64_t cell = sirenrt_list_cons(ctx, f->xs, 1);
  sirenrt_list_set(ctx, cell, 0, double_to_bits(f->x));
  f->xs = cell;
  return SIRENRT_AT_RESAMPLE;
}

enum { ROWS = 4, MAX_THREADS = 8 };
static char dir[] = "/tmp/sirenrt_test_threads_XXXXXX";
static char obs_path[64], drift_path[64], bad_path[64], missing_path[64];

static void write_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  CHECK(fp != NULL, "cannot write %s", path);
  if (!fp) return;
  fputs(text, fp);
  fclose(fp);
}

static sirenrt_model model_of(const char *obs, const char *drift, sirenrt_resume_fn resume) {
  static const char *files[4][2];
  static int next = 0;
  const char **fs = files[next++ % 4];
  fs[0] = obs;
  fs[1] = drift;
  sirenrt_model m = {.abi_version = SIRENRT_ABI_VERSION, .name = "two", .method = "smc", .plan = "x: sample",
                     .result_type = "PfLf", .frame_size = sizeof(two_frame),
                     .result_offset = offsetof(two_frame, result_x), .resume = resume, .streamable = 1,
                     .not_streamable_reason = "", .n_files = 2, .files = fs, .n_sites = 4, .sites = two_sites,
                     .n_roots = 1, .roots = two_roots};
  return m;
}

/* Enough particles that every thread count up to 8 gets the pool. */
static const int64_t N = (int64_t)RT_PARTICLES_PER_THREAD * MAX_THREADS;

static sirenrt_filter *new_filter(const sirenrt_model *m, int threads) {
  sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, threads, 0};
  sirenrt_filter *f = sirenrt_filter_new(m, N, 11, &o);
  CHECK(f != NULL, "filter_new with %d threads: %s", threads, sirenrt_last_error());
  if (f) CHECK((f->pool != NULL) == (threads > 1), "%d threads: the pool runs the particles", threads);
  return f;
}

static void test_lazy_files(void) {
  sirenrt_model m = model_of(obs_path, drift_path, two_resume);
  double base[ROWS + 2], est[ROWS + 2];
  int64_t n = 0;
  for (int threads = 1; threads <= MAX_THREADS; threads++) {
    sirenrt_filter *f = new_filter(&m, threads);
    if (!f) return;
    for (int rerun = 0; rerun < 1 + (threads == MAX_THREADS); rerun++) { /* a second run reads them again */
      CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "run with %d threads: %s", threads, sirenrt_filter_error(f));
      CHECK(sirenrt_filter_estimate(f, threads == 1 && rerun == 0 ? base : est, ROWS + 2, &n) == 0 && n == ROWS + 2,
            "estimate with %d threads: %s", threads, sirenrt_filter_error(f));
      if (threads > 1 || rerun > 0)
        CHECK(memcmp(base, est, sizeof base) == 0, "the estimate with %d threads differs", threads);
    }
    sirenrt_filter_free(f);
  }
  CHECK(base[1] == ROWS, "the list holds one state per row");
}

static void test_file_errors(void) {
  const struct {
    const char *obs, *drift, *message;
  } cases[] = {
      {obs_path, missing_path, "model.si:2:13: error: cannot read data file"},
      {missing_path, drift_path, "model.si:1:11: error: cannot read data file"},
      {bad_path, drift_path, ":3:1: error: "},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    sirenrt_model m = model_of(cases[c].obs, cases[c].drift, two_resume);
    char *first = NULL;
    for (int threads = 1; threads <= MAX_THREADS; threads += MAX_THREADS - 1) {
      sirenrt_filter *f = new_filter(&m, threads);
      if (!f) return;
      CHECK(sirenrt_filter_run(f, NULL, 0, 0) != 0, "case %zu with %d threads must fail", c, threads);
      const char *error = sirenrt_filter_error(f);
      CHECK_CONTAINS(error, cases[c].message);
      if (!first) first = strdup(error);
      else CHECK(strcmp(first, error) == 0, "case %zu: %d threads report\n%s\nnot\n%s", c, threads, error, first);
      sirenrt_filter_free(f);
    }
    free(first);
  }
}

static void test_stream(void) {
  sirenrt_model m = model_of(obs_path, drift_path, stream_resume);
  const double ys[ROWS] = {0.5, 1.25, 0.75, 2.0};
  double base[ROWS + 2], est[ROWS + 2], mid_base[ROWS + 2], mid[ROWS + 2];
  int64_t n = 0;
  for (int threads = 1; threads <= MAX_THREADS; threads += 3) {
    sirenrt_filter *f = new_filter(&m, threads);
    if (!f) return;
    for (int t = 0; t < ROWS; t++) {
      CHECK(sirenrt_filter_step(f, &ys[t], 1) == 0, "step %d with %d threads: %s", t, threads, sirenrt_filter_error(f));
      if (t == 1)
        CHECK(sirenrt_filter_estimate(f, threads == 1 ? mid_base : mid, ROWS + 2, &n) == 0,
              "estimate in the stream with %d threads: %s", threads, sirenrt_filter_error(f));
    }
    CHECK(sirenrt_filter_estimate(f, threads == 1 ? base : est, ROWS + 2, &n) == 0, "estimate with %d threads: %s",
          threads, sirenrt_filter_error(f));
    if (threads > 1) {
      CHECK(memcmp(base, est, (size_t)n * sizeof(double)) == 0, "stream with %d threads differs", threads);
      CHECK(memcmp(mid_base, mid, 4 * sizeof(double)) == 0, "mid-stream estimate with %d threads differs", threads);
    }
    sirenrt_filter_free(f);
  }
}

/* Symbolic states (-m ssi) across threads: offspring on different threads share a state and copy it on
 * their first write, states are collected as particles stop, and estimate() in the stream runs a
 * clone sharing them; the answers are those of one thread.  The dynamic model forces x_1 in half the
 * particles (unequal weights, so resampling duplicates states); the trajectory keeps the symbolic
 * words in a list. */
static void test_symbolic_stream(const sirenrt_model *m) {
  const double ys[ROWS] = {0.5, 1.25, 0.75, 2.0};
  double base[ROWS + 2], est[ROWS + 2], mid_base[ROWS + 2], mid[ROWS + 2];
  int64_t n = 0, n_mid = 0;
  char *plan = NULL;
  for (int threads = 1; threads <= MAX_THREADS; threads += MAX_THREADS - 1) {
    sirenrt_filter *f = new_filter(m, threads);
    if (!f) return;
    for (int t = 0; t < ROWS; t++) {
      CHECK(sirenrt_filter_step(f, &ys[t], 1) == 0, "%s: step %d with %d threads: %s", m->name, t, threads,
            sirenrt_filter_error(f));
      if (t == 1)
        CHECK(sirenrt_filter_estimate(f, threads == 1 ? mid_base : mid, ROWS + 2, &n_mid) == 0,
              "%s: estimate in the stream with %d threads: %s", m->name, threads, sirenrt_filter_error(f));
    }
    CHECK(sirenrt_filter_estimate(f, threads == 1 ? base : est, ROWS + 2, &n) == 0, "%s: estimate with %d threads: %s",
          m->name, threads, sirenrt_filter_error(f));
    if (threads == 1) {
      plan = strdup(sirenrt_filter_runtime_plan(f));
    } else {
      CHECK(memcmp(base, est, (size_t)n * sizeof(double)) == 0, "%s: stream with %d threads differs", m->name, threads);
      CHECK(memcmp(mid_base, mid, (size_t)n_mid * sizeof(double)) == 0, "%s: mid-stream estimate with %d threads differs",
            m->name, threads);
      CHECK(plan && strcmp(plan, sirenrt_filter_runtime_plan(f)) == 0, "%s: plan with %d threads: %s", m->name, threads,
            sirenrt_filter_runtime_plan(f));
    }
    sirenrt_filter_free(f);
  }
  free(plan);
}

int main(void) {
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(obs_path, sizeof obs_path, "%s/obs.csv", dir);
  snprintf(drift_path, sizeof drift_path, "%s/drift.csv", dir);
  snprintf(bad_path, sizeof bad_path, "%s/bad.csv", dir);
  snprintf(missing_path, sizeof missing_path, "%s/missing.csv", dir);
  write_file(obs_path, "y\n0.5\n1.25\n0.75\n2.0\n");
  write_file(drift_path, "d\n0.125\n");
  write_file(bad_path, "y\n0.5\n1.2.5\n");
  test_lazy_files();
  test_file_errors();
  test_stream();
  test_symbolic_stream(&ssi_dynamic_model);
  test_symbolic_stream(&ssi_trajectory_model);
  unlink(obs_path);
  unlink(drift_path);
  unlink(bad_path);
  rmdir(dir);
  return check_report("test_threads");
}
