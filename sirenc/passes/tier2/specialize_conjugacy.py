"""`specialize-conjugacy`: a symbolic program with a fixed shape becomes straight-line arithmetic (tier 2).

After `symbolic-values`, `@main` computes with `!siren.sym` words that the general runtime
(tier 1) interprets: expression and random-variable nodes in memory, conjugacy rules looked up
at run time. When the structure of that symbolic state is the same in every particle at every
resample point (the same variables, families and dependencies, differing only in numbers), all
of it can be decided while compiling. This pass runs the program's symbolic operations on the
staged engine (`staged_inference`), which emits the numbers' arithmetic as ordinary `siren`
ops on `f64`, and rebuilds `@main` without any symbolic type: a program the `pf` lowering
compiles, whose frame holds a few numbers per particle (a Gaussian's mean and variance, a
Beta's two parameters) and whose conjugate updates LLVM folds and schedules.

Loops: a `fold` whose accumulator holds symbolic values carries their numbers. The pass finds
the shapes the accumulator takes at the top of the loop by running the body on each shape
until no new one appears (the symbolic random walk's position is the constant 0 before the
first step and a Gaussian variable after: two shapes). Shapes that differ only in constants
are merged by making those constants run-time numbers. With one shape the accumulator is its
numbers; with several it also carries the shape's index and the body selects its code by it.
Past `_MAX_SHAPES` shapes, the program stays on tier 1 (loops.py; a shape is shapes.py's).

Paths: where the structure of a loop body's symbolic values depends on a run-time condition (slds's
`if s then x1 else x0` with `s` drawn: an `ite` on a run-time constant picks a branch, ARCHITECTURE.md §6.3;
an `if` on a concrete condition runs one branch, 7.5), the body forks on it (`_explore`, loops.py): it runs
once per value of the condition, each run the runtime's computation for the particles where the
condition has that value, and the code after the condition goes into the branches of a
`siren.if` on it. Each path ends in its own accumulator, whose shape is one of the loop's: paths
share nothing but the code before their conditions.

Trajectories (`x :: xs` of symbolic values, `SList`, trajectories.py): an element that is no longer the head is
kept as a record of two numbers in a concrete list, and the means are computed at the end by one
backward pass. The rest of `@main` after a loop with several shapes is compiled once per shape.

Where the runtime draws a variable because of the structure alone (a parent that is not
conjugate to its child, DS and BP's extra parents, DS's prune), the engine emits the same draw
at the same point. The program stays on tier 1, unchanged, when what the runtime does would depend on the
run in a way paths cannot follow; `Specialization.reason` says what and where: a symbolic value
chosen by a run-time condition outside a loop body, a run-time coefficient, a
trajectory whose elements are not chained Gaussians (`staged_inference` and below).
A failure of the pass itself also leaves the program on tier 1, reported as an internal error.

The result: each symbolic part of `@main`'s result is replaced by its per-particle posterior
mean (ARCHITECTURE.md §10.4), so the estimate (the weighted mean over particles) is tier 1's
(posterior.py).

This module is the pass and the specializer's core: its values (concrete ones mapped, symbolic
ones staged) and the walk over @main's blocks, which clones concrete ops and hands symbolic ones
to the handlers of its parts (symbolic_ops.py, trajectories.py, loops.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, f64, i1
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from sirenc import methods
from sirenc.ir import siren
from sirenc.ir.siren import is_sym
from sirenc.ir.locations import span_of
from sirenc.passes.tier2.loops import Loops
from sirenc.passes.tier2.posterior import Posterior
from sirenc.passes.tier2.staged_inference import Engine
from sirenc.passes.tier2.staged_symbolic import Emitter, Expr, IdMemo, K, Node, NotSpecialisable, Num, R
from sirenc.passes.tier2.staged_values import SList, SPair, SymDist, discard, has_sym
from sirenc.passes.tier2.symbolic_ops import SymbolicOps
from sirenc.passes.tier2.trajectories import PointRecordsRefused, Trajectories


def _touches_sym(op: Operation) -> bool:
    return any(has_sym(v.type) for inner in op.walk() for v in (*inner.operands, *inner.results)) or \
        any(has_sym(a.type) for inner in op.walk() for r in inner.regions for b in r.blocks for a in b.args)


@dataclass
class Specialization:
    """What `specialize` did: `applied`, or `reason` (and `location`, "file:line:col") why not;
    the static runtime plan (ARCHITECTURE.md §16.4) of a specialised program; its loops' shape counts."""

    applied: bool
    reason: str = ""
    location: str = ""
    runtime_plan: dict[str, str] = field(default_factory=dict)
    shapes: list[int] = field(default_factory=list)
    # @main returns (result, its posterior atoms): the frame's result type is "P" result atoms.
    posterior: bool = False


