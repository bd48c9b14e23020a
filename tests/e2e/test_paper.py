"""benchmarks/paper.py, the paper's evaluation: the ground truth of every benchmark model lines up
with its result, the error metric is the paper's, and the quick sweep on a small subset writes its
summary, report and figures (a few seconds)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from markers import needs_runtime

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import paper  # noqa: E402
from plans import BENCHMARKS  # noqa: E402

pytestmark = needs_runtime


@pytest.mark.parametrize("model", BENCHMARKS)
def test_truth_matches_the_result(model):
    """One true value per component of the model's result, of the result's length (a trajectory of
    100 steps, a parameter, the slam map's 11 cells), read from the data and the generator."""
    import sirenc

    true = paper.truth(model)
    f = sirenc.compile(str(paper.MODELS / model / "model.si"), method="pf").filter(particles=4, seed=0)
    est = paper.components(f.run().estimate(), len(true))
    assert len(est) == len(true)
    for (name, metric, t), e in zip(true, est, strict=True):
        assert len(np.atleast_1d(e)) == len(t), name
        assert np.all(np.isfinite(t)), name
        assert metric in ("mse", "ce")
        assert math.isfinite(paper.error(metric, t, e))


def test_error_metric():
    t = np.array([1.0, 2.0, 3.0])
    assert paper.error("mse", t, np.array([1.0, 2.0])) == pytest.approx(0.0)         # first min(n, m)
    assert paper.error("mse", t, np.array([2.0, 2.0, 5.0])) == pytest.approx(5 / 3)
    assert paper.error("mse", np.array([2.0]), 1.5) == pytest.approx(0.25)
    s = np.array([1.0, 0.0])
    assert paper.error("ce", s, np.array([1.0, 0.0])) == pytest.approx(0.0, abs=1e-9)
    assert paper.error("ce", s, np.array([0.5, 0.5])) == pytest.approx(math.log(2))


def test_reaching_the_target():
    """The paper's rule: within half an order of magnitude of the target, at the least time."""
    curve = [(1, 0.1, 100.0), (4, 0.4, 3.0), (16, 1.6, 1.0)]
    assert paper._reaches(curve, 1.0) == 0.4
    assert paper._reaches(curve, 0.1) is None
    rs = [{"model": "gtree", "method": "ds", "plan": "default", "points": [
              {"particles": n, "time": {"median": t}, "errors": {"a": {"p90": e}, "b": {"p90": e}}}
              for n, t, e in curve]},
          {"model": "gtree", "method": "ds", "plan": "2", "points": [
              {"particles": 1, "time": {"median": 0.01}, "errors": {"a": {"p90": 2.0}, "b": {"p90": 0.01}}}]}]
    rows = {r["variable"]: r for r in paper.speedups(rs)}
    assert rows["a"]["speedup"] == pytest.approx(40.0) and rows["a"]["best_plan"] == "2"
    assert rows["b"]["accuracy"] == pytest.approx(100.0) and rows["b"]["acc_plan"] == "2"


def test_quick_sweep_on_a_subset(tmp_path):
    out = tmp_path / "results"
    rc = paper.main(["--quick", "--models", "noise,gtree", "--methods", "ssi,ds", "--particles", "1,4,16",
                     "--reps", "3", "--jobs", "2", "--out", str(out)])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    got = {(r["model"], r["method"], r["plan"]) for r in summary["results"]}
    assert ("noise", "ssi", "default") in got and ("gtree", "ds", "2") in got
    assert ("noise", "ssi", "5") in got and ("noise", "ds", "3") not in got     # rejected under ds
    for r in summary["results"]:
        assert r["error"] is None
        assert [p["particles"] for p in r["points"]] == [1, 4, 16]
        assert all(p["runs"] == 3 and set(p["errors"]) == {v for v, _, _ in paper.truth(r["model"])}
                   for p in r["points"])
    prec = {(r["model"], r["method"]): r for r in summary["precision"]}
    assert prec["noise", "ssi"]["sirenc"] == ["3", "4", "5", "6", "7"] and prec["noise", "ssi"]["sirenc_all"]
    assert prec["noise", "ds"]["satisfiable"] == ["4", "5", "6", "7"] and not prec["noise", "ds"]["sirenc_unsound"]
    text = (out / "report.md").read_text()
    assert "| speed-up to reach the target accuracy: geometric mean |" in text
    assert "| noise | ssi | x |" in text
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (out / "figures" / "noise.png").stat().st_size > 0
    assert "![noise](figures/noise.png)" in text
