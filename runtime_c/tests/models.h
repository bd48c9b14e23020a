/* models.h — hand-written models in the shape sirenc generates: a resumable
 * `resume(ctx, frame, log_weight, rows)` with the program counter in frame bytes 0..3, live values in
 * the frame, runtime calls for everything random, and returns at resample() / end / missing stream
 * row; and the random walk's data.  Used by the runtime's C tests. */
#ifndef SIRENRT_TEST_MODELS_H
#define SIRENRT_TEST_MODELS_H

#include <stddef.h>

#include "check.h" /* bits_to_double, double_to_bits */
#include "population/population.h"
#include "sirenrt.h"

/* Observations of the random walk x_t = x_{t-1} + sqrt(q) z_t (x_0 = 0), y_t = x_t + sqrt(r) z'_t, drawn
 * from the user stream of `seed`: ys[0..n). */
static inline void walk_data(double *ys, int n, uint64_t seed, double q, double r) {
  rt_rng g;
  rt_rng_init(&g, seed, 0, 0, RT_DOMAIN_USER);
  double x = 0.0;
  for (int t = 0; t < n; t++) {
    x += sqrt(q) * rt_normal(&g);
    ys[t] = x + sqrt(r) * rt_normal(&g);
  }
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

/* The walk's resume; with `typed`, its conses and its List.rev are told their element type, as generated
 * code calls them (sirenrt_list_cons_word, sirenrt_list_rev_typed), and the trajectory is reversed
 * through a list of lists first, whose reversal the heap declines (the young arena makes it). */
static inline int32_t rw_resume_as(sirenrt_ctx *ctx, uint8_t *frame, int typed) {
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
  double y = bits_to_double(sirenrt_list_get(ctx, row, 0, 2));
  f->x = sirenrt_sample_gaussian(ctx, f->x, 1.0, 0);
  sirenrt_observe_gaussian(ctx, f->x, 0.5, y, 1);
  if (typed) {
    f->xs = sirenrt_list_cons_word(ctx, f->xs, (int64_t)double_to_bits(f->x), "f", 3);
  } else {
    int64_t cell = sirenrt_list_cons(ctx, f->xs, 1);
    sirenrt_list_set(ctx, cell, 0, double_to_bits(f->x));
    f->xs = cell;
  }
  f->t++;
  f->pc = 2;
  return SIRENRT_AT_RESAMPLE;
}
after_resample:
  goto next_row;
done:
  f->result_x = f->x;
  if (typed) {
    int64_t lists = sirenrt_list_rev_typed(ctx, sirenrt_list_cons_word(ctx, SIRENRT_NIL, f->xs, "Lf", 4), 1, "Lf", 4);
    f->result_xs = sirenrt_list_rev_typed(ctx, sirenrt_list_get(ctx, lists, 0, 4), 1, "f", 4);
  } else {
    f->result_xs = sirenrt_list_rev(ctx, f->xs, 1);
  }
  return SIRENRT_FINISHED;
}

static int32_t rw_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  return rw_resume_as(ctx, frame, 0);
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

static int32_t dead_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
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

static int32_t bad_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
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

static int32_t ragged_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  ragged_frame *f = (ragged_frame *)frame;
  f->b = sirenrt_sample_bernoulli(ctx, 0.3, -1) != 0.0;
  int64_t l = SIRENRT_NIL;
  double vals[2] = {2.0, 5.0};
  int n = f->b ? 1 : 2;
  if (f->b) vals[0] = 1.0;
  for (int i = n - 1; i >= 0; i--) {
    int64_t cell = sirenrt_list_cons(ctx, l, 1);
    sirenrt_list_set(ctx, cell, 0, double_to_bits(vals[i]));
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

__attribute__((unused)) static int32_t file_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  int64_t *result = (int64_t *)(frame + 8);
  *result = sirenrt_file(ctx, 0, 0);
  return SIRENRT_FINISHED;
}

/* ---- symbolic values (-m ssi): the Gaussian random walk kept symbolic ----
 * ssi.si:
 *   1  let data = File.read("data.csv") in
 *   2  fold(fun (x, row) -> let y = List.hd(row) in
 *   3    let x <- gaussian(x, 1.) in
 *   4    observe(gaussian(x, 0.5), y);
 *   5    resample(); x, data, 0.)
 * Every particle is the exact Kalman filter: x stays symbolic, each observation hoists it and scores y
 * under its marginal, so all weights are equal.  Variants: `let sample x <- ...` (a bootstrap filter),
 * `let symbolic x <- ...` forced by a value() (a plan violation), half the particles forcing x_1
 * (a dynamic plan), and one keeping the trajectory x :: xs (a list of symbolic words). */
enum { SSI_PLAIN, SSI_SAMPLE, SSI_FORCED, SSI_DYNAMIC, SSI_TRAJECTORY };
#define SSI_Q 1.0
#define SSI_R 0.5
static const sirenrt_site ssi_sites[] = {
    {"ssi.si", 3, 12, 28, "  let x <- gaussian(x, 1.) in"},
    {"ssi.si", 4, 11, 27, "  observe(gaussian(x, 0.5), y);"},
    {"ssi.si", 2, 32, 44, "fold(fun (x, row) -> let y = List.hd(row) in"},
    {"ssi.si", 3, 3, 28, "  let x <- gaussian(x, 1.) in"},
};
static const char *const ssi_vars[] = {"x"};

