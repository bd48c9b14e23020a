/* test_values.c — lists in the per-particle arena: cons/get/tl/len/rev/range, literals of constants
 * (from_words), multi-word elements, growth, errors on empty lists and bad handles, and copying an
 * arena (what resampling does). */
#include <stdlib.h>

#include "check.h"
#include "population/population.h"

static sirenrt_ctx fresh_ctx(void) {
  sirenrt_ctx c;
  memset(&c, 0, sizeof c);
  c.zero_site = -1;
  return c;
}

static void clear_error(sirenrt_ctx *c) {
  rt_free_message(c->err_msg);
  c->err_msg = NULL;
}

static int64_t cons_float(sirenrt_ctx *c, double v, int64_t tail) {
  int64_t cell = sirenrt_list_cons(c, tail, 1);
  sirenrt_list_set(c, cell, 0, double_to_bits(v));
  return cell;
}

static double nth(sirenrt_ctx *c, int64_t l, int k) {
  while (k-- > 0) l = sirenrt_list_tl(c, l, -1);
  return bits_to_double(sirenrt_list_get(c, l, 0, -1));
}

static void test_basic_lists(void) {
  sirenrt_ctx c = fresh_ctx();
  int64_t l = SIRENRT_NIL;
  CHECK(sirenrt_list_len(&c, l) == 0, "len nil");
  l = cons_float(&c, 3.0, l);
  l = cons_float(&c, 2.0, l);
  l = cons_float(&c, 1.0, l);
  CHECK(sirenrt_list_len(&c, l) == 3, "len 3");
  CHECK(nth(&c, l, 0) == 1.0 && nth(&c, l, 1) == 2.0 && nth(&c, l, 2) == 3.0, "elements in order");
  CHECK(sirenrt_list_tl(&c, sirenrt_list_tl(&c, sirenrt_list_tl(&c, l, -1), -1), -1) == SIRENRT_NIL, "tl^3 = nil");
  int64_t r = sirenrt_list_rev(&c, l, 1);
  CHECK(nth(&c, r, 0) == 3.0 && nth(&c, r, 2) == 1.0 && sirenrt_list_len(&c, r) == 3, "rev");
  CHECK(nth(&c, l, 0) == 1.0, "rev leaves the original alone");
  CHECK(sirenrt_list_rev(&c, SIRENRT_NIL, 1) == SIRENRT_NIL, "rev nil");
  CHECK(c.err_msg == NULL, "no error so far");

  /* sirenrt_list_cons_word: the same cell as a cons and a set (off a lane: in the young arena). */
  int64_t w = sirenrt_list_cons_word(&c, l, (int64_t)double_to_bits(0.25), "f", -1);
  CHECK(sirenrt_list_len(&c, w) == 4 && nth(&c, w, 0) == 0.25 && nth(&c, w, 1) == 1.0, "cons_word");
  int64_t lw = sirenrt_list_cons_word(&c, SIRENRT_NIL, w, "Lf", -1);
  CHECK(sirenrt_list_get(&c, lw, 0, -1) == w && sirenrt_list_len(&c, lw) == 1, "cons_word of a list");

  /* Two-word elements, e.g. a list of (float, bool) pairs, and a list of lists. */
  int64_t p = sirenrt_list_cons(&c, SIRENRT_NIL, 2);
  sirenrt_list_set(&c, p, 0, double_to_bits(0.5));
  sirenrt_list_set(&c, p, 1, 1);
  int64_t q = sirenrt_list_cons(&c, p, 2);
  sirenrt_list_set(&c, q, 0, double_to_bits(-0.5));
  sirenrt_list_set(&c, q, 1, 0);
  int64_t qr = sirenrt_list_rev(&c, q, 2);
  CHECK(bits_to_double(sirenrt_list_get(&c, qr, 0, -1)) == 0.5 && sirenrt_list_get(&c, qr, 1, -1) == 1,
        "rev of pairs keeps both words");
  int64_t ll = sirenrt_list_cons(&c, SIRENRT_NIL, 1);
  sirenrt_list_set(&c, ll, 0, l);
  CHECK(nth(&c, sirenrt_list_get(&c, ll, 0, -1), 1) == 2.0, "list of lists");
  CHECK(c.err_msg == NULL, "no error with pairs");
  rt_arena_free(&c);
}

