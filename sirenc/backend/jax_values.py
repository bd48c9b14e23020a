"""Values of the JAX back end: scalars known while tracing, arrays over particles, lists.

A value is one of
- a *static* scalar (a Python or NumPy bool, int or float): known when the program is traced,
  so conditions on it are decided then (a loop over a constant list unrolls);
- an array of shape ``()`` (the same for every particle) or ``(n,)`` (one per particle);
- a ``JList``: a list of fixed capacity whose cells are columns, the head at column
  ``length - 1`` (cons writes at ``length``), so that cons, head and tail are O(1) array
  updates. ``length`` is static, or an array of shape ``()`` or ``(n,)``. ``room`` says how many
  columns after ``length`` are known to be free, so that a cons needs no larger array.

Functions here combine values so that two static operands give a static result (computed by
NumPy with IEEE semantics) and any array operand gives an array.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

STATIC = (bool, int, float, np.generic)


def is_static(v) -> bool:
    return isinstance(v, STATIC)


def weak(v):
    """A static scalar as the Python scalar JAX treats as weakly typed (it takes the array's dtype)."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def lift(np_fn, jnp_fn, *args):
    if all(is_static(a) for a in args):
        with np.errstate(all="ignore"):
            return np_fn(*(np.float64(a) if isinstance(a, float) else a for a in args))
    return jnp_fn(*(weak(a) for a in args))


def per_particle(v, n: int):
    """v as an array of shape (n,) (lists: columns (n, cap), length (n,))."""
    if isinstance(v, AList):
        return AList(jnp.broadcast_to(v.ptr, (n,)), jnp.broadcast_to(v.length, (n,)), v.key)
    if isinstance(v, JList):
        cols = tuple(jnp.broadcast_to(c, (n, c.shape[-1])) for c in v.cols)
        return JList(cols, jnp.broadcast_to(jnp.asarray(v.length, jnp.int32), (n,)), v.room)
    return jnp.broadcast_to(jnp.asarray(weak(v)) if is_static(v) else v, (n,))


def select(cond, a, b):
    """Per particle, a where cond holds, else b."""
    if is_static(cond):
        return a if cond else b
    if isinstance(a, AList):
        return AList(jnp.where(cond, a.ptr, b.ptr), jnp.where(cond, a.length, b.length), a.key)
    if isinstance(a, JList):
        cap = max(a.cap, b.cap)
        a, b = a.padded(cap), b.padded(cap)
        c = jnp.asarray(cond)[..., None]
        cols = tuple(jnp.where(c, x, y) for x, y in zip(a.cols, b.cols))
        length = a.length if (is_static(a.length) and is_static(b.length) and a.length == b.length) \
            else jnp.where(cond, weak(a.length), weak(b.length))
        return JList(cols, length, min(a.room, b.room))
    if is_static(a) and is_static(b) and a == b and type(a) is type(b):
        return a
    return jnp.where(cond, weak(a), weak(b))


def gather(v, index):
    """v's particles in the order `index` (resampling): per-particle arrays only (an arena list's
    cells stay where they are: only its head and length move)."""
    if isinstance(v, AList):
        return AList(v.ptr[index], v.length[index], v.key)
    if isinstance(v, JList):
        cols = tuple(c[index] if c.ndim == 2 else c for c in v.cols)
        length = v.length[index] if not is_static(v.length) and jnp.ndim(v.length) == 1 else v.length
        return JList(cols, length, v.room)
    if not is_static(v) and jnp.ndim(v) == 1:
        return v[index]
    return v


@jax.tree_util.register_pytree_node_class
@dataclass
class JList:
    cols: tuple          # one array per scalar of the element, shape (cap,) or (n, cap)
    length: object       # static int, or an int32 array of shape () or (n,)
    room: int = 0        # columns at and after `length` known to be free (static)

    @property
    def cap(self) -> int:
        return self.cols[0].shape[-1]

    def tree_flatten(self):
        static = self.length if is_static(self.length) else None
        return (self.cols, None if static is not None else self.length), (static, self.room)

    @classmethod
    def tree_unflatten(cls, aux, children):
        static, room = aux
        cols, length = children
        return cls(tuple(cols), static if static is not None else length, room)

    def padded(self, cap: int) -> JList:
        """The same list in `cap` columns (cap >= self.cap)."""
        extra = cap - self.cap
        if extra <= 0:
            return self
        cols = tuple(jnp.pad(c, [(0, 0)] * (c.ndim - 1) + [(0, extra)]) for c in self.cols)
        return JList(cols, self.length, self.room + extra)

    def resized(self, cap: int) -> JList:
        """The list in exactly `cap` columns; the caller knows its length fits."""
        if cap >= self.cap:
            return self.padded(cap)
        return JList(tuple(c[..., :cap] for c in self.cols), self.length, 0)

    def dynamic(self) -> JList:
        """The list with an array length (what a loop carries)."""
        if not is_static(self.length):
            return self
        return JList(self.cols, jnp.asarray(self.length, jnp.int32), self.room)


@jax.tree_util.register_pytree_node_class
@dataclass
class AList:
    """A list whose cells live in an arena (jax_cells): per particle its head cell and length."""

    ptr: object      # int32 (n,): the head cell (-1: none)
    length: object   # int32 (n,)
    key: tuple       # the arena

    def tree_flatten(self):
        return (self.ptr, self.length), self.key

    @classmethod
    def tree_unflatten(cls, key, children):
        return cls(children[0], children[1], key)


def column(col, index):
    """col's entry at `index` (static int, or array of shape () or (n,)) per particle."""
    if col.ndim == 1:
        return col[index]
    if is_static(index) or jnp.ndim(index) == 0:
        return col[:, index]
    return jnp.take_along_axis(col, jnp.asarray(index)[:, None], axis=1)[:, 0]


def write_column(col, index, value):
    """col with `value` at column `index` (particle by particle where index is per particle)."""
    n_value = jnp.ndim(value) if not is_static(value) else 0
    n_index = 0 if is_static(index) else jnp.ndim(index)
    if col.ndim == 1 and max(n_value, n_index) == 0:
        return col.at[index].set(weak(value))
    n = (jnp.shape(value) if n_value else jnp.shape(index))[0] if max(n_value, n_index) else col.shape[0]
    col = jnp.broadcast_to(col, (n, col.shape[-1])) if col.ndim == 1 else col
    if n_index == 1:
        return col.at[jnp.arange(n), index].set(weak(value))
    return col.at[:, index].set(weak(value))


def head(lst: JList) -> list:
    if lst.cap == 0:
        return [jnp.zeros((), c.dtype) for c in lst.cols]
    at = lst.length - 1 if is_static(lst.length) else jnp.clip(lst.length - 1, 0, lst.cap - 1)
    if is_static(at):
        at = min(max(at, 0), lst.cap - 1)
    return [column(c, at) for c in lst.cols]


def tail(lst: JList) -> JList:
    length = max(lst.length - 1, 0) if is_static(lst.length) else jnp.maximum(lst.length - 1, 0)
    return JList(lst.cols, length, lst.room + 1)


def cons(values: list, lst: JList) -> JList:
    if lst.room <= 0:
        lst = lst.padded(lst.cap + 1)
    cols = tuple(write_column(c, lst.length, v) for c, v in zip(lst.cols, values))
    length = lst.length + 1
    return JList(cols, length, lst.room - 1)


def reverse(lst: JList) -> JList:
    if is_static(lst.length):
        cols = tuple(c[..., :lst.length][..., ::-1] for c in lst.cols)
        return JList(cols, lst.length, 0)
    j = jnp.arange(lst.cap)
    index = jnp.clip(jnp.asarray(lst.length)[..., None] - 1 - j, 0, max(lst.cap - 1, 0))
    return JList(tuple(take_last(c, index) for c in lst.cols), lst.length, lst.room)


def take_last(col, index):
    """col's entries at `index` along the last axis, both broadcast to one shape."""
    shape = jnp.broadcast_shapes(col.shape, index.shape)
    return jnp.take_along_axis(jnp.broadcast_to(col, shape), jnp.broadcast_to(index, shape), axis=-1)


def from_elements(elements: list[list], dtypes: list) -> JList:
    """A static list (first element = head) of static scalars."""
    n = len(elements)
    cols = tuple(jnp.asarray([e[k] for e in reversed(elements)], dtype=d).reshape(n)
                 for k, d in enumerate(dtypes))
    return JList(cols, n, 0)
