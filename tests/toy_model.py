"""A hand-written ``llvm``-dialect model, shaped like the lowering's output.

Until the real pipeline exists, the backend, the linker, the Python API and
the C embedding are tested against this program (as Siren)::

    let x = sample(gaussian(0., PRIOR_VAR)) in            (* site 0 *)
    let _ = fold over the rows r of file 0:
              observe(gaussian(x, 1.), r[0]); resample()   (* site 1 *)
    in x                          (result "f")
    or (x, [x; x * x])            (result "PfLf")

compiled the way the lowering compiles it: a resumable ``@siren_resume``
whose frame holds the pc (bytes 0..3), ``x`` (8), the row index (16) and the
result words (24..39). It reads rows with ``sirenrt_stream_row``, so it
answers both ``run`` and ``step``.

With a N(0, 1) prior and observations y_1..y_n of variance 1 the posterior
is N(sum y / (n + 1), 1 / (n + 1)) and the evidence is N(y; 0, I + 11^T).
"""

from __future__ import annotations

import math

import numpy as np

from sirenc.diagnostics import Span, register_source
from sirenc.model_info import ModelInfo

SOURCE_FILE = "toy.si"
SOURCE = """\
let x = sample(gaussian(0., 1.)) in
let _ = fold_rows(fun r -> observe(gaussian(x, 1.), r[0]); resample()) in
x
"""

_TEMPLATE = """
builtin.module {
  llvm.func @sirenrt_sample_gaussian(!llvm.ptr, f64, f64, i32) -> f64
  llvm.func @sirenrt_observe_gaussian(!llvm.ptr, f64, f64, f64, i32)
  llvm.func @sirenrt_stream_row(!llvm.ptr, i64, i32) -> i64
  llvm.func @sirenrt_list_get(!llvm.ptr, i64, i32, i32) -> i64
  llvm.func @sirenrt_list_cons(!llvm.ptr, i64, i32) -> i64
  llvm.func @sirenrt_list_set(!llvm.ptr, i64, i32, i64)

  llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %logw: !llvm.ptr) -> i32 {
    %pc = llvm.load %frame : !llvm.ptr -> i32
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %at_start = llvm.icmp "eq" %pc, %c0 : i32
    llvm.cond_br %at_start, ^start, ^loop
  ^start:
    %mu = llvm.mlir.constant(0.0 : f64) : f64
    %prior_var = llvm.mlir.constant(PRIOR_VAR : f64) : f64
    %site0 = llvm.mlir.constant(0 : i32) : i32
    %x = llvm.call @sirenrt_sample_gaussian(%ctx, %mu, %prior_var, %site0) : (!llvm.ptr, f64, f64, i32) -> f64
    %x_slot = llvm.getelementptr %frame[8] : (!llvm.ptr) -> !llvm.ptr, i8
    llvm.store %x, %x_slot : f64, !llvm.ptr
    %i0 = llvm.mlir.constant(0 : i64) : i64
    %i_slot0 = llvm.getelementptr %frame[16] : (!llvm.ptr) -> !llvm.ptr, i8
    llvm.store %i0, %i_slot0 : i64, !llvm.ptr
    llvm.br ^loop
  ^loop:
    %i_slot = llvm.getelementptr %frame[16] : (!llvm.ptr) -> !llvm.ptr, i8
    %i = llvm.load %i_slot : !llvm.ptr -> i64
    %row_site = llvm.mlir.constant(1 : i32) : i32
    %row = llvm.call @sirenrt_stream_row(%ctx, %i, %row_site) : (!llvm.ptr, i64, i32) -> i64
    %end = llvm.mlir.constant(-2 : i64) : i64
    %need = llvm.mlir.constant(-3 : i64) : i64
    %pc_loop = llvm.mlir.constant(1 : i32) : i32
    llvm.store %pc_loop, %frame : i32, !llvm.ptr
    %is_end = llvm.icmp "eq" %row, %end : i64
    llvm.cond_br %is_end, ^finish, ^have_or_wait
  ^have_or_wait:
    %is_need = llvm.icmp "eq" %row, %need : i64
    llvm.cond_br %is_need, ^wait, ^observe
  ^wait:
    %need_row = llvm.mlir.constant(2 : i32) : i32
    llvm.return %need_row : i32
  ^observe:
    %site1 = llvm.mlir.constant(1 : i32) : i32
    %w0 = llvm.mlir.constant(0 : i32) : i32
    %yw = llvm.call @sirenrt_list_get(%ctx, %row, %w0, %site1) : (!llvm.ptr, i64, i32, i32) -> i64
    %y = llvm.bitcast %yw : i64 to f64
    %xs = llvm.getelementptr %frame[8] : (!llvm.ptr) -> !llvm.ptr, i8
    %xl = llvm.load %xs : !llvm.ptr -> f64
    %one = llvm.mlir.constant(1.0 : f64) : f64
    llvm.call @sirenrt_observe_gaussian(%ctx, %xl, %one, %y, %site1) : (!llvm.ptr, f64, f64, f64, i32) -> ()
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %next = llvm.add %i, %c1 : i64
    llvm.store %next, %i_slot : i64, !llvm.ptr
    %at_resample = llvm.mlir.constant(1 : i32) : i32
    llvm.return %at_resample : i32
  ^finish:
    %xf_slot = llvm.getelementptr %frame[8] : (!llvm.ptr) -> !llvm.ptr, i8
    %xf = llvm.load %xf_slot : !llvm.ptr -> f64
    %res = llvm.getelementptr %frame[24] : (!llvm.ptr) -> !llvm.ptr, i8
    llvm.store %xf, %res : f64, !llvm.ptr
RESULT_EXTRA
    %done = llvm.mlir.constant(0 : i32) : i32
    llvm.return %done : i32
  }
}
"""

