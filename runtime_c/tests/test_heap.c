/* test_heap.c — the population's shared list heap (heap.c): a collection keeps exactly the cells some
 * particle can reach (the surviving ancestry: far fewer than N copies of the history) with their
 * contents, the heap between collections stays within the policy's bound and takes the chunks
 * collections freed again rather than fresh memory, answers do not depend on the thread count,
 * what estimate() mid-stream adds is garbage the next collection drops, and a long run with nested
 * lists, dropped suffixes and garbage resamples cleanly.  Checkpoints (checkpoint.c), which rebuild
 * that heap: a filter saved mid-stream and restored continues bit for bit, and damaged or foreign
 * bytes are refused.  Under ASan (how CI builds these tests) a cell read after its chunk was freed
 * by a collection is reported. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "check.h"
#include "population/population.h"


/* trail.si: keeps its whole trajectory as a list of (x, [x, y]), drops its two newest entries every
 * 100th step, and builds a throw-away list every step.
 *   fold(fun (xs, row) -> let y = List.hd(row) in let x <- gaussian(prev, 1.) in
 *        observe(gaussian(x, 0.5), y); let _ = List.range(0., 5.) in resample();
 *        let xs = cons((x, [x, y]), xs) in if t mod 100 = 99 then List.tl(List.tl(xs)) else xs) */
static const sirenrt_site trail_sites[] = {{"trail.si", 1, 1, 2, "fold"}};
static const char *const trail_files[] = {"/nonexistent/trail.csv"};

typedef struct trail_frame {
  int32_t pc, pad;
  double x;
  int64_t t;
  int64_t xs;
  double result_x;
  int64_t result_xs;
} trail_frame;

#define TRAIL_ELEM "PfLf"

static int32_t trail_resume(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight, const sirenrt_rows *rows) {
  (void)log_weight, (void)rows;
  trail_frame *f = (trail_frame *)frame;
  switch (f->pc) {
    case 0: f->x = 0.0; f->t = 0; f->xs = SIRENRT_NIL; break;
    case 1: break;
    case 2: {
      int64_t inner = sirenrt_list_cons(ctx, SIRENRT_NIL, 1);
      sirenrt_list_set(ctx, inner, 0, double_to_bits(f->x + 1.0));
      int64_t pair_x = sirenrt_list_cons(ctx, inner, 1);
      sirenrt_list_set(ctx, pair_x, 0, double_to_bits(f->x));
      int64_t cell = sirenrt_list_cons(ctx, f->xs, 2);
      sirenrt_list_set(ctx, cell, 0, double_to_bits(f->x));
      sirenrt_list_set(ctx, cell, 1, pair_x);
      f->xs = cell;
      if (f->t % 100 == 99) f->xs = sirenrt_list_tl(ctx, sirenrt_list_tl(ctx, f->xs, 0), 0);
      f->t++;
      break;
    }
    default: return -1;
  }
  int64_t row = sirenrt_stream_row(ctx, f->t, 0);
  if (row == SIRENRT_NEED) {
    f->pc = 1;
    return SIRENRT_NEED_ROW;
  }
  if (row == SIRENRT_END) {
    f->result_x = f->x;
    f->result_xs = f->xs;
    return SIRENRT_FINISHED;
  }
  double y = bits_to_double(sirenrt_list_get(ctx, row, 0, 0));
  f->x = sirenrt_sample_gaussian(ctx, f->x, 1.0, 0);
  sirenrt_observe_gaussian(ctx, f->x, 0.5, y, 0);
  (void)sirenrt_list_range(ctx, 0.0, 5.0, 0); /* garbage */
  f->pc = 2;
  return SIRENRT_AT_RESAMPLE;
}

static const sirenrt_root trail_roots[] = {{1, offsetof(trail_frame, xs), "L" TRAIL_ELEM},
                                           {2, offsetof(trail_frame, xs), "L" TRAIL_ELEM}};

