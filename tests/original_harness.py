"""How the original's benchmark harness reads a run's standard output (ARCHITECTURE.md §18 and 20.2).

Written for these tests from the original's documented behaviour, not taken from the harness: it depends on the
exact header lines, the result on the single line after `===== Result =====` read with
`ast.literal_eval`, the float on the line after `===== Evaluation Time =====`, and the
`name: encoding` lines after the plan headers -- every line after `===== Runtime Inference Plan
=====` to the end of the output is split as `name: encoding`, so anything printed after that
block breaks it ("not enough values to unpack").
"""

from __future__ import annotations

import ast
import re

# The original's blocks in its order (ARCHITECTURE.md §18); each is optional, the order is fixed.
ORDER = ["Handler", "Inference Algorithm", "Inferred Inference Plan", "Analysis Time",
         "Evaluation Time", "Result", "Mixture", "Prob State", "Runtime Inference Plan"]
ENCODINGS = {"symbolic", "sample", "dynamic"}
_HEADER = re.compile(r"^===== (.+) =====$")


def blocks(stdout: str) -> list[tuple[str, list[str]]]:
    """The output's blocks in order: (header name, the lines up to the next header)."""
    out: list[tuple[str, list[str]]] = []
    for line in stdout.splitlines():
        m = _HEADER.match(line)
        if m:
            out.append((m.group(1), []))
        else:
            assert out, f"a line before the first header: {line!r}"
            out[-1][1].append(line)
    return out


def _plan(lines: list[str]) -> dict[str, str]:
    plan = {}
    text = "\n".join(lines).strip()
    for line in text.split("\n") if text else []:
        name, encoding = line.split(": ")          # the harness' unpacking
        assert encoding in ENCODINGS, line
        plan[name] = encoding
    return plan


def flatten(value) -> list:
    """The harness' view of a result (20.2): nested tuples flattened, lists kept, scalars wrapped."""
    if isinstance(value, tuple):
        return [item for part in value for item in flatten(part)]
    if isinstance(value, list):
        return [value]
    return [[value]]


def parse(stdout: str) -> dict:
    """Read the output as the harness does; an assertion fails where the harness would fail."""
    found = [(name, lines) for name, lines in blocks(stdout) if name in ORDER]
    names = [name for name, _ in found]
    # The harness finds blocks by their headers: one it does not know is skipped, except after
    # the runtime plan, whose lines it reads to the end of the output (checked below).
    assert names == sorted(names, key=ORDER.index) and len(set(names)) == len(names), names
    assert names[:2] == ["Handler", "Inference Algorithm"], names
    report: dict = {"blocks": names, "handler": dict(found)["Handler"][0],
                    "method": dict(found)["Inference Algorithm"][0]}
    sections = dict(found)
    if "Inferred Inference Plan" in sections:
        report["inferred_plan"] = _plan(sections["Inferred Inference Plan"])
    if "Analysis Time" in sections:
        report["analysis_time"] = float(sections["Analysis Time"][0])
    if "Evaluation Time" in sections:
        report["evaluation_time"] = float(sections["Evaluation Time"][0])
    if "Result" in sections:
        report["result"] = ast.literal_eval(sections["Result"][0])
        report["flat_result"] = flatten(report["result"])
    if "Runtime Inference Plan" in sections:
        # Everything after the header, to the end of the output, is read as the plan.
        tail = stdout.split("===== Runtime Inference Plan =====\n", 1)[1]
        report["runtime_plan"] = _plan(tail.split("\n"))
    return report
