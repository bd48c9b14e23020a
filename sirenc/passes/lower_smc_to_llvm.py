"""`lower-smc-to-llvm`: the resumable procedure -> `llvm` dialect.

xDSL 0.75 has no Python lowering from func/arith/scf to `llvm` (TOOLCHAIN P1)
and its scf-to-cf does not handle ``scf.while``, so this pass walks the
structured procedure once and emits a control-flow graph directly:

* ``scf.if``/``scf.while`` become blocks with arguments (phis after export);
* each ``smc.suspend`` stores its resume point in the frame's pc and returns
  its status; the code after it starts a new block, and the entry block
  dispatches on the pc to the start or to one of these resume blocks;
* ``smc.rt`` becomes ``llvm.call`` of an external function declared once;
* frame slots become byte-offset GEPs with loads and stores.

No SSA value crosses a suspension here: `spill-across-suspends` has already
routed every such value through the frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, math, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp, f64, i8, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from sirenc.ir import smc

_FLOAT_BINOPS = {
    arith.AddfOp: llvm.FAddOp, arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp, arith.DivfOp: llvm.FDivOp,
}
_INT_BINOPS = {arith.AddiOp: llvm.AddOp, arith.AndIOp: llvm.AndOp, arith.OrIOp: llvm.OrOp, arith.XOrIOp: llvm.XOrOp}
def machine(t: Attribute) -> Attribute:
    """List handles are plain 64-bit words in LLVM."""
    return i64 if isinstance(t, smc.ListHandleType) else t


def machine_all(values) -> list[Attribute]:
    return [machine(v.type) for v in values]


_FCMP = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
         "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]


@dataclass
class _CFGBuilder:
    fn: llvm.FuncOp
    ctx: SSAValue
    frame: SSAValue
    log_weight: SSAValue
    region: Region
    declared: dict[str, llvm.FuncOp]
    values: dict[SSAValue, SSAValue] = field(default_factory=dict)
    resume_blocks: list[tuple[int, Block]] = field(default_factory=list)
    block: Block = None

    def new_block(self, arg_types=()) -> Block:
        block = Block(arg_types=arg_types)
        self.region.add_block(block)
        return block

    def add(self, op: Operation, like: Operation | None = None) -> Operation:
        if like is not None:
            op.location = like.location
        self.block.add_op(op)
        return op

    def v(self, value: SSAValue) -> SSAValue:
        return self.values[value]

    def const(self, value: int, typ: IntegerType) -> SSAValue:
        return self.add(llvm.ConstantOp(IntegerAttr(value, typ), typ)).result

    def slot(self, offset: int) -> SSAValue:
        return self.add(llvm.GEPOp(self.frame, [offset], i8, inbounds=True)).result

    # -- blocks -------------------------------------------------------------------

    def translate(self, block: Block) -> list[SSAValue] | None:
        """Translate a structured block; returns the values of its yield/condition."""
        for op in block.ops:
            if isinstance(op, scf.YieldOp | scf.ConditionOp):
                return [self.v(x) for x in op.operands]
            if isinstance(op, func.ReturnOp):
                self.add(llvm.ReturnOp(self.v(op.operands[0])), op)
                return None
            self.op(op)
        return []

    def op(self, op: Operation) -> None:
        handler = getattr(self, "_" + type(op).__name__, None)
        if handler is not None:
            results = handler(op)
        elif type(op) in _FLOAT_BINOPS:
            results = [self.add(_FLOAT_BINOPS[type(op)](self.v(op.lhs), self.v(op.rhs)), op).res]
        elif type(op) in _INT_BINOPS:
            results = [self.add(_INT_BINOPS[type(op)](self.v(op.lhs), self.v(op.rhs)), op).res]
        else:
            raise NotImplementedError(f"lower-smc-to-llvm: no lowering for {op.name}")
        for old, new in zip(op.results, results, strict=True):
            self.values[old] = new

    # -- arith ----------------------------------------------------------------------

    def _ConstantOp(self, op: arith.ConstantOp):
        return [self.add(llvm.ConstantOp(op.value, op.result.type), op).result]

    def _SqrtOp(self, op: math.SqrtOp):
        return [self.add(llvm.FSqrtOp(self.v(op.operand)), op).res]

    def _LogOp(self, op: math.LogOp):
        return [self.add(llvm.FLogOp(self.v(op.operand)), op).res]

    def _NegfOp(self, op: arith.NegfOp):
        return [self.add(llvm.FNegOp(self.v(op.operand)), op).res]

    def _CmpfOp(self, op: arith.CmpfOp):
        pred = _FCMP[op.predicate.value.data]
        return [self.add(llvm.FCmpOp(self.v(op.lhs), self.v(op.rhs), pred), op).res]

    def _CmpiOp(self, op: arith.CmpiOp):
        pred = IntegerAttr(op.predicate.value.data, i64)  # same numbering as llvm.icmp
        return [self.add(llvm.ICmpOp(self.v(op.lhs), self.v(op.rhs), pred), op).res]

    def _SelectOp(self, op: arith.SelectOp):
        sel = llvm.SelectOp(self.v(op.cond), self.v(op.lhs), self.v(op.rhs))
        return [self.add(sel, op).res]

    def _BitcastOp(self, op: arith.BitcastOp):
        return [self.add(llvm.BitcastOp(self.v(op.input), op.result.type), op).result]

    def _ExtUIOp(self, op: arith.ExtUIOp):
        return [self.add(llvm.ZExtOp(self.v(op.input), op.result.type), op).res]

    def _TruncIOp(self, op: arith.TruncIOp):
        return [self.add(llvm.TruncOp(self.v(op.input), op.result.type), op).res]

    # -- smc ------------------------------------------------------------------------

    def _RuntimeCallOp(self, op: smc.RuntimeCallOp):
        result_type = machine(op.result.type) if op.result is not None else None
        return self.call(op.callee.data, [self.v(a) for a in op.args], result_type, op)

    def call(self, name: str, args: list[SSAValue], result_type: Attribute | None, like: Operation):
        """Call a runtime function, declaring it the first time."""
        if name not in self.declared:
            ret = result_type if result_type is not None else llvm.LLVMVoidType()
            ftype = llvm.LLVMFunctionType([a.type for a in args], ret)
            self.declared[name] = llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external"))
        call = self.add(llvm.CallOp(name, *args, return_type=result_type), like)
        return [call.returned] if result_type is not None else []

    def _FrameLoadOp(self, op: smc.FrameLoadOp):
        ptr = self.slot(op.offset.value.data)
        return [self.add(llvm.LoadOp(ptr, machine(op.result.type)), op).dereferenced_value]

    def _FrameStoreOp(self, op: smc.FrameStoreOp):
        ptr = self.slot(op.offset.value.data)
        self.add(llvm.StoreOp(self.v(op.value), ptr), op)
        return []

    def _AddLogWeightOp(self, op: smc.AddLogWeightOp):
        # Finite sums are stored in place; -inf and NaN go through the runtime,
        # which remembers the site for the "all particles have zero weight" error.
        lp = self.v(op.log_density)
        old = self.add(llvm.LoadOp(self.log_weight, f64), op).dereferenced_value
        new = self.add(llvm.FAddOp(old, lp), op).res
        minus_inf = self.add(llvm.ConstantOp(FloatAttr(float("-inf"), f64), f64)).result
        finite = self.add(llvm.FCmpOp(new, minus_inf, "ogt"), op).res
        store, slow, done = self.new_block(), self.new_block(), self.new_block()
        self.add(llvm.CondBrOp(finite, store, [], slow, []), op)
        self.block = store
        self.add(llvm.StoreOp(new, self.log_weight), op)
        self.add(llvm.BrOp(done), op)
        self.block = slow
        self.call("sirenrt_add_log_weight", [self.ctx, lp, self.v(op.site)], None, op)
        self.add(llvm.BrOp(done), op)
        self.block = done
        return []

    def _NilOp(self, op: smc.NilOp):
        return [self.const(-1, i64)]

    def _IsNilOp(self, op: smc.IsNilOp):
        nil = self.const(-1, i64)
        return [self.add(llvm.ICmpOp(self.v(op.list), nil, IntegerAttr(0, i64)), op).res]

    def _HandleCastOp(self, op: smc.HandleCastOp):
        return [self.v(op.input)]

    def _SuspendOp(self, op: smc.SuspendOp):
        point = op.point.value.data
        pc = self.const(point, i32)
        self.add(llvm.StoreOp(pc, self.frame), op)
        self.add(llvm.ReturnOp(self.const(op.status.value.data, i32)), op)
        self.block = self.new_block()
        self.resume_blocks.append((point, self.block))
        return []

    # -- structured control ---------------------------------------------------------

    def _IfOp(self, op: scf.IfOp):
        then_block, else_block = self.new_block(), self.new_block()
        merge = self.new_block(machine_all(op.results))
        self.add(llvm.CondBrOp(self.v(op.cond), then_block, [], else_block, []), op)
        for target, region in ((then_block, op.true_region), (else_block, op.false_region)):
            self.block = target
            out = self.translate(region.block)
            self.add(llvm.BrOp(merge, *out), op)
        self.block = merge
        return list(merge.args)

    def _WhileOp(self, op: scf.WhileOp):
        header = self.new_block(machine_all(op.before_region.block.args))
        body = self.new_block(machine_all(op.after_region.block.args))
        exit_block = self.new_block(machine_all(op.results))
        self.add(llvm.BrOp(header, *[self.v(a) for a in op.arguments]), op)
        for old, new in zip(op.before_region.block.args, header.args, strict=True):
            self.values[old] = new
        self.block = header
        cond_and_passed = self.translate(op.before_region.block)
        cond, passed = cond_and_passed[0], cond_and_passed[1:]
        self.add(llvm.CondBrOp(cond, body, passed, exit_block, passed), op)
        for old, new in zip(op.after_region.block.args, body.args, strict=True):
            self.values[old] = new
        self.block = body
        self.add(llvm.BrOp(header, *self.translate(op.after_region.block)), op)
        self.block = exit_block
        return list(exit_block.args)


def lower_function(fn: func.FuncOp, declared: dict[str, llvm.FuncOp]) -> llvm.FuncOp:
    ptr = llvm.LLVMPointerType()
    ftype = llvm.LLVMFunctionType([ptr, ptr, ptr], i32)
    region = Region()
    entry = Block(arg_types=(ptr, ptr, ptr))  # ctx, frame, log weight
    region.add_block(entry)
    new = llvm.FuncOp(fn.sym_name.data, ftype, linkage=llvm.LinkageAttr("external"), body=region)
    builder = _CFGBuilder(new, entry.args[0], entry.args[1], entry.args[2], region, declared)
    for old, arg in zip(fn.body.block.args, entry.args, strict=True):
        builder.values[old] = arg
    start = builder.new_block()
    builder.block = start
    builder.translate(fn.body.block)

    # Dispatch on the saved pc: 0 starts the program, k resumes after suspension k.
    builder.block = entry
    pc = builder.add(llvm.LoadOp(entry.args[1], i32)).dereferenced_value
    for point, target in builder.resume_blocks:
        is_point = builder.add(llvm.ICmpOp(pc, builder.const(point, i32), IntegerAttr(0, i64))).res
        next_test = builder.new_block()
        builder.add(llvm.CondBrOp(is_point, target, [], next_test, []))
        builder.block = next_test
    builder.add(llvm.BrOp(start))
    return new


def lower_module(module: ModuleOp) -> None:
    declared: dict[str, llvm.FuncOp] = {}
    lowered = []
    for fn in list(module.ops):
        if isinstance(fn, func.FuncOp):
            new = lower_function(fn, declared)
            for name, attr in fn.attributes.items():
                if name.startswith("smc."):
                    new.attributes[name] = attr
            lowered.append(new)
        fn.detach()
        fn.erase()
    for fn in [*declared.values(), *lowered]:
        module.body.block.add_op(fn)


@dataclass(frozen=True)
class LowerSMCToLLVM(ModulePass):
    name = "lower-smc-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op)
