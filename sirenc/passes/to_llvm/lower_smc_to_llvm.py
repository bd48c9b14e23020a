"""`lower-smc-to-llvm`: one particle's program -> ``llvm.func @siren_resume`` over the C runtime.

The ``smc.particle`` becomes the function the C runtime resumes a particle with,
``i32 @siren_resume(ptr ctx, ptr frame, ptr log_weight, ptr rows)`` (``sirenrt_resume_fn``
in sirenrt.h), and what the particle level leaves abstract gets its C runtime
form here, and only here:

* draws and observations call ``sirenrt_sample_<family>(ctx, params.., site)`` and
  ``sirenrt_observe_<family>(ctx, params.., x, site)``, except the gaussian's, which
  are inline so that LLVM folds ``sqrt``/``log`` of a constant variance:
  ``var > 0 ? mu + sqrt(var) * sirenrt_std_normal(ctx) : sirenrt_sample_gaussian(..)``,
  and the log density added to ``*log_weight`` in place while the sum is > -inf;
* lists are int64 handles (-1 is the empty list), list ops ``sirenrt_list_*`` calls,
  and list elements 64-bit words (floats bitcast, bools 0/1, lists their handle); an
  ``smc.const_list`` is its words in one private constant array of every literal's words
  (``@siren_resume.lists``: a global per literal would make every ``addressof`` look its symbol up
  among thousands) and one ``sirenrt_list_from_words(ctx, words, n, words_per_element, site)``
  call;
* the frame is bytes: the pc (an i32) in word 0, then frame slot s at byte 8 + 8 * s;
  a finished particle's result words from byte 8 share those words (no slot is live then);
* ``smc.resample`` stores its point in the pc and returns AT_RESAMPLE (1);
  ``smc.next_row`` reads a row the table holds in place, else asks ``sirenrt_stream_row``
  and, answered SIRENRT_NEED, stores its point and returns NEED_ROW (2); ``smc.finish`` stores the result's words and
  returns FINISHED (0);
* a run-time error names a site, an index into the model's table of locations;
* symbolic words (``!smc.sym``, ``-m ssi``) are int64 words; ``smc.sym_const`` is a
  bitcast of the double (a bool first 0.0 / 1.0), ``smc.sym_binop {kind}`` calls
  ``sirenrt_sym_<kind>(ctx, a, b)``, ``smc.sym_neg`` ``sirenrt_sym_neg(ctx, a)`` (add,
  sub, mul, eq, lt and neg of words that are non-NaN doubles, i.e. constants, are folded
  inline and call nothing),
  ``smc.sym_ite`` ``sirenrt_sym_ite(ctx, c, t, f)``, ``smc.sym_value``
  ``sirenrt_sym_value(ctx, w, site)``, ``smc.assume`` ``sirenrt_sym_assume(ctx, family,
  p0, p1, p2, var, annotation, site)`` (unused parameters 0; a sampled value's bits are
  bitcast back to a double) and ``smc.sym_observe`` ``sirenrt_sym_observe(ctx, family,
  p0, p1, p2, x, site)``.

It works in two steps, after a step 0 (row_elements.py) that turns an
``smc.next_row`` whose row only goes to ``List.hd``/``List.tl`` reads into an
``smc.next_row_reading``, which reads those elements in place along with the row.
(1) One rewrite pattern per op turns every smc, arith
and math op into `llvm` ops in place (particle_state.py, lists.py, symbolic.py,
scalar_ops.py); a pattern that needs a branch builds an
``scf.if`` of `llvm` ops, and a runtime function is declared in the module the
first time a pattern calls it (``Emitter.call``, ``Lowering.declare``, emitter.py;
the functions and their signatures are resume_abi.py's).
(2) A structural step (control_flow.py) flattens
``scf.if``/``scf.while`` and the suspension points into blocks with arguments,
and puts the dispatch on the pc saved in the frame in the entry block: 0 starts
the program, k resumes after suspension point k; what a suspension point asks of
the runtime is resume_graph.py's (``ResumeGraph``). An op that neither step knows is a
``LoweringError`` (sirenc/passes/errors.py) naming it.

Re-entry at an ``smc.next_row`` repeats the row request, so its resume block
starts at the op that defines its index, which `spill-across-suspends`
guarantees is the op right before it: an ``smc.frame_load`` or an
``arith.constant`` (``ResumeGraph.retry_start``). No other value crosses a suspension:
that pass has routed each through the frame.

What the runtime reads besides the code (frame size and result offset in bytes,
data files, error sites, roots by byte offset) is the ``#sirenrt.layout``
attribute ``sirenrt.layout`` of the function (sirenc/ir/sirenrt.py), next to the
particle's ``#smc.model`` as ``smc.model``.

    llvm.func @sirenrt_std_normal(!llvm.ptr) -> f64
    llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32
        attributes {smc.model = #smc.model<"f", ...>,
                    sirenrt.layout = #sirenrt.layout<24 : i64, 8 : i64, [], [loc("m.si":2:9)], []>} {
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i32
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass

from sirenc.ir import smc
from sirenc.model_info import RESUME_SYMBOL
from sirenc.passes.errors import LoweringError, where
from sirenc.passes.rewriting import ops_of
from sirenc.passes.to_llvm import lists, particle_state, scalar_ops, symbolic
from sirenc.passes.to_llvm.control_flow import STRUCTURAL
from sirenc.passes.to_llvm.emitter import Lowering
from sirenc.passes.to_llvm.resume_abi import PTR
from sirenc.passes.to_llvm.resume_graph import ResumeGraph
from sirenc.passes.to_llvm.row_elements import NextRowReadingOp, read_rows_in_place

_SMC_PATTERNS = [*particle_state.PATTERNS, *lists.PATTERNS, *symbolic.PATTERNS]

# What step 1 leaves to step 2.
_STEP2 = (*STRUCTURAL, NextRowReadingOp)


def _check_step1(fn: llvm.FuncOp) -> None:
    for op in ops_of(fn):
        if not op.name.startswith("llvm.") and op is not fn and not isinstance(op, _STEP2):
            raise LoweringError(f"lower-smc-to-llvm: no lowering for {op.name}{where(op)}")


# -- the pass -----------------------------------------------------------------------------------


def _resume_function(particle: smc.ParticleOp) -> llvm.FuncOp:
    """@siren_resume: an entry block for the dispatch, then the particle's body."""
    entry = Block(arg_types=[PTR, PTR, PTR, PTR])
    for arg, name in zip(entry.args, ("ctx", "frame", "log_weight", "rows")):
        arg.name_hint = name
    body = particle.body.detach_block(0)
    ftype = llvm.LLVMFunctionType([PTR, PTR, PTR, PTR], i32)
    return llvm.FuncOp(RESUME_SYMBOL, ftype, linkage=llvm.LinkageAttr("external"), body=Region([entry, body]))


