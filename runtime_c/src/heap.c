/* heap.c — list cells shared by the whole population, and the young arenas they are promoted from.
 *
 * Lists are immutable, so whatever several particles have in common after resampling can be one
 * copy: a particle builds cells in its own young arena (values.c: a bump allocator, addressed by
 * index, private to the particle), and whenever it stops (at resample(), at its end, or waiting for
 * a row) the cells its frame still reaches are PROMOTED into this heap, where they stay put and are
 * named by their address.  Offspring of one parent then share the parent's cells: a resampling
 * copies the frame (a few words) and adds references, never list memory, so the barrier's cost does
 * not grow with the steps run, and a trajectory-keeping model holds the ancestral tree of its
 * particles, not N separate histories.  Promoting as a particle stops, rather than at the barrier,
 * finds its young cells still in the cache.
 *
 * Heap cells are reference counted, lazily: references from one heap cell to another are counted
 * when the referring cell is promoted; references from frames are counted only when a particle
 * stops, as its HELD roots (the list slots of its frame then, filter.c).  While it runs a particle
 * can reach only cells reachable from its held roots or from its young arena, so nothing it can
 * read is freed; when it stops it first counts its new roots and then drops its old held ones, in
 * that order, which keeps every count at least the number of references that survive, whatever
 * order the particles (and threads) take.  At a resampling barrier a particle's held roots are
 * counted once more for each extra offspring, or dropped when it has none.  A cell whose count
 * reaches zero is freed with whatever it alone kept alive.
 *
 * Young cells that are not reachable when the particle stops are never touched: the arena is reset.
 * Counts are updated with atomics (slots sharing a cell may be on different threads); cells come from
 * per-thread free lists by size, refilled from big chunks, so the barrier's passes never take a lock.
 * Under AddressSanitizer every cell is its own malloc, so that a cell used after it was freed is
 * reported, not silently recycled.
 *
 * The heap counts against the filter's memory limit (memory.c's budget) what it takes from malloc:
 * its chunks, which it keeps until it is cleared, and its big cells (and under ASan every cell),
 * which it gives back as they are freed.  A cell shared by many particles is one cell, counted once.
 * Each thread reserves from the budget a chunk's worth at a time and keeps what it has not used as
 * its credit (a thread that frees more than it allocates gives the surplus back), so the budget's
 * atomic counter is touched once per 64 KiB, not once per cell.  A reservation refused fails the
 * allocation: promotion then fails, and the filter reports the limit (filter.c, rt_budget_message).
 *
 * Symbolic values (-m ssi) do not live here: a particle's symbolic state is the engine's (sym.h), one
 * reference-counted object that offspring share the way they share list cells (filter.c counts it at
 * the barrier) and that the first offspring to write copies; list cells hold its node references as
 * plain 'S' words. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define RT_HEAP_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RT_HEAP_MALLOC 1
#endif
#endif
#ifndef RT_HEAP_MALLOC
#define RT_HEAP_MALLOC 0
#endif

enum { SMALL_CELL_WORDS = 16,            /* cells up to this size come from free lists */
       CHUNK_WORDS = 8192 };             /* 64 KiB per refill */

typedef struct heap_local {
  uint64_t *free[SMALL_CELL_WORDS + 1]; /* by total words; linked through word 1 */
  uint32_t n_free[SMALL_CELL_WORDS + 1]; /* about how many: past two chunks' worth, they are spared */
  struct rt_heap *heap;
  uint64_t *chunk;                      /* current chunk: its word 0 links to the previous one */
  uint32_t chunk_used;
  int64_t live_words;                   /* allocated minus freed by this thread (may go negative) */
  int64_t credit;                       /* words reserved from the budget and not yet allocated */
  int64_t taken;                        /* words this thread holds of the budget (may go negative) */
  rt_budget *budget;                    /* the filter's memory limit; NULL: not counted */
  int atomic;                           /* counts are shared with other threads: update them atomically */
  char pad[64];                         /* no false sharing between threads' counters */
} heap_local;

/* A thread frees the cells of the particles it holds, wherever they were allocated: with threads, one
 * may free far more than it allocates while the others take new chunks (seen: 4 threads held 12 times
 * the live cells of 1).  So a free list longer than two chunks' worth goes, whole, onto the heap's
 * SPARE lists (a stack of such batches by size, linked through the first cell's word 2, under a
 * lock taken once per batch), and a thread whose own list is empty takes a batch before a chunk. */
