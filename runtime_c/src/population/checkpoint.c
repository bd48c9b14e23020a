/* checkpoint.c — a filter saved to bytes and restored, in this or another process (sirenc_save /
 * sirenc_load, ARCHITECTURE.md, Streaming and the C ABI), so that a streaming application survives a restart.
 *
 * A filter between calls is a set of particles suspended at resume points, so its whole state is:
 * the options and counters of the population, the data rows read so far, and for every particle its
 * weight, state, random stream (key, counter and the unread words of its buffer) and frame, plus the
 * list cells its frame reaches and its symbolic state (-m ssi, ds, bp).  A symbolic state is the engine's
 * flat copy (rt_sym_save), written once however many particles share it and shared again on load;
 * the frame's and the lists' symbolic words are node indices into it, valid as they are.  Lists are written as a table of cells, each after the cells it
 * refers to, and the frame slots that hold lists (the model's roots) are written as indices into it;
 * no other frame word is ever read as a handle.  Before writing, the young cells of every particle
 * are moved to the heap as a barrier that keeps the population would move them (rt_hold_all): that
 * changes no answer, and leaves one kind of cell to write.  A restored filter rebuilds the cells in
 * its heap, so it continues with exactly the words, weights and streams the saved one had: the same
 * answers, bit for bit, as a filter that never stopped.
 *
 * The bytes are for the same runtime on the same kind of machine: they start with a magic, the
 * format and ABI versions, the byte order and a fingerprint of the model (its name, plan, result
 * type, frame layout, list roots and source sites), and end with a checksum, so a checkpoint of
 * another model or runtime, or a truncated or damaged one, is refused with a message saying which. */
#include "population.h"
#include "engine/sym.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "SIRENCKP"
enum { FORMAT_VERSION = 2 }; /* 2: symbolic states */
static const uint32_t BYTE_ORDER_MARK = 0x01020304u;
/* A stream is saved as its words, key to left: its ready normal is made again from them on loading,
 * and the padding before it is never written. */
enum { STREAM_BYTES = offsetof(rt_rng, left) + sizeof(uint32_t) };

/* ------------------------------------------------------------------ bytes ---------------------- */

typedef struct writer {
  uint8_t *buf;
  size_t len, cap;
  int failed;
} writer;

static void put(writer *w, const void *p, size_t n) {
  if (w->failed || n == 0) return;
  if (w->len + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + n) cap *= 2;
    uint8_t *b = realloc(w->buf, cap);
    if (!b) {
      w->failed = 1;
      return;
    }
    w->buf = b;
    w->cap = cap;
  }
  memcpy(w->buf + w->len, p, n);
  w->len += n;
}
static void put_u32(writer *w, uint32_t v) { put(w, &v, sizeof v); }
static void put_i32(writer *w, int32_t v) { put(w, &v, sizeof v); }
static void put_i64(writer *w, int64_t v) { put(w, &v, sizeof v); }
static void put_f64(writer *w, double v) { put(w, &v, sizeof v); }

typedef struct reader {
  const uint8_t *buf;
  size_t len, pos;
  const char *bad; /* the first problem found, NULL while all is well */
} reader;

static int get(reader *r, void *p, size_t n) {
  if (r->bad) return -1;
  if (n > r->len - r->pos) {
    r->bad = "the checkpoint is truncated";
    return -1;
  }
  memcpy(p, r->buf + r->pos, n);
  r->pos += n;
  return 0;
}
static uint32_t get_u32(reader *r) { uint32_t v = 0; get(r, &v, sizeof v); return v; }
static int32_t get_i32(reader *r) { int32_t v = 0; get(r, &v, sizeof v); return v; }
static int64_t get_i64(reader *r) { int64_t v = 0; get(r, &v, sizeof v); return v; }
static double get_f64(reader *r) { double v = 0; get(r, &v, sizeof v); return v; }

/* A count read from the file that must lie in [0, max]: a damaged one would ask for absurd memory. */
static int64_t get_count(reader *r, int64_t max) {
  int64_t v = get_i64(r);
  if (!r->bad && (v < 0 || v > max)) r->bad = "the checkpoint is damaged (a count is out of range)";
  return r->bad ? 0 : v;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001B3ull;
  return h;
}
static uint64_t fnv_str(uint64_t h, const char *s) { return s ? fnv1a(h, s, strlen(s) + 1) : fnv1a(h, "", 1); }
static uint64_t fnv_i64(uint64_t h, int64_t v) { return fnv1a(h, &v, sizeof v); }

