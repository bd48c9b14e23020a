"""The plan analysis and the runtime agree on every conjugate pair (ARCHITECTURE.md §11), pair by pair.

The analysis' rules (sirenc/passes/plan_analysis/conjugacy.py) and the runtime's
(runtime_c/src/engine/conjugacy.c) are two implementations of one table; this test is what keeps them
one.  Each case is a small program whose parent is annotated `symbolic`, once where the rule's
check passes and once where one of its preconditions fails.  The analysis must accept exactly the
programs the runtime runs without sampling the parent: an accepted program compiled and run with
the check finds no violation, and a rejected one compiled with --no-check fails at run time with
an error naming the parent."""

from __future__ import annotations

import pytest

import sirenc
from markers import needs_runtime
from sirenc.diagnostics import SirenPlanError, SirenRuntimeError
from sirenc.driver import lower_to_siren
from sirenc.passes.plan_analysis import analyze

pytestmark = needs_runtime

# name -> (program, whether the pair is conjugate there)
CASES = {
    "gaussian, affine mean": (
        "let symbolic p <- gaussian(0., 1.) in let () = observe(gaussian(2. * p + 1., 1.), 0.5) in p", True),
    "gaussian, mean divided by a constant": (
        "let symbolic p <- gaussian(0., 1.) in let () = observe(gaussian(p / 4. - 1., 1.), 0.5) in p", True),
    "gaussian, chain of two": (
        "let symbolic p <- gaussian(0., 1.) in let symbolic q <- gaussian(p, 2.) in "
        "let () = observe(gaussian(q, 1.), 0.5) in (p, q)", True),
    "gaussian, square of the parent": (
        "let symbolic p <- gaussian(0., 1.) in let () = observe(gaussian(p * p, 1.), 0.5) in p", False),
    "gaussian, parent in the variance": (
        "let symbolic p <- gaussian(1., 1.) in let () = observe(gaussian(0., 2. + p), 0.5) in p", False),
    # SSI hoists lam into p first (ARCHITECTURE.md §12.3), where gamma-normal's check fails on the scaled
    # variance, so lam is sampled before the normal-inverse-gamma rule could apply.
    "normal-inverse-gamma shape": (
        "let symbolic lam <- gamma(2., 1.) in let symbolic p <- gaussian(0., 3. * (1. / lam)) in "
        "let () = observe(gaussian(p, 1. / lam), 1.) in lam", False),
    "bernoulli, parent in the probability": (
        "let symbolic z <- bernoulli(0.3) in let () = observe(bernoulli(if z then 0.9 else 0.2), true) in z",
        True),
    "beta-bernoulli": (
        "let symbolic p <- beta(2., 3.) in let () = observe(bernoulli(p), true) in p", True),
    "beta-bernoulli, a function of the parent": (
        "let symbolic p <- beta(2., 3.) in let () = observe(bernoulli(p * 0.5), true) in p", False),
    "beta-binomial": (
        "let symbolic p <- beta(2., 3.) in let () = observe(binomial(10., p), 7.) in p", True),
    "beta-binomial, symbolic trials": (
        "let symbolic n <- poisson(5.) in let symbolic p <- beta(2., 3.) in "
        "let () = observe(binomial(n, p), 3.) in p", False),
    "gamma-poisson, integral shape": (
        "let symbolic l <- gamma(3., 2.) in let () = observe(poisson(l), 4.) in l", True),
    "gamma-poisson, fractional shape": (
        "let symbolic l <- gamma(2.5, 2.) in let () = observe(poisson(l), 4.) in l", False),
    "gamma-normal, constant mean": (
        "let symbolic t <- gamma(2., 3.) in let () = observe(gaussian(1., 1. / t), 2.5) in t", True),
    "gamma-normal, variance not 1 / parent": (
        "let symbolic t <- gamma(2., 3.) in let () = observe(gaussian(1., 2. / t), 2.5) in t", False),
    "gaussian parent of a poisson": (
        "let symbolic p <- gaussian(5., 1.) in let () = observe(poisson(p * p), 4.) in p", False),
    "beta parent of a gaussian": (
        "let symbolic p <- beta(2., 3.) in let () = observe(gaussian(p, 1.), 0.5) in p", False),
}


# ARCHITECTURE.md §11.8: BP keeps the Gaussian pair alone; DS keeps every pair SSI does, but the expectation of a
# parent with a marginal child samples that child (ARCHITECTURE.md §13.4), so it cannot keep a chain's head.
GAUSSIAN = {"gaussian, affine mean", "gaussian, mean divided by a constant", "gaussian, chain of two"}


def conjugate_under(method: str, case: str) -> bool:
    if method == "bp":
        return case in GAUSSIAN
    if method == "ds" and case == "gaussian, chain of two":
        return False
    return CASES[case][1]


@pytest.mark.parametrize("method", ["ssi", "ds", "bp"])
@pytest.mark.parametrize("case", CASES)
def test_analysis_and_runtime_agree(case, method):
    program, _ = CASES[case]
    try:
        analyze(lower_to_siren(program), method)
        accepted = True
    except SirenPlanError:
        accepted = False
    assert accepted == conjugate_under(method, case), f"the analysis {'accepts' if accepted else 'rejects'} {case}"
    f = sirenc.compile(program, method=method, check=False).filter(particles=4, seed=0)
    if accepted:
        f.run()
        f.estimate()
        assert set(f.runtime_plan().values()) == {"symbolic"}, f.runtime_plan()
    else:
        with pytest.raises(SirenRuntimeError, match="is annotated as symbolic but will be sampled"):
            f.run()
            f.estimate()
