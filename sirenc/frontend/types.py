"""Siren types, and type inference with one instance of a function per distinct signature.

    >>> from sirenc.frontend import load_source
    >>> typed = load_source("val id = fun x -> x in (id(1), id(true))")
    >>> [(name, str(i.param)) for name, i in typed.functions.items()], str(typed.main.result)
    ([('id', 'float'), ('id_1', 'bool')], 'float * bool')

Functions are checked per call site, like templates: the body is inferred again with
its parameter pattern unified with the argument's type (there is no recursion, so this
ends). Instances whose resolved parameter and result types agree are merged
afterwards. Type variables still open at the end default to ``float``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from sirenc import distributions
from sirenc.frontend import ast

# ---- type terms -----------------------------------------------------------------


@dataclass(frozen=True)
class TBase:
    """A type without parameters; use the constants ``TFloat``, ``TBool``, ``TUnit``, ``TString``."""

    name: str

    def __str__(self) -> str:
        return self.name


TFloat = TBase("float")
TBool = TBase("bool")
TUnit = TBase("unit")
TString = TBase("string")


@dataclass(frozen=True)
class TPair:
    fst: "Type"
    snd: "Type"

    def __str__(self) -> str:
        return show(self)


@dataclass(frozen=True)
class TList:
    elem: "Type"

    def __str__(self) -> str:
        return show(self)


def _sample_type(family: str) -> "Type":
    # A delta's draws have the type of its point, which TDist is then given explicitly.
    return TBool if distributions.family(family).value == distributions.BOOL else TFloat


@dataclass(frozen=True)
class TDist:
    """A distribution of a statically known family; ``value`` is the type of its samples."""

    family: str
    value: "Type" = None  # type: ignore[assignment]  # filled in from the family

    def __post_init__(self) -> None:
        if self.value is None:
            object.__setattr__(self, "value", _sample_type(self.family))

    def __str__(self) -> str:
        return show(self)


_fresh_ids = itertools.count()


class TVar:
    """A type variable of inference; ``ref`` is set once it is bound."""

    __slots__ = ("ref", "id")

    def __init__(self) -> None:
        self.ref: Type | None = None
        self.id = next(_fresh_ids)

    def __str__(self) -> str:
        return show(self)

    def __repr__(self) -> str:
        return f"TVar({self.id}, {self.ref!r})"


Type = TBase | TPair | TList | TDist | TVar


def prune(t: Type) -> Type:
    """Follow bound variables to the type they stand for."""
    while t.__class__ is TVar:  # (no type class has subclasses)
        ref = t.ref
        if ref is None:
            break
        if ref.__class__ is TVar and ref.ref is not None:
            t.ref = ref = ref.ref  # path compression
        t = ref
    return t


def show(t: Type, names: dict[int, str] | None = None) -> str:
    """`float * list(float)`; open variables print as 'a, 'b, ... (consistently within ``names``)."""
    names = {} if names is None else names
    t = prune(t)
    if isinstance(t, TVar):
        if t.id not in names:
            names[t.id] = "'" + "abcdefghijklmnopqrstuvwxyz"[len(names) % 26] + (
                str(len(names) // 26) if len(names) >= 26 else "")
        return names[t.id]
    if isinstance(t, TPair):
        fst = show(t.fst, names)
        if isinstance(prune(t.fst), TPair):
            fst = f"({fst})"
        return f"{fst} * {show(t.snd, names)}"
    if isinstance(t, TList):
        return f"list({show(t.elem, names)})"
    if isinstance(t, TDist):
        if t.family == "delta" and prune(t.value) != TFloat:
            return f"dist(delta of {show(t.value, names)})"
        return f"dist({t.family})"
    return str(t)


def show_all(*types: Type) -> list[str]:
    names: dict[int, str] = {}
    return [show(t, names) for t in types]


class Mismatch(Exception):
    """Two types that no binding of type variables makes equal (``unify``)."""


def unify(a: Type, b: Type) -> None:
    """Make ``a`` and ``b`` equal by binding variables, or raise ``Mismatch`` and bind nothing."""
    if a is b:
        return
    trail: list[TVar] = []
    try:
        _unify(a, b, trail)
    except Mismatch:
        for v in trail:
            v.ref = None
        raise


def _unify(a: Type, b: Type, trail: list[TVar]) -> None:
    a, b = prune(a), prune(b)
    if a is b:
        return
    cls = a.__class__  # (no type class has subclasses)
    if cls is TVar:
        if _occurs(a, b):
            raise Mismatch("infinite")
        a.ref = b
        trail.append(a)
    elif b.__class__ is TVar:
        _unify(b, a, trail)
    elif cls is not b.__class__:
        raise Mismatch()
    elif cls is TList:
        _unify(a.elem, b.elem, trail)
    elif cls is TPair:
        _unify(a.fst, b.fst, trail)
        _unify(a.snd, b.snd, trail)
    elif cls is TDist and a.family == b.family:
        _unify(a.value, b.value, trail)
    elif a != b:
        raise Mismatch()


def _occurs(v: TVar, t: Type) -> bool:
    t = prune(t)
    if t is v:
        return True
    if isinstance(t, TPair):
        return _occurs(v, t.fst) or _occurs(v, t.snd)
    if isinstance(t, TList):
        return _occurs(v, t.elem)
    if isinstance(t, TDist):
        return _occurs(v, t.value)
    return False


def resolve(t: Type) -> Type:
    """The type with every variable replaced; open variables become ``float`` for good."""
    t = prune(t)
    cls = t.__class__  # (no type class has subclasses)
    if cls is TBase:  # (most types of a program: nothing to replace)
        return t
    if cls is TVar:
        t.ref = TFloat
        return TFloat
    if cls is TPair:
        return TPair(resolve(t.fst), resolve(t.snd))
    if cls is TList:
        return TList(resolve(t.elem))
    if cls is TDist:
        return TDist(t.family, resolve(t.value))
    return t


def is_ground(t: Type) -> bool:
    t = prune(t)
    if isinstance(t, TVar):
        return False
    if isinstance(t, TPair):
        return is_ground(t.fst) and is_ground(t.snd)
    if isinstance(t, TList):
        return is_ground(t.elem)
    if isinstance(t, TDist):
        return is_ground(t.value)
    return True


def contains(t: Type, kind) -> bool:
    """Whether ``t`` has a part satisfying ``kind`` (after resolution)."""
    if kind(t):
        return True
    if isinstance(t, TPair):
        return contains(t.fst, kind) or contains(t.snd, kind)
    if isinstance(t, TList):
        return contains(t.elem, kind)
    return False


def pack(types: list[Type]) -> Type:
    """The type of an argument list: unit, the one argument, or a right-nested pair (ARCHITECTURE.md §3.2)."""
    if not types:
        return TUnit
    result = types[-1]
    for t in reversed(types[:-1]):
        result = TPair(t, result)
    return result


# ---- result of inference ------------------------------------------------------------


@dataclass
class Instance:
    name: str  # unique, e.g. "step" or "step_1" for a second signature
    func: ast.FunDef | None  # None for the main expression
    param: Type
    result: Type
    types: dict[int, Type] = field(default_factory=dict)  # id(Expr or Pattern node) -> type
    targets: dict[int, str] = field(default_factory=dict)  # id(Call/Fold node) -> callee instance
    # id(Expr) -> the type its value is converted to: a bool standing for a number or the
    # reverse, as the original Siren allows (``coercions``); the node's own type is in ``types``.
    coercions: dict[int, Type] = field(default_factory=dict)
    # id(Fold node) -> (what its function returns, the accumulator type it is converted to).
    fold_results: dict[int, tuple[Type, Type]] = field(default_factory=dict)


@dataclass
class TypedProgram:
    program: ast.Program
    main: Instance
    functions: dict[str, Instance]  # callees before callers


def pattern_text(p: ast.Pattern) -> str:
    if isinstance(p, ast.PVar):
        return p.name
    if isinstance(p, ast.PUnit):
        return "()"
    return "(" + ", ".join(pattern_text(q) for q in p.items) + ")"


__all__ = [
    "TBase", "TFloat", "TBool", "TUnit", "TString", "TPair", "TList", "TDist", "TVar", "Type",
    "Instance", "TypedProgram", "show", "unify", "resolve", "prune",
]
