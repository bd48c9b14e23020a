/* check.h — a minimal assertion harness for the runtime's C tests: checks count failures and keep
 * going, so one run reports every broken property; main() returns check_report(). */
#ifndef SIRENRT_CHECK_H
#define SIRENRT_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    check_count++;                                                                \
    if (!(cond)) {                                                                \
      check_failures++;                                                           \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);    \
      fprintf(stderr, __VA_ARGS__);                                               \
      fputc('\n', stderr);                                                        \
    }                                                                             \
  } while (0)

/* |a - b| <= tol, with NaN never close. */
#define CHECK_NEAR(a, b, tol, what)                                                              \
  do {                                                                                           \
    double a_ = (a), b_ = (b);                                                                   \
    CHECK(fabs(a_ - b_) <= (tol), "%s: %.17g vs %.17g (tol %g)", (what), a_, b_, (double)(tol)); \
  } while (0)

#define CHECK_CONTAINS(text, needle) \
  CHECK(strstr((text), (needle)) != NULL, "expected \"%s\" in:\n%s", (needle), (text))

static int check_report(const char *name) {
  if (check_failures) {
    fprintf(stderr, "%s: %d of %d checks FAILED\n", name, check_failures, check_count);
    return 1;
  }
  printf("%s: all %d checks passed\n", name, check_count);
  return 0;
}

static inline double bits_to_double(int64_t w) {
  double d;
  memcpy(&d, &w, sizeof d);
  return d;
}

static inline int64_t double_to_bits(double d) {
  int64_t w;
  memcpy(&w, &d, sizeof w);
  return w;
}

#endif
