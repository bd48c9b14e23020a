"""The lowerings free what they replace at once (sirenc/passes/rewriting.py): the driver pauses the
cyclic collector through them, so an op kept alive by a cycle would stay until a full collection."""

from __future__ import annotations

import gc
import weakref

from sirenc import driver
from sirenc.ir import siren
from sirenc.passes.to_smc.lower_siren_to_smc import lower_module
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


def _block_with(n: int):
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr, i64
    from xdsl.ir import Block

    block = Block()
    for i in range(n):
        block.add_op(arith.ConstantOp(IntegerAttr(i, i64)))
    return block


def test_move_ops_before_splices_the_block_in_order():
    from sirenc.passes.rewriting import move_ops_before

    source, target = _block_with(3), _block_with(2)
    moved, (first, second) = list(source.ops), list(target.ops)
    assert move_ops_before(source, second) == moved
    assert list(target.ops) == [first, *moved, second] and source.first_op is source.last_op is None
    assert all(op.parent is target for op in target.ops)
    assert [op.next_op for op in target.ops] == [*moved, second, None]
    assert [op.prev_op for op in target.ops] == [None, first, *moved]
    assert move_ops_before(source, first) == [] and target.first_op is first


def test_drop_releases_an_op_with_regions_as_erase_does():
    from sirenc.passes.rewriting import drop

    module = driver.run_until(driver.open_source("val f = fun (a, b) -> a * b in fold(f, [1., 2.], 3.)"), "plan")
    (fold,) = [op for op in ops_of(module) if isinstance(op, siren.FoldOp)]
    (user,) = [use.operation for use in fold.result.uses]
    inner = ops_of(fold)[1:]
    outside = {v for op in inner for v in op.operands if v.owner not in inner and v.owner not in fold.body.blocks}
    user.operands[0] = fold.init   # nothing uses the fold any more
    block = fold.parent
    drop(fold)
    assert fold.parent is None and fold not in list(block.ops) and not fold.results
    assert all(use.operation not in (fold, *inner) for v in (*fold.operands, *outside) for use in v.uses)
    assert fold.body.parent is None and fold.body.block.parent is None


def test_siren_accessors_read_the_op_lists():
    module = driver.run_until(driver.open_source("if 1. < 2. then 3. + 4. else 5."), "siren")
    for op in ops_of(module):
        if isinstance(op, siren.AddOp | siren.LtOp):
            assert (op.lhs, op.rhs, op.result) == (op.operands[0], op.operands[1], op.results[0])
        if isinstance(op, siren.IfOp):
            assert (op.cond, op.then_region, op.else_region) == (op.operands[0], *op.regions)
