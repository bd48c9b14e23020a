/* rng.c — the streams' blocks (ARS-7, base.h), many streams keyed at once with AES-NI or VAES, the standard normal (ziggurat, the hot path of every Gaussian model; its fast path is
 * inline in base.h), the unit exponential and unbiased bounded integers. */
#include "base.h"

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---------------------------------------------------------------- ARS-7 ------------------------ */
/* A block is ARS (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11)
 * of the 128-bit counter under the key (seed, 0): the counter xor the key, then seven AES rounds (six
 * full, the last without MixColumns) whose round keys add two 64-bit Weyl constants to the key once
 * per round.  Seven is Random123's default, a wide margin over the five rounds past which its authors
 * know no statistical flaw (TestU01's BigCrush on many streams).  AES-NI computes a round in one
 * instruction, VAES four at once: a block costs a fraction of a Philox4x32-10 block (ten rounds of two
 * 32x32->64 multiplies), which the population paid for every particle at every step.  Where the CPU
 * has no AES instructions the rounds are computed from the S-box, with the same words. */
enum { ARS_ROUNDS = 7 };
static const uint64_t WEYL_LO = 0x9E3779B97F4A7C15ull, WEYL_HI = 0xBB67AE8584CAA73Bull;

static uint8_t sbox[256]; /* AES's S-box, built when the library loads (rng_setup) */

static uint8_t gf_double(uint8_t a) { return (uint8_t)(a << 1 ^ (a & 0x80 ? 0x1B : 0)); }

static uint8_t gf_mul(uint8_t a, uint8_t b) {
  uint8_t p = 0;
  for (; b; b >>= 1, a = gf_double(a))
    if (b & 1) p ^= a;
  return p;
}

/* The multiplicative inverse in GF(2^8) (a^254), then AES's affine map. */
static void build_sbox(void) {
  for (int x = 0; x < 256; x++) {
    uint8_t inv = 1, a = (uint8_t)x;
    for (int e = 254; e; e >>= 1, a = gf_mul(a, a))
      if (e & 1) inv = gf_mul(inv, a);
    uint8_t y = inv;
    for (int r = 1; r <= 4; r++) y ^= (uint8_t)(inv << r | inv >> (8 - r));
    sbox[x] = y ^ 0x63;
  }
}

/* One AES encryption round on state s (byte i is row i % 4 of column i / 4, the order of AES-NI's
 * register bytes): SubBytes, ShiftRows, MixColumns unless last, then the round key. */
void rt_aes_round_soft(uint8_t s[16], const uint8_t key[16], int last) {
  uint8_t t[16];
  for (int c = 0; c < 4; c++)
    for (int r = 0; r < 4; r++) t[r + 4 * c] = sbox[s[r + 4 * ((c + r) & 3)]];
  for (int c = 0; c < 4 && !last; c++) {
    uint8_t *a = &t[4 * c], a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], all = a0 ^ a1 ^ a2 ^ a3;
    a[0] ^= all ^ gf_double(a0 ^ a1);
    a[1] ^= all ^ gf_double(a1 ^ a2);
    a[2] ^= all ^ gf_double(a2 ^ a3);
    a[3] ^= all ^ gf_double(a3 ^ a0);
  }
  for (int i = 0; i < 16; i++) s[i] = t[i] ^ key[i];
}

static void put_words(uint8_t out[16], uint64_t lo, uint64_t hi) {
  for (int i = 0; i < 8; i++) {
    out[i] = (uint8_t)(lo >> 8 * i);
    out[8 + i] = (uint8_t)(hi >> 8 * i);
  }
}

