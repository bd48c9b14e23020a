/* test_resample.c — normalisation, ESS, and the four schemes: offspring counts always sum to N and
 * are unbiased (E[count_i] = N w_i); systematic/stratified/residual keep counts near N w_i.  The
 * barrier's blocked passes against a long-double reference, and block by block in any order against
 * a direct merge of the points with the cumulative weights. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "population/population.h"

static const char *scheme_name[] = {"systematic", "multinomial", "stratified", "residual"};

static void test_normalise_and_ess(void) {
  double c[4];
  double w[4];
  double lw[4] = {0, log(3.0), -INFINITY, log(4.0)};
  for (int i = 0; i < 4; i++) c[i] = lw[i] - 1000.0; /* shifting must not underflow */
  double lz = rt_normalise(c, 4, w);
  CHECK_NEAR(lz, log(8.0) - 1000.0, 1e-12, "log sum");
  CHECK_NEAR(w[0], 1.0 / 8, 1e-12, "w0");
  CHECK_NEAR(w[1], 3.0 / 8, 1e-12, "w1");
  CHECK(w[2] == 0.0, "a -inf weight normalises to 0");
  rt_block b;
  rt_weigh_block(c, 0, 4, w, 0, NAN, &b);
  rt_weights s = rt_combine_blocks(&b, 1);
  CHECK_NEAR(s.ess, 1.0 / (1.0 / 64 + 9.0 / 64 + 16.0 / 64), 1e-12, "ESS");
  CHECK_NEAR(s.log_sum, lz, 0.0, "the blocked passes give rt_normalise's log sum");
  for (int i = 0; i < 4; i++) c[i] = -INFINITY;
  CHECK(rt_normalise(c, 4, w) == -INFINITY, "all zero");
  rt_weigh_block(c, 0, 4, w, 0, NAN, &b);
  CHECK(rt_combine_blocks(&b, 1).log_sum == -INFINITY && w[0] == 0.0, "all zero, blocked");
  c[1] = INFINITY;
  c[3] = INFINITY;
  rt_normalise(c, 4, w);
  CHECK(w[1] == 0.5 && w[3] == 0.5 && w[0] == 0.0, "infinite weights share the mass");
  double zeros[5] = {0, 0, 0, 0, 0}, e[5];
  rt_weigh_block(zeros, 0, 5, e, 0, NAN, &b);
  CHECK_NEAR(rt_combine_blocks(&b, 1).ess, 5.0, 1e-12, "ESS of uniform weights");
  /* Running sums: the e_i added up (in rt_weigh_sums's order, which test_weights_exp checks bit for
   * bit), the last the block's sum; the same block sums either way. */
  double lw5[5] = {-1.0, 0.5, -INFINITY, 0.25, -3.0}, run[5];
  rt_block br;
  rt_weigh_block(lw5, 0, 5, e, 0, NAN, &b);
  rt_weigh_block(lw5, 0, 5, run, 1, NAN, &br);
  double local = 0.0;
  int sums_ok = b.sum == br.sum && b.sum_sq == br.sum_sq && b.max == br.max && run[4] == b.sum;
  for (int i = 0; i < 5; i++) {
    local += e[i];
    sums_ok &= fabs(run[i] - local) <= 1e-15 * local;
  }
  CHECK(sums_ok, "running sums are the weights added up, the last the block's sum");
}

/* Log weights over several blocks: a wide spread, zero weights, a block with none but zeros, a
 * block far below the rest (its scale underflows past the double range of exp). */
static void fill_log_weights(double *logw, int64_t n, uint64_t seed) {
  rt_rng g;
  rt_rng_init(&g, seed, 0, 0, RT_DOMAIN_TEST);
  for (int64_t i = 0; i < n; i++) {
    double u = rt_uniform(&g);
    logw[i] = u < 0.05 ? -INFINITY : -40.0 * rt_uniform(&g) + 3.0 * rt_normal(&g);
  }
  for (int64_t i = RT_RESAMPLE_BLOCK; i < 2 * RT_RESAMPLE_BLOCK && i < n; i++) logw[i] = -INFINITY;
  for (int64_t i = 3 * RT_RESAMPLE_BLOCK; i < 4 * RT_RESAMPLE_BLOCK && i < n; i++) logw[i] -= 900.0;
}

