"""`store-result-views`: a trajectory returned reversed is stored as it was built, and read reversed.

A model that keeps its trajectory conses one cell a step and returns ``List.rev(xs)`` or
``List.tl(List.rev(xs))``: nine of the twelve benchmark models do. Reversing at the end builds N new
lists of T cells, each read through the particles' shared ancestry, and keeps all N T of them live:
it cost the walk returning its trajectory 8-9 ns a particle-step more than keeping it did, at N = 10^4
and 10^5 (benchmarks/trajectory.py, `returned` against `kept`, before this pass). So where the particle's
result holds ``List.tl^k(List.rev(x))`` of floats or bools, and nothing else uses the reversal, the
result word holds ``x`` and the frame's result type says so: ``V k a`` in place of ``L a``
(sirenrt.h's grammar, ``sirenrt_model.frame_result_type``). The runtime reads such a word as the
list it stands for (the reverse of ``x``'s first ``len(x) - k`` cells) wherever it reads a result:
the estimate, each particle's values, the posterior atoms; the collector keeps ``x``.

The ``List.tl`` applications stay, applied to ``x`` instead of its reverse: ``tl`` of the reverse fails
exactly when ``tl`` of the list does (both are empty together), so a result that asks the tail of an
empty list fails where it did, with the same error.

Not for tier 2's results with posterior atoms (their frame result type is the other form), and not
for the JAX back end, which does not read this pass's descriptor.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from sirenc.ir import smc
from sirenc.ir.smc.types import kind_at, type_end

MAX_DROP = 9          # k is one digit in the descriptor
VIEW_ELEMENTS = "fb"  # the runtime reads views of scalar elements


def _view(value: SSAValue, block) -> tuple[smc.ReverseOp, list[smc.TailOp]] | None:
    """The reversal and the tails (outermost first) that make `value`, when nothing else uses them."""
    tails: list[smc.TailOp] = []
    while isinstance(value.owner, smc.TailOp) and value.has_one_use() and value.owner.parent is block:
        tails.append(value.owner)
        value = value.owner.list
    rev = value.owner
    if not isinstance(rev, smc.ReverseOp) or not value.has_one_use() or rev.parent is not block:
        return None
    if len(tails) > MAX_DROP or rev.result.type.element.data not in VIEW_ELEMENTS:
        return None
    return rev, tails


def _views_descriptor(descriptor: str, finish: smc.FinishOp, block) -> str:
    """`descriptor` with each list of the result that is a view rewritten to ``V k a`` (and the IR
    rewritten to store the view's list)."""
    scalar = 0

    def walk(pos: int) -> tuple[str, int]:
        nonlocal scalar
        kind = kind_at(descriptor, pos)
        if kind == "P":
            first, mid = walk(pos + 1)
            second, end = walk(mid)
            return "P" + first + second, end
        end = type_end(descriptor, pos)
        text = descriptor[pos:end]
        if kind == "L":
            found = _view(finish.operands[scalar], block)
            if found is not None:
                rev, tails = found
                if tails:
                    tails[-1].operands[0] = rev.list
                finish.operands[scalar] = rev.list
                rev.detach()
                rev.erase()
                text = f"V{len(tails)}{descriptor[pos + 1:end]}"
        scalar += kind != "u"
        return text, end

    return walk(0)[0]


def store_result_views(module: ModuleOp) -> None:
    for particle in (op for op in module.ops if isinstance(op, smc.ParticleOp)):
        block = particle.body.block
        descriptor = particle.model.result.data
        views = _views_descriptor(descriptor, block.last_op, block)
        if views != descriptor:
            particle.model = particle.model.with_result(views)


@dataclass(frozen=True)
class StoreResultViews(ModulePass):
    name = "store-result-views"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        store_result_views(op)
