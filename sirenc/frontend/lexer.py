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
# By first character, longest first as in PUNCTUATION.
_PUNCTUATION_BY_START = {c: tuple(p for p in PUNCTUATION if p[0] == c) for c in {p[0] for p in PUNCTUATION}}

_NUMBER = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
_SPACE = re.compile(r"[ \t\r\n]+")
_DIGITS = frozenset("0123456789")
_new = object.__new__
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
# A number, name or punctuation token after blanks on the same line, in one match: most of a
# program (newlines, comments, strings and errors take the character-by-character path). The
# alternatives are tried in that path's order; `(*` and `*)` are left to it.
_COMMON = re.compile(
    r"[ \t]*(?:(?P<number>" + _NUMBER.pattern + r")|(?P<name>" + _NAME.pattern + r")|(?P<punct>"
    + "|".join(re.escape(p) + {"(": r"(?!\*)", "*": r"(?!\))"}.get(p, "") for p in PUNCTUATION) + "))"
).match

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


def tokenize(text: str, path: str) -> list[Token]:
    """Split ``text`` into tokens; comments and whitespace are dropped."""
    tokens: list[Token] = []
    # Where the lexer is: `pos`, on line `line`, which starts at `line_start` (columns count
    # characters from 1). Only whitespace and comments span lines, and they make no token, so a
    # token's span is on one line.
    pos, line, line_start, end = 0, 1, 0, len(text)

    def span_of(n: int) -> Span:
        chunk = text[pos:pos + n]
        newlines = chunk.count("\n")
        if newlines:
            return Span(path, line, pos - line_start + 1, line + newlines, n - chunk.rfind("\n"))
        return Span(path, line, pos - line_start + 1, line, pos - line_start + 1 + n)

    def add(kind: str, n: int) -> int:
        # Token(kind, text, Span(path, line, col, line, col + n), pos), each filled in directly:
        # the frozen dataclasses' constructors set one field at a time through
        # object.__setattr__, half the cost of lexing a big program.
        col = pos - line_start + 1
        span = _new(Span)
        span.__dict__.update(file=path, line=line, col=col, end_line=line, end_col=col + n)
        token = _new(Token)
        token.__dict__.update(kind=kind, text=text[pos:pos + n], span=span, pos=pos)
        tokens.append(token)
        return pos + n

    while pos < end:
        m = _COMMON(text, pos)
        if m is not None:
            kind = m.lastgroup
            pos = m.start(kind)
            stop = m.end()
            if kind != "number":
                word = text[pos:stop]
                kind = word if kind == "punct" or word in KEYWORDS else "name"
            pos = add(kind, stop - pos)
            continue
        ch = text[pos]
        if ch in " \t\r\n" or ch == "#" or text.startswith("(*", pos):
            if ch == "#":
                stop = text.find("\n", pos)
                stop = end if stop < 0 else stop
            elif ch == "(":
                if text.startswith("(**)", pos):
                    raise SirenSyntaxError(
                        "'(**)' is not a comment: a block comment needs at least one character "
                        "between '(*' and '*)'", span_of(4))
                stop = text.find("*)", pos + 3)
                if stop < 0:
                    raise SirenSyntaxError("unterminated comment: this '(*' has no closing '*)'",
                                           span_of(2))
                stop += 2
            else:
                stop = _SPACE.match(text, pos).end()
            last_newline = text.rfind("\n", pos, stop)
            if last_newline >= 0:
                line += text.count("\n", pos, stop)
                line_start = last_newline + 1
            pos = stop
        elif text.startswith("*)", pos):
            raise SirenSyntaxError("'*)' outside a comment (block comments do not nest)",
                                   span_of(2))
        elif ch in _DIGITS or (ch == "." and text[pos + 1:pos + 2] in _DIGITS):
            pos = add("number", _NUMBER.match(text, pos).end() - pos)
        elif ch in _NAME_START:
            n = _NAME.match(text, pos).end() - pos
            word = text[pos:pos + n]
            pos = add(word if word in KEYWORDS else "name", n)
        elif ch == '"':
            m = _STRING.match(text, pos)
            if m is None:
                raise SirenSyntaxError("unterminated string: this '\"' has no closing '\"' "
                                       "on the same line", span_of(1))
            pos = add("string", m.end() - pos)
        else:
            for punct in _PUNCTUATION_BY_START.get(ch, ()):
                if text.startswith(punct, pos):
                    pos = add(punct, len(punct))
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