/* The blocked normalisation (weigh, combine, normalise: what the barrier runs on its threads) against
 * a straightforward long-double log-sum-exp. */
static void test_blocked_normalisation(void) {
  const int64_t n = 5 * RT_RESAMPLE_BLOCK + 123;
  int64_t nb = rt_n_blocks(n);
  double *logw = malloc((size_t)n * sizeof(double)), *e = malloc((size_t)n * sizeof(double));
  double *w = malloc((size_t)n * sizeof(double));
  rt_block *blocks = malloc((size_t)nb * sizeof(rt_block));
  fill_log_weights(logw, n, 11);
  logw[n - 1] = 5.0; /* the largest weight in the short last block */
  for (int64_t k = nb - 1; k >= 0; k--) /* any block order: blocks are independent */
    rt_weigh_block(logw, rt_block_lo(k), rt_block_hi(k, n), e, 0, NAN, &blocks[k]);
  rt_weights s = rt_combine_blocks(blocks, nb);
  for (int64_t k = 0; k < nb; k++) rt_normalise_block(e, rt_block_lo(k), rt_block_hi(k, n), &blocks[k], s.total);
  long double mx = -INFINITY, sum = 0.0L, sum_sq = 0.0L;
  for (int64_t i = 0; i < n; i++)
    if (logw[i] > mx) mx = logw[i];
  for (int64_t i = 0; i < n; i++) sum += expl((long double)logw[i] - mx);
  double worst = 0.0;
  int zeros_ok = 1;
  for (int64_t i = 0; i < n; i++) {
    long double ref = expl((long double)logw[i] - mx) / sum;
    sum_sq += ref * ref;
    double err = (double)fabsl((long double)e[i] - ref);
    if (ref > 0.0L && err / (double)ref > worst) worst = err / (double)ref;
    if ((double)ref == 0.0 && e[i] != 0.0) zeros_ok = 0;
  }
  CHECK(worst < 1e-13, "blocked weights vs long double: relative error %g", worst);
  CHECK(zeros_ok, "zero weights stay zero");
  CHECK_NEAR(s.log_sum, (double)(mx + logl(sum)), 1e-13 * fabs((double)(mx + logl(sum))), "log sum vs long double");
  CHECK_NEAR(s.ess, (double)(1.0L / sum_sq), 1e-12 * (double)(1.0L / sum_sq), "ESS vs long double");
  CHECK(blocks[1].scale == 0.0 && blocks[3].scale == 0.0, "a block of zeros, a block below exp's range: scale 0");
  /* rt_normalise (one thread, no block table) gives the same bits. */
  CHECK(rt_normalise(logw, n, w) == s.log_sum && memcmp(w, e, (size_t)n * sizeof(double)) == 0,
        "rt_normalise equals the blocked passes bit for bit");
  free(logw);
  free(e);
  free(w);
  free(blocks);
}

/* Systematic and stratified offspring computed block by block from the running sums, the blocks in
 * reverse order (as threads may finish them), against a direct merge of all N points with the
 * cumulative weights; under every offspring kernel the CPU has. */
