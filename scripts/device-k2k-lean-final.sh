#!/bin/bash
# Issue 14, one warp a stage: the last check of a candidate build (DEV)
# against main (BASE) and the branch build measured before (NEW), in about
# 90 s on the GPU machine: the candidate's chain test (its gate), `rk bench
# k2k` alternated, then the candidate's stream, terminate, errors and loop
# tests and the conformance suite's channel checks.
#   (device) scripts/device-k2k-lean-final.sh BASE_DIR NEW_DIR DEV_DIR
# Success: every test passes; "dev" rows' per hop p50 beside "base" and
# "lean" from the same card.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
base=$1 new=$2 dev=$3
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
run() { # run LABEL LIMIT COMMAND...
    local label=$1 limit=$2
    shift 2
    echo "=== $label: $*"
    timeout -k 5 "$limit" "$@" 2>&1 | tail -${RUN_TAIL:-3}
    rc=${PIPESTATUS[0]}
    echo "=== $label: exit $rc"
}
run "gate: chain ($dev)" 40 "$dev/tests/k2k/test_k2k_chain" cuda
[ "$rc" -eq 0 ] || exit 1
K2K_BENCH_LIMIT_S=25 scripts/device-k2k-ab.sh base="$base" dev="$dev" lean="$new",RK_CUDA_K2K_SOLO=99 \
    base="$base" dev="$dev"
run "stream 2 M ($dev)" 30 "$dev/tests/k2k/test_k2k_stream" cuda 2000000
run "terminate ($dev)" 30 "$dev/tests/k2k/test_k2k_terminate" cuda
run "errors ($dev)" 30 "$dev/tests/k2k/test_k2k_errors" cuda
run "loop ($dev)" 30 "$dev/tests/k2k/test_k2k_loop" cuda
RUN_TAIL=4 run "conformance channel checks ($dev)" 45 env LD_LIBRARY_PATH="$dev" "$dev/tools/rk/rk" conformance \
    --backend cuda --check channel --timeout 20
