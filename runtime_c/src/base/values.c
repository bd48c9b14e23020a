/* values.c — Siren's immutable lists: the young arena cells are built in, and every list operation.
 *
 * A particle builds cells in its young arena, one growable array of 64-bit words addressed by index
 * (a bump allocator: no header walk, no free); at the next barrier the cells its frame still reaches
 * move to the population's heap and the arena starts empty again (heap.c).  Data read from files are
 * "shared" lists owned by the filter (tagged handles).  Every operation here accepts all three kinds,
 * also mixed (a young cell whose tail is a heap list whose tail is a row of a file).  Each cell holds
 * the length of the list it starts, so List.len is one read. */
#include "base.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CELL_WORDS 0xFFFFFE /* payload = tail + elements must fit 24 bits */

void rt_arena_free(sirenrt_ctx *ctx) {
  free(ctx->arena);
  ctx->arena = NULL;
  ctx->arena_used = ctx->arena_cap = 0;
}

/* Returns the index of `words` fresh words, or -1 (error recorded) when the arena cannot grow. */
static int64_t arena_alloc(sirenrt_ctx *ctx, uint32_t words, int32_t site) {
  uint64_t need = (uint64_t)ctx->arena_used + words;
  if (need > ctx->arena_cap) {
    if (need > UINT32_MAX) {
      rt_fail(ctx, site, "particle memory exhausted (2^32 words)");
      return -1;
    }
    uint64_t cap = ctx->arena_cap ? (uint64_t)ctx->arena_cap * 2 : 64;
    if (cap < need) cap = need;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    /* The filter's memory limit (memory.c): the particle's share, then the pool all lists share. */
    if (rt_arena_within_limit(ctx, need, &cap, site) || rt_arena_reserve(ctx, need, &cap, site)) return -1;
    uint64_t *a = realloc(ctx->arena, cap * sizeof(uint64_t));
    if (!a) {
      if (ctx->filter) rt_budget_give(&ctx->filter->budget, cap - ctx->arena_cap);
      rt_fail(ctx, site, "out of memory");
      return -1;
    }
    ctx->arena = a;
    ctx->arena_cap = (uint32_t)cap;
  }
  int64_t at = ctx->arena_used;
  ctx->arena_used = (uint32_t)need;
  /* The population loop holds particles of a model without list slots only once one built cells;
   * the flag hands this one back from the compiled span loop (sirenrt_span_fn).  One with list slots
   * holds every particle that stops, also those the span loop ran (loop.c). */
  if (ctx->filter) {
    if (!ctx->filter->lists) ctx->flagged = 1;
    if (!__atomic_load_n(&ctx->filter->arenas_used, __ATOMIC_RELAXED))
      __atomic_store_n(&ctx->filter->arenas_used, 1, __ATOMIC_RELAXED);
  }
  return at;
}

int rt_arena_copy(sirenrt_ctx *dst, const sirenrt_ctx *src) {
  if (dst->arena_cap < src->arena_used) {
    uint64_t *a = realloc(dst->arena, (size_t)src->arena_used * sizeof(uint64_t));
    if (!a) return -1;
    dst->arena = a;
    dst->arena_cap = src->arena_used;
  }
  if (src->arena_used) memcpy(dst->arena, src->arena, (size_t)src->arena_used * sizeof(uint64_t));
  dst->arena_used = src->arena_used;
  return 0;
}

/* The cell a young or heap handle names, or NULL when it is neither a cell of this particle's arena
 * nor a live heap cell.  (A heap handle is an address: what can be checked is its alignment and the
 * cell's kind, which a freed cell no longer has.) */
static const uint64_t *cell_of(const sirenrt_ctx *ctx, int64_t h) {
  const uint64_t *cell;
  if (rt_is_young(h)) {
    uint32_t i = rt_young_index(h);
    if ((uint64_t)i + 3 > ctx->arena_used) return NULL;
    cell = ctx->arena + i;
    if ((uint64_t)i + RT_CELL_WORDS(cell[0]) > ctx->arena_used) return NULL;
  } else if (rt_is_heap(h) && (h & 7) == 0) {
    cell = rt_heap_cell(h);
  } else {
    return NULL;
  }
  return RT_HEADER_KIND(cell[0]) == RT_KIND_LIST ? cell : NULL;
}

