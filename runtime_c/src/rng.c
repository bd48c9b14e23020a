/* rng.c — primitive variates on top of the Philox streams in internal.h: many streams keyed at once
 * with SIMD, the standard normal (ziggurat, the hot path of every Gaussian model; its fast path is
 * inline in internal.h), the unit exponential and unbiased bounded integers. */
#include "internal.h"

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---------------------------------------------------------------- Philox on many counters ---- */
/* The kernels key up to RT_RNG_LANES streams (one batch) and compute their first blocks together, in
 * structure-of-arrays form: one 64-bit lane per counter with the 32-bit word in its low half.  The
 * unsigned 32x32->64 multiply of SSE2/AVX2 (pmuludq) reads exactly those low halves, so a round is two
 * multiplies, two shifts and four xors per vector, and the high halves may hold garbage until the
 * result is truncated.  The lanes are filled from registers, not from an array just written
 * (a vector load of fresh scalar stores stalls on store forwarding, which cost more than the rounds). */
typedef struct batch {
  rt_rng *first; /* lane l's stream is at (char *)first + l * stride and keys slot slot0 + l */
  size_t stride;
  uint64_t slot0;
  int m; /* lanes in use, 1..RT_RNG_LANES; the others are computed and dropped */
  uint64_t seed;
  uint32_t epoch, domain;
} batch;

/* Stores the keyed streams, given word w of lane l in out[w][l]: a whole rt_rng a lane, in the state
 * its first draw would leave (block 0 in buf, the counter at block 1).  Not inlined into the kernels:
 * compiled for AVX-512, this loop becomes scatters, which are slower than the rounds themselves. */
__attribute__((noinline)) static void batch_finish(const batch *b, const uint64_t out[4][RT_RNG_LANES]) {
  uint8_t *at = (uint8_t *)b->first;
  for (int l = 0; l < b->m; l++, at += b->stride) {
    rt_rng *s = (rt_rng *)(void *)at;
    rt_rng_init(s, b->seed, b->slot0 + (uint64_t)l, b->epoch, b->domain);
    for (int w = 0; w < 4; w++) s->buf[w] = (uint32_t)out[w][l];
    s->ctr[0] = 1;
    s->left = 4;
    rt_rng_renormal(s);
  }
}

/* The SIMD kernels store a full batch from their registers, ctr[0] to buf[3] of a stream in one
 * 32-byte store. */
_Static_assert(offsetof(rt_rng, buf) == offsetof(rt_rng, ctr) + 16 && sizeof(((rt_rng *)0)->buf) == 16,
               "ctr and buf are adjacent");

static void batch_scalar(const batch *b) {
  uint64_t out[4][RT_RNG_LANES];
  for (int l = 0; l < b->m; l++) {
    rt_rng s;
    rt_rng_init(&s, b->seed, b->slot0 + (uint64_t)l, b->epoch, b->domain);
    uint32_t o[4];
    rt_philox4x32_10(s.ctr, s.key, o);
    for (int w = 0; w < 4; w++) out[w][l] = o[w];
  }
  batch_finish(b, out);
}

#if defined(__x86_64__)
/* The key, the unread count and the ready normal (normals[l], rt_zig_fast of its first two words) of
 * each stream of a full batch, whose counter and first block a SIMD kernel stored from its registers. */
static inline void finish_keys(const batch *b, const double normals[RT_RNG_LANES]) {
  uint8_t *at = (uint8_t *)b->first;
  for (int l = 0; l < RT_RNG_LANES; l++, at += b->stride) {
    rt_rng *g = (rt_rng *)(void *)at;
    memcpy(g->key, &b->seed, sizeof b->seed);
    g->left = 4;
    g->normal = normals[l];
  }
}

#define PHILOX_ROUND(T, MUL, SRL, XOR, c0, c1, c2, c3, M0, M1, K0, K1) \
  do {                                                                 \
    T p0_ = MUL(c0, M0), p1_ = MUL(c2, M1);                            \
    c0 = XOR(XOR(SRL(p1_, 32), c1), K0);                               \
    c1 = p1_;                                                          \
    c2 = XOR(XOR(SRL(p0_, 32), c3), K1);                               \
    c3 = p0_;                                                          \
  } while (0)