static const sirenrt_model trail_model = {
    .abi_version = SIRENRT_ABI_VERSION, .name = "trail", .method = "smc", .plan = "x: sample",
    .result_type = "PfL" TRAIL_ELEM, .frame_size = sizeof(trail_frame),
    .result_offset = offsetof(trail_frame, result_x), .resume = trail_resume, .streamable = 1,
    .not_streamable_reason = "", .n_files = 1, .files = trail_files, .n_sites = 1, .sites = trail_sites,
    .n_roots = 2, .roots = trail_roots,
};

/* ---- the cells reachable from every slot's frame, each counted once -------------------------- */
typedef struct cell_set {
  uint64_t **slots;
  size_t cap, n;
  int64_t words;
} cell_set;

static int set_add(cell_set *s, uint64_t *cell) { /* 1 when new */
  if (2 * (s->n + 1) > s->cap) {
    cell_set bigger = {calloc(s->cap ? 2 * s->cap : 1024, sizeof(uint64_t *)), s->cap ? 2 * s->cap : 1024, 0, s->words};
    for (size_t i = 0; i < s->cap; i++)
      if (s->slots[i]) set_add(&bigger, s->slots[i]);
    free(s->slots);
    *s = bigger;
  }
  size_t i = ((uintptr_t)cell >> 5) * 0x9E3779B97F4A7C15ull % s->cap;
  while (s->slots[i]) {
    if (s->slots[i] == cell) return 0;
    i = (i + 1) % s->cap;
  }
  s->slots[i] = cell;
  s->n++;
  return 1;
}

static void reach_list(cell_set *s, int64_t h, const char *elem) {
  while (rt_is_heap(h)) {
    uint64_t *cell = rt_heap_cell(h);
    if (!set_add(s, cell)) return;
    s->words += RT_CELL_WORDS(cell[0]);
    if (elem[0] == 'P' && elem[2] == 'L') reach_list(s, (int64_t)cell[4], "f"); /* (x, [x, y]) */
    h = (int64_t)cell[2];
  }
}

/* Heap cells reachable from the population's frames; also checks that no young cell is left there. */
static int64_t reachable_words(const sirenrt_filter *f, int64_t *cells) {
  cell_set s = {0};
  for (int64_t i = 0; i < f->n; i++) {
    const rt_rootset *rs = rt_roots_now(f, i);
    for (int32_t j = 0; j < rs->n; j++) {
      int64_t h;
      memcpy(&h, f->frames + (size_t)i * f->model->frame_size + rs->slots[j].offset, sizeof h);
      CHECK(!rt_is_young(h), "slot %lld holds a young cell after a collection", (long long)i);
      reach_list(&s, h, rs->slots[j].elem);
    }
  }
  free(s.slots);
  *cells = (int64_t)s.n;
  return s.words;
}

/* A population this small would not start a pool: run the passes on the threads anyway. */
static void force_pool(sirenrt_filter *f, int threads) {
  if (threads > 1 && !f->pool) f->pool = rt_pool_new(threads);
}

/* Between collections the heap holds at most about nine times what the particles reach (what the
 * last collection kept and 8 times what the last minor one kept, heap.c; and the floor before the
 * first; measured: up to 5.6 times); a collection keeps what they reach and nothing else, and that is the ancestral
 * tree, not N trajectories.  Jacob, Murray & Rubenthaler (2015) bound the expected tree
 * by T + c N log N; here c = 10 is generous (measured: about 4). */
