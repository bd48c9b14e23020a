/* test_progress.c — the population loop's progress hook (sirenrt_filter_set_progress): every
 * barrier counted, reports rate-limited, a last report at the end of run(), a nonzero answer stops
 * the run, the answers unchanged by a hook, and estimate()'s clone never reports. */
#include "check.h"
#include "population/population.h"
#pragma GCC diagnostic ignored "-Wunused-function" /* models.h defines more models than this uses */
#include "models.h"

enum { T = 25 };
static double ys[T];

typedef struct {
  int calls, stop_at;
  sirenrt_progress last, first;
} log_t;

static int32_t record(void *user, const sirenrt_progress *p) {
  log_t *log = user;
  if (log->calls++ == 0) log->first = *p;
  log->last = *p;
  return log->stop_at > 0 && p->steps >= log->stop_at;
}

static sirenrt_filter *walk(void) { return sirenrt_filter_new(&rw_model, 200, 11, NULL); }

static void test_every_barrier_and_the_end(void) {
  sirenrt_filter *f = walk(), *plain = walk();
  log_t log = {0};
  sirenrt_filter_set_progress(f, record, &log, 0.0);
  CHECK(sirenrt_filter_run(f, ys, T, 1) == 0, "run: %s", sirenrt_filter_error(f));
  CHECK(log.calls == T + 1, "one report per barrier and one at the end: %d", log.calls);
  CHECK(log.first.steps == 1 && log.first.rows == T && log.first.particles == 200 && !log.first.done,
        "first report: steps %lld rows %lld", (long long)log.first.steps, (long long)log.first.rows);
  CHECK(log.last.steps == T && log.last.done == 1, "last report: steps %lld done %d",
        (long long)log.last.steps, (int)log.last.done);
  /* Reported before the barrier resamples: the weights of the first observation, not N equal ones. */
  CHECK(log.first.ess > 1.0 && log.first.ess < 200.0, "ESS before resampling: %g", log.first.ess);
  CHECK(log.last.log_evidence == sirenrt_filter_log_evidence(f), "the last report's log evidence");
  CHECK(log.first.log_evidence < 0.0 && isfinite(log.first.log_evidence), "first log evidence %g",
        log.first.log_evidence);
  CHECK(sirenrt_filter_run(plain, ys, T, 1) == 0, "plain run");
  CHECK(sirenrt_filter_log_evidence(f) == sirenrt_filter_log_evidence(plain), "a hook changes no answer");
  /* A second run counts from zero again; the clone estimate() runs while streaming reports nothing. */
  log = (log_t){0};
  CHECK(sirenrt_filter_run(f, ys, T, 1) == 0 && log.first.steps == 1, "second run from step 1");
  log = (log_t){0};
  for (int t = 0; t < 5; t++) CHECK(sirenrt_filter_step(f, &ys[t], 1) == 0, "step %d", t);
  int calls = log.calls;
  double est[T + 2];
  int64_t n = 0;
  CHECK(sirenrt_filter_estimate(f, est, T + 2, &n) == 0, "estimate");
  CHECK(log.calls == calls && calls >= 4, "estimate's clone reports nothing (%d, %d calls)", calls, log.calls);
  /* Removing the hook. */
  sirenrt_filter_set_progress(f, NULL, NULL, 0.0);
  log = (log_t){0};
  CHECK(sirenrt_filter_run(f, ys, T, 1) == 0 && log.calls == 0, "no hook, no report");
  sirenrt_filter_free(f);
  sirenrt_filter_free(plain);
}

static void test_rate_limited(void) {
  sirenrt_filter *f = walk();
  log_t log = {0};
  sirenrt_filter_set_progress(f, record, &log, 3600.0);
  CHECK(sirenrt_filter_run(f, ys, T, 1) == 0, "run");
  CHECK(log.calls == 2 && log.first.steps == 1 && log.last.done, "first barrier and the end only: %d", log.calls);
  log = (log_t){0};
  CHECK(sirenrt_filter_run(f, ys, T, 1) == 0 && log.calls == 2 && log.first.steps == 1,
        "a new run reports its first barrier again: %d calls", log.calls);
  sirenrt_filter_free(f);
}

static void test_stop(void) {
  sirenrt_filter *f = walk();
  log_t log = {.stop_at = 7};
  sirenrt_filter_set_progress(f, record, &log, 0.0);
  CHECK(sirenrt_filter_run(f, ys, T, 1) != 0, "a nonzero answer stops the run");
  CHECK(log.calls == 7, "stopped at once: %d calls", log.calls);
  CHECK(strstr(sirenrt_filter_error(f), "stopped by its progress callback") != NULL, "error: %s",
        sirenrt_filter_error(f));
  log.stop_at = 0;
  CHECK(sirenrt_filter_run(f, ys, T, 1) == 0, "runs again: %s", sirenrt_filter_error(f));
  sirenrt_filter_set_progress(NULL, record, &log, 0.0); /* no filter: ignored */
  sirenrt_filter_free(f);
}

int main(void) {
  for (int t = 0; t < T; t++) ys[t] = 0.1 * t;
  test_every_barrier_and_the_end();
  test_rate_limited();
  test_stop();
  return check_report("test_progress");
}
