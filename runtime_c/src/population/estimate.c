/* estimate.c — sirenrt_filter_estimate and the result estimator.
 *
 * While a stream is open some particles have not finished, so estimate() runs a deep copy of the
 * population on the closed stream to the end and estimates that; the live filter is untouched and
 * the answer equals what run() on the rows so far would give.  The answer is cached until the
 * population moves again.
 *
 * The estimator (ARCHITECTURE.md §16.1 with the §0.3 fixes) is the weighted posterior mean of
 * the program's result, walked structurally along the result type descriptor and flattened in
 * preorder.  A float or bool is averaged; a pair is its components in order; a list is its length
 * (the longest particle list) followed by per-index means, where index k averages the particles whose
 * list is longer than k with their weights renormalised over those particles.  If every such particle
 * has zero weight, they count equally (keeps the estimate finite; the original would report 0). */
#include "population.h"
#include "engine/sym.h"

#include <stdlib.h>
#include <string.h>

/* One particle's value of the type being estimated: words[offset ...], with its weight. */
typedef struct item {
  sirenrt_ctx *ctx;
  const uint64_t *words;
  double w;
} item;

typedef struct out_buf {
  double *v;
  int64_t n, cap;
} out_buf;

static int emit(out_buf *o, double x) {
  if (o->n == o->cap) {
    int64_t cap = o->cap ? o->cap * 2 : 16;
    double *v = realloc(o->v, (size_t)cap * sizeof(double));
    if (!v) return -1;
    o->v = v;
    o->cap = cap;
  }
  o->v[o->n++] = x;
  return 0;
}

/* Returns 0, or -1 with the failing particle's error (or out of memory) in *err. */
static int estimate_value(const char *type, item *items, int64_t m, size_t offset, out_buf *o, char **err);

/* A weighted mean, accumulated one value at a time.  Averaging the offsets from one particle's
 * value keeps a value every particle agrees on exact (three particles at 3.0 give 3.0, not
 * 3.0000000000000004) and loses less to cancellation; the plain weighted sum is the IEEE answer
 * once a value is infinite, where an offset from an infinite base would be inf - inf = NaN. */
typedef struct mean_acc {
  double base, s, plain, total;
  int infinite;
} mean_acc;

static const mean_acc MEAN_ACC_EMPTY = {NAN, 0.0, 0.0, 0.0, 0};

/* Adds word w (a float or bool of `kind`) with weight wk; zero weights are skipped so that their
 * values (maybe NaN) cannot poison the sum. */
static void mean_add(mean_acc *a, char kind, uint64_t w, double wk) {
  if (!(wk > 0.0)) return;
  double x = kind == 'f' ? rt_double_of(w) : (w != 0 ? 1.0 : 0.0);
  if (isnan(a->base)) a->base = x;
  a->s += wk * (x - a->base);
  a->plain += wk * x;
  a->infinite |= isinf(x);
  a->total += wk;
}

static int mean_emit(const mean_acc *a, out_buf *o) {
  if (!(a->total > 0.0)) return emit(o, 0.0);
  return emit(o, a->infinite ? a->plain / a->total : a->base + a->s / a->total);
}

static int estimate_scalar(char kind, const item *items, int64_t m, size_t offset, out_buf *o) {
  mean_acc a = MEAN_ACC_EMPTY;
  for (int64_t i = 0; i < m; i++) mean_add(&a, kind, items[i].words[offset], items[i].w);
  return mean_emit(&a, o);
}

/* The estimate's error for what particle c recorded while its value was read, at its site; takes it
 * from c. */
static char *take_error(sirenrt_ctx *c) {
  const sirenrt_model *m = c->filter ? c->filter->model : NULL;
  char *what = rt_strdup_printf("while estimating the result: %s", c->err_msg ? c->err_msg : "out of memory");
  int32_t site = c->err_msg ? c->err_site : -1;
  char *msg = what && site != RT_SITE_RENDERED ? rt_render_site(m, site, "error", what) : NULL;
  if (what && !msg) msg = rt_strdup_printf("error: %s", what);
  free(what);
  rt_free_message(c->err_msg);
  c->err_msg = NULL;
  return msg;
}

