#!/bin/bash
# Issue 14's hop latency with one warp a stage (the lean loop of
# src/device/cuda/channel_solo.cu), on the GPU machine, in one call of about
# three minutes: a gate (the 4-stage chain test with the new build), then
# `rk bench k2k` alternated between a base build and the new one at one and
# at eight warps a stage (and the new build with the lean emit on,
# RK_CUDA_K2K_SOLO=99), then tests of the new build:
# the chain and a stream with the lean emit, the conformance suite's channel
# checks, test_k2k_nvrtc of both builds, and the other CUDA K2K tests.
#   (here)   cmake -S <main's sources> -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-base rk test_k2k_nvrtc
#            cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-rel rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate \
#                test_k2k_errors test_k2k_relay test_k2k_nvrtc
#   (device) scripts/device-k2k-lean.sh [BASE_DIR [NEW_DIR [TRACE_DIR [DEV_DIR]]]]   carry: build-base build-rel
# TRACE_DIR (optional): a build of a trace branch (stamps in the bench
# message, printed as "trace" lines), run once after the first pair.
# Success: the gate and every test pass; the summary's "lean" rows show the
# per hop p50 (issue 14: <= 1 us) beside "base" from the same card.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
base=${1:-build-base}
new=${2:-build-rel}
trace=() dev=()
[ -n "${3:-}" ] && [ -x "$3/tools/rk/rk" ] && trace=(trace="$3")
# DEV_DIR (optional 4th): a candidate build, run in every round as "dev".
[ -n "${4:-}" ] && [ -x "$4/tools/rk/rk" ] && dev=(dev="$4")
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null
echo "=== commit $(git log --oneline -1 2>/dev/null)"
run() { # run LABEL LIMIT COMMAND...
    local label=$1 limit=$2
    shift 2
    echo "=== $label: $*"
    timeout -k 5 "$limit" "$@" 2>&1 | tail -${RUN_TAIL:-4}
    echo "=== $label: exit ${PIPESTATUS[0]}"
}
echo "=== gate: $new/tests/k2k/test_k2k_chain cuda"
timeout -k 5 45 "$new/tests/k2k/test_k2k_chain" cuda 2>&1 | tail -5
gate=${PIPESTATUS[0]}
echo "=== gate: exit $gate"
if [ ${#dev[@]} -gt 0 ]; then
    # The candidate runs in the rounds only if its own chain test passes.
    echo "=== gate ($4): test_k2k_chain cuda"
    timeout -k 5 45 "$4/tests/k2k/test_k2k_chain" cuda 2>&1 | tail -3
    dgate=${PIPESTATUS[0]}
    echo "=== gate ($4): exit $dgate"
    [ "$dgate" -eq 0 ] || dev=()
fi
if [ "$gate" -eq 0 ]; then
    # Three rounds of base / lean / lean with its emit (bit 64), the trace
    # build once, eight warps twice: bench runs take 1-2 s once compiled.
    K2K_BENCH_LIMIT_S=${K2K_BENCH_LIMIT_S:-30} scripts/device-k2k-ab.sh \
        base="$base" lean="$new" lean-emit="$new",RK_CUDA_K2K_SOLO=99 "${dev[@]}" "${trace[@]}" \
        base8="$base",RK_CUDA_ORDERED_WARPS=8 lean8="$new",RK_CUDA_ORDERED_WARPS=8 \
        base="$base" lean="$new" lean-emit="$new",RK_CUDA_K2K_SOLO=99 "${dev[@]}" \
        base8="$base",RK_CUDA_ORDERED_WARPS=8 lean8="$new",RK_CUDA_ORDERED_WARPS=8 \
        base="$base" lean="$new" lean-emit="$new",RK_CUDA_K2K_SOLO=99 "${dev[@]}"
else
    K2K_BENCH_LIMIT_S=30 scripts/device-k2k-ab.sh base="$base" solo="$new",RK_CUDA_K2K_SOLO=3
fi
run "chain, lean emit" 45 env RK_CUDA_K2K_SOLO=99 "$new/tests/k2k/test_k2k_chain" cuda
run "stream 2 M, lean emit" 45 env RK_CUDA_K2K_SOLO=99 "$new/tests/k2k/test_k2k_stream" cuda 2000000
RUN_TAIL=16 run "conformance channel checks, one warp" 60 env LD_LIBRARY_PATH="$new" "$new/tools/rk/rk" conformance \
    --backend cuda --check channel --timeout 20
for b in "$base" "$new"; do
    [ -x "$b/tests/k2k/test_k2k_nvrtc" ] && RUN_TAIL=12 run "test_k2k_nvrtc ($b)" 60 "$b/tests/k2k/test_k2k_nvrtc"
done
echo "=== ctest -L cuda -R k2k -E nvrtc ($new)"
(cd "$new" && timeout -k 5 ${K2K_CTEST_LIMIT_S:-80} ctest -L cuda -R k2k -E nvrtc --timeout 45 --output-on-failure 2>&1 | tail -30)