/* The table behind a shared handle, with its row/element position checked; NULL if invalid. */
static const rt_table *shared_table(const sirenrt_ctx *ctx, int64_t h) {
  const sirenrt_filter *f = ctx->filter;
  int32_t id = rt_shared_file(h);
  if (!f || id >= f->model->n_files || !f->tables[id].loaded) return NULL;
  const rt_table *t = &f->tables[id];
  if (h & RT_ROW_BIT) {
    int64_t r = rt_shared_row_r(h);
    if (r >= t->n_rows || rt_shared_row_k(h) >= rt_row_len(t, r)) return NULL;
  } else if (rt_shared_rows_r(h) >= t->n_rows) {
    return NULL;
  }
  return t;
}

static int bad_handle(sirenrt_ctx *ctx, int64_t h, int32_t site) {
  rt_fail(ctx, site, "internal error: invalid list handle %lld", (long long)h);
  return -1;
}

int rt_list_uncons(sirenrt_ctx *ctx, int64_t list, uint64_t *out, int32_t nwords, int64_t *tail, int32_t site) {
  if (list == SIRENRT_NIL) {
    rt_fail(ctx, site, "List.hd of an empty list");
    return -1;
  }
  if (list & RT_SHARED_BIT) {
    const rt_table *t = shared_table(ctx, list);
    if (!t || nwords > 1) return bad_handle(ctx, list, site);
    int32_t id = rt_shared_file(list);
    if (list & RT_ROW_BIT) {
      int64_t r = rt_shared_row_r(list), k = rt_shared_row_k(list);
      if (nwords == 1) memcpy(out, &t->vals[t->row_start[r] + k], sizeof(uint64_t));
      *tail = k + 1 < rt_row_len(t, r) ? rt_shared_row(id, r, k + 1) : SIRENRT_NIL;
    } else {
      int64_t r = rt_shared_rows_r(list);
      if (nwords == 1) out[0] = (uint64_t)rt_row_handle(t, id, r);
      *tail = r + 1 < t->n_rows ? rt_shared_rows(id, r + 1) : SIRENRT_NIL;
    }
    return 0;
  }
  const uint64_t *cell = cell_of(ctx, list);
  if (!cell || (uint32_t)nwords + 1 > RT_HEADER_PAYLOAD(cell[0])) return bad_handle(ctx, list, site);
  if (nwords > 0) memcpy(out, cell + 3, (size_t)nwords * sizeof(uint64_t));
  *tail = (int64_t)cell[2];
  return 0;
}

int64_t rt_list_floats(sirenrt_ctx *ctx, int64_t list, double *out, int64_t cap, int32_t site) {
  int64_t n = 0;
  while (list != SIRENRT_NIL) {
    uint64_t w;
    if (rt_list_uncons(ctx, list, &w, 1, &list, site)) return -1;
    if (n < cap) memcpy(&out[n], &w, sizeof w);
    n++;
  }
  return n;
}

/* ------------------------------------------------------------------ the ABI -------------------- */

/* The length of list h, or -1 (error recorded) when h is not a list. */
static int64_t list_length(sirenrt_ctx *ctx, int64_t h, int32_t site) {
  if (h == SIRENRT_NIL) return 0;
  if (h & RT_SHARED_BIT) {
    const rt_table *t = shared_table(ctx, h);
    if (!t) return bad_handle(ctx, h, site);
    if (h & RT_ROW_BIT) return rt_row_len(t, rt_shared_row_r(h)) - rt_shared_row_k(h);
    return t->n_rows - rt_shared_rows_r(h);
  }
  const uint64_t *cell = cell_of(ctx, h);
  if (!cell) return bad_handle(ctx, h, site);
  return RT_HEADER_LEN(cell[0]);
}

/* A cell of nwords element words in front of tail, its words unset: in a lane's nursery when it
 * takes it (elem: the element type, NULL when not known), else in the young arena.  Generated code
 * passes the site of the `::` (or of the construct that conses), so that a list that outgrows the
 * memory limit is reported there; C hosts may use the site-less form. */
