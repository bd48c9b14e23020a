"""Source spans <-> xDSL op locations, so diagnostics after IR generation still
point at the user's code."""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Operation

from sirenc.diagnostics import Span


def loc_of(span: Span) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(span.file), IntAttr(span.line), IntAttr(span.col))


def span_of(op: Operation) -> Span | None:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return Span(loc.filename.data, loc.line.data, loc.column.data)
    return None
