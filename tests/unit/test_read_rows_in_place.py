"""Step 0 of lower-smc-to-llvm (sirenc/passes/to_llvm/row_elements.py) on the benchmark models' smc:
which elements of the streamed row it reads in place, and the reads it keeps for the rows it
cannot read there."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import scf

from sirenc import driver
from sirenc.ir import smc
from sirenc.passes.rewriting import ops_of
from sirenc.passes.to_llvm.row_elements import NextRowReadingOp, read_rows_in_place

MODELS = Path(__file__).resolve().parents[2] / "benchmarks" / "models"


def reading(model: str, method: str = "pf"):
    module = driver.run_until(driver.open_source(str(MODELS / model / "model.si"), method), "smc").clone()
    read_rows_in_place(module)
    ops = ops_of(module)
    return [op for op in ops if isinstance(op, NextRowReadingOp)], ops


@pytest.mark.parametrize("model, at, length", [
    ("walk", [0], 1),            # List.hd(row)
    ("radar", [1], 2),           # List.hd(List.tl(row))
    ("gtree", [2, 3], 4),        # two heads on a chain of tails they share
    ("runner", [4, 5, 6], 7),    # three, through a tail used three times
    ("slam", [1, 2], 3),         # with arithmetic between the reads
])
def test_the_elements_a_model_reads(model, at, length):
    readings, ops = reading(model)
    assert len(readings) == 1 and not any(isinstance(op, smc.NextRowOp) for op in ops)
    r = readings[0]
    assert list(r.at.get_values()) == at and r.length.value.data == length
    assert r.point is not None and r.index.owner is r.prev_op   # the retry contract still holds


@pytest.mark.parametrize("model", ["walk", "radar", "runner"])
def test_the_row_goes_only_to_the_reads_for_a_row_not_read_in_place(model):
    (r,), _ = reading(model)
    loop = r.parent_op()
    body = loop.after_region.block
    row = body.args[list(loop.before_region.block.last_op.args).index(r.row)]
    read = body.args[len(body.args) - 1 - len(r.values)]
    branches = {use.operation.parent_op() for use in row.uses}
    assert len(branches) == 1
    branch = branches.pop()
    assert isinstance(branch, scf.IfOp) and branch.cond is read
    assert all(use.operation.parent_region() is branch.false_region for use in row.uses)


def test_the_smc_level_is_unchanged():
    """The pass runs inside lower-smc-to-llvm: --emit=smc (which the JAX back end reads) has
    no trace of it."""
    text = str(driver.run_until(driver.open_source(str(MODELS / "walk" / "model.si"), "pf"), "smc"))
    assert '"smc.next_row"' in text and "next_row_reading" not in text