# (x, [x; x*x]): word 1 of the result is a list handle built with cons/set.
_PAIR_RESULT = """
    %nil = llvm.mlir.constant(-1 : i64) : i64
    %nw = llvm.mlir.constant(1 : i32) : i32
    %k0 = llvm.mlir.constant(0 : i32) : i32
    %x2 = llvm.fmul %xf, %xf : f64
    %x2w = llvm.bitcast %x2 : f64 to i64
    %cell2 = llvm.call @sirenrt_list_cons(%ctx, %nil, %nw) : (!llvm.ptr, i64, i32) -> i64
    llvm.call @sirenrt_list_set(%ctx, %cell2, %k0, %x2w) : (!llvm.ptr, i64, i32, i64) -> ()
    %xw = llvm.bitcast %xf : f64 to i64
    %cell1 = llvm.call @sirenrt_list_cons(%ctx, %cell2, %nw) : (!llvm.ptr, i64, i32) -> i64
    llvm.call @sirenrt_list_set(%ctx, %cell1, %k0, %xw) : (!llvm.ptr, i64, i32, i64) -> ()
    %res1 = llvm.getelementptr %frame[32] : (!llvm.ptr) -> !llvm.ptr, i8
    llvm.store %cell1, %res1 : i64, !llvm.ptr
"""


def toy_module_text(prior_var: float = 1.0, result_type: str = "f") -> str:
    extra = {"f": "", "PfLf": _PAIR_RESULT}[result_type]
    return _TEMPLATE.replace("PRIOR_VAR", repr(float(prior_var))).replace("RESULT_EXTRA", extra)


NO_DATA_FILE = "/nonexistent/sirenc-toy-data.csv"


def toy_model(prior_var: float = 1.0, result_type: str = "f", data_file: str = NO_DATA_FILE):
    """``(xDSL ModuleOp, ModelInfo)`` for the toy program; ``run`` without rows reads ``data_file``."""
    from xdsl.context import Context
    from xdsl.dialects import builtin, llvm
    from xdsl.parser import Parser

    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(llvm.LLVM)
    module = Parser(ctx, toy_module_text(prior_var, result_type)).parse_module()
    module.verify()
    register_source(SOURCE_FILE, SOURCE)
    info = ModelInfo(
        name="toy", method="pf", plan="x: sample", result_type=result_type,
        frame_size=40, result_offset=24, streamable=True,
        files=[data_file],
        sites=[Span(SOURCE_FILE, 1, 9, 1, 33), Span(SOURCE_FILE, 2, 30, 2, 50)],
    )
    return module, info


def exact_posterior(ys) -> tuple[float, float]:
    """Mean and variance of x given observations ``ys`` (prior N(0, 1), noise variance 1)."""
    ys = np.asarray(ys, dtype=float)
    n = len(ys)
    return float(ys.sum() / (n + 1)), 1.0 / (n + 1)


def exact_log_evidence(ys) -> float:
    ys = np.asarray(ys, dtype=float)
    n = len(ys)
    cov = np.eye(n) + np.ones((n, n))
    _, logdet = np.linalg.slogdet(cov)
    return float(-0.5 * (n * math.log(2 * math.pi) + logdet + ys @ np.linalg.solve(cov, ys)))


def one_observation_standard_errors(y: float, particles: int) -> tuple[float, float]:
    """Monte Carlo standard errors of a bootstrap filter's posterior mean and
    log evidence for a single observation ``y``, from the asymptotic variance
    of self-normalised importance sampling (plus one multinomial resampling,
    an upper bound for systematic)."""
    x = np.linspace(-12.0, 12.0, 24001)
    dx = x[1] - x[0]
    prior = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    w = np.exp(-0.5 * (y - x) ** 2) / math.sqrt(2 * math.pi)
    z = float(np.sum(prior * w) * dx)
    mean, var = exact_posterior([y])
    is_var = float(np.sum(prior * w * w * (x - mean) ** 2) * dx) / z**2
    weight_var = float(np.sum(prior * w * w) * dx) / z**2 - 1.0
    return math.sqrt((is_var + var) / particles), math.sqrt(weight_var / particles)
