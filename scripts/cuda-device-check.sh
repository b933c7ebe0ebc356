#!/bin/bash
# The CUDA backend's checks on a GPU machine: device facts, the CUDA tests,
# compute-sanitizer (memcheck, racecheck) on the ring-kernel tests, and the
# benchmarks. Uses a build made elsewhere (same x86-64 and CUDA) or here.
#
#   scripts/cuda-device-check.sh BUILD_DIR [info] [tests] [sanitize] [cli] [bench]
#
# One log per stage goes to $OUT (default ./cuda-check-out). Environment:
#   RK_CUDA_TEST_MESSAGES  messages in the long ring tests (default 100 M)
#   RK_SANITIZE_MESSAGES   the same under compute-sanitizer (default 20 000; racecheck
#                          is slow: 2 000 keeps a run within minutes)
#   BENCH_ARGS             extra arguments for bench_cuda (e.g. --quick)
#   STEP_TIMEOUT           seconds before one step is stopped (default 600)
set -u
build=$(cd "${1:?usage: $0 BUILD_DIR [stage...]}" && pwd)
shift
stages="${*:-info tests sanitize cli bench}"
out=${OUT:-$PWD/cuda-check-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-cuda-cache}
failed=0

# step LOG NAME TIMEOUT COMMAND...: runs one command, appends its output to LOG.
step() {
    local log=$1 name=$2 limit=$3
    shift 3
    local start=$(date +%s%N)
    echo "=== $name: $*" >> "$out/$log"
    timeout --kill-after=10 "$limit" "$@" >> "$out/$log" 2>&1
    local rc=$?
    local took=$(( ($(date +%s%N) - start) / 1000000 ))
    local verdict=ok
    [ $rc -eq 77 ] && verdict=skipped
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && { verdict="FAILED (exit $rc)"; failed=1; }
    echo "=== $name: $verdict in ${took} ms" >> "$out/$log"
    printf '%-44s %s (%d ms)\n' "$name" "$verdict" "$took"
}

for stage in $stages; do
    case $stage in
    info)
        {
            date -u
            uname -srm
            nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv
            nvcc --version 2>/dev/null | tail -2
            grep -m1 'model name' /proc/cpuinfo
            nproc
        } > "$out/info.log" 2>&1
        cat "$out/info.log"
        ;;
    tests)
        for t in "$build"/tests/cuda/test_cuda_*; do
            [ -x "$t" ] || continue
            step tests.log "$(basename "$t")" "${STEP_TIMEOUT:-600}" "$t"
        done
        ;;
    sanitize)
        # Instrumented kernels run far slower: widen the ring watchdog, and
        # leave out kernels side by side (they stalled under memcheck).
        n=${RK_SANITIZE_MESSAGES:-20000}
        for tool in memcheck racecheck; do
            step sanitize.log "$tool test_cuda_ring" "${STEP_TIMEOUT:-600}" compute-sanitizer --tool $tool --error-exitcode 9 \
                env RK_CUDA_TEST_MESSAGES=$n RK_CUDA_WATCHDOG_MS=600000 "$build/tests/cuda/test_cuda_ring"
            step sanitize.log "$tool test_cuda_ring_lifecycle" "${STEP_TIMEOUT:-600}" compute-sanitizer --tool $tool --error-exitcode 9 \
                env RK_CUDA_TEST_MESSAGES=$n RK_CUDA_WATCHDOG_MS=600000 RK_CUDA_TEST_SKIP_CONCURRENT=1 \
                "$build/tests/cuda/test_cuda_ring_lifecycle"
        done
        ;;
    cli)
        step cli.log "rk info" 120 "$build/tools/rk/rk" info
        step cli.log "RK_BACKEND=cuda rk demo" 300 env RK_BACKEND=cuda "$build/tools/rk/rk" demo
        cat "$out/cli.log"
        ;;
    bench)
        step bench.log "bench_cuda ${BENCH_ARGS:-}" "${STEP_TIMEOUT:-600}" "$build/bench/bench_cuda" ${BENCH_ARGS:-}
        cat "$out/bench.log"
        ;;
    *)
        echo "unknown stage $stage" >&2
        exit 2
        ;;
    esac
done
exit $failed
