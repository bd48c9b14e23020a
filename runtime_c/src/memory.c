/* memory.c — a filter's memory limit (sirenrt_options.memory_limit; issue 11).
 *
 * A filter may use at most `memory_limit` bytes: by default half of the machine's memory (or of the
 * container's limit, where that is smaller).  Everything below is counted before it is allocated:
 *  - the population's fixed state (frames, contexts, weights and the barrier's scratch arrays), when
 *    the filter is made: too many particles is an error of sirenrt_filter_new that names the limit
 *    and the largest count that fits;
 *  - what is left, the filter's BUDGET (rt_budget), is one pool for everything that grows while it
 *    runs: the particles' young arenas (by capacity), the population's heap of list cells (by the
 *    chunks and big cells it holds, shared cells once), the data files' tables and the symbolic
 *    states' node pools (sym.c; a state shared by offspring once).  A young arena
 *    may besides grow to no more than an equal share of the pool (the particles of a filter run one
 *    program, so they need about the same), so that one particle cannot starve the others.
 * A list operation that would take more fails at its site, as any run-time error; a promotion into
 * the heap at a barrier fails the filter with a message naming the limit (a heap cell does not know
 * the site that built it); a data file that does not fit fails at its File.read.
 * The rows a host passes to run() or step() are counted as a data file's are: a stream holds every
 * row it was given (particles and checkpoints may refer to any of them), so it stops with the limit's
 * message once they fill it.  Not counted: the copy of the population that estimate() advances while a
 * stream is open. */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes of fixed state per particle: its frame, its context and one entry of each per-particle
 * array rt_alloc_population makes (w, logw; counts; state; two bits, rounded up to a byte). */
static uint64_t bytes_per_particle(const sirenrt_model *m) {
  return (uint64_t)m->frame_size + sizeof(sirenrt_ctx) + 2 * sizeof(double) + sizeof(rt_count) + 2;
}

/* A cgroup's memory limit in bytes (v2 memory.max, v1 memory.limit_in_bytes), 0 when none is set. */
static uint64_t cgroup_limit(void) {
  static const char *const paths[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    FILE *fp = fopen(paths[i], "r");
    if (!fp) continue;
    unsigned long long v = 0;
    int got = fscanf(fp, "%llu", &v); /* "max" (no limit) reads nothing */
    fclose(fp);
    if (got == 1 && v > 0) return (uint64_t)v;
  }
  return 0;
}

uint64_t rt_default_memory_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t machine = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)1 << 32;
  uint64_t group = cgroup_limit();
  if (group && group < machine) machine = group;
  return machine / 2;
}

/* "11.6 GiB", "512 bytes". */
static const char *human(char out[32], double bytes) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  double v = bytes;
  int u = 0;
  while (v >= 1024.0 && u < 8) {
    v /= 1024.0;
    u++;
  }
  if (u == 0) snprintf(out, 32, "%.0f bytes", v);
  else snprintf(out, 32, "%.*f %s", v < 10.0 ? 2 : v < 100.0 ? 1 : 0, v, units[u]);
  return out;
}

/* The fixed state of n particles in bytes, or UINT64_MAX when it exceeds `limit` (n * per may not fit
 * 64 bits, so that is checked by division first). */
static uint64_t fixed_bytes(uint64_t n, uint64_t per, uint64_t limit) {
  if (n > limit / per) return UINT64_MAX;
  uint64_t bytes = n * per + (uint64_t)rt_n_blocks((int64_t)n) * sizeof(rt_block);
  return bytes <= limit ? bytes : UINT64_MAX;
}

int rt_plan_memory(const sirenrt_model *m, int64_t n, int64_t requested, uint64_t *limit, uint64_t *share_words,
                   rt_budget *budget) {
  if (requested < 0)
    return rt_set_last_error("sirenrt_filter_new: memory_limit must be a number of bytes > 0 (0: the default), "
                             "got %lld", (long long)requested), -1;
  *limit = requested > 0 ? (uint64_t)requested : rt_default_memory_limit();
  uint64_t per = bytes_per_particle(m);
  uint64_t fixed = fixed_bytes((uint64_t)n, per, *limit);
  if (fixed == UINT64_MAX) {
    /* The largest count that fits: a close guess, then exact steps. */
    uint64_t fits = (uint64_t)((double)*limit / ((double)per + (double)sizeof(rt_block) / RT_RESAMPLE_BLOCK));
    while (fits > 0 && fixed_bytes(fits, per, *limit) == UINT64_MAX) fits--;
    while (fixed_bytes(fits + 1, per, *limit) != UINT64_MAX) fits++;
    char need[32], lim[32];
    human(need, (double)n * (double)per);
    char advice[64] = "";
    if (fits > 0) snprintf(advice, sizeof advice, "use at most %llu particles, or ", (unsigned long long)fits);
    return rt_set_last_error("sirenrt_filter_new: %lld particles need %s for their state (%llu bytes each), more "
                             "than the memory limit of %s%s; %sraise the limit (memory_limit, --memory-limit)",
                             (long long)n, need, (unsigned long long)per, human(lim, (double)*limit),
                             requested > 0 ? "" : " (half the machine's memory)", advice), -1;
  }
  if ((uint64_t)n > RT_MAX_FRAME_BYTES / m->frame_size)
    return rt_set_last_error("sirenrt_filter_new: %lld particles of %u bytes each exceed the runtime's limit of 2**40 "
                             "bytes of particle state; use at most %llu particles",
                             (long long)n, m->frame_size,
                             (unsigned long long)(RT_MAX_FRAME_BYTES / m->frame_size)), -1;
  uint64_t share = (*limit - fixed) / (uint64_t)n / sizeof(uint64_t);
  *share_words = share < UINT32_MAX ? share : UINT32_MAX;
  *budget = (rt_budget){.words = (*limit - fixed) / sizeof(uint64_t), .used = 0, .over = 0,
                        .limit = *limit, .fixed = fixed};
  return 0;
}

