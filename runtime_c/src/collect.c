/* collect.c — a particle's arena, collected by copying what its frame still reaches.
 *
 * Lists are immutable, so every cell a program builds and then drops (a temporary List.map of a row,
 * the rest of a reversed list) stays in the arena until collected; a filter that streams for hours
 * would grow without bound, and every resampling copy would carry the garbage along.  At a
 * resampling barrier no particle is half-way through building a cell, and the compiler has told us
 * exactly which frame slots hold list handles at each resume point (sirenrt_model.roots) and which
 * words of a cell are handles (the element type descriptor).  So collection is precise: copy the
 * reachable cells into a fresh buffer (Cheney style, spines iteratively, nested lists recursively by
 * type depth), leave a forwarding index in the old header's collector bits so shared tails and lists
 * referenced twice are copied once, and rewrite the roots.  Nothing else in a frame is ever read as a
 * handle, so no float is mistaken for one. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define HEADER_WORDS(h) ((uint32_t)(((h) >> 8) & 0xFFFFFF))
#define FORWARD(h) ((h) >> 32) /* new index + 1, or 0 when not copied yet */

typedef struct copier {
  uint64_t *from;
  uint32_t from_used;
  uint64_t *to; /* sized for the whole old arena, so it never moves while we hold pointers into it */
  uint32_t to_used;
} copier;

static int in_arena(const copier *c, int64_t h) { return h >= 0 && h < (int64_t)c->from_used; }

static const char *skip_type(const char *t) {
  switch (*t) {
    case 'P': return skip_type(skip_type(t + 1));
    case 'L': return skip_type(t + 1);
    default: return t + 1;
  }
}

static int64_t copy_list(copier *c, int64_t h, const char *elem);

/* Copies the lists an element of type `t` at `words` refers to, rewriting its handle words.
 * Returns the number of words the element occupies; *end receives the end of `t`. */
static uint32_t copy_element(copier *c, uint64_t *words, const char *t, const char **end) {
  switch (*t) {
    case 'P': {
      const char *second;
      uint32_t n = copy_element(c, words, t + 1, &second);
      return n + copy_element(c, words + n, second, end);
    }
    case 'L':
      *end = skip_type(t + 1);
      words[0] = (uint64_t)copy_list(c, (int64_t)words[0], t + 1);
      return 1;
    case 'u':
      *end = t + 1;
      return 0;
    default: /* f, b */
      *end = t + 1;
      return 1;
  }
}

/* Copies the list at h (elements of type `elem`); returns its new handle.  Nil and shared (filter
 * owned) lists are returned as they are, also as the tail of an arena list. */
static int64_t copy_list(copier *c, int64_t h, const char *elem) {
  int64_t head = h;
  uint64_t *link = NULL; /* tail word of the last cell copied */
  while (in_arena(c, h)) {
    uint64_t *cell = c->from + h;
    uint64_t forward = FORWARD(cell[0]);
    int64_t moved;
    if (forward) {
      moved = (int64_t)forward - 1;
    } else {
      uint32_t words = 1 + HEADER_WORDS(cell[0]);
      moved = c->to_used;
      memcpy(c->to + moved, cell, (size_t)words * sizeof(uint64_t));
      c->to_used += words;
      cell[0] |= (uint64_t)(moved + 1) << 32;
    }
    if (link) *link = (uint64_t)moved;
    else head = moved;
    if (forward) return head; /* the rest of this spine was copied already */
    const char *end;
    copy_element(c, c->to + moved + 2, elem, &end);
    link = c->to + moved + 1;
    h = (int64_t)*link; /* still the old tail */
  }
  return head;
}

int rt_collect(sirenrt_ctx *ctx, uint8_t *frame, int finished, const sirenrt_model *m) {
  if (ctx->arena_used == 0) return 0;
  copier c = {ctx->arena, ctx->arena_used, malloc((size_t)ctx->arena_used * sizeof(uint64_t)), 0};
  if (!c.to) return -1;
  if (finished) {
    const char *end;
    copy_element(&c, (uint64_t *)(frame + m->result_offset), m->result_type, &end);
  } else {
    int32_t pc;
    memcpy(&pc, frame, sizeof pc);
    for (int32_t r = 0; r < m->n_roots; r++) {
      if (m->roots[r].pc != pc) continue;
      uint64_t *slot = (uint64_t *)(frame + m->roots[r].offset);
      *slot = (uint64_t)copy_list(&c, (int64_t)*slot, m->roots[r].type + 1);
    }
  }
  free(ctx->arena);
  ctx->arena = c.to;
  ctx->arena_cap = c.from_used;
  ctx->arena_used = c.to_used;
  ctx->arena_live = c.to_used;
  return 0;
}
