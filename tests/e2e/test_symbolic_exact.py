"""The symbolic methods are exact where the plan is (ARCHITECTURE.md §11-14): with every variable symbolic, one
particle's answer is the closed-form posterior mean and its log evidence the closed-form marginal
likelihood, whatever the seed, for each conjugate pair the method covers (ARCHITECTURE.md §11.8: SSI and DS all
of them, BP the Gaussian one).  The closed forms are computed here, independently of the runtime's
conjugacy rules.  Each case runs on both tiers: the general symbolic runtime (tier 1) and the
compiler's closed-form staging (tier 2) where it serves the program, so a wrong update in either is
seen against the closed form, not only against the other tier."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sirenc
from linear_gaussian import _smooth, kalman
from markers import needs_runtime

pytestmark = needs_runtime

SEEDS = (0, 1, 12345)


def lgamma(x: float) -> float:
    return math.lgamma(x)


def log_beta(a: float, b: float) -> float:
    return lgamma(a) + lgamma(b) - lgamma(a + b)


def normal_logpdf(x: float, m: float, v: float) -> float:
    return -0.5 * math.log(2 * math.pi * v) - (x - m) ** 2 / (2 * v)


def compile_at(program: str, method: str, tier: int):
    """The program compiled for `tier`, which must be the tier it then runs on."""
    model = sirenc.compile(program, method=method, tier=tier)
    assert model.info["tier"] == tier, (method, tier, program)
    return model


def one_particle(program: str, seed: int, method: str, tier: int):
    f = compile_at(program, method, tier).filter(particles=1, seed=seed)
    f.run()
    return f.estimate(), f.log_evidence, f.runtime_plan()


def gaussian_case():
    mu0, v0, a, b, r, ys = 1.0, 4.0, 2.0, 1.0, 0.5, (4.0, 0.5)
    program = f"""
    let x <- gaussian({mu0}, {v0}) in
    let () = observe(gaussian({a} * x + {b}, {r}), {ys[0]}) in
    let () = observe(gaussian(x, 1.), {ys[1]}) in
    x"""
    # Two Gaussian updates of x in turn, each scored by its predictive density.
    m, v, ll = mu0, v0, 0.0
    for (slope, offset, var), y in zip(((a, b, r), (1.0, 0.0, 1.0)), ys):
        ll += normal_logpdf(y, slope * m + offset, slope * slope * v + var)
        prec = 1 / v + slope * slope / var
        m, v = (m / v + slope * (y - offset) / var) / prec, 1 / prec
    return program, m, ll


def beta_bernoulli_case():
    a, b, xs = 2.0, 3.0, (True, False, True, True)
    program = "let p <- beta(2., 3.) in\n" + "".join(
        f"let () = observe(bernoulli(p), {'true' if x else 'false'}) in\n" for x in xs) + "p"
    ll = 0.0
    for x in xs:
        ll += math.log(a / (a + b) if x else b / (a + b))
        a, b = a + x, b + (not x)
    return program, a / (a + b), ll


def beta_binomial_case():
    a, b, n, k = 2.0, 3.0, 10, 7
    program = f"let p <- beta({a}, {b}) in let () = observe(binomial({n}., p), {k}.) in p"
    ll = (lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)) + log_beta(k + a, n - k + b) - log_beta(a, b)
    return program, (a + k) / (a + b + n), ll


def gamma_poisson_case():
    alpha, beta, xs = 3.0, 2.0, (4, 1)
    program = "let l <- gamma(3., 2.) in\n" + "".join(
        f"let () = observe(poisson(l), {x}.) in\n" for x in xs) + "l"
    ll = 0.0
    for x in xs:
        ll += negative_binomial_logpmf(x, alpha, beta)
        alpha, beta = alpha + x, beta + 1
    return program, alpha / beta, ll


def gamma_normal_case():
    alpha, beta, mu, xs = 2.0, 3.0, 1.0, (2.5, 0.0, 1.5)
    program = "let tau <- gamma(2., 3.) in\n" + "".join(
        f"let () = observe(gaussian({mu}, 1. / tau), {x}) in\n" for x in xs) + "tau"
    ll = 0.0
    for x in xs:
        ll += student_t_logpdf(x, mu, alpha, beta)
        alpha, beta = alpha + 0.5, beta + 0.5 * (x - mu) ** 2
    return program, alpha / beta, ll


def bernoulli_bernoulli_case():
    q, t, f = 0.3, 0.9, 0.2
    program = f"let z <- bernoulli({q}) in let () = observe(bernoulli(if z then {t} else {f}), true) in z"
    evidence = q * t + (1 - q) * f
    return program, q * t / evidence, math.log(evidence)


CASES = {
    "gaussian-gaussian": gaussian_case, "beta-bernoulli": beta_bernoulli_case,
    "beta-binomial": beta_binomial_case, "gamma-poisson": gamma_poisson_case,
    "gamma-normal": gamma_normal_case, "bernoulli-bernoulli": bernoulli_bernoulli_case,
}


# ARCHITECTURE.md §11.8: the pairs each method keeps symbolic.
COVERED = {"ssi": tuple(CASES), "ds": tuple(CASES), "bp": ("gaussian-gaussian",)}
# The pairs tier 2 does not stage (docs/tier2.md): these run on tier 1 whatever is asked.
TIER1_ONLY = {"gamma-poisson", "bernoulli-bernoulli"}
PAIR_RUNS = [(m, p, tier) for m, pairs in COVERED.items() for p in pairs for tier in (1, 2)
             if tier == 1 or p not in TIER1_ONLY]


def test_tier_two_stages_the_pairs_it_is_said_to():
    """TIER1_ONLY is what tier 2 leaves to tier 1 today: a pair it starts to stage joins the tier-2
    runs below by leaving that set."""
    for method, pairs in COVERED.items():
        for pair in pairs:
            tier = sirenc.compile(CASES[pair]()[0], method=method).info["tier"]
            assert tier == (1 if pair in TIER1_ONLY else 2), (method, pair)


@pytest.mark.parametrize("method, pair, tier", PAIR_RUNS)
def test_a_conjugate_pair_is_exact_with_one_particle(method, pair, tier):
    program, mean, log_evidence = CASES[pair]()
    for seed in SEEDS:
        got, ll, plan = one_particle(program, seed, method, tier)
        assert got == pytest.approx(mean, rel=1e-9, abs=1e-12), (pair, seed)
        assert ll == pytest.approx(log_evidence, rel=1e-9, abs=1e-12), (pair, seed)
        assert set(plan.values()) == {"symbolic"}, plan


# Programs with several variables, every one annotated symbolic.  The results are the variables DS
# can marginalise without pruning: the mean of a parent with a marginal child samples the child under
# DS (ARCHITECTURE.md §13.4), which would violate these plans.
EXACT_PROGRAMS = {
    "hierarchy": """
    let symbolic mu <- gaussian(0., 10.) in
    let symbolic x <- gaussian(2. * mu + 1., 1.) in
    let () = observe(gaussian(x, 0.5), 3.) in
    let () = observe(gaussian(x - 1., 0.5), 2.5) in
    x""",
    "two chains": """
    let symbolic a <- gaussian(1., 2.) in
    let symbolic b <- gaussian(a, 1.) in
    let symbolic c <- gaussian(-1., 3.) in
    let () = observe(gaussian(b, 1.), 0.5) in
    let () = observe(gaussian(c, 2.), 4.) in
    (b, c)""",
    "coin and rate": """
    let symbolic p <- beta(1., 1.) in
    let symbolic l <- gamma(2., 1.) in
    let () = observe(bernoulli(p), true) in
    let () = observe(poisson(l), 3.) in
    let () = observe(bernoulli(p), true) in
    (p, l)""",
    "precision": """
    let symbolic tau <- gamma(3., 2.) in
    let () = observe(gaussian(0., 1. / tau), 1.5) in
    let () = observe(gaussian(0., 1. / tau), -0.5) in
    tau""",
}


def gaussian_updates(mean, cov, observations):
    """Conditions the joint Gaussian (mean, cov) on each (h, offset, var, y): y = h.z + offset +
    N(0, var), in turn; the posterior mean and the log evidence (each y scored by its predictive)."""
    m, P, ll = np.array(mean, float), np.array(cov, float), 0.0
    for h, offset, var, y in observations:
        h = np.array(h, float)
        s = h @ P @ h + var
        ll += normal_logpdf(y, h @ m + offset, s)
        k = P @ h / s
        m, P = m + k * (y - h @ m - offset), P - np.outer(k, h @ P)
    return m, ll


def student_t_logpdf(x: float, mu: float, alpha: float, beta: float) -> float:
    """The predictive of gaussian(mu, 1 / tau) with tau ~ gamma(alpha, beta)."""
    nu, s2 = 2 * alpha, beta / alpha
    return (lgamma((nu + 1) / 2) - lgamma(nu / 2) - 0.5 * math.log(nu * math.pi * s2)
            - (nu + 1) / 2 * math.log1p((x - mu) ** 2 / (nu * s2)))


def negative_binomial_logpmf(x: int, alpha: float, beta: float) -> float:
    """The predictive of poisson(l) with l ~ gamma(alpha, beta)."""
    p = beta / (1 + beta)
    return lgamma(x + alpha) - lgamma(x + 1) - lgamma(alpha) + alpha * math.log(p) + x * math.log(1 - p)


def exact_answers() -> dict[str, tuple[list[float], float]]:
    """Each of EXACT_PROGRAMS' posterior means of its result and log evidence, in closed form."""
    hierarchy, hierarchy_ll = gaussian_updates(   # z = (mu, x), x = 2 mu + 1 + N(0, 1)
        [0.0, 1.0], [[10.0, 20.0], [20.0, 41.0]], [([0, 1], 0.0, 0.5, 3.0), ([0, 1], -1.0, 0.5, 2.5)])
    chains, chains_ll = gaussian_updates(         # z = (a, b, c), b = a + N(0, 1)
        [1.0, 1.0, -1.0], [[2.0, 2.0, 0.0], [2.0, 3.0, 0.0], [0.0, 0.0, 3.0]],
        [([0, 1, 0], 0.0, 1.0, 0.5), ([0, 0, 1], 0.0, 2.0, 4.0)])
    # p ~ beta(1, 1) sees true twice; l ~ gamma(2, 1) sees 3 between them.
    coin_ll = math.log(1 / 2) + negative_binomial_logpmf(3, 2.0, 1.0) + math.log(2 / 3)
    # tau ~ gamma(3, 2) sees 1.5, then -0.5.
    precision_ll = student_t_logpdf(1.5, 0.0, 3.0, 2.0) + student_t_logpdf(-0.5, 0.0, 3.5, 2.0 + 0.5 * 1.5 ** 2)
    precision_mean = 4.0 / (2.0 + 0.5 * (1.5 ** 2 + 0.5 ** 2))
    return {"hierarchy": ([hierarchy[1]], hierarchy_ll), "two chains": ([chains[1], chains[2]], chains_ll),
            "coin and rate": ([3 / 4, 5 / 2], coin_ll), "precision": ([precision_mean], precision_ll)}


