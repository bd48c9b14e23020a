"""A differential property of the particle filter (issue 11, item 7): inserting ``resample()``,
an unused draw or a constant observation into a pf program does not change the distribution of
its answer.

* On programs whose random variables are all ``delta`` draws (fuzzgen.delta_programs) every
  particle holds the same values with the same weight, so the answer is exact: the estimate
  with and without the insertions must be identical, for any seed, particle count, resampler
  and ESS threshold.
* The number of threads does not change the answer of any generated well-typed program.
* On a conjugate Gaussian model the answer is random; with and without ``resample()`` at
  various places, the mean over a fixed set of seeds must agree with the exact posterior mean
  within Monte Carlo error.
"""

from __future__ import annotations

import json
import statistics

import pytest
from hypothesis import given, settings, strategies as st

import fuzzgen
import fuzzrun
from fuzzcase import FUZZ, check
from markers import needs_runtime

pytestmark = needs_runtime

DATA = fuzzgen.DATA_CSV.encode()


def answer(worker, folder, program: str, argv: list):
    fuzzrun.write_case(folder, program.encode(), DATA)
    outcome = worker.run(["run", "model.si", "--json", *argv], cwd=folder)
    check(outcome, program)
    assert outcome.code == 0, f"{outcome.stderr}\n{program}"
    return json.loads(outcome.stdout)["result"]


@settings(FUZZ, max_examples=50)
@given(programs=fuzzgen.delta_programs(),
       particles=st.sampled_from([1, 3, 50]), seed=st.integers(0, 5),
       resampler=st.sampled_from(["systematic", "multinomial", "stratified", "residual"]),
       threshold=st.sampled_from(["0", "0.5", "1"]))
def test_insertions_keep_the_exact_answer(worker, case_dir, programs, particles, seed, resampler, threshold):
    program, variant = programs
    argv = ["-p", str(particles), "--seed", str(seed), "--resampler", resampler, "--ess-threshold", threshold]
    assert answer(worker, case_dir, variant, argv) == answer(worker, case_dir, program, argv), \
        f"--- program ---\n{program}\n--- with insertions ---\n{variant}"


# x ~ N(0, 1), y_i ~ N(x, 1) for y = 0.5, 1.5, -0.2, 2.0: the posterior of x is N(3.8 / 5, 1 / 5).
OBSERVATIONS = ["0.5", "1.5", "-0.2", "2.0"]
EXACT_MEAN, EXACT_SD = 3.8 / 5, (1 / 5) ** 0.5


def conjugate(resample_after: set, unused_draws: bool) -> str:
    lines = ["let x <- gaussian(0., 1.) in"]
    for i, y in enumerate(OBSERVATIONS):
        if unused_draws:
            lines.append(f"let _u{i} <- gamma(2., 1.) in")
        lines.append(f"let () = observe(gaussian(x, 1.), {y}) in")
        if i in resample_after:
            lines.append("let () = resample() in")
    return "\n".join(lines + ["x"]) + "\n"


@pytest.mark.parametrize("resample_after, unused", [
    (set(), False), ({0}, False), ({1, 3}, False), ({0, 1, 2, 3}, False), ({2}, True), (set(), True)])
def test_resampling_keeps_the_posterior_mean(worker, case_dir, resample_after, unused):
    particles, seeds = 2000, range(4)
    program = conjugate(resample_after, unused)
    estimates = [answer(worker, case_dir, program, ["-p", str(particles), "--seed", str(s)]) for s in seeds]
    # Importance sampling from the prior: an ESS of about a third of the particles; 5 standard
    # errors of the mean over the seeds (fixed seeds: the same numbers on every run).
    tolerance = 5 * EXACT_SD / (particles / 3 * len(seeds)) ** 0.5
    assert abs(statistics.fmean(estimates) - EXACT_MEAN) < tolerance, (estimates, program)


@settings(FUZZ, max_examples=30)
@given(program=fuzzgen.programs(ill=False, max_depth=4), particles=st.sampled_from([1, 5, 40]),
       seed=st.integers(0, 3), threshold=st.sampled_from(["0", "0.5"]))
def test_threads_do_not_change_the_answer(worker, case_dir, program, particles, seed, threshold):
    """The answer does not depend on the number of threads (api.md): the same result and log
    evidence, bit for bit, with 1, 2 and 3 threads."""
    outcomes = []
    for threads in ("1", "2", "3"):
        fuzzrun.write_case(case_dir, program.encode(), DATA)
        outcome = worker.run(["run", "model.si", "--json", "-p", str(particles), "--seed", str(seed),
                              "--ess-threshold", threshold, "--threads", threads], cwd=case_dir)
        check(outcome, program)
        outcomes.append(outcome)
    codes = {o.code for o in outcomes}
    assert len(codes) == 1, (codes, [o.stderr for o in outcomes], program)
    if codes == {0}:
        answers = {json.dumps([json.loads(o.stdout)[k] for k in ("result", "log_evidence")]) for o in outcomes}
        assert len(answers) == 1, f"{answers}\n{program}"
    # (When particles fail, which one reports first may depend on the threads: only the exit
    # status is compared.)
