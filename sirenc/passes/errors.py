"""The internal error of the lowerings: IR a lowering has no rule for, or IR that breaks its contract.

A ``LoweringError`` is a bug in sirenc (or in hand-written IR fed to
``sirenc-opt``), never in the user's program, which the frontend and the plan
analysis have already checked. Being a ``PassFailedException``, it is one line
from ``sirenc-opt --verify-diagnostics``; ``sirenc`` reports it, like any
exception that is not a ``SirenError``, as an internal compiler error (exit
status 3)::

    raise LoweringError(f"lower-smc-to-llvm: no lowering for {op.name}{where(op)}")
    # sirenc: internal compiler error: LoweringError: lower-smc-to-llvm: no lowering for math.exp (at m.si:3:7)
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from sirenc.ir.locations import span_of


class LoweringError(PassFailedException):
    """An op a lowering has no rule for, or IR that breaks its contract: a compiler bug."""


def where(op: Operation) -> str:
    """`` (at m.si:3:7)`` when `op` has a source location, else nothing: the end of a message."""
    span = span_of(op)
    return f" (at {span})" if span is not None else ""
