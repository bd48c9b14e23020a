"""Trajectories returned reversed (``List.rev(xs)``, ``List.tl(List.rev(xs))``) are stored unreversed
and read reversed (store-result-views, sirenrt.h's ``V k a``): every answer read from them is the
answer of the reversed list built, bit for bit, and a tail of an empty reversal fails as it did."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import sirenc
from markers import needs_runtime
from sirenc.diagnostics import SirenRuntimeError

pytestmark = needs_runtime

STEP = """
val step = fun (row, (xs, bs)) ->
  let x <- gaussian(List.hd(xs), 1.) in
  let () = observe(gaussian(x, 0.5), List.hd(row)) in
  let () = resample() in
  (cons(x, xs), cons(0. < x, bs))
in
let (xs, bs) = fold(step, File.read("d.csv"), ([0.], [])) in
"""
# The reversals have one use each and become views ...
VIEWED = STEP + """
(List.tl(List.rev(xs)), (List.rev(bs), (List.tl(List.tl(List.rev(xs))), List.hd(List.rev(xs)))))
"""
# ... and here they have two, and are built.
BUILT = STEP + """
let r = List.rev(xs) in
let b = List.rev(bs) in
(List.tl(r), (b, (List.tl(List.tl(r)), List.hd(r) + 0. * List.len(b))))
"""
ROWS = np.random.default_rng(3).normal(size=(40, 1)).cumsum(axis=0)


def hexes(value):
    if isinstance(value, tuple):
        return [hexes(v) for v in value]
    return [float(v).hex() for v in np.atleast_1d(value)]


@pytest.fixture(scope="module")
def models():
    return {name: sirenc.compile(src, method="pf") for name, src in (("viewed", VIEWED), ("built", BUILT))}


def test_the_views_are_stored_and_the_built_lists_are_not(models, tmp_path):
    texts = {}
    for name, src in (("viewed", VIEWED), ("built", BUILT)):
        (tmp_path / f"{name}.si").write_text(src)
        out = subprocess.run([sys.executable, "-m", "sirenc", str(tmp_path / f"{name}.si"), "--emit=llvm"],
                             capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        texts[name] = out.stdout
    assert 'c"PV1fPV0bPV2ff\\00"' in texts["viewed"] and "list_rev" in texts["viewed"]  # (List.hd's)
    assert '"PV' not in texts["built"]
    assert models["viewed"].info["result_type"] == models["built"].info["result_type"] == "PLfPLbPLff"


@pytest.mark.parametrize("threads", [1, 2])
def test_estimate_particles_and_summary_are_the_built_lists(models, threads):
    got = {}
    for name, model in models.items():
        f = model.filter(particles=500, seed=7, threads=threads).run(ROWS)
        values, weights = f.particles(flat=True)
        got[name] = (hexes(f.estimate()), [v.hex() for v in np.concatenate(values)],
                     [w.hex() for w in weights], repr(f.summary()))
    assert got["viewed"] == got["built"]
    xs, (bs, (xs2, _)) = models["viewed"].filter(particles=500, seed=7).run(ROWS).estimate()
    assert len(xs) == 40 and len(bs) == 40 and len(xs2) == 39   # the seed 0. dropped, then one more
    assert np.array_equal(xs[1:], xs2)


def test_a_streamed_estimate_reads_the_views_of_its_clone(models):
    got = {}
    for name, model in models.items():
        f = model.filter(particles=300, seed=2)
        seen = []
        for row in ROWS[:12]:
            f.step(row)
            seen.append(hexes(f.estimate()))
        got[name] = seen
    assert got["viewed"] == got["built"]


def test_a_checkpoint_of_finished_views_restores_them(models):
    f = models["viewed"].filter(particles=200, seed=4).run(ROWS)
    g = sirenc.Filter.load(models["viewed"], f.to_bytes())
    assert hexes(g.estimate()) == hexes(f.estimate())


EMPTY = """
val keep = fun (row, xs) -> if 1000. < List.hd(row) then cons(List.hd(row), xs) else xs in
let xs = fold(keep, File.read("d.csv"), []) in
{result}
"""


def test_the_tail_of_an_empty_reversal_fails_where_it_did():
    messages = []
    for result in ("List.tl(List.rev(xs))", "let r = List.rev(xs) in List.tl(r) "):
        model = sirenc.compile(EMPTY.format(result=result), method="pf")
        with pytest.raises(SirenRuntimeError) as err:
            model.filter(particles=10, seed=0).run(ROWS)
        messages.append(str(err.value))
    # The view's List.tl fails at its own site (line 4, column 1) with the built list's message.
    assert messages[0].startswith("<string>:4:1: error: ")
    assert messages[0].splitlines()[0].split("error: ")[1] == messages[1].splitlines()[0].split("error: ")[1]
