"""Tier 2 (`specialize-conjugacy`) gives tier 1's answers, and says where it does not apply.

A program whose symbolic state has one structure is compiled into arithmetic on numbers; tier 1
(`tier=1`) runs the general symbolic runtime on the same program. Every case below runs both with
the same seed: where nothing is drawn the numbers are the same to 1e-12 (they are the same formulas
in another order), and where variables are drawn the draws come from the same streams in the same
order, so the answers still agree to rounding; the runtime plans are equal. The walk is also
checked against the Kalman filter, independently of both tiers."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sirenc
from linear_gaussian import _smooth, kalman
from markers import needs_runtime

pytestmark = needs_runtime

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "benchmarks" / "models" / "walk" / "model.si"

STEP = "val step = fun (row, {acc}) ->\n  let y = List.hd(row) in\n  let b = List.hd(List.tl(row)) = 1. in\n"

SWITCH = STEP.format(acc="x") + """
  let s <- bernoulli(0.3) in
  let x1 <- gaussian(x, 2.) in
  let x0 <- gaussian(x, 0.1) in
  let x2 = if s then x1 else x0 in
  let () = observe(gaussian(x2, 0.5), y) in"""

PROGRAMS = {
    # a random walk whose position starts as the constant 0: two loop shapes
    "walk": STEP.format(acc="x") + """
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in x1
in fold(step, File.read("data.csv"), 0.)""",
    # Beta-Bernoulli with a Bernoulli child kept symbolic: a bool result's mean is a probability
    "beta_bernoulli": STEP.format(acc="(p, c)") + """
  let c1 <- bernoulli(p) in
  let () = observe(bernoulli(p), b) in
  let () = resample() in (p, c1)
in let p <- beta(1., 1.) in fold(step, File.read("data.csv"), (p, false))""",
    # an unknown precision (Gamma-Gaussian, SSI and DS only)
    "precision": STEP.format(acc="tau") + """
  let () = observe(gaussian(0., 1. / tau), y) in
  let () = resample() in tau
