"""Loops on tier 2: a `fold` whose accumulator holds symbolic values carries their numbers.

The body runs on each shape the accumulator takes at the top of the loop until no new one appears;
shapes that differ only in constants are merged by making those constants run-time numbers. With
one shape the accumulator is its numbers; with several it also carries the shape's index, the body
selects its code by it, and the rest of @main runs once per shape. Where the body's symbolic
structure depends on a run-time condition, it forks on it (`_explore`): one path per value.

A part of the specializer (`specialize_conjugacy._Specializer`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import f64, i1
from xdsl.ir import Attribute, Block, Operation, SSAValue

from sirenc.ir import siren
from sirenc.passes.tier2.shapes import Canon, Shape, Variant, instantiate, join_keys, shape_of
from sirenc.passes.tier2.staged_symbolic import Emitter, Fork, NotSpecialisable
from sirenc.passes.tier2.staged_values import discard, has_sym

_MAX_SHAPES = 16
_MAX_PATHS = 16


class Loops:
    """The specializer's handler of `siren.fold`, and the rest of a block run once per shape."""

    def _per_shape(self, ops, start: int, fold: siren.FoldOp, split, finish) -> SSAValue:
        tag, values = split
        saved = self.emit.block
        blocks, result_type = [], None
        for value in values:
            block = Block()
            self.emit.block = block
            self._bind(fold.result, value)
            result = self._run_ops(ops, start, finish)
            self.emit.add(siren.YieldOp(result))
            result_type = result.type
            blocks.append(block)
        self.emit.block = saved
        return _select(self.emit, tag, blocks, result_type)

    def fold(self, op: siren.FoldOp):
        if has_sym(op.list.type):
            raise NotSpecialisable("a fold over a list of symbolic values", op)
        for inner in op.body.walk():
            for operand in inner.operands:
                if has_sym(operand.type) and not _inside(operand, op):
                    raise NotSpecialisable("a loop body uses a symbolic value defined before the loop "
                                           "(tier 2 carries symbolic state only in the accumulator)", inner)
        init = self.normalize(self.get(op.init))
        lst = self.vmap[op.list]
        elem_type = lst.type.element
        entry = shape_of(self.engine, init)
        self._retire(init)
        conc_types = [c.type for c in entry.concretes]
        variants = [Variant(entry.key, entry.statics)]
        changed = False

        def admit(out) -> SSAValue:
            nonlocal changed
            changed = self._admit(variants, out, op) or changed
            return self.emit.const(0.0)

        while True:
            for v in list(variants):
                scratch = Block(arg_types=[elem_type, *conc_types] + [f64] * len(v.slots))
                args = list(scratch.args)
                # A copy: admitting one path's result may widen v while the others still run on it.
                self._run_body(op, Variant(v.key, list(v.statics)), args[0], args[1:1 + len(conc_types)],
                               args[1 + len(conc_types):], scratch, admit)
                discard(scratch)
                if changed:
                    break
            if not changed:
                break
            changed = False
        self.shapes.append(len(variants))
        n_slots = max(len(v.slots) for v in variants)
        tagged = len(variants) > 1
        field_types = ([f64] if tagged else []) + conc_types + [f64] * n_slots or [f64]
        acc_type = _pack_type(field_types)

        def encode(shape: Shape) -> SSAValue:
            index = _index(variants, shape)
            v = variants[index]
            fields = ([self.emit.const(float(index))] if tagged else []) + list(shape.concretes)
            fields += [self.emit.num(shape.nums[i]) for i in v.slots]
            fields += [self.emit.const(0.0)] * (n_slots - len(v.slots))
            return siren.pack(self.emit.result, fields or [self.emit.const(0.0)])

        def split(fields: list[SSAValue]):
            tag = fields[0] if tagged else None
            rest = fields[1:] if tagged else fields
            return tag, rest[:len(conc_types)], rest[len(conc_types):len(conc_types) + n_slots]

        new_init = encode(entry)
        body = Block(arg_types=[elem_type, acc_type])
        saved = self.emit.block
        self.emit.block = body
        tag, concretes, slots = split(siren.unpack(self.emit.result, body.args[1], len(field_types)))
        blocks = []
        for v in variants:
            block = Block() if tagged else body
            packed = self._run_body(op, v, body.args[0], concretes, slots[:len(v.slots)], block,
                                    lambda out: encode(shape_of(self.engine, out)))
            self.emit.block = block
            self.emit.add(siren.YieldOp(packed))
            blocks.append(block)
        if tagged:
            self.emit.block = body
            self.emit.add(siren.YieldOp(_select(self.emit, tag, blocks, acc_type)))
        self.emit.block = saved
        self.emit.location = op.location
        result = self.emit.add(siren.FoldOp(lst, new_init, body)).result
        tag, concretes, slots = split(siren.unpack(self.emit.result, result, len(field_types)))
        values = [self._from_slots(v, slots[:len(v.slots)], concretes) for v in variants]
        if len(values) == 1:
            self._bind(op.result, values[0])
            return None
        return tag, values

    def _run_body(self, op: siren.FoldOp, variant: Variant, elem: SSAValue, concretes: list[SSAValue],
                  slots: list[SSAValue], block: Block, finish) -> SSAValue:
        """Runs the body on an accumulator of shape `variant` in `block`; `finish` of the new
        accumulator, emitted at the end of each of the body's paths, and their merge."""
        elem_arg, acc_arg = op.body.block.args

        def once():
            self.vmap[elem_arg] = elem
            self._bind(acc_arg, self._from_slots(variant, slots, concretes))
            return self.normalize(self.run_block(op.body.block))

        return self._explore(once, block, finish)

    def _explore(self, once, block: Block, finish) -> SSAValue:
        """`finish(once())` emitted in `block`, with `once` (a loop body's run from its start)
        forked on every run-time condition its symbolic structure depends on (`Fork`): a run stops
        at an undecided condition, and `once` runs again for each of its values, replaying the
        code before it and continuing in that branch of a `siren.if` on the condition. Each path
        is the runtime's computation for the particles whose conditions take its values (an `ite`
        on a constant picks its branch, ARCHITECTURE.md §6.3; an `if` on a concrete condition runs the branch
        it selects, 7.5), and ends in its own accumulator (its shape one of the loop's); the
        `siren.if`s select per particle."""
        emit = self.emit
        saved = (emit.block, emit.script, emit.decided, emit.segment, emit.position)
        start, shapes, finished = len(block.ops), len(self.shapes), self.engine.finished
        paths = 0

        def go(script, decided) -> SSAValue:
            nonlocal paths
            emit.script, emit.decided, emit.segment, emit.position = script, decided, 0, 0
            emit.block = script[0][0]
            del self.shapes[shapes:]   # a run starts afresh: inner loops count once
            self.engine.finished = finished
            try:
                result = finish(once())
            except Fork as fork:
                leaf = script[-1][0]
                done = [*script[:-1], (leaf, list(leaf.ops)[start if leaf is block else 0:])]
                branches = []
                for value in (True, False):
                    branch = Block()
                    got = go([*done, (branch, [])], {**decided, fork.cond: (value, len(done) - 1)})
                    emit.script, emit.block = None, branch
                    emit.add(siren.YieldOp(got))
                    branches.append(branch)
                emit.script, emit.block = None, leaf
                cond = fork.cond if fork.cond.type == i1 else emit.add(siren.FloatToBoolOp(fork.cond)).result
                return emit.add(siren.IfOp(cond, got.type, *branches)).result
            paths += 1
            if paths > _MAX_PATHS:
                raise NotSpecialisable(f"a loop body's symbolic structure depends on run-time conditions in more "
                                       f"than {_MAX_PATHS} ways", None)
            return result

        try:
            return go([(block, [])], {c: (v, -1) for c, (v, _) in emit.decided.items()})
        finally:
            emit.block, emit.script, emit.decided, emit.segment, emit.position = saved

    @staticmethod
    def _from_slots(v: Variant, slots: list[SSAValue], concretes: list[SSAValue]):
        it = iter(slots)
        nums = [w if w is not None else next(it) for w in v.statics]
        return instantiate(v.key, nums, concretes)

    def _admit(self, variants: list[Variant], out, op) -> bool:
        """True when `out`'s shape changed the set of shapes (a new one, or one widened)."""
        saved = self.emit.block
        self.emit.block = Block()
        try:
            shape = shape_of(self.engine, out)
        finally:
            discard(self.emit.block)
            self.emit.block = saved
        if any(v.accepts(shape) for v in variants):
            return False
        for v in variants:
            joined = join_keys(v.key, shape.key)
            if joined is not None:   # the same but for constants or a trajectory's anchor
                v.key = joined
                v.widen(shape)
                return True
        if len(variants) == _MAX_SHAPES:
            raise NotSpecialisable(f"a loop's symbolic state takes more than {_MAX_SHAPES} shapes "
                                   "(it grows, or changes structure, from step to step)", op)
        variants.append(Variant(shape.key, shape.statics))
        return True

    def _retire(self, value) -> None:
        """The variables `value` reaches now belong to a loop: a later use of them from outside
        would see them as they were before it."""
        c = Canon(self.engine)
        c.value(value)
        c.rv_keys()
        for rv in c.rv_list:
            self.stale[rv] = True