static void ars_soft(const uint32_t ctr[4], uint64_t seed, uint32_t out[4]) {
  uint8_t s[16], k[16];
  uint64_t klo = seed, khi = 0;
  put_words(s, (uint64_t)ctr[1] << 32 | ctr[0], (uint64_t)ctr[3] << 32 | ctr[2]);
  put_words(k, klo, khi);
  for (int i = 0; i < 16; i++) s[i] ^= k[i];
  for (int r = 1; r <= ARS_ROUNDS; r++) {
    klo += WEYL_LO;
    khi += WEYL_HI;
    put_words(k, klo, khi);
    rt_aes_round_soft(s, k, r == ARS_ROUNDS);
  }
  for (int w = 0; w < 4; w++)
    out[w] = (uint32_t)s[4 * w] | (uint32_t)s[4 * w + 1] << 8 | (uint32_t)s[4 * w + 2] << 16 | (uint32_t)s[4 * w + 3] << 24;
}

#if defined(__x86_64__)
/* The round keys of a seed, for the AES-NI and VAES kernels. */
__attribute__((target("aes"))) static void round_keys(uint64_t seed, __m128i k[ARS_ROUNDS + 1]) {
  const __m128i weyl = _mm_set_epi64x((int64_t)WEYL_HI, (int64_t)WEYL_LO);
  k[0] = _mm_set_epi64x(0, (int64_t)seed);
  for (int r = 1; r <= ARS_ROUNDS; r++) k[r] = _mm_add_epi64(k[r - 1], weyl);
}

__attribute__((target("aes"))) static inline __m128i ars_aesni(__m128i v, const __m128i k[ARS_ROUNDS + 1]) {
  v = _mm_xor_si128(v, k[0]);
  for (int r = 1; r < ARS_ROUNDS; r++) v = _mm_aesenc_si128(v, k[r]);
  return _mm_aesenclast_si128(v, k[ARS_ROUNDS]);
}

__attribute__((target("aes"))) static void ars_one_aesni(const uint32_t ctr[4], uint64_t seed, uint32_t out[4]) {
  __m128i k[ARS_ROUNDS + 1];
  round_keys(seed, k);
  _mm_storeu_si128((__m128i *)(void *)out, ars_aesni(_mm_loadu_si128((const __m128i *)(const void *)ctr), k));
}

/* The counter is read and written whole: a counter whose first word alone was stored just before
 * (as `ctr[0]++` did after each refill) cannot be read back by one 16-byte load until that store
 * reaches the cache, a stall that made some runs of a stream's refills over three times slower. */
__attribute__((target("aes"))) static void refill_aesni(rt_rng *g) {
  __m128i k[ARS_ROUNDS + 1];
  round_keys((uint64_t)g->key[1] << 32 | g->key[0], k);
  __m128i c = _mm_loadu_si128((const __m128i *)(const void *)g->ctr);
  _mm_storeu_si128((__m128i *)(void *)g->buf, ars_aesni(c, k));
  _mm_storeu_si128((__m128i *)(void *)g->ctr, _mm_add_epi32(c, _mm_cvtsi32_si128(1)));
}
#endif

/* A block of one stream: with AES-NI where the CPU has it. */
static void (*ars_one)(const uint32_t ctr[4], uint64_t seed, uint32_t out[4]) = ars_soft;

void rt_ars_block(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  ars_one(ctr, (uint64_t)key[1] << 32 | key[0], out);
}

static void refill_soft(rt_rng *g) {
  ars_soft(g->ctr, (uint64_t)g->key[1] << 32 | g->key[0], g->buf);
  g->ctr[0]++;
}

/* A stream's next block (base.h, rt_next_u32). */
static void (*refill_one)(rt_rng *g) = refill_soft;

void rt_rng_refill(rt_rng *g) { refill_one(g); }

/* ---------------------------------------------------------------- many streams at once ------- */
/* The kernels key a batch of streams: each stream as rt_rng_init leaves it, with its first block
 * computed (ctr[0] = 1, left = 4) and its ready normal (sirenrt.h).  The vector kernels take them
 * RT_RNG_LANES at a time, the round keys and constants made once for the whole batch: a call per
 * RT_RNG_LANES streams made them again each time, and keying the walk's runs of 64 lanes took 1.62
 * ns a stream where one call for the run takes 1.31 (a scratch benchmark of rt_rng_rekey_run, best
 * of 30 passes over 10^5 slots). */
