"""The compilation pipeline: one table of named stages, nothing else knows their order.

    ast -> siren -> plan -> symbolic -> specialized -> smc -> llvm-dialect -> llvm
                                                               llvm-dialect -> obj -> so

``symbolic`` runs the `symbolic-values` pass under a symbolic method (``-m ssi|ds|bp``,
sirenc/methods.py: which values may be symbolic); under ``-m pf`` every value is concrete and
the stage hands on its input. ``specialized`` runs `specialize-conjugacy` (tier 2) under a
symbolic method unless ``tier=1``: a program whose symbolic state has one structure becomes
arithmetic on numbers; any other program is handed on unchanged, to the general runtime (tier 1).

``sirenc --emit=STAGE`` stops after STAGE and prints it. Each stage takes the
product of the stage it follows; the ``Compilation`` carries what later stages
need besides it (source, method, options). A stage applies passes of the one registry
(``sirenc/registry.py``), by name, in the compilation's xDSL context, which holds the
registry's dialects: what ``sirenc-opt -p`` runs. ``Compilation.passes`` lists the passes
applied, each of which prints as its ``-p`` item; a pass hands back what it found (the plan,
what specialisation did) as its ``result``.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

from sirenc import methods
from sirenc.deep_stack import on_deep_stack, run_on_deep_stack
from sirenc.diagnostics import SirenUsageError


@dataclass
class Compilation:
    text: str
    path: str                      # the program file, or "<string>"
    method: str = methods.DEFAULT  # a name of sirenc/methods.py's table
    check: bool = True
    max_rvs: int = 4
    analysis_budget: int | None = None   # plan-analysis work budget; None: its DEFAULT_BUDGET
    # Keep every stage's product (what tests look at). Without, a stage that
    # transforms a module takes its input's place instead of a copy: faster to compile.
    snapshots: bool = True
    tier: int = 2                  # 1: the general symbolic runtime even where tier 2 applies
    float32: bool = False          # the JAX back end computes in single precision
    plan: object | None = None     # the plan-analysis result, once run
    specialization: object | None = None   # what specialize-conjugacy did (symbolic methods, tier 2)
    returned: object | None = None  # which variables the program returns (frontend/result_names.py)
    products: dict[str, object] = field(default_factory=dict)
    passes: list = field(default_factory=list)   # the passes applied so far, in order (`_apply`)
    _context: object | None = field(default=None, init=False, repr=False)

    @property
    def inference(self) -> methods.Method:
        """The method's entry in the table."""
        return methods.get(self.method)

    @property
    def context(self):
        """The xDSL context the passes run in: the registry's dialects, loaded as a pass needs one."""
        if self._context is None:
            from xdsl.context import Context

            from sirenc.registry import register_dialects

            self._context = register_dialects(Context())
        return self._context

    @property
    def base_dir(self) -> str:
        if self.path.startswith("<"):
            return os.getcwd()
        return os.path.dirname(os.path.realpath(self.path))

    @property
    def name(self) -> str:
        if self.path.startswith("<"):
            return "model"
        return os.path.splitext(os.path.basename(self.path))[0]


def open_source(source: str | os.PathLike, method: str = methods.DEFAULT, **options) -> Compilation:
    """A compilation of a file path or of program text."""
    source = os.fspath(source)
    methods.get(method)   # an unknown name is refused before anything is read
    looks_like_path = "\n" not in source and (source.endswith(".si") or os.path.exists(source))
    if looks_like_path:
        try:
            with open(source, "rb") as f:
                data = f.read()
        except OSError as e:
            raise SirenUsageError(f"cannot read '{source}': {e.strerror}") from None
        return Compilation(decode_source(data, source), source, method, **options)
    return Compilation(source, "<string>", method, **options)


