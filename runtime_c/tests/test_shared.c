/* test_shared.c — libsirenrt.so alone: the public API links and works, the internals are hidden. */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "check.h"
#include "sirenrt.h"

int main(void) {
  double out[1000];
  CHECK(sirenrt_sample_many(SIRENRT_FAM_GAUSSIAN, (double[]){2.0, 1.0}, 1000, 5, out) == 0, "sample_many");
  double s = 0;
  for (int i = 0; i < 1000; i++) s += out[i];
  CHECK_NEAR(s / 1000, 2.0, 0.2, "mean");
  CHECK_NEAR(sirenrt_logpdf_gaussian(0, 1, 0), -0.5 * log(2 * 3.14159265358979323846), 1e-12, "logpdf");
  CHECK(dlsym(RTLD_DEFAULT, "sirenrt_filter_new") != NULL, "API exported");
  CHECK(dlsym(RTLD_DEFAULT, "rt_normal") == NULL, "internals hidden");
  CHECK(dlsym(RTLD_DEFAULT, "sirenc_info") == NULL, "the export wrappers are not in libsirenrt.so");
  return check_report("test_shared");
}
