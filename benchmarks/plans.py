"""The inference plans of the benchmark models (ARCHITECTURE.md §20.1): every way of annotating each model's plan
variables `symbolic` or `sample`, numbered as Appendix B numbers them, and which of them the plan
analysis accepts under a method.

    python benchmarks/plans.py [-m ssi]      # prints, per model, the plans the analysis accepts

benchmarks/run.py times the accepted plans, and tests/e2e/test_symbolic_benchmarks.py runs them.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "benchmarks" / "models"
ORACLE = ROOT / "tests" / "data" / "appendix_b.json"
BENCHMARKS = (
    "noise", "envnoise", "radar", "aircraft", "outlier", "outlierheavy",
    "gtree", "runner", "slam", "slds", "wheels",
)


@dataclass(frozen=True)
class Plan:
    model: str
    number: str                        # Appendix B's plan number
    annotations: dict[str, str]        # plan variable -> "symbolic" | "sample"

    @property
    def label(self) -> str:
        return f"{self.model} plan {self.number}"

    def source(self) -> str:
        """The model's program with the plan written as annotations on its `<-` bindings."""
        text = (MODELS / self.model / "model.si").read_text()
        for var, ann in self.annotations.items():
            text = re.sub(rf"\blet\s+{re.escape(var)}\s*<-", f"let {ann} {var} <-", text)
        return text

    def write(self, directory: Path) -> Path:
        """The annotated program as `directory/<model>.si`, beside a copy of the model's data, so it
        reads what the model reads."""
        for data in (MODELS / self.model).glob("*.csv"):
            shutil.copy(data, directory / data.name)
        path = directory / f"{self.model}.si"
        path.write_text(self.source())
        return path


def all_plans(model: str) -> list[Plan]:
    bench = json.loads(ORACLE.read_text())["benchmarks"][model]
    return [Plan(model, number, dict(zip(bench["variables"], entry["annotations"], strict=True)))
            for number, entry in bench["plans"].items()]


def accepted_plans(model: str, method: str = "ssi") -> list[Plan]:
    """The plans of `model` that sirenc's plan analysis accepts under `method`."""
    from sirenc.diagnostics import SirenPlanError
    from sirenc.driver import lower_to_siren
    from sirenc.passes.plan_analysis import analyze

    out = []
    for plan in all_plans(model):
        try:
            analyze(lower_to_siren(plan.source()), method)
        except SirenPlanError:
            continue
        out.append(plan)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-m", "--method", default="ssi", choices=("ssi", "ds", "bp"))
    p.add_argument("models", nargs="*", default=list(BENCHMARKS))
    args = p.parse_args()
    for model in args.models:
        plans = all_plans(model)
        ok = accepted_plans(model, args.method)
        print(f"{model}: {len(ok)} of {len(plans)} plans accepted under {args.method}: "
              f"{' '.join(p.number for p in ok)}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
