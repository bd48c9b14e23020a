/* resample.c — weight normalisation (log-sum-exp), effective sample size and the four resampling
 * schemes.  Each scheme produces offspring counts with E[count_i] = N w_i; barrier.c turns counts into
 * copies, moving only duplicated particles.
 *
 * Blocks.  The barrier's passes run on every thread, yet the answer must not depend on how many
 * there are.  So the particles are cut into fixed blocks of RT_RESAMPLE_BLOCK slots, whatever the
 * thread count, and every floating-point reduction is done inside a block in a fixed order (slots
 * in groups of eight, rt_weigh_sums) and then across blocks in block order:
 *   weigh (per block)    e_i = exp(logw_i - m_b) with m_b the block's largest log weight, and the
 *                        block sums of e_i and e_i^2; for systematic and stratified resampling it
 *                        stores the running sum e_lo + .. + e_i instead of e_i;
 *   combine (serial)     M = max m_b, the block scale f_b = exp(m_b - M), the cumulative weight
 *                        before each block C_b (C_{b+1} = C_b + f_b sum_b), the total S = C_B, the
 *                        ESS S^2 / sum f_b^2 sumsq_b and log sum exp(logw) = M + log S;
 *   offspring (per block, systematic and stratified)  the cumulative weight at slot i is
 *                        C_b + f_b (e_lo + .. + e_i), from the running sum the weigh pass added up
 *                        (its last is the block's sum); at the block's end it is exactly C_{b+1} (the same
 *                        operations on the same numbers), so the points each block claims meet
 *                        without gap or overlap, and no slot waits for the sum at the slot before.
 * The normalised weight is w_i = e_i (f_b / S).  Multinomial and residual resampling stay one
 * sequential walk over the normalised weights (their sorted uniforms come from one stream). */
#include "population.h"

#include <stdlib.h>
#include <string.h>

/* The cumulative weight at `local` (a running sum of the e_i from a block's start) inside a block
 * that starts at `start` and has scale `scale`.  One function, so every pass rounds it alike (the
 * runtime is built as ISO C11, where GCC does not contract a * b + c into a fused multiply-add, which
 * would round differently where it did). */
static inline double cumulative(double start, double scale, double local) { return start + scale * local; }

void rt_weigh_block(const double *logw, int64_t lo, int64_t hi, double *out, int running, double max, rt_block *b) {
  double mx = isnan(max) ? rt_max_of(logw + lo, hi - lo) : max, sum = 0.0, sum_sq = 0.0;
  if (mx == -INFINITY) {
    memset(out + lo, 0, (size_t)(hi - lo) * sizeof(double));
  } else if (mx == INFINITY) { /* infinite densities (e.g. gamma(0.5, 1) at 0) share the mass */
    for (int64_t i = lo; i < hi; i++) {
      double v = logw[i] == INFINITY ? 1.0 : 0.0;
      sum += v;
      sum_sq += v;
      out[i] = running ? sum : v;
    }
  } else { /* the exponentials and their sums a vector at a time (weights_exp.c) */
    rt_weigh_sums(logw + lo, hi - lo, mx, out + lo, running, &sum, &sum_sq);
  }
  b->max = mx;
  b->sum = sum;
  b->sum_sq = sum_sq;
}

/* A block's scale exp(m_b - M): 0 for a block of zero weights; with infinite weights only the
 * blocks holding one count. */
static double block_scale(double block_max, double mx) {
  if (block_max == -INFINITY) return 0.0;
  if (mx == INFINITY) return block_max == INFINITY ? 1.0 : 0.0;
  return exp(block_max - mx);
}

rt_weights rt_combine_blocks(rt_block *blocks, int64_t nb) {
  double mx = -INFINITY;
  for (int64_t k = 0; k < nb; k++)
    if (blocks[k].max > mx) mx = blocks[k].max;
  double start = 0.0, sum_sq = 0.0;
  for (int64_t k = 0; k < nb; k++) {
    rt_block *b = &blocks[k];
    b->scale = block_scale(b->max, mx);
    b->start = start;
    start = cumulative(start, b->scale, b->sum);
    sum_sq += b->scale * b->scale * b->sum_sq;
  }
  if (mx == -INFINITY) return (rt_weights){-INFINITY, 0.0, 0.0};
  return (rt_weights){mx + log(start), start, start * start / sum_sq};
}