/* A symbolic word: each particle's expected value (ARCHITECTURE.md §10.4), computed in its own state (which may
 * hoist, or sample where it must), averaged as a float.  Zero-weight particles are skipped, as their
 * values are.  A mean that fails (a plan violation during the final expectation) fails the estimate
 * with the particle's error. */
static int estimate_sym(const item *items, int64_t m, size_t offset, out_buf *o, char **err) {
  mean_acc a = MEAN_ACC_EMPTY;
  for (int64_t i = 0; i < m; i++) {
    if (!(items[i].w > 0.0)) continue;
    double x;
    if (rt_sym_estimate_word(items[i].ctx, items[i].words[offset], &x)) {
      *err = take_error(items[i].ctx);
      items[i].ctx->flagged = 0;
      return -1;
    }
    mean_add(&a, 'f', rt_sym_word(x), items[i].w);
  }
  return mean_emit(&a, o);
}

/* estimate_list's per-index means for a list of floats or bools: the same arithmetic in the same
 * order (per index, over the particles in slot order, weights renormalised, then estimate_scalar's
 * sums), so the same bits, but one sequential walk along each particle's list instead of one pass
 * over every particle per index, which reads the lists at random and, once they outgrow the cache,
 * costs a miss per element.  A view (`reversed`) is read the same way, each particle's first len[i]
 * cells from its head, the cell at p being element len[i] - 1 - p of the view: so the per-index sums
 * and their order are the reversed list's, and no reversed list is made.  Offspring share their
 * ancestors' cells, and the slots of one ancestry are next to each other: once a particle's list
 * reaches a heap cell the particle before it had at the same place, the rest is that particle's,
 * whose words are still in `vals`, so only the cells no earlier neighbour had are read: the
 * ancestral tree's, not N T (benchmarks/trajectory.py's `returned`, N = 10^5: its estimate 11.5 ->
 * 10.3-10.5 ns a particle-step, with the views; the sums per index, one a particle, are most of the
 * rest).  -1: out of memory or a particle's error (on its context). */
static int estimate_scalar_list(char kind, const item *items, int64_t m, size_t offset, const int64_t *len,
                                int64_t longest, int reversed, out_buf *o) {
  size_t n = (size_t)(longest ? longest : 1);
  double *total = calloc(n, sizeof(double));
  int64_t *cnt = calloc(n, sizeof(int64_t));
  mean_acc *acc = malloc(n * sizeof(mean_acc));
  int64_t *cells = malloc(n * sizeof(int64_t)), had = 0; /* the last particle's cells, and how many */
  uint64_t *vals = malloc(n * sizeof(uint64_t));
  int status = -1;
  if (!total || !cnt || !acc || !cells || !vals) goto done;
  for (int64_t i = 0; i < m; i++)
    for (int64_t k = 0; k < len[i]; k++) {
      total[k] += items[i].w;
      cnt[k]++;
    }
  for (int64_t k = 0; k < longest; k++) acc[k] = MEAN_ACC_EMPTY;
  for (int64_t i = 0; i < m; i++) {
    int64_t cursor = (int64_t)items[i].words[offset];
    /* (A heap cell is the same list wherever it is reached, of the same length: a young handle is an
     * index into its particle's own arena.) */
    for (int64_t p = 0; p < len[i] && !(p < had && cursor == cells[p] && rt_is_heap(cursor)); p++) {
      cells[p] = cursor;
      if (rt_list_uncons(items[i].ctx, cursor, &vals[p], 1, &cursor, -1)) goto done;
    }
    had = len[i];
    for (int64_t p = 0; p < len[i]; p++) {
      int64_t k = reversed ? len[i] - 1 - p : p;
      mean_add(&acc[k], kind, vals[p], total[k] > 0.0 ? items[i].w / total[k] : 1.0 / (double)cnt[k]);
    }
  }
  status = 0;
  for (int64_t k = 0; k < longest && !status; k++) status = mean_emit(&acc[k], o);
done:
  free(total);
  free(cnt);
  free(acc);
  free(cells);
  free(vals);
  return status;
}