/* SSE2 is part of x86-64: two counters per vector, four vectors per word. */
static void batch_sse2(const batch *b) {
  enum { V = RT_RNG_LANES / 2 };
  const __m128i m0 = _mm_set1_epi64x(0xD2511F53), m1 = _mm_set1_epi64x(0xCD9E8D57);
  const __m128i dom = _mm_set1_epi64x((int64_t)b->domain << 24), hi_mask = _mm_set1_epi64x(0xFFFFFF);
  __m128i c[4][V];
  for (int v = 0; v < V; v++) {
    __m128i s = _mm_add_epi64(_mm_set1_epi64x((int64_t)(b->slot0 + 2 * (uint64_t)v)), _mm_set_epi64x(1, 0));
    c[0][v] = _mm_setzero_si128();
    c[1][v] = s;
    c[2][v] = _mm_set1_epi64x(b->epoch);
    c[3][v] = _mm_or_si128(dom, _mm_and_si128(_mm_srli_epi64(s, 32), hi_mask));
  }
  uint32_t k0 = (uint32_t)b->seed, k1 = (uint32_t)(b->seed >> 32);
  for (int r = 0; r < 10; r++) {
    __m128i kk0 = _mm_set1_epi64x(k0), kk1 = _mm_set1_epi64x(k1);
    for (int v = 0; v < V; v++)
      PHILOX_ROUND(__m128i, _mm_mul_epu32, _mm_srli_epi64, _mm_xor_si128, c[0][v], c[1][v], c[2][v], c[3][v], m0,
                   m1, kk0, kk1);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  uint64_t out[4][RT_RNG_LANES];
  for (int w = 0; w < 4; w++)
    for (int v = 0; v < V; v++) _mm_storeu_si128((__m128i *)&out[w][2 * v], c[w][v]);
  batch_finish(b, out);
}

/* rt_zig_fast on four words.  AVX2 converts no 64-bit integers: the 53-bit uniform is converted in two
 * parts exact in a double's mantissa (2^52 + v, less 2^52), bits 32..63 and 11..31, whose sum is exact. */
__attribute__((target("avx2"))) static inline __m256d zig_fast_avx2(__m256i w) {
  const __m256i magic = _mm256_set1_epi64x(0x4330000000000000);
  const __m256d two52 = _mm256_castsi256_pd(magic);
  __m256i layer = _mm256_and_si256(w, _mm256_set1_epi64x(0xFF));
  __m256d hi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(w, 32), magic)), two52);
  __m256d lo = _mm256_sub_pd(
      _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(w, 11), _mm256_set1_epi64x(0x1FFFFF)),
                                          magic)),
      two52);
  __m256d u = _mm256_add_pd(_mm256_mul_pd(hi, _mm256_set1_pd(0x1.0p21)), lo);
  __m256d x = _mm256_mul_pd(u, _mm256_i64gather_pd(rt_zig_x_scaled, layer, 8));
  __m256d in = _mm256_cmp_pd(x, _mm256_i64gather_pd(rt_zig_x + 1, layer, 8), _CMP_LT_OQ);
  __m256i sign = _mm256_slli_epi64(_mm256_and_si256(w, _mm256_set1_epi64x(0x100)), 55);
  __m256d z = _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(x), sign));
  return _mm256_blendv_pd(_mm256_set1_pd(NAN), z, in);
}

/* AVX2: four counters per vector, two vectors per word (two independent chains hide the multiply's
 * latency). */
