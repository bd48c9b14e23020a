"""Abstract symbolic expressions and distributions (ARCHITECTURE.md §6.2, 9, 17.2).

The analysis runs the program once on *abstract* values: the symbolic
expressions of the runtime, plus

* ``Const(UNK)``: an unknown constant (a sampled value, the length of an
  unknown list, the join of two different constants);
* ``UnkE(parents)``: an unknown expression that may depend on ``parents``
  (also a list of unknown length, e.g. the rows of ``File.read``);
* ``TopE``: an expression that may depend on anything;

and the distributions ``Dist(family, params)``, ``Delta(v, sampled)``,
``UnkD(parents)`` and ``TopD``.  Nodes are immutable and hash-consed enough
(cached hash and random-variable list) that structural equality and the
``rvs`` queries the algorithms make constantly stay cheap::

    >>> x = RV("rv1")
    >>> add(Const(1.0), add(Const(2.0), x))
    Add(Const(3.0), RV(rv1))
    >>> Normal(mul(Const(2.0), x), Const(1.0)).rvs()
    (RV(rv1),)

Simplification (`add`, `mul`, ...) follows ARCHITECTURE.md §6.3 rule for rule, with
``UNK`` absorbing every arithmetic operation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from sirenc import distributions


class _Unknown:
    """The unknown constant: arithmetic and comparisons with it stay unknown."""

    __slots__ = ()
    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UnkC"

    def __reduce__(self):
        return (_Unknown, ())


UNK = _Unknown()


def _dedup(items: Iterable) -> tuple:
    seen: dict = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(seen)


# ---- expressions -------------------------------------------------------------


class Expr:
    """Base of abstract expressions.

    Composite nodes are hash-consed (equal nodes are one object), so the DAGs
    that conjugate updates build share their subterms and every structural
    walk below can memoise on node identity.
    """

    __slots__ = ("_hash", "_rvs", "_rvset", "_top", "size", "__weakref__")

    def _init(self, rvs: tuple, top: bool, size: int = 1) -> None:
        global _built
        _built += 1 + len(rvs) // WIDTH
        self._rvs = rvs
        self._rvset = None
        self._top = top
        self.size = size  # of the tree (shared subterms counted each time)
        self._hash = hash((type(self).__name__,) + self._key())

    def _key(self) -> tuple:
        raise NotImplementedError

    def children(self) -> tuple[Expr, ...]:
        return ()

    def rebuild(self, children: tuple[Expr, ...]) -> Expr:
        return self

    def rvs(self) -> tuple[RV, ...]:
        """Random-variable leaves in order of first occurrence, left to right (ARCHITECTURE.md §6.2)."""
        return self._rvs

    def rvset(self) -> frozenset:
        if self._rvset is None:
            self._rvset = frozenset(self._rvs)
        return self._rvset

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self) or other._hash != self._hash:  # type: ignore[attr-defined]
            return False
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __repr__(self) -> str:
        inner = ", ".join(repr(c) for c in self._key())
        return f"{type(self).__name__}({inner})"


_INTERN: dict = {}
_built = 0
WIDTH = 16     # elements hashed or merged per unit of work (see built())


def reset_interning() -> None:
    """Forget interned nodes (each analysis starts afresh; old nodes stay valid)."""
    global _built
    _built = 0
    _INTERN.clear()
    for node in (TOP, UNIT, UNKC):
        _INTERN[(type(node), type(node.v), node.v) if type(node) is Const else type(node)] = node


def built() -> int:
    """The work of making expression nodes since ``reset_interning``.

    Looking a composite node up costs one plus one per ``WIDTH`` children (the
    key is hashed), building a new one one more plus one per ``WIDTH`` variables
    (they are merged): consing onto a long list or merging many variables is
    real work that the interpreter's steps do not see.  Part of the analysis
    budget, with those steps (``Shared.spent``).
    """
    return _built


class Const(Expr):
    """A known constant (float, bool, unit ``None``, string, tuple) or ``UNK``."""

    __slots__ = ("v",)

    def __new__(cls, v):
        key = (cls, type(v), v)
        try:
            hit = _INTERN.get(key)
        except TypeError:  # unhashable payloads are never produced, but be safe
            hit, key = None, None
        if hit is not None:
            return hit
        self = object.__new__(cls)
        self.v = v
        self._init((), False)
        if key is not None:
            _INTERN[key] = self
        return self

    def _key(self) -> tuple:
        # True == 1 == 1.0 as in Python (ARCHITECTURE.md §6.3 "Const(1) matches True").
        return (self.v,)


class RV(Expr):
    """A handle of an abstract random variable, ``rvN``."""

    __slots__ = ("name",)

    def __new__(cls, name: str):
        key = (cls, name)
        hit = _INTERN.get(key)
        if hit is not None:
            return hit
        self = object.__new__(cls)
        self.name = name
        self._init((self,), False)
        _INTERN[key] = self
        return self

    def _key(self) -> tuple:
        return (self.name,)

    def __repr__(self) -> str:
        return f"RV({self.name})"


def _merge_rvs(args) -> tuple:
    nonempty = [a._rvs for a in args if a._rvs]
    if not nonempty:
        return ()
    if len(nonempty) == 1:
        return nonempty[0]
    return tuple(dict.fromkeys(rv for rvs in nonempty for rv in rvs))


class _Node(Expr):
    __slots__ = ("args",)

    def __new__(cls, *args: Expr):
        global _built
        _built += 1 + len(args) // WIDTH
        key = (cls, args)
        hit = _INTERN.get(key)
        if hit is not None:
            return hit
        self = object.__new__(cls)
        self.args = args
        self._init(_merge_rvs(args), any(a._top for a in args), 1 + sum(a.size for a in args))
        _INTERN[key] = self
        return self

    def _key(self) -> tuple:
        return self.args

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def rebuild(self, children: tuple[Expr, ...]) -> Expr:
        if children == self.args:
            return self
        return type(self)(*children)


class Add(_Node):
    __slots__ = ()


class Mul(_Node):
    __slots__ = ()


class Div(_Node):
    __slots__ = ()


class Eq(_Node):
    __slots__ = ()


class Lt(_Node):
    __slots__ = ()


class Ite(_Node):
    __slots__ = ()


class Pair(_Node):
    __slots__ = ()


class Lst(_Node):
    """A list of known length; ``Lst()`` is the empty list."""

    __slots__ = ()


class DistV(_Node):
    """A distribution used as a value (``let d = gaussian(m, v) in ...``)."""

    __slots__ = ("family",)

    def __new__(cls, family: str, *args: Expr):
        global _built
        _built += 1 + len(args) // WIDTH
        key = (cls, family, args)
        hit = _INTERN.get(key)
        if hit is not None:
            return hit
        self = object.__new__(cls)
        self.family = family
        self.args = args
        self._init(_merge_rvs(args), any(a._top for a in args), 1 + sum(a.size for a in args))
        _INTERN[key] = self
        return self

    def _key(self) -> tuple:
        return (self.family,) + self.args

    def rebuild(self, children: tuple[Expr, ...]) -> Expr:
        if children == self.args:
            return self
        return DistV(self.family, *children)

    def __repr__(self) -> str:
        return f"DistV({self.family}, {', '.join(map(repr, self.args))})"


class UnkE(Expr):
    """An unknown expression that may depend on ``parents`` (no duplicates)."""

    __slots__ = ("parents",)

    def __new__(cls, parents: Iterable[RV] = ()):
        global _built
        parents = _dedup(parents)
        _built += 1 + len(parents) // WIDTH
        key = (cls, parents)
        hit = _INTERN.get(key)
        if hit is not None:
            return hit
        self = object.__new__(cls)
        self.parents = parents
        self._init(parents, False)
        _INTERN[key] = self
        return self

    def _key(self) -> tuple:
        return self.parents


class TopE(Expr):
    """An expression that may depend on any random variable."""

    __slots__ = ()

    def __new__(cls):
        hit = _INTERN.get(cls)
        if hit is not None:
            return hit
        self = object.__new__(cls)
        self._init((), True)
        _INTERN[cls] = self
        return self

    def _key(self) -> tuple:
        return ()


TOP = TopE()
UNIT = Const(None)
UNKC = Const(UNK)


# ---- distributions -----------------------------------------------------------

# The families a `Dist` has (ARCHITECTURE.md §9): the interpreter turns `exponential` into Gamma(1, r) and
# `uniform_int` into a categorical, and a delta is a `Delta`.
FAMILIES = tuple(n for n in distributions.NAMES if n not in ("exponential", "uniform_int", "delta"))


class Distr:
    __slots__ = ("_hash", "_rvs")

    def rvs(self) -> tuple[RV, ...]:
        return self._rvs

    def params(self) -> tuple[Expr, ...]:
        return ()

    def with_params(self, params: tuple[Expr, ...]) -> Distr:
        return self

    def __hash__(self) -> int:
        return self._hash


class Dist(Distr):
    """A distribution of a known family with abstract parameters."""

    __slots__ = ("family", "args")

    def __init__(self, family: str, args: tuple[Expr, ...]):
        self.family = family
        self.args = tuple(args)
        self._rvs = _merge_rvs(self.args)
        self._hash = hash((family,) + self.args)

    def params(self) -> tuple[Expr, ...]:
        return self.args

    def with_params(self, params: tuple[Expr, ...]) -> Distr:
        params = tuple(params)
        if params == self.args:
            return self
        return Dist(self.family, params)

    def __eq__(self, other: object) -> bool:
        return (
            self is other
            or type(other) is Dist
            and other._hash == self._hash
            and other.family == self.family
            and other.args == self.args
        )

    def __repr__(self) -> str:
        return f"{self.family}({', '.join(map(repr, self.args))})"


class Delta(Distr):
    """A point mass: a sampled (``sampled``) or observed variable."""

    __slots__ = ("v", "sampled")

    def __init__(self, v: Expr, sampled: bool = False):
        self.v = v
        self.sampled = sampled
        self._rvs = v._rvs
        self._hash = hash(("delta", v, sampled))

    def params(self) -> tuple[Expr, ...]:
        return (self.v,)

    def with_params(self, params: tuple[Expr, ...]) -> Distr:
        (v,) = params
        return self if v == self.v else Delta(v, self.sampled)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is Delta and other.sampled == self.sampled and other.v == self.v
        )

    def __repr__(self) -> str:
        return f"Delta({self.v!r}, {'sampled' if self.sampled else 'observed'})"


class UnkD(Distr):
    """A distribution of unknown family that may depend on ``parents``."""

    __slots__ = ("parents",)

    def __init__(self, parents: Iterable[RV] = ()):
        self.parents = _dedup(parents)
        self._rvs = self.parents
        self._hash = hash(("unkd",) + self.parents)

    def __eq__(self, other: object) -> bool:
        return type(other) is UnkD and other.parents == self.parents

    def __repr__(self) -> str:
        return f"UnkD({list(self.parents)})"


class TopD(Distr):
    """A distribution about which nothing is known."""

    __slots__ = ()

    def __init__(self):
        self._rvs = ()
        self._hash = hash("topd")

    def __eq__(self, other: object) -> bool:
        return type(other) is TopD

    def __repr__(self) -> str:
        return "TopD"


TOPD = TopD()


def Normal(mu: Expr, var: Expr) -> Dist:  # noqa: N802 - reads like the math
    return Dist("gaussian", (mu, var))


def Gamma(a: Expr, b: Expr) -> Dist:  # noqa: N802
    return Dist("gamma", (a, b))


MAX_TREE_SIZE = 4096


def bounded(e: Expr, limit: int = MAX_TREE_SIZE) -> Expr:
    """``e``, or an ``UnkE`` over its variables when it has grown past ``limit``.

    Conjugate updates over symbolic Booleans (slam's map lookup) double the
    expression with every swap; past the limit the analysis only keeps which
    variables a parameter depends on, which every dependence check still sees.
    """
    if e.size <= limit:
        return e
    return TOP if e._top else UnkE(e.rvs())


def bounded_distr(d: Distr, limit: int = MAX_TREE_SIZE) -> Distr:
    if type(d) is not Dist:
        return d
    return d.with_params(tuple(bounded(p, limit) for p in d.args))


# ---- renaming and substitution -----------------------------------------------


def map_expr(e: Expr, leaf: Callable[[Expr], Expr | None], touches: Callable[[Expr], bool]) -> Expr:
    """Rebuild ``e`` bottom-up, replacing leaves for which ``leaf`` returns a value.

    ``touches(node)`` lets the walk skip subtrees that cannot change; shared
    subterms are rebuilt once.
    """
    memo: dict[int, Expr] = {}

    def walk(n: Expr) -> Expr:
        if not touches(n):
            return n
        hit = memo.get(id(n))
        if hit is not None:
            return hit
        out = leaf(n)
        if out is None:
            kids = n.children()
            out = n.rebuild(tuple(walk(k) for k in kids)) if kids else n
        memo[id(n)] = out
        return out

    return walk(e)


def rename(e: Expr, old: RV, new: RV) -> Expr:
    """``e`` with handle ``old`` renamed to ``new`` (also inside ``UnkE``)."""
    if old not in e.rvset():
        return e

    def leaf(n: Expr) -> Expr | None:
        if type(n) is RV:
            return new if n == old else n
        if type(n) is UnkE:
            return UnkE(new if p == old else p for p in n.parents)
        return None

    return map_expr(e, leaf, lambda n: old in n.rvset())


def subst(e: Expr, rv: RV, value: Expr) -> Expr:
    """``e`` with ``rv`` replaced by ``value`` (an ``UnkE`` takes its variables)."""
    if rv not in e.rvset():
        return e

    def leaf(n: Expr) -> Expr | None:
        if type(n) is RV:
            return value if n == rv else n
        if type(n) is UnkE:
            return UnkE([p for p in n.parents if p != rv] + list(value.rvs()))
        return None

    return map_expr(e, leaf, lambda n: rv in n.rvset())


def rename_distr(d: Distr, old: RV, new: RV) -> Distr:
    if old not in d.rvs():
        return d
    if type(d) is UnkD:
        return UnkD(new if p == old else p for p in d.parents)
    return d.with_params(tuple(rename(p, old, new) for p in d.params()))


def subst_distr(d: Distr, rv: RV, value: Expr) -> Distr:
    if rv not in d.rvs():
        return d
    if type(d) is UnkD:
        return UnkD([p for p in d.parents if p != rv] + list(value.rvs()))
    return d.with_params(tuple(subst(p, rv, value) for p in d.params()))


def depends_on(e: Expr | Distr, rv: RV) -> bool:
    """Syntactic dependence; ``TopE``/``TopD`` depend on everything."""
    if type(e) is TopE or type(e) is TopD:
        return True
    if isinstance(e, Expr):
        if rv in e.rvset():
            return True
        return contains_top(e)
    return rv in e.rvs() or any(contains_top(p) for p in e.params())


def contains_top(e: Expr) -> bool:
    return e._top


# ---- constant arithmetic and smart constructors (ARCHITECTURE.md §6.3) -------------------


def _arith(op: Callable, a, b):
    if a is UNK or b is UNK:
        return UNK
    try:
        if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
            return UNK
        return op(a, b)
    except (ZeroDivisionError, OverflowError, TypeError, ValueError):
        return UNK


def _ieee_div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or (isinstance(a, float) and math.isnan(a)):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _is(e: Expr, value) -> bool:
    """``e`` is a known constant equal to ``value`` (``Const(0)`` matches 0.0, False)."""
    if type(e) is not Const or e.v is UNK or isinstance(e.v, str) or e.v is None:
        return False
    try:
        return bool(e.v == value)
    except Exception:  # noqa: BLE001 - exotic constants compare unequal
        return False


def add(e1: Expr, e2: Expr) -> Expr:
    t1, t2 = type(e1), type(e2)
    if t1 is Const:
        if t2 is Const:
            return Const(_arith(lambda a, b: a + b, e1.v, e2.v))
        if t2 is Add:
            l, r = e2.args
            if type(l) is Const:
                return add(Const(_arith(lambda a, b: a + b, e1.v, l.v)), r)
            if type(r) is Const:
                return add(Const(_arith(lambda a, b: a + b, e1.v, r.v)), l)
    if t1 is Add and type(e1.args[0]) is Const:
        return add(e1.args[0], add(e1.args[1], e2))
    if _is(e1, 0):
        return e2
    if _is(e2, 0):
        return e1
    return Add(e1, e2)


def mul(e1: Expr, e2: Expr) -> Expr:
    t1, t2 = type(e1), type(e2)
    if t1 is Const:
        if t2 is Const:
            return Const(_arith(lambda a, b: a * b, e1.v, e2.v))
        if t2 is Mul:
            l, r = e2.args
            if type(l) is Const:
                return mul(Const(_arith(lambda a, b: a * b, e1.v, l.v)), r)
            if type(r) is Const:
                return mul(Const(_arith(lambda a, b: a * b, e1.v, r.v)), l)
        if t2 is Add and type(e2.args[0]) is Const:
            return add(Const(_arith(lambda a, b: a * b, e1.v, e2.args[0].v)), mul(e1, e2.args[1]))
    if _is(e1, 0) or _is(e2, 0):
        return Const(0.0)
    return Mul(e1, e2)


def div(e1: Expr, e2: Expr) -> Expr:
    if type(e1) is Const and type(e2) is Const:
        return Const(_arith(_ieee_div, e1.v, e2.v))
    if _is(e2, 1):
        return e1
    return Div(e1, e2)


def _compare(op: Callable, a, b):
    if a is UNK or b is UNK:
        return UNK
    try:
        return bool(op(a, b))
    except TypeError:
        return UNK


def eq(e1: Expr, e2: Expr) -> Expr:
    if type(e1) is Const and type(e2) is Const:
        return Const(_compare(lambda a, b: a == b, e1.v, e2.v))
    return Eq(e1, e2)


def lt(e1: Expr, e2: Expr) -> Expr:
    if type(e1) is Const and type(e2) is Const:
        return Const(_compare(lambda a, b: a < b, e1.v, e2.v))
    return Lt(e1, e2)


def neg(e: Expr) -> Expr:
    """``-e`` as the original builds it: ``Mul(Const(-1), e)`` (ARCHITECTURE.md §6.2)."""
    return Mul(Const(-1.0), e)


def sub(e1: Expr, e2: Expr) -> Expr:
    """``e1 - e2`` as ``Add(e1, Mul(Const(-1), e2))`` (ARCHITECTURE.md §7.4)."""
    return Add(e1, neg(e2))


# ---- structural helpers ------------------------------------------------------


def as_list(e: Expr) -> tuple[Expr, ...] | Expr:
    """Elements of a known list, or the unknown expression standing for it."""
    if type(e) is Lst:
        return e.args
    if type(e) is UnkE or type(e) is TopE:
        return e
    if type(e) is Const:
        return UnkE(())
    return UnkE(e.rvs())
