#!/bin/bash
# Issue 14's throughput (>= 100 M msg/s device only through the 4-stage
# chain) with the lanes of src/device/cuda/channel_lanes.cu, on the GPU
# machine, in one call of at most ~3 minutes: `rk bench k2k` of a baseline
# build (session 13's lanes, b2f60c2) beside this branch at 15 warps a stage
# with each RK_CUDA_K2K_LANES setting under test; the branch's tests at 15
# warps a stage with the best of them (LANES_TEST_BITS to choose): the
# chain, test_k2k_stream with 10 M messages, errors, terminate, loop, the
# relay into CUDA, the conformance suite's channel checks (all sharing one
# module cache, so each handler compiles once); 8 warps a stage with the
# turns only against the lanes (latency where they would be the default);
# one run of the RK_LANES_PROFILE measurement build (cycles a lanes pass
# spends where, per stage; "lanes-prof" lines).
#   (here)   git archive b2f60c2 | tar -x -C /tmp/s13src
#            cmake -S /tmp/s13src -B build-s13 -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-s13 rk
#            cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-rel rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate \
#                test_k2k_errors test_k2k_relay
#   (device) scripts/device-k2k-lanes.sh [NEW_DIR [BASE_DIR]]   carry: build-rel build-s13
# A "block of 16 warps" is 15 workers and the control warp: the most that
# keep 128 registers a thread (cuda_ring_layout.h, RK_CUDA_MAX_ORDERED_WARPS).
# Bits of RK_CUDA_K2K_LANES: 1 lanes, 64 a lanes pass's emits are buffered in shared memory and the
# warp writes them a few slots an instruction, 128 a warp acquires what the
# lanes' entry wrote once instead of a fence every pass, 256 the publish
# turn by ld.acquire / st.release instead of fences, 512 (with 64) the
# input staged without bank conflicts and the emits buffered in its place.
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
    b65="$new",$w15,RK_CUDA_K2K_LANES=65 b577="$new",$w15,RK_CUDA_K2K_LANES=577 b193="$new",$w15,RK_CUDA_K2K_LANES=193 \
    b321="$new",$w15,RK_CUDA_K2K_LANES=321 b961="$new",$w15,RK_CUDA_K2K_LANES=961 s13-b1="$base",$w15,RK_CUDA_K2K_LANES=1 \
    b961="$new",$w15,RK_CUDA_K2K_LANES=961 b577="$new",$w15,RK_CUDA_K2K_LANES=577 b65="$new",$w15,RK_CUDA_K2K_LANES=65 \
    b449="$new",$w15,RK_CUDA_K2K_LANES=449
# The tests with the bits whose best device-only row is highest (rc 0).
best=$(awk '$1 ~ /^b[0-9]+$/ && $2 == "rc=0" { for (i = 1; i < NF; i++) if ($i == "only") { v = $(i + 1); sub(/M/, "", v); if (v + 0 > top) { top = v + 0; b = substr($1, 2) } } } END { print b ? b : 1 }' "$out_dir/ab1.txt")
test_bits=${LANES_TEST_BITS:-$best}
export RK_CUDA_ORDERED_WARPS=15 RK_CUDA_K2K_LANES=$test_bits
echo "=== tests with RK_CUDA_K2K_LANES=$test_bits ($SECONDS s)"
t="$new/tests/k2k"
run "chain, 15 warps" 30 "$t/test_k2k_chain" cuda
run "stream 10 M, 15 warps" 30 "$t/test_k2k_stream" cuda 10000000
run "errors, 15 warps" 30 "$t/test_k2k_errors" cuda
run "terminate, 15 warps" 30 "$t/test_k2k_terminate" cuda
run "loop, 15 warps" 20 "$t/test_k2k_loop" cuda
run "relay to cuda, 15 warps" 20 "$t/test_k2k_relay" to cuda
RUN_TAIL=14 run "conformance channel checks, 15 warps" 45 env LD_LIBRARY_PATH="$new" "$new/tools/rk/rk" \
    conformance --backend cuda --check channel --timeout 20
unset RK_CUDA_ORDERED_WARPS RK_CUDA_K2K_LANES
# Latency where the lanes would be the default: 8 warps a stage, turns only against lanes (no emit buffer at 8).
echo "=== A/B 2 ($SECONDS s)"
[ "$SECONDS" -lt "$budget" ] && ab ab2.txt turns8="$base",RK_CUDA_ORDERED_WARPS=8,RK_CUDA_K2K_LANES=0 \
    lanes8="$new",RK_CUDA_ORDERED_WARPS=8,RK_CUDA_K2K_LANES=$test_bits turns8="$base",RK_CUDA_ORDERED_WARPS=8,RK_CUDA_K2K_LANES=0 \
    lanes8="$new",RK_CUDA_ORDERED_WARPS=8,RK_CUDA_K2K_LANES=$test_bits
# Where a lanes pass's cycles go, per stage (printed by each kernel as it ends).
RUN_TAIL=14 run "profile, bits $test_bits" 30 env RK_CUDA_RING_DEFINES=RK_LANES_PROFILE RK_CUDA_K2K_LANES=$test_bits $w15 \
    LD_LIBRARY_PATH="$new" sh -c "$new/tools/rk/rk bench k2k --backend cuda --messages 1000000 > $out_dir/prof.txt 2>&1; \
    rc=\$?; grep -E 'lanes-prof in=[789] |device only  ' $out_dir/prof.txt | cut -c1-330; exit \$rc"
echo "=== done ($SECONDS s)"
