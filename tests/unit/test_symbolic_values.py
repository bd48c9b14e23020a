"""The `symbolic-values` pass (-m ssi) and the symbolic lowering down to LLVM IR.

Linking and running need the runtime's sirenrt_sym_*/sirenrt_sym_* functions; these
tests stop at LLVM IR text, which only needs the header.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sirenc import driver
from sirenc.ir import siren, smc

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = sorted((ROOT / "benchmarks" / "models").glob("*/model.si"))


def _compile(text: str, stage: str, check: bool = False):
    c = driver.open_source(text, "ssi", check=check, tier=1)
    return c, driver.run_until(c, stage)


def _ops(module, op_type) -> list:
    return [op for op in module.walk() if isinstance(op, op_type)]


def _assumes(module) -> dict[str, siren.AssumeOp]:
    return {op.var.data: op for op in _ops(module, siren.AssumeOp)}


def _main_result(module):
    main = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == "main")
    return main.function_type.outputs.data[0]


SYM = siren.sym


# -- decisions of the pass -------------------------------------------------------------------------


def test_an_unannotated_variable_is_symbolic_and_a_sampled_one_concrete():
    _, m = _compile("""
let x <- gaussian(0., 1.) in
let sample y <- gaussian(0., 1.) in
let symbolic z <- gaussian(0., 1.) in
(x, (y, z))
""", "symbolic")
    vs = _assumes(m)
    assert vs["x"].result.type == SYM
    assert str(vs["y"].result.type) == "f64"
    assert vs["z"].result.type == SYM
    assert str(_main_result(m)) == "!siren.pair<!siren.sym, !siren.pair<f64, !siren.sym>>"


def test_arithmetic_on_concrete_values_stays_f64():
    _, m = _compile("""
let sample y <- gaussian(0., 1.) in
let a = 2. * y + 1. in
let x <- gaussian(a, 1.) in
let b = x - a in
(a, b)
""", "symbolic")
    add = _ops(m, siren.AddOp)[0]
    mul = _ops(m, siren.MulOp)[0]
    sub = _ops(m, siren.SubOp)[0]
    assert str(add.result.type) == "f64" and str(mul.result.type) == "f64"
    assert sub.result.type == SYM
    # the concrete `a` meets the symbolic `x` through one explicit coercion
    assert add.result in [op.operand for op in _ops(m, siren.ToSymOp)]
    assert str(_main_result(m)) == "!siren.pair<f64, !siren.sym>"


def test_a_pure_if_on_a_symbolic_condition_becomes_an_ite():
    c, m = _compile("""
let alt <- gaussian(0., 1.) in
let v = if alt < 5. then 1. else 2. in
v
""", "smc")
    assert c.products["symbolic"] is not None
    sym_if = _ops(c.products["symbolic"], siren.IfOp)[0]
    assert sym_if.cond.type == SYM and sym_if.result.type == SYM
    assert not _ops(c.products["symbolic"], siren.ForceOp)
    assert len(_ops(m, smc.SymIteOp)) == 1
    assert [op.kind.data for op in _ops(m, smc.SymBinOp)] == ["lt"]
    assert not _ops(m, smc.SymValueOp)


def test_an_impure_if_forces_its_condition():
    _, m = _compile("""
let env <- bernoulli(0.5) in
let () = if env then observe(gaussian(0., 1.), 1.) else observe(gaussian(0., 2.), 1.) in
env
""", "symbolic")
    the_if = _ops(m, siren.IfOp)[0]
    force = the_if.cond.owner
    assert isinstance(force, siren.ForceOp) and str(force.result.type) == "i1"
    assert force.operand is _assumes(m)["env"].result
    # the variable itself stays symbolic: only the condition is forced
    assert _main_result(m) == SYM


def test_an_if_on_a_symbolic_condition_whose_result_is_a_list_forces_it():
    _, m = _compile("""
let b <- bernoulli(0.5) in
if b then [1.] else []
""", "symbolic")
    the_if = _ops(m, siren.IfOp)[0]
    assert isinstance(the_if.cond.owner, siren.ForceOp)


def test_a_concrete_if_with_a_symbolic_branch_has_a_symbolic_result():
    _, m = _compile("""
