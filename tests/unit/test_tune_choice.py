"""The final choice among the plans tune raced (sirenc.tuning.choice): noise may make a plan
indistinguishable from the fastest, but only an equally fast one is chosen over it."""

from __future__ import annotations

import numpy as np
import pytest

from sirenc.tuning import choice


def test_a_simpler_plan_the_noise_cannot_rule_out_is_not_chosen_when_its_estimate_is_slower():
    b = 100
    fast = np.full(b, 1.0)
    slow = np.where(np.arange(b) < 30, 1.0, 2.0)       # as fast in 30% of the resamplings
    c = choice.choose(np.stack([fast, slow]), np.array([1.0, 2.0]), [(1,), (0,)], eligible=2)
    assert c.leader == 0 and c.ties == (1,)
    assert c.chosen == 0


def test_of_two_equally_fast_plans_the_simpler_is_chosen():
    b = 100
    times = np.stack([np.full(b, 1.0), np.full(b, 1.05)])
    c = choice.choose(times, np.array([1.0, 1.05]), [(1,), (0,)], eligible=2)
    assert c.leader == 0 and c.ties == (1,) and c.chosen == 1
    assert c.regret == pytest.approx(1.05)


def test_a_plan_dropped_before_the_end_may_tie_but_is_not_chosen():
    b = 50
    times = np.stack([np.full(b, 1.0), np.full(b, 1.0)])
    c = choice.choose(times, np.array([1.0, 1.0]), [(1,), (0,)], eligible=1)
    assert c.ties == (1,) and c.chosen == 0
