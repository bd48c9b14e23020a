"""The choice among the plans left at the end, and how sure it is.

Each plan's time to the target is estimated from a few runs, so it is noisy. The bootstrap
resamples the pilot runs (every group's runs, with replacement, estimates and times together)
and estimates everything again: the reference, each plan's error, particles and time. Then:

* the leader is the plan of least estimated time among those that stayed in the race;
* a plan is indistinguishable from it when, in ``TIE`` of the resamplings or more, it is at
  least as fast or slower by ``EQUAL`` at most (the wall time of one machine drifts by that
  much from one run of tune to the next); also a plan the halving dropped;
* the chosen plan is the first of the leader and the plans indistinguishable from it that
  stayed in the race and whose estimated time is within ``EQUAL`` of the leader's, an exact one
  before one that samples (for the same time it has no error at all), then in the cost model's
  order: among plans equally fast by the pilots, the simpler one. A plan the resamplings cannot
  tell from the leader but whose own estimate is slower is reported as indistinguishable, not
  chosen: the noise says it may be as fast, the estimate says it is likely slower;
* ``win_share`` is the share of resamplings in which the chosen plan is the fastest, and
  ``regret`` the 90th percentile over them of its time divided by the fastest plan's: 1.0 says
  that choosing it costs nothing in nine resamplings of ten, even where another plan "wins"
  (two methods that compile a plan to the same code split the wins between them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TIE = 0.1
EQUAL = 0.1
REGRET_QUANTILE = 0.9


@dataclass(frozen=True)
class Choice:
    chosen: int                    # an index into the plans compared
    leader: int
    ties: tuple[int, ...]          # indistinguishable from the leader (the chosen may be one)
    wins: np.ndarray               # per plan, its share of the resamplings in which it is fastest
    win_share: float
    regret: float


def choose(seconds: np.ndarray, point: np.ndarray, cost_order: list, eligible: int) -> Choice:
    """``seconds``: plans x resamplings of the time to the target; ``point``: the estimates from
    the runs as they are; ``cost_order``: each plan's key for breaking ties. The leader and the chosen
    plan are among the first ``eligible`` plans; ties may be any."""
    n, b = seconds.shape
    leader = int(np.argmin(point[:eligible]))
    ties = tuple(j for j in range(n)
                 if j != leader and np.mean(seconds[j] <= (1 + EQUAL) * seconds[leader]) >= TIE)
    close = [j for j in (leader, *ties) if j < eligible and point[j] <= (1 + EQUAL) * point[leader]]
    chosen = min(close, key=lambda j: cost_order[j])
    fastest = np.argmin(seconds, axis=0)
    wins = np.bincount(fastest, minlength=n) / b
    best = seconds.min(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(np.isfinite(seconds[chosen]), seconds[chosen] / best, np.inf)
    ratio = np.where(np.isnan(ratio), 1.0, ratio)       # every plan's time 0 (too fast to measure)
    return Choice(chosen, leader, ties, wins, float(wins[chosen]), float(np.quantile(ratio, REGRET_QUANTILE)))


def resamplings(runs: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` resamplings (count x runs) of the indices of ``runs`` runs."""
    return rng.integers(0, runs, size=(count, runs))
