/* heap.c — list cells shared by the whole population, and the young arenas they are promoted from.
 *
 * Lists are immutable, so whatever several particles have in common after resampling can be one
 * copy: a particle builds cells in its own young arena (values.c: a bump allocator, addressed by
 * index, private to the particle), and whenever it stops (at resample(), at its end, or waiting for
 * a row) the cells its frame still reaches are PROMOTED into this heap, where they are named by their
 * address.  Offspring of one parent then share the parent's cells: a resampling copies the frame (a
 * few words), never list memory, and a trajectory-keeping model holds the ancestral tree of its
 * particles, not N separate histories.  Promoting as a particle stops finds its young cells still in
 * the cache.  A particle that runs on a lane of the compiled loop (loop.c) conses straight into this
 * heap instead (nursery_cons: the cell it would have been promoted to, made in place), so that a
 * trajectory's cell is written once, not written young and copied: its young arena then holds only
 * the lists the runtime builds (List.rev, literals) and cells whose elements hold lists.
 *
 * Nothing counts references.  The heap is collected, now and then at a barrier, by a compacting
 * collector that needs no pass over any particle's list, only passes over the heap's memory in
 * address order.  What makes that possible is the order cells are allocated in: a cell is promoted
 * after every cell it refers to (its tail and the lists among its elements are promoted first), a
 * thread's cells lie in its chunks in allocation order, and a cell made by one thread in one EPOCH
 * (a pass of the population, or a phase of a barrier: rt_heap_next_epoch) refers only to that
 * thread's earlier cells of the epoch or to cells of earlier epochs.  So the RUNS (a thread's cells
 * of one epoch in one chunk), ordered by epoch, list the cells so that every reference points back.
 * The collector then
 *   1. marks the cells the frames reach (a bit in the cell), and sweeps the runs from the newest
 *      cell to the oldest: a marked cell marks what it refers to, which lies further on in the
 *      sweep, so one pass finds every live cell;
 *   2. copies the marked cells, oldest first, into fresh chunks, rewriting each reference through
 *      the forwarding address the referred cell (copied before it) left behind, then the frames;
 *      the sweep leaves a bit a cell for the live ones, so the copy reads only them (most of a
 *      trajectory's young cells are dead by then: the walk keeping its trajectory, collection
 *      7.1 -> 5.5 ns a particle-step at N = 10^4, 12.4 -> 10.8 at 10^5, SIRENRT_PROFILE);
 *   3. frees the old chunks.
 * The copies keep the order (they are one run, older than anything allocated after), so the next
 * collection sweeps them the same way, and the cells of one generation of a trajectory stay next to
 * each other in slot order, which the next pass reads them in.  A collection costs the heap's size,
 * and runs once the words allocated since the last one pass a multiple of what it left live (and a
 * floor), so the heap stays within a constant factor of its live cells and the work per promoted cell
 * is a small constant.
 * Resampling touches no list: dead particles' cells are garbage the next collection leaves behind.
 * The collector is generational: a minor collection sweeps and copies only the cells promoted since
 * the last one (the mature ones cannot refer to them, so they need no marking and do not move), a
 * major one everything.  It runs on the filter's threads: the runs of one epoch refer to no other
 * thread's runs of that epoch, so each epoch's runs are swept (and copied, each thread into its own
 * share of the mature generation) at once, the epochs one after another.  The list-returning walk at
 * N = 10^6 on 2 threads: 1.38x -> 1.82x the speed of 1 (benchmarks/trajectory.py).
 *
 * A cell's aux word (word 1) tells the collector which of its element words are lists: it holds the
 * element type's descriptor (a string that lives as long as the model, or one the heap interned for a
 * checkpoint), RT_CELL_HAS_LISTS when that type contains a list, and the mark bit RT_CELL_MARK.  In
 * a young cell it is 0 until promotion makes it the forwarding address.
 *
 * The heap counts against the filter's memory limit (memory.c; budget.c's rt_budget) the chunks it takes from
 * malloc.  Each thread reserves from the budget a chunk's worth at a time and keeps what it has not
 * used as its credit, so the budget's atomic counter is touched once per chunk, not once per cell.  A
 * reservation refused fails the allocation: promotion then fails, and the filter reports the limit
 * (loop.c, barrier.c: rt_budget_message).  A collection reserves its copies' chunks before it moves anything,
 * and is skipped when the budget cannot give them.
 *
 * Symbolic values (-m ssi) do not live here: a particle's symbolic state is the engine's (sym.h), one
 * reference-counted object that offspring share (barrier.c counts it at the barrier) and that the
 * first offspring to write copies; list cells hold its node references as plain 'S' words. */
#define _DEFAULT_SOURCE /* posix_memalign, madvise's MADV_HUGEPAGE */
#include "population.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { FIRST_CHUNK_WORDS = 512,  /* a thread's first chunk: small filters take little */
       FLOOR_WORDS = 1 << 17 };  /* no collection before this many words were allocated (1 MiB) */

#define RT_CELL_MARK (UINT64_C(1) << 63)
#define RT_CELL_HAS_LISTS (UINT64_C(1) << 62)
#define RT_CELL_MATURE (UINT64_C(1) << 61)
#define RT_CELL_TYPE_BITS (RT_CELL_MATURE - 1)

/* A chunk of cells: cells from the front; each cell's word offset, a uint32, from the back (so the
 * sweep can walk the cells backwards), written only for the cells of mixed runs (run.stride). */
typedef struct chunk {
  struct chunk *prev; /* the chunk allocated before this one in the same chain */
  uint32_t cap;       /* words after the header */
  uint32_t used;      /* words taken by cells */
  uint32_t n_cells;
  uint32_t pad;
  uint64_t words[];
} chunk;