static void test_range(void) {
  sirenrt_ctx c = fresh_ctx();
  int64_t r = sirenrt_list_range(&c, 1, 4, -1);
  CHECK(sirenrt_list_len(&c, r) == 3 && nth(&c, r, 0) == 1 && nth(&c, r, 2) == 3, "range(1,4) = 1,2,3");
  r = sirenrt_list_range(&c, 1, 101, -1);
  CHECK(sirenrt_list_len(&c, r) == 100 && nth(&c, r, 99) == 100, "range(1,101) = 1..100");
  r = sirenrt_list_range(&c, -1.5, 2, -1);
  CHECK(sirenrt_list_len(&c, r) == 3 && nth(&c, r, 0) == -1 && nth(&c, r, 2) == 1, "int() truncates toward zero");
  CHECK(sirenrt_list_range(&c, 0.5, 0.7, -1) == SIRENRT_NIL, "empty range");
  CHECK(sirenrt_list_range(&c, 2, 2, -1) == SIRENRT_NIL, "range(2,2) empty");
  CHECK(c.err_msg == NULL, "no error for valid ranges");
  CHECK(sirenrt_list_range(&c, 3, 1, 5) == SIRENRT_NIL && c.err_msg, "range(3,1) is an error");
  if (c.err_msg) CHECK_CONTAINS(c.err_msg, "List.range: start must be <= end, got 3 and 1");
  CHECK(c.err_site == 5, "error carries the site");
  clear_error(&c);
  rt_arena_free(&c);
}

static void test_errors(void) {
  sirenrt_ctx c = fresh_ctx();
  int64_t w = sirenrt_list_get(&c, SIRENRT_NIL, 0, 7);
  CHECK(w == SIRENRT_NIL && isnan(bits_to_double(w)), "hd of nil returns NIL, which reads as NaN");
  CHECK(c.err_msg && strcmp(c.err_msg, "List.hd of an empty list") == 0 && c.err_site == 7, "hd error");
  clear_error(&c);
  CHECK(sirenrt_list_tl(&c, SIRENRT_NIL, 8) == SIRENRT_NIL && c.err_msg, "tl of nil");
  if (c.err_msg) CHECK_CONTAINS(c.err_msg, "List.tl of an empty list");
  clear_error(&c);
  /* Bad handles are caught, not dereferenced. */
  sirenrt_list_get(&c, 12345, 0, -1);
  CHECK(c.err_msg != NULL, "out-of-arena handle");
  clear_error(&c);
  int64_t l = cons_float(&c, 1.0, SIRENRT_NIL);
  sirenrt_list_get(&c, l, 1, -1);
  CHECK(c.err_msg != NULL, "word index beyond the cell");
  clear_error(&c);
  sirenrt_list_get(&c, RT_SHARED_BIT | 5, 0, -1);
  CHECK(c.err_msg != NULL, "shared handle without a filter");
  clear_error(&c);
  sirenrt_list_set(&c, SIRENRT_NIL, 0, 0);
  CHECK(c.err_msg != NULL, "set on nil");
  clear_error(&c);
  rt_arena_free(&c);
}

