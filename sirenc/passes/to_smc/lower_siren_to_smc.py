"""`lower-siren-to-smc`: the inlined `siren` program -> one particle's `smc.particle`.

Every Siren value becomes a tuple of machine scalars chosen by its static type
(``flatten``, scalars.py): a float is one ``f64``, a pair the scalars of both components, a
list one ``!smc.list`` handle, a distribution its parameters, unit and strings
nothing. So no value is boxed under the plain particle filter. Folds and maps
become ``scf.while`` loops over list handles, `resample()` becomes
``smc.resample``, draws and observations ``smc.sample``/``smc.observe``.

The lowering is one rewrite pattern per `siren` op (patterns.py, built with builder.py),
applied once in post-order (an op's regions before the op, so a region's body is already
lowered when its owner moves it into a loop or a branch). A pattern replaces its op's result
by ``builtin.unrealized_conversion_cast`` of the scalars, which later patterns unpack; only
the body arguments of folds and maps are unpacked before their owner is lowered. Before the walk, each list literal of constants becomes one
``smc.const_list`` (constant_lists.py). When the walk is done no `siren` op and no cast may be
left: anything else is an internal error naming the op. This module is the walk, and what it
decides for the whole program: whether it streams, its variables, its ``smc.particle``.

Under ``-m ssi`` (after `symbolic-values`) a ``!siren.sym`` value is one ``!smc.sym``
word and a ``!siren.symdist`` its parameters as symbolic words; arithmetic on them
becomes ``smc.sym_binop``/``smc.sym_neg``, an ``if`` on a symbolic condition runs both
(pure) branches and combines each scalar of their results with ``smc.sym_ite``,
``siren.force`` becomes ``smc.sym_value`` and ``siren.to_sym`` ``smc.sym_const``. Every
``let x <- d`` becomes ``smc.assume`` (its parameters as symbolic words; `var` numbers
the program variables in order of first appearance, the particle's ``smc.vars``), and
an observation of a distribution with symbolic parameters ``smc.sym_observe`` (one with
concrete parameters keeps ``smc.observe``).

A program whose main expression folds over `File.read` data (possibly through
`List.map`) at its top level is *streamable*: that fold pulls rows with
``smc.next_row``, which waits for the caller's next row (ARCHITECTURE.md, Streaming and the C ABI).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, UnrealizedConversionCastOp
from xdsl.ir import Operation, Region
from xdsl.passes import ModulePass

from sirenc.ir import siren, smc
from sirenc.passes.errors import LoweringError, where
from sirenc.passes.rewriting import drop, ops_of
from sirenc.passes.to_smc.builder import Facts
from sirenc.passes.to_smc.constant_lists import fold_constant_lists
from sirenc.passes.to_smc.patterns import PATTERNS
from sirenc.passes.to_smc.scalars import descriptor


def streamed_fold(main: func.FuncOp) -> tuple[siren.FoldOp | None, str]:
    """The top-level fold over `File.read` data, or why there is none."""
    candidates = []
    # The block's list of ops walked directly: BlockOps' iterator costs a call per op.
    op = main.body.block.first_op
    while op is not None:
        if type(op) is siren.FoldOp:
            source = op.list.owner
            if isinstance(source, siren.MapOp):
                source = source.list.owner
            if isinstance(source, siren.FileReadOp):
                candidates.append(op)
        op = op._next_op
    if not candidates:
        return None, "the main expression does not fold over File.read data at its top level"
    if len(candidates) > 1:
        return None, "the main expression folds over File.read data more than once"
    fold = candidates[0]
    mapped = fold.list.owner if isinstance(fold.list.owner, siren.MapOp) else None
    read = (mapped.list if mapped else fold.list).owner
    if len(list(read.result.uses)) != 1 or (mapped and len(list(mapped.result.uses)) != 1):
        return None, "the data read by File.read is used outside the fold over it"
    path = read.path.owner
    for other in ops_of(main):
        if type(other) is siren.FileReadOp and other is not read and _same_path(other.path.owner, path):
            return None, "the streamed data file is also read elsewhere"
    return fold, ""


def _same_path(a: Operation, b: Operation) -> bool:
    return isinstance(a, siren.ConstOp) and isinstance(b, siren.ConstOp) and a.value == b.value

# -- the pass -------------------------------------------------------------------------------


def lower_module(module: ModuleOp, base_dir: str, method: str = "pf") -> None:
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    if main.body.block.args:
        raise LoweringError("lower-siren-to-smc: @main takes no arguments (the program reads its data with File.read)")
    result_type = main.function_type.outputs.data[0]
    facts = Facts(base_dir, method)
    # One walk for the variables, the literals and the lowering: the first two read leaves
    # only, which it lists in program order as well; what folding the literals drops the
    # lowering skips, and what it adds (constant lists and their casts) has nothing to lower.
    ops = ops_of(module, region_first=True)
    if facts.symbolic:
        for op in ops:
            if isinstance(op, siren.AssumeOp) and op.var.data:
                facts.vars.setdefault(op.var.data, len(facts.vars))
    facts.streamed, reason = streamed_fold(main)
    data_file = ""
    if facts.streamed is not None:
        source = facts.streamed.list.owner
        read = source.list.owner if isinstance(source, siren.MapOp) else source
        data_file = facts.abs_path(read.path.owner.value.data)
        facts.skipped = {source, read}
    fold_constant_lists(ops)
    # Every op once, a region's ops before its owner's (which moves them into a loop or a branch).
    patterns = {p.op_type: p(facts) for p in PATTERNS}
    for op in ops:
        pattern = patterns.get(type(op))
        if pattern is not None and op.parent is not None:
            pattern.rewrite(op)
    _check_lowered(main)
    model = smc.ModelAttr.build(descriptor(result_type), facts.streamed is not None, reason, data_file)
    body = Region()
    main.body.move_blocks(body)
    particle = smc.ParticleOp("main", model, body)
    if facts.symbolic:
        particle.attributes["smc.vars"] = ArrayAttr([StringAttr(v) for v in facts.vars])
    for op in list(module.ops):
        drop(op)
    module.body.block.add_op(particle)


# What the particle level is made of; anything else left after the walk was not lowered.
_LOWERED_DIALECTS = ("smc.", "arith.", "math.", "scf.")


def _check_lowered(main: func.FuncOp) -> None:
    """Drop casts nothing reads; any other leftover is an op no pattern lowered."""
    ops = ops_of(main)
    for op in reversed(ops):
        if type(op) is UnrealizedConversionCastOp and all(r.first_use is None for r in op.results):
            drop(op)
    for op in ops:
        if op is not main and op.parent is not None and not op.name.startswith(_LOWERED_DIALECTS):
            raise LoweringError(f"lower-siren-to-smc: no lowering for {op.name}{where(op)}")


@dataclass(frozen=True)
class LowerSirenToSMC(ModulePass):
    name = "lower-siren-to-smc"
    base_dir: str = "."
    method: str = "pf"   # a symbolic one: assumes become smc.assume (after symbolic-values)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op, self.base_dir, self.method)
