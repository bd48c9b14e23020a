"""Effective sample size and split R-hat of Markov chains (``sirenc.mh``), after Geyer (1992)
and Vehtari et al. (2021), the estimators Stan and ArviZ report.

    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=4000)       # independent draws
    >>> 3500 < effective_size(x) < 4500
    True

``effective_size`` of one chain sums its autocorrelations in pairs (Geyer's initial positive
sequence, made monotone) until a pair's sum is no longer positive: n / (1 + 2 sum rho_t).
``split_rhat`` compares the halves of every chain: near 1 when they agree, above 1.01 worth a
longer run."""

from __future__ import annotations

import numpy as np


def autocorrelation(x: np.ndarray) -> np.ndarray:
    """rho_0, rho_1, ... of the series x (rho_0 = 1), by FFT; all zero for a constant series."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    d = x - x.mean()
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(d, size)
    acov = np.fft.irfft(f * np.conj(f), size)[:n] / n
    return acov / acov[0] if acov[0] > 0 else np.zeros(n)


def effective_size(x: np.ndarray) -> float:
    """The effective sample size of the draws x of one chain; n for a constant series (every draw
    says the same) and for fewer than 4 draws."""
    n = int(np.size(x))
    if n < 4:
        return float(n)
    rho = autocorrelation(x)
    if not rho.any():
        return float(n)
    pairs = rho[: n - n % 2].reshape(-1, 2).sum(axis=1)   # rho_0 + rho_1, rho_2 + rho_3, ...
    stop = np.flatnonzero(pairs <= 0)
    pairs = np.minimum.accumulate(pairs[: stop[0] if stop.size else pairs.size])
    tau = -1.0 + 2.0 * pairs.sum()                          # 1 + 2 sum_{t >= 1} rho_t
    return float(n / max(tau, 1.0 / np.log10(max(n, 10))))  # Stan's cap on antithetic chains


def split_rhat(chains: list[np.ndarray]) -> float:
    """The split R-hat of one quantity's draws in several chains (each halved; equal lengths are
    cut to the shortest)."""
    m = min(np.size(c) for c in chains)
    half = m // 2
    if half < 2:
        return float("nan")
    parts = [np.asarray(c, dtype=np.float64)[k * half:(k + 1) * half] for c in chains for k in (0, 1)]
    x = np.stack(parts)
    within = x.var(axis=1, ddof=1).mean()
    between = half * x.mean(axis=1).var(ddof=1)
    if within == 0:
        return 1.0 if between == 0 else float("inf")
    return float(np.sqrt(((half - 1) / half * within + between / half) / within))