enum { RT_KEY_BATCH = 1 << 16 }; /* the most streams one kernel call keys */
typedef struct batch {
  rt_rng *first; /* lane l's stream is at (char *)first + l * stride and keys slot slot0 + l */
  size_t stride;
  uint64_t slot0;
  int m; /* lanes in use, 1..RT_KEY_BATCH */
  uint64_t seed;
  uint32_t epoch, domain;
  int has_key; /* the streams hold the seed as their key already: a kernel may leave it */
} batch;

static inline rt_rng *lane_of(const batch *b, int l) { return (rt_rng *)(void *)((uint8_t *)b->first + (size_t)l * b->stride); }

/* One lane at a time, each block by ars_one. */
static void batch_one(const batch *b) {
  for (int l = 0; l < b->m; l++) {
    rt_rng *s = lane_of(b, l);
    rt_rng_init(s, b->seed, b->slot0 + (uint64_t)l, b->epoch, b->domain);
    ars_one(s->ctr, b->seed, s->buf);
    s->ctr[0] = 1;
    s->left = 4;
    rt_rng_renormal(s);
  }
}

#if defined(__x86_64__)
/* The counter of block 0 of slot's stream (rt_rng_init's words), made in a register: one stored
 * field at a time and read back as a whole costs a failed store forward a lane. */
static inline __m128i block0_counter(const batch *b, uint64_t slot) {
  return _mm_set_epi32((int)rt_rng_ctr_high(slot, b->domain), (int)b->epoch, (int)(uint32_t)slot, 0);
}

/* A keyed stream's fields past its key, from its counter c (block 0) and that block x: ctr (block 1
 * next), buf, left = 4 with its padding 0, and the ready normal. */
__attribute__((target("aes"))) static inline void store_keyed(uint8_t *s, __m128i c, __m128i x) {
  _mm_storeu_si128((__m128i *)(void *)(s + offsetof(rt_rng, ctr)), _mm_or_si128(c, _mm_cvtsi32_si128(1)));
  _mm_storeu_si128((__m128i *)(void *)(s + offsetof(rt_rng, buf)), x);
  uint64_t low = (uint64_t)_mm_cvtsi128_si64(x), left = 4; /* buf[1] << 32 | buf[0] */
  double z = rt_zig_fast(low << 32 | low >> 32);
  memcpy(s + offsetof(rt_rng, left), &left, sizeof left);
  memcpy(s + offsetof(rt_rng, normal), &z, sizeof z);
}

/* AES-NI: four lanes' blocks at a time, whose rounds overlap in the pipeline. */
__attribute__((target("aes"))) static void batch_aesni(const batch *b) {
  enum { G = 4 };
  __m128i k[ARS_ROUNDS + 1];
  round_keys(b->seed, k);
  const uint64_t seed = b->seed;
  const int m = b->m, has_key = b->has_key;
  for (int l0 = 0; l0 < m; l0 += G) {
    __m128i c[G], x[G];
    for (int j = 0; j < G; j++) {
      c[j] = block0_counter(b, b->slot0 + (uint64_t)(l0 + j));
      x[j] = _mm_xor_si128(c[j], k[0]);
    }
    for (int r = 1; r < ARS_ROUNDS; r++)
      for (int j = 0; j < G; j++) x[j] = _mm_aesenc_si128(x[j], k[r]);
    for (int j = 0; j < G; j++) x[j] = _mm_aesenclast_si128(x[j], k[ARS_ROUNDS]);
    for (int j = 0; j < G && l0 + j < m; j++) {
      uint8_t *s = (uint8_t *)lane_of(b, l0 + j);
      store_keyed(s, c[j], x[j]);
      if (!has_key) memcpy(s + offsetof(rt_rng, key), &seed, sizeof seed);
    }
  }
}