static void test_memory_follows_ancestry(int32_t threads) {
  enum { N = 1000, STEPS = 1000 };
  sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, threads, 0};
  sirenrt_filter *f = sirenrt_filter_new(&trail_model, N, 11, &o);
  CHECK(f != NULL, "filter_new: %s", sirenrt_last_error());
  if (!f) return;
  force_pool(f, threads);
  rt_rng g;
  rt_rng_init(&g, 99, 0, 0, RT_DOMAIN_USER);
  double y = 0.0;
  for (int t = 1; t <= STEPS; t++) {
    y += rt_normal(&g);
    if (sirenrt_filter_step(f, &y, 1)) {
      CHECK(0, "step %d: %s", t, sirenrt_filter_error(f));
      break;
    }
    if (t % 250 != 0) continue;
    int64_t before = rt_heap_live_words(f->heap);
    CHECK(rt_filter_collect(f, 1) == 0, "collect: %s", sirenrt_filter_error(f));
    int64_t cells, words = reachable_words(f, &cells);
    CHECK(rt_heap_live_words(f->heap) == words, "step %d, %d threads: heap holds %lld words, particles reach %lld",
          t, (int)threads, (long long)rt_heap_live_words(f->heap), (long long)words);
    CHECK(before <= 9 * words + (1 << 17) + 2 * 16 * N, "step %d: %lld words before the collection, %lld live", t,
          (long long)before, (long long)words);
    /* Each step adds an outer cell and a two-cell inner list per surviving lineage. */
    double bound = 3.0 * (t + 10.0 * N * log((double)N));
    printf("# step %d, %d threads: %lld cells reachable (N*t = %lld)\n", t, (int)threads, (long long)cells,
           (long long)N * t);
    CHECK(cells <= bound && cells < N * (int64_t)t / 4, "step %d: %lld cells reachable, bound %.0f, N*t = %lld", t,
          (long long)cells, bound, (long long)N * t);
  }
  /* The chunks collections free are taken again (heap.c: local_retire), not malloc'd afresh: fresh
   * memory is faulted in by the kernel page by page. */
  int64_t fresh, reused;
  rt_heap_chunk_counts(f->heap, &fresh, &reused);
  printf("# %d threads: %lld chunks from malloc, %lld taken again\n", (int)threads, (long long)fresh, (long long)reused);
  CHECK(reused > fresh, "%d threads: %lld chunks from malloc, only %lld taken again", (int)threads,
        (long long)fresh, (long long)reused);
  sirenrt_filter_free(f);
}

/* estimate() mid-stream runs a clone that shares the heap: what it adds no particle of the live
 * filter reaches, so a collection afterwards leaves what it left before, and the stream goes on as if
 * it had not been asked. */
static void test_estimate_clone_gives_back(void) {
  enum { N = 300, STEPS = 200 };
  sirenrt_filter *a = sirenrt_filter_new(&trail_model, N, 3, NULL), *b = sirenrt_filter_new(&trail_model, N, 3, NULL);
  CHECK(a && b, "filter_new");
  if (!a || !b) return;
  enum { CAP = 4 * STEPS + 8 }; /* x, the length, then (x, 2, x, x + 1) per entry */
  double ea[CAP], eb[CAP];
  int64_t na = 0, nb = 0;
  for (int t = 0; t < STEPS; t++) {
    double y = sin(0.1 * t);
    CHECK(!sirenrt_filter_step(a, &y, 1) && !sirenrt_filter_step(b, &y, 1), "step %d", t);
    if (t % 50 == 49) {
      CHECK(rt_filter_collect(a, 1) == 0, "collect");
      int64_t before = rt_heap_live_words(a->heap);
      CHECK(sirenrt_filter_estimate(a, ea, CAP, &na) == 0, "estimate: %s", sirenrt_filter_error(a));
      CHECK(rt_filter_collect(a, 1) == 0, "collect");
      CHECK(rt_heap_live_words(a->heap) == before, "step %d: estimate() left %lld words behind", t,
            (long long)(rt_heap_live_words(a->heap) - before));
    }
  }
  CHECK(sirenrt_filter_estimate(a, ea, CAP, &na) == 0 && sirenrt_filter_estimate(b, eb, CAP, &nb) == 0,
        "final estimates");
  CHECK(na == nb && memcmp(ea, eb, (size_t)na * sizeof(double)) == 0, "estimates in between changed the stream");
  sirenrt_filter_free(a);
  sirenrt_filter_free(b);
}