/* ------------------------------------------------------------------ the budget ----------------- */

/* Atomic always: its callers (an arena doubling, a heap chunk, a data table growing) are rare next
 * to what they allocate, and may run on any of the particles' threads at once. */
int rt_budget_take(rt_budget *b, uint64_t words) {
  if (!b || words == 0) return 1;
  uint64_t before = __atomic_fetch_add(&b->used, words, __ATOMIC_RELAXED);
  if (before + words <= b->words && before + words >= before) return 1;
  __atomic_sub_fetch(&b->used, words, __ATOMIC_RELAXED);
  return 0;
}

void rt_budget_give(rt_budget *b, uint64_t words) {
  if (b && words) __atomic_sub_fetch(&b->used, words, __ATOMIC_RELAXED);
}

/* "(4.00 MiB: 1.20 MiB for the particles' state, 2.75 MiB taken by lists, data and symbolic states)" */
const char *rt_budget_state(char out[200], const rt_budget *b) {
  char lim[32], fixed[32], used[32];
  uint64_t taken = __atomic_load_n(&b->used, __ATOMIC_RELAXED);
  snprintf(out, 200, "%s: %s for the particles' state, %s taken by lists, data and symbolic states", human(lim, (double)b->limit),
           human(fixed, (double)b->fixed), human(used, (double)taken * sizeof(uint64_t)));
  return out;
}

char *rt_budget_message(const rt_budget *b) {
  if (!b || !__atomic_load_n(&b->over, __ATOMIC_RELAXED)) return rt_strdup_printf("error: out of memory");
  char state[200];
  return rt_strdup_printf("error: the lists the particles keep across resample() outgrow the filter's memory limit "
                          "(%s); raise the limit (memory_limit, --memory-limit), use fewer particles or keep "
                          "shorter lists", rt_budget_state(state, b));
}

char *rt_budget_rows_message(const rt_budget *b, const char *what, int64_t n_rows, int64_t n_cols) {
  char state[200], need[32];
  return rt_strdup_printf("error: %s: %lld rows of %lld columns (%s) need more than the filter's memory limit "
                          "leaves (%s); raise the limit (memory_limit, --memory-limit)%s",
                          what, (long long)n_rows, (long long)n_cols,
                          human(need, (double)n_rows * (double)(n_cols + 1) * sizeof(double)), rt_budget_state(state, b),
                          strcmp(what, "step") == 0 ? ": a stream keeps every row it is given" : "");
}

char *rt_budget_data_message(const rt_budget *b, const char *path, uint64_t need_bytes) {
  char state[200], need[32];
  return rt_strdup_printf("data file '%s' needs at least %s, more than the filter's memory limit leaves (%s); "
                          "raise the limit (memory_limit, --memory-limit)",
                          path, human(need, (double)need_bytes), rt_budget_state(state, b));
}

int rt_arena_reserve(sirenrt_ctx *ctx, uint64_t need, uint64_t *cap, int32_t site) {
  sirenrt_filter *f = ctx->filter;
  if (!f) return 0;
  if (rt_budget_take(&f->budget, *cap - ctx->arena_cap)) return 0;
  /* Not room to double: perhaps for what this operation needs. */
  if (need < *cap && rt_budget_take(&f->budget, need - ctx->arena_cap)) {
    *cap = need;
    return 0;
  }
  char have[32], state[200];
  rt_fail(ctx, site,
          "this particle's lists would grow to %s, more than the filter's memory limit leaves (%s); raise the "
          "limit (memory_limit, --memory-limit), use fewer particles or keep shorter lists",
          human(have, (double)need * sizeof(uint64_t)), rt_budget_state(state, &f->budget));
  return -1;
}

/* The error of a particle whose lists would outgrow its share; `what` says who needs the memory. */
static void over_share(sirenrt_ctx *ctx, int32_t site, const char *what, uint64_t need_words) {
  const sirenrt_filter *f = ctx->filter;
  char need[32], share[32], lim[32];
  rt_fail(ctx, site,
          "%s %s, more than a particle's share of the filter's memory limit (%s: %s over %lld particles); "
          "raise the limit (memory_limit, --memory-limit) or use fewer particles",
          what, human(need, (double)need_words * sizeof(uint64_t)),
          human(share, (double)f->arena_limit_words * sizeof(uint64_t)), human(lim, (double)f->opts.memory_limit),
          (long long)f->n);
}

int rt_arena_within_limit(sirenrt_ctx *ctx, uint64_t need, uint64_t *cap, int32_t site) {
  const sirenrt_filter *f = ctx->filter;
  if (!f) return 0; /* sirenrt_sample_many's particles have no filter and no limit */
  if (need > f->arena_limit_words) {
    over_share(ctx, site, "this particle's lists would grow to", need);
    return -1;
  }
  if (*cap > f->arena_limit_words) *cap = f->arena_limit_words; /* growth stops at the share */
  return 0;
}

int rt_list_within_limit(sirenrt_ctx *ctx, const char *construct, int64_t elements, uint32_t cell_words,
                         int32_t site) {
  const sirenrt_filter *f = ctx->filter;
  uint64_t need = (uint64_t)ctx->arena_used + (uint64_t)elements * cell_words;
  if (!f || need <= f->arena_limit_words) return 0;
  char what[96];
  snprintf(what, sizeof what, "%s: %lld elements need", construct, (long long)elements);
  over_share(ctx, site, what, need);
  return -1;
}