def decode_source(data: bytes, path: str) -> str:
    """The text of a program file: UTF-8, after an optional byte-order mark. Other bytes
    are an error located at the first one that is not UTF-8."""
    from sirenc.diagnostics import SirenSyntaxError, Span, register_source

    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as e:
        bad = start + e.start
        line_start = data.rfind(b"\n", 0, bad) + 1
        line = data.count(b"\n", 0, bad) + 1
        col = len(data[max(line_start, start):bad].decode("utf-8")) + 1
        register_source(path, data[start:].decode("utf-8", errors="replace"))
        raise SirenSyntaxError(
            f"the program is not UTF-8 text: byte 0x{data[bad]:02x} ({e.reason}); "
            "save the file as UTF-8", Span(path, line, col, line, col + 1)) from None


# ---- stages -------------------------------------------------------------------


def _collecting_nothing(stage: Callable) -> Callable:
    """A stage from the syntax tree to the `llvm` dialect runs with the cyclic collector paused
    (`_collector_paused`)."""

    def run(c: Compilation, product):
        with _collector_paused():
            return stage(c, product)

    return run


@_collecting_nothing
def _ast(c: Compilation, _):
    from sirenc.frontend import load_source

    return load_source(c.text, c.path)


# The xDSL verifier re-checks every op of a stage's module against its definition: a check of
# the compiler itself (each pass's output), never of the user's program, and a third of the
# compile time of a big program. Every program is checked where stages are kept for inspection
# (tests: `snapshots`) and every program of ordinary size in any case; a large one compiled
# straight through skips it (LLVM's own verifier still checks the final IR).
_SELF_CHECK_CHARS = 20_000
# Two of xDSL's checks are quadratic in a program's shape: each block's terminator counts its
# region's blocks by walking them (1.5 s of the 1.7 s that 400 `observe`s took to compile: 16,800
# characters lowered to 2,400 blocks of one function), and a function's isolation from above walks
# from each op to the function through every region around it (0.9 s of 1.2 s for 800 nested
# `if`s). A program with more blocks in a region, or regions nested deeper, than this is left to
# LLVM's verifier as a long one is.
_SELF_CHECK_SHAPE = 100


def _self_check(c: Compilation, module) -> None:
    if c.snapshots or (len(c.text) <= _SELF_CHECK_CHARS and _shape(module) <= _SELF_CHECK_SHAPE):
        module.verify()


def _shape(module) -> int:
    """The larger of the most blocks of one region of `module` and its deepest nesting of regions."""
    most = 0
    work = [(module, 0)]
    while work:
        op, depth = work.pop()
        for region in op.regions:
            blocks = 0
            for block in region.blocks:
                blocks += 1
                work.extend((child, depth + 1) for child in block.ops)
            most = max(most, blocks, depth + 1)
    return most


@_collecting_nothing
def _siren(c: Compilation, typed):
    from sirenc.frontend.irgen import irgen
    from sirenc.frontend.result_names import returned

    c.returned = returned(typed.program)
    return irgen(typed)


def _apply(c: Compilation, module, name: str, **options):
    """Applies the registry's pass `name`, with `options`, to `module` in the compilation's context
    (as ``sirenc-opt -p 'name{options}'`` does); returns the pass, which holds what it found."""
    from sirenc.registry import get_pass

    pass_ = get_pass(name)(**options)
    pass_.apply(c.context, module)
    c.passes.append(pass_)
    return pass_


@_collecting_nothing
def _plan(c: Compilation, module):
    from sirenc.passes.analysis_budget import DEFAULT_BUDGET

    _apply(c, module, "inline-functions")
    _apply(c, module, "fold-constants")
    _self_check(c, module)
    # A method that keeps nothing symbolic always analyses (its plan says every variable is
    # sampled); the symbolic methods only when checking (--no-check skips the analysis).
    if c.check or not c.inference.symbolic:
        budget = DEFAULT_BUDGET if c.analysis_budget is None else c.analysis_budget
        c.plan = _apply(c, module, "plan-analysis", method=c.method, max_rvs=c.max_rvs, budget=budget).result
    return module


@_collecting_nothing
def _symbolic(c: Compilation, module):
    if not c.inference.symbolic:
        return module
    _apply(c, module, "symbolic-values")
    _self_check(c, module)
    return module