struct rt_heap {
  int n_locals;
  heap_local *locals;
  pthread_mutex_t lock;                  /* the spare lists' */
  uint64_t *spare[SMALL_CELL_WORDS + 1];
};

rt_heap *rt_heap_new(int threads) {
  rt_heap *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->n_locals = threads > 0 ? threads : 1;
  h->locals = calloc((size_t)h->n_locals, sizeof(heap_local));
  if (!h->locals) {
    free(h);
    return NULL;
  }
  /* A lock-prefixed add costs about 20 cycles even uncontended: a heap of one thread does without. */
  for (int k = 0; k < h->n_locals; k++) {
    h->locals[k].atomic = h->n_locals > 1;
    h->locals[k].heap = h;
  }
  pthread_mutex_init(&h->lock, NULL);
  return h;
}

void rt_heap_set_budget(rt_heap *h, rt_budget *b) {
  for (int k = 0; k < h->n_locals; k++) h->locals[k].budget = b;
}

/* Frees every chunk (and, under ASan, nothing else is left: see rt_heap_clear's callers); returns the
 * words it held of the budget. */
static int64_t free_chunks(heap_local *L) {
  uint64_t *c = L->chunk;
  while (c) {
    uint64_t *prev = (uint64_t *)(uintptr_t)c[0];
    free(c);
    c = prev;
  }
  int64_t taken = L->taken;
  heap_local keep = *L;
  memset(L, 0, sizeof *L);
  L->atomic = keep.atomic;
  L->budget = keep.budget;
  L->heap = keep.heap;
  return taken;
}

void rt_heap_clear(rt_heap *h) {
  /* A thread's share may be negative (it freed cells another took the budget for): only the sum is
   * what the heap holds. */
  int64_t taken = 0;
  for (int k = 0; k < h->n_locals; k++) taken += free_chunks(&h->locals[k]);
  memset(h->spare, 0, sizeof h->spare); /* their cells lay in the chunks */
  if (h->n_locals > 0 && taken > 0) rt_budget_give(h->locals[0].budget, (uint64_t)taken);
}

void rt_heap_free(rt_heap *h) {
  if (!h) return;
  rt_heap_clear(h);
  pthread_mutex_destroy(&h->lock);
  free(h->locals);
  free(h);
}

int64_t rt_heap_live_words(const rt_heap *h) {
  int64_t total = 0;
  for (int k = 0; k < h->n_locals; k++) total += h->locals[k].live_words;
  return total;
}

/* Takes `words` of the budget for this thread: from its credit, else a chunk's worth (or what is
 * needed, when that is all the budget has left) from the budget.  0 when refused. */
static int reserve(heap_local *L, uint32_t words) {
  if (!L->budget) return 1;
  if (L->credit >= (int64_t)words) {
    L->credit -= words;
    return 1;
  }
  uint64_t need = (uint64_t)((int64_t)words - L->credit);
  uint64_t take = need > CHUNK_WORDS ? need : CHUNK_WORDS;
  if (!rt_budget_take(L->budget, take)) {
    if (take == need || !rt_budget_take(L->budget, need)) {
      __atomic_store_n(&L->budget->over, 1, __ATOMIC_RELAXED); /* the filter's error names the limit */
      return 0;
    }
    take = need;
  }
  L->taken += (int64_t)take;
  L->credit += (int64_t)take - words;
  return 1;
}

/* Returns `words` to this thread's credit, and a surplus above two chunks to the budget. */
static void unreserve(heap_local *L, uint32_t words) {
  if (!L->budget) return;
  L->credit += words;
  if (L->credit > 2 * CHUNK_WORDS) {
    int64_t give = L->credit - CHUNK_WORDS;
    rt_budget_give(L->budget, (uint64_t)give);
    L->taken -= give;
    L->credit -= give;
  }
}

/* A batch of free cells of `words` words from the spare lists, as this thread's free list; NULL if none. */
static uint64_t *take_spare(heap_local *L, uint32_t words) {
  rt_heap *h = L->heap;
  pthread_mutex_lock(&h->lock);
  uint64_t *batch = h->spare[words];
  if (batch) __atomic_store_n(&h->spare[words], (uint64_t *)(uintptr_t)batch[2], __ATOMIC_RELAXED);
  pthread_mutex_unlock(&h->lock);
  L->free[words] = batch;
  L->n_free[words] = 0; /* not known: it only decides when to spare again */
  return batch;
}

