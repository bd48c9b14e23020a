"""The distribution families of Siren (ARCHITECTURE.md §9): the one table every stage reads.

    >>> from sirenc.distributions import FAMILIES, family
    >>> g = family("gaussian")
    >>> g.id, g.param_names, g.value
    (0, ('mean', 'variance'), 'float')
    >>> [p.shape for p in family("categorical").params]
    ['float', 'float', 'list']
    >>> [f.name for f in FAMILIES][:3]
    ['gaussian', 'beta', 'bernoulli']

The frontend takes the names, the parameter names of its messages ("the variance of
gaussian") and the parameter and draw types from here; the ``siren`` dialect the
parameter counts; the lowering the machine shape of each parameter; the runtime the
family ids and the C prototypes.  ``runtime_c/include/sirenrt_families.h`` is generated
from this table (``python -m sirenc.runtime.families_header``), and a test checks that
the committed header is what the table generates.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAMILIES", "NAMES", "Family", "Param", "family", "FLOAT", "BOOL", "LIST", "POINT"]

# Parameter shapes and draw types.
FLOAT = "float"   # an f64; a C double
LIST = "list"     # a list(float), passed to the runtime as a list handle (int64)
POINT = "point"   # delta's point, a float or a bool; the runtime gets it as a double
BOOL = "bool"     # bernoulli's draws; the runtime returns 0.0 / 1.0


@dataclass(frozen=True)
class Param:
    name: str           # as messages say it: "the variance of gaussian"
    c_name: str         # its name in the runtime's prototypes
    shape: str = FLOAT


@dataclass(frozen=True)
class Family:
    id: int             # the runtime's SIRENRT_FAM_* number: the position in FAMILIES
    name: str
    params: tuple[Param, ...]
    value: str          # the type of a draw: FLOAT, BOOL, or POINT (the type of the point)
    support: str        # ARCHITECTURE.md §9's support column, for people

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def arity(self) -> int:
        return len(self.params)

    @property
    def discrete(self) -> bool:
        """Its draws are integers or bools (a distribution function with jumps)."""
        return self.name in _DISCRETE


def _families(*rows: tuple) -> tuple[Family, ...]:
    return tuple(
        Family(i, name, tuple(Param(*p) for p in params), value, support)
        for i, (name, params, value, support) in enumerate(rows)
    )


# In the runtime's family order, which the ABI fixes (sirenrt_sample_many's `family`):
# append new families at the end.
FAMILIES: tuple[Family, ...] = _families(
    ("gaussian", [("mean", "mu"), ("variance", "var")], FLOAT, "real"),
    ("beta", [("alpha", "a"), ("beta", "b")], FLOAT, "[0, 1]"),
    ("bernoulli", [("probability", "p")], BOOL, "bool"),
    ("binomial", [("trials", "n"), ("probability", "p")], FLOAT, "0..n"),
    ("beta_binomial", [("trials", "n"), ("alpha", "a"), ("beta", "b")], FLOAT, "0..n"),
    ("negative_binomial", [("successes", "n"), ("probability", "p")], FLOAT, "0, 1, 2, ..."),
    ("exponential", [("rate", "rate")], FLOAT, "[0, inf)"),
    ("gamma", [("shape", "shape"), ("rate", "rate")], FLOAT, "[0, inf)"),
    ("poisson", [("rate", "lambda")], FLOAT, "0, 1, 2, ..."),
    ("delta", [("value", "v", POINT)], POINT, "the value"),
    ("categorical", [("lowest value", "lo"), ("highest value", "hi"), ("probabilities", "probs", LIST)],
     FLOAT, "lo..hi"),
    ("uniform_int", [("lowest value", "a"), ("highest value", "b")], FLOAT, "a..b"),
    ("student_t", [("location", "mu"), ("squared scale", "tau2"), ("degrees of freedom", "nu")],
     FLOAT, "real"),
)

_DISCRETE = frozenset({"bernoulli", "binomial", "beta_binomial", "negative_binomial", "poisson", "uniform_int",
                       "categorical"})

# What users of other languages call Siren's families, for "did you mean" (lower case).
OTHER_NAMES = {
    "normal": "gaussian", "gauss": "gaussian", "norm": "gaussian", "bern": "bernoulli", "binom": "binomial",
    "betabinomial": "beta_binomial", "betabinom": "beta_binomial", "negativebinomial": "negative_binomial",
    "negbinomial": "negative_binomial", "nbinom": "negative_binomial", "expon": "exponential",
    "pois": "poisson", "cat": "categorical", "discrete": "categorical", "studentt": "student_t",
    "randint": "uniform_int", "dirac": "delta",
}

NAMES: tuple[str, ...] = tuple(f.name for f in FAMILIES)
_BY_NAME = {f.name: f for f in FAMILIES}


def family(name: str) -> Family:
    """The family called ``name``; ``KeyError`` for any other name."""
    return _BY_NAME[name]
