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
Past `_MAX_SHAPES` shapes, the program stays on tier 1.

Paths: where the structure of a loop body's symbolic values depends on a run-time condition (slds's
`if s then x1 else x0` with `s` drawn: an `ite` on a run-time constant picks a branch, ARCHITECTURE.md §6.3;
an `if` on a concrete condition runs one branch, 7.5), the body forks on it (`_explore`): it runs
once per value of the condition, each run the runtime's computation for the particles where the
condition has that value, and the code after the condition goes into the branches of a
`siren.if` on it. Each path ends in its own accumulator, whose shape is one of the loop's: paths
share nothing but the code before their conditions.

Trajectories (`x :: xs` of symbolic values, `SList`): an element that is no longer the head is
kept as a record of two numbers in a concrete list, and the means are computed at the end by one
backward pass. The rest of `@main` after a loop with several shapes is compiled once per shape.

Where the runtime draws a variable because of the structure alone (a parent that is not
conjugate to its child, DS and BP's extra parents), the engine emits the same draw at the same
point. The program stays on tier 1, unchanged, when what the runtime does would depend on the
run in a way paths cannot follow; `Specialization.reason` says what and where: a symbolic value
chosen by a run-time condition outside a loop body, a run-time coefficient, DS's
prune, a trajectory whose elements are not chained Gaussians (`staged_inference` and below).
A failure of the pass itself also leaves the program on tier 1, reported as an internal error.

The result: each symbolic part of `@main`'s result is replaced by its per-particle posterior
mean (ARCHITECTURE.md §10.4), so the estimate (the weighted mean over particles) is tier 1's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, f64, i1
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from sirenc.distributions import family
from sirenc.ir import siren
from sirenc.ir.siren import is_sym
from sirenc.ir.locations import span_of
from sirenc.passes.staged_inference import Engine
from sirenc.passes.staged_symbolic import (RV, Emitter, Expr, Fork, IdMemo, K, Node, NotSpecialisable, Num, R, is_static,
                                           rvs_of, truth_of)

_MAX_SHAPES = 16
_MAX_PATHS = 16


@dataclass
class SymDist:
    family: str
    params: list[Expr]


@dataclass
class SPair:
    first: object
    second: object


@dataclass
class SList:
    """A list of symbolic values (a trajectory, `x :: xs`): its first elements as staged values
    (in a loop's accumulator, at most one),
    then `records`, the concrete list of the others as (a, b) pairs: each element's mean is
    a * (the mean of the element before it) + b (as (a, (b, c)) where the result carries posterior
    atoms: c is the element's variance given the element before it, so its own variance is
    a^2 * (that element's variance) + c). An element goes into the records once nothing
    can change it any more but the final expectation (ARCHITECTURE.md §10.4), which is then a backward pass
    (the smoothing that tier 1's final marginalisation performs swap by swap). `records` is None
    for a list literal, whose elements are all in `items`."""

    items: list
    records: SSAValue | None


# Posterior atom kinds beside the family ids (sirenrt.h's SIRENRT_ATOM_POINT and SIRENRT_ATOM_MEAN).
ATOM_POINT, ATOM_MEAN = -1.0, -2.0

ATOM = siren.PairType(f64, siren.PairType(f64, siren.PairType(f64, siren.PairType(f64, siren.PairType(
    f64, siren.PairType(f64, f64))))))


def atoms_type(t: Attribute) -> Attribute:
    """The type of a value's posterior atoms: each number (or bool) an ATOM."""
    if t == f64 or t == i1 or is_sym(t):
        return ATOM
    if isinstance(t, siren.PairType):
        return siren.PairType(atoms_type(t.first), atoms_type(t.second))
    if isinstance(t, siren.ListType):
        return siren.ListType(atoms_type(t.element))
    return t   # unit


RECORD = siren.PairType(f64, f64)
POSTERIOR_RECORD = siren.PairType(f64, RECORD)


@dataclass(frozen=True)
class _Arith:
    """A number being emitted, with + and * (the backward pass's steps read as formulas)."""

    emit: Emitter
    value: SSAValue

    def __add__(self, other: "_Arith") -> "_Arith":
        return _Arith(self.emit, self.emit.arith(siren.AddOp, self.value, other.value))

    def __mul__(self, other: "_Arith") -> "_Arith":
        return _Arith(self.emit, self.emit.arith(siren.MulOp, self.value, other.value))


def has_sym(t: Attribute) -> bool:
    return siren.holds(t, lambda leaf: is_sym(leaf) or isinstance(leaf, siren.SymDistType))


def _touches_sym(op: Operation) -> bool:
    return any(has_sym(v.type) for inner in op.walk() for v in (*inner.operands, *inner.results)) or \
        any(has_sym(a.type) for inner in op.walk() for r in inner.regions for b in r.blocks for a in b.args)


# -- shapes: a staged value's structure, with its numbers set apart ---------------------------------


@dataclass
class Shape:
    """The structure of a staged value (`key`), its numbers (`nums`, one per constant of the
    structure, in order) and its concrete leaves (`concretes`). `statics[i]` is nums[i] when
    the compiler knows it, else None."""

    key: tuple
    nums: list[Num]
    concretes: list[SSAValue]

    @property
    def statics(self) -> list[float | None]:
        return [n if isinstance(n, float) else None for n in self.nums]


def _same_float(a: float, b: float) -> bool:
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b) or (math.isnan(a) and math.isnan(b))


