/* test_span.c — the compiled particle loop's contract (sirenrt_span_fn, sirenrt.h): a model with a
 * span must give bit for bit the answers of the same model without one, for any number of threads,
 * run or streamed, while particles draw (their streams rekeyed at every resampling), zero their
 * weights (flagged contexts), build list cells (arenas in use), wait for rows and finish: every case
 * the span hands back to the runtime.  The span here is the contract written in C; sirenc generates
 * the same loop in LLVM (backend/llvm.py), tested through the compiled models of the Python suite. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "population/population.h"
#include "models.h"

enum { T = 25, N = 5003 };
static double ys[T];

/* A random walk without list slots reading its rows in place:
 *   x_t ~ N(x_{t-1}, 1); weight 0 when x_t < -2.5, else observe N(x_t, 0.5) at y_t; every 7th step
 *   also builds a list cell it drops; resample(); the result is x_T, or from step 10 on x_t for a
 *   particle whose x_t is within 0.01 above an integer, which finishes there. */
typedef struct walk_frame {
  int32_t pc, pad;
  double x;
  int64_t t;
  double result_x;
} walk_frame;

static int32_t walk_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  walk_frame *f = (walk_frame *)frame;
  if (f->pc == 0) {
    f->x = 0.0;
    f->t = 0;
    f->pc = 1;
  }
  int64_t t = f->t;
  if (t >= 10 && f->x - floor(f->x) < 0.01) { /* 1 in 100 a step finish early: barriers of mixed states */
    f->result_x = f->x;
    return SIRENRT_FINISHED;
  }
  double y;
  if (t < rows->n_rows && rows->row_start[t + 1] > rows->row_start[t]) {
    y = rows->vals[rows->row_start[t]];
  } else {
    int64_t row = sirenrt_stream_row(ctx, t, 0);
    if (row == SIRENRT_NEED) return SIRENRT_NEED_ROW;
    if (row == SIRENRT_END) {
      f->result_x = f->x;
      return SIRENRT_FINISHED;
    }
    y = bits_to_double(sirenrt_list_head_word(ctx, row, 0, 0));
  }
  f->x = sirenrt_sample_gaussian(ctx, f->x, 1.0, 0);
  if (f->x < -2.5)
    sirenrt_add_log_weight(ctx, -INFINITY, 0);
  else
    *log_weight += -0.5 * (y - f->x) * (y - f->x) / 0.5;
  if (t % 7 == 3) sirenrt_list_cons(ctx, SIRENRT_NIL, 1);
  f->t = t + 1;
  return SIRENRT_AT_RESAMPLE;
}

static int64_t span_resumed, span_handed_back, span_promised, span_promise_broken;

/* The contract for any resume whose frames are frame_size bytes.  Where the runtime says every slot
 * may resume (may_resume), the generated loop reads no state: here each is checked against it. */
static int64_t span_of(const sirenrt_span *s, int64_t lo, int64_t hi, sirenrt_resume_fn resume, size_t frame_size) {
  for (int64_t i = lo; i < hi; i++) {
    uint8_t *c = s->ctx + (i - s->ctx_first) * s->ctx_size;
    int8_t state = s->state[i];
    if (s->may_resume) {
      __atomic_add_fetch(&span_promised, 1, __ATOMIC_RELAXED);
      if (state != SIRENRT_RUNNABLE && state != SIRENRT_AT_RESAMPLE)
        __atomic_add_fetch(&span_promise_broken, 1, __ATOMIC_RELAXED);
    }
    uint32_t key;
    memcpy(&key, c + s->epoch_offset, sizeof key);
    if ((state != SIRENRT_RUNNABLE && state != SIRENRT_AT_RESAMPLE) || (s->keyed && key != s->epoch)) {
      __atomic_add_fetch(&span_handed_back, 1, __ATOMIC_RELAXED);
      return i;
    }
    int32_t r = resume((sirenrt_ctx *)c, s->frames + (size_t)i * frame_size, &s->log_weights[i], s->rows);
    s->state[i] = (int8_t)r;
    __atomic_add_fetch(&span_resumed, 1, __ATOMIC_RELAXED);
    int32_t flagged;
    memcpy(&flagged, c + s->flagged_offset, sizeof flagged);
    if (r != SIRENRT_AT_RESAMPLE || flagged) { /* flagged: an error, a zero weight or list cells built */
      __atomic_add_fetch(&span_handed_back, 1, __ATOMIC_RELAXED);
      return i | SIRENRT_SPAN_RESUMED;
    }
  }
  return hi;
}

