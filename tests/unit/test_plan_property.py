"""Property tests of the plan analysis on generated programs and plans.

For small random Siren programs (random variables of several families,
arithmetic, pure and impure ``if``s, observations, a loop over a data file)
with random annotations, under every method:

* the analysis terminates quickly and never fails other than with a
  ``SirenPlanError`` (a rejection);
* renaming every program variable changes nothing but the names;
* swapping two adjacent independent declarations changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sirenc.diagnostics import SirenPlanError
from sirenc.driver import lower_to_siren
from sirenc.passes.plan_analysis import analyze

METHODS = ("ssi", "ds", "bp", "pf")
ANNOTATIONS = ("", "sample ", "symbolic ")


@dataclass
class Stmt:
    """``let <binder> = <text> in`` with the variables it defines and uses."""

    binder: str               # "x", "()" ...
    text: str                 # e.g. "x <- gaussian(y, 1.)" or "() = observe(...)"
    defines: str | None
    uses: set[str]
    kind: str                 # "assume", "let", "observe", "resample"


@dataclass
class Scope:
    floats: list[str] = field(default_factory=list)
    bools: list[str] = field(default_factory=list)
    gammas: list[str] = field(default_factory=list)   # positive: usable as precisions
    betas: list[str] = field(default_factory=list)    # in [0, 1]: usable as probabilities
    counter: int = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"


consts = st.sampled_from(["0.", "1.", "2.5", "-3.", "0.5", "10."])
positive = st.sampled_from(["1.", "0.5", "2.", "100."])


@st.composite
def float_expr(draw, scope: Scope, depth: int = 0) -> tuple[str, set[str]]:
    options = ["const"]
    if scope.floats:
        options += ["var", "var", "var"]
    if depth < 2:
        options += ["add", "mul", "sub", "neg", "div"]
        if scope.bools:
            options.append("ite")
    kind = draw(st.sampled_from(options))
    if kind == "const":
        return draw(consts), set()
    if kind == "var":
        v = draw(st.sampled_from(scope.floats))
        return v, {v}
    if kind == "neg":
        e, u = draw(float_expr(scope, depth + 1))
        return f"(-{e})", u
    if kind == "div":
        e, u = draw(float_expr(scope, depth + 1))
        return f"({e} / {draw(positive)})", u
    if kind == "ite":
        b, ub = draw(bool_expr(scope))
        e1, u1 = draw(float_expr(scope, depth + 1))
        e2, u2 = draw(float_expr(scope, depth + 1))
        return f"(if {b} then {e1} else {e2})", ub | u1 | u2
    e1, u1 = draw(float_expr(scope, depth + 1))
    e2, u2 = draw(float_expr(scope, depth + 1))
    op = {"add": "+", "mul": "*", "sub": "-"}[kind]
    return f"({e1} {op} {e2})", u1 | u2


@st.composite
def bool_expr(draw, scope: Scope) -> tuple[str, set[str]]:
    options = ["const"] + (["var", "var"] if scope.bools else []) + (["lt"] if scope.floats else [])
    kind = draw(st.sampled_from(options))
    if kind == "const":
        return draw(st.sampled_from(["true", "false"])), set()
    if kind == "var":
        v = draw(st.sampled_from(scope.bools))
        return v, {v}
    e1, u1 = draw(float_expr(scope, 1))
    e2, u2 = draw(float_expr(scope, 1))
    return f"({e1} < {e2})", u1 | u2


@st.composite
def variance(draw, scope: Scope) -> tuple[str, set[str]]:
    if scope.gammas and draw(st.booleans()):
        g = draw(st.sampled_from(scope.gammas))
        return f"1. / {g}", {g}
    return draw(positive), set()


@st.composite
def probability(draw, scope: Scope) -> tuple[str, set[str]]:
    choice = draw(st.sampled_from(["const", "beta", "ite"] if scope.betas else ["const", "ite"]))
    if choice == "beta":
        b = draw(st.sampled_from(scope.betas))
        return b, {b}
    if choice == "ite" and scope.bools:
        c = draw(st.sampled_from(scope.bools))
        return f"(if {c} then 0.9 else 0.1)", {c}
    return draw(st.sampled_from(["0.5", "0.1", "0.9"])), set()


@st.composite
def statement(draw, scope: Scope) -> Stmt:
    kind = draw(st.sampled_from(
        ["gaussian", "gaussian", "gamma", "beta", "bernoulli", "poisson", "student",
         "let", "observe", "observe_bool", "impure_if", "resample"]))
    ann = draw(st.sampled_from(ANNOTATIONS))
    if kind == "gaussian":
        m, um = draw(float_expr(scope))
        v, uv = draw(variance(scope))
        name = scope.fresh("x")
        scope.floats.append(name)
        return Stmt(name, f"{ann}{name} <- gaussian({m}, {v})", name, um | uv, "assume")
    if kind in ("gamma", "beta"):
        name = scope.fresh("g" if kind == "gamma" else "p")
        (scope.gammas if kind == "gamma" else scope.betas).append(name)
        scope.floats.append(name)
        return Stmt(name, f"{ann}{name} <- {kind}({draw(positive)}, {draw(positive)})", name, set(), "assume")
    if kind == "bernoulli":
        p, up = draw(probability(scope))
        name = scope.fresh("b")
        scope.bools.append(name)
        return Stmt(name, f"{ann}{name} <- bernoulli({p})", name, up, "assume")
    if kind == "poisson" and scope.gammas:
        g = draw(st.sampled_from(scope.gammas))
        name = scope.fresh("n")
        scope.floats.append(name)
        return Stmt(name, f"{ann}{name} <- poisson({g})", name, {g}, "assume")
    if kind == "student":
        m, um = draw(float_expr(scope))
        name = scope.fresh("t")
        scope.floats.append(name)
        return Stmt(name, f"{ann}{name} <- student_t({m}, 1., 3.)", name, um, "assume")
    if kind == "let" or kind == "poisson":
        e, u = draw(float_expr(scope))
        name = scope.fresh("y")
        scope.floats.append(name)
        return Stmt(name, f"{name} = {e}", name, u, "let")
    if kind == "observe":
        m, um = draw(float_expr(scope))
        v, uv = draw(variance(scope))
        value, uvalue = draw(st.one_of(consts.map(lambda c: (c, set())), float_expr(scope)))
        return Stmt("()", f"() = observe(gaussian({m}, {v}), {value})", None, um | uv | uvalue, "observe")
    if kind == "observe_bool":
        p, up = draw(probability(scope))
        return Stmt("()", f"() = observe(bernoulli({p}), true)", None, up, "observe")
    if kind == "impure_if" and scope.bools:
        b, ub = draw(bool_expr(scope))
        m, um = draw(float_expr(scope))
        return Stmt("()", f"() = if {b} then observe(gaussian({m}, 1.), 0.5) else ()", None, ub | um, "observe")
    return Stmt("()", "() = resample()", None, set(), "resample")


@dataclass
class Program:
    stmts: list[Stmt]
    loop: str | None          # an optional fold over the data file, after the statements
    result: str
    helpers: str = ""

    def source(self) -> str:
        lines = [self.helpers] if self.helpers else []
        if self.loop is not None:
            lines.append(self.loop)
        lines += [f"let {s.text} in" for s in self.stmts]
        if self.loop is not None:
            lines.append('let acc = fold(step, File.read("data.csv"), acc0) in')
        lines.append(self.result)
        return "\n".join(lines) + "\n"


LOOPS = [
    # a random walk observed at the data (the noise benchmark's shape)
    "val step = fun (row, (x, q)) ->\n"
    "  let {a}z <- gaussian(x, 1. / q) in\n"
    "  let () = observe(gaussian(2. * z, 1.), List.hd(row)) in\n"
    "  let () = resample() in (z, q) in",
    # a switching observation: an impure if on a Bernoulli inside the loop
    "val step = fun (row, (x, q)) ->\n"
    "  let {a}z <- gaussian(x, 1.) in\n"
    "  let {a}s <- bernoulli(0.1) in\n"
    "  let () = if s then observe(gaussian(z, 1. / q), List.hd(row)) else observe(gaussian(z, 1.), List.hd(row)) in\n"
    "  (z, q) in",
    # a pure switch keeping a symbolic ite
    "val step = fun (row, (x, q)) ->\n"
    "  let {a}s <- bernoulli(0.5) in\n"
    "  let {a}z <- gaussian(if s then x else 0., 1.) in\n"
    "  let () = observe(gaussian(z, 1.), List.hd(row)) in\n"
    "  (z, q) in",
]


# Helpers for slam-like symbolic map lookups and maps over data rows.
HELPERS = (
    "val mk_cell = fun i -> let {a}cell <- bernoulli(0.5) in cell in\n"
    "val pick = fun (cell, (n, i, res)) -> (n, i + 1., if n = i then cell else res) in\n"
    "val mk_row = fun row -> let {a}r <- gaussian(List.hd(row), 1.) in r in"
)


@st.composite
def extra(draw, scope: Scope) -> list[Stmt]:
    kind = draw(st.sampled_from(["lookup", "rows"]))
    if kind == "lookup":
        n = draw(st.integers(1, 4))
        pos = draw(st.sampled_from(scope.floats)) if scope.floats else "1."
        cells, o = scope.fresh("cells"), scope.fresh("o")
        return [
            Stmt(cells, f"{cells} = List.map(mk_cell, List.range(0., {n}.))", cells, set(), "let"),
            Stmt(o, f"(_, _, {o}) = fold(pick, {cells}, ({pos}, 0., false))", o, {cells, pos} - {"1."}, "let"),
            Stmt("()", f"() = observe(bernoulli(if {o} then 0.9 else 0.1), true)", None, {o}, "observe"),
        ]
    rows = scope.fresh("rows")
    return [
        Stmt(rows, f'{rows} = List.map(mk_row, File.read("data.csv"))', rows, set(), "let"),
        Stmt("()", f"() = observe(gaussian(List.hd({rows}), 1.), 0.)", None, {rows}, "observe"),
    ]


@st.composite
def programs(draw) -> Program:
    scope = Scope()
    n = draw(st.integers(1, 8))
    helpers = ""
    extra_at = -1
    if draw(st.booleans()):
        helpers = HELPERS.replace("{a}", draw(st.sampled_from(ANNOTATIONS)))
        extra_at = draw(st.integers(0, n))
    stmts: list[Stmt] = []
    for i in range(n + 1):
        if i == extra_at:
            stmts += draw(extra(scope))
        if i < n:
            stmts.append(draw(statement(scope)))
    loop = None
    if draw(st.booleans()):
        template = draw(st.sampled_from(LOOPS))
        loop = template.replace("{a}", draw(st.sampled_from(ANNOTATIONS)))
        g = scope.gammas[0] if scope.gammas else "1."
        x = scope.floats[0] if scope.floats else "0."
        stmts.append(Stmt("acc0", f"acc0 = ({x}, {g})", "acc0", {x} - {"0."} | ({g} - {"1."}), "let"))
    outs = [v for v in scope.floats[-3:]] or ["0."]
    if loop is not None:
        outs.append("acc")
    result = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    return Program(stmts, loop, result, helpers)


def outcome(source: str, method: str) -> tuple[str, object]:
    module = lower_to_siren(source)
    try:
        result = analyze(module, method)
        out = ("ok", dict(result.plan))
        assert result.note is None, result.note      # the analysis never gave up
    except SirenPlanError as e:
        out = ("reject", e.message)
        assert not any("internal error" in n.message or "lost track" in n.message for n in e.notes)
    return out


def rename_source(source: str, names: list[str]) -> tuple[str, dict[str, str]]:
    mapping = {n: f"w_{n}_v" for n in names}
    for old, new in mapping.items():
        source = re.sub(rf"\b{old}\b", new, source)
    return source, mapping


def rename_outcome(out: tuple[str, object], mapping: dict[str, str]) -> tuple[str, object]:
    kind, value = out
    if kind == "ok":
        return kind, {mapping.get(k, k): v for k, v in value.items()}
    for old, new in mapping.items():
        value = re.sub(rf"'{old}'", f"'{new}'", value)
    return kind, value


SETTINGS = settings(max_examples=int(__import__("os").environ.get("PLAN_PROPERTY_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(programs(), st.sampled_from(METHODS))
def test_terminates_and_never_crashes(program, method):
    outcome(program.source(), method)


@SETTINGS
@given(programs(), st.sampled_from(METHODS))
def test_verdict_independent_of_variable_names(program, method):
    source = program.source()
    names = sorted({s.defines for s in program.stmts if s.defines}
                   | {"z", "s", "x", "q", "acc", "acc0", "cell", "r", "n", "i", "res"})
    renamed, mapping = rename_source(source, names)
    assert rename_outcome(outcome(source, method), mapping) == outcome(renamed, method)


def _ancestors(stmts: list[Stmt]) -> list[set[str]]:
    deps: dict[str, set[str]] = {}
    out = []
    for s in stmts:
        closure = set(s.uses)
        for u in s.uses:
            closure |= deps.get(u, set())
        if s.defines:
            deps[s.defines] = closure | {s.defines}
        out.append(closure | ({s.defines} if s.defines else set()))
    return out


@SETTINGS
@given(programs(), st.sampled_from(METHODS), st.data())
def test_verdict_independent_of_order_of_independent_declarations(program, method, data):
    stmts = program.stmts
    closures = _ancestors(stmts)
    swappable = [
        i for i in range(len(stmts) - 1)
        if stmts[i].kind in ("assume", "let") and stmts[i + 1].kind in ("assume", "let")
        and not (closures[i] & closures[i + 1])
    ]
    if not swappable:
        return
    i = data.draw(st.sampled_from(swappable))
    swapped = Program(stmts[:i] + [stmts[i + 1], stmts[i]] + stmts[i + 2:], program.loop,
                      program.result, program.helpers)
    before, after = outcome(program.source(), method), outcome(swapped.source(), method)
    assert before[0] == after[0], (program.source(), swapped.source(), before, after)
    if before[0] == "ok":
        assert before[1] == after[1]
