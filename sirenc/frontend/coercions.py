"""Booleans standing for numbers, and numbers for booleans, as the original Siren allows.

The original Siren has no type checker: it computes with Python values, where
``True + 1 == 2``, ``True == 1.0`` and ``if 0.5 then ...`` takes the 'then'
branch. Its programs rely on this, e.g. a map lookup whose accumulator starts at
``-1`` ("not found") while the map holds booleans::

    let res2 = if n = i then cell else res in ...     (cell: bool, res: float)

sirenc flattens values by their static type (f64 or i1), so the type checker
inserts a conversion where a bool meets a float, and warns at the spot with the
explicit form the programmer can write instead:

* a bool where a number is expected (an operand of ``+ - * / <`` or unary ``-``, a
  distribution parameter, a float-valued observation) or where it meets a float
  (the two branches of an ``if``, the two sides of ``=``, the elements of a list,
  the head and tail of ``::``) becomes ``if b then 1. else 0.``;
* a number used as a condition, or observed from a boolean distribution, becomes
  ``if x = 0. then false else true`` (Python's truthiness).

Pairs and lists convert componentwise. Everything else that does not fit stays a
type error.
"""

from __future__ import annotations

from sirenc.diagnostics import source_text
from sirenc.frontend import ast
from sirenc.frontend.types import Mismatch, TBool, TDist, TFloat, TList, TPair, TVar, Type, prune, show, unify

_MAX_SHOWN = 40


def join(a: Type, b: Type) -> Type:
    """The type both ``a`` and ``b`` convert to, where a bool meets a float; else unify them.

    Raises ``Mismatch`` when there is none (bindings made on the way are kept:
    the caller reports an error then).
    """
    a, b = prune(a), prune(b)
    if (a, b) in ((TBool, TFloat), (TFloat, TBool)):
        return TFloat
    if isinstance(a, TPair) and isinstance(b, TPair):
        return TPair(join(a.fst, b.fst), join(a.snd, b.snd))
    if isinstance(a, TList) and isinstance(b, TList):
        return TList(join(a.elem, b.elem))
    unify(a, b)
    return a


def converts(source: Type, target: Type) -> bool:
    """Whether a value of type ``source`` needs a conversion to have type ``target``."""
    source, target = prune(source), prune(target)
    if source is target:  # (the common case: nothing to convert)
        return False
    cls = source.__class__  # (no type class has subclasses)
    if cls is not target.__class__:
        return False
    if cls is TList:
        return converts(source.elem, target.elem)
    if cls is TPair:
        return converts(source.fst, target.fst) or converts(source.snd, target.snd)
    return (source, target) in ((TBool, TFloat), (TFloat, TBool))


def try_join(a: Type, b: Type) -> Type | None:
    """``join`` if the two types differ only where a bool meets a float, else None
    (and then no type variable is left bound by the attempt)."""
    saved = [(v, v.ref) for v in _variables(a) + _variables(b)]
    try:
        return join(a, b)
    except Mismatch:
        for v, ref in saved:
            v.ref = ref
        return None


def _variables(t: Type) -> list[TVar]:
    out: list[TVar] = []
    stack = [t]
    while stack:
        t = stack.pop()
        if isinstance(t, TVar):
            out.append(t)
            if t.ref is not None:
                stack.append(t.ref)
        elif isinstance(t, TPair):
            stack += [t.fst, t.snd]
        elif isinstance(t, TList):
            stack.append(t.elem)
        elif isinstance(t, TDist):
            stack.append(t.value)
    return out


def _text(node: ast.Expr) -> str | None:
    text = source_text(node.span)
    if text is None or len(text) > _MAX_SHOWN:
        return None
    if not isinstance(node, (ast.Var, ast.Const, ast.Call, ast.Tuple, ast.ListLit)):
        text = f"({text})"
    return text


def widen_message(node: ast.Expr | None, source: Type, target: Type, context: str) -> str:
    """The warning for converting ``node`` (of type ``source``; None: a function's result)
    to ``target`` (bools to numbers)."""
    lead = (f"{context}: as in the original Siren, a bool stands for a number here "
            "(true is 1., false is 0.)")
    if node is None:
        return (f"{lead}; sirenc converts the result as `if b then 1. else 0.` would for each bool in it, "
                "which you can write in the function to be explicit")
    text = _text(node)
    if isinstance(node, ast.Const) and isinstance(node.value, bool):
        return f"{lead}; sirenc reads it as `{'1.' if node.value else '0.'}`, which you can write instead"
    if prune(source) == TBool and prune(target) == TFloat:
        if text is None:
            return f"{lead}; sirenc converts it as `if ... then 1. else 0.` would, so write that to be explicit"
        return f"{lead}; sirenc reads it as `if {text} then 1. else 0.`, which you can write to be explicit"
    return (f"{lead}; sirenc converts the bools in this {show(source)} to numbers to make it a {show(target)}, "
            "as `if b then 1. else 0.` would for each")


def truth_message(node: ast.Expr, context: str, branches: tuple[ast.Expr, ast.Expr] | None = None) -> str:
    """The warning for using the number ``node`` as a bool (Python truthiness)."""
    lead = f"{context}: as in the original Siren, a number stands for a bool here (any number but 0. is true)"
    text = _text(node) or "..."
    if branches is not None:
        then, else_ = (_text(b) for b in branches)
        if then is not None and else_ is not None:
            return (f"{lead}; sirenc reads this 'if' as `if {text} = 0. then {else_} else {then}`, "
                    "which you can write to be explicit")
    return f"{lead}; sirenc reads it as `if {text} = 0. then false else true`, which you can write to be explicit"
