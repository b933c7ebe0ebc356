#!/bin/bash
# Issue 14's throughput (>= 100 M msg/s device only through the 4-stage
# chain) with the lanes of src/device/cuda/channel_lanes.cu, on the GPU
# machine, in one call of at most ~3 minutes: `rk bench k2k` of a baseline
# build (session 13's lanes, b2f60c2) beside this branch at 15 warps a stage
# with each RK_CUDA_K2K_LANES setting under test, then two runs with the
# RK_LANES_PROFILE measurement build (cycles a lanes pass spends where, per
# stage; "lanes-prof" lines), then the branch's tests at 15 warps a stage
# with LANES_TEST_BITS: the chain, test_k2k_stream with 10 M messages,
# errors, terminate, loop, the relay into CUDA, the conformance suite's
# channel checks (all sharing one module cache, so each handler compiles
# once).
#   (here)   git archive b2f60c2 | tar -x -C /tmp/s13src
#            cmake -S /tmp/s13src -B build-s13 -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-s13 rk
#            cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-rel rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate \
#                test_k2k_errors test_k2k_relay
#   (device) scripts/device-k2k-lanes.sh [NEW_DIR [BASE_DIR]]   carry: build-rel build-s13
# A "block of 16 warps" is 15 workers and the control warp: the most that
# keep 128 registers a thread (cuda_ring_layout.h, RK_CUDA_MAX_ORDERED_WARPS).
# Bits of RK_CUDA_K2K_LANES: 1 lanes, 2 whole-chunk polls, 4 a partial chunk
# polled again, 8 the window snaps, 16 a pass with no reply posts itself for
# the publish turn's holder and goes on (no wait), 32 the publish turn is
# waited for in short naps, 64 a lanes pass's emits are buffered in shared
# memory and the warp writes them a few slots an instruction.
# Success: every test exits 0; the summary's best lanes15 row shows "device
# only" >= 100 M msg/s (issue 14; session 13: 73.2-74.0 M).
# LANES_BUDGET_S (default 150): steps not started by then are skipped.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
new=${1:-build-rel}
base=${2:-build-s13}
budget=${LANES_BUDGET_S:-150}
out_dir=${OUT:-/tmp/k2k-lanes-out}
mkdir -p "$out_dir"
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
    # Never past the call's hard limit (LANES_HARD_S, default 172 s).
    local left=$((${LANES_HARD_S:-172} - SECONDS))
    [ "$left" -lt "$limit" ] && limit=$left
    echo "=== $label: $* ($SECONDS s, limit $limit s)"
    timeout -k 2 "$limit" "$@" 2>&1 | tail -"${RUN_TAIL:-3}"
    echo "=== $label: exit ${PIPESTATUS[0]}"
}
w15=RK_CUDA_ORDERED_WARPS=15
ab() { # ab FILE VARIANT...: device-k2k-ab.sh, its summary here, everything in $out_dir/FILE
    local file=$1
    shift
    K2K_BENCH_LIMIT_S=${K2K_BENCH_LIMIT_S:-25} scripts/device-k2k-ab.sh "$@" > "$out_dir/$file" 2>&1
    grep -A20 'A/B summary' "$out_dir/$file" | grep -v '^=== k2k'
}
echo "=== A/B 1 ($SECONDS s)"
ab ab1.txt s13-b1="$base",$w15,RK_CUDA_K2K_LANES=1 b1="$new",$w15,RK_CUDA_K2K_LANES=1 \
    b17="$new",$w15,RK_CUDA_K2K_LANES=17 b65="$new",$w15,RK_CUDA_K2K_LANES=65 b33="$new",$w15,RK_CUDA_K2K_LANES=33
# The post (16) and gather (64) bits further only where they ran (a stall would eat the budget).
ran() { grep -Eq "^  $1 +rc=0 " "$out_dir/ab1.txt"; }
post_ok=0 gather_ok=0
ran b17 && post_ok=1
ran b65 && gather_ok=1
best=1
[ $post_ok = 1 ] && best=17
[ $gather_ok = 1 ] && best=65
[ $post_ok = 1 ] && [ $gather_ok = 1 ] && best=81
echo "=== A/B 2 ($SECONDS s, post ran: $post_ok, gather ran: $gather_ok)"
more=()
[ $best = 81 ] && more=(b81="$new",$w15,RK_CUDA_K2K_LANES=81)
# lf2: two host-queue loads in flight a lane, not four (ptxas spills less at 15 warps: 8 bytes against 40).
ab ab2.txt "${more[@]}" s13-b1="$base",$w15,RK_CUDA_K2K_LANES=1 b$best="$new",$w15,RK_CUDA_K2K_LANES=$best \
    b1="$new",$w15,RK_CUDA_K2K_LANES=1 lf2-b$best="$new",$w15,RK_CUDA_K2K_LANES=$best,RK_CUDA_RING_DEFINES=RK_LOADS_IN_FLIGHT=2
# Where a lanes pass's cycles go, per stage (printed by each kernel as it ends).
for bits in 1 $best; do
    RUN_TAIL=14 run "profile, bits $bits" 30 env RK_CUDA_RING_DEFINES=RK_LANES_PROFILE RK_CUDA_K2K_LANES=$bits $w15 \
        LD_LIBRARY_PATH="$new" sh -c "$new/tools/rk/rk bench k2k --backend cuda --messages 1000000 > $out_dir/prof-$bits.txt 2>&1; \
        rc=\$?; grep -E 'lanes-prof|device only  ' $out_dir/prof-$bits.txt | cut -c1-330; exit \$rc"
    [ $best = 1 ] && break
done
test_bits=${LANES_TEST_BITS:-$best}
export RK_CUDA_ORDERED_WARPS=15 RK_CUDA_K2K_LANES=$test_bits
echo "=== tests with RK_CUDA_K2K_LANES=$test_bits"
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