def flat(value) -> list[float]:
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in flat(v)]
    return [float(value)]


@pytest.mark.parametrize("tier", (1, 2))
@pytest.mark.parametrize("name", EXACT_PROGRAMS)
def test_the_methods_agree_on_an_all_symbolic_plan_they_accept(name, tier):
    """SSI, DS and BP each give the exact answer of a plan they accept with every variable
    symbolic: the closed form (one particle, to rounding)."""
    answers = {}
    for method in COVERED:
        try:
            model = compile_at(EXACT_PROGRAMS[name], method, tier)
        except sirenc.SirenPlanError:
            continue
        f = model.filter(particles=1, seed=3)
        f.run()
        answers[method] = (np.array(flat(f.estimate())), f.log_evidence, f.runtime_plan())
    assert "ssi" in answers and "ds" in answers, sorted(answers)
    ref_estimate, ref_evidence = exact_answers()[name]
    for method, (estimate, evidence, plan) in answers.items():
        np.testing.assert_allclose(estimate, ref_estimate, rtol=1e-9, atol=1e-12, err_msg=method)
        assert evidence == pytest.approx(ref_evidence, rel=1e-9), method
        assert set(plan.values()) == {"symbolic"}, (method, plan)


WALK = """
val first = fun row -> List.hd(row) in
val step = fun (y, (x, xs)) ->
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in
  (x1, x1 :: xs)
in
let (_, xs) = fold(step, List.map(first, File.read("data.csv")), (0., [])) in
List.rev(xs)
"""


