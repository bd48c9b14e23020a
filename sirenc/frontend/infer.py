"""Type inference for a resolved program (``check``), over the type terms of ``types``.

Each expression's type is inferred bottom-up, unifying as it goes; builtin
signatures follow ARCHITECTURE.md §7.4, 8 and 9. A call to a user function (directly, by
`fold` or by `List.map`) infers the callee's body again for this call site (see
``types``). Every error points at the sub-expression at fault.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Callable

from sirenc import distributions
from sirenc.diagnostics import Note, SirenNameError, SirenTypeError, Span
from sirenc.frontend import ast
from sirenc.frontend.coercions import converts, truth_message, try_join, widen_message
from sirenc.frontend.types import (
    Instance, Mismatch, TBase, TBool, TDist, TFloat, TList, TPair, TString, TUnit, TVar, Type, TypedProgram,
    contains, is_ground, pack, pattern_text, prune, resolve, show, show_all, unify,
)

_first = itemgetter(0)
_ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_ON_NUMBERS = {op: f"'{op}' works on numbers" for op in ("+", "-", "*", "/", "<")}
_MAX_INSTANTIATION_NOTES = 3


def check(program: ast.Program) -> TypedProgram:
    """Infer the types of ``program`` (already name-resolved); errors raise ``SirenTypeError``."""
    return Inference(program).run()


class _Body:
    """The inference state of one function instance (or of the main expression)."""

    def __init__(self, func: ast.FunDef | None) -> None:
        self.func = func
        self.param: Type = TUnit
        self.result: Type = TUnit
        self.types: dict[int, Type] = {}
        self.targets: dict[int, _Body] = {}
        # id(Expr) -> the type its value is converted to (a bool standing for a number, or the
        # reverse, as in the original Siren; see ``coercions``).
        self.coercions: dict[int, Type] = {}
        # id(Fold) -> (what its function returns, the accumulator's type) where they differ so.
        self.fold_results: dict[int, tuple[Type, Type]] = {}


class Inference:
    def __init__(self, program: ast.Program) -> None:
        self.program = program
        self.funcs = {f.name: f for f in program.funcs}
        self.instances: dict[str, list[_Body]] = {f.name: [] for f in program.funcs}
        # Checks that need fully resolved types: (node, type, check returning an error or None).
        self.deferred: list[tuple[ast.Node, Type, Callable[[Type], str | None]]] = []
        self.warned: set[tuple[str, Span]] = set()

    def run(self) -> TypedProgram:
        main = _Body(None)
        main.result = self.infer(self.program.main, {}, main)
        for node, t, rule in self.deferred:
            problem = rule(resolve(t))
            if problem:
                raise SirenTypeError(problem, node.span)
        result = resolve(main.result)
        for what, kind in (("a distribution", TDist), ("a string", None)):
            test = (lambda t: isinstance(t, TDist)) if kind else (lambda t: t == TString)
            if contains(result, test):
                tail = _result_expression(self.program.main)
                raise SirenTypeError(f"the program's result cannot be {what} (its type is {result})",
                                     tail.span)
        return self.finish(main)

    # ---- instances ------------------------------------------------------------

    def instantiate(self, name: str, arg: Type, site: ast.Node, site_span: Span, caller: _Body) -> Type:
        func = self.funcs[name]
        if is_ground(arg):
            for body in self.instances[name]:
                if is_ground(body.result) and resolve_copy(body.param) == resolve_copy(arg):
                    caller.targets[id(site)] = body
                    return body.result
        body = _Body(func)
        env: dict[str, Type] = {}
        params = func.params
        if type(params) is ast.PVar:  # a fresh variable: `unify` would only bind it
            body.param = env[params.name] = body.types[id(params)] = TVar()
            body.param.ref = prune(arg)
        else:
            body.param = self.pattern(params, env, body)
            try:
                unify(body.param, arg)
            except Mismatch:
                raise SirenTypeError(
                    f"'{name}' takes {_describe_pattern(params)} but is called with {show(arg)}",
                    site_span, [Note(f"the parameters of '{name}' are here", params.span)]) from None
        try:
            body.result = self.infer(func.body, env, body)
        except SirenTypeError as error:
            if len(error.notes) < _MAX_INSTANTIATION_NOTES:
                error.notes.append(Note(f"while checking '{name}' called here with {show(arg)}", site_span))
            raise
        self.instances[name].append(body)
        caller.targets[id(site)] = body
        return body.result

    def finish(self, main: _Body) -> TypedProgram:
        """Resolve all types and merge the instances of a function that have the same signature."""
        taken = {"main"} | set(self.funcs)
        names: dict[int, str] = {}
        functions: dict[str, Instance] = {}
        for func in self.program.funcs:
            merged: dict[tuple, str] = {}
            bodies = self.instances[func.name]
            several = len(bodies) > 1  # else there is nothing to merge (most functions)
            for body in bodies:
                param, result = resolve(body.param), resolve(body.result)
                targets = {k: names[id(v)] for k, v in body.targets.items()}
                # (Most instances convert nothing: no calls for those.)
                coercions = {k: resolve(t) for k, t in body.coercions.items()} if body.coercions else {}
                fold_results = ({k: (resolve(a), resolve(b)) for k, (a, b) in body.fold_results.items()}
                                if body.fold_results else {})
                key = (param, result, tuple(sorted(targets.items())),
                       tuple(sorted(coercions.items(), key=_first)) if coercions else (),
                       tuple(sorted(fold_results.items(), key=_first)) if fold_results else ()) if several else None
                name = merged.get(key) if several else None
                if name is None:
                    name = func.name if func.name != "main" and not merged else _unused(func.name, taken)
                    taken.add(name)
                    if several:
                        merged[key] = name
                    functions[name] = Instance(name, func, param, result,
                                               _resolved(body.types), targets,
                                               coercions, fold_results)
                names[id(body)] = name
            if not self.instances[func.name]:
                self.program.warnings.append(
                    (f"function '{func.name}' is never called, so it is not type-checked", func.name_span))
        main_instance = Instance("main", None, TUnit, resolve(main.result),
                                 _resolved(main.types),
                                 {k: names[id(v)] for k, v in main.targets.items()},
                                 {k: resolve(t) for k, t in main.coercions.items()},
                                 {k: (resolve(a), resolve(b)) for k, (a, b) in main.fold_results.items()})
        return TypedProgram(self.program, main_instance, functions)

    # ---- patterns -------------------------------------------------------------

    def pattern(self, p: ast.Pattern, env: dict[str, Type], body: _Body) -> Type:
        """The type a pattern matches; binds its variables in ``env``."""
        if isinstance(p, ast.PTuple):
            t = pack([self.pattern(q, env, body) for q in p.items])
        else:
            t = TVar()
            if isinstance(p, ast.PVar):
                env[p.name] = t
        body.types[id(p)] = t
        return t

    # ---- expressions ----------------------------------------------------------

    def infer(self, e: ast.Expr, env: dict[str, Type], body: _Body) -> Type:
        t = _RULES[type(e)](self, e, env, body)
        body.types[id(e)] = t
        return t

    def convert(self, node: ast.Expr, source: Type, target: Type, body: _Body, message: str) -> None:
        """Convert ``node``'s value to ``target`` (see ``coercions``), with a warning at the spot."""
        body.coercions[id(node)] = target
        self.warn(message, node.span)

    def warn(self, message: str, span: Span) -> None:
        warning = (message, span)
        if warning not in self.warned:  # a function checked at several call sites warns once
            self.warned.add(warning)
            self.program.warnings.append(warning)

    def expect(self, node: ast.Expr, actual: Type, expected: Type, why: str = "",
               *notes: Note) -> None:
        try:
            unify(actual, expected)
        except Mismatch as mismatch:
            exp, act = show_all(expected, actual)
            if mismatch.args == ("infinite",):
                message = f"this would need a type that contains itself (expected {exp}, found {act})"
            else:
                message = f"expected {exp}, found {act}"
                if why:
                    message += f" ({why})"
            raise SirenTypeError(message, node.span, list(notes)) from None

    def number(self, node: ast.Expr, env, body, why: str) -> None:
        kind = type(node)
        if kind is ast.Const and type(node.value) is float:  # (most operands: no rule to call)
            body.types[id(node)] = TFloat
            return
        if kind is ast.Var and node.name in env:
            t = body.types[id(node)] = env[node.name]
        else:
            t = self.infer(node, env, body)
        if t is TFloat or prune(t) is TFloat:  # (nothing to unify or convert)
            return
        if prune(t) == TBool:
            self.convert(node, t, TFloat, body, widen_message(node, t, TFloat, why))
        else:
            self.expect(node, t, TFloat, why)

    def infer_Const(self, e: ast.Const, env, body) -> Type:
        if e.value is None:
            return TUnit
        if isinstance(e.value, bool):
            return TBool
        if isinstance(e.value, str):
            # A string is File.read's file name: one the runtime could not open as written is
            # refused here, where it is (a NUL would end the name C sees, and another file be read).
            if not e.value:
                raise SirenTypeError("a file name cannot be empty", e.span)
            if "\0" in e.value:
                raise SirenTypeError("a file name cannot contain a NUL character", e.span)
            return TString
        return TFloat

    def infer_Var(self, e: ast.Var, env, body) -> Type:
        if e.name not in env:  # resolve reports this first; kept for callers that skip it
            raise SirenNameError(f"unbound variable '{e.name}'", e.span)
        return env[e.name]

    def infer_Tuple(self, e: ast.Tuple, env, body) -> Type:
        return pack([self.infer(item, env, body) for item in e.items])

    def infer_ListLit(self, e: ast.ListLit, env, body) -> Type:
        elem: Type = TVar()
        for item in e.items:
            t = self.infer(item, env, body)
            first = e.items[0]
            joined = self.join_or_expect(item, t, elem, "the elements of a list must all have the same type",
                                         lambda: [Note(f"the first element has type {show(elem)}", first.span)]
                                         if item is not first else [])
            elem = elem if joined is None else joined
        for item in e.items:
            t = body.types[id(item)]
            if converts(t, elem):
                self.convert(item, t, elem, body, widen_message(
                    item, t, elem, f"this list mixes bools and numbers, and this element has type {show(t)}"))
        return TList(elem)

    def join_or_expect(self, node: ast.Expr, actual: Type, expected: Type, why: str,
                       notes: Callable[[], list[Note]]) -> Type | None:
        """Unify ``actual`` with ``expected``; where only a bool meets a float, their join instead.

        ``notes`` makes the error's notes, only when there is one (the types are then as they were
        before the call: neither unify nor try_join keeps a binding when it fails)."""
        try:
            unify(actual, expected)
            return None
        except Mismatch:
            joined = try_join(expected, actual)
            if joined is None:
                self.expect(node, actual, expected, why, *notes())  # raises the plain type error
            return joined

    def infer_Let(self, e: ast.Let, env, body) -> Type:
        # A chain of lets (each one the body of the one before) by a loop: its type is the last
        # body's. Each let's bindings are undone afterwards, innermost first, as `infer_with` does.
        chain: list[tuple[ast.Let, dict[str, Type], dict[str, Type]]] = []
        try:
            while True:
                value = self.infer(e.value, env, body)
                pattern = e.pattern
                if type(pattern) is ast.PVar:  # a fresh variable: `unify` would only bind it
                    name = pattern.name
                    matched = body.types[id(pattern)] = TVar()
                    matched.ref = prune(value)
                    inner = {name: matched}
                    saved = {name: env[name]} if name in env else {}
                else:
                    inner = {}
                    matched = self.pattern(pattern, inner, body)
                    try:
                        unify(matched, value)
                    except Mismatch:
                        raise SirenTypeError(
                            f"this pattern expects {_describe_pattern(pattern)}, but the value has type "
                            f"{show(value)}", pattern.span, [Note("the value is here", e.value.span)]) from None
                    saved = {name: env[name] for name in inner if name in env}
                chain.append((e, inner, saved))
                env.update(inner)
                e = e.body
                if type(e) is not ast.Let:
                    break
            t = self.infer(e, env, body)
        finally:
            for _, inner, saved in reversed(chain):
                for name in inner:
                    del env[name]
                env.update(saved)
        for let, _, _ in reversed(chain[1:]):  # the first one's type is recorded by `infer`
            body.types[id(let)] = t
        return t

    def infer_with(self, bindings: dict[str, Type], e: ast.Expr, env: dict[str, Type], body: _Body) -> Type:
        """Infer ``e`` with ``bindings`` added to ``env`` (in place, undone afterwards)."""
        saved = {name: env[name] for name in bindings if name in env}
        env.update(bindings)
        try:
            return self.infer(e, env, body)
        finally:
            for name in bindings:
                del env[name]
            env.update(saved)

    def infer_BinOp(self, e: ast.BinOp, env, body) -> Type:
        return self.operator(e, e.op, e.left, e.right, env, body)

    def operator(self, e, op: str, left: ast.Expr, right: ast.Expr, env, body) -> Type:
        why = _ON_NUMBERS.get(op)
        if why is not None:
            self.number(left, env, body, why)
            self.number(right, env, body, why)
            return TBool if op == "<" else TFloat
        lt = self.infer(left, env, body)
        rt = self.infer(right, env, body)
        joined = self.join_or_expect(right, rt, lt, "both sides of '=' must have the same type",
                                     lambda: [Note(f"the left side has type {show(lt)}", left.span)])
        if joined is not None:
            a, b = show_all(lt, rt)
            for side, t in ((left, lt), (right, rt)):
                if converts(t, joined):
                    self.convert(side, t, joined, body, widen_message(
                        side, t, joined, f"'=' compares a {a} with a {b}"))
            lt = joined
        self.deferred.append((e, lt, _comparable))
        return TBool

    def infer_Neg(self, e: ast.Neg, env, body) -> Type:
        self.number(e.operand, env, body, "'-' negates a number")
        return TFloat

    def infer_If(self, e: ast.If, env, body) -> Type:
        cond = self.infer(e.cond, env, body)
        if prune(cond) == TFloat:
            self.convert(e.cond, cond, TBool, body, truth_message(
                e.cond, "the condition of an 'if' must be a bool, and this is a float", (e.then, e.else_)))
        else:
            self.expect(e.cond, cond, TBool, "the condition of an 'if' must be a bool")
        then = self.infer(e.then, env, body)
        else_ = self.infer(e.else_, env, body)
        try:
            unify(then, else_)
        except Mismatch:
            a, b = show_all(then, else_)
            joined = try_join(then, else_)
            if joined is None:
                raise SirenTypeError(f"the branches of this 'if' have different types: {a} and {b}", e.span,
                                     [Note(f"the 'then' branch has type {a}", e.then.span),
                                      Note(f"the 'else' branch has type {b}", e.else_.span)]) from None
            context = f"the branches of this 'if' have types {a} and {b}"
            for branch, t in ((e.then, then), (e.else_, else_)):
                if converts(t, joined):
                    self.convert(branch, t, joined, body, widen_message(branch, t, joined, context))
            return joined
        return then

    def infer_Fold(self, e: ast.Fold, env, body) -> Type:
        lst = self.infer(e.lst, env, body)
        elem = TVar()
        self.expect(e.lst, lst, TList(elem), "fold's second argument is the list to fold over")
        acc = self.infer(e.init, env, body)
        mark = self.mark()
        result = self.instantiate(e.func, TPair(elem, acc), e, e.func_span, body)
        try:
            unify(result, acc)
            return acc
        except Mismatch:
            pass
        r, a = show_all(result, acc)
        error = SirenTypeError(
            f"the function of fold must return the accumulator's type {a}, but '{e.func}' returns {r}",
            e.func_span, [Note(f"the initial accumulator has type {a}", e.init.span)])
        joined = try_join(acc, result)
        if joined is None:
            raise error
        context = f"'{e.func}' returns {r} for an accumulator that starts as {a}"
        if converts(acc, joined):
            # The accumulator starts as a bool where the function returns a number: check the
            # function again for the wider accumulator, forgetting the first check.
            self.rollback(mark)
            result = self.instantiate(e.func, TPair(elem, joined), e, e.func_span, body)
            again = try_join(joined, result)
            if again is None or converts(joined, again):
                raise error
            self.convert(e.init, acc, joined, body, widen_message(e.init, acc, joined, context))
        if converts(result, joined):
            body.fold_results[id(e)] = (result, joined)
            self.warn(widen_message(None, result, joined, context), e.func_span)
        return joined

    def mark(self) -> tuple:
        """The inference's progress, for ``rollback``."""
        return (len(self.program.warnings), len(self.deferred),
                {name: len(bodies) for name, bodies in self.instances.items()})

    def rollback(self, mark: tuple) -> None:
        """Forget the warnings, checks and function instances made since ``mark``."""
        warnings, deferred, instances = mark
        for warning in self.program.warnings[warnings:]:
            self.warned.discard(warning)
        del self.program.warnings[warnings:]
        del self.deferred[deferred:]
        for name, count in instances.items():
            del self.instances[name][count:]

    def infer_Assume(self, e: ast.Assume, env, body) -> Type:
        dist = self.distribution(e.dist, env, body, "'<-'")
        return self.infer_with({e.name: dist.value}, e.body, env, body)

    def infer_Observe(self, e: ast.Observe, env, body) -> Type:
        dist = self.distribution(e.dist, env, body, "observe")
        value = self.infer(e.value, env, body)
        if (prune(value), prune(dist.value)) == (TFloat, TBool):
            self.convert(e.value, value, TBool, body, truth_message(
                e.value, f"{dist.family} produces bools, and this observed value is a float"))
            return TUnit
        if (prune(value), prune(dist.value)) == (TBool, TFloat):
            self.convert(e.value, value, TFloat, body, widen_message(
                e.value, value, TFloat, f"{dist.family} produces floats, and this observed value is a bool"))
            return TUnit
        try:
            unify(value, dist.value)
        except Mismatch:
            v, d = show_all(value, dist.value)
            raise SirenTypeError(f"this value has type {v}, but {dist.family} produces values of type {d}",
                                 e.value.span, [Note("the distribution is here", e.dist.span)]) from None
        return TUnit

    def infer_Resample(self, e: ast.Resample, env, body) -> Type:
        return TUnit

    def distribution(self, node: ast.Expr, env, body, what: str) -> TDist:
        t = prune(self.infer(node, env, body))
        if isinstance(t, TDist):
            return t
        if isinstance(t, TVar):
            raise SirenTypeError(f"{what} needs a distribution whose family is known here, but the type "
                                 "of this expression is not known", node.span)
        raise SirenTypeError(f"{what} expects a distribution, found {show(t)}", node.span)

    # ---- calls ----------------------------------------------------------------

    def infer_Call(self, e: ast.Call, env, body) -> Type:
        kind = e.kind
        if kind == "library":
            return self.library(e, env, body)
        if kind == "distribution":
            return self.distribution_call(e, env, body)
        if kind == "operator":
            return self.operator_call(e, env, body)
        arg = pack([self.infer(a, env, body) for a in e.args])
        return self.instantiate(e.name, arg, e, e.span, body)

    def operator_call(self, e: ast.Call, env, body) -> Type:
        name, args = e.name, e.args
        if name in _ARITHMETIC:
            return self.operator(e, _ARITHMETIC[name], args[0], args[1], env, body)
        if name in ("eq", "lt"):
            return self.operator(e, "=" if name == "eq" else "<", args[0], args[1], env, body)
        if name == "pair":
            return TPair(self.infer(args[0], env, body), self.infer(args[1], env, body))
        if name == "lst":
            return TList(self.infer(args[0], env, body) if args else TVar())
        # cons, also written `x :: l`
        head = self.infer(args[0], env, body)
        tail = self.infer(args[1], env, body)
        joined = self.join_or_expect(args[1], tail, TList(head),
                                     "the right side of '::' must be a list of the left side's type",
                                     lambda: [Note(f"the left side has type {show(head)}", args[0].span)])
        if joined is None:
            return tail
        h, t = show_all(head, tail)
        for side, side_type, target in ((args[0], head, joined.elem), (args[1], tail, joined)):
            if converts(side_type, target):
                self.convert(side, side_type, target, body,
                             widen_message(side, side_type, target, f"'::' puts a {h} in front of a {t}"))
        return joined

    def distribution_call(self, e: ast.Call, env, body) -> Type:
        for arg, param in zip(e.args, distributions.family(e.name).params):
            t = self.infer(arg, env, body)
            if param.shape == distributions.POINT:  # delta: a float or a bool, the type of its draws
                self.deferred.append((arg, t, _delta_point))
                return TDist(e.name, t)
            expected = TList(TFloat) if param.shape == distributions.LIST else TFloat
            if expected == TFloat and prune(t) == TBool:
                self.convert(arg, t, TFloat, body, widen_message(arg, t, TFloat, f"the {param.name} of {e.name}"))
                continue
            self.expect(arg, t, expected, f"the {param.name} of {e.name}")
        return TDist(e.name)

    def library(self, e: ast.Call, env, body) -> Type:
        name = f"{e.module}.{e.name}"
        if name == "List.map":
            func, lst = e.args
            body.types[id(func)] = TUnit  # a function name is not a value; see `targets`
            elem = TVar()
            self.expect(lst, self.infer(lst, env, body), TList(elem), "List.map's second argument is a list")
            return TList(self.instantiate(func.name, elem, e, func.span, body))
        if name == "File.read":
            self.expect(e.args[0], self.infer(e.args[0], env, body), TString, "File.read takes a file name")
            return TList(TList(TFloat))
        if name == "List.range":
            for arg in e.args:
                self.number(arg, env, body, "the bounds of List.range")
            return TList(TFloat)
        elem = TVar()
        arg = e.args[0]
        self.expect(arg, self.infer(arg, env, body), TList(elem), f"{name} takes a list")
        return {"List.hd": elem, "List.len": TFloat}.get(name, TList(elem))


