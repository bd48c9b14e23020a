"""Which random variable each number of the result is, where the program returns one as it is.

Summaries name a number of the result by its path (``result.1[3]``); where that number is a
random variable of the plan, returned unchanged (``let p <- beta(...) in ... p``, a fold whose
step returns its ``x1``, a list of ``x``s consed each step), they name the variable too. The
analysis follows values, not computation: a variable passes through lets, patterns, pairs,
lists, the calls of user functions, ``fold`` and the list library functions that return
elements (``hd``, ``tl``, ``rev``, ``map``), and anything computed from it (``x + 0.``, either
branch of an ``if`` that may return something else) has no name. A fold's result is named by its
step function's result, as after one step at least: the name describes the result for any
non-empty list.

``returned(program)`` is what the main expression returns, in these terms; ``names(returned,
result_type)`` gives one entry per scalar tag of the result's type descriptor, in its order (a
list's element tag counts once and names every element): the variable's name, or "" where the
number is not one variable."""

from __future__ import annotations

from dataclasses import dataclass

from sirenc.descriptors import SCALARS, skip
from sirenc.frontend import ast


class _Bottom:
    """No value yet (an empty list's element; a fold's accumulator before its first step)."""


class _Unknown:
    """A value that is no one variable."""


BOTTOM, UNKNOWN, _MISSING = _Bottom(), _Unknown(), object()


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Pair:
    first: object
    second: object


@dataclass(frozen=True)
class ListOf:
    """A list: ``consed``, the join of the elements consed onto it, and ``seeds`` more, the
    elements of the literal it grew from (``[0.]`` in ``fold(step, ys, [0.])``), all at its back
    (``front`` False) or, after a reversal, all at its front; ``seeds`` None where that count is
    not known. A trajectory that drops its seed (``List.tl(List.rev(xs))``) keeps its name so."""

    consed: object
    seed: object = BOTTOM
    seeds: int | None = 0
    front: bool = False

    @property
    def element(self) -> object:
        return self.consed if self.seeds == 0 else join(self.consed, self.seed)


def join(a: object, b: object) -> object:
    if a is BOTTOM:
        return b
    if b is BOTTOM or a == b:
        return a
    if isinstance(a, Pair) and isinstance(b, Pair):
        return Pair(join(a.first, b.first), join(a.second, b.second))
    if isinstance(a, ListOf) and isinstance(b, ListOf):
        if a.seeds == 0 and b.seeds == 0:
            return ListOf(join(a.consed, b.consed))
        same = a.seeds == b.seeds and a.front == b.front
        return ListOf(join(a.consed, b.consed), join(a.seed, b.seed), a.seeds if same else None, a.front)
    return UNKNOWN


def _first(v: object) -> object:
    return v.first if isinstance(v, Pair) else (BOTTOM if v is BOTTOM else UNKNOWN)


def _second(v: object) -> object:
    return v.second if isinstance(v, Pair) else (BOTTOM if v is BOTTOM else UNKNOWN)


def _element(v: object) -> object:
    return v.element if isinstance(v, ListOf) else (BOTTOM if v is BOTTOM else UNKNOWN)


