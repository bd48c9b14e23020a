"""tune's error is reached part by part (sirenc.tuning.accuracy, pilots.parts): the elements of
a tuple result each meet the target, so a long trajectory cannot hide a parameter's error."""

from __future__ import annotations

import numpy as np

from sirenc.tuning import accuracy
from sirenc.tuning.pilots import Group, flatten, parts


def test_a_tuple_result_has_a_part_per_element_and_right_nested_pairs_are_unrolled():
    value = (np.array([1.0, 2.0, 3.0]), (0.5, (np.array([]), True)))
    assert flatten(value) == [1.0, 2.0, 3.0, 0.5, 1.0]
    assert parts(value).tolist() == [0, 0, 0, 1, 3]
    assert parts(2.0).tolist() == [0] and parts(np.zeros(4)).tolist() == [0, 0, 0, 0]


def test_the_worst_part_decides():
    squared = np.array([[0.01] * 100 + [1.0]])
    layout = np.array([0] * 100 + [1])
    assert accuracy.worst_part(squared, None)[0] < 0.02          # averaged, the parameter vanishes
    assert accuracy.worst_part(squared, layout)[0] == 1.0


def test_a_group_accurate_on_the_trajectory_and_off_on_the_parameter_misses_the_target():
    rng = np.random.default_rng(0)
    truth = np.r_[np.zeros(100), 1.0]
    runs = truth + np.r_[np.full(100, 0.01), 0.5] * rng.normal(size=(16, 101))
    summary = accuracy.summarize(Group(1000, runs, np.full(16, 0.01)))
    reference = accuracy.exact_reference(accuracy.summarize(Group(1, truth[None, :].repeat(2, 0), np.ones(2))))
    layout = np.array([0] * 100 + [1])
    whole = accuracy.error(summary, reference)[0]
    by_part = accuracy.error(summary, reference, layout)[0]
    assert whole < 0.01 < by_part
    assert abs(by_part - 0.25) < 0.25 * 4 * (2 / 15) ** 0.5      # one run's variance, within its sampling error
