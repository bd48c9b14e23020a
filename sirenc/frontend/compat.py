"""Warnings where the original Siren implementation reads a program differently (ARCHITECTURE.md §0.1, 4).

    >>> from sirenc.frontend.parsing import parse
    >>> parse("let x = 1 in x + 1 < 2", "m.si").warnings[0][0][:60]
    "the original Siren binds '=' and '<' tighter than arithmetic"

sirenc parses with conventional precedence. To know what the original made of the
same tokens, ``OriginalReader`` parses them again (unless the tokens alone show that both
read them alike) with the precedence-climbing algorithm of ARCHITECTURE.md §4.5, which reproduces the
original on everything except the grouping of some same-operator chains. Both trees are
walked together; where they compute different things (regrouping `+`/`-` or `*`/`/` does
not count), a warning states both readings. Same-operator chains of `-` and `/` whose later operands are
compound, which the original may group to the right, get their own warning.
"""

from __future__ import annotations

from functools import cached_property
from operator import attrgetter

from sirenc.diagnostics import SirenError, Span
from sirenc.frontend import ast
from sirenc.frontend.lexer import Token
from sirenc.frontend.parser import Parser, join

# The original's operator levels, loosest first (ARCHITECTURE.md §4.5).
_LEVEL = {"+": 1, "-": 2, "*": 3, "/": 4, "::": 5, "=": 6, "<": 7}
_OPERAND_ONLY = 99
_OPEN = (ast.Let, ast.If, ast.Assume)
_ONE_TOKEN = (ast.Var, ast.Const)
_KIND_OF = attrgetter("kind")


class OriginalReader(Parser):
    """The parser of ARCHITECTURE.md §4.5: `expr(min)` where `min` is the loosest operator allowed on top."""

    def parse_expr(self) -> ast.Expr:
        return self.expr_at(0)

    def parse_tail(self) -> ast.Expr:
        return self.expr_at(_OPERAND_ONLY)

    def expr_at(self, level: int) -> ast.Expr:
        if self.kind == "let" and not self.assume_ahead():
            let = self.advance()
            pattern = self.parse_params()
            self.expect("=")
            value = self.expr_at(0)
            self.expect("in")
            body = self.expr_at(level)  # the body inherits the context
            return ast.Let(join(let.span, body.span), pattern, value, body)
        left = self.operand()
        while True:
            self.split_arrow()
            op = self.kind
            if op not in _LEVEL or _LEVEL[op] < level:
                return left
            op_tok = self.advance()
            right = self.expr_at(_LEVEL[op] + 1)
            span = join(left.span, right.span)
            if op == "::":
                left = ast.Call(span, "cons", [left, right], name_span=op_tok.span)
            else:
                left = ast.BinOp(span, op, left, right)

    def operand(self) -> ast.Expr:
        if self.kind == "if" or (self.kind == "let" and self.assume_ahead()):
            return self.parse_open()
        if self.kind == "let":
            return self.expr_at(_OPERAND_ONLY)
        if self.kind == "-" and self.peek().kind != "number":
            minus = self.advance()
            inner = self.operand()
            return ast.Neg(join(minus.span, inner.span), inner)
        return self.parse_unary()


def original_reading_warnings(program: ast.Program, tokens: list[Token],
                              parenthesized: set[int]) -> list[tuple[str, Span]]:
    """Warnings for ``program``, parsed from ``tokens``; ``parenthesized`` holds ids of `(e)` nodes."""
    source = _Source(tokens)
    warnings: list[tuple[str, Span]] = []
    # The kinds, each between line breaks of its own ("\nlet\n\nx\n..."): counting and finding
    # kinds and pairs of kinds in this text is done in C, where a Python loop over the tokens of a
    # big program would take a good part of the front end's time.
    kinds = "\n" + "\n\n".join(map(_KIND_OF, tokens)) + "\n"
    try:
        original = (None if _read_alike(kinds)
                    else OriginalReader(list(tokens), program.path).parse_program())
    except SirenError:  # the original rejects this program anyway
        original = None
    if original is not None and len(original.funcs) == len(program.funcs):
        mismatches: list[tuple[ast.Expr, ast.Expr]] = []
        for ours, theirs in zip(program.funcs, original.funcs):
            _diff(ours.body, theirs.body, mismatches)
        _diff(program.main, original.main, mismatches)
        for ours, theirs in mismatches:
            if source.has_top_level(ours.span, "::"):
                continue  # the original rejects `::` altogether, so there is no reading to compare
            warnings.append((_explain(ours, theirs, source, parenthesized), ours.span))
    if "\n-\n" in kinds or "\n/\n" in kinds:
        for func in program.funcs:
            _chains(func.body, source, parenthesized, warnings)
        _chains(program.main, source, parenthesized, warnings)
    return warnings


