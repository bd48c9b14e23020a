"""The conjugate pairs of symbolic inference (ARCHITECTURE.md §11), stated once.

A pair is a parent distribution and a child distribution whose parameters mention the parent in a
shape the pair *requires*. Swapping them gives the child its marginal (the parent integrated out)
and the parent its posterior given the child; a few pairs also rewrite a third variable (`side`).

Three consumers read this table, none has its own:

- the runtime's engine (tier 1): `python -m sirenc.runtime.conjugacy_source` writes the rules of
  `runtime_c/src/engine/conjugacy_rules.h` from it, checks and formulas both;
- tier 2's staging (`passes/tier2/staged_conjugacy.py`) interprets it over staged expressions;
- the plan analysis (`passes/plan_analysis/conjugacy.py`) interprets it over abstract expressions.

A formula is a function of an algebra `A` (`const`, `add`, `sub`, `mul`, `div`, `ite`, `subst`) and
the named operands `v` (the parameters, the child's value `x`, and what the requirements bind), so
each consumer's smart constructors build its own expressions in the same shape. Where a consumer
leaves a pair out, `absent` says which and why; where it computes a pair differently, the rule
says so next to the formula.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# The runtime, tier 2 and the plan analysis, by the names `absent` uses.
CONSUMERS = ("runtime", "tier2", "analysis")

# A shape (Gamma-Poisson's) counts as an integer when numpy.isclose would say so: |v - k| <= ATOL + RTOL*|k|.
NEAR_INT_RTOL, NEAR_INT_ATOL = 1e-5, 1e-8


def near_int(v: float) -> bool:
    k = round(v)
    return abs(v - k) <= NEAR_INT_ATOL + NEAR_INT_RTOL * abs(k)


# ---- requirements: the shapes a pair needs; "parent" and "child" are the pair's variables ------------------------


@dataclass(frozen=True)
class Free:
    """`expr` does not depend on the variable `on`."""
    expr: str
    on: str


@dataclass(frozen=True)
class Mentions:
    """`expr` mentions the variable `on` itself."""
    expr: str
    on: str


@dataclass(frozen=True)
class Is:
    """`expr` is exactly the variable `var`."""
    expr: str
    var: str


@dataclass(frozen=True)
class Constant:
    """`expr` is a number; with `integral`, one `near_int` accepts."""
    expr: str
    integral: bool = False


@dataclass(frozen=True)
class Affine:
    """`expr` = a*`var` + b with every other variable a constant; binds `a` and `b`."""
    expr: str
    var: str


@dataclass(frozen=True)
class Precision:
    """`expr` is structurally `1 / var` (as `1/tau` or `1./tau` is written)."""
    expr: str
    var: str


@dataclass(frozen=True)
class GammaPrecision:
    """`expr` is structurally `1 / lam` with `lam` a third variable whose distribution is a gamma;
    binds `lam` and its parameters `alpha` and `beta`, which depend on neither the parent nor the child."""
    expr: str


@dataclass(frozen=True)
class ScaledBy:
    """`expr` = k * `by` structurally (ARCHITECTURE.md §11.7) with k a non-zero number; binds `kappa` = 1/k."""
    expr: str
    by: str


Requirement = Free | Mentions | Is | Constant | Affine | Precision | GammaPrecision | ScaledBy


@dataclass(frozen=True)
class Update:
    """What a swap gives: the child's marginal, the parent's posterior, and any third variable's."""
    marginal: tuple[str, tuple]
    posterior: tuple[str, tuple]
    side: dict[str, tuple[str, tuple]] = field(default_factory=dict)


@dataclass(frozen=True)
class Pair:
    name: str
    parent: tuple[str, tuple[str, ...]]   # family, the names of its parameters
    child: tuple[str, tuple[str, ...]]
    methods: tuple[str, ...]              # ARCHITECTURE.md §11.8: the methods that swap this pair
    requires: tuple[Requirement, ...]
    update: Callable[..., Update]
    # The consumers that leave the pair out, each with its reason.
    absent: dict[str, str] = field(default_factory=dict)
    # Tier 2's own arithmetic for the same update, where it has one: compiled code computes it
    # with every number known, so it may reassociate what the runtime builds as expressions.
    staged: Callable[..., Update] | None = None

    @property
    def parent_family(self) -> str:
        return self.parent[0]

    @property
    def child_family(self) -> str:
        return self.child[0]

    def serves(self, consumer: str, method: str) -> bool:
        assert consumer in CONSUMERS, consumer
        return consumer not in self.absent and method in self.methods