__attribute__((target("avx2"))) static void batch_avx2(const batch *b) {
  enum { V = RT_RNG_LANES / 4 };
  const __m256i m0 = _mm256_set1_epi64x(0xD2511F53), m1 = _mm256_set1_epi64x(0xCD9E8D57);
  const __m256i dom = _mm256_set1_epi64x((int64_t)b->domain << 24), hi_mask = _mm256_set1_epi64x(0xFFFFFF);
  __m256i c[4][V];
  for (int v = 0; v < V; v++) {
    __m256i s = _mm256_add_epi64(_mm256_set1_epi64x((int64_t)(b->slot0 + 4 * (uint64_t)v)),
                                 _mm256_set_epi64x(3, 2, 1, 0));
    c[0][v] = _mm256_setzero_si256();
    c[1][v] = s;
    c[2][v] = _mm256_set1_epi64x(b->epoch);
    c[3][v] = _mm256_or_si256(dom, _mm256_and_si256(_mm256_srli_epi64(s, 32), hi_mask));
  }
  uint32_t k0 = (uint32_t)b->seed, k1 = (uint32_t)(b->seed >> 32);
  for (int r = 0; r < 10; r++) {
    __m256i kk0 = _mm256_set1_epi64x(k0), kk1 = _mm256_set1_epi64x(k1);
    for (int v = 0; v < V; v++)
      PHILOX_ROUND(__m256i, _mm256_mul_epu32, _mm256_srli_epi64, _mm256_xor_si256, c[0][v], c[1][v], c[2][v],
                   c[3][v], m0, m1, kk0, kk1);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  if (b->m < RT_RNG_LANES) { /* a partial batch: the lanes past m must not be stored */
    uint64_t out[4][RT_RNG_LANES];
    for (int w = 0; w < 4; w++)
      for (int v = 0; v < V; v++) _mm256_storeu_si256((__m256i *)&out[w][4 * v], c[w][v]);
    _mm256_zeroupper(); /* gcc omits it here, and the SSE code after would pay for dirty upper halves */
    batch_finish(b, out);
    return;
  }
  /* A full batch is stored from the registers, as batch_avx512 does (a 4 x 4 transpose here). */
  const __m256i low = _mm256_set1_epi64x(0xFFFFFFFF), ctr23 = _mm256_set1_epi64x((int64_t)b->epoch);
  double normals[RT_RNG_LANES];
  for (int v = 0; v < V; v++)
    _mm256_storeu_pd(&normals[4 * v], zig_fast_avx2(_mm256_or_si256(_mm256_slli_epi64(c[0][v], 32),
                                                                    _mm256_and_si256(c[1][v], low))));
  uint8_t *at = (uint8_t *)b->first;
  for (int v = 0; v < V; v++) { /* the slots again: kept through the rounds, they would spill */
    __m256i s = _mm256_add_epi64(_mm256_set1_epi64x((int64_t)(b->slot0 + 4 * (uint64_t)v)),
                                 _mm256_set_epi64x(3, 2, 1, 0));
    __m256i hi = _mm256_or_si256(dom, _mm256_and_si256(_mm256_srli_epi64(s, 32), hi_mask));
    __m256i q0 = _mm256_or_si256(_mm256_set1_epi64x(1), _mm256_slli_epi64(s, 32));
    __m256i q1 = _mm256_or_si256(ctr23, _mm256_slli_epi64(hi, 32));
    __m256i q2 = _mm256_or_si256(_mm256_and_si256(c[0][v], low), _mm256_slli_epi64(c[1][v], 32));
    __m256i q3 = _mm256_or_si256(_mm256_and_si256(c[2][v], low), _mm256_slli_epi64(c[3][v], 32));
    __m256i t0 = _mm256_unpacklo_epi64(q0, q1), t1 = _mm256_unpackhi_epi64(q0, q1); /* lanes 0 2 | 1 3 */
    __m256i t2 = _mm256_unpacklo_epi64(q2, q3), t3 = _mm256_unpackhi_epi64(q2, q3);
    __m256i rows[4] = {_mm256_permute2x128_si256(t0, t2, 0x20), _mm256_permute2x128_si256(t1, t3, 0x20),
                       _mm256_permute2x128_si256(t0, t2, 0x31), _mm256_permute2x128_si256(t1, t3, 0x31)};
    for (int l = 0; l < 4; l++)
      _mm256_storeu_si256((__m256i *)(void *)(at + (size_t)(4 * v + l) * b->stride + offsetof(rt_rng, ctr)), rows[l]);
  }
  _mm256_zeroupper();
  finish_keys(b, normals);
}

/* rt_zig_fast on eight words. */
__attribute__((target("avx512f,avx512dq"))) static inline __m512d zig_fast_avx512(__m512i w) {
  __m512i layer = _mm512_and_si512(w, _mm512_set1_epi64(0xFF));
  __m512d x = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64(w, 11)), _mm512_i64gather_pd(layer, rt_zig_x_scaled, 8));
  __mmask8 in = _mm512_cmp_pd_mask(x, _mm512_i64gather_pd(layer, rt_zig_x + 1, 8), _CMP_LT_OQ);
  __m512i sign = _mm512_slli_epi64(_mm512_and_si512(w, _mm512_set1_epi64(0x100)), 55);
  return _mm512_mask_blend_pd(in, _mm512_set1_pd(NAN), _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), sign)));
}