void rt_normalise_block(double *e, int64_t lo, int64_t hi, const rt_block *b, double total) {
  double factor = b->scale / total;
  for (int64_t i = lo; i < hi; i++) e[i] *= factor;
}

/* The barrier's passes on one thread, without the block table: the block maxima are found again. */
double rt_normalise(const double *logw, int64_t n, double *w) {
  int64_t nb = rt_n_blocks(n);
  double mx = -INFINITY, total = 0.0;
  for (int64_t i = 0; i < n; i++)
    if (logw[i] > mx) mx = logw[i];
  if (mx == -INFINITY) {
    memset(w, 0, (size_t)n * sizeof(double));
    return -INFINITY;
  }
  for (int64_t k = 0; k < nb; k++) {
    rt_block b;
    rt_weigh_block(logw, rt_block_lo(k), rt_block_hi(k, n), w, 0, NAN, &b);
    total = cumulative(total, block_scale(b.max, mx), b.sum);
  }
  for (int64_t k = 0; k < nb; k++) {
    rt_block b = {.max = -INFINITY};
    for (int64_t i = rt_block_lo(k); i < rt_block_hi(k, n); i++)
      if (logw[i] > b.max) b.max = logw[i];
    b.scale = block_scale(b.max, mx);
    rt_normalise_block(w, rt_block_lo(k), rt_block_hi(k, n), &b, total);
  }
  return mx + log(total);
}

/* ---------------------------------------------------------------- systematic and stratified ---- */

/* Stratified resampling's point j is j + u_j with u_j the j-th uniform of the resampling stream;
 * Streams are counters, so a block starts reading at its first point without the others. */
static void seek_uniform(rt_rng *g, const rt_rng *stream, int64_t j) {
  *g = *stream;
  g->ctr[0] += (uint32_t)(j >> 1); /* two uniforms per block (n < 2^33 particles) */
  g->left = 0;
  if (j & 1) (void)rt_next_u64(g);
}

static double stratified_point(const rt_offspring *o, int64_t j) {
  rt_rng g;
  seek_uniform(&g, &o->stream, j);
  return (double)j + rt_uniform(&g);
}

/* Systematic: the points (u + j) / N below c (in units of points: the cumulative weight times N / S)
 * are the j < c - u, so their number is ceil(c - u) clamped to [0, N]: no data-dependent inner loop
 * (whose mispredicted exits used to cost more than the rest of the filter step).  The ceiling of the
 * clamped x is its truncation t plus (t < x): the same integer as ceil, without the branches and bit
 * tricks that ceil costs a baseline x86-64 build (no SSE4.1 roundsd).  x is finite (c is a sum of
 * weights in [0, 1]), and t and N are exact doubles (N <= 2^40). */
static inline int64_t systematic_below(double c, double u, int64_t n) {
  double x = c - u, top = (double)n;
  x = x > 0.0 ? x : 0.0;
  x = x < top ? x : top;
  int64_t t = (int64_t)x;
  return t + ((double)t < x);
}

/* How many of the N points lie below c. */
static int64_t points_below(const rt_offspring *o, double c) {
  if (o->scheme != SIRENRT_STRATIFIED) return systematic_below(c, o->u, o->n);
  /* Points increase with j and j <= j + u_j <= j + 1 (rounding may reach j + 1): all j < floor(c) - 1
   * lie below c, none above floor(c), so at most two points need their uniform. */
  if (!(c > 0.0)) return 0;
  double fl = floor(c) - 1.0;
  if (fl >= (double)o->n) return o->n;
  int64_t j = fl > 0.0 ? (int64_t)fl : 0;
  while (j < o->n && stratified_point(o, j) < c) j++;
  return j;
}