static void test_growth_and_copy(void) {
  sirenrt_ctx a = fresh_ctx(), b = fresh_ctx();
  int64_t l = SIRENRT_NIL;
  for (int i = 0; i < 100000; i++) l = cons_float(&a, (double)i, l);
  CHECK(sirenrt_list_len(&a, l) == 100000 && nth(&a, l, 0) == 99999.0, "100k conses");
  CHECK(rt_arena_copy(&b, &a) == 0, "copy");
  int64_t la = cons_float(&a, -1.0, l); /* the original grows after the copy */
  (void)la;
  CHECK(sirenrt_list_len(&b, l) == 100000 && nth(&b, l, 0) == 99999.0 && nth(&b, l, 99999) == 0.0,
        "the copy reads the same list through the same handle");
  int64_t lb = cons_float(&b, 42.0, l);
  CHECK(nth(&b, lb, 0) == 42.0 && nth(&a, la, 0) == -1.0, "copies diverge independently");
  CHECK(a.arena_used == b.arena_used, "both grew by one cell");
  /* Copying a small arena over a big one shrinks what is in use. */
  sirenrt_ctx s = fresh_ctx();
  cons_float(&s, 1.0, SIRENRT_NIL);
  CHECK(rt_arena_copy(&a, &s) == 0 && a.arena_used == s.arena_used, "copy of a small arena");
  CHECK(a.err_msg == NULL && b.err_msg == NULL, "no errors");
  rt_arena_free(&a);
  rt_arena_free(&b);
  rt_arena_free(&s);
}

/* A literal's list at once is the list its conses build: the same arena, word for word. */
static void test_from_words(void) {
  const int64_t words[] = {double_to_bits(0.5), 1, double_to_bits(-2.0), 0, double_to_bits(7.25), 1};
  sirenrt_ctx a = fresh_ctx(), b = fresh_ctx();
  int64_t from = sirenrt_list_from_words(&a, words, 3, 2, -1);
  int64_t conses = SIRENRT_NIL;
  for (int i = 2; i >= 0; i--) {
    conses = sirenrt_list_cons_at(&b, conses, 2, -1);
    sirenrt_list_set(&b, conses, 0, words[2 * i]);
    sirenrt_list_set(&b, conses, 1, words[2 * i + 1]);
  }
  CHECK(from == conses && a.arena_used == b.arena_used, "the same handle and arena use as the conses");
  CHECK(memcmp(a.arena, b.arena, a.arena_used * sizeof(uint64_t)) == 0, "the same cells as the conses");
  CHECK(sirenrt_list_len(&a, from) == 3 && nth(&a, from, 0) == 0.5 && nth(&a, from, 2) == 7.25, "in order");
  CHECK(sirenrt_list_get(&a, sirenrt_list_tl(&a, from, -1), 1, -1) == 0, "the second word of each element");
  CHECK(sirenrt_list_from_words(&a, NULL, 0, 1, -1) == SIRENRT_NIL && !a.err_msg, "no elements: nil");
  CHECK(sirenrt_list_from_words(&a, NULL, 2, 1, 4) == SIRENRT_NIL && a.err_msg && a.err_site == 4,
        "elements without words are an internal error");
  clear_error(&a);
  rt_arena_free(&a);
  rt_arena_free(&b);
}

/* Past a particle's share of the memory limit, the literal fails where its conses would: the same
 * error at its site. */
static void test_from_words_limit(void) {
  sirenrt_filter filter;
  memset(&filter, 0, sizeof filter);
  filter.n = 1;
  filter.arena_limit_words = 256;
  filter.budget.words = (uint64_t)1 << 20;
  int64_t words[100];
  for (int i = 0; i < 100; i++) words[i] = double_to_bits(i);
  sirenrt_ctx a = fresh_ctx(), b = fresh_ctx();
  a.filter = b.filter = &filter;
  CHECK(sirenrt_list_from_words(&a, words, 100, 1, 9) == SIRENRT_NIL && a.err_msg && a.err_site == 9,
        "over the share: an error at the literal");
  int64_t conses = SIRENRT_NIL;
  for (int i = 99; i >= 0 && !b.err_msg; i--) conses = sirenrt_list_cons_at(&b, conses, 1, 9);
  CHECK(a.err_msg && b.err_msg && strcmp(a.err_msg, b.err_msg) == 0, "the conses' error: %s", a.err_msg);
  if (a.err_msg) CHECK_CONTAINS(a.err_msg, "more than a particle's share of the filter's memory limit");
  clear_error(&a);
  clear_error(&b);
  rt_arena_free(&a);
  rt_arena_free(&b);
}