/* AVX-512: eight counters per vector, the three-way xors in one ternary-logic op. */
__attribute__((target("avx512f,avx512dq"))) static void batch_avx512(const batch *b) {
  enum { V = RT_RNG_LANES / 8 };
  const __m512i m0 = _mm512_set1_epi64(0xD2511F53), m1 = _mm512_set1_epi64(0xCD9E8D57);
  const __m512i dom = _mm512_set1_epi64((int64_t)b->domain << 24), hi_mask = _mm512_set1_epi64(0xFFFFFF);
  __m512i c[4][V];
  for (int v = 0; v < V; v++) {
    __m512i s = _mm512_add_epi64(_mm512_set1_epi64((int64_t)(b->slot0 + 8 * (uint64_t)v)),
                                 _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    c[0][v] = _mm512_setzero_si512();
    c[1][v] = s;
    c[2][v] = _mm512_set1_epi64(b->epoch);
    c[3][v] = _mm512_or_si512(dom, _mm512_and_si512(_mm512_srli_epi64(s, 32), hi_mask));
  }
  uint32_t k0 = (uint32_t)b->seed, k1 = (uint32_t)(b->seed >> 32);
  for (int r = 0; r < 10; r++) {
    __m512i kk0 = _mm512_set1_epi64(k0), kk1 = _mm512_set1_epi64(k1);
    for (int v = 0; v < V; v++) {
      __m512i p0 = _mm512_mul_epu32(c[0][v], m0), p1 = _mm512_mul_epu32(c[2][v], m1);
      c[0][v] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), c[1][v], kk0, 0x96); /* a ^ b ^ c */
      c[1][v] = p1;
      c[2][v] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), c[3][v], kk1, 0x96);
      c[3][v] = p0;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  if (b->m < RT_RNG_LANES) { /* a partial batch: the lanes past m must not be stored */
    uint64_t out[4][RT_RNG_LANES];
    for (int w = 0; w < 4; w++)
      for (int v = 0; v < V; v++) _mm512_storeu_si512(&out[w][8 * v], c[w][v]);
    _mm256_zeroupper();
    batch_finish(b, out);
    return;
  }
  /* A full batch is stored from the registers: per lane, the 32 bytes from ctr[0] to buf[3] in one
   * store, after a 4 x 8 transpose of the words paired into quadwords, then key and left.  Storing
   * through an array and batch_finish costs more than the rounds. */
  const __m512i low = _mm512_set1_epi64(0xFFFFFFFF);
  const __m512i ctr23 = _mm512_set1_epi64((int64_t)b->epoch);
  const __m512i evens = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
  const __m512i odds = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
  double normals[RT_RNG_LANES];
  for (int v = 0; v < V; v++)
    _mm512_storeu_pd(&normals[8 * v], zig_fast_avx512(_mm512_or_si512(_mm512_slli_epi64(c[0][v], 32),
                                                                      _mm512_and_si512(c[1][v], low))));
  uint8_t *at = (uint8_t *)b->first;
  for (int v = 0; v < V; v++) { /* the slots again, as in batch_avx2 */
    __m512i s = _mm512_add_epi64(_mm512_set1_epi64((int64_t)(b->slot0 + 8 * (uint64_t)v)),
                                 _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    __m512i hi = _mm512_or_si512(dom, _mm512_and_si512(_mm512_srli_epi64(s, 32), hi_mask));
    __m512i q0 = _mm512_or_si512(_mm512_set1_epi64(1), _mm512_slli_epi64(s, 32));        /* ctr[0], ctr[1] */
    __m512i q1 = _mm512_or_si512(ctr23, _mm512_slli_epi64(hi, 32));                      /* ctr[2], ctr[3] */
    __m512i q2 = _mm512_or_si512(_mm512_and_si512(c[0][v], low), _mm512_slli_epi64(c[1][v], 32)); /* buf */
    __m512i q3 = _mm512_or_si512(_mm512_and_si512(c[2][v], low), _mm512_slli_epi64(c[3][v], 32));
    __m512i t0 = _mm512_unpacklo_epi64(q0, q1), t1 = _mm512_unpackhi_epi64(q0, q1); /* lanes 0 2 4 6 | 1 3 5 7 */
    __m512i t2 = _mm512_unpacklo_epi64(q2, q3), t3 = _mm512_unpackhi_epi64(q2, q3);
    __m512i rows[4] = {_mm512_permutex2var_epi64(t0, evens, t2), _mm512_permutex2var_epi64(t1, evens, t3),
                       _mm512_permutex2var_epi64(t0, odds, t2), _mm512_permutex2var_epi64(t1, odds, t3)};
    for (int r = 0; r < 4; r++) { /* rows[r]: lane `lane` in its low half, lane + 2 in its high half */
      int lane = (r & 1) + 4 * (r >> 1);
      uint8_t *lo_at = at + (size_t)(8 * v + lane) * b->stride, *hi_at = lo_at + 2 * b->stride;
      _mm256_storeu_si256((__m256i *)(void *)(lo_at + offsetof(rt_rng, ctr)), _mm512_castsi512_si256(rows[r]));
      _mm256_storeu_si256((__m256i *)(void *)(hi_at + offsetof(rt_rng, ctr)), _mm512_extracti64x4_epi64(rows[r], 1));
    }
  }
  _mm256_zeroupper();
  finish_keys(b, normals);
}
#endif