/* Chunks double up to CHUNK_BYTES, a huge page, which the kernel is asked to back as one
 * (MADV_HUGEPAGE) for the first HUGE_BYTES of a heap: at 64 KiB chunks of 4 KiB pages, the page
 * faults of the heap's fresh memory and the TLB misses of cells spread over megabytes took the walk
 * keeping its trajectory 32 -> 26 ns a particle-step at N = 10^4 and 40 -> 31 at 10^5
 * (benchmarks/trajectory.py's `kept`, against GLIBC_TUNABLES=glibc.malloc.hugetlb=1 for the same
 * effect).  Past that, fresh huge pages cost more than they save: at N = 10^6, 1.5 GiB of them took
 * the walk returning its trajectory from 45-48 to 49-65 ns (the kernel clearing pages: 7 -> 24% of the
 * run), and chunks there are plain memory. */
enum { CHUNK_BYTES = 1 << 21, CHUNK_WORDS = (CHUNK_BYTES - sizeof(chunk)) / sizeof(uint64_t) };
#define HUGE_BYTES (UINT64_C(256) << 20)

static uint32_t *chunk_offsets(chunk *c) { return (uint32_t *)(c->words + c->cap); } /* offsets[-1 - i] */
static uint64_t *chunk_cell(chunk *c, uint32_t i) { return c->words + chunk_offsets(c)[-1 - (int64_t)i]; }
static uint64_t chunk_free_words(const chunk *c) {
  return (uint64_t)c->cap - c->used - ((uint64_t)c->n_cells * 4 + 7) / 8;
}

/* Cells [first, next run's first or n_cells) of chunk c, allocated in epoch `epoch`.  While every
 * cell of a run has the same size (a trajectory's, one a particle), `stride` is that size and the
 * run's cells lie at base, base + stride, ...: their offsets are not written (a write stream
 * beside the cells' and a read in the sweep: the walk keeping its trajectory at N = 10^5,
 * 30.0-31.7 -> 29.6-29.8 ns a particle-step, collection 9.5-9.9 -> 8.9-9.3; unchanged at 10^4).
 * A cell of another size writes them all and makes the run mixed (stride 0: run_mixed). */
typedef struct run {
  chunk *c;
  uint32_t first;
  uint32_t local;
  uint64_t epoch;
  uint32_t base;   /* the word offset of its first cell */
  uint32_t stride; /* its cells' words, 0 when they differ, RUN_EMPTY before the first */
} run;

#define RUN_EMPTY UINT32_MAX

static uint64_t *run_cell(const run *r, uint32_t i) {
  return r->stride ? r->c->words + r->base + (uint64_t)(i - r->first) * r->stride : chunk_cell(r->c, i);
}

typedef struct heap_local {
  rt_nursery nursery;    /* first: the lanes' conses (rt_heap_nursery) */
  struct rt_heap *heap;
  chunk *chunk;          /* the current chunk, the newest of the chain (prev links) */
  uint32_t next_cap;     /* the size of the next chunk */
  run *runs;             /* this thread's runs, in allocation order */
  run *open;             /* the newest, which the current chunk's next cell joins (NULL: none) */
  int64_t n_runs, cap_runs;
  uint64_t open_epoch;   /* the newest run's epoch (0: no run), which the current chunk holds */
  int64_t words;         /* cell words this thread's chunks hold */
  int64_t chunk_words;   /* words of its chunks */
  int64_t credit;        /* words reserved from the budget and not yet taken by a chunk */
  int64_t taken;         /* words this thread holds of the budget */
  rt_budget *budget;     /* the filter's memory limit; NULL: not counted */
  int64_t *stack;        /* promotion's young spines */
  int64_t n_stack, cap_stack;
  int failed;            /* an allocation was refused */
  const char *last_elem; /* the element type promoted last, and its cells' aux word */
  uint64_t last_aux;
  uint32_t id;           /* the thread, in runs' `local` */
  chunk *spare;          /* (a young local's) full-size chunks a collection freed, for this thread's next
                          * chunks and copies (local_retire) */
  int64_t spare_words;
  uint64_t huge_bytes;   /* (a young local's) its thread's chunks asked to be huge pages (chunk_malloc) */
  int64_t fresh, reused; /* (a young local's) its thread's chunks taken from malloc, and from the spares */
  char pad[64];          /* no false sharing between threads' counters */
} heap_local;

struct rt_heap {
  int n_locals;
  heap_local *locals;    /* each thread's young generation */
  heap_local *mature;    /* each thread's share of what collections kept: older than every young cell */
  uint64_t epoch;
  int64_t mature_after_major; /* mature words the last major collection left */
  int64_t kept_by_minor; /* words the last minor collection moved to the mature generation */
  uint32_t chunk_cap;    /* the chunks' largest size: CHUNK_WORDS, less under a small memory limit */
  char **types;          /* descriptors interned for checkpoints */
  int32_t n_types;
};

rt_heap *rt_heap_new(int threads) {
  rt_heap *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->n_locals = threads > 0 ? threads : 1;
  h->locals = calloc((size_t)h->n_locals, sizeof(heap_local));
  h->mature = calloc((size_t)h->n_locals, sizeof(heap_local));
  if (!h->locals || !h->mature) {
    free(h->locals);
    free(h->mature);
    free(h);
    return NULL;
  }
  for (int k = 0; k < h->n_locals; k++) {
    h->locals[k] = (heap_local){.heap = h, .next_cap = FIRST_CHUNK_WORDS, .id = (uint32_t)k};
    h->mature[k] = (heap_local){.heap = h, .next_cap = FIRST_CHUNK_WORDS, .id = (uint32_t)k};
  }
  h->epoch = 1;
  h->chunk_cap = CHUNK_WORDS;
  return h;
}

