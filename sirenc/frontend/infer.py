"""Type inference for a resolved program (the algorithm behind ``types.check``).

Each expression's type is inferred bottom-up, unifying as it goes; builtin
signatures follow SPEC 7.4, 8 and 9. A call to a user function (directly, by
`fold` or by `List.map`) infers the callee's body again for this call site (see
``types``). Every error points at the sub-expression at fault.
"""

from __future__ import annotations

from typing import Callable

from sirenc import distributions
from sirenc.diagnostics import Note, SirenNameError, SirenTypeError, Span
from sirenc.frontend import ast
from sirenc.frontend.types import (
    Instance, TBool, TDist, TFloat, TList, TPair, TString, TUnit, TVar, Type, TypedProgram, _Mismatch,
    contains, is_ground, pack, pattern_text, prune, resolve, show, show_all, unify,
)

_ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_MAX_INSTANTIATION_NOTES = 3


class _Body:
    """The inference state of one function instance (or of the main expression)."""

    def __init__(self, func: ast.FunDef | None) -> None:
        self.func = func
        self.param: Type = TUnit
        self.result: Type = TUnit
        self.types: dict[int, Type] = {}
        self.targets: dict[int, _Body] = {}


class Inference:
    def __init__(self, program: ast.Program) -> None:
        self.program = program
        self.funcs = {f.name: f for f in program.funcs}
        self.instances: dict[str, list[_Body]] = {f.name: [] for f in program.funcs}
        # Checks that need fully resolved types: (node, type, check returning an error or None).
        self.deferred: list[tuple[ast.Node, Type, Callable[[Type], str | None]]] = []

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
        body.param = self.pattern(func.params, env, body)
        try:
            unify(body.param, arg)
        except _Mismatch:
            raise SirenTypeError(
                f"'{name}' takes {_describe_pattern(func.params)} but is called with {show(arg)}",
                site_span, [Note(f"the parameters of '{name}' are here", func.params.span)]) from None
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
            for body in self.instances[func.name]:
                param, result = resolve(body.param), resolve(body.result)
                targets = {k: names[id(v)] for k, v in body.targets.items()}
                key = (param, result, tuple(sorted(targets.items())))
                if key not in merged:
                    name = func.name if func.name != "main" and not merged else _unused(func.name, taken)
                    taken.add(name)
                    merged[key] = name
                    functions[name] = Instance(name, func, param, result,
                                               {k: resolve(t) for k, t in body.types.items()}, targets)
                names[id(body)] = merged[key]
            if not self.instances[func.name]:
                self.program.warnings.append(
                    (f"function '{func.name}' is never called, so it is not type-checked", func.name_span))
        main_instance = Instance("main", None, TUnit, resolve(main.result),
                                 {k: resolve(t) for k, t in main.types.items()},
                                 {k: names[id(v)] for k, v in main.targets.items()})
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
        t = getattr(self, "infer_" + type(e).__name__)(e, env, body)
        body.types[id(e)] = t
        return t

    def expect(self, node: ast.Expr, actual: Type, expected: Type, why: str = "",
               *notes: Note, arithmetic: bool = False) -> None:
        try:
            unify(actual, expected)
        except _Mismatch as mismatch:
            exp, act = show_all(expected, actual)
            if mismatch.args == ("infinite",):
                message = f"this would need a type that contains itself (expected {exp}, found {act})"
            else:
                message = f"expected {exp}, found {act}"
                if why:
                    message += f" ({why})"
                if arithmetic and prune(actual) == TBool:
                    message += "; sirenc does not convert booleans to numbers"
            raise SirenTypeError(message, node.span, list(notes)) from None

    def number(self, node: ast.Expr, env, body, why: str) -> None:
        self.expect(node, self.infer(node, env, body), TFloat, why, arithmetic=True)

    def infer_Const(self, e: ast.Const, env, body) -> Type:
        if e.value is None:
            return TUnit
        if isinstance(e.value, bool):
            return TBool
        if isinstance(e.value, str):
            return TString
        return TFloat

    def infer_Var(self, e: ast.Var, env, body) -> Type:
        if e.name not in env:  # resolve reports this first; kept for callers that skip it
            raise SirenNameError(f"unbound variable '{e.name}'", e.span)
        return env[e.name]

    def infer_Tuple(self, e: ast.Tuple, env, body) -> Type:
        return pack([self.infer(item, env, body) for item in e.items])

    def infer_ListLit(self, e: ast.ListLit, env, body) -> Type:
        elem = TVar()
        for item in e.items:
            t = self.infer(item, env, body)
            first = e.items[0]
            self.expect(item, t, elem, "the elements of a list must all have the same type",
                        *([Note(f"the first element has type {show(elem)}", first.span)]
                          if item is not first else []))
        return TList(elem)

    def infer_Let(self, e: ast.Let, env, body) -> Type:
        value = self.infer(e.value, env, body)
        inner: dict[str, Type] = {}
        matched = self.pattern(e.pattern, inner, body)
        try:
            unify(matched, value)
        except _Mismatch:
            raise SirenTypeError(
                f"this pattern expects {_describe_pattern(e.pattern)}, but the value has type {show(value)}",
                e.pattern.span,
                [Note("the value is here", e.value.span)]) from None
        return self.infer_with(inner, e.body, env, body)

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
        if op in ("+", "-", "*", "/", "<"):
            why = f"'{op}' works on numbers"
            self.number(left, env, body, why)
            self.number(right, env, body, why)
            return TBool if op == "<" else TFloat
        lt = self.infer(left, env, body)
        rt = self.infer(right, env, body)
        self.expect(right, rt, lt, "both sides of '=' must have the same type",
                    Note(f"the left side has type {show(lt)}", left.span))
        self.deferred.append((e, lt, _comparable))
        return TBool

    def infer_Neg(self, e: ast.Neg, env, body) -> Type:
        self.number(e.operand, env, body, "'-' negates a number")
        return TFloat

    def infer_If(self, e: ast.If, env, body) -> Type:
        cond = self.infer(e.cond, env, body)
        self.expect(e.cond, cond, TBool, "the condition of an 'if' must be a bool")
        then = self.infer(e.then, env, body)
        else_ = self.infer(e.else_, env, body)
        try:
            unify(then, else_)
        except _Mismatch:
            a, b = show_all(then, else_)
            raise SirenTypeError(f"the branches of this 'if' have different types: {a} and {b}", e.span,
                                 [Note(f"the 'then' branch has type {a}", e.then.span),
                                  Note(f"the 'else' branch has type {b}", e.else_.span)]) from None
        return then

    def infer_Fold(self, e: ast.Fold, env, body) -> Type:
        lst = self.infer(e.lst, env, body)
        elem = TVar()
        self.expect(e.lst, lst, TList(elem), "fold's second argument is the list to fold over")
        acc = self.infer(e.init, env, body)
        result = self.instantiate(e.func, TPair(elem, acc), e, e.func_span, body)
        try:
            unify(result, acc)
        except _Mismatch:
            r, a = show_all(result, acc)
            raise SirenTypeError(
                f"the function of fold must return the accumulator's type {a}, but '{e.func}' returns {r}",
                e.func_span, [Note(f"the initial accumulator has type {a}", e.init.span)]) from None
        return acc

    def infer_Assume(self, e: ast.Assume, env, body) -> Type:
        dist = self.distribution(e.dist, env, body, "'<-'")
        return self.infer_with({e.name: dist.value}, e.body, env, body)

    def infer_Observe(self, e: ast.Observe, env, body) -> Type:
        dist = self.distribution(e.dist, env, body, "observe")
        value = self.infer(e.value, env, body)
        try:
            unify(value, dist.value)
        except _Mismatch:
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
        self.expect(args[1], tail, TList(head), "the right side of '::' must be a list of the left side's type",
                    Note(f"the left side has type {show(head)}", args[0].span))
        return tail

    def distribution_call(self, e: ast.Call, env, body) -> Type:
        for arg, param in zip(e.args, distributions.family(e.name).params):
            t = self.infer(arg, env, body)
            if param.shape == distributions.POINT:  # delta: a float or a bool, the type of its draws
                self.deferred.append((arg, t, _delta_point))
                return TDist(e.name, t)
            expected = TList(TFloat) if param.shape == distributions.LIST else TFloat
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
