"""Name resolution: every variable bound, every callee known, no recursion (ARCHITECTURE.md §5).

    >>> from sirenc.frontend.parsing import parse
    >>> resolve(parse("let x = 1 in y", "m.si"))
    Traceback (most recent call last):
    ...
    sirenc.diagnostics.SirenNameError: m.si:1:14: error: unbound variable 'y'
    ...

Functions see only their parameters and the functions defined before them; the main
expression sees all functions. Built-in operators, distributions and library
functions are checked for their number of arguments here, so later stages can rely
on it.
"""

from __future__ import annotations

import difflib

from sirenc import distributions
from sirenc.diagnostics import Note, SirenNameError, Span
from sirenc.frontend import ast

# Number of written arguments of each built-in, and what they mean (for messages).
BUILTIN_PARAMS: dict[str, tuple[str, ...]] = {
    "add": ("a", "b"), "sub": ("a", "b"), "mul": ("a", "b"), "div": ("a", "b"),
    "eq": ("a", "b"), "lt": ("a", "b"), "cons": ("head", "tail"), "pair": ("first", "second"),
    **{f.name: f.param_names for f in distributions.FAMILIES},
    "List.hd": ("list",), "List.tl": ("list",), "List.len": ("list",), "List.rev": ("list",),
    "List.range": ("from", "to"), "List.map": ("function", "list"), "File.read": ("file name",),
}


def resolve(program: ast.Program) -> None:
    """Check names in ``program``; the first problem raises ``SirenNameError``."""
    _Resolver(program).run()


def check_library_name(module: str, name: str, span: Span) -> None:
    """``module.name`` is a function of the library, or a SirenNameError says what is unknown (the
    parser asks too, for a library name that is not called)."""
    if module not in ast.LIBRARY:
        raise SirenNameError(f"unknown module '{module}' (the library has {' and '.join(ast.LIBRARY)})"
                             + _did_you_mean(module, ast.LIBRARY), span)
    if name not in ast.LIBRARY[module]:
        full, names = f"{module}.{name}", [f"{module}.{n}" for n in ast.LIBRARY[module]]
        raise SirenNameError(f"unknown library function '{full}'" + _did_you_mean(full, names), span)


def _did_you_mean(name: str, candidates) -> str:
    candidates = set(candidates)
    known = distributions.OTHER_NAMES.get(name.lower().replace("_", ""))
    if known in candidates:   # another language's name of a family: Siren's, and its parameters
        params = ", ".join(distributions.family(known).param_names)
        return f"; did you mean '{known}'? (Siren's name for it; it takes {params})"
    close = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def pattern_names(p: ast.Pattern) -> list[str]:
    if type(p) is ast.PVar:
        return [p.name]
    if isinstance(p, ast.PTuple):
        return [name for q in p.items for name in pattern_names(q)]
    return []


