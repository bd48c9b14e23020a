"""Siren source → ``ast.Program``, by recursive descent with conventional precedence (ARCHITECTURE.md §0.1).

    >>> from sirenc.frontend.parsing import parse
    >>> prog = parse("val inc = fun x -> x + 1 in inc(2) * 3", "m.si")
    >>> type(prog.main).__name__, prog.main.op
    ('BinOp', '*')

Loosest to tightest: `let`/`if`/`let <-` (their last expression extends as far right as
possible), then `=` `<` (non-associative), `::` (right), `+` `-` (left), `*` `/` (left),
unary `-`, application. An open construct (`let`, `if`) may also stand as the right
operand of an operator: `1 + let x = 2 in x * 3` is `1 + (let x = 2 in x * 3)`.

``grammar.lark`` states the same grammar declaratively; a differential test checks
that both agree. Where the original implementation reads a program differently,
``compat`` adds warnings to ``Program.warnings`` (``parsing.parse`` runs both).
"""

from __future__ import annotations

from sirenc.diagnostics import Note, SirenNameError, SirenSyntaxError, Span
from sirenc.frontend import ast
from sirenc.frontend.lexer import KEYWORDS, Token

_EXPR_START = frozenset(
    {"number", "string", "name", "true", "false", "nil", "(", "[", "let", "if", "fold",
     "observe", "resample", "-"}
)
_OPEN = ("let", "if")
# Binary operators by level, loosest first: comparisons (non-associative), `::` (groups to the
# right), `+` `-` and `*` `/` (to the left).
_LEVEL = {"=": 1, "<": 1, "::": 2, "+": 3, "-": 3, "*": 4, "/": 4}
_new = tuple.__new__

# Brackets -- parentheses, list brackets, argument lists -- nest at most this deep. Each
# level is a dozen recursive calls of the parser and of every later stage; no program
# needs more, and past it the error is located where the limit is exceeded.
MAX_BRACKET_DEPTH = 1000


def join(first: Span, last: Span) -> Span:
    """The span from the start of ``first`` to the end of ``last``."""
    return _new(Span, first[:3] + last[3:])