static int64_t walk_span(const sirenrt_span *s, int64_t lo, int64_t hi) {
  return span_of(s, lo, hi, walk_resume, sizeof(walk_frame));
}

static const sirenrt_site walk_sites[] = {{"walk.si", 1, 1, 2, "x"}};
static const char *const walk_files[] = {"/nonexistent/walk.csv"};
static const sirenrt_model walk_model = {
    .abi_version = SIRENRT_ABI_VERSION,
    .name = "walk",
    .method = "pf",
    .plan = "x: sample",
    .result_type = "f",
    .frame_size = sizeof(walk_frame),
    .result_offset = offsetof(walk_frame, result_x),
    .resume = walk_resume,
    .streamable = 1,
    .not_streamable_reason = "",
    .n_files = 1,
    .files = walk_files,
    .n_sites = 1,
    .sites = walk_sites,
};

typedef struct answer {
  double estimate, log_evidence, ess;
} answer;

/* Runs (or streams, a row a step) the walk; 0 on success. */
static int walk(const sirenrt_model *m, int32_t threads, int stream, answer *out) {
  sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, threads, 0};
  sirenrt_filter *f = sirenrt_filter_new(m, N, 17, &o);
  CHECK(f != NULL, "filter_new: %s", sirenrt_last_error());
  if (!f) return 1;
  int failed = 0;
  if (stream) {
    for (int t = 0; t < T && !failed; t++) failed = sirenrt_filter_step(f, &ys[t], 1);
  } else {
    failed = sirenrt_filter_run(f, ys, T, 1);
  }
  int64_t n = 0;
  failed = failed || sirenrt_filter_estimate(f, &out->estimate, 1, &n) || n != 1;
  CHECK(!failed, "walk: %s", sirenrt_filter_error(f));
  out->log_evidence = sirenrt_filter_log_evidence(f);
  out->ess = sirenrt_filter_ess(f);
  sirenrt_filter_free(f);
  return failed;
}

static void test_span_changes_no_answer(void) {
  sirenrt_model with_span = walk_model;
  with_span.resume_span = walk_span;
  const int32_t counts[] = {1, 2, 4, 7};
  for (int stream = 0; stream < 2; stream++) {
    answer base, got;
    if (walk(&walk_model, 1, stream, &base)) return;
    CHECK(isfinite(base.estimate) && isfinite(base.log_evidence), "a finite answer");
    for (int c = 0; c < 4; c++) {
      span_resumed = span_handed_back = 0;
      if (walk(&with_span, counts[c], stream, &got)) return;
      CHECK(memcmp(&base, &got, sizeof base) == 0,
            "%s, %d threads: with the span %.17g (log evidence %.17g), without %.17g (%.17g)",
            stream ? "streamed" : "run", (int)counts[c], got.estimate, got.log_evidence, base.estimate,
            base.log_evidence);
      /* The span did the work, and handed back the particles it must (waiting for rows when streamed,
       * zero weights, dropped list cells, finishing, streams to rekey). */
      CHECK(span_resumed > (int64_t)N * T / 2, "%lld resumes in the span", (long long)span_resumed);
      CHECK(span_handed_back > T, "%lld particles handed back", (long long)span_handed_back);
    }
  }
}

/* Every draw comes from its slot's stream of its epoch, (seed, slot, epoch), from its first word on,
 * however the pass keys the streams (all of them a batch ahead of the loop after a resampling that
 * followed draws, or stale ones as their slots come) and with or without a span: a model that draws one
 * normal per step and resamples after it, on a population that is not a whole number of key batches,
 * split across threads at odd slots. */
enum { DRAW_T = 6, DRAW_N = 101 };
static double drawn[DRAW_T][DRAW_N], drawn2[DRAW_T][DRAW_N]; /* z1 and z2 of test_waiting_keeps_its_stream */
static const sirenrt_filter *drawing; /* the filter whose frames give a resume its slot (its context may be
                                       * a lane of the population loop's own) */

typedef struct draw_frame {
  int32_t pc, pad;
  int64_t t;
  double result;
} draw_frame;

