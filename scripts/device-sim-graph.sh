#!/bin/bash
# The simulations' graph pattern (RK_SIM_GRAPH, src/sim/sim_graph.c) on the
# GPU machine, in one call of about three minutes, everything to stdout and
# $OUT/sim-graph.log: the sim tests on CUDA (every pattern, graph included,
# bit for bit; the 10,000-command mixes against the host model; graphs of
# 1 to 64 steps; bad input, hang and fault), heat3d_bench with all three
# patterns side by side, thermostat in every pattern, and compute-sanitizer
# memcheck on short persistent and graph runs (0 errors expected: the
# launches' parameter count no longer comes from a failing probe).
#
#   cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-dev
#   (device) scripts/device-sim-graph.sh build-dev          carry: build-dev
#
# Without a usable build dir, a Release build is made in build-simgraph.
# Exit 0 when every step passed or was skipped.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-simgraph}
[ "${build#/}" = "$build" ] && build=$root/$build
out=${OUT:-$root/sim-graph-out}
mkdir -p "$out"
log=$out/sim-graph.log
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-sim-graph-cache}
failed=0

step() { # step NAME LIMIT COMMAND...
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    echo "=== $name: $*" | tee -a "$log"
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$log"
    local rc=${PIPESTATUS[0]} verdict=ok
    [ $rc -eq 77 ] && verdict=skipped
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && verdict="TIMED OUT after $limit s"
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ "$verdict" = ok ] && verdict="FAILED (exit $rc)"
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && failed=1
    echo "=== $name: $verdict in $((SECONDS - t0)) s" | tee -a "$log"
}

echo "device-sim-graph: $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)" \
    | tee "$log"

# A build carried from the development machine names its source path: make it resolve.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"
fi
targets="test_sim_nvrtc test_sim_heat3d test_sim_ordering test_sim_errors test_sim_inflight test_sim_together
    test_cuda_params test_cuda_device heat3d_example heat3d_bench thermostat"
need_build=0
for bin in tests/sim/test_sim_heat3d tests/sim/test_sim_ordering tests/cuda/test_cuda_params \
    examples/heat3d/heat3d_bench examples/thermostat/thermostat; do
    [ -x "$build/$bin" ] || need_build=1
done
if [ $need_build -eq 1 ]; then
    build=$root/build-simgraph
    step configure 60 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
    step build 240 cmake --build "$build" -j "$(nproc)" --target $targets
fi
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
t=$build/tests/sim
h=$build/examples/heat3d

# Most telling first: a run cut short keeps those.
step "test_sim_heat3d cuda (patterns bit-identical, graph included)" 150 "$t/test_sim_heat3d" cuda
step "test_sim_ordering cuda (integer mixes, every pattern)" 150 "$t/test_sim_ordering" cuda
step "heat3d_bench cuda 64^3 (persistent, traditional, graph)" 90 "$h/heat3d_bench" cuda 64 200 \
    persistent,traditional,graph
step "heat3d_example graph cuda" 40 "$h/heat3d_example" graph cuda
step "thermostat cuda (every pattern agrees)" 60 "$build/examples/thermostat/thermostat" cuda
step "test_cuda_params (cubin parameter records)" 30 "$build/tests/cuda/test_cuda_params"
step "test_cuda_device cuda (argument checks)" 60 "$build/tests/cuda/test_cuda_device"
step "test_sim_inflight cuda" 120 "$t/test_sim_inflight" cuda
step "test_sim_together cuda" 90 "$t/test_sim_together" cuda
step "test_sim_errors cuda (hang, fault last)" 120 "$t/test_sim_errors" cuda
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$sanitizer" ]; then
    for pattern in persistent graph; do
        step "compute-sanitizer memcheck heat3d $pattern" 90 "$sanitizer" --tool memcheck --error-exitcode 9 \
            --log-file "$out/memcheck-$pattern.log" "$h/heat3d_example" "$pattern" cuda
        tail -n 3 "$out/memcheck-$pattern.log" | tee -a "$log"
    done
else
    echo "compute-sanitizer not found: memcheck skipped" | tee -a "$log"
fi
echo "--- figures and verdicts"
grep -E "^(persistent|traditional|graph)|faster|ERROR SUMMARY|agree|=== .*: (ok|skipped|FAILED|TIMED)" "$log" \
    | grep -v "^=== .*: /" | head -60
echo "device-sim-graph: $([ $failed -eq 0 ] && echo 'all steps ok or skipped' || echo 'SOME STEPS FAILED')"
exit $failed
