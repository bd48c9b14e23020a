/* budget.c — the accounting of a filter's memory limit (population/memory.c says what the limit
 * counts and why): the budget every growing structure reserves from before it allocates (young arenas,
 * the heap's chunks, data tables, symbolic node pools), a particle's share of it for its lists, and the
 * messages that name the limit when a reservation is refused. */
#include "base.h"

#include <stdio.h>

const char *rt_human_bytes(char out[32], double bytes) {
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
  snprintf(out, 200, "%s: %s for the particles' state, %s taken by lists, data and symbolic states", rt_human_bytes(lim, (double)b->limit),
           rt_human_bytes(fixed, (double)b->fixed), rt_human_bytes(used, (double)taken * sizeof(uint64_t)));
  return out;
}

#define LISTS_OUTGROW                                                                                 \
  "the lists the particles keep across resample() outgrow the filter's memory limit (%s); raise the "   \
  "limit (memory_limit, --memory-limit), use fewer particles or keep shorter lists"

char *rt_budget_message(const rt_budget *b) {
  if (!b || !__atomic_load_n(&b->over, __ATOMIC_RELAXED)) return rt_strdup_printf("error: out of memory");
  char state[200];
  return rt_strdup_printf("error: " LISTS_OUTGROW, rt_budget_state(state, b));
}

void rt_lists_refused(sirenrt_ctx *ctx, int32_t site) {
  const rt_budget *b = ctx->filter ? &ctx->filter->budget : NULL;
  if (!b || !__atomic_load_n(&b->over, __ATOMIC_RELAXED)) {
    rt_fail(ctx, site, "out of memory");
    return;
  }
  char state[200];
  rt_fail(ctx, site, LISTS_OUTGROW, rt_budget_state(state, b));
}

char *rt_budget_rows_message(const rt_budget *b, const char *what, int64_t n_rows, int64_t n_cols,
                             const char *note) {
  char state[200], need[32];
  return rt_strdup_printf("error: %s: %lld rows of %lld columns (%s) need more than the filter's memory limit "
                          "leaves (%s); raise the limit (memory_limit, --memory-limit)%s%s",
                          what, (long long)n_rows, (long long)n_cols,
                          rt_human_bytes(need, (double)n_rows * (double)(n_cols + 1) * sizeof(double)), rt_budget_state(state, b),
                          note ? ": " : "", note ? note : "");
}

char *rt_budget_data_message(const rt_budget *b, const char *path, uint64_t need_bytes) {
  char state[200], need[32];
  return rt_strdup_printf("data file '%s' needs at least %s, more than the filter's memory limit leaves (%s); "
                          "raise the limit (memory_limit, --memory-limit)",
                          path, rt_human_bytes(need, (double)need_bytes), rt_budget_state(state, b));
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
          rt_human_bytes(have, (double)need * sizeof(uint64_t)), rt_budget_state(state, &f->budget));
  return -1;
}

/* The error of a particle whose lists would outgrow its share; `what` says who needs the memory. */
static void over_share(sirenrt_ctx *ctx, int32_t site, const char *what, uint64_t need_words) {
  const sirenrt_filter *f = ctx->filter;
  char need[32], share[32], lim[32];
  rt_fail(ctx, site,
          "%s %s, more than a particle's share of the filter's memory limit (%s: %s over %lld particles); "
          "raise the limit (memory_limit, --memory-limit) or use fewer particles",
          what, rt_human_bytes(need, (double)need_words * sizeof(uint64_t)),
          rt_human_bytes(share, (double)f->arena_limit_words * sizeof(uint64_t)), rt_human_bytes(lim, (double)f->opts.memory_limit),
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