class _Canon:
    """Walks a staged value; every random variable it reaches, through parameters, is numbered."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.nums: list[Num] = []
        self.concretes: list[SSAValue] = []
        self.rvs: dict[int, int] = {}
        self.rv_list: list[RV] = []
        self.nodes = IdMemo()

    def value(self, v) -> tuple:
        if isinstance(v, SSAValue):
            self.concretes.append(v)
            return ("C",)
        if isinstance(v, SPair):
            return ("P", self.value(v.first), self.value(v.second))
        if isinstance(v, SymDist):
            return ("D", v.family, tuple(self.expr(self.engine.b.eval(p)) for p in v.params))
        if isinstance(v, SList):
            if len(v.items) > 1 or v.records is None:
                raise NotSpecialisable("internal: a trajectory that is not normalised")
            head = self.value(v.items[0]) if v.items else None
            self.concretes.append(v.records)
            return ("L", head)
        return ("E", self.expr(self.engine.b.eval(v)))

    def expr(self, e: Expr) -> tuple:
        if isinstance(e, K):
            self.nums.append(e.v)
            return ("K",)
        if isinstance(e, R):
            return ("R", self.rv(e.rv))
        seen = self.nodes.get(e)
        if seen is not None:
            return ("S", seen)
        key = (e.kind, *(self.expr(a) for a in e.args))
        self.nodes[e] = len(self.nodes)
        return key

    def rv(self, rv: RV) -> int:
        if rv.realized:
            raise NotSpecialisable("internal: a realized variable reached a shape")
        if rv in self.engine.retired:
            raise NotSpecialisable("a variable kept in a list of symbolic values is still used by another "
                                   "(the state would grow)")
        index = self.rvs.get(id(rv))
        if index is None:
            index = self.rvs[id(rv)] = len(self.rv_list)
            self.rv_list.append(rv)
        return index

    def rv_keys(self) -> tuple:
        """The variables' own structure; walking their parameters may number more of them."""
        keys, i = [], 0
        while i < len(self.rv_list):
            rv = self.rv_list[i]
            self.engine.eval_params(rv)
            params = tuple(self.expr(p) for p in rv.params)
            keys.append((rv.family, rv.var, rv.ann, rv.ds_state, params))
            i += 1
        # DS's edges, once every reachable variable has its number: an edge to a variable nothing
        # reaches is never followed again, but a forgotten marginal child would still be pruned.
        ds = tuple(
            (self.rvs.get(id(rv.ds_parent)) if rv.ds_parent is not None else None,
             tuple(self.rvs[id(c)] for c in rv.children if id(c) in self.rvs),
             sum(1 for c in rv.children if id(c) not in self.rvs and c.ds_state == "M"))
            for rv in self.rv_list)
        return tuple(keys), ds


def shape_of(engine: Engine, value) -> Shape:
    canon = _Canon(engine)
    key = canon.value(value)
    rv_keys = canon.rv_keys()
    return Shape((key, rv_keys), canon.nums, canon.concretes)


