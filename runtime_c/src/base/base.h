/* base.h — the face of the runtime's base (runtime_c/src/base/): what the symbolic engine (engine/)
 * and the population (population/) both stand on, and what compiled code calls for one particle.
 *
 *   a particle's stream and variates   rng.c, samplers.c: ARS-7 streams, inline here, and the
 *                                      ziggurat's fast path (the resampler and the hand-written
 *                                      baselines compile them in place)
 *   distributions                      distributions.c (validity, densities, means), family.c (by
 *                                      family id), sample_observe.c (sirenrt_sample_*, observe)
 *   lists                              values.c: list handles, cells and the young arena
 *   errors                             errors.c: a particle's error, rendered diagnostics
 *   the memory budget                  budget.c: what every growing structure reserves first
 *   type descriptors                   types.c
 *   the MH trace                       mh_trace.c: the hooks every random choice passes
 *   the records                        a particle's context, and its filter's record, which the
 *                                      population owns and writes; the rooms below it read a few of its
 *                                      fields through ctx->filter (the model, the weights, the data
 *                                      tables, the budget, the MH trace)
 *
 * Nothing here calls the engine or the population (private to the runtime; not installed). */
#ifndef SIRENRT_BASE_H
#define SIRENRT_BASE_H

#include "sirenrt.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RT_PI 3.14159265358979323846