/* Each thread's generations end in a chunk partly used, and a collection reserves two more for its
 * copies: under a limit where chunks of CHUNK_WORDS would be more than a 32nd of it a thread, they
 * stop growing there (at the least at SMALL_CAP), which is the memory the collector may waste. */
enum { SMALL_CAP = 8192 };

void rt_heap_set_budget(rt_heap *h, rt_budget *b) {
  for (int k = 0; k < h->n_locals; k++) h->locals[k].budget = h->mature[k].budget = b;
  uint64_t share = b ? b->words / (32 * (uint64_t)h->n_locals) : CHUNK_WORDS;
  h->chunk_cap = share >= CHUNK_WORDS ? CHUNK_WORDS : share > SMALL_CAP ? (uint32_t)share : SMALL_CAP;
}

void rt_heap_next_epoch(rt_heap *h) { h->epoch++; }

/* Takes `words` of the budget for this thread: from its credit, else what is needed from the budget.
 * 0 when refused. */
static int reserve(heap_local *L, uint64_t words) {
  if (!L->budget) return 1;
  if (L->credit >= (int64_t)words) {
    L->credit -= (int64_t)words;
    return 1;
  }
  uint64_t need = words - (uint64_t)L->credit;
  if (!rt_budget_take(L->budget, need)) {
    __atomic_store_n(&L->budget->over, 1, __ATOMIC_RELAXED); /* the filter's error names the limit */
    return 0;
  }
  L->taken += (int64_t)need;
  L->credit = 0;
  return 1;
}

/* Frees a chain of chunks; returns their words. */
static int64_t free_chain(chunk *c) {
  int64_t words = 0;
  while (c) {
    chunk *prev = c->prev;
    words += c->cap;
    free(c);
    c = prev;
  }
  return words;
}

/* Forgets every chunk of L (they are freed or handed on by the caller). */
static void local_forget(heap_local *L) {
  L->chunk = NULL;
  L->n_runs = 0;
  L->open = NULL;
  L->open_epoch = 0;
  L->words = 0;
  L->chunk_words = 0;
}

/* Frees L's chunks, but keeps full-size ones as its thread's spares while the spares hold fewer
 * than `keep` words; returns the words L held of the budget (spares hold none).  A collection keeps
 * as many as the young generation it ends held, about what the next one will take before it is
 * collected: a chunk freed and taken again from malloc was fresh memory the kernel had to fault in
 * again, and so is every chunk of a generation that starts small again (its chunks' size goes on
 * where it was).  The spares are memory outside the filter's budget, at most the young generation
 * just collected, and they go when the heap is cleared or the budget is nearly spent (pressed). */
static int64_t local_retire(heap_local *L, int64_t keep) {
  heap_local *S = &L->heap->locals[L->id];
  for (chunk *c = L->chunk, *prev; c; c = prev) {
    prev = c->prev;
    if (c->cap == L->heap->chunk_cap && S->spare_words < keep) {
      c->prev = S->spare;
      S->spare = c;
      S->spare_words += c->cap;
    } else {
      free(c);
    }
  }
  local_forget(L);
  int64_t taken = L->taken;
  L->taken = L->credit = 0;
  return taken;
}

static int64_t local_clear(heap_local *L) {
  L->next_cap = FIRST_CHUNK_WORDS;
  return local_retire(L, 0);
}

static void spares_free(heap_local *L) {
  free_chain(L->spare);
  L->spare = NULL;
  L->spare_words = 0;
}

/* Gives the budget back what clearing took from the locals (a thread's share may be negative: only
 * the sum is what the heap held). */
static void give_back(rt_heap *h, int64_t taken) {
  if (taken > 0 && h->locals[0].budget) rt_budget_give(h->locals[0].budget, (uint64_t)taken);
}

void rt_heap_clear(rt_heap *h) {
  int64_t taken = 0;
  for (int k = 0; k < h->n_locals; k++) {
    taken += local_clear(&h->locals[k]) + local_clear(&h->mature[k]);
    spares_free(&h->locals[k]);
    h->locals[k].huge_bytes = 0;
  }
  h->mature_after_major = h->kept_by_minor = 0;
  give_back(h, taken);
}

void rt_heap_free(rt_heap *h) {
  if (!h) return;
  rt_heap_clear(h);
  for (int k = 0; k < h->n_locals; k++) {
    free(h->locals[k].runs);
    free(h->locals[k].stack);
    free(h->mature[k].runs);
  }
  free(h->mature);
  for (int32_t t = 0; t < h->n_types; t++) free(h->types[t]);
  free(h->types);
  free(h->locals);
  free(h);
}

static int64_t young_words(const rt_heap *h) {
  int64_t total = 0;
  for (int k = 0; k < h->n_locals; k++) total += h->locals[k].words;
  return total;
}

static int64_t mature_words(const rt_heap *h) {
  int64_t total = 0;
  for (int k = 0; k < h->n_locals; k++) total += h->mature[k].words;
  return total;
}

int64_t rt_heap_live_words(const rt_heap *h) {
  int64_t total = mature_words(h);
  for (int k = 0; k < h->n_locals; k++) total += h->locals[k].words;
  return total;
}

void rt_heap_chunk_counts(const rt_heap *h, int64_t *fresh, int64_t *reused) {
  *fresh = *reused = 0;
  for (int k = 0; k < h->n_locals; k++) {
    *fresh += h->locals[k].fresh;
    *reused += h->locals[k].reused;
  }
}

/* A chunk of `cap` words for thread S (its young local) from malloc, a huge page while the thread's
 * share of HUGE_BYTES lasts. */
static chunk *chunk_malloc(heap_local *S, uint64_t cap) {
  size_t bytes = sizeof(chunk) + cap * sizeof(uint64_t);
  if (bytes != CHUNK_BYTES || S->huge_bytes >= HUGE_BYTES / (uint64_t)S->heap->n_locals) return malloc(bytes);
  void *p = NULL;
  if (posix_memalign(&p, CHUNK_BYTES, bytes)) return NULL;
  S->huge_bytes += bytes;
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE); /* advice: refused, the chunk is still memory */
#endif
  return p;
}

