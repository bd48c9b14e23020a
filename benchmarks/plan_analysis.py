"""Speed and agreement of the plan analysis on every benchmark plan (the original's analysis oracle, tests/data/appendix_b.json).

    python benchmarks/plan_analysis.py

For each of the ARCHITECTURE.md §20 models (benchmarks/models/<name>/model.si) and
each of its plans under ssi, ds and bp: the verdict against Appendix B, the
analysis time (the `plan-analysis` pass alone, on the inlined `siren` module)
and the most work an accepted plan took, against the budget (DEFAULT_BUDGET);
then each model file as written, under the three methods.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from xdsl.dialects.builtin import StringAttr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sirenc.diagnostics import SirenPlanError  # noqa: E402
from sirenc.driver import lower_to_siren  # noqa: E402
from sirenc.ir import siren  # noqa: E402
from sirenc.passes.plan_analysis import DEFAULT_BUDGET, analyze  # noqa: E402

METHODS = ("ssi", "ds", "bp")


def _analyze(module, method: str) -> tuple[str, float, int]:
    """Verdict, seconds and work (of an accepted plan; 0 for a rejection)."""
    start = time.perf_counter()
    try:
        work, verdict = analyze(module, method).work, "ok"
    except SirenPlanError:
        work, verdict = 0, "reject"
    return verdict, time.perf_counter() - start, work


def main() -> None:
    oracle = json.loads((ROOT / "tests" / "data" / "appendix_b.json").read_text())["benchmarks"]
    print(f"{'model':<21} {'analyses':>8} {'agree':>6} {'median ms':>10} {'max ms':>8} {'max work':>9}")
    every, most = [], 0
    for name, bench in oracle.items():
        path = ROOT / "benchmarks" / "models" / name / "model.si"
        if not path.exists():  # Appendix B also lists the original's toy examples
            continue
        module = lower_to_siren(str(path))
        assumes = [op for op in module.walk() if isinstance(op, siren.AssumeOp)]
        times, agree, work = [], 0, 0
        for entry in bench["plans"].values():
            wanted = dict(zip(bench["variables"], entry["annotations"]))
            for op in assumes:
                if op.var.data in wanted:
                    op.properties["annotation"] = StringAttr(wanted[op.var.data])
            for method in METHODS:
                verdict, seconds, steps = _analyze(module, method)
                times.append(seconds)
                work = max(work, steps)
                expected = entry[method]["verdict"]
                agree += (verdict == "ok") == (expected == "ok") or (verdict == "ok" and entry[method]["truth"] == "T")
        every += times
        most = max(most, work)
        print(f"{name:<21} {len(times):>8} {agree:>6} {statistics.median(times) * 1e3:>10.2f} "
              f"{max(times) * 1e3:>8.2f} {work:>9}")
    # Every model file as written (its own annotations), which Appendix B does not list.
    for path in sorted((ROOT / "benchmarks" / "models").glob("*/*.si")):
        module = lower_to_siren(str(path))
        runs = [_analyze(module, method) for method in METHODS]
        times = [seconds for _, seconds, _ in runs]
        work = max(steps for _, _, steps in runs)
        every += times
        most = max(most, work)
        print(f"{path.parent.name + '/' + path.name:<21} {len(runs):>8} {'':>6} "
              f"{statistics.median(times) * 1e3:>10.2f} {max(times) * 1e3:>8.2f} {work:>9}")
    print(f"{'all':<21} {len(every):>8} {'':>6} {statistics.median(every) * 1e3:>10.2f} "
          f"{max(every) * 1e3:>8.2f} {most:>9}")
    print(f"budget {DEFAULT_BUDGET}: {DEFAULT_BUDGET / most:.0f} times the most work of an accepted plan")


if __name__ == "__main__":
    main()
