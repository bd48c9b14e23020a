#!/usr/bin/env bash
# The JAX back end on a GPU next to the native filter on one CPU core, for the random walk
# (benchmarks/models/walk, -m pf) at N = 10^3 .. 10^7: one table (benchmarks/jax_sweep.py).
#
#   bash benchmarks/gpu.sh [WHEELS]          # from anywhere; WHEELS also from the environment
#
# For a machine with JAX (CUDA), numpy, llvmlite, scikit-build-core, CMake, a C compiler and
# Python 3.12 but no network. sirenc is installed from this checkout into $PYTHON's environment
# (editable, no build isolation: nothing is fetched); what it needs beyond that machine's
# packages -- xdsl 0.75 with immutabledict and ordered-set, cffi, pycparser; scikit-build-core
# and llvmlite 0.50 where the machine lacks them -- comes from the wheel folder WHEELS (default
# .whl, which git ignores). Make it on a machine with a network:
#
#   pip download --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux2014_x86_64 -d .whl "xdsl==0.75.0" cffi pycparser
#   pip download --no-deps -d .whl "scikit-build-core>=0.10" pathspec    # if the machine lacks it
#
# Settings (environment): PYTHON (python3), PARTICLES (1000,...,10000000), MODELS (walk),
# REPEAT (3), NATIVE_MAX (10000000: the native filter's largest N; above it the table carries
# the largest measured N's cost, marked "*"), FLOAT32 (1: single precision on the GPU too, a
# second table). On an H200 machine with 16 cores the whole script took about 3 minutes: up
# to a minute for the install, another for the native's one run at N = 10^7 (54 ns per
# particle-step). NATIVE_MAX=1000000 leaves that run out.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
WHEELS=${1:-${WHEELS:-.whl}}
PARTICLES=${PARTICLES:-1000,10000,100000,1000000,10000000}
MODELS=${MODELS:-walk}
REPEAT=${REPEAT:-3}
NATIVE_MAX=${NATIVE_MAX:-10000000}
step() { printf '\n== %s\n' "$*"; }

step "python: $(command -v "$PYTHON") ($("$PYTHON" --version 2>&1)); wheels from $WHEELS"
[ -d "$WHEELS" ] || { echo "no wheel folder $WHEELS (see the top of $0)" >&2; exit 2; }
# From the wheels only what is missing (pip leaves what is there alone). llvmlite: the version
# sirenc pins (pyproject.toml) where the folder has it (a 60 MB wheel), else the machine's.
REQS=("xdsl==0.75.*" cffi pycparser "scikit-build-core>=0.10")
if ls "$WHEELS"/llvmlite-0.50.* >/dev/null 2>&1; then
    REQS+=("llvmlite~=0.50.0")
elif ! "$PYTHON" -c 'import llvmlite, sys; sys.exit(not llvmlite.__version__.startswith("0.50."))'; then
    echo "note: llvmlite $("$PYTHON" -c 'import llvmlite; print(llvmlite.__version__)'), not the 0.50 sirenc pins"
fi
step "pip install --no-index --find-links $WHEELS: whichever of ${REQS[*]} is missing"
"$PYTHON" -m pip install -q --no-index --find-links "$WHEELS" "${REQS[@]}"
step "pip install sirenc from $(pwd) (editable: CMake builds the C runtime)"
"$PYTHON" -m pip install -q --no-deps --no-build-isolation -e .

step "device"
"$PYTHON" -c 'import jax; print(jax.devices()); print("default backend:", jax.default_backend())'
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
fi

step "sweep: $MODELS at N = $PARTICLES, native up to $NATIVE_MAX"
"$PYTHON" benchmarks/run.py --backend jax --particles "$PARTICLES" --models "$MODELS" --repeat "$REPEAT" \
    --native-max "$NATIVE_MAX" --extrapolate
if [ "${FLOAT32:-0}" = 1 ]; then
    step "the same in float32 on the JAX side (native columns not run again)"
    "$PYTHON" benchmarks/run.py --backend jax --particles "$PARTICLES" --models "$MODELS" --repeat "$REPEAT" \
        --float32 --native-max 0
fi