/* A new current chunk for L with room for a cell of `words` words; 0, or -1 when refused. */
static int new_chunk(heap_local *L, uint32_t words) {
  uint64_t cap = L->next_cap;
  uint64_t need = (uint64_t)words + 1; /* the cell and its offset */
  if (cap < need) cap = need;
  if (cap > UINT32_MAX) return -1;
  heap_local *S = &L->heap->locals[L->id];
  chunk *c = NULL;
  uint32_t most = L->heap->chunk_cap;
  if (S->spare && need <= most) cap = most;
  if (!reserve(L, cap)) return -1;
  if (cap == most && S->spare) {
    c = S->spare;
    S->spare = c->prev;
    S->spare_words -= c->cap;
    S->reused++;
  } else if (!(c = chunk_malloc(S, cap))) {
    L->credit += (int64_t)cap; /* not taken after all */
    return -1;
  } else {
    S->fresh++;
  }
  c->prev = L->chunk;
  c->cap = (uint32_t)cap;
  c->used = c->n_cells = 0;
  L->chunk = c;
  L->chunk_words += (int64_t)cap;
  L->next_cap = L->next_cap < most / 2 ? 2 * L->next_cap : most;
  return 0;
}

static int push_run(heap_local *L, uint64_t epoch) {
  if (L->n_runs == L->cap_runs) {
    int64_t cap = L->cap_runs ? 2 * L->cap_runs : 64;
    run *r = realloc(L->runs, (size_t)cap * sizeof *r);
    if (!r) return -1;
    L->runs = r;
    L->cap_runs = cap;
  }
  L->open = &L->runs[L->n_runs++];
  *L->open = (run){L->chunk, L->chunk->n_cells, L->id, epoch, L->chunk->used, RUN_EMPTY};
  L->open_epoch = epoch;
  return 0;
}

/* cell_alloc's way to a cell when the current chunk or run cannot take it: a new chunk or run. */
static chunk *cell_room(heap_local *L, uint32_t words, uint64_t epoch) {
  int fresh = 0;
  if (!L->chunk || chunk_free_words(L->chunk) < (uint64_t)words + 1) {
    if (new_chunk(L, words)) return NULL;
    fresh = 1;
  }
  if (fresh || L->open_epoch != epoch)
    if (push_run(L, epoch)) return NULL;
  return L->chunk;
}

/* Whether the current chunk's open run is of `epoch` and has room for a cell of `words` words. */
static inline int cell_fits(const heap_local *L, uint32_t words, uint64_t epoch) {
  return L->chunk && chunk_free_words(L->chunk) >= (uint64_t)words + 1 && L->open_epoch == epoch;
}

/* The open run r gets a cell of another size than its others: their offsets are written. */
static __attribute__((noinline)) void run_mixed(chunk *c, run *r) {
  for (uint32_t i = r->first; i < c->n_cells; i++)
    chunk_offsets(c)[-1 - (int64_t)i] = r->base + (i - r->first) * r->stride;
  r->stride = 0;
}

/* A cell of `words` words at the end of the open run, which cell_fits. */
static inline uint64_t *cell_bump(heap_local *L, uint32_t words) {
  chunk *c = L->chunk;
  run *r = L->open;
  uint64_t *cell = c->words + c->used;
  if (r->stride != words) {
    if (r->stride == RUN_EMPTY) {
      r->stride = words;
    } else {
      if (r->stride) run_mixed(c, r);
      chunk_offsets(c)[-1 - (int64_t)c->n_cells] = c->used;
    }
  }
  c->used += words;
  c->n_cells++;
  L->words += words;
  return cell;
}

/* A cell of `words` words at the end of L's newest run of `epoch`, NULL when malloc or the budget
 * refuses. */
static uint64_t *cell_alloc(heap_local *L, uint32_t words, uint64_t epoch) {
  if (!cell_fits(L, words, epoch) && !cell_room(L, words, epoch)) return NULL;
  return cell_bump(L, words);
}

/* Whether a value of type t contains a list. */
static int type_has_lists(const char *t) {
  const char *end = rt_skip_type(t);
  return memchr(t, 'L', (size_t)(end - t)) != NULL;
}

static uint64_t aux_of(const char *elem) {
  return ((uint64_t)(uintptr_t)elem & RT_CELL_TYPE_BITS) | (type_has_lists(elem) ? RT_CELL_HAS_LISTS : 0);
}

static const char *elem_of(uint64_t aux) { return (const char *)(uintptr_t)(aux & RT_CELL_TYPE_BITS); }

/* The aux word of cells of element type elem: its walk costs more than the usual cell, so the type
 * seen last is remembered. */
static uint64_t aux_cached(heap_local *L, const char *elem) {
  if (elem != L->last_elem) {
    L->last_elem = elem;
    L->last_aux = aux_of(elem);
  }
  return L->last_aux;
}

/* A list cell's header and aux word. */
static inline uint64_t *cell_head(uint64_t *cell, uint32_t payload, uint32_t len, uint64_t aux) {
  cell[0] = RT_HEADER(RT_KIND_LIST, payload, len);
  cell[1] = aux;
  return cell;
}

static uint64_t *new_cell(heap_local *L, uint32_t payload, uint32_t len, uint64_t aux) {
  uint64_t *cell = cell_alloc(L, 2 + payload, L->heap->epoch);
  return cell ? cell_head(cell, payload, len, aux) : NULL;
}

