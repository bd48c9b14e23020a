/* weights_exp.c — the weigh pass's exponential: exp(logw_i - m) for a run of slots, m their block's
 * largest log weight, a vector of slots at a time, and the weigh pass's sums of them.  glibc's exp
 * costs a call through the PLT, its errno wrapper and a scalar evaluation per particle: a fifth of the
 * walk's time (4 of 20 ns a particle-step at N = 10^4).  This one takes 0.63 ns an exponential with
 * AVX-512, 1.24 with AVX2 and 2.9 scalar on the development machine.  The kernels make the same
 * operations in the same order, the fused multiply-adds written out (fma(), which ISO C11 never makes
 * of a * b + c by itself), so a weight has the same bits whichever kernel the CPU runs, and on any
 * number of threads.  A CPU without FMA gets the portable scalar code, whose fma() is the C library's
 * exact emulation: the same bits, at some 25 ns an exponential.  Fusing the products took the
 * AVX-512 kernel from 1.0 to 0.63 ns: it is bound by the vector units' throughput.
 *
 * The method is Tang's table-driven one.  For x = logw - m <= 0:
 *   k = round(16 x / ln 2),  r = x - k ln2 / 16  (|r| <= ln2 / 32; ln2 / 16 in two parts, the first
 *   with 36 significant bits, so k times it is exact for |k| < 2^17),
 *   exp(x) = 2^(k div 16) * (T[j] + (T'[j] + T[j] p(r))),  j = k mod 16, T[j] + T'[j] = 2^(j / 16)
 *   to about 107 bits,
 *   p(r) = r + r^2 (1/2 + r (1/6 + ... + r / 5040)), the series to r^7, whose truncation is below
 *   2^-59 relative to the result.
 * The power of two is applied in two factors, each a normal number, so results below DBL_MIN round
 * once into the subnormals (AVX-512 has SCALEFPD, which rounds the same product once).  x is
 * clamped at -1000 (exp underflows to 0 well before), which also takes -inf to 0; a NaN stays NaN.
 * k is read from the bits of 16 x / ln 2 plus 1.5 2^52 + 2^20, which holds k + 2^20 >= 0 in its low
 * bits, so the kernels need no signed 64-bit shift (AVX2 has none).  exp(0) is 1 exactly.  Error:
 * half an ulp from the last addition's rounding and about 0.05 from the rest (test_weights_exp
 * measures 0.534 ulp against long double expl (0.551 before the products were fused) and checks 0.6;
 * 1 ulp for subnormal results, which are rounded twice; with T alone the error reached 1 ulp). */
#include "population.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* 2^(j / 16) in two parts: the nearest double, then the nearest double to what it misses.  Sixteen
 * entries fit two AVX-512 registers, so a lookup is one permute, not a gather. */
static const double two_to_j16[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0,
};
static const double two_to_j16_lo[16] = {
    0x0p+0, 0x1.8a62e4adc610bp-54, -0x1.19041b9d78a76p-55, 0x1.9b07eb6c70573p-54,
    0x1.6f46ad23182e4p-55, 0x1.ada0911f09ebcp-55, 0x1.d4397afec42e2p-56, 0x1.6324c054647adp-54,
    -0x1.bdd3413b26456p-54, -0x1.41577ee04992fp-55, 0x1.6e9f156864b27p-54, 0x1.c7c46b071f2bep-56,
    0x1.7a1cd345dcc81p-54, 0x1.11065895048ddp-55, 0x1.2ed02d75b3707p-55, -0x1.e9c23179c2893p-54,
};

#define EXP_LOW (-1000.0)
#define EXP_INV_STEP 0x1.71547652b82fep+4    /* 16 / ln 2 */
#define EXP_STEP_HI 0x1.62e42fefa0000p-5     /* ln 2 / 16, its first 36 bits ... */
#define EXP_STEP_LO 0x1.cf79abc9e3b3ap-44    /* ... and the rest */
#define EXP_SHIFT 0x1.80000001p+52           /* 1.5 2^52 + 2^20: k + 2^20 in the low bits */
#define EXP_BIAS 1048576                     /* 2^20; k div 16 is then biased by 2^16 */
#define EXP_C2 0.5
#define EXP_C3 0x1.5555555555555p-3
#define EXP_C4 0x1.5555555555555p-5
#define EXP_C5 0x1.1111111111111p-7
#define EXP_C6 0x1.6c16c16c16c17p-10
#define EXP_C7 0x1.a01a01a01a01ap-13
/* The two exponent fields: with M = k div 16 + 2^16 and a = M >> 1, the factors are 2^(a - 2^15) and
 * 2^(M - a - 2^15), each exponent field that plus 1023. */
