"""The driver's table of stages: each product is a snapshot, and the pipeline forks; a stage
applies registry passes as sirenc-opt does."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from xdsl.printer import Printer

from sirenc import driver
from sirenc.opt import SirencOptMain

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WALK = EXAMPLES / "walk.si"


def _names(module) -> set[str]:
    return {op.name for op in module.walk()}


def test_every_stage_product_is_a_snapshot():
    c = driver.open_source(WALK)
    driver.run_until(c, "llvm")
    # Later stages worked on copies: each product still shows its own level.
    assert "func.call" in _names(c.products["siren"])          # not inlined yet
    assert "siren.assume" in _names(c.products["plan"])
    assert "func.call" not in _names(c.products["plan"])
    assert "smc.particle" in _names(c.products["smc"])
    assert "llvm.func" not in _names(c.products["smc"])
    assert "llvm.func" in _names(c.products["llvm-dialect"])
    assert not any(n.startswith("smc.") for n in _names(c.products["llvm-dialect"]))


def test_the_pipeline_forks_after_the_llvm_dialect():
    c = driver.open_source(WALK)
    text = driver.run_until(c, "llvm")
    module = c.products["llvm-dialect"]
    obj = driver.run_until(c, "obj")          # reuses the llvm-dialect product, does not rerun it
    assert c.products["llvm-dialect"] is module
    assert "@sirenc_model" in text and obj[:4] == b"\x7fELF"
    assert {"ast", "siren", "plan", "symbolic", "specialized", "smc", "llvm-dialect", "llvm", "obj"} == set(c.products)


def test_stages_name_their_input():
    for name, stage in driver.STAGES.items():
        assert stage.after is None or stage.after in driver.STAGES, name
    assert driver.ORDER[0] == "ast" and driver.STAGES["so"].after == "obj"


def test_without_snapshots_a_stage_consumes_its_input():
    c = driver.open_source(WALK, snapshots=False)
    module = driver.run_until(c, "llvm-dialect")
    assert "llvm.func" in _names(module)
    # Transformed in place: the inputs are gone rather than left half-transformed.
    assert not {"siren", "plan", "symbolic", "specialized", "smc"} & set(c.products)
    assert "ast" in c.products


def test_without_snapshots_a_later_stage_starts_from_the_latest_product(monkeypatch):
    c = driver.open_source(WALK, snapshots=False)
    driver.run_until(c, "plan")            # consumed the siren module
    ran = []
    for name in ("siren", "plan"):
        stage = driver.STAGES[name]
        monkeypatch.setitem(driver.STAGES, name, driver.Stage(lambda c, p, name=name: ran.append(name),
                                                              stage.after, stage.transforms))
    assert "llvm.func" in _names(driver.run_until(c, "llvm-dialect"))
    assert ran == []                       # nothing before the plan was made again


def _with_locations(module) -> str:
    # The locations carry the sites of run-time errors into the lowered program.
    out = io.StringIO()
    Printer(stream=out, print_debuginfo=True).print_op(module)
    return out.getvalue()


@pytest.mark.parametrize(("program", "method", "tier"), [("walk.si", "ds", 2), ("coin.si", "ssi", 1)])
def test_sirenc_opt_runs_what_the_driver_ran(tmp_path, program, method, tier):
    # The passes a compilation lists, as sirenc-opt's -p pipeline on its siren module, make each
    # of its stages: the driver and sirenc-opt run the same registry passes in the same kind of context.
    c = driver.open_source(EXAMPLES / program, method, tier=tier)
    siren = tmp_path / "siren.mlir"
    siren.write_text(_with_locations(driver.run_until(c, "siren")))
    for stage in ("plan", "specialized", "llvm-dialect"):
        want = _with_locations(driver.run_until(c, stage))
        out = tmp_path / f"{stage}.mlir"
        pipeline = ",".join(str(p) for p in c.passes)
        SirencOptMain(args=[str(siren), "--print-debuginfo", "-p", pipeline, "-o", str(out)]).run()
        assert out.read_text().rstrip("\n") == want, pipeline
    # What the driver reports came out of the passes it ran.
    assert [p.name for p in c.passes][:3] == ["inline-functions", "fold-constants", "plan-analysis"]
    assert c.plan is c.passes[2].result and c.plan.plan
    assert driver.specialized(c) == (tier == 2)