@_collecting_nothing
def _specialized(c: Compilation, module):
    if not c.inference.symbolic or c.tier == 1:
        return module
    c.specialization = _apply(c, module, "specialize-conjugacy", method=c.method).result
    _self_check(c, module)
    return module


def specialized(c: Compilation) -> bool:
    """Whether the compiled program runs on tier 2 (no symbolic runtime)."""
    return c.specialization is not None and c.specialization.applied


@_collecting_nothing
def _smc(c: Compilation, module):
    # A specialised program has no symbolic value left: it lowers as a pf program does.
    method = methods.PARTICLE_FILTER if specialized(c) else c.method
    _apply(c, module, "lower-siren-to-smc", base_dir=c.base_dir, method=method)
    _apply(c, module, "hoist-above-resample")
    _apply(c, module, "spill-across-suspends")
    _self_check(c, module)
    return module


@_collecting_nothing
def _llvm_dialect(c: Compilation, module):
    if not (specialized(c) and c.specialization.posterior):   # (whose frame result type is the atoms')
        _apply(c, module, "store-result-views")
    _apply(c, module, "lower-smc-to-llvm")
    _self_check(c, module)
    return module


def _llvm(c: Compilation, module):
    from sirenc.backend.llvm import llvm_ir_text

    return llvm_ir_text(module, model_info(c, module))


def _obj(c: Compilation, module):
    from sirenc.backend.llvm import object_bytes

    return object_bytes(module, model_info(c, module))


def _jax(c: Compilation, module):
    from sirenc.backend.jax_model import JaxModel

    return JaxModel(module, jax_info(c, module), float32=c.float32)


def _so(c: Compilation, obj: bytes):
    from sirenc.backend.link import link_shared

    return link_shared(obj)


@dataclass(frozen=True)
class Stage:
    """A named stage: `run(compilation, product of `after`)` gives its product.

    A stage that `transforms` changes its input module in place, so the driver
    hands it a copy: every stage's product stays a snapshot, and several stages
    can take the same input (the pipeline forks: `llvm` and `obj` both start
    from `llvm-dialect`; another back end would start from `smc`).
    """

    run: Callable
    after: str | None
    transforms: bool | Callable[[Compilation], bool] = False

    def transforms_for(self, c: Compilation) -> bool:
        return self.transforms(c) if callable(self.transforms) else self.transforms


STAGES: dict[str, Stage] = {
    "ast": Stage(_ast, None),
    "siren": Stage(_siren, "ast"),
    "plan": Stage(_plan, "siren", transforms=True),
    # Under pf the symbolic stage changes nothing: no copy of its input.
    "symbolic": Stage(_symbolic, "plan", transforms=lambda c: c.inference.symbolic),
    "specialized": Stage(_specialized, "symbolic", transforms=lambda c: c.inference.symbolic and c.tier != 1),
    "smc": Stage(_smc, "specialized", transforms=True),
    "llvm-dialect": Stage(_llvm_dialect, "smc", transforms=True),
    "llvm": Stage(_llvm, "llvm-dialect"),
    "obj": Stage(_obj, "llvm-dialect"),
    "so": Stage(_so, "obj"),
    # The second back end: the `smc` program traced into JAX functions (--emit=jax prints the jaxpr
    # of one step).
    "jax": Stage(_jax, "smc"),
}
ORDER = list(STAGES)


# The stages from the syntax tree to the `llvm` dialect make objects that live as long as the
# compilation (tokens, syntax tree, types, each stage's module) and next to no cyclic garbage (none
# on programs of 10^5 lines: an op a lowering replaces is freed by reference counting,
# `rewriting.drop`), which the collector would traverse on their way to the oldest generation (a
# sixth of the front end's time on such a program, from collections of the younger generations that
# free nothing). So it pauses there, for every thread at once, until no
# compilation is in such a stage (`_collecting_nothing`); the back end collects as usual. (Keeping
# what a stage made frozen changed the order in which objects are finalized at interpreter exit: a
# model alive then failed its __del__. `_to_oldest_generation` unfreezes it at once.)
_pause_lock = threading.Lock()
_paused = 0
_paused_enabled = False


