/* lists.c — the population's side of lists (ARCHITECTURE.md, Execution model): which frame slots
 * hold list handles at each resume point (the roots), holding every particle's young cells in the
 * heap, and collecting the heap at a barrier.  The cells themselves are values.c's (a particle's young
 * arena) and heap.c's (the population's shared cells); a particle's own holding, as it stops, is
 * rt_hold_slot. */
#include "population.h"

#include <stdlib.h>

/* Counts (slots == NULL) or lists the 'L' and 'V' words of a value of type t at byte `offset`. */
static int32_t result_lists(const char *t, uint32_t *offset, rt_root_slot *slots, const char **end) {
  switch (*t) {
    case 'P': {
      const char *second;
      int32_t n = result_lists(t + 1, offset, slots, &second);
      return n + result_lists(second, offset, slots ? slots + n : NULL, end);
    }
    case 'L': {
      if (slots) *slots = (rt_root_slot){*offset, t + 1};
      *offset += 8;
      rt_type_words(t + 1, end);
      return 1;
    }
    case 'V': /* (a view's list: sirenrt.h) */
      if (slots) *slots = (rt_root_slot){*offset, t + 2};
      *offset += 8;
      *end = t + 3;
      return 1;
    case 'u':
      *end = t + 1;
      return 0;
    default:
      *offset += 8;
      *end = t + 1;
      return 0;
  }
}

/* Indexes model->roots by resume point, and the result's list words; 0, or -1 (error set). */
int rt_build_rootsets(sirenrt_filter *f) {
  const sirenrt_model *m = f->model;
  int32_t max_pc = -1;
  for (int32_t r = 0; r < m->n_roots; r++) {
    const sirenrt_root *root = &m->roots[r];
    const char *end;
    if (root->pc < 0 || root->pc > (1 << 24) || !root->type || root->type[0] != 'L' ||
        rt_type_words(root->type, &end) != 1 || *end || root->offset % 8 || root->offset + 8 > m->frame_size) {
      rt_set_last_error("model: bad list root %d", (int)r);
      return -1;
    }
    if (root->pc > max_pc) max_pc = root->pc;
  }
  const char *end;
  uint32_t offset = m->result_offset;
  int32_t n_result = result_lists(rt_frame_result(m), &offset, NULL, &end);
  f->n_rootsets = max_pc + 1;
  /* A list root's descriptor is "L<elem>": a slot keeps the element type. */
  rt_root_slot *next = rt_group_roots(m->roots, m->n_roots, f->n_rootsets, 1, (size_t)n_result, &f->rootsets,
                                      &f->root_slots);
  if (!next) return -1;
  for (int32_t pc = 0; pc < f->n_rootsets; pc++)
    if (f->rootsets[pc].n > 0) f->lists = 1;
  offset = m->result_offset;
  f->result_roots = (rt_rootset){n_result, next};
  result_lists(rt_frame_result(m), &offset, next, &end);
  if (n_result > 0) f->lists = 1;
  return 0;
}

rt_root_slot *rt_group_roots(const sirenrt_root *roots, int32_t n, int32_t n_sets, int32_t skip, size_t extra,
                             rt_rootset **sets, rt_root_slot **slots) {
  *sets = calloc((size_t)n_sets + 1, sizeof(rt_rootset));
  *slots = malloc(((size_t)n + extra + 1) * sizeof(rt_root_slot));
  if (!*sets || !*slots) {
    rt_set_last_error("out of memory");
    return NULL;
  }
  for (int32_t r = 0; r < n; r++) (*sets)[roots[r].pc].n++;
  rt_root_slot *next = *slots;
  for (int32_t pc = 0; pc < n_sets; pc++) {
    (*sets)[pc].slots = next;
    next += (*sets)[pc].n;
    (*sets)[pc].n = 0;
  }
  for (int32_t r = 0; r < n; r++) {
    rt_rootset *rs = &(*sets)[roots[r].pc];
    rs->slots[rs->n++] = (rt_root_slot){roots[r].offset, roots[r].type + skip};
  }
  return next;
}

int rt_hold_all(sirenrt_filter *f) {
  int failed = 0;
  rt_heap_next_epoch(f->heap);
  for (int64_t i = 0; i < f->n; i++) rt_hold_slot(f, 0, i, &failed);
  return failed ? -1 : 0;
}

static void run_on_pool(void *f, void (*fn)(void *, int, int), void *arg) {
  rt_run_team(f, rt_team_threads(f), fn, arg);
}

/* Calls fn on every frame word that holds a list (rt_root_walk). */
static void walk_roots(void *arg, rt_root_fn *fn, void *fn_arg) {
  sirenrt_filter *f = arg;
  for (int64_t i = 0; i < f->n; i++) {
    const rt_rootset *rs = rt_roots_now(f, i);
    uint8_t *frame = rt_frame_of(f, i);
    for (int32_t j = 0; j < rs->n; j++) fn(fn_arg, (uint64_t *)(frame + rs->slots[j].offset));
  }
}

/* held: every particle is held already (after a resampling's copies), so the contexts need not be
 * visited. */
static int collect(sirenrt_filter *f, int major, int held) {
  if (!held && rt_hold_all(f)) return rt_filter_fail(f, rt_budget_message(&f->budget));
  rt_heap_next_epoch(f->heap);
  rt_team team = {run_on_pool, f, rt_team_threads(f)};
  if (rt_heap_collect(f->heap, walk_roots, f, major, &team) == -2) return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  return 0;
}

int rt_filter_collect(sirenrt_filter *f, int major) { return collect(f, major, 0); }

int32_t sirenrt_filter_collect(sirenrt_filter *f) {
  if (!f) {
    rt_set_last_error("sirenrt_filter_collect: no filter");
    return -1;
  }
  if (f->failed) {
    rt_filter_failed(f);
    return -1;
  }
  if (!f->lists || !f->owns_heap) return 0;
  return collect(f, 1, 0) ? -1 : 0;
}

/* Collects the heap (heap.c) when enough was allocated since it last did, once every particle's cells
 * are in it.  A filter that borrows the heap (estimate()'s clone) never does: the owner's frames name
 * the cells too.  0, or 1 with the filter failed. */
int rt_collect_if_due(sirenrt_filter *f, int held) {
  if (!f->lists || !f->owns_heap || !rt_heap_collection_due(f->heap)) return 0;
  return collect(f, 0, held);
}