#define EXP_FIELD (1023 - 32768)

/* Every kernel's arithmetic, for one width: T its vector (or double), ADD, SUB, MUL, MAX its operations
 * and SET1 its broadcast.  One definition, so the kernels make the same operations in the same order
 * and agree to the bit.  EXP_CONSTANTS declares what EXP_STEPS reads; EXP_STEPS takes logw to
 * kd = k as a double, its bits kb (k + 2^20 in the low bits; garbage for a NaN, harmlessly) and
 * y = T[j] + (T'[j] + T[j] p(r)), given TABLES(kb, t, t_lo); x is clamped as MAXPD clamps (a NaN x
 * stays NaN). */
#define EXP_CONSTANTS(T, SET1)                                                                   \
  const T low = SET1(EXP_LOW), inv = SET1(EXP_INV_STEP), shift = SET1(EXP_SHIFT);                \
  const T hi = SET1(-EXP_STEP_HI), lo = SET1(-EXP_STEP_LO), c2 = SET1(EXP_C2), c3 = SET1(EXP_C3); \
  const T c4 = SET1(EXP_C4), c5 = SET1(EXP_C5), c6 = SET1(EXP_C6), c7 = SET1(EXP_C7)

#define EXP_STEPS(T, ADD, SUB, MUL, FMA, MAX, BITS, TABLES, logw, mx, kd, kb, y) \
  do {                                                                          \
    T x_ = MAX(low, SUB(logw, mx));                                             \
    kd = FMA(x_, inv, shift);                                                   \
    kb = BITS(kd);                                                              \
    kd = SUB(kd, shift);                                                        \
    T r_ = FMA(kd, lo, FMA(kd, hi, x_));                                        \
    T q_ = FMA(r_, c7, c6);                                                     \
    q_ = FMA(r_, q_, c5);                                                       \
    q_ = FMA(r_, q_, c4);                                                       \
    q_ = FMA(r_, q_, c3);                                                       \
    q_ = FMA(r_, q_, c2);                                                       \
    T p_ = FMA(MUL(r_, r_), q_, r_), t_, t_lo_;                                 \
    TABLES(kb, t_, t_lo_);                                                      \
    y = ADD(t_, FMA(t_, p_, t_lo_));                                            \
  } while (0)

#define S_ADD(a, b) ((a) + (b))
#define S_SUB(a, b) ((a) - (b))
#define S_MUL(a, b) ((a) * (b))
#define S_FMA(a, b, c) fma(a, b, c)
#define S_MAX(a, b) ((a) > (b) ? (a) : (b))
#define S_SET1(v) (v)
#define S_BITS(kd) (rt_bits_of(kd) - rt_bits_of(EXP_SHIFT) + EXP_BIAS)
#define S_TABLES(kb, t, t_lo) (t = two_to_j16[(kb) & 15], t_lo = two_to_j16_lo[(kb) & 15])

/* The scalar kernel, twice: fma() is the C library's call, which emulates the fused product where the
 * CPU has none (exact, but some 2 ns each), and one instruction where the code is built for a CPU
 * with FMA. */
#define EXP_SCALAR(one, loop, attributes)                                                            \
  attributes static inline double one(double logw, double mx) {                                     \
    EXP_CONSTANTS(double, S_SET1);                                                                  \
    double kd, y;                                                                                   \
    uint64_t kb;                                                                                    \
    EXP_STEPS(double, S_ADD, S_SUB, S_MUL, S_FMA, S_MAX, S_BITS, S_TABLES, logw, mx, kd, kb, y);    \
    (void)kd;                                                                                       \
    uint64_t big = kb >> 4, half = big >> 1; /* y 2^(k div 16) in two normal factors */             \
    double s1 = rt_double_of((half + EXP_FIELD) << 52), s2 = rt_double_of((big - half + EXP_FIELD) << 52); \
    return y * s1 * s2;                                                                             \
  }                                                                                                 \
  attributes static void loop(const double *logw, int64_t m, double mx, double *out) {              \
    for (int64_t i = 0; i < m; i++) out[i] = one(logw[i], mx);                                      \
  }
EXP_SCALAR(exp_one, exp_scalar, )
#if defined(__x86_64__)
EXP_SCALAR(exp_one_fma, exp_scalar_fma, __attribute__((target("fma"))))
#endif

