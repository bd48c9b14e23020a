"""`inline-functions`: replace every `func.call` by the callee's body.

Siren has no recursion (the frontend rejects call cycles), so inlining always
terminates and leaves one function, `@main`, whose fold and map bodies hold the
inlined step functions. Later stages then see the whole program at once: the
plan analysis needs no interprocedural machinery and the particle procedure
is a single resumable function.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from sirenc.passes.rewriting import drop, move_ops_before, ops_of, replace, replace_uses


def _inline_call(call: func.CallOp, callee: func.FuncOp, last: bool) -> list[Operation]:
    """Replace `call` by a copy of `callee`'s body, or by the body itself when this is the
    `last` call of `callee` left anywhere (nothing reads the body after it); the ops it
    inserted (in order)."""
    # (the region read from the op's list of them, not through xDSL's accessor)
    body = callee.regions[0]
    block: Block = body.block if last else body.clone().block
    for arg, operand in zip(block.args, call._operands, strict=True):
        replace_uses(arg, operand)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    results = list(ret._operands)
    drop(ret)
    inserted = move_ops_before(block, call)
    replace(call, results)
    return inserted


def _calls(op: Operation, out: list[func.CallOp]) -> list[func.CallOp]:
    """Appends the calls among `op` and the ops nested in it to `out`, in program order."""
    out += [inner for inner in ops_of(op) if type(inner) is func.CallOp]
    return out


def inline_all(module: ModuleOp) -> None:
    funcs = {f.properties["sym_name"].data: f for f in module.ops if type(f) is func.FuncOp}
    # Inlining a callee may expose calls of its own, but only among the ops it inserted:
    # those are taken, not all of main walked again (a chain of n functions each calling the one
    # before would otherwise walk main n times as it grows: quadratic). Each call expands in
    # place, so the order in which calls are taken does not change the result.
    # A callee's body is cloned for each call but the last one left in the module, which takes
    # the body itself: in a chain of functions each called once, nothing is cloned.
    # `remaining` counts the calls of each function in main and in every function's body;
    # `inner` lists the calls in each body, which stays as it is until its last call takes it
    # (those calls are then the ones inserted, not walked again).
    inner = {name: _calls(f, []) for name, f in funcs.items()}
    calls = inner.pop("main")
    remaining = Counter(_callee(op) for f_calls in (calls, *inner.values()) for op in f_calls)
    while calls:
        call = calls.pop()
        name = _callee(call)
        last = remaining[name] == 1
        remaining[name] -= 1
        inserted = _inline_call(call, funcs[name], last)
        if last:
            calls += inner.pop(name)
        else:   # copies: calls the module did not hold before
            start = len(calls)
            for op in inserted:
                _calls(op, calls)
            remaining.update(_callee(inner_call) for inner_call in calls[start:])
    for name, f in funcs.items():
        if name != "main":
            drop(f)


def _callee(call: func.CallOp) -> str:
    return call.properties["callee"].root_reference.data


@dataclass(frozen=True)
class InlineFunctions(ModulePass):
    name = "inline-functions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_all(op)
