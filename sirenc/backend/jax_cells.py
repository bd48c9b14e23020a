"""Lists that a stream loop carries, as cells shared between particles (the JAX back end).

A ``JList`` keeps each particle's list in a row of columns, so resampling copies every
particle's whole list: O(n x length) per step, which grows with the steps. A list carried from
step to step is instead an ``AList``: per particle, the index of its head cell and its length,
into an ``Arena`` of cells (one value per element scalar and the index of the next cell). A cons
allocates one block of n cells, one per particle, so particles never write into each other's
cells; offspring of one parent share its cells after resampling, which copies two integers per
particle. Reading the head or the tail is one gather.

Arenas are keyed by the element's dtypes; each has a fixed number of blocks (what the steps to
come will allocate, counted while tracing one step) and the number in use. ``Cells`` is the view
through which the evaluator and the carry's conformance allocate; it counts the blocks one
trace allocates.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp

from sirenc.backend import jax_values as V
from sirenc.backend.jax_values import AList


def key_of(dtypes) -> tuple:
    return tuple(jnp.dtype(d).name for d in dtypes)


@jax.tree_util.register_pytree_node_class
@dataclass
class Arena:
    vals: tuple      # one (blocks * n,) array per element scalar
    nxt: object      # int32 (blocks * n,): the next cell of each cell
    top: object      # int32 (): blocks in use

    def tree_flatten(self):
        return (self.vals, self.nxt, self.top), None

    @classmethod
    def tree_unflatten(cls, _aux, children):
        return cls(tuple(children[0]), children[1], children[2])

    def blocks(self, n: int) -> int:
        return self.nxt.shape[0] // n


def empty_arena(key: tuple, blocks: int, n: int) -> Arena:
    return Arena(tuple(jnp.zeros((blocks * n,), jnp.dtype(d)) for d in key),
                 jnp.full((blocks * n,), -1, jnp.int32), jnp.int32(0))


def resized_arena(arena: Arena, blocks: int, n: int) -> Arena:
    extra = blocks * n - arena.nxt.shape[0]
    if extra <= 0:
        return arena
    return Arena(tuple(jnp.pad(v, (0, extra)) for v in arena.vals), jnp.pad(arena.nxt, (0, extra), constant_values=-1),
                 arena.top)


class Cells:
    """The arenas while a function is traced: allocation, and the count of blocks allocated."""

    def __init__(self, arenas: dict, n: int):
        self.arenas, self.n = dict(arenas), n
        self.allocated: dict[tuple, int] = {}
        self.full = False          # some allocation found its arena without a free block

    def alloc(self, key: tuple, values: list, nxt) -> object:
        """One block: particle i's cell holds values[k][i] and points to nxt[i]; its indices."""
        a, n = self.arenas[key], self.n
        self.full = self.full | (a.top >= a.blocks(n))
        start = jnp.minimum(a.top, a.blocks(n) - 1) * n
        vals = tuple(jax.lax.dynamic_update_slice(v, jnp.broadcast_to(jnp.asarray(V.weak(x)), (n,)).astype(v.dtype),
                                                  (start,)) for v, x in zip(a.vals, values))
        nxt_cells = jax.lax.dynamic_update_slice(a.nxt, jnp.broadcast_to(nxt, (n,)).astype(jnp.int32), (start,))
        self.arenas[key] = Arena(vals, nxt_cells, a.top + 1)
        self.allocated[key] = self.allocated.get(key, 0) + 1
        return start + jnp.arange(n, dtype=jnp.int32)

    # -- list operations on arena lists ------------------------------------------------------------

    def head(self, lst: AList) -> list:
        at = jnp.maximum(lst.ptr, 0)
        return [v[at] for v in self.arenas[lst.key].vals]

    def tail(self, lst: AList) -> AList:
        return AList(self.arenas[lst.key].nxt[jnp.maximum(lst.ptr, 0)], jnp.maximum(lst.length - 1, 0), lst.key)

    def cons(self, values: list, lst: AList) -> AList:
        return AList(self.alloc(lst.key, values, lst.ptr), lst.length + 1, lst.key)

    def from_jlist(self, lst: V.JList) -> AList:
        """The cells of a column list (one block per column, the deepest element first)."""
        key = key_of(c.dtype for c in lst.cols)
        n = self.n
        length = jnp.broadcast_to(jnp.asarray(V.weak(lst.length), jnp.int32), (n,))
        ptr = jnp.full((n,), -1, jnp.int32)
        for j in range(lst.cap):
            cells = self.alloc(key, [jnp.broadcast_to(V.column(c, j), (n,)) for c in lst.cols], ptr)
            ptr = jnp.where(j < length, cells, ptr)
        return AList(ptr, length, key)

    def to_jlist(self, lst: AList) -> V.JList:
        """The list as columns, as long as the arena has blocks (what no list of it can exceed)."""
        arena, n = self.arenas[lst.key], self.n
        cap = arena.blocks(n)

        def follow(ptr, _):
            at = jnp.maximum(ptr, 0)
            return arena.nxt[at], [v[at] for v in arena.vals]
        _, elements = jax.lax.scan(follow, lst.ptr, None, length=cap)     # element k of every list, head first
        index = jnp.clip(lst.length[:, None] - 1 - jnp.arange(cap), 0, max(cap - 1, 0))
        cols = tuple(jnp.take_along_axis(e.T, index, axis=1) for e in elements)
        return V.JList(cols, lst.length, 0)
