#!/bin/bash
# K2K channels on the GPU machine (issue 14), in one call (about 4 minutes;
# every step has its own limit, so a hang costs that step only):
#  1. the K2K tests on the cuda backend (chain, a kernel looping through its
#     own channel, terminate, errors, the host relay to and from cuda, a 2 M
#     message stream) and the conformance suite's channel.* checks on cuda
#     (fan-out, fan-in, HOLD and REPORT backpressure, a cycle);
#  2. `rk bench k2k --backend cuda`: the 4-stage chain over channels and, in
#     the same run, the same chain relayed by the host, with the ratio; then
#     two parked bursts (the hops' own rate: with the host receiving every
#     reply, and checked by the sink on the device); then the benchmark, the
#     conformance channel checks and the 2 M stream again with eight warps a
#     stage (RK_CUDA_ORDERED_WARPS=8: per-channel order kept across warps);
#  3. compute-sanitizer memcheck and racecheck on the loop test: one kernel
#     looping through its own channel (emit, poll, channel replies, the close
#     handshake). compute-sanitizer runs kernels one at a time, so a second
#     persistent kernel never starts beside the first: the 4-kernel chain
#     cannot run under it (session 11: it stalled at the second kernel);
#  4. a summary: every step's verdict and the benchmark's rows.
#
#   (here)   cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-dev rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate \
#                test_k2k_errors test_k2k_relay
#   (device) scripts/device-k2k.sh build-dev          carry: build-dev
#
# Without a carried build it configures and builds BUILD_DIR (default
# build-k2k) there. Output: stdout, and when $OUT is set also
# $OUT/k2k-summary.log and $OUT/k2k-<step>.log per step. K2K_BUDGET_S
# (default 330) is the whole script's time: the sanitizer steps shrink or
# skip to fit it (the chain's first).
# scripts/device-check-all.sh calls it with its carried build.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-k2k}
case $build in /*) ;; *) build=$root/$build ;; esac
out=${OUT:-}
logs=${out:-$(mktemp -d)}
[ -n "$out" ] && mkdir -p "$out" && exec > >(tee -a "$out/k2k-summary.log") 2>&1
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
failed=0
verdicts=()
sanitizer_messages=${K2K_SANITIZER_MESSAGES:-8}
budget=${K2K_BUDGET_S:-330}

step() { # step NAME LIMIT COMMAND...
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS log=$logs/k2k-$name.log
    echo "=== $name: $*"
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local verdict=ok
    [ $rc -eq 77 ] && verdict=skipped
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && verdict="FAILED (no end within $limit s)"
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && verdict="FAILED (exit $rc)"
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && failed=1
    echo "=== $name: $verdict in $((SECONDS - t0)) s"
    verdicts+=("$(printf '%-22s %s (%d s)' "$name" "$verdict" $((SECONDS - t0)))")
}

date -u
echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1
# Binaries and CTest files name the development machine's source path.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"
fi
targets=(rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate test_k2k_errors test_k2k_relay)
missing=0
for t in test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate test_k2k_errors test_k2k_relay; do
    [ -x "$build/tests/k2k/$t" ] || missing=1
done
[ -x "$build/tools/rk/rk" ] || missing=1
if [ $missing -eq 1 ]; then
    [ -f "$build/build.ninja" ] || step configure 60 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
    step build 150 cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
fi
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
k2k=$build/tests/k2k
rk=$build/tools/rk/rk

# Most telling first: a cut-off run keeps what it had. The chain test also
# warms the module cache (NVRTC) for the handlers the others use.
step chain-cuda 40 "$k2k/test_k2k_chain" cuda
step loop-cuda 30 "$k2k/test_k2k_loop" cuda
# Per-hop latency p50/p99 and throughput, channels and host relay in one run.
step bench-k2k 90 "$rk" bench k2k --backend cuda --messages 1000000
step conformance-channels 90 "$rk" conformance --backend cuda --check channel --timeout 30 --verbose
step terminate-cuda 30 "$k2k/test_k2k_terminate" cuda
step errors-cuda 30 "$k2k/test_k2k_errors" cuda
step relay-to-cuda 30 "$k2k/test_k2k_relay" to cuda
step relay-from-cuda 30 "$k2k/test_k2k_relay" from cuda
step stream-cuda 40 "$k2k/test_k2k_stream" cuda 2000000
# Eight worker warps a stage (docs/channels.md): the same order, more throughput.
step bench-k2k-w8 90 env RK_CUDA_ORDERED_WARPS=8 "$rk" bench k2k --backend cuda --messages 1000000
step conformance-channels-w8 90 env RK_CUDA_ORDERED_WARPS=8 "$rk" conformance --backend cuda --check channel --timeout 30
step stream-cuda-w8 40 env RK_CUDA_ORDERED_WARPS=8 "$k2k/test_k2k_stream" cuda 2000000

# compute-sanitizer: one kernel looping through its own channel (emit, poll,
# channel replies, the close handshake: the whole device side with no second
# kernel beside it; the tool runs kernels one at a time, so the chain's four
# cannot run under it). Instrumented kernels are slow: the ring watchdog and
# the tests' waits are widened, idle warps nap, and each step of the test is
# printed with its time (RK_K2K_PROGRESS). API errors
# are not reported: the launch path probes cuFuncGetParamInfo one parameter
# past the last on purpose (docs/cuda.md), which memcheck would count as an
# error though no device access is wrong; a device error still gives exit 9.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null || true)
if [ -n "$sanitizer" ]; then
    export RK_CUDA_WATCHDOG_MS=600000 RK_K2K_TIME_SCALE=3 RK_CUDA_IDLE_NAP_NS=20000 RK_K2K_PROGRESS=1
    "$sanitizer" --version 2>&1 | tail -1
    api=()
    "$sanitizer" --help 2>&1 | grep -q -- --report-api-errors && api=(--report-api-errors no)
    for run in memcheck:loop racecheck:loop; do
        tool=${run%%:*} t=${run#*:}
        limit=$((budget - SECONDS))
        [ $limit -gt 120 ] && limit=120
        if [ $limit -lt 20 ]; then
            echo "=== $tool-$t: skipped (the script's $budget s budget is spent)"
            verdicts+=("$(printf '%-22s skipped (budget spent)' "$tool-$t")")
            continue
        fi
        step "$tool-$t" $limit "$sanitizer" --tool "$tool" --error-exitcode 9 "${api[@]}" \
            "$k2k/test_k2k_$t" cuda "$sanitizer_messages"
    done
    unset RK_CUDA_WATCHDOG_MS RK_K2K_TIME_SCALE RK_CUDA_IDLE_NAP_NS RK_K2K_PROGRESS
else
    echo "=== sanitizers: skipped (no compute-sanitizer on PATH)"
    verdicts+=("sanitizers             skipped (no compute-sanitizer)")
fi

echo
echo "=== summary ($((SECONDS)) s)"
for v in "${verdicts[@]}"; do echo "  $v"; done
for w in "" -w8; do
    [ -f "$logs/k2k-bench-k2k$w.log" ] || continue
    echo "  benchmark rows${w:+ (8 warps a stage)} (targets: per hop p50 <= 1 us, >= 100 M msg/s device only):"
    grep -E '^(group|k2k)[ /]' "$logs/k2k-bench-k2k$w.log" | sed 's/^/    /'
done
echo "device-k2k: $([ $failed -eq 0 ] && echo 'all steps ok or skipped' || echo 'SOME STEPS FAILED')"
exit $failed
