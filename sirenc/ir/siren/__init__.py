"""The `siren` dialect: one op per Siren language construct.

User functions are ``func.func``/``func.call``/``func.return`` (the standard
dialect) so that ``inline-functions`` can use plain symbol lookup; the main
expression is ``func.func @main``. Everything else is here. Values are typed
statically: ``f64`` (every number), ``i1`` (bool), ``!siren.unit``,
``!siren.string``, ``!siren.pair<A, B>``, ``!siren.list<T>`` and
``!siren.dist<"family">``. Under ``-m ssi|ds|bp`` the ``symbolic-values`` pass retypes the
values that may be symbolic: a number or bool that may be a symbolic expression is
``!siren.sym``, a distribution with such a parameter ``!siren.symdist<"family">``, and
``siren.to_sym`` / ``siren.force`` convert between the two worlds. Each op carries its source location in
``op.location`` so later stages can report errors against the user's code.

Example (`let x <- gaussian(0., 1.) in observe(gaussian(x, 1.), 2.)`)::

    %0 = "siren.const"() <{value = 0.0 : f64}> : () -> f64
    %1 = "siren.const"() <{value = 1.0 : f64}> : () -> f64
    %2 = "siren.dist"(%0, %1) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"gaussian">
    %x = "siren.assume"(%2) <{var = "x"}> : (!siren.dist<"gaussian">) -> f64
"""

from __future__ import annotations

from xdsl.ir import Dialect

from sirenc.ir.accessors import direct_accessors
# The dialect's namespace is its API (`siren.ConsOp`): the modules below hand their names on here.
from sirenc.ir.siren.arithmetic import (
    FOLDS, AddOp, BinaryFloatOp, BoolToFloatOp, ConstOp, DivOp, EqOp, FloatToBoolOp, LtOp, MulOp, NegOp, SubOp,
    float_constant, folded,
)
from sirenc.ir.siren.control import FoldOp, IfOp, MapOp, YieldOp
from sirenc.ir.siren.lists import ConsOp, FileReadOp, HdOp, LenOp, ListUnaryOp, NilOp, RangeOp, RevOp, TlOp
from sirenc.ir.siren.pairs import FstOp, PairOp, ProjectionOp, SndOp, pack, unpack
from sirenc.ir.siren.probabilistic import AssumeOp, DistOp, ObserveOp, ResampleOp
from sirenc.ir.siren.symbolic import ForceOp, ToSymOp
from sirenc.ir.siren.types import (
    DistType, ListType, PairType, StringType, SymDistType, SymType, UnitType, dist_type, draw_type, holds, is_sym,
    string, sym, symdist_type, unit,
)

_OPS = [
    ConstOp, AddOp, SubOp, MulOp, DivOp, NegOp, EqOp, LtOp, BoolToFloatOp, FloatToBoolOp,
    PairOp, FstOp, SndOp,
    NilOp, ConsOp, HdOp, TlOp, LenOp, RevOp, RangeOp, FileReadOp,
    YieldOp, IfOp, FoldOp, MapOp,
    DistOp, AssumeOp, ObserveOp, ResampleOp,
    ToSymOp, ForceOp,
]
for _op in _OPS:
    direct_accessors(_op)

Siren = Dialect("siren", _OPS, [UnitType, StringType, PairType, ListType, DistType, SymType, SymDistType])
