"""Rewriting helpers for the lowerings, cheaper per op than xDSL's general ones: a big program
is hundreds of thousands of ops, each rewritten once per lowering (issue 11)."""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.ir import Operation, SSAValue, SSAValues
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint


class ByOpType(RewritePattern):
    """What ``GreedyRewritePatternApplier(patterns, dce_enabled=False)`` does when each pattern
    rewrites ops of one exact type only: the patterns of the op's type, in the given order,
    until one acts. The greedy applier tries every pattern on every op, which in a lowering
    of 40 patterns costs more than the rewrites of a big program."""

    def __init__(self, patterns: Iterable[tuple[type[Operation], RewritePattern]]):
        self.table: dict[type[Operation], list[RewritePattern]] = {}
        for op_type, pattern in patterns:
            self.table.setdefault(op_type, []).append(pattern)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for pattern in self.table.get(type(op), ()):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def replace_result(rewriter: PatternRewriter, op: Operation, value: SSAValue,
                   new: Operation | None = None) -> None:
    """``rewriter.replace(op, [new] or [], [value])`` for an op of one result: the same IR (the
    uses in the same order, the name hint carried over) and the same notices to the rewriter's
    listeners, with each use moved in place rather than through the operand list's views.
    `op` must have a parent block."""
    rewriter.has_done_action = True
    if new is not None:
        rewriter.insert(new, InsertPoint.before(op))
    old = op.results[0]
    rewriter.handle_operation_replacement(op, (value,))
    users = []
    use = old.first_use
    while use is not None:
        following = use._next_use
        user, index = use._operation, use._index
        operands = user._operands
        user._operands = SSAValues((*operands[:index], value, *operands[index + 1:]))
        value.add_use(use)
        users.append(user)
        use = following
    old.first_use = None
    if value.name_hint is None:
        value.name_hint = old.name_hint
    for user in users:
        rewriter.handle_operation_modification(user)
    # rewriter.erase(op), less marking the unused result erased (an object per op).
    rewriter.handle_operation_removal(op)
    op.parent.detach_op(op)
    op.drop_all_references()
