#!/bin/bash
# Every check that needs the GPU machine, in one call (device time is scarce):
# the GPU-labelled CTest tests (CUDA, transpiled kernels on CUDA), the CUDA
# benchmarks, the wave showcase and seed table, persistent simulations
# (scripts/sim-device-check.sh), and WebGPU on NVIDIA's Vulkan driver.
# Uses a Release build made on the development machine:
#
#   cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-dev
#   scripts/webgpu-device-check.sh prepare      # Dawn in .deps/webgpu, Vulkan loader in .gl
#   (device) scripts/device-check-all.sh build-dev      carry: build-dev .deps/webgpu .gl
#
# Everything lands in $OUT/device-logs.tgz plus $OUT/summary.log.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${1:-build-dev}
out=${OUT:-$root/device-check-out}
work=$(mktemp -d)
mkdir -p "$out"
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=/tmp/rk-device-cache

# Binaries and CTest files name the development machine's source path.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"
fi
echo "$src" > "$build/source-dir.txt"
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

summary() { echo "$*" | tee -a "$out/summary.log"; }
stage() { # stage NAME LIMIT COMMAND...
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout --kill-after=10 "$limit" "$@" > "$work/$name.log" 2>&1
    summary "$(printf '%-24s exit %3d  %4d s' "$name" $? $((SECONDS - t0)))"
    tar czf "$out/device-logs.tgz" -C "$work" . # after every stage: a cut-off run keeps what it had
}

summary "$(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
# Two calls, each under the 10-minute limit of one device command:
# DEVICE_PHASE=1 the correctness stages, 2 the figures (default: both).
# Most important first: a command past its limit loses the rest. Each test
# is capped at 60 s (--timeout) so a hang costs one test, not the stage.
phase=${DEVICE_PHASE:-all}
if [ "$phase" = 1 ] || [ "$phase" = all ]; then
    stage ctest-gpu 200 ctest --test-dir "$build" --timeout 60 -L 'cuda|transpile' \
        -E 'transpile_diff|transpile_portability|conformance|k2k|sim_together' --output-on-failure
    # Two simulations and a ring kernel on one GPU: hung in sessions 6 and 7, so alone and short.
    stage sim-together 45 "$build/tests/sim/test_sim_together" cuda
    # The conformance suite: CUDA and WebGPU (NVIDIA's Vulkan driver) beside the CPU (docs/conformance.md).
    mkdir -p "$work/webgpu"; rm -rf "$root/build-webgpu-check"; ln -s "$build" "$root/build-webgpu-check"
    OUT=$work/conformance stage conformance 300 "$root/scripts/device-conformance.sh" "$build"
    # K2K channels (issue 14): the CUDA tests, the 4-stage chain vs the host
    # relay and compute-sanitizer on the chain (scripts/device-k2k.sh).
    stage k2k-cuda 200 "$root/scripts/device-k2k.sh" "$build"
    # 2 MPI ranks with a CUDA kernel each on this GPU (needs Open MPI there or a carried .mpi).
    stage k2k-mpi 60 "$root/scripts/device-mpi.sh" "${1:-build-dev}"
fi
if [ "$phase" = 2 ] || [ "$phase" = all ]; then
    OUT=$work/sim SIM_SKIP_TESTS=1 SIM_SKIP_SEED=1 stage sim 150 "$root/scripts/sim-device-check.sh" "$build" # tests: in phase 1
    OUT=$work/showcase STEP_TIMEOUT=80 stage showcase 150 "$root/scripts/showcase-device-check.sh" "$build"
    mkdir -p "$work/webgpu"; rm -rf "$root/build-webgpu-check"; ln -s "$build" "$root/build-webgpu-check"
    OUT=$work/webgpu stage webgpu 100 bash "$root/scripts/webgpu-device-check.sh" run
    # The portability suite (issue 18) on CUDA and on WebGPU over NVIDIA's Vulkan (loader unpacked by the stage above).
    stage portability 60 "$root/scripts/device-portability.sh" "${1:-build-dev}"
    OUT=$work/cuda stage cuda-bench 120 "$root/scripts/cuda-device-check.sh" "$build" info cli bench
fi
if [ "$phase" = 3 ]; then
    # What the first two phases could not reach (session 7): the CUDA tests
    # after the simulations' known hang, then K2K, conformance, simulations'
    # figures with the seed table, portability.
    stage ctest-rest 100 ctest --test-dir "$build" --timeout 60 \
        -R 'sim_(ordering|inflight|heat3d_relay)_cuda|example_.*_cuda|test_kernel_handler_cuda' --output-on-failure
    mkdir -p "$work/webgpu"; rm -rf "$root/build-webgpu-check"; ln -s "$build" "$root/build-webgpu-check"
    stage k2k-cuda 170 "$root/scripts/device-k2k.sh" "$build"
    OUT=$work/conformance stage conformance 300 "$root/scripts/device-conformance.sh" "$build"
    OUT=$work/sim SIM_SKIP_TESTS=1 stage sim 140 "$root/scripts/sim-device-check.sh" "$build"
    stage portability 50 "$root/scripts/device-portability.sh" "${1:-build-dev}"
fi
if [ "$phase" = all ]; then
    # Differential tests with the cuda-gpu executor (docs/transpiler.md, "Differential testing").
    stage diff-corpus-gpu 120 "$build/tests/transpile/diff/transpile_diff_corpus"
    stage diff-random-gpu 120 "$build/tests/transpile/diff/transpile_diff_random" --seconds 90 --save "$work/diff-failures"
    # Many clients on one kernel (issue 25): the host's many cores give the uncontended figures.
    stage clients-bench-cpu 120 "$build/tools/rk/rk" bench kernel
    stage clients-bench-cuda 90 "$build/tools/rk/rk" bench kernel --backend cuda --quick
    stage k2k-bench-cpu 60 "$build/tools/rk/rk" bench k2k --backend cpu
fi
grep -h -E "tests passed|Failed|FAILED|p50|msg/s|per hop|pass, .* fail|portability" "$work"/*.log "$work"/*/*.log 2>/dev/null | head -80 >> "$out/summary.log"