typedef void (*batch_kernel)(const batch *b);
static batch_kernel kernel = batch_scalar;
static int kernel_level = 0;

#ifndef RT_RNG_MAX_LEVEL
#define RT_RNG_MAX_LEVEL 3 /* -DRT_RNG_MAX_LEVEL=n builds a runtime that uses no kernel above n */
#endif

/* AVX-512 only where it does not slow the core down: Skylake and Cascade Lake servers lower their clock
 * for 512-bit multiplies, for the whole filter around them, and lack VBMI2, which the CPUs without
 * that penalty (Ice Lake and later, Zen 4) have.  There it beats AVX2 by about 4% of a walk step. */
static int best_level(void) {
  int best = rt_cpu_level();
#if defined(__x86_64__)
  if (best == 3 && !(__builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("avx512dq"))) best = __builtin_cpu_supports("avx2") ? 2 : 1;
#endif
  return best < RT_RNG_MAX_LEVEL ? best : RT_RNG_MAX_LEVEL;
}

int rt_philox_kernel(int level) {
  if (level < 0) return kernel_level;
  int best = best_level();
  if (level > best) level = best;
  kernel_level = level;
  kernel = batch_scalar;
#if defined(__x86_64__)
  if (level == 1) kernel = batch_sse2;
  if (level == 2) kernel = batch_avx2;
  if (level == 3) kernel = batch_avx512;
#endif
  return level;
}

void rt_rng_key_run(rt_rng *first, size_t stride, uint64_t slot0, int64_t n, uint64_t seed, uint32_t epoch,
                    uint32_t domain) {
  for (int64_t base = 0; base < n; base += RT_RNG_LANES) {
    batch b = {(rt_rng *)(void *)((uint8_t *)first + (size_t)base * stride), stride, slot0 + (uint64_t)base,
               n - base < RT_RNG_LANES ? (int)(n - base) : RT_RNG_LANES, seed, epoch, domain};
    kernel(&b);
  }
}

