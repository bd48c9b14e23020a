"""A huge function is compiled with LLVM's plainest instruction scheduling, every other model as
before (sirenc/backend/schedulers.py): the process-wide options are put back after each huge
compilation, and threads compiling at once see them only while a huge module holds them alone."""

from __future__ import annotations

import pytest

import sirenc
from sirenc import driver
from sirenc.backend import schedulers
from sirenc.backend.llvm import object_bytes
from markers import needs_tools
from concurrent_threads import on_threads

SMALL = "let p <- beta(1., 1.) in let () = observe(bernoulli(p), true) in p * 2. + 1."


def _chain(n: int) -> str:
    """A chain of n `let`s over a value known only at run time: an instruction per `let`."""
    return "\n".join(["let x0 = List.hd([1.]) in", *(f"let x{i} = x{i - 1} + 1. in" for i in range(1, n)),
                      f"x{n - 1}"])


def _object(text: str) -> bytes:
    module, info = driver.compile_to_llvm_dialect(text)
    return object_bytes(module, info)


def test_only_a_huge_function_counts_as_huge():
    module, _ = driver.compile_to_llvm_dialect(SMALL)
    assert schedulers.largest_function(module) < 200
    module, _ = driver.compile_to_llvm_dialect(_chain(300))
    assert 600 < schedulers.largest_function(module) < 700   # a constant and an add per `let`


def test_the_options_are_put_back_after_a_huge_function(monkeypatch):
    before = _object(SMALL)
    monkeypatch.setattr(schedulers, "HUGE_FUNCTION", 0)
    plain = _object(SMALL)
    assert plain != before   # the options change the code: the comparison below can fail
    monkeypatch.setattr(schedulers, "HUGE_FUNCTION", 10_000)
    assert _object(SMALL) == before


def test_the_options_are_put_back_when_code_generation_fails(monkeypatch):
    before = _object(SMALL)
    module, _ = driver.compile_to_llvm_dialect(_chain(300))
    monkeypatch.setattr(schedulers, "HUGE_FUNCTION", 200)
    with pytest.raises(RuntimeError, match="boom"):
        with schedulers.code_generation(module):
            raise RuntimeError("boom")
    assert _object(SMALL) == before


def test_threads_compiling_at_once_get_the_code_they_get_alone(monkeypatch):
    # Between the two programs' sizes: the chain is huge, SMALL is not.
    monkeypatch.setattr(schedulers, "HUGE_FUNCTION", 200)
    programs = [SMALL, _chain(300)]
    alone = [_object(p) for p in programs]
    results = on_threads(lambda i: _object(programs[i % 2]), 8)
    assert all(results[i] == alone[i % 2] for i in range(8)), results


def test_a_huge_function_compiles_and_computes_what_it_says():
    n = schedulers.HUGE_FUNCTION // 2 + 1000   # two operations per `let`
    module, _ = driver.compile_to_llvm_dialect(_chain(n))
    assert schedulers.largest_function(module) > schedulers.HUGE_FUNCTION
    assert sirenc.compile(_chain(n), method="pf").filter(particles=1, seed=0).run().estimate() == n


def test_a_long_block_without_avx_is_generated_at_level_0():
    huge, _ = driver.compile_to_llvm_dialect(_chain(schedulers.LONG_BLOCK // 2 + 100))
    small, _ = driver.compile_to_llvm_dialect(_chain(schedulers.LONG_BLOCK // 2 - 100))
    assert schedulers.largest_block(small) <= schedulers.LONG_BLOCK < schedulers.largest_block(huge)
    x86 = "x86_64-unknown-linux-gnu"
    assert schedulers.codegen_level(huge, x86, "") == 0
    assert schedulers.codegen_level(huge, x86, "+64bit,-avx,+sse2") == 0
    assert schedulers.codegen_level(huge, x86, "+64bit,+avx,+sse2") == 2
    assert schedulers.codegen_level(huge, "aarch64-unknown-linux-gnu", "") == 2
    assert schedulers.codegen_level(small, x86, "") == 2


@needs_tools("cc")
def test_a_huge_function_in_a_shared_object_computes_what_it_says(tmp_path):
    # The object is generated for any x86-64 CPU, without AVX: the level-0 path on this machine.
    n = schedulers.HUGE_FUNCTION // 2 + 1000
    model = sirenc.compile(_chain(n), method="pf", output=tmp_path / "chain.so")
    assert model.filter(particles=1, seed=0).run().estimate() == n