/* The first error any of the m particles recorded, taken into *err. */
static void first_error(const item *items, int64_t m, char **err) {
  for (int64_t i = 0; i < m; i++)
    if (items[i].ctx->err_msg) {
      *err = take_error(items[i].ctx);
      return;
    }
}

/* Each particle's list length at words[offset] less `drop` (at least 0), and the longest; -1 on a
 * particle's error. */
static int list_lengths(const item *items, int64_t m, size_t offset, int64_t drop, int64_t *lengths,
                        int64_t *longest) {
  *longest = 0;
  for (int64_t i = 0; i < m; i++) {
    double len = sirenrt_list_len(items[i].ctx, (int64_t)items[i].words[offset]);
    if (items[i].ctx->err_msg) return -1;
    lengths[i] = (int64_t)len > drop ? (int64_t)len - drop : 0;
    if (lengths[i] > *longest) *longest = lengths[i];
  }
  return 0;
}

/* A view 'V' drop kind (sirenrt.h): estimated as the list it stands for. */
static int estimate_view(char kind, int64_t drop, const item *items, int64_t m, size_t offset, out_buf *o,
                         char **err) {
  int64_t *lengths = malloc((size_t)(m ? m : 1) * sizeof(int64_t)), longest;
  int status = -1;
  if (!lengths) return -1;
  if (list_lengths(items, m, offset, drop, lengths, &longest)) {
    first_error(items, m, err);
  } else if (!emit(o, (double)longest)) {
    status = estimate_scalar_list(kind, items, m, offset, lengths, longest, 1, o);
    if (status) first_error(items, m, err);
  }
  free(lengths);
  return status;
}

static int estimate_list(const char *elem, item *items, int64_t m, size_t offset, out_buf *o, char **err) {
  const char *end;
  int64_t k = rt_type_words(elem, &end);
  int64_t *cursor = malloc((size_t)(m ? m : 1) * sizeof(int64_t));
  item *sub = malloc((size_t)(m ? m : 1) * sizeof(item));
  uint64_t *words = malloc((size_t)(m ? m : 1) * (size_t)(k ? k : 1) * sizeof(uint64_t));
  int64_t *lengths = malloc((size_t)(m ? m : 1) * sizeof(int64_t));
  int status = -1;
  if (!cursor || !sub || !words || !lengths) goto done;
  int64_t longest;
  if (list_lengths(items, m, offset, 0, lengths, &longest)) goto particle_error;
  for (int64_t i = 0; i < m; i++) cursor[i] = (int64_t)items[i].words[offset];
  if (emit(o, (double)longest)) goto done;
  if (*elem == 'f' || *elem == 'b') {
    status = estimate_scalar_list(*elem, items, m, offset, lengths, longest, 0, o);
    if (status) goto particle_error;
    goto done;
  }
  for (int64_t pos = 0; pos < longest; pos++) {
    int64_t cnt = 0;
    double total = 0.0;
    for (int64_t i = 0; i < m; i++) {
      if (cursor[i] == SIRENRT_NIL) continue;
      uint64_t *dst = words + (size_t)cnt * (size_t)k;
      if (rt_list_uncons(items[i].ctx, cursor[i], dst, (int32_t)k, &cursor[i], -1)) goto particle_error;
      sub[cnt] = (item){items[i].ctx, dst, items[i].w};
      total += items[i].w;
      cnt++;
    }
    for (int64_t j = 0; j < cnt; j++) sub[j].w = total > 0.0 ? sub[j].w / total : 1.0 / (double)cnt;
    if (estimate_value(elem, sub, cnt, 0, o, err)) goto done;
  }
  status = 0;
  goto done;
particle_error:
  first_error(items, m, err);
done:
  free(cursor);
  free(sub);
  free(words);
  free(lengths);
  return status;
}

