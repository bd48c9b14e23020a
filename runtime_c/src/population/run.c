/* run.c — a filter's runs (ARCHITECTURE.md, Streaming and the C ABI): sirenrt_filter_run over all the
 * rows at once (or over the data files alone), sirenrt_filter_step one row at a time, which gives
 * what a run over the same rows gives.  An MH chain runs its program again and again (mh.c). */
#include "population.h"

/* All weights zero at the end is an error, as at a resampling. */
static int check_final_weights(sirenrt_filter *f) {
  if (f->mh) return 0; /* a proposal to reject */
  for (int64_t i = 0; i < f->n; i++)
    if (f->logw[i] != -INFINITY) return 0;
  return rt_zero_weight_error(f);
}

int32_t sirenrt_filter_run(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols) {
  if (!f) return rt_set_last_error("sirenrt_filter_run: no filter"), 1;
  if (f->mh) return rt_mh_run(f, rows, n_rows, n_cols);
  return rt_filter_run_rows(f, rows, n_rows, n_cols);
}

int32_t rt_filter_rerun(sirenrt_filter *f) {
  rt_reset_population(f, 1);
  f->mode = RT_MODE_RAN;
  if (rt_advance(f)) return 1;
  return check_final_weights(f);
}

int32_t rt_filter_run_rows(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols) {
  rt_reset_population(f, 0);
  f->mode = RT_MODE_RAN;
  f->stream_open = 0;
  if (rows || n_rows > 0) {
    if (!rows || n_rows < 0 || n_cols < 0)
      return rt_filter_fail(f, rt_strdup_printf("error: run: bad data (%lld rows of %lld columns)",
                                                (long long)n_rows, (long long)n_cols));
    if (f->model->n_files < 1)
      return rt_filter_fail(f, rt_strdup_printf("error: this model reads no data file, so rows cannot be supplied"));
    rt_table *t = &f->tables[0];
    for (int64_t r = 0; r < n_rows; r++) {
      int status = rt_table_append_row(t, rows + r * n_cols, n_cols);
      if (status == -2) return rt_filter_fail(f, rt_budget_rows_message(&f->budget, "run", n_rows, n_cols, NULL));
      if (status) return rt_filter_fail(f, rt_strdup_printf("error: run: out of memory or too much data for file 0"));
    }
    t->loaded = 1;
  }
  if (rt_advance(f)) return 1;
  if (f->progress && rt_progress_done(f)) return 1;
  return check_final_weights(f);
}

int32_t sirenrt_filter_step(sirenrt_filter *f, const double *row, int64_t n_cols) {
  if (!f) return rt_set_last_error("sirenrt_filter_step: no filter"), 1;
  if (f->mh) /* every iteration re-runs the program over all the data */
    return rt_filter_refuse(f, rt_strdup_printf("error: an MH chain cannot be streamed: give run() all the data"));
  if (!f->model->streamable)
    return rt_filter_refuse(f, rt_strdup_printf("error: this program cannot be run as a stream: %s",
                                                f->model->not_streamable_reason ? f->model->not_streamable_reason
                                                                                : "unknown reason"));
  if (f->model->n_files < 1) return rt_filter_fail(f, rt_strdup_printf("error: a streamable model must read a file"));
  if (f->mode == RT_MODE_STREAMING && f->failed) return rt_filter_failed(f); /* the stream is broken until run() */
  if (n_cols < 0 || (n_cols > 0 && !row))
    return rt_filter_refuse(f, rt_strdup_printf("error: step: bad row (%lld columns)", (long long)n_cols));
  if (f->mode != RT_MODE_STREAMING) { /* a fresh stream */
    rt_reset_population(f, 0);
    f->mode = RT_MODE_STREAMING;
    f->stream_open = 1;
    f->tables[0].loaded = 1;
  }
  int appended = rt_table_append_row(&f->tables[0], row, n_cols);
  if (appended == -2)
    return rt_filter_fail(f, rt_budget_rows_message(&f->budget, "step", f->tables[0].n_rows + 1, n_cols,
                                                  "a stream keeps every row it is given"));
  if (appended) return rt_filter_fail(f, rt_strdup_printf("error: step: out of memory or stream too long"));
  if (rt_advance(f)) return 1;
  return check_final_weights(f);
}