/* A literal whose elements hold lists: [(0.5, [1., 2.]), (-1., []), (3., [4.])] at once is what its
 * conses build, inner lists first and in order; malformed words are an internal error at the site. */
static void test_from_nested_words(void) {
  const int64_t words[] = {4, 'P', 'f', 'L', 'f', 3, double_to_bits(0.5), 2, double_to_bits(1.0),
                           double_to_bits(2.0), double_to_bits(-1.0), 0, double_to_bits(3.0), 1,
                           double_to_bits(4.0)};
  const int64_t n_words = (int64_t)(sizeof words / sizeof words[0]);
  sirenrt_ctx a = fresh_ctx(), b = fresh_ctx();
  int64_t from = sirenrt_list_from_nested_words(&a, words, n_words, -1);
  const double heads[] = {0.5, -1.0, 3.0};
  const int64_t inner_words[][2] = {{double_to_bits(1.0), double_to_bits(2.0)}, {0, 0}, {double_to_bits(4.0), 0}};
  const int inner_len[] = {2, 0, 1};
  int64_t inner[3];
  for (int i = 0; i < 3; i++) inner[i] = sirenrt_list_from_words(&b, inner_words[i], inner_len[i], 1, -1);
  int64_t conses = SIRENRT_NIL;
  for (int i = 2; i >= 0; i--) {
    conses = sirenrt_list_cons_at(&b, conses, 2, -1);
    sirenrt_list_set(&b, conses, 0, double_to_bits(heads[i]));
    sirenrt_list_set(&b, conses, 1, inner[i]);
  }
  CHECK(!a.err_msg && from == conses && a.arena_used == b.arena_used, "the same handle and arena use as the conses");
  CHECK(memcmp(a.arena, b.arena, a.arena_used * sizeof(uint64_t)) == 0, "the same cells as the conses");
  int64_t first_inner = sirenrt_list_get(&a, from, 1, -1);
  CHECK(sirenrt_list_len(&a, from) == 3 && sirenrt_list_len(&a, first_inner) == 2 && nth(&a, first_inner, 1) == 2.0,
        "[(0.5, [1., 2.]), ...]");
  const int64_t units[] = {2, 'L', 'u', 2, 3, 0};   /* [[(), (), ()], []] */
  int64_t u = sirenrt_list_from_nested_words(&a, units, 6, -1);
  CHECK(!a.err_msg && sirenrt_list_len(&a, u) == 2 && sirenrt_list_len(&a, sirenrt_list_get(&a, u, 0, -1)) == 3,
        "lists of units take no words");
  const int64_t *bad[] = {(const int64_t[]){2, 'L', 'f', 1, 5, double_to_bits(1.0)},   /* an inner length past the end */
                          (const int64_t[]){2, 'L', 'x', 0, 0, 0},                     /* not a type */
                          (const int64_t[]){2, 'L', 'f', 1, 0, 0}};                    /* words left over */
  for (int i = 0; i < 3; i++) {
    CHECK(sirenrt_list_from_nested_words(&a, bad[i], 6, 7) == SIRENRT_NIL && a.err_msg && a.err_site == 7,
          "malformed words %d: an internal error at the literal", i);
    if (a.err_msg) CHECK_CONTAINS(a.err_msg, "internal error");
    clear_error(&a);
  }
  rt_arena_free(&a);
  rt_arena_free(&b);
}

int main(void) {
  test_basic_lists();
  test_range();
  test_errors();
  test_growth_and_copy();
  test_from_words();
  test_from_words_limit();
  test_from_nested_words();
  return check_report("test_values");
}
