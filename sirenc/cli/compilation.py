"""The program a command compiles, and the model `sirenc run` runs: JIT-compiled, from the compile
cache, or the JAX back end's."""

from __future__ import annotations

import os
import sys

from sirenc.cli.warning_groups import program_warnings
from sirenc.diagnostics import SirenUsageError


def open_program(args, check: bool):
    """The compilation of ``args.file`` with the command line's method and analysis options."""
    from sirenc import driver

    # A command prints or writes one stage's product: no earlier one is kept (a copy and a
    # verification of each transformed module made a literal of 10^5 lists take four times as long).
    return driver.open_source(args.file, args.method, check=check, max_rvs=args.max_rvs,
                              analysis_budget=args.analysis_budget, tier=args.tier, snapshots=False)


def jit_model(c, data: str | None = None):
    """The compilation's filter, JIT-compiled into this process. ``data`` (``--data``) replaces
    the program's data file (file 0): the runtime reads it as it reads ``File.read``'s files."""
    from sirenc import api, driver

    c.snapshots = False   # nothing prints the intermediate stages of a run
    module = driver.run_until(c, "llvm-dialect")
    info = driver.model_info(c, module)
    if data is not None:
        info.replace_data(data)
    return api.from_llvm_dialect(module, info)


def compiled_for_run(c, data: str | None, use_cache: bool = True):
    """``(Model, CachedFacts)`` for ``sirenc run``: from the compile cache (sirenc/compile_cache.py)
    when it can be used, else JIT-compiled into this process."""
    from sirenc import compile_cache
    from sirenc.diagnostics import register_source

    if use_cache and compile_cache.available():
        key = compile_cache.entry_key(c, data)
        hit = compile_cache.lookup(key, c, data)
        if hit is not None:
            register_source(c.path, c.text)      # the warnings quote the program's lines
            return hit
        try:
            return compile_cache.store(key, c, data, program_warnings)
        except compile_cache.CacheUnusable as e:
            print(f"sirenc: warning: the compile cache is not usable, compiling without it: {e.message} "
                  "(set SIRENC_CACHE_DIR, or give --no-cache)", file=sys.stderr)
    model = jit_model(c, data)
    return model, compile_cache.CachedFacts(dict(c.plan.plan) if c.plan is not None else None,
                                            c.plan.seconds if c.check else None, program_warnings(c))


def jax_for_run(c, args, data: str | None, memory_limit, mh):
    """``(JaxModel, CachedFacts)`` for ``sirenc run --backend jax``."""
    from sirenc import compile_cache, driver

    if mh or args.threads != 1 or memory_limit is not None or args.plot:
        raise SirenUsageError("--handler mh, --threads, --memory-limit and --plot are options of the native "
                              "back end, not of --backend jax")
    c.float32, c.snapshots = args.float32, False
    model = driver.run_until(c, "jax")
    if data is not None:
        if not model.info["data_file"]:
            raise SirenUsageError("--data replaces the file the program reads with File.read, "
                                  "and this program reads no file")
        model.info["data_file"] = os.path.abspath(data)
    return model, compile_cache.CachedFacts(dict(c.plan.plan) if c.plan is not None else None,
                                            c.plan.seconds if c.check else None, program_warnings(c))