/* What identifies a compiled program: everything of its descriptor but the code addresses and the
 * file names its sites quote, which say where the source lay (`m.si` or `/work/m.si`), not what it is:
 * a filter moves to the same program compiled from another folder or another worker. */
static uint64_t model_fingerprint(const sirenrt_model *m) {
  uint64_t h = 0xCBF29CE484222325ull;
  h = fnv_str(fnv_str(fnv_str(fnv_str(h, m->name), m->method), m->plan), m->result_type);
  h = fnv_str(h, m->frame_result_type);
  h = fnv_i64(fnv_i64(fnv_i64(h, m->frame_size), m->result_offset), m->streamable);
  h = fnv_i64(fnv_i64(h, m->n_files), m->n_roots);
  for (int32_t r = 0; r < m->n_roots; r++)
    h = fnv_str(fnv_i64(fnv_i64(h, m->roots[r].pc), m->roots[r].offset), m->roots[r].type);
  h = fnv_i64(fnv_i64(h, m->n_vars), m->n_sym_roots);
  h = fnv_str(fnv_i64(h, m->tier), m->static_runtime_plan);
  for (int32_t v = 0; v < m->n_vars; v++) h = fnv_str(h, m->vars[v]);
  for (int32_t r = 0; r < m->n_sym_roots; r++)
    h = fnv_str(fnv_i64(fnv_i64(h, m->sym_roots[r].pc), m->sym_roots[r].offset), m->sym_roots[r].type);
  h = fnv_i64(h, m->n_sites);
  for (int32_t s = 0; s < m->n_sites; s++) {
    const sirenrt_site *site = &m->sites[s];
    h = fnv_str(fnv_i64(fnv_i64(fnv_i64(h, site->line), site->col), site->end_col), site->text);
  }
  return h;
}

/* ------------------------------------------------------------------ saving --------------------- */

/* Cells get ids in the order they are written; a map from cell address to id finds shared ones. */
typedef struct cell_ids {
  int64_t *keys, *vals;
  size_t cap, n;
} cell_ids;

