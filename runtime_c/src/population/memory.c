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
#include "population.h"

#include <stdio.h>
#include <stdlib.h>
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
    rt_human_bytes(need, (double)n * (double)per);
    char advice[64] = "";
    if (fits > 0) snprintf(advice, sizeof advice, "use at most %llu particles, or ", (unsigned long long)fits);
    return rt_set_last_error("sirenrt_filter_new: %lld particles need %s for their state (%llu bytes each), more "
                             "than the memory limit of %s%s; %sraise the limit (memory_limit, --memory-limit)",
                             (long long)n, need, (unsigned long long)per, rt_human_bytes(lim, (double)*limit),
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