#if defined(__x86_64__)
#define Y_BITS(kd) _mm256_sub_epi64(_mm256_castpd_si256(kd), unshift)
#define Y_TABLES(kb, t, t_lo)                                                      \
  do {                                                                             \
    __m256i j_ = _mm256_and_si256(kb, j_mask);                                     \
    t = _mm256_i64gather_pd(two_to_j16, j_, 8);                                    \
    t_lo = _mm256_i64gather_pd(two_to_j16_lo, j_, 8);                              \
  } while (0)

/* exp(lw - mx) for a vector of four. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256d exp4(__m256d lw, __m256d vmx) {
  EXP_CONSTANTS(__m256d, _mm256_set1_pd);
  const __m256i unshift = _mm256_set1_epi64x((int64_t)(rt_bits_of(EXP_SHIFT) - EXP_BIAS));
  const __m256i j_mask = _mm256_set1_epi64x(15), field = _mm256_set1_epi64x(EXP_FIELD);
  __m256d kd, y;
  __m256i kb;
  EXP_STEPS(__m256d, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, _mm256_fmadd_pd, _mm256_max_pd, Y_BITS, Y_TABLES,
            lw, vmx, kd, kb, y);
  __m256i big = _mm256_srli_epi64(kb, 4), half = _mm256_srli_epi64(big, 1);
  __m256d s1 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(half, field), 52));
  __m256d s2 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(_mm256_sub_epi64(big, half), field), 52));
  return _mm256_mul_pd(_mm256_mul_pd(y, s1), s2);
}

__attribute__((target("avx2,fma"))) static void exp_avx2(const double *logw, int64_t m, double mx, double *out) {
  const __m256d vmx = _mm256_set1_pd(mx);
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) _mm256_storeu_pd(out + i, exp4(_mm256_loadu_pd(logw + i), vmx));
  _mm256_zeroupper();
  exp_scalar_fma(logw + i, m - i, mx, out + i);
}

#define Z_BITS(kd) _mm512_sub_epi64(_mm512_castpd_si512(kd), unshift)
#define Z_TABLES(kb, t, t_lo) (t = _mm512_permutex2var_pd(t0, kb, t1), t_lo = _mm512_permutex2var_pd(l0, kb, l1))

/* exp(lw - mx) for a vector of eight. */
__attribute__((target("avx512f"), always_inline)) static inline __m512d exp8(__m512d lw, __m512d vmx) {
  EXP_CONSTANTS(__m512d, _mm512_set1_pd);
  const __m512d sixteenth = _mm512_set1_pd(0.0625);
  const __m512i unshift = _mm512_set1_epi64((int64_t)(rt_bits_of(EXP_SHIFT) - EXP_BIAS));
  /* the tables in two registers each: a lookup is one permute (of kb's low 4 bits), not a gather */
  const __m512d t0 = _mm512_loadu_pd(two_to_j16), t1 = _mm512_loadu_pd(two_to_j16 + 8);
  const __m512d l0 = _mm512_loadu_pd(two_to_j16_lo), l1 = _mm512_loadu_pd(two_to_j16_lo + 8);
  __m512d kd, y;
  __m512i kb;
  EXP_STEPS(__m512d, _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd, _mm512_fmadd_pd, _mm512_max_pd, Z_BITS, Z_TABLES,
            lw, vmx, kd, kb, y);
  /* y 2^(k div 16) rounded once, as the two products round: SCALEFPD, with k div 16 = floor(k / 16) */
  __m512d power = _mm512_roundscale_pd(_mm512_mul_pd(kd, sixteenth), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  return _mm512_scalef_pd(y, power);
}

__attribute__((target("avx512f"))) static void exp_avx512(const double *logw, int64_t m, double mx, double *out) {
  const __m512d vmx = _mm512_set1_pd(mx);
  int64_t i = 0;
  for (; i + 8 <= m; i += 8) _mm512_storeu_pd(out + i, exp8(_mm512_loadu_pd(logw + i), vmx));
  _mm256_zeroupper();
  exp_scalar_fma(logw + i, m - i, mx, out + i);
}
#endif

/* ------------------------------------------------------------ a block's sums ----------------- */
/* The sums of a run of exponentials e_0 .. e_{m-1} (rt_weigh_sums), in groups of eight slots from the
 * run's first.  In a group, the prefix p_l = (..(e_0 + e_1) + ..) + e_l is added up slot after slot;
 * the running sum of slot l is carry + p_l, and the carry becomes carry + p_7 (p of the group's last
 * slot), which is that slot's running sum.  So the carry, the run's sum, is its last running sum; the
 * running sums never decrease (each is a rounded sum of the one before it, or of the group's carry,
 * and a nonnegative number), as the offspring counts need; and the chain of dependent additions is
 * one a group, the groups' own chains overlapping: summed one slot after another, the additions'
 * latency was half the weigh pass.  The squares accumulate in eight lanes, lane l += e_l^2, added up
 * at the end as ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)).  Every kernel makes these operations in
 * this order. */
enum { GROUP = 8, CHUNK = 64 };

/* Inlined, so the AVX-512 kernel runs it in VEX encodings: legacy SSE code after AVX-512 code, the
 * upper halves of the registers not cleared, ran at a third of the speed. */
static inline __attribute__((always_inline)) void group_prefix(const double *e, int64_t m, int running, double *out,
                                                               double *carry) {
  double c = *carry;
  for (int64_t g = 0; g < m; g += GROUP) {
    int64_t k = m - g < GROUP ? m - g : GROUP;
    double p = e[g];
    out[g] = running ? c + p : p;
    for (int64_t l = 1; l < k; l++) {
      p += e[g + l];
      out[g + l] = running ? c + p : e[g + l];
    }
    c += p;
  }
  *carry = c;
}

/* The exponentials by the chosen kernel, a chunk at a time, then their sums. */
static void weigh_chunked(const double *logw, int64_t m, double mx, double *out, int running, double *carry,
                          double sq[GROUP]) {
  double e[CHUNK];
  for (int64_t c = 0; c < m; c += CHUNK) {
    int64_t k = m - c < CHUNK ? m - c : CHUNK;
    rt_exp_shifted(logw + c, k, mx, e);
    for (int64_t i = 0; i < k; i++) sq[i % GROUP] += e[i] * e[i];
    group_prefix(e, k, running, out + c, carry);
  }
}

#if defined(__x86_64__)
/* The 8 x 8 transpose of eight vectors: out[l] holds lane l of each of v[0..7], in order. */
__attribute__((target("avx512f"), always_inline)) static inline void transpose8(const __m512d v[GROUP],
                                                                                 __m512d out[GROUP]) {
  __m512d t[GROUP], u[GROUP];
  for (int j = 0; j < GROUP; j += 2) { /* pairs of rows: lanes (2i, 2i+1) of row j, j + 1 interleaved */
    t[j] = _mm512_unpacklo_pd(v[j], v[j + 1]);
    t[j + 1] = _mm512_unpackhi_pd(v[j], v[j + 1]);
  }
  for (int j = 0; j < GROUP; j += 4) { /* 128-bit parts 0 and 2, then 1 and 3, of four rows */
    u[j] = _mm512_shuffle_f64x2(t[j], t[j + 2], 0x88);
    u[j + 1] = _mm512_shuffle_f64x2(t[j + 1], t[j + 3], 0x88);
    u[j + 2] = _mm512_shuffle_f64x2(t[j], t[j + 2], 0xDD);
    u[j + 3] = _mm512_shuffle_f64x2(t[j + 1], t[j + 3], 0xDD);
  }
  for (int j = 0; j < 4; j++) {
    out[j] = _mm512_shuffle_f64x2(u[j], u[j + 4], 0x88);
    out[j + 4] = _mm512_shuffle_f64x2(u[j], u[j + 4], 0xDD);
  }
}

/* group_prefix's running sums of a full chunk (eight groups, e[g] the exponentials of group g), with
 * the groups side by side: transposed, the prefix p_l = p_{l-1} + e_l of every group is one vector
 * addition a slot, each lane adding up its group in group_prefix's order; the carries before each
 * group are added up one after another as there; the sums carry + p_l are transposed back.  The same
 * operations on the same numbers, so the same bits.  The walk's weigh pass at N = 10^5: 1.24 -> 1.13 ns
 * a particle-step (SIRENRT_PROFILE, 21 runs of each build), the scalar prefix's loads, additions and
 * stores a slot at a time. */
__attribute__((target("avx512f"), always_inline)) static inline void chunk_prefix(const __m512d e[GROUP],
                                                                                   double *out, double *carry) {
  __m512d p[GROUP], sums[GROUP];
  transpose8(e, p);
  for (int l = 1; l < GROUP; l++) p[l] = _mm512_add_pd(p[l - 1], p[l]);
  double total[GROUP], before[GROUP], c = *carry;
  _mm512_storeu_pd(total, p[GROUP - 1]);
  for (int g = 0; g < GROUP; g++) {
    before[g] = c;
    c += total[g];
  }
  *carry = c;
  const __m512d starts = _mm512_loadu_pd(before);
  for (int l = 0; l < GROUP; l++) p[l] = _mm512_add_pd(starts, p[l]);
  transpose8(p, sums);
  for (int g = 0; g < GROUP; g++) _mm512_storeu_pd(out + GROUP * g, sums[g]);
}

/* AVX-512: the exponentials and their squares a vector (a group) at a time. */
__attribute__((target("avx512f"))) static void weigh_avx512(const double *logw, int64_t m, double mx, double *out,
                                                            int running, double *carry, double sq[GROUP]) {
  const __m512d vmx = _mm512_set1_pd(mx);
  __m512d acc = _mm512_loadu_pd(sq);
  double e[CHUNK];
  for (int64_t c = 0; c < m; c += CHUNK) {
    int64_t k = m - c < CHUNK ? m - c : CHUNK;
    if (k == CHUNK && running) {
      __m512d v[GROUP];
      for (int g = 0; g < GROUP; g++) {
        v[g] = exp8(_mm512_loadu_pd(logw + c + GROUP * g), vmx);
        acc = _mm512_add_pd(acc, _mm512_mul_pd(v[g], v[g]));
      }
      chunk_prefix(v, out + c, carry);
      continue;
    }
    for (int64_t g = 0; g < k; g += GROUP) {
      __mmask8 in = k - g >= GROUP ? 0xFF : (__mmask8)((1u << (k - g)) - 1);
      __m512d v = _mm512_maskz_mov_pd(in, exp8(_mm512_maskz_loadu_pd(in, logw + c + g), vmx));
      acc = _mm512_add_pd(acc, _mm512_mul_pd(v, v));
      _mm512_storeu_pd(e + g, v);
    }
    group_prefix(e, k, running, out + c, carry);
  }
  _mm512_storeu_pd(sq, acc);
  _mm256_zeroupper();
}
#endif

/* ------------------------------------------------------------ the largest log weight --------- */
/* m = x > m ? x : m over the array, as MAXPD computes it lane by lane: a NaN never replaces m.  Many
 * running maxima, not one chain of compares (which was a third of the weigh pass, latency-bound): a
 * maximum is the same in any order, but for the sign of a zero (-0, +0 may come out either way), which
 * no use of it can tell apart (it is subtracted and exponentiated, or compared). */
static double max_scalar(const double *x, int64_t m) {
  double m0 = -INFINITY, m1 = -INFINITY, m2 = -INFINITY, m3 = -INFINITY;
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    m0 = x[i] > m0 ? x[i] : m0;
    m1 = x[i + 1] > m1 ? x[i + 1] : m1;
    m2 = x[i + 2] > m2 ? x[i + 2] : m2;
    m3 = x[i + 3] > m3 ? x[i + 3] : m3;
  }
  for (; i < m; i++) m0 = x[i] > m0 ? x[i] : m0;
  m0 = m1 > m0 ? m1 : m0;
  m2 = m3 > m2 ? m3 : m2;
  return m2 > m0 ? m2 : m0;
}