static size_t slot_of(const cell_ids *m, int64_t key) {
  size_t i = (size_t)(((uint64_t)key >> 4) * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  return i;
}

static int ids_put(cell_ids *m, int64_t key, int64_t val) {
  if (2 * (m->n + 1) > m->cap) {
    cell_ids bigger = {calloc(m->cap ? 2 * m->cap : 1024, sizeof(int64_t)),
                       malloc((m->cap ? 2 * m->cap : 1024) * sizeof(int64_t)), m->cap ? 2 * m->cap : 1024, 0};
    if (!bigger.keys || !bigger.vals) {
      free(bigger.keys);
      free(bigger.vals);
      return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) ids_put(&bigger, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    *m = bigger;
  }
  size_t i = slot_of(m, key);
  m->keys[i] = key;
  m->vals[i] = val;
  m->n++;
  return 0;
}

static int64_t ids_get(const cell_ids *m, int64_t key) {
  if (!m->cap) return -1;
  size_t i = slot_of(m, key);
  return m->keys[i] ? m->vals[i] : -1;
}

typedef struct saver {
  writer cells;  /* the cell table, written apart and appended after its count */
  cell_ids ids;
  int64_t n_cells;
  writer states; /* the symbolic states, each once, by id (state_ids: address -> id) */
  cell_ids state_ids;
  int64_t n_states;
  const char **types; /* element types met, by id */
  int32_t n_types, cap_types;
  int failed;
} saver;

static int32_t type_id(saver *s, const char *elem) {
  for (int32_t i = 0; i < s->n_types; i++)
    if (s->types[i] == elem) return i;
  if (s->n_types == s->cap_types) {
    int32_t cap = s->cap_types ? 2 * s->cap_types : 8;
    const char **t = realloc(s->types, (size_t)cap * sizeof *t);
    if (!t) {
      s->failed = 1;
      return 0;
    }
    s->types = t;
    s->cap_types = cap;
  }
  s->types[s->n_types] = elem;
  return s->n_types++;
}

static int64_t save_list(saver *s, int64_t h, const char *elem);

/* The id of a particle's symbolic state in the file (-1: none), writing it the first time. */
static int64_t save_state(saver *s, const rt_sym_state *st) {
  if (!st) return -1;
  int64_t key = (int64_t)(uintptr_t)st, known = ids_get(&s->state_ids, key);
  if (known >= 0) return known;
  uint8_t *bytes = NULL;
  int64_t len = 0;
  if (rt_sym_save(st, &bytes, &len) || len < 0) {
    s->failed = 1;
    return -1;
  }
  put_i64(&s->states, len);
  put(&s->states, bytes, (size_t)len);
  free(bytes);
  if (ids_put(&s->state_ids, key, s->n_states)) s->failed = 1;
  return s->n_states++;
}

static void save_word(void *s, uint64_t *word, const char *elem) { *word = (uint64_t)save_list(s, (int64_t)*word, elem); }

/* In the file a cell is named RT_YOUNG_BIT | its id; nil and data rows keep their handles. */
static int64_t save_list(saver *s, int64_t h, const char *elem) {
  if (!rt_is_heap(h)) return h;
  int64_t known = ids_get(&s->ids, h);
  if (known >= 0) return RT_YOUNG_BIT | known;
  /* The spine up to a cell saved already (or its end), saved from its far end, tails first. */
  int64_t n = 0, cap = 64, *spine = malloc((size_t)cap * sizeof(int64_t));
  for (int64_t c = h; spine && rt_is_heap(c) && ids_get(&s->ids, c) < 0; c = (int64_t)rt_heap_cell(c)[2]) {
    if (n == cap) {
      int64_t *more = realloc(spine, (size_t)(cap *= 2) * sizeof(int64_t));
      if (!more) {
        free(spine);
        spine = NULL;
        break;
      }
      spine = more;
    }
    spine[n++] = c;
  }
  if (!spine) {
    s->failed = 1;
    return SIRENRT_NIL;
  }
  int32_t type = type_id(s, elem);
  for (int64_t k = n - 1; k >= 0 && !s->failed; k--) {
    const uint64_t *cell = rt_heap_cell(spine[k]);
    uint32_t payload = RT_HEADER_PAYLOAD(cell[0]);
    uint64_t small[16], *words = payload - 1 <= 16 ? small : malloc((size_t)(payload - 1) * sizeof(uint64_t));
    if (!words) {
      s->failed = 1;
      break;
    }
    if (payload > 1) {
      memcpy(words, cell + 3, (size_t)(payload - 1) * sizeof(uint64_t));
      rt_each_list(words, elem, save_word, s);
    }
    put_i32(&s->cells, type);
    put_u32(&s->cells, payload);
    put_u32(&s->cells, RT_HEADER_LEN(cell[0]));
    put_i64(&s->cells, save_list(s, (int64_t)cell[2], elem));
    put(&s->cells, words, (size_t)(payload - 1) * sizeof(uint64_t));
    if (words != small) free(words);
    if (ids_put(&s->ids, spine[k], s->n_cells++)) s->failed = 1;
  }
  free(spine);
  return s->failed ? SIRENRT_NIL : RT_YOUNG_BIT | ids_get(&s->ids, h);
}

int32_t sirenrt_filter_save(sirenrt_filter *f, uint8_t **out, int64_t *out_len) {
  if (!f) return rt_set_last_error("sirenrt_filter_save: no filter"), 1;
  if (!out || !out_len) return rt_filter_refuse(f, rt_strdup_printf("error: sirenrt_filter_save: out and out_len must not be NULL"));
  *out = NULL;
  *out_len = 0;
  if (f->failed) return rt_filter_refuse(f, rt_strdup_printf("error: a filter that failed cannot be saved: run() restarts it"));
  if (f->mh) return rt_filter_refuse(f, rt_strdup_printf("error: an MH chain cannot be saved (checkpoints are for particle filters)"));
  if (rt_hold_all(f)) return rt_filter_fail(f, rt_strdup_printf("error: out of memory"));
  const sirenrt_model *m = f->model;
  writer w = {0};
  put(&w, MAGIC, 8);
  put_u32(&w, FORMAT_VERSION);
  put_u32(&w, SIRENRT_ABI_VERSION);
  put_u32(&w, BYTE_ORDER_MARK);
  uint64_t fp = model_fingerprint(m);
  put(&w, &fp, sizeof fp);
  put_i64(&w, f->n);
  put(&w, &f->seed, sizeof f->seed);
  put_i32(&w, f->opts.resampler);
  put_f64(&w, f->opts.ess_threshold);
  put_u32(&w, f->epoch);
  put_i32(&w, f->mode);
  put_i32(&w, f->stream_open);
  put_f64(&w, f->log_evidence_done);
  put_i32(&w, f->last_zero_site);
  for (int32_t k = 0; k < m->n_files; k++) {
    const rt_table *t = &f->tables[k];
    int32_t loaded = __atomic_load_n(&t->loaded, __ATOMIC_ACQUIRE);
    put_i32(&w, loaded);
    if (!loaded) continue;
    put_i64(&w, t->n_rows);
    put(&w, t->row_start, (size_t)(t->n_rows + 1) * sizeof(int64_t));
    put(&w, t->vals, (size_t)t->n_vals * sizeof(double));
  }
  /* Frames with their list slots as cell ids; the cells go to their own buffer meanwhile. */
  saver s = {0};
  writer frames = {0};
  uint8_t *frame = malloc(m->frame_size);
  if (!frame) s.failed = 1;
  for (int64_t i = 0; i < f->n && !s.failed; i++) {
    const sirenrt_ctx *c = &f->ctx[i];
    put_f64(&frames, f->logw[i]);
    put(&frames, &f->state[i], 1);
    put_i64(&frames, c->want_row);
    put_i32(&frames, c->zero_site);
    put(&frames, &c->rng, STREAM_BYTES);
    put_i64(&frames, save_state(&s, c->sym));
    memcpy(frame, f->frames + (size_t)i * m->frame_size, m->frame_size);
    const rt_rootset *rs = rt_roots_now(f, i);
    for (int32_t j = 0; j < rs->n; j++) {
      int64_t h;
      memcpy(&h, frame + rs->slots[j].offset, sizeof h);
      h = save_list(&s, h, rs->slots[j].elem);
      memcpy(frame + rs->slots[j].offset, &h, sizeof h);
    }
    put(&frames, frame, m->frame_size);
  }
  free(frame);
  put_i32(&w, s.n_types);
  for (int32_t t = 0; t < s.n_types; t++) {
    size_t len = (size_t)(rt_skip_type(s.types[t]) - s.types[t]);
    put_i32(&w, (int32_t)len);
    put(&w, s.types[t], len);
  }
  put_i64(&w, s.n_cells);
  put(&w, s.cells.buf, s.cells.len);
  put_i64(&w, s.n_states);
  put(&w, s.states.buf, s.states.len);
  put(&w, frames.buf, frames.len);
  uint64_t sum = fnv1a(0xCBF29CE484222325ull, w.buf, w.len);
  put(&w, &sum, sizeof sum);
  int failed = w.failed || s.failed || s.cells.failed || s.states.failed || frames.failed;
  free(s.cells.buf);
  free(s.ids.keys);
  free(s.ids.vals);
  free(s.states.buf);
  free(s.state_ids.keys);
  free(s.state_ids.vals);
  free(s.types);
  free(frames.buf);
  if (failed) {
    free(w.buf);
    return rt_filter_refuse(f, rt_strdup_printf("error: out of memory while saving the filter"));
  }
  *out = w.buf;
  *out_len = (int64_t)w.len;
  return 0;
}

/* ------------------------------------------------------------------ loading -------------------- */

typedef struct loader {
  reader r;
  sirenrt_filter *f;
  int64_t *cells; /* heap handle of each cell id */
  int64_t n_cells;
  char **types;
  const char **heap_types; /* the same, as the heap keeps them for its cells */
  int32_t n_types;
  rt_sym_state **states; /* symbolic state of each id (holding one reference of the loader's own) */
  int64_t n_states;
} loader;

static int64_t decode_list(loader *l, int64_t h) {
  if (h == SIRENRT_NIL) return h;
  if (rt_is_young(h)) {
    int64_t id = h & ~RT_YOUNG_BIT;
    if (id >= l->n_cells || !l->cells || l->cells[id] == SIRENRT_NIL) {
      if (!l->r.bad) l->r.bad = "the checkpoint is damaged (a list refers to a cell not before it)";
      return SIRENRT_NIL;
    }
    return l->cells[id];
  }
  if (h & RT_SHARED_BIT) {
    int32_t file = rt_shared_file(h);
    if (file < l->f->model->n_files && l->f->tables[file].loaded) return h; /* checked again when read */
  }
  if (!l->r.bad) l->r.bad = "the checkpoint is damaged (a bad list handle)";
  return SIRENRT_NIL;
}

static void decode_word(void *l, uint64_t *word, const char *elem) {
  (void)elem; /* a cell id names the cell whatever its type */
  *word = (uint64_t)decode_list(l, (int64_t)*word);
}

static int valid_type(const char *t, const char **end) {
  int64_t words = rt_type_words(t, end);
  return words >= 0 && words < (1 << 24);
}

static int read_cells(loader *l) {
  reader *r = &l->r;
  l->n_types = get_i32(r);
  if (l->n_types < 0 || l->n_types > 4096) r->bad = r->bad ? r->bad : "the checkpoint is damaged (type table)";
  if (r->bad) return -1;
  l->types = calloc((size_t)l->n_types + 1, sizeof(char *));
  l->heap_types = calloc((size_t)l->n_types + 1, sizeof(char *));
  for (int32_t t = 0; l->types && l->heap_types && t < l->n_types && !r->bad; t++) {
    int32_t len = get_i32(r);
    if (len < 1 || len > 4096) r->bad = r->bad ? r->bad : "the checkpoint is damaged (type table)";
    if (r->bad || !(l->types[t] = calloc((size_t)len + 1, 1))) break;
    const char *end;
    if (!get(r, l->types[t], (size_t)len) && (!valid_type(l->types[t], &end) || *end))
      r->bad = "the checkpoint is damaged (an element type)";
    else if (!r->bad && !(l->heap_types[t] = rt_heap_intern_type(l->f->heap, l->types[t])))
      r->bad = "out of memory";
  }
  if (!l->types || !l->heap_types) r->bad = "out of memory";
  l->n_cells = get_count(r, (int64_t)(r->len / 20));
  if (r->bad) return -1;
  l->cells = malloc((size_t)(l->n_cells ? l->n_cells : 1) * sizeof(int64_t));
  if (!l->cells) return r->bad = "out of memory", -1;
  for (int64_t i = 0; i < l->n_cells; i++) l->cells[i] = SIRENRT_NIL;
  for (int64_t i = 0; i < l->n_cells && !r->bad; i++) {
    int32_t type = get_i32(r);
    uint32_t payload = get_u32(r), len = get_u32(r);
    int64_t tail = get_i64(r);
    if (r->bad) break;
    const char *end;
    if (type < 0 || type >= l->n_types || !l->types[type] || payload < 1 ||
        (int64_t)payload - 1 != rt_type_words(l->types[type], &end) || len < 1) {
      r->bad = "the checkpoint is damaged (a list cell)";
      break;
    }
    int64_t h = rt_heap_new_cell(l->f->heap, 0, payload, len, l->heap_types[type]);
    if (h == SIRENRT_NIL) return r->bad = "out of memory", -1;
    uint64_t *cell = rt_heap_cell(h);
    cell[2] = (uint64_t)SIRENRT_NIL;
    memset(cell + 3, 0xFF, (size_t)(payload - 1) * sizeof(uint64_t)); /* nil handles until read */
    l->cells[i] = h;
    /* get() writes nothing when the bytes run short, so a truncated cell keeps its nil handles */
    if (get(r, cell + 3, (size_t)(payload - 1) * sizeof(uint64_t))) break;
    cell[2] = (uint64_t)decode_list(l, tail);
    rt_each_list(cell + 3, l->types[type], decode_word, l);
    int64_t tail_len = cell[2] == (uint64_t)SIRENRT_NIL ? 0 : -1;
    if (rt_is_heap((int64_t)cell[2])) tail_len = RT_HEADER_LEN(rt_heap_cell((int64_t)cell[2])[0]);
    if (tail_len >= 0 && tail_len + 1 != len) r->bad = "the checkpoint is damaged (a list length)";
  }
  return r->bad ? -1 : 0;
}

/* The symbolic states: a count, then each as its length and the engine's bytes. */
static int read_states(loader *l) {
  reader *r = &l->r;
  l->n_states = get_count(r, (int64_t)(r->len / 8));
  if (r->bad) return -1;
  l->states = calloc((size_t)(l->n_states ? l->n_states : 1), sizeof *l->states);
  if (!l->states) return r->bad = "out of memory", -1;
  for (int64_t i = 0; i < l->n_states && !r->bad; i++) {
    int64_t len = get_count(r, (int64_t)(r->len - r->pos));
    if (r->bad) break;
    if (!(l->states[i] = rt_sym_load(r->buf + r->pos, len)) ||
        !rt_sym_serves(l->states[i], rt_sym_method(l->f->model->method), l->f->model->n_vars)) {
      r->bad = "the checkpoint is damaged (a symbolic state)";
      break;
    }
    if (rt_sym_attach(l->states[i], l->f)) {
      r->bad = "the checkpoint's symbolic states do not fit in the filter's memory limit";
      break;
    }
    r->pos += (size_t)len;
  }
  return r->bad ? -1 : 0;
}

static int site_or_none(const sirenrt_model *m, int32_t site) { return site >= -1 && site < m->n_sites; }

static const char *check_header(reader *r, const sirenrt_model *m) {
  char magic[8];
  if (r->len < 8 + 3 * 4 + 8 + 8 || get(r, magic, 8) || memcmp(magic, MAGIC, 8))
    return "not a sirenc checkpoint";
  uint32_t format = get_u32(r), abi = get_u32(r), order = get_u32(r);
  if (order != BYTE_ORDER_MARK) return "the checkpoint was written on a machine of another byte order";
  if (format != FORMAT_VERSION) return "the checkpoint is of another format version";
  if (abi != SIRENRT_ABI_VERSION) return "the checkpoint was written by a runtime of another ABI version";
  uint64_t sum, want = fnv1a(0xCBF29CE484222325ull, r->buf, r->len - sizeof sum);
  memcpy(&sum, r->buf + r->len - sizeof sum, sizeof sum);
  if (sum != want) return "the checkpoint is damaged (checksum mismatch)";
  r->len -= sizeof sum;
  uint64_t fp = 0;
  get(r, &fp, sizeof fp);
  if (fp != model_fingerprint(m)) return "the checkpoint is of another model";
  return NULL;
}

sirenrt_filter *sirenrt_filter_load(const sirenrt_model *m, const uint8_t *buf, int64_t len, int32_t threads) {
  if (!m || !buf || len < 0) return rt_set_last_error("sirenrt_filter_load: no model or no bytes"), NULL;
  loader l = {.r = {buf, (size_t)len, 0, NULL}};
  reader *r = &l.r;
  const char *bad = check_header(r, m);
  if (bad) return rt_set_last_error("cannot load the filter: %s", bad), NULL;
  int64_t n = get_i64(r);
  uint64_t seed = 0;
  get(r, &seed, sizeof seed);
  sirenrt_options o = {SIRENRT_SYSTEMATIC, 0.0, threads, 0};
  o.resampler = get_i32(r);
  o.ess_threshold = get_f64(r);
  if (!r->bad && (n < 1 || o.resampler < SIRENRT_SYSTEMATIC || o.resampler > SIRENRT_RESIDUAL ||
                  !(o.ess_threshold >= 0.0 && o.ess_threshold <= 1.0)))
    r->bad = "the checkpoint is damaged (the filter's options)";
  if (r->bad) return rt_set_last_error("cannot load the filter: %s", r->bad), NULL;
  sirenrt_filter *f = sirenrt_filter_new(m, n, seed, &o);
  if (!f) { /* too many particles for the memory limit, say: sirenrt_last_error says why */
    char why[RT_MSG];
    snprintf(why, sizeof why, "%s", sirenrt_last_error());
    return rt_set_last_error("cannot load the filter: %s", why), NULL;
  }
  l.f = f;
  f->epoch = get_u32(r);
  f->mode = get_i32(r);
  f->stream_open = get_i32(r) != 0;
  f->log_evidence_done = get_f64(r);
  f->last_zero_site = get_i32(r);
  if (f->mode < RT_MODE_IDLE || f->mode > RT_MODE_STREAMING || !site_or_none(m, f->last_zero_site))
    r->bad = r->bad ? r->bad : "the checkpoint is damaged";
  for (int32_t k = 0; k < m->n_files && !r->bad; k++) {
    rt_table *t = &f->tables[k];
    if (!get_i32(r)) continue;
    int64_t rows = get_count(r, (int64_t)(r->len / 8));
    int64_t *start = malloc((size_t)(rows + 1) * sizeof(int64_t));
    if (!start) {
      r->bad = "out of memory";
      break;
    }
    if (!get(r, start, (size_t)(rows + 1) * sizeof(int64_t))) {
      int ok = start[0] == 0 && start[rows] >= 0 && (size_t)start[rows] <= (r->len - r->pos) / 8;
      for (int64_t i = 0; ok && i < rows; i++) ok = start[i + 1] >= start[i] && start[i + 1] - start[i] <= RT_MAX_ROW_LEN;
      double *vals = ok ? malloc((size_t)(start[rows] ? start[rows] : 1) * sizeof(double)) : NULL;
      if (!ok) r->bad = "the checkpoint is damaged (data rows)";
      else if (!vals) r->bad = "out of memory";
      else if (!get(r, vals, (size_t)start[rows] * sizeof(double)))
        for (int64_t i = 0; i < rows && !r->bad; i++)
          if (rt_table_append_row(t, vals + start[i], start[i + 1] - start[i])) r->bad = "out of memory";
      free(vals);
      if (!r->bad) __atomic_store_n(&t->loaded, 1, __ATOMIC_RELEASE);
    }
    free(start);
  }
  if (!r->bad) read_cells(&l);
  if (!r->bad) read_states(&l);
  for (int64_t i = 0; i < n && !r->bad; i++) {
    sirenrt_ctx *c = &f->ctx[i];
    f->logw[i] = get_f64(r);
    get(r, &f->state[i], 1);
    c->want_row = get_i64(r);
    c->zero_site = get_i32(r);
    get(r, &c->rng, STREAM_BYTES);
    rt_rng_renormal(&c->rng);
    int64_t state_id = get_i64(r);
    if (r->bad) break;
    if (state_id < -1 || state_id >= l.n_states) {
      r->bad = "the checkpoint is damaged (a symbolic state id)";
      break;
    }
    if (state_id >= 0) { /* shared with the other particles of that id, as it was */
      c->sym = l.states[state_id];
      rt_sym_retain(c->sym, 1);
      f->sym_used = 1;
    }
    uint8_t *frame = f->frames + (size_t)i * m->frame_size;
    if (get(r, frame, m->frame_size)) break;
    int8_t st = f->state[i];
    if (st != SIRENRT_RUNNABLE && st != SIRENRT_FINISHED && st != SIRENRT_AT_RESAMPLE && st != SIRENRT_NEED_ROW) {
      r->bad = "the checkpoint is damaged (a particle state)";
      break;
    }
    if (c->rng.left > 4) {
      r->bad = "the checkpoint is damaged (a random stream)";
      break;
    }
    /* A weight NaN or +inf, a row before the first, a site no program has: no run could leave them */
    if (isnan(f->logw[i]) || f->logw[i] == INFINITY || !site_or_none(m, c->zero_site) ||
        (st == SIRENRT_NEED_ROW && c->want_row < 0)) {
      r->bad = "the checkpoint is damaged (a particle)";
      break;
    }
    const rt_rootset *rs = rt_roots_now(f, i);
    for (int32_t j = 0; j < rs->n; j++) {
      int64_t h;
      memcpy(&h, frame + rs->slots[j].offset, sizeof h);
      h = decode_list(&l, h);
      memcpy(frame + rs->slots[j].offset, &h, sizeof h);
    }
    if (!r->bad && !rt_sym_roots_valid(f, i)) r->bad = "the checkpoint is damaged (a symbolic reference)";
  }
  if (!r->bad && r->pos != r->len) r->bad = "the checkpoint is damaged (bytes left over)";
  for (int64_t i = 0; l.states && i < l.n_states; i++) rt_sym_release(l.states[i]);
  free(l.states);
  free(l.cells);
  for (int32_t t = 0; l.types && t < l.n_types; t++) free(l.types[t]);
  free(l.types);
  free(l.heap_types);
  if (r->bad) {
    sirenrt_filter_free(f);
    return rt_set_last_error("cannot load the filter: %s", r->bad), NULL;
  }
  f->est_valid = 0;
  f->restored = 1;
  f->keys_due = 0; /* the streams are the checkpoint's, each rekeyed when its epoch is older (loop.c) */
  f->ctx_clean = 0;
  f->may_resume = 0; /* the states are the checkpoint's */
  return f;
}

void sirenrt_buffer_free(uint8_t *buf) { free(buf); }