# The rule for each kind of expression, by the node's class (no node class has subclasses).
_RULES = {cls: getattr(Inference, "infer_" + cls.__name__)
          for cls in (ast.Const, ast.Var, ast.Tuple, ast.ListLit, ast.Let, ast.BinOp, ast.Neg, ast.Call,
                      ast.If, ast.Fold, ast.Assume, ast.Observe, ast.Resample)}


def _comparable(t: Type) -> str | None:
    if contains(t, lambda x: isinstance(x, TDist)):
        return f"'=' cannot compare distributions (the operands have type {t})"
    if contains(t, lambda x: x == TString):
        return f"'=' cannot compare strings (the operands have type {t})"
    return None


def _delta_point(t: Type) -> str | None:
    if t in (TFloat, TBool):
        return None
    return f"delta takes a float or a bool, found {t}"


def _describe_pattern(p: ast.Pattern) -> str:
    if isinstance(p, ast.PTuple):
        kind = "a pair" if len(p.items) == 2 else f"a tuple of {len(p.items)}"
        return f"{kind} {pattern_text(p)}"
    return "any value"


def _result_expression(e: ast.Expr) -> ast.Expr:
    while isinstance(e, (ast.Let, ast.Assume)):
        e = e.body
    return e


def _resolved(types: dict[int, Type]) -> dict[int, Type]:
    """``resolve`` of each type (most are base types already: no call for those)."""
    return {k: t if t.__class__ is TBase else resolve(t) for k, t in types.items()}


def resolve_copy(t: Type) -> Type:
    """Like ``resolve`` but without defaulting anything (for comparing ground types)."""
    t = prune(t)
    if isinstance(t, TPair):
        return TPair(resolve_copy(t.fst), resolve_copy(t.snd))
    if isinstance(t, TList):
        return TList(resolve_copy(t.elem))
    if isinstance(t, TDist):
        return TDist(t.family, resolve_copy(t.value))
    return t


def _unused(base: str, taken: set[str]) -> str:
    k = 1
    while f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"
