"""The driver's table of stages: each product is a snapshot, and the pipeline forks."""

from __future__ import annotations

from pathlib import Path

from sirenc import driver

WALK = Path(__file__).resolve().parents[2] / "examples" / "walk.si"


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
