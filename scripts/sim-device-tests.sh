#!/bin/bash
# The simulation tests of branch simweb on a GPU (CUDA): ordering and
# sameness with integer arithmetic (exact, both patterns, several grids)
# and destroy with commands in flight (a fault behind accepted commands is
# reported), and docs/simulations.md's tutorial compiled and run on the GPU.
# Each test is its own process: a fault spoils its context.
# Output in $OUT/sim-tests.log; under a minute on an H100.
#
#   scripts/sim-device-tests.sh BUILD_DIR
set -u
build=${1:?usage: sim-device-tests.sh BUILD_DIR}
out=${OUT:-$PWD/sim-tests-out}
mkdir -p "$out"
export RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-sim-cache} CUDA_MODULE_LOADING=EAGER
failed=0 gpu=1
for t in test_sim_ordering test_sim_inflight; do
    start=$(date +%s%N)
    timeout --kill-after=5 25 "$build/tests/sim/$t" cuda >> "$out/sim-tests.log" 2>&1
    rc=$? verdict=ok
    [ $rc -eq 77 ] && { verdict=skipped; gpu=0; }
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && { verdict="FAILED (exit $rc)"; failed=1; }
    printf '%-34s %s in %d ms\n' "$t cuda" "$verdict" $(( ($(date +%s%N) - start) / 1000000 ))
done
if [ $gpu -eq 1 ]; then
    start=$(date +%s%N)
    src=$(cd "$(dirname "$0")/.." && pwd)
    timeout --kill-after=5 60 "$src/tests/sim/tutorial_test.sh" "$src" "$build" cuda >> "$out/sim-tests.log" 2>&1
    rc=$? verdict=ok
    [ $rc -ne 0 ] && { verdict="FAILED (exit $rc)"; failed=1; }
    printf '%-34s %s in %d ms\n' "tutorial_test.sh cuda" "$verdict" $(( ($(date +%s%N) - start) / 1000000 ))
fi
grep -E "^(persistent|traditional|sim |host model|PASS|FAIL)" "$out/sim-tests.log"
exit $failed