/* Frame: pc | x (symbolic word) | t | xs (list of symbolic words) | result words (x, xs reversed). */
typedef struct ssi_frame {
  int32_t pc, pad;
  int64_t x;
  int64_t t;
  int64_t xs;
  int64_t result_x;
  int64_t result_xs;
} ssi_frame;

static inline int32_t ssi_resume_variant(sirenrt_ctx *ctx, uint8_t *frame, int variant) {
  ssi_frame *f = (ssi_frame *)frame;
  switch (f->pc) {
    case 0:
      f->x = double_to_bits(0.0);
      f->t = 0;
      f->xs = SIRENRT_NIL;
      break;
    case 1:
    case 2: break;
    default: return -1;
  }
  int64_t row = sirenrt_stream_row(ctx, f->t, 2);
  if (row == SIRENRT_NEED) {
    f->pc = 1;
    return SIRENRT_NEED_ROW;
  }
  if (row == SIRENRT_END) {
    f->result_x = f->x;
    f->result_xs = variant == SSI_TRAJECTORY ? sirenrt_list_rev(ctx, f->xs, 1) : SIRENRT_NIL;
    return SIRENRT_FINISHED;
  }
  double y = bits_to_double(sirenrt_list_get(ctx, row, 0, 2));
  int32_t ann = variant == SSI_SAMPLE ? SIRENRT_ANN_SAMPLE : variant == SSI_FORCED ? SIRENRT_ANN_SYMBOLIC : SIRENRT_ANN_NONE;
  f->x = sirenrt_sym_assume(ctx, SIRENRT_FAM_GAUSSIAN, f->x, double_to_bits(SSI_Q), 0, 0, ann, 0);
  if (variant == SSI_FORCED && f->t == 3) sirenrt_sym_value(ctx, f->x, 3);
  if (variant == SSI_DYNAMIC && f->t == 0 && sirenrt_sample_bernoulli(ctx, 0.5, -1) != 0.0)
    f->x = double_to_bits(sirenrt_sym_value(ctx, f->x, 3));
  sirenrt_sym_observe(ctx, SIRENRT_FAM_GAUSSIAN, f->x, double_to_bits(SSI_R), 0, y, 1);
  if (variant == SSI_TRAJECTORY) {
    int64_t cell = sirenrt_list_cons(ctx, f->xs, 1);
    sirenrt_list_set(ctx, cell, 0, f->x);
    f->xs = cell;
  }
  f->t++;
  f->pc = 2;
  return SIRENRT_AT_RESAMPLE;
}

#define SSI_RESUME(name, variant)                                                     \
  static int32_t name(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {          \
    (void)log_weight, (void)rows;                                                                  \
    return ssi_resume_variant(ctx, frame, variant);                                    \
  }
SSI_RESUME(ssi_plain_resume, SSI_PLAIN)
SSI_RESUME(ssi_sample_resume, SSI_SAMPLE)
SSI_RESUME(ssi_forced_resume, SSI_FORCED)
SSI_RESUME(ssi_dynamic_resume, SSI_DYNAMIC)
SSI_RESUME(ssi_trajectory_resume, SSI_TRAJECTORY)
#undef SSI_RESUME

/* x is a symbolic word while waiting for a row (pc 1) and at resample() (pc 2); so is every element
 * of xs (the trajectory variant's list root). */
static const sirenrt_root ssi_sym_roots[] = {{1, offsetof(ssi_frame, x), "S"}, {2, offsetof(ssi_frame, x), "S"}};
static const sirenrt_root ssi_list_roots[] = {{1, offsetof(ssi_frame, xs), "LS"}, {2, offsetof(ssi_frame, xs), "LS"}};

#define SSI_MODEL(name_, resume_, result_type_, n_roots_, roots_)                                  \
  {                                                                                                 \
    .abi_version = SIRENRT_ABI_VERSION, .name = name_, .method = "ssi", .plan = "x: symbolic",       \
    .result_type = result_type_, .frame_size = sizeof(ssi_frame),                                   \
    .result_offset = offsetof(ssi_frame, result_x), .resume = resume_, .streamable = 1,             \
    .not_streamable_reason = "", .n_files = 1, .files = rw_files, .n_sites = 4, .sites = ssi_sites, \
    .n_roots = n_roots_, .roots = roots_, .n_vars = 1, .vars = ssi_vars, .n_sym_roots = 2,          \
    .sym_roots = ssi_sym_roots,                                                                     \
  }
static const sirenrt_model ssi_model = SSI_MODEL("ssi", ssi_plain_resume, "S", 0, NULL);
static const sirenrt_model ssi_sample_model = SSI_MODEL("ssi_sample", ssi_sample_resume, "S", 0, NULL);
static const sirenrt_model ssi_forced_model = SSI_MODEL("ssi_forced", ssi_forced_resume, "S", 0, NULL);
static const sirenrt_model ssi_dynamic_model = SSI_MODEL("ssi_dynamic", ssi_dynamic_resume, "S", 0, NULL);
static const sirenrt_model ssi_trajectory_model =
    SSI_MODEL("ssi_trajectory", ssi_trajectory_resume, "PSLS", 2, ssi_list_roots);
#undef SSI_MODEL

#endif
