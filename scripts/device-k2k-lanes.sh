#!/bin/bash
# Issue 14's throughput (>= 100 M msg/s device only through the 4-stage
# chain) with the lanes of src/device/cuda/channel_lanes.cu, on the GPU
# machine, in one call of at most ~3 minutes: `rk bench k2k` of a baseline
# build (session 13's lanes, b2f60c2) beside this branch at 15 warps a stage
# (the lanes by default there), at 8 warps with the turns (the default) and
# with the lanes (RK_CUDA_K2K_LANES=1), and at one warp; the branch's tests
# at 15 warps a stage with the defaults (LANES_TEST_BITS to set
# RK_CUDA_K2K_LANES): the chain, test_k2k_stream with 10 M messages,
# errors, terminate, loop, the relay into CUDA, the conformance suite's
# channel checks (all sharing one module cache, so each handler compiles
# once); then, if time is left, one run of the RK_LANES_PROFILE measurement
# build (RK_CUDA_RING_DEFINES; cycles a lanes pass spends where, per stage:
# "lanes-prof" lines, the device-only burst's stages are in=7, 8, 9).
#   (here)   git archive b2f60c2 | tar -x -C /tmp/s13src
#            cmake -S /tmp/s13src -B build-s13 -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-s13 rk
#            cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-rel rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate \
#                test_k2k_errors test_k2k_relay
#   (device) scripts/device-k2k-lanes.sh [NEW_DIR [BASE_DIR]]   carry: build-rel build-s13
# A "block of 16 warps" is 15 workers and the control warp: the most that
# keep 128 registers a thread (cuda_ring_layout.h, RK_CUDA_MAX_ORDERED_WARPS).
# RK_CUDA_K2K_LANES: 1 the lanes from 2 ordered warps on, 0 never; unset:
# above 8 ordered warps (cuda_ring_layout.h).
# Success: every test exits 0; the lanes15 rows show "device only" >= 100 M
# msg/s (issue 14; session 13: 73.2-74.2 M, session 14's lanes-2: 82-84 M);
# turns8 and one1 keep main's figures (their kernels are main's cubins).
# LANES_BUDGET_S (default 150): steps not started by then are skipped.
set -u
unset RK_CUDA_K2K_LANES RK_CUDA_ORDERED_WARPS RK_CUDA_RING_DEFINES
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
ab ab1.txt s13-b1="$base",$w15,RK_CUDA_K2K_LANES=1 lanes15="$new",$w15 s13-b1="$base",$w15,RK_CUDA_K2K_LANES=1 \
    lanes15="$new",$w15 turns8="$new",RK_CUDA_ORDERED_WARPS=8 lanes8="$new",RK_CUDA_ORDERED_WARPS=8,RK_CUDA_K2K_LANES=1 \
    one1="$new" lanes15="$new",$w15
export RK_CUDA_ORDERED_WARPS=15
[ -n "${LANES_TEST_BITS:-}" ] && export RK_CUDA_K2K_LANES=$LANES_TEST_BITS
echo "=== tests at 15 warps, RK_CUDA_K2K_LANES=${RK_CUDA_K2K_LANES:-unset} ($SECONDS s)"
t="$new/tests/k2k"
run "chain, 15 warps" 30 "$t/test_k2k_chain" cuda
run "stream 10 M, 15 warps" 30 "$t/test_k2k_stream" cuda 10000000
run "errors, 15 warps" 30 "$t/test_k2k_errors" cuda
run "terminate, 15 warps" 30 "$t/test_k2k_terminate" cuda
run "loop, 15 warps" 20 "$t/test_k2k_loop" cuda
run "relay to cuda, 15 warps" 20 "$t/test_k2k_relay" to cuda
RUN_TAIL=14 run "conformance channel checks, 15 warps" 45 env LD_LIBRARY_PATH="$new" "$new/tools/rk/rk" \
    conformance --backend cuda --check channel --timeout 20
# Where a lanes pass's cycles go, per stage (printed by each kernel as it ends).
RUN_TAIL=14 run "profile, 15 warps" 30 env RK_CUDA_RING_DEFINES=RK_LANES_PROFILE LD_LIBRARY_PATH="$new" \
    sh -c "$new/tools/rk/rk bench k2k --backend cuda --messages 1000000 > $out_dir/prof.txt 2>&1; \
    rc=\$?; grep -E 'lanes-prof in=[789] |device only  ' $out_dir/prof.txt | cut -c1-330; exit \$rc"
echo "=== done ($SECONDS s)"