def _index(variants: list[Variant], shape: Shape) -> int:
    for i, v in enumerate(variants):
        if v.accepts(shape):
            return i
    raise NotSpecialisable("internal: a loop shape outside the fixpoint")


def _select(emit: Emitter, tag: SSAValue, blocks: list[Block], result_type: Attribute) -> SSAValue:
    """The value `blocks[tag]` yields: a chain of `siren.if`s on the shape index."""
    chain = blocks[-1]
    saved = emit.block
    for i in reversed(range(len(blocks) - 1)):
        outer = Block()
        emit.block = outer
        cond = emit.add(siren.LtOp(tag, emit.const(i + 0.5))).result
        emit.add(siren.YieldOp(emit.add(siren.IfOp(cond, result_type, blocks[i], chain)).result))
        chain = outer
    emit.block = saved
    ops = list(chain.ops)
    for op in ops[:-1]:
        op.detach()
        emit.add(op)
    value = ops[-1].operands[0]
    ops[-1].detach()
    ops[-1].erase()
    return value


def _pack_type(types: list[Attribute]) -> Attribute:
    out = types[-1]
    for t in reversed(types[:-1]):
        out = siren.PairType(t, out)
    return out


def _inside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    node = owner if isinstance(owner, Operation) else owner.parent_op()
    while node is not None:
        if node is op:
            return True
        node = node.parent_op()
    return False