static int64_t cons_cell(sirenrt_ctx *ctx, int64_t tail, int32_t nwords, const char *elem, int32_t site) {
  if (nwords < 0 || nwords > MAX_CELL_WORDS - 1) {
    rt_fail(ctx, site, "internal error: list cell of %d words", (int)nwords);
    return SIRENRT_NIL;
  }
  int64_t len = list_length(ctx, tail, site);
  if (len < 0) return SIRENRT_NIL;
  if (len >= RT_MAX_LIST_LEN) {
    rt_fail(ctx, site, "list longer than %lld elements", (long long)RT_MAX_LIST_LEN);
    return SIRENRT_NIL;
  }
  rt_nursery *nursery = elem ? rt_nursery_of(ctx) : NULL;
  if (nursery) {
    int64_t cell = nursery->cons(nursery, ctx, tail, (uint32_t)nwords + 1, (uint32_t)len + 1, elem);
    if (cell == SIRENRT_NIL) rt_lists_refused(ctx, site);
    if (cell) return cell;
  }
  int64_t at = arena_alloc(ctx, (uint32_t)nwords + 3, site);
  if (at < 0) return SIRENRT_NIL;
  ctx->arena[at] = RT_HEADER(RT_KIND_LIST, nwords + 1, len + 1);
  ctx->arena[at + 1] = 0;
  ctx->arena[at + 2] = (uint64_t)tail;
  return RT_YOUNG_BIT | at;
}

int64_t sirenrt_list_cons_at(sirenrt_ctx *ctx, int64_t tail, int32_t nwords, int32_t site) {
  return cons_cell(ctx, tail, nwords, NULL, site);
}

int64_t sirenrt_list_cons_typed(sirenrt_ctx *ctx, int64_t tail, int32_t nwords, const char *elem, int32_t site) {
  return cons_cell(ctx, tail, nwords, elem, site);
}

int64_t sirenrt_list_cons_word(sirenrt_ctx *ctx, int64_t tail, int64_t word, const char *elem, int32_t site) {
  int64_t cell = cons_cell(ctx, tail, 1, elem, site);
  if (rt_is_heap(cell))
    rt_heap_cell(cell)[3] = (uint64_t)word;
  else if (cell != SIRENRT_NIL)
    ctx->arena[rt_young_index(cell) + 3] = (uint64_t)word;
  return cell;
}

int64_t sirenrt_list_cons(sirenrt_ctx *ctx, int64_t tail, int32_t nwords) {
  return cons_cell(ctx, tail, nwords, NULL, -1);
}

/* sirenrt_list_cons_at with the cell's element words filled in from `words` (NIL on error). */
static int64_t cons_words(sirenrt_ctx *ctx, int64_t tail, const void *words, int32_t nwords, int32_t site) {
  int64_t cell = sirenrt_list_cons_at(ctx, tail, nwords, site);
  if (cell != SIRENRT_NIL && nwords > 0)
    memcpy(ctx->arena + rt_young_index(cell) + 3, words, (size_t)nwords * sizeof(uint64_t));
  return cell;
}

/* The list literal [e0, ..., e(n-1)] of constants, element i's words at words[i * nwords]: built
 * from the last element on, as the conses of the literal would be, so the cells, their order and
 * a list past the memory limit (reported at `site`, the literal) are theirs. */
int64_t sirenrt_list_from_words(sirenrt_ctx *ctx, const int64_t *words, int64_t n_elems, int32_t nwords,
                                int32_t site) {
  if (n_elems < 0 || (n_elems > 0 && nwords > 0 && !words)) {
    rt_fail(ctx, site, "internal error: list of %lld constants without their words", (long long)n_elems);
    return SIRENRT_NIL;
  }
  int64_t acc = SIRENRT_NIL;
  for (int64_t i = n_elems - 1; i >= 0; i--) {
    acc = cons_words(ctx, acc, nwords > 0 ? words + i * nwords : NULL, nwords, site);
    if (acc == SIRENRT_NIL) return SIRENRT_NIL;
  }
  return acc;
}

