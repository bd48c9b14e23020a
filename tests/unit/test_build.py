"""The cheap op and attribute builders (sirenc/ir/build.py) make what xDSL's constructors make."""

from __future__ import annotations

import math

import pytest
from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import FileLineColLoc, FloatAttr, FunctionType, IntAttr, StringAttr, f64, i1
from xdsl.ir import Block, Region
from xdsl.printer import Printer

from sirenc.diagnostics import Span
from sirenc.ir import siren
from sirenc.ir.build import Attributes, new_block, new_func, new_op, new_region


def _generic(op) -> str:
    from io import StringIO

    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(op)
    return out.getvalue()


def _same(built, expected, verify: bool = True) -> None:
    assert type(built) is type(expected)
    assert set(vars(built)) == set(vars(expected))   # no field left out or added
    assert built.properties == expected.properties
    assert built.attributes == expected.attributes
    assert built.location == expected.location
    assert list(built.operands) == list(expected.operands)
    assert [r.type for r in built.results] == [r.type for r in expected.results]
    assert [(u.operation, u.index) for u in built._operand_uses] == \
        [(built, i) for i in range(len(expected.operands))]
    assert all(r.op is built and r.index == i for i, r in enumerate(built.results))
    assert _generic(built) == _generic(expected)
    if verify:
        built.verify()


@pytest.fixture
def args():
    return Block(arg_types=[f64, f64]).args


@pytest.mark.parametrize("cls", [arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp])
def test_arith_binop(cls, args):
    x, y = args
    _same(new_op(cls, [x, y], [f64]), cls(x, y))


@pytest.mark.parametrize("cls", [llvm.FAddOp, llvm.FSubOp, llvm.FMulOp, llvm.FDivOp])
def test_llvm_binop(cls, args):
    x, y = args
    _same(new_op(cls, [x, y], [f64]), cls(x, y))


def test_negations(args):
    x, _ = args
    _same(new_op(arith.NegfOp, [x], [f64]), arith.NegfOp(x))
    _same(new_op(llvm.FNegOp, [x], [f64]), llvm.FNegOp(x))


def test_constants():
    value = FloatAttr(2.5, f64)
    _same(new_op(arith.ConstantOp, (), [f64], {"value": value}), arith.ConstantOp(value))
    _same(new_op(llvm.ConstantOp, (), [f64], {"value": value}), llvm.ConstantOp(value, f64))


def test_one_variadic_operand_and_result(args):
    x, y = args
    attrs = Attributes()
    # (a call and a return verify only inside a module and a function)
    _same(new_op(func.CallOp, [x, y], [f64, i1], {"callee": attrs.symbol("f")}), func.CallOp("f", [x, y], [f64, i1]),
          verify=False)
    _same(new_op(func.ReturnOp, [x], []), func.ReturnOp(x), verify=False)
    assert attrs.symbol("f") is attrs.symbol("f")
    assert attrs.function_type((f64,), (i1,)) == FunctionType.from_lists([f64], [i1])


def test_uses_are_linked(args):
    x, y = args
    a = new_op(arith.AddfOp, [x, x], [f64])
    b = arith.AddfOp(a.results[0], y)
    assert {(u.operation, u.index) for u in x.uses} == {(a, 0), (a, 1)}
    assert [(u.operation, u.index) for u in a.results[0].uses] == [(b, 0)]
    a.results[0].replace_all_uses_with(y)
    assert b.lhs is y and not a.results[0].uses


def test_siren_ops_built_in_place(args):
    x, y = args
    # init_op in the siren ops' own constructors: as IRDLOperation.__init__ builds them.
    for op, operands, types in [(siren.AddOp(x, y), [x, y], [f64]), (siren.NegOp(x), [x], [f64]),
                                (siren.LtOp(x, y), [x, y], [i1]), (siren.ConstOp(1.5), [], [f64])]:
        expected = type(op).create(operands=operands, result_types=types, properties=op.properties)
        _same(op, expected)


def test_ops_with_regions_or_segments_are_refused(args):
    x, _ = args
    for cls in (llvm.CallOp, func.FuncOp):
        with pytest.raises(TypeError):
            new_op(cls, [x], [f64])


@pytest.mark.parametrize("visibility", [None, StringAttr("private")])
def test_functions(visibility):
    def body():
        block = Block(arg_types=[f64])
        block.add_op(func.ReturnOp(block.args[0]))
        return Region(block)

    ftype = FunctionType.from_lists([f64], [f64])
    built = new_func("f", ftype, body(), visibility)
    expected = func.FuncOp("f", ftype, body(), visibility)
    assert set(vars(built)) == set(vars(expected))
    assert built.properties == expected.properties and built.attributes == expected.attributes
    assert built.body.parent is built
    assert _generic(built) == _generic(expected)
    built.verify()


def test_attributes_are_shared_and_exact():
    attrs = Attributes()
    for v in (0.0, -0.0, 1.5, math.inf, -math.inf, 5e-324, math.nan):
        a = attrs.float(v)
        assert a is attrs.float(v)
        assert a == FloatAttr(v, f64) or math.isnan(v)
        assert math.copysign(1, a.value.data) == math.copysign(1, v)
    assert attrs.float(0.0) is not attrs.float(-0.0)
    span = Span("m.si", 3, 7, 3, 9)
    loc = attrs.loc(span)
    assert loc == FileLineColLoc(StringAttr("m.si"), IntAttr(3), IntAttr(7))
    assert attrs.loc(Span("m.si", 3, 7, 3, 12)) is loc
    assert hash(loc) == hash(FileLineColLoc(StringAttr("m.si"), IntAttr(3), IntAttr(7)))


def test_blocks_and_regions():
    built, expected = new_block([f64, i1]), Block(arg_types=[f64, i1])
    assert set(vars(built)) == set(vars(expected))
    assert [(a.type, a.block, a.index, a.location) for a in built.args] == \
        [(a.type, built, a.index, a.location) for a in expected.args]
    assert built.first_op is None and built.last_op is None
    region, expected_region = new_region(built), Region(expected)
    assert set(vars(region)) == set(vars(expected_region))
    assert built.parent is region and region.block is built
