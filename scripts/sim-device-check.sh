#!/bin/bash
# Persistent simulations (ringkernel/sim.h) on a GPU machine: the generated
# kernels through NVRTC, the heat3d tests on CUDA (patterns bit-identical,
# CPU = CUDA within float tolerance, a 10,000-command mix against the host
# model, two simulations and a ring kernel at once, bad input, hang and
# fault as errors), the heat grid's persistent-vs-traditional figures, and
# compute-sanitizer memcheck and racecheck of the persistent kernel.
# Everything lands in $OUT/sim.log (and sanitizer logs). SIM_SKIP_TESTS=1
# leaves out the tests (device-check-all.sh runs them with CTest).
#
#   scripts/sim-device-check.sh BUILD_DIR      (a Release build, see device-check-all.sh)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: sim-device-check.sh BUILD_DIR}
out=${OUT:-$PWD/sim-check-out}
mkdir -p "$out"
export RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-sim-cache} CUDA_MODULE_LOADING=EAGER
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
failed=0

step() { # step LIMIT NAME COMMAND...
    local limit=$1 name=$2
    shift 2
    local start=$(date +%s%N)
    echo "=== $name: $*" >> "$out/sim.log"
    timeout --kill-after=10 "$limit" "$@" >> "$out/sim.log" 2>&1
    local rc=$? verdict=ok
    [ $rc -eq 77 ] && verdict=skipped
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && { verdict="FAILED (exit $rc)"; failed=1; }
    echo "=== $name: $verdict in $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/sim.log"
    printf '%-44s %s\n' "$name" "$verdict"
}

t=$build/tests/sim
if [ -z "${SIM_SKIP_TESTS:-}" ]; then # device-check-all.sh runs them in its ctest stage
    step 60 "test_sim_nvrtc" "$t/test_sim_nvrtc"
    step 120 "test_sim_heat3d cuda" "$t/test_sim_heat3d" cuda
    step 60 "test_sim_together cuda" "$t/test_sim_together" cuda
    step 90 "test_sim_errors cuda (hang, fault last)" "$t/test_sim_errors" cuda
fi
step 60 "heat3d_example persistent cuda" "$build/examples/heat3d/heat3d_example" persistent cuda
step 60 "heat3d_example traditional cuda" "$build/examples/heat3d/heat3d_example" traditional cuda
step 60 "heat3d_bench cuda 64^3" "$build/examples/heat3d/heat3d_bench" cuda 64 200
step 30 "heat3d_bench cpu 32^3 (same host)" "$build/examples/heat3d/heat3d_bench" cpu 32 50
if command -v compute-sanitizer > /dev/null; then
    for tool in memcheck racecheck; do
        step 40 "compute-sanitizer $tool heat3d persistent" compute-sanitizer --tool "$tool" --error-exitcode 9 \
            --log-file "$out/sanitizer-$tool.log" "$build/examples/heat3d/heat3d_example" persistent cuda
        tail -n 3 "$out/sanitizer-$tool.log" >> "$out/sim.log" 2>/dev/null
    done
else
    echo "compute-sanitizer not found: sanitizer steps skipped" | tee -a "$out/sim.log"
fi
grep -E "heat3d|faster|FAILED|ERROR SUMMARY|RACECHECK SUMMARY" "$out/sim.log"
exit $failed
