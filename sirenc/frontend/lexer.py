"""Siren tokens: the lexical structure of SPEC Section 2 with sirenc's reserved words (ARCHITECTURE.md §0.1).

    >>> [t.kind for t in tokenize("let x = -1.5 in x :: nil  # done", "m.si")]
    ['let', 'name', '=', '-', 'number', 'in', 'name', '::', 'nil', 'eof']

A token's ``kind`` is its own text for keywords and punctuation, and ``name``,
``number``, ``string`` or ``eof`` otherwise. A `-` is always its own token: the
parser decides whether it starts a negative literal.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sirenc.diagnostics import Span, SirenSyntaxError

KEYWORDS = frozenset(
    "val fun let in if then else fold observe resample sample symbolic true false nil".split()
)
PUNCTUATION = ("::", "->", "<-", "(", ")", "[", "]", ",", "=", "+", "-", "*", "/", "<", ".")

_NUMBER = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
# The blanks before a token on its line, and the token; or a stretch of blanks and line breaks, a
# comment, the end, or a character in error, which make no token. `findall` walks the whole text
# in C, and the loop below does little per token. Every character matches some alternative (the
# last one catches the rest), so the matches cover the text one after another and their lengths
# add up to positions. A block comment needs at least one character between `(*` and `*)`: `(**)`
# is an error.
_SCAN = re.compile(
    r"([ \t]*)("
    + _NUMBER
    + r"|[A-Za-z_][A-Za-z0-9_]*|"
    + "|".join(re.escape(p) + {"(": r"(?!\*)", "*": r"(?!\))"}.get(p, "") for p in PUNCTUATION)
    + r'|"(?:\\.|[^"\\\n])*"'
    r"|[\r\n][ \t\r\n]*|\#[^\n]*|\Z"
    r"|\(\*(?!\*\))[\s\S][\s\S]*?\*\)"
    r"|\(\*|\*\)|[\s\S])"
).findall
# A match's kind by its text: keywords and punctuation are their own kind; a `(*`, `*)` or `"`
# on its own is an error. Otherwise the kind follows from the first character: "" for what makes
# no token (blanks and line breaks, comments, the end), "error" for a character of no token.
_KIND = {**{word: word for word in KEYWORDS}, **{p: p for p in PUNCTUATION},
         "(*": "error", "*)": "error", '"': "error"}
_KIND_BY_START = {
    **dict.fromkeys("0123456789.", "number"),
    **dict.fromkeys("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_", "name"),
    '"': "string", "": "", "\r": "", "\n": "", "#": "", "(": "",
}

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


class Token(NamedTuple):
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
    append = tokens.append
    new = tuple.__new__  # Token(...) and Span(...) without their constructors' calls
    kind_of = _KIND.get
    kind_by_start = _KIND_BY_START.get
    # The current line and the offset where it starts (columns count characters from 1). Only
    # whitespace and comments span lines, and they make no token, so a token's span is on one line.
    line, line_start, pos = 1, 0, 0
    for blanks, word in _SCAN(text):
        start = pos + len(blanks)
        n = len(word)
        pos = start + n
        kind = kind_of(word)
        if kind is None:
            kind = kind_by_start(word[:1], "error")
            if not kind:
                newlines = word.count("\n")
                if newlines:
                    line += newlines
                    line_start = start + word.rindex("\n") + 1
                continue
        if kind == "error":
            _error(text, path, start, line, line_start)
        col = start - line_start + 1
        append(new(Token, (kind, word, new(Span, (path, line, col, line, col + n)), start)))
    # End of file is reported just after the last token, so that its caret lands on a real line.
    if tokens:
        last = tokens[-1].span
        eof = Span(path, last.end_line, last.end_col, last.end_line, last.end_col + 1)
    else:
        eof = Span(path, 1, 1, 1, 2)
    tokens.append(Token("eof", "", eof, len(text)))
    return tokens


def _error(text: str, path: str, pos: int, line: int, line_start: int) -> None:
    """Raises the error for the text at ``pos``, which starts no token, blank or comment."""

    def span_of(n: int) -> Span:
        chunk = text[pos:pos + n]
        newlines = chunk.count("\n")
        if newlines:
            return Span(path, line, pos - line_start + 1, line + newlines, n - chunk.rfind("\n"))
        return Span(path, line, pos - line_start + 1, line, pos - line_start + 1 + n)

    if text.startswith("(**)", pos):
        raise SirenSyntaxError("'(**)' is not a comment: a block comment needs at least one character "
                               "between '(*' and '*)'", span_of(4))
    if text.startswith("(*", pos):
        raise SirenSyntaxError("unterminated comment: this '(*' has no closing '*)'", span_of(2))
    if text.startswith("*)", pos):
        raise SirenSyntaxError("'*)' outside a comment (block comments do not nest)", span_of(2))
    ch = text[pos]
    if ch == '"':
        raise SirenSyntaxError("unterminated string: this '\"' has no closing '\"' on the same line",
                               span_of(1))
    hint = _HINTS.get(ch)
    message = f"unexpected character {ch!r}" + (f" ({hint})" if hint else "")
    raise SirenSyntaxError(message, span_of(1))