#if defined(__x86_64__)
/* One width's kernel: two running maxima of vectors of W slots, then their lanes and the tail. */
#define MAX_KERNEL(name, isa, T, W, SET1, LOAD, STORE, MAX)                                   \
  __attribute__((target(isa))) static double name(const double *x, int64_t m) {                \
    T m0 = SET1(-INFINITY), m1 = m0;                                                          \
    int64_t i = 0;                                                                            \
    for (; i + 2 * (W) <= m; i += 2 * (W)) {                                                  \
      m0 = MAX(LOAD(x + i), m0);                                                              \
      m1 = MAX(LOAD(x + i + (W)), m1);                                                        \
    }                                                                                         \
    double lanes[W];                                                                          \
    STORE(lanes, MAX(m1, m0));                                                                \
    _mm256_zeroupper();                                                                       \
    double rest = max_scalar(x + i, m - i);                                                   \
    for (int l = 0; l < (W); l++) rest = lanes[l] > rest ? lanes[l] : rest;                   \
    return rest;                                                                              \
  }
MAX_KERNEL(max_avx2, "avx2", __m256d, 4, _mm256_set1_pd, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_max_pd)
MAX_KERNEL(max_avx512, "avx512f", __m512d, 8, _mm512_set1_pd, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_max_pd)
#endif

