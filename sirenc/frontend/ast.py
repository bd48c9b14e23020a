"""The Siren abstract syntax tree, with a source span on every node.

The parser builds it; name resolution and type inference annotate nothing in
place (they return side tables keyed by ``id(node)``), so one tree can be
checked at several instantiations of a function.

Sugar is removed by the parser: ``a :: l`` is ``Call("cons", [a, l])``, a list
literal ``[a, b]`` is ``ListLit``, a tuple ``(a, b, c)`` is ``Tuple`` (a
right-nested pair), ``-e`` is ``Neg``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sirenc import distributions
from sirenc.diagnostics import Span

# Built-in operator names: a call to one of these is a built-in call even if a
# user function of the same name exists (ARCHITECTURE.md §3.2).
OPERATORS = ("add", "sub", "mul", "div", "eq", "lt", "cons", "lst", "pair")
DISTRIBUTIONS = distributions.NAMES
LIBRARY = {"List": ("hd", "tl", "len", "range", "rev", "map"), "File": ("read",)}
BINOPS = ("+", "-", "*", "/", "::", "=", "<")
# For `Call.kind`, asked of every call by each stage.
_OPERATOR_SET = frozenset(OPERATORS)
_DISTRIBUTION_SET = frozenset(DISTRIBUTIONS)


@dataclass(eq=False)
class Node:
    span: Span


# ---- patterns ---------------------------------------------------------------

@dataclass(eq=False)
class PVar(Node):
    name: str  # "_" is an ordinary name


@dataclass(eq=False)
class PUnit(Node):
    pass


@dataclass(eq=False)
class PTuple(Node):
    items: list["Pattern"]  # len >= 2; matches right-nested pairs


Pattern = PVar | PUnit | PTuple


# ---- expressions ------------------------------------------------------------

@dataclass(eq=False)
class Const(Node):
    value: float | bool | str | None  # None is unit `()`


@dataclass(eq=False)
class Var(Node):
    name: str  # `nil` is parsed as ListLit([]), never as Var


@dataclass(eq=False)
class Tuple(Node):
    items: list["Expr"]  # len >= 2


@dataclass(eq=False)
class ListLit(Node):
    items: list["Expr"]  # [] and `nil` are ListLit([])


@dataclass(eq=False)
class Let(Node):
    pattern: Pattern
    value: "Expr"
    body: "Expr"


@dataclass(eq=False)
class BinOp(Node):
    op: str  # one of BINOPS except "::" (desugared to cons)
    left: "Expr"
    right: "Expr"


@dataclass(eq=False)
class Neg(Node):
    operand: "Expr"


@dataclass(eq=False)
class Call(Node):
    """`f(args)`: operator, distribution, library (`List.hd`) or user call.

    ``args`` is the written argument list: `f()` has none, `f(a, b)` two.
    For `List.map(f, l)` the first argument is a ``Var`` naming the function.
    """

    name: str
    args: list["Expr"]
    module: str | None = None  # "List" / "File" for library calls
    name_span: Span | None = None

    @property
    def kind(self) -> str:
        if self.module is not None:
            return "library"
        if self.name in _OPERATOR_SET:
            return "operator"
        if self.name in _DISTRIBUTION_SET:
            return "distribution"
        return "user"


@dataclass(eq=False)
class If(Node):
    cond: "Expr"
    then: "Expr"
    else_: "Expr"


@dataclass(eq=False)
class Fold(Node):
    func: str
    func_span: Span
    lst: "Expr"
    init: "Expr"


@dataclass(eq=False)
class Assume(Node):
    """`let [sample|symbolic] x <- dist in body`."""

    annotation: str | None  # None, "sample" or "symbolic"
    name: str
    name_span: Span
    dist: "Expr"
    body: "Expr"
    annotation_span: Span | None = None


@dataclass(eq=False)
class Observe(Node):
    dist: "Expr"
    value: "Expr"


@dataclass(eq=False)
class Resample(Node):
    pass


Expr = Const | Var | Tuple | ListLit | Let | BinOp | Neg | Call | If | Fold | Assume | Observe | Resample


@dataclass(eq=False)
class FunDef(Node):
    name: str
    name_span: Span
    params: Pattern
    body: Expr


@dataclass(eq=False)
class Program(Node):
    funcs: list[FunDef]
    main: Expr
    path: str
    warnings: list[tuple[str, Span]] = field(default_factory=list)