class _Resolver:
    def __init__(self, program: ast.Program) -> None:
        self.program = program
        self.all: dict[str, ast.FunDef] = {}
        for func in program.funcs:
            self.all.setdefault(func.name, func)
        self.defined: dict[str, ast.FunDef] = {}
        self.current: ast.FunDef | None = None

    def run(self) -> None:
        for func in self.program.funcs:
            if func.name in self.defined:
                raise SirenNameError(f"function '{func.name}' is defined twice", func.name_span,
                                     [Note("the first definition is here", self.defined[func.name].name_span)])
            if func.name in ast.OPERATORS or func.name in ast.DISTRIBUTIONS:
                self.program.warnings.append(
                    (f"function '{func.name}' has the name of a built-in: a call '{func.name}(...)' "
                     "always means the built-in", func.name_span))
            self.current = func
            self.expr(func.body, _Scope(pattern_names(func.params)))
            self.defined[func.name] = func
        self.current = None
        self.expr(self.program.main, _Scope([]))

    # ---- functions --------------------------------------------------------------

    def function(self, name: str, span: Span, scope: "_Scope", role: str) -> None:
        """Check that ``name`` is a user function that may be called from here."""
        current = self.current
        if current is not None and name == current.name:
            how = {"call": "calls itself", "fold": "uses itself in fold", "map": "uses itself in List.map"}
            raise SirenNameError(f"'{name}' {how[role]}: recursion is not supported", span)
        if name in self.defined:
            return
        if name in self.all:
            raise SirenNameError(
                f"function '{name}' is used before its definition (a function can only use the "
                "functions defined before it, so recursion is not possible)", span,
                [Note(f"'{name}' is defined here", self.all[name].name_span)])
        if name in scope:
            raise SirenNameError(f"'{name}' is a variable, not a function (functions are not values)",
                                 span)
        if "." in name:
            raise SirenNameError(f"the library function '{name}' cannot be passed here: give the name "
                                 "of a function defined with 'val'", span)
        if name in ast.OPERATORS or name in ast.DISTRIBUTIONS:
            raise SirenNameError(f"'{name}' is a built-in, not a function defined with 'val'; "
                                 "fold and List.map need a function defined with 'val'", span)
        candidates = list(self.defined) + (list(BUILTIN_PARAMS) if role == "call" else [])
        raise SirenNameError(f"unknown function '{name}'" + _did_you_mean(name, candidates), span)

    # ---- expressions ------------------------------------------------------------

    def expr(self, e: ast.Expr, scope: "_Scope") -> None:
        kind = type(e)
        if kind is ast.Var:
            if e.name not in scope.counts:
                self.variable(e, scope)
        elif kind is ast.Const:
            pass
        elif kind is ast.BinOp:
            self.expr(e.left, scope)
            self.expr(e.right, scope)
        elif kind is ast.Let:
            # A chain of lets (each one the body of the one before) by a loop; the names each
            # binds leave the scope afterwards, innermost first.
            bound = []
            while type(e) is ast.Let:
                self.expr(e.value, scope)
                names = pattern_names(e.pattern)
                scope.push(names)
                bound.append(names)
                e = e.body
            self.expr(e, scope)
            for names in reversed(bound):
                scope.pop(names)
        elif kind is ast.Assume:
            if "." in e.name:
                raise SirenNameError(f"a random variable needs a plain name, not the qualified name "
                                     f"'{e.name}'", e.name_span)
            self.expr(e.dist, scope)
            scope.push([e.name])
            self.expr(e.body, scope)
            scope.pop([e.name])
        elif kind is ast.Call:
            self.call(e, scope)
        elif kind is ast.Fold:
            self.function(e.func, e.func_span, scope, "fold")
            self.expr(e.lst, scope)
            self.expr(e.init, scope)
        else:
            for child in _CHILDREN[kind](e):
                self.expr(child, scope)

    def variable(self, e: ast.Var, scope: "_Scope") -> None:
        if e.name in scope:
            return
        if e.name in self.all:
            raise SirenNameError(f"'{e.name}' is a function, not a value: call it, as in {e.name}(...)",
                                 e.span)
        message = f"unbound variable '{e.name}'" + _did_you_mean(e.name, scope)
        if self.current is not None:
            message += f" (the body of '{self.current.name}' sees only its parameters)"
        raise SirenNameError(message, e.span)

    def call(self, e: ast.Call, scope: "_Scope") -> None:
        span = e.name_span or e.span
        if e.module is not None:
            full = f"{e.module}.{e.name}"
            check_library_name(e.module, e.name, span)
            self.arity(e, full)
            if full == "List.map":
                func = e.args[0]
                if not isinstance(func, ast.Var):
                    raise SirenNameError("the first argument of List.map must be the name of a function "
                                         "defined with 'val'", func.span)
                self.function(func.name, func.span, scope, "map")
                self.expr(e.args[1], scope)
                return
        elif e.kind == "user":
            self.function(e.name, span, scope, "call")
        else:
            self.arity(e, e.name)
        for arg in e.args:
            self.expr(arg, scope)

    def arity(self, e: ast.Call, full: str) -> None:
        params = BUILTIN_PARAMS.get(full)
        if params is None:  # lst: `lst()` or `lst(x)`
            if len(e.args) > 1:
                raise SirenNameError(f"'lst' takes at most 1 argument but is given {len(e.args)}", e.span)
            return
        if len(e.args) != len(params):
            plural = "argument" if len(params) == 1 else "arguments"
            raise SirenNameError(f"'{full}' takes {len(params)} {plural} ({', '.join(params)}) but is "
                                 f"given {len(e.args)}", e.span)


class _Scope:
    """The variables in scope, as a multiset: `push` and `pop` cost O(names), not O(scope)."""

    def __init__(self, names: list[str]) -> None:
        self.counts: dict[str, int] = {}
        self.push(names)

    def push(self, names: list[str]) -> None:
        for name in names:
            self.counts[name] = self.counts.get(name, 0) + 1

    def pop(self, names: list[str]) -> None:
        for name in names:
            self.counts[name] -= 1
            if not self.counts[name]:
                del self.counts[name]

    def __contains__(self, name: str) -> bool:
        return name in self.counts

    def __iter__(self):
        return iter(self.counts)


# The sub-expressions of the other kinds of expression, by the node's class.
_CHILDREN = {
    ast.Tuple: lambda e: e.items,
    ast.ListLit: lambda e: e.items,
    ast.Neg: lambda e: (e.operand,),
    ast.If: lambda e: (e.cond, e.then, e.else_),
    ast.Observe: lambda e: (e.dist, e.value),
    ast.Resample: lambda e: (),
}
