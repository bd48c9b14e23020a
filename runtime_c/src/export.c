/* export.c — the C ABI of a compiled model.so: thin wrappers binding the population API to
 * the `sirenc_model` global the compiler emits.  Built as its own static library
 * (libsirenrt_export.a) so that libsirenrt.so itself has no undefined symbol. */
#include "population/population.h"
#include "sirenrt.h"

#include <stdlib.h>
#include <string.h>

extern const sirenrt_model sirenc_model;

const sirenrt_model *sirenc_info(void) { return &sirenc_model; }

/* A failed call's last error names the entry the host called, not the runtime's it wraps: a message
 * starting with `from` starts with `to` instead. */
static sirenrt_filter *named(sirenrt_filter *f, const char *from, const char *to) {
  const char *msg = sirenrt_last_error();
  size_t n = strlen(from);
  if (f || strncmp(msg, from, n) != 0) return f;
  char *rest = malloc(strlen(msg + n) + 1);
  if (!rest) return f;
  strcpy(rest, msg + n);
  rt_set_last_error("%s%s", to, rest);
  free(rest);
  return f;
}

sirenrt_filter *sirenc_new(int64_t n_particles, uint64_t seed, const sirenrt_options *opts) {
  return named(sirenrt_filter_new(&sirenc_model, n_particles, seed, opts), "sirenrt_filter_new:", "sirenc_new:");
}

void sirenc_free(sirenrt_filter *f) { sirenrt_filter_free(f); }

int32_t sirenc_run(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols) {
  return sirenrt_filter_run(f, rows, n_rows, n_cols);
}

int32_t sirenc_step(sirenrt_filter *f, const double *row, int64_t n_cols) { return sirenrt_filter_step(f, row, n_cols); }

int32_t sirenc_estimate(sirenrt_filter *f, double *out, int64_t cap, int64_t *n_out) {
  return sirenrt_filter_estimate(f, out, cap, n_out);
}

double sirenc_log_evidence(const sirenrt_filter *f) { return sirenrt_filter_log_evidence(f); }

double sirenc_ess(const sirenrt_filter *f) { return sirenrt_filter_ess(f); }

int32_t sirenc_particles(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                         double *weights) {
  return sirenrt_filter_particles(f, values, cap, n_values, offsets, weights);
}

int32_t sirenc_posterior(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                         double *weights) {
  return sirenrt_filter_posterior(f, values, cap, n_values, offsets, weights);
}

int64_t sirenc_size(const sirenrt_filter *f) { return sirenrt_filter_size(f); }

int32_t sirenc_set_file(sirenrt_filter *f, int32_t file_id, const char *path) {
  return sirenrt_filter_set_file(f, file_id, path);
}

int32_t sirenc_history(const sirenrt_filter *f, double *ess, double *log_evidence, int32_t *resampled, int64_t *rows,
                       int64_t cap, int64_t *n) {
  return sirenrt_filter_history(f, ess, log_evidence, resampled, rows, cap, n);
}

int64_t sirenc_history_dropped(const sirenrt_filter *f, double *log_evidence, int64_t *resampled) {
  return sirenrt_filter_history_dropped(f, log_evidence, resampled);
}

/* The filter's own error, not the thread's: a host reads sirenc_error(f), which would otherwise still
 * hold the message of the filter's previous failed call. */
int32_t sirenc_save(sirenrt_filter *f, uint8_t **buf, int64_t *len) {
  if (f && (!buf || !len)) return rt_filter_refuse(f, rt_strdup_printf("error: sirenc_save: buf and len must not be NULL"));
  return sirenrt_filter_save(f, buf, len);
}

/* The runtime's symbols are hidden in a model.so (backend/link.py): the host frees sirenc_save's
 * buffer with this one. */
void sirenc_buffer_free(uint8_t *buf) { sirenrt_buffer_free(buf); }

sirenrt_filter *sirenc_load(const uint8_t *buf, int64_t len, int32_t threads) {
  return named(sirenrt_filter_load(&sirenc_model, buf, len, threads), "sirenrt_filter_load:", "sirenc_load:");
}

const char *sirenc_error(const sirenrt_filter *f) { return f ? sirenrt_filter_error(f) : sirenrt_last_error(); }

const char *sirenc_runtime_plan(sirenrt_filter *f) { return sirenrt_filter_runtime_plan(f); }

void sirenc_set_progress(sirenrt_filter *f, sirenrt_progress_fn fn, void *user, double interval_s) {
  sirenrt_filter_set_progress(f, fn, user, interval_s);
}

sirenrt_filter *sirenc_new_mh(uint64_t seed, const sirenrt_mh_options *mh, const sirenrt_options *opts) {
  sirenrt_filter *f = sirenrt_filter_new_mh(&sirenc_model, seed, mh, opts);
  return named(named(f, "sirenrt_filter_new_mh:", "sirenc_new_mh:"), "sirenrt_filter_new:", "sirenc_new_mh:");
}

const char *sirenc_mh_runtime_plan(sirenrt_filter *f) { return sirenrt_mh_runtime_plan(f); }

int32_t sirenc_mh_stats(const sirenrt_filter *f, int64_t *iterations, int64_t *accepted) {
  return sirenrt_mh_stats(f, iterations, accepted);
}
