/* harness.h — what the hand-written walk filters share besides the filter itself: the command line
 * (DATA.csv [PARTICLES=10000] [SEED=0]), the data (read with the runtime's CSV reader), the clock,
 * the weights' normalisation and the one report line benchmarks/run.py parses.  Each filter's
 * propagation and resampling stay its own: they are what is being compared. */
#ifndef HARNESS_H
#define HARNESS_H

#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "population/population.h"

typedef struct bench {
  const char *path;
  int64_t n, steps;
  uint64_t seed;
  rt_table data;
  double t0;
} bench;

static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Reads the command line and the data: 0, or the exit status after a message. */
static inline int bench_open(bench *b, int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DATA.csv [PARTICLES=10000] [SEED=0]\n", argv[0]);
    return 2;
  }
  *b = (bench){.path = argv[1], .n = argc > 2 ? atoll(argv[2]) : 10000,
               .seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 0};
  if (b->n < 1 || b->n > SIRENRT_MAX_PARTICLES) {
    fprintf(stderr, "need 1 to 2^31 - 1 particles\n");
    return 2;
  }
  char *err = NULL;
  if (rt_table_read_csv(&b->data, b->path, &err)) {
    fprintf(stderr, "%s\n", err ? err : "cannot read data");
    return 1;
  }
  b->steps = b->data.n_rows;
  return 0;
}

/* Step t's observation: 0 with *y set, or 1 after a message (an empty row). */
static inline int bench_y(const bench *b, int64_t t, double *y) {
  if (rt_row_len(&b->data, t) < 1) {
    fprintf(stderr, "%s: row %lld is empty\n", b->path, (long long)t + 2);
    return 1;
  }
  *y = b->data.vals[b->data.row_start[t]];
  return 0;
}

/* w[i] = exp(logw[i] - mx), mx the largest; adds the step's log mean weight to *log_evidence and
 * returns the sum of w.  The exponentials and their sum are the runtime's vector kernel
 * (weights_exp.c), as the compiled filters weigh; a filter that defines BENCH_LIBM_EXP calls the C
 * library's exp in a loop the compiler may vectorise (with -ffast-math, GCC calls glibc's libmvec). */
static inline double bench_weigh(const double *logw, double *w, int64_t n, double mx, double *log_evidence) {
  double sum = 0.0;
#ifdef BENCH_LIBM_EXP
  for (int64_t i = 0; i < n; i++) sum += (w[i] = exp(logw[i] - mx));
#else
  double sum_sq;
  rt_weigh_sums(logw, n, mx, w, 0, &sum, &sum_sq);
#endif
  *log_evidence += mx + log(sum) - log((double)n);
  return sum;
}

/* The report line (time since b->t0) and the data freed. */
static inline void bench_report(bench *b, double mean, double log_evidence) {
  double elapsed = bench_now_ns() - b->t0;
  double per = b->steps > 0 ? elapsed / ((double)b->n * (double)b->steps) : 0.0;
  printf("ns_per_particle_step=%.3f mean=%.17g log_evidence=%.17g particles=%lld steps=%lld\n", per, mean,
         log_evidence, (long long)b->n, (long long)b->steps);
  rt_table_free(&b->data);
}

#endif