void rt_offspring_init(rt_offspring *o, int32_t scheme, int64_t n, double total, const rt_rng *g) {
  o->scheme = scheme;
  o->n = n;
  o->per_unit = (double)n / total;
  o->stream = *g;
  rt_rng first;
  seek_uniform(&first, g, 0);
  o->u = rt_uniform(&first);
}

/* The offspring pass's vector kernels: a word's systematic counts, and its tally.
 *
 * Systematic counts.  Given the running sums of a block (rt_weigh_block made them), slot i's count
 * is systematic_below at its cumulative weight less the same at the slot before: no sum is carried
 * from slot to slot, so vectors of slots are independent.  Each lane makes the scalar code's
 * operations in its order (a product, a sum, a product, a difference; ISO C11 contracts none of them
 * into a fused multiply-add), clamps as its ternaries do (MAXPD and MINPD return the second operand
 * when the first is NaN or the two are equal, as `x > 0 ? x : 0` does), and rounds up with ROUNDPD,
 * which is the scalar ceiling exactly.  The ceiling is at most N < 2^52, so adding 2^52 leaves it in
 * the low bits of the double.  The scalar loop, which rounds by converting twice, cost the walk
 * about 1.2 of its 19 ns a particle-step at N = 10^4.
 *
 * Tallies: bit i of *zero where counts[i] is 0, of *extra where it is 2 or more, for m <= 64 counts.
 * Made after the counts, a vector of them at a time: a per-slot mark with variable shifts (three
 * micro-ops each on a baseline x86-64 build) cost the offspring loop about 1.5 ns a particle at
 * N = 10^5.  Counts are >= 0, so "2 or more" is "nonzero once bit 0 is cleared". */
typedef struct systematic_word {
  double start, scale;        /* the block's cumulative weight: start + scale * running sum */
  double per_unit, u;         /* points per unit of weight N / S, and the offset u */
  int64_t n;                  /* N */
} systematic_word;
/* The counts of slots [0, m) of a block (m <= RT_RESAMPLE_BLOCK) whose running sums are
 * running[0 .. m), after `below` points, and, where `zero` is given, their tallies a word of 64 slots
 * at a time, into zero[w] and extra[w], the free slots added to *n_free; returns the points below the
 * last slot.  One call a block, each kernel looping over the words itself: a call of the counts kernel
 * and one of the tally kernel a word, through pointers, each making its constants again, were a
 * quarter of the pass. */
typedef int64_t systematic_fn(const systematic_word *p, const double *running, int64_t m, int64_t below,
                              rt_count *counts, uint64_t *zero, uint64_t *extra, int64_t *n_free);
typedef void word_tally_fn(const rt_count *counts, int64_t m, uint64_t *zero, uint64_t *extra);

/* Counts of m slots whose running sums are running[0 .. m), after `below` points; returns the points
 * below the last. */
static int64_t systematic_word_scalar(const systematic_word *p, const double *running, int64_t m, int64_t below,
                                      rt_count *counts) {
  for (int64_t i = 0; i < m; i++) {
    int64_t now = systematic_below(cumulative(p->start, p->scale, running[i]) * p->per_unit, p->u, p->n);
    counts[i] = (rt_count)(now - below);
    below = now;
  }
  return below;
}

static void tally_tail(const rt_count *counts, int64_t from, int64_t m, uint64_t *zero, uint64_t *extra) {
  for (int64_t i = from; i < m; i++) {
    *zero |= (uint64_t)(counts[i] == 0) << i;
    *extra |= (uint64_t)(counts[i] > 1) << i;
  }
}

static void tally_scalar(const rt_count *counts, int64_t m, uint64_t *zero, uint64_t *extra) {
  *zero = *extra = 0;
  tally_tail(counts, 0, m, zero, extra);
}

