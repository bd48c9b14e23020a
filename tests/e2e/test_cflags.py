"""``sirenc --cflags`` and README's one-line build of a C host (issue 12, item 6): the line is
taken from README.md and run, against a tiny host, in a temporary folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from markers import needs_runtime, needs_tools

ROOT = Path(__file__).resolve().parents[2]

HOST = r"""
#include <dlfcn.h>
#include <stdio.h>
#include "sirenrt.h"

int main(int argc, char **argv) {
  (void)argc;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 2;
  const sirenrt_model *(*info)(void) = (const sirenrt_model *(*)(void))dlsym(lib, "sirenc_info");
  sirenrt_filter *(*new_filter)(int64_t, uint64_t, const sirenrt_options *) =
      (sirenrt_filter * (*)(int64_t, uint64_t, const sirenrt_options *)) dlsym(lib, "sirenc_new");
  int32_t (*run)(sirenrt_filter *, const double *, int64_t, int64_t) =
      (int32_t(*)(sirenrt_filter *, const double *, int64_t, int64_t))dlsym(lib, "sirenc_run");
  int32_t (*estimate)(sirenrt_filter *, double *, int64_t, int64_t *) =
      (int32_t(*)(sirenrt_filter *, double *, int64_t, int64_t *))dlsym(lib, "sirenc_estimate");
  if (!info || !new_filter || !run || !estimate || info()->abi_version != SIRENRT_ABI_VERSION) return 3;
  sirenrt_filter *f = new_filter(4000, 1, NULL);
  double rows[] = {2.0}, out[1];
  int64_t n = 0;
  if (!f || run(f, rows, 1, 1) != 0 || estimate(f, out, 1, &n) != 0) return 4;
  printf("%s %.2f\n", info()->name, out[0]);
  return 0;
}
"""

MODEL = """\
val step = fun (row, x) ->
  let () = observe(gaussian(x, 1.), List.hd(row)) in
  let () = resample() in
  x
in
let x <- gaussian(0., 1.) in
fold(step, File.read("ys.csv"), x)
"""


def env_with_sirenc(tmp_path: Path) -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "sirenc"
    tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m sirenc "$@"\n')
    tool.chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))


@needs_runtime
def test_cflags_names_the_folder_of_the_header():
    from sirenc.runtime import include_dir

    r = subprocess.run([sys.executable, "-m", "sirenc", "--cflags"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    flag = r.stdout.strip()
    assert flag == f"-I{include_dir()}"
    assert (Path(flag[2:]) / "sirenrt.h").is_file() and (Path(flag[2:]) / "sirenrt_families.h").is_file()


@needs_runtime
@needs_tools("cc")
def test_the_readme_builds_a_c_host(tmp_path):
    readme = (ROOT / "README.md").read_text()
    lines = re.findall(r"^sirenc model\.si -o model\.so$|^cc \$\(sirenc --cflags\) host\.c .*$", readme, re.M)
    assert lines == ["sirenc model.si -o model.so", "cc $(sirenc --cflags) host.c -o host -ldl"]
    (tmp_path / "model.si").write_text(MODEL)
    (tmp_path / "ys.csv").write_text("y\n0\n")
    (tmp_path / "host.c").write_text(HOST)
    env = env_with_sirenc(tmp_path)
    for line in lines:
        r = subprocess.run(["bash", "-e", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert r.returncode == 0, f"{line}:\n{r.stderr}"
    r = subprocess.run(["./host", "./model.so"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    name, mean = r.stdout.split()
    assert name == "model" and abs(float(mean) - 1.0) < 0.1     # posterior mean 2 / 2
