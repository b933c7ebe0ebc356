#!/bin/bash
# Persistent simulations (ringkernel/sim.h) on a GPU machine, in about two
# minutes: the generated kernels through NVRTC (sm_90), the simulation tests
# on CUDA (patterns bit-identical, CPU = CUDA within float tolerance, a
# 10,000-command mix against the host model, two simulations and a ring
# kernel at once, bad input, hang and fault as errors), the heat grid's
# persistent-vs-traditional figures, the wave seed table on CUDA, and
# compute-sanitizer memcheck and racecheck of a short persistent run.
# Everything lands in $OUT/sim.log (and sanitizer logs); a summary line per
# step goes to stdout. Most important first: a run cut short keeps those.
#
#   scripts/sim-device-check.sh [BUILD_DIR]
#
# BUILD_DIR: a Release build made on the development machine and carried
# (device-check-all.sh's build-dev); without one, or with one that lacks
# the binaries, a Release build is made here in build-simcheck (about a
# minute on 16 cores; NVRTC compiles the kernels for the GPU at run time).
# SIM_SKIP_TESTS=1 leaves out the tests (device-check-all.sh runs them with
# CTest); SIM_SKIP_SEED=1 leaves out the seed table (its showcase stage
# runs it).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-}
[ -n "$build" ] && [ "${build#/}" = "$build" ] && build=$PWD/$build
out=${OUT:-$PWD/sim-check-out}
mkdir -p "$out"
export RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-sim-cache} CUDA_MODULE_LOADING=EAGER
failed=0
started=$SECONDS

step() { # step LIMIT NAME COMMAND...
    local limit=$1 name=$2
    shift 2
    local start=$(date +%s%N)
    echo "=== $name: $*" >> "$out/sim.log"
    timeout --kill-after=10 "$limit" "$@" >> "$out/sim.log" 2>&1
    local rc=$? verdict=ok
    [ $rc -eq 77 ] && verdict=skipped
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && verdict="TIMED OUT after $limit s"
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ "$verdict" = ok ] && verdict="FAILED (exit $rc)"
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && failed=1
    echo "=== $name: $verdict in $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/sim.log"
    printf '%-48s %s\n' "$name" "$verdict"
}

echo "sim device check: $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)" \
    | tee "$out/sim.log"

targets="test_sim_nvrtc test_sim_heat3d test_sim_errors test_sim_together heat3d_example heat3d_bench rk"
need_build=0
for bin in tests/sim/test_sim_heat3d tests/sim/test_sim_together examples/heat3d/heat3d_bench tools/rk/rk; do
    [ -n "$build" ] && [ -x "$build/$bin" ] || need_build=1
done
if [ $need_build -eq 1 ]; then
    build=$src/build-simcheck
    gen=Ninja
    command -v ninja > /dev/null || gen="Unix Makefiles"
    step 150 "build (Release) in $build" sh -c "cmake -S '$src' -B '$build' -G '$gen' -DCMAKE_BUILD_TYPE=Release \
        > '$out/build.log' 2>&1 && cmake --build '$build' -j \$(nproc) --target $targets >> '$out/build.log' 2>&1"
    tail -n 5 "$out/build.log" >> "$out/sim.log" 2>/dev/null
fi
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
t=$build/tests/sim
h=$build/examples/heat3d

if [ -z "${SIM_SKIP_TESTS:-}" ]; then
    step 60 "test_sim_nvrtc (sm_90 cubins)" "$t/test_sim_nvrtc"
    # Two simulations and a ring kernel: first, it hung in session 6 (each wait gives up after 20 s).
    step 90 "test_sim_together cuda" "$t/test_sim_together" cuda
    step 120 "test_sim_heat3d cuda" "$t/test_sim_heat3d" cuda
    step 90 "test_sim_errors cuda (hang, fault last)" "$t/test_sim_errors" cuda
fi
step 40 "heat3d_example persistent cuda" "$h/heat3d_example" persistent cuda
step 40 "heat3d_example traditional cuda" "$h/heat3d_example" traditional cuda
step 90 "heat3d_bench cuda 64^3 (persistent, traditional, graph)" "$h/heat3d_bench" cuda 64 200
if [ -z "${SIM_SKIP_SEED:-}" ]; then
    step 90 "rk bench seed-table --backend cuda" "$build/tools/rk/rk" bench seed-table --backend cuda
fi
if command -v compute-sanitizer > /dev/null; then
    for tool in memcheck racecheck; do
        step 60 "compute-sanitizer $tool heat3d persistent" compute-sanitizer --tool "$tool" --error-exitcode 9 \
            --log-file "$out/sanitizer-$tool.log" "$h/heat3d_example" persistent cuda
        tail -n 3 "$out/sanitizer-$tool.log" >> "$out/sim.log" 2>/dev/null
    done
else
    echo "compute-sanitizer not found: sanitizer steps skipped" | tee -a "$out/sim.log"
fi
echo "--- figures and failures (whole log: $out/sim.log)"
grep -E "heat3d|faster|p50|inject|single step|mixed|sim together|FAILED|TIMED OUT|ERROR SUMMARY|RACECHECK SUMMARY" \
    "$out/sim.log" | grep -v "^=== .*: \(/\|sh \|compute\)" | head -60
echo "sim device check: $((SECONDS - started)) s, $([ $failed -eq 0 ] && echo 'all passed' || echo 'FAILURES above')"
exit $failed