class _Specializer(SymbolicOps, Trajectories, Posterior, Loops):
    """Runs @main's ops on the staged engine, emitting the program without symbolic types into
    `emit`'s block: concrete ops are cloned, symbolic ones handled by `_HANDLERS` (whose methods
    its parts, the classes it derives from, define)."""

    def __init__(self, method: methods.Method):
        self.emit = Emitter()
        self.engine = Engine(method, self.emit)
        self.vmap: dict[SSAValue, SSAValue] = {}     # concrete values: old -> new
        self.staged: dict[SSAValue, object] = {}     # symbolic values: old -> staged
        self.stale = IdMemo()                        # variables a loop took over
        self.shapes: list[int] = []
        self.posterior = False                       # @main's result carries posterior atoms
        self.trajectory_atoms = False                # ... of a trajectory: records carry variances
        self.point_records = False                   # trajectories' records are their numbers alone
        self.ds_chain_broken = False                 # under ds, a record not of its next element's parent (trajectories)
        self.shadow: dict[SSAValue, SSAValue] = {}   # a trajectory's means -> their atoms
        self.collapsed = False                       # a trajectory became its means before the result

    # -- values

    def get(self, old: SSAValue):
        if old in self.staged:
            value = self.staged[old]
            self._check_fresh(value)
            return value
        return self.vmap[old]

    def _check_fresh(self, value) -> None:
        stack, seen = [value], set()
        while stack:
            v = stack.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            if isinstance(v, SPair):
                stack += [v.first, v.second]
            elif isinstance(v, SymDist):
                stack += v.params
            elif isinstance(v, SList):
                stack += v.items
            elif isinstance(v, R):
                if v.rv in self.stale:
                    raise NotSpecialisable("a symbolic value from before a loop is used after the loop starts")
                stack += v.rv.params
            elif isinstance(v, Node):
                stack += list(v.args)

    def _bind(self, old: SSAValue, value) -> None:
        if isinstance(value, SSAValue):
            self.vmap[old] = value
        else:
            self.staged[old] = value

    def expr(self, old: SSAValue) -> Expr:
        v = self.get(old)
        if isinstance(v, Expr):
            return v
        raise NotSpecialisable(f"internal: {old.type} where a symbolic number was expected")

    def as_expr(self, old: SSAValue) -> Expr:
        if is_sym(old.type):
            return self.expr(old)
        return K(self.known(self.vmap[old]))

    def known(self, new: SSAValue) -> Num:
        """A concrete number or bool as a staged number: a float when it is a literal."""
        owner = new.owner
        if isinstance(owner, siren.ConstOp) and new.type == f64:
            return float(owner.value.value.data)
        if isinstance(owner, siren.ConstOp) and new.type == i1:
            return float(owner.value.value.data != 0)
        if new.type == i1:
            return self.emit.add(siren.BoolToFloatOp(new)).result
        return new

    # -- blocks

    def run_block(self, block: Block, finish=None):
        """Runs `block`'s ops; its yielded value, staged, or `finish` of it (main's return), in
        which case a loop that ends in several shapes runs the rest of the block once per shape."""
        return self._run_ops(list(block.ops), 0, finish)

    def _run_ops(self, ops: list[Operation], start: int, finish):
        for k in range(start, len(ops)):
            op = ops[k]
            if isinstance(op, siren.YieldOp | func.ReturnOp):
                value = self.get(op.operands[0])
                return finish(value) if finish is not None else value
            self.emit.location = op.location
            split = self.run_op(op)
            if split is not None:
                if finish is None:
                    raise NotSpecialisable("a loop inside a loop or a branch ends in one of several shapes", op)
                return self._per_shape(ops, k + 1, op, split, finish)
        raise NotSpecialisable("internal: a block without a terminator")

    def run_op(self, op: Operation):
        if _touches_sym(op):
            handler = _HANDLERS.get(type(op))
            if handler is not None:
                return handler(self, op)
            raise NotSpecialisable(_UNSUPPORTED.get(type(op), f"tier 2 does not handle {op.name} on symbolic values"),
                                   op)
        new = op.clone(value_mapper=self.vmap)
        new.location = op.location
        added = self.emit.add(new)
        if added is not new:   # replayed (`_explore`): the op built on the first run
            self.vmap.update(zip(op.results, added.results))
        # A draw in concrete code (a `sample` variable with number parameters), however deep.
        for inner in op.walk():
            if isinstance(inner, siren.AssumeOp) and inner.var.data:
                self.engine.sampled_vars.add(inner.var.data)
        return None