/* 10^4 resampling barriers over a population carrying lists 10^4 long, with nested lists, dropped
 * suffixes and garbage, under every resampler and an ESS threshold (barriers that keep the population),
 * on 1 and 2 threads: the answers agree bit for bit, and ASan sees no invalid access or leak. */
static void test_long_run(int32_t scheme, double ess_threshold) {
  enum { N = 64, STEPS = 10000 };
  static double ys[STEPS];
  for (int t = 0; t < STEPS; t++) ys[t] = 0.01 * t + sin(0.05 * t);
  enum { CAP = 4 * STEPS + 8 };
  static double est[2][CAP];
  int64_t n[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    sirenrt_options o = {scheme, ess_threshold, k + 1, 0};
    sirenrt_filter *f = sirenrt_filter_new(&trail_model, N, 8, &o);
    CHECK(f != NULL, "filter_new: %s", sirenrt_last_error());
    if (!f) return;
    force_pool(f, k + 1);
    CHECK(sirenrt_filter_run(f, ys, STEPS, 1) == 0, "run: %s", sirenrt_filter_error(f));
    CHECK(sirenrt_filter_estimate(f, est[k], CAP, &n[k]) == 0, "estimate: %s", sirenrt_filter_error(f));
    /* run() again starts from nothing: the previous run's cells are all given back */
    CHECK(sirenrt_filter_run(f, ys, 10, 1) == 0, "second run: %s", sirenrt_filter_error(f));
    sirenrt_filter_free(f);
  }
  CHECK(n[0] == n[1] && memcmp(est[0], est[1], (size_t)n[0] * sizeof(double)) == 0,
        "scheme %d, ess %g: 1 and 2 threads differ", scheme, ess_threshold);
}

/* Streams `steps` rows of a sine into f, from row `from`. */
static int feed(sirenrt_filter *f, int from, int steps) {
  for (int t = from; t < from + steps; t++) {
    double y = 3.0 * sin(0.07 * t) + 0.01 * t;
    if (sirenrt_filter_step(f, &y, 1)) return 1;
  }
  return 0;
}

/* A filter saved after 150 rows and restored (on another thread count) gives exactly the estimate,
 * log evidence and ESS of one that never stopped, after 150 more; saving does not disturb the saved
 * one either.  Run under ASan: the rebuilt heap is freed cell for cell with the filter. */
static void test_checkpoint_resumes_bit_for_bit(int32_t scheme, double ess_threshold) {
  enum { N = 200, CAP = 4 * 300 + 8 };
  sirenrt_options o = {scheme, ess_threshold, 1, 0};
  sirenrt_filter *a = sirenrt_filter_new(&trail_model, N, 21, &o), *b = sirenrt_filter_new(&trail_model, N, 21, &o);
  CHECK(a && b, "filter_new");
  if (!a || !b) return;
  CHECK(!feed(a, 0, 150) && !feed(b, 0, 150), "first half");
  uint8_t *buf = NULL;
  int64_t len = 0;
  CHECK(sirenrt_filter_save(b, &buf, &len) == 0 && buf && len > 0, "save: %s", sirenrt_filter_error(b));
  sirenrt_filter *c = buf ? sirenrt_filter_load(&trail_model, buf, len, 2) : NULL;
  CHECK(c != NULL, "load: %s", sirenrt_last_error());
  if (c) {
    CHECK(rt_heap_live_words(c->heap) <= rt_heap_live_words(b->heap), "the restored heap holds %lld words, the saved %lld",
          (long long)rt_heap_live_words(c->heap), (long long)rt_heap_live_words(b->heap));
    CHECK(!feed(a, 150, 150) && !feed(b, 150, 150) && !feed(c, 150, 150), "second half");
    static double ea[CAP], eb[CAP], ec[CAP];
    int64_t na = 0, nb = 0, nc = 0;
    CHECK(!sirenrt_filter_estimate(a, ea, CAP, &na) && !sirenrt_filter_estimate(b, eb, CAP, &nb) &&
              !sirenrt_filter_estimate(c, ec, CAP, &nc),
          "estimates");
    CHECK(na == nc && memcmp(ea, ec, (size_t)na * sizeof(double)) == 0, "scheme %d, ess %g: the restored filter differs",
          scheme, ess_threshold);
    CHECK(na == nb && memcmp(ea, eb, (size_t)na * sizeof(double)) == 0, "saving changed the saved filter");
    CHECK(sirenrt_filter_log_evidence(a) == sirenrt_filter_log_evidence(c) && sirenrt_filter_ess(a) == sirenrt_filter_ess(c),
          "log evidence and ESS after restoring");
    sirenrt_filter_free(c);
  }
  sirenrt_buffer_free(buf);
  sirenrt_filter_free(a);
  sirenrt_filter_free(b);
}

