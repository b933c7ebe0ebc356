#!/bin/bash
# Issue 14's throughput (>= 100 M msg/s device only through the 4-stage
# chain) with the lanes of src/device/cuda/channel_lanes.cu, on the GPU
# machine, in one call of at most ~2.5 minutes: `rk bench k2k` of main's
# build beside this branch at 1 and 15 warps a stage (main at 8, its best),
# the branch's lanes with each RK_CUDA_K2K_LANES setting, then the branch's
# tests at 15 warps a stage: the chain, test_k2k_stream with 10 M messages,
# errors, terminate, loop, the relay into CUDA, the conformance suite's
# channel checks (all sharing one module cache, so each handler compiles
# once).
#   (here)   git archive <main> | tar -x -C build-base-src
#            cmake -S build-base-src -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-base rk
#            cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-rel rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate \
#                test_k2k_errors test_k2k_relay
#   (device) scripts/device-k2k-lanes.sh [BASE_DIR [NEW_DIR]]   carry: build-base build-rel
# A "block of 16 warps" is 15 workers and the control warp: the most that
# keep 128 registers a thread (cuda_ring_layout.h, RK_CUDA_MAX_ORDERED_WARPS).
# The lanes are off unless RK_CUDA_K2K_LANES is set (default 0 since
# lanes-2 stalled; then every kernel compiles to main's cubin byte for
# byte); one warp a stage never has them, so lanes1 and base1 agree.
# Success: every test exits 0 (with the lanes on); the summary's lanes15 rows
# show "device only" >= 100 M msg/s (issue 14; lanes-1: 68 M), and lanes1's per
# hop p50 stays with base1's.
# LANES_BUDGET_S (default 135): steps not started by then are skipped.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
base=${1:-build-base}
new=${2:-build-rel}
budget=${LANES_BUDGET_S:-135}
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
    # Never past the call's hard limit (LANES_HARD_S, default 145 s).
    local left=$((${LANES_HARD_S:-145} - SECONDS))
    [ "$left" -lt "$limit" ] && limit=$left
    echo "=== $label: $* ($SECONDS s, limit $limit s)"
    timeout -k 2 "$limit" "$@" 2>&1 | tail -"${RUN_TAIL:-3}"
    echo "=== $label: exit ${PIPESTATUS[0]}"
}
# Bits of RK_CUDA_K2K_LANES: 1 lanes, 2 whole-chunk polls, 4 a partial chunk polled again, 8 the window
# snaps between a few slots (empty) and the whole chunk (found) (default 0: off). The tests below run
# with LANES_TEST_BITS (default 1).
export RK_CUDA_K2K_LANES=${LANES_TEST_BITS:-1}
K2K_BENCH_LIMIT_S=${K2K_BENCH_LIMIT_S:-25} scripts/device-k2k-ab.sh \
    base1="$base" lanes1="$new" base8="$base",RK_CUDA_ORDERED_WARPS=8 \
    lanes15-b7="$new",RK_CUDA_ORDERED_WARPS=15,RK_CUDA_K2K_LANES=7 lanes15-b1="$new",RK_CUDA_ORDERED_WARPS=15,RK_CUDA_K2K_LANES=1 \
    lanes15-b3="$new",RK_CUDA_ORDERED_WARPS=15,RK_CUDA_K2K_LANES=3 \
    lanes15-b5="$new",RK_CUDA_ORDERED_WARPS=15,RK_CUDA_K2K_LANES=5 \
    lanes15-b9="$new",RK_CUDA_ORDERED_WARPS=15,RK_CUDA_K2K_LANES=9 \
    lanes15-b13="$new",RK_CUDA_ORDERED_WARPS=15,RK_CUDA_K2K_LANES=13 \
    lanes15-b1="$new",RK_CUDA_ORDERED_WARPS=15,RK_CUDA_K2K_LANES=1 base1="$base" lanes1="$new"
export RK_CUDA_ORDERED_WARPS=15
t="$new/tests/k2k"
run "chain, 15 warps" 30 "$t/test_k2k_chain" cuda
run "stream 10 M, 15 warps" 30 "$t/test_k2k_stream" cuda 10000000
run "errors, 15 warps" 30 "$t/test_k2k_errors" cuda
run "terminate, 15 warps" 30 "$t/test_k2k_terminate" cuda
run "loop, 15 warps" 20 "$t/test_k2k_loop" cuda
run "relay to cuda, 15 warps" 20 "$t/test_k2k_relay" to cuda
RUN_TAIL=14 run "conformance channel checks, 15 warps" 45 env LD_LIBRARY_PATH="$new" "$new/tools/rk/rk" \
    conformance --backend cuda --check channel --timeout 20
echo "=== done ($SECONDS s)"