/* A block kernel (systematic_fn) from one width's word kernels. */
#define SYSTEMATIC_BLOCK(name, attributes, word_counts, word_tally, finish)                                \
  attributes static int64_t name(const systematic_word *p, const double *running, int64_t m, int64_t below,   \
                                 rt_count *counts, uint64_t *zero, uint64_t *extra, int64_t *n_free) {       \
    for (int64_t w = 0; w < m; w += 64) {                                                                  \
      int64_t k = m - w < 64 ? m - w : 64;                                                                 \
      below = word_counts(p, running + w, k, below, counts + w);                                           \
      if (!zero) continue;                                                                                 \
      word_tally(counts + w, k, &zero[w / 64], &extra[w / 64]);                                            \
      *n_free += rt_popcount(zero[w / 64]);                                                                \
    }                                                                                                      \
    finish;                                                                                                \
    return below;                                                                                          \
  }
SYSTEMATIC_BLOCK(systematic_scalar, , systematic_word_scalar, tally_scalar, (void)0)

#if defined(__x86_64__)
#include <immintrin.h>

/* The points below each slot of a vector of running sums, as systematic_below counts them, for one
 * width's operations; the ceiling's integer is read off the bits of it plus 2^52. */
#define POINTS_BELOW(T, ADD, SUB, MUL, MAX, MIN, CEIL, SUB64, CAST, run, now)              \
  do {                                                                                   \
    T x_ = MUL(ADD(start, MUL(scale, run)), per_unit);                                   \
    x_ = ADD(CEIL(MIN(MAX(SUB(x_, u), zero), top)), two52);                              \
    now = SUB64(CAST(x_), CAST(two52));                                                  \
  } while (0)
#define Y_CEIL(x) _mm256_round_pd(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
#define Z_CEIL(x) _mm512_roundscale_pd(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)

__attribute__((target("avx2"), always_inline)) static inline int64_t systematic_word_avx2(
    const systematic_word *p, const double *running, int64_t m, int64_t below, rt_count *counts) {
  const __m256d start = _mm256_set1_pd(p->start), scale = _mm256_set1_pd(p->scale);
  const __m256d per_unit = _mm256_set1_pd(p->per_unit), u = _mm256_set1_pd(p->u), top = _mm256_set1_pd((double)p->n);
  const __m256d zero = _mm256_setzero_pd(), two52 = _mm256_set1_pd(0x1p52);
  __m256i last = _mm256_set1_epi64x(below); /* lane 3: the points below the slot before */
  const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6); /* each count's low 32 bits */
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    __m256i now;
    POINTS_BELOW(__m256d, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, _mm256_max_pd, _mm256_min_pd, Y_CEIL,
                 _mm256_sub_epi64, _mm256_castpd_si256, _mm256_loadu_pd(running + i), now);
    /* the slot before each: lanes 3 0 1 2 of `now`, lane 0 replaced by the last vector's lane 3 */
    __m256i before = _mm256_blend_epi32(_mm256_permute4x64_epi64(now, _MM_SHUFFLE(2, 1, 0, 3)),
                                        _mm256_permute4x64_epi64(last, _MM_SHUFFLE(3, 3, 3, 3)), 0x03);
    __m256i packed = _mm256_permutevar8x32_epi32(_mm256_sub_epi64(now, before), low_halves);
    _mm_storeu_si128((__m128i *)(void *)(counts + i), _mm256_castsi256_si128(packed));
    last = now;
  }
  below = _mm256_extract_epi64(last, 3);
  if (i == m) return below;
  _mm256_zeroupper(); /* the scalar code after it is not VEX-encoded */
  return systematic_word_scalar(p, running + i, m - i, below, counts + i);
}