def _attempt(main: func.FuncOp, method: str, point_records: bool) -> tuple[_Specializer, Block, SSAValue]:
    """`@main` run on the specializer into a new block: the specializer, the block and its result.
    Raises what the specializer raises, with the block discarded."""
    s = _Specializer(methods.get(method))
    s.point_records = point_records
    # A list operation on a trajectory takes its means, which the result may hold.
    result_type = main.function_type.outputs.data[0]
    list_ops = any(isinstance(op, siren.ListUnaryOp) and has_sym(op.operand.type) for op in main.walk())
    s.posterior = has_sym(result_type) or list_ops
    s.trajectory_atoms = list_ops or siren.holds(result_type, lambda t: isinstance(t, siren.ListType) and has_sym(t))
    body = Block()
    s.emit.block = body
    try:
        result = s.run_block(main.body.block, finish=s.result)
        s.emit.location = main.body.block.last_op.location
        s.emit.add(func.ReturnOp(result))
    except BaseException:
        discard(body)
        raise
    return s, body, result


def specialize(module: ModuleOp, method: str) -> Specialization:
    """Rewrites `@main` of a `symbolic-values` module into tier 2 when it qualifies; leaves it
    unchanged otherwise. Either way, says what it did."""
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    order = [op.var.data for op in main.walk() if isinstance(op, siren.AssumeOp) and op.var.data]
    try:
        # Trajectories are tried first with point records (trajectories.py), which hold one number a
        # step; an element that needs more starts the specializer again with affine records.
        try:
            s, body, result = _attempt(main, method, point_records=True)
        except PointRecordsRefused:
            s, body, result = _attempt(main, method, point_records=False)
    except NotSpecialisable as e:
        # Without an op of its own the reason arose computing the result's mean: the result's op.
        at = e.op if e.op is not None else main.body.block.last_op.operands[0].owner
        span = span_of(at) if isinstance(at, Operation) else None
        return Specialization(False, e.reason, str(span) if span is not None else "")
    except Exception as e:  # noqa: BLE001 - a bug here must not cost the user the general runtime
        return Specialization(False, f"internal error in specialize-conjugacy ({type(e).__name__}: {e}); "
                              "the general runtime runs the program")
    old = main.body.block
    old_type = main.function_type
    main.body.insert_block_before(body, old)
    main.body.detach_block(old)
    main.function_type = FunctionType.from_lists([], [result.type])
    try:
        main.verify()
    except Exception as e:  # noqa: BLE001 - as above: the program keeps its tier-1 form
        main.body.insert_block_before(old, body)
        main.body.detach_block(body)
        discard(body)
        main.function_type = old_type
        return Specialization(False, f"internal error in specialize-conjugacy (its output does not verify: "
                              f"{str(e).splitlines()[0]}); the general runtime runs the program")
    discard(old)
    plan = {}
    for var in dict.fromkeys(order):
        if var in s.engine.sampled_vars or var in s.engine.symbolic_vars:
            plan[var] = "sample" if var in s.engine.sampled_vars else "symbolic"
    return Specialization(True, runtime_plan=plan, shapes=s.shapes, posterior=s.posterior)


@dataclass(frozen=True)
class SpecializeConjugacy(ModulePass):
    name = "specialize-conjugacy"
    method: str = "ssi"
    # What the last `apply` did, which the driver reports (not an option).
    result: Specialization | None = field(default=None, init=False, compare=False, repr=False)

    def apply(self, ctx, op: ModuleOp) -> None:
        object.__setattr__(self, "result", specialize(op, self.method))   # a ModulePass is frozen


_HANDLERS = {
    siren.AddOp: _Specializer.arith, siren.SubOp: _Specializer.arith, siren.MulOp: _Specializer.arith,
    siren.DivOp: _Specializer.arith, siren.NegOp: _Specializer.arith, siren.LtOp: _Specializer.arith,
    siren.EqOp: _Specializer.arith, siren.BoolToFloatOp: _Specializer.arith,
    siren.FloatToBoolOp: _Specializer.arith,
    siren.ToSymOp: _Specializer.to_sym, siren.DistOp: _Specializer.dist, siren.AssumeOp: _Specializer.assume,
    siren.ObserveOp: _Specializer.observe, siren.ForceOp: _Specializer.force,
    siren.PairOp: _Specializer.pair, siren.FstOp: _Specializer.project, siren.SndOp: _Specializer.project,
    siren.IfOp: _Specializer.ite, siren.FoldOp: _Specializer.fold,
    siren.NilOp: _Specializer.nil, siren.ConsOp: _Specializer.cons, siren.HdOp: _Specializer.list_op,
    siren.TlOp: _Specializer.list_op, siren.RevOp: _Specializer.list_op, siren.LenOp: _Specializer.list_op,
}

_UNSUPPORTED = {
    siren.MapOp: "List.map over symbolic values",
}