static int estimate_value(const char *type, item *items, int64_t m, size_t offset, out_buf *o, char **err) {
  const char *end;
  switch (*type) {
    case 'f':
    case 'b': return estimate_scalar(*type, items, m, offset, o);
    case 'S': return estimate_sym(items, m, offset, o, err);
    case 'u': return 0;
    case 'P': {
      int64_t a = rt_type_words(type + 1, &end);
      if (estimate_value(type + 1, items, m, offset, o, err)) return -1;
      return estimate_value(end, items, m, offset + (size_t)a, o, err);
    }
    case 'L': return estimate_list(type + 1, items, m, offset, o, err);
    case 'V': return estimate_view(type[2], type[1] - '0', items, m, offset, o, err);
    default: return -1;
  }
}

int rt_estimate_population(sirenrt_filter *f, const double *w, double **out, int64_t *n_out) {
  item *items = malloc((size_t)f->n * sizeof(item));
  if (!items) return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  for (int64_t i = 0; i < f->n; i++)
    items[i] = (item){&f->ctx[i], (const uint64_t *)(f->frames + (size_t)i * f->model->frame_size +
                                                      f->model->result_offset),
                      w[i]};
  out_buf o = {NULL, 0, 0};
  char *err = NULL;
  int status = estimate_value(rt_result_words_type(f->model), items, f->n, 0, &o, &err);
  free(items);
  if (status) {
    free(o.v);
    return rt_filter_fail(f, err ? err : rt_strdup_printf("error: out of memory"));
  }
  *out = o.v;
  *n_out = o.n;
  return 0;
}

int rt_flatten_particles(sirenrt_filter *f, double **out, int64_t *n_out, int64_t *offsets) {
  out_buf o = {NULL, 0, 0};
  char *err = NULL;
  for (int64_t i = 0; i < f->n; i++) {
    /* One particle of weight 1: its "estimate" is its value, exactly (estimate_scalar adds nothing). */
    item one = {&f->ctx[i], (const uint64_t *)(f->frames + (size_t)i * f->model->frame_size + f->model->result_offset),
                1.0};
    offsets[i] = o.n;
    if (estimate_value(rt_result_words_type(f->model), &one, 1, 0, &o, &err)) {
      free(o.v);
      return rt_filter_fail(f, err ? err : rt_strdup_printf("error: out of memory"));
    }
  }
  offsets[f->n] = o.n;
  *out = o.v;
  *n_out = o.n;
  return 0;
}

int32_t rt_copy_answer(double *out, int64_t cap, int64_t *n_out, const double *src, int64_t n) {
  if (n_out) *n_out = n;
  if (cap < n || (n > 0 && !out)) return 2;
  if (n) memcpy(out, src, (size_t)n * sizeof(double));
  return 0;
}

/* ------------------------------------------------------------------ posterior atoms ---------- */

static int emit_point(out_buf *o, double x) {
  const double atom[SIRENRT_ATOM_WORDS] = {x, SIRENRT_ATOM_POINT, 0.0, 0.0, 0.0, 0.0, x};
  for (int k = 0; k < SIRENRT_ATOM_WORDS; k++)
    if (emit(o, atom[k])) return -1;
  return 0;
}

/* Particle c's atoms of the view of type t (sirenrt.h's 'V' k a) over list l: its length, then its
 * elements as points, the last of l's first len - k cells first. */
static int view_atoms(const char *t, sirenrt_ctx *c, int64_t l, out_buf *o, char **err) {
  double len = sirenrt_list_len(c, l);
  int64_t n = (int64_t)len - (t[1] - '0');
  if (n < 0) n = 0;
  double *x = malloc((size_t)(n ? n : 1) * sizeof *x);
  int status = c->err_msg || !x || emit(o, (double)n) ? -1 : 0;
  for (int64_t p = 0; p < n && !status; p++) {
    uint64_t w;
    status = rt_list_uncons(c, l, &w, 1, &l, -1);
    x[n - 1 - p] = t[2] == 'f' ? rt_double_of(w) : (w != 0 ? 1.0 : 0.0);
  }
  for (int64_t p = 0; p < n && !status; p++) status = emit_point(o, x[p]);
  free(x);
  if (status && c->err_msg) *err = take_error(c);
  return status;
}

