/* queries.c — what a host asks of a filter between runs (sirenrt.h): its log evidence and ESS, its
 * size, the history of its barriers, its error and the words its lists and symbolic states hold; and
 * sirenrt_filter_set_file, which points a data file elsewhere before the next run.  An MH chain
 * answers from its samples (mh.c). */
#include "population.h"

#include <stdlib.h>

double sirenrt_filter_log_evidence(const sirenrt_filter *f) {
  if (!f || f->mh) return NAN; /* MH estimates no evidence */
  double mx = -INFINITY, sum = 0.0;
  for (int64_t i = 0; i < f->n; i++)
    if (f->logw[i] > mx) mx = f->logw[i];
  if (mx == -INFINITY || mx == INFINITY) return f->log_evidence_done + mx;
  for (int64_t i = 0; i < f->n; i++) sum += exp(f->logw[i] - mx);
  return f->log_evidence_done + mx + log(sum) - log((double)f->n);
}

double sirenrt_filter_ess(const sirenrt_filter *f) {
  if (!f) return NAN;
  if (f->mh) return (double)rt_mh_size(f); /* equal weights */
  double mx = -INFINITY, s1 = 0.0, s2 = 0.0;
  for (int64_t i = 0; i < f->n; i++)
    if (f->logw[i] > mx) mx = f->logw[i];
  if (mx == -INFINITY) return 0.0;
  for (int64_t i = 0; i < f->n; i++) {
    double w = mx == INFINITY ? (f->logw[i] == INFINITY) : exp(f->logw[i] - mx);
    s1 += w;
    s2 += w * w;
  }
  return s1 * s1 / s2;
}

int64_t sirenrt_filter_size(const sirenrt_filter *f) { return f ? (f->mh ? rt_mh_size(f) : f->n) : -1; }

int32_t sirenrt_filter_set_file(sirenrt_filter *f, int32_t file_id, const char *path) {
  if (!f) return rt_set_last_error("sirenrt_filter_set_file: no filter"), 1;
  if (file_id < 0 || file_id >= f->model->n_files)
    return rt_filter_refuse(f, rt_strdup_printf("error: set_file: the program reads %d data file%s, there is no file %d",
                                                (int)f->model->n_files, f->model->n_files == 1 ? "" : "s", (int)file_id));
  if (!path || !*path) return rt_filter_refuse(f, rt_strdup_printf("error: set_file: no path"));
  if (!f->paths && !(f->paths = calloc((size_t)f->model->n_files, sizeof(char *))))
    return rt_filter_refuse(f, NULL);
  char *copy = rt_strdup_printf("%s", path);
  if (!copy) return rt_filter_refuse(f, NULL);
  free(f->paths[file_id]);
  f->paths[file_id] = copy;
  return 0;
}

int32_t sirenrt_filter_history(const sirenrt_filter *f, double *ess, double *log_evidence, int32_t *resampled,
                               int64_t *rows, int64_t cap, int64_t *n) {
  if (!f) return rt_set_last_error("sirenrt_filter_history: no filter"), 1;
  /* an MH chain has no resampling barriers */
  int64_t rows_n = f->mh ? 0 : f->n_history < SIRENRT_HISTORY_ROWS ? f->n_history : SIRENRT_HISTORY_ROWS;
  if (n) *n = rows_n;
  if (cap < rows_n) return 2;
  int64_t first = f->mh ? 0 : f->n_history - rows_n;
  for (int64_t k = 0; k < rows_n; k++) {
    const rt_history_row *h = &f->history[(first + k) % SIRENRT_HISTORY_ROWS];
    if (ess) ess[k] = h->ess;
    if (log_evidence) log_evidence[k] = h->log_evidence;
    if (resampled) resampled[k] = h->resampled;
    if (rows) rows[k] = h->rows;
  }
  return 0;
}

int64_t sirenrt_filter_history_dropped(const sirenrt_filter *f, double *log_evidence, int64_t *resampled) {
  if (!f) return rt_set_last_error("sirenrt_filter_history_dropped: no filter"), -1;
  int64_t dropped = f->mh || f->n_history <= SIRENRT_HISTORY_ROWS ? 0 : f->n_history - SIRENRT_HISTORY_ROWS;
  if (log_evidence) *log_evidence = dropped ? f->history_dropped_log_evidence : 0.0;
  if (resampled) *resampled = dropped ? f->history_dropped_resampled : 0;
  return dropped;
}

const char *sirenrt_filter_error(const sirenrt_filter *f) {
  if (!f) return sirenrt_last_error();
  return f->error ? f->error : "";
}

int64_t sirenrt_filter_memory_words(const sirenrt_filter *f) {
  if (!f) return -1;
  int64_t total = rt_heap_live_words(f->heap);
  for (int64_t i = 0; i < f->n; i++) total += f->ctx[i].arena_used;
  return total + rt_sym_population_nodes(f);
}
