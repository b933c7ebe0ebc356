#!/bin/bash
# K2K channels on the H100 (issue 14), in one call, everything to stdout:
# a Release build of the targets it needs (NVRTC compiles the ring kernels
# for the device's sm_90 at run time), the K2K tests on the cuda backend,
# `rk bench k2k --backend cuda` (4-stage chain over channels and, in the same
# run, the host relay, with the ratio), then compute-sanitizer memcheck and
# racecheck on the chain test. About 2-3 minutes; each step has a limit.
#
#   (device) scripts/device-k2k.sh [BUILD_DIR]     # default build-k2k, built there if missing
#
# scripts/device-check-all.sh calls it with its carried Release build.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-k2k}
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
failed=0

step() { # step NAME LIMIT COMMAND...
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    echo "=== $name: $*"
    timeout --kill-after=10 "$limit" "$@" 2>&1
    local rc=$?
    local verdict=ok
    [ $rc -eq 77 ] && verdict=skipped
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && { verdict="FAILED (exit $rc)"; failed=1; }
    echo "=== $name: $verdict in $((SECONDS - t0)) s"
}

date -u
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1
# A build carried from the development machine (scripts/device-check-all.sh)
# is used as it is; otherwise the targets are built here.
if [ ! -x "$build/tests/k2k/test_k2k_chain" ] || [ ! -x "$build/tools/rk/rk" ]; then
    [ -f "$build/build.ninja" ] || step configure 60 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
    step build 120 cmake --build "$build" -j "$(nproc)" --target rk test_k2k_chain test_k2k_stream \
        test_k2k_terminate test_k2k_errors
fi
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
k2k=$build/tests/k2k

# Most telling first: a cut-off run keeps what it had. test_k2k_nvrtc (the
# compile check) runs in CI. The stream test's count: 2 M here (10 M on the
# CPU in CI), so the whole script stays within its budget.
step chain-cuda 30 "$k2k/test_k2k_chain" cuda
# Per-hop latency p50/p99 and throughput, channels and host relay in one run.
step bench-k2k-cuda 50 "$build/tools/rk/rk" bench k2k --backend cuda --messages 2000000
# Fan-out, fan-in, backpressure and cycles: the conformance suite's channel.* checks.
step conformance-channels-cuda 60 "$build/tools/rk/rk" conformance --backend cuda --check channel
step terminate-cuda 20 "$k2k/test_k2k_terminate" cuda
step errors-cuda 20 "$k2k/test_k2k_errors" cuda
step stream-cuda 30 "$k2k/test_k2k_stream" cuda 2000000
# Last, being the slowest: compute-sanitizer on the chain test (instrumented
# kernels are slow, so the ring watchdog is widened).
export RK_CUDA_WATCHDOG_MS=120000
for tool in memcheck racecheck; do
    step "$tool-chain" 90 compute-sanitizer --tool "$tool" --error-exitcode 9 "$k2k/test_k2k_chain" cuda
done
unset RK_CUDA_WATCHDOG_MS
echo "device-k2k: $([ $failed -eq 0 ] && echo 'all steps ok or skipped' || echo 'SOME STEPS FAILED')"
exit $failed