static int refused(const uint8_t *buf, int64_t len, const sirenrt_model *m, const char *why) {
  sirenrt_filter *f = sirenrt_filter_load(m, buf, len, 1);
  if (f) {
    sirenrt_filter_free(f);
    return 0;
  }
  return strstr(sirenrt_last_error(), why) != NULL;
}

static void test_checkpoint_refusals(void) {
  sirenrt_filter *f = sirenrt_filter_new(&trail_model, 50, 1, NULL);
  CHECK(f && !feed(f, 0, 40), "filter");
  if (!f) return;
  uint8_t *buf = NULL;
  int64_t len = 0;
  CHECK(sirenrt_filter_save(f, &buf, &len) == 0, "save: %s", sirenrt_filter_error(f));
  if (!buf) return;
  CHECK(refused(buf, 0, &trail_model, "not a sirenc checkpoint"), "empty: %s", sirenrt_last_error());
  CHECK(refused((const uint8_t *)"hello, world, not a checkpoint at all!", 38, &trail_model, "not a sirenc checkpoint"),
        "other bytes: %s", sirenrt_last_error());
  for (int64_t cut = 1; cut < len; cut += len / 37 + 1)
    CHECK(refused(buf, len - cut, &trail_model, "damaged") || refused(buf, len - cut, &trail_model, "truncated"),
          "truncated by %lld: %s", (long long)cut, sirenrt_last_error());
  uint8_t *bad = malloc((size_t)len);
  for (int64_t at = 8; bad && at < len; at += len / 53 + 1) {
    memcpy(bad, buf, (size_t)len);
    bad[at] ^= 0x10;
    CHECK(refused(bad, len, &trail_model, "") , "one bit flipped at %lld loads", (long long)at);
  }
  free(bad);
  sirenrt_model other = trail_model;
  other.plan = "x: symbolic";
  CHECK(refused(buf, len, &other, "another model"), "other model: %s", sirenrt_last_error());
  sirenrt_filter *g = sirenrt_filter_load(&trail_model, buf, len, 1);
  CHECK(g != NULL, "the intact bytes load: %s", sirenrt_last_error());
  sirenrt_filter_free(g);
  sirenrt_buffer_free(buf);
  sirenrt_filter_free(f);
}

/* The heap counts what it takes from malloc against a budget (memory.c): it refuses a cell the budget
 * has no room for (and marks the budget over, so the filter names the limit), and gives everything
 * back when cleared. */
