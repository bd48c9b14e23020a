"""An op a lowering has no rule for is a `LoweringError` (sirenc/passes/errors.py): a bug in
sirenc, which `sirenc-opt --verify-diagnostics` prints as one line (the cases are in
tests/filecheck/lower_smc_to_llvm/errors.mlir) and `sirenc` reports as an internal
compiler error, exit status 3, one line and a hint, no traceback."""

from __future__ import annotations

import pytest
from xdsl.dialects import math
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from sirenc import cli, driver
from sirenc.diagnostics import SirenError
from sirenc.ir import smc
from sirenc.passes.errors import LoweringError
from sirenc.registry import get_pass

PROGRAM = "let x <- gaussian(0., 1.) in x"


def _with_exp_after_the_draw(module):
    """The particle with a math.exp (which lower-smc-to-llvm has no pattern for) after its draw."""
    draw = next(op for op in module.walk() if isinstance(op, smc.SampleOp))
    exp = math.ExpOp(draw.result)
    exp.location = draw.location
    Rewriter.insert_op(exp, InsertPoint.after(draw))
    return module


def test_a_lowering_error_is_a_compiler_bug_that_sirenc_opt_prints():
    assert issubclass(LoweringError, PassFailedException)
    assert not issubclass(LoweringError, SirenError)


def test_lower_smc_to_llvm_raises_it(tmp_path):
    path = tmp_path / "model.si"
    path.write_text(PROGRAM + "\n")
    c = driver.open_source(str(path))
    module = _with_exp_after_the_draw(driver.run_until(c, "smc").clone())
    with pytest.raises(LoweringError, match=rf"no lowering for math\.exp \(at {path}:1:10\)"):
        get_pass("lower-smc-to-llvm")().apply(None, module)


def test_the_cli_reports_it_as_an_internal_compiler_error(tmp_path, monkeypatch, capsys):
    path = tmp_path / "model.si"
    path.write_text(PROGRAM + "\n")
    smc_stage = driver.STAGES["smc"]
    monkeypatch.setitem(driver.STAGES, "smc", driver.Stage(
        lambda c, module: _with_exp_after_the_draw(smc_stage.run(c, module)), smc_stage.after, smc_stage.transforms))
    monkeypatch.delenv("SIRENC_TRACEBACK", raising=False)

    assert cli.main([str(path), "--emit=llvm-dialect"]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"sirenc: internal compiler error: LoweringError: lower-smc-to-llvm: no lowering for math.exp (at {path}:1:10)",
        "This is a bug in sirenc; SIRENC_TRACEBACK=1 shows where it happened.",
    ]