/* Particle c's atoms of a value of type t stored at words[*at ...] (sirenrt_filter_posterior's layout);
 * -1: out of memory, or the particle's error in *err. */
static int atoms_value(const char *t, sirenrt_ctx *c, const uint64_t *words, size_t *at, out_buf *o, char **err) {
  switch (*t) {
    case 'f': return emit_point(o, rt_double_of(words[(*at)++]));
    case 'b': return emit_point(o, words[(*at)++] != 0 ? 1.0 : 0.0);
    case 'S': {
      double atom[SIRENRT_ATOM_WORDS];
      if (rt_sym_atom(c, words[(*at)++], atom, -1)) {
        *err = take_error(c);
        c->flagged = 0;
        return -1;
      }
      for (int k = 0; k < SIRENRT_ATOM_WORDS; k++)
        if (emit(o, atom[k])) return -1;
      return 0;
    }
    case 'u': return 0;
    case 'P':
      if (atoms_value(t + 1, c, words, at, o, err)) return -1;
      return atoms_value(rt_skip_type(t + 1), c, words, at, o, err);
    case 'L': break;
    case 'V': return view_atoms(t, c, words[(*at)++], o, err);
    default: return -1;
  }
  const char *end;
  int64_t k = rt_type_words(t + 1, &end), cursor = (int64_t)words[(*at)++];
  double len = sirenrt_list_len(c, cursor);
  if (c->err_msg || emit(o, len)) goto fail;
  uint64_t *cell = malloc((size_t)(k ? k : 1) * sizeof *cell);
  if (!cell) return -1;
  int status = 0;
  for (int64_t i = 0; i < (int64_t)len && !status; i++) {
    size_t pos = 0;
    if (rt_list_uncons(c, cursor, cell, (int32_t)k, &cursor, -1)) {
      free(cell);
      goto fail;
    }
    status = atoms_value(t + 1, c, cell, &pos, o, err);
  }
  free(cell);
  return status;
fail:
  if (c->err_msg) *err = take_error(c);
  return -1;
}

/* The atoms of one particle's flattened result u (type t) from its flattened side values v (type
 * side): a leaf's side is a full atom, or a number alone, its variance: a Gaussian of the leaf's
 * value as mean (tier 2's trajectories keep only their elements' variances beside their means).
 * Without a side (side NULL), every number is a point. */
static int expand_atoms(const char *t, const char *side, const double *u, int64_t *ua, const double *v, int64_t *va,
                        out_buf *o) {
  switch (*t) {
    case 'f':
    case 'b':
    case 'S': {
      double m = u[(*ua)++], atom[SIRENRT_ATOM_WORDS] = {m, SIRENRT_FAM_GAUSSIAN, m, 0.0, 0.0, 1.0, 0.0};
      if (!side) return emit_point(o, m);
      if (*side == 'f') atom[3] = v[(*va)++];
      else
        for (int k = 0; k < SIRENRT_ATOM_WORDS; k++) atom[k] = v[(*va)++];
      /* A Gaussian of variance 0 is a point; of variance NaN, a trajectory's element known by its mean. */
      if (atom[1] == SIRENRT_FAM_GAUSSIAN && !(atom[3] > 0.0)) {
        if (atom[3] != atom[3]) {
          const double mean_only[SIRENRT_ATOM_WORDS] = {atom[0], SIRENRT_ATOM_MEAN, 0.0, 0.0, 0.0, 0.0, atom[0]};
          memcpy(atom, mean_only, sizeof atom);
        } else
          return emit_point(o, atom[0]);
      }
      for (int k = 0; k < SIRENRT_ATOM_WORDS; k++)
        if (emit(o, atom[k])) return -1;
      return 0;
    }
    case 'u': return 0;
    case 'P':
      if (expand_atoms(t + 1, side ? side + 1 : NULL, u, ua, v, va, o)) return -1;
      return expand_atoms(rt_skip_type(t + 1), side ? rt_skip_type(side + 1) : NULL, u, ua, v, va, o);
    case 'L': {
      int64_t len = (int64_t)u[(*ua)++];
      if (side) (*va)++; /* the side list's length: the same */
      if (emit(o, (double)len)) return -1;
      for (int64_t i = 0; i < len; i++)
        if (expand_atoms(t + 1, side ? side + 1 : NULL, u, ua, v, va, o)) return -1;
      return 0;
    }
    default: return -1;
  }
}