@contextmanager
def _collector_paused():
    global _paused, _paused_enabled
    with _pause_lock:
        if _paused == 0:
            _paused_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _pause_lock:
            _paused -= 1
            if _paused == 0 and _paused_enabled:
                _to_oldest_generation()
                gc.enable()


def _to_oldest_generation() -> None:
    # What the pause let pile up in the youngest generation would be traversed whole by the next
    # young collection and again by the next middle one, for no garbage: what a stage made goes to
    # the oldest generation at once instead, where it would have gone after those two (freeze, then
    # unfreeze at once: it is not kept out of later collections, only spared the young ones; a
    # garbage cycle another thread made in the meantime waits for a full collection). A host that
    # froze objects itself keeps them so, and the traversals.
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def run_until(c: Compilation, stage: str):
    """Run the pipeline up to and including `stage`; returns that stage's product."""
    if stage not in STAGES:
        raise SirenUsageError(f"unknown stage '{stage}' (choose one of {', '.join(ORDER)})")
    if not on_deep_stack():
        return run_on_deep_stack(run_until, c, stage)
    # Back to the latest stage made: without snapshots, a stage that transformed its input
    # consumed the stages before it, and they are not made again.
    chain = [stage]
    while chain[-1] not in c.products and STAGES[chain[-1]].after is not None:
        chain.append(STAGES[chain[-1]].after)
    for name in reversed(chain):
        if name not in c.products:
            step = STAGES[name]
            product = c.products[step.after] if step.after is not None else None
            transforms = step.transforms_for(c)
            if transforms and c.snapshots:
                product = product.clone()
            elif transforms:
                del c.products[step.after]   # consumed: no one may read it half-transformed
            c.products[name] = step.run(c, product)
            if not c.snapshots and step.after in c.products and c.products[name] is product:
                # Handed on unchanged: one product under two names, and the next stage that
                # transforms it consumes it under the new one.
                del c.products[step.after]
    return c.products[stage]


def ast_text(typed) -> str:
    """An indented dump of the AST (``--emit=ast``)."""
    if not on_deep_stack():
        return run_on_deep_stack(ast_text, typed)
    from dataclasses import fields

    from sirenc.diagnostics import Span
    from sirenc.frontend import ast

    lines: list[str] = []

    def dump(node, depth: int, label: str = "") -> None:
        pad = "  " * depth + (f"{label}: " if label else "")
        if isinstance(node, list):
            for i, item in enumerate(node):
                dump(item, depth, f"{label}[{i}]")
            return
        if not isinstance(node, ast.Node):
            lines.append(pad + repr(node))
            return
        scalars, children = [], []
        for f in fields(node):
            value = getattr(node, f.name)
            if f.name == "span" or isinstance(value, Span) or f.name == "warnings":
                continue
            if isinstance(value, ast.Node | list) and f.name != "path":
                children.append((f.name, value))
            else:
                scalars.append(f"{f.name}={value!r}")
        s = node.span
        lines.append(f"{pad}{type(node).__name__}({', '.join(scalars)}) @{s.line}:{s.col}")
        for name, value in children:
            dump(value, depth + 1, name)

    dump(typed.program, 0)
    return "\n".join(lines)


def plan_text(c: Compilation) -> str:
    return c.plan.text() if c.plan is not None else ""