int64_t rt_heap_new_cell(rt_heap *heap, int k, uint32_t payload, uint32_t len, const char *elem) {
  heap_local *L = &heap->locals[k];
  uint64_t *cell = new_cell(L, payload, len, aux_cached(L, elem));
  return cell ? (int64_t)(uintptr_t)cell : SIRENRT_NIL;
}

const char *rt_heap_intern_type(rt_heap *h, const char *desc) {
  for (int32_t t = 0; t < h->n_types; t++)
    if (!strcmp(h->types[t], desc)) return h->types[t];
  char **more = realloc(h->types, (size_t)(h->n_types + 1) * sizeof *more);
  if (!more) return NULL;
  h->types = more;
  size_t len = strlen(desc);
  char *copy = malloc(len + 1);
  if (!copy) return NULL;
  memcpy(copy, desc, len + 1);
  return h->types[h->n_types++] = copy;
}

/* ------------------------------------------------------------------ promotion ------------------ */

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

typedef struct promoter {
  heap_local *L;
  sirenrt_ctx *ctx; /* whose young arena */
  uint64_t epoch;
} promoter;

static int64_t promote_list(promoter *p, int64_t h, const char *elem);

static void promote_word(void *p, uint64_t *word, const char *elem) {
  *word = (uint64_t)promote_list(p, (int64_t)*word, elem);
}

static int push_young(heap_local *L, int64_t index) {
  if (L->n_stack == L->cap_stack) {
    int64_t cap = L->cap_stack ? 2 * L->cap_stack : 256;
    int64_t *s = realloc(L->stack, (size_t)cap * sizeof *s);
    if (!s) return -1;
    L->stack = s;
    L->cap_stack = cap;
  }
  L->stack[L->n_stack++] = index;
  return 0;
}

/* The heap handle of list h.  A young spine is moved from its far end (the first cell that is not
 * young, or was moved already: its aux word forwards to its heap copy) back to its head, each cell
 * after the lists among its elements, so that every cell is allocated after what it refers to. */
static int64_t promote_list(promoter *p, int64_t h, const char *elem) {
  heap_local *L = p->L;
  if (!rt_is_young(h) || L->failed) return rt_is_young(h) ? SIRENRT_NIL : h;
  uint64_t *arena = p->ctx->arena;
  int64_t base = L->n_stack, c = h;
  while (rt_is_young(c) && !arena[rt_young_index(c) + 1]) {
    if (push_young(L, rt_young_index(c))) {
      L->failed = 1;
      break;
    }
    c = (int64_t)arena[rt_young_index(c) + 2];
  }
  int64_t tail = rt_is_young(c) ? (int64_t)arena[rt_young_index(c) + 1] : c;
  uint64_t aux = aux_cached(L, elem);
  int lists = (aux & RT_CELL_HAS_LISTS) != 0;
  while (L->n_stack > base && !L->failed) {
    uint64_t *young = arena + L->stack[--L->n_stack];
    if (lists) {
      rt_each_list(young + 3, elem, promote_word, p);
      arena = p->ctx->arena; /* (the arena does not move while it is promoted; read again all the same) */
    }
    uint32_t words = RT_CELL_WORDS(young[0]);
    uint64_t *cell = cell_alloc(L, words, p->epoch);
    if (!cell) {
      L->failed = 1;
      break;
    }
    memcpy(cell, young, (size_t)words * sizeof(uint64_t));
    cell[1] = aux;
    cell[2] = (uint64_t)tail;
    tail = (int64_t)(uintptr_t)cell;
    young[1] = (uint64_t)tail;
  }
  L->n_stack = base;
  return L->failed ? SIRENRT_NIL : tail; /* a failed promotion abandons the frame: the filter fails */
}

/* A nursery cell's tail, and the cell the nursery made last (which sirenrt_list_set may write). */
static inline int64_t nursery_made(rt_nursery *n, uint64_t *cell, int64_t tail) {
  cell[2] = (uint64_t)tail;
  n->last = cell;
  return (int64_t)(uintptr_t)cell;
}

/* rt_nursery.cons: a cell at the end of the thread's run of this epoch, as promotion would have made
 * it, after its young tail (promoted first).  Its element words come after it: one that is a list
 * could be younger than the cell, against the order the collector sweeps in, so an element type with
 * lists is declined. */
static __attribute__((noinline)) int64_t nursery_cons_slow(rt_nursery *n, sirenrt_ctx *ctx, int64_t tail,
                                                            uint32_t payload, uint32_t len, const char *elem) {
  heap_local *L = (heap_local *)n;
  uint64_t aux = aux_cached(L, elem);
  if (aux & RT_CELL_HAS_LISTS) return 0;
  if (rt_is_young(tail)) {
    promoter p = {L, ctx, L->heap->epoch};
    tail = promote_list(&p, tail, elem);
    if (L->failed) {
      L->failed = 0;
      return SIRENRT_NIL;
    }
  }
  uint64_t *cell = new_cell(L, payload, len, aux);
  return cell ? nursery_made(n, cell, tail) : SIRENRT_NIL;
}

/* The same, at the end of the open run when it has room: the `::` of every particle-step, with
 * nothing to keep across a call (its registers spilt to the stack stalled it). */
static int64_t nursery_cons(rt_nursery *n, sirenrt_ctx *ctx, int64_t tail, uint32_t payload, uint32_t len,
                            const char *elem) {
  heap_local *L = (heap_local *)n;
  if (elem != L->last_elem || (L->last_aux & RT_CELL_HAS_LISTS) || rt_is_young(tail) ||
      !cell_fits(L, 2 + payload, L->heap->epoch))
    return nursery_cons_slow(n, ctx, tail, payload, len, elem);
  uint64_t *cell = cell_bump(L, 2 + payload);
  /* cell_head's words, written out: given the aux word as an argument, GCC held it in a register
   * across the bump and spilt one. */
  cell[0] = RT_HEADER(RT_KIND_LIST, payload, len);
  cell[1] = L->last_aux;
  return nursery_made(n, cell, tail);
}

