"""User-facing errors and warnings, rendered against the user's source.

Every error a user can cause is a ``SirenError`` carrying a ``Span``; the CLI
prints ``render()`` and exits with status 1, so no Python traceback ever
reaches the user::

    model.si:3:9: error: unbound variable 'y'
      let z = y + 1 in
              ^
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import NamedTuple


class Span(NamedTuple):
    """A source range; lines and columns are 1-based, ``end_col`` exclusive.

    A named tuple rather than a frozen dataclass: the front end makes one for nearly every token
    and syntax-tree node of a program, and ``tuple.__new__(Span, fields)`` makes one several times
    faster than a dataclass' constructor.
    """

    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


# Source lines by file name, so a diagnostic can show the offending line
# without every stage carrying the text around.  Each thread's own registrations come first:
# two threads compiling programs of the same name ("<string>") each quote their own.  A thread
# that runs a stage for another (the driver's deep-stack workers) shares that thread's
# (`thread_sources`, `share_sources`).
_SOURCES: dict[str, list[str]] = {}
_THREAD = threading.local()


def thread_sources() -> dict[str, list[str]]:
    """This thread's registrations."""
    mine = getattr(_THREAD, "sources", None)
    if mine is None:
        mine = _THREAD.sources = {}
    return mine


def share_sources(sources: dict[str, list[str]]) -> None:
    """Makes `sources` (another thread's `thread_sources()`) this thread's registrations too."""
    _THREAD.sources = sources


def register_source(file: str, text: str) -> None:
    lines = source_lines(text)
    _SOURCES[file] = lines
    thread_sources()[file] = lines


def _lines_of(file: str) -> list[str] | None:
    lines = thread_sources().get(file)
    return lines if lines is not None else _SOURCES.get(file)


def source_lines(text: str) -> list[str]:
    """The lines of ``text`` as the lexer counts them: only '\\n' ends a line (not the form
    feeds, vertical tabs, U+2028 ... that ``str.splitlines`` also breaks at); a '\\r'
    before the '\\n' is not part of the line."""
    lines = text.split("\n")
    if "\r" not in text:
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def source_line(span: Span) -> str | None:
    lines = _lines_of(span.file)
    if lines is None:
        return None
    if 1 <= span.line <= len(lines):
        return lines[span.line - 1]
    return None


def source_text(span: Span) -> str | None:
    """The source text ``span`` covers when it lies on one line, else None."""
    line = source_line(span)
    if line is None or span.end_line != span.line or span.end_col <= span.col:
        return None
    return line[span.col - 1:span.end_col - 1]


# Characters that would move the terminal's cursor (tabs, form feeds, line separators, ...):
# shown as one space each, so that the caret below the line stays under its column.
_SHOWN_AS_SPACE = {c: " " for c in [*range(0x20), 0x7F, 0x85, 0x2028, 0x2029]}


def render_at(kind: str, message: str, span: Span | None, line: str | None = None) -> str:
    """The diagnostic, with the span's source line (`line`, else the registered one) and a caret."""
    if span is None:
        return f"{kind}: {message}"
    out = f"{span}: {kind}: {message}"
    if line is None:
        line = source_line(span)
    if line is not None:
        width = 1
        if span.end_line == span.line and span.end_col > span.col:
            width = span.end_col - span.col
        caret = " " * (span.col - 1) + "^" + "~" * (width - 1)
        out += f"\n{line.translate(_SHOWN_AS_SPACE)}\n{caret}"
    return out


@dataclass
class Note:
    message: str
    span: Span | None = None


@dataclass
class SirenError(Exception):
    """Base of every error caused by the user's program, data or arguments."""

    message: str
    span: Span | None = None
    notes: list[Note] = field(default_factory=list)
    # The span's source line when the error was made, if it was registered then: a later program
    # of the same name ("<string>") must not change what this one quotes.
    _line: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        Exception.__init__(self, self.message)
        self._line = source_line(self.span) if self.span is not None else None

    def __str__(self) -> str:
        return self.render()

    def render(self) -> str:
        parts = [render_at("error", self.message, self.span, self._line)]
        for note in self.notes:
            parts.append(render_at("note", note.message, note.span))
        return "\n".join(parts)


class SirenSyntaxError(SirenError):
    pass


class SirenNameError(SirenError):
    pass


class SirenTypeError(SirenError):
    pass


class SirenPlanError(SirenError):
    pass


class SirenDataError(SirenError):
    pass


class SirenRuntimeError(SirenError):
    pass


class SirenUsageError(SirenError):
    """Bad use of the API or command line (not of the language)."""
