"""The lowerings free what they replace at once (sirenc/passes/rewriting.py): the driver pauses the
cyclic collector through them, so an op kept alive by a cycle would stay until a full collection."""

from __future__ import annotations

import gc
import weakref

from sirenc import driver
from sirenc.ir import siren
from sirenc.passes.lower_siren_to_smc import lower_module
from sirenc.passes.rewriting import ops_of


def test_an_op_the_lowering_replaces_is_freed_without_the_collector():
    c = driver.open_source("let x = List.hd([1.]) in x + 2.", snapshots=False)
    module = driver.run_until(c, "specialized")
    (add,) = [op for op in ops_of(module) if isinstance(op, siren.AddOp)]
    gone = weakref.ref(add)
    del add
    enabled = gc.isenabled()
    gc.disable()
    try:
        lower_module(module, c.base_dir)
        assert gone() is None
    finally:
        if enabled:
            gc.enable()


def test_ops_of_lists_the_ops_as_walk_does():
    module = driver.run_until(driver.open_source("val f = fun (a, b) -> a * b in fold(f, [1., 2.], 3.)"), "plan")
    for region_first in (False, True):
        assert ops_of(module, region_first) == list(module.walk(region_first=region_first))