static void test_heap_budget(void) {
  rt_budget b = {.words = 3 * 8192, .limit = 3 * 8192 * 8, .fixed = 0};
  rt_heap *h = rt_heap_new(1);
  CHECK(h != NULL, "heap");
  rt_heap_set_budget(h, &b);
  enum { BIG = 4000 }; /* payload words: a cell of a chunk of its own */
  int64_t cells[8];
  int made = 0;
  while (made < 8 && (cells[made] = rt_heap_new_cell(h, 0, BIG, 1, "f")) != SIRENRT_NIL) made++;
  CHECK(made == 6, "%d cells of %d words fit in a budget of %llu words", made, BIG + 2, (unsigned long long)b.words);
  CHECK(b.used <= b.words && b.over, "used %llu of %llu, over %d", (unsigned long long)b.used,
        (unsigned long long)b.words, (int)b.over);
  char *msg = rt_budget_message(&b);
  CHECK_CONTAINS(msg, "outgrow the filter's memory limit (192 KiB: ");
  free(msg);
  rt_heap_clear(h);
  CHECK(b.used == 0, "a cleared heap still holds %llu words of its budget", (unsigned long long)b.used);
  CHECK(rt_heap_new_cell(h, 0, BIG, 1, "f") != SIRENRT_NIL, "a cell after the heap was cleared");
  rt_heap_clear(h);
  rt_heap_free(h);
}

/* The collector by itself: lists of floats sharing a tail, a list of lists, and garbage among them,
 * made by two threads in turn.  It keeps exactly the cells the roots reach, rewrites the roots, and
 * every kept cell still holds its words, its length and a tail that is kept too. */
typedef struct root_array {
  uint64_t *words;
  int n;
} root_array;

static void walk_array(void *arg, rt_root_fn *fn, void *fn_arg) {
  root_array *r = arg;
  for (int i = 0; i < r->n; i++) fn(fn_arg, &r->words[i]);
}

static int64_t cons_float(rt_heap *h, int k, int64_t tail, double x) {
  uint32_t len = tail == SIRENRT_NIL ? 1 : RT_HEADER_LEN(rt_heap_cell(tail)[0]) + 1;
  int64_t c = rt_heap_new_cell(h, k, 2, len, "f");
  rt_heap_cell(c)[2] = (uint64_t)tail;
  memcpy(&rt_heap_cell(c)[3], &x, sizeof x);
  return c;
}

static double list_sum(int64_t l, int64_t *n) {
  double s = 0.0;
  for (*n = 0; l != SIRENRT_NIL; l = (int64_t)rt_heap_cell(l)[2], ++*n) {
    double x;
    memcpy(&x, &rt_heap_cell(l)[3], sizeof x);
    s += x;
  }
  return s;
}

/* A team of two that takes turns (the filter's tests run the collector on real threads). */
static void turns(void *arg, void (*fn)(void *, int, int), void *fn_arg) {
  (void)arg;
  fn(fn_arg, 1, 2);
  fn(fn_arg, 0, 2);
}