/* Reading sirenrt_list_from_nested_words' encoding. */
typedef struct nested_reader {
  sirenrt_ctx *ctx;
  const int64_t *w;
  int64_t n, pos;
  char type[64];
  int32_t site;
} nested_reader;

static int64_t read_list(nested_reader *r, const char *elem);

/* One value of type t, its cell words stored at out[*k...]; 0, or -1 after recording an error. */
static int read_value(nested_reader *r, const char *t, uint64_t *out, int32_t *k) {
  switch (*t) {
    case 'u': return 0;
    case 'P': return read_value(r, t + 1, out, k) ? -1 : read_value(r, rt_skip_type(t + 1), out, k);
    case 'L': {
      int64_t h = read_list(r, t + 1);
      if (h == SIRENRT_NIL && r->ctx->err_msg) return -1;
      out[(*k)++] = (uint64_t)h;
      return 0;
    }
    default:
      if (r->pos >= r->n) break;
      out[(*k)++] = (uint64_t)r->w[r->pos++];
      return 0;
  }
  rt_fail(r->ctx, r->site, "internal error: a constant list's words end too soon");
  return -1;
}

/* A list of elements of type elem: its elements read in order, then consed from the last one on. */
static int64_t read_list(nested_reader *r, const char *elem) {
  int64_t n = r->pos < r->n ? r->w[r->pos++] : -1;
  const char *end;
  int32_t nwords = (int32_t)rt_type_words(elem, &end); /* 0: units, which take no words either */
  if (n < 0 || (nwords && n > r->n - r->pos)) {
    rt_fail(r->ctx, r->site, "internal error: a constant list's length is not its words'");
    return SIRENRT_NIL;
  }
  uint64_t *cells = n && nwords ? malloc((size_t)n * (size_t)nwords * sizeof *cells) : NULL;
  if (n && nwords && !cells) {
    rt_fail(r->ctx, r->site, "out of memory");
    return SIRENRT_NIL;
  }
  int64_t acc = SIRENRT_NIL;
  int failed = 0;
  for (int64_t i = 0; i < n && !failed; i++) {
    int32_t k = 0;
    failed = read_value(r, elem, cells ? cells + i * nwords : NULL, &k) != 0;
  }
  for (int64_t i = n - 1; i >= 0 && !failed; i--) {
    acc = cons_words(r->ctx, acc, cells ? cells + i * nwords : NULL, nwords, r->site);
    failed = acc == SIRENRT_NIL;
  }
  free(cells);
  return failed ? SIRENRT_NIL : acc;
}

int64_t sirenrt_list_from_nested_words(sirenrt_ctx *ctx, const int64_t *words, int64_t n_words, int32_t site) {
  nested_reader r = {.ctx = ctx, .w = words, .n = n_words, .site = site};
  int64_t k = words && n_words > 0 ? words[0] : -1;
  if (k <= 0 || k >= (int64_t)sizeof r.type || k >= n_words) {
    rt_fail(ctx, site, "internal error: a constant list without its element type");
    return SIRENRT_NIL;
  }
  for (int64_t i = 0; i < k; i++) r.type[i] = (char)words[1 + i];
  r.type[k] = 0;
  const char *end;
  if (rt_type_words(r.type, &end) < 0 || end != r.type + k) {
    rt_fail(ctx, site, "internal error: a constant list's element type is not one");
    return SIRENRT_NIL;
  }
  r.pos = 1 + k;
  int64_t list = read_list(&r, r.type);
  if (list != SIRENRT_NIL && r.pos != r.n) {
    rt_fail(ctx, site, "internal error: a constant list's words go on past it");
    return SIRENRT_NIL;
  }
  return list;
}

/* Cells are immutable once built: only a young cell, just made by cons, may be written, or the cell a
 * lane's nursery made last. */
static uint64_t *young_cell(sirenrt_ctx *ctx, int64_t h) {
  if (rt_is_heap(h)) {
    const rt_nursery *nursery = rt_nursery_of(ctx);
    return nursery && rt_heap_cell(h) == nursery->last ? rt_heap_cell(h) : NULL;
  }
  return rt_is_young(h) ? (uint64_t *)cell_of(ctx, h) : NULL;
}