class Parser:
    """One pass over the token list; ``parse_expr`` is the entry point for any expression."""

    def __init__(self, tokens: list[Token], path: str) -> None:
        self.tokens = tokens
        self.i = 0
        # The token at `i` and its kind, kept up to date by `advance` (read for nearly every token).
        self.tok = tokens[0]
        self.kind = self.tok.kind
        self.path = path
        # ids of expressions written inside their own parentheses, e.g. `(a + b)`.
        self.parenthesized: set[int] = set()
        self.brackets = 0  # how many brackets are open

    def open_bracket(self, tok: Token) -> None:
        self.brackets += 1
        if self.brackets > MAX_BRACKET_DEPTH:
            raise SirenSyntaxError(f"brackets nest too deeply: more than {MAX_BRACKET_DEPTH} levels "
                                   "of parentheses, list brackets and argument lists (name the inner "
                                   "parts with 'let')", tok.span)

    # ---- token access ----------------------------------------------------------

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tok
        if self.kind != "eof":
            self.i = i = self.i + 1
            self.tok = following = self.tokens[i]
            self.kind = following.kind
        return tok

    def goto(self, i: int) -> None:
        self.i = i
        self.tok = tok = self.tokens[i]
        self.kind = tok.kind

    def expect(self, kind: str, message: str | None = None, note: Note | None = None,
               hint: str = "") -> Token:
        if self.kind != kind:
            raise self.missing(message or f"expected '{kind}'", note, hint)
        return self.advance()

    def missing(self, text: str, note: Note | None = None, hint: str = "") -> SirenSyntaxError:
        """The error for an expected token that is not there."""
        return SirenSyntaxError(f"{text} but found {self.tok.describe()}{hint}", self.tok.span,
                                [note] if note else [])

    def starts_expr(self) -> bool:
        return self.kind in _EXPR_START or (self.kind == "+" and self.peek().kind == "number")

    def unexpected_after_expr(self, expected: str, note: Note | None = None) -> SirenSyntaxError:
        tok = self.tok
        message = f"expected {expected} but found {tok.describe()}"
        if tok.kind == "(":
            message += " (only a function name can be called, as in f(x))"
        elif tok.kind == "val":
            message += " (function definitions must all come before the main expression)"
        elif self.starts_expr():
            message += " (two expressions in a row: is an operator or ',' missing?)"
        return SirenSyntaxError(message, tok.span, [note] if note else [])

    def split_arrow(self) -> None:
        """Read `x<-1` after an expression as `x < -1`: `<-` only follows `let NAME`."""
        tok = self.tok
        if tok.kind != "<-":
            return
        s = tok.span
        less = Token("<", "<", Span(s.file, s.line, s.col, s.line, s.col + 1), tok.pos)
        minus = Token("-", "-", Span(s.file, s.line, s.col + 1, s.line, s.col + 2), tok.pos + 1)
        self.tokens[self.i:self.i + 1] = [less, minus]
        self.tok, self.kind = less, "<"

    # ---- program ---------------------------------------------------------------

    def parse_program(self) -> ast.Program:
        first = self.tok
        funcs = []
        while self.kind == "val":
            funcs.append(self.parse_fundef())
        if self.kind == "eof":
            raise SirenSyntaxError("expected the main expression but found end of file",
                                   self.tok.span)
        main = self.parse_expr()
        if self.kind != "eof":
            raise self.unexpected_after_expr("the end of the program")
        return ast.Program(join(first.span, main.span), funcs, main, self.path)

    def parse_fundef(self) -> ast.FunDef:
        val, name = self.tok, self.tokens[self.i + 1]
        if name.kind == "name" and self.tokens[self.i + 2].kind == "=" and self.tokens[self.i + 3].kind == "fun":
            self.goto(self.i + 4)
        else:
            self.advance()
            name = self.parse_name("a function name after 'val'")
            if self.kind != "=":
                raise self.missing(f"expected '=' after 'val {name.text}'")
            self.advance()
            if self.kind != "fun":
                raise self.missing("expected 'fun'", None,
                                   f" (functions are defined as 'val {name.text} = fun x -> ... in')")
            self.advance()
        params = self.parse_params()
        self.expect("->", "expected '->' after the parameters")
        body = self.parse_expr()
        if self.kind != "in":
            raise self.missing(f"expected 'in' after the body of function '{name.text}'",
                               Note(f"the definition of '{name.text}' starts here", val.span))
        end = self.advance()
        return ast.FunDef(join(val.span, end.span), name.text, name.span, params, body)

    def parse_name(self, what: str) -> Token:
        if self.kind == "name":
            return self.advance()
        if self.kind in KEYWORDS:
            raise SirenSyntaxError(f"'{self.tok.text}' is a reserved word and cannot be used as a name",
                                   self.tok.span)
        raise SirenSyntaxError(f"expected {what} but found {self.tok.describe()}", self.tok.span)

    # ---- patterns --------------------------------------------------------------

    def parse_params(self) -> ast.Pattern:
        """A pattern whose top-level tuple may be written without parentheses: `a, (b, c)`."""
        tok = self.tok
        if self.kind == "name" and self.tokens[self.i + 1].kind != ",":  # one name, most of them
            self.advance()
            return ast.PVar(tok.span, tok.text)
        items = [self.parse_pattern()]
        while self.kind == ",":
            self.advance()
            items.append(self.parse_pattern())
        if len(items) == 1:
            return items[0]
        return ast.PTuple(join(items[0].span, items[-1].span), items)

    def parse_pattern(self) -> ast.Pattern:
        tok = self.tok
        if tok.kind == "name":
            self.advance()
            return ast.PVar(tok.span, tok.text)
        if tok.kind != "(":
            if tok.kind in KEYWORDS:
                self.parse_name("")  # raises the reserved-word error
            raise SirenSyntaxError(f"expected a pattern (a name, '()' or a tuple) but found "
                                   f"{tok.describe()}", tok.span)
        self.advance()
        if self.kind == ")":
            return ast.PUnit(join(tok.span, self.advance().span))
        self.open_bracket(tok)
        try:
            return self._tuple_pattern(tok)
        finally:
            self.brackets -= 1

    def _tuple_pattern(self, tok: Token) -> ast.Pattern:
        items = [self.parse_pattern()]
        while self.kind == ",":
            comma = self.advance()
            if self.kind == ")":
                raise SirenSyntaxError("trailing ',' in a pattern", comma.span)
            items.append(self.parse_pattern())
        close = self.expect(")", "expected ',' or ')' in this pattern",
                            Note("the parenthesis opened here", tok.span))
        if len(items) == 1:  # `(p)` spans its parentheses, as `(e)` does
            items[0].span = join(tok.span, close.span)
            return items[0]
        return ast.PTuple(join(tok.span, close.span), items)

    # ---- expressions -----------------------------------------------------------

    def parse_expr(self) -> ast.Expr:
        """A full expression, in a position delimited by a keyword or punctuation."""
        if self.kind in _OPEN:
            return self.parse_open()
        return self.parse_operators()

    def parse_operators(self) -> ast.Expr:
        """Unary expressions joined by binary operators, by operator precedence: the operands and
        the operators still waiting for their right operand are on stacks, so that neither a long
        chain nor the number of levels costs calls."""
        operands = [self.parse_unary()]
        waiting: list[tuple[int, Token]] = []  # (level, operator), tighter ones last
        comparison = None  # the comparison's operator, once there is one
        while True:
            kind = self.kind
            if kind == "<-":  # `x<-1` after an expression is `x < -1`: `<-` only follows `let NAME`
                self.split_arrow()
                kind = "<"
            level = _LEVEL.get(kind)
            if level is None:
                break
            # The operators waiting that bind tighter, or as tight and are not `::` (which groups
            # to the right), have their right operand now.
            while waiting and (waiting[-1][0] > level or (waiting[-1][0] == level and level != 2)):
                self.reduce(operands, waiting.pop()[1])
            if level == 1:
                if comparison is not None:
                    raise SirenSyntaxError(
                        f"'{self.tok.text}' cannot follow a comparison without parentheses "
                        "(comparison operators do not associate)", self.tok.span,
                        [Note(f"the first comparison '{comparison.text}' is here", comparison.span)])
                comparison = self.tok
            op = self.advance()
            waiting.append((level, op))
            if self.kind in _OPEN:  # `1 + let x = 2 in x * 3`
                operands.append(self.parse_open())
            elif self.kind in _EXPR_START or self.starts_expr():
                operands.append(self.parse_unary())
            else:
                raise SirenSyntaxError(f"'{op.text}' needs a right operand but found {self.tok.describe()}",
                                       self.tok.span, [Note(f"the '{op.text}' is here", op.span)])
        while waiting:
            self.reduce(operands, waiting.pop()[1])
        return operands[0]

    @staticmethod
    def reduce(operands: list[ast.Expr], op: Token) -> None:
        """Replaces the last two operands by ``op`` applied to them."""
        right = operands.pop()
        left = operands[-1]
        span = _new(Span, left.span[:3] + right.span[3:])
        if op.kind == "::":
            operands[-1] = ast.Call(span, "cons", [left, right], name_span=op.span)
        else:
            operands[-1] = ast.BinOp(span, op.kind, left, right)

    def parse_unary(self) -> ast.Expr:
        kind = self.kind
        if kind == "name" or kind == "number":
            # (Most operands: read here, with `advance` written out, as their token is not the end.)
            tok = self.tok
            self.i = i = self.i + 1
            self.tok = following = self.tokens[i]
            self.kind = following.kind
            if kind == "number":
                return ast.Const(tok.span, float(tok.text))
            if following.kind != "(" and following.kind != ".":
                return ast.Var(tok.span, tok.text)
            self.goto(i - 1)
            return self.parse_name_or_call()
        if kind == "+" and self.peek().kind == "number":  # `+1`, accepted as in the original
            tok = self.advance()
            number = self.advance()
            return ast.Const(join(tok.span, number.span), float(number.text))
        if kind != "-":
            return self.parse_atom()
        # `- - x`: each '-' negates what follows; a number right after one is a negative literal.
        signs = []
        while self.kind == "-":
            signs.append(self.advance())
        if self.kind == "number":
            number = self.advance()
            operand = ast.Const(join(signs.pop().span, number.span), -float(number.text))
        elif self.kind in _OPEN:
            operand = self.parse_open()
        elif self.starts_expr():
            operand = self.parse_unary()
        else:
            raise SirenSyntaxError(f"'-' needs an operand but found {self.tok.describe()}",
                                   self.tok.span)
        for sign in reversed(signs):
            operand = ast.Neg(join(sign.span, operand.span), operand)
        return operand

    def parse_open(self) -> ast.Expr:
        """`if`, `let p = e in e` or `let x <- d in e`: the body extends as far right as possible.

        A chain of `let p = e in` is read by a loop, its bodies built from the innermost out."""
        lets = []
        while True:
            if self.kind == "if":
                body = self.parse_if()
                break
            start, name = self.tok, self.tokens[self.i + 1]
            if name.kind == "name" and self.tokens[self.i + 2].kind == "=":  # `let x =`, most of them
                pattern = ast.PVar(name.span, name.text)
                self.goto(self.i + 3)
            elif self.assume_ahead():
                self.advance()
                annotation = self.advance() if self.kind in ("sample", "symbolic") else None
                body = self.parse_assume(start, annotation)
                break
            else:
                self.advance()
                pattern = self.parse_params()
                if self.kind == "<-":
                    raise SirenSyntaxError("a random variable is bound to a single name, as in "
                                           "'let x <- gaussian(0., 1.) in ...'", pattern.span)
                self.expect("=", "expected '=' after the pattern of 'let'")
            value = self.parse_expr()
            if self.kind != "in":
                raise self.missing("expected 'in' after the value of 'let'",
                                   Note("the 'let' is here", start.span))
            self.advance()
            lets.append((start, pattern, value))
            if self.kind not in _OPEN:
                body = self.parse_operators()
                break
        for start, pattern, value in reversed(lets):
            body = ast.Let(join(start.span, body.span), pattern, value, body)
        return body

    def assume_ahead(self) -> bool:
        """At `let`: is this `let [sample|symbolic] x <- ...` rather than `let p = ...`?"""
        after = self.peek().kind
        if after in ("sample", "symbolic"):
            return True
        if after != "name":
            return False
        second = self.peek(2).kind
        return second == "<-" or (second == "." and self.peek(3).kind == "name" and self.peek(4).kind == "<-")

    def parse_tail(self) -> ast.Expr:
        """The last expression of an `if` or `let <-`."""
        return self.parse_expr()

    def parse_if(self) -> ast.If:
        start = self.advance()
        cond = self.parse_expr()
        note = Note("the 'if' is here", start.span)
        self.expect("then", "expected 'then' after the condition of 'if'", note)
        then = self.parse_expr()
        self.expect("else", "expected 'else'", note, " (every 'if' needs an 'else' branch)")
        else_ = self.parse_tail()
        return ast.If(join(start.span, else_.span), cond, then, else_)

    def parse_assume(self, let: Token, annotation: Token | None) -> ast.Assume:
        name = self.parse_name("the name of a random variable")
        name_span = name.span
        text = name.text
        if self.kind == "." and self.peek().kind == "name":  # `let M.x <- ...`, rejected by resolve
            self.advance()
            field = self.advance()
            name_span = join(name.span, field.span)
            text = f"{name.text}.{field.text}"
        if self.kind == "=" and annotation is not None:
            raise SirenSyntaxError(f"'{annotation.text}' annotates a random variable: write "
                                   f"'let {annotation.text} {text} <- DISTRIBUTION in ...'", self.tok.span)
        self.expect("<-", "expected '<-' after the random variable's name")
        dist = self.parse_expr()
        self.expect("in", "expected 'in' after the distribution of 'let ... <-'",
                    Note("the 'let' is here", let.span))
        body = self.parse_tail()
        return ast.Assume(join(let.span, body.span), annotation.text if annotation else None, text,
                          name_span, dist, body, annotation.span if annotation else None)

    def parse_atom(self) -> ast.Expr:
        """An expression that is not a name, a number or a negation (``parse_unary`` reads those)."""
        tok = self.tok
        kind = tok.kind
        if kind == "string":
            self.advance()
            return ast.Const(tok.span, tok.text[1:-1])  # escapes are kept, as in the original
        if kind in ("true", "false"):
            self.advance()
            return ast.Const(tok.span, kind == "true")
        if kind == "nil":
            self.advance()
            return ast.ListLit(tok.span, [])
        if kind == "(":
            return self.parse_parenthesized()
        if kind == "[":
            self.advance()
            items = self.parse_sequence("]", tok, "list")
            close = self.advance()
            return ast.ListLit(join(tok.span, close.span), items)
        if kind == "fold":
            return self.parse_fold()
        if kind == "observe":
            self.advance()
            open_ = self.expect("(", "expected '(' after 'observe'")
            args = self.parse_sequence(")", open_, "argument list")
            close = self.advance()
            span = join(tok.span, close.span)
            if len(args) != 2:
                raise SirenSyntaxError("observe takes two arguments, a distribution and a value: "
                                       f"observe(gaussian(m, v), y), but is given {len(args)}", span)
            return ast.Observe(span, args[0], args[1])
        if kind == "resample":
            self.advance()
            open_ = self.expect("(", "expected '(' after 'resample'", hint=" (write 'resample()')")
            args = self.parse_sequence(")", open_, "argument list")
            close = self.advance()
            if args:
                raise SirenNameError("resample() takes no arguments", join(args[0].span, args[-1].span))
            return ast.Resample(join(tok.span, close.span))
        if kind in ("let", "if"):
            return self.parse_open()
        if kind == "val":
            raise SirenSyntaxError("function definitions ('val ... in') must all come before the "
                                   "main expression", tok.span)
        if kind in KEYWORDS:
            raise SirenSyntaxError(f"expected an expression but found the keyword '{tok.text}'",
                                   tok.span)
        raise SirenSyntaxError(f"expected an expression but found {tok.describe()}", tok.span)

    def parse_name_or_call(self) -> ast.Expr:
        name = self.advance()
        module = None
        callee = name
        if self.kind == ".":
            self.advance()
            field = self.parse_name(f"a function name after '{name.text}.'")
            module, callee = name.text, field
            name_span = join(name.span, field.span)
            if self.kind != "(":
                from sirenc.frontend.resolve import check_library_name

                full = f"{name.text}.{field.text}"
                check_library_name(name.text, field.text, name_span)
                raise SirenSyntaxError(f"'{full}' is a library function: it can only be "
                                       f"called, as in {full}(...)", name_span)
        else:
            name_span = name.span
            if self.kind != "(":
                return ast.Var(name.span, name.text)
        open_ = self.advance()
        args = self.parse_sequence(")", open_, "argument list")
        close = self.advance()
        return ast.Call(join(name.span, close.span), callee.text, args, module, name_span)

    def parse_parenthesized(self) -> ast.Expr:
        open_ = self.advance()
        if self.kind == ")":
            return ast.Const(join(open_.span, self.advance().span), None)
        items = self.parse_sequence(")", open_, "parenthesis")
        close = self.advance()
        if len(items) == 1:  # the span of `(e)` covers the parentheses, so that enclosing spans do
            items[0].span = join(open_.span, close.span)
            self.parenthesized.add(id(items[0]))
            return items[0]
        return ast.Tuple(join(open_.span, close.span), items)

    def parse_sequence(self, close: str, open_: Token, what: str) -> list[ast.Expr]:
        """Comma-separated expressions up to (not including) ``close``."""
        items: list[ast.Expr] = []
        if self.kind == close:
            return items
        self.open_bracket(open_)
        try:
            return self._sequence(close, open_, what, items)
        finally:
            self.brackets -= 1

    def _sequence(self, close: str, open_: Token, what: str, items: list[ast.Expr]) -> list[ast.Expr]:
        while True:
            if self.kind not in _EXPR_START and not self.starts_expr() and self.kind not in KEYWORDS:
                raise SirenSyntaxError(f"expected an expression but found {self.tok.describe()}",
                                       self.tok.span, [Note(f"in the {what} opened here", open_.span)])
            items.append(self.parse_expr())
            if self.kind == ",":
                comma = self.advance()
                if self.kind == close:
                    raise SirenSyntaxError(f"trailing ',' before '{close}'", comma.span)
                continue
            if self.kind == close:
                return items
            raise self.unexpected_after_expr(f"',' or '{close}'",
                                             Note(f"the {what} opened here", open_.span))

    def parse_fold(self) -> ast.Fold:
        fold = self.advance()
        open_ = self.expect("(", "expected '(' after 'fold'")
        self.open_bracket(open_)
        try:
            return self._fold(fold, open_)
        finally:
            self.brackets -= 1

    def _fold(self, fold: Token, open_: Token) -> ast.Fold:
        if self.kind != "name":
            raise SirenSyntaxError("the first argument of fold must be the name of a function, "
                                   f"but found {self.tok.describe()}", self.tok.span)
        first = self.advance()
        func, func_span = first.text, first.span
        if self.kind == "." and self.peek().kind == "name":  # `fold(List.hd, ...)`: a name error
            self.advance()
            field = self.advance()
            func, func_span = f"{first.text}.{field.text}", join(first.span, field.span)
        arity = "fold takes three arguments: fold(function, list, initial accumulator)"
        self.expect(",", arity)
        lst = self.parse_expr()
        self.expect(",", arity)
        init = self.parse_expr()
        if self.kind == ",":
            raise SirenSyntaxError(arity, self.tok.span)
        close = self.expect(")", "expected ')' to close 'fold('", Note("'fold(' is here", open_.span))
        return ast.Fold(join(fold.span, close.span), func, func_span, lst, init)