/* ---------------------------------------------------------------- ziggurat normal ------------ */
/* Ziggurat for exp(-x^2/2) with 256 layers of equal area V (Marsaglia & Tsang 2000).
 * zx[i] is the right edge of layer i; layer 0 is the base strip of width V/f(R) that also stands for
 * the tail beyond R; zx[256] = 0 is the top.  zf[i] = f(zx[i]). */
#define ZIG_R 3.6541528853610088
#define ZIG_V 0.00492867323399

double rt_zig_x[RT_ZIG_LAYERS + 1];
double rt_zig_x_scaled[RT_ZIG_LAYERS]; /* zx[i] * 2^-53: turns 53 random bits into a point of layer i */
/* The same tables under their exported names, for generated code (sirenrt.h, "Streams"); the runtime
 * reads the hidden ones, which it addresses directly rather than through the GOT. */
_Static_assert(RT_ZIG_LAYERS == 256, "sirenrt.h declares 256 layers");
extern double sirenrt_zig_x[RT_ZIG_LAYERS + 1] __attribute__((alias("rt_zig_x")));
extern double sirenrt_zig_x_scaled[RT_ZIG_LAYERS] __attribute__((alias("rt_zig_x_scaled")));
static double zf[RT_ZIG_LAYERS + 1];
#define zx rt_zig_x

/* Tables are built, and the Philox kernel chosen, when the library is loaded, so the fast paths have no
 * "ready?" branch and concurrent first use cannot race. */
__attribute__((constructor)) static void rng_setup(void) {
  double f = exp(-0.5 * ZIG_R * ZIG_R);
  zx[0] = ZIG_V / f;
  zx[1] = ZIG_R;
  zf[0] = 0.0; /* unused: layer 0 accepts below R and otherwise samples the tail */
  zf[1] = f;
  for (int i = 2; i < RT_ZIG_LAYERS; i++) {
    zx[i] = sqrt(-2.0 * log(ZIG_V / zx[i - 1] + zf[i - 1]));
    zf[i] = exp(-0.5 * zx[i] * zx[i]);
  }
  zx[RT_ZIG_LAYERS] = 0.0;
  zf[RT_ZIG_LAYERS] = 1.0;
  for (int i = 0; i < RT_ZIG_LAYERS; i++) rt_zig_x_scaled[i] = zx[i] * 0x1.0p-53;
  rt_philox_kernel(best_level());
}

static double normal_tail(rt_rng *g) {
  /* Marsaglia's tail method: exact for x > R. */
  for (;;) {
    double x = -log(rt_uniform_pos(g)) / ZIG_R;
    double y = -log(rt_uniform_pos(g));
    if (2.0 * y >= x * x) return ZIG_R + x;
  }
}

double rt_normal_slow(rt_rng *g) {
  for (;;) {
    /* One 64-bit word gives the layer (bits 0..7), the sign (bit 8) and a 53-bit uniform (11..63). */
    uint64_t r = rt_next_u64(g);
    int i = (int)(r & 0xFF);
    double x = (double)(r >> 11) * rt_zig_x_scaled[i];
    if (x < zx[i + 1]) return rt_with_sign(x, r); /* inside the rectangle fully under the curve */
    if (i == 0) return rt_with_sign(normal_tail(g), r);
    double y = zf[i] + rt_uniform(g) * (zf[i + 1] - zf[i]);
    if (y < exp(-0.5 * x * x)) return rt_with_sign(x, r);
  }
}

double rt_exponential(rt_rng *g) { return -log(rt_uniform_pos(g)); }

uint64_t rt_below(rt_rng *g, uint64_t m) {
  /* Lemire's multiply-shift with rejection: exactly uniform, usually one draw. */
  uint64_t x = rt_next_u64(g);
  __uint128_t prod = (__uint128_t)x * m;
  uint64_t low = (uint64_t)prod;
  if (low < m) {
    uint64_t threshold = (0 - m) % m;
    while (low < threshold) {
      x = rt_next_u64(g);
      prod = (__uint128_t)x * m;
      low = (uint64_t)prod;
    }
  }
  return (uint64_t)(prod >> 64);
}
