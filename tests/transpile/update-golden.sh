#!/bin/sh
# Rewrites tests/transpile/golden/*.cu from the current transpiler. Review the
# diff (git diff tests/transpile/golden) before committing.
#   tests/transpile/update-golden.sh [BUILD_DIR]    (default: build)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
ninja -C "$build" transpile_golden
RK_UPDATE_GOLDEN=1 "$build/tests/transpile/transpile_golden"
# The MSL goldens (tests/transpile/golden/*.metal) are written by the MSL compile check.
if [ -x "$build/tests/metal/metal_msl_compile" ] || ninja -C "$build" metal_msl_compile; then
    RK_UPDATE_GOLDEN=1 "$build/tests/metal/metal_msl_compile"
fi
