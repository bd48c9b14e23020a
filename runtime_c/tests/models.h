/* models.h — hand-written models in the shape sirenc generates: a resumable `resume(ctx, frame, log_weight)` with
 * the program counter in frame bytes 0..3, live values in the frame, runtime calls for everything
 * random, and returns at resample() / end / missing stream row.  Used by test_filter.c. */
#ifndef SIRENRT_TEST_MODELS_H
#define SIRENRT_TEST_MODELS_H

#include <stddef.h>
#include <string.h>

#include "sirenrt.h"

static inline double w2d(int64_t w) {
  double d;
  memcpy(&d, &w, sizeof d);
  return d;
}
static inline int64_t d2w(double d) {
  int64_t w;
  memcpy(&w, &d, sizeof w);
  return w;
}

/* model.si (the random walk, observed through a noisy sensor):
 *   1  let data = File.read("data.csv") in
 *   2  fold(fun (prev, row) -> let y = List.hd(row) in
 *   3    let x <- gaussian(prev, 1.) in
 *   4    observe(gaussian(x, 0.5), y);
 *   5    resample(); x, data, 0.)                                                          */
static const sirenrt_site rw_sites[] = {
    {"model.si", 3, 12, 28, "  let x <- gaussian(prev, 1.) in"},
    {"model.si", 4, 11, 27, "  observe(gaussian(x, 0.5), y);"},
    {"model.si", 2, 35, 47, "fold(fun (prev, row) -> let y = List.hd(row) in"},
    {"model.si", 5, 3, 13, "  resample(); x, data, 0.)"},
    {"model.si", 1, 12, 32, "let data = File.read(\"data.csv\") in"},
};
static const char *const rw_files[] = {"/nonexistent/data.csv"};

/* Frame: pc | x | t | xs (list of past states) | result words (x, xs reversed). */
typedef struct rw_frame {
  int32_t pc, pad;
  double x;
  int64_t t;
  int64_t xs;
  double result_x;
  int64_t result_xs;
} rw_frame;

static int32_t rw_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight) {
  (void)log_weight;
  rw_frame *f = (rw_frame *)frame;
  switch (f->pc) {
    case 0: goto start;
    case 1: goto next_row;
    case 2: goto after_resample;
    default: return -1;
  }
start:
  f->x = 0.0;
  f->t = 0;
  f->xs = SIRENRT_NIL;
next_row : {
  int64_t row = sirenrt_stream_row(ctx, f->t, 4);
  if (row == SIRENRT_NEED) {
    f->pc = 1;
    return SIRENRT_NEED_ROW;
  }
  if (row == SIRENRT_END) goto done;
  double y = w2d(sirenrt_list_get(ctx, row, 0, 2));
  f->x = sirenrt_sample_gaussian(ctx, f->x, 1.0, 0);
  sirenrt_observe_gaussian(ctx, f->x, 0.5, y, 1);
  int64_t cell = sirenrt_list_cons(ctx, f->xs, 1);
  sirenrt_list_set(ctx, cell, 0, d2w(f->x));
  f->xs = cell;
  f->t++;
  f->pc = 2;
  return SIRENRT_AT_RESAMPLE;
}
after_resample:
  goto next_row;
done:
  f->result_x = f->x;
  f->result_xs = sirenrt_list_rev(ctx, f->xs, 1);
  return SIRENRT_FINISHED;
}

/* The frame slot that holds a list at each resume point: xs, while waiting for a row and at resample. */
static const sirenrt_root rw_roots[] = {{1, offsetof(rw_frame, xs), "Lf"}, {2, offsetof(rw_frame, xs), "Lf"}};

static const sirenrt_model rw_model = {
    .abi_version = SIRENRT_ABI_VERSION,
    .name = "rw",
    .method = "smc",
    .plan = "x: sample",
    .result_type = "PfLf",
    .frame_size = sizeof(rw_frame),
    .result_offset = offsetof(rw_frame, result_x),
    .resume = rw_resume,
    .streamable = 1,
    .not_streamable_reason = "",
    .n_files = 1,
    .files = rw_files,
    .n_sites = 5,
    .sites = rw_sites,
    .n_roots = 2,
    .roots = rw_roots,
};