in let tau <- gamma(2., 1.) in fold(step, File.read("data.csv"), tau)""",
    # a sampled variable in the mean of a symbolic one: draws from the particles' streams
    "mixed": STEP.format(acc="(x, n)") + """
  let sample s <- gaussian(0., 0.1) in
  let x1 <- gaussian(x + s, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in (x1, n + 1.)
in fold(step, File.read("data.csv"), (0., 0.))""",
    # a condition forces (samples) x1; the branches score concrete observations
    "branch": STEP.format(acc="x") + """
  let x1 <- gaussian(x, 1.) in
  let () = if x1 < 0. then observe(gaussian(x1, 0.5), y) else observe(gaussian(x1, 2.), y) in
  let () = resample() in x1
in fold(step, File.read("data.csv"), 0.)""",
    # a root observed every step through a new child: hoisting across reversed edges
    "tree": STEP.format(acc="(a, c)") + """
  let c1 <- gaussian(a, 10.) in
  let () = observe(gaussian(c1, 1.), y) in
  let () = observe(gaussian(a, 100.), y) in
  let () = resample() in (a, c1)
in let a <- gaussian(0., 100.) in fold(step, File.read("data.csv"), (a, 0.))""",
    # the whole trajectory: older positions kept as records, smoothed at the end
    "trajectory": STEP.format(acc="xs") + """
  let x1 <- gaussian(0.9 * List.hd(xs), 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in x1 :: xs
in List.rev(fold(step, File.read("data.csv"), [0.]))""",
    # a drawn switch between two Gaussian variables (slds): the body forks on the draw
    "switch": SWITCH + """
  let () = resample() in x2
in fold(step, File.read("data.csv"), 0.)""",
    # ... where one of the two is observed again afterwards, whichever was selected
    "switch_reused": SWITCH + """
  let () = observe(gaussian(x1, 1.), y) in
  let () = resample() in x2
in fold(step, File.read("data.csv"), 0.)""",
    # a switch read from the data: an if on a concrete condition whose branches yield variables
    "switch_data": STEP.format(acc="x") + """
  let x1 <- gaussian(x, 2.) in
  let x0 <- gaussian(x, 0.1) in
  let x2 = if b then x1 else x0 in
  let () = observe(gaussian(x2, 0.5), y) in
  let () = resample() in x2
in fold(step, File.read("data.csv"), 0.)""",
    # a sampled switch between two precisions that both live on (slds's observation noises)
    "switch_precision": STEP.format(acc="(t0, t1)") + """
  let sample s <- bernoulli(0.5) in
  let t = if s then t1 else t0 in
  let () = observe(gaussian(0., 1. / t), y) in
  let () = resample() in (t0, t1)
in let t0 <- gamma(2., 1.) in let t1 <- gamma(1., 2.) in fold(step, File.read("data.csv"), (t0, t1))""",
    # symbolic work after the loop, on a value that has two shapes (0 rows: the constant)
    "after": STEP.format(acc="x") + """
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in x1
in let x = fold(step, File.read("data.csv"), 0.) in
let z <- gaussian(2. * x, 1.) in
let () = observe(gaussian(z, 1.), 3.) in (x, z)""",
}

# (program, method) -> a phrase of the reason tier 2 gives for not applying (absent: it applies).
# BP draws the Beta and Gamma parents (ARCHITECTURE.md §14.1): tier 2 draws them the same way.
# DS's prune (ARCHITECTURE.md §13.3: tree, after, switch_reused, where observing x1 after x0 samples
# x0) is a draw tier 2 makes as tier 1 does.
# DS draws the trajectory at the end: tier 2 makes the same draws (_ds_backward).
EXPECTED: dict[tuple[str, str], str] = {}
METHODS = ("ssi", "ds", "bp")
CASES = [(p, m) for p in PROGRAMS for m in METHODS]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("tier2")
    rng = np.random.default_rng(7)
    rows = np.c_[rng.normal(0.5, 1.5, 25), rng.integers(0, 2, 25)]
    np.savetxt(d / "data.csv", rows, delimiter=",", header="y,b", comments="")
    for name, text in PROGRAMS.items():
        (d / f"{name}.si").write_text(text)
    return d


def run(path, method: str, tier: int, seed: int = 3, particles: int = 64):
    model = sirenc.compile(str(path), method=method, tier=tier)
    f = model.filter(particles=particles, seed=seed)
    f.run()
    return model.info["tier"], f.estimate(), f.log_evidence, f.runtime_plan()


def close(a, b, rel: float = 1e-12) -> bool:
    a, b = np.atleast_1d(np.asarray(a, dtype=float)), np.atleast_1d(np.asarray(b, dtype=float))
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rel * np.maximum(1.0, np.abs(b))))


@pytest.mark.parametrize("program,method", CASES)
def test_tier_2_gives_tier_1s_answer(folder, program, method):
    path = folder / f"{program}.si"
    tier1 = run(path, method, 1)
    tier2 = run(path, method, 2)
    assert tier1[0] == 1
    assert tier2[0] == (1 if (program, method) in EXPECTED else 2)
    for seed in (3, 11):
        one, two = run(path, method, 1, seed), run(path, method, 2, seed)
        assert close(two[1], one[1]), (two[1], one[1])
        assert close(two[2], one[2]), (two[2], one[2])
        assert two[3] == one[3]


@pytest.mark.parametrize("program", ["switch", "switch_reused", "switch_data", "switch_precision"])
@pytest.mark.parametrize("method", METHODS)
def test_a_switch_between_symbolic_values_answers_as_on_tier_1_on_every_seed(folder, program, method):
    """The body forks on the switch (each path is the runtime's computation for the particles that
    take it), so the two tiers draw the same numbers: equal to rounding on every seed."""
    path = folder / f"{program}.si"
    if (program, method) in EXPECTED:
        assert sirenc.compile(str(path), method=method).info["tier"] == 1
        return
    one = sirenc.compile(str(path), method=method, tier=1)
    two = sirenc.compile(str(path), method=method)
    assert two.info["tier"] == 2
    for seed in range(6):
        runs = []
        for model in (one, two):
            f = model.filter(particles=100, seed=seed)
            f.run()
            runs.append((f.estimate(), f.log_evidence, f.runtime_plan()))
        (e1, z1, p1), (e2, z2, p2) = runs
        assert close(e2, e1) and close(z2, z1), (seed, e2, e1, z2, z1)
        assert p2 == p1


@pytest.mark.parametrize("program,method", CASES)
def test_check_json_says_whether_and_why(folder, program, method):
    out = subprocess.run([sys.executable, "-m", "sirenc", "check", f"{program}.si", "-m", method, "--json"],
                         cwd=folder, capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)["specialization"]
    phrase = EXPECTED.get((program, method))
    if phrase is None:
        assert report["tier"] == 2, report
        assert set(report["runtime_plan"]) <= set(json.loads(out.stdout)["plan"])
    else:
        assert report["tier"] == 1 and phrase in report["reason"], report
        assert report["location"].startswith(f"{program}.si:"), report


def _walk_data(folder: Path, seed: int, n: int) -> np.ndarray:
    """n observations of the random walk x_t ~ N(x_(t-1), 1), y_t ~ N(x_t, 0.5), written to
    folder/data.csv."""
    rng = np.random.default_rng(seed)
    ys = np.cumsum(rng.normal(size=n)) + rng.normal(0, np.sqrt(0.5), n)
    np.savetxt(folder / "data.csv", ys, header="y", comments="")
    return ys


@pytest.mark.parametrize("method", METHODS)
def test_the_walk_is_the_kalman_filter(method, tmp_path):
    ys = _walk_data(tmp_path, seed=0, n=60)
    program = tmp_path / "walk.si"
    program.write_text(WALK.read_text())
    model = sirenc.compile(str(program), method=method)
    assert model.info["tier"] == 2
    f = model.filter(particles=10, seed=5)
    f.run()
    m, _, ll, _ = kalman(ys, q=1.0, r=0.5)
    assert abs(f.estimate() - m) <= 1e-12 * max(1.0, abs(m))
    assert abs(f.log_evidence - ll) <= 1e-12 * abs(ll)


@pytest.mark.parametrize("method", ("ssi", "bp"))
def test_a_trajectory_is_the_rauch_tung_striebel_smoother(method, tmp_path):
    ys = _walk_data(tmp_path, seed=1, n=40)
    program = tmp_path / "history.si"
    program.write_text("""val first = fun row -> List.hd(row) in
val step = fun (y, xs) ->
  let x1 <- gaussian(List.hd(xs), 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in x1 :: xs
in List.tl(List.rev(fold(step, List.map(first, File.read("data.csv")), [0.])))""")
    model = sirenc.compile(str(program), method=method)
    assert model.info["tier"] == 2
    f = model.filter(particles=4, seed=2)
    f.run()
    _, _, ll, steps = kalman(ys, q=1.0, r=0.5)
    means, _ = _smooth(steps)
    assert close(f.estimate(), means, rel=1e-9)
    assert abs(f.log_evidence - ll) <= 1e-12 * abs(ll)


HISTORY_HEAD = """val first = fun row -> List.hd(row) in
val step = fun (y, xs) ->
  let x1 <- gaussian(List.hd(xs), 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in x1 :: xs
in RESULT(fold(step, List.map(first, File.read("data.csv")), [0.]))"""


@pytest.mark.parametrize("tier", (1, 2))
def test_a_trajectory_whose_head_alone_is_read_is_the_kalman_filter_under_ds(tier, tmp_path):
    # DS keeps the older elements as its marginal chain; reading the head takes no draw at the end
    # (wheels as written), so tier 2 serves it: the filtering mean and its variance, exactly.
    ys = _walk_data(tmp_path, seed=4, n=40)
    program = tmp_path / "head.si"
    program.write_text(HISTORY_HEAD.replace("RESULT", "List.hd"))
    model = sirenc.compile(str(program), method="ds", tier=tier)
    assert model.info["tier"] == tier
    f = model.filter(particles=4, seed=2)
    f.run()
    m, v, ll, _ = kalman(ys, q=1.0, r=0.5)
    assert close([f.estimate()], [m], rel=1e-9) and close([f.summary().variance], [v], rel=1e-9)
    assert abs(f.log_evidence - ll) <= 1e-12 * abs(ll)


@pytest.mark.parametrize("tier", (1, 2))
def test_a_ds_trajectory_is_a_draw_from_the_rauch_tung_striebel_smoother(tier, tmp_path):
    # DS's final expectation of the reversed trajectory prunes its chain of marginals: the newest
    # element drawn from its marginal, each older one given the one after it, the oldest the mean
    # given the second (forward filtering, backward sampling). Every particle has the same weight,
    # so across N particles each element's estimate is the smoothing mean within its Monte Carlo
    # error, and the drawn elements' spread is the smoothing variance.
    n, particles = 30, 20000
    ys = _walk_data(tmp_path, seed=6, n=n)
    program = tmp_path / "history.si"
    program.write_text(HISTORY_HEAD.replace("RESULT", "List.tl(List.rev") + ")")
    model = sirenc.compile(str(program), method="ds", tier=tier)
    assert model.info["tier"] == tier
    f = model.filter(particles=particles, seed=7)
    f.run()
    _, _, ll, steps = kalman(ys, q=1.0, r=0.5)
    means, variances = (np.asarray(x) for x in _smooth(steps))
    estimate = np.asarray(f.estimate())
    assert np.all(np.abs(estimate - means) <= 5 * np.sqrt(variances / particles))
    spread = np.array([s.variance for s in f.summary()[1:]])
    # The sample variance's relative error is sqrt(2 / N), 1% here; averaged over 29 elements.
    assert abs(np.mean(spread / variances[1:]) - 1) <= 0.03
    assert abs(f.log_evidence - ll) <= 1e-9 * abs(ll)


@pytest.mark.parametrize("rows", (1, 2, 25))
def test_a_ds_trajectory_answers_as_on_tier_1(rows, tmp_path):
    # With one row the newest element is the oldest symbolic one: its mean, no draw.
    _walk_data(tmp_path, seed=8, n=rows)
    program = tmp_path / "history.si"
    program.write_text(HISTORY_HEAD.replace("RESULT", "List.rev"))
    runs = []
    for tier in (1, 2):
        model = sirenc.compile(str(program), method="ds", tier=tier)
        assert model.info["tier"] == tier
        f = model.filter(particles=16, seed=3)
        f.run()
        runs.append((list(f.estimate()), [s.variance for s in f.summary()], f.log_evidence))
    (e1, v1, z1), (e2, v2, z2) = runs
    assert close(e2, e1) and close(v2, v1, rel=1e-9) and close([z2], [z1])


LEAVES = """val step = fun (row, (a, bs)) ->
  let b <- gaussian(a, 10.) in
  let () = observe(gaussian(b, 1000.), List.hd(row)) in
  let () = observe(gaussian(a, 1000.), List.hd(List.tl(row))) in
  let () = resample() in
  (a, b :: bs)
in
let a <- gaussian(0., 100.) in
let (a, bs) = fold(step, File.read("data.csv"), (a, [])) in
(a, List.rev(bs))"""


@pytest.mark.parametrize("method", ("ssi", "bp"))
@pytest.mark.parametrize("tier", (1, 2))
def test_leaves_of_a_kept_root_are_the_exact_gaussian_posterior(method, tier, tmp_path):
    # gtree's shape: every leaf b_t depends on the root a, which the loop keeps; tier 2 keeps each
    # leaf as a record of a (its mean a * E[a] + b, its variance a^2 Var[a] + c given a).
    rng = np.random.default_rng(4)
    t = 15
    a = rng.normal(0, 10)
    ys = np.column_stack([a + rng.normal(0, np.sqrt(10), t) + rng.normal(0, np.sqrt(1000), t),
                          a + rng.normal(0, np.sqrt(1000), t)])
    np.savetxt(tmp_path / "data.csv", ys, delimiter=",", header="yb,ya", comments="")
    (tmp_path / "leaves.si").write_text(LEAVES)
    # The joint posterior of (a, b_1..b_t): precision and linear term of the prior and the observations.
    prec = np.zeros((t + 1, t + 1))
    prec[0, 0] = 1 / 100 + t / 10 + t / 1000
    prec[0, 1:] = prec[1:, 0] = -1 / 10
    prec[np.arange(1, t + 1), np.arange(1, t + 1)] = 1 / 10 + 1 / 1000
    cov = np.linalg.inv(prec)
    mean = cov @ np.concatenate([[ys[:, 1].sum() / 1000], ys[:, 0] / 1000])
    model = sirenc.compile(str(tmp_path / "leaves.si"), method=method, tier=tier)
    assert model.info["tier"] == tier
    f = model.filter(particles=4, seed=1)
    f.run()
    got_a, got_bs = f.estimate()
    assert close(got_a, mean[0], rel=1e-9) and close(got_bs, mean[1:], rel=1e-9)
    s_a, s_bs = f.summary()
    assert close([s.variance for s in [s_a, *s_bs]], np.diag(cov), rel=1e-9)


LOOKED_BACK = """val step = fun (row, sxs) ->
  let sx_prev = List.hd(sxs) in
  let sx <- gaussian(sx_prev, 0.5) in
  let () = observe(gaussian(sx, 1.), List.hd(row)) in
  let () = observe(gaussian(sx_prev, 2.), List.hd(List.tl(row))) in
  let () = resample() in
  sx :: sxs
in List.rev(fold(step, File.read("data.csv"), [0.]))"""


@pytest.mark.parametrize("method", ("ssi", "bp"))
@pytest.mark.parametrize("tier", (1, 2))
def test_an_element_observed_after_the_next_one_is_the_exact_smoother(method, tier, tmp_path):
    # The second observation, of the element before the new one, hoists it back to a root after the
    # first made the new one a root: at the end of the step the new element is its child again, and
    # tier 2 swaps them back (what the next step's hoist would do) to keep the old one as a record.
    rng = np.random.default_rng(6)
    t = 12
    s = np.cumsum(rng.normal(0, np.sqrt(0.5), t))
    ys = np.column_stack([s + rng.normal(0, 1, t), np.concatenate([[0.0], s[:-1]]) + rng.normal(0, np.sqrt(2), t)])
    np.savetxt(tmp_path / "data.csv", ys, delimiter=",", header="y,z", comments="")
    (tmp_path / "back.si").write_text(LOOKED_BACK)
    # The posterior of s_1..s_t: the chain's prior precision, y_k on s_k, z_k on s_(k-1) (k >= 2).
    prec, lin = np.zeros((t, t)), ys[:, 0].copy()
    for k in range(t):
        prec[k, k] += 1 / 0.5 + 1.0 + (1 / 0.5 if k + 1 < t else 0.0) + (1 / 2 if k + 1 < t else 0.0)
        if k + 1 < t:
            prec[k, k + 1] = prec[k + 1, k] = -1 / 0.5
            lin[k] += ys[k + 1, 1] / 2
    cov = np.linalg.inv(prec)
    mean = cov @ lin
    model = sirenc.compile(str(tmp_path / "back.si"), method=method, tier=tier)
    assert model.info["tier"] == tier
    f = model.filter(particles=4, seed=1)
    f.run()
    assert close(f.estimate(), [0.0, *mean], rel=1e-9)
    assert close([x.variance for x in f.summary()[1:]], np.diag(cov), rel=1e-9)


DRAWN_TRAJECTORY = """val first = fun row -> List.hd(row) in
val step = fun (y, (xs, q)) ->
  let x1 <- gaussian(List.hd(xs), 1. / q) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in (x1 :: xs, q)
in
let q <- gamma(2., 2.) in
let (xs, q) = fold(step, List.map(first, File.read("data.csv")), ([0.], q)) in
(List.tl(List.rev(xs)), 1. / q)"""


@pytest.mark.parametrize("method", METHODS)
def test_a_trajectory_of_drawn_values_keeps_one_number_a_step(method, tmp_path):
    # Under ssi and ds x1's variance is symbolic (q stays a Gamma): every x1 is drawn from its
    # marginal, so the trajectory's records are the draws themselves (point records). Under bp q is
    # drawn and x1 stays a Gaussian: affine records (a, (b, c)), after point records were refused.
    _walk_data(tmp_path, seed=3, n=30)
    program = tmp_path / "drawn.si"
    program.write_text(DRAWN_TRAJECTORY)
    specialized = subprocess.run([sys.executable, "-m", "sirenc", "drawn.si", "-m", method, "--emit", "specialized"],
                                 cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    drawn = method != "bp"
    assert "!siren.sym" not in specialized and ("!siren.list<!siren.pair" in specialized) != drawn
    runs = []
    for tier in (1, 2):
        model = sirenc.compile(str(program), method=method, tier=tier)
        assert model.info["tier"] == tier
        f = model.filter(particles=16, seed=4)
        f.run()
        assert f.runtime_plan()["x1"] == ("sample" if drawn else "symbolic")
        (xs, q), (s_xs, s_q) = f.estimate(), f.summary()
        assert len(xs) == 30
        runs.append((_flat((xs, q)), f.log_evidence, [(s.mean, s.variance) for s in [*s_xs, s_q]]))
    (e1, z1, s1), (e2, z2, s2) = runs
    assert close(e2, e1) and close(z2, z1)
    assert all(close(list(a), list(b), rel=1e-9) for a, b in zip(s2, s1))


def test_streaming_a_tier_2_filter_equals_running_it(folder):
    model = sirenc.compile(str(folder / "walk.si"), method="ssi")
    rows = np.loadtxt(folder / "data.csv", delimiter=",", skiprows=1)
    whole = model.filter(particles=32, seed=1)
    whole.run(rows)
    step = model.filter(particles=32, seed=1)
    for row in rows:
        step.step(row)
    assert step.estimate() == whole.estimate() and step.log_evidence == whole.log_evidence


def test_a_tier_2_model_pickles_as_tier_2(folder):
    model = sirenc.compile(str(folder / "walk.si"), method="ssi", tier=1)
    again = pickle.loads(pickle.dumps(model))
    assert again.info["tier"] == 1
    assert sirenc.compile(str(folder / "walk.si"), method="ssi").info["tier"] == 2


def test_emit_shows_the_specialised_program(folder):
    def emit(*extra):
        return subprocess.run([sys.executable, "-m", "sirenc", "walk.si", "-m", "ssi", "--emit", "specialized",
                               *extra], cwd=folder, capture_output=True, text=True, check=True).stdout

    assert "!siren.sym" not in emit() and "siren.observe" in emit()
    assert "!siren.sym" in emit("--tier", "1")


def test_a_shared_object_reports_its_static_runtime_plan(folder, tmp_path):
    model = sirenc.compile(str(folder / "mixed.si"), method="ssi", output=tmp_path / "mixed.so")
    assert model.info["tier"] == 2
    f = model.filter(particles=8, seed=0)
    f.run()
    assert f.runtime_plan() == {"s": "sample", "x1": "symbolic"}


def test_a_benchmark_model_that_stays_on_tier_1_says_why():
    out = subprocess.run([sys.executable, "-m", "sirenc", "check", str(ROOT / "benchmarks" / "models" / "wheels" /
                          "model.si"), "-m", "ssi", "--json"], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)["specialization"]
    assert report["tier"] == 1 and "depend on more than the next one" in report["reason"]
    assert report["location"].endswith("wheels/model.si:24:1")


# -- every accepted plan of the benchmark models ----------------------------------------------------

sys.path.insert(0, str(ROOT / "benchmarks"))
from plans import BENCHMARKS, accepted_plans  # noqa: E402

# How many accepted plans of the eleven models qualify, per method (all of slds's, whose bodies fork
# on the drawn switch): the others keep trajectories whose elements are not chained Gaussians
# (gtree, outlier) or under ds (which samples them at the end), or map over symbolic cells (slam).
QUALIFYING = {"ssi": 59, "ds": 35, "bp": 26}
# ... and of the models as written (no annotation): tier 2 draws what tier 1 would draw on its own.
DEFAULT_QUALIFYING = {"ssi": 9, "ds": 6, "bp": 9}


def _flat(x) -> list[float]:
    if isinstance(x, tuple | list):
        return [v for item in x for v in _flat(item)]
    return [float(v) for v in np.ravel(np.asarray(x, dtype=float))]


def _same_on_both_tiers(path: str, method: str, label: str) -> bool:
    """False when `path` stays on tier 1; else asserts the two tiers' answers agree."""
    two = sirenc.compile(path, method=method)
    if two.info["tier"] != 2:
        return False
    one = sirenc.compile(path, method=method, tier=1)
    runs = []
    for model in (one, two):
        f = model.filter(particles=32, seed=5)
        f.run()
        runs.append((_flat(f.estimate()), f.log_evidence, f.runtime_plan()))
    (e1, z1, p1), (e2, z2, p2) = runs
    assert close(e2, e1) and close(z2, z1), label
    # A variable created only in a branch no particle took: tier 1 does not list it, tier 2 (whose
    # plan is fixed when compiling) lists it as drawn. One drawn on some of a forked body's paths
    # only (radar's `other`, drawn when `env` is, which has probability 10^-4 a step): tier 1 says
    # `dynamic` when some particles took such a path and others did not, `symbolic` when none did;
    # tier 2 lists it as drawn.
    assert all(p2[v] == p1[v] or (p1[v] in ("dynamic", "symbolic") and p2[v] == "sample") for v in p1), label
    assert all(p2[v] == "sample" for v in set(p2) - set(p1)), label
    return True


@pytest.mark.parametrize("method", METHODS)
def test_every_qualifying_benchmark_plan_answers_as_on_tier_1(method, tmp_path):
    qualifying = 0
    for name in BENCHMARKS:
        for plan in accepted_plans(name, method):
            folder = tmp_path / name / plan.number
            folder.mkdir(parents=True)
            qualifying += _same_on_both_tiers(str(plan.write(folder)), method, plan.label)
    assert qualifying == QUALIFYING[method]


@pytest.mark.parametrize("method", METHODS)
def test_the_benchmark_models_as_written_answer_as_on_tier_1(method):
    models = ROOT / "benchmarks" / "models"
    qualifying = sum(_same_on_both_tiers(str(models / name / "model.si"), method, name) for name in BENCHMARKS)
    assert qualifying == DEFAULT_QUALIFYING[method]