static void test_offspring_blocks(int32_t scheme, int level) {
  const int64_t n = 4 * RT_RESAMPLE_BLOCK + 777;
  int64_t nb = rt_n_blocks(n);
  double *logw = malloc((size_t)n * sizeof(double)), *e = malloc((size_t)n * sizeof(double));
  double *run = malloc((size_t)n * sizeof(double));
  double *cum = malloc((size_t)n * sizeof(double)), *points = malloc((size_t)n * sizeof(double));
  rt_count *counts = malloc((size_t)n * sizeof(rt_count)), *ref = calloc((size_t)n, sizeof(rt_count));
  rt_block *blocks = malloc((size_t)nb * sizeof(rt_block));
  uint64_t *words = malloc(4 * (size_t)rt_bit_words(n) * sizeof(uint64_t));
  rt_bits bits = {words, words + rt_bit_words(n)}, again = {words + 2 * rt_bit_words(n), words + 3 * rt_bit_words(n)};
  for (uint32_t rep = 0; rep < 20; rep++) {
    fill_log_weights(logw, n, 100 + rep);
    for (int64_t k = 0; k < nb; k++) {
      rt_weigh_block(logw, rt_block_lo(k), rt_block_hi(k, n), e, 0, NAN, &blocks[k]);
      rt_weigh_block(logw, rt_block_lo(k), rt_block_hi(k, n), run, 1, NAN, &blocks[k]);
    }
    rt_weights s = rt_combine_blocks(blocks, nb);
    rt_rng g;
    rt_rng_init(&g, 5, 0, rep, RT_DOMAIN_RESAMPLE);
    rt_offspring o;
    rt_offspring_init(&o, scheme, n, s.total, &g);
    int ends_meet = 1;
    for (int64_t k = nb - 1; k >= 0; k--) {
      int64_t lo = rt_block_lo(k);
      double end = rt_offspring_block(&o, run + lo, lo, rt_block_hi(k, n), &blocks[k], counts, &bits);
      ends_meet &= end == (k + 1 < nb ? blocks[k + 1].start : s.total);
    }
    CHECK(ends_meet, "%s, kernel %d: each block ends where the next starts", scheme_name[scheme], level);
    /* The tally made with the counts: its bits and numbers are the counts', and rt_tally_block's. */
    int64_t wrong_bits = 0, wrong_numbers = 0;
    for (int64_t k = 0; k < nb; k++) {
      int64_t n_free = 0, n_copies = 0;
      for (int64_t i = rt_block_lo(k); i < rt_block_hi(k, n); i++) {
        n_free += counts[i] == 0;
        n_copies += counts[i] > 1 ? counts[i] - 1 : 0;
        wrong_bits += (int64_t)(bits.free[i / 64] >> (i % 64) & 1) != (counts[i] == 0);
        wrong_bits += (int64_t)(bits.extra[i / 64] >> (i % 64) & 1) != (counts[i] > 1);
      }
      rt_block b = blocks[k];
      rt_tally_block(counts, rt_block_lo(k), rt_block_hi(k, n), &again, &b);
      wrong_numbers += blocks[k].n_free != n_free || blocks[k].n_copies != n_copies;
      wrong_numbers += b.n_free != n_free || b.n_copies != n_copies;
    }
    CHECK(wrong_bits == 0 && wrong_numbers == 0 &&
              memcmp(bits.free, again.free, 2 * (size_t)rt_bit_words(n) * sizeof(uint64_t)) == 0,
          "%s, kernel %d: the tally is the counts' (%lld bits, %lld numbers wrong)", scheme_name[scheme], level,
          (long long)wrong_bits, (long long)wrong_numbers);
    int64_t left = rt_offspring_leftover(&o, s.total);
    if (left > 0) counts[rt_last_live(run, blocks, n)] += left;
    /* The reference: cumulative weights in points from the running sums, the N points, merged; a
     * leftover point goes to the last slot whose weight moved the cumulative weight. */
    int64_t last = 0;
    for (int64_t k = 0; k < nb; k++) {
      double before = 0.0;
      for (int64_t i = rt_block_lo(k); i < rt_block_hi(k, n); i++) {
        cum[i] = (blocks[k].start + blocks[k].scale * run[i]) * o.per_unit;
        if (run[i] > before && blocks[k].scale > 0.0) last = i;
        before = run[i];
      }
    }
    rt_rng pg = g;
    for (int64_t j = 0; j < n; j++)
      points[j] = (double)j + (scheme == SIRENRT_STRATIFIED ? rt_uniform(&pg) : o.u);
    memset(ref, 0, (size_t)n * sizeof *ref);
    int64_t j = 0;
    for (int64_t i = 0; i < n; i++)
      while (j < n && points[j] < cum[i]) ref[i]++, j++;
    ref[last] += n - j;
    int64_t total = 0, differ = 0, far = 0;
    for (int64_t i = 0; i < n; i++) {
      total += counts[i];
      differ += counts[i] != ref[i];
      double nw = e[i] * blocks[i / RT_RESAMPLE_BLOCK].scale / s.total * (double)n;
      far += scheme == SIRENRT_SYSTEMATIC && (counts[i] < floor(nw) - 1 || counts[i] > ceil(nw) + 1);
    }
    CHECK(total == n, "%s, kernel %d: counts sum to %lld", scheme_name[scheme], level, (long long)total);
    CHECK(differ == 0, "%s, kernel %d: %lld counts differ from the direct merge", scheme_name[scheme], level,
          (long long)differ);
    CHECK(far == 0, "%s, kernel %d: %lld counts far from N w", scheme_name[scheme], level, (long long)far);
  }
  free(logw);
  free(e);
  free(run);
  free(cum);
  free(points);
  free(counts);
  free(ref);
  free(blocks);
  free(words);
}