def _read_alike(kinds: str) -> bool:
    """Whether the original surely reads the tokens of these kinds (each between line breaks of
    its own) as sirenc does (up to the
    regrouping of `+`/`-` and `*`/`/` chains, which is no difference), so that a second reading
    would be wasted (most of the front end's time on a big program).

    The readings part only where the original's operator levels differ from sirenc's (`=`, `<`,
    `::`), where it ends an open construct before an operator (the last expression of an `if`
    or a `let ... <-` is an operand there; a `let` that is an operator's operand ends at the
    next operator of its level) and where `x<-1` is split; everywhere else both read the same
    grammar. Without comparisons, every `=` is the one of a `let` or a `val`.
    """
    if any(f"\n{kind}\n" in kinds for kind in ("if", "<-", "<", "::")):
        return False
    if kinds.count("\n=\n") != kinds.count("\nlet\n") + kinds.count("\nval\n"):
        return False
    return not any(f"\n{op}\n\nlet\n" in kinds for op in ("+", "-", "*", "/"))


# ---- comparing the two readings ----------------------------------------------


def _shape(node: ast.Expr) -> tuple[tuple, list[ast.Expr]]:
    """A head and children such that equal shapes mean equal computations.

    Chains of `+`/`-` (and of `*`/`/`) are flattened into signed terms, so that
    regrouping them, as the original does (`a + b - c` = `a + (b - c)`), is no difference.
    """
    shape = _SHAPES.get(type(node))
    return shape(node) if shape is not None else ((type(node).__name__,), [])


def _binop_shape(node: ast.BinOp) -> tuple[tuple, list[ast.Expr]]:
    if node.op in ("+", "-", "*", "/"):
        ops = ("+", "-") if node.op in ("+", "-") else ("*", "/")
        terms: list[tuple[int, ast.Expr]] = []
        _flatten(node, 1, ops, terms)
        return (ops, tuple(s for s, _ in terms)), [t for _, t in terms]
    return ("cmp", node.op), [node.left, node.right]


# By the node's class (no node class has subclasses); asked for every node of both readings.
_SHAPES = {
    ast.BinOp: _binop_shape,
    ast.Call: lambda node: (("call", node.module, node.name, len(node.args)), list(node.args)),
    ast.If: lambda node: (("if",), [node.cond, node.then, node.else_]),
    ast.Let: lambda node: (("let",), [node.value, node.body]),
    ast.Assume: lambda node: (("assume", node.name), [node.dist, node.body]),
    ast.Tuple: lambda node: (("Tuple", len(node.items)), list(node.items)),
    ast.ListLit: lambda node: (("ListLit", len(node.items)), list(node.items)),
    ast.Fold: lambda node: (("fold", node.func), [node.lst, node.init]),
    ast.Observe: lambda node: (("observe",), [node.dist, node.value]),
    ast.Neg: lambda node: (("neg",), [node.operand]),
    ast.Const: lambda node: (("const", node.value), []),
    ast.Var: lambda node: (("var", node.name), []),
}


def _flatten(node: ast.Expr, sign: int, ops: tuple[str, str], out: list) -> None:
    if isinstance(node, ast.BinOp) and node.op in ops:
        _flatten(node.left, sign, ops, out)
        _flatten(node.right, sign if node.op == ops[0] else -sign, ops, out)
    else:
        out.append((sign, node))