class _Walker:
    # A fold's accumulator reaches its fixpoint in as many rounds as the type is deep; this bounds
    # a pathological program, whose names are then merely fewer.
    ROUNDS = 16

    def __init__(self, program: ast.Program):
        self.funcs = {f.name: f for f in program.funcs}
        # A function's result for each value of its argument: a call is evaluated once, not once
        # per call site (nested calls would otherwise cost their inlined size).
        self.calls: dict[tuple[str, object], object] = {}

    def within(self, pattern: ast.Pattern, value: object, env: dict, body: ast.Expr) -> object:
        """``body``'s value with ``pattern`` bound to ``value`` in ``env``, which is restored after:
        a chain of lets costs its length, not its square."""
        saved: list[tuple[str, object]] = []
        self._bind(pattern, value, env, saved)
        try:
            return self.eval(body, env)
        finally:
            for name, old in reversed(saved):
                if old is _MISSING:
                    del env[name]
                else:
                    env[name] = old

    def _bind(self, pattern: ast.Pattern, value: object, env: dict, saved: list) -> None:
        if isinstance(pattern, ast.PVar):
            saved.append((pattern.name, env.get(pattern.name, _MISSING)))
            env[pattern.name] = value
        elif isinstance(pattern, ast.PTuple):
            *heads, last = pattern.items
            for item in heads:
                self._bind(item, _first(value), env, saved)
                value = _second(value)
            self._bind(last, value, env, saved)

    def tuple(self, values: list) -> object:
        out = values[-1]
        for v in reversed(values[:-1]):
            out = Pair(v, out)
        return out

    def call(self, name: str, args: list) -> object:
        """A user function's result, given its arguments' values (several are one tuple)."""
        f = self.funcs.get(name)
        if f is None:
            return UNKNOWN
        arg = args[0] if len(args) == 1 else self.tuple(args) if args else UNKNOWN
        key = (name, arg)
        if key not in self.calls:
            self.calls[key] = UNKNOWN      # a recursive call (refused earlier) has no name
            self.calls[key] = self.within(f.params, arg, {}, f.body)
        return self.calls[key]

    def eval(self, e: ast.Expr, env: dict) -> object:
        if isinstance(e, ast.Var):
            return env.get(e.name, UNKNOWN)
        if isinstance(e, ast.Tuple):
            return self.tuple([self.eval(item, env) for item in e.items])
        if isinstance(e, ast.ListLit):
            seed = BOTTOM
            for item in e.items:
                seed = join(seed, self.eval(item, env))
            return ListOf(BOTTOM, seed, len(e.items)) if e.items else ListOf(BOTTOM)
        if isinstance(e, ast.Let):
            return self.within(e.pattern, self.eval(e.value, env), env, e.body)
        if isinstance(e, ast.Assume):
            return self.within(ast.PVar(e.name_span, e.name), Name(e.name), env, e.body)
        if isinstance(e, ast.If):
            return join(self.eval(e.then, env), self.eval(e.else_, env))
        if isinstance(e, ast.Fold):
            return self.fold(e, env)
        if isinstance(e, ast.Call):
            return self.call_expr(e, env)
        return UNKNOWN     # constants, arithmetic, observe, resample

    def call_expr(self, e: ast.Call, env: dict) -> object:
        if e.kind == "user":
            return self.call(e.name, [self.eval(a, env) for a in e.args])
        if e.kind == "operator" and e.name == "cons" and len(e.args) == 2:
            head, tail = self.eval(e.args[0], env), self.eval(e.args[1], env)
            if not isinstance(tail, ListOf):
                return ListOf(join(head, _element(tail)), UNKNOWN, None)
            if tail.front and tail.seeds != 0:    # consed in front of the seeds: order lost
                return ListOf(join(head, tail.element), BOTTOM, 0)
            return ListOf(join(head, tail.consed), tail.seed, tail.seeds, tail.front)
        if e.kind == "library" and e.module == "List" and e.args:
            if e.name == "map" and len(e.args) == 2 and isinstance(e.args[0], ast.Var):
                return ListOf(self.call(e.args[0].name, [_element(self.eval(e.args[1], env))]))
            value = self.eval(e.args[0], env)
            if e.name == "hd":
                return _element(value)
            if not isinstance(value, ListOf):
                return UNKNOWN
            if e.name == "rev":
                return ListOf(value.consed, value.seed, value.seeds, not value.front)
            if e.name == "tl" and value.front and value.seeds:
                return ListOf(value.consed, value.seed, value.seeds - 1, True)
            if e.name == "tl":
                return value
        return UNKNOWN

    def fold(self, e: ast.Fold, env: dict) -> object:
        element = _element(self.eval(e.lst, env))
        acc, step = self.eval(e.init, env), BOTTOM
        for _ in range(self.ROUNDS):
            step = self.call(e.func, [element, acc])
            grown = join(acc, step)
            if grown == acc:
                break
            acc = grown
        return step


def returned(program: ast.Program) -> object:
    """What the main expression returns: a ``Name``, ``Pair``, ``ListOf`` or no name."""
    return _Walker(program).eval(program.main, {})


def names(value: object, result_type: str) -> list[str]:
    """The name of each scalar of ``result_type`` (descriptor order), "" where it is no variable."""
    out: list[str] = []

    def walk(pos: int, value: object) -> int:
        tag = result_type[pos]
        if tag in SCALARS:
            out.append(value.name if isinstance(value, Name) else "")
            return pos + 1
        if tag == "P":
            return walk(walk(pos + 1, _first(value)), _second(value))
        if tag == "L":
            walk(pos + 1, _element(value))
            return skip(result_type, pos)
        return pos + 1

    walk(0, value)
    return out
