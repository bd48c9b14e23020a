/* Embedding a compiled model in a C program: dlopen model.so, run a filter, print the results.
 *
 *   embed_main MODEL_SO N_PARTICLES SEED [y_1 ... y_n]
 *
 * Runs the filter twice: on the rows y_1..y_n (one column) given as an array, and on the model's
 * own data file (rows == NULL).  Then provokes two errors through the ABI.  Prints "key value" lines.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "sirenrt.h"

typedef const sirenrt_model *(*info_fn)(void);
typedef sirenrt_filter *(*new_fn)(int64_t, uint64_t, const sirenrt_options *);
typedef void (*free_fn)(sirenrt_filter *);
typedef int32_t (*run_fn)(sirenrt_filter *, const double *, int64_t, int64_t);
typedef int32_t (*step_fn)(sirenrt_filter *, const double *, int64_t);
typedef int32_t (*estimate_fn)(sirenrt_filter *, double *, int64_t, int64_t *);
typedef double (*scalar_fn)(const sirenrt_filter *);
typedef const char *(*error_fn)(const sirenrt_filter *);

static void *need(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "missing symbol %s: %s\n", name, dlerror());
    exit(3);
  }
  return p;
}

static void print_estimate(const char *key, estimate_fn estimate, sirenrt_filter *f) {
  double out[64];
  int64_t n = 0;
  if (estimate(f, out, 64, &n) != 0) {
    printf("%s_status error\n", key);
    return;
  }
  printf("%s", key);
  for (int64_t i = 0; i < n; i++) printf(" %.17g", out[i]);
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL_SO N_PARTICLES SEED [y...]\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  info_fn info = (info_fn)need(lib, "sirenc_info");
  new_fn new_filter = (new_fn)need(lib, "sirenc_new");
  free_fn free_filter = (free_fn)need(lib, "sirenc_free");
  run_fn run = (run_fn)need(lib, "sirenc_run");
  step_fn step = (step_fn)need(lib, "sirenc_step");
  estimate_fn estimate = (estimate_fn)need(lib, "sirenc_estimate");
  scalar_fn log_evidence = (scalar_fn)need(lib, "sirenc_log_evidence");
  scalar_fn ess = (scalar_fn)need(lib, "sirenc_ess");
  error_fn error = (error_fn)need(lib, "sirenc_error");

  const sirenrt_model *m = info();
  printf("abi_version %u\nname %s\nmethod %s\nresult_type %s\nstreamable %d\nn_files %d\n",
         m->abi_version, m->name, m->method, m->result_type, m->streamable, m->n_files);

  int64_t n = atoll(argv[2]);
  uint64_t seed = strtoull(argv[3], NULL, 10);
  int64_t n_rows = argc - 4;
  double *rows = malloc(sizeof(double) * (size_t)(n_rows > 0 ? n_rows : 1));
  for (int64_t i = 0; i < n_rows; i++) rows[i] = atof(argv[4 + i]);

  sirenrt_options opts = {SIRENRT_SYSTEMATIC, 0.0, 1, 0};
  sirenrt_filter *f = new_filter(n, seed, &opts);
  if (!f) {
    printf("new_error %s\n", error(NULL));
    return 1;
  }
  if (run(f, rows, n_rows, 1) != 0) {
    printf("run_error %s\n", error(f));
    return 1;
  }
  print_estimate("estimate", estimate, f);
  printf("log_evidence %.17g\ness %.17g\n", log_evidence(f), ess(f));

  double tiny[1];
  int64_t needed = -1;
  int32_t small = estimate(f, tiny, 0, &needed);
  printf("small_cap_status %d %lld\n", small, (long long)needed);

  if (m->n_files > 0) {
    if (run(f, NULL, 0, 0) != 0) {
      printf("file_run_error %s\n", error(f));
    } else {
      print_estimate("file_estimate", estimate, f);
    }
  }
  free_filter(f);

  /* errors come back as statuses and text, never as a crash */
  sirenrt_filter *bad = new_filter(0, seed, &opts);
  printf("zero_particles %s\n", bad ? "accepted" : "rejected");
  if (!bad) printf("zero_particles_error %s\n", error(NULL));

  sirenrt_filter *g = new_filter(n, seed, &opts);
  int32_t status = step(g, NULL, -1);
  printf("bad_step_status %d\n", status);
  if (status != 0) printf("bad_step_error %s\n", error(g));
  free_filter(g);

  free(rows);
  dlclose(lib);
  return 0;
}
