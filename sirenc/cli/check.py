"""`sirenc check`: a program's inference plan, and whether it runs on tier 2."""

from __future__ import annotations

import json

from sirenc.cli.compilation import open_program
from sirenc.cli.report import strict_json
from sirenc.cli.warning_groups import print_warnings


def cmd_check(args) -> int:
    from sirenc import driver

    c = open_program(args, check=True)
    driver.run_until(c, "plan")
    print_warnings(c, args.warnings)
    if args.json:
        report = json.loads(c.plan.to_json())
        report["specialization"] = specialization_report(c)
        print(strict_json(report))
    else:
        print(c.plan.text())
    return 0


def specialization_report(c) -> dict:
    """Whether the compiled program runs on tier 2 (specialize-conjugacy) and, if not, why."""
    from sirenc import driver

    if not c.inference.symbolic:
        return {"tier": None, "reason": f"{c.method} keeps no symbolic state"}
    if c.tier == 1:
        return {"tier": 1, "reason": "--tier 1 asks for the general symbolic runtime"}
    driver.run_until(c, "specialized")
    s = c.specialization
    if not s.applied:
        return {"tier": 1, "reason": s.reason, "location": s.location}
    return {"tier": 2, "runtime_plan": s.runtime_plan, "loop_shapes": s.shapes}
