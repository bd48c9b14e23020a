/* test_rng.c — the AES round and ARS-7 blocks against their definitions, determinism, independence of streams keyed by
 * (seed, slot, epoch, domain), streams keyed many at once (every SIMD kernel gives the scalar streams),
 * and the primitive variates (uniform, bounded integers, ziggurat normal). */
#include "check.h"
#include "base/base.h"

/* The S-box entry of x, by the soft round's SubBytes: a state of sixteen x's, no MixColumns, key 0. */
static uint8_t sbox_of(uint8_t x) {
  uint8_t s[16], zero[16] = {0};
  memset(s, x, sizeof s);
  rt_aes_round_soft(s, zero, 1);
  return s[0];
}

/* FIPS-197 appendix C.1 (AES-128) through the soft round, with the standard key expansion: the round
 * the S-box fallback computes is AES's. */
static void test_aes_round(void) {
  static const uint8_t key[16] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                  0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
  static const uint8_t plain[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                    0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  static const uint8_t want[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                   0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
  static const uint8_t rcon[10] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36};
  uint8_t w[176];
  memcpy(w, key, 16);
  for (int i = 4; i < 44; i++) {
    uint8_t t[4];
    memcpy(t, &w[4 * (i - 1)], 4);
    if (i % 4 == 0) {
      uint8_t t0 = t[0];
      t[0] = (uint8_t)(sbox_of(t[1]) ^ rcon[i / 4 - 1]);
      t[1] = sbox_of(t[2]);
      t[2] = sbox_of(t[3]);
      t[3] = sbox_of(t0);
    }
    for (int j = 0; j < 4; j++) w[4 * i + j] = w[4 * (i - 4) + j] ^ t[j];
  }
  uint8_t s[16];
  for (int i = 0; i < 16; i++) s[i] = plain[i] ^ w[i];
  for (int r = 1; r <= 10; r++) rt_aes_round_soft(s, &w[16 * r], r == 10);
  CHECK(memcmp(s, want, sizeof s) == 0, "AES-128 of FIPS-197 C.1: %02x%02x%02x%02x...", s[0], s[1], s[2], s[3]);
}

/* ARS-7 (rng.c) as its definition reads, on the soft round: the counter xor the key (seed, 0), then
 * seven rounds whose keys add the Weyl constants, the last without MixColumns. */
static void ars_reference(const uint32_t ctr[4], uint64_t seed, uint32_t out[4]) {
  uint64_t k[2] = {seed, 0}, v[2] = {(uint64_t)ctr[1] << 32 | ctr[0], (uint64_t)ctr[3] << 32 | ctr[2]};
  uint8_t s[16], kb[16];
  memcpy(s, v, 16); /* little-endian, as the words are in memory */
  memcpy(kb, k, 16);
  for (int i = 0; i < 16; i++) s[i] ^= kb[i];
  for (int r = 1; r <= 7; r++) {
    k[0] += 0x9E3779B97F4A7C15ull;
    k[1] += 0xBB67AE8584CAA73Bull;
    memcpy(kb, k, 16);
    rt_aes_round_soft(s, kb, r == 7);
  }
  memcpy(out, s, 16);
}

/* Every kernel's block (the S-box, AES-NI, as far as the CPU has them) is the reference's. */
static void test_blocks(void) {
  int best = rt_rng_kernel(-1);
  static const uint32_t ctrs[4][4] = {{0, 0, 0, 0},
                                      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                                      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                                      {1, 7, 3, 2u << 24}};
  static const uint64_t seeds[3] = {0, 0xFFFFFFFFFFFFFFFFull, 0x299f31d0a4093822ull};
  for (int level = 0; level <= 3; level++) {
    if (rt_rng_kernel(level) != level) continue;
    int bad = 0;
    for (int c = 0; c < 4; c++)
      for (int k = 0; k < 3; k++) {
        uint32_t key[2] = {(uint32_t)seeds[k], (uint32_t)(seeds[k] >> 32)}, got[4], want[4];
        rt_ars_block(ctrs[c], key, got);
        ars_reference(ctrs[c], seeds[k], want);
        bad += memcmp(got, want, sizeof got) != 0;
        /* a stream's refills: the blocks at its counter, the counter's first word counting them */
        rt_rng g;
        rt_rng_init(&g, seeds[k], (uint64_t)ctrs[c][3] << 32 | ctrs[c][1], ctrs[c][2], 0);
        memcpy(g.ctr, ctrs[c], sizeof g.ctr);
        for (uint32_t b = 0; b < 3; b++) {
          uint32_t ctr[4] = {ctrs[c][0] + b, ctrs[c][1], ctrs[c][2], ctrs[c][3]};
          ars_reference(ctr, seeds[k], want);
          for (int w = 0; w < 4; w++) bad += rt_next_u32(&g) != want[w];
        }
      }
    CHECK(bad == 0, "kernel %d: %d blocks differ from ARS-7's definition", level, bad);
  }
  CHECK(rt_rng_kernel(best) == best, "restoring kernel %d", best);
}

static int same_prefix(rt_rng a, rt_rng b, int n) {
  for (int i = 0; i < n; i++)
    if (rt_next_u32(&a) != rt_next_u32(&b)) return 0;
  return 1;
}

/* The state of a stream keyed one at a time, after its first block is generated. */
static rt_rng keyed_one(uint64_t seed, uint64_t slot, uint32_t epoch, uint32_t domain) {
  rt_rng g;
  rt_rng_init(&g, seed, slot, epoch, domain);
  uint32_t first = rt_next_u32(&g);
  g.left++; /* give the first word back: the state rt_rng_key_run promises */
  (void)first;
  return g;
}

/* n normals of streams a and b, bit for bit, b's from its words alone (no ready normal). */
static int same_normals(rt_rng a, rt_rng b, int n) {
  b.normal = NAN;
  for (int i = 0; i < n; i++)
    if (rt_bits_of(rt_normal(&a)) != rt_bits_of(rt_normal(&b))) return 0;
  return 1;
}

static int same_state(const rt_rng *a, const rt_rng *b) {
  return memcmp(a->key, b->key, sizeof a->key) == 0 && memcmp(a->ctr, b->ctr, sizeof a->ctr) == 0 &&
         memcmp(a->buf, b->buf, sizeof a->buf) == 0 && a->left == b->left;
}

/* Every kernel of rt_rng_key_run (the S-box, AES-NI, VAES on AVX2 and on AVX-512, as far as the CPU
 * has them) keys the same streams as rt_rng_init: full batches, a partial batch, runs starting anywhere
 * (across 2^32 too), streams in place inside larger records, all domains; nothing outside the streams
 * is written; and rt_rng_rekey_run keys the same streams where they hold their key already.  Each
 * stream's ready normal is the ziggurat fast path's answer for its first two words, NaN where that
 * rejects them (some must be), and its normals are those of its words. */
static void test_key_run(void) {
  int best = rt_rng_kernel(-1);
  CHECK(best >= 0 && best <= 3, "kernel level %d", best);
  static const uint64_t seeds[] = {0, 42, 0xFFFFFFFFFFFFFFFFull, 0x243F6A8885A308D3ull};
  static const uint64_t starts[] = {0, 5, 0xFFFFFFF5ull, 0xABCDEF00000007ull};
  enum { N = 37 }; /* two full batches and a partial one */
  typedef struct record {
    uint32_t before;
    rt_rng g;
    uint32_t after[7];
  } record; /* a stride that is not sizeof(rt_rng) */
  for (int level = 0; level <= 3; level++) {
    int got = rt_rng_kernel(level);
    CHECK(got <= level, "kernel %d reported as %d", level, got);
    if (got != level) continue; /* the CPU lacks it */
    int bad = 0, clobbered = 0, bad_normal = 0, rejected = 0, rekeyed_bad = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
      for (size_t a = 0; a < sizeof starts / sizeof starts[0]; a++)
        for (uint32_t domain = 0; domain < 4; domain++)
          for (uint32_t epoch = 0; epoch < 3; epoch++) {
            record r[N + 1];
            memset(r, 0xA5, sizeof r);
            int64_t n = N - (int64_t)a; /* runs of several lengths */
            rt_rng_key_run(&r[0].g, sizeof r[0], starts[a], n, seeds[s], epoch * 977u, domain);
            for (int64_t j = 0; j <= n; j++) {
              clobbered += r[j].before != 0xA5A5A5A5u || r[j].after[6] != 0xA5A5A5A5u;
              if (j == n) { /* past the run: untouched */
                rt_rng untouched;
                memset(&untouched, 0xA5, sizeof untouched);
                clobbered += memcmp(&r[j].g, &untouched, sizeof untouched) != 0;
                continue;
              }
              rt_rng want = keyed_one(seeds[s], starts[a] + (uint64_t)j, epoch * 977u, domain);
              bad += !same_state(&r[j].g, &want);
              bad += !same_prefix(r[j].g, want, 23); /* and on into later blocks */
              double z = rt_zig_fast((uint64_t)r[j].g.buf[0] << 32 | r[j].g.buf[1]);
              bad_normal += rt_bits_of(r[j].g.normal) != rt_bits_of(z);
              rejected += isnan(z);
              bad_normal += !same_normals(r[j].g, want, 7);
            }
            /* rt_rng_rekey_run, given streams that hold the seed's key and nothing else: the same streams */
            record q[N + 1];
            memset(q, 0xA5, sizeof q);
            for (int64_t j = 0; j < n; j++) rt_rng_init(&q[j].g, seeds[s], 0, 0, 0);
            for (int64_t j = 0; j < n; j++) memset(q[j].g.ctr, 0xA5, sizeof(rt_rng) - offsetof(rt_rng, ctr));
            rt_rng_rekey_run(&q[0].g, sizeof q[0], starts[a], n, seeds[s], epoch * 977u, domain);
            for (int64_t j = 0; j < n; j++)
              rekeyed_bad += !same_state(&q[j].g, &r[j].g) || rt_bits_of(q[j].g.normal) != rt_bits_of(r[j].g.normal);
            rekeyed_bad += memcmp(&q[n], &r[n], sizeof q[n]) != 0;
          }
    CHECK(bad == 0, "kernel %d: %d streams differ from rt_rng_init's", level, bad);
    CHECK(bad_normal == 0, "kernel %d: %d ready normals differ from the fast path of their words", level,
          bad_normal);
    CHECK(rejected > 0, "kernel %d: no stream's first words were rejected by the fast path", level);
    CHECK(clobbered == 0, "kernel %d: wrote outside the streams %d times", level, clobbered);
    CHECK(rekeyed_bad == 0, "kernel %d: %d streams rekeyed without their key differ", level, rekeyed_bad);
    rt_rng_key_run(NULL, sizeof(rt_rng), 0, 0, 1, 2, 3); /* nothing to key */
  }
  CHECK(rt_rng_kernel(best) == best, "restoring kernel %d", best);
}

/* rt_next_u64 takes two words with one check; it must give what two rt_next_u32 calls give, at every
 * offset into the buffer (an odd one too). */
static void test_u64_pairs(void) {
  int bad = 0;
  for (int skip = 0; skip < 4; skip++) {
    rt_rng a, b;
    rt_rng_init(&a, 77, 3, 1, RT_DOMAIN_TEST);
    rt_rng_init(&b, 77, 3, 1, RT_DOMAIN_TEST);
    for (int k = 0; k < skip; k++) {
      rt_next_u32(&a);
      rt_next_u32(&b);
    }
    for (int k = 0; k < 50; k++) {
      uint64_t hi = rt_next_u32(&b), lo = rt_next_u32(&b);
      bad += rt_next_u64(&a) != (hi << 32 | lo);
    }
  }
  CHECK(bad == 0, "rt_next_u64 differs from two rt_next_u32 %d times", bad);
}

/* What the filter does: every slot's stream rekeyed at every epoch (RT_RNG_LANES at a time) and one normal
 * drawn from each.  Pooled, the draws are N(0, 1); neighbouring slots of one batch are uncorrelated;
 * no two streams of a batch start alike. */
static double normal_cdf(double x);
static void test_rekeyed_normals(void) {
  enum { SLOTS = 64, EPOCHS = 20000 };
  const double edges[] = {-3, -2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3};
  enum { NE = sizeof edges / sizeof edges[0] };
  long bins[NE + 1] = {0};
  double s1 = 0, s2 = 0, s4 = 0, lag = 0;
  int dup = 0;
  for (uint32_t e = 0; e < EPOCHS; e++) {
    rt_rng g[SLOTS];
    rt_rng_key_run(g, sizeof g[0], 0, SLOTS, 2024, e, RT_DOMAIN_PARTICLE);
    double z[SLOTS];
    for (int j = 0; j < SLOTS; j++) {
      z[j] = rt_normal(&g[j]);
      s1 += z[j];
      s2 += z[j] * z[j];
      s4 += z[j] * z[j] * z[j] * z[j];
      int b = 0;
      while (b < NE && z[j] >= edges[b]) b++;
      bins[b]++;
      if (j > 0) {
        lag += z[j] * z[j - 1];
        dup += z[j] == z[j - 1];
      }
    }
  }
  const double n = (double)SLOTS * EPOCHS;
  CHECK_NEAR(s1 / n, 0.0, 5 / sqrt(n), "rekeyed normal mean");
  CHECK_NEAR(s2 / n, 1.0, 5 * sqrt(2.0 / n), "rekeyed normal variance");
  CHECK_NEAR(s4 / n, 3.0, 5 * sqrt(96.0 / n), "rekeyed normal fourth moment");
  CHECK_NEAR(lag / (n - EPOCHS), 0.0, 5 / sqrt(n - EPOCHS), "correlation of neighbouring slots");
  CHECK(dup == 0, "%d neighbouring streams drew the same number", dup);
  double chi2 = 0;
  for (int b = 0; b <= NE; b++) {
    double lo = b == 0 ? 0.0 : normal_cdf(edges[b - 1]), hi = b == NE ? 1.0 : normal_cdf(edges[b]);
    double expect = n * (hi - lo);
    chi2 += (bins[b] - expect) * (bins[b] - expect) / expect;
  }
  /* 13 degrees of freedom: P(chi2 > 40) ~ 1e-4. */
  CHECK(chi2 < 40.0, "rekeyed normal binned chi-square %g (13 df)", chi2);
}

static void test_determinism(void) {
  rt_rng a, b;
  rt_rng_init(&a, 42, 7, 3, RT_DOMAIN_PARTICLE);
  rt_rng_init(&b, 42, 7, 3, RT_DOMAIN_PARTICLE);
  CHECK(same_prefix(a, b, 1000), "same key and counter must give the same stream");
  rt_rng_init(&b, 43, 7, 3, RT_DOMAIN_PARTICLE);
  CHECK(!same_prefix(a, b, 8), "seed must matter");
  rt_rng_init(&b, 42, 8, 3, RT_DOMAIN_PARTICLE);
  CHECK(!same_prefix(a, b, 8), "slot must matter");
  rt_rng_init(&b, 42, 7, 4, RT_DOMAIN_PARTICLE);
  CHECK(!same_prefix(a, b, 8), "epoch must matter");
  rt_rng_init(&b, 42, 7, 3, RT_DOMAIN_RESAMPLE);
  CHECK(!same_prefix(a, b, 8), "domain must matter");
  rt_rng_init(&b, 42, 7 + ((uint64_t)1 << 32), 3, RT_DOMAIN_PARTICLE);
  CHECK(!same_prefix(a, b, 8), "high slot bits must matter");
  /* A stream never repeats its blocks: 10^5 consecutive words differ from the first block. */
  rt_rng c;
  rt_rng_init(&c, 1, 0, 0, 0);
  uint32_t first[4];
  for (int i = 0; i < 4; i++) first[i] = rt_next_u32(&c);
  int repeats = 0;
  for (int i = 0; i < 100000; i += 4) {
    uint32_t w[4];
    for (int j = 0; j < 4; j++) w[j] = rt_next_u32(&c);
    repeats += memcmp(w, first, sizeof w) == 0;
  }
  CHECK(repeats == 0, "block repeated");
}

static void test_uniform_and_correlation(void) {
  const int n = 1000000;
  rt_rng a, b, e;
  rt_rng_init(&a, 5, 0, 0, 0);
  rt_rng_init(&b, 5, 1, 0, 0);
  rt_rng_init(&e, 5, 0, 1, 0);
  double sa = 0, saa = 0, sab = 0, sae = 0, mn = 1, mx = 0;
  for (int i = 0; i < n; i++) {
    double u = rt_uniform(&a), v = rt_uniform(&b), w = rt_uniform(&e);
    sa += u;
    saa += u * u;
    sab += (u - 0.5) * (v - 0.5);
    sae += (u - 0.5) * (w - 0.5);
    if (u < mn) mn = u;
    if (u > mx) mx = u;
  }
  double mean = sa / n, var = saa / n - mean * mean;
  CHECK_NEAR(mean, 0.5, 5 * sqrt(1.0 / 12 / n), "uniform mean");
  CHECK_NEAR(var, 1.0 / 12, 5 * sqrt(1.0 / 180 / n), "uniform variance");
  CHECK(mn >= 0.0 && mx < 1.0, "uniform range [%g, %g]", mn, mx);
  /* Correlation of neighbouring slots and of successive epochs of one slot. */
  CHECK_NEAR(sab / n * 12, 0.0, 5 / sqrt((double)n), "slot 0 vs slot 1 correlation");
  CHECK_NEAR(sae / n * 12, 0.0, 5 / sqrt((double)n), "epoch 0 vs epoch 1 correlation");
  rt_rng p;
  rt_rng_init(&p, 9, 0, 0, 0);
  int bad = 0;
  for (int i = 0; i < 100000; i++) {
    double u = rt_uniform_pos(&p);
    bad += !(u > 0.0 && u < 1.0);
  }
  CHECK(bad == 0, "uniform_pos must be in (0, 1)");
}

static void test_below(void) {
  rt_rng g;
  rt_rng_init(&g, 11, 0, 0, 0);
  enum { M = 7, N = 700000 };
  long counts[M] = {0};
  for (int i = 0; i < N; i++) counts[rt_below(&g, M)]++;
  double chi2 = 0;
  for (int k = 0; k < M; k++) chi2 += (counts[k] - N / M) * (double)(counts[k] - N / M) / (N / M);
  CHECK(chi2 < 30.0, "rt_below(7) chi-square %g (6 df)", chi2);
  int ok = 1;
  for (int i = 0; i < 1000; i++) ok &= rt_below(&g, 1) == 0;
  uint64_t big = ((uint64_t)1 << 63) + 1;
  for (int i = 0; i < 1000; i++) ok &= rt_below(&g, big) < big;
  CHECK(ok, "rt_below bounds");
}

static double normal_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

static void test_normal(void) {
  const int n = 2000000;
  rt_rng g;
  rt_rng_init(&g, 3, 0, 0, 0);
  /* Bins at edges -inf, -4, -3.6541 (the ziggurat's tail start), -3, ..., 3, 3.6541, 4, inf. */
  double edges[] = {-4.0, -3.6541528853610088, -3, -2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3,
                    3.6541528853610088, 4.0};
  enum { NE = sizeof edges / sizeof edges[0] };
  long bins[NE + 1] = {0};
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  for (int i = 0; i < n; i++) {
    double x = rt_normal(&g);
    s1 += x;
    s2 += x * x;
    s3 += x * x * x;
    s4 += x * x * x * x;
    int b = 0;
    while (b < NE && x >= edges[b]) b++;
    bins[b]++;
  }
  CHECK_NEAR(s1 / n, 0.0, 5 / sqrt((double)n), "normal mean");
  CHECK_NEAR(s2 / n, 1.0, 5 * sqrt(2.0 / n), "normal variance");
  CHECK_NEAR(s3 / n, 0.0, 5 * sqrt(15.0 / n), "normal third moment");
  CHECK_NEAR(s4 / n, 3.0, 5 * sqrt(96.0 / n), "normal fourth moment");
  double chi2 = 0;
  for (int b = 0; b <= NE; b++) {
    double lo = b == 0 ? 0.0 : normal_cdf(edges[b - 1]), hi = b == NE ? 1.0 : normal_cdf(edges[b]);
    double expect = n * (hi - lo);
    chi2 += (bins[b] - expect) * (bins[b] - expect) / expect;
  }
  /* 17 degrees of freedom: P(chi2 > 45) ~ 2e-4. */
  CHECK(chi2 < 45.0, "normal binned chi-square %g (17 df)", chi2);

  double e1 = 0, e2 = 0;
  for (int i = 0; i < n; i++) {
    double x = rt_exponential(&g);
    e1 += x;
    e2 += x * x;
  }
  CHECK_NEAR(e1 / n, 1.0, 5 / sqrt((double)n), "exponential mean");
  CHECK_NEAR(e2 / n - (e1 / n) * (e1 / n), 1.0, 5 * sqrt(8.0 / n), "exponential variance");
}

int main(void) {
  test_aes_round();
  test_blocks();
  test_determinism();
  test_key_run();
  test_u64_pairs();
  test_rekeyed_normals();
  test_uniform_and_correlation();
  test_below();
  test_normal();
  return check_report("test_rng");
}
