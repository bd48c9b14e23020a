"""Siren tokens: the lexical structure of SPEC Section 2 with sirenc's reserved words (SPEC 0.1).

    >>> [t.kind for t in tokenize("let x = -1.5 in x :: nil  # done", "m.si")]
    ['let', 'name', '=', '-', 'number', 'in', 'name', '::', 'nil', 'eof']

A token's ``kind`` is its own text for keywords and punctuation, and ``name``,
``number``, ``string`` or ``eof`` otherwise. A `-` is always its own token: the
parser decides whether it starts a negative literal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sirenc.diagnostics import Span, SirenSyntaxError

KEYWORDS = frozenset(
    "val fun let in if then else fold observe resample sample symbolic true false nil".split()
)
PUNCTUATION = ("::", "->", "<-", "(", ")", "[", "]", ",", "=", "+", "-", "*", "/", "<", ".")

_NUMBER = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
_SPACE = re.compile(r"[ \t\r\n]+")
_DIGITS = frozenset("0123456789")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")

# Characters that are not Siren, with what the writer probably meant.
_HINTS = {
    ";": "Siren has no ';' sequencing: write 'let () = e in ...'",
    ">": "Siren has no '>': swap the operands and use '<'",
    ":": "did you mean '::'?",
    "&": "Siren has no boolean operators: use 'if'",
    "|": "Siren has no boolean operators: use 'if'",
    "!": "Siren has no boolean operators: use 'if'",
    "{": "Siren has no braces: use '(' and ')'",
    "}": "Siren has no braces: use '(' and ')'",
    "'": "strings are written with double quotes",
}


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    span: Span
    pos: int  # offset of the first character in the source

    def describe(self) -> str:
        """How an error message names this token."""
        if self.kind == "eof":
            return "end of file"
        if self.kind == "name":
            return f"name '{self.text}'"
        if self.kind == "number":
            return f"number {self.text}"
        if self.kind == "string":
            return f"string {self.text}"
        return f"'{self.text}'"


class _Cursor:
    """Tracks line and column while the lexer moves through the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.col = 1

    def advance(self, n: int) -> None:
        chunk = self.text[self.pos:self.pos + n]
        newlines = chunk.count("\n")
        if newlines:
            self.line += newlines
            self.col = n - chunk.rfind("\n")
        else:
            self.col += n
        self.pos += n


def tokenize(text: str, path: str) -> list[Token]:
    """Split ``text`` into tokens; comments and whitespace are dropped."""
    cur = _Cursor(text)
    tokens: list[Token] = []

    def span_of(n: int) -> Span:
        chunk = text[cur.pos:cur.pos + n]
        newlines = chunk.count("\n")
        if newlines:
            return Span(path, cur.line, cur.col, cur.line + newlines, n - chunk.rfind("\n"))
        return Span(path, cur.line, cur.col, cur.line, cur.col + n)

    def add(kind: str, n: int) -> None:
        tokens.append(Token(kind, text[cur.pos:cur.pos + n], span_of(n), cur.pos))
        cur.advance(n)

    while cur.pos < len(text):
        ch = text[cur.pos]
        if ch in " \t\r\n":
            cur.advance(_SPACE.match(text, cur.pos).end() - cur.pos)
        elif ch == "#":
            end = text.find("\n", cur.pos)
            cur.advance((len(text) if end < 0 else end) - cur.pos)
        elif text.startswith("(*", cur.pos):
            if text.startswith("(**)", cur.pos):
                raise SirenSyntaxError(
                    "'(**)' is not a comment: a block comment needs at least one character "
                    "between '(*' and '*)'", span_of(4))
            end = text.find("*)", cur.pos + 3)
            if end < 0:
                raise SirenSyntaxError("unterminated comment: this '(*' has no closing '*)'",
                                       span_of(2))
            cur.advance(end + 2 - cur.pos)
        elif text.startswith("*)", cur.pos):
            raise SirenSyntaxError("'*)' outside a comment (block comments do not nest)",
                                   span_of(2))
        elif ch in _DIGITS or (ch == "." and text[cur.pos + 1:cur.pos + 2] in _DIGITS):
            add("number", _NUMBER.match(text, cur.pos).end() - cur.pos)
        elif ch in _NAME_START:
            n = _NAME.match(text, cur.pos).end() - cur.pos
            word = text[cur.pos:cur.pos + n]
            add(word if word in KEYWORDS else "name", n)
        elif ch == '"':
            m = _STRING.match(text, cur.pos)
            if m is None:
                raise SirenSyntaxError("unterminated string: this '\"' has no closing '\"' "
                                       "on the same line", span_of(1))
            add("string", m.end() - cur.pos)
        else:
            for punct in PUNCTUATION:
                if text.startswith(punct, cur.pos):
                    add(punct, len(punct))
                    break
            else:
                hint = _HINTS.get(ch)
                shown = repr(ch)
                message = f"unexpected character {shown}" + (f" ({hint})" if hint else "")
                raise SirenSyntaxError(message, span_of(1))
    # End of file is reported just after the last token, so that its caret lands on a real line.
    if tokens:
        last = tokens[-1].span
        eof = Span(path, last.end_line, last.end_col, last.end_line, last.end_col + 1)
    else:
        eof = Span(path, 1, 1, 1, 2)
    tokens.append(Token("eof", "", eof, len(text)))
    return tokens