__attribute__((target("avx512f"), always_inline)) static inline int64_t systematic_word_avx512(
    const systematic_word *p, const double *running, int64_t m, int64_t below, rt_count *counts) {
  const __m512d start = _mm512_set1_pd(p->start), scale = _mm512_set1_pd(p->scale);
  const __m512d per_unit = _mm512_set1_pd(p->per_unit), u = _mm512_set1_pd(p->u), top = _mm512_set1_pd((double)p->n);
  const __m512d zero = _mm512_setzero_pd(), two52 = _mm512_set1_pd(0x1p52);
  __m512i last = _mm512_set1_epi64(below); /* lane 7: the points below the slot before */
  int64_t i = 0;
  for (; i + 8 <= m; i += 8) {
    __m512i now;
    POINTS_BELOW(__m512d, _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd, _mm512_max_pd, _mm512_min_pd, Z_CEIL,
                 _mm512_sub_epi64, _mm512_castpd_si512, _mm512_loadu_pd(running + i), now);
    __m512i before = _mm512_alignr_epi64(now, last, 7); /* last's lane 7, then now's lanes 0..6 */
    _mm256_storeu_si256((__m256i *)(void *)(counts + i), _mm512_cvtepi64_epi32(_mm512_sub_epi64(now, before)));
    last = now;
  }
  below = _mm256_extract_epi64(_mm512_extracti64x4_epi64(last, 1), 3);
  if (i == m) return below;
  _mm256_zeroupper();
  return systematic_word_scalar(p, running + i, m - i, below, counts + i);
}

/* Four counts' zero tests as the low bits of a mask. */
static inline int zero_mask(__m128i v) { return _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, _mm_setzero_si128()))); }

static void tally_sse2(const rt_count *counts, int64_t m, uint64_t *zero, uint64_t *extra) {
  const __m128i not_one = _mm_set1_epi32(~1);
  uint64_t z = 0, e = 0;
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(counts + i));
    z |= (uint64_t)zero_mask(v) << i;
    e |= (uint64_t)(zero_mask(_mm_and_si128(v, not_one)) ^ 15) << i;
  }
  *zero = z;
  *extra = e;
  tally_tail(counts, i, m, zero, extra);
}

__attribute__((target("avx2"), always_inline)) static inline void tally_avx2(const rt_count *counts, int64_t m,
                                                                             uint64_t *zero, uint64_t *extra) {
  const __m256i not_one = _mm256_set1_epi32(~1), none = _mm256_setzero_si256();
  uint64_t z = 0, e = 0;
  int64_t i = 0;
  for (; i + 8 <= m; i += 8) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(counts + i));
    z |= (uint64_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, none))) << i;
    __m256i low = _mm256_cmpeq_epi32(_mm256_and_si256(v, not_one), none);
    e |= (uint64_t)(_mm256_movemask_ps(_mm256_castsi256_ps(low)) ^ 0xFF) << i;
  }
  *zero = z;
  *extra = e;
  tally_tail(counts, i, m, zero, extra);
}

__attribute__((target("avx512f"), always_inline)) static inline void tally_avx512(const rt_count *counts, int64_t m,
                                                                                 uint64_t *zero, uint64_t *extra) {
  const __m512i not_one = _mm512_set1_epi32(~1);
  uint64_t z = 0, e = 0;
  int64_t i = 0;
  for (; i + 16 <= m; i += 16) {
    __m512i v = _mm512_loadu_si512((const void *)(counts + i));
    z |= (uint64_t)_mm512_testn_epi32_mask(v, v) << i;
    e |= (uint64_t)_mm512_test_epi32_mask(v, not_one) << i;
  }
  *zero = z;
  *extra = e;
  tally_tail(counts, i, m, zero, extra);
}

SYSTEMATIC_BLOCK(systematic_sse2, , systematic_word_scalar, tally_sse2, (void)0)
SYSTEMATIC_BLOCK(systematic_avx2, __attribute__((target("avx2"))), systematic_word_avx2, tally_avx2,
                 _mm256_zeroupper())
SYSTEMATIC_BLOCK(systematic_avx512, __attribute__((target("avx512f"))), systematic_word_avx512, tally_avx512,
                 _mm256_zeroupper())
#endif

static systematic_fn *systematic_counts = systematic_scalar;
static word_tally_fn *word_tally = tally_scalar;
static int kernel_level = 0;

int rt_offspring_kernel(int level) {
  if (level < 0) return kernel_level;
  int best = rt_cpu_level();
  kernel_level = level < best ? level : best;
  systematic_counts = systematic_scalar;
  word_tally = tally_scalar;
#if defined(__x86_64__)
  if (kernel_level == 1) systematic_counts = systematic_sse2, word_tally = tally_sse2; /* no ROUNDPD: scalar counts */
  if (kernel_level == 2) systematic_counts = systematic_avx2, word_tally = tally_avx2;
  if (kernel_level == 3) systematic_counts = systematic_avx512, word_tally = tally_avx512;
#endif
  return kernel_level;
}

