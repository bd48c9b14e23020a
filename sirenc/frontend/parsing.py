"""A whole program's parse: sirenc's reading of it (``parser.Parser``) and the warnings where the
original Siren reads the same tokens otherwise (``compat``, whose reader is a ``Parser`` too).

    >>> parse("let x = 1 in x + 1 < 2", "m.si").warnings[0][0][:60]
    "the original Siren binds '=' and '<' tighter than arithmetic"
"""

from __future__ import annotations

from sirenc import diagnostics
from sirenc.frontend import ast
from sirenc.frontend.compat import original_reading_warnings
from sirenc.frontend.lexer import tokenize
from sirenc.frontend.parser import Parser


def parse(text: str, path: str) -> ast.Program:
    """Parse a whole program; syntax errors raise ``SirenSyntaxError``."""
    if text.startswith("\ufeff"):  # a byte-order mark: not part of the program
        text = text[1:]
    diagnostics.register_source(path, text)
    tokens = tokenize(text, path)
    parser = Parser(tokens, path)
    program = parser.parse_program()
    program.warnings.extend(original_reading_warnings(program, tokens, parser.parenthesized))
    return program