/* The systematic counts of every kernel against the scalar loop's, bit for bit, on words of every
 * length from 1 to 64 (a vector kernel's full vectors and its scalar tail), with cumulative weights
 * below the first point (down to -2.5 points: the lower clamp) and past the last (the upper one), a
 * NaN, whole numbers of points (where the ceiling
 * is exact) and points with many offspring. */
static void test_systematic_kernels(void) {
  enum { M = 64 };
  double run[M];
  rt_count want[M], got[M];
  int64_t wrong = 0, tried = 0;
  int best = rt_offspring_kernel(-1);
  for (uint32_t rep = 0; rep < 400; rep++) {
    rt_rng g;
    rt_rng_init(&g, 9, 0, rep, RT_DOMAIN_TEST);
    int64_t m = 1 + rep % M;
    double local = 0.0;
    for (int64_t i = 0; i < m; i++) {
      double r = rt_uniform(&g);
      local += r < 0.2 ? 0.0 : r < 0.3 ? 0.25 * (double)(1 + rep % 5) : r < 0.35 ? 6.0 * r : r;
      run[i] = local;
    }
    rt_offspring o = {.scheme = SIRENRT_SYSTEMATIC, .n = 40, .per_unit = 40.0 / (0.6 * local + 1e-3),
                      .u = rep % 7 == 0 ? 0.0 : rt_uniform(&g)};
    if (rep % 13 == 5) run[m / 2] = NAN; /* no weight is NaN, but a kernel must clamp one as the loop does */
    rt_block b = {.start = rep % 3 == 0 ? 0.0 : rep % 5 == 1 ? -2.5 : 0.05 * (double)(rep % 11),
                  .scale = 0.5 + rt_uniform(&g)};
    rt_offspring_kernel(0);
    rt_offspring_block(&o, run, 0, m, &b, want, NULL);
    for (int level = 1; level <= best; level++) {
      rt_offspring_kernel(level);
      memset(got, 0x5A, sizeof got);
      rt_offspring_block(&o, run, 0, m, &b, got, NULL);
      wrong += memcmp(got, want, (size_t)m * sizeof *got) != 0;
      tried++;
    }
  }
  rt_offspring_kernel(best);
  CHECK(wrong == 0, "systematic kernels: %lld of %lld words differ from the scalar loop", (long long)wrong,
        (long long)tried);
}