void sirenrt_list_set(sirenrt_ctx *ctx, int64_t cell_handle, int32_t i, int64_t word) {
  uint64_t *cell = young_cell(ctx, cell_handle);
  if (!cell || i < 0 || (uint32_t)i + 1 >= RT_HEADER_PAYLOAD(cell[0])) {
    if (!ctx->err_msg) bad_handle(ctx, cell_handle, -1); /* NIL after a failed cons: keep that error */
    return;
  }
  cell[3 + i] = (uint64_t)word;
}

int64_t sirenrt_list_get(sirenrt_ctx *ctx, int64_t list, int32_t i, int32_t site) {
  /* On error the answer is NIL = all ones, which also reads as a NaN double. */
  if (list == SIRENRT_NIL) {
    rt_fail(ctx, site, "List.hd of an empty list");
    return SIRENRT_NIL;
  }
  if (!(list & RT_SHARED_BIT)) {
    const uint64_t *cell = cell_of(ctx, list);
    if (!cell || i < 0 || (uint32_t)i + 1 >= RT_HEADER_PAYLOAD(cell[0])) return bad_handle(ctx, list, site), SIRENRT_NIL;
    return (int64_t)cell[3 + i];
  }
  if (i != 0) return bad_handle(ctx, list, site), SIRENRT_NIL;
  uint64_t w;
  int64_t tail;
  if (rt_list_uncons(ctx, list, &w, 1, &tail, site)) return SIRENRT_NIL;
  return (int64_t)w;
}

/* List.hd in generated code.  A step function's List.hd(row) of a data row is the hot case (once per
 * particle-step): it is read here in place, under shared_table's checks (the handle's file, loaded,
 * row and element in range); every other list, and a row handle that fails them, goes to
 * sirenrt_list_get, so answers and errors are its own. */
int64_t sirenrt_list_head_word(sirenrt_ctx *ctx, int64_t list, int32_t i, int32_t site) {
  /* Bits 63..61 of a row handle are 011 (non-negative, shared, row).  shared_table's checks, inline:
   * the file is the model's and loaded, the row is in the table and k within the row. */
  const sirenrt_filter *f = ctx->filter;
  if ((uint64_t)list >> 61 == 3 && i == 0 && f && rt_shared_file(list) < f->model->n_files) {
    const rt_table *t = &f->tables[rt_shared_file(list)];
    int64_t r = rt_shared_row_r(list);
    if (t->loaded && r < t->n_rows) {
      int64_t at = t->row_start[r] + rt_shared_row_k(list);
      if (at < t->row_start[r + 1]) {
        int64_t word;
        memcpy(&word, &t->vals[at], sizeof word);
        return word;
      }
    }
  }
  return sirenrt_list_get(ctx, list, i, site);
}

int64_t sirenrt_list_tl(sirenrt_ctx *ctx, int64_t list, int32_t site) {
  if (list == SIRENRT_NIL) {
    rt_fail(ctx, site, "List.tl of an empty list");
    return SIRENRT_NIL;
  }
  int64_t tail;
  if (rt_list_uncons(ctx, list, NULL, 0, &tail, site)) return SIRENRT_NIL;
  return tail;
}

double sirenrt_list_len(sirenrt_ctx *ctx, int64_t list) {
  int64_t n = list_length(ctx, list, -1);
  return n < 0 ? NAN : (double)n;
}