@pytest.mark.parametrize("tier", (1, 2))
@pytest.mark.parametrize("method", ["bp", "ssi"])
def test_a_symbolic_random_walk_gives_the_smoother_means(method, tier):
    """Edge reversal keeps every step's variable conditioned on the next: the means the estimate
    marginalises at the end are the Kalman smoother's (ARCHITECTURE.md §12.3, 14)."""
    ys = np.random.default_rng(3).normal(np.cumsum(np.random.default_rng(4).normal(size=40)), math.sqrt(0.5))
    _, _, log_evidence, steps = kalman(ys, q=1.0, r=0.5)
    smoothed, _ = _smooth(steps)
    model = compile_at(WALK.replace("let x1 <-", "let symbolic x1 <-"), method, tier)
    for seed in SEEDS[:2]:
        f = model.filter(particles=1, seed=seed)
        f.run(ys.reshape(-1, 1))
        np.testing.assert_allclose(f.estimate(), smoothed, rtol=1e-9, atol=1e-9)
        assert f.log_evidence == pytest.approx(log_evidence, rel=1e-9)
        assert f.runtime_plan() == {"x1": "symbolic"}


def test_delayed_sampling_refuses_a_symbolic_trajectory():
    """DS keeps no reversed edges: the analysis cannot keep every step's variable symbolic (ARCHITECTURE.md §13,
    17), and without the annotation the final expectation samples the chain it prunes."""
    with pytest.raises(sirenc.SirenPlanError, match="plan cannot be satisfied under ds: 'x1'"):
        sirenc.compile(WALK.replace("let x1 <-", "let symbolic x1 <-"), method="ds")
    f = sirenc.compile(WALK, method="ds").filter(particles=1, seed=0)
    f.run(np.arange(5.0).reshape(-1, 1))
    assert f.runtime_plan() == {"x1": "symbolic"}
    f.estimate()
    assert f.runtime_plan() == {"x1": "sample"}


@pytest.mark.parametrize("tier", (1, 2))
@pytest.mark.parametrize("method", COVERED)
def test_every_particle_of_an_exact_plan_carries_the_same_answer(method, tier):
    """With many particles an exact plan still gives the closed form: every weight is equal."""
    program, mean, log_evidence = gaussian_case()
    f = compile_at(program, method, tier).filter(particles=257, seed=5)
    f.run()
    assert f.estimate() == pytest.approx(mean, rel=1e-9)
    assert f.log_evidence == pytest.approx(log_evidence, rel=1e-9)