/* What the vector kernels share: when the batch's slots share their high word (unless the batch
 * crosses a multiple of 2^32), its groups of RT_RNG_LANES are keyed from registers, each lane's
 * counter the first lane's (block0_counter) plus its offset, and the lanes past the last full group
 * by batch_aesni, as is a batch whose slots cross a high word; a group's lane addresses, made once
 * (*b might be read again after every store through them); the key, unless the streams hold it
 * already. */
static inline int vector_lanes(const batch *b) {
  return (uint32_t)b->slot0 <= UINT32_MAX - (uint32_t)(b->m - 1) ? b->m - b->m % RT_RNG_LANES : 0;
}

/* Lanes [from, m) of b, by batch_aesni. */
static void key_rest(const batch *b, int from) {
  if (from >= b->m) return;
  batch rest = *b;
  rest.first = lane_of(b, from);
  rest.slot0 = b->slot0 + (uint64_t)from;
  rest.m = b->m - from;
  batch_aesni(&rest);
}

static inline void lane_addresses(const batch *b, int g, uint8_t *lane[RT_RNG_LANES]) {
  for (int l = 0; l < RT_RNG_LANES; l++) lane[l] = (uint8_t *)lane_of(b, g + l);
}

static inline void store_keys(const batch *b, uint8_t *const lane[RT_RNG_LANES]) {
  if (!b->has_key)
    for (int l = 0; l < RT_RNG_LANES; l++) memcpy(lane[l] + offsetof(rt_rng, key), &b->seed, sizeof b->seed);
}

/* rt_zig_fast on four words, with AVX2 (which converts no 64-bit integer to a double: the 53-bit
 * uniform is made exactly from its two halves, as 2^84 + high 2^32 and 2^52 + low). */
__attribute__((target("avx2"))) static inline __m256d zig_fast_avx2(__m256i w) {
  __m256i layer = _mm256_and_si256(w, _mm256_set1_epi64x(0xFF)), u = _mm256_srli_epi64(w, 11);
  const __m256i exp84 = _mm256_set1_epi64x(0x4530000000000000), exp52 = _mm256_set1_epi64x(0x4330000000000000);
  __m256d high = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(u, 32), exp84)),
                               _mm256_set1_pd(0x1.0p84 + 0x1.0p52));
  __m256d low = _mm256_castsi256_pd(_mm256_blend_epi32(u, exp52, 0xAA));
  __m256d x = _mm256_mul_pd(_mm256_add_pd(high, low), _mm256_i64gather_pd(rt_zig_x_scaled, layer, 8));
  __m256d in = _mm256_cmp_pd(x, _mm256_i64gather_pd(rt_zig_x + 1, layer, 8), _CMP_LT_OQ);
  __m256i sign = _mm256_slli_epi64(_mm256_and_si256(w, _mm256_set1_epi64x(0x100)), 55);
  __m256d signed_x = _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(x), sign));
  return _mm256_blendv_pd(_mm256_set1_pd(NAN), signed_x, in);
}

/* VAES on AVX2: two blocks a register, the ready normals four at a time.  Each lane is keyed with
 * two stores, as by the AVX-512 kernel below (ctr and buf; left, its padding and the normal). */
