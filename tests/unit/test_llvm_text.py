"""sirenc.backend.llvm_text against xDSL's own converter: the same functions, names included."""

from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm
import pytest
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm as llvm_dialect

from sirenc import driver
from sirenc.backend.llvm_text import module_text
from sirenc.passes.to_llvm.resume_abi import COLD_CALL

REPO = Path(__file__).resolve().parents[2]
# Between them: phis, lists in a private global (a GEP of a typed pointer), log and sqrt
# intrinsics, symbolic calls, streamed rows.
PROGRAMS = [("examples/walk.si", "pf"), ("examples/coin.si", "ssi"), ("benchmarks/models/aircraft/model.si", "pf"),
            ("benchmarks/models/slds/model.si", "ds"), ("benchmarks/models/radar/model.si", "bp")]


def _keep(declared: str) -> str:
    return "external" if declared == "internal" else declared


def _without_call_attributes(fn_text: str) -> str:
    """A function's text without its calls' attribute groups: xDSL's converter does not know the
    `cold` that sirenc gives a call on a rare path (COLD_CALL), the one attribute a call gets."""
    return re.sub(r"^(.*= call .*\)|\s*call .*\)) #\d+$", r"\1", fn_text, flags=re.M)


def _dialect(path: str, method: str):
    return driver.run_until(driver.open_source(str(REPO / path), method), "llvm-dialect")


@pytest.mark.parametrize("path,method", PROGRAMS)
def test_functions_match_xdsls_converter(path, method):
    module = _dialect(path, method)
    text = module_text(module, _keep)
    ours = llvm.parse_assembly(text.body + "\n\n" + text.intrinsics)
    theirs = llvm.parse_assembly(str(convert_module(module, fallback_target_triple=None)))
    for fn in theirs.functions:
        if not fn.is_declaration:
            assert _without_call_attributes(str(ours.get_function(fn.name))) == str(fn)
            assert sum(1 for b in fn.blocks for _ in b.instructions) == text.sizes[fn.name]
    assert {g.name for g in ours.global_variables} == {g.name for g in theirs.global_variables}


def test_an_op_it_does_not_know_is_refused():
    module = _dialect("examples/walk.si", "pf")
    fn = next(op for op in module.ops if isinstance(op, llvm_dialect.FuncOp) and op.body.blocks)
    block = fn.body.blocks[-1]
    block.insert_op_before(llvm_dialect.ZeroOp.create(result_types=[llvm_dialect.LLVMPointerType()]), block.last_op)
    with pytest.raises(ValueError, match="no translation for llvm.mlir.zero"):
        module_text(module, _keep)


def test_rare_paths_call_the_runtime_cold():
    """The walk's calls that finish what the inline code does not (a row not in the table, an invalid
    variance, a zero weight, a list that is not a row) are `cold`; a call on the common path is not."""
    module = _dialect("examples/walk.si", "pf")
    calls = [op for op in module.walk() if isinstance(op, llvm_dialect.CallOp)]
    cold = {op.callee.string_value() for op in calls if COLD_CALL in op.attributes}
    assert cold == {"sirenrt_stream_row", "sirenrt_sample_gaussian", "sirenrt_observe_gaussian",
                    "sirenrt_add_log_weight", "sirenrt_list_head_word"}
    assert {op.callee.string_value() for op in calls if COLD_CALL not in op.attributes} == {"sirenrt_std_normal"}
    text = module_text(module, _keep).body
    for name in cold:
        assert re.search(rf'call \S+ @"{name}"\(.*\) cold$', text, re.M), name
    assert not re.search(r'@"sirenrt_std_normal"\(.*\) cold', text)
