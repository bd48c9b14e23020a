"""The plan analysis has a rule for every op it may meet, and no default (issue 6).

An op without a rule used to get an unknown value, so an op that a later change
forgot would be passed over silently; now it is an internal compiler error
(exit status 3) that names the op.
"""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, func, test
from xdsl.dialects.builtin import FloatAttr, f64
from xdsl.rewriter import InsertPoint, Rewriter

from sirenc import cli
from sirenc.diagnostics import SirenError
from sirenc.driver import lower_to_siren
from sirenc.ir import siren
from sirenc.passes.plan_analysis import UnknownOperation, analyze
from sirenc.passes.plan_analysis.interpreter import RULES, TERMINATORS

PROGRAM = "let x <- gaussian(0., 1.) in x + 1."


def test_every_siren_op_has_a_rule():
    ops = set(siren.Siren.operations)
    # Inlining removes no siren op: every one of them can reach the analysis.
    assert ops - set(RULES) - set(TERMINATORS) == set()
    assert set(RULES) <= ops
    assert set(TERMINATORS) == {siren.YieldOp, func.ReturnOp}


def _with_op_before_return(op):
    module = lower_to_siren(PROGRAM)
    main = next(o for o in module.ops if isinstance(o, func.FuncOp))
    Rewriter.insert_op(op, InsertPoint.before(main.body.block.last_op))
    return module


@pytest.mark.parametrize("make, name", [
    (lambda: test.TestOp(result_types=[f64]), "test.op"),
    (lambda: arith.ConstantOp(FloatAttr(1.0, f64)), "arith.constant"),
])
@pytest.mark.parametrize("method", ["ssi", "ds", "bp"])
def test_an_op_without_a_rule_is_an_internal_error(make, name, method):
    module = _with_op_before_return(make())
    with pytest.raises(UnknownOperation, match=f"plan-analysis has no rule for '{name}'"):
        analyze(module, method)
    assert not issubclass(UnknownOperation, SirenError)  # not the user's fault


def test_a_call_left_by_a_missing_inlining_is_an_internal_error():
    module = lower_to_siren("val f = fun x -> x + 1. in\nf(2.)", inline=False)
    with pytest.raises(UnknownOperation, match="no rule for 'func.call'"):
        analyze(module, "ssi")


def test_the_cli_reports_it_as_an_internal_compiler_error(tmp_path, monkeypatch, capsys):
    from sirenc.frontend import irgen

    path = tmp_path / "model.si"
    path.write_text(PROGRAM + "\n")
    plain = irgen.irgen

    def irgen_with_unknown_op(typed):
        module = plain(typed)
        main = next(o for o in module.ops if isinstance(o, func.FuncOp))
        Rewriter.insert_op(test.TestOp(), InsertPoint.before(main.body.block.last_op))
        return module

    monkeypatch.setattr(irgen, "irgen", irgen_with_unknown_op)
    assert cli.main(["check", "-m", "ssi", str(path)]) == 3
    err = capsys.readouterr().err
    assert "internal compiler error: UnknownOperation: plan-analysis has no rule for 'test.op'" in err