/* The best kernels are chosen when the library loads, so no pass races a first choice. */
__attribute__((constructor)) static void kernel_setup(void) { rt_offspring_kernel(3); }

/* Tallies the word of counts[first .. first + m) into bits; adds its free slots to *n_free. */
static inline void store_word(const rt_bits *bits, const rt_count *counts, int64_t first, int64_t m, int64_t *n_free) {
  uint64_t zero, extra;
  word_tally(counts + first, m, &zero, &extra);
  bits->free[first / 64] = zero;
  bits->extra[first / 64] = extra;
  *n_free += rt_popcount(zero);
}

/* A block of `slots` slots with `offspring` in all, `n_free` of its slots without: its extra
 * offspring are its counts less one for each parent's own slot. */
static void set_tally(rt_block *b, int64_t slots, int64_t offspring, int64_t n_free) {
  b->n_free = n_free;
  b->n_copies = offspring - (slots - n_free);
}

void rt_tally_block(const rt_count *counts, int64_t lo, int64_t hi, const rt_bits *bits, rt_block *b) {
  int64_t n_free = 0, offspring = 0;
  for (int64_t w = lo; w < hi; w += 64) {
    int64_t end = hi - w < 64 ? hi : w + 64;
    for (int64_t i = w; i < end; i++) offspring += counts[i];
    store_word(bits, counts, w, end - w, &n_free);
  }
  set_tally(b, hi - lo, offspring, n_free);
}

double rt_offspring_block(const rt_offspring *o, const double *running, int64_t lo, int64_t hi, rt_block *b,
                          rt_count *counts, const rt_bits *bits) {
  double per_unit = o->per_unit, start = b->start, scale = b->scale;
  int64_t below = points_below(o, start * per_unit), first = below, n_free = 0;
  const systematic_word p = {start, scale, per_unit, o->u, o->n};
  rt_rng g = o->stream;
  int64_t j = below, n = o->n;
  double pos = 0.0;
  if (o->scheme == SIRENRT_STRATIFIED) {
    seek_uniform(&g, &o->stream, j); /* (j = n: a point past the last, never compared) */
    pos = (double)j + rt_uniform(&g);
  }
  if (o->scheme != SIRENRT_STRATIFIED) { /* (a block starts a word of the bits: RT_RESAMPLE_BLOCK) */
    below = systematic_counts(&p, running, hi - lo, below, counts + lo, bits ? bits->free + lo / 64 : NULL,
                              bits ? bits->extra + lo / 64 : NULL, &n_free);
  } else {
    for (int64_t w = lo; w < hi; w += 64) {
      int64_t end = hi - w < 64 ? hi : w + 64;
      for (int64_t i = w; i < end; i++) {
        double c = cumulative(start, scale, running[i - lo]) * per_unit;
        int64_t k = 0;
        while (j < n && pos < c) {
          k++;
          j++;
          pos = (double)j + rt_uniform(&g);
        }
        counts[i] = (rt_count)k;
      }
      if (bits) store_word(bits, counts, w, end - w, &n_free);
    }
    below = j;
  }
  if (bits) set_tally(b, hi - lo, below - first, n_free);
  return cumulative(start, scale, hi > lo ? running[hi - lo - 1] : 0.0);
}

int64_t rt_offspring_leftover(const rt_offspring *o, double total) {
  return o->n - points_below(o, total * o->per_unit);
}

/* Points left over by rounding (cumulative sum slightly below S) go to the last live particle. */
static int64_t last_live(const double *w, int64_t n) {
  int64_t i = n - 1;
  while (i > 0 && !(w[i] > 0.0)) i--;
  return i;
}