__attribute__((target("avx2,vaes,aes"))) static void batch_vaes256(const batch *b) {
  enum { V = RT_RNG_LANES / 2 };
  int full = vector_lanes(b);
  if (!full) { /* (the AES-NI kernel makes its own round keys) */
    batch_aesni(b);
    return;
  }
  __m128i k[ARS_ROUNDS + 1];
  round_keys(b->seed, k);
  __m256i rk[ARS_ROUNDS + 1];
  for (int r = 0; r <= ARS_ROUNDS; r++) rk[r] = _mm256_broadcastsi128_si256(k[r]);
  const __m256i base0 = _mm256_broadcastsi128_si256(block0_counter(b, b->slot0));
  const __m256i one = _mm256_set_epi32(0, 0, 0, 1, 0, 0, 0, 1);
  const __m256d left = _mm256_castsi256_pd(_mm256_set1_epi64x(4));
  for (int g = 0; g < full; g += RT_RNG_LANES) {
    uint8_t *lane[RT_RNG_LANES];
    lane_addresses(b, g, lane);
    const __m256i base = _mm256_add_epi32(base0, _mm256_set_epi32(0, 0, g, 0, 0, 0, g, 0));
    __m256i ctr[V], x[V];
    for (int v = 0; v < V; v++) {
      ctr[v] = _mm256_add_epi32(base, _mm256_set_epi32(0, 0, 2 * v + 1, 0, 0, 0, 2 * v, 0));
      x[v] = _mm256_xor_si256(ctr[v], rk[0]);
    }
    for (int r = 1; r < ARS_ROUNDS; r++)
      for (int v = 0; v < V; v++) x[v] = _mm256_aesenc_epi128(x[v], rk[r]);
    for (int v = 0; v < V; v++) x[v] = _mm256_aesenclast_epi128(x[v], rk[ARS_ROUNDS]);
    for (int v = 0; v < V; v++) { /* lanes 2v and 2v + 1: ctr then buf each */
      __m256i c = _mm256_or_si256(ctr[v], one);
      _mm256_storeu_si256((__m256i *)(void *)(lane[2 * v] + offsetof(rt_rng, ctr)),
                          _mm256_permute2x128_si256(c, x[v], 0x20));
      _mm256_storeu_si256((__m256i *)(void *)(lane[2 * v + 1] + offsetof(rt_rng, ctr)),
                          _mm256_permute2x128_si256(c, x[v], 0x31));
    }
    /* Word buf[0] << 32 | buf[1] of each lane is its block's low quadword with its halves swapped;
     * lanes 2v, 2v + 1, 2v + 2, 2v + 3 in order after the unpack's cross. */
    for (int v = 0; v < V; v += 2) {
      __m256i lows = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(x[v], x[v + 1]), _MM_SHUFFLE(3, 1, 2, 0));
      __m256d normals = zig_fast_avx2(_mm256_shuffle_epi32(lows, _MM_SHUFFLE(2, 3, 0, 1)));
      __m256d pair[2] = {_mm256_unpacklo_pd(left, normals), _mm256_unpackhi_pd(left, normals)};
      for (int odd = 0; odd < 2; odd++) { /* pair[odd] holds lanes 2v + odd (low half) and 2v + 2 + odd */
        double *low = (double *)(void *)(lane[2 * v + odd] + offsetof(rt_rng, left));
        double *high = (double *)(void *)(lane[2 * v + 2 + odd] + offsetof(rt_rng, left));
        _mm_storeu_pd(low, _mm256_castpd256_pd128(pair[odd]));
        _mm_storeu_pd(high, _mm256_extractf128_pd(pair[odd], 1));
      }
    }
    store_keys(b, lane);
  }
  _mm256_zeroupper();
  key_rest(b, full);
}

/* rt_zig_fast on eight words. */
__attribute__((target("avx512f,avx512dq"))) static inline __m512d zig_fast_avx512(__m512i w) {
  __m512i layer = _mm512_and_si512(w, _mm512_set1_epi64(0xFF));
  __m512d x = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64(w, 11)), _mm512_i64gather_pd(layer, rt_zig_x_scaled, 8));
  __mmask8 in = _mm512_cmp_pd_mask(x, _mm512_i64gather_pd(layer, rt_zig_x + 1, 8), _CMP_LT_OQ);
  __m512i sign = _mm512_slli_epi64(_mm512_and_si512(w, _mm512_set1_epi64(0x100)), 55);
  return _mm512_mask_blend_pd(in, _mm512_set1_pd(NAN), _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), sign)));
}

