/* progress.c — the population loop's progress hook (sirenrt_filter_set_progress).
 *
 * rt_advance calls rt_progress when the population has reached a resampling barrier, before it
 * resamples (so a report carries the ESS of the weights the barrier is about to resample), and
 * only when a hook is set: a filter without one pays one NULL test per barrier.  With one, a
 * barrier costs at most a monotonic clock read; the hook itself runs at most once per interval
 * (a host's progress bar redraws a few times a second, however fast the barriers come), always
 * on the thread that called run() or step().  A report computes the ESS and the log evidence
 * (two passes over the weights): with interval 0, a report at every barrier, that is the cost. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "population.h"

#include <math.h>
#include <time.h>

void sirenrt_filter_set_progress(sirenrt_filter *f, sirenrt_progress_fn fn, void *user, double interval_s) {
  if (!f) return;
  f->progress = fn;
  f->progress_user = user;
  f->progress_interval = interval_s > 0.0 ? interval_s : 0.0;
  f->progress_last = -INFINITY;
  f->progress_countdown = 0;
}

static double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int report(sirenrt_filter *f, int32_t done) {
  const rt_table *data = f->model->n_files > 0 ? &f->tables[0] : NULL;
  sirenrt_progress p = {
      .steps = f->progress_steps,
      .rows = data && data->loaded ? data->n_rows : 0,
      .particles = f->n,
      .done = done,
      .ess = sirenrt_filter_ess(f),
      .log_evidence = sirenrt_filter_log_evidence(f),
  };
  if (f->progress(f->progress_user, &p) == 0) return 0;
  return rt_filter_fail(f, rt_strdup_printf("error: the run was stopped by its progress callback"));
}

int rt_progress(sirenrt_filter *f) {
  f->progress_steps++;
  /* A clock read costs tens of nanoseconds (more where it is a system call): with few particles,
   * read it only every so many barriers, so that it costs at most one read per 1024 particle-steps. */
  if (f->progress_interval > 0.0 && f->progress_steps > 1) {
    if (--f->progress_countdown > 0) return 0;
    f->progress_countdown = f->n >= 1024 ? 1 : (int32_t)((1024 + f->n - 1) / f->n);
  }
  double now = monotonic_seconds();
  if (f->progress_steps > 1 && now - f->progress_last < f->progress_interval) return 0; /* 1: a new run */
  f->progress_last = now;
  return report(f, 0);
}

int rt_progress_done(sirenrt_filter *f) { return report(f, 1); }