int rt_points_of_flat(const char *type, const double *values, const int64_t *offsets, int64_t n, double **out,
                      int64_t *n_out, int64_t *out_offsets) {
  out_buf o = {NULL, 0, 0};
  for (int64_t i = 0; i < n; i++) {
    int64_t at = offsets[i];
    out_offsets[i] = o.n;
    if (expand_atoms(type, NULL, values, &at, NULL, NULL, &o)) {
      free(o.v);
      return -1;
    }
  }
  out_offsets[n] = o.n;
  *out = o.v;
  *n_out = o.n;
  return 0;
}

/* Every particle's atoms, one after another (offsets as rt_flatten_particles's): a tier-2 model's
 * from its frame's side after the result; otherwise derived from the result's words. */
static int flatten_atoms(sirenrt_filter *f, double **out, int64_t *n_out, int64_t *offsets) {
  const sirenrt_model *m = f->model;
  const char *end, *side = rt_result_atoms(m);
  size_t skip = (size_t)rt_type_words(m->result_type, &end);
  out_buf o = {NULL, 0, 0}, u = {NULL, 0, 0}, v = {NULL, 0, 0};
  char *err = NULL;
  int status = 0;
  for (int64_t i = 0; i < f->n && !status; i++) {
    const uint64_t *words = (const uint64_t *)(f->frames + (size_t)i * m->frame_size + m->result_offset);
    item one = {&f->ctx[i], words, 1.0};
    size_t at = 0;
    offsets[i] = o.n;
    if (!side) {
      status = atoms_value(rt_result_words_type(m), &f->ctx[i], words, &at, &o, &err);
      continue;
    }
    u.n = v.n = 0;
    int64_t ua = 0, va = 0;
    status = estimate_value(m->result_type, &one, 1, 0, &u, &err) || estimate_value(side, &one, 1, skip, &v, &err) ||
             expand_atoms(m->result_type, side, u.v, &ua, v.v, &va, &o);
  }
  free(u.v);
  free(v.v);
  if (status) {
    free(o.v);
    return rt_filter_fail(f, err ? err : rt_strdup_printf("error: out of memory"));
  }
  offsets[f->n] = o.n;
  *out = o.v;
  *n_out = o.n;
  return 0;
}

/* ------------------------------------------------------------------ flattened particles -------- */

/* A particle's flattened values and how far the walk has read them. */
typedef struct flat_item {
  const double *v;
  int64_t at;
} flat_item;

/* estimate_value over flattened particles: the same means (mean_acc, in the same order) and the same
 * per-index renormalisation of lists, reading each particle's words in the preorder they were
 * flattened in.  items[i] has weight w[i]. */
static int flat_value(const char *type, flat_item **items, const double *w, int64_t m, out_buf *o) {
  const char *end;
  switch (*type) {
    case 'f':
    case 'b':
    case 'S': { /* already a number: a bool 0/1, a symbolic word its expected value */
      mean_acc a = MEAN_ACC_EMPTY;
      for (int64_t i = 0; i < m; i++) mean_add(&a, 'f', rt_sym_word(items[i]->v[items[i]->at++]), w[i]);
      return mean_emit(&a, o);
    }
    case 'u': return 0;
    case 'P':
      rt_type_words(type + 1, &end);
      if (flat_value(type + 1, items, w, m, o)) return -1;
      return flat_value(end, items, w, m, o);
    case 'L': break;
    default: return -1;
  }
  size_t cap = (size_t)(m ? m : 1);
  int64_t *len = malloc(cap * sizeof(int64_t)), longest = 0;
  flat_item **sub = malloc(cap * sizeof(flat_item *));
  double *sw = malloc(cap * sizeof(double));
  int status = -1;
  if (!len || !sub || !sw) goto done;
  for (int64_t i = 0; i < m; i++) {
    len[i] = (int64_t)items[i]->v[items[i]->at++];
    if (len[i] > longest) longest = len[i];
  }
  if (emit(o, (double)longest)) goto done;
  for (int64_t pos = 0; pos < longest; pos++) {
    int64_t cnt = 0;
    double total = 0.0;
    for (int64_t i = 0; i < m; i++)
      if (len[i] > pos) {
        sub[cnt] = items[i];
        sw[cnt++] = w[i];
        total += w[i];
      }
    for (int64_t j = 0; j < cnt; j++) sw[j] = total > 0.0 ? sw[j] / total : 1.0 / (double)cnt;
    if (flat_value(type + 1, sub, sw, cnt, o)) goto done;
  }
  status = 0;
done:
  free(len);
  free(sub);
  free(sw);
  return status;
}

