"""sirenc/registry.py is the one list of sirenc's dialects and passes: sirenc-opt
and the `xdsl.universe` entry point (plain xdsl-opt) both show exactly it."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.ir import Dialect
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.universe import Universe

from sirenc import registry
from sirenc.opt import SirencOptMain
from sirenc.universe import SIRENC_UNIVERSE

PROGRAM = """
builtin.module {
  func.func private @inc(%x: f64) -> f64 {
    %one = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
    %r = "siren.add"(%x, %one) : (f64, f64) -> f64
    func.return %r : f64
  }
  func.func @main() -> f64 {
    %c = "siren.const"() <{value = 2.000000e+00 : f64}> : () -> f64
    %r = func.call @inc(%c) : (f64) -> f64
    func.return %r : f64
  }
}
"""


def test_universe_is_the_registry():
    assert set(SIRENC_UNIVERSE.all_passes) == set(registry.PASSES)
    assert set(SIRENC_UNIVERSE.all_dialects) == set(registry.DIALECTS)
    assert not SIRENC_UNIVERSE.all_targets and not SIRENC_UNIVERSE.all_frontends


def test_entry_point_names_the_universe():
    (ep,) = [ep for ep in entry_points(group="xdsl.universe") if ep.name == "sirenc"]
    assert ep.load() is SIRENC_UNIVERSE


def test_multiverse_holds_the_registry():
    # Also checks that no sirenc name clashes with one of xDSL's (that would
    # make every xdsl-opt in the environment fail).
    multiverse = Universe.get_multiverse()
    assert set(registry.PASSES) <= set(multiverse.all_passes)
    assert set(registry.DIALECTS) <= set(multiverse.all_dialects)


@pytest.mark.parametrize("name", sorted(registry.PASSES))
def test_pass_entry_loads_its_pass(name):
    cls = registry.pass_factories()[name]()
    assert isinstance(cls, type) and issubclass(cls, ModulePass)
    assert cls.name == name
    assert registry.get_pass(name) is cls


@pytest.mark.parametrize("name", sorted(registry.DIALECTS))
def test_dialect_entry_loads_its_dialect(name):
    dialect = registry.dialect_factories()[name]()
    assert isinstance(dialect, Dialect) and dialect.name == name
    assert registry.get_dialect(name) is dialect


@pytest.mark.parametrize("name", sorted(registry.DIALECTS))
def test_a_dialect_holds_only_its_own_names(name):
    # A definition registered under another dialect's name would parse under
    # neither (e.g. the layout, #sirenrt.layout, left in the smc dialect).
    dialect = registry.get_dialect(name)
    for definition in [*dialect.operations, *dialect.attributes]:
        assert definition.name.startswith(name + "."), definition.name


def test_the_runtime_layout_is_the_sirenrt_dialect():
    # The smc dialect knows nothing of the C runtime; its view of a compiled model is sirenrt's.
    from sirenc.ir.sirenrt import LayoutAttr

    assert list(registry.get_dialect("sirenrt").attributes) == [LayoutAttr]
    assert LayoutAttr not in list(registry.get_dialect("smc").attributes)


def test_sirenc_opt_registers_the_registry():
    main = SirencOptMain(args=[])
    assert set(registry.PASSES) <= set(main.available_passes)
    assert set(registry.DIALECTS) <= set(main.ctx.registered_dialect_names)


def test_register_dialects_skips_registered_ones():
    ctx = Context()
    ctx.register_dialect("siren", registry.dialect_factories()["siren"])
    registry.register_dialects(ctx)
    registry.register_dialects(ctx)
    assert set(registry.DIALECTS) <= set(ctx.registered_dialect_names)


def test_pipeline_runs_registry_passes():
    ctx = registry.register_dialects(Context())
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Func)
    module = Parser(ctx, PROGRAM).parse_module()
    registry.pipeline("inline-functions").apply(ctx, module)
    assert isinstance(module, ModuleOp)
    assert [f.sym_name.data for f in module.ops] == ["main"]


def test_xdsl_opt_runs_inline_functions():
    result = subprocess.run(
        [sys.executable, "-m", "xdsl.tools.xdsl_opt", "-p", "inline-functions"],
        input=PROGRAM, capture_output=True, text=True, check=True,
    )
    assert "func.call" not in result.stdout
    assert "@inc" not in result.stdout
    assert '"siren.add"' in result.stdout