static int32_t draw_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)rows;
  draw_frame *f = (draw_frame *)frame;
  if (f->t == DRAW_T) {
    f->result = (double)f->t;
    return SIRENRT_FINISHED;
  }
  double z = sirenrt_sample_gaussian(ctx, 0.0, 1.0, 0);
  drawn[f->t][(frame - drawing->frames) / (ptrdiff_t)sizeof(draw_frame)] = z;
  *log_weight += -0.5 * z * z; /* unequal weights: resampling copies and drops particles */
  f->t++;
  return SIRENRT_AT_RESAMPLE;
}

static int64_t draw_span(const sirenrt_span *s, int64_t lo, int64_t hi) {
  return span_of(s, lo, hi, draw_resume, sizeof(draw_frame));
}

/* The walk's descriptor for a model of draw_frames resumed by `resume` (and `span` with a span), and
 * its filter of DRAW_N particles, with the draws' records cleared; NULL (a failed check) if none. */
static sirenrt_model draw_model(const char *name, sirenrt_resume_fn resume, sirenrt_span_fn span, int with_span) {
  sirenrt_model m = walk_model;
  m.name = name;
  m.frame_size = sizeof(draw_frame);
  m.result_offset = offsetof(draw_frame, result);
  m.resume = resume;
  m.resume_span = with_span ? span : NULL;
  return m;
}

static sirenrt_filter *draw_filter(const sirenrt_model *m, uint64_t seed, int32_t threads) {
  sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, threads, 0};
  sirenrt_filter *f = sirenrt_filter_new(m, DRAW_N, seed, &o);
  CHECK(f != NULL, "filter_new: %s", sirenrt_last_error());
  drawing = f;
  memset(drawn, 0, sizeof drawn);
  memset(drawn2, 0, sizeof drawn2);
  return f;
}

static void test_draws_from_slot_streams(void) {
  const uint64_t seed = 29;
  for (int with_span = 0; with_span < 2; with_span++)
    for (int32_t threads = 1; threads <= 3; threads += 2) {
      sirenrt_model m = draw_model("draw", draw_resume, draw_span, with_span);
      m.streamable = 0;
      m.n_files = 0;
      m.files = NULL;
      sirenrt_filter *f = draw_filter(&m, seed, threads);
      if (!f) return;
      CHECK(sirenrt_filter_run(f, NULL, 0, 0) == 0, "draw: %s", sirenrt_filter_error(f));
      int bad = 0;
      for (int t = 0; t < DRAW_T; t++)
        for (int i = 0; i < DRAW_N; i++) {
          rt_rng g;
          rt_rng_init(&g, seed, (uint64_t)i, (uint32_t)t, RT_DOMAIN_PARTICLE); /* one resampling a step */
          double want = rt_normal(&g);
          bad += memcmp(&want, &drawn[t][i], sizeof want) != 0;
        }
      CHECK(bad == 0, "%s span, %d threads: %d draws not from their slot's stream", with_span ? "with" : "without",
            (int)threads, bad);
      sirenrt_filter_free(f);
    }
}

/* A particle that draws, then waits for its row, goes on drawing from the same stream when the row
 * comes (no resampling in between), whichever context it drew from before it waited: streamed a row a
 * step, the pass after each resampling draws z1 and stops at the missing row; the next step's row lets
 * it draw z2, its stream's second normal. */
static int32_t wait_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)rows;
  draw_frame *f = (draw_frame *)frame;
  ptrdiff_t slot = (frame - drawing->frames) / (ptrdiff_t)sizeof(draw_frame);
  if (f->pc == 0) {
    drawn[f->t][slot] = sirenrt_sample_gaussian(ctx, 0.0, 1.0, 0);
    f->pc = 1;
  }
  int64_t row = sirenrt_stream_row(ctx, f->t, 0);
  if (row == SIRENRT_NEED) return SIRENRT_NEED_ROW;
  if (row == SIRENRT_END || f->t + 1 == DRAW_T) {
    f->result = (double)f->t;
    return SIRENRT_FINISHED;
  }
  double z = sirenrt_sample_gaussian(ctx, 0.0, 1.0, 0);
  drawn2[f->t][slot] = z;
  *log_weight += -0.5 * z * z;
  f->t++;
  f->pc = 0;
  return SIRENRT_AT_RESAMPLE;
}

static int64_t wait_span(const sirenrt_span *s, int64_t lo, int64_t hi) {
  return span_of(s, lo, hi, wait_resume, sizeof(draw_frame));
}