def instantiate(key: tuple, nums: list[Num], concretes: list[SSAValue]):
    """A staged value of structure `key` holding `nums` and `concretes` (fresh variables)."""
    (value_key, (rv_keys, ds)) = key
    nums_it, conc_it = iter(nums), iter(concretes)
    rvs = [RV(family, [], var, ann, ds_state=state) for (family, var, ann, state, _) in rv_keys]
    nodes: list[Expr] = []

    def expr(k: tuple) -> Expr:
        tag = k[0]
        if tag == "K":
            return K(next(nums_it))
        if tag == "R":
            return R(rvs[k[1]])
        if tag == "S":
            return nodes[k[1]]
        node = Node(tag, *(expr(a) for a in k[1:]))
        nodes.append(node)
        return node

    def value(k: tuple):
        if k[0] == "C":
            return next(conc_it)
        if k[0] == "P":
            first = value(k[1])
            return SPair(first, value(k[2]))
        if k[0] == "D":
            return SymDist(k[1], [expr(p) for p in k[2]])
        if k[0] == "L":
            head = [value(k[1])] if k[1] is not None else []
            return SList(head, next(conc_it))
        return expr(k[1])

    out = value(value_key)
    for rv, (_, _, _, _, params) in zip(rvs, rv_keys):
        rv.params = [expr(p) for p in params]
    dead_marginal = RV("gaussian", [], "", None, ds_state="M")
    for rv, (parent, children, n_dead) in zip(rvs, ds):
        rv.ds_parent = rvs[parent] if parent is not None else None
        rv.children = [rvs[c] for c in children] + [dead_marginal] * (1 if n_dead else 0)
    return out


# -- the pass ---------------------------------------------------------------------------------------


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


@dataclass
class _Variant:
    key: tuple
    statics: list[float | None]

    def accepts(self, s: Shape) -> bool:
        return s.key == self.key and all(w is None or (isinstance(n, float) and _same_float(w, n))
                                         for w, n in zip(self.statics, s.nums))

    def widen(self, s: Shape) -> None:
        self.statics = [w if w is not None and isinstance(n, float) and _same_float(w, n) else None
                        for w, n in zip(self.statics, s.nums)]

    @property
    def slots(self) -> list[int]:
        return [i for i, w in enumerate(self.statics) if w is None]


def _pack_type(types: list[Attribute]) -> Attribute:
    out = types[-1]
    for t in reversed(types[:-1]):
        out = siren.PairType(t, out)
    return out


def _discard(block: Block) -> None:
    for op in reversed(list(block.ops)):
        op.detach()
        op.erase(safe_erase=False)