static void test_collector(void) {
  rt_team team = {turns, NULL, 2};
  rt_heap *h = rt_heap_new(2);
  CHECK(h != NULL, "heap");
  /* shared: 0..99 on thread 0; a = 1000 :: shared and b = 2000 :: shared on thread 1 in a later
   * epoch; garbage beside each; then [a, b, shared] as a list of lists on thread 0. */
  int64_t shared = SIRENRT_NIL, junk = SIRENRT_NIL;
  for (int i = 0; i < 100; i++) {
    shared = cons_float(h, 0, shared, i);
    junk = cons_float(h, 0, junk, -i);
  }
  rt_heap_next_epoch(h);
  int64_t a = cons_float(h, 1, shared, 1000.0), b = cons_float(h, 1, shared, 2000.0);
  for (int i = 0; i < 50; i++) junk = cons_float(h, 1, junk, i);
  rt_heap_next_epoch(h);
  int64_t outer = SIRENRT_NIL, parts[3] = {shared, b, a};
  for (int i = 0; i < 3; i++) {
    int64_t c = rt_heap_new_cell(h, 0, 2, (uint32_t)i + 1, "Lf");
    rt_heap_cell(c)[2] = (uint64_t)outer;
    rt_heap_cell(c)[3] = (uint64_t)parts[i];
    outer = c;
  }
  uint64_t roots[2] = {(uint64_t)outer, (uint64_t)a};
  root_array ra = {roots, 2};
  int64_t cells_live = 100 + 2 + 3;
  CHECK(rt_heap_live_words(h) == (100 + 100 + 2 + 50) * 4 + 3 * 4, "words before: %lld",
        (long long)rt_heap_live_words(h));
  CHECK(rt_heap_collect(h, walk_array, &ra, 0, &team) == 0, "collect");
  CHECK(rt_heap_live_words(h) == cells_live * 4, "kept %lld words, %lld live", (long long)rt_heap_live_words(h),
        (long long)cells_live * 4);
  CHECK(roots[0] != (uint64_t)outer && roots[1] != (uint64_t)a, "the roots were rewritten");
  int64_t n;
  CHECK(list_sum((int64_t)roots[1], &n) == 1000.0 + 4950.0 && n == 101, "a: %lld cells", (long long)n);
  int64_t l = (int64_t)roots[0];
  double want[3] = {1000.0 + 4950.0, 2000.0 + 4950.0, 4950.0};
  for (int i = 0; i < 3; i++, l = (int64_t)rt_heap_cell(l)[2]) {
    CHECK(RT_HEADER_LEN(rt_heap_cell(l)[0]) == (uint32_t)(3 - i), "outer length");
    double got = list_sum((int64_t)rt_heap_cell(l)[3], &n);
    CHECK(got == want[i] && n == (i < 2 ? 101 : 100), "part %d: sum %g of %lld", i, got, (long long)n);
  }
  /* a's tail and the third part are one list still */
  int64_t third = (int64_t)rt_heap_cell((int64_t)rt_heap_cell((int64_t)rt_heap_cell((int64_t)roots[0])[2])[2])[3];
  CHECK((int64_t)rt_heap_cell((int64_t)roots[1])[2] == third, "a shared tail stays shared");
  /* New cells on top of the kept ones, beside garbage, and one root gone: a minor collection moves
   * the new cells it reaches and leaves every kept one where it is; a major one keeps what the roots
   * reach now. */
  rt_heap_next_epoch(h);
  int64_t top = (int64_t)roots[1];
  for (int i = 0; i < 3; i++) {
    top = cons_float(h, 1, top, 0.5);
    junk = cons_float(h, 0, top, 7.0);
  }
  ra.n = 1;
  roots[0] = (uint64_t)top;
  CHECK(rt_heap_collect(h, walk_array, &ra, 0, &team) == 0, "a minor collection");
  CHECK(rt_heap_live_words(h) == (cells_live + 3) * 4, "a minor collection keeps the mature cells: %lld words",
        (long long)rt_heap_live_words(h));
  CHECK(list_sum((int64_t)roots[0], &n) == 1.5 + 1000.0 + 4950.0 && n == 104, "a with three more");
  CHECK(rt_heap_collect(h, walk_array, &ra, 1, &team) == 0, "a major collection");
  CHECK(rt_heap_live_words(h) == 104 * 4, "kept %lld words", (long long)rt_heap_live_words(h));
  CHECK(list_sum((int64_t)roots[0], &n) == 1.5 + 1000.0 + 4950.0 && n == 104, "a again");
  rt_heap_free(h);
}

int main(void) {
  test_heap_budget();
  test_collector();
  test_memory_follows_ancestry(1);
  test_memory_follows_ancestry(2);
  test_estimate_clone_gives_back();
  test_long_run(SIRENRT_SYSTEMATIC, 0.0);
  test_long_run(SIRENRT_MULTINOMIAL, 0.0);
  test_long_run(SIRENRT_RESIDUAL, 0.5);
  test_long_run(SIRENRT_STRATIFIED, 0.8);
  test_checkpoint_resumes_bit_for_bit(SIRENRT_SYSTEMATIC, 0.0);
  test_checkpoint_resumes_bit_for_bit(SIRENRT_MULTINOMIAL, 0.5);
  test_checkpoint_refusals();
  return check_report("test_heap");
}