def _diff(ours: ast.Expr, theirs: ast.Expr, out: list) -> None:
    head, kids = _shape(ours)
    their_head, their_kids = _shape(theirs)
    if head == their_head and all(a.span == b.span for a, b in zip(kids, their_kids)):
        for a, b in zip(kids, their_kids):
            # Both readings share the tokens: a name or literal made of the same one is the same.
            if a.span is not b.span or type(a) is not type(b) or type(a) not in _ONE_TOKEN:
                _diff(a, b, out)
    else:
        out.append((ours, theirs))


def _explain(ours: ast.Expr, theirs: ast.Expr, source: "_Source", parens: set[int]) -> str:
    readings = f"`{source.explicit(theirs)}`, while sirenc reads `{source.explicit(ours)}`"
    advice = "; add parentheses to make the meaning explicit"
    cut = _cut_construct(ours, parens, source)
    cut_there = _find_open(theirs, cut.span) if cut is not None else None
    op = source.token_after(cut_there.span) if cut_there is not None else None
    if cut is not None and op is not None:
        what = {ast.If: "'if'", ast.Assume: "'let ... <-'", ast.Let: "'let'"}[type(cut)]
        lead = (f"in the original Siren, the {what} here ends before the '{op}'"
                if cut is not ours else f"in the original Siren, this {what} ends before the '{op}'")
        return f"{lead}: it reads {readings}{advice}"
    if isinstance(ours, ast.BinOp) and ours.op in ("=", "<"):
        return f"the original Siren binds '=' and '<' tighter than arithmetic and reads {readings}{advice}"
    return f"the original Siren reads this as {readings}{advice}"


def _cut_construct(node: ast.Expr, parens: set[int], source: "_Source") -> ast.Expr | None:
    """The open construct whose end the original places earlier than sirenc, if any."""
    if isinstance(node, (ast.If, ast.Assume)):
        return node
    while isinstance(node, ast.BinOp) or source.is_infix_cons(node):
        right = node.args[1] if isinstance(node, ast.Call) else node.right
        if id(right) in parens:
            return None
        if isinstance(right, _OPEN):
            return right
        node = right
    return None


def _find_open(node: ast.Expr, where: Span) -> ast.Expr | None:
    """The open construct of the original's reading that starts where ``where`` starts."""
    if isinstance(node, _OPEN) and (node.span.line, node.span.col) == (where.line, where.col):
        return node
    for kid in _shape(node)[1]:
        found = _find_open(kid, where)
        if found is not None:
            return found
    return None


# ---- same-operator chains -----------------------------------------------------


def _chains(root: ast.Expr, source: "_Source", parens: set[int], out: list) -> None:
    # Depth first, left to right, with a stack: a long chain of `-` is a deep tree.
    stack = [(root, False)]  # (node, whether it is the left operand of the same operator)
    while stack:
        node, left_of_same = stack.pop()
        kind = type(node)
        if kind is ast.BinOp:
            if node.op in ("-", "/") and not left_of_same:
                _chain(node, source, parens, out)
            left = node.left
            stack.append((node.right, False))
            stack.append((left, type(left) is ast.BinOp and left.op == node.op and id(left) not in parens))
        elif kind is ast.Neg:
            stack.append((node.operand, False))
        elif kind is not ast.Var and kind is not ast.Const:
            stack.extend((kid, False) for kid in reversed(_shape(node)[1]))


def _chain(node: ast.BinOp, source: "_Source", parens: set[int], out: list) -> None:
    """The warning for the chain of ``node``'s operator that ``node`` ends, if it needs one."""
    operands = []
    link = node
    while isinstance(link, ast.BinOp) and link.op == node.op and (link is node or id(link) not in parens):
        operands.append(link.right)
        link = link.left
    operands.append(link)
    operands.reverse()
    later = operands[1:]
    if len(operands) >= 3 and any(
            id(x) not in parens and (isinstance(x, (ast.BinOp, ast.Neg) + _OPEN) or source.is_infix_cons(x))
            for x in later):
        grouped = source.operand(operands[-1])
        for i, x in enumerate(reversed(operands[:-1])):
            grouped = f"{source.operand(x)} {node.op} {grouped if i == 0 else f'({grouped})'}"
        out.append((f"the original Siren may group this '{node.op}' chain to the right, as "
                    f"`{grouped}`, while sirenc groups it to the left, as `{source.explicit(node)}`; "
                    "add parentheses to make the meaning explicit", node.span))