/* This thread's free list of `words`-word cells onto the spare lists. */
static void give_spare(heap_local *L, uint32_t words) {
  rt_heap *h = L->heap;
  uint64_t *batch = L->free[words];
  pthread_mutex_lock(&h->lock);
  batch[2] = (uint64_t)(uintptr_t)h->spare[words];
  __atomic_store_n(&h->spare[words], batch, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&h->lock);
  L->free[words] = NULL;
  L->n_free[words] = 0;
}

/* A cell of `words` words, NULL when malloc or the budget refuses. */
static uint64_t *heap_alloc(heap_local *L, uint32_t words) {
  if (RT_HEAP_MALLOC || words > SMALL_CELL_WORDS) {
    if (!reserve(L, words)) return NULL;
    uint64_t *cell = malloc((size_t)words * sizeof(uint64_t));
    if (!cell) {
      unreserve(L, words);
      return NULL;
    }
    L->live_words += words;
    return cell;
  }
  L->live_words += words;
  uint64_t *cell = L->free[words];
  if (!cell && L->heap->n_locals > 1 && __atomic_load_n(&L->heap->spare[words], __ATOMIC_RELAXED))
    cell = take_spare(L, words);
  if (cell) {
    /* Freed cells lie anywhere and are cold: fetch the next one now, so that the next particle's
     * allocation (about a particle's work from now) finds it in the cache. */
    L->free[words] = (uint64_t *)(uintptr_t)cell[1];
    if (L->n_free[words]) L->n_free[words]--;
    if (L->free[words]) __builtin_prefetch(L->free[words], 1);
    return cell;
  }
  if (!L->chunk || L->chunk_used + words > CHUNK_WORDS) {
    if (!reserve(L, CHUNK_WORDS)) {
      L->live_words -= words;
      return NULL;
    }
    uint64_t *c = malloc(CHUNK_WORDS * sizeof(uint64_t));
    if (!c) {
      unreserve(L, CHUNK_WORDS);
      L->live_words -= words;
      return NULL;
    }
    c[0] = (uint64_t)(uintptr_t)L->chunk;
    L->chunk = c;
    L->chunk_used = 1;
  }
  cell = L->chunk + L->chunk_used;
  L->chunk_used += words;
  return cell;
}

static void heap_release_cell(heap_local *L, uint64_t *cell) {
  uint32_t words = RT_CELL_WORDS(cell[0]);
  L->live_words -= words;
  if (RT_HEAP_MALLOC || words > SMALL_CELL_WORDS) {
    free(cell);
    unreserve(L, words);
    return;
  }
  cell[0] = 0; /* no longer a list cell: a stale handle to it is refused, not read */
  cell[1] = (uint64_t)(uintptr_t)L->free[words];
  L->free[words] = cell;
  if (++L->n_free[words] * words >= 2 * CHUNK_WORDS && L->heap->n_locals > 1) give_spare(L, words);
}

static void retain(const heap_local *L, int64_t h, int64_t refs) {
  if (!rt_is_heap(h)) return;
  if (L->atomic)
    __atomic_add_fetch(&rt_heap_cell(h)[1], (uint64_t)refs, __ATOMIC_RELAXED);
  else
    rt_heap_cell(h)[1] += (uint64_t)refs;
}

void rt_heap_retain(int64_t h, int64_t refs) {
  if (rt_is_heap(h)) __atomic_add_fetch(&rt_heap_cell(h)[1], (uint64_t)refs, __ATOMIC_RELAXED);
}

int64_t rt_heap_new_cell(rt_heap *heap, int k, uint32_t payload, uint32_t len) {
  uint64_t *cell = heap_alloc(&heap->locals[k], 2 + payload);
  if (!cell) return SIRENRT_NIL;
  cell[0] = RT_HEADER(RT_KIND_LIST, payload, len);
  cell[1] = 0;
  return (int64_t)(uintptr_t)cell;
}

/* ------------------------------------------------------------------ promotion ------------------ */

typedef struct promoter {
  heap_local *L;
  sirenrt_ctx *ctx; /* whose young arena */
  int failed;
} promoter;

static const char *each_list(uint64_t *words, const char *t, rt_list_word_fn *fn, void *arg, uint32_t *n) {
  switch (*t) {
    case 'P': return each_list(words, each_list(words, t + 1, fn, arg, n), fn, arg, n);
    case 'L':
      fn(arg, words + (*n)++, t + 1);
      return rt_skip_type(t + 1);
    case 'u': return t + 1;
    default: (*n)++; return t + 1;
  }
}

uint32_t rt_each_list(uint64_t *words, const char *t, rt_list_word_fn *fn, void *arg) {
  uint32_t n = 0;
  each_list(words, t, fn, arg, &n);
  return n;
}

