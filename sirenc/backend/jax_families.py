"""The distribution families of ARCHITECTURE.md §9 as JAX array functions, for the JAX back end.

Each family has its validity checks (the same conditions and messages as the C runtime's
``rt_bad_*``), a sampler drawing one value per particle from a JAX key, and a log density
with the runtime's boundary conventions (out of the support -inf, ``0 * log 0 = 0``).
Parameters are arrays that broadcast against the particle axis; every function is
elementwise, so a draw or density of n particles is one vectorised call.

    >>> import jax, jax.numpy as jnp
    >>> x = sample("gaussian", jax.random.key(0), [jnp.float64(0.), jnp.float64(1.)], (4,), jnp.float64)
    >>> x.shape
    (4,)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln, xlog1py, xlogy

from sirenc import distributions
from sirenc.backend.jax_values import take_last

__all__ = ["CHECKS", "SUPPORTED", "categorical_probs", "logpdf", "sample"]

# family -> [(bad(params) -> bool array, message, index of the parameter the message shows)]
Check = tuple[Callable[[list], object], str, int]


def _is_int(x):
    return jnp.isfinite(x) & (x == jnp.floor(x))


def _is_prob(p):
    return (p >= 0.0) & (p <= 1.0)


def _count_ok(n):
    return (n >= 0.0) & jnp.isfinite(n)


CHECKS: dict[str, list[Check]] = {
    "gaussian": [(lambda p: ~(p[1] > 0.0), "gaussian: variance must be > 0, got {}", 1)],
    "beta": [(lambda p: ~(p[0] > 0.0), "beta: alpha must be > 0, got {}", 0),
             (lambda p: ~(p[1] > 0.0), "beta: beta must be > 0, got {}", 1)],
    "bernoulli": [(lambda p: ~_is_prob(p[0]), "bernoulli: probability must be in [0, 1], got {}", 0)],
    "binomial": [(lambda p: ~_count_ok(p[0]), "binomial: n must be >= 0 and finite, got {}", 0),
                 (lambda p: ~_is_prob(p[1]), "binomial: probability must be in [0, 1], got {}", 1)],
    "beta_binomial": [(lambda p: ~_count_ok(p[0]), "beta_binomial: n must be >= 0 and finite, got {}", 0),
                      (lambda p: ~(p[1] > 0.0), "beta_binomial: alpha must be > 0, got {}", 1),
                      (lambda p: ~(p[2] > 0.0), "beta_binomial: beta must be > 0, got {}", 2)],
    "negative_binomial": [
        (lambda p: ~((p[0] > 0.0) & jnp.isfinite(p[0])), "negative_binomial: n must be > 0 and finite, got {}", 0),
        (lambda p: ~_is_prob(p[1]), "negative_binomial: probability must be in [0, 1], got {}", 1)],
    "exponential": [(lambda p: ~(p[0] > 0.0), "exponential: rate must be > 0, got {}", 0)],
    "gamma": [(lambda p: ~(p[0] > 0.0), "gamma: shape must be > 0, got {}", 0),
              (lambda p: ~(p[1] > 0.0), "gamma: rate must be > 0, got {}", 1)],
    "poisson": [(lambda p: ~((p[0] >= 0.0) & jnp.isfinite(p[0])), "poisson: rate must be >= 0 and finite, got {}", 0)],
    "delta": [],
    "categorical": [
        (lambda p: ~(_is_int(p[0]) & (p[0] >= 0.0)), "categorical: lower bound must be an integer >= 0, got {}", 0),
        (lambda p: ~(_is_int(p[1]) & (p[1] >= p[0])),
         "categorical: upper bound must be an integer >= the lower bound, got {}", 1),
        (lambda p: p[3] != p[1] - p[0] + 1.0,
         "categorical: the number of probabilities does not match the values lo..hi; it is {}", 3),
        (lambda p: ~jnp.all(_is_prob(p[2]) | ~p[4], axis=-1),
         "categorical: every probability must be in [0, 1] (the highest value given is {})", 5),
        (lambda p: ~(jnp.abs(jnp.sum(jnp.where(p[4], p[2], 0.0), axis=-1) - 1.0) <= 1e-8 + 1e-5),
         "categorical: probabilities must sum to 1, got {}", 6)],
    "uniform_int": [(lambda p: ~(_is_int(p[0]) & _is_int(p[1])), "uniform_int: bounds must be integers, got {}", 0),
                    (lambda p: ~(p[0] <= p[1]), "uniform_int: lower bound must be <= upper bound, got {}", 0),
                    (lambda p: p[1] - p[0] >= 2.0 ** 53, "uniform_int: the range is too large, from {}", 0)],
    "student_t": [(lambda p: ~(p[1] > 0.0), "student_t: squared scale must be > 0, got {}", 1),
                  (lambda p: ~(p[2] > 1.0), "student_t: degrees of freedom must be > 1, got {}", 2)],
}
SUPPORTED = frozenset(CHECKS)
assert SUPPORTED == set(distributions.NAMES), "a family without a JAX form"


def categorical_probs(probs_cols, length, cap: int):
    """A probabilities list as (values in list order, valid mask) over the last axis: a list
    keeps its head at column ``length - 1`` (``jax_values.JList``)."""
    k = jnp.arange(cap)
    index = jnp.clip(jnp.asarray(length)[..., None] - 1 - k, 0, max(cap - 1, 0))
    vals = take_last(probs_cols, index) if cap else probs_cols
    return vals, k < jnp.asarray(length)[..., None]


def check_params(name: str, params: Sequence) -> list:
    """The parameters as the checks read them; categorical's list becomes (probs, valid, count,
    the largest probability, its sum) so that messages can show a number."""
    if name != "categorical":
        return list(params)
    lo, hi, (probs, valid) = params
    count = jnp.sum(valid, axis=-1).astype(probs.dtype)
    top = jnp.max(jnp.where(valid, probs, -jnp.inf), axis=-1)
    total = jnp.sum(jnp.where(valid, probs, 0.0), axis=-1)
    return [lo, hi, probs, count, valid, top, total]


def sample(name: str, key, params: Sequence, shape: tuple[int, ...], dtype):
    """One draw per element of `shape` (the particles), as floats of `dtype`."""
    p = [jnp.broadcast_to(jnp.asarray(x, dtype), shape) for x in params] if name != "categorical" else params
    if name == "gaussian":
        return p[0] + jnp.sqrt(p[1]) * jax.random.normal(key, shape, dtype)
    if name == "beta":
        return jax.random.beta(key, p[0], p[1], shape, dtype)
    if name == "bernoulli":
        return (jax.random.uniform(key, shape, dtype) < p[0]).astype(dtype)
    if name == "binomial":
        return _binomial(key, p[0], p[1], shape, dtype)
    if name == "beta_binomial":
        k1, k2 = jax.random.split(key)
        return _binomial(k2, p[0], jax.random.beta(k1, p[1], p[2], shape, dtype), shape, dtype)
    if name == "negative_binomial":
        k1, k2 = jax.random.split(key)
        rate = jax.random.gamma(k1, p[0], shape, dtype) * (1.0 - p[1]) / p[1]
        return jax.random.poisson(k2, rate, shape).astype(dtype)
    if name == "exponential":
        return jax.random.exponential(key, shape, dtype) / p[0]
    if name == "gamma":
        return jax.random.gamma(key, p[0], shape, dtype) / p[1]
    if name == "poisson":
        return jax.random.poisson(key, p[0], shape).astype(dtype)
    if name == "delta":
        return p[0]
    if name == "categorical":
        lo, _hi, (probs, valid) = params
        logits = jnp.where(valid, jnp.log(probs), -jnp.inf)
        index = jax.random.categorical(key, jnp.broadcast_to(logits, (*shape, logits.shape[-1])), axis=-1)
        return jnp.asarray(lo, dtype) + index.astype(dtype)
    if name == "uniform_int":
        u = jax.random.uniform(key, shape, dtype)
        return jnp.minimum(jnp.floor(p[0] + u * (p[1] - p[0] + 1.0)), p[1])
    if name == "student_t":
        return p[0] + jnp.sqrt(p[1]) * jax.random.t(key, p[2], shape, dtype)
    raise AssertionError(name)


def _binomial(key, n, p, shape, dtype):
    # jax.random.binomial is exact for every n and p; the draw is a count, kept as a float
    return jax.random.binomial(key, n, p, shape, dtype)


def logpdf(name: str, params: Sequence, x):
    """The log density (or mass) at x; NaN where the parameters are invalid."""
    p = params
    if name == "gaussian":
        d = x - p[0]
        return -0.5 * jnp.log(2.0 * math.pi * p[1]) - d * d / (2.0 * p[1])
    if name == "beta":
        inside = (x >= 0.0) & (x <= 1.0)
        return jnp.where(inside, -betaln(p[0], p[1]) + xlogy(p[0] - 1.0, x) + xlog1py(p[1] - 1.0, -x), -jnp.inf)
    if name == "bernoulli":
        return jnp.where(jnp.isnan(x), -jnp.inf, jnp.where(x != 0.0, jnp.log(p[0]), jnp.log1p(-p[0])))
    if name == "binomial":
        inside = _is_int(x) & (x >= 0.0) & (x <= p[0])
        return jnp.where(inside, _log_choose(p[0], x) + xlogy(x, p[1]) + xlog1py(p[0] - x, -p[1]), -jnp.inf)
    if name == "beta_binomial":
        inside = _is_int(x) & (x >= 0.0) & (x <= p[0])
        value = _log_choose(p[0], x) + betaln(x + p[1], p[0] - x + p[2]) - betaln(p[1], p[2])
        return jnp.where(inside, value, -jnp.inf)
    if name == "negative_binomial":
        inside = _is_int(x) & (x >= 0.0)
        value = gammaln(x + p[0]) - gammaln(x + 1.0) - gammaln(p[0]) + p[0] * jnp.log(p[1]) + xlog1py(x, -p[1])
        return jnp.where(inside, value, -jnp.inf)
    if name in ("gamma", "exponential"):
        shape, rate = (p[0], p[1]) if name == "gamma" else (1.0, p[0])
        inside = (x >= 0.0) & ~jnp.isinf(x)
        value = xlogy(shape - 1.0, x) - rate * x - gammaln(shape) + shape * jnp.log(rate)
        return jnp.where(inside, value, -jnp.inf)
    if name == "poisson":
        inside = _is_int(x) & (x >= 0.0)
        return jnp.where(inside, xlogy(x, p[0]) - p[0] - gammaln(x + 1.0), -jnp.inf)
    if name == "delta":
        return jnp.where(x == p[0], 0.0, -jnp.inf)
    if name == "categorical":
        lo, hi, (probs, _valid) = p
        inside = _is_int(x) & (x >= lo) & (x <= hi)
        index = jnp.clip(x - lo, 0, probs.shape[-1] - 1).astype(jnp.int32)
        picked = take_last(probs, jnp.asarray(index)[..., None])[..., 0]
        return jnp.where(inside, jnp.log(picked), -jnp.inf)
    if name == "uniform_int":
        inside = _is_int(x) & (x >= p[0]) & (x <= p[1])
        return jnp.where(inside, -jnp.log(p[1] - p[0] + 1.0), -jnp.inf)
    if name == "student_t":
        d = x - p[0]
        nu, tau2 = p[2], p[1]
        return (gammaln(0.5 * (nu + 1.0)) - gammaln(0.5 * nu) - 0.5 * jnp.log(nu) - 0.5 * math.log(math.pi)
                - 0.5 * jnp.log(tau2) - 0.5 * (nu + 1.0) * jnp.log1p(d * d / (nu * tau2)))
    raise AssertionError(name)


def betaln(a, b):
    # as the C runtime computes it: jax.scipy.special.betaln is off by about 1e-7 relative
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def _log_choose(n, k):
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
