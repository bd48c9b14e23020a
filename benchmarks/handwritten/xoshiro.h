/* xoshiro.h — one sequential xoshiro256+ generator (Blackman & Vigna) for the hand-written
 * competitors, seeded by splitmix64 as its authors recommend.  The low three bits of xoshiro256+
 * are weak: uniforms use the top 53 bits. */
#ifndef XOSHIRO_H
#define XOSHIRO_H

#include <stdint.h>

typedef struct xo {
  uint64_t s[4];
} xo;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t xo_next(xo *g) {
  uint64_t r = g->s[0] + g->s[3], t = g->s[1] << 17;
  g->s[2] ^= g->s[0];
  g->s[3] ^= g->s[1];
  g->s[1] ^= g->s[2];
  g->s[0] ^= g->s[3];
  g->s[2] ^= t;
  g->s[3] = rotl(g->s[3], 45);
  return r;
}

static inline void xo_seed(xo *g, uint64_t seed) {
  for (int i = 0; i < 4; i++) {
    uint64_t z = (seed += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    g->s[i] = z ^ (z >> 31);
  }
}

static inline double xo_uniform(xo *g) { return (double)(xo_next(g) >> 11) * 0x1.0p-53; }
static inline double xo_uniform_pos(xo *g) { return ((double)(xo_next(g) >> 11) + 0.5) * 0x1.0p-53; }

#endif
