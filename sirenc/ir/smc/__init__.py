"""The `smc` dialect: one particle's program, typed, with no C runtime in sight.

After `lower-siren-to-smc` a model is one ``smc.particle`` op: the program a
single particle runs, over machine scalars (``f64``, ``i1``, ``i64``) and list
handles (``!smc.list<"f">``, typed by the element's descriptor so a collector
knows which words are handles), with ``arith``/``math`` for arithmetic and
``scf.if``/``scf.while`` for control. The ops below are what is particular to
a particle filter: drawing from and observing a distribution family, the two
suspension points (a resampling barrier, and waiting for the next row of the
observation stream), the frame slots that carry values across a suspension,
lists, data files, and the result. Nothing here names a C function, a byte
offset or a pointer: the LLVM backend (`lower-smc-to-llvm`) and a JAX backend
both consume this level.

Under the symbolic methods (``-m ssi|ds|bp``) a value that may be symbolic is one ``!smc.sym`` scalar (a symbolic
word: a constant or a reference to a node of the particle's symbolic state), built by
``smc.sym_const``/``smc.sym_binop``/``smc.sym_neg``/``smc.sym_ite``, forced by
``smc.sym_value``; ``smc.assume`` creates a random variable and ``smc.sym_observe``
observes a distribution with symbolic parameters.

    "smc.particle"() <{sym_name = "main", model = #smc.model<"f", false, "...", "", 1 : i64, []>}> ({
      %x = "smc.sample"(%m, %v) <{family = "gaussian"}> : (f64, f64) -> f64
      "smc.frame_store"(%x) <{slot = 0 : i64}> : (f64) -> ()
      "smc.observe"(%x, %s, %y) <{family = "gaussian"}> : (f64, f64, f64) -> ()
      "smc.resample"() <{point = 1 : i32}> : () -> ()
      %x1 = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64
      "smc.finish"(%x1) : (f64) -> ()
    }) : () -> ()
"""

from __future__ import annotations

from xdsl.ir import Dialect

# The dialect's namespace is its API (`smc.ConsOp`): the modules below hand their names on here.
from sirenc.ir.smc.draws import ObserveOp, SampleOp, machine_params
from sirenc.ir.smc.lists import (
    ConsOp, ConstListOp, HeadOp, IsNilOp, LengthOp, NilOp, RangeOp, ReadFileOp, ReverseOp, TailOp, nested_words_end,
)
from sirenc.ir.smc.particle import FinishOp, ModelAttr, ParticleOp
from sirenc.ir.smc.suspensions import SUSPENSIONS, FrameLoadOp, FrameStoreOp, NextRowOp, ResampleOp
from sirenc.ir.smc.symbolic import (
    ANNOTATIONS, SYM_BINOPS, SYMBOLIC_OPS, AssumeOp, SymBinOp, SymConstOp, SymIteOp, SymNegOp, SymObserveOp,
    SymValueOp, sym_params,
)
from sirenc.ir.smc.types import ListHandleType, SymType, list_type, scalars_of, sym

SMC = Dialect(
    "smc",
    [ParticleOp, FinishOp, SampleOp, ObserveOp, ResampleOp, NextRowOp, FrameLoadOp, FrameStoreOp,
     NilOp, IsNilOp, ConsOp, ConstListOp, HeadOp, TailOp, LengthOp, ReverseOp, RangeOp, ReadFileOp,
     *SYMBOLIC_OPS],
    [ListHandleType, SymType, ModelAttr],
)
