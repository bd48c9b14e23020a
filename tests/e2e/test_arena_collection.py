"""The arena collector: garbage lists made every step do not accumulate, and
collecting never changes an answer."""

from __future__ import annotations

import numpy as np

import sirenc
from markers import needs_runtime

pytestmark = needs_runtime

TEMPLATE = """
val double = fun v -> 2. * v in
val step = fun (row, (xs, n)) ->
  let y = List.hd(row) in
  {junk}
  let x <- gaussian(y + {zero}, 1.) in
  let () = observe(gaussian(x, 1.), y) in
  let () = resample() in
  (cons((x, [x, y]), xs), n + 50.)
in
fold(step, File.read("d.csv"), ([], 0.))
"""
# About 200 cells of garbage a step; List.hd(junk) * 0. is exactly 0., so both variants draw alike.
GARBAGE = TEMPLATE.format(junk="let junk = List.rev(List.map(double, List.range(0., 50.))) in",
                          zero="List.hd(junk) * 0.")
CLEAN = TEMPLATE.format(junk="", zero="0.")


def run(source, rows, particles=200):
    from sirenc.runtime.ffi import runtime_lib

    f = sirenc.compile(source, method="pf").filter(particles=particles, seed=4)
    f.run(rows)
    return f.estimate(), runtime_lib().sirenrt_filter_memory_words(f._f) / particles


def test_garbage_is_collected_and_answers_do_not_change():
    rows = np.random.default_rng(0).normal(size=(400, 1)).cumsum(axis=0)
    (xs_g, n_g), words_g = run(GARBAGE, rows)
    (xs_c, n_c), words_c = run(CLEAN, rows)
    assert n_g == n_c == 400 * 50
    assert len(xs_g) == len(xs_c) == 400
    for (xg, lg), (xc, lc) in zip(xs_g, xs_c):
        assert xg == xc and np.array_equal(lg, lc)
    # Live data: 400 outer cells [header, tail, x, handle] and 400 two-cell lists [x, y] of
    # three-word cells: 4000 words per particle, all of the clean run's arena.
    assert words_c == 4000
    # Each step leaves about 200 dead cells (600 words): 240000 words by the end if never
    # collected. A collection runs once an arena has doubled since the last one.
    assert words_g < 3 * 4000 + 2048
