"""Transcribe the original's analysis oracle (the specification's appendix B) into appendix_b.json.

    python tests/data/make_appendix_b.py /path/to/specification.md > tests/data/appendix_b.json

Each benchmark maps to its plan variables (in plan-numbering order, ARCHITECTURE.md §20.1)
and, per plan number, the annotations and the verdict per method:
``{"verdict": "ok"|"Ra"|"Rb", "vars": [...], "plan": {name: enc}, "truth": "T"|"F"|"-"}``.
The last table (unannotated default programs) goes to ``"defaults"``.
"""

from __future__ import annotations

import json
import re
import sys

ENC = {"sym": "symbolic", "smp": "sample", "dyn": "dynamic"}
METHODS = ("ssi", "ds", "bp")


def parse_cell(cell: str) -> dict:
    cell = cell.strip()
    truth = re.search(r"truth=([TF-])", cell).group(1)
    m = re.match(r"ok\[(.*?)\]", cell)
    if m:
        plan = {}
        for item in m.group(1).split(";"):
            name, enc = item.split(":")
            plan[name.strip()] = ENC[enc.strip()]
        return {"verdict": "ok", "plan": plan, "truth": truth}
    m = re.match(r"(R[ab])\(([^)]*)\)", cell)
    names = [n.strip() for n in m.group(2).split(",")]
    return {"verdict": m.group(1), "vars": names, "truth": truth}


def parse_default(cell: str, names_hint: list[str]) -> dict | str:
    cell = cell.strip()
    if cell.startswith("crash"):
        return "crash"
    if cell.startswith("all "):
        return {"*": ENC[cell.split()[1]]}
    if cell.startswith("same as"):
        return cell
    plan = {}
    for item in cell.split(";"):
        name, enc = item.split(":")
        for n in name.split(","):
            plan[n.strip()] = ENC[enc.strip()]
    return plan


def main(spec_path: str) -> None:
    text = open(spec_path, encoding="utf-8").read()
    appendix = text[text.index("## Appendix B."):text.index("## Appendix C.")]
    out: dict = {"benchmarks": {}, "defaults": {}}
    current = None
    in_defaults = False
    for line in appendix.splitlines():
        header = re.match(r"#### (\w+)\s+\(variables \[(.*)\]\)", line)
        if header:
            current = header.group(1)
            variables = [v.strip().strip("'") for v in header.group(2).split(",")]
            out["benchmarks"][current] = {"variables": variables, "plans": {}}
            continue
        if line.startswith("#### Unannotated"):
            in_defaults = True
            continue
        if not line.startswith("| ") or line.startswith("| plan") or line.startswith("| benchmark"):
            continue
        cells = [c for c in line.strip().strip("|").split("|")]
        if in_defaults:
            name = cells[0].strip()
            row = {}
            for method, cell in zip(METHODS, cells[1:]):
                row[method] = parse_default(cell, [])
            for method in METHODS:
                if isinstance(row[method], str) and row[method].startswith("same as"):
                    row[method] = row[row[method].split()[-1].lower()]
            out["defaults"][name] = row
            continue
        plan_id = cells[0].strip()
        annotations = [ENC[a.strip()] if a.strip() in ENC else a.strip() for a in cells[1].split(",")]
        entry = {"annotations": annotations}
        for method, cell in zip(METHODS, cells[2:]):
            entry[method] = parse_cell(cell)
        out["benchmarks"][current]["plans"][plan_id] = entry
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
