"""`symbolic-values`: which values of an inlined `siren` program may be symbolic (``-m ssi``).

Under semi-symbolic inference a value is a symbolic expression over random variables
(ARCHITECTURE.md §6.2), but most values of a program are plain numbers, and those should stay
machine scalars. This pass decides, per SSA value, whether it *may* be symbolic, and
retypes the program accordingly: a number or bool that may be symbolic becomes
``!siren.sym`` (one symbolic word at run time), a distribution with such a parameter
``!siren.symdist<"family">``; pairs and lists carry those types in their components,
and ``@main``'s result type follows. Every other value keeps its type, so the concrete
parts of a program compile exactly as under ``-m pf``.

What may be symbolic (a forward analysis, with a fixpoint for loop-carried values):

* the variable of ``let x <- d`` unless annotated ``sample`` (which draws at once);
* what arithmetic, comparisons and bool/number conversions compute from a symbolic
  operand; pairs and lists that hold symbolic components (a list whose elements may be
  symbolic has symbolic elements), and what ``List.hd``/``fst``/``snd`` take out of them;
* fold and map body arguments and results: a fold's accumulator is the join of its
  initial value and of what its body yields, iterated until it no longer changes;
* the result of an ``if`` whose branches may yield symbolic values; and the result of an
  ``if`` with a symbolic condition and pure branches (ARCHITECTURE.md §7.5), which becomes an ite.

Where a concrete value meets a symbolic position the pass inserts ``siren.to_sym``;
where a symbolic value meets a position that needs a concrete one it inserts
``siren.force`` (``value_expr``, ARCHITECTURE.md §6.4), located at the consumer:

* the observed value of ``observe`` (ARCHITECTURE.md §7.8 forces it too);
* the condition of an ``if`` whose branches are not pure (an ``observe`` or a
  ``resample()`` inside, ARCHITECTURE.md §7.5), which then runs one branch;
* the condition of an ``if`` with pure branches whose result is not made of numbers,
  bools, unit and pairs of them (a list, a distribution or a string cannot be an ite):
  **a divergence** from ARCHITECTURE.md §7.5, which would build ``Ite`` over such values;
* the bounds of ``List.range`` and categorical's list of probabilities;
* the components of pairs and lists compared with ``=``: **a divergence** from ARCHITECTURE.md §7.4,
  which builds ``Eq`` over whole pairs and lists; here each symbolic component is forced
  and the values are compared concretely.

A symbolic condition with pure branches always runs both branches and combines them
with ite, also when the condition turns out at run time to be a constant word (ARCHITECTURE.md §7.5
runs only the selected branch when the condition mentions no random variable). The ite
of a constant condition picks the same branch, so results agree; what differs is that
random variables the other branch assumes are still created (a divergence visible only
in the runtime plan and the particles' random streams).

Lists are converted by rebuilding literal ``[]``/``::`` chains with the new element
type and otherwise by a ``siren.map`` that converts each element.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, f64, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from sirenc import distributions
from sirenc.ir import siren
from sirenc.ir.siren import is_sym, sym
from sirenc.passes.errors import LoweringError, where

_SCALARS = (f64, i1)
_ARITH = (siren.AddOp, siren.SubOp, siren.MulOp, siren.DivOp, siren.LtOp, siren.NegOp,
          siren.BoolToFloatOp, siren.FloatToBoolOp)


# -- the lattice of types: a scalar leaf is concrete (f64, i1) or symbolic ----------------------


def join(a: Attribute, b: Attribute) -> Attribute:
    """The least type both `a` and `b` convert to (they differ only in symbolic leaves)."""
    if a == b:
        return a
    if is_sym(a) or is_sym(b):
        return sym
    if isinstance(a, siren.PairType) and isinstance(b, siren.PairType):
        return siren.PairType(join(a.first, b.first), join(a.second, b.second))
    if isinstance(a, siren.ListType) and isinstance(b, siren.ListType):
        return siren.ListType(join(a.element, b.element))
    if isinstance(a, siren.DistType | siren.SymDistType) and isinstance(b, siren.DistType | siren.SymDistType):
        return siren.symdist_type(a.family.data)
    raise LoweringError(f"symbolic-values: cannot join {a} and {b}")


def symbolize(t: Attribute) -> Attribute | None:
    """`t` with every number and bool symbolic, for an ite; None when `t` holds something
    an ite cannot combine (a list, a distribution, a string)."""
    if t in _SCALARS or is_sym(t):
        return sym
    if t == siren.unit:
        return t
    if isinstance(t, siren.PairType):
        first, second = symbolize(t.first), symbolize(t.second)
        return None if first is None or second is None else siren.PairType(first, second)
    return None


def element(t: Attribute) -> Attribute:
    assert isinstance(t, siren.ListType), t
    return t.element


def _pure(op: siren.IfOp) -> bool:
    """ARCHITECTURE.md §7.5: no observe and no resample() anywhere in the branches (functions are inlined)."""
    return not any(isinstance(inner, siren.ObserveOp | siren.ResampleOp) for inner in op.walk()
                   if inner is not op)


def _yielded(region: Region) -> SSAValue:
    term = region.block.last_op
    assert isinstance(term, siren.YieldOp)
    return term.value


# -- inference ------------------------------------------------------------------------------------


@dataclass
class Decisions:
    """The inferred type of every value (absent: unchanged), and for every ``siren.if``
    with a symbolic condition whether it becomes an ite or forces its condition."""

    types: dict[SSAValue, Attribute]
    ite: dict[siren.IfOp, bool]

    def of(self, value: SSAValue) -> Attribute:
        return self.types.get(value, value.type)


class _Infer:
    def __init__(self) -> None:
        self.d = Decisions({}, {})

    def t(self, v: SSAValue) -> Attribute:
        return self.d.of(v)

    def set(self, v: SSAValue, t: Attribute) -> None:
        self.d.types[v] = t

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        t = self.t
        if isinstance(op, _ARITH):
            symbolic = any(is_sym(t(o)) for o in op.operands)
            self.set(op.results[0], sym if symbolic else op.results[0].type)
        elif isinstance(op, siren.EqOp):
            scalar = op.lhs.type in _SCALARS or is_sym(op.lhs.type)
            symbolic = scalar and (is_sym(t(op.lhs)) or is_sym(t(op.rhs)))
            self.set(op.result, sym if symbolic else i1)
        elif isinstance(op, siren.PairOp):
            self.set(op.result, siren.PairType(t(op.first), t(op.second)))
        elif isinstance(op, siren.FstOp):
            self.set(op.result, t(op.pair).first)
        elif isinstance(op, siren.SndOp):
            self.set(op.result, t(op.pair).second)
        elif isinstance(op, siren.ConsOp):
            self.set(op.result, siren.ListType(join(t(op.head), element(t(op.tail)))))
        elif isinstance(op, siren.HdOp):
            self.set(op.result, element(t(op.operand)))
        elif isinstance(op, siren.TlOp | siren.RevOp):
            self.set(op.result, t(op.operand))
        elif isinstance(op, siren.IfOp):
            self.if_(op)
        elif isinstance(op, siren.FoldOp):
            self.fold(op)
        elif isinstance(op, siren.MapOp):
            self.set(op.body.block.args[0], element(t(op.list)))
            self.block(op.body.block)
            self.set(op.result, siren.ListType(t(_yielded(op.body))))
        elif isinstance(op, siren.DistOp):
            symbolic = any(is_sym(t(p)) for p in op.params)
            self.set(op.result, siren.symdist_type(op.family.data) if symbolic else op.result.type)
        elif isinstance(op, siren.AssumeOp):
            sample = op.annotation is not None and op.annotation.data == "sample"
            self.set(op.result, op.result.type if sample else sym)
        # Everything else (constants, data, List.len/range, observe, resample, ...) is concrete.

    def if_(self, op: siren.IfOp) -> None:
        self.block(op.then_region.block)
        self.block(op.else_region.block)
        joined = join(self.t(_yielded(op.then_region)), self.t(_yielded(op.else_region)))
        if is_sym(self.t(op.cond)):
            iteable = symbolize(joined)
            self.d.ite[op] = iteable is not None and _pure(op)
            if self.d.ite[op]:
                joined = iteable
        else:
            self.d.ite.pop(op, None)
        self.set(op.result, joined)

    def fold(self, op: siren.FoldOp) -> None:
        acc = self.t(op.init)
        elem, acc_arg = op.body.block.args
        while True:
            self.set(elem, element(self.t(op.list)))
            self.set(acc_arg, acc)
            self.block(op.body.block)
            grown = join(acc, self.t(_yielded(op.body)))
            if grown == acc:
                break
            acc = grown
        self.set(op.result, acc)


def infer(main: func.FuncOp) -> Decisions:
    """What may be symbolic in @main (already inlined), without changing it."""
    inference = _Infer()
    inference.block(main.body.block)
    return inference.d


# -- rewriting --------------------------------------------------------------------------------------


class _Rewrite:
    def __init__(self, decisions: Decisions) -> None:
        self.d = decisions
        self.orig: dict[SSAValue, Attribute] = {}

    def retype(self, value: SSAValue) -> None:
        new = self.d.of(value)
        if new != value.type:
            self.orig.setdefault(value, value.type)
            value._type = new  # noqa: SLF001 - xDSL 0.75 has no in-place retyping API

    def concrete(self, value: SSAValue) -> Attribute:
        """The type `value` had before this pass (every leaf concrete)."""
        return self.orig.get(value, value.type)

    # -- coercions, inserted before `at` and located at it --

    def insert(self, op: Operation, at: Operation) -> Operation:
        op.location = at.location
        Rewriter.insert_op(op, InsertPoint.before(at))
        return op

    def coerce(self, value: SSAValue, to: Attribute, at: Operation) -> SSAValue:
        frm = value.type
        if frm == to:
            return value
        if is_sym(to) and frm in _SCALARS:
            return self.insert(siren.ToSymOp(value), at).results[0]
        if is_sym(frm) and to in _SCALARS:
            return self.insert(siren.ForceOp(value, to), at).results[0]
        if isinstance(frm, siren.DistType) and isinstance(to, siren.SymDistType):
            return self.insert(siren.ToSymOp(value), at).results[0]
        if isinstance(frm, siren.PairType) and isinstance(to, siren.PairType):
            if isinstance(value.owner, siren.PairOp):   # rebuilt from its components
                first = self.coerce(value.owner.first, to.first, at)
                second = self.coerce(value.owner.second, to.second, at)
                return self.insert(siren.PairOp(first, second), at).results[0]
            first = self.coerce(self.insert(siren.FstOp(value), at).results[0], to.first, at)
            second = self.coerce(self.insert(siren.SndOp(value), at).results[0], to.second, at)
            return self.insert(siren.PairOp(first, second), at).results[0]
        if isinstance(frm, siren.ListType) and isinstance(to, siren.ListType):
            return self.coerce_list(value, to, at)
        raise LoweringError(f"symbolic-values: cannot convert {frm} to {to}{where(at)}")

    def coerce_list(self, value: SSAValue, to: siren.ListType, at: Operation) -> SSAValue:
        owner = value.owner
        if isinstance(owner, siren.NilOp):
            return self.insert(siren.NilOp(to), at).results[0]
        if isinstance(owner, siren.ConsOp):   # a literal: rebuilt with the new element type
            head = self.coerce(owner.head, to.element, at)
            tail = self.coerce(owner.tail, to, at)
            return self.insert(siren.ConsOp(head, tail), at).results[0]
        body = Block(arg_types=[element(value.type)])
        yield_ = siren.YieldOp(body.args[0])
        yield_.location = at.location
        body.add_op(yield_)
        yield_.operands[0] = self.coerce(body.args[0], to.element, yield_)
        return self.insert(siren.MapOp(value, to, body), at).results[0]

    def set_operand(self, op: Operation, index: int, to: Attribute) -> None:
        op.operands[index] = self.coerce(op.operands[index], to, op)

    # -- the walk --

    def block(self, block: Block) -> None:
        for arg in block.args:
            self.retype(arg)
        for op in list(block.ops):
            self.op(op)

    def op(self, op: Operation) -> None:
        self.operands(op)
        for region in op.regions:
            for block in region.blocks:
                self.block(block)
        for result in op.results:
            self.retype(result)
        if isinstance(op, siren.IfOp | siren.FoldOp):
            for region in op.regions:
                term = region.block.last_op
                self.set_operand(term, 0, op.results[0].type)

    def operands(self, op: Operation) -> None:
        """Converts `op`'s operands to what it takes, given the decisions."""
        d = self.d
        if isinstance(op, _ARITH):
            if is_sym(d.of(op.results[0])) and not isinstance(op, siren.BoolToFloatOp | siren.FloatToBoolOp):
                for i in range(len(op.operands)):
                    self.set_operand(op, i, sym)
        elif isinstance(op, siren.EqOp):
            if is_sym(d.of(op.result)):
                self.set_operand(op, 0, sym)
                self.set_operand(op, 1, sym)
            else:   # compound values (or concrete scalars) compare concretely
                self.set_operand(op, 0, self.concrete(op.lhs))
                self.set_operand(op, 1, self.concrete(op.rhs))
        elif isinstance(op, siren.ConsOp):
            lst = d.of(op.result)
            self.set_operand(op, 0, element(lst))
            self.set_operand(op, 1, lst)
        elif isinstance(op, siren.RangeOp):
            self.set_operand(op, 0, f64)
            self.set_operand(op, 1, f64)
        elif isinstance(op, siren.ObserveOp):
            self.set_operand(op, 1, self.concrete(op.value))
        elif isinstance(op, siren.IfOp):
            if is_sym(op.cond.type) and not d.ite.get(op, False):
                self.set_operand(op, 0, i1)
        elif isinstance(op, siren.FoldOp):
            self.set_operand(op, 1, d.of(op.result))
        elif isinstance(op, siren.DistOp):
            symbolic = isinstance(d.of(op.result), siren.SymDistType)
            shapes = [p.shape for p in distributions.family(op.family.data).params]
            for i, shape in enumerate(shapes):
                if shape == distributions.LIST:
                    self.set_operand(op, i, self.concrete(op.params[i]))
                elif symbolic:
                    self.set_operand(op, i, sym)


def symbolic_values(module: ModuleOp) -> Decisions:
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    decisions = infer(main)
    _Rewrite(decisions).block(main.body.block)
    ret = main.body.block.last_op
    if isinstance(ret, func.ReturnOp):
        outputs = [v.type for v in ret.operands]
        main.function_type = FunctionType.from_lists(list(main.function_type.inputs.data), outputs)
    return decisions


@dataclass(frozen=True)
class SymbolicValues(ModulePass):
    name = "symbolic-values"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        symbolic_values(op)