/* VAES on AVX-512: four blocks a register.  Two stores a lane: ctr and buf (32 bytes), then left
 * (with the padding after it, zero) and the ready normal (16 bytes).  A store a field cost about
 * 0.8 ns a stream more (keyed 16 at a time in L1). */
__attribute__((target("avx512f,avx512dq,vaes,aes"))) static void batch_vaes512(const batch *b) {
  enum { V = RT_RNG_LANES / 4 };
  int full = vector_lanes(b);
  if (!full) { /* (the AES-NI kernel makes its own round keys) */
    batch_aesni(b);
    return;
  }
  __m128i k[ARS_ROUNDS + 1];
  round_keys(b->seed, k);
  __m512i rk[ARS_ROUNDS + 1];
  for (int r = 0; r <= ARS_ROUNDS; r++) rk[r] = _mm512_broadcast_i32x4(k[r]);
  const __m512i base0 = _mm512_broadcast_i32x4(block0_counter(b, b->slot0));
  const __m512i first = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0), second = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
  const __m512i one = _mm512_set_epi32(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1);
  const __m512i low_quads = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  const __m512d left = _mm512_castsi512_pd(_mm512_set1_epi64(4));
  for (int g = 0; g < full; g += RT_RNG_LANES) {
    uint8_t *lane[RT_RNG_LANES];
    lane_addresses(b, g, lane);
    const __m512i base = _mm512_add_epi32(base0, _mm512_set_epi32(0, 0, g, 0, 0, 0, g, 0, 0, 0, g, 0, 0, 0, g, 0));
    __m512i ctr[V], x[V];
    for (int v = 0; v < V; v++) {
      int s = 4 * v;
      ctr[v] = _mm512_add_epi32(base, _mm512_set_epi32(0, 0, s + 3, 0, 0, 0, s + 2, 0, 0, 0, s + 1, 0, 0, 0, s, 0));
      x[v] = _mm512_xor_si512(ctr[v], rk[0]);
    }
    for (int r = 1; r < ARS_ROUNDS; r++)
      for (int v = 0; v < V; v++) x[v] = _mm512_aesenc_epi128(x[v], rk[r]);
    for (int v = 0; v < V; v++) x[v] = _mm512_aesenclast_epi128(x[v], rk[ARS_ROUNDS]);
    for (int v = 0; v < V; v++) {
      __m512i c = _mm512_or_si512(ctr[v], one); /* the counter past block 0 */
      __m512i pairs[2] = {_mm512_permutex2var_epi64(c, first, x[v]), _mm512_permutex2var_epi64(c, second, x[v])};
      for (int h = 0; h < 2; h++) { /* lanes 4v + 2h and 4v + 2h + 1: ctr then buf each */
        _mm256_storeu_si256((__m256i *)(void *)(lane[4 * v + 2 * h] + offsetof(rt_rng, ctr)),
                            _mm512_castsi512_si256(pairs[h]));
        _mm256_storeu_si256((__m256i *)(void *)(lane[4 * v + 2 * h + 1] + offsetof(rt_rng, ctr)),
                            _mm512_extracti64x4_epi64(pairs[h], 1));
      }
    }
    /* The ready normals: word buf[0] << 32 | buf[1] of each lane is its block's low quadword rotated.
     * Paired with left = 4 (its padding 0) lane by lane: the unpacks' 128-bit parts are lanes 2j, 2j + 1. */
    for (int v = 0; v < V; v += 2) {
      __m512d normals = zig_fast_avx512(_mm512_ror_epi64(_mm512_permutex2var_epi64(x[v], low_quads, x[v + 1]), 32));
      __m512d pair[2] = {_mm512_unpacklo_pd(left, normals), _mm512_unpackhi_pd(left, normals)};
      for (int j = 0; j < 4; j++)
        for (int odd = 0; odd < 2; odd++) {
          __m128d part = j == 0 ? _mm512_castpd512_pd128(pair[odd]) : j == 1 ? _mm512_extractf64x2_pd(pair[odd], 1)
                         : j == 2 ? _mm512_extractf64x2_pd(pair[odd], 2) : _mm512_extractf64x2_pd(pair[odd], 3);
          _mm_storeu_pd((double *)(void *)(lane[4 * v + 2 * j + odd] + offsetof(rt_rng, left)), part);
        }
    }
    store_keys(b, lane);
  }
  _mm256_zeroupper();
  key_rest(b, full);
}
#endif

