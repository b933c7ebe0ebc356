#!/bin/bash
# Issue 14's throughput (>= 100 M msg/s device only through the 4-stage
# chain) with the lanes of src/device/cuda/channel_lanes.cu, on the GPU
# machine, in one call of at most ~3 minutes: gates (the chain test at 8
# and 15 warps a stage), then `rk bench k2k` of main's build beside this
# branch at 1, 8 and 15 warps (and the branch with the lanes off,
# RK_CUDA_K2K_LANES=0, the turn path it keeps), then the branch's tests at
# 15 warps: the chain, test_k2k_stream with 10 M messages, ctest's CUDA
# k2k tests, the conformance suite's channel checks, test_k2k_nvrtc.
#   (here)   git archive <main> | tar -x -C build-base-src
#            cmake -S build-base-src -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-base rk
#            cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-rel rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate \
#                test_k2k_errors test_k2k_relay test_k2k_nvrtc
#   (device) scripts/device-k2k-lanes.sh [BASE_DIR [NEW_DIR]]   carry: build-base build-rel
# A "block of 16 warps" is 15 workers and the control warp: the most that
# keep 128 registers a thread (cuda_ring_layout.h, RK_CUDA_MAX_ORDERED_WARPS).
# Success: the gates and every test pass; the summary's lanes15 (or lanes8)
# row shows "device only" >= 100 M msg/s, and lanes1's per hop p50 stays
# with base1's lean figure (~1.0-1.1 us) from the same card.
# LANES_BUDGET_S (default 175): steps not started by then are skipped.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
base=${1:-build-base}
new=${2:-build-rel}
budget=${LANES_BUDGET_S:-175}
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null
echo "=== commit $(git log --oneline -1 2>/dev/null)"
run() { # run LABEL LIMIT COMMAND...
    local label=$1 limit=$2
    shift 2
    if [ "$SECONDS" -gt "$budget" ]; then
        echo "=== $label: skipped (budget)"
        return
    fi
    echo "=== $label: $* ($SECONDS s)"
    timeout -k 5 "$limit" "$@" 2>&1 | tail -"${RUN_TAIL:-4}"
    echo "=== $label: exit ${PIPESTATUS[0]}"
}
gate() { # gate WARPS: the chain test of the new build at that many warps a stage
    echo "=== gate: chain, $1 warps ($SECONDS s)"
    RK_CUDA_ORDERED_WARPS=$1 timeout -k 5 30 "$new/tests/k2k/test_k2k_chain" cuda 2>&1 | tail -4
    local rc=${PIPESTATUS[0]}
    echo "=== gate: chain, $1 warps: exit $rc"
    return "$rc"
}
gate 8 && g8=1 || g8=0
gate 15 && g15=1 || g15=0
# The lanes' rows only where their gate passed (a hang costs the whole limit).
lanes8=() lanes15=()
[ "$g8" = 1 ] && lanes8=(lanes8="$new",RK_CUDA_ORDERED_WARPS=8)
[ "$g15" = 1 ] && lanes15=(lanes15="$new",RK_CUDA_ORDERED_WARPS=15)
K2K_BENCH_LIMIT_S=${K2K_BENCH_LIMIT_S:-25} scripts/device-k2k-ab.sh \
    base1="$base" lanes1="$new" \
    base8="$base",RK_CUDA_ORDERED_WARPS=8 "${lanes8[@]}" "${lanes15[@]}" \
    turns8="$new",RK_CUDA_ORDERED_WARPS=8,RK_CUDA_K2K_LANES=0 turns15="$new",RK_CUDA_ORDERED_WARPS=15,RK_CUDA_K2K_LANES=0 \
    "${lanes8[@]}" "${lanes15[@]}" base1="$base" lanes1="$new"
export RK_CUDA_ORDERED_WARPS=15
run "stream 10 M, 15 warps" 40 "$new/tests/k2k/test_k2k_stream" cuda 10000000
RUN_TAIL=16 run "conformance channel checks, 15 warps" 50 env LD_LIBRARY_PATH="$new" "$new/tools/rk/rk" \
    conformance --backend cuda --check channel --timeout 20
RUN_TAIL=12 run "test_k2k_nvrtc" 60 "$new/tests/k2k/test_k2k_nvrtc"
if [ "$SECONDS" -le "$budget" ]; then
    echo "=== ctest -L cuda -R k2k -E nvrtc, 15 warps ($new, $SECONDS s)"
    (cd "$new" && timeout -k 5 ${K2K_CTEST_LIMIT_S:-70} ctest -L cuda -R k2k -E 'nvrtc|stream' --timeout 30 \
        --output-on-failure 2>&1 | tail -30)
fi
echo "=== done ($SECONDS s)"