static void test_unbiased(int32_t scheme) {
  enum { N = 10, REPS = 40000 };
  double w[N] = {0.02, 0.3, 0.0, 0.08, 0.15, 0.05, 0.2, 0.1, 0.07, 0.03};
  double mean[N] = {0}, sq[N] = {0};
  rt_count counts[N];
  int sum_ok = 1, spread_ok = 1;
  for (int r = 0; r < REPS; r++) {
    rt_rng g;
    rt_rng_init(&g, 77, 0, (uint32_t)r, RT_DOMAIN_RESAMPLE);
    rt_resample_counts(scheme, w, N, &g, counts);
    int64_t s = 0;
    for (int i = 0; i < N; i++) {
      s += counts[i];
      mean[i] += (double)counts[i];
      sq[i] += (double)counts[i] * (double)counts[i];
      /* Low-variance guarantees: systematic gives floor(N w) or ceil(N w), residual at least floor(N w),
       * stratified is at most one off either way. */
      double nw = N * w[i], c = (double)counts[i];
      if (scheme == SIRENRT_SYSTEMATIC && (c < floor(nw) || c > ceil(nw))) spread_ok = 0;
      if (scheme == SIRENRT_RESIDUAL && c < floor(nw)) spread_ok = 0;
      if (scheme == SIRENRT_STRATIFIED && (c < floor(nw) - 1 || c > ceil(nw) + 1)) spread_ok = 0;
    }
    sum_ok &= s == N;
    sum_ok &= counts[2] == 0; /* a zero weight never has offspring */
  }
  CHECK(sum_ok, "%s: counts must sum to N, zero weights none", scheme_name[scheme]);
  CHECK(spread_ok, "%s: counts far from N w", scheme_name[scheme]);
  for (int i = 0; i < N; i++) {
    double m = mean[i] / REPS, v = sq[i] / REPS - m * m;
    char what[64];
    snprintf(what, sizeof what, "%s: E[count %d]", scheme_name[scheme], i);
    CHECK_NEAR(m, N * w[i], 5 * sqrt(v / REPS) + 1e-9, what);
  }
}

static void test_extremes(void) {
  /* One particle takes all; a large population keeps the sum. */
  enum { N = 1000 };
  double *w = calloc(N, sizeof(double));
  rt_count *counts = malloc(N * sizeof(rt_count));
  w[N - 1] = 1.0;
  for (int32_t s = 0; s <= SIRENRT_RESIDUAL; s++) {
    rt_rng g;
    rt_rng_init(&g, 1, 0, 0, RT_DOMAIN_RESAMPLE);
    rt_resample_counts(s, w, N, &g, counts);
    CHECK(counts[N - 1] == N, "%s: all mass on the last particle", scheme_name[s]);
  }
  for (int i = 0; i < N; i++) w[i] = 1.0 / N;
  for (int32_t s = 0; s <= SIRENRT_RESIDUAL; s++) {
    rt_rng g;
    rt_rng_init(&g, 2, 0, 0, RT_DOMAIN_RESAMPLE);
    rt_resample_counts(s, w, N, &g, counts);
    int64_t sum = 0, ones = 0;
    for (int i = 0; i < N; i++) sum += counts[i], ones += counts[i] == 1;
    CHECK(sum == N, "%s: sum %lld", scheme_name[s], (long long)sum);
    if (s == SIRENRT_SYSTEMATIC)
      CHECK(ones == N, "%s: equal weights keep every particle (%lld kept)", scheme_name[s], (long long)ones);
  }
  free(w);
  free(counts);
}

/* The leftover point goes to the last slot whose weight moved its block's running sum, in a block of
 * nonzero scale: not to a slot after it of zero weight, nor to one whose weight is too small to move
 * the sum (1e-300 added to 0.5). */
