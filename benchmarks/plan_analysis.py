"""Speed and agreement of the plan analysis on every benchmark plan (SPEC Appendix B).

    python benchmarks/plan_analysis.py

For each of the SPEC Section 20 models (benchmarks/models/<name>/model.si) and
each of its plans under ssi, ds and bp: the verdict against Appendix B and the
analysis time (the `plan-analysis` pass alone, on the inlined `siren` module).
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
from sirenc.passes.plan_analysis import analyze  # noqa: E402

METHODS = ("ssi", "ds", "bp")


def main() -> None:
    oracle = json.loads((ROOT / "tests" / "data" / "appendix_b.json").read_text())["benchmarks"]
    print(f"{'model':<13} {'analyses':>8} {'agree':>6} {'median ms':>10} {'max ms':>8}")
    every = []
    for name, bench in oracle.items():
        path = ROOT / "benchmarks" / "models" / name / "model.si"
        if not path.exists():  # Appendix B also lists the original's toy examples
            continue
        module = lower_to_siren(str(path))
        assumes = [op for op in module.walk() if isinstance(op, siren.AssumeOp)]
        times, agree = [], 0
        for entry in bench["plans"].values():
            wanted = dict(zip(bench["variables"], entry["annotations"]))
            for op in assumes:
                if op.var.data in wanted:
                    op.properties["annotation"] = StringAttr(wanted[op.var.data])
            for method in METHODS:
                start = time.perf_counter()
                try:
                    analyze(module, method)
                    verdict = "ok"
                except SirenPlanError:
                    verdict = "reject"
                times.append(time.perf_counter() - start)
                expected = entry[method]["verdict"]
                agree += (verdict == "ok") == (expected == "ok") or (verdict == "ok" and entry[method]["truth"] == "T")
        every += times
        print(f"{name:<13} {len(times):>8} {agree:>6} {statistics.median(times) * 1e3:>10.2f} {max(times) * 1e3:>8.2f}")
    print(f"{'all':<13} {len(every):>8} {'':>6} {statistics.median(every) * 1e3:>10.2f} {max(every) * 1e3:>8.2f}")


if __name__ == "__main__":
    main()
