"""`inline-functions`: replace every `func.call` by the callee's body.

Siren has no recursion (the frontend rejects call cycles), so inlining always
terminates and leaves one function, `@main`, whose fold and map bodies hold the
inlined step functions. Later stages then see the whole program at once: the
plan analysis needs no interprocedural machinery and the particle procedure
is a single resumable function.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter


def _inline_call(call: func.CallOp, callee: func.FuncOp) -> list[Operation]:
    """Replace `call` by a copy of `callee`'s body; the ops it inserted (in order)."""
    body = callee.body.clone()
    block: Block = body.block
    for arg, operand in zip(block.args, call.arguments, strict=True):
        arg.replace_all_uses_with(operand)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    results = list(ret.arguments)
    Rewriter.erase_op(ret)
    inserted = list(block.ops)
    for op in inserted:
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(call))
    for result, value in zip(call.res, results, strict=True):
        result.replace_all_uses_with(value)
    Rewriter.erase_op(call)
    return inserted


def inline_all(module: ModuleOp) -> None:
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    main = funcs["main"]
    # Inlining a callee may expose calls of its own, but only among the ops it inserted:
    # those are walked, not all of main again (a chain of n functions each calling the one
    # before would otherwise walk main n times as it grows: quadratic). Each call expands in
    # place, so the order in which calls are taken does not change the result.
    calls = [op for op in main.walk() if isinstance(op, func.CallOp)]
    while calls:
        call = calls.pop()
        for op in _inline_call(call, funcs[call.callee.root_reference.data]):
            calls.extend(inner for inner in op.walk() if isinstance(inner, func.CallOp))
    for name, f in funcs.items():
        if name != "main":
            Rewriter.erase_op(f)


@dataclass(frozen=True)
class InlineFunctions(ModulePass):
    name = "inline-functions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_all(op)