static void test_last_live(void) {
  enum { N = RT_RESAMPLE_BLOCK + 3 };
  double *running = malloc(N * sizeof(double));
  for (int64_t i = 0; i < RT_RESAMPLE_BLOCK; i++) running[i] = i < 5 ? 0.25 * (double)i : 1.0; /* slot 4 last */
  running[RT_RESAMPLE_BLOCK] = 0.5;
  running[RT_RESAMPLE_BLOCK + 1] = 0.5 + 1e-300;
  running[RT_RESAMPLE_BLOCK + 2] = running[RT_RESAMPLE_BLOCK + 1];
  rt_block blocks[2] = {{.scale = 1.0}, {.scale = 0.5}};
  int64_t to = rt_last_live(running, blocks, N);
  CHECK(to == RT_RESAMPLE_BLOCK, "leftover to slot %lld", (long long)to);
  blocks[1].scale = 0.0;
  to = rt_last_live(running, blocks, N);
  CHECK(to == 4, "leftover past a block of scale 0: to slot %lld", (long long)to);
  free(running);
}

/* Every kernel of the tallies (scalar, SSE2, AVX2, AVX-512, as far as the CPU has them) marks the
 * zero counts and the counts above one of every word, full or partial: counts of 0, 1, 2, large ones
 * up to SIRENRT_MAX_PARTICLES and ones whose low 16 bits alone are zero. */
static void test_tally_kernels(void) {
  int best = rt_offspring_kernel(-1);
  CHECK(best >= 0 && best <= 3, "offspring kernel level %d", best);
  static const rt_count values[] = {0, 1, 2, 3, 7, 1 << 16, (1 << 16) + 1, SIRENRT_MAX_PARTICLES, 65};
  enum { NV = sizeof values / sizeof values[0] };
  const int64_t n = 3 * 64 + 37; /* three words and a partial one */
  rt_count counts[3 * 64 + 37];
  uint64_t words[4 * 4];
  rt_bits bits = {words, words + 4};
  for (int level = 0; level <= 3; level++) {
    int got = rt_offspring_kernel(level);
    CHECK(got <= level, "tally kernel %d reported as %d", level, got);
    if (got != level) continue; /* the CPU lacks it */
    int64_t wrong = 0;
    for (uint32_t rep = 0; rep < 200; rep++) {
      uint64_t state = 0x9E3779B97F4A7C15ull * (rep + 1);
      for (int64_t i = 0; i < n; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        counts[i] = values[state % NV];
      }
      for (int64_t lo = 0; lo < n; lo += 64) { /* blocks of every length from 1 to 64, one word each */
        int64_t hi = lo + 1 + (int64_t)((rep + (uint64_t)lo) % 64);
        hi = hi < n ? hi : n;
        rt_block b;
        memset(words, 0xA5, sizeof words);
        rt_tally_block(counts, lo, hi, &bits, &b);
        int64_t n_free = 0, n_copies = 0;
        for (int64_t i = lo; i < hi; i++) {
          n_free += counts[i] == 0;
          n_copies += counts[i] > 1 ? counts[i] - 1 : 0;
          wrong += (int64_t)(bits.free[lo / 64] >> (i - lo) & 1) != (counts[i] == 0);
          wrong += (int64_t)(bits.extra[lo / 64] >> (i - lo) & 1) != (counts[i] > 1);
        }
        if (hi - lo < 64) wrong += (bits.free[lo / 64] | bits.extra[lo / 64]) >> (hi - lo) != 0;
        wrong += b.n_free != n_free || b.n_copies != n_copies;
      }
    }
    CHECK(wrong == 0, "tally kernel %d: %lld bits or numbers wrong", level, (long long)wrong);
  }
  CHECK(rt_offspring_kernel(best) == best, "restoring tally kernel %d", best);
}

int main(void) {
  test_normalise_and_ess();
  test_blocked_normalisation();
  int best = rt_offspring_kernel(-1);
  for (int level = 0; level <= best; level++) {
    if (rt_offspring_kernel(level) != level) continue;
    test_offspring_blocks(SIRENRT_SYSTEMATIC, level);
    test_offspring_blocks(SIRENRT_STRATIFIED, level);
  }
  rt_offspring_kernel(best);
  test_systematic_kernels();
  test_last_live();
  test_tally_kernels();
  for (int32_t s = 0; s <= SIRENRT_RESIDUAL; s++) test_unbiased(s);
  test_extremes();
  return check_report("test_resample");
}