# ---- the pairs ----------------------------------------------------------------------------------


def _gaussian(A, v) -> Update:
    # ARCHITECTURE.md §11.2's construction, literally: the analysis mirrors the runtime's shapes.
    aa = A.mul(v.a, v.a)
    mu01 = A.add(A.mul(v.a, v.mu0), v.b)
    v01 = A.mul(aa, v.v0)
    v02 = A.div(A.const(1.0), A.add(A.div(A.const(1.0), v01), A.div(A.const(1.0), v.v)))
    mu02 = A.mul(A.add(A.div(mu01, v01), A.div(v.x, v.v)), v02)
    return Update(marginal=("gaussian", (mu01, A.add(v01, v.v))),
                  posterior=("gaussian", (A.div(A.sub(mu02, v.b), v.a), A.div(v02, aa))))


def _gaussian_staged(A, v) -> Update:
    # The same posterior with the gain k = a*v0/s: equal to rounding, one division instead of
    # seven, and finite where a is 0 (where §11.2's divides by a). tests/unit/test_conjugate_pairs.py
    # holds the two forms to the same numbers.
    mu01 = A.add(A.mul(v.a, v.mu0), v.b)
    s = A.add(A.mul(A.mul(v.a, v.a), v.v0), v.v)
    inv = A.div(A.const(1.0), s)
    k = A.mul(A.mul(v.a, v.v0), inv)
    return Update(marginal=("gaussian", (mu01, s)),
                  posterior=("gaussian", (A.add(v.mu0, A.mul(k, A.sub(v.x, mu01))), A.mul(A.mul(v.v0, v.v), inv))))


def _normal_inverse_gamma(A, v) -> Update:
    # ARCHITECTURE.md §0.3's correct update (not the original's, §11.3): the precision's gamma is
    # updated once, by the side effect.
    k1 = A.add(v.kappa, A.const(1.0))
    d = A.sub(v.x, v.mu0)
    beta = A.add(v.beta, A.div(A.mul(v.kappa, A.mul(d, d)), A.mul(A.const(2.0), k1)))
    return Update(
        marginal=("student_t", (v.mu0, A.div(A.mul(v.beta, k1), A.mul(v.alpha, v.kappa)), A.mul(A.const(2.0), v.alpha))),
        posterior=("gaussian", (A.div(A.add(A.mul(v.kappa, v.mu0), v.x), k1), A.div(A.const(1.0), A.mul(k1, v.lam)))),
        side={"lam": ("gamma", (A.add(v.alpha, A.const(0.5)), beta))})


def _bernoulli_bernoulli(A, v) -> Update:
    on_true, on_false = A.subst(v.q2, "parent", True), A.subst(v.q2, "parent", False)
    m = A.add(A.mul(v.q1, on_true), A.mul(A.sub(A.const(1.0), v.q1), on_false))
    lik = A.subst(A.ite(v.x, v.q2, A.sub(A.const(1.0), v.q2)), "parent", True)
    post = A.div(A.mul(v.q1, lik), A.ite(v.x, m, A.sub(A.const(1.0), m)))
    return Update(marginal=("bernoulli", (m,)), posterior=("bernoulli", (post,)))


def _beta_bernoulli(A, v) -> Update:
    one, zero = A.const(1.0), A.const(0.0)
    return Update(marginal=("bernoulli", (A.div(v.al, A.add(v.al, v.be)),)),
                  posterior=("beta", (A.add(v.al, A.ite(v.x, one, zero)), A.add(v.be, A.ite(v.x, zero, one)))))


def _beta_binomial(A, v) -> Update:
    return Update(marginal=("beta_binomial", (v.n, v.al, v.be)),
                  posterior=("beta", (A.add(v.al, v.x), A.add(v.be, A.sub(v.n, v.x)))))