class _Specializer:
    def __init__(self, method: str):
        self.emit = Emitter()
        self.engine = Engine(method, self.emit)
        self.vmap: dict[SSAValue, SSAValue] = {}     # concrete values: old -> new
        self.staged: dict[SSAValue, object] = {}     # symbolic values: old -> staged
        self.stale = IdMemo()                        # variables a loop took over
        self.shapes: list[int] = []
        self.posterior = False                       # @main's result carries posterior atoms
        self.trajectory_atoms = False                # ... of a trajectory: records carry variances
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

    def result(self, value) -> SSAValue:
        """@main's result: every symbolic part replaced by its mean (ARCHITECTURE.md §10.4); where the result
        may be symbolic, paired with its posterior atoms, which summaries read: an `ATOM` for each
        number, a list of variances for a trajectory (`trajectory`)."""
        if not self.posterior:
            return self._with_atoms(value, atoms=False)[0]
        user, atoms = self._with_atoms(value, atoms=True)
        return self.emit.add(siren.PairOp(user, atoms)).result

    def _with_atoms(self, value, atoms: bool) -> tuple[SSAValue, SSAValue | None]:
        if isinstance(value, SSAValue):
            return value, self._points(value) if atoms else None
        if isinstance(value, SPair):
            (u1, a1), (u2, a2) = self._with_atoms(value.first, atoms), self._with_atoms(value.second, atoms)
            pair = self.emit.add(siren.PairOp(u1, u2)).result
            return pair, self.emit.add(siren.PairOp(a1, a2)).result if atoms else None
        if isinstance(value, SymDist):
            raise NotSpecialisable("the result is a distribution")
        if isinstance(value, SList):
            return self.trajectory(value, atoms)
        mean = self.engine.mean(value)
        return self.emit.num(mean), self._atom(value, mean) if atoms else None

    def _atom_of(self, mean, kind: float, params=(0.0, 0.0, 0.0), scale=0.0, shift=None) -> SSAValue:
        """A posterior atom: (mean, kind, p0, p1, p2, scale, shift), right-nested pairs of numbers."""
        nums = [mean, kind, *params, scale, mean if shift is None else shift]
        out = self.emit.num(nums[-1])
        for x in reversed(nums[:-1]):
            out = self.emit.add(siren.PairOp(self.emit.num(x), out)).result
        return out

    def _atom(self, e: Expr, mean: Num) -> SSAValue:
        """The atom of symbolic leaf `e` whose mean is `mean` (sirenrt_filter_posterior): exact where
        e is an affine function of one variable, its mean alone otherwise (tier 1's rt_sym_atom)."""
        e = self.engine.b.eval(e)
        if isinstance(e, K):
            return self._points(self.emit.num(mean))
        rvs = list({id(r): r for r in rvs_of(e)}.values())
        ab = self.engine.affine(e, rvs[0]) if len(rvs) == 1 else None
        if ab is None or not all(isinstance(x, K) for x in ab):
            return self._atom_of(mean, ATOM_MEAN)
        rv = rvs[0]
        if rv.family in ("delta", "categorical"):
            return self._atom_of(mean, ATOM_MEAN)
        self.engine.marginalize(rv)
        if rv.realized or is_static(ab[0], 0.0):
            return self._atom_of(mean, ATOM_POINT)
        params = [p.v for p in rv.params] + [0.0] * (3 - len(rv.params))
        return self._atom_of(mean, float(family(rv.family).id), params, ab[0].v, ab[1].v)

    def _points(self, v: SSAValue) -> SSAValue:
        """The atoms of a concrete value: each number a point; but a value computed from a
        trajectory's means (a list operation took them) is known by its mean alone."""
        if v in self.shadow:
            return self.shadow[v]
        t, emit = v.type, self.emit
        kind = ATOM_MEAN if self.collapsed else ATOM_POINT
        if t == f64:
            return self._atom_of(v, kind)
        if t == i1:
            return self._atom_of(emit.add(siren.BoolToFloatOp(v)).result, kind)
        if isinstance(t, siren.PairType):
            first = self._points(emit.add(siren.FstOp(v)).result)
            return emit.add(siren.PairOp(first, self._points(emit.add(siren.SndOp(v)).result))).result
        if isinstance(t, siren.ListType):
            return self._map_atoms(v, self._points)
        return v   # unit

    def _map_atoms(self, lst: SSAValue, atom_of) -> SSAValue:
        """[atom_of(x) for x in lst], by a fold and a reversal."""
        emit = self.emit
        out_type = siren.ListType(atoms_type(lst.type.element))
        body = Block(arg_types=[lst.type.element, out_type])
        saved, emit.block = emit.block, body
        emit.add(siren.YieldOp(emit.add(siren.ConsOp(atom_of(body.args[0]), body.args[1])).result))
        emit.block = saved
        init = emit.add(siren.NilOp(out_type)).result
        folded = emit.add(siren.FoldOp(lst, init, body)).result
        return emit.add(siren.RevOp(folded)).result

    # -- symbolic ops

    def arith(self, op) -> None:
        b = self.engine.b
        if isinstance(op, siren.NegOp):
            self.staged[op.result] = b.mul(K(-1.0), self.as_expr(op.operands[0]))
            return
        if isinstance(op, siren.BoolToFloatOp | siren.FloatToBoolOp):
            self.staged[op.result] = self.as_expr(op.operands[0])
            return
        lhs, rhs = self.as_expr(op.lhs), self.as_expr(op.rhs)
        if isinstance(op, siren.MulOp):
            for k, other in ((lhs, rhs), (rhs, lhs)):
                if isinstance(k, K) and not k.static and not isinstance(other, K):
                    # The runtime drops a product with a constant 0 (ARCHITECTURE.md §6.3): with a factor known
                    # only at run time, which variables depend on which would depend on it.
                    raise NotSpecialisable("a symbolic value is multiplied by a number known only at run "
                                           "time (a 0 there would change the dependencies)", op)
        fn = {siren.AddOp: b.add, siren.SubOp: b.sub, siren.MulOp: b.mul, siren.DivOp: b.div,
              siren.LtOp: b.lt, siren.EqOp: b.eq}[type(op)]
        self.staged[op.result] = fn(lhs, rhs)

    def to_sym(self, op: siren.ToSymOp) -> None:
        src = op.operand
        if isinstance(src.type, siren.DistType):
            self.staged[op.result] = self._dist_params(src.owner, op)
            return
        self.staged[op.result] = K(self.known(self.vmap[src]))

    def _dist_params(self, dist, op) -> SymDist:
        if not isinstance(dist, siren.DistOp):
            raise NotSpecialisable("internal: a distribution that is not a siren.dist", op)
        if any(not (is_sym(p.type) or p.type in (f64, i1)) for p in dist.params):
            raise NotSpecialisable("tier 2 keeps no symbolic variable with a list parameter", op)
        return SymDist(dist.family.data, [self.as_expr(p) for p in dist.params])

    def dist(self, op: siren.DistOp) -> None:
        self.staged[op.result] = self._dist_params(op, op)

    def assume(self, op: siren.AssumeOp) -> None:
        ann = op.annotation.data if op.annotation is not None else None
        d = self.get(op.dist) if op.dist in self.staged else self._dist_params(op.dist.owner, op)
        value = self._guard(op, lambda: self.engine.assume(d.family, d.params, op.var.data, ann))
        if is_sym(op.result.type):
            self.staged[op.result] = value
            return
        assert isinstance(value, K)
        num = self.emit.num(value.v)
        if op.result.type == i1:
            num = self.emit.add(siren.FloatToBoolOp(num)).result
        self.vmap[op.result] = num

    def observe(self, op: siren.ObserveOp) -> None:
        d = self.get(op.dist)
        self._guard(op, lambda: self.engine.observe(d.family, d.params, self.vmap[op.value]))
        self.vmap[op.result] = self.emit.add(siren.ConstOp(None)).result

    def force(self, op: siren.ForceOp) -> None:
        num = self.emit.num(self._guard(op, lambda: self.engine.force(self.expr(op.operand))))
        if op.result.type == i1:
            num = self.emit.add(siren.FloatToBoolOp(num)).result
        self.vmap[op.result] = num

    @staticmethod
    def _guard(op, fn):
        try:
            return fn()
        except NotSpecialisable as e:
            if e.op is None:
                e.op = op
            raise

    def pair(self, op: siren.PairOp) -> None:
        self.staged[op.result] = SPair(self.get(op.first), self.get(op.second))

    def project(self, op) -> None:
        p = self.get(op.pair)
        assert isinstance(p, SPair)
        self._bind(op.result, p.first if isinstance(op, siren.FstOp) else p.second)

    def ite(self, op: siren.IfOp) -> None:
        if not is_sym(op.cond.type):
            self._branch(op)
            return
        cond = self.expr(op.cond)
        then_value = self.run_block(op.then_region.block)
        else_value = self.run_block(op.else_region.block)
        self.emit.location = op.location
        self._bind(op.result, self._ite(cond, then_value, else_value))

    def _branch(self, op: siren.IfOp) -> None:
        """An if on a concrete condition with symbolic operations inside: a plain `siren.if` when
        neither branch changes a variable that exists before it (it may score, or draw, fresh
        ones: an observation whose parameters are numbers) and both yield numbers. Otherwise, in
        a loop body, the body forks on the condition (`_explore`) and each path runs only the
        branch it selects, as the runtime does (ARCHITECTURE.md §7.5, 3)."""
        cond = self.vmap[op.cond]
        if self.emit.is_decided(cond):
            region = op.then_region if self.emit.decide(cond, "") else op.else_region
            self._bind(op.result, self.run_block(region.block))
            return
        try:
            self._plain_if(op, cond)
        except NotSpecialisable:
            if not self.emit.can_fork():
                raise
            raise Fork(truth_of(cond)) from None

    def _plain_if(self, op: siren.IfOp, cond: SSAValue) -> None:
        blocks, before = [], self.engine.touched
        saved_epoch, self.engine.epoch = self.engine.epoch, self.engine.born
        for region in (op.then_region, op.else_region):
            block = Block()
            saved, self.emit.block = self.emit.block, block
            value = self.run_block(region.block)
            if self.engine.touched != before or isinstance(value, SPair | SymDist) or \
                    (isinstance(value, Expr) and not isinstance(self.engine.b.eval(value), K)):
                self.emit.block = saved
                self.engine.epoch = saved_epoch
                _discard(block)
                for b in blocks:
                    _discard(b)
                raise NotSpecialisable("an if on a run-time condition changes symbolic variables or yields "
                                       "them (tier 2 needs one structure on every path)", op)
            if isinstance(value, Expr):
                value = self.emit.num(self.engine.b.eval(value).v)
            self.emit.add(siren.YieldOp(value))
            self.emit.block = saved
            blocks.append(block)
        self.engine.epoch = saved_epoch
        self.emit.location = op.location
        result_type = f64 if is_sym(op.result.type) else op.result.type
        result = self.emit.add(siren.IfOp(cond, result_type, blocks[0], blocks[1])).result
        self._bind(op.result, K(result) if is_sym(op.result.type) else result)

    def _ite(self, cond: Expr, t, f):
        if isinstance(t, SPair) and isinstance(f, SPair):
            return SPair(self._ite(cond, t.first, f.first), self._ite(cond, t.second, f.second))
        if isinstance(t, SSAValue) and t.type == siren.unit:
            return t
        to_expr = (lambda v: K(self.known(v)) if isinstance(v, SSAValue) else v)
        return self.engine.b.ite(cond, to_expr(t), to_expr(f))

    # -- trajectories

    def nil(self, op: siren.NilOp) -> None:
        self.staged[op.result] = SList([], None)

    def cons(self, op: siren.ConsOp) -> None:
        tail = self.get(op.tail)
        if not isinstance(tail, SList):
            raise NotSpecialisable("internal: a symbolic list that is not a trajectory", op)
        self.staged[op.result] = SList([self.get(op.head), *tail.items], tail.records)

    def list_op(self, op) -> None:
        value = self.get(op.operand)
        if isinstance(value, SList) and isinstance(op, siren.HdOp | siren.TlOp) and \
                len(value.items) > (0 if isinstance(op, siren.HdOp) else 1):
            self._bind(op.result, value.items[0] if isinstance(op, siren.HdOp) else
                       SList(value.items[1:], value.records))
            return
        atoms = self.shadow.get(value) if isinstance(value, SSAValue) else None
        if isinstance(value, SList):
            value, atoms = self.trajectory(value, self.posterior and not isinstance(op, siren.LenOp))
            self.collapsed = True
        new = type(op)(value)
        if op.site is not None:
            new.site = op.site
        result = self.emit.add(new).result
        if isinstance(op, siren.LenOp) and self.posterior:   # a length is a point, whatever its elements
            self.shadow[result] = self._atom_of(result, ATOM_POINT)
        elif atoms is not None:
            shadow = self.emit.add(type(op)(atoms)).result
            # A trajectory's atoms are its elements' variances: an element alone gets a whole atom.
            self.shadow[result] = self._atom_of(result, float(family("gaussian").id), (result, shadow, 0.0), 1.0, 0.0) \
                if isinstance(op, siren.HdOp) else shadow
        self._bind(op.result, K(result) if is_sym(op.result.type) else result)

    def normalize(self, value):
        """`value` with every trajectory in its loop form: one element, then the records."""
        if isinstance(value, SPair):
            return SPair(self.normalize(value.first), self.normalize(value.second))
        if not isinstance(value, SList):
            return value
        records = value.records
        if records is None:
            records = self.emit.add(siren.NilOp(siren.ListType(self._record_type()))).result
        if not value.items:
            return SList([], records)
        for k in reversed(range(1, len(value.items))):
            a, b, c = (self.emit.num(x) for x in self._record(value.items[k], value.items[k - 1]))
            pair = self.emit.add(siren.PairOp(a, self.emit.add(siren.PairOp(b, c)).result if self.trajectory_atoms
                                              else b)).result
            records = self.emit.add(siren.ConsOp(pair, records)).result
        return SList(value.items[:1], records)

    def _record_type(self) -> Attribute:
        return POSTERIOR_RECORD if self.trajectory_atoms else RECORD

    def _record(self, item: Expr, after: Expr) -> tuple[Num, Num, Num]:
        """(a, b, c): the mean of `item` is a * (the mean of `after`) + b, for good, and its
        variance given `after` is c."""
        b = self.engine.b
        item, after = b.eval(item), b.eval(after)
        if isinstance(item, K):
            return 0.0, item.v, 0.0
        if self.engine.method == "ds":
            raise NotSpecialisable("a list of symbolic values under ds, whose final expectation draws its "
                                   "elements (grafting each one prunes the next)")
        if not isinstance(item, R) or item.rv.family != "gaussian":
            raise NotSpecialisable("a list of symbolic values whose older elements are not Gaussian "
                                   "conditionals of the next one")
        rv = item.rv
        self.engine.eval_params(rv)
        mu = rv.params[0]
        if isinstance(after, R):
            ab = self.engine.affine(mu, after.rv)
        else:
            ab = (K(0.0), mu)
        if ab is None or not all(isinstance(x, K) for x in ab):
            raise NotSpecialisable("a list of symbolic values whose older elements depend on more than the "
                                   "next one (the state would grow)")
        if not isinstance(rv.params[1], K):
            raise NotSpecialisable("a list of symbolic values whose older elements have a symbolic variance")
        self.engine.retired[rv] = True
        return ab[0].v, ab[1].v, rv.params[1].v

    def trajectory(self, value: SList, atoms: bool) -> tuple[SSAValue, SSAValue | None]:
        """The per-particle means of a trajectory's elements, as a list of numbers (ARCHITECTURE.md §10.4), and
        with `atoms` their posterior atoms: the elements' variances alone, a list of numbers beside
        the means (sirenrt_model.frame_result_type's compact atom), which the backward pass over the
        records gives as it gives the means (the smoother's); NaN for an element that is not
        Gaussian (known by its mean alone), and for every one older than it."""
        self.engine.finished = True
        means = [self.engine.mean(item) for item in value.items]
        explicit = [self.emit.num(m) for m in means]
        out = self._backward(value.records, explicit, lambda a, b, c, prev: (a * prev) + b)
        if not atoms:
            return out, None
        variances = [self._variance(item) for item in value.items]
        known = [self.emit.num(math.nan if v is None else v) for v in variances]
        return out, self._backward(value.records, known, lambda a, b, c, prev: (a * a * prev) + c)

    def _variance(self, e: Expr) -> Num | None:
        """The variance of a Gaussian (or drawn) element whose mean was taken; None for another."""
        e = self.engine.b.eval(e)
        if isinstance(e, K) or (isinstance(e, R) and e.rv.realized):
            return 0.0
        if isinstance(e, R) and e.rv.family == "gaussian" and isinstance(e.rv.params[1], K):
            return e.rv.params[1].v
        return None

    def _backward(self, records: SSAValue | None, explicit: list[SSAValue], step) -> SSAValue:
        """The explicit numbers, then one per record, each `step(a, b, c, the one before)` on the
        record's (a, b, c) (c is 0 in a record without one), from the last explicit number."""
        emit = self.emit
        out = emit.add(siren.NilOp(siren.ListType(f64))).result
        # Records follow a first element: a list without one (still empty) has none.
        if records is not None and explicit:
            record_type = records.type.element
            acc_type = siren.PairType(f64, siren.ListType(f64))
            body = Block(arg_types=[record_type, acc_type])
            saved, emit.block = emit.block, body
            record, acc = body.args
            a, rest = emit.add(siren.FstOp(record)).result, emit.add(siren.SndOp(record)).result
            if record_type == RECORD:
                b, c = rest, emit.const(0.0)
            else:
                b, c = emit.add(siren.FstOp(rest)).result, emit.add(siren.SndOp(rest)).result
            prev, done = emit.add(siren.FstOp(acc)).result, emit.add(siren.SndOp(acc)).result
            m = step(_Arith(emit, a), _Arith(emit, b), _Arith(emit, c), _Arith(emit, prev)).value
            emit.add(siren.YieldOp(emit.add(siren.PairOp(m, emit.add(siren.ConsOp(m, done)).result)).result))
            emit.block = saved
            init = emit.add(siren.PairOp(explicit[-1], out)).result
            folded = emit.add(siren.FoldOp(records, init, body)).result
            out = emit.add(siren.RevOp(emit.add(siren.SndOp(folded)).result)).result
        for m in reversed(explicit):
            out = emit.add(siren.ConsOp(m, out)).result
        return out

    # -- loops

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
        variants = [_Variant(entry.key, entry.statics)]
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
                self._run_body(op, _Variant(v.key, list(v.statics)), args[0], args[1:1 + len(conc_types)],
                               args[1 + len(conc_types):], scratch, admit)
                _discard(scratch)
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

    def _run_body(self, op: siren.FoldOp, variant: _Variant, elem: SSAValue, concretes: list[SSAValue],
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
    def _from_slots(v: _Variant, slots: list[SSAValue], concretes: list[SSAValue]):
        it = iter(slots)
        nums = [w if w is not None else next(it) for w in v.statics]
        return instantiate(v.key, nums, concretes)

    def _admit(self, variants: list[_Variant], out, op) -> bool:
        """True when `out`'s shape changed the set of shapes (a new one, or one widened)."""
        saved = self.emit.block
        self.emit.block = Block()
        try:
            shape = shape_of(self.engine, out)
        finally:
            _discard(self.emit.block)
            self.emit.block = saved
        if any(v.accepts(shape) for v in variants):
            return False
        for v in variants:
            if v.key == shape.key:
                v.widen(shape)
                return True
        if len(variants) == _MAX_SHAPES:
            raise NotSpecialisable(f"a loop's symbolic state takes more than {_MAX_SHAPES} shapes "
                                   "(it grows, or changes structure, from step to step)", op)
        variants.append(_Variant(shape.key, shape.statics))
        return True

    def _retire(self, value) -> None:
        """The variables `value` reaches now belong to a loop: a later use of them from outside
        would see them as they were before it."""
        c = _Canon(self.engine)
        c.value(value)
        c.rv_keys()
        for rv in c.rv_list:
            self.stale[rv] = True


def _index(variants: list[_Variant], shape: Shape) -> int:
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


def specialize(module: ModuleOp, method: str) -> Specialization:
    """Rewrites `@main` of a `symbolic-values` module into tier 2 when it qualifies; leaves it
    unchanged otherwise. Either way, says what it did."""
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    order = [op.var.data for op in main.walk() if isinstance(op, siren.AssumeOp) and op.var.data]
    s = _Specializer(method)
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
    except NotSpecialisable as e:
        _discard(body)
        # Without an op of its own the reason arose computing the result's mean: the result's op.
        at = e.op if e.op is not None else main.body.block.last_op.operands[0].owner
        span = span_of(at) if isinstance(at, Operation) else None
        return Specialization(False, e.reason, str(span) if span is not None else "")
    except Exception as e:  # noqa: BLE001 - a bug here must not cost the user the general runtime
        _discard(body)
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
        _discard(body)
        main.function_type = old_type
        return Specialization(False, f"internal error in specialize-conjugacy (its output does not verify: "
                              f"{str(e).splitlines()[0]}); the general runtime runs the program")
    _discard(old)
    plan = {}
    for var in dict.fromkeys(order):
        if var in s.engine.sampled_vars or var in s.engine.symbolic_vars:
            plan[var] = "sample" if var in s.engine.sampled_vars else "symbolic"
    return Specialization(True, runtime_plan=plan, shapes=s.shapes, posterior=s.posterior)


@dataclass(frozen=True)
class SpecializeConjugacy(ModulePass):
    name = "specialize-conjugacy"
    method: str = "ssi"

    def apply(self, ctx, op: ModuleOp) -> None:
        specialize(op, self.method)


def _inside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    node = owner if isinstance(owner, Operation) else owner.parent_op()
    while node is not None:
        if node is op:
            return True
        node = node.parent_op()
    return False


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