/* rt_max_into: slot i's log weight into running maximum i mod RT_MAX_LANES, as MAXPD takes it; no
 * reduction, so a run of 64 slots costs a few vector compares, not the reduction and tail of a whole
 * block's (rt_max_of). */
static void max_into_scalar(const double *x, int64_t m, double acc[RT_MAX_LANES]) {
  for (int64_t i = 0; i < m; i++) acc[i % RT_MAX_LANES] = x[i] > acc[i % RT_MAX_LANES] ? x[i] : acc[i % RT_MAX_LANES];
}

#if defined(__x86_64__)
#define MAX_INTO_KERNEL(name, isa, T, W, LOAD, STORE, MAX)                                   \
  __attribute__((target(isa))) static void name(const double *x, int64_t m, double acc[RT_MAX_LANES]) { \
    enum { V = RT_MAX_LANES / (W) };                                                         \
    T a[V];                                                                                  \
    for (int v = 0; v < V; v++) a[v] = LOAD(acc + v * (W));                                  \
    int64_t i = 0;                                                                           \
    for (; i + RT_MAX_LANES <= m; i += RT_MAX_LANES)                                         \
      for (int v = 0; v < V; v++) a[v] = MAX(LOAD(x + i + v * (W)), a[v]);                   \
    for (int v = 0; v < V; v++) STORE(acc + v * (W), a[v]);                                  \
    _mm256_zeroupper();                                                                      \
    max_into_scalar(x + i, m - i, acc); /* i is a multiple of RT_MAX_LANES: the same lanes */ \
  }
