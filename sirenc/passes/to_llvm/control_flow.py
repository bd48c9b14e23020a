"""Step 2 of `lower-smc-to-llvm`: structured control and suspension points -> a resumable graph of blocks.

After the rewrite patterns (step 1), the body of ``@siren_resume`` is one block
of `llvm` ops that is still structured: ``scf.if``/``scf.while`` nest blocks of
them, and the suspension points (``smc.resample``, ``smc.next_row``) cut it
where the particle returns to the runtime. This step moves the ops into blocks
with arguments: an ``scf.if`` branches to two blocks that meet in a merge block
whose arguments are its results; an ``scf.while`` becomes a header (its before
region), a body (its after region) and an exit block. At suspension point k the
function saves k as its pc and returns a status; the code after the point
starts a resume block. The entry block loads the pc and dispatches: k resumes
after point k, anything else (0) starts the program.

    ^entry:   %pc = llvm.load %frame : !llvm.ptr -> i32
              %at1 = llvm.icmp "eq" %pc, %c1 : i32
              llvm.cond_br %at1, ^resume1, ^not1
    ^start:   ...                                       // from the top
              llvm.store %c1, %frame : i32, !llvm.ptr   // smc.resample <{point = 1}>
              llvm.return %status : i32
    ^resume1: ...                                       // after point 1
    ^not1:    llvm.br ^start

`ControlFlowGraph` knows the shape; what a suspension point asks of the runtime
and which status it returns is the pass's (`resume_graph.ResumeGraph`
overrides `suspension`, and `suspensions` for a suspension of its own making), as
is the type a structured value gets in LLVM.

It is a helper of the pass, not a pass of its own: its input, the half-lowered
function between the two steps (`llvm` ops that take values still typed
``!smc.list``, nested in ``scf`` regions, cut by ``smc`` ops), is not IR that
verifies, so it cannot stand between two passes or be printed for a test.
"""

from __future__ import annotations

from xdsl.dialects import llvm, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from sirenc.ir import smc
from sirenc.passes import rewriting
from sirenc.passes.errors import LoweringError, where

# What this step lowers: the ops that make or cut control flow.
STRUCTURAL = (scf.IfOp, scf.WhileOp, scf.YieldOp, scf.ConditionOp, *smc.SUSPENSIONS)


class ControlFlowGraph:
    """Moves the lowered ops of `region`'s second block into blocks, replacing structured
    control and suspensions; `pc` points at the i32 where a suspension saves its point."""

    suspensions: tuple[type[Operation], ...] = smc.SUSPENSIONS

    def __init__(self, region: Region, pc: SSAValue):
        self.region = region
        self.pc = pc
        self.block = Block()  # where ops are added now
        self.resume_blocks: list[tuple[int, Block]] = []

    # -- what the lowering supplies

    def block_type(self, t: Attribute) -> Attribute:
        """The type in the graph of a structured value of type `t`."""
        return t

    def suspension(self, op: Operation) -> None:
        """Lowers the suspension point `op` at the end of the current block (see `suspend`)."""
        raise LoweringError(f"lower-smc-to-llvm: no lowering for {op.name}{where(op)}")

    # -- the graph

    def build(self) -> None:
        """The graph, then the dispatch on the saved pc in the (empty) entry block."""
        structured = self.region.detach_block(1)
        entry, start = self.region.block, self.block
        self.region.add_block(start)
        self.emit(list(structured.ops))
        structured.erase()
        self.block = entry
        pc = self.add(llvm.LoadOp(self.pc, i32)).dereferenced_value
        for point, target in self.resume_blocks:
            is_point = self.add(llvm.ICmpOp(pc, self.const_i(point, i32), IntegerAttr(0, i64))).res  # eq
            next_test = self.new_block()
            self.add(llvm.CondBrOp(is_point, target, [], next_test, []))
            self.block = next_test
        self.add(llvm.BrOp(start))

    def new_block(self, arg_types: list[Attribute] = ()) -> Block:
        block = Block(arg_types=[self.block_type(t) for t in arg_types])
        self.region.add_block(block)
        return block

    def add(self, op: Operation, at: Operation | None = None) -> Operation:
        if at is not None:
            op.location = at.location
        self.block.add_op(op)
        return op

    def const_i(self, value: int, typ: IntegerType, at: Operation | None = None) -> SSAValue:
        return self.add(llvm.ConstantOp(IntegerAttr(value, typ), typ), at).result

    def emit(self, ops: list[Operation]) -> list[SSAValue]:
        """Moves `ops` (a structured block's) to the graph; returns what its terminator passes on."""
        for op in ops:
            # Most ops are llvm ones, told apart by their name first (an isinstance of an xDSL op
            # class goes through ABCMeta: a microsecond each).
            if op.name.startswith("llvm."):
                op.detach()
                rewriting.append(op, self.block)
            elif isinstance(op, scf.YieldOp | scf.ConditionOp):
                passed = list(op.operands)
                rewriting.drop(op)
                return passed
            elif isinstance(op, scf.IfOp):
                self.if_(op)
            elif isinstance(op, scf.WhileOp):
                self.while_(op)
            elif isinstance(op, self.suspensions):
                self.suspension(op)
            else:
                raise LoweringError(f"lower-smc-to-llvm: no lowering for {op.name}{where(op)}")
        return []

    def if_(self, op: scf.IfOp) -> None:
        then_block, else_block = self.new_block(), self.new_block()
        merge = self.new_block([r.type for r in op.results])
        self.add(llvm.CondBrOp(op.cond, then_block, [], else_block, []), op)
        for target, region in ((then_block, op.true_region), (else_block, op.false_region)):
            self.block = target
            passed = self.emit(list(region.block.ops)) if region.blocks else []
            self.add(llvm.BrOp(merge, *passed), op)
        self.block = merge
        self.replace(op, list(merge.args))

    def while_(self, op: scf.WhileOp) -> None:
        before, after = op.before_region.block, op.after_region.block
        header = self.new_block([a.type for a in before.args])
        body = self.new_block([a.type for a in after.args])
        exit_block = self.new_block([r.type for r in op.results])
        self.add(llvm.BrOp(header, *op.arguments), op)
        for old, new in zip(before.args, header.args, strict=True):
            old.replace_all_uses_with(new)
        self.block = header
        cond, *passed = self.emit(list(before.ops))
        self.add(llvm.CondBrOp(cond, body, passed, exit_block, passed), op)
        for old, new in zip(after.args, body.args, strict=True):
            old.replace_all_uses_with(new)
        self.block = body
        self.add(llvm.BrOp(header, *self.emit(list(after.ops))), op)
        self.block = exit_block
        self.replace(op, list(exit_block.args))

    def replace(self, op: Operation, results: list[SSAValue]) -> None:
        rewriting.replace(op, results)

    # -- suspension points

    def suspend(self, point: int, status: int, at: Operation) -> None:
        """Saves `point` as the pc and returns `status`."""
        self.add(llvm.StoreOp(self.const_i(point, i32, at), self.pc), at)
        self.add(llvm.ReturnOp(self.const_i(status, i32, at)), at)

    def resume_at(self, point: int, block: Block) -> None:
        """Re-entry with pc `point` goes to `block`."""
        self.resume_blocks.append((point, block))


def point_of(op: Operation) -> int:
    """The number `spill-across-suspends` gave the suspension point `op`."""
    if op.point is None:
        raise LoweringError(f"lower-smc-to-llvm: {op.name} has no point (run spill-across-suspends first)")
    return op.point.value.data