def lower_particle(module: ModuleOp, particle: smc.ParticleOp) -> llvm.FuncOp:
    fn = _resume_function(particle)
    module.body.block.insert_op_before(fn, particle)
    low = Lowering(module, fn, particle.model, vars=particle.attributes.get("smc.vars"))
    particle.detach()
    particle.erase()

    # (0) the elements of a streamed row that the step reads, read where the row is.
    read_rows_in_place(fn)
    # (1) every op in place, in program order (sites and files are numbered as met).
    patterns = {**{p.op_type: p(low) for p in _SMC_PATTERNS}, **{p.source: p for p in scalar_ops.PATTERNS}}
    for op in ops_of(fn):
        pattern = patterns.get(type(op))
        if pattern is not None:
            pattern.rewrite(op)
    _check_step1(fn)
    low.add_pool()

    # (2) the control-flow graph, then the dispatch on the saved pc.
    ResumeGraph(low).build()

    fn.attributes["smc.model"] = low.model
    fn.attributes["sirenrt.layout"] = low.layout()
    if low.vars is not None:
        fn.attributes["sirenrt.vars"] = low.vars
        fn.attributes["sirenrt.var_sites"] = ArrayAttr([IntegerAttr(low.var_sites.get(v, -1), i32)
                                                       for v in range(len(low.vars.data))])
    return fn


def lower_module(module: ModuleOp) -> None:
    particles = [op for op in module.ops if isinstance(op, smc.ParticleOp)]
    if len(particles) > 1:
        raise LoweringError(f"lower-smc-to-llvm: one smc.particle per module (@{RESUME_SYMBOL}), got {len(particles)}")
    for particle in particles:
        lower_particle(module, particle)


@dataclass(frozen=True)
class LowerSMCToLLVM(ModulePass):
    name = "lower-smc-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op)
