"""The copy pass of a resampling barrier (runtime_c/src/population/barrier.c): a model without lists or symbolic
states takes its own path (copy_plain), which lists each chunk's sources before copying.  It must
put every copy where the general path does.  A model that carries a list of its past states takes
the general path and draws the same numbers, so the two give the same particles bit for bit.  The
observations are sharp, so a few parents take hundreds of offspring each, across the chunks of the
copy pass and the threads' ranges of it."""

from __future__ import annotations

import numpy as np
import pytest

import sirenc

PLAIN = """
val first = fun row -> List.hd(row) in
val step = fun (y, x) ->
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.001), y) in
  let () = resample() in
  x1
in
fold(step, List.map(first, File.read("data.csv")), 0.)
"""
LISTS = PLAIN.replace('fold(step, List.map(first, File.read("data.csv")), 0.)',
                      "val keep = fun (y, xs) -> step(y, List.hd(xs)) :: xs in\n"
                      'List.hd(fold(keep, List.map(first, File.read("data.csv")), [0.]))')


@pytest.mark.parametrize("threads", [1, 3])
def test_the_plain_copy_pass_copies_as_the_general_one(tmp_path, threads):
    ys = np.cumsum(np.random.default_rng(4).normal(size=30))
    (tmp_path / "data.csv").write_text("y\n" + "".join(f"{float(y)!r}\n" for y in ys))
    answers = []
    for name, source in (("plain", PLAIN), ("lists", LISTS)):
        (tmp_path / f"{name}.si").write_text(source)
        f = sirenc.compile(str(tmp_path / f"{name}.si")).filter(particles=5000, seed=3, threads=threads)
        f.run()
        values, weights = f.particles()
        answers.append((list(values), list(weights), f.log_evidence))
    values = np.array(answers[0][0])
    _, counts = np.unique(values, return_counts=True)
    assert counts.max() - 1 > 256, "some parent's copies are more than a chunk of the copy pass holds"
    assert answers[0] == answers[1]