int rt_estimate_flat(const char *type, const double *values, const int64_t *offsets, const double *w, int64_t n,
                     double **out, int64_t *n_out) {
  size_t cap = (size_t)(n ? n : 1);
  flat_item *items = malloc(cap * sizeof(flat_item));
  flat_item **ptrs = malloc(cap * sizeof(flat_item *));
  out_buf o = {NULL, 0, 0};
  int status = -1;
  if (items && ptrs) {
    for (int64_t i = 0; i < n; i++) {
      items[i] = (flat_item){values + offsets[i], 0};
      ptrs[i] = &items[i];
    }
    status = flat_value(type, ptrs, w, n, &o);
  }
  free(items);
  free(ptrs);
  if (status) {
    free(o.v);
    return -1;
  }
  *out = o.v;
  *n_out = o.n;
  return 0;
}

/* ------------------------------------------------------------------ estimate() ----------------- */

/* A copy of the population for estimate() while streaming: it shares the data tables and the heap's
 * cells (adding its own, which the live filter's next collection finds no frame reaching), and
 * copies the young arenas. */
static sirenrt_filter *clone_population(const sirenrt_filter *f) {
  sirenrt_filter *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  *c = *f;
  c->progress = NULL; /* the clone finishes the run for an estimate: not the host's progress */
  /* The clone runs on the calling thread; it borrows the tables under a lock of its own. */
  c->pool = NULL;
  c->threads = 1;
  pthread_mutex_init(&c->table_lock, NULL);
  c->owns_tables = 0;
  c->owns_heap = 0;
  c->error = NULL;
  c->failure = NULL;
  c->runtime_plan = NULL;
  c->est = NULL;
  c->est_valid = 0;
  c->history = NULL; /* the clone's barriers are not the live filter's history */
  c->n_history = c->cap_history = 0;
  if (rt_alloc_population(c)) {
    sirenrt_filter_free(c);
    return NULL;
  }
  memcpy(c->frames, f->frames, (size_t)f->n * f->model->frame_size);
  memcpy(c->state, f->state, (size_t)f->n);
  memcpy(c->logw, f->logw, (size_t)f->n * sizeof(double));
  for (int64_t i = 0; i < f->n; i++) {
    c->ctx[i] = f->ctx[i];
    c->ctx[i].filter = c;
    c->ctx[i].logw = &c->logw[i];
    c->ctx[i].arena = NULL;
    c->ctx[i].arena_used = c->ctx[i].arena_cap = 0;
    c->ctx[i].err_msg = NULL;
    /* The clone shares the particles' symbolic states (its first write copies, rt_sym_own) and
     * drops its references when it is freed. */
    if (c->ctx[i].sym) rt_sym_retain(c->ctx[i].sym, 1);
    if (rt_arena_copy(&c->ctx[i], &f->ctx[i])) {
      sirenrt_filter_free(c);
      return NULL;
    }
  }
  return c;
}

static int all_finished(const sirenrt_filter *f) {
  for (int64_t i = 0; i < f->n; i++)
    if (f->state[i] != SIRENRT_FINISHED) return 0;
  return 1;
}

