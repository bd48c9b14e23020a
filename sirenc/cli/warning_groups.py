"""Which warnings a command shows (-W), and showing them."""

from __future__ import annotations

import re
import sys

from sirenc.diagnostics import render_at

# Warning groups for -W. A warning belongs to the first group whose pattern matches its message;
# every other warning is always shown (unless -W none). Shown by default: DEFAULT_WARNINGS.
WARNING_GROUPS = {"unused": re.compile(r"function '[^']*' is never called")}
DEFAULT_WARNINGS = frozenset()
WARNING_CHOICES = ("unused", "all", "none")


def shown_warnings(warnings, chosen=()) -> list:
    """The ``(message, span)`` warnings that -W ``chosen`` shows."""
    chosen = set(chosen)
    if "none" in chosen:
        return []
    enabled = set(WARNING_GROUPS) if "all" in chosen else (set(DEFAULT_WARNINGS) | chosen)
    shown = []
    for message, span in warnings:
        group = next((g for g, pattern in WARNING_GROUPS.items() if pattern.match(message)), None)
        if group is None or group in enabled:
            shown.append((message, span))
    return shown


def program_warnings(c) -> list:
    """The ``(message, span)`` warnings of compilation ``c``'s front end and of its plan analysis."""
    typed = c.products.get("ast")
    return list(getattr(getattr(typed, "program", None), "warnings", [])) + plan_warnings(c)


def plan_warnings(c) -> list:
    """The ``(message, span)`` warnings of compilation ``c``'s plan analysis, if it ran."""
    return list(c.plan.warnings) if c.plan is not None else []


def print_warnings(c, chosen=(), warnings=None) -> None:
    for message, span in shown_warnings(program_warnings(c) if warnings is None else warnings, chosen):
        print(render_at("warning", message, span), file=sys.stderr)
