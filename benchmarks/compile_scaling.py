"""Compile time and memory against program size, stage by stage (issue 11, item 2).

    python benchmarks/compile_scaling.py [--sizes 1000,10000,100000] [--shapes let,list,...]
                                         [--method pf] [--object] [--profile SHAPE:N]

For each generated program shape and size n, a fresh process runs the driver's stages one after
another (``ast -> siren -> plan -> symbolic -> specialized -> smc -> llvm-dialect``) and then the
back end in its parts (``ir-text``: the module's LLVM IR text; ``parse``: LLVM parses and verifies it;
``opt``: the O2 pipeline; ``code``: MCJIT's code generation, as ``sirenc run`` and
``sirenc.compile(src)`` do, or with ``--object`` the portable object that ``sirenc -o model.so``
links), and prints the CPU seconds of each
(CPU, not wall-clock time: on a shared machine the wall clock mostly measures the others) and the
process's peak resident set after the whole compilation. The last column is the total; ``x``
columns give the growth of the total against the size before (10 for linear work when sizes grow
tenfold). ``--profile let:100000`` instead runs one compilation under cProfile and prints the top
functions by cumulative and own time.

The shapes (n is the size):
  let     let x0 = 1. in let x1 = x0 + 1. in ... x{n-1}  (irgen folds the chain)
  letx    the same chain from x0 = List.hd([1.]), a value known only when the program runs: an op
          per let
  list    fold(add, [1., 2., ..., n.], 0.)
  lists   List.len([[1.], [2.], ..., [n.]])  (a literal of n literals: one constant list)
  neg     - - - ... - 1.  (n minus signs; irgen folds the constant chain)
  sum     1. + 1. + ... + 1.  (n terms, left-nested; folded too)
  negx    let x = List.hd([1.]) in - - - ... - x  (n minus signs on a value known only when the
          program runs, which nothing folds: an op per sign)
  sumx    let x = List.hd([1.]) in x + x + ... + x  (n terms, left-nested: an op per '+')
  val     val f0 = fun x -> x + 1. in val f1 = fun x -> f0(x) + 1. in ... f{n-1}(1.)  (inlined, then
          folded by fold-constants)
  obs     let x <- gaussian(0., 1.) in let () = observe(gaussian(x, 1.), 0.1) in ... x  (n observes of
          one variable: under -m ssi or ds its symbolic state is updated n times)
  ifs     let x <- gaussian(0., 1.) in if x < 0. then if x < 0. then ... 1. else 1. ... else 1.
          (n nested branches on a value drawn at run time)
  lit     [1., 2., ..., n.]  (a literal of n constants, returned)
  params  val f = fun (a0, ..., a{n-1}) -> a0 + ... + a{n-1} in f(0., ..., {n-1}.)  (a function of n
          parameters: its argument is an n-tuple, n right-nested pairs)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys


def program(shape: str, n: int) -> str:
    """The program text of `shape` at size n."""
    if shape == "let":
        return "\n".join(["let x0 = 1. in", *(f"let x{i} = x{i - 1} + 1. in" for i in range(1, n)),
                          f"x{n - 1}"])
    if shape == "letx":
        return "\n".join(["let x0 = List.hd([1.]) in", *(f"let x{i} = x{i - 1} + 1. in" for i in range(1, n)),
                          f"x{n - 1}"])
    if shape == "list":
        items = ", ".join(f"{i}." for i in range(1, n + 1))
        return f"val add = fun (x, acc) -> x + acc in\nfold(add, [{items}], 0.)"
    if shape == "lists":
        return "List.len([" + ", ".join(f"[{i}.]" for i in range(1, n + 1)) + "])"
    if shape == "neg":
        return "- " * n + "1."
    if shape == "sum":
        return " + ".join(["1."] * n)
    if shape == "negx":
        return "let x = List.hd([1.]) in " + "- " * n + "x"
    if shape == "sumx":
        return "let x = List.hd([1.]) in " + " + ".join(["x"] * n)
    if shape == "val":
        return "\n".join(["val f0 = fun x -> x + 1. in",
                          *(f"val f{i} = fun x -> f{i - 1}(x) + 1. in" for i in range(1, n)),
                          f"f{n - 1}(1.)"])
    if shape == "obs":
        return "\n".join(["let x <- gaussian(0., 1.) in",
                          *("let () = observe(gaussian(x, 1.), 0.1) in" for _ in range(n)), "x"])
    if shape == "ifs":
        return "let x <- gaussian(0., 1.) in " + "if x < 0. then " * n + "1." + " else 1." * n
    if shape == "lit":
        return "[" + ", ".join(f"{i}." for i in range(1, n + 1)) + "]"
    if shape == "params":
        params = ", ".join(f"a{i}" for i in range(n))
        return (f"val f = fun ({params}) -> " + " + ".join(f"a{i}" for i in range(n)) + " in\n"
                + "f(" + ", ".join(f"{i}." for i in range(n)) + ")")
    raise ValueError(f"unknown shape {shape!r}")


SHAPES = ("let", "letx", "list", "lists", "neg", "sum", "negx", "sumx", "val", "obs", "ifs", "lit", "params")
FRONT = ("ast", "siren", "plan", "symbolic", "specialized", "smc", "llvm-dialect")
BACK = ("ir-text", "parse", "opt", "code")


def measure(shape: str, n: int, method: str, front_only: bool = False, obj: bool = False) -> dict:
    """One compilation in this process: CPU seconds per stage and the peak resident set (MiB)."""
    import resource
    import time

    from sirenc import driver
    from sirenc.backend import llvm as backend
    from sirenc.backend import schedulers
    from sirenc.deep_stack import run_on_deep_stack

    seconds: dict[str, float] = {}

    def stages():
        # The stages one after another as `driver.run_until` runs them without snapshots
        # (each transforms its input in place), timed one by one.
        c = driver.open_source(program(shape, n), method, snapshots=False)
        module = None
        for stage in FRONT:
            t = time.process_time()
            module = driver.STAGES[stage].run(c, module)
            seconds[stage] = time.process_time() - t
        if front_only:
            return
        info = driver.model_info(c, module)
        backend._load_runtime()
        tm = backend._target_machine(jit=not obj, native=not obj, module=module)
        context = backend.llvm.create_context()
        t = time.process_time()
        text = backend.ir_text(module, info, data_layout=str(tm.target_data))
        seconds["ir-text"] = time.process_time() - t
        t = time.process_time()
        ref = backend.llvm.parse_assembly(text, context=context)
        ref.verify()
        seconds["parse"] = time.process_time() - t
        t = time.process_time()
        backend._optimize(ref, tm)
        seconds["opt"] = time.process_time() - t
        t = time.process_time()
        with schedulers.code_generation(module):
            if obj:
                assert tm.emit_object(ref)
            else:
                engine = backend.llvm.create_mcjit_compiler(ref, tm)
                engine.finalize_object()
                assert engine.get_global_value_address(backend.MODEL_SYMBOL)
        seconds["code"] = time.process_time() - t

    # The deep-stack worker, as sirenc.compile runs it (the back end too: LLVM's
    # passes recurse on some shapes).
    run_on_deep_stack(stages)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "peak_mib": peak_mib}


def profile(shape: str, n: int, method: str) -> None:
    import cProfile
    import pstats

    prof = cProfile.Profile()
    from sirenc.deep_stack import run_on_deep_stack

    def run():
        prof.enable()
        try:
            measure(shape, n, method)
        finally:
            prof.disable()

    run_on_deep_stack(run)
    stats = pstats.Stats(prof).strip_dirs()
    stats.sort_stats("cumulative").print_stats(40)
    stats.sort_stats("tottime").print_stats(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--method", default="pf")
    ap.add_argument("--profile", help="SHAPE:N: profile one compilation instead")
    ap.add_argument("--object", action="store_true",
                    help="generate the portable object of `sirenc -o` instead of JIT code")
    ap.add_argument("--front-only", action="store_true",
                    help="stop at the llvm dialect (for an older sirenc on PYTHONPATH without its runtime)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], int(args.child[1]), args.method, args.front_only, args.object)))
        return
    if args.profile:
        shape, n = args.profile.split(":")
        profile(shape, int(n), args.method)
        return
    columns = FRONT + BACK
    header = f"{'shape':<6}{'n':>8} " + "".join(f"{c[:8]:>9}" for c in columns) + \
        f"{'total s':>9}{'x':>6}{'peak MiB':>10}{'x':>6}"
    print(f"method {args.method}; code {'object' if args.object else 'JIT'}; CPU seconds per stage, "
          "peak resident set of the process")
    print(header)
    for shape in args.shapes.split(","):
        before = None
        for n in (int(s) for s in args.sizes.split(",")):
            out = subprocess.run([sys.executable, __file__, "--method", args.method, "--child", shape, str(n)]
                                 + (["--front-only"] if args.front_only else []) + (["--object"] if args.object else []),
                                 capture_output=True, text=True)
            if out.returncode != 0:
                tail = (out.stderr.strip().splitlines() or ["?"])[-1]
                print(f"{shape:<6}{n:>8}  failed: {tail}")
                before = None
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            total = sum(r["seconds"].values())
            growth = f"{total / before[0]:>6.1f}" if before else f"{'':>6}"
            mgrowth = f"{r['peak_mib'] / before[1]:>6.1f}" if before else f"{'':>6}"
            print(f"{shape:<6}{n:>8} " + "".join(f"{r['seconds'][c]:>9.2f}" if c in r["seconds"] else f"{'-':>9}"
                                                  for c in columns)
                  + f"{total:>9.2f}{growth}{r['peak_mib']:>10.0f}{mgrowth}", flush=True)
            before = (total, r["peak_mib"])


if __name__ == "__main__":
    main()