let sample first <- bernoulli(0.5) in
let x <- gaussian(0., 1.) in
if first then 0. else x
""", "symbolic")
    the_if = _ops(m, siren.IfOp)[0]
    assert str(the_if.cond.type) == "i1" and the_if.result.type == SYM
    then_yield = the_if.then_region.block.last_op
    assert isinstance(then_yield.value.owner, siren.ToSymOp)


def test_a_fold_accumulator_becomes_symbolic_by_fixpoint():
    _, m = _compile("""
val step = fun (y, (a, b, xs)) ->
  let x <- gaussian(b, 1.) in
  (b, x, x :: xs)
in
fold(step, [1., 2., 3.], (0., 0., []))
""", "symbolic")
    fold = _ops(m, siren.FoldOp)[0]
    # b becomes symbolic in the first round, a (which takes b) only in the second
    assert str(fold.result.type) == \
        "!siren.pair<!siren.sym, !siren.pair<!siren.sym, !siren.list<!siren.sym>>>"
    assert fold.body.block.args[1].type == fold.result.type
    assert fold.init.type == fold.result.type
    # the literal initial value is rebuilt with symbolic components, not mapped
    assert not _ops(m, siren.MapOp)


def test_a_list_of_symbolic_values_has_symbolic_elements_and_hd_is_symbolic():
    _, m = _compile("""
let x <- gaussian(0., 1.) in
let l = [1., x] in
List.hd(l) + List.len(l)
""", "symbolic")
    hd = _ops(m, siren.HdOp)[0]
    assert str(hd.operand.type) == "!siren.list<!siren.sym>" and hd.result.type == SYM
    assert str(_ops(m, siren.LenOp)[0].result.type) == "f64"


def test_observed_values_and_range_bounds_are_forced():
    _, m = _compile("""
let x <- gaussian(0., 1.) in
let n <- poisson(3.) in
let () = observe(gaussian(0., 1.), x) in
List.range(0., n)
""", "symbolic")
    obs = _ops(m, siren.ObserveOp)[0]
    assert isinstance(obs.value.owner, siren.ForceOp) and str(obs.value.type) == "f64"
    rng = _ops(m, siren.RangeOp)[0]
    assert isinstance(rng.hi.owner, siren.ForceOp)
    assert str(rng.result.type) == "!siren.list<f64>"


def test_equality_of_pairs_forces_the_symbolic_components():
    _, m = _compile("""
let x <- gaussian(0., 1.) in
(x, 1.) = (0., 1.)
""", "symbolic")
    eq = _ops(m, siren.EqOp)[0]
    assert str(eq.result.type) == "i1" and str(eq.lhs.type) == "!siren.pair<f64, f64>"
    assert len(_ops(m, siren.ForceOp)) == 1


def test_scalar_equality_on_a_symbolic_value_is_symbolic():
    _, m = _compile("""
let x <- bernoulli(0.5) in
x = true
""", "smc")
    assert [op.kind.data for op in _ops(m, smc.SymBinOp)] == ["eq"]


def test_a_distribution_with_a_symbolic_parameter_is_a_symdist():
    _, m = _compile("""
let mu <- gaussian(0., 1.) in
let x <- gaussian(mu, 1.) in
let () = observe(gaussian(x, 1.), 0.5) in
let () = observe(gaussian(0., 1.), 0.5) in
x
""", "symbolic")
    dists = _ops(m, siren.DistOp)
    assert [type(d.result.type) for d in dists] == [siren.DistType, siren.SymDistType, siren.SymDistType,
                                                     siren.DistType]


# -- the smc level -----------------------------------------------------------------------------------


def test_every_assume_becomes_smc_assume_with_var_index_and_annotation():
    _, m = _compile("""
let a <- gaussian(0., 1.) in
let sample b <- gaussian(a, 1.) in
let symbolic c <- bernoulli(0.5) in
let () = observe(gaussian(a, 1.), 0.5) in
let () = observe(gaussian(b, 1.), 0.5) in
(a, (b, c))
""", "smc")
    assumes = _ops(m, smc.AssumeOp)
    assert [(a.family.data, a.var.value.data, a.annotation.value.data) for a in assumes] == \
        [("gaussian", 0, 0), ("gaussian", 1, 1), ("bernoulli", 2, 2)]
    assert [str(a.result.type) for a in assumes] == ["!smc.sym", "f64", "!smc.sym"]
    assert not _ops(m, smc.SampleOp)
    particle = _ops(m, smc.ParticleOp)[0]
    assert [v.data for v in particle.attributes["smc.vars"].data] == ["a", "b", "c"]
    # symbolic parameters -> sym_observe; concrete ones keep the fast smc.observe
    assert len(_ops(m, smc.SymObserveOp)) == 1 and len(_ops(m, smc.ObserveOp)) == 1
    assert particle.model.result.data == "PSPfS"


def test_a_repeated_variable_name_has_one_index():
    _, m = _compile("""