/* Estimates a finished population into f->est. */
static int estimate_finished(sirenrt_filter *f, sirenrt_filter *target) {
  if (rt_normalise(f->logw, f->n, f->w) == -INFINITY) return rt_zero_weight_error(f);
  free(target->est);
  target->est = NULL;
  if (rt_estimate_population(f, f->w, &target->est, &target->est_n)) return 1;
  target->est_valid = 1;
  return 0;
}

/* A finished population to read results from: f itself, or a clone of it run to the end of the rows
 * given so far (*clone, freed by the caller).  NULL with the error on f. */
static sirenrt_filter *finished_population(sirenrt_filter *f, sirenrt_filter **clone) {
  *clone = NULL;
  if (all_finished(f)) return f;
  sirenrt_filter *c = clone_population(f);
  if (!c) return rt_filter_fail(f, rt_strdup_printf("error: out of memory")), NULL;
  c->stream_open = 0;
  if (rt_advance(c)) { /* report it, but the live filter itself is fine */
    rt_filter_refuse(f, c->error);
    c->error = NULL;
    sirenrt_filter_free(c);
    return NULL;
  }
  *clone = c;
  return c;
}

/* sirenrt_filter_particles and sirenrt_filter_posterior: each particle's flattened words by `flatten`. */
static int32_t read_particles(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                              double *weights, int (*flatten)(sirenrt_filter *, double **, int64_t *, int64_t *)) {
  if (f->failed) return rt_filter_failed(f);
  if (f->mode == RT_MODE_IDLE)
    return rt_filter_refuse(f, rt_strdup_printf("error: no particles to read yet: call run() or step() first"));
  if (!offsets || !weights)
    return rt_filter_refuse(f, rt_strdup_printf("error: sirenrt_filter_particles: offsets and weights are required"));
  sirenrt_filter *clone, *p = finished_population(f, &clone);
  if (!p) return 1;
  double *flat = NULL;
  int64_t n_flat = 0;
  int status = 0;
  if (rt_normalise(p->logw, p->n, weights) == -INFINITY)
    status = rt_zero_weight_error(p);
  else if (flatten(p, &flat, &n_flat, offsets))
    status = 1;
  if (status && p != f) { /* the clone's error is the answer's */
    rt_filter_refuse(f, p->error);
    p->error = NULL;
  }
  sirenrt_filter_free(clone);
  if (status) return 1;
  status = rt_copy_answer(values, cap, n_values, flat, n_flat);
  free(flat);
  return status;
}

int32_t sirenrt_filter_particles(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                                 double *weights) {
  if (!f) return rt_set_last_error("sirenrt_filter_particles: no filter"), 1;
  if (f->mh) return rt_mh_particles(f, values, cap, n_values, offsets, weights);
  return read_particles(f, values, cap, n_values, offsets, weights, rt_flatten_particles);
}

int32_t sirenrt_filter_posterior(sirenrt_filter *f, double *values, int64_t cap, int64_t *n_values, int64_t *offsets,
                                 double *weights) {
  if (!f) return rt_set_last_error("sirenrt_filter_posterior: no filter"), 1;
  if (f->mh) return rt_mh_posterior(f, values, cap, n_values, offsets, weights);
  return read_particles(f, values, cap, n_values, offsets, weights, flatten_atoms);
}

int32_t sirenrt_filter_estimate(sirenrt_filter *f, double *out, int64_t cap, int64_t *n_out) {
  if (!f) return rt_set_last_error("sirenrt_filter_estimate: no filter"), 1;
  if (f->mh) return rt_mh_estimate(f, out, cap, n_out);
  if (f->failed) return rt_filter_failed(f);
  if (f->mode == RT_MODE_IDLE)
    return rt_filter_refuse(f, rt_strdup_printf("error: nothing to estimate yet: call run() or step() first"));
  if (!f->est_valid) {
    sirenrt_filter *clone, *p = finished_population(f, &clone);
    int status = !p || estimate_finished(p, f);
    if (status && p && p != f) { /* the clone's error is the answer's; the live filter is fine */
      rt_filter_refuse(f, p->error);
      p->error = NULL;
    }
    sirenrt_filter_free(clone);
    if (status) return 1;
  }
  return rt_copy_answer(out, cap, n_out, f->est, f->est_n);
}
