"""List memory of compiled filters: young cells no frame reaches are dropped at every
barrier, offspring share their parent's cells instead of copying them, List.len is exact
for every kind of list, and none of it changes an answer."""

from __future__ import annotations

import math

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

TRAJECTORY = """
val step = fun (row, xs) ->
  let y = List.hd(row) in
  let x <- gaussian(y, 1.) in
  let () = observe(gaussian(x, 0.5), y) in
  let () = resample() in
  cons(x, xs)
in
List.len(fold(step, File.read("d.csv"), []))
"""


def words_per_particle(f, particles, collect=True):
    """The list words the filter's particles hold, a particle: after a collection (the cells no
    particle reaches are freed by the next one, not at once), or as the heap is (collect=False)."""
    from sirenc.runtime.ffi import runtime_lib

    if collect:
        assert runtime_lib().sirenrt_filter_collect(f._f) == 0
    return runtime_lib().sirenrt_filter_memory_words(f._f) / particles


def run(source, rows, particles=200, threads=1):
    f = sirenc.compile(source, method="pf").filter(particles=particles, seed=4, threads=threads)
    f.run(rows)
    return f.estimate(), words_per_particle(f, particles)


def test_garbage_is_dropped_and_answers_do_not_change():
    rows = np.random.default_rng(0).normal(size=(400, 1)).cumsum(axis=0)
    (xs_g, n_g), words_g = run(GARBAGE, rows)
    (xs_c, n_c), words_c = run(CLEAN, rows)
    assert n_g == n_c == 400 * 50
    assert len(xs_g) == len(xs_c) == 400
    for (xg, lg), (xc, lc) in zip(xs_g, xs_c):
        assert xg == xc and np.array_equal(lg, lc)
    # The garbage of every step is built before its resample() and reached by no frame there.
    assert words_g == words_c
    # Unshared, each particle would hold 400 outer cells [header, aux, tail, x, handle] and 400
    # two-cell lists [x, y] of four-word cells: 5200 words.  Offspring share their ancestors'.
    assert words_c < 5200 / 4


# Garbage of a program that keeps no list across resample(): its particles run in the compiled span
# loop, which must hand back (to be held, which empties the arena) every particle that built cells.
TRANSIENT = """
val double = fun v -> 2. * v in
val step = fun (row, x) ->
  let junk = List.rev(List.map(double, List.range(0., 50.))) in
  let x1 <- gaussian(x + List.hd(junk) * 0., 1.) in
  let () = observe(gaussian(x1, 1.), List.hd(row)) in
  let () = resample() in
  x1
in
fold(step, File.read("d.csv"), 0.)
"""


def test_garbage_of_a_step_is_dropped_particle_by_particle():
    # About 600 words (4.8 KB) of cells a particle-step, against a share of about 60 KB a particle:
    # a lane of the loop (a context that runs N / 16 particles a pass) that kept the cells of the
    # particles it ran until the pass ended would outgrow it within the first pass.
    rows = np.random.default_rng(5).normal(size=(20, 1)).cumsum(axis=0)
    f = sirenc.compile(TRANSIENT, method="pf").filter(particles=3200, seed=1, memory_limit="200M")
    f.run(rows)
    assert np.isfinite(f.estimate())
    assert words_per_particle(f, 3200) == 0   # every particle's garbage was dropped at its stop


def test_memory_follows_the_ancestry_not_n_times_t():
    n, t = 1000, 1000
    rows = np.random.default_rng(1).normal(size=(t, 1)).cumsum(axis=0)
    returned = TRAJECTORY.replace("List.len(fold(", "(fold(")   # the trajectories live to the end
    f = sirenc.compile(returned, method="pf").filter(particles=n, seed=2)
    f.run(rows)
    assert len(f.estimate()) == t
    held = words_per_particle(f, n, collect=False) * n
    cells = words_per_particle(f, n) * n / 4
    # The particles' trajectories form their ancestral tree: expected T + c N log N nodes
    # (Jacob, Murray & Rubenthaler 2015; c is about 4 here, 10 is generous), against N T = 10^6
    # cells if each particle kept its own copy.
    assert cells <= t + 10 * n * math.log(n)
    # Uncollected, the heap is within what the collector lets it grow to before it runs (heap.c):
    # what the last collection kept, 8 times that made since, and the 2^17 words it waits for first.
    assert held <= 9 * 4 * cells + 2**17


def test_threads_share_alike():
    rows = np.random.default_rng(3).normal(size=(60, 1)).cumsum(axis=0)
    base = None
    for threads in (1, 2, 4, 7):
        (xs, n), words = run(CLEAN, rows, particles=20001, threads=threads)
        got = ([x for x, _ in xs], [list(l) for _, l in xs], n, words)
        if base is None:
            base = got
        assert got == base, f"{threads} threads"


LENGTHS = """
val step = fun (row, (xs, acc)) ->
  let x <- gaussian(List.hd(row), 1.) in
  let () = resample() in
  let xs = cons(x, xs) in
  let mixed = cons(x, cons(x, row)) in
  (xs, acc + List.len(xs) + 100. * List.len(mixed) + 10000. * List.len(List.tl(xs)))
in
let (xs, acc) = fold(step, File.read("d.csv"), ([], 0.)) in
(List.len(xs), acc)
"""


def test_list_length_of_every_kind_of_list():
    # xs: young cells on heap tails; mixed: young cells on a row of the data file.
    t = 50
    rows = np.ones((t, 3))
    f = sirenc.compile(LENGTHS, method="pf").filter(particles=10, seed=0)
    f.run(rows)
    n, acc = f.estimate()
    assert n == t
    assert acc == sum(k + 100 * 5 + 10000 * (k - 1) for k in range(1, t + 1))
