"""The frontend: Siren source → AST with spans → resolved names → typed function instances.

    >>> from sirenc.frontend import load_source
    >>> typed = load_source("let p <- beta(1., 1.) in let () = observe(bernoulli(p), true) in p")
    >>> str(typed.main.result)
    'float'

Every problem in the program raises a ``SirenError`` subclass that renders as
``file:line:col: error: ...`` with the source line and a caret. Warnings (for
instance where the original Siren reads the program differently) are collected in
``typed.program.warnings`` as ``(message, span)`` pairs.
"""

from __future__ import annotations

from sirenc.deep_stack import on_deep_stack, run_on_deep_stack
from sirenc.diagnostics import SirenSyntaxError, SirenUsageError
from sirenc.frontend.types import TypedProgram


def load_source(text: str, path: str = "<string>") -> TypedProgram:
    """Parse, resolve and type-check the program ``text`` (named ``path`` in diagnostics)."""
    # A long chain of `let`s is a deep tree: the compilation worker thread has room for it
    # (and changes the process' recursion limit safely when several threads compile).
    if not on_deep_stack():
        return run_on_deep_stack(load_source, text, path)
    from sirenc.frontend.infer import check
    from sirenc.frontend.parsing import parse
    from sirenc.frontend.resolve import resolve

    try:
        program = parse(text, path)
        resolve(program)
        return check(program)
    except RecursionError:
        raise SirenSyntaxError(f"{path}: the program is nested too deeply to compile") from None


def load(path: str) -> TypedProgram:
    """Like ``load_source`` on the contents of the file ``path``."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except OSError as e:
        raise SirenUsageError(f"cannot read '{path}': {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise SirenUsageError(f"cannot read '{path}': it is not UTF-8 text ({e.reason})") from None
    return load_source(text, path)


__all__ = ["load", "load_source", "TypedProgram"]