/* A slot is live when its running sum grew past the slot's before it (0 before a block's first). */
int64_t rt_last_live(const double *running, const rt_block *blocks, int64_t n) {
  int64_t i = n - 1;
  for (; i > 0; i--) {
    double before = i % RT_RESAMPLE_BLOCK ? running[i - 1] : 0.0;
    if (running[i] > before && blocks[i / RT_RESAMPLE_BLOCK].scale > 0.0) break;
  }
  return i;
}


/* ---------------------------------------------------------------- multinomial and residual ----- */

/* m i.i.d. draws from weights w (summing to total), as m sorted uniforms: the normalised partial sums
 * of m+1 exponentials.  The normaliser needs all of them first, so the stream is replayed. */
static void multinomial(const double *w, int64_t n, int64_t m, double total, rt_rng *g, rt_count *counts) {
  rt_rng start = *g;
  double s = 0.0;
  for (int64_t j = 0; j <= m; j++) s += rt_exponential(g);
  *g = start;
  double scale = total / s, acc = rt_exponential(g), c = 0.0;
  int64_t j = 0;
  for (int64_t i = 0; i < n; i++) {
    c += w[i];
    while (j < m && acc * scale < c) {
      counts[i]++;
      j++;
      acc += rt_exponential(g);
    }
  }
  if (m - j > 0) counts[last_live(w, n)] += (rt_count)(m - j);
}

/* Systematic or stratified counts for normalised weights w: the barrier's blocks, one after another. */
static void blocked(int32_t scheme, const double *w, int64_t n, rt_rng *g, rt_count *counts) {
  double total = 0.0;
  for (int64_t k = 0; k < rt_n_blocks(n); k++) {
    double local = 0.0;
    for (int64_t i = rt_block_lo(k); i < rt_block_hi(k, n); i++) local += w[i];
    total = cumulative(total, 1.0, local);
  }
  rt_offspring o;
  rt_offspring_init(&o, scheme, n, total, g);
  rt_block b = {.start = 0.0, .scale = 1.0};
  double running[RT_RESAMPLE_BLOCK]; /* a block's running sums (32 KiB: no allocation that could fail) */
  for (int64_t k = 0; k < rt_n_blocks(n); k++) {
    int64_t lo = rt_block_lo(k), hi = rt_block_hi(k, n);
    double local = 0.0;
    for (int64_t i = lo; i < hi; i++) running[i - lo] = local += w[i];
    b.start = rt_offspring_block(&o, running, lo, hi, &b, counts, NULL);
  }
  int64_t left = rt_offspring_leftover(&o, total);
  if (left > 0) counts[last_live(w, n)] += (rt_count)left;
}

/* floor(N w_i) copies for sure, the remaining R drawn multinomially from the fractional parts. */
static void residual(const double *w, int64_t n, rt_rng *g, rt_count *counts) {
  double *r = malloc((size_t)n * sizeof(double));
  if (!r) { /* keep going with a scheme that needs no memory */
    blocked(SIRENRT_SYSTEMATIC, w, n, g, counts);
    return;
  }
  int64_t assigned = 0;
  double total = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double nw = w[i] * (double)n, k = floor(nw);
    counts[i] = (rt_count)k;
    assigned += counts[i];
    total += (r[i] = nw - k);
  }
  if (assigned > n) { /* rounding: cannot happen with sum w = 1, but never overshoot */
    blocked(SIRENRT_SYSTEMATIC, w, n, g, counts);
  } else if (assigned < n) {
    multinomial(r, n, n - assigned, total, g, counts);
  }
  free(r);
}

void rt_resample_counts(int32_t scheme, const double *w, int64_t n, rt_rng *g, rt_count *counts) {
  switch (scheme) {
    case SIRENRT_MULTINOMIAL:
      memset(counts, 0, (size_t)n * sizeof *counts);
      multinomial(w, n, n, 1.0, g, counts);
      break;
    case SIRENRT_RESIDUAL: residual(w, n, g, counts); break;
    case SIRENRT_STRATIFIED: blocked(SIRENRT_STRATIFIED, w, n, g, counts); break;
    default: blocked(SIRENRT_SYSTEMATIC, w, n, g, counts); break;
  }
}