static int64_t promote_list(promoter *p, int64_t h, const char *elem);

static void promote_word(void *p, uint64_t *word, const char *elem) {
  *word = (uint64_t)promote_list(p, (int64_t)*word, elem);
}

/* The heap handle of list h, holding one more counted reference for the caller.  Young cells are
 * moved (once: a moved cell's aux word forwards to its heap copy), spines iteratively, nested lists
 * recursively by type depth; heap, shared and nil lists are returned as they are. */
static int64_t promote_list(promoter *p, int64_t h, const char *elem) {
  int64_t head = h;
  uint64_t *link = NULL; /* tail word of the last cell moved, still naming a young cell */
  while (rt_is_young(h)) {
    uint64_t *young = p->ctx->arena + rt_young_index(h);
    int64_t moved = (int64_t)young[1];
    int forwarded = moved != 0;
    if (forwarded) {
      retain(p->L, moved, 1);
    } else {
      uint32_t words = RT_CELL_WORDS(young[0]);
      uint64_t *cell = heap_alloc(p->L, words);
      if (!cell) {
        p->failed = 1;
        moved = SIRENRT_NIL; /* the frame is abandoned: the filter fails */
        forwarded = 1;
      } else {
        memcpy(cell, young, (size_t)words * sizeof(uint64_t));
        cell[1] = 1;
        moved = (int64_t)(uintptr_t)cell;
        young[1] = (uint64_t)moved;
      }
    }
    if (link) *link = (uint64_t)moved;
    else head = moved;
    if (forwarded) return head; /* the rest of this spine is promoted and counted already */
    uint64_t *cell = rt_heap_cell(moved);
    rt_each_list(cell + 3, elem, promote_word, p);
    link = cell + 2;
    h = (int64_t)*link;
  }
  retain(p->L, h, 1); /* the last moved cell's reference to its tail, or else the caller's */
  return head;
}

/* ------------------------------------------------------------------ release -------------------- */

static void release_list(heap_local *L, int64_t h, const char *elem);

static void release_word(void *L, uint64_t *word, const char *elem) { release_list(L, (int64_t)*word, elem); }

/* Drops one reference to heap list h; frees the cells it alone kept, spines iteratively. */
static void release_list(heap_local *L, int64_t h, const char *elem) {
  while (rt_is_heap(h)) {
    uint64_t *cell = rt_heap_cell(h);
    if ((L->atomic ? __atomic_sub_fetch(&cell[1], 1, __ATOMIC_ACQ_REL) : --cell[1]) != 0) return;
    if (*elem == 'L' || *elem == 'P') rt_each_list(cell + 3, elem, release_word, L);
    h = (int64_t)cell[2];
    heap_release_cell(L, cell);
  }
}

/* ------------------------------------------------------------------ a particle that stops -------- */

void rt_heap_hold(rt_heap *heap, int k, sirenrt_ctx *ctx, uint8_t *frame, const rt_rootset *now, int64_t *held,
                  const rt_rootset *before, int *failed) {
  heap_local *L = &heap->locals[k];
  promoter p = {L, ctx, 0};
  /* A root that still holds what it held when the particle last stopped would get +1 and -1: the
   * common case, so it is skipped both ways. */
  int same = before == now;
  for (int32_t j = 0; j < now->n; j++) {
    uint64_t *slot = (uint64_t *)(frame + now->slots[j].offset);
    if (same && (int64_t)*slot == held[j]) continue;
    *slot = (uint64_t)promote_list(&p, (int64_t)*slot, now->slots[j].elem);
  }
  for (int32_t j = 0; before && j < before->n; j++)
    if (!(same && (int64_t)*(uint64_t *)(frame + now->slots[j].offset) == held[j]))
      release_list(L, held[j], before->slots[j].elem);
  for (int32_t j = 0; j < now->n; j++) held[j] = (int64_t)*(uint64_t *)(frame + now->slots[j].offset);
  ctx->arena_used = 0;
  if (p.failed) *failed = 1;
}

void rt_heap_retain_held(const int64_t *held, int32_t n, int64_t refs) {
  for (int32_t j = 0; j < n; j++) rt_heap_retain(held[j], refs);
}

void rt_heap_release_held(rt_heap *heap, int k, const int64_t *held, const rt_rootset *rs) {
  for (int32_t j = 0; j < rs->n; j++) release_list(&heap->locals[k], held[j], rs->slots[j].elem);
}