val step = fun (y, acc) -> let x <- gaussian(acc, 1.) in x in
let z <- gaussian(0., 1.) in
fold(step, [1., 2.], z)
""", "smc")
    assert [a.var.value.data for a in _ops(m, smc.AssumeOp)] == [0, 1]
    particle = _ops(m, smc.ParticleOp)[0]
    assert [v.data for v in particle.attributes["smc.vars"].data] == ["z", "x"]


def test_symbolic_words_live_across_a_resample_are_spilled_and_rooted():
    _, m = _compile("""
let x <- gaussian(0., 1.) in
let xs = [x] in
let () = resample() in
(x, xs)
""", "smc")
    particle = _ops(m, smc.ParticleOp)[0]
    roots = particle.model.root_list()
    assert sorted(d for _, _, d in roots) == ["LS", "S"]
    assert all(point == 1 for point, _, _ in roots)
    stores = _ops(m, smc.FrameStoreOp)
    assert any(isinstance(s.value.type, smc.SymType) for s in stores)


def test_llvm_calls_the_symbolic_runtime_and_fills_the_descriptor():
    c, text = _compile("""
let x <- gaussian(0., 1.) in
let sample s <- gaussian(0., 1.) in
let y = if x < 0. then -x else x * 2. in
let () = observe(gaussian(y, 1.), s) in
let () = resample() in
(y, s)
""", "llvm")
    for decl in ("declare i64 @sirenrt_sym_assume(ptr, i32, i64, i64, i64, i32, i32, i32)",
                 "declare void @sirenrt_sym_observe(ptr, i32, i64, i64, i64, double, i32)",
                 "declare i64 @sirenrt_sym_lt(ptr, i64, i64)",
                 "declare i64 @sirenrt_sym_neg(ptr, i64)",
                 "declare i64 @sirenrt_sym_mul(ptr, i64, i64)",
                 "declare i64 @sirenrt_sym_ite(ptr, i64, i64, i64)"):
        assert decl in text
    model = next(line for line in text.splitlines() if line.startswith("@sirenc_model ="))
    assert 'c"ssi\\00"' in text and 'c"x\\00"' in text and 'c"s\\00"' in text
    assert "ptr @sirenc_model.vars, i32 1, ptr @sirenc_model.sym_roots, i32 1, ptr null, i32 0, ptr @siren_resume.span, ptr null, ptr @sirenc_model.str" in model
    assert "i32 2, ptr @sirenc_model.vars" in model
    info = driver.model_info(c, c.products["llvm-dialect"])
    assert info.method == "ssi" and info.vars == ["x", "s"] and info.result_type == "PSf"
    assert [t for _, _, t in info.sym_roots] == ["S"] and not info.roots


def test_pf_is_unchanged_by_the_symbolic_stage():
    c = driver.open_source(ROOT / "examples" / "walk.si")
    driver.run_until(c, "smc")
    assert c.products["symbolic"] is c.products["plan"]
    assert not any(isinstance(op, smc.AssumeOp | smc.SymValueOp) for op in c.products["smc"].walk())


def test_no_check_skips_the_analysis_under_ssi():
    c, _ = _compile("let x <- gaussian(0., 1.) in x", "symbolic", check=False)
    assert c.plan is None
    c, _ = _compile("let x <- gaussian(0., 1.) in x", "symbolic", check=True)
    assert c.plan is not None


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.parent.name)
def test_every_benchmark_reaches_llvm_ir_under_ssi(path):
    c = driver.open_source(path, "ssi", check=False, tier=1)
    text = driver.run_until(c, "llvm")
    assert "@sirenrt_sym_assume" in text and 'c"ssi\\00"' in text
    assert not any(op.name.startswith(("siren.", "smc.")) for op in c.products["llvm-dialect"].walk())
    # LLVM parses, verifies, optimises and compiles it (linking needs the runtime's functions)
    assert driver.run_until(c, "obj")[:4] == b"\x7fELF"