MAX_INTO_KERNEL(max_into_avx2, "avx2", __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_max_pd)
MAX_INTO_KERNEL(max_into_avx512, "avx512f", __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_max_pd)
#endif

typedef void exp_fn(const double *logw, int64_t m, double mx, double *out);
typedef double max_fn(const double *x, int64_t m);
typedef void max_into_fn(const double *x, int64_t m, double acc[RT_MAX_LANES]);
typedef void weigh_fn(const double *logw, int64_t m, double mx, double *out, int running, double *carry,
                      double sq[GROUP]);
static exp_fn *exp_kernel = exp_scalar;
static max_fn *max_kernel = max_scalar;
static max_into_fn *max_into_kernel = max_into_scalar;
static weigh_fn *weigh_kernel = weigh_chunked;
static int exp_level = 0;

int rt_exp_kernel(int level) {
  if (level < 0) return exp_level;
  int best = rt_cpu_level();
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("fma")) best = 0; /* every kernel but the portable one fuses products */
#endif
  exp_level = level < best ? level : best;
  exp_kernel = exp_scalar;
  max_kernel = max_scalar;
  max_into_kernel = max_into_scalar;
  weigh_kernel = weigh_chunked;
#if defined(__x86_64__)
  if (exp_level == 1) exp_kernel = exp_scalar_fma;
  if (exp_level == 2) exp_kernel = exp_avx2, max_kernel = max_avx2, max_into_kernel = max_into_avx2;
  if (exp_level == 3)
    exp_kernel = exp_avx512, max_kernel = max_avx512, max_into_kernel = max_into_avx512, weigh_kernel = weigh_avx512;
#endif
  return exp_level;
}

/* The best kernel is chosen when the library loads, so no weigh pass races a first choice. */
__attribute__((constructor)) static void exp_setup(void) { rt_exp_kernel(3); }

void rt_exp_shifted(const double *logw, int64_t m, double mx, double *out) { exp_kernel(logw, m, mx, out); }

double rt_max_of(const double *x, int64_t m) { return max_kernel(x, m); }

void rt_max_into(const double *x, int64_t m, double acc[RT_MAX_LANES]) { max_into_kernel(x, m, acc); }

double rt_max_lanes(const double acc[RT_MAX_LANES]) {
  double m = acc[0];
  for (int l = 1; l < RT_MAX_LANES; l++) m = acc[l] > m ? acc[l] : m;
  return m;
}

void rt_weigh_sums(const double *logw, int64_t m, double mx, double *out, int running, double *sum, double *sum_sq) {
  double carry = 0.0, sq[GROUP] = {0.0};
  weigh_kernel(logw, m, mx, out, running, &carry, sq);
  *sum = carry;
  *sum_sq = ((sq[0] + sq[1]) + (sq[2] + sq[3])) + ((sq[4] + sq[5]) + (sq[6] + sq[7]));
}
