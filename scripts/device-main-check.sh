#!/bin/bash
# The session's last check of main on the GPU machine, in one call of about
# five minutes: every CUDA-labelled test (MPI aside), `rk bench k2k` with
# one, eight and fifteen warps a stage (K2K tests again with the lanes), compute-sanitizer memcheck and racecheck
# of the 4-kernel K2K chain and of the persistent simulation kernel, then issue 17's ratios
# (scripts/device-ratios.sh, one run).
#   (here)   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-rel
#   (device) scripts/device-main-check.sh BUILD_DIR      carry: BUILD_DIR (no object files)
# Output: stdout (a summary) and $OUT/main-check.log.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?build dir}" && pwd)
out=${OUT:-/tmp/main-check}
mkdir -p "$out"
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=/tmp/rk-main-check-cache LD_LIBRARY_PATH=$build
# Binaries and CTest files name the development machine's source path.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"; fi
bdir=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$bdir" ] && [ "$bdir" != "$build" ] && [ ! -e "$bdir" ]; then ln -s "$build" "$bdir"; fi
{
    date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    # NVRTC-only tests (no GPU needed) run in CI; RK_MAIN_CHECK_EXCLUDE adds more.
    echo "=== ctest -L cuda -E mpi|nvrtc${RK_MAIN_CHECK_EXCLUDE:+|$RK_MAIN_CHECK_EXCLUDE}"
    (cd "$build" && timeout 260 ctest -L cuda -E "mpi|nvrtc${RK_MAIN_CHECK_EXCLUDE:+|$RK_MAIN_CHECK_EXCLUDE}" --timeout 120 2>&1 | grep -E "Test +#|tests passed|FAILED|Failed|Skipped" )
    echo "=== rk conformance --check channel (cuda)"
    timeout 60 "$build/tools/rk/rk" conformance --backend cuda --check channel --timeout 20 2>&1 | tail -3
    for w in 1 8 15; do
        echo "=== rk bench k2k, $w warp(s) a stage"
        RK_CUDA_ORDERED_WARPS=$w timeout 60 "$build/tools/rk/rk" bench k2k --backend cuda --messages 1000000 2>/dev/null |
            grep -E "^k2k"
    done
    # Above 8 warps a stage the lanes run (channel_lanes.cu): the chain, a
    # 10 M stream and the running-sink terminate with them.
    for t in "test_k2k_chain cuda" "test_k2k_stream cuda 10000000" "test_k2k_terminate cuda"; do
        echo "=== $t, 15 warps a stage"
        RK_CUDA_ORDERED_WARPS=15 timeout 60 "$build/tests/k2k/"$t 2>&1 | tail -1
        echo "exit ${PIPESTATUS[0]}"
    done
    if command -v compute-sanitizer > /dev/null; then
        for tool in memcheck racecheck; do
            echo "=== compute-sanitizer $tool, the 4-kernel K2K chain (one warp a stage, 32 messages)"
            timeout -k 5 120 compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
                --log-file "$out/sanitizer-chain-$tool.log" "$build/tests/k2k/test_k2k_chain" cuda 32 > /dev/null 2>&1
            echo "exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error:" "$out/sanitizer-chain-$tool.log" | head -6
        done
        for tool in memcheck racecheck; do
            echo "=== compute-sanitizer $tool, heat3d persistent (the simulation kernel; lines named)"
            RK_CUDA_LINEINFO=1 timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
                --log-file "$out/sanitizer-$tool.log" "$build/examples/heat3d/heat3d_example" persistent cuda > /dev/null 2>&1
            echo "exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error:|in sim_device" "$out/sanitizer-$tool.log" | head -6
        done
    fi
    echo "=== ratios"
    OUT=$out timeout 150 "$root/scripts/device-ratios.sh" "$build" 1
} 2>&1 | tee "$out/main-check.log"
