"""Generated well-typed programs through the -m ssi pipeline (symbolic-values and the symbolic
lowering), in process and up to the llvm dialect (running needs the runtime's symbolic engine):
each compiles or is refused with a user error, never an internal one, and the pass leaves the
program verified, with every symbolic value where the lowering expects it."""

from __future__ import annotations

from hypothesis import given, settings

import fuzzgen
from fuzzcase import FUZZ
from sirenc import driver
from sirenc.diagnostics import SirenError
from sirenc.ir import siren


@settings(FUZZ, max_examples=60)
@given(fuzzgen.programs(ill=False, huge=False))
def test_generated_programs_compile_under_ssi(program):
    c = driver.open_source(program, "ssi", check=False)
    try:
        module = driver.run_until(c, "symbolic")
    except SirenError:
        return
    for op in module.walk():
        if isinstance(op, siren.AssumeOp):
            sampled = op.annotation is not None and op.annotation.data == "sample"
            assert isinstance(op.result.type, siren.SymType) != sampled
        if isinstance(op, siren.ObserveOp | siren.RangeOp):
            assert not any(isinstance(v.type, siren.SymType) for v in op.operands)
    try:
        driver.run_until(c, "llvm-dialect")
    except SirenError:
        pass