# ---- showing a reading ----------------------------------------------------------


class _Source:
    """Writes sub-trees back as text, with every compound operand in parentheses."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens

    # Built on first use: most programs need no text back.
    @cached_property
    def starts(self) -> dict[tuple[int, int], int]:
        return {(t.span.line, t.span.col): i for i, t in enumerate(self.tokens)}

    @cached_property
    def ends(self) -> dict[tuple[int, int], int]:
        return {(t.span.end_line, t.span.end_col): i for i, t in enumerate(self.tokens)}

    def text(self, span: Span) -> str:
        first = self.starts.get((span.line, span.col))
        last = self.ends.get((span.end_line, span.end_col))
        if first is None or last is None:
            return "..."
        out = ""
        prev = None
        for tok in self.tokens[first:last + 1]:
            glue = (prev is None or prev.kind in ("(", "[", ".") or tok.kind in (")", "]", ",", ".")
                    or (tok.kind == "(" and prev.kind in ("name", "observe", "fold", "resample"))
                    or (prev.kind == "-" and tok.kind == "number" and prev.span.end_col == tok.span.col))
            out += ("" if glue else " ") + tok.text
            prev = tok
        return out

    def has_top_level(self, span: Span, kind: str) -> bool:
        """Whether a ``kind`` token occurs in ``span`` outside any brackets."""
        first = self.starts.get((span.line, span.col))
        last = self.ends.get((span.end_line, span.end_col))
        if first is None or last is None:
            return False
        depth = 0
        for tok in self.tokens[first:last + 1]:
            if tok.kind in ("(", "["):
                depth += 1
            elif tok.kind in (")", "]"):
                depth -= 1
            if depth == 0 and tok.kind == kind:
                return True
        return False

    def token_after(self, span: Span) -> str | None:
        last = self.ends.get((span.end_line, span.end_col))
        if last is None or last + 1 >= len(self.tokens) or self.tokens[last + 1].kind == "eof":
            return None
        return self.tokens[last + 1].text

    def is_infix_cons(self, node: ast.Expr) -> bool:
        return (isinstance(node, ast.Call) and node.name == "cons" and node.name_span is not None
                and self.text(node.name_span) == "::")

    def short(self, node: ast.Expr) -> str:
        text = self.text(node.span)
        if len(text) <= 40:
            return text
        if isinstance(node, ast.Call):
            return f"{node.module + '.' if node.module else ''}{node.name}(...)"
        if isinstance(node, ast.Tuple):
            return "(...)"
        if isinstance(node, ast.ListLit):
            return "[...]"
        if isinstance(node, (ast.Fold, ast.Observe)):
            return f"{type(node).__name__.lower()}(...)"
        return "..."

    def explicit(self, node: ast.Expr) -> str:
        if isinstance(node, ast.BinOp):
            return f"{self.operand(node.left)} {node.op} {self.operand(node.right)}"
        if self.is_infix_cons(node):
            return f"{self.operand(node.args[0])} :: {self.operand(node.args[1])}"
        if isinstance(node, ast.Neg):
            return f"-{self.operand(node.operand)}"
        if isinstance(node, ast.If):
            return (f"if {self.short(node.cond)} then {self.short(node.then)} "
                    f"else {self.operand(node.else_)}")
        if isinstance(node, ast.Let):
            return (f"let {self.text(node.pattern.span)} = {self.short(node.value)} "
                    f"in {self.operand(node.body)}")
        if isinstance(node, ast.Assume):
            annotation = f"{node.annotation} " if node.annotation else ""
            return f"let {annotation}{node.name} <- {self.short(node.dist)} in {self.operand(node.body)}"
        return self.short(node)

    def operand(self, node: ast.Expr) -> str:
        compound = isinstance(node, (ast.BinOp, ast.Neg) + _OPEN) or self.is_infix_cons(node)
        if isinstance(node, ast.Neg) and not isinstance(node.operand, (ast.BinOp,) + _OPEN):
            compound = False
        return f"({self.explicit(node)})" if compound else self.explicit(node)
