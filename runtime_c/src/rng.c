/* rng.c — primitive variates on top of the Philox streams in internal.h: the standard normal
 * (ziggurat, the hot path of every Gaussian model), the unit exponential and unbiased bounded
 * integers. */
#include "internal.h"

#include <string.h>

/* Ziggurat for exp(-x^2/2) with 256 layers of equal area V (Marsaglia & Tsang 2000).
 * zx[i] is the right edge of layer i; layer 0 is the base strip of width V/f(R) that also stands for
 * the tail beyond R; zx[256] = 0 is the top.  zf[i] = f(zx[i]). */
#define ZIG_LAYERS 256
#define ZIG_R 3.6541528853610088
#define ZIG_V 0.00492867323399

static double zx[ZIG_LAYERS + 1], zf[ZIG_LAYERS + 1];
static double zx_scaled[ZIG_LAYERS]; /* zx[i] * 2^-53: turns 53 random bits into a point of layer i */

/* Tables are built when the library is loaded, so the sampler's fast path has no "ready?" branch
 * and concurrent first use cannot race. */
__attribute__((constructor)) static void zig_build(void) {
  double f = exp(-0.5 * ZIG_R * ZIG_R);
  zx[0] = ZIG_V / f;
  zx[1] = ZIG_R;
  zf[0] = 0.0; /* unused: layer 0 accepts below R and otherwise samples the tail */
  zf[1] = f;
  for (int i = 2; i < ZIG_LAYERS; i++) {
    zx[i] = sqrt(-2.0 * log(ZIG_V / zx[i - 1] + zf[i - 1]));
    zf[i] = exp(-0.5 * zx[i] * zx[i]);
  }
  zx[ZIG_LAYERS] = 0.0;
  zf[ZIG_LAYERS] = 1.0;
  for (int i = 0; i < ZIG_LAYERS; i++) zx_scaled[i] = zx[i] * 0x1.0p-53;
}

static double normal_tail(rt_rng *g) {
  /* Marsaglia's tail method: exact for x > R. */
  for (;;) {
    double x = -log(rt_uniform_pos(g)) / ZIG_R;
    double y = -log(rt_uniform_pos(g));
    if (2.0 * y >= x * x) return ZIG_R + x;
  }
}

/* The sign is applied by flipping the IEEE sign bit: a data-dependent branch on a random bit would be
 * mispredicted half the time, which costs more than the rest of the fast path. */
static inline double with_sign(double x, uint64_t r) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  b ^= (r & 0x100) << 55;
  memcpy(&x, &b, sizeof x);
  return x;
}

double rt_normal(rt_rng *g) {
  for (;;) {
    /* One 64-bit word gives the layer (bits 0..7), the sign (bit 8) and a 53-bit uniform (11..63). */
    uint64_t r = rt_next_u64(g);
    int i = (int)(r & 0xFF);
    double x = (double)(r >> 11) * zx_scaled[i];
    if (x < zx[i + 1]) return with_sign(x, r); /* inside the rectangle fully under the curve */
    if (i == 0) return with_sign(normal_tail(g), r);
    double y = zf[i] + rt_uniform(g) * (zf[i + 1] - zf[i]);
    if (y < exp(-0.5 * x * x)) return with_sign(x, r);
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