int64_t sirenrt_list_rev_at(sirenrt_ctx *ctx, int64_t list, int32_t nwords, int32_t site) {
  if (nwords < 0 || nwords > MAX_CELL_WORDS - 1) return bad_handle(ctx, list, site), SIRENRT_NIL;
  /* The whole copy is known in advance: refused before it allocates, and named. */
  int64_t len = list_length(ctx, list, site);
  if (len < 0 || rt_list_within_limit(ctx, "List.rev", len, (uint32_t)nwords + 3, site)) return SIRENRT_NIL;
  if (len == 0) return SIRENRT_NIL;
  /* One allocation for every cell, laid out as consing them one by one would (a cell per element,
   * in the order the elements are read), so the arena grows once, not once per doubling. */
  uint64_t words = (uint64_t)nwords + 3, total = (uint64_t)len * words;
  if (total > UINT32_MAX) return rt_fail(ctx, site, "particle memory exhausted (2^32 words)"), SIRENRT_NIL;
  int64_t at = arena_alloc(ctx, (uint32_t)total, site);
  if (at < 0) return SIRENRT_NIL;
  int64_t acc = SIRENRT_NIL;
  for (int64_t k = 0; k < len; k++, at += (int64_t)words) {
    uint64_t *cell = ctx->arena + at; /* (nothing below allocates: the arena stays put) */
    if (rt_list_uncons(ctx, list, cell + 3, nwords, &list, site)) return SIRENRT_NIL;
    cell[0] = RT_HEADER(RT_KIND_LIST, nwords + 1, k + 1);
    cell[1] = 0;
    cell[2] = (uint64_t)acc;
    acc = RT_YOUNG_BIT | at;
  }
  return ctx->err_msg ? SIRENRT_NIL : acc;
}

/* In a lane, the cells go where its conses go (the population's heap), each made as the cons of the
 * element onto the cells before it would make it: a reversal at the end of a particle (tier 2's
 * trajectory means, a result's List.rev) is then not made young, copied to the heap by the next cons
 * onto it and copied again when the particle stops.  The same share of the memory limit is asked as
 * of sirenrt_list_rev_at, so the errors are its own; the heap's own limit is the lane's conses'. */
int64_t sirenrt_list_rev_typed(sirenrt_ctx *ctx, int64_t list, int32_t nwords, const char *elem, int32_t site) {
  rt_nursery *nursery = elem ? rt_nursery_of(ctx) : NULL;
  if (!nursery || nwords < 0 || nwords > MAX_CELL_WORDS - 1) return sirenrt_list_rev_at(ctx, list, nwords, site);
  int64_t len = list_length(ctx, list, site);
  if (len < 0 || rt_list_within_limit(ctx, "List.rev", len, (uint32_t)nwords + 3, site)) return SIRENRT_NIL;
  int64_t acc = SIRENRT_NIL;
  for (int64_t k = 0; k < len; k++) {
    int64_t cell = nursery->cons(nursery, ctx, acc, (uint32_t)nwords + 1, (uint32_t)k + 1, elem);
    if (!cell) return sirenrt_list_rev_at(ctx, list, nwords, site); /* declined (its type): at the first */
    if (cell == SIRENRT_NIL) {
      rt_lists_refused(ctx, site);
      return SIRENRT_NIL;
    }
    if (rt_list_uncons(ctx, list, rt_heap_cell(cell) + 3, nwords, &list, site)) return SIRENRT_NIL;
    acc = cell;
  }
  return acc;
}

int64_t sirenrt_list_rev(sirenrt_ctx *ctx, int64_t list, int32_t nwords) {
  return sirenrt_list_rev_at(ctx, list, nwords, -1);
}

int64_t sirenrt_list_range(sirenrt_ctx *ctx, double a, double b, int32_t site) {
  if (!(a <= b)) {
    rt_fail(ctx, site, "List.range: start must be <= end, got %g and %g", a, b);
    return SIRENRT_NIL;
  }
  double lo = trunc(a), hi = trunc(b);
  if (!isfinite(lo) || !isfinite(hi) || hi - lo > 0x1.0p28) {
    rt_fail(ctx, site, "List.range: %g .. %g is too long", a, b);
    return SIRENRT_NIL;
  }
  if (rt_list_within_limit(ctx, "List.range", (int64_t)(hi - lo), 4 /* words a cell */, site)) return SIRENRT_NIL;
  /* Counted, not stepped by 1.0: past 2^53, v - 1.0 == v and a stepped loop never ends. */
  int64_t acc = SIRENRT_NIL;
  for (int64_t i = (int64_t)(hi - lo) - 1; i >= 0; i--) { /* from the end, so the list is ascending */
    double v = lo + (double)i;
    acc = cons_words(ctx, acc, &v, 1, site);
    if (acc == SIRENRT_NIL) return SIRENRT_NIL;
  }
  return acc;
}