def model_info(c: Compilation, module):
    """The runtime's view of the model: the typed `smc.model` and `sirenrt.layout`
    attributes that the lowering put on the resumable procedure."""
    from xdsl.dialects import llvm

    from sirenc.diagnostics import Span
    from sirenc.model_info import RESUME_SYMBOL, ModelInfo
    from sirenc.passes.to_llvm.resume_abi import never_draws

    fn = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == RESUME_SYMBOL)
    model, layout = fn.attributes["smc.model"], fn.attributes["sirenrt.layout"]
    result_type, frame_result_type = result_types(c, model.result.data)
    return ModelInfo(
        name=c.name,
        method=c.method,
        plan=plan_text(c),
        result_type=result_type,
        frame_result_type=frame_result_type,
        result_names=result_names(c, result_type),
        frame_size=layout.frame_size.value.data,
        result_offset=layout.result_offset.value.data,
        streamable=bool(model.streamable.value.data),
        not_streamable_reason=model.not_streamable_reason.data,
        files=layout.file_list(),
        sites=[Span(s.filename.data, s.line.data, s.column.data) for s in layout.sites.data],
        roots=[r for r in layout.root_list() if r[2] != "S"],
        vars=[v.data for v in fn.attributes["sirenrt.vars"].data] if "sirenrt.vars" in fn.attributes else [],
        var_sites=[s.value.data for s in fn.attributes["sirenrt.var_sites"].data]
        if "sirenrt.var_sites" in fn.attributes else [],
        sym_roots=[r for r in layout.root_list() if r[2] == "S"],
        tier=2 if specialized(c) else 1,
        static_runtime_plan="".join(f"{name}: {enc}\n" for name, enc in c.specialization.runtime_plan.items())
        if specialized(c) else "",
        never_draws=never_draws(op.sym_name.data for op in module.ops
                                if isinstance(op, llvm.FuncOp) and op.sym_name.data.startswith("sirenrt_")),
    )


def result_names(c: Compilation, result_type: str) -> list[str]:
    from sirenc.frontend.result_names import names

    return names(c.returned, result_type)


def result_types(c: Compilation, frame: str) -> tuple[str, str]:
    """(the result's type descriptor, the frame's where it differs, else ""): a tier-2 program whose
    result may be symbolic returns (result, its posterior atoms)."""
    from sirenc.descriptors import logical_of_views, skip

    if not (specialized(c) and c.specialization.posterior):
        logical = logical_of_views(frame)   # (store-result-views)
        return logical, ("" if logical == frame else frame)
    return frame[1:skip(frame, 1)], frame


def jax_info(c: Compilation, module) -> dict:
    """What the JAX back end reports about a model (``JaxModel.info``), as ``ModelInfo`` for the native one."""
    from sirenc.ir import smc

    particle = next(op for op in module.walk() if isinstance(op, smc.ParticleOp))
    data_file = particle.model.data_file.data
    result_type, frame_result_type = result_types(c, particle.model.result.data)
    return dict(name=c.name, method=c.method, plan=plan_text(c), result_type=result_type,
                frame_result_type=frame_result_type, result_names=result_names(c, result_type), data_file=data_file, files=[data_file] if data_file else [],
                tier=2 if specialized(c) else 1,
                static_runtime_plan="".join(f"{name}: {enc}\n" for name, enc in c.specialization.runtime_plan.items())
                if specialized(c) else "")


def jax_model(source, method: str = methods.DEFAULT, check: bool = True, max_rvs: int = 4,
              analysis_budget: int | None = None, tier: int = 2, float32: bool = False):
    """Source file or text -> ``JaxModel`` (the JAX back end)."""
    c = open_source(source, method, check=check, max_rvs=max_rvs, analysis_budget=analysis_budget,
                    snapshots=False, tier=tier, float32=float32)
    return run_until(c, "jax")


def compile_to_llvm_dialect(source, method: str = methods.DEFAULT, check: bool = True, max_rvs: int = 4,
                            analysis_budget: int | None = None, tier: int = 2):
    """Source file or text -> (llvm-dialect module, ModelInfo); the backend's input."""
    c = open_source(source, method, check=check, max_rvs=max_rvs, analysis_budget=analysis_budget,
                    snapshots=False, tier=tier)
    module = run_until(c, "llvm-dialect")
    return module, model_info(c, module)


def lower_to_siren(source, inline: bool = True):
    """Source -> `siren` module (inlined unless asked otherwise), for analyses and tests."""
    c = open_source(source)
    module = run_until(c, "siren")
    if inline:
        _apply(c, module, "inline-functions")
    return module