rt_nursery *rt_heap_nursery(rt_heap *heap, int k) {
  heap_local *L = &heap->locals[k];
  L->nursery.cons = nursery_cons;
  L->nursery.last = NULL;
  return &L->nursery;
}

void rt_heap_hold(rt_heap *heap, int k, sirenrt_ctx *ctx, uint8_t *frame, const rt_rootset *now, int *failed) {
  if (ctx->arena_used) {
    heap_local *L = &heap->locals[k];
    promoter p = {L, ctx, heap->epoch};
    for (int32_t j = 0; j < now->n; j++) {
      uint64_t *slot = (uint64_t *)(frame + now->slots[j].offset);
      if (rt_is_young((int64_t)*slot)) *slot = (uint64_t)promote_list(&p, (int64_t)*slot, now->slots[j].elem);
    }
    if (L->failed) {
      *failed = 1;
      L->failed = 0;
    }
  }
  ctx->arena_used = 0;
}

/* ------------------------------------------------------------------ collection ----------------- */

/* The chunk words copies of `words` words can take in chunks of `next` words and on: a quarter more
 * for the offsets and the chunks' ends, and two chunks of the size they double to (at most twice the
 * copies, or the largest). */
static uint64_t copy_room(const rt_heap *h, uint64_t words, uint64_t next) {
  uint64_t last = 2 * words > next ? 2 * words : next;
  return words + words / 4 + 2 * (last < h->chunk_cap ? last : h->chunk_cap);
}

/* Under a memory limit, a collection must find room for its copies (at most what the heap holds)
 * beside the heap: when what the budget has left comes near that, the next collection is a major
 * one, which leaves the least. */
static int pressed(const rt_heap *h) {
  const rt_budget *b = h->locals[0].budget;
  if (!b) return 0;
  uint64_t used = __atomic_load_n(&b->used, __ATOMIC_RELAXED);
  uint64_t heap = (uint64_t)(mature_words(h) + young_words(h)), next = 0;
  for (int k = 0; k < h->n_locals; k++)
    if (h->mature[k].next_cap > next) next = h->mature[k].next_cap;
  return used + copy_room(h, heap, next) + FLOOR_WORDS / 8 > b->words;
}

/* A minor collection once the young cells are 8 times what the last minor one kept (and at least the
 * floor): it then copies at most an eighth of what was allocated.  A major collection leaves that
 * measure as it was: reset, it let the next minor one run at the next barrier, copying the newest
 * generation (every particle's last cell) into the mature one, where it died soon and hastened the
 * next major one (the walk keeping its trajectory, T = 1000: 28.3-30.3 -> 26.1-26.8 ns a
 * particle-step at N = 10^4, 33.4-40.7 -> 29.2-35.5 at 10^5, the same peak memory).  Of a trajectory, the older a young
 * generation the fewer of its cells survive, so a longer wait copies less of each: the walk keeping
 * its trajectory at N = 10^5, T = 1000, 4 -> 8 times took 38.3 -> 33.5 ns a particle-step, its peak
 * resident set 118 -> 181 MiB (16 times: 30.1 ns, 348 MiB); before lanes made cells in the heap at
 * once (nursery_cons) it was 167 MiB.  A major one once the mature generation has
 * doubled since the last (its cells die too, as lineages die out), or under pressure. */
int rt_heap_collection_due(const rt_heap *h) {
  int64_t young = young_words(h);
  if (young >= FLOOR_WORDS && young >= 8 * h->kept_by_minor) return 1;
  return young >= FLOOR_WORDS / 8 && pressed(h);
}

static int major_due(const rt_heap *h) {
  return mature_words(h) >= 2 * h->mature_after_major + FLOOR_WORDS || pressed(h);
}

/* What a collection marks and moves: every cell (major), or the young ones only (minor), whose
 * references into the mature generation need no marking and no rewriting: it does not move. */
typedef struct gc {
  int major;
  int shared; /* threads mark at once: two may mark one older cell */
} gc;

static void mark(const gc *g, uint64_t *word) {
  int64_t h = (int64_t)*word;
  if (!rt_is_heap(h)) return;
  uint64_t *cell = rt_heap_cell(h);
  uint64_t aux = g->shared ? __atomic_load_n(&cell[1], __ATOMIC_RELAXED) : cell[1];
  if ((aux & RT_CELL_MARK) || (!g->major && (aux & RT_CELL_MATURE))) return;
  if (g->shared)
    __atomic_fetch_or(&cell[1], RT_CELL_MARK, __ATOMIC_RELAXED);
  else
    cell[1] = aux | RT_CELL_MARK;
}

static void mark_word(void *g, uint64_t *word, const char *elem) {
  (void)elem;
  mark(g, word);
}

/* A moved cell's aux word is its copy's address (no flag bits); a mature cell's, in a minor
 * collection, its own. */
static void forward(uint64_t *word) {
  int64_t h = (int64_t)*word;
  if (!rt_is_heap(h)) return;
  uint64_t aux = rt_heap_cell(h)[1];
  if (!(aux & (RT_CELL_MATURE | RT_CELL_MARK))) *word = aux;
}

static void forward_word(void *arg, uint64_t *word, const char *elem) {
  (void)arg;
  (void)elem;
  forward(word);
}

static void root_mark(void *g, uint64_t *word) { mark(g, word); }

static void root_forward(void *arg, uint64_t *word) {
  (void)arg;
  forward(word);
}

static void root_unmark(void *arg, uint64_t *word) {
  (void)arg;
  int64_t h = (int64_t)*word;
  if (rt_is_heap(h)) rt_heap_cell(h)[1] &= ~RT_CELL_MARK;
}