def _gamma_poisson(A, v) -> Update:
    # The marginal's n is the shape itself: a Gamma-Poisson mixture is NegativeBinomial(alpha, beta/(1+beta))
    # for any real alpha, where the original's int(alpha) turns 2.9999999 into 2.
    return Update(marginal=("negative_binomial", (v.al, A.div(v.be, A.add(A.const(1.0), v.be)))),
                  posterior=("gamma", (A.add(v.al, v.x), A.add(v.be, A.const(1.0)))))


def _gamma_gaussian(A, v) -> Update:
    d = A.sub(v.x, v.mu)
    return Update(marginal=("student_t", (v.mu, A.div(v.be, v.al), A.mul(A.const(2.0), v.al))),
                  posterior=("gamma", (A.add(v.al, A.const(0.5)), A.add(v.be, A.mul(A.const(0.5), A.mul(d, d))))))


_ALL, _NOT_BP = ("ssi", "ds", "bp"), ("ssi", "ds")

PAIRS: tuple[Pair, ...] = (
    Pair("gaussian-gaussian", ("gaussian", ("mu0", "v0")), ("gaussian", ("mu", "v")), _ALL,
         (Free("mu0", "child"), Free("v0", "child"), Free("v", "parent"), Affine("mu", "parent")),
         _gaussian, staged=_gaussian_staged),
    Pair("normal-inverse-gamma", ("gaussian", ("mu0", "v1")), ("gaussian", ("mu", "v2")), _NOT_BP,
         (GammaPrecision("v2"), Constant("mu0"), Is("mu", "parent"), ScaledBy("v1", "v2"),
          Free("mu0", "child"), Free("v1", "child")),
         _normal_inverse_gamma,
         absent={
             "runtime": "SSI never reaches it: hoisting makes the precision a root before the mean, and "
                        "then gamma-gaussian decides; no benchmark plan needs it under DS",
             "tier2": "the runtime does not have it, and tier 2 keeps symbolic only what tier 1 does"}),
    Pair("bernoulli-bernoulli", ("bernoulli", ("q1",)), ("bernoulli", ("q2",)), _NOT_BP,
         (Mentions("q2", "parent"), Free("q1", "child")),
         _bernoulli_bernoulli,
         absent={"tier2": "tier 2 stages no Bernoulli-Bernoulli rule; it must not draw where tier 1 keeps "
                          "both exact, so such a program stays on tier 1"}),
    Pair("beta-bernoulli", ("beta", ("al", "be")), ("bernoulli", ("p",)), _NOT_BP,
         (Is("p", "parent"), Free("al", "child"), Free("be", "child")),
         _beta_bernoulli),
    Pair("beta-binomial", ("beta", ("al", "be")), ("binomial", ("n", "p")), _NOT_BP,
         (Is("p", "parent"), Constant("n"), Constant("al"), Free("be", "child")),
         _beta_binomial),
    Pair("gamma-poisson", ("gamma", ("al", "be")), ("poisson", ("l",)), _NOT_BP,
         (Is("l", "parent"), Constant("al", integral=True), Free("be", "child")),
         _gamma_poisson),
    Pair("gamma-gaussian", ("gamma", ("al", "be")), ("gaussian", ("mu", "v")), _NOT_BP,
         (Constant("mu"), Precision("v", "parent"), Free("al", "child"), Free("be", "child")),
         _gamma_gaussian),
)


def pairs_for(consumer: str, parent: str, child: str, method: str) -> list[Pair]:
    """The pairs `consumer` swaps for these families under `method`, in the table's order."""
    return [r for r in PAIRS
            if r.parent_family == parent and r.child_family == child and r.serves(consumer, method)]


def absent_from(consumer: str, parent: str, child: str, method: str) -> Pair | None:
    """A pair of these families that `method` uses and `consumer` leaves out (with its reason)."""
    for r in PAIRS:
        if r.parent_family == parent and r.child_family == child and method in r.methods and consumer in r.absent:
            return r
    return None


class Operands:
    """The named operands of a formula: `v.mu0`, `v.x`, ..."""

    def __init__(self, names: dict):
        self.__dict__.update(names)


__all__ = ["PAIRS", "Pair", "Update", "Operands", "pairs_for", "absent_from", "near_int", "CONSUMERS",
           "Free", "Mentions", "Is", "Constant", "Affine", "Precision", "GammaPrecision", "ScaledBy"]