static void test_waiting_keeps_its_stream(void) {
  const uint64_t seed = 31;
  for (int with_span = 0; with_span < 2; with_span++)
    for (int32_t threads = 1; threads <= 3; threads += 2) {
      sirenrt_model m = draw_model("wait", wait_resume, wait_span, with_span);
      sirenrt_filter *f = draw_filter(&m, seed, threads);
      if (!f) return;
      int failed = 0;
      for (int t = 0; t < DRAW_T && !failed; t++) {
        double row = (double)t;
        failed = sirenrt_filter_step(f, &row, 1);
      }
      CHECK(!failed, "wait: %s", sirenrt_filter_error(f));
      int bad = 0;
      for (int t = 0; t + 1 < DRAW_T; t++)
        for (int i = 0; i < DRAW_N; i++) {
          rt_rng g;
          rt_rng_init(&g, seed, (uint64_t)i, (uint32_t)t, RT_DOMAIN_PARTICLE);
          double z1 = rt_normal(&g), z2 = rt_normal(&g);
          bad += memcmp(&z1, &drawn[t][i], sizeof z1) != 0;
          bad += memcmp(&z2, &drawn2[t][i], sizeof z2) != 0;
        }
      CHECK(bad == 0, "%s span, %d threads: %d draws not where their slot's stream was", with_span ? "with" : "without",
            (int)threads, bad);
      sirenrt_filter_free(f);
    }
}

/* rw_model (models.h) with its conses and its final List.rev told their element type, as generated code
 * calls them, and a span: its particles run on lanes, whose cells the population's heap makes at
 * once (the reversal's too, of a list of floats; of a list of lists the young arena makes it).  Every
 * answer is rw_model's, bit for bit, on 1 and 2 threads. */
static int32_t rw_typed_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  return rw_resume_as(ctx, frame, 1);
}

static int64_t rw_typed_span(const sirenrt_span *s, int64_t lo, int64_t hi) {
  return span_of(s, lo, hi, rw_typed_resume, sizeof(rw_frame));
}

static void test_typed_reversal(void) {
  sirenrt_model typed = rw_model;
  typed.resume = rw_typed_resume;
  typed.resume_span = rw_typed_span;
  for (int32_t threads = 1; threads <= 2; threads++) {
    sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, threads, 0};
    sirenrt_filter *a = sirenrt_filter_new(&rw_model, 500, 8, &o), *b = sirenrt_filter_new(&typed, 500, 8, &o);
    CHECK(a && b, "typed filter: %s", sirenrt_last_error());
    double ea[T + 2], eb[T + 2];
    int64_t na = 0, nb = 0;
    CHECK(!sirenrt_filter_run(a, ys, T, 1) && !sirenrt_filter_estimate(a, ea, T + 2, &na) &&
              !sirenrt_filter_run(b, ys, T, 1) && !sirenrt_filter_estimate(b, eb, T + 2, &nb), "typed runs: %s",
          sirenrt_filter_error(b));
    CHECK(na == T + 2 && na == nb && !memcmp(ea, eb, (size_t)na * sizeof(double)),
          "typed conses and reversal: the same estimate (%d threads)", threads);
    static double va[500 * (T + 2)], vb[500 * (T + 2)];
    int64_t oa[501], ob[501], nva = 0, nvb = 0;
    double wa[500], wb[500];
    CHECK(sirenrt_filter_particles(a, va, 500 * (T + 2), &nva, oa, wa) == 0 &&
              sirenrt_filter_particles(b, vb, 500 * (T + 2), &nvb, ob, wb) == 0, "particles");
    CHECK(nva == nvb && !memcmp(va, vb, (size_t)nva * sizeof(double)) && !memcmp(wa, wb, sizeof wa),
          "typed conses and reversal: the same particles (%d threads)", threads);
    sirenrt_filter_free(a);
    sirenrt_filter_free(b);
  }
}

int main(void) {
  walk_data(ys, T, 7, 1.0, 0.5);
  test_span_changes_no_answer();
  test_draws_from_slot_streams();
  test_waiting_keeps_its_stream();
  test_typed_reversal();
  CHECK(span_promised > 0 && span_promise_broken == 0, "%lld of %lld slots promised to resume could not",
        (long long)span_promise_broken, (long long)span_promised);
  return check_report("test_span");
}