/* A run with where its cells end, and its place in its thread's list (qsort is not stable). */
typedef struct span_of_cells {
  run r;
  uint32_t end;
  int64_t seq;
  uint64_t *live; /* a bit a cell, set by the sweep for each live one (the run's own words, so the
                   * threads sweeping at once share none; under 1% of the heap, outside the budget
                   * as the run table is) */
} span_of_cells;

/* The words of a run's live bitmap. */
static uint32_t bitmap_words(const span_of_cells *run) { return (run->end - run->r.first + 63) / 64; }

/* The cell of bit b (its lowest set bit) of word w of a run's live bitmap. */
static uint64_t *live_cell(const span_of_cells *run, uint32_t w, uint64_t b) {
  return run_cell(&run->r, run->r.first + 64 * w + (uint32_t)__builtin_ctzll(b));
}

/* Oldest first: by epoch, then as each thread allocated them. */
static int span_order(const void *a, const void *b) {
  const span_of_cells *x = a, *y = b;
  if (x->r.epoch != y->r.epoch) return x->r.epoch < y->r.epoch ? -1 : 1;
  if (x->r.local != y->r.local) return x->r.local < y->r.local ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Appends L's runs to out (a run ends where the next of its thread begins in the same chunk). */
static void add_runs(const heap_local *L, span_of_cells *out, int64_t *n) {
  for (int64_t r = 0; r < L->n_runs; r++) {
    uint32_t end = r + 1 < L->n_runs && L->runs[r + 1].c == L->runs[r].c ? L->runs[r + 1].first
                                                                         : L->runs[r].c->n_cells;
    out[(*n)++] = (span_of_cells){L->runs[r], end, r, NULL};
  }
}

/* A sweep reads cells in order, which the hardware fetches ahead by itself, but a live cell also
 * reads its tail's aux word, a cell an ancestor made, anywhere in the generation before: asked for
 * AHEAD cells early, dead or alive (asking only for live ones' gained nothing: the test costs what
 * the fetch saves).  The list-keeping walk at N = 10^5: collection 0.25 -> 0.19 s of a 100-step run
 * (SIRENRT_PROFILE, 4 runs each; the same at 16, 32 and 64 cells ahead). */
enum { AHEAD = 32 };

static inline void prefetch_tail(const uint64_t *cell) {
  int64_t t = (int64_t)cell[2];
  if (rt_is_heap(t)) __builtin_prefetch(rt_heap_cell(t) + 1, 1);
}

/* One collection's work, shared by a team: the runs in order and their epochs' groups; thread k sweeps
 * and copies the runs of threads k, k + T, ... (a thread's runs of one epoch refer to no other
 * thread's of that epoch, so a group's runs are swept at once, and the groups one after another). */
typedef struct collect_job {
  rt_heap *h;
  gc g;
  span_of_cells *runs;
  int64_t lo, hi;        /* the group being swept or copied: runs [lo, hi) */
  heap_local *to;        /* the copies' generation, one local a thread */
  int64_t live[RT_MAX_THREADS];
  int failed[RT_MAX_THREADS];
} collect_job;

static void mark_group(void *arg, int k, int threads) {
  collect_job *j = arg;
  int64_t live = 0;
  for (int64_t r = j->hi - 1; r >= j->lo; r--) {
    const span_of_cells *run = &j->runs[r];
    if ((int)(run->r.local % (uint32_t)threads) != k) continue;
    for (uint32_t i = run->end; i-- > run->r.first;) {
      uint64_t *cell = run_cell(&run->r, i);
      if (i >= run->r.first + AHEAD) prefetch_tail(run_cell(&run->r, i - AHEAD));
      uint64_t aux = cell[1];
      if (!(aux & RT_CELL_MARK)) continue;
      uint32_t at = i - run->r.first;
      run->live[at / 64] |= UINT64_C(1) << (at % 64);
      live += RT_CELL_WORDS(cell[0]);
      mark(&j->g, &cell[2]);
      if (aux & RT_CELL_HAS_LISTS) rt_each_list(cell + 3, elem_of(aux), mark_word, &j->g);
    }
  }
  j->live[k] += live;
}

static void copy_group(void *arg, int k, int threads) {
  collect_job *j = arg;
  for (int64_t r = j->lo; r < j->hi && !j->failed[k]; r++) {
    const span_of_cells *run = &j->runs[r];
    if ((int)(run->r.local % (uint32_t)threads) != k) continue;
    heap_local *to = &j->to[k];
    uint32_t words_of_bits = bitmap_words(run);
    for (uint32_t w = 0; w < words_of_bits && !j->failed[k]; w++) {
      /* Two words of live cells ahead, the cells are asked for; one ahead, their tails (whose aux
       * words forward() reads), as the sweep of every cell asked for them AHEAD cells ahead. */
      if (w + 2 < words_of_bits)
        for (uint64_t b = run->live[w + 2]; b; b &= b - 1) __builtin_prefetch(live_cell(run, w + 2, b));
      if (w + 1 < words_of_bits)
        for (uint64_t b = run->live[w + 1]; b; b &= b - 1) prefetch_tail(live_cell(run, w + 1, b));
      for (uint64_t b = run->live[w]; b; b &= b - 1) {
        uint64_t *cell = live_cell(run, w, b);
        uint64_t aux = cell[1];
        uint32_t words = RT_CELL_WORDS(cell[0]);
        uint64_t *copy = cell_alloc(to, words, run->r.epoch);
        if (!copy) {
          j->failed[k] = 1; /* only malloc: the budget was reserved (the heap is then lost, and the filter) */
          break;
        }
        memcpy(copy, cell, (size_t)words * sizeof(uint64_t));
        copy[1] = (aux & ~RT_CELL_MARK) | RT_CELL_MATURE;
        forward(&copy[2]);
        if (aux & RT_CELL_HAS_LISTS) rt_each_list(copy + 3, elem_of(aux), forward_word, NULL);
        cell[1] = (uint64_t)(uintptr_t)copy;
      }
    }
  }
}

/* Runs fn over every group of one epoch, newest first (down) or oldest first. */
static void each_group(collect_job *j, int64_t n, int down, const rt_team *team, void (*fn)(void *, int, int)) {
  int64_t at = down ? n : 0;
  while (down ? at > 0 : at < n) {
    int64_t end = at;
    if (down) {
      while (at > 0 && j->runs[at - 1].r.epoch == j->runs[end - 1].r.epoch) at--;
      j->lo = at, j->hi = end;
    } else {
      while (end < n && j->runs[end].r.epoch == j->runs[at].r.epoch) end++;
      j->lo = at, j->hi = end;
      at = end;
    }
    if (team && team->threads > 1)
      team->run(team->arg, fn, j);
    else
      fn(j, 0, 1);
  }
}

int rt_heap_collect(rt_heap *h, rt_root_walk *walk, void *arg, int major, const rt_team *team) {
  int threads = team && team->threads > 1 ? team->threads : 1;
  if (threads > h->n_locals) threads = h->n_locals;
  rt_team solo = {NULL, NULL, 1};
  if (threads == 1) team = &solo;
  collect_job job = {.h = h, .g = {major || major_due(h), threads > 1}};
  gc *g = &job.g;
  int64_t n = 0;
  for (int k = 0; k < h->n_locals; k++) n += h->locals[k].n_runs + (g->major ? h->mature[k].n_runs : 0);
  span_of_cells *runs = malloc((size_t)(n ? n : 1) * sizeof *runs);
  heap_local *fresh = g->major ? calloc((size_t)h->n_locals, sizeof *fresh) : NULL;
  if (!runs || (g->major && !fresh)) {
    free(runs);
    free(fresh);
    return -1;
  }
  n = 0;
  for (int k = 0; k < h->n_locals; k++) {
    if (g->major) add_runs(&h->mature[k], runs, &n);
    add_runs(&h->locals[k], runs, &n);
  }
  qsort(runs, (size_t)n, sizeof *runs, span_order);
  job.runs = runs;
  int64_t bit_words = 0;
  for (int64_t r = 0; r < n; r++) bit_words += bitmap_words(&runs[r]);
  uint64_t *bits = calloc((size_t)(bit_words ? bit_words : 1), sizeof *bits);
  if (!bits) {
    free(runs);
    free(fresh);
    return -1;
  }
  for (int64_t r = 0, at = 0; r < n; r++) {
    runs[r].live = bits + at;
    at += bitmap_words(&runs[r]);
  }

  /* 1. Mark: the roots, then every marked cell's references, newest cell first. */
  walk(arg, root_mark, g);
  each_group(&job, n, 1, team, mark_group);
  int64_t live = 0;
  for (int k = 0; k < threads; k++) live += job.live[k];

  /* 2. Copy, oldest first, after the mature cells (minor) or into a new mature generation (major),
   * the chunks reserved before anything moves: each thread's share of the live words, with room for
   * the offsets and the chunks' ends. */
  rt_budget *budget = h->locals[0].budget;
  heap_local *to = g->major ? fresh : h->mature;
  if (g->major)
    for (int k = 0; k < h->n_locals; k++)
      fresh[k] = (heap_local){.heap = h, .budget = budget, .next_cap = h->mature[k].next_cap, .id = (uint32_t)k};
  int64_t room[RT_MAX_THREADS], total = 0;
  for (int k = 0; k < threads; k++) total += room[k] = (int64_t)copy_room(h, (uint64_t)job.live[k], to[k].next_cap);
  if (budget && !rt_budget_take(budget, (uint64_t)total)) {
    for (int64_t r = 0; r < n; r++)
      for (uint32_t i = runs[r].r.first; i < runs[r].end; i++) run_cell(&runs[r].r, i)[1] &= ~RT_CELL_MARK;
    walk(arg, root_unmark, NULL);
    free(runs);
    free(bits);
    free(fresh);
    return -1;
  }
  for (int k = 0; budget && k < threads; k++) {
    to[k].credit += room[k];
    to[k].taken += room[k];
  }
  job.to = to;
  each_group(&job, n, 0, team, copy_group);
  free(runs);
  free(bits);
  int failed = 0;
  for (int k = 0; k < threads; k++) {
    failed |= job.failed[k];
    if (budget && to[k].credit > 0) { /* the reservation's rest */
      rt_budget_give(budget, (uint64_t)to[k].credit);
      to[k].taken -= to[k].credit;
      to[k].credit = 0;
    }
  }
  if (failed) {
    if (g->major) {
      for (int k = 0; k < h->n_locals; k++) {
        give_back(h, local_clear(&fresh[k]));
        free(fresh[k].runs);
      }
      free(fresh);
    }
    return -2;
  }
  walk(arg, root_forward, NULL);

  /* 3. The old chunks go, or stay as spares (local_retire). */
  int64_t taken = 0, keep[RT_MAX_THREADS];
  for (int k = 0; k < h->n_locals; k++) {
    keep[k] = h->locals[k].chunk_words;
    taken += local_retire(&h->locals[k], keep[k]);
  }
  if (g->major) {
    for (int k = 0; k < h->n_locals; k++) {
      taken += local_retire(&h->mature[k], keep[k]);
      free(h->mature[k].runs);
    }
    free(h->mature);
    h->mature = fresh;
    h->mature_after_major = mature_words(h);
  } else {
    h->kept_by_minor = live;
  }
  give_back(h, taken);
  if (pressed(h))
    for (int k = 0; k < h->n_locals; k++) spares_free(&h->locals[k]);
  h->epoch++;
  return 0;
}
