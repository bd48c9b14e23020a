"""A pattern applier that tries on each op only the patterns written for its type."""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern


class ByOpType(RewritePattern):
    """What ``GreedyRewritePatternApplier(patterns, dce_enabled=False)`` does when each pattern
    rewrites ops of one exact type only: the patterns of the op's type, in the given order,
    until one acts. The greedy applier tries every pattern on every op, which in a lowering
    of 40 patterns costs more than the rewrites of a big program (issue 11)."""

    def __init__(self, patterns: Iterable[tuple[type[Operation], RewritePattern]]):
        self.table: dict[type[Operation], list[RewritePattern]] = {}
        for op_type, pattern in patterns:
            self.table.setdefault(op_type, []).append(pattern)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for pattern in self.table.get(type(op), ()):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return