/* A double's 64 bits, and the double of 64 bits (a memcpy, which compilers make a register move). */
static inline uint64_t rt_bits_of(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}
static inline double rt_double_of(uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* lgamma without its write to the global signgam (a data race once particles run on threads). */
double rt_lgamma(double x);

/* ---------------------------------------------------------------- rng (ARS-7) ----------------- */
/* A stream is a key (the seed) plus a 128-bit counter whose words 1..3 name the stream and word 0
 * counts blocks within it:  ctr = {block, slot_lo, epoch, domain << 24 | slot_hi}; a block is ARS-7 of
 * the counter (rng.c).  Distinct (seed, slot, epoch, domain) never share a block, so streams are
 * independent by construction and a particle duplicated at resampling (new epoch, new slot) never
 * replays its parent's draws.  2^32 blocks (2^34 32-bit draws) per particle per epoch are plenty.
 * A particle is rekeyed at every resampling and often draws only a number or two before the next, so
 * what a filter step pays for is mostly the first block of each stream: the population loop keys
 * runs of streams at once with rt_rng_key_run, whose kernels (the S-box, AES-NI, VAES on AVX2 or on
 * AVX-512, chosen when the library loads) compute their first blocks together, RT_RNG_LANES at a
 * time.  The words are the same whichever computes them: the streams do not depend on the kernel. */
enum { RT_DOMAIN_PARTICLE = 0, RT_DOMAIN_RESAMPLE = 1, RT_DOMAIN_TEST = 2, RT_DOMAIN_USER = 3, RT_DOMAIN_MH = 4 };

typedef sirenrt_stream rt_rng; /* sirenrt.h: the span loop reads the buffer of a context's stream */

/* out = block ctr of the stream keyed by key (key[0] the seed's low word). */
void rt_ars_block(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* One AES encryption round computed from the S-box (what AESENC does, or AESENCLAST when last), for
 * CPUs without AES instructions; state and key as those instructions' register bytes. */
void rt_aes_round_soft(uint8_t state[16], const uint8_t key[16], int last);

/* The counter's last word, which holds the domain and the slot's high bits (its low ones are word 1). */
static inline uint32_t rt_rng_ctr_high(uint64_t slot, uint32_t domain) {
  return domain << 24 | ((uint32_t)(slot >> 32) & 0xFFFFFFu);
}

static inline void rt_rng_init(rt_rng *g, uint64_t seed, uint64_t slot, uint32_t epoch, uint32_t domain) {
  g->key[0] = (uint32_t)seed;
  g->key[1] = (uint32_t)(seed >> 32);
  g->ctr[0] = 0;
  g->ctr[1] = (uint32_t)slot;
  g->ctr[2] = epoch;
  g->ctr[3] = rt_rng_ctr_high(slot, domain);
  g->left = 0;
}

/* The slot a stream keyed by rt_rng_init names (its counter's words 1 and 3). */
static inline uint64_t rt_rng_slot(const rt_rng *g) { return (uint64_t)(g->ctr[3] & 0xFFFFFFu) << 32 | g->ctr[1]; }

/* g's buffer becomes the block at its counter, and the counter moves on to the next block. */
void rt_rng_refill(rt_rng *g);

static inline uint32_t rt_next_u32(rt_rng *g) {
  if (g->left == 0) {
    rt_rng_refill(g);
    g->left = 4; /* and 3 on return: `normal`, not made for this block, is not read (sirenrt.h) */
  }
  return g->buf[4 - g->left--];
}

/* Two words, the first in the high half.  Reads both from the buffer with one check when it holds
 * two (the usual case: every consumer but rt_next_u32 takes words in pairs). */
static inline uint64_t rt_next_u64(rt_rng *g) {
  if (__builtin_expect(g->left >= 2, 1)) {
    uint32_t k = 4 - g->left;
    g->left -= 2;
    return (uint64_t)g->buf[k] << 32 | g->buf[k + 1];
  }
  uint64_t hi = rt_next_u32(g);
  return (hi << 32) | rt_next_u32(g);
}

/* Keys the streams of the n consecutive slots slot0, slot0 + 1, ...: the one of slot slot0 + j, at
 * (char *)first + j * stride, becomes rt_rng_init(.., seed, slot0 + j, epoch, domain) with its first
 * block already generated (ctr[0] = 1, left = 4), the state its first draw would have left, so its
 * words are exactly those of a stream keyed one at a time.  The stride lets it key streams in place
 * inside larger records (a population's contexts). */
void rt_rng_key_run(rt_rng *first, size_t stride, uint64_t slot0, int64_t n, uint64_t seed, uint32_t epoch,
                    uint32_t domain);
/* rt_rng_key_run for streams that hold this seed's key already (a thread's lanes, given it once): the
 * same streams, the key not stored again. */
void rt_rng_rekey_run(rt_rng *first, size_t stride, uint64_t slot0, int64_t n, uint64_t seed, uint32_t epoch,
                      uint32_t domain);
/* The widest vector level of this CPU, in the kernel selectors' numbering: 3 AVX-512F, 2 AVX2, 1 SSE2
 * (every x86-64 CPU); 0 elsewhere.  Each selector lowers it where its kernels need more or lack one. */
static inline int rt_cpu_level(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") ? 3 : __builtin_cpu_supports("avx2") ? 2 : 1;
#else
  return 0;
#endif
}
/* Selects the kernels of rt_rng_key_run, rt_ars_block and rt_rng_refill for the whole process (tests
 * compare them; not while filters run): 0 the S-box, 1 AES-NI, 2 VAES on AVX2, 3 VAES on AVX-512; a
 * level the CPU lacks is lowered.  Returns the level now in use; -1 only reports it.  The best one is
 * chosen when the library loads. */
int rt_rng_kernel(int level);
#define RT_RNG_LANES 16 /* streams a vector kernel keys together (one group of registers) */
#define RT_LANE_RUN (4 * RT_RNG_LANES) /* streams the population loop keys with one call (loop.c) */

/* Uniform on [0, 1) with 53 random bits. */
static inline double rt_uniform(rt_rng *g) { return (double)(rt_next_u64(g) >> 11) * 0x1.0p-53; }
/* Uniform on (0, 1): safe for log(). */
static inline double rt_uniform_pos(rt_rng *g) { return ((double)(rt_next_u64(g) >> 11) + 0.5) * 0x1.0p-53; }

/* ---------------------------------------------------------------- rng.c, samplers.c ---------- */
/* Standard normal by the ziggurat of rng.c: the fast path (about 99% of draws: one 64-bit word, one
 * table row, one compare) is inline here, so a Gaussian draw costs no call into the runtime beyond
 * sirenrt_std_normal itself; rt_normal_slow finishes the other draws.  One 64-bit word gives the
 * layer (bits 0..7), the sign (bit 8) and a 53-bit uniform (bits 11..63). */
#define RT_ZIG_LAYERS 256
#define RT_HIDDEN __attribute__((visibility("hidden"))) /* addressed directly, not through the GOT */
extern RT_HIDDEN double rt_zig_x[RT_ZIG_LAYERS + 1];    /* right edge of each layer, rng.c; exported */
extern RT_HIDDEN double rt_zig_x_scaled[RT_ZIG_LAYERS]; /* rt_zig_x[i] * 2^-53; as sirenrt_zig_x(_scaled) */
double rt_normal_slow(rt_rng *g); /* the whole draw, for when the fast path cannot finish it */

/* The sign is applied by flipping the IEEE sign bit: a data-dependent branch on a random bit would be
 * mispredicted half the time, which costs more than the rest of the fast path. */
static inline double rt_with_sign(double x, uint64_t r) { return rt_double_of(rt_bits_of(x) ^ (r & 0x100) << 55); }

/* The ziggurat's fast path on word r: the layer from bits 0..7, the sign from bit 8 and a 53-bit
 * uniform from bits 11..63; the normal when the point lies in its layer's rectangle under the curve,
 * else NaN.  rt_rng_key_run stores it as a keyed stream's `normal` (sirenrt.h). */
static inline double rt_zig_fast(uint64_t r) {
  unsigned i = (unsigned)(r & 0xFF);
  double x = (double)(r >> 11) * rt_zig_x_scaled[i];
  return x < rt_zig_x[i + 1] ? rt_with_sign(x, r) : NAN;
}

/* A stream's `normal` made again from its buffer, for a stream whose words came from elsewhere (a
 * checkpoint). */
static inline void rt_rng_renormal(rt_rng *g) { g->normal = rt_zig_fast((uint64_t)g->buf[0] << 32 | g->buf[1]); }

/* The fast path consumes the two words only when it accepts; otherwise rt_normal_slow starts the same
 * draw again from them (and refills the buffer when it holds fewer than two), so the stream of words
 * is the same as one loop's.  Keeping the refill out of here keeps the fast path free of the block's
 * registers.  A freshly keyed stream has the fast path's answer ready (`normal`). */
static inline double rt_normal(rt_rng *g) {
  uint32_t left = g->left;
  if (left == 4 && !isnan(g->normal)) {
    g->left = 2;
    return g->normal;
  }
  if (__builtin_expect(left >= 2, 1)) {
    uint32_t k = 4 - left;
    uint64_t r = (uint64_t)g->buf[k] << 32 | g->buf[k + 1];
    unsigned i = (unsigned)(r & 0xFF);
    double x = (double)(r >> 11) * rt_zig_x_scaled[i];
    if (__builtin_expect(x < rt_zig_x[i + 1], 1)) { /* inside the rectangle under the curve */
      g->left = left - 2;
      return rt_with_sign(x, r);
    }
  }
  return rt_normal_slow(g);
}

/* Raw variate generators; parameters are assumed valid (checked in distributions.c). */
double rt_exponential(rt_rng *g);                /* rate 1, rng.c */
uint64_t rt_below(rt_rng *g, uint64_t m);        /* uniform integer in [0, m), m >= 1, rng.c */
double rt_gamma(rt_rng *g, double shape);        /* rate 1 */
double rt_log_gamma(rt_rng *g, double shape);    /* log of a rate-1 gamma draw, no underflow */
double rt_beta(rt_rng *g, double a, double b);
double rt_binomial(rt_rng *g, int64_t n, double p);
double rt_poisson(rt_rng *g, double lambda);
double rt_student_t(rt_rng *g, double nu);       /* standard t */

/* ---------------------------------------------------------------- distributions.c ---------- */
/* Validity checks of ARCHITECTURE.md §9: return 0 when the parameters are valid, else 1 with a message
 * ("gaussian: variance must be > 0, got -1") in msg (RT_MSG bytes). */
#define RT_MSG 200
/* Spreads a parenthesised list of SIRENRT_FAMILIES' PARAMS or ARGS into a call or a declaration. */
#define RT_UNPAREN(...) __VA_ARGS__
/* One check per family, with the parameters of its sample function; categorical's checks the
 * probabilities themselves, so it is declared by hand. */
#define RT_DECLARE_BAD_SCALAR(name, PARAMS) int rt_bad_##name(RT_UNPAREN PARAMS, char *msg);
#define RT_DECLARE_BAD_LIST(name, PARAMS)
#define RT_DECLARE_BAD(ID, name, N, SHAPE, PARAMS, ARGS) RT_DECLARE_BAD_##SHAPE(name, PARAMS)
SIRENRT_FAMILIES(RT_DECLARE_BAD)
#undef RT_DECLARE_BAD
#undef RT_DECLARE_BAD_SCALAR
#undef RT_DECLARE_BAD_LIST
int rt_bad_categorical(double lo, double hi, const double *probs, int64_t n, char *msg);
/* sample_observe.c: a categorical draw from an array of probabilities (checked; NaN after rt_fail). */
double rt_sample_categorical_probs(sirenrt_ctx *ctx, double lo, double hi, const double *probs, int64_t n,
                                   int32_t site);

/* ---------------------------------------------------------------- memory budget ------------- */
/* The part of a filter's memory limit its runs may grow into (population/memory.c), in words. */
typedef struct rt_budget {
  uint64_t words;  /* the limit less the population's fixed state */
  uint64_t used;   /* reserved (atomically): arena capacities, heap chunks and big cells, data tables */
  int32_t over;    /* a reservation was refused: the filter's "out of memory" was the limit */
  uint64_t limit, fixed; /* bytes, for messages */
} rt_budget;

/* ---------------------------------------------------------------- data tables --------------- */
/* One data file: rows of doubles in one flat array; row r is vals[row_start[r] .. row_start[r+1]). */
typedef struct rt_table {
  /* First, in sirenrt_rows' order: a loaded table is what rt_stream_rows hands compiled code. */
  double *vals;
  int64_t *row_start; /* n_rows + 1 entries once loaded */
  int64_t n_rows;
  int32_t loaded;
  rt_budget *budget;  /* what its growth is counted against (a file's, in a filter); NULL: nothing */
  int64_t n_vals, cap_vals, cap_rows;
} rt_table;
_Static_assert(offsetof(rt_table, vals) == offsetof(sirenrt_rows, vals) &&
                   offsetof(rt_table, row_start) == offsetof(sirenrt_rows, row_start) &&
                   offsetof(rt_table, n_rows) == offsetof(sirenrt_rows, n_rows),
               "a table starts as sirenrt_rows");

#define RT_SHARED_BIT ((int64_t)1 << 62)
#define RT_ROW_BIT ((int64_t)1 << 61)
#define RT_MAX_FILES 64
#define RT_MAX_ROW_LEN (((int64_t)1 << 23) - 1)
#define RT_MAX_ROWS ((int64_t)1 << 32)

/* Shared handles (see sirenrt.h): a list of rows from row r, or the elements of row r from k. */
static inline int64_t rt_shared_rows(int32_t file, int64_t r) {
  return RT_SHARED_BIT | ((int64_t)file << 55) | r;
}
static inline int64_t rt_shared_row(int32_t file, int64_t r, int64_t k) {
  return RT_SHARED_BIT | RT_ROW_BIT | ((int64_t)file << 55) | (r << SIRENRT_ROW_SHIFT) | k;
}
_Static_assert(SIRENRT_FIRST_ROW == (RT_SHARED_BIT | RT_ROW_BIT) && RT_MAX_ROW_LEN == (1 << SIRENRT_ROW_SHIFT) - 1,
               "sirenrt.h's row handles are these");
static inline int32_t rt_shared_file(int64_t h) { return (int32_t)((h >> 55) & 63); }
static inline int64_t rt_shared_rows_r(int64_t h) { return h & (((int64_t)1 << 55) - 1); }
static inline int64_t rt_shared_row_r(int64_t h) { return (h >> 23) & 0xFFFFFFFF; }
static inline int64_t rt_shared_row_k(int64_t h) { return h & RT_MAX_ROW_LEN; }
static inline int64_t rt_row_len(const rt_table *t, int64_t r) { return t->row_start[r + 1] - t->row_start[r]; }
/* Handle of row r as a list (NIL for an empty row). */
static inline int64_t rt_row_handle(const rt_table *t, int32_t file, int64_t r) {
  return rt_row_len(t, r) > 0 ? rt_shared_row(file, r, 0) : SIRENRT_NIL;
}

/* ---------------------------------------------------------------- context ------------------- */

/* 128 bytes, 64-aligned: the first cache line holds what the compiled span loop reads of every
 * particle (its stream and flags), the second what the runtime's own draws and scores read (the
 * filter, the weight) and what lists, data and errors need.  The population loop walks these in slot
 * order, so a fat context would cost every model memory bandwidth. */
struct __attribute__((aligned(64))) sirenrt_ctx {
  rt_rng rng;          /* rng.ctr[2] is the resampling epoch its stream is keyed with */
  int32_t flagged;     /* set when this resume recorded an error or a zero weight (cold fields below),
                        * or built list cells */
  int32_t zeroed;      /* logw became -inf during the current resume */
  /* second cache line */
  double *logw;        /* this particle's entry of the filter's dense weight array; NULL in a lane
                        * (loop.c), whose stream names the slot it runs (rt_ctx_logw) */
  struct sirenrt_filter *filter; /* data, stream state and the site table; NULL in sample_many */
  uint64_t *arena;
  uint32_t arena_used, arena_cap; /* the young arena: cells built since the last barrier */
  int32_t zero_site;   /* site of the observation that made logw -inf (-1: none) */
  int32_t err_site;
  char *err_msg;       /* the first error of this particle (malloc'd), NULL if none */
  int64_t want_row;    /* the stream row a NEED_ROW particle waits for */
  union {
    struct rt_sym_state *sym; /* symbolic state (engine/sym.h); NULL until the particle's first symbolic op */
    struct rt_nursery *nursery; /* in a lane (logw NULL), which never holds a symbolic state: where its
                                 * conses go, or NULL (rt_nursery_of) */
  };
};

_Static_assert(offsetof(struct sirenrt_ctx, rng) == 0, "a context begins with its stream (sirenrt.h)");
_Static_assert(sizeof(struct sirenrt_ctx) == 128 && offsetof(struct sirenrt_ctx, logw) == 64,
               "a context is two cache lines, the span loop's fields in the first");

/* errors.c */
#define RT_SITE_RENDERED (-2) /* err_site value: err_msg is already a complete rendered diagnostic */
int rt_site_known(const sirenrt_model *m, int32_t site);
double rt_fail(sirenrt_ctx *ctx, int32_t site, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rt_set_last_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Renders "file:line:col: error: msg\n<line>\n<caret>" for a model site; malloc'd. */
char *rt_render_site(const sirenrt_model *m, int32_t site, const char *kind, const char *msg);
char *rt_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rt_free_message(char *msg); /* frees an err_msg (one may be a static out-of-memory text) */

/* values.c, heap.c: list handles and cells.
 * A handle is SIRENRT_NIL (-1), a shared data handle (RT_SHARED_BIT), a young cell (RT_YOUNG_BIT | index
 * into the particle's arena) or a heap cell (its address: a positive value with none of bits 60..63).
 * A cell, young or heap, is [header, aux, tail, element words...]: the header holds the kind (bits
 * 0..7), the payload words (tail and elements, bits 8..31) and the length of the list it starts (bits
 * 32..63); aux is 0 in a young cell until promotion makes it the forwarding address, and a heap cell's
 * element type and collector bits (heap.c). */
#define RT_YOUNG_BIT ((int64_t)1 << 60)
#define RT_TAG_BITS ((int64_t)(UINT64_C(0xF) << 60))
enum { RT_KIND_LIST = 1 };
#define RT_HEADER(kind, payload, len) ((uint64_t)(kind) | (uint64_t)(payload) << 8 | (uint64_t)(len) << 32)
#define RT_HEADER_KIND(h) ((uint32_t)((h) & 0xFF))
#define RT_HEADER_PAYLOAD(h) ((uint32_t)(((h) >> 8) & 0xFFFFFF))
#define RT_HEADER_LEN(h) ((uint32_t)((h) >> 32))
#define RT_CELL_WORDS(h) (2 + RT_HEADER_PAYLOAD(h))
#define RT_MAX_LIST_LEN UINT32_MAX
static inline int rt_is_young(int64_t h) { return h >= 0 && (h & RT_TAG_BITS) == RT_YOUNG_BIT; }
static inline int rt_is_heap(int64_t h) { return h > 0 && (h & RT_TAG_BITS) == 0; }
static inline uint32_t rt_young_index(int64_t h) { return (uint32_t)h; }
static inline uint64_t *rt_heap_cell(int64_t h) { return (uint64_t *)(uintptr_t)h; }

/* Where a lane's conses are made (heap.c: its thread's young cells in the population's heap) instead
 * of in its young arena, so that they need no promotion when the particle stops.  cons makes a cell
 * of `payload` words (tail and elements) for a list of `len` elements whose elements are of type
 * `elem`, its tail `tail` moved to the heap first when it is young: the cell's address, with its
 * element words unset (sirenrt_list_set may write those of `last`, the cell made last); 0 when the
 * nursery declines (an element type with lists, whose young words would be younger than the cell:
 * the young arena makes it), or SIRENRT_NIL when the memory limit refuses it. */
typedef struct rt_nursery {
  int64_t (*cons)(struct rt_nursery *n, sirenrt_ctx *ctx, int64_t tail, uint32_t payload, uint32_t len,
                  const char *elem);
  uint64_t *last;
} rt_nursery;

static inline rt_nursery *rt_nursery_of(const sirenrt_ctx *ctx) { return ctx->logw ? NULL : ctx->nursery; }

void rt_arena_free(sirenrt_ctx *ctx);
int rt_arena_copy(sirenrt_ctx *dst, const sirenrt_ctx *src); /* 0 ok, -1 out of memory */
/* Splits a non-empty list: copies the head's `nwords` element words into out and its tail into *tail.
 * Returns 0, or -1 after recording an error (empty list, invalid handle). */
int rt_list_uncons(sirenrt_ctx *ctx, int64_t list, uint64_t *out, int32_t nwords, int64_t *tail, int32_t site);
/* Copies up to cap float elements of a list into out; returns the length (may exceed cap), -1 on error. */
int64_t rt_list_floats(sirenrt_ctx *ctx, int64_t list, double *out, int64_t cap, int32_t site);

/* The list slots of a frame at one resume point (or of a finished particle's result words). */
typedef struct rt_root_slot {
  uint32_t offset;  /* byte offset in the frame */
  const char *elem; /* element type descriptor */
} rt_root_slot;
typedef struct rt_rootset {
  int32_t n;
  rt_root_slot *slots;
} rt_rootset;

/* types.c */
/* Number of words of a result type descriptor, or -1 if malformed (*end = first char after it). */
int64_t rt_type_words(const char *desc, const char **end);
static inline const char *rt_skip_type(const char *desc) {
  const char *end;
  rt_type_words(desc, &end);
  return end;
}
/* The type of the words at result_offset: the result, then (tier 2) its posterior atoms. */
static inline const char *rt_frame_result(const sirenrt_model *m) {
  return m->frame_result_type ? m->frame_result_type : m->result_type;
}
/* Whether frame_result_type is the result with lists stored as views (sirenrt.h), not "P" result A. */
static inline int rt_result_views(const sirenrt_model *m) {
  return m->frame_result_type && strchr(m->frame_result_type, 'V') != NULL;
}
/* The type of the result's own words, views and all. */
static inline const char *rt_result_words_type(const sirenrt_model *m) {
  return rt_result_views(m) ? m->frame_result_type : m->result_type;
}
/* The type of the posterior atoms after the result's words (tier 2), else NULL. */
static inline const char *rt_result_atoms(const sirenrt_model *m) {
  return m->frame_result_type && !rt_result_views(m) ? rt_skip_type(m->frame_result_type + 1) : NULL;
}

/* family.c: a distribution by family id and constant parameters (categorical: probs[0 .. n)).
 * rt_family_bad: 1 with the message in msg (RT_MSG bytes) when ARCHITECTURE.md §9 refuses the parameters.
 * rt_family_draw: through the family's sampler, which checks them too (NaN with the error on ctx). */
int rt_family_bad(int family, const double *p, const double *probs, int64_t n, char *msg);
double rt_family_draw(sirenrt_ctx *ctx, int family, const double *p, const double *probs, int64_t n, int32_t site);
double rt_family_logpdf(int family, const double *p, const double *probs, int64_t n, double x);
double rt_family_mean(int family, const double *p, const double *probs, int64_t n);

/* budget.c: the accounting of a filter's memory limit (population/memory.c says what it counts).
 * rt_budget_take reserves words of the budget (1), or refuses (0); NULL is no budget (always 1).
 * rt_budget_message: the filter's error after a refused reservation ("out of memory" when none was
 * refused); rt_budget_data_message: a data file's that did not fit; rt_budget_rows_message: the rows a
 * host gave to run or step ("what") that did not (n_rows rows of n_cols columns), with a note (or NULL).  rt_arena_reserve:
 * reserves an arena's growth to *cap words (or to `need` only, lowering *cap, when that is all that
 * fits); -1 with the error recorded at `site` when not even that fits.  rt_arena_within_limit: may an
 * arena grow to hold `need` words?  Lowers *cap (the capacity it would grow to) to the share; -1 with
 * the error recorded at `site` when need exceeds it.  rt_list_within_limit: the same for a construct
 * that knows its size in advance (List.range), checked before it allocates anything and named in the
 * error. */
int rt_budget_take(rt_budget *b, uint64_t words);
void rt_budget_give(rt_budget *b, uint64_t words);
char *rt_budget_message(const rt_budget *b);
/* "4.00 MiB: 1.20 MiB for the particles' state, 2.75 MiB taken by lists, data and symbolic states" */
const char *rt_budget_state(char out[200], const rt_budget *b);
char *rt_budget_data_message(const rt_budget *b, const char *path, uint64_t need_bytes);
char *rt_budget_rows_message(const rt_budget *b, const char *what, int64_t n_rows, int64_t n_cols,
                             const char *note);
int rt_arena_reserve(sirenrt_ctx *ctx, uint64_t need, uint64_t *cap, int32_t site);
int rt_arena_within_limit(sirenrt_ctx *ctx, uint64_t need, uint64_t *cap, int32_t site);
void rt_lists_refused(sirenrt_ctx *ctx, int32_t site); /* rt_budget_message's error, at a site */
int rt_list_within_limit(sirenrt_ctx *ctx, const char *construct, int64_t elements, uint32_t cell_words,
                         int32_t site);
const char *rt_human_bytes(char out[32], double bytes); /* "11.6 GiB", "512 bytes" */

/* mh_trace.c: the MH trace, through which every random choice of a run reaches an MH chain
 * (population/mh.c) while one of its runs is in progress (mh_trace.c says how).  A site is the k-th
 * random variable a run creates; the trace holds the sites of the chain's current state and of the
 * run being made. */
typedef struct rt_mh_sites {
  int64_t n, cap;   /* sites 0..n-1 were created in the run */
  double *value;    /* valid[k]: the site's value and score */
  double *score;
  uint8_t *valid;   /* the run valued site k */
  int64_t n_valued;
  int zero;         /* some site scored -inf */
} rt_mh_sites;
typedef struct rt_mh_trace {
  rt_mh_sites cur, prop; /* the current state, and the run being made */
  int64_t deleted;      /* site of cur the running proposal must draw afresh (-1: none) */
  double reused_delta;  /* sum over reused sites of sc'(j) - sc(j) */
  int64_t *node_site;   /* symbolic node index -> site, for the run in progress */
  int64_t cap_nodes;
} rt_mh_trace;
void rt_mh_note_rv_slow(sirenrt_ctx *ctx, uint32_t node);
double rt_mh_draw(sirenrt_ctx *ctx, uint32_t node, int family, const double *p, const double *probs, int64_t n,
                  int32_t site);
double rt_mh_sample(sirenrt_ctx *ctx, int family, const double *p, const double *probs, int64_t n, int32_t site);
void rt_mh_trace_free(rt_mh_trace *t); /* its arrays; not t */
/* *a, of *cap elements of elem bytes, grown (doubling, from 16) to hold need; 0, or -1 out of memory
 * (*a as it was).  The trace's arrays grow so, and the chain's samples. */
int rt_grow(void **a, size_t elem, int64_t need, int64_t *cap);

/* ---------------------------------------------------------------- the filter's record ----- */
/* The population (population/) makes, runs and frees filters, and alone writes most of this record.
 * It is declared here because every context points to its filter, and the rooms below the population
 * read a few of its fields through ctx->filter: the model, the dense weights (rt_ctx_logw), the data
 * tables and the lists flags (values.c), the budget and a particle's share of it (budget.c, the
 * engine's pools), and the MH trace (rt_mh_on). */

/* A particle's offspring count, at most the population's size.  Four bytes, not eight: the offspring
 * pass writes one for every particle at every resampling, and the copy pass reads the parents'.  So a
 * population holds at most SIRENRT_MAX_PARTICLES (sirenrt_filter_new refuses more, as sirenc does). */
typedef int32_t rt_count;
_Static_assert(SIRENRT_MAX_PARTICLES <= INT32_MAX, "an offspring count holds any population size");

/* A tally of offspring counts as the copy pass reads them: bit i of word i / 64 of `free` is set where
 * counts[i] is 0 (a slot left free), of `extra` where it is 2 or more (a parent copied into free
 * slots); a block's bits start a word (RT_RESAMPLE_BLOCK / 64 words a block). */
typedef struct rt_bits {
  uint64_t *free, *extra;
} rt_bits;

struct sirenrt_filter {
  const sirenrt_model *model;
  int64_t n;
  uint64_t seed;
  sirenrt_options opts;
  uint32_t result_words;
  uint8_t *frames;     /* n * frame_size bytes, contiguous */
  sirenrt_ctx *ctx;    /* n contexts; slot i owns frame i */
  uint32_t epoch;      /* number of resamplings done in this run */
  int32_t rekey_lazy;  /* no particle drew in the last pass: key streams one at a time, first block on a draw */
  int32_t keys_due;    /* a resampling since the last pass, which drew: the next pass keys every stream */
  int32_t ctx_clean;   /* no context was written since rt_reset_population last reset them all: every
                        * pass since ran on lanes (loop.c), and none handed back a particle that
                        * had more to leave than a quiet finish */
  int32_t may_resume;  /* every particle may resume: all RUNNABLE (a reset) or AT_RESAMPLE (a resampling
                        * barrier after a pass where every one stopped there); the span loop then reads
                        * no state before it resumes a slot */
  int32_t mode;
  int32_t stream_open;
  rt_table *tables;    /* model->n_files tables; borrowed by estimate()'s clone */
  char **paths;        /* model->n_files paths set by sirenrt_filter_set_file (NULL: the model's); borrowed
                        * with the tables */
  int32_t owns_tables;
  double log_evidence_done; /* sum of log mean weights over finished epochs */
  int32_t failed;
  int32_t restored;    /* made by sirenrt_filter_load: an engine invariant broken later may be the checkpoint's */
  char *error;         /* rendered, "" when none */
  int32_t last_zero_site;
  double *w;           /* scratch: normalised weights */
  double *logw;        /* log weights since the last resampling, dense: the barrier's passes read
                        * and reset them without walking the contexts */
  int8_t *state;       /* what each particle's last resume returned (or SIRENRT_RUNNABLE), dense: a
                        * resampling copy writes it at a random slot, which must not cost a cache
                        * miss on the big context array */
  rt_count *counts;    /* scratch: offspring counts */
  struct rt_block *blocks; /* scratch: the barrier's blocks (rt_n_blocks(n) of them) */
  int profile;         /* SIRENRT_PROFILE set: time the loop's phases, print them when freed */
  double profile_s[7]; /* seconds resuming; in the barrier's passes (weigh, offspring, count lists and symbolic states,
                        * copy, collect the heap), and in its serial parts */
  rt_bits bits;        /* scratch: the offspring counts' tally (rt_tally_block) */
  int32_t arenas_used; /* some particle built list cells since the last barrier (values.c) */
  struct rt_heap *heap; /* the population's list cells; estimate()'s clone borrows them and the
                         * rootsets, and never collects them */
  int32_t owns_heap;
  rt_rootset *rootsets; /* by resume point: the frame's list slots there (empty past n_rootsets) */
  int32_t n_rootsets;
  rt_rootset result_roots; /* the list slots among a finished particle's result words */
  rt_root_slot *root_slots; /* storage of all the rootsets' slots */
  int32_t lists;       /* some rootset, or the result, has list slots */
  int threads;         /* particles are resumed by this many threads (pool when > 1) */
  struct rt_pool *pool;
  pthread_mutex_t table_lock; /* data files are read lazily, by whichever particle needs one first */
  char *failure;       /* the message of what failed the filter, kept until run() restarts it */
  struct rt_history_row *history; /* the run's last SIRENRT_HISTORY_ROWS resample() barriers (sirenrt_filter_history) */
  int64_t n_history, cap_history; /* n_history: every barrier of the run, also those the ring dropped */
  double history_dropped_log_evidence; /* after the latest barrier dropped */
  int64_t history_dropped_resampled;   /* how many of the dropped barriers resampled */
  double *est;         /* cached estimate (est_valid) */
  int64_t est_n;
  int32_t est_valid;
  sirenrt_progress_fn progress; /* progress.c: the host's hook, NULL when none */
  void *progress_user;
  double progress_interval, progress_last; /* seconds between calls; monotonic time of the last */
  int64_t progress_steps;       /* resampling barriers reached in this run */
  int32_t progress_countdown;   /* barriers before the next clock read */
  uint64_t arena_limit_words; /* budget.c: a particle's share of opts.memory_limit for its lists */
  rt_budget budget;    /* budget.c: the limit's pool for arenas, heap and data (the heap points here) */
  /* Symbolic values (-m ssi; symbolic_abi.c).  Under pf none of this is touched per particle. */
  int sym_used;        /* some particle holds a symbolic state (ctx->sym): set by the symbolic ABI as
                        * a state appears, cleared when a run restarts; the barrier reads it, not the
                        * contexts, so a model without symbolic values pays nothing */
  rt_rootset *symsets; /* by resume point: the frame's 'S' slots (model->sym_roots; elem "S") */
  int32_t n_symsets;
  rt_root_slot *sym_slots; /* storage of the symsets' slots */
  char *runtime_plan;  /* sirenrt_filter_runtime_plan's answer */
  struct rt_mh_chain *mh; /* set: this one-particle filter is an MH chain (mh.c), whose queries answer
                           * from the chain's samples */
  struct rt_mh_trace *mh_live; /* the chain's trace while one of its runs is in progress, else NULL:
                                * what every draw tests (rt_mh_on), through ctx->filter in the context's
                                * first cache line, so a filter without MH pays no second line */
};

/* A context's weight.  A thread's lanes run slot after slot of a pass on contexts of their own
 * (loop.c), each keyed for the slot it runs before the slot resumes: storing each lane's weight
 * address at every run of slots cost the walk about 0.3 ns a particle-step (a store into a second
 * cache line a lane), for a pointer that only a weight the runtime scores needs. */
static inline double *rt_ctx_logw(sirenrt_ctx *ctx) {
  return __builtin_expect(ctx->logw != NULL, 1) ? ctx->logw : &ctx->filter->logw[rt_rng_slot(&ctx->rng)];
}

/* The MH hooks (mh_trace.c).  Without a chain each costs rt_mh_on(): a predictable branch on a word
 * of the filter, which all its particles share (so it stays cached). */
static inline int rt_mh_on(const sirenrt_ctx *ctx) {
  return __builtin_expect(ctx->filter != NULL && ctx->filter->mh_live != NULL, 0);
}

static inline void rt_mh_note_rv(sirenrt_ctx *ctx, uint32_t node) {
  if (rt_mh_on(ctx)) rt_mh_note_rv_slow(ctx, node);
}

#endif /* SIRENRT_BASE_H */