/* The streams' layout the kernels store: ctr, then buf, 32 bytes in all; left, its padding and normal,
 * 16 bytes; the key, the seed's words in their order in memory. */
_Static_assert(offsetof(rt_rng, buf) == offsetof(rt_rng, ctr) + 16 && sizeof(((rt_rng *)0)->buf) == 16,
               "ctr and buf are adjacent");
_Static_assert(offsetof(rt_rng, normal) == offsetof(rt_rng, left) + 8 && sizeof(((rt_rng *)0)->left) == 4,
               "left and normal share 16 bytes");

typedef void (*batch_kernel)(const batch *b);
static batch_kernel kernel = batch_one;
static int kernel_level = 0;

#ifndef RT_RNG_MAX_LEVEL
#define RT_RNG_MAX_LEVEL 3 /* -DRT_RNG_MAX_LEVEL=n builds a runtime that uses no kernel above n */
#endif

/* 3: VAES on AVX-512, only where AVX-512 does not slow the core down: Skylake and Cascade Lake servers
 * lower their clock for the whole filter around it, and lack VBMI2, which the CPUs without that
 * penalty (Ice Lake and later, Zen 4) have.  2: VAES on AVX2 (Zen 3, Alder Lake and other CPUs with
 * VAES but no AVX-512).  1: AES-NI.  0: the S-box. */
static int best_level(void) {
  int best = 0;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("aes")) best = 1;
  if (best == 1 && __builtin_cpu_supports("vaes") && __builtin_cpu_supports("avx2")) best = 2;
  if (best == 2 && __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("avx512dq")) best = 3;
#endif
  return best < RT_RNG_MAX_LEVEL ? best : RT_RNG_MAX_LEVEL;
}

int rt_rng_kernel(int level) {
  if (level < 0) return kernel_level;
  int best = best_level();
  if (level > best) level = best;
  kernel_level = level;
  kernel = batch_one;
  ars_one = ars_soft;
  refill_one = refill_soft;
#if defined(__x86_64__)
  if (level >= 1) {
    kernel = batch_aesni;
    ars_one = ars_one_aesni;
    refill_one = refill_aesni;
  }
  if (level == 2) kernel = batch_vaes256;
  if (level == 3) kernel = batch_vaes512;
#endif
  return level;
}

static void key_runs(rt_rng *first, size_t stride, uint64_t slot0, int64_t n, uint64_t seed, uint32_t epoch,
                     uint32_t domain, int has_key) {
  for (int64_t base = 0; base < n; base += RT_KEY_BATCH) {
    batch b = {(rt_rng *)(void *)((uint8_t *)first + (size_t)base * stride), stride, slot0 + (uint64_t)base,
               n - base < RT_KEY_BATCH ? (int)(n - base) : RT_KEY_BATCH, seed, epoch, domain, has_key};
    kernel(&b);
  }
}

void rt_rng_key_run(rt_rng *first, size_t stride, uint64_t slot0, int64_t n, uint64_t seed, uint32_t epoch,
                    uint32_t domain) {
  key_runs(first, stride, slot0, n, seed, epoch, domain, 0);
}

void rt_rng_rekey_run(rt_rng *first, size_t stride, uint64_t slot0, int64_t n, uint64_t seed, uint32_t epoch,
                      uint32_t domain) {
  key_runs(first, stride, slot0, n, seed, epoch, domain, 1);
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

/* Tables are built, and the stream kernels chosen, when the library is loaded, so the fast paths have no
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
  build_sbox();
  rt_rng_kernel(best_level());
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
