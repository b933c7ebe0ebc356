#!/bin/bash
# K2K channels on the GPU machine (issue 14), in one call: the K2K tests on
# the cuda backend, `rk bench k2k --backend cuda` (a 4-stage chain over
# channels and, in the same run, the same chain relayed by the host, with the
# ratio; run twice, to show the spread), then compute-sanitizer memcheck and
# racecheck on one kernel looping through its own channel and on a small
# chain (32 messages each: instrumented persistent kernels are many times
# slower). About 3-5 minutes; each step has its own limit, so a hang costs
# that step only.
#
#   (device) scripts/device-k2k.sh [BUILD_DIR]   # default build-k2k, configured and built there if missing
#
# Output: everything on stdout, and when $OUT is set also there:
# $OUT/k2k-summary.log (this stdout), $OUT/k2k-<step>.log per step, and the
# second benchmark run's JSON in $OUT/k2k-bench-2.json. K2K_BUDGET_S (default
# 350) is the whole script's time: sanitizer steps shrink or skip to fit it. A Release build carried from
# the development machine (e.g. build-dev) is used as it is.
# scripts/device-check-all.sh calls it with its carried build.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-k2k}
case $build in /*) ;; *) build=$PWD/$build ;; esac
out=${OUT:-}
[ -n "$out" ] && mkdir -p "$out" && exec > >(tee -a "$out/k2k-summary.log") 2>&1
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
failed=0
sanitizer_messages=${K2K_SANITIZER_MESSAGES:-32}
budget=${K2K_BUDGET_S:-350}

step() { # step NAME LIMIT COMMAND...
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS log=/dev/null
    [ -n "$out" ] && log=$out/k2k-$name.log
    echo "=== $name: $*"
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local verdict=ok
    [ $rc -eq 77 ] && verdict=skipped
    [ $rc -eq 124 ] && verdict="FAILED (no end within $limit s)"
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ $rc -ne 124 ] && verdict="FAILED (exit $rc)"
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && failed=1
    echo "=== $name: $verdict in $((SECONDS - t0)) s"
}

date -u
echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1
if [ ! -x "$build/tests/k2k/test_k2k_chain" ] || [ ! -x "$build/tools/rk/rk" ]; then
    [ -f "$build/build.ninja" ] || step configure 60 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
    step build 150 cmake --build "$build" -j "$(nproc)" --target rk test_k2k_chain test_k2k_stream test_k2k_fan \
        test_k2k_cycle test_k2k_terminate test_k2k_errors test_k2k_relay test_k2k_loop
fi
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
k2k=$build/tests/k2k
rk=$build/tools/rk/rk

# Most telling first: a cut-off run keeps what it had. The chain test also
# warms the module cache (NVRTC) for the handlers the others use.
step chain-cuda 40 "$k2k/test_k2k_chain" cuda
# Per-hop latency p50/p99 and throughput, channels and host relay in one run.
# Expected with this design: per hop p50 ~0.5-1 us (it was 5.8-6.3); the
# streamed rate ~10-20 M msg/s, bound by the chain's source (one warp polling
# the host queue over PCIe) and the one host thread at the ends, not by the
# hops; the parked-burst row (the hops' own rate, one warp a stage) ~20-50 M.
step bench-1 90 "$rk" bench k2k --backend cuda --messages 1000000
# A second run, for the spread (JSON: every figure unrounded, under $OUT).
step bench-2 90 sh -c "'$rk' bench k2k --backend cuda --messages 1000000 --json > '${out:-/tmp}/k2k-bench-2.json'; \
    rc=\$?; cat '${out:-/tmp}/k2k-bench-2.json'; exit \$rc"
step fan-cuda 30 "$k2k/test_k2k_fan" cuda
step terminate-cuda 30 "$k2k/test_k2k_terminate" cuda
step cycle-cuda 40 "$k2k/test_k2k_cycle" cuda
step loop-cuda 30 "$k2k/test_k2k_loop" cuda
step errors-cuda 30 "$k2k/test_k2k_errors" cuda
step relay-to-cuda 30 "$k2k/test_k2k_relay" to cuda
step stream-cuda 40 "$k2k/test_k2k_stream" cuda 2000000

# compute-sanitizer: first one kernel looping through its own channel (emit,
# poll, channel replies, the close handshake: the whole device side with no
# second kernel beside it), then the 4-kernel chain. If the loop passes and
# the chain stalls (a test timeout naming the sink), most likely the tool did
# not run the chain's persistent kernels side by side (the several-kernel part
# of test_cuda_ring_lifecycle made no progress under it either, docs/cuda.md).
# Instrumented kernels are slow: the ring watchdog and the test's waits are
# widened (60 s a wait, inside the step's limit). API errors are not reported:
# the launch path probes cuFuncGetParamInfo one parameter past the last on
# purpose (docs/cuda.md), which memcheck would count as an error (exit 9)
# though no device access is wrong; a device error still gives exit 9.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null || true)
if [ -n "$sanitizer" ]; then
    export RK_CUDA_WATCHDOG_MS=600000 RK_K2K_TIME_SCALE=3
    "$sanitizer" --version 2>&1 | tail -1
    api=()
    "$sanitizer" --help 2>&1 | grep -q -- --report-api-errors && api=(--report-api-errors no)
    for run in memcheck:loop memcheck:chain racecheck:loop racecheck:chain; do
        tool=${run%%:*} t=${run#*:}
        limit=$((budget - SECONDS))
        [ $limit -gt 90 ] && limit=90
        if [ $limit -lt 20 ]; then
            echo "=== $tool-$t: skipped (the script's $budget s budget is spent)"
            continue
        fi
        step "$tool-$t" $limit "$sanitizer" --tool "$tool" --error-exitcode 9 "${api[@]}" \
            "$k2k/test_k2k_$t" cuda "$sanitizer_messages"
    done
    unset RK_CUDA_WATCHDOG_MS RK_K2K_TIME_SCALE
else
    echo "=== sanitizers: skipped (no compute-sanitizer on PATH)"
fi
echo "device-k2k: $([ $failed -eq 0 ] && echo 'all steps ok or skipped' || echo 'SOME STEPS FAILED')"
exit $failed
