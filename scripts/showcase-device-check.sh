#!/bin/bash
# The wave showcase on a GPU machine: the CUDA showcase test, a short
# non-interactive demo, and `rk bench seed-table --backend cuda --json`
# (plus its SVG chart and the CPU table of the same host). One script so it
# fits one device call; everything lands in $OUT: check.log, seed.log,
# seed-table-cuda.json, seed-table-cuda.svg, wave_00089.png (and build.log).
#
#   scripts/showcase-device-check.sh [BUILD_DIR]
#
# BUILD_DIR (default build-showcase) is built here with cmake + ninja if it
# holds no rk binary (or carry one built on the same x86-64 with CUDA 13).
# Environment: OUT (default ./showcase-check-out), STEP_TIMEOUT (seconds per
# step, default 150), SEED_ARGS (extra seed-table arguments, e.g. --quick).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-showcase}
out=${OUT:-$PWD/showcase-check-out}
mkdir -p "$out"
export RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-showcase-cache}
export CUDA_MODULE_LOADING=EAGER
failed=0

step() { # step LOG NAME COMMAND...: runs one command with a time limit, appends to LOG
    local log=$1 name=$2
    shift 2
    local start=$(date +%s%N)
    echo "=== $name: $*" >> "$out/$log"
    timeout --kill-after=10 "${STEP_TIMEOUT:-150}" "$@" >> "$out/$log" 2>&1
    local rc=$? verdict=ok
    [ $rc -eq 77 ] && verdict=skipped
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && { verdict="FAILED (exit $rc)"; failed=1; }
    echo "=== $name: $verdict in $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/$log"
    printf '%-40s %s\n' "$name" "$verdict"
}

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
    grep -m1 'model name' /proc/cpuinfo
    nproc
} > "$out/check.log" 2>&1
cat "$out/check.log"

if [ ! -x "$build/tools/rk/rk" ]; then
    step build.log "configure" cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
    step build.log "build" ninja -C "$build" rk test_showcase_wave test_showcase_nvrtc
fi
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step check.log "test_showcase_nvrtc" "$build/tests/showcase/test_showcase_nvrtc"
step check.log "test_showcase_wave cuda" "$build/tests/showcase/test_showcase_wave" cuda
step check.log "rk demo wave --backend cuda" "$build/tools/rk/rk" demo wave --backend cuda --frames 90 --no-tty \
    --png "$out/frames"
# Keep one frame (a device call returns at most 8 files).
if [ -d "$out/frames" ]; then
    cp "$out/frames/wave_00089.png" "$out/" 2>/dev/null
    rm -rf "$out/frames"
fi
step seed.log "rk bench seed-table --backend cuda" sh -c \
    "\"$build/tools/rk/rk\" bench seed-table --backend cuda --json ${SEED_ARGS:-} > \"$out/seed-table-cuda.json\""
if [ -s "$out/seed-table-cuda.json" ]; then
    step seed.log "chart" python3 "$src/scripts/seed_table_chart.py" "$out/seed-table-cuda.json" -o "$out/seed-table-cuda.svg"
fi
step seed.log "rk bench seed-table --backend cpu" "$build/tools/rk/rk" bench seed-table --backend cpu ${SEED_ARGS:-}
cat "$out/check.log" "$out/seed.log"
exit $failed