/* ---- a model whose every particle dies: observe(uniform_int(0, 1), 5) ---- */
static const sirenrt_site dead_sites[] = {{"dead.si", 5, 3, 30, "  observe(uniform_int(0, 1), 5.);"}};

static int32_t dead_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight) {
  (void)log_weight;
  int32_t *pc = (int32_t *)frame;
  if (*pc == 1) return SIRENRT_FINISHED;
  sirenrt_observe_uniform_int(ctx, 0, 1, 5.0, 0);
  *pc = 1;
  return SIRENRT_AT_RESAMPLE;
}

static const sirenrt_model dead_model = {
    .abi_version = SIRENRT_ABI_VERSION, .name = "dead", .method = "smc", .plan = "", .result_type = "u",
    .frame_size = 8, .result_offset = 8, .resume = dead_resume, .streamable = 0,
    .not_streamable_reason = "the program reads no data", .n_sites = 1, .sites = dead_sites,
};

/* ---- a model with an invalid parameter: gaussian(0, -1) ---- */
static const sirenrt_site bad_sites[] = {{"bad.si", 3, 12, 28, "  let x <- gaussian(0., -1.) in"}};

static int32_t bad_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight) {
  (void)log_weight;
  double *result = (double *)(frame + 8);
  *result = sirenrt_sample_gaussian(ctx, 0.0, -1.0, 0);
  return SIRENRT_FINISHED;
}

static const sirenrt_model bad_model = {
    .abi_version = SIRENRT_ABI_VERSION, .name = "bad", .method = "smc", .plan = "x: sample",
    .result_type = "f", .frame_size = 16, .result_offset = 8, .resume = bad_resume,
    .not_streamable_reason = "the program reads no data", .n_sites = 1, .sites = bad_sites,
};

/* ---- ragged lists and scalar kinds: result (b, (unit, (list, float))) ----
 *   let b <- bernoulli(0.3) in (b, ((), (if b then [1.] else [2., 5.], 4.)))            */
typedef struct ragged_frame {
  int32_t pc, pad;
  int64_t b;      /* result word 0: bool */
  int64_t list;   /* result word 1: list of float (the unit has no words) */
  double four;    /* result word 2 */
} ragged_frame;

static int32_t ragged_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight) {
  (void)log_weight;
  ragged_frame *f = (ragged_frame *)frame;
  f->b = sirenrt_sample_bernoulli(ctx, 0.3, -1) != 0.0;
  int64_t l = SIRENRT_NIL;
  double vals[2] = {2.0, 5.0};
  int n = f->b ? 1 : 2;
  if (f->b) vals[0] = 1.0;
  for (int i = n - 1; i >= 0; i--) {
    int64_t cell = sirenrt_list_cons(ctx, l, 1);
    sirenrt_list_set(ctx, cell, 0, d2w(vals[i]));
    l = cell;
  }
  f->list = l;
  f->four = 4.0;
  return SIRENRT_FINISHED;
}

static const sirenrt_model ragged_model = {
    .abi_version = SIRENRT_ABI_VERSION, .name = "ragged", .method = "smc", .plan = "b: sample",
    .result_type = "PbPuPLff", .frame_size = sizeof(ragged_frame), .result_offset = 8,
    .resume = ragged_resume, .not_streamable_reason = "no fold over File.read",
};

/* ---- File.read: returns file 0 itself (list of rows) ---- */
static const sirenrt_site file_sites[] = {{"file.si", 1, 1, 20, "File.read(\"d.csv\")"}};

static int32_t file_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight) {
  (void)log_weight;
  int64_t *result = (int64_t *)(frame + 8);
  *result = sirenrt_file(ctx, 0, 0);
  return SIRENRT_FINISHED;
}

#endif
